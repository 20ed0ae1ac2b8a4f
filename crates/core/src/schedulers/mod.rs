//! Egress schedulers. Each module holds how its scheduler behaves (the [`Behaviour`] the
//! simulator runs), what it guarantees (the worst-case service model the analysis uses) and,
//! beside them, the formulas of the seed papers under `paper` (kept literally, with their known
//! errors, so users can compare; see shared/spec/seed-catalogue.md).

pub mod as_table;
pub mod ats;
pub mod cbs;
pub mod d2drr;
pub mod drr;
pub mod dtable;
pub mod fifo;
pub mod iba_table;
pub mod scfq;
pub mod service_list;
pub mod static_priority;
pub mod table;
pub mod tas;
pub mod token_bucket;
pub mod wf2q;
pub mod wrr;

use crate::model::{SchedulerConfig, Shaper, TrafficClass};
use std::collections::BTreeMap;

/// One traffic class as a per-class scheduler at one port sees it, for its service model.
#[derive(Clone, Copy, Debug)]
pub struct ClassAtPort {
    /// The class's share: WRR frames per round, DRR quantum (bits), WF2Q/SCFQ weight (unused by
    /// table schedulers, whose shares are their entries).
    pub share: f64,
    /// Smallest and largest frame of the class at the port, on the wire (bits).
    pub lmin: f64,
    pub lmax: f64,
    /// Per-frame wire overhead (preamble, start delimiter, gap) included in lmin/lmax (bits).
    pub overhead: f64,
}

/// A latency-rate guarantee: the class is served at least at `rate` after `latency`, i.e. it
/// has the service curve β_{rate, latency} (Stiliadis & Varma, IEEE/ACM ToN 6(5), 1998).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyRate {
    pub rate: f64,
    pub latency: f64,
}

/// A frame waiting in an egress port, as its scheduler sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    /// The simulator's handle on the frame.
    pub frame: u32,
    /// The frame's class index in the network (`u16::MAX` without a class).
    pub class: u16,
    /// The frame's flow index in the network (`u32::MAX` when unknown): what per-flow regulators
    /// key on ([`ats`]).
    pub flow: u32,
    /// Length on the wire, preamble and gap included (what the link spends), bits.
    pub wire_bits: u32,
    /// Length of the Ethernet frame (what deficits and weights count), bits.
    pub frame_bits: u32,
}

