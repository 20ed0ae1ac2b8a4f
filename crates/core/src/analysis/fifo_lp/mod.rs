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

use super::network_bounds::{self, Candidate, Multiplexing, Options};
use super::results::AnalysisReport;
use crate::curves::Unbounded;
use crate::model::{FlowId, Network, NetworkKind, PortId};
use model::Model;
use std::collections::HashMap;

mod model;
mod program;
mod siblings;
pub use program::{tandem_program, tree_program, Line, Piece, TreeServer};
pub use program::{REFINE_MAX_VARIABLES, REFINE_PATIENCE, REFINE_PROGRAMS, REFINE_WORK};
use siblings::SolvedTree;

/// The method's name in reports.
pub const NAME: &str = "fifo-lp";

/// How hard `fifo-lp` works for each bound: how many programs [`program::refine`] may solve
/// splitting backlogged periods (and on programs of at most how many variables), and how far a
/// sink tree is unfolded before flows are cut ([`model::Tree`]). Every effort gives a bound; more
/// gives a tighter or equal one, at a cost that grows fast (docs/ANALYSIS.md, "fifo-lp").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effort {
    pub programs: usize,
    pub work: usize,
    pub patience: usize,
    pub max_variables: usize,
    pub unfold: usize,
    /// The most dates a sink tree may have: past it, flows are cut where they join it.
    pub dates: usize,
    /// Whether a cut flow's burst comes from its own fifo-lp bound upstream (a program per
    /// prefix) or from TFA's alone.
    pub recursive: bool,
    /// The variables `best`'s programs may add up to on one network ([`tighten`]).
    pub budget: usize,
}

impl Effort {
    /// One program per bound, no copies: the cheapest.
    pub const FAST: Effort = Effort {
        programs: 1,
        work: 0,
        patience: 0,
        max_variables: 0,
        unfold: 0,
        dates: TREE_DATES,
        recursive: false,
        budget: BEST_WORK,
    };
    pub const DEFAULT: Effort = Effort {
        programs: program::REFINE_PROGRAMS,
        work: program::REFINE_WORK,
        patience: program::REFINE_PATIENCE,
        max_variables: program::REFINE_MAX_VARIABLES,
        unfold: model::UNFOLD_DATES,
        dates: TREE_DATES,
        recursive: true,
        budget: BEST_WORK,
    };
    /// Backlogged periods split as far as 2,000 programs per bound allow (the search stops
    /// earlier when every case is decided: then the program is exact for its tree), and the
    /// network unfolded without cuts: the tightest bound the engine computes within minutes on
    /// small networks.
    pub const EXHAUSTIVE: Effort = Effort {
        programs: 2_000,
        work: usize::MAX,
        patience: 500,
        max_variables: 2_000,
        unfold: 1_000_000,
        dates: usize::MAX,
        recursive: true,
        budget: usize::MAX,
    };
    /// The names users give them.
    pub const NAMES: &'static [&'static str] = &["fast", "default", "exhaustive"];

    /// A name, or the default changed by `KEY=N,...` (programs, patience, variables, work,
    /// unfold, dates, recursive (0 or 1), budget: [`Effort`]'s fields).
    pub fn parse(name: &str) -> Result<Effort, String> {
        let unknown = || {
            format!(
                "unknown fifo-lp effort '{name}', expected one of {} or KEY=N,...",
                Self::NAMES.join(", ")
            )
        };
        match name {
            "fast" => return Ok(Effort::FAST),
            "default" => return Ok(Effort::DEFAULT),
            "exhaustive" => return Ok(Effort::EXHAUSTIVE),
            _ => {}
        }
        let mut e = Effort::DEFAULT;
        for part in name.split(',') {
            let (key, value) = part.split_once('=').ok_or_else(unknown)?;
            let value: usize = value.trim().parse().map_err(|_| unknown())?;
            match key.trim() {
                "programs" => e.programs = value,
                "patience" => e.patience = value,
                "variables" => e.max_variables = value,
                "work" => e.work = value,
                "unfold" => e.unfold = value,
                "dates" => e.dates = value,
                "recursive" => e.recursive = value != 0,
                "budget" => e.budget = value,
                _ => return Err(unknown()),
            }
        }
        Ok(e)
    }
}

/// The dates a sink tree may have at the default effort: a program of about three times as many
/// variables, which HiGHS solves in a few tenths of a second (docs/ANALYSIS.md, "fifo-lp").
pub const TREE_DATES: usize = 600;

impl Default for Effort {
    fn default() -> Effort {
        Effort::DEFAULT
    }
}

