//! Time-triggered streams: the time-aware shaper's rule for scheduled classes by hand, and what
//! `synthesis::tsn` writes checked by the simulator on random networks (first fit alone: the
//! MILP solver is the front's).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtnetlab_core::analysis::{run, Request};
use rtnetlab_core::model::{self, Diagnostics, Network};
use rtnetlab_core::sim::{simulate, Release, SimConfig};
use rtnetlab_core::synthesis::tsn::{configure, Request as TsnRequest, SolverChoice};
use serde_json::{json, Value};

mod common;
use common::{assert_flows_within, bounds, load};

fn with_offset(offset: &str) -> Network {
    let text = include_str!("../../../examples/tsn/tas_gates.yaml")
        .replace("    cycle: 1ms\n", "    cycle: 1ms\n    scheduled: [control]\n")
        .replace("size: 1518B, class: control,", &format!("size: 1518B, offset: {offset}, class: control,"));
    load(&text)
}

/// examples/tsn/tas_gates.yaml with `control` scheduled: 1 Gb/s, no latencies, control's window
/// [0, 100) µs of a 1 ms cycle, best effort's the rest; `setpoints` (12304 bits, 12.304 µs) from
/// plc's FIFO port, alone there. Released at 0 it reaches the bridge at 12.304 µs and ends there
/// at 24.608 µs, inside control's window with best effort's gate closed: sent on arrival, its
/// bound is its chain, 2·12.304 = 24.608 µs (the gated model alone gives 1064.911 µs, the wait
/// for the next window from any phase). Released at 80 µs it would end at 104.608 µs, past the
/// window: the rule does not hold and the gated model's bound stands.
#[test]
fn time_triggered_rule_by_hand() {
    let net = with_offset("0us");
    let b = bounds(&net);
    assert!((b[0].1 - 24.608).abs() < 1e-6, "{:?}", b[0]);
    let tt = rtnetlab_core::schedulers::tas::time_triggered(&net);
    assert!(tt.refused.is_empty(), "{:?}", tt.refused);
    // Synchronised releases keep a time-triggered flow's offset (its bound assumes it).
    for release in [Release::Random, Release::Synchronized] {
        let sim =
            simulate(&net, &SimConfig { duration_ns: 20_000_000, release, ..Default::default() }).unwrap();
        assert_eq!(sim.flows[0].flow, "setpoints");
        let l = &sim.flows[0].latency;
        assert!((l.min_us - 24.608).abs() < 1e-6 && (l.max_us - 24.608).abs() < 1e-6, "{release:?}: {l:?}");
    }

    let late = with_offset("80us");
    let tt = rtnetlab_core::schedulers::tas::time_triggered(&late);
    assert_eq!(tt.refused.len(), 1, "{:?}", tt.refused);
    assert!(tt.refused[0].1.contains("may find its gate closed"), "{}", tt.refused[0].1);
    assert!((bounds(&late)[0].1 - 1064.911).abs() < 1e-3);
}

/// The same stream released at 900 µs reaches the bridge at 912.304 µs, control's gate closed
/// (best effort's open until the cycle ends): it is held until control's window opens at 1 ms and
/// sent then, alone in its queue. The rule follows it through the gate: a hold of 87.696 µs at
/// the bridge, its bound 24.608 + 87.696 = 112.304 µs, which the simulator shows exactly.
#[test]
fn time_triggered_rule_holds_a_frame_for_its_window() {
    let net = with_offset("900us");
    let tt = rtnetlab_core::schedulers::tas::time_triggered(&net);
    assert!(tt.refused.is_empty(), "{:?}", tt.refused);
    let held: i64 = tt.wait.values().sum();
    assert_eq!(held, 87_696);
    let b = bounds(&net);
    assert!((b[0].1 - 112.304).abs() < 1e-6, "{:?}", b[0]);
    let sim = simulate(&net, &SimConfig { duration_ns: 20_000_000, ..Default::default() }).unwrap();
    let l = &sim.flows[0].latency;
    assert!((l.min_us - 112.304).abs() < 1e-6 && (l.max_us - 112.304).abs() < 1e-6, "{l:?}");
}

