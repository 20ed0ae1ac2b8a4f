//! Egress schedulers. Each module holds how its scheduler behaves (the [`Behaviour`] the
//! simulator runs), what it guarantees (the worst-case service model the analysis uses) and,
//! beside them, the formulas of the seed papers under `paper` (kept literally, with their known
//! errors, so users can compare; see shared/spec/seed-catalogue.md).

pub mod as_table;
pub mod d2drr;
pub mod drr;
pub mod dtable;
pub mod fifo;
pub mod iba_table;
#[cfg(test)]
mod round_robin_soundness;
pub mod scfq;
pub mod service_list;
pub mod static_priority;
pub mod table;
#[cfg(test)]
mod table_soundness;
pub mod token_bucket;
pub mod wf2q;
pub mod wrr;

/// One traffic class as a per-class scheduler at one port sees it, for its service model.
#[derive(Clone, Copy, Debug)]
pub struct ClassAtPort {
    /// The class's share: WRR frames per round, DRR quantum (bits), WF2Q/SCFQ weight (unused by
    /// table schedulers, whose shares are their entries).
    pub share: f64,
    /// Smallest and largest frame of the class at the port, on the wire (bits).
    pub lmin: f64,
    pub lmax: f64,
    /// Per-frame wire overhead (preamble, start delimiter, gap) included in lmin/lmax (bits).
    pub overhead: f64,
}

/// A latency-rate guarantee: the class is served at least at `rate` after `latency`, i.e. it
/// has the service curve β_{rate, latency} (Stiliadis & Varma, IEEE/ACM ToN 6(5), 1998).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyRate {
    pub rate: f64,
    pub latency: f64,
}

/// A frame waiting in an egress port, as its scheduler sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    /// The simulator's handle on the frame.
    pub frame: u32,
    /// The frame's class index in the network (`u16::MAX` without a class).
    pub class: u16,
    /// Length on the wire, preamble and gap included (what the link spends), bits.
    pub wire_bits: u32,
    /// Length of the Ethernet frame (what deficits and weights count), bits.
    pub frame_bits: u32,
}

