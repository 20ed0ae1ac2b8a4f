//! Deficit Table scheduler (seed 003, Martínez-Morais, Alfaro-Cortés & Sánchez, IEEE TPDS 20(8),
//! 2009, Fig. 2): an arbitration table of (class, weight) entries with a deficit counter per class;
//! a visit may send while the head fits in deficit + entry weight, keeps the leftover when it does
//! not, and loses it when the class empties.
//!
//! Service model (derived in docs/ANALYSIS.md, "Table schedulers"): over any run of entries
//! another class j sends at most its carried deficit (< L_j) plus the weights of its entries in
//! the run, so X_k = s_j·W_k and K = Σ_{j≠i} s_j·L_j; class i, backlogged, has sent at least the
//! weights of its visits minus its deficit (< L_i), so A = s'_i·W_k and D = L_i (wire bits). It
//! holds for any positive weights; weights below the MTU only make the latency larger.

use super::table::{self, Entry, VisitBounds};
use super::{Behaviour, ClassAtPort, ClassQueues, LatencyRate, Queued};

/// DTable, exactly as the pseudocode of Fig. 2 (seed catalogue §4(b)) when every entry weight is
/// at least the largest frame of its class, as the paper requires. Weights and frames are counted
/// in Ethernet frame bits (the paper counts 64-byte flow-control credits).
///
/// * A class is *active* iff it has frames waiting: this simulator has no link-level flow
///   control, whose credits DTable also requires of an active class in AS and InfiniBand.
/// * Weights below a frame: the pseudocode would send the head anyway and drive the accumulated
///   weight negative. Here an entry whose deficit + weight does not cover its class's head adds
///   its weight to the deficit and the search goes on (DRR's rule, the paper's "several passes
///   over the table"); whole passes in which no head fits are jumped over at once
///   ([`Dtable::skip_idle_passes`]), so a dequeue stays O(entries).
///
/// Classes without an entry go to the background FIFO, served only when no class with an entry
/// has frames, so no frame is stranded.
pub struct Dtable {
    entries: Vec<Entry>,
    queues: ClassQueues<Queued>,
    /// deficitCounter per class index.
    deficit: Vec<u64>,
    /// Sum of the weights of each class's entries (one pass over the table).
    pass_weight: Vec<u64>,
    /// selectedFlow (None before the first selection) and the table position of its entry.
    selected: Option<usize>,
    position: usize,
    /// accumulatedWeight of the selected class.
    accumulated: u64,
}

impl Dtable {
    /// `n_classes`: the network's classes (frames carry their index).
    pub fn new(entries: &[Entry], n_classes: usize) -> Self {
        let mut pass_weight = vec![0; n_classes];
        for e in entries {
            pass_weight[e.class] += e.weight;
        }
        Dtable {
            entries: entries.to_vec(),
            queues: ClassQueues::new(n_classes),
            deficit: vec![0; n_classes],
            pass_weight,
            selected: None,
            // The first search starts at entry 0.
            position: entries.len().saturating_sub(1),
            accumulated: 0,
        }
    }

    /// The entry that sent the last frame.
    pub fn position(&self) -> usize {
        self.position
    }

    /// deficitCounter of class index `class` (updated when the scheduler leaves the class).
    pub fn deficit(&self, class: usize) -> u64 {
        self.deficit[class]
    }

    /// accumulatedWeight: what the selected class may still send in this visit.
    pub fn accumulated_weight(&self) -> u64 {
        self.accumulated
    }

    fn head(&self, class: usize) -> Option<u64> {
        self.queues.classes[class].front().map(|q| q.frame_bits as u64)
    }

