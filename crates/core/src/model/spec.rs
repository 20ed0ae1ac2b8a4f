//! The network description as users write it (YAML or JSON, one schema).
//!
//! These types are the single definition of the file format: serde reads and writes them and
//! schemars derives the JSON Schema from them (`rtnetlab schema`). They carry names, not indices;
//! [`super::Network`] is the validated, resolved form that the engines read.

use crate::units::{DataRate, DataSize, Duration};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// A whole network: nodes, full-duplex links, traffic classes, egress schedulers and flows; and
/// the fixed-priority part: processors, buses, tasks, messages, servers and chains.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    /// Name of the network.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Values that apply wherever a node, port or link does not set its own.
    #[serde(default)]
    pub defaults: Defaults,
    /// Redundant planes (AFDX networks A and B). Absent: one plane named `A`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redundancy: Option<Redundancy>,
    /// Traffic classes, referred to by flows and by egress schedulers. Priorities: `priority` 0
    /// is served first; `pcp` (IEEE 802.1p) 7 is served first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<TrafficClass>,
    /// Named egress scheduler configurations; `fifo` and `static_priority` exist without one.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub schedulers: BTreeMap<String, SchedulerConfig>,
    #[serde(default)]
    pub end_systems: Vec<EndSystem>,
    #[serde(default)]
    pub switches: Vec<Switch>,
    #[serde(default)]
    pub links: Vec<Link>,
    #[serde(default)]
    pub flows: Vec<Flow>,
    /// Processors running tasks under fixed priorities.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processors: Vec<Processor>,
    /// Fixed-priority buses (CAN).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buses: Vec<Bus>,
    /// Tasks on processors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<Task>,
    /// Message streams on buses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
    /// Sporadic servers on processors or buses (seed 004's network sporadic server on a bus).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<SporadicServer>,
    /// End-to-end chains of tasks and messages triggered by one external event.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chains: Vec<Chain>,
    /// An abstract network-calculus network instead of an Ethernet one: servers with
    /// rate-latency service curves, flows with token-bucket arrival curves and paths, no framing
    /// and no links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_graph: Option<ServerGraph>,
}

/// A network-calculus server graph, as DNC, panco or DEBORAH take them. Numbers are plain, in any
/// consistent units; rtnetlab reads them as seconds, bits and bits per second, so its outputs
/// (µs, bytes) are those units scaled (a delay of 30 is reported as 30,000,000 µs).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerGraph {
    pub servers: Vec<GraphServer>,
    pub flows: Vec<GraphFlow>,
}

/// A server offering the rate-latency service curve β(t) = rate·[t − latency]^+ to the flows
/// crossing it (FIFO among them, or blind with `--blind`), and, with `max_rate`, the maximum
/// service curve max_rate·t: it never sends faster (a line, which shapes what the next servers
/// receive from it).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphServer {
    pub name: String,
    pub rate: f64,
    pub latency: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate: Option<f64>,
}

/// A flow with an arrival curve at its first server, and the servers it crosses in order. The
/// arrival curve is a token bucket α(t) = burst + rate·t (`burst` and `rate`), or a `staircase`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphFlow {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staircase: Option<Staircase>,
    pub path: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<f64>,
}

/// The staircase arrival curve of a GCRA(period, tolerance) of packets of `size` (an ATM
/// connection's cells, Le Boudec & Thiran §1.2.2): α(t) = size·⌈(t + tolerance)/period⌉ for
/// t > 0, 0 at 0. Its affine envelope is the token bucket of burst size·(1 + tolerance/period)
/// and rate size/period.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Staircase {
    pub period: f64,
    pub tolerance: f64,
    pub size: f64,
}

