//! TFA's results as other analyses read them (fifo-lp, the incremental engine): per-queue
//! delays, the FIFO queues' layout and per-port bounds.

use super::*;

/// TFA over the ports in feed-forward order, each crossing's output burst capped by `cap` before
/// the ports after it read it.
pub(super) fn tfa_capped(net: &Network, lay: &Layout, opt: &Options, cap: &[f64]) -> TfaState {
    let mut st = tfa_start(net, lay, opt, BurstGrowth::Tightest);
    for &p in &net.port_order().order {
        tfa_port(net, lay, opt, BurstGrowth::Tightest, p, &mut st);
        for &q in &lay.port_queues[p] {
            for &c in &lay.queues[q].crossings {
                st.out_burst[c] = st.out_burst[c].min(cap[c]);
            }
        }
    }
    st
}

/// TFA's backlog bound for a route, in DNC's sense: the largest backlog of a port on it (bits).
pub(super) fn tfa_backlog(st: &TfaState, ports: &[PortId]) -> f64 {
    ports.iter().map(|&p| *st.port_backlog[p].as_ref().unwrap_or(&f64::INFINITY)).fold(0.0, f64::max)
}

/// Port delays as plain numbers, infinite where there is no bound (the reason is looked up then).
pub(super) fn or_infinite(delays: &[Result<f64, Unbounded>]) -> Vec<f64> {
    delays.iter().map(|d| *d.as_ref().unwrap_or(&f64::INFINITY)).collect()
}

/// TFA on FIFO ports without grouping, as afdx-naive reports it: each port's delay (infinite
/// when unbounded) and the sum of the bursts entering it.
pub(crate) struct FifoTfa {
    pub port_delay: Vec<f64>,
    pub port_bursts: Vec<f64>,
    pub notes: Vec<String>,
}

pub(crate) fn fifo_tfa(net: &Network) -> FifoTfa {
    match fifo_pass::pass(net) {
        Some(pass) => {
            FifoTfa { port_delay: or_infinite(&pass.delay), port_bursts: pass.bursts, notes: Vec::new() }
        }
        None => fifo_tfa_general(net),
    }
}

/// [`fifo_tfa`] on the general path (curves, queues and groups).
pub(crate) fn fifo_tfa_general(net: &Network) -> FifoTfa {
    let lay = layout(net);
    let opt = Options { method: Candidate::Tfa, grouping: false, multiplexing: Multiplexing::Fifo };
    let (st, notes) = tfa_with(net, &lay, &opt, BurstGrowth::ByDelay);
    let port_bursts = lay
        .port_queues
        .iter()
        .map(|qs| qs.iter().flat_map(|&q| &lay.queues[q].crossings).fold(0.0, |s, &c| s + st.burst[c]))
        .collect();
    let port_delay = or_infinite(&st.port_delay);
    FifoTfa { port_delay, port_bursts, notes }
}

/// The FIFO queues of a network as the linear programs of `fifo-lp` read them: TFA's layout,
/// and from TFA's state (FIFO multiplexing, grouping where links serialise flows) each queue's
/// service curve, which its port's scheduler module gives, and its delay bound.
pub(crate) struct FifoQueues {
    /// Per queue: its port.
    pub port: Vec<PortId>,
    /// Per queue: its service curve (the scheduler's, the other queues' arrivals subtracted), or
    /// why it has none.
    pub service: Vec<Result<Curve, Unbounded>>,
    /// Per queue: TFA's delay bound (s), or why there is none.
    pub delay: Vec<Result<f64, Unbounded>>,
    /// Per queue: its flows, in flow order.
    pub flows: Vec<Vec<FlowId>>,
    /// Per flow: (port, queue, whether an interleaved regulator reshapes it there) of every port
    /// it crosses, once for a multicast flow.
    pub crossings: Vec<Vec<(PortId, usize, bool)>>,
}

pub(crate) fn fifo_queues(net: &Network) -> FifoQueues {
    let lay = layout(net);
    let grouping = net.kind == crate::model::NetworkKind::Ethernet;
    let opt = Options { method: Candidate::Tfa, grouping, multiplexing: Multiplexing::Fifo };
    let (st, _) = tfa(net, &lay, &opt);
    let mut port = vec![0; lay.queues.len()];
    for (p, qs) in lay.port_queues.iter().enumerate() {
        for &q in qs {
            port[q] = p;
        }
    }
    let flows =
        lay.queues.iter().map(|q| q.crossings.iter().map(|&c| lay.crossings[c].flow).collect()).collect();
    let crossings = lay
        .flow_crossings
        .iter()
        .map(|fc| fc.iter().map(|&(p, c)| (p, lay.crossings[c].queue, lay.regulated[c])).collect())
        .collect();
    FifoQueues { port, service: st.service, delay: st.delay, flows, crossings }
}

/// TFA's bound for one route: the sum of its queues' delays.
pub(super) fn tfa_route(lay: &Layout, st: &TfaState, f: FlowId, ports: &[PortId]) -> Result<f64, Unbounded> {
    ports.iter().try_fold(0.0, |acc, &p| match lay.time_triggered.get(&(f, p)) {
        Some(d) => Ok(acc + d),
        None => st.delay[lay.crossings[lay.crossing(f, p)].queue].clone().map(|d| acc + d),
    })
}

pub(super) fn port_bounds(
    net: &Network,
    delay: &[Result<f64, Unbounded>],
    backlog: &[Result<f64, Unbounded>],
) -> Vec<PortBound> {
    let loads = net.port_loads();
    net.ports
        .iter()
        .enumerate()
        .map(|(p, port)| {
            let reason = delay[p].as_ref().err().map(|u| u.to_string());
            // A shaped port serves at the shaper's rate: its load is against that.
            let rate =
                port.shaper.map_or(port.rate, |s| schedulers::token_bucket::shaped_rate(port.rate, s.rate));
            PortBound {
                node: net.nodes[port.node].name.clone(),
                port: port.name.clone(),
                plane: net.planes[port.plane].clone(),
                load: loads[p] / rate,
                delay_us: delay[p].as_ref().map_or(f64::INFINITY, |d| d * 1e6),
                backlog_bytes: backlog[p].as_ref().map_or(f64::INFINITY, |b| b / 8.0),
                buffer_bytes: port.buffer.map(|b| b / 8.0),
                es_jitter_us: None,
                status: if reason.is_none() { Status::Ok } else { Status::Unbounded },
                reason,
            }
        })
        .collect()
}
