//! The event queue: events come out in (time, sequence number) order, the sequence number
//! counting pushes, whatever structure holds them.
//!
//! * Events pushed a constant delay after the current time (after a scheduled port's end of
//!   transmission, a switch's propagation plus technological latency or a delivery's propagation
//!   delay; zero), pushed with one delay in (time, sequence) order: they go to that delay's FIFO
//!   lane.
//! * The rest within about a millisecond (a FIFO port's next hops and arrivals, scheduled as the
//!   frame joins the port; ends of transmission, jittered first hops, shapers) go to a timing
//!   wheel of 1.024 µs buckets; the sources' releases to a wheel of 65.5 µs buckets
//!   spanning 268 ms (periods up to 128 ms); a bucket holds its events unordered until it is
//!   the earliest non-empty one (found from a bitmap), then it is sorted once into the wheel's
//!   due run.
//! * Anything further ahead waits in a binary heap.
//!
//! Each part's earliest key is kept up to date by every push and pop, so a pop compares a few
//! keys (the near wheel's, the lanes', and one for the releases' wheel and the heap together).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Clone, Copy, Debug)]
pub(super) struct Event<T> {
    pub time: i64,
    pub seq: u64,
    pub ev: T,
}

impl<T> Event<T> {
    /// (time, sequence number) as one integer, in the same order.
    fn key(&self) -> i128 {
        ((self.time as i128) << 64) | self.seq as i128
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

/// No node.
const NIL: u32 = u32::MAX;
/// No event: above every key.
const NONE: i128 = i128::MAX;

struct Node<T> {
    e: Event<T>,
    next: u32,
}

/// A timing wheel: `SLOTS` buckets of `1 << SHIFT` ns holding the events whose bucket lies
/// within `SLOTS` of the current one, each bucket a short unordered list in a slab of nodes.
/// The earliest bucket is taken out whole and sorted into the due run, from which events then
/// come out one by one without another search; an event pushed into a bucket already taken is
/// inserted into the run in order.
struct Wheel<T, const SHIFT: u32, const SLOTS: usize> {
    nodes: Vec<Node<T>>,
    free: u32,
    heads: Vec<u32>,
    /// Non-empty buckets.
    bits: Vec<u64>,
    /// Events in the buckets' lists.
    listed: usize,
    /// The bucket of the current time (never after any listed event's).
    cur: i64,
    /// No listed event's bucket is before this one.
    first: i64,
    /// Every held event of the buckets up to `due_bucket`, in (time, sequence) order from
    /// `due_at`; the lists hold the later buckets.
    due: Vec<Event<T>>,
    due_at: usize,
    due_bucket: i64,
}

impl<T: Copy, const SHIFT: u32, const SLOTS: usize> Wheel<T, SHIFT, SLOTS> {
    fn new() -> Self {
        assert!(SLOTS.is_power_of_two() && SLOTS >= 64);
        Wheel {
            nodes: Vec::new(),
            free: NIL,
            heads: vec![NIL; SLOTS],
            bits: vec![0; SLOTS / 64],
            listed: 0,
            cur: 0,
            first: 0,
            due: Vec::new(),
            due_at: 0,
            due_bucket: -1,
        }
    }

    /// Holds `e` (pushed at `now`) if it falls within the wheel's span, else gives it back.
    #[inline(always)]
    fn push(&mut self, now: i64, e: Event<T>) -> Result<(), Event<T>> {
        // The current bucket never moves back (see `EventQueue::push`), so that every event
        // listed stays within `SLOTS` of it; an event before it is given back.
        self.cur = self.cur.max(now >> SHIFT);
        let bucket = e.time >> SHIFT;
        if (bucket - self.cur) as u64 >= SLOTS as u64 {
            return Err(e);
        }
        if bucket <= self.due_bucket {
            // Usually the latest of the run: the search from its end is short.
            let mut i = self.due.len();
            while i > self.due_at && self.due[i - 1].key() > e.key() {
                i -= 1;
            }
            self.due.insert(i, e);
            return Ok(());
        }
        let slot = bucket as usize & (SLOTS - 1);
        let node = Node { e, next: self.heads[slot] };
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.nodes[i as usize].next;
            self.nodes[i as usize] = node;
            i
        } else {
            self.nodes.push(node);
            self.nodes.len() as u32 - 1
        };
        self.heads[slot] = i;
        self.bits[slot / 64] |= 1 << (slot % 64);
        self.listed += 1;
        self.first = self.first.min(bucket);
        Ok(())
    }

    /// The first non-empty bucket from the earliest possible one, circularly (the listed
    /// events' buckets all lie within `SLOTS` of the current one, so this is the earliest).
    fn first_slot(&mut self) -> usize {
        self.first = self.first.max(self.cur);
        let start = self.first as usize & (SLOTS - 1);
        let (w0, b0) = (start / 64, start % 64);
        let words = SLOTS / 64;
        let mut found = None;
        let m = self.bits[w0] & (!0u64 << b0);
        if m != 0 {
            found = Some(w0 * 64 + m.trailing_zeros() as usize);
        } else {
            for k in 1..=words {
                let w = (w0 + k) % words;
                let m = if k == words { self.bits[w] & !(!0u64 << b0) } else { self.bits[w] };
                if m != 0 {
                    found = Some(w * 64 + m.trailing_zeros() as usize);
                    break;
                }
            }
        }
        let slot = found.expect("a non-empty wheel has a non-empty bucket");
        self.first += ((slot + SLOTS - start) % SLOTS) as i64;
        slot
    }

    /// The earliest key held, or [`NONE`].
    #[inline(always)]
    fn min_key(&mut self) -> i128 {
        match self.due.get(self.due_at) {
            Some(e) => e.key(),
            None if self.listed == 0 => NONE,
            None => self.take_bucket(),
        }
    }

    /// Moves the earliest listed bucket into the (empty) due run, sorted; gives its earliest key.
    #[inline(never)]
    fn take_bucket(&mut self) -> i128 {
        let slot = self.first_slot();
        self.due_bucket = self.first;
        self.due.clear();
        self.due_at = 0;
        let mut i = std::mem::replace(&mut self.heads[slot], NIL);
        self.bits[slot / 64] &= !(1 << (slot % 64));
        if self.nodes[i as usize].next == NIL {
            // A bucket of one event (sparse traffic): nothing to order.
            let n = &mut self.nodes[i as usize];
            let e = n.e;
            n.next = self.free;
            self.free = i;
            self.listed -= 1;
            self.due.push(e);
            return e.key();
        }
        while i != NIL {
            let n = &mut self.nodes[i as usize];
            let (e, next) = (n.e, n.next);
            n.next = self.free;
            self.free = i;
            i = next;
            self.listed -= 1;
            self.due.push(e);
        }
        // The list holds the latest push first: reversed, the run is in push (sequence) order,
        // usually time order too (synchronised releases put hundreds of events of one instant
        // in one bucket, which sorting as listed, newest first, made quadratic).
        self.due.reverse();
        for k in 1..self.due.len() {
            // Insertion sort: linear on a run already (nearly) in order.
            let e = self.due[k];
            let mut j = k;
            while j > 0 && self.due[j - 1].key() > e.key() {
                self.due[j] = self.due[j - 1];
                j -= 1;
            }
            self.due[j] = e;
        }
        self.due[0].key()
    }

    /// The `k`-th earliest event (from 0) of the earliest bucket, without taking it.
    fn peek(&mut self, k: usize) -> Option<T> {
        self.min_key();
        self.due.get(self.due_at + k).map(|e| e.ev)
    }

    /// Takes the earliest event (the wheel is not empty).
    #[inline(always)]
    fn pop(&mut self) -> Event<T> {
        self.min_key();
        let e = self.due[self.due_at];
        self.due_at += 1;
        e
    }
}

/// Where an event goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// The lane of that index, if the event's delay is the lane's (else as `Other`).
    Lane(u8),
    /// A source's release.
    Release,
    /// Any other event: lane 0 (no delay) when due now, else a wheel or the heap.
    Other,
}

