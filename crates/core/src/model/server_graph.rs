//! A network-calculus server graph (`server_graph:` in a description) resolved into the same
//! [`Network`] the engines read: each server a node with one egress port (its rate, and its
//! latency as the node's technological latency), each flow a fluid token bucket routed along its
//! path (a staircase flow keeps its staircase beside its affine envelope's token bucket). Frames
//! have no length (the analyses add no packetization), there are no links to serialise flows on
//! (no grouping), and the simulator, which needs frames, refuses it.

use super::diagnostics::Diagnostics;
use super::network::*;
use super::spec::*;
use crate::curves::Curve;
use crate::units::{DataRate, DataSize};
use std::collections::HashMap;

impl Staircase {
    /// Most steps a staircase is written out over in one curve; after the last, its affine
    /// envelope (a valid arrival curve, looser between the steps).
    pub const MAX_STEPS: usize = 10_000;
    /// The largest tolerance, in periods: a burst of a million packets at once (a token bucket
    /// describes a larger one as well).
    pub const MAX_TOLERANCE_PERIODS: f64 = 1e6;

    /// Its affine envelope (burst, rate): the token bucket of rate size/period through the corner
    /// of every step, burst size·(1 + tolerance/period).
    pub fn envelope(&self) -> (f64, f64) {
        (self.size * (1.0 + self.tolerance / self.period), self.size / self.period)
    }

    /// The staircase as a curve, exact up to `horizon` at least (its steps written out up to the
    /// first jump at or after it, at most [`Self::MAX_STEPS`] of them), then its affine envelope.
    pub fn curve(&self, horizon: f64) -> Curve {
        // Jumps at k·period − tolerance for k from ⌊tolerance/period⌋ + 1 on.
        let first = (self.tolerance / self.period).floor() + 1.0;
        let last = ((horizon.max(0.0) + self.tolerance) / self.period).ceil().max(first);
        let steps = (last - first + 1.0).min(Self::MAX_STEPS as f64) as usize;
        Curve::staircase(self.period, self.tolerance, self.size, steps)
    }
}

