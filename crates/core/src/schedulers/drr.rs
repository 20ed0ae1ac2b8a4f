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

use super::{ClassAtPort, LatencyRate};

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

#[cfg(test)]
mod tests {
    use super::*;

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
