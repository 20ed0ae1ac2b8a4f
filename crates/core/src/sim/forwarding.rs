//! The forwarding path: copies and the packets that carry them through ports, a frame leaving a
//! port, switches (store-and-forward or cut-through) forwarding it to the next ports, policing at
//! their inputs, losses counted downstream.

use super::engine::Ev;
use super::stats::prefetch;
use super::tables::PortNext;
use super::*;
use crate::model::{NodeKind, Traffic};

/// No route delivered at a hop.
pub(super) const NO_ROUTE: u32 = u32::MAX;

/// What a copy's crossing of a port needs on the hot path, 16 bytes. Crossings are numbered
/// breadth-first per flow, so the crossings a copy goes to next are `first_next..first_next +
/// n_next`, and a flow's crossings lie together.
#[derive(Clone, Copy)]
pub(super) struct Hop {
    pub(super) port: u32,
    /// The route (stats index) delivered when the next node is that route's destination, or
    /// [`NO_ROUTE`].
    pub(super) deliver: u32,
    /// The first next crossing; for a hop that delivers (it has no next crossings), the
    /// route's receiver.
    pub(super) first_next: u32,
    pub(super) n_next: u32,
}

/// One copy of one frame on one plane.
pub(super) struct Copy {
    pub(super) flow: u32,
    pub(super) frame: u64,
    pub(super) seq: u32,
    /// When the frame was emitted by the source's regulator (before the plane skew).
    pub(super) emit_ns: i64,
    /// When this copy entered its source port (latency reference).
    pub(super) start_ns: i64,
    pub(super) frame_bits: u32,
    pub(super) wire_bits: u32,
    pub(super) plane: u8,
    pub(super) refs: u32,
}

/// A copy in one port: the unit a scheduler queues, with its hop and its length on the wire
/// (copied in: packets are few and stay in cache, the hops are many, and a FIFO port needs
/// nothing of the copy), in half a cache line.
#[derive(Clone, Copy)]
#[repr(align(32))]
pub(super) struct Packet {
    pub(super) copy: u32,
    pub(super) crossing: u32,
    pub(super) hop: Hop,
    pub(super) wire_bits: u32,
    /// From the packet's last bit reaching a switch to its entering the port's queue (the
    /// switch's latency, less a cut-through gain), ns; [`FROM_SOURCE`] at a source's port.
    /// Policing, at the queue's entrance, needs the arrival time.
    pub(super) lag_ns: i32,
}

/// `Packet::lag_ns` of a packet that entered the network at this port.
pub(super) const FROM_SOURCE: i32 = i32::MIN;

