//! The simulator against hand computations, itself (determinism, conservation) and the analysis
//! (no simulated delay or backlog above its bound, on many random networks).

use super::*;
use crate::analysis::{run, Request};
use crate::generate::{random_small, RandomSchedulers};
use crate::model::{load_network, validate_spec};

fn one_switch(tech: &str) -> crate::model::Network {
    let json = format!(
        r#"{{
      "name": "tiny",
      "end_systems": [{{"name": "ES1"}}, {{"name": "ES2"}}],
      "switches": [{{"name": "SW", "technological_latency": "{tech}"}}],
      "links": [{{"from": "ES1", "to": "SW"}}, {{"from": "SW", "to": "ES2", "propagation_delay": "1us"}}],
      "flows": [{{"name": "VL1", "type": "virtual_link", "bag": "1ms", "lmin": "1000B", "lmax": "1000B",
                 "source": "ES1", "destinations": ["ES2"]}}]
    }}"#
    );
    let (n, d) = load_network(&json);
    n.unwrap_or_else(|| panic!("{:?}", d.0))
}

/// 1000 B frames: 1020 B = 8160 bits on the wire, 81.6 µs at 100 Mb/s per hop, store and
/// forward: 81.6 + 16 (switch) + 81.6 + 1 (propagation) = 180.2 µs, every frame, alone.
#[test]
fn single_frame_latency_by_hand() {
    let cfg = SimConfig { duration_ns: 9_900_000, release: Release::Synchronized, ..Default::default() };
    let r = simulate(&one_switch("16us"), &cfg).unwrap();
    let f = &r.flows[0];
    assert_eq!(f.latency.count, 10, "one frame per ms for 10 ms");
    assert!((f.latency.max_us - 180.2).abs() < 1e-9 && (f.latency.min_us - 180.2).abs() < 1e-9, "{f:?}");
    assert_eq!(r.stats.frame_hops, 20);
    let sw = r.ports.iter().find(|p| p.node == "SW" && p.frames > 0).unwrap();
    assert!((sw.utilisation - 0.0816).abs() < 0.001, "{}", sw.utilisation);
    assert!((sw.max_backlog_bytes - 1020.0).abs() < 1e-9);
}

#[test]
fn same_seed_same_results_bit_for_bit() {
    let n = validate_spec(random_small(7, RandomSchedulers::Mixed)).0.unwrap();
    let cfg = SimConfig { duration_ns: 300_000_000, seed: 11, ..Default::default() };
    let strip = |mut r: SimReport| {
        r.stats.wall_s = 0.0;
        serde_json::to_string(&r).unwrap()
    };
    let a = strip(simulate(&n, &cfg).unwrap());
    let b = strip(simulate(&n, &cfg).unwrap());
    assert_eq!(a, b);
    let c = strip(simulate(&n, &SimConfig { seed: 12, ..cfg }).unwrap());
    assert_ne!(a, c);
}

#[test]
fn every_copy_is_accounted_for() {
    for seed in 0..30 {
        let mut spec = random_small(seed, RandomSchedulers::Mixed);
        // Small buffers somewhere, so that drops happen too.
        spec.defaults.buffer = Some(crate::units::DataSize::from_bytes(3000.0));
        let n = validate_spec(spec).0.unwrap();
        let mut sim =
            Simulator::new(&n, SimConfig { duration_ns: 200_000_000, seed, ..Default::default() }).unwrap();
        sim.run_until(123_456_789);
        let s = sim.report().stats;
        assert_eq!(
            s.packets_created,
            s.packets_delivered
                + s.packets_forwarded
                + s.packets_dropped
                + s.packets_policed
                + s.packets_in_flight,
            "seed {seed}: {s:?}"
        );
        assert!(s.frames_released > 0);
    }
}

