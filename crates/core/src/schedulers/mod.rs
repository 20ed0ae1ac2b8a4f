//! Egress schedulers. Each module holds how its scheduler behaves (the [`Behaviour`] the
//! simulator runs), what it guarantees (the worst-case service model the analysis uses) and,
//! beside them, the formulas of the seed papers under `paper` (kept literally, with their known
//! errors, so users can compare; see shared/spec/seed-catalogue.md).

pub mod d2drr;
pub mod drr;
pub mod fifo;
pub mod scfq;
pub mod static_priority;
pub mod token_bucket;
pub mod wf2q;
pub mod wrr;

/// One traffic class as a per-class scheduler at one port sees it, for its service model.
#[derive(Clone, Copy, Debug)]
pub struct ClassAtPort {
    /// The class's share: WRR frames per round, DRR quantum (bits), WF2Q/SCFQ weight.
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

/// The behaviour of a port's scheduler. `classes` gives every class's name and priority (by class
/// index); `schedulers` resolves the inner scheduler of a shaper. Errors name what is missing.
pub fn behaviour(
    config: &crate::model::SchedulerConfig,
    classes: &[crate::model::TrafficClass],
    schedulers: &std::collections::BTreeMap<String, crate::model::SchedulerConfig>,
) -> Result<Box<dyn Behaviour>, String> {
    use crate::model::SchedulerConfig as S;
    Ok(match config {
        S::Fifo => Box::new(fifo::Fifo::default()),
        S::StaticPriority => Box::new(static_priority::StaticPriority::new(classes)),
        other => return Err(format!("the {} scheduler is not simulated yet", other.kind_name())),
    })
}
