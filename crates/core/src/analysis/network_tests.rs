//! Properties of the network analyses on many random networks: methods must be ordered the way
//! the theory says, or one of them is wrong.

use super::network_bounds::{self, Method, Multiplexing, Options};
use super::results::AnalysisReport;
use super::{afdx_naive, run, Request};
use crate::generate::{random_small, RandomSchedulers};
use crate::model::{validate_spec, Network};

fn net(seed: u64, s: RandomSchedulers) -> Network {
    let (net, diags) = validate_spec(random_small(seed, s));
    net.unwrap_or_else(|| panic!("random network {seed} does not validate: {:?}", diags.0))
}

fn opt(method: Method, grouping: bool, multiplexing: Multiplexing) -> Options {
    Options { method, grouping, multiplexing }
}

/// Asserts a[i] <= b[i] (relative tolerance) for every (flow, destination, plane).
fn no_looser(a: &AnalysisReport, b: &AnalysisReport, what: &str, seed: u64) {
    assert_eq!(a.flows.len(), b.flows.len());
    for (x, y) in a.flows.iter().zip(&b.flows) {
        assert_eq!((&x.flow, &x.destination, &x.plane), (&y.flow, &y.destination, &y.plane));
        assert!(
            x.delay_us <= y.delay_us * (1.0 + 1e-9) + 1e-9,
            "seed {seed}: {what}: {} -> {} ({}): {} ({}) > {} ({})",
            x.flow,
            x.destination,
            x.plane,
            x.delay_us,
            x.method,
            y.delay_us,
            y.method
        );
    }
}

#[test]
fn grouping_never_loosens_a_method() {
    for seed in 0..150 {
        let n = net(seed, RandomSchedulers::Mixed);
        for method in [Method::Tfa, Method::Sfa] {
            for mux in [Multiplexing::Fifo, Multiplexing::Blind] {
                let with = network_bounds::analyze(&n, &opt(method, true, mux));
                let without = network_bounds::analyze(&n, &opt(method, false, mux));
                no_looser(&with, &without, &format!("{method:?}/{mux:?} grouping vs none"), seed);
                for (p, q) in with.ports.iter().zip(&without.ports) {
                    assert!(p.backlog_bytes <= q.backlog_bytes * (1.0 + 1e-9) + 1e-9, "seed {seed} backlog");
                    assert!(p.delay_us <= q.delay_us * (1.0 + 1e-9) + 1e-9, "seed {seed} port delay");
                }
            }
        }
    }
}

#[test]
fn best_is_never_looser_than_any_method() {
    for seed in 0..150 {
        let n = net(seed, RandomSchedulers::Mixed);
        let best = network_bounds::best(&n);
        for method in [Method::Tfa, Method::Sfa] {
            for mux in [Multiplexing::Fifo, Multiplexing::Blind] {
                for grouping in [false, true] {
                    let other = network_bounds::analyze(&n, &opt(method, grouping, mux));
                    no_looser(&best, &other, &format!("best vs {}", other.method), seed);
                }
            }
        }
    }
}

#[test]
fn fifo_tfa_with_grouping_is_never_looser_than_afdx_naive() {
    for seed in 0..150 {
        let n = net(seed, RandomSchedulers::Fifo);
        let naive = afdx_naive::analyze(&n);
        let tfa = network_bounds::analyze(&n, &opt(Method::Tfa, false, Multiplexing::Fifo));
        let grouped = network_bounds::analyze(&n, &opt(Method::Tfa, true, Multiplexing::Fifo));
        no_looser(&grouped, &naive, "tfa+grouping vs afdx-naive", seed);
        // Without grouping TFA is afdx-naive's computation before rounding up to a whole µs.
        for (t, a) in tfa.flows.iter().zip(&naive.flows) {
            assert_eq!(
                (t.delay_us - 1e-6).ceil(),
                a.delay_us,
                "seed {seed}: {} tfa {} naive {}",
                t.flow,
                t.delay_us,
                a.delay_us
            );
        }
    }
}

#[test]
fn an_overloaded_port_gives_infinite_bounds_with_the_reason() {
    let mut spec = random_small(3, RandomSchedulers::Fifo);
    for f in spec.flows.iter_mut() {
        if let crate::model::Traffic::VirtualLink { bag, lmax, lmin, .. } = &mut f.traffic {
            *bag = crate::units::Duration::from_ms(1.0);
            *lmax = crate::units::DataSize::from_bytes(1518.0);
            *lmin = *lmax;
        }
    }
    // Every VL from one end system over a 10 Mb/s link: 16 x 12.3 Mb/s.
    for f in spec.flows.iter_mut() {
        f.source = "ES1".into();
        f.destinations.retain(|d| d.node() != "ES1");
        if f.destinations.is_empty() {
            f.destinations.push(crate::model::Destination::Name("ES2".into()));
        }
    }
    spec.links
        .iter_mut()
        .filter(|l| l.from == "ES1")
        .for_each(|l| l.rate = Some(crate::units::DataRate::from_bps(10e6)));
    let (n, d) = validate_spec(spec);
    let n = n.unwrap_or_else(|| panic!("{:?}", d.0));
    for method in ["best", "tfa", "sfa", "afdx-naive"] {
        let r = run(&n, &Request { method: method.into(), ..Default::default() }).unwrap();
        for f in &r.flows {
            assert!(f.delay_us.is_infinite(), "{method}: {} finite", f.flow);
            assert_eq!(f.status, super::results::Status::Unbounded);
            let why = f.reason.as_deref().unwrap_or_default();
            assert!(why.contains("ES1:"), "{method}: reason '{why}' names no port");
        }
        let json = serde_json::to_value(&r).unwrap();
        assert!(json["flows"][0]["delay_us"].is_null(), "{method}: infinity must be null in JSON");
    }
}
