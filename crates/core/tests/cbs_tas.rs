//! Credit-based shapers behind a gate control list (802.1Qav with 802.1Qbv on one port): the
//! repository's example by hand, the simulator within the bound on random gated ports (random and
//! synchronised releases), and the closed-gate credit rule the bound depends on.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtnetlab_core::analysis::{run, Request};
use rtnetlab_core::generate::{random_small, RandomSchedulers};
use rtnetlab_core::model::{
    load_text, parse::Format, validate_spec, GateEntry, GateSchedule, Limits, SchedulerConfig,
};
use rtnetlab_core::sim::{simulate, FrameSizes, Release, SimConfig, Workload};
use rtnetlab_core::units::{DataRate, Duration};
use std::collections::BTreeMap;

mod common;
use common::{assert_flows_within, assert_ports_within, bounds, load};

/// examples/tsn/cbs_tas.yaml by hand (schedulers::cbs, "Behind a gate control list"). C = 1 Gb/s,
/// no latencies; wire frames 12304 bits (video, backup) and 520·8 = 4160 bits (audio). Gates in a
/// 500 µs cycle: sr_a and sr_b open [0, 250) µs, best effort [250, 500) µs (no gate open across
/// another's window start: ΣB = 0). Each talker's FIFO port: L/C, burst unchanged.
/// The lower frame L_lo on the wire when a class's credit was last 0 is of a level whose gate
/// opens inside the class's windows (best effort's never does: its frames end before 0).
/// * video (A, I = 250 Mb/s): usable [0, 250 − 12.304] µs, ρ = 237.696/500 = 0.475392,
///   θ = 500 − 237.696 = 262.304 µs. No higher class, L_lo = 4160 (audio): K = 4160 constant, so
///   hiCredit = I·4160/C = 1040, loCredit = −12304·0.75 = −9228. Rate I·ρ = 118.848 Mb/s, latency
///   262.304 + 10268/118.848 = 348.700 µs; delay + 12304/118.848 = 452.227 µs; end to end
///   + 12.304 = 464.531 µs.
/// * audio (B, I = 50 Mb/s): usable [0, 245.84] µs, ρ = 0.49168, θ = 254.16 µs. Above: A's output
///   (10268, 250 Mb/s), L_lo = 0; K(0) = 10268, r' = 250 Mb/s; x* = (10268 + 491.68·254.16)
///   /(491.68 − 250) µs = 559.555 µs; hiCredit = 0.05·(10268 + 250·559.555) = 7507.84, loCredit =
///   −4160·0.95 = −3952. Rate 24.584 Mb/s, latency 254.16 + 11459.84/24.584 = 720.311 µs; delay
///   + 4160/24.584 = 889.527 µs; end to end + 4.16 = 893.687 µs.
/// * backup (best effort, TAS model): usable [250, 487.696] µs, ρ = 0.475392, θ = 262.304 µs.
///   The SR gates never open inside best effort's window, so A's and B's output is not subtracted:
///   delay 262.304 + 12304/475.392 = 288.186 µs; + 12.304 = 300.490 µs. (Subtracting their output
///   buckets, 25222.528 bits + 300 Mb/s, gave 937.225 µs, against 262.304 µs simulated.)
///
/// (With best effort's frame as L_lo for video and audio, as before the model looked at which
/// gates open inside the windows: 481.662 and 953.021 µs.)
#[test]
fn gated_credit_based_example_by_hand() {
    let net = load(include_str!("../../../examples/tsn/cbs_tas.yaml"));
    let b = bounds(&net);
    let want = [("video", 464.531), ("audio", 893.687), ("backup", 300.490)];
    for ((name, bound), (want_name, want_us)) in b.iter().zip(want) {
        assert_eq!(name, want_name);
        assert!((bound - want_us).abs() < 1e-3, "{name}: {bound} vs {want_us}");
    }
    for release in [Release::Synchronized, Release::Random] {
        let cfg = SimConfig { duration_ns: 50_000_000, release, ..Default::default() };
        let sim = simulate(&net, &cfg).unwrap();
        for (s, (_, bound)) in sim.flows.iter().zip(&b) {
            assert!(
                s.latency.count > 40 && s.latency.max_us <= *bound,
                "{}: {} > {bound}",
                s.flow,
                s.latency.max_us
            );
        }
    }
}

