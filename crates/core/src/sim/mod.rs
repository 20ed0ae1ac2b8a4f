//! Packet-level discrete-event simulation of a validated network.
//!
//! Time is integer nanoseconds and sizes integer bits. Events are ordered by (time, sequence
//! number), and every random draw comes from one seeded ChaCha generator, so the same network,
//! configuration and seed give the same results bit for bit.
//!
//! What runs: sources release frames (periodic VLs at their BAG, token buckets, periodic
//! messages, or a chosen workload through the VL's regulator), end systems send every frame on
//! each of the flow's planes (copies up to the sending skew apart), egress ports run their
//! scheduler's [`crate::schedulers::Behaviour`] and transmit at the link rate (frame + preamble
//! and gap), links add their propagation delay, switches forward store-and-forward (or
//! cut-through) after their technological latency, finite buffers drop, and destination end
//! systems measure every copy and keep the first valid one (redundancy management by sequence
//! number within SkewMax).
//!
//! Reference points match the analysis: a frame's latency runs from its release into the source
//! end system's output queue to its last bit at the destination plus the receive latency.

mod arrivals;
mod destinations;
mod engine;
mod forwarding;
pub mod memory;
pub mod pcap;
mod ports;
pub(crate) use ports::ns_per_bit;
mod queue;
mod report;
mod retransmission;
pub mod scenario;
mod sources;
pub mod stats;
mod tables;

/// What a destination end system does with each copy, for engines that receive real frames
/// (the testbed): integrity checking and redundancy management exactly as simulated.
pub use destinations::{sequence_number, sequence_valid, Receiver as RedundancyManagement, SEQUENCE_WINDOW};
pub use engine::{Simulator, TraceRecord};
pub use scenario::{FlowScenario, Scenario, ScenarioTables};

impl Simulator {
    /// Writes the trace (every frame leaving every egress port, up to `trace_limit`) as pcapng:
    /// one interface per plane, AFDX addressing, written whole or not at all (see [`pcap`] and
    /// [`pcap::write_file`], which calls `keep_going` now and then so the caller can interrupt).
    pub fn write_pcapng(
        &self,
        path: &std::path::Path,
        keep_going: impl FnMut() -> std::io::Result<()>,
    ) -> std::io::Result<u64> {
        let planes = self.plane_names();
        let mut trace: Vec<&TraceRecord> = self.trace.iter().collect();
        trace.sort_by_key(|t| t.time_ns);
        let frames = trace.into_iter().map(|t| pcap::TraceFrame {
            time_ns: t.time_ns,
            plane: t.plane as usize,
            vl_id: t.vl_id,
            seq: t.seq,
            src_node: t.node,
            src_port: t.port.min(255) as u8,
            frame_bytes: t.frame_bytes,
        });
        pcap::write_file(path, &planes, frames, keep_going)
    }
}

use serde::{Deserialize, Serialize};
use stats::LatencySummary;

/// When the flows' first frames are released.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Release {
    /// Each flow starts at a random phase within its period, with random release jitter.
    Random,
    /// Every flow releases at time 0 with no jitter, and every copy leaves together: the
    /// synchronised worst case the analyses reason about.
    Synchronized,
}

/// Which frame sizes sources send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameSizes {
    Max,
    Min,
    /// Uniform between the flow's smallest and largest frame.
    Uniform,
    /// Read in turn from `size_trace` (each flow from its own starting point), clamped to the
    /// flow's smallest and largest frame.
    Trace,
}

/// How applications produce frames (the VL regulator then enforces the BAG).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Workload {
    /// One frame per period (BAG for VLs), the contract itself.
    Periodic,
    /// Constant bit rate: frames evenly spaced at `load` × the contract's frame rate (1: the
    /// contract itself, through the regulator), the same sizes as the other workloads (the
    /// largest with `FrameSizes::Max` for a constant bit rate in the strict sense).
    Cbr { load: f64 },
    /// Poisson arrivals at `load` × the contract's frame rate.
    Poisson { load: f64 },
    /// Bursts of Pareto-distributed size (shape `alpha`, mean `mean_frames`) at Poisson instants,
    /// at `load` × the contract's frame rate on average.
    ParetoBursts { load: f64, alpha: f64, mean_frames: f64 },
}

/// Which copy the destination's Bloom-filter deduplication delivers (seed 000, I-000-8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DedupMode {
    /// First valid copy wins (AFDX).
    FirstCopy,
    /// The seed read literally: hold the first copy until its twin arrives (or SkewMax ends).
    HoldUntilTwin,
}

/// Seed 000's deduplication at every destination end system, instead of sequence numbers.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DedupSettings {
    /// M, 4-bit counters of the counting Bloom filter.
    pub counters: usize,
    /// q, hash functions (0: the best q for `counters` and 128 keys).
    pub hashes: usize,
    pub mode: DedupMode,
}

impl Default for DedupSettings {
    fn default() -> Self {
        DedupSettings { counters: 1280, hashes: 0, mode: DedupMode::FirstCopy }
    }
}