/// The simulator's whole contract with an egress scheduler, as ns-3's queue discs: frames go in,
/// the scheduler says which leaves next. Transmission itself (the link) is the simulator's.
pub trait Behaviour: Send {
    /// A frame arrives at the port.
    fn enqueue(&mut self, item: Queued, now_ns: i64);
    /// The frame to transmit now, if one may go (the link has just become free).
    fn dequeue(&mut self, now_ns: i64) -> Option<Queued>;
    /// When frames wait but none may go now (a shaper out of tokens), the earliest time one may.
    fn next_ready(&self, _now_ns: i64) -> Option<i64> {
        None
    }
    /// Frames waiting.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The per-class FIFOs of a class-based scheduler, with a count of the frames they hold, and the
/// background FIFO for frames of classes the scheduler gives nothing to (validation refuses them;
/// served only when no scheduled class waits, so that no frame is ever stranded). `T` is what a
/// scheduler keeps per frame (the frame, or the frame with its tag).
pub(crate) struct ClassQueues<T> {
    /// One FIFO per class index; read freely, change through `push` and `pop`.
    pub classes: Vec<std::collections::VecDeque<T>>,
    background: std::collections::VecDeque<Queued>,
    scheduled: usize,
}

impl<T: Clone> ClassQueues<T> {
    pub fn new(n: usize) -> Self {
        ClassQueues { classes: vec![Default::default(); n], background: Default::default(), scheduled: 0 }
    }
    pub fn push(&mut self, class: usize, item: T) {
        self.classes[class].push_back(item);
        self.scheduled += 1;
    }
    pub fn pop(&mut self, class: usize) -> Option<T> {
        let item = self.classes[class].pop_front();
        self.scheduled -= item.is_some() as usize;
        item
    }
    /// Queues `item` in its class's FIFO when the scheduler serves that class, else in the
    /// background FIFO.
    pub fn admit(&mut self, item: Queued, served: bool)
    where
        T: From<Queued>,
    {
        if served {
            self.push(item.class as usize, T::from(item));
        } else {
            self.push_background(item);
        }
    }
    /// Queues `item` in its class's FIFO when `listed[class]` (the class has an entry or a
    /// share), else in the background FIFO.
    pub fn admit_listed(&mut self, item: Queued, listed: &[bool])
    where
        T: From<Queued>,
    {
        let served = listed.get(item.class as usize).copied().unwrap_or(false);
        self.admit(item, served);
    }
    pub fn push_background(&mut self, item: Queued) {
        self.background.push_back(item);
    }
    pub fn pop_background(&mut self) -> Option<Queued> {
        self.background.pop_front()
    }
    /// Frames waiting in the scheduled classes.
    pub fn scheduled(&self) -> usize {
        self.scheduled
    }
    pub fn len(&self) -> usize {
        self.scheduled + self.background.len()
    }
}

/// Everything rtnetlab knows about one egress discipline (how a port orders its frames), in
/// that discipline's own file: its configuration checks, the service model the analysis uses
/// and the behaviour the simulator runs. [`registered`] is the only place that maps a
/// configuration to its discipline; nothing else matches on [`SchedulerConfig`], so a new
/// scheduler cannot be analysed or simulated as something else.
pub trait Discipline {
    /// The field's name of the discipline, as written in files (`drr`, `table`, ...).
    fn kind(&self) -> &'static str;
    /// Problems of the configuration on its own; `place` is where it is written
    /// (`schedulers.NAME`), `class_known` tells whether a class name is defined.
    fn check(&self, place: &str, class_known: &dyn Fn(&str) -> bool) -> Vec<ConfigProblem>;
    /// How the analysis splits a port running this discipline into FIFO queues and bounds each.
    fn service(&self) -> Service<'_>;
    /// The behaviour the simulator runs, over the network's classes (by class index), at a port
    /// whose link sends `link_rate` bits per second (what a fluid reference needs).
    fn behaviour(&self, classes: &[TrafficClass], link_rate: f64) -> Box<dyn Behaviour>;
    /// The behaviour at egress port `p` of `net`: [`Self::behaviour`] over the network's classes
    /// at the port's rate, unless the discipline keeps state per flow crossing the port.
    fn port_behaviour(&self, net: &crate::model::Network, p: crate::model::PortId) -> Box<dyn Behaviour> {
        self.behaviour(&net.classes, net.ports[p].rate)
    }
    /// Whether the discipline is one FIFO queue, first come first served (what FIFO-only rules
    /// and the simulator's own FIFO path need).
    fn single_fifo(&self) -> bool {
        false
    }
    /// Whether the discipline serves fixed priority levels and holds no frame back (FIFO, one
    /// level; static priority): a frame alone in its level then waits only for the link and the
    /// levels above, so a stream may cross the port without gates (`configure tsn`).
    fn holds_nothing_back(&self) -> bool {
        false
    }
    /// Problems of the configuration against the description's classes and their priorities
    /// (classes of one priority share a queue), beyond [`Self::check`]; `place` as there.
    fn check_classes(&self, _place: &str, _classes: &[TrafficClass]) -> Vec<ConfigProblem> {
        Vec::new()
    }
    /// Whether the discipline shapes at the link's rate (credit-based, time-aware), which a
    /// token-bucket shaper in front would break: validation refuses such an inner scheduler.
    fn shapes_at_link_rate(&self) -> bool {
        false
    }
    /// The gate control list the port runs, if any. What such a port does depends on when frames
    /// come, not only on when they come relative to each other (the worst-case search's hints).
    fn gates(&self) -> Option<Gates<'_>> {
        None
    }
    /// The classes the discipline serves time-triggered: their periodic flows keep their release
    /// offsets in every scenario ([`tas::time_triggered`]).
    fn time_triggered(&self) -> &[String] {
        &[]
    }
    /// How the Linux kernel's qdiscs (pfifo, bfifo, pfifo_fast, htb, tbf) run the discipline.
    fn kernel(&self) -> Kernel {
        Kernel::Inexpressible(format!(
            "scheduler {} cannot be expressed by this kernel's qdiscs (pfifo, bfifo, pfifo_fast, htb, \
             tbf only)",
            self.kind()
        ))
    }
}

/// A gate control list: it repeats every `cycle` from `base_time`, its entries in turn.
#[derive(Clone, Copy, Debug)]
pub struct Gates<'a> {
    pub cycle: crate::units::Duration,
    pub base_time: crate::units::Duration,
    pub entries: &'a [crate::model::GateEntry],
}

