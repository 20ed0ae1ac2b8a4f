//! PMOO (pay multiplexing only once; Schmitt, Zdarsky & Martinovic, "Improving performance
//! bounds in feed-forward networks by paying multiplexing only once", MMB 2008; DNC's
//! `PmooAnalysis`): the service left to a flow over its whole route under arbitrary
//! multiplexing, each interfering flow's burst paid once over the stretch of the route it shares.
//!
//! With rate-latency servers (R_j, T_j) along the route and interfering token buckets (b_i, r_i)
//! each sharing the stretch P_i of it:
//!
//!   R = min_j (R_j − Σ_{i: j ∈ P_i} r_i),   T = Σ_j T_j + Σ_i (b_i + r_i Σ_{j ∈ P_i} T_j) / R,
//!
//! and the flow is guaranteed β_{R,T}. An interfering flow that leaves the route and joins it
//! again counts once per stretch, with its arrival curve where it joins. Arrival curves that are
//! not token buckets (aggregates bounded at the port they come from) are minima of token
//! buckets: each choice of one bucket per interferer gives a valid curve, and their maximum is
//! kept. On a store-and-forward network every hop but the last also passes frames on whole:
//! [β_j − L_j]^+ (Le Boudec & Thiran Thm 1.7.1), a latency of L_j/R_j more, L_j the largest frame
//! at the port.
//!
//! It needs one queue per port (FIFO ports, or shaped ones); a port with priority levels or
//! per-class queues has no single rate-latency server for the route to pay once through.

use super::*;

/// An interfering stretch of the route: first hop, last hop, and its arrival curve where it
/// joins as token buckets (burst, rate).
type Stretch = (usize, usize, Vec<(f64, f64)>);

/// The token buckets whose minimum is the concave curve `c` (0 at 0): one per linear piece.
fn token_buckets(c: &Curve) -> Vec<(f64, f64)> {
    let pts = c.points();
    let mut out = Vec::with_capacity(pts.len());
    for (k, p) in pts.iter().enumerate() {
        let slope = match pts.get(k + 1) {
            Some(n) if n.x > p.x => (n.y - p.y) / (n.x - p.x),
            Some(_) => continue,
            None => c.tail_slope(),
        };
        out.push((p.y - slope * p.x, slope));
    }
    out
}

