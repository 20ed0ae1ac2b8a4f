//! `fifo-lp`: a linear-programming delay bound for feed-forward networks of FIFO servers of
//! rate-latency service crossed by token-bucket flows, solved with HiGHS.
//!
//! **General feed-forward networks** ([`tree_program`], [`prefix_delay`]). A flow's bound is
//! the optimum of Bouillard's polynomial-size PLP program (Performance Evaluation 2022; Bouillard
//! & Stea's FIFO program, IEEE/ACM ToN 2015, with one backlogged period per server) over the sink
//! tree of the servers that can delay it ([`sink_tree`]): its path, then every server from which
//! a flow goes to a server of the tree, nearest to the root first. Where a server's flows go to
//! two servers of the tree, it feeds one and the flows to the other are cut: their piece after
//! the cut carries the burst σ + ρ·d, d a bound on the flow's delay up to there (its own
//! `fifo-lp` bound there, computed first: the network is feed-forward, so the recursion ends;
//! bounds are memoised per flow and route prefix). TFA's per-server delay bounds cap each
//! server's delay. Where the program is small, [`refine`] splits backlogged periods (one start
//! per output date, as in the exact program, by branch and bound over the cases). O(N·D) dates for N servers of depth at most
//! D and O(D²) arrival constraints per piece: polynomial.
//! Cyclic networks are refused, in one line.
//!
//! **Source trees** ([`program`]). Where every flow sharing the path entered at its first
//! server, a second, position-domain program also applies, and the smaller optimum is kept:
//! let the flow of interest cross servers 1..n, server j of service β_j =
//! R_j·[t − T_j]^+, and let every flow that meets it at a server have entered at server 1 with
//! it and follow its path up to a server k_g before leaving it for good. FIFO at every server then
//! keeps the order in which bits entered server 1: what is ahead of a bit at server j entered
//! before it. Let D_j(x) be when the bit that entered at x leaves server j (D_0(x) = x). A FIFO
//! server with service curve β_j lets it go by max over y ≤ x of D_{j−1}(y) + T_j +
//! A_j[y, x]/R_j, with A_j[y, x] the traffic of the flows at server j entered between the bits y
//! and x (Le Boudec & Thiran Thm 1.4.2 taken at the backlog's start, in the order of entry).
//! Unrolled along the path, with y_1 ≤ … ≤ y_n ≤ y_{n+1} = x and ℓ_j = y_{j+1} − y_j:
//!
//!   D_n(x) − x ≤ Σ_j T_j + Σ_j Σ_{g at j} a_{g,j}/R_j − Σ_j ℓ_j,
//!
//! a_{g,j} being flow g's traffic entered between y_j and y_{j+1}. Each flow's token bucket
//! bounds its traffic over any run of consecutive intervals j1..j2 (they lie within
//! Σ_{j1..j2} ℓ_j of time): Σ a_{g,j} ≤ σ_g + ρ_g·Σ ℓ_j. The largest right-hand side under those
//! constraints is a linear program in (ℓ, a) whose value bounds every trajectory's delay.
//!
//! On DEBORAH's source16-50 tandem it gives 18.113 (the LUDB bound of Bisti, Lenzini, Mingozzi
//! and Stea is 18.1, the reachable delay 16.6), where TFA and SFA, which cut the path into
//! servers and grow the cross traffic's bursts at each, give hundreds.
//!
//! **The solver.** The engine builds each flow's program ([`Program`]) and leaves its solution
//! to a [`Solver`] given by the caller: the Python front passes HiGHS (the package highspy).
//! Without a solver, `fifo-lp` is refused and `best` does without it.

use super::network_bounds::{self, Method, Multiplexing, Options};
use super::results::AnalysisReport;
use crate::curves::Unbounded;
use crate::model::{FlowId, Network, NetworkKind, PortId};
use std::collections::HashMap;

/// The method's name in reports.
pub const NAME: &str = "fifo-lp";

/// Why `fifo-lp` cannot bound flow `f`'s route `ports`, or the flows that share its servers as
/// (flow, number of the route's servers it crosses, from the first).
fn interferers(net: &Network, f: FlowId, ports: &[PortId]) -> Result<Vec<(FlowId, usize)>, String> {
    let mut out = Vec::new();
    for (g, flow) in net.flows.iter().enumerate() {
        let route = &flow.routes[0].ports;
        let shared = route.iter().filter(|p| ports.contains(p)).count();
        if shared == 0 {
            continue;
        }
        if route[..shared] != ports[..shared] {
            return Err(format!(
                "flow '{}': fifo-lp needs every flow sharing its servers to enter at its first server \
                 and follow its path until it leaves it for good ('{}' does not)",
                net.flows[f].name, flow.name
            ));
        }
        out.push((g, shared));
    }
    Ok(out)
}

/// Whether `fifo-lp` applies to `net`, or the first rule it breaks, in one line.
pub fn applies(net: &Network, blind: bool) -> Result<(), String> {
    if net.kind != NetworkKind::ServerGraph {
        return Err("fifo-lp applies to server graphs (FIFO rate-latency servers, token-bucket flows)".into());
    }
    if blind {
        return Err("fifo-lp assumes FIFO multiplexing: it has no blind variant".into());
    }
    if !net.port_order().acyclic {
        return Err("fifo-lp applies to feed-forward networks: the servers' dependencies are cyclic \
                    (no order of the servers has every flow going forward), which it does not cover"
            .into());
    }
    Ok(())
}

/// A linear program: maximise c·x subject to A·x ≤ b and x ≥ 0, A given row by row as
/// (column, coefficient) terms.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub objective: Vec<f64>,
    pub rows: Vec<(Vec<(usize, f64)>, f64)>,
}

impl Program {
    fn column(&mut self, cost: f64) -> usize {
        self.objective.push(cost);
        self.objective.len() - 1
    }

    fn row(&mut self, terms: Vec<(usize, f64)>, upper: f64) {
        self.rows.push((terms, upper));
    }

    /// c·x at `x`, when `x` satisfies every constraint (within `tol`), else `None`.
    pub fn value_at(&self, x: &[f64], tol: f64) -> Option<f64> {
        let feasible = x.iter().all(|&v| v >= -tol)
            && self
                .rows
                .iter()
                .all(|(terms, b)| terms.iter().map(|&(c, a)| a * x[c]).sum::<f64>() <= b + tol);
        feasible.then(|| self.objective.iter().zip(x).map(|(c, v)| c * v).sum())
    }
}