/// The simulator never exceeds the analysis: on random networks with loads up to 0.9, each
/// scheduler with a service model, synchronised and random releases, every (flow, destination,
/// plane) maximum is at most its `best` bound and every port's backlog at most its bound.
#[test]
fn simulation_never_exceeds_the_bounds() {
    let mut checked = 0;
    for seed in 0..200u64 {
        let kind =
            [RandomSchedulers::Mixed, RandomSchedulers::Fifo, RandomSchedulers::Any][seed as usize % 3];
        let n = validate_spec(random_small(seed, kind)).0.unwrap();
        // Independent of the scheduler mix: every mix meets both release patterns.
        let random = (seed / 3) % 3 == 0;
        let release = if random { Release::Random } else { Release::Synchronized };
        let sizes = if random { FrameSizes::Uniform } else { FrameSizes::Max };
        let cfg =
            SimConfig { duration_ns: 300_000_000, seed, release, frame_sizes: sizes, ..Default::default() };
        checked += assert_within_bounds(&n, &cfg, &format!("seed {seed}"));
    }
    assert!(checked > 10_000, "only {checked} frames checked");
}

/// The same at 65,536 Mbit/s on every link (a bit takes 0.0152587890625 ns), the smallest
/// frames, synchronised releases: transmission times are fractions of a ns, and a busy period
/// strings hundreds of them together. Simulated <= bound holds with no tolerance, as the
/// simulator keeps each link's exact end of transmission and rounds event times down.
#[test]
fn simulation_never_exceeds_the_bounds_at_extreme_rates() {
    let mut checked = 0;
    for seed in 0..60u64 {
        let kind =
            [RandomSchedulers::Mixed, RandomSchedulers::Fifo, RandomSchedulers::Any][seed as usize % 3];
        let mut spec = random_small(seed, kind);
        let rate = crate::units::DataRate::from_bps(65_536e6);
        spec.defaults.link_rate = rate;
        for l in &mut spec.links {
            l.rate = Some(rate);
        }
        for f in &mut spec.flows {
            match &mut f.traffic {
                crate::model::Traffic::VirtualLink { lmin, lmax, .. } => {
                    *lmin = crate::units::DataSize::from_bytes(64.0);
                    *lmax = crate::units::DataSize::from_bytes(64.0 + (seed % 5) as f64);
                }
                crate::model::Traffic::Periodic { size, .. } => {
                    *size = crate::units::DataSize::from_bytes(65.0)
                }
                _ => {}
            }
        }
        let Some(n) = validate_spec(spec).0 else { continue };
        let cfg = SimConfig {
            duration_ns: 20_000_000,
            seed,
            release: Release::Synchronized,
            frame_sizes: FrameSizes::Max,
            ..Default::default()
        };
        checked += assert_within_bounds(&n, &cfg, &format!("65,536 Mbit/s, seed {seed}"));
    }
    assert!(checked > 1_000, "only {checked} frames checked");
}

/// A bound computed in floating point, as its exact value could be at most: four ulps up (each
/// of the analysis' additions and products rounds by half an ulp of its result).
fn analysis_rounding(x: f64) -> f64 {
    x + 4.0 * f64::EPSILON * x.abs()
}

/// Every (flow, destination, plane) maximum at most its `best` bound and its `sfa-iter` bound
/// (SFA iterated on its own and TFA's output bounds), every port's backlog at most its bound,
/// exactly; returns the frames checked.
fn assert_within_bounds(n: &crate::model::Network, cfg: &SimConfig, what: &str) -> u64 {
    let sim = simulate(n, cfg).unwrap();
    let mut checked = 0;
    let seed = what;
    for method in ["best", "sfa-iter"] {
        let bounds =
            run(n, &Request { method: method.parse().expect("a method name"), ..Default::default() })
                .unwrap();
        for (s, b) in sim.flows.iter().zip(&bounds.flows) {
            assert_eq!((&*s.flow, &*s.destination, &*s.plane), bounds.flows.names_of(b));
            // The analysis computes in floating point: its result may lie an ulp or two below the
            // exact bound, which the simulator reaches on tight cases (541960 ns simulated against
            // 541.9599999999999 us). Nothing else is allowed.
            let bound_us = analysis_rounding(b.delay_us);
            assert!(
                s.latency.max_us <= bound_us,
                "{seed}: {} -> {} ({}): simulated {} > bound {} ({})",
                s.flow,
                s.destination,
                s.plane,
                s.latency.max_us,
                b.delay_us,
                b.method
            );
            checked += (method == "best") as u64 * s.latency.count;
        }
        for (s, b) in sim.ports.iter().zip(&bounds.ports) {
            assert!(
                s.max_backlog_bytes <= analysis_rounding(b.backlog_bytes),
                "{seed}: port {}:{} backlog {} > bound {}",
                s.node,
                s.port,
                s.max_backlog_bytes,
                b.backlog_bytes
            );
        }
    }
    checked
}

