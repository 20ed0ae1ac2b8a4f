//! Token-bucket shaper on a port's output (rate ρ, burst σ), with a FIFO or static-priority
//! scheduler inside.
//!
//! Service model: a greedy shaper with shaping curve σ + ρ·t is itself a service-curve element
//! with that curve (Le Boudec & Thiran Thm 1.5.1); in series with the link it serves at least
//! min(C, ρ)·[t − T]^+, the rate-latency curve below both, which the inner scheduler then shares.
//! The bucket must hold the largest frame, or frames could wait for tokens forever.

use super::{Behaviour, Queued};

/// The rate the shaped port guarantees.
pub fn shaped_rate(link_rate: f64, rate: f64) -> f64 {
    link_rate.min(rate)
}

/// A token-bucket configuration as written (`kind: token_bucket`): the shaper and the name of
/// the discipline inside it (FIFO when absent), which validation resolves once per port.
pub struct ShaperConfig<'a> {
    pub rate: crate::units::DataRate,
    pub burst: crate::units::DataSize,
    pub inner: Option<&'a str>,
}

impl ShaperConfig<'_> {
    /// The field's name of the shaper, as written in files.
    pub const KIND: &'static str = "token_bucket";

    /// Problems of the shaper's own parameters (its inner scheduler is checked where it is
    /// resolved, against the other configurations).
    pub fn check(&self, place: &str) -> Vec<super::ConfigProblem> {
        let positive = |v: f64, field: &str| {
            (v.is_nan() || v <= 0.0).then(|| super::ConfigProblem::Error {
                place: format!("{place}.{field}"),
                message: "must be positive".into(),
            })
        };
        positive(self.rate.bps(), "rate").into_iter().chain(positive(self.burst.bits(), "burst")).collect()
    }
}

/// Slack on the token comparison (bits), so that the float refill reaching a frame's size at
/// the nanosecond [`Behaviour::next_ready`] named is not lost to rounding.
const TOKEN_SLACK_BITS: f64 = 1e-6;

/// A token-bucket shaper around an inner scheduler. Tokens are wire bits (frame, preamble and
/// gap): the shaper bounds what the link spends, the same length the arrival curves and the
/// service model count. The bucket starts full, refills at `rate` up to `burst`, and a frame goes
/// only when the tokens cover it, which then pay for it.
///
/// The inner scheduler has no peek, so the shaper takes its next frame and holds it until the
/// tokens allow (as Linux's TBF does with `qdisc_peek_dequeued`): the held frame is committed,
/// and a later, more urgent arrival waits behind it. A frame larger than the bucket goes when the
/// bucket is full and leaves the tokens negative, so it waits for no tokens that cannot come and
/// the long-run rate still holds (validation should make the burst hold the largest frame).
pub struct TokenBucket {
    inner: Box<dyn Behaviour>,
    /// Tokens per nanosecond, and the bucket size, in wire bits.
    bits_per_ns: f64,
    burst: f64,
    /// Tokens at `last_ns`.
    tokens: f64,
    last_ns: i64,
    held: Option<Queued>,
}

impl TokenBucket {
    /// A shaper of `rate_bps` and `burst_bits` (wire bits) around `inner`, bucket full.
    pub fn new(rate_bps: f64, burst_bits: f64, inner: Box<dyn Behaviour>) -> Self {
        TokenBucket {
            inner,
            bits_per_ns: rate_bps * 1e-9,
            burst: burst_bits,
            tokens: burst_bits,
            last_ns: i64::MIN,
            held: None,
        }
    }

    /// Tokens at `now_ns` (the bucket refills lazily: capping once at the end is the same as
    /// capping all along, since refilling only adds).
    fn tokens_at(&self, now_ns: i64) -> f64 {
        let dt = now_ns.saturating_sub(self.last_ns).max(0) as f64;
        (self.tokens + dt * self.bits_per_ns).min(self.burst)
    }

    /// Tokens the held frame needs before it may go.
    fn needed(&self, item: &Queued) -> f64 {
        (item.wire_bits as f64).min(self.burst)
    }
}

impl Behaviour for TokenBucket {
    fn enqueue(&mut self, item: Queued, now_ns: i64) {
        self.inner.enqueue(item, now_ns);
    }

    fn dequeue(&mut self, now_ns: i64) -> Option<Queued> {
        if self.held.is_none() {
            self.held = self.inner.dequeue(now_ns);
        }
        let item = self.held?;
        let tokens = self.tokens_at(now_ns);
        self.tokens = tokens;
        self.last_ns = self.last_ns.max(now_ns);
        if tokens + TOKEN_SLACK_BITS < self.needed(&item) {
            return None;
        }
        self.tokens -= item.wire_bits as f64;
        self.held = None;
        Some(item)
    }

