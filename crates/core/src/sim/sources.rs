//! Sources: each flow's application releasing frames (periodic, token bucket, or a chosen
//! workload), its VL regulator enforcing the BAG, and the emission of one copy per plane.

use super::destinations::sequence_number;
use super::engine::Ev;
use super::forwarding::Copy;
use super::stats::prefetch;
use super::tables::size_range;
use super::*;
use crate::model::Traffic;
use rand::Rng;
use std::collections::VecDeque;

/// `Source::last_emit` before the first emission.
pub(super) const NEVER: i64 = i64::MIN;

/// A flow's source, its application process and its regulator, as each release reads it: one
/// cache line (the rest is in [`SourceCold`]).
#[repr(C, align(64))]
pub(super) struct Source {
    /// Nominal time between two frames of the flow's contract, ns.
    pub(super) period_ns: i64,
    /// Last emission by the regulator, or [`NEVER`].
    pub(super) last_emit: i64,
    pub(super) next_frame: u64,
    /// Release jitter bound, ns.
    pub(super) jitter_ns: i64,
    /// The source end system's technological latency, ns.
    pub(super) source_latency_ns: i64,
    /// Offset of the copies on the second and later planes (drawn once per flow, up to the
    /// sending skew): a constant offset keeps each plane's arrival pattern that of the contract.
    pub(super) plane_skew_ns: i64,
    /// Frames produced but not yet emitted (held in [`SourceCold::waiting`]).
    pub(super) waiting: u32,
    /// Smallest and largest frame, whole bytes.
    pub(super) lmin_bytes: u32,
    pub(super) lmax_bytes: u32,
    pub(super) token_bucket: bool,
    pub(super) regulate_pending: bool,
}

impl Source {
    /// Minimum spacing of emissions (BAG or period), ns; 0 for token buckets (already shaped).
    pub(super) fn gap_ns(&self) -> i64 {
        if self.token_bucket {
            0
        } else {
            self.period_ns
        }
    }
}

/// What a source's fast path does not read.
#[derive(Default)]
pub(super) struct SourceCold {
    /// Frames produced but not yet emitted: (production time, frame bits, whether it is a
    /// retransmission).
    pub(super) waiting: VecDeque<(i64, u32, bool)>,
    pub(super) retransmissions: u64,
    /// Frames whose retransmission timeout has passed (each then delivered in time or sent
    /// again): what the retransmission rate divides by.
    pub(super) frames_due: u64,
    /// Token-bucket and CBR flows: frames released so far after the first, and when the first
    /// was (the bucket full, the constant rate's origin).
    pub(super) sent: u64,
    pub(super) start_ns: i64,
}

impl Simulator {
    pub(super) fn first_release(&mut self, f: usize) -> i64 {
        let period = self.sources[f].period_ns;
        match self.cfg.release {
            Release::Synchronized => self.net.bound_offset(f).unwrap_or(0),
            Release::Random => match self.net.flows[f].traffic {
                Traffic::Periodic { offset, .. } => offset.as_ns(),
                _ if period > 0 => self.rng.gen_range(0..period),
                _ => 0,
            },
        }
    }

    /// The size of the flow's next frame, bits.
    pub(super) fn frame_bits(&mut self, f: usize) -> u32 {
        if let Some(bits) = self.scenario_frame_bits(f) {
            return bits;
        }
        let src = &self.sources[f];
        let bytes = match self.cfg.frame_sizes {
            FrameSizes::Max => src.lmax_bytes,
            FrameSizes::Min => src.lmin_bytes,
            FrameSizes::Uniform => self.rng.gen_range(src.lmin_bytes..=src.lmax_bytes),
            FrameSizes::Trace => {
                let (lo, hi) = size_range(&self.net.flows[f].traffic);
                let trace = &self.cfg.size_trace;
                let k = (f as u64 * 7919 + src.next_frame) as usize % trace.len().max(1);
                trace.get(k).map_or(hi, |&b| (b as f64).clamp(lo, hi)).round() as u32
            }
        };
        bytes * 8
    }

    /// A frame produced by the application joins the regulator's queue.
    pub(super) fn produce(&mut self, f: usize, now: i64, bits: u32, retransmission: bool) {
        self.sources_cold[f].waiting.push_back((now, bits, retransmission));
        self.sources[f].waiting += 1;
    }

