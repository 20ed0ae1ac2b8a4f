//! Time-aware shaper (IEEE 802.1Q-2018 §8.6.8.4, formerly 802.1Qbv): a gate per priority level
//! opened and closed by a cyclic gate control list, non-preemptive static priority among the
//! levels whose gates are open.
//!
//! **Behaviour.** The list's entries (the classes whose gates are open, a duration) repeat every
//! `cycle`, from `base_time` (the schedule is periodic at every time, before the base time too).
//! A frame may start only while its gate is open and only if its last bit leaves before the gate
//! closes (the guard band, length-aware: a short frame may start later than a long one); the
//! highest open level whose head frame fits goes first.
//!
//! **Service model.** A level's gate is open in windows [o, c) of each cycle. While the level is
//! backlogged, from o + B (B the largest frame, over C, of another level whose gate is open across
//! o: only such a frame may have started before o and still be on the wire, since a frame ends
//! before its gate closes) to c − L/C (L the level's largest frame: past it the head may not fit), no lower
//! frame starts and the link sends the level or higher levels: in any interval of length τ the
//! link has at least C·S(τ) of such time, S the least supply of these usable intervals over any
//! start. S is bounded below by the rate-latency curve of rate ρ = Σ usable / cycle and latency
//! θ = the longest time S lags behind ρ·t (the periodic resource's linear supply bound, Shin &
//! Lee, "Periodic resource model for compositional real-time guarantees", RTSS 2003; for TSN
//! gates, Zhao, Pop & Craciunas, "Worst-case latency analysis for IEEE 802.1Qbv time sensitive
//! networks using network calculus", IEEE Access 2018). The level's service is then
//! [C·ρ·(t − θ − T) − Σ higher levels' output − L_other]^+, the higher levels' output bounded by
//! their arrival curves advanced by their delay bounds, L_other one frame in transmission when the
//! backlog starts, of another level whose gate is open inside one of the level's windows (the
//! others' frames occupy only time outside the windows, which the supply does not count).

use super::{Behaviour, ConfigProblem, Queued};
use crate::model::{GateEntry, TrafficClass};
use std::collections::VecDeque;

/// The time-aware shaper's configuration as written (`kind: tas`).
pub struct TasDiscipline<'a> {
    pub cycle: crate::units::Duration,
    pub base_time: crate::units::Duration,
    pub entries: &'a [GateEntry],
}

/// A gate control list in integer nanoseconds: per entry its start in the cycle, and which
/// levels it opens.
#[derive(Clone, Debug)]
pub struct Gcl {
    pub cycle_ns: i64,
    pub base_ns: i64,
    /// Start of each entry in the cycle, and the cycle's length after the last.
    pub starts: Vec<i64>,
    /// `open[e][level]`.
    pub open: Vec<Vec<bool>>,
}

impl Gcl {
    /// The list over `levels` (each a set of class names), from the entries as written.
    pub fn new(cycle_ns: i64, base_ns: i64, entries: &[GateEntry], levels: &[Vec<&str>]) -> Gcl {
        let mut starts = Vec::with_capacity(entries.len() + 1);
        let mut t = 0;
        for e in entries {
            starts.push(t);
            t += e.duration.as_ns();
        }
        starts.push(cycle_ns);
        let open = entries
            .iter()
            .map(|e| levels.iter().map(|names| names.iter().any(|n| e.open.iter().any(|o| o == n))).collect())
            .collect();
        Gcl { cycle_ns: cycle_ns.max(1), base_ns, starts, open }
    }

    /// Start of the cycle holding `t`, and the entry in force at `t`.
    fn locate(&self, t: i64) -> (i64, usize) {
        let phase = (t - self.base_ns).rem_euclid(self.cycle_ns);
        let cycle_start = t - phase;
        let e = self.starts[..self.starts.len() - 1].partition_point(|&s| s <= phase).saturating_sub(1);
        (cycle_start, e)
    }

    /// When the gate of `level`, open at `t`, closes (`i64::MAX` if it never does); `None` when
    /// it is closed at `t`.
    pub fn open_until(&self, level: usize, t: i64) -> Option<i64> {
        let n = self.open.len();
        let (mut cycle_start, mut e) = self.locate(t);
        if !self.open[e][level] {
            return None;
        }
        for _ in 0..=n {
            e += 1;
            if e == n {
                e = 0;
                cycle_start += self.cycle_ns;
            }
            if !self.open[e][level] {
                return Some(cycle_start + self.starts[e]);
            }
        }
        Some(i64::MAX)
    }

