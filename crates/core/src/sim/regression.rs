//! Results pinned bit for bit: a set of runs covering every feature of the engine (generated AFDX
//! networks on two planes, random networks with every scheduler kind, finite buffers,
//! retransmission, deadlines, policing, both deduplication modes, Poisson and Pareto workloads,
//! size traces, token-bucket and periodic flows, cut-through switches, traces), each reduced to a
//! hash of its full JSON report (wall time zeroed) and of its trace. A change to the engine that
//! is meant to be faster must leave every hash as it is.
//!
//! `SIM_REGRESSION_DUMP=DIR cargo test -p rtnetlab-core sim::regression` writes each run's JSON
//! (and trace) to DIR (to diff against a dump from another commit); the failure message lists the
//! new hashes.

use super::*;
use crate::generate::{afdx, random_small, AfdxParams, RandomSchedulers};
use crate::model::{validate_spec, NetworkSpec, Switching, Traffic};
use crate::units::{DataRate, DataSize, Duration};

/// FNV-1a, 64 bits: stable across platforms and Rust versions, unlike `DefaultHasher`.
fn fnv1a(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The run's report and trace, hashed; with the JSON and the trace as text (for dumps), and the
/// report.
fn fingerprint(spec: NetworkSpec, cfg: &SimConfig) -> (u64, String, SimReport, String) {
    let net = validate_spec(spec).0.expect("regression networks validate");
    let mut sim = Simulator::new(&net, cfg.clone()).expect("simulates");
    // Two slices, as the front runs it (progress bar): must equal one run.
    sim.run_until(cfg.duration_ns / 3);
    sim.run_until(cfg.duration_ns);
    sim.finish();
    let mut report = sim.report();
    report.stats.wall_s = 0.0;
    let json = serde_json::to_string(&report).expect("serialises");
    let mut h = fnv1a(json.as_bytes(), 0xcbf2_9ce4_8422_2325);
    let mut trace = String::new();
    for t in &sim.trace {
        let line = format!("{t:?}");
        h = fnv1a(line.as_bytes(), h);
        trace += &line;
        trace.push('\n');
    }
    (h, json, report, trace)
}

/// Every VL becomes, in turn, a token-bucket flow, a periodic flow with an offset and jitter, or
/// stays a VL with a deadline tight enough to be missed.
fn mixed_traffic(mut spec: NetworkSpec) -> NetworkSpec {
    for (k, f) in spec.flows.iter_mut().enumerate() {
        let Traffic::VirtualLink { bag, lmin, lmax, .. } = f.traffic.clone() else { continue };
        match k % 3 {
            0 => {
                f.traffic = Traffic::TokenBucket {
                    burst: DataSize::from_bytes(2.0 * lmax.bytes()),
                    rate: DataRate::from_bps(lmax.bits() / bag.secs()),
                    min_packet: lmin,
                    max_packet: lmax,
                }
            }
            1 => {
                f.traffic = Traffic::Periodic {
                    period: bag,
                    size: lmax,
                    offset: Duration::from_us(37.0 * k as f64),
                    jitter: Duration::from_us(20.0),
                }
            }
            _ => f.deadline = Some(Duration::from_us(150.0)),
        }
    }
    spec
}

fn runs() -> Vec<(String, NetworkSpec, SimConfig)> {
    let base = |seed: u64, ms: i64| SimConfig { duration_ns: ms * 1_000_000, seed, ..Default::default() };
    let mut runs = Vec::new();
    let net300 = afdx(&AfdxParams { virtual_links: 300, switches: 4, seed: 3, ..Default::default() });
    runs.push(("afdx300-random".into(), net300.clone(), base(1, 100)));
    runs.push((
        "afdx300-synchronized-max-trace".into(),
        net300.clone(),
        SimConfig {
            release: Release::Synchronized,
            frame_sizes: FrameSizes::Max,
            trace_limit: 5000,
            ..base(2, 40)
        },
    ));
    let mut small_buffers = net300;
    small_buffers.defaults.buffer = Some(DataSize::from_bytes(2000.0));
    for s in &mut small_buffers.flows {
        s.deadline = Some(Duration::from_us(400.0));
    }
    runs.push((
        "afdx300-buffers-retransmit".into(),
        small_buffers,
        SimConfig { retransmit: true, ..base(3, 40) },
    ));

    let kinds = [
        RandomSchedulers::Any,
        RandomSchedulers::Mixed,
        RandomSchedulers::Fifo,
        RandomSchedulers::StaticPriority,
    ];
    let mut any = 0;
    for seed in 0..24u64 {
        let kind = kinds[seed as usize % kinds.len()];
        let spec = random_small(seed, kind);
        let two_planes = spec.redundancy.is_some();
        let name = |what: &str| format!("random{seed}-{kind:?}-{what}");
        runs.push((name("random-uniform"), spec.clone(), base(seed, 300)));
        runs.push((
            name("synchronized-max"),
            spec.clone(),
            SimConfig { release: Release::Synchronized, frame_sizes: FrameSizes::Max, ..base(seed, 200) },
        ));
        match seed % 6 {
            0 => {
                let mut s = spec.clone();
                s.defaults.buffer = Some(DataSize::from_bytes(1600.0));
                for f in &mut s.flows {
                    f.deadline = Some(Duration::from_us(300.0));
                }
                runs.push((name("buffers-retransmit"), s, SimConfig { retransmit: true, ..base(seed, 300) }));
            }
            1 => {
                let mut s = spec.clone();
                s.defaults.policing_jitter = Some(Duration::from_us(0.0));
                for f in &mut s.flows {
                    if let Traffic::VirtualLink { release_jitter, .. } = &mut f.traffic {
                        *release_jitter = Duration::from_us(500.0);
                    }
                }
                runs.push((name("policed"), s, base(seed, 300)));
            }
            2 => runs.push((
                name("poisson-min"),
                spec.clone(),
                SimConfig {
                    workload: Workload::Poisson { load: 0.8 },
                    frame_sizes: FrameSizes::Min,
                    ..base(seed, 300)
                },
            )),
            3 => runs.push((
                name("pareto-trace"),
                spec.clone(),
                SimConfig {
                    workload: Workload::ParetoBursts { load: 0.5, alpha: 1.5, mean_frames: 3.0 },
                    frame_sizes: FrameSizes::Trace,
                    size_trace: vec![64, 1518, 300, 900, 77, 1200, 500],
                    ..base(seed, 300)
                },
            )),
            4 => {
                let mut s = mixed_traffic(spec.clone());
                s.defaults.switching = Switching::CutThrough;
                for sw in &mut s.switches {
                    sw.switching = None;
                }
                runs.push((
                    name("cut-through-mixed-traffic"),
                    s,
                    SimConfig { retransmit: true, ..base(seed, 300) },
                ));
            }
            _ => runs.push((name("mixed-traffic"), mixed_traffic(spec.clone()), base(seed, 300))),
        }
        if two_planes {
            for (counters, mode) in [(16, DedupMode::FirstCopy), (24, DedupMode::HoldUntilTwin)] {
                runs.push((
                    name(&format!("dedup-{mode:?}-{counters}")),
                    spec.clone(),
                    SimConfig { dedup: Some(DedupSettings { counters, hashes: 0, mode }), ..base(seed, 300) },
                ));
            }
        }
        any += (kind == RandomSchedulers::Any) as usize;
    }
    assert!(any >= 6);
    runs
}

/// Hashes recorded from the engine as of the regression test's introduction, re-recorded once:
/// when FIFO ports began to schedule each frame as it arrives (no end-of-transmission events).
/// The reports were then compared run by run: the same except for the event counts, copies
/// counted as forwarded when scheduled, policed copies created and dropped at the queue's
/// entrance, the order of simultaneous arrivals under synchronised releases, and cut-through
/// switches, which the earlier engine served out of time order (a next hop queued before the
/// current time). Traced runs, whose FIFO ports still run on events, kept their hashes.
const EXPECTED: &[(&str, u64)] = &[
    ("afdx300-random", 0x00a6f61c7fd30b63),
    ("afdx300-synchronized-max-trace", 0xbaca085ec64d2ccc),
    ("afdx300-buffers-retransmit", 0x3cc0cf1fc4a799af),
    ("random0-Any-random-uniform", 0xaa7eb60f3a617d16),
    ("random0-Any-synchronized-max", 0x951d8ba74098bf98),
    ("random0-Any-buffers-retransmit", 0x743212459fa15bbd),
    ("random1-Mixed-random-uniform", 0xc6ef6c7d98158fdd),
    ("random1-Mixed-synchronized-max", 0x2748c3c9e58355b9),
    ("random1-Mixed-policed", 0xb2feaa07f19d27e2),
    ("random2-Fifo-random-uniform", 0xa301f68fda046a1c),
    ("random2-Fifo-synchronized-max", 0x04a590a8af691f78),
    ("random2-Fifo-poisson-min", 0xf6d131d7d7dc07c3),
    ("random2-Fifo-dedup-FirstCopy-16", 0xab8da0cfda11d576),
    ("random2-Fifo-dedup-HoldUntilTwin-24", 0x40ce62b78650e7c5),
    ("random3-StaticPriority-random-uniform", 0x0a1b6d0b63bc0b1e),
    ("random3-StaticPriority-synchronized-max", 0x7da14490de80d9b7),
    ("random3-StaticPriority-pareto-trace", 0xe3545e182abed267),
    ("random3-StaticPriority-dedup-FirstCopy-16", 0xfe7ea6fff90517f3),
    ("random3-StaticPriority-dedup-HoldUntilTwin-24", 0x046f468be248ba3b),
    ("random4-Any-random-uniform", 0xfe7e30e34a0f4840),
    ("random4-Any-synchronized-max", 0x7c1027ee7e32227d),
    ("random4-Any-cut-through-mixed-traffic", 0xdf9d11ed2ec4707b),
    ("random4-Any-dedup-FirstCopy-16", 0x06195415d0880f55),
    ("random4-Any-dedup-HoldUntilTwin-24", 0xf3d8a0a2ddcbfcc4),
    ("random5-Mixed-random-uniform", 0x4a99375b9ed6ef30),
    ("random5-Mixed-synchronized-max", 0xe93696773e65245e),
    ("random5-Mixed-mixed-traffic", 0xa03cd4ea4a72f815),
    ("random6-Fifo-random-uniform", 0xf0e6a83f58ae0563),
    ("random6-Fifo-synchronized-max", 0xee25bfdf61655df6),
    ("random6-Fifo-buffers-retransmit", 0x231abdb9c6f566f0),
    ("random7-StaticPriority-random-uniform", 0x7c3dc54c6585622d),
    ("random7-StaticPriority-synchronized-max", 0xafc57c1de9654b02),
    ("random7-StaticPriority-policed", 0x8f92e11a4990678c),
    ("random8-Any-random-uniform", 0xcc2163e4633bc33e),
    ("random8-Any-synchronized-max", 0xa11c88ee6663dc2e),
    ("random8-Any-poisson-min", 0xf52c1141332bb9e1),
    ("random9-Mixed-random-uniform", 0xac499600b912e649),
    ("random9-Mixed-synchronized-max", 0xc3a95a0c2e1ae21c),
    ("random9-Mixed-pareto-trace", 0x9cce5754ffe9d338),
    ("random10-Fifo-random-uniform", 0x5b118c3e285698f3),
    ("random10-Fifo-synchronized-max", 0x88f6974da0ee994e),
    ("random10-Fifo-cut-through-mixed-traffic", 0x2a4b1a57d176869f),
    ("random10-Fifo-dedup-FirstCopy-16", 0x62d35943bca1f955),
    ("random10-Fifo-dedup-HoldUntilTwin-24", 0xfb1dd37d541d8ea1),
    ("random11-StaticPriority-random-uniform", 0xcde063beefe3d223),
    ("random11-StaticPriority-synchronized-max", 0xe949ae20bb38fa01),
    ("random11-StaticPriority-mixed-traffic", 0x2e80a568e8d4a2aa),
    ("random12-Any-random-uniform", 0x128b8e77546d8a13),
    ("random12-Any-synchronized-max", 0x45a58a733897d480),
    ("random12-Any-buffers-retransmit", 0xacc565526bbfd102),
    ("random12-Any-dedup-FirstCopy-16", 0x7e41c5650331aecb),
    ("random12-Any-dedup-HoldUntilTwin-24", 0x2d1f812d7e853534),
    ("random13-Mixed-random-uniform", 0xd11d80d0ce022ae9),
    ("random13-Mixed-synchronized-max", 0xae45c33f2e0ab31b),
    ("random13-Mixed-policed", 0x4a364d0a37d56dea),
    ("random14-Fifo-random-uniform", 0x8c2492c4f3d0bacd),
    ("random14-Fifo-synchronized-max", 0xf44b139a7c620c22),
    ("random14-Fifo-poisson-min", 0x21aedcc194f97780),
    ("random14-Fifo-dedup-FirstCopy-16", 0x76afed0850c1fcb0),
    ("random14-Fifo-dedup-HoldUntilTwin-24", 0xb33d356e802560df),
    ("random15-StaticPriority-random-uniform", 0x92c618b61bbb8b66),
    ("random15-StaticPriority-synchronized-max", 0xe9e8c5305621ec82),
    ("random15-StaticPriority-pareto-trace", 0x5b8eb193c343de64),
    ("random15-StaticPriority-dedup-FirstCopy-16", 0xb9edb980284dd92a),
    ("random15-StaticPriority-dedup-HoldUntilTwin-24", 0xb300fa8c3d85c802),
    ("random16-Any-random-uniform", 0xc0f5146f11b36003),
    ("random16-Any-synchronized-max", 0xfb64293e04793e70),
    ("random16-Any-cut-through-mixed-traffic", 0x4630968825c9d33b),
    ("random17-Mixed-random-uniform", 0xe760323e2206fa5b),
    ("random17-Mixed-synchronized-max", 0x95c87d4bd0612ab6),
    ("random17-Mixed-mixed-traffic", 0xb4325113e50e366e),
    ("random18-Fifo-random-uniform", 0xbb36ce247aa0ceb0),
    ("random18-Fifo-synchronized-max", 0x74492286f97b9ca3),
    ("random18-Fifo-buffers-retransmit", 0x4aca01bf1c26ba2a),
    ("random19-StaticPriority-random-uniform", 0x637d184fcf6f6ac4),
    ("random19-StaticPriority-synchronized-max", 0x64cd95f274d9adcb),
    ("random19-StaticPriority-policed", 0x3b983160f3a63244),
    ("random20-Any-random-uniform", 0x82aac3108eaed9c4),
    ("random20-Any-synchronized-max", 0xa43f916bf418a464),
    ("random20-Any-poisson-min", 0x0eeb16f102c55df1),
    ("random21-Mixed-random-uniform", 0x8abef9c2c212e3d6),
    ("random21-Mixed-synchronized-max", 0xc900aa45ae6c391e),
    ("random21-Mixed-pareto-trace", 0x27ada84ff5ebfcff),
    ("random22-Fifo-random-uniform", 0xaed09d98d78062a1),
    ("random22-Fifo-synchronized-max", 0x4e17f4da05267a56),
    ("random22-Fifo-cut-through-mixed-traffic", 0x3003435ebd90f066),
    ("random23-StaticPriority-random-uniform", 0x70aae801d06d96a6),
    ("random23-StaticPriority-synchronized-max", 0xf8742adca3b7e566),
    ("random23-StaticPriority-mixed-traffic", 0x1eef2ce6df075906),
    ("random23-StaticPriority-dedup-FirstCopy-16", 0xf0bdaf7e11fa4322),
    ("random23-StaticPriority-dedup-HoldUntilTwin-24", 0x0b9f837218d1f4d3),
];

#[test]
fn sim_results_are_pinned() {
    let dump = std::env::var_os("SIM_REGRESSION_DUMP").map(std::path::PathBuf::from);
    if let Some(d) = &dump {
        std::fs::create_dir_all(d).unwrap();
    }
    let mut got = Vec::new();
    let (mut dropped, mut policed, mut retransmitted, mut false_positives, mut traced) = (0, 0, 0, 0, 0);
    for (name, spec, cfg) in runs() {
        let (h, json, r, trace) = fingerprint(spec, &cfg);
        if let Some(d) = &dump {
            std::fs::write(d.join(format!("{name}.json")), &json).unwrap();
            if !trace.is_empty() {
                std::fs::write(d.join(format!("{name}.trace")), &trace).unwrap();
            }
        }
        dropped += r.stats.packets_dropped;
        policed += r.stats.packets_policed;
        retransmitted += r.flows.iter().map(|f| f.retransmissions).sum::<u64>();
        false_positives += r.dedup.iter().map(|d| d.false_positives).sum::<u64>();
        traced += trace.lines().count();
        got.push((name, h));
    }
    // The runs exercise what they are meant to.
    let exercised = [dropped, policed, retransmitted, false_positives, traced as u64];
    assert!(
        exercised.iter().all(|&n| n > 0),
        "dropped, policed, retransmitted, false positives, traced: {exercised:?}"
    );
    let listing: String = got.iter().map(|(n, h)| format!("    (\"{n}\", 0x{h:016x}),\n")).collect();
    let expected: Vec<(String, u64)> = EXPECTED.iter().map(|&(n, h)| (n.to_string(), h)).collect();
    assert!(got == expected, "simulation results changed; now:\n{listing}");
}