/// Whether `fifo-lp` applies to `net`, or the first rule it breaks, in one line. It covers every
/// network whose queues serve their frames in arrival order: FIFO multiplexing is its premise.
/// Flows it cannot bound (a queue without service, an interleaved regulator on the flow's own
/// path) get an infinite bound with the reason, and `best` keeps the other methods' bounds.
pub fn applies(_net: &Network, blind: bool) -> Result<(), String> {
    if blind {
        return Err("fifo-lp assumes FIFO multiplexing: it has no blind variant".into());
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

/// Solves [`Program`]s: the optimum, or why there is none (unbounded, infeasible, no solver).
/// Shared by the threads that solve routes side by side ([`in_parts`]). A function of the
/// program is one ([`Solver`]).
pub trait LpSolver: Sync {
    fn maximise(&self, p: &Program) -> Result<f64, String>;

    /// The optimum of `p`'s constraints under each of `objectives` (in place of its own), in
    /// order. Only the costs change from one to the next, so the previous optimal basis stays
    /// feasible: a solver that keeps it re-optimises from there (the primal simplex). Here, one
    /// program each.
    fn maximise_each(&self, p: &Program, objectives: &[Vec<f64>]) -> Vec<Result<f64, String>> {
        objectives
            .iter()
            .map(|c| self.maximise(&Program { objective: c.clone(), rows: p.rows.clone() }))
            .collect()
    }
}

impl<F: Fn(&Program) -> Result<f64, String> + Sync> LpSolver for F {
    fn maximise(&self, p: &Program) -> Result<f64, String> {
        self(p)
    }
}

/// The solver the analyses are given.
pub type Solver<'a> = &'a dyn LpSolver;

/// Flow `f`'s source-tree program up to its port `end` ([`mod@self`], "Source trees"), with
/// what turns its optimum into a delay bound: (program, time unit, Σ latencies), or `None` where
/// it does not apply: a server that is not rate-latency, or a flow sharing the trunk that did
/// not enter at its first queue with `f` from its source, or does not follow it until it
/// leaves it for good. Scaled so that the largest burst is 1 and the fastest server sends it in
/// one time unit: a solver's tolerances are absolute, and a description may be in bits and
/// seconds.
fn source_program(m: &Model, f: FlowId, end: PortId) -> Result<Option<(Program, f64, f64)>, Unbounded> {
    let ports = m.prefix(f, end);
    let trunk: Vec<usize> = ports.iter().map(|&p| m.queue(f, p)).collect();
    let n = trunk.len();
    let tree = model::Tree {
        queues: trunk.clone(),
        next: (0..n).map(|i| (i + 1 < n).then_some(i + 1)).collect(),
        root: n - 1,
        children: (0..n).map(|i| if i > 0 { vec![i - 1] } else { Vec::new() }).collect(),
    };
    let servers = model::servers(m, &tree)?;
    let mut rate = Vec::with_capacity(n);
    let mut latency = 0.0;
    for s in &servers {
        let [(r, t)] = s.service[..] else { return Ok(None) };
        rate.push(r);
        latency += t;
    }
    // Every flow sharing a trunk queue: its token bucket and how many trunk queues it crosses.
    let mut flows: Vec<(f64, f64, usize)> = Vec::new();
    let mut seen: Vec<FlowId> = Vec::new();
    for &q in &trunk {
        for member in &m.members[q] {
            if seen.contains(&member.flow) {
                continue;
            }
            seen.push(member.flow);
            let g = member.flow;
            let shared: Vec<usize> =
                (0..n).filter(|&j| m.crossings[g].get(&ports[j]).is_some_and(|x| x.0 == trunk[j])).collect();
            let k = shared.len();
            if shared != (0..k).collect::<Vec<_>>() {
                return Ok(None);
            }
            // From its source at the first queue, straight along the trunk: a detour between
            // two trunk queues would let bits that entered before the tagged one's backlog
            // arrive inside it.
            let (_, from, regulated) = m.crossings[g][&ports[0]];
            let straight = (1..k).all(|j| {
                let (_, from, regulated) = m.crossings[g][&ports[j]];
                from == Some(ports[j - 1]) && !regulated
            });
            if from.is_some() || regulated || !straight {
                return Ok(None);
            }
            flows.push((m.net.flows[g].burst, m.net.flows[g].rate, k));
        }
    }
    for j in 0..n {
        let load: f64 = flows.iter().filter(|x| x.2 > j).map(|x| x.1).sum();
        if load > rate[j] {
            return Err(overloaded(m, trunk[j], load, rate[j]));
        }
    }
    let bits = flows.iter().map(|x| x.0).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let time = bits / rate.iter().copied().fold(0.0, f64::max);
    let mut lp = Program::default();
    let ell: Vec<usize> = (0..n).map(|_| lp.column(-1.0)).collect();
    for &(sigma, rho, k) in &flows {
        let (sigma, rho) = (sigma / bits, rho * time / bits);
        let a: Vec<usize> = (0..k).map(|j| lp.column(bits / (time * rate[j]))).collect();
        for j1 in 0..k {
            for j2 in j1..k {
                let mut row: Vec<(usize, f64)> = (j1..=j2).map(|j| (a[j], 1.0)).collect();
                row.extend((j1..=j2).map(|j| (ell[j], -rho)));
                lp.row(row, sigma);
            }
        }
    }
    Ok(Some((lp, time, latency)))
}

/// A solver's optimum `value` as a delay bound: within its tolerances (HiGHS: 1e-7, on this
/// scale) of the true one, raised by more than that it stays an upper bound; times the unit.
fn raised(value: f64, time: f64) -> f64 {
    (value + 1e-6 * value.abs().max(1.0)) * time
}

fn overloaded(m: &Model, queue: usize, load: f64, rate: f64) -> Unbounded {
    let p = m.servers[queue].port;
    let name = match m.net.kind {
        NetworkKind::ServerGraph => format!("server '{}'", m.net.nodes[m.net.ports[p].node].name),
        _ => m.net.port_label(p),
    };
    Unbounded::new(format!("{name} overloaded: offered rate {load} > its rate {rate}"))
}

/// What `fifo-lp` computes, memoised per (flow, port of its route): the bound of the flow's delay
/// from its release until it has left that port; `None` while it is being computed (a cyclic
/// network asks for it again: TFA's bound stands in).
pub type Memo = HashMap<(FlowId, PortId), Option<Result<f64, Unbounded>>>;

/// The bounds `fifo-lp` works from: the network's queues, and what it has computed.
pub struct Bounds<'a> {
    model: Model<'a>,
    memo: Memo,
    effort: Effort,
    /// On a cyclic network, the bounds of the pass before ([`analyze`]): where a cut closes a
    /// cycle, the smaller of it and TFA's stands in for the bound being computed.
    previous: HashMap<(FlowId, PortId), f64>,
    /// The variables of the programs solved for the bounds in `memo`, those taken from `shared`
    /// counted as if solved here: what `best`'s budget counts ([`tighten_within`]).
    pub work: usize,
    /// Of the bound being computed: the variables of its own programs (not of the bounds it
    /// asks for).
    own: usize,
    /// Per bound being computed, innermost last: the bounds it has asked for.
    asked: Vec<Vec<(FlowId, PortId)>>,
    /// The bounds finished by every part of the analysis ([`in_parts`]), on a feed-forward
    /// network, where a bound does not depend on who computes it.
    shared: Option<&'a Shared>,
    /// On a feed-forward network, the tree programs' optima found with another flow's program of
    /// the same shape ([`Bounds::siblings`]), not yet asked for.
    trees: HashMap<(FlowId, PortId), SolvedTree>,
    /// The keys this part holds in `shared`'s claims, innermost bound's last ([`Shared::claim`]).
    held: Vec<(FlowId, PortId)>,
    acyclic: bool,
}

/// A bound one part of an analysis finished, for the others ([`Bounds::adopt`]): its value, the
/// variables of its own programs, and the bounds it asked for.
#[derive(Clone)]
struct Finished {
    result: Result<f64, Unbounded>,
    work: usize,
    needs: Vec<(FlowId, PortId)>,
}

/// The bounds finished by the parts of one analysis, at one effort, on a feed-forward network,
/// and the tree bounds found with another flow's program ([`Bounds::siblings`]).
#[derive(Default)]
pub struct Shared {
    bounds: std::sync::Mutex<HashMap<(FlowId, PortId), Finished>>,
    trees: std::sync::Mutex<HashMap<(FlowId, PortId), SolvedTree>>,
    /// The bounds a part is computing, and the tree bounds a part's program is about to give
    /// ([`Bounds::siblings`]): another part that needs one waits for it rather than solving
    /// the same programs at the same time (at 150 flows, a quarter of the programs were solved
    /// twice so). A part waits only for a bound upstream of the one it computes, or for one
    /// it asks for from outside every claim of its own: on a feed-forward network no two parts
    /// wait for each other.
    claimed: std::sync::Mutex<std::collections::HashSet<(FlowId, PortId)>>,
    released: std::sync::Condvar,
}

impl Shared {
    /// Claims `key` for the caller, once no other part holds it.
    fn claim(&self, key: (FlowId, PortId)) {
        let Ok(mut claimed) = self.claimed.lock() else { return };
        while claimed.contains(&key) {
            match self.released.wait(claimed) {
                Ok(c) => claimed = c,
                Err(_) => return,
            }
        }
        claimed.insert(key);
    }

    /// Claims `key` if no part holds it; whether it did.
    fn try_claim(&self, key: (FlowId, PortId)) -> bool {
        self.claimed.lock().is_ok_and(|mut claimed| claimed.insert(key))
    }

    fn release(&self, keys: impl IntoIterator<Item = (FlowId, PortId)>) {
        if let Ok(mut claimed) = self.claimed.lock() {
            for key in keys {
                claimed.remove(&key);
            }
        }
        self.released.notify_all();
    }

    fn get(&self, key: &(FlowId, PortId)) -> Option<Finished> {
        self.bounds.lock().ok()?.get(key).cloned()
    }

    fn put(&self, key: (FlowId, PortId), done: Finished) {
        if let Ok(mut map) = self.bounds.lock() {
            map.insert(key, done);
        }
    }
}

/// A part that stops while it holds claims (a panic in its analysis) releases them, so that the
/// other part, waiting for one, goes on and the panic reaches the caller instead of a hang.
impl Drop for Bounds<'_> {
    fn drop(&mut self) {
        if let Some(shared) = self.shared {
            shared.release(self.held.drain(..));
        }
    }
}