    /// The open windows (start, end) of the gate of `level`, in ns from a cycle's start (an end
    /// past the cycle wraps into the next), merged across consecutive entries; `None` when the
    /// gate never closes.
    pub fn windows_of(&self, level: usize) -> Option<Vec<(i64, i64)>> {
        let n = self.open.len();
        if self.open.iter().all(|o| o[level]) {
            return None;
        }
        let mut out = Vec::new();
        for e in 0..n {
            let before = self.open[(e + n - 1) % n][level];
            if self.open[e][level] && !before {
                let end = self.open_until_from_zero(level, self.starts[e]).expect("open");
                out.push((self.starts[e], end));
            }
        }
        Some(out)
    }

    /// [`Self::open_until`] with the cycle starting at 0 (times within the first cycle).
    fn open_until_from_zero(&self, level: usize, t: i64) -> Option<i64> {
        let shifted = Gcl { base_ns: 0, ..self.clone() };
        shifted.open_until(level, t)
    }

    /// The entry boundaries after `t` over the next two cycles, in order.
    fn boundaries_after(&self, t: i64) -> impl Iterator<Item = i64> + '_ {
        let (cycle_start, _) = self.locate(t);
        (0..3i64)
            .flat_map(move |k| {
                self.starts[..self.starts.len() - 1].iter().map(move |&s| cycle_start + k * self.cycle_ns + s)
            })
            .filter(move |&b| b > t)
    }
}

/// The time-aware shaper's behaviour: one FIFO per priority level behind its gate.
pub struct TimeAware {
    gcl: Gcl,
    levels: Vec<VecDeque<Queued>>,
    level_of_class: Vec<usize>,
    /// Link rate, bits per ns.
    link: f64,
    len: usize,
}

impl TimeAware {
    pub fn new(classes: &[TrafficClass], d: &TasDiscipline<'_>, link_rate: f64) -> Self {
        let mut prios: Vec<u32> = classes.iter().map(|c| c.priority).collect();
        prios.sort_unstable();
        prios.dedup();
        let level_of_class: Vec<usize> =
            classes.iter().map(|c| prios.binary_search(&c.priority).expect("listed")).collect();
        let names: Vec<Vec<&str>> = (0..prios.len())
            .map(|l| {
                classes
                    .iter()
                    .zip(&level_of_class)
                    .filter(|(_, &k)| k == l)
                    .map(|(c, _)| c.name.as_str())
                    .collect()
            })
            .collect();
        let mut gcl = Gcl::new(d.cycle.as_ns(), d.base_time.as_ns(), d.entries, &names);
        // Frames without a class (validation refuses them at a gated port) pass an open gate.
        gcl.open.iter_mut().for_each(|e| e.push(true));
        TimeAware {
            gcl,
            levels: vec![VecDeque::new(); prios.len() + 1],
            level_of_class,
            link: link_rate * 1e-9,
            len: 0,
        }
    }

    /// Whether the head of `level`, of `bits` on the wire, may start at `t`: its gate open and
    /// its last bit out before the gate closes.
    fn fits(&self, level: usize, bits: u32, t: i64) -> bool {
        self.gcl
            .open_until(level, t)
            .is_some_and(|end| end == i64::MAX || t as f64 + bits as f64 / self.link <= end as f64)
    }
}

impl Behaviour for TimeAware {
    fn enqueue(&mut self, item: Queued, _now_ns: i64) {
        let level = self.level_of_class.get(item.class as usize).copied().unwrap_or(self.levels.len() - 1);
        self.levels[level].push_back(item);
        self.len += 1;
    }

    fn dequeue(&mut self, now_ns: i64) -> Option<Queued> {
        let l = (0..self.levels.len())
            .find(|&l| self.levels[l].front().is_some_and(|q| self.fits(l, q.wire_bits, now_ns)))?;
        self.len -= 1;
        self.levels[l].pop_front()
    }

    /// The first entry boundary at which a waiting head frame fits its gate's window.
    fn next_ready(&self, now_ns: i64) -> Option<i64> {
        self.gcl.boundaries_after(now_ns).find(|&b| {
            self.levels
                .iter()
                .enumerate()
                .any(|(l, q)| q.front().is_some_and(|q| self.fits(l, q.wire_bits, b)))
        })
    }

    fn len(&self) -> usize {
        self.len
    }
}

