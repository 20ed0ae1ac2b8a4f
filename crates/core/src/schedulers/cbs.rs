//! Credit-based shaper (IEEE 802.1Q-2018 §8.6.8.2, formerly 802.1Qav) per traffic class, over
//! non-preemptive static priority between classes.
//!
//! **Behaviour.** Each shaped class `i` has an idleSlope `I_i` (bit/s) and a credit (bits); its
//! sendSlope is `I_i − C`, C the port's transmit rate. The credit
//! * grows at `I_i` while frames of the class wait and it is not transmitting (whatever the
//!   sign of the credit, whether the port is idle or busy with other classes);
//! * falls at `C − I_i` while the class transmits;
//! * is set to 0 when the class's queue is empty and the credit is positive; a negative credit
//!   recovers at `I_i` up to 0 while the queue is empty.
//!
//! A shaped class may start a frame only when its credit is zero or positive; among the classes
//! that may, the highest priority goes first (lower `priority` first), non-preemptively. Classes
//! without an idleSlope are plain static-priority levels (FIFO inside a level).
//!
//! **Credit bounds.** loCredit is `−L_i·(C − I_i)/C`, L_i the class's largest frame (a frame
//! starts at credit ≥ 0). hiCredit, derived here for any number of shaped and unshaped classes:
//! let `s` be the last time before `t` the credit was ≤ 0. On `(s, t]` the class is backlogged
//! and eligible, so the port never idles and no lower frame starts: C·(t − s) is at most one
//! lower frame L_lo, the higher classes' output H and the class's own output O. The credit is
//! `c(t) = I_i·(t − s) − O`. With H ≤ a_H + r_H·(t − s) (a token bucket bounding the higher
//! classes' output: `(hiCredit_j − loCredit_j, I_j)` for a shaped class j, since its credit
//! changes by at most `I_j·τ − C·τ_tx`; `α_j(τ + D_j)` for an unshaped one),
//!
//!   hiCredit_i = I_i·(L_lo + a_H)/(C − r_H),   valid when I_i + r_H ≤ C.
//!
//! With no higher class this is 802.1Q Annex L's `hiCredit_A = maxInterferenceSize·I_A/C`
//! (Eq. L-3); for a second class it is above Annex L's `I_B·(L_lo/(C − I_A) + L_A/C)` (kept under
//! [`annex_l`] for comparison), as the bounds of Mohammadpour, Stai, Mohiuddin & Le Boudec
//! ("Latency and backlog bounds in time-sensitive networking with credit based shapers and
//! asynchronous traffic shaping", ITC 30, 2018) are.
//!
//! **Service model.** While the class is backlogged from `s` (its credit then at least
//! loCredit) to `t` (at most hiCredit), its output is `I_i·(t − s) + c(s) − c(t)`: the class
//! is guaranteed the rate-latency curve β = I_i·[t − (hiCredit − loCredit)/I_i]^+ (the CBS
//! service curve of De Azua & Boyer, "Complete modelling of AVB in network calculus framework",
//! RTNS 2014, in the form of Mohammadpour et al. 2018). An unshaped class below a shaped one
//! gets the link minus the higher classes' output curves and one lower frame.

//!
//! **Behind a gate control list** (`gates`, 802.1Qbv with 802.1Qav). Every queue also has a
//! transmission gate; a frame starts only while its gate is open and if it ends before the gate
//! closes (length-aware guard band). The credit follows 802.1Q-2018 §8.6.8.2 as amended for
//! scheduled traffic: it is *held* while the queue's gate is closed, and while frames wait whose
//! head cannot end before the gate closes (for transmission selection the gate is then closed
//! to it; INET's `accumulateCreditInGuardBand = false`); the idle slope applies only in the rest
//! of the open time. The idle slope given is the one in force while the gate is open (802.1Q
//! scales operIdleSlope by OperCycleTime/GateOpenTime to keep the reserved share: give the
//! scaled value). Derivation, for shaped class i with windows [o, c) and largest frame L_i:
//! call *usable* the parts [o, c − L_i/C], U(s, t) their time in (s, t], and (ρ, θ) the supply
//! bound U ≥ ρ·[τ − θ]^+ ([`super::tas::supply_bound`]). On any interval (s, t] the class's open
//! time splits into time it transmits (X), time it waits with its credit growing (A) and time it
//! is held in a guard band (inside [c − L_i/C, c)): A + X ≥ U(s, t).
//! * *Service.* Over a backlogged period the credit changes by I·(A + X) − C·X, so the output
//!   C·X ≥ I·U(s, t) − (hiCredit − loCredit): β = I·ρ·[τ − θ − (hiCredit − loCredit)/(I·ρ)]^+.
//! * *hiCredit.* Let s be the last time before t the credit was ≤ 0. On (s, t] the class is
//!   backlogged and, outside X and the held time, eligible: during A the link sends a higher
//!   class's frame, the lower frame L_lo on the wire at s, or a frame of another level on the
//!   wire as one of the class's windows opens (B_w, the largest frame of a level whose gate is
//!   open across the window's start; ΣB per cycle). So C·A ≤ K(x) = L_lo + a_H + ΣB + (r_H +
//!   ΣB/cycle)·x, x = t − s, and c(t) = c(s) + I·A − (C − I)·X is at most both I·A and
//!   C·A − (C − I)·(A + X) ≤ K(x) − (C − I)·ρ·[x − θ]^+. The first grows with x and the second
//!   falls once x > θ: their minimum peaks where they meet, x* = (K(0) + C·ρ·θ)/(C·ρ − r'),
//!   r' = r_H + ΣB/cycle, giving hiCredit = I·K(x*)/C ([`gated_hi_credit`]), finite when
//!   r' < C·ρ. With the gate always open it is the ungated I·(L_lo + a_H)/(C − r_H).
//!   A is inside the class's windows and a frame ends before its gate closes, so (a_H, r_H)
//!   counts only the higher classes whose gates open inside one of those windows, and L_lo only
//!   a lower level whose gate does (a lower frame on the wire as a window opens is in ΣB).
//! * The output still fits (hiCredit − loCredit, I): credit changes by at most I·τ − C·X.
//!
//! Had the credit grown while the gate is closed, a class would open its window with the credit
//! of the whole closed time and send a burst beyond hiCredit (the test
//! `credit_held_while_closed_stays_within_hi_credit` shows the bound then fails).

use super::{Above, Behaviour, ConfigProblem, LevelService, Queued, ShapedPort};
use crate::curves::upper_burst;
use crate::curves::{Curve, Unbounded};
use crate::model::TrafficClass;
use crate::units::DataRate;
use std::collections::{BTreeMap, VecDeque};

/// Slack on the credit comparison (bits), so that a credit that float arithmetic leaves a hair
/// below 0 at the nanosecond [`Behaviour::next_ready`] named still lets the frame go.
const CREDIT_SLACK_BITS: f64 = 1e-6;

