//! Priority assignment: deadline monotonic (Leung & Whitehead 1982) with a caller-chosen key,
//! and Audsley's optimal priority assignment (OPA; Audsley 1991/2001) over any test that is
//! OPA-compatible in the sense of Davis & Burns ("Priority assignment for global fixed
//! priority pre-emptive scheduling in multiprocessor real-time systems", RTSS 2009):
//!
//! 1. the verdict for an item may depend on the *set* of higher-priority items, not on their
//!    relative order;
//! 2. likewise for the set of lower-priority items;
//! 3. an item schedulable at some level stays schedulable when moved one level up.
//!
//! The preemptive test with jitter, blocking and arbitrary deadlines ([`super::rta`]) and the
//! CAN test of Davis et al. 2007 ([`super::nonpreemptive`], priority queues; shown compatible by
//! Davis & Burns, "Robust priority assignment for messages on Controller Area Network (CAN)",
//! Real-Time Systems 41(2), 2009) both qualify.
//! OPA then finds a feasible order whenever one exists (checked against brute force below).

use super::busy::Stream;
use super::nonpreemptive::{self, Bus, Message};
use super::rta::{self, Task};
use super::{InputError, Limits};

/// A schedulability test usable by [`audsley`].
pub trait OpaTest {
    /// Number of items (indexed 0 … n − 1).
    fn item_count(&self) -> usize;

    /// Is `item` schedulable when every item of `higher` has a higher priority and every item of
    /// `lower` a lower one (the order inside each set must not matter)?
    fn schedulable(&mut self, item: usize, higher: &[usize], lower: &[usize]) -> bool;
}

/// OPA could not complete: at the lowest free level no remaining item is schedulable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpaFailure {
    /// Items already placed, lowest priority first.
    pub placed_lowest_first: Vec<usize>,
    /// The items left, none of which fits the lowest free level: the ones that cannot be placed.
    pub unplaceable: Vec<usize>,
}

/// Audsley's algorithm scanning candidates in index order at each level. Returns the order,
/// highest priority first.
pub fn audsley<T: OpaTest + ?Sized>(test: &mut T) -> Result<Vec<usize>, OpaFailure> {
    let scan: Vec<usize> = (0..test.item_count()).collect();
    audsley_scan(test, &scan)
}

/// Audsley's algorithm trying the candidates of each level in `scan` order (a permutation of
/// the items). The first schedulable candidate takes the level; which one is arbitrary for
/// optimality but shapes the result (TV-001E-2), and a good scan order (e.g. the most slack
/// first) makes the first candidate fit almost always, so OPA costs O(n) tests instead of O(n²).
pub fn audsley_scan<T: OpaTest + ?Sized>(test: &mut T, scan: &[usize]) -> Result<Vec<usize>, OpaFailure> {
    debug_assert_eq!(scan.len(), test.item_count(), "scan must list every item once");
    let mut unassigned = scan.to_vec();
    let mut lowest_first = Vec::with_capacity(unassigned.len());
    let mut higher = Vec::with_capacity(unassigned.len());
    while !unassigned.is_empty() {
        let mut chosen = None;
        for (pos, &candidate) in unassigned.iter().enumerate() {
            higher.clear();
            higher.extend(unassigned.iter().copied().filter(|&x| x != candidate));
            if test.schedulable(candidate, &higher, &lowest_first) {
                chosen = Some(pos);
                break;
            }
        }
        match chosen {
            Some(pos) => lowest_first.push(unassigned.remove(pos)),
            None => return Err(OpaFailure { placed_lowest_first: lowest_first, unplaceable: unassigned }),
        }
    }
    lowest_first.reverse();
    Ok(lowest_first)
}

/// Deadline-monotonic order (highest priority first): increasing `key`, ties by index. The key
/// is the caller's choice (relative deadline, D − J, a local window, …).
pub fn deadline_monotonic<K: Ord>(n: usize, key: impl Fn(usize) -> K) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (key(i), i));
    order
}

/// The verdict of `test` for every item under a complete order (highest priority first),
/// indexed by item.
pub fn check_order<T: OpaTest + ?Sized>(test: &mut T, order: &[usize]) -> Vec<bool> {
    let mut verdict = vec![false; test.item_count()];
    for (level, &item) in order.iter().enumerate() {
        verdict[item] = test.schedulable(item, &order[..level], &order[level + 1..]);
    }
    verdict
}

/// Preemptive test of [`super::rta`] (jitter, blocking, arbitrary deadlines): R ≤ D.
#[derive(Debug, Clone)]
pub struct PreemptiveTest<'a> {
    tasks: &'a [Task],
    limits: Limits,
    hp: Vec<Stream>,
}

impl<'a> PreemptiveTest<'a> {
    /// The test for `tasks` (their priority numbers are ignored).
    pub fn new(tasks: &'a [Task]) -> Result<Self, InputError> {
        for (i, t) in tasks.iter().enumerate() {
            t.validate(&format!("tasks[{i}]"))?;
        }
        Ok(PreemptiveTest { tasks, limits: Limits::default(), hp: Vec::new() })
    }
}

impl OpaTest for PreemptiveTest<'_> {
    fn item_count(&self) -> usize {
        self.tasks.len()
    }

    fn schedulable(&mut self, item: usize, higher: &[usize], _lower: &[usize]) -> bool {
        self.hp.clear();
        self.hp.extend(higher.iter().map(|&k| self.tasks[k].stream()));
        let t = &self.tasks[item];
        rta::response(t.stream(), t.blocking, &self.hp, &self.limits).response.meets(t.deadline)
    }
}

/// Non-preemptive test of Davis et al. 2007 on a bus of priority queues: blocking by the
/// longest lower-priority message, R ≤ D.
#[derive(Debug, Clone)]
pub struct NonPreemptiveTest<'a> {
    messages: &'a [Message],
    tau_bit: super::Ticks,
    limits: Limits,
    hp: Vec<Stream>,
}

impl<'a> NonPreemptiveTest<'a> {
    /// The test for `messages` on `bus` (their priority numbers are ignored). Refuses buses with
    /// FIFO nodes: the FIFO analysis needs contiguous priorities per node, which is a constraint
    /// on the order OPA would have to respect.
    pub fn new(messages: &'a [Message], bus: &Bus) -> Result<Self, InputError> {
        super::check_range("bus.tau_bit", bus.tau_bit, 0)?;
        for (i, m) in messages.iter().enumerate() {
            if bus.fifo_nodes.contains(&m.node) {
                return Err(InputError(format!(
                    "messages[{i}].node: node {} uses a FIFO queue; OPA here assumes priority queues",
                    m.node
                )));
            }
        }
        for (i, m) in messages.iter().enumerate() {
            m.validate(&format!("messages[{i}]"))?;
        }
        Ok(NonPreemptiveTest { messages, tau_bit: bus.tau_bit, limits: Limits::default(), hp: Vec::new() })
    }
}

impl OpaTest for NonPreemptiveTest<'_> {
    fn item_count(&self) -> usize {
        self.messages.len()
    }

    fn schedulable(&mut self, item: usize, higher: &[usize], lower: &[usize]) -> bool {
        self.hp.clear();
        self.hp.extend(higher.iter().map(|&k| self.messages[k].stream()));
        let blocking = nonpreemptive::blocking_by(lower.iter().map(|&k| self.messages[k].transmission));
        let m = &self.messages[item];
        nonpreemptive::response(m.stream(), blocking, &self.hp, self.tau_bit, &self.limits)
            .response
            .meets(m.deadline)
    }
}

#[cfg(test)]
mod tests;
