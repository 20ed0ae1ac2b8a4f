//! Worst-case fair weighted fair queueing (WF²Q, Bennett & Zhang 1996), one queue per class.
//!
//! Service model: a latency-rate server with ρ_i = φ_i / Σ_j φ_j · C (classes present) and
//! Θ_i = L_i / ρ_i + L_max / C, L_max the largest frame at the port (Stiliadis & Varma 1998,
//! Table I). Lengths are wire lengths: the scheduler is assumed to account for the per-frame
//! overhead, as a link-rate scheduler must.

use super::{Behaviour, ClassAtPort, ClassQueues, LatencyRate, Queued};

/// WF²Q+ (Bennett & Zhang, "Hierarchical packet fair queueing algorithms", IEEE/ACM ToN 5(5),
/// 1997, Sec. IV), one FIFO per class, lengths in wire bits (the service model's convention).
///
/// Shares are normalised, r_i = φ_i / Σ_j φ_j over the configured classes, so that the server
/// has rate 1 and virtual time counts bits of work. The head of class i carries tags
/// S_i = max(F_i, V) when it arrives at an empty queue, S_i = F_i when it follows a served frame,
/// and F_i = S_i + L / r_i. Virtual time is WF²Q+'s, applied at frame boundaries:
/// V ← max(V + L_served, min_{i backlogged} S_i). It needs no link rate: the work W(t, t+τ) of the
/// paper is the served frame's length, and it is known when the frame is handed to the link.
/// The frame sent is the eligible head (S_i ≤ V) with the smallest F_i, lowest class index on
/// ties. When the classes empty, V and the tags restart at 0 (a new busy period), which keeps the
/// tags small and forgets service received before the idle time, as the fluid reference does.
///
/// Classes without a weight (or frames without a class, which validation refuses) go to a
/// background FIFO served only when no weighted class is backlogged, so no frame is stranded.
pub struct Wf2q {
    /// 1 / r_i by class index (0: the class has no weight).
    inv_share: Vec<f64>,
    queues: ClassQueues<Queued>,
    /// Tags of each class's head (F_i is kept after the class empties).
    start: Vec<f64>,
    finish: Vec<f64>,
    /// System virtual time, in bits of work.
    v: f64,
}

impl Wf2q {
    /// `weights[i]`: φ_i of class index i (None: not scheduled).
    pub fn new(weights: &[Option<f64>]) -> Self {
        let total: f64 = weights.iter().flatten().filter(|w| **w > 0.0).sum();
        let n = weights.len();
        Wf2q {
            inv_share: weights.iter().map(|w| w.filter(|w| *w > 0.0).map_or(0.0, |w| total / w)).collect(),
            queues: ClassQueues::new(n),
            start: vec![0.0; n],
            finish: vec![0.0; n],
            v: 0.0,
        }
    }

    /// V ← max(V, min S_i over the backlogged classes): some head is always eligible.
    fn catch_up(&mut self) {
        let min_start = (0..self.queues.classes.len())
            .filter(|&i| !self.queues.classes[i].is_empty())
            .map(|i| self.start[i])
            .fold(f64::INFINITY, f64::min);
        if min_start.is_finite() {
            self.v = self.v.max(min_start);
        }
    }
}

impl Behaviour for Wf2q {
    fn enqueue(&mut self, item: Queued, _now_ns: i64) {
        let i = item.class as usize;
        if self.inv_share.get(i).is_some_and(|&x| x > 0.0) {
            if self.queues.classes[i].is_empty() {
                self.start[i] = self.finish[i].max(self.v);
                self.finish[i] = self.start[i] + item.wire_bits as f64 * self.inv_share[i];
            }
            self.queues.push(i, item);
        } else {
            self.queues.push_background(item);
        }
    }

    fn dequeue(&mut self, _now_ns: i64) -> Option<Queued> {
        if self.queues.scheduled() == 0 {
            return self.queues.pop_background();
        }
        self.catch_up();
        let mut best: Option<usize> = None;
        for i in 0..self.queues.classes.len() {
            if !self.queues.classes[i].is_empty()
                && self.start[i] <= self.v
                && best.is_none_or(|b| self.finish[i] < self.finish[b])
            {
                best = Some(i);
            }
        }
        let i = best.expect("the smallest start tag is eligible");
        let item = self.queues.pop(i).expect("backlogged");
        if self.queues.scheduled() == 0 {
            self.v = 0.0;
            self.start.fill(0.0);
            self.finish.fill(0.0);
            return Some(item);
        }
        if let Some(next) = self.queues.classes[i].front() {
            self.start[i] = self.finish[i];
            self.finish[i] += next.wire_bits as f64 * self.inv_share[i];
        }
        self.v += item.wire_bits as f64;
        self.catch_up();
        Some(item)
    }

    fn len(&self) -> usize {
        self.queues.len()
    }
}

pub fn latency_rate(i: usize, classes: &[ClassAtPort], capacity: f64) -> LatencyRate {
    let total: f64 = classes.iter().map(|c| c.share).sum();
    let rate = classes[i].share / total * capacity;
    let lmax = classes.iter().map(|c| c.lmax).fold(0.0, f64::max);
    LatencyRate { rate, latency: classes[i].lmax / rate + lmax / capacity }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::schedulers::testing::frame;

    /// Weights 1 : 2 (r = 1/3, 2/3), equal frames L, both backlogged from 0; heads as (S, F):
    /// V = 0: (0, 3L) (0, 1.5L) → 1; V = L: (0, 3L) (1.5L, 3L), only 0 eligible → 0;
    /// V = 2L: (3L, 6L) (1.5L, 3L) → 1; V = 3L: (3L, 6L) (3L, 4.5L) → 1 (smaller F);
    /// V = 4L: (3L, 6L) (4.5L, 6L) → 0; and so on: 1 0 1 | 1 0 1 | …
    #[test]
    fn two_classes_by_hand() {
        let mut s = Wf2q::new(&[Some(1.0), Some(2.0)]);
        for id in 0..40 {
            s.enqueue(frame(id, (id % 2) as u16, 100), 0);
        }
        let got: Vec<u16> = (0..9).map(|_| s.dequeue(0).unwrap().class).collect();
        assert_eq!(got, [1, 0, 1, 1, 0, 1, 1, 0, 1]);
    }

    /// Four backlogged classes with weights 1 : 2 : 3 : 4 and unequal frames get their shares.
    #[test]
    fn long_run_shares_follow_weights() {
        let w = [1.0, 2.0, 3.0, 4.0];
        super::super::testing::assert_long_run_shares(&mut Wf2q::new(&w.map(Some)), 2.0);
    }

    #[test]
    fn by_hand() {
        let c = [
            ClassAtPort { share: 3.0, lmin: 100.0, lmax: 1000.0, overhead: 0.0 },
            ClassAtPort { share: 1.0, lmin: 100.0, lmax: 2000.0, overhead: 0.0 },
        ];
        // ρ0 = 0.75 C = 750, Θ0 = 1000/750 + 2000/1000 = 3.3333 s.
        let a = latency_rate(0, &c, 1000.0);
        assert!((a.rate - 750.0).abs() < 1e-9 && (a.latency - (1000.0 / 750.0 + 2.0)).abs() < 1e-12);
    }
}
