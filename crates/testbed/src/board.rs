//! The run's stall board: a file in the run's private folder, mapped by every node, where each
//! process writes the stalls it saw (intervals of wall-clock time during which it did not run
//! when it should have: a late wake-up, a frame left waiting in its receive ring) and how far in
//! time it has looked (its heartbeat).
//!
//! A receiver classifies a frame once every process's heartbeat has passed the frame's arrival:
//! from then on no process can still report a stall that overlapped the frame's flight (a process
//! reports a stall as soon as it runs again, and its heartbeat only moves after that report). A
//! frame whose flight overlaps a stall of any process of the run is disturbed by the host,
//! whichever process stalled: the processor was taken from the run.
//!
//! Layout: one slot of [`SLOT_BYTES`] per node; in each, the heartbeat (i64, wall-clock ns, or
//! `i64::MAX` once the process has stopped for good), the number of stalls ever written (u64),
//! then a ring of (start, end) pairs (i64 ns). Written by the slot's process only; read by all.

use std::io;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// Bytes of one node's slot.
pub const SLOT_BYTES: usize = 1 << 16;
const HEADER: usize = 64;
/// Stalls a slot holds before its ring wraps.
pub const ENTRIES: usize = (SLOT_BYTES - HEADER) / 16;

pub struct Board {
    ptr: *mut u8,
    slots: usize,
    mine: usize,
    /// Per slot, how many of its stalls this process has read.
    read: Vec<u64>,
}

// SAFETY: the mapping is owned by this value; shared words are only touched atomically.
unsafe impl Send for Board {}

impl Board {
    /// Maps `path` (made by the front, `slots` x [`SLOT_BYTES`] zero bytes); this process writes
    /// slot `mine`.
    pub fn open(path: &str, slots: usize, mine: usize) -> io::Result<Board> {
        if mine >= slots {
            return Err(io::Error::other(format!("stall board: slot {mine} of {slots}")));
        }
        let c = std::ffi::CString::new(path).map_err(|_| io::Error::other("stall board path"))?;
        // SAFETY: plain calls, results checked; the fd is closed once mapped.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC | libc::O_NOFOLLOW) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let len = slots * SLOT_BYTES;
        let ptr = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0)
        };
        unsafe { libc::close(fd) };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Board { ptr: ptr as *mut u8, slots, mine, read: vec![0; slots] })
    }

    fn word_i(&self, slot: usize, offset: usize) -> &AtomicI64 {
        // SAFETY: inside the mapping, 8-byte aligned (page-aligned slots, aligned offsets).
        unsafe { &*(self.ptr.add(slot * SLOT_BYTES + offset) as *const AtomicI64) }
    }

    fn count(&self, slot: usize) -> &AtomicU64 {
        // SAFETY: as above.
        unsafe { &*(self.ptr.add(slot * SLOT_BYTES + 8) as *const AtomicU64) }
    }

    /// This process has looked at (and reported every stall up to) wall-clock `now`.
    pub fn heartbeat(&self, now: i64) {
        self.word_i(self.mine, 0).store(now, Ordering::Release);
    }

    /// This process stops: it will report nothing more.
    pub fn finish(&self) {
        self.heartbeat(i64::MAX);
    }

    /// A stall of this process, wall-clock ns.
    pub fn stall(&self, start: i64, end: i64) {
        let n = self.count(self.mine).load(Ordering::Relaxed);
        let at = HEADER + (n as usize % ENTRIES) * 16;
        self.word_i(self.mine, at).store(start, Ordering::Relaxed);
        self.word_i(self.mine, at + 8).store(end, Ordering::Relaxed);
        self.count(self.mine).store(n + 1, Ordering::Release);
    }

    /// The earliest heartbeat of all processes: no stall before it can still be reported.
    pub fn horizon(&self) -> i64 {
        (0..self.slots).map(|s| self.word_i(s, 0).load(Ordering::Acquire)).min().unwrap_or(i64::MAX)
    }

    /// Stalls written since the last call, every slot. A slot whose ring wrapped meanwhile gives
    /// one stall from the oldest lost one's start (unknown: `i64::MIN`) to its newest end.
    pub fn new_stalls(&mut self) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        for s in 0..self.slots {
            let n = self.count(s).load(Ordering::Acquire);
            let from = self.read[s];
            if n == from {
                continue;
            }
            let first = if n - from > ENTRIES as u64 { n - ENTRIES as u64 } else { from };
            let mut last_end = i64::MIN;
            for k in first..n {
                let at = HEADER + (k as usize % ENTRIES) * 16;
                let (a, b) = (
                    self.word_i(s, at).load(Ordering::Relaxed),
                    self.word_i(s, at + 8).load(Ordering::Relaxed),
                );
                last_end = last_end.max(b);
                out.push((a, b));
            }
            if first != from {
                out.push((i64::MIN, last_end));
            }
            self.read[s] = n;
        }
        out
    }
}

