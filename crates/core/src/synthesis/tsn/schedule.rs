//! Offsets of time-triggered streams such that no two frames' windows ever meet at a port
//! (no-wait): the instance, the first-fit heuristic, and the mixed-integer program an exact
//! solver answers.
//!
//! A stream `f` of period T_f, released at offset o_f ∈ [0, T_f), occupies each port `p` of its
//! route over [o_f + r_fp + k·T_f, … + len_fp) for every k: r_fp its no-wait arrival there (less
//! the clock error ε) and len_fp its transmission rounded up, its release jitter and 2ε. Two
//! streams never meet at `p` exactly when (o_g + r_gp − o_f − r_fp) mod G ∈ [len_f, G − len_g],
//! G = gcd(T_f, T_g) ([`crate::schedulers::tas::periodic_disjoint`]): one integer z per pair and
//! port turns that into two linear rows, len_f ≤ o_g − o_f + d − G·z ≤ G − len_g (d = r_gp − r_fp).
//! Shifting every offset by one amount keeps every row, so the first stream's offset is 0.

use crate::schedulers::tas::{gcd, periodic_disjoint};
use serde::Serialize;
use std::time::Instant;

/// One stream's passage through one constrained port.
#[derive(Clone, Debug)]
pub struct Visit {
    /// Index of the port in [`Instance::ports`].
    pub port: usize,
    /// Start of its window after the release, ns (no-wait arrival less ε).
    pub start: i64,
    /// Length of its window, ns.
    pub len: i64,
}

#[derive(Clone, Debug)]
pub struct Stream {
    pub period: i64,
    pub visits: Vec<Visit>,
}

/// Streams and the ports where they meet.
#[derive(Clone, Debug, Default)]
pub struct Instance {
    pub streams: Vec<Stream>,
    /// Number of constrained ports.
    pub ports: usize,
    /// Per port, the time the largest unscheduled frame there takes (ns, 0 for none): some gap
    /// between windows must be at least that long, or that frame never fits.
    pub guards: Vec<i64>,
    /// Per port, the unscheduled classes' load as a share of the link: the time left them, less
    /// a guard band per gap, must exceed it, or their queues grow without bound.
    pub others_load: Vec<f64>,
}

/// One row pair of the program: streams f < g at a port, G, d and the two window lengths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pair {
    pub f: usize,
    pub g: usize,
    pub gcd: i64,
    /// (r_g − r_f) mod G.
    pub d: i64,
    pub len_f: i64,
    pub len_g: i64,
    pub port: usize,
}

impl Instance {
    /// The streams of each port, with their visit there.
    pub fn by_port(&self) -> Vec<Vec<(usize, usize)>> {
        let mut out = vec![Vec::new(); self.ports];
        for (s, st) in self.streams.iter().enumerate() {
            for (v, visit) in st.visits.iter().enumerate() {
                out[visit.port].push((s, v));
            }
        }
        out
    }

