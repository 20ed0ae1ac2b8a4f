//! What a testbed run sets up, read from the validated [`Network`]: one namespace per node, one
//! veth pair per link (an interface per egress port), each switch's forwarding table (frame id
//! to output ports, the union of the model's routes, so multicast VLs are replicated), each
//! flow's frame id and class field, and for every egress port what Linux's qdiscs can express of
//! its scheduler (kernel mode) or why they cannot. The orchestrator applies it; the node runtime
//! reads the same plan, so both realise one model.

use rtnetlab_core::model::{Network, NodeKind, SchedulerConfig, Traffic};
use rtnetlab_core::schedulers::Kernel;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// HTB has eight priorities (0..=7): at most this many static-priority levels, the frames
/// without a class included.
pub const HTB_LEVELS: usize = 8;

#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub network: String,
    pub planes: Vec<String>,
    pub classes: Vec<PlanClass>,
    pub nodes: Vec<PlanNode>,
    pub ports: Vec<PlanPort>,
    /// Each link on each plane: its two egress ports (`from` → `to`, `to` → `from`).
    pub links: Vec<(usize, usize)>,
    pub flows: Vec<PlanFlow>,
    /// Per switch: frame id → output ports.
    pub forwarding: Vec<Forwarding>,
    /// Why kernel mode cannot run this network as described (empty: it can); each names the
    /// place and what is missing.
    pub kernel_refusals: Vec<String>,
    /// What kernel mode runs differently from the model (cut-through).
    pub kernel_warnings: Vec<String>,
    pub sending_skew_ns: i64,
    pub skew_max_ns: i64,
    /// Seconds the policing accounts may run ahead (ARINC 664 jitter), when switches police.
    pub policing_jitter_ns: Option<i64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PlanClass {
    pub name: String,
    pub priority: u32,
    /// The class field frames of this class carry (DSCP), what kernel filters match.
    pub dscp: u8,
}

#[derive(Clone, Debug, Serialize)]
pub struct PlanNode {
    pub name: String,
    pub end_system: bool,
    pub technological_latency_ns: i64,
    pub receive_latency_ns: i64,
    pub ports: Vec<usize>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PlanPort {
    pub id: usize,
    pub node: usize,
    /// `node:port`, as every output names it.
    pub label: String,
    /// The interface in the node's namespace (at most 15 characters).
    pub ifname: String,
    pub peer: usize,
    /// The port at the other end of the link (the peer's egress port).
    pub reverse: usize,
    pub plane: usize,
    pub rate_bps: f64,
    pub propagation_ns: i64,
    pub scheduler: String,
    pub discipline: String,
    pub shaper: Option<ShaperPlan>,
    pub buffer_bytes: Option<f64>,
    /// The largest frame that crosses the port (FCS included), bytes (a token bucket's least
    /// burst in kernel mode).
    pub max_frame_bytes: u32,
    /// How Linux's qdiscs realise the port, or why they cannot.
    pub kernel: Result<KernelPort, String>,
    /// The port's shaper when no qdisc of this kernel runs it (`export tc` then writes no script:
    /// half a configuration would not keep the model's bounds).
    pub shaper_without_qdisc: Option<ShaperWithoutQdisc>,
}

/// A shaper no qdisc of this kernel runs: what it is, and the qdisc the kernel lacks.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ShaperWithoutQdisc {
    pub what: &'static str,
    pub qdisc: &'static str,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct ShaperPlan {
    pub rate_bps: f64,
    pub burst_bits: f64,
}

