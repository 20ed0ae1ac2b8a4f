//! TFA and SFA on a validated network: every egress port a server, every flow a token bucket
//! at its source, FIFO or static-priority queues at each port.
//!
//! * Each egress port offers β = C·[t − T]^+ (link rate, technological latency of its node).
//!   A FIFO port has one queue; a static-priority port one FIFO queue per priority level, served
//!   with β minus the higher levels' arrivals minus the largest lower-level frame (non-preemption).
//! * **TFA** (total flow analysis) bounds the delay of each queue's aggregate, h(α_q, β_q), and
//!   propagates every flow's burst by its rate × that delay (Le Boudec & Thiran §6.2; the AFDX
//!   practice of Frances, Fraboul and Grieu, ERTS 2006).
//! * **SFA** (separated flow analysis, pay bursts only once) convolves, along each route, the
//!   service left to the flow at each port by the cross traffic (bounded by TFA's propagated
//!   curves), then takes one horizontal deviation (Le Boudec & Thiran §6.4).
//! * **Grouping** (serialisation): flows that reach a port through the same input link cannot
//!   arrive faster than that link, so their joint arrival curve is min(Σ token buckets,
//!   C_in·t + L_max). It is known to tighten AFDX bounds a lot (Grieu 2004; Boyer & Fraboul 2008).
//! * Multiplexing inside a queue is FIFO by default; `blind` assumes nothing about the order.
//!
//! Propagation delays are constant and do not grow bursts; they are added to end-to-end delays.
//! A port whose queue has no finite bound makes every flow through it unbounded, with the reason.

use super::results::*;
use crate::curves::{self, Curve, Unbounded};
use crate::model::{FlowId, Network, PortId};
use crate::schedulers::{self, ClassAtPort};
use std::collections::{BTreeMap, BTreeSet, HashMap};

mod aggregate_pboo;
mod aggregate_pmoo;
pub mod explain;
mod fifo_pass;
pub mod incremental;
mod pmoo;
pub mod sink_tree;
pub(crate) use fifo_pass::PortTables;

/// Total flow analysis, separated flow analysis, or pay multiplexing only once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Tfa,
    Sfa,
    /// SFA whose cross traffic is bounded by the smaller of TFA's and SFA's own output bounds,
    /// iterated to a fixed point ([`sfa_iterate`]).
    SfaIter,
    /// PMOO: arbitrary multiplexing whatever the options say (it is sound under FIFO too).
    Pmoo,
}

/// How frames of different flows inside one queue are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Multiplexing {
    /// FIFO inside each queue (what FIFO and static-priority ports do).
    Fifo,
    /// No assumption (arbitrary multiplexing): always sound, usually looser.
    Blind,
}

/// How a server graph's methods bound the cross traffic of a flow under arbitrary multiplexing
/// (DNC's arrival bounding; its PMOO analysis and sink trees in docs/ANALYSIS.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ArrivalBounds {
    /// Per flow, the tighter bound of the two below (each is valid, so is the smaller).
    #[default]
    Tightest,
    /// Aggregate PBOO: the cross traffic's burst paid at every server of the stretch it crossed
    /// (DNC `AGGR_PBOO_CONCATENATION`, its default), and, hop by hop, TFA's output bounds.
    Pboo,
    /// Aggregate PMOO over the stretch it crossed (DNC `AGGR_PMOO`), alone: arbitrary
    /// multiplexing on server graphs only.
    Pmoo,
}

impl ArrivalBounds {
    /// The names users give them.
    pub const NAMES: &'static [&'static str] = &["tightest", "pboo", "pmoo"];

    pub fn parse(name: &str) -> Result<ArrivalBounds, String> {
        match name {
            "tightest" => Ok(ArrivalBounds::Tightest),
            "pboo" => Ok(ArrivalBounds::Pboo),
            "pmoo" => Ok(ArrivalBounds::Pmoo),
            other => {
                Err(format!("unknown arrival bounding '{other}', expected one of {}", Self::NAMES.join(", ")))
            }
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub method: Method,
    pub grouping: bool,
    pub multiplexing: Multiplexing,
}

impl Options {
    /// The method's name in outputs: `tfa`, `sfa+grouping`, `sfa-blind+grouping`, ...
    pub fn name(&self) -> &'static str {
        use {Method::*, Multiplexing::*};
        match (self.method, self.multiplexing, self.grouping) {
            (Tfa, Fifo, false) => "tfa",
            (Tfa, Fifo, true) => "tfa+grouping",
            (Tfa, Blind, false) => "tfa-blind",
            (Tfa, Blind, true) => "tfa-blind+grouping",
            (Sfa, Fifo, false) => "sfa",
            (Sfa, Fifo, true) => "sfa+grouping",
            (Sfa, Blind, false) => "sfa-blind",
            (Sfa, Blind, true) => "sfa-blind+grouping",
            (SfaIter, Fifo, false) => "sfa-iter",
            (SfaIter, Fifo, true) => "sfa-iter+grouping",
            (SfaIter, Blind, false) => "sfa-iter-blind",
            (SfaIter, Blind, true) => "sfa-iter-blind+grouping",
            (Pmoo, _, false) => "pmoo",
            (Pmoo, _, true) => "pmoo+grouping",
        }
    }
}

/// One flow crossing one port (once, even for multicast).
struct Crossing {
    flow: FlowId,
    port: PortId,
    upstream: Option<usize>,
    queue: usize,
}

/// One FIFO queue of one port: the whole port (FIFO) or one priority level.
struct Queue {
    /// Priority level (lower is served first); `None` for a FIFO port.
    priority: Option<u32>,
    crossings: Vec<usize>,
}

/// How an egress port shares its link between its queues: the port's discipline, whose
/// [`schedulers::Service`] says which.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Discipline {
    /// One FIFO queue.
    Fifo,
    /// One FIFO queue per priority level.
    StaticPriority,
    /// One FIFO queue per class, each with the latency-rate guarantee of its share.
    ClassShares,
    /// One FIFO queue per priority level, the shaped classes' behind their credit-based shapers.
    CreditBased,
    /// One FIFO queue per priority level behind its gate.
    TimeAware,
    /// One FIFO queue per priority level, the regulated classes' behind interleaved regulators.
    Asynchronous,
}

/// The service model of one egress port: the rate its scheduler can count on (the link rate, or
/// a shaper's rate) and how it shares it.
#[derive(Clone, Debug)]
struct PortModel {
    rate: f64,
    discipline: Discipline,
}

/// The model of port `p`, or why this analysis cannot bound it.
fn port_model(net: &Network, p: PortId, flows: &[FlowId]) -> Result<PortModel, String> {
    let port = &net.ports[p];
    let service = schedulers::discipline(&port.discipline).expect("a port's discipline is no shaper");
    let discipline = match service.service() {
        schedulers::Service::Fifo => Discipline::Fifo,
        schedulers::Service::StaticPriority => Discipline::StaticPriority,
        schedulers::Service::PerClass(_) => Discipline::ClassShares,
        schedulers::Service::CreditBased(_) => Discipline::CreditBased,
        schedulers::Service::TimeAware(_) => Discipline::TimeAware,
        schedulers::Service::Asynchronous(_) => Discipline::Asynchronous,
    };
    let rate = match port.shaper {
        None => port.rate,
        Some(shaper) => {
            let largest = flows.iter().map(|&f| net.flows[f].max_frame_wire).fold(0.0, f64::max);
            if shaper.burst < largest {
                return Err(format!(
                    "{}: the shaper's burst ({}B) is smaller than the largest frame on the wire ({}B)",
                    net.port_label(p),
                    shaper.burst / 8.0,
                    largest / 8.0
                ));
            }
            crate::schedulers::token_bucket::shaped_rate(port.rate, shaper.rate)
        }
    };
    Ok(PortModel { rate, discipline })
}

/// Whether every port carrying traffic has a service model here, or the first reason it has not.
pub fn applies(net: &Network) -> Result<(), String> {
    let per_port = net.flows_per_port();
    for (p, flows) in per_port.iter().enumerate() {
        if !flows.is_empty() {
            port_model(net, p, flows)?;
        }
    }
    Ok(())
}

/// The structure shared by TFA and SFA: crossings and queues.
struct Layout {
    crossings: Vec<Crossing>,
    queues: Vec<Queue>,
    /// Queues of each port, highest priority first.
    port_queues: Vec<Vec<usize>>,
    /// Service model of each port.
    models: Vec<PortModel>,
    /// For each flow, its crossing at each port it visits.
    flow_crossings: Vec<Vec<(PortId, usize)>>,
    /// Whether each crossing's flow passes an interleaved regulator at its port
    /// ([`schedulers::ats`]): it then enters its queue with its own token bucket.
    regulated: Vec<bool>,
    /// The delays of time-triggered flows, per (flow, port): their frames never wait
    /// ([`schedulers::tas::time_triggered`]).
    time_triggered: std::collections::HashMap<(FlowId, PortId), f64>,
}

impl Layout {
    fn crossing(&self, f: FlowId, p: PortId) -> usize {
        self.flow_crossings[f]
            .iter()
            .find(|(q, _)| *q == p)
            .expect("a flow crosses the ports of its routes")
            .1
    }
}

fn layout(net: &Network) -> Layout {
    let per_port = net.flows_per_port();
    let models: Vec<PortModel> = (0..net.ports.len())
        .map(|p| {
            port_model(net, p, &per_port[p])
                .unwrap_or(PortModel { rate: net.ports[p].rate, discipline: Discipline::Fifo })
        })
        .collect();
    let mut lay = Layout {
        crossings: Vec::new(),
        queues: Vec::new(),
        port_queues: vec![Vec::new(); net.ports.len()],
        models,
        flow_crossings: Vec::with_capacity(net.flows.len()),
        regulated: Vec::new(),
        time_triggered: schedulers::tas::time_triggered(net).delay,
    };
    for f in 0..net.flows.len() {
        lay_flow(net, &mut lay, f);
    }
    lay
}

/// Appends flow `f`'s crossings (and the queues it is the first to use) to `lay`, which holds
/// the flows before it: a layout grows flow by flow (the admission's trials extend one).
fn lay_flow(net: &Network, lay: &mut Layout, f: FlowId) {
    let flow = &net.flows[f];
    // Per flow, the crossing of each port it visits: routes of a multicast tree share prefixes.
    let mut seen: Vec<(PortId, usize)> = Vec::new();
    for r in &flow.routes {
        let mut up = None;
        for &p in &r.ports {
            let c = match seen.iter().find(|(q, _)| *q == p) {
                Some(&(_, c)) => c,
                None => {
                    // Queue key: the priority level, or the class for per-class shares.
                    let priority = match lay.models[p].discipline {
                        Discipline::Fifo => None,
                        Discipline::StaticPriority
                        | Discipline::CreditBased
                        | Discipline::TimeAware
                        | Discipline::Asynchronous => {
                            Some(flow.class.map_or(u32::MAX, |k| net.classes[k].priority))
                        }
                        Discipline::ClassShares => Some(flow.class.map_or(u32::MAX, |k| k as u32)),
                    };
                    // A port has few queues: a linear look-up beats a map. Its queues stay
                    // highest priority first (one queue per level).
                    let q = match lay.port_queues[p].iter().find(|&&q| lay.queues[q].priority == priority) {
                        Some(&q) => q,
                        None => {
                            lay.queues.push(Queue { priority, crossings: Vec::new() });
                            let q = lay.queues.len() - 1;
                            let qs = &lay.port_queues[p];
                            let at = qs.partition_point(|&o| lay.queues[o].priority < priority);
                            lay.port_queues[p].insert(at, q);
                            q
                        }
                    };
                    lay.crossings.push(Crossing { flow: f, port: p, upstream: up, queue: q });
                    let c = lay.crossings.len() - 1;
                    lay.queues[q].crossings.push(c);
                    let regulated = lay.models[p].discipline == Discipline::Asynchronous
                        && flow.class.is_some_and(|k| {
                            let d = schedulers::discipline(&net.ports[p].discipline).expect("no shaper");
                            matches!(d.service(), schedulers::Service::Asynchronous(ats) if ats.regulates(&net.classes[k].name))
                        });
                    lay.regulated.push(regulated);
                    seen.push((p, c));
                    c
                }
            };
            up = Some(c);
        }
    }
    lay.flow_crossings.push(seen);
}

/// TFA's results, which SFA reuses for the cross traffic.
struct TfaState {
    /// Burst of each crossing's flow entering its port (bits).
    burst: Vec<f64>,
    /// Burst of each crossing's flow leaving its port: the flow's own output bound, the burst
    /// entering the crossings after it.
    out_burst: Vec<f64>,
    /// The flows of each queue by the port they come from (sources by themselves).
    groups: Vec<Vec<Group>>,
    /// Σ bursts, Σ rates and size of every group, from the current bursts (SFA removes one member).
    group_sums: Vec<Vec<(f64, f64, usize)>>,
    /// Of every group, the output bound of its members as an aggregate at the port they come
    /// from ([`aggregate_output`]), when there is one.
    group_agg: Vec<Vec<Option<Curve>>>,
    /// Index, in its queue's `groups`, of each crossing's group.
    group_of: Vec<usize>,
    /// By crossing, for the members of [`Group::exact`] groups: the flow's exact arrival curve
    /// where it enters the network (its staircase, or its token bucket), from [`source_curves`].
    source_curve: HashMap<usize, Curve>,
    /// Crossings whose entering burst a cyclic fixed point found growing without bound: taken
    /// as unbounded, so that what does not depend on them still converges ([`tfa_with`]).
    diverged: Vec<bool>,
    /// Queues without a bound because of such a burst, directly or upstream: their reason is the
    /// cycle's.
    cycle_blocked: Vec<bool>,
    /// Service curve of each queue, or why there is none.
    service: Vec<Result<Curve, Unbounded>>,
    /// Delay bound of each queue (s), or why there is none.
    delay: Vec<Result<f64, Unbounded>>,
    /// Per port: delay (max over its queues) and backlog (bits).
    port_delay: Vec<Result<f64, Unbounded>>,
    port_backlog: Vec<Result<f64, Unbounded>>,
}

