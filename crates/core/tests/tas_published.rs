//! Time-aware shaper examples with numbers to check: INET's published showcase reproduced by the
//! simulator, with rtnetlab's bound beside it, and the repository's own gate example by hand.

use rtnetlab_core::sim::{simulate, Release, SimConfig};

mod common;
use common::{bounds, load};

/// INET's time-aware shaping showcase (inet/showcases/tsn/trafficshaping/timeawareshaper, INET
/// 4.6 documentation): the high-priority frames, released at the start of their 20 µs window of
/// a 1 ms cycle, see 2·5.76 + 2·0.05 = 11.62 µs (two transmissions of the 64 B frame with its 8 B
/// PHY header at 100 Mb/s, two propagations), whatever the best-effort load; the best-effort
/// frames never cross into the window (guard band).
///
/// rtnetlab's bound holds for any phase of the releases. By hand: the high-priority gate's
/// usable window is [0, 20 − 5.76] µs (the best-effort gate closes at its start, so no frame of
/// it is on the wire then, and never opens inside it): ρ = 14.24/1000, θ = 985.76 µs, service
/// 1.424 Mb/s after 985.76 µs; the flow's burst at the switch is its one frame (576 bits, alone
/// at client2's port): 985.76 + 576/1.424e6 s = 1390.254 µs, plus client2's port 5.76 µs and two
/// propagations: 1396.114 µs.
#[test]
fn inet_time_aware_shaping_showcase() {
    let net = load(include_str!("../../../examples/tsn/tas_inet_showcase.yaml"));
    let b = bounds(&net);
    assert_eq!(b[0].0, "high_priority");
    assert!((b[0].1 - 1396.114).abs() < 1e-3, "{b:?}");
    assert!(b[1].1.is_finite(), "{b:?}");
    let cfg = SimConfig { duration_ns: 50_000_000, release: Release::Synchronized, ..Default::default() };
    let sim = simulate(&net, &cfg).unwrap();
    let hp = &sim.flows[0];
    assert!(hp.latency.count >= 49, "{}", hp.latency.count);
    // The published 11.62 µs, for every frame.
    assert!((hp.latency.max_us - 11.62).abs() < 0.002, "{}", hp.latency.max_us);
    assert!((hp.latency.min_us - 11.62).abs() < 0.002, "{}", hp.latency.min_us);
    for (s, (_, bound)) in sim.flows.iter().zip(&b) {
        assert!(s.latency.max_us <= *bound, "{}: {} > {bound}", s.flow, s.latency.max_us);
    }
}

/// examples/tsn/tas_gates.yaml with best effort's gate also open in control's window (so open
/// across its start and inside it): now a best-effort frame may be on the wire when control's
/// window opens, and one may start inside it while control is empty. By hand (1 Gb/s, frames of
/// 12304 bits): usable [0 + 12.304, 100 − 12.304] = 75.392 µs, ρ = 0.075392, θ = 1000 − 87.696 +
/// 12.304 = 924.608 µs; service [75.392 Mb/s·(t − θ) − 12304]^+: latency 924.608 + 163.200 =
/// 1087.808 µs, delay 1087.808 + 163.200 = 1251.009 µs, end to end 1251.009 + 12.304 = 1263.313 µs
/// (where the exclusive gates of the example give 1064.911 µs).
#[test]
fn overlapping_gates_block_at_the_window_start() {
    let text = include_str!("../../../examples/tsn/tas_gates.yaml")
        .replace("{open: [control], duration: 100us}", "{open: [control, best_effort], duration: 100us}");
    let net = load(&text);
    let b = bounds(&net);
    let control = b.iter().find(|(n, _)| n == "setpoints").unwrap().1;
    assert!((control - 1263.313).abs() < 1e-3, "{b:?}");
    let sim = simulate(&net, &SimConfig { duration_ns: 50_000_000, ..Default::default() }).unwrap();
    for (s, (_, bound)) in sim.flows.iter().zip(&b) {
        assert!(
            s.latency.count > 0 && s.latency.max_us <= *bound,
            "{}: {} > {bound}",
            s.flow,
            s.latency.max_us
        );
    }
}