/// The credit-based shaper's configuration as written (`kind: cbs`), with the gate control list
/// its queues are behind, if any.
pub struct CbsDiscipline<'a> {
    pub idle_slopes: &'a BTreeMap<String, DataRate>,
    pub gates: Option<super::tas::TasDiscipline<'a>>,
}

/// One queue of the port: a shaped class, or a static-priority level of unshaped classes.
struct Lane {
    /// idleSlope in bits per ns, for a shaped class.
    idle: Option<f64>,
    frames: VecDeque<Queued>,
    credit: f64,
    /// The lane's transmission gate (`None`: always open).
    gate: Option<Gate>,
}

/// A queue's transmission gate, in ns: its open windows `[o, c)` relative to a cycle's start
/// (`c` may pass the cycle's end). A frame taking `tail` ns on the wire may start at `t` when `t`
/// lies in `[o, c − tail]` of a window: its *usable* part (the length-aware guard band).
#[derive(Clone, Debug)]
struct Gate {
    cycle: f64,
    base: f64,
    windows: Vec<(f64, f64)>,
}

impl Gate {
    /// The usable parts `[o, e]` of the windows for a frame of `tail` ns.
    fn usable(&self, tail: f64) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.windows.iter().map(move |&(o, c)| (o, c - tail)).filter(|(o, e)| e > o)
    }

    /// The usable time in [0, x] of the schedule started at 0.
    fn cumulative(&self, x: f64, tail: f64) -> f64 {
        let k = (x / self.cycle).floor();
        let ph = x - k * self.cycle;
        let (mut whole, mut part) = (0.0, 0.0);
        for (o, e) in self.usable(tail) {
            whole += e - o;
            part += (ph.min(e) - o).max(0.0);
            if e > self.cycle {
                part += ph.min(e - self.cycle);
            }
        }
        k * whole + part
    }

    /// Usable time within [a, b].
    fn measure(&self, a: f64, b: f64, tail: f64) -> f64 {
        if b <= a {
            return 0.0;
        }
        (self.cumulative(b - self.base, tail) - self.cumulative(a - self.base, tail)).max(0.0)
    }

    /// Whether a frame of `tail` ns may start at `t`.
    fn fits(&self, t: f64, tail: f64) -> bool {
        let ph = (t - self.base).rem_euclid(self.cycle);
        self.usable(tail).any(|(o, e)| (o <= ph && ph <= e) || (e > self.cycle && ph <= e - self.cycle))
    }

    /// The earliest `u ≥ t` at which a frame of `tail` ns may start after `need` ns of usable
    /// time from `t`; `None` when no window is usable for it.
    fn next_usable(&self, t: f64, need: f64, tail: f64) -> Option<f64> {
        let whole: f64 = self.usable(tail).map(|(o, e)| e - o).sum();
        if whole <= 0.0 {
            return None;
        }
        let (mut x, mut need) = (t - self.base, need.max(0.0));
        // Whole cycles supply `whole` each, from any phase.
        if need > 2.0 * whole {
            let skip = (need / whole).floor() - 1.0;
            x += skip * self.cycle;
            need -= skip * whole;
        }
        let k = (x / self.cycle).floor();
        for j in -1..4 {
            let start = (k + j as f64) * self.cycle;
            for (o, e) in self.usable(tail) {
                let (a, b) = (start + o, start + e);
                if b < x {
                    continue;
                }
                let from = a.max(x);
                if need <= b - from {
                    return Some(self.base + from + need);
                }
                need -= b - from;
            }
        }
        None
    }
}

/// The credit-based shaper's behaviour. Credits are kept exactly (f64 bits, times in ns) and
/// brought up to date lazily, at every enqueue and dequeue: between two such events no queue
/// changes, so each credit follows one slope per stretch.
pub struct CreditBased {
    lanes: Vec<Lane>,
    /// Lane of each class index (frames without a class go to the last lane, the lowest).
    lane_of_class: Vec<usize>,
    /// Link rate, bits per ns.
    link: f64,
    /// Time the credits are given at (ns).
    last_ns: i64,
    /// The lane transmitting and the end of its frame (ns, exact), as this behaviour handed it
    /// to the link.
    sending: Option<(usize, f64)>,
    len: usize,
    /// Largest credit each lane has had (bits), for tests against hiCredit.
    max_credit: Vec<f64>,
    /// 802.1Q's rule at a gated port: credit is held while the gate is closed (or the head frame
    /// cannot end before it closes). Off only to show what the analysis depends on.
    hold_while_closed: bool,
}

impl CreditBased {
    /// The shaper over `classes` with the idle slopes (bit/s) of the shaped ones, on a link of
    /// `link_rate` bit/s.
    pub fn new(classes: &[TrafficClass], idle_slopes: &BTreeMap<String, f64>, link_rate: f64) -> Self {
        Self::gated(classes, idle_slopes, link_rate, None)
    }

