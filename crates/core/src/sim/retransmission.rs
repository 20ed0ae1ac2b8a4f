//! The event loop and the state of sources, ports and destinations.

use super::arrivals::{Arrival, ArrivalLog, AHEAD};
use super::queue::{EventQueue, Kind, MAX_LANES};
use super::stats::{prefetch, Latency, LatencySummary};
use super::*;
use crate::dedup::{self, Decision, Dedup, DedupConfig, DeliveryMode};
use crate::model::{Network, NodeKind, SchedulerConfig, Switching, Traffic};
use crate::schedulers::{self, Behaviour, Queued};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// The application of a flow produces its next frame(s).
    Release { flow: u32 },
    /// A flow's regulator may emit its next waiting frame.
    Regulate { flow: u32 },
    /// A copy reaches an egress port's queue.
    Enqueue { packet: u32 },
    /// An egress port finishes transmitting.
    TxEnd { port: u32 },
    /// The last bit of a packet reaches the next node.
    Arrive { packet: u32 },
    /// A shaper may let a frame go.
    Wake { port: u32 },
    /// A frame's retransmission timeout runs out ([`Simulator::timeouts`] slot).
    Timeout { slot: u32 },
}

/// One flow crossing one port (once per multicast tree), with where copies go next, as built
/// from the routes; [`lay_out`] turns them into [`Hop`]s.
struct Crossing {
    port: u32,
    /// Crossings at the next node's ports (a switch forwarding the copy).
    next: Vec<u32>,
    /// The route (stats index) delivered when the next node is that route's destination.
    deliver: Option<u32>,
    /// Every route downstream of this crossing (losses here are losses there).
    reach: Vec<u32>,
}

/// No route delivered at a hop.
const NO_ROUTE: u32 = u32::MAX;

/// What a copy's crossing of a port needs on the hot path, 16 bytes. Crossings are numbered
/// breadth-first per flow, so the crossings a copy goes to next are `first_next..first_next +
/// n_next`, and a flow's crossings lie together.
#[derive(Clone, Copy)]
struct Hop {
    port: u32,
    /// The route (stats index) delivered when the next node is that route's destination, or
    /// [`NO_ROUTE`].
    deliver: u32,
    /// The first next crossing; for a hop that delivers (it has no next crossings), the
    /// route's receiver.
    first_next: u32,
    n_next: u32,
}

/// Crossings as hops, renumbered breadth-first per flow from its first crossings, plane by plane
/// (so a plane's first crossings are consecutive too, and every list of next crossings keeps its
/// order); with every crossing's reach (routes downstream) as offsets into one array, and each
/// flow's (plane, first crossing, count).
#[allow(clippy::type_complexity)]
fn lay_out(
    crossings: &[Crossing],
    starts: &[Vec<(u8, Vec<u32>)>],
) -> (Vec<Hop>, Vec<u32>, Vec<u32>, Vec<Vec<(u8, u32, u32)>>) {
    let mut new_id = vec![u32::MAX; crossings.len()];
    let mut order: Vec<u32> = Vec::with_capacity(crossings.len());
    let mut sources = Vec::with_capacity(starts.len());
    for planes in starts {
        let head = order.len();
        let mut src = Vec::with_capacity(planes.len());
        for (plane, firsts) in planes {
            src.push((*plane, order.len() as u32, firsts.len() as u32));
            for &c in firsts {
                new_id[c as usize] = order.len() as u32;
                order.push(c);
            }
        }
        let mut i = head;
        while i < order.len() {
            for &d in &crossings[order[i] as usize].next {
                new_id[d as usize] = order.len() as u32;
                order.push(d);
            }
            i += 1;
        }
        sources.push(src);
    }
    assert_eq!(order.len(), crossings.len(), "every crossing follows from a flow's first crossings");
    let mut reach_at = Vec::with_capacity(crossings.len() + 1);
    let mut reach = Vec::new();
    let hops = order
        .iter()
        .map(|&c| {
            let c = &crossings[c as usize];
            reach_at.push(reach.len() as u32);
            reach.extend_from_slice(&c.reach);
            let first_next = c.next.first().map_or(0, |&d| new_id[d as usize]);
            debug_assert!(c
                .next
                .iter()
                .enumerate()
                .all(|(k, &d)| new_id[d as usize] == first_next + k as u32));
            Hop {
                port: c.port,
                deliver: c.deliver.unwrap_or(NO_ROUTE),
                first_next,
                n_next: c.next.len() as u32,
            }
        })
        .collect();
    reach_at.push(reach.len() as u32);
    (hops, reach_at, reach, sources)
}

/// One copy of one frame on one plane.
struct Copy {
    flow: u32,
    frame: u64,
    seq: u32,
    /// When the frame was emitted by the source's regulator (before the plane skew).
    emit_ns: i64,
    /// When this copy entered its source port (latency reference).
    start_ns: i64,
    frame_bits: u32,
    wire_bits: u32,
    plane: u8,
    refs: u32,
}

/// A copy in one port: the unit a scheduler queues, with its hop and its length on the wire
/// (copied in: packets are few and stay in cache, the hops are many, and a FIFO port needs
/// nothing of the copy), in half a cache line.
#[derive(Clone, Copy)]
#[repr(align(32))]
struct Packet {
    copy: u32,
    crossing: u32,
    hop: Hop,
    wire_bits: u32,
    /// From the packet's last bit reaching a switch to its entering the port's queue (the
    /// switch's latency, less a cut-through gain), ns; [`FROM_SOURCE`] at a source's port.
    /// Policing, at the queue's entrance, needs the arrival time.
    lag_ns: i32,
}

/// `Packet::lag_ns` of a packet that entered the network at this port.
const FROM_SOURCE: i32 = i32::MIN;

/// A frame a FIFO port has scheduled but not yet started to send.
#[derive(Clone, Copy)]
struct Waiting {
    /// The first ns at which it has started (its exact start, rounded up).
    started: i64,
    /// Its end, rounded down, and the ns it adds to the port's busy time.
    end: i64,
    tx_ns: i64,
    wire_bits: u32,
}

/// How a port picks its next frame. A FIFO port (nearly every port of an AFDX network) needs no
/// events of its own: first in, first out and work-conserving, a frame entering at `t` leaves
/// at `max(t, free_at)`, known at once, so the port forwards it to its next hop straight away
/// and keeps only what its backlog and buffer need (frames scheduled but not started). Any other
/// scheduler runs its boxed behaviour, started and ended by events.
enum Discipline {
    Fifo { waiting: VecDeque<Waiting> },
    Scheduled(Scheduled),
}

/// A scheduled port's behaviour, the frame it is sending and its shaper's pending wake-up.
struct Scheduled {
    behaviour: Box<dyn Behaviour>,
    busy: bool,
    current: u32,
    tx_end: i64,
    /// When a wake-up event is pending, or [`NO_WAKE`].
    wake_at: i64,
}

/// No wake-up pending.
const NO_WAKE: i64 = i64::MAX;

/// An egress port in two cache lines, fetched ahead of each arrival: the first holds what a
/// frame's arrival at a FIFO port reads and writes.
///
/// The link's time is exact: the end of the last frame scheduled is kept as whole ns plus a
/// fraction of 2^-64 ns, each frame taking `wire bits x ns_per_bit` (ns per bit rounded down
/// to 2^-64 ns, an error below 2^-32 ns per frame, never upwards), so rounding does not
/// accumulate over a busy period; events happen at the exact times rounded down to the ns (see
/// [`PortSim::transmit`]).
#[repr(C, align(64))]
struct PortSim {
    link: Link,
    /// A FIFO port's end of the last frame started (as of the latest arrival), rounded down;
    /// `link.free_at` when no frame waits.
    started_end: i64,
    queued_bits: u64,
    ps_per_bit: f64,
    max_backlog_bits: f64,
    /// The buffer's size, or `u64::MAX`.
    buffer_bits: u64,
    busy_ns: i64,
    frames: u64,
    discipline: Discipline,
}

/// A frame's transmission on a link: its exact start rounded down and up, its exact end rounded
/// down.
#[derive(Clone, Copy)]
struct Transmission {
    start: i64,
    started: i64,
    end: i64,
}

/// `ns_per_bit` of a link of `rate` bit/s: 10^9 x 2^64 / rate rounded down, a rate that is not a
/// whole number taken as the next one up (shorter, never longer, than the exact time); rates of
/// 2^128 bit/s and more send in no time.
fn ns_per_bit(rate: f64) -> u128 {
    const NS_FIXED: u128 = 1_000_000_000 << 64;
    if rate >= 2f64.powi(128) {
        return 0;
    }
    NS_FIXED / (rate.ceil().max(1.0) as u128)
}

/// An egress port's link.
#[repr(C)]
struct Link {
    /// The end of the last frame scheduled (whole ns and fraction): the link is free from then.
    free_at: i64,
    free_frac: u64,
    /// ns per bit in fixed point (64 fractional bits), rounded down.
    ns_per_bit: u128,
}

impl Link {
    /// Schedules a frame of `wire_bits` on the link at `now` or when the frame before it ends,
    /// whichever is later, exactly.
    #[inline(always)]
    fn transmit(&mut self, now: i64, wire_bits: u32) -> Transmission {
        let (start, frac) =
            if (self.free_at, self.free_frac) > (now, 0) { (self.free_at, self.free_frac) } else { (now, 0) };
        let end = frac as u128 + self.ns_per_bit * wire_bits as u128;
        self.free_at = start.saturating_add((end >> 64) as i64);
        self.free_frac = end as u64;
        Transmission { start, started: start + (frac != 0) as i64, end: self.free_at }
    }
}

/// A flow without a retransmission timeout.
const NO_TIMEOUT: i64 = i64::MAX;