/// Solves a [`Program`]: its optimum, or why there is none (unbounded, infeasible, no solver).
pub type Solver<'a> = &'a mut dyn FnMut(&Program) -> Result<f64, String>;

/// Flow `f`'s program, with what turns its optimum into a delay bound: (program, time unit,
/// Σ latencies). Scaled so that the largest burst is 1 and the fastest server sends it in one
/// time unit: a solver's tolerances are absolute, and a description may be in bits and seconds.
pub fn program(net: &Network, f: FlowId) -> Result<(Program, f64, f64), Unbounded> {
    let ports = &net.flows[f].routes[0].ports;
    let flows = interferers(net, f, ports).map_err(Unbounded::new)?;
    let n = ports.len();
    let rate: Vec<f64> = ports.iter().map(|&p| net.ports[p].rate).collect();
    let latency: f64 = ports.iter().map(|&p| net.nodes[net.ports[p].node].technological_latency).sum();
    for (j, &p) in ports.iter().enumerate() {
        let load: f64 = flows.iter().filter(|&&(_, k)| k > j).map(|&(g, _)| net.flows[g].rate).sum();
        if load > rate[j] {
            return Err(Unbounded::new(format!(
                "server '{}' overloaded: offered rate {load} > its rate {}",
                net.nodes[net.ports[p].node].name, rate[j]
            )));
        }
    }
    // Scaled so that the largest burst is 1 and the fastest server serves it in one time unit:
    // HiGHS's tolerances are absolute, and a description may be in bits and seconds.
    let bits = flows.iter().map(|&(g, _)| net.flows[g].burst).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let time = bits / rate.iter().copied().fold(0.0, f64::max);
    let mut lp = Program::default();
    let ell: Vec<usize> = (0..n).map(|_| lp.column(-1.0)).collect();
    for &(g, k) in &flows {
        let (sigma, rho) = (net.flows[g].burst / bits, net.flows[g].rate * time / bits);
        let a: Vec<usize> = (0..k).map(|j| lp.column(bits / (time * rate[j]))).collect();
        for j1 in 0..k {
            for j2 in j1..k {
                let mut row: Vec<(usize, f64)> = (j1..=j2).map(|j| (a[j], 1.0)).collect();
                row.extend((j1..=j2).map(|j| (ell[j], -rho)));
                lp.row(row, sigma);
            }
        }
    }
    Ok((lp, time, latency))
}

/// A flow's passage over a tandem: from position `first` to `last` (inclusive) of the path, with
/// the burst `sigma` it may have at `first`'s input and its long-term rate `rho`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    pub sigma: f64,
    pub rho: f64,
    pub first: usize,
    pub last: usize,
}

/// A server of a [`tree_program`]: rate-latency service R·[t − T]^+, TFA's delay bound `cap`
/// (infinite where there is none), and the server its output goes to in the tree (`None`: the
/// root, where the bit of interest leaves).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeServer {
    pub rate: f64,
    pub latency: f64,
    pub cap: f64,
    pub next: Option<usize>,
}

/// The tandem program of a bit crossing servers 0..n (rates `rate`, latencies `latency`) with the
/// flows `pieces` (the first being the bit's own flow, over the whole tandem): the
/// [`tree_program`] of the line 0 → 1 → … → n−1.
pub fn tandem_program(rate: &[f64], latency: &[f64], caps: &[f64], pieces: &[Piece]) -> (Program, f64) {
    let n = rate.len();
    let servers: Vec<TreeServer> = (0..n)
        .map(|j| TreeServer {
            rate: rate[j],
            latency: latency[j],
            cap: caps[j],
            next: (j + 1 < n).then_some(j + 1),
        })
        .collect();
    tree_program(&servers, pieces)
}

/// The program of a bit through a sink tree of FIFO servers (each server's output goes to at
/// most one other server of the tree, `next`; the root's leaves it), crossed by the flows
/// `pieces`, each from its server `first` along `next` to its server `last`; the first piece is
/// the bit's own flow, its `last` the root. Bouillard & Stea's FIFO program ("Exact worst-case
/// delay for FIFO-multiplexing tandems", ValueTools 2012; "Exact worst-case delay in
/// FIFO-multiplexing feed-forward networks", IEEE/ACM ToN 2015) in the polynomial form of
/// Bouillard's PLP for trees ("Trade-off between accuracy and tractability of network calculus
/// in FIFO networks", Performance Evaluation 2022). Returns (program, time unit): the optimum ×
/// the unit bounds the delay.
///
/// Let depth(h) be the number of servers from h to the root (the root's is 1). The input of
/// server h (its level) carries the dates u = 0..=depth(h), latest first; the root's output (the
/// exit level) the exit date t(exit,0). At level h, t(h,u) for u < depth(h) is the FIFO arrival
/// date of what left h at t(next(h),u), and t(h,depth(h)) the start of h's backlogged period
/// that holds t(next(h),depth(h)−1). A flow's cumulative traffic at those dates is one variable
/// per date of its entry level: FIFO makes what left h by t(next(h),u) equal what entered it by
/// t(h,u), so every later level reads the same F(u). Every constraint holds on every trajectory:
/// * dates: t(h,u+1) ≤ t(h,u) (FIFO keeps order; a backlog starts before its bits arrive), and
///   t(h,u) ≤ t(next(h),u) (a bit leaves after it arrives);
/// * arrival curves, at each flow's entry level e: F(u) − F(v) ≤ σ + ρ·(t(e,u) − t(e,v)), u < v,
///   and F(u) ≥ F(u+1);
/// * service of server h between the start of its backlog and the departure date it holds:
///   Σ_flows [F(depth(h)−1) − F(depth(h))] ≥ R_h·(t(next(h),depth(h)−1) − t(h,depth(h))) − R_h·T_h;
/// * where `cap` is finite (TFA's delay bound of the server, valid for every bit through it):
///   t(next(h),u) − t(h,u) ≤ cap (Bouillard's "TFA constraints" of PLP).
///
/// The objective is the bit's delay t(exit,0) − t(first,0). Scaled so that the largest burst is
/// 1 and the fastest server sends it in one time unit (a solver's tolerances are absolute).
/// O(N·D) dates and O(D²) arrival rows per piece, N servers of depth at most D: polynomial.
pub fn tree_program(servers: &[TreeServer], pieces: &[Piece]) -> (Program, f64) {
    let (lp, time, _) = refined_tree_program(servers, pieces, &vec![Vec::new(); servers.len()]);
    (lp, time)
}

