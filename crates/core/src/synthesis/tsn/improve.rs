//! A large-neighbourhood search around a schedule: free a few streams (those of one port, or
//! those in the way of a wider margin), keep every other stream where it is, place the freed
//! ones again one by one, and keep the result when it is no worse.
//!
//! * **Bandwidth** ([`Goal::Pack`]): the objective is the report's own, the smallest share of a
//!   port's time left usable to the unscheduled classes (each gap between windows less the
//!   port's guard band), then their sum over the ports. A freed stream goes to the offset,
//!   among those where one of its windows touches another window (its start at the other's end,
//!   or its end at the other's start) and a few first-fit scans from random offsets, that leaves
//!   its ports the most usable time.
//! * **Slack** ([`Goal::Margin`]): the schedule keeps margin m; the search aims at a wider one,
//!   frees one stream of each pair closer than that, and places them again at the wider margin.
//!
//! Every schedule it keeps passes [`Instance::check`] at its margin and keeps a gap for each
//! port's largest unscheduled frame ([`Instance::leaves_room_keeping`]); it never reports a bound.

use super::schedule::{fit_stream, put, Goal, Instance, Placed, Stream, Waits};
use crate::schedulers::tas::{gcd, periodic_disjoint};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// A schedule: its margin (0 under Pack), offsets and waits.
pub type Schedule = (i64, Vec<i64>, Waits);

/// What the search did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Stats {
    /// Neighbourhoods tried, and those whose result was kept (no worse), and strictly better.
    pub rounds: usize,
    pub kept: usize,
    pub improved: usize,
}

/// The share of port `k`'s time left to its unscheduled classes: over the hyperperiod of its
/// streams, each gap between windows less the guard band (what the report measures).
pub fn usable(inst: &Instance, list: &[(usize, usize)], offsets: &[i64], waits: &Waits, k: usize) -> f64 {
    let guard = inst.guards.get(k).copied().unwrap_or(0);
    if list.is_empty() {
        return 1.0;
    }
    let Some((h, w)) = inst.windows_at(list, offsets, waits) else {
        return 0.0;
    };
    let mut end = i64::MIN;
    let mut free = 0;
    for i in 0..w.len() {
        end = end.max(w[i].1);
        let next = w.get(i + 1).map_or(w[0].0 + h, |x| x.0);
        free += (next - end - guard).max(0);
    }
    free as f64 / h as f64
}

/// The bandwidth score over the ports with a guard band (the others' share does not depend on
/// the offsets): the smallest usable share, then their sum.
pub fn score(inst: &Instance, by_port: &[Vec<(usize, usize)>], offsets: &[i64], waits: &Waits) -> (f64, f64) {
    let mut min = f64::INFINITY;
    let mut sum = 0.0;
    for (k, list) in by_port.iter().enumerate() {
        if inst.guards.get(k).copied().unwrap_or(0) == 0 || list.is_empty() {
            continue;
        }
        let u = usable(inst, list, offsets, waits, k);
        min = min.min(u);
        sum += u;
    }
    (if min.is_finite() { min } else { 1.0 }, sum)
}

/// Whether score `a` is at least `b` (lexicographic, up to rounding).
pub fn no_worse(a: (f64, f64), b: (f64, f64)) -> bool {
    const EPS: f64 = 1e-12;
    a.0 > b.0 + EPS || (a.0 >= b.0 - EPS && a.1 >= b.1 - EPS)
}

fn better(a: (f64, f64), b: (f64, f64)) -> bool {
    const EPS: f64 = 1e-12;
    a.0 > b.0 + EPS || (a.0 >= b.0 - EPS && a.1 > b.1 + EPS)
}

/// The windows and occupancies of every stream but those in `freed`, at `margin`.
fn placed_without(
    inst: &Instance,
    offsets: &[i64],
    waits: &Waits,
    freed: &[bool],
    margin: i64,
) -> Vec<Vec<Placed>> {
    let mut placed: Vec<Vec<Placed>> = vec![Vec::new(); inst.ports];
    for (s, st) in inst.streams.iter().enumerate() {
        if !freed[s] {
            put(&mut placed, st, offsets[s], &waits[s], margin);
        }
    }
    placed
}

