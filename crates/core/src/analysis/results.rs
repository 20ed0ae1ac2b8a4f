//! What an analysis reports: per (flow, destination, plane) bounds and per egress port bounds.
//!
//! Field names are a contract with users' scripts (`--json`): `flow`, `destination`, `plane`,
//! `delay_us`, `jitter_us`, `deadline_us`; `node`, `port`, `load`, `delay_us`, `backlog_bytes`.
//! An unbounded value (overload) is written as `null` with the reason beside it.

use crate::model::{FlowId, NodeId, PlaneId};
use serde::{Serialize, Serializer};
use std::sync::Arc;

pub use crate::model::Names;

/// Infinity and NaN have no JSON form; they are written as null (the `reason` says why).
pub fn finite_or_null<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f64(*x)
    } else {
        s.serialize_none()
    }
}

fn opt_finite_or_null<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(v) if v.is_finite() => s.serialize_f64(*v),
        _ => s.serialize_none(),
    }
}

/// A rate as reasons show it: with a unit that keeps the figure short on an Ethernet network
/// (`12.3 Mb/s`, `17.6 Tb/s`), as the plain number it was given in on a server graph.
pub fn rate_text(net: &crate::model::Network, bps: f64) -> String {
    let short = |v: f64| {
        let s = format!("{v:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s.is_empty() {
            "0".to_string()
        } else {
            s.to_string()
        }
    };
    if net.kind == crate::model::NetworkKind::ServerGraph {
        return short(bps);
    }
    let (scale, unit) = [(1e12, "Tb/s"), (1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s")]
        .into_iter()
        .find(|&(scale, _)| bps.abs() >= scale)
        .unwrap_or((1.0, "b/s"));
    format!("{} {unit}", short(bps / scale))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Bounded, and within the deadline if there is one.
    Ok,
    /// Bounded, but above the deadline.
    Miss,
    /// No finite bound (an overloaded port on the way, or no method applies).
    Unbounded,
}

/// Bounds of one flow to one destination on one plane. Flow, destination and plane are indices
/// into the network (rows are many and their names few); [`Rows`] writes the names out.
#[derive(Clone, Debug, Serialize)]
pub struct FlowBound {
    #[serde(skip)]
    pub flow: FlowId,
    #[serde(skip)]
    pub destination: NodeId,
    #[serde(skip)]
    pub plane: PlaneId,
    #[serde(serialize_with = "finite_or_null")]
    pub delay_us: f64,
    #[serde(serialize_with = "finite_or_null")]
    pub jitter_us: f64,
    /// Smallest possible delay: latencies, one smallest frame per hop, propagation.
    pub best_case_us: f64,
    /// The method's backlog bound for the flow, in DNC's sense: for TFA (and afdx-naive) the
    /// largest backlog of a port on the path, for SFA the flow's own end-to-end backlog.
    #[serde(serialize_with = "finite_or_null")]
    pub backlog_bytes: f64,
    #[serde(serialize_with = "opt_finite_or_null")]
    pub deadline_us: Option<f64>,
    #[serde(serialize_with = "opt_finite_or_null")]
    pub slack_us: Option<f64>,
    pub status: Status,
    /// The method that gave this bound (differs per flow under `best`).
    pub method: &'static str,
    /// Whether the bound is guaranteed: not when the route crosses a cut-through switch, which
    /// lets a frame into its next queue before its last bit is in (the analyses assume
    /// store-and-forward).
    pub guaranteed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A row as it is written out: its names first, then its own fields.
#[derive(Serialize)]
pub struct NamedFlowBound<'a> {
    pub flow: &'a str,
    pub destination: &'a str,
    pub plane: &'a str,
    #[serde(flatten)]
    pub bound: &'a FlowBound,
}

/// Rows that name flows, nodes or planes by index, with the names they are written out with.
pub trait NamedRow {
    type Named<'a>: Serialize
    where
        Self: 'a;
    fn named<'a>(&'a self, names: &'a Names) -> Self::Named<'a>;
}

impl NamedRow for FlowBound {
    type Named<'a> = NamedFlowBound<'a>;
    fn named<'a>(&'a self, names: &'a Names) -> NamedFlowBound<'a> {
        NamedFlowBound {
            flow: &names.flows[self.flow],
            destination: &names.nodes[self.destination],
            plane: &names.planes[self.plane],
            bound: self,
        }
    }
}

/// A report's rows and the names of the network they index; reads as a `Vec` of rows, writes
/// out each row with its names.
#[derive(Clone, Debug)]
pub struct Rows<T> {
    pub names: Arc<Names>,
    pub rows: Vec<T>,
}

impl<T> Rows<T> {
    pub fn new(names: Arc<Names>, rows: Vec<T>) -> Rows<T> {
        Rows { names, rows }
    }
}

impl<T> std::ops::Deref for Rows<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.rows
    }
}

