//! TFA kept up to date while flows join a network already analysed (the online admission of
//! seed 001F): a trial's flows are laid out, analysed and reported in place, on the ports they
//! reach only, and a trial is undone exactly.
//!
//! A port's TFA state depends on the flows crossing it and on the bursts they bring from the
//! ports before it. Flows appended to a network change the ports on their routes, then every
//! port after those on the route of any flow crossing them (its output bursts changed), and so
//! on downstream: the affected ports. Every other port keeps its state, and every flow crossing
//! no affected port keeps its rows. With the new flows last, the layout of the larger network
//! extends the old one (the old flows' crossings and queues keep their indices, a flow is laid
//! out after the flows before it: [`lay_flow`]), so the new crossings and queues are appended,
//! the affected ports' groups rebuilt and the ports analysed again in feed-forward order, exactly
//! as a whole pass would: the state and the rows are the whole pass's, to the bit (tested against
//! it in the admission's tests). What a trial overwrites is journalled first, so that
//! [`TfaCache::undo`] puts the state back as it was, without analysing anything. Cyclic
//! dependencies (a fixed point over every port) and a port whose service model the new flows
//! change (a shaper's burst against a larger frame) take the whole pass.

use super::*;

/// TFA's layout, state and report rows of a network (no grouping, FIFO multiplexing: the method
/// `tfa`), and the journal of the trial on it, if one is pending.
pub struct TfaCache {
    lay: Layout,
    st: TfaState,
    /// The rows of every (flow, route), in flow order, before [`super::super::finish`]'s marks.
    rows: Vec<FlowBound>,
    /// Index in `rows` of each flow's first row (one more entry: the rows' count).
    first_row: Vec<usize>,
    /// Its flows' count, and the last one's name (to check the network extends it).
    flows: usize,
    last: Option<String>,
    notes: Vec<String>,
    journal: Option<Journal>,
}

/// What a trial changed, to put back.
enum Journal {
    /// The whole pass was taken: the previous cache.
    Whole(Box<TfaCache>),
    InPlace(Box<InPlace>),
}

struct InPlace {
    flows: usize,
    last: Option<String>,
    crossings: usize,
    queues: usize,
    /// The queues of each port the new flows cross, as they were.
    port_queues: Vec<(PortId, Vec<usize>)>,
    /// The state of each affected port, as it was.
    ports: Vec<PortSave>,
    /// The rows of the old flows analysed again, as they were.
    rows: Vec<(usize, FlowBound)>,
    /// The service model of each port [`TfaCache::update`] took again, as it was.
    models: Vec<(PortId, PortModel)>,
}

/// A change of the cache taken out of it ([`TfaCache::take_trial`]), to be undone later
/// ([`TfaCache::undo_trial`]): changes are undone last first, each one on the state it left.
pub struct Trial(Journal);

struct PortSave {
    port: PortId,
    delay: Result<f64, Unbounded>,
    backlog: Result<f64, Unbounded>,
    queues: Vec<QueueSave>,
}

/// The state of one queue of a port analysed again, as it was.
struct QueueSave {
    queue: usize,
    /// Its groups, when they are built again (at a port whose crossings changed; elsewhere they
    /// stay as they are).
    groups: Option<Vec<Group>>,
    sums: Vec<(f64, f64, usize)>,
    agg: Vec<Option<Curve>>,
    service: Result<Curve, Unbounded>,
    delay: Result<f64, Unbounded>,
    /// Its crossings (those below `nc`): (crossing, burst, output burst, group).
    crossings: Vec<(usize, f64, f64, usize)>,
}

fn options() -> Options {
    Options { method: Candidate::Tfa, grouping: false, multiplexing: Multiplexing::Fifo }
}

