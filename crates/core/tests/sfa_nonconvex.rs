//! SFA convolves left-over services along a route, which needs them convex. Arbitration tables and
//! grouped cross traffic give non-convex ones; they are replaced by their convex minorant (a lower
//! bound of a service curve is one). Before, `best` panicked on 1.5 % of random networks with
//! per-port schedulers (found by the soundness campaign, `rtnetlab experiment soundness`).

use rtnetlab_core::analysis::{run, Request};
use rtnetlab_core::generate::{random_small, RandomSchedulers};
use rtnetlab_core::model::{load_text, parse::Format, validate_spec, Limits, Network};
use rtnetlab_core::sim::{simulate, FrameSizes, Release, SimConfig};

fn check(net: &Network, what: &str, seed: u64) -> usize {
    let best = run(net, &Request { method: rtnetlab_core::analysis::Method::Best, ..Default::default() })
        .unwrap_or_else(|e| panic!("{what}: best failed: {e}"));
    let tfa =
        run(net, &Request { method: rtnetlab_core::analysis::Method::Tfa, ..Default::default() }).unwrap();
    for (b, t) in best.flows.iter().zip(&tfa.flows) {
        assert!(b.delay_us <= t.delay_us, "{what}: best {} > tfa {}", b.delay_us, t.delay_us);
    }
    let release = if seed.is_multiple_of(2) { Release::Synchronized } else { Release::Random };
    let cfg = SimConfig {
        duration_ns: 100_000_000,
        seed,
        release,
        frame_sizes: FrameSizes::Max,
        ..Default::default()
    };
    let sim = simulate(net, &cfg).unwrap();
    for (s, b) in sim.flows.iter().zip(&best.flows) {
        assert!(
            s.latency.max_us <= b.delay_us,
            "{what}: {} -> {}: simulated {} us > best {} us ({})",
            s.flow,
            s.destination,
            s.latency.max_us,
            b.delay_us,
            b.method
        );
    }
    best.flows.iter().filter(|b| b.delay_us.is_finite()).count()
}

#[test]
fn the_campaigns_reproducer_is_bounded() {
    let text = include_str!("data/table_left_over.yaml");
    let (net, diags) = load_text(text, Format::Yaml, "table_left_over.yaml", &Limits::default());
    let net = net.unwrap_or_else(|| panic!("{diags:?}"));
    // Its five routes all get a finite bound (TFA's are finite: the ports are not overloaded).
    assert_eq!(check(&net, "reproducer", 0), 5);
}

#[test]
fn best_never_fails_on_random_networks_with_any_scheduler() {
    let mut bounded = 0;
    for seed in 0..60u64 {
        let spec = random_small(7_000 + seed, RandomSchedulers::Any);
        let Some(net) = validate_spec(spec).0 else { continue };
        bounded += check(&net, &format!("seed {seed}"), seed);
    }
    assert!(bounded > 100, "only {bounded} finite bounds");
}
