//! DOPA: task partitioning and priority assignment for distributed chains (Garibay-Martínez,
//! Nelissen, Ferreira & Pinho, REACTION 2013; seed 001E, catalogue §2E).
//!
//! An application is a chain τ_1 → μ_1 → τ_2 → … → τ_n triggered by an event of period T, with
//! end-to-end deadline D ≤ T. Intermediate deadlines (Eq. 4–5) split D over the steps in
//! proportion to their costs, Σ = Σ C_j + Σ C^msg_j over the messages that exist (a message
//! disappears, C^msg = 0, when both its tasks share a processor):
//!
//! ```text
//! d_j = d^msg_{j−1} + C_j·D/Σ        d^msg_j = d_j + C^msg_j·D/Σ        (d^msg_0 ≡ 0, d_n = D)
//! ```
//!
//! Each step then has its own *window* (C·D/Σ) and is tested alone, which makes the tests OPA
//! compatible. PARTITION places tasks application by application (non-increasing density), each
//! on its predecessor's processor first, then on its pinned successor's, then worst-fit, running
//! the priority assignment of every resource it touches ([`partition`]).
//!
//! Local tests ([`LocalTest`]): the paper's Eq. 1 treats every task as strictly periodic, but a
//! step is released anywhere between its earliest release and the start of its window, so its
//! releases jitter. [`LocalTest::ReleaseJitter`] (the default) charges that jitter
//! (J = ⌈d^msg_{j−1}⌉ − earliest release) to the step and its victims and requires
//! response − J ≤ ⌊window⌋; [`LocalTest::Paper`] is Eq. 1 as printed (J = 0), kept for comparison.

use std::collections::BTreeSet;

use super::assignment::{audsley_scan, check_order, deadline_monotonic, OpaTest};
use super::busy::Stream;
use super::holistic::{Chain, Step};
use super::{check_range, nonpreemptive, rta, InputError, Limits, Priority, Ticks};

/// A task of an application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DopaTask {
    /// Worst-case execution time (≥ 1).
    pub wcet: Ticks,
    /// Processor the task must run on (the paper's set A), if any.
    pub pinned: Option<usize>,
}

/// A chain of tasks joined by messages, triggered by a sporadic event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Application {
    /// Minimum inter-arrival time T of the triggering event.
    pub period: Ticks,
    /// End-to-end deadline D ≤ T.
    pub deadline: Ticks,
    /// Tasks τ_1 … τ_n in chain order.
    pub tasks: Vec<DopaTask>,
    /// Transmission times of μ_1 … μ_{n−1} (μ_j from τ_j to τ_{j+1}) when they cross the bus.
    pub messages: Vec<Ticks>,
}

impl Application {
    /// A chain of free tasks with WCETs `wcets` and message times `messages` (one fewer).
    pub fn new(period: Ticks, deadline: Ticks, wcets: &[Ticks], messages: &[Ticks]) -> Self {
        Application {
            period,
            deadline,
            tasks: wcets.iter().map(|&wcet| DopaTask { wcet, pinned: None }).collect(),
            messages: messages.to_vec(),
        }
    }

    /// The same application with task `task` pinned to `processor`.
    pub fn pin(mut self, task: usize, processor: usize) -> Self {
        self.tasks[task].pinned = Some(processor);
        self
    }

    /// Density δ = (Σ C + Σ C^msg) / D, every message counted.
    pub fn density(&self) -> f64 {
        let cost: Ticks =
            self.tasks.iter().map(|t| t.wcet).sum::<Ticks>() + self.messages.iter().sum::<Ticks>();
        cost as f64 / self.deadline as f64
    }
}

/// Identical processors and one shared bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Platform {
    /// Number of processors π_0 … π_{m−1}.
    pub processors: usize,
    /// Bit time of the bus (0 is infinitesimal).
    pub tau_bit: Ticks,
}