/// TFA's rows of flow `f`, one per route, from the state: what [`report_candidates`] gives with
/// the one candidate `tfa`.
fn flow_rows(net: &Network, lay: &Layout, st: &TfaState, f: FlowId, out: &mut Vec<FlowBound>) {
    for r in &net.flows[f].routes {
        let fixed: f64 = r.ports.iter().map(|&p| net.ports[p].propagation_delay).sum::<f64>()
            + net.nodes[r.destination].receive_latency;
        let backlog = tfa_backlog(st, &r.ports);
        let (delay, reason) = match tfa_route(lay, st, f, &r.ports) {
            Ok(d) => (d + fixed, None),
            Err(u) => (f64::INFINITY, Some(u.to_string())),
        };
        out.push(flow_bound(net, f, r, (delay, backlog), reason, options().name()));
    }
}

impl TfaCache {
    /// TFA on the whole network.
    pub fn new(net: &Network) -> TfaCache {
        let lay = layout(net);
        let (st, notes) = tfa(net, &lay, &options());
        let mut rows = Vec::with_capacity(net.flows.len());
        let mut first_row = Vec::with_capacity(net.flows.len() + 1);
        for f in 0..net.flows.len() {
            first_row.push(rows.len());
            flow_rows(net, &lay, &st, f, &mut rows);
        }
        first_row.push(rows.len());
        let last = net.flows.last().map(|f| f.name.clone());
        TfaCache { lay, st, rows, first_row, flows: net.flows.len(), last, notes, journal: None }
    }

    pub fn flows(&self) -> usize {
        self.flows
    }

    /// The rows of every (flow, route), in flow order.
    pub fn rows(&self) -> &[FlowBound] {
        &self.rows
    }

    /// The report TFA gives on the network the cache holds (before the analysis' common marks).
    pub fn report(&self, net: &Network) -> AnalysisReport {
        let ports = port_bounds(net, &self.st.port_delay, &self.st.port_backlog);
        AnalysisReport::new(net, options().name(), self.rows.clone(), ports, self.notes.clone())
    }

