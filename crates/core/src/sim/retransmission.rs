//! Retransmission on timeout: each frame awaited at its flow's destinations, sent again once
//! when some destination has not delivered it in time.

use super::engine::{Ev, Simulator};

/// A flow without a retransmission timeout.
pub(super) const NO_TIMEOUT: i64 = i64::MAX;

/// A frame's key among those awaited for retransmission.
pub(super) fn retransmit_key(f: usize, frame: u64) -> u64 {
    debug_assert!(f < 1 << 24 && frame < 1 << 40, "flow {f}, frame {frame}: keys would collide");
    ((f as u64) << 40) | frame
}

impl Simulator {
    /// A frame just emitted is awaited at each of its flow's destinations within the flow's
    /// timeout; its timeout fires 1 ns after, so that every delivery on time comes first.
    /// (A call apart: every emission would otherwise carry its hashing inline.)
    #[inline(never)]
    pub(super) fn await_delivery(&mut self, f: usize, frame: u64, emit_ns: i64) {
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
    #[inline(always)]
    pub(super) fn frame_delivered(&mut self, rx: u32, f: usize, frame: u64, latency: i64) {
        self.delivered[rx as usize].record(latency);
        if self.cfg.retransmit {
            self.delivered_in_time(rx, f, frame, latency);
        }
    }

    /// A frame awaited for retransmission is no longer awaited at `rx` if delivered in time.
    /// Apart from [`Simulator::frame_delivered`], which every delivery runs inline.
    #[inline(never)]
    fn delivered_in_time(&mut self, rx: u32, f: usize, frame: u64, latency: i64) {
        if latency > self.flow_timeout_ns[f] {
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
    pub(super) fn timeout(&mut self, slot: u32) {
        let key = self.timeouts[slot as usize];
        self.free_timeouts.push(slot);
        self.sources_cold[(key >> 40) as usize].frames_due += 1;
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
}
