//! The supply of a time partition (ARINC 653 style): a partition runs only inside its windows
//! (offset, length) of a cyclic major frame, and the latency of a request that crosses
//! partitions (seed 001B: an I/O "routing" partition and a "recorder" partition).
//!
//! * [`PartitionSchedule::sbf`]: the supply-bound function, the least processor time the
//!   partition receives in any interval of length Δ, `sbf(Δ) = min_t supply[t, t + Δ)`. The
//!   minimum is reached by an interval that starts where one of the partition's windows ends
//!   (shifting an interval's start back to the last window end never adds supply), so the
//!   minimum over those starts is exact.
//! * [`PartitionSchedule::service_time`]: its pseudo-inverse, the longest time `C` units of
//!   work can take inside the partition whatever the arrival instant: `min {Δ : sbf(Δ) ≥ C}`.
//! * [`chain_latency`]: a request as a chain of stages, each `work` ticks inside one partition
//!   after a `transfer` delay (outside any window). Because the schedule is a fixed cycle, the
//!   latency is a function of the request's arrival phase in the major frame; it is evaluated at
//!   every integer phase, which gives the exact worst case and the exact distribution of the
//!   extra latency for a request arriving at a uniformly random instant. The compositional
//!   bound `Σ (transfer + service_time(work))` is returned beside it (never smaller).
//!
//! Work is preemptible at window ends (the partition is suspended, not the request aborted).

use super::{InputError, Ticks};

/// Largest major frame evaluated phase by phase (2^24 ticks: 16.8 ms in nanoseconds).
pub const MAX_PHASES: Ticks = 1 << 24;

/// One window of a partition: it runs in `[offset, offset + length)` of every major frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Window {
    /// Partition index (into [`PartitionSchedule::names`]).
    pub partition: usize,
    pub offset: Ticks,
    pub length: Ticks,
}

/// A cyclic partition schedule.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PartitionSchedule {
    pub major_frame: Ticks,
    pub names: Vec<String>,
    /// Windows sorted by offset, disjoint, inside the frame.
    pub windows: Vec<Window>,
}

impl PartitionSchedule {
    /// Checks the frame and windows (positive, inside the frame, disjoint) and sorts them.
    pub fn new(major_frame: Ticks, names: Vec<String>, mut windows: Vec<Window>) -> Result<Self, InputError> {
        super::check_range("major frame", major_frame, 1)?;
        for (k, w) in windows.iter().enumerate() {
            if w.partition >= names.len() {
                return Err(InputError(format!("windows[{k}]: partition {} out of range", w.partition)));
            }
            if w.length < 1 || w.offset < 0 || w.offset + w.length > major_frame {
                return Err(InputError(format!(
                    "windows[{k}] ({}): [{}, {}) must be non-empty and inside the major frame of {major_frame}",
                    names[w.partition],
                    w.offset,
                    w.offset + w.length
                )));
            }
        }
        windows.sort_by_key(|w| w.offset);
        for pair in windows.windows(2) {
            if pair[0].offset + pair[0].length > pair[1].offset {
                return Err(InputError(format!(
                    "windows of {} and {} overlap at {}",
                    names[pair[0].partition], names[pair[1].partition], pair[1].offset
                )));
            }
        }
        Ok(PartitionSchedule { major_frame, names, windows })
    }

    /// Windows placed back to back from offset 0 in the given order (the paper's schedule:
    /// routing 800, recorder 700, frame 1,500); the frame may be longer than their sum (idle).
    pub fn back_to_back(major_frame: Ticks, partitions: &[(String, Ticks)]) -> Result<Self, InputError> {
        let mut offset = 0;
        let mut windows = Vec::new();
        for (p, (name, length)) in partitions.iter().enumerate() {
            if *length < 1 {
                return Err(InputError(format!("window of {name}: must be positive, got {length}")));
            }
            windows.push(Window { partition: p, offset, length: *length });
            offset = offset.saturating_add(*length);
        }
        if offset > major_frame {
            return Err(InputError(format!(
                "windows: their lengths add up to {offset}, more than the major frame of {major_frame}"
            )));
        }
        Self::new(major_frame, partitions.iter().map(|(n, _)| n.clone()).collect(), windows)
    }

