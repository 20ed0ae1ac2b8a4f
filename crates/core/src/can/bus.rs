//! Discrete-event simulation of one CAN bus: nodes with transmit queues, bitwise arbitration,
//! non-preemptive frames, and network sporadic servers as senders.
//!
//! Conventions (times in integer ns):
//!
//! * **Arbitration.** Whenever the bus is idle, every node offers one frame and the smallest
//!   [`CanId::arbitration_key`] wins and starts at once. A frame that becomes pending while
//!   another is on the wire waits for the next arbitration, at the end of that frame (frame
//!   lengths include the inter-frame space).
//! * **One instant, one order.** At each instant the simulator first ends the transmission on
//!   the wire, then fires replenishment timers, then queues arriving messages, and only then
//!   arbitrates: a frame queued exactly when arbitration starts takes part in it.
//! * **Transmit queues.** A priority-queued node offers its highest-priority pending frame; a
//!   FIFO node its oldest (by queuing time, then queuing order). Frames with the same identifier
//!   (one stream, or one server) leave in queuing order. Identifiers are unique on the bus, so
//!   arbitration never ties.
//! * **Servers.** A stream sent through a [`ServerSpec`] puts its frames in the server's
//!   transmission queue; the server's head frame is offered by its node with the server's normal
//!   or low identifier, as its level says, or not at all at low level when the server has no low
//!   identifier (catalogue I-004-3). A frame counts as sent when it wins arbitration: it leaves
//!   the server's queue and the replenishment operation happens at that instant.
//! * **Messages.** Each arrival queues one message of `frames_per_message` frames at once (a
//!   fragmentation layer in the node); its response time runs from queuing to the end of its
//!   last frame.
//! * **End of run.** The run stops at `until_ns`, or earlier once every arrival has been queued
//!   and every frame sent (an armed replenishment timer alone does not keep it going). Messages
//!   still pending then are reported as pending, not as delivered.
//! * **Randomness.** Each stream draws from its own ChaCha8 stream of the run's seed (release
//!   jitter uniform over whole ns, exponential gaps by inverse transform), so the same bus, end
//!   and seed give the same report bit for bit.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap, VecDeque};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::frame::{self, CanId, IdFormat, Stuffing, MAX_DATA_BYTES};
use super::sporadic_server::{NetworkSporadicServer, Packets, ServerLevel};

pub type NodeId = usize;
pub type StreamId = usize;
pub type ServerId = usize;

/// How a node picks the frame it offers to arbitration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxQueue {
    /// The highest-priority pending frame (the assumption of CAN response-time analysis).
    #[default]
    Priority,
    /// The oldest pending frame, whatever its priority (a simple driver's FIFO).
    Fifo,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    pub queue: TxQueue,
}

/// A network sporadic server in a node (see [`super::sporadic_server`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerSpec {
    pub node: NodeId,
    /// Identifier used while the server has capacity.
    pub normal_id: CanId,
    /// Identifier used once capacity is spent; `None`: the server does not send at all below its
    /// normal priority (catalogue I-004-3).
    pub low_id: Option<CanId>,
    /// Capacity in packets (frames).
    pub init_budget: u32,
    pub repl_period_ns: i64,
}

/// What a stream's frames compete with in arbitration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sender {
    /// The stream's own identifier.
    Id(CanId),
    /// Through a server of the same node, with the server's current identifier.
    Server(ServerId),
}

/// The size of each frame of a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Payload {
    /// A CAN 2.0 data frame with `bytes` data bytes; its length also depends on the format of
    /// the identifier it is sent with.
    Bytes { bytes: u8, stuffing: Stuffing },
    /// An abstract packet of this many bits on the wire (inter-frame space included), for
    /// models counted in packet times.
    Bits(i64),
}

impl Payload {
    /// `bytes` data bytes with worst-case bit stuffing.
    pub fn bytes(bytes: u8) -> Self {
        Payload::Bytes { bytes, stuffing: Stuffing::WorstCase }
    }

    fn bits(self, format: IdFormat) -> i64 {
        match self {
            Payload::Bytes { bytes, stuffing } => frame::frame_bits(format, bytes, stuffing),
            Payload::Bits(bits) => bits,
        }
    }
}

/// When a stream's messages are queued.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Released at `offset + k·period` and queued after a release jitter drawn uniformly in
    /// `0..=jitter`.
    Periodic { period_ns: i64, offset_ns: i64, jitter_ns: i64 },
    /// First at `offset`, then gaps of `min_gap` plus an exponential extra of mean
    /// `mean_extra_gap` (0: strictly periodic at the minimum gap).
    Sporadic { offset_ns: i64, min_gap_ns: i64, mean_extra_gap_ns: i64 },
    /// Exponential gaps of mean `mean_gap` from time 0.
    Poisson { mean_gap_ns: i64 },
    /// These instants, non-decreasing.
    Times(Vec<i64>),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stream {
    pub node: NodeId,
    pub sender: Sender,
    pub payload: Payload,
    /// Frames queued per message (at least 1).
    pub frames_per_message: u32,
    pub arrivals: Arrivals,
}

impl Stream {
    /// A stream of one-frame messages.
    pub fn new(node: NodeId, sender: Sender, payload: Payload, arrivals: Arrivals) -> Self {
        Stream { node, sender, payload, frames_per_message: 1, arrivals }
    }

    pub fn with_frames_per_message(mut self, frames: u32) -> Self {
        self.frames_per_message = frames;
        self
    }

