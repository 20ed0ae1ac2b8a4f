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

use crate::board::{Board, Stalls};
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
    /// `CLOCK_REALTIME` ns of model time 0, when the idle baseline starts; 0: sent by the front on
    /// the control pipe once every node is ready (`ready` on stderr), so that however long the
    /// nodes take to start, none starts late.
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
    /// Time dilation: the run is `time_scale` times slower than the model (every model instant
    /// and duration above is model time; one model ns lasts `time_scale` wall-clock ns, so rates
    /// are divided by it). Latencies are reported in model time.
    #[serde(default = "one")]
    pub time_scale: f64,
    /// The run's stall board (`crate::board`): its path, this node's slot and the slot count.
    #[serde(default)]
    pub stall_board: Option<String>,
    #[serde(default)]
    pub board_slot: usize,
    #[serde(default)]
    pub board_slots: usize,
    /// Wall-clock ns: a process late by more than this at a planned instant, or that leaves a
    /// received frame waiting longer, has stalled; a frame whose senders were late by more than
    /// this in all, or whose flight a stall overlapped, is disturbed by the host.
    #[serde(default = "default_disturbance")]
    pub disturbance_ns: i64,
}

fn one() -> f64 {
    1.0
}

fn default_disturbance() -> i64 {
    100_000
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
    /// A source's copy: its flow's contract is kept on the actual send (`Regulator`).
    regulated: bool,
    /// Already held once by its regulator (counted once).
    held: bool,
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
    /// The head of `in_flight` waits for its flow's regulator until this wall-clock instant.
    hold_until: Option<i64>,
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
    /// Token-bucket flows: the model instant the next frame is due (after the burst, one frame
    /// time after the previous one).
    bucket_due: f64,
    /// How much later (wall-clock ns) than planned this source's next frame may leave without
    /// breaking its contract, after late sends: its next release comes that much later (model
    /// time), so that a stall delays the flow once, not every frame after it too.
    shift_real: i64,
}

#[derive(Default)]
struct RouteRx {
    latency: Latency,
    baseline: Latency,
    last_sn: u8,
    integrity_discards: u64,
    /// The frames the host did not disturb (`Node::classify`), and the count of those it did:
    /// by its senders' lateness, and (the others) by a stall of the run overlapping their flight.
    undisturbed: Latency,
    disturbed_late: u64,
    disturbed_stall: u64,
    /// The largest latency less the frame's own host delay (inside it: the latency starts at
    /// the planned release), over the undisturbed frames.
    undisturbed_max_less_host: Option<i64>,
    /// The largest host delay a frame carried, wall-clock ns.
    max_host: i64,
    /// Kernel mode: what the kernel's ports do not hold a frame for, added at the destination:
    /// per bit of the frame, ns (its transmission at each hop), and a constant (propagation and
    /// the technological latency of the switches it leaves), model ns.
    kernel_ns_per_bit: f64,
    kernel_const_ns: f64,
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
    /// The frames the host did not disturb, and the numbers it did (late senders, stalls).
    pub undisturbed: LatencySummary,
    pub disturbed_late: u64,
    pub disturbed_stall: u64,
    /// The undisturbed frames' largest latency less each one's own host delay (µs, model time).
    pub undisturbed_max_less_host_us: Option<f64>,
    /// The largest host delay a frame carried (wall-clock µs: its senders' lateness in all).
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
    /// Actual minus planned send instants of this process (host noise at the sender side),
    /// wall-clock.
    pub lateness: LatencySummary,
    /// Stalls this process saw (wall-clock, longer than the disturbance threshold): how many,
    /// and their total and largest length, µs.
    pub stalls: u64,
    pub stalled_us: f64,
    pub longest_stall_us: f64,
    /// Frames held at the source so that no two frames of a flow leave closer than its
    /// contract allows (a late frame followed by an on-time one), and the longest hold, µs.
    pub regulated_holds: u64,
    pub longest_hold_us: f64,
    /// Model time this node's sources moved their releases by, in all, so as to keep their
    /// contracts after late sends, µs.
    pub release_shift_us: f64,
    /// Frames received whose classification was still waiting for another process's heartbeat
    /// when the run ended (classified with the stalls known by then).
    pub classified_late: u64,
    /// Model time the run covered when it was stopped early (`stop` on the control pipe).
    pub stopped_at_ns: Option<i64>,

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
    /// Wall-clock ns per model ns.
    k: f64,
    board: Option<Board>,
    stalls: Stalls,
    stall_count: u64,
    stalled_ns: i64,
    longest_stall_ns: i64,
    /// Received frames waiting for every process's heartbeat to pass their arrival.
    unclassified: VecDeque<RxFrame>,
    /// An end system's received frames held for its receive latency: (model instant due, order
    /// of arrival), the frame and its plane. The frame is delivered, and measured, when this
    /// process gets to it: the receive latency is realised, not added.
    deliveries: BinaryHeap<Reverse<(i64, u64)>>,
    delivery_frames: HashMap<u64, (Vec<u8>, usize)>,
    classified_late: u64,
    /// The contract of each source copy's flow on its port, kept on the actual sends.
    regulators: HashMap<(u32, usize), Regulator>,
    regulated_holds: u64,
    longest_hold_ns: i64,
    /// The source of each flow this node sends.
    source_of: HashMap<u32, usize>,
    /// Model time the sources' releases moved in all (`Source::shift_real`).
    shifted_ns: i64,
    stopped_at: Option<i64>,
}