    /// The shaper with every queue behind its transmission gate in `gates` (802.1Qbv).
    pub fn gated(
        classes: &[TrafficClass],
        idle_slopes: &BTreeMap<String, f64>,
        link_rate: f64,
        gates: Option<&super::tas::TasDiscipline<'_>>,
    ) -> Self {
        // Shaped classes are lanes of their own; unshaped ones share a lane per priority.
        let mut keys: Vec<(u32, Option<usize>)> = classes
            .iter()
            .enumerate()
            .map(|(k, c)| (c.priority, idle_slopes.contains_key(&c.name).then_some(k)))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let mut lanes: Vec<Lane> = keys
            .iter()
            .map(|&(prio, shaped)| {
                // The lane's classes: the shaped one, or the unshaped ones of its priority.
                let names: Vec<&str> = match shaped {
                    Some(k) => vec![classes[k].name.as_str()],
                    None => classes
                        .iter()
                        .filter(|c| c.priority == prio && !idle_slopes.contains_key(&c.name))
                        .map(|c| c.name.as_str())
                        .collect(),
                };
                let gate = gates.and_then(|g| {
                    let gcl = super::tas::Gcl::new(g.cycle.as_ns(), g.base_time.as_ns(), g.entries, &[names]);
                    gcl.windows_of(0).map(|w| Gate {
                        cycle: gcl.cycle_ns as f64,
                        base: gcl.base_ns as f64,
                        windows: w.iter().map(|&(o, c)| (o as f64, c as f64)).collect(),
                    })
                });
                Lane {
                    idle: shaped.map(|k| idle_slopes[&classes[k].name] * 1e-9),
                    frames: VecDeque::new(),
                    credit: 0.0,
                    gate,
                }
            })
            .collect();
        let lane_of_class = classes
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let key = (c.priority, idle_slopes.contains_key(&c.name).then_some(k));
                keys.binary_search(&key).expect("listed")
            })
            .collect();
        lanes.push(Lane { idle: None, frames: VecDeque::new(), credit: 0.0, gate: None });
        let n = lanes.len();
        CreditBased {
            lanes,
            lane_of_class,
            link: link_rate * 1e-9,
            last_ns: i64::MIN,
            sending: None,
            len: 0,
            max_credit: vec![0.0; n],
            hold_while_closed: true,
        }
    }

    /// The shaper with credit growing while gates are closed, against 802.1Q: only for tests
    /// showing that the analysis's bounds need the standard's rule.
    #[doc(hidden)]
    pub fn accumulating_while_closed(mut self) -> Self {
        self.hold_while_closed = false;
        self
    }

    /// Time (ns) a lane's gate leaves its credit free to change within [a, b], `ungated` without
    /// a gate: the usable time for its head frame (frames waiting) or the open time (queue
    /// empty).
    fn free_time(&self, lane: &Lane, a: f64, b: f64, ungated: f64) -> f64 {
        match (&lane.gate, self.hold_while_closed) {
            (Some(g), true) => {
                let tail = lane.frames.front().map_or(0.0, |q| q.wire_bits as f64 / self.link);
                g.measure(a, b, tail)
            }
            _ => ungated.max(0.0),
        }
    }

    /// The credit of lane `l` at `to` (ns), from its value at `self.last_ns`.
    fn credit_at(&self, l: usize, to: f64) -> f64 {
        let lane = &self.lanes[l];
        let Some(idle) = lane.idle else { return lane.credit };
        let start = self.last_ns as f64;
        let (mut from, mut tx) = (start, 0.0);
        let mut credit = lane.credit;
        if let Some((s, end)) = self.sending {
            if s == l {
                tx = (end.min(to) - start).max(0.0);
                credit -= (self.link - idle) * tx;
                if end > to {
                    return credit;
                }
                from = start.max(end);
            }
        }
        // Without a gate, the time left after the transmission, as (to − start) − tx.
        let free = self.free_time(lane, from, to, (to - start) - tx);
        if !lane.frames.is_empty() {
            credit + idle * free
        } else if credit < 0.0 {
            (credit + idle * free).min(0.0)
        } else {
            0.0
        }
    }

    /// Whether the head frame of lane `l` (`bits` on the wire) may pass its gate at `t`.
    fn gate_fits(&self, l: usize, bits: u32, t: f64) -> bool {
        self.lanes[l].gate.as_ref().is_none_or(|g| g.fits(t, bits as f64 / self.link))
    }

    /// Brings every credit to `now_ns`.
    fn advance(&mut self, now_ns: i64) {
        if self.last_ns == i64::MIN || now_ns <= self.last_ns {
            self.last_ns = self.last_ns.max(now_ns);
            return;
        }
        let to = now_ns as f64;
        for l in 0..self.lanes.len() {
            if self.lanes[l].idle.is_none() {
                continue;
            }
            let credit = self.credit_at(l, to);
            self.lanes[l].credit = credit;
            self.max_credit[l] = self.max_credit[l].max(credit);
        }
        if self.sending.is_some_and(|(_, end)| end <= to) {
            self.sending = None;
        }
        self.last_ns = now_ns;
    }

    /// The largest credit each shaped class has had so far (bits), by class index.
    pub fn max_credit_of_class(&self, class: usize) -> f64 {
        self.max_credit[self.lane_of_class[class]]
    }
}

impl Behaviour for CreditBased {
    fn enqueue(&mut self, item: Queued, now_ns: i64) {
        self.advance(now_ns);
        let lane = self.lane_of_class.get(item.class as usize).copied().unwrap_or(self.lanes.len() - 1);
        self.lanes[lane].frames.push_back(item);
        self.len += 1;
    }

    fn dequeue(&mut self, now_ns: i64) -> Option<Queued> {
        self.advance(now_ns);
        // The link asks only once it is free: a frame whose exact end the link rounded down to
        // `now_ns` is over (a fraction of a ns of credit at most).
        self.sending = None;
        let l = (0..self.lanes.len()).find(|&l| {
            let lane = &self.lanes[l];
            lane.frames.front().is_some_and(|q| self.gate_fits(l, q.wire_bits, now_ns as f64))
                && lane.idle.is_none_or(|_| lane.credit >= -CREDIT_SLACK_BITS)
        })?;
        let item = self.lanes[l].frames.pop_front().expect("not empty");
        self.len -= 1;
        if self.lanes[l].idle.is_some() {
            self.sending = Some((l, now_ns as f64 + item.wire_bits as f64 / self.link));
        }
        Some(item)
    }

    /// When the first waiting class may start: its credit back to 0 (shaped) and its head frame
    /// within the usable part of an open window of its gate (at least 1 ns ahead when it may not
    /// start now). The credit grows only in that usable time, so the two are found together.
    fn next_ready(&self, now_ns: i64) -> Option<i64> {
        let now = now_ns as f64;
        (0..self.lanes.len())
            .filter_map(|l| {
                let lane = &self.lanes[l];
                let head = lane.frames.front()?;
                let tail = head.wire_bits as f64 / self.link;
                // Usable time the credit still needs (ns).
                let need = match lane.idle {
                    None => 0.0,
                    Some(idle) => {
                        let credit =
                            if self.last_ns == i64::MIN { lane.credit } else { self.credit_at(l, now) };
                        if credit >= -CREDIT_SLACK_BITS {
                            0.0
                        } else {
                            -credit / idle
                        }
                    }
                };
                let at = match (&lane.gate, self.hold_while_closed) {
                    (Some(g), true) => g.next_usable(now, need, tail)?,
                    (Some(g), false) => {
                        let credit_ok = now + need;
                        if g.fits(credit_ok, tail) {
                            credit_ok
                        } else {
                            g.next_usable(credit_ok, 0.0, tail)?
                        }
                    }
                    (None, _) => now + need,
                };
                Some(if at <= now && need == 0.0 {
                    now_ns
                } else {
                    now_ns.saturating_add((at - now).ceil().max(1.0).min(i64::MAX as f64 / 2.0) as i64)
                })
            })
            .min()
    }

    fn len(&self) -> usize {
        self.len
    }
}