/// Per server of a tree: the number of its output dates (the dates of its successor's input,
/// one for the root), and per date of its input the dates of that level it is known to be no
/// earlier than (`ge[a][b]`: t(a) ≥ t(b), reflexive and transitive).
#[derive(Clone, Debug, Default)]
struct Level {
    outputs: usize,
    ge: Vec<Vec<bool>>,
    /// How many of its output dates' backlogs can be decided (a chain of known order, less one).
    decidable: usize,
    /// Per output date i: the index of the input date that starts its service (None: no
    /// service constraint for it).
    start: Vec<Option<usize>>,
    /// The decided chain's consecutive output dates, (earlier, later).
    chain: Vec<(usize, usize)>,
}

/// The dates of every level of [`refined_tree_program`] and their known order, root first.
fn levels(servers: &[TreeServer], cases: &[Vec<bool>]) -> Vec<Level> {
    let n = servers.len();
    let depth: Vec<usize> =
        (0..n).map(|h| std::iter::successors(Some(h), |&j| servers[j].next).take(n + 1).count()).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&h| depth[h]);
    let mut out: Vec<Level> = vec![Level::default(); n];
    for &h in &order {
        let below = match servers[h].next {
            Some(j) => out[j].ge.clone(),
            None => vec![vec![true]],
        };
        let m = below.len();
        // The preimages of the output dates first, in their order (FIFO keeps it), index i for
        // output date i; then the starts.
        let mut ge: Vec<Vec<bool>> = below.to_vec();
        let add = |ge: &mut Vec<Vec<bool>>| {
            for row in ge.iter_mut() {
                row.push(false);
            }
            ge.push(vec![false; ge.len() + 1]);
            let k = ge.len() - 1;
            ge[k][k] = true;
            k
        };
        // The output dates whose backlogs are decided, from the earliest up (the earliest's start
        // as in the one-period program); each against the latest date before it that it is known
        // to follow (FIFO keeps the order of the dates; with T > 0 a start's order against the
        // earlier dates' is unknown, and a date may follow none).
        let rank = |a: usize| below[a].iter().filter(|&&x| x).count();
        let mut by_time: Vec<usize> = (0..m).collect();
        by_time.sort_by_key(|&a| (rank(a), std::cmp::Reverse(a)));
        let earliest = by_time[0];
        let mut chain: Vec<(usize, usize)> = Vec::new();
        let mut taken = vec![earliest];
        for &d in &by_time[1..] {
            if let Some(&p) = taken.iter().filter(|&&x| below[d][x]).max_by_key(|&&x| rank(x)) {
                chain.push((p, d));
                taken.push(d);
            }
        }
        let decided = cases[h].len().min(chain.len());
        let mut start = vec![None; m];
        // The earliest output date's start, as in the one-period program.
        let first = add(&mut ge);
        ge[earliest][first] = true;
        start[earliest] = Some(first);
        for (&(earlier, i), &new) in chain.iter().zip(&cases[h][..decided]) {
            let previous = start[earlier].expect("decided before");
            if new {
                let u = add(&mut ge);
                ge[i][u] = true; // the start is no later than the bit's arrival
                ge[u][previous] = true; // starts follow their dates' order
                if servers[h].latency == 0.0 {
                    // it follows the earlier output date, itself no earlier than its bit's arrival
                    ge[u][earlier] = true;
                }
                start[i] = Some(u);
            } else {
                start[i] = Some(previous);
            }
        }
        chain.truncate(decided);
        // Transitive closure.
        let k = ge.len();
        for c in 0..k {
            for a in 0..k {
                if ge[a][c] {
                    let via = ge[c].clone();
                    for (x, &y) in ge[a].iter_mut().zip(&via) {
                        *x |= y;
                    }
                }
            }
        }
        let decidable = taken.len() - 1;
        out[h] = Level { outputs: m, decidable, ge, start, chain };
    }
    out
}