#[cfg(test)]
thread_local! {
    /// Tests turn the closed forms off to check them against the curves they shortcut.
    pub(crate) static CURVES_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
thread_local! {
    /// Tests bound a server graph's cross traffic with every flow counted, as NCBounds does.
    pub(crate) static ALL_FLOWS_UPSTREAM: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether SFA bounds the flows travelling with the flow of interest as DNC does, with it taken
/// as lowest priority upstream: on server graphs (fluid servers, DNC's model).
fn dnc_cross_traffic(net: &Network) -> bool {
    #[cfg(test)]
    if ALL_FLOWS_UPSTREAM.with(|c| c.get()) {
        return false;
    }
    net.kind == crate::model::NetworkKind::ServerGraph
}

thread_local! {
    /// Set while [`with_foi_lowest_upstream`] runs: the hop-by-hop SFA leaves the flow of interest
    /// out of its travelling companions' arrival bounds under FIFO too.
    static FOI_LOWEST_UPSTREAM: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the convention of DNC's functional tests for SFA on a server graph: the flows
/// that travel with the flow of interest (foi) are bounded with the foi left out upstream (as if
/// it had the lowest priority there), under FIFO multiplexing as well. Not a bound under FIFO:
/// FIFO serves the foi ahead of later cross traffic, which it then delays, and a trajectory
/// exceeds the bound (docs/ANALYSIS.md, "DNC's SFA under FIFO"). Kept to reproduce the
/// functional tests' FIFO rows; `sfa`, `sfa-iter` and `best` count the foi under FIFO.
pub fn with_foi_lowest_upstream<T>(f: impl FnOnce() -> T) -> T {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            FOI_LOWEST_UPSTREAM.with(|c| c.set(self.0));
        }
    }
    let _reset = Reset(FOI_LOWEST_UPSTREAM.with(|c| c.replace(true)));
    f()
}

/// Whether the foi is left out of the arrival bounds of the flows travelling with it: under
/// arbitrary multiplexing (DNC's convention: it may be taken as lowest priority, delaying no
/// one), and under FIFO only inside [`with_foi_lowest_upstream`].
fn foi_left_out(mux: Multiplexing) -> bool {
    mux == Multiplexing::Blind || FOI_LOWEST_UPSTREAM.with(|c| c.get())
}

/// Whether the closed forms for token buckets may be used (always, but in their tests).
fn closed_forms() -> bool {
    #[cfg(test)]
    if CURVES_ONLY.with(|c| c.get()) {
        return false;
    }
    true
}

#[cfg(test)]
thread_local! {
    /// Tests choose one thread or two whatever the network's size, to compare both.
    pub(crate) static THREADS: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// The thread-local switches above, as the calling thread has them: a thread the analysis
/// spawns starts with them set the same, so that it computes what the caller would.
#[derive(Clone, Copy)]
struct Switches {
    foi_lowest_upstream: bool,
    #[cfg(test)]
    curves_only: bool,
    #[cfg(test)]
    all_flows_upstream: bool,
    #[cfg(test)]
    threads: Option<bool>,
}

impl Switches {
    fn current() -> Switches {
        Switches {
            foi_lowest_upstream: FOI_LOWEST_UPSTREAM.with(|c| c.get()),
            #[cfg(test)]
            curves_only: CURVES_ONLY.with(|c| c.get()),
            #[cfg(test)]
            all_flows_upstream: ALL_FLOWS_UPSTREAM.with(|c| c.get()),
            #[cfg(test)]
            threads: THREADS.with(|c| c.get()),
        }
    }

    /// Sets them in this thread (a spawned one, which ends with its work).
    fn install(self) {
        FOI_LOWEST_UPSTREAM.with(|c| c.set(self.foi_lowest_upstream));
        #[cfg(test)]
        CURVES_ONLY.with(|c| c.set(self.curves_only));
        #[cfg(test)]
        ALL_FLOWS_UPSTREAM.with(|c| c.set(self.all_flows_upstream));
        #[cfg(test)]
        THREADS.with(|c| c.set(self.threads));
    }
}

/// Crossings (flow, port) from which a network's independent computations (TFA on grouped and
/// ungrouped curves, each SFA candidate, the rows of half the flows) run on two threads: below,
/// starting a thread costs more than it saves (a small network's whole analysis takes well
/// under a millisecond).
const PARALLEL_MIN_CROSSINGS: usize = 1000;

/// Whether the analysis of a network laid out as `lay` may use a second thread: large enough,
/// and a second core to run it.
fn two_threads(lay: &Layout) -> bool {
    #[cfg(test)]
    if let Some(two) = THREADS.with(|c| c.get()) {
        return two;
    }
    lay.crossings.len() >= PARALLEL_MIN_CROSSINGS
        && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
}

/// `(a(), b())`, `b` on a second thread when `parallel`, with this thread's [`Switches`].
fn join<A, B: Send>(parallel: bool, a: impl FnOnce() -> A, b: impl FnOnce() -> B + Send) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    let switches = Switches::current();
    std::thread::scope(|s| {
        let other = s.spawn(move || {
            switches.install();
            b()
        });
        let a = a();
        (a, other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })
}

impl TfaState {
    /// Group `k` of queue `q` as a token bucket (burst, rate), when its curve is one: no line
    /// (grouping), and an upstream aggregate bound that is a token bucket, if any.
    fn group_tb(&self, q: usize, k: usize) -> Option<(f64, f64)> {
        if self.groups[q][k].line.is_some() || self.groups[q][k].exact || !closed_forms() {
            return None;
        }
        let (b, r, _) = self.group_sums[q][k];
        match &self.group_agg[q][k] {
            None => Some((b, r)),
            Some(agg) => agg.as_token_bucket().map(|(ab, _)| (b.min(ab), r)),
        }
    }

    /// The arrival curve of group `k` of queue `q`: its members' token buckets, within the line
    /// of the input link (grouping) and within their aggregate output bound upstream. Concave, as
    /// deconvolution and PMOO's token-bucket pieces need.
    fn group_curve(&self, q: usize, k: usize) -> Option<Curve> {
        let own = self.groups[q][k].curve_of(self.group_sums[q][k])?;
        Some(match &self.group_agg[q][k] {
            Some(agg) => own.min(agg),
            None => own,
        })
    }

    /// [`Self::group_curve`], but for an [`Group::exact`] group the sum of its members' exact
    /// curves (staircases: neither concave nor a token bucket). Read only where the theorem holds
    /// for any arrival curve: a FIFO queue's delay and backlog, the horizontal and vertical
    /// deviations from its service (Le Boudec & Thiran Thm 1.4.1-1.4.2). Deconvolutions (concave
    /// arrivals), PMOO (token-bucket pieces) and left-over services (the FIFO θ-residual is a
    /// service curve where it is non-decreasing, Prop. 6.4.1, which a staircase's is not) read
    /// [`Self::group_curve`].
    fn exact_group_curve(&self, q: usize, k: usize) -> Option<Curve> {
        if self.groups[q][k].exact {
            self.exact_sum(&self.groups[q][k].members)
        } else {
            self.group_curve(q, k)
        }
    }

    /// Σ of the exact arrival curves of `members` (crossings of one [`Group::exact`] group), `None`
    /// for none.
    fn exact_sum(&self, members: &[usize]) -> Option<Curve> {
        let mut curves = members
            .iter()
            .map(|c| self.source_curve.get(c).expect("computed for every member of an exact group"))
            .peekable();
        curves.peek().is_some().then(|| curves.fold(Curve::zero(), |acc, c| acc.add(c)))
    }
}

/// Flows of one queue that come from the same port (or one source flow).
#[derive(Clone)]
struct Group {
    members: Vec<usize>,
    /// The port the members come from (`None`: flows released at this port's node).
    upstream: Option<PortId>,
    /// Line constraint (rate, largest frame) of the shared input link, when grouping applies.
    line: Option<(f64, f64)>,
    /// Some members leave interleaved regulators: neither the input link's line nor the
    /// aggregate's output bound upstream constrains what the regulators let go.
    regulated: bool,
    /// Flows entering the network here, a staircase among them (a server graph's): a FIFO queue's
    /// delay and backlog read the sum of the members' exact arrival curves
    /// ([`TfaState::exact_group_curve`]), not of their token buckets.
    exact: bool,
}

impl Group {
    /// Σ bursts, Σ rates and member count.
    fn sums(&self, net: &Network, cx: &[Crossing], burst: &[f64]) -> (f64, f64, usize) {
        self.members
            .iter()
            .fold((0.0, 0.0, 0), |(b, r, n), &c| (b + burst[c], r + net.flows[cx[c].flow].rate, n + 1))
    }

    /// min(Σ token buckets, line) for the given sums.
    fn curve_of(&self, (b, r, n): (f64, f64, usize)) -> Option<Curve> {
        if n == 0 {
            return None;
        }
        let tb = Curve::token_bucket(r, b);
        Some(match self.line {
            Some((rate, lmax)) if n > 1 || lmax < b => tb.min(&Curve::token_bucket(rate, lmax)),
            _ => tb,
        })
    }
}

/// Queue `q` (one class) as a per-class scheduler sees it: its name, share and frame sizes.
fn class_at_port<'a>(
    net: &'a Network,
    lay: &Layout,
    shares: &dyn schedulers::ClassShares,
    q: usize,
) -> (&'a str, ClassAtPort) {
    let flows = || lay.queues[q].crossings.iter().map(|&c| &net.flows[lay.crossings[c].flow]);
    let class = flows().next().and_then(|f| f.class).map(|k| net.classes[k].name.as_str()).unwrap_or("");
    let at = ClassAtPort {
        // Validation refuses a class the discipline gives nothing to.
        share: shares.share(class).expect("validated: every class at a per-class port has a share"),
        lmin: flows().map(|f| f.min_frame_wire).fold(f64::INFINITY, f64::min),
        lmax: flows().map(|f| f.max_frame_wire).fold(0.0, f64::max),
        overhead: net.spec.defaults.interframe_overhead.bits(),
    };
    (class, at)
}

fn sum_curves(curves: impl Iterator<Item = Curve>) -> Curve {
    curves.fold(Curve::zero(), |acc, c| acc.add(&c))
}

/// How TFA bounds a flow's output at each port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BurstGrowth {
    /// The tightest sound bound: the flow's own and its group's output bounds
    /// ([`output_bursts`], [`aggregate_output`]).
    Tightest,
    /// b + r·d, d the queue's whole delay bound: the rule of WOPANet-family AFDX tools, which
    /// afdx-naive reproduces.
    ByDelay,
}

fn tfa(net: &Network, lay: &Layout, opt: &Options) -> (TfaState, Vec<String>) {
    tfa_with(net, lay, opt, BurstGrowth::Tightest)
}

/// Passes of one search for a fixed point of cyclic dependencies.
const FIXED_POINT_PASSES: usize = 1000;

/// Searches for a fixed point, each after taking as unbounded the bursts still growing at the
/// end of the one before; then every bound is infinite.
const FIXED_POINT_SEARCHES: usize = 4;

/// An entering burst beyond this (bits, or the server graph's unit) is taken as unbounded: only
/// a diverging fixed point reaches it, and curves built from it would overflow.
const DIVERGED_BURST: f64 = 1e100;

/// TFA with the given output rule. On cyclic port dependencies the TFA equations are iterated
/// from the source bursts to a fixed point. Where they diverge (bursts around a cycle growing
/// at every pass), the growing bursts are taken as unbounded and the iteration goes on: what
/// depends on them is unbounded with the cycle's reason (per class, as [`class_blocks`] reads a
/// scheduler's dependencies: a static-priority class above a diverging one keeps its bound),
/// and the rest converges to the fixed point of a network in itself, closed under the
/// equations' dependencies, whose bounds are as sound as any converged fixed point's.
fn tfa_with(net: &Network, lay: &Layout, opt: &Options, growth: BurstGrowth) -> (TfaState, Vec<String>) {
    let mut st = tfa_start(net, lay, opt, growth);
    let (order, acyclic) = (&net.port_order().order, net.port_order().acyclic);
    let mut notes = Vec::new();
    let pass = |st: &mut TfaState| -> f64 {
        order.iter().fold(0.0f64, |change, &p| change.max(tfa_port(net, lay, opt, growth, p, st)))
    };
    if acyclic {
        pass(&mut st);
        return (st, notes);
    }
    let converges = |st: &mut TfaState| (0..FIXED_POINT_PASSES).any(|_| pass(st) < 1e-12);
    let mut converged = converges(&mut st);
    for _ in 1..FIXED_POINT_SEARCHES {
        if converged {
            break;
        }
        // The bursts that still move (finite ones: an unbounded one is already taken so).
        let before = st.burst.clone();
        pass(&mut st);
        for (c, (&now, &was)) in st.burst.iter().zip(&before).enumerate() {
            if now.is_finite() && burst_change(was, now) >= 1e-12 {
                st.diverged[c] = true;
            }
        }
        converged = converges(&mut st);
    }
    let diverged: Vec<usize> = (0..st.diverged.len()).filter(|&c| st.diverged[c]).collect();
    if !converged {
        notes.push("cyclic port dependencies: TFA does not converge; bounds are infinite".to_string());
        let why = || Err(Unbounded::new("cyclic port dependencies: TFA does not converge"));
        st.delay.iter_mut().for_each(|d| *d = why());
        st.port_delay.iter_mut().for_each(|d| *d = why());
        st.port_backlog.iter_mut().for_each(|d| *d = why());
    } else if let Some(&first) = diverged.first() {
        let flows: BTreeSet<usize> = diverged.iter().map(|&c| lay.crossings[c].flow).collect();
        notes.push(format!(
            "cyclic port dependencies: TFA does not converge, the bursts of {} flow{} grow without bound \
             (among them '{}' entering {}): every bound that depends on them is infinite, the others are the \
             fixed point of the TFA equations",
            flows.len(),
            if flows.len() == 1 { "" } else { "s" },
            net.flows[lay.crossings[first].flow].name,
            net.port_label(lay.crossings[first].port)
        ));
    } else {
        notes.push("cyclic port dependencies: bounds are the fixed point of the TFA equations".to_string());
    }
    (st, notes)
}

