//! The table schedulers' service models against their behaviours, one port at a time: random
//! tables, every other class greedy (always backlogged, frames of random sizes up to its
//! largest), one tagged class shaped by a token bucket whose frames arrive in random bursts,
//! idle gaps, and right after its own last frame left the queue (the case that adds L_i to the
//! latency). Every tagged frame's delay and the tagged backlog stay within the latency-rate
//! bound, Θ + b/ρ and b + r·Θ; the worst ratios are the tightness figures of docs/ANALYSIS.md.

use super::table::Entry;
use super::{as_table, dtable, iba_table, Behaviour, ClassAtPort, Queued};
use crate::model::TableKind;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// Wire overhead per frame (preamble, start delimiter, gap), bits.
const OVERHEAD: u32 = 160;

struct Case {
    kind: TableKind,
    entries: Vec<Entry>,
    /// Smallest and largest frame of each class, bytes.
    sizes: Vec<(u32, u32)>,
    tagged: usize,
}

/// `any_weights`: DTable weights drawn below the frames too (the paper requires them above).
fn random_case(rng: &mut ChaCha8Rng, kind: TableKind, any_weights: bool) -> Case {
    let n_classes = rng.gen_range(2..=5);
    let sizes: Vec<(u32, u32)> = (0..n_classes)
        .map(|_| {
            let lmax = rng.gen_range(64..=1518);
            (rng.gen_range(64..=lmax), lmax)
        })
        .collect();
    let n_entries = rng.gen_range(n_classes..=16);
    // Every class gets an entry, the rest are drawn; then the order is shuffled.
    let mut classes: Vec<usize> =
        (0..n_classes).chain((n_classes..n_entries).map(|_| rng.gen_range(0..n_classes))).collect();
    for k in (1..classes.len()).rev() {
        classes.swap(k, rng.gen_range(0..=k));
    }
    let entries = classes
        .into_iter()
        .map(|class| {
            let lmax = sizes[class].1 as u64;
            let bytes = match kind {
                TableKind::AsBasic => 1,
                // Weights at least the class's largest frame, as the paper requires.
                TableKind::Dtable if !any_weights => rng.gen_range(lmax..=3 * lmax),
                TableKind::Dtable | TableKind::IbaWeighted => rng.gen_range(64..=3000),
            };
            Entry { class, weight: bytes * 8 }
        })
        .collect();
    Case { kind, entries, sizes, tagged: rng.gen_range(0..n_classes) }
}

fn behaviour(c: &Case) -> Box<dyn Behaviour> {
    let n = c.sizes.len();
    match c.kind {
        TableKind::AsBasic => Box::new(as_table::AsTable::new(&c.entries, n)),
        TableKind::IbaWeighted => Box::new(iba_table::IbaTable::new(&c.entries, n)),
        TableKind::Dtable => Box::new(dtable::Dtable::new(&c.entries, n)),
    }
}

fn bound(c: &Case) -> super::LatencyRate {
    let classes: Vec<ClassAtPort> = c
        .sizes
        .iter()
        .map(|&(l, m)| ClassAtPort {
            share: 0.0,
            lmin: (l * 8 + OVERHEAD) as f64,
            lmax: (m * 8 + OVERHEAD) as f64,
            overhead: OVERHEAD as f64,
        })
        .collect();
    let entries: Vec<(usize, f64)> = c.entries.iter().map(|e| (e.class, e.weight as f64)).collect();
    let lr = match c.kind {
        TableKind::AsBasic => as_table::latency_rate,
        TableKind::IbaWeighted => iba_table::latency_rate,
        TableKind::Dtable => dtable::latency_rate,
    };
    // Link of 1 bit per time unit.
    lr(c.tagged, &entries, &classes, 1.0)
}

