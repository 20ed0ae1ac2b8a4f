//! `rtnetlab configure afdx`: BAG and MTU of every virtual link that lists the application
//! messages it carries, chosen on a whole network (seed 001D generalised from one switch port to
//! every egress port a VL crosses), written back into the description.
//!
//! * VLs with `messages` are configured; the others keep their BAG and Lmax and only load the
//!   ports (a single candidate each).
//! * Every egress port checks bandwidth (Eq. 2); the ARINC 664 jitter constraint (Eq. 3, in µs)
//!   applies at every port (`JitterAt::All`, the paper's switch port and the end systems'), at
//!   source end-system ports only, or nowhere.
//! * When some flow has a deadline, a configuration is accepted only if the analysis engine
//!   (`best`) bounds every deadline; the search goes on past the ones it rejects.
//! * A frame carries payload + 47 B of headers (Ethernet frame) and 67 B in all on the wire.

use super::afdx_bag_mtu::{
    self as conf, BagMtu, Infeasible, MessageFlow, MtuPerBag, Port, Problem, Search, BAG_COUNT,
};
use crate::model::{self, Diagnostics, NetworkSpec, NodeKind, Traffic};
use crate::units::{DataSize, Duration};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Ethernet frame bytes beyond the payload (headers, sequence number, FCS).
const FRAME_HEADERS: u32 = crate::constants::AFDX_FRAME_HEADERS_BYTES;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Objective {
    /// The first feasible configuration, least-bandwidth branches first (DFS_BandB corrected).
    #[default]
    FirstFeasible,
    /// The configuration that reserves the least bandwidth, exactly.
    MinBandwidth,
    /// The first feasible configuration in BAG order (1, 2, …, 128 ms), as Fig. 5's DFS_BandB
    /// loops, with its return logic corrected (I-001D-3): the paper's own choice.
    BagOrder,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JitterAt {
    #[default]
    All,
    Sources,
    None,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Request {
    pub objective: Objective,
    pub jitter_at: JitterAt,
    /// Check end-to-end deadlines with the analysis engine (when some flow has one).
    pub check_deadlines: bool,
}

/// The chosen BAG and MTU of one VL, with the candidates it had.
#[derive(Clone, Debug, Serialize)]
pub struct VlChoice {
    pub flow: String,
    pub configured: bool,
    pub bag_ms: u32,
    pub mtu_bytes: u32,
    pub lmax_bytes: u32,
    pub lmin_bytes: u32,
    pub reserved_bps: f64,
    /// Least MTU per feasible BAG: (bag_ms, mtu).
    pub candidates: Vec<(u32, u32)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PortCheck {
    pub port: String,
    pub reserved_bps: f64,
    pub rate_bps: u64,
    pub bandwidth_ok: bool,
    pub jitter_us: Option<f64>,
    pub jitter_limit_us: Option<u32>,
    pub jitter_ok: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub network: String,
    pub objective: Objective,
    pub jitter_at: JitterAt,
    pub deadlines_checked: bool,
    pub feasible: bool,
    /// Why no configuration exists (names the VL or port and the constraint).
    pub reason: Option<String>,
    pub reserved_bps: f64,
    pub vls: Vec<VlChoice>,
    pub ports: Vec<PortCheck>,
}

/// Configures a description given as JSON. The report says whether a configuration exists and,
/// when one does, the chosen BAG, MTU, `lmin` and `lmax` of every VL (the front writes them into
/// the user's own file). Errors are the model's diagnostics (one line each) or a problem the
/// configuration cannot start from.
pub fn configure(doc: Value, req: &Request) -> Result<Report, Vec<String>> {
    let mut doc = doc;
    provisional_values(&mut doc);
    let mut diags = Diagnostics::default();
    let net = model::load_value(doc, &mut diags);
    let Some(net) = net else {
        return Err(diags.errors().map(|d| format!("{}: {}", d.place, d.message)).collect());
    };

    // Candidates per VL (flow index → problem index).
    let mut vl_flows = Vec::new();
    let mut candidates: Vec<MtuPerBag> = Vec::new();
    let mut configured = Vec::new();
    for (f, flow) in net.flows.iter().enumerate() {
        let Traffic::VirtualLink { bag, lmax, messages, .. } = &flow.traffic else { continue };
        let mtus = if messages.is_empty() {
            let k = (bag.ms().log2().round() as usize).min(BAG_COUNT - 1);
            let mut one = [None; BAG_COUNT];
            one[k] = Some((lmax.bytes() as u32).saturating_sub(FRAME_HEADERS).max(1));
            one
        } else {
            let flows: Vec<MessageFlow> = messages
                .iter()
                .map(|m| MessageFlow {
                    payload_bytes: m.payload.bytes() as u32,
                    mtc_us: m.period.as_ns() as u64 / 1000,
                })
                .collect();
            conf::find_feasible_bag_mtu(&flows).map_err(|e| vec![format!("flows[{f}].messages: {e}")])?
        };
        vl_flows.push(f);
        candidates.push(mtus);
        configured.push(!messages.is_empty());
    }
    if !configured.iter().any(|&c| c) {
        return Err(vec![
            "flows: no virtual link lists `messages`; give each VL to configure the messages it carries \
             (payload, period)"
                .to_string(),
        ]);
    }

    // Ports crossed by at least one VL.
    let mut port_ids = Vec::new();
    let mut ports = Vec::new();
    let flows_per_port = net.flows_per_port();
    for (p, flows) in flows_per_port.iter().enumerate() {
        let vls: Vec<usize> = flows.iter().filter_map(|f| vl_flows.iter().position(|v| v == f)).collect();
        if vls.is_empty() {
            continue;
        }
        let port = Port::new(net.ports[p].rate as u64, vls);
        let source = net.nodes[net.ports[p].node].kind == NodeKind::EndSystem;
        let jitter = match req.jitter_at {
            JitterAt::All => true,
            JitterAt::Sources => source,
            JitterAt::None => false,
        };
        ports.push(if jitter { port } else { port.without_jitter() });
        port_ids.push(p);
    }
    let problem = Problem::new(candidates.clone(), ports).map_err(|e| vec![e.to_string()])?;

    let deadlines = req.check_deadlines && net.flows.iter().any(|f| f.deadline.is_some());
    let mut meets_deadlines = |choice: &[BagMtu]| -> bool {
        let Some(spec) = apply(&net.spec, &vl_flows, choice) else { return false };
        let (Some(n), _) = model::validate_spec(spec) else { return false };
        match crate::analysis::run(
            &n,
            &crate::analysis::Request { method: crate::analysis::Method::Best, ..Default::default() },
        ) {
            Ok(r) => r.flows.iter().all(|f| f.status == crate::analysis::results::Status::Ok),
            Err(_) => false,
        }
    };
    let accept: conf::Accept = if deadlines { Some(&mut meets_deadlines) } else { None };
    let outcome = match req.objective {
        Objective::FirstFeasible => conf::branch_and_bound(&problem, Search::default(), accept),
        Objective::MinBandwidth => conf::min_bandwidth(&problem, accept),
        Objective::BagOrder => conf::branch_and_bound(&problem, Search::FIG5, accept),
    };

    let vl_name = |k: usize| net.flows[vl_flows[k]].name.clone();
    let port_name = |k: usize| net.port_label(port_ids[k]);
    let mut report = Report {
        network: net.spec.name.clone(),
        objective: req.objective,
        jitter_at: req.jitter_at,
        deadlines_checked: deadlines,
        feasible: false,
        reason: None,
        reserved_bps: 0.0,
        vls: Vec::new(),
        ports: Vec::new(),
    };
    let config = match outcome {
        Ok(c) => c,
        Err(why) => {
            report.reason = Some(match why {
                Infeasible::NoCandidate { vl } => format!(
                    "{}: no BAG of 1..128 ms with an MTU of at most 1471 B carries its messages (Eq. 1)",
                    vl_name(vl)
                ),
                Infeasible::Bandwidth { port, least_bps, rate_bps } => format!(
                    "{}: bandwidth: even the least-bandwidth choice reserves {least_bps:.0} bit/s > {rate_bps} \
                     bit/s",
                    port_name(port)
                ),
                Infeasible::Jitter { port, least_jitter_us, limit_us } => format!(
                    "{}: jitter: even the smallest MTUs give {least_jitter_us:.1} us > {limit_us} us",
                    port_name(port)
                ),
                Infeasible::PortConflict { port } => format!(
                    "{}: bandwidth and jitter each hold for some choice but never together",
                    port_name(port)
                ),
                other => other.to_string(),
            });
            return Ok(report);
        }
    };
    report.feasible = true;
    report.reserved_bps = config.reserved_bps;
    for (k, c) in config.choice.iter().enumerate() {
        let (lmin, lmax) = frame_sizes(&net.flows[vl_flows[k]].traffic, c.mtu);
        report.vls.push(VlChoice {
            flow: vl_name(k),
            configured: configured[k],
            bag_ms: c.bag_ms,
            mtu_bytes: c.mtu,
            lmax_bytes: lmax,
            lmin_bytes: lmin,
            reserved_bps: (c.mtu + 67) as f64 * 8.0 * 1000.0 / c.bag_ms as f64,
            candidates: conf::candidate_pairs(&candidates[k]).map(|p| (p.bag_ms, p.mtu)).collect(),
        });
    }
    for load in &config.ports {
        report.ports.push(PortCheck {
            port: port_name(load.port),
            reserved_bps: load.reserved_bps,
            rate_bps: load.rate_bps,
            bandwidth_ok: load.bandwidth_ok,
            jitter_us: load.jitter.map(|j| j.jitter_us),
            jitter_limit_us: load.jitter.map(|j| j.limit_us),
            jitter_ok: load.jitter_ok,
        });
    }
    Ok(report)
}

/// Ethernet frame sizes of a VL whose messages are cut into frames of at most `mtu` payload
/// bytes: the largest frame carries min(mtu, largest payload), the smallest the shortest last
/// fragment; both at least the 64-byte Ethernet minimum.
fn frame_sizes(traffic: &Traffic, mtu: u32) -> (u32, u32) {
    let Traffic::VirtualLink { lmin, lmax, messages, .. } = traffic else { unreachable!("VLs only") };
    if messages.is_empty() {
        return (lmin.bytes() as u32, lmax.bytes() as u32);
    }
    let payloads: Vec<u32> = messages.iter().map(|m| m.payload.bytes() as u32).collect();
    let largest = payloads.iter().map(|&l| l.min(mtu)).max().unwrap_or(mtu);
    let smallest = payloads.iter().map(|&l| l - (l.div_ceil(mtu) - 1) * mtu).min().unwrap_or(mtu);
    let shortest = crate::constants::ETHERNET_MIN_FRAME_BYTES;
    ((smallest + FRAME_HEADERS).max(shortest), (largest + FRAME_HEADERS).max(shortest))
}

/// The description with `choice` applied to the VLs (`vl_flows[k]` is VL k's flow index).
fn apply(spec: &NetworkSpec, vl_flows: &[usize], choice: &[BagMtu]) -> Option<NetworkSpec> {
    let mut spec = spec.clone();
    for (k, c) in choice.iter().enumerate() {
        let flow = spec.flows.get_mut(vl_flows[k])?;
        let (lmin_b, lmax_b) = frame_sizes(&flow.traffic, c.mtu);
        if let Traffic::VirtualLink { bag, lmin, lmax, messages, .. } = &mut flow.traffic {
            if messages.is_empty() {
                continue;
            }
            *bag = Duration::from_ms(c.bag_ms as f64);
            *lmin = DataSize::from_bytes(lmin_b as f64);
            *lmax = DataSize::from_bytes(lmax_b as f64);
        }
    }
    Some(spec)
}

/// Fills `bag`, `lmin` and `lmax` of VLs that list `messages` but not yet those keys, so that
/// the topology and routes can be validated before the values are chosen.
fn provisional_values(doc: &mut Value) {
    let Some(flows) = doc.get_mut("flows").and_then(Value::as_array_mut) else { return };
    for flow in flows.iter_mut().filter_map(Value::as_object_mut) {
        let is_vl = flow.get("type").and_then(Value::as_str) == Some("virtual_link");
        let has_messages = flow.get("messages").and_then(Value::as_array).is_some_and(|a| !a.is_empty());
        if !is_vl || !has_messages {
            continue;
        }
        for (key, value) in [("bag", "128ms"), ("lmin", "64B"), ("lmax", "1518B")] {
            flow.entry(key).or_insert_with(|| Value::String(value.into()));
        }
    }
}
