//! D2DRR (seed 000, Hua & Liu): deficit round robin whose quantum for class i is ω_i · Δ.
//!
//! The seed's delay theorems are kept under [`paper`], literally and with the corrected reading
//! side by side (catalogue §1(b), §1(e)): Theorem 2 as printed has no ceilings, the proof has them
//! (I-000-4); Theorem 1 blocks a flow by its own largest frame where non-preemptive priority is
//! blocked by the largest lower-priority frame (I-000-5).

/// One flow (or class) as the seed's theorems see it; sizes in bits, rates in bit/s.
#[derive(Clone, Copy, Debug)]
pub struct PaperFlow {
    /// Burst b_i (token bucket).
    pub burst: f64,
    /// Rate r_i.
    pub rate: f64,
    /// Quantum ω_i · Δ.
    pub quantum: f64,
    /// Largest packet L_i,max.
    pub lmax: f64,
}

pub mod paper {
    use super::PaperFlow;

    /// Theorem 1, source end-system delay under static priority read off the quantum (larger
    /// quantum = higher priority), plus the 0.5 ms redundancy skew:
    /// (Σ_{j: q_j ≥ q_i} b_j + L_i) / (C − Σ_{j: q_j > q_i} r_j) + skew.
    /// `textbook_blocking` replaces L_i by the largest lower-priority frame (I-000-5).
    pub fn thm1_source_delay(
        i: usize,
        flows: &[PaperFlow],
        capacity: f64,
        skew: f64,
        textbook_blocking: bool,
    ) -> f64 {
        let qi = flows[i].quantum;
        let bursts: f64 = flows.iter().filter(|f| f.quantum >= qi).map(|f| f.burst).sum();
        let rates: f64 = flows.iter().filter(|f| f.quantum > qi).map(|f| f.rate).sum();
        let blocking = if textbook_blocking {
            flows.iter().filter(|f| f.quantum < qi).map(|f| f.lmax).fold(0.0, f64::max)
        } else {
            flows[i].lmax
        };
        if capacity <= rates {
            return f64::INFINITY;
        }
        (bursts + blocking) / (capacity - rates) + skew
    }

    /// Theorem 2, D2DRR scheduling delay of flow i:
    /// (1/C)·[Σ_{j≠i} (⌈L_j/q_j⌉ + 1)·q_j + Σ_{j≠i} L_j + L_i], with the proof's ceilings when
    /// `ceilings` (the safe reading), as printed (no ceiling) otherwise.
    pub fn thm2_scheduling_delay(i: usize, flows: &[PaperFlow], capacity: f64, ceilings: bool) -> f64 {
        let others = flows.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, f)| f);
        let sum: f64 = others
            .map(|f| {
                let rounds = if ceilings { (f.lmax / f.quantum).ceil() } else { f.lmax / f.quantum };
                (rounds + 1.0) * f.quantum + f.lmax
            })
            .sum();
        (sum + flows[i].lmax) / capacity
    }

    /// Theorem 3, single-node service curve β⁰ = R⁰·(t − T⁰) as printed: R⁰ = Σ ω_iΔ over the
    /// time one round takes (Σ ω_iΔ / C, so R⁰ = C) and T⁰ = Σ_i of Theorem 2's bounds, which is
    /// very pessimistic (catalogue I-000-7). Returns (R⁰, T⁰).
    pub fn thm3_service_curve(flows: &[PaperFlow], capacity: f64, ceilings: bool) -> (f64, f64) {
        let t0 = (0..flows.len()).map(|i| thm2_scheduling_delay(i, flows, capacity, ceilings)).sum();
        (capacity, t0)
    }

    /// One switch of Corollary 6, as printed: T_k + max_{j: ω_i > ω_j} L_j / R_k +
    /// L_i / min_{j≠i}(R_k − r_j), with (R_k, T_k) from Theorem 3 (I-000-7).
    pub fn cor6_switch_delay(i: usize, flows: &[PaperFlow], capacity: f64, ceilings: bool) -> f64 {
        let (r0, t0) = thm3_service_curve(flows, capacity, ceilings);
        let lower = flows.iter().filter(|f| flows[i].quantum > f.quantum).map(|f| f.lmax).fold(0.0, f64::max);
        let min_rest = flows
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, f)| r0 - f.rate)
            .fold(f64::INFINITY, f64::min);
        t0 + lower / r0 + flows[i].lmax / min_rest
    }

    /// Corollary 6: the multihop switching delay, the sum over the switches crossed.
    pub fn cor6_multihop_delay(i: usize, switches: &[(Vec<PaperFlow>, f64)], ceilings: bool) -> f64 {
        switches.iter().map(|(flows, c)| cor6_switch_delay(i, flows, *c, ceilings)).sum()
    }
}