impl super::Discipline for TasDiscipline<'_> {
    fn kind(&self) -> &'static str {
        "tas"
    }
    fn check(&self, place: &str, class_known: &dyn Fn(&str) -> bool) -> Vec<ConfigProblem> {
        let mut out = Vec::new();
        let err = |place: String, message: String| ConfigProblem::Error { place, message };
        // NaN fails both rules.
        let positive = |x: f64| x > 0.0;
        let not_negative = |x: f64| x >= 0.0;
        if !positive(self.cycle.secs()) {
            out.push(err(format!("{place}.cycle"), format!("must be positive, got {}", self.cycle)));
        }
        if !not_negative(self.base_time.secs()) {
            out.push(err(
                format!("{place}.base_time"),
                format!("must not be negative, got {}", self.base_time),
            ));
        }
        if self.entries.is_empty() {
            out.push(err(format!("{place}.entries"), "must list at least one gate entry".into()));
        }
        let mut total = 0;
        for (i, e) in self.entries.iter().enumerate() {
            if !positive(e.duration.secs()) || e.duration.as_ns() <= 0 {
                out.push(err(
                    format!("{place}.entries[{i}].duration"),
                    format!("must be at least 1ns, got {}", e.duration),
                ));
            }
            total += e.duration.as_ns();
            for c in &e.open {
                if !class_known(c) {
                    out.push(ConfigProblem::UnknownClass {
                        place: format!("{place}.entries[{i}].open"),
                        class: c.clone(),
                    });
                }
            }
        }
        if !self.entries.is_empty() && self.cycle.secs() > 0.0 && total != self.cycle.as_ns() {
            out.push(err(
                format!("{place}.entries"),
                format!(
                    "durations sum to {}, not the cycle {}",
                    crate::units::Duration::from_secs(total as f64 * 1e-9),
                    self.cycle
                ),
            ));
        }
        out
    }
    fn service(&self) -> super::Service<'_> {
        super::Service::TimeAware(self)
    }
    fn behaviour(&self, classes: &[TrafficClass], link_rate: f64) -> Box<dyn Behaviour> {
        Box::new(TimeAware::new(classes, self, link_rate))
    }
}

impl TasDiscipline<'_> {
    /// The open windows (start, end) of the gate of a level holding `classes`, in seconds within
    /// one cycle (an end past the cycle wraps into the next); `None` when the gate never closes.
    pub fn windows(&self, classes: &[&str]) -> Option<Vec<(f64, f64)>> {
        let gcl = Gcl::new(self.cycle.as_ns(), 0, self.entries, &[classes.to_vec()]);
        gcl.windows_of(0).map(|w| w.iter().map(|&(o, c)| (o as f64 * 1e-9, c as f64 * 1e-9)).collect())
    }

    /// Whether the gate of a level holding `classes` is open both just before and at time `t` of
    /// the cycle (seconds): only then may one of its frames be on the wire at `t` (a frame ends
    /// before its gate closes).
    pub fn open_across(&self, classes: &[&str], t: f64) -> bool {
        let gcl = Gcl::new(self.cycle.as_ns(), 0, self.entries, &[classes.to_vec()]);
        let t = (t * 1e9).round() as i64;
        gcl.open_until(0, t - 1).is_some() && gcl.open_until(0, t).is_some()
    }

    /// Whether the gate of a level holding `classes` is open at some time in [a, b) of the cycle
    /// (seconds; `b` may pass the cycle's end).
    pub fn open_within(&self, classes: &[&str], a: f64, b: f64) -> bool {
        let gcl = Gcl::new(self.cycle.as_ns(), 0, self.entries, &[classes.to_vec()]);
        let (a, b) = ((a * 1e9).round() as i64, (b * 1e9).round() as i64);
        let open = std::iter::once(a)
            .chain(gcl.boundaries_after(a).take_while(|&t| t < b))
            .any(|t| gcl.open_until(0, t).is_some());
        open
    }
}