    /// Takes `net`, the cached network with flows appended, as the cached one, analysing only
    /// the ports the new flows affect (the whole network when it cannot: cycles, a port model
    /// changed). What it overwrites is kept until [`Self::commit`] or [`Self::undo`]. Returns
    /// how many ports were analysed.
    pub fn extend(&mut self, net: &Network) -> usize {
        self.commit();
        let first = self.flows;
        assert!(
            net.flows.len() >= first
                && (first == 0 || self.last.as_deref() == Some(net.flows[first - 1].name.as_str())),
            "the network extends the cached one"
        );
        let order = net.port_order();
        let per_port = net.flows_per_port();
        let new_ports: Vec<PortId> = {
            let mut v: Vec<PortId> = net.flows[first..]
                .iter()
                .flat_map(|f| f.routes.iter().flat_map(|r| r.ports.iter().copied()))
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let same_model = |p: PortId| {
            let m = port_model(net, p, &per_port[p])
                .unwrap_or(PortModel { rate: net.ports[p].rate, sharing: Sharing::Fifo });
            m.rate.to_bits() == self.lay.models[p].rate.to_bits() && m.sharing == self.lay.models[p].sharing
        };
        if !order.acyclic || !new_ports.iter().all(|&p| same_model(p)) {
            let old = std::mem::replace(self, TfaCache::new(net));
            self.journal = Some(Journal::Whole(Box::new(old)));
            return net.ports.len();
        }
        let (nc, nq) = (self.lay.crossings.len(), self.lay.queues.len());
        let mut j = InPlace {
            flows: first,
            last: self.last.clone(),
            crossings: nc,
            queues: nq,
            port_queues: new_ports.iter().map(|&p| (p, self.lay.port_queues[p].clone())).collect(),
            ports: Vec::new(),
            rows: Vec::new(),
            models: Vec::new(),
        };
        // The new flows' crossings and queues, appended; their state as a whole pass starts it.
        for f in first..net.flows.len() {
            lay_flow(net, &mut self.lay, f);
        }
        let (lay, st) = (&self.lay, &mut self.st);
        for c in &lay.crossings[nc..] {
            st.burst.push(net.flows[c.flow].burst);
            st.out_burst.push(net.flows[c.flow].burst);
            st.group_of.push(0);
            st.diverged.push(false);
        }
        for _ in nq..lay.queues.len() {
            st.groups.push(Vec::new());
            st.group_sums.push(Vec::new());
            st.group_agg.push(Vec::new());
            st.service.push(Err(Unbounded::new("not computed")));
            st.delay.push(Ok(0.0));
            st.cycle_blocked.push(false);
        }
        // Journal, then analyse, the ports the new flows cross, then, in feed-forward order,
        // those after a port whose state changed.
        let changed = reanalyse(net, lay, st, order, &new_ports, nq, nc, |save| j.ports.push(save));
        let analysed = j.ports.len();
        // The rows of the old flows through a port whose state changed, then the new flows'.
        let mut touched = vec![false; first];
        for p in (0..net.ports.len()).filter(|&p| changed[p]) {
            for &f in per_port[p].iter().filter(|&&f| f < first) {
                touched[f] = true;
            }
        }
        rows_again(net, lay, st, &touched, &self.first_row, &mut self.rows, &mut j.rows);
        self.first_row.pop();
        for f in first..net.flows.len() {
            self.first_row.push(self.rows.len());
            flow_rows(net, lay, st, f, &mut self.rows);
        }
        self.first_row.push(self.rows.len());
        self.flows = net.flows.len();
        self.last = net.flows.last().map(|f| f.name.clone());
        self.journal = Some(Journal::InPlace(Box::new(j)));
        analysed
    }

    /// Keeps the last [`Self::extend`] or [`Self::update`].
    pub fn commit(&mut self) {
        self.journal = None;
    }

    /// The last change, taken out of the cache (which then keeps it as if committed), for
    /// [`Self::undo_trial`]; none after a commit.
    pub fn take_trial(&mut self) -> Option<Trial> {
        self.journal.take().map(Trial)
    }

    /// Puts the cache back as it was before the change `trial` was taken from, which must be the
    /// last change still in it (changes taken out are undone last first).
    pub fn undo_trial(&mut self, trial: Trial) {
        self.journal = Some(trial.0);
        self.undo();
    }

    /// Takes `net`, the cached network with the same flows on the same routes, as the cached
    /// one, where some flows' traffic (burst, rate, frame sizes, deadline) or some ports' service
    /// (rate, scheduler parameters) changed: `ports` are the ports those flows cross and those
    /// ports. Their service models are taken again, they are analysed again and then, as in
    /// [`Self::extend`], the ports after a queue whose state changed; the whole pass when it
    /// cannot (cycles; a port's queues or regulators, or the time-triggered delays, changed).
    /// Kept until [`Self::commit`] or [`Self::undo`]. Returns how many ports were analysed.
    pub fn update(&mut self, net: &Network, ports: &[PortId]) -> usize {
        self.commit();
        assert_eq!(net.flows.len(), self.flows, "the network has the cached flows");
        let order = net.port_order();
        let per_port = net.flows_per_port();
        let mut seeds = ports.to_vec();
        seeds.sort_unstable();
        seeds.dedup();
        let models: Vec<PortModel> = seeds
            .iter()
            .map(|&p| {
                port_model(net, p, &per_port[p])
                    .unwrap_or(PortModel { rate: net.ports[p].rate, sharing: Sharing::Fifo })
            })
            .collect();
        let lay = &self.lay;
        // The layout stays the one of the network only with the same queues and regulators.
        let same_layout = seeds.iter().zip(&models).all(|(&p, m)| {
            m.sharing == lay.models[p].sharing
                && lay.port_queues[p]
                    .iter()
                    .flat_map(|&q| &lay.queues[q].crossings)
                    .all(|&c| regulated_at(net, m.sharing, lay.crossings[c].flow, p) == lay.regulated[c])
        });
        if !order.acyclic
            || !same_layout
            || schedulers::tas::time_triggered(net).delay != self.lay.time_triggered
        {
            let old = std::mem::replace(self, TfaCache::new(net));
            self.journal = Some(Journal::Whole(Box::new(old)));
            return net.ports.len();
        }
        let (nc, nq) = (self.lay.crossings.len(), self.lay.queues.len());
        let mut j = InPlace {
            flows: self.flows,
            last: self.last.clone(),
            crossings: nc,
            queues: nq,
            port_queues: Vec::new(),
            ports: Vec::new(),
            rows: Vec::new(),
            models: Vec::new(),
        };
        for (&p, m) in seeds.iter().zip(models) {
            j.models.push((p, std::mem::replace(&mut self.lay.models[p], m)));
        }
        let (lay, st) = (&self.lay, &mut self.st);
        let changed = reanalyse(net, lay, st, order, &seeds, nq, nc, |save| j.ports.push(save));
        let analysed = j.ports.len();
        let mut touched = vec![false; self.flows];
        for p in (0..net.ports.len()).filter(|&p| changed[p]) {
            for &f in &per_port[p] {
                touched[f] = true;
            }
        }
        rows_again(net, lay, st, &touched, &self.first_row, &mut self.rows, &mut j.rows);
        self.journal = Some(Journal::InPlace(Box::new(j)));
        analysed
    }

    /// Puts the cache back as it was before the last [`Self::extend`] (none: nothing to do).
    pub fn undo(&mut self) {
        let j = match self.journal.take() {
            None => return,
            Some(Journal::Whole(old)) => {
                *self = *old;
                return;
            }
            Some(Journal::InPlace(j)) => j,
        };
        let (lay, st) = (&mut self.lay, &mut self.st);
        for (p, model) in j.models {
            lay.models[p] = model;
        }
        for save in j.ports {
            st.port_delay[save.port] = save.delay;
            st.port_backlog[save.port] = save.backlog;
            for QueueSave { queue: q, groups, sums, agg, service, delay, crossings } in save.queues {
                if let Some(groups) = groups {
                    st.groups[q] = groups;
                }
                st.group_sums[q] = sums;
                st.group_agg[q] = agg;
                st.service[q] = service;
                st.delay[q] = delay;
                for (c, burst, out, group) in crossings {
                    st.burst[c] = burst;
                    st.out_burst[c] = out;
                    st.group_of[c] = group;
                }
            }
        }
        let (nc, nq) = (j.crossings, j.queues);
        for (p, queues) in j.port_queues {
            for &q in queues.iter() {
                lay.queues[q].crossings.retain(|&c| c < nc);
            }
            lay.port_queues[p] = queues;
        }
        lay.crossings.truncate(nc);
        lay.regulated.truncate(nc);
        lay.queues.truncate(nq);
        lay.flow_crossings.truncate(j.flows);
        st.burst.truncate(nc);
        st.out_burst.truncate(nc);
        st.group_of.truncate(nc);
        st.diverged.truncate(nc);
        st.groups.truncate(nq);
        st.cycle_blocked.truncate(nq);
        st.group_sums.truncate(nq);
        st.group_agg.truncate(nq);
        st.service.truncate(nq);
        st.delay.truncate(nq);
        for (i, row) in j.rows {
            self.rows[i] = row;
        }
        self.first_row.truncate(j.flows + 1);
        self.rows.truncate(self.first_row[j.flows]);
        self.flows = j.flows;
        self.last = j.last;
    }
}

impl TfaCache {
    /// Takes `net`, the cached network without the flows `gone` marks (the others in their
    /// order), as the cached one: the layout, state and rows are compacted in place (what a
    /// layout of the smaller network numbers: crossings in flow order, queues in the order of
    /// their first crossing), and only the ports the removed flows crossed, and those downstream,
    /// analysed again; the whole pass when it cannot (cycles, a port model changed). Returns how
    /// many ports were analysed.
    pub fn remove(&mut self, net: &Network, gone: &[bool]) -> usize {
        self.commit();
        assert_eq!(gone.len(), self.flows, "one mark per cached flow");
        let order = net.port_order();
        let per_port = net.flows_per_port();
        let mut seeds: Vec<PortId> = (0..self.flows)
            .filter(|&f| gone[f])
            .flat_map(|f| self.lay.flow_crossings[f].iter().map(|&(p, _)| p))
            .collect();
        seeds.sort_unstable();
        seeds.dedup();
        let same_model = |p: PortId| {
            let m = port_model(net, p, &per_port[p])
                .unwrap_or(PortModel { rate: net.ports[p].rate, sharing: Sharing::Fifo });
            m.rate.to_bits() == self.lay.models[p].rate.to_bits() && m.sharing == self.lay.models[p].sharing
        };
        if !order.acyclic || !seeds.iter().all(|&p| same_model(p)) {
            *self = TfaCache::new(net);
            return net.ports.len();
        }
        // New indices of the flows, crossings and queues kept (usize::MAX: removed).
        let mut flow_id = vec![usize::MAX; self.flows];
        let mut n = 0;
        for f in (0..self.flows).filter(|&f| !gone[f]) {
            flow_id[f] = n;
            n += 1;
        }
        assert_eq!(n, net.flows.len(), "the network is the cached one without the flows removed");
        let (lay, st) = (&mut self.lay, &mut self.st);
        let mut cx_id = vec![usize::MAX; lay.crossings.len()];
        let mut k = 0;
        for (c, x) in lay.crossings.iter().enumerate() {
            if !gone[x.flow] {
                cx_id[c] = k;
                k += 1;
            }
        }
        let mut first: Vec<(usize, usize)> = Vec::new();
        for (q, queue) in lay.queues.iter().enumerate() {
            if let Some(&c) = queue.crossings.iter().find(|&&c| cx_id[c] != usize::MAX) {
                first.push((cx_id[c], q));
            }
        }
        first.sort_unstable();
        let mut queue_id = vec![usize::MAX; lay.queues.len()];
        for (i, &(_, q)) in first.iter().enumerate() {
            queue_id[q] = i;
        }
        // The layout.
        let keep_c = |c: &usize| cx_id[*c] != usize::MAX;
        let mut crossings = Vec::with_capacity(k);
        let mut regulated = Vec::with_capacity(k);
        for (c, x) in lay.crossings.iter().enumerate().filter(|(c, _)| keep_c(c)) {
            crossings.push(Crossing {
                flow: flow_id[x.flow],
                port: x.port,
                upstream: x.upstream.map(|u| cx_id[u]),
                queue: queue_id[x.queue],
            });
            regulated.push(lay.regulated[c]);
        }
        let mut queues: Vec<Queue> = Vec::with_capacity(first.len());
        for &(_, q) in &first {
            let old = &lay.queues[q];
            queues.push(Queue {
                priority: old.priority,
                crossings: old.crossings.iter().filter(|c| keep_c(c)).map(|&c| cx_id[c]).collect(),
            });
        }
        for qs in lay.port_queues.iter_mut() {
            qs.retain(|&q| queue_id[q] != usize::MAX);
            qs.iter_mut().for_each(|q| *q = queue_id[*q]);
        }
        let mut flow_crossings = Vec::with_capacity(n);
        for f in (0..self.flows).filter(|&f| !gone[f]) {
            flow_crossings.push(lay.flow_crossings[f].iter().map(|&(p, c)| (p, cx_id[c])).collect());
        }
        lay.crossings = crossings;
        lay.regulated = regulated;
        lay.queues = queues;
        lay.flow_crossings = flow_crossings;
        // The state: per crossing kept, per queue kept in their new order.
        let per_crossing = |v: &mut Vec<f64>| {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                cx_id[i - 1] != usize::MAX
            });
        };
        per_crossing(&mut st.burst);
        per_crossing(&mut st.out_burst);
        let mut i = 0;
        st.group_of.retain(|_| {
            i += 1;
            cx_id[i - 1] != usize::MAX
        });
        let mut i = 0;
        st.diverged.retain(|_| {
            i += 1;
            cx_id[i - 1] != usize::MAX
        });
        fn permute<T>(v: &mut Vec<T>, first: &[(usize, usize)]) {
            let mut old: Vec<Option<T>> = std::mem::take(v).into_iter().map(Some).collect();
            *v = first.iter().map(|&(_, q)| old[q].take().expect("each queue once")).collect();
        }
        permute(&mut st.groups, &first);
        permute(&mut st.group_sums, &first);
        permute(&mut st.group_agg, &first);
        permute(&mut st.service, &first);
        permute(&mut st.delay, &first);
        permute(&mut st.cycle_blocked, &first);
        // The groups keep their members, renumbered (the analysed ports' are rebuilt).
        for groups in st.groups.iter_mut() {
            for g in groups.iter_mut() {
                g.members.iter_mut().for_each(|c| *c = cx_id[*c]);
            }
        }
        let mut analysed = 0;
        let changed = reanalyse(net, lay, st, order, &seeds, usize::MAX, usize::MAX, |_| analysed += 1);
        // The rows: the kept flows', renumbered; those through a port that changed again.
        let mut rows = Vec::with_capacity(self.rows.len());
        let mut first_row = Vec::with_capacity(n + 1);
        let mut touched = vec![false; n];
        for p in (0..net.ports.len()).filter(|&p| changed[p]) {
            for &f in &per_port[p] {
                touched[f] = true;
            }
        }
        let old_rows = std::mem::take(&mut self.rows);
        let mut old_rows = old_rows.into_iter();
        for f in 0..self.flows {
            let count = self.first_row[f + 1] - self.first_row[f];
            let mine = old_rows.by_ref().take(count);
            if gone[f] {
                mine.for_each(drop);
                continue;
            }
            let g = flow_id[f];
            first_row.push(rows.len());
            if touched[g] {
                mine.for_each(drop);
                flow_rows(net, lay, st, g, &mut rows);
            } else {
                rows.extend(mine.map(|mut r| {
                    r.flow = g;
                    r
                }));
            }
        }
        first_row.push(rows.len());
        self.rows = rows;
        self.first_row = first_row;
        self.flows = n;
        self.last = net.flows.last().map(|f| f.name.clone());
        analysed
    }
}