/// Delay and backlog bounds of flow `f` along `ports` by PMOO, from TFA's arrival bounds of the
/// interfering flows (`st`).
pub(super) fn pmoo_route(
    net: &Network,
    lay: &Layout,
    st: &TfaState,
    f: FlowId,
    ports: &[PortId],
) -> Result<(f64, f64), Unbounded> {
    let cx = &lay.crossings;
    let n = ports.len();
    // Each hop's server, its latency including the packetizer before the next hop.
    let mut servers: Vec<(f64, f64)> = Vec::with_capacity(n);
    let mut queue_of = Vec::with_capacity(n);
    for (j, &p) in ports.iter().enumerate() {
        let [q] = lay.port_queues[p][..] else {
            return Err(Unbounded::new(format!(
                "{}: PMOO needs one queue per port, this one has priority levels or classes",
                net.port_label(p)
            )));
        };
        let (rate, latency) =
            st.service[q].as_ref().map_err(|u| u.clone())?.as_rate_latency().ok_or_else(|| {
                Unbounded::new(format!("{}: PMOO needs a rate-latency server", net.port_label(p)))
            })?;
        let packetizer = if j + 1 < n {
            lay.queues[q].crossings.iter().map(|&c| net.flows[cx[c].flow].max_frame_wire).fold(0.0, f64::max)
                / rate
        } else {
            0.0
        };
        servers.push((rate, latency + packetizer));
        queue_of.push(q);
    }
    // The interfering stretches: per (first hop, last hop, port they come from), the crossings
    // where they join the route.
    let mut stretches: BTreeMap<(usize, usize, Option<PortId>), Vec<usize>> = BTreeMap::new();
    let mut open: Vec<(FlowId, usize, usize)> = Vec::new(); // (flow, first hop, joining crossing)
    for j in 0..n {
        let here: Vec<usize> =
            lay.queues[queue_of[j]].crossings.iter().copied().filter(|&c| cx[c].flow != f).collect();
        let mut next_open = Vec::with_capacity(here.len());
        for &c in &here {
            let g = cx[c].flow;
            // Still on the route if it came from this route's previous hop.
            let continues = j > 0 && cx[c].upstream.is_some_and(|u| cx[u].port == ports[j - 1]);
            match open.iter().find(|o| o.0 == g).filter(|_| continues) {
                Some(&(_, first, joining)) => next_open.push((g, first, joining)),
                None => next_open.push((g, j, c)),
            }
        }
        // Stretches that do not go on to this hop end at the previous one.
        for &(g, first, joining) in &open {
            if !next_open.iter().any(|o| o.0 == g && o.1 == first) {
                let from = cx[joining].upstream.map(|u| cx[u].port);
                stretches.entry((first, j - 1, from)).or_default().push(joining);
            }
        }
        open = next_open;
    }
    for &(_, first, joining) in &open {
        let from = cx[joining].upstream.map(|u| cx[u].port);
        stretches.entry((first, n - 1, from)).or_default().push(joining);
    }
    // Each stretch's arrival curve where it joins, as token-bucket pieces.
    let mut interferers: Vec<Stretch> = Vec::with_capacity(stretches.len());
    for ((first, last, _), mut joining) in stretches {
        joining.sort_unstable();
        let alpha = arrival_of(net, lay, st, queue_of[first], &joining).unwrap_or_else(Curve::zero);
        let mut pieces = token_buckets(&alpha);
        if pieces.is_empty() {
            pieces.push((alpha.burst(), alpha.tail_slope()));
        }
        interferers.push((first, last, pieces));
    }
    // Every choice of one bucket per interferer (or the first and last when they are too many).
    let combinations: usize = interferers.iter().map(|i| i.2.len()).product();
    if combinations > 4096 {
        for i in interferers.iter_mut() {
            if i.2.len() > 2 {
                let (a, b) = (i.2[0], *i.2.last().expect("non-empty"));
                i.2 = vec![a, b];
            }
        }
    }
    let mut best: Option<Curve> = None;
    let mut choice = vec![0usize; interferers.len()];
    loop {
        let rate = (0..n)
            .map(|j| {
                let cross: f64 = interferers
                    .iter()
                    .zip(&choice)
                    .filter(|((first, last, _), _)| (*first..=*last).contains(&j))
                    .map(|((_, _, pieces), &k)| pieces[k].1)
                    .sum();
                servers[j].0 - cross
            })
            .fold(f64::INFINITY, f64::min);
        if rate > 0.0 {
            let latency = servers.iter().map(|s| s.1).sum::<f64>()
                + interferers
                    .iter()
                    .zip(&choice)
                    .map(|((first, last, pieces), &k)| {
                        let (b, r) = pieces[k];
                        b + r * servers[*first..=*last].iter().map(|s| s.1).sum::<f64>()
                    })
                    .sum::<f64>()
                    / rate;
            let beta = Curve::rate_latency(rate, latency);
            best = Some(match best {
                None => beta,
                Some(b) => b.max(&beta),
            });
        }
        // The next choice (odometer).
        let mut k = 0;
        while k < choice.len() {
            choice[k] += 1;
            if choice[k] < interferers[k].2.len() {
                break;
            }
            choice[k] = 0;
            k += 1;
        }
        if k == choice.len() {
            break;
        }
    }
    let flow = &net.flows[f];
    let beta = best.ok_or_else(|| {
        Unbounded::new(format!(
            "{}: the interfering flows leave no rate to flow {} along its route (PMOO)",
            net.port_label(ports[0]),
            flow.name
        ))
    })?;
    let alpha = Curve::token_bucket(flow.rate, flow.burst);
    Ok((curves::horizontal_deviation(&alpha, &beta)?, curves::vertical_deviation(&alpha, &beta)?))
}
