//! One node of a testbed run, in its own namespace: an end system (sources with their VL
//! regulators, receivers with integrity checking and redundancy management) or a user-space
//! switch (forwarding by frame id, policing, technological latency), and, in user mode, its egress
//! ports running the engine's own scheduler [`Behaviour`]s paced at the link rate.
//!
//! Time is the model's: ns since the run's epoch (`CLOCK_REALTIME` − epoch), shared by every
//! namespace. A port decides which frame goes next at the model instant its link becomes free,
//! from the frames that had arrived by then (by the kernel's arrival stamps, not by when this
//! process woke up), and sends it at the end of its transmission plus the link's propagation:
//! the instant its last bit reaches the peer, as store-and-forward sees it. Waking late delays
//! the physical send (that lateness is measured and reported as host noise), never the model's
//! schedule, so lateness does not accumulate within a port.

use crate::frame::{self, Fields, BASELINE_BIT};
use crate::plan::Plan;
use crate::sys::{self, Iface};
use rand::{Rng, SeedableRng};
use rtnetlab_core::model::Network;
use rtnetlab_core::schedulers::{self, Behaviour, Queued};
use rtnetlab_core::sim::stats::{Latency, LatencySummary};
use rtnetlab_core::sim::{sequence_number, sequence_valid, RedundancyManagement};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Egress ports are the interfaces' qdiscs (set up by the orchestrator); switches forward
    /// in the kernel (tc filters): only end systems run here.
    Kernel,
    /// Egress ports run here, paced in software; switches run here.
    User,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sizes {
    Max,
    Min,
    Uniform,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Release {
    Random,
    Synchronized,
}

/// What one node process runs (written by the orchestrator, JSON).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    pub node: String,
    /// Network namespace to enter first (`/run/netns/NAME`).
    pub netns: Option<String>,
    pub mode: Mode,
    /// `CLOCK_REALTIME` ns of model time 0, when the idle baseline starts.
    pub epoch_ns: i64,
    pub baseline_ns: i64,
    /// Model time at which the measured run starts, and its length (sources release in it).
    pub run_start_ns: i64,
    pub duration_ns: i64,
    /// How long after the last release receivers keep listening and ports keep sending.
    pub drain_ns: i64,
    pub seed: u64,
    pub sizes: Sizes,
    pub release: Release,
    /// `SCHED_FIFO` priority (0: the default scheduler).
    pub sched_priority: i32,
    /// Spin this long before a planned send instead of sleeping (0: always sleep).
    pub spin_ns: i64,
    /// Flows whose frames this node does not send (e.g. background traffic switched off).
    #[serde(default)]
    pub muted_flows: Vec<String>,
}

/// The idle baseline: one frame at a time in the whole network, flows in turn, each slot long
/// enough for a frame to cross its longest route alone (twice over, plus 200 µs of margin).
pub fn baseline_slot_ns(plan: &Plan) -> i64 {
    let mut longest = 0f64;
    for flow in &plan.flows {
        for r in &flow.routes {
            let mut t = 0f64;
            for &p in &r.ports {
                let port = &plan.ports[p];
                t += (flow.lmax_bytes as f64 + 20.0) * 8.0 / port.rate_bps * 1e9 + port.propagation_ns as f64;
                t += plan.nodes[port.node].technological_latency_ns as f64;
            }
            longest = longest.max(t);
        }
    }
    (2.0 * longest) as i64 + 200_000
}

/// The model's latency of the flow's largest frame alone on its route to this plane's
/// destination: at each hop its transmission, the link's propagation and the technological
/// latency of the node it leaves, then the destination's receive latency.
pub fn isolated_ns(plan: &Plan, flow: usize, destination: usize, plane: usize) -> f64 {
    let f = &plan.flows[flow];
    let Some(r) = f.routes.iter().find(|r| r.plane == plane && r.destination == destination) else {
        return 0.0;
    };
    let mut t = plan.nodes[r.destination].receive_latency_ns as f64;
    for &p in &r.ports {
        let port = &plan.ports[p];
        t += wire_bits(f.lmax_bytes) as f64 * 1e9 / port.rate_bps + port.propagation_ns as f64;
        t += plan.nodes[port.node].technological_latency_ns as f64;
    }
    t
}

