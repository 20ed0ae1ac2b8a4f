//! Preemptive fixed-priority response-time analysis with release jitter, blocking and arbitrary
//! deadlines: Joseph & Pandya (1986), Lehoczky (1990, busy period with several instances),
//! Tindell, Burns & Wellings (1994, "An extendible approach for analysing fixed priority hard
//! real-time tasks", Real-Time Systems 6(2): jitter and arbitrary deadlines combined).
//!
//! For task i, the q-th instance (q = 0, 1, …) of the level-i busy period completes at the least
//! fixed point of
//!
//! ```text
//! w_i(q) = B_i + (q+1)·C_i + Σ_{j∈hp(i)} ⌈(w_i(q) + J_j)/T_j⌉·C_j
//! ```
//!
//! and R_i = max_q (w_i(q) − q·T_i + J_i). The busy period starts when instance 0, having
//! arrived J_i earlier, is released together with every higher-priority task (each compressed
//! by its jitter). Instance q+1 arrives at (q+1)·T_i − J_i and is released at once, so the
//! busy period has closed, and the examination stops, as soon as w_i(q) + J_i ≤ (q+1)·T_i.

use super::busy::{self, Budget, Stream};
use super::{check_range, HasPriority, InputError, Limits, Priority, Response, ResponseDetail, Ticks};

/// A sporadic task on a preemptive fixed-priority processor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// Worst-case execution time C.
    pub wcet: Ticks,
    /// Period or minimum inter-arrival time T.
    pub period: Ticks,
    /// Relative deadline D, from arrival; may exceed the period.
    pub deadline: Ticks,
    /// Release jitter J: release lies in [arrival, arrival + J].
    pub jitter: Ticks,
    /// Blocking B: longest time a lower-priority task can delay it (shared resources,
    /// non-preemptive sections).
    pub blocking: Ticks,
    /// Priority number; lower is higher priority.
    pub priority: Priority,
}

impl Task {
    /// C, T, D with no jitter, no blocking, priority 0.
    pub fn new(wcet: Ticks, period: Ticks, deadline: Ticks) -> Self {
        Task { wcet, period, deadline, jitter: 0, blocking: 0, priority: 0 }
    }

    /// The same task with release jitter `jitter`.
    pub fn with_jitter(mut self, jitter: Ticks) -> Self {
        self.jitter = jitter;
        self
    }

    /// The same task with blocking `blocking`.
    pub fn with_blocking(mut self, blocking: Ticks) -> Self {
        self.blocking = blocking;
        self
    }

    /// The same task with priority number `priority`.
    pub fn with_priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }

    pub(crate) fn stream(&self) -> Stream {
        Stream { c: self.wcet, t: self.period, j: self.jitter }
    }

    pub(crate) fn validate(&self, at: &str) -> Result<(), InputError> {
        check_range(&format!("{at}.wcet"), self.wcet, 0)?;
        check_range(&format!("{at}.period"), self.period, 1)?;
        check_range(&format!("{at}.deadline"), self.deadline, 0)?;
        check_range(&format!("{at}.jitter"), self.jitter, 0)?;
        check_range(&format!("{at}.blocking"), self.blocking, 0)
    }
}

impl HasPriority for Task {
    fn priority_mut(&mut self) -> &mut Priority {
        &mut self.priority
    }
}

/// Response-time analysis of one task given its higher-priority interferers.
///
/// `own` is the task as a stream (C, T, J); `blocking` is B. The core of every preemptive test
/// in this module family (plain, holistic, OPA, DOPA).
pub(crate) fn response(own: Stream, blocking: Ticks, hp: &[Stream], limits: &Limits) -> ResponseDetail {
    let horizon = match busy::horizon(&[own], hp, blocking) {
        Ok(h) => h,
        Err(why) => return ResponseDetail::unbounded(why),
    };
    let mut budget = Budget::new(limits.max_steps);
    let (c, t, j) = (own.c, own.t, own.j);
    let mut detail = ResponseDetail::starting(0);
    let mut worst = Ticks::MIN;
    // w_i(q) ≥ w_i(q−1) + C_i, so each instance starts from its predecessor's completion.
    let mut w = blocking;
    let mut q: Ticks = 0;
    loop {
        if let Err(why) = budget.spend() {
            return ResponseDetail::unbounded(why);
        }
        let base = blocking.saturating_add((q + 1).saturating_mul(c));
        w = match busy::least_fixed_point(w.saturating_add(c), base, horizon, &mut budget, |x| {
            busy::demand(x, hp)
        }) {
            Ok(w) => w,
            Err(why) => return ResponseDetail::unbounded(why),
        };
        let r = w - q * t + j;
        if q == 0 {
            detail.first_instance = Some(r);
        }
        if r > worst {
            worst = r;
            detail.worst_instance = q as u64;
        }
        detail.instances = q as u64 + 1;
        // Instance q+1 is released at (q+1)T − J; if it is not released before w_i(q), the
        // level-i busy period is over (Tindell, Burns & Wellings 1994).
        if w.saturating_add(j) <= (q + 1).saturating_mul(t) {
            break;
        }
        q += 1;
    }
    detail.response = Response::Bounded(worst);
    detail
}

