//! Non-preemptive fixed priority on a CAN-like bus: the revised analysis of Davis, Burns, Bril &
//! Lukkien ("Controller Area Network (CAN) schedulability analysis: refuted, revisited and
//! revised", Real-Time Systems 35(3), 2007), and nodes whose transmit queue is FIFO.
//!
//! **Priority queues** (every node offers its highest-priority ready frame to arbitration).
//! For message m: blocking B_m = max C_k over lower-priority messages; level-m busy period
//! t_m = B_m + Σ_{k∈hp(m)∪{m}} ⌈(t_m + J_k)/T_k⌉·C_k; Q_m = ⌈(t_m + J_m)/T_m⌉ instances, and for
//! q = 0 … Q_m − 1 the queuing delay
//!
//! ```text
//! w_m(q) = B_m + q·C_m + Σ_{k∈hp(m)} (⌊(w_m(q) + J_k)/T_k⌋ + 1)·C_k        (τ_bit = 0)
//! w_m(q) = B_m + q·C_m + Σ_{k∈hp(m)} ⌈(w_m(q) + J_k + τ_bit)/T_k⌉·C_k      (τ_bit > 0)
//! R_m = max_q (J_m + w_m(q) − q·T_m + C_m)
//! ```
//!
//! A higher-priority frame queued at the very instant w at which m would start still wins that
//! arbitration, so a zero bit time behaves as an infinitesimal one (⌊x/T⌋ + 1, not ⌈x/T⌉); with
//! integer ticks τ_bit = 0 and τ_bit = 1 give the same counts.
//!
//! **FIFO queues** (a node transmits its frames in queuing order): see [`analyse_bus`] and
//! docs/FIXED_PRIORITY.md. The analysis follows the idea of Davis, Kollmann, Pollex & Slomka
//! ("CAN schedulability analysis with FIFO queues", ECRTS 2011): while a FIFO node holds a
//! frame it competes at least at the priority of its lowest-priority message L, so everything
//! queued before m in its FIFO, plus higher-priority-than-L frames of other nodes, delays m.
//! The busy-period form here (several instances, jitter) is derived in the docs.

use super::busy::{self, Budget, Stream};
use super::{check_range, HasPriority, InputError, Limits, Priority, Response, ResponseDetail, Ticks};

/// How a node orders the frames waiting in its transmit queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueuePolicy {
    /// Highest priority first (the assumption of the classic CAN analysis).
    Priority,
    /// Queuing order, whatever the identifiers.
    Fifo,
}

/// A sporadic message on a non-preemptive fixed-priority bus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Worst-case transmission time C (for CAN: the stuffed frame length × bit time).
    pub transmission: Ticks,
    /// Period or minimum inter-arrival time T.
    pub period: Ticks,
    /// Relative deadline D, from arrival; may exceed the period.
    pub deadline: Ticks,
    /// Queuing jitter J: queued in [arrival, arrival + J].
    pub jitter: Ticks,
    /// Priority number (CAN identifier); lower is higher priority.
    pub priority: Priority,
    /// Sending node (selects its transmit queue policy).
    pub node: usize,
}

impl Message {
    /// C, T, D on node 0, no jitter, priority 0.
    pub fn new(transmission: Ticks, period: Ticks, deadline: Ticks) -> Self {
        Message { transmission, period, deadline, jitter: 0, priority: 0, node: 0 }
    }

    /// The same message with queuing jitter `jitter`.
    pub fn with_jitter(mut self, jitter: Ticks) -> Self {
        self.jitter = jitter;
        self
    }

    /// The same message with priority number `priority`.
    pub fn with_priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }

    /// The same message sent by `node`.
    pub fn on_node(mut self, node: usize) -> Self {
        self.node = node;
        self
    }

    pub(crate) fn stream(&self) -> Stream {
        Stream { c: self.transmission, t: self.period, j: self.jitter }
    }

    pub(crate) fn validate(&self, at: &str) -> Result<(), InputError> {
        check_range(&format!("{at}.transmission"), self.transmission, 0)?;
        check_range(&format!("{at}.period"), self.period, 1)?;
        check_range(&format!("{at}.deadline"), self.deadline, 0)?;
        check_range(&format!("{at}.jitter"), self.jitter, 0)
    }
}