/// A frame's key among those awaited for retransmission.
fn retransmit_key(f: usize, frame: u64) -> u64 {
    debug_assert!(f < 1 << 24 && frame < 1 << 40, "flow {f}, frame {frame}: keys would collide");
    ((f as u64) << 40) | frame
}

/// `Source::last_emit` before the first emission.
const NEVER: i64 = i64::MIN;

/// A flow's source, its application process and its regulator, as each release reads it: one
/// cache line (the rest is in [`SourceCold`]).
#[repr(C, align(64))]
struct Source {
    /// Nominal time between two frames of the flow's contract, ns.
    period_ns: i64,
    /// Last emission by the regulator, or [`NEVER`].
    last_emit: i64,
    next_frame: u64,
    /// Release jitter bound, ns.
    jitter_ns: i64,
    /// The source end system's technological latency, ns.
    source_latency_ns: i64,
    /// Offset of the copies on the second and later planes (drawn once per flow, up to the
    /// sending skew): a constant offset keeps each plane's arrival pattern that of the contract.
    plane_skew_ns: i64,
    /// Frames produced but not yet emitted (held in [`SourceCold::waiting`]).
    waiting: u32,
    /// Smallest and largest frame, whole bytes.
    lmin_bytes: u32,
    lmax_bytes: u32,
    token_bucket: bool,
    regulate_pending: bool,
}

impl Source {
    /// Minimum spacing of emissions (BAG or period), ns; 0 for token buckets (already shaped).
    fn gap_ns(&self) -> i64 {
        if self.token_bucket {
            0
        } else {
            self.period_ns
        }
    }
}

/// What a source's fast path does not read.
#[derive(Default)]
struct SourceCold {
    /// Frames produced but not yet emitted: (production time, frame bits, whether it is a
    /// retransmission).
    waiting: VecDeque<(i64, u32, bool)>,
    retransmissions: u64,
    /// Token-bucket and CBR flows: frames released so far after the first, and when the first
    /// was (the bucket full, the constant rate's origin).
    sent: u64,
    start_ns: i64,
}

/// Frames this many apart share an ARINC 664 sequence number (1 to 255, then 1 again): past
/// it, redundancy management cannot tell a frame's twin from a later frame.
const SEQUENCE_WINDOW: u64 = 255;

/// A frame redundancy management accepted, whose other copies may still arrive.
#[derive(Clone, Copy)]
struct Accepted {
    frame: u64,
    at: i64,
    /// Copies of the frame still to come (on the other planes).
    twins: u32,
}

/// Redundancy management at one (flow, destination). Only a destination reached on several
/// planes receives a frame more than once (a retransmission is a new frame, with its own
/// sequence number), so only there does it keep state: the accepted frames whose twins may
/// still come. A frame is forgotten when its last twin arrives, when SkewMax has passed since it
/// was accepted (a later copy counts as a new frame, as in ARINC 664), or when it falls out of
/// the sequence-number window of the newest frame accepted: at most [`SEQUENCE_WINDOW`]
/// frames, and in practice those of one SkewMax, whatever the run's length. The latencies
/// delivered are in `Simulator::delivered`.
#[derive(Default)]
#[repr(align(64))]
struct Receiver {
    /// Copies of each frame sent to this destination: one per plane reaching it.
    copies: u32,
    /// Oldest first.
    awaiting_twins: VecDeque<Accepted>,
    /// The newest frame accepted.
    newest: u64,
    duplicates: u64,
}

impl Receiver {
    /// Whether a valid copy of `frame` arriving at `at` is a twin of a frame accepted within
    /// `skew_max` (to discard, counted) rather than the first of its frame (to deliver);
    /// `work` counts the entries visited.
    fn is_twin(&mut self, frame: u64, at: i64, skew_max: i64, work: &mut u64) -> bool {
        if self.copies <= 1 {
            return false;
        }
        let newest = self.newest.max(frame);
        *work += self.awaiting_twins.len() as u64;
        self.awaiting_twins.retain(|a| at - a.at <= skew_max && a.frame + SEQUENCE_WINDOW > newest);
        self.newest = newest;
        match self.awaiting_twins.iter().position(|a| a.frame == frame) {
            Some(i) => {
                self.awaiting_twins[i].twins -= 1;
                if self.awaiting_twins[i].twins == 0 {
                    self.awaiting_twins.remove(i);
                }
                self.duplicates += 1;
                true
            }
            None => {
                self.awaiting_twins.push_back(Accepted { frame, at, twins: self.copies - 1 });
                false
            }
        }
    }
}

/// The AFDX sequence number of a VL's frame: 1 to 255, then 1 again (0 is kept for an end
/// system's reset, which the simulator does not model).
pub(super) fn sequence_number(frame: u64) -> u8 {
    (frame % 255 + 1) as u8
}

/// ARINC 664 Part 7 integrity checking of one VL on one plane at one destination: a copy is
/// valid when its sequence number is one or two after the previous copy's (one frame may have
/// been lost), or is the first received; `last` then takes its number, valid or not, so that
/// after a longer gap one copy is discarded and the check takes the stream up again.
pub(super) fn sequence_valid(last: &mut u8, frame: u64) -> bool {
    let next = |s: u8| if s == 255 { 1 } else { s + 1 };
    let sn = sequence_number(frame);
    let valid = *last == 0 || sn == next(*last) || sn == next(next(*last));
    *last = sn;
    valid
}

/// What the hot path reads, copied out of the model into small flat arrays (the model's records
/// are large; reaching into them for each frame costs a cache miss).
struct Hot {
    flow_class: Vec<u16>,
    /// Flows that are virtual links (their copies carry an AFDX sequence number, checked at
    /// the destination).
    flow_is_vl: Vec<bool>,
    /// SkewMax per flow, ns: redundancy management's window.
    flow_skew_max: Vec<i64>,
    port_prop_ns: Vec<i64>,
    port_peer: Vec<u32>,
    node_latency_ns: Vec<i64>,
    node_receive_ns: Vec<i64>,
    node_cut_through: Vec<bool>,
    ifg_bits: u32,
    /// Switches police VLs at their inputs.
    policing: bool,
    /// Per port, the event queue's lane of a delivery after it and of a forwarding switch's
    /// next port, or [`NO_LANE`].
    port_arrive_lane: Vec<u8>,
    port_forward_lane: Vec<u8>,
}

impl Hot {
    fn of(net: &Network) -> Hot {
        let ns = |s: f64| (s * 1e9).round() as i64;
        Hot {
            flow_class: net.flows.iter().map(|f| f.class.map_or(u16::MAX, |k| k as u16)).collect(),
            flow_is_vl: net.flows.iter().map(|f| matches!(f.traffic, Traffic::VirtualLink { .. })).collect(),
            flow_skew_max: net
                .flows
                .iter()
                .map(|f| match &f.traffic {
                    Traffic::VirtualLink { skew_max: Some(s), .. } => ns(s.secs()),
                    _ if net.skew_max > 0.0 => ns(net.skew_max),
                    _ => i64::MAX,
                })
                .collect(),
            port_prop_ns: net.ports.iter().map(|p| ns(p.propagation_delay)).collect(),
            port_peer: net.ports.iter().map(|p| p.peer as u32).collect(),
            node_latency_ns: net.nodes.iter().map(|n| ns(n.technological_latency)).collect(),
            node_receive_ns: net.nodes.iter().map(|n| ns(n.receive_latency)).collect(),
            node_cut_through: net.nodes.iter().map(|n| n.switching == Switching::CutThrough).collect(),
            ifg_bits: net.spec.defaults.interframe_overhead.as_bits() as u32,
            policing: net.spec.defaults.policing_jitter.is_some(),
            port_arrive_lane: Vec::new(),
            port_forward_lane: Vec::new(),
        }
    }
}

/// Nominal time between two frames of a flow's contract, ns.
fn period_ns(traffic: &Traffic) -> i64 {
    match traffic {
        Traffic::VirtualLink { bag, .. } => bag.as_ns(),
        Traffic::Periodic { period, .. } => period.as_ns(),
        Traffic::TokenBucket { max_packet, rate, .. } => {
            (max_packet.bits() / rate.bps() * 1e9).round() as i64
        }
    }
}

/// A flow's smallest and largest frame, bytes.
fn size_range(traffic: &Traffic) -> (f64, f64) {
    match traffic {
        Traffic::VirtualLink { lmin, lmax, .. } => (lmin.bytes(), lmax.bytes()),
        Traffic::Periodic { size, .. } => (size.bytes(), size.bytes()),
        Traffic::TokenBucket { min_packet, max_packet, .. } => (min_packet.bytes(), max_packet.bytes()),
    }
}

/// No lane in the event queue.
const NO_LANE: u8 = u8::MAX;

/// Delays worth a FIFO lane in the event queue: zero (regulators and shapers due now); the most
/// frequent delays from a scheduled port's end of transmission to the copy's next event (a
/// store-and-forward switch's propagation plus technological latency, a destination's
/// propagation), counted over the hops leaving such ports, up to [`MAX_LANES`] in all. (A FIFO
/// port forwards as it schedules, a variable time ahead: its hops need no lane.)
fn lane_delays(hot: &Hot, hops: &[Hop], ports: &[PortSim]) -> Vec<i64> {
    let mut count: BTreeMap<i64, u64> = BTreeMap::new();
    for h in hops.iter().filter(|h| matches!(ports[h.port as usize].discipline, Discipline::Scheduled(_))) {
        let prop = hot.port_prop_ns[h.port as usize];
        let node = hot.port_peer[h.port as usize] as usize;
        if h.deliver != NO_ROUTE {
            *count.entry(prop).or_default() += 1;
        } else if h.n_next > 0 && !hot.node_cut_through[node] {
            *count.entry(prop + hot.node_latency_ns[node]).or_default() += 1;
        }
    }
    count.remove(&0);
    let mut by_count: Vec<(u64, i64)> = count.into_iter().map(|(d, n)| (n, d)).collect();
    by_count.sort_by_key(|&(n, d)| (std::cmp::Reverse(n), d));
    std::iter::once(0).chain(by_count.iter().take(MAX_LANES - 1).map(|&(_, d)| d)).collect()
}

