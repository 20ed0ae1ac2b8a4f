//! Self-clocked fair queueing (Golestani 1994), one queue per class.
//!
//! Service model: a latency-rate server with ρ_i = φ_i / Σ_j φ_j · C and
//! Θ_i = L_i / ρ_i + Σ_{j≠i} L_j / C (Stiliadis & Varma 1998: (V − 1)·L_max / C for V sessions,
//! written here with each other class's own largest frame). Wire lengths, as for WF²Q.

use super::{ClassAtPort, LatencyRate};

pub fn latency_rate(i: usize, classes: &[ClassAtPort], capacity: f64) -> LatencyRate {
    let total: f64 = classes.iter().map(|c| c.share).sum();
    let rate = classes[i].share / total * capacity;
    let others: f64 = classes.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, c)| c.lmax).sum();
    LatencyRate { rate, latency: classes[i].lmax / rate + others / capacity }
}

#[cfg(test)]
mod tests {
    use super::*;

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