/// Resolves `spec.server_graph` into a network; `None` with every problem in `diags`.
pub fn build(spec: NetworkSpec, diags: &mut Diagnostics) -> Option<Network> {
    let graph = spec.server_graph.clone().expect("called for a server graph");
    let ethernet = [
        ("end_systems", spec.end_systems.is_empty()),
        ("switches", spec.switches.is_empty()),
        ("links", spec.links.is_empty()),
        ("flows", spec.flows.is_empty()),
        ("processors", spec.processors.is_empty()),
        ("buses", spec.buses.is_empty()),
        ("tasks", spec.tasks.is_empty()),
        ("messages", spec.messages.is_empty()),
        ("servers", spec.servers.is_empty()),
        ("chains", spec.chains.is_empty()),
        ("classes", spec.classes.is_empty()),
        ("schedulers", spec.schedulers.is_empty()),
        ("redundancy", spec.redundancy.is_none()),
    ];
    for (key, empty) in ethernet {
        if !empty {
            diags.error(
                key,
                "a description with a server_graph describes nothing else; put it in a file of its own",
            );
        }
    }
    let finite = |v: f64, place: String, diags: &mut Diagnostics, positive: bool| {
        if !v.is_finite() || v < 0.0 || (positive && v == 0.0) {
            let rule = if positive { "a positive finite number" } else { "a finite number, at least 0" };
            diags.error(place, format!("must be {rule}, got {v}"));
        }
    };
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, s) in graph.servers.iter().enumerate() {
        let place = format!("server_graph.servers[{i}]");
        if s.name.is_empty() {
            diags.error(format!("{place}.name"), "must not be empty");
        } else if let Some(first) = index.insert(&s.name, i) {
            diags.error(
                format!("{place}.name"),
                format!(
                    "'{}' is already the name of server_graph.servers[{first}]; server names must be unique",
                    s.name
                ),
            );
        }
        finite(s.rate, format!("{place}.rate"), diags, true);
        finite(s.latency, format!("{place}.latency"), diags, false);
        if let Some(m) = s.max_rate {
            finite(m, format!("{place}.max_rate"), diags, true);
            if m.is_finite() && m < s.rate {
                diags.error(
                    format!("{place}.max_rate"),
                    format!("a server never sends faster than max_rate, so it must be at least rate ({}), got {m}", s.rate),
                );
            }
        }
    }
    if graph.servers.is_empty() {
        diags.error("server_graph.servers", "a server graph needs at least one server");
    }
    let mut paths: Vec<Vec<usize>> = Vec::new();
    for (i, f) in graph.flows.iter().enumerate() {
        let place = format!("server_graph.flows[{i}]");
        match (f.burst, f.rate, &f.staircase) {
            (Some(burst), Some(rate), None) => {
                finite(burst, format!("{place}.burst"), diags, false);
                finite(rate, format!("{place}.rate"), diags, false);
            }
            (None, None, Some(s)) => {
                finite(s.period, format!("{place}.staircase.period"), diags, true);
                finite(s.tolerance, format!("{place}.staircase.tolerance"), diags, false);
                finite(s.size, format!("{place}.staircase.size"), diags, true);
                // Its first step holds ⌊tolerance/period⌋ + 1 packets, counted as an integer.
                if s.period > 0.0 && s.tolerance > Staircase::MAX_TOLERANCE_PERIODS * s.period {
                    diags.error(
                        format!("{place}.staircase.tolerance"),
                        format!(
                            "must be at most {:e} periods ({}), got {}",
                            Staircase::MAX_TOLERANCE_PERIODS,
                            Staircase::MAX_TOLERANCE_PERIODS * s.period,
                            s.tolerance
                        ),
                    );
                }
            }
            (_, _, Some(_)) => diags.error(
                place.clone(),
                "an arrival curve is a token bucket (burst and rate) or a staircase, not both",
            ),
            (None, None, None) => diags.error(
                place.clone(),
                "needs an arrival curve: burst and rate (a token bucket), or staircase",
            ),
            (Some(_), None, None) => {
                diags.error(format!("{place}.rate"), "a token bucket needs a rate beside its burst")
            }
            (None, Some(_), None) => {
                diags.error(format!("{place}.burst"), "a token bucket needs a burst beside its rate")
            }
        }
        if let Some(d) = f.deadline {
            finite(d, format!("{place}.deadline"), diags, true);
        }
        if f.path.is_empty() {
            diags.error(format!("{place}.path"), "must name at least one server");
        }
        let mut path = Vec::new();
        for (k, name) in f.path.iter().enumerate() {
            match index.get(name.as_str()) {
                None => diags.error(format!("{place}.path[{k}]"), format!("unknown server '{name}'")),
                Some(&s) if path.contains(&s) => {
                    diags.error(format!("{place}.path[{k}]"), format!("crosses server '{name}' twice"))
                }
                Some(&s) => path.push(s),
            }
        }
        paths.push(path);
    }
    if diags.has_errors() {
        return None;
    }
    // One node and one egress port per server; the port's link leads back to its own node (a
    // server graph has no links: routes are the flows' paths).
    let nodes: Vec<Node> = graph
        .servers
        .iter()
        .enumerate()
        .map(|(i, s)| Node {
            name: s.name.clone(),
            kind: NodeKind::Server,
            plane: Some(0),
            technological_latency: s.latency,
            receive_latency: 0.0,
            switching: Switching::StoreAndForward,
            ports: vec![i],
        })
        .collect();
    let ports: Vec<EgressPort> = graph
        .servers
        .iter()
        .enumerate()
        .map(|(i, s)| EgressPort {
            node: i,
            name: "out".into(),
            link: i,
            peer: i,
            rate: s.rate,
            propagation_delay: 0.0,
            plane: 0,
            scheduler_name: "fifo".into(),
            scheduler: SchedulerConfig::Fifo,
            discipline: SchedulerConfig::Fifo,
            shaper: None,
            buffer: None,
            reverse: i,
        })
        .collect();
    let links = graph
        .servers
        .iter()
        .enumerate()
        .map(|(i, s)| LinkInfo { name: s.name.clone(), forward: i, backward: i })
        .collect();
    let flows = graph
        .flows
        .iter()
        .zip(paths)
        .map(|(f, path)| {
            // A staircase enters every token-bucket computation by its affine envelope.
            let (burst, rate) = match (f.staircase, f.burst, f.rate) {
                (Some(s), _, _) => s.envelope(),
                (None, Some(b), Some(r)) => (b, r),
                _ => unreachable!("validated: a token bucket or a staircase"),
            };
            FlowModel {
                name: f.name.clone(),
                source: path[0],
                class: None,
                deadline: f.deadline,
                traffic: Traffic::TokenBucket {
                    burst: DataSize(burst),
                    rate: DataRate(rate),
                    min_packet: DataSize(0.0),
                    max_packet: DataSize(0.0),
                },
                staircase: f.staircase,
                // Fluid: no frame, so no packetization and no transmission in the best case.
                max_frame_wire: 0.0,
                min_frame_wire: 0.0,
                burst,
                rate,
                planes: vec![0],
                routes: vec![Route {
                    destination: *path.last().expect("non-empty path"),
                    plane: 0,
                    ports: path,
                }],
            }
        })
        .collect();
    let mut net = Network {
        kind: NetworkKind::ServerGraph,
        planes: vec!["A".into()],
        classes: Vec::new(),
        nodes,
        ports,
        links,
        flows,
        sending_skew: 0.0,
        skew_max: 0.0,
        spec,
        port_flows: Vec::new(),
        derived: Default::default(),
        fixed_priority: Default::default(),
    };
    net.index_port_flows();
    net.build_indices();
    Some(net)
}