impl<T> std::ops::DerefMut for Rows<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.rows
    }
}

impl<'a, T> IntoIterator for &'a Rows<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.rows.iter()
    }
}

fn no_rows<T>(rows: &Rows<T>) -> bool {
    rows.rows.is_empty()
}

impl<T: NamedRow> Serialize for Rows<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.rows.iter().map(|r| r.named(&self.names)))
    }
}

impl Rows<FlowBound> {
    /// The (flow, destination, plane) names of `row`.
    pub fn names_of(&self, row: &FlowBound) -> (&str, &str, &str) {
        let n = &self.names;
        (&n.flows[row.flow], &n.nodes[row.destination], &n.planes[row.plane])
    }

    /// The row of `flow` to `destination` on `plane`, by names.
    pub fn find(&self, flow: &str, destination: &str, plane: &str) -> Option<&FlowBound> {
        self.rows.iter().find(|r| self.names_of(r) == (flow, destination, plane))
    }
}

/// Bounds of one egress port.
#[derive(Clone, Debug, Serialize)]
pub struct PortBound {
    pub node: String,
    pub port: String,
    pub plane: String,
    /// Utilisation: offered long-term rate / link rate.
    pub load: f64,
    /// Worst-case delay of a frame in this port (queueing + transmission + latency).
    #[serde(serialize_with = "finite_or_null")]
    pub delay_us: f64,
    /// Worst-case backlog, bytes (what the buffer must hold).
    #[serde(serialize_with = "finite_or_null")]
    pub backlog_bytes: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_bytes: Option<f64>,
    /// End-system ports sending virtual links: the ARINC 664 multiplexing jitter of seed 002
    /// Eq. 4, Σ (20 B + Lmax)·8 / C + 40 µs, which the standard caps at 500 µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub es_jitter_us: Option<f64>,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A whole analysis run.
#[derive(Clone, Debug, Serialize)]
pub struct AnalysisReport {
    pub method: String,
    pub network: String,
    pub flows: Rows<FlowBound>,
    pub ports: Vec<PortBound>,
    /// Per (flow, destination) sent on several planes: redundancy-managed bounds.
    #[serde(skip_serializing_if = "no_rows")]
    pub redundancy: Rows<RedundantBound>,
    /// Notes on what the method assumed or could not do.
    pub notes: Vec<String>,
    /// Response times of the processors and buses, when the description has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed_priority: Option<super::response_time::ResponseTimes>,
}

impl AnalysisReport {
    /// The report of `method` on `net` from its rows; redundancy and the end-system checks are
    /// added afterwards, whatever the method.
    pub fn new(
        net: &crate::model::Network,
        method: &str,
        flows: Vec<FlowBound>,
        ports: Vec<PortBound>,
        notes: Vec<String>,
    ) -> AnalysisReport {
        let names = net.names();
        AnalysisReport {
            method: method.to_string(),
            network: net.spec.name.clone(),
            flows: Rows::new(names.clone(), flows),
            ports,
            redundancy: Rows::new(names, Vec::new()),
            notes,
            fixed_priority: None,
        }
    }
}

/// Classifies a delay against an optional deadline.
pub fn status_of(delay: f64, deadline: Option<f64>) -> Status {
    if !delay.is_finite() {
        Status::Unbounded
    } else if deadline.is_some_and(|d| delay > d * (1.0 + 1e-12)) {
        Status::Miss
    } else {
        Status::Ok
    }
}

/// The redundancy-managed bounds of one (flow, destination).
#[derive(Clone, Debug, Serialize)]
pub struct RedundantBound {
    #[serde(skip)]
    pub flow: FlowId,
    #[serde(skip)]
    pub destination: NodeId,
    /// Delivery delay with every plane healthy (first valid copy wins).
    #[serde(serialize_with = "finite_or_null")]
    pub delay_us: f64,
    /// Delivery delay when every plane but one has failed.
    #[serde(serialize_with = "finite_or_null")]
    pub single_plane_delay_us: f64,
    /// Largest time between the arrivals of two copies.
    #[serde(serialize_with = "finite_or_null")]
    pub arrival_skew_us: f64,
    pub skew_max_us: f64,
    /// Whether the arrival skew stays within SkewMax.
    pub skew_ok: bool,
    /// Seed 000 Corollary 7 as printed.
    #[serde(serialize_with = "finite_or_null")]
    pub paper_cor7_us: f64,
}

/// A redundancy row as it is written out: its names first.
#[derive(Serialize)]
pub struct NamedRedundantBound<'a> {
    pub flow: &'a str,
    pub destination: &'a str,
    #[serde(flatten)]
    pub bound: &'a RedundantBound,
}