impl super::Discipline for CbsDiscipline<'_> {
    fn kind(&self) -> &'static str {
        "cbs"
    }
    fn check(&self, place: &str, class_known: &dyn Fn(&str) -> bool) -> Vec<ConfigProblem> {
        let gates =
            self.gates.as_ref().map_or_else(Vec::new, |g| g.check(&format!("{place}.gates"), class_known));
        let mut slopes = super::check_class_values(
            place,
            "idle_slopes",
            self.idle_slopes.iter().map(|(c, r)| (c.clone(), r.bps())),
            &|v| {
                if v.is_finite() && v > 0.0 {
                    Ok(())
                } else {
                    Err(format!("an idle slope must be a positive rate, got {v} bit/s"))
                }
            },
            class_known,
        );
        slopes.extend(gates);
        slopes
    }
    /// The gates' rule ([`super::tas::check_shared_gates`]), then: each shaped class is a queue
    /// of its own, on a priority of its own.
    fn check_classes(&self, place: &str, classes: &[TrafficClass]) -> Vec<ConfigProblem> {
        let mut out = match &self.gates {
            Some(g) => super::tas::check_shared_gates(&format!("{place}.gates.entries"), g.entries, classes),
            None => Vec::new(),
        };
        for name in self.idle_slopes.keys() {
            let Some(c) = classes.iter().find(|c| &c.name == name) else { continue };
            // A pair of shaped classes is reported once, at the second name.
            let clash = |o: &&TrafficClass| {
                o.name != c.name
                    && o.priority == c.priority
                    && (!self.idle_slopes.contains_key(&o.name) || o.name < c.name)
            };
            if let Some(o) = classes.iter().find(clash) {
                out.push(ConfigProblem::Error {
                    place: format!("{place}.idle_slopes.{name}"),
                    message: format!(
                        "shaped class '{name}' shares priority {} with class '{}'; a credit-based \
                         shaper needs a priority of its own for each shaped class",
                        c.priority, o.name
                    ),
                });
            }
        }
        out
    }
    fn shapes_at_link_rate(&self) -> bool {
        true
    }
    fn gates(&self) -> Option<super::Gates<'_>> {
        self.gates.as_ref().and_then(super::Discipline::gates)
    }
    fn kernel(&self) -> super::Kernel {
        super::Kernel::NoShaper {
            plan: match self.gates {
                Some(_) => "a credit-based (802.1Qav) behind a gate control list (802.1Qbv) shaper",
                None => "a credit-based (802.1Qav) shaper",
            },
            script: match self.gates {
                Some(_) => "credit-based shapers behind a gate control list (802.1Qav with 802.1Qbv)",
                None => "credit-based shapers (802.1Qav)",
            },
            qdisc: "cbs or taprio qdisc",
        }
    }
    fn service(&self) -> super::Service<'_> {
        super::Service::CreditBased(self)
    }
    fn behaviour(&self, classes: &[TrafficClass], link_rate: f64) -> Box<dyn Behaviour> {
        let slopes = self.idle_slopes.iter().map(|(c, r)| (c.clone(), r.bps())).collect();
        Box::new(CreditBased::gated(classes, &slopes, link_rate, self.gates.as_ref()))
    }
}

/// loCredit of a shaped class (bits, negative): `−L·(C − I)/C`, L its largest frame on the
/// wire (802.1Q Annex L, Eq. L-2; exact: a frame starts at credit ≥ 0).
pub fn lo_credit(idle: f64, link: f64, largest_frame: f64) -> f64 {
    -largest_frame * (link - idle) / link
}

/// hiCredit of a shaped class (bits) whose port has the lower-priority largest frame
/// `lower_frame` (bits on the wire) and whose higher classes' output is within the token bucket
/// `(burst, rate)`: `I·(L_lo + burst)/(C − rate)` (the module's derivation). `None` when
/// `I + rate > C`: the credit then has no bound.
pub fn hi_credit(idle: f64, link: f64, lower_frame: f64, (burst, rate): (f64, f64)) -> Option<f64> {
    (idle + rate <= link * (1.0 + 1e-12) && rate < link).then(|| idle * (lower_frame + burst) / (link - rate))
}

/// What a shaped class's gate supplies (802.1Qbv with 802.1Qav): `rho` and `theta` (seconds)
/// bound the usable time of its windows (each window less the class's largest frame at its end)
/// in any interval τ by ρ·[τ − θ]^+; `blocking` sums, over the windows of one cycle (`cycle`
/// seconds), the largest frame of another level that may be on the wire as the window opens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GateSupply {
    pub rho: f64,
    pub theta: f64,
    pub blocking: f64,
    pub cycle: f64,
}

/// hiCredit (bits) of a shaped class behind a gate whose credit is held while the gate is
/// closed or its head frame cannot end before the gate closes (the module's gated derivation):
/// with K(x) = L_lo + a_H + ΣB + (r_H + ΣB/cycle)·x,
/// hiCredit = I·K(x*)/C at x* = (K(0) + C·ρ·θ)/(C·ρ − r_H − ΣB/cycle). `None` when
/// r_H + ΣB/cycle ≥ C·ρ: the credit then has no bound. Without a gate (ρ = 1, θ = 0, ΣB = 0)
/// this is [`hi_credit`].
pub fn gated_hi_credit(
    idle: f64,
    link: f64,
    lower_frame: f64,
    (burst, rate): (f64, f64),
    g: GateSupply,
) -> Option<f64> {
    let r = rate + g.blocking / g.cycle;
    let k0 = lower_frame + burst + g.blocking;
    let room = link * g.rho - r;
    (room > 0.0 && room > link * g.rho * 1e-12).then(|| {
        let x = (k0 + link * g.rho * g.theta) / room;
        idle * (k0 + r * x) / link
    })
}

/// The rate-latency guarantee of a shaped class behind its gate: rate I·ρ, latency
/// θ + (hiCredit − loCredit)/(I·ρ).
pub fn gated_latency_rate(idle: f64, hi: f64, lo: f64, g: GateSupply) -> super::LatencyRate {
    super::LatencyRate { rate: idle * g.rho, latency: g.theta + (hi - lo) / (idle * g.rho) }
}

/// The rate-latency guarantee of a shaped class: rate I, latency (hiCredit − loCredit)/I.
pub fn latency_rate(idle: f64, hi: f64, lo: f64) -> super::LatencyRate {
    super::LatencyRate { rate: idle, latency: (hi - lo) / idle }
}

/// The token bucket bounding a shaped class's output (bits transmitted in any interval τ):
/// `(hiCredit − loCredit) + I·τ`.
pub fn output_bucket(idle: f64, hi: f64, lo: f64) -> (f64, f64) {
    (hi - lo, idle)
}

/// 802.1Q-2018 Annex L's hiCredit for the two SR classes, literally (Eq. L-3 and its class B
/// form); rtnetlab's analysis uses [`hi_credit`], which holds for any number of classes.
pub mod annex_l {
    /// Class A (highest): maxInterferenceSize·idleSlope_A/portTransmitRate.
    pub fn hi_credit_a(max_interference: f64, idle_a: f64, link: f64) -> f64 {
        max_interference * idle_a / link
    }
    /// Class B below A: idleSlope_B·(maxInterferenceSize/(portTransmitRate − idleSlope_A) +
    /// maxFrameSize_A/portTransmitRate).
    pub fn hi_credit_b(max_interference: f64, frame_a: f64, idle_a: f64, idle_b: f64, link: f64) -> f64 {
        idle_b * (max_interference / (link - idle_a) + frame_a / link)
    }
}

