//! Scenarios: a run whose releases, frame sizes and tie order are given rather than drawn, so
//! that a worst case found by a search (`crate::worst_case`) can be replayed exactly.
//!
//! A scenario fixes, per flow, its first release (the rest follow at its period, as in every
//! periodic run), the sizes of its frames (a pattern read in turn) and the offset of its copies
//! on the second and later planes; release jitter is zero. Among frames entering the same port
//! in the same ns, the scenario's tie order decides which the port takes first: every entry into
//! a port due at a given ns is held until the events of that ns are done (ends of transmission,
//! releases, ...), then they enter in (port, rank of the flow, flow, frame) order, whatever the
//! order in which the engine produced them. A run with a scenario draws nothing at random: the
//! same description and scenario give the same report whatever the seed.
//!
//! The search also runs scenarios in which only some flows send (those that can reach a target
//! frame) and records when chosen flows' frames enter ports; neither is part of the file format.

use super::engine::Simulator;
use super::tables::{period_ns, size_range};
use crate::model::{Invalid, Network, Switching};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A scenario as written in a file (JSON): flows by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// How long the scenario runs, ns: the replay simulates this long.
    pub duration_ns: i64,
    /// Cut-through switches run store-and-forward: the model the analyses bound.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub store_and_forward: bool,
    /// Flows, by name, first taken first among frames entering a port in the same ns; the flows
    /// not listed come after, in the description's order.
    #[serde(default)]
    pub tie_order: Vec<String>,
    /// Per flow: its first release and frame sizes. A flow not listed releases at 0 with its
    /// largest frames.
    #[serde(default)]
    pub flows: Vec<FlowScenario>,
}

/// One flow's part of a scenario.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowScenario {
    pub flow: String,
    /// The first release, ns, within the flow's period (BAG): 0 <= offset < period.
    pub offset_ns: i64,
    /// Frame sizes in bytes, frame k taking `sizes[k % len]`, each within the flow's smallest
    /// and largest frame; empty: the largest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<u32>,
    /// The offset of the copies on the second and later planes, ns, up to the sending skew.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub plane_skew_ns: i64,
}

fn is_zero(x: &i64) -> bool {
    *x == 0
}

/// A scenario resolved against a network: per flow index.
#[derive(Clone, Debug)]
pub struct ScenarioTables {
    pub offset_ns: Vec<i64>,
    /// Frame sizes in bytes per flow (never empty).
    pub sizes: Vec<Vec<u32>>,
    pub plane_skew_ns: Vec<i64>,
    /// Rank among frames entering a port in the same ns (lower first); a total order.
    pub rank: Vec<u32>,
    pub store_and_forward: bool,
    /// Flows that send (the search silences flows that cannot reach its target); `None`: all.
    pub active: Option<Vec<bool>>,
    /// Flows whose frames' entries into ports are recorded ([`Simulator::port_entries`]).
    pub watch: Vec<bool>,
}

impl ScenarioTables {
    /// Every flow at 0, largest frames, ranks in the description's order.
    pub fn synchronized(net: &Network) -> ScenarioTables {
        let n = net.flows.len();
        ScenarioTables {
            offset_ns: vec![0; n],
            sizes: net.flows.iter().map(|f| vec![size_range(&f.traffic).1.round() as u32]).collect(),
            plane_skew_ns: vec![0; n],
            rank: (0..n as u32).collect(),
            store_and_forward: false,
            active: None,
            watch: vec![false; n],
        }
    }

