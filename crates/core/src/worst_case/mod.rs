//! Worst-case search: how pessimistic is a bound?
//!
//! For each (flow, destination, plane) the search looks for the release offsets of the flows
//! that can reach it, their frame sizes and the tie order among frames entering a port in the
//! same ns (a [`Scenario`]) under which the simulator measures the largest delay it can find.
//! Every scenario is a legal behaviour of the contracts (each flow periodic at its BAG from its
//! offset, frames within Lmin..Lmax), so the delay it realises is a lower bound of the true worst
//! case; the analysis' `best` bound is an upper bound; the pessimism interval is
//! [achieved, bound].
//!
//! * Start: the critical instant the FIFO analysis implies ([`search`]): hop by hop along the
//!   target's path, the flows that join it at a port are released so that their frames enter that
//!   port just before the target's (those sharing an input link back to back), all frames the
//!   largest, the target last among simultaneous entries; measured by the simulator and corrected
//!   until each frame enters where it should.
//! * Then a (1+1) evolutionary local search with restarts: shifts of one flow's release (small
//!   and large steps), re-alignment of a flow on the target at a port they share, frame sizes,
//!   tie order.
//! * Where the space is small, an exhaustive search over a grid of relative releases (and both
//!   extreme frame sizes, and every tie order of the interferers) first: the row then says it
//!   is exact for that grid, with the grid's step.
//!
//! Only the flows that can reach a target frame send in the search's runs (the flows crossing a
//! port of its path, and, upstream, the ports of theirs, to a fixed point): the others cannot
//! change its delay. Each row's best scenario is then replayed on the whole network exactly as
//! `simulate --scenario` runs it, and every achieved value is a replay's maximum (a row takes the
//! largest value any replay gave it, with that scenario). An achieved value above its bound is a
//! soundness violation: it is reported, never clipped.
//!
//! Reproducible: each row's search draws from its own generator seeded by the seed and the row,
//! so with a budget in evaluations the result does not depend on the workers or the machine.

mod search;
#[cfg(test)]
mod tests;

use crate::analysis::{self, Request};
use crate::model::{Network, Switching};
use crate::sim::{Scenario, ScenarioTables, SimConfig, Simulator};
use serde::Serialize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How much searching: a number of simulations, or a wall-clock time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    /// Simulations in all, shared evenly among the rows (deterministic).
    Evaluations(u64),
    /// Wall-clock time for the whole search, replays included.
    Time(Duration),
}

#[derive(Clone, Debug)]
pub struct Settings {
    pub budget: Budget,
    pub seed: u64,
    /// Threads searching rows in parallel.
    pub workers: usize,
    /// Only the rows of these flows (by name); empty: every row.
    pub flows: Vec<String>,
    /// The most grid points an exhaustive search may take per row.
    pub grid_limit: u64,
}

impl Settings {
    /// The default budget in simulations.
    pub fn budget_evaluations(&self) -> u64 {
        match self.budget {
            Budget::Evaluations(n) => n,
            Budget::Time(_) => 20_000,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            budget: Budget::Evaluations(20_000),
            seed: 1,
            workers: 1,
            flows: Vec::new(),
            grid_limit: 100_000,
        }
    }
}

/// One (flow, destination, plane): the pessimism interval [achieved, bound].
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub flow: String,
    pub destination: String,
    pub plane: String,
    /// The largest delay realised, µs: a replayed simulation's maximum.
    pub achieved_us: f64,
    /// The `best` bound, µs; `None` when unbounded.
    pub bound_us: Option<f64>,
    /// achieved / bound.
    pub ratio: Option<f64>,
    /// The scenario realising `achieved_us`: an index into [`Report::scenarios`].
    pub scenario: usize,
    /// An exhaustive search over the grid ran: no grid point does worse than `achieved_us`.
    pub exact_for_grid: bool,
    /// The grid's step between relative releases, ns (when `exact_for_grid`).
    pub grid_step_ns: Option<i64>,
    /// Simulations this row's search ran.
    pub evaluations: u64,
    /// achieved above bound: a soundness bug in the analysis or the simulator.
    pub above_bound: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Violation {
    pub flow: String,
    pub destination: String,
    pub plane: String,
    pub achieved_us: f64,
    pub bound_us: f64,
    pub scenario: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub network: String,
    pub method: &'static str,
    pub rows: Vec<Row>,
    pub scenarios: Vec<Scenario>,
    /// Mean, least and largest achieved / bound over the bounded rows.
    pub mean_ratio: Option<f64>,
    pub min_ratio: Option<f64>,
    pub max_ratio: Option<f64>,
    /// Rows whose achieved delay is above the bound (soundness bugs).
    pub violations: Vec<Violation>,
    /// Simulations run by the searches, and replays of their best scenarios.
    pub evaluations: u64,
    pub replays: u64,
    pub seed: u64,
    pub workers: usize,
    pub notes: Vec<String>,
}