    /// Every pair of streams sharing a port, once per distinct row (two ports at which a pair
    /// has the same G, d and lengths give the same rows).
    pub fn pairs(&self) -> Vec<Pair> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for (port, list) in self.by_port().iter().enumerate() {
            for (i, &(f, vf)) in list.iter().enumerate() {
                for &(g, vg) in &list[i + 1..] {
                    let (a, b) = (&self.streams[f], &self.streams[g]);
                    let gg = gcd(a.period, b.period);
                    let (va, vb) = (&a.visits[vf], &b.visits[vg]);
                    let d = (vb.start - va.start).rem_euclid(gg);
                    let pair = Pair { f, g, gcd: gg, d, len_f: va.len, len_g: vb.len, port };
                    if seen.insert(Pair { port: 0, ..pair }) {
                        out.push(pair);
                    }
                }
            }
        }
        out
    }

    /// Whether `offsets` keep every pair apart by `margin` more than their windows.
    pub fn check(&self, offsets: &[i64], margin: i64) -> bool {
        self.by_port().iter().all(|list| {
            list.iter().enumerate().all(|(i, &(f, vf))| {
                list[i + 1..].iter().all(|&(g, vg)| {
                    let w = |s: usize, v: usize| {
                        let st = &self.streams[s];
                        (offsets[s] + st.visits[v].start, st.visits[v].len + margin, st.period)
                    };
                    periodic_disjoint(w(f, vf), w(g, vg))
                })
            })
        })
    }

    /// Whether every port with unscheduled frames keeps, between its windows over its streams'
    /// hyperperiod, a gap as long as its largest such frame.
    pub fn leaves_room(&self, offsets: &[i64]) -> bool {
        self.leaves_room_keeping(offsets, 0.0)
    }

    /// [`Self::leaves_room`], the unscheduled classes also keeping the share `kept` of the time
    /// they have to spare beyond their load (what a margin between windows may not take).
    pub fn leaves_room_keeping(&self, offsets: &[i64], kept: f64) -> bool {
        self.by_port().iter().enumerate().all(|(k, list)| {
            let guard = self.guards.get(k).copied().unwrap_or(0);
            if guard == 0 || list.is_empty() {
                return true;
            }
            let Some(h) = list.iter().try_fold(1i64, |h, &(s, _)| {
                let t = self.streams[s].period;
                (h / gcd(h, t)).checked_mul(t)
            }) else {
                return false;
            };
            let mut w: Vec<(i64, i64)> = Vec::new();
            for &(s, v) in list {
                let st = &self.streams[s];
                for j in 0..h / st.period {
                    let a = (offsets[s] + st.visits[v].start + j * st.period).rem_euclid(h);
                    w.push((a, a + st.visits[v].len));
                }
            }
            w.sort_unstable();
            // The gap after each window, to the next (the first one again a cycle later).
            let mut end = i64::MIN;
            let (mut widest, mut usable) = (0, 0);
            for i in 0..w.len() {
                end = end.max(w[i].1);
                let next = w.get(i + 1).map_or(w[0].0 + h, |x| x.0);
                widest = widest.max(next - end);
                usable += (next - end - guard).max(0);
            }
            let load = self.others_load.get(k).copied().unwrap_or(0.0);
            let need = load + kept * (1.0 - load).max(0.0);
            widest >= guard && (load <= 0.0 || usable as f64 > need * h as f64)
        })
    }

    /// An upper bound of the margin any offsets can leave between consecutive windows: at a port
    /// whose windows repeat every H (the periods' least common multiple), n windows of total U
    /// leave H − U to share among n gaps.
    pub fn margin_bound(&self) -> i64 {
        let mut bound = i64::MAX;
        for list in self.by_port() {
            if list.len() < 2 {
                continue;
            }
            // In units of the port's hyperperiod: Σ len/T and Σ 1/T, compared per unit time.
            let (busy, count): (f64, f64) = list.iter().fold((0.0, 0.0), |(b, c), &(s, v)| {
                let st = &self.streams[s];
                (b + st.visits[v].len as f64 / st.period as f64, c + 1.0 / st.period as f64)
            });
            bound = bound.min(((1.0 - busy) / count).floor().max(0.0) as i64);
        }
        if bound == i64::MAX {
            0
        } else {
            bound
        }
    }
}

/// What the heuristic found.
#[derive(Clone, Debug, Serialize)]
pub struct FirstFit {
    pub offsets: Option<Vec<i64>>,
    /// Restarts taken (a stream that found no offset moved to the front of the order).
    pub restarts: usize,
    /// The stream that found no offset in the last try.
    #[serde(skip)]
    pub stuck: Option<usize>,
}

/// First fit: streams in `order`, each at the smallest offset whose windows meet no placed
/// stream's by less than `margin`, found by jumping past each conflict (the offset only grows,
/// so a stream is placed or refused after at most one pass over its period). A stream that fits
/// nowhere goes to the front and the placement starts again, up to `restarts` times or until
/// `deadline`.
pub fn first_fit(
    inst: &Instance,
    order: &[usize],
    margin: i64,
    restarts: usize,
    deadline: Instant,
) -> FirstFit {
    let mut order = order.to_vec();
    let mut tries = 0;
    loop {
        match place(inst, &order, margin) {
            Ok(offsets) => return FirstFit { offsets: Some(offsets), restarts: tries, stuck: None },
            Err(s) => {
                if tries >= restarts || Instant::now() >= deadline || order[0] == s {
                    return FirstFit { offsets: None, restarts: tries, stuck: Some(s) };
                }
                order.retain(|&x| x != s);
                order.insert(0, s);
                tries += 1;
            }
        }
    }
}

