//! Egress schedulers. Each module holds what its scheduler guarantees (the worst-case service
//! model the analysis uses) and, beside it, the formulas of the seed papers under `paper`
//! (kept literally, with their known errors, so users can compare; see
//! shared/spec/seed-catalogue.md). The simulator's behaviour of each scheduler joins its module.

pub mod d2drr;
pub mod drr;
pub mod fifo;
pub mod scfq;
pub mod static_priority;
pub mod token_bucket;
pub mod wf2q;
pub mod wrr;

/// One traffic class as a per-class scheduler at one port sees it, for its service model.
#[derive(Clone, Copy, Debug)]
pub struct ClassAtPort {
    /// The class's share: WRR frames per round, DRR quantum (bits), WF2Q/SCFQ weight.
    pub share: f64,
    /// Smallest and largest frame of the class at the port, on the wire (bits).
    pub lmin: f64,
    pub lmax: f64,
    /// Per-frame wire overhead (preamble, start delimiter, gap) included in lmin/lmax (bits).
    pub overhead: f64,
}

/// A latency-rate guarantee: the class is served at least at `rate` after `latency`, i.e. it
/// has the service curve β_{rate, latency} (Stiliadis & Varma, IEEE/ACM ToN 6(5), 1998).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyRate {
    pub rate: f64,
    pub latency: f64,
}
