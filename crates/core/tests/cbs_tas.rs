//! Credit-based shapers behind a gate control list (802.1Qav with 802.1Qbv on one port): the
//! repository's example by hand, the simulator within the bound on random gated ports (random and
//! synchronised releases), and the closed-gate credit rule the bound depends on.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtnetlab_core::analysis::{run, Request};
use rtnetlab_core::generate::{random_small, RandomSchedulers};
use rtnetlab_core::model::{
    load_text, parse::Format, validate_spec, GateEntry, GateSchedule, Limits, Network, SchedulerConfig,
};
use rtnetlab_core::sim::{simulate, FrameSizes, Release, SimConfig, Workload};
use rtnetlab_core::units::{DataRate, Duration};
use std::collections::BTreeMap;

fn load(text: &str) -> Network {
    let (net, d) = load_text(text, Format::Yaml, "example.yaml", &Limits::default());
    net.unwrap_or_else(|| panic!("{:?}", d.0))
}

fn bounds(net: &Network) -> Vec<(String, f64)> {
    let r = run(net, &Request { method: "best".into(), ..Default::default() }).unwrap();
    r.flows.iter().map(|f| (net.flows[f.flow].name.clone(), f.delay_us)).collect()
}

/// examples/tsn/cbs_tas.yaml by hand (schedulers::cbs, "Behind a gate control list"). C = 1 Gb/s,
/// no latencies; wire frames 12304 bits (video, backup) and 520·8 = 4160 bits (audio). Gates in a
/// 500 µs cycle: sr_a and sr_b open [0, 250) µs, best effort [250, 500) µs (no gate open across
/// another's window start: ΣB = 0). Each talker's FIFO port: L/C, burst unchanged.
/// * video (A, I = 250 Mb/s): usable [0, 250 − 12.304] µs, ρ = 237.696/500 = 0.475392,
///   θ = 500 − 237.696 = 262.304 µs. No higher class, L_lo = 12304: K = 12304 constant, so
///   hiCredit = I·12304/C = 3076, loCredit = −12304·0.75 = −9228. Rate I·ρ = 118.848 Mb/s, latency
///   262.304 + 12304/118.848 = 365.831 µs; delay + 12304/118.848 = 469.358 µs; end to end
///   + 12.304 = 481.662 µs.
/// * audio (B, I = 50 Mb/s): usable [0, 245.84] µs, ρ = 0.49168, θ = 254.16 µs. Above: A's output
///   (12304, 250 Mb/s); K(0) = 12304 + 12304 = 24608, r' = 250 Mb/s; x* = (24608 + 491.68·254.16)
///   /(491.68 − 250) µs = 618.890 µs; hiCredit = 0.05·(24608 + 250·618.890) = 8966.528, loCredit =
///   −4160·0.95 = −3952. Rate 24.584 Mb/s, latency 254.16 + 12918.528/24.584 = 779.645 µs; delay
///   + 4160/24.584 = 948.861 µs; end to end + 4.16 = 953.021 µs.
/// * backup (best effort, TAS model): usable [250, 487.696] µs, ρ = 0.475392, θ = 262.304 µs,
///   minus A's and B's output buckets (12304 + 12918.528 bits, 300 Mb/s): latency (475.392·262.304
///   + 25222.528)/175.392 = 854.770 µs; delay + 12304/175.392 = 924.921 µs; + 12.304 = 937.225 µs.
#[test]
fn gated_credit_based_example_by_hand() {
    let net = load(include_str!("../../../examples/tsn/cbs_tas.yaml"));
    let b = bounds(&net);
    let want = [("video", 481.662), ("audio", 953.021), ("backup", 937.225)];
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
/// 1.23 ms), other gates opened at random beside it, a random base time.
fn random_gated(rng: &mut ChaCha8Rng) -> SchedulerConfig {
    let mut idle_slopes = BTreeMap::new();
    let mut left = 9.5e6;
    for k in 0..3 {
        if idle_slopes.is_empty() && k == 2 || (k < 2 && rng.gen_bool(0.6)) {
            let r: f64 = rng.gen_range(2e6..=6e6f64).min(left);
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
    let workloads = [Workload::Periodic, Workload::Cbr { load: 1.0 }, Workload::Poisson { load: 1.0 }];
    let mut bounded = 0u64;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for seed in 0..24u64 {
        let mut spec = random_small(3000 + seed, RandomSchedulers::Only("cbs"));
        spec.schedulers.insert("cbs".into(), random_gated(&mut rng));
        let Some(net) = validate_spec(spec).0 else { continue };
        let b = run(&net, &Request { method: "best".into(), ..Default::default() }).unwrap();
        let cfg = SimConfig {
            duration_ns: 200_000_000,
            seed,
            release: if seed % 2 == 0 { Release::Synchronized } else { Release::Random },
            frame_sizes: if seed % 3 == 0 { FrameSizes::Uniform } else { FrameSizes::Max },
            workload: workloads[(seed / 2) as usize % workloads.len()],
            ..Default::default()
        };
        let sim = simulate(&net, &cfg).unwrap();
        for (s, r) in sim.flows.iter().zip(&b.flows) {
            assert!(
                s.latency.max_us <= r.delay_us + 0.01,
                "seed {seed}: {} -> {}: simulated {} us > bound {} us ({})",
                s.flow,
                s.destination,
                s.latency.max_us,
                r.delay_us,
                r.method
            );
            if r.delay_us.is_finite() {
                bounded += s.latency.count;
            }
        }
        for (s, r) in sim.ports.iter().zip(&b.ports) {
            assert!(s.max_backlog_bytes <= r.backlog_bytes + 1.0, "seed {seed}: {}:{}", s.node, s.port);
        }
    }
    eprintln!("{bounded} frames checked against a finite bound");
    assert!(bounded > 1000, "only {bounded} frames checked against a finite bound");
}

/// The example with class A reserving 600 Mb/s: class B's window is usable 245.84 µs of 500
/// (ρ = 0.49168), so the higher class may send at 600 Mb/s > C·ρ = 491.68 Mb/s while B waits, and
/// B's credit has no bound (the gated hiCredit needs r_H + ΣB/cycle < C·ρ): B's bound is infinite
/// with that reason, best effort's (below B) too, and A's stays finite.
#[test]
fn an_unbounded_credit_is_an_infinite_bound_with_its_reason() {
    let text = include_str!("../../../examples/tsn/cbs_tas.yaml").replace("sr_a: 250Mbps", "sr_a: 600Mbps");
    let net = load(&text);
    let r = run(&net, &Request { method: "best".into(), ..Default::default() }).unwrap();
    let row = |name: &str| r.flows.iter().find(|f| net.flows[f.flow].name == name).unwrap();
    assert!(row("video").delay_us.is_finite());
    let audio = row("audio");
    assert!(audio.delay_us.is_infinite());
    let why = audio.reason.as_deref().unwrap_or_default();
    assert!(why.contains("the credit of class 'sr_b' has no bound"), "{why}");
    assert!(row("backup").delay_us.is_infinite());
}