/// [`tree_program`] with more backlogged periods: `cases[h]` decides, for server h's output dates
/// from the earliest up, each next date's backlog against the previous one's (false: the same
/// period, true: a later one). Returns (program, time unit, how many of each server's output
/// dates can be decided: those of a chain of known order from the earliest, less one). The one-period program gives a service constraint to the earliest output date of each
/// server only (no `cases`); here each decided date has one too. The start u(o) of output date o
/// is the last minimiser over s ≤ o − T of A(s) − R·s (A the server's input): then D(o) ≥ A(u) +
/// R·(o − T − u), u ≤ the arrival of o's bit, and for o' ≤ o, u(o) = u(o') or u(o) > o' − T (a
/// minimum over a larger set is either the same point or one of the new ones): every trajectory
/// lies in one of the cases, and the largest optimum over cases covering them all is a bound.
/// With T = 0, the later start follows o' and so the arrival of its bit: the dates stay in a total
/// order; with T > 0 its order against the earlier dates is unknown and the token-bucket
/// constraints skip those pairs.
pub(crate) fn refined_tree_program(
    servers: &[TreeServer],
    pieces: &[Piece],
    cases: &[Vec<bool>],
) -> (Program, f64, Vec<usize>) {
    let n = servers.len();
    let levels = levels(servers, cases);
    let bits = pieces.iter().map(|p| p.sigma).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let time = bits / servers.iter().map(|s| s.rate).fold(0.0, f64::max);
    let mut lp = Program::default();
    // t[h][u]: the dates, level by level; t[n]: the exit level.
    let t: Vec<Vec<usize>> = (0..=n)
        .map(|h| (0..if h < n { levels[h].ge.len() } else { 1 }).map(|_| lp.column(0.0)).collect())
        .collect();
    lp.objective[t[n][0]] = 1.0;
    lp.objective[t[pieces[0].first][0]] = -1.0;
    let next = |h: usize| servers[h].next.unwrap_or(n);
    // Every known order a ≥ b of a level, a ≠ b.
    let pairs = |h: usize| -> Vec<(usize, usize)> {
        let ge = &levels[h].ge;
        (0..ge.len())
            .flat_map(|a| (0..ge.len()).filter(move |&b| a != b && ge[a][b]).map(move |b| (a, b)))
            .collect()
    };
    for h in 0..n {
        for (a, b) in pairs(h) {
            lp.row(vec![(t[h][b], 1.0), (t[h][a], -1.0)], 0.0);
        }
        for (&pre, &out) in t[h].iter().zip(&t[next(h)]).take(levels[h].outputs) {
            lp.row(vec![(pre, 1.0), (out, -1.0)], 0.0);
            if servers[h].cap.is_finite() {
                lp.row(vec![(out, 1.0), (pre, -1.0)], servers[h].cap / time);
            }
        }
        // A backlog of its own starts after the previous output date less the latency.
        let start = &levels[h].start;
        for &(earlier, i) in &levels[h].chain {
            if let (Some(u), Some(v)) = (start[i], start[earlier]) {
                if u != v {
                    lp.row(vec![(t[next(h)][earlier], 1.0), (t[h][u], -1.0)], servers[h].latency / time);
                }
            }
        }
    }
    // F[i][u]: flow i's traffic at its entry level's dates; every later level reads the same
    // F at the same date index (the preimage of date u keeps index u).
    let mut crossing: Vec<Vec<&[usize]>> = vec![Vec::new(); n];
    let mut traffic: Vec<Vec<usize>> = Vec::new();
    for piece in pieces {
        let e = piece.first;
        let (sigma, rho) = (piece.sigma / bits, piece.rho * time / bits);
        let f: Vec<usize> = (0..levels[e].ge.len()).map(|_| lp.column(0.0)).collect();
        for (a, b) in pairs(e) {
            lp.row(vec![(f[b], 1.0), (f[a], -1.0)], 0.0);
            lp.row(vec![(f[a], 1.0), (f[b], -1.0), (t[e][a], -rho), (t[e][b], rho)], sigma);
        }
        traffic.push(f);
    }
    for (piece, f) in pieces.iter().zip(&traffic) {
        let mut h = piece.first;
        loop {
            crossing[h].push(f.as_slice());
            match servers[h].next {
                Some(j) if h != piece.last => h = j,
                _ => break,
            }
        }
    }
    for h in 0..n {
        let r = servers[h].rate * time / bits;
        for (i, u) in levels[h].start.iter().enumerate() {
            let Some(u) = *u else { continue };
            // R·(t_out − t_start) − Σ (F_out − F_start) ≤ R·T, in scaled units.
            let mut row = vec![(t[next(h)][i], r), (t[h][u], -r)];
            for f in &crossing[h] {
                row.push((f[i], -1.0));
                row.push((f[u], 1.0));
            }
            lp.row(row, r * servers[h].latency / time);
        }
    }
    (lp, time, levels.iter().map(|l| l.decidable).collect())
}

/// What `fifo-lp` computes, memoised per (flow, number of its route's first servers): the delay
/// bound of a flow over a prefix of its route.
pub type Memo = HashMap<(FlowId, usize), Result<f64, Unbounded>>;

/// The sink tree of the servers that can delay flow `f` over the first `k` servers of its route:
/// (its servers, each one's `next` in the tree). The path is the trunk, its k-th server the
/// root; then, nearest to the root first, every server from which a flow goes to a server of
/// the tree joins it, its `next` being that server, the first found (a server whose flows go to
/// two servers of the tree feeds one; the flows to the other are cut there). So every server
/// upstream of the tree is in it: what crosses the tree entered it at its source or at a cut.
fn sink_tree(net: &Network, f: FlowId, k: usize) -> (Vec<PortId>, Vec<Option<usize>>) {
    let mut tree: Vec<PortId> = net.flows[f].routes[0].ports[..k].to_vec();
    let mut next: Vec<Option<usize>> = (0..k).map(|i| (i + 1 < k).then_some(i + 1)).collect();
    let mut depth: Vec<usize> = (0..k).map(|i| k - i).collect();
    let mut done = vec![false; k];
    while let Some(b) = (0..tree.len()).filter(|&i| !done[i]).min_by_key(|&i| (depth[i], i)) {
        done[b] = true;
        for flow in &net.flows {
            let route = &flow.routes[0].ports;
            for r in 1..route.len() {
                if route[r] == tree[b] && !tree.contains(&route[r - 1]) {
                    tree.push(route[r - 1]);
                    next.push(Some(b));
                    depth.push(depth[b] + 1);
                    done.push(false);
                }
            }
        }
    }
    (tree, next)
}

/// The flows through the sink tree (`tree`, `next`) of flow `f` over its first `k` servers, as
/// (flow, its route's index where the piece starts, piece): `f` first, over its path, then every
/// other flow per maximal run of its route along the tree's edges, with its own (σ, ρ).
fn tree_pieces(
    net: &Network,
    f: FlowId,
    k: usize,
    tree: &[PortId],
    next: &[Option<usize>],
) -> Vec<(FlowId, usize, Piece)> {
    let at = |p: PortId| tree.iter().position(|&q| q == p);
    let own = &net.flows[f];
    let mut out = vec![(f, 0, Piece { sigma: own.burst, rho: own.rate, first: 0, last: k - 1 })];
    for (g, flow) in net.flows.iter().enumerate() {
        if g == f {
            continue;
        }
        let mut current: Option<(usize, Piece)> = None;
        for (r, &p) in flow.routes[0].ports.iter().enumerate() {
            match (at(p), current.as_mut()) {
                (Some(pos), Some((_, piece))) if next[piece.last] == Some(pos) => piece.last = pos,
                (pos, _) => {
                    if let Some((start, piece)) = current.take() {
                        out.push((g, start, piece));
                    }
                    current = pos
                        .map(|pos| (r, Piece { sigma: flow.burst, rho: flow.rate, first: pos, last: pos }));
                }
            }
        }
        if let Some((start, piece)) = current {
            out.push((g, start, piece));
        }
    }
    out
}

/// The servers of the tree that `piece` crosses, from its first to its last, along `next`.
fn along(next: &[Option<usize>], piece: Piece) -> impl Iterator<Item = usize> + '_ {
    std::iter::successors(Some(piece.first), move |&h| if h == piece.last { None } else { next[h] })
}

