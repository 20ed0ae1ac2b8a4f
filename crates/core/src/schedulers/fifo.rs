//! FIFO output port: one queue, served at the link rate.
//!
//! Service model: a rate-latency server β_{C,T} for the aggregate, T the technological latency
//! of the node (the analysis adds FIFO's per-flow residual service on top).

use super::{Behaviour, Queued};
use std::collections::VecDeque;

/// One first-in first-out queue.
#[derive(Default)]
pub struct Fifo {
    queue: VecDeque<Queued>,
}

impl Behaviour for Fifo {
    fn enqueue(&mut self, item: Queued, _now_ns: i64) {
        self.queue.push_back(item);
    }
    fn dequeue(&mut self, _now_ns: i64) -> Option<Queued> {
        self.queue.pop_front()
    }
    fn len(&self) -> usize {
        self.queue.len()
    }
}

/// FIFO as a [`super::Discipline`].
pub struct FifoDiscipline;

impl super::Discipline for FifoDiscipline {
    fn kind(&self) -> &'static str {
        "fifo"
    }
    fn check(&self, _place: &str, _class_known: &dyn Fn(&str) -> bool) -> Vec<super::ConfigProblem> {
        Vec::new()
    }
    fn single_fifo(&self) -> bool {
        true
    }
    fn holds_nothing_back(&self) -> bool {
        true
    }
    fn kernel(&self) -> super::Kernel {
        super::Kernel::OneQueue
    }
    fn service(&self) -> super::Service<'_> {
        super::Service::Fifo
    }
    fn behaviour(&self, _classes: &[crate::model::TrafficClass], _link_rate: f64) -> Box<dyn Behaviour> {
        Box::new(Fifo::default())
    }
}

/// Formulas of seed 002 (Vila-Carbó et al.) for FIFO ports and AFDX end systems.
pub mod paper {
    /// Loeser & Haertig (2004), seed 002 Eq. 1: delay of a FIFO port fed by token buckets
    /// (bursts in bits, capacity in bit/s, t_mux in s): Σ b_k / C + t_mux.
    pub fn loeser_haertig_delay(bursts: &[f64], capacity: f64, t_mux: f64) -> f64 {
        bursts.iter().sum::<f64>() / capacity + t_mux
    }

    /// Seed 002 Eq. 1, buffer: Σ b_k + C · t_mux (bits).
    pub fn loeser_haertig_buffer(bursts: &[f64], capacity: f64, t_mux: f64) -> f64 {
        bursts.iter().sum::<f64>() + capacity * t_mux
    }

    /// Seed 002 Eq. 3: crossing a node with delay d turns (r, b) into (r, b + r·d); returns the
    /// bursts after each of the given delays (the sum runs from the first switch, I-002-3).
    pub fn burst_propagation(b0: f64, rate: f64, delays: &[f64]) -> Vec<f64> {
        delays
            .iter()
            .scan(b0, |b, d| {
                *b += rate * d;
                Some(*b)
            })
            .collect()
    }

    /// Seed 002 Eq. 4, the AFDX end-system jitter bound: min(500 µs, Σ (20 + Lmax_k)·8 / C +
    /// 40 µs), with Lmax in bytes and C in bit/s; returns seconds.
    pub fn afdx_jitter_bound(lmax_bytes: &[f64], capacity: f64) -> f64 {
        afdx_jitter_mux(lmax_bytes, capacity).min(500e-6)
    }

    /// The second term of Eq. 4 alone, Σ (20 + Lmax_k)·8 / C + 40 µs: what the multiplexer can
    /// cause, to be checked against the 500 µs the standard allows.
    pub fn afdx_jitter_mux(lmax_bytes: &[f64], capacity: f64) -> f64 {
        lmax_bytes.iter().map(|l| (20.0 + l) * 8.0).sum::<f64>() / capacity + 40e-6
    }
}

#[cfg(test)]
mod tests {
    use super::paper::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-9 * b.abs().max(1e-12), "{a} != {b}");
    }

    /// TV-002-1: VL1 of seed 002's sample network, 224 µs as printed (bursts without the 20-byte
    /// preamble and gap), 233.6 µs with them (as Eq. 4 prescribes).
    #[test]
    fn tv_002_1_end_to_end_example() {
        let c = 100e6;
        for (extra, expected) in [(0.0, 224e-6), (20.0, 233.6e-6)] {
            let b = |lmax: f64| (lmax + extra) * 8.0;
            let d_snd = loeser_haertig_delay(&[b(200.0), b(400.0)], c, 40e-6);
            let d_sw1 = loeser_haertig_delay(&[b(200.0), b(500.0)], c, 10e-6);
            let d_sw2 = loeser_haertig_delay(&[b(200.0), b(50.0)], c, 10e-6);
            close(d_snd + d_sw1 + d_sw2 + 40e-6, expected);
        }
        close(loeser_haertig_delay(&[1600.0, 3200.0], 100e6, 40e-6), 88e-6);
    }

    /// TV-002-6: b0 = 4000 bit, r = 1 Mb/s through delays of 66 and 30 µs.
    #[test]
    fn tv_002_6_burst_propagation() {
        let b = burst_propagation(4000.0, 1e6, &[66e-6, 30e-6]);
        close(b[1], 4096.0);
        close((b[1] - 4000.0) / 1e6, 96e-6);
    }

    /// TV-002-7: buffer of switch 1 in TV-002-1: 5600 + 1e8 · 1e-5 = 6600 bit.
    #[test]
    fn tv_002_7_buffer() {
        close(loeser_haertig_buffer(&[1600.0, 4000.0], 100e6, 10e-6), 6600.0);
    }

    /// TV-002-8: Eq. 4 for the four VLs on one end-system link: 138.4 µs (< 500 µs).
    #[test]
    fn tv_002_8_afdx_jitter() {
        close(afdx_jitter_bound(&[200.0, 400.0, 500.0, 50.0], 100e6), 138.4e-6);
        close(afdx_jitter_bound(&[1518.0; 40], 100e6), 500e-6);
    }
}
