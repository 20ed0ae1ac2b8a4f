//! Time-aware shaper (IEEE 802.1Q-2018 §8.6.8.4, formerly 802.1Qbv): a gate per priority level
//! opened and closed by a cyclic gate control list, non-preemptive static priority among the
//! levels whose gates are open.
//!
//! **Behaviour.** The list's entries (the classes whose gates are open, a duration) repeat every
//! `cycle`, from `base_time` (the schedule is periodic at every time, before the base time too).
//! A frame may start only while its gate is open and only if its last bit leaves before the gate
//! closes (the guard band, length-aware: a short frame may start later than a long one); the
//! highest open level whose head frame fits goes first.
//!
//! **Service model.** A level's gate is open in windows [o, c) of each cycle. While the level is
//! backlogged, from o + B (B the largest frame, over C, of another level whose gate is open across
//! o: only such a frame may have started before o and still be on the wire, since a frame ends
//! before its gate closes) to c − L/C (L the level's largest frame: past it the head may not fit), no lower
//! frame starts and the link sends the level or higher levels: in any interval of length τ the
//! link has at least C·S(τ) of such time, S the least supply of these usable intervals over any
//! start. S is bounded below by the rate-latency curve of rate ρ = Σ usable / cycle and latency
//! θ = the longest time S lags behind ρ·t (the periodic resource's linear supply bound, Shin &
//! Lee, "Periodic resource model for compositional real-time guarantees", RTSS 2003; for TSN
//! gates, Zhao, Pop & Craciunas, "Worst-case latency analysis for IEEE 802.1Qbv time sensitive
//! networks using network calculus", IEEE Access 2018). The level's service is then
//! [C·ρ·(t − θ − T) − Σ higher levels' output − L_other]^+, the higher levels' output bounded by
//! their arrival curves advanced by their delay bounds (only the levels whose gates open inside
//! one of the level's windows: the others' frames end before their gates close, so they occupy
//! only time the supply does not count), L_other one frame in transmission when the
//! backlog starts, of another level whose gate is open inside one of the level's windows (the
//! others' frames occupy only time outside the windows, which the supply does not count).

use super::{Above, Behaviour, ConfigProblem, LevelService, Queued, ShapedPort};
use crate::curves::{Curve, Unbounded};
use crate::model::{FlowId, GateEntry, Network, NodeKind, PortId, Switching, Traffic, TrafficClass};
use std::collections::VecDeque;

/// The time-aware shaper's configuration as written (`kind: tas`).
pub struct TasDiscipline<'a> {
    pub cycle: crate::units::Duration,
    pub base_time: crate::units::Duration,
    pub entries: &'a [GateEntry],
    /// Time-triggered classes ([`time_triggered`]).
    pub scheduled: &'a [String],
    /// Clock synchronisation precision: scheduled windows are widened by it on both sides.
    pub sync_error: crate::units::Duration,
}

/// A gate control list in integer nanoseconds: per entry its start in the cycle, and which
/// levels it opens.
#[derive(Clone, Debug)]
pub struct Gcl {
    pub cycle_ns: i64,
    pub base_ns: i64,
    /// Start of each entry in the cycle, and the cycle's length after the last.
    pub starts: Vec<i64>,
    /// `open[e][level]`.
    pub open: Vec<Vec<bool>>,
}

impl Gcl {
    /// The list over `levels` (each a set of class names), from the entries as written.
    pub fn new(cycle_ns: i64, base_ns: i64, entries: &[GateEntry], levels: &[Vec<&str>]) -> Gcl {
        let mut starts = Vec::with_capacity(entries.len() + 1);
        let mut t = 0;
        for e in entries {
            starts.push(t);
            t += e.duration.as_ns();
        }
        starts.push(cycle_ns);
        let open = entries
            .iter()
            .map(|e| levels.iter().map(|names| names.iter().any(|n| e.open.iter().any(|o| o == n))).collect())
            .collect();
        Gcl { cycle_ns: cycle_ns.max(1), base_ns, starts, open }
    }

    /// Start of the cycle holding `t`, and the entry in force at `t`.
    fn locate(&self, t: i64) -> (i64, usize) {
        let phase = (t - self.base_ns).rem_euclid(self.cycle_ns);
        let cycle_start = t - phase;
        let e = self.starts[..self.starts.len() - 1].partition_point(|&s| s <= phase).saturating_sub(1);
        (cycle_start, e)
    }

    /// When the gate of `level`, open at `t`, closes (`i64::MAX` if it never does); `None` when
    /// it is closed at `t`.
    pub fn open_until(&self, level: usize, t: i64) -> Option<i64> {
        let n = self.open.len();
        let (mut cycle_start, mut e) = self.locate(t);
        if !self.open[e][level] {
            return None;
        }
        for _ in 0..=n {
            e += 1;
            if e == n {
                e = 0;
                cycle_start += self.cycle_ns;
            }
            if !self.open[e][level] {
                return Some(cycle_start + self.starts[e]);
            }
        }
        Some(i64::MAX)
    }

