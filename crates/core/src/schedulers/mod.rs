//! Egress schedulers. Each module holds what its scheduler guarantees (the worst-case service
//! model the analysis uses) and, beside it, the formulas of the seed papers under `paper`
//! (kept literally, with their known errors, so users can compare; see
//! shared/spec/seed-catalogue.md). The simulator's behaviour of each scheduler joins its module.

pub mod d2drr;
pub mod fifo;
pub mod static_priority;
