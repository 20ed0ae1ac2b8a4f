//! Advanced Switching basic arbitration table (seed 003 §2; catalogue §4(a)): the table is
//! cycled through, and each visit of an entry whose class has frames sends exactly one frame,
//! whatever its size. Entry weights play no part.
//!
//! Service model (docs/ANALYSIS.md, "Table schedulers"): a visit of another class j's entry sends
//! one frame, X_k = L_j; a visit of class i's entry sends one frame of at least l_i, A = l_i; no
//! deficit (K = D = 0). With consecutive entries it is WRR's bound.

use super::table::{self, Entry, VisitBounds};
use super::{Behaviour, ClassAtPort, ClassQueues, LatencyRate, Queued};

/// The AS basic table: one frame per visit of an entry of a backlogged class, entries of empty
/// classes skipped. Classes without an entry go to the background FIFO, served only when no
/// class with an entry has frames, so no frame is stranded.
pub struct AsTable {
    entries: Vec<Entry>,
    queues: ClassQueues<Queued>,
    /// The entry visited last; the first visit goes to entry 0.
    position: usize,
    scheduled: Vec<bool>,
}

impl AsTable {
    /// `n_classes`: the network's classes (frames carry their index).
    pub fn new(entries: &[Entry], n_classes: usize) -> Self {
        AsTable {
            entries: entries.to_vec(),
            queues: ClassQueues::new(n_classes),
            position: entries.len().saturating_sub(1),
            scheduled: table::listed(entries, n_classes),
        }
    }

    /// The entry that sent the last frame.
    pub fn position(&self) -> usize {
        self.position
    }
}

impl Behaviour for AsTable {
    fn enqueue(&mut self, item: Queued, _now_ns: i64) {
        self.queues.admit_listed(item, &self.scheduled);
    }

    fn dequeue(&mut self, _now_ns: i64) -> Option<Queued> {
        match table::next_backlogged(&self.entries, self.position, &self.queues) {
            Some(k) => {
                self.position = k;
                self.queues.pop(self.entries[k].class)
            }
            None => self.queues.pop_background(),
        }
    }

    fn len(&self) -> usize {
        self.queues.len()
    }
}

/// The latency-rate guarantee of class `i` among `classes` (the classes present at the port);
/// `entries`: (index into `classes`, weight in frame bits) for the entries of those classes.
pub fn latency_rate(
    i: usize,
    entries: &[(usize, f64)],
    classes: &[ClassAtPort],
    capacity: f64,
) -> LatencyRate {
    let most = |k: usize| classes[entries[k].0].lmax;
    let least = |_: usize| classes[i].lmin;
    let v = VisitBounds { entries, most: &most, least: &least, carry: 0.0, lag: 0.0 };
    table::latency_rate(i, classes, &v, capacity)
}

table::table_discipline!(
    AsTableDiscipline,
    "table",
    AsTable,
    "The Advanced Switching basic table as a [`super::Discipline`]."
);

impl super::ClassShares for AsTableDiscipline<'_> {
    fn share(&self, class: &str) -> Option<f64> {
        table::share(self.entries, class)
    }
    fn latency_rate(&self, k: usize, present: &[ClassAtPort], names: &[&str], rate: f64) -> LatencyRate {
        latency_rate(k, &table::at_port(self.entries, names), present, rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedulers::testing::frame;

    fn entries(classes: &[usize]) -> Vec<Entry> {
        classes.iter().map(|&class| Entry { class, weight: 1 }).collect()
    }

    /// One frame per visit whatever its size; entries of empty classes are skipped.
    #[test]
    fn one_frame_per_visit() {
        let mut s = AsTable::new(&entries(&[0, 1, 0, 2]), 3);
        let sizes = [(0, 1538), (0, 84), (0, 84), (1, 84), (1, 1538), (2, 500)];
        for (id, &(c, b)) in sizes.iter().enumerate() {
            s.enqueue(frame(id as u32, c, b), 0);
        }
        let got: Vec<(u32, usize)> =
            std::iter::from_fn(|| s.dequeue(0).map(|q| (q.frame, s.position()))).collect();
        // e0 A, e1 B, e2 A, e3 C, e0 A, e1 B: 84 B and 1538 B frames alike.
        assert_eq!(got, [(0, 0), (3, 1), (1, 2), (5, 3), (2, 0), (4, 1)]);
        assert!(s.is_empty());
    }

    /// Two classes, entries A B A B (no overhead), frames 1000 bits for both, l = 500 for A,
    /// C = 1: X = 2000, P = 1000, ρ = 1/3; gaps are one B frame each: C·Θ = L_A + max(1000,
    /// 0 + max_e[U(e+1) + 2·500] − min U) with U = 0, 0, 0 → 1000 + 1000 = 2000.
    #[test]
    fn alternating_by_hand() {
        let c = [
            ClassAtPort { share: 0.0, lmin: 500.0, lmax: 1000.0, overhead: 0.0 },
            ClassAtPort { share: 0.0, lmin: 1000.0, lmax: 1000.0, overhead: 0.0 },
        ];
        let e = [(0, 1.0), (1, 1.0), (0, 1.0), (1, 1.0)];
        let a = latency_rate(0, &e, &c, 1.0);
        assert!((a.rate - 1.0 / 3.0).abs() < 1e-12 && (a.latency - 2000.0).abs() < 1e-9, "{a:?}");
    }
}