    /// The open windows (start, end) of the gate of `level`, in ns from a cycle's start (an end
    /// past the cycle wraps into the next), merged across consecutive entries; `None` when the
    /// gate never closes.
    pub fn windows_of(&self, level: usize) -> Option<Vec<(i64, i64)>> {
        let n = self.open.len();
        if self.open.iter().all(|o| o[level]) {
            return None;
        }
        let mut out = Vec::new();
        for e in 0..n {
            let before = self.open[(e + n - 1) % n][level];
            if self.open[e][level] && !before {
                let end = self.open_until_from_zero(level, self.starts[e]).expect("open");
                out.push((self.starts[e], end));
            }
        }
        Some(out)
    }

    /// Whether the gate of `level` stays closed over [s, e).
    pub fn closed_throughout(&self, level: usize, s: i64, e: i64) -> bool {
        self.open_until(level, s).is_none()
            && self.boundaries_after(s).take_while(|&b| b < e).all(|b| self.open_until(level, b).is_none())
    }

    /// The first instant after `t` at which the gate of `level` opens (within two cycles).
    pub fn next_opening(&self, level: usize, t: i64) -> Option<i64> {
        self.boundaries_after(t).find(|&b| self.open_until(level, b).is_some())
    }

    /// [`Self::open_until`] with the cycle starting at 0 (times within the first cycle).
    fn open_until_from_zero(&self, level: usize, t: i64) -> Option<i64> {
        let shifted = Gcl { base_ns: 0, ..self.clone() };
        shifted.open_until(level, t)
    }

    /// The entry boundaries after `t` over the next two cycles, in order.
    fn boundaries_after(&self, t: i64) -> impl Iterator<Item = i64> + '_ {
        let (cycle_start, _) = self.locate(t);
        (0..3i64)
            .flat_map(move |k| {
                self.starts[..self.starts.len() - 1].iter().map(move |&s| cycle_start + k * self.cycle_ns + s)
            })
            .filter(move |&b| b > t)
    }
}

/// The time-aware shaper's behaviour: one FIFO per priority level behind its gate.
pub struct TimeAware {
    gcl: Gcl,
    levels: Vec<VecDeque<Queued>>,
    level_of_class: Vec<usize>,
    /// Link rate, bits per ns.
    link: f64,
    len: usize,
}

impl TimeAware {
    pub fn new(classes: &[TrafficClass], d: &TasDiscipline<'_>, link_rate: f64) -> Self {
        let mut prios: Vec<u32> = classes.iter().map(|c| c.priority).collect();
        prios.sort_unstable();
        prios.dedup();
        let level_of_class: Vec<usize> =
            classes.iter().map(|c| prios.binary_search(&c.priority).expect("listed")).collect();
        let names: Vec<Vec<&str>> = (0..prios.len())
            .map(|l| {
                classes
                    .iter()
                    .zip(&level_of_class)
                    .filter(|(_, &k)| k == l)
                    .map(|(c, _)| c.name.as_str())
                    .collect()
            })
            .collect();
        let mut gcl = Gcl::new(d.cycle.as_ns(), d.base_time.as_ns(), d.entries, &names);
        // Frames without a class (validation refuses them at a gated port) pass an open gate.
        gcl.open.iter_mut().for_each(|e| e.push(true));
        TimeAware {
            gcl,
            levels: vec![VecDeque::new(); prios.len() + 1],
            level_of_class,
            link: link_rate * 1e-9,
            len: 0,
        }
    }

    /// Whether the head of `level`, of `bits` on the wire, may start at `t`: its gate open and
    /// its last bit out before the gate closes.
    fn fits(&self, level: usize, bits: u32, t: i64) -> bool {
        self.gcl
            .open_until(level, t)
            .is_some_and(|end| end == i64::MAX || t as f64 + bits as f64 / self.link <= end as f64)
    }
}

impl Behaviour for TimeAware {
    fn enqueue(&mut self, item: Queued, _now_ns: i64) {
        let level = self.level_of_class.get(item.class as usize).copied().unwrap_or(self.levels.len() - 1);
        self.levels[level].push_back(item);
        self.len += 1;
    }

    fn dequeue(&mut self, now_ns: i64) -> Option<Queued> {
        let l = (0..self.levels.len())
            .find(|&l| self.levels[l].front().is_some_and(|q| self.fits(l, q.wire_bits, now_ns)))?;
        self.len -= 1;
        self.levels[l].pop_front()
    }