/// A frame held by a port: its bytes and what its scheduler sees.
struct Stored {
    bytes: Vec<u8>,
    wire_bits: u32,
    frame_bits: u32,
    class: u16,
    /// The flow's index in the plan (and the network), for per-flow regulators.
    flow: u32,
    /// Kernel-mode sources: the emission, to write the start offset at the actual send.
    stamp_emit: Option<i64>,
}

#[derive(Default, Serialize)]
pub struct PortResult {
    pub port: usize,
    pub label: String,
    pub frames: u64,
    pub drops: u64,
    pub policed: u64,
    /// Frames the device refused (its queue full): lost there.
    pub send_errors: u64,
    pub max_backlog_bytes: f64,
    /// Transmission time, ns (utilisation = busy / run).
    pub busy_ns: f64,
}

struct Port {
    iface: usize,
    /// None: kernel mode, the interface's qdisc is the port (frames sent at their entry).
    behaviour: Option<Box<dyn Behaviour>>,
    ns_per_bit: f64,
    propagation_ns: i64,
    free_at: f64,
    decide_at: Option<i64>,
    slots: Vec<Option<Stored>>,
    free_slots: Vec<u32>,
    queued_bits: u64,
    buffer_bits: u64,
    in_flight: VecDeque<(i64, u32)>,
    /// Statistics count from the measured run's start (not the idle baseline).
    count_from: i64,
    result: PortResult,
}

impl Port {
    fn store(&mut self, s: Stored) -> u32 {
        match self.free_slots.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(s);
                i
            }
            None => {
                self.slots.push(Some(s));
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// A frame enters the port's queue at model time `t`.
    fn enqueue(&mut self, t: i64, s: Stored) {
        if self.behaviour.is_none() {
            let slot = self.store(s);
            self.in_flight.push_back((t, slot));
            return;
        };
        let counted = t >= self.count_from;
        if self.queued_bits + s.wire_bits as u64 > self.buffer_bits {
            self.result.drops += counted as u64;
            return;
        }
        self.queued_bits += s.wire_bits as u64;
        let on_wire = ((self.free_at - t as f64) / self.ns_per_bit).max(0.0);
        if counted {
            let backlog = (self.queued_bits as f64 + on_wire) / 8.0;
            self.result.max_backlog_bytes = self.result.max_backlog_bytes.max(backlog);
        }
        let (class, flow, wire_bits, frame_bits) = (s.class, s.flow, s.wire_bits, s.frame_bits);
        let slot = self.store(s);
        let b = self.behaviour.as_mut().expect("user-mode port");
        b.enqueue(Queued { frame: slot, class, flow, wire_bits, frame_bits }, t);
        if self.decide_at.is_none() {
            self.decide_at = Some(t.max(self.free_at.floor() as i64));
        }
    }

    /// The link is free at `t` (model time): the scheduler chooses the next frame.
    fn decide(&mut self, t: i64) {
        let b = self.behaviour.as_mut().expect("user-mode port");
        match b.dequeue(t) {
            Some(q) => {
                let start = self.free_at.max(t as f64);
                let tx = q.wire_bits as f64 * self.ns_per_bit;
                self.free_at = start + tx;
                self.queued_bits -= q.wire_bits as u64;
                if t >= self.count_from {
                    self.result.busy_ns += tx;
                    self.result.frames += 1;
                }
                self.in_flight.push_back((self.free_at.ceil() as i64 + self.propagation_ns, q.frame));
                self.decide_at = if b.is_empty() { None } else { Some(self.free_at.floor() as i64) };
            }
            None => self.decide_at = if b.is_empty() { None } else { b.next_ready(t).or(Some(t + 1_000)) },
        }
    }
}

/// A frame on its way into a port's queue: at a switch after its technological latency, at an
/// end system after the plane skew and the source's latency.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    at: i64,
    seq: u64,
    port: usize,
    slot: u32,
}

struct Source {
    flow: usize,
    next_ns: i64,
    number: u32,
    rng: rand_chacha::ChaCha8Rng,
    /// Token-bucket flows: frames sent since the first (released greedily).
    sent: u64,
    /// Copies on planes after the first enter their port this much later.
    plane_skew_ns: i64,
}

#[derive(Default)]
struct RouteRx {
    latency: Latency,
    baseline: Latency,
    last_sn: u8,
    integrity_discards: u64,
    /// The largest latency less the frame's host delay, and the largest host delay, ns.
    max_less_host: i64,
    max_host: i64,
    /// The previous measured frame (number, latency), and |inter-arrival − inter-release| over
    /// consecutive frames: seed 002's jitter when releases are periodic (inter-release = period).
    previous: Option<(u32, i64)>,
    interarrival: Latency,
}