/// The search from `start` until `deadline` or `max_rounds` neighbourhoods (seeded: the same
/// rounds give the same result). Returns a schedule no worse than `start`.
pub fn improve(
    inst: &Instance,
    goal: Goal,
    start: Schedule,
    margin_upper: i64,
    deadline: Instant,
    max_rounds: usize,
    seed: u64,
) -> (Schedule, Stats) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let by_port = inst.by_port();
    let mut stats = Stats::default();
    if inst.streams.len() < 2 {
        return (start, stats);
    }
    match goal {
        Goal::Pack => pack(inst, &by_port, start, deadline, max_rounds, &mut rng, &mut stats),
        Goal::Margin => {
            widen(inst, &by_port, start, margin_upper, deadline, max_rounds, &mut rng, &mut stats)
        }
    }
}

/// Whether every port with a guard band has at most one gap (its share is then its bound).
fn packed_fully(inst: &Instance, by_port: &[Vec<(usize, usize)>], offsets: &[i64], waits: &Waits) -> bool {
    by_port.iter().enumerate().all(|(k, list)| {
        let guard = inst.guards.get(k).copied().unwrap_or(0);
        guard == 0 || list.len() < 2 || {
            let h = list
                .iter()
                .fold(1i64, |h, &(s, _)| h / gcd(h, inst.streams[s].period) * inst.streams[s].period);
            let busy: i64 =
                list.iter().map(|&(s, v)| inst.streams[s].visits[v].len * (h / inst.streams[s].period)).sum();
            let best = (h - busy - guard).max(0) as f64 / h as f64;
            usable(inst, list, offsets, waits, k) >= best - 1e-12
        }
    })
}

/// The bandwidth search.
fn pack(
    inst: &Instance,
    by_port: &[Vec<(usize, usize)>],
    start: Schedule,
    deadline: Instant,
    max_rounds: usize,
    rng: &mut ChaCha8Rng,
    stats: &mut Stats,
) -> (Schedule, Stats) {
    let (_, mut offsets, mut waits) = start;
    let room = inst.leaves_room(&offsets, &waits);
    let mut current = score(inst, by_port, &offsets, &waits);
    let ports: Vec<usize> =
        (0..inst.ports).filter(|&k| inst.guards[k] > 0 && by_port[k].len() >= 2).collect();
    if ports.is_empty() {
        return ((0, offsets, waits), stats.clone());
    }
    // Rounds without a strict improvement before the search stops.
    let patience = 1000 + 100 * inst.streams.len();
    let mut since = 0;
    while stats.rounds < max_rounds && since < patience && Instant::now() < deadline {
        if packed_fully(inst, by_port, &offsets, &waits) {
            break;
        }
        since += 1;
        stats.rounds += 1;
        // The bottleneck port half of the time, else any port with a guard band.
        let k = if rng.gen_bool(0.5) {
            *ports
                .iter()
                .min_by(|&&a, &&b| {
                    usable(inst, &by_port[a], &offsets, &waits, a).total_cmp(&usable(
                        inst,
                        &by_port[b],
                        &offsets,
                        &waits,
                        b,
                    ))
                })
                .expect("ports")
        } else {
            ports[rng.gen_range(0..ports.len())]
        };
        let mut freed_list: Vec<usize> = by_port[k].iter().map(|&(s, _)| s).collect();
        freed_list.sort_unstable();
        freed_list.dedup();
        freed_list.shuffle(rng);
        freed_list.truncate(rng.gen_range(1..=8));
        let mut freed = vec![false; inst.streams.len()];
        freed_list.iter().for_each(|&s| freed[s] = true);
        let mut placed = placed_without(inst, &offsets, &waits, &freed, 0);
        let (mut o2, mut w2) = (offsets.clone(), waits.clone());
        let mut ok = true;
        for &s in &freed_list {
            match best_offset(inst, by_port, &placed, s, &mut o2, &mut w2, &freed, rng) {
                Some(()) => put(&mut placed, &inst.streams[s], o2[s], &w2[s], 0),
                None => {
                    ok = false;
                    break;
                }
            }
            freed[s] = false;
        }
        if !ok || (room && !inst.leaves_room(&o2, &w2)) {
            continue;
        }
        let next = score(inst, by_port, &o2, &w2);
        if no_worse(next, current) {
            debug_assert!(inst.check(&o2, &w2, 0));
            stats.kept += 1;
            if better(next, current) {
                stats.improved += 1;
                since = 0;
            }
            (offsets, waits, current) = (o2, w2, next);
        }
    }
    ((0, offsets, waits), stats.clone())
}

