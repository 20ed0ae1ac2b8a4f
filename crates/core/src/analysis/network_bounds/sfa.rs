//! SFA: per route, the convolution of the service left to the flow at each port, and its
//! iteration (SFA-iter) with the cross traffic bounded by SFA's own output bounds.

use super::*;
use crate::curves::upper_burst;

/// SFA's end-to-end left-over service for every crossing: the service left to the crossing's flow
/// at its port by the cross traffic, convolved with the same at every upstream crossing. Routes of
/// a multicast tree share their prefixes, so each crossing is computed once.
///
/// `read`: the crossings whose end-to-end service the caller reads (the last of each route), or
/// `None` for all; the others hold an empty reason in its place, never read.
///
/// FIFO left-over service is a family β_θ, valid for every θ >= 0 (Le Boudec & Thiran Prop.
/// 6.4.1); θ is the time β needs to serve the cross burst, as DNC chooses it.
pub(super) fn sfa_services(
    net: &Network,
    lay: &Layout,
    st: &TfaState,
    opt: &Options,
    read: Option<&[bool]>,
) -> Vec<Result<Curve, Unbounded>> {
    let cx = &lay.crossings;
    let mut out: Vec<Result<Curve, Unbounded>> = Vec::with_capacity(cx.len());
    // The same, with every hop packetized: a store-and-forward node passes a frame on only once it
    // has all of it, so between hops the flow's service loses up to one of its largest frames,
    // [β − l_max]^+ (Le Boudec & Thiran Thm 1.7.1). The last hop needs no packetizer: a frame's
    // delay ends with its last bit. Only the crossings after one read it.
    let mut packetized: Vec<Result<Curve, Unbounded>> = Vec::with_capacity(cx.len());
    let mut before_another = vec![false; cx.len()];
    for c in cx {
        if let Some(u) = c.upstream {
            before_another[u] = true;
        }
    }
    let unread = || Err(Unbounded { reason: String::new() });
    let mut others = OtherGroups::new(st);
    // Crossings are numbered along routes, so an upstream crossing always comes first.
    for (me, c) in cx.iter().enumerate() {
        let left = left_over(net, lay, st, opt, me, &mut others);
        let lmax = net.flows[c.flow].max_frame_wire;
        let (e2e_read, pk_read) = (read.is_none_or(|r| r[me]), before_another[me]);
        let (e2e, pk) = match (c.upstream.map(|u| &packetized[u]), left) {
            (Some(Err(e)), _) => (Err(e.clone()), Err(e.clone())),
            (_, Err(e)) => (Err(e.clone()), Err(e)),
            (None, Ok(l)) => (Ok(l.clone()), Ok(packetize(&l, lmax))),
            (Some(Ok(acc)), Ok(l)) => (
                if e2e_read { Ok(curves::convolve_convex(acc, &l)) } else { unread() },
                if pk_read { Ok(curves::convolve_convex(acc, &packetize(&l, lmax))) } else { unread() },
            ),
        };
        out.push(e2e);
        packetized.push(pk);
    }
    out
}

/// The left-over service of flow `f` at each port of its first route (SFA's per-hop curves).
#[cfg(test)]
pub(crate) fn sfa_left_overs(net: &Network, opt: &Options, f: FlowId) -> Vec<Result<Curve, Unbounded>> {
    let lay = layout(net);
    let (st, _) = tfa(net, &lay, &Options { method: Candidate::Tfa, ..*opt });
    let mut others = OtherGroups::new(&st);
    net.flows[f].routes[0]
        .ports
        .iter()
        .map(|&p| left_over(net, &lay, &st, opt, lay.crossing(f, p), &mut others))
        .collect()
}

/// [β − l]^+: the service of a node followed by a packetizer of largest packet `l`.
pub(super) fn packetize(beta: &Curve, l: f64) -> Curve {
    beta.offset(-l).positive_part().non_decreasing_closure()
}

