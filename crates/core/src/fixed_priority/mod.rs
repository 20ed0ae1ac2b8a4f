//! Fixed-priority response-time analysis: preemptive tasks, non-preemptive messages on CAN-like
//! buses, holistic chains over processors and a bus, and priority assignment (deadline
//! monotonic, Audsley's OPA), with the DOPA partitioning of seed 001E.
//!
//! Pure computation on integer [`Ticks`], independent of the network model: the model passes
//! nanoseconds, the tests use abstract units. Conventions (see docs/FIXED_PRIORITY.md):
//!
//! * A response time runs from the *arrival* of an instance (the instant it would be released
//!   without jitter) to its completion, so it includes the item's own release jitter.
//! * A lower priority number is a higher priority (as CAN identifiers). Equal numbers on one
//!   resource interfere with each other both ways, which is safe whatever the tie-breaking.
//! * Every result is a bound or [`Response::Unbounded`] with a one-line reason; no analysis
//!   panics on valid input or iterates without limit ([`Limits`]).
//!
//! * [`rta`]: preemptive tasks with jitter, blocking and arbitrary deadlines.
//! * [`nonpreemptive`]: CAN-like buses (Davis et al. 2007), priority and FIFO transmit queues.
//! * [`holistic`]: chains of tasks and messages (Tindell & Clark 1994).
//! * [`assignment`]: deadline monotonic and Audsley's optimal priority assignment.
//! * [`dopa`], [`randfixedsum`]: seed 001E (partitioning, task-set generator; its Fig. 6 is in
//!   [`crate::experiments::dopa_fig6`]).
//! * [`partition_supply`]: time partitions (ARINC 653 windows in a major frame): supply-bound
//!   function and the latency of a request crossing partitions (seed 001B).

pub mod assignment;
mod busy;
pub mod dopa;
pub mod holistic;
pub mod nonpreemptive;
pub mod partition_supply;
pub mod randfixedsum;
pub mod rta;

use std::fmt;

/// Time in integer ticks (nanoseconds when called from the model).
pub type Ticks = i64;

/// Priority number: lower is higher priority.
pub type Priority = i64;

/// Largest accepted input time; keeps every intermediate sum of the analyses inside `i64`.
pub const MAX_TICKS: Ticks = 1 << 60;

/// Worst-case response time of one item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// A finite bound, in ticks from the arrival of the instance.
    Bounded(Ticks),
    /// No finite bound was established; the reason names the cause (e.g. the utilisation).
    Unbounded(String),
}

impl Response {
    /// The bound, if finite.
    pub fn bound(&self) -> Option<Ticks> {
        match self {
            Response::Bounded(r) => Some(*r),
            Response::Unbounded(_) => None,
        }
    }

    /// Why there is no finite bound, if there is none.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Response::Bounded(_) => None,
            Response::Unbounded(why) => Some(why),
        }
    }

    /// Finite and at most `deadline`.
    pub fn meets(&self, deadline: Ticks) -> bool {
        self.bound().is_some_and(|r| r <= deadline)
    }
}

impl fmt::Display for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Response::Bounded(r) => write!(f, "{r}"),
            Response::Unbounded(why) => write!(f, "unbounded ({why})"),
        }
    }
}

/// Result of the analysis of one task or message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseDetail {
    /// Worst-case response time from arrival (own jitter included).
    pub response: Response,
    /// Response of the first instance of the busy period alone: the answer of a
    /// single-instance analysis, optimistic when deadlines exceed periods.
    pub first_instance: Option<Ticks>,
    /// Instances examined in the busy period.
    pub instances: u64,
    /// Instance (0-based) that gave the worst response.
    pub worst_instance: u64,
}

impl ResponseDetail {
    /// Before any instance is examined: `instances` of them in the busy period (0: not known yet).
    pub(crate) fn starting(instances: u64) -> Self {
        ResponseDetail { response: Response::Bounded(0), first_instance: None, instances, worst_instance: 0 }
    }

    pub(crate) fn unbounded(reason: String) -> Self {
        ResponseDetail {
            response: Response::Unbounded(reason),
            first_instance: None,
            instances: 0,
            worst_instance: 0,
        }
    }
}

/// Bad input, with the place named: `tasks[3].period: must be in [1, 2^60], got 0`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

/// Caps that keep every fixed-point iteration finite. Hitting one gives
/// [`Response::Unbounded`] with the cap named: a safe answer, never a wrong number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Fixed-point steps allowed for the analysis of one item (all instances of its busy period).
    pub max_steps: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_steps: 10_000_000 }
    }
}

/// Items that carry a priority number, so an order can be written into them.
pub trait HasPriority {
    /// The item's priority number (lower is higher priority).
    fn priority_mut(&mut self) -> &mut Priority;
}

/// Priority numbers from an order (indices, highest priority first): `order[k]` gets `k`.
pub fn priorities_from_order(order: &[usize], n: usize) -> Result<Vec<Priority>, InputError> {
    if order.len() != n {
        return Err(InputError(format!("order: has {} entries for {n} items", order.len())));
    }
    let mut prio = vec![-1; n];
    for (level, &item) in order.iter().enumerate() {
        if item >= n {
            return Err(InputError(format!("order[{level}]: item {item} out of range (n = {n})")));
        }
        if prio[item] >= 0 {
            return Err(InputError(format!("order[{level}]: item {item} appears twice")));
        }
        prio[item] = level as Priority;
    }
    Ok(prio)
}

/// Writes an order (highest priority first) into the items' priority numbers.
pub fn apply_order<T: HasPriority>(items: &mut [T], order: &[usize]) -> Result<(), InputError> {
    let prio = priorities_from_order(order, items.len())?;
    for (item, p) in items.iter_mut().zip(prio) {
        *item.priority_mut() = p;
    }
    Ok(())
}

/// The order (highest priority first) given by priority numbers; ties keep index order.
pub fn order_from_priorities(priorities: &[Priority]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..priorities.len()).collect();
    order.sort_by_key(|&i| (priorities[i], i));
    order
}

pub(crate) fn check_range(what: &str, value: Ticks, min: Ticks) -> Result<(), InputError> {
    if value < min || value > MAX_TICKS {
        return Err(InputError(format!("{what}: must be in [{min}, 2^60], got {value}")));
    }
    Ok(())
}