/// Network-wide defaults.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Defaults {
    /// Link rate where a link does not give one.
    pub link_rate: DataRate,
    /// Propagation delay where a link does not give one.
    pub propagation_delay: Duration,
    /// Switch technological latency where a switch does not give one.
    pub technological_latency: Duration,
    pub switching: Switching,
    /// Egress scheduler (a name from `schedulers`, or `fifo` / `static_priority`).
    pub scheduler: String,
    /// Output buffer per egress port; absent means unbounded (backlog is still reported).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer: Option<DataSize>,
    /// Per-frame cost on the wire beyond the Ethernet frame: preamble, start delimiter and
    /// inter-frame gap (20 B on Ethernet).
    pub interframe_overhead: DataSize,
    /// Switches police every virtual link at their inputs (ARINC 664 account-based policing)
    /// with this jitter allowance: a VL's account holds at most Lmax·(1 + J/BAG) bytes and
    /// refills at Lmax per BAG; a frame finding less credit than its size is dropped. Absent: no
    /// policing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policing_jitter: Option<Duration>,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            link_rate: DataRate::from_bps(100e6),
            propagation_delay: Duration(0.0),
            technological_latency: Duration(0.0),
            switching: Switching::StoreAndForward,
            scheduler: "fifo".to_string(),
            buffer: None,
            interframe_overhead: DataSize::from_bytes(crate::constants::INTERFRAME_BYTES.into()),
            policing_jitter: None,
        }
    }
}

/// How a switch forwards a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Switching {
    StoreAndForward,
    CutThrough,
}

/// Redundant transmission over independent planes (ARINC 664 part 7 networks A and B).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Redundancy {
    /// Plane names, e.g. `[A, B]`.
    pub planes: Vec<String>,
    /// Largest gap between the emission of the copies of one frame on the planes.
    #[serde(default = "default_sending_skew")]
    pub sending_skew: Duration,
    /// Largest gap the receiving end system allows between the arrivals of two copies
    /// (per VL it may be overridden).
    pub skew_max: Duration,
}

fn default_sending_skew() -> Duration {
    Duration::from_ms(0.5)
}

/// A traffic class, resolved: `priority` 0 is served first by static-priority schedulers.
///
/// Files give the priority either way ([`ClassInFile`]): `priority` (0 first, as CAN
/// identifiers) or `pcp` (IEEE 802.1p, 7 first), read into `priority` = 7 − pcp, so the engines
/// see one order. Written back, a class gives its `priority`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "ClassInFile")]
pub struct TrafficClass {
    pub name: String,
    pub priority: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A traffic class as written in a file. Give its priority one way or the other, not both.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "TrafficClass")]
pub struct ClassInFile {
    pub name: String,
    /// Static priority: 0 is served FIRST, larger numbers later (as CAN identifiers). This is
    /// the reverse of IEEE 802.1p, where 7 is the highest: to write 802.1p values, use `pcp`.
    /// Default 0.
    #[serde(default)]
    pub priority: Option<u32>,
    /// IEEE 802.1p priority code point, 0 to 7: 7 is served FIRST (the class's priority is
    /// 7 − pcp). Use it instead of `priority`, for every class of the file.
    #[serde(default)]
    pub pcp: Option<u32>,
    #[serde(default)]
    pub description: Option<String>,
}

impl TryFrom<ClassInFile> for TrafficClass {
    type Error = String;
    fn try_from(c: ClassInFile) -> Result<Self, String> {
        let priority = match (c.priority, c.pcp) {
            (Some(_), Some(_)) => {
                return Err("give priority (0 is served first) or pcp (IEEE 802.1p: 7 is served first), \
                            not both"
                    .into())
            }
            (_, Some(pcp)) if pcp > 7 => {
                return Err(format!(
                "pcp must be an IEEE 802.1p priority code point from 0 to 7 (7 is served first), got {pcp}"
            ))
            }
            (_, Some(pcp)) => 7 - pcp,
            (p, None) => p.unwrap_or(0),
        };
        Ok(TrafficClass { name: c.name, priority, description: c.description })
    }
}

// The schema is the file's form (both keys, their direction in their descriptions).
impl JsonSchema for TrafficClass {
    fn schema_name() -> String {
        "TrafficClass".to_string()
    }
    fn json_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        ClassInFile::json_schema(gen)
    }
}