/// The rows of the flows `touched` marks built again from the state (flow `f`'s are
/// `rows[first_row[f]..first_row[f + 1]]`), those they replace put in `saved`.
fn rows_again(
    net: &Network,
    lay: &Layout,
    st: &TfaState,
    touched: &[bool],
    first_row: &[usize],
    rows: &mut [FlowBound],
    saved: &mut Vec<(usize, FlowBound)>,
) {
    let mut fresh = Vec::new();
    for f in (0..touched.len()).filter(|&f| touched[f]) {
        fresh.clear();
        flow_rows(net, lay, st, f, &mut fresh);
        for (i, row) in (first_row[f]..first_row[f + 1]).zip(fresh.drain(..)) {
            saved.push((i, std::mem::replace(&mut rows[i], row)));
        }
    }
}

/// Analyses again the ports `seeds` (those the flows added or removed cross), then every port
/// after a queue whose state changed, in feed-forward order, as a whole pass would; a port whose
/// inputs did not change keeps its state (the same inputs give the same bits). What a port reads
/// of the ports before it is per queue (the bursts its flows leave them with, the aggregate
/// output bound of the flows it takes from a queue): a port is analysed again only after a queue
/// some of its flows come from changed. The groups of a seed are built again (its crossings
/// changed); those of the other ports are what a whole pass builds already (the groups depend on
/// the layout alone), their sums reset as it resets them. `saved` gets each analysed port's
/// state as it was (its queues below `nq`, crossings below `nc`: those that existed). Returns
/// which ports changed (a queue, or the port's delay or backlog: the rows of the flows through
/// them are to be built again).
#[allow(clippy::too_many_arguments)]
fn reanalyse(
    net: &Network,
    lay: &Layout,
    st: &mut TfaState,
    order: &crate::model::network::indices::PortOrder,
    seeds: &[PortId],
    nq: usize,
    nc: usize,
    mut saved: impl FnMut(PortSave),
) -> Vec<bool> {
    let opt = options();
    let mut dirty = vec![false; net.ports.len()];
    let mut seed = vec![false; net.ports.len()];
    let mut changed = vec![false; net.ports.len()];
    let mut queue_changed = vec![false; lay.queues.len()];
    for &p in seeds {
        dirty[p] = true;
        seed[p] = true;
    }
    for &p in &order.order {
        if !dirty[p] {
            continue;
        }
        let save = snapshot(st, lay, p, nq, nc, seed[p]);
        for &q in &lay.port_queues[p] {
            if seed[p] {
                queue_groups(net, lay, &opt, BurstGrowth::Tightest, q, st);
            } else {
                st.group_sums[q].iter_mut().for_each(|s| *s = (0.0, 0.0, 0));
            }
        }
        tfa_port_in_place(net, lay, &opt, p, st, &save, &queue_changed);
        for &q in &lay.port_queues[p] {
            queue_changed[q] =
                seed[p] || save.queues.iter().find(|s| s.queue == q).is_none_or(|s| !same_queue(st, s));
        }
        changed[p] = lay.port_queues[p].iter().any(|&q| queue_changed[q])
            || st.port_delay[p] != save.delay
            || st.port_backlog[p] != save.backlog;
        // The ports the flows of the queues that changed go to next.
        for &q in lay.port_queues[p].iter().filter(|&&q| queue_changed[q]) {
            for &c in &lay.queues[q].crossings {
                for &(next, d) in &lay.flow_crossings[lay.crossings[c].flow] {
                    if lay.crossings[d].upstream == Some(c) {
                        dirty[next] = true;
                    }
                }
            }
        }
        saved(save);
    }
    changed
}

