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
//!
//! Bounded-wait adds an integer wait w per visit at a synthesised gate: the window of a visit
//! starts later by the waits up to and including it, and for two frames of one queue the
//! interval from one's arrival (the window less its own wait) to its window's end must not meet
//! the other's (frame isolation, as Craciunas et al. require of frames sharing a queue); the waits
//! on a route sum to at most its budget. The pair's two rows then differ (see [`program`]).

use crate::schedulers::tas::{gcd, periodic_disjoint};
use serde::Serialize;
use std::collections::BTreeMap;
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
    /// The visit before it on the stream's route (its port's upstream), if any.
    pub parent: Option<usize>,
    /// Whether the frame may wait here for its window (a synthesised gate; bounded-wait only).
    pub hold: bool,
    /// The priority level of its queue: frames of one level share a FIFO (isolation applies).
    pub level: u32,
    /// Most the frame may have waited in all, up to and including this port (ns).
    pub budget: i64,
}

#[derive(Clone, Debug)]
pub struct Stream {
    pub period: i64,
    pub visits: Vec<Visit>,
    /// The clock error ε (ns): a frame held at a gate leaves by that port's clock, so each gate
    /// upstream at which it waits widens its later windows by 2ε on the early side.
    pub eps: i64,
}

/// Per stream, the wait (ns) at each visit: all zero under no-wait.
pub type Waits = Vec<Vec<i64>>;