/// An egress scheduler configuration, shared by every port that names it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SchedulerConfig {
    /// One first-in first-out queue.
    Fifo,
    /// Non-preemptive static priority between classes (class `priority`, lower first),
    /// FIFO inside a class.
    StaticPriority,
    /// Weighted round robin: `weights[class]` frames per round.
    Wrr { weights: BTreeMap<String, u32> },
    /// Deficit round robin (Shreedhar and Varghese): `quanta[class]` per round.
    Drr { quanta: BTreeMap<String, DataSize> },
    /// Deduplication-aware DRR of seed 000: quantum of class i = factors[i] × base_quantum.
    D2drr { base_quantum: DataSize, factors: BTreeMap<String, f64> },
    /// Worst-case fair weighted fair queueing (Bennett and Zhang).
    Wf2q { weights: BTreeMap<String, f64> },
    /// Self-clocked fair queueing (Golestani).
    Scfq { weights: BTreeMap<String, f64> },
    /// Arbitration table (Advanced Switching, InfiniBand, Deficit Table).
    Table { table_kind: TableKind, entries: Vec<TableEntry> },
    /// Credit-based shaper (IEEE 802.1Q §8.6.8.2, 802.1Qav) on each class given an idle slope
    /// (bit/s reserved for the class; its send slope is idle slope − port rate), over
    /// non-preemptive static priority between classes (class `priority`, lower first); classes
    /// without an idle slope are plain static-priority levels. With `gates`, every queue is also
    /// behind the transmission gate of a gate control list (802.1Qbv with 802.1Qav): a shaped
    /// class's credit is held while its gate is closed or its head frame cannot end before the
    /// gate closes, and changes by the slopes above only while its gate is open.
    Cbs {
        idle_slopes: BTreeMap<String, DataRate>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gates: Option<GateSchedule>,
    },
    /// Time-aware shaper (IEEE 802.1Q §8.6.8.4, 802.1Qbv): a cyclic gate control list opens and
    /// closes each priority level's gate; a frame starts only if it ends before its gate closes;
    /// static priority among the open levels.
    Tas {
        /// Length of the cycle; the entries' durations sum to it. Left out (with `entries`), the
        /// list is to be synthesised (`rtnetlab configure tsn`).
        #[serde(default, skip_serializing_if = "is_zero_duration")]
        cycle: Duration,
        /// Start of a cycle (the schedule's phase).
        #[serde(default, skip_serializing_if = "is_zero_duration")]
        base_time: Duration,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        entries: Vec<GateEntry>,
        /// Time-triggered classes: their flows are periodic with an `offset`, and each frame
        /// crosses the port in a window of its own, no other gate open (synthesised by
        /// `rtnetlab configure tsn`; the analysis then bounds them by their schedule).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        scheduled: Vec<String>,
        /// The precision of clock synchronisation (802.1AS): the largest difference between two
        /// clocks, by which each scheduled window is widened on both sides.
        #[serde(default, skip_serializing_if = "is_zero_duration")]
        sync_error: Duration,
    },
    /// Asynchronous traffic shaping (IEEE 802.1Qcr): the frames of the listed classes pass
    /// interleaved regulators, one FIFO per input port and class, whose head frame waits until
    /// its own flow's token bucket (the flow's rate and burst on the wire) allows it; eligible
    /// frames then go by non-preemptive static priority between classes (class `priority`,
    /// lower first), as do the frames of the classes not listed.
    Ats { classes: Vec<String> },
    /// Token-bucket shaper on the port's output, with a FIFO (or the named scheduler) inside.
    TokenBucket {
        rate: DataRate,
        burst: DataSize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        inner: Option<String>,
    },
}

impl SchedulerConfig {
    /// The field's name for this scheduler, as written in files (the registry's,
    /// [`crate::schedulers::kind`]).
    pub fn kind_name(&self) -> &'static str {
        crate::schedulers::kind(self)
    }
}

/// A gate control list on its own (the `gates` of a credit-based shaper): as a time-aware
/// shaper's, it repeats every `cycle` from `base_time`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateSchedule {
    /// Length of the cycle; the entries' durations sum to it.
    pub cycle: Duration,
    /// Start of a cycle (the schedule's phase).
    #[serde(default, skip_serializing_if = "is_zero_duration")]
    pub base_time: Duration,
    pub entries: Vec<GateEntry>,
}