/// Seed 000's deduplication never drops a frame that is not a duplicate: on random redundant
/// networks, with small filters that give false positives and saturate, every (flow,
/// destination) gets exactly as many frames delivered as sequence-number redundancy management
/// delivers, in both delivery modes, and as many duplicates discarded.
#[test]
fn dedup_delivers_every_frame_once() {
    let mut redundant = 0;
    let mut false_positives = 0;
    for seed in 0..60u64 {
        let n = validate_spec(random_small(seed, RandomSchedulers::Mixed)).0.unwrap();
        if n.planes.len() < 2 {
            continue;
        }
        redundant += 1;
        let base = SimConfig { duration_ns: 400_000_000, seed, ..Default::default() };
        let rm = simulate(&n, &base).unwrap();
        for (counters, mode) in
            [(16, DedupMode::FirstCopy), (24, DedupMode::HoldUntilTwin), (1280, DedupMode::FirstCopy)]
        {
            let cfg = SimConfig { dedup: Some(DedupSettings { counters, hashes: 0, mode }), ..base.clone() };
            let d = simulate(&n, &cfg).unwrap();
            for (a, b) in rm.delivered.iter().zip(&d.delivered) {
                assert_eq!((&a.flow, &a.destination), (&b.flow, &b.destination));
                assert_eq!(
                    a.latency.count, b.latency.count,
                    "seed {seed} {mode:?} M={counters}: {} -> {}",
                    a.flow, a.destination
                );
                assert_eq!(a.duplicates_discarded, b.duplicates_discarded, "seed {seed} {mode:?}");
                if mode == DedupMode::FirstCopy {
                    assert_eq!(a.latency.max_us, b.latency.max_us, "first copy wins: same latencies");
                }
            }
            false_positives += d.dedup.iter().map(|x| x.false_positives).sum::<u64>();
        }
    }
    assert!(redundant >= 10, "only {redundant} redundant networks");
    assert!(
        false_positives > 0,
        "the small filters must produce false positives for this test to mean anything"
    );
}

/// ARINC 664 policing at the switch input: a VL released with up to 500 µs of jitter breaks a
/// 1 ms BAG when policed without jitter allowance (some frames dropped), and passes untouched
/// with an allowance that covers its jitter.
#[test]
fn policing_drops_only_what_breaks_the_contract() {
    let run = |allowance: Option<&str>| {
        let mut spec: crate::model::NetworkSpec = serde_json::from_value(serde_json::json!({
            "name": "policed",
            "end_systems": [{"name": "ES1"}, {"name": "ES2"}],
            "switches": [{"name": "SW"}],
            "links": [{"from": "ES1", "to": "SW"}, {"from": "SW", "to": "ES2"}],
            "flows": [{"name": "VL1", "type": "virtual_link", "bag": "1ms", "lmin": "100B", "lmax": "100B",
                       "release_jitter": "500us", "source": "ES1", "destinations": ["ES2"]}]
        }))
        .unwrap();
        spec.defaults.policing_jitter = allowance.map(|a| crate::units::Duration::parse(a).unwrap());
        let n = validate_spec(spec).0.unwrap();
        simulate(&n, &SimConfig { duration_ns: 1_000_000_000, seed: 5, ..Default::default() }).unwrap()
    };
    let strict = run(Some("0us"));
    assert!(strict.stats.packets_policed > 50, "{:?}", strict.stats);
    assert_eq!(strict.flows[0].losses, strict.stats.packets_policed);
    let sw = strict.ports.iter().find(|p| p.node == "SW" && p.frames > 0).unwrap();
    assert_eq!(sw.policed, strict.stats.packets_policed);
    let tolerant = run(Some("500us"));
    assert_eq!(tolerant.stats.packets_policed, 0, "{:?}", tolerant.stats);
    assert_eq!(run(None).stats.packets_policed, 0);
    assert_eq!(tolerant.flows[0].latency.count, run(None).flows[0].latency.count);
}