impl<'a> Bounds<'a> {
    pub fn new(net: &'a Network, effort: Effort) -> Bounds<'a> {
        Bounds {
            model: Model::new(net),
            memo: Memo::new(),
            effort,
            previous: HashMap::new(),
            work: 0,
            own: 0,
            asked: Vec::new(),
            shared: None,
            trees: HashMap::new(),
            held: Vec::new(),
            acyclic: net.port_order().acyclic,
        }
    }

    /// [`Bounds::new`] taking the bounds other parts have finished from `shared`, and giving them
    /// its own, where the network is feed-forward (on a cyclic one a bound depends on the order
    /// of computation: `shared` is not used).
    fn sharing(net: &'a Network, effort: Effort, shared: &'a Shared) -> Bounds<'a> {
        let mut bounds = Bounds::new(net, effort);
        if bounds.acyclic {
            bounds.shared = Some(shared);
        }
        bounds
    }

    fn charge(&mut self, variables: usize) {
        self.own += variables;
        self.work += variables;
    }

    /// Takes the bound `key` from `shared` if another part has finished it, with every bound it
    /// asked for, each counted in [`Bounds::work`] as if computed here: the same bounds and the
    /// same work as computing them, whichever part finished them first.
    fn adopt(&mut self, key: (FlowId, PortId)) -> bool {
        let Some(done) = self.shared.and_then(|s| s.get(&key)) else { return false };
        for &need in &done.needs {
            if !self.memo.contains_key(&need) {
                self.adopt(need);
            }
        }
        self.work += done.work;
        self.memo.insert(key, Some(done.result));
        true
    }