/// One entry of a gate control list: the classes whose gates are open, for `duration`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateEntry {
    pub open: Vec<String>,
    pub duration: Duration,
}

/// Which arbitration-table scheduler runs the entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TableKind {
    /// Advanced Switching basic table: one frame per entry.
    AsBasic,
    /// InfiniBand weighted table: weight in 64-byte units per entry.
    IbaWeighted,
    /// Deficit Table scheduler (seed 003): weight per entry with a deficit carried per class.
    Dtable,
}

/// One entry of an arbitration table.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TableEntry {
    pub class: String,
    /// Data the entry lets its class send.
    pub weight: DataSize,
}

/// An end system: sends and receives flows, one port per plane.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EndSystem {
    pub name: String,
    /// Egress scheduler of its ports (default: `defaults.scheduler`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<DataSize>,
    /// Latency between a frame's release and its first bit on the wire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub technological_latency: Option<Duration>,
    /// Constant latency from a frame's last bit in to its delivery to the application.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_latency: Option<Duration>,
}

/// A switch of one plane.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Switch {
    pub name: String,
    /// The plane it belongs to (default: the first plane).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plane: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub technological_latency: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switching: Option<Switching>,
    /// Egress scheduler of every port not listed in `ports`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<DataSize>,
    /// Per output port settings, by port name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ports: BTreeMap<String, PortConfig>,
}

/// Settings of one egress port.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PortConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<DataSize>,
}

/// A full-duplex link between a port of `from` and a port of `to`: one egress port each way.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Link {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub from: String,
    /// Port name on `from` (default: the next free number on that node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_port: Option<String>,
    pub to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_port: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<DataRate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub propagation_delay: Option<Duration>,
    /// Plane of the link (default: the plane of its switch end, else the first plane).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plane: Option<String>,
}

/// A flow: its traffic model, where it goes, and how it is classed.
///
/// Written flat (`type: virtual_link` beside `name`, `bag`, ...); serde cannot combine
/// `flatten` with `deny_unknown_fields`, so reading splits the keys (see [`Flow::from_value`]).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Flow {
    pub name: String,
    pub source: String,
    /// Receiving end systems (several: multicast), each a name or `{node, path | paths}`.
    pub destinations: Vec<Destination>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// End-to-end deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<Duration>,
    /// Planes it is sent on (default: every plane).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planes: Option<Vec<String>>,
    #[serde(flatten)]
    pub traffic: Traffic,
}

/// The traffic model of a flow.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Traffic {
    /// An AFDX virtual link: at most one frame per BAG, frames of lmin..lmax bytes.
    VirtualLink {
        /// 16-bit VL identifier (carried in the destination MAC address).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<u32>,
        /// Bandwidth allocation gap: 2^k ms, k = 0..7.
        bag: Duration,
        /// Smallest Ethernet frame (64..1518 B).
        lmin: DataSize,
        /// Largest Ethernet frame (64..1518 B).
        lmax: DataSize,
        /// Jitter of the frame releases at the source regulator output.
        #[serde(default, skip_serializing_if = "is_zero_duration")]
        release_jitter: Duration,
        /// SkewMax for this VL (default: `redundancy.skew_max`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        skew_max: Option<Duration>,
        /// The application messages the VL carries (payload, period); `rtnetlab configure afdx`
        /// chooses `bag` and `lmax` from them (seed 001D).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        messages: Vec<VlMessage>,
    },
    /// A (burst, rate) constrained flow with packets of min_packet..max_packet bytes.
    TokenBucket { burst: DataSize, rate: DataRate, min_packet: DataSize, max_packet: DataSize },
    /// A periodic message stream.
    Periodic {
        period: Duration,
        size: DataSize,
        /// Smallest frame, when frames vary (default: `size`): the shortest time, hence jitters,
        /// count on it (a WOPANet flow whose period is no BAG keeps its min-payload here).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_size: Option<DataSize>,
        #[serde(default, skip_serializing_if = "is_zero_duration")]
        offset: Duration,
        #[serde(default, skip_serializing_if = "is_zero_duration")]
        jitter: Duration,
    },
}

