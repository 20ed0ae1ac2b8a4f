//! Arrivals at destination end systems, logged instead of queued as events.
//!
//! A copy's arrival at its destination is known the moment its last port schedules it (the end of
//! its transmission plus the link's propagation delay). What the destination does with it
//! (latency statistics, integrity checking, redundancy management) changes nothing else in the
//! network unless retransmission or Bloom-filter deduplication is on, so arrivals need no place
//! in the event queue: each is logged, and handled later in batches, in exactly the order the
//! event queue would have given them. A batch fetches each arrival's records well before it
//! handles it, where an event would wait for them.
//!
//! Why the order is the same: a batch takes the arrivals due by the current time and groups them
//! by destination (destinations share no state). A port sends one frame at a time, so the
//! arrivals it logs are in time order; a destination's, from a few ports, are nearly so, and are
//! sorted by (time, sequence number), the sequence counting arrivals in the order they were
//! logged, as the event queue counts pushes. An arrival logged later is never due before one
//! already handled: it is logged at the current time or after, with a larger sequence number.
//! (Cut-through switches after scheduled ports can queue a frame before the current time; with
//! cut-through switches arrivals stay events.)

/// A copy's last bit reaching its destination end system, with what the destination needs.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Arrival {
    /// When the last bit arrives, ns (the event's time).
    pub time: i64,
    /// Arrivals logged so far, when this one was: orders arrivals due at the same time.
    pub seq: u64,
    pub frame: u64,
    /// The copy's entry into its source port and its frame's emission, ns (latency references).
    pub start_ns: i64,
    pub emit_ns: i64,
    /// The route delivered (stats index), its receiver, its flow and the destination node.
    pub route: u32,
    pub rx: u32,
    pub flow: u32,
    pub node: u32,
}

impl Arrival {
    fn key(&self) -> (i64, u64) {
        (self.time, self.seq)
    }
}

/// Arrivals logged between two batches (when the run does not end first): enough that a batch's
/// records are fetched well ahead of their use, few enough that the batch stays in cache.
pub(super) const ARRIVAL_BATCH: usize = 2048;

/// Arrivals logged and not yet handled.
pub(super) struct ArrivalLog {
    /// In the order logged.
    logged: Vec<Arrival>,
    /// Node -> its index among the destinations; per destination, a count, then where its run
    /// of the batch starts.
    destination_of: Vec<u32>,
    counts: Vec<u32>,
    /// Arrivals not due at the last batch, carried to the next.
    carried: Vec<Arrival>,
    batch_size: usize,
    /// The next batch is taken when this many arrivals are held: those carried over, plus the
    /// batch size or as many again if more (a batch copies what it carries; on an overloaded port
    /// it piles up).
    batch_at: usize,
    seq: u64,
}

impl ArrivalLog {
    /// A log for a network of `nodes` nodes, the `destinations` among them receiving copies,
    /// taking a batch every `batch` arrivals logged, or with 0 every [`ARRIVAL_BATCH`] or every
    /// destination's number if larger (a batch visits every destination).
    pub fn new(nodes: usize, destinations: impl IntoIterator<Item = u32>, batch: usize) -> ArrivalLog {
        let mut destination_of = vec![u32::MAX; nodes];
        let mut n = 0;
        for d in destinations {
            if destination_of[d as usize] == u32::MAX {
                destination_of[d as usize] = n;
                n += 1;
            }
        }
        ArrivalLog {
            logged: Vec::new(),
            destination_of,
            counts: vec![0; n as usize + 1],
            carried: Vec::new(),
            batch_size: if batch == 0 { ARRIVAL_BATCH.max(n as usize) } else { batch },
            batch_at: if batch == 0 { ARRIVAL_BATCH.max(n as usize) } else { batch },
            seq: 0,
        }
    }

    /// Logs an arrival; tells whether a batch is due.
    #[inline]
    pub fn log(&mut self, mut a: Arrival) -> bool {
        self.seq += 1;
        a.seq = self.seq;
        self.logged.push(a);
        self.logged.len() >= self.batch_at
    }

    /// Arrivals logged and not yet handled.
    pub fn held(&self) -> usize {
        self.logged.len()
    }

    /// Moves every arrival due by `horizon` into the first entries of `batch`, grouped by
    /// destination, each destination's in (time, seq) order; gives how many. The entries after
    /// them are stale: `batch` only grows, so that it is not cleared and filled again for each
    /// batch (it is written once, entry by entry, by the sort).
    pub fn take_due(&mut self, horizon: i64, batch: &mut Vec<Arrival>) -> usize {
        // A stable counting sort by destination: each destination's arrivals in the order
        // logged, which is time order port by port (a port sends one frame at a time)...
        self.counts.fill(0);
        for a in self.logged.iter().filter(|a| a.time <= horizon) {
            self.counts[self.destination_of[a.node as usize] as usize + 1] += 1;
        }
        for d in 1..self.counts.len() {
            self.counts[d] += self.counts[d - 1];
        }
        let due = *self.counts.last().expect("a sentinel") as usize;
        if batch.len() < due {
            batch.resize(due, Arrival::default());
        }
        for &a in &self.logged {
            if a.time <= horizon {
                let at = &mut self.counts[self.destination_of[a.node as usize] as usize];
                batch[*at as usize] = a;
                *at += 1;
            } else {
                self.carried.push(a);
            }
        }
        std::mem::swap(&mut self.logged, &mut self.carried);
        self.carried.clear();
        self.batch_at = self.logged.len() + self.batch_size.max(self.logged.len());
        // ...so that a destination's run, the merge of its ports' logs, is nearly in order (few
        // and short moves for the sort). Runs now end where `counts` point; keys are unique.
        let mut start = 0;
        for &end in &self.counts[..self.counts.len() - 1] {
            batch[start..end as usize].sort_unstable_by_key(Arrival::key);
            start = end as usize;
        }
        due
    }
}

/// How far ahead of the arrival being handled a batch fetches the destination's records.
pub(super) const AHEAD: usize = 16;
