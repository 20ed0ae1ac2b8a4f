//! Total flow analysis (TFA): bound the aggregate at every server, add the local delays along
//! the path (Schmitt & Zdarsky 2006, "The DISCO network calculator"; DNC `TotalFlowAnalysis`).
//!
//! The aggregate entering a server is bounded with [`ArrivalBounder`] (all flows, none
//! singled out). The local delay is the horizontal deviation at a FIFO server, and at a
//! blind server the latency of the left-over service `[β − α]^+` (`(b + R T)/(R − r)` for a
//! token bucket and a rate-latency curve) unless only one flow crosses it, where FIFO per
//! micro-flow holds and the horizontal deviation applies again. The flow's backlog bound is the
//! largest server-local backlog (vertical deviation) on its path.

use super::arrival_bound::{AnalysisConfig, ArrivalBounder};
use super::bound::{Bound, FlowBounds};
use super::server_graph::{FlowId, Multiplexing, ServerGraph, ServerId};
use crate::curves::{
    arbitrary_residual, horizontal_deviation, latency, vertical_deviation, Curve, Unbounded,
};

/// TFA bounds at one server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerBounds {
    /// Arrival curve of the whole aggregate entering the server.
    pub arrival: Result<Curve, Unbounded>,
    /// Local delay bound of the aggregate.
    pub delay: Bound,
    /// Local backlog bound of the aggregate.
    pub backlog: Bound,
}

/// TFA bounds at server `s`.
pub fn tfa_server(bounder: &ArrivalBounder<'_>, s: ServerId) -> ServerBounds {
    let g = bounder.graph();
    let server = g.server(s);
    let place = |u: Unbounded| u.context(&format!("server {}", server.name));
    let arrival = bounder.at_server(s, g.flows_at(s), None);
    let (delay, backlog) = match &arrival {
        Err(u) => (Bound::Infinite(u.clone()), Bound::Infinite(u.clone())),
        Ok(alpha) => {
            let fifo = server.multiplexing == Multiplexing::Fifo || g.flows_at(s).len() == 1;
            let delay = if fifo {
                horizontal_deviation(alpha, &server.service).map_err(place)
            } else {
                arbitrary_residual(&server.service, alpha)
                    .map_err(|u| u.context(&format!("server {}", server.name)))
                    .and_then(|r| latency(&r))
            };
            let backlog = vertical_deviation(alpha, &server.service).map_err(place);
            (delay.into(), backlog.into())
        }
    };
    ServerBounds { arrival, delay, backlog }
}

/// TFA bounds of flow `f`: sum of local delays, largest local backlog on its path.
pub fn tfa(graph: &ServerGraph, f: FlowId, _config: &AnalysisConfig) -> FlowBounds {
    let bounder = ArrivalBounder::new(graph);
    tfa_with(&bounder, f)
}

/// [`tfa`] reusing the arrival bounds cached in `bounder` (analysing many flows of one graph).
pub fn tfa_with(bounder: &ArrivalBounder<'_>, f: FlowId) -> FlowBounds {
    let g = bounder.graph();
    let mut delay = Bound::Finite(0.0);
    let mut backlog = Bound::Finite(0.0);
    for &s in &g.flow(f).path {
        let b = tfa_server(bounder, s);
        delay = delay.plus(b.delay);
        backlog = backlog.max(b.backlog);
    }
    FlowBounds { delay, backlog }
}
