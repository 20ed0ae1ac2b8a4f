//! rtnetlab engine: one network model read by analysis, simulation and synthesis.
//!
//! * [`units`]: quantities with units (`2ms`, `1500B`, `100Mbps`), parsed in one place.
//! * [`model`]: the description format, its validation, and the resolved [`model::Network`].

// No bare `unwrap` outside tests (clippy.toml): a failure is an `expect` saying why it cannot
// happen, or an error.
#![deny(clippy::unwrap_used)]

// tests/common/lp.rs names the crate; the unit tests include it too (analysis::fifo_lp::tests).
#[cfg(test)]
extern crate self as rtnetlab_core;

pub mod analysis;
pub mod can;
pub mod choice;
pub mod cloud;
pub mod constants;
pub mod curves;
pub mod dedup;
pub mod experiments;
pub mod fabric;
pub mod fixed_priority;
pub mod generate;
pub mod model;
pub mod schedulers;
pub mod sim;
pub mod synthesis;
pub mod units;
pub mod worst_case;
