//! Results pinned bit for bit: a set of runs covering every feature of the engine (generated AFDX
//! networks on two planes, random networks with every scheduler kind, finite buffers,
//! retransmission, deadlines, policing, both deduplication modes, Poisson and Pareto workloads,
//! size traces, token-bucket and periodic flows, cut-through switches, traces), each reduced to a
//! hash of its full JSON report (wall time zeroed) and of its trace. A change to the engine that
//! is meant to be faster must leave every hash as it is.
//!
//! `SIM_REGRESSION_DUMP=DIR cargo test -p rtnetlab-core sim::regression` writes each run's JSON
//! to DIR (to diff against a dump from another commit); the failure message lists the new hashes.

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

/// The run's report and trace, hashed; with the JSON (for dumps), the report and the trace's length.
fn fingerprint(spec: NetworkSpec, cfg: &SimConfig) -> (u64, String, SimReport, usize) {
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
    for t in &sim.trace {
        h = fnv1a(format!("{t:?}").as_bytes(), h);
    }
    (h, json, report, sim.trace.len())
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

/// Hashes recorded from the engine as of the regression test's introduction.
const EXPECTED: &[(&str, u64)] = &[
    ("afdx300-random", 0x46910821baa5572f),
    ("afdx300-synchronized-max-trace", 0xbaca085ec64d2ccc),
    ("afdx300-buffers-retransmit", 0x99e70fbcfe988525),
    ("random0-Any-random-uniform", 0x2badf4072e067f15),
    ("random0-Any-synchronized-max", 0xe119957a9c8896b5),
    ("random0-Any-buffers-retransmit", 0x5b8ef56b63774f4c),
    ("random1-Mixed-random-uniform", 0xd9979a1e05ffa9de),
    ("random1-Mixed-synchronized-max", 0x354cfd33ecebcf49),
    ("random1-Mixed-policed", 0xc954c0977107f1a8),
    ("random2-Fifo-random-uniform", 0x6ed0b77834ac7f2b),
    ("random2-Fifo-synchronized-max", 0x21d7339fa5f49b51),
    ("random2-Fifo-poisson-min", 0x64dc5fbc885964b0),
    ("random2-Fifo-dedup-FirstCopy-16", 0x1589054e535e37d9),
    ("random2-Fifo-dedup-HoldUntilTwin-24", 0x9ce218e08edf9aae),
    ("random3-StaticPriority-random-uniform", 0xdb7984d71615b95a),
    ("random3-StaticPriority-synchronized-max", 0x06f0472c369f953c),
    ("random3-StaticPriority-pareto-trace", 0x21a7747922ba3d49),
    ("random3-StaticPriority-dedup-FirstCopy-16", 0x4e4c03112194b83d),
    ("random3-StaticPriority-dedup-HoldUntilTwin-24", 0xf0cec7d74fe51f65),
    ("random4-Any-random-uniform", 0xdbbf21a5f8b1e6bb),
    ("random4-Any-synchronized-max", 0xcb317e5fa480dc03),
    ("random4-Any-cut-through-mixed-traffic", 0xa1f10ec61d741e91),
    ("random4-Any-dedup-FirstCopy-16", 0xfe80f74ace97ae7c),
    ("random4-Any-dedup-HoldUntilTwin-24", 0xe35847b3ed80cfa7),
    ("random5-Mixed-random-uniform", 0x7eb580906ec3af74),
    ("random5-Mixed-synchronized-max", 0x8f5d9a391f2c6212),
    ("random5-Mixed-mixed-traffic", 0xc51ce86af6978443),
    ("random6-Fifo-random-uniform", 0x11af6d4d34705e93),
    ("random6-Fifo-synchronized-max", 0x3a02a37d01cbcf3d),
    ("random6-Fifo-buffers-retransmit", 0xe2851e66c81c33d0),
    ("random7-StaticPriority-random-uniform", 0xf4f79f2e9db9d870),
    ("random7-StaticPriority-synchronized-max", 0x08653cab9105af1f),
    ("random7-StaticPriority-policed", 0x6b8436aaf14bd675),
    ("random8-Any-random-uniform", 0x5246a17665775dd0),
    ("random8-Any-synchronized-max", 0x7ec411757083525c),
    ("random8-Any-poisson-min", 0x4b1aad5ac610fda8),
    ("random9-Mixed-random-uniform", 0xc9d230804c5bda5f),
    ("random9-Mixed-synchronized-max", 0xd08b10e8b7627c09),
    ("random9-Mixed-pareto-trace", 0xfbadd4b360d22da9),
    ("random10-Fifo-random-uniform", 0x6164e971d924f678),
    ("random10-Fifo-synchronized-max", 0xff15307ddba4ea1f),
    ("random10-Fifo-cut-through-mixed-traffic", 0x7a1a25d7d43a2fc4),
    ("random10-Fifo-dedup-FirstCopy-16", 0xf80264618e60d91a),
    ("random10-Fifo-dedup-HoldUntilTwin-24", 0xd4dc98a2353b78fe),
    ("random11-StaticPriority-random-uniform", 0xdcd93ad80c3a324b),
    ("random11-StaticPriority-synchronized-max", 0xe715e4ef29ef2e11),
    ("random11-StaticPriority-mixed-traffic", 0x4f5634f0e79aea09),
    ("random12-Any-random-uniform", 0x9a9c69541e89efe8),
    ("random12-Any-synchronized-max", 0xe5aee35c1f6f5e68),
    ("random12-Any-buffers-retransmit", 0x2e55c6e8063a263b),
    ("random12-Any-dedup-FirstCopy-16", 0xcd04673d1345f5b0),
    ("random12-Any-dedup-HoldUntilTwin-24", 0xc252e28fed8affaf),
    ("random13-Mixed-random-uniform", 0x3399dbd9cc66e5d8),
    ("random13-Mixed-synchronized-max", 0xa7e9299298d5eef0),
    ("random13-Mixed-policed", 0x2d199b72937b454f),
    ("random14-Fifo-random-uniform", 0xb382115c67b340a9),
    ("random14-Fifo-synchronized-max", 0x01837d0679fd4bd9),
    ("random14-Fifo-poisson-min", 0x1911132e7d40de39),
    ("random14-Fifo-dedup-FirstCopy-16", 0xa06232bae6c3f4d6),
    ("random14-Fifo-dedup-HoldUntilTwin-24", 0x582b1b83a555b483),
    ("random15-StaticPriority-random-uniform", 0xb9b0c84a3ec0acd0),
    ("random15-StaticPriority-synchronized-max", 0xd635987f6f72fced),
    ("random15-StaticPriority-pareto-trace", 0x9313f341f0435ca8),
    ("random15-StaticPriority-dedup-FirstCopy-16", 0x7bdfbca69aab4c04),
    ("random15-StaticPriority-dedup-HoldUntilTwin-24", 0x12ac16f3c68f460c),
    ("random16-Any-random-uniform", 0x7d61dadaa8b9520f),
    ("random16-Any-synchronized-max", 0x3289d7111776f6f1),
    ("random16-Any-cut-through-mixed-traffic", 0xabcfde6651989897),
    ("random17-Mixed-random-uniform", 0xde7324c22274233c),
    ("random17-Mixed-synchronized-max", 0x036de9317b738414),
    ("random17-Mixed-mixed-traffic", 0x757524da83986d6a),
    ("random18-Fifo-random-uniform", 0x6610acacbfcae143),
    ("random18-Fifo-synchronized-max", 0x62c8bbaf62ee4a36),
    ("random18-Fifo-buffers-retransmit", 0x56e071b296afbf43),
    ("random19-StaticPriority-random-uniform", 0xba5fc7178944b107),
    ("random19-StaticPriority-synchronized-max", 0xcd1440bcc444cdaa),
    ("random19-StaticPriority-policed", 0x289b2c448ecf1e5f),
    ("random20-Any-random-uniform", 0x45b51fe2ed3376c8),
    ("random20-Any-synchronized-max", 0x40780d870b73348d),
    ("random20-Any-poisson-min", 0x5ed863104a08eeec),
    ("random21-Mixed-random-uniform", 0xae4a261adafa16b8),
    ("random21-Mixed-synchronized-max", 0x7b6ecbedca265683),
    ("random21-Mixed-pareto-trace", 0x1469a96b04a56220),
    ("random22-Fifo-random-uniform", 0x1271aa637cf8d62e),
    ("random22-Fifo-synchronized-max", 0xb77e0ed710aaca14),
    ("random22-Fifo-cut-through-mixed-traffic", 0xc93659df71dfa18b),
    ("random23-StaticPriority-random-uniform", 0xd19e21770c58d5ad),
    ("random23-StaticPriority-synchronized-max", 0x7f38b6f23a37f21b),
    ("random23-StaticPriority-mixed-traffic", 0x76f7f777d8549cbc),
    ("random23-StaticPriority-dedup-FirstCopy-16", 0xe13e64f9ff02d029),
    ("random23-StaticPriority-dedup-HoldUntilTwin-24", 0xa6b7435d54e40c70),
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
        let (h, json, r, trace_len) = fingerprint(spec, &cfg);
        if let Some(d) = &dump {
            std::fs::write(d.join(format!("{name}.json")), &json).unwrap();
        }
        dropped += r.stats.packets_dropped;
        policed += r.stats.packets_policed;
        retransmitted += r.flows.iter().map(|f| f.retransmissions).sum::<u64>();
        false_positives += r.dedup.iter().map(|d| d.false_positives).sum::<u64>();
        traced += trace_len;
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