    /// The first entry boundary at which a waiting head frame fits its gate's window.
    fn next_ready(&self, now_ns: i64) -> Option<i64> {
        self.gcl.boundaries_after(now_ns).find(|&b| {
            self.levels
                .iter()
                .enumerate()
                .any(|(l, q)| q.front().is_some_and(|q| self.fits(l, q.wire_bits, b)))
        })
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// Classes sharing a priority share a queue, and so its gate: each entry of `entries` (written at
/// `at`) opens all of them or none.
pub(super) fn check_shared_gates(
    at: &str,
    entries: &[GateEntry],
    classes: &[TrafficClass],
) -> Vec<ConfigProblem> {
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        for c in classes {
            let opened = e.open.contains(&c.name);
            if let Some(o) = classes
                .iter()
                .find(|o| o.priority == c.priority && o.name != c.name && e.open.contains(&o.name) != opened)
            {
                if opened {
                    out.push(ConfigProblem::Error {
                        place: format!("{at}[{i}].open"),
                        message: format!(
                            "opens class '{}' but not class '{}' of the same priority {}; classes of one \
                             priority share a queue and its gate",
                            c.name, o.name, c.priority
                        ),
                    });
                }
            }
        }
    }
    out
}

impl super::Discipline for TasDiscipline<'_> {
    fn kind(&self) -> &'static str {
        "tas"
    }
    fn check_classes(&self, place: &str, classes: &[TrafficClass]) -> Vec<ConfigProblem> {
        check_shared_gates(&format!("{place}.entries"), self.entries, classes)
    }
    fn shapes_at_link_rate(&self) -> bool {
        true
    }
    fn gates(&self) -> Option<super::Gates<'_>> {
        Some(super::Gates { cycle: self.cycle, base_time: self.base_time, entries: self.entries })
    }
    fn time_triggered(&self) -> &[String] {
        self.scheduled
    }
    fn kernel(&self) -> super::Kernel {
        super::Kernel::NoShaper {
            plan: "a time-aware (802.1Qbv) shaper",
            script: "a time-aware shaper (802.1Qbv)",
            qdisc: "cbs or taprio qdisc",
        }
    }
    fn check(&self, place: &str, class_known: &dyn Fn(&str) -> bool) -> Vec<ConfigProblem> {
        let mut out = Vec::new();
        let err = |place: String, message: String| ConfigProblem::Error { place, message };
        // NaN fails both rules.
        let positive = |x: f64| x > 0.0;
        let not_negative = |x: f64| x >= 0.0;
        if !positive(self.cycle.secs()) && !self.entries.is_empty() {
            out.push(err(format!("{place}.cycle"), format!("must be positive, got {}", self.cycle)));
        }
        if !not_negative(self.base_time.secs()) {
            out.push(err(
                format!("{place}.base_time"),
                format!("must not be negative, got {}", self.base_time),
            ));
        }
        if self.entries.is_empty() {
            out.push(err(
                format!("{place}.entries"),
                "no gate control list: give `cycle` and `entries`, or run `rtnetlab configure tsn` to \
                 synthesise them"
                    .into(),
            ));
        }
        if !not_negative(self.sync_error.secs()) {
            out.push(err(
                format!("{place}.sync_error"),
                format!("must not be negative, got {}", self.sync_error),
            ));
        }
        for (i, c) in self.scheduled.iter().enumerate() {
            if !class_known(c) {
                out.push(ConfigProblem::UnknownClass {
                    place: format!("{place}.scheduled[{i}]"),
                    class: c.clone(),
                });
            } else if self.scheduled[..i].contains(c) {
                out.push(err(format!("{place}.scheduled[{i}]"), format!("class '{c}' is listed twice")));
            }
        }
        let mut total = 0;
        for (i, e) in self.entries.iter().enumerate() {
            if !positive(e.duration.secs()) || e.duration.as_ns() <= 0 {
                out.push(err(
                    format!("{place}.entries[{i}].duration"),
                    format!("must be at least 1ns, got {}", e.duration),
                ));
            }
            total += e.duration.as_ns();
            for c in &e.open {
                if !class_known(c) {
                    out.push(ConfigProblem::UnknownClass {
                        place: format!("{place}.entries[{i}].open"),
                        class: c.clone(),
                    });
                }
            }
        }
        if !self.entries.is_empty() && self.cycle.secs() > 0.0 && total != self.cycle.as_ns() {
            out.push(err(
                format!("{place}.entries"),
                format!(
                    "durations sum to {}, not the cycle {}",
                    crate::units::Duration::from_secs(total as f64 * 1e-9),
                    self.cycle
                ),
            ));
        }
        out
    }
    fn service(&self) -> super::Service<'_> {
        super::Service::TimeAware(self)
    }
    fn behaviour(&self, classes: &[TrafficClass], link_rate: f64) -> Box<dyn Behaviour> {
        Box::new(TimeAware::new(classes, self, link_rate))
    }
}

