//! The event loop and time: the simulator's state, its events and the loop that runs them in
//! (time, sequence) order. What each event does is in the files named for it: `sources`
//! (releases, regulators), `ports` (egress queues and links), `forwarding` (switches, copies and
//! packets), `destinations` (integrity checking, redundancy management, deduplication),
//! `retransmission`, `report` (measurement); `tables` builds the engine's flat tables from the
//! model.

use super::arrivals::{Arrival, ArrivalLog};
use super::destinations::{Receiver, Remembered, RouteSink};
use super::forwarding::{Copy, Hop, Packet};
use super::ports::{PortQueue, PortSim, NO_WAKE};
use super::queue::{EventQueue, Kind};
use super::sources::{Source, SourceCold};
use super::stats::Latency;
use super::tables::Hot;
use super::*;
use crate::dedup::Dedup;
use crate::model::Network;
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
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

/// The packet simulator; run it with [`Simulator::run_until`] and read [`Simulator::report`].
pub struct Simulator {
    pub(super) net: Network,
    pub(super) hot: Hot,
    pub(super) cfg: SimConfig,
    pub(super) rng: ChaCha8Rng,
    pub(super) queue: EventQueue<Ev>,
    pub(super) now: i64,
    pub(super) hops: Vec<Hop>,
    /// The routes downstream of hop `h`: `reach[reach_at[h]..reach_at[h + 1]]` (losses at a hop
    /// are losses on each of them).
    pub(super) reach_at: Vec<u32>,
    pub(super) reach: Vec<u32>,
    /// Policing at each hop's port input (switch ports fed by a link): (credit bits, last update
    /// ns), with the VL's refill rate and ceiling in [`Simulator::police`].
    pub(super) accounts: Vec<(f64, i64)>,
    /// (plane index, first hop, number of first hops) per plane a flow is sent on: flow `f`'s
    /// are `starts[starts_at[f]..starts_at[f + 1]]`.
    pub(super) starts_at: Vec<u32>,
    pub(super) starts: Vec<(u8, u32, u32)>,
    pub(super) sources: Vec<Source>,
    pub(super) sources_cold: Vec<SourceCold>,
    pub(super) ports: Vec<PortSim>,
    /// Per port: frames dropped at a full buffer, and policed.
    pub(super) port_drops: Vec<(u64, u64)>,
    pub(super) copies: Vec<Copy>,
    pub(super) free_copies: Vec<u32>,
    pub(super) packets: Vec<Packet>,
    pub(super) free_packets: Vec<u32>,
    pub(super) route_stats: Vec<Latency>,
    pub(super) route_losses: Vec<u64>,
    /// What a delivery reads per route (VL, destination, plane), integrity checking included.
    pub(super) route_sinks: Vec<RouteSink>,
    /// Route index -> (flow, destination node, plane, receiver index).
    pub(super) routes: Vec<(u32, u32, u8, u32)>,
    pub(super) receivers: Vec<Receiver>,
    /// Per receiver: the latencies of the frames delivered after redundancy management.
    pub(super) delivered: Vec<Latency>,
    /// Retransmission: each flow's timeout (or [`NO_TIMEOUT`]) and receivers; the frames
    /// awaited, with the receivers that have not yet delivered them in time; the frames whose
    /// timeout is pending, by event slot.
    pub(super) flow_timeout_ns: Vec<i64>,
    pub(super) flow_receivers: Vec<Vec<u32>>,
    /// Each receiver's destination node.
    pub(super) receiver_node: Vec<u32>,
    pub(super) awaited: HashMap<u64, Vec<u32>>,
    pub(super) timeouts: Vec<u64>,
    pub(super) free_timeouts: Vec<u32>,
    /// Bloom-filter deduplication per destination node (empty when not asked for).
    pub(super) dedups: Vec<Option<(Dedup, Remembered)>>,
    /// Arrivals at destinations logged and handled in batches (see [`super::arrivals`]), or
    /// `None` when they are events: with retransmission or deduplication (the destination acts
    /// on the network or on its own timers) and with cut-through switches.
    pub(super) arrivals: Option<ArrivalLog>,
    pub(super) batch: Vec<Arrival>,
    pub(super) expired: Vec<u64>,
    pub(super) events: u64,
    /// Work done beyond events (entries of per-destination state visited), for tests that
    /// check the cost per frame-hop does not grow with the run.
    pub(super) work: u64,
    pub(super) frame_hops: u64,
    pub(super) packets_created: u64,
    pub(super) packets_delivered: u64,
    pub(super) packets_forwarded: u64,
    pub(super) packets_dropped: u64,
    pub(super) packets_policed: u64,
    pub(super) wall_s: f64,
    /// What the run was estimated to need before it started.
    pub(super) memory: super::memory::Estimate,
    pub trace: Vec<TraceRecord>,
    /// The scenario this run replays, if any.
    pub(super) scenario: Option<Box<super::scenario::ScenarioState>>,
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
        if net.kind == crate::model::NetworkKind::ServerGraph {
            return Err(
                "a server graph has no frames and no links to simulate; analyse it with `rtnetlab analyze`"
                    .into(),
            );
        }
        // A trace records each frame as it starts, in time order: FIFO ports then run as any
        // other scheduler, on events.
        let generic_fifo = cfg.trace_limit > 0;
        Simulator::build(net, cfg, generic_fifo, Some(0), None)
    }

    /// A simulator running a scenario already resolved against `net` (the worst-case search's
    /// evaluations: `cfg.scenario` is ignored).
    pub fn with_scenario(
        net: &Network,
        cfg: SimConfig,
        scenario: super::scenario::ScenarioTables,
    ) -> Result<Simulator, String> {
        Simulator::build(net, cfg, false, Some(0), Some(scenario))
    }

    /// A simulator whose FIFO ports run the boxed FIFO behaviour on events, as every other
    /// scheduler does (the fast path's reference).
    #[cfg(test)]
    pub(super) fn with_generic_fifo(net: &Network, cfg: SimConfig) -> Result<Simulator, String> {
        Simulator::build(net, cfg, true, Some(0), None)
    }

    /// A simulator whose arrivals at destinations are events (the arrival log's reference), or
    /// are handled in batches taken every `batch` arrivals logged.
    #[cfg(test)]
    pub(super) fn with_arrivals(
        net: &Network,
        cfg: SimConfig,
        batch: Option<usize>,
    ) -> Result<Simulator, String> {
        Simulator::build(net, cfg, false, batch, None)
    }

    /// Whether arrivals at destinations are logged rather than events.
    #[cfg(test)]
    pub(super) fn logs_arrivals(&self) -> bool {
        self.arrivals.is_some()
    }

    #[inline(always)]
    pub(super) fn push(&mut self, time: i64, ev: Ev) {
        let kind = if matches!(ev, Ev::Release { .. }) { Kind::Release } else { Kind::Other };
        self.queue.push(self.now, time, ev, kind);
    }

    /// Pushes an event due `lane`'s delay from now.
    #[inline(always)]
    pub(super) fn push_lane(&mut self, lane: u8, time: i64, ev: Ev) {
        self.queue.push(self.now, time, ev, Kind::Lane(lane));
    }

    /// Plane names, in plane order.
    pub fn plane_names(&self) -> Vec<String> {
        self.net.planes.clone()
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
        loop {
            // A scenario's entries into ports wait until the events of their ns are done.
            let held = self.entries_held();
            let Some(e) = self.queue.pop_due(if held { self.now } else { end }) else {
                if held {
                    self.enter_held();
                    continue;
                }
                break;
            };
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
                    if let PortQueue::Scheduled(s) = &mut self.ports[port as usize].queue {
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
}