impl HasPriority for Message {
    fn priority_mut(&mut self) -> &mut Priority {
        &mut self.priority
    }
}

/// The bus: bit time and the transmit-queue policy of each node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Bus {
    /// Bit time τ_bit; 0 is read as infinitesimal (see the module doc).
    pub tau_bit: Ticks,
    /// Nodes whose transmit queue is FIFO; every other node uses a priority queue.
    pub fifo_nodes: Vec<usize>,
}

impl Bus {
    /// A bus of bit time `tau_bit` whose nodes all use priority queues.
    pub fn new(tau_bit: Ticks) -> Self {
        Bus { tau_bit, fifo_nodes: Vec::new() }
    }

    /// The same bus with `node` using a FIFO transmit queue.
    pub fn with_fifo_node(mut self, node: usize) -> Self {
        if !self.fifo_nodes.contains(&node) {
            self.fifo_nodes.push(node);
        }
        self
    }

    /// The transmit-queue policy of `node`.
    pub fn policy(&self, node: usize) -> QueuePolicy {
        if self.fifo_nodes.contains(&node) {
            QueuePolicy::Fifo
        } else {
            QueuePolicy::Priority
        }
    }
}

/// Per-message result of [`analyse_bus`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageResponse {
    /// Response bound (queuing jitter, queuing delay and transmission) and busy-period detail.
    pub detail: ResponseDetail,
    /// Blocking used: the longest lower-priority frame that may hold the bus.
    pub blocking: Ticks,
    /// Policy of the sending node's queue.
    pub queue: QueuePolicy,
    /// Bounded and within the deadline.
    pub schedulable: bool,
}

impl MessageResponse {
    /// The worst-case response time.
    pub fn response(&self) -> &Response {
        &self.detail.response
    }
}

/// Frames of `s` that can win an arbitration at or before queuing delay `x`: those queued in
/// [0, x] (τ_bit = 0, infinitesimal) or [0, x + τ_bit).
#[inline]
fn queued_by(x: Ticks, s: &Stream, tau_bit: Ticks) -> Ticks {
    if tau_bit == 0 {
        x.saturating_add(s.j) / s.t + 1
    } else {
        busy::ceil_div(x.saturating_add(s.j).saturating_add(tau_bit), s.t)
    }
}

#[inline]
fn hp_interference(x: Ticks, hp: &[Stream], tau_bit: Ticks) -> Ticks {
    hp.iter().fold(0, |acc: Ticks, s| acc.saturating_add(queued_by(x, s, tau_bit).saturating_mul(s.c)))
}

/// Davis et al. (2007) for one priority-queued message given its higher-priority messages and
/// its blocking. The core of the plain, holistic, OPA and DOPA bus tests.
pub(crate) fn response(
    own: Stream,
    blocking: Ticks,
    hp: &[Stream],
    tau_bit: Ticks,
    limits: &Limits,
) -> ResponseDetail {
    let horizon = match busy::horizon(&[own], hp, blocking) {
        Ok(h) => h,
        Err(why) => return ResponseDetail::unbounded(why),
    };
    let mut budget = Budget::new(limits.max_steps);
    let busy_period =
        match busy::least_fixed_point(blocking.saturating_add(own.c), blocking, horizon, &mut budget, |x| {
            busy::demand(x, std::slice::from_ref(&own)).saturating_add(busy::demand(x, hp))
        }) {
            Ok(t) => t,
            Err(why) => return ResponseDetail::unbounded(why),
        };
    let instances = busy::ceil_div(busy_period + own.j, own.t).max(1);
    let mut detail = ResponseDetail::starting(instances as u64);
    let mut worst = Ticks::MIN;
    let mut w = blocking;
    for q in 0..instances {
        if let Err(why) = budget.spend() {
            return ResponseDetail::unbounded(why);
        }
        let base = blocking.saturating_add(q.saturating_mul(own.c));
        // w_m(q) ≥ w_m(q−1) + C_m.
        let start = if q == 0 { base } else { w.saturating_add(own.c) };
        w = match busy::least_fixed_point(start, base, horizon, &mut budget, |x| {
            hp_interference(x, hp, tau_bit)
        }) {
            Ok(w) => w,
            Err(why) => return ResponseDetail::unbounded(why),
        };
        let r = own.j + w - q * own.t + own.c;
        if q == 0 {
            detail.first_instance = Some(r);
        }
        if r > worst {
            worst = r;
            detail.worst_instance = q as u64;
        }
    }
    detail.response = Response::Bounded(worst);
    detail
}

