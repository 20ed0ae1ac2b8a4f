//! The validated, resolved network: what analysis, simulation and synthesis read.
//!
//! Names become indices, defaults are applied, every flow gets its route per (destination,
//! plane) as a list of egress ports. An egress port is the server of the field's models: the
//! output side of one node's end of one full-duplex link.

pub mod indices;

use super::spec::*;
use crate::units::Duration;
use serde::Serialize;

pub type NodeId = usize;
pub type PortId = usize;
pub type FlowId = usize;
pub type PlaneId = usize;
pub type ClassId = usize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    EndSystem,
    Switch,
    /// A server of a network-calculus server graph.
    Server,
}

/// What a network is made of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkKind {
    /// End systems, switches and links: frames, store-and-forward hops, line rates.
    #[default]
    Ethernet,
    /// An abstract network-calculus server graph: fluid flows through rate-latency servers.
    ServerGraph,
}

#[derive(Clone, Debug, Serialize)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// The plane of a switch; end systems sit on every plane.
    pub plane: Option<PlaneId>,
    /// Seconds between a frame's arrival (or release) and its eligibility at an output port.
    pub technological_latency: f64,
    /// End systems: seconds from a frame's last bit in to its delivery (0 for switches).
    pub receive_latency: f64,
    pub switching: Switching,
    /// Egress ports of the node, in link order.
    pub ports: Vec<PortId>,
}

/// A token-bucket shaper on a port's output: rate (bit/s) and burst (bits), on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Shaper {
    pub rate: f64,
    pub burst: f64,
}

/// One direction of a full-duplex link: the output port of `node` towards `peer`.
#[derive(Clone, Debug, Serialize)]
pub struct EgressPort {
    pub node: NodeId,
    /// Port name on its node (`"3"`, `"p1"`).
    pub name: String,
    pub link: usize,
    pub peer: NodeId,
    /// Link rate, bits per second.
    pub rate: f64,
    /// Propagation delay of the link, seconds.
    pub propagation_delay: f64,
    pub plane: PlaneId,
    /// Name of the scheduler configuration (`fifo`, `static_priority` or a `schedulers` key).
    pub scheduler_name: String,
    /// The configuration as written under that name.
    pub scheduler: SchedulerConfig,
    /// The discipline that orders the port's frames, resolved once at validation: the port's
    /// scheduler, or a shaper's inner scheduler (FIFO when it names none). Never a shaper.
    pub discipline: SchedulerConfig,
    /// The token-bucket shaper in front of the link, when the port's scheduler is one.
    pub shaper: Option<Shaper>,
    /// Output buffer in bits, if the description bounds it.
    pub buffer: Option<f64>,
    /// The port at the other end of the same link (the reverse direction).
    pub reverse: PortId,
}

#[derive(Clone, Debug, Serialize)]
pub struct LinkInfo {
    pub name: String,
    /// The `from` → `to` direction.
    pub forward: PortId,
    /// The `to` → `from` direction.
    pub backward: PortId,
}

/// The path of a flow to one destination on one plane.
#[derive(Clone, Debug, Serialize)]
pub struct Route {
    pub destination: NodeId,
    pub plane: PlaneId,
    /// Egress ports crossed, from the source end system's port to the last switch's port.
    pub ports: Vec<PortId>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FlowModel {
    pub name: String,
    pub source: NodeId,
    pub class: Option<ClassId>,
    /// End-to-end deadline, seconds.
    pub deadline: Option<f64>,
    pub traffic: Traffic,
    /// Largest and smallest frame on the wire (Ethernet frame + inter-frame overhead), bits.
    pub max_frame_wire: f64,
    pub min_frame_wire: f64,
    /// Token bucket (burst bits, rate bit/s) bounding the flow on the wire at the source port.
    pub burst: f64,
    pub rate: f64,
    /// A server graph's staircase flow: its exact arrival curve at its first server, of which
    /// `burst` and `rate` are the affine envelope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub staircase: Option<Staircase>,
    pub planes: Vec<PlaneId>,
    pub routes: Vec<Route>,
}

impl FlowModel {
    /// The period or BAG, if the flow is periodic.
    pub fn period(&self) -> Option<f64> {
        match &self.traffic {
            Traffic::VirtualLink { bag, .. } => Some(bag.secs()),
            Traffic::Periodic { period, .. } => Some(period.secs()),
            Traffic::TokenBucket { .. } => None,
        }
    }
    pub fn kind_name(&self) -> &'static str {
        match &self.traffic {
            Traffic::VirtualLink { .. } => "virtual_link",
            Traffic::Periodic { .. } => "periodic",
            Traffic::TokenBucket { .. } => "token_bucket",
        }
    }
}