#[derive(Serialize)]
pub struct RouteResult {
    pub flow: String,
    pub plane: String,
    #[serde(flatten)]
    pub latency: LatencySummary,
    pub histogram: Vec<(f64, u64)>,
    pub integrity_discards: u64,
    pub baseline: LatencySummary,
    /// The route's largest latency less each frame's host delay, and the largest host delay.
    pub max_less_host_us: f64,
    pub max_host_delay_us: f64,
    /// The model's latency of one largest frame alone on the route (no contention).
    pub isolated_us: f64,
    /// |inter-arrival − inter-release| of consecutive frames (equal to |Δ latency|).
    pub interarrival: LatencySummary,
}

#[derive(Serialize)]
pub struct DeliveredResult {
    pub flow: String,
    #[serde(flatten)]
    pub latency: LatencySummary,
    pub duplicates_discarded: u64,
}

#[derive(Serialize)]
pub struct Released {
    pub flow: String,
    pub frames: u64,
    pub baseline_frames: u64,
}

#[derive(Serialize)]
pub struct NodeResult {
    pub node: String,
    pub scheduling: String,
    pub released: Vec<Released>,
    pub routes: Vec<RouteResult>,
    pub delivered: Vec<DeliveredResult>,
    pub ports: Vec<PortResult>,
    /// Actual minus planned send instants of this process (host noise at the sender side).
    pub lateness: LatencySummary,
    /// Frames received that are not this run's (unknown frame id, or not a testbed frame).
    pub foreign_frames: u64,
    /// Frames a switch received for a frame id it has no route for.
    pub unrouted: u64,
}

pub struct Node<'a> {
    plan: &'a Plan,
    cfg: NodeConfig,
    node: usize,
    ifaces: Vec<Iface>,
    /// Plane of each interface.
    iface_plane: Vec<usize>,
    /// This node's egress port per plan port id.
    port_of: HashMap<usize, usize>,
    ports: Vec<Port>,
    pending: BinaryHeap<Reverse<Pending>>,
    seq: u64,
    sources: Vec<Source>,
    releases: BinaryHeap<Reverse<(i64, usize)>>,
    released: Vec<(u64, u64)>,
    flow_of_id: HashMap<u16, usize>,
    forwarding: HashMap<u16, Vec<usize>>,
    /// Policing accounts per (frame id, output port): credit bits and when.
    accounts: HashMap<(u16, usize), (f64, i64)>,
    routes: HashMap<(usize, usize), RouteRx>,
    rm: HashMap<usize, (RedundancyManagement, Latency)>,
    lateness: Latency,
    foreign: u64,
    unrouted: u64,
    work: u64,
    scheduling: String,
}

fn wire_bits(bytes: u32) -> u32 {
    (bytes + 20) * 8
}