/// [`tfa_port`] (the tightest output rule) at a port analysed again, but for the aggregate output
/// bound of each group whose members come from queues that did not change
/// ([`aggregate_from_upstream`] reads only the state of those queues and the group's members):
/// when the group has the members it had, its bound is the one `save` holds (the same inputs
/// give the same bits), not computed again.
fn tfa_port_in_place(
    net: &Network,
    lay: &Layout,
    opt: &Options,
    p: PortId,
    st: &mut TfaState,
    save: &PortSave,
    queue_changed: &[bool],
) {
    let cx = &lay.crossings;
    for &q in &lay.port_queues[p] {
        for &c in &lay.queues[q].crossings {
            // A source's burst is its flow's own, as a whole pass starts it (an edit changes it).
            match cx[c].upstream {
                Some(u) if !lay.regulated[c] => st.burst[c] = st.out_burst[u],
                _ => st.burst[c] = net.flows[cx[c].flow].burst,
            }
        }
        let old = save.queues.iter().find(|s| s.queue == q);
        for k in 0..st.groups[q].len() {
            let g = &st.groups[q][k];
            let same_inputs = g.upstream.is_some()
                && g.members.iter().all(|&c| cx[c].upstream.is_some_and(|u| !queue_changed[cx[u].queue]));
            let kept = match old {
                Some(old) if same_inputs => match &old.groups {
                    // The groups were not built again: group k is the one it was.
                    None => Some(k),
                    Some(groups) => groups.iter().position(|h| {
                        h.upstream == g.upstream && h.regulated == g.regulated && h.members == g.members
                    }),
                }
                .map(|j| old.agg[j].clone()),
                _ => None,
            };
            st.group_agg[q][k] = match kept {
                Some(agg) => agg,
                None => aggregate_from_upstream(net, lay, st, opt, q, k),
            };
        }
    }
    analyse_port(net, lay, p, opt, st);
    output_bursts(net, lay, p, opt, BurstGrowth::Tightest, st);
}