/// A random credit-based configuration behind a random gate list for classes c0..c2 on the
/// random networks' slowest links (10 Mb/s): one or two classes shaped, idle slopes up to 10
/// Mb/s in all, every class open in at least one window of 1.3 to 4 ms (a largest frame takes
/// 1.23 ms), other gates opened at random beside it, a random base time. With `total` infinite,
/// each slope is drawn from 5 to 9 Mb/s on its own: their sum may pass the link's rate, which
/// validation accepts only for classes never open together.
fn random_gated(rng: &mut ChaCha8Rng, total: f64) -> SchedulerConfig {
    let mut idle_slopes = BTreeMap::new();
    let mut left = total;
    let (least, most, p): (f64, f64, f64) = if total.is_finite() { (2e6, 6e6, 0.6) } else { (5e6, 9e6, 0.9) };
    for k in 0..3 {
        if idle_slopes.is_empty() && k == 2 || (k < 2 && rng.gen_bool(p)) {
            let r: f64 = rng.gen_range(least..=most).min(left);
            left -= r;
            idle_slopes.insert(format!("c{k}"), DataRate::from_bps(r));
        }
    }
    let n = rng.gen_range(2..=4);
    let entries: Vec<GateEntry> = (0..n)
        .map(|e| GateEntry {
            open: (0..3).filter(|&k| k % n == e || rng.gen_bool(0.35)).map(|k| format!("c{k}")).collect(),
            duration: Duration::from_us(rng.gen_range(1300..4000) as f64),
        })
        .collect();
    let cycle = Duration::from_us(entries.iter().map(|e| e.duration.secs() * 1e6).sum());
    SchedulerConfig::Cbs {
        idle_slopes,
        gates: Some(GateSchedule {
            cycle,
            base_time: Duration::from_us(rng.gen_range(0..1000) as f64),
            entries,
        }),
    }
}

/// Random networks whose switch ports run random gated credit-based shapers, under every workload,
/// random and synchronised releases: no simulated delay or port backlog exceeds its `best`
/// bound; more than a thousand frames are checked against a finite bound.
#[test]
fn gated_credit_based_ports_stay_within_their_bounds() {
    let bounded = random_gated_ports_within_their_bounds(0..24, 7, 9.5e6);
    eprintln!("{bounded} frames checked against a finite bound");
    assert!(bounded > 1000, "only {bounded} frames checked against a finite bound");
}

/// The same with idle slopes drawn per class, their sum free to pass the link's rate where the
/// classes' gates are never open together (the others are refused and skipped).
#[test]
fn gated_credit_based_ports_with_exclusive_slopes_stay_within_their_bounds() {
    let bounded = random_gated_ports_within_their_bounds(100..124, 11, f64::INFINITY);
    eprintln!("{bounded} frames checked against a finite bound");
    assert!(bounded > 1000, "only {bounded} frames checked against a finite bound");
}