/// A FIFO port schedules each frame as it arrives and forwards it at once (no events of its
/// own); run on events like every other scheduler, it must give the same results. Random
/// releases, so that no two events tie (their order is the only thing the two runs may settle
/// differently), with drops, retransmissions and policing on some networks. Only the number of
/// events and the moment a copy counts as forwarded differ.
#[test]
fn fifo_fast_path_matches_the_event_driven_fifo() {
    let run = |sim: Result<Simulator, String>, end: i64| {
        let mut sim = sim.unwrap();
        sim.run_until(end);
        let mut r = sim.report();
        let s = &mut r.stats;
        (s.events, s.wall_s, s.packets_created, s.packets_forwarded, s.packets_in_flight) = (0, 0.0, 0, 0, 0);
        serde_json::to_string(&r).unwrap()
    };
    for seed in 0..24u64 {
        for kind in [RandomSchedulers::Fifo, RandomSchedulers::Mixed] {
            let mut spec = random_small(seed, kind);
            if seed % 3 == 1 {
                spec.defaults.buffer = Some(crate::units::DataSize::from_bytes(4000.0));
            }
            if seed % 3 == 2 {
                spec.defaults.policing_jitter = Some(crate::units::Duration::from_us(0.0));
            }
            let n = validate_spec(spec).0.unwrap();
            let cfg = SimConfig {
                duration_ns: 100_000_000,
                seed,
                retransmit: seed % 3 == 1,
                frame_sizes: FrameSizes::Uniform,
                ..Default::default()
            };
            let end = 77_777_777;
            let fast = run(Simulator::new(&n, cfg.clone()), end);
            let generic = run(Simulator::with_generic_fifo(&n, cfg), end);
            assert_eq!(fast, generic, "seed {seed}, {kind:?}");
        }
    }
}

/// Arrivals at destinations logged and handled in batches must give exactly what arrival events
/// give, ties included: every field of the report, the number of events and the copies in
/// flight too. 40 random networks with every scheduler kind, one or two planes, small buffers on
/// some, and a generated two-plane AFDX network, where the copies of a frame often reach their
/// destination in the other order than they were logged; each with random and synchronised
/// releases (many ties), run in three slices (arrivals not yet due are carried from one slice to
/// the next). Batches are taken at the engine's size and, to cross many more batch boundaries,
/// every 1 and every 13 arrivals.
#[test]
fn logged_arrivals_match_arrival_events() {
    let run = |sim: Result<Simulator, String>, end: i64| {
        let mut sim = sim.unwrap();
        for k in 1..=3 {
            sim.run_until(end * k / 3);
        }
        sim.finish();
        let mut r = sim.report();
        r.stats.wall_s = 0.0;
        serde_json::to_string(&r).unwrap()
    };
    let mut nets = Vec::new();
    for seed in 0..40u64 {
        let kind =
            [RandomSchedulers::Fifo, RandomSchedulers::Mixed, RandomSchedulers::Any][seed as usize % 3];
        let mut spec = random_small(seed, kind);
        if seed % 4 == 1 {
            spec.defaults.buffer = Some(crate::units::DataSize::from_bytes(4000.0));
        }
        nets.push((seed, spec));
    }
    let big = crate::generate::AfdxParams { virtual_links: 300, switches: 4, seed: 5, ..Default::default() };
    nets.push((99, crate::generate::afdx(&big)));
    let mut logged_runs = 0;
    for (seed, spec) in nets {
        let n = validate_spec(spec).0.unwrap();
        for release in [Release::Random, Release::Synchronized] {
            let cfg = SimConfig { duration_ns: 60_000_000, seed, release, ..Default::default() };
            let end = 50_000_017;
            let events = run(Simulator::with_arrivals(&n, cfg.clone(), None), end);
            for batch in [0, 1, 13] {
                let logged = Simulator::with_arrivals(&n, cfg.clone(), Some(batch)).unwrap();
                logged_runs += logged.logs_arrivals() as u32;
                assert!(run(Ok(logged), end) == events, "seed {seed}, {release:?}, batches of {batch}");
            }
        }
    }
    assert!(logged_runs >= 3 * 70, "{logged_runs} runs logged their arrivals");
}