/// No wait anywhere.
pub fn no_waits(inst: &Instance) -> Waits {
    inst.streams.iter().map(|st| vec![0; st.visits.len()]).collect()
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

impl Stream {
    /// The wait accumulated up to and including visit `v` (ns).
    pub fn waited(&self, v: usize, waits: &[i64]) -> i64 {
        let mut sum = 0;
        let mut at = Some(v);
        while let Some(u) = at {
            sum += waits[u];
            at = self.visits[u].parent;
        }
        sum
    }

    /// How much earlier than its timetable the frame may reach visit `v`: 2ε per gate upstream
    /// at which it waits (that gate's clock against the next one's).
    pub fn early(&self, v: usize, waits: &[i64]) -> i64 {
        let mut n = 0;
        let mut at = self.visits[v].parent;
        while let Some(u) = at {
            n += i64::from(waits[u] > 0);
            at = self.visits[u].parent;
        }
        2 * self.eps * n
    }

    /// The window of visit `v` (start, length + `margin`, period) at offset `o`.
    pub fn window(&self, v: usize, o: i64, waits: &[i64], margin: i64) -> (i64, i64, i64) {
        let early = self.early(v, waits);
        (
            o + self.visits[v].start + self.waited(v, waits) - early,
            self.visits[v].len + early + margin,
            self.period,
        )
    }

    /// The interval the frame may be in the queue of visit `v`: from its arrival (the window's
    /// start less the wait there) to the window's end.
    pub fn occupancy(&self, v: usize, o: i64, waits: &[i64], margin: i64) -> (i64, i64, i64) {
        let (a, len, t) = self.window(v, o, waits, margin);
        (a - waits[v], len + waits[v], t)
    }
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
    /// The visits of f and g, and whether they share a queue (their occupancies must not meet,
    /// not only their windows).
    pub vf: usize,
    pub vg: usize,
    pub same_queue: bool,
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
                    let same_queue = va.level == vb.level;
                    let pair =
                        Pair { f, g, gcd: gg, d, len_f: va.len, len_g: vb.len, port, vf, vg, same_queue };
                    // Without waits the rows of a pair depend on G, d and the lengths only.
                    let key = if self.bounded() {
                        Pair { port: 0, ..pair }
                    } else {
                        Pair { port: 0, vf: 0, vg: 0, ..pair }
                    };
                    if seen.insert(key) {
                        out.push(pair);
                    }
                }
            }
        }
        out
    }

    /// Whether some frame may wait (bounded-wait).
    pub fn bounded(&self) -> bool {
        self.streams.iter().any(|s| s.visits.iter().any(|v| v.hold))
    }

    /// Whether `offsets` and `waits` keep every pair apart by `margin` more than their windows
    /// (their occupancies for two frames of one queue), and every wait within its visit's rules.
    pub fn check(&self, offsets: &[i64], waits: &[Vec<i64>], margin: i64) -> bool {
        let waits_ok = self.streams.iter().zip(waits).all(|(st, w)| {
            w.len() == st.visits.len()
                && st.visits.iter().enumerate().all(|(v, visit)| {
                    (w[v] == 0 || (visit.hold && w[v] > 0)) && st.waited(v, w) <= visit.budget
                })
        });
        waits_ok
            && self.by_port().iter().all(|list| {
                list.iter().enumerate().all(|(i, &(f, vf))| {
                    list[i + 1..].iter().all(|&(g, vg)| {
                        let (a, b) = (&self.streams[f], &self.streams[g]);
                        if a.visits[vf].level == b.visits[vg].level {
                            periodic_disjoint(
                                a.occupancy(vf, offsets[f], &waits[f], margin),
                                b.occupancy(vg, offsets[g], &waits[g], margin),
                            )
                        } else {
                            periodic_disjoint(
                                a.window(vf, offsets[f], &waits[f], margin),
                                b.window(vg, offsets[g], &waits[g], margin),
                            )
                        }
                    })
                })
            })
    }

    /// Whether every port with unscheduled frames keeps, between its windows over its streams'
    /// hyperperiod, a gap as long as its largest such frame.
    pub fn leaves_room(&self, offsets: &[i64], waits: &[Vec<i64>]) -> bool {
        self.leaves_room_keeping(offsets, waits, 0.0)
    }

    /// [`Self::leaves_room`], the unscheduled classes also keeping the share `kept` of the time
    /// they have to spare beyond their load (what a margin between windows may not take).
    pub fn leaves_room_keeping(&self, offsets: &[i64], waits: &[Vec<i64>], kept: f64) -> bool {
        self.by_port().iter().enumerate().all(|(k, list)| self.room_at(k, list, offsets, waits, kept))
    }

    /// The windows at a port whose streams and visits are `list`, over their hyperperiod `h`:
    /// (h, the windows [start, end) in order of start, start within [0, h)); None when `h`
    /// overflows.
    pub fn windows_at(
        &self,
        list: &[(usize, usize)],
        offsets: &[i64],
        waits: &[Vec<i64>],
    ) -> Option<(i64, Vec<(i64, i64)>)> {
        let h = list.iter().try_fold(1i64, |h, &(s, _)| {
            let t = self.streams[s].period;
            (h / gcd(h, t)).checked_mul(t)
        })?;
        let mut w: Vec<(i64, i64)> = Vec::new();
        for &(s, v) in list {
            let st = &self.streams[s];
            let (start, len, _) = st.window(v, offsets[s], &waits[s], 0);
            for j in 0..h / st.period {
                let a = (start + j * st.period).rem_euclid(h);
                w.push((a, a + len));
            }
        }
        w.sort_unstable();
        Some((h, w))
    }

    /// [`Self::leaves_room_keeping`] at port `k`, whose streams and visits are `list`.
    pub fn room_at(
        &self,
        k: usize,
        list: &[(usize, usize)],
        offsets: &[i64],
        waits: &[Vec<i64>],
        kept: f64,
    ) -> bool {
        {
            let guard = self.guards.get(k).copied().unwrap_or(0);
            if guard == 0 || list.is_empty() {
                return true;
            }
            let Some((h, w)) = self.windows_at(list, offsets, waits) else {
                return false;
            };
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
        }
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
            // Two streams' windows leave two gaps per G = gcd of their periods, each at least
            // the margin: 2δ ≤ G − len_f − len_g (the program's two rows of the pair).
            for (i, &(f, vf)) in list.iter().enumerate() {
                for &(g, vg) in &list[i + 1..] {
                    let (a, b) = (&self.streams[f], &self.streams[g]);
                    let room = gcd(a.period, b.period) - a.visits[vf].len - b.visits[vg].len;
                    bound = bound.min((room / 2).max(0));
                }
            }
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
    /// The waits of the offsets found (all zero under no-wait).
    #[serde(skip)]
    pub waits: Option<Waits>,
    /// Restarts taken (a stream that found no offset moved to the front of the order).
    pub restarts: usize,
    /// The stream that found no offset in the last try.
    #[serde(skip)]
    pub stuck: Option<usize>,
}

