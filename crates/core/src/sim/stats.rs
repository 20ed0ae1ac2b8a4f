//! Latency statistics: exact count, min, max and mean, and a log-linear histogram for quantiles
//! and CDFs (HdrHistogram's layout: 128 linear sub-buckets per power of two, so a quantile is
//! within 1/128 of its value; it is reported as the bucket's upper edge, never below the truth).
//! The histogram is sparse: one route's latencies fill a few dozen buckets, and a large network
//! has tens of thousands of routes.

use serde::Serialize;

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;

/// One cache line: a destination's records are fetched ahead of each delivery.
#[derive(Clone, Debug, Default)]
#[repr(align(64))]
pub struct Latency {
    pub count: u64,
    pub sum_ns: i128,
    pub min_ns: i64,
    pub max_ns: i64,
    /// Counts of buckets `lo..lo + counts.len()`: dense over the range one route's latencies
    /// span (a few hundred buckets), not over every possible value.
    lo: u32,
    counts: Box<[u32]>,
}

#[inline(always)]
fn bucket_of(v: u64) -> usize {
    // Below SUB, `v | SUB` puts the exponent at 0 and the bucket is `v` itself; above, `v >> exp`
    // lies in [SUB, 2 SUB) and the bucket is (exp + 1) SUB + (v >> exp) - SUB: one formula.
    let exp = 63 - (v | SUB).leading_zeros() - SUB_BITS;
    (exp as u64 * SUB + (v >> exp)) as usize
}

/// The largest value that falls in bucket `b`.
fn upper_edge(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB {
        return b;
    }
    let exp = b / SUB - 1;
    let mantissa = SUB + b % SUB;
    ((mantissa + 1) << exp) - 1
}

/// Asks the processor to bring the cache line holding `p` in: a hint, with no effect on results.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

impl Latency {
    /// Prefetches the count that recording `ns` will increment, when the histogram already spans
    /// its bucket.
    pub fn prefetch_record(&self, ns: i64) {
        let b = bucket_of(ns.max(0) as u64) as u32;
        if let Some(i) = b.checked_sub(self.lo) {
            if (i as usize) < self.counts.len() {
                prefetch(self.counts.as_ptr().wrapping_add(i as usize));
            }
        }
    }

    #[inline]
    pub fn record(&mut self, ns: i64) {
        let v = ns.max(0);
        if self.count == 0 {
            self.min_ns = v;
            self.max_ns = v;
        } else {
            self.min_ns = self.min_ns.min(v);
            self.max_ns = self.max_ns.max(v);
        }
        self.count += 1;
        self.sum_ns += v as i128;
        let b = bucket_of(v as u64) as u32;
        // One comparison when the histogram spans the bucket (below `lo`, the difference wraps
        // past any length); the rest, seldom, apart.
        match self.counts.get_mut(b.wrapping_sub(self.lo) as usize) {
            Some(n) => *n += 1,
            None => self.record_outside(b),
        }
    }

    /// Counts bucket `b`, outside the histogram's span: the first record, or one the span grows
    /// for. Sized and grown with slack either way, so that a spreading histogram is not moved at
    /// each new bucket (empty buckets are never reported).
    #[cold]
    #[inline(never)]
    fn record_outside(&mut self, b: u32) {
        let len = self.counts.len();
        if len == 0 {
            self.lo = b.saturating_sub(16);
            self.counts = vec![0; 64].into_boxed_slice();
        } else if b < self.lo {
            let grow = (self.lo - b).max(len as u32).min(self.lo);
            self.spread(self.lo - grow, len + grow as usize);
        } else {
            self.spread(self.lo, ((b - self.lo) as usize + 1).max(len * 2));
        }
        self.counts[(b - self.lo) as usize] += 1;
    }