/// D2DRR's service model: DRR's, with quantum ω_i · Δ for class i (see [`super::drr`]).
pub fn quantum(base_quantum_bits: f64, factor: f64) -> f64 {
    base_quantum_bits * factor
}

/// D2DRR's behaviour: the seed's rules (§1(a)) are DRR's, with quantum ω_i · Δ for class i
/// (`factors` by class index, None for a class without one), deficit reset on an empty queue
/// included (an assumption the seed leaves to DRR).
pub fn behaviour(base_quantum_bits: f64, factors: &[Option<f64>]) -> super::drr::Drr {
    let quanta: Vec<Option<f64>> = factors.iter().map(|f| f.map(|w| quantum(base_quantum_bits, w))).collect();
    super::drr::Drr::new(&quanta)
}

/// D2DRR as a [`super::Discipline`]: DRR with quantum ω_i · Δ (`factors[class]` × `base_quantum`).
pub struct D2drrDiscipline<'a> {
    /// Δ, Ethernet frame bits.
    pub base_quantum: f64,
    pub factors: &'a std::collections::BTreeMap<String, f64>,
}

impl super::Discipline for D2drrDiscipline<'_> {
    fn kind(&self) -> &'static str {
        "d2drr"
    }
    fn check(&self, place: &str, class_known: &dyn Fn(&str) -> bool) -> Vec<super::ConfigProblem> {
        let mut out = Vec::new();
        if self.base_quantum.is_nan() || self.base_quantum <= 0.0 {
            out.push(super::ConfigProblem::Error {
                place: format!("{place}.base_quantum"),
                message: "must be positive".into(),
            });
        }
        // A class's quantum, factor × base, is a data size too.
        let base = self.base_quantum;
        let quantum_rule = move |w: f64| {
            crate::units::weight_rule(w).and_then(|()| {
                if w * base <= crate::units::MAX_SIZE_BITS {
                    Ok(())
                } else {
                    Err(format!("makes a quantum of more than 1 TiB ({w} x {}B), got {w}", base / 8.0))
                }
            })
        };
        out.extend(super::check_class_values(
            place,
            "factors",
            self.factors.iter().map(|(c, &w)| (c.clone(), w)),
            &quantum_rule,
            class_known,
        ));
        out
    }
    fn service(&self) -> super::Service<'_> {
        super::Service::PerClass(self)
    }
    fn behaviour(
        &self,
        classes: &[crate::model::TrafficClass],
        _link_rate: f64,
    ) -> Box<dyn super::Behaviour> {
        Box::new(behaviour(
            self.base_quantum,
            &super::by_class_index(classes, |c| self.factors.get(c).copied()),
        ))
    }
}

impl super::ClassShares for D2drrDiscipline<'_> {
    fn share(&self, class: &str) -> Option<f64> {
        self.factors.get(class).map(|&w| quantum(self.base_quantum, w))
    }
    fn latency_rate(
        &self,
        k: usize,
        present: &[super::ClassAtPort],
        _names: &[&str],
        rate: f64,
    ) -> super::LatencyRate {
        super::drr::latency_rate(k, present, rate)
    }
    fn frame_warning(&self, class: &str, largest_frame_bits: f64, flow: &str) -> Option<String> {
        super::drr::quantum_warning(class, self.share(class)?, largest_frame_bits, flow)
    }
}

#[cfg(test)]
mod tests {
    use super::paper::*;
    use super::PaperFlow;
    use crate::schedulers::{Behaviour, Queued};