impl Gates<'_> {
    /// The cycle and the instants the entries start within it, ns (a cycle of at least 1 ns).
    pub fn starts_ns(&self) -> (i64, Vec<i64>) {
        let cycle = self.cycle.as_ns().max(1);
        let mut at = self.base_time.as_ns();
        let mut starts = Vec::with_capacity(self.entries.len());
        for e in self.entries {
            starts.push(at.rem_euclid(cycle));
            at += e.duration.as_ns();
        }
        (cycle, starts)
    }
}

/// How the Linux kernel's qdiscs express a discipline (the testbed's kernel mode, `export tc`).
#[derive(Clone, Debug, PartialEq)]
pub enum Kernel {
    /// One FIFO queue.
    OneQueue,
    /// One HTB priority per priority level of the classes (and one for frames without a class).
    PriorityLevels,
    /// A shaper no qdisc of this kernel runs: what it is as a refusal names it (`plan`) and as an
    /// exported script's refusal names it (`script`), and the qdisc the kernel lacks.
    NoShaper { plan: &'static str, script: &'static str, qdisc: &'static str },
    /// Not expressible by the kernel's qdiscs, and why.
    Inexpressible(String),
}

/// A shaper's service model of a port's levels: `levels(k, above)`, level k's [`LevelService`]
/// given what the levels above send ([`cbs::level_service`], [`tas::level_service`]).
pub type ShaperLevels<'a> = Box<dyn FnMut(usize, &Above) -> LevelService + 'a>;

/// One priority level of a shaped port (credit-based or time-aware), as its shaper's service
/// model reads it; the analysis builds it from the flows at the port.
pub struct Level<'a> {
    /// Its priority, and every class of the network at that priority.
    pub priority: Option<u32>,
    pub classes: Vec<&'a str>,
    /// The class of its flows ("" for none): a shaped class is a level of its own.
    pub class: &'a str,
    /// The long-term rate of its flows, bit/s, and its largest frame on the wire, bits.
    pub rate: f64,
    pub max_frame: f64,
}

/// A shaped port as its shaper's service model reads it: the link's rate (bit/s), the node's
/// latency (s), its levels highest first, and how reasons show a rate.
pub struct ShapedPort<'a> {
    pub link: f64,
    pub latency: f64,
    pub levels: Vec<Level<'a>>,
    pub rate_text: &'a dyn Fn(f64) -> String,
}

impl ShapedPort<'_> {
    /// The largest frame of each level, highest first.
    pub fn max_frames(&self) -> Vec<f64> {
        self.levels.iter().map(|l| l.max_frame).collect()
    }
}

/// What the levels above one level of a shaped port send, as the walk over the port's levels
/// (highest first, `analysis::network_bounds`'s walk) has bounded it.
pub struct Above {
    /// Their output as a token bucket (burst, rate) and as a curve.
    pub tb: (f64, f64),
    pub out: crate::curves::Curve,
    /// Each level's output curve, highest first, `None` for a level without a bound (a gated
    /// level counts only those whose gates may open inside its windows).
    pub levels: Vec<Option<crate::curves::Curve>>,
    /// Why a level above has no bound, if one has none (`tb` and `out` then leave it out).
    pub unbounded: Option<crate::curves::Unbounded>,
    /// Their arrival curves.
    pub arrivals: crate::curves::Curve,
    /// Whether a level above is shaped (bounds its own output, so may hold frames back).
    pub shaped: bool,
}

/// What a shaper gives one level: its service curve, and the level's output bound as a token
/// bucket (burst, rate) when the shaper bounds it itself (else the walk takes α(τ + D), the
/// arrivals advanced by the level's delay bound).
pub type LevelService = (Result<crate::curves::Curve, crate::curves::Unbounded>, Option<(f64, f64)>);

/// The worst-case service model of a discipline, as the analysis applies it to a port.
pub enum Service<'a> {
    /// One FIFO queue served at the port's rate (β_{C,T}).
    Fifo,
    /// One FIFO queue per priority level, non-preemptive: a level gets the port's service minus
    /// the higher levels' arrivals, after the largest lower-level frame.
    StaticPriority,
    /// One FIFO queue per class, each with the latency-rate guarantee of its share.
    PerClass(&'a dyn ClassShares),
    /// Credit-based shapers on the classes given an idle slope (by class name), over static
    /// priority between classes, every queue behind its gate when the port has a gate control
    /// list ([`cbs`]).
    CreditBased(&'a cbs::CbsDiscipline<'a>),
    /// One FIFO queue per priority level behind the gates of a time-aware shaper ([`tas`]).
    TimeAware(&'a tas::TasDiscipline<'a>),
    /// Interleaved regulators per input port and class in front of static priority ([`ats`]).
    Asynchronous(&'a ats::AtsDiscipline<'a>),
}