/// A frame a deduplicator holds or remembers: its receiver, flow and frame number, its emission
/// and its first copy's arrival.
#[derive(Clone, Copy)]
struct Held {
    rx: u32,
    flow: u32,
    frame: u64,
    emit: i64,
    first: i64,
}

/// Frames a deduplicator holds or remembers, by key.
type Remembered = HashMap<u64, Held>;

/// The packet simulator; run it with [`Simulator::run_until`] and read [`Simulator::report`].
pub struct Simulator {
    net: Network,
    hot: Hot,
    cfg: SimConfig,
    rng: ChaCha8Rng,
    queue: EventQueue<Ev>,
    now: i64,
    hops: Vec<Hop>,
    /// The routes downstream of hop `h`: `reach[reach_at[h]..reach_at[h + 1]]` (losses at a hop
    /// are losses on each of them).
    reach_at: Vec<u32>,
    reach: Vec<u32>,
    /// Policing at each hop's port input (switch ports fed by a link): (credit bits, last update
    /// ns), with the VL's refill rate and ceiling in [`Simulator::police`].
    accounts: Vec<(f64, i64)>,
    /// (plane index, first hop, number of first hops) per plane a flow is sent on: flow `f`'s
    /// are `starts[starts_at[f]..starts_at[f + 1]]`.
    starts_at: Vec<u32>,
    starts: Vec<(u8, u32, u32)>,
    sources: Vec<Source>,
    sources_cold: Vec<SourceCold>,
    ports: Vec<PortSim>,
    /// Per port: frames dropped at a full buffer, and policed.
    port_drops: Vec<(u64, u64)>,
    copies: Vec<Copy>,
    free_copies: Vec<u32>,
    packets: Vec<Packet>,
    free_packets: Vec<u32>,
    route_stats: Vec<Latency>,
    route_losses: Vec<u64>,
    /// Integrity checking per route (VL, destination, plane): the sequence number of the last
    /// copy received (0 before the first), and the copies discarded.
    route_last_sn: Vec<u8>,
    route_integrity_discards: Vec<u64>,
    /// Route index -> (flow, destination node, plane, receiver index).
    routes: Vec<(u32, u32, u8, u32)>,
    receivers: Vec<Receiver>,
    /// Per receiver: the latencies of the frames delivered after redundancy management.
    delivered: Vec<Latency>,
    /// Retransmission: each flow's timeout (or [`NO_TIMEOUT`]) and receivers; the frames
    /// awaited, with the receivers that have not yet delivered them in time; the frames whose
    /// timeout is pending, by event slot.
    flow_timeout_ns: Vec<i64>,
    flow_receivers: Vec<Vec<u32>>,
    /// Each receiver's destination node.
    receiver_node: Vec<u32>,
    awaited: HashMap<u64, Vec<u32>>,
    timeouts: Vec<u64>,
    free_timeouts: Vec<u32>,
    /// Bloom-filter deduplication per destination node (empty when not asked for).
    dedups: Vec<Option<(Dedup, Remembered)>>,
    /// Arrivals at destinations logged and handled in batches (see [`super::arrivals`]), or
    /// `None` when they are events: with retransmission or deduplication (the destination acts
    /// on the network or on its own timers) and with cut-through switches.
    arrivals: Option<ArrivalLog>,
    batch: Vec<Arrival>,
    expired: Vec<u64>,
    events: u64,
    /// Work done beyond events (entries of per-destination state visited), for tests that
    /// check the cost per frame-hop does not grow with the run.
    work: u64,
    frame_hops: u64,
    packets_created: u64,
    packets_delivered: u64,
    packets_forwarded: u64,
    packets_dropped: u64,
    packets_policed: u64,
    wall_s: f64,
    /// What the run was estimated to need before it started.
    memory: super::memory::Estimate,
    pub trace: Vec<TraceRecord>,
}

/// One frame leaving one egress port, for traces.
#[derive(Clone, Copy, Debug)]
pub struct TraceRecord {
    pub time_ns: i64,
    pub plane: u8,
    pub vl_id: u16,
    pub seq: u8,
    pub node: u16,
    pub port: u16,
    pub frame_bytes: u32,
}

impl Simulator {
    pub fn new(net: &Network, cfg: SimConfig) -> Result<Simulator, String> {
        // A trace records each frame as it starts, in time order: FIFO ports then run as any
        // other scheduler, on events.
        let generic_fifo = cfg.trace_limit > 0;
        Simulator::build(net, cfg, generic_fifo, Some(0))
    }

    /// A simulator whose FIFO ports run the boxed FIFO behaviour on events, as every other
    /// scheduler does (the fast path's reference).
    #[cfg(test)]
    pub(super) fn with_generic_fifo(net: &Network, cfg: SimConfig) -> Result<Simulator, String> {
        Simulator::build(net, cfg, true, Some(0))
    }

    /// A simulator whose arrivals at destinations are events (the arrival log's reference), or
    /// are handled in batches taken every `batch` arrivals logged.
    #[cfg(test)]
    pub(super) fn with_arrivals(
        net: &Network,
        cfg: SimConfig,
        batch: Option<usize>,
    ) -> Result<Simulator, String> {
        Simulator::build(net, cfg, false, batch)
    }

    /// Whether arrivals at destinations are logged rather than events.
    #[cfg(test)]
    pub(super) fn logs_arrivals(&self) -> bool {
        self.arrivals.is_some()
    }

