//! Worst-case analyses of a validated network.
//!
//! * [`afdx_naive`]: FIFO total-flow analysis as WOPANet-family AFDX tools compute it.
//! * [`results`]: what every analysis reports (per flow and destination, per egress port).

pub mod afdx_naive;
pub mod results;

use crate::model::Network;
use results::AnalysisReport;

/// The analysis methods, by the names users give them.
pub const METHODS: &[&str] = &["afdx-naive"];

/// Runs the named method; an unknown name is a user error.
pub fn run(net: &Network, method: &str) -> Result<AnalysisReport, String> {
    match method {
        "afdx-naive" => afdx_naive::applies(net).map(|_| afdx_naive::analyze(net)),
        other => Err(format!("unknown analysis method '{other}', expected one of {}", METHODS.join(", "))),
    }
}
