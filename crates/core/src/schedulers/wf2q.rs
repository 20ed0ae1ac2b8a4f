//! Worst-case fair weighted fair queueing (WF²Q, Bennett & Zhang 1996), one queue per class.
//!
//! Service model: a latency-rate server with ρ_i = φ_i / Σ_j φ_j · C (classes present) and
//! Θ_i = L_i / ρ_i + L_max / C, L_max the largest frame at the port (Stiliadis & Varma 1998,
//! Table I). Lengths are wire lengths: the scheduler is assumed to account for the per-frame
//! overhead, as a link-rate scheduler must.

use super::{by_class_index, ClassShares, ConfigProblem, Discipline, Service};
use super::{Behaviour, ClassAtPort, ClassQueues, LatencyRate, Queued};
use crate::model::TrafficClass;
use std::collections::BTreeMap;

/// WF²Q (Bennett & Zhang, "WF²Q: worst-case fair weighted fair queueing", INFOCOM 1996), one
/// FIFO per class, lengths in wire bits (the service model's convention), against the exact
/// fluid GPS reference.
///
/// Shares are normalised, r_i = φ_i / Σ_j φ_j over the configured classes. Virtual time is GPS's:
/// it grows at C / Σ_{i GPS-backlogged} r_i, a class being GPS-backlogged while the finish tag of
/// its last arrived frame is ahead of V. A frame of class i arriving at t gets S = max(F_i, V(t))
/// and F = S + L / r_i. When the link frees, the frame sent is the eligible head (S ≤ V, started
/// in GPS) with the smallest F, lowest class index on ties. This gives the LR guarantee of the
/// module comment: a frame leaves no later than in GPS plus one largest frame.
///
/// (WF²Q+'s cheaper virtual time, max(V + W, min S), is not enough for that guarantee: its
/// catch-up can jump V to a greedy class's start tag, so a class arriving behind a large frame
/// of it waits that frame and another one; at one bit per time unit, a class of 62 % behind
/// 1518 B frames was delayed 1.5 times its bound in the schedulers' soundness tests.)
///
/// When the link and the GPS reference are both idle, V and the tags restart at 0 (a new busy
/// period). Classes without a weight (or frames without a class, which validation refuses) go to
/// a background FIFO served only when no weighted class is backlogged, so no frame is stranded.
pub struct Wf2q {
    /// r_i by class index (0: the class has no weight).
    share: Vec<f64>,
    /// Frames with their (S, F) tags.
    queues: ClassQueues<(Queued, f64, f64)>,
    /// Finish tag of each class's last arrived frame: the class is GPS-backlogged while F_i > V.
    last_finish: Vec<f64>,
    /// GPS virtual time, and the time (ns) it was last brought up to.
    v: f64,
    v_at: i64,
    /// The link's rate, bits per ns.
    bits_per_ns: f64,
}

impl Wf2q {
    /// `weights[i]`: φ_i of class index i (None: not scheduled); `link_rate` in bit/s.
    pub fn new(weights: &[Option<f64>], link_rate: f64) -> Self {
        let total: f64 = weights.iter().flatten().filter(|w| **w > 0.0).sum();
        let n = weights.len();
        Wf2q {
            share: weights.iter().map(|w| w.filter(|w| *w > 0.0).map_or(0.0, |w| w / total)).collect(),
            queues: ClassQueues::new(n),
            last_finish: vec![0.0; n],
            v: 0.0,
            v_at: 0,
            bits_per_ns: link_rate / 1e9,
        }
    }

    /// Brings GPS virtual time up to `now`: piecewise linear, its slope C / Σ r_i over the
    /// GPS-backlogged classes changing as each of them finishes.
    fn advance(&mut self, now_ns: i64) {
        let mut left = (now_ns - self.v_at).max(0) as f64;
        self.v_at = self.v_at.max(now_ns);
        while left > 0.0 {
            let (rate_sum, next) = self
                .last_finish
                .iter()
                .zip(&self.share)
                .filter(|(&f, _)| f > self.v)
                .fold((0.0, f64::INFINITY), |(sum, next), (&f, &r)| (sum + r, next.min(f)));
            if rate_sum == 0.0 {
                return; // GPS idle: V waits
            }
            let slope = self.bits_per_ns / rate_sum;
            let to_next = (next - self.v) / slope;
            if to_next >= left {
                self.v += slope * left;
                return;
            }
            self.v = next;
            left -= to_next;
        }
    }
}