impl TasDiscipline<'_> {
    /// The open windows (start, end) of the gate of a level holding `classes`, in seconds within
    /// one cycle (an end past the cycle wraps into the next); `None` when the gate never closes.
    pub fn windows(&self, classes: &[&str]) -> Option<Vec<(f64, f64)>> {
        let gcl = Gcl::new(self.cycle.as_ns(), 0, self.entries, &[classes.to_vec()]);
        gcl.windows_of(0).map(|w| w.iter().map(|&(o, c)| (o as f64 * 1e-9, c as f64 * 1e-9)).collect())
    }

    /// Whether the gate of a level holding `classes` is open both just before and at time `t` of
    /// the cycle (seconds): only then may one of its frames be on the wire at `t` (a frame ends
    /// before its gate closes).
    pub fn open_across(&self, classes: &[&str], t: f64) -> bool {
        let gcl = Gcl::new(self.cycle.as_ns(), 0, self.entries, &[classes.to_vec()]);
        let t = (t * 1e9).round() as i64;
        gcl.open_until(0, t - 1).is_some() && gcl.open_until(0, t).is_some()
    }

    /// Whether the gate of a level holding `classes` is open at some time in [a, b) of the cycle
    /// (seconds; `b` may pass the cycle's end).
    pub fn open_within(&self, classes: &[&str], a: f64, b: f64) -> bool {
        let gcl = Gcl::new(self.cycle.as_ns(), 0, self.entries, &[classes.to_vec()]);
        let (a, b) = ((a * 1e9).round() as i64, (b * 1e9).round() as i64);
        let open = std::iter::once(a)
            .chain(gcl.boundaries_after(a).take_while(|&t| t < b))
            .any(|t| gcl.open_until(0, t).is_some());
        open
    }
}

/// Greatest common divisor of two positive periods (ns).
pub fn gcd(mut a: i64, mut b: i64) -> i64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

/// Whether two periodic windows never overlap: windows of `len_f` from `start_f` every `t_f`,
/// and of `len_g` from `start_g` every `t_g` (ns). Over all instances the difference of two
/// starts takes every value ≡ start_g − start_f modulo gcd(t_f, t_g), so they are disjoint
/// exactly when that residue x satisfies len_f ≤ x ≤ G − len_g (Korst, Aarts, Lenstra &
/// Wessels, "Periodic multiprocessor scheduling", PARLE 1991).
pub fn periodic_disjoint(
    (start_f, len_f, t_f): (i64, i64, i64),
    (start_g, len_g, t_g): (i64, i64, i64),
) -> bool {
    let g = gcd(t_f, t_g);
    let x = (start_g - start_f).rem_euclid(g);
    x >= len_f && x + len_g <= g
}

/// One time-triggered flow's passage through a port when no frame waits (no-wait): its first
/// frame's arrival in the port's queue, and how long it occupies the link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Passage {
    pub port: PortId,
    /// Arrival in the queue (ns from time 0, the node's technological latency included).
    pub arrival_ns: i64,
    /// Transmission time rounded up (ns): the window the frame needs.
    pub busy_ns: i64,
    /// Exact transmission time (s).
    pub tx: f64,
}

/// A flow that can be time-triggered: periodic, of one frame size, on one plane, through
/// store-and-forward nodes; its no-wait timetable from time `offset_ns` (the release of its
/// first frame). Arrivals follow the simulator's arithmetic exactly (a frame's end on the link
/// in fixed point rounded down, propagation and latencies rounded to ns), so that a frame sent
/// at once reaches the next port at the instant computed here. Or why the flow cannot be.
pub fn timetable(net: &Network, f: FlowId, offset_ns: i64) -> Result<(i64, i64, Vec<Passage>), String> {
    let flow = &net.flows[f];
    let Traffic::Periodic { period, size, min_size, jitter, .. } = &flow.traffic else {
        return Err(format!("flow '{}' is not periodic (a time-triggered flow needs a period)", flow.name));
    };
    if min_size.is_some_and(|m| m.bits() != size.bits()) {
        return Err(format!(
            "flow '{}' has frames of varying size (min_size); a time-triggered flow has one",
            flow.name
        ));
    }
    if flow.planes.len() != 1 {
        return Err(format!(
            "flow '{}' is sent on several planes; a time-triggered flow uses one",
            flow.name
        ));
    }
    let ns = |s: f64| (s * 1e9).round() as i64;
    let bits = flow.max_frame_wire.round() as u128;
    let mut out: Vec<Passage> = Vec::new();
    for route in &flow.routes {
        let mut at = offset_ns + ns(net.nodes[flow.source].technological_latency);
        for &p in &route.ports {
            let port = &net.ports[p];
            let tx_floor = ((crate::sim::ns_per_bit(port.rate) * bits) >> 64) as i64;
            let tx = flow.max_frame_wire / port.rate;
            if !out.iter().any(|q| q.port == p) {
                out.push(Passage { port: p, arrival_ns: at, busy_ns: (tx * 1e9).ceil() as i64, tx });
            }
            let peer = &net.nodes[port.peer];
            if peer.switching == Switching::CutThrough && peer.kind == NodeKind::Switch {
                return Err(format!(
                    "flow '{}' crosses the cut-through switch {}; time-triggered flows need store and forward",
                    flow.name, peer.name
                ));
            }
            at += tx_floor + ns(port.propagation_delay) + ns(peer.technological_latency);
        }
    }
    Ok((period.as_ns(), jitter.as_ns(), out))
}