    /// When the held frame's tokens will have accumulated (at least 1 ns ahead when they have
    /// not yet, so the simulator always moves on); `now_ns` when a frame could go now.
    fn next_ready(&self, now_ns: i64) -> Option<i64> {
        let Some(item) = &self.held else {
            return (!self.inner.is_empty()).then_some(now_ns);
        };
        let missing = self.needed(item) - self.tokens_at(now_ns) - TOKEN_SLACK_BITS;
        if missing <= 0.0 {
            return Some(now_ns);
        }
        let wait = (missing / self.bits_per_ns).ceil().max(1.0);
        Some(now_ns.saturating_add(wait.min(i64::MAX as f64) as i64))
    }

    fn len(&self) -> usize {
        self.inner.len() + self.held.is_some() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::super::fifo::Fifo;
    use super::*;

    fn frame(frame: u32, wire_bytes: u32) -> Queued {
        Queued {
            flow: u32::MAX,
            frame,
            class: 0,
            wire_bits: wire_bytes * 8,
            frame_bits: (wire_bytes - 20) * 8,
        }
    }

    /// Sends whenever allowed, waking at `next_ready` otherwise (a link of infinite rate):
    /// returns each frame's departure time.
    fn departures(s: &mut TokenBucket) -> Vec<(u32, i64)> {
        let mut now = 0;
        let mut out = Vec::new();
        while !s.is_empty() {
            match s.dequeue(now) {
                Some(q) => out.push((q.frame, now)),
                None => {
                    let next = s.next_ready(now).expect("frames wait");
                    assert!(next > now, "no progress at {now}");
                    now = next;
                }
            }
        }
        out
    }

    /// 10 Mb/s, burst 2 frames of 1000 B (wire): two frames at once, then one every
    /// 8000 bit / 10 Mb/s = 800 µs.
    #[test]
    fn spacing_after_the_burst_is_size_over_rate() {
        let mut s = TokenBucket::new(10e6, 16000.0, Box::new(Fifo::default()));
        for id in 0..6 {
            s.enqueue(frame(id, 1000), 0);
        }
        let got = departures(&mut s);
        let want: Vec<(u32, i64)> =
            vec![(0, 0), (1, 0), (2, 800_000), (3, 1_600_000), (4, 2_400_000), (5, 3_200_000)];
        assert_eq!(got, want);
    }

    /// Rates that do not divide the frame evenly into nanoseconds: with a backlog, frame k ≥ 1
    /// leaves at the first nanosecond at or after (k − 1)·L/ρ (burst 2L), with no drift, as the
    /// tokens left over by the rounding are kept.
    #[test]
    fn uneven_rate_rounds_up_to_the_nanosecond() {
        let rate = 3e6;
        let l = 1538.0 * 8.0;
        let mut s = TokenBucket::new(rate, 2.0 * l, Box::new(Fifo::default()));
        for id in 0..500 {
            s.enqueue(frame(id, 1538), 0);
        }
        let got = departures(&mut s);
        for (k, &(_, t)) in got.iter().enumerate() {
            let exact = (k.max(1) - 1) as f64 * l / rate * 1e9;
            assert!(t as f64 >= exact - 1e-3 && (t as f64) < exact + 1.0, "frame {k} at {t}, {exact}");
        }
    }

    /// The bucket refills while idle, up to the burst only.
    #[test]
    fn refills_up_to_the_burst() {
        let mut s = TokenBucket::new(1e6, 2000.0 * 8.0, Box::new(Fifo::default()));
        s.enqueue(frame(0, 1000), 0);
        assert!(s.dequeue(0).is_some());
        // A long idle time refills 2000 B, not more: two frames go at 1 s, the third waits 8 ms.
        for id in 1..4 {
            s.enqueue(frame(id, 1000), 1_000_000_000);
        }
        assert!(s.dequeue(1_000_000_000).is_some() && s.dequeue(1_000_000_000).is_some());
        assert!(s.dequeue(1_000_000_000).is_none());
        assert_eq!(s.next_ready(1_000_000_000), Some(1_008_000_000));
        assert_eq!(s.len(), 1);
    }

    /// A frame larger than the bucket goes when the bucket is full and leaves a debt.
    #[test]
    fn frame_larger_than_the_bucket_is_not_stranded() {
        let mut s = TokenBucket::new(8e6, 500.0 * 8.0, Box::new(Fifo::default()));
        s.enqueue(frame(0, 1000), 0);
        s.enqueue(frame(1, 500), 0);
        // Frame 0 at 0 (tokens 4000 − 8000 = −4000), frame 1 needs 4000 + 4000 bits: 1 ms.
        assert_eq!(departures(&mut s), [(0, 0), (1, 1_000_000)]);
    }
}