/// Frames checked against a finite bound on the random gated networks of `seeds`.
fn random_gated_ports_within_their_bounds(seeds: std::ops::Range<u64>, rng_seed: u64, total: f64) -> u64 {
    let workloads = [Workload::Periodic, Workload::Cbr { load: 1.0 }, Workload::Poisson { load: 1.0 }];
    let mut bounded = 0u64;
    let mut rng = ChaCha8Rng::seed_from_u64(rng_seed);
    for seed in seeds {
        let mut spec = random_small(3000 + seed, RandomSchedulers::Only("cbs"));
        spec.schedulers.insert("cbs".into(), random_gated(&mut rng, total));
        let Some(net) = validate_spec(spec).0 else { continue };
        let b = run(&net, &Request { method: rtnetlab_core::analysis::Method::Best, ..Default::default() })
            .unwrap();
        let cfg = SimConfig {
            duration_ns: 200_000_000,
            seed,
            release: if seed % 2 == 0 { Release::Synchronized } else { Release::Random },
            frame_sizes: if seed % 3 == 0 { FrameSizes::Uniform } else { FrameSizes::Max },
            workload: workloads[(seed / 2) as usize % workloads.len()],
            ..Default::default()
        };
        let sim = simulate(&net, &cfg).unwrap();
        bounded += assert_flows_within(&sim, &b, &format!("seed {seed}")).bounded_frames;
        assert_ports_within(&sim, &b, &format!("seed {seed}"));
    }
    bounded
}

/// The example with class A reserving 600 Mb/s: class B's window is usable 245.84 µs of 500
/// (ρ = 0.49168), so the higher class may send at 600 Mb/s > C·ρ = 491.68 Mb/s while B waits, and
/// B's credit has no bound (the gated hiCredit needs r_H + ΣB/cycle < C·ρ): B's bound is infinite
/// with that reason, and A's stays finite. Best effort's stays finite too: the SR gates never open
/// inside its window, so its service does not depend on their bounds.
#[test]
fn an_unbounded_credit_is_an_infinite_bound_with_its_reason() {
    let text = include_str!("../../../examples/tsn/cbs_tas.yaml").replace("sr_a: 250Mbps", "sr_a: 600Mbps");
    let net = load(&text);
    let r =
        run(&net, &Request { method: rtnetlab_core::analysis::Method::Best, ..Default::default() }).unwrap();
    let row = |name: &str| r.flows.iter().find(|f| net.flows[f.flow].name == name).unwrap();
    assert!(row("video").delay_us.is_finite());
    let audio = row("audio");
    assert!(audio.delay_us.is_infinite());
    let why = audio.reason.as_deref().unwrap_or_default();
    assert!(why.contains("the credit of class 'sr_b' has no bound"), "{why}");
    assert!(row("backup").delay_us.is_finite());
}

/// Idle slopes summing to more than a port's rate are refused in one line naming the port whose
/// shaped traffic they reserve for: in both examples the bridge's port towards the listener
/// (bridge:3, where the talkers' flows leave), not the bridge's first port (towards a talker, which
/// no flow leaves by).
#[test]
fn over_subscribed_idle_slopes_name_the_port_of_the_shaped_traffic() {
    let cases = [
        (
            include_str!("../../../examples/tsn/cbs_avb.yaml").replace("sr_b: 3.648Mbps", "sr_b: 950Mbps"),
            "schedulers.avb.idle_slopes: idle slopes sum to 1.048688Gbps, more than the rate 1Gbps of port \
             bridge:3, where flow 'video' of shaped class 'sr_a' leaves; the idle slopes must sum to at most \
             the rate of every port the scheduler runs",
        ),
        (
            include_str!("../../../examples/tsn/cbs_tas.yaml").replace("sr_b: 50Mbps", "sr_b: 800Mbps"),
            "schedulers.avb_gated.idle_slopes: idle slopes of the classes entry 0 opens sum to 1.05Gbps, more \
             than the rate 1Gbps of port bridge:3, where flow 'video' of shaped class 'sr_a' leaves; the idle \
             slopes of classes whose gates are open together must sum to at most the rate of every port the \
             scheduler runs",
        ),
    ];
    for (text, want) in cases {
        let (net, d) = load_text(&text, Format::Yaml, "example.yaml", &Limits::default());
        assert!(net.is_none());
        let lines: Vec<String> = d.0.iter().map(|x| format!("{x}")).collect();
        assert!(lines.iter().any(|l| l.contains(want)), "{lines:#?}");
    }
}