impl<'a> Node<'a> {
    pub fn new(net: &Network, plan: &'a Plan, cfg: NodeConfig) -> Result<Node<'a>, String> {
        let node =
            plan.node_index(&cfg.node).ok_or_else(|| format!("node {}: not in the network", cfg.node))?;
        if let Some(ns) = &cfg.netns {
            sys::enter_netns(ns).map_err(|e| e.to_string())?;
        }
        let end_system = plan.nodes[node].end_system;
        if !end_system && cfg.mode == Mode::Kernel {
            return Err(format!("node {}: a switch runs in the kernel in kernel mode", cfg.node));
        }
        let mut ifaces = Vec::new();
        let mut iface_plane = Vec::new();
        let mut ports = Vec::new();
        let mut port_of = HashMap::new();
        for &p in &plan.nodes[node].ports {
            let pp = &plan.ports[p];
            let iface = Iface::open(&pp.ifname, cfg.mode == Mode::User).map_err(|e| e.to_string())?;
            ifaces.push(iface);
            iface_plane.push(pp.plane);
            let behaviour = match cfg.mode {
                Mode::User => Some(schedulers::port_behaviour(net, p)),
                Mode::Kernel => None,
            };
            port_of.insert(p, ports.len());
            ports.push(Port {
                iface: ifaces.len() - 1,
                behaviour,
                ns_per_bit: 1e9 / pp.rate_bps,
                propagation_ns: pp.propagation_ns,
                free_at: 0.0,
                decide_at: None,
                slots: Vec::new(),
                free_slots: Vec::new(),
                queued_bits: 0,
                buffer_bits: pp.buffer_bytes.map_or(u64::MAX, |b| (b * 8.0).round() as u64),
                in_flight: VecDeque::new(),
                count_from: cfg.run_start_ns,
                result: PortResult { port: p, label: pp.label.clone(), ..Default::default() },
            });
        }
        // Every node draws every flow's phase and skew in flow order, so all agree.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(cfg.seed);
        let mut sources = Vec::new();
        let mut releases = BinaryHeap::new();
        for (f, flow) in plan.flows.iter().enumerate() {
            let period = flow.period_ns.unwrap_or(0);
            let phase = match cfg.release {
                Release::Synchronized if flow.keeps_offset => flow.offset_ns,
                Release::Synchronized => 0,
                Release::Random if flow.kind == "periodic" => flow.offset_ns,
                Release::Random if period > 0 => rng.gen_range(0..period),
                Release::Random => 0,
            };
            let skew = if plan.sending_skew_ns > 0 { rng.gen_range(0..=plan.sending_skew_ns) } else { 0 };
            if flow.source != node || cfg.muted_flows.contains(&flow.name) {
                continue;
            }
            let next_ns = cfg.run_start_ns + phase;
            releases.push(Reverse((next_ns, sources.len())));
            sources.push(Source {
                flow: f,
                next_ns,
                number: 0,
                rng: rand_chacha::ChaCha8Rng::seed_from_u64(cfg.seed ^ ((f as u64 + 1) << 32)),
                sent: 0,
                plane_skew_ns: skew,
            });
        }
        if end_system && cfg.baseline_ns > 0 {
            // The baseline's slots: slot k belongs to flow k mod n; a source takes its own.
            let slot = baseline_slot_ns(plan);
            let n = plan.flows.len() as i64;
            for (s, source) in sources.iter().enumerate() {
                let f = source.flow as i64;
                let mut t = f * slot;
                while t + slot <= cfg.baseline_ns {
                    releases.push(Reverse((t, usize::MAX - s)));
                    t += n * slot;
                }
            }
        }
        let flow_of_id = plan.flows.iter().enumerate().map(|(f, fl)| (fl.frame_id, f)).collect();
        let forwarding = plan
            .forwarding
            .iter()
            .filter(|e| e.switch == node)
            .map(|e| (e.frame_id, e.out_ports.clone()))
            .collect();
        let mut routes = HashMap::new();
        let mut rm = HashMap::new();
        for (f, flow) in plan.flows.iter().enumerate() {
            let mine: Vec<_> = flow.routes.iter().filter(|r| r.destination == node).collect();
            for r in &mine {
                routes.insert((f, r.plane), RouteRx::default());
            }
            if !mine.is_empty() {
                rm.insert(f, (RedundancyManagement::new(mine.len() as u32), Latency::default()));
            }
        }
        let released = vec![(0, 0); sources.len()];
        let scheduling = sys::realtime_scheduling(cfg.sched_priority);
        Ok(Node {
            plan,
            cfg,
            node,
            ifaces,
            iface_plane,
            port_of,
            ports,
            pending: BinaryHeap::new(),
            seq: 0,
            sources,
            releases,
            released,
            flow_of_id,
            forwarding,
            accounts: HashMap::new(),
            routes,
            rm,
            lateness: Latency::default(),
            foreign: 0,
            unrouted: 0,
            work: 0,
            scheduling,
        })
    }

    fn now(&self) -> i64 {
        sys::now_ns() - self.cfg.epoch_ns
    }

    fn pend(&mut self, at: i64, port: usize, s: Stored) {
        let slot = self.ports[port].store(s);
        self.seq += 1;
        self.pending.push(Reverse(Pending { at, seq: self.seq, port, slot }));
    }

    /// The source `s` releases a frame at model time `t` (`baseline`: one of the idle baseline's).
    fn release(&mut self, s: usize, t: i64, baseline: bool) {
        let plan = self.plan;
        let src = &mut self.sources[s];
        let src_flow = src.flow;
        let flow = &plan.flows[src.flow];
        let bytes = if baseline {
            flow.lmax_bytes
        } else {
            match self.cfg.sizes {
                Sizes::Max => flow.lmax_bytes,
                Sizes::Min => flow.lmin_bytes,
                Sizes::Uniform => src.rng.gen_range(flow.lmin_bytes..=flow.lmax_bytes),
            }
        };
        let number = if baseline {
            BASELINE_BIT | (self.released[s].1 as u32)
        } else {
            let n = src.number;
            src.number += 1;
            n
        };
        if baseline {
            self.released[s].1 += 1;
        } else {
            self.released[s].0 += 1;
            // The next release: a VL's BAG or a period; a token bucket greedily (its burst at
            // once, then one frame per frame time at its rate).
            src.sent += 1;
            src.next_ns = match flow.period_ns {
                Some(p) => t + p,
                None => {
                    let frame = wire_bits(flow.lmax_bytes) as f64;
                    let free = ((flow.burst_bits / frame).floor() as u64).max(1);
                    let start = self.cfg.run_start_ns as f64;
                    let due = if src.sent < free {
                        start
                    } else {
                        start + (src.sent + 1 - free) as f64 * frame / flow.rate_bps * 1e9
                    };
                    (due.ceil() as i64).max(t)
                }
            };
            if src.next_ns < self.cfg.run_start_ns + self.cfg.duration_ns {
                self.releases.push(Reverse((src.next_ns, s)));
            }
        }
        let emit = t;
        let latency = plan.nodes[self.node].technological_latency_ns;
        let skew = src.plane_skew_ns;
        let ports: Vec<(usize, usize)> = plan.nodes[self.node]
            .ports
            .iter()
            .filter(|&&p| {
                flow.planes.contains(&plan.ports[p].plane) && flow.routes.iter().any(|r| r.ports[0] == p)
            })
            .map(|&p| (p, plan.ports[p].plane))
            .collect();
        for (k, (p, plane)) in ports.into_iter().enumerate() {
            let entry = emit + latency + if k == 0 { 0 } else { skew };
            let mut buf = [0u8; 1600];
            let fields = Fields {
                frame_id: flow.frame_id,
                src_node: self.node as u16,
                plane: plane as u8,
                class: flow.dscp,
                frame_bytes: bytes,
                emit_ns: (emit + self.cfg.epoch_ns) as u64,
                number,
                start_offset_ns: (entry - emit) as u32,
                seq: sequence_number((number & !BASELINE_BIT) as u64),
            };
            let sent = frame::encode(&mut buf, &fields).to_vec();
            let port = self.port_of[&p];
            let stored = Stored {
                bytes: sent,
                wire_bits: wire_bits(bytes),
                frame_bits: bytes * 8,
                class: flow.class.map_or(u16::MAX, |c| c as u16),
                flow: src_flow as u32,
                stamp_emit: (self.cfg.mode == Mode::Kernel).then_some(emit),
            };
            self.pend(entry, port, stored);
        }
    }

    /// A frame arrived at this switch at model time `at` on a port of `plane`: policed, then
    /// queued at each output port after the technological latency.
    fn forward(&mut self, bytes: &[u8], at: i64) {
        let Some(id) = frame::frame_id(bytes) else {
            self.foreign += 1;
            return;
        };
        let Some(outs) = self.forwarding.get(&id).cloned() else {
            self.unrouted += 1;
            return;
        };
        let flow_index = self.flow_of_id.get(&id).copied();
        let flow = flow_index.map(|f| &self.plan.flows[f]);
        let frame_bytes = (bytes.len() + frame::FCS_BYTES) as u32;
        let eligible = at + self.plan.nodes[self.node].technological_latency_ns;
        for p in outs {
            let port = self.port_of[&p];
            if let (Some(j), Some(flow)) = (self.plan.policing_jitter_ns, flow) {
                if let Some(bag) = flow.period_ns.filter(|_| flow.kind == "virtual_link") {
                    // ARINC 664 account-based policing, as the simulator's: Lmax per BAG up to
                    // Lmax·(1 + J/BAG), a frame needs credit for its size.
                    let lmax = flow.lmax_bytes as f64 * 8.0;
                    let ceiling = lmax * (1.0 + j as f64 / bag as f64);
                    let (credit, last) = self.accounts.get(&(id, p)).copied().unwrap_or((f64::INFINITY, at));
                    let credit = if credit.is_infinite() {
                        ceiling
                    } else {
                        (credit + lmax * (at - last) as f64 / bag as f64).min(ceiling)
                    };
                    let need = frame_bytes as f64 * 8.0;
                    if credit + 1e-6 < need {
                        self.accounts.insert((id, p), (credit, at));
                        self.ports[port].result.policed += (at >= self.cfg.run_start_ns) as u64;
                        continue;
                    }
                    self.accounts.insert((id, p), (credit - need, at));
                }
            }
            let stored = Stored {
                bytes: bytes.to_vec(),
                wire_bits: wire_bits(frame_bytes),
                frame_bits: frame_bytes * 8,
                class: flow.and_then(|f| f.class).map_or(u16::MAX, |c| c as u16),
                flow: flow_index.map_or(u32::MAX, |f| f as u32),
                stamp_emit: None,
            };
            self.pend(eligible, port, stored);
        }
    }

    /// A frame reached this end system at model time `at` on `plane`: measured per route, then
    /// integrity checking and redundancy management, as the simulator's destinations.
    fn receive(&mut self, bytes: &[u8], at: i64, plane: usize) {
        let Some(fields) = frame::decode(bytes) else {
            self.foreign += 1;
            return;
        };
        let Some(&f) = self.flow_of_id.get(&fields.frame_id) else {
            self.foreign += 1;
            return;
        };
        let flow = &self.plan.flows[f];
        let rx_latency = self.plan.nodes[self.node].receive_latency_ns;
        let emit = fields.emit_ns as i64 - self.cfg.epoch_ns;
        let start = emit + fields.start_offset_ns as i64;
        let Some(route) = self.routes.get_mut(&(f, plane)) else {
            self.foreign += 1;
            return;
        };
        let latency = at + rx_latency - start;
        if fields.number & BASELINE_BIT != 0 {
            route.baseline.record(latency);
            return;
        }
        route.latency.record(latency);
        if let Some((n, previous)) = route.previous {
            if fields.number == n.wrapping_add(1) {
                route.interarrival.record((latency - previous).abs());
            }
        }
        route.previous = Some((fields.number, latency));
        let host = frame::host_delay_ns(bytes);
        route.max_less_host = route.max_less_host.max(latency - host);
        route.max_host = route.max_host.max(host);
        let number = fields.number as u64;
        if flow.kind == "virtual_link" && !sequence_valid(&mut route.last_sn, number) {
            route.integrity_discards += 1;
            return;
        }
        let (rm, delivered) = self.rm.get_mut(&f).expect("a destination of the flow");
        if !rm.is_twin(number, at, flow.skew_max_ns, &mut self.work) {
            delivered.record(at + rx_latency - emit);
        }
    }

    fn send_due(&mut self, now: i64) {
        for port in &mut self.ports {
            while let Some(&(at, slot)) = port.in_flight.front() {
                if at > now {
                    break;
                }
                port.in_flight.pop_front();
                let mut s = port.slots[slot as usize].take().expect("stored");
                port.free_slots.push(slot);
                let actual = sys::now_ns() - self.cfg.epoch_ns;
                if let Some(emit) = s.stamp_emit {
                    // Kernel mode: the copy enters its port (the qdisc) now.
                    let offset = (actual - emit).clamp(0, u32::MAX as i64) as u32;
                    s.bytes[54..58].copy_from_slice(&offset.to_be_bytes());
                }
                self.lateness.record(actual - at);
                frame::add_host_delay(&mut s.bytes, actual - at);
                if self.ifaces[port.iface].send(&s.bytes).is_err() {
                    port.result.send_errors += 1;
                }
            }
        }
    }

    /// Runs until the end of the drain, then reports.
    pub fn run(mut self) -> Result<NodeResult, String> {
        let end = self.cfg.run_start_ns + self.cfg.duration_ns + self.cfg.drain_ns;
        let release_end = self.cfg.run_start_ns + self.cfg.duration_ns;
        let mut fds: Vec<libc::pollfd> =
            self.ifaces.iter().map(|i| libc::pollfd { fd: i.fd, events: libc::POLLIN, revents: 0 }).collect();
        let mut buf = vec![0u8; 2048];
        let end_system = self.plan.nodes[self.node].end_system;
        loop {
            let now = self.now();
            if now >= end {
                break;
            }
            // Frames in: each at the kernel's arrival stamp.
            for i in 0..self.ifaces.len() {
                while let Some(r) = self.ifaces[i].recv(&mut buf) {
                    let at = r.at_ns - self.cfg.epoch_ns;
                    let bytes = buf[..r.len].to_vec();
                    if end_system {
                        let plane = self.iface_plane[i];
                        self.receive(&bytes, at, plane);
                    } else {
                        self.forward(&bytes, at);
                    }
                }
            }
            // The model's events due by now, in time order: frames entering queues first, then
            // releases, then the ports' choices.
            loop {
                let ta = self.pending.peek().map_or(i64::MAX, |p| p.0.at);
                let tr = self.releases.peek().map_or(i64::MAX, |r| r.0 .0);
                let (td, dp) = self
                    .ports
                    .iter()
                    .enumerate()
                    .filter_map(|(i, p)| p.decide_at.map(|t| (t, i)))
                    .min()
                    .unwrap_or((i64::MAX, 0));
                let t = ta.min(tr).min(td);
                if t > now {
                    break;
                }
                if ta == t {
                    let Reverse(p) = self.pending.pop().expect("peeked");
                    let s = self.ports[p.port].slots[p.slot as usize].take().expect("stored");
                    self.ports[p.port].free_slots.push(p.slot);
                    self.ports[p.port].enqueue(p.at, s);
                } else if tr == t {
                    let Reverse((t, s)) = self.releases.pop().expect("peeked");
                    if s > usize::MAX / 2 {
                        self.release(usize::MAX - s, t, true);
                    } else if t < release_end {
                        self.release(s, t, false);
                    }
                } else {
                    self.ports[dp].decide(td);
                }
            }
            self.send_due(now);
            // Sleep until the next thing to do, or a frame.
            let next = [
                self.pending.peek().map_or(i64::MAX, |p| p.0.at),
                self.releases.peek().map_or(i64::MAX, |r| r.0 .0),
                self.ports.iter().filter_map(|p| p.decide_at).min().unwrap_or(i64::MAX),
                self.ports.iter().filter_map(|p| p.in_flight.front().map(|f| f.0)).min().unwrap_or(i64::MAX),
                end,
            ]
            .into_iter()
            .min()
            .expect("non-empty");
            let now = self.now();
            let sleep = next - now - self.cfg.spin_ns;
            if sleep > 0 {
                sys::wait(&mut fds, sleep);
            }
        }
        Ok(self.result())
    }

    fn result(self) -> NodeResult {
        let plan = self.plan;
        let hist = |l: &Latency| l.histogram().into_iter().map(|(ns, n)| (ns as f64 / 1e3, n)).collect();
        let mut routes: Vec<_> = self.routes.iter().collect();
        routes.sort_by_key(|(k, _)| **k);
        let mut delivered: Vec<_> = self.rm.iter().collect();
        delivered.sort_by_key(|(k, _)| **k);
        NodeResult {
            node: self.cfg.node.clone(),
            scheduling: self.scheduling.clone(),
            released: self
                .sources
                .iter()
                .zip(&self.released)
                .map(|(s, r)| Released {
                    flow: plan.flows[s.flow].name.clone(),
                    frames: r.0,
                    baseline_frames: r.1,
                })
                .collect(),
            routes: routes
                .into_iter()
                .map(|(&(f, plane), r)| RouteResult {
                    flow: plan.flows[f].name.clone(),
                    plane: plan.planes[plane].clone(),
                    latency: LatencySummary::from(&r.latency),
                    histogram: hist(&r.latency),
                    integrity_discards: r.integrity_discards,
                    baseline: LatencySummary::from(&r.baseline),
                    max_less_host_us: r.max_less_host as f64 / 1e3,
                    max_host_delay_us: r.max_host as f64 / 1e3,
                    isolated_us: isolated_ns(plan, f, self.node, plane) / 1e3,
                    interarrival: LatencySummary::from(&r.interarrival),
                })
                .collect(),
            delivered: delivered
                .into_iter()
                .map(|(&f, (rm, l))| DeliveredResult {
                    flow: plan.flows[f].name.clone(),
                    latency: LatencySummary::from(l),
                    duplicates_discarded: rm.duplicates(),
                })
                .collect(),
            ports: self.ports.into_iter().map(|p| p.result).collect(),
            lateness: LatencySummary::from(&self.lateness),
            foreign_frames: self.foreign,
            unrouted: self.unrouted,
        }
    }
}
