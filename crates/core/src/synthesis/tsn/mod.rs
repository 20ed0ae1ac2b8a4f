//! `rtnetlab configure tsn`: gate control lists and stream offsets that make time-triggered
//! streams meet their deadlines with no frame ever waiting (no-wait) or waiting at most a stated
//! time in all (bounded-wait, `max_wait_ns`), and idle slopes for credit-based classes left as
//! `auto`, written back into the description.
//!
//! * **Bounded-wait.** A frame may wait at a synthesised gate: its window there opens later than
//!   its arrival (its queue's gate closed meanwhile). Its waits along each route sum to at most
//!   the bound and to what its deadline leaves above its chain. Frames of one queue never share
//!   it (frame isolation: from one's arrival to the end of its window no other is there), frames
//!   of two queues only their windows. A held frame leaves when its gate opens by the port's
//!   clock, up to ε from the true time, so every gate upstream at which it waits widens the
//!   frame's window at a port by 2ε (early side).
//!
//! * **What is synthesised.** Every port whose scheduler is `kind: tas` without `entries` gets a
//!   gate control list of its own; every flow of a class such a scheduler lists as `scheduled`
//!   (a *stream*) gets an `offset`. A stream's frames are sent at once at every port of their
//!   route: each has a window in which its class's gate is open and every other gate closed,
//!   widened by the clock synchronisation error ε (`sync_error`, 802.1AS precision) on both
//!   sides. The other classes' gates are open elsewhere; a frame of theirs starts only if it
//!   ends before its gate closes (the length-aware guard band of [`crate::schedulers::tas`]).
//! * **Method.** [`schedule`]: no-wait offsets (and bounded waits) as in Dürr & Nayak ("No-wait packet scheduling for
//!   IEEE time-sensitive networks (TSN)", RTNS 2016) with the exact periodic disjointness test of
//!   Craciunas, Serna Oliver, Chmelík & Steiner ("Scheduling real-time communication in IEEE
//!   802.1Qbv time sensitive networks", RTNS 2016): first fit, then, where the instance is small
//!   enough, a mixed-integer program the front's solver (HiGHS) answers, started from first fit.
//! * **Checked.** The written description is validated again, every stream must pass the
//!   analysis's time-triggered rule ([`crate::schedulers::tas::time_triggered`]), and `best`
//!   bounds every flow; the report carries the misses, if any.
//! * **Infeasible.** One line per cause: a stream its own path cannot carry, a port whose
//!   scheduled windows exceed its time, two streams that can never share a port, a deadline
//!   below the transmission chain; else the exact program's verdict.

mod document;
pub mod improve;
pub mod schedule;
pub mod slopes;

use document::{assign_scheduler, capped, check, provisional_gates};
pub use document::{duration_text, offsets};

