//! The arrival curves of a queue: token buckets of its flows, grouped per input link (a link
//! serialises its flows), output bounds of the upstream queue, left-over latencies.

use super::*;

/// The left-over service of a queue's `service` to some of its flows when `cross` is the rest,
/// under the multiplexing assumed inside the queue.
pub(super) fn residual(
    service: &Curve,
    cross: Option<&Curve>,
    mux: Multiplexing,
) -> Result<Curve, Unbounded> {
    match (cross, mux) {
        (None, _) => Ok(service.clone()),
        (Some(c), Multiplexing::Fifo) => curves::fifo_residual(service, c),
        (Some(c), Multiplexing::Blind) => curves::arbitrary_residual(service, c),
    }
}

/// The arrival curve of the crossings `set` of queue `q` (sorted, no repeats) entering their
/// port: per group, the group's own curve when `set` holds all of it, else the token buckets of
/// the members in `set` (within the input link's line, with grouping). `None` for an empty set.
pub(super) fn arrival_of(
    net: &Network,
    lay: &Layout,
    st: &TfaState,
    q: usize,
    set: &[usize],
) -> Option<Curve> {
    let cx = &lay.crossings;
    // (Σ bursts, Σ rates, count, largest frame) of the set's members in each group.
    let mut per_group: BTreeMap<usize, (f64, f64, usize, f64)> = BTreeMap::new();
    for &c in set {
        let f = &net.flows[cx[c].flow];
        let e = per_group.entry(st.group_of[c]).or_insert((0.0, 0.0, 0, 0.0));
        *e = (e.0 + st.burst[c], e.1 + f.rate, e.2 + 1, e.3.max(f.max_frame_wire));
    }
    let mut curves = per_group
        .into_iter()
        .filter_map(|(k, (b, r, n, lmax))| {
            let g = &st.groups[q][k];
            if n == g.members.len() {
                st.group_curve(q, k)
            } else {
                Group { line: g.line.map(|(rate, _)| (rate, lmax)), ..g.clone() }.curve_of((b, r, n))
            }
        })
        .peekable();
    curves.peek().is_some().then(|| sum_curves(curves))
}

/// The output bound, at the next hop, of the crossings `set` of queue `q` taken together (DNC's
/// aggregate arrival bound), the smaller of two sound ones:
///
/// * by the queue's delay: every frame of the set spends between its transmission, L_min/C, and
///   the queue's delay bound d there, so the set leaves within α(t + d − L_min/C);
/// * by the left-over service: the set's arrivals deconvolved by what the rest of the queue
///   leaves it, α ⊘ β_res (Le Boudec & Thiran Thm 1.4.3), plus, on a store-and-forward link, the
///   frame being sent: counted whole at the next hop when its last bit arrives, it adds up to
///   L_max/C of output, (α ⊘ β_res)(t + L_max/C).
///
/// On a fluid server graph frames have no length and both terms vanish.
pub(super) fn aggregate_output(
    net: &Network,
    lay: &Layout,
    st: &TfaState,
    opt: &Options,
    q: usize,
    set: &[usize],
) -> Option<Curve> {
    let cx = &lay.crossings;
    let p = cx[set[0]].port;
    let link = net.ports[p].rate;
    let service = st.service[q].as_ref().ok()?;
    let rest: Vec<usize> =
        lay.queues[q].crossings.iter().copied().filter(|c| set.binary_search(c).is_err()).collect();
    let mux = if rest.is_empty() { Multiplexing::Fifo } else { opt.multiplexing };
    let (lmin, lmax) = set
        .iter()
        .map(|&c| &net.flows[cx[c].flow])
        .fold((f64::INFINITY, 0.0f64), |(a, b), f| (a.min(f.min_frame_wire), b.max(f.max_frame_wire)));
    // Token buckets behind a rate-latency service: the same two bounds in closed form.
    if let (Some(rl), Some((b, r)), Some(cross)) =
        (service.as_rate_latency(), arrival_tb(st, net, lay, q, set), arrival_tb(st, net, lay, q, &rest))
    {
        let by_delay = st.delay[q].as_ref().ok().map(|d| b + r * (d - lmin / link).max(0.0));
        let by_service = left_over_latency(rl, cross, mux)
            .filter(|_| r <= rl.0 - cross.1 + 1e-12 * rl.0)
            .map(|theta| b + r * (theta + lmax / link));
        let burst = by_delay.unwrap_or(f64::INFINITY).min(by_service.unwrap_or(f64::INFINITY));
        return burst.is_finite().then(|| Curve::token_bucket(r, burst));
    }
    let alpha = arrival_of(net, lay, st, q, set)?;
    // The queue may have no delay bound (blind, at full load) while the set's left-over
    // service still bounds its output.
    let by_delay = st.delay[q].as_ref().ok().map(|d| alpha.shift_left((d - lmin / link).max(0.0)));
    let cross = arrival_of(net, lay, st, q, &rest);
    let by_service = residual(service, cross.as_ref(), mux)
        .and_then(|res| curves::deconvolve(&alpha, &res))
        .ok()
        .map(|c| c.shift_left(lmax / link));
    match (by_service, by_delay) {
        (Some(a), Some(b)) => Some(a.min(&b)),
        (a, b) => a.or(b),
    }
}

