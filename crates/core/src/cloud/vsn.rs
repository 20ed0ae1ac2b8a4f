//! Seed 001F's virtual service networks (IRMOS/ISONI): an infrastructure of hosts with cores on
//! a network (an ordinary description), and requests for VSNs: components with a CPU budget Q
//! every period T, and virtual links between components with a guaranteed bandwidth, a maximum
//! latency and jitter and a traffic class, each request arriving at a time for a lifetime.

use crate::units::{DataRate, DataSize, Duration};
use serde::{Deserialize, Serialize};

/// A host of the infrastructure: an end system of the network with cores for components.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    pub name: String,
    pub cores: u32,
}

fn default_paths() -> usize {
    3
}

fn default_method() -> String {
    "tfa".into()
}

/// The infrastructure: the network (a description, with or without flows of its own), its
/// hosts, the classes that may share a link, the candidate paths per virtual link and the
/// analysis method that bounds the flows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Infrastructure {
    pub network: serde_json::Value,
    pub hosts: Vec<HostSpec>,
    /// Groups of classes that may share a link direction; absent: every class with every other.
    #[serde(default)]
    pub compatible_classes: Option<Vec<Vec<String>>>,
    /// Candidate paths tried per virtual link, shortest first (k-shortest simple paths).
    #[serde(default = "default_paths")]
    pub paths: usize,
    /// Analysis method for the bounds (`tfa`, `sfa`, `best`, ...).
    #[serde(default = "default_method")]
    pub method: String,
}

/// An application service component: a CPU reservation (budget every period), or a
/// utilisation (budget = utilisation × period, period 10 ms unless given).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentSpec {
    pub name: String,
    #[serde(default)]
    pub budget: Option<Duration>,
    #[serde(default)]
    pub period: Option<Duration>,
    #[serde(default)]
    pub utilisation: Option<f64>,
}

/// A virtual link between two components of the same VSN.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VirtualLinkSpec {
    pub name: String,
    pub from: String,
    pub to: String,
    /// Guaranteed average bandwidth (the token bucket's rate).
    pub bandwidth: DataRate,
    /// Peak bandwidth (policing ceiling; at least the average).
    #[serde(default)]
    pub peak: Option<DataRate>,
    /// Burst the link may send at once (default: one largest packet).
    #[serde(default)]
    pub burst: Option<DataSize>,
    #[serde(default = "default_max_packet")]
    pub max_packet: DataSize,
    #[serde(default = "default_min_packet")]
    pub min_packet: DataSize,
    /// Largest end-to-end delay allowed (the flow's deadline in the admitted description).
    pub latency: Duration,
    /// Largest jitter allowed (absent: not constrained).
    #[serde(default)]
    pub jitter: Option<Duration>,
    #[serde(default)]
    pub class: Option<String>,
}

fn default_max_packet() -> DataSize {
    DataSize::from_bytes(1500.0)
}

fn default_min_packet() -> DataSize {
    DataSize::from_bytes(64.0)
}

/// One VSN request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestSpec {
    pub name: String,
    pub arrival: Duration,
    pub lifetime: Duration,
    pub components: Vec<ComponentSpec>,
    #[serde(default)]
    pub links: Vec<VirtualLinkSpec>,
}

/// A requests file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requests {
    pub requests: Vec<RequestSpec>,
}

/// A component's reservation in nanoseconds, as SCHED_DEADLINE takes it (runtime, period;
/// deadline = period).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Reservation {
    pub runtime_ns: i64,
    pub period_ns: i64,
}

impl Reservation {
    pub fn utilisation(&self) -> f64 {
        self.runtime_ns as f64 / self.period_ns as f64
    }
}

/// Resolves a component's reservation; the error names the place and the rule.
pub fn reservation(c: &ComponentSpec, place: &str) -> Result<Reservation, String> {
    let period = c.period.map(|p| p.as_ns()).unwrap_or(10_000_000);
    if period <= 0 {
        return Err(format!("{place}.period: must be positive"));
    }
    let runtime = match (c.budget, c.utilisation) {
        (Some(q), None) => q.as_ns(),
        (None, Some(u)) if u.is_finite() && u > 0.0 && u <= 1.0 => (u * period as f64).ceil() as i64,
        (None, Some(u)) => return Err(format!("{place}.utilisation: must be in (0, 1], got {u}")),
        _ => return Err(format!("{place}: give either budget (with period) or utilisation")),
    };
    if runtime <= 0 || runtime > period {
        return Err(format!(
            "{place}.budget: must be positive and at most the period, got {runtime} ns for {period} ns"
        ));
    }
    Ok(Reservation { runtime_ns: runtime, period_ns: period })
}

impl Requests {
    /// Checks names, references and numbers; the error names the place and the rule.
    pub fn check(&self) -> Result<(), String> {
        let mut names = std::collections::HashSet::new();
        for (i, r) in self.requests.iter().enumerate() {
            let p = format!("requests[{i}]");
            if !names.insert(r.name.as_str()) {
                return Err(format!("{p}.name: '{}' is given twice", r.name));
            }
            if r.lifetime.0 <= 0.0 {
                return Err(format!("{p}.lifetime: must be positive"));
            }
            if r.components.is_empty() {
                return Err(format!("{p}.components: at least one component"));
            }
            let mut comps = std::collections::HashSet::new();
            for (j, c) in r.components.iter().enumerate() {
                if !comps.insert(c.name.as_str()) {
                    return Err(format!("{p}.components[{j}].name: '{}' is given twice", c.name));
                }
                reservation(c, &format!("{p}.components[{j}]"))?;
            }
            let mut links = std::collections::HashSet::new();
            for (j, l) in r.links.iter().enumerate() {
                let q = format!("{p}.links[{j}]");
                if !links.insert(l.name.as_str()) {
                    return Err(format!("{q}.name: '{}' is given twice", l.name));
                }
                for (key, end) in [("from", &l.from), ("to", &l.to)] {
                    if !comps.contains(end.as_str()) {
                        return Err(format!("{q}.{key}: no component named '{end}' in {}", r.name));
                    }
                }
                if l.from == l.to {
                    return Err(format!("{q}: joins '{}' to itself", l.from));
                }
                if l.bandwidth.0 <= 0.0 {
                    return Err(format!("{q}.bandwidth: must be positive"));
                }
                if l.peak.is_some_and(|p| p.0 < l.bandwidth.0) {
                    return Err(format!("{q}.peak: must be at least the bandwidth"));
                }
                if l.min_packet.0 <= 0.0 || l.min_packet.0 > l.max_packet.0 {
                    return Err(format!("{q}.min_packet: must be positive and at most max_packet"));
                }
                if l.burst.is_some_and(|b| b.0 < l.max_packet.0) {
                    return Err(format!("{q}.burst: must be at least max_packet"));
                }
                if l.latency.0 <= 0.0 {
                    return Err(format!("{q}.latency: must be positive"));
                }
            }
        }
        Ok(())
    }
}