    /// The number of variables of the tree program of flow `f` up to `end`.
    pub fn variables(&self, f: FlowId, end: PortId) -> usize {
        model::variables(&self.model, f, end, self.effort.dates, self.effort.unfold)
    }

    /// TFA's bound of flow `f`'s delay from its release until it has left `end`: its queues'
    /// delay bounds and the propagation delays between them.
    fn tfa_prefix(&self, f: FlowId, end: PortId) -> f64 {
        let m = &self.model;
        let ports = m.prefix(f, end);
        let queues: f64 = ports.iter().map(|&p| m.servers[m.queue(f, p)].cap).sum();
        queues + ports[..ports.len() - 1].iter().map(|&p| m.net.ports[p].propagation_delay).sum::<f64>()
    }

    /// Flow `f`'s delay bound from its release until it has left its port `end`: the smaller of
    /// the [`tree_program`]'s over its sink tree and, where it applies, the source-tree
    /// program's. Every flow that meets the tree enters as a [`Piece`] per maximal run of its
    /// route along the tree's edges; a run that does not start at the flow's source (it was
    /// cut) brings the burst σ + ρ·d, d a bound on the flow's delay up to there, since a flow of
    /// token bucket (σ, ρ) through any system of delay at most d leaves with token bucket (σ +
    /// ρ·d, ρ). d is the least of the flow's own bound up to there (computed first, by this
    /// function; on a feed-forward network the recursion ends, on a cyclic one a bound asked for
    /// while it is computed is TFA's) and TFA's.
    pub fn prefix_delay(&mut self, f: FlowId, end: PortId, solver: Solver) -> Result<f64, Unbounded> {
        if let Some(asking) = self.asked.last_mut() {
            asking.push((f, end));
        }
        // This bound's claims (its own, and its siblings'), released once it is computed.
        let mark = self.held.len();
        if !self.memo.contains_key(&(f, end)) && !self.adopt((f, end)) {
            if let Some(shared) = self.shared {
                // Another part computing it: wait, and take its bound (or compute it, if that
                // part only solved its tree).
                shared.claim((f, end));
                if self.adopt((f, end)) {
                    shared.release([(f, end)]);
                } else {
                    self.held.push((f, end));
                }
            }
        }
        match self.memo.get(&(f, end)) {
            Some(Some(known)) => return known.clone(),
            Some(None) => {
                let before = self.previous.get(&(f, end)).copied().unwrap_or(f64::INFINITY);
                return Ok(self.tfa_prefix(f, end).min(before)).and_then(finite_or(self, f, end));
            }
            None => {}
        }
        self.memo.insert((f, end), None);
        let outer = std::mem::replace(&mut self.own, 0);
        self.asked.push(Vec::new());
        let tree = self.tree_delay(f, end, solver);
        let source = match source_program(&self.model, f, end) {
            Ok(Some((lp, time, latency))) => {
                self.charge(lp.objective.len());
                solver.maximise(&lp).ok().map(|value| latency + raised(value, time))
            }
            _ => None,
        };
        let result = match (tree, source) {
            (Ok(a), Some(b)) => Ok(a.min(b)),
            (Err(_), Some(b)) => Ok(b),
            (tree, None) => tree,
        };
        self.memo.insert((f, end), Some(result.clone()));
        let needs = self.asked.pop().unwrap_or_default();
        let work = std::mem::replace(&mut self.own, outer);
        if let Some(shared) = self.shared {
            shared.put((f, end), Finished { result: result.clone(), work, needs });
            shared.release(self.held.drain(mark..));
        }
        result
    }

