//! Whole-fabric tests: exact timings of cut-through, crossbar and credit loops on hand-made
//! packets, and the invariants (no loss, bounded buffers and credits, conservation, order,
//! determinism) under the seed's traffic with every scheduler.

use super::engine::Fabric;
use super::*;
use crate::model::SchedulerConfig as S;
use crate::units::{DataSize, Duration};

const MTU_NS: i64 = 2048 * 4; // 2048 B at 2 Gb/s
const PROP: i64 = 20;
const CROSS: i64 = 145;

/// The multimedia scenario on a 4-endpoint switch, short, with `scheduler`.
fn tiny(scheduler: S, best_effort: f64) -> Scenario {
    let mut s = Scenario::multimedia(Table5::Drr, best_effort);
    s.topology = TopologyConfig::SingleSwitch { endpoints: 4 };
    s.schedulers.insert("under_test".into(), scheduler);
    s.scheduler = "under_test".into();
    s.warmup = Duration::from_us(100.0);
    s.duration = Duration::from_us(1500.0);
    s
}

/// `tiny` without any generated traffic, for scripted packets (time, destination, bytes).
fn quiet(topology: TopologyConfig) -> Scenario {
    let mut s = tiny(S::Fifo, 0.0);
    s.topology = topology;
    s.classes.iter_mut().for_each(|c| c.injection = 0.0);
    s.warmup = Duration::from_secs(0.0);
    s.duration = Duration::from_ms(20.0);
    s
}

/// Packets an endpoint sends on a VC: (time ns, destination, bytes).
type Script = (u32, u16, Vec<(i64, u32, u32)>);

fn run_with(s: &Scenario, scripts: Vec<Script>) -> FabricReport {
    s.validate().unwrap();
    let mut f = Fabric::new(s).unwrap();
    for (src, vc, packets) in scripts {
        f.add_script(src, vc, packets);
    }
    let r = f.run();
    assert!(r.checks.all_hold(), "{:?}", r.checks);
    r
}

fn max_ns(r: &FabricReport, vc: usize) -> i64 {
    (r.classes[vc].latency.max_us * 1e3).round() as i64
}

/// One packet through one switch, then through five: serialisation once (cut-through), then a
/// propagation delay per link and 145 ns per switch.
#[test]
fn unloaded_latency_is_cut_through() {
    let r = run_with(&quiet(TopologyConfig::SingleSwitch { endpoints: 4 }), vec![(0, 2, vec![(0, 1, 2048)])]);
    assert_eq!(r.classes[2].packets_delivered, 1);
    assert_eq!(max_ns(&r, 2), MTU_NS + 2 * PROP + CROSS);
    let bmin = quiet(TopologyConfig::Bmin { radix: 4, stages: 3 });
    let r = run_with(&bmin, vec![(0, 0, vec![(5, 63, 100)]), (7, 3, vec![(0, 6, 2048)])]);
    assert_eq!(max_ns(&r, 0), 400 + 6 * PROP + 5 * CROSS);
    assert_eq!(max_ns(&r, 3), MTU_NS + 2 * PROP + CROSS);
}

/// A burst of 40 MTU packets (more than the 16 the interface holds: the rest wait in the pending
/// queue) leaves back to back at the link rate, through the switch without a gap.
#[test]
fn a_burst_streams_at_the_link_rate() {
    let burst = (0..40).map(|_| (0, 1, 2048)).collect();
    let r = run_with(&quiet(TopologyConfig::SingleSwitch { endpoints: 4 }), vec![(0, 5, burst)]);
    let c = &r.classes[5];
    assert_eq!(c.packets_delivered, 40);
    assert_eq!((c.latency_from_generation.max_us * 1e3).round() as i64, 40 * MTU_NS + 2 * PROP + CROSS);
    assert_eq!(r.checks.max_interface_fill, 1.0);
    assert_eq!(r.checks.max_pending, 40 - 16);
}

