//! Scenarios (what to simulate, serde JSON) and reports (what was measured), with the seed's
//! multimedia set-up and the four scheduler configurations of its Table 5.

use super::topology::Topology;
use super::traffic::{FrameSizes, ParetoSize, TrafficModel};
use crate::model::{SchedulerConfig, TableEntry, TableKind, TrafficClass};
use crate::sim::stats::LatencySummary;
use crate::units::{DataRate, DataSize, Duration};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything one fabric run needs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub topology: TopologyConfig,
    pub link: LinkConfig,
    pub switch: SwitchConfig,
    /// Buffer per VC of each network interface, on the injection and on the reception side.
    pub interface_buffer: DataSize,
    /// Flow-control unit: buffers are allocated and credits counted in these.
    pub credit: DataSize,
    pub mtu: DataSize,
    /// The rate injection fractions are of (the seed normalises to the 2.5 Gb/s signalling
    /// rate, not the 2 Gb/s data rate: I-003-5).
    pub reference_rate: DataRate,
    /// One class per virtual channel, VC i being the i-th class.
    pub classes: Vec<ClassConfig>,
    /// Scheduler configurations by name.
    pub schedulers: BTreeMap<String, SchedulerConfig>,
    /// The egress scheduler of every switch output port (and interface, unless overridden).
    pub scheduler: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface_scheduler: Option<String>,
    /// Simulated time before measuring, then measured time.
    pub warmup: Duration,
    pub duration: Duration,
}

/// The network shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologyConfig {
    /// Perfect-shuffle BMIN of `radix`^`stages` endpoints (see [`Topology::bmin`]).
    Bmin { radix: u32, stages: u32 },
    /// One switch with an endpoint on each port.
    SingleSwitch { endpoints: u32 },
}

impl TopologyConfig {
    pub fn build(&self) -> Result<Topology, String> {
        match *self {
            TopologyConfig::Bmin { radix, stages } => Topology::bmin(radix, stages),
            TopologyConfig::SingleSwitch { endpoints } => Topology::single_switch(endpoints),
        }
    }
}

/// Every link (full duplex, one credit counter per VC and direction).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// Data rate (2 Gb/s: 2.5 Gb/s signalling with 8b/10b encoding).
    pub rate: DataRate,
    pub propagation: Duration,
    /// From a buffer freeing to the sender seeing its credits: added to the reverse link's
    /// propagation (the flow-control packet's own time).
    pub credit_return: Duration,
}

/// Every switch: combined input-output buffered, VOQs at the inputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Crossbar rate over the link rate.
    pub speedup: f64,
    /// Unloaded time from a header's arrival at an input to its departure on an output.
    pub header_crossing: Duration,
    /// Buffer per VC at each input port and at each output port.
    pub input_buffer: DataSize,
    pub output_buffer: DataSize,
}

/// One service class, carried by its own virtual channel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassConfig {
    pub name: String,
    /// For static-priority scheduling (lower first).
    #[serde(default)]
    pub priority: u32,
    /// Mean injection per endpoint, as a fraction of the reference rate.
    pub injection: f64,
    pub traffic: TrafficModel,
}