    /// `arrival_batch`: arrivals logged between two batches (0: the engine's choice), `None` for
    /// arrival events.
    fn build(
        net: &Network,
        cfg: SimConfig,
        generic_fifo: bool,
        arrival_batch: Option<usize>,
    ) -> Result<Simulator, String> {
        let load = match cfg.workload {
            Workload::Periodic => 1.0,
            Workload::Cbr { load } | Workload::Poisson { load } | Workload::ParetoBursts { load, .. } => load,
        };
        if !(load > 0.0 && load.is_finite()) {
            return Err(format!("the workload's load must be positive, got {load}"));
        }
        if cfg.retransmit_timeout_ns < 0 {
            return Err("the retransmission timeout must not be negative".into());
        }
        if cfg.frame_sizes == FrameSizes::Trace && cfg.size_trace.is_empty() {
            return Err("frame sizes from a trace need a non-empty size trace".into());
        }
        if let Some(n) = net.nodes.iter().find(|n| n.technological_latency * 1e9 >= i32::MAX as f64) {
            return Err(format!("{}: the simulator takes technological latencies below 2.1 s", n.name));
        }
        let memory = super::memory::check(net, &cfg)?;
        let net = net.clone();
        let mut ports = Vec::with_capacity(net.ports.len());
        for (p, port) in net.ports.iter().enumerate() {
            let discipline = match port.scheduler {
                SchedulerConfig::Fifo if !generic_fifo => Discipline::Fifo { waiting: VecDeque::new() },
                _ => Discipline::Scheduled(Scheduled {
                    behaviour: schedulers::behaviour(&port.scheduler, &net.classes, &net.spec.schedulers)
                        .map_err(|e| format!("{}: {e}", net.port_label(p)))?,
                    busy: false,
                    current: 0,
                    tx_end: 0,
                    wake_at: NO_WAKE,
                }),
            };
            ports.push(PortSim {
                link: Link { free_at: 0, free_frac: 0, ns_per_bit: ns_per_bit(port.rate) },
                started_end: 0,
                queued_bits: 0,
                ps_per_bit: 1e12 / port.rate,
                max_backlog_bits: 0.0,
                buffer_bits: port.buffer.map_or(u64::MAX, |b| b.round() as u64),
                busy_ns: 0,
                frames: 0,
                discipline,
            });
        }

        // Crossings: one per (flow, port), linked along each flow's multicast trees.
        let mut crossings: Vec<Crossing> = Vec::new();
        let mut sources_of = Vec::with_capacity(net.flows.len());
        let mut routes = Vec::new();
        let mut receivers: Vec<Receiver> = Vec::new();
        let mut receiver_of: HashMap<(usize, usize), u32> = HashMap::new();
        for (f, flow) in net.flows.iter().enumerate() {
            let mut seen: Vec<(usize, u32)> = Vec::new();
            let mut starts: Vec<(u8, Vec<u32>)> = Vec::new();
            for r in &flow.routes {
                let route_id = routes.len() as u32;
                let rx = *receiver_of.entry((f, r.destination)).or_insert_with(|| {
                    receivers.push(Receiver::default());
                    receivers.len() as u32 - 1
                });
                routes.push((f as u32, r.destination as u32, r.plane as u8, rx));
                let mut up: Option<u32> = None;
                for (k, &p) in r.ports.iter().enumerate() {
                    let c = match seen.iter().find(|(q, _)| *q == p) {
                        Some(&(_, c)) => c,
                        None => {
                            crossings.push(Crossing {
                                port: p as u32,
                                next: Vec::new(),
                                deliver: None,
                                reach: Vec::new(),
                            });
                            let c = crossings.len() as u32 - 1;
                            seen.push((p, c));
                            match up {
                                Some(u) => crossings[u as usize].next.push(c),
                                None => match starts.iter_mut().find(|(pl, _)| *pl == r.plane as u8) {
                                    Some((_, v)) => v.push(c),
                                    None => starts.push((r.plane as u8, vec![c])),
                                },
                            }
                            c
                        }
                    };
                    crossings[c as usize].reach.push(route_id);
                    if k + 1 == r.ports.len() {
                        crossings[c as usize].deliver = Some(route_id);
                    }
                    up = Some(c);
                }
            }
            sources_of.push(starts);
        }
        let mut hot = Hot::of(&net);
        let sources: Vec<Source> = net
            .flows
            .iter()
            .map(|flow| {
                let (lo, hi) = size_range(&flow.traffic);
                Source {
                    period_ns: period_ns(&flow.traffic),
                    last_emit: NEVER,
                    next_frame: 0,
                    jitter_ns: match &flow.traffic {
                        Traffic::VirtualLink { release_jitter, .. } => release_jitter.as_ns(),
                        Traffic::Periodic { jitter, .. } => jitter.as_ns(),
                        Traffic::TokenBucket { .. } => 0,
                    },
                    source_latency_ns: hot.node_latency_ns[flow.source],
                    plane_skew_ns: 0,
                    waiting: 0,
                    lmin_bytes: lo.round() as u32,
                    lmax_bytes: hi.round() as u32,
                    token_bucket: matches!(flow.traffic, Traffic::TokenBucket { .. }),
                    regulate_pending: false,
                }
            })
            .collect();
        let n_routes = routes.len();
        let (mut hops, reach_at, reach, sources_of) = lay_out(&crossings, &sources_of);
        for h in hops.iter_mut().filter(|h| h.deliver != NO_ROUTE) {
            debug_assert_eq!(h.n_next, 0, "a destination forwards nothing");
            h.first_next = routes[h.deliver as usize].3;
        }
        let mut starts_at = vec![0];
        for s in &sources_of {
            starts_at.push(starts_at.last().unwrap() + s.len() as u32);
        }
        let starts = sources_of.concat();
        let delays = lane_delays(&hot, &hops, &ports);
        let lane_of = |d: i64| delays.iter().position(|&x| x == d).map_or(NO_LANE, |l| l as u8);
        for p in 0..net.ports.len() {
            let node = hot.port_peer[p] as usize;
            let prop = hot.port_prop_ns[p];
            hot.port_arrive_lane.push(lane_of(prop));
            hot.port_forward_lane.push(if hot.node_cut_through[node] {
                NO_LANE
            } else {
                lane_of(prop + hot.node_latency_ns[node])
            });
        }
        // A flow's retransmission timeout: the one asked for, else its deadline.
        let flow_timeout_ns: Vec<i64> = net
            .flows
            .iter()
            .map(|flow| match (cfg.retransmit_timeout_ns, flow.deadline) {
                (t, _) if t > 0 => t,
                (_, Some(d)) => (d * 1e9).round() as i64,
                _ => NO_TIMEOUT,
            })
            .collect();
        let mut flow_receivers: Vec<Vec<u32>> = vec![Vec::new(); net.flows.len()];
        let mut receiver_node = vec![0; receivers.len()];
        for &(f, destination, _, rx) in &routes {
            receivers[rx as usize].copies += 1;
            receiver_node[rx as usize] = destination;
            if !flow_receivers[f as usize].contains(&rx) {
                flow_receivers[f as usize].push(rx);
            }
        }
        let arrivals = arrival_batch
            .filter(|_| cfg.dedup.is_none() && !cfg.retransmit && !hot.node_cut_through.iter().any(|&c| c))
            .map(|batch| {
                ArrivalLog::new(
                    net.nodes.len(),
                    routes.iter().map(|&(_, destination, _, _)| destination),
                    batch,
                )
            });
        let mut sim = Simulator {
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            cfg,
            queue: EventQueue::new(&delays),
            now: 0,
            accounts: vec![(f64::INFINITY, 0); hops.len()],
            hops,
            reach_at,
            reach,
            starts_at,
            starts,
            sources_cold: (0..sources.len()).map(|_| SourceCold::default()).collect(),
            sources,
            port_drops: vec![(0, 0); ports.len()],
            ports,
            copies: Vec::new(),
            free_copies: Vec::new(),
            packets: Vec::new(),
            free_packets: Vec::new(),
            route_stats: vec![Latency::default(); n_routes],
            route_losses: vec![0; n_routes],
            route_last_sn: vec![0; n_routes],
            route_integrity_discards: vec![0; n_routes],
            routes,
            delivered: (0..receivers.len()).map(|_| Latency::default()).collect(),
            receivers,
            flow_timeout_ns,
            flow_receivers,
            receiver_node,
            awaited: HashMap::new(),
            timeouts: Vec::new(),
            free_timeouts: Vec::new(),
            dedups: Vec::new(),
            arrivals,
            batch: Vec::new(),
            expired: Vec::new(),
            events: 0,
            work: 0,
            frame_hops: 0,
            packets_created: 0,
            packets_delivered: 0,
            packets_forwarded: 0,
            packets_dropped: 0,
            packets_policed: 0,
            wall_s: 0.0,
            memory,
            trace: Vec::new(),
            hot,
            net,
        };
        sim.dedups = sim.build_dedups()?;
        for f in 0..sim.net.flows.len() {
            let start = sim.first_release(f);
            sim.sources_cold[f].start_ns = start;
            let skew_ns = (sim.net.sending_skew * 1e9).round() as i64;
            if sim.cfg.release == Release::Random && skew_ns > 0 {
                sim.sources[f].plane_skew_ns = sim.rng.gen_range(0..=skew_ns);
            }
            sim.push(start, Ev::Release { flow: f as u32 });
        }
        Ok(sim)
    }

    /// One deduplicator per destination end system, when asked for.
    fn build_dedups(&self) -> Result<Vec<Option<(Dedup, Remembered)>>, String> {
        let Some(settings) = self.cfg.dedup else { return Ok(Vec::new()) };
        let destinations: HashSet<u32> = self.routes.iter().map(|r| r.1).collect();
        let hashes =
            if settings.hashes > 0 { settings.hashes } else { dedup::optimal_q(settings.counters, 128) };
        let skew = |s: f64| if s.is_finite() { (s * 1e9).round() as u64 } else { u64::MAX / 4 };
        (0..self.net.nodes.len())
            .map(|n| {
                if !destinations.contains(&(n as u32)) {
                    return Ok(None);
                }
                let config = DedupConfig {
                    counters: settings.counters,
                    hashes,
                    seed: self.cfg.seed ^ n as u64,
                    skew_max_ns: skew(if self.net.skew_max > 0.0 {
                        self.net.skew_max
                    } else {
                        f64::INFINITY
                    }),
                    mode: match settings.mode {
                        DedupMode::FirstCopy => DeliveryMode::FirstCopy,
                        DedupMode::HoldUntilTwin => DeliveryMode::HoldUntilTwin,
                    },
                };
                let mut d = Dedup::new(&config).map_err(|e| format!("dedup: {e}"))?;
                for f in 0..self.net.flows.len() {
                    let skew_max = match &self.net.flows[f].traffic {
                        Traffic::VirtualLink { skew_max: Some(s), .. } => skew(s.secs()),
                        _ => config.skew_max_ns,
                    };
                    // A key is kept no longer than the sequence-number window lasts (a network
                    // without SkewMax would otherwise keep every frame whose twin was lost).
                    // (Rounded down to a power of two: few distinct SkewMax classes to merge.)
                    let window = SEQUENCE_WINDOW.saturating_mul(self.sources[f].period_ns.max(1) as u64);
                    d.set_vl_skew_max(f as u16, skew_max.min(1 << window.ilog2()));
                }
                Ok(Some((d, HashMap::new())))
            })
            .collect()
    }

    fn push(&mut self, time: i64, ev: Ev) {
        let kind = if matches!(ev, Ev::Release { .. }) { Kind::Release } else { Kind::Other };
        self.queue.push(self.now, time, ev, kind);
    }

    /// Pushes an event due `lane`'s delay from now.
    fn push_lane(&mut self, lane: u8, time: i64, ev: Ev) {
        self.queue.push(self.now, time, ev, Kind::Lane(lane));
    }

    /// Plane names, in plane order.
    pub fn plane_names(&self) -> Vec<String> {
        self.net.planes.clone()
    }

    /// Deterministic work units so far: events plus the entries of per-destination state visited
    /// (a measure of cost that no machine's speed affects).
    pub fn work_units(&self) -> u64 {
        self.events + self.work
    }

    /// Entries held in every structure of the engine that could grow with the run:
    /// per-destination state, frames awaited for retransmission, packets and copies (the pools'
    /// peak), frames waiting in FIFO ports, arrivals logged, trace records. (Not the frames the
    /// applications produced that wait in their regulators: the workload's own backlog.)
    pub fn retained_entries(&self) -> usize {
        let ports: usize = self
            .ports
            .iter()
            .map(|p| match &p.discipline {
                Discipline::Fifo { waiting } => waiting.len(),
                Discipline::Scheduled(_) => 0,
            })
            .sum();
        let dedup: usize = self.dedups.iter().flatten().map(|(d, known)| d.live_keys() + known.len()).sum();
        self.receivers.iter().map(|r| r.awaiting_twins.len()).sum::<usize>()
            + dedup
            + self.awaited.len()
            + self.timeouts.len()
            + self.packets.len()
            + self.copies.len()
            + ports
            + self.arrivals.as_ref().map_or(0, |l| l.held())
            + self.trace.len()
    }

    /// The memory the run was estimated to need (see [`super::memory`]).
    pub fn memory_estimate(&self) -> &super::memory::Estimate {
        &self.memory
    }

    /// Frame-hops so far (frames scheduled on an egress port).
    pub fn frame_hops(&self) -> u64 {
        self.frame_hops
    }