impl Behaviour for Wf2q {
    fn enqueue(&mut self, item: Queued, now_ns: i64) {
        let i = item.class as usize;
        if !self.share.get(i).is_some_and(|&r| r > 0.0) {
            self.queues.push_background(item);
            return;
        }
        self.advance(now_ns);
        if self.queues.scheduled() == 0 && self.last_finish.iter().all(|&f| f <= self.v) {
            // The link's weighted queues and the GPS reference are both empty: a new busy period.
            self.v = 0.0;
            self.last_finish.fill(0.0);
        }
        let start = self.last_finish[i].max(self.v);
        let finish = start + item.wire_bits as f64 / self.share[i];
        self.last_finish[i] = finish;
        self.queues.push(i, (item, start, finish));
    }

    fn dequeue(&mut self, now_ns: i64) -> Option<Queued> {
        if self.queues.scheduled() == 0 {
            return self.queues.pop_background();
        }
        self.advance(now_ns);
        // The eligible head (started in GPS) with the smallest finish tag; should none have
        // started yet (rounding), the head that starts first.
        let mut best: Option<(usize, bool, f64)> = None;
        for (i, q) in self.queues.classes.iter().enumerate() {
            if let Some(&(_, start, finish)) = q.front() {
                let eligible = start <= self.v + 1e-9 * self.v.abs().max(1.0);
                let key = if eligible { finish } else { start };
                let better = match best {
                    None => true,
                    Some((_, e, k)) => (eligible && !e) || (eligible == e && key < k),
                };
                if better {
                    best = Some((i, eligible, key));
                }
            }
        }
        let (i, _, _) = best.expect("a weighted class is backlogged");
        self.queues.pop(i).map(|(item, _, _)| item)
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

/// WF2Q as a [`Discipline`]: `weights[class]`, shares of the link in proportion.
pub struct Wf2qDiscipline<'a> {
    pub weights: &'a BTreeMap<String, f64>,
}

impl Discipline for Wf2qDiscipline<'_> {
    fn kind(&self) -> &'static str {
        "wf2q"
    }
    fn check(&self, place: &str, class_known: &dyn Fn(&str) -> bool) -> Vec<ConfigProblem> {
        super::check_weights(place, self.weights, class_known)
    }
    fn service(&self) -> Service<'_> {
        Service::PerClass(self)
    }
    fn behaviour(&self, classes: &[TrafficClass], link_rate: f64) -> Box<dyn Behaviour> {
        Box::new(Wf2q::new(&by_class_index(classes, |c| self.share(c)), link_rate))
    }
}

impl ClassShares for Wf2qDiscipline<'_> {
    fn share(&self, class: &str) -> Option<f64> {
        self.weights.get(class).copied()
    }
    fn latency_rate(&self, k: usize, present: &[ClassAtPort], _names: &[&str], rate: f64) -> LatencyRate {
        latency_rate(k, present, rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::schedulers::testing::frame;

    /// Weights 1 : 2 (r = 1/3, 2/3), equal frames L, both backlogged from 0, so GPS's V grows
    /// with the work; heads as (S, F):
    /// V = 0: (0, 3L) (0, 1.5L) → 1; V = L: (0, 3L) (1.5L, 3L), only 0 eligible → 0;
    /// V = 2L: (3L, 6L) (1.5L, 3L) → 1; V = 3L: (3L, 6L) (3L, 4.5L) → 1 (smaller F);
    /// V = 4L: (3L, 6L) (4.5L, 6L) → 0; and so on: 1 0 1 | 1 0 1 | …
    #[test]
    fn two_classes_by_hand() {
        // A link of 1 bit per ns: each 800-bit frame takes 800 ns, and V grows by 1 per ns.
        let mut s = Wf2q::new(&[Some(1.0), Some(2.0)], 1e9);
        for id in 0..40 {
            s.enqueue(frame(id, (id % 2) as u16, 100), 0);
        }
        let got: Vec<u16> = (0..9).map(|k| s.dequeue(k * 800).unwrap().class).collect();
        assert_eq!(got, [1, 0, 1, 1, 0, 1, 1, 0, 1]);
    }

    /// Four backlogged classes with weights 1 : 2 : 3 : 4 and unequal frames get their shares.
    #[test]
    fn long_run_shares_follow_weights() {
        let w = [1.0, 2.0, 3.0, 4.0];
        super::super::testing::assert_long_run_shares(&mut Wf2q::new(&w.map(Some), 1e9), 2.0);
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