impl Scenario {
    /// Reads a scenario from JSON text; errors name the offending field's path.
    pub fn from_json(text: &str) -> Result<Scenario, String> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| format!("{}: {}", e.path(), e.inner()))
    }

    /// Refuses what cannot run: unknown schedulers, packets above the MTU, buffers below it
    /// (a packet that never fits would stall its VC forever).
    pub fn validate(&self) -> Result<(), String> {
        let bytes = |d: DataSize| d.bytes().round();
        let (credit, mtu) = (bytes(self.credit), bytes(self.mtu));
        if credit < 1.0 || mtu < credit || mtu / credit > 65535.0 {
            return Err(format!(
                "need 1B <= credit <= mtu <= 65535 credits, got {} and {}",
                self.credit, self.mtu
            ));
        }
        for (what, b) in [
            ("interface_buffer", self.interface_buffer),
            ("switch.input_buffer", self.switch.input_buffer),
            ("switch.output_buffer", self.switch.output_buffer),
        ] {
            // In whole credits: an MTU packet must fit, or its VC would stall for ever.
            if (bytes(b) / credit).floor() < (mtu / credit).ceil() {
                return Err(format!("{what} ({b}) is smaller than the MTU ({})", self.mtu));
            }
        }
        if !(self.link.rate.bps() >= 1.0 && self.reference_rate.bps() > 0.0) {
            return Err("link.rate and reference_rate must be positive".into());
        }
        if !(self.switch.speedup > 0.0 && self.switch.speedup.is_finite()) {
            return Err(format!("switch.speedup must be positive, got {}", self.switch.speedup));
        }
        if self.duration.as_ns() <= 0 {
            return Err("duration must be positive".into());
        }
        if self.classes.is_empty() || self.classes.len() > 64 {
            return Err(format!("need 1 to 64 classes (one VC each), got {}", self.classes.len()));
        }
        for (i, c) in self.classes.iter().enumerate() {
            if self.classes[..i].iter().any(|o| o.name == c.name) {
                return Err(format!("class '{}' is defined twice", c.name));
            }
            if !(c.injection >= 0.0 && c.injection.is_finite()) {
                return Err(format!("class '{}': injection must be >= 0, got {}", c.name, c.injection));
            }
            let too_big = |b: DataSize| bytes(b) > mtu;
            match &c.traffic {
                TrafficModel::Bursts { burst, size } => {
                    size.validate().map_err(|e| format!("class '{}': {e}", c.name))?;
                    if *burst == 0 || too_big(size.max) {
                        return Err(format!(
                            "class '{}': bursts need >= 1 packet of at most the MTU",
                            c.name
                        ));
                    }
                }
                TrafficModel::Cbr { connection_rate, packet } => {
                    let rate_ok = connection_rate.bps() > 0.0 && connection_rate.bps().is_finite();
                    if too_big(*packet) || bytes(*packet) < 1.0 || !rate_ok {
                        return Err(format!("class '{}': CBR needs 1B..=MTU packets and a rate", c.name));
                    }
                }
                TrafficModel::Video { frame_interval, .. } => {
                    if frame_interval.as_ns() <= 0 {
                        return Err(format!("class '{}': frame_interval must be positive", c.name));
                    }
                }
            }
        }
        for name in std::iter::once(&self.scheduler).chain(&self.interface_scheduler) {
            if !self.schedulers.contains_key(name) {
                return Err(format!("scheduler '{name}' is not defined in schedulers"));
            }
        }
        Ok(())
    }

    /// The classes as the schedulers' builder reads them (name and priority by VC).
    pub fn traffic_classes(&self) -> Vec<TrafficClass> {
        self.classes
            .iter()
            .map(|c| TrafficClass { name: c.name.clone(), priority: c.priority, description: None })
            .collect()
    }

    /// The seed's multimedia set-up (seed 003 §6, catalogue §4(d)): the 64-endpoint BMIN, 2 Gb/s
    /// data links, CIOQ switches with speedup 1.5 and 145 ns header crossing, 64-byte credits,
    /// 2048-byte MTU, 32 KiB per VC at interfaces and 16 KiB per VC at switch ports, the seven
    /// 802.1D classes at Table 5's injections with `best_effort` for each of EE, BE and BK
    /// (0.015 to 0.093 in the seed), and all four Table 5 schedulers defined, `scheduler` used.
    pub fn multimedia(scheduler: Table5, best_effort: f64) -> Scenario {
        let b = DataSize::from_bytes;
        let bursts60 = TrafficModel::Bursts {
            burst: 60,
            size: ParetoSize { alpha: BEST_EFFORT_PARETO_ALPHA, min: b(64.0), max: b(2048.0) },
        };
        let class = |name: &str, priority, injection, traffic| ClassConfig {
            name: name.into(),
            priority,
            injection,
            traffic,
        };
        Scenario {
            name: format!("multimedia_{}", scheduler.name()),
            seed: 1,
            topology: TopologyConfig::Bmin { radix: 4, stages: 3 },
            link: LinkConfig {
                rate: DataRate::from_bps(2e9),
                propagation: Duration::from_secs(20e-9),
                credit_return: Duration::from_secs(0.0),
            },
            switch: SwitchConfig {
                speedup: 1.5,
                header_crossing: Duration::from_secs(145e-9),
                input_buffer: b(16384.0),
                output_buffer: b(16384.0),
            },
            interface_buffer: b(32768.0),
            credit: b(64.0),
            mtu: b(2048.0),
            reference_rate: DataRate::from_bps(2.5e9),
            classes: vec![
                class(
                    "NC",
                    0,
                    0.015,
                    TrafficModel::Bursts {
                        burst: 1,
                        size: ParetoSize { alpha: BEST_EFFORT_PARETO_ALPHA, min: b(64.0), max: b(192.0) },
                    },
                ),
                class(
                    "VO",
                    1,
                    0.046,
                    TrafficModel::Cbr { connection_rate: DataRate(64e3), packet: b(160.0) },
                ),
                class(
                    "VI",
                    2,
                    0.453,
                    TrafficModel::Video {
                        frame_interval: Duration::from_ms(40.0),
                        frames: FrameSizes::mpeg4_like(),
                    },
                ),
                class(
                    "CL",
                    3,
                    0.203,
                    TrafficModel::Cbr { connection_rate: DataRate(750e3), packet: b(2048.0) },
                ),
                class("EE", 4, best_effort, bursts60.clone()),
                class("BE", 5, best_effort, bursts60.clone()),
                class("BK", 6, best_effort, bursts60),
            ],
            schedulers: Table5::ALL.iter().map(|t| (t.name().to_string(), t.config())).collect(),
            scheduler: scheduler.name().into(),
            interface_scheduler: None,
            warmup: Duration::from_ms(20.0),
            duration: Duration::from_ms(100.0),
        }
    }
}

