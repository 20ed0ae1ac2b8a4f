//! TFA's state and fixed point: every queue's aggregate arrival curve and delay bound, each
//! flow's burst propagated by the delays upstream; cycles by a fixed point over the bursts.

use super::*;

/// TFA's results, which SFA reuses for the cross traffic.
pub(super) struct TfaState {
    /// Burst of each crossing's flow entering its port (bits).
    pub(super) burst: Vec<f64>,
    /// Burst of each crossing's flow leaving its port: the flow's own output bound, the burst
    /// entering the crossings after it.
    pub(super) out_burst: Vec<f64>,
    /// The flows of each queue by the port they come from (sources by themselves).
    pub(super) groups: Vec<Vec<Group>>,
    /// Σ bursts, Σ rates and size of every group, from the current bursts (SFA removes one member).
    pub(super) group_sums: Vec<Vec<(f64, f64, usize)>>,
    /// Of every group, the output bound of its members as an aggregate at the port they come
    /// from ([`aggregate_output`]), when there is one.
    pub(super) group_agg: Vec<Vec<Option<Curve>>>,
    /// Index, in its queue's `groups`, of each crossing's group.
    pub(super) group_of: Vec<usize>,
    /// By crossing, for the members of [`Group::exact`] groups: the flow's exact arrival curve
    /// where it enters the network (its staircase, or its token bucket), from [`source_curves`].
    pub(super) source_curve: HashMap<usize, Curve>,
    /// Crossings whose entering burst a cyclic fixed point found growing without bound: taken
    /// as unbounded, so that what does not depend on them still converges ([`tfa_with`]).
    pub(super) diverged: Vec<bool>,
    /// Queues without a bound because of such a burst, directly or upstream: their reason is the
    /// cycle's.
    pub(super) cycle_blocked: Vec<bool>,
    /// Service curve of each queue, or why there is none.
    pub(super) service: Vec<Result<Curve, Unbounded>>,
    /// Delay bound of each queue (s), or why there is none.
    pub(super) delay: Vec<Result<f64, Unbounded>>,
    /// Per port: delay (max over its queues) and backlog (bits).
    pub(super) port_delay: Vec<Result<f64, Unbounded>>,
    pub(super) port_backlog: Vec<Result<f64, Unbounded>>,
}