/// Places stream `s` (freed) at the offset, among candidates, that leaves its ports the most
/// usable time with the streams placed so far (those still `freed` left out); writes its offset
/// and waits into `o` and `w`. None when no candidate fits.
#[allow(clippy::too_many_arguments)]
fn best_offset(
    inst: &Instance,
    by_port: &[Vec<(usize, usize)>],
    placed: &[Vec<Placed>],
    s: usize,
    o: &mut [i64],
    w: &mut Waits,
    freed: &[bool],
    rng: &mut ChaCha8Rng,
) -> Option<()> {
    let st = &inst.streams[s];
    let t = st.period;
    let mut cands: Vec<i64> = Vec::new();
    for (v, visit) in st.visits.iter().enumerate() {
        let (start, len, _) = st.window(v, 0, &vec![0; st.visits.len()], 0);
        for &((a, l, _), _, _) in &placed[visit.port] {
            // Its start at the other's end, or its end at the other's start.
            cands.push((a + l - start).rem_euclid(t));
            cands.push((a - len - start).rem_euclid(t));
        }
    }
    cands.sort_unstable();
    cands.dedup();
    cands.shuffle(rng);
    cands.truncate(48);
    let mut tried: Vec<(i64, Vec<i64>)> =
        cands.iter().filter_map(|&c| fit_stream(st, placed, c, c + 1, 0)).collect();
    // First fit from 0, from where it was, and from two random offsets.
    for from in [0, o[s].rem_euclid(t), rng.gen_range(0..t), rng.gen_range(0..t)] {
        if let Some(x) = fit_stream(st, placed, from, from + t, 0) {
            tried.push(x);
        }
    }
    let ports: Vec<usize> = st.visits.iter().map(|v| v.port).collect();
    let mut best: Option<(f64, i64, Vec<i64>)> = None;
    for (c, wc) in tried {
        o[s] = c;
        w[s] = wc.clone();
        let mut value = 0.0;
        for &k in &ports {
            if inst.guards[k] == 0 {
                continue;
            }
            let list: Vec<(usize, usize)> =
                by_port[k].iter().copied().filter(|&(x, _)| !freed[x] || x == s).collect();
            value += usable(inst, &list, o, w, k);
        }
        if best.as_ref().is_none_or(|b| value > b.0 + 1e-12) {
            best = Some((value, c, wc));
        }
    }
    let (_, c, wc) = best?;
    o[s] = c.rem_euclid(t);
    w[s] = wc;
    // An offset taken modulo the period keeps every window (they repeat every period).
    Some(())
}

/// How many of the windows in `placed` (at `margin`) stream `st` at offset `o` with waits `w`
/// meets at `margin` (its occupancies for frames of one queue).
fn conflicts(st: &Stream, placed: &[Vec<Placed>], o: i64, w: &[i64], margin: i64) -> usize {
    let mut n = 0;
    for (v, visit) in st.visits.iter().enumerate() {
        let (win, occ) = (st.window(v, o, w, margin), st.occupancy(v, o, w, margin));
        n += placed[visit.port]
            .iter()
            .filter(|&&(ow, oo, level)| {
                if level == visit.level {
                    !periodic_disjoint(occ, oo)
                } else {
                    !periodic_disjoint(win, ow)
                }
            })
            .count();
    }
    n
}

/// Whether visit `vs` of stream `s` and visit `vx` of stream `x` (at one port) meet at margin `m`.
fn meet(
    inst: &Instance,
    o: &[i64],
    w: &Waits,
    (s, vs): (usize, usize),
    (x, vx): (usize, usize),
    m: i64,
) -> bool {
    let (a, b) = (&inst.streams[s], &inst.streams[x]);
    if a.visits[vs].level == b.visits[vx].level {
        !periodic_disjoint(a.occupancy(vs, o[s], &w[s], m), b.occupancy(vx, o[x], &w[x], m))
    } else {
        !periodic_disjoint(a.window(vs, o[s], &w[s], m), b.window(vx, o[x], &w[x], m))
    }
}

/// Per stream, how many windows of others it meets at margin `m`.
fn conflict_counts(
    inst: &Instance,
    by_port: &[Vec<(usize, usize)>],
    o: &[i64],
    w: &Waits,
    m: i64,
) -> Vec<usize> {
    let mut count = vec![0; inst.streams.len()];
    for list in by_port {
        for (i, &a) in list.iter().enumerate() {
            for &b in &list[i + 1..] {
                if meet(inst, o, w, a, b, m) {
                    count[a.0] += 1;
                    count[b.0] += 1;
                }
            }
        }
    }
    count
}

/// Adds `sign` (±1) to the counts of the streams stream `s` meets at margin `m`, and to its own.
#[allow(clippy::too_many_arguments)]
fn tally(
    inst: &Instance,
    by_port: &[Vec<(usize, usize)>],
    o: &[i64],
    w: &Waits,
    s: usize,
    m: i64,
    count: &mut [isize],
    sign: isize,
) {
    for (v, visit) in inst.streams[s].visits.iter().enumerate() {
        for &b in &by_port[visit.port] {
            if b.0 != s && meet(inst, o, w, (s, v), b, m) {
                count[b.0] += sign;
                count[s] += sign;
            }
        }
    }
}

