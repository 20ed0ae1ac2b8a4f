//! Weighted round robin between classes: class i sends up to w_i frames per round.
//!
//! Service model (wire bits; L_j and l_j the largest and smallest frame of class j at the port,
//! sums over the classes present): with O_i = Σ_{j≠i} w_j L_j, class i is guaranteed β_{ρ_i, Θ_i}
//!
//!   ρ_i = w_i l_i C / (w_i l_i + O_i),   C·Θ_i = O_i + L_i if w_i ≥ 2,   C·Θ_i = O_i if w_i = 1.
//!
//! For w_i = 1 this is the classical WRR bound (e.g. Georges, Divoux & Rondeau, or Mifdaoui &
//! Ayed for AFDX). For w_i ≥ 2 the L_i term is needed because a visit ends as soon as the class's
//! queue empties, also when its last frame has only just started on the wire: a frame arriving
//! then finds the class still backlogged (its frame is on the wire) but its visit over, and waits
//! for the rest of that frame and a visit of every other class. A run of such refills gives the
//! class one frame per round however large w_i is, so a curve of rate ρ_i can only be measured
//! from the last refill, and from there the first frame waits up to (L_i + O_i)/C. Without the
//! L_i term the bound fails (`tests/scheduler_soundness.rs`, `wrr_refill_run`: a frame delayed 41.2 µs
//! at 1 Gb/s where O_i/C + b/ρ_i gives 33.2 µs).
//!
//! Derivation (as in docs/ANALYSIS.md, "WRR"). The analysis uses β as a min-plus service curve,
//! D ≥ A ⊗ β, with D counted bit by bit as frames leave the wire. Fix t with class i backlogged
//! and let s ≤ t be the last arrival of an i frame that found i's queue (the frames waiting, not
//! the one on the wire) empty. At s at most σ < L_i bits of i's previous frame are still on the
//! wire, and A(s) − D(s) = σ. Its visit, if any, is over (it ended when the queue emptied), so
//! before i's next visit the port sends those σ bits and at most one visit of every other class
//! (a class in the middle of its visit at s counts that visit): at most O_i bits. While i's queue
//! stays non-empty, each other class is visited at most once between two visits of i, and each
//! visit of i sends w_i frames, at least w_i l_i bits. The port is busy throughout, so the k-th
//! visit of i after s (k ≥ 1) begins by s + (σ + k·O_i + S)/C, where S ≥ (k − 1)·w_i l_i is what
//! the frames arrived from s on have received by then, i.e. D − A(s) there. β_{ρ,Θ} lies below
//! that point iff ρ(σ + k·O_i + S)/C − ρΘ ≤ S; the left side minus the right decreases in S, and
//! with C·Θ = O_i + L_i ≥ O_i + σ and the least S it is at most
//! ρ((k − 1)·O_i + (k − 1)·w_i l_i)/C − (k − 1)·w_i l_i = 0. During a visit D grows at rate
//! C ≥ ρ, and once the queue has emptied no frame arrives before t (else s would be later), so
//! D(t) − A(s) ≥ β(t − s) up to the last bit of i's backlog. While the σ bits are still on the
//! wire (D(t) < A(s)) the previous such arrival serves as s: the same argument, over the frames
//! that included the one on the wire. With w_i = 1 a visit is one frame and ends with it whether
//! the queue empties or not, so the argument runs from the start of i's backlogged period
//! instead, where σ = 0: C·Θ_i = O_i.

use super::{by_class_index, check_class_values, ClassShares, ConfigProblem, Discipline, Service};
use super::{Behaviour, ClassAtPort, ClassQueues, LatencyRate, Queued};
use crate::model::TrafficClass;
use std::collections::BTreeMap;

/// Weighted round robin over per-class FIFOs: the backlogged classes are visited in class-index
/// order, cyclically, and class i sends up to w_i frames per visit (Hahne's WRR, as the service
/// model above assumes). A visit ends early when the class's queue empties, so a class never
/// resumes a visit it left.
///
/// Classes without a weight (or frames without a class, which validation refuses) go to a
/// background FIFO served only when no weighted class is backlogged, so no frame is stranded.
pub struct Wrr {
    /// Frames per visit, by class index (0: the class has no weight).
    weight: Vec<u32>,
    queues: ClassQueues<Queued>,
    /// Class being visited and the frames it may still send in this visit.
    current: usize,
    left: u32,
}

impl Wrr {
    /// `weights[i]`: frames per visit of class index i (None: not scheduled).
    pub fn new(weights: &[Option<u32>]) -> Self {
        let n = weights.len();
        Wrr {
            weight: weights.iter().map(|w| w.unwrap_or(0)).collect(),
            queues: ClassQueues::new(n),
            // The first visit goes to the lowest backlogged class index.
            current: n.saturating_sub(1),
            left: 0,
        }
    }
}

impl Behaviour for Wrr {
    fn enqueue(&mut self, item: Queued, _now_ns: i64) {
        let i = item.class as usize;
        if self.weight.get(i).is_some_and(|&w| w > 0) {
            self.queues.push(i, item);
        } else {
            self.queues.push_background(item);
        }
    }