#[cfg(test)]
thread_local! {
    /// Tests turn the closed forms off to check them against the curves they shortcut.
    pub(crate) static CURVES_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
thread_local! {
    /// Tests bound a server graph's cross traffic with every flow counted, as NCBounds does.
    pub(crate) static ALL_FLOWS_UPSTREAM: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether SFA bounds the flows travelling with the flow of interest as DNC does, with it taken
/// as lowest priority upstream: on server graphs (fluid servers, DNC's model).
pub(super) fn dnc_cross_traffic(net: &Network) -> bool {
    #[cfg(test)]
    if ALL_FLOWS_UPSTREAM.with(|c| c.get()) {
        return false;
    }
    net.kind == crate::model::NetworkKind::ServerGraph
}

thread_local! {
    /// Set while [`with_foi_lowest_upstream`] runs: the hop-by-hop SFA leaves the flow of interest
    /// out of its travelling companions' arrival bounds under FIFO too.
    static FOI_LOWEST_UPSTREAM: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the convention of DNC's functional tests for SFA on a server graph: the flows
/// that travel with the flow of interest (foi) are bounded with the foi left out upstream (as if
/// it had the lowest priority there), under FIFO multiplexing as well. Not a bound under FIFO:
/// FIFO serves the foi ahead of later cross traffic, which it then delays, and a trajectory
/// exceeds the bound (docs/ANALYSIS.md, "DNC's SFA under FIFO"). Kept to reproduce the
/// functional tests' FIFO rows; `sfa`, `sfa-iter` and `best` count the foi under FIFO.
pub fn with_foi_lowest_upstream<T>(f: impl FnOnce() -> T) -> T {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            FOI_LOWEST_UPSTREAM.with(|c| c.set(self.0));
        }
    }
    let _reset = Reset(FOI_LOWEST_UPSTREAM.with(|c| c.replace(true)));
    f()
}

/// Whether the foi is left out of the arrival bounds of the flows travelling with it: under
/// arbitrary multiplexing (DNC's convention: it may be taken as lowest priority, delaying no
/// one), and under FIFO only inside [`with_foi_lowest_upstream`].
pub(super) fn foi_left_out(mux: Multiplexing) -> bool {
    mux == Multiplexing::Blind || FOI_LOWEST_UPSTREAM.with(|c| c.get())
}

/// Whether the closed forms for token buckets may be used (always, but in their tests).
pub(super) fn closed_forms() -> bool {
    #[cfg(test)]
    if CURVES_ONLY.with(|c| c.get()) {
        return false;
    }
    true
}

#[cfg(test)]
thread_local! {
    /// Tests choose one thread or two whatever the network's size, to compare both.
    pub(crate) static THREADS: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// The thread-local switches above, as the calling thread has them: a thread the analysis
/// spawns starts with them set the same, so that it computes what the caller would.
#[derive(Clone, Copy)]
pub(super) struct Switches {
    pub(super) foi_lowest_upstream: bool,
    #[cfg(test)]
    pub(super) curves_only: bool,
    #[cfg(test)]
    pub(super) all_flows_upstream: bool,
    #[cfg(test)]
    pub(super) threads: Option<bool>,
}

impl Switches {
    pub(super) fn current() -> Switches {
        Switches {
            foi_lowest_upstream: FOI_LOWEST_UPSTREAM.with(|c| c.get()),
            #[cfg(test)]
            curves_only: CURVES_ONLY.with(|c| c.get()),
            #[cfg(test)]
            all_flows_upstream: ALL_FLOWS_UPSTREAM.with(|c| c.get()),
            #[cfg(test)]
            threads: THREADS.with(|c| c.get()),
        }
    }

    /// Sets them in this thread (a spawned one, which ends with its work).
    pub(super) fn install(self) {
        FOI_LOWEST_UPSTREAM.with(|c| c.set(self.foi_lowest_upstream));
        #[cfg(test)]
        CURVES_ONLY.with(|c| c.set(self.curves_only));
        #[cfg(test)]
        ALL_FLOWS_UPSTREAM.with(|c| c.set(self.all_flows_upstream));
        #[cfg(test)]
        THREADS.with(|c| c.set(self.threads));
    }
}

/// Crossings (flow, port) from which a network's independent computations (TFA on grouped and
/// ungrouped curves, each SFA candidate, the rows of half the flows) run on two threads: below,
/// starting a thread costs more than it saves (a small network's whole analysis takes well
/// under a millisecond).
pub(super) const PARALLEL_MIN_CROSSINGS: usize = 1000;

/// Whether the analysis of a network laid out as `lay` may use a second thread: large enough,
/// and a second core to run it.
pub(super) fn two_threads(lay: &Layout) -> bool {
    #[cfg(test)]
    if let Some(two) = THREADS.with(|c| c.get()) {
        return two;
    }
    lay.crossings.len() >= PARALLEL_MIN_CROSSINGS
        && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
}

/// `(a(), b())`, `b` on a second thread when `parallel`, with this thread's [`Switches`].
pub(super) fn join<A, B: Send>(
    parallel: bool,
    a: impl FnOnce() -> A,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    let switches = Switches::current();
    std::thread::scope(|s| {
        let other = s.spawn(move || {
            switches.install();
            b()
        });
        let a = a();
        (a, other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })
}

impl TfaState {
    /// Group `k` of queue `q` as a token bucket (burst, rate), when its curve is one: no line
    /// (grouping), and an upstream aggregate bound that is a token bucket, if any.
    pub(super) fn group_tb(&self, q: usize, k: usize) -> Option<(f64, f64)> {
        if self.groups[q][k].line.is_some() || self.groups[q][k].exact || !closed_forms() {
            return None;
        }
        let (b, r, _) = self.group_sums[q][k];
        match &self.group_agg[q][k] {
            None => Some((b, r)),
            Some(agg) => agg.as_token_bucket().map(|(ab, _)| (b.min(ab), r)),
        }
    }

    /// The arrival curve of group `k` of queue `q`: its members' token buckets, within the line
    /// of the input link (grouping) and within their aggregate output bound upstream. Concave, as
    /// deconvolution and PMOO's token-bucket pieces need.
    pub(super) fn group_curve(&self, q: usize, k: usize) -> Option<Curve> {
        let own = self.groups[q][k].curve_of(self.group_sums[q][k])?;
        Some(match &self.group_agg[q][k] {
            Some(agg) => own.min(agg),
            None => own,
        })
    }

    /// [`Self::group_curve`], but for an [`Group::exact`] group the sum of its members' exact
    /// curves (staircases: neither concave nor a token bucket). Read only where the theorem holds
    /// for any arrival curve: a FIFO queue's delay and backlog, the horizontal and vertical
    /// deviations from its service (Le Boudec & Thiran Thm 1.4.1-1.4.2). Deconvolutions (concave
    /// arrivals), PMOO (token-bucket pieces) and left-over services (the FIFO θ-residual is a
    /// service curve where it is non-decreasing, Prop. 6.4.1, which a staircase's is not) read
    /// [`Self::group_curve`].
    pub(super) fn exact_group_curve(&self, q: usize, k: usize) -> Option<Curve> {
        if self.groups[q][k].exact {
            self.exact_sum(&self.groups[q][k].members)
        } else {
            self.group_curve(q, k)
        }
    }

    /// Σ of the exact arrival curves of `members` (crossings of one [`Group::exact`] group), `None`
    /// for none.
    pub(super) fn exact_sum(&self, members: &[usize]) -> Option<Curve> {
        let mut curves = members
            .iter()
            .map(|c| self.source_curve.get(c).expect("computed for every member of an exact group"))
            .peekable();
        curves.peek().is_some().then(|| curves.fold(Curve::zero(), |acc, c| acc.add(c)))
    }
}

/// Flows of one queue that come from the same port (or one source flow).
#[derive(Clone)]
pub(super) struct Group {
    pub(super) members: Vec<usize>,
    /// The port the members come from (`None`: flows released at this port's node).
    pub(super) upstream: Option<PortId>,
    /// Line constraint (rate, largest frame) of the shared input link, when grouping applies.
    pub(super) line: Option<(f64, f64)>,
    /// Some members leave interleaved regulators: neither the input link's line nor the
    /// aggregate's output bound upstream constrains what the regulators let go.
    pub(super) regulated: bool,
    /// Flows entering the network here, a staircase among them (a server graph's): a FIFO queue's
    /// delay and backlog read the sum of the members' exact arrival curves
    /// ([`TfaState::exact_group_curve`]), not of their token buckets.
    pub(super) exact: bool,
}

impl Group {
    /// Σ bursts, Σ rates and member count.
    pub(super) fn sums(&self, net: &Network, cx: &[Crossing], burst: &[f64]) -> (f64, f64, usize) {
        self.members
            .iter()
            .fold((0.0, 0.0, 0), |(b, r, n), &c| (b + burst[c], r + net.flows[cx[c].flow].rate, n + 1))
    }

    /// min(Σ token buckets, line) for the given sums.
    pub(super) fn curve_of(&self, (b, r, n): (f64, f64, usize)) -> Option<Curve> {
        if n == 0 {
            return None;
        }
        let tb = Curve::token_bucket(r, b);
        Some(match self.line {
            Some((rate, lmax)) if n > 1 || lmax < b => tb.min(&Curve::token_bucket(rate, lmax)),
            _ => tb,
        })
    }
}

/// Queue `q` (one class) as a per-class scheduler sees it: its name, share and frame sizes.
pub(super) fn class_at_port<'a>(
    net: &'a Network,
    lay: &Layout,
    shares: &dyn schedulers::ClassShares,
    q: usize,
) -> (&'a str, ClassAtPort) {
    let flows = || lay.queues[q].crossings.iter().map(|&c| &net.flows[lay.crossings[c].flow]);
    let class = flows().next().and_then(|f| f.class).map(|k| net.classes[k].name.as_str()).unwrap_or("");
    let at = ClassAtPort {
        // Validation refuses a class the discipline gives nothing to.
        share: shares.share(class).expect("validated: every class at a per-class port has a share"),
        lmin: flows().map(|f| f.min_frame_wire).fold(f64::INFINITY, f64::min),
        lmax: flows().map(|f| f.max_frame_wire).fold(0.0, f64::max),
        overhead: net.spec.defaults.interframe_overhead.bits(),
    };
    (class, at)
}

pub(super) fn sum_curves(curves: impl Iterator<Item = Curve>) -> Curve {
    curves.fold(Curve::zero(), |acc, c| acc.add(&c))
}

/// How TFA bounds a flow's output at each port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BurstGrowth {
    /// The tightest sound bound: the flow's own and its group's output bounds
    /// ([`output_bursts`], [`aggregate_output`]).
    Tightest,
    /// b + r·d, d the queue's whole delay bound: the rule of WOPANet-family AFDX tools, which
    /// afdx-naive reproduces.
    ByDelay,
}

pub(super) fn tfa(net: &Network, lay: &Layout, opt: &Options) -> (TfaState, Vec<String>) {
    tfa_with(net, lay, opt, BurstGrowth::Tightest)
}

/// Passes of one search for a fixed point of cyclic dependencies.
pub(super) const FIXED_POINT_PASSES: usize = 1000;

/// Searches for a fixed point, each after taking as unbounded the bursts still growing at the
/// end of the one before; then every bound is infinite.
pub(super) const FIXED_POINT_SEARCHES: usize = 4;

/// An entering burst beyond this (bits, or the server graph's unit) is taken as unbounded: only
/// a diverging fixed point reaches it, and curves built from it would overflow.
pub(super) const DIVERGED_BURST: f64 = 1e100;

/// TFA with the given output rule. On cyclic port dependencies the TFA equations are iterated
/// from the source bursts to a fixed point. Where they diverge (bursts around a cycle growing
/// at every pass), the growing bursts are taken as unbounded and the iteration goes on: what
/// depends on them is unbounded with the cycle's reason (per class, as [`class_blocks`] reads a
/// scheduler's dependencies: a static-priority class above a diverging one keeps its bound),
/// and the rest converges to the fixed point of a network in itself, closed under the
/// equations' dependencies, whose bounds are as sound as any converged fixed point's.
pub(super) fn tfa_with(
    net: &Network,
    lay: &Layout,
    opt: &Options,
    growth: BurstGrowth,
) -> (TfaState, Vec<String>) {
    let mut st = tfa_start(net, lay, opt, growth);
    let (order, acyclic) = (&net.port_order().order, net.port_order().acyclic);
    let mut notes = Vec::new();
    let pass = |st: &mut TfaState| -> f64 {
        order.iter().fold(0.0f64, |change, &p| change.max(tfa_port(net, lay, opt, growth, p, st)))
    };
    if acyclic {
        pass(&mut st);
        return (st, notes);
    }
    let converges = |st: &mut TfaState| (0..FIXED_POINT_PASSES).any(|_| pass(st) < 1e-12);
    let mut converged = converges(&mut st);
    for _ in 1..FIXED_POINT_SEARCHES {
        if converged {
            break;
        }
        // The bursts that still move (finite ones: an unbounded one is already taken so).
        let before = st.burst.clone();
        pass(&mut st);
        for (c, (&now, &was)) in st.burst.iter().zip(&before).enumerate() {
            if now.is_finite() && burst_change(was, now) >= 1e-12 {
                st.diverged[c] = true;
            }
        }
        converged = converges(&mut st);
    }
    let diverged: Vec<usize> = (0..st.diverged.len()).filter(|&c| st.diverged[c]).collect();
    if !converged {
        notes.push("cyclic port dependencies: TFA does not converge; bounds are infinite".to_string());
        let why = || Err(Unbounded::new("cyclic port dependencies: TFA does not converge"));
        st.delay.iter_mut().for_each(|d| *d = why());
        st.port_delay.iter_mut().for_each(|d| *d = why());
        st.port_backlog.iter_mut().for_each(|d| *d = why());
    } else if let Some(&first) = diverged.first() {
        let flows: BTreeSet<usize> = diverged.iter().map(|&c| lay.crossings[c].flow).collect();
        notes.push(format!(
            "cyclic port dependencies: TFA does not converge, the bursts of {} flow{} grow without bound \
             (among them '{}' entering {}): every bound that depends on them is infinite, the others are the \
             fixed point of the TFA equations",
            flows.len(),
            if flows.len() == 1 { "" } else { "s" },
            net.flows[lay.crossings[first].flow].name,
            net.port_label(lay.crossings[first].port)
        ));
    } else {
        notes.push("cyclic port dependencies: bounds are the fixed point of the TFA equations".to_string());
    }
    (st, notes)
}

/// How much an entering burst moved from one pass to the next, relative to the new one (the
/// fixed point's test): infinite where it became or stopped being unbounded.
pub(super) fn burst_change(was: f64, now: f64) -> f64 {
    match (was.is_finite(), now.is_finite()) {
        (true, true) => (now - was).abs() / now.max(1.0),
        (false, false) => 0.0,
        _ => f64::INFINITY,
    }
}

/// TFA's state before any port is analysed: the source bursts, and the groups of every queue.
pub(super) fn tfa_start(net: &Network, lay: &Layout, opt: &Options, growth: BurstGrowth) -> TfaState {
    let cx = &lay.crossings;
    let nq = lay.queues.len();
    let mut st = TfaState {
        burst: cx.iter().map(|c| net.flows[c.flow].burst).collect(),
        // The fixed point of cyclic dependencies is sought from the source bursts.
        out_burst: cx.iter().map(|c| net.flows[c.flow].burst).collect(),
        groups: vec![Vec::new(); nq],
        group_sums: vec![Vec::new(); nq],
        group_agg: vec![Vec::new(); nq],
        group_of: vec![0; cx.len()],
        source_curve: HashMap::new(),
        diverged: vec![false; cx.len()],
        cycle_blocked: vec![false; nq],
        service: (0..nq).map(|_| Err(Unbounded::new("not computed"))).collect(),
        delay: (0..nq).map(|_| Ok(0.0)).collect(),
        port_delay: (0..net.ports.len()).map(|_| Ok(0.0)).collect(),
        port_backlog: (0..net.ports.len()).map(|_| Ok(0.0)).collect(),
    };
    // Groups do not depend on bursts: build them once.
    for q in 0..nq {
        queue_groups(net, lay, opt, growth, q, &mut st);
    }
    // Every exact curve exists before any is read; each port's analysis writes its own again.
    for p in 0..net.ports.len() {
        source_curves(net, lay, p, &mut st);
    }
    st
}

/// The exact arrival curves of the members of port `p`'s [`Group::exact`] groups
/// ([`TfaState::source_curve`]): each staircase written out over the port's busy period, beyond
/// which the arrivals stay below the service and no delay or backlog there changes. The busy
/// period is bounded by every crossing's token bucket (Σ bursts B and Σ rates R entering, served
/// at rate C after latency T): (B + C·T)/(C − R). Beyond it (or its last written step, when that
/// comes first) a staircase continues as its affine envelope: a valid curve everywhere.
pub(super) fn source_curves(net: &Network, lay: &Layout, p: PortId, st: &mut TfaState) {
    let queues = &lay.port_queues[p];
    if !queues.iter().any(|&q| st.groups[q].iter().any(|g| g.exact)) {
        return;
    }
    let cx = &lay.crossings;
    let crossings = || queues.iter().flat_map(|&q| &lay.queues[q].crossings);
    let (burst, rate) =
        crossings().fold((0.0, 0.0), |(b, r), &c| (b + st.burst[c], r + net.flows[cx[c].flow].rate));
    let (service, latency) = (lay.models[p].rate, net.nodes[net.ports[p].node].technological_latency);
    // Overloaded or fed an unbounded burst, the port has no bound to make exact.
    let horizon = match rate.partial_cmp(&service) {
        _ if !burst.is_finite() => 0.0,
        Some(std::cmp::Ordering::Less) => (burst + service * latency) / (service - rate),
        Some(std::cmp::Ordering::Equal) => f64::INFINITY,
        _ => 0.0,
    };
    for &q in queues {
        for g in st.groups[q].iter().filter(|g| g.exact) {
            for &c in &g.members {
                let f = &net.flows[cx[c].flow];
                let curve = match f.staircase {
                    Some(s) => s.curve(horizon),
                    None => Curve::token_bucket(f.rate, st.burst[c]),
                };
                st.source_curve.insert(c, curve);
            }
        }
    }
}

/// The groups of queue `q`, by the port their flows come from, with their sums and aggregates
/// reset. Grouping adds the line of that port's link (serialisation); without it a group is its
/// members' token buckets and their aggregate output bound upstream.
pub(super) fn queue_groups(
    net: &Network,
    lay: &Layout,
    opt: &Options,
    growth: BurstGrowth,
    q: usize,
    st: &mut TfaState,
) {
    let cx = &lay.crossings;
    let queue = &lay.queues[q];
    st.groups[q].clear();
    let mut by_link: BTreeMap<Option<PortId>, Vec<usize>> = BTreeMap::new();
    // afdx-naive's rule sums the whole queue as one token bucket (WOPANet's arithmetic).
    let one_group = growth == BurstGrowth::ByDelay && !opt.grouping;
    for &c in &queue.crossings {
        let from = if one_group { None } else { cx[c].upstream.map(|u| cx[u].port) };
        by_link.entry(from).or_default().push(c);
    }
    for (up, members) in by_link {
        let regulated = members.iter().any(|&c| lay.regulated[c]);
        let line = match up {
            Some(_) if regulated => None,
            Some(u) if opt.grouping => {
                let lmax = members.iter().map(|&c| net.flows[cx[c].flow].max_frame_wire).fold(0.0, f64::max);
                Some((net.ports[u].rate, lmax))
            }
            _ => None,
        };
        for &c in &members {
            st.group_of[c] = st.groups[q].len();
        }
        let exact = up.is_none()
            && !one_group
            && members.iter().any(|&c| cx[c].upstream.is_none() && net.flows[cx[c].flow].staircase.is_some());
        st.groups[q].push(Group { members, upstream: up, line, regulated, exact });
    }
    st.group_agg[q] = vec![None; st.groups[q].len()];
    st.group_sums[q] = vec![(0.0, 0.0, 0); st.groups[q].len()];
}

/// TFA at port `p`: the bursts entering it (what the flows' ports upstream let out), its queues'
/// bounds and the bursts leaving it. Returns the largest relative change of an entering burst
/// (the fixed point's test on cyclic dependencies).
pub(super) fn tfa_port(
    net: &Network,
    lay: &Layout,
    opt: &Options,
    growth: BurstGrowth,
    p: PortId,
    st: &mut TfaState,
) -> f64 {
    let cx = &lay.crossings;
    let mut change: f64 = 0.0;
    for &q in &lay.port_queues[p] {
        for &c in &lay.queues[q].crossings {
            if lay.regulated[c] {
                // Out of its regulator with its own token bucket, whatever came in.
                st.burst[c] = net.flows[cx[c].flow].burst;
                continue;
            }
            if let Some(u) = cx[c].upstream {
                let mut entering = st.out_burst[u];
                if st.diverged[c] || entering > DIVERGED_BURST {
                    st.diverged[c] |= entering.is_finite();
                    entering = f64::INFINITY;
                }
                change = change.max(burst_change(st.burst[c], entering));
                st.burst[c] = entering;
            }
        }
        if growth == BurstGrowth::Tightest {
            for k in 0..st.groups[q].len() {
                st.group_agg[q][k] = aggregate_from_upstream(net, lay, st, opt, q, k);
            }
        }
    }
    analyse_port(net, lay, p, opt, st);
    output_bursts(net, lay, p, opt, growth, st);
    change
}