/// A level of a port with credit-based shapers, after this module: a shaped class gets
/// β = I·[t − T − (hiCredit − loCredit)/I]^+, hiCredit from the token bucket that bounds the
/// higher classes' output, and its output is within (hiCredit − loCredit, I); an unshaped level
/// gets the link minus the higher classes' output curves (their arrival curves when no shaped
/// class is above it: the levels above then serve whenever they hold frames) and one lower frame.
pub fn level_service<'a>(
    port: &'a ShapedPort<'a>,
    slopes: &'a BTreeMap<String, DataRate>,
) -> impl FnMut(usize, &Above) -> LevelService + 'a {
    let (link, latency, rate_text) = (port.link, port.latency, port.rate_text);
    let beta = Curve::rate_latency(link, latency);
    let lmax = port.max_frames();
    move |k, above| {
        let (class, rate) = (port.levels[k].class, port.levels[k].rate);
        let lower = lmax[k + 1..].iter().copied().fold(0.0, f64::max);
        let Some(idle) = slopes.get(class).map(|r| r.bps()) else {
            let higher = if above.shaped { &above.out } else { &above.arrivals };
            return (crate::curves::static_priority_residual(&beta, higher, lower), None);
        };
        if rate > idle * (1.0 + 1e-12) {
            let why = format!("class '{class}' offered {} > idle slope {}", rate_text(rate), rate_text(idle));
            return (Err(Unbounded::new(why)), None);
        }
        match hi_credit(idle, link, lower, above.tb) {
            None => (
                Err(Unbounded::new(format!(
                    "the credit of class '{class}' has no bound (its idle slope and the higher \
                     classes' rates exceed the link)"
                ))),
                None,
            ),
            Some(hi) => {
                let lo = lo_credit(idle, link, lmax[k]);
                let lr = latency_rate(idle, hi, lo);
                (Ok(Curve::rate_latency(lr.rate, lr.latency + latency)), Some(output_bucket(idle, hi, lo)))
            }
        }
    }
}