/// What deadline-monotonic sorts by (the paper does not say; catalogue I-001E-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DmKey {
    /// The step's own window C·D/Σ (its relative deadline after decomposition).
    LocalWindow,
    /// The application's end-to-end deadline D.
    EndToEnd,
    /// The step's absolute intermediate deadline d_j (from the event).
    #[serde(rename = "absolute")]
    AbsoluteDeadline,
}

/// Priority assignment run on each processor and on the bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriorityPolicy {
    /// Audsley's optimal priority assignment.
    Opa,
    /// Deadline monotonic by the given key.
    DeadlineMonotonic(DmKey),
}

/// How a step is tested against its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LocalTest {
    /// Release jitter from the decomposition charged to every step (safe; the default).
    ReleaseJitter,
    /// Eq. 1 of the paper: strictly periodic steps, no jitter (optimistic, for comparison).
    Paper,
}

/// What is known about best-case execution, for the earliest releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BestCase {
    /// Steps may take no time: earliest releases at the event (always safe).
    Zero,
    /// Steps always take exactly their WCET / transmission time.
    Wcet,
}

/// Options of [`partition`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DopaConfig {
    /// OPA or deadline monotonic.
    pub policy: PriorityPolicy,
    /// Local schedulability test.
    pub local_test: LocalTest,
    /// Best-case knowledge (only matters with [`LocalTest::ReleaseJitter`]).
    pub best_case: BestCase,
    /// Limits of each response-time analysis.
    pub limits: Limits,
}

impl Default for DopaConfig {
    fn default() -> Self {
        DopaConfig {
            policy: PriorityPolicy::Opa,
            local_test: LocalTest::ReleaseJitter,
            best_case: BestCase::Zero,
            limits: Limits::default(),
        }
    }
}

/// Intermediate deadlines d_j and d^msg_j from the event (Eq. 4–5).
#[derive(Debug, Clone, PartialEq)]
pub struct IntermediateDeadlines {
    /// d_1 … d_n (d_n = D).
    pub tasks: Vec<f64>,
    /// d^msg_1 … d^msg_{n−1}; equal to the previous task's deadline for an omitted message.
    pub messages: Vec<f64>,
}

/// Eq. 4–5 for WCETs `wcets`, message times `messages` (0 for an omitted message) and
/// end-to-end deadline `deadline`.
pub fn intermediate_deadlines(wcets: &[Ticks], messages: &[Ticks], deadline: Ticks) -> IntermediateDeadlines {
    let sigma = (wcets.iter().sum::<Ticks>() + messages.iter().sum::<Ticks>()) as f64;
    let share = |c: Ticks| c as f64 * deadline as f64 / sigma;
    let (mut tasks, mut msgs) = (Vec::with_capacity(wcets.len()), Vec::with_capacity(messages.len()));
    let mut at = 0.0;
    for (j, &c) in wcets.iter().enumerate() {
        at += share(c);
        tasks.push(at);
        if let Some(&m) = messages.get(j) {
            at += share(m);
            msgs.push(at);
        }
    }
    IntermediateDeadlines { tasks, messages: msgs }
}

/// Where one task ended up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskPlacement {
    /// Processor index.
    pub processor: usize,
    /// Rank on its processor (0 = highest priority).
    pub priority: Priority,
    /// Release jitter charged (0 with [`LocalTest::Paper`]).
    pub jitter: Ticks,
    /// Window ⌊C·D/Σ⌋.
    pub window: Ticks,
    /// Response from the latest release (≤ window).
    pub response: Ticks,
}

/// What became of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessagePlacement {
    /// Sent on the bus (its tasks are on different processors); otherwise omitted.
    pub on_bus: bool,
    /// Rank on the bus (0 = highest), if on the bus.
    pub priority: Option<Priority>,
    /// Release jitter charged, if on the bus.
    pub jitter: Ticks,
    /// Window ⌊C^msg·D/Σ⌋ (0 if omitted).
    pub window: Ticks,
    /// Response from the latest release, if on the bus.
    pub response: Option<Ticks>,
}