    /// A bound on flow `g`'s delay from its release until it arrives at the node after `from`.
    fn upstream(&mut self, g: FlowId, from: PortId, solver: Solver) -> Result<f64, Unbounded> {
        let tfa = self.tfa_prefix(g, from);
        if !self.effort.recursive {
            let d = Ok(tfa).and_then(finite_or(self, g, from))?;
            return Ok(d + self.model.net.ports[from].propagation_delay);
        }
        let lp = self.prefix_delay(g, from, solver);
        let d = match lp {
            Ok(d) => d.min(tfa),
            Err(why) if !tfa.is_finite() => return Err(why),
            Err(_) => tfa,
        };
        Ok(d + self.model.net.ports[from].propagation_delay)
    }

    fn tree_delay(&mut self, f: FlowId, end: PortId, solver: Solver) -> Result<f64, Unbounded> {
        if let Some(done) = self.take_tree((f, end)) {
            for &(g, from) in &done.needs {
                self.upstream(g, from, solver)?;
            }
            self.charge(done.variables);
            return done.result;
        }
        let m = &self.model;
        let tree = model::Tree::unfolded(m, f, end, self.effort.dates, self.effort.unfold);
        let entries = model::pieces(m, f, &tree);
        let siblings = self.siblings(f, end, &tree, &entries);
        let m = &self.model;
        let servers = model::servers(m, &tree)?;
        let mut load = vec![0.0; tree.queues.len()];
        for (_, piece) in &entries {
            for h in model::along(&tree.next, *piece) {
                load[h] += piece.rho;
            }
        }
        for (h, s) in servers.iter().enumerate() {
            if load[h] > s.rate() {
                return Err(overloaded(m, tree.queues[h], load[h], s.rate()));
            }
        }
        let lines = model::lines(m, &tree, &entries);
        let trunk = tree.root + 1;
        let mut pieces = Vec::with_capacity(entries.len());
        for (entry, mut piece) in entries {
            if !entry.fresh {
                let from = entry.from.expect("a cut piece comes from a port");
                piece.sigma += piece.rho * self.upstream(entry.flow, from, solver)?;
            }
            pieces.push(piece);
        }
        if !siblings.is_empty() {
            let (lp, time) = tree_program(&servers, &pieces, &lines);
            // A program refine would not split: its one-period optimum is the bound.
            if lp.objective.len() > self.effort.max_variables || servers.iter().any(|s| s.service.len() != 1)
            {
                return self.solve_with_siblings(f, end, (lp, time), &servers, siblings, solver);
            }
        }
        // The trunk from the root back, then the other servers nearest the root first.
        let order: Vec<usize> = (0..trunk).rev().chain(trunk..tree.queues.len()).collect();
        let solved = std::sync::atomic::AtomicUsize::new(0);
        let counted = |p: &Program| -> Result<f64, String> {
            solved.fetch_add(p.objective.len(), std::sync::atomic::Ordering::Relaxed);
            solver.maximise(p)
        };
        let refined = program::refine(&servers, &pieces, &lines, &order, self.effort, &counted);
        self.charge(solved.into_inner());
        let (value, time) = refined.map_err(|why| {
            Unbounded::new(format!(
                "flow '{}': the linear program has no optimum ({why})",
                self.model.net.flows[f].name
            ))
        })?;
        Ok(raised(value, time))
    }

    /// The bound of flow `f` on its route `r` (s): its delay until it has left the route's last
    /// port, less the propagation delays before it (the report adds every propagation delay of
    /// the route and the destination's receive latency).
    pub fn route_bound(
        &mut self,
        f: FlowId,
        r: &crate::model::Route,
        solver: Solver,
    ) -> Result<f64, Unbounded> {
        let last = *r.ports.last().expect("a route has ports");
        let d = self.prefix_delay(f, last, solver)?;
        let inside: f64 =
            r.ports[..r.ports.len() - 1].iter().map(|&p| self.model.net.ports[p].propagation_delay).sum();
        Ok(d - inside)
    }
}

/// What fifo-lp's program for one route is made of (`analyze --explain` on a fifo-lp row): the
/// queues of the network unfolded backwards from the route's last port, the flows entering it
/// (each maximal run of a flow along the tree a token bucket; a run cut from its source brings
/// σ + ρ·d, d a bound on its delay before the cut), and the line-shaping constraints.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LpTerms {
    /// Queues of the unfolded tree (a queue feeding two branches counted under each).
    pub servers: usize,
    /// Token buckets entering the tree, and the flows among them cut from their source.
    pub entering: usize,
    pub cut_flows: Vec<String>,
    /// Line-shaping constraints (flows reaching a queue through one input link).
    pub lines: usize,
    /// Variables of the program (dates and their arrivals and departures).
    pub variables: usize,
    /// The effort it ran with (`--lp-effort`): dates per tree, unfolding limit.
    pub dates: usize,
    pub unfold: usize,
}