    /// Simulated time reached so far, ns.
    pub fn now_ns(&self) -> i64 {
        self.now
    }

    /// Processes every event up to `until_ns` (inclusive). Can be called repeatedly, so a caller
    /// can show progress or stop between slices.
    pub fn run_until(&mut self, until_ns: i64) {
        let wall = std::time::Instant::now();
        let end = until_ns.min(self.cfg.duration_ns);
        while let Some(e) = self.queue.pop_due(end) {
            self.now = e.time;
            self.events += 1;
            match e.ev {
                Ev::Release { flow } => {
                    self.release(flow as usize);
                    self.prefetch_releases();
                }
                Ev::Regulate { flow } => self.regulate(flow as usize),
                Ev::Enqueue { packet } => self.enqueue(packet),
                Ev::TxEnd { port } => self.tx_end(port as usize),
                Ev::Arrive { packet } => self.arrive(packet),
                Ev::Timeout { slot } => self.timeout(slot),
                Ev::Wake { port } => {
                    if let Discipline::Scheduled(s) = &mut self.ports[port as usize].discipline {
                        s.wake_at = NO_WAKE;
                    }
                    self.try_start(port as usize);
                }
            }
        }
        self.deliver_logged(end);
        self.now = self.now.max(end);
        self.wall_s += wall.elapsed().as_secs_f64();
    }

    /// Ends the run: frames that deduplication still holds are delivered at their SkewMax expiry
    /// (as the receiver would), so no accepted frame goes unreported.
    pub fn finish(&mut self) {
        for n in 0..self.dedups.len() {
            self.expire_held(n, i64::MAX / 2);
        }
    }

    // ---- sources --------------------------------------------------------------------------

    fn first_release(&mut self, f: usize) -> i64 {
        let period = self.sources[f].period_ns;
        match self.cfg.release {
            Release::Synchronized => 0,
            Release::Random => match self.net.flows[f].traffic {
                Traffic::Periodic { offset, .. } => offset.as_ns(),
                _ if period > 0 => self.rng.gen_range(0..period),
                _ => 0,
            },
        }
    }

    /// The size of the flow's next frame, bits.
    fn frame_bits(&mut self, f: usize) -> u32 {
        let src = &self.sources[f];
        let bytes = match self.cfg.frame_sizes {
            FrameSizes::Max => src.lmax_bytes,
            FrameSizes::Min => src.lmin_bytes,
            FrameSizes::Uniform => self.rng.gen_range(src.lmin_bytes..=src.lmax_bytes),
            FrameSizes::Trace => {
                let (lo, hi) = size_range(&self.net.flows[f].traffic);
                let trace = &self.cfg.size_trace;
                let k = (f as u64 * 7919 + src.next_frame) as usize % trace.len().max(1);
                trace.get(k).map_or(hi, |&b| (b as f64).clamp(lo, hi)).round() as u32
            }
        };
        bytes * 8
    }

    /// A frame produced by the application joins the regulator's queue.
    fn produce(&mut self, f: usize, now: i64, bits: u32, retransmission: bool) {
        self.sources_cold[f].waiting.push_back((now, bits, retransmission));
        self.sources[f].waiting += 1;
    }

    /// The application produces frame(s); the next release is scheduled.
    fn release(&mut self, f: usize) {
        let now = self.now;
        let src = &self.sources[f];
        let period = src.period_ns.max(1);
        if !src.token_bucket && matches!(self.cfg.workload, Workload::Periodic) {
            // One frame per period: with nothing queued and the gap passed, the regulator emits
            // it at once, as `regulate` would after queueing it.
            let bits = self.frame_bits(f);
            self.push(now + period, Ev::Release { flow: f as u32 });
            let src = &mut self.sources[f];
            if src.waiting == 0 && (src.last_emit == NEVER || now >= src.last_emit + src.gap_ns()) {
                src.regulate_pending = false;
                src.last_emit = now;
                self.emit(f, bits, now, false);
            } else {
                self.produce(f, now, bits, false);
                self.wake_regulator(f);
            }
            return;
        }
        let bucket = match &self.net.flows[f].traffic {
            Traffic::TokenBucket { burst, rate, max_packet, .. } => {
                Some((burst.bits(), rate.bps(), max_packet.bits()))
            }
            _ => None,
        };
        let next = match (bucket, self.cfg.workload) {
            (Some((burst, rate, max_packet)), _) => {
                // Greedy: frame k goes when the bucket (full at the start) holds it.
                let bits = self.frame_bits(f);
                self.produce(f, now, bits, false);
                // Frame k (from 0) may go once (k + 1) largest packets fit in b + r·t.
                let cold = &mut self.sources_cold[f];
                let k = cold.sent + 1;
                cold.sent = k;
                let due = ((k + 1) as f64 * max_packet - burst) / rate;
                cold.start_ns + (due.max(0.0) * 1e9).ceil() as i64
            }
            (_, Workload::Periodic) => {
                let bits = self.frame_bits(f);
                self.produce(f, now, bits, false);
                now + period
            }
            (_, Workload::Cbr { load }) => {
                // Release k at start + k·period/load, rounded to the ns: no drift over a long run.
                let bits = self.frame_bits(f);
                self.produce(f, now, bits, false);
                let cold = &mut self.sources_cold[f];
                cold.sent += 1;
                cold.start_ns + (cold.sent as f64 * period as f64 / load).round() as i64
            }
            (_, Workload::Poisson { load }) => {
                let bits = self.frame_bits(f);
                self.produce(f, now, bits, false);
                now + self.exponential(period as f64 / load)
            }
            (_, Workload::ParetoBursts { load, alpha, mean_frames }) => {
                // Pareto with minimum x_m has mean alpha x_m / (alpha - 1).
                let xm = mean_frames * (alpha - 1.0) / alpha;
                let u: f64 = self.rng.gen_range(f64::EPSILON..1.0);
                let n = (xm / u.powf(1.0 / alpha)).round().clamp(1.0, 1e4) as usize;
                for _ in 0..n {
                    let bits = self.frame_bits(f);
                    self.produce(f, now, bits, false);
                }
                now + self.exponential(period as f64 * mean_frames / load)
            }
        };
        self.push(next, Ev::Release { flow: f as u32 });
        self.wake_regulator(f);
    }

    /// A frame joined the regulator's queue: the regulator looks at it now, unless it already
    /// waits for the gap to pass (one pending event per flow, however many frames wait: an
    /// event per frame produced would pile up while a burst drains).
    fn wake_regulator(&mut self, f: usize) {
        if !self.sources[f].regulate_pending {
            self.regulate(f);
        }
    }

    fn exponential(&mut self, mean: f64) -> i64 {
        let u: f64 = self.rng.gen_range(f64::EPSILON..1.0);
        (-mean * u.ln()).round().max(1.0) as i64
    }

    /// The VL regulator: emits the oldest waiting frame once the gap since the last emission
    /// has passed (BAG shaping); release jitter then delays the emission within its bound.
    fn regulate(&mut self, f: usize) {
        let now = self.now;
        let src = &mut self.sources[f];
        src.regulate_pending = false;
        if src.waiting == 0 {
            return;
        }
        let gap = src.gap_ns();
        if src.last_emit != NEVER && now < src.last_emit + gap {
            let at = src.last_emit + gap;
            src.regulate_pending = true;
            self.push(at, Ev::Regulate { flow: f as u32 });
            return;
        }
        let (_, bits, retransmission) = self.sources_cold[f].waiting.pop_front().expect("counted");
        src.waiting -= 1;
        src.last_emit = now;
        let more = src.waiting > 0;
        self.emit(f, bits, now, retransmission);
        if more && !self.sources[f].regulate_pending {
            let at = now + gap;
            self.sources[f].regulate_pending = true;
            self.push(at, Ev::Regulate { flow: f as u32 });
        }
    }

    /// Sends one frame: one copy per plane, each entering its source port after the plane skew,
    /// the release jitter and the end system's technological latency.
    fn emit(&mut self, f: usize, frame_bits: u32, emit_ns: i64, retransmission: bool) {
        let src = &mut self.sources[f];
        let (jitter_ns, plane_skew, source_latency) =
            (src.jitter_ns, src.plane_skew_ns, src.source_latency_ns);
        let frame_no = src.next_frame;
        src.next_frame += 1;
        if self.cfg.retransmit && !retransmission {
            self.await_delivery(f, frame_no, emit_ns);
        }
        let synchronized = self.cfg.release == Release::Synchronized;
        let jitter = if synchronized || jitter_ns == 0 { 0 } else { self.rng.gen_range(0..=jitter_ns) };
        let ifg = self.hot.ifg_bits;
        for k in self.starts_at[f]..self.starts_at[f + 1] {
            let (plane, first, n) = self.starts[k as usize];
            let k = k - self.starts_at[f];
            let skew = if k == 0 { 0 } else { plane_skew };
            let start = emit_ns + jitter + skew;
            let copy = self.new_copy(Copy {
                flow: f as u32,
                frame: frame_no,
                seq: sequence_number(frame_no) as u32,
                emit_ns,
                start_ns: start,
                frame_bits,
                wire_bits: frame_bits + ifg,
                plane,
                refs: 0,
            });
            for c in first..first + n {
                let p = self.new_packet(copy, c);
                if start + source_latency == self.now {
                    // Due now: no need to go through the event queue.
                    self.enqueue(p);
                } else {
                    self.push(start + source_latency, Ev::Enqueue { packet: p });
                }
            }
        }
    }

    fn new_copy(&mut self, c: Copy) -> u32 {
        match self.free_copies.pop() {
            Some(i) => {
                self.copies[i as usize] = c;
                i
            }
            None => {
                self.copies.push(c);
                self.copies.len() as u32 - 1
            }
        }
    }