/// An application message carried by a virtual link: `payload` bytes once per `period` (the
/// message transmit cycle), fragmented into frames of at most the VL's MTU.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VlMessage {
    pub payload: DataSize,
    pub period: Duration,
}

fn is_zero_duration(d: &Duration) -> bool {
    d.0 == 0.0
}

/// A destination: a name (routed by shortest path) or a node with an explicit path.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Destination {
    Name(String),
    Routed(RoutedDestination),
}

impl Destination {
    pub fn node(&self) -> &str {
        match self {
            Destination::Name(n) => n,
            Destination::Routed(r) => &r.node,
        }
    }
}

/// A destination with its path: `path` for every plane, or `paths` per plane.
/// A path lists the nodes from the source to the destination, both included.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoutedDestination {
    pub node: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<BTreeMap<String, Vec<String>>>,
}

// A hand-written visitor instead of `untagged`, so that a mistake inside the mapping form
// is reported with its own message rather than "did not match any variant".
impl<'de> Deserialize<'de> for Destination {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Destination;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an end system name or a mapping {node, path | paths}")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Destination, E> {
                Ok(Destination::Name(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Destination, A::Error> {
                RoutedDestination::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(Destination::Routed)
            }
        }
        d.deserialize_any(V)
    }
}

/// The keys every flow has, whatever its traffic model.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FlowCommon {
    name: String,
    source: String,
    destinations: Vec<Destination>,
    #[serde(default)]
    class: Option<String>,
    #[serde(default)]
    deadline: Option<Duration>,
    #[serde(default)]
    planes: Option<Vec<String>>,
}

const FLOW_COMMON_KEYS: &[&str] = &["name", "source", "destinations", "class", "deadline", "planes"];

impl Flow {
    /// Reads one flow from a JSON value; on error returns (path inside the flow, message).
    pub fn from_value(value: serde_json::Value) -> Result<Flow, (String, String)> {
        let serde_json::Value::Object(mut rest) = value else {
            return Err((String::new(), "expected a mapping".to_string()));
        };
        if !rest.contains_key("type") {
            return Err((
                String::new(),
                "missing field `type` (virtual_link, token_bucket or periodic)".to_string(),
            ));
        }
        let mut common = serde_json::Map::new();
        for key in FLOW_COMMON_KEYS {
            if let Some(v) = rest.remove(*key) {
                common.insert(key.to_string(), v);
            }
        }
        let c: FlowCommon = super::diagnostics::from_value_at(serde_json::Value::Object(common))?;
        let traffic: Traffic = super::diagnostics::from_value_at(serde_json::Value::Object(rest))?;
        Ok(Flow {
            name: c.name,
            source: c.source,
            destinations: c.destinations,
            class: c.class,
            deadline: c.deadline,
            planes: c.planes,
            traffic,
        })
    }
}

impl<'de> Deserialize<'de> for Flow {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        Flow::from_value(v).map_err(|(path, msg)| {
            serde::de::Error::custom(if path.is_empty() { msg } else { format!("{path}: {msg}") })
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Fixed-priority systems: processors, buses, tasks, messages, servers and chains.
//
// Priorities follow the rest of the model: a LOWER number is a HIGHER priority (as CAN
// identifiers, where the lowest identifier wins arbitration).

/// A processor scheduling its tasks by fixed priorities.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Processor {
    pub name: String,
    #[serde(default)]
    pub scheduling: ProcessorScheduling,
}

/// How a processor runs its tasks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProcessorScheduling {
    /// Preemptive fixed priority.
    #[default]
    Preemptive,
    /// Non-preemptive fixed priority: a task, once started, runs to completion.
    NonPreemptive,
}

/// A CAN-like fixed-priority bus: frames are non-preemptive and the highest-priority frame
/// offered by any node wins arbitration.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bus {
    pub name: String,
    pub bit_rate: DataRate,
    /// CAN identifier format, which sets the frame length (`standard`: 11 bits, `extended`: 29).
    #[serde(default)]
    pub identifier: CanIdentifier,
    /// Transmit queue policy of every node that `nodes` does not list.
    #[serde(default)]
    pub queue: TransmitQueue,
    /// Per-node settings, by node name (a processor or any station name used as a sender).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nodes: BTreeMap<String, BusNode>,
}

