//! Destinations: each copy's latency measured, integrity checking per VL and plane, redundancy
//! management (or seed 000's deduplication) delivering each frame once, arrivals handled as
//! events or in batches.

use super::arrivals::{Arrival, AHEAD};
use super::forwarding::{Packet, NO_ROUTE};
use super::stats::prefetch;
use super::*;
use crate::dedup::{self, Decision, Dedup, DedupConfig, DeliveryMode};
use crate::model::Traffic;
use std::collections::{HashMap, HashSet};

/// Frames this many apart share an ARINC 664 sequence number (1 to 255, then 1 again): past
/// it, redundancy management cannot tell a frame's twin from a later frame.
pub const SEQUENCE_WINDOW: u64 = 255;

/// A frame redundancy management accepted, whose other copies may still arrive.
#[derive(Clone, Copy)]
pub(super) struct Accepted {
    pub(super) frame: u64,
    pub(super) at: i64,
    /// Copies of the frame still to come (on the other planes).
    pub(super) twins: u32,
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
pub struct Receiver {
    /// Copies of each frame sent to this destination: one per plane reaching it.
    pub(super) copies: u32,
    /// Oldest first. A vector, not a deque: it usually holds a frame or two (at most
    /// [`SEQUENCE_WINDOW`]), so removing one from the front moves little, and one slice is read
    /// with fewer instructions than a deque's two.
    pub(super) awaiting_twins: Vec<Accepted>,
    /// The newest frame accepted.
    pub(super) newest: u64,
    pub(super) duplicates: u64,
}

impl Receiver {
    /// Redundancy management for a destination that receives `copies` copies of each frame
    /// (one per plane reaching it): what the testbed's receivers run, as the simulator does.
    pub fn new(copies: u32) -> Self {
        Receiver { copies, ..Default::default() }
    }

    /// Copies discarded so far as twins of an accepted frame.
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }

    /// Whether a valid copy of `frame` arriving at `at` is a twin of a frame accepted within
    /// `skew_max` (to discard, counted) rather than the first of its frame (to deliver);
    /// `work` counts the entries visited.
    pub fn is_twin(&mut self, frame: u64, at: i64, skew_max: i64, work: &mut u64) -> bool {
        if self.copies <= 1 {
            return false;
        }
        let newest = self.newest.max(frame);
        *work += self.awaiting_twins.len() as u64;
        let live = |a: &Accepted| at - a.at <= skew_max && a.frame + SEQUENCE_WINDOW > newest;
        // Usually every frame held is still live (one or two wait for their twins): the deque is
        // then only read, not rewritten by `retain`.
        if !self.awaiting_twins.iter().all(live) {
            self.awaiting_twins.retain(live);
        }
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
                self.awaiting_twins.push(Accepted { frame, at, twins: self.copies - 1 });
                false
            }
        }
    }
}

/// The AFDX sequence number of a VL's frame: 1 to 255, then 1 again (0 is kept for an end
/// system's reset, which the simulator does not model).
pub fn sequence_number(frame: u64) -> u8 {
    (frame % 255 + 1) as u8
}

/// ARINC 664 Part 7 integrity checking of one VL on one plane at one destination: a copy is
/// valid when its sequence number is one or two after the previous copy's (one frame may have
/// been lost), or is the first received; `last` then takes its number, valid or not, so that
/// after a longer gap one copy is discarded and the check takes the stream up again.
pub fn sequence_valid(last: &mut u8, frame: u64) -> bool {
    let next = |s: u8| if s == 255 { 1 } else { s + 1 };
    let sn = sequence_number(frame);
    let valid = *last == 0 || sn == next(*last) || sn == next(next(*last));
    *last = sn;
    valid
}

/// What a delivery on one route reads and writes besides the latency records, in one record
/// per route (one bounds check and one line, where per-flow, per-node and per-route tables took
/// four of each): the destination's receive latency, the flow's SkewMax, integrity checking's
/// state and count, whether the flow is a VL (checked) and whether redundancy management keeps
/// state for the route's receiver (it is reached on more than one plane).
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
pub(super) struct RouteSink {
    pub(super) receive_ns: i64,
    pub(super) skew_max_ns: i64,
    /// Copies integrity checking discarded.
    pub(super) integrity_discards: u64,
    /// The sequence number of the last copy received (0 before the first).
    pub(super) last_sn: u8,
    pub(super) is_vl: bool,
    pub(super) twins: bool,
}