/// Pareto shape of the Bursts packet sizes (the seed does not give it): 1.2, with sizes from one
/// credit (64 B) up to the class's largest packet; many small packets and an occasional large
/// one, mean 195.0 B for best effort (64..2048 B) and 103.4 B for NC (64..192 B).
pub const BEST_EFFORT_PARETO_ALPHA: f64 = 1.2;

/// Best-effort injection per class (EE, BE, BK) of the documented load point: total injection
/// 0.015 + 0.046 + 0.453 + 0.203 + 3 × 0.061 = 0.9 of the reference rate.
pub const MULTIMEDIA_BEST_EFFORT: f64 = 0.061;

/// The four scheduler configurations of seed 003's Table 5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Table5 {
    /// Deficit Table with the decoupled configuration (Table 4 distances, Table 5 weights).
    Dtable,
    /// Deficit Table with 32-credit entries laid out as WF2Q (TV-003-8).
    DtableWf2q,
    /// Credit-aware DRR, quanta = Table 5 total weights in credits.
    Drr,
    /// Credit-aware SCFQ, weights φ.
    Scfq,
}

/// Table 5 per VC (NC VO VI CL EE BE BK): total weight in credits (= DRR quantum, = 1024·φ).
pub const TABLE5_TOTAL_WEIGHT: [u32; 7] = [96, 48, 512, 208, 96, 48, 16];
/// Table 5 DTable entry weights in credits; their maximum distances (Table 4) are 2, 4, 8, 16,
/// 32, 64, 64 table slots, hence 32, 16, 8, 4, 2, 1, 1 entries of the 64.
pub const TABLE5_DTABLE_ENTRY_WEIGHT: [u32; 7] = [3, 3, 64, 52, 48, 48, 16];
pub const TABLE4_DISTANCE: [usize; 7] = [2, 4, 8, 16, 32, 64, 64];
/// Table 5 DTable-WF2Q entries per VC (BE has 3 entries: its printed total 69 is 96, I-003-2).
pub const TABLE5_WF2Q_ENTRIES: [u32; 7] = [6, 3, 32, 13, 6, 3, 1];
pub const TABLE5_CLASSES: [&str; 7] = ["NC", "VO", "VI", "CL", "EE", "BE", "BK"];
const CREDIT_BYTES: f64 = 64.0;