/// The worst-case model of a discipline that shares the link between classes.
pub trait ClassShares {
    /// What `class` is given (frames per round, quantum or weight; a table's total weight),
    /// `None` when the discipline gives it nothing.
    fn share(&self, class: &str) -> Option<f64>;
    /// The latency-rate guarantee of `present[k]` among the classes present at a port of rate
    /// `rate` (`names[j]` names `present[j]`; shares already filled in from [`Self::share`]).
    fn latency_rate(&self, k: usize, present: &[ClassAtPort], names: &[&str], rate: f64) -> LatencyRate;
    /// A warning when `class`, whose largest frame is `largest_frame_bits` (Ethernet frame bits,
    /// from `flow`), is served correctly but slowly (a quantum or entry below a frame).
    fn frame_warning(&self, _class: &str, _largest_frame_bits: f64, _flow: &str) -> Option<String> {
        None
    }
}

/// A problem a discipline finds in its own configuration.
#[derive(Clone, Debug, PartialEq)]
pub enum ConfigProblem {
    /// A rule broken at `place`.
    Error { place: String, message: String },
    /// `place` names a class the description does not define.
    UnknownClass { place: String, class: String },
}

/// What a scheduler configuration is: a discipline ordering frames, or a token-bucket shaper in
/// front of one (whose inner discipline validation resolves once, by name, for each port).
pub enum Registered<'a> {
    Discipline(Box<dyn Discipline + 'a>),
    Shaper(token_bucket::ShaperConfig<'a>),
}

/// The kinds of scheduler configuration, as written in files; every one is in [`registered`].
pub const KINDS: &[&str] = &[
    "fifo",
    "static_priority",
    "wrr",
    "drr",
    "d2drr",
    "wf2q",
    "scfq",
    "table",
    "token_bucket",
    "cbs",
    "tas",
    "ats",
];

/// The registry: the one match on a scheduler configuration.
pub fn registered(config: &SchedulerConfig) -> Registered<'_> {
    use crate::model::TableKind;
    use SchedulerConfig as S;
    Registered::Discipline(match config {
        S::Fifo => Box::new(fifo::FifoDiscipline),
        S::StaticPriority => Box::new(static_priority::StaticPriorityDiscipline),
        S::Wrr { weights } => Box::new(wrr::WrrDiscipline { weights }),
        S::Drr { quanta } => Box::new(drr::DrrDiscipline { quanta }),
        S::D2drr { base_quantum, factors } => {
            Box::new(d2drr::D2drrDiscipline { base_quantum: base_quantum.bits(), factors })
        }
        S::Wf2q { weights } => Box::new(wf2q::Wf2qDiscipline { weights }),
        S::Scfq { weights } => Box::new(scfq::ScfqDiscipline { weights }),
        S::Table { table_kind: TableKind::AsBasic, entries } => {
            Box::new(as_table::AsTableDiscipline { entries })
        }
        S::Table { table_kind: TableKind::IbaWeighted, entries } => {
            Box::new(iba_table::IbaTableDiscipline { entries })
        }
        S::Table { table_kind: TableKind::Dtable, entries } => Box::new(dtable::DtableDiscipline { entries }),
        S::Cbs { idle_slopes, gates } => Box::new(cbs::CbsDiscipline {
            idle_slopes,
            gates: gates.as_ref().map(|g| tas::TasDiscipline {
                cycle: g.cycle,
                base_time: g.base_time,
                entries: &g.entries,
                scheduled: &[],
                sync_error: Default::default(),
            }),
        }),
        S::Tas { cycle, base_time, entries, scheduled, sync_error } => Box::new(tas::TasDiscipline {
            cycle: *cycle,
            base_time: *base_time,
            entries,
            scheduled,
            sync_error: *sync_error,
        }),
        S::Ats { classes } => Box::new(ats::AtsDiscipline { classes }),
        S::TokenBucket { rate, burst, inner } => {
            return Registered::Shaper(token_bucket::ShaperConfig {
                rate: *rate,
                burst: *burst,
                inner: inner.as_deref(),
            })
        }
    })
}

/// The field's name of a configuration's kind, as written in files (`drr`, `token_bucket`, ...).
pub fn kind(config: &SchedulerConfig) -> &'static str {
    match registered(config) {
        Registered::Discipline(d) => d.kind(),
        Registered::Shaper(_) => token_bucket::ShaperConfig::KIND,
    }
}