/// ARINC 664 integrity checking by hand: the next number or the one after is valid (one frame
/// lost), 255 wraps to 1 (0 is never sent), a longer gap costs one copy and the check takes the
/// stream up again.
#[test]
fn integrity_checking_by_hand() {
    use super::destinations::sequence_valid;
    let check = |frames: &[u64]| {
        let mut last = 0;
        frames.iter().map(|&f| sequence_valid(&mut last, f)).collect::<Vec<_>>()
    };
    // Frame k carries sequence number k % 255 + 1.
    assert_eq!(check(&[0, 1, 2, 4, 5]), [true; 5]);
    assert_eq!(check(&[7]), [true], "the first copy received is valid, whatever its number");
    assert_eq!(check(&[0, 3, 4, 5, 8, 11, 12]), [true, false, true, true, false, false, true]);
    assert_eq!(check(&[253, 254, 255, 256]), [true; 4], "254, 255, 1, 2");
    assert_eq!(check(&[253, 255]), [true; 2], "254 then 1: one lost");
    assert_eq!(check(&[252, 255]), [true, false], "253 then 1: two lost");
    assert_eq!(check(&[0, 255]), [true, false], "1 then 1: a full cycle is not one frame");
}

/// On random networks with small buffers, integrity checking discards copies only on routes
/// that lost at least two frames per copy discarded (each discard follows two consecutive
/// losses), never on a route without losses; and some are discarded; the same with
/// deduplication instead of redundancy management.
#[test]
fn integrity_checking_follows_losses() {
    let (mut discarded, mut lost) = (0, 0);
    for seed in 0..60u64 {
        let mut spec = random_small(seed, RandomSchedulers::Any);
        spec.defaults.buffer = Some(crate::units::DataSize::from_bytes(1600.0));
        let n = validate_spec(spec).0.unwrap();
        let cfg = SimConfig { duration_ns: 200_000_000, seed, ..Default::default() };
        let r = simulate(&n, &cfg).unwrap();
        for f in &r.flows {
            assert!(2 * f.integrity_discards <= f.losses, "seed {seed}: {f:?}");
            discarded += f.integrity_discards;
            lost += f.losses;
        }
        // Integrity checking comes before redundancy management or deduplication, whichever.
        let dedup = SimConfig { dedup: Some(DedupSettings::default()), ..cfg };
        let with_dedup = simulate(&n, &dedup).unwrap();
        let discards = |r: &SimReport| r.flows.iter().map(|f| f.integrity_discards).collect::<Vec<_>>();
        assert_eq!(discards(&r), discards(&with_dedup), "seed {seed}");
    }
    assert!(discarded > 0, "no copy failed integrity checking ({lost} lost)");
}