/// The simulator's whole contract with an egress scheduler, as ns-3's queue discs: frames go in,
/// the scheduler says which leaves next. Transmission itself (the link) is the simulator's.
pub trait Behaviour: Send {
    /// A frame arrives at the port.
    fn enqueue(&mut self, item: Queued, now_ns: i64);
    /// The frame to transmit now, if one may go (the link has just become free).
    fn dequeue(&mut self, now_ns: i64) -> Option<Queued>;
    /// When frames wait but none may go now (a shaper out of tokens), the earliest time one may.
    fn next_ready(&self, _now_ns: i64) -> Option<i64> {
        None
    }
    /// Frames waiting.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The per-class FIFOs of a class-based scheduler, with a count of the frames they hold, and the
/// background FIFO for frames of classes the scheduler gives nothing to (validation refuses them;
/// served only when no scheduled class waits, so that no frame is ever stranded). `T` is what a
/// scheduler keeps per frame (the frame, or the frame with its tag).
pub(crate) struct ClassQueues<T> {
    /// One FIFO per class index; read freely, change through `push` and `pop`.
    pub classes: Vec<std::collections::VecDeque<T>>,
    background: std::collections::VecDeque<Queued>,
    scheduled: usize,
}

impl<T: Clone> ClassQueues<T> {
    pub fn new(n: usize) -> Self {
        ClassQueues { classes: vec![Default::default(); n], background: Default::default(), scheduled: 0 }
    }
    pub fn push(&mut self, class: usize, item: T) {
        self.classes[class].push_back(item);
        self.scheduled += 1;
    }
    pub fn pop(&mut self, class: usize) -> Option<T> {
        let item = self.classes[class].pop_front();
        self.scheduled -= item.is_some() as usize;
        item
    }
    /// Queues `item` in its class's FIFO when the scheduler serves that class, else in the
    /// background FIFO.
    pub fn admit(&mut self, item: Queued, served: bool)
    where
        T: From<Queued>,
    {
        if served {
            self.push(item.class as usize, T::from(item));
        } else {
            self.push_background(item);
        }
    }
    pub fn push_background(&mut self, item: Queued) {
        self.background.push_back(item);
    }
    pub fn pop_background(&mut self) -> Option<Queued> {
        self.background.pop_front()
    }
    /// Frames waiting in the scheduled classes.
    pub fn scheduled(&self) -> usize {
        self.scheduled
    }
    pub fn len(&self) -> usize {
        self.scheduled + self.background.len()
    }
}

/// The behaviour of a port's scheduler. `classes` gives every class's name and priority (by class
/// index); `schedulers` resolves the inner scheduler of a shaper. Errors name what is missing.
///
/// Per-class settings are looked up by class name; a class the configuration does not list (which
/// validation refuses) is served after the listed ones, so its frames are never lost.
pub fn behaviour(
    config: &crate::model::SchedulerConfig,
    classes: &[crate::model::TrafficClass],
    schedulers: &std::collections::BTreeMap<String, crate::model::SchedulerConfig>,
) -> Result<Box<dyn Behaviour>, String> {
    use crate::model::SchedulerConfig as S;
    let per_class = |values: &dyn Fn(&str) -> Option<f64>| -> Vec<Option<f64>> {
        classes.iter().map(|c| values(&c.name)).collect()
    };
    Ok(match config {
        S::Fifo => Box::new(fifo::Fifo::default()),
        S::StaticPriority => Box::new(static_priority::StaticPriority::new(classes)),
        S::Wrr { weights } => {
            let w: Vec<Option<u32>> = classes.iter().map(|c| weights.get(&c.name).copied()).collect();
            Box::new(wrr::Wrr::new(&w))
        }
        S::Drr { quanta } => Box::new(drr::Drr::new(&per_class(&|c| quanta.get(c).map(|q| q.bits())))),
        S::D2drr { base_quantum, factors } => {
            Box::new(d2drr::behaviour(base_quantum.bits(), &per_class(&|c| factors.get(c).copied())))
        }
        S::Wf2q { weights } => Box::new(wf2q::Wf2q::new(&per_class(&|c| weights.get(c).copied()))),
        S::Scfq { weights } => Box::new(scfq::Scfq::new(&per_class(&|c| weights.get(c).copied()))),
        S::Table { table_kind, entries } => {
            let entries = table::resolve(entries, classes);
            match table_kind {
                crate::model::TableKind::AsBasic => Box::new(as_table::AsTable::new(&entries, classes.len())),
                crate::model::TableKind::IbaWeighted => {
                    Box::new(iba_table::IbaTable::new(&entries, classes.len()))
                }
                crate::model::TableKind::Dtable => Box::new(dtable::Dtable::new(&entries, classes.len())),
            }
        }
        S::TokenBucket { rate, burst, inner } => {
            // As validation reads `inner`: a named scheduler first, then the two built-in names.
            let inner_config = match inner.as_deref() {
                None => &S::Fifo,
                Some(name) => match schedulers.get(name) {
                    Some(S::TokenBucket { .. }) => {
                        return Err(format!("the shaper's inner scheduler '{name}' is itself a shaper"))
                    }
                    Some(c) => c,
                    None if name == "fifo" => &S::Fifo,
                    None if name == "static_priority" => &S::StaticPriority,
                    None => return Err(format!("the shaper's inner scheduler '{name}' is not defined")),
                },
            };
            let inner = behaviour(inner_config, classes, schedulers)?;
            Box::new(token_bucket::TokenBucket::new(rate.bps(), burst.bits(), inner))
        }
    })
}

/// Checks shared by the schedulers' tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Behaviour, Queued};

    /// A frame of `wire_bytes` on the wire (20 B of them preamble and gap).
    pub fn frame(frame: u32, class: u16, wire_bytes: u32) -> Queued {
        Queued { frame, class, wire_bits: wire_bytes * 8, frame_bits: (wire_bytes - 20) * 8 }
    }