/// The number of variables of the [`tree_program`] that bounds flow `f` over its whole route:
/// what `best`'s size guard counts ([`BEST_MAX_VARIABLES`]).
pub fn variables(net: &Network, f: FlowId) -> usize {
    let k = net.flows[f].routes[0].ports.len();
    let (tree, next) = sink_tree(net, f, k);
    let depth = |h: usize| std::iter::successors(Some(h), |&j| next[j]).count();
    let dates: usize = (0..tree.len()).map(|h| depth(h) + 1).sum::<usize>() + 1;
    dates + tree_pieces(net, f, k, &tree, &next).iter().map(|(_, _, p)| depth(p.first) + 1).sum::<usize>()
}

/// Flow `f`'s delay bound over the first `k` servers of its route, by the [`tree_program`] over
/// its sink tree ([`sink_tree`]). Every flow that meets the tree enters as a [`Piece`] per
/// maximal run of its route along the tree's edges; a run that does not start at the flow's
/// source (it was cut) brings the burst σ + ρ·d, d a bound on the flow's delay up to there,
/// since a flow of token bucket (σ, ρ) through any system of delay at most d leaves with token
/// bucket (σ + ρ·d, ρ). d is the least of the flow's own bound over its route up to there (computed first, by this function: the network is
/// feed-forward and that server is upstream of the root, so the recursion ends) and the sum of
/// TFA's per-server bounds there.
pub fn prefix_delay(
    net: &Network,
    f: FlowId,
    k: usize,
    tfa: &[f64],
    solver: Solver,
    memo: &mut Memo,
) -> Result<f64, Unbounded> {
    if let Some(known) = memo.get(&(f, k)) {
        return known.clone();
    }
    let result = tree_delay(net, f, k, tfa, &mut *solver, memo);
    memo.insert((f, k), result.clone());
    result
}

fn tree_delay(
    net: &Network,
    f: FlowId,
    k: usize,
    tfa: &[f64],
    solver: Solver,
    memo: &mut Memo,
) -> Result<f64, Unbounded> {
    let (tree, next) = sink_tree(net, f, k);
    let entries = tree_pieces(net, f, k, &tree, &next);
    let mut load = vec![0.0; tree.len()];
    for &(_, _, piece) in &entries {
        for h in along(&next, piece) {
            load[h] += piece.rho;
        }
    }
    for (h, &p) in tree.iter().enumerate() {
        if load[h] > net.ports[p].rate {
            return Err(Unbounded::new(format!(
                "server '{}' overloaded: offered rate {} > its rate {}",
                net.nodes[net.ports[p].node].name, load[h], net.ports[p].rate
            )));
        }
    }
    // A bound on flow g's delay from its source to the input of its route's server r (r ≥ 1).
    let mut upstream = |g: FlowId, r: usize| -> Result<f64, Unbounded> {
        let tfa_sum: f64 = net.flows[g].routes[0].ports[..r].iter().map(|&p| tfa[p]).sum();
        Ok(prefix_delay(net, g, r, tfa, &mut *solver, memo)?.min(tfa_sum))
    };
    let mut pieces = Vec::new();
    for &(g, start, mut piece) in &entries {
        if start > 0 {
            piece.sigma += piece.rho * upstream(g, start)?;
        }
        pieces.push(piece);
    }
    let servers: Vec<TreeServer> = tree
        .iter()
        .zip(&next)
        .map(|(&p, &next)| TreeServer {
            rate: net.ports[p].rate,
            latency: net.nodes[net.ports[p].node].technological_latency,
            cap: tfa[p],
            next,
        })
        .collect();
    // The trunk from the root back, then the other servers nearest the root first.
    let order: Vec<usize> = (0..k).rev().chain(k..tree.len()).collect();
    let (value, time) = refine(&servers, &pieces, &order, solver).map_err(|why| {
        Unbounded::new(format!("flow '{}': the linear program has no optimum ({why})", net.flows[f].name))
    })?;
    // A solver's optimum is within its tolerances (HiGHS: 1e-7, on this scale) of the true
    // one: raised by more than that, it stays an upper bound.
    Ok((value + 1e-6 * value.abs().max(1.0)) * time)
}

/// How many programs [`refine`] may solve for one bound (the one-period program included), at
/// most, and while the variables of the programs solved stay within [`REFINE_WORK`].
pub const REFINE_PROGRAMS: usize = 64;

/// The variables [`refine`] may spend over all its programs for one bound.
pub const REFINE_WORK: usize = 10_000;

/// [`refine`] stops when this many programs in a row have not lowered the bound.
pub const REFINE_PATIENCE: usize = 12;

/// [`refine`] splits backlogged periods only where the one-period program has at most this
/// many variables: each split adds dates at every level upstream, and HiGHS's time grows faster
/// than the program (on the tandems of benchmarks/fifo_lp.py, 100 variables and more, the splits
/// cost 20 to 100 times the one-period program for a few per cent at most).
pub const REFINE_MAX_VARIABLES: usize = 100;