/// With one MTU of input buffer, each packet waits for the previous one's credits: they come
/// back when its tail has crossed (the crossbar cannot end before the tail is in) plus the
/// reverse propagation, so packets leave every 2·prop + MTU time.
#[test]
fn credits_pace_a_small_buffer() {
    let mut s = quiet(TopologyConfig::SingleSwitch { endpoints: 4 });
    let prop = 10_000;
    s.link.propagation = Duration::from_secs(prop as f64 * 1e-9);
    s.switch.input_buffer = DataSize::from_bytes(2048.0);
    s.switch.output_buffer = DataSize::from_bytes(2048.0);
    let n = 20;
    let r = run_with(&s, vec![(0, 1, (0..n).map(|_| (0, 2, 2048)).collect())]);
    let period = 2 * prop + MTU_NS;
    let last = (n - 1) * period + MTU_NS + 2 * prop + CROSS;
    assert_eq!((r.classes[1].latency_from_generation.max_us * 1e3).round() as i64, last);
    assert_eq!(r.checks.max_input_fill, 1.0);
    // The credit return delay adds to the period.
    s.link.credit_return = Duration::from_us(1.0);
    let r = run_with(&s, vec![(0, 1, (0..n).map(|_| (0, 2, 2048)).collect())]);
    assert_eq!((r.classes[1].latency_from_generation.max_us * 1e3).round() as i64, last + (n - 1) * 1000);
}

/// Three interfaces flood a fourth (hot spot): input and interface buffers fill, nothing is
/// lost, the hot link runs at its full rate, and the outputs' round-robin shares it evenly.
#[test]
fn hot_spot_backpressure_is_lossless() {
    let per = 150;
    let scripts = (0..3).map(|src| (src, 4, (0..per).map(|_| (0, 3, 2048)).collect())).collect();
    let r = run_with(&quiet(TopologyConfig::SingleSwitch { endpoints: 4 }), scripts);
    let c = &r.classes[4];
    assert_eq!(c.packets_delivered, 3 * per as u64);
    let finish = (c.latency_from_generation.max_us * 1e3).round() as i64;
    // The hot link is never idle once started: all 450 packets in 450 MTU times plus the first's way.
    assert_eq!(finish, 3 * per * MTU_NS + 2 * PROP + CROSS);
    assert_eq!(
        (r.checks.max_input_fill, r.checks.max_interface_fill, r.checks.max_output_fill),
        (1.0, 1.0, 1.0)
    );
}

/// Credit-aware scheduling: a FIFO scheduler (blind to VCs) at an interface whose VC 4 is
/// stalled by a hot spot still lets VC 1 through, since VC 4's packets without credits never
/// reach the scheduler. VC 1 waits for at most the packets already granted credits (8 of them at
/// first, as the input buffer holds 8 MTU: VO starts once those are gone).
#[test]
fn a_stalled_vc_does_not_block_another() {
    let per = 150;
    let mut scripts: Vec<_> = (0..3).map(|src| (src, 4, (0..per).map(|_| (0, 3, 2048)).collect())).collect();
    scripts.push((0, 1, (5..64).map(|k| (k * 20_000, 2, 160)).collect()));
    let r = run_with(&quiet(TopologyConfig::SingleSwitch { endpoints: 4 }), scripts);
    let vo = &r.classes[1];
    assert_eq!(vo.packets_delivered, 59);
    // Steady state: VC 4 gets credits back one packet per 3 MTU times, so at most one VC 4
    // packet is ever granted ahead of a VO packet, plus the one on the wire.
    assert!(max_ns(&r, 1) <= 2 * MTU_NS + 640 + 2 * PROP + CROSS, "{:?}", vo.latency);
    // Without credit awareness it would wait behind the interface's 16 MTU packets.
    assert!(max_ns(&r, 4) > 16 * MTU_NS);
}