/// One application's placement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppPlacement {
    /// Per task.
    pub tasks: Vec<TaskPlacement>,
    /// Per message.
    pub messages: Vec<MessagePlacement>,
    /// Bound on the chain's completion from the event: ⌈d^msg_{n−1}⌉ + response of τ_n (≤ D).
    pub end_to_end: Ticks,
}

/// A feasible partition with its priorities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DopaSolution {
    /// Per application, in input order.
    pub applications: Vec<AppPlacement>,
}

impl DopaSolution {
    /// The solution as holistic chains (processors as placed, the bus as bus 0, priorities as
    /// ranks), for an independent check with [`super::holistic::analyse_holistic`].
    pub fn chains(&self, apps: &[Application], best_case: BestCase) -> Vec<Chain> {
        apps.iter()
            .zip(&self.applications)
            .map(|(app, placed)| {
                let mut steps = Vec::new();
                for (j, t) in placed.tasks.iter().enumerate() {
                    let c = app.tasks[j].wcet;
                    let bcet = if best_case == BestCase::Wcet { c } else { 0 };
                    steps.push(Step::task(t.processor, c, t.priority).with_bcet(bcet));
                    if let Some(m) = placed.messages.get(j).filter(|m| m.on_bus) {
                        let c = app.messages[j];
                        let bcet = if best_case == BestCase::Wcet { c } else { 0 };
                        steps.push(Step::message(0, c, m.priority.expect("on the bus")).with_bcet(bcet));
                    }
                }
                Chain { period: app.period, deadline: app.deadline, jitter: 0, steps }
            })
            .collect()
    }
}

/// Why PARTITION gave up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DopaFailure {
    /// Application being placed.
    pub application: usize,
    /// Task being placed.
    pub task: usize,
    /// One line: what was refused and why.
    pub reason: String,
}

/// Result of [`partition`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DopaOutcome {
    /// Every application fits.
    Schedulable(DopaSolution),
    /// PARTITION stopped at some task.
    Unschedulable(DopaFailure),
}

impl DopaOutcome {
    /// A solution was found.
    pub fn is_schedulable(&self) -> bool {
        matches!(self, DopaOutcome::Schedulable(_))
    }
}

/// State of message μ_{i,j} during PARTITION.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Link {
    /// An end is not placed yet: counted as present (windows only grow when it is omitted).
    Pending,
    /// Its tasks are on different processors.
    Bus,
    /// Its tasks share a processor.
    Omitted,
}

/// A resource whose priorities PARTITION assigns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Res {
    Proc(usize),
    Bus,
}

/// Windows and jitters of one application's steps under its current links.
#[derive(Debug, Clone, Default)]
struct Timing {
    task_jitter: Vec<Ticks>,
    task_window: Vec<Ticks>,
    task_start: Vec<Ticks>,
    task_absolute: Vec<f64>,
    msg_jitter: Vec<Ticks>,
    msg_window: Vec<Ticks>,
    msg_absolute: Vec<f64>,
}