/// Three VLs from three end systems to ES4 over two planes; their frames meet at the switches'
/// ports to ES4 at every BAG (synchronised releases). With 1600 B of buffer at `tight` planes'
/// switch, one frame waits and the third is dropped at each meeting.
fn three_into_one(tight: &[&str], deadline: &str) -> crate::model::Network {
    let buffer = |p: &str| if tight.contains(&p) { r#", "buffer": "1600B""# } else { "" };
    let vl = |k: u32| {
        format!(
            r#"{{"name": "VL{k}", "type": "virtual_link", "bag": "1ms", "lmin": "1000B", "lmax": "1000B",
                "source": "ES{k}", "destinations": ["ES4"], "deadline": "{deadline}"}}"#
        )
    };
    let json = format!(
        r#"{{
      "name": "three-into-one",
      "redundancy": {{"planes": ["A", "B"], "skew_max": "2ms"}},
      "end_systems": [{{"name": "ES1"}}, {{"name": "ES2"}}, {{"name": "ES3"}}, {{"name": "ES4"}}],
      "switches": [{{"name": "SWA", "plane": "A"{}}}, {{"name": "SWB", "plane": "B"{}}}],
      "links": [{{"from": "ES1", "to": "SWA"}}, {{"from": "ES2", "to": "SWA"}}, {{"from": "ES3", "to": "SWA"}},
                {{"from": "SWA", "to": "ES4"}}, {{"from": "ES1", "to": "SWB"}}, {{"from": "ES2", "to": "SWB"}},
                {{"from": "ES3", "to": "SWB"}}, {{"from": "SWB", "to": "ES4"}}],
      "flows": [{}, {}, {}]
    }}"#,
        buffer("A"),
        buffer("B"),
        vl(1),
        vl(2),
        vl(3)
    );
    let (n, d) = load_network(&json);
    n.unwrap_or_else(|| panic!("{:?}", d.0))
}

/// Retransmission on timeout: a frame lost on one plane but delivered on the other in time is
/// not sent again; one lost on both planes, or late, is, once, after its timeout.
#[test]
fn retransmission_waits_for_the_timeout_and_the_twin() {
    let cfg = SimConfig {
        duration_ns: 50_000_000,
        release: Release::Synchronized,
        frame_sizes: FrameSizes::Max,
        retransmit: true,
        ..Default::default()
    };
    let by_flow = |r: &SimReport, plane: &str| -> Vec<(u64, u64)> {
        r.flows.iter().filter(|f| f.plane == plane).map(|f| (f.losses, f.retransmissions)).collect()
    };
    // Plane A drops, plane B delivers: losses, and no retransmission.
    let r = simulate(&three_into_one(&["A"], "10ms"), &cfg).unwrap();
    let lost_a: u64 = by_flow(&r, "A").iter().map(|x| x.0).sum();
    assert!(lost_a >= 45, "{:?}", by_flow(&r, "A"));
    assert!(by_flow(&r, "B").iter().all(|&(l, _)| l == 0));
    assert!(r.flows.iter().all(|f| f.retransmissions == 0), "{:?}", by_flow(&r, "A"));
    assert!(r.delivered.iter().all(|d| d.latency.count == 50), "every frame delivered once");
    // Frames due: those emitted at 0, 1, ..., 39 ms (one per BAG) time out by 39 ms + 10 ms
    // + 1 ns, within the 50 ms run; those from 40 ms on are still awaited at the end.
    let due: Vec<_> = r.flows.iter().map(|f| f.frames_due).collect();
    assert!(due.iter().all(|&d| d == Some(40)), "{due:?}");
    // Both planes drop: the same VL loses both copies, and each frame lost is sent again once
    // its 10 ms timeout has passed (the copies sent again may meet the others and be lost too).
    let r = simulate(&three_into_one(&["A", "B"], "10ms"), &cfg).unwrap();
    for (a, b) in by_flow(&r, "A").into_iter().zip(by_flow(&r, "B")) {
        assert_eq!(a, b, "the planes are alike");
        let (lost, retx) = a;
        assert!(retx <= lost && (lost == 0) == (retx == 0), "{:?}", by_flow(&r, "A"));
    }
    assert!(by_flow(&r, "A").iter().map(|x| x.1).sum::<u64>() >= 20, "{:?}", by_flow(&r, "A"));
    // Late everywhere (the deadline is below the frames' transmission on two links): every
    // frame but those sent again is retransmitted once its timeout has passed. By 1.5 ms:
    // frame 0 (released at 0) times out at 100 µs and its copy leaves at 1 ms, ahead of frame 1.
    let cfg = SimConfig { duration_ns: 1_500_000, ..cfg };
    let r = simulate(&three_into_one(&[], "100us"), &cfg).unwrap();
    assert!(r.flows.iter().all(|f| f.retransmissions == 1 && f.losses == 0 && f.frames_due == Some(1)));
    assert_eq!(r.stats.frames_released, 3 * 2, "each VL: frame 0 and its copy sent again");
}

