//! Results pinned bit for bit: a set of runs covering every feature of the engine (generated AFDX
//! networks on two planes, random networks with every scheduler kind, finite buffers,
//! retransmission, deadlines, policing, both deduplication modes, Poisson and Pareto workloads,
//! size traces, token-bucket and periodic flows, cut-through switches, traces), each reduced to a
//! hash of its full JSON report (wall time zeroed) and of its trace. A change to the engine that
//! is meant to be faster must leave every hash as it is.
//!
//! `SIM_REGRESSION_DUMP=DIR cargo test -p rtnetlab-core --test sim_regression` writes each run's JSON
//! (and trace) to DIR (to diff against a dump from another commit); the failure message lists the
//! new hashes.

use rtnetlab_core::generate::{afdx, random_small, AfdxParams, RandomSchedulers};
use rtnetlab_core::model::{validate_spec, NetworkSpec, Switching, Traffic};
use rtnetlab_core::sim::*;
use rtnetlab_core::units::{DataRate, DataSize, Duration};

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
                    min_size: None,
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

/// Hashes recorded from the engine as of the regression test's introduction, re-recorded first
/// when FIFO ports began to schedule each frame as it arrives (no end-of-transmission events).
/// The reports were then compared run by run: the same except for the event counts, copies
/// counted as forwarded when scheduled, policed copies created and dropped at the queue's
/// entrance, the order of simultaneous arrivals under synchronised releases, and cut-through
/// switches, which the earlier engine served out of time order (a next hop queued before the
/// current time). Traced runs, whose FIFO ports still run on events, kept their hashes.
/// Re-recorded a second time when destinations began integrity checking (a report key more per
/// flow row, `integrity_discards`): without that key every report was the same but one, where
/// two copies failing the check had been counted as duplicates of their twins.
/// And a third time when retransmission began to wait for a timeout: the runs with retransmission
/// (only those) changed: fewer frames sent again (none for a copy lost on one plane whose twin
/// was delivered in time), and an event more per frame awaited.
/// A fourth time when a flow's regulator kept one pending event instead of one per frame produced
/// while it waited (they piled up while a burst drained, making the work per frame grow with the
/// run): the 16 runs with retransmission, Poisson or Pareto workloads or cut-through mixed
/// traffic changed in `stats.events` alone, every other field the same (compared field by field).
/// A fifth time when runs with retransmission began to report each flow's `frames_due` (the
/// retransmission rate's denominator; absent without retransmission): the 9 runs with
/// retransmission (buffers-retransmit, cut-through-mixed-traffic) changed by that key alone; with
/// it removed from the JSON, all 91 hashes were the earlier ones.
const EXPECTED: &[(&str, u64)] = &[
    ("afdx300-random", 0x61a1c666daa2eef5),
    ("afdx300-synchronized-max-trace", 0xb148f25f40899252),
    ("afdx300-buffers-retransmit", 0xc58634efcb2a064f),
    ("random0-Any-random-uniform", 0xfa8eac47d363c3f5),
    ("random0-Any-synchronized-max", 0x5a28b5c3ff453e83),
    ("random0-Any-buffers-retransmit", 0x52ddbdfa6d52eedf),
    ("random1-Mixed-random-uniform", 0x7864fd2f73902075),
    ("random1-Mixed-synchronized-max", 0x1cf58ad31a98923b),
    ("random1-Mixed-policed", 0x4206ad1c6f5e2186),
    ("random2-Fifo-random-uniform", 0xa1b9e4ad0deae246),
    ("random2-Fifo-synchronized-max", 0x75da2ddc613ceca0),
    ("random2-Fifo-poisson-min", 0x9e0c17c04c17f998),
    ("random2-Fifo-dedup-FirstCopy-16", 0x73c91d6773bd6fac),
    ("random2-Fifo-dedup-HoldUntilTwin-24", 0xc2bd8044cfbd4e3f),
    ("random3-StaticPriority-random-uniform", 0xfa891fecc80dbc2c),
    ("random3-StaticPriority-synchronized-max", 0x02a62654c1336d45),
    ("random3-StaticPriority-pareto-trace", 0xcb38ab415fac8fd8),
    ("random3-StaticPriority-dedup-FirstCopy-16", 0xb2eecc89dab35bb1),
    ("random3-StaticPriority-dedup-HoldUntilTwin-24", 0xa689c164a47f1fc5),
    ("random4-Any-random-uniform", 0x661473f916c10a7e),
    ("random4-Any-synchronized-max", 0x29c0e74ae93b6147),
    ("random4-Any-cut-through-mixed-traffic", 0x1d32fa56655cba1b),
    ("random4-Any-dedup-FirstCopy-16", 0xba5503c057c7e83b),
    ("random4-Any-dedup-HoldUntilTwin-24", 0x56341c5df0347756),
    ("random5-Mixed-random-uniform", 0x438e4b726cbcdc46),
    ("random5-Mixed-synchronized-max", 0x847f962dc075ac9a),
    ("random5-Mixed-mixed-traffic", 0x42dd7b886576cc2d),
    ("random6-Fifo-random-uniform", 0x036e9f0628dda681),
    ("random6-Fifo-synchronized-max", 0xe5d5f21bc7392ddc),
    ("random6-Fifo-buffers-retransmit", 0xb1bdc2c76250078d),
    ("random7-StaticPriority-random-uniform", 0x4692d774812b564c),
    ("random7-StaticPriority-synchronized-max", 0x3d20df5fe4b68abb),
    ("random7-StaticPriority-policed", 0x5bc4f6945cca6577),
    ("random8-Any-random-uniform", 0xcb5d4ae90be666dc),
    ("random8-Any-synchronized-max", 0x42f841b6b321317e),
    ("random8-Any-poisson-min", 0x3b4b89492b77c041),
    ("random9-Mixed-random-uniform", 0x23f93671597b499e),
    ("random9-Mixed-synchronized-max", 0x33923ad867801a25),
    ("random9-Mixed-pareto-trace", 0x314388502d27df1f),
    ("random10-Fifo-random-uniform", 0xc8a6af4eb0de6325),
    ("random10-Fifo-synchronized-max", 0x52767044c173ab8c),
    ("random10-Fifo-cut-through-mixed-traffic", 0xce98088cec865f1d),
    ("random10-Fifo-dedup-FirstCopy-16", 0x6d09a9989c57e7f7),
    ("random10-Fifo-dedup-HoldUntilTwin-24", 0xb0b44155384bd377),
    ("random11-StaticPriority-random-uniform", 0x00dc314dafa55866),
    ("random11-StaticPriority-synchronized-max", 0xce99fa22bc6ecb6a),
    ("random11-StaticPriority-mixed-traffic", 0xc18afd2243d9407b),
    ("random12-Any-random-uniform", 0x45f83da18d50d771),
    ("random12-Any-synchronized-max", 0xda59aa2240c3afc2),
    ("random12-Any-buffers-retransmit", 0x2f151a58829c00d2),
    ("random12-Any-dedup-FirstCopy-16", 0x42eedc8b40df6a19),
    ("random12-Any-dedup-HoldUntilTwin-24", 0xe549743bae5230de),
    ("random13-Mixed-random-uniform", 0x800823d6741993e0),
    ("random13-Mixed-synchronized-max", 0x9918b86c8cf77fb6),
    ("random13-Mixed-policed", 0x83f00476cf666cff),
    ("random14-Fifo-random-uniform", 0x46f2448a609ccf71),
    ("random14-Fifo-synchronized-max", 0xb903e99e505bcb64),
    ("random14-Fifo-poisson-min", 0x2e21f74be357c636),
    ("random14-Fifo-dedup-FirstCopy-16", 0x409b7df5e6e50d3c),
    ("random14-Fifo-dedup-HoldUntilTwin-24", 0xe6438fe07e4698d3),
    ("random15-StaticPriority-random-uniform", 0xe4898001195d301e),
    ("random15-StaticPriority-synchronized-max", 0xf693e2ec3c991b08),
    ("random15-StaticPriority-pareto-trace", 0x536ccc71b9fa0953),
    ("random15-StaticPriority-dedup-FirstCopy-16", 0x8cd1da53cf8b12b2),
    ("random15-StaticPriority-dedup-HoldUntilTwin-24", 0xbdfb5381ba3799ba),
    ("random16-Any-random-uniform", 0xc675ada52707c523),
    ("random16-Any-synchronized-max", 0x63e486e1c0baef4a),
    ("random16-Any-cut-through-mixed-traffic", 0x68c774020abf2b00),
    ("random17-Mixed-random-uniform", 0x9a5e75360c7e6861),
    ("random17-Mixed-synchronized-max", 0x0be34bd0f37a8bba),
    ("random17-Mixed-mixed-traffic", 0x5ddc2b8afa647c50),
    ("random18-Fifo-random-uniform", 0x40919dd140236bd1),
    ("random18-Fifo-synchronized-max", 0x333260f150b9d368),
    ("random18-Fifo-buffers-retransmit", 0x912a015f3e1a765c),
    ("random19-StaticPriority-random-uniform", 0xe0aac0e082458db8),
    ("random19-StaticPriority-synchronized-max", 0x886e479ccac540e9),
    ("random19-StaticPriority-policed", 0x384163cdf3ff8912),
    ("random20-Any-random-uniform", 0xcae45cc44346f6fd),
    ("random20-Any-synchronized-max", 0x0563b4f3afedbe1b),
    ("random20-Any-poisson-min", 0xe3fc0f503d08f78c),
    ("random21-Mixed-random-uniform", 0xf0de454c18bbe16d),
    ("random21-Mixed-synchronized-max", 0x5a1c8ceae79e8435),
    ("random21-Mixed-pareto-trace", 0x548744dac978b889),
    ("random22-Fifo-random-uniform", 0x89055b2f986f438f),
    ("random22-Fifo-synchronized-max", 0x5498579275c951f8),
    ("random22-Fifo-cut-through-mixed-traffic", 0x040540e13374ecbd),
    ("random23-StaticPriority-random-uniform", 0xaa0aaefaf8796908),
    ("random23-StaticPriority-synchronized-max", 0x80469bad0fc9036e),
    ("random23-StaticPriority-mixed-traffic", 0xac9cb1976a107380),
    ("random23-StaticPriority-dedup-FirstCopy-16", 0xc0c45c4ccce32664),
    ("random23-StaticPriority-dedup-HoldUntilTwin-24", 0xb65b563f5b557599),
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
