//! Deficit round robin (Shreedhar & Varghese, 1996), one queue per class.
//!
//! Service model (derived in docs/ANALYSIS.md): class i with quantum Q_i, while backlogged, is
//! guaranteed β_{ρ_i, Θ_i} with, in wire bits (s_j = wire/frame size ratio of class j's smallest
//! frame, F_w = Σ_j s_j Q_j over the classes present, L_j the largest frame of class j):
//!
//!   ρ_i = Q_i · C / F_w,
//!   Θ_i = (F_w − s_i Q_i + Σ_{j≠i} s_j L_j) / C + L_i · F_w / (Q_i · C).
//!
//! It holds for any quantum (a quantum below the largest frame only makes Θ_i larger). It has the
//! form of the bound of Boyer, Stea and Mangoua Sofack (2012) for DRR; with s = 1 and Q ≥ L it is
//! close to Stiliadis & Varma's latency (3F − 2Q_i)/C.

use super::{by_class_index, check_class_values, ClassShares, ConfigProblem, Discipline, Service};
use super::{Behaviour, ClassAtPort, LatencyRate, Queued};
use crate::model::TrafficClass;
use crate::units::DataSize;
use std::collections::BTreeMap;
use std::collections::VecDeque;

/// Deficit round robin as Shreedhar & Varghese (IEEE/ACM ToN 4(3), 1996, Fig. 3): an active list
/// of backlogged classes; a class at the head of the list adds its quantum to its deficit once
/// per visit and sends its head frames while they fit (Ethernet frame bits, as the quanta are
/// configured); it keeps the leftover when the head does not fit and loses it when its queue
/// empties (seed catalogue §1(a)). A quantum below a class's frames makes it wait several rounds.
///
/// Classes without a quantum (or frames without a class, which validation refuses) go to a
/// background FIFO served only when no class is backlogged, so no frame is ever stranded.
pub struct Drr {
    /// Quantum per class index in frame bits, at least 1 (0: the class has none).
    quantum: Vec<u64>,
    deficit: Vec<u64>,
    queues: Vec<VecDeque<Queued>>,
    /// Backlogged classes in visiting order; the front is the class being visited.
    active: VecDeque<u16>,
    /// The front of `active` has already received its quantum for this visit.
    visiting: bool,
    background: VecDeque<Queued>,
    len: usize,
}

impl Drr {
    /// `quanta_bits[i]`: the quantum of class index i in frame bits (None: not scheduled).
    /// Quanta are rounded to whole bits, at least one, so every round makes progress.
    pub fn new(quanta_bits: &[Option<f64>]) -> Self {
        let n = quanta_bits.len();
        Drr {
            quantum: quanta_bits.iter().map(|q| q.map_or(0, |q| q.round().max(1.0) as u64)).collect(),
            deficit: vec![0; n],
            queues: vec![VecDeque::new(); n],
            active: VecDeque::with_capacity(n),
            visiting: false,
            background: VecDeque::new(),
            len: 0,
        }
    }

    /// After a whole pass of the active list in which no head fitted, jump over the rounds in
    /// which none would: r = min_i ⌈(head_i − deficit_i) / Q_i⌉ rounds are needed before the first
    /// class can send, so every class gets (r − 1) quanta at once. Keeps a dequeue O(classes)
    /// when quanta are far below the frame sizes, with the same order as visiting round by round.
    fn skip_idle_rounds(&mut self) {
        let rounds = self
            .active
            .iter()
            .map(|&i| {
                let i = i as usize;
                let head = self.queues[i].front().expect("active classes are backlogged").frame_bits as u64;
                (head - self.deficit[i]).div_ceil(self.quantum[i])
            })
            .min()
            .unwrap_or(1);
        for &i in &self.active {
            self.deficit[i as usize] += (rounds - 1) * self.quantum[i as usize];
        }
    }
}

impl Behaviour for Drr {
    fn enqueue(&mut self, item: Queued, _now_ns: i64) {
        let i = item.class as usize;
        self.len += 1;
        if self.quantum.get(i).is_some_and(|&q| q > 0) {
            if self.queues[i].is_empty() {
                self.active.push_back(item.class);
            }
            self.queues[i].push_back(item);
        } else {
            self.background.push_back(item);
        }
    }