    fn new_packet(&mut self, copy: u32, crossing: u32) -> u32 {
        self.packets_created += 1;
        let c = &mut self.copies[copy as usize];
        c.refs += 1;
        let wire_bits = c.wire_bits;
        let p = Packet { copy, crossing, hop: self.hops[crossing as usize], wire_bits, lag_ns: FROM_SOURCE };
        match self.free_packets.pop() {
            Some(i) => {
                self.packets[i as usize] = p;
                i
            }
            None => {
                self.packets.push(p);
                self.packets.len() as u32 - 1
            }
        }
    }

    fn free_packet(&mut self, packet: u32) {
        let copy = self.packets[packet as usize].copy;
        self.free_packets.push(packet);
        let c = &mut self.copies[copy as usize];
        c.refs -= 1;
        if c.refs == 0 {
            self.free_copies.push(copy);
        }
    }

    // ---- ports ----------------------------------------------------------------------------

    /// A packet enters its port's queue (after policing, at a switch's input).
    fn enqueue(&mut self, packet: u32) {
        let Packet { copy, crossing, hop, wire_bits: wire, lag_ns } = self.packets[packet as usize];
        if lag_ns != FROM_SOURCE
            && self.hot.policing
            && !self.police(crossing, copy, self.now - lag_ns as i64)
        {
            self.free_packet(packet);
            return;
        }
        let port = hop.port as usize;
        let now = self.now;
        let ps = &mut self.ports[port];
        if ps.link.free_at > ps.started_end {
            if let Discipline::Fifo { waiting } = &mut ps.discipline {
                // Frames due to start by now have left the queue for the wire.
                while let Some(w) = waiting.front().filter(|w| w.started <= now) {
                    ps.queued_bits -= w.wire_bits as u64;
                    ps.started_end = w.end;
                    waiting.pop_front();
                }
            }
        }
        if ps.queued_bits + wire as u64 > ps.buffer_bits {
            self.port_drops[port].0 += 1;
            self.packets_dropped += 1;
            self.count_loss(crossing);
            self.free_packet(packet);
            return;
        }
        ps.queued_bits += wire as u64;
        let sending_until = match &ps.discipline {
            Discipline::Fifo { .. } => ps.started_end,
            Discipline::Scheduled(s) if s.busy => s.tx_end,
            Discipline::Scheduled(_) => now,
        };
        let in_flight =
            if sending_until > now { (sending_until - now) as f64 * 1e3 / ps.ps_per_bit } else { 0.0 };
        ps.max_backlog_bits = ps.max_backlog_bits.max(ps.queued_bits as f64 + in_flight);
        match &mut ps.discipline {
            Discipline::Fifo { waiting } => {
                let Transmission { start, started, end } = ps.link.transmit(now, wire);
                let tx_ns = end - start;
                if started > now {
                    waiting.push_back(Waiting { started, end, tx_ns, wire_bits: wire });
                } else {
                    ps.queued_bits -= wire as u64;
                    ps.started_end = end;
                }
                ps.busy_ns += tx_ns;
                ps.frames += 1;
                self.frame_hops += 1;
                self.depart(packet, port, end);
            }
            Discipline::Scheduled(s) => {
                let c = &self.copies[copy as usize];
                let class = self.hot.flow_class[c.flow as usize];
                let frame_bits = c.frame_bits;
                s.behaviour.enqueue(Queued { frame: packet, class, wire_bits: wire, frame_bits }, now);
                if !s.busy {
                    self.try_start(port);
                }
            }
        }
    }

    /// A scheduled (non-FIFO) port that is idle starts its scheduler's next frame, or waits for
    /// its shaper.
    fn try_start(&mut self, port: usize) {
        let now = self.now;
        let ps = &mut self.ports[port];
        let Discipline::Scheduled(s) = &mut ps.discipline else {
            unreachable!("FIFO ports schedule frames as they arrive")
        };
        if s.busy {
            return;
        }
        match s.behaviour.dequeue(now) {
            Some(Queued { frame: packet, wire_bits, .. }) => {
                s.busy = true;
                s.current = packet;
                ps.queued_bits -= wire_bits as u64;
                // Started at a frame's end rounded down, the next frame starts at its exact end.
                let Transmission { start, end, .. } = ps.link.transmit(now, wire_bits);
                s.tx_end = end;
                ps.busy_ns += end - start;
                ps.frames += 1;
                self.frame_hops += 1;
                let tx_end = s.tx_end;
                if self.trace.len() < self.cfg.trace_limit {
                    self.record_trace(port, packet, now);
                }
                self.push(tx_end, Ev::TxEnd { port: port as u32 });
                self.prefetch_counts(packet, port, tx_end);
            }
            None => {
                if let Some(t) = s.behaviour.next_ready(now) {
                    if t < s.wake_at {
                        s.wake_at = t;
                        self.push(t.max(now), Ev::Wake { port: port as u32 });
                    }
                }
            }
        }
    }

    /// The next releases' records, fetched in stages while other events run (each stage reads
    /// what the previous release's fetched): for the fourth next release where its planes are
    /// listed, for the third its planes, for the second its source and first hops, for the next
    /// the ports of those hops.
    fn prefetch_releases(&mut self) {
        let mut next = [u32::MAX; 4];
        for (k, flow) in next.iter_mut().enumerate() {
            match self.queue.peek_release(k) {
                Some(Ev::Release { flow: f }) => *flow = f,
                _ => break,
            }
        }
        let [first, second, third, fourth] = next.map(|f| f as usize);
        if let Some(at) = self.starts_at.get(fourth) {
            prefetch(at);
        }
        if let Some(&k) = self.starts_at.get(third) {
            prefetch(&self.starts[k as usize]);
        }
        if let Some(&k) = self.starts_at.get(second) {
            prefetch(&self.sources[second]);
            for &(_, hop, _) in &self.starts[k as usize..self.starts_at[second + 1] as usize] {
                prefetch(&self.hops[hop as usize]);
            }
        }
        if let Some(&k) = self.starts_at.get(first) {
            for &(_, hop, n) in &self.starts[k as usize..self.starts_at[first + 1] as usize] {
                for h in &self.hops[hop as usize..(hop + n) as usize] {
                    self.prefetch_port(h.port as usize);
                }
            }
        }
    }

    /// Both cache lines of an egress port, ahead of a frame's arrival there.
    fn prefetch_port(&self, port: usize) {
        let p: *const PortSim = &self.ports[port];
        prefetch(p);
        prefetch((p as *const u8).wrapping_add(64));
    }

    /// A copy heads for its last port: its destination's records will be needed on arrival and
    /// are fetched while other events run.
    fn prefetch_destination(&self, hop: Hop, copy: u32) {
        let (route, rx) = (hop.deliver as usize, hop.first_next as usize);
        prefetch(&self.route_stats[route]);
        prefetch(&self.delivered[rx]);
        prefetch(&self.receivers[rx]);
        prefetch(&self.hot.flow_skew_max[self.copies[copy as usize].flow as usize]);
    }

    /// A copy starts on a link: what its end of transmission will read is fetched while other
    /// events run: the next hops, or on its last link the histogram counts its arrival will
    /// increment (the latencies are known now).
    fn prefetch_counts(&self, packet: u32, port: usize, tx_end: i64) {
        let Packet { copy, hop, .. } = self.packets[packet as usize];
        if hop.deliver == NO_ROUTE {
            if hop.n_next > 0 {
                let next: *const Hop = &self.hops[hop.first_next as usize];
                prefetch(next);
                prefetch(next.wrapping_add(hop.n_next as usize - 1));
            }
            return;
        }
        if self.arrivals.is_some() {
            // A logged arrival: its batch fetches its own records.
            return;
        }
        let node = self.hot.port_peer[port] as usize;
        let at = tx_end + self.hot.port_prop_ns[port] + self.hot.node_receive_ns[node];
        let c = &self.copies[copy as usize];
        self.route_stats[hop.deliver as usize].prefetch_record(at - c.start_ns);
        self.delivered[hop.first_next as usize].prefetch_record(at - c.emit_ns);
    }

    fn record_trace(&mut self, port: usize, packet: u32, now: i64) {
        let c = &self.copies[self.packets[packet as usize].copy as usize];
        let flow = &self.net.flows[c.flow as usize];
        let vl_id = match &flow.traffic {
            Traffic::VirtualLink { id: Some(id), .. } => *id as u16,
            _ => c.flow as u16,
        };
        let p = &self.net.ports[port];
        let port_index = self.net.nodes[p.node].ports.iter().position(|&q| q == port).unwrap_or(0);
        self.trace.push(TraceRecord {
            time_ns: now,
            plane: c.plane,
            vl_id,
            seq: c.seq as u8,
            node: p.node as u16,
            port: port_index as u16,
            frame_bytes: c.frame_bits / 8,
        });
    }

    /// A scheduled port's frame has left: the port sends its next one.
    fn tx_end(&mut self, port: usize) {
        let Discipline::Scheduled(s) = &mut self.ports[port].discipline else {
            unreachable!("only scheduled ports end transmissions by events")
        };
        s.busy = false;
        let packet = s.current;
        self.depart(packet, port, self.now);
        self.try_start(port);
    }

