//! What an analysis reports: per (flow, destination, plane) bounds and per egress port bounds.
//!
//! Field names are a contract with users' scripts (`--json`): `flow`, `destination`, `plane`,
//! `delay_us`, `jitter_us`, `deadline_us`; `node`, `port`, `load`, `delay_us`, `backlog_bytes`.
//! An unbounded value (overload) is written as `null` with the reason beside it.

use crate::model::Network;
use serde::{Serialize, Serializer};
use std::sync::Arc;

/// A name shared by many result rows (a flow's name appears once per route): cloning it is a
/// reference count, not an allocation.
pub type Name = Arc<str>;

/// The names of a network's flows, nodes and planes, shared by the rows of one report.
pub struct Names {
    pub flows: Vec<Name>,
    pub nodes: Vec<Name>,
    pub planes: Vec<Name>,
}

impl Names {
    pub fn of(net: &Network) -> Names {
        Names {
            flows: net.flows.iter().map(|f| Name::from(f.name.as_str())).collect(),
            nodes: net.nodes.iter().map(|n| Name::from(n.name.as_str())).collect(),
            planes: net.planes.iter().map(|p| Name::from(p.as_str())).collect(),
        }
    }
}

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

/// Bounds of one flow to one destination on one plane.
#[derive(Clone, Debug, Serialize)]
pub struct FlowBound {
    pub flow: Name,
    pub destination: Name,
    pub plane: Name,
    #[serde(serialize_with = "finite_or_null")]
    pub delay_us: f64,
    #[serde(serialize_with = "finite_or_null")]
    pub jitter_us: f64,
    /// Smallest possible delay: latencies, one smallest frame per hop, propagation.
    pub best_case_us: f64,
    #[serde(serialize_with = "opt_finite_or_null")]
    pub deadline_us: Option<f64>,
    #[serde(serialize_with = "opt_finite_or_null")]
    pub slack_us: Option<f64>,
    pub status: Status,
    /// The method that gave this bound (differs per flow under `best`).
    pub method: Name,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
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
    pub flows: Vec<FlowBound>,
    pub ports: Vec<PortBound>,
    /// Per (flow, destination) sent on several planes: redundancy-managed bounds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redundancy: Vec<super::redundancy::RedundantBound>,
    /// Notes on what the method assumed or could not do.
    pub notes: Vec<String>,
    /// Response times of the processors and buses, when the description has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed_priority: Option<super::response_time::ResponseTimes>,
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