/// Slack below which an achieved delay is not above its bound, µs: the bound is computed in
/// floating point seconds, the simulator's times are whole ns rounded down.
pub const SLACK_US: f64 = 1e-6;

/// Searches every (flow, destination, plane) (or those of `settings.flows`).
pub fn run(net: &Network, settings: &Settings) -> Result<Report, String> {
    run_with(net, settings, 1.0)
}

/// [`run`] with every bound multiplied by `bound_scale` (tests shrink them to check that an
/// achieved delay above its bound is reported, not clipped).
pub(crate) fn run_with(net: &Network, settings: &Settings, bound_scale: f64) -> Result<Report, String> {
    let started = Instant::now();
    if net.kind == crate::model::NetworkKind::ServerGraph {
        return Err("a server graph has no frames to simulate: the worst-case search needs a network".into());
    }
    if net.flows.is_empty() {
        return Err("the description has no flows to search".into());
    }
    for name in &settings.flows {
        if !net.flows.iter().any(|f| &f.name == name) {
            return Err(format!("--flows: no flow named '{name}' in {}", net.spec.name));
        }
    }
    let analysis =
        analysis::run(net, &Request { method: crate::analysis::Method::Best, ..Default::default() })?;
    let mut notes = Vec::new();
    let cut: Vec<&str> =
        net.nodes.iter().filter(|n| n.switching == Switching::CutThrough).map(|n| n.name.as_str()).collect();
    let store_and_forward = !cut.is_empty();
    if store_and_forward {
        notes.push(format!(
            "cut-through switches ({}) run store-and-forward in every scenario, the model the bound is \
             computed for (the scenarios say so: `store_and_forward: true`)",
            cut.join(", ")
        ));
    }
    let mut sim_net = net.clone();
    for n in sim_net.nodes.iter_mut() {
        n.switching = Switching::StoreAndForward;
    }
    // Rows in the simulator's route order.
    let mut routes = Vec::new();
    for (f, flow) in net.flows.iter().enumerate() {
        for k in 0..flow.routes.len() {
            routes.push((f, k));
        }
    }
    let bound_of = |f: usize, k: usize| -> Option<f64> {
        let r = &net.flows[f].routes[k];
        analysis
            .flows
            .iter()
            .find(|b| b.flow == f && b.destination == r.destination && b.plane == r.plane)
            .map(|b| b.delay_us)
            .filter(|d| d.is_finite())
    };
    let bounds: Vec<Option<f64>> = routes.iter().map(|&(f, k)| bound_of(f, k)).collect();
    let targets: Vec<usize> = (0..routes.len())
        .filter(|&r| settings.flows.is_empty() || settings.flows.contains(&net.flows[routes[r].0].name))
        .collect();
    let ctx = search::Context::new(&sim_net, &routes, &bounds, store_and_forward);

    // Searches, rows handed out to the workers in turn.
    let workers = settings.workers.max(1).min(targets.len().max(1));
    let next = AtomicUsize::new(0);
    let found: Mutex<Vec<Option<search::Found>>> = Mutex::new(vec![None; targets.len()]);
    let deadline = match settings.budget {
        // The replays take a share of the time at the end.
        Budget::Time(t) => Some(started + t.mul_f64(0.9)),
        Budget::Evaluations(_) => None,
    };
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= targets.len() {
                    break;
                }
                let budget = match (settings.budget, deadline) {
                    (Budget::Evaluations(n), _) => {
                        search::RowBudget { evaluations: (n / targets.len() as u64).max(1), deadline: None }
                    }
                    (Budget::Time(_), Some(end)) => {
                        let now = Instant::now();
                        let left = end.saturating_duration_since(now);
                        let rows_left = (targets.len() - i) as u32;
                        let share = left.mul_f64(workers as f64) / rows_left.max(1);
                        search::RowBudget { evaluations: u64::MAX, deadline: Some(now + share.min(left)) }
                    }
                    (Budget::Time(_), None) => unreachable!("a time budget has a deadline"),
                };
                let seed = settings.seed ^ (targets[i] as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let result = ctx.search(targets[i], seed, &budget, settings.grid_limit);
                found.lock().expect("no worker panics")[i] = Some(result);
            });
        }
    });
    let found: Vec<search::Found> = found
        .into_inner()
        .expect("no worker panics")
        .into_iter()
        .map(|f| f.expect("every row searched"))
        .collect();

    // Replays of every row's best scenario on the whole network, as `simulate --scenario` runs it.
    let scenarios: Vec<Scenario> = found.iter().map(|f| f.tables.to_scenario(net, f.duration_ns)).collect();
    let maxima: Mutex<Vec<Option<Vec<i64>>>> = Mutex::new(vec![None; scenarios.len()]);
    let next = AtomicUsize::new(0);
    let failure: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= scenarios.len() {
                    break;
                }
                match replay(net, &scenarios[i]) {
                    Ok(m) => maxima.lock().expect("no worker panics")[i] = Some(m),
                    Err(e) => *failure.lock().expect("no worker panics") = Some(e),
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().expect("no worker panics") {
        return Err(e);
    }
    let maxima: Vec<Vec<i64>> =
        maxima.into_inner().expect("no worker panics").into_iter().flatten().collect();

    // Each row: the largest replayed value, the first scenario giving it (its own on a tie).
    let mut rows = Vec::with_capacity(targets.len());
    let mut used: Vec<Option<usize>> = vec![None; scenarios.len()];
    let mut kept: Vec<Scenario> = Vec::new();
    let mut violations = Vec::new();
    for (i, &r) in targets.iter().enumerate() {
        let mut best = (maxima[i][r], i);
        for (j, m) in maxima.iter().enumerate() {
            if m[r] > best.0 {
                best = (m[r], j);
            }
        }
        let (ns, j) = best;
        let id = *used[j].get_or_insert_with(|| {
            kept.push(scenarios[j].clone());
            kept.len() - 1
        });
        let (f, k) = routes[r];
        let route = &net.flows[f].routes[k];
        let achieved_us = ns as f64 / 1e3;
        let bound_us = bounds[r].map(|b| b * bound_scale);
        let above = bound_us.is_some_and(|b| achieved_us > b + SLACK_US);
        let row = Row {
            flow: net.flows[f].name.clone(),
            destination: net.nodes[route.destination].name.clone(),
            plane: net.planes[route.plane].clone(),
            achieved_us,
            bound_us,
            ratio: bound_us.filter(|&b| b > 0.0).map(|b| achieved_us / b),
            scenario: id,
            exact_for_grid: found[i].exact_for_grid,
            grid_step_ns: found[i].grid_step_ns,
            evaluations: found[i].evaluations,
            above_bound: above,
        };
        if above {
            violations.push(Violation {
                flow: row.flow.clone(),
                destination: row.destination.clone(),
                plane: row.plane.clone(),
                achieved_us,
                bound_us: bound_us.expect("bounded"),
                scenario: id,
            });
        }
        rows.push(row);
    }
    let ratios: Vec<f64> = rows.iter().filter_map(|r| r.ratio).collect();
    let mean_ratio = (!ratios.is_empty()).then(|| ratios.iter().sum::<f64>() / ratios.len() as f64);
    let unbounded = rows.iter().filter(|r| r.bound_us.is_none()).count();
    if unbounded > 0 {
        notes.push(format!("{unbounded} row(s) have no finite bound: no ratio for them"));
    }
    Ok(Report {
        network: net.spec.name.clone(),
        method: "best",
        mean_ratio,
        min_ratio: ratios.iter().copied().reduce(f64::min),
        max_ratio: ratios.iter().copied().reduce(f64::max),
        rows,
        scenarios: kept,
        violations,
        evaluations: found.iter().map(|f| f.evaluations).sum(),
        replays: maxima.len() as u64,
        seed: settings.seed,
        workers,
        notes,
    })
}

/// Replays a scenario on `net` as `simulate --scenario` does: the largest latency per route, ns.
pub fn replay(net: &Network, scenario: &Scenario) -> Result<Vec<i64>, String> {
    let cfg =
        SimConfig { duration_ns: scenario.duration_ns, scenario: Some(scenario.clone()), ..replay_config() };
    let mut sim = Simulator::new(net, cfg)?;
    sim.run_until(scenario.duration_ns);
    sim.finish();
    Ok(sim.route_max_ns())
}

/// The settings of a scenario's run other than the scenario (nothing in them is random).
fn replay_config() -> SimConfig {
    SimConfig {
        seed: 0,
        release: crate::sim::Release::Synchronized,
        frame_sizes: crate::sim::FrameSizes::Max,
        ..SimConfig::default()
    }
}

/// A run of resolved scenario tables for the search (only its active flows send).
pub(crate) fn evaluate(net: &Network, tables: ScenarioTables, duration_ns: i64) -> Result<Simulator, String> {
    let cfg = SimConfig { duration_ns, ..replay_config() };
    let mut sim = Simulator::with_scenario(net, cfg, tables)?;
    sim.run_until(duration_ns);
    Ok(sim)
}
