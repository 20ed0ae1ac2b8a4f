//! The linear programs of `fifo-lp`: a bit's delay through a sink tree of FIFO servers
//! ([`tree_program`]), and the branch and bound that splits backlogged periods ([`refine`]).

use super::{Effort, Program, Solver};

/// A flow's passage over a tandem: from position `first` to `last` (inclusive) of the path, with
/// the burst `sigma` it may have at `first`'s input and its long-term rate `rho`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    pub sigma: f64,
    pub rho: f64,
    pub first: usize,
    pub last: usize,
}

/// A server of a [`tree_program`]: its service curve, the convex β(t) = max_i R_i·[t − T_i]^+
/// given as its pieces (R_i, T_i) (one for a rate-latency server), TFA's delay bound `cap`
/// (infinite where there is none), and the server its output goes to in the tree (`None`: the
/// root, where the bit of interest leaves).
#[derive(Clone, Debug, PartialEq)]
pub struct TreeServer {
    pub service: Vec<(f64, f64)>,
    pub cap: f64,
    pub next: Option<usize>,
}

impl TreeServer {
    /// A rate-latency server R·[t − T]^+.
    pub fn rate_latency(rate: f64, latency: f64, cap: f64, next: Option<usize>) -> TreeServer {
        TreeServer { service: vec![(rate, latency)], cap, next }
    }

    /// Its long-term rate (the largest of its pieces').
    pub fn rate(&self) -> f64 {
        self.service.iter().map(|&(r, _)| r).fold(0.0, f64::max)
    }

    /// Whether its service is R·t (one piece, no latency): a later backlogged period then starts
    /// after an earlier output date ([`refined_tree_program`]).
    fn without_latency(&self) -> bool {
        matches!(self.service[..], [(_, t)] if t == 0.0)
    }
}

/// A line into server `server` of a tree: what the pieces `members` bring to it there came out of
/// one upstream server that never sends more than `rate`·Δ + `packet` in any interval of length
/// Δ (its maximum service curve: a link's line rate, and the frame a store-and-forward receiver
/// takes at once). Over any two dates of the server's input level, a ≥ b, the members' traffic
/// then obeys Σ (F(a) − F(b)) ≤ rate·(t(a) − t(b)) + packet: line shaping, as grouping is in TFA.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub server: usize,
    pub members: Vec<usize>,
    pub rate: f64,
    pub packet: f64,
}