    /// The packet's last bit leaves `port` at `end`. A switch downstream gets the copy after
    /// propagation and its technological latency (one event: straight to the next port's queue);
    /// a destination's arrival is logged for a batch (see [`super::arrivals`]), or with
    /// retransmission, deduplication or cut-through switches is an event, so that redundancy
    /// management sees copies in arrival order either way.
    fn depart(&mut self, packet: u32, port: usize, end: i64) {
        let prop = self.hot.port_prop_ns[port];
        let Packet { copy, crossing, hop, .. } = self.packets[packet as usize];
        if hop.deliver != NO_ROUTE && self.arrivals.is_some() {
            let arrival = self.arrival(packet, end + prop);
            let batch_due = self.arrivals.as_mut().is_some_and(|log| log.log(arrival));
            self.free_packet(packet);
            if batch_due {
                self.deliver_logged(self.now);
            }
        } else if hop.deliver != NO_ROUTE {
            self.push_lane(self.hot.port_arrive_lane[port], end + prop, Ev::Arrive { packet });
            if self.now < end {
                // A FIFO port's frame, ahead of its end (a scheduled port's fetched at its start).
                self.prefetch_counts(packet, port, end);
            }
        } else {
            self.forward(packet, copy, crossing, hop, end + prop);
        }
    }

    // ---- nodes ----------------------------------------------------------------------------

    /// A switch receives the packet's last bit at `at` and queues a copy at each next port.
    fn forward(&mut self, packet: u32, copy: u32, crossing: u32, hop: Hop, at: i64) {
        self.packets_forwarded += 1;
        let node = self.hot.port_peer[hop.port as usize] as usize;
        debug_assert_eq!(self.net.nodes[node].kind, NodeKind::Switch);
        let latency = self.hot.node_latency_ns[node];
        let cut_through = self.hot.node_cut_through[node];
        let lane = self.hot.port_forward_lane[hop.port as usize];
        for d in hop.first_next..hop.first_next + hop.n_next {
            let p = self.new_packet(copy, d);
            let next = self.packets[p as usize].hop;
            if next.deliver != NO_ROUTE {
                if self.arrivals.is_none() {
                    self.prefetch_destination(next, copy);
                }
            } else if next.n_next > 0 {
                // Read when the next port schedules the packet (and forwards it at once).
                prefetch(&self.hops[next.first_next as usize]);
            }
            self.prefetch_port(next.port as usize);
            let mut lag = latency;
            if cut_through {
                lag -= self.cut_through_gain(crossing as usize, d as usize, copy);
            }
            // Latencies fit (checked when the simulator is built), and a gain is at most one
            // frame's transmission.
            self.packets[p as usize].lag_ns = lag.clamp(FROM_SOURCE as i64 + 1, i32::MAX as i64) as i32;
            self.push_lane(lane, at + lag, Ev::Enqueue { packet: p });
        }
        self.free_packet(packet);
    }

    /// ARINC 664 account-based policing of a VL frame whose last bit reached a switch at `at`,
    /// as it enters the queue of crossing `d` (when `defaults.policing_jitter` is set): the
    /// account refills at Lmax per BAG up to Lmax·(1 + J/BAG); a frame needs credit for its size,
    /// else it is dropped and counted.
    fn police(&mut self, d: u32, copy: u32, at: i64) -> bool {
        let Some(jitter) = self.net.spec.defaults.policing_jitter else { return true };
        let c = &self.copies[copy as usize];
        let Traffic::VirtualLink { bag, lmax, .. } = &self.net.flows[c.flow as usize].traffic else {
            return true;
        };
        let (lmax, bag) = (lmax.bits(), bag.secs());
        let ceiling = lmax * (1.0 + jitter.secs() / bag);
        let (credit, last) = self.accounts[d as usize];
        let credit = if credit.is_infinite() {
            ceiling
        } else {
            (credit + lmax * (at - last) as f64 / (bag * 1e9)).min(ceiling)
        };
        if credit + 1e-6 < c.frame_bits as f64 {
            self.accounts[d as usize] = (credit, at);
            self.packets_policed += 1;
            let port = self.hops[d as usize].port as usize;
            self.port_drops[port].1 += 1;
            self.count_loss(d);
            return false;
        }
        self.accounts[d as usize] = (credit - c.frame_bits as f64, at);
        true
    }

    /// A copy lost at hop `h` is lost on every route downstream.
    fn count_loss(&mut self, h: u32) {
        let (a, b) = (self.reach_at[h as usize] as usize, self.reach_at[h as usize + 1] as usize);
        for &r in &self.reach[a..b] {
            self.route_losses[r as usize] += 1;
        }
    }

    /// The last bit of a packet reaches its destination end system.
    fn arrive(&mut self, packet: u32) {
        let arrival = self.arrival(packet, self.now);
        self.deliver(&arrival);
        self.packets_delivered += 1;
        self.free_packet(packet);
    }

    /// The arrival at `time` of a packet crossing its last port, with what its destination needs.
    fn arrival(&self, packet: u32, time: i64) -> Arrival {
        let Packet { copy, hop, .. } = self.packets[packet as usize];
        debug_assert_ne!(hop.deliver, NO_ROUTE, "arrivals are at destinations");
        let c = &self.copies[copy as usize];
        Arrival {
            time,
            seq: 0,
            frame: c.frame,
            start_ns: c.start_ns,
            emit_ns: c.emit_ns,
            route: hop.deliver,
            rx: hop.first_next,
            flow: c.flow,
            node: self.hot.port_peer[hop.port as usize],
        }
    }

    /// Handles the logged arrivals due by `horizon`, each destination's in time order, fetching
    /// each one's records [`AHEAD`] arrivals before it is handled.
    fn deliver_logged(&mut self, horizon: i64) {
        let Some(log) = self.arrivals.as_mut() else { return };
        let mut batch = std::mem::take(&mut self.batch);
        log.take_due(horizon, &mut batch);
        for i in 0..batch.len() {
            if let Some(a) = batch.get(i + AHEAD) {
                prefetch(&self.route_stats[a.route as usize]);
                prefetch(&self.delivered[a.rx as usize]);
                prefetch(&self.receivers[a.rx as usize]);
            }
            if let Some(a) = batch.get(i + AHEAD / 2) {
                // Their records are in by now: the histogram counts the arrival will increment.
                let at = a.time + self.hot.node_receive_ns[a.node as usize];
                self.route_stats[a.route as usize].prefetch_record(at - a.start_ns);
                self.delivered[a.rx as usize].prefetch_record(at - a.emit_ns);
                prefetch(self.receivers[a.rx as usize].awaiting_twins.as_slices().0.as_ptr());
            }
            self.deliver(&batch[i]);
        }
        self.events += batch.len() as u64;
        self.packets_delivered += batch.len() as u64;
        batch.clear();
        self.batch = batch;
    }

    /// Cut-through forwards once the header is in: the frame may leave earlier by its reception
    /// time minus the header's, but never finish before it has fully arrived.
    fn cut_through_gain(&self, from: usize, to: usize, copy: u32) -> i64 {
        const HEADER_BITS: f64 = (8.0 + 14.0) * 8.0; // preamble+SFD and the Ethernet header
        let c = &self.copies[copy as usize];
        let rx = &self.ports[self.hops[from].port as usize];
        let tx = &self.ports[self.hops[to].port as usize];
        let rx_ns = c.wire_bits as f64 * rx.ps_per_bit / 1e3;
        let tx_ns = c.wire_bits as f64 * tx.ps_per_bit / 1e3;
        let header_ns = HEADER_BITS * rx.ps_per_bit / 1e3;
        (rx_ns - header_ns).min(tx_ns).max(0.0).floor() as i64
    }

    /// A copy of a frame reaches its destination: its latency is measured, integrity checking
    /// (VLs) may discard it, then redundancy management (or deduplication) decides whether its
    /// frame is delivered.
    fn deliver(&mut self, a: &Arrival) {
        let (f, rx, frame, emit, node) = (a.flow, a.rx, a.frame, a.emit_ns, a.node as usize);
        let at = a.time + self.hot.node_receive_ns[node];
        self.route_stats[a.route as usize].record(at - a.start_ns);
        if self.hot.flow_is_vl[f as usize]
            && !sequence_valid(&mut self.route_last_sn[a.route as usize], frame)
        {
            self.route_integrity_discards[a.route as usize] += 1;
            return;
        }
        if !self.dedups.is_empty() && self.receivers[rx as usize].copies > 1 {
            // A frame that reaches this destination on one plane only has no twin to remove.
            self.deliver_dedup(node, rx, f as usize, frame, emit, at);
            return;
        }
        // Redundancy management: the first valid copy of a frame wins; a copy of an accepted
        // frame within SkewMax is discarded.
        let skew_max = self.hot.flow_skew_max[f as usize];
        if self.receivers[rx as usize].is_twin(frame, at, skew_max, &mut self.work) {
            return;
        }
        self.frame_delivered(rx, f as usize, frame, at - emit);
    }

    /// Seed 000's deduplication at the destination: the counting Bloom filter and hash table
    /// decide; in hold-until-twin mode a frame is delivered when its twin arrives or when its
    /// SkewMax runs out (at first arrival + SkewMax).
    fn deliver_dedup(&mut self, node: usize, rx: u32, f: usize, frame: u64, emit: i64, at: i64) {
        let key = dedup::pack_key(f as u16, frame);
        let Some((d, _)) = self.dedups[node].as_mut() else { return };
        let decision = d.on_arrival(key, at as u64);
        self.expire_held(node, at);
        let Some((_, known)) = self.dedups[node].as_mut() else { return };
        let held = Held { rx, flow: f as u32, frame, emit, first: at };
        let r = &mut self.receivers[rx as usize];
        match decision {
            Decision::Deliver => {
                // A twin completing a held frame is delivered now, measured from the frame's emission.
                let first = known.remove(&key);
                match first {
                    // The twin of a held frame: one of the pair is delivered, the other discarded.
                    Some(_) => r.duplicates += 1,
                    None => {
                        known.insert(key, held);
                    }
                }
                self.frame_delivered(rx, f, frame, at - first.map_or(emit, |h| h.emit));
            }
            Decision::Drop => {
                r.duplicates += 1;
                known.remove(&key);
            }
            Decision::Hold => {
                known.insert(key, held);
            }
        }
    }