    /// The application produces frame(s); the next release is scheduled.
    pub(super) fn release(&mut self, f: usize) {
        let now = self.now;
        let src = &self.sources[f];
        let period = src.period_ns.max(1);
        if !src.token_bucket && matches!(self.cfg.workload, Workload::Periodic) {
            // One frame per period: with nothing queued and the gap passed, the regulator emits
            // it at once, as `regulate` would after queueing it.
            let bits = self.frame_bits(f);
            self.push(now + period, Ev::Release { flow: f as u32 });
            let src = &mut self.sources[f];
            if src.waiting == 0 && (src.last_emit == NEVER || now >= src.last_emit + src.gap_ns()) {
                src.regulate_pending = false;
                src.last_emit = now;
                self.emit(f, bits, now, false);
            } else {
                self.produce(f, now, bits, false);
                self.wake_regulator(f);
            }
            return;
        }
        let bucket = match &self.net.flows[f].traffic {
            Traffic::TokenBucket { burst, rate, max_packet, .. } => {
                Some((burst.bits(), rate.bps(), max_packet.bits()))
            }
            _ => None,
        };
        let next = match (bucket, self.cfg.workload) {
            (Some((burst, rate, max_packet)), _) => {
                // Greedy: frame k goes when the bucket (full at the start) holds it.
                let bits = self.frame_bits(f);
                self.produce(f, now, bits, false);
                // Frame k (from 0) may go once (k + 1) largest packets fit in b + r·t.
                let cold = &mut self.sources_cold[f];
                let k = cold.sent + 1;
                cold.sent = k;
                let due = ((k + 1) as f64 * max_packet - burst) / rate;
                cold.start_ns + (due.max(0.0) * 1e9).ceil() as i64
            }
            (_, Workload::Periodic) => {
                let bits = self.frame_bits(f);
                self.produce(f, now, bits, false);
                now + period
            }
            (_, Workload::Cbr { load }) => {
                // Release k at start + k·period/load, rounded to the ns: no drift over a long run.
                let bits = self.frame_bits(f);
                self.produce(f, now, bits, false);
                let cold = &mut self.sources_cold[f];
                cold.sent += 1;
                cold.start_ns + (cold.sent as f64 * period as f64 / load).round() as i64
            }
            (_, Workload::Poisson { load }) => {
                let bits = self.frame_bits(f);
                self.produce(f, now, bits, false);
                now + self.exponential(period as f64 / load)
            }
            (_, Workload::ParetoBursts { load, alpha, mean_frames }) => {
                // Pareto with minimum x_m has mean alpha x_m / (alpha - 1).
                let xm = mean_frames * (alpha - 1.0) / alpha;
                let u: f64 = self.rng.gen_range(f64::EPSILON..1.0);
                let n = (xm / u.powf(1.0 / alpha)).round().clamp(1.0, 1e4) as usize;
                for _ in 0..n {
                    let bits = self.frame_bits(f);
                    self.produce(f, now, bits, false);
                }
                now + self.exponential(period as f64 * mean_frames / load)
            }
        };
        self.push(next, Ev::Release { flow: f as u32 });
        self.wake_regulator(f);
    }

    /// A frame joined the regulator's queue: the regulator looks at it now, unless it already
    /// waits for the gap to pass (one pending event per flow, however many frames wait: an
    /// event per frame produced would pile up while a burst drains).
    pub(super) fn wake_regulator(&mut self, f: usize) {
        if !self.sources[f].regulate_pending {
            self.regulate(f);
        }
    }

    pub(super) fn exponential(&mut self, mean: f64) -> i64 {
        let u: f64 = self.rng.gen_range(f64::EPSILON..1.0);
        (-mean * u.ln()).round().max(1.0) as i64
    }

