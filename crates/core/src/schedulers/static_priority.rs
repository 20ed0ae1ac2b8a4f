//! Non-preemptive static priority between classes (lower `priority` number first), FIFO inside
//! a class.
//!
//! Service model: class k sees the link rate minus the arrival curves of the higher classes,
//! delayed by the largest frame of the lower classes (non-preemption):
//! β_k(t) = [C·t − Σ_{j<k} α_j(t) − max_{j>k} L_j]^+ (Le Boudec & Thiran, Prop. 1.3.4 / 6.2.1).

use super::{Behaviour, Queued};
use std::collections::VecDeque;

/// Non-preemptive static priority: the head of the highest non-empty level goes first; a frame
/// in transmission is never interrupted (the simulator asks only when the link is free).
pub struct StaticPriority {
    /// Priority level of each class index (frames without a class go last).
    level_of_class: Vec<usize>,
    /// One FIFO per distinct priority, highest first.
    levels: Vec<VecDeque<Queued>>,
    len: usize,
}

impl StaticPriority {
    pub fn new(classes: &[crate::model::TrafficClass]) -> Self {
        let mut prios: Vec<u32> = classes.iter().map(|c| c.priority).collect();
        prios.sort_unstable();
        prios.dedup();
        let level_of_class =
            classes.iter().map(|c| prios.binary_search(&c.priority).expect("listed")).collect();
        StaticPriority { level_of_class, levels: vec![VecDeque::new(); prios.len() + 1], len: 0 }
    }
}

impl Behaviour for StaticPriority {
    fn enqueue(&mut self, item: Queued, _now_ns: i64) {
        let level = self.level_of_class.get(item.class as usize).copied().unwrap_or(self.levels.len() - 1);
        self.levels[level].push_back(item);
        self.len += 1;
    }
    fn dequeue(&mut self, _now_ns: i64) -> Option<Queued> {
        let item = self.levels.iter_mut().find_map(|q| q.pop_front());
        self.len -= item.is_some() as usize;
        item
    }
    fn len(&self) -> usize {
        self.len
    }
}

/// Static priority as a [`super::Discipline`]: levels come from the classes' priorities.
pub struct StaticPriorityDiscipline;

impl super::Discipline for StaticPriorityDiscipline {
    fn kind(&self) -> &'static str {
        "static_priority"
    }
    fn check(&self, _place: &str, _class_known: &dyn Fn(&str) -> bool) -> Vec<super::ConfigProblem> {
        Vec::new()
    }
    fn holds_nothing_back(&self) -> bool {
        true
    }
    fn kernel(&self) -> super::Kernel {
        super::Kernel::PriorityLevels
    }
    fn service(&self) -> super::Service<'_> {
        super::Service::StaticPriority
    }
    fn behaviour(&self, classes: &[crate::model::TrafficClass], _link_rate: f64) -> Box<dyn Behaviour> {
        Box::new(StaticPriority::new(classes))
    }
}

/// Formulas of the seed papers.
pub mod paper {
    /// Zhang & Zhang (2005), seed 002 Eq. 2: delay of priority level k (levels sorted highest
    /// first; bursts in bits, rates in bit/s): (MTU + Σ_{j≤k} b_j) / (C − Σ_{j<k} r_j) + t_mux.
    /// The burst sum includes level k itself (I-002-10). Infinite when the higher levels saturate C.
    pub fn zhang_zhang_delay(
        k: usize,
        bursts: &[f64],
        rates: &[f64],
        mtu_bits: f64,
        capacity: f64,
        t_mux: f64,
    ) -> f64 {
        let rest = capacity - rates[..k].iter().sum::<f64>();
        if rest <= 0.0 {
            return f64::INFINITY;
        }
        (mtu_bits + bursts[..=k].iter().sum::<f64>()) / rest + t_mux
    }
}

#[cfg(test)]
mod tests {
    use super::paper::*;

    /// TV-002-5: C = 100 Mb/s, MTU = 1500 B, t_mux = 10 µs, b = [4000, 8000, 12000] bit,
    /// r = [1, 2, 3] Mb/s → 170.000, 252.424, 381.134 µs.
    #[test]
    fn tv_002_5_zhang_zhang() {
        let b = [4000.0, 8000.0, 12000.0];
        let r = [1e6, 2e6, 3e6];
        let d: Vec<f64> = (0..3).map(|k| zhang_zhang_delay(k, &b, &r, 12000.0, 100e6, 10e-6) * 1e6).collect();
        for (got, want) in d.iter().zip([170.000, 252.424, 381.134]) {
            assert!((got - want).abs() < 5e-4, "{got} vs {want}");
        }
    }
}
