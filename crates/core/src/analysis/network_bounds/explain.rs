//! Where a flow's bound comes from (`rtnetlab analyze --explain FLOW`): per route, hop by hop,
//! what the port offers (its rate and latency, its queue's load), what the flow brings there
//! (its burst entering the port), the queue's delay bound (TFA's term) and the service the
//! flow is left (SFA's term), and the constant delays added on top; per route, the terms of the
//! method that gave its bound ([`Terms`]).

use super::*;
use serde::Serialize;

/// One hop of a route.
#[derive(Clone, Debug, Serialize)]
pub struct Hop {
    /// `node:port`.
    pub port: String,
    /// The rate the port's scheduler serves at (link or shaper), bit/s, and its latency, µs.
    pub rate_bps: f64,
    pub latency_us: f64,
    /// Long-term rate offered to the flow's queue at the port, and to the whole port, bit/s.
    pub queue_load_bps: f64,
    pub port_load_bps: f64,
    /// The flow's burst entering the port, bits (TFA's arrival bound).
    #[serde(serialize_with = "finite_or_null")]
    pub burst_bits: f64,
    /// The delay bound of the flow's queue at the port, µs (TFA adds these up).
    #[serde(serialize_with = "finite_or_null")]
    pub queue_delay_us: f64,
    /// The service left to the flow at the port when it is a rate-latency curve (SFA convolves
    /// these): rate, bit/s, and latency, µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_over: Option<(f64, f64)>,
    /// Propagation delay of the link after the port, µs.
    pub propagation_us: f64,
    /// Why the hop has no bound, if it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One route (destination, plane) of the flow, with its bound and hops.
#[derive(Clone, Debug, Serialize)]
pub struct RouteExplanation {
    pub destination: String,
    pub plane: String,
    #[serde(serialize_with = "finite_or_null")]
    pub bound_us: f64,
    /// The method that gave the bound.
    pub method: &'static str,
    pub guaranteed: bool,
    pub hops: Vec<Hop>,
    /// Receive latency of the destination, µs.
    pub receive_latency_us: f64,
    /// Σ of the queue delays plus the constant delays: TFA's bound of the route, µs.
    #[serde(serialize_with = "finite_or_null")]
    pub tfa_sum_us: f64,
    /// The terms of the method that gave `bound_us`.
    pub terms: Terms,
}

/// What the method that gave a route's bound computed it from. Every variant's bound is its
/// queueing term plus `constant_us` (propagation delays and the destination's receive latency).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Terms {
    /// TFA (and afdx-naive, which is TFA with WOPANet's rounding): the hops' `queue_delay_us`
    /// added up.
    Tfa {
        #[serde(serialize_with = "finite_or_null")]
        queue_delays_us: f64,
        constant_us: f64,
    },
    /// SFA, SFA-iter and PMOO: the horizontal deviation between the flow's token bucket at its
    /// source (burst, rate) and its end-to-end left-over service, given by its corner points
    /// (µs, bits). SFA's is the convolution of the hops' `left_over` (each but the last
    /// packetized); SFA-iter's is SFA's first pass (its later passes only shrink the cross
    /// traffic); PMOO's is its formula's, per choice of the interferers' buckets, maximised.
    Service {
        burst_bits: f64,
        rate_bps: f64,
        service: Option<Vec<(f64, f64)>>,
        /// The service's rate after its last corner, bit/s.
        service_rate_bps: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        constant_us: f64,
    },
    /// fifo-lp: the linear program over the network unfolded backwards from the route's end.
    FifoLp { program: crate::analysis::fifo_lp::LpTerms, constant_us: f64 },
}

/// The explanation of one flow's bounds.
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    pub flow: String,
    /// The report's method (`best`, `tfa`, ...).
    pub method: String,
    /// The flow's arrival curve at its source: burst, bits, and rate, bit/s (for a staircase
    /// flow, its affine envelope's).
    pub burst_bits: f64,
    pub rate_bps: f64,
    /// A server graph's staircase flow: its staircase, which its first hop takes exactly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub staircase: Option<crate::model::Staircase>,
    pub routes: Vec<RouteExplanation>,
}

