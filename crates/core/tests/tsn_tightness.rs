//! Tightness of the TSN shapers' bounds on small networks: the simulator with synchronised
//! releases reaches a delay derived by hand as the worst case of the configuration, and the
//! bound is compared with it (docs/TSN.md reports the ratios).

use rtnetlab_core::analysis::{run, Request};
use rtnetlab_core::model::Network;
use rtnetlab_core::sim::{simulate, FlowScenario, Release, Scenario, SimConfig};

mod common;
use common::load;

/// (flow, bound, simulated worst case with synchronised releases), in µs.
fn bound_and_simulated(net: &Network) -> Vec<(String, f64, f64)> {
    bound_and_simulated_from(net, &[])
}

/// The same with the first releases given per flow (ns; the others at 0).
fn bound_and_simulated_from(net: &Network, offsets: &[(&str, i64)]) -> Vec<(String, f64, f64)> {
    let r =
        run(net, &Request { method: rtnetlab_core::analysis::Method::Best, ..Default::default() }).unwrap();
    let duration_ns = 20_000_000;
    let scenario = (!offsets.is_empty()).then(|| Scenario {
        duration_ns,
        flows: offsets
            .iter()
            .map(|&(flow, offset_ns)| FlowScenario { flow: flow.into(), offset_ns, ..Default::default() })
            .collect(),
        ..Default::default()
    });
    let cfg = SimConfig { duration_ns, release: Release::Synchronized, scenario, ..Default::default() };
    let sim = simulate(net, &cfg).unwrap();
    r.flows
        .iter()
        .zip(&sim.flows)
        .map(|(b, s)| (net.flows[b.flow].name.clone(), b.delay_us, s.latency.max_us))
        .collect()
}

const CBS_BURST: &str = "
name: cbs-burst
description: four class-A talkers released together behind one credit-based port
defaults: {link_rate: 1Gbps, technological_latency: 0us, interframe_overhead: 20B}
classes:
  - {name: sr_a, priority: 0}
  - {name: best_effort, priority: 1}
schedulers:
  avb: {kind: cbs, idle_slopes: {sr_a: 500Mbps}}
end_systems: [{name: t1}, {name: t2}, {name: t3}, {name: t4}, {name: bulk}, {name: listener}]
switches: [{name: bridge, scheduler: avb}]
links:
  - {from: t1, to: bridge}
  - {from: t2, to: bridge}
  - {from: t3, to: bridge}
  - {from: t4, to: bridge}
  - {from: bulk, to: bridge}
  - {from: bridge, to: listener}
flows:
  - {name: a1, type: periodic, period: 125us, size: 1518B, class: sr_a, source: t1, destinations: [listener]}
  - {name: a2, type: periodic, period: 125us, size: 1518B, class: sr_a, source: t2, destinations: [listener]}
  - {name: a3, type: periodic, period: 125us, size: 1518B, class: sr_a, source: t3, destinations: [listener]}
  - {name: a4, type: periodic, period: 125us, size: 1518B, class: sr_a, source: t4, destinations: [listener]}
  - {name: backup, type: periodic, period: 1ms, size: 1518B, class: best_effort, source: bulk,
     destinations: [listener]}
";

/// Credit-based shaper: four class-A frames (12304 bits each on the wire, 12.304 µs) reach the
/// bridge together with a best-effort frame, which goes first. By hand, from their arrival at
/// 12.304 µs: best effort until 24.608 (A's credit grows to 500/1000·12304 = 6152 = hiCredit);
/// A's first frame to 36.912 (credit 0), second to 49.216 (−6152), then 12.304 µs to recover
/// at 500 Mb/s before each of the last two: the fourth ends at 98.432 µs, the worst case of the
/// class (every later period repeats it). Bound: hiCredit 6152, loCredit −6152, rate 500 Mb/s
/// after 24.608 µs; the class's burst 4·12304 = 49216 bits: 24.608 + 98.432 = 123.040 µs, + the
/// talker's 12.304 = 135.344 µs. Ratio 98.432/135.344 = 0.727.
#[test]
fn credit_based_burst_of_four() {
    let rows = bound_and_simulated(&load(CBS_BURST));
    let a4 = rows.iter().find(|r| r.0 == "a4").unwrap();
    assert!((a4.1 - 135.344).abs() < 1e-3, "{a4:?}");
    assert!((a4.2 - 98.432).abs() < 1e-3, "{a4:?}");
    for (name, bound, sim) in &rows {
        assert!(sim <= bound, "{name}: {sim} > {bound}");
    }
}

/// Time-aware shaper, examples/tsn/tas_gates.yaml, each flow released so that its frame reaches
/// the bridge (12.304 µs after its release) 1 ns past the usable part of its window, where it no
/// longer fits before its gate closes: control at 75.393 µs (arrives 87.697, waits for the next
/// window at 1000 and ends at 1012.304), best effort at 975.393 µs (arrives 987.697, waits until
/// 1100, ends 1112.304). By hand, the worst case of each: 936.911 µs and 136.911 µs (no frame can
/// wait longer than the closed time after its usable part plus its own transmission; the other
/// class's frames never share its window). Bounds (network_tests.rs, by hand) 1064.911 and
/// 138.469 µs: ratios 0.880 and 0.989. Released together at 0 instead, they take 24.608 and
/// 112.304 µs.
#[test]
fn time_aware_frames_just_past_their_usable_windows() {
    let net = load(include_str!("../../../examples/tsn/tas_gates.yaml"));
    let phased = [("setpoints", 75_393), ("logs", 975_393)];
    for (offsets, want) in [(&[][..], [24.608, 112.304]), (&phased[..], [936.911, 136.911])] {
        let rows = bound_and_simulated_from(&net, offsets);
        for ((name, bound, sim), (want_bound, want_sim)) in
            rows.iter().zip([1064.911, 138.469].into_iter().zip(want))
        {
            assert!((bound - want_bound).abs() < 1e-3, "{name}: bound {bound}");
            assert!((sim - want_sim).abs() < 1e-3, "{name}: simulated {sim} vs {want_sim}");
        }
    }
}