/// Largest transmission time among `lower`, 0 if empty.
pub(crate) fn blocking_by(lower: impl Iterator<Item = Ticks>) -> Ticks {
    lower.max().unwrap_or(0)
}

/// Response bounds of the messages of one FIFO queue (`group`, indices into `messages`).
///
/// Let L be the lowest priority in the group. In a busy period of "level L*" work (frames of
/// the group, and frames of other nodes with priority above L) that starts at t_s, the node
/// always offers a frame at priority ≥ L, so only one lower frame (the blocking B) is sent.
/// Instance q of m, arrived at t_s + b and queued at t_s + a (b ≤ a ≤ b + J_m), starts after
/// the blocking frame, every frame of the group queued in [t_s, t_s + a] (FIFO order) and the
/// higher-than-L frames of other nodes; the response is w + C_m − b.
fn fifo_group(
    messages: &[Message],
    group: &[usize],
    hp_other: &[Stream],
    blocking: Ticks,
    tau_bit: Ticks,
    limits: &Limits,
) -> Vec<ResponseDetail> {
    let mut level: Vec<Stream> = group.iter().map(|&k| messages[k].stream()).collect();
    level.extend_from_slice(hp_other);
    let unbounded_all = |why: String| group.iter().map(|_| ResponseDetail::unbounded(why.clone())).collect();
    let horizon = match busy::horizon(&level, &[], blocking) {
        Ok(h) => h,
        Err(why) => return unbounded_all(why),
    };
    let mut budget = Budget::new(limits.max_steps);
    let min_c = group.iter().map(|&k| messages[k].transmission).min().unwrap_or(0);
    let busy_period = match busy::least_fixed_point(blocking + min_c, blocking, horizon, &mut budget, |x| {
        busy::demand(x, &level)
    }) {
        Ok(t) => t,
        Err(why) => return unbounded_all(why),
    };

    let mut out = Vec::with_capacity(group.len());
    let mut candidates: Vec<(Ticks, Ticks)> = Vec::new();
    for &m in group {
        let own = messages[m].stream();
        let others: Vec<Stream> = group.iter().filter(|&&k| k != m).map(|&k| messages[k].stream()).collect();
        let mut budget = Budget::new(limits.max_steps);
        let instances = busy::ceil_div(busy_period + own.j, own.t).max(1);
        let mut detail = ResponseDetail::starting(instances as u64);
        let mut worst = Ticks::MIN;
        let mut failure = None;
        'instances: for q in 0..instances {
            // Instance q: arrival offset b ∈ [qT − J, (q+1)T − J), queued at a ≤ b + J. The
            // response w(a) + C − b peaks at the smallest b for each step of the counts of the
            // other messages of the group, which jump at a = x·T_k − J_k.
            let (lo, hi) = (q * own.t, ((q + 1) * own.t).min(busy_period));
            candidates.clear();
            candidates.push((lo.min(busy_period), q * own.t - own.j));
            for k in &others {
                let mut x = (lo + k.j) / k.t + 1;
                while x * k.t - k.j < hi {
                    let a = x * k.t - k.j;
                    candidates.push((a, a - own.j));
                    x += 1;
                    if let Err(why) = budget.spend() {
                        failure = Some(why);
                        break 'instances;
                    }
                }
            }
            for &(a, b) in &candidates {
                let ahead: Ticks = others
                    .iter()
                    .fold(0, |acc: Ticks, k| acc.saturating_add(((a + k.j) / k.t + 1).saturating_mul(k.c)));
                let base = blocking.saturating_add(q.saturating_mul(own.c)).saturating_add(ahead);
                let step = budget.spend().and_then(|()| {
                    busy::least_fixed_point(base, base, horizon, &mut budget, |x| {
                        hp_interference(x, hp_other, tau_bit)
                    })
                });
                let w = match step {
                    Ok(w) => w,
                    Err(why) => {
                        failure = Some(why);
                        break 'instances;
                    }
                };
                let r = w + own.c - b;
                if q == 0 && detail.first_instance.is_none() {
                    detail.first_instance = Some(r);
                }
                if r > worst {
                    worst = r;
                    detail.worst_instance = q as u64;
                }
            }
        }
        detail.response = match failure {
            Some(why) => Response::Unbounded(why),
            None => Response::Bounded(worst),
        };
        out.push(detail);
    }
    out
}