    /// After a whole pass in which no head fitted, jump over the passes in which none would:
    /// r = min_c ⌈(head_c − deficit_c) / pass_weight_c⌉ over the backlogged classes passes are
    /// needed before the first head fits, so every backlogged class banks r − 1 passes at once.
    /// The order is the one pass-by-pass visiting gives.
    fn skip_idle_passes(&mut self) {
        // Every backlogged class has just banked a pass, so its deficit is below its head.
        let need: Vec<(usize, u64)> = (0..self.deficit.len())
            .filter(|&c| self.pass_weight[c] > 0)
            .filter_map(|c| self.head(c).map(|h| (c, (h - self.deficit[c]).div_ceil(self.pass_weight[c]))))
            .collect();
        let passes = need.iter().map(|&(_, p)| p).min().unwrap_or(1);
        for (c, _) in need {
            self.deficit[c] += (passes - 1) * self.pass_weight[c];
        }
    }

    /// The next entry (after the current position, cyclically) whose class is active and whose
    /// head fits in deficit + weight; on the way, active entries that cannot pay bank their weight.
    fn select_next(&mut self) {
        let n = self.entries.len();
        let mut visited = 0;
        loop {
            self.position = (self.position + 1) % n;
            let Entry { class, weight } = self.entries[self.position];
            if let Some(head) = self.head(class) {
                let accumulated = self.deficit[class] + weight;
                if head <= accumulated {
                    self.selected = Some(class);
                    self.accumulated = accumulated;
                    return;
                }
                self.deficit[class] = accumulated;
            }
            visited += 1;
            if visited == n {
                self.skip_idle_passes();
                visited = 0;
            }
        }
    }
}

impl Behaviour for Dtable {
    fn enqueue(&mut self, item: Queued, _now_ns: i64) {
        let i = item.class as usize;
        let served = self.pass_weight.get(i).is_some_and(|&w| w > 0);
        self.queues.admit(item, served);
    }

    fn dequeue(&mut self, _now_ns: i64) -> Option<Queued> {
        if self.queues.scheduled() == 0 {
            return self.queues.pop_background();
        }
        // if (selectedFlow is not active) or (size(head) > accumulatedWeight): save the leftover
        // (0 if the class emptied) and select the next entry.
        let stays = self.selected.and_then(|c| self.head(c)).is_some_and(|h| h <= self.accumulated);
        if !stays {
            if let Some(c) = self.selected {
                self.deficit[c] = self.accumulated;
            }
            self.select_next();
        }
        let class = self.selected.expect("a class was selected");
        let item = self.queues.pop(class).expect("the selected class is active");
        self.accumulated -= item.frame_bits as u64;
        if self.queues.classes[class].is_empty() {
            // The class is no longer active: its leftover is discarded.
            self.accumulated = 0;
        }
        Some(item)
    }

    fn len(&self) -> usize {
        self.queues.len()
    }
}

/// The latency-rate guarantee of class `i` among `classes` (the classes present at the port);
/// `entries`: (index into `classes`, weight in frame bits) for those classes' entries.
pub fn latency_rate(
    i: usize,
    entries: &[(usize, f64)],
    classes: &[ClassAtPort],
    capacity: f64,
) -> LatencyRate {
    let most = |k: usize| table::wire_ratio(&classes[entries[k].0]).0 * entries[k].1;
    let own = table::wire_ratio(&classes[i]).1;
    let least = |k: usize| own * entries[k].1;
    // Carried deficits of the other classes with an entry: below their largest frame.
    let carry = (0..classes.len())
        .filter(|&j| j != i && entries.iter().any(|e| e.0 == j))
        .map(|j| table::wire_ratio(&classes[j]).0 * (classes[j].lmax - classes[j].overhead))
        .sum();
    let v = VisitBounds { entries, most: &most, least: &least, carry, lag: classes[i].lmax };
    table::latency_rate(i, classes, &v, capacity)
}

table::table_discipline!(
    DtableDiscipline,
    "table",
    Dtable,
    "The Deficit Table (seed 003) as a [`super::Discipline`]."
);