/// Per-task result of [`analyse_preemptive`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskResponse {
    /// Response bound and busy-period detail.
    pub detail: ResponseDetail,
    /// Bounded and within the deadline.
    pub schedulable: bool,
}

impl TaskResponse {
    /// The worst-case response time.
    pub fn response(&self) -> &Response {
        &self.detail.response
    }
}

/// Higher-priority interferers of `i`: every other task whose priority number is not larger.
pub(crate) fn interferers_of(tasks: &[Task], i: usize) -> Vec<Stream> {
    tasks
        .iter()
        .enumerate()
        .filter(|&(k, t)| k != i && t.priority <= tasks[i].priority)
        .map(|(_, t)| t.stream())
        .collect()
}

/// Response times of tasks on one preemptive fixed-priority processor, by their priority
/// numbers (equal numbers interfere with each other).
pub fn analyse_preemptive(tasks: &[Task]) -> Result<Vec<TaskResponse>, InputError> {
    analyse_preemptive_with(tasks, &Limits::default())
}

/// [`analyse_preemptive`] with explicit iteration limits.
pub fn analyse_preemptive_with(tasks: &[Task], limits: &Limits) -> Result<Vec<TaskResponse>, InputError> {
    for (i, t) in tasks.iter().enumerate() {
        t.validate(&format!("tasks[{i}]"))?;
    }
    Ok((0..tasks.len())
        .map(|i| {
            let hp = interferers_of(tasks, i);
            let detail = response(tasks[i].stream(), tasks[i].blocking, &hp, limits);
            let schedulable = detail.response.meets(tasks[i].deadline);
            TaskResponse { detail, schedulable }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed_priority::apply_order;

    fn bounds(r: &[TaskResponse]) -> Vec<Option<Ticks>> {
        r.iter().map(|t| t.response().bound()).collect()
    }

    /// Oracle item 3 (Lehoczky 1990 example, MAST regression examples): τ1 (C 52, T 100,
    /// D 110), τ2 (C 52, T 140, D 154).
    #[test]
    fn lehoczky_arbitrary_deadlines() {
        let mut tasks = vec![Task::new(52, 100, 110), Task::new(52, 140, 154)];
        // Rate monotonic: τ1 high → R = 52, 156; τ2 misses.
        apply_order(&mut tasks, &[0, 1]).unwrap();
        let r = analyse_preemptive(&tasks).unwrap();
        assert_eq!(bounds(&r), [Some(52), Some(156)]);
        assert!(r[0].schedulable && !r[1].schedulable);
        // τ1 lowest: the second instance of its busy period is the worst, 208 − 100 = 108;
        // the first instance alone (a single-instance analysis) would give 104.
        apply_order(&mut tasks, &[1, 0]).unwrap();
        let r = analyse_preemptive(&tasks).unwrap();
        assert_eq!(bounds(&r), [Some(108), Some(52)]);
        assert_eq!(r[0].detail.first_instance, Some(104));
        assert_eq!(r[0].detail.worst_instance, 1);
        assert_eq!(r[0].detail.instances, 3);
        assert!(r.iter().all(|t| t.schedulable));
    }

    /// TV-001E-2/3 (seed catalogue §2E): a (1, 4, 3), b (2, 6, 5), c (3, 12, 12).
    #[test]
    fn dopa_catalogue_rta() {
        let mut tasks = vec![Task::new(1, 4, 3), Task::new(2, 6, 5), Task::new(3, 12, 12)];
        // b > a > c (the order OPA finds scanning a, b, c): b = 2, a = 3, c = 10.
        apply_order(&mut tasks, &[1, 0, 2]).unwrap();
        assert_eq!(bounds(&analyse_preemptive(&tasks).unwrap()), [Some(3), Some(2), Some(10)]);
        // Deadline monotonic a > b > c is feasible too, with R_c = 10 (3 → 6 → 7 → 9 → 10).
        apply_order(&mut tasks, &[0, 1, 2]).unwrap();
        let r = analyse_preemptive(&tasks).unwrap();
        assert_eq!(bounds(&r), [Some(1), Some(3), Some(10)]);
        assert!(r.iter().all(|t| t.schedulable));
    }

    /// TV-004-3: seed 004 Table 1 (m_1 10/200/20, server m_2 20/50/50, m_3 50/200/100), 1-unit
    /// packets preemptive at packet boundaries, so one packet of blocking at every level but
    /// the lowest; the server counts as a periodic stream of C = budget, T = period.
    #[test]
    fn network_sporadic_server_table1() {
        let tasks = vec![
            Task::new(10, 200, 20).with_priority(1).with_blocking(1),
            Task::new(20, 50, 50).with_priority(2).with_blocking(1),
            Task::new(50, 200, 100).with_priority(3),
        ];
        let r = analyse_preemptive(&tasks).unwrap();
        assert_eq!(bounds(&r), [Some(11), Some(31), Some(100)]);
        assert!(r.iter().all(|t| t.schedulable), "R_3 = 100 meets D_3 = 100 exactly");
    }

    /// Oracle item 6 (MAST regression example): sporadic server (normal priority 5, capacity 2,
    /// period 10) analysed as a periodic task C 2, T 10. MAST numbers priorities the other way
    /// round (higher is more urgent); here 6, 5, 4, 3 become 0, 1, 2, 3.
    #[test]
    fn sporadic_server_as_periodic_interferer() {
        let tasks = vec![
            Task::new(1, 5, 10).with_priority(0),  // t1, MAST prio 6
            Task::new(2, 10, 10).with_priority(1), // server, MAST prio 5
            Task::new(2, 12, 12).with_priority(2), // t2, MAST prio 4
            Task::new(3, 15, 15).with_priority(3), // t3, MAST prio 3
        ];
        let r = analyse_preemptive(&tasks).unwrap();
        // t1 = 1, t2 = 5, t3 = 9; the server itself: 2 + one job of t1 = 3.
        assert_eq!(bounds(&r), [Some(1), Some(3), Some(5), Some(9)]);
        assert!(r.iter().all(|t| t.schedulable));
    }

    #[test]
    fn jitter_counts_against_the_task_and_its_victims() {
        // The jittery task's response includes its own jitter (3 + 3), and two of its releases
        // can fall 7 apart, inside the low task's window: R_low = 5 + 2·3 = 11 (8 without jitter).
        let high = Task::new(3, 10, 10).with_priority(0);
        let low = Task::new(5, 20, 20).with_priority(1);
        assert_eq!(bounds(&analyse_preemptive(&[high.clone(), low.clone()]).unwrap()), [Some(3), Some(8)]);
        let r = analyse_preemptive(&[high.with_jitter(3), low]).unwrap();
        assert_eq!(bounds(&r), [Some(6), Some(11)]);
    }

    #[test]
    fn overload_is_unbounded_with_the_utilisation() {
        let tasks = vec![Task::new(3, 4, 4).with_priority(0), Task::new(2, 5, 5).with_priority(1)];
        let r = analyse_preemptive(&tasks).unwrap();
        assert_eq!(r[0].response().bound(), Some(3));
        let why = r[1].response().reason().unwrap();
        assert!(why.contains("overload: utilisation 1.1500 > 1"), "{why}");
        assert!(!r[1].schedulable);
    }

    #[test]
    fn full_utilisation_without_jitter_closes_at_the_hyperperiod() {
        let tasks = vec![Task::new(1, 2, 2).with_priority(0), Task::new(2, 4, 4).with_priority(1)];
        assert_eq!(bounds(&analyse_preemptive(&tasks).unwrap()), [Some(1), Some(4)]);
        let tasks =
            vec![Task::new(1, 2, 2).with_priority(0), Task::new(2, 4, 4).with_priority(1).with_jitter(1)];
        let r = analyse_preemptive(&tasks).unwrap();
        assert!(r[1].response().reason().unwrap().contains("utilisation is 1"));
    }

    #[test]
    fn step_budget_gives_unbounded_not_a_hang() {
        // The high task leaves 0.1 % of the processor: the low task's iteration closes the gap to
        // its fixed point (about 1e9) by a factor 0.999 per step, some 20 000 steps.
        let tasks = vec![
            Task::new(999, 1000, 1000).with_priority(0),
            Task::new(1_000_000, 1_000_000_000_000, 1_000_000_000_000).with_priority(1),
        ];
        let r = analyse_preemptive_with(&tasks, &Limits { max_steps: 1000 }).unwrap();
        assert_eq!(r[1].response().reason(), Some("no fixed point within 1000 iterations"));
        assert!(!r[1].schedulable);
        let r = analyse_preemptive(&tasks).unwrap();
        assert!(r[1].schedulable, "{:?}", r[1]);
    }

    #[test]
    fn equal_priorities_interfere_both_ways() {
        let tasks = vec![Task::new(2, 10, 10), Task::new(3, 10, 10)];
        assert_eq!(bounds(&analyse_preemptive(&tasks).unwrap()), [Some(5), Some(5)]);
    }

    /// Preemptive schedule of jobs (arrival, release) per task; the largest completion −
    /// arrival per task. Jobs of one task run in release order; ties by task index.
    fn simulate(tasks: &[Task], jobs: &[Vec<(Ticks, Ticks)>]) -> Vec<Ticks> {
        // (release, task, arrival, remaining)
        let mut all: Vec<(Ticks, usize, Ticks, Ticks)> = Vec::new();
        for (i, list) in jobs.iter().enumerate() {
            all.extend(list.iter().map(|&(a, r)| (r, i, a, tasks[i].wcet)));
        }
        all.sort_unstable();
        let mut worst = vec![0; tasks.len()];
        let mut ready: Vec<(Ticks, usize, Ticks, Ticks)> = Vec::new();
        let (mut next, mut now) = (0, Ticks::MIN);
        while next < all.len() || !ready.is_empty() {
            if ready.is_empty() {
                now = now.max(all[next].0);
            }
            while next < all.len() && all[next].0 <= now {
                ready.push(all[next]);
                next += 1;
            }
            let k = (0..ready.len())
                .min_by_key(|&k| (tasks[ready[k].1].priority, ready[k].1, ready[k].2))
                .unwrap();
            let until = if next < all.len() { all[next].0 } else { Ticks::MAX };
            let run = ready[k].3.min(until - now);
            now += run;
            ready[k].3 -= run;
            if ready[k].3 == 0 {
                let (_, i, arrival, _) = ready.swap_remove(k);
                worst[i] = worst[i].max(now - arrival);
            }
        }
        worst
    }

    /// Simulated responses never exceed the bounds (jitter up to two periods, deadlines up to two
    /// periods, no blocking), from near-critical and random release patterns.
    #[test]
    fn simulated_responses_stay_within_the_bounds() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1994);
        let mut tight = 0;
        for _ in 0..300 {
            let n = rng.gen_range(2..=5);
            let tasks: Vec<Task> = (0..n)
                .map(|p| {
                    let c = rng.gen_range(1..=5);
                    let t = rng.gen_range(2 * c..=40);
                    let j = if rng.gen_bool(0.5) { 0 } else { rng.gen_range(0..=2 * t) };
                    Task::new(c, t, 2 * t).with_jitter(j).with_priority(p as Priority)
                })
                .collect();
            let r = analyse_preemptive(&tasks).unwrap();
            if r.iter().any(|x| x.response().bound().is_none()) {
                continue;
            }
            let mut seen = vec![0; n];
            for _ in 0..20 {
                let critical = rng.gen_bool(0.5);
                let jobs: Vec<Vec<(Ticks, Ticks)>> = tasks
                    .iter()
                    .map(|t| {
                        let mut a = if critical {
                            rng.gen_range(0..3) - t.jitter
                        } else {
                            rng.gen_range(0..t.period)
                        };
                        let (mut out, mut last) = (Vec::new(), Ticks::MIN);
                        while a < 200 {
                            let j = if critical {
                                if out.is_empty() {
                                    t.jitter
                                } else {
                                    0
                                }
                            } else {
                                rng.gen_range(0..=t.jitter)
                            };
                            last = (a + j).max(last);
                            out.push((a, last));
                            a += t.period
                                + if critical || rng.gen_bool(0.8) { 0 } else { rng.gen_range(0..t.period) };
                        }
                        out
                    })
                    .collect();
                for (s, w) in seen.iter_mut().zip(simulate(&tasks, &jobs)) {
                    *s = (*s).max(w);
                }
            }
            for (i, (x, s)) in r.iter().zip(&seen).enumerate() {
                let bound = x.response().bound().unwrap();
                assert!(*s <= bound, "task {i}: simulated {s} > bound {bound}\n{tasks:?}");
                tight += (*s == bound) as usize;
            }
        }
        assert!(tight > 300, "bounds reached only {tight} times");
    }

    #[test]
    fn bad_input_names_the_place() {
        let e = analyse_preemptive(&[Task::new(1, 5, 5), Task::new(1, 0, 5)]).unwrap_err();
        assert_eq!(e.to_string(), "tasks[1].period: must be in [1, 2^60], got 0");
    }
}
