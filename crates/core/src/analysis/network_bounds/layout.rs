//! The analysis' view of a network: each flow's crossings of egress ports, each port's
//! queues (one per priority level, or one), the port's service model, in one flat layout.

use super::*;

/// One flow crossing one port (once, even for multicast).
pub(super) struct Crossing {
    pub(super) flow: FlowId,
    pub(super) port: PortId,
    pub(super) upstream: Option<usize>,
    pub(super) queue: usize,
}

/// One FIFO queue of one port: the whole port (FIFO) or one priority level.
pub(super) struct Queue {
    /// Priority level (lower is served first); `None` for a FIFO port.
    pub(super) priority: Option<u32>,
    pub(super) crossings: Vec<usize>,
}

/// How an egress port shares its link between its queues: its discipline's service model
/// ([`schedulers::Service`]) says which.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sharing {
    /// One FIFO queue.
    Fifo,
    /// One FIFO queue per priority level.
    StaticPriority,
    /// One FIFO queue per class, each with the latency-rate guarantee of its share.
    ClassShares,
    /// One FIFO queue per priority level, the shaped classes' behind their credit-based shapers.
    CreditBased,
    /// One FIFO queue per priority level behind its gate.
    TimeAware,
    /// One FIFO queue per priority level, the regulated classes' behind interleaved regulators.
    Asynchronous,
}

/// The service model of one egress port: the rate its scheduler can count on (the link rate, or
/// a shaper's rate) and how it shares it.
#[derive(Clone, Debug)]
pub(super) struct PortModel {
    pub(super) rate: f64,
    pub(super) sharing: Sharing,
}

/// The model of port `p`, or why this analysis cannot bound it.
pub(super) fn port_model(net: &Network, p: PortId, flows: &[FlowId]) -> Result<PortModel, String> {
    let port = &net.ports[p];
    let service = schedulers::discipline(&port.discipline).expect("a port's discipline is no shaper");
    let sharing = match service.service() {
        schedulers::Service::Fifo => Sharing::Fifo,
        schedulers::Service::StaticPriority => Sharing::StaticPriority,
        schedulers::Service::PerClass(_) => Sharing::ClassShares,
        schedulers::Service::CreditBased(_) => Sharing::CreditBased,
        schedulers::Service::TimeAware(_) => Sharing::TimeAware,
        schedulers::Service::Asynchronous(_) => Sharing::Asynchronous,
    };
    let rate = match port.shaper {
        None => port.rate,
        Some(shaper) => {
            let largest = flows.iter().map(|&f| net.flows[f].max_frame_wire).fold(0.0, f64::max);
            if shaper.burst < largest {
                return Err(format!(
                    "{}: the shaper's burst ({}B) is smaller than the largest frame on the wire ({}B)",
                    net.port_label(p),
                    shaper.burst / 8.0,
                    largest / 8.0
                ));
            }
            crate::schedulers::token_bucket::shaped_rate(port.rate, shaper.rate)
        }
    };
    Ok(PortModel { rate, sharing })
}

/// Whether every port carrying traffic has a service model here, or the first reason it has not.
pub fn applies(net: &Network) -> Result<(), String> {
    let per_port = net.flows_per_port();
    for (p, flows) in per_port.iter().enumerate() {
        if !flows.is_empty() {
            port_model(net, p, flows)?;
        }
    }
    Ok(())
}

/// The structure shared by TFA and SFA: crossings and queues.
pub(super) struct Layout {
    pub(super) crossings: Vec<Crossing>,
    pub(super) queues: Vec<Queue>,
    /// Queues of each port, highest priority first.
    pub(super) port_queues: Vec<Vec<usize>>,
    /// Service model of each port.
    pub(super) models: Vec<PortModel>,
    /// For each flow, its crossing at each port it visits.
    pub(super) flow_crossings: Vec<Vec<(PortId, usize)>>,
    /// Whether each crossing's flow passes an interleaved regulator at its port
    /// ([`schedulers::ats`]): it then enters its queue with its own token bucket.
    pub(super) regulated: Vec<bool>,
    /// The delays of time-triggered flows, per (flow, port): their frames never wait
    /// ([`schedulers::tas::time_triggered`]).
    pub(super) time_triggered: std::collections::HashMap<(FlowId, PortId), f64>,
}