/// Settings of one node on a bus.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BusNode {
    pub queue: TransmitQueue,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CanIdentifier {
    /// 11-bit identifier (CAN 2.0A).
    #[default]
    Standard,
    /// 29-bit identifier (CAN 2.0B).
    Extended,
}

/// Which frame a node offers to arbitration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TransmitQueue {
    /// Its highest-priority pending frame.
    #[default]
    Priority,
    /// Its oldest pending frame.
    Fifo,
}

/// A task: released at most once per `period` (or by its chain), runs at most `wcet`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Task {
    pub name: String,
    /// The processor it runs on; absent: not placed yet (no bound until it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processor: Option<String>,
    /// Worst-case execution time.
    pub wcet: Duration,
    /// Minimum inter-arrival time; a task of a chain takes the chain's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<Duration>,
    /// Relative deadline (default: the period).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<Duration>,
    /// Release jitter.
    #[serde(default, skip_serializing_if = "is_zero_duration")]
    pub jitter: Duration,
    /// Longest blocking by lower-priority work (shared resources, non-preemptive sections).
    #[serde(default, skip_serializing_if = "is_zero_duration")]
    pub blocking: Duration,
    /// Fixed priority, lower number = higher priority; absent: to be assigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u32>,
    /// Served by this sporadic server (then it runs at the server's priority).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

/// A message stream on a bus: each instance is `packets` frames of `payload` data bytes.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Message {
    pub name: String,
    pub bus: String,
    /// The node whose transmit queue holds it (a processor or a station name).
    pub sender: String,
    /// Data bytes per frame (0..8 on CAN).
    pub payload: DataSize,
    /// Frames per instance; a message of several frames is preemptible between frames.
    #[serde(default = "one_packet", skip_serializing_if = "is_one_packet")]
    pub packets: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<Duration>,
    /// Queuing jitter (release jitter inherited from the sender).
    #[serde(default, skip_serializing_if = "is_zero_duration")]
    pub jitter: Duration,
    /// Priority (the CAN identifier: lower wins); absent: to be assigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u32>,
    /// Sent through this network sporadic server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

fn one_packet() -> u32 {
    1
}

fn is_one_packet(n: &u32) -> bool {
    *n == 1
}

/// A sporadic server: at most its budget at `priority` per replenishment period, the rest at
/// `background_priority` (or not at all). On a bus the budget counts packets (seed 004's network
/// sporadic server); on a processor it is execution time (POSIX sporadic server).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SporadicServer {
    pub name: String,
    /// The processor it runs on (give `processor` or `bus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processor: Option<String>,
    /// The bus it sends on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus: Option<String>,
    /// On a bus: the node it sends from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<String>,
    /// On a bus: packets per replenishment period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u32>,
    /// On a bus: data bytes of the largest packet it sends (default 8 B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<DataSize>,
    /// On a processor: execution time per replenishment period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Duration>,
    pub replenishment_period: Duration,
    /// Normal priority (lower number = higher priority).
    pub priority: u32,
    /// Background priority once the budget is spent; absent: not eligible in background.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background_priority: Option<u32>,
}

/// A chain of tasks and messages triggered by one external event (the linear event-driven
/// model): each step is released when its predecessor completes.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Chain {
    pub name: String,
    /// Minimum inter-arrival time of the external event.
    pub period: Duration,
    /// End-to-end deadline from the external event (default: the period).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<Duration>,
    /// Jitter of the external event.
    #[serde(default, skip_serializing_if = "is_zero_duration")]
    pub jitter: Duration,
    /// Task and message names, in order.
    pub steps: Vec<String>,
}