/// The aggregate output bound of group `k` of queue `q` at the port its members come from:
/// [`aggregate_output`] of their crossings there, summed over the queues they left. `None` for
/// source flows, or when the port upstream has no bound.
pub(super) fn aggregate_from_upstream(
    net: &Network,
    lay: &Layout,
    st: &TfaState,
    opt: &Options,
    q: usize,
    k: usize,
) -> Option<Curve> {
    let cx = &lay.crossings;
    let g = &st.groups[q][k];
    g.upstream?;
    if g.regulated {
        return None;
    }
    let mut by_queue: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &c in &g.members {
        let u = cx[c].upstream.expect("a group with an upstream port has upstream crossings");
        by_queue.entry(cx[u].queue).or_default().push(u);
    }
    let mut total: Option<Curve> = None;
    for (qu, mut set) in by_queue {
        set.sort_unstable();
        set.dedup();
        let out = aggregate_output(net, lay, st, opt, qu, &set)?;
        total = Some(match total {
            None => out,
            Some(t) => t.add(&out),
        });
    }
    total
}

/// Each crossing's own output bound at port `p` (the burst it brings to the next hop), the
/// smaller of the two of [`aggregate_output`] for the flow alone: by the queue's delay,
/// b + r·(d − L_min/C), and by its left-over service, TB ⊘ β_res plus r·L_max/C.
pub(super) fn output_bursts(
    net: &Network,
    lay: &Layout,
    p: PortId,
    opt: &Options,
    growth: BurstGrowth,
    st: &mut TfaState,
) {
    let cx = &lay.crossings;
    let link = net.ports[p].rate;
    for &q in &lay.port_queues[p] {
        let crossings = &lay.queues[q].crossings;
        let Ok(service) = &st.service[q] else {
            crossings.iter().for_each(|&c| st.out_burst[c] = f64::INFINITY);
            continue;
        };
        // The queue may have no delay bound (blind, at full load) while each flow's left-over
        // service still bounds its output.
        let delay = *st.delay[q].as_ref().unwrap_or(&f64::INFINITY);
        if growth == BurstGrowth::ByDelay {
            for &c in crossings {
                st.out_burst[c] = st.burst[c] + net.flows[cx[c].flow].rate * delay;
            }
            continue;
        }
        let mux = if crossings.len() == 1 { Multiplexing::Fifo } else { opt.multiplexing };
        // Token buckets behind a rate-latency service: the bounds in closed form, each flow's
        // cross traffic being the other groups and the rest of its own.
        let groups_tb: Option<Vec<(f64, f64)>> = (0..st.groups[q].len()).map(|k| st.group_tb(q, k)).collect();
        if let (Some(rl), Some(groups_tb)) = (service.as_rate_latency(), groups_tb) {
            let (bq, rq) = groups_tb.iter().fold((0.0, 0.0), |(b, r), g| (b + g.0, r + g.1));
            for &c in crossings {
                let f = &net.flows[cx[c].flow];
                let (b, k) = (st.burst[c], st.group_of[c]);
                let by_delay = b + f.rate * (delay - f.min_frame_wire / link).max(0.0);
                let cross = ((bq - groups_tb[k].0) + (st.group_sums[q][k].0 - b), rq - f.rate);
                let by_service = left_over_latency(rl, cross, mux)
                    .filter(|_| f.rate <= rl.0 - cross.1 + 1e-12 * rl.0)
                    .map_or(f64::INFINITY, |theta| b + f.rate * (theta + f.max_frame_wire / link));
                st.out_burst[c] = by_delay.min(by_service);
            }
            continue;
        }
        // Per group, the sum of the other groups' curves (prefix and suffix sums).
        let curves: Vec<Option<Curve>> = (0..st.groups[q].len()).map(|k| st.group_curve(q, k)).collect();
        let others = sums_of_others(&curves);
        let mut out = Vec::with_capacity(crossings.len());
        for &c in crossings {
            let f = &net.flows[cx[c].flow];
            let b = st.burst[c];
            let by_delay = b + f.rate * (delay - f.min_frame_wire / link).max(0.0);
            let k = st.group_of[c];
            let (gb, gr, gn) = st.group_sums[q][k];
            let own_group = st.groups[q][k].curve_of((gb - b, gr - f.rate, gn - 1));
            let cross = match (&others[k], own_group) {
                (None, None) => None,
                (Some(o), None) => Some(o.clone()),
                (None, Some(g)) => Some(g),
                (Some(o), Some(g)) => Some(o.add(&g)),
            };
            let by_service = residual(service, cross.as_ref(), mux)
                .and_then(|res| curves::deconvolve(&Curve::token_bucket(f.rate, b), &res))
                .map(|c| c.burst() + f.rate * f.max_frame_wire / link)
                .unwrap_or(f64::INFINITY);
            out.push((c, by_delay.min(by_service)));
        }
        for (c, b) in out {
            st.out_burst[c] = b;
        }
    }
}

