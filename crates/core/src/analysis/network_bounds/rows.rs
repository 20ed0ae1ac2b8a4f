//! A report's rows: best-case delay, fixed delays, rounding a bound up.

use super::*;

/// Smallest possible delay of a route: latencies, one smallest frame per hop, propagation.
pub fn best_case_delay(net: &Network, f: FlowId, ports: &[PortId], destination: usize) -> f64 {
    let flow = &net.flows[f];
    ports
        .iter()
        .map(|&p| {
            let port = &net.ports[p];
            net.nodes[port.node].technological_latency
                + flow.min_frame_wire / port.rate
                + port.propagation_delay
        })
        .sum::<f64>()
        + net.nodes[destination].receive_latency
}

/// The row of flow `f` on route `r`, from its delay (s) and backlog (bits) bounds.
pub(crate) fn flow_bound(
    net: &Network,
    f: FlowId,
    r: &crate::model::Route,
    (delay, backlog): (f64, f64),
    reason: Option<String>,
    method: &'static str,
) -> FlowBound {
    let best_case = best_case_delay(net, f, &r.ports, r.destination);
    let mut row = row(&net.flows[f], f, (r.destination, r.plane), delay, best_case, reason, method);
    row.backlog_bytes = backlog / 8.0;
    row
}

/// Replaces `row`'s delay bound by `bound` (s: queueing and latencies along its route), from
/// `method`, with the route's fixed delays added; its backlog stays.
pub(crate) fn set_delay(
    net: &Network,
    row: &mut FlowBound,
    bound: Result<f64, Unbounded>,
    method: &'static str,
) {
    let f = row.flow;
    let r = net.flows[f]
        .routes
        .iter()
        .find(|r| r.destination == row.destination && r.plane == row.plane)
        .expect("a row is one of its flow's routes");
    let fixed = fixed_delays_us(net, row) / 1e6;
    let (delay, reason) = match bound {
        Ok(d) => (d + fixed, None),
        Err(u) => (f64::INFINITY, Some(u.to_string())),
    };
    let guaranteed = row.guaranteed;
    *row = flow_bound(net, f, r, (delay, row.backlog_bytes * 8.0), reason, method);
    row.guaranteed = guaranteed;
}

/// What a row's route adds to its queues' delays (µs): the links' propagation delays and the
/// destination's receive latency.
pub(crate) fn fixed_delays_us(net: &Network, row: &FlowBound) -> f64 {
    let r = net.flows[row.flow]
        .routes
        .iter()
        .find(|r| r.destination == row.destination && r.plane == row.plane)
        .expect("a row is one of its flow's routes");
    (r.ports.iter().map(|&p| net.ports[p].propagation_delay).sum::<f64>()
        + net.nodes[r.destination].receive_latency)
        * 1e6
}

/// `x` raised by 8 ulps (an infinity stays one).
pub(crate) fn round_up(x: f64) -> f64 {
    x + x.abs() * 8.0 * f64::EPSILON
}

/// The row of flow `f` on `route` (destination, plane), from its delay and best-case delay (s).
pub(super) fn row(
    flow: &crate::model::FlowModel,
    f: FlowId,
    (destination, plane): (usize, usize),
    delay: f64,
    best_case: f64,
    reason: Option<String>,
    method: &'static str,
) -> FlowBound {
    // The bound is f64 arithmetic, a few ulps from its exact value either way: it is reported a
    // few ulps up, so that what it bounds (a simulated delay, exact to the ns) never passes it by
    // rounding.
    let delay_us = round_up(delay * 1e6);
    let bcd_us = best_case * 1e6;
    let deadline_us = flow.deadline.map(|d| d * 1e6);
    FlowBound {
        flow: f,
        destination,
        plane,
        delay_us,
        jitter_us: (delay_us - bcd_us).max(0.0),
        best_case_us: bcd_us,
        backlog_bytes: f64::INFINITY,
        deadline_us,
        slack_us: deadline_us.map(|d| d - delay_us),
        status: status_of(delay_us, deadline_us),
        method,
        guaranteed: true,
        reason,
    }
}