    /// Advances `node`'s deduplicator to `at`: the frames whose SkewMax has run out are
    /// forgotten, and in hold-until-twin mode those held alone are delivered, at their expiry.
    fn expire_held(&mut self, node: usize, at: i64) {
        let Some((d, _)) = self.dedups[node].as_mut() else { return };
        let mut expired = std::mem::take(&mut self.expired);
        d.expire_into(at as u64, &mut expired);
        for k in expired.drain(..) {
            let Some((d, known)) = self.dedups[node].as_mut() else { unreachable!("checked above") };
            let Some(h) = known.remove(&k) else { continue };
            if d.mode() == DeliveryMode::HoldUntilTwin {
                let due = h.first + d.skew_max_ns(k) as i64 + 1;
                self.frame_delivered(h.rx, h.flow as usize, h.frame, due - h.emit);
            }
        }
        self.expired = expired;
    }

    // ---- retransmission ------------------------------------------------------------------

    /// A frame just emitted is awaited at each of its flow's destinations within the flow's
    /// timeout; its timeout fires 1 ns after, so that every delivery on time comes first.
    fn await_delivery(&mut self, f: usize, frame: u64, emit_ns: i64) {
        let timeout = self.flow_timeout_ns[f];
        if timeout == NO_TIMEOUT {
            return;
        }
        let key = retransmit_key(f, frame);
        self.awaited.insert(key, self.flow_receivers[f].clone());
        let slot = match self.free_timeouts.pop() {
            Some(s) => {
                self.timeouts[s as usize] = key;
                s
            }
            None => {
                self.timeouts.push(key);
                self.timeouts.len() as u32 - 1
            }
        };
        self.push(emit_ns + timeout + 1, Ev::Timeout { slot });
    }

    /// Receiver `rx` delivers flow `f`'s `frame` (`latency` after its emission).
    fn frame_delivered(&mut self, rx: u32, f: usize, frame: u64, latency: i64) {
        self.delivered[rx as usize].record(latency);
        if !self.cfg.retransmit || latency > self.flow_timeout_ns[f] {
            return;
        }
        let key = retransmit_key(f, frame);
        if let Some(left) = self.awaited.get_mut(&key) {
            left.retain(|&r| r != rx);
            if left.is_empty() {
                self.awaited.remove(&key);
            }
        }
    }

    /// A frame's timeout: unless every destination delivered it in time, the source sends it
    /// again, once, through the regulator (seed 000's retransmission-rate metric).
    fn timeout(&mut self, slot: u32) {
        let key = self.timeouts[slot as usize];
        self.free_timeouts.push(slot);
        if !self.dedups.is_empty() {
            // A frame held alone may have been delivered at its SkewMax's end, which the
            // deduplicator tells only when it next moves on: make it move on now. (Its clock runs
            // on delivery times: arrival plus receive latency, no later than this.)
            let nodes: Vec<u32> = self
                .awaited
                .get(&key)
                .map_or(Vec::new(), |rxs| rxs.iter().map(|&rx| self.receiver_node[rx as usize]).collect());
            for n in nodes {
                self.expire_held(n as usize, self.now + self.hot.node_receive_ns[n as usize]);
            }
        }
        if self.awaited.remove(&key).is_none() {
            return;
        }
        let f = (key >> 40) as usize;
        let bits = self.frame_bits(f);
        self.sources_cold[f].retransmissions += 1;
        self.produce(f, self.now, bits, true);
        if !self.sources[f].regulate_pending {
            self.sources[f].regulate_pending = true;
            self.push(self.now, Ev::Regulate { flow: f as u32 });
        }
    }

    // ---- results --------------------------------------------------------------------------

    pub fn report(&self) -> SimReport {
        let net = &self.net;
        let flows = self
            .routes
            .iter()
            .enumerate()
            .map(|(r, &(f, dest, plane, _))| {
                let l = &self.route_stats[r];
                FlowStats {
                    flow: net.flows[f as usize].name.clone(),
                    destination: net.nodes[dest as usize].name.clone(),
                    plane: net.planes[plane as usize].clone(),
                    latency: LatencySummary::from(l),
                    losses: self.route_losses[r],
                    integrity_discards: self.route_integrity_discards[r],
                    retransmissions: self.sources_cold[f as usize].retransmissions,
                    histogram: l.histogram().into_iter().map(|(ns, n)| (ns as f64 / 1e3, n)).collect(),
                }
            })
            .collect();
        let mut delivered = Vec::new();
        let mut seen = HashSet::new();
        for &(f, dest, _, rx) in &self.routes {
            if net.planes.len() > 1 && seen.insert(rx) {
                let r = &self.receivers[rx as usize];
                delivered.push(DeliveredStats {
                    flow: net.flows[f as usize].name.clone(),
                    destination: net.nodes[dest as usize].name.clone(),
                    latency: LatencySummary::from(&self.delivered[rx as usize]),
                    duplicates_discarded: r.duplicates,
                });
            }
        }
        let dedup = self
            .dedups
            .iter()
            .enumerate()
            .filter_map(|(n, d)| d.as_ref().map(|(d, _)| (n, d)))
            .map(|(n, d)| {
                let st = d.stats();
                let filter = d.filter();
                DedupReport {
                    destination: net.nodes[n].name.clone(),
                    mode: self.cfg.dedup.map_or(DedupMode::FirstCopy, |s| s.mode),
                    counters: filter.counters(),
                    hashes: filter.hashes(),
                    arrivals: st.arrivals,
                    delivered: st.delivered,
                    duplicates_dropped: st.duplicates_dropped,
                    false_positives: st.false_positives,
                    measured_fp_rate: st.measured_fp_rate(),
                    theorem8_fp: filter.predicted_fp(st.peak_table_size as u64),
                    saturations: st.saturations,
                    peak_keys: st.peak_table_size,
                }
            })
            .collect();
        let elapsed = self.now.max(1) as f64;
        let mut unstarted_hops = 0;
        let ports = net
            .ports
            .iter()
            .zip(&self.ports)
            .enumerate()
            .map(|(k, (p, s))| {
                // A FIFO port counts a frame when it schedules it: those not started by now
                // have not left it yet.
                let (frames, busy_ns) = match &s.discipline {
                    Discipline::Fifo { waiting, .. } => waiting
                        .iter()
                        .filter(|w| w.started > self.now)
                        .fold((s.frames, s.busy_ns), |(n, b), w| (n - 1, b - w.tx_ns)),
                    Discipline::Scheduled(_) => (s.frames, s.busy_ns),
                };
                unstarted_hops += s.frames - frames;
                PortStats {
                    node: net.nodes[p.node].name.clone(),
                    port: p.name.clone(),
                    plane: net.planes[p.plane].clone(),
                    max_backlog_bytes: s.max_backlog_bits / 8.0,
                    utilisation: (busy_ns.min(self.now) as f64 / elapsed).min(1.0),
                    frames,
                    drops: self.port_drops[k].0,
                    policed: self.port_drops[k].1,
                }
            })
            .collect();
        SimReport {
            network: net.spec.name.clone(),
            seed: self.cfg.seed,
            flows,
            delivered,
            dedup,
            ports,
            stats: RunStats {
                events: self.events,
                frame_hops: self.frame_hops - unstarted_hops,
                wall_s: self.wall_s,
                simulated_us: self.now as f64 / 1e3,
                frames_released: self.sources.iter().map(|s| s.next_frame).sum(),
                packets_created: self.packets_created,
                packets_delivered: self.packets_delivered,
                packets_forwarded: self.packets_forwarded,
                packets_dropped: self.packets_dropped,
                packets_policed: self.packets_policed,
                packets_in_flight: (self.packets.len() - self.free_packets.len()
                    + self.arrivals.as_ref().map_or(0, |l| l.held()))
                    as u64,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ns_per_bit, Link, PortSim};

    #[test]
    fn a_port_is_two_cache_lines() {
        assert_eq!(std::mem::size_of::<PortSim>(), 128);
    }

    /// 65,536 Mbit/s: a bit takes 1000/65536 ns = 0.0152587890625 ns exactly (a dyadic
    /// fraction), so 672 bits (84 B) take 10.25390625 ns, and 64 such frames back to back end at
    /// exactly 656.25 ns: the port's end is exact, every event time rounded down.
    #[test]
    fn link_time_is_exact_and_events_round_down() {
        let rate = 65_536e6;
        let k = ns_per_bit(rate);
        assert_eq!(k, (1000u128 << 64) / 65536, "exact at a power-of-two rate");
        let mut port = Link { free_at: 0, free_frac: 0, ns_per_bit: k };
        let mut ends = Vec::new();
        for _ in 0..64 {
            ends.push(port.transmit(0, 672).end);
        }
        assert_eq!(ends[0], 10, "10.25 ns rounded down");
        assert_eq!(ends[1], 20, "20.5");
        assert_eq!(ends[3], 41, "41.015625");
        assert_eq!(*ends.last().unwrap(), 656);
        assert_eq!(port.free_frac, 1 << 62, "0.25 ns left");
        // A frame arriving at 656 starts at the exact end, not at 656.
        let t = port.transmit(656, 672);
        assert_eq!((t.start, t.started, t.end), (656, 657, 666));
        // 100 Mbit/s: 10 ns per bit, whole.
        assert_eq!(ns_per_bit(1e8), 10u128 << 64);
        // Not a whole rate: the next whole rate up (never a longer time); beyond 2^128, no time.
        assert_eq!(ns_per_bit(2.5), ns_per_bit(3.0));
        assert_eq!(ns_per_bit(1e308), 0);
    }
}