    /// Four always-backlogged classes with weights 1 : 2 : 3 : 4 and unequal frame sizes receive
    /// wire bits in proportion to their weights, within `slack_frames` largest frames at any time.
    pub fn assert_long_run_shares(s: &mut dyn Behaviour, slack_frames: f64) {
        let w = [1.0, 2.0, 3.0, 4.0];
        let sizes = [84u32, 1538, 500, 1000];
        let mut id = 0;
        for c in 0..4u16 {
            for k in 0..4000u32 {
                s.enqueue(frame(id, c, sizes[((k + c as u32) % 4) as usize]), 0);
                id += 1;
            }
        }
        let mut got = [0f64; 4];
        for step in 0..6000 {
            let q = s.dequeue(0).expect("backlogged");
            got[q.class as usize] += q.wire_bits as f64;
            if step > 100 {
                let total: f64 = got.iter().sum();
                for c in 0..4 {
                    let ideal = total * w[c] / 10.0;
                    assert!((got[c] - ideal).abs() <= slack_frames * 1538.0 * 8.0, "class {c}: {got:?}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{SchedulerConfig as S, TableEntry, TableKind, TrafficClass};
    use crate::units::{DataRate, DataSize};
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;

    fn classes() -> Vec<TrafficClass> {
        ["a", "b", "c", "unlisted"]
            .iter()
            .enumerate()
            .map(|(p, n)| TrafficClass { name: n.to_string(), priority: p as u32 % 3, description: None })
            .collect()
    }

    fn by_class<T: Clone>(values: &[T]) -> BTreeMap<String, T> {
        ["a", "b", "c"].iter().map(|n| n.to_string()).zip(values.iter().cloned()).collect()
    }

    fn table(kind: TableKind, entries: &[(&str, f64)]) -> S {
        let entries = entries
            .iter()
            .map(|&(class, bytes)| TableEntry { class: class.into(), weight: DataSize::from_bytes(bytes) })
            .collect();
        S::Table { table_kind: kind, entries }
    }

    /// Every kind, with quanta and table weights both above and far below the frame sizes, and
    /// shapers around the built-in and a named inner scheduler.
    fn configs() -> Vec<(&'static str, S)> {
        let b = DataSize::from_bytes;
        vec![
            ("fifo", S::Fifo),
            ("static_priority", S::StaticPriority),
            ("wrr", S::Wrr { weights: by_class(&[3, 1, 2]) }),
            ("drr", S::Drr { quanta: by_class(&[b(1500.0), b(3000.0), b(1600.0)]) }),
            ("drr_small", S::Drr { quanta: by_class(&[b(64.0), b(100.0), b(1.0)]) }),
            ("d2drr", S::D2drr { base_quantum: b(1000.0), factors: by_class(&[6.0, 3.0, 1.0]) }),
            ("wf2q", S::Wf2q { weights: by_class(&[1.0, 2.0, 7.0]) }),
            ("scfq", S::Scfq { weights: by_class(&[1.0, 2.0, 7.0]) }),
            ("as_table", table(TableKind::AsBasic, &[("a", 1.0), ("b", 1.0), ("a", 1.0), ("c", 1.0)])),
            (
                "iba_table",
                table(TableKind::IbaWeighted, &[("a", 2176.0), ("b", 100.0), ("c", 64.0), ("b", 5000.0)]),
            ),
            (
                "dtable",
                table(TableKind::Dtable, &[("a", 1518.0), ("b", 1600.0), ("a", 2000.0), ("c", 3000.0)]),
            ),
            ("dtable_small", table(TableKind::Dtable, &[("a", 64.0), ("b", 100.0), ("c", 1.0), ("b", 7.0)])),
            ("tb_fifo", S::TokenBucket { rate: DataRate(1e6), burst: b(3000.0), inner: None }),
            (
                "tb_sp",
                S::TokenBucket {
                    rate: DataRate(5e6),
                    burst: b(1600.0),
                    inner: Some("static_priority".into()),
                },
            ),
            ("tb_drr", S::TokenBucket { rate: DataRate(2e6), burst: b(1000.0), inner: Some("named".into()) }),
        ]
    }

    /// Random enqueue/dequeue interleavings (seeded ChaCha): every scheduler but the shaper is
    /// work-conserving (a frame goes whenever one waits), none loses or duplicates a frame, frames
    /// of one class keep their order, and a waiting shaper always names a later time.
    #[test]
    fn conserves_work_and_frames() {
        let classes = classes();
        let mut named = BTreeMap::new();
        named.insert("named".to_string(), S::Drr { quanta: by_class(&[DataSize::from_bytes(200.0); 3]) });
        for (name, config) in configs() {
            let shaper = matches!(config, S::TokenBucket { .. });
            for seed in 0..20u64 {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
                let mut s = behaviour(&config, &classes, &named).unwrap();
                let mut now = 0i64;
                let mut next_id = 0u32;
                let mut seen = vec![false; 4000];
                let mut last_of_class: BTreeMap<u16, u32> = BTreeMap::new();
                let mut waiting = 0usize;
                let mut take = |q: Queued, waiting: &mut usize| {
                    assert!(!std::mem::replace(&mut seen[q.frame as usize], true), "{name}: {q:?} twice");
                    if let Some(prev) = last_of_class.insert(q.class, q.frame) {
                        assert!(prev < q.frame, "{name}: class {} out of order", q.class);
                    }
                    *waiting -= 1;
                };
                for _ in 0..3000 {
                    now += rng.gen_range(0..20_000);
                    if rng.gen_bool(0.55) {
                        let class = match rng.gen_range(0..100) {
                            0 => u16::MAX,
                            1..=3 => 3,
                            k => (k % 3) as u16,
                        };
                        let bytes = rng.gen_range(64..=1518u32);
                        let q = Queued {
                            frame: next_id,
                            class,
                            wire_bits: (bytes + 20) * 8,
                            frame_bits: bytes * 8,
                        };
                        s.enqueue(q, now);
                        next_id += 1;
                        waiting += 1;
                    } else {
                        match s.dequeue(now) {
                            Some(q) => take(q, &mut waiting),
                            None if shaper && waiting > 0 => {
                                assert!(s.next_ready(now).is_some_and(|t| t > now), "{name}: stuck")
                            }
                            None => assert_eq!(waiting, 0, "{name}: idles with frames waiting"),
                        }
                    }
                    assert_eq!(s.len(), waiting, "{name}: len");
                }
                while waiting > 0 {
                    match s.dequeue(now) {
                        Some(q) => take(q, &mut waiting),
                        None => {
                            assert!(shaper, "{name}: idles with frames waiting");
                            let t = s.next_ready(now).expect("frames wait");
                            assert!(t > now, "{name}: no progress");
                            now = t;
                        }
                    }
                }
                assert!(s.is_empty() && s.dequeue(now).is_none());
                assert!(seen[..next_id as usize].iter().all(|&x| x), "{name}: lost a frame");
            }
        }
    }

    /// The builder refuses what it cannot run and resolves a shaper's inner scheduler by name.
    #[test]
    fn builder_errors() {
        let classes = classes();
        let err =
            |c: &S, named: &BTreeMap<String, S>| behaviour(c, &classes, named).err().unwrap_or_default();
        let mut named = BTreeMap::new();
        let shaper = S::TokenBucket { rate: DataRate(1e6), burst: DataSize(1e4), inner: Some("tb".into()) };
        named.insert("tb".to_string(), shaper.clone());
        assert!(err(&shaper, &named).contains("itself a shaper"));
        let missing = S::TokenBucket { rate: DataRate(1e6), burst: DataSize(1e4), inner: Some("x".into()) };
        assert!(err(&missing, &named).contains("not defined"));
        // Tables build even when no entry names a known class (every frame then goes to the
        // background FIFO).
        for kind in [TableKind::AsBasic, TableKind::IbaWeighted, TableKind::Dtable] {
            assert!(behaviour(&table(kind, &[("nobody", 100.0)]), &classes, &named).is_ok());
        }
    }
}