    /// ω = 6 : 3 : 1 with Δ = 1000 B (the seed's choice): with every class backlogged with
    /// 1000 B frames, a round sends 6, 3 and 1 frames of the classes in turn.
    #[test]
    fn quanta_are_factor_times_base() {
        let mut s = super::behaviour(8000.0, &[Some(6.0), Some(3.0), Some(1.0)]);
        for id in 0..60u32 {
            let class = (id % 3) as u16;
            s.enqueue(
                Queued { flow: u32::MAX, frame: id, class, wire_bits: 1020 * 8, frame_bits: 1000 * 8 },
                0,
            );
        }
        let first_round: Vec<u16> = (0..10).map(|_| s.dequeue(0).unwrap().class).collect();
        assert_eq!(first_round, [0, 0, 0, 0, 0, 0, 1, 1, 1, 2]);
    }

    fn flows(bursts: [f64; 3], rates: [f64; 3]) -> Vec<PaperFlow> {
        let lmax = [500.0 * 8.0, 1000.0 * 8.0, 1500.0 * 8.0];
        let quanta = [6000.0 * 8.0, 3000.0 * 8.0, 1000.0 * 8.0];
        (0..3)
            .map(|i| PaperFlow { burst: bursts[i], rate: rates[i], quantum: quanta[i], lmax: lmax[i] })
            .collect()
    }

    /// TV-000-4: C = 100 Mb/s, L = 500/1000/1500 B, quanta 6000/3000/1000 B: 0.96, 1.44, 1.68 ms
    /// with ceilings; 0.76, 0.96, 1.08 ms as printed.
    #[test]
    fn tv_000_4_theorem_2() {
        let f = flows([0.0; 3], [0.0; 3]);
        for (ceil, want) in [(true, [0.96, 1.44, 1.68]), (false, [0.76, 0.96, 1.08])] {
            for (i, w) in want.iter().enumerate() {
                let d = thm2_scheduling_delay(i, &f, 100e6, ceil) * 1e3;
                assert!((d - w).abs() < 1e-9, "flow {i} ceilings={ceil}: {d} vs {w}");
            }
        }
    }

    /// Theorem 3 and Corollary 6 as printed, on TV-000-4's flows with rates 1/2/3 Mb/s:
    /// T⁰ = 0.96 + 1.44 + 1.68 = 4.08 ms (ceilings), R⁰ = C; flow 1 through one switch:
    /// 4.08 ms + max lower frame 1500 B / C (0.12 ms) + 500 B / (C − 3 Mb/s) (0.0412371 ms).
    #[test]
    fn theorem_3_and_corollary_6_as_printed() {
        let f = flows([0.0; 3], [1e6, 2e6, 3e6]);
        let (r0, t0) = thm3_service_curve(&f, 100e6, true);
        assert_eq!(r0, 100e6);
        assert!((t0 * 1e3 - 4.08).abs() < 1e-9);
        let d = cor6_switch_delay(0, &f, 100e6, true) * 1e3;
        assert!((d - (4.08 + 0.12 + 4000.0 / 97e6 * 1e3)).abs() < 1e-9, "{d}");
        let two = cor6_multihop_delay(0, &[(f.clone(), 100e6), (f, 100e6)], true) * 1e3;
        assert!((two - 2.0 * d).abs() < 1e-9);
    }

    /// TV-000-5: bursts 8000/16000/24000 bit, rates 1/2/3 Mb/s: 0.620000, 0.823232, 1.118557 ms.
    #[test]
    fn tv_000_5_theorem_1() {
        let f = flows([8000.0, 16000.0, 24000.0], [1e6, 2e6, 3e6]);
        for (i, w) in [0.620000, 0.823232, 1.118557].iter().enumerate() {
            let d = thm1_source_delay(i, &f, 100e6, 0.5e-3, false) * 1e3;
            assert!((d - w).abs() < 5e-7, "flow {i}: {d} vs {w}");
        }
        // Textbook blocking: the lowest-priority flow is blocked by nobody below it.
        let low = thm1_source_delay(2, &f, 100e6, 0.5e-3, true);
        assert!(low < thm1_source_delay(2, &f, 100e6, 0.5e-3, false));
    }
}