/// The levels of a time-aware port (distinct priorities, highest first) and their class names.
fn levels(classes: &[TrafficClass]) -> (Vec<u32>, Vec<Vec<&str>>) {
    let mut prios: Vec<u32> = classes.iter().map(|c| c.priority).collect();
    prios.sort_unstable();
    prios.dedup();
    let names = prios
        .iter()
        .map(|&p| classes.iter().filter(|c| c.priority == p).map(|c| c.name.as_str()).collect())
        .collect();
    (prios, names)
}

/// The time-triggered flows' delays: per (flow, port) of a flow whose every frame is sent either
/// on arrival or at the opening of its gate's next window, with no other frame of its queue ever
/// beside it, the delay there (s: the node's technological latency, the longest hold and the
/// frame's transmission), and for the other flows of `scheduled` classes why not.
#[derive(Debug, Default)]
pub struct TimeTriggered {
    pub delay: std::collections::HashMap<(FlowId, PortId), f64>,
    /// Per (flow, port), the longest a frame may wait there for its gate (ns; 0 under no-wait).
    pub wait: std::collections::HashMap<(FlowId, PortId), i64>,
    pub refused: Vec<(FlowId, String)>,
}

/// One time-triggered flow at one port, as its gates make it pass ([`held_timetable`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Held {
    pub port: PortId,
    /// Earliest and latest true arrival in the queue (ns, first frame).
    pub arrival: (i64, i64),
    /// The interval its frame may be in the queue or on the wire, on the port's clock: from the
    /// earliest arrival (less ε) to the latest end of its transmission (start, length).
    pub occupancy: (i64, i64),
    /// The longest a frame may wait for its gate here (ns).
    pub wait_ns: i64,
    pub tx: f64,
}

/// A flow's passage through its route when each time-aware port sends its frame either at once
/// (its gate open over the whole arrival window widened by ε) or, its gate closed when the frame
/// may first arrive, at the gate's next opening s: the frame leaves between s − ε and s + ε (the
/// port's clock against the true time), and its transmission, from s or its arrival if later,
/// must end before the gate closes with every other level's gate closed meanwhile. Instances of
/// the flow that meet the gate list at different phases are combined (the earliest and latest
/// of each). `gate(p)`: the port's gate list and the flow's level there, for a time-aware port.
/// Or why the flow cannot pass so.
pub fn held_timetable(
    net: &Network,
    f: FlowId,
    offset_ns: i64,
    eps: i64,
    gate: &dyn Fn(PortId) -> Option<(Gcl, usize, usize)>,
) -> Result<(i64, Vec<Held>), String> {
    let (period, jitter, pass) = timetable(net, f, offset_ns)?;
    let flow = &net.flows[f];
    let ns = |s: f64| (s * 1e9).round() as i64;
    let bits = flow.max_frame_wire.round() as u128;
    let mut out: Vec<Held> = Vec::new();
    for route in &flow.routes {
        let first = pass.iter().find(|q| q.port == route.ports[0]).expect("timetabled");
        let mut at = (first.arrival_ns, first.arrival_ns + jitter);
        for &p in &route.ports {
            let q = pass.iter().find(|q| q.port == p).expect("timetabled");
            let label = net.port_label(p);
            let (dep, held) = match gate(p) {
                None => (
                    at,
                    Held {
                        port: p,
                        arrival: at,
                        occupancy: (at.0 - eps, at.1 - at.0 + 2 * eps + q.busy_ns),
                        wait_ns: 0,
                        tx: q.tx,
                    },
                ),
                Some((gcl, level, levels)) => {
                    let n = gcd(period, gcl.cycle_ns);
                    let instances = gcl.cycle_ns / n;
                    if instances > MAX_INSTANCES {
                        return Err(format!(
                            "{label}: the cycle and the flow's period meet only every {instances} frames"
                        ));
                    }
                    let (mut dep_lo, mut dep_hi, mut occ_end, mut wait) = (i64::MAX, i64::MIN, i64::MIN, 0);
                    for k in 0..instances {
                        let (lo, hi) = (at.0 + k * period, at.1 + k * period);
                        let (start, d) = match gcl.open_until(level, lo - eps) {
                            Some(_) => (lo - eps, (lo, hi)),
                            None => {
                                let Some(s) = gcl.next_opening(level, lo - eps) else {
                                    return Err(format!(
                                        "{label}: the gate of flow '{}' never opens",
                                        flow.name
                                    ));
                                };
                                (s, ((lo).max(s - eps), hi.max(s + eps)))
                            }
                        };
                        // The transmission on the port's clock: from its start to the latest end.
                        let end = (hi + eps).max(start) + q.busy_ns;
                        let fits = gcl.open_until(level, start).is_some_and(|e| e >= end)
                            && (0..levels)
                                .filter(|&j| j != level)
                                .all(|j| gcl.closed_throughout(j, start, end));
                        if !fits {
                            return Err(format!(
                                "{label}: a frame of flow '{}' may find its gate closed or another gate open",
                                flow.name
                            ));
                        }
                        wait = wait.max(d.1 - hi).max((start + eps - lo).max(0));
                        dep_lo = dep_lo.min(d.0 - k * period);
                        dep_hi = dep_hi.max(d.1 - k * period);
                        occ_end = occ_end.max(end - k * period);
                    }
                    let occupancy = (at.0 - eps, occ_end - (at.0 - eps));
                    ((dep_lo, dep_hi), Held { port: p, arrival: at, occupancy, wait_ns: wait, tx: q.tx })
                }
            };
            if !out.iter().any(|h| h.port == p) {
                out.push(held);
            }
            let port = &net.ports[p];
            let peer = &net.nodes[port.peer];
            let tx_floor = ((crate::sim::ns_per_bit(port.rate) * bits) >> 64) as i64;
            let hop = tx_floor + ns(port.propagation_delay) + ns(peer.technological_latency);
            at = (dep.0 + hop, dep.1 + hop);
        }
    }
    Ok((period, out))
}