impl Table5 {
    pub const ALL: [Table5; 4] = [Table5::Dtable, Table5::DtableWf2q, Table5::Drr, Table5::Scfq];

    pub fn name(self) -> &'static str {
        match self {
            Table5::Dtable => "dtable",
            Table5::DtableWf2q => "dtable_wf2q",
            Table5::Drr => "drr",
            Table5::Scfq => "scfq",
        }
    }

    /// The scheduler configuration (class names NC..BK).
    pub fn config(self) -> SchedulerConfig {
        let per_class = |f: &dyn Fn(usize) -> f64| -> BTreeMap<String, f64> {
            TABLE5_CLASSES.iter().enumerate().map(|(i, c)| (c.to_string(), f(i))).collect()
        };
        let credits = |n: u32| DataSize::from_bytes(n as f64 * CREDIT_BYTES);
        let table = |layout: Vec<usize>, weight: &dyn Fn(usize) -> u32| SchedulerConfig::Table {
            table_kind: TableKind::Dtable,
            entries: layout
                .into_iter()
                .map(|vc| TableEntry { class: TABLE5_CLASSES[vc].into(), weight: credits(weight(vc)) })
                .collect(),
        };
        match self {
            Table5::Dtable => table(
                decoupled_layout(&TABLE4_DISTANCE, 64).expect("Table 4's distances fit 64 slots"),
                &|vc| TABLE5_DTABLE_ENTRY_WEIGHT[vc],
            ),
            Table5::DtableWf2q => table(wf2q_layout(&TABLE5_WF2Q_ENTRIES), &|_| 32),
            Table5::Drr => SchedulerConfig::Drr {
                quanta: per_class(&|i| TABLE5_TOTAL_WEIGHT[i] as f64)
                    .into_iter()
                    .map(|(c, q)| (c, DataSize::from_bytes(q * CREDIT_BYTES)))
                    .collect(),
            },
            // φ exactly (total weight / 1024), of which Table 5 prints three decimals.
            Table5::Scfq => {
                SchedulerConfig::Scfq { weights: per_class(&|i| TABLE5_TOTAL_WEIGHT[i] as f64 / 1024.0) }
            }
        }
    }
}

/// The table layout emulating WF2Q over VCs of `entries[i]` entries each (Chaskar and Madhow's
/// list-based WRR, WF2Q variant): the order WF2Q serves unit packets of always-backlogged VCs
/// with rates ∝ entries, ties to the lower VC. Exact rational arithmetic.
pub fn wf2q_layout(entries: &[u32]) -> Vec<usize> {
    let total: u64 = entries.iter().map(|&w| w as u64).sum();
    let mut sent = vec![0u64; entries.len()];
    let mut layout = Vec::with_capacity(total as usize);
    for slot in 0..total {
        // Eligible: virtual start sent_i / w_i <= V = slot / total. Smallest finish (sent_i+1)/w_i.
        let pick = (0..entries.len())
            .filter(|&i| {
                entries[i] > 0 && sent[i] < entries[i] as u64 && sent[i] * total <= slot * entries[i] as u64
            })
            .min_by(|&a, &b| {
                ((sent[a] + 1) * entries[b] as u64).cmp(&((sent[b] + 1) * entries[a] as u64)).then(a.cmp(&b))
            })
            .expect("WF2Q always has an eligible VC");
        sent[pick] += 1;
        layout.push(pick);
    }
    layout
}

