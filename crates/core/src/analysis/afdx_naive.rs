//! `afdx-naive`: FIFO total-flow analysis with burst propagation, as AFDX tools of the WOPANet
//! family compute it (the rules of shared/oracles/README.md):
//!
//! * every egress port is a FIFO server of its link rate C and its node's technological latency;
//! * a flow enters at its source as a token bucket (one largest wire frame, frame / period);
//! * port delay = Σ bursts of the flows entering the port / C + latency (a multicast flow counts
//!   once per port);
//! * each flow's burst grows by its rate × the port delay (no grouping, no line shaping);
//! * end-to-end delay = Σ port delays on the path (+ propagation and the destination's receive
//!   latency, both 0 in WOPANet files), rounded up
//!   to a whole µs; jitter = that − ⌊Σ over switch hops of Lmin / C⌋ µs;
//! * port backlog = ⌈Σ bursts / 8⌉ bytes.
//!
//! It is sound for FIFO ports but loose; `tfa --grouping` is never looser on FIFO ports.

use super::results::*;
use crate::model::{FlowId, Network, NodeKind, PortId};
use std::collections::HashMap;

/// One flow crossing one port (once, even when several destinations share it).
struct Crossing {
    flow: FlowId,
    port: PortId,
    /// The crossing of the same flow at the port before, if any.
    upstream: Option<usize>,
}

/// Ceiling that ignores floating-point noise just above a whole number (85.36 + 93.64 = 179.0000…1).
pub(crate) fn ceil_clean(x: f64) -> f64 {
    (x - 1e-9 * x.abs().max(1.0)).ceil()
}

pub(crate) fn floor_clean(x: f64) -> f64 {
    (x + 1e-9 * x.abs().max(1.0)).floor()
}

/// Ports in an order where every port comes after the ports that feed it (Kahn), followed by the
/// ports on cycles, if any; `true` when the dependency graph is acyclic.
pub(crate) fn feed_forward_order(net: &Network) -> (Vec<PortId>, bool) {
    let n = net.ports.len();
    let mut next: Vec<Vec<PortId>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    for flow in &net.flows {
        for r in &flow.routes {
            for w in r.ports.windows(2) {
                if !next[w[0]].contains(&w[1]) {
                    next[w[0]].push(w[1]);
                    indegree[w[1]] += 1;
                }
            }
        }
    }
    let mut order: Vec<PortId> = (0..n).filter(|&p| indegree[p] == 0).collect();
    let mut head = 0;
    while head < order.len() {
        let p = order[head];
        head += 1;
        for &q in &next[p] {
            indegree[q] -= 1;
            if indegree[q] == 0 {
                order.push(q);
            }
        }
    }
    let acyclic = order.len() == n;
    if !acyclic {
        order.extend((0..n).filter(|&p| indegree[p] > 0));
    }
    (order, acyclic)
}

/// Refuses networks with non-FIFO ports carrying traffic: the rules are FIFO rules.
pub fn applies(net: &Network) -> Result<(), String> {
    let per_port = net.flows_per_port();
    for (p, port) in net.ports.iter().enumerate() {
        if !per_port[p].is_empty() && !matches!(port.scheduler, crate::model::SchedulerConfig::Fifo) {
            return Err(format!(
                "afdx-naive applies to FIFO ports only; {} uses {} (use tfa, sfa or best)",
                net.port_label(p),
                port.scheduler_name
            ));
        }
    }
    Ok(())
}

