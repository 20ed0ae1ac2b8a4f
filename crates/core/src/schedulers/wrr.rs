//! Weighted round robin between classes: class i sends up to w_i frames per round.
//!
//! Service model: while backlogged, class i waits at most for the other classes' frames of one
//! round, O_i = Σ_{j≠i} w_j L_j, and then sends w_i frames of at least l_i; so it is guaranteed
//! β_{ρ_i, Θ_i} with ρ_i = w_i l_i C / (w_i l_i + O_i) and Θ_i = O_i / C (wire bits; the
//! classical WRR bound, e.g. Georges, Divoux & Rondeau, or Mifdaoui & Ayed for AFDX).

use super::{ClassAtPort, LatencyRate};

pub fn latency_rate(i: usize, classes: &[ClassAtPort], capacity: f64) -> LatencyRate {
    let me = &classes[i];
    let others: f64 =
        classes.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, c)| c.share * c.lmax).sum();
    let mine = me.share * me.lmin;
    LatencyRate { rate: mine * capacity / (mine + others), latency: others / capacity }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// w = 2 and 1, frames 100..1000 bits (wire), C = 1e6: class 0: O = 1000, ρ = 200/1200 C,
    /// Θ = 1 ms; class 1: O = 2000, ρ = 100/2100 C, Θ = 2 ms.
    #[test]
    fn two_classes_by_hand() {
        let c = [
            ClassAtPort { share: 2.0, lmin: 100.0, lmax: 1000.0, overhead: 0.0 },
            ClassAtPort { share: 1.0, lmin: 100.0, lmax: 1000.0, overhead: 0.0 },
        ];
        let a = latency_rate(0, &c, 1e6);
        assert!((a.rate - 1e6 * 200.0 / 1200.0).abs() < 1e-6 && (a.latency - 1e-3).abs() < 1e-15);
        let b = latency_rate(1, &c, 1e6);
        assert!((b.rate - 1e6 * 100.0 / 2100.0).abs() < 1e-6 && (b.latency - 2e-3).abs() < 1e-15);
    }
}