/// The rate-latency lower bound (ρ as a fraction of the time, θ in seconds) of the supply of
/// the usable intervals `usable` (start, end) of a cycle of length `cycle` (sorted, disjoint
/// within one cycle span): ρ = Σ lengths / cycle; θ = the largest t − S(t)/ρ, reached at the
/// start of a usable interval when the count began at the end of another. `None` when nothing
/// is usable.
pub fn supply_bound(usable: &[(f64, f64)], cycle: f64) -> Option<(f64, f64)> {
    let total: f64 = usable.iter().map(|(a, b)| b - a).sum();
    if total <= 0.0 {
        return None;
    }
    let rho = total / cycle;
    let n = usable.len();
    let mut theta: f64 = 0.0;
    for i in 0..n {
        let from = usable[i].1;
        let mut supplied = 0.0;
        for k in 1..=n {
            let j = (i + k) % n;
            let wraps = ((i + k) / n) as f64;
            let start = usable[j].0 + wraps * cycle;
            theta = theta.max(start - from - supplied / rho);
            supplied += usable[j].1 - usable[j].0;
        }
    }
    Some((rho, theta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Duration;

    fn entry(open: &[&str], us: f64) -> GateEntry {
        GateEntry { open: open.iter().map(|s| s.to_string()).collect(), duration: Duration::from_us(us) }
    }

    fn classes() -> Vec<TrafficClass> {
        ["a", "b"]
            .iter()
            .enumerate()
            .map(|(p, n)| TrafficClass { name: n.to_string(), priority: p as u32, description: None })
            .collect()
    }

    fn frame(id: u32, class: u16, wire_bytes: u32) -> Queued {
        Queued {
            flow: u32::MAX,
            frame: id,
            class,
            wire_bits: wire_bytes * 8,
            frame_bits: (wire_bytes - 20) * 8,
        }
    }

    /// Cycle 100 µs: a open for 20 µs, then b for 80 µs, on a 1 Gb/s link (1 bit per ns). A frame
    /// of a (1000 B = 8 µs) at 15 µs does not fit before a closes at 20 µs (guard band): it waits
    /// for the next window, at 100 µs; one of 500 B (4 µs) at 15 µs goes at once. A b frame at 0
    /// waits for b's gate, at 20 µs.
    #[test]
    fn gates_and_guard_band_by_hand() {
        let entries = [entry(&["a"], 20.0), entry(&["b"], 80.0)];
        let d = TasDiscipline {
            cycle: Duration::from_us(100.0),
            base_time: Duration::from_us(0.0),
            entries: &entries,
        };
        let mut s = TimeAware::new(&classes(), &d, 1e9);
        s.enqueue(frame(0, 0, 1000), 15_000);
        assert!(s.dequeue(15_000).is_none());
        assert_eq!(s.next_ready(15_000), Some(100_000));
        assert_eq!(s.dequeue(100_000).map(|q| q.frame), Some(0));
        s.enqueue(frame(1, 0, 500), 115_000);
        assert_eq!(s.dequeue(115_000).map(|q| q.frame), Some(1));
        s.enqueue(frame(2, 1, 100), 200_000);
        assert!(s.dequeue(200_000).is_none());
        assert_eq!(s.next_ready(200_000), Some(220_000));
        assert_eq!(s.dequeue(220_000).map(|q| q.frame), Some(2));
        // Windows: a's [0, 20) µs, b's [20, 100).
        assert_eq!(d.windows(&["a"]).unwrap(), vec![(0.0, 20e-6)]);
        assert_eq!(d.windows(&["b"]).unwrap(), vec![(20e-6, 100e-6)]);
        // b's gate closes at 0 (the cycle's end), so none of its frames is on the wire at a's
        // window start; a's is open across 10 µs; b never opens inside [0, 20) µs, a does.
        assert!(!d.open_across(&["b"], 0.0) && d.open_across(&["a"], 10e-6));
        assert!(!d.open_within(&["b"], 0.0, 20e-6) && d.open_within(&["a"], 10e-6, 30e-6));
        assert!(d.open_within(&["b"], 10e-6, 30e-6) && d.open_across(&["b"], 50e-6));
    }

    /// One usable interval of 20 in a cycle of 100: ρ = 0.2, θ = 80 (the gap; after it the supply
    /// runs at 1 ≥ ρ). Two intervals [0, 10) and [50, 60): ρ = 0.2, θ = 40 (either gap).
    /// Uneven [0, 30) and [40, 50): ρ = 0.4, the worst start at 50 sees 50 closed then 30 of
    /// supply by 80 and 40 by 100: θ = max(50 − 0, 90 − 30/0.4) = 50.
    #[test]
    fn supply_bound_by_hand() {
        assert_eq!(supply_bound(&[(0.0, 20.0)], 100.0), Some((0.2, 80.0)));
        assert_eq!(supply_bound(&[(0.0, 10.0), (50.0, 60.0)], 100.0), Some((0.2, 40.0)));
        let (rho, theta) = supply_bound(&[(0.0, 30.0), (40.0, 50.0)], 100.0).unwrap();
        assert!((rho - 0.4).abs() < 1e-12 && (theta - 50.0).abs() < 1e-9, "{rho} {theta}");
        assert_eq!(supply_bound(&[], 100.0), None);
    }
}