    fn dequeue(&mut self, _now_ns: i64) -> Option<Queued> {
        let mut missed = 0;
        while let Some(&front) = self.active.front() {
            let i = front as usize;
            if !self.visiting {
                self.deficit[i] += self.quantum[i];
                self.visiting = true;
            }
            let head = self.queues[i].front().expect("active classes are backlogged").frame_bits as u64;
            if head <= self.deficit[i] {
                self.deficit[i] -= head;
                let item = self.queues[i].pop_front();
                if self.queues[i].is_empty() {
                    self.deficit[i] = 0;
                    self.active.pop_front();
                    self.visiting = false;
                }
                self.len -= 1;
                return item;
            }
            // The head does not fit: the class keeps its deficit and goes to the back.
            self.active.rotate_left(1);
            self.visiting = false;
            missed += 1;
            if missed == self.active.len() {
                self.skip_idle_rounds();
                missed = 0;
            }
        }
        let item = self.background.pop_front();
        self.len -= item.is_some() as usize;
        item
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// The latency-rate guarantee of class `i` among `classes` (shares are quanta in frame bits).
pub fn latency_rate(i: usize, classes: &[ClassAtPort], capacity: f64) -> LatencyRate {
    // Wire bits per frame bit, at worst (the smallest frame carries the most overhead).
    let s = |c: &ClassAtPort| c.lmin / (c.lmin - c.overhead).max(1.0);
    let f_w: f64 = classes.iter().map(|c| s(c) * c.share).sum();
    let me = &classes[i];
    let others_l: f64 =
        classes.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, c)| s(c) * (c.lmax - c.overhead)).sum();
    let lmax_frame = me.lmax - me.overhead;
    LatencyRate {
        rate: me.share * capacity / f_w,
        latency: (f_w - s(me) * me.share + others_l) / capacity + lmax_frame * f_w / (me.share * capacity),
    }
}

/// DRR as a [`Discipline`]: `quanta[class]` (Ethernet frame bits) per round.
pub struct DrrDiscipline<'a> {
    pub quanta: &'a BTreeMap<String, DataSize>,
}

impl Discipline for DrrDiscipline<'_> {
    fn kind(&self) -> &'static str {
        "drr"
    }
    fn check(&self, place: &str, class_known: &dyn Fn(&str) -> bool) -> Vec<ConfigProblem> {
        check_class_values(
            place,
            "quanta",
            self.quanta.iter().map(|(c, q)| (c.clone(), q.bits())),
            &super::positive_size,
            class_known,
        )
    }
    fn service(&self) -> Service<'_> {
        Service::PerClass(self)
    }
    fn behaviour(&self, classes: &[TrafficClass], _link_rate: f64) -> Box<dyn Behaviour> {
        Box::new(Drr::new(&by_class_index(classes, |c| self.share(c))))
    }
}

impl ClassShares for DrrDiscipline<'_> {
    fn share(&self, class: &str) -> Option<f64> {
        self.quanta.get(class).map(|q| q.bits())
    }
    fn latency_rate(&self, k: usize, present: &[ClassAtPort], _names: &[&str], rate: f64) -> LatencyRate {
        latency_rate(k, present, rate)
    }
    fn frame_warning(&self, class: &str, largest_frame_bits: f64, flow: &str) -> Option<String> {
        quantum_warning(class, self.share(class)?, largest_frame_bits, flow)
    }
}