/// The state of port `p` (its queues below `nq`, their crossings below `nc`; the groups when they
/// are to be built again).
fn snapshot(st: &TfaState, lay: &Layout, p: PortId, nq: usize, nc: usize, groups: bool) -> PortSave {
    PortSave {
        port: p,
        delay: st.port_delay[p].clone(),
        backlog: st.port_backlog[p].clone(),
        queues: lay.port_queues[p]
            .iter()
            .filter(|&&q| q < nq)
            .map(|&q| QueueSave {
                queue: q,
                groups: groups.then(|| st.groups[q].clone()),
                sums: st.group_sums[q].clone(),
                agg: st.group_agg[q].clone(),
                service: st.service[q].clone(),
                delay: st.delay[q].clone(),
                crossings: lay.queues[q]
                    .crossings
                    .iter()
                    .filter(|&&c| c < nc)
                    .map(|&c| (c, st.burst[c], st.out_burst[c], st.group_of[c]))
                    .collect(),
            })
            .collect(),
    }
}

/// Whether queue `s.queue`'s state is `s`'s: what the ports after it read of it (at a port whose
/// crossings did not change: the same crossings and groups).
fn same_queue(st: &TfaState, s: &QueueSave) -> bool {
    let bits = |a: f64, b: f64| a.to_bits() == b.to_bits();
    let q = s.queue;
    s.groups.as_ref().is_none_or(|groups| {
        st.groups[q].len() == groups.len()
            && st.groups[q].iter().zip(groups).all(|(g, h)| {
                g.members == h.members
                    && g.upstream == h.upstream
                    && g.line == h.line
                    && g.regulated == h.regulated
            })
    }) && st.group_sums[q].len() == s.sums.len()
        && st.group_sums[q].iter().zip(&s.sums).all(|(a, b)| bits(a.0, b.0) && bits(a.1, b.1) && a.2 == b.2)
        && st.group_agg[q] == s.agg
        && st.service[q] == s.service
        && match (&st.delay[q], &s.delay) {
            (Ok(a), Ok(b)) => bits(*a, *b),
            (a, b) => a == b,
        }
        && s.crossings
            .iter()
            .all(|&(c, b, o, g)| bits(st.burst[c], b) && bits(st.out_burst[c], o) && st.group_of[c] == g)
}