pub fn analyze(net: &Network) -> AnalysisReport {
    // Crossings, one per (flow, port), linked to their upstream crossing.
    let mut crossings: Vec<Crossing> = Vec::new();
    let mut index: HashMap<(FlowId, PortId), usize> = HashMap::new();
    for (f, flow) in net.flows.iter().enumerate() {
        for r in &flow.routes {
            let mut up = None;
            for &p in &r.ports {
                let c = *index.entry((f, p)).or_insert_with(|| {
                    crossings.push(Crossing { flow: f, port: p, upstream: up });
                    crossings.len() - 1
                });
                up = Some(c);
            }
        }
    }
    let mut at_port: Vec<Vec<usize>> = vec![Vec::new(); net.ports.len()];
    for (c, x) in crossings.iter().enumerate() {
        at_port[x.port].push(c);
    }
    let loads = net.port_loads();
    let latency = |p: PortId| net.nodes[net.ports[p].node].technological_latency;

    let (order, acyclic) = feed_forward_order(net);
    let mut burst: Vec<f64> = crossings.iter().map(|x| net.flows[x.flow].burst).collect();
    let mut delay = vec![0.0f64; net.ports.len()];
    let mut notes = Vec::new();
    // One pass settles a feed-forward network; cyclic ones iterate to a fixed point.
    let max_passes = if acyclic { 1 } else { 10_000 };
    let mut converged = acyclic;
    for _ in 0..max_passes {
        let mut change = 0.0f64;
        for &p in &order {
            for &c in &at_port[p] {
                if let Some(u) = crossings[c].upstream {
                    burst[c] = burst[u] + net.flows[crossings[c].flow].rate * delay[crossings[u].port];
                }
            }
            let port = &net.ports[p];
            let d = if loads[p] > port.rate {
                f64::INFINITY
            } else {
                at_port[p].iter().fold(0.0, |s, &c| s + burst[c]) / port.rate + latency(p)
            };
            if d.is_finite() && delay[p].is_finite() {
                change = change.max((d - delay[p]).abs() / d.max(1e-12));
            } else if d.is_finite() != delay[p].is_finite() {
                change = f64::INFINITY;
            }
            delay[p] = d;
        }
        if !acyclic && change < 1e-12 {
            converged = true;
            break;
        }
    }
    if !acyclic {
        if converged {
            notes.push(
                "cyclic port dependencies: port delays are the fixed point of the burst equations".into(),
            );
        } else {
            notes.push(
                "cyclic port dependencies: the burst equations do not converge; bounds set to infinity"
                    .into(),
            );
            delay.iter_mut().for_each(|d| *d = f64::INFINITY);
        }
    }

    let ports = net
        .ports
        .iter()
        .enumerate()
        .map(|(p, port)| {
            let overloaded = loads[p] > port.rate;
            let backlog = if delay[p].is_finite() {
                ceil_clean(at_port[p].iter().fold(0.0, |s, &c| s + burst[c]) / 8.0)
            } else {
                f64::INFINITY
            };
            PortBound {
                node: net.nodes[port.node].name.clone(),
                port: port.name.clone(),
                plane: net.planes[port.plane].clone(),
                load: loads[p] / port.rate,
                delay_us: delay[p] * 1e6,
                backlog_bytes: backlog,
                buffer_bytes: port.buffer.map(|b| b / 8.0),
                es_jitter_us: None,
                status: if delay[p].is_finite() { Status::Ok } else { Status::Unbounded },
                reason: overloaded.then(|| {
                    format!(
                        "overloaded: offered {:.6} Mb/s > link rate {} Mb/s",
                        loads[p] / 1e6,
                        port.rate / 1e6
                    )
                }),
            }
        })
        .collect();

    let mut flows = Vec::new();
    for (f, flow) in net.flows.iter().enumerate() {
        for r in &flow.routes {
            // Propagation is a constant delay: it adds to the path but grows no burst.
            let raw: f64 = r.ports.iter().map(|&p| delay[p] + net.ports[p].propagation_delay).sum::<f64>()
                + net.nodes[r.destination].receive_latency;
            let delay_us = if raw.is_finite() { ceil_clean(raw * 1e6) } else { f64::INFINITY };
            // Shortest possible time: Lmin serialised once per switch hop.
            let switch_hops =
                r.ports.iter().filter(|&&p| net.nodes[net.ports[p].node].kind == NodeKind::Switch);
            let min_us: f64 =
                switch_hops.map(|&p| flow.min_frame_wire / net.ports[p].rate).sum::<f64>() * 1e6;
            let jitter_us = if min_us > 0.0 { delay_us - floor_clean(min_us) } else { delay_us };
            let reason = r.ports.iter().find(|&&p| !delay[p].is_finite()).map(|&p| {
                format!("no finite bound at {}: offered load exceeds the link rate", net.port_label(p))
            });
            flows.push(FlowBound {
                flow: flow.name.clone(),
                destination: net.nodes[r.destination].name.clone(),
                plane: net.planes[r.plane].clone(),
                delay_us,
                jitter_us,
                best_case_us: super::network_bounds::best_case_delay(net, f, &r.ports, r.destination) * 1e6,
                deadline_us: flow.deadline.map(|d| d * 1e6),
                slack_us: flow.deadline.map(|d| d * 1e6 - delay_us),
                status: status_of(delay_us, flow.deadline.map(|d| d * 1e6)),
                method: "afdx-naive".into(),
                reason,
            });
        }
    }
    AnalysisReport {
        method: "afdx-naive".into(),
        network: net.spec.name.clone(),
        flows,
        ports,
        redundancy: Vec::new(),
        notes,
    }
}