/// [`LpTerms`] of flow `f`'s program up to its port `end` under `effort` (the tree; not solved).
pub fn terms(net: &Network, effort: Effort, f: FlowId, end: PortId) -> LpTerms {
    let m = Model::new(net);
    let tree = model::Tree::unfolded(&m, f, end, effort.dates, effort.unfold);
    let entries = model::pieces(&m, f, &tree);
    let mut cut: Vec<String> =
        entries.iter().filter(|(e, _)| !e.fresh).map(|(e, _)| net.flows[e.flow].name.clone()).collect();
    cut.sort();
    cut.dedup();
    LpTerms {
        servers: tree.queues.len(),
        entering: entries.len(),
        cut_flows: cut,
        lines: model::lines(&m, &tree, &entries).len(),
        variables: model::variables(&m, f, end, effort.dates, effort.unfold),
        dates: effort.dates,
        unfold: effort.unfold,
    }
}

/// TFA's prefix bound where it is finite, else why not.
fn finite_or<'b>(b: &'b Bounds, f: FlowId, end: PortId) -> impl Fn(f64) -> Result<f64, Unbounded> + 'b {
    move |d| {
        if d.is_finite() {
            Ok(d)
        } else {
            Err(Unbounded::new(format!(
                "flow '{}': cyclic dependencies through {} and no TFA bound there",
                b.model.net.flows[f].name,
                b.model.net.port_label(end)
            )))
        }
    }
}

/// The LP bound of flow `f` along its (first) route (s), or why it has none.
pub fn route_bound(net: &Network, f: FlowId, solver: Solver) -> Result<f64, Unbounded> {
    Bounds::new(net, Effort::DEFAULT).route_bound(f, &net.flows[f].routes[0], solver)
}

/// How many parts the routes of an analysis are split into, each part solved in order by one
/// thread with its own memo ([`in_parts`]). Fixed, so that a network's bounds (and `best`'s
/// budget, [`BEST_WORK`]) are the same on every machine, whatever its number of cores.
pub const PARTS: usize = 2;

/// `work(k, part)` on `items` split into [`PARTS`] interleaved parts (part k: items k, k + PARTS, ...),
/// the parts side by side on up to as many threads as the machine has cores: each part's
/// results, in its items' order, and what the part kept (its memo). HiGHS solves without
/// Python's interpreter lock, so two parts solve two programs at once.
fn in_parts<I: Sync, R: Send, S: Send>(
    items: &[I],
    work: impl Fn(usize, Vec<&I>) -> (Vec<R>, S) + Sync,
) -> (Vec<R>, Vec<S>) {
    let part = |k: usize| items.iter().skip(k).step_by(PARTS).collect::<Vec<_>>();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let done: Vec<(Vec<R>, S)> = if cores < 2 || items.len() < 2 {
        (0..PARTS).map(|k| work(k, part(k))).collect()
    } else {
        std::thread::scope(|scope| {
            let work = &work;
            let threads: Vec<_> = (1..PARTS).map(|k| scope.spawn(move || work(k, part(k)))).collect();
            let mut done = vec![work(0, part(0))];
            // A thread that panicked passes its panic on, as the sequential loop would.
            done.extend(
                threads.into_iter().map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
            );
            done
        })
    };
    let mut results: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    let mut kept = Vec::with_capacity(PARTS);
    for (k, (rs, s)) in done.into_iter().enumerate() {
        for (j, r) in rs.into_iter().enumerate() {
            results[k + j * PARTS] = Some(r);
        }
        kept.push(s);
    }
    (results.into_iter().map(|r| r.expect("every item's part gave its result")).collect(), kept)
}