/// Response times of the messages on one bus, by their priority numbers.
///
/// Messages of priority-queued nodes get the Davis et al. (2007) analysis. Messages of a FIFO
/// node get the FIFO analysis (`fifo_group` in the source, derived in docs/FIXED_PRIORITY.md), which
/// needs each FIFO queue's priorities to be contiguous on the bus: no message of another node
/// may have a priority number between the lowest and highest of the queue (Davis et al. 2011
/// recommend exactly this "FIFO-adjacent" assignment). Otherwise the bus is refused with an
/// error naming the intruding message; with contiguous FIFO bands the priority-queue analysis
/// of the other messages stays valid. Equal priority numbers across nodes interfere both ways.
pub fn analyse_bus(messages: &[Message], bus: &Bus) -> Result<Vec<MessageResponse>, InputError> {
    analyse_bus_with(messages, bus, &Limits::default())
}

/// [`analyse_bus`] with explicit iteration limits.
pub fn analyse_bus_with(
    messages: &[Message],
    bus: &Bus,
    limits: &Limits,
) -> Result<Vec<MessageResponse>, InputError> {
    check_range("bus.tau_bit", bus.tau_bit, 0)?;
    for (i, m) in messages.iter().enumerate() {
        m.validate(&format!("messages[{i}]"))?;
    }
    let mut out: Vec<Option<MessageResponse>> = vec![None; messages.len()];

    // FIFO queues, one group per node.
    let mut fifo: Vec<usize> = bus.fifo_nodes.clone();
    fifo.sort_unstable();
    fifo.dedup();
    for &node in &fifo {
        let group: Vec<usize> = (0..messages.len()).filter(|&i| messages[i].node == node).collect();
        if group.is_empty() {
            continue;
        }
        let top = group.iter().map(|&i| messages[i].priority).min().expect("the group is not empty");
        let lowest = group.iter().map(|&i| messages[i].priority).max().expect("the group is not empty");
        if let Some(i) = (0..messages.len())
            .find(|&i| messages[i].node != node && (top..=lowest).contains(&messages[i].priority))
        {
            return Err(InputError(format!(
                "messages[{i}].priority: {} lies within the priorities {top}..={lowest} of node {node}'s FIFO \
                 queue; the FIFO analysis needs each FIFO queue's priorities to be contiguous on the bus",
                messages[i].priority
            )));
        }
        let hp_other: Vec<Stream> =
            messages.iter().filter(|m| m.node != node && m.priority < top).map(Message::stream).collect();
        let blocking = blocking_by(
            messages.iter().filter(|m| m.node != node && m.priority > lowest).map(|m| m.transmission),
        );
        for (&i, detail) in
            group.iter().zip(fifo_group(messages, &group, &hp_other, blocking, bus.tau_bit, limits))
        {
            let schedulable = detail.response.meets(messages[i].deadline);
            out[i] = Some(MessageResponse { detail, blocking, queue: QueuePolicy::Fifo, schedulable });
        }
    }

    for (i, m) in messages.iter().enumerate() {
        if out[i].is_some() {
            continue;
        }
        let hp: Vec<Stream> = messages
            .iter()
            .enumerate()
            .filter(|&(k, other)| k != i && other.priority <= m.priority)
            .map(|(_, other)| other.stream())
            .collect();
        let blocking =
            blocking_by(messages.iter().filter(|o| o.priority > m.priority).map(|o| o.transmission));
        let detail = response(m.stream(), blocking, &hp, bus.tau_bit, limits);
        let schedulable = detail.response.meets(m.deadline);
        out[i] = Some(MessageResponse { detail, blocking, queue: QueuePolicy::Priority, schedulable });
    }
    Ok(out.into_iter().map(|r| r.expect("every message analysed")).collect())
}

#[cfg(test)]
mod tests;