fn timing(app: &Application, links: &[Link], cfg: &DopaConfig) -> Timing {
    let d = app.deadline as i128;
    let exists = |j: usize| links[j] != Link::Omitted;
    let sigma: i128 = app.tasks.iter().map(|t| t.wcet as i128).sum::<i128>()
        + (0..app.messages.len()).filter(|&j| exists(j)).map(|j| app.messages[j] as i128).sum::<i128>();
    let floor = |c: i128| (c * d / sigma) as Ticks;
    let ceil = |p: i128| ((p * d + sigma - 1) / sigma) as Ticks;
    let absolute = |p: i128| (p * d) as f64 / sigma as f64;
    // Latest release: ⌈start of window⌉; earliest: 0, or the WCETs of the steps surely before.
    let jitter = |prefix: i128, earliest: Ticks| match cfg.local_test {
        LocalTest::Paper => 0,
        LocalTest::ReleaseJitter => {
            let earliest = if cfg.best_case == BestCase::Wcet { earliest } else { 0 };
            (ceil(prefix) - earliest).max(0)
        }
    };
    let mut tm = Timing::default();
    let (mut prefix, mut earliest): (i128, Ticks) = (0, 0);
    for (j, task) in app.tasks.iter().enumerate() {
        let c = task.wcet;
        tm.task_jitter.push(jitter(prefix, earliest));
        tm.task_start.push(ceil(prefix));
        tm.task_window.push(floor(c as i128));
        tm.task_absolute.push(absolute(prefix + c as i128));
        prefix += c as i128;
        earliest += c;
        if let Some(&m) = app.messages.get(j) {
            if exists(j) {
                tm.msg_jitter.push(jitter(prefix, earliest));
                tm.msg_window.push(floor(m as i128));
                prefix += m as i128;
                // A pending message may still vanish: only a sure one delays the earliest release.
                if links[j] == Link::Bus {
                    earliest += m;
                }
            } else {
                tm.msg_jitter.push(0);
                tm.msg_window.push(0);
            }
            tm.msg_absolute.push(absolute(prefix));
        }
    }
    tm
}

/// One step tested on its resource.
#[derive(Debug, Clone, Copy)]
struct LocalItem {
    stream: Stream,
    window: Ticks,
    /// Deadline-monotonic key (non-negative f64 bits, which sort like the values).
    key: u64,
}

/// The steps of one resource as an OPA-compatible test: response − jitter ≤ window.
struct LocalSet {
    items: Vec<LocalItem>,
    nonpreemptive: bool,
    tau_bit: Ticks,
    limits: Limits,
    hp: Vec<Stream>,
}

impl OpaTest for LocalSet {
    fn item_count(&self) -> usize {
        self.items.len()
    }

    fn schedulable(&mut self, item: usize, higher: &[usize], lower: &[usize]) -> bool {
        self.response(item, higher, lower).is_some()
    }
}

impl LocalSet {
    /// Response from the latest release, if within the window.
    fn response(&mut self, item: usize, higher: &[usize], lower: &[usize]) -> Option<Ticks> {
        self.hp.clear();
        self.hp.extend(higher.iter().map(|&k| self.items[k].stream));
        let it = self.items[item];
        let detail = if self.nonpreemptive {
            let blocking = nonpreemptive::blocking_by(lower.iter().map(|&k| self.items[k].stream.c));
            nonpreemptive::response(it.stream, blocking, &self.hp, self.tau_bit, &self.limits)
        } else {
            rta::response(it.stream, 0, &self.hp, &self.limits)
        };
        detail.response.bound().map(|r| r - it.stream.j).filter(|&r| r <= it.window)
    }
}

/// Which verification refused a placement.
enum Refusal {
    Processor(String),
    Bus(String),
}

/// Mutable state of PARTITION.
struct State<'a> {
    apps: &'a [Application],
    platform: Platform,
    cfg: DopaConfig,
    proc_of: Vec<Vec<Option<usize>>>,
    links: Vec<Vec<Link>>,
    timings: Vec<Timing>,
    /// Tasks (application, task) on each processor.
    procs: Vec<Vec<(usize, usize)>>,
    /// Messages (application, message) on the bus.
    bus: Vec<(usize, usize)>,
    /// Σ C/D of the tasks on each processor (worst-fit order).
    density: Vec<f64>,
    /// Last valid priority order per processor, then the bus (highest first).
    orders: Vec<Option<Vec<(usize, usize)>>>,
}

/// What changed when a task's links were settled.
#[derive(Default)]
struct Settled {
    windows_changed: bool,
    bus_added: bool,
}