impl Drop for Board {
    fn drop(&mut self) {
        // SAFETY: the mapping is ours.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.slots * SLOT_BYTES) };
    }
}

/// Stall intervals, queried for overlap with a frame's flight.
#[derive(Default)]
pub struct Stalls {
    /// Sorted by start, with the largest end up to each index.
    spans: Vec<(i64, i64)>,
    max_end: Vec<i64>,
}

impl Stalls {
    /// Adds stalls, and forgets those that ended before `keep_after` (no frame still to classify
    /// flew then): the list stays as short as the frames waiting.
    pub fn add(&mut self, mut new: Vec<(i64, i64)>, keep_after: i64) {
        let before = self.spans.len();
        self.spans.retain(|&(_, e)| e >= keep_after);
        if new.is_empty() && self.spans.len() == before {
            return;
        }
        new.retain(|&(_, e)| e >= keep_after);
        new.sort_unstable();
        // Both sorted: merge them.
        let old = std::mem::take(&mut self.spans);
        let (mut i, mut j) = (0, 0);
        while i < old.len() || j < new.len() {
            if j == new.len() || (i < old.len() && old[i] <= new[j]) {
                self.spans.push(old[i]);
                i += 1;
            } else {
                self.spans.push(new[j]);
                j += 1;
            }
        }
        self.max_end.clear();
        let mut m = i64::MIN;
        for &(_, e) in &self.spans {
            m = m.max(e);
            self.max_end.push(m);
        }
    }

    /// Whether a stall overlaps [a, b].
    pub fn overlaps(&self, a: i64, b: i64) -> bool {
        let n = self.spans.partition_point(|&(s, _)| s <= b);
        n > 0 && self.max_end[n - 1] >= a
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_is_found_whatever_the_order() {
        let mut s = Stalls::default();
        s.add(vec![(100, 200), (10, 20)], i64::MIN);
        s.add(vec![(50, 500)], i64::MIN);
        assert!(s.overlaps(15, 16));
        assert!(s.overlaps(0, 10));
        assert!(s.overlaps(400, 1000));
        assert!(!s.overlaps(501, 600));
        assert!(!s.overlaps(21, 49));
        assert!(!s.overlaps(0, 9));
        // Forgotten once no frame can have flown then.
        s.add(vec![], 21);
        assert_eq!(s.len(), 2);
        assert!(!s.overlaps(15, 16));
        assert!(s.overlaps(150, 160));
    }

    #[test]
    fn board_round_trip_and_wrap() {
        let dir = std::env::temp_dir().join(format!("rtnl-board-test-{}", std::process::id()));
        std::fs::write(&dir, vec![0u8; 2 * SLOT_BYTES]).unwrap();
        let path = dir.to_str().unwrap();
        let a = Board::open(path, 2, 0).unwrap();
        let mut b = Board::open(path, 2, 1).unwrap();
        assert_eq!(b.horizon(), 0);
        a.heartbeat(10);
        b.heartbeat(20);
        assert_eq!(b.horizon(), 10);
        a.stall(1, 2);
        assert_eq!(b.new_stalls(), vec![(1, 2)]);
        assert!(b.new_stalls().is_empty());
        for k in 0..(ENTRIES as i64 + 5) {
            a.stall(k * 10, k * 10 + 1);
        }
        let got = b.new_stalls();
        assert_eq!(got.len(), ENTRIES + 1);
        assert_eq!(*got.last().unwrap(), (i64::MIN, (ENTRIES as i64 + 4) * 10 + 1));
        a.finish();
        b.finish();
        assert_eq!(b.horizon(), i64::MAX);
        drop((a, b));
        std::fs::remove_file(&dir).unwrap();
    }
}