/// The explanation of flow `f`'s rows of `report`: the analysis ran with `grouping` and
/// `multiplexing`, and fifo-lp (alone or in `best`) with `lp_effort`.
pub fn explain(
    net: &Network,
    (grouping, multiplexing): (bool, Multiplexing),
    lp_effort: crate::analysis::fifo_lp::Effort,
    report: &AnalysisReport,
    f: FlowId,
) -> Explanation {
    let opt = &Options { method: Candidate::Tfa, grouping, multiplexing };
    let lay = layout(net);
    let (st, _) = tfa(net, &lay, opt);
    let sfa_opt = Options { method: Candidate::Sfa, ..*opt };
    let mut sfa_services_at: Option<Vec<Result<Curve, Unbounded>>> = None;
    let mut pmoo_scratch = pmoo::Scratch::new(&lay);
    let mut others = OtherGroups::new(&st);
    let loads = net.port_loads();
    let flow = &net.flows[f];
    let names = net.names();
    let mut routes = Vec::new();
    for row in report.flows.iter().filter(|r| r.flow == f) {
        let route = flow
            .routes
            .iter()
            .find(|r| r.destination == row.destination && r.plane == row.plane)
            .expect("a row has its route");
        let mut hops = Vec::with_capacity(route.ports.len());
        let mut tfa_sum = net.nodes[route.destination].receive_latency;
        for &p in &route.ports {
            let c = lay.crossing(f, p);
            let q = lay.crossings[c].queue;
            let port = &net.ports[p];
            let queue_load: f64 =
                lay.queues[q].crossings.iter().map(|&x| net.flows[lay.crossings[x].flow].rate).sum();
            let left = left_over(net, &lay, &st, &sfa_opt, c, &mut others);
            // A time-triggered flow's own delay at the port (TFA's route sum takes it too).
            let delay = match lay.time_triggered.get(&(f, p)) {
                Some(&d) => Ok(d),
                None => st.delay[q].clone(),
            };
            tfa_sum += delay.as_ref().map_or(f64::INFINITY, |d| *d) + port.propagation_delay;
            hops.push(Hop {
                port: net.port_label(p),
                rate_bps: lay.models[p].rate,
                latency_us: net.nodes[port.node].technological_latency * 1e6,
                queue_load_bps: queue_load,
                port_load_bps: loads[p],
                burst_bits: st.burst[c],
                queue_delay_us: delay.as_ref().map_or(f64::INFINITY, |d| d * 1e6),
                left_over: left.as_ref().ok().and_then(|l| l.as_rate_latency()).map(|(r, t)| (r, t * 1e6)),
                propagation_us: port.propagation_delay * 1e6,
                reason: delay.err().map(|u| u.to_string()),
            });
        }
        let constant_us = crate::analysis::network_bounds::fixed_delays_us(net, row);
        let last = *route.ports.last().expect("a route has ports");
        let service = |service: Result<Curve, Unbounded>| Terms::Service {
            burst_bits: flow.burst,
            rate_bps: flow.rate,
            service: service.as_ref().ok().map(|c| c.points().iter().map(|pt| (pt.x * 1e6, pt.y)).collect()),
            service_rate_bps: service.as_ref().ok().map(|c| c.tail_slope()),
            reason: service.err().map(|u| u.to_string()),
            constant_us,
        };
        let terms = match RowMethod::of(row.method) {
            RowMethod::FifoLp => Terms::FifoLp {
                program: crate::analysis::fifo_lp::terms(net, lp_effort, f, last),
                constant_us,
            },
            RowMethod::Tfa => Terms::Tfa { queue_delays_us: tfa_sum * 1e6 - constant_us, constant_us },
            RowMethod::Sfa(mux) => {
                let services = sfa_services_at.get_or_insert_with(|| {
                    sfa_services(net, &lay, &st, &Options { multiplexing: mux, ..sfa_opt }, None)
                });
                service(services[lay.crossing(f, last)].clone())
            }
            RowMethod::Pmoo => {
                service(pmoo::pmoo_service(net, &lay, &st, f, &route.ports, &mut pmoo_scratch))
            }
        };
        routes.push(RouteExplanation {
            destination: names.nodes[row.destination].clone(),
            plane: names.planes[row.plane].clone(),
            bound_us: row.delay_us,
            method: row.method,
            guaranteed: row.guaranteed,
            hops,
            receive_latency_us: net.nodes[route.destination].receive_latency * 1e6,
            tfa_sum_us: tfa_sum * 1e6,
            terms,
        });
    }
    Explanation {
        flow: flow.name.clone(),
        method: report.method.clone(),
        burst_bits: flow.burst,
        rate_bps: flow.rate,
        staircase: flow.staircase,
        routes,
    }
}

/// The family of the method a row names (its name as [`Options::name`], fifo-lp's or
/// afdx-naive's), which says which terms explain it.
enum RowMethod {
    Tfa,
    Sfa(Multiplexing),
    Pmoo,
    FifoLp,
}

impl RowMethod {
    fn of(name: &str) -> RowMethod {
        if name == crate::analysis::fifo_lp::NAME {
            return RowMethod::FifoLp;
        }
        if name == "afdx-naive" {
            return RowMethod::Tfa;
        }
        let known = [Candidate::Tfa, Candidate::Sfa, Candidate::SfaIter, Candidate::Pmoo]
            .into_iter()
            .flat_map(|method| {
                [
                    (Multiplexing::Fifo, false),
                    (Multiplexing::Fifo, true),
                    (Multiplexing::Blind, false),
                    (Multiplexing::Blind, true),
                ]
                .map(|(multiplexing, grouping)| Options { method, grouping, multiplexing })
            });
        match known.into_iter().find(|o| o.name() == name) {
            Some(Options { method: Candidate::Tfa, .. }) => RowMethod::Tfa,
            Some(Options { method: Candidate::Sfa | Candidate::SfaIter, multiplexing, .. }) => {
                RowMethod::Sfa(multiplexing)
            }
            Some(Options { method: Candidate::Pmoo, .. }) => RowMethod::Pmoo,
            None => panic!("a row's method '{name}' is one of the engine's names"),
        }
    }
}