impl<'a> State<'a> {
    fn new(apps: &'a [Application], platform: Platform, cfg: DopaConfig) -> Self {
        let links: Vec<Vec<Link>> = apps.iter().map(|a| vec![Link::Pending; a.messages.len()]).collect();
        State {
            apps,
            platform,
            cfg,
            proc_of: apps.iter().map(|a| vec![None; a.tasks.len()]).collect(),
            timings: apps.iter().zip(&links).map(|(a, l)| timing(a, l, &cfg)).collect(),
            links,
            procs: vec![Vec::new(); platform.processors],
            bus: Vec::new(),
            density: vec![0.0; platform.processors],
            orders: vec![None; platform.processors + 1],
        }
    }

    fn slot(&self, r: Res) -> usize {
        match r {
            Res::Proc(p) => p,
            Res::Bus => self.platform.processors,
        }
    }

    fn put(&mut self, i: usize, j: usize, p: usize) {
        self.proc_of[i][j] = Some(p);
        self.procs[p].push((i, j));
        self.density[p] += self.apps[i].tasks[j].wcet as f64 / self.apps[i].deadline as f64;
    }

    fn take(&mut self, i: usize, j: usize, p: usize) {
        self.proc_of[i][j] = None;
        let at = self.procs[p].iter().rposition(|&x| x == (i, j)).expect("placed");
        self.procs[p].remove(at);
        self.density[p] -= self.apps[i].tasks[j].wcet as f64 / self.apps[i].deadline as f64;
    }

    /// Decides μ_{i,j−1} and μ_{i,j} where both ends are placed.
    fn settle_links(&mut self, i: usize, j: usize) -> Settled {
        let mut out = Settled::default();
        let here = self.proc_of[i][j];
        let neighbours = [(j.checked_sub(1), j.checked_sub(1)), (Some(j + 1), Some(j))];
        for (other, link) in neighbours {
            let (Some(other), Some(link)) = (other, link) else { continue };
            if other >= self.apps[i].tasks.len() || self.links[i][link] != Link::Pending {
                continue;
            }
            let Some(there) = self.proc_of[i][other] else { continue };
            if Some(there) == here {
                self.links[i][link] = Link::Omitted;
                out.windows_changed = true;
            } else {
                self.links[i][link] = Link::Bus;
                self.bus.push((i, link));
                out.bus_added = true;
            }
        }
        if out.windows_changed || out.bus_added {
            self.timings[i] = timing(&self.apps[i], &self.links[i], &self.cfg);
        }
        out
    }

    fn local_set(&self, r: Res) -> (Vec<(usize, usize)>, LocalSet) {
        let ids = match r {
            Res::Proc(p) => self.procs[p].clone(),
            Res::Bus => self.bus.clone(),
        };
        let key = |i: usize, window: Ticks, absolute: f64| {
            let v = match self.cfg.policy {
                PriorityPolicy::DeadlineMonotonic(DmKey::EndToEnd) => self.apps[i].deadline as f64,
                PriorityPolicy::DeadlineMonotonic(DmKey::AbsoluteDeadline) => absolute,
                _ => window as f64,
            };
            v.max(0.0).to_bits()
        };
        let items = ids
            .iter()
            .map(|&(i, j)| {
                let (app, tm) = (&self.apps[i], &self.timings[i]);
                match r {
                    Res::Proc(_) => LocalItem {
                        stream: Stream { c: app.tasks[j].wcet, t: app.period, j: tm.task_jitter[j] },
                        window: tm.task_window[j],
                        key: key(i, tm.task_window[j], tm.task_absolute[j]),
                    },
                    Res::Bus => LocalItem {
                        stream: Stream { c: app.messages[j], t: app.period, j: tm.msg_jitter[j] },
                        window: tm.msg_window[j],
                        key: key(i, tm.msg_window[j], tm.msg_absolute[j]),
                    },
                }
            })
            .collect();
        let set = LocalSet {
            items,
            nonpreemptive: r == Res::Bus,
            tau_bit: self.platform.tau_bit,
            limits: self.cfg.limits,
            hp: Vec::new(),
        };
        (ids, set)
    }