/// The latency θ of the left-over service a rate-latency server (R, T) leaves to some flows when
/// the rest of its queue is the token bucket (b_o, r_o): FIFO's θ-family member that makes it
/// the rate-latency curve (R − r_o, T + b_o/R) (Le Boudec & Thiran Prop. 6.4.1, DNC's θ), blind's
/// (R − r_o, (R·T + b_o)/(R − r_o)). `None` when the left-over rate is not positive.
pub(super) fn left_over_latency(
    (rate, latency): (f64, f64),
    (b_o, r_o): (f64, f64),
    mux: Multiplexing,
) -> Option<f64> {
    let left = rate - r_o;
    if left <= 0.0 {
        return None;
    }
    Some(match mux {
        _ if b_o == 0.0 && r_o == 0.0 => latency,
        Multiplexing::Fifo => latency + b_o / rate,
        Multiplexing::Blind => (rate * latency + b_o) / left,
    })
}

/// The crossings `set` of queue `q` (sorted) entering their port as one token bucket, when every
/// group curve involved is one (no line, token-bucket aggregates).
pub(super) fn arrival_tb(
    st: &TfaState,
    net: &Network,
    lay: &Layout,
    q: usize,
    set: &[usize],
) -> Option<(f64, f64)> {
    let cx = &lay.crossings;
    // A queue has few groups (its input ports): a linear look-up beats a map.
    let mut per_group: Vec<(usize, (f64, f64, usize))> = Vec::new();
    for &c in set {
        let k = st.group_of[c];
        let i = per_group.iter().position(|e| e.0 == k).unwrap_or_else(|| {
            per_group.push((k, (0.0, 0.0, 0)));
            per_group.len() - 1
        });
        let e = &mut per_group[i].1;
        *e = (e.0 + st.burst[c], e.1 + net.flows[cx[c].flow].rate, e.2 + 1);
    }
    per_group.into_iter().try_fold((0.0, 0.0), |(b, r), (k, (gb, gr, n))| {
        let g = &st.groups[q][k];
        let (xb, xr) = if n == g.members.len() {
            st.group_tb(q, k)?
        } else if g.line.is_none() {
            (gb, gr)
        } else {
            return None;
        };
        Some((b + xb, r + xr))
    })
}

/// For each position, the sum of the other curves (`None` where there are none).
pub(super) fn sums_of_others(curves: &[Option<Curve>]) -> Vec<Option<Curve>> {
    let add = |a: &Option<Curve>, b: &Option<Curve>| match (a, b) {
        (None, None) => None,
        (Some(x), None) | (None, Some(x)) => Some(x.clone()),
        (Some(x), Some(y)) => Some(x.add(y)),
    };
    let n = curves.len();
    let mut prefix = vec![None; n + 1];
    for i in 0..n {
        prefix[i + 1] = add(&prefix[i], &curves[i]);
    }
    let mut suffix = vec![None; n + 1];
    for i in (0..n).rev() {
        suffix[i] = add(&suffix[i + 1], &curves[i]);
    }
    (0..n).map(|i| add(&prefix[i], &suffix[i + 1])).collect()
}
