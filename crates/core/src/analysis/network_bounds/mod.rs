//! TFA and SFA on a validated network: every egress port a server, every flow a token bucket
//! at its source, FIFO or static-priority queues at each port.
//!
//! * Each egress port offers β = C·[t − T]^+ (link rate, technological latency of its node).
//!   A FIFO port has one queue; a static-priority port one FIFO queue per priority level, served
//!   with β minus the higher levels' arrivals minus the largest lower-level frame (non-preemption).
//! * **TFA** (total flow analysis) bounds the delay of each queue's aggregate, h(α_q, β_q), and
//!   propagates every flow's burst by its rate × that delay (Le Boudec & Thiran §6.2; the AFDX
//!   practice of Frances, Fraboul and Grieu, ERTS 2006).
//! * **SFA** (separated flow analysis, pay bursts only once) convolves, along each route, the
//!   service left to the flow at each port by the cross traffic (bounded by TFA's propagated
//!   curves), then takes one horizontal deviation (Le Boudec & Thiran §6.4).
//! * **Grouping** (serialisation): flows that reach a port through the same input link cannot
//!   arrive faster than that link, so their joint arrival curve is min(Σ token buckets,
//!   C_in·t + L_max). It is known to tighten AFDX bounds a lot (Grieu 2004; Boyer & Fraboul 2008).
//! * Multiplexing inside a queue is FIFO by default; `blind` assumes nothing about the order.
//!
//! Propagation delays are constant and do not grow bursts; they are added to end-to-end delays.
//! A port whose queue has no finite bound makes every flow through it unbounded, with the reason.

use super::results::*;
use crate::curves::{self, Curve, Unbounded};
use crate::model::{FlowId, Network, PortId};
use crate::schedulers::{self, ClassAtPort};
use std::collections::{BTreeMap, BTreeSet, HashMap};

mod aggregate_pboo;
mod aggregate_pmoo;
pub mod explain;
mod fifo_pass;
pub mod incremental;
mod pmoo;
pub mod sink_tree;
pub(crate) use fifo_pass::PortTables;
mod arrivals;
mod candidates;
mod layout;
mod port;
mod rows;
mod sfa;
mod shaped;
mod tfa;
mod views;
use arrivals::*;
pub use candidates::*;
pub use layout::*;
use port::*;
pub use rows::*;
#[cfg(test)]
pub(crate) use sfa::sfa_left_overs;
use sfa::*;
use shaped::*;
pub use tfa::*;
pub(crate) use views::*;
#[cfg(test)]
mod tests;

/// The analyses computed here, one per run or several as `best`'s candidates: total flow
/// analysis, separated flow analysis (plain or iterated), or pay multiplexing only once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Candidate {
    Tfa,
    Sfa,
    /// SFA whose cross traffic is bounded by the smaller of TFA's and SFA's own output bounds,
    /// iterated to a fixed point ([`sfa_iterate`]).
    SfaIter,
    /// PMOO: arbitrary multiplexing whatever the options say (it is sound under FIFO too).
    Pmoo,
}

/// How frames of different flows inside one queue are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Multiplexing {
    /// FIFO inside each queue (what FIFO and static-priority ports do).
    Fifo,
    /// No assumption (arbitrary multiplexing): always sound, usually looser.
    Blind,
}

/// How a server graph's methods bound the cross traffic of a flow under arbitrary multiplexing
/// (DNC's arrival bounding; its PMOO analysis and sink trees in docs/ANALYSIS.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ArrivalBounds {
    /// Per flow, the tighter bound of the two below (each is valid, so is the smaller).
    #[default]
    Tightest,
    /// Aggregate PBOO: the cross traffic's burst paid at every server of the stretch it crossed
    /// (DNC `AGGR_PBOO_CONCATENATION`, its default), and, hop by hop, TFA's output bounds.
    Pboo,
    /// Aggregate PMOO over the stretch it crossed (DNC `AGGR_PMOO`), alone: arbitrary
    /// multiplexing on server graphs only.
    Pmoo,
}