/// Per queue and group, the sum of the other groups' arrival curves: what every member of the
/// group sees as cross traffic besides its own group. Computed once per group on first use,
/// where summing every group again for each crossing made SFA quadratic in a port's flows.
///
/// Each sum is the groups' curves added one by one in group order from the zero curve, the
/// order fixing the floating-point result: the group curves of a queue are built once, and the
/// sum of the groups before `k` (the same first steps for every `k` after them) is shared.
pub(super) struct OtherGroups {
    pub(super) sums: Vec<Vec<Option<Option<Curve>>>>,
    /// Per queue, once one of its sums is asked: each group's curve, and the running sums of
    /// the curves before each group (`prefix[k]`: groups `0..k`, `None` while there are none).
    pub(super) queues: Vec<Option<QueueSums>>,
}

pub(super) struct QueueSums {
    pub(super) curves: Vec<Option<Curve>>,
    pub(super) prefix: Vec<Option<Curve>>,
}

impl OtherGroups {
    pub(super) fn new(st: &TfaState) -> OtherGroups {
        OtherGroups {
            sums: st.groups.iter().map(|g| vec![None; g.len()]).collect(),
            queues: st.groups.iter().map(|_| None).collect(),
        }
    }

    /// Σ over the groups of queue `q` but `k` (in group order), `None` when there are none.
    pub(super) fn of(&mut self, st: &TfaState, q: usize, k: usize) -> Option<&Curve> {
        if self.sums[q][k].is_none() {
            let sums = self.queues[q].get_or_insert_with(|| {
                let curves: Vec<Option<Curve>> =
                    (0..st.groups[q].len()).map(|i| st.group_curve(q, i)).collect();
                let mut prefix = Vec::with_capacity(curves.len());
                let mut acc: Option<Curve> = None;
                for c in &curves {
                    prefix.push(acc.clone());
                    if let Some(c) = c {
                        acc = Some(acc.as_ref().map_or_else(|| Curve::zero().add(c), |a| a.add(c)));
                    }
                }
                QueueSums { curves, prefix }
            });
            let mut acc = sums.prefix[k].clone();
            for c in sums.curves[k + 1..].iter().flatten() {
                acc = Some(acc.as_ref().map_or_else(|| Curve::zero().add(c), |a| a.add(c)));
            }
            self.sums[q][k] = Some(acc);
        }
        self.sums[q][k].as_ref().expect("just computed").as_ref()
    }
}

/// The service left to crossing `me`'s flow at its port.
pub(super) fn left_over(
    net: &Network,
    lay: &Layout,
    st: &TfaState,
    opt: &Options,
    me: usize,
    others: &mut OtherGroups,
) -> Result<Curve, Unbounded> {
    let cx = &lay.crossings;
    let (q, p) = (cx[me].queue, cx[me].port);
    let service = st.service[q].clone()?;
    let flow = &net.flows[cx[me].flow];
    let k = st.group_of[me];
    // Its own group without it, and every other group. On a server graph, the flows that come
    // with it from the same server are bounded as DNC bounds them, with the flow of interest
    // taken as lowest priority upstream ([`arrival_without`]); on Ethernet ports every flow is
    // counted (non-preemption lets a lowest-priority frame delay the others).
    let (b, r, n) = st.group_sums[q][k];
    let own = if dnc_cross_traffic(net) && st.groups[q][k].upstream.is_some() {
        let rest: Vec<usize> = st.groups[q][k].members.iter().copied().filter(|&c| c != me).collect();
        if rest.is_empty() {
            None
        } else {
            Some(arrival_without(net, lay, st, opt, q, &rest, cx[me].flow)?)
        }
    } else {
        st.groups[q][k].curve_of((b - st.burst[me], r - flow.rate, n - 1))
    };
    // SFA convolves the left-over services along the route, which needs them convex; a
    // non-convex one (a table's, or a residual of a staircase) is replaced by its convex minorant.
    let convex = |c: Curve| if c.is_convex() { c } else { c.convex_minorant() };
    let cross = match (others.of(st, q, k), own) {
        (None, None) => return Ok(convex(service)),
        (Some(o), None) => o.clone(),
        (None, Some(c)) => c,
        (Some(o), Some(c)) => o.add(&c),
    };
    let left = match opt.multiplexing {
        Multiplexing::Fifo => curves::fifo_residual(&service, &cross),
        Multiplexing::Blind => curves::arbitrary_residual(&service, &cross),
    }
    .map_err(|u| u.context(&net.port_label(p)))?;
    Ok(convex(left))
}