/// First fit: streams in `order`, each at the smallest offset whose windows meet no placed
/// stream's by less than `margin`, found by jumping past each conflict (the offset only grows,
/// so a stream is placed or refused after at most one pass over its period). Under bounded-wait
/// a visit whose window meets a placed one first tries to wait at that port, within its budget,
/// for the next gap (its occupancy then growing, which must meet no frame of its queue); only
/// then does the offset move. A stream that fits nowhere goes to the front and the placement
/// starts again, up to `restarts` times or until `deadline`.
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
            Ok((offsets, waits)) => {
                return FirstFit { offsets: Some(offsets), waits: Some(waits), restarts: tries, stuck: None }
            }
            Err(s) => {
                if tries >= restarts || Instant::now() >= deadline || order[0] == s {
                    return FirstFit { offsets: None, waits: None, restarts: tries, stuck: Some(s) };
                }
                order.retain(|&x| x != s);
                order.insert(0, s);
                tries += 1;
            }
        }
    }
}

/// A placed visit: its window and occupancy (start, length with margin, period) and level.
pub(crate) type Placed = ((i64, i64, i64), (i64, i64, i64), u32);

/// The shift of window `mine` that takes it past `other` (a conflict), and whether none can.
fn step_past(mine: (i64, i64, i64), other: (i64, i64, i64)) -> Option<i64> {
    let (sg, lg, tg) = other;
    let g = gcd(mine.2, tg);
    if mine.1 + lg > g {
        return None;
    }
    // x = (s_g − s_f) mod G falls as the start grows; the next admissible x is G − lg.
    let x = (sg - mine.0).rem_euclid(g);
    Some((x - (g - lg)).rem_euclid(g).max(1))
}

/// One first-fit pass: the offsets and waits, or the first stream that fits nowhere.
fn place(inst: &Instance, order: &[usize], margin: i64) -> Result<(Vec<i64>, Waits), usize> {
    let mut placed: Vec<Vec<Placed>> = vec![Vec::new(); inst.ports];
    let mut offsets = vec![0; inst.streams.len()];
    let mut waits = no_waits(inst);
    for (k, &s) in order.iter().enumerate() {
        let st = &inst.streams[s];
        // The first stream placed sits at 0: shifting every offset together changes nothing.
        let limit = if k == 0 { 1 } else { st.period };
        let (o, w) = fit_stream(st, &placed, 0, limit, margin).ok_or(s)?;
        offsets[s] = o;
        put(&mut placed, st, o, &w, margin);
        waits[s] = w;
    }
    Ok((offsets, waits))
}

/// Records a stream's windows and occupancies at its ports.
pub(crate) fn put(placed: &mut [Vec<Placed>], st: &Stream, o: i64, w: &[i64], margin: i64) {
    for (v, visit) in st.visits.iter().enumerate() {
        placed[visit.port].push((st.window(v, o, w, margin), st.occupancy(v, o, w, margin), visit.level));
    }
}

/// The smallest offset in [`from`, `limit`) at which the stream's windows (each waiting first
/// where it may, under bounded-wait) meet none of `placed` by less than `margin`, with its waits.
pub(crate) fn fit_stream(
    st: &Stream,
    placed: &[Vec<Placed>],
    from: i64,
    limit: i64,
    margin: i64,
) -> Option<(i64, Vec<i64>)> {
    let mut o = from;
    let mut w = vec![0; st.visits.len()];
    'search: loop {
        if o >= limit {
            return None;
        }
        w.iter_mut().for_each(|x| *x = 0);
        let mut v = 0;
        // The offset's step if the conflict cannot be waited away.
        let mut first_step: Option<i64> = None;
        'visit: while v < st.visits.len() {
            let visit = &st.visits[v];
            let win = st.window(v, o, &w, margin);
            let occ = st.occupancy(v, o, &w, margin);
            let conflict = placed[visit.port].iter().find_map(|&(ow, oo, level)| {
                if level == visit.level {
                    (!periodic_disjoint(occ, oo)).then_some((oo, true))
                } else {
                    (!periodic_disjoint(win, ow)).then_some((ow, false))
                }
            });
            let Some((other, same)) = conflict else {
                v += 1;
                continue 'visit;
            };
            let Some(step) = step_past(if same { occ } else { win }, other) else {
                // No offset separates these two windows.
                return None;
            };
            let first = *first_step.get_or_insert(step);
            let mut advance = first;
            // Wait here (a window of another level), or at the nearest port upstream where
            // the frame may wait (a frame of its own queue: waiting here would only lengthen
            // its occupancy; an earlier wait moves its arrival too); then check again from there.
            let mut at = Some(v);
            while let Some(u) = at {
                let cand = &st.visits[u];
                if cand.hold && !(u == v && same) {
                    let room = (visit.budget - st.waited(v, &w)).min(cand.budget - st.waited(u, &w));
                    if step <= room {
                        w[u] += step;
                        v = u;
                        continue 'visit;
                    }
                    // Too long a wait: a later offset needs that much less of it.
                    if room >= 0 {
                        advance = (step - room).max(1);
                    }
                    break;
                }
                at = cand.parent;
            }
            o += advance;
            continue 'search;
        }
        return Some((o, w));
    }
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