/// The warning for a quantum below the class's largest frame (legal, but the class then needs
/// several rounds per frame).
pub(crate) fn quantum_warning(
    class: &str,
    quantum_bits: f64,
    largest_frame_bits: f64,
    flow: &str,
) -> Option<String> {
    (quantum_bits < largest_frame_bits).then(|| {
        format!(
            "quantum of class '{class}' ({}B) is smaller than its largest frame ({}B, flow '{flow}'): \
             a frame may wait several rounds, so latency grows",
            quantum_bits / 8.0,
            largest_frame_bits / 8.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(frame: u32, class: u16, bytes: u32) -> Queued {
        Queued { flow: u32::MAX, frame, class, wire_bits: (bytes + 20) * 8, frame_bits: bytes * 8 }
    }

    fn drain(s: &mut dyn Behaviour) -> Vec<Queued> {
        std::iter::from_fn(|| s.dequeue(0)).collect()
    }

    /// TV-000-6 (seed catalogue §1(d)): quanta A = 500, B = 500, C = 1000 B; queues
    /// A = [200, 750, 200], B = [1000, 100], C = [600, 600, 300] at t = 0. Expected
    /// (1,A,200) (1,C,600) (2,A,750) (2,B,1000) (2,C,600) (2,C,300) (3,A,200) (3,B,100):
    /// B sends nothing in round 1 (1000 > 500), C's deficit resets when it empties in round 2.
    #[test]
    fn tv_000_6_round_order() {
        let mut s = Drr::new(&[Some(4000.0), Some(4000.0), Some(8000.0)]);
        let queues: [&[u32]; 3] = [&[200, 750, 200], &[1000, 100], &[600, 600, 300]];
        let mut id = 0;
        for (c, q) in queues.iter().enumerate() {
            for &b in *q {
                s.enqueue(frame(id, c as u16, b), 0);
                id += 1;
            }
        }
        let got: Vec<(u16, u32)> = drain(&mut s).iter().map(|q| (q.class, q.frame_bits / 8)).collect();
        let want = [(0, 200), (2, 600), (0, 750), (1, 1000), (2, 600), (2, 300), (0, 200), (1, 100)];
        assert_eq!(got, want);
        assert!(s.is_empty());
    }

    /// Quanta of 100 B against 1000 B frames: each class needs ten rounds per frame, so the
    /// classes still alternate, and the order is the one round-by-round visiting gives (A's
    /// 1000 B head fits in round 10, B's 300 B head in round 3, then A again at 20).
    #[test]
    fn small_quanta_accumulate_over_rounds() {
        let mut s = Drr::new(&[Some(800.0), Some(800.0)]);
        s.enqueue(frame(0, 0, 1000), 0);
        s.enqueue(frame(1, 0, 1000), 0);
        s.enqueue(frame(2, 1, 300), 0);
        s.enqueue(frame(3, 1, 1000), 0);
        let got: Vec<u32> = drain(&mut s).iter().map(|q| q.frame).collect();
        // B: 300 B at round 3 (deficit 0 left), 1000 B at round 13; A: rounds 10 and 20.
        assert_eq!(got, [2, 0, 3, 1]);
    }

    /// A class whose queue empties forfeits its leftover deficit (§1(a)).
    #[test]
    fn deficit_resets_when_the_class_empties() {
        let mut s = Drr::new(&[Some(8000.0), Some(8000.0)]);
        s.enqueue(frame(0, 0, 100), 0);
        assert_eq!(s.dequeue(0).map(|q| q.frame), Some(0));
        // Had A kept 900 B, it could now send 1000 B + 400 B before B's second frame.
        for (id, c, b) in [(1, 0, 1000), (2, 0, 400), (3, 1, 1000), (4, 1, 1000)] {
            s.enqueue(frame(id, c, b), 0);
        }
        let got: Vec<u32> = drain(&mut s).iter().map(|q| q.frame).collect();
        assert_eq!(got, [1, 3, 2, 4]);
    }

    /// Frames of a class without a quantum wait until the scheduled classes are idle.
    #[test]
    fn unlisted_classes_go_last() {
        let mut s = Drr::new(&[Some(8000.0), None]);
        s.enqueue(frame(0, 1, 100), 0);
        s.enqueue(frame(1, u16::MAX, 100), 0);
        s.enqueue(frame(2, 0, 100), 0);
        let got: Vec<u32> = drain(&mut s).iter().map(|q| q.frame).collect();
        assert_eq!(got, [2, 0, 1]);
    }

    /// Two classes, no wire overhead, Q = 1500 B and 500 B, L = 1500 B both, C = 1 Gb/s:
    /// class 0: ρ = 0.75 C, Θ = (2000 − 1500 + 1500)·8/C + 1500·2000·8/(1500·C) = 16 + 16 = 32 µs;
    /// class 1: ρ = 0.25 C, Θ = (2000 − 500 + 1500)·8/C + 1500·2000·8/(500·C) = 24 + 48 = 72 µs.
    #[test]
    fn two_classes_by_hand() {
        let b = 8.0;
        let c = [
            ClassAtPort { share: 1500.0 * b, lmin: 64.0 * b, lmax: 1500.0 * b, overhead: 0.0 },
            ClassAtPort { share: 500.0 * b, lmin: 64.0 * b, lmax: 1500.0 * b, overhead: 0.0 },
        ];
        let a = latency_rate(0, &c, 1e9);
        assert!((a.rate - 0.75e9).abs() < 1e-3 && (a.latency - 32e-6).abs() < 1e-12, "{a:?}");
        let z = latency_rate(1, &c, 1e9);
        assert!((z.rate - 0.25e9).abs() < 1e-3 && (z.latency - 72e-6).abs() < 1e-12, "{z:?}");
    }
}