/// A table of `slots` entries where VC i (taken in order of increasing distance, then index)
/// occupies the first free slot and every `distance[i]` slots after it, so consecutive entries
/// of a VC are exactly its distance apart (TV-003-9 for Table 4). Fails when slots collide.
pub fn decoupled_layout(distance: &[usize], slots: usize) -> Result<Vec<usize>, String> {
    let mut table = vec![usize::MAX; slots];
    let mut order: Vec<usize> = (0..distance.len()).collect();
    order.sort_by_key(|&i| (distance[i], i));
    for vc in order {
        let d = distance[vc];
        let first = table.iter().position(|&s| s == usize::MAX).ok_or("the table is full")?;
        if d == 0 || !slots.is_multiple_of(d) {
            return Err(format!("distance {d} does not divide {slots} slots"));
        }
        for s in (first..slots).step_by(d) {
            if table[s] != usize::MAX {
                return Err(format!("VC {vc} at distance {d} collides at slot {s}"));
            }
            table[s] = vc;
        }
    }
    if table.contains(&usize::MAX) {
        return Err("the distances leave empty slots".into());
    }
    Ok(table)
}

/// What one run measured. Loads are per endpoint on average, as fractions of the reference rate
/// (the seed's normalised axes); latencies are in µs.
#[derive(Clone, Debug, Serialize)]
pub struct FabricReport {
    pub scenario: String,
    pub scheduler: String,
    pub topology: String,
    pub endpoints: u32,
    pub switches: u32,
    pub measured_s: f64,
    pub classes: Vec<ClassReport>,
    pub offered_load: f64,
    pub accepted_load: f64,
    pub stats: RunStats,
    pub checks: FabricChecks,
}

/// One class (= one VC) over the measured window.
#[derive(Clone, Debug, Serialize)]
pub struct ClassReport {
    pub class: String,
    pub vc: u16,
    /// Generated by the applications, and delivered, per endpoint (fraction of the reference).
    pub offered_load: f64,
    pub accepted_load: f64,
    pub offered_gbps: f64,
    pub accepted_gbps: f64,
    pub packets_generated: u64,
    pub packets_delivered: u64,
    /// From entering the interface's VC buffer to the last byte at the destination.
    pub latency: LatencySummary,
    /// From generation (so including the application's pending queue) to delivery.
    pub latency_from_generation: LatencySummary,
    /// Latency (from the interface) histogram: (bucket upper edge ns, packets), for the CDF.
    pub histogram_ns: Vec<(i64, u64)>,
}

/// Run counters over the whole simulated time (warm-up included).
#[derive(Clone, Debug, Serialize)]
pub struct RunStats {
    pub simulated_ns: i64,
    pub events: u64,
    pub packets_generated: u64,
    pub packets_delivered: u64,
    pub wall_s: f64,
    pub events_per_s: f64,
}

/// Invariants, checked as the run goes and at its end; all counts are 0 in a correct run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FabricChecks {
    /// Packets inside interfaces, switches and links at the end, counted place by place.
    pub in_network_at_end: u64,
    /// Packets still in the applications' pending queues at the end.
    pub pending_at_end: u64,
    /// generated = delivered + in network + pending, and the place-by-place count matches the
    /// packets alive.
    pub conserved: bool,
    /// Deliveries out of order within a (source, destination, VC).
    pub out_of_order: u64,
    /// Times a buffer held more than its size, a credit counter went below 0 or above the
    /// downstream buffer.
    pub buffer_overflows: u64,
    pub credit_violations: u64,
    /// Highest fill seen, as a fraction of the buffer (per VC).
    pub max_interface_fill: f64,
    pub max_input_fill: f64,
    pub max_output_fill: f64,
    /// Most packets in one application pending queue.
    pub max_pending: u64,
}