/// Constant bit rate: frames evenly spaced at load × the contract's rate, from the flow's phase;
/// the regulator still holds the BAG when the load exceeds the contract.
#[test]
fn cbr_workload_by_hand() {
    let emitted = |load: f64, ms: i64| {
        let cfg = SimConfig {
            duration_ns: ms * 1_000_000 - 100_000,
            release: Release::Synchronized,
            workload: Workload::Cbr { load },
            ..Default::default()
        };
        simulate(&one_switch("16us"), &cfg).unwrap().stats.frames_released
    };
    assert_eq!(emitted(1.0, 10), 10, "the contract: 0, 1, ..., 9 ms");
    assert_eq!(emitted(0.5, 20), 10, "every 2 ms");
    assert_eq!(emitted(0.75, 10), 8, "every 4/3 ms: 0, 1.33, ..., 9.33 ms");
    assert_eq!(emitted(0.75, 11), 9, "and 10.67 ms");
    assert_eq!(emitted(3.0, 10), 10, "three times the contract: the BAG lets one a ms");
    // Release k at round(k · 10/7 ms): the 700th at exactly 1 s. Steps of round(10/7 ms) would
    // drift 0.43 ns a step and put it at 999,999,700 ns, within a run ending 100 ns before 1 s.
    let cfg = SimConfig {
        duration_ns: 999_999_900,
        release: Release::Synchronized,
        workload: Workload::Cbr { load: 0.7 },
        ..Default::default()
    };
    assert_eq!(simulate(&one_switch("16us"), &cfg).unwrap().stats.frames_released, 700, "no drift");
    let cfg = SimConfig { workload: Workload::Cbr { load: 0.0 }, ..Default::default() };
    assert!(simulate(&one_switch("16us"), &cfg).unwrap_err().contains("load must be positive"));
}

/// With hold-until-twin deduplication, a frame whose only copy arrives is delivered when its
/// SkewMax runs out; if that is within its timeout it is not retransmitted, though the
/// deduplicator only tells of it when it next moves on (here, at the timeout).
#[test]
fn held_frames_delivered_in_time_are_not_retransmitted() {
    let (n, d) = load_network(
        r#"{
      "name": "one-plane-lost",
      "redundancy": {"planes": ["A", "B"], "skew_max": "100us"},
      "end_systems": [{"name": "ES1"}, {"name": "ES2"}],
      "switches": [{"name": "SWA", "plane": "A", "buffer": "100B"}, {"name": "SWB", "plane": "B"}],
      "links": [{"from": "ES1", "to": "SWA"}, {"from": "SWA", "to": "ES2"},
                {"from": "ES1", "to": "SWB"}, {"from": "SWB", "to": "ES2"}],
      "flows": [{"name": "VL1", "type": "virtual_link", "bag": "1ms", "lmin": "1000B", "lmax": "1000B",
                 "source": "ES1", "destinations": ["ES2"], "deadline": "500us"}]
    }"#,
    );
    let n = n.unwrap_or_else(|| panic!("{:?}", d.0));
    let run = |mode: DedupMode| {
        let cfg = SimConfig {
            duration_ns: 20_000_000,
            release: Release::Synchronized,
            retransmit: true,
            dedup: Some(DedupSettings { mode, ..Default::default() }),
            ..Default::default()
        };
        simulate(&n, &cfg).unwrap()
    };
    for mode in [DedupMode::FirstCopy, DedupMode::HoldUntilTwin] {
        let r = run(mode);
        let a = r.flows.iter().find(|f| f.plane == "A").unwrap();
        assert_eq!(a.losses, 20, "{mode:?}: plane A loses every frame");
        let delivered = &r.delivered[0].latency;
        assert_eq!(delivered.count, 20, "{mode:?}");
        // 1020 B at 100 Mb/s twice (163.2 µs), plus SkewMax and 1 ns when held.
        let expect_us = if mode == DedupMode::HoldUntilTwin { 263.201 } else { 163.2 };
        assert!((delivered.max_us - expect_us).abs() < 1e-6, "{mode:?}: {}", delivered.max_us);
        assert_eq!(a.retransmissions, 0, "{mode:?}: every frame delivered within 500 µs");
    }
}

