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

/// Per crossing of the network, scratch state reused by every route's PMOO (so that a route
/// costs what its hops hold, not what the network holds): the stretch (first hop, joining
/// crossing) a crossing on the current hop belongs to; every route leaves it empty.
pub(super) struct Scratch {
    stretch: Vec<Option<(usize, usize)>>,
    /// The largest frame on the wire of each queue, once known.
    largest: Vec<Option<f64>>,
    /// Σ source bursts and Σ rates of each queue's flows, once known.
    totals: Vec<Option<(f64, f64)>>,
}

impl Scratch {
    pub(super) fn new(lay: &Layout) -> Scratch {
        Scratch {
            stretch: vec![None; lay.crossings.len()],
            largest: vec![None; lay.queues.len()],
            totals: vec![None; lay.queues.len()],
        }
    }

    fn totals(&mut self, net: &Network, lay: &Layout, q: usize) -> (f64, f64) {
        *self.totals[q].get_or_insert_with(|| {
            lay.queues[q]
                .crossings
                .iter()
                .map(|&c| &net.flows[lay.crossings[c].flow])
                .fold((0.0, 0.0), |(b, r), f| (b + f.burst, r + f.rate))
        })
    }

    fn largest_frame(&mut self, net: &Network, lay: &Layout, q: usize) -> f64 {
        *self.largest[q].get_or_insert_with(|| {
            lay.queues[q]
                .crossings
                .iter()
                .map(|&c| net.flows[lay.crossings[c].flow].max_frame_wire)
                .fold(0.0, f64::max)
        })
    }
}

/// Every index vector below the given sizes, first index fastest.
struct Odometer {
    sizes: Vec<usize>,
    next: Option<Vec<usize>>,
}

impl Odometer {
    fn new(sizes: Vec<usize>) -> Odometer {
        let next = sizes.iter().all(|&n| n > 0).then(|| vec![0; sizes.len()]);
        Odometer { sizes, next }
    }
}

impl Iterator for Odometer {
    type Item = Vec<usize>;
    fn next(&mut self) -> Option<Vec<usize>> {
        let current = self.next.take()?;
        let mut following = current.clone();
        let mut k = 0;
        while k < following.len() {
            following[k] += 1;
            if following[k] < self.sizes[k] {
                self.next = Some(following);
                break;
            }
            following[k] = 0;
            k += 1;
        }
        Some(current)
    }
}

/// A lower bound of [`pmoo_route`]'s delay, from sums kept per queue (so that `best` need not
/// run PMOO where it cannot win): the route's latencies and packetizers, and the flow's burst
/// with the largest sum of the interferers' source bursts at one hop (every interferer there is
/// paid whole, and its burst where it joins is at least its burst at its source), over the
/// left-over rate of the route, which no choice of buckets makes larger.
pub(super) fn pmoo_lower_bound(
    net: &Network,
    lay: &Layout,
    st: &TfaState,
    f: FlowId,
    ports: &[PortId],
    scratch: &mut Scratch,
) -> f64 {
    let flow = &net.flows[f];
    let (mut latency, mut rate, mut bursts) = (0.0, f64::INFINITY, 0.0f64);
    for (j, &p) in ports.iter().enumerate() {
        let [q] = lay.port_queues[p][..] else { return f64::INFINITY };
        let Some((r, t)) = st.service[q].as_ref().ok().and_then(|s| s.as_rate_latency()) else {
            return f64::INFINITY;
        };
        let packetizer = if j + 1 < ports.len() { scratch.largest_frame(net, lay, q) / r } else { 0.0 };
        let (b_all, r_all) = scratch.totals(net, lay, q);
        latency += t + packetizer;
        rate = rate.min(r - (r_all - flow.rate));
        bursts = bursts.max(b_all - flow.burst);
    }
    if rate <= 0.0 {
        return f64::INFINITY;
    }
    latency + (flow.burst + bursts) / rate
}

/// Delay and backlog bounds of flow `f` along `ports` by PMOO, from TFA's arrival bounds of the
/// interfering flows (`st`).
pub(super) fn pmoo_route(
    net: &Network,
    lay: &Layout,
    st: &TfaState,
    f: FlowId,
    ports: &[PortId],
    scratch: &mut Scratch,
) -> Result<(f64, f64), Unbounded> {
    let beta = pmoo_service(net, lay, st, f, ports, scratch)?;
    let flow = &net.flows[f];
    let alpha = Curve::token_bucket(flow.rate, flow.burst);
    Ok((curves::horizontal_deviation(&alpha, &beta)?, curves::vertical_deviation(&alpha, &beta)?))
}

