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

use super::network_bounds::FifoTfa;
use super::results::*;
use crate::model::Network;

/// Ceiling that ignores floating-point noise just above a whole number (85.36 + 93.64 = 179.0000…1).
pub(crate) fn ceil_clean(x: f64) -> f64 {
    (x - 1e-9 * x.abs().max(1.0)).ceil()
}

pub(crate) fn floor_clean(x: f64) -> f64 {
    (x + 1e-9 * x.abs().max(1.0)).floor()
}

/// Refuses networks with non-FIFO ports carrying traffic: the rules are FIFO rules.
pub fn applies(net: &Network) -> Result<(), String> {
    let per_port = net.flows_per_port();
    for (p, port) in net.ports.iter().enumerate() {
        let plain_fifo = crate::schedulers::plain_fifo(port);
        if !per_port[p].is_empty() && !plain_fifo {
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
    // TFA without grouping on FIFO ports computes exactly these port delays and bursts (a
    // property test checks it); the WOPANet rules below only round and report them.
    report(net, super::network_bounds::fifo_tfa(net))
}

/// The report from TFA's port delays and bursts.
pub(crate) fn report(net: &Network, tfa: FifoTfa) -> AnalysisReport {
    let delay = &tfa.port_delay;
    let notes = tfa.notes;
    let loads = net.port_loads();
    let ports: Vec<PortBound> = net
        .ports
        .iter()
        .enumerate()
        .map(|(p, port)| {
            let overloaded = loads[p] > port.rate;
            let backlog =
                if delay[p].is_finite() { ceil_clean(tfa.port_bursts[p] / 8.0) } else { f64::INFINITY };
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
                        "overloaded: offered {} > link rate {}",
                        super::results::rate_text(net, loads[p]),
                        super::results::rate_text(net, port.rate)
                    )
                }),
            }
        })
        .collect();

    let port_backlog: Vec<f64> = ports.iter().map(|p| p.backlog_bytes).collect();
    // Rows over the flattened routes, with what they read of ports and nodes side by side.
    let tables = super::network_bounds::PortTables::of(net);
    let routes = net.flat_routes();
    let mut flows = Vec::with_capacity(routes.len());
    for k in 0..routes.len() {
        let (f, destination) = (routes.flow[k] as usize, routes.destination[k] as usize);
        let flow = &net.flows[f];
        let ports = routes.ports(k);
        // One walk, three sums, each term by term in its own order. Propagation is a constant
        // delay: it adds to the path but grows no burst. The shortest possible time serialises
        // Lmin once per switch hop.
        let (mut raw, mut min_s, mut best_case) = (-0.0, -0.0, -0.0);
        for &p in ports {
            let p = p as usize;
            raw += delay[p] + tables.propagation[p];
            if tables.switch[p] {
                min_s += flow.min_frame_wire / tables.rate[p];
            }
            best_case += tables.best_case_hop(flow, p);
        }
        let raw = raw + tables.receive[destination];
        let delay_us = if raw.is_finite() { ceil_clean(raw * 1e6) } else { f64::INFINITY };
        let min_us = min_s * 1e6;
        let jitter_us = if min_us > 0.0 { delay_us - floor_clean(min_us) } else { delay_us };
        let reason = if raw.is_finite() {
            None
        } else {
            ports.iter().find(|&&p| !delay[p as usize].is_finite()).map(|&p| {
                format!(
                    "no finite bound at {}: offered load exceeds the link rate",
                    net.port_label(p as usize)
                )
            })
        };
        let deadline_us = flow.deadline.map(|d| d * 1e6);
        let backlog_bytes = ports.iter().map(|&p| port_backlog[p as usize]).fold(0.0, f64::max);
        flows.push(FlowBound {
            flow: f,
            destination,
            plane: routes.plane[k] as usize,
            delay_us,
            jitter_us,
            best_case_us: (best_case + tables.receive[destination]) * 1e6,
            backlog_bytes,
            deadline_us,
            slack_us: deadline_us.map(|d| d - delay_us),
            status: status_of(delay_us, deadline_us),
            method: "afdx-naive",
            guaranteed: true,
            reason,
        });
    }
    AnalysisReport::new(net, "afdx-naive", flows, ports, notes)
}