/// Lanes at most.
pub(super) const MAX_LANES: usize = 4;
/// Where each part's earliest key is kept in [`EventQueue::heads`]: the near wheel, then the
/// releases' wheel and the heap together (the heap is seldom used, and one key fewer to compare
/// at each pop), then the lanes.
const NEAR: usize = 0;
const LATER: usize = 1;
const LANE_0: usize = 2;

pub(super) struct EventQueue<T> {
    seq: u64,
    /// Each lane's delay, and its events, pushed that long after the time they were pushed at.
    delays: Vec<i64>,
    lanes: Vec<VecDeque<Event<T>>>,
    near: Wheel<T, 10, 1024>,
    releases: Wheel<T, 16, 4096>,
    far: BinaryHeap<Event<T>>,
    /// The earliest key of each part ([`NONE`] when empty), kept up to date by every push and
    /// pop: a pop compares these few keys and looks nowhere else.
    heads: [i128; LANE_0 + MAX_LANES],
}

impl<T: Copy> EventQueue<T> {
    /// A queue with a FIFO lane for each of `lane_delays` (ns, distinct, the first 0, at most
    /// [`MAX_LANES`]).
    pub fn new(lane_delays: &[i64]) -> Self {
        assert!(lane_delays.first() == Some(&0) && lane_delays.len() <= MAX_LANES);
        EventQueue {
            seq: 0,
            delays: lane_delays.to_vec(),
            lanes: lane_delays.iter().map(|_| VecDeque::new()).collect(),
            near: Wheel::new(),
            releases: Wheel::new(),
            far: BinaryHeap::new(),
            heads: [NONE; LANE_0 + MAX_LANES],
        }
    }

