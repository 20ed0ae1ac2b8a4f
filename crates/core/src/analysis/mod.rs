//! Worst-case analyses of a validated network.
//!
//! * [`afdx_naive`]: FIFO total-flow analysis as WOPANet-family AFDX tools compute it.
//! * [`network_bounds`]: TFA, SFA and `best` on a network's egress ports, with grouping.
//! * [`results`]: what every analysis reports (per flow and destination, per egress port).
//!
//! Network calculus on an abstract feed-forward server graph (the layer AFDX, grouping and
//! priorities compile into), tested against NetCal/DNC's functional-test results:
//!
//! * [`server_graph`]: servers (service curve, multiplexing) and flows (arrival curve, path).
//! * [`arrival_bound`]: arrival bounds of cross traffic inside the network (DNC's PBOO
//!   concatenation).
//! * [`tfa`]: total flow analysis; [`sfa`]: separated flow analysis (pay bursts only once);
//!   [`flow_analysis`]: one entry point for both; [`bound`]: bounds with reasons when infinite.

pub mod afdx_naive;
pub mod network_bounds;
pub mod results;

pub mod arrival_bound;
pub mod bound;
pub mod flow_analysis;
pub mod server_graph;
pub mod sfa;
pub mod tfa;

#[cfg(test)]
mod dnc_oracle_tests;
#[cfg(test)]
mod network_tests;
#[cfg(test)]
mod textbook_tests;

pub use arrival_bound::{AnalysisConfig, ArrivalBounder, CrossTraffic};
pub use bound::{Bound, FlowBounds};
pub use flow_analysis::{analyse, NcAnalysis};
pub use server_graph::{Flow, FlowId, GraphError, Multiplexing, Server, ServerGraph, ServerId};

use crate::model::Network;
use results::AnalysisReport;

/// The analysis methods, by the names users give them.
pub const METHODS: &[&str] = &["best", "tfa", "sfa", "afdx-naive"];

/// What the user asked for: a method, grouping, and blind instead of FIFO multiplexing.
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub method: String,
    pub grouping: bool,
    pub blind: bool,
}

/// Runs the requested analysis; a method that does not apply, or an unknown one, is a user error.
pub fn run(net: &Network, req: &Request) -> Result<AnalysisReport, String> {
    use network_bounds::{Method, Multiplexing, Options};
    let mux = if req.blind { Multiplexing::Blind } else { Multiplexing::Fifo };
    let opt = |method| Options { method, grouping: req.grouping, multiplexing: mux };
    match req.method.as_str() {
        "afdx-naive" => {
            if req.grouping || req.blind {
                return Err("afdx-naive has no grouping and no blind variant (use tfa or sfa)".into());
            }
            afdx_naive::applies(net).map(|_| afdx_naive::analyze(net))
        }
        "tfa" => network_bounds::applies(net).map(|_| network_bounds::analyze(net, &opt(Method::Tfa))),
        "sfa" => network_bounds::applies(net).map(|_| network_bounds::analyze(net, &opt(Method::Sfa))),
        "best" => network_bounds::applies(net).map(|_| network_bounds::best(net)),
        other => Err(format!("unknown analysis method '{other}', expected one of {}", METHODS.join(", "))),
    }
}