/// A random line of switches with talkers and listeners, streams of one scheduled class and best
/// effort, every port behind the list-less `g` scheduler.
fn random_doc(rng: &mut ChaCha8Rng, k: usize) -> Value {
    let n_sw = rng.gen_range(2..=4);
    let switches: Vec<String> = (0..n_sw).map(|i| format!("s{i}")).collect();
    let ends: Vec<String> = (0..2 * n_sw).map(|i| format!("e{i}")).collect();
    let mut links: Vec<Value> = switches.windows(2).map(|w| json!({"from": w[0], "to": w[1]})).collect();
    links.extend(ends.iter().enumerate().map(|(i, e)| json!({"from": e, "to": switches[i / 2]})));
    let mut flows = Vec::new();
    let pick = |rng: &mut ChaCha8Rng| {
        let a = rng.gen_range(0..ends.len());
        let b = (a + rng.gen_range(1..ends.len())) % ends.len();
        (ends[a].clone(), ends[b].clone())
    };
    for i in 0..rng.gen_range(2..10) {
        let (a, b) = pick(rng);
        let period = [250, 500, 1000][rng.gen_range(0..3)];
        flows.push(json!({"name": format!("tt{i}"), "type": "periodic", "period": format!("{period}us"),
            "size": format!("{}B", rng.gen_range(64..1500)), "class": "tt", "source": a,
            "destinations": [b], "deadline": "1ms"}));
    }
    for i in 0..rng.gen_range(1..4) {
        let (a, b) = pick(rng);
        flows.push(json!({"name": format!("be{i}"), "type": "periodic", "period": "300us", "size": "1500B",
            "class": "be", "source": a, "destinations": [b]}));
    }
    json!({
        "name": format!("random-{k}"),
        "defaults": {"link_rate": "1Gbps", "technological_latency": format!("{}ns", rng.gen_range(0..3000))},
        "classes": [{"name": "tt", "priority": 0}, {"name": "be", "priority": 1}],
        "schedulers": {"g": {"kind": "tas", "scheduled": ["tt"], "sync_error": format!("{}ns", rng.gen_range(0..800))}},
        "end_systems": ends.iter().map(|e| json!({"name": e, "scheduler": "g"})).collect::<Vec<_>>(),
        "switches": switches.iter().map(|s| json!({"name": s, "scheduler": "g"})).collect::<Vec<_>>(),
        "links": links,
        "flows": flows,
    })
}

/// Whatever first fit schedules holds in the simulator: every stream frame takes exactly its
/// chain (it never waits), every simulated delay is within its bound, and the analysis confirms
/// every stream by the time-triggered rule.
#[test]
fn synthesised_random_networks_hold_in_simulation() {
    let mut rng = ChaCha8Rng::seed_from_u64(2016);
    let req = TsnRequest { solver: SolverChoice::Heuristic, ..Default::default() };
    let (mut feasible, mut frames) = (0, 0);
    for k in 0..16 {
        let doc = random_doc(&mut rng, k);
        let report = configure(doc, &req, None).expect("valid description");
        if !report.feasible {
            assert!(!report.reasons.is_empty());
            continue;
        }
        feasible += 1;
        assert!(
            report.unconfirmed.is_empty() && report.misses.is_empty(),
            "{k}: {:?} {:?}",
            report.unconfirmed,
            report.misses
        );
        let mut d = Diagnostics::default();
        let net = model::load_value(report.document.clone().unwrap(), &mut d).expect("valid output");
        let analysis =
            run(&net, &Request { method: rtnetlab_core::analysis::Method::Best, ..Default::default() })
                .unwrap();
        let sim = simulate(
            &net,
            &SimConfig { duration_ns: 100_000_000, release: Release::Random, ..Default::default() },
        )
        .unwrap();
        assert_flows_within(&sim, &analysis, &format!("network {k}"));
        for s in &report.streams {
            let row = sim.flows.iter().find(|r| r.flow == s.flow).unwrap();
            frames += row.latency.count;
            assert!(
                row.latency.count > 0
                    && (row.latency.min_us - s.chain_us).abs() < 1e-3
                    && (row.latency.max_us - s.chain_us).abs() < 1e-3,
                "network {k}, {}: {}..{} us, chain {} us",
                s.flow,
                row.latency.min_us,
                row.latency.max_us,
                s.chain_us
            );
        }
    }
    assert!(feasible >= 10 && frames > 10_000, "{feasible} feasible networks, {frames} stream frames");
}