/// DNC's arrival bound of the crossings `set` of queue `q` (sorted; the flow of interest `foi`
/// not among them) for separated flow analysis: the flows that reached the port from the port
/// `foi` came from are bounded over the ports they crossed with it, their output at each the
/// left-over service of the others there (the foi counted by the state's curve of it under FIFO;
/// left out, as if it had the lowest priority upstream, under arbitrary multiplexing and in
/// [`with_foi_lowest_upstream`]), the others as TFA bounds them (DNC `SeparateFlowAnalysis` with
/// `AggregatePboo`). Used on server graphs, whose fluid servers are DNC's.
pub(super) fn arrival_without(
    net: &Network,
    lay: &Layout,
    st: &TfaState,
    opt: &Options,
    q: usize,
    set: &[usize],
    foi: FlowId,
) -> Result<Curve, Unbounded> {
    let cx = &lay.crossings;
    let p = cx[set[0]].port;
    // The foi's group in this queue: the flows that came with it from the same port.
    let foi_group = lay.flow_crossings[foi]
        .iter()
        .find(|(port, _)| *port == p)
        .map(|&(_, c)| c)
        .filter(|&c| cx[c].queue == q && cx[c].upstream.is_some())
        .map(|c| st.group_of[c]);
    let (with_foi, others): (Vec<usize>, Vec<usize>) =
        set.iter().partition(|&&c| Some(st.group_of[c]) == foi_group);
    let total = arrival_of(net, lay, st, q, &others).unwrap_or_else(Curve::zero);
    if with_foi.is_empty() {
        return Ok(total);
    }
    let mut travelled: Option<Curve> = None;
    // Their output at the port upstream, without the foi: per queue there.
    let mut by_queue: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &c in &with_foi {
        let u = cx[c].upstream.expect("the foi's group came from a port");
        by_queue.entry(cx[u].queue).or_default().push(u);
    }
    for (qu, mut ups) in by_queue {
        ups.sort_unstable();
        let alpha = arrival_without(net, lay, st, opt, qu, &ups, foi)?;
        let foi_here =
            lay.flow_crossings[foi].iter().find(|(port, _)| *port == cx[ups[0]].port).map(|&(_, c)| c);
        let rest: Vec<usize> = lay.queues[qu]
            .crossings
            .iter()
            .copied()
            .filter(|c| ups.binary_search(c).is_err() && Some(*c) != foi_here)
            .collect();
        let mut cross =
            if rest.is_empty() { None } else { Some(arrival_without(net, lay, st, opt, qu, &rest, foi)?) };
        // Under FIFO the foi delays them there: it is counted, by the state's curve of it.
        if let Some(own) = foi_here
            .filter(|&c| cx[c].queue == qu && !foi_left_out(opt.multiplexing))
            .and_then(|c| arrival_of(net, lay, st, qu, &[c]))
        {
            cross = Some(match cross {
                None => own,
                Some(c) => c.add(&own),
            });
        }
        let rest_empty = cross.is_none();
        let service = st.service[qu].clone()?;
        let mux = if rest_empty { Multiplexing::Fifo } else { opt.multiplexing };
        let out = residual(&service, cross.as_ref(), mux).and_then(|res| curves::deconvolve(&alpha, &res))?;
        travelled = Some(match travelled {
            None => out,
            Some(t) => t.add(&out),
        });
    }
    let mut travelled = travelled.expect("the foi's group has members here");
    // SFA-iter: the state's bursts are also valid bounds on these flows here (its own per-flow
    // outputs among them); the smaller of two valid curves is one.
    if opt.method == Candidate::SfaIter {
        if let Some(own) = arrival_of(net, lay, st, q, &with_foi) {
            travelled = travelled.min(&own);
        }
    }
    Ok(total.add(&travelled))
}