/// A port as an HTB tree: one class at the link rate (with the shaper's rate and burst under
/// it when there is one), and under it one leaf per priority level (FIFO: one level).
#[derive(Clone, Debug, Serialize)]
pub struct KernelPort {
    /// Priority levels, highest first: the DSCP values each serves (the last level also takes
    /// frames without a class).
    pub levels: Vec<Vec<u8>>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PlanFlow {
    pub name: String,
    pub frame_id: u16,
    pub source: usize,
    pub class: Option<usize>,
    /// The class field (0 without a class).
    pub dscp: u8,
    pub kind: &'static str,
    /// BAG or period, ns (token buckets: none).
    pub period_ns: Option<i64>,
    pub offset_ns: i64,
    /// Whether even synchronised releases keep the offset (a time-triggered stream, bounded by
    /// its schedule: `Network::bound_offset`).
    #[serde(default)]
    pub keeps_offset: bool,
    pub lmin_bytes: u32,
    pub lmax_bytes: u32,
    /// Token bucket flows: burst (bits, on the wire) and rate (bit/s, on the wire).
    pub burst_bits: f64,
    pub rate_bps: f64,
    pub skew_max_ns: i64,
    pub planes: Vec<usize>,
    pub routes: Vec<PlanRoute>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PlanRoute {
    pub destination: usize,
    pub plane: usize,
    pub ports: Vec<usize>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Forwarding {
    pub switch: usize,
    pub frame_id: u16,
    pub out_ports: Vec<usize>,
}

fn ns(s: f64) -> i64 {
    (s * 1e9).round() as i64
}

/// Frame ids: a VL's own id; other flows the flow's index when free, else the next free id.
fn frame_ids(net: &Network) -> Result<Vec<u16>, String> {
    let mut used: BTreeSet<u16> = BTreeSet::new();
    let mut ids = vec![None; net.flows.len()];
    for (f, flow) in net.flows.iter().enumerate() {
        if let Traffic::VirtualLink { id: Some(id), .. } = &flow.traffic {
            let id =
                u16::try_from(*id).map_err(|_| format!("flows.{}: VL id {id} above 65535", flow.name))?;
            used.insert(id);
            ids[f] = Some(id);
        }
    }
    let mut next = 0u32;
    for (f, id) in ids.iter_mut().enumerate() {
        if id.is_none() {
            let mut candidate = (f as u32).max(next);
            while candidate <= u16::MAX as u32 && used.contains(&(candidate as u16)) {
                candidate += 1;
            }
            let candidate = u16::try_from(candidate).map_err(|_| "more than 65536 flows".to_string())?;
            used.insert(candidate);
            next = candidate as u32 + 1;
            *id = Some(candidate);
        }
    }
    Ok(ids.into_iter().map(|i| i.expect("assigned")).collect())
}

impl Plan {
    pub fn new(net: &Network) -> Result<Plan, String> {
        if net.kind != rtnetlab_core::model::NetworkKind::Ethernet {
            return Err("the testbed runs Ethernet networks, not server graphs".into());
        }
        if net.flows.is_empty() {
            return Err("flows: the network has no flow to run".into());
        }
        if net.classes.len() > 62 {
            return Err(format!("classes: at most 62 fit the class field (DSCP), got {}", net.classes.len()));
        }
        let ids = frame_ids(net)?;
        let classes: Vec<PlanClass> = net
            .classes
            .iter()
            .enumerate()
            .map(|(i, c)| PlanClass { name: c.name.clone(), priority: c.priority, dscp: i as u8 + 1 })
            .collect();
        let mut kernel_refusals = Vec::new();
        let mut kernel_warnings = Vec::new();
        let mut max_frame = vec![64u32; net.ports.len()];
        for flow in &net.flows {
            for r in &flow.routes {
                for &p in &r.ports {
                    let bytes = ((flow.max_frame_wire / 8.0).round() as u32).saturating_sub(20).max(64);
                    max_frame[p] = max_frame[p].max(bytes);
                }
            }
        }
        let ports: Vec<PlanPort> = net
            .ports
            .iter()
            .enumerate()
            .map(|(id, p)| {
                let label = net.port_label(id);
                let kernel =
                    kernel_port(net, &classes, &p.discipline).map_err(|e| format!("port {label}: {e}"));
                if let Err(e) = &kernel {
                    kernel_refusals.push(e.clone());
                }
                PlanPort {
                    id,
                    node: p.node,
                    label,
                    ifname: format!("rt{id}"),
                    peer: p.peer,
                    reverse: p.reverse,
                    plane: p.plane,
                    rate_bps: p.rate,
                    propagation_ns: ns(p.propagation_delay),
                    scheduler: p.scheduler_name.clone(),
                    discipline: p.discipline.kind_name().to_string(),
                    shaper: p.shaper.map(|s| ShaperPlan { rate_bps: s.rate, burst_bits: s.burst }),
                    buffer_bytes: p.buffer.map(|b| b / 8.0),
                    max_frame_bytes: max_frame[id],
                    kernel,
                    shaper_without_qdisc: shaper_without_qdisc(&p.discipline),
                }
            })
            .collect();
        for node in &net.nodes {
            if node.kind == NodeKind::Switch && node.switching == rtnetlab_core::model::Switching::CutThrough
            {
                kernel_warnings
                    .push(format!("switches.{}: cut-through is run as store-and-forward", node.name));
            }
        }
        if net.spec.defaults.policing_jitter.is_some() {
            kernel_refusals.push(
                "defaults.policing_jitter: kernel ports cannot police (no police action on this \
                 kernel): run with --switch user"
                    .into(),
            );
        }
        let nodes = net
            .nodes
            .iter()
            .map(|n| PlanNode {
                name: n.name.clone(),
                end_system: n.kind == NodeKind::EndSystem,
                technological_latency_ns: ns(n.technological_latency),
                receive_latency_ns: ns(n.receive_latency),
                ports: n.ports.clone(),
            })
            .collect();
        let links = net.links.iter().map(|l| (l.forward, l.backward)).collect();
        let skew_max_ns = if net.skew_max > 0.0 { ns(net.skew_max) } else { i64::MAX };
        let flows = net
            .flows
            .iter()
            .enumerate()
            .map(|(f, flow)| {
                let (lmin, lmax) = match &flow.traffic {
                    Traffic::VirtualLink { lmin, lmax, .. } => (lmin.bytes(), lmax.bytes()),
                    Traffic::Periodic { size, .. } => (size.bytes(), size.bytes()),
                    Traffic::TokenBucket { min_packet, max_packet, .. } => {
                        (min_packet.bytes(), max_packet.bytes())
                    }
                };
                let clamp = |b: f64| (b.round() as u32).clamp(64, 1518);
                PlanFlow {
                    name: flow.name.clone(),
                    frame_id: ids[f],
                    source: flow.source,
                    class: flow.class,
                    dscp: flow.class.map_or(0, |c| classes[c].dscp),
                    kind: flow.kind_name(),
                    period_ns: flow.period().map(ns),
                    offset_ns: match &flow.traffic {
                        Traffic::Periodic { offset, .. } => ns(offset.secs()),
                        _ => 0,
                    },
                    keeps_offset: net.bound_offset(f).is_some(),
                    lmin_bytes: clamp(lmin),
                    lmax_bytes: clamp(lmax),
                    burst_bits: flow.burst,
                    rate_bps: flow.rate,
                    skew_max_ns: match &flow.traffic {
                        Traffic::VirtualLink { skew_max: Some(s), .. } => ns(s.secs()),
                        _ => skew_max_ns,
                    },
                    planes: flow.planes.clone(),
                    routes: flow
                        .routes
                        .iter()
                        .map(|r| PlanRoute {
                            destination: r.destination,
                            plane: r.plane,
                            ports: r.ports.clone(),
                        })
                        .collect(),
                }
            })
            .collect::<Vec<_>>();
        let mut table: BTreeMap<(usize, u16), BTreeSet<usize>> = BTreeMap::new();
        for flow in &flows {
            for r in &flow.routes {
                for &p in &r.ports[1..] {
                    table.entry((net.ports[p].node, flow.frame_id)).or_default().insert(p);
                }
            }
        }
        let forwarding = table
            .into_iter()
            .map(|((switch, frame_id), out)| Forwarding {
                switch,
                frame_id,
                out_ports: out.into_iter().collect(),
            })
            .collect();
        Ok(Plan {
            network: net.spec.name.clone(),
            planes: net.planes.clone(),
            classes,
            nodes,
            ports,
            links,
            flows,
            forwarding,
            kernel_refusals,
            kernel_warnings,
            sending_skew_ns: ns(net.sending_skew),
            skew_max_ns,
            policing_jitter_ns: net.spec.defaults.policing_jitter.map(|j| ns(j.secs())),
        })
    }

    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }
}

/// A port's discipline as HTB leaves, when Linux can express it.
fn kernel_port(
    net: &Network,
    classes: &[PlanClass],
    discipline: &SchedulerConfig,
) -> Result<KernelPort, String> {
    let discipline =
        rtnetlab_core::schedulers::discipline(discipline).expect("a resolved discipline is no shaper");
    match discipline.kernel() {
        Kernel::OneQueue => Ok(KernelPort { levels: vec![Vec::new()] }),
        Kernel::PriorityLevels => {
            let mut prios: Vec<u32> = net.classes.iter().map(|c| c.priority).collect();
            prios.sort_unstable();
            prios.dedup();
            if prios.len() + 1 > HTB_LEVELS {
                return Err(format!(
                    "static priority with {} levels: HTB has {HTB_LEVELS} priorities (frames without a class \
                     take one): run with --switch user",
                    prios.len()
                ));
            }
            let mut levels: Vec<Vec<u8>> = vec![Vec::new(); prios.len() + 1];
            for c in classes {
                let level = prios.binary_search(&c.priority).expect("listed");
                levels[level].push(c.dscp);
            }
            Ok(KernelPort { levels })
        }
        Kernel::NoShaper { plan, qdisc, .. } => {
            Err(format!("{plan}: this kernel has no {qdisc}: run with --switch user"))
        }
        Kernel::Inexpressible(why) => Err(format!("{why}: run with --switch user")),
    }
}

/// The shaper of a port's discipline that no qdisc of this kernel runs, as an exported script's
/// refusal names it.
fn shaper_without_qdisc(discipline: &SchedulerConfig) -> Option<ShaperWithoutQdisc> {
    match rtnetlab_core::schedulers::discipline(discipline)?.kernel() {
        Kernel::NoShaper { script, qdisc, .. } => Some(ShaperWithoutQdisc { what: script, qdisc }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No Linux qdisc runs per-flow interleaved regulators: kernel mode refuses an ATS port in one
    /// line naming the shaper and the way out, as it does credit-based and time-aware ports.
    #[test]
    fn kernel_mode_refuses_ats_in_one_line() {
        let text = include_str!("../../../examples/tsn/ats_ring.yaml");
        let limits = rtnetlab_core::model::Limits::default();
        let (net, d) = rtnetlab_core::model::load_text(
            text,
            rtnetlab_core::model::parse::Format::Yaml,
            "ats_ring.yaml",
            &limits,
        );
        let net = net.unwrap_or_else(|| panic!("{:?}", d.0));
        let ats = net.ports.iter().find(|p| p.discipline.kind_name() == "ats").expect("a switch port");
        let Err(why) = kernel_port(&net, &[], &ats.discipline) else { panic!("refused") };
        assert_eq!(
            why,
            "asynchronous traffic shaping (802.1Qcr): this kernel has no per-flow interleaved regulator \
             qdisc: run with --switch user"
        );
        assert!(!why.contains('\n'));
    }
}