/// The optimum of the [`tree_program`] of `servers` and `pieces`, tightened by branch and bound
/// over [`refined_tree_program`]'s cases: each node decides one more output date's backlogged
/// period (same as the previous date's, or a later one), servers taken in `order`, each from its
/// earliest output date up; its two children's optima are at most its own (they only add
/// constraints). The node of the largest optimum is split first; the search stops when that
/// node has nothing left to decide (its optimum is then the exact value of the case program),
/// at the budget ([`REFINE_PROGRAMS`], [`REFINE_WORK`]), or when [`REFINE_PATIENCE`] programs in
/// a row have not lowered the bound. Every trajectory lies in a case under one of the open
/// nodes, so the largest open optimum is a bound. A case the solver finds infeasible holds no
/// trajectory and is dropped. Returns (optimum, time unit).
fn refine(
    servers: &[TreeServer],
    pieces: &[Piece],
    order: &[usize],
    solver: Solver,
) -> Result<(f64, f64), String> {
    let empty = vec![Vec::new(); servers.len()];
    let (lp, time, outputs) = refined_tree_program(servers, pieces, &empty);
    let root = solver(&lp)?;
    if lp.objective.len() > REFINE_MAX_VARIABLES {
        return Ok((root, time));
    }
    // The next undecided output date of a node, as the server whose cases it extends.
    let step = |cases: &[Vec<bool>], decidable: &[usize]| {
        order.iter().copied().find(|&h| cases[h].len() < decidable[h])
    };
    let mut open: Vec<(f64, Vec<Vec<bool>>, Vec<usize>)> = vec![(root, empty, outputs)];
    let (mut solved, mut lowered, mut last, mut work) = (1, 1, root, lp.objective.len());
    loop {
        let best = (0..open.len()).max_by(|&a, &b| open[a].0.total_cmp(&open[b].0)).expect("a node is open");
        let bound = open[best].0;
        if bound < last - 1e-9 * last.abs().max(1.0) {
            (lowered, last) = (solved, bound);
        }
        let Some(h) = step(&open[best].1, &open[best].2) else { return Ok((bound, time)) };
        if solved + 2 > REFINE_PROGRAMS || work > REFINE_WORK || solved - lowered >= REFINE_PATIENCE {
            return Ok((bound, time));
        }
        let (bound, cases, _) = open.swap_remove(best);
        for new in [false, true] {
            let mut child = cases.clone();
            child[h].push(new);
            let (lp, _, outputs) = refined_tree_program(servers, pieces, &child);
            solved += 1;
            work += lp.objective.len();
            match solver(&lp) {
                Ok(value) => open.push((value.min(bound), child, outputs)),
                Err(why) if why.contains("Infeasible") => {}
                Err(_) => open.push((bound, child, outputs)),
            }
        }
        if open.is_empty() {
            // Every case infeasible: numerically impossible for a feasible parent; keep it.
            return Ok((bound, time));
        }
    }
}

/// The LP bound of flow `f` along its route (s), or why it has none (an overloaded server, no
/// optimum): the tandem program's, and where every interferer entered with `f`, the smaller of
/// it and the source-tree program's.
fn route_bound_memo(
    net: &Network,
    f: FlowId,
    tfa: &[f64],
    solver: Solver,
    memo: &mut Memo,
) -> Result<f64, Unbounded> {
    let k = net.flows[f].routes[0].ports.len();
    let tandem = prefix_delay(net, f, k, tfa, &mut *solver, memo)?;
    if interferers(net, f, &net.flows[f].routes[0].ports).is_err() {
        return Ok(tandem);
    }
    let (lp, time, latency) = program(net, f)?;
    match solver(&lp) {
        Ok(value) => Ok(tandem.min(latency + (value + 1e-6 * value.abs().max(1.0)) * time)),
        Err(_) => Ok(tandem),
    }
}

/// The LP bound of flow `f` along its route (s), or why it has none.
pub fn route_bound(net: &Network, f: FlowId, solver: Solver) -> Result<f64, Unbounded> {
    route_bound_memo(net, f, &tfa_delays(net), solver, &mut Memo::new())
}

/// TFA's delay bound of every server (s; infinite where it has none), under FIFO multiplexing.
fn tfa_delays(net: &Network) -> Vec<f64> {
    let opt = Options { method: Method::Tfa, grouping: false, multiplexing: Multiplexing::Fifo };
    network_bounds::analyze(net, &opt).ports.iter().map(|p| p.delay_us / 1e6).collect()
}

/// `fifo-lp` on every flow: SFA's report (its backlogs and port rows) with each flow's delay
/// bound the program's.
pub fn analyze(net: &Network, solver: Solver) -> AnalysisReport {
    let opt = Options { method: Method::Sfa, grouping: false, multiplexing: Multiplexing::Fifo };
    let mut report = network_bounds::analyze(net, &opt);
    report.method = NAME.to_string();
    let (tfa, mut memo) = (tfa_delays(net), Memo::new());
    for row in report.flows.iter_mut() {
        let bound = route_bound_memo(net, row.flow, &tfa, solver, &mut memo);
        network_bounds::set_delay(net, row, bound, NAME);
    }
    report
}

/// `best` runs `fifo-lp` only where no flow's program ([`variables`]) has more variables than
/// this: past it, a program can take HiGHS seconds to minutes, and `best` keeps the other
/// methods' bounds with a note (`--method fifo-lp` alone still runs it).
pub const BEST_MAX_VARIABLES: usize = 2_000;

/// `best` on a server graph under FIFO multiplexing: where `fifo-lp` applies to a flow and is
/// tighter than the other methods, its bound; skipped, with a note, where a flow's program has
/// more than [`BEST_MAX_VARIABLES`] variables.
pub fn tighten(net: &Network, report: &mut AnalysisReport, solver: Solver) {
    tighten_within(net, report, solver, BEST_MAX_VARIABLES)
}