/// A measured frame before its classification: its route, its flight in wall-clock time (from
/// its planned entry into its source port to its arrival), its latency (model ns) and the delay
/// its senders added (wall-clock ns).
struct RxFrame {
    route: (usize, usize),
    start_real: i64,
    arrival_real: i64,
    latency: i64,
    host: i64,
}

/// What a source must keep on the wire, whatever its lateness: ARINC 664's regulator (no two
/// frames of a VL closer than its BAG; a periodic flow's period likewise), or a token bucket
/// (rate, burst), in wall-clock time.
enum Regulator {
    Gap { gap_real: i64, last: Option<i64> },
    Bucket { bits_per_ns: f64, burst_bits: f64, tokens: f64, at: i64 },
}

impl Regulator {
    /// The earliest wall-clock instant, not before `now`, at which a frame of `bits` conforms.
    fn ready(&self, now: i64, bits: f64) -> i64 {
        match self {
            Regulator::Gap { gap_real, last } => last.map_or(now, |l| now.max(l + gap_real)),
            Regulator::Bucket { bits_per_ns, burst_bits, tokens, at } => {
                let have = (tokens + (now - at) as f64 * bits_per_ns).min(*burst_bits);
                if have + 1e-6 >= bits {
                    now
                } else {
                    now + ((bits - have) / bits_per_ns).ceil() as i64
                }
            }
        }
    }

    /// How much later than `next` (wall clock) a frame of `bits` planned then could leave, given
    /// the sends so far: what the source's schedule must move by.
    fn shortfall(&self, next: i64, bits: f64) -> i64 {
        self.ready(next, bits) - next
    }

    /// Wall-clock ns between two frames of `bits` at the contract.
    fn interval(&self, bits: f64) -> i64 {
        match self {
            Regulator::Gap { gap_real, .. } => *gap_real,
            Regulator::Bucket { bits_per_ns, .. } => (bits / bits_per_ns).round() as i64,
        }
    }

