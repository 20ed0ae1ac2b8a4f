//! Small cases from other tools and textbooks (`shared/oracles/README.md`, items 1 and 2),
//! through the analysis users run: server graphs written as descriptions.

use super::network_bounds::{self, Candidate, Multiplexing, Options, ALL_FLOWS_UPSTREAM};
use super::{run, Request};
use crate::curves::{deconvolve, horizontal_deviation, vertical_deviation, Curve};
use crate::model::{load_network, Network};
use serde_json::json;

fn approx(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn assert_approx(got: f64, expected: f64, what: &str) {
    assert!(approx(got, expected), "{what}: got {got}, expected {expected}");
}

/// A server graph: servers (name, rate, latency), flows (name, burst, rate, path).
fn graph(servers: &[(&str, f64, f64)], flows: &[(&str, f64, f64, &[&str])]) -> Network {
    let doc = json!({"name": "g", "server_graph": {
        "servers": servers.iter().map(|&(n, r, t)| json!({"name": n, "rate": r, "latency": t})).collect::<Vec<_>>(),
        "flows": flows.iter().map(|&(n, b, r, p)| json!({"name": n, "burst": b, "rate": r, "path": p})).collect::<Vec<_>>(),
    }});
    let (n, d) = load_network(&doc.to_string());
    n.unwrap_or_else(|| panic!("{:?}", d.0))
}

/// NCBounds (Nokia) doctest network: flows (σ, ρ), servers (rate, latency).
fn ncbounds_toy() -> Network {
    graph(
        &[("server0", 4.0, 2.0), ("server1", 5.0, 3.0), ("server2", 7.0, 1.0)],
        &[
            ("flow0", 1.0, 2.0, &["server0", "server1", "server2"]),
            ("flow1", 2.0, 3.0, &["server1", "server2"]),
            ("flow2", 1.0, 1.0, &["server0", "server2"]),
        ],
    )
}

const SFA_BLIND: Options =
    Options { method: Candidate::Sfa, grouping: false, multiplexing: Multiplexing::Blind };

#[test]
fn ncbounds_toy_blind_sfa() {
    // NCBounds counts every flow upstream, the flow of interest included.
    let g = ncbounds_toy();
    ALL_FLOWS_UPSTREAM.with(|c| c.set(true));
    let residuals = network_bounds::sfa_left_overs(&g, &SFA_BLIND, 0);
    let report = network_bounds::analyze(&g, &SFA_BLIND);
    ALL_FLOWS_UPSTREAM.with(|c| c.set(false));
    // Residual service of flow 0: 3(t−3)+, 2(t−8.5)+, 3(t−12.1667)+.
    let expected = [(3.0, 3.0), (2.0, 8.5), (3.0, 12.0 + 1.0 / 6.0)];
    let residuals: Vec<Curve> = residuals.into_iter().map(|r| r.unwrap()).collect();
    for (i, (c, &(r, t))) in residuals.iter().zip(&expected).enumerate() {
        assert_approx(c.tail_slope(), r, &format!("residual rate at server {i}"));
        assert_approx(c.upper_inverse(0.0).unwrap(), t, &format!("residual latency at server {i}"));
        assert_approx(c.value(t + 1.0), r, &format!("residual shape at server {i}"));
    }
    // Arrival curve of flow 0 entering servers 0, 1, 2 (its own, deconvolved by the left-over
    // service before): 1+2t, 7+2t, 24+2t.
    let alpha = Curve::token_bucket(2.0, 1.0);
    let mut before: Option<Curve> = None;
    for (i, b) in [1.0, 7.0, 24.0].into_iter().enumerate() {
        let a = before.as_ref().map_or(alpha.clone(), |s| deconvolve(&alpha, s).unwrap());
        assert_approx(a.burst(), b, &format!("burst entering server {i}"));
        assert_approx(a.tail_slope(), 2.0, &format!("rate entering server {i}"));
        before = Some(match before {
            None => residuals[i].clone(),
            Some(s) => crate::curves::convolve_convex(&s, &residuals[i]),
        });
    }
    let f0 = &report.flows[0];
    assert_approx(f0.delay_us / 1e6, 24.0 + 1.0 / 6.0, "SFA delay of flow 0");
    assert_approx(f0.backlog_bytes * 8.0, 48.0 + 1.0 / 3.0, "SFA backlog of flow 0");
}

#[test]
fn ncbounds_toy_dnc_semantics_differ() {
    // With DNC's treatment of the flow of interest (lowest priority on its own turns), flow 1's
    // burst at server 2 ignores flow 0 at server 1: 2 + 3·3 = 11 instead of 24, and the bound
    // drops to 3 + 8.5 + (7 + 11 + 5.5)/3 + 1/2. What `rtnetlab analyze --method sfa --blind`
    // gives on a server graph.
    let r = run(
        &ncbounds_toy(),
        &Request { method: crate::analysis::Method::Sfa, grouping: false, blind: true, ..Default::default() },
    )
    .unwrap();
    assert_approx(r.flows[0].delay_us / 1e6, 3.0 + 8.5 + 23.5 / 3.0 + 0.5, "DNC-style SFA delay of flow 0");
}

#[test]
fn ncbounds_single_node() {
    // (σ, ρ) = (2, 2) through (rate, latency) = (5, 3): delay 3.4, backlog 8, output 8 + 2t.
    let a = Curve::token_bucket(2.0, 2.0);
    let b = Curve::rate_latency(5.0, 3.0);
    assert_approx(horizontal_deviation(&a, &b).unwrap(), 3.4, "delay");
    assert_approx(vertical_deviation(&a, &b).unwrap(), 8.0, "backlog");
    assert_eq!(deconvolve(&a, &b).unwrap(), Curve::token_bucket(2.0, 8.0));
    // The same as a described server graph, every method.
    let g = graph(&[("node", 5.0, 3.0)], &[("f", 2.0, 2.0, &["node"])]);
    for method in ["tfa", "sfa", "best"] {
        for blind in [false, true] {
            let r = run(
                &g,
                &Request {
                    method: method.parse().expect("a method name"),
                    grouping: false,
                    blind,
                    ..Default::default()
                },
            )
            .unwrap();
            assert_approx(r.flows[0].delay_us / 1e6, 3.4, &format!("{method} blind={blind}"));
            assert_approx(r.flows[0].backlog_bytes * 8.0, 8.0, &format!("{method} blind={blind}"));
        }
    }
    // (5, 3) through (2, 2): infinite, with the reason naming the server and both rates.
    let a = Curve::token_bucket(3.0, 5.0);
    let b = Curve::rate_latency(2.0, 2.0);
    assert!(horizontal_deviation(&a, &b).is_err());
    assert!(vertical_deviation(&a, &b).is_err());
    assert!(deconvolve(&a, &b).is_err());
    let g = graph(&[("node", 2.0, 2.0)], &[("f", 5.0, 3.0, &["node"])]);
    for method in ["tfa", "sfa", "best"] {
        for blind in [false, true] {
            let r = run(
                &g,
                &Request {
                    method: method.parse().expect("a method name"),
                    grouping: false,
                    blind,
                    ..Default::default()
                },
            )
            .unwrap();
            let f = &r.flows[0];
            let reason = f.reason.as_deref().unwrap_or_else(|| panic!("{method}: finite delay"));
            assert!(f.delay_us.is_infinite() && f.backlog_bytes.is_infinite(), "{method}");
            assert!(reason.contains("node:out") && reason.contains("offered 3 > link rate 2"), "{reason}");
        }
    }
}

#[test]
fn overloaded_cross_traffic_names_the_server() {
    // Two flows of rate 6 into a rate-10 server: every bound of the flow is infinite.
    let g = graph(
        &[("sw1.out3", 10.0, 1.0), ("sw2.out1", 20.0, 1.0)],
        &[("a", 1.0, 6.0, &["sw1.out3", "sw2.out1"]), ("b", 1.0, 6.0, &["sw1.out3"])],
    );
    for method in ["tfa", "sfa", "best"] {
        let r = run(&g, &Request { method: method.parse().expect("a method name"), ..Default::default() })
            .unwrap();
        let reason = r.flows[0].reason.as_deref().unwrap_or_else(|| panic!("{method}: finite delay"));
        assert!(reason.contains("sw1.out3"), "{method}: {reason}");
    }
}

/// Le Boudec & Thiran, *Network Calculus*, §1.4.1: ten ATM connections, each GCRA(25, 4) in cell
/// slots, into a node with `β_{1,8}`.
#[test]
fn le_boudec_thiran_atm_staircase() {
    let alpha = Curve::staircase(25.0, 4.0, 1.0, 8).scale(10.0);
    let beta = Curve::rate_latency(1.0, 8.0);
    assert_approx(vertical_deviation(&alpha, &beta).unwrap(), 10.0, "buffer (cells)");
    assert_approx(horizontal_deviation(&alpha, &beta).unwrap(), 18.0, "delay (slots)");
}

/// The same as a described server graph, ten flows of `staircase: {period: 25, tolerance: 4,
/// size: 1}`: the methods that take the staircases exactly where they enter give 18 slots and
/// 10 cells; every method's delays are at least 18 (PMOO takes the affine envelopes: left-over
/// rate 1 − 9·0.04 = 0.64, latency (8 + 9·1.16)/0.64 = 28.8125, delay 28.8125 + 1.16/0.64).
#[test]
fn le_boudec_thiran_atm_staircase_server_graph() {
    let atm = |n: usize, tolerance: f64| {
        let flows: Vec<_> = (0..n)
            .map(|i| {
                json!({"name": format!("c{i}"), "path": ["node"],
                       "staircase": {"period": 25.0, "tolerance": tolerance, "size": 1.0}})
            })
            .collect();
        let doc = json!({"name": "atm", "server_graph": {
            "servers": [{"name": "node", "rate": 1.0, "latency": 8.0}], "flows": flows}});
        let (net, d) = load_network(&doc.to_string());
        net.unwrap_or_else(|| panic!("{:?}", d.0))
    };
    let net = atm(10, 4.0);
    assert_eq!(net.flows[0].burst, 1.16);
    let bounds = |net: &Network, method: &str| {
        let r = run(net, &Request { method: method.parse().expect("a method name"), ..Default::default() })
            .unwrap();
        (r.flows[0].delay_us / 1e6, r.flows[0].backlog_bytes * 8.0, r.notes)
    };
    for method in ["tfa", "best"] {
        let (d, b, notes) = bounds(&net, method);
        assert_approx(d, 18.0, &format!("{method}: delay (slots)"));
        assert_approx(b, 10.0, &format!("{method}: backlog (cells)"));
        assert!(
            notes.iter().any(|n| n.contains("staircase flows ('c0', 'c1', 'c2', 'c3', 'c4' and 5 more)")),
            "{notes:?}"
        );
    }
    // SFA's backlog is the flow's own: one cell at most, exactly.
    for method in ["sfa", "sfa-iter"] {
        let (d, b, _) = bounds(&net, method);
        assert!(d >= 18.0 - 1e-9 && b >= 1.0 - 1e-9, "{method}: {d}, {b}");
    }
    let (d, _, notes) = bounds(&net, "pmoo");
    assert_approx(d, 30.625, "pmoo: delay of the affine envelopes");
    assert!(notes.iter().any(|n| n.starts_with("pmoo takes token buckets")), "{notes:?}");
    // Variant: tolerance 29 (more than a period): ⌈(t + 29)/25⌉ is 2 cells per connection at 0+,
    // one more at 21 and at 46. 20 cells at 0+ are served by 8 + 20 = 28; 30 at 21 by 38 (17
    // after); 40 at 46 by 48 (2 after): delay 28. Backlog: 20 at 0+, 30 − 13 = 17 at 21, 40 − 38
    // at 46: 20. (The affine envelope, burst 2.16 per connection, would give 8 + 21.6 = 29.6.)
    let (d, b, _) = bounds(&atm(10, 29.0), "tfa");
    assert_approx(d, 28.0, "tolerance 29: delay (slots)");
    assert_approx(b, 20.0, "tolerance 29: backlog (cells)");
}

#[test]
fn le_boudec_thiran_atm_affine_delay() {
    // Affine approximation γ_{0.04, 1.16} per connection: delay T + b/R = 8 + 11.6 = 19.6, also
    // as ten flows of a described server graph.
    let alpha = Curve::token_bucket(0.04, 1.16).scale(10.0);
    let beta = Curve::rate_latency(1.0, 8.0);
    assert_approx(horizontal_deviation(&alpha, &beta).unwrap(), 19.6, "delay (slots)");
    let names: Vec<String> = (0..10).map(|i| format!("c{i}")).collect();
    let flows: Vec<(&str, f64, f64, &[&str])> =
        names.iter().map(|n| (n.as_str(), 1.16, 0.04, &["node"][..])).collect();
    let r = run(
        &graph(&[("node", 1.0, 8.0)], &flows),
        &Request { method: crate::analysis::Method::Tfa, ..Default::default() },
    )
    .unwrap();
    assert_approx(r.flows[0].delay_us / 1e6, 19.6, "delay (slots), tfa");
}

#[test]
fn le_boudec_thiran_atm_affine_buffer() {
    // The oracle's 11.6 cells is the buffer of the rate-1 queue when the 8-slot latency is a
    // pure delay element holding no cell (β_{1,8} = λ_1 ⊗ δ_8, backlog counted before δ_8):
    // sup (11.6 + 0.4 t − t) = 11.6. The vertical deviation against β_{1,8} as a whole would be
    // 11.6 + 0.4·8 = 14.8 (Theorem 1.4.1), asserted too so that either reading is explicit.
    let alpha = Curve::token_bucket(0.04, 1.16).scale(10.0);
    assert_approx(vertical_deviation(&alpha, &Curve::rate_latency(1.0, 0.0)).unwrap(), 11.6, "rate queue");
    assert_approx(vertical_deviation(&alpha, &Curve::rate_latency(1.0, 8.0)).unwrap(), 14.8, "whole node");
    // With the staircase both readings give the same 10 cells.
    let stair = Curve::staircase(25.0, 4.0, 1.0, 8).scale(10.0);
    assert_approx(vertical_deviation(&stair, &Curve::rate_latency(1.0, 0.0)).unwrap(), 10.0, "rate queue");
}