/// Whether egress port `port` is one FIFO queue with no shaper in front of it.
pub fn plain_fifo(port: &crate::model::EgressPort) -> bool {
    port.shaper.is_none() && discipline(&port.discipline).is_some_and(|d| d.single_fifo())
}

/// The discipline of a configuration that is not a shaper (a port's resolved discipline).
pub fn discipline(config: &SchedulerConfig) -> Option<Box<dyn Discipline + '_>> {
    match registered(config) {
        Registered::Discipline(d) => Some(d),
        Registered::Shaper(_) => None,
    }
}

/// A scheduler name resolved: the configuration as written, the discipline that orders frames,
/// and the shaper in front of the link when the configuration is a token bucket.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub written: SchedulerConfig,
    pub discipline: SchedulerConfig,
    pub shaper: Option<Shaper>,
}

/// The names of the built-in schedulers, which descriptions cannot redefine.
pub const BUILT_IN: [&str; 2] = ["fifo", "static_priority"];

/// The one place where a scheduler name is read: a built-in name, else one of `named`; a
/// shaper's inner scheduler by the same rule (FIFO when it names none). `None` for an unknown
/// name or a shaper inside a shaper (validation reports both where they are written).
pub fn resolve(name: &str, named: &BTreeMap<String, SchedulerConfig>) -> Option<Resolved> {
    let lookup = |n: &str| -> Option<SchedulerConfig> {
        match n {
            "fifo" => Some(SchedulerConfig::Fifo),
            "static_priority" => Some(SchedulerConfig::StaticPriority),
            _ => named.get(n).cloned(),
        }
    };
    let written = lookup(name)?;
    let (inner, shaper) = match registered(&written) {
        Registered::Discipline(_) => (None, None),
        Registered::Shaper(s) => (
            Some(s.inner.unwrap_or("fifo").to_string()),
            Some(Shaper { rate: s.rate.bps(), burst: s.burst.bits() }),
        ),
    };
    let discipline = match inner {
        None => written.clone(),
        Some(i) => lookup(&i).filter(|c| discipline(c).is_some())?,
    };
    Some(Resolved { written, discipline, shaper })
}

impl Resolved {
    /// The behaviour the simulator runs on a link of `link_rate` bit/s: the discipline, behind
    /// the shaper if there is one.
    pub fn behaviour(&self, classes: &[TrafficClass], link_rate: f64) -> Box<dyn Behaviour> {
        let inner = discipline(&self.discipline)
            .expect("a resolved discipline is no shaper")
            .behaviour(classes, link_rate);
        shaped(inner, self.shaper)
    }
}

/// The behaviour the simulator runs at egress port `p` (its discipline and shaper, both resolved
/// at validation).
pub fn port_behaviour(net: &crate::model::Network, p: crate::model::PortId) -> Box<dyn Behaviour> {
    let port = &net.ports[p];
    let inner =
        discipline(&port.discipline).expect("a resolved discipline is no shaper").port_behaviour(net, p);
    shaped(inner, port.shaper)
}

fn shaped(inner: Box<dyn Behaviour>, shaper: Option<Shaper>) -> Box<dyn Behaviour> {
    match shaper {
        Some(s) => Box::new(token_bucket::TokenBucket::new(s.rate, s.burst, inner)),
        None => inner,
    }
}

/// Checks shared by per-class configurations: at least one class, each known, each value within
/// `rule` (its quantity kind's, units.rs: a count, a weight, a size).
pub(crate) fn check_class_values(
    place: &str,
    field: &str,
    values: impl Iterator<Item = (String, f64)>,
    rule: &dyn Fn(f64) -> Result<(), String>,
    class_known: &dyn Fn(&str) -> bool,
) -> Vec<ConfigProblem> {
    let mut out = Vec::new();
    let mut any = false;
    for (class, v) in values {
        any = true;
        let at = format!("{place}.{field}.{class}");
        if !class_known(&class) {
            out.push(ConfigProblem::UnknownClass { place: at.clone(), class });
        }
        if let Err(message) = rule(v) {
            out.push(ConfigProblem::Error { place: at, message });
        }
    }
    if !any {
        out.insert(
            0,
            ConfigProblem::Error {
                place: format!("{place}.{field}"),
                message: "must give a value for at least one class".into(),
            },
        );
    }
    out
}