    fn own(&self, partition: usize) -> impl Iterator<Item = &Window> + '_ {
        self.windows.iter().filter(move |w| w.partition == partition)
    }

    /// Processor time of `partition` per major frame.
    pub fn budget(&self, partition: usize) -> Ticks {
        self.own(partition).map(|w| w.length).sum()
    }

    /// Supply to `partition` in `[0, t)` for t ≥ 0 (cumulative, from the frame's start).
    fn cumulative(&self, partition: usize, t: Ticks) -> Ticks {
        let m = self.major_frame;
        let (cycles, rest) = (t.div_euclid(m), t.rem_euclid(m));
        let within: Ticks = self.own(partition).map(|w| (rest - w.offset).clamp(0, w.length)).sum();
        cycles * self.budget(partition) + within
    }

    /// Supply to `partition` in `[a, b)`.
    pub fn supply(&self, partition: usize, a: Ticks, b: Ticks) -> Ticks {
        // Shift to non-negative times: the schedule is periodic.
        let shift =
            if a < 0 { (-a).div_euclid(self.major_frame) * self.major_frame + self.major_frame } else { 0 };
        self.cumulative(partition, b + shift) - self.cumulative(partition, a + shift)
    }

    /// The supply-bound function of `partition`: the least supply in any interval of length
    /// `delta` (0 for a partition with no window).
    pub fn sbf(&self, partition: usize, delta: Ticks) -> Ticks {
        let delta = delta.max(0);
        self.own(partition)
            .map(|w| self.supply(partition, w.offset + w.length, w.offset + w.length + delta))
            .min()
            .unwrap_or(0)
    }

    /// The latest instant at which `work` ticks of `partition`, arriving at `arrival`, are done.
    /// None when the partition has no window (and `work` > 0).
    pub fn completion(&self, partition: usize, arrival: Ticks, work: Ticks) -> Option<Ticks> {
        if work <= 0 {
            return Some(arrival);
        }
        let budget = self.budget(partition);
        if budget == 0 {
            return None;
        }
        let m = self.major_frame;
        // Whole frames first, then walk the windows of at most two frames.
        let full = (work - 1) / budget;
        let mut left = work - full * budget;
        let mut t = arrival + full * m;
        let base = t.div_euclid(m) * m;
        for cycle in 0..3 {
            for w in self.own(partition) {
                let start = base + cycle * m + w.offset;
                let end = start + w.length;
                if end <= t {
                    continue;
                }
                let from = start.max(t);
                if end - from >= left {
                    return Some(from + left);
                }
                left -= end - from;
                t = end;
            }
        }
        unreachable!("a frame's budget covers what is left")
    }

    /// `min {Δ : sbf(Δ) ≥ work}`: the longest time `work` ticks can take in the partition.
    pub fn service_time(&self, partition: usize, work: Ticks) -> Option<Ticks> {
        if work <= 0 {
            return Some(0);
        }
        // Worst arrival: at a window's end (the start of a gap), as for the sbf.
        self.own(partition)
            .map(|w| {
                let a = w.offset + w.length;
                self.completion(partition, a, work).map(|c| c - a)
            })
            .collect::<Option<Vec<_>>>()
            .and_then(|v| v.into_iter().max())
    }
}

/// One stage of a request: after `transfer` ticks (outside the partitions: links, stacks), it
/// needs `work` ticks of its partition.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stage {
    pub partition: usize,
    pub work: Ticks,
    pub transfer: Ticks,
}

/// Latency of a chain over all arrival phases.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ChainLatency {
    /// Exact worst case over the arrival phases, and the phase that gives it.
    pub worst: Ticks,
    pub worst_phase: Ticks,
    /// Best case over the phases.
    pub best: Ticks,
    /// Mean over the phases (a request arriving at a uniformly random instant).
    pub mean: f64,
    /// Σ transfer + work: the latency with the processor always available.
    pub unpartitioned: Ticks,
    /// Σ (transfer + service_time(work)): the compositional bound (≥ worst).
    pub compositional: Ticks,
    /// Extra latency (latency − unpartitioned) at the given quantiles of the phases.
    pub extra_quantiles: Vec<(f64, Ticks)>,
}

/// The latency of `stages` through `schedule` from each arrival phase 0, 1, ... of the major frame
/// (a measured request is checked against the entry of its own phase).
pub fn phase_latencies(schedule: &PartitionSchedule, stages: &[Stage]) -> Result<Vec<Ticks>, InputError> {
    if schedule.major_frame > MAX_PHASES {
        return Err(InputError(format!(
            "major frame: {} ticks is more than the {MAX_PHASES} phases evaluated one by one; use a coarser tick",
            schedule.major_frame
        )));
    }
    for (k, s) in stages.iter().enumerate() {
        if s.partition >= schedule.names.len() {
            return Err(InputError(format!("stages[{k}]: partition {} out of range", s.partition)));
        }
        super::check_range(&format!("stages[{k}].work"), s.work, 0)?;
        super::check_range(&format!("stages[{k}].transfer"), s.transfer, 0)?;
        if s.work > 0 && schedule.budget(s.partition) == 0 {
            return Err(InputError(format!(
                "stages[{k}]: partition {} has no window, its work never completes",
                schedule.names[s.partition]
            )));
        }
    }
    let mut lat = Vec::with_capacity(schedule.major_frame as usize);
    for phase in 0..schedule.major_frame {
        let mut t = phase;
        for s in stages {
            t = schedule.completion(s.partition, t + s.transfer, s.work).expect("checked above");
        }
        lat.push(t - phase);
    }
    Ok(lat)
}