/// `fifo-lp` on every flow: SFA's report (its backlogs and port rows) with each flow's delay
/// bound the program's, the routes solved in [`PARTS`] parts side by side. On a cyclic network,
/// where a cut closes a cycle the first pass takes TFA's bound (its fixed point's) for the flow
/// cut; each later pass takes the smaller of it and the pass before's own bound there, valid by
/// the pass before, so each pass is a bound no larger than the last: up to [`CYCLE_PASSES`] of
/// them, until no bound moves by 10⁻⁶.
pub fn analyze(net: &Network, effort: Effort, solver: Solver) -> AnalysisReport {
    let opt = Options { method: Candidate::Sfa, grouping: false, multiplexing: Multiplexing::Fifo };
    let mut report = network_bounds::analyze(net, &opt);
    report.method = NAME.to_string();
    let routes: Vec<(FlowId, &crate::model::Route)> =
        report.flows.iter().map(|row| (row.flow, route_of(net, row))).collect();
    let passes = if net.port_order().acyclic { 1 } else { CYCLE_PASSES };
    let mut previous: HashMap<(FlowId, PortId), f64> = HashMap::new();
    let mut found: Vec<Result<f64, Unbounded>> = Vec::new();
    for pass in 0..passes {
        let shared = Shared::default();
        let (now, memos) = in_parts(&routes, |_, part| {
            let mut bounds = Bounds::sharing(net, effort, &shared);
            bounds.previous = previous.clone();
            let now: Vec<_> = part.iter().map(|&&(f, route)| bounds.route_bound(f, route, solver)).collect();
            (now, std::mem::take(&mut bounds.memo))
        });
        let moved = pass == 0
            || now.iter().zip(&found).any(|(a, b)| match (a, b) {
                (Ok(a), Ok(b)) => *a < b * (1.0 - 1e-6),
                (Ok(_), Err(_)) => true,
                _ => false,
            });
        // Every pass's bound is valid: keep each route's smallest.
        found = if pass == 0 {
            now
        } else {
            now.into_iter()
                .zip(found)
                .map(|(a, b)| match (a, b) {
                    (Ok(a), Ok(b)) => Ok(a.min(b)),
                    (Ok(a), Err(_)) => Ok(a),
                    (Err(_), b) => b,
                })
                .collect()
        };
        if !moved {
            break;
        }
        // Each part's bounds are valid: the next pass takes the smallest of them.
        previous = smallest(memos);
    }
    for (row, bound) in report.flows.iter_mut().zip(found) {
        network_bounds::set_delay(net, row, bound, NAME);
    }
    if passes > 1 {
        report.notes.push(format!(
            "fifo-lp on cyclic dependencies: each flow's sink tree cut where it would close a cycle, the flow cut \
             there bounded by TFA's fixed point, then by the pass before's own bounds (at most {CYCLE_PASSES} passes)"
        ));
    }
    report
}

/// The most passes of `fifo-lp` over a cyclic network ([`analyze`]).
pub const CYCLE_PASSES: usize = 4;

fn route_of<'n>(net: &'n Network, row: &super::results::FlowBound) -> &'n crate::model::Route {
    net.flows[row.flow]
        .routes
        .iter()
        .find(|r| r.destination == row.destination && r.plane == row.plane)
        .expect("a row is one of its flow's routes")
}

/// `best` runs `fifo-lp` on networks of at most this many flow-port crossings: a large switched
/// network (5000 VLs: 36,000 crossings) would solve thousands of programs, for what TFA and SFA
/// with grouping already bound closely there (docs/ANALYSIS.md, "fifo-lp in best").
pub const BEST_MAX_CROSSINGS: usize = 5_000;

/// The variables `best`'s programs may add up to on one network by default, over its [`PARTS`]
/// parts (each within its share, side by side on two cores): past it, the routes left keep the
/// other methods' bounds, with a note. On a 150-flow RTNS-2022-style network about 10 s of CPU,
/// 5-6 s on two cores (docs/ANALYSIS.md, "fifo-lp in best").
pub const BEST_WORK: usize = 300_000;

/// The dates of the screen's trees ([`tighten_within`]): small programs (a few hundred
/// variables), so that every route of a network is screened within [`BEST_WORK`].
const SCREEN_DATES: usize = 200;

/// The most splitting backlogged periods was seen to lower a one-period bound, with room: on the
/// RTNS 2022 networks and the generated families of benchmarks/nc_families.py, at most 15 %.
const SPLITTING_GAIN: f64 = 0.25;

/// `best` under FIFO multiplexing: on a network within [`BEST_MAX_CROSSINGS`], while the
/// programs solved stay within the effort's budget ([`BEST_WORK`] by default) of variables, `fifo-lp`'s bound where it is tighter
/// than the other methods' ([`tighten_within`]); a note says how many routes were cut short.
pub fn tighten(net: &Network, report: &mut AnalysisReport, effort: Effort, solver: Solver) {
    let crossings: usize = net.flows_per_port().iter().map(Vec::len).sum();
    if crossings > BEST_MAX_CROSSINGS {
        report.notes.push(format!(
            "fifo-lp not run by best: {crossings} flow-port crossings, above its limit of {BEST_MAX_CROSSINGS} \
             (run it alone with --method fifo-lp)"
        ));
        return;
    }
    tighten_within(net, report, effort, solver, effort.budget)
}

/// The routes of one part of [`tighten_within`]'s pass at `effort`, in order, while the
/// variables solved (`spent` before this pass) stay within `budget`, taking `previous` (the pass
/// before's bounds, on a cyclic network) where a cut closes a cycle: each one's bound (`None`:
/// cut short), how many variables the part has solved then, and its bounds.
fn bounds_within(
    net: &Network,
    (effort, shared, previous): (Effort, &Shared, &HashMap<(FlowId, PortId), f64>),
    solver: Solver,
    (budget, spent): (usize, usize),
    routes: &[&(FlowId, &crate::model::Route)],
) -> (RouteBounds, (usize, Memo)) {
    let mut bounds = Bounds::sharing(net, effort, shared);
    bounds.work = spent;
    bounds.previous = previous.clone();
    let found = routes
        .iter()
        .map(|&&(f, route)| (bounds.work <= budget).then(|| bounds.route_bound(f, route, solver)))
        .collect();
    (found, (bounds.work, std::mem::take(&mut bounds.memo)))
}