/// One first-fit pass: the offsets, or the first stream that fits nowhere.
fn place(inst: &Instance, order: &[usize], margin: i64) -> Result<Vec<i64>, usize> {
    // Per port: (start of window at offset 0 + offset, length + margin, period) of placed visits.
    let mut placed: Vec<Vec<(i64, i64, i64)>> = vec![Vec::new(); inst.ports];
    let mut offsets = vec![0; inst.streams.len()];
    for (k, &s) in order.iter().enumerate() {
        let st = &inst.streams[s];
        // The first stream placed sits at 0: shifting every offset together changes nothing.
        let mut o = 0;
        'search: loop {
            if o >= st.period || (k == 0 && o > 0) {
                return Err(s);
            }
            for v in &st.visits {
                let mine = (o + v.start, v.len + margin, st.period);
                for &other in &placed[v.port] {
                    if !periodic_disjoint(mine, other) {
                        let (sg, lg, tg) = other;
                        let g = gcd(st.period, tg);
                        if mine.1 + lg > g {
                            // No offset separates these two windows.
                            return Err(s);
                        }
                        // x = (s_g − s_f) mod G falls as o grows; the next admissible x is G − lg.
                        let x = (sg - mine.0).rem_euclid(g);
                        let step = (x - (g - lg)).rem_euclid(g).max(1);
                        o += step;
                        continue 'search;
                    }
                }
            }
            break;
        }
        offsets[s] = o;
        for v in &st.visits {
            placed[v.port].push((o + v.start, v.len + margin, st.period));
        }
    }
    Ok(offsets)
}

/// The default order: shortest period first, then the longest windows, then the longest routes
/// (the most constrained streams first, as rate-monotonic placement does).
pub fn default_order(inst: &Instance) -> Vec<usize> {
    let mut order: Vec<usize> = (0..inst.streams.len()).collect();
    order.sort_by_key(|&s| {
        let st = &inst.streams[s];
        let busy: i64 = st.visits.iter().map(|v| v.len).sum();
        (st.period, -busy, -(st.visits.len() as i64), s)
    });
    order
}

/// The largest margin first fit reaches (bisection between 0 and `upper`), with its offsets.
pub fn widest_first_fit(inst: &Instance, upper: i64, deadline: Instant) -> Option<(i64, Vec<i64>)> {
    let order = default_order(inst);
    let restarts = inst.streams.len().min(50);
    let mut best = first_fit(inst, &order, 0, restarts, deadline).offsets.map(|o| (0, o))?;
    let (mut lo, mut hi) = (0, upper);
    while lo < hi && Instant::now() < deadline {
        let mid = lo + (hi - lo + 1) / 2;
        // A wider margin that leaves an unscheduled frame no gap is no better.
        // Half of the time the unscheduled classes have to spare stays theirs: a margin that
        // leaves them a sliver of the link would bound them far above any useful deadline.
        match first_fit(inst, &order, mid, restarts, deadline)
            .offsets
            .filter(|o| inst.leaves_room_keeping(o, 0.5))
        {
            Some(o) => {
                best = (mid, o);
                lo = mid;
            }
            None => hi = mid - 1,
        }
    }
    Some(best)
}

/// A mixed-integer linear program: minimise c·x subject to lo ≤ A·x ≤ hi, bounds and
/// integrality per column. What the front's solver (HiGHS) is handed.
#[derive(Clone, Debug, Serialize)]
pub struct Milp {
    pub cost: Vec<f64>,
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
    pub integer: Vec<bool>,
    /// Rows: (columns, coefficients, lower, upper).
    pub rows: Vec<(Vec<usize>, Vec<f64>, f64, f64)>,
    /// A feasible start (the heuristic's), when there is one.
    pub start: Option<Vec<f64>>,
    /// Seconds the solver may take.
    pub time_limit: f64,
}

/// The solver's answer.
#[derive(Clone, Debug, Default)]
pub struct MilpAnswer {
    /// `optimal`, `infeasible`, `time_limit` (with or without a solution), or the solver's word.
    pub status: String,
    pub x: Option<Vec<f64>>,
    pub objective: Option<f64>,
    /// The best bound the solver proved (for a minimisation, a lower bound).
    pub bound: Option<f64>,
}