/// How much an entering burst moved from one pass to the next, relative to the new one (the
/// fixed point's test): infinite where it became or stopped being unbounded.
fn burst_change(was: f64, now: f64) -> f64 {
    match (was.is_finite(), now.is_finite()) {
        (true, true) => (now - was).abs() / now.max(1.0),
        (false, false) => 0.0,
        _ => f64::INFINITY,
    }
}

/// TFA's state before any port is analysed: the source bursts, and the groups of every queue.
fn tfa_start(net: &Network, lay: &Layout, opt: &Options, growth: BurstGrowth) -> TfaState {
    let cx = &lay.crossings;
    let nq = lay.queues.len();
    let mut st = TfaState {
        burst: cx.iter().map(|c| net.flows[c.flow].burst).collect(),
        // The fixed point of cyclic dependencies is sought from the source bursts.
        out_burst: cx.iter().map(|c| net.flows[c.flow].burst).collect(),
        groups: vec![Vec::new(); nq],
        group_sums: vec![Vec::new(); nq],
        group_agg: vec![Vec::new(); nq],
        group_of: vec![0; cx.len()],
        source_curve: HashMap::new(),
        diverged: vec![false; cx.len()],
        cycle_blocked: vec![false; nq],
        service: (0..nq).map(|_| Err(Unbounded::new("not computed"))).collect(),
        delay: (0..nq).map(|_| Ok(0.0)).collect(),
        port_delay: (0..net.ports.len()).map(|_| Ok(0.0)).collect(),
        port_backlog: (0..net.ports.len()).map(|_| Ok(0.0)).collect(),
    };
    // Groups do not depend on bursts: build them once.
    for q in 0..nq {
        queue_groups(net, lay, opt, growth, q, &mut st);
    }
    // Every exact curve exists before any is read; each port's analysis writes its own again.
    for p in 0..net.ports.len() {
        source_curves(net, lay, p, &mut st);
    }
    st
}

/// The exact arrival curves of the members of port `p`'s [`Group::exact`] groups
/// ([`TfaState::source_curve`]): each staircase written out over the port's busy period, beyond
/// which the arrivals stay below the service and no delay or backlog there changes. The busy
/// period is bounded by every crossing's token bucket (Σ bursts B and Σ rates R entering, served
/// at rate C after latency T): (B + C·T)/(C − R). Beyond it (or its last written step, when that
/// comes first) a staircase continues as its affine envelope: a valid curve everywhere.
fn source_curves(net: &Network, lay: &Layout, p: PortId, st: &mut TfaState) {
    let queues = &lay.port_queues[p];
    if !queues.iter().any(|&q| st.groups[q].iter().any(|g| g.exact)) {
        return;
    }
    let cx = &lay.crossings;
    let crossings = || queues.iter().flat_map(|&q| &lay.queues[q].crossings);
    let (burst, rate) =
        crossings().fold((0.0, 0.0), |(b, r), &c| (b + st.burst[c], r + net.flows[cx[c].flow].rate));
    let (service, latency) = (lay.models[p].rate, net.nodes[net.ports[p].node].technological_latency);
    // Overloaded or fed an unbounded burst, the port has no bound to make exact.
    let horizon = match rate.partial_cmp(&service) {
        _ if !burst.is_finite() => 0.0,
        Some(std::cmp::Ordering::Less) => (burst + service * latency) / (service - rate),
        Some(std::cmp::Ordering::Equal) => f64::INFINITY,
        _ => 0.0,
    };
    for &q in queues {
        for g in st.groups[q].iter().filter(|g| g.exact) {
            for &c in &g.members {
                let f = &net.flows[cx[c].flow];
                let curve = match f.staircase {
                    Some(s) => s.curve(horizon),
                    None => Curve::token_bucket(f.rate, st.burst[c]),
                };
                st.source_curve.insert(c, curve);
            }
        }
    }
}

/// The groups of queue `q`, by the port their flows come from, with their sums and aggregates
/// reset. Grouping adds the line of that port's link (serialisation); without it a group is its
/// members' token buckets and their aggregate output bound upstream.
fn queue_groups(
    net: &Network,
    lay: &Layout,
    opt: &Options,
    growth: BurstGrowth,
    q: usize,
    st: &mut TfaState,
) {
    let cx = &lay.crossings;
    let queue = &lay.queues[q];
    st.groups[q].clear();
    let mut by_link: BTreeMap<Option<PortId>, Vec<usize>> = BTreeMap::new();
    // afdx-naive's rule sums the whole queue as one token bucket (WOPANet's arithmetic).
    let one_group = growth == BurstGrowth::ByDelay && !opt.grouping;
    for &c in &queue.crossings {
        let from = if one_group { None } else { cx[c].upstream.map(|u| cx[u].port) };
        by_link.entry(from).or_default().push(c);
    }
    for (up, members) in by_link {
        let regulated = members.iter().any(|&c| lay.regulated[c]);
        let line = match up {
            Some(_) if regulated => None,
            Some(u) if opt.grouping => {
                let lmax = members.iter().map(|&c| net.flows[cx[c].flow].max_frame_wire).fold(0.0, f64::max);
                Some((net.ports[u].rate, lmax))
            }
            _ => None,
        };
        for &c in &members {
            st.group_of[c] = st.groups[q].len();
        }
        let exact = up.is_none()
            && !one_group
            && members.iter().any(|&c| cx[c].upstream.is_none() && net.flows[cx[c].flow].staircase.is_some());
        st.groups[q].push(Group { members, upstream: up, line, regulated, exact });
    }
    st.group_agg[q] = vec![None; st.groups[q].len()];
    st.group_sums[q] = vec![(0.0, 0.0, 0); st.groups[q].len()];
}

/// TFA at port `p`: the bursts entering it (what the flows' ports upstream let out), its queues'
/// bounds and the bursts leaving it. Returns the largest relative change of an entering burst
/// (the fixed point's test on cyclic dependencies).
fn tfa_port(
    net: &Network,
    lay: &Layout,
    opt: &Options,
    growth: BurstGrowth,
    p: PortId,
    st: &mut TfaState,
) -> f64 {
    let cx = &lay.crossings;
    let mut change: f64 = 0.0;
    for &q in &lay.port_queues[p] {
        for &c in &lay.queues[q].crossings {
            if lay.regulated[c] {
                // Out of its regulator with its own token bucket, whatever came in.
                st.burst[c] = net.flows[cx[c].flow].burst;
                continue;
            }
            if let Some(u) = cx[c].upstream {
                let mut entering = st.out_burst[u];
                if st.diverged[c] || entering > DIVERGED_BURST {
                    st.diverged[c] |= entering.is_finite();
                    entering = f64::INFINITY;
                }
                change = change.max(burst_change(st.burst[c], entering));
                st.burst[c] = entering;
            }
        }
        if growth == BurstGrowth::Tightest {
            for k in 0..st.groups[q].len() {
                st.group_agg[q][k] = aggregate_from_upstream(net, lay, st, opt, q, k);
            }
        }
    }
    analyse_port(net, lay, p, opt, st);
    output_bursts(net, lay, p, opt, growth, st);
    change
}

/// The left-over service of a queue's `service` to some of its flows when `cross` is the rest,
/// under the multiplexing assumed inside the queue.
fn residual(service: &Curve, cross: Option<&Curve>, mux: Multiplexing) -> Result<Curve, Unbounded> {
    match (cross, mux) {
        (None, _) => Ok(service.clone()),
        (Some(c), Multiplexing::Fifo) => curves::fifo_residual(service, c),
        (Some(c), Multiplexing::Blind) => curves::arbitrary_residual(service, c),
    }
}