impl ArrivalBounds {
    /// The names users give them.
    pub const NAMES: &'static [&'static str] = &["tightest", "pboo", "pmoo"];

    pub fn parse(name: &str) -> Result<ArrivalBounds, String> {
        match name {
            "tightest" => Ok(ArrivalBounds::Tightest),
            "pboo" => Ok(ArrivalBounds::Pboo),
            "pmoo" => Ok(ArrivalBounds::Pmoo),
            other => {
                Err(format!("unknown arrival bounding '{other}', expected one of {}", Self::NAMES.join(", ")))
            }
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub method: Candidate,
    pub grouping: bool,
    pub multiplexing: Multiplexing,
}

impl Options {
    /// The method's name in outputs: `tfa`, `sfa+grouping`, `sfa-blind+grouping`, ...
    pub fn name(&self) -> &'static str {
        use {Candidate::*, Multiplexing::*};
        match (self.method, self.multiplexing, self.grouping) {
            (Tfa, Fifo, false) => "tfa",
            (Tfa, Fifo, true) => "tfa+grouping",
            (Tfa, Blind, false) => "tfa-blind",
            (Tfa, Blind, true) => "tfa-blind+grouping",
            (Sfa, Fifo, false) => "sfa",
            (Sfa, Fifo, true) => "sfa+grouping",
            (Sfa, Blind, false) => "sfa-blind",
            (Sfa, Blind, true) => "sfa-blind+grouping",
            (SfaIter, Fifo, false) => "sfa-iter",
            (SfaIter, Fifo, true) => "sfa-iter+grouping",
            (SfaIter, Blind, false) => "sfa-iter-blind",
            (SfaIter, Blind, true) => "sfa-iter-blind+grouping",
            (Pmoo, _, false) => "pmoo",
            (Pmoo, _, true) => "pmoo+grouping",
        }
    }
}

/// Runs TFA or SFA with the given options.
pub fn analyze(net: &Network, opt: &Options) -> AnalysisReport {
    analyze_with(net, opt, ArrivalBounds::Tightest)
}

/// [`analyze`] with the given arrival bounding on server graphs.
pub fn analyze_with(net: &Network, opt: &Options, arrival: ArrivalBounds) -> AnalysisReport {
    run_candidates(
        net,
        opt.grouping,
        opt.multiplexing,
        &[(opt.method, opt.multiplexing)],
        opt.name(),
        arrival,
    )
}

/// `best`: every sound method that applies under the multiplexing the user assumes, each with
/// grouping, and per (flow, destination, plane) the smallest bound and the method that gave it.
///
/// * FIFO multiplexing (the default: FIFO and static-priority queues serve their frames in
///   arrival order): TFA, SFA with FIFO left-over service, and SFA with blind left-over service
///   (a blind bound holds whatever the order, so it is a candidate too).
/// * Blind multiplexing (`--blind`: the order of frames inside a queue is unknown): only the
///   blind candidates, TFA and SFA. A FIFO candidate would assume an order the user ruled out.
///
/// afdx-naive is not a candidate: TFA without grouping is the same computation before rounding,
/// and grouping only tightens it.
pub fn best(net: &Network, multiplexing: Multiplexing) -> AnalysisReport {
    best_with(net, multiplexing, ArrivalBounds::Tightest)
}

/// [`best`] with the given arrival bounding on server graphs.
pub fn best_with(net: &Network, multiplexing: Multiplexing, arrival: ArrivalBounds) -> AnalysisReport {
    // Grouping serialises flows on links; a server graph has none.
    let ethernet = net.kind == crate::model::NetworkKind::Ethernet;
    // SFA-iter's first pass is SFA (its rows named so): it replaces SFA where it runs.
    let iterated = iterates_in_best(net);
    let sfa = if iterated.is_ok() { Candidate::SfaIter } else { Candidate::Sfa };
    let candidates = match multiplexing {
        Multiplexing::Fifo => vec![
            (Candidate::Tfa, Multiplexing::Fifo),
            (sfa, Multiplexing::Fifo),
            (sfa, Multiplexing::Blind),
            (Candidate::Pmoo, Multiplexing::Blind),
        ],
        Multiplexing::Blind => vec![
            (Candidate::Tfa, Multiplexing::Blind),
            (sfa, Multiplexing::Blind),
            (Candidate::Pmoo, Multiplexing::Blind),
        ],
    };
    let name = match multiplexing {
        Multiplexing::Fifo => "best",
        Multiplexing::Blind => "best-blind",
    };
    let mut report = run_candidates(net, ethernet, multiplexing, &candidates, name, arrival);
    if let Err(why) = iterated {
        report.notes.push(why);
    }
    report
}

/// Crossings (flow, port) above which `best` runs plain SFA instead of SFA-iter: each pass of the
/// iteration costs one TFA and one SFA, so on large Ethernet networks it would multiply `best`'s
/// time by the passes (`--method sfa-iter` iterates whatever the size). Measured in
/// docs/ANALYSIS.md ("SFA-iter").
pub const SFA_ITER_IN_BEST_MAX_CROSSINGS: usize = 10_000;

/// Whether `best` iterates SFA on `net` ([`SFA_ITER_IN_BEST_MAX_CROSSINGS`]), or why not.
fn iterates_in_best(net: &Network) -> Result<(), String> {
    let crossings: usize = net.flows_per_port().iter().map(|f| f.len()).sum();
    if crossings <= SFA_ITER_IN_BEST_MAX_CROSSINGS {
        Ok(())
    } else {
        Err(format!(
            "SFA not iterated ({crossings} flow-port crossings > {SFA_ITER_IN_BEST_MAX_CROSSINGS}): \
             ask for it with --method sfa-iter"
        ))
    }
}