use crate::model::{self, Diagnostics, Network, PortId, SchedulerConfig};
use crate::schedulers::tas::{gcd, timetable};
use schedule::{Goal, Instance, Milp, MilpSolver, Stream, Visit};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Instant;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Objective {
    /// The most time left usable to the unscheduled classes (windows packed, fewer guard bands).
    #[default]
    Bandwidth,
    /// The largest smallest margin between two scheduled windows (room for clock error beyond ε).
    Slack,
    /// Each port's cycle the least common multiple of the periods crossing it.
    Cycle,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SolverChoice {
    /// First fit, then the exact program when it has at most `exact_limit` pairs.
    #[default]
    Auto,
    Exact,
    Heuristic,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Request {
    pub objective: Objective,
    /// Seconds the whole search may take.
    pub time_limit: f64,
    pub solver: SolverChoice,
    /// Most stream pairs (rows) given to the exact solver under `auto`.
    pub exact_limit: usize,
    /// Bounded-wait: the most a scheduled frame may wait, in all, behind other scheduled frames
    /// at the gates of its route (ns); 0 is no-wait.
    pub max_wait_ns: i64,
}

impl Default for Request {
    fn default() -> Self {
        Request {
            objective: Objective::Bandwidth,
            time_limit: 60.0,
            solver: SolverChoice::Auto,
            exact_limit: 5000,
            max_wait_ns: 0,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct StreamRow {
    pub flow: String,
    pub offset_ns: i64,
    pub period_ns: i64,
    /// Release to delivery with no wait, the longest route's.
    pub chain_us: f64,
    /// The wait planned for its frame at the gates of its route, the longest route's (ns).
    pub wait_ns: i64,
    pub deadline_us: Option<f64>,
    pub hops: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct PortRow {
    pub port: String,
    pub scheduler: String,
    pub cycle_ns: i64,
    pub streams: usize,
    pub windows: usize,
    pub entries: usize,
    /// Share of the cycle inside scheduled windows.
    pub scheduled_share: f64,
    /// Share of the cycle in which the unscheduled classes' largest frame at the port may start
    /// and end before the next window (1 − scheduled share, less a guard band per gap).
    pub usable_share: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub feasible: bool,
    /// `no-wait` or `bounded-wait`.
    pub mode: &'static str,
    /// The bound on each frame's total wait (ns; 0 under no-wait).
    pub max_wait_ns: i64,
    /// One line per cause when infeasible.
    pub reasons: Vec<String>,
    pub objective: Objective,
    /// `milp`, `first-fit`, `milp (from first-fit)`, `search (from first-fit)`, `milp (from search)`
    /// or `search (from milp)`.
    pub method: String,
    /// The exact solver's status, when it ran.
    pub solver_status: Option<String>,
    /// Why the exact solver did not run.
    pub solver_note: Option<String>,
    /// The objective's value and a bound on it, with the relative gap (0: optimal).
    pub value: Option<f64>,
    pub bound: Option<f64>,
    pub gap: Option<f64>,
    pub value_unit: &'static str,
    pub heuristic_s: f64,
    /// The search around first fit ([`improve`]): seconds, and its rounds (none: it did not run).
    pub search_s: f64,
    pub search: Option<improve::Stats>,
    pub exact_s: f64,
    pub sync_error_ns: i64,
    /// Smallest gap between two scheduled windows at a port beyond ε (ns).
    pub margin_ns: Option<i64>,
    pub pairs: usize,
    pub streams: Vec<StreamRow>,
    pub ports: Vec<PortRow>,
    /// Idle slopes chosen for `auto` classes: scheduler → class → bit/s.
    pub idle_slopes: BTreeMap<String, BTreeMap<String, f64>>,
    /// Flows whose `best` bound misses its deadline in the written description (none when
    /// feasible), and scheduled flows the time-triggered rule did not confirm (none: a bug).
    pub misses: Vec<String>,
    pub unconfirmed: Vec<String>,
    /// The description with everything written in (when feasible).
    pub document: Option<Value>,
}

impl Report {
    fn infeasible(objective: Objective, reasons: Vec<String>) -> Report {
        Report {
            feasible: false,
            mode: "no-wait",
            max_wait_ns: 0,
            reasons,
            objective,
            method: String::new(),
            solver_status: None,
            solver_note: None,
            value: None,
            bound: None,
            gap: None,
            value_unit: "",
            heuristic_s: 0.0,
            search_s: 0.0,
            search: None,
            exact_s: 0.0,
            sync_error_ns: 0,
            margin_ns: None,
            pairs: 0,
            streams: Vec::new(),
            ports: Vec::new(),
            idle_slopes: BTreeMap::new(),
            misses: Vec::new(),
            unconfirmed: Vec::new(),
            document: None,
        }
    }
}

/// Most causes listed; the rest are counted in one line.
const MAX_REASONS: usize = 20;

fn lcm(a: i64, b: i64) -> Option<i64> {
    (a / gcd(a, b)).checked_mul(b)
}

/// Configures a description given as JSON (see the module documentation). Errors are the
/// model's diagnostics, one line each, or what there is nothing to configure in.
pub fn configure(doc: Value, req: &Request, solver: Option<MilpSolver>) -> Result<Report, Vec<String>> {
    let original = doc.clone();
    let mut doc = doc;
    let gated = provisional_gates(&mut doc);
    let autos = slopes::provisional_slopes(&mut doc);
    if gated.is_empty() && autos.is_empty() {
        return Err(vec![
            "schedulers: nothing to configure: no `tas` scheduler without `entries` and no credit-based \
             idle slope left as `auto`"
                .into(),
        ]);
    }
    if !req.time_limit.is_finite() || req.time_limit <= 0.0 {
        return Err(vec![format!(
            "--time-limit: must be a positive number of seconds, got {}",
            req.time_limit
        )]);
    }
    if req.max_wait_ns < 0 {
        return Err(vec![format!("--max-wait: must not be negative, got {}ns", req.max_wait_ns)]);
    }
    let mut diags = Diagnostics::default();
    let Some(net) = model::load_value(doc, &mut diags) else {
        return Err(diags.errors().map(|d| format!("{}: {}", d.place, d.message)).collect());
    };
    let started = Instant::now();
    let deadline = started + std::time::Duration::from_secs_f64(req.time_limit);
    let mut report = if gated.is_empty() {
        let mut r = Report::infeasible(req.objective, Vec::new());
        r.feasible = true;
        r.document = Some(original.clone());
        r
    } else {
        gates(&net, &original, &gated, req, solver, deadline)?
    };
    report.max_wait_ns = req.max_wait_ns;
    report.mode = if req.max_wait_ns > 0 { "bounded-wait" } else { "no-wait" };
    if !report.feasible {
        return Ok(report);
    }
    let mut document = report.document.take().expect("a feasible report has its document");
    if !autos.is_empty() {
        match slopes::choose(&document, &autos) {
            Ok((doc, chosen)) => {
                document = doc;
                report.idle_slopes = chosen;
            }
            Err(reasons) => {
                let mut r = Report::infeasible(req.objective, reasons);
                (r.mode, r.max_wait_ns) = (report.mode, report.max_wait_ns);
                return Ok(r);
            }
        }
    }
    check(&document, &mut report)?;
    report.document = Some(document);
    Ok(report)
}

/// A stream: its flow, window per constrained port, chain and deadline.
struct StreamInfo {
    flow: usize,
    chain_ns: i64,
}

/// The gate lists and offsets.
fn gates(
    net: &Network,
    original: &Value,
    gated: &[(String, Option<String>)],
    req: &Request,
    solver: Option<MilpSolver>,
    deadline: Instant,
) -> Result<Report, Vec<String>> {
    let synth: Vec<&str> = gated.iter().map(|(n, _)| n.as_str()).collect();
    let is_synth = |p: PortId| synth.contains(&net.ports[p].scheduler_name.as_str());
    let scheduled_of = |p: PortId| -> &[String] {
        match &net.ports[p].discipline {
            SchedulerConfig::Tas { scheduled, .. } => scheduled,
            _ => &[],
        }
    };
    let scheduled_classes: Vec<bool> = net
        .classes
        .iter()
        .map(|c| {
            (0..net.ports.len()).any(|p| is_synth(p) && scheduled_of(p).contains(&c.name))
                || net.spec.schedulers.iter().any(|(n, s)| {
                    synth.contains(&n.as_str())
                        && crate::schedulers::discipline(s)
                            .is_some_and(|d| d.time_triggered().contains(&c.name))
                })
        })
        .collect();
    let eps = net
        .spec
        .schedulers
        .values()
        .filter_map(|s| match s {
            SchedulerConfig::Tas { sync_error, .. } => Some(sync_error.as_ns()),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let ns = |s: f64| (s * 1e9).round() as i64;
    let mut reasons: Vec<String> = Vec::new();
    let mut infos: Vec<StreamInfo> = Vec::new();
    let mut streams: Vec<Stream> = Vec::new();
    let mut port_index: BTreeMap<PortId, usize> = BTreeMap::new();
    let mut ports: Vec<PortId> = Vec::new();
    let stream_flows: Vec<usize> =
        (0..net.flows.len()).filter(|&f| net.flows[f].class.is_some_and(|k| scheduled_classes[k])).collect();
    if stream_flows.is_empty() {
        reasons.push(format!(
            "flows: no flow of a class the schedulers {} list as `scheduled`; nothing to schedule",
            synth.join(", ")
        ));
    }
    // A scheduled class's queue must hold only streams: its priority is its own.
    for (name, cfg) in &net.spec.schedulers {
        let SchedulerConfig::Tas { scheduled, .. } = cfg else { continue };
        if !synth.contains(&name.as_str()) {
            continue;
        }
        for c in scheduled {
            let Some(k) = net.classes.iter().find(|k| &k.name == c) else { continue };
            if let Some(o) =
                net.classes.iter().find(|o| o.priority == k.priority && !scheduled.contains(&o.name))
            {
                reasons.push(format!(
                    "schedulers.{name}.scheduled: class '{c}' shares priority {} with unscheduled class '{}'; a \
                     scheduled class needs a queue (a priority) of its own",
                    k.priority, o.name
                ));
            }
        }
    }
    for &f in &stream_flows {
        let flow = &net.flows[f];
        let (period, jitter, pass) = match timetable(net, f, 0) {
            Ok(t) => t,
            Err(why) => {
                reasons.push(format!(
                    "stream '{}': {}",
                    flow.name,
                    why.replace(&format!("flow '{}' ", flow.name), "")
                ));
                continue;
            }
        };
        let class = &net.classes[flow.class.expect("streams have a class")].name;
        let level = net.classes[flow.class.expect("streams have a class")].priority;
        let bounded = req.max_wait_ns > 0;
        // Each passage's upstream passage on its route, and each route's chain (release to
        // delivery, no wait).
        let at = |p: PortId| pass.iter().position(|q| q.port == p).expect("timetabled");
        let mut parent: Vec<Option<usize>> = vec![None; pass.len()];
        let mut route_chain: Vec<i64> = Vec::new();
        for r in &flow.routes {
            for w in r.ports.windows(2) {
                parent[at(w[1])] = Some(at(w[0]));
            }
            let last = *r.ports.last().expect("routes have ports");
            let q = &pass[at(last)];
            route_chain.push(
                q.arrival_ns
                    + ns(q.tx)
                    + ns(net.ports[last].propagation_delay)
                    + ns(net.nodes[r.destination].receive_latency),
            );
        }
        // The most a frame may have waited on reaching each passage: the bound, and on every
        // route through it, what its deadline leaves above its chain.
        let mut budget: Vec<i64> = vec![if bounded { req.max_wait_ns } else { 0 }; pass.len()];
        if let Some(d) = flow.deadline {
            for (r, chain) in flow.routes.iter().zip(&route_chain) {
                for &p in &r.ports {
                    let b = &mut budget[at(p)];
                    *b = (*b).min((ns(d) - chain).max(0));
                }
            }
        }
        let mut visits = Vec::new();
        let mut ok = true;
        for q in &pass {
            let p = q.port;
            let label = net.port_label(p);
            let allowed = if is_synth(p) {
                if !scheduled_of(p).contains(class) {
                    reasons.push(format!(
                        "stream '{}': {label}'s scheduler {} does not list class '{class}' as scheduled",
                        flow.name, net.ports[p].scheduler_name
                    ));
                    false
                } else {
                    true
                }
            } else {
                let plain = crate::schedulers::discipline(&net.ports[p].discipline)
                    .is_some_and(|d| d.holds_nothing_back())
                    && net.ports[p].shaper.is_none();
                let shared = net.port_flows[p].iter().find(|&&g| !stream_flows.contains(&g));
                match (plain, shared) {
                    (true, None) => true,
                    (true, Some(&g)) => {
                        reasons.push(format!(
                            "stream '{}': {label} is shared with unscheduled flow '{}' and has no gates; give it \
                             a `tas` scheduler without entries that lists class '{class}' as scheduled",
                            flow.name, net.flows[g].name
                        ));
                        false
                    }
                    (false, _) => {
                        reasons.push(format!(
                            "stream '{}': {label} runs {} '{}', which may hold its frames; give it a `tas` \
                             scheduler without entries that lists class '{class}' as scheduled",
                            flow.name,
                            net.ports[p].discipline.kind_name(),
                            net.ports[p].scheduler_name
                        ));
                        false
                    }
                }
            };
            ok &= allowed;
            let i = at(p);
            let len = q.busy_ns + jitter + 2 * eps;
            if len > period {
                reasons.push(format!(
                    "stream '{}': its path cannot carry it: at {label} a frame needs {} (transmission, jitter \
                     and twice the clock error), more than its period {}",
                    flow.name,
                    duration_text(len),
                    duration_text(period)
                ));
                ok = false;
            }
            let next = port_index.len();
            let idx = *port_index.entry(p).or_insert(next);
            if idx == ports.len() {
                ports.push(p);
            }
            visits.push(Visit {
                port: idx,
                start: q.arrival_ns - eps,
                len,
                parent: parent[i],
                hold: bounded && is_synth(p),
                level,
                budget: budget[i],
            });
        }
        // The chain: release to delivery with no wait, on the longest route.
        let chain_ns = flow
            .routes
            .iter()
            .map(|r| {
                let last = *r.ports.last().expect("routes have ports");
                let q = pass.iter().find(|q| q.port == last).expect("timetabled");
                q.arrival_ns
                    + ns(q.tx)
                    + ns(net.ports[last].propagation_delay)
                    + ns(net.nodes[r.destination].receive_latency)
            })
            .max()
            .unwrap_or(0);
        if let Some(d) = flow.deadline {
            if ns(d) < chain_ns {
                reasons.push(format!(
                    "stream '{}': deadline {} is below its transmission chain {} ({} hops, no waiting)",
                    flow.name,
                    duration_text(ns(d)),
                    duration_text(chain_ns),
                    pass.len()
                ));
                ok = false;
            }
        }
        if ok {
            infos.push(StreamInfo { flow: f, chain_ns });
            streams.push(Stream { period, visits, eps });
        }
    }
    // Per constrained port, the largest unscheduled frame's time (a port that is not synthesised
    // carries streams only).
    let guards = ports
        .iter()
        .map(|&p| {
            if !is_synth(p) {
                return 0;
            }
            let sched = scheduled_of(p);
            let largest = net.port_flows[p]
                .iter()
                .filter(|&&f| net.flows[f].class.is_some_and(|c| !sched.contains(&net.classes[c].name)))
                .map(|&f| net.flows[f].max_frame_wire)
                .fold(0.0, f64::max);
            (largest / net.ports[p].rate * 1e9).ceil() as i64
        })
        .collect();
    let others_load = ports
        .iter()
        .map(|&p| {
            let sched = scheduled_of(p);
            net.port_flows[p]
                .iter()
                .filter(|&&f| net.flows[f].class.is_some_and(|c| !sched.contains(&net.classes[c].name)))
                .map(|&f| net.flows[f].rate)
                .sum::<f64>()
                / net.ports[p].rate
        })
        .collect();
    let inst = Instance { streams, ports: ports.len(), guards, others_load };
    // Per port: the load of its windows, and pairs that can never share it.
    for (k, list) in inst.by_port().iter().enumerate() {
        let load: f64 = list
            .iter()
            .map(|&(s, v)| inst.streams[s].visits[v].len as f64 / inst.streams[s].period as f64)
            .sum();
        if load > 1.0 {
            reasons.push(format!(
                "{}: its scheduled windows take {:.1} % of the time (Σ window/period), more than its cycle",
                net.port_label(ports[k]),
                load * 100.0
            ));
        }
        for (i, &(f, vf)) in list.iter().enumerate() {
            for &(g, vg) in &list[i + 1..] {
                let (a, b) = (&inst.streams[f], &inst.streams[g]);
                let gg = gcd(a.period, b.period);
                if a.visits[vf].len + b.visits[vg].len > gg {
                    reasons.push(format!(
                        "{}: streams '{}' and '{}' can never share it: their windows ({} + {}) exceed the \
                         greatest common divisor of their periods ({})",
                        net.port_label(ports[k]),
                        net.flows[infos[f].flow].name,
                        net.flows[infos[g].flow].name,
                        duration_text(a.visits[vf].len),
                        duration_text(b.visits[vg].len),
                        duration_text(gg)
                    ));
                }
            }
        }
    }
    // A cycle written for a scheduler must hold whole periods of its streams.
    let mut port_cycle: BTreeMap<PortId, i64> = BTreeMap::new();
    for (name, written) in gated {
        let Some(text) = written else { continue };
        let Some(SchedulerConfig::Tas { cycle: c, .. }) = net.spec.schedulers.get(name) else { continue };
        for (k, &p) in ports.iter().enumerate() {
            if net.ports[p].scheduler_name != *name {
                continue;
            }
            port_cycle.insert(p, c.as_ns());
            for (s, st) in inst.streams.iter().enumerate() {
                if st.visits.iter().any(|v| v.port == k) && c.as_ns() % st.period != 0 {
                    reasons.push(format!(
                        "schedulers.{name}.cycle: {text} is not a multiple of stream '{}''s period {}",
                        net.flows[infos[s].flow].name,
                        duration_text(st.period)
                    ));
                }
            }
        }
    }
    if !reasons.is_empty() {
        return Ok(Report::infeasible(req.objective, capped(reasons)));
    }

    // The search.
    let pairs = inst.pairs();
    let margin_upper = inst.margin_bound();
    let goal = if req.objective == Objective::Slack { Goal::Margin } else { Goal::Pack };
    let t0 = Instant::now();
    let fit = |inst: &Instance| {
        if goal == Goal::Margin {
            schedule::widest_first_fit(inst, margin_upper, deadline)
        } else {
            let order = schedule::default_order(inst);
            let ff = schedule::first_fit(inst, &order, 0, inst.streams.len().min(200), deadline);
            ff.offsets.zip(ff.waits).map(|(o, w)| (0, o, w))
        }
    };
    // Bounded-wait: first fit without waits first (a wait taken greedily where a later offset
    // would do costs the other classes time); with waits where that finds nothing or leaves an
    // unscheduled frame no room.
    let heuristic = if inst.bounded() {
        let mut plain = inst.clone();
        plain.streams.iter_mut().flat_map(|s| s.visits.iter_mut()).for_each(|v| v.hold = false);
        fit(&plain).filter(|(_, o, w)| inst.leaves_room(o, w)).or_else(|| fit(&inst))
    } else {
        fit(&inst)
    };
    let heuristic_s = t0.elapsed().as_secs_f64();
    let mut method = "first-fit".to_string();
    let (mut solver_status, mut solver_note) = (None, None);
    let mut best = heuristic.clone();
    let mut proved_bound: Option<f64> = None;
    let t1 = Instant::now();
    let exact_wanted = match req.solver {
        SolverChoice::Heuristic => false,
        SolverChoice::Exact => true,
        SolverChoice::Auto => {
            if pairs.len() > req.exact_limit {
                solver_note = Some(format!(
                    "{} stream pairs, more than the exact solver's limit of {} (--exact-limit): {}",
                    pairs.len(),
                    req.exact_limit,
                    if goal == Goal::Pack {
                        "first fit and the search around it only"
                    } else {
                        "first fit only"
                    }
                ));
            }
            pairs.len() <= req.exact_limit
        }
    };
    // The search around the incumbent ([`improve`]; `heuristic` is first fit alone). Under
    // bandwidth it comes first, with three quarters of what is left when the exact solver follows
    // (from its result; its packing is only a proxy of the usable share); under slack the exact
    // solver comes first with four fifths, the search after it from the better of the two.
    let exact_runs = exact_wanted && solver.is_some() && !inst.streams.is_empty();
    let searching = req.solver != SolverChoice::Heuristic;
    let mut search: Option<improve::Stats> = None;
    let mut search_s = 0.0;
    // Returns the search's rounds and seconds.
    let run_search =
        |best: &mut Option<(i64, Vec<i64>, schedule::Waits)>, method: &mut String, share: f64| {
            let start = best.clone()?;
            let t = Instant::now();
            let until = t + deadline.saturating_duration_since(t).mul_f64(share);
            let (found, stats) = improve::improve(&inst, goal, start, margin_upper, until, usize::MAX, 1);
            if stats.improved > 0 && inst.check(&found.1, &found.2, found.0) {
                *best = Some(found);
                *method = if method == "first-fit" {
                    "search (from first-fit)".into()
                } else {
                    "search (from milp)".into()
                };
            }
            Some((stats, t.elapsed().as_secs_f64()))
        };
    if searching && goal == Goal::Pack {
        if let Some((stats, secs)) = run_search(&mut best, &mut method, if exact_runs { 0.75 } else { 0.9 }) {
            (search, search_s) = (Some(stats), secs);
        }
    }

    let remaining = deadline.saturating_duration_since(Instant::now()).as_secs_f64();
    match (exact_wanted, solver) {
        (true, None) => solver_note = Some("no MILP solver (highspy) available: first fit only".into()),
        (true, Some(_)) if remaining <= 0.05 => {
            solver_note = Some("the time limit was spent by first fit".into());
        }
        (true, Some(solve)) if !inst.streams.is_empty() => {
            let mut milp: Milp = schedule::program(&inst, &pairs, goal, margin_upper);
            // What follows the solver (gate lists, the checks) needs its share of the limit, and
            // HiGHS may overrun its own by a little.
            let share = if searching && goal == Goal::Margin { 0.8 } else { 0.9 };
            milp.time_limit = (remaining * share - 0.5).max(0.05);
            milp.start = best.as_ref().map(|(m, o, w)| schedule::start_of(&inst, &pairs, goal, o, w, *m));
            let answer = solve(&milp).map_err(|e| vec![format!("the MILP solver failed: {e}")])?;
            solver_status = Some(answer.status.clone());
            if let Some(x) = &answer.x {
                let n = inst.streams.len();
                let offsets: Vec<i64> = x[..n].iter().map(|v| v.round() as i64).collect();
                let cols = schedule::columns(&inst, &pairs);
                let waits: schedule::Waits = cols
                    .wait
                    .iter()
                    .map(|c| c.iter().map(|k| k.map_or(0, |k| x[k].round() as i64)).collect())
                    .collect();
                let margin = if goal == Goal::Margin { x[x.len() - 1].round() as i64 } else { 0 };
                let kept = if goal == Goal::Margin { 0.5 } else { 0.0 };
                let room_lost = !inst.leaves_room_keeping(&offsets, &waits, kept)
                    && heuristic.as_ref().is_some_and(|(_, o, w)| inst.leaves_room_keeping(o, w, kept));
                if room_lost {
                    solver_note = Some(
                        "the solver's offsets leave an unscheduled frame no gap at some port; first fit kept"
                            .into(),
                    );
                } else if inst.check(&offsets, &waits, margin) {
                    let better = match (&best, goal) {
                        (None, _) => true,
                        (Some((m, _, _)), Goal::Margin) => margin >= *m,
                        // The program's packing stands in for the usable share: kept when that is no worse.
                        (Some((_, o, w)), Goal::Pack) => {
                            let by_port = inst.by_port();
                            improve::no_worse(
                                improve::score(&inst, &by_port, &offsets, &waits),
                                improve::score(&inst, &by_port, o, w),
                            )
                        }
                    };
                    if better {
                        best = Some((margin, offsets, waits));
                        method = match (&heuristic, method.as_str()) {
                            (None, _) => "milp".into(),
                            (Some(_), "first-fit") => "milp (from first-fit)".into(),
                            _ => "milp (from search)".into(),
                        };
                    }
                } else {
                    solver_note = Some("the solver's offsets failed the exact check; first fit kept".into());
                }
            }
            if answer.status == "optimal" {
                proved_bound = answer.objective;
            } else {
                proved_bound = answer.bound;
            }
            if answer.status == "infeasible" && best.is_none() {
                let why = if req.max_wait_ns > 0 {
                    format!(
                        "no offsets and waits exist: the exact program (HiGHS) proves that no schedule in which \
                         each frame waits at most {} in all (--max-wait) keeps every pair of streams apart at \
                         every port",
                        duration_text(req.max_wait_ns)
                    )
                } else {
                    "no offsets exist: the exact program (HiGHS) proves that no no-wait schedule keeps every \
                     pair of streams apart at every port"
                        .into()
                };
                return Ok(Report::infeasible(req.objective, vec![why]));
            }
        }
        _ => {}
    }
    let exact_s = t1.elapsed().as_secs_f64() - search_s;
    // Above the exact limit the slack search is too slow to pay: first fit's margin stands.
    if searching && goal == Goal::Margin && exact_runs {
        if let Some((stats, secs)) = run_search(&mut best, &mut method, 0.9) {
            (search, search_s) = (Some(stats), secs);
        }
    }
    let Some((margin, offsets, waits)) = best else {
        let why = if solver_status.is_some() {
            "no offsets found within the time limit (first fit failed; the exact program neither found one nor \
             proved there is none)"
        } else {
            "first fit found no offsets (no proof that none exist: run with the exact solver, --solver exact)"
        };
        let mut r = Report::infeasible(req.objective, vec![why.into()]);
        r.solver_status = solver_status;
        r.solver_note = solver_note;
        return Ok(r);
    };

    // Gate lists and the document.
    let mut doc = original.clone();
    let hyper = inst.streams.iter().try_fold(1i64, |h, s| lcm(h, s.period)).ok_or_else(|| {
        vec!["the streams' periods have a least common multiple beyond 292 years; round them".to_string()]
    })?;
    let classes: Vec<&str> = net.classes.iter().map(|c| c.name.as_str()).collect();
    let mut port_rows = Vec::new();
    let mut new_schedulers: Vec<(String, Value)> = Vec::new();
    let mut assign: Vec<(PortId, String)> = Vec::new();
    let mut taken: std::collections::HashSet<String> = net.spec.schedulers.keys().cloned().collect();
    let by_port = inst.by_port();
    let mut gap_reasons: Vec<String> = Vec::new();
    let mut usable_min = f64::INFINITY;
    let mut usable_bound = f64::INFINITY;
    for p in 0..net.ports.len() {
        if !is_synth(p) {
            continue;
        }
        let k = port_index.get(&p).copied();
        let list: &[(usize, usize)] = k.map_or(&[], |k| &by_port[k]);
        let sched = scheduled_of(p);
        let others: Vec<&str> = classes.iter().copied().filter(|c| !sched.iter().any(|s| s == c)).collect();
        let port_lcm =
            list.iter().try_fold(1i64, |h, &(s, _)| lcm(h, inst.streams[s].period)).unwrap_or(hyper);
        let cycle = match (port_cycle.get(&p), req.objective) {
            (Some(&c), _) => c,
            (None, Objective::Cycle) => port_lcm,
            (None, _) => hyper,
        };
        if list.is_empty() {
            continue;
        }
        // Windows with the priority of their frames: a window opens its own level's gate only, so
        // that frames of two scheduled levels never see each other's gate open.
        let mut windows: Vec<(i64, i64, u32)> = Vec::new();
        for &(s, v) in list {
            let st = &inst.streams[s];
            let (start, vlen, _) = st.window(v, offsets[s], &waits[s], 0);
            let prio = net.flows[infos[s].flow].class.map_or(u32::MAX, |k| net.classes[k].priority);
            for j in 0..cycle / st.period {
                let a = (start + j * st.period).rem_euclid(cycle);
                let b = a + vlen;
                if b > cycle {
                    windows.push((a, cycle, prio));
                    windows.push((0, b - cycle, prio));
                } else {
                    windows.push((a, b, prio));
                }
            }
        }
        windows.sort_unstable();
        let mut merged: Vec<(i64, i64, u32)> = Vec::new();
        for (a, b, prio) in windows {
            match merged.last_mut() {
                Some(last) if a <= last.1 && prio == last.2 => last.1 = last.1.max(b),
                _ => merged.push((a, b, prio)),
            }
        }
        let level_classes = |prio: u32| -> Vec<&str> {
            net.classes.iter().filter(|c| c.priority == prio).map(|c| c.name.as_str()).collect()
        };
        let mut entries = Vec::new();
        let mut t = 0;
        for &(a, b, prio) in &merged {
            if a > t {
                entries.push(json!({"open": others, "duration": duration_text(a - t)}));
            }
            entries.push(json!({"open": level_classes(prio), "duration": duration_text(b - a)}));
            t = b;
        }
        if t < cycle {
            entries.push(json!({"open": others, "duration": duration_text(cycle - t)}));
        }
        // Usable share for the other classes: each gap less one of their largest frames here.
        let largest_other = net.port_flows[p]
            .iter()
            .filter(|&&f| net.flows[f].class.is_some_and(|c| !sched.contains(&net.classes[c].name)))
            .map(|&f| net.flows[f].max_frame_wire)
            .fold(0.0, f64::max);
        let guard = (largest_other / net.ports[p].rate * 1e9).ceil() as i64;
        let busy: i64 = merged.iter().map(|(a, b, _)| b - a).sum();
        let mut gaps: Vec<i64> = Vec::new();
        for (i, &(_, b, _)) in merged.iter().enumerate() {
            let next = merged.get(i + 1).map_or(merged[0].0 + cycle, |w| w.0);
            gaps.push(next - b);
        }
        // An unscheduled frame needs a gap it fits in (a frame starts only if it ends before its
        // gate closes): without one it would wait for ever.
        let widest = gaps.iter().copied().max().unwrap_or(cycle);
        if largest_other > 0.0 && (widest as f64) < largest_other / net.ports[p].rate * 1e9 {
            let f = net.port_flows[p]
                .iter()
                .copied()
                .filter(|&f| net.flows[f].class.is_some_and(|c| !sched.contains(&net.classes[c].name)))
                .max_by(|&a, &b| net.flows[a].max_frame_wire.total_cmp(&net.flows[b].max_frame_wire))
                .expect("an unscheduled flow");
            gap_reasons.push(format!(
                "{}: the scheduled windows leave no gap of {} for flow '{}''s largest frame (the widest is {})",
                net.port_label(p),
                duration_text(guard),
                net.flows[f].name,
                duration_text(widest)
            ));
        }
        let usable: i64 = gaps.iter().map(|&g| (g - guard).max(0)).sum();
        let usable_share = usable as f64 / cycle as f64;
        // The bound from the windows without waits (a wait widens later windows by 2ε).
        let least: i64 =
            list.iter().map(|&(s, v)| inst.streams[s].visits[v].len * (cycle / inst.streams[s].period)).sum();
        let bound_share = ((cycle - least.min(busy) - if gaps.is_empty() { 0 } else { guard }).max(0)) as f64
            / cycle as f64;
        usable_min = usable_min.min(usable_share);
        usable_bound = usable_bound.min(bound_share);
        let base = &net.ports[p].scheduler_name;
        let node = &net.nodes[net.ports[p].node];
        let mut name = format!("{base}_{}_{}", node.name, net.ports[p].name);
        while taken.contains(&name) {
            name.push('_');
        }
        taken.insert(name.clone());
        let mut cfg =
            json!({"kind": "tas", "cycle": duration_text(cycle), "entries": entries, "scheduled": sched});
        if eps > 0 {
            cfg["sync_error"] = Value::String(duration_text(eps));
        }
        port_rows.push(PortRow {
            port: net.port_label(p),
            scheduler: name.clone(),
            cycle_ns: cycle,
            streams: list.len(),
            windows: merged.len(),
            entries: cfg["entries"].as_array().map_or(0, Vec::len),
            scheduled_share: busy as f64 / cycle as f64,
            usable_share,
        });
        new_schedulers.push((name.clone(), cfg));
        assign.push((p, name));
    }
    if !gap_reasons.is_empty() {
        let mut r = Report::infeasible(req.objective, capped(gap_reasons));
        r.method = method;
        r.solver_status = solver_status;
        r.solver_note = solver_note;
        return Ok(r);
    }
    // The schedulers left without entries: the list of a port no stream crosses (scheduled gates
    // closed, the others open), so that every port naming them validates.
    if let Some(map) = doc.get_mut("schedulers").and_then(Value::as_object_mut) {
        for (name, _) in gated {
            let Some(cfg) = map.get_mut(name).and_then(Value::as_object_mut) else { continue };
            let sched: Vec<String> = cfg
                .get("scheduled")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
                .unwrap_or_default();
            let others: Vec<&str> =
                classes.iter().copied().filter(|c| !sched.iter().any(|s| s == c)).collect();
            let cycle =
                cfg.get("cycle").and_then(Value::as_str).map_or_else(|| duration_text(hyper), str::to_string);
            cfg.insert("cycle".into(), Value::String(cycle.clone()));
            cfg.insert("entries".into(), json!([{"open": others, "duration": cycle}]));
        }
        for (name, cfg) in new_schedulers {
            map.insert(name, cfg);
        }
    }
    for (p, name) in &assign {
        assign_scheduler(&mut doc, net, *p, name);
    }
    let mut stream_rows = Vec::new();
    if let Some(flows) = doc.get_mut("flows").and_then(Value::as_array_mut) {
        for (s, info) in infos.iter().enumerate() {
            let period = inst.streams[s].period;
            let o = offsets[s].rem_euclid(period);
            if let Some(obj) = flows.get_mut(info.flow).and_then(Value::as_object_mut) {
                obj.insert("offset".into(), Value::String(duration_text(o)));
            }
            let flow = &net.flows[info.flow];
            stream_rows.push(StreamRow {
                flow: flow.name.clone(),
                offset_ns: o,
                period_ns: period,
                chain_us: info.chain_ns as f64 / 1e3,
                wait_ns: (0..inst.streams[s].visits.len())
                    .map(|v| inst.streams[s].waited(v, &waits[s]))
                    .max()
                    .unwrap_or(0),
                deadline_us: flow.deadline.map(|d| d * 1e6),
                hops: inst.streams[s].visits.len(),
            });
        }
    }
    // The objective's value, a bound, the gap.
    let (value, bound, unit) = match req.objective {
        Objective::Slack => {
            let mut b = margin_upper as f64;
            if let Some(pb) = proved_bound {
                // The program minimises −δ plus a small packing term: −pb bounds δ from above.
                b = b.min((-pb).floor() + 1.0).max(margin as f64);
            }
            (margin as f64, b, "ns")
        }
        Objective::Bandwidth => {
            let v = if usable_min.is_finite() { usable_min } else { 1.0 };
            let b = if usable_bound.is_finite() { usable_bound } else { 1.0 };
            (v, b.max(v), "share")
        }
        Objective::Cycle => {
            let c = port_rows.iter().map(|r| r.cycle_ns).max().unwrap_or(0) as f64;
            (c, c, "ns")
        }
    };
    let gap = if bound.abs() > 0.0 { ((bound - value) / bound).abs() } else { 0.0 };
    Ok(Report {
        feasible: true,
        mode: if req.max_wait_ns > 0 { "bounded-wait" } else { "no-wait" },
        max_wait_ns: req.max_wait_ns,
        reasons: Vec::new(),
        objective: req.objective,
        method,
        solver_status,
        solver_note,
        value: Some(value),
        bound: Some(bound),
        gap: Some(gap),
        value_unit: unit,
        heuristic_s,
        search_s,
        search,
        exact_s,
        sync_error_ns: eps,
        margin_ns: Some(margin),
        pairs: pairs.len(),
        streams: stream_rows,
        ports: port_rows,
        idle_slopes: BTreeMap::new(),
        misses: Vec::new(),
        unconfirmed: Vec::new(),
        document: Some(doc),
    })
}