/// A frame a deduplicator holds or remembers: its receiver, flow and frame number, its emission
/// and its first copy's arrival.
#[derive(Clone, Copy)]
pub(super) struct Held {
    pub(super) rx: u32,
    pub(super) flow: u32,
    pub(super) frame: u64,
    pub(super) emit: i64,
    pub(super) first: i64,
}

/// Frames a deduplicator holds or remembers, by key.
pub(super) type Remembered = HashMap<u64, Held>;

impl Simulator {
    /// One deduplicator per destination end system, when asked for.
    pub(super) fn build_dedups(&self) -> Result<Vec<Option<(Dedup, Remembered)>>, String> {
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

    /// The last bit of a packet reaches its destination end system.
    pub(super) fn arrive(&mut self, packet: u32) {
        let arrival = self.arrival(packet, self.now);
        self.deliver(&arrival);
        self.packets_delivered += 1;
        self.free_packet(packet);
    }

    /// The arrival at `time` of a packet crossing its last port, with what its destination needs.
    pub(super) fn arrival(&self, packet: u32, time: i64) -> Arrival {
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
            node: self.hot.port_next[hop.port as usize].peer,
        }
    }

    /// Handles the logged arrivals due by `horizon`, each destination's in time order, fetching
    /// each one's records [`AHEAD`] arrivals before it is handled.
    pub(super) fn deliver_logged(&mut self, horizon: i64) {
        let Some(log) = self.arrivals.as_mut() else { return };
        let mut all = std::mem::take(&mut self.batch);
        let due = log.take_due(horizon, &mut all);
        let batch = &all[..due];
        for i in 0..batch.len() {
            if let Some(a) = batch.get(i + AHEAD) {
                prefetch(&self.route_sinks[a.route as usize]);
                prefetch(&self.route_stats[a.route as usize]);
                prefetch(&self.delivered[a.rx as usize]);
                prefetch(&self.receivers[a.rx as usize]);
            }
            if let Some(a) = batch.get(i + AHEAD / 2) {
                // Their records are in by now: the histogram counts the arrival will increment,
                // and the frames redundancy management holds, if it keeps any for the route.
                let sink = &self.route_sinks[a.route as usize];
                let at = a.time + sink.receive_ns;
                self.route_stats[a.route as usize].prefetch_record(at - a.start_ns);
                self.delivered[a.rx as usize].prefetch_record(at - a.emit_ns);
                if sink.twins {
                    prefetch(self.receivers[a.rx as usize].awaiting_twins.as_ptr());
                }
            }
            self.deliver(&batch[i]);
        }
        self.events += due as u64;
        self.packets_delivered += due as u64;
        self.batch = all;
    }

    /// A copy of a frame reaches its destination: its latency is measured, integrity checking
    /// (VLs) may discard it, then redundancy management (or deduplication) decides whether its
    /// frame is delivered.
    /// (Inline: a batch runs it for every arrival.)
    #[inline(always)]
    pub(super) fn deliver(&mut self, a: &Arrival) {
        let (f, rx, frame, emit) = (a.flow, a.rx, a.frame, a.emit_ns);
        let sink = &mut self.route_sinks[a.route as usize];
        let at = a.time + sink.receive_ns;
        self.route_stats[a.route as usize].record(at - a.start_ns);
        if sink.is_vl && !sequence_valid(&mut sink.last_sn, frame) {
            sink.integrity_discards += 1;
            return;
        }
        // A frame that reaches this destination on one plane only has no twin to remove.
        if sink.twins {
            if !self.dedups.is_empty() {
                self.deliver_dedup(a.node as usize, rx, f as usize, frame, emit, at);
                return;
            }
            // Redundancy management: the first valid copy of a frame wins; a copy of an
            // accepted frame within SkewMax is discarded.
            if self.receivers[rx as usize].is_twin(frame, at, sink.skew_max_ns, &mut self.work) {
                return;
            }
        }
        self.frame_delivered(rx, f as usize, frame, at - emit);
    }

    /// Seed 000's deduplication at the destination: the counting Bloom filter and hash table
    /// decide; in hold-until-twin mode a frame is delivered when its twin arrives or when its
    /// SkewMax runs out (at first arrival + SkewMax).
    pub(super) fn deliver_dedup(&mut self, node: usize, rx: u32, f: usize, frame: u64, emit: i64, at: i64) {
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
    pub(super) fn expire_held(&mut self, node: usize, at: i64) {
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
}