/// A level of a port whose credit-based shapers sit behind a gate control list, after
/// this module's gated model: a shaped class gets I·ρ·[t − T − θ − (hiCredit −
/// loCredit)/(I·ρ)]^+, (ρ, θ) the supply bound of its gate's windows less its largest frame at
/// their ends, hiCredit from [`schedulers::cbs::gated_hi_credit`]; an unshaped level is a gated
/// level as under the time-aware shaper ([`super::tas::level_service`]), the shaped levels above it
/// counted by their output buckets.
pub fn gated_level_service<'a>(
    port: &'a ShapedPort<'a>,
    slopes: &'a BTreeMap<String, DataRate>,
    gates: &'a super::tas::TasDiscipline<'a>,
) -> impl FnMut(usize, &Above) -> LevelService + 'a {
    let (link, latency, rate_text) = (port.link, port.latency, port.rate_text);
    let lmax = port.max_frames();
    let mut unshaped = super::tas::level_service(port, gates);
    move |k, above| {
        let (class, rate) = (port.levels[k].class, port.levels[k].rate);
        let Some(idle) = slopes.get(class).map(|r| r.bps()) else {
            return unshaped(k, above);
        };
        // The other levels' largest frames and classes (a shaped class is a level of its own).
        let level_names = |j: usize| -> &[&str] { &port.levels[j].classes };
        let others: Vec<(f64, &[&str])> =
            (0..lmax.len()).filter(|&j| j != k).map(|j| (lmax[j], level_names(j))).collect();
        let cycle = gates.cycle.secs();
        let windows = gates.windows(&[class]);
        // What the higher classes may send while the class waits with a growing credit, inside
        // its windows: a higher class whose gate never opens there sends only outside them.
        let relevant: Vec<usize> = match &windows {
            None => (0..k).collect(),
            Some(w) => {
                (0..k).filter(|&j| w.iter().any(|&(o, c)| gates.open_within(level_names(j), o, c))).collect()
            }
        };
        // The lower frame on the wire when the credit last was 0: one that started inside a window
        // (a frame on the wire as a window opens is counted in the blocking below).
        let lower = (k + 1..lmax.len())
            .filter(|&j| {
                windows
                    .as_ref()
                    .is_none_or(|w| w.iter().any(|&(o, c)| gates.open_within(level_names(j), o, c)))
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
                (super::tas::supply_bound(&usable, cycle), blocking)
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
                rate_text(rate),
                rate_text(idle),
                rho
            );
            return (Err(Unbounded::new(why)), None);
        }
        let gate = GateSupply { rho, theta, blocking, cycle };
        match gated_hi_credit(idle, link, lower, tb, gate) {
            None => (
                Err(Unbounded::new(format!(
                    "the credit of class '{class}' has no bound (the higher classes' rate and the frames \
                     blocking its window starts reach the link's rate in its usable share {rho:.6})"
                ))),
                None,
            ),
            Some(hi) => {
                let lo = lo_credit(idle, link, lmax[k]);
                let lr = gated_latency_rate(idle, hi, lo, gate);
                (Ok(Curve::rate_latency(lr.rate, lr.latency + latency)), Some(output_bucket(idle, hi, lo)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(prios: &[u32]) -> Vec<TrafficClass> {
        prios
            .iter()
            .enumerate()
            .map(|(k, &p)| TrafficClass { name: format!("c{k}"), priority: p, description: None })
            .collect()
    }

    /// A random port for the credit tests: 1 to 3 shaped classes c0.. with idle slopes (fractions
    /// of a 1 Gb/s link, each at least `least_slope`, summing to at most 0.95) and one best-effort
    /// class below; (shaped classes, classes, idle slopes in bit/s by class name, the fractions,
    /// each class's largest frame on the wire in bytes).
    #[allow(clippy::type_complexity)]
    fn random_shaped_port(
        rng: &mut rand_chacha::ChaCha8Rng,
        least_slope: f64,
    ) -> (usize, usize, BTreeMap<String, f64>, Vec<f64>, Vec<u32>) {
        use rand::Rng;
        let shaped = rng.gen_range(1..=3usize);
        let n = shaped + 1;
        let mut slopes = BTreeMap::new();
        let mut left = 0.95;
        let mut idle = Vec::new();
        for k in 0..shaped {
            let r: f64 = rng.gen_range(least_slope..0.5f64).min(left / (shaped - k) as f64);
            left -= r;
            idle.push(r);
            slopes.insert(format!("c{k}"), r * 1e9);
        }
        let lmax: Vec<u32> = (0..n).map(|_| rng.gen_range(84..=1538u32)).collect();
        (shaped, n, slopes, idle, lmax)
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

    /// Runs the port on a link of 1 bit per ns with frames given as (arrival ns, class, wire
    /// bytes); returns each frame's (id, start ns).
    fn run(s: &mut CreditBased, arrivals: &[(i64, u16, u32)]) -> Vec<(u32, i64)> {
        let mut out = Vec::new();
        let mut next = 0;
        let mut now = 0i64;
        let mut free_at = 0i64;
        loop {
            while next < arrivals.len() && arrivals[next].0 <= now {
                let (_, c, b) = arrivals[next];
                s.enqueue(frame(next as u32, c, b), arrivals[next].0);
                next += 1;
            }
            if now >= free_at {
                if let Some(q) = s.dequeue(now) {
                    out.push((q.frame, now));
                    free_at = now + q.wire_bits as i64;
                }
            }
            if next == arrivals.len() && s.is_empty() {
                return out;
            }
            // The next event: an arrival, the link free, or a credit reaching 0.
            let mut t = i64::MAX;
            if next < arrivals.len() {
                t = t.min(arrivals[next].0);
            }
            if free_at > now {
                t = t.min(free_at);
            } else if let Some(r) = s.next_ready(now) {
                t = t.min(r);
            }
            now = t.max(now + 1);
        }
    }

    /// One shaped class alone at idleSlope 1/4 of the link (1 bit/ns): three 1000-bit (125 B)
    /// frames at 0. F0 starts at 0 (credit 0) and leaves the credit at −1000·3/4 = −750 at 1000,
    /// which takes 750/0.25 = 3000 ns to recover: F1 at 4000, F2 at 8000. The long-run rate is the idle slope: one frame per 1000/0.25 ns.
    #[test]
    fn a_lone_class_is_spaced_at_its_idle_slope() {
        let mut slopes = BTreeMap::new();
        slopes.insert("c0".to_string(), 0.25e9);
        let mut s = CreditBased::new(&classes(&[0]), &slopes, 1e9);
        let got = run(&mut s, &[(0, 0, 125), (0, 0, 125), (0, 0, 125)]);
        assert_eq!(got, [(0, 0), (1, 4000), (2, 8000)]);
    }

    /// Credit grows while the class waits behind a lower frame, and is reset when its queue
    /// empties with positive credit. Class c0 shaped (I = 0.5), c1 unshaped and lower. A c1 frame
    /// of 2000 bits starts at 0; c0 frames of 1000 bits arrive at 0 and 0: they wait 2000 ns with
    /// the credit growing to 1000 (= hiCredit I·L_lo/C = 0.5·2000). F1 (c0) goes at 2000, credit
    /// 1000 − 500 = 500 ≥ 0 so F2 follows at 3000, and the queue empties with credit 500 − 500 = 0.
    #[test]
    fn credit_grows_behind_a_lower_frame_up_to_hi_credit() {
        let mut slopes = BTreeMap::new();
        slopes.insert("c0".to_string(), 0.5e9);
        let mut s = CreditBased::new(&classes(&[0, 1]), &slopes, 1e9);
        s.enqueue(frame(0, 1, 250), 0);
        assert_eq!(s.dequeue(0).map(|q| q.frame), Some(0));
        s.enqueue(frame(1, 0, 125), 0);
        s.enqueue(frame(2, 0, 125), 0);
        assert_eq!(s.dequeue(2000).map(|q| q.frame), Some(1));
        assert!((s.max_credit_of_class(0) - 1000.0).abs() < 1e-6);
        assert_eq!(hi_credit(0.5, 1.0, 2000.0, (0.0, 0.0)), Some(1000.0));
        assert_eq!(annex_l::hi_credit_a(2000.0, 0.5, 1.0), 1000.0);
        assert_eq!(s.dequeue(3000).map(|q| q.frame), Some(2));
        // Empty from 4000 with credit 0, which stays 0: a frame at 10000 goes at once.
        s.enqueue(frame(3, 0, 125), 10_000);
        assert_eq!(s.dequeue(10_000).map(|q| q.frame), Some(3));
        assert_eq!(s.max_credit_of_class(0), 1000.0);
    }

    /// A positive credit is lost when the queue empties: c0 (I = 0.5) waits 2000 ns behind a
    /// lower frame (credit 1000), sends its only frame (credit 500 after it) and the credit drops
    /// to 0 at once, so two frames arriving later go at the idle slope, not in a burst on the
    /// 500 bits banked.
    #[test]
    fn positive_credit_is_reset_when_the_queue_empties() {
        let mut slopes = BTreeMap::new();
        slopes.insert("c0".to_string(), 0.5e9);
        let mut s = CreditBased::new(&classes(&[0, 1]), &slopes, 1e9);
        s.enqueue(frame(0, 1, 250), 0);
        assert!(s.dequeue(0).is_some());
        s.enqueue(frame(1, 0, 125), 0);
        assert!(s.dequeue(2000).is_some());
        s.enqueue(frame(2, 0, 125), 3000);
        s.enqueue(frame(3, 0, 125), 3000);
        assert_eq!(s.dequeue(3000).map(|q| q.frame), Some(2));
        // Credit 0 − 500: the next frame waits 1000 ns after F2's end (4000).
        assert!(s.dequeue(4000).is_none());
        assert_eq!(s.next_ready(4000), Some(5000));
        assert_eq!(s.dequeue(5000).map(|q| q.frame), Some(3));
    }

    /// The analysis's bounds: loCredit of a 1000-bit frame at I = C/4 is −750; with a higher
    /// shaped class of output bucket (1500, 0.25) and a lower frame of 2000 bits, hiCredit of a
    /// class of I = 0.25 on a link of 1 is 0.25·(2000 + 1500)/(1 − 0.25) = 1166.67, and none when
    /// the slopes exceed the link.
    #[test]
    fn credit_bounds_by_hand() {
        assert_eq!(lo_credit(0.25, 1.0, 1000.0), -750.0);
        let hi = hi_credit(0.25, 1.0, 2000.0, (1500.0, 0.25)).unwrap();
        assert!((hi - 3500.0 / 3.0).abs() < 1e-9);
        assert_eq!(hi_credit(0.5, 1.0, 2000.0, (1500.0, 0.6)), None);
        let lr = latency_rate(0.25, hi, -750.0);
        assert!((lr.latency - (hi + 750.0) / 0.25).abs() < 1e-9 && lr.rate == 0.25);
    }

    /// The published example of the TSN Documentation Project for Linux ("Configuring CBS
    /// qdisc", tsn.readthedocs.io/qdiscs.html; its calc-cbs-params.py output): a 1 Gb/s port,
    /// class A a stream of 8000 frames/s of 1542 B on the wire, class B 4000 frames/s of 114 B,
    /// best-effort frames of 1542 B. Published: class A idleslope 98688 kb/s, sendslope −901312,
    /// hicredit 153 B, locredit −1389 B; class B idleslope 3648, sendslope −996352, hicredit
    /// 12 B, locredit −113 B.
    ///
    /// By hand (bytes): I_A = 8000·1542·8 = 98.688 Mb/s, I_B = 4000·114·8 = 3.648 Mb/s;
    /// loCredit_A = −1542·0.901312 = −1389.8, loCredit_B = −114·0.996352 = −113.6 (published
    /// truncated towards 0); hiCredit_A = 1542·0.098688 = 152.2 (published rounded up to 153);
    /// Annex L's hiCredit_B = 0.003648·(1542/0.901312 + 1542) = 11.87 (published 12). The bound
    /// this module derives for class B, 0.003648·(1542 + 152.2 + 1389.8)/0.901312 = 12.48 B, is
    /// above Annex L's, as it must be for any sound bound that is not exact.
    #[test]
    fn tsn_documentation_project_example() {
        let c = 1e9;
        let (ia, ib) = (8000.0 * 1542.0 * 8.0, 4000.0 * 114.0 * 8.0);
        assert_eq!((ia / 1e3, (ia - c) / 1e3), (98688.0, -901312.0));
        assert_eq!((ib / 1e3, (ib - c) / 1e3), (3648.0, -996352.0));
        let bytes = |bits: f64| bits / 8.0;
        let lo_a = bytes(lo_credit(ia, c, 1542.0 * 8.0));
        let lo_b = bytes(lo_credit(ib, c, 114.0 * 8.0));
        assert_eq!((lo_a.trunc(), lo_b.trunc()), (-1389.0, -113.0));
        let hi_a = bytes(hi_credit(ia, c, 1542.0 * 8.0, (0.0, 0.0)).unwrap());
        assert_eq!(hi_a.ceil(), 153.0);
        assert_eq!(bytes(annex_l::hi_credit_a(1542.0 * 8.0, ia, c)), hi_a);
        let annex_b = bytes(annex_l::hi_credit_b(1542.0 * 8.0, 1542.0 * 8.0, ia, ib, c));
        assert_eq!(annex_b.ceil(), 12.0);
        let a_out = output_bucket(ia, hi_a * 8.0, lo_a * 8.0);
        let hi_b = bytes(hi_credit(ib, c, 1542.0 * 8.0, a_out).unwrap());
        assert!((hi_b - 12.48).abs() < 0.01 && hi_b > annex_b, "{hi_b} vs {annex_b}");
    }

    /// A random port on a link of 1 bit per ns: shaped classes on top (distinct priorities),
    /// one greedy best-effort class below (always two frames waiting), shaped classes fed by
    /// bursts at random times within their idle slopes. No shaped class's credit ever exceeds the
    /// hiCredit the analysis uses. Also counts the runs where class B went above Annex L's
    /// hiCredit_B (two shaped classes), which the analysis does not rely on.
    #[test]
    fn credits_stay_within_hi_credit_on_random_ports() {
        use rand::{Rng, SeedableRng};
        let mut above_annex_l = 0;
        // The highest ratio of credit to hiCredit seen, for the highest shaped class and below.
        let mut closest = [0.0f64; 2];
        for seed in 0..200u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let (shaped, n, slopes, idle, lmax) = random_shaped_port(&mut rng, 0.02);
            let mut s = CreditBased::new(&classes(&(0..n as u32).collect::<Vec<_>>()), &slopes, 1e9);
            let mut id = 0u32;
            let mut now = 0i64;
            let mut free_at = 0i64;
            let mut be_waiting = 0;
            // Next arrival time of each shaped class, spaced so the class stays within its slope.
            let mut next: Vec<f64> = (0..shaped).map(|_| rng.gen_range(0.0..20_000.0)).collect();
            for _ in 0..20_000 {
                for k in 0..shaped {
                    while next[k] <= now as f64 {
                        let burst = rng.gen_range(1..=4u32);
                        for _ in 0..burst {
                            let bytes = rng.gen_range(84..=lmax[k]);
                            s.enqueue(frame(id, k as u16, bytes), now);
                            id += 1;
                            next[k] += (bytes * 8) as f64 / idle[k] * rng.gen_range(1.0..3.0);
                        }
                    }
                }
                while be_waiting < 2 {
                    s.enqueue(frame(id, shaped as u16, rng.gen_range(84..=lmax[shaped])), now);
                    id += 1;
                    be_waiting += 1;
                }
                if now >= free_at {
                    let q = s.dequeue(now).expect("best effort always waits");
                    if q.class as usize == shaped {
                        be_waiting -= 1;
                    }
                    free_at = now + q.wire_bits as i64;
                }
                let arrival = next.iter().cloned().fold(f64::INFINITY, f64::min).ceil() as i64;
                now = free_at.min(arrival).max(now + 1);
            }
            let (mut tb, lower) = ((0.0, 0.0), lmax[shaped] as f64 * 8.0);
            for k in 0..shaped {
                let below = lmax[k + 1..].iter().map(|&b| b as f64 * 8.0).fold(0.0, f64::max);
                let hi = hi_credit(idle[k], 1.0, below, tb).expect("slopes within the link");
                let lo = lo_credit(idle[k], 1.0, lmax[k] as f64 * 8.0);
                let got = s.max_credit_of_class(k);
                assert!(got <= hi + 1e-6, "seed {seed} class {k}: credit {got} > hiCredit {hi}");
                closest[k.min(1)] = closest[k.min(1)].max(got / hi);
                if k == 1 && shaped == 2 {
                    let annex =
                        annex_l::hi_credit_b(lower.max(below), lmax[0] as f64 * 8.0, idle[0], idle[1], 1.0);
                    above_annex_l += (got > annex + 1e-6) as u32;
                }
                let (b, r) = output_bucket(idle[k], hi, lo);
                tb = (tb.0 + b, tb.1 + r);
            }
        }
        eprintln!("class B above Annex L's hiCredit_B in {above_annex_l} runs; closest {closest:?}");
        // Not vacuous: the highest class's bound is exact (a largest lower frame ahead of it),
        // and it is reached.
        assert!(closest[0] > 0.99, "{closest:?}");
    }

    /// Random gated ports (link 1 bit/ns): one to three shaped classes over an unshaped one, a
    /// gate list of two to four entries of 15 to 60 µs (each class open in at least one, others at
    /// random, so gates overlap and frames block window starts), a random base time. No shaped
    /// class's credit exceeds the hiCredit of the gated analysis ([`gated_hi_credit`], the
    /// module's derivation). With the credit growing while the gate is closed (against 802.1Q), a
    /// class opens its window with the credit of the closed time and the same check fails: the
    /// bound depends on the rule, and this test sees it.
    #[test]
    fn credit_held_while_closed_stays_within_hi_credit() {
        let run = |accumulate: bool| -> (u32, f64) {
            use crate::model::GateEntry;
            use crate::units::Duration;
            use rand::{Rng, SeedableRng};
            let (mut above, mut closest, mut checked) = (0, 0.0f64, 0);
            for seed in 0..120u64 {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
                let (shaped, n, slopes, idle, lmax) = random_shaped_port(&mut rng, 0.05);
                let m = rng.gen_range(2..=4usize);
                let entries: Vec<GateEntry> = (0..m)
                    .map(|e| GateEntry {
                        open: (0..n)
                            .filter(|&k| k % m == e || rng.gen_bool(0.3))
                            .map(|k| format!("c{k}"))
                            .collect(),
                        duration: Duration::from_us(rng.gen_range(15..60) as f64),
                    })
                    .collect();
                let cycle_us: f64 = entries.iter().map(|e| e.duration.secs() * 1e6).sum();
                let gates = super::super::tas::TasDiscipline {
                    cycle: Duration::from_us(cycle_us),
                    base_time: Duration::from_us(rng.gen_range(0..10) as f64),
                    entries: &entries,
                    scheduled: &[],
                    sync_error: Duration::default(),
                };
                let cls = classes(&(0..n as u32).collect::<Vec<_>>());
                let mut s = CreditBased::gated(&cls, &slopes, 1e9, Some(&gates));
                if accumulate {
                    s = s.accumulating_while_closed();
                }
                let (mut id, mut now, mut free_at, mut be_waiting) = (0u32, 0i64, 0i64, 0);
                let mut next: Vec<f64> = (0..shaped).map(|_| rng.gen_range(0.0..20_000.0)).collect();
                for _ in 0..20_000 {
                    for k in 0..shaped {
                        while next[k] <= now as f64 {
                            for _ in 0..rng.gen_range(1..=4u32) {
                                let bytes = rng.gen_range(84..=lmax[k]);
                                s.enqueue(frame(id, k as u16, bytes), now);
                                id += 1;
                                next[k] += (bytes * 8) as f64 / idle[k] * rng.gen_range(2.0..6.0);
                            }
                        }
                    }
                    while be_waiting < 2 {
                        s.enqueue(frame(id, shaped as u16, rng.gen_range(84..=lmax[shaped])), now);
                        id += 1;
                        be_waiting += 1;
                    }
                    let mut t = next.iter().cloned().fold(f64::INFINITY, f64::min).ceil() as i64;
                    if now >= free_at {
                        match s.dequeue(now) {
                            Some(q) => {
                                be_waiting -= (q.class as usize == shaped) as i32;
                                free_at = now + q.wire_bits as i64;
                                t = t.min(free_at);
                            }
                            None => t = t.min(s.next_ready(now).expect("frames wait")),
                        }
                    } else {
                        t = t.min(free_at);
                    }
                    now = t.max(now + 1);
                }
                // The analysis's hiCredit for each shaped class, highest first.
                let bits = |k: usize| lmax[k] as f64 * 8.0;
                let mut tb = (0.0, 0.0);
                for (k, &slope) in idle.iter().enumerate() {
                    let name = format!("c{k}");
                    let windows = gates.windows(&[name.as_str()]);
                    let (rho, theta, blocking) = match windows {
                        None => (1.0, 0.0, 0.0),
                        Some(w) => {
                            let usable: Vec<(f64, f64)> = w
                                .iter()
                                .map(|&(o, c)| (o, c - bits(k) * 1e-9))
                                .filter(|(a, b)| b > a)
                                .collect();
                            let (rho, theta) =
                                super::super::tas::supply_bound(&usable, cycle_us * 1e-6).unwrap();
                            let blocking: f64 = w
                                .iter()
                                .map(|&(o, _)| {
                                    (0..n)
                                        .filter(|&j| {
                                            j != k && gates.open_across(&[format!("c{j}").as_str()], o)
                                        })
                                        .map(bits)
                                        .fold(0.0, f64::max)
                                })
                                .sum();
                            (rho, theta, blocking)
                        }
                    };
                    let below = (k + 1..n).map(bits).fold(0.0, f64::max);
                    // In bits and ns: the link is 1 bit/ns, times in seconds become ns.
                    let g = GateSupply { rho, theta: theta * 1e9, blocking, cycle: cycle_us * 1e3 };
                    // No bound (the higher classes' rate reaches the gate's usable share): the
                    // analysis says so, and the classes below have none either.
                    let Some(hi) = gated_hi_credit(slope, 1.0, below, tb, g) else { break };
                    checked += 1;
                    let got = s.max_credit_of_class(k);
                    above += (got > hi + 1e-6) as u32;
                    closest = closest.max(got / hi);
                    let (b, r) = output_bucket(slope, hi, lo_credit(slope, 1.0, bits(k)));
                    tb = (tb.0 + b, tb.1 + r);
                }
            }
            assert!(checked > 100, "only {checked} classes with a bound");
            (above, closest)
        };
        let (above, closest) = run(false);
        assert_eq!(above, 0, "a credit above the gated hiCredit");
        // Not vacuous: credits come close to the bound.
        eprintln!("closest credit / hiCredit: {closest}");
        assert!(closest > 0.5, "{closest}");
        let (above, _) = run(true);
        assert!(above > 0, "credit growing while the gate is closed stayed within hiCredit");
    }

    /// Behind a gate, by hand (link 1 bit/ns): c0 shaped at I = 0.25, its gate open [0, 10) µs of
    /// a 20 µs cycle (c1's the rest); four 1000-bit frames at 0. F0 at 0 leaves the credit at
    /// −750, which takes 3000 ns of usable time ([0, 9000] for a 1000 ns frame): F1 at 4000, F2 at
    /// 8000 (ending at 9000, before the close). The credit, −750 again, is held from 9000 (no
    /// usable time left) through the closed gate and grows from 20000: F3 at 23000. Were the
    /// credit to grow while closed, it would be back at 0 by 12000 and F3 would go at 20000.
    #[test]
    fn credit_is_held_while_the_gate_is_closed_by_hand() {
        use crate::model::GateEntry;
        use crate::units::Duration;
        let entries = [
            GateEntry { open: vec!["c0".into()], duration: Duration::from_us(10.0) },
            GateEntry { open: vec!["c1".into()], duration: Duration::from_us(10.0) },
        ];
        let gates = super::super::tas::TasDiscipline {
            cycle: Duration::from_us(20.0),
            base_time: Duration::from_us(0.0),
            entries: &entries,
            scheduled: &[],
            sync_error: Duration::default(),
        };
        let mut slopes = BTreeMap::new();
        slopes.insert("c0".to_string(), 0.25e9);
        let four = [(0, 0, 125), (0, 0, 125), (0, 0, 125), (0, 0, 125)];
        let mut s = CreditBased::gated(&classes(&[0, 1]), &slopes, 1e9, Some(&gates));
        assert_eq!(run(&mut s, &four), [(0, 0), (1, 4000), (2, 8000), (3, 23000)]);
        let mut s =
            CreditBased::gated(&classes(&[0, 1]), &slopes, 1e9, Some(&gates)).accumulating_while_closed();
        assert_eq!(run(&mut s, &four), [(0, 0), (1, 4000), (2, 8000), (3, 20000)]);
    }
}