impl Simulator {
    pub(super) fn new_copy(&mut self, c: Copy) -> u32 {
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

    pub(super) fn new_packet(&mut self, copy: u32, crossing: u32) -> u32 {
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

    /// `packet`, which has left its port, now carries its copy to crossing `crossing` (as if
    /// freed and created again: a packet more is counted).
    pub(super) fn reuse_packet(&mut self, packet: u32, crossing: u32) -> u32 {
        self.packets_created += 1;
        let p = &mut self.packets[packet as usize];
        p.crossing = crossing;
        p.hop = self.hops[crossing as usize];
        p.lag_ns = FROM_SOURCE;
        packet
    }

    pub(super) fn free_packet(&mut self, packet: u32) {
        let copy = self.packets[packet as usize].copy;
        self.free_packets.push(packet);
        let c = &mut self.copies[copy as usize];
        c.refs -= 1;
        if c.refs == 0 {
            self.free_copies.push(copy);
        }
    }

    /// A copy heads for its last port: its destination's records will be needed on arrival and
    /// are fetched while other events run.
    pub(super) fn prefetch_destination(&self, hop: Hop) {
        let (route, rx) = (hop.deliver as usize, hop.first_next as usize);
        prefetch(&self.route_sinks[route]);
        prefetch(&self.route_stats[route]);
        prefetch(&self.delivered[rx]);
        prefetch(&self.receivers[rx]);
    }

    /// A copy starts on a link: what its end of transmission will read is fetched while other
    /// events run: the next hops, or on its last link the histogram counts its arrival will
    /// increment (the latencies are known now).
    pub(super) fn prefetch_counts(&self, packet: u32, port: usize, tx_end: i64) {
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

    /// The packet's last bit leaves `port` at `end`. A switch downstream gets the copy after
    /// propagation and its technological latency (one event: straight to the next port's queue);
    /// a destination's arrival is logged for a batch (see [`super::arrivals`]), or with
    /// retransmission, deduplication or cut-through switches is an event, so that redundancy
    /// management sees copies in arrival order either way.
    pub(super) fn depart(&mut self, packet: u32, port: usize, end: i64) {
        let next = self.hot.port_next[port];
        let prop = next.prop_ns;
        let Packet { copy, crossing, hop, .. } = self.packets[packet as usize];
        if hop.deliver != NO_ROUTE && self.arrivals.is_some() {
            let arrival = self.arrival(packet, end + prop);
            let batch_due = self.arrivals.as_mut().is_some_and(|log| log.log(arrival));
            self.free_packet(packet);
            if batch_due {
                self.deliver_logged(self.now);
            }
        } else if hop.deliver != NO_ROUTE {
            self.push_lane(next.arrive_lane, end + prop, Ev::Arrive { packet });
            if self.now < end {
                // A FIFO port's frame, ahead of its end (a scheduled port's fetched at its start).
                self.prefetch_counts(packet, port, end);
            }
        } else {
            self.forward(packet, copy, crossing, hop, next, end + prop);
        }
    }

    /// A switch (after the link `link`) receives the packet's last bit at `at` and queues a copy
    /// at each next port.
    pub(super) fn forward(
        &mut self,
        packet: u32,
        copy: u32,
        crossing: u32,
        hop: Hop,
        link: PortNext,
        at: i64,
    ) {
        self.packets_forwarded += 1;
        debug_assert_eq!(self.net.nodes[link.peer as usize].kind, NodeKind::Switch);
        let (latency, cut_through, lane) = (link.peer_latency_ns, link.peer_cut_through, link.forward_lane);
        if hop.n_next == 0 {
            self.free_packet(packet);
        }
        for d in hop.first_next..hop.first_next + hop.n_next {
            // The arriving packet carries the copy on to its first next port (its copy's record
            // is not touched), a new packet to each other one.
            let p = if d == hop.first_next { self.reuse_packet(packet, d) } else { self.new_packet(copy, d) };
            let next = self.packets[p as usize].hop;
            if next.deliver != NO_ROUTE {
                if self.arrivals.is_none() {
                    self.prefetch_destination(next);
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
    }

    /// ARINC 664 account-based policing of a VL frame whose last bit reached a switch at `at`,
    /// as it enters the queue of crossing `d` (when `defaults.policing_jitter` is set): the
    /// account refills at Lmax per BAG up to Lmax·(1 + J/BAG); a frame needs credit for its size,
    /// else it is dropped and counted.
    pub(super) fn police(&mut self, d: u32, copy: u32, at: i64) -> bool {
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
    pub(super) fn count_loss(&mut self, h: u32) {
        let (a, b) = (self.reach_at[h as usize] as usize, self.reach_at[h as usize + 1] as usize);
        for &r in &self.reach[a..b] {
            self.route_losses[r as usize] += 1;
        }
    }

    /// Cut-through forwards once the header is in: the frame may leave earlier by its reception
    /// time minus the header's, but never finish before it has fully arrived.
    pub(super) fn cut_through_gain(&self, from: usize, to: usize, copy: u32) -> i64 {
        const HEADER_BITS: f64 = (8.0 + 14.0) * 8.0; // preamble+SFD and the Ethernet header
        let c = &self.copies[copy as usize];
        let rx = &self.ports[self.hops[from].port as usize];
        let tx = &self.ports[self.hops[to].port as usize];
        let rx_ns = c.wire_bits as f64 * rx.ps_per_bit / 1e3;
        let tx_ns = c.wire_bits as f64 * tx.ps_per_bit / 1e3;
        let header_ns = HEADER_BITS * rx.ps_per_bit / 1e3;
        (rx_ns - header_ns).min(tx_ns).max(0.0).floor() as i64
    }
}