/// INET's showcase "Combining Time-Aware and Credit-Based Shaping" (OMNeT++ INET 4.4 and later,
/// inet/showcases/tsn/trafficshaping/cbsandtas: its omnetpp.ini and documentation), described by
/// examples/tsn/cbs_tas_inet_showcase.yaml. 100 Mb/s; frames of 1066 B = 8528 bits on the wire
/// (85.28 µs); both classes shaped at 63.96 Mb/s; best effort's gate open [0, 4) ms, video's
/// [4, 6) ms of a 6 ms cycle; best effort one frame per 200 µs, video one per 400 µs, the
/// showcase's nominal intervals (its flow table: channel data rates 42.64 and 21.32 Mb/s).
///
/// Published: the committed information rate is the idle slope times the open share of the
/// gate, 63.96·2/3 = 42.64 Mb/s and 63.96·1/3 = 21.32 Mb/s, equal to the channel rates; the
/// showcase's charts show the shapers' output following their input. rtnetlab's simulator: every
/// frame delivered, at the published rates (within 0.5 % over 600 ms, the frames still queued at
/// the end), and the largest delay is the same after 60 and 600 ms (no backlog builds up).
///
/// rtnetlab's analysis guarantees only the idle slope times the gate's usable share (the credit
/// grows only where the head frame can still end before the gate closes, so the last 85.28 µs of
/// each window are not counted): best effort 63.96·(4000 − 85.28)/6000 = 63.96·0.652453 =
/// 41.731 Mb/s < 42.64, video 63.96·(2000 − 85.28)/6000 = 63.96·0.319120 = 20.411 Mb/s < 21.32.
/// Both classes have no bound, each with that reason (best effort's own: video's gate never opens
/// in its window, so it does not depend on video's bound).
#[test]
fn inet_cbs_and_tas_showcase() {
    let net = load(include_str!("../../../examples/tsn/cbs_tas_inet_showcase.yaml"));
    let r =
        run(&net, &Request { method: rtnetlab_core::analysis::Method::Best, ..Default::default() }).unwrap();
    for (flow, share, published) in [("best_effort", "0.652453", 42.64), ("video", "0.319120", 21.32)] {
        let row = r.flows.iter().find(|f| net.flows[f.flow].name == flow).unwrap();
        assert!(row.delay_us.is_infinite(), "{flow}: {}", row.delay_us);
        let why = row.reason.as_deref().unwrap_or_default();
        let want = format!(
            "class '{flow}' offered {published} Mb/s > idle slope 63.96 Mb/s x the usable share {share}"
        );
        assert!(why.contains(&want), "{flow}: {why}");
    }
    let run_for = |ms: i64| {
        let cfg =
            SimConfig { duration_ns: ms * 1_000_000, release: Release::Synchronized, ..Default::default() };
        simulate(&net, &cfg).unwrap()
    };
    let (short, long) = (run_for(60), run_for(600));
    for ((s, l), published) in short.flows.iter().zip(&long.flows).zip([42.64, 21.32]) {
        let rate = l.latency.count as f64 * 8528.0 / 0.6 / 1e6;
        assert!((rate - published).abs() / published < 0.005, "{}: {rate} Mb/s vs {published}", l.flow);
        assert_eq!(s.latency.max_us, l.latency.max_us, "{}: the delay grows", l.flow);
    }
}