/// SFA's delay and backlog bounds for one route, from the end-to-end service at its last
/// crossing: the horizontal and vertical deviations of the flow's arrival curve from it.
pub(super) fn sfa_route(
    net: &Network,
    lay: &Layout,
    st: &TfaState,
    services: &[Result<Curve, Unbounded>],
    f: FlowId,
    ports: &[PortId],
) -> Result<(f64, f64), Unbounded> {
    let flow = &net.flows[f];
    let last = lay.crossing(f, *ports.last().expect("routes have ports"));
    let service = services[last].clone()?;
    // A staircase flow's own curve where it enters (written out over that server's busy period).
    let alpha = match flow.staircase {
        Some(_) => st.source_curve[&lay.crossing(f, ports[0])].clone(),
        None => Curve::token_bucket(flow.rate, flow.burst),
    };
    Ok((curves::horizontal_deviation(&alpha, &service)?, curves::vertical_deviation(&alpha, &service)?))
}

/// Most passes of SFA-iter after plain SFA, and the relative change of every crossing's entering
/// burst under which a pass counts as the fixed point.
pub(super) const SFA_ITER_PASSES: usize = 25;
pub(super) const SFA_ITER_TOLERANCE: f64 = 1e-9;

/// SFA-iter's end-to-end services, pass by pass, and how the iteration ended.
pub(super) struct SfaIteration {
    /// Every pass's end-to-end services ([`sfa_services`]), plain SFA's first: each gives valid
    /// bounds, and a route keeps the smallest (FIFO's θ choice is not monotone in the cross
    /// traffic, so a later pass can give a route a larger bound).
    pub(super) services: Vec<Vec<Result<Curve, Unbounded>>>,
    /// Passes after plain SFA.
    pub(super) passes: usize,
    /// Whether it stopped at a fixed point: no SFA output bound below the state's, or no
    /// entering burst moved by more than the tolerance.
    pub(super) converged: bool,
    /// Why it did not iterate at all, if it did not.
    pub(super) skipped: Option<&'static str>,
}

impl SfaIteration {
    pub(super) fn note(&self, name: &str) -> String {
        match (self.skipped, self.converged) {
            (Some(why), _) => format!("{name}: not iterated ({why}): plain SFA's bounds"),
            (None, true) if self.passes == 0 => {
                format!("{name}: SFA's own output bounds are nowhere tighter than TFA's: plain SFA's bounds")
            }
            (None, true) => format!(
                "{name}: cross traffic tightened to a fixed point in {} pass{} (no entering burst moved by \
                 more than {SFA_ITER_TOLERANCE:e} relative)",
                self.passes,
                if self.passes == 1 { "" } else { "es" }
            ),
            (None, false) => format!(
                "{name}: stopped after {} passes, bursts still moving (every pass's bounds are valid; \
                 the smallest is kept)",
                self.passes
            ),
        }
    }
}

