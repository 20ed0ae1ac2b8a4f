//! The validated fixed-priority part of a description: processors, buses, tasks, messages,
//! sporadic servers and chains, with names resolved to indices and times in integer
//! nanoseconds (the ticks of the response-time analyses, exact for every test vector).
//!
//! Rounding to whole nanoseconds is on the safe side: execution and transmission times,
//! jitters and blocking round up; periods and deadlines round down.

use super::diagnostics::Diagnostics;
use super::load::Origins;
use super::spec::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Integer nanoseconds.
pub type Ns = i64;

#[derive(Clone, Debug, Default, Serialize)]
pub struct FixedPrioritySystem {
    pub processors: Vec<ResolvedProcessor>,
    pub buses: Vec<ResolvedBus>,
    pub tasks: Vec<ResolvedTask>,
    pub messages: Vec<ResolvedMessage>,
    pub servers: Vec<ResolvedServer>,
    pub chains: Vec<ResolvedChain>,
}

impl FixedPrioritySystem {
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty() && self.messages.is_empty() && self.servers.is_empty()
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct ResolvedProcessor {
    pub name: String,
    pub preemptive: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct ResolvedBus {
    pub name: String,
    /// Bits per second.
    pub bit_rate: f64,
    pub identifier: CanIdentifier,
    /// The stations sending on the bus (message and server senders), with their queue policy.
    pub stations: Vec<Station>,
}

impl ResolvedBus {
    /// Nanoseconds to send `bits`, rounded up.
    pub fn time_of(&self, bits: u32) -> Ns {
        (bits as f64 * 1e9 / self.bit_rate - 1e-6).ceil() as Ns
    }
    /// One bit time in nanoseconds (rounded up), the τ_bit of the CAN analysis.
    pub fn bit_time(&self) -> Ns {
        self.time_of(1)
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Station {
    pub name: String,
    pub queue: TransmitQueue,
}

/// Where a task, message or server is, once placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    Processor(usize),
    Bus(usize),
}

#[derive(Clone, Debug, Serialize)]
pub struct ResolvedTask {
    pub name: String,
    /// None: not placed yet (a free task of a partitioning problem).
    pub processor: Option<usize>,
    pub wcet: Ns,
    pub period: Ns,
    pub deadline: Ns,
    pub jitter: Ns,
    pub blocking: Ns,
    pub priority: Option<u32>,
    pub server: Option<usize>,
    /// (chain, step) when the task is a step of a chain.
    pub chain: Option<(usize, usize)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ResolvedMessage {
    pub name: String,
    pub bus: usize,
    /// Index in the bus's `stations`.
    pub station: usize,
    pub payload_bytes: u32,
    pub packets: u32,
    /// Longest frame on the bus (worst-case bit stuffing, inter-frame space included), bits.
    pub frame_bits: u32,
    /// Time one frame holds the bus.
    pub frame_time: Ns,
    pub period: Ns,
    pub deadline: Ns,
    pub jitter: Ns,
    pub priority: Option<u32>,
    pub server: Option<usize>,
    pub chain: Option<(usize, usize)>,
}

impl ResolvedMessage {
    /// Bus time of one instance (every frame).
    pub fn transmission_time(&self) -> Ns {
        self.frame_time * self.packets as Ns
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct ResolvedServer {
    pub name: String,
    pub resource: Resource,
    /// On a bus: the sending station's index.
    pub station: Option<usize>,
    /// Packets per period (bus) or 0 (processor).
    pub budget_packets: u32,
    /// On a bus: time one packet holds the bus; on a processor: the capacity.
    pub packet_time: Ns,
    pub capacity: Ns,
    pub replenishment_period: Ns,
    pub priority: u32,
    pub background_priority: Option<u32>,
}

/// One step of a chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Task(usize),
    Message(usize),
}

#[derive(Clone, Debug, Serialize)]
pub struct ResolvedChain {
    pub name: String,
    pub period: Ns,
    /// End to end, from the external event.
    pub deadline: Ns,
    pub jitter: Ns,
    pub steps: Vec<Step>,
    /// Per step, the step's own deadline when it gives one: from its own release (the
    /// completion of the step before it; for the first step, the event), checked beside the
    /// chain's.
    pub step_deadlines: Vec<Option<Ns>>,
}

/// Worst-case length of a CAN frame with `data_bytes` bytes, worst-case bit stuffing and the
/// 3-bit inter-frame space (Davis, Burns, Bril, Lukkien 2007): 55 + 10·s bits with an 11-bit
/// identifier, 80 + 10·s with a 29-bit one.
pub fn can_frame_bits(identifier: CanIdentifier, data_bytes: u32) -> u32 {
    match identifier {
        CanIdentifier::Standard => 55 + 10 * data_bytes,
        CanIdentifier::Extended => 80 + 10 * data_bytes,
    }
}

fn up(d: crate::units::Duration) -> Ns {
    (d.secs() * 1e9 - 1e-6).ceil() as Ns
}

fn down(d: crate::units::Duration) -> Ns {
    (d.secs() * 1e9 + 1e-6).floor() as Ns
}

/// Resolves and checks the fixed-priority part; every problem goes to `diags` with its place.
pub(crate) fn resolve(spec: &NetworkSpec, origins: &Origins, diags: &mut Diagnostics) -> FixedPrioritySystem {
    let at = |key: &str, i: usize| origins.place(key, i);
    let mut sys = FixedPrioritySystem::default();

    let mut processor_of: HashMap<&str, usize> = HashMap::new();
    for (i, p) in spec.processors.iter().enumerate() {
        if processor_of.insert(&p.name, i).is_some() {
            diags.error(
                format!("{}.name", at("processors", i)),
                format!("processor '{}' is defined twice", p.name),
            );
        }
        sys.processors.push(ResolvedProcessor {
            name: p.name.clone(),
            preemptive: p.scheduling == ProcessorScheduling::Preemptive,
        });
    }
    let mut bus_of: HashMap<&str, usize> = HashMap::new();
    for (i, b) in spec.buses.iter().enumerate() {
        let place = at("buses", i);
        if bus_of.insert(&b.name, i).is_some() {
            diags.error(format!("{place}.name"), format!("bus '{}' is defined twice", b.name));
        }
        if b.bit_rate.bps() <= 0.0 {
            diags.error(format!("{place}.bit_rate"), format!("must be positive, got {}", b.bit_rate));
        }
        let stations = b.nodes.iter().map(|(n, s)| Station { name: n.clone(), queue: s.queue }).collect();
        sys.buses.push(ResolvedBus {
            name: b.name.clone(),
            bit_rate: b.bit_rate.bps().max(1.0),
            identifier: b.identifier,
            stations,
        });
    }
    // A station is any node named as a sender; `nodes` only sets its queue policy.
    let station = |sys: &mut FixedPrioritySystem, bus: usize, name: &str| -> usize {
        let stations = &mut sys.buses[bus].stations;
        match stations.iter().position(|s| s.name == name) {
            Some(k) => k,
            None => {
                stations.push(Station { name: name.to_string(), queue: spec.buses[bus].queue });
                stations.len() - 1
            }
        }
    };

    // Steps of chains share one namespace: task and message names are unique together.
    let mut step_names: HashMap<String, String> = HashMap::new();
    let mut claim = |name: &str, place: &str, diags: &mut Diagnostics| {
        if let Some(first) = step_names.get(name) {
            diags.error(format!("{place}.name"), format!("'{name}' is already the name of {first}"));
        } else {
            step_names.insert(name.to_string(), place.to_string());
        }
    };
    let mut server_of: HashMap<&str, usize> = HashMap::new();
    for (i, s) in spec.servers.iter().enumerate() {
        let place = at("servers", i);
        if server_of.insert(&s.name, i).is_some() {
            diags.error(format!("{place}.name"), format!("server '{}' is defined twice", s.name));
        }
        let period = down(s.replenishment_period);
        if period <= 0 {
            diags.error(
                format!("{place}.replenishment_period"),
                format!("must be positive, got {}", s.replenishment_period),
            );
        }
        let mut server = ResolvedServer {
            name: s.name.clone(),
            resource: Resource::Processor(0),
            station: None,
            budget_packets: 0,
            packet_time: 0,
            capacity: 0,
            replenishment_period: period.max(1),
            priority: s.priority,
            background_priority: s.background_priority,
        };
        match (&s.processor, &s.bus) {
            (Some(p), None) => {
                match processor_of.get(p.as_str()) {
                    Some(&k) => server.resource = Resource::Processor(k),
                    None => diags.error(format!("{place}.processor"), format!("unknown processor '{p}'")),
                }
                for (key, given) in [
                    ("budget", s.budget.is_some()),
                    ("sender", s.sender.is_some()),
                    ("payload", s.payload.is_some()),
                ] {
                    if given {
                        diags.error(
                            format!("{place}.{key}"),
                            "belongs to a server on a bus; a processor's server has a capacity (time)",
                        );
                    }
                }
                match s.capacity {
                    None => diags
                        .error(format!("{place}.capacity"), "missing: a processor's server needs a capacity"),
                    Some(c) if up(c) <= 0 || up(c) > period => diags.error(
                        format!("{place}.capacity"),
                        format!("must be positive and at most the replenishment period, got {c}"),
                    ),
                    Some(c) => server.capacity = up(c),
                }
            }
            (None, Some(b)) => {
                match bus_of.get(b.as_str()) {
                    Some(&k) => {
                        server.resource = Resource::Bus(k);
                        match &s.sender {
                            Some(n) => server.station = Some(station(&mut sys, k, n)),
                            None => diags
                                .error(format!("{place}.sender"), "missing: the node the server sends from"),
                        }
                        let payload = s.payload.map_or(8.0, |p| p.bytes());
                        if !(0.0..=8.0).contains(&payload) || payload.fract() != 0.0 {
                            diags.error(
                                format!("{place}.payload"),
                                format!("must be a whole number of bytes from 0B to 8B, got {payload}B"),
                            );
                        }
                        let bits = can_frame_bits(spec.buses[k].identifier, payload.clamp(0.0, 8.0) as u32);
                        server.packet_time = sys.buses[k].time_of(bits);
                    }
                    None => diags.error(format!("{place}.bus"), format!("unknown bus '{b}'")),
                }
                if s.capacity.is_some() {
                    diags.error(
                        format!("{place}.capacity"),
                        "belongs to a server on a processor; a bus server has a budget in packets",
                    );
                }
                match s.budget {
                    None => diags.error(
                        format!("{place}.budget"),
                        "missing: a bus server needs a budget of at least one packet",
                    ),
                    Some(n) => match crate::units::count_rule(n.into()) {
                        Ok(()) => server.budget_packets = n,
                        Err(rule) => diags.error(format!("{place}.budget"), rule),
                    },
                }
            }
            _ => diags.error(place.clone(), "give exactly one of processor or bus"),
        }
        if s.background_priority.is_some_and(|b| b <= s.priority) {
            diags.error(
                format!("{place}.background_priority"),
                format!(
                    "must be a lower priority (a larger number) than priority {}, got {}",
                    s.priority,
                    s.background_priority.unwrap_or_default()
                ),
            );
        }
        sys.servers.push(server);
    }
    let server_ref = |name: &Option<String>, place: &str, want: Resource, diags: &mut Diagnostics| {
        let name = name.as_ref()?;
        let Some(&k) = server_of.get(name.as_str()) else {
            diags.error(format!("{place}.server"), format!("unknown server '{name}'"));
            return None;
        };
        let same = match (sys_resource(&spec.servers[k], &processor_of, &bus_of), want) {
            (Some(a), b) => a == b,
            (None, _) => true,
        };
        if !same {
            diags.error(
                format!("{place}.server"),
                format!("server '{name}' is not on the same processor or bus"),
            );
        }
        Some(k)
    };

    // Chains first: their steps take the chain's period.
    let mut in_chain: HashMap<&str, (usize, usize)> = HashMap::new();
    for (c, chain) in spec.chains.iter().enumerate() {
        let place = at("chains", c);
        if chain.steps.is_empty() {
            diags.error(format!("{place}.steps"), "must name at least one task or message");
        }
        if down(chain.period) <= 0 {
            diags.error(format!("{place}.period"), format!("must be positive, got {}", chain.period));
        }
        for (k, step) in chain.steps.iter().enumerate() {
            if let Some(&(other, _)) = in_chain.get(step.as_str()) {
                diags.error(
                    format!("{place}.steps[{k}]"),
                    format!("'{step}' is already a step of {}", at("chains", other)),
                );
            } else {
                in_chain.insert(step, (c, k));
            }
        }
    }
    // Period and deadline of a task or message, from its own keys, its chain's, or (when it is
    // served by a sporadic server and gives none) its server's replenishment period.
    let timing = |place: &str,
                  name: &str,
                  period: Option<crate::units::Duration>,
                  deadline: Option<crate::units::Duration>,
                  fallback: Option<Ns>,
                  diags: &mut Diagnostics| {
        let chain = in_chain.get(name).copied();
        let period = match (period, chain) {
            (Some(p), Some((c, _))) if down(p) != down(spec.chains[c].period) => {
                diags.error(
                    format!("{place}.period"),
                    format!(
                        "is a step of chain '{}', whose period ({}) it takes; got {p}",
                        spec.chains[c].name, spec.chains[c].period
                    ),
                );
                down(p)
            }
            (Some(p), _) => down(p),
            (None, Some((c, _))) => down(spec.chains[c].period),
            (None, None) => match fallback {
                Some(p) => p,
                None => {
                    diags.error(
                        format!("{place}.period"),
                        "missing: give a period or make it a step of a chain",
                    );
                    1
                }
            },
        };
        if period <= 0 {
            diags.error(format!("{place}.period"), "must be positive");
        }
        let deadline = match (deadline, chain) {
            (Some(d), _) => down(d),
            (None, Some((c, _))) => spec.chains[c].deadline.map_or(down(spec.chains[c].period), down),
            (None, None) => period,
        };
        if deadline <= 0 {
            diags.error(format!("{place}.deadline"), "must be positive");
        }
        (period.max(1), deadline.max(1), chain)
    };

    for (i, t) in spec.tasks.iter().enumerate() {
        let place = at("tasks", i);
        claim(&t.name, &place, diags);
        let processor = t.processor.as_ref().and_then(|p| {
            let k = processor_of.get(p.as_str()).copied();
            if k.is_none() {
                diags.error(format!("{place}.processor"), format!("unknown processor '{p}'"));
            }
            k
        });
        if up(t.wcet) <= 0 {
            diags.error(format!("{place}.wcet"), format!("must be positive, got {}", t.wcet));
        }
        let server =
            server_ref(&t.server, &place, Resource::Processor(processor.unwrap_or(usize::MAX)), diags);
        let fallback = server.map(|k| sys.servers[k].replenishment_period);
        let (period, deadline, chain) = timing(&place, &t.name, t.period, t.deadline, fallback, diags);
        if server.is_some() && t.priority.is_some() {
            diags.error(
                format!("{place}.priority"),
                "a task served by a server runs at the server's priority",
            );
        }
        sys.tasks.push(ResolvedTask {
            name: t.name.clone(),
            processor,
            wcet: up(t.wcet).max(1),
            period,
            deadline,
            jitter: up(t.jitter),
            blocking: up(t.blocking),
            priority: t.priority,
            server,
            chain,
        });
    }

    let mut identifiers: BTreeMap<(usize, u32), String> = BTreeMap::new();
    for (k, s) in sys.servers.iter().enumerate() {
        if let Resource::Bus(b) = s.resource {
            identifiers.insert((b, s.priority), at("servers", k));
        }
    }
    for (i, m) in spec.messages.iter().enumerate() {
        let place = at("messages", i);
        claim(&m.name, &place, diags);
        let Some(&bus) = bus_of.get(m.bus.as_str()) else {
            diags.error(format!("{place}.bus"), format!("unknown bus '{}'", m.bus));
            continue;
        };
        let payload = m.payload.bytes();
        if !(0.0..=8.0).contains(&payload) || payload.fract() != 0.0 {
            diags.error(
                format!("{place}.payload"),
                format!("must be a whole number of bytes from 0B to 8B (one CAN frame), got {}", m.payload),
            );
        }
        if let Err(rule) = crate::units::count_rule(m.packets.into()) {
            diags.error(format!("{place}.packets"), rule);
        }
        let server = server_ref(&m.server, &place, Resource::Bus(bus), diags);
        let fallback = server.map(|k| sys.servers[k].replenishment_period);
        let (period, deadline, chain) = timing(&place, &m.name, m.period, m.deadline, fallback, diags);
        match (m.priority, server) {
            (Some(_), Some(_)) => diags.error(
                format!("{place}.priority"),
                "a message sent through a server takes the server's priority",
            ),
            (Some(p), None) => {
                if spec.buses[bus].identifier == CanIdentifier::Standard && p > 0x7FF {
                    diags.error(
                        format!("{place}.priority"),
                        format!("must fit the bus's 11-bit identifier (0..2047), got {p}"),
                    );
                }
                if let Some(first) = identifiers.insert((bus, p), place.clone()) {
                    diags.error(
                        format!("{place}.priority"),
                        format!(
                            "priority {p} is already used on bus '{}' by {first}; CAN identifiers are unique",
                            m.bus
                        ),
                    );
                }
            }
            _ => {}
        }
        let payload_bytes = payload.clamp(0.0, 8.0) as u32;
        let frame_bits = can_frame_bits(spec.buses[bus].identifier, payload_bytes);
        let station = station(&mut sys, bus, &m.sender);
        sys.messages.push(ResolvedMessage {
            name: m.name.clone(),
            bus,
            station,
            payload_bytes,
            packets: m.packets.max(1),
            frame_bits,
            frame_time: sys.buses[bus].time_of(frame_bits),
            period,
            deadline,
            jitter: up(m.jitter),
            priority: m.priority,
            server,
            chain,
        });
    }

    let task_of: HashMap<&str, usize> =
        spec.tasks.iter().enumerate().map(|(i, t)| (t.name.as_str(), i)).collect();
    let message_of: HashMap<&str, usize> =
        spec.messages.iter().enumerate().map(|(i, m)| (m.name.as_str(), i)).collect();
    for (c, chain) in spec.chains.iter().enumerate() {
        let place = at("chains", c);
        let steps: Vec<Step> = chain
            .steps
            .iter()
            .enumerate()
            .filter_map(|(k, s)| match (task_of.get(s.as_str()), message_of.get(s.as_str())) {
                (Some(&t), _) => Some(Step::Task(t)),
                (None, Some(&m)) => Some(Step::Message(m)),
                (None, None) => {
                    diags.error(format!("{place}.steps[{k}]"), format!("unknown task or message '{s}'"));
                    None
                }
            })
            .collect();
        let period = down(chain.period).max(1);
        let step_deadlines = steps
            .iter()
            .map(|s: &Step| match *s {
                Step::Task(t) => spec.tasks[t].deadline.map(down),
                Step::Message(m) => spec.messages[m].deadline.map(down),
            })
            .collect();
        sys.chains.push(ResolvedChain {
            name: chain.name.clone(),
            period,
            deadline: chain.deadline.map_or(period, down),
            jitter: up(chain.jitter),
            steps,
            step_deadlines,
        });
    }
    sys
}

fn sys_resource(
    s: &SporadicServer,
    processor_of: &HashMap<&str, usize>,
    bus_of: &HashMap<&str, usize>,
) -> Option<Resource> {
    match (&s.processor, &s.bus) {
        (Some(p), None) => processor_of.get(p.as_str()).map(|&k| Resource::Processor(k)),
        (None, Some(b)) => bus_of.get(b.as_str()).map(|&k| Resource::Bus(k)),
        _ => None,
    }
}

/// What a processor's or bus's analysis sees of one task, message or sporadic server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Load {
    pub kind: LoadKind,
    /// Index in `tasks`, `messages` or `servers`.
    pub index: usize,
    /// Execution or transmission time per instance (a server: its whole budget).
    pub cost: Ns,
    /// The longest piece that cannot be preempted: a frame on a bus (the whole task on a
    /// processor).
    pub frame: Ns,
    pub period: Ns,
    pub deadline: Ns,
    pub jitter: Ns,
    pub blocking: Ns,
    pub priority: Option<u32>,
    /// On a bus: the sending station.
    pub station: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadKind {
    Task,
    Message,
    Server,
}

impl LoadKind {
    pub fn name(self) -> &'static str {
        match self {
            LoadKind::Task => "task",
            LoadKind::Message => "message",
            LoadKind::Server => "server",
        }
    }
}

/// The loads of every processor and bus, and which buses carry multi-frame instances (multi-frame
/// messages or network sporadic servers).
pub struct ResourceLoads {
    pub processors: Vec<Vec<Load>>,
    pub buses: Vec<Vec<Load>>,
    pub multi_frame: Vec<bool>,
}

impl FixedPrioritySystem {
    /// Every placed task and message not served by a server, and every server, by resource.
    /// Served items are accounted for by their server's budget.
    pub fn loads(&self) -> ResourceLoads {
        let mut r = ResourceLoads {
            processors: vec![Vec::new(); self.processors.len()],
            buses: vec![Vec::new(); self.buses.len()],
            multi_frame: vec![false; self.buses.len()],
        };
        for (index, t) in self.tasks.iter().enumerate() {
            let (Some(p), None) = (t.processor, t.server) else { continue };
            r.processors[p].push(Load {
                kind: LoadKind::Task,
                index,
                cost: t.wcet,
                frame: t.wcet,
                period: t.period,
                deadline: t.deadline,
                jitter: t.jitter,
                blocking: t.blocking,
                priority: t.priority,
                station: 0,
            });
        }
        for (index, m) in self.messages.iter().enumerate() {
            if m.server.is_some() {
                continue;
            }
            r.multi_frame[m.bus] |= m.packets > 1;
            r.buses[m.bus].push(Load {
                kind: LoadKind::Message,
                index,
                cost: m.transmission_time(),
                frame: m.frame_time,
                period: m.period,
                deadline: m.deadline,
                jitter: m.jitter,
                blocking: 0,
                priority: m.priority,
                station: m.station,
            });
        }
        for (index, s) in self.servers.iter().enumerate() {
            let (loads, cost, frame) = match s.resource {
                Resource::Processor(p) => (&mut r.processors[p], s.capacity, s.capacity),
                Resource::Bus(b) => {
                    r.multi_frame[b] = true;
                    (&mut r.buses[b], s.packet_time * s.budget_packets as Ns, s.packet_time)
                }
            };
            loads.push(Load {
                kind: LoadKind::Server,
                index,
                cost,
                frame,
                period: s.replenishment_period,
                deadline: s.replenishment_period,
                jitter: 0,
                blocking: 0,
                priority: Some(s.priority),
                station: s.station.unwrap_or(0),
            });
        }
        r
    }
}
