//! Arrival bounds of cross traffic inside the network, as DNC computes them
//! (`AGGR_PBOO_CONCATENATION`: aggregate, pay bursts only once along the common sub-path).
//!
//! The flows to bound at a server are split by the turn they arrive on. The flows of one turn
//! are followed back to the server where they all first meet (the *splitting server*); their
//! arrival curve there is bounded recursively, and their output is the deconvolution by the
//! convolution of their left-over service curves along the common sub-path. Those left-over
//! curves need, in turn, arrival bounds of the cross-cross traffic: the recursion ends at the
//! flows' sources. Left-over curves follow each server's own [`Multiplexing`].
//!
//! The flow of interest (foi) is handled as in DNC: it is never part of the flows bounded, and
//! cross-cross flows that reach a server through the same turn as the foi are bounded with the
//! foi removed (the foi is taken to have the lowest priority on its own path); flows met off the
//! foi's path are bounded with every flow counted. [`CrossTraffic::AllFlows`] turns that off,
//! which is what NCBounds and the textbook SFA do.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use super::server_graph::{FlowId, Multiplexing, ServerGraph, ServerId};
use crate::curves::{arbitrary_residual, convolve_convex, deconvolve, fifo_residual, Curve, Unbounded};

/// Whether the flow of interest counts as interference when bounding its own cross traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CrossTraffic {
    /// DNC (NetCal/DNC, `SeparateFlowAnalysis.tandemAnalysis` and
    /// `AggregatePboo_Concatenation`): cross flows entering a server through the foi's turn are
    /// bounded as if the foi had the lowest priority upstream. Reproduces DNC's functional tests.
    #[default]
    Dnc,
    /// Every flow, the foi included, is counted upstream (NCBounds' blind SFA, textbook SFA).
    AllFlows,
}

/// Options shared by the analyses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AnalysisConfig {
    /// Treatment of the flow of interest in cross-traffic bounds (SFA only; TFA bounds all flows).
    pub cross_traffic: CrossTraffic,
}

type Key = (ServerId, Vec<FlowId>, Option<FlowId>);

/// Computes (and caches) arrival bounds on one graph.
pub struct ArrivalBounder<'a> {
    graph: &'a ServerGraph,
    cache: RefCell<HashMap<Key, Result<Curve, Unbounded>>>,
}

impl<'a> ArrivalBounder<'a> {
    /// A bounder for `graph`.
    pub fn new(graph: &'a ServerGraph) -> ArrivalBounder<'a> {
        ArrivalBounder { graph, cache: RefCell::new(HashMap::new()) }
    }

    /// The graph analysed.
    pub fn graph(&self) -> &'a ServerGraph {
        self.graph
    }

    /// Arrival curve of the aggregate of `flows` (minus `foi`) entering server `s`.
    pub fn at_server(&self, s: ServerId, flows: &[FlowId], foi: Option<FlowId>) -> Result<Curve, Unbounded> {
        let g = self.graph;
        let mut set: Vec<FlowId> =
            flows.iter().copied().filter(|&f| Some(f) != foi && g.flows_at(s).contains(&f)).collect();
        set.sort();
        set.dedup();
        if set.is_empty() {
            return Ok(Curve::zero());
        }
        let key = (s, set.clone(), foi);
        if let Some(r) = self.cache.borrow().get(&key) {
            return r.clone();
        }
        let r = self.at_server_uncached(s, &set, foi);
        self.cache.borrow_mut().insert(key, r.clone());
        r
    }

    fn at_server_uncached(
        &self,
        s: ServerId,
        set: &[FlowId],
        foi: Option<FlowId>,
    ) -> Result<Curve, Unbounded> {
        let g = self.graph;
        let mut sum = Curve::zero();
        let mut by_turn: BTreeMap<ServerId, Vec<FlowId>> = BTreeMap::new();
        for &f in set {
            match g.predecessor(f, s) {
                None => sum = sum.add(&g.flow(f).arrival),
                Some(p) => by_turn.entry(p).or_default().push(f),
            }
        }
        for (p, flows) in by_turn {
            sum = sum.add(&self.at_turn(p, s, &flows, foi)?);
        }
        Ok(sum)
    }

    /// Arrival curve of `flows` (all on turn `from → to`, foi excluded) entering `to`.
    fn at_turn(
        &self,
        from: ServerId,
        to: ServerId,
        flows: &[FlowId],
        foi: Option<FlowId>,
    ) -> Result<Curve, Unbounded> {
        let g = self.graph;
        let split = self.splitting_server(to, flows);
        let rep = &g.flow(flows[0]).path;
        let i0 = rep.iter().position(|&x| x == split).expect("split on path");
        let i1 = rep.iter().position(|&x| x == from).expect("turn on path");
        let mut beta: Option<Curve> = None;
        for &x in &rep[i0..=i1] {
            let xx: Vec<FlowId> =
                g.flows_at(x).iter().copied().filter(|f| !flows.contains(f) && Some(*f) != foi).collect();
            let beta_x = if xx.is_empty() {
                g.server(x).service.clone()
            } else {
                let foi_pred = foi.and_then(|f| g.predecessor(f, x));
                let (on, off): (Vec<FlowId>, Vec<FlowId>) =
                    xx.iter().partition(|&&f| foi_pred.is_some() && g.predecessor(f, x) == foi_pred);
                let alpha = self.at_server(x, &on, foi)?.add(&self.at_server(x, &off, None)?);
                self.residual(x, &alpha)?
            };
            beta = Some(match beta {
                None => beta_x,
                Some(b) => convolve_convex(&b, &beta_x),
            });
        }
        let beta = beta.expect("non-empty sub-path");
        let alpha_src = self.at_server(split, flows, foi)?;
        deconvolve(&alpha_src, &beta).map_err(|u| {
            u.context(&format!(
                "output of {} flow(s) from {} towards {}",
                flows.len(),
                g.server(from).name,
                g.server(to).name
            ))
        })
    }

    /// The server where all `flows` first meet, walking back from `to` (DNC
    /// `ServerGraph.findSplittingServer`): the source for a single flow.
    fn splitting_server(&self, to: ServerId, flows: &[FlowId]) -> ServerId {
        let g = self.graph;
        let path = &g.flow(flows[0]).path;
        if flows.len() == 1 {
            return path[0];
        }
        let end = path.iter().position(|&x| x == to).expect("turn target on path");
        let mut split = path[end - 1];
        for &cand in path[..end].iter().rev() {
            if flows.iter().all(|f| g.flows_at(cand).contains(f)) {
                split = cand;
            } else {
                break;
            }
        }
        split
    }

    /// Left-over service at `s` when `cross` is served before the flows of interest, by the
    /// server's multiplexing discipline.
    pub fn residual(&self, s: ServerId, cross: &Curve) -> Result<Curve, Unbounded> {
        let server = self.graph.server(s);
        let r = match server.multiplexing {
            Multiplexing::Arbitrary => arbitrary_residual(&server.service, cross),
            Multiplexing::Fifo => fifo_residual(&server.service, cross),
        };
        r.map_err(|u| u.context(&format!("server {}", server.name)))
    }
}