/// The arrival curve of the crossings `set` of queue `q` (sorted, no repeats) entering their
/// port: per group, the group's own curve when `set` holds all of it, else the token buckets of
/// the members in `set` (within the input link's line, with grouping). `None` for an empty set.
fn arrival_of(net: &Network, lay: &Layout, st: &TfaState, q: usize, set: &[usize]) -> Option<Curve> {
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
fn aggregate_output(
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
fn aggregate_from_upstream(
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
fn output_bursts(
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
fn left_over_latency((rate, latency): (f64, f64), (b_o, r_o): (f64, f64), mux: Multiplexing) -> Option<f64> {
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
fn arrival_tb(st: &TfaState, net: &Network, lay: &Layout, q: usize, set: &[usize]) -> Option<(f64, f64)> {
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
fn sums_of_others(curves: &[Option<Curve>]) -> Vec<Option<Curve>> {
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

/// Service curve, delay and backlog of every queue of port `p`, from the current bursts.
fn analyse_port(net: &Network, lay: &Layout, p: PortId, opt: &Options, st: &mut TfaState) {
    analyse_port_curves(net, lay, p, opt, st);
    if lay.time_triggered.is_empty() {
        return;
    }
    // A queue of time-triggered frames only: each frame leaves after its own transmission
    // (schedulers::tas, the time-triggered rule), whatever the curves above allow.
    let mut changed = false;
    for &q in &lay.port_queues[p] {
        let tt: Option<Vec<f64>> = lay.queues[q]
            .crossings
            .iter()
            .map(|&c| lay.time_triggered.get(&(lay.crossings[c].flow, p)).copied())
            .collect();
        if let Some(d) = tt.filter(|d| !d.is_empty()) {
            st.delay[q] = Ok(d.iter().copied().fold(0.0, f64::max));
            changed = true;
        }
    }
    if changed {
        st.port_delay[p] =
            lay.port_queues[p].iter().try_fold(0.0, |m: f64, &q| st.delay[q].clone().map(|d| m.max(d)));
    }
}

fn analyse_port_curves(net: &Network, lay: &Layout, p: PortId, opt: &Options, st: &mut TfaState) {
    let port = &net.ports[p];
    let cx = &lay.crossings;
    let latency = net.nodes[port.node].technological_latency;
    let model = &lay.models[p];
    let beta = Curve::rate_latency(model.rate, latency);
    let queues = &lay.port_queues[p];
    // Which queues have no bound for lack of service (an overloaded class, or an infinite burst
    // entering a class the queue depends on), each with its reason; see [`class_blocks`].
    let (blocked, by_cycle) = class_blocks(net, lay, p, st);
    for (&q, &b) in queues.iter().zip(&by_cycle) {
        st.cycle_blocked[q] = b;
    }
    if !blocked.is_empty() && blocked.iter().all(Option::is_some) {
        for (&q, why) in queues.iter().zip(&blocked) {
            let why = why.clone().expect("every queue is blocked");
            st.service[q] = Err(why.clone());
            st.delay[q] = Err(why);
        }
        let why = blocked[0].clone().expect("a port has a queue");
        st.port_delay[p] = Err(why.clone());
        st.port_backlog[p] = Err(why);
        return;
    }
    let first_blocked = blocked.iter().flatten().next().cloned();
    if let Some(why) = unfree_regulator(net, lay, p) {
        for &q in queues {
            st.service[q] = Err(why.clone());
            st.delay[q] = Err(why.clone());
        }
        st.port_delay[p] = Err(why.clone());
        st.port_backlog[p] = Err(why);
        return;
    }
    for &q in queues {
        st.group_sums[q] = st.groups[q].iter().map(|g| g.sums(net, cx, &st.burst)).collect();
    }
    source_curves(net, lay, p, st);
    // Fast path: one FIFO queue of token buckets behind β_{C,T} has the closed forms
    // delay T + B/C (FIFO; (C·T + B)/(C − R) blind) and backlog B + R·T (Le Boudec & Thiran
    // Thm 1.4.1-1.4.2, §6.2); no curve needed.
    if let [q] = queues[..] {
        let tb = (0..st.groups[q].len())
            .try_fold((0.0, 0.0), |(b, r), k| st.group_tb(q, k).map(|(gb, gr)| (b + gb, r + gr)));
        if let (Discipline::Fifo, Some((b, r))) = (&model.discipline, tb) {
            let blind = opt.multiplexing == Multiplexing::Blind && lay.queues[q].crossings.len() > 1;
            let delay = if blind {
                if r < model.rate {
                    Ok((model.rate * latency + b) / (model.rate - r))
                } else {
                    Err(Unbounded::new(format!(
                        "{}: blind multiplexing at full load (offered {} = rate)",
                        net.port_label(p),
                        rate_text(net, r)
                    )))
                }
            } else {
                Ok(latency + b / model.rate)
            };
            st.service[q] = Ok(beta);
            st.port_delay[p] = delay.clone();
            st.delay[q] = delay;
            st.port_backlog[p] = Ok(b + r * latency);
            return;
        }
    }
    // A blocked queue's arrivals may have infinite bursts: none of the curves below reads them
    // (its service and delay are its reason), so it stands as the zero curve. A staircase's exact
    // curve only under FIFO: blind multiplexing reads a left-over service.
    let exact = opt.multiplexing == Multiplexing::Fifo && model.discipline == Discipline::Fifo;
    let alphas: Vec<Curve> = queues
        .iter()
        .zip(&blocked)
        .map(|(&q, b)| match b {
            Some(_) => Curve::zero(),
            None if exact => sum_curves((0..st.groups[q].len()).filter_map(|k| st.exact_group_curve(q, k))),
            None => sum_curves((0..st.groups[q].len()).filter_map(|k| st.group_curve(q, k))),
        })
        .collect();
    let mut port_delay: Result<f64, Unbounded> = Ok(0.0);
    // Shaped ports: one walk over the levels, the shaper's curve for each.
    let d = schedulers::discipline(&port.discipline).expect("a port's discipline is no shaper");
    let mut shaped = match d.service() {
        schedulers::Service::CreditBased(cbs) => Some(
            match &cbs.gates {
                None => shaped_levels(
                    net,
                    lay,
                    p,
                    opt,
                    &alphas,
                    &blocked,
                    false,
                    credit_based_level(net, lay, p, cbs.idle_slopes, latency),
                ),
                Some(gates) => shaped_levels(
                    net,
                    lay,
                    p,
                    opt,
                    &alphas,
                    &blocked,
                    true,
                    gated_credit_based_level(net, lay, p, cbs.idle_slopes, gates, latency),
                ),
            }
            .into_iter(),
        ),
        schedulers::Service::TimeAware(tas) => Some(
            shaped_levels(
                net,
                lay,
                p,
                opt,
                &alphas,
                &blocked,
                true,
                time_aware_level(net, lay, p, tas, latency),
            )
            .into_iter(),
        ),
        _ => None,
    };
    for (k, &q) in queues.iter().enumerate() {
        let service = match (&model.discipline, lay.queues[q].priority) {
            (Discipline::CreditBased | Discipline::TimeAware, _) => {
                shaped.as_mut().and_then(|s| s.next()).expect("one service per queue")
            }
            (Discipline::Fifo, _) | (_, None) => Ok(beta.clone()),
            (Discipline::ClassShares, Some(_)) => {
                let d = schedulers::discipline(&net.ports[p].discipline)
                    .expect("a port's discipline is no shaper");
                let schedulers::Service::PerClass(shares) = d.service() else {
                    unreachable!("the port model follows the discipline's service")
                };
                let (names, present): (Vec<&str>, Vec<ClassAtPort>) =
                    queues.iter().map(|&o| class_at_port(net, lay, shares, o)).unzip();
                let lr = shares.latency_rate(k, &present, &names, model.rate);
                let guaranteed = Curve::rate_latency(lr.rate, lr.latency + latency);
                // Work conservation also guarantees the class whatever the other classes leave,
                // [β − Σ α_others]^+ (blind multiplexing). Either curve gives a valid bound; the
                // one with the smaller delay for this class's traffic is kept (below), so a class
                // whose share is below its load is still bounded while the port is not overloaded.
                let others = sum_curves(
                    queues
                        .iter()
                        .zip(&alphas)
                        .enumerate()
                        .filter(|(o, _)| *o != k)
                        .map(|(_, (_, a))| a.clone()),
                );
                // Without a bound on another class (blocked), only the guaranteed share holds.
                let others_bounded = blocked.iter().enumerate().all(|(o, b)| o == k || b.is_none());
                match curves::arbitrary_residual(&beta, &others).ok().filter(|_| others_bounded) {
                    Some(l) => Err((guaranteed, l)),
                    None => Ok(guaranteed),
                }
                .map_or_else(
                    |(a, b)| {
                        let d =
                            |c: &Curve| queue_delay(&alphas[k], c, opt.multiplexing).unwrap_or(f64::INFINITY);
                        Ok(if d(&b) < d(&a) { b } else { a })
                    },
                    Ok,
                )
            }
            (Discipline::StaticPriority | Discipline::Asynchronous, Some(level)) => {
                let higher = sum_curves(
                    queues
                        .iter()
                        .zip(&alphas)
                        .filter(|(&o, _)| lay.queues[o].priority < Some(level))
                        .map(|(_, a)| a.clone()),
                );
                let lower_frame = queues
                    .iter()
                    .filter(|&&o| lay.queues[o].priority > Some(level))
                    .flat_map(|&o| &lay.queues[o].crossings)
                    .map(|&c| net.flows[cx[c].flow].max_frame_wire)
                    .fold(0.0, f64::max);
                curves::static_priority_residual(&beta, &higher, lower_frame)
            }
        };
        // With one flow in the queue there is no order to assume: blind is FIFO.
        let mux = if lay.queues[q].crossings.len() == 1 { Multiplexing::Fifo } else { opt.multiplexing };
        let (service, delay) = match &blocked[k] {
            Some(why) => (Err(why.clone()), Err(why.clone())),
            None => {
                let delay = service.clone().and_then(|s| queue_delay(&alphas[k], &s, mux));
                (service, delay.map_err(|u| u.context(&net.port_label(p))))
            }
        };
        port_delay = match (port_delay, &delay) {
            (Ok(a), Ok(b)) => Ok(a.max(*b)),
            (Err(e), _) => Err(e),
            (_, Err(e)) => Err(e.clone()),
        };
        st.service[q] = service;
        st.delay[q] = delay;
    }
    st.port_delay[p] = port_delay;
    if let Some(why) = first_blocked {
        // The port's backlog counts every queue's: one without a bound leaves it without one.
        st.port_backlog[p] = Err(why);
        return;
    }
    st.port_backlog[p] = if model.discipline == Discipline::Asynchronous {
        // The regulators hold frames while the link may idle: the queues' backlogs (each within
        // its own service) and what the regulators hold. A frame leaves its regulator within the
        // delay bound D_u of the queue upstream (shaping for free), so the regulator holds at
        // most the flow's arrivals at the port in D_u: its output bound upstream, b_u + r·D_u.
        let held = queues.iter().flat_map(|&q| &lay.queues[q].crossings).try_fold(0.0, |sum, &c| {
            match cx[c].upstream.filter(|_| lay.regulated[c]) {
                None => Ok(sum),
                Some(u) => st.delay[cx[u].queue]
                    .as_ref()
                    .map(|d| sum + st.out_burst[u] + net.flows[cx[c].flow].rate * d)
                    .map_err(|e| e.clone()),
            }
        });
        held.and_then(|held| {
            queues.iter().zip(&alphas).try_fold(held, |sum, (&q, a)| {
                let s = st.service[q].as_ref().map_err(|u| u.clone())?;
                curves::vertical_deviation(a, s).map(|b| sum + b)
            })
        })
    } else if matches!(model.discipline, Discipline::CreditBased | Discipline::TimeAware) {
        // A shaper may hold frames while the link idles: the port is not work-conserving, so its
        // backlog is the sum of its queues' (each within its own service).
        queues.iter().zip(&alphas).try_fold(0.0, |sum, (&q, a)| {
            let s = st.service[q].as_ref().map_err(|u| u.clone())?;
            curves::vertical_deviation(a, s).map(|b| sum + b)
        })
    } else {
        curves::vertical_deviation(&sum_curves(alphas.into_iter()), &beta)
    }
    .map_err(|u| u.context(&net.port_label(p)));
}

/// Which queues of port `p` have no bound for lack of service, each with its reason, the others
/// `None`. A queue depends on the classes whose load and bursts its service counts: under FIFO
/// (one queue) every flow; under static priority, asynchronous traffic shaping (its queues are
/// served by static priority) and credit-based shaping, its own level and the higher ones (a
/// lower level blocks it by one frame, finite whatever that level's load); under a time-aware
/// shaper or class shares, its own class only (its windows, its guaranteed share; the higher
/// levels a gated level depends on answer in [`shaped_levels`]). It has no bound when those
/// classes offer more than the port's rate, or when one of their flows enters with an infinite
/// burst (an upstream port has no bound for it), and beside each queue whether a diverging cycle of
/// the TFA equations is why ([`tfa_with`]).
fn class_blocks(
    net: &Network,
    lay: &Layout,
    p: PortId,
    st: &TfaState,
) -> (Vec<Option<Unbounded>>, Vec<bool>) {
    let cx = &lay.crossings;
    let model = &lay.models[p];
    let queues = &lay.port_queues[p];
    let load =
        |q: usize| -> f64 { lay.queues[q].crossings.iter().map(|&c| net.flows[cx[c].flow].rate).sum() };
    let rate_kind = if model.rate < net.ports[p].rate { "shaped" } else { "link" };
    // `who` ("", "class 'x' ", ...) offers more than the port's rate; never the cycle's doing.
    let overloaded = |who: String, offered: f64| {
        let why = format!(
            "{} overloaded: {who}offered {} > {rate_kind} rate {}",
            net.port_label(p),
            rate_text(net, offered),
            rate_text(net, model.rate)
        );
        (Unbounded::new(why), false)
    };
    // A flow entering with an infinite burst, and whether a diverging cycle is the cause (its
    // burst here, or a queue upstream that the cycle left without a bound).
    let unbounded_flow = |qs: &[usize]| {
        qs.iter().flat_map(|&q| &lay.queues[q].crossings).find(|&&c| !st.burst[c].is_finite()).map(|&c| {
            let (flow, here) = (&net.flows[cx[c].flow].name, net.port_label(p));
            let upstream_cycle = cx[c].upstream.is_some_and(|u| st.cycle_blocked[cx[u].queue]);
            let why = if st.diverged[c] {
                format!(
                    "{here}: cyclic port dependencies: TFA does not converge, the burst of flow '{flow}' \
                     entering here grows without bound"
                )
            } else if upstream_cycle {
                format!(
                    "{here}: flow '{flow}' enters with an unbounded burst: cyclic port dependencies \
                     upstream, where TFA does not converge"
                )
            } else {
                format!("{here}: an upstream port has no finite bound for flow '{flow}'")
            };
            (Unbounded::new(why), st.diverged[c] || upstream_cycle)
        })
    };
    if model.discipline == Discipline::Fifo || queues.len() == 1 {
        let total: f64 = queues.iter().map(|&q| load(q)).sum();
        let why =
            if total > model.rate { Some(overloaded(String::new(), total)) } else { unbounded_flow(queues) };
        let (why, by_cycle) = why.map_or((None, false), |(w, c)| (Some(w), c));
        return (vec![why; queues.len()], vec![by_cycle; queues.len()]);
    }
    let class_name = |q: usize| {
        lay.queues[q].crossings.iter().find_map(|&c| net.flows[cx[c].flow].class).map_or_else(
            || format!("priority {}", lay.queues[q].priority.map_or("-".to_string(), |l| l.to_string())),
            |c| format!("'{}'", net.classes[c].name),
        )
    };
    queues
        .iter()
        .map(|&q| {
            let deps: Vec<usize> = match model.discipline {
                Discipline::TimeAware | Discipline::ClassShares => vec![q],
                _ => queues
                    .iter()
                    .copied()
                    .filter(|&o| lay.queues[o].priority <= lay.queues[q].priority)
                    .collect(),
            };
            let (own, with_higher) = (load(q), deps.iter().map(|&o| load(o)).sum::<f64>());
            if own > model.rate {
                Some(overloaded(format!("class {} ", class_name(q)), own))
            } else if with_higher > model.rate {
                Some(overloaded(format!("class {} and the higher classes ", class_name(q)), with_higher))
            } else {
                unbounded_flow(&deps)
            }
        })
        .map(|b| b.map_or((None, false), |(w, c)| (Some(w), c)))
        .unzip()
}

/// Why the interleaved regulators of port `p` are not free, if one is not: a regulated flow whose
/// port upstream is neither its source nor regulated for it enters its regulator with a burst
/// grown on the way, and Le Boudec's shaping-for-free theorem ([`schedulers::ats`]) needs the
/// flows to conform to their regulators at the input of the FIFO system before them.
fn unfree_regulator(net: &Network, lay: &Layout, p: PortId) -> Option<Unbounded> {
    let cx = &lay.crossings;
    lay.port_queues[p].iter().flat_map(|&q| &lay.queues[q].crossings).find_map(|&c| {
        let u = cx[c].upstream.filter(|_| lay.regulated[c])?;
        (!lay.regulated[u] && cx[u].upstream.is_some()).then(|| {
            Unbounded::new(format!(
                "{}: flow '{}' reaches its interleaved regulator from {}, which does not regulate it \
                 (shaping for free needs the port upstream to be the flow's source or to regulate it)",
                net.port_label(p),
                net.flows[cx[c].flow].name,
                net.port_label(cx[u].port)
            ))
        })
    })
}

/// What the levels above one level of a shaped port send, as the walk over the port's levels
/// (highest first, [`shaped_levels`]) has bounded it.
struct Above {
    /// Their output as a token bucket (burst, rate) and as a curve.
    tb: (f64, f64),
    out: Curve,
    /// Each level's output curve, highest first, `None` for a level without a bound (a gated
    /// level counts only those whose gates may open inside its windows).
    levels: Vec<Option<Curve>>,
    /// Why a level above has no bound, if one has none (`tb` and `out` then leave it out).
    unbounded: Option<Unbounded>,
    /// Their arrival curves.
    arrivals: Curve,
    /// Whether a level above is shaped (bounds its own output, so may hold frames back).
    shaped: bool,
}

/// What a shaper gives one level: its service curve, and the level's output bound as a token
/// bucket (burst, rate) when the shaper bounds it itself (else the walk takes α(τ + D), the
/// arrivals advanced by the level's delay bound).
type LevelService = (Result<Curve, Unbounded>, Option<(f64, f64)>);

/// The service of each queue (priority level) of a shaped port, highest first: one walk over
/// the levels, `level(k, lmax, above)` the shaper's curve for level k given every level's
/// largest frame and what the levels above send. A level without a bound leaves the levels below
/// without one, unless `gated`: a gated level is then still asked, and answers without a bound
/// only if it depends on such a level ([`Above::unbounded`], [`Above::levels`]).
#[allow(clippy::too_many_arguments)]
fn shaped_levels(
    net: &Network,
    lay: &Layout,
    p: PortId,
    opt: &Options,
    alphas: &[Curve],
    blocked: &[Option<Unbounded>],
    gated: bool,
    mut level: impl FnMut(usize, &[f64], &Above) -> LevelService,
) -> Vec<Result<Curve, Unbounded>> {
    let cx = &lay.crossings;
    let queues = &lay.port_queues[p];
    let lmax: Vec<f64> = queues
        .iter()
        .map(|&q| {
            lay.queues[q].crossings.iter().map(|&c| net.flows[cx[c].flow].max_frame_wire).fold(0.0, f64::max)
        })
        .collect();
    let mut above = Above {
        tb: (0.0, 0.0),
        out: Curve::zero(),
        levels: Vec::new(),
        unbounded: None,
        arrivals: Curve::zero(),
        shaped: false,
    };
    let mut out = Vec::with_capacity(queues.len());
    for (k, &q) in queues.iter().enumerate() {
        let service = match (&blocked[k], &above.unbounded) {
            (Some(why), _) => {
                // Its own rule leaves the level without a bound ([`class_blocks`]).
                above.unbounded.get_or_insert_with(|| why.clone());
                above.levels.push(None);
                Err(why.clone())
            }
            (None, Some(why)) if !gated => Err(why.clone()),
            _ => {
                let (service, own_output) = level(k, &lmax, &above);
                let output = match (&service, own_output) {
                    (Err(_), _) => Err(Unbounded::new("a higher priority level has no bound")),
                    (Ok(_), Some((b, r))) => {
                        above.shaped = true;
                        Ok(Curve::token_bucket(r, b))
                    }
                    (Ok(s), None) => {
                        let mux = if lay.queues[q].crossings.len() == 1 {
                            Multiplexing::Fifo
                        } else {
                            opt.multiplexing
                        };
                        queue_delay(&alphas[k], s, mux).map(|d| alphas[k].shift_left(d))
                    }
                };
                match output {
                    Ok(o) => {
                        above.tb = (above.tb.0 + upper_burst(&o), above.tb.1 + o.tail_slope());
                        above.out = above.out.add(&o);
                        above.levels.push(Some(o));
                    }
                    Err(u) => {
                        above.unbounded.get_or_insert(u);
                        above.levels.push(None);
                    }
                }
                service
            }
        };
        above.arrivals = above.arrivals.add(&alphas[k]);
        out.push(service);
    }
    out
}

/// A level of a port with credit-based shapers, after [`schedulers::cbs`]: a shaped class gets
/// β = I·[t − T − (hiCredit − loCredit)/I]^+, hiCredit from the token bucket that bounds the
/// higher classes' output, and its output is within (hiCredit − loCredit, I); an unshaped level
/// gets the link minus the higher classes' output curves (their arrival curves when no shaped
/// class is above it: the levels above then serve whenever they hold frames) and one lower frame.
fn credit_based_level<'a>(
    net: &'a Network,
    lay: &'a Layout,
    p: PortId,
    slopes: &'a BTreeMap<String, crate::units::DataRate>,
    latency: f64,
) -> impl FnMut(usize, &[f64], &Above) -> LevelService + 'a {
    use schedulers::cbs;
    let link = net.ports[p].rate;
    let beta = Curve::rate_latency(link, latency);
    let cx = &lay.crossings;
    move |k, lmax, above| {
        let q = lay.port_queues[p][k];
        let flows = || lay.queues[q].crossings.iter().map(|&c| &net.flows[cx[c].flow]);
        let class = flows().find_map(|f| f.class).map_or("", |c| net.classes[c].name.as_str());
        let rate: f64 = flows().map(|f| f.rate).sum();
        let lower = lmax[k + 1..].iter().copied().fold(0.0, f64::max);
        let Some(idle) = slopes.get(class).map(|r| r.bps()) else {
            let higher = if above.shaped { &above.out } else { &above.arrivals };
            return (curves::static_priority_residual(&beta, higher, lower), None);
        };
        if rate > idle * (1.0 + 1e-12) {
            let why = format!(
                "class '{class}' offered {} > idle slope {}",
                rate_text(net, rate),
                rate_text(net, idle)
            );
            return (Err(Unbounded::new(why)), None);
        }
        match cbs::hi_credit(idle, link, lower, above.tb) {
            None => (
                Err(Unbounded::new(format!(
                    "the credit of class '{class}' has no bound (its idle slope and the higher \
                     classes' rates exceed the link)"
                ))),
                None,
            ),
            Some(hi) => {
                let lo = cbs::lo_credit(idle, link, lmax[k]);
                let lr = cbs::latency_rate(idle, hi, lo);
                (
                    Ok(Curve::rate_latency(lr.rate, lr.latency + latency)),
                    Some(cbs::output_bucket(idle, hi, lo)),
                )
            }
        }
    }
}

/// A level of a port whose credit-based shapers sit behind a gate control list, after
/// [`schedulers::cbs`]'s gated model: a shaped class gets I·ρ·[t − T − θ − (hiCredit −
/// loCredit)/(I·ρ)]^+, (ρ, θ) the supply bound of its gate's windows less its largest frame at
/// their ends, hiCredit from [`schedulers::cbs::gated_hi_credit`]; an unshaped level is a gated
/// level as under the time-aware shaper ([`time_aware_level`]), the shaped levels above it
/// counted by their output buckets.
fn gated_credit_based_level<'a>(
    net: &'a Network,
    lay: &'a Layout,
    p: PortId,
    slopes: &'a BTreeMap<String, crate::units::DataRate>,
    gates: &'a schedulers::tas::TasDiscipline<'a>,
    latency: f64,
) -> impl FnMut(usize, &[f64], &Above) -> LevelService + 'a {
    use schedulers::cbs;
    let link = net.ports[p].rate;
    let cx = &lay.crossings;
    let mut unshaped = time_aware_level(net, lay, p, gates, latency);
    move |k, lmax, above| {
        let q = lay.port_queues[p][k];
        let flows = || lay.queues[q].crossings.iter().map(|&c| &net.flows[cx[c].flow]);
        let class = flows().find_map(|f| f.class).map_or("", |c| net.classes[c].name.as_str());
        let Some(idle) = slopes.get(class).map(|r| r.bps()) else {
            return unshaped(k, lmax, above);
        };
        let rate: f64 = flows().map(|f| f.rate).sum();
        // The other levels' largest frames and classes (a shaped class is a level of its own).
        let level_names = |j: usize| -> Vec<&str> {
            let prio = lay.queues[lay.port_queues[p][j]].priority;
            net.classes.iter().filter(|c| Some(c.priority) == prio).map(|c| c.name.as_str()).collect()
        };
        let others: Vec<(f64, Vec<&str>)> =
            (0..lmax.len()).filter(|&j| j != k).map(|j| (lmax[j], level_names(j))).collect();
        let cycle = gates.cycle.secs();
        let windows = gates.windows(&[class]);
        // What the higher classes may send while the class waits with a growing credit, inside
        // its windows: a higher class whose gate never opens there sends only outside them.
        let relevant: Vec<usize> = match &windows {
            None => (0..k).collect(),
            Some(w) => {
                (0..k).filter(|&j| w.iter().any(|&(o, c)| gates.open_within(&level_names(j), o, c))).collect()
            }
        };
        // The lower frame on the wire when the credit last was 0: one that started inside a window
        // (a frame on the wire as a window opens is counted in the blocking below).
        let lower = (k + 1..lmax.len())
            .filter(|&j| {
                windows
                    .as_ref()
                    .is_none_or(|w| w.iter().any(|&(o, c)| gates.open_within(&level_names(j), o, c)))
            })
            .map(|j| lmax[j])
            .fold(0.0, f64::max);
        let Some(tb) = relevant.iter().try_fold((0.0, 0.0), |(b, r), &j| {
            above
                .levels
                .get(j)
                .and_then(Option::as_ref)
                .map(|out| (b + upper_burst(out), r + out.tail_slope()))
        }) else {
            return (Err(Unbounded::new("a higher priority level has no bound")), None);
        };
        let (supply, blocking) = match windows {
            None => (Some((1.0, 0.0)), 0.0),
            Some(windows) => {
                let usable: Vec<(f64, f64)> =
                    windows.iter().map(|&(o, c)| (o, c - lmax[k] / link)).filter(|(a, b)| b > a).collect();
                // Per cycle, the frames of other levels that may be on the wire as a window opens.
                let blocking: f64 = windows
                    .iter()
                    .map(|&(o, _)| {
                        others
                            .iter()
                            .filter(|(_, n)| gates.open_across(n, o))
                            .map(|&(l, _)| l)
                            .fold(0.0, f64::max)
                    })
                    .sum();
                (schedulers::tas::supply_bound(&usable, cycle), blocking)
            }
        };
        let Some((rho, theta)) = supply else {
            return (
                Err(Unbounded::new(format!(
                    "the gate windows of class '{class}' leave no time for its frames after the guard band"
                ))),
                None,
            );
        };
        if rate > idle * rho * (1.0 + 1e-12) {
            let why = format!(
                "class '{class}' offered {} > idle slope {} x the usable share {:.6} of its gate",
                rate_text(net, rate),
                rate_text(net, idle),
                rho
            );
            return (Err(Unbounded::new(why)), None);
        }
        let gate = cbs::GateSupply { rho, theta, blocking, cycle };
        match cbs::gated_hi_credit(idle, link, lower, tb, gate) {
            None => (
                Err(Unbounded::new(format!(
                    "the credit of class '{class}' has no bound (the higher classes' rate and the frames \
                     blocking its window starts reach the link's rate in its usable share {rho:.6})"
                ))),
                None,
            ),
            Some(hi) => {
                let lo = cbs::lo_credit(idle, link, lmax[k]);
                let lr = cbs::gated_latency_rate(idle, hi, lo, gate);
                (
                    Ok(Curve::rate_latency(lr.rate, lr.latency + latency)),
                    Some(cbs::output_bucket(idle, hi, lo)),
                )
            }
        }
    }
}

/// A level of a port with a time-aware shaper, after [`schedulers::tas`]: the rate-latency bound
/// of the supply of its gate's usable windows (each window less the largest frame of another
/// level whose gate is open across the window's start, and the level's largest frame at its end),
/// minus the output (arrival curves advanced by their delay bounds) of the higher levels whose
/// gates open inside one of the level's windows (the others send only outside them), and the largest
/// frame of another level whose gate is open during one of the level's windows (a frame of a
/// level whose gate closes at the window's start, or never opens inside the window, has ended
/// before it: frames end before their gate closes).
fn time_aware_level<'a>(
    net: &'a Network,
    lay: &'a Layout,
    p: PortId,
    tas: &'a schedulers::tas::TasDiscipline<'a>,
    latency: f64,
) -> impl FnMut(usize, &[f64], &Above) -> LevelService + 'a {
    let link = net.ports[p].rate;
    move |k, lmax, above| {
        // The classes of the level: every class of the network at its priority.
        let level = lay.queues[lay.port_queues[p][k]].priority;
        let names: Vec<&str> =
            net.classes.iter().filter(|c| Some(c.priority) == level).map(|c| c.name.as_str()).collect();
        // The other levels at the port: their largest frame and their classes.
        let others: Vec<(f64, Vec<&str>)> = (0..lmax.len())
            .filter(|&j| j != k)
            .map(|j| {
                let prio = lay.queues[lay.port_queues[p][j]].priority;
                (
                    lmax[j],
                    net.classes
                        .iter()
                        .filter(|c| Some(c.priority) == prio)
                        .map(|c| c.name.as_str())
                        .collect(),
                )
            })
            .collect();
        let largest = |open: &dyn Fn(&[&str]) -> bool| {
            others.iter().filter(|(_, n)| open(n)).map(|&(l, _)| l).fold(0.0, f64::max)
        };
        let windows = tas.windows(&names);
        // A higher level whose gate never opens inside the level's windows sends only outside
        // them (its frames end before its gate closes): the supply does not count that time, so
        // its output is not subtracted.
        let relevant: Vec<usize> = match &windows {
            None => (0..k).collect(),
            Some(w) => {
                (0..k).filter(|&j| w.iter().any(|&(o, c)| tas.open_within(&others[j].1, o, c))).collect()
            }
        };
        let Some(higher) = relevant.iter().try_fold(Curve::zero(), |sum, &j| {
            above.levels.get(j).and_then(Option::as_ref).map(|out| sum.add(out))
        }) else {
            return (Err(Unbounded::new("a higher priority level has no bound")), None);
        };
        let (supply, other) = match &windows {
            None => (Some((1.0, 0.0)), largest(&|_| true)),
            Some(windows) => {
                let usable: Vec<(f64, f64)> = windows
                    .iter()
                    .map(|&(o, c)| (o + largest(&|n| tas.open_across(n, o)) / link, c - lmax[k] / link))
                    .filter(|(a, b)| b > a)
                    .collect();
                let inside = largest(&|n| windows.iter().any(|&(o, c)| tas.open_within(n, o, c)));
                (schedulers::tas::supply_bound(&usable, tas.cycle.secs()), inside)
            }
        };
        let service = match supply {
            None => Err(Unbounded::new(format!(
                "the gate windows of priority {} leave no time for its frames after the guard band \
                 and a frame of another level",
                level.map_or("-".to_string(), |l| l.to_string())
            ))),
            Some((rho, theta)) => {
                let beta = Curve::rate_latency(link * rho, theta + latency);
                curves::static_priority_residual(&beta, &higher, other)
            }
        };
        (service, None)
    }
}

/// The least burst b with `c(t) ≤ b + r·t`, r the tail slope of the concave curve `c`.
fn upper_burst(c: &Curve) -> f64 {
    let r = c.tail_slope();
    c.points().iter().map(|pt| pt.y - r * pt.x).fold(c.burst(), f64::max)
}

/// Delay of a queue's aggregate `alpha` served by `service`: FIFO inside the queue, or blind.
fn queue_delay(alpha: &Curve, service: &Curve, mux: Multiplexing) -> Result<f64, Unbounded> {
    match mux {
        Multiplexing::Fifo => curves::horizontal_deviation(alpha, service),
        Multiplexing::Blind => curves::arbitrary_residual(service, alpha).and_then(|r| curves::latency(&r)),
    }
}

/// SFA's end-to-end left-over service for every crossing: the service left to the crossing's flow
/// at its port by the cross traffic, convolved with the same at every upstream crossing. Routes of
/// a multicast tree share their prefixes, so each crossing is computed once.
///
/// `read`: the crossings whose end-to-end service the caller reads (the last of each route), or
/// `None` for all; the others hold an empty reason in its place, never read.
///
/// FIFO left-over service is a family β_θ, valid for every θ >= 0 (Le Boudec & Thiran Prop.
/// 6.4.1); θ is the time β needs to serve the cross burst, as DNC chooses it.
fn sfa_services(
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
    let (st, _) = tfa(net, &lay, &Options { method: Method::Tfa, ..*opt });
    let mut others = OtherGroups::new(&st);
    net.flows[f].routes[0]
        .ports
        .iter()
        .map(|&p| left_over(net, &lay, &st, opt, lay.crossing(f, p), &mut others))
        .collect()
}

/// [β − l]^+: the service of a node followed by a packetizer of largest packet `l`.
fn packetize(beta: &Curve, l: f64) -> Curve {
    beta.offset(-l).positive_part().non_decreasing_closure()
}

/// Per queue and group, the sum of the other groups' arrival curves: what every member of the
/// group sees as cross traffic besides its own group. Computed once per group on first use,
/// where summing every group again for each crossing made SFA quadratic in a port's flows.
///
/// Each sum is the groups' curves added one by one in group order from the zero curve, the
/// order fixing the floating-point result: the group curves of a queue are built once, and the
/// sum of the groups before `k` (the same first steps for every `k` after them) is shared.
struct OtherGroups {
    sums: Vec<Vec<Option<Option<Curve>>>>,
    /// Per queue, once one of its sums is asked: each group's curve, and the running sums of
    /// the curves before each group (`prefix[k]`: groups `0..k`, `None` while there are none).
    queues: Vec<Option<QueueSums>>,
}

struct QueueSums {
    curves: Vec<Option<Curve>>,
    prefix: Vec<Option<Curve>>,
}

impl OtherGroups {
    fn new(st: &TfaState) -> OtherGroups {
        OtherGroups {
            sums: st.groups.iter().map(|g| vec![None; g.len()]).collect(),
            queues: st.groups.iter().map(|_| None).collect(),
        }
    }

    /// Σ over the groups of queue `q` but `k` (in group order), `None` when there are none.
    fn of(&mut self, st: &TfaState, q: usize, k: usize) -> Option<&Curve> {
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
fn left_over(
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
fn arrival_without(
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
    if opt.method == Method::SfaIter {
        if let Some(own) = arrival_of(net, lay, st, q, &with_foi) {
            travelled = travelled.min(&own);
        }
    }
    Ok(total.add(&travelled))
}

/// SFA's delay and backlog bounds for one route, from the end-to-end service at its last
/// crossing: the horizontal and vertical deviations of the flow's arrival curve from it.
fn sfa_route(
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
const SFA_ITER_PASSES: usize = 25;
const SFA_ITER_TOLERANCE: f64 = 1e-9;

/// SFA-iter's end-to-end services, pass by pass, and how the iteration ended.
struct SfaIteration {
    /// Every pass's end-to-end services ([`sfa_services`]), plain SFA's first: each gives valid
    /// bounds, and a route keeps the smallest (FIFO's θ choice is not monotone in the cross
    /// traffic, so a later pass can give a route a larger bound).
    services: Vec<Vec<Result<Curve, Unbounded>>>,
    /// Passes after plain SFA.
    passes: usize,
    /// Whether it stopped at a fixed point: no SFA output bound below the state's, or no
    /// entering burst moved by more than the tolerance.
    converged: bool,
    /// Why it did not iterate at all, if it did not.
    skipped: Option<&'static str>,
}

impl SfaIteration {
    fn note(&self, name: &str) -> String {
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
fn sfa_iterate(
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
fn sfa_output_burst(net: &Network, x: &Crossing, service: &Curve) -> Option<f64> {
    let f = &net.flows[x.flow];
    let out = curves::deconvolve(&Curve::token_bucket(f.rate, f.burst), service).ok()?;
    (out.tail_slope() <= f.rate)
        .then(|| upper_burst(&out) + f.rate * f.max_frame_wire / net.ports[x.port].rate)
}

/// TFA over the ports in feed-forward order, each crossing's output burst capped by `cap` before
/// the ports after it read it.
fn tfa_capped(net: &Network, lay: &Layout, opt: &Options, cap: &[f64]) -> TfaState {
    let mut st = tfa_start(net, lay, opt, BurstGrowth::Tightest);
    for &p in &net.port_order().order {
        tfa_port(net, lay, opt, BurstGrowth::Tightest, p, &mut st);
        for &q in &lay.port_queues[p] {
            for &c in &lay.queues[q].crossings {
                st.out_burst[c] = st.out_burst[c].min(cap[c]);
            }
        }
    }
    st
}

/// TFA's backlog bound for a route, in DNC's sense: the largest backlog of a port on it (bits).
fn tfa_backlog(st: &TfaState, ports: &[PortId]) -> f64 {
    ports.iter().map(|&p| *st.port_backlog[p].as_ref().unwrap_or(&f64::INFINITY)).fold(0.0, f64::max)
}

/// Port delays as plain numbers, infinite where there is no bound (the reason is looked up then).
fn or_infinite(delays: &[Result<f64, Unbounded>]) -> Vec<f64> {
    delays.iter().map(|d| *d.as_ref().unwrap_or(&f64::INFINITY)).collect()
}

/// TFA on FIFO ports without grouping, as afdx-naive reports it: each port's delay (infinite
/// when unbounded) and the sum of the bursts entering it.
pub(crate) struct FifoTfa {
    pub port_delay: Vec<f64>,
    pub port_bursts: Vec<f64>,
    pub notes: Vec<String>,
}

pub(crate) fn fifo_tfa(net: &Network) -> FifoTfa {
    match fifo_pass::pass(net) {
        Some(pass) => {
            FifoTfa { port_delay: or_infinite(&pass.delay), port_bursts: pass.bursts, notes: Vec::new() }
        }
        None => fifo_tfa_general(net),
    }
}

/// [`fifo_tfa`] on the general path (curves, queues and groups).
pub(crate) fn fifo_tfa_general(net: &Network) -> FifoTfa {
    let lay = layout(net);
    let opt = Options { method: Method::Tfa, grouping: false, multiplexing: Multiplexing::Fifo };
    let (st, notes) = tfa_with(net, &lay, &opt, BurstGrowth::ByDelay);
    let port_bursts = lay
        .port_queues
        .iter()
        .map(|qs| qs.iter().flat_map(|&q| &lay.queues[q].crossings).fold(0.0, |s, &c| s + st.burst[c]))
        .collect();
    let port_delay = or_infinite(&st.port_delay);
    FifoTfa { port_delay, port_bursts, notes }
}

/// The FIFO queues of a network as the linear programs of `fifo-lp` read them: TFA's layout,
/// and from TFA's state (FIFO multiplexing, grouping where links serialise flows) each queue's
/// service curve, which its port's scheduler module gives, and its delay bound.
pub(crate) struct FifoQueues {
    /// Per queue: its port.
    pub port: Vec<PortId>,
    /// Per queue: its service curve (the scheduler's, the other queues' arrivals subtracted), or
    /// why it has none.
    pub service: Vec<Result<Curve, Unbounded>>,
    /// Per queue: TFA's delay bound (s), or why there is none.
    pub delay: Vec<Result<f64, Unbounded>>,
    /// Per queue: its flows, in flow order.
    pub flows: Vec<Vec<FlowId>>,
    /// Per flow: (port, queue, whether an interleaved regulator reshapes it there) of every port
    /// it crosses, once for a multicast flow.
    pub crossings: Vec<Vec<(PortId, usize, bool)>>,
}

pub(crate) fn fifo_queues(net: &Network) -> FifoQueues {
    let lay = layout(net);
    let grouping = net.kind == crate::model::NetworkKind::Ethernet;
    let opt = Options { method: Method::Tfa, grouping, multiplexing: Multiplexing::Fifo };
    let (st, _) = tfa(net, &lay, &opt);
    let mut port = vec![0; lay.queues.len()];
    for (p, qs) in lay.port_queues.iter().enumerate() {
        for &q in qs {
            port[q] = p;
        }
    }
    let flows =
        lay.queues.iter().map(|q| q.crossings.iter().map(|&c| lay.crossings[c].flow).collect()).collect();
    let crossings = lay
        .flow_crossings
        .iter()
        .map(|fc| fc.iter().map(|&(p, c)| (p, lay.crossings[c].queue, lay.regulated[c])).collect())
        .collect();
    FifoQueues { port, service: st.service, delay: st.delay, flows, crossings }
}

/// TFA's bound for one route: the sum of its queues' delays.
fn tfa_route(lay: &Layout, st: &TfaState, f: FlowId, ports: &[PortId]) -> Result<f64, Unbounded> {
    ports.iter().try_fold(0.0, |acc, &p| match lay.time_triggered.get(&(f, p)) {
        Some(d) => Ok(acc + d),
        None => st.delay[lay.crossings[lay.crossing(f, p)].queue].clone().map(|d| acc + d),
    })
}

fn port_bounds(
    net: &Network,
    delay: &[Result<f64, Unbounded>],
    backlog: &[Result<f64, Unbounded>],
) -> Vec<PortBound> {
    let loads = net.port_loads();
    net.ports
        .iter()
        .enumerate()
        .map(|(p, port)| {
            let reason = delay[p].as_ref().err().map(|u| u.to_string());
            // A shaped port serves at the shaper's rate: its load is against that.
            let rate =
                port.shaper.map_or(port.rate, |s| schedulers::token_bucket::shaped_rate(port.rate, s.rate));
            PortBound {
                node: net.nodes[port.node].name.clone(),
                port: port.name.clone(),
                plane: net.planes[port.plane].clone(),
                load: loads[p] / rate,
                delay_us: delay[p].as_ref().map_or(f64::INFINITY, |d| d * 1e6),
                backlog_bytes: backlog[p].as_ref().map_or(f64::INFINITY, |b| b / 8.0),
                buffer_bytes: port.buffer.map(|b| b / 8.0),
                es_jitter_us: None,
                status: if reason.is_none() { Status::Ok } else { Status::Unbounded },
                reason,
            }
        })
        .collect()
}

/// Flow-server crossings above which the default arrival bounding (`ArrivalBounds::Tightest`)
/// leaves PMOO arrival bounds out, said in a note: DNC's arrival bounds are recomputed for every
/// flow of interest over everything upstream of it, so their cost grows with the square of the
/// network (measured in docs/ANALYSIS.md, "Arrival bounding on server graphs").
/// `--arrival-bounds pmoo` computes them whatever the size.
pub const PMOO_ARRIVAL_BOUNDS_MAX_CROSSINGS: usize = 2000;

/// Runs every (method, multiplexing) candidate on every route and keeps, per route, the smallest
/// bound with the name of the method that gave it. TFA is computed once (with `tfa_mux`) and its
/// propagated arrival curves serve every SFA candidate: they bound the cross traffic whatever the
/// candidate assumes inside the queue of interest.
fn run_candidates(
    net: &Network,
    grouping: bool,
    tfa_mux: Multiplexing,
    candidates: &[(Method, Multiplexing)],
    name: &'static str,
    arrival: ArrivalBounds,
) -> AnalysisReport {
    let lay = layout(net);
    let tfa_opt = Options { method: Method::Tfa, grouping, multiplexing: tfa_mux };
    // The θ-family choice of FIFO left-over service is not monotone in the cross traffic, so
    // grouping can make a bound larger (through an output bound upstream, or SFA's left-over).
    // Both bounds are valid: with grouping, every route is also evaluated on the ungrouped curves
    // and the smaller bound kept. The two TFAs are independent.
    let ((st, notes), ungrouped) = join(
        grouping && two_threads(&lay),
        || tfa(net, &lay, &tfa_opt),
        || grouping.then(|| tfa(net, &lay, &Options { grouping: false, ..tfa_opt }).0),
    );
    report_candidates(net, &lay, &st, ungrouped.as_ref(), notes, grouping, candidates, name, arrival)
}

/// [`run_candidates`]' bounds from TFA's states already computed.
#[allow(clippy::too_many_arguments)]
fn report_candidates(
    net: &Network,
    lay: &Layout,
    st: &TfaState,
    ungrouped: Option<&TfaState>,
    mut notes: Vec<String>,
    grouping: bool,
    candidates: &[(Method, Multiplexing)],
    name: &'static str,
    arrival: ArrivalBounds,
) -> AnalysisReport {
    let mut labels: Vec<Vec<&'static str>> = Vec::with_capacity(candidates.len());
    // The SFA candidates' runs, one per candidate and state (the grouped, then the ungrouped
    // curves), are independent: on a large network the first half runs on another thread, the
    // second here.
    enum Run {
        Sfa(Vec<Result<Curve, Unbounded>>),
        Iter(SfaIteration),
    }
    impl Run {
        fn plain(self) -> Vec<Result<Curve, Unbounded>> {
            match self {
                Run::Sfa(services) => services,
                Run::Iter(_) => unreachable!("SFA's runs are plain"),
            }
        }
        fn iterated(self) -> SfaIteration {
            match self {
                Run::Iter(it) => it,
                Run::Sfa(_) => unreachable!("SFA-iter's runs iterate"),
            }
        }
    }
    let jobs: Vec<(Method, Multiplexing, bool)> = candidates
        .iter()
        .filter(|(method, _)| matches!(method, Method::Sfa | Method::SfaIter))
        .flat_map(|&(method, mux)| {
            std::iter::once((method, mux, false)).chain(ungrouped.map(|_| (method, mux, true)))
        })
        .collect();
    // The crossings SFA's rows read: the last of each route.
    let mut route_ends = vec![false; lay.crossings.len()];
    for (f, flow) in net.flows.iter().enumerate() {
        for r in &flow.routes {
            route_ends[lay.crossing(f, *r.ports.last().expect("routes have ports"))] = true;
        }
    }
    let run = |&(method, mux, plain): &(Method, Multiplexing, bool)| {
        let (st, grouping) = match ungrouped {
            Some(st_u) if plain => (st_u, false),
            _ => (st, grouping),
        };
        let opt = Options { method, grouping, multiplexing: mux };
        match method {
            Method::Sfa => Run::Sfa(sfa_services(net, lay, st, &opt, Some(&route_ends))),
            // TFA's own passes assume what the candidate assumes (as `st` does, in every
            // candidate list that holds SFA-iter).
            _ => Run::Iter(sfa_iterate(net, lay, st, &Options { method: Method::Tfa, ..opt }, &opt)),
        }
    };
    let half = jobs.len() / 2;
    let (second, mut runs) = join(
        jobs.len() >= 2 && two_threads(lay),
        || jobs[half..].iter().map(run).collect::<Vec<Run>>(),
        || jobs[..half].iter().map(run).collect::<Vec<Run>>(),
    );
    runs.extend(second);
    let mut runs = runs.into_iter();
    let per_candidate = 1 + usize::from(ungrouped.is_some());
    // Per candidate, the end-to-end services to evaluate each route on, each with the name its
    // rows get: SFA-iter's plain-SFA passes are named as SFA, so that a row says `sfa-iter` only
    // where the iteration tightened it (they come first: a tie goes to the first).
    let services: Vec<Vec<Vec<Result<Curve, Unbounded>>>> = candidates
        .iter()
        .map(|&(method, mux)| match method {
            Method::Tfa | Method::Pmoo => {
                labels.push(Vec::new());
                Vec::new()
            }
            Method::Sfa => {
                let opt = Options { method, grouping, multiplexing: mux };
                let v: Vec<_> = runs.by_ref().take(per_candidate).map(Run::plain).collect();
                labels.push(vec![opt.name(); v.len()]);
                v
            }
            Method::SfaIter => {
                let opt = Options { method, grouping, multiplexing: mux };
                let sfa_name = Options { method: Method::Sfa, ..opt }.name();
                let iterations: Vec<SfaIteration> =
                    runs.by_ref().take(per_candidate).map(Run::iterated).collect();
                // Alone, SFA-iter says how it ended; among `best`'s candidates, only when it
                // iterated or could not.
                for (run, curves) in iterations.iter().zip(["", " (on the ungrouped curves)"]) {
                    if candidates.len() == 1 || run.passes > 0 || run.skipped.is_some() {
                        notes.push(run.note(&format!("{}{curves}", opt.name())));
                    }
                }
                let (mut first, mut later) = (Vec::new(), Vec::new());
                for run in iterations {
                    let mut passes = run.services.into_iter();
                    first.extend(passes.next());
                    later.extend(passes);
                }
                labels.push([vec![sfa_name; first.len()], vec![opt.name(); later.len()]].concat());
                first.extend(later);
                first
            }
        })
        .collect();
    // On a server graph, SFA also as DNC computes it, its cross traffic bounded by aggregate PBOO
    // over concatenated sub-paths ([`aggregate_pboo`]): per flow, its (delay, backlog), named as
    // plain SFA. Both bounds are valid; the smaller is kept.
    let dnc_sfa: Vec<Option<aggregate_pboo::FlowBounds>> = candidates
        .iter()
        .zip(labels.iter_mut())
        .map(|(&(method, mux), labels)| {
            let mut graph = aggregate_pboo::ServerGraph::new(net, mux)
                .filter(|_| matches!(method, Method::Sfa | Method::SfaIter))?;
            labels.push(Options { method: Method::Sfa, grouping, multiplexing: mux }.name());
            Some((0..net.flows.len()).map(|f| graph.sfa(f)).collect())
        })
        .collect();
    // On a server graph under arbitrary multiplexing, each candidate also as DNC computes it with
    // PMOO arrival bounding ([`aggregate_pmoo`]): per flow, its (delay, backlog), the delay
    // infinite where TFA has none. With `ArrivalBounds::Pmoo` these are the candidate's only
    // bounds; with `Tightest` the smaller delay (and its backlog) is kept.
    // One graph for every candidate: its cached arrival bounds do not depend on the method.
    let mut pmoo_graph = (arrival != ArrivalBounds::Pboo)
        .then(|| aggregate_pboo::ServerGraph::blind(net, aggregate_pboo::TurnBounding::Pmoo))
        .flatten();
    if arrival == ArrivalBounds::Pmoo && pmoo_graph.is_some() {
        notes.push("cross traffic bounded by PMOO arrival bounds alone (--arrival-bounds pmoo)".to_string());
    }
    let crossings = lay.crossings.len();
    if arrival == ArrivalBounds::Tightest
        && crossings > PMOO_ARRIVAL_BOUNDS_MAX_CROSSINGS
        && pmoo_graph.take().is_some()
        && candidates.iter().any(|&(_, mux)| mux == Multiplexing::Blind)
    {
        notes.push(format!(
            "PMOO arrival bounds not computed ({crossings} flow-server crossings > \
             {PMOO_ARRIVAL_BOUNDS_MAX_CROSSINGS}): cross traffic bounded by PBOO; ask for them with \
             --arrival-bounds pmoo"
        ));
    }
    // Per candidate (None: no PMOO arrival bounds for it), per flow: (delay, backlog) if bounded.
    type PerFlow = Vec<Option<(f64, f64)>>;
    let dnc_pmoo: Vec<Option<PerFlow>> = candidates
        .iter()
        .map(|&(method, mux)| {
            let graph = pmoo_graph.as_mut().filter(|_| mux == Multiplexing::Blind)?;
            Some(
                (0..net.flows.len())
                    .map(|f| match method {
                        Method::Tfa => Some(graph.tfa(f)).filter(|(_, b)| b.is_finite()),
                        Method::Sfa | Method::SfaIter => graph.sfa(f),
                        Method::Pmoo => graph.pmoo(f),
                    })
                    .collect(),
            )
        })
        .collect();
    let method_names: Vec<&'static str> = candidates
        .iter()
        .map(|&(method, mux)| Options { method, grouping, multiplexing: mux }.name())
        .collect();
    let sfa_names: Vec<&'static str> = candidates
        .iter()
        .map(|&(_, mux)| Options { method: Method::Sfa, grouping, multiplexing: mux }.name())
        .collect();
    // The rows of different flows are independent: on a large network, the second half of the
    // flows' are computed on another thread.
    let rows = |range: std::ops::Range<usize>| {
        let mut rows = Vec::with_capacity(net.flows[range.clone()].iter().map(|f| f.routes.len()).sum());
        let mut pmoo_scratch = pmoo::Scratch::new(lay);
        for f in range {
            let flow = &net.flows[f];
            for r in &flow.routes {
                let fixed: f64 = r.ports.iter().map(|&p| net.ports[p].propagation_delay).sum::<f64>()
                    + net.nodes[r.destination].receive_latency;
                // (delay, the same method's backlog, method) of the smallest delay; without a finite
                // delay, the smallest backlog any method bounds.
                let mut best: Option<(f64, f64, &'static str)> = None;
                let mut backlog_only = f64::INFINITY;
                let mut reason = None;
                // An interleaved regulator's delay is free only hop by hop, with the queue before it
                // (TFA's sum); it has no service curve to convolve along the route.
                let through_regulator = r.ports.iter().any(|&p| {
                    let c = lay.crossing(f, p);
                    lay.regulated[c] && lay.crossings[c].upstream.is_some()
                });
                for (k, (&(method, _), cname)) in candidates.iter().zip(&method_names).enumerate() {
                    let pmoo_alone = arrival == ArrivalBounds::Pmoo && dnc_pmoo[k].is_some();
                    let mut bounds: Vec<Result<(f64, f64), Unbounded>> = if pmoo_alone {
                        Vec::new()
                    } else {
                        match method {
                            Method::Sfa | Method::SfaIter | Method::Pmoo if through_regulator => vec![Err(Unbounded::new(
                                "the route crosses interleaved regulators (ATS), bounded hop by hop only: use tfa or best",
                            ))],
                            Method::Tfa => {
                                // Either state's backlog bounds the same quantity: keep the smaller.
                                let backlog = std::iter::once(st)
                                    .chain(ungrouped)
                                    .map(|st| tfa_backlog(st, &r.ports))
                                    .fold(f64::INFINITY, f64::min);
                                backlog_only = backlog_only.min(backlog);
                                std::iter::once(st)
                                    .chain(ungrouped)
                                    .map(|st| tfa_route(lay, st, f, &r.ports).map(|d| (d, backlog)))
                                    .collect()
                            }
                            // SFA-iter: every pass's bound is valid; the smallest is kept.
                            Method::Sfa | Method::SfaIter => services[k]
                                .iter()
                                .map(|s| sfa_route(net, lay, st, s, f, &r.ports))
                                .chain(dnc_sfa[k].as_ref().and_then(|b| b[f]).map(Ok))
                                .collect(),
                            // Its interferers as token buckets (the ungrouped curves, in closed form):
                            // with the links' lines they cost three times more for a bound that, on
                            // Ethernet, TFA or SFA beats anyway (PMOO pays the slowest left-over rate of
                            // the whole route).
                            Method::Pmoo => {
                                let st = ungrouped.unwrap_or(st);
                                let hopeless = best.is_some_and(|(b, _, _)| {
                                    pmoo::pmoo_lower_bound(net, lay, st, f, &r.ports, &mut pmoo_scratch) + fixed >= b
                                });
                                if hopeless {
                                    Vec::new()
                                } else {
                                    vec![pmoo::pmoo_route(net, lay, st, f, &r.ports, &mut pmoo_scratch)]
                                }
                            }
                        }
                    };
                    // DNC's analysis with PMOO arrival bounds: SFA's is not iterated.
                    let pmoo_at = bounds.len();
                    let pmoo_label = match method {
                        Method::SfaIter => sfa_names[k],
                        _ => *cname,
                    };
                    if let Some(by_pmoo) = dnc_pmoo[k].as_ref() {
                        bounds.push(match by_pmoo[f] {
                            Some((d, b)) if d.is_finite() => Ok((d, b)),
                            Some((_, b)) => {
                                backlog_only = backlog_only.min(b);
                                Err(Unbounded::new(
                                    "a server on the path has no delay bound with PMOO arrival bounds",
                                ))
                            }
                            None => Err(Unbounded::new("no bound with PMOO arrival bounds")),
                        });
                    }
                    for (i, bound) in bounds.into_iter().enumerate() {
                        match bound {
                            Ok((d, b)) if best.as_ref().is_none_or(|(x, _, _)| d + fixed < *x) => {
                                let label = if i == pmoo_at && dnc_pmoo[k].is_some() {
                                    pmoo_label
                                } else {
                                    labels[k].get(i).copied().unwrap_or(*cname)
                                };
                                best = Some((d + fixed, b, label))
                            }
                            Ok(_) => {}
                            Err(u) => reason = reason.or(Some(u.to_string())),
                        }
                    }
                }
                let (delay, backlog, method) = best.unwrap_or((f64::INFINITY, backlog_only, name));
                let reason = if delay.is_finite() { None } else { reason };
                rows.push(flow_bound(net, f, r, (delay, backlog), reason, method));
            }
        }
        rows
    };
    let half = net.flows.len() / 2;
    let (mut flows, second) = join(two_threads(lay), || rows(0..half), || rows(half..net.flows.len()));
    flows.extend(second);
    if candidates.iter().all(|&(_, m)| m == Multiplexing::Blind) {
        notes.push("blind multiplexing: no assumption on the order of frames inside a queue".to_string());
    }
    let (port_delay, port_backlog) = match ungrouped {
        None => (st.port_delay.clone(), st.port_backlog.clone()),
        Some(u) => (smaller(&st.port_delay, &u.port_delay), smaller(&st.port_backlog, &u.port_backlog)),
    };
    AnalysisReport::new(net, name, flows, port_bounds(net, &port_delay, &port_backlog), notes)
}

/// The smaller of two bounds, element by element (finite beats infinite).
fn smaller(a: &[Result<f64, Unbounded>], b: &[Result<f64, Unbounded>]) -> Vec<Result<f64, Unbounded>> {
    a.iter()
        .zip(b)
        .map(|(x, y)| match (x, y) {
            (Ok(x), Ok(y)) => Ok(x.min(*y)),
            (Ok(v), Err(_)) | (Err(_), Ok(v)) => Ok(*v),
            (Err(e), Err(_)) => Err(e.clone()),
        })
        .collect()
}

/// Runs TFA or SFA with the given options.
pub fn analyze(net: &Network, opt: &Options) -> AnalysisReport {
    analyze_with(net, opt, ArrivalBounds::Tightest)
}

/// [`analyze`] with the given arrival bounding on server graphs.
pub fn analyze_with(net: &Network, opt: &Options, arrival: ArrivalBounds) -> AnalysisReport {
    run_candidates(
        net,
        opt.grouping,
        opt.multiplexing,
        &[(opt.method, opt.multiplexing)],
        opt.name(),
        arrival,
    )
}

/// `best`: every sound method that applies under the multiplexing the user assumes, each with
/// grouping, and per (flow, destination, plane) the smallest bound and the method that gave it.
///
/// * FIFO multiplexing (the default: FIFO and static-priority queues serve their frames in
///   arrival order): TFA, SFA with FIFO left-over service, and SFA with blind left-over service
///   (a blind bound holds whatever the order, so it is a candidate too).
/// * Blind multiplexing (`--blind`: the order of frames inside a queue is unknown): only the
///   blind candidates, TFA and SFA. A FIFO candidate would assume an order the user ruled out.
///
/// afdx-naive is not a candidate: TFA without grouping is the same computation before rounding,
/// and grouping only tightens it.
pub fn best(net: &Network, multiplexing: Multiplexing) -> AnalysisReport {
    best_with(net, multiplexing, ArrivalBounds::Tightest)
}

/// [`best`] with the given arrival bounding on server graphs.
pub fn best_with(net: &Network, multiplexing: Multiplexing, arrival: ArrivalBounds) -> AnalysisReport {
    // Grouping serialises flows on links; a server graph has none.
    let ethernet = net.kind == crate::model::NetworkKind::Ethernet;
    // SFA-iter's first pass is SFA (its rows named so): it replaces SFA where it runs.
    let iterated = iterates_in_best(net);
    let sfa = if iterated.is_ok() { Method::SfaIter } else { Method::Sfa };
    let candidates = match multiplexing {
        Multiplexing::Fifo => vec![
            (Method::Tfa, Multiplexing::Fifo),
            (sfa, Multiplexing::Fifo),
            (sfa, Multiplexing::Blind),
            (Method::Pmoo, Multiplexing::Blind),
        ],
        Multiplexing::Blind => vec![
            (Method::Tfa, Multiplexing::Blind),
            (sfa, Multiplexing::Blind),
            (Method::Pmoo, Multiplexing::Blind),
        ],
    };
    let name = match multiplexing {
        Multiplexing::Fifo => "best",
        Multiplexing::Blind => "best-blind",
    };
    let mut report = run_candidates(net, ethernet, multiplexing, &candidates, name, arrival);
    if let Err(why) = iterated {
        report.notes.push(why);
    }
    report
}

/// Crossings (flow, port) above which `best` runs plain SFA instead of SFA-iter: each pass of the
/// iteration costs one TFA and one SFA, so on large Ethernet networks it would multiply `best`'s
/// time by the passes (`--method sfa-iter` iterates whatever the size). Measured in
/// docs/ANALYSIS.md ("SFA-iter").
pub const SFA_ITER_IN_BEST_MAX_CROSSINGS: usize = 10_000;

/// Whether `best` iterates SFA on `net` ([`SFA_ITER_IN_BEST_MAX_CROSSINGS`]), or why not.
fn iterates_in_best(net: &Network) -> Result<(), String> {
    let crossings: usize = net.flows_per_port().iter().map(|f| f.len()).sum();
    if crossings <= SFA_ITER_IN_BEST_MAX_CROSSINGS {
        Ok(())
    } else {
        Err(format!(
            "SFA not iterated ({crossings} flow-port crossings > {SFA_ITER_IN_BEST_MAX_CROSSINGS}): \
             ask for it with --method sfa-iter"
        ))
    }
}

/// Smallest possible delay of a route: latencies, one smallest frame per hop, propagation.
pub fn best_case_delay(net: &Network, f: FlowId, ports: &[PortId], destination: usize) -> f64 {
    let flow = &net.flows[f];
    ports
        .iter()
        .map(|&p| {
            let port = &net.ports[p];
            net.nodes[port.node].technological_latency
                + flow.min_frame_wire / port.rate
                + port.propagation_delay
        })
        .sum::<f64>()
        + net.nodes[destination].receive_latency
}

/// The row of flow `f` on route `r`, from its delay (s) and backlog (bits) bounds.
pub(crate) fn flow_bound(
    net: &Network,
    f: FlowId,
    r: &crate::model::Route,
    (delay, backlog): (f64, f64),
    reason: Option<String>,
    method: &'static str,
) -> FlowBound {
    let best_case = best_case_delay(net, f, &r.ports, r.destination);
    let mut row = row(&net.flows[f], f, (r.destination, r.plane), delay, best_case, reason, method);
    row.backlog_bytes = backlog / 8.0;
    row
}

/// Replaces `row`'s delay bound by `bound` (s: queueing and latencies along its route), from
/// `method`, with the route's fixed delays added; its backlog stays.
pub(crate) fn set_delay(
    net: &Network,
    row: &mut FlowBound,
    bound: Result<f64, Unbounded>,
    method: &'static str,
) {
    let f = row.flow;
    let r = net.flows[f]
        .routes
        .iter()
        .find(|r| r.destination == row.destination && r.plane == row.plane)
        .expect("a row is one of its flow's routes");
    let fixed = fixed_delays_us(net, row) / 1e6;
    let (delay, reason) = match bound {
        Ok(d) => (d + fixed, None),
        Err(u) => (f64::INFINITY, Some(u.to_string())),
    };
    let guaranteed = row.guaranteed;
    *row = flow_bound(net, f, r, (delay, row.backlog_bytes * 8.0), reason, method);
    row.guaranteed = guaranteed;
}

/// What a row's route adds to its queues' delays (µs): the links' propagation delays and the
/// destination's receive latency.
pub(crate) fn fixed_delays_us(net: &Network, row: &FlowBound) -> f64 {
    let r = net.flows[row.flow]
        .routes
        .iter()
        .find(|r| r.destination == row.destination && r.plane == row.plane)
        .expect("a row is one of its flow's routes");
    (r.ports.iter().map(|&p| net.ports[p].propagation_delay).sum::<f64>()
        + net.nodes[r.destination].receive_latency)
        * 1e6
}

/// `x` raised by 8 ulps (an infinity stays one).
pub(crate) fn round_up(x: f64) -> f64 {
    x + x.abs() * 8.0 * f64::EPSILON
}

/// The row of flow `f` on `route` (destination, plane), from its delay and best-case delay (s).
fn row(
    flow: &crate::model::FlowModel,
    f: FlowId,
    (destination, plane): (usize, usize),
    delay: f64,
    best_case: f64,
    reason: Option<String>,
    method: &'static str,
) -> FlowBound {
    // The bound is f64 arithmetic, a few ulps from its exact value either way: it is reported a
    // few ulps up, so that what it bounds (a simulated delay, exact to the ns) never passes it by
    // rounding.
    let delay_us = round_up(delay * 1e6);
    let bcd_us = best_case * 1e6;
    let deadline_us = flow.deadline.map(|d| d * 1e6);
    FlowBound {
        flow: f,
        destination,
        plane,
        delay_us,
        jitter_us: (delay_us - bcd_us).max(0.0),
        best_case_us: bcd_us,
        backlog_bytes: f64::INFINITY,
        deadline_us,
        slack_us: deadline_us.map(|d| d - delay_us),
        status: status_of(delay_us, deadline_us),
        method,
        guaranteed: true,
        reason,
    }
}

#[cfg(test)]
mod table_tests {
    use super::*;
    use crate::model::load_network;
    use serde_json::json;

    /// ES1 (class hi: 500 B every 1 ms) and ES2 (class lo: a 20 kB burst, frames 64..1500 B) to
    /// ES3 through SW, whose port to ES3 runs `table`; 100 Mb/s, no latencies.
    fn network(table: serde_json::Value) -> Network {
        let doc = json!({
            "name": "table",
            "defaults": {"link_rate": "100Mbps", "technological_latency": "0us", "propagation_delay": "0us"},
            "classes": [{"name": "hi"}, {"name": "lo"}],
            "schedulers": {"t": table},
            "end_systems": [{"name": "ES1"}, {"name": "ES2"}, {"name": "ES3"}],
            "switches": [{"name": "SW", "scheduler": "t"}],
            "links": [{"from": "ES1", "to": "SW"}, {"from": "ES2", "to": "SW"}, {"from": "SW", "to": "ES3"}],
            "flows": [
                {"name": "H", "type": "virtual_link", "bag": "1ms", "lmin": "64B", "lmax": "500B",
                 "class": "hi", "source": "ES1", "destinations": ["ES3"]},
                {"name": "L", "type": "token_bucket", "burst": "20000B", "rate": "10Mbps",
                 "min_packet": "64B", "max_packet": "1500B", "class": "lo", "source": "ES2",
                 "destinations": ["ES3"]}
            ]
        });
        let (n, d) = load_network(&doc.to_string());
        n.unwrap_or_else(|| panic!("{:?}", d.0))
    }

    /// Every table kind is analysed by tfa, sfa and best, with finite bounds.
    #[test]
    fn table_ports_are_analysed() {
        for kind in ["as_basic", "iba_weighted", "dtable"] {
            let net = network(json!({"kind": "table", "table_kind": kind, "entries": [
                {"class": "hi", "weight": "600B"}, {"class": "lo", "weight": "1600B"},
                {"class": "hi", "weight": "600B"}, {"class": "lo", "weight": "1600B"}]}));
            assert!(applies(&net).is_ok(), "{kind}");
            for report in [
                analyze(
                    &net,
                    &Options { method: Method::Tfa, grouping: false, multiplexing: Multiplexing::Fifo },
                ),
                analyze(
                    &net,
                    &Options { method: Method::Sfa, grouping: true, multiplexing: Multiplexing::Fifo },
                ),
                best(&net, Multiplexing::Fifo),
                best(&net, Multiplexing::Blind),
            ] {
                assert!(report.flows.iter().all(|f| f.delay_us.is_finite() && f.reason.is_none()), "{kind}");
            }
        }
    }

    /// The DTable class bound by hand (docs/ANALYSIS.md, "Table schedulers"). Class hi: entries
    /// 0 and 2 of 600 B, lo's entries 1 and 3 of 1600 B. Wire bits: L_hi = 4160, s'_hi = 520/500;
    /// lo's smallest frame 84/64 B, s_lo = 1.3125, L_lo = 12000 frame bits. X per lo entry
    /// = 1.3125·12800 = 16800, X = 33600; A = 1.04·4800 = 4992, P = 9984, r = X/P = 3.3654;
    /// K = 1.3125·12000 = 15750; D = 4160; U ≡ 0 (the layout is regular), so
    /// C·Θ = 4160 + 15750 + max(16800, 4160·r + 16800) = 50710 bits: Θ = 507.1 µs,
    /// ρ = P·C/(P + X) = 22.9075 Mb/s. H's burst at SW: alone at ES1's port (delay 41.6 µs), its
    /// frames of 84..520 B on the wire spend 6.72..41.6 µs there, so it leaves within
    /// 4160 + 4.16 Mb/s × (41.6 − 6.72) µs = 4305.1008 bits (the left-over bound, 4160 + 4.16 Mb/s
    /// × 41.6 µs for the frame in transmission, is looser), and SW adds Θ + b/ρ: H's bound is
    /// 41.6 + 507.1 + 187.934 µs (lo's 20 kB burst makes the blind residual looser).
    #[test]
    fn dtable_bound_by_hand() {
        let net = network(json!({"kind": "table", "table_kind": "dtable", "entries": [
            {"class": "hi", "weight": "600B"}, {"class": "lo", "weight": "1600B"},
            {"class": "hi", "weight": "600B"}, {"class": "lo", "weight": "1600B"}]}));
        let r = analyze(
            &net,
            &Options { method: Method::Tfa, grouping: false, multiplexing: Multiplexing::Fifo },
        );
        let h = r.flows.iter().find(|f| r.flows.names_of(f).0 == "H").unwrap();
        let rho = 9984.0 / 43584.0 * 100e6;
        let want = 41.6 + 507.1 + 4305.1008 / rho * 1e6;
        assert!((h.delay_us - want).abs() < 1e-6, "{} vs {want}", h.delay_us);
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;
    use crate::model::load_network;
    use serde_json::json;

    /// What [`OtherGroups::of`] caches, computed afresh: the groups of queue `q` but `k`, their
    /// curves added one by one in group order from the zero curve.
    fn others_afresh(st: &TfaState, q: usize, k: usize) -> Option<Curve> {
        let mut curves =
            (0..st.groups[q].len()).filter(|&i| i != k).filter_map(|i| st.group_curve(q, i)).peekable();
        curves.peek().is_some().then(|| sum_curves(curves))
    }

    /// Every cached sum, asked in SFA's order (crossing by crossing), is the fresh one, bit for bit
    /// (`{:?}` tells -0.0 from 0.0).
    fn check(net: &Network, grouping: bool) -> (Layout, TfaState) {
        let lay = layout(net);
        let opt = Options { method: Method::Tfa, grouping, multiplexing: Multiplexing::Fifo };
        let (st, _) = tfa(net, &lay, &opt);
        let mut others = OtherGroups::new(&st);
        for c in &lay.crossings {
            let q = c.queue;
            for k in 0..st.groups[q].len() {
                let cached = others.of(&st, q, k).cloned();
                assert_eq!(
                    format!("{cached:?}"),
                    format!("{:?}", others_afresh(&st, q, k)),
                    "queue {q} group {k}"
                );
            }
        }
        (lay, st)
    }

    /// Two switch ports whose queues differ only in one flow's burst (V3 and W3, 400 and 800 B
    /// frames, same BAG, from ES2; V1, V2 and W1, W2 alike from ES1): the sum of the other groups
    /// seen by V1 and by W1 differs, and a cache that answered one with the other (or with the sum
    /// of another group) fails here. Random networks then check every queue and group.
    #[test]
    fn other_groups_are_never_stale() {
        let vl = |name: &str, lmax: &str, src: &str, dst: &str| {
            json!({"name": name, "type": "virtual_link", "bag": "1ms", "lmin": "64B", "lmax": lmax,
                   "source": src, "destinations": [dst]})
        };
        let doc = json!({
            "name": "two-queues",
            "end_systems": [{"name": "ES1"}, {"name": "ES2"}, {"name": "ES3"}, {"name": "ES4"}],
            "switches": [{"name": "SW"}],
            "links": [{"from": "ES1", "to": "SW"}, {"from": "ES2", "to": "SW"},
                      {"from": "SW", "to": "ES3"}, {"from": "SW", "to": "ES4"}],
            "flows": [vl("V1", "500B", "ES1", "ES3"), vl("V2", "300B", "ES1", "ES3"), vl("V3", "400B", "ES2", "ES3"),
                      vl("W1", "500B", "ES1", "ES4"), vl("W2", "300B", "ES1", "ES4"), vl("W3", "800B", "ES2", "ES4")]
        });
        let (net, d) = load_network(&doc.to_string());
        let net = net.unwrap_or_else(|| panic!("{:?}", d.0));
        for grouping in [false, true] {
            let (lay, st) = check(&net, grouping);
            // V1 (flow 0) and W1 (flow 3) at the switch: their crossing with an upstream one.
            let at_switch = |f: usize| {
                let c = lay.flow_crossings[f]
                    .iter()
                    .map(|&(_, c)| c)
                    .find(|&c| lay.crossings[c].upstream.is_some());
                c.expect("V1 and W1 cross the switch")
            };
            let (v1, w1) = (at_switch(0), at_switch(3));
            let mut others = OtherGroups::new(&st);
            let seen_by = |others: &mut OtherGroups, c: usize| {
                format!("{:?}", others.of(&st, lay.crossings[c].queue, st.group_of[c]).cloned())
            };
            let (v, w) = (seen_by(&mut others, v1), seen_by(&mut others, w1));
            assert_ne!(v, w, "grouping {grouping}: V3 and W3 differ in burst, so must what V1 and W1 see");
            assert_eq!(w, format!("{:?}", others_afresh(&st, lay.crossings[w1].queue, st.group_of[w1])));
        }
        for seed in 0..40 {
            let kind = if seed % 2 == 0 {
                crate::generate::RandomSchedulers::Mixed
            } else {
                crate::generate::RandomSchedulers::Any
            };
            let (net, _) = crate::model::validate_spec(crate::generate::random_small(seed, kind));
            let net = net.expect("random networks validate");
            check(&net, false);
            check(&net, true);
        }
    }
}
