//! Self-clocked fair queueing (Golestani 1994), one queue per class.
//!
//! Service model: a latency-rate server with ρ_i = φ_i / Σ_j φ_j · C and
//! Θ_i = L_i / ρ_i + Σ_{j≠i} L_j / C (Stiliadis & Varma 1998: (V − 1)·L_max / C for V sessions,
//! written here with each other class's own largest frame). Wire lengths, as for WF²Q.

use super::{by_class_index, ClassShares, ConfigProblem, Discipline, Service};
use super::{Behaviour, ClassAtPort, ClassQueues, LatencyRate, Queued};
use crate::model::TrafficClass;
use std::collections::BTreeMap;

/// Self-clocked fair queueing (Golestani, "A self-clocked fair queueing scheme for broadband
/// applications", INFOCOM 1994), one FIFO per class, lengths in wire bits (the service model's
/// convention). A frame of class i arriving gets F = max(F_i, v) + L / φ_i, F_i the tag of the
/// class's previous frame and v the tag of the frame in service (the last one dequeued); the
/// head with the smallest tag goes first, lowest class index on ties. When the classes empty,
/// v and the F_i restart at 0, Golestani's reset at the end of a busy period (here taken when the
/// last frame leaves the queue rather than the wire, which only makes frames arriving during its
/// transmission start the next busy period).
///
/// Classes without a weight (or frames without a class, which validation refuses) go to a
/// background FIFO served only when no weighted class is backlogged, so no frame is stranded.
pub struct Scfq {
    /// 1 / φ_i by class index (0: the class has no weight).
    inv_weight: Vec<f64>,
    /// Frames with their finish tags (increasing within a class).
    queues: ClassQueues<(Queued, f64)>,
    /// Tag of each class's last arrived frame.
    last_finish: Vec<f64>,
    /// Tag of the frame in service.
    v: f64,
}

impl Scfq {
    /// `weights[i]`: φ_i of class index i (None: not scheduled).
    pub fn new(weights: &[Option<f64>]) -> Self {
        let n = weights.len();
        Scfq {
            inv_weight: weights.iter().map(|w| w.filter(|w| *w > 0.0).map_or(0.0, |w| 1.0 / w)).collect(),
            queues: ClassQueues::new(n),
            last_finish: vec![0.0; n],
            v: 0.0,
        }
    }
}

impl Behaviour for Scfq {
    fn enqueue(&mut self, item: Queued, _now_ns: i64) {
        let i = item.class as usize;
        if self.inv_weight.get(i).is_some_and(|&x| x > 0.0) {
            let tag = self.last_finish[i].max(self.v) + item.wire_bits as f64 * self.inv_weight[i];
            self.last_finish[i] = tag;
            self.queues.push(i, (item, tag));
        } else {
            self.queues.push_background(item);
        }
    }

    fn dequeue(&mut self, _now_ns: i64) -> Option<Queued> {
        if self.queues.scheduled() == 0 {
            return self.queues.pop_background();
        }
        let mut best: Option<(usize, f64)> = None;
        for (i, q) in self.queues.classes.iter().enumerate() {
            if let Some(&(_, tag)) = q.front() {
                if best.is_none_or(|(_, b)| tag < b) {
                    best = Some((i, tag));
                }
            }
        }
        let (i, tag) = best.expect("a weighted class is backlogged");
        let (item, _) = self.queues.pop(i).expect("backlogged");
        if self.queues.scheduled() == 0 {
            self.v = 0.0;
            self.last_finish.fill(0.0);
        } else {
            self.v = tag;
        }
        Some(item)
    }

    fn len(&self) -> usize {
        self.queues.len()
    }
}

pub fn latency_rate(i: usize, classes: &[ClassAtPort], capacity: f64) -> LatencyRate {
    let total: f64 = classes.iter().map(|c| c.share).sum();
    let rate = classes[i].share / total * capacity;
    let others: f64 = classes.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, c)| c.lmax).sum();
    LatencyRate { rate, latency: classes[i].lmax / rate + others / capacity }
}

/// SCFQ as a [`Discipline`]: `weights[class]`, shares of the link in proportion.
pub struct ScfqDiscipline<'a> {
    pub weights: &'a BTreeMap<String, f64>,
}

impl Discipline for ScfqDiscipline<'_> {
    fn kind(&self) -> &'static str {
        "scfq"
    }
    fn check(&self, place: &str, class_known: &dyn Fn(&str) -> bool) -> Vec<ConfigProblem> {
        super::check_weights(place, self.weights, class_known)
    }
    fn service(&self) -> Service<'_> {
        Service::PerClass(self)
    }
    fn behaviour(&self, classes: &[TrafficClass], _link_rate: f64) -> Box<dyn Behaviour> {
        Box::new(Scfq::new(&by_class_index(classes, |c| self.share(c))))
    }
}

impl ClassShares for ScfqDiscipline<'_> {
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

    /// Weights 1 : 2, equal frames L, all at t = 0 (v = 0): class 0's tags L, 2L, 3L…, class
    /// 1's 0.5L, L, 1.5L…; by smallest tag, class 0 first on the tie at L: 1 0 1 1 0 1 1 0 1.
    #[test]
    fn two_classes_by_hand() {
        let mut s = Scfq::new(&[Some(1.0), Some(2.0)]);
        for id in 0..40 {
            s.enqueue(frame(id, (id % 2) as u16, 100), 0);
        }
        let got: Vec<u16> = (0..9).map(|_| s.dequeue(0).unwrap().class).collect();
        assert_eq!(got, [1, 0, 1, 1, 0, 1, 1, 0, 1]);
    }

    /// A frame arriving at an idle class is tagged from the tag in service, not from 0: class 0
    /// joining late does not get to catch up on the service class 1 received meanwhile.
    #[test]
    fn late_class_starts_from_the_frame_in_service() {
        let mut s = Scfq::new(&[Some(1.0), Some(1.0)]);
        for id in 0..10 {
            s.enqueue(frame(id, 1, 100), 0);
        }
        for _ in 0..5 {
            assert_eq!(s.dequeue(0).unwrap().class, 1);
        }
        // In service: class 1's 5th frame, tag 5L. Class 0's frames get 6L, 7L; class 1's next 6L.
        s.enqueue(frame(10, 0, 100), 0);
        s.enqueue(frame(11, 0, 100), 0);
        let got: Vec<u16> = (0..4).map(|_| s.dequeue(0).unwrap().class).collect();
        assert_eq!(got, [0, 1, 0, 1]);
    }

    /// Four backlogged classes with weights 1 : 2 : 3 : 4 and unequal frames get their shares.
    #[test]
    fn long_run_shares_follow_weights() {
        let w = [1.0, 2.0, 3.0, 4.0];
        super::super::testing::assert_long_run_shares(&mut Scfq::new(&w.map(Some)), 4.0);
    }

    #[test]
    fn by_hand() {
        let c = [
            ClassAtPort { share: 1.0, lmin: 100.0, lmax: 1000.0, overhead: 0.0 },
            ClassAtPort { share: 1.0, lmin: 100.0, lmax: 2000.0, overhead: 0.0 },
            ClassAtPort { share: 2.0, lmin: 100.0, lmax: 500.0, overhead: 0.0 },
        ];
        // ρ0 = C/4 = 250, Θ0 = 1000/250 + (2000 + 500)/1000 = 6.5 s.
        let a = latency_rate(0, &c, 1000.0);
        assert!((a.rate - 250.0).abs() < 1e-9 && (a.latency - 6.5).abs() < 1e-12);
    }
}
