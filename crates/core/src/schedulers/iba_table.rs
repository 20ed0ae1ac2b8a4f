//! InfiniBand weighted arbitration table (seed 003 §2; catalogue §4(a)): each entry names a class
//! and a weight in 64-byte units; a visit sends frames of its class while some weight remains,
//! the last frame may overrun it (the weight "rounds up to a whole packet"), and nothing is
//! carried to the next visit.
//!
//! * Weights: the model's `weight` is a size; the entry's allowance is that size rounded up to
//!   whole 64-byte units (so a positive weight never becomes IBA's "0 = entry disabled"). The
//!   8-bit field (at most 255 units, 16,320 B) is not enforced: larger weights run as given.
//! * Frames are counted in Ethernet frame bits against the allowance (not in 64-byte units).
//! * IBA's two tables (high and low priority) and its limit of high priority are not modelled:
//!   a port has one table, i.e. IBA's low-priority table alone (or its high-priority table with
//!   no limit and an empty low one).
//!
//! Service model (docs/ANALYSIS.md, "Table schedulers"): a visit of another class j's entry of
//! allowance W sends frames summing below W before its last one, X_k = s_j·W + L_j on the wire; a
//! visit of class i's entry sends at least W, A = s'_i·W; no deficit (K = D = 0).

use super::table::{self, Entry, VisitBounds};
use super::{Behaviour, ClassAtPort, ClassQueues, LatencyRate, Queued};

/// IBA's weight unit, 64 bytes, in bits.
pub const UNIT_BITS: u64 = 64 * 8;

/// An entry's allowance: its weight rounded up to whole 64-byte units, at least one unit.
pub fn allowance_bits(weight_bits: f64) -> u64 {
    (weight_bits / UNIT_BITS as f64).ceil().max(1.0) as u64 * UNIT_BITS
}

/// The IBA weighted table, one FIFO per class. Classes without an entry go to the background
/// FIFO, served only when no class with an entry has frames, so no frame is stranded.
pub struct IbaTable {
    /// Entries with their allowances (weights in whole units).
    entries: Vec<Entry>,
    queues: ClassQueues<Queued>,
    /// The entry being visited (or visited last); the first visit goes to entry 0.
    position: usize,
    /// Allowance left in the current visit (0: the visit is over).
    remaining: u64,
    scheduled: Vec<bool>,
}

impl IbaTable {
    /// `n_classes`: the network's classes (frames carry their index).
    pub fn new(entries: &[Entry], n_classes: usize) -> Self {
        let entries: Vec<Entry> =
            entries.iter().map(|e| Entry { weight: allowance_bits(e.weight as f64), ..*e }).collect();
        IbaTable {
            position: entries.len().saturating_sub(1),
            scheduled: table::listed(&entries, n_classes),
            entries,
            queues: ClassQueues::new(n_classes),
            remaining: 0,
        }
    }

    /// The entry that sent the last frame.
    pub fn position(&self) -> usize {
        self.position
    }
}

impl Behaviour for IbaTable {
    fn enqueue(&mut self, item: Queued, _now_ns: i64) {
        self.queues.admit_listed(item, &self.scheduled);
    }

    fn dequeue(&mut self, _now_ns: i64) -> Option<Queued> {
        if self.remaining == 0 {
            let Some(k) = table::next_backlogged(&self.entries, self.position, &self.queues) else {
                return self.queues.pop_background();
            };
            self.position = k;
            self.remaining = self.entries[k].weight;
        }
        let class = self.entries[self.position].class;
        let item = self.queues.pop(class).expect("a visit is only open while its class has frames");
        // The last frame may overrun the allowance; the overrun is not carried.
        self.remaining = self.remaining.saturating_sub(item.frame_bits as u64);
        if self.queues.classes[class].is_empty() {
            // A visit ends when its class empties, even if frames arrive before the next pick.
            self.remaining = 0;
        }
        Some(item)
    }

    fn len(&self) -> usize {
        self.queues.len()
    }
}

/// The latency-rate guarantee of class `i` among `classes` (the classes present at the port);
/// `entries`: (index into `classes`, configured weight in frame bits) for those classes' entries.
pub fn latency_rate(
    i: usize,
    entries: &[(usize, f64)],
    classes: &[ClassAtPort],
    capacity: f64,
) -> LatencyRate {
    let w = |k: usize| allowance_bits(entries[k].1) as f64;
    let most = |k: usize| {
        let c = &classes[entries[k].0];
        table::wire_ratio(c).0 * w(k) + c.lmax
    };
    let own = table::wire_ratio(&classes[i]).1;
    let least = |k: usize| own * w(k);
    let v = VisitBounds { entries, most: &most, least: &least, carry: 0.0, lag: 0.0 };
    table::latency_rate(i, classes, &v, capacity)
}

table::table_discipline!(
    IbaTableDiscipline,
    "table",
    IbaTable,
    "The InfiniBand weighted table as a [`super::Discipline`]."
);

impl super::ClassShares for IbaTableDiscipline<'_> {
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

    #[test]
    fn allowance_rounds_up_to_units() {
        assert_eq!(allowance_bits(2176.0 * 8.0), 34 * UNIT_BITS);
        assert_eq!(allowance_bits(100.0 * 8.0), 2 * UNIT_BITS);
        assert_eq!(allowance_bits(1.0), UNIT_BITS);
    }

    /// Entries (A, 1000 B) and (B, 128 B): A sends while weight remains and its last frame
    /// overruns (600 + 600 B > 1024 B), nothing carried; B's 1500 B frame overruns 128 B.
    #[test]
    fn overrun_without_deficit() {
        let e = [Entry { class: 0, weight: 1000 * 8 }, Entry { class: 1, weight: 128 * 8 }];
        let mut s = IbaTable::new(&e, 2);
        for id in 0..6 {
            s.enqueue(frame(id, 0, 620), 0);
        }
        s.enqueue(frame(6, 1, 1520), 0);
        s.enqueue(frame(7, 1, 84), 0);
        let got: Vec<(u32, usize)> =
            std::iter::from_fn(|| s.dequeue(0).map(|q| (q.frame, s.position()))).collect();
        // Allowance of A: 16 units = 1024 B: 600 B (424 left), 600 B (overrun); B: 1500 B overruns
        // 128 B; A again two frames; B's 64 B; A's last two.
        assert_eq!(got, [(0, 0), (1, 0), (6, 1), (2, 0), (3, 0), (7, 1), (4, 0), (5, 0)]);
    }

    /// Two classes, one entry each of 1024 B, frames 64..1024 B with no overhead, C = 1:
    /// X_B = 8192 + 8192, A = 8192, r = 2, gaps g_0 = X: C·Θ = L_A + max(X, 0 + (0 + 2·8192) − 0)
    /// = 8192 + 16384.
    #[test]
    fn one_entry_each_by_hand() {
        let c = [ClassAtPort { share: 0.0, lmin: 512.0, lmax: 8192.0, overhead: 0.0 }; 2];
        let e = [(0, 8192.0), (1, 8192.0)];
        let a = latency_rate(0, &e, &c, 1.0);
        assert!((a.rate - 1.0 / 3.0).abs() < 1e-12 && (a.latency - 24576.0).abs() < 1e-9, "{a:?}");
    }
}