impl Layout {
    pub(super) fn crossing(&self, f: FlowId, p: PortId) -> usize {
        self.flow_crossings[f]
            .iter()
            .find(|(q, _)| *q == p)
            .expect("a flow crosses the ports of its routes")
            .1
    }
}

pub(super) fn layout(net: &Network) -> Layout {
    let per_port = net.flows_per_port();
    let models: Vec<PortModel> = (0..net.ports.len())
        .map(|p| {
            port_model(net, p, &per_port[p])
                .unwrap_or(PortModel { rate: net.ports[p].rate, sharing: Sharing::Fifo })
        })
        .collect();
    let mut lay = Layout {
        crossings: Vec::new(),
        queues: Vec::new(),
        port_queues: vec![Vec::new(); net.ports.len()],
        models,
        flow_crossings: Vec::with_capacity(net.flows.len()),
        regulated: Vec::new(),
        time_triggered: schedulers::tas::time_triggered(net).delay,
    };
    for f in 0..net.flows.len() {
        lay_flow(net, &mut lay, f);
    }
    lay
}

/// Appends flow `f`'s crossings (and the queues it is the first to use) to `lay`, which holds
/// the flows before it: a layout grows flow by flow (the admission's trials extend one).
pub(super) fn lay_flow(net: &Network, lay: &mut Layout, f: FlowId) {
    let flow = &net.flows[f];
    // Per flow, the crossing of each port it visits: routes of a multicast tree share prefixes.
    let mut seen: Vec<(PortId, usize)> = Vec::new();
    for r in &flow.routes {
        let mut up = None;
        for &p in &r.ports {
            let c = match seen.iter().find(|(q, _)| *q == p) {
                Some(&(_, c)) => c,
                None => {
                    // Queue key: the priority level, or the class for per-class shares.
                    let priority = match lay.models[p].sharing {
                        Sharing::Fifo => None,
                        Sharing::StaticPriority
                        | Sharing::CreditBased
                        | Sharing::TimeAware
                        | Sharing::Asynchronous => {
                            Some(flow.class.map_or(u32::MAX, |k| net.classes[k].priority))
                        }
                        Sharing::ClassShares => Some(flow.class.map_or(u32::MAX, |k| k as u32)),
                    };
                    // A port has few queues: a linear look-up beats a map. Its queues stay
                    // highest priority first (one queue per level).
                    let q = match lay.port_queues[p].iter().find(|&&q| lay.queues[q].priority == priority) {
                        Some(&q) => q,
                        None => {
                            lay.queues.push(Queue { priority, crossings: Vec::new() });
                            let q = lay.queues.len() - 1;
                            let qs = &lay.port_queues[p];
                            let at = qs.partition_point(|&o| lay.queues[o].priority < priority);
                            lay.port_queues[p].insert(at, q);
                            q
                        }
                    };
                    lay.crossings.push(Crossing { flow: f, port: p, upstream: up, queue: q });
                    let c = lay.crossings.len() - 1;
                    lay.queues[q].crossings.push(c);
                    lay.regulated.push(regulated_at(net, lay.models[p].sharing, f, p));
                    seen.push((p, c));
                    c
                }
            };
            up = Some(c);
        }
    }
    lay.flow_crossings.push(seen);
}

/// Whether flow `f` passes an interleaved regulator at port `p`, whose discipline is `discipline`
/// ([`Layout::regulated`]).
pub(super) fn regulated_at(net: &Network, sharing: Sharing, f: FlowId, p: PortId) -> bool {
    sharing == Sharing::Asynchronous && net.flows[f].class.is_some_and(|k| {
        let d = schedulers::discipline(&net.ports[p].discipline).expect("no shaper");
        matches!(d.service(), schedulers::Service::Asynchronous(ats) if ats.regulates(&net.classes[k].name))
    })
}