impl FabricChecks {
    /// No loss, no overflow, no credit error, in order, conserved.
    pub fn all_hold(&self) -> bool {
        self.conserved
            && self.out_of_order == 0
            && self.buffer_overflows == 0
            && self.credit_violations == 0
            && self.max_interface_fill <= 1.0
            && self.max_input_fill <= 1.0
            && self.max_output_fill <= 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TV-003-7 and TV-003-8: the WF2Q-interleaved layouts, derived.
    #[test]
    fn wf2q_layouts() {
        let names = |l: Vec<usize>, n: &[&str]| l.iter().map(|&i| n[i]).collect::<Vec<_>>().join(" ");
        assert_eq!(names(wf2q_layout(&[3, 2, 1]), &["A", "B", "C"]), "A B A B A C");
        let tv8 = "VI CL VI NC VI CL VI EE VI VO VI CL VI NC VI CL VI EE VI BE VI CL VI NC VI CL VI EE VI \
                   VO VI CL VI NC VI CL VI EE VI BE VI CL VI NC VI CL VI EE VI VO VI CL VI BE VI CL VI NC \
                   VI EE VI CL VI BK";
        assert_eq!(names(wf2q_layout(&TABLE5_WF2Q_ENTRIES), &TABLE5_CLASSES), tv8);
    }

    /// TV-003-9: the decoupled layout meets Table 4's distances with 32/16/8/4/2/1/1 entries.
    #[test]
    fn decoupled_layout_meets_table4() {
        let t = decoupled_layout(&TABLE4_DISTANCE, 64).unwrap();
        for (s, &vc) in t.iter().enumerate() {
            let ok = match vc {
                0 => s % 2 == 0,
                1 => s % 4 == 1,
                2 => s % 8 == 3,
                3 => s % 16 == 7,
                4 => s % 32 == 15,
                5 => s == 31,
                6 => s == 63,
                _ => false,
            };
            assert!(ok, "slot {s}: VC {vc}");
        }
        assert!(decoupled_layout(&[2, 2, 2], 4).is_err());
    }

    /// TV-003-2 to -4: entries × entry weight = total weight, Σ = 1024 credits (DTable) and 2048
    /// (DTable-WF2Q); DRR quanta = total weights; SCFQ weights = φ summing to 1.
    #[test]
    fn table5_configurations() {
        let count = |t: &SchedulerConfig| -> BTreeMap<String, (usize, f64)> {
            let SchedulerConfig::Table { table_kind: TableKind::Dtable, entries } = t else { panic!() };
            let mut m = BTreeMap::new();
            for e in entries {
                let x = m.entry(e.class.clone()).or_insert((0, 0.0));
                x.0 += 1;
                x.1 += e.weight.bytes() / 64.0;
            }
            m
        };
        let dt = count(&Table5::Dtable.config());
        let wf = count(&Table5::DtableWf2q.config());
        for (i, c) in TABLE5_CLASSES.iter().enumerate() {
            assert_eq!(dt[*c].1, TABLE5_TOTAL_WEIGHT[i] as f64, "{c}");
            assert_eq!(wf[*c], (TABLE5_WF2Q_ENTRIES[i] as usize, 32.0 * TABLE5_WF2Q_ENTRIES[i] as f64));
        }
        assert_eq!(dt.values().map(|x| x.1).sum::<f64>(), 1024.0);
        assert_eq!(wf.values().map(|x| x.1).sum::<f64>(), 2048.0);
        let SchedulerConfig::Drr { quanta } = Table5::Drr.config() else { panic!() };
        assert_eq!(quanta["VI"].bytes(), 512.0 * 64.0);
        assert_eq!(quanta["BK"].bytes(), 16.0 * 64.0);
        let SchedulerConfig::Scfq { weights } = Table5::Scfq.config() else { panic!() };
        assert_eq!(weights.values().sum::<f64>(), 1.0);
        assert_eq!(weights["NC"], 0.09375);
    }

    /// The scenario file is the built-in multimedia scenario at the documented load point.
    #[test]
    fn scenario_file_matches_the_builtin() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/fabric/multimedia.json");
        let text = std::fs::read_to_string(path).unwrap();
        let file = Scenario::from_json(&text).unwrap();
        file.validate().unwrap();
        let mut builtin = Scenario::multimedia(Table5::Drr, MULTIMEDIA_BEST_EFFORT);
        builtin.name = file.name.clone();
        assert_eq!(serde_json::to_value(&file).unwrap(), serde_json::to_value(&builtin).unwrap());
        let offered: f64 = file.classes.iter().map(|c| c.injection).sum();
        assert!((offered - 0.9).abs() < 1e-9, "{offered}");
    }