/// [`tighten`] with the size guard `max_variables`.
pub fn tighten_within(net: &Network, report: &mut AnalysisReport, solver: Solver, max_variables: usize) {
    if net.kind != NetworkKind::ServerGraph || !net.port_order().acyclic {
        return;
    }
    let largest = (0..net.flows.len()).map(|f| (variables(net, f), f)).max();
    if let Some((size, f)) = largest.filter(|&(size, _)| size > max_variables) {
        report.notes.push(format!(
            "fifo-lp skipped by best: flow '{}''s linear program has {size} variables, above best's \
             limit of {max_variables} (run it alone with --method fifo-lp)",
            net.flows[f].name
        ));
        return;
    }
    let (tfa, mut memo) = (tfa_delays(net), Memo::new());
    for row in report.flows.iter_mut() {
        if let Ok(d) = route_bound_memo(net, row.flow, &tfa, solver, &mut memo) {
            if d * 1e6 < row.delay_us {
                network_bounds::set_delay(net, row, Ok(d), NAME);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{run, run_with, Request};
    use crate::model::load_network;
    use serde_json::json;

    fn graph(servers: &[(f64, f64)], flows: &[(f64, f64, &[usize])]) -> Network {
        let servers: Vec<_> = servers
            .iter()
            .enumerate()
            .map(|(i, &(rate, latency))| json!({"name": format!("s{i}"), "rate": rate, "latency": latency}))
            .collect();
        let flows: Vec<_> = flows
            .iter()
            .enumerate()
            .map(|(i, &(burst, rate, path))| {
                let path: Vec<String> = path.iter().map(|s| format!("s{s}")).collect();
                json!({"name": format!("f{i}"), "burst": burst, "rate": rate, "path": path})
            })
            .collect();
        let doc = json!({"name": "g", "server_graph": {"servers": servers, "flows": flows}});
        let (n, d) = load_network(&doc.to_string());
        n.unwrap_or_else(|| panic!("{:?}", d.0))
    }

    /// DEBORAH's source16-50: servers of rates 128 − 8k (k = 0..15), latency 1; flow 0 over all,
    /// flow k over the first k servers; every flow (5, 4).
    fn source16() -> Network {
        let servers: Vec<(f64, f64)> = (0..16).map(|k| (128.0 - 8.0 * k as f64, 1.0)).collect();
        let paths: Vec<Vec<usize>> =
            std::iter::once((0..16).collect()).chain((1..16).map(|k| (0..k).collect())).collect();
        let flows: Vec<(f64, f64, &[usize])> = paths.iter().map(|p| (5.0, 4.0, p.as_slice())).collect();
        graph(&servers, &flows)
    }

    /// Every burst at once (all ℓ = 0), each flow's at the slowest server it crosses: a feasible
    /// point of the program, worth 16 + Σ_g 5/R_{k_g} = 16 + (5/8)·H_16 = 18.11296 (H_16 the 16th
    /// harmonic number): the program's optimum is at least that, so no solver can give less.
    #[test]
    fn source16_program_reaches_every_burst_at_once() {
        let net = source16();
        let (lp, time, latency) = program(&net, 0).unwrap();
        assert_eq!(latency, 16.0);
        // Columns: 16 intervals, then per flow (in network order) one per server it crosses.
        let mut x = vec![0.0; lp.objective.len()];
        let mut col = 16;
        for k in std::iter::once(16).chain(1..16) {
            x[col + k - 1] = 1.0; // the burst (scaled to 1) at its last, slowest server
            col += k;
        }
        assert_eq!(col, lp.objective.len());
        let value = lp.value_at(&x, 1e-12).expect("feasible") * time;
        let h16: f64 = (1..=16).map(|m| 1.0 / m as f64).sum();
        assert!((latency + value - (16.0 + 0.625 * h16)).abs() < 1e-12, "{}", latency + value);
        // The same bursts once more at the first server break a token bucket.
        x[16] = 1.0;
        assert!(lp.value_at(&x, 1e-12).is_none());
    }

    #[test]
    fn rules_are_named_in_one_line() {
        let net = source16();
        assert!(applies(&net, false).is_ok());
        assert!(applies(&net, true).unwrap_err().contains("FIFO"));
        // f1 joins f0 at its second server: a general feed-forward network, covered.
        let joined = graph(&[(10.0, 1.0), (10.0, 1.0)], &[(1.0, 1.0, &[0, 1]), (1.0, 1.0, &[1])]);
        assert!(applies(&joined, false).is_ok());
        // f0 goes s0 -> s1, f1 s1 -> s0: cyclic, refused in one line.
        let cyclic = graph(&[(10.0, 1.0), (10.0, 1.0)], &[(1.0, 1.0, &[0, 1]), (1.0, 1.0, &[1, 0])]);
        let why = applies(&cyclic, false).unwrap_err();
        assert!(why.contains("cyclic") && !why.contains('\n'), "{why}");
        let req = Request { method: NAME.into(), ..Default::default() };
        assert!(run(&cyclic, &req).unwrap_err().contains("cyclic"));
        // Without a solver: refused, and best does without it.
        assert!(run(&net, &req).unwrap_err().contains("highspy"));
        let best = run(&net, &Request { method: "best".into(), ..Default::default() }).unwrap();
        assert!(best.flows.iter().all(|r| r.method != NAME));
    }

    /// In `best`, every flow of a feed-forward graph is asked. Every program is worth 0 here, so
    /// the period splitting ([`refine`]) never gains and goes, largest (the last of equals)
    /// first, down one branch until nothing is left to decide. f0 over s0, s1 (joined at s1 by
    /// f2, which starts there): its tree program, and s0's two output dates decided: 1 + 2. f1
    /// over s0 (with f0, which entered there too): its tree program (one output date, nothing
    /// to decide) and the source-tree one, 2. f2 over s1, s2: its tree takes s0 (f0 goes s0 →
    /// s1), so f0 enters with its own burst and no bound upstream is needed: its tree program,
    /// s1's two output dates (2), then, under s1's "later period" case, s0's four (3 decisions,
    /// 6): 9. 3 + 2 + 9 = 14 (the path alone, without s0, would cut f0 and ask for its bound
    /// over s0).
    #[test]
    fn best_asks_for_every_flow() {
        let net = graph(
            &[(10.0, 1.0), (10.0, 1.0), (10.0, 1.0)],
            &[(1.0, 1.0, &[0, 1]), (1.0, 1.0, &[0]), (1.0, 1.0, &[1, 2])],
        );
        assert!(applies(&net, false).is_ok());
        let mut asked = 0;
        let mut count = |_: &Program| -> Result<f64, String> {
            asked += 1;
            Ok(0.0)
        };
        let req = Request { method: "best".into(), ..Default::default() };
        let r = run_with(&net, &req, Some(&mut count)).unwrap();
        assert_eq!(asked, 14);
        assert!(r.flows.iter().all(|f| f.method == NAME));
    }

    /// f0 over s2 → s3; f1 s0 → s2 → s3; f2 s1 → s3; f3 s0 → s1. f0's sink tree: its path (s2,
    /// s3), then nearest the root first: s1 (f2 goes s1 → s3), then s0 (f1 goes s0 → s2, found
    /// from s2 before s1). f3 goes s0 → s1, but s0 feeds s2: f3 is cut there and enters s1 again
    /// from its route's second server, with the burst of its bound over s0.
    #[test]
    fn the_sink_tree_takes_every_upstream_server() {
        let net = graph(
            &[(10.0, 0.0), (10.0, 0.0), (10.0, 0.0), (10.0, 0.0)],
            &[(1.0, 1.0, &[2, 3]), (1.0, 1.0, &[0, 2, 3]), (1.0, 1.0, &[1, 3]), (1.0, 1.0, &[0, 1])],
        );
        let (tree, next) = sink_tree(&net, 0, 2);
        let names: Vec<&str> = tree.iter().map(|&p| net.nodes[net.ports[p].node].name.as_str()).collect();
        assert_eq!(names, ["s2", "s3", "s1", "s0"]);
        assert_eq!(next, [Some(1), None, Some(1), Some(0)]);
        let piece = |first, last| Piece { sigma: 1.0, rho: 1.0, first, last };
        assert_eq!(
            tree_pieces(&net, 0, 2, &tree, &next),
            [
                (0, 0, piece(0, 1)),
                (1, 0, piece(3, 1)),
                (2, 0, piece(2, 1)),
                (3, 0, piece(3, 3)),
                (3, 1, piece(2, 2))
            ]
        );
        // Variables: dates (depths 2, 1, 2, 3: 3 + 2 + 3 + 4, and the exit) 13, the pieces'
        // traffic at their entry level's dates 3 + 4 + 3 + 4 + 3 = 17.
        assert_eq!(variables(&net, 0), 30);
    }

    /// `best`'s size guard: source16-50's largest program (flow t's, over the 16-server path, the
    /// tree being the path: dates Σ_{j=0..15} (17 − j) + 1 = 153, 16 flows entering at depth 16:
    /// 16·17 = 272) has 425 variables. With a limit below it, fifo-lp is skipped with a note and
    /// the solver never asked; at it, fifo-lp runs.
    #[test]
    fn best_skips_programs_above_its_size_limit() {
        let net = source16();
        assert_eq!(variables(&net, 0), 425);
        assert!((1..16).all(|f| variables(&net, f) <= 425));
        let opt = Options { method: Method::Sfa, grouping: false, multiplexing: Multiplexing::Fifo };
        let mut never = |_: &Program| -> Result<f64, String> { panic!("no program above the limit") };
        let mut report = network_bounds::analyze(&net, &opt);
        tighten_within(&net, &mut report, &mut never, 424);
        assert!(report.flows.iter().all(|r| r.method != NAME));
        let note = report.notes.iter().find(|n| n.contains("fifo-lp skipped")).expect("a note");
        assert!(note.contains("425 variables") && note.contains("--method fifo-lp"), "{note}");
        let mut zero = |_: &Program| -> Result<f64, String> { Ok(0.0) };
        let mut report = network_bounds::analyze(&net, &opt);
        tighten_within(&net, &mut report, &mut zero, 425);
        assert!(report.flows.iter().any(|r| r.method == NAME));
        assert!(report.notes.iter().all(|n| !n.contains("fifo-lp skipped")));
    }

    /// f0 (1, 1) over s0, s1, both (10, 1); f1 (1, 1) joins at s1. A reachable trajectory: f0's
    /// burst at 0 leaves s0 during [1, 1.1] (s0 lazy until its latency is over); s1's backlog
    /// starts at 1; f1 sends its burst at 1 and 0.1 more by 1.1, ahead of f0's last bit (the
    /// tagged bit, in at 1.1): 2.1 ahead of it, which lazy s1 serves from 2 at rate 10: the
    /// tagged bit leaves at 2.21. That point must be feasible in the program (else the program
    /// would cut off a real trajectory: unsound), and no exit later than 2.21 with it.
    #[test]
    fn tandem_program_holds_a_reachable_trajectory() {
        let pieces = [
            Piece { sigma: 1.0, rho: 1.0, first: 0, last: 1 },
            Piece { sigma: 1.0, rho: 1.0, first: 1, last: 1 },
        ];
        let inf = f64::INFINITY;
        let (lp, time) = tandem_program(&[10.0, 10.0], &[1.0, 1.0], &[inf, inf], &pieces);
        assert_eq!(time, 0.1);
        // Columns: dates t(0,0..2), t(1,0..1), t(2,0), then f0's F(0..2), f1's F(0..1); scaled
        // by the time unit 0.1 and the bit unit 1.
        let mut x = vec![0.0, 0.0, 0.0, 11.0, 10.0, 22.1, 1.0, 0.0, 0.0, 1.1, 0.0];
        assert_eq!(x.len(), lp.objective.len());
        let value = lp.value_at(&x, 1e-9).expect("the trajectory is feasible") * time;
        assert!((value - 2.21).abs() < 1e-9, "{value}");
        x[5] = 22.2; // s1 cannot hold the tagged bit longer with that backlog
        assert!(lp.value_at(&x, 1e-9).is_none());
    }

    /// An overloaded server: an infinite bound with the reason, the solver never asked.
    #[test]
    fn overload_is_unbounded_with_its_reason() {
        let net = graph(&[(10.0, 1.0)], &[(1.0, 6.0, &[0]), (1.0, 6.0, &[0])]);
        let mut never =
            |_: &Program| -> Result<f64, String> { panic!("no program for an overloaded server") };
        let req = Request { method: NAME.into(), ..Default::default() };
        let r = run_with(&net, &req, Some(&mut never)).unwrap();
        assert!(r
            .flows
            .iter()
            .all(|f| f.delay_us.is_infinite() && f.reason.as_deref().unwrap().contains("overloaded")));
    }

    /// The solver's optimum becomes the bound, raised by its tolerance: the tandem program's
    /// optimum × the time unit (its objective holds the latencies), the source-tree program's
    /// Σ latencies + optimum × the time unit; the smaller of the two; `best` takes it where it
    /// is smaller than the other methods'.
    #[test]
    fn the_optimum_becomes_the_bound() {
        // Two flows (25, 5) over two servers (10, 10): the aggregate's end-to-end service is
        // (10, 20), so the exact worst case is 20 + 50/10 = 25; in the programs' units (burst
        // 25, time 2.5) that is an optimum of 10 for the tandem program (45 from the other).
        let net = graph(&[(10.0, 10.0), (10.0, 10.0)], &[(25.0, 5.0, &[0, 1]), (25.0, 5.0, &[0, 1])]);
        let mut ten = |_: &Program| -> Result<f64, String> { Ok(10.0) };
        let req = Request { method: "best".into(), ..Default::default() };
        let r = run_with(&net, &req, Some(&mut ten)).unwrap();
        for f in r.flows.iter() {
            assert_eq!(f.method, NAME);
            assert!(f.delay_us / 1e6 >= 25.0 && f.delay_us / 1e6 < 25.0 + 1e-4, "{}", f.delay_us);
        }
    }
}