    /// The VL regulator: emits the oldest waiting frame once the gap since the last emission
    /// has passed (BAG shaping); release jitter then delays the emission within its bound.
    pub(super) fn regulate(&mut self, f: usize) {
        let now = self.now;
        let src = &mut self.sources[f];
        src.regulate_pending = false;
        if src.waiting == 0 {
            return;
        }
        let gap = src.gap_ns();
        if src.last_emit != NEVER && now < src.last_emit + gap {
            let at = src.last_emit + gap;
            src.regulate_pending = true;
            self.push(at, Ev::Regulate { flow: f as u32 });
            return;
        }
        let (_, bits, retransmission) = self.sources_cold[f].waiting.pop_front().expect("counted");
        src.waiting -= 1;
        src.last_emit = now;
        let more = src.waiting > 0;
        self.emit(f, bits, now, retransmission);
        if more && !self.sources[f].regulate_pending {
            let at = now + gap;
            self.sources[f].regulate_pending = true;
            self.push(at, Ev::Regulate { flow: f as u32 });
        }
    }

    /// Sends one frame: one copy per plane, each entering its source port after the plane skew,
    /// the release jitter and the end system's technological latency.
    pub(super) fn emit(&mut self, f: usize, frame_bits: u32, emit_ns: i64, retransmission: bool) {
        let src = &mut self.sources[f];
        let (jitter_ns, plane_skew, source_latency) =
            (src.jitter_ns, src.plane_skew_ns, src.source_latency_ns);
        let frame_no = src.next_frame;
        src.next_frame += 1;
        if self.cfg.retransmit && !retransmission {
            self.await_delivery(f, frame_no, emit_ns);
        }
        let synchronized = self.cfg.release == Release::Synchronized || self.scenario.is_some();
        let jitter = if synchronized || jitter_ns == 0 { 0 } else { self.rng.gen_range(0..=jitter_ns) };
        let ifg = self.hot.ifg_bits;
        let (starts, end) = (self.starts_at[f], self.starts_at[f + 1]);
        for k in starts..end {
            let (plane, first, n) = self.starts[k as usize];
            let skew = if k == starts { 0 } else { plane_skew };
            let start = emit_ns + jitter + skew;
            let copy = self.new_copy(Copy {
                flow: f as u32,
                frame: frame_no,
                seq: sequence_number(frame_no) as u32,
                emit_ns,
                start_ns: start,
                frame_bits,
                wire_bits: frame_bits + ifg,
                plane,
                refs: 0,
            });
            for c in first..first + n {
                let p = self.new_packet(copy, c);
                if start + source_latency == self.now {
                    // Due now: no need to go through the event queue.
                    self.enqueue(p);
                } else {
                    self.enqueue_at(start + source_latency, p);
                }
            }
        }
    }

    /// A copy enters its source port later (release jitter, plane skew, the end system's
    /// latency): an event. Apart, so that `emit` does not carry the queue's inlined push (and
    /// its values kept across the loop) where, without jitter or latency, a copy enters at once.
    #[inline(never)]
    fn enqueue_at(&mut self, at: i64, packet: u32) {
        self.push(at, Ev::Enqueue { packet });
    }

    /// The next releases' records, fetched in stages while other events run (each stage reads
    /// what the previous release's fetched): for the fourth next release where its planes are
    /// listed, for the third its planes, for the second its source and first hops, for the next
    /// the ports of those hops.
    pub(super) fn prefetch_releases(&mut self) {
        let mut next = [u32::MAX; 4];
        for (k, flow) in next.iter_mut().enumerate() {
            match self.queue.peek_release(k) {
                Some(Ev::Release { flow: f }) => *flow = f,
                _ => break,
            }
        }
        let [first, second, third, fourth] = next.map(|f| f as usize);
        if let Some(at) = self.starts_at.get(fourth) {
            prefetch(at);
        }
        if let Some(&k) = self.starts_at.get(third) {
            prefetch(&self.starts[k as usize]);
        }
        if let Some(&k) = self.starts_at.get(second) {
            prefetch(&self.sources[second]);
            for &(_, hop, _) in &self.starts[k as usize..self.starts_at[second + 1] as usize] {
                prefetch(&self.hops[hop as usize]);
            }
        }
        if let Some(&k) = self.starts_at.get(first) {
            for &(_, hop, n) in &self.starts[k as usize..self.starts_at[first + 1] as usize] {
                for h in &self.hops[hop as usize..(hop + n) as usize] {
                    self.prefetch_port(h.port as usize);
                }
            }
        }
    }
}
