//! The event queue: events ordered by (time, sequence number), packed in a u128 key.
//!
//! A timing wheel of one-nanosecond slots over the next 16 384 ns holds the fabric's events
//! (transmissions, header crossings, crossbar transfers and credits are all due within a few
//! microseconds), and a binary heap holds the rest (the sources' firings, milliseconds ahead,
//! one per video connection). A slot only ever holds events of one time, pushed in sequence
//! order, so it is a FIFO already sorted (a linked list through one node vector, for
//! locality); popping compares the wheel's first event with the
//! heap's, so the order over both is exactly (time, sequence number). Against a single binary
//! heap of tens of thousands of events this saves a cache-missing sift per event.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

const WHEEL: usize = 1 << 14;
const WORDS: usize = WHEEL / 64;

struct Keyed<T> {
    key: u128,
    value: T,
}

impl<T> PartialEq for Keyed<T> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<T> Eq for Keyed<T> {}
impl<T> PartialOrd for Keyed<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Keyed<T> {
    // Reversed: BinaryHeap is a max-heap and the smallest key goes first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

pub(crate) struct EventQueue<T> {
    /// Time of the last event popped: nothing pending is earlier.
    now: i64,
    /// Slot t mod WHEEL lists the events of time t (now <= t < now + WHEEL) in push order:
    /// first and last node, `NONE` when empty.
    first: Vec<u32>,
    last: Vec<u32>,
    /// Bit per slot: not empty.
    occupied: Vec<u64>,
    /// The wheel's events, linked per slot, in one vector for locality; freed nodes are reused.
    nodes: Vec<Node<T>>,
    free: Vec<u32>,
    heap: BinaryHeap<Keyed<T>>,
}

struct Node<T> {
    key: u128,
    value: T,
    next: u32,
}

const NONE: u32 = u32::MAX;

impl<T: Copy> EventQueue<T> {
    pub fn new() -> Self {
        EventQueue {
            now: 0,
            first: vec![NONE; WHEEL],
            last: vec![NONE; WHEEL],
            occupied: vec![0; WORDS],
            nodes: Vec::new(),
            free: Vec::new(),
            heap: BinaryHeap::new(),
        }
    }

    pub fn key(time: i64, seq: u64) -> u128 {
        ((time as u64 as u128) << 64) | seq as u128
    }

    pub fn time_of(key: u128) -> i64 {
        (key >> 64) as u64 as i64
    }

    /// Adds an event; keys must grow with each push (sequence numbers) and times must not be
    /// before the last event popped.
    pub fn push(&mut self, key: u128, value: T) {
        let time = Self::time_of(key);
        assert!(time >= self.now, "an event scheduled in the past");
        if time - self.now >= WHEEL as i64 {
            self.heap.push(Keyed { key, value });
            return;
        }
        let node = Node { key, value, next: NONE };
        let id = match self.free.pop() {
            Some(id) => {
                self.nodes[id as usize] = node;
                id
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() as u32 - 1
            }
        };
        let slot = time as usize % WHEEL;
        match self.last[slot] {
            NONE => {
                self.first[slot] = id;
                self.occupied[slot / 64] |= 1 << (slot % 64);
            }
            tail => self.nodes[tail as usize].next = id,
        }
        self.last[slot] = id;
    }

    /// The first occupied slot from now on (wrapping), i.e. the wheel's earliest events.
    fn first_slot(&self) -> Option<usize> {
        let start = self.now as usize % WHEEL;
        let (w0, b0) = (start / 64, start % 64);
        let masked = self.occupied[w0] & (u64::MAX << b0);
        if masked != 0 {
            return Some(w0 * 64 + masked.trailing_zeros() as usize);
        }
        (1..=WORDS).find_map(|k| {
            let w = (w0 + k) % WORDS;
            let bits = self.occupied[w];
            (bits != 0).then(|| w * 64 + bits.trailing_zeros() as usize)
        })
    }

    /// The smallest key, without removing it.
    pub fn peek_key(&self) -> Option<u128> {
        let wheel = self.first_slot().map(|s| self.nodes[self.first[s] as usize].key);
        let heap = self.heap.peek().map(|k| k.key);
        match (wheel, heap) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Removes the event of smallest key.
    pub fn pop(&mut self) -> Option<(u128, T)> {
        let slot = self.first_slot();
        let wheel_first = match (slot, self.heap.peek()) {
            (Some(s), Some(h)) => self.nodes[self.first[s] as usize].key < h.key,
            (s, _) => s.is_some(),
        };
        let (key, value) = if wheel_first {
            let s = slot.expect("wheel first");
            let id = self.first[s];
            let node = &self.nodes[id as usize];
            self.first[s] = node.next;
            if node.next == NONE {
                self.last[s] = NONE;
                self.occupied[s / 64] &= !(1 << (s % 64));
            }
            self.free.push(id);
            (node.key, node.value)
        } else {
            let k = self.heap.pop()?;
            (k.key, k.value)
        };
        self.now = Self::time_of(key);
        Some((key, value))
    }

    /// Every event, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u128, &T)> {
        let wheel = self.first.iter().flat_map(move |&head| {
            std::iter::successors((head != NONE).then_some(head), move |&id| {
                let next = self.nodes[id as usize].next;
                (next != NONE).then_some(next)
            })
            .map(move |id| (self.nodes[id as usize].key, &self.nodes[id as usize].value))
        });
        wheel.chain(self.heap.iter().map(|k| (k.key, &k.value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Random schedules, near and far, pop in exactly sorted (time, seq) order.
    #[test]
    fn pops_in_key_order() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut queue = EventQueue::new();
        let mut reference = std::collections::BTreeSet::new();
        let (mut now, mut seq) = (0i64, 0u64);
        for _ in 0..100_000 {
            if rng.gen_bool(0.52) || reference.is_empty() {
                let ahead = [rng.gen_range(0..3), rng.gen_range(0..20_000), rng.gen_range(0..40_000_000)];
                let t = now + ahead[rng.gen_range(0..3)];
                queue.push(EventQueue::<u64>::key(t, seq), seq);
                reference.insert((t, seq));
                seq += 1;
            } else {
                let expected = reference.pop_first().unwrap();
                assert_eq!(queue.peek_key().map(EventQueue::<u64>::time_of), Some(expected.0));
                let (key, value) = queue.pop().unwrap();
                assert_eq!((EventQueue::<u64>::time_of(key), value), expected);
                now = expected.0;
            }
        }
        assert_eq!(queue.iter().count(), reference.len());
    }
}