impl super::ClassShares for DtableDiscipline<'_> {
    fn share(&self, class: &str) -> Option<f64> {
        table::share(self.entries, class)
    }
    fn latency_rate(&self, k: usize, present: &[ClassAtPort], names: &[&str], rate: f64) -> LatencyRate {
        latency_rate(k, &table::at_port(self.entries, names), present, rate)
    }
    // DTable requires every entry weight to cover its class's frames (seed 003 §3.1).
    fn frame_warning(&self, class: &str, largest_frame_bits: f64, flow: &str) -> Option<String> {
        let lightest = self
            .entries
            .iter()
            .filter(|e| e.class == class)
            .map(|e| e.weight.bits())
            .fold(f64::INFINITY, f64::min);
        (lightest < largest_frame_bits).then(|| {
            format!(
                "an entry of class '{class}' weighs {}B, less than its largest frame ({}B, flow '{flow}'): \
                 the class then needs several passes over the table, so latency grows",
                lightest / 8.0,
                largest_frame_bits / 8.0
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedulers::testing::{assert_long_run_shares, frame};

    const CREDIT: u32 = 64 * 8;

    /// A frame of `credits` 64-byte credits (frame bits; wire bits add 20 B).
    fn credits(id: u32, class: u16, credits: u32) -> Queued {
        Queued {
            flow: u32::MAX,
            frame: id,
            class,
            wire_bits: credits * CREDIT + 160,
            frame_bits: credits * CREDIT,
        }
    }

    /// TV-003-6 (catalogue §4(e)): table e0 = (A, 4), e1 = (B, 4), e2 = (A, 4), e3 = (C, 8)
    /// credits; queues A = [3 × 6], B = [4, 1, 4], C = [5, 5, 5] at t = 0. Expected (class, size,
    /// entry): A3@e0 B4@e1 A3@e2 C5@e3 A3@e0 A3@e0 B1@e1 A3@e2 C5@e3 C5@e3 A3@e0 B4@e1, with the
    /// registers after each frame (deficits A, B, C as last saved; accumulatedWeight).
    #[test]
    fn tv_003_6_trace() {
        let w = |c| c * CREDIT as u64;
        let e = [
            Entry { class: 0, weight: w(4) },
            Entry { class: 1, weight: w(4) },
            Entry { class: 0, weight: w(4) },
            Entry { class: 2, weight: w(8) },
        ];
        let mut s = Dtable::new(&e, 3);
        let mut id = 0;
        for (c, sizes) in [(0u16, vec![3; 6]), (1, vec![4, 1, 4]), (2, vec![5, 5, 5])] {
            for size in sizes {
                s.enqueue(credits(id, c, size), 0);
                id += 1;
            }
        }
        let mut got = Vec::new();
        while let Some(q) = s.dequeue(0) {
            let credit = |x: u64| x / CREDIT as u64;
            got.push((
                q.class,
                q.frame_bits / CREDIT,
                s.position(),
                [0, 1, 2].map(|c| credit(s.deficit(c))),
                credit(s.accumulated_weight()),
            ));
        }
        #[rustfmt::skip]
        let want = [
            (0, 3, 0, [0, 0, 0], 1),  // A: 0 + 4, sends 3
            (1, 4, 1, [1, 0, 0], 0),  // A keeps 1; B: 0 + 4
            (0, 3, 2, [1, 0, 0], 2),  // B's head 1 > 0: B keeps 0; A: 1 + 4
            (2, 5, 3, [2, 0, 0], 3),  // A keeps 2; C: 0 + 8
            (0, 3, 0, [2, 0, 3], 3),  // C keeps 3; A: 2 + 4 = 6
            (0, 3, 0, [2, 0, 3], 0),  // A sends its second 3 in the same visit
            (1, 1, 1, [0, 0, 3], 3),  // A keeps 0; B: 0 + 4
            (0, 3, 2, [0, 3, 3], 1),  // B keeps 3; A: 0 + 4
            (2, 5, 3, [1, 3, 3], 6),  // A keeps 1; C: 3 + 8 = 11
            (2, 5, 3, [1, 3, 3], 0),  // C empties: leftover 1 discarded
            (0, 3, 0, [1, 3, 0], 0),  // C's deficit 0; A: 1 + 4, sends its last 3 and empties
            (1, 4, 1, [0, 3, 0], 0),  // A's deficit 0; B: 3 + 4, sends its last 4 and empties
        ];
        assert_eq!(got, want);
        assert!(s.is_empty() && s.dequeue(0).is_none());
    }

    /// Weights far below the frames: entries bank their weight over passes (skipped in one step),
    /// and the order is the one pass-by-pass visiting gives. Table (A, 100 B), (B, 100 B),
    /// (A, 100 B): A banks 200 B a pass, B 100 B. B's 300 B head fits at pass 3, entry 1; A's
    /// 1000 B head at pass 5, entry 2 (900 + 100); B's 1000 B head ten passes after its first.
    #[test]
    fn small_weights_bank_over_passes() {
        let e = [
            Entry { class: 0, weight: 800 },
            Entry { class: 1, weight: 800 },
            Entry { class: 0, weight: 800 },
        ];
        let mut s = Dtable::new(&e, 2);
        s.enqueue(frame(0, 0, 1020), 0);
        s.enqueue(frame(1, 1, 320), 0);
        s.enqueue(frame(2, 1, 1020), 0);
        let got: Vec<(u32, usize)> =
            std::iter::from_fn(|| s.dequeue(0).map(|q| (q.frame, s.position()))).collect();
        assert_eq!(got, [(1, 1), (0, 2), (2, 1)]);
        assert!(s.is_empty());
    }

    /// With one entry per class DTable is DRR: TV-000-6's quanta and queues give DRR's order.
    #[test]
    fn one_entry_per_class_is_drr() {
        let e = [
            Entry { class: 0, weight: 4000 },
            Entry { class: 1, weight: 4000 },
            Entry { class: 2, weight: 8000 },
        ];
        let mut s = Dtable::new(&e, 3);
        let queues: [&[u32]; 3] = [&[200, 750, 200], &[1000, 100], &[600, 600, 300]];
        let mut id = 0;
        for (c, q) in queues.iter().enumerate() {
            for &b in *q {
                s.enqueue(frame(id, c as u16, b + 20), 0);
                id += 1;
            }
        }
        let got: Vec<(u16, u32)> =
            std::iter::from_fn(|| s.dequeue(0)).map(|q| (q.class, q.frame_bits / 8)).collect();
        let want = [(0, 200), (2, 600), (0, 750), (1, 1000), (2, 600), (2, 300), (0, 200), (1, 100)];
        assert_eq!(got, want);
    }

    /// Interleaved entries (WF²Q layout of 1 : 2 : 3 : 4, every weight 1600 B ≥ the largest
    /// frame): wire bits in proportion to the entry counts, within a few frames.
    #[test]
    fn long_run_shares() {
        let layout = crate::schedulers::service_list::wf2q_interleaved(&[1, 2, 3, 4]);
        let e: Vec<Entry> = layout.iter().map(|&class| Entry { class, weight: 1600 * 8 }).collect();
        assert_long_run_shares(&mut Dtable::new(&e, 4), 3.0);
    }

    /// One entry each for A and B (1500 B, 500 B), no overhead, L = 1500 B, C = 1 (DRR's
    /// two_classes_by_hand): class A: X = 4000, P = 12000, r = 1/3, K = 12000, D = 12000;
    /// C·Θ = L_A + K + max(4000, D·r + (0 + 4000) − 0) = 12000 + 12000 + 8000 = 32000; class B:
    /// r = 3, C·Θ = 12000 + 12000 + max(12000, 36000 + 12000) = 72000 (DRR's model gives the same
    /// two latencies here).
    #[test]
    fn two_classes_by_hand() {
        let b = 8.0;
        let c = [ClassAtPort { share: 0.0, lmin: 64.0 * b, lmax: 1500.0 * b, overhead: 0.0 }; 2];
        let e = [(0, 1500.0 * b), (1, 500.0 * b)];
        let a = latency_rate(0, &e, &c, 1.0);
        assert!((a.rate - 0.75).abs() < 1e-12 && (a.latency - 32000.0).abs() < 1e-9, "{a:?}");
        let z = latency_rate(1, &e, &c, 1.0);
        assert!((z.rate - 0.25).abs() < 1e-12 && (z.latency - 72000.0).abs() < 1e-9, "{z:?}");
    }
}