/// A validated network. Build one with [`crate::model::validate`].
#[derive(Clone, Debug, Serialize)]
pub struct Network {
    pub spec: NetworkSpec,
    pub kind: NetworkKind,
    pub planes: Vec<String>,
    pub classes: Vec<TrafficClass>,
    pub nodes: Vec<Node>,
    pub ports: Vec<EgressPort>,
    pub links: Vec<LinkInfo>,
    pub flows: Vec<FlowModel>,
    /// Sending skew between planes and SkewMax, seconds (0 without redundancy).
    pub sending_skew: f64,
    pub skew_max: f64,
    /// The flows crossing each egress port (see [`Self::flows_per_port`]).
    #[serde(skip)]
    pub port_flows: Vec<Vec<FlowId>>,
    /// Flat routes, crossings and shared names, built on first use ([`indices`]).
    #[serde(skip)]
    pub(crate) derived: indices::Derived,
    /// Processors, buses, tasks, messages, servers and chains, resolved.
    pub fixed_priority: super::FixedPrioritySystem,
}

impl Network {
    /// `node:port`, the way ports are named in every output.
    pub fn port_label(&self, p: PortId) -> String {
        let port = &self.ports[p];
        format!("{}:{}", self.nodes[port.node].name, port.name)
    }

    /// The flows crossing each egress port, in flow order, once each even for multicast.
    pub fn flows_per_port(&self) -> &[Vec<FlowId>] {
        &self.port_flows
    }

    /// The maximum service of egress port `p`, (rate, packet): in any interval of length Δ it
    /// sends at most rate·Δ + packet bits (packet: its largest frame on the wire, which a
    /// store-and-forward receiver takes at once). A link's line rate on a switched network; a
    /// server graph's `max_rate` (fluid, no packet), `None` where the server gives none.
    pub fn max_service(&self, p: PortId) -> Option<(f64, f64)> {
        match self.kind {
            NetworkKind::ServerGraph => {
                let graph = self.spec.server_graph.as_ref()?;
                graph.servers.get(p)?.max_rate.map(|rate| (rate, 0.0))
            }
            _ => {
                let packet =
                    self.port_flows[p].iter().map(|&f| self.flows[f].max_frame_wire).fold(0.0, f64::max);
                Some((self.ports[p].rate, packet))
            }
        }
    }

    /// Long-term rate offered to each egress port (bits per second on the wire).
    pub fn port_loads(&self) -> Vec<f64> {
        // The rates side by side first: the flow records are large and far apart.
        let rate: Vec<f64> = self.flows.iter().map(|f| f.rate).collect();
        self.port_flows.iter().map(|flows| flows.iter().fold(0.0, |sum, &f| sum + rate[f])).collect()
    }

    /// Computes [`Self::flows_per_port`] once the routes are known, and drops the indices built
    /// from earlier routes.
    pub(crate) fn index_port_flows(&mut self) {
        self.derived = Default::default();
        let mut per_port: Vec<Vec<FlowId>> = vec![Vec::new(); self.ports.len()];
        for (f, flow) in self.flows.iter().enumerate() {
            for route in &flow.routes {
                for &p in &route.ports {
                    if per_port[p].last() != Some(&f) {
                        per_port[p].push(f);
                    }
                }
            }
        }
        self.port_flows = per_port;
    }

    /// The offset (ns) a flow's releases keep in every scenario: a periodic flow of a class a
    /// time-aware port lists as `scheduled` is time-triggered, and the analysis bounds it by its
    /// schedule (schedulers::tas, the time-triggered rule), so even synchronised releases keep it.
    pub fn bound_offset(&self, f: FlowId) -> Option<i64> {
        let flow = &self.flows[f];
        let Traffic::Periodic { offset, .. } = &flow.traffic else { return None };
        let class = &self.classes[flow.class?].name;
        self.spec
            .schedulers
            .values()
            .any(|s| crate::schedulers::discipline(s).is_some_and(|d| d.time_triggered().contains(class)))
            .then(|| offset.as_ns())
    }

    pub fn sending_skew(&self) -> Duration {
        Duration(self.sending_skew)
    }
}