    /// Runs the priority assignment of `r`; on success stores the order.
    fn assign(&mut self, r: Res) -> Result<(), String> {
        let (ids, mut set) = self.local_set(r);
        let n = ids.len();
        let name = |k: usize| match r {
            Res::Proc(_) => format!("task {} of application {}", ids[k].1, ids[k].0),
            Res::Bus => format!("message {} of application {}", ids[k].1, ids[k].0),
        };
        let order = match self.cfg.policy {
            PriorityPolicy::Opa => {
                // The previous order, if it still covers the same steps and still holds.
                let previous = self.orders[self.slot(r)].as_ref().filter(|o| o.len() == n).and_then(|o| {
                    o.iter().map(|id| ids.iter().position(|x| x == id)).collect::<Option<Vec<usize>>>()
                });
                match previous.filter(|o| check_order(&mut set, o).iter().all(|&ok| ok)) {
                    Some(o) => o,
                    None => {
                        // Laxest first: the first candidate then nearly always takes the level.
                        let mut scan: Vec<usize> = (0..n).collect();
                        scan.sort_by_key(|&k| (std::cmp::Reverse(set.items[k].window), k));
                        audsley_scan(&mut set, &scan).map_err(|f| {
                            let names: Vec<String> = f.unplaceable.iter().map(|&k| name(k)).collect();
                            format!("OPA finds no level for {}", names.join(", "))
                        })?
                    }
                }
            }
            PriorityPolicy::DeadlineMonotonic(_) => {
                let order = deadline_monotonic(n, |k| (set.items[k].key, ids[k]));
                let verdict = check_order(&mut set, &order);
                if let Some(k) = (0..n).find(|&k| !verdict[k]) {
                    return Err(format!("deadline-monotonic order misses {}", name(k)));
                }
                order
            }
        };
        let slot = self.slot(r);
        self.orders[slot] = Some(order.iter().map(|&k| ids[k]).collect());
        Ok(())
    }

    /// Re-assigns every resource the placement of a task of application `i` on `p` affects.
    fn verify(&mut self, i: usize, p: usize, settled: &Settled) -> Result<(), Refusal> {
        let on = |r: Res| match r {
            Res::Proc(q) => format!("processor {q}"),
            Res::Bus => "bus".into(),
        };
        let mut touched = BTreeSet::from([Res::Proc(p)]);
        if settled.windows_changed {
            touched.extend(self.proc_of[i].iter().flatten().map(|&q| Res::Proc(q)));
            if self.links[i].contains(&Link::Bus) {
                touched.insert(Res::Bus);
            }
        }
        if settled.bus_added {
            touched.insert(Res::Bus);
        }
        for r in touched {
            if let Err(why) = self.assign(r) {
                let why = format!("{}: {why}", on(r));
                return Err(if r == Res::Bus { Refusal::Bus(why) } else { Refusal::Processor(why) });
            }
        }
        Ok(())
    }