/// What to simulate; read from JSON by the front (`{"duration_ns": ..., "release": "random"}`).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimConfig {
    pub duration_ns: i64,
    pub seed: u64,
    pub release: Release,
    pub frame_sizes: FrameSizes,
    pub workload: Workload,
    /// Retransmission on timeout (seed 000's retransmission-rate metric): a frame that has not
    /// been delivered, after redundancy management, at every destination of its flow within
    /// the flow's timeout is sent again through the regulator, once (the copy sent again is not
    /// itself retransmitted); retransmissions are counted per flow. Flows without a timeout are
    /// never retransmitted.
    pub retransmit: bool,
    /// The timeout of every flow, ns, from the frame's emission; 0: each flow's deadline.
    pub retransmit_timeout_ns: i64,
    /// Keep a trace of every frame transmission (for pcapng), at most this many frames.
    pub trace_limit: usize,
    /// Frame sizes in bytes for [`FrameSizes::Trace`] (e.g. a recorded video trace).
    pub size_trace: Vec<u32>,
    /// Bloom-filter deduplication at destinations (absent: redundancy management by sequence
    /// number within SkewMax).
    pub dedup: Option<DedupSettings>,
    /// The most memory the run may be estimated to need, bytes, before it is refused; 0:
    /// [`memory::DEFAULT_LIMIT`] (see [`memory`]).
    pub memory_limit_bytes: u64,
    /// Releases, frame sizes and tie order given rather than drawn (see [`scenario`]): they
    /// replace `release`, `frame_sizes` and the release jitter.
    pub scenario: Option<Scenario>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            duration_ns: 1_000_000_000,
            seed: 1,
            release: Release::Random,
            frame_sizes: FrameSizes::Uniform,
            workload: Workload::Periodic,
            retransmit: false,
            retransmit_timeout_ns: 0,
            trace_limit: 0,
            size_trace: Vec::new(),
            dedup: None,
            memory_limit_bytes: 0,
            scenario: None,
        }
    }
}

/// Measured behaviour of one (flow, destination, plane).
#[derive(Clone, Debug, Serialize)]
pub struct FlowStats {
    pub flow: String,
    pub destination: String,
    pub plane: String,
    #[serde(flatten)]
    pub latency: LatencySummary,
    /// Copies of this flow's frames lost on this route (full buffers, policing).
    pub losses: u64,
    /// Copies that reached the destination but failed integrity checking (their sequence number
    /// more than two after the previous copy's on this plane, after frames were lost): discarded
    /// before redundancy management. VLs only.
    pub integrity_discards: u64,
    /// Frames of this flow sent again because some destination had not delivered them within
    /// their timeout (the flow's figure, repeated on each of its rows).
    pub retransmissions: u64,
    /// With retransmission on: frames of this flow whose retransmission timeout passed during
    /// the run (delivered in time everywhere, or sent again). retransmissions / frames_due is the
    /// flow's retransmission rate, free of the frames still awaited at the end (repeated on each
    /// of its rows; absent from the report without retransmission, which keeps its reports).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_due: Option<u64>,
    /// Latency histogram: (upper edge µs, count), for CDF plots.
    pub histogram: Vec<(f64, u64)>,
}

/// What the destination delivered after redundancy management, per (flow, destination).
#[derive(Clone, Debug, Serialize)]
pub struct DeliveredStats {
    pub flow: String,
    pub destination: String,
    #[serde(flatten)]
    pub latency: LatencySummary,
    /// Copies discarded as duplicates of an accepted frame.
    pub duplicates_discarded: u64,
}

/// Deduplication at one destination end system: what the filter did, and how often it was wrong
/// next to Theorem 8's estimate for the same filter and the largest number of keys it held.
#[derive(Clone, Debug, Serialize)]
pub struct DedupReport {
    pub destination: String,
    pub mode: DedupMode,
    pub counters: usize,
    pub hashes: usize,
    pub arrivals: u64,
    pub delivered: u64,
    pub duplicates_dropped: u64,
    pub false_positives: u64,
    pub measured_fp_rate: f64,
    pub theorem8_fp: f64,
    pub saturations: u64,
    pub peak_keys: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct PortStats {
    pub node: String,
    pub port: String,
    pub plane: String,
    /// Largest backlog seen: frames waiting plus what remains of the one on the wire.
    pub max_backlog_bytes: f64,
    /// Fraction of the time the link was transmitting.
    pub utilisation: f64,
    pub frames: u64,
    pub drops: u64,
    /// Frames dropped by VL policing at this port's input, before queueing.
    pub policed: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunStats {
    pub events: u64,
    /// Frames that left an egress port (one per port crossed).
    pub frame_hops: u64,
    pub wall_s: f64,
    /// Simulated time reached, µs (less than asked if stopped early).
    pub simulated_us: f64,
    /// Frames emitted by the sources' regulators (each then copied on every plane).
    pub frames_released: u64,
    /// Copies of frames in ports (one per port crossed): created = delivered + forwarded +
    /// dropped + policed + in flight. A FIFO port forwards a frame when it schedules it (its
    /// copies for the next ports are then in flight).
    pub packets_created: u64,
    pub packets_delivered: u64,
    pub packets_forwarded: u64,
    pub packets_dropped: u64,
    pub packets_policed: u64,
    pub packets_in_flight: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct SimReport {
    pub network: String,
    pub seed: u64,
    pub flows: Vec<FlowStats>,
    pub delivered: Vec<DeliveredStats>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dedup: Vec<DedupReport>,
    pub ports: Vec<PortStats>,
    pub stats: RunStats,
}

/// Runs a whole simulation.
pub fn simulate(net: &crate::model::Network, config: &SimConfig) -> Result<SimReport, String> {
    let mut sim = Simulator::new(net, config.clone())?;
    sim.run_until(config.duration_ns);
    sim.finish();
    Ok(sim.report())
}

#[cfg(test)]
mod tests;