/// The slack search: the schedule keeps margin m; a target m + step is reached by moves of one
/// stream at a time (min-conflicts): a stream closer than the target to another goes to the
/// offset, among those that keep margin m with every other stream, closest to none at the
/// target. The step is halved after a target is missed, doubled after one is reached.
#[allow(clippy::too_many_arguments)]
fn widen(
    inst: &Instance,
    by_port: &[Vec<(usize, usize)>],
    start: Schedule,
    upper: i64,
    deadline: Instant,
    max_rounds: usize,
    rng: &mut ChaCha8Rng,
    stats: &mut Stats,
) -> (Schedule, Stats) {
    let (mut margin, mut offsets, mut waits) = start;
    let n = inst.streams.len();
    let mut step = ((upper - margin) / 16).max(1);
    let moves_per_target = 20 * n + 200;
    let mut misses_at_one = 0;
    while margin < upper && stats.rounds < max_rounds && Instant::now() < deadline {
        stats.rounds += 1;
        let target = (margin + step).min(upper);
        let (mut o2, mut w2) = (offsets.clone(), waits.clone());
        let mut count: Vec<isize> =
            conflict_counts(inst, by_port, &o2, &w2, target).into_iter().map(|c| c as isize).collect();
        let mut reached = false;
        for _ in 0..moves_per_target {
            if Instant::now() >= deadline {
                break;
            }
            // The streams in the way of the target.
            let hot: Vec<usize> = (0..n).filter(|&s| count[s] > 0).collect();
            if hot.is_empty() {
                reached = true;
                break;
            }
            let s = hot[rng.gen_range(0..hot.len())];
            let mut freed = vec![false; n];
            freed[s] = true;
            let keep = placed_without(inst, &o2, &w2, &freed, margin);
            let aim = placed_without(inst, &o2, &w2, &freed, target);
            let st = &inst.streams[s];
            let t = st.period;
            let mut cands: Vec<i64> = Vec::new();
            for (v, visit) in st.visits.iter().enumerate() {
                let (start, len, _) = st.window(v, 0, &w2[s], target);
                for &((a, l, _), _, _) in &aim[visit.port] {
                    cands.push((a + l - start).rem_euclid(t));
                    cands.push((a - len - start).rem_euclid(t));
                }
            }
            cands.shuffle(rng);
            cands.truncate(64);
            cands.push(o2[s]);
            // The fewest conflicts at the target first (ties in random order), the first that
            // leaves the unscheduled classes at its ports half of the time they have to spare.
            let mut fits: Vec<(usize, i64, Vec<i64>)> = cands
                .into_iter()
                .filter_map(|c| fit_stream(st, &keep, c, c + 1, margin))
                .map(|(c, wc)| (conflicts(st, &aim, c, &wc, target), c, wc))
                .collect();
            fits.sort_by_key(|x| x.0);
            let (old_o, old_w) = (o2[s], w2[s].clone());
            tally(inst, by_port, &o2, &w2, s, target, &mut count, -1);
            for (_, c, wc) in fits {
                (o2[s], w2[s]) = (c.rem_euclid(t), wc);
                if st.visits.iter().all(|v| inst.room_at(v.port, &by_port[v.port], &o2, &w2, 0.5)) {
                    break;
                }
                (o2[s], w2[s]) = (old_o, old_w.clone());
            }
            tally(inst, by_port, &o2, &w2, s, target, &mut count, 1);
        }
        if reached && inst.leaves_room_keeping(&o2, &w2, 0.5) && inst.check(&o2, &w2, target) {
            stats.kept += 1;
            stats.improved += 1;
            (margin, offsets, waits) = (target, o2, w2);
            step = step.saturating_mul(2);
        } else if step > 1 {
            step = (step / 2).max(1);
        } else {
            misses_at_one += 1;
            if misses_at_one >= 3 {
                break;
            }
        }
    }
    ((margin, offsets, waits), stats.clone())
}

#[cfg(test)]
mod tests {
    use super::super::schedule::{default_order, first_fit, widest_first_fit, Stream, Visit};
    use super::*;

    fn visit(port: usize, start: i64, len: i64) -> Visit {
        Visit { port, start, len, parent: None, hold: false, level: 0, budget: 0 }
    }

    fn far() -> Instant {
        Instant::now() + std::time::Duration::from_secs(10)
    }

