//! Worst-case fair weighted fair queueing (WF²Q, Bennett & Zhang 1996), one queue per class.
//!
//! Service model: a latency-rate server with ρ_i = φ_i / Σ_j φ_j · C (classes present) and
//! Θ_i = L_i / ρ_i + L_max / C, L_max the largest frame at the port (Stiliadis & Varma 1998,
//! Table I). Lengths are wire lengths: the scheduler is assumed to account for the per-frame
//! overhead, as a link-rate scheduler must.

use super::{ClassAtPort, LatencyRate};

pub fn latency_rate(i: usize, classes: &[ClassAtPort], capacity: f64) -> LatencyRate {
    let total: f64 = classes.iter().map(|c| c.share).sum();
    let rate = classes[i].share / total * capacity;
    let lmax = classes.iter().map(|c| c.lmax).fold(0.0, f64::max);
    LatencyRate { rate, latency: classes[i].lmax / rate + lmax / capacity }
}

#[cfg(test)]
mod tests {
    use super::*;

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