    fn sent(&mut self, now: i64, bits: f64) {
        match self {
            Regulator::Gap { last, .. } => *last = Some(now),
            Regulator::Bucket { bits_per_ns, burst_bits, tokens, at } => {
                *tokens = (*tokens + (now - *at) as f64 * *bits_per_ns).min(*burst_bits) - bits;
                *at = now;
            }
        }
    }
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
                hold_until: None,
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
                bucket_due: next_ns as f64,
                shift_real: 0,
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
                let mut rx = RouteRx::default();
                if cfg.mode == Mode::Kernel {
                    // A kernel port releases a frame at the start of its transmission and the
                    // veth delivers it at once; nothing in this kernel (no netem, fq or etf)
                    // holds a lone frame, so each hop's transmission, propagation and the
                    // switch's technological latency are added here, from the frame's size.
                    for (h, &p) in r.ports.iter().enumerate() {
                        let port = &plan.ports[p];
                        rx.kernel_ns_per_bit += 1e9 / port.rate_bps;
                        rx.kernel_const_ns += port.propagation_ns as f64;
                        if h > 0 {
                            rx.kernel_const_ns += plan.nodes[port.node].technological_latency_ns as f64;
                        }
                    }
                }
                routes.insert((f, r.plane), rx);
            }
            if !mine.is_empty() {
                rm.insert(f, (RedundancyManagement::new(mine.len() as u32), Latency::default()));
            }
        }
        let released = vec![(0, 0); sources.len()];
        let k = cfg.time_scale;
        if !(k.is_finite() && k > 0.0) {
            return Err(format!("time scale {k}: must be positive"));
        }
        let mut regulators = HashMap::new();
        let source_of = sources.iter().enumerate().map(|(i, s)| (s.flow as u32, i)).collect();
        for source in &sources {
            let flow = &plan.flows[source.flow];
            for &p in &plan.nodes[node].ports {
                if !flow.routes.iter().any(|r| r.ports[0] == p) {
                    continue;
                }
                // A VL's BAG (ARINC 664) and a token bucket's (rate, burst) are contracts kept on
                // the wire; a periodic flow is a task's schedule, released as planned (seed 002's
                // datagrams are periodic flows whose fragments leave together).
                let reg = match flow.period_ns {
                    Some(_) if flow.kind == "periodic" => continue,
                    Some(gap) => Regulator::Gap { gap_real: (gap as f64 * k).round() as i64, last: None },
                    None => Regulator::Bucket {
                        bits_per_ns: flow.rate_bps / 1e9 / k,
                        burst_bits: flow.burst_bits.max(wire_bits(flow.lmax_bytes) as f64),
                        tokens: flow.burst_bits.max(wire_bits(flow.lmax_bytes) as f64),
                        at: 0,
                    },
                };
                regulators.insert((source.flow as u32, p), reg);
            }
        }
        let board = match &cfg.stall_board {
            Some(path) => Some(
                Board::open(path, cfg.board_slots, cfg.board_slot)
                    .map_err(|e| format!("stall board {path}: {e}"))?,
            ),
            None => None,
        };
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
            k,
            board,
            stalls: Stalls::default(),
            stall_count: 0,
            stalled_ns: 0,
            longest_stall_ns: 0,
            unclassified: VecDeque::new(),
            deliveries: BinaryHeap::new(),
            delivery_frames: HashMap::new(),
            classified_late: 0,
            regulators,
            regulated_holds: 0,
            longest_hold_ns: 0,
            source_of,
            shifted_ns: 0,
            stopped_at: None,
        })
    }

    /// Model time (ns since the epoch, dilated by the time scale) of wall-clock instant `real`.
    fn model(&self, real: i64) -> i64 {
        ((real - self.cfg.epoch_ns) as f64 / self.k).floor() as i64
    }

    /// Wall-clock instant of model time `t`.
    fn real(&self, t: i64) -> i64 {
        self.cfg.epoch_ns + (t as f64 * self.k).round() as i64
    }

    /// This process did not run between wall-clock `start` and `end` when it should have.
    fn stalled(&mut self, start: i64, end: i64) {
        let len = end - start;
        if len <= self.cfg.disturbance_ns {
            return;
        }
        self.stall_count += 1;
        self.stalled_ns += len;
        self.longest_stall_ns = self.longest_stall_ns.max(len);
        if let Some(b) = &self.board {
            b.stall(start, end);
        }
    }

    fn pend(&mut self, at: i64, port: usize, s: Stored) {
        let slot = self.ports[port].store(s);
        self.seq += 1;
        self.pending.push(Reverse(Pending { at, seq: self.seq, port, slot }));
    }

    /// The source `s` releases a frame at model time `t` (`baseline`: one of the idle baseline's).
    fn release(&mut self, s: usize, t: i64, baseline: bool) {
        let plan = self.plan;
        if !baseline && self.sources[s].shift_real > 0 {
            // Its previous copies left late: this release moves by as much (the flow's phase
            // shifts; its frames stay a contract apart).
            let d = (self.sources[s].shift_real as f64 / self.k).ceil() as i64;
            self.sources[s].shift_real = 0;
            self.sources[s].bucket_due += d as f64;
            self.shifted_ns += d;
            if t + d < self.cfg.run_start_ns + self.cfg.duration_ns {
                self.releases.push(Reverse((t + d, s)));
            }
            return;
        }
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
                    if src.sent >= free {
                        src.bucket_due += frame / flow.rate_bps * 1e9;
                    }
                    (src.bucket_due.ceil() as i64).max(t)
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
                emit_ns: self.real(emit) as u64,
                number,
                // The latency reference, as the simulator's: the emission plus the plane skew
                // (the source's technological latency is inside the latency).
                start_offset_ns: (entry - emit - latency) as u32,
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
                regulated: !baseline,
                held: false,
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
                regulated: false,
                held: false,
            };
            self.pend(eligible, port, stored);
        }
    }

    /// A frame was delivered at this end system at model time `at` (wall clock `at_real`: its
    /// arrival plus the receive latency it was held for) on `plane`: measured per route
    /// (classified once the stall board allows), then integrity checking and redundancy
    /// management, as the simulator's destinations.
    fn receive(&mut self, bytes: &[u8], at: i64, at_real: i64, plane: usize) {
        let Some(fields) = frame::decode(bytes) else {
            self.foreign += 1;
            return;
        };
        let Some(&f) = self.flow_of_id.get(&fields.frame_id) else {
            self.foreign += 1;
            return;
        };
        let flow = &self.plan.flows[f];
        let emit = self.model(fields.emit_ns as i64);
        // The copy's planned entry into its source port: the latency starts there in both
        // modes, so a late sender's delay is inside it.
        let start = emit + fields.start_offset_ns as i64;
        let start_real = self.real(start);
        let Some(route) = self.routes.get_mut(&(f, plane)) else {
            self.foreign += 1;
            return;
        };
        let added = (frame::wire_bits_of(bytes) as f64 * route.kernel_ns_per_bit + route.kernel_const_ns)
            .round() as i64;
        let latency = at - start + added;
        let host = frame::host_delay_ns(bytes);
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
        route.max_host = route.max_host.max(host);
        self.unclassified.push_back(RxFrame {
            route: (f, plane),
            start_real,
            arrival_real: at_real,
            latency,
            host,
        });
        let number = fields.number as u64;
        if flow.kind == "virtual_link" && !sequence_valid(&mut route.last_sn, number) {
            route.integrity_discards += 1;
            return;
        }
        let (rm, delivered) = self.rm.get_mut(&f).expect("a destination of the flow");
        if !rm.is_twin(number, at, flow.skew_max_ns, &mut self.work) {
            delivered.record(at - emit + added);
        }
    }

    /// A frame reached this end system at model time `at` (wall clock `at_real`) on `plane`:
    /// held for the receive latency, or received at once without one.
    fn arrived(&mut self, bytes: Vec<u8>, at: i64, at_real: i64, plane: usize) {
        let rx_latency = self.plan.nodes[self.node].receive_latency_ns;
        if rx_latency > 0 {
            self.seq += 1;
            self.deliveries.push(Reverse((at + rx_latency, self.seq)));
            self.delivery_frames.insert(self.seq, (bytes, plane));
        } else {
            self.receive(&bytes, at, at_real, plane);
        }
    }

    /// Received frames whose receive latency is over by model time `now`, delivered at the
    /// instant this process gets to them.
    fn deliver_due(&mut self, now: i64) {
        while self.deliveries.peek().is_some_and(|d| d.0 .0 <= now) {
            let Reverse((_, seq)) = self.deliveries.pop().expect("peeked");
            let (bytes, plane) = self.delivery_frames.remove(&seq).expect("held");
            let real = sys::now_ns();
            self.receive(&bytes, self.model(real), real, plane);
        }
    }

    /// Classifies the received frames every process has looked past (all of them with `all`):
    /// disturbed when their senders were late by more than the threshold in all, or a stall of
    /// any process of the run overlapped their flight; the others are the verdict's.
    fn classify(&mut self, all: bool) {
        if let Some(b) = self.board.as_mut() {
            let new = b.new_stalls();
            // Frames still to classify began their flights after the first one waiting, those
            // still on their way within the drain (twice the largest bound) or 100 ms: older
            // stalls are of no use, and the list stays short whatever the run's length.
            let first = self.unclassified.front().map_or(i64::MAX, |f| f.start_real);
            let flight = ((self.cfg.drain_ns as f64 * self.k) as i64).max(100_000_000);
            self.stalls.add(new, first.min(sys::now_ns() - flight));
        }
        let horizon = self.board.as_ref().map_or(i64::MAX, |b| b.horizon());
        let limit = self.cfg.disturbance_ns;
        while let Some(fr) = self.unclassified.front() {
            if !all && fr.arrival_real > horizon {
                break;
            }
            let fr = self.unclassified.pop_front().expect("peeked");
            if all && fr.arrival_real > horizon {
                self.classified_late += 1;
            }
            let route = self.routes.get_mut(&fr.route).expect("measured route");
            let less_host = fr.latency - (fr.host as f64 / self.k).round() as i64;
            if fr.host > limit {
                route.disturbed_late += 1;
            } else if self.stalls.overlaps(fr.start_real, fr.arrival_real) {
                route.disturbed_stall += 1;
            } else {
                route.undisturbed.record(fr.latency);
                route.undisturbed_max_less_host =
                    Some(route.undisturbed_max_less_host.map_or(less_host, |m| m.max(less_host)));
            }
        }
    }

    /// Sends what is due by wall-clock `now_real`, each source copy only once its flow's
    /// contract allows (a frame held is late: the hold is in its host delay).
    fn send_due(&mut self, now_real: i64) {
        let epoch = self.cfg.epoch_ns;
        let k = self.k;
        for port in &mut self.ports {
            port.hold_until = None;
            while let Some(&(at, slot)) = port.in_flight.front() {
                let planned = epoch + (at as f64 * k).round() as i64;
                if planned > now_real {
                    break;
                }
                let (regulated, flow, bits) = {
                    let s = port.slots[slot as usize].as_ref().expect("stored");
                    (s.regulated, s.flow, s.wire_bits as f64)
                };
                let actual = sys::now_ns();
                let key = (flow, port.result.port);
                if regulated {
                    if let Some(reg) = self.regulators.get(&key) {
                        let ready = reg.ready(actual, bits);
                        if ready > actual {
                            let s = port.slots[slot as usize].as_mut().expect("stored");
                            if !s.held {
                                s.held = true;
                                self.regulated_holds += 1;
                                self.longest_hold_ns = self.longest_hold_ns.max(ready - actual);
                            }
                            port.hold_until = Some(ready);
                            break;
                        }
                    }
                }
                port.in_flight.pop_front();
                let mut s = port.slots[slot as usize].take().expect("stored");
                port.free_slots.push(slot);
                let late = actual - planned;
                if regulated {
                    if let Some(reg) = self.regulators.get_mut(&key) {
                        reg.sent(actual, bits);
                        // The next frame at its planned instant would break the contract by this
                        // much (a BAG: by this one's lateness; a token bucket: beyond what its
                        // burst absorbs): the source's next release moves by as much, so that
                        // it is not held (a hold would keep the port's later frames waiting).
                        let short = reg.shortfall(planned + reg.interval(bits), bits);
                        if short > 0 {
                            if let Some(&src) = self.source_of.get(&flow) {
                                let shift = &mut self.sources[src].shift_real;
                                *shift = (*shift).max(short);
                            }
                        }
                    }
                }
                if !s.held && late > self.cfg.disturbance_ns {
                    // Not held by a regulator: this process ran late.
                    self.stall_count += 1;
                    self.stalled_ns += late;
                    self.longest_stall_ns = self.longest_stall_ns.max(late);
                    if let Some(b) = &self.board {
                        b.stall(planned, actual);
                    }
                }
                self.lateness.record(late);
                frame::add_host_delay(&mut s.bytes, late);
                if self.ifaces[port.iface].send(&s.bytes).is_err() {
                    port.result.send_errors += 1;
                }
                // The send call carries the frame through the veth (and, in kernel mode, through
                // the qdiscs and switches its way) when nothing else takes the processor: a
                // long call is a stall the frame's host delay does not show.
                let done = sys::now_ns();
                if done - actual > self.cfg.disturbance_ns {
                    self.stall_count += 1;
                    self.stalled_ns += done - actual;
                    self.longest_stall_ns = self.longest_stall_ns.max(done - actual);
                    if let Some(b) = &self.board {
                        b.stall(actual, done);
                    }
                }
            }
        }
    }

    /// Runs until the end of the drain (or a `stop` on the control pipe), then reports.
    pub fn run(mut self) -> Result<NodeResult, String> {
        if self.cfg.epoch_ns == 0 {
            eprintln!("ready");
            self.cfg.epoch_ns =
                sys::epoch(120_000_000_000).ok_or("no epoch from the front within 120 s of being ready")?;
        }
        let mut end = self.cfg.run_start_ns + self.cfg.duration_ns + self.cfg.drain_ns;
        let release_end = self.cfg.run_start_ns + self.cfg.duration_ns;
        let mut fds: Vec<libc::pollfd> =
            self.ifaces.iter().map(|i| libc::pollfd { fd: i.fd, events: libc::POLLIN, revents: 0 }).collect();
        let mut buf = vec![0u8; 2048];
        let end_system = self.plan.nodes[self.node].end_system;
        // The wall-clock instant this process meant to wake at (a timer), when it slept for one.
        let mut wake_at: Option<i64> = None;
        let mut next_classify = 0i64;
        loop {
            let now_real = sys::now_ns();
            let now = self.model(now_real);
            if let Some(w) = wake_at.take() {
                self.stalled(w, now_real);
            }
            if sys::stop_requested() && self.stopped_at.is_none() {
                // Interrupted: the run ends here, what was measured is reported.
                self.stopped_at = Some(now);
                end = now;
            }
            if now >= end {
                break;
            }
            // Frames in: each at the kernel's arrival stamp; the oldest one's wait in the ring
            // is this process's stall when it is long.
            for i in 0..self.ifaces.len() {
                let mut first = true;
                while let Some(r) = self.ifaces[i].recv(&mut buf) {
                    if first {
                        self.stalled(r.at_ns, now_real);
                        first = false;
                    }
                    let at = self.model(r.at_ns);
                    let bytes = buf[..r.len].to_vec();
                    if end_system {
                        let plane = self.iface_plane[i];
                        self.arrived(bytes, at, r.at_ns, plane);
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
            self.send_due(now_real);
            self.deliver_due(now);
            if let Some(b) = &self.board {
                b.heartbeat(now_real);
            }
            if end_system && now_real >= next_classify {
                // Every 20 ms: the board's stalls merged and the frames the horizon passed
                // classified, at a cost that does not grow with the frames' rate.
                self.classify(false);
                next_classify = now_real + 20_000_000;
            }
            // Sleep until the next thing to do, or a frame.
            let next = [
                self.pending.peek().map_or(i64::MAX, |p| p.0.at),
                self.releases.peek().map_or(i64::MAX, |r| r.0 .0),
                self.ports.iter().filter_map(|p| p.decide_at).min().unwrap_or(i64::MAX),
                self.deliveries.peek().map_or(i64::MAX, |d| d.0 .0),
                self.ports
                    .iter()
                    .filter(|p| p.hold_until.is_none())
                    .filter_map(|p| p.in_flight.front().map(|f| f.0))
                    .min()
                    .unwrap_or(i64::MAX),
                end,
            ]
            .into_iter()
            .min()
            .expect("non-empty");
            let mut next_real = self.real(next);
            if let Some(h) = self.ports.iter().filter_map(|p| p.hold_until).min() {
                next_real = next_real.min(h);
            }
            let now_real = sys::now_ns();
            let mut sleep = next_real - now_real - self.cfg.spin_ns;
            if self.board.is_some() {
                // The heartbeat moves at least every 10 ms, so receivers classify as they go.
                sleep = sleep.min(10_000_000);
            }
            if sleep > 0 {
                wake_at = Some(now_real + sleep);
                sys::wait(&mut fds, sleep);
                if fds.iter().any(|f| f.revents != 0) {
                    // Woken by a frame, not by the timer: no lateness to account.
                    wake_at = None;
                }
            }
        }
        if let Some(b) = &self.board {
            b.finish();
        }
        if end_system {
            // Every process reports its stalls before it stops: wait for them (up to 2 s).
            let last = self.unclassified.back().map_or(i64::MIN, |f| f.arrival_real);
            let deadline = sys::now_ns() + 2_000_000_000;
            while let Some(b) = &self.board {
                if b.horizon() >= last || sys::now_ns() > deadline {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            self.classify(true);
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
                    undisturbed: LatencySummary::from(&r.undisturbed),
                    disturbed_late: r.disturbed_late,
                    disturbed_stall: r.disturbed_stall,
                    undisturbed_max_less_host_us: r.undisturbed_max_less_host.map(|x| x as f64 / 1e3),
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
            stalls: self.stall_count,
            stalled_us: self.stalled_ns as f64 / 1e3,
            longest_stall_us: self.longest_stall_ns as f64 / 1e3,
            regulated_holds: self.regulated_holds,
            longest_hold_us: self.longest_hold_ns as f64 / 1e3,
            release_shift_us: self.shifted_ns as f64 / 1e3,
            classified_late: self.classified_late,
            stopped_at_ns: self.stopped_at,

            foreign_frames: self.foreign,
            unrouted: self.unrouted,
        }
    }
}
