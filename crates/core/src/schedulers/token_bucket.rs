//! Token-bucket shaper on a port's output (rate ρ, burst σ), with a FIFO or static-priority
//! scheduler inside.
//!
//! Service model: a greedy shaper with shaping curve σ + ρ·t is itself a service-curve element
//! with that curve (Le Boudec & Thiran Thm 1.5.1); in series with the link it serves at least
//! min(C, ρ)·[t − T]^+, the rate-latency curve below both, which the inner scheduler then shares.
//! The bucket must hold the largest frame, or frames could wait for tokens forever.

/// The rate the shaped port guarantees.
pub fn shaped_rate(link_rate: f64, rate: f64) -> f64 {
    link_rate.min(rate)
}