/// The latency of `stages` through `schedule`, at every arrival phase of the major frame.
pub fn chain_latency(schedule: &PartitionSchedule, stages: &[Stage]) -> Result<ChainLatency, InputError> {
    let lat = phase_latencies(schedule, stages)?;
    let unpartitioned: Ticks = stages.iter().map(|s| s.work + s.transfer).sum();
    let compositional: Ticks = stages
        .iter()
        .map(|s| s.transfer + schedule.service_time(s.partition, s.work).expect("checked in phase_latencies"))
        .sum();
    let (mut worst, mut worst_phase) = (Ticks::MIN, 0);
    for (p, &l) in lat.iter().enumerate() {
        if l > worst {
            worst = l;
            worst_phase = p as Ticks;
        }
    }
    let best = *lat.iter().min().expect("a frame has at least one phase");
    let mean = lat.iter().map(|&l| l as f64).sum::<f64>() / lat.len() as f64;
    let mut sorted = lat;
    sorted.sort_unstable();
    let n = sorted.len();
    let extra_quantiles = [0.5, 0.9, 0.99, 1.0]
        .iter()
        .map(|&q| {
            let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
            (q, sorted[rank - 1] - unpartitioned)
        })
        .collect();
    Ok(ChainLatency { worst, worst_phase, best, mean, unpartitioned, compositional, extra_quantiles })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 001B's schedule: routing [0, 800), recorder [800, 1500), major frame 1,500.
    fn paper() -> PartitionSchedule {
        PartitionSchedule::back_to_back(1500, &[("routing".into(), 800), ("recorder".into(), 700)]).unwrap()
    }

    #[test]
    fn sbf_of_one_window_per_frame() {
        // Routing runs 800 of every 1,500: the worst interval starts at its window's end, then
        // 700 without supply, then 800 of supply, and so on:
        // sbf(Δ) = k·800 + clamp(Δ − k·1500 − 700, 0, 800), k = ⌊Δ/1500⌋.
        let s = paper();
        for (delta, want) in [(0, 0), (700, 0), (701, 1), (1500, 800), (2200, 800), (2300, 900), (3000, 1600)]
        {
            assert_eq!(s.sbf(0, delta), want, "routing sbf({delta})");
        }
        // Recorder: 800 without supply, then 700.
        for (delta, want) in [(800, 0), (900, 100), (1500, 700), (2300, 700), (2301, 701)] {
            assert_eq!(s.sbf(1, delta), want, "recorder sbf({delta})");
        }
    }

    #[test]
    fn sbf_with_two_windows_takes_the_worst_start() {
        // A partition with windows [0, 100) and [300, 400) in a frame of 1,000 (gaps 200 and
        // 600). Starting after the second window: 600 idle, then 100, then 200 idle, then 100:
        // sbf(650) = 50, sbf(900) = 100, sbf(1000) = 200. Starting after the first window instead
        // would give sbf(650) = 100 (200 idle, 100, then 350 idle), the larger one.
        let s = PartitionSchedule::new(
            1000,
            vec!["p".into(), "q".into()],
            vec![
                Window { partition: 0, offset: 300, length: 100 },
                Window { partition: 0, offset: 0, length: 100 },
                Window { partition: 1, offset: 500, length: 100 },
            ],
        )
        .unwrap();
        assert_eq!(s.sbf(0, 650), 50);
        assert_eq!(s.sbf(0, 900), 100);
        assert_eq!(s.sbf(0, 1000), 200);
        assert_eq!(s.sbf(0, 600), 0);
        // service_time(50) = 650: the worst arrival is at 400, done at 1000 + 50.
        assert_eq!(s.service_time(0, 50), Some(650));
        // 150 ticks: 600 idle, 100, 200 idle, 50 → 950.
        assert_eq!(s.service_time(0, 150), Some(950));
    }

    #[test]
    fn service_time_is_the_pseudo_inverse_of_the_sbf() {
        let s = paper();
        for p in 0..2 {
            for work in [1, 50, 699, 700, 701, 800, 801, 2000] {
                let d = s.service_time(p, work).unwrap();
                assert!(s.sbf(p, d) >= work, "partition {p} work {work}: sbf({d}) < work");
                assert!(s.sbf(p, d - 1) < work, "partition {p} work {work}: {d} is not the least");
            }
        }
        // By hand: routing needs 700 of gap + the work when it fits in one window.
        assert_eq!(s.service_time(0, 100), Some(800));
        // 900 ticks: 700 gap, 800 in the window, 700 gap, 100: 2300.
        assert_eq!(s.service_time(0, 900), Some(2300));
    }

    #[test]
    fn a_request_crossing_routing_recorder_routing() {
        // One tick of work in each stage, no transfer time. By hand: arriving at 800 (routing's
        // window has just closed) the request waits to 1500, is routed at 1501, waits for the
        // recorder's next window at 2300 (done 2301) and for routing's at 3000 (done 3001):
        // 2201. Arriving at 799 it is routed at 800, recorded at 801, routed back at 1501: 702.
        let s = paper();
        let stages = [
            Stage { partition: 0, work: 1, transfer: 0 },
            Stage { partition: 1, work: 1, transfer: 0 },
            Stage { partition: 0, work: 1, transfer: 0 },
        ];
        let c = chain_latency(&s, &stages).unwrap();
        assert_eq!(c.worst, 2201);
        assert_eq!(c.worst_phase, 800);
        assert_eq!(c.unpartitioned, 3);
        // Compositional: 701 + 801 + 701 = 2203 ≥ 2201.
        assert_eq!(c.compositional, 2203);
        assert!(c.compositional >= c.worst);
        // Every phase p ≤ 798 ends at 1501 too (recorder at 800, routing back at 1500): 1501 − p.
        assert_eq!(c.best, 702);
        assert_eq!(c.extra_quantiles.last().unwrap(), &(1.0, 2198));
    }

    #[test]
    fn mean_over_phases_by_hand() {
        // One stage of 0 work: no waiting at all, whatever the phase.
        let s = paper();
        let c = chain_latency(&s, &[Stage { partition: 0, work: 0, transfer: 5 }]).unwrap();
        assert_eq!((c.worst, c.best, c.mean), (5, 5, 5.0));
        // One tick of routing: phases 0..=799 take 1, phase p in 800..1500 takes 1500 − p + 1.
        // Mean = (800·1 + Σ_{k=1}^{700} (k + 1)) / 1500 = (800 + 245,350 + 700) / 1500 = 164.9...
        let c = chain_latency(&s, &[Stage { partition: 0, work: 1, transfer: 0 }]).unwrap();
        let want = (800.0 + (700.0 * 701.0 / 2.0) + 700.0) / 1500.0;
        assert!((c.mean - want).abs() < 1e-9, "{} vs {want}", c.mean);
        assert_eq!(c.worst, 701);
    }

    #[test]
    fn bad_schedules_are_refused_with_their_place() {
        let e = PartitionSchedule::back_to_back(1000, &[("a".into(), 800), ("b".into(), 700)]).unwrap_err();
        assert!(e.0.contains("1500, more than the major frame of 1000"), "{e}");
        let e = PartitionSchedule::new(
            100,
            vec!["a".into(), "b".into()],
            vec![
                Window { partition: 0, offset: 0, length: 60 },
                Window { partition: 1, offset: 50, length: 10 },
            ],
        )
        .unwrap_err();
        assert!(e.0.contains("overlap"), "{e}");
        let s = PartitionSchedule::new(
            100,
            vec!["a".into(), "idle".into()],
            vec![Window { partition: 0, offset: 0, length: 10 }],
        )
        .unwrap();
        let e = chain_latency(&s, &[Stage { partition: 1, work: 1, transfer: 0 }]).unwrap_err();
        assert!(e.0.contains("no window"), "{e}");
    }

    #[test]
    fn worst_phase_never_exceeds_the_compositional_bound() {
        // Property over a few schedules and chains: exact worst ≤ Σ transfer + service_time.
        for (frame, a, b) in [(1500, 800, 700), (1000, 100, 300), (997, 13, 500)] {
            let s = PartitionSchedule::back_to_back(frame, &[("a".into(), a), ("b".into(), b)]).unwrap();
            for work in [0, 1, 7, 99, 250] {
                let st = [
                    Stage { partition: 0, work, transfer: 3 },
                    Stage { partition: 1, work: work * 2, transfer: 11 },
                    Stage { partition: 0, work, transfer: 0 },
                ];
                let c = chain_latency(&s, &st).unwrap();
                assert!(c.worst <= c.compositional, "{frame}/{a}/{b} work {work}: {c:?}");
                assert!(c.best >= c.unpartitioned);
            }
        }
    }
}
