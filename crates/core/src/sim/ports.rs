//! Egress ports: each port's queue (a FIFO port scheduling frames as they arrive, any other
//! scheduler's behaviour run on events) and its link, whose time is exact.

use super::engine::Ev;
use super::forwarding::{Packet, FROM_SOURCE};
use super::stats::prefetch;
use super::*;
use crate::model::Traffic;
use crate::schedulers::{Behaviour, Queued};
use std::collections::VecDeque;

/// A frame a FIFO port has scheduled but not yet started to send.
#[derive(Clone, Copy)]
pub(super) struct Waiting {
    /// The first ns at which it has started (its exact start, rounded up).
    pub(super) started: i64,
    /// Its end, rounded down, and the ns it adds to the port's busy time.
    pub(super) end: i64,
    pub(super) tx_ns: i64,
    pub(super) wire_bits: u32,
}

/// How a port picks its next frame. A FIFO port (nearly every port of an AFDX network) needs no
/// events of its own: first in, first out and work-conserving, a frame entering at `t` leaves
/// at `max(t, free_at)`, known at once, so the port forwards it to its next hop straight away
/// and keeps only what its backlog and buffer need (frames scheduled but not started). Any other
/// scheduler runs its boxed behaviour, started and ended by events.
pub(super) enum PortQueue {
    Fifo { waiting: VecDeque<Waiting> },
    Scheduled(Scheduled),
}

/// A scheduled port's behaviour, the frame it is sending and its shaper's pending wake-up.
pub(super) struct Scheduled {
    pub(super) behaviour: Box<dyn Behaviour>,
    pub(super) busy: bool,
    pub(super) current: u32,
    pub(super) tx_end: i64,
    /// When a wake-up event is pending, or [`NO_WAKE`].
    pub(super) wake_at: i64,
}

/// No wake-up pending.
pub(super) const NO_WAKE: i64 = i64::MAX;

/// An egress port in two cache lines, fetched ahead of each arrival: the first holds what a
/// frame's arrival at a FIFO port reads and writes.
///
/// The link's time is exact: the end of the last frame scheduled is kept as whole ns plus a
/// fraction of 2^-64 ns, each frame taking `wire bits x ns_per_bit` (ns per bit rounded down
/// to 2^-64 ns, an error below 2^-32 ns per frame, never upwards), so rounding does not
/// accumulate over a busy period; events happen at the exact times rounded down to the ns (see
/// [`PortSim::transmit`]).
#[repr(C, align(64))]
pub(super) struct PortSim {
    pub(super) link: Link,
    /// A FIFO port's end of the last frame started (as of the latest arrival), rounded down;
    /// `link.free_at` when no frame waits.
    pub(super) started_end: i64,
    pub(super) queued_bits: u64,
    pub(super) ps_per_bit: f64,
    pub(super) max_backlog_bits: f64,
    /// The buffer's size, or `u64::MAX`.
    pub(super) buffer_bits: u64,
    pub(super) busy_ns: i64,
    pub(super) frames: u64,
    pub(super) queue: PortQueue,
}

/// A frame's transmission on a link: its exact start rounded down and up, its exact end rounded
/// down.
#[derive(Clone, Copy)]
pub(super) struct Transmission {
    pub(super) start: i64,
    pub(super) started: i64,
    pub(super) end: i64,
}

/// `ns_per_bit` of a link of `rate` bit/s: 10^9 x 2^64 / rate rounded down, a rate that is not a
/// whole number taken as the next one up (shorter, never longer, than the exact time); rates of
/// 2^128 bit/s and more send in no time.
pub(crate) fn ns_per_bit(rate: f64) -> u128 {
    pub(super) const NS_FIXED: u128 = 1_000_000_000 << 64;
    if rate >= 2f64.powi(128) {
        return 0;
    }
    NS_FIXED / (rate.ceil().max(1.0) as u128)
}

/// An egress port's link.
#[repr(C)]
pub(super) struct Link {
    /// The end of the last frame scheduled (whole ns and fraction): the link is free from then.
    pub(super) free_at: i64,
    pub(super) free_frac: u64,
    /// ns per bit in fixed point (64 fractional bits), rounded down.
    pub(super) ns_per_bit: u128,
}

impl Link {
    /// Schedules a frame of `wire_bits` on the link at `now` or when the frame before it ends,
    /// whichever is later, exactly.
    #[inline(always)]
    pub(super) fn transmit(&mut self, now: i64, wire_bits: u32) -> Transmission {
        let (start, frac) =
            if (self.free_at, self.free_frac) > (now, 0) { (self.free_at, self.free_frac) } else { (now, 0) };
        let end = frac as u128 + self.ns_per_bit * wire_bits as u128;
        self.free_at = start.saturating_add((end >> 64) as i64);
        self.free_frac = end as u64;
        Transmission { start, started: start + (frac != 0) as i64, end: self.free_at }
    }
}

impl Simulator {
    /// A packet enters its port's queue (after policing, at a switch's input).
    pub(super) fn enqueue(&mut self, packet: u32) {
        if self.scenario.is_some() && self.hold_entry(packet) {
            return;
        }
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
            if let PortQueue::Fifo { waiting } = &mut ps.queue {
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
        let sending_until = match &ps.queue {
            PortQueue::Fifo { .. } => ps.started_end,
            PortQueue::Scheduled(s) if s.busy => s.tx_end,
            PortQueue::Scheduled(_) => now,
        };
        let in_flight =
            if sending_until > now { (sending_until - now) as f64 * 1e3 / ps.ps_per_bit } else { 0.0 };
        // The queued bits converted through i64 (one instruction; they are far below 2^63, where
        // both conversions agree), and the maximum kept by a comparison (the backlog is never
        // NaN): the same value as `f64::max` of the `u64` conversion, fewer instructions.
        let backlog = ps.queued_bits as i64 as f64 + in_flight;
        if backlog > ps.max_backlog_bits {
            ps.max_backlog_bits = backlog;
        }
        match &mut ps.queue {
            PortQueue::Fifo { waiting } => {
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
            PortQueue::Scheduled(s) => {
                let c = &self.copies[copy as usize];
                let class = self.hot.flow_class[c.flow as usize];
                let frame_bits = c.frame_bits;
                s.behaviour
                    .enqueue(Queued { frame: packet, class, flow: c.flow, wire_bits: wire, frame_bits }, now);
                if !s.busy {
                    self.try_start(port);
                }
            }
        }
    }

    /// A scheduled (non-FIFO) port that is idle starts its scheduler's next frame, or waits for
    /// its shaper.
    pub(super) fn try_start(&mut self, port: usize) {
        let now = self.now;
        let ps = &mut self.ports[port];
        let PortQueue::Scheduled(s) = &mut ps.queue else {
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

    /// Both cache lines of an egress port, ahead of a frame's arrival there.
    pub(super) fn prefetch_port(&self, port: usize) {
        let p: *const PortSim = &self.ports[port];
        prefetch(p);
        prefetch((p as *const u8).wrapping_add(64));
    }

    pub(super) fn record_trace(&mut self, port: usize, packet: u32, now: i64) {
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
    pub(super) fn tx_end(&mut self, port: usize) {
        let PortQueue::Scheduled(s) = &mut self.ports[port].queue else {
            unreachable!("only scheduled ports end transmissions by events")
        };
        s.busy = false;
        let packet = s.current;
        self.depart(packet, port, self.now);
        self.try_start(port);
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
