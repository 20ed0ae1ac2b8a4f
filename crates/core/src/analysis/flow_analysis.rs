//! One entry point for the network-calculus analyses of a [`ServerGraph`].

use super::arrival_bound::AnalysisConfig;
use super::bound::FlowBounds;
use super::server_graph::{FlowId, ServerGraph};
use super::{sfa, tfa};

/// The analyses available on a [`ServerGraph`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NcAnalysis {
    /// Total flow analysis ([`tfa::tfa`]).
    Tfa,
    /// Separated flow analysis, pay bursts only once ([`sfa::sfa`]).
    Sfa,
}

/// Runs `analysis` for flow `f`.
pub fn analyse(graph: &ServerGraph, f: FlowId, analysis: NcAnalysis, config: &AnalysisConfig) -> FlowBounds {
    match analysis {
        NcAnalysis::Tfa => tfa::tfa(graph, f, config),
        NcAnalysis::Sfa => sfa::sfa(graph, f, config),
    }
}