#[cfg(test)]
impl TfaCache {
    /// Whether the layout and TFA's state equal `other`'s, to the bit (the admission's tests
    /// check a cache kept in place against one computed from scratch).
    pub fn same_state(&self, other: &TfaCache) -> bool {
        let (a, b) = (&self.lay, &other.lay);
        let bits = |x: &[f64], y: &[f64]| {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
        };
        let same_groups = |x: &[Group], y: &[Group]| {
            x.len() == y.len()
                && x.iter().zip(y).all(|(g, h)| {
                    g.members == h.members
                        && g.upstream == h.upstream
                        && g.line == h.line
                        && g.regulated == h.regulated
                })
        };
        let layout_same = a.crossings.len() == b.crossings.len()
            && a.crossings
                .iter()
                .zip(&b.crossings)
                .all(|(x, y)| (x.flow, x.port, x.upstream, x.queue) == (y.flow, y.port, y.upstream, y.queue))
            && a.queues.len() == b.queues.len()
            && a.queues
                .iter()
                .zip(&b.queues)
                .all(|(x, y)| x.priority == y.priority && x.crossings == y.crossings)
            && a.port_queues == b.port_queues
            && a.flow_crossings == b.flow_crossings
            && a.regulated == b.regulated;
        let (s, t) = (&self.st, &other.st);
        let state_same = bits(&s.burst, &t.burst)
            && bits(&s.out_burst, &t.out_burst)
            && s.group_of == t.group_of
            && s.groups.len() == t.groups.len()
            && s.groups.iter().zip(&t.groups).all(|(x, y)| same_groups(x, y))
            && s.group_sums == t.group_sums
            && s.group_agg == t.group_agg
            && s.service == t.service
            && s.delay == t.delay
            && s.port_delay == t.port_delay
            && s.port_backlog == t.port_backlog;
        layout_same && state_same && self.flows == other.flows && self.first_row == other.first_row
    }
}
