//! The event queue: events come out in (time, sequence number) order, the sequence number
//! counting pushes, whatever structure holds them.
//!
//! Most events are pushed a constant delay after the current time (a switch's propagation plus
//! technological latency, a delivery's propagation delay, zero), and events pushed with one delay
//! are pushed in (time, sequence) order: they go to that delay's FIFO lane. The sources' next
//! releases (one per flow, far ahead) have their own heap, and the rest (ends of transmission,
//! jittered first hops, shapers) a small heap. A pop takes the earliest head.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Clone, Copy, Debug)]
pub(super) struct Event<T> {
    pub time: i64,
    pub seq: u64,
    pub ev: T,
}

impl<T> Event<T> {
    fn key(&self) -> (i64, u64) {
        (self.time, self.seq)
    }
}

impl<T> PartialEq for Event<T> {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl<T> Eq for Event<T> {}
impl<T> PartialOrd for Event<T> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Event<T> {
    // Reversed: BinaryHeap is a max-heap and the earliest (time, sequence) must come out first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key().cmp(&self.key())
    }
}

/// Where the earliest event waits.
#[derive(Clone, Copy)]
enum Source {
    Heap,
    Releases,
    Lane(usize),
}

pub(super) struct EventQueue<T> {
    seq: u64,
    heap: BinaryHeap<Event<T>>,
    releases: BinaryHeap<Event<T>>,
    /// (delay, events pushed that long after the time they were pushed at).
    lanes: Vec<(i64, VecDeque<Event<T>>)>,
}

impl<T: Copy> EventQueue<T> {
    /// A queue with a FIFO lane for each of `lane_delays` (ns, distinct).
    pub fn new(lane_delays: &[i64]) -> Self {
        EventQueue {
            seq: 0,
            heap: BinaryHeap::new(),
            releases: BinaryHeap::new(),
            lanes: lane_delays.iter().map(|&d| (d, VecDeque::new())).collect(),
        }
    }

    /// Queues `ev` at `time`, pushed at `now` (the time of the event being processed: never
    /// less than that of any event pushed before); `release` marks the sources' releases.
    pub fn push(&mut self, now: i64, time: i64, ev: T, release: bool) {
        self.seq += 1;
        let e = Event { time, seq: self.seq, ev };
        if release {
            self.releases.push(e);
            return;
        }
        let delay = time - now;
        match self.lanes.iter_mut().find(|(d, _)| *d == delay) {
            Some((_, lane)) => lane.push_back(e),
            None => self.heap.push(e),
        }
    }

    /// The next release, without taking it.
    pub fn next_release(&self) -> Option<T> {
        self.releases.peek().map(|e| e.ev)
    }

    /// The earliest event, if it is due by `end`.
    pub fn pop_due(&mut self, end: i64) -> Option<Event<T>> {
        let mut best = (i64::MAX, u64::MAX);
        let mut from = None;
        if let Some(e) = self.heap.peek() {
            best = e.key();
            from = Some(Source::Heap);
        }
        if let Some(e) = self.releases.peek() {
            if e.key() < best {
                best = e.key();
                from = Some(Source::Releases);
            }
        }
        for (k, (_, lane)) in self.lanes.iter().enumerate() {
            if let Some(e) = lane.front() {
                if e.key() < best {
                    best = e.key();
                    from = Some(Source::Lane(k));
                }
            }
        }
        if best.0 > end {
            return None;
        }
        match from? {
            Source::Heap => self.heap.pop(),
            Source::Releases => self.releases.pop(),
            Source::Lane(k) => self.lanes[k].1.pop_front(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Against one plain heap: the same events in the same order, whatever lanes hold them.
    #[test]
    fn lanes_pop_in_time_and_sequence_order() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut q = EventQueue::new(&[0, 5, 16]);
        let mut plain = BinaryHeap::new();
        let mut seq = 0;
        let mut now = 0;
        let mut popped = 0;
        for _ in 0..20_000 {
            for _ in 0..rng.gen_range(0..3) {
                let delay = [0, 5, 16, rng.gen_range(0..40), rng.gen_range(0..1000)][rng.gen_range(0..5)];
                let release = rng.gen_bool(0.1);
                seq += 1;
                q.push(now, now + delay, seq, release);
                plain.push(Event { time: now + delay, seq, ev: seq });
            }
            let end = now + rng.gen_range(0..30);
            let a = q.pop_due(end).map(|e| (e.time, e.ev));
            let b = plain.peek().filter(|e| e.time <= end).map(|e| (e.time, e.ev));
            assert_eq!(a, b);
            if b.is_some() {
                plain.pop();
                popped += 1;
            }
            now = a.map_or(now, |(t, _)| t);
        }
        assert!(popped > 10_000);
    }
}