/// **The time-triggered rule.** A flow of a class a time-aware port lists as `scheduled` is
/// released at `offset` + k·period (within its `jitter`). If at every port of its route its frame
/// finds, over its whole arrival window widened by the clock error ε on both sides:
///
/// * at a time-aware port, either its gate open until the frame's last bit (no-wait), or its gate
///   closed when it may first arrive and, from the gate's next opening, open until its last bit;
///   and every other level's gate closed while it may be on the wire (their frames end before
///   their gates close, so none is on the wire or may start) ([`held_timetable`]),
/// * at a port with no shaper (FIFO, static priority), only time-triggered flows,
/// * no other frame of its queue present while it may be (from its earliest arrival to its
///   latest end, every instance, [`periodic_disjoint`]: frame isolation),
///
/// then its frames leave each port after the node's latency, at most the hold computed, and
/// their own transmission; with no hold anywhere (no-wait), at the instant [`timetable`]
/// computes. Flows that fail anywhere are removed and the ports re-checked until none fails (a
/// frame that may wait for another makes its queue's other frames uncertain). The others keep
/// the gated service model of this module.
pub fn time_triggered(net: &Network) -> TimeTriggered {
    use crate::model::SchedulerConfig as S;
    let mut out = TimeTriggered::default();
    let scheduled_class: Vec<bool> = net
        .classes
        .iter()
        .map(|c| {
            net.ports
                .iter()
                .any(|p| matches!(&p.discipline, S::Tas { scheduled, .. } if scheduled.contains(&c.name)))
        })
        .collect();
    if !scheduled_class.contains(&true) {
        return out;
    }
    let eps = net
        .ports
        .iter()
        .filter_map(|p| match &p.discipline {
            S::Tas { sync_error, .. } => Some(sync_error.as_ns()),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let (prios, names) = levels(&net.classes);
    let gates: Vec<Option<Gcl>> = net
        .ports
        .iter()
        .map(|port| match &port.discipline {
            S::Tas { cycle, base_time, entries, .. } => {
                Some(Gcl::new(cycle.as_ns(), base_time.as_ns(), entries, &names))
            }
            _ => None,
        })
        .collect();
    // Per flow: period and passages.
    let mut table: Vec<Option<(i64, Vec<Held>)>> = vec![None; net.flows.len()];
    for (f, flow) in net.flows.iter().enumerate() {
        if !flow.class.is_some_and(|k| scheduled_class[k]) {
            continue;
        }
        let offset = match &flow.traffic {
            Traffic::Periodic { offset, .. } => offset.as_ns(),
            _ => 0,
        };
        let level = flow.class.map(|k| prios.binary_search(&net.classes[k].priority).expect("listed"));
        let gate =
            |p: PortId| -> Option<(Gcl, usize, usize)> { Some((gates[p].clone()?, level?, names.len())) };
        match held_timetable(net, f, offset, eps, &gate) {
            Ok(t) => table[f] = Some(t),
            Err(why) => out.refused.push((f, why)),
        }
    }
    let mut alive: Vec<bool> = table.iter().map(Option::is_some).collect();
    loop {
        let mut failed: Vec<(FlowId, String)> = Vec::new();
        for p in 0..net.ports.len() {
            if net.port_flows[p].iter().any(|&f| alive[f]) {
                failed.extend(check_port(net, p, &table, &alive));
            }
        }
        let mut changed = false;
        for (f, why) in failed {
            if alive[f] {
                alive[f] = false;
                out.refused.push((f, why));
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    for (f, entry) in table.iter().enumerate() {
        let Some((_, held)) = entry.as_ref().filter(|_| alive[f]) else { continue };
        for h in held {
            let latency = net.nodes[net.ports[h.port].node].technological_latency;
            out.delay.insert((f, h.port), latency + h.wait_ns as f64 * 1e-9 + h.tx);
            out.wait.insert((f, h.port), h.wait_ns);
        }
    }
    out
}

/// Most instances of one flow checked against a gate list at one port.
const MAX_INSTANCES: i64 = 100_000;

/// The live flows of port `p` that fail the time-triggered rule there, with why.
fn check_port(
    net: &Network,
    p: PortId,
    table: &[Option<(i64, Vec<Held>)>],
    alive: &[bool],
) -> Vec<(FlowId, String)> {
    use crate::model::SchedulerConfig as S;
    let port = &net.ports[p];
    let label = net.port_label(p);
    let flows = &net.port_flows[p];
    let live: Vec<FlowId> = flows.iter().copied().filter(|&f| alive[f]).collect();
    let all = |why: String| live.iter().map(|&f| (f, why.clone())).collect::<Vec<_>>();
    if port.shaper.is_some() {
        return all(format!("{label} runs a token-bucket shaper, which may hold a scheduled frame"));
    }
    // (start, length, period) of the interval each live flow's frame may be in the queue here.
    let occupancy = |f: FlowId| {
        let (t, held) = table[f].as_ref().expect("live flows have a timetable");
        let h = held.iter().find(|h| h.port == p).expect("the flow crosses the port");
        (h.occupancy.0, h.occupancy.1, *t)
    };
    let mut bad: Vec<(FlowId, String)> = Vec::new();
    // The flows that share the live flows' queue; each must be live, and their windows disjoint.
    let queue: Vec<FlowId> = match &port.discipline {
        S::Tas { scheduled, .. } => {
            let (prios, _) = levels(&net.classes);
            let level_of = |f: FlowId| {
                net.flows[f].class.map(|k| prios.binary_search(&net.classes[k].priority).expect("listed"))
            };
            for &f in &live {
                let class = &net.classes[net.flows[f].class.expect("scheduled flows have a class")].name;
                if !scheduled.contains(class) {
                    bad.push((f, format!("{label} does not list class '{class}' as scheduled")));
                }
            }
            let levels_live: Vec<usize> = live.iter().filter_map(|&f| level_of(f)).collect();
            flows.iter().copied().filter(|&g| level_of(g).is_some_and(|l| levels_live.contains(&l))).collect()
        }
        S::Fifo | S::StaticPriority => flows.clone(),
        other => {
            return all(format!(
                "{label} runs a {} scheduler, which may hold a scheduled frame",
                other.kind_name()
            ))
        }
    };
    if let Some(&g) = queue.iter().find(|&&g| !alive[g]) {
        let why = format!(
            "{label}: shares its queue with flow '{}', which is not time-triggered",
            net.flows[g].name
        );
        return live.iter().map(|&f| (f, why.clone())).chain(bad).collect();
    }
    for (i, &f) in queue.iter().enumerate() {
        for &g in &queue[i + 1..] {
            if !periodic_disjoint(occupancy(f), occupancy(g)) {
                let why = format!(
                    "{label}: frames of flows '{}' and '{}' meet",
                    net.flows[f].name, net.flows[g].name
                );
                bad.push((f, why.clone()));
                bad.push((g, why));
            }
        }
    }
    bad
}

/// The rate-latency lower bound (ρ as a fraction of the time, θ in seconds) of the supply of
/// the usable intervals `usable` (start, end) of a cycle of length `cycle` (sorted, disjoint
/// within one cycle span): ρ = Σ lengths / cycle; θ = the largest t − S(t)/ρ, reached at the
/// start of a usable interval when the count began at the end of another. `None` when nothing
/// is usable.
pub fn supply_bound(usable: &[(f64, f64)], cycle: f64) -> Option<(f64, f64)> {
    let total: f64 = usable.iter().map(|(a, b)| b - a).sum();
    if total <= 0.0 {
        return None;
    }
    let rho = total / cycle;
    let n = usable.len();
    let mut theta: f64 = 0.0;
    for i in 0..n {
        let from = usable[i].1;
        let mut supplied = 0.0;
        for k in 1..=n {
            let j = (i + k) % n;
            let wraps = ((i + k) / n) as f64;
            let start = usable[j].0 + wraps * cycle;
            theta = theta.max(start - from - supplied / rho);
            supplied += usable[j].1 - usable[j].0;
        }
    }
    Some((rho, theta))
}

/// A level of a port with a time-aware shaper, after this module: the rate-latency bound
/// of the supply of its gate's usable windows (each window less the largest frame of another
/// level whose gate is open across the window's start, and the level's largest frame at its end),
/// minus the output (arrival curves advanced by their delay bounds) of the higher levels whose
/// gates open inside one of the level's windows (the others send only outside them), and the largest
/// frame of another level whose gate is open during one of the level's windows (a frame of a
/// level whose gate closes at the window's start, or never opens inside the window, has ended
/// before it: frames end before their gate closes).
pub fn level_service<'a>(
    port: &'a ShapedPort<'a>,
    tas: &'a TasDiscipline<'a>,
) -> impl FnMut(usize, &Above) -> LevelService + 'a {
    let (link, latency) = (port.link, port.latency);
    let lmax = port.max_frames();
    move |k, above| {
        // The classes of the level: every class of the network at its priority.
        let level = port.levels[k].priority;
        let names: &[&str] = &port.levels[k].classes;
        // The other levels at the port: their largest frame and their classes.
        let others: Vec<(f64, &[&str])> =
            (0..lmax.len()).filter(|&j| j != k).map(|j| (lmax[j], &port.levels[j].classes[..])).collect();
        let largest = |open: &dyn Fn(&[&str]) -> bool| {
            others.iter().filter(|(_, n)| open(n)).map(|&(l, _)| l).fold(0.0, f64::max)
        };
        let windows = tas.windows(names);
        // A higher level whose gate never opens inside the level's windows sends only outside
        // them (its frames end before its gate closes): the supply does not count that time, so
        // its output is not subtracted.
        let relevant: Vec<usize> = match &windows {
            None => (0..k).collect(),
            Some(w) => {
                (0..k).filter(|&j| w.iter().any(|&(o, c)| tas.open_within(others[j].1, o, c))).collect()
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
                (supply_bound(&usable, tas.cycle.secs()), inside)
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
                crate::curves::static_priority_residual(&beta, &higher, other)
            }
        };
        (service, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Duration;

    fn entry(open: &[&str], us: f64) -> GateEntry {
        GateEntry { open: open.iter().map(|s| s.to_string()).collect(), duration: Duration::from_us(us) }
    }

    fn classes() -> Vec<TrafficClass> {
        ["a", "b"]
            .iter()
            .enumerate()
            .map(|(p, n)| TrafficClass { name: n.to_string(), priority: p as u32, description: None })
            .collect()
    }

    fn frame(id: u32, class: u16, wire_bytes: u32) -> Queued {
        Queued {
            flow: u32::MAX,
            frame: id,
            class,
            wire_bits: wire_bytes * 8,
            frame_bits: (wire_bytes - 20) * 8,
        }
    }

    /// Cycle 100 µs: a open for 20 µs, then b for 80 µs, on a 1 Gb/s link (1 bit per ns). A frame
    /// of a (1000 B = 8 µs) at 15 µs does not fit before a closes at 20 µs (guard band): it waits
    /// for the next window, at 100 µs; one of 500 B (4 µs) at 15 µs goes at once. A b frame at 0
    /// waits for b's gate, at 20 µs.
    #[test]
    fn gates_and_guard_band_by_hand() {
        let entries = [entry(&["a"], 20.0), entry(&["b"], 80.0)];
        let d = TasDiscipline {
            cycle: Duration::from_us(100.0),
            base_time: Duration::from_us(0.0),
            entries: &entries,
            scheduled: &[],
            sync_error: Duration::default(),
        };
        let mut s = TimeAware::new(&classes(), &d, 1e9);
        s.enqueue(frame(0, 0, 1000), 15_000);
        assert!(s.dequeue(15_000).is_none());
        assert_eq!(s.next_ready(15_000), Some(100_000));
        assert_eq!(s.dequeue(100_000).map(|q| q.frame), Some(0));
        s.enqueue(frame(1, 0, 500), 115_000);
        assert_eq!(s.dequeue(115_000).map(|q| q.frame), Some(1));
        s.enqueue(frame(2, 1, 100), 200_000);
        assert!(s.dequeue(200_000).is_none());
        assert_eq!(s.next_ready(200_000), Some(220_000));
        assert_eq!(s.dequeue(220_000).map(|q| q.frame), Some(2));
        // Windows: a's [0, 20) µs, b's [20, 100).
        assert_eq!(d.windows(&["a"]).unwrap(), vec![(0.0, 20e-6)]);
        assert_eq!(d.windows(&["b"]).unwrap(), vec![(20e-6, 100e-6)]);
        // b's gate closes at 0 (the cycle's end), so none of its frames is on the wire at a's
        // window start; a's is open across 10 µs; b never opens inside [0, 20) µs, a does.
        assert!(!d.open_across(&["b"], 0.0) && d.open_across(&["a"], 10e-6));
        assert!(!d.open_within(&["b"], 0.0, 20e-6) && d.open_within(&["a"], 10e-6, 30e-6));
        assert!(d.open_within(&["b"], 10e-6, 30e-6) && d.open_across(&["b"], 50e-6));
    }

    /// One usable interval of 20 in a cycle of 100: ρ = 0.2, θ = 80 (the gap; after it the supply
    /// runs at 1 ≥ ρ). Two intervals [0, 10) and [50, 60): ρ = 0.2, θ = 40 (either gap).
    /// Uneven [0, 30) and [40, 50): ρ = 0.4, the worst start at 50 sees 50 closed then 30 of
    /// supply by 80 and 40 by 100: θ = max(50 − 0, 90 − 30/0.4) = 50.
    #[test]
    fn supply_bound_by_hand() {
        assert_eq!(supply_bound(&[(0.0, 20.0)], 100.0), Some((0.2, 80.0)));
        assert_eq!(supply_bound(&[(0.0, 10.0), (50.0, 60.0)], 100.0), Some((0.2, 40.0)));
        let (rho, theta) = supply_bound(&[(0.0, 30.0), (40.0, 50.0)], 100.0).unwrap();
        assert!((rho - 0.4).abs() < 1e-12 && (theta - 50.0).abs() < 1e-9, "{rho} {theta}");
        assert_eq!(supply_bound(&[], 100.0), None);
    }
}