/// [`check_class_values`] for weights by class (WF2Q, SCFQ): each within the weight rule.
pub(crate) fn check_weights(
    place: &str,
    weights: &BTreeMap<String, f64>,
    class_known: &dyn Fn(&str) -> bool,
) -> Vec<ConfigProblem> {
    check_class_values(
        place,
        "weights",
        weights.iter().map(|(c, &w)| (c.clone(), w)),
        &crate::units::weight_rule,
        class_known,
    )
}

/// The rule of a per-class size (a DRR quantum): positive.
pub(crate) fn positive_size(bits: f64) -> Result<(), String> {
    if bits > 0.0 {
        Ok(())
    } else {
        Err(format!("must be positive, got {bits}"))
    }
}

/// Per-class settings by class index, from a discipline's setting by class name.
pub(crate) fn by_class_index<T>(
    classes: &[TrafficClass],
    value: impl Fn(&str) -> Option<T>,
) -> Vec<Option<T>> {
    classes.iter().map(|c| value(&c.name)).collect()
}

/// Checks shared by the schedulers' tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Behaviour, Queued};

    /// A frame of `wire_bytes` on the wire (20 B of them preamble and gap).
    pub fn frame(frame: u32, class: u16, wire_bytes: u32) -> Queued {
        Queued { flow: u32::MAX, frame, class, wire_bits: wire_bytes * 8, frame_bits: (wire_bytes - 20) * 8 }
    }

    /// Four always-backlogged classes with weights 1 : 2 : 3 : 4 and unequal frame sizes receive
    /// wire bits in proportion to their weights, within `slack_frames` largest frames at any time.
    pub fn assert_long_run_shares(s: &mut dyn Behaviour, slack_frames: f64) {
        let w = [1.0, 2.0, 3.0, 4.0];
        let sizes = [84u32, 1538, 500, 1000];
        let mut id = 0;
        for c in 0..4u16 {
            for k in 0..4000u32 {
                s.enqueue(frame(id, c, sizes[((k + c as u32) % 4) as usize]), 0);
                id += 1;
            }
        }
        let mut got = [0f64; 4];
        let mut now = 0i64;
        for step in 0..6000 {
            // The link is 1 Gb/s: each frame takes its wire bits in ns.
            let q = s.dequeue(now).expect("backlogged");
            now += q.wire_bits as i64;
            got[q.class as usize] += q.wire_bits as f64;
            if step > 100 {
                let total: f64 = got.iter().sum();
                for c in 0..4 {
                    let ideal = total * w[c] / 10.0;
                    assert!((got[c] - ideal).abs() <= slack_frames * 1538.0 * 8.0, "class {c}: {got:?}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{SchedulerConfig as S, TableEntry, TableKind, TrafficClass};
    use crate::units::{DataRate, DataSize};
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;

    fn classes() -> Vec<TrafficClass> {
        ["a", "b", "c", "unlisted"]
            .iter()
            .enumerate()
            .map(|(p, n)| TrafficClass { name: n.to_string(), priority: p as u32 % 3, description: None })
            .collect()
    }

    fn by_class<T: Clone>(values: &[T]) -> BTreeMap<String, T> {
        ["a", "b", "c"].iter().map(|n| n.to_string()).zip(values.iter().cloned()).collect()
    }

    fn table(kind: TableKind, entries: &[(&str, f64)]) -> S {
        let entries = entries
            .iter()
            .map(|&(class, bytes)| TableEntry { class: class.into(), weight: DataSize::from_bytes(bytes) })
            .collect();
        S::Table { table_kind: kind, entries }
    }

    /// Every kind, with quanta and table weights both above and far below the frame sizes, and
    /// shapers around the built-in and a named inner scheduler.
    fn configs() -> Vec<(&'static str, S)> {
        let b = DataSize::from_bytes;
        vec![
            ("fifo", S::Fifo),
            ("static_priority", S::StaticPriority),
            ("wrr", S::Wrr { weights: by_class(&[3, 1, 2]) }),
            ("drr", S::Drr { quanta: by_class(&[b(1500.0), b(3000.0), b(1600.0)]) }),
            ("drr_small", S::Drr { quanta: by_class(&[b(64.0), b(100.0), b(1.0)]) }),
            ("d2drr", S::D2drr { base_quantum: b(1000.0), factors: by_class(&[6.0, 3.0, 1.0]) }),
            ("wf2q", S::Wf2q { weights: by_class(&[1.0, 2.0, 7.0]) }),
            ("scfq", S::Scfq { weights: by_class(&[1.0, 2.0, 7.0]) }),
            ("as_table", table(TableKind::AsBasic, &[("a", 1.0), ("b", 1.0), ("a", 1.0), ("c", 1.0)])),
            (
                "iba_table",
                table(TableKind::IbaWeighted, &[("a", 2176.0), ("b", 100.0), ("c", 64.0), ("b", 5000.0)]),
            ),
            (
                "dtable",
                table(TableKind::Dtable, &[("a", 1518.0), ("b", 1600.0), ("a", 2000.0), ("c", 3000.0)]),
            ),
            ("dtable_small", table(TableKind::Dtable, &[("a", 64.0), ("b", 100.0), ("c", 1.0), ("b", 7.0)])),
            ("tb_fifo", S::TokenBucket { rate: DataRate(1e6), burst: b(3000.0), inner: None }),
            (
                "tb_sp",
                S::TokenBucket {
                    rate: DataRate(5e6),
                    burst: b(1600.0),
                    inner: Some("static_priority".into()),
                },
            ),
            ("tb_drr", S::TokenBucket { rate: DataRate(2e6), burst: b(1000.0), inner: Some("named".into()) }),
            (
                "cbs",
                S::Cbs {
                    idle_slopes: by_class(&[DataRate(300e6), DataRate(100e6), DataRate(5e6)]),
                    gates: None,
                },
            ),
            (
                "tas",
                S::Tas {
                    cycle: crate::units::Duration::from_us(100.0),
                    base_time: crate::units::Duration::from_us(7.0),
                    entries: vec![
                        crate::model::GateEntry {
                            open: vec!["a".into()],
                            duration: crate::units::Duration::from_us(30.0),
                        },
                        crate::model::GateEntry {
                            open: vec!["b".into(), "c".into(), "unlisted".into()],
                            duration: crate::units::Duration::from_us(70.0),
                        },
                    ],
                    scheduled: Vec::new(),
                    sync_error: Default::default(),
                },
            ),
            (
                "cbs_one",
                S::Cbs {
                    idle_slopes: [("b".to_string(), DataRate(200e6))].into_iter().collect(),
                    gates: None,
                },
            ),
            (
                "cbs_tas",
                S::Cbs {
                    idle_slopes: by_class(&[DataRate(300e6), DataRate(100e6)]),
                    gates: Some(crate::model::GateSchedule {
                        cycle: crate::units::Duration::from_us(100.0),
                        base_time: crate::units::Duration::from_us(3.0),
                        entries: vec![
                            crate::model::GateEntry {
                                open: vec!["a".into(), "c".into()],
                                duration: crate::units::Duration::from_us(40.0),
                            },
                            crate::model::GateEntry {
                                open: vec!["b".into(), "c".into(), "unlisted".into()],
                                duration: crate::units::Duration::from_us(60.0),
                            },
                        ],
                    }),
                },
            ),
        ]
    }

    /// Random enqueue/dequeue interleavings (seeded ChaCha): every scheduler but the shaper is
    /// work-conserving (a frame goes whenever one waits), none loses or duplicates a frame, frames
    /// of one class keep their order, and a waiting shaper always names a later time.
    #[test]
    fn conserves_work_and_frames() {
        let classes = classes();
        let mut named = BTreeMap::new();
        named.insert("named".to_string(), S::Drr { quanta: by_class(&[DataSize::from_bytes(200.0); 3]) });
        for (name, config) in configs() {
            let shaper = matches!(config, S::TokenBucket { .. } | S::Cbs { .. } | S::Tas { .. });
            for seed in 0..20u64 {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
                let mut named = named.clone();
                named.insert("under_test".into(), config.clone());
                let mut s = resolve("under_test", &named).expect("resolves").behaviour(&classes, 1e9);
                let mut now = 0i64;
                let mut next_id = 0u32;
                let mut seen = vec![false; 4000];
                let mut last_of_class: BTreeMap<u16, u32> = BTreeMap::new();
                let mut waiting = 0usize;
                let mut take = |q: Queued, waiting: &mut usize| {
                    assert!(!std::mem::replace(&mut seen[q.frame as usize], true), "{name}: {q:?} twice");
                    if let Some(prev) = last_of_class.insert(q.class, q.frame) {
                        assert!(prev < q.frame, "{name}: class {} out of order", q.class);
                    }
                    *waiting -= 1;
                };
                for _ in 0..3000 {
                    now += rng.gen_range(0..20_000);
                    if rng.gen_bool(0.55) {
                        let class = match rng.gen_range(0..100) {
                            0 => u16::MAX,
                            1..=3 => 3,
                            k => (k % 3) as u16,
                        };
                        let bytes = rng.gen_range(64..=1518u32);
                        let q = Queued {
                            flow: u32::MAX,
                            frame: next_id,
                            class,
                            wire_bits: (bytes + 20) * 8,
                            frame_bits: bytes * 8,
                        };
                        s.enqueue(q, now);
                        next_id += 1;
                        waiting += 1;
                    } else {
                        match s.dequeue(now) {
                            Some(q) => take(q, &mut waiting),
                            None if shaper && waiting > 0 => {
                                assert!(s.next_ready(now).is_some_and(|t| t > now), "{name}: stuck")
                            }
                            None => assert_eq!(waiting, 0, "{name}: idles with frames waiting"),
                        }
                    }
                    assert_eq!(s.len(), waiting, "{name}: len");
                }
                while waiting > 0 {
                    match s.dequeue(now) {
                        Some(q) => take(q, &mut waiting),
                        None => {
                            assert!(shaper, "{name}: idles with frames waiting");
                            let t = s.next_ready(now).expect("frames wait");
                            assert!(t > now, "{name}: no progress");
                            now = t;
                        }
                    }
                }
                assert!(s.is_empty() && s.dequeue(now).is_none());
                assert!(seen[..next_id as usize].iter().all(|&x| x), "{name}: lost a frame");
            }
        }
    }

    /// Resolution refuses a shaper inside a shaper and an unknown inner scheduler, reads the
    /// built-in names as the built-ins, and gives a shaper's inner discipline with the shaper.
    #[test]
    fn resolution() {
        let classes = classes();
        let mut named = BTreeMap::new();
        let tb = |inner: Option<&str>| S::TokenBucket {
            rate: DataRate(1e6),
            burst: DataSize(1e4),
            inner: inner.map(Into::into),
        };
        named.insert("tb".to_string(), tb(Some("tb2")));
        named.insert("tb2".to_string(), tb(None));
        named.insert("missing".to_string(), tb(Some("x")));
        named.insert("sp".to_string(), tb(Some("static_priority")));
        named.insert("wrr".to_string(), S::Wrr { weights: by_class(&[1, 2, 3]) });
        named.insert("shaped_wrr".to_string(), tb(Some("wrr")));
        assert!(resolve("tb", &named).is_none(), "a shaper inside a shaper");
        assert!(resolve("missing", &named).is_none(), "an unknown inner scheduler");
        assert!(resolve("nobody", &named).is_none());
        let plain = resolve("tb2", &named).unwrap();
        assert!(
            matches!(plain.discipline, S::Fifo) && plain.shaper == Some(Shaper { rate: 1e6, burst: 1e4 })
        );
        assert!(matches!(resolve("sp", &named).unwrap().discipline, S::StaticPriority));
        assert!(matches!(resolve("shaped_wrr", &named).unwrap().discipline, S::Wrr { .. }));
        assert!(matches!(resolve("fifo", &named).unwrap().discipline, S::Fifo));
        // Tables build even when no entry names a known class (every frame then goes to the
        // background FIFO).
        for kind in [TableKind::AsBasic, TableKind::IbaWeighted, TableKind::Dtable] {
            let config = table(kind, &[("nobody", 100.0)]);
            assert_eq!(discipline(&config).unwrap().behaviour(&classes, 1e9).len(), 0);
        }
    }

    /// The registry covers every kind of configuration the description format has: the kinds
    /// are read from the format's JSON Schema, so a kind added to the format and not to
    /// [`KINDS`] (and so, to [`registered`]) fails here.
    #[test]
    fn every_kind_of_the_format_is_registered() {
        let schema = serde_json::to_value(schemars::schema_for!(SchedulerConfig)).unwrap();
        let mut kinds: Vec<String> = schema["oneOf"]
            .as_array()
            .expect("one schema per kind")
            .iter()
            .flat_map(|v| v["properties"]["kind"]["enum"].as_array().cloned().unwrap_or_default())
            .map(|k| k.as_str().unwrap().to_string())
            .collect();
        kinds.sort();
        let mut registered_kinds: Vec<String> = KINDS.iter().map(|k| k.to_string()).collect();
        registered_kinds.sort();
        assert_eq!(kinds, registered_kinds);
        // Each kind's name is the one its configuration is written with.
        for (_, config) in configs() {
            let written = serde_json::to_value(&config).unwrap();
            assert_eq!(kind(&config), written["kind"].as_str().unwrap());
        }
    }
}