    /// Queues `ev` at `time`, pushed at `now`: the time of the event being processed, so not
    /// after any event queued. `now` may go back (a cut-through switch can queue a frame's next
    /// hop before the current time, and that event then runs next): a lane takes an event only
    /// if it comes after its last, a wheel only if it comes after its current bucket, and
    /// anything else goes to the heap.
    #[inline(always)]
    pub fn push(&mut self, now: i64, time: i64, ev: T, kind: Kind) {
        self.seq += 1;
        let e = Event { time, seq: self.seq, ev };
        let lane = match kind {
            Kind::Lane(l) if self.delays.get(l as usize) == Some(&(time - now)) => l as usize,
            _ if time == now => 0,
            _ => usize::MAX,
        };
        if let Some(q) = self.lanes.get_mut(lane) {
            match q.back() {
                None => self.heads[LANE_0 + lane] = e.key(),
                Some(b) if b.time <= time => {}
                Some(_) => return self.hold(now, e, kind),
            }
            q.push_back(e);
            return;
        }
        self.hold(now, e, kind)
    }

    /// Queues `e` in a wheel or, beyond it, the heap.
    #[inline(always)]
    fn hold(&mut self, now: i64, e: Event<T>, kind: Kind) {
        let (held, part) = match kind {
            Kind::Release => (self.releases.push(now, e), LATER),
            _ => (self.near.push(now, e), NEAR),
        };
        let part = match held {
            Ok(()) => part,
            Err(e) => {
                self.far.push(e);
                LATER
            }
        };
        self.heads[part] = self.heads[part].min(e.key());
    }

    /// The `k`-th next release (from 0) within the releases' wheel's earliest bucket, without
    /// taking it.
    pub fn peek_release(&mut self, k: usize) -> Option<T> {
        self.releases.peek(k)
    }

    /// The earliest event, if it is due by `end`.
    #[inline(always)]
    pub fn pop_due(&mut self, end: i64) -> Option<Event<T>> {
        let (mut part, mut min) = (NEAR, self.heads[NEAR]);
        for (k, &h) in self.heads[..LANE_0 + self.lanes.len()].iter().enumerate().skip(1) {
            if h < min {
                (part, min) = (k, h);
            }
        }
        if (min >> 64) as i64 > end || min == NONE {
            return None;
        }
        Some(match part {
            NEAR => {
                let e = self.near.pop();
                self.heads[NEAR] = self.near.min_key();
                e
            }
            LATER => {
                let far = self.far.peek().map_or(NONE, |e| e.key());
                let e = if far < self.releases.min_key() {
                    self.far.pop().expect("a top")
                } else {
                    self.releases.pop()
                };
                let far = self.far.peek().map_or(NONE, |e| e.key());
                self.heads[LATER] = self.releases.min_key().min(far);
                e
            }
            part => {
                let q = &mut self.lanes[part - LANE_0];
                let e = q.pop_front().expect("a head");
                self.heads[part] = q.front().map_or(NONE, |e| e.key());
                e
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Against one plain heap: the same events in the same order, whatever holds them: lanes,
    /// both wheels (including their wrap-around and what falls beyond them), the heap; with
    /// events queued before the current time, after which time goes back.
    #[test]
    fn pops_in_time_and_sequence_order() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut q = EventQueue::new(&[0, 5, 16]);
        let mut plain = BinaryHeap::new();
        let mut seq = 0;
        let mut now = 0;
        let mut popped = 0;
        for round in 0..200_000 {
            let burst = if round % 1000 < 500 { 3 } else { 2 };
            for _ in 0..rng.gen_range(0..burst) {
                let delay = [
                    0,
                    5,
                    16,
                    rng.gen_range(0..40),
                    rng.gen_range(0..3000),
                    rng.gen_range(0..2_000_000),
                    rng.gen_range(0..400_000_000),
                    -rng.gen_range(1..5000),
                ][rng.gen_range(0..8)];
                let kind = [Kind::Release, Kind::Other, Kind::Lane(1), Kind::Lane(2), Kind::Lane(3)]
                    [rng.gen_range(0..5)];
                seq += 1;
                q.push(now, now + delay, seq, kind);
                plain.push(Event { time: now + delay, seq, ev: seq });
            }
            let end = now + rng.gen_range(0..3000);
            let a = q.pop_due(end).map(|e| (e.time, e.ev));
            let b = plain.peek().filter(|e| e.time <= end).map(|e| (e.time, e.ev));
            assert_eq!(a, b, "round {round}");
            if b.is_some() {
                plain.pop();
                popped += 1;
            }
            now = a.map_or(now, |(t, _)| t);
        }
        while let Some(e) = q.pop_due(i64::MAX) {
            assert_eq!(Some(e.ev), plain.pop().map(|e| e.ev));
            popped += 1;
        }
        assert!(plain.is_empty());
        assert!(popped > 100_000, "{popped}");
    }
}