    /// Final responses and ranks of every step. Re-checks every resource first (cheap: the
    /// stored orders are reused), so a stale order can never slip into a solution.
    fn solution(&mut self) -> Result<DopaSolution, String> {
        for r in (0..self.platform.processors).map(Res::Proc).chain([Res::Bus]) {
            let empty = match r {
                Res::Proc(p) => self.procs[p].is_empty(),
                Res::Bus => self.bus.is_empty(),
            };
            if !empty {
                self.assign(r).map_err(|why| format!("final check of {r:?}: {why}"))?;
            }
        }
        let mut tasks: Vec<Vec<Option<TaskPlacement>>> =
            self.apps.iter().map(|a| vec![None; a.tasks.len()]).collect();
        let mut msgs: Vec<Vec<MessagePlacement>> = self
            .apps
            .iter()
            .map(|a| {
                let none =
                    MessagePlacement { on_bus: false, priority: None, jitter: 0, window: 0, response: None };
                vec![none; a.messages.len()]
            })
            .collect();
        let resources = (0..self.platform.processors).map(Res::Proc).chain([Res::Bus]);
        for r in resources {
            let (ids, mut set) = self.local_set(r);
            if ids.is_empty() {
                continue;
            }
            let order: Vec<usize> = self.orders[self.slot(r)]
                .iter()
                .flatten()
                .filter_map(|id| ids.iter().position(|x| x == id))
                .collect();
            if order.len() != ids.len() {
                return Err(format!("final check of {r:?}: no priority order covers every step"));
            }
            for (rank, &k) in order.iter().enumerate() {
                let response = set.response(k, &order[..rank], &order[rank + 1..]);
                let (i, j) = ids[k];
                let item = set.items[k];
                let response =
                    response.ok_or_else(|| format!("final check of {r:?}: step {:?} misses", ids[k]))?;
                match r {
                    Res::Proc(p) => {
                        tasks[i][j] = Some(TaskPlacement {
                            processor: p,
                            priority: rank as Priority,
                            jitter: item.stream.j,
                            window: item.window,
                            response,
                        })
                    }
                    Res::Bus => {
                        msgs[i][j] = MessagePlacement {
                            on_bus: true,
                            priority: Some(rank as Priority),
                            jitter: item.stream.j,
                            window: item.window,
                            response: Some(response),
                        }
                    }
                }
            }
        }
        let applications = tasks
            .into_iter()
            .zip(msgs)
            .enumerate()
            .map(|(i, (t, messages))| {
                let tasks: Vec<TaskPlacement> =
                    t.into_iter().map(|x| x.expect("every task placed")).collect();
                let last = tasks.len() - 1;
                let end_to_end = self.timings[i].task_start[last] + tasks[last].response;
                AppPlacement { tasks, messages, end_to_end }
            })
            .collect();
        Ok(DopaSolution { applications })
    }
}

fn validate(apps: &[Application], platform: &Platform) -> Result<(), InputError> {
    if platform.processors == 0 {
        return Err(InputError("platform.processors: must be at least 1".into()));
    }
    check_range("platform.tau_bit", platform.tau_bit, 0)?;
    for (i, a) in apps.iter().enumerate() {
        check_range(&format!("applications[{i}].period"), a.period, 1)?;
        check_range(&format!("applications[{i}].deadline"), a.deadline, 1)?;
        if a.deadline > a.period {
            return Err(InputError(format!(
                "applications[{i}].deadline: {} exceeds the period {} (DOPA needs D ≤ T)",
                a.deadline, a.period
            )));
        }
        if a.tasks.is_empty() {
            return Err(InputError(format!(
                "applications[{i}].tasks: an application needs at least one task"
            )));
        }
        if a.messages.len() + 1 != a.tasks.len() {
            return Err(InputError(format!(
                "applications[{i}].messages: {} messages for {} tasks (need one fewer)",
                a.messages.len(),
                a.tasks.len()
            )));
        }
        for (j, t) in a.tasks.iter().enumerate() {
            check_range(&format!("applications[{i}].tasks[{j}].wcet"), t.wcet, 1)?;
            if let Some(p) = t.pinned.filter(|&p| p >= platform.processors) {
                return Err(InputError(format!(
                    "applications[{i}].tasks[{j}].pinned: processor {p} out of range ({} processors)",
                    platform.processors
                )));
            }
        }
        for (j, &m) in a.messages.iter().enumerate() {
            check_range(&format!("applications[{i}].messages[{j}]"), m, 1)?;
        }
    }
    Ok(())
}