    /// The stream's own identifier; only asked of frames waiting in a node, which have one.
    fn own_id(&self) -> CanId {
        match self.sender {
            Sender::Id(id) => id,
            Sender::Server(_) => unreachable!("server frames wait in their server"),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bus {
    pub bit_rate_bps: i64,
    pub nodes: Vec<Node>,
    pub servers: Vec<ServerSpec>,
    pub streams: Vec<Stream>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimConfig {
    /// Nothing happens after this instant.
    pub until_ns: i64,
    pub seed: u64,
    /// Record every transmission in [`BusReport::trace`].
    pub trace: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StreamStats {
    /// Messages queued.
    pub released: u64,
    /// Messages whose last frame was sent completely.
    pub delivered: u64,
    /// Frames sent completely.
    pub frames_sent: u64,
    pub min_response_ns: Option<i64>,
    pub mean_response_ns: Option<f64>,
    pub max_response_ns: Option<i64>,
}

impl StreamStats {
    /// Messages queued but not completely sent when the run stopped.
    pub fn pending(&self) -> u64 {
        self.released - self.delivered
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ServerStats {
    /// Replenishment operations (one per frame sent at normal priority).
    pub replenishments: u64,
    /// Replenishment timer expiries, with or without waiting frames.
    pub timer_expiries: u64,
    /// Frames sent at normal priority.
    pub normal_sends: u64,
    /// Frames sent at low priority.
    pub low_sends: u64,
}

/// One frame on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Transmission {
    pub start_ns: i64,
    pub end_ns: i64,
    pub stream: StreamId,
    /// The identifier that won arbitration (a server's normal or low identifier for its frames).
    pub id: CanId,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BusReport {
    /// When the run stopped: `until_ns`, or the instant the last frame ended if all work was
    /// done before.
    pub end_ns: i64,
    /// Time the wire carried completed frames.
    pub busy_ns: i64,
    pub streams: Vec<StreamStats>,
    pub servers: Vec<ServerStats>,
    /// Every transmission in start order, if asked for.
    pub trace: Vec<Transmission>,
}

/// A bus description that cannot be simulated, with the place of the fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{place}: {message}")]
pub struct BusError {
    pub place: String,
    pub message: String,
}

fn err(place: impl Into<String>, message: impl Into<String>) -> BusError {
    BusError { place: place.into(), message: message.into() }
}

impl Bus {
    /// Checks indices, identifiers (valid and unique on the bus), sizes and arrival parameters.
    pub fn validate(&self) -> Result<(), BusError> {
        if self.bit_rate_bps <= 0 {
            return Err(err("bit_rate_bps", format!("must be positive, got {}", self.bit_rate_bps)));
        }
        let mut owners: HashMap<u32, String> = HashMap::new();
        let mut claim = |id: CanId, place: String| -> Result<(), BusError> {
            if !id.is_valid() {
                return Err(err(place, format!("identifier {id} does not fit its format")));
            }
            match owners.insert(id.arbitration_key(), place.clone()) {
                Some(other) => Err(err(place, format!("identifier {id} is already used by {other}"))),
                None => Ok(()),
            }
        };
        for (i, s) in self.servers.iter().enumerate() {
            if s.node >= self.nodes.len() {
                return Err(err(format!("servers[{i}].node"), format!("no node {}", s.node)));
            }
            if s.init_budget == 0 {
                return Err(err(format!("servers[{i}].init_budget"), "must be at least one packet"));
            }
            if s.repl_period_ns <= 0 {
                return Err(err(format!("servers[{i}].repl_period_ns"), "must be positive"));
            }
            claim(s.normal_id, format!("servers[{i}].normal_id"))?;
            if let Some(low) = s.low_id {
                claim(low, format!("servers[{i}].low_id"))?;
            }
        }
        for (i, st) in self.streams.iter().enumerate() {
            let place = |field: &str| format!("streams[{i}].{field}");
            if st.node >= self.nodes.len() {
                return Err(err(place("node"), format!("no node {}", st.node)));
            }
            match st.sender {
                Sender::Id(id) => claim(id, place("sender"))?,
                Sender::Server(s) => match self.servers.get(s) {
                    None => return Err(err(place("sender"), format!("no server {s}"))),
                    Some(server) if server.node != st.node => {
                        return Err(err(
                            place("sender"),
                            format!("server {s} is in node {}, not in node {}", server.node, st.node),
                        ))
                    }
                    Some(_) => {}
                },
            }
            match st.payload {
                Payload::Bytes { bytes, .. } if bytes > MAX_DATA_BYTES => {
                    return Err(err(place("payload"), format!("at most 8 data bytes, got {bytes}")))
                }
                Payload::Bits(bits) if bits <= 0 => {
                    return Err(err(place("payload"), format!("must be positive, got {bits} bits")))
                }
                _ => {}
            }
            if st.frames_per_message == 0 {
                return Err(err(place("frames_per_message"), "must be at least 1"));
            }
            let arrivals = place("arrivals");
            match &st.arrivals {
                Arrivals::Periodic { period_ns, offset_ns, jitter_ns } => {
                    if *period_ns <= 0 || *offset_ns < 0 || *jitter_ns < 0 {
                        return Err(err(arrivals, "needs period > 0, offset >= 0 and jitter >= 0"));
                    }
                }
                Arrivals::Sporadic { offset_ns, min_gap_ns, mean_extra_gap_ns } => {
                    if *min_gap_ns <= 0 || *offset_ns < 0 || *mean_extra_gap_ns < 0 {
                        return Err(err(arrivals, "needs min gap > 0, offset >= 0 and mean extra gap >= 0"));
                    }
                }
                Arrivals::Poisson { mean_gap_ns } => {
                    if *mean_gap_ns <= 0 {
                        return Err(err(arrivals, "needs a positive mean gap"));
                    }
                }
                Arrivals::Times(times) => {
                    if times.first().is_some_and(|&t| t < 0) || times.windows(2).any(|w| w[1] < w[0]) {
                        return Err(err(arrivals, "times must be non-negative and non-decreasing"));
                    }
                }
            }
        }
        Ok(())
    }

    /// Runs the bus from time 0, when every server is initialised with full capacity.
    pub fn simulate(&self, cfg: &SimConfig) -> Result<BusReport, BusError> {
        self.validate()?;
        if cfg.until_ns < 0 {
            return Err(err("until_ns", format!("must not be negative, got {}", cfg.until_ns)));
        }
        Ok(Simulation::new(self, cfg).run())
    }
}

// ---------------------------------------------------------------------------------------------
// The event loop.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    /// The frame on the wire ends.
    TxEnd,
    /// A server's replenishment timer fires.
    Timer { server: u32 },
    /// A stream's next release (before its jitter).
    Release { stream: u32 },
    /// A jittered message is queued.
    Queue { stream: u32 },
}

impl Ev {
    /// Order of events at one instant (see the module documentation).
    fn phase(self) -> u8 {
        match self {
            Ev::TxEnd => 0,
            Ev::Timer { .. } => 1,
            Ev::Release { .. } | Ev::Queue { .. } => 2,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Event {
    time: i64,
    seq: u64,
    ev: Ev,
}

impl Ord for Event {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.time, self.ev.phase(), self.seq).cmp(&(o.time, o.ev.phase(), o.seq))
    }
}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// A frame waiting in a node or a server, standing for the frames of its message queued after it
/// too (one entry per message, however many frames the description gives it). Ordered by `seq`
/// (the first field), which is unique.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    /// Queuing order, unique over the run (the message's next frames take the next numbers).
    seq: u64,
    queued_ns: i64,
    stream: u32,
    /// Frames of its message from this one on: 1 for the last.
    frames: u32,
}

impl Packets for Pending {
    /// The frame at the head of a message; the message goes on with its next frame.
    fn take_packet(&mut self) -> Option<Pending> {
        (self.frames > 1).then(|| {
            let frame = *self;
            self.frames -= 1;
            self.seq += 1;
            frame
        })
    }
}

enum NodeQueue {
    /// Keyed by (arbitration key, queuing order).
    Priority(BinaryHeap<Reverse<(u32, Pending)>>),
    Fifo(VecDeque<(u32, Pending)>),
}

impl NodeQueue {
    fn head(&self) -> Option<(u32, Pending)> {
        match self {
            NodeQueue::Priority(heap) => heap.peek().map(|r| r.0),
            NodeQueue::Fifo(fifo) => fifo.front().copied(),
        }
    }

    /// Takes the head frame out (its message's next frame, if any, stays at the head: the same
    /// key, the next queuing number).
    fn take(&mut self) -> Pending {
        match self {
            NodeQueue::Priority(heap) => {
                let mut top = heap.peek_mut().expect("an offered frame is waiting");
                match top.0 .1.take_packet() {
                    Some(frame) => frame,
                    None => std::collections::binary_heap::PeekMut::pop(top).0 .1,
                }
            }
            NodeQueue::Fifo(fifo) => {
                let head = fifo.front_mut().expect("an offered frame is waiting");
                match head.1.take_packet() {
                    Some(frame) => frame,
                    None => fifo.pop_front().expect("the head was there").1,
                }
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Origin {
    Node(usize),
    Server(usize),
}

#[derive(Clone, Copy)]
struct Offer {
    key: u32,
    id: CanId,
    frame: Pending,
    origin: Origin,
}

struct Source {
    rng: ChaCha8Rng,
    /// Next periodic release index, or next index into explicit times.
    next: u64,
}

#[derive(Default)]
struct Acc {
    released: u64,
    delivered: u64,
    frames_sent: u64,
    min: i64,
    max: i64,
    sum: i128,
}

struct Simulation<'a> {
    bus: &'a Bus,
    until: i64,
    seq: u64,
    events: BinaryHeap<Reverse<Event>>,
    sources: Vec<Source>,
    /// Transmission time of each stream's frames with an 11-bit and a 29-bit identifier.
    tx_ns: Vec<[i64; 2]>,
    queues: Vec<NodeQueue>,
    node_servers: Vec<Vec<usize>>,
    servers: Vec<NetworkSporadicServer<Pending>>,
    server_sends: Vec<(u64, u64)>,
    /// The frame on the wire and when it started.
    on_wire: Option<(Pending, i64)>,
    /// Release and queue events in the heap.
    arrivals_ahead: usize,
    /// Frames queued and not yet on the wire.
    waiting: usize,
    acc: Vec<Acc>,
    busy_ns: i64,
    trace: Option<Vec<Transmission>>,
}

fn format_index(format: IdFormat) -> usize {
    match format {
        IdFormat::Standard => 0,
        IdFormat::Extended => 1,
    }
}

/// An exponential draw of the given mean by inverse transform, rounded to the ns.
fn exponential_ns(rng: &mut ChaCha8Rng, mean_ns: i64) -> i64 {
    let u: f64 = rng.gen();
    (-(mean_ns as f64) * (1.0 - u).ln()).round() as i64
}

impl<'a> Simulation<'a> {
    fn new(bus: &'a Bus, cfg: &SimConfig) -> Self {
        let sources = (0..bus.streams.len())
            .map(|i| {
                let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
                rng.set_stream(i as u64);
                Source { rng, next: 0 }
            })
            .collect();
        let tx_ns = bus
            .streams
            .iter()
            .map(|s| {
                [IdFormat::Standard, IdFormat::Extended]
                    .map(|f| frame::transmission_ns(s.payload.bits(f), bus.bit_rate_bps))
            })
            .collect();
        let queues = bus
            .nodes
            .iter()
            .map(|n| match n.queue {
                TxQueue::Priority => NodeQueue::Priority(BinaryHeap::new()),
                TxQueue::Fifo => NodeQueue::Fifo(VecDeque::new()),
            })
            .collect();
        let mut node_servers = vec![Vec::new(); bus.nodes.len()];
        for (i, s) in bus.servers.iter().enumerate() {
            node_servers[s.node].push(i);
        }
        let servers = bus
            .servers
            .iter()
            .map(|s| NetworkSporadicServer::new(s.init_budget, s.repl_period_ns, 0))
            .collect();
        Simulation {
            bus,
            until: cfg.until_ns,
            seq: 0,
            events: BinaryHeap::new(),
            sources,
            tx_ns,
            queues,
            node_servers,
            servers,
            server_sends: vec![(0, 0); bus.servers.len()],
            on_wire: None,
            arrivals_ahead: 0,
            waiting: 0,
            acc: bus.streams.iter().map(|_| Acc { min: i64::MAX, ..Acc::default() }).collect(),
            busy_ns: 0,
            trace: cfg.trace.then(Vec::new),
        }
    }

    fn push(&mut self, time: i64, ev: Ev) {
        if matches!(ev, Ev::Release { .. } | Ev::Queue { .. }) {
            if time > self.until {
                return;
            }
            self.arrivals_ahead += 1;
        }
        self.seq += 1;
        self.events.push(Reverse(Event { time, seq: self.seq, ev }));
    }

    fn run(mut self) -> BusReport {
        for stream in 0..self.bus.streams.len() {
            if let Some(t) = self.next_release(stream, 0) {
                self.push(t, Ev::Release { stream: stream as u32 });
            }
        }
        let mut now = 0;
        while let Some(&Reverse(first)) = self.events.peek() {
            if first.time > self.until {
                now = self.until;
                break;
            }
            now = first.time;
            while let Some(&Reverse(e)) = self.events.peek() {
                if e.time != now {
                    break;
                }
                self.events.pop();
                self.handle(now, e.ev);
            }
            if self.on_wire.is_none() {
                self.arbitrate(now);
            }
            if self.on_wire.is_none() && self.waiting == 0 && self.arrivals_ahead == 0 {
                break;
            }
        }
        self.report(now)
    }

    /// The release after one at `prev` (ignored for the first), or `None` when there is none.
    fn next_release(&mut self, stream: usize, prev: i64) -> Option<i64> {
        let src = &mut self.sources[stream];
        let k = src.next;
        src.next += 1;
        let t = match &self.bus.streams[stream].arrivals {
            Arrivals::Periodic { period_ns, offset_ns, .. } => {
                offset_ns.checked_add(period_ns.checked_mul(i64::try_from(k).ok()?)?)?
            }
            Arrivals::Sporadic { offset_ns, min_gap_ns, mean_extra_gap_ns } => {
                if k == 0 {
                    *offset_ns
                } else {
                    let extra = if *mean_extra_gap_ns > 0 {
                        exponential_ns(&mut src.rng, *mean_extra_gap_ns)
                    } else {
                        0
                    };
                    prev.checked_add(*min_gap_ns)?.checked_add(extra)?
                }
            }
            Arrivals::Poisson { mean_gap_ns } => {
                prev.checked_add(exponential_ns(&mut src.rng, *mean_gap_ns))?
            }
            Arrivals::Times(times) => *times.get(usize::try_from(k).ok()?)?,
        };
        Some(t)
    }

    fn handle(&mut self, now: i64, ev: Ev) {
        match ev {
            Ev::TxEnd => self.end_transmission(now),
            Ev::Timer { server } => self.servers[server as usize].expire_timer(now),
            Ev::Release { stream } => {
                self.arrivals_ahead -= 1;
                let s = stream as usize;
                let jitter = match self.bus.streams[s].arrivals {
                    Arrivals::Periodic { jitter_ns, .. } if jitter_ns > 0 => {
                        self.sources[s].rng.gen_range(0..=jitter_ns)
                    }
                    _ => 0,
                };
                if jitter == 0 {
                    self.queue_message(now, s);
                } else {
                    self.push(now + jitter, Ev::Queue { stream });
                }
                if let Some(t) = self.next_release(s, now) {
                    self.push(t, Ev::Release { stream });
                }
            }
            Ev::Queue { stream } => {
                self.arrivals_ahead -= 1;
                self.queue_message(now, stream as usize);
            }
        }
    }

    fn queue_message(&mut self, now: i64, stream: usize) {
        let st = &self.bus.streams[stream];
        self.acc[stream].released += 1;
        // One entry for the whole message; its frames take the next queuing numbers.
        let frame = Pending {
            seq: self.seq + 1,
            queued_ns: now,
            stream: stream as u32,
            frames: st.frames_per_message,
        };
        self.seq += u64::from(st.frames_per_message);
        match st.sender {
            Sender::Id(id) => {
                let key = id.arbitration_key();
                match &mut self.queues[st.node] {
                    NodeQueue::Priority(heap) => heap.push(Reverse((key, frame))),
                    NodeQueue::Fifo(fifo) => fifo.push_back((key, frame)),
                }
            }
            Sender::Server(server) => self.servers[server].enqueue(now, frame),
        }
        self.waiting += st.frames_per_message as usize;
    }

    /// The frame `node` offers to arbitration, if any.
    fn offer(&self, node: usize) -> Option<Offer> {
        let direct = self.queues[node].head().map(|(key, frame)| Offer {
            key,
            id: self.bus.streams[frame.stream as usize].own_id(),
            frame,
            origin: Origin::Node(node),
        });
        let served = self.node_servers[node].iter().filter_map(|&s| {
            let server = &self.servers[s];
            let spec = &self.bus.servers[s];
            let id = match server.level() {
                ServerLevel::Normal => spec.normal_id,
                ServerLevel::Low => spec.low_id?,
            };
            server.head().map(|&frame| Offer {
                key: id.arbitration_key(),
                id,
                frame,
                origin: Origin::Server(s),
            })
        });
        let candidates = direct.into_iter().chain(served);
        match self.bus.nodes[node].queue {
            TxQueue::Priority => candidates.min_by_key(|o| o.key),
            TxQueue::Fifo => candidates.min_by_key(|o| (o.frame.queued_ns, o.frame.seq)),
        }
    }

    fn arbitrate(&mut self, now: i64) {
        // Identifiers are unique on the bus, so the minimum is unique.
        let Some(winner) = (0..self.bus.nodes.len()).filter_map(|n| self.offer(n)).min_by_key(|o| o.key)
        else {
            return;
        };
        let frame = match winner.origin {
            Origin::Node(node) => self.queues[node].take(),
            Origin::Server(s) => {
                let server = &mut self.servers[s];
                let (frame, level) = server.send_head(now).expect("an offered server frame is waiting");
                let sends = &mut self.server_sends[s];
                match level {
                    ServerLevel::Normal => {
                        sends.0 += 1;
                        if let Some(t) = server.timer() {
                            self.push(t, Ev::Timer { server: s as u32 });
                        }
                    }
                    ServerLevel::Low => sends.1 += 1,
                }
                frame
            }
        };
        debug_assert_eq!(frame, winner.frame, "the frame offered is the frame sent");
        self.waiting -= 1;
        let end = now + self.tx_ns[frame.stream as usize][format_index(winner.id.format())];
        if let Some(trace) = &mut self.trace {
            trace.push(Transmission {
                start_ns: now,
                end_ns: end,
                stream: frame.stream as usize,
                id: winner.id,
            });
        }
        self.on_wire = Some((frame, now));
        self.push(end, Ev::TxEnd);
    }

    fn end_transmission(&mut self, now: i64) {
        let (frame, start) = self.on_wire.take().expect("a transmission ends only if one started");
        self.busy_ns += now - start;
        let acc = &mut self.acc[frame.stream as usize];
        acc.frames_sent += 1;
        if frame.frames == 1 {
            let response = now - frame.queued_ns;
            acc.delivered += 1;
            acc.min = acc.min.min(response);
            acc.max = acc.max.max(response);
            acc.sum += i128::from(response);
        }
    }

    fn report(self, end_ns: i64) -> BusReport {
        let streams = self
            .acc
            .iter()
            .map(|a| {
                let any = a.delivered > 0;
                StreamStats {
                    released: a.released,
                    delivered: a.delivered,
                    frames_sent: a.frames_sent,
                    min_response_ns: any.then_some(a.min),
                    mean_response_ns: any.then(|| (a.sum as f64) / (a.delivered as f64)),
                    max_response_ns: any.then_some(a.max),
                }
            })
            .collect();
        let servers = self
            .servers
            .iter()
            .zip(&self.server_sends)
            .map(|(s, &(normal_sends, low_sends))| ServerStats {
                replenishments: s.replenishments(),
                timer_expiries: s.timer_expiries(),
                normal_sends,
                low_sends,
            })
            .collect();
        BusReport { end_ns, busy_ns: self.busy_ns, streams, servers, trace: self.trace.unwrap_or_default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: i64 = 1_000;
    const MS: i64 = 1_000_000;
    /// An 8-byte frame with an 11-bit identifier at 500 kbit/s: 135 bits, 270 µs.
    const FRAME8: i64 = 270 * US;

    fn std_id(id: u16) -> Sender {
        Sender::Id(CanId::Standard(id))
    }

    fn once(node: NodeId, sender: Sender, times: &[i64]) -> Stream {
        Stream::new(node, sender, Payload::bytes(8), Arrivals::Times(times.to_vec()))
    }

    fn run(bus: &Bus, until_ns: i64, seed: u64) -> BusReport {
        bus.simulate(&SimConfig { until_ns, seed, trace: true }).unwrap()
    }

    fn spans(report: &BusReport) -> Vec<(i64, i64, StreamId)> {
        report.trace.iter().map(|t| (t.start_ns, t.end_ns, t.stream)).collect()
    }

    /// Two nodes: node 0 holds A (0x200) and D (0x300), node 1 holds B (0x100) and C (0x050).
    fn four_frames(node1: TxQueue) -> Bus {
        Bus {
            bit_rate_bps: 500_000,
            nodes: vec![Node { queue: TxQueue::Priority }, Node { queue: node1 }],
            servers: vec![],
            streams: vec![
                once(0, std_id(0x200), &[0]),      // 0: A
                once(1, std_id(0x100), &[1]),      // 1: B, 1 ns after A started
                once(1, std_id(0x050), &[FRAME8]), // 2: C, exactly when A ends
                once(0, std_id(0x300), &[0]),      // 3: D
            ],
        }
    }

    #[test]
    fn arbitration_is_non_preemptive_and_includes_frames_queued_at_its_instant() {
        let report = run(&four_frames(TxQueue::Priority), 10 * MS, 1);
        // A wins at 0 against D (same node). B arrives 1 ns late and must wait; C, queued at the
        // very instant A ends, takes part in the next arbitration and beats B.
        assert_eq!(
            spans(&report),
            vec![
                (0, FRAME8, 0),
                (FRAME8, 2 * FRAME8, 2),
                (2 * FRAME8, 3 * FRAME8, 1),
                (3 * FRAME8, 4 * FRAME8, 3)
            ]
        );
        let max: Vec<_> = report.streams.iter().map(|s| s.max_response_ns.unwrap()).collect();
        assert_eq!(max, vec![FRAME8, 3 * FRAME8 - 1, FRAME8, 4 * FRAME8]);
        // All work done: the run stops when the last frame ends.
        assert_eq!(report.end_ns, 4 * FRAME8);
        assert_eq!(report.busy_ns, 4 * FRAME8);
    }

    #[test]
    fn a_fifo_node_offers_its_oldest_frame() {
        let report = run(&four_frames(TxQueue::Fifo), 10 * MS, 1);
        // Node 1 offers B (older) although C has the higher priority: priority inversion.
        assert_eq!(
            spans(&report),
            vec![
                (0, FRAME8, 0),
                (FRAME8, 2 * FRAME8, 1),
                (2 * FRAME8, 3 * FRAME8, 2),
                (3 * FRAME8, 4 * FRAME8, 3)
            ]
        );
        assert_eq!(report.streams[2].max_response_ns, Some(2 * FRAME8));
    }

    #[test]
    fn standard_beats_extended_with_the_same_base_and_lengths_follow_the_format() {
        let bus = Bus {
            bit_rate_bps: 500_000,
            nodes: vec![Node::default(), Node::default()],
            servers: vec![],
            streams: vec![
                once(0, Sender::Id(CanId::Extended(0x123 << 18)), &[0]),
                once(1, std_id(0x123), &[0]),
            ],
        };
        let report = run(&bus, MS, 0);
        // 8 bytes: 135 bits (11-bit) = 270 µs, then 160 bits (29-bit) = 320 µs.
        assert_eq!(spans(&report), vec![(0, FRAME8, 1), (FRAME8, FRAME8 + 320 * US, 0)]);
    }

    #[test]
    fn a_message_of_several_frames_ends_with_its_last_frame() {
        let bus = Bus {
            bit_rate_bps: 500_000,
            nodes: vec![Node::default(), Node::default()],
            servers: vec![],
            streams: vec![
                once(0, std_id(0x300), &[0]).with_frames_per_message(3),
                // Higher priority, queued during the first frame: it gets in between frames.
                once(1, std_id(0x100), &[10 * US]),
            ],
        };
        let report = run(&bus, 10 * MS, 0);
        assert_eq!(
            spans(&report),
            vec![
                (0, FRAME8, 0),
                (FRAME8, 2 * FRAME8, 1),
                (2 * FRAME8, 3 * FRAME8, 0),
                (3 * FRAME8, 4 * FRAME8, 0)
            ]
        );
        let s = &report.streams[0];
        assert_eq!((s.released, s.delivered, s.frames_sent), (1, 1, 3));
        assert_eq!(s.max_response_ns, Some(4 * FRAME8));
    }

    /// A message of 2^32 - 1 frames is one entry in its node's queue (it was one per frame, 170 GB):
    /// in 10 ms at 500 kbit/s, 37 frames of 270 µs go out (9.99 ms): 36 of the message, not
    /// delivered, and a frame of a higher priority queued during its first frame, which gets in
    /// after it (response 2 x 270 - 10 µs); the same through a FIFO node and a sporadic server.
    #[test]
    fn a_message_of_many_frames_costs_one_entry() {
        let huge = |sender| once(0, sender, &[0]).with_frames_per_message(u32::MAX);
        for (queue, sender, servers) in [
            (TxQueue::Priority, std_id(0x300), vec![]),
            (TxQueue::Fifo, std_id(0x300), vec![]),
            (
                TxQueue::Priority,
                Sender::Server(0),
                vec![ServerSpec {
                    node: 0,
                    normal_id: CanId::Standard(0x300),
                    low_id: Some(CanId::Standard(0x301)),
                    init_budget: u32::MAX,
                    repl_period_ns: MS,
                }],
            ),
        ] {
            let bus = Bus {
                bit_rate_bps: 500_000,
                nodes: vec![Node { queue }, Node::default()],
                servers,
                streams: vec![huge(sender), once(1, std_id(0x100), &[10 * US])],
            };
            let report = run(&bus, 10 * MS, 0);
            let s = &report.streams[0];
            assert_eq!((s.released, s.delivered, s.frames_sent), (1, 0, 36), "{queue:?}");
            assert_eq!(report.streams[1].max_response_ns, Some(2 * FRAME8 - 10 * US), "{queue:?}");
        }
    }

    /// A bus with every kind of arrival process, a FIFO node and a server.
    fn mixed_bus() -> Bus {
        Bus {
            bit_rate_bps: 250_000,
            nodes: vec![Node::default(), Node { queue: TxQueue::Fifo }, Node::default()],
            servers: vec![ServerSpec {
                node: 2,
                normal_id: CanId::Standard(0x080),
                low_id: Some(CanId::Standard(0x700)),
                init_budget: 3,
                repl_period_ns: 5 * MS,
            }],
            streams: vec![
                Stream::new(
                    0,
                    std_id(0x100),
                    Payload::bytes(8),
                    Arrivals::Periodic { period_ns: 2 * MS, offset_ns: 0, jitter_ns: 500 * US },
                ),
                Stream::new(
                    1,
                    std_id(0x200),
                    Payload::Bytes { bytes: 4, stuffing: Stuffing::None },
                    Arrivals::Sporadic { offset_ns: 300 * US, min_gap_ns: 3 * MS, mean_extra_gap_ns: MS },
                ),
                Stream::new(1, Sender::Id(CanId::Extended(0x0150_0000)), Payload::bytes(2), {
                    Arrivals::Poisson { mean_gap_ns: 1500 * US }
                }),
                Stream::new(2, Sender::Server(0), Payload::bytes(8), Arrivals::Poisson { mean_gap_ns: MS })
                    .with_frames_per_message(2),
                Stream::new(2, std_id(0x010), Payload::bytes(1), Arrivals::Times(vec![0, 0, 7 * MS, 7 * MS])),
            ],
        }
    }

    #[test]
    fn same_seed_same_report_bit_for_bit() {
        let bus = mixed_bus();
        let a = run(&bus, 500 * MS, 7);
        let b = run(&bus, 500 * MS, 7);
        assert_eq!(a, b);
        assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
        let c = run(&bus, 500 * MS, 8);
        assert_ne!(a.trace, c.trace);
    }

    #[test]
    fn frames_and_messages_are_conserved() {
        let bus = mixed_bus();
        for (seed, until) in [(1, 300 * MS), (2, 123_456_789), (3, 7 * MS)] {
            let report = run(&bus, until, seed);
            // The wire carries one frame at a time.
            for w in report.trace.windows(2) {
                assert!(w[0].end_ns <= w[1].start_ns, "overlap {w:?}");
            }
            // Completed frames, per stream and in total busy time, agree with the trace.
            let done: Vec<_> = report.trace.iter().filter(|t| t.end_ns <= report.end_ns).collect();
            assert!(report.trace.len() - done.len() <= 1, "at most one frame is cut by the end");
            assert_eq!(report.busy_ns, done.iter().map(|t| t.end_ns - t.start_ns).sum::<i64>());
            for (i, s) in report.streams.iter().enumerate() {
                assert_eq!(s.frames_sent, done.iter().filter(|t| t.stream == i).count() as u64);
                let frames = u64::from(bus.streams[i].frames_per_message);
                assert!(s.frames_sent <= s.released * frames);
                assert!(s.frames_sent >= s.delivered * frames);
                assert_eq!(s.released, s.delivered + s.pending());
            }
            // The server's sends are its stream's frames, each at its normal or low identifier.
            let served: Vec<_> = report.trace.iter().filter(|t| t.stream == 3).collect();
            let normal = served.iter().filter(|t| t.id == CanId::Standard(0x080)).count() as u64;
            let srv = &report.servers[0];
            assert_eq!((srv.normal_sends, srv.low_sends), (normal, served.len() as u64 - normal));
            assert_eq!(srv.replenishments, srv.normal_sends);
            assert!(srv.timer_expiries <= srv.replenishments);
        }
    }

    #[test]
    fn the_explicit_arrivals_are_all_served_and_the_run_stops_when_done() {
        let bus = Bus {
            bit_rate_bps: 1_000_000,
            nodes: vec![Node::default()],
            servers: vec![],
            streams: vec![Stream::new(
                0,
                std_id(1),
                Payload::Bits(1000),
                Arrivals::Times(vec![0, 0, 5 * MS]),
            )],
        };
        let report = run(&bus, 1_000 * MS, 0);
        assert_eq!(report.end_ns, 6 * MS);
        let s = &report.streams[0];
        assert_eq!((s.released, s.delivered), (3, 3));
        assert_eq!((s.min_response_ns, s.max_response_ns), (Some(MS), Some(2 * MS)));
        assert_eq!(s.mean_response_ns, Some(4.0 * MS as f64 / 3.0));
        // Cut in the middle of the second frame: two released, one delivered, one pending.
        let cut = run(&bus, 1_500 * US, 0);
        let s = &cut.streams[0];
        assert_eq!((cut.end_ns, s.released, s.delivered, s.pending()), (1_500 * US, 2, 1, 1));
        assert_eq!(cut.busy_ns, MS);
    }

    #[test]
    fn bad_buses_are_rejected_with_the_place() {
        let mut bus = four_frames(TxQueue::Priority);
        bus.streams[3].sender = std_id(0x100);
        let e = bus.validate().unwrap_err();
        assert_eq!(e.to_string(), "streams[3].sender: identifier 0x100 is already used by streams[1].sender");
        let mut bus = four_frames(TxQueue::Priority);
        bus.streams[0].payload = Payload::bytes(9);
        assert_eq!(bus.validate().unwrap_err().place, "streams[0].payload");
        let mut bus = four_frames(TxQueue::Priority);
        bus.streams[0].sender = Sender::Server(0);
        assert_eq!(bus.validate().unwrap_err().to_string(), "streams[0].sender: no server 0");
        let mut bus = four_frames(TxQueue::Priority);
        bus.streams[2].arrivals = Arrivals::Times(vec![5, 3]);
        assert_eq!(bus.validate().unwrap_err().place, "streams[2].arrivals");
        let mut bus = four_frames(TxQueue::Priority);
        bus.streams[2].sender = std_id(0x800);
        assert_eq!(bus.validate().unwrap_err().message, "identifier 0x800 does not fit its format");
    }

    // -----------------------------------------------------------------------------------------
    // Simulation never beats analysis. The bound is the revised CAN analysis of Davis, Burns,
    // Bril and Lukkien (2007, eqs. 13–16: busy period, every instance q in it), written here
    // only to check the simulator; the project's analysis lives in `fixed_priority`.

    struct Msg {
        key: u32,
        c: i64,
        t: i64,
        j: i64,
    }

    /// Worst-case response time of `m` from its release (jitter included), or `None` if the
    /// level-m busy period does not close.
    fn revised_can_rta(msgs: &[Msg], m: usize, tau_bit: i64) -> Option<i64> {
        let me = &msgs[m];
        let hp: Vec<&Msg> = msgs.iter().filter(|k| k.key < me.key).collect();
        let blocking = msgs.iter().filter(|k| k.key > me.key).map(|k| k.c).max().unwrap_or(0);
        let ceil = |a: i64, b: i64| (a + b - 1) / b;
        let limit = 1_000 * msgs.iter().map(|k| k.t).max().unwrap();
        let fix = |start: i64, f: &dyn Fn(i64) -> i64| -> Option<i64> {
            let mut x = start;
            loop {
                let next = f(x);
                if next == x {
                    return Some(x);
                }
                if next > limit {
                    return None;
                }
                x = next;
            }
        };
        let busy = fix(me.c, &|t| {
            blocking + msgs.iter().filter(|k| k.key <= me.key).map(|k| ceil(t + k.j, k.t) * k.c).sum::<i64>()
        })?;
        let instances = ceil(busy + me.j, me.t);
        let mut worst = 0;
        for q in 0..instances {
            let w = fix(blocking + q * me.c, &|w| {
                blocking + q * me.c + hp.iter().map(|k| ceil(w + k.j + tau_bit, k.t) * k.c).sum::<i64>()
            })?;
            worst = worst.max(me.j + w - q * me.t + me.c);
        }
        Some(worst)
    }

    #[test]
    fn the_revised_rta_reproduces_oracle_4() {
        // Oracle item 4 (zero bit time): B > C > A gives R(B) = 6, R(C) = 9, R(A) = 7. Time is
        // scaled by 1000 so that a bit time of 1 stands for "just after" (τ_bit → 0+).
        let msgs = [
            Msg { key: 3, c: 4000, t: 8000, j: 0 },  // A
            Msg { key: 1, c: 2000, t: 6000, j: 0 },  // B
            Msg { key: 2, c: 1000, t: 15000, j: 0 }, // C
        ];
        let r: Vec<_> = (0..3).map(|m| revised_can_rta(&msgs, m, 1).unwrap()).collect();
        assert_eq!(r, vec![7000, 6000, 9000]);
    }

    #[test]
    fn simulated_responses_never_exceed_the_revised_can_analysis() {
        const BIT_RATE: i64 = 500_000;
        let tau_bit = frame::transmission_ns(1, BIT_RATE);
        let mut rng = ChaCha8Rng::seed_from_u64(2007);
        let (mut sets, mut closest) = (0, 0.0_f64);
        while sets < 200 {
            let n = rng.gen_range(2..=8);
            let nodes = rng.gen_range(1..=4);
            let mut ids: Vec<u16> = (1..=0x7FF).collect();
            let synchronous = rng.gen_bool(0.5);
            let streams: Vec<Stream> = (0..n)
                .map(|_| {
                    let id = ids.swap_remove(rng.gen_range(0..ids.len()));
                    let period_ns = rng.gen_range(1_000..=20_000) * US;
                    let jitter_ns = if rng.gen_bool(0.3) { rng.gen_range(0..=period_ns / 2) } else { 0 };
                    let offset_ns = if synchronous { 0 } else { rng.gen_range(0..period_ns) };
                    Stream::new(
                        rng.gen_range(0..nodes),
                        std_id(id),
                        Payload::bytes(rng.gen_range(0..=8)),
                        Arrivals::Periodic { period_ns, offset_ns, jitter_ns },
                    )
                })
                .collect();
            let msgs: Vec<Msg> = streams
                .iter()
                .map(|s| {
                    let Sender::Id(id) = s.sender else { unreachable!() };
                    let Payload::Bytes { bytes, .. } = s.payload else { unreachable!() };
                    let Arrivals::Periodic { period_ns, jitter_ns, .. } = s.arrivals else { unreachable!() };
                    let c =
                        frame::transmission_ns(frame::worst_case_bits(IdFormat::Standard, bytes), BIT_RATE);
                    Msg { key: id.arbitration_key(), c, t: period_ns, j: jitter_ns }
                })
                .collect();
            let load: f64 = msgs.iter().map(|m| m.c as f64 / m.t as f64).sum();
            if load > 0.95 {
                continue;
            }
            let bounds: Option<Vec<i64>> = (0..n).map(|m| revised_can_rta(&msgs, m, tau_bit)).collect();
            let Some(bounds) = bounds else { continue };
            sets += 1;
            let bus =
                Bus { bit_rate_bps: BIT_RATE, nodes: vec![Node::default(); nodes], servers: vec![], streams };
            let report = bus.simulate(&SimConfig { until_ns: 400 * MS, seed: sets, trace: false }).unwrap();
            for (m, s) in report.streams.iter().enumerate() {
                let simulated = s.max_response_ns.unwrap();
                assert!(
                    simulated <= bounds[m],
                    "set {sets} stream {m}: simulated {simulated} > bound {}",
                    bounds[m]
                );
                closest = closest.max(simulated as f64 / bounds[m] as f64);
            }
        }
        // Synchronous releases without jitter reach the bound of some message exactly or nearly;
        // a simulator far below every bound would be suspicious.
        assert!(closest > 0.95, "closest simulated/bound ratio {closest}");
    }
}
