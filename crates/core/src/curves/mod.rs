//! Piecewise-linear curves of deterministic network calculus (min-plus algebra), in `f64`.
//!
//! * [`Curve`]: one piecewise-linear type for arrival curves (token buckets, minima of token
//!   buckets, staircases) and service curves (rate-latency, maxima of rate-latency curves).
//! * [`minplus`]: convolution (servers in tandem) and deconvolution (output arrival curves).
//! * [`deviation`]: horizontal and vertical deviations (delay and backlog bounds).
//! * [`residual`]: left-over service under blind, FIFO and static-priority multiplexing.
//!
//! Section and theorem numbers refer to J.-Y. Le Boudec and P. Thiran, *Network Calculus*,
//! Springer LNCS 2050 (online version).
//! An infinite bound is never a curve value: operations that may diverge return [`Unbounded`].

mod curve;
pub mod deviation;
pub mod minplus;
pub mod residual;
mod unbounded;

pub use curve::{Curve, Point};
pub use deviation::{horizontal_deviation, latency, vertical_deviation};
pub use minplus::{convolve_concave, convolve_convex, deconvolve};
pub use residual::{
    arbitrary_residual, fifo_residual, fifo_residual_theta, fifo_theta, latency_rate_server,
    static_priority_residual,
};
pub use unbounded::Unbounded;

/// The least burst b with `c(t) ≤ b + r·t`, r the tail slope of the concave curve `c`.
pub fn upper_burst(c: &Curve) -> f64 {
    let r = c.tail_slope();
    c.points().iter().map(|pt| pt.y - r * pt.x).fold(c.burst(), f64::max)
}