/// SFA with the tightest cross traffic this analysis has: each pass bounds every crossing's flow,
/// where it leaves its port, by the smaller of TFA's output burst and SFA's own, α ⊘ β_e2e (the
/// flow's source token bucket deconvolved by its end-to-end left-over service up to and including
/// that port, as DNC bounds an output), plus r·L_max/C for the frame in transmission, as TFA's
/// output rule counts it. TFA then runs again from those bursts (its queues' services and groups'
/// aggregates tighten too), and SFA again on the new state, until no entering burst moves.
///
/// Why it is sound: if every curve of a pass bounds what it claims, TFA's output bounds and SFA's
/// end-to-end services computed from them are valid, so each output burst is a valid bound on the
/// flow there, and so is the smaller of two (both token buckets of the flow's rate: their
/// min-plus minimum is the one with the smaller burst). By induction on the passes, over the
/// ports in feed-forward order, every pass's curves are valid. Each burst is also capped by the
/// previous pass's, so the bursts never grow and the iteration only tightens.
///
/// Not iterated: cyclic port dependencies (TFA's own fixed point there starts from the source
/// bursts; capping it by curves of a previous fixed point is not shown valid here). Flows through
/// interleaved regulators keep TFA's bursts from the first regulator on (SFA does not bound them).
pub(super) fn sfa_iterate(
    net: &Network,
    lay: &Layout,
    st0: &TfaState,
    tfa_opt: &Options,
    opt: &Options,
) -> SfaIteration {
    let cx = &lay.crossings;
    let mut it = SfaIteration {
        services: vec![sfa_services(net, lay, st0, opt, None)],
        passes: 0,
        converged: false,
        skipped: None,
    };
    if !net.port_order().acyclic {
        it.skipped = Some("cyclic port dependencies");
        return it;
    }
    // Crossings at or after an interleaved regulator: SFA's chain does not hold there.
    let mut regulated_path = vec![false; cx.len()];
    for (c, x) in cx.iter().enumerate() {
        regulated_path[c] =
            (lay.regulated[c] && x.upstream.is_some()) || x.upstream.is_some_and(|u| regulated_path[u]);
    }
    // The bound on each crossing's flow leaving its port (what enters the crossing after it).
    let mut cap: Vec<f64> = st0.out_burst.clone();
    let mut entering: Vec<f64> = st0.burst.clone();
    loop {
        let services = it.services.last().expect("plain SFA's services first");
        let mut tightened = false;
        for (u, x) in cx.iter().enumerate() {
            if regulated_path[u] {
                continue;
            }
            if let Some(b) = services[u].as_ref().ok().and_then(|s| sfa_output_burst(net, x, s)) {
                tightened |= b < cap[u] - SFA_ITER_TOLERANCE * cap[u].max(1.0);
                cap[u] = cap[u].min(b);
            }
        }
        // No output bound tighter than the last state's: TFA would give that state again.
        if !tightened {
            it.converged = true;
            break;
        }
        if it.passes == SFA_ITER_PASSES {
            break;
        }
        let st = tfa_capped(net, lay, tfa_opt, &cap);
        let moved = st
            .burst
            .iter()
            .zip(&entering)
            .map(|(&new, &old)| match (new.is_finite(), old.is_finite()) {
                (true, true) => (old - new).abs() / old.max(1.0),
                (false, false) => 0.0,
                _ => f64::INFINITY,
            })
            .fold(0.0, f64::max);
        for (c, b) in cap.iter_mut().enumerate() {
            *b = b.min(st.out_burst[c]);
        }
        entering.clone_from(&st.burst);
        it.services.push(sfa_services(net, lay, &st, opt, None));
        it.passes += 1;
        if moved <= SFA_ITER_TOLERANCE {
            it.converged = true;
            break;
        }
    }
    it
}

/// SFA's bound on crossing `x`'s flow where it enters the next hop, from its end-to-end service
/// up to and including `x`'s port: the burst of α ⊘ β (a token bucket of the flow's rate, β being
/// convex), plus r·L_max/C for the frame in transmission (counted whole at the next hop when its
/// last bit arrives, as [`output_bursts`] counts it). `None` when β is slower than the flow.
pub(super) fn sfa_output_burst(net: &Network, x: &Crossing, service: &Curve) -> Option<f64> {
    let f = &net.flows[x.flow];
    let out = curves::deconvolve(&Curve::token_bucket(f.rate, f.burst), service).ok()?;
    (out.tail_slope() <= f.rate)
        .then(|| upper_burst(&out) + f.rate * f.max_frame_wire / net.ports[x.port].rate)
}
