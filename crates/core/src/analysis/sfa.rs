//! Separated flow analysis (SFA, "pay bursts only once"): the flow of interest's left-over
//! service at each server of its path, convolved into one end-to-end service curve
//! (Le Boudec–Thiran §1.4.3 and §6.2; DNC `SeparateFlowAnalysis`).
//!
//! The delay bound is the horizontal deviation between the flow's arrival curve and the
//! end-to-end left-over curve, the backlog bound their vertical deviation (the flow's
//! end-to-end backlog). Cross traffic at each server is bounded with [`ArrivalBounder`]; how the
//! flow of interest itself is counted there is set by [`CrossTraffic`].

use super::arrival_bound::{AnalysisConfig, ArrivalBounder, CrossTraffic};
use super::bound::{Bound, FlowBounds};
use super::server_graph::{FlowId, ServerGraph};
use crate::curves::{
    convolve_convex, deconvolve, horizontal_deviation, vertical_deviation, Curve, Unbounded,
};

/// The curves behind an SFA bound.
#[derive(Debug, Clone, PartialEq)]
pub struct SfaDetail {
    /// Left-over service of the flow at each server of its path.
    pub residuals: Vec<Curve>,
    /// Arrival curve of the flow entering each server of its path (its own arrival curve
    /// deconvolved by the left-over curves of the servers before).
    pub arrivals: Vec<Result<Curve, Unbounded>>,
    /// Convolution of all left-over curves.
    pub end_to_end: Curve,
}

/// Left-over curves of flow `f` along its path.
pub fn sfa_detail(
    bounder: &ArrivalBounder<'_>,
    f: FlowId,
    config: &AnalysisConfig,
) -> Result<SfaDetail, Unbounded> {
    let g = bounder.graph();
    let flow = g.flow(f);
    let mut residuals = Vec::with_capacity(flow.path.len());
    let mut arrivals = Vec::with_capacity(flow.path.len());
    let mut end_to_end: Option<Curve> = None;
    for &s in &flow.path {
        arrivals.push(match &end_to_end {
            None => Ok(flow.arrival.clone()),
            Some(b) => deconvolve(&flow.arrival, b),
        });
        let cross: Vec<FlowId> = g.flows_at(s).iter().copied().filter(|&x| x != f).collect();
        let beta = if cross.is_empty() {
            g.server(s).service.clone()
        } else {
            let foi_pred = match config.cross_traffic {
                CrossTraffic::Dnc => g.predecessor(f, s),
                CrossTraffic::AllFlows => None,
            };
            let (on, off): (Vec<FlowId>, Vec<FlowId>) =
                cross.iter().partition(|&&x| foi_pred.is_some() && g.predecessor(x, s) == foi_pred);
            let alpha = bounder.at_server(s, &on, Some(f))?.add(&bounder.at_server(s, &off, None)?);
            bounder.residual(s, &alpha)?
        };
        end_to_end = Some(match end_to_end {
            None => beta.clone(),
            Some(b) => convolve_convex(&b, &beta),
        });
        residuals.push(beta);
    }
    Ok(SfaDetail { residuals, arrivals, end_to_end: end_to_end.expect("non-empty path") })
}

/// SFA bounds of flow `f`.
pub fn sfa(graph: &ServerGraph, f: FlowId, config: &AnalysisConfig) -> FlowBounds {
    sfa_with(&ArrivalBounder::new(graph), f, config)
}

/// [`sfa`] reusing the arrival bounds cached in `bounder`.
pub fn sfa_with(bounder: &ArrivalBounder<'_>, f: FlowId, config: &AnalysisConfig) -> FlowBounds {
    let g = bounder.graph();
    let flow = g.flow(f);
    match sfa_detail(bounder, f, config) {
        Err(u) => FlowBounds { delay: Bound::Infinite(u.clone()), backlog: Bound::Infinite(u) },
        Ok(d) => {
            // If the flow outruns its end-to-end service, name the server that leaves it least.
            let place = |u: Unbounded| {
                let (i, _) = d
                    .residuals
                    .iter()
                    .enumerate()
                    .min_by(|a, b| a.1.tail_slope().total_cmp(&b.1.tail_slope()))
                    .expect("non-empty path");
                u.context(&format!(
                    "flow {} at server {} (left-over service)",
                    flow.name,
                    g.server(flow.path[i]).name
                ))
            };
            FlowBounds {
                delay: horizontal_deviation(&flow.arrival, &d.end_to_end).map_err(place).into(),
                backlog: vertical_deviation(&flow.arrival, &d.end_to_end).map_err(place).into(),
            }
        }
    }
}