/// Work per frame-hop at `duration_ns` and at ten times it: events plus per-destination state
/// visited, over frame-hops (deterministic, no clock involved).
/// And the entries held at the end of each (see [`Simulator::retained_entries`]).
fn work_per_frame_hop(n: &crate::model::Network, cfg: &SimConfig, duration_ns: i64) -> [(f64, usize); 2] {
    [duration_ns, 10 * duration_ns].map(|d| {
        let mut sim = Simulator::new(n, SimConfig { duration_ns: d, ..cfg.clone() }).unwrap();
        sim.run_until(d);
        let held = sim.retained_entries();
        sim.finish();
        assert!(sim.frame_hops() > 0);
        (sim.work_units() as f64 / sim.frame_hops() as f64, held)
    })
}

/// A run's cost grows with what it simulates, not with how long it has run: the work per
/// frame-hop at ten times the duration stays within twice that of the short run, on single-plane
/// and two-plane networks (generated AFDX and random with every scheduler), with every workload,
/// release, retransmission and deduplication. Per-destination state that remembered every frame
/// (redundancy management without a SkewMax) made it grow tenfold.
#[test]
fn work_per_frame_hop_is_flat_in_duration() {
    let afdx = |planes| {
        let p = crate::generate::AfdxParams {
            virtual_links: 60,
            switches: 3,
            seed: 5,
            planes,
            ..Default::default()
        };
        validate_spec(crate::generate::afdx(&p)).0.unwrap()
    };
    let base = SimConfig { seed: 3, ..Default::default() };
    let dedup = |mode| Some(DedupSettings { mode, ..Default::default() });
    let configs = [
        base.clone(),
        SimConfig { release: Release::Synchronized, frame_sizes: FrameSizes::Max, ..base.clone() },
        SimConfig { retransmit: true, retransmit_timeout_ns: 3_000_000, ..base.clone() },
        SimConfig { dedup: dedup(DedupMode::FirstCopy), ..base.clone() },
        SimConfig { dedup: dedup(DedupMode::HoldUntilTwin), retransmit: true, ..base.clone() },
        SimConfig { workload: Workload::Poisson { load: 0.8 }, ..base.clone() },
        SimConfig { workload: Workload::Cbr { load: 1.0 }, ..base.clone() },
        SimConfig {
            workload: Workload::ParetoBursts { load: 0.5, alpha: 1.5, mean_frames: 3.0 },
            ..base.clone()
        },
    ];
    let mut nets = vec![("afdx, one plane", afdx(1)), ("afdx, two planes", afdx(2))];
    for seed in [1, 2, 4] {
        nets.push(("random", validate_spec(random_small(seed, RandomSchedulers::Any)).0.unwrap()));
    }
    for (name, n) in &nets {
        for cfg in &configs {
            let [(short, held_short), (long, held_long)] = work_per_frame_hop(n, cfg, 200_000_000);
            assert!(
                long <= 2.0 * short,
                "{name}, {cfg:?}: {short:.2} work units per frame-hop over 0.2 s, {long:.2} over 2 s"
            );
            assert!(
                held_long <= 2 * held_short + 16,
                "{name}, {cfg:?}: {held_short} entries held after 0.2 s, {held_long} after 2 s"
            );
        }
    }
}