/// PARTITION(Γ) of the paper (Fig. 5) with the priority policy and local test of `cfg`.
///
/// Applications go in non-increasing density (ties by index), tasks in chain order. Pinned
/// tasks sit on their processor from the start. A free task tries (1) its predecessor's
/// processor, (2) its pinned successor's, (3) every other processor by increasing Σ C/D
/// (worst fit, ties by index). A placement decides the messages to its placed neighbours
/// (omitted on the same processor, on the bus otherwise), recomputes the application's
/// windows, and re-runs the priority assignment of the processor, of every processor holding a
/// task of the application if its windows changed, and of the bus if its messages changed. The
/// first candidate where all of them succeed is kept. A bus refusal in step (3) ends PARTITION
/// (line 24 of Fig. 5; every step-(3) candidate puts the same messages on the bus); in steps
/// (1)–(2) it only rejects the candidate.
pub fn partition(
    apps: &[Application],
    platform: &Platform,
    cfg: &DopaConfig,
) -> Result<DopaOutcome, InputError> {
    validate(apps, platform)?;
    let mut st = State::new(apps, *platform, *cfg);
    for (i, app) in apps.iter().enumerate() {
        for (j, t) in app.tasks.iter().enumerate() {
            if let Some(p) = t.pinned {
                st.put(i, j, p);
            }
        }
    }
    for (i, app) in apps.iter().enumerate() {
        for j in 0..app.tasks.len() {
            if app.tasks[j].pinned.is_some() {
                st.settle_links(i, j);
            }
        }
    }
    let fail = |i: usize, j: usize, reason: String| {
        Ok(DopaOutcome::Unschedulable(DopaFailure { application: i, task: j, reason }))
    };

    let mut order: Vec<usize> = (0..apps.len()).collect();
    order.sort_by(|&a, &b| apps[b].density().total_cmp(&apps[a].density()).then(a.cmp(&b)));
    for i in order {
        let n = apps[i].tasks.len();
        for j in 0..n {
            if let Some(p) = apps[i].tasks[j].pinned {
                let settled = st.settle_links(i, j);
                match st.verify(i, p, &settled) {
                    Ok(()) => continue,
                    Err(Refusal::Processor(why) | Refusal::Bus(why)) => {
                        return fail(i, j, format!("pinned to processor {p}, refused: {why}"))
                    }
                }
            }
            let mut candidates: Vec<(usize, bool)> = Vec::new();
            if j > 0 {
                candidates.push((st.proc_of[i][j - 1].expect("predecessor placed"), false));
            }
            if let Some(q) = st.proc_of[i].get(j + 1).copied().flatten() {
                if !candidates.iter().any(|&(p, _)| p == q) {
                    candidates.push((q, false));
                }
            }
            let mut worst_fit: Vec<usize> =
                (0..platform.processors).filter(|p| !candidates.iter().any(|&(q, _)| q == *p)).collect();
            worst_fit.sort_by(|&a, &b| st.density[a].total_cmp(&st.density[b]).then(a.cmp(&b)));
            candidates.extend(worst_fit.into_iter().map(|p| (p, true)));

            let mut last_refusal = String::from("no processor to try");
            let mut placed = false;
            for (p, worst_fit_stage) in candidates {
                let (links, timing, bus_len, orders) =
                    (st.links[i].clone(), st.timings[i].clone(), st.bus.len(), st.orders.clone());
                st.put(i, j, p);
                let settled = st.settle_links(i, j);
                match st.verify(i, p, &settled) {
                    Ok(()) => {
                        placed = true;
                        break;
                    }
                    Err(refusal) => {
                        st.take(i, j, p);
                        (st.links[i], st.timings[i], st.orders) = (links, timing, orders);
                        st.bus.truncate(bus_len);
                        match refusal {
                            Refusal::Bus(why) if worst_fit_stage => {
                                return fail(i, j, format!("on processor {p} its messages do not fit: {why}"))
                            }
                            Refusal::Bus(why) | Refusal::Processor(why) => last_refusal = why,
                        }
                    }
                }
            }
            if !placed {
                return fail(i, j, format!("no processor accepts it; last refusal: {last_refusal}"));
            }
        }
    }
    match st.solution() {
        Ok(solution) => Ok(DopaOutcome::Schedulable(solution)),
        Err(why) => fail(apps.len().saturating_sub(1), 0, why),
    }
}

#[cfg(test)]
mod tests;