    /// Lays the counts over buckets `lo..lo + len`, a range covering the current one.
    fn spread(&mut self, lo: u32, len: usize) {
        let mut counts = vec![0; len];
        let at = (self.lo - lo) as usize;
        counts[at..at + self.counts.len()].copy_from_slice(&self.counts);
        self.counts = counts.into_boxed_slice();
        self.lo = lo;
    }

    /// Non-empty buckets: (bucket, count).
    fn buckets(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.counts.iter().enumerate().filter(|(_, &n)| n > 0).map(|(i, &n)| (self.lo as usize + i, n as u64))
    }

    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }

    /// The q-quantile (0 < q <= 1): the upper edge of the bucket holding it, capped by the max.
    pub fn quantile_ns(&self, q: f64) -> i64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (b, n) in self.buckets() {
            seen += n;
            if seen >= rank {
                return (upper_edge(b) as i64).min(self.max_ns);
            }
        }
        self.max_ns
    }

    /// The histogram as (upper edge ns, count) for non-empty buckets, for CDF plots.
    pub fn histogram(&self) -> Vec<(i64, u64)> {
        self.buckets().map(|(b, n)| ((upper_edge(b) as i64).min(self.max_ns), n)).collect()
    }
}

/// Summary of one latency distribution in µs, the way reports print it.
#[derive(Clone, Debug, Serialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    /// max − min.
    pub jitter_us: f64,
}

impl From<&Latency> for LatencySummary {
    fn from(l: &Latency) -> Self {
        let us = |ns: i64| ns as f64 / 1e3;
        LatencySummary {
            count: l.count,
            min_us: us(l.min_ns),
            mean_us: l.mean_ns() / 1e3,
            p50_us: us(l.quantile_ns(0.5)),
            p99_us: us(l.quantile_ns(0.99)),
            p999_us: us(l.quantile_ns(0.999)),
            max_us: us(l.max_ns),
            jitter_us: us(l.max_ns - l.min_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotone_and_tight() {
        let mut prev = 0;
        for v in (0..200_000u64).chain([1 << 30, (1 << 40) + 12345]) {
            let b = bucket_of(v);
            assert!(b >= prev || v > 200_000);
            prev = b;
            let hi = upper_edge(b);
            assert!(hi >= v, "{v} above its bucket edge {hi}");
            assert!((hi - v) as f64 <= v as f64 / SUB as f64 + 1.0, "{v}: edge {hi} too loose");
        }
    }

    /// The one-formula bucket against the two-case definition (below SUB the value itself,
    /// above it (exp + 1) SUB + mantissa - SUB), around every power of two.
    #[test]
    fn bucket_formula_matches_its_definition() {
        let reference = |v: u64| -> usize {
            if v < SUB {
                return v as usize;
            }
            let exp = 63 - v.leading_zeros() - SUB_BITS;
            ((exp as u64 + 1) * SUB + ((v >> exp) - SUB)) as usize
        };
        for p in 0..64 {
            let x = 1u64 << p;
            for v in [x - 1, x, x + 1, x + x / 3, x.wrapping_mul(2).wrapping_sub(1)] {
                assert_eq!(bucket_of(v), reference(v), "{v}");
            }
        }
        for v in (0..300_000).chain([u64::MAX]) {
            assert_eq!(bucket_of(v), reference(v), "{v}");
        }
    }

    #[test]
    fn a_record_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Latency>(), 64);
    }

    #[test]
    fn quantiles_never_below_the_truth() {
        let mut l = Latency::default();
        for v in 1..=1000 {
            l.record(v * 1000);
        }
        assert_eq!(l.count, 1000);
        assert_eq!(l.min_ns, 1000);
        assert_eq!(l.max_ns, 1_000_000);
        let p99 = l.quantile_ns(0.99);
        assert!((990_000..=990_000 + 990_000 / 128).contains(&p99), "{p99}");
        assert_eq!(l.quantile_ns(1.0), 1_000_000);
        assert!((l.mean_ns() - 500_500.0).abs() < 1e-6);
    }
}