    /// Two ports A (0) and B (1), period 100, a guard band of 10 at each. Stream 0 crosses A
    /// (window 30); stream 1 crosses A (20) and, 50 later, B (20); stream 2 crosses B (30).
    /// First fit (stream 1 first, the longest) puts 1 at 0 (A [0, 20), B [50, 70)), 0 at 20
    /// (A [20, 50)) and 2 at 0 (B [0, 30)): B keeps gaps of 20 and 30, usable (20 − 10) +
    /// (30 − 10) = 30 %. Stream 2 at 20 or 70 closes B's windows up: one gap of 50, usable 40 %,
    /// as at A, which is each port's bound (100 − 50 − 10) / 100: the optimum.
    #[test]
    fn search_reaches_the_optimum_first_fit_misses() {
        let inst = Instance {
            streams: vec![
                Stream { period: 100, eps: 0, visits: vec![visit(0, 0, 30)] },
                Stream { period: 100, eps: 0, visits: vec![visit(0, 0, 20), visit(1, 50, 20)] },
                Stream { period: 100, eps: 0, visits: vec![visit(1, 0, 30)] },
            ],
            ports: 2,
            guards: vec![10, 10],
            others_load: vec![0.0, 0.0],
        };
        let by_port = inst.by_port();
        let ff = first_fit(&inst, &default_order(&inst), 0, 0, far());
        let (o, w) = (ff.offsets.expect("fits"), ff.waits.expect("waits"));
        assert_eq!(o, vec![20, 0, 0]);
        assert!((score(&inst, &by_port, &o, &w).0 - 0.30).abs() < 1e-12);
        let ((_, o2, w2), stats) = improve(&inst, Goal::Pack, (0, o, w), 0, far(), 1000, 7);
        assert!(inst.check(&o2, &w2, 0) && inst.leaves_room(&o2, &w2));
        assert!((score(&inst, &by_port, &o2, &w2).0 - 0.40).abs() < 1e-12, "{o2:?}");
        assert!(o2[2] == 20 || o2[2] == 70, "{o2:?}");
        assert!(stats.improved >= 1);
    }

    /// Random small instances (1-3 ports, 2-6 streams, periods 100 or 200, one or two visits):
    /// what the search returns passes the exact check at its margin, keeps room where first fit
    /// did, and is never worse than first fit, under both goals.
    #[test]
    fn search_is_never_worse_than_first_fit() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut searched = 0;
        for _ in 0..300 {
            let ports = rng.gen_range(1..=3);
            let n = rng.gen_range(2..=6);
            let streams: Vec<Stream> = (0..n)
                .map(|_| {
                    let period = [100, 200][rng.gen_range(0..2)];
                    let first = rng.gen_range(0..ports);
                    let mut visits = vec![visit(first, rng.gen_range(0..50), rng.gen_range(5..25))];
                    if ports > 1 && rng.gen_bool(0.5) {
                        let second = (first + 1) % ports;
                        visits.push(Visit {
                            parent: Some(0),
                            ..visit(second, rng.gen_range(50..150), rng.gen_range(5..25))
                        });
                    }
                    Stream { period, eps: 0, visits }
                })
                .collect();
            let inst = Instance {
                streams,
                ports,
                guards: (0..ports).map(|_| rng.gen_range(0..15)).collect(),
                others_load: vec![0.0; ports],
            };
            let by_port = inst.by_port();
            let ff = first_fit(&inst, &default_order(&inst), 0, 5, far());
            let (Some(o), Some(w)) = (ff.offsets, ff.waits) else { continue };
            searched += 1;
            let before = score(&inst, &by_port, &o, &w);
            let room = inst.leaves_room(&o, &w);
            let ((m, o2, w2), _) = improve(&inst, Goal::Pack, (0, o, w), 0, far(), 200, 3);
            assert_eq!(m, 0);
            assert!(inst.check(&o2, &w2, 0));
            assert!(!room || inst.leaves_room(&o2, &w2));
            assert!(no_worse(score(&inst, &by_port, &o2, &w2), before));
            let upper = inst.margin_bound();
            if let Some((m0, o, w)) = widest_first_fit(&inst, upper, far()) {
                let ((m1, o1, w1), _) = improve(&inst, Goal::Margin, (m0, o, w), upper, far(), 50, 3);
                assert!(m1 >= m0 && m1 <= upper);
                assert!(inst.check(&o1, &w1, m1) && inst.leaves_room_keeping(&o1, &w1, 0.5));
            }
        }
        assert!(searched > 100, "{searched}");
    }
}