/// The same showcase at its sources' mean rates (best effort 1/(sin 3t + 4.5) ms between frames:
/// 4.5 frames per ms, one per 222.222 µs; video 1/(sin t + sin 8t + 2) ms: 2 per ms, one per
/// 500 µs), below the guaranteed rates above (38.38 < 41.731 and 17.056 < 20.411 Mb/s): both
/// bounds are finite, and the simulator (synchronised and random releases) stays below them.
/// Best effort's hiCredit is 0 (no higher class opens in its window, no lower class, no frame on
/// the wire as its window opens: K(x) = 0), its latency θ + (0 + L·(C − I)/C)/(I·ρ) = 2085.28 +
/// 3073.49/41.731 = 2158.93 µs.
#[test]
fn inet_cbs_and_tas_showcase_at_its_mean_rates() {
    let text = include_str!("../../../examples/tsn/cbs_tas_inet_showcase.yaml")
        .replace("period: 200us", "period: 222.222us")
        .replace("period: 400us", "period: 500us");
    let net = load(&text);
    let b = bounds(&net);
    for release in [Release::Synchronized, Release::Random] {
        let cfg = SimConfig { duration_ns: 600_000_000, release, ..Default::default() };
        let sim = simulate(&net, &cfg).unwrap();
        for (s, (name, bound)) in sim.flows.iter().zip(&b) {
            assert!(bound.is_finite(), "{name}");
            assert!(
                s.latency.count > 1000 && s.latency.max_us <= *bound,
                "{name}: {} > {bound}",
                s.latency.max_us
            );
            eprintln!("{name} {release:?}: simulated {} us, bound {bound} us", s.latency.max_us);
        }
    }
}

/// The showcase's port with one talker per class (so that each reaches the switch with its own
/// burst, one frame: its talker's port adds 85.28 µs), at the mean rates above. By hand
/// (schedulers::cbs, gated): for each class no higher class's gate and no lower class's gate
/// opens inside its window, and no other gate is open across its window's start, so K(x) = 0 and
/// hiCredit = 0; loCredit = −8528·(100 − 63.96)/100 = −3073.491 bits.
/// * best effort: ρ = 0.652453, θ = 2085.28 µs, rate 41.730915 Mb/s; latency 2085.28 +
///   3073.491/41.730915 = 2158.930 µs; delay + 8528/41.730915 = 2363.287 µs; + 85.28 = 2448.567 µs.
/// * video: ρ = 0.31912, θ = 4085.28 µs, rate 20.410915 Mb/s; latency 4085.28 + 3073.491/20.410915
///   = 4235.861 µs; delay + 8528/20.410915 = 4653.676 µs; + 85.28 = 4738.956 µs.
///
/// Counting every higher class's output bucket and every lower frame, whatever the gates, gave
/// video hiCredit = 63.96·8528/100 = 5454.5 bits and best effort's credit video's whole rate.
#[test]
fn inet_showcase_port_by_hand() {
    let text = include_str!("../../../examples/tsn/cbs_tas_inet_showcase.yaml")
        .replace("  - {name: client}\n", "  - {name: client}\n  - {name: camera}\n")
        .replace(
            "  - {from: client, to: switch}\n",
            "  - {from: client, to: switch}\n  - {from: camera, to: switch}\n",
        )
        .replace("class: video, source: client", "class: video, source: camera")
        .replace("period: 200us", "period: 222.222us")
        .replace("period: 400us", "period: 500us");
    let net = load(&text);
    let b = bounds(&net);
    let want = [("best_effort", 2448.567), ("video", 4738.956)];
    for ((name, bound), (want_name, want_us)) in b.iter().zip(want) {
        assert_eq!(name, want_name);
        assert!((bound - want_us).abs() < 1e-3, "{name}: {bound} vs {want_us}");
    }
    for release in [Release::Synchronized, Release::Random] {
        let cfg = SimConfig { duration_ns: 600_000_000, release, ..Default::default() };
        let sim = simulate(&net, &cfg).unwrap();
        for (s, (name, bound)) in sim.flows.iter().zip(&b) {
            assert!(
                s.latency.count > 1000 && s.latency.max_us <= *bound,
                "{name}: {} > {bound}",
                s.latency.max_us
            );
            eprintln!("{name} {release:?}: simulated {} us, bound {bound} us", s.latency.max_us);
        }
    }
}