/// The largest margin first fit reaches (bisection between 0 and `upper`), with its offsets
/// and waits.
pub fn widest_first_fit(inst: &Instance, upper: i64, deadline: Instant) -> Option<(i64, Vec<i64>, Waits)> {
    let order = default_order(inst);
    let restarts = inst.streams.len().min(50);
    let ff = first_fit(inst, &order, 0, restarts, deadline);
    let mut best = (0, ff.offsets?, ff.waits?);
    let (mut lo, mut hi) = (0, upper);
    while lo < hi && Instant::now() < deadline {
        let mid = lo + (hi - lo + 1) / 2;
        // A wider margin that leaves an unscheduled frame no gap is no better.
        // Half of the time the unscheduled classes have to spare stays theirs: a margin that
        // leaves them a sliver of the link would bound them far above any useful deadline.
        let ff = first_fit(inst, &order, mid, restarts, deadline);
        match (ff.offsets, ff.waits) {
            (Some(o), Some(w)) if inst.leaves_room_keeping(&o, &w, 0.5) => {
                best = (mid, o, w);
                lo = mid;
            }
            _ => hi = mid - 1,
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

/// The columns of the program: offsets, then one wait per visit that may hold, then one z per
/// pair, then δ (Margin).
pub struct Columns {
    /// Per stream and visit, the column of its wait.
    pub wait: Vec<Vec<Option<usize>>>,
    /// Per stream and visit, the binary column "waits here" (with ε > 0: it widens the windows
    /// downstream by 2ε).
    pub held: Vec<Vec<Option<usize>>>,
    pub first_pair: usize,
    pub delta: usize,
}

pub fn columns(inst: &Instance, pairs: &[Pair]) -> Columns {
    let mut next = inst.streams.len();
    let wait = inst
        .streams
        .iter()
        .map(|st| {
            st.visits
                .iter()
                .map(|v| {
                    v.hold.then(|| {
                        next += 1;
                        next - 1
                    })
                })
                .collect()
        })
        .collect();
    let held = inst
        .streams
        .iter()
        .map(|st| {
            st.visits
                .iter()
                .map(|v| {
                    (v.hold && st.eps > 0).then(|| {
                        next += 1;
                        next - 1
                    })
                })
                .collect()
        })
        .collect();
    Columns { wait, held, first_pair: next, delta: next + pairs.len() }
}

/// The program: columns o_f (integer ns), w per visit that may hold (integer ns, bounded by
/// its budget), z per pair, then δ (Margin). With A_f the wait up to and including f's visit
/// and a_f the part of it before the port (A_f − w_f for two frames of one queue, whose
/// occupancies must not meet; A_f otherwise), rows per pair
/// len_f + δ − d ≤ o_g − o_f + a_g − A_f − G·z and o_g − o_f + A_g − a_f − G·z ≤ G − len_g − δ − d
/// (one row under no-wait, where both sides are alike); per visit A ≤ its budget.
pub fn program(inst: &Instance, pairs: &[Pair], goal: Goal, margin_upper: i64) -> Milp {
    let n = inst.streams.len();
    let cols = columns(inst, pairs);
    let mut m = Milp {
        cost: Vec::new(),
        lower: Vec::new(),
        upper: Vec::new(),
        integer: Vec::new(),
        rows: Vec::with_capacity(pairs.len()),
        start: None,
        time_limit: 0.0,
    };
    // Packing is secondary under Margin: its weight keeps the sum below one δ unit.
    let weight = match goal {
        Goal::Pack => 1.0 / n as f64,
        Goal::Margin => 1e-3 / n as f64,
    };
    for (s, st) in inst.streams.iter().enumerate() {
        m.cost.push(weight / st.period as f64);
        m.lower.push(0.0);
        m.upper.push(if s == 0 { 0.0 } else { (st.period - 1) as f64 });
        m.integer.push(true);
    }
    wait_columns(inst, &cols, weight, &mut m);
    // The "waits here" columns strictly upstream of visit v of stream s.
    let upstream_held = |s: usize, v: usize| -> Vec<usize> {
        let st = &inst.streams[s];
        let mut out = Vec::new();
        let mut at = st.visits[v].parent;
        while let Some(u) = at {
            out.extend(cols.held[s][u]);
            at = st.visits[u].parent;
        }
        out
    };
    // The wait columns up to and including visit v of stream s.
    let path = |s: usize, v: usize| -> Vec<usize> {
        let st = &inst.streams[s];
        let mut out = Vec::new();
        let mut at = Some(v);
        while let Some(u) = at {
            out.extend(cols.wait[s][u]);
            at = st.visits[u].parent;
        }
        out
    };
    let delta = cols.delta;
    let budget_of = |s: usize| inst.streams[s].visits.iter().map(|v| v.budget.max(0)).max().unwrap_or(0);
    for p in pairs {
        let (tf, tg) = (inst.streams[p.f].period, inst.streams[p.g].period);
        // o_g − o_f ∈ [−(T_f − 1), T_g − 1], the waits within their budgets: z's range.
        let (bf, bg) = (budget_of(p.f), budget_of(p.g));
        let zlo = (-(tf - 1) - bf + p.d - p.gcd + p.len_g).div_euclid(p.gcd) - 1;
        let zhi = (tg - 1 + bg + p.d - p.len_f).div_euclid(p.gcd) + 2;
        let z = m.cost.len();
        m.cost.push(0.0);
        m.lower.push(zlo as f64);
        m.upper.push(zhi as f64);
        m.integer.push(true);
        // Σ coefficients of the waits: +A_g/a_g, −A_f/a_f.
        let (pf, pg) = (path(p.f, p.vf), path(p.g, p.vg));
        let own = |s: usize, v: usize| if p.same_queue { cols.wait[s][v] } else { None };
        let (own_f, own_g) = (own(p.f, p.vf), own(p.g, p.vg));
        let row = |sign_lo: bool| -> (Vec<usize>, Vec<f64>) {
            let mut c: BTreeMap<usize, f64> = BTreeMap::new();
            *c.entry(p.g).or_default() += 1.0;
            *c.entry(p.f).or_default() -= 1.0;
            *c.entry(z).or_default() -= p.gcd as f64;
            for &k in &pg {
                *c.entry(k).or_default() += 1.0;
            }
            for &k in &pf {
                *c.entry(k).or_default() -= 1.0;
            }
            // Lower row: a_g − A_f (g's own wait out) − g's widening 2ε·Σh; upper row:
            // A_g − a_f (f's own wait out) + f's widening (a window's end does not move with it).
            if sign_lo {
                if let Some(k) = own_g {
                    *c.entry(k).or_default() -= 1.0;
                }
                for k in upstream_held(p.g, p.vg) {
                    *c.entry(k).or_default() -= 2.0 * inst.streams[p.g].eps as f64;
                }
            } else {
                if let Some(k) = own_f {
                    *c.entry(k).or_default() += 1.0;
                }
                for k in upstream_held(p.f, p.vf) {
                    *c.entry(k).or_default() += 2.0 * inst.streams[p.f].eps as f64;
                }
            }
            c.retain(|_, a| *a != 0.0);
            c.into_iter().unzip()
        };
        let (lo_cols, lo_coef) = row(true);
        let (hi_cols, hi_coef) = row(false);
        let (lo, hi) = ((p.len_f - p.d) as f64, (p.gcd - p.len_g - p.d) as f64);
        if goal == Goal::Margin {
            let mut with = |(mut cols, mut coef): (Vec<usize>, Vec<f64>), a: f64, lo: f64, hi: f64| {
                cols.push(delta);
                coef.push(a);
                m.rows.push((cols, coef, lo, hi));
            };
            with((lo_cols, lo_coef), -1.0, lo, f64::INFINITY);
            with((hi_cols, hi_coef), 1.0, f64::NEG_INFINITY, hi);
        } else if lo_cols == hi_cols && lo_coef == hi_coef {
            m.rows.push((lo_cols, lo_coef, lo, hi));
        } else {
            m.rows.push((lo_cols, lo_coef, lo, f64::INFINITY));
            m.rows.push((hi_cols, hi_coef, f64::NEG_INFINITY, hi));
        }
    }
    // Budgets: the wait accumulated at each visit (the last of a route bounds the frame's).
    for (s, st) in inst.streams.iter().enumerate() {
        for (v, visit) in st.visits.iter().enumerate() {
            let on = path(s, v);
            let is_leaf = !st.visits.iter().any(|u| u.parent == Some(v));
            if on.len() > 1 && is_leaf {
                m.rows.push((on.clone(), vec![1.0; on.len()], f64::NEG_INFINITY, visit.budget as f64));
            }
        }
    }
    if goal == Goal::Margin {
        debug_assert_eq!(m.cost.len(), cols.delta);
        m.cost.push(-1.0);
        m.lower.push(0.0);
        m.upper.push(margin_upper as f64);
        m.integer.push(true);
    }
    m
}

/// The program's wait columns (integer ns within each visit's budget, costed like offsets) and,
/// with ε > 0, their "waits here" binaries with w ≤ budget · h.
fn wait_columns(inst: &Instance, cols: &Columns, weight: f64, m: &mut Milp) {
    for (s, st) in inst.streams.iter().enumerate() {
        for (v, visit) in st.visits.iter().enumerate() {
            if cols.wait[s][v].is_some() {
                // Waiting costs like a later offset: the shortest waits that fit.
                m.cost.push(weight / st.period as f64);
                m.lower.push(0.0);
                m.upper.push(visit.budget.max(0) as f64);
                m.integer.push(true);
            }
        }
    }
    for (s, st) in inst.streams.iter().enumerate() {
        for (v, visit) in st.visits.iter().enumerate() {
            if let (Some(h), Some(w)) = (cols.held[s][v], cols.wait[s][v]) {
                debug_assert_eq!(m.cost.len(), h);
                m.cost.push(0.0);
                m.lower.push(0.0);
                m.upper.push(1.0);
                m.integer.push(true);
                // w ≤ budget · h: a wait makes h 1.
                m.rows.push((vec![w, h], vec![1.0, -(visit.budget.max(0) as f64)], f64::NEG_INFINITY, 0.0));
            }
        }
    }
}

/// A start for [`program`] from offsets, waits (and a margin): each pair's z follows from them.
pub fn start_of(
    inst: &Instance,
    pairs: &[Pair],
    goal: Goal,
    offsets: &[i64],
    waits: &[Vec<i64>],
    margin: i64,
) -> Vec<f64> {
    let cols = columns(inst, pairs);
    // Offsets are relative to the first stream's, which the program fixes at 0.
    let base = offsets.first().copied().unwrap_or(0);
    let rel: Vec<i64> =
        offsets.iter().enumerate().map(|(s, &o)| (o - base).rem_euclid(inst.streams[s].period)).collect();
    let mut x: Vec<f64> = rel.iter().map(|&o| o as f64).collect();
    for (col, w) in cols.wait.iter().zip(waits) {
        for (c, &wv) in col.iter().zip(w) {
            if c.is_some() {
                x.push(wv as f64);
            }
        }
    }
    for (col, w) in cols.held.iter().zip(waits) {
        for (c, &wv) in col.iter().zip(w) {
            if c.is_some() {
                x.push(if wv > 0 { 1.0 } else { 0.0 });
            }
        }
    }
    for p in pairs {
        let (a, b) = (&inst.streams[p.f], &inst.streams[p.g]);
        let aw_f = a.waited(p.vf, &waits[p.f]);
        let own_g = if p.same_queue { waits[p.g][p.vg] } else { 0 };
        let diff =
            rel[p.g] - rel[p.f] + b.waited(p.vg, &waits[p.g]) - own_g - b.early(p.vg, &waits[p.g]) - aw_f
                + p.d;
        // z = the k with diff − G·k ≥ len_f + δ (and the upper row then holds as well).
        x.push((diff - p.len_f - margin).div_euclid(p.gcd) as f64);
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
            eps: 0,
            visits: visits
                .iter()
                .map(|&(port, start, len)| Visit {
                    port,
                    start,
                    len,
                    parent: None,
                    hold: false,
                    level: 0,
                    budget: 0,
                })
                .collect(),
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
        let none = no_waits(&inst);
        assert!(inst.check(&[0, 30, 60], &none, 0) && !inst.check(&[0, 29, 60], &none, 0));
        assert_eq!(inst.margin_bound(), 3);
        // Back to back at 0, 30, 60: one gap of 10 before the next period.
        inst.guards = vec![10];
        assert!(inst.leaves_room(&[0, 30, 60], &none));
        inst.guards = vec![11];
        assert!(!inst.leaves_room(&[0, 30, 60], &none));
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
            let (margin, o, w) = widest_first_fit(&inst, inst.margin_bound(), far).expect("fits");
            let m = program(&inst, &pairs, goal, inst.margin_bound());
            let x = start_of(&inst, &pairs, goal, &o, &w, if goal == Goal::Margin { margin } else { 0 });
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

    /// The example's two streams as an instance: a and b share port 0 at the same instant, then
    /// port 2, b one 50 ns hop later (ports 1 and 3 are each one's own). No-wait: none (b − a must
    /// be in [40, 60] and in [−10, 10] mod 100). With waits of at most 30 at their own ports,
    /// first fit and the program both find one, and the check holds; at most 29: none.
    #[test]
    fn bounded_wait_by_hand() {
        let far = Instant::now() + std::time::Duration::from_secs(10);
        let visit = |port, start, parent, hold, budget| Visit {
            port,
            start,
            len: 40,
            parent,
            hold,
            level: 0,
            budget,
        };
        let make = |budget: i64| Instance {
            streams: vec![
                Stream {
                    period: 100,
                    eps: 0,
                    visits: vec![
                        visit(0, 0, None, false, budget),
                        visit(3, 50, Some(0), budget > 0, budget),
                        visit(2, 100, Some(1), false, budget),
                    ],
                },
                Stream {
                    period: 100,
                    eps: 0,
                    visits: vec![
                        visit(0, 0, None, false, budget),
                        visit(1, 50, Some(0), budget > 0, budget),
                        visit(2, 150, Some(1), false, budget),
                    ],
                },
            ],
            ports: 4,
            guards: vec![0; 4],
            others_load: vec![0.0; 4],
        };
        let none = make(0);
        assert!(first_fit(&none, &[0, 1], 0, 5, far).offsets.is_none());
        let inst = make(30);
        let ff = first_fit(&inst, &[0, 1], 0, 5, far);
        let (o, w) = (ff.offsets.expect("fits"), ff.waits.expect("waits"));
        assert!(inst.check(&o, &w, 0), "{o:?} {w:?}");
        assert!(w.iter().all(|v| v.iter().sum::<i64>() <= 30));
        // The program's rows hold at the heuristic's start.
        let pairs = inst.pairs();
        let m = program(&inst, &pairs, Goal::Pack, 0);
        let x = start_of(&inst, &pairs, Goal::Pack, &o, &w, 0);
        for (j, v) in x.iter().enumerate() {
            assert!(m.lower[j] <= *v && *v <= m.upper[j], "column {j}: {v}");
        }
        for (cols, coef, lo, hi) in &m.rows {
            let ax: f64 = cols.iter().zip(coef).map(|(&c, a)| a * x[c]).sum();
            assert!(*lo <= ax && ax <= *hi, "{lo} <= {ax} <= {hi}");
        }
        // Brute force: no offsets with waits of at most 29 in all.
        let tight = make(29);
        let found = (0..100).any(|d| {
            (0..=29).any(|wa| (0..=29).any(|wb| tight.check(&[0, d], &[vec![0, wa, 0], vec![0, wb, 0]], 0)))
        });
        assert!(!found);
        assert!(first_fit(&tight, &[0, 1], 0, 5, far).offsets.is_none());
    }
}