/// The seed's traffic at a high load on one switch with each scheduler available now: every
/// invariant holds, and whatever cannot be delivered in time is still in the fabric or pending.
#[test]
fn every_scheduler_keeps_the_invariants() {
    let weights: std::collections::BTreeMap<String, f64> =
        TABLE5_CLASSES.iter().zip(TABLE5_TOTAL_WEIGHT).map(|(c, w)| (c.to_string(), w as f64)).collect();
    let schedulers = [
        ("fifo", S::Fifo),
        ("static_priority", S::StaticPriority),
        ("drr", Table5::Drr.config()),
        ("scfq", Table5::Scfq.config()),
        ("wf2q", S::Wf2q { weights }),
        // A shaper (1.5 Gb/s at every port) around DRR: its scheduler says when to come back.
        (
            "token_bucket",
            S::TokenBucket {
                rate: crate::units::DataRate(1.5e9),
                burst: DataSize::from_bytes(4096.0),
                inner: Some("drr".into()),
            },
        ),
    ];
    for (name, config) in schedulers {
        let r = run_scenario(&tiny(config, 0.093)).unwrap();
        assert!(r.checks.all_hold(), "{name}: {:?}", r.checks);
        assert!(r.checks.in_network_at_end > 0, "{name}: {:?}", r.checks);
        assert!(r.stats.packets_delivered > 1000, "{name}: {:?}", r.stats);
        let floor = if name == "token_bucket" { 0.55 } else { 0.7 };
        assert!(
            r.offered_load > 0.95 && r.accepted_load > floor,
            "{name}: {} {}",
            r.offered_load,
            r.accepted_load
        );
        if name == "token_bucket" {
            assert!(
                r.accepted_load < 1.5 / 2.5 * 1.02,
                "{name}: the shaper lets through {}",
                r.accepted_load
            );
        }
        if name == "static_priority" {
            let (nc, bk) = (&r.classes[0].latency, &r.classes[6].latency);
            assert!(nc.mean_us < bk.mean_us, "{name}: NC {} BK {}", nc.mean_us, bk.mean_us);
        }
    }
}

/// Same scenario and seed: the same report bit for bit (wall time aside); another seed differs.
#[test]
fn runs_are_deterministic() {
    let mut s = Scenario::multimedia(Table5::Scfq, MULTIMEDIA_BEST_EFFORT);
    s.warmup = Duration::from_us(20.0);
    s.duration = Duration::from_us(150.0);
    let strip = |mut r: FabricReport| {
        r.stats.wall_s = 0.0;
        r.stats.events_per_s = 0.0;
        serde_json::to_string(&r).unwrap()
    };
    let a = strip(run_scenario(&s).unwrap());
    assert_eq!(a, strip(run_scenario(&s).unwrap()));
    s.seed = 2;
    assert_ne!(a, strip(run_scenario(&s).unwrap()));
}

/// The 64-endpoint BMIN under the multimedia load for a short while: invariants hold, and the
/// fabric carries traffic between all stages.
#[test]
fn bmin_multimedia_short_run() {
    let mut s = Scenario::multimedia(Table5::Drr, MULTIMEDIA_BEST_EFFORT);
    s.warmup = Duration::from_us(50.0);
    s.duration = Duration::from_us(200.0);
    let r = run_scenario(&s).unwrap();
    assert!(r.checks.all_hold(), "{:?}", r.checks);
    assert_eq!((r.endpoints, r.switches), (64, 48));
    assert!(r.stats.packets_delivered > 3000, "{:?}", r.stats);
    assert!(r.classes.iter().all(|c| c.packets_delivered > 0));
}

/// Table 5's four configurations on the BMIN: DRR and SCFQ run now. The DTable ones need the
/// table schedulers in `schedulers::behaviour`: until they are merged the builder refuses them
/// ("not simulated yet"); from then on this test runs them and checks the same invariants.
#[test]
fn table5_variants() {
    for variant in Table5::ALL {
        let mut s = Scenario::multimedia(variant, MULTIMEDIA_BEST_EFFORT);
        s.topology = TopologyConfig::SingleSwitch { endpoints: 4 };
        s.warmup = Duration::from_us(50.0);
        s.duration = Duration::from_us(300.0);
        match run_scenario(&s) {
            Ok(r) => {
                assert!(r.checks.all_hold(), "{}: {:?}", variant.name(), r.checks);
                assert!(r.stats.packets_delivered > 100);
            }
            Err(e) => {
                assert!(matches!(variant, Table5::Dtable | Table5::DtableWf2q), "{}: {e}", variant.name());
                assert!(e.contains("not simulated yet"), "{e}");
            }
        }
    }
}