/// PMOO's end-to-end left-over service of flow `f` along `ports`: per choice of one token bucket
/// per interfering stretch, the rate-latency curve of the PMOO formula, and their maximum.
pub(super) fn pmoo_service(
    net: &Network,
    lay: &Layout,
    st: &TfaState,
    f: FlowId,
    ports: &[PortId],
    scratch: &mut Scratch,
) -> Result<Curve, Unbounded> {
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
        let packetizer = if j + 1 < n { scratch.largest_frame(net, lay, q) / rate } else { 0.0 };
        servers.push((rate, latency + packetizer));
        queue_of.push(q);
    }
    // The interfering stretches: per (first hop, last hop, port they come from), the crossings
    // where they join the route. A crossing continues the stretch of its upstream crossing when
    // that one is on the route's previous hop.
    // (first hop, last hop, port they come from) of a stretch, and a crossing joining there.
    type End = ((usize, usize, Option<PortId>), usize);
    let mut ends: Vec<End> = Vec::new();
    let mut previous: Vec<usize> = Vec::new();
    for j in 0..n {
        let mut current = Vec::with_capacity(lay.queues[queue_of[j]].crossings.len());
        for &c in &lay.queues[queue_of[j]].crossings {
            if cx[c].flow == f {
                continue;
            }
            let continued = cx[c]
                .upstream
                .filter(|&u| j > 0 && cx[u].port == ports[j - 1])
                .and_then(|u| scratch.stretch[u].take());
            scratch.stretch[c] = Some(continued.unwrap_or((j, c)));
            current.push(c);
        }
        // Stretches that do not go on to this hop end at the previous one.
        for &u in &previous {
            if let Some((first, joining)) = scratch.stretch[u].take() {
                let from = cx[joining].upstream.map(|x| cx[x].port);
                ends.push(((first, j - 1, from), joining));
            }
        }
        previous = current;
    }
    for &u in &previous {
        if let Some((first, joining)) = scratch.stretch[u].take() {
            let from = cx[joining].upstream.map(|x| cx[x].port);
            ends.push(((first, n - 1, from), joining));
        }
    }
    ends.sort_unstable();
    let stretches =
        ends.chunk_by(|a, b| a.0 == b.0).map(|run| (run[0].0, run.iter().map(|e| e.1).collect::<Vec<_>>()));
    // Each stretch's arrival curve where it joins, as token-bucket pieces.
    let mut interferers: Vec<Stretch> = Vec::new();
    for ((first, last, _), joining) in stretches {
        let q = queue_of[first];
        // A token bucket in closed form when the groups involved are ones, else the curve.
        let pieces = match arrival_tb(st, net, lay, q, &joining) {
            Some(tb) => vec![tb],
            None => {
                let alpha = arrival_of(net, lay, st, q, &joining).unwrap_or_else(Curve::zero);
                let mut pieces = token_buckets(&alpha);
                if pieces.is_empty() {
                    pieces.push((alpha.burst(), alpha.tail_slope()));
                }
                pieces
            }
        };
        interferers.push((first, last, pieces));
    }
    // Every choice of one bucket per interferer while they are few; else two choices, every
    // interferer by its first bucket (burst at 0, peak rate) or by its last (long-term rate).
    let combinations = interferers
        .iter()
        .map(|i| i.2.len())
        .try_fold(1usize, |acc, n| acc.checked_mul(n))
        .unwrap_or(usize::MAX);
    let choices: Box<dyn Iterator<Item = Vec<usize>>> = if combinations <= 64 {
        Box::new(Odometer::new(interferers.iter().map(|i| i.2.len()).collect()))
    } else {
        let last: Vec<usize> = interferers.iter().map(|i| i.2.len() - 1).collect();
        Box::new([vec![0; interferers.len()], last].into_iter())
    };
    let mut best: Option<Curve> = None;
    for choice in choices {
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
    }
    best.ok_or_else(|| {
        Unbounded::new(format!(
            "{}: the interfering flows leave no rate to flow {} along its route (PMOO)",
            net.port_label(ports[0]),
            net.flows[f].name
        ))
    })
}