    /// Reads a scenario: every flow named must exist, once; offsets within the period; sizes
    /// within the flow's frames; plane skews within the sending skew. Errors name the place.
    pub fn resolve(net: &Network, s: &Scenario) -> Result<ScenarioTables, Invalid> {
        let by_name: HashMap<&str, usize> =
            net.flows.iter().enumerate().map(|(i, f)| (f.name.as_str(), i)).collect();
        let mut t = ScenarioTables::synchronized(net);
        t.store_and_forward = s.store_and_forward;
        if s.duration_ns <= 0 {
            return Err(Invalid::new(
                "scenario.duration_ns",
                format!("must be positive, got {}", s.duration_ns),
            ));
        }
        let mut seen = vec![false; net.flows.len()];
        for (k, fs) in s.flows.iter().enumerate() {
            let place = format!("scenario.flows[{k}]");
            let &f = by_name.get(fs.flow.as_str()).ok_or_else(|| {
                Invalid::new(
                    format!("{place}.flow"),
                    format!("no flow named '{}' in {}", fs.flow, net.spec.name),
                )
            })?;
            if std::mem::replace(&mut seen[f], true) {
                return Err(Invalid::new(format!("{place}.flow"), format!("'{}' is listed twice", fs.flow)));
            }
            let flow = &net.flows[f];
            let period = period_ns(&flow.traffic).max(1);
            if !(0..period).contains(&fs.offset_ns) {
                return Err(Invalid::new(
                    format!("{place}.offset_ns"),
                    format!("must be within the flow's period, 0 to {} ns, got {}", period - 1, fs.offset_ns),
                ));
            }
            let (lo, hi) = size_range(&flow.traffic);
            let (lo, hi) = (lo.round() as u32, hi.round() as u32);
            if let Some(b) = fs.sizes.iter().find(|&&b| b < lo || b > hi) {
                return Err(Invalid::new(
                    format!("{place}.sizes"),
                    format!("{b} B is outside the flow's frames, {lo} to {hi} B"),
                ));
            }
            let skew = (net.sending_skew * 1e9).round() as i64;
            if !(0..=skew).contains(&fs.plane_skew_ns) {
                return Err(Invalid::new(
                    format!("{place}.plane_skew_ns"),
                    format!("must be within the sending skew, 0 to {skew} ns, got {}", fs.plane_skew_ns),
                ));
            }
            t.offset_ns[f] = fs.offset_ns;
            if !fs.sizes.is_empty() {
                t.sizes[f] = fs.sizes.clone();
            }
            t.plane_skew_ns[f] = fs.plane_skew_ns;
        }
        let mut ranked = vec![false; net.flows.len()];
        let mut order = Vec::with_capacity(net.flows.len());
        for (k, name) in s.tie_order.iter().enumerate() {
            let &f = by_name.get(name.as_str()).ok_or_else(|| {
                Invalid::new(format!("scenario.tie_order[{k}]"), format!("no flow named '{name}'"))
            })?;
            if std::mem::replace(&mut ranked[f], true) {
                return Err(Invalid::new(
                    format!("scenario.tie_order[{k}]"),
                    format!("'{name}' is listed twice"),
                ));
            }
            order.push(f);
        }
        order.extend((0..net.flows.len()).filter(|&f| !ranked[f]));
        for (r, &f) in order.iter().enumerate() {
            t.rank[f] = r as u32;
        }
        Ok(t)
    }

    /// The scenario as written in a file: every flow listed, the tie order whole.
    pub fn to_scenario(&self, net: &Network, duration_ns: i64) -> Scenario {
        let mut order: Vec<usize> = (0..net.flows.len()).collect();
        order.sort_by_key(|&f| self.rank[f]);
        Scenario {
            duration_ns,
            store_and_forward: self.store_and_forward,
            tie_order: order.iter().map(|&f| net.flows[f].name.clone()).collect(),
            flows: net
                .flows
                .iter()
                .enumerate()
                .map(|(f, flow)| {
                    let lmax = size_range(&flow.traffic).1.round() as u32;
                    let sizes = &self.sizes[f];
                    FlowScenario {
                        flow: flow.name.clone(),
                        offset_ns: self.offset_ns[f],
                        sizes: if sizes.iter().all(|&b| b == lmax) { Vec::new() } else { sizes.clone() },
                        plane_skew_ns: self.plane_skew_ns[f],
                    }
                })
                .collect(),
        }
    }

    /// Switches as the scenario runs them.
    pub(super) fn apply(&self, net: &mut Network) {
        if self.store_and_forward {
            for n in net.nodes.iter_mut() {
                n.switching = Switching::StoreAndForward;
            }
        }
    }
}

/// A frame of a watched flow entering a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortEntry {
    pub flow: u32,
    pub frame: u64,
    pub port: u32,
    pub time_ns: i64,
}