/// The tandem program of a bit crossing servers 0..n (rates `rate`, latencies `latency`) with the
/// flows `pieces` (the first being the bit's own flow, over the whole tandem): the
/// [`tree_program`] of the line 0 → 1 → … → n−1.
pub fn tandem_program(rate: &[f64], latency: &[f64], caps: &[f64], pieces: &[Piece]) -> (Program, f64) {
    let n = rate.len();
    let servers: Vec<TreeServer> = (0..n)
        .map(|j| TreeServer::rate_latency(rate[j], latency[j], caps[j], (j + 1 < n).then_some(j + 1)))
        .collect();
    tree_program(&servers, pieces, &[])
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
///   Σ_flows [F(depth(h)−1) − F(depth(h))] ≥ R_h·(t(next(h),depth(h)−1) − t(h,depth(h))) − R_h·T_h,
///   once per piece (R_h, T_h) of a convex service curve (β is their maximum, so it is above each);
/// * where `cap` is finite (TFA's delay bound of the server, valid for every bit through it):
///   t(next(h),u) − t(h,u) ≤ cap (Bouillard's "TFA constraints" of PLP);
/// * at every [`Line`] into a server, over every two dates of its level known to be in order,
///   the line's members bring at most the line's maximum service (line shaping).
///
/// The objective is the bit's delay t(exit,0) − t(first,0). Scaled so that the largest burst is
/// 1 and the fastest server sends it in one time unit (a solver's tolerances are absolute).
/// O(N·D) dates and O(D²) arrival rows per piece, N servers of depth at most D: polynomial.
pub fn tree_program(servers: &[TreeServer], pieces: &[Piece], lines: &[Line]) -> (Program, f64) {
    let (lp, time, _) = refined_tree_program(servers, pieces, lines, &vec![Vec::new(); servers.len()]);
    (lp, time)
}

/// The objective of [`tree_program`]'s program (of `columns` columns) for a bit that enters the
/// tree at server `first` rather than where the first piece does: t(exit,0) − t(first,0). The
/// constraints hold of every trajectory, whoever's bit leaves the root at t(exit,0); the dates
/// t(h,0) along `first`'s way to the root are its arrivals there.
pub(super) fn objective_from(servers: &[TreeServer], columns: usize, first: usize) -> Vec<f64> {
    let levels = levels(servers, &vec![Vec::new(); servers.len()]);
    // The dates come first, level by level (then the exit level's one).
    let start = |h: usize| levels[..h].iter().map(|l| l.ge.len()).sum::<usize>();
    let mut c = vec![0.0; columns];
    c[start(servers.len())] = 1.0;
    c[start(first)] = -1.0;
    c
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
                if servers[h].without_latency() {
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

/// The program's unit of time: the time the largest burst takes at the servers' geometric mean
/// rate. Dates then come out of order 1 and rates within the spread of the servers' own: a
/// solver's tolerances are absolute, and a tree may mix 10 Tbit/s links with 1 Mbit/s ones (or
/// a description be in bits and seconds).
fn time_unit(bits: f64, servers: &[TreeServer]) -> f64 {
    let logs: f64 = servers.iter().map(|s| s.rate().ln()).sum::<f64>() / servers.len() as f64;
    bits / logs.exp()
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
/// constraints skip those pairs. Only for rate-latency servers: a convex service curve of
/// several pieces has no single latency to split on ([`refine`] leaves such trees undecided).
pub(crate) fn refined_tree_program(
    servers: &[TreeServer],
    pieces: &[Piece],
    lines: &[Line],
    cases: &[Vec<bool>],
) -> (Program, f64, Vec<usize>) {
    let n = servers.len();
    let levels = levels(servers, cases);
    let bits = pieces.iter().map(|p| p.sigma).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let time = time_unit(bits, servers);
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
    // The levels whose dates are in a total order, as chains (latest first); [`bucket`].
    let chains: Vec<Option<Vec<usize>>> = levels.iter().map(|l| chain(&l.ge)).collect();
    for h in 0..n {
        // The order of the dates: its covering pairs (the rest follows).
        for (a, b) in covering(&levels[h].ge) {
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
                    let latency = servers[h].service[0].1;
                    lp.row(vec![(t[next(h)][earlier], 1.0), (t[h][u], -1.0)], latency / time);
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
        for (a, b) in covering(&levels[e].ge) {
            lp.row(vec![(f[b], 1.0), (f[a], -1.0)], 0.0);
        }
        let terms: Vec<Vec<(usize, f64)>> = f.iter().map(|&c| vec![(c, 1.0)]).collect();
        bucket(&mut lp, &terms, &t[e], chains[e].as_deref(), &pairs(e), (sigma, rho));
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
        for &(rate, latency) in &servers[h].service {
            let r = rate * time / bits;
            for (i, u) in levels[h].start.iter().enumerate() {
                let Some(u) = *u else { continue };
                // R·(t_out − t_start) − Σ (F_out − F_start) ≤ R·T, in scaled units.
                let mut row = vec![(t[next(h)][i], r), (t[h][u], -r)];
                for f in &crossing[h] {
                    row.push((f[i], -1.0));
                    row.push((f[u], 1.0));
                }
                lp.row(row, r * latency / time);
            }
        }
    }
    for line in lines {
        // Σ (F(a) − F(b)) ≤ packet + R·(t(a) − t(b)) over every a ≥ b of the level.
        let h = line.server;
        let terms: Vec<Vec<(usize, f64)>> = (0..levels[h].ge.len())
            .map(|u| line.members.iter().map(|&m| (traffic[m][u], 1.0)).collect())
            .collect();
        let r = line.rate * time / bits;
        bucket(&mut lp, &terms, &t[h], chains[h].as_deref(), &pairs(h), (line.packet / bits, r));
    }
    (lp, time, levels.iter().map(|l| l.decidable).collect())
}

/// Levels of more dates than this take their token-bucket constraints as a chain ([`bucket`]).
const CHAIN_FROM: usize = 7;

/// The dates of a level (`ge[a][b]`: t(a) ≥ t(b)) from the latest, when their order is total.
fn chain(ge: &[Vec<bool>]) -> Option<Vec<usize>> {
    let n = ge.len();
    let total = (0..n).all(|a| (0..n).all(|b| ge[a][b] || ge[b][a]));
    if !total || n < CHAIN_FROM {
        return None;
    }
    let mut order: Vec<usize> = (0..n).collect();
    // The latest date is no earlier than every other: it has the most dates below it.
    order.sort_by_key(|&a| std::cmp::Reverse(ge[a].iter().filter(|&&x| x).count()));
    Some(order)
}

/// The covering pairs (a, b) of a level's order: t(a) ≥ t(b), a ≠ b, with no other date between.
fn covering(ge: &[Vec<bool>]) -> Vec<(usize, usize)> {
    let n = ge.len();
    let mut out = Vec::new();
    for a in 0..n {
        for b in 0..n {
            if a != b && ge[a][b] && !(0..n).any(|c| c != a && c != b && ge[a][c] && ge[c][b]) {
                out.push((a, b));
            }
        }
    }
    out
}

/// Token-bucket constraints on cumulative traffic X (X(u) = Σ of `terms[u]`) at a level's dates
/// `t`: X(a) − X(b) ≤ σ + ρ·(t(a) − t(b)) for every a ≥ b. On a total order of many dates
/// (`chain`, latest first: d_0, d_1, …) they are written in O(D) rows with one more variable
/// per date, n_j ≥ 0:
///   n_j ≥ n_{j−1} − ρ·(t(d_{j−1}) − t(d_j)),  n_j ≥ X(d_{j−1}) − ρ·(t(d_{j−1}) − t(d_j)),
///   n_j ≤ σ + X(d_j),
/// an exact reformulation: n_j = max(0, max over i < j of X(d_i) − ρ·(t(d_i) − t(d_j))) satisfies
/// them whenever the pairs hold, and by induction n_j is at least every X(d_i) − ρ·(t(d_i) −
/// t(d_j)), i < j, so they give every pair. Else one row per pair.
fn bucket(
    lp: &mut Program,
    terms: &[Vec<(usize, f64)>],
    t: &[usize],
    chain: Option<&[usize]>,
    pairs: &[(usize, usize)],
    (sigma, rho): (f64, f64),
) {
    let Some(d) = chain else {
        for &(a, b) in pairs {
            let mut row: Vec<(usize, f64)> = terms[a].clone();
            row.extend(terms[b].iter().map(|&(c, k)| (c, -k)));
            row.extend([(t[a], -rho), (t[b], rho)]);
            lp.row(row, sigma);
        }
        return;
    };
    let mut previous: Option<usize> = None;
    for j in 1..d.len() {
        let nj = lp.column(0.0);
        let gap = [(t[d[j - 1]], -rho), (t[d[j]], rho)];
        if let Some(p) = previous {
            lp.row([(nj, -1.0), (p, 1.0)].into_iter().chain(gap).collect(), 0.0);
        }
        let mut row: Vec<(usize, f64)> = vec![(nj, -1.0)];
        row.extend(terms[d[j - 1]].iter().copied());
        row.extend(gap);
        lp.row(row, 0.0);
        let mut row: Vec<(usize, f64)> = vec![(nj, 1.0)];
        row.extend(terms[d[j]].iter().map(|&(c, k)| (c, -k)));
        lp.row(row, sigma);
        previous = Some(nj);
    }
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
pub(super) fn refine(
    servers: &[TreeServer],
    pieces: &[Piece],
    lines: &[Line],
    order: &[usize],
    effort: Effort,
    solver: Solver,
) -> Result<(f64, f64), String> {
    let empty = vec![Vec::new(); servers.len()];
    let (lp, time, outputs) = refined_tree_program(servers, pieces, lines, &empty);
    let root = solver.maximise(&lp)?;
    // Splitting reads each server's latency: rate-latency servers only.
    if lp.objective.len() > effort.max_variables || servers.iter().any(|s| s.service.len() != 1) {
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
        if solved + 2 > effort.programs || work > effort.work || solved - lowered >= effort.patience {
            return Ok((bound, time));
        }
        let (bound, cases, _) = open.swap_remove(best);
        for new in [false, true] {
            let mut child = cases.clone();
            child[h].push(new);
            let (lp, _, outputs) = refined_tree_program(servers, pieces, lines, &child);
            solved += 1;
            work += lp.objective.len();
            match solver.maximise(&lp) {
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