/// Routes' bounds in order, `None` where `best`'s budget cut one short.
type RouteBounds = Vec<Option<Result<f64, Unbounded>>>;

/// The smallest of the parts' bounds, for the next pass over a cyclic network.
fn smallest(memos: impl IntoIterator<Item = Memo>) -> HashMap<(FlowId, PortId), f64> {
    let mut out: HashMap<(FlowId, PortId), f64> = HashMap::new();
    for (key, v) in memos.into_iter().flatten() {
        if let Some(Ok(d)) = v {
            let known = out.entry(key).or_insert(d);
            *known = known.min(d);
        }
    }
    out
}

/// [`tighten`] with the work budget `budget` (variables, shared equally by the [`PARTS`] parts
/// solved side by side). Two passes: every route's one-period program over its sink tree, cut
/// flows taking TFA's bounds upstream (one program per route: the screen), then, where the
/// screen is within [`SPLITTING_GAIN`] of the other methods' bound, the program at `effort`
/// (periods split, cut flows bounded by their own programs upstream), the routes nearest to
/// winning first; on a cyclic network that pass is repeated as [`analyze`] repeats its own (each
/// taking the pass before's bounds where a cut closes a cycle), up to [`CYCLE_PASSES`], while the
/// budget lasts. A valid bound either way: a row keeps the smallest.
pub fn tighten_within(
    net: &Network,
    report: &mut AnalysisReport,
    effort: Effort,
    solver: Solver,
    budget: usize,
) {
    let share = budget / PARTS;
    let fast = Effort { dates: effort.dates.min(SCREEN_DATES), ..Effort::FAST };
    // A row's bound less its fixed delays, as fifo-lp bounds it.
    let queued = |report: &AnalysisReport, i: usize| {
        report.flows[i].delay_us - network_bounds::fixed_delays_us(net, &report.flows[i])
    };
    let others: Vec<f64> = (0..report.flows.len()).map(|i| queued(report, i)).collect();
    let routes: Vec<(FlowId, &crate::model::Route)> =
        report.flows.iter().map(|row| (row.flow, route_of(net, row))).collect();
    let none = HashMap::new();
    let shared = Shared::default();
    let (screened, kept) =
        in_parts(&routes, |_, part| bounds_within(net, (fast, &shared, &none), solver, (share, 0), &part));
    let mut spent: Vec<usize> = kept.iter().map(|k| k.0).collect();
    let mut left = screened.iter().filter(|d| d.is_none()).count();
    // (screen bound / the others', row) of the routes worth a closer look.
    let mut closer: Vec<(f64, usize)> = Vec::new();
    for (i, d) in screened.into_iter().enumerate() {
        let Some(Ok(d)) = d else { continue };
        if d * 1e6 < others[i] {
            network_bounds::set_delay(net, &mut report.flows[i], Ok(d), NAME);
        }
        if effort != fast && d * 1e6 * (1.0 - SPLITTING_GAIN) < others[i] {
            closer.push((d * 1e6 / others[i], i));
        }
    }
    closer.sort_by(|a, b| a.0.total_cmp(&b.0));
    let chosen: Vec<(FlowId, &crate::model::Route)> = closer.iter().map(|&(_, i)| routes[i]).collect();
    let passes = if net.port_order().acyclic { 1 } else { CYCLE_PASSES };
    let mut previous = HashMap::new();
    for pass in 0..if chosen.is_empty() { 0 } else { passes } {
        // Each part goes on with what it has left of its share.
        let shared = Shared::default();
        let (found, kept) = in_parts(&chosen, |k, part| {
            bounds_within(net, (effort, &shared, &previous), solver, (share, spent[k]), &part)
        });
        let mut moved = false;
        for (&(_, i), d) in closer.iter().zip(found) {
            match d {
                None if pass == 0 => left += 1,
                Some(Ok(d)) if d * 1e6 < queued(report, i) => {
                    moved |= d * 1e6 < queued(report, i) * (1.0 - 1e-6);
                    network_bounds::set_delay(net, &mut report.flows[i], Ok(d), NAME)
                }
                _ => {}
            }
        }
        spent = kept.iter().map(|k| k.0).collect();
        previous = smallest(kept.into_iter().map(|k| k.1));
        if !moved {
            break;
        }
    }
    if left > 0 {
        report.notes.push(format!(
            "fifo-lp cut short by best on {left} route{} once its programs reached {budget} variables \
             (raise it with --lp-effort budget=N, or run fifo-lp alone with --method fifo-lp)",
            if left == 1 { "" } else { "s" }
        ));
    }
}

#[cfg(test)]
mod tests;
