//! TFA again after flows joined a network already analysed (the online admission of seed 001F):
//! only the ports whose inputs changed are analysed again.
//!
//! A port's TFA state depends on the flows crossing it and on the bursts they bring from the
//! ports before it. Flows appended to a network change the ports on their routes, then every
//! port after those on the route of any flow crossing them (its output bursts changed), and so
//! on downstream: the affected ports. Every other port keeps its state. With the new flows last,
//! the layout of the larger network extends the old one (the old flows' crossings and queues keep
//! their indices), so the old state is copied port by port and the affected ports are analysed
//! in the feed-forward order, exactly as a whole pass would: the result is the whole pass's, to
//! the bit (tested against it in the admission's tests). Cyclic dependencies (a fixed point over
//! every port) and anything else than a cache of a prefix of the flows take the whole pass.

use super::*;

/// TFA's layout and state of a network (no grouping, FIFO multiplexing: the method `tfa`).
pub struct TfaCache {
    lay: Layout,
    st: TfaState,
    /// Its flows' count, and the last one's name (to check the network extends it).
    flows: usize,
    last: Option<String>,
}

impl TfaCache {
    pub fn flows(&self) -> usize {
        self.flows
    }
}

fn options() -> Options {
    Options { method: Method::Tfa, grouping: false, multiplexing: Multiplexing::Fifo }
}

/// The ports on the routes of the flows from `first` on, and every port downstream of one of
/// them on the route of a flow crossing it.
fn affected_ports(net: &Network, first: usize) -> Vec<bool> {
    let mut hit = vec![false; net.ports.len()];
    let mut stack: Vec<PortId> = net.flows[first..]
        .iter()
        .flat_map(|f| f.routes.iter().flat_map(|r| r.ports.iter().copied()))
        .collect();
    while let Some(p) = stack.pop() {
        if hit[p] {
            continue;
        }
        hit[p] = true;
        for &f in &net.flows_per_port()[p] {
            for r in &net.flows[f].routes {
                if let Some(i) = r.ports.iter().position(|&q| q == p) {
                    stack.extend(r.ports[i + 1..].iter().filter(|&&q| !hit[q]));
                }
            }
        }
    }
    hit
}

/// Whether `prev` is the state of the first `prev.flows` flows of `net`, on the same ports.
fn extends(net: &Network, prev: &TfaCache, lay: &Layout) -> bool {
    prev.flows <= net.flows.len()
        && prev.flows > 0
        && prev.last.as_deref() == Some(net.flows[prev.flows - 1].name.as_str())
        && prev.st.port_delay.len() == net.ports.len()
        && prev.lay.crossings.len() <= lay.crossings.len()
        && prev.lay.queues.len() <= lay.queues.len()
}

/// The report of TFA on `net` (what [`analyze`] gives for `tfa`), reusing `prev` when `net`
/// extends the network it was computed on; and the cache of `net`. Also returns how many ports
/// were analysed.
pub fn tfa_after(net: &Network, prev: Option<&TfaCache>) -> (AnalysisReport, TfaCache, usize) {
    let opt = options();
    let lay = layout(net);
    let order = net.port_order();
    let usable = prev.filter(|c| order.acyclic && extends(net, c, &lay));
    let (st, notes, analysed) = match usable {
        None => {
            let (st, notes) = tfa(net, &lay, &opt);
            (st, notes, net.ports.len())
        }
        Some(c) => {
            let mut st = tfa_start(net, &lay, &opt, BurstGrowth::Tightest);
            let affected = affected_ports(net, c.flows);
            for p in (0..net.ports.len()).filter(|&p| !affected[p]) {
                for &q in &lay.port_queues[p] {
                    st.group_sums[q].clone_from(&c.st.group_sums[q]);
                    st.group_agg[q].clone_from(&c.st.group_agg[q]);
                    st.service[q] = c.st.service[q].clone();
                    st.delay[q] = c.st.delay[q].clone();
                    for &x in &lay.queues[q].crossings {
                        st.burst[x] = c.st.burst[x];
                        st.out_burst[x] = c.st.out_burst[x];
                    }
                }
                st.port_delay[p] = c.st.port_delay[p].clone();
                st.port_backlog[p] = c.st.port_backlog[p].clone();
            }
            let mut analysed = 0;
            for &p in order.order.iter().filter(|&&p| affected[p]) {
                tfa_port(net, &lay, &opt, BurstGrowth::Tightest, p, &mut st);
                analysed += 1;
            }
            (st, Vec::new(), analysed)
        }
    };
    let report = report_candidates(
        net,
        &lay,
        &st,
        None,
        notes,
        false,
        &[(Method::Tfa, Multiplexing::Fifo)],
        opt.name(),
    );
    let last = net.flows.last().map(|f| f.name.clone());
    (report, TfaCache { lay, st, flows: net.flows.len(), last }, analysed)
}