    /// TV-003-5: the seed's lightest and heaviest loads are Table 5's injection columns, NC and
    /// QoS fixed (0.015, 0.046, 0.453, 0.203) and EE, BE, BK at 0.015 each (Inj. Min) or 0.093
    /// each (Inj. Max): totals 0.762 (printed 0.76) and 0.996 (printed 1). The shares reserved
    /// (Table 5's φ, exactly total weight / 1024) meet the scenario's targets (VO 2-8 %, VI 40-50 %,
    /// CL 20-25 %, best effort 10-20 %): VO 4.6875 %, VI 50 %, CL 20.3125 %, best effort 15.625 %.
    #[test]
    fn tv_003_5_injection_totals() {
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b;
        for t in Table5::ALL {
            for (best_effort, column, total) in [
                (0.015, [0.015, 0.046, 0.453, 0.203, 0.015, 0.015, 0.015], 0.762),
                (0.093, [0.015, 0.046, 0.453, 0.203, 0.093, 0.093, 0.093], 0.996),
            ] {
                let s = Scenario::multimedia(t, best_effort);
                let names: Vec<&str> = s.classes.iter().map(|c| c.name.as_str()).collect();
                assert_eq!(names, TABLE5_CLASSES);
                let injections: Vec<f64> = s.classes.iter().map(|c| c.injection).collect();
                assert_eq!(injections, column, "{}", t.name());
                let sum: f64 = injections.iter().sum();
                assert!(close(sum, total), "{}: {sum} != {total}", t.name());
            }
        }
        let SchedulerConfig::Scfq { weights } = Table5::Scfq.config() else { panic!() };
        let best_effort = weights["EE"] + weights["BE"] + weights["BK"];
        let shares = [
            (weights["VO"], 0.046875),
            (weights["VI"], 0.5),
            (weights["CL"], 0.203125),
            (best_effort, 0.15625),
        ];
        for ((got, expected), (lo, hi)) in
            shares.into_iter().zip([(0.02, 0.08), (0.40, 0.50), (0.20, 0.25), (0.10, 0.20)])
        {
            assert!(close(got, expected) && (lo..=hi).contains(&got), "{got} for {expected}");
        }
    }

    #[test]
    fn validation_names_the_problem() {
        let bad = r#"{"name": "x", "seed": 1, "topology": {"kind": "bmin", "radix": 4, "stages": "3"}}"#;
        let err = Scenario::from_json(bad).unwrap_err();
        assert!(err.starts_with("topology"), "{err}");
        let ok = Scenario::multimedia(Table5::Scfq, 0.015);
        ok.validate().unwrap();
        let mut s = ok.clone();
        s.scheduler = "nope".into();
        assert!(s.validate().unwrap_err().contains("'nope'"));
        let mut s = ok.clone();
        s.switch.input_buffer = DataSize::from_bytes(1024.0);
        assert!(s.validate().unwrap_err().contains("smaller than the MTU"));
        // 2047 B hold 31 credits, and a 2000 B (MTU) packet needs 32.
        s.switch.input_buffer = DataSize::from_bytes(2047.0);
        s.mtu = DataSize::from_bytes(2000.0);
        assert!(s.validate().unwrap_err().contains("smaller than the MTU"));
        let mut s = ok.clone();
        s.classes[1].traffic =
            TrafficModel::Cbr { connection_rate: DataRate(1e6), packet: DataSize::from_bytes(4096.0) };
        assert!(s.validate().unwrap_err().contains("'VO'"));
        let mut s = ok;
        s.classes[2].name = "NC".into();
        assert!(s.validate().unwrap_err().contains("twice"));
    }
}