/// The front's solver of [`Milp`]s.
pub type MilpSolver<'a> = &'a mut dyn FnMut(&Milp) -> Result<MilpAnswer, String>;

/// What the exact program optimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    /// The earliest offsets (Σ o_f/T_f): windows packed towards the start of each period, so
    /// that they merge and the other classes lose fewer guard bands.
    Pack,
    /// The widest margin δ between any two windows (and, second, packed).
    Margin,
}

/// The program: columns o_f (integer ns), then z per pair, then δ (Margin). Rows per pair
/// len_f + δ ≤ o_g − o_f + d − G·z ≤ G − len_g − δ.
pub fn program(inst: &Instance, pairs: &[Pair], goal: Goal, margin_upper: i64) -> Milp {
    let n = inst.streams.len();
    let mut m = Milp {
        cost: Vec::new(),
        lower: Vec::new(),
        upper: Vec::new(),
        integer: Vec::new(),
        rows: Vec::with_capacity(pairs.len()),
        start: None,
        time_limit: 0.0,
    };
    for (s, st) in inst.streams.iter().enumerate() {
        // Packing is secondary under Margin: its weight keeps the sum below one δ unit.
        let w = match goal {
            Goal::Pack => 1.0 / n as f64,
            Goal::Margin => 1e-3 / n as f64,
        };
        m.cost.push(w / st.period as f64);
        m.lower.push(0.0);
        m.upper.push(if s == 0 { 0.0 } else { (st.period - 1) as f64 });
        m.integer.push(true);
    }
    let delta = n + pairs.len();
    for p in pairs {
        let (tf, tg) = (inst.streams[p.f].period, inst.streams[p.g].period);
        // o_g − o_f ∈ [−(T_f − 1), T_g − 1] bounds z.
        let zlo = (-(tf - 1) + p.d - p.gcd + p.len_g).div_euclid(p.gcd);
        let zhi = (tg - 1 + p.d - p.len_f).div_euclid(p.gcd) + 1;
        let z = m.cost.len();
        m.cost.push(0.0);
        m.lower.push(zlo as f64);
        m.upper.push(zhi as f64);
        m.integer.push(true);
        let (mut cols, mut coef) = (vec![p.g, p.f, z], vec![1.0, -1.0, -(p.gcd as f64)]);
        if goal == Goal::Margin {
            // Two rows, since δ enters them with opposite signs.
            cols.push(delta);
            coef.push(-1.0);
            m.rows.push((cols.clone(), coef.clone(), (p.len_f - p.d) as f64, f64::INFINITY));
            coef[3] = 1.0;
            m.rows.push((cols, coef, f64::NEG_INFINITY, (p.gcd - p.len_g - p.d) as f64));
        } else {
            m.rows.push((cols, coef, (p.len_f - p.d) as f64, (p.gcd - p.len_g - p.d) as f64));
        }
    }
    if goal == Goal::Margin {
        debug_assert_eq!(m.cost.len(), delta);
        m.cost.push(-1.0);
        m.lower.push(0.0);
        m.upper.push(margin_upper as f64);
        m.integer.push(true);
    }
    m
}