/// Worst delay / (Θ + b/ρ) and worst backlog / (b + r·Θ) of the tagged class over `frames`
/// tagged frames, time in bit times.
fn run(c: &Case, rng: &mut ChaCha8Rng, frames: usize) -> (f64, f64) {
    let lr = bound(c);
    let (lmin, lmax) = c.sizes[c.tagged];
    let wire = |bytes: u32| bytes * 8 + OVERHEAD;
    let burst = (wire(lmax) * rng.gen_range(1..=4)) as f64;
    let rate = lr.rate * rng.gen_range(0.3..0.95);
    let delay_bound = lr.latency + burst / lr.rate;
    let backlog_bound = burst + rate * lr.latency;
    let mut s = behaviour(c);
    let mut id = 0u32;
    let mut frame = |class: usize, bytes: u32| {
        id += 1;
        Queued { frame: id, class: class as u16, wire_bits: wire(bytes), frame_bits: bytes * 8 }
    };
    let size =
        |rng: &mut ChaCha8Rng, (l, m): (u32, u32)| if rng.gen_bool(0.5) { m } else { rng.gen_range(l..=m) };
    // Greedy classes: two frames waiting at all times.
    let mut greedy_waiting = vec![0usize; c.sizes.len()];
    // Token bucket of the tagged source and its next frame.
    let (mut tokens, mut tokens_at) = (burst, 0.0f64);
    let mut next_size = size(rng, (lmin, lmax));
    let mut next_at = 0.0f64;
    let mut pending: VecDeque<(f64, f64)> = VecDeque::new(); // (arrival, wire bits) in the queue
                                                             // Tagged bits arrived, and sent before the last transmission; that transmission if tagged.
    let (mut arrived, mut departed) = (0.0f64, 0.0f64);
    let mut on_wire: Option<(f64, f64)> = None;
    let (mut worst_delay, mut worst_backlog) = (0.0f64, 0.0f64);
    let mut now = 0.0f64;
    let mut sent = 0;
    while sent < frames {
        for (k, w) in greedy_waiting.iter_mut().enumerate() {
            while k != c.tagged && *w < 2 {
                let b = size(rng, c.sizes[k]);
                s.enqueue(frame(k, b), 0);
                *w += 1;
            }
        }
        // Tagged arrivals up to now: each as soon as the bucket and the planned time allow.
        loop {
            let need = wire(next_size) as f64;
            let ready = tokens_at + ((need - tokens) / rate).max(0.0);
            let at = next_at.max(ready);
            if at > now {
                break;
            }
            tokens = (tokens + (at - tokens_at) * rate).min(burst) - need;
            tokens_at = at;
            s.enqueue(frame(c.tagged, next_size), 0);
            pending.push_back((at, need));
            arrived += need;
            // Backlog just after an arrival: what arrived minus what left by then, bit by bit (the
            // arrival falls in the last transmission, which ended at `now`).
            let leaving = on_wire.map_or(0.0, |(start, bits)| (at - start).clamp(0.0, bits));
            worst_backlog = worst_backlog.max(arrived - departed - leaving);
            next_size = size(rng, (lmin, lmax));
            next_at = match rng.gen_range(0..10) {
                0 => at + rng.gen_range(0.0..10.0) * lmax as f64 * 8.0 / rate,
                _ => at,
            };
        }
        if let Some((_, bits)) = on_wire.take() {
            departed += bits;
        }
        let q = s.dequeue(0).expect("greedy classes keep the port busy");
        let start = now;
        now += q.wire_bits as f64;
        if q.class as usize == c.tagged {
            let (arrival, bits) = pending.pop_front().expect("tagged frames leave in order");
            on_wire = Some((start, bits));
            worst_delay = worst_delay.max(now - arrival);
            sent += 1;
            if pending.is_empty() && rng.gen_bool(0.5) {
                // The next frame arrives right after the class emptied, its last frame on the wire.
                next_at = next_at.max(start + 1.0);
            }
        } else {
            greedy_waiting[q.class as usize] -= 1;
        }
    }
    (worst_delay / delay_bound, worst_backlog / backlog_bound)
}

/// Random cases per table kind and tagged frames per case.
const CASES: usize = 150;
const FRAMES: usize = 400;

#[test]
fn simulated_delay_and_backlog_within_the_bounds() {
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let kinds = [
        (TableKind::AsBasic, false),
        (TableKind::IbaWeighted, false),
        (TableKind::Dtable, false),
        (TableKind::Dtable, true),
    ];
    for (kind, any_weights) in kinds {
        let mut ratios: Vec<(f64, f64)> = Vec::new();
        for case in 0..CASES {
            let c = random_case(&mut rng, kind, any_weights);
            let (d, b) = run(&c, &mut rng, FRAMES);
            assert!(
                d <= 1.0 + 1e-9 && b <= 1.0 + 1e-9,
                "{kind:?} case {case}: delay {d:.3}, backlog {b:.3}: {:?} {:?} tagged {}",
                c.entries,
                c.sizes,
                c.tagged
            );
            ratios.push((d, b));
        }
        let mut d: Vec<f64> = ratios.iter().map(|r| r.0).collect();
        let mut b: Vec<f64> = ratios.iter().map(|r| r.1).collect();
        d.sort_by(f64::total_cmp);
        b.sort_by(f64::total_cmp);
        eprintln!(
            "{kind:?}{}: delay/bound median {:.2} max {:.2}; backlog/bound median {:.2} max {:.2}",
            if any_weights { " (any weights)" } else { "" },
            d[d.len() / 2],
            d[d.len() - 1],
            b[b.len() / 2],
            b[b.len() - 1]
        );
    }
}