/// A scenario while it runs: its tables, the entries into ports held until their ns is over.
pub(super) struct ScenarioState {
    pub(super) tables: ScenarioTables,
    /// Packets due to enter their port at the current ns, held.
    held: Vec<u32>,
    flushing: bool,
    entries: Vec<PortEntry>,
}

impl ScenarioState {
    pub(super) fn new(tables: ScenarioTables) -> ScenarioState {
        ScenarioState { tables, held: Vec::new(), flushing: false, entries: Vec::new() }
    }
}

impl Simulator {
    /// The flow's first release from the scenario (and its planes' offset); a silenced flow
    /// releases nothing.
    pub(super) fn start_from_scenario(&mut self, f: usize) {
        let s = &self.scenario.as_ref().expect("a scenario").tables;
        let (start, skew) = (s.offset_ns[f], s.plane_skew_ns[f]);
        let active = s.active.as_ref().is_none_or(|a| a[f]);
        self.sources_cold[f].start_ns = start;
        self.sources[f].plane_skew_ns = skew;
        if active {
            self.push(start, super::engine::Ev::Release { flow: f as u32 });
        }
    }

    /// The scenario's size of the flow's next frame produced, bits.
    pub(super) fn scenario_frame_bits(&self, f: usize) -> Option<u32> {
        let s = &self.scenario.as_ref()?.tables;
        let src = &self.sources[f];
        let k = (src.next_frame + src.waiting as u64) as usize;
        let sizes = &s.sizes[f];
        Some(sizes[k % sizes.len()] * 8)
    }

    /// With a scenario, a packet entering its port is held until the events of this ns are
    /// done ([`Simulator::enter_held`]); returns whether it was.
    #[inline]
    pub(super) fn hold_entry(&mut self, packet: u32) -> bool {
        match self.scenario.as_mut() {
            Some(s) if !s.flushing => {
                s.held.push(packet);
                true
            }
            _ => false,
        }
    }

    /// Entries into ports held at this ns.
    #[inline]
    pub(super) fn entries_held(&self) -> bool {
        self.scenario.as_ref().is_some_and(|s| !s.held.is_empty())
    }

    /// The packets held at this ns enter their ports in (port, rank of the flow, flow, frame)
    /// order.
    pub(super) fn enter_held(&mut self) {
        let Some(s) = self.scenario.as_mut() else { return };
        let mut held = std::mem::take(&mut s.held);
        s.flushing = true;
        let rank = &self.scenario.as_ref().expect("a scenario").tables.rank;
        held.sort_by_cached_key(|&p| {
            let pk = &self.packets[p as usize];
            let c = &self.copies[pk.copy as usize];
            (pk.hop.port, rank[c.flow as usize], c.flow, c.frame)
        });
        for &p in &held {
            let pk = self.packets[p as usize];
            let c = &self.copies[pk.copy as usize];
            let (flow, frame) = (c.flow, c.frame);
            let s = self.scenario.as_mut().expect("a scenario");
            if s.tables.watch[flow as usize] {
                s.entries.push(PortEntry { flow, frame, port: pk.hop.port, time_ns: self.now });
            }
            self.enqueue(p);
        }
        held.clear();
        let s = self.scenario.as_mut().expect("a scenario");
        s.flushing = false;
        s.held = held;
    }

    /// When the watched flows' frames entered ports (with a scenario), in time order.
    pub fn port_entries(&self) -> &[PortEntry] {
        self.scenario.as_ref().map_or(&[], |s| &s.entries)
    }

    /// The largest latency measured per route, ns (0 where nothing arrived), routes in the
    /// report's order: flows in the description's order, each flow's routes in its order.
    pub fn route_max_ns(&self) -> Vec<i64> {
        self.route_stats.iter().map(|l| if l.count == 0 { 0 } else { l.max_ns }).collect()
    }
}

/// A flow's period (BAG), ns, and its smallest and largest frames, bytes: what a scenario
/// chooses within.
pub fn flow_frames(net: &Network, f: usize) -> (i64, u32, u32) {
    let traffic = &net.flows[f].traffic;
    let (lo, hi) = size_range(traffic);
    (period_ns(traffic).max(1), lo.round() as u32, hi.round() as u32)
}