/// A start for [`program`] from offsets (and a margin): each pair's z follows from them.
pub fn start_of(inst: &Instance, pairs: &[Pair], goal: Goal, offsets: &[i64], margin: i64) -> Vec<f64> {
    let mut x: Vec<f64> = offsets.iter().map(|&o| o as f64).collect();
    // Offsets are relative to the first stream's, which the program fixes at 0.
    let base = offsets.first().copied().unwrap_or(0);
    for (s, v) in x.iter_mut().enumerate() {
        *v = (offsets[s] - base).rem_euclid(inst.streams[s].period) as f64;
    }
    for p in pairs {
        let diff = x[p.g] as i64 - x[p.f] as i64 + p.d;
        // z = the k with diff − G·k ∈ [len_f, G − len_g].
        x.push((diff - p.len_f).div_euclid(p.gcd) as f64);
    }
    if goal == Goal::Margin {
        x.push(margin as f64);
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(period: i64, visits: &[(usize, i64, i64)]) -> Stream {
        Stream {
            period,
            visits: visits.iter().map(|&(port, start, len)| Visit { port, start, len }).collect(),
        }
    }

    /// Three streams of period 100 on one port with windows of 30: they fit back to back at
    /// 0, 30, 60; a fourth of 30 does not (120 > 100), nor at a margin of 4 (3·34 > 100).
    #[test]
    fn first_fit_by_hand() {
        let far = Instant::now() + std::time::Duration::from_secs(10);
        let mut inst = Instance {
            streams: vec![stream(100, &[(0, 0, 30)]); 3],
            ports: 1,
            guards: vec![0],
            others_load: vec![0.0],
        };
        let ff = first_fit(&inst, &[0, 1, 2], 0, 0, far);
        assert_eq!(ff.offsets, Some(vec![0, 30, 60]));
        assert!(inst.check(&[0, 30, 60], 0) && !inst.check(&[0, 29, 60], 0));
        assert_eq!(inst.margin_bound(), 3);
        // Back to back at 0, 30, 60: one gap of 10 before the next period.
        inst.guards = vec![10];
        assert!(inst.leaves_room(&[0, 30, 60]));
        inst.guards = vec![11];
        assert!(!inst.leaves_room(&[0, 30, 60]));
        inst.guards = vec![0];
        assert_eq!(widest_first_fit(&inst, 3, far).map(|b| b.0), Some(3));
        inst.streams.push(stream(100, &[(0, 0, 30)]));
        assert!(first_fit(&inst, &[0, 1, 2, 3], 0, 5, far).offsets.is_none());
    }

    /// Periods 100 and 150 (G = 50): a window of 20 and one of 25 fit (45 ≤ 50) and first fit
    /// finds o = 20 for the second, which meets the first at no instance of the hyperperiod.
    #[test]
    fn first_fit_across_periods() {
        let far = Instant::now() + std::time::Duration::from_secs(10);
        let inst = Instance {
            streams: vec![stream(100, &[(0, 0, 20)]), stream(150, &[(0, 0, 25)])],
            ports: 1,
            guards: vec![0],
            others_load: vec![0.0],
        };
        let o = first_fit(&inst, &[0, 1], 0, 0, far).offsets.expect("fits");
        assert_eq!(o, vec![0, 20]);
        // Brute force over the hyperperiod 300.
        let busy = |s: usize| {
            let st = &inst.streams[s];
            let o = &o;
            (0..300 / st.period).flat_map(move |k| {
                let a = o[s] + k * st.period;
                (a..a + st.visits[0].len).map(|t| t.rem_euclid(300))
            })
        };
        let a: std::collections::HashSet<i64> = busy(0).collect();
        assert!(busy(1).all(|t| !a.contains(&t)));
    }

    /// The program's rows hold at the heuristic's start, and its z bounds contain the start's z.
    #[test]
    fn start_satisfies_the_program() {
        let far = Instant::now() + std::time::Duration::from_secs(10);
        let inst = Instance {
            streams: vec![
                stream(100, &[(0, 0, 10), (1, 15, 10)]),
                stream(200, &[(1, 0, 20), (2, 25, 20)]),
                stream(50, &[(0, 5, 5), (2, 3, 5)]),
            ],
            ports: 3,
            guards: vec![0; 3],
            others_load: vec![0.0; 3],
        };
        let pairs = inst.pairs();
        for goal in [Goal::Pack, Goal::Margin] {
            let (margin, o) = widest_first_fit(&inst, inst.margin_bound(), far).expect("fits");
            let m = program(&inst, &pairs, goal, inst.margin_bound());
            let x = start_of(&inst, &pairs, goal, &o, if goal == Goal::Margin { margin } else { 0 });
            for (j, v) in x.iter().enumerate() {
                assert!(
                    m.lower[j] <= *v && *v <= m.upper[j],
                    "column {j}: {v} not in [{}, {}]",
                    m.lower[j],
                    m.upper[j]
                );
            }
            for (cols, coef, lo, hi) in &m.rows {
                let ax: f64 = cols.iter().zip(coef).map(|(&c, a)| a * x[c]).sum();
                assert!(*lo <= ax && ax <= *hi, "{lo} <= {ax} <= {hi}");
            }
        }
    }
}