    fn dequeue(&mut self, _now_ns: i64) -> Option<Queued> {
        if self.queues.scheduled() == 0 {
            return self.queues.pop_background();
        }
        let classes = &self.queues.classes;
        if self.left == 0 || classes[self.current].is_empty() {
            // Next backlogged class after the current one, the current one last.
            let n = classes.len();
            self.current = (1..=n)
                .map(|k| (self.current + k) % n)
                .find(|&j| !classes[j].is_empty())
                .expect("a weighted class is backlogged");
            self.left = self.weight[self.current];
        }
        let item = self.queues.pop(self.current);
        self.left -= 1;
        if self.queues.classes[self.current].is_empty() {
            self.left = 0;
        }
        item
    }

    fn len(&self) -> usize {
        self.queues.len()
    }
}

/// The latency-rate guarantee of class `i` among `classes` (shares are frames per visit; sizes
/// on the wire), as derived in the module comment.
pub fn latency_rate(i: usize, classes: &[ClassAtPort], capacity: f64) -> LatencyRate {
    let me = &classes[i];
    let others: f64 =
        classes.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, c)| c.share * c.lmax).sum();
    let mine = me.share * me.lmin;
    // The rest of the class's own frame, on the wire when its queue emptied and refilled: only a
    // visit of more than one frame can be cut short by it.
    let own = if me.share > 1.0 { me.lmax } else { 0.0 };
    LatencyRate { rate: mine * capacity / (mine + others), latency: (others + own) / capacity }
}

/// WRR as a [`Discipline`]: `weights[class]` frames per visit.
pub struct WrrDiscipline<'a> {
    pub weights: &'a BTreeMap<String, u32>,
}

impl Discipline for WrrDiscipline<'_> {
    fn kind(&self) -> &'static str {
        "wrr"
    }
    fn check(&self, place: &str, class_known: &dyn Fn(&str) -> bool) -> Vec<ConfigProblem> {
        check_class_values(
            place,
            "weights",
            self.weights.iter().map(|(c, &w)| (c.clone(), w as f64)),
            &|w| crate::units::count_rule(w as u64),
            class_known,
        )
    }
    fn service(&self) -> Service<'_> {
        Service::PerClass(self)
    }
    fn behaviour(&self, classes: &[TrafficClass], _link_rate: f64) -> Box<dyn Behaviour> {
        Box::new(Wrr::new(&by_class_index(classes, |c| self.weights.get(c).copied())))
    }
}

impl ClassShares for WrrDiscipline<'_> {
    fn share(&self, class: &str) -> Option<f64> {
        self.weights.get(class).map(|&w| w as f64)
    }
    fn latency_rate(&self, k: usize, present: &[ClassAtPort], _names: &[&str], rate: f64) -> LatencyRate {
        latency_rate(k, present, rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(frame: u32, class: u16) -> Queued {
        Queued { flow: u32::MAX, frame, class, wire_bits: 840 * 8, frame_bits: 820 * 8 }
    }

    fn classes(s: &mut Wrr, n: usize) -> Vec<u16> {
        (0..n).map_while(|_| s.dequeue(0)).map(|q| q.class).collect()
    }

    /// Weights 3, 1, 2, all backlogged: A A A B C C per round.
    #[test]
    fn weights_order() {
        let mut s = Wrr::new(&[Some(3), Some(1), Some(2)]);
        for id in 0..30 {
            s.enqueue(frame(id, (id % 3) as u16), 0);
        }
        assert_eq!(classes(&mut s, 12), [0, 0, 0, 1, 2, 2, 0, 0, 0, 1, 2, 2]);
    }

    /// A class that empties ends its visit; the round goes on cyclically from the class after
    /// the one last visited.
    #[test]
    fn round_robin_in_class_order() {
        let mut s = Wrr::new(&[Some(2), Some(2), Some(2)]);
        s.enqueue(frame(0, 0), 0);
        for id in 1..6 {
            s.enqueue(frame(id, 2), 0);
        }
        // Class 0 sends its only frame, then class 2 its two.
        assert_eq!(classes(&mut s, 3), [0, 2, 2]);
        s.enqueue(frame(6, 1), 0);
        s.enqueue(frame(7, 0), 0);
        // From class 2, the next visits are 0 then 1, then 2 again.
        assert_eq!(classes(&mut s, 5), [0, 1, 2, 2, 2]);
        assert!(s.is_empty() && s.dequeue(0).is_none());
    }

    /// w = 2 and 1, frames 100..1000 bits (wire), C = 1e6: class 0: O = 1000, ρ = 200/1200 C,
    /// Θ = (1000 + 1000)/C = 2 ms (w ≥ 2: its own frame too); class 1: O = 2000,
    /// ρ = 100/2100 C, Θ = 2 ms.
    #[test]
    fn two_classes_by_hand() {
        let c = [
            ClassAtPort { share: 2.0, lmin: 100.0, lmax: 1000.0, overhead: 0.0 },
            ClassAtPort { share: 1.0, lmin: 100.0, lmax: 1000.0, overhead: 0.0 },
        ];
        let a = latency_rate(0, &c, 1e6);
        assert!((a.rate - 1e6 * 200.0 / 1200.0).abs() < 1e-6 && (a.latency - 2e-3).abs() < 1e-15);
        let b = latency_rate(1, &c, 1e6);
        assert!((b.rate - 1e6 * 100.0 / 2100.0).abs() < 1e-6 && (b.latency - 2e-3).abs() < 1e-15);
    }
}
