//! Online admission of virtual service networks (seed 001F), in arrival order.
//!
//! For each request, after releasing the VSNs whose lifetime ended: place the components
//! ([`placement::place`], partitioned EDF: every core's Σ Q/T ≤ 1), map each virtual link whose
//! ends are on different hosts onto one of its k shortest paths that crosses only link
//! directions carrying compatible classes, and analyse the network with every admitted flow plus
//! the new ones (the infrastructure's method, TFA by default). The request is admitted only if
//! every flow with a deadline (each virtual link's latency is its flow's deadline) is bounded
//! within it and every virtual link's jitter bound is within its own limit; otherwise it is
//! rejected with the constraint that failed (`cpu`, `path`, `bandwidth`, `latency`, `jitter`).
//!
//! Path choice: all links on their first candidate path, one analysis; if that fails, link by
//! link in the request's order, each on the first candidate that passes with the links before
//! it (at most k analyses per link). Every analysis re-analyses the whole network: the engine's
//! analyses are whole-network passes; per-decision times are reported (docs/CLOUD.md).

use super::placement::{self, Cores, Place};
use super::vsn::{self, Infrastructure, Requests, Reservation};
use crate::analysis;
use crate::model::{self, Network, NodeId, NodeKind};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::HashMap;

#[derive(Clone, Debug, Serialize)]
pub struct ComponentPlace {
    pub component: String,
    pub host: String,
    pub core: usize,
    pub runtime_ns: i64,
    pub period_ns: i64,
}

#[derive(Clone, Debug, Serialize)]
pub struct LinkPath {
    pub link: String,
    /// The flow's name in the admitted description; absent for a link inside one host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    /// Nodes from source host to destination host; empty inside one host.
    pub path: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter_us: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Decision {
    pub request: String,
    pub time_s: f64,
    pub accepted: bool,
    /// The constraint that failed: cpu, path, bandwidth, latency or jitter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constraint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub placement: Vec<ComponentPlace>,
    pub links: Vec<LinkPath>,
    /// VSNs whose lifetime ended before this decision.
    pub released: Vec<String>,
    pub analyses: usize,
    /// Wall-clock time of the decision (a measurement, not part of the result's identity).
    pub decision_ms: f64,
    pub active: usize,
    pub accepted_so_far: usize,
    pub acceptance_ratio: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct DeadlineParams {
    pub vsn: String,
    pub component: String,
    pub core: usize,
    pub runtime_ns: i64,
    pub deadline_ns: i64,
    pub period_ns: i64,
}

#[derive(Clone, Debug, Serialize)]
pub struct HostParams {
    pub host: String,
    pub cores: u32,
    pub utilisation: Vec<f64>,
    pub components: Vec<DeadlineParams>,
}

#[derive(Clone, Debug, Serialize)]
pub struct AdmissionReport {
    pub accepted: usize,
    pub rejected: usize,
    pub acceptance_ratio: f64,
    pub rejected_by: std::collections::BTreeMap<String, usize>,
    pub decisions: Vec<Decision>,
    /// The admitted state after the last decision: the infrastructure's description with every
    /// active VSN's flows (each virtual link's latency as its `deadline`).
    pub admitted: Value,
    pub sched_deadline: Vec<HostParams>,
}

struct Active {
    name: String,
    end: f64,
    places: Vec<(Place, f64)>,
    components: Vec<ComponentPlace>,
    flows: Vec<Value>,
    /// (directed link as (from node, to node), class) per flow.
    class_use: Vec<((NodeId, NodeId), String)>,
    /// flow name → jitter limit (µs).
    jitter: Vec<(String, f64)>,
}

/// The state of the admission: the infrastructure, resolved once, and what is active.
pub struct Admission {
    infra: Infrastructure,
    base: Value,
    base_net: Network,
    hosts: Vec<NodeId>,
    cores: Cores,
    active: Vec<Active>,
    class_use: HashMap<(NodeId, NodeId), HashMap<String, usize>>,
    group_of: HashMap<String, usize>,
    request: analysis::Request,
}

fn load(doc: Value) -> Result<Network, String> {
    let mut diags = model::Diagnostics::default();
    match model::load_value(doc, &mut diags) {
        Some(n) => Ok(n),
        None => Err(diags.errors().next().map(|d| d.to_string()).unwrap_or_else(|| "not valid".into())),
    }
}

impl Admission {
    /// Resolves the infrastructure; the error names the place and the rule.
    pub fn new(infra: Infrastructure) -> Result<Admission, String> {
        if !infra.network.is_object() {
            return Err("network: a network description (a mapping)".into());
        }
        let base_net = load(infra.network.clone()).map_err(|e| format!("network: {e}"))?;
        if base_net.planes.len() != 1 {
            return Err("network: one plane only (virtual links are mapped on single paths)".into());
        }
        if infra.paths == 0 || infra.paths > 100 {
            return Err(format!("paths: between 1 and 100, got {}", infra.paths));
        }
        if !analysis::METHODS.contains(&infra.method.as_str()) {
            return Err(format!("method: one of {}, got '{}'", analysis::METHODS.join(", "), infra.method));
        }
        if infra.hosts.is_empty() {
            return Err("hosts: at least one host".into());
        }
        let mut hosts = Vec::new();
        for (i, h) in infra.hosts.iter().enumerate() {
            let n = base_net
                .nodes
                .iter()
                .position(|n| n.name == h.name && n.kind == NodeKind::EndSystem)
                .ok_or_else(|| format!("hosts[{i}].name: no end system named '{}' in the network", h.name))?;
            if hosts.contains(&n) {
                return Err(format!("hosts[{i}].name: '{}' is given twice", h.name));
            }
            if h.cores == 0 || h.cores > 4096 {
                return Err(format!("hosts[{i}].cores: between 1 and 4096, got {}", h.cores));
            }
            hosts.push(n);
        }
        let mut group_of = HashMap::new();
        if let Some(groups) = &infra.compatible_classes {
            for (g, classes) in groups.iter().enumerate() {
                for (j, c) in classes.iter().enumerate() {
                    if !base_net.classes.iter().any(|k| &k.name == c) {
                        return Err(format!(
                            "compatible_classes[{g}][{j}]: no class named '{c}' in the network"
                        ));
                    }
                    if group_of.insert(c.clone(), g).is_some() {
                        return Err(format!("compatible_classes[{g}][{j}]: '{c}' is in two groups"));
                    }
                }
            }
        }
        let request = analysis::Request { method: infra.method.clone(), grouping: false, blind: false };
        // The infrastructure's own flows must meet their deadlines before any VSN comes.
        let report = analysis::run(&base_net, &request).map_err(|e| format!("method: {e}"))?;
        if let Some(row) = report.flows.iter().find(|r| r.status != analysis::results::Status::Ok) {
            return Err(format!(
                "network: flow '{}' misses its deadline before any VSN is admitted",
                base_net.flows[row.flow].name
            ));
        }
        let mut class_use: HashMap<(NodeId, NodeId), HashMap<String, usize>> = HashMap::new();
        for f in &base_net.flows {
            let class = f.class.map(|c| base_net.classes[c].name.clone()).unwrap_or_default();
            for r in &f.routes {
                for &p in &r.ports {
                    let key = (base_net.ports[p].node, base_net.ports[p].peer);
                    *class_use.entry(key).or_default().entry(class.clone()).or_default() += 1;
                }
            }
        }
        let cores = Cores::new(&infra.hosts.iter().map(|h| h.cores).collect::<Vec<_>>());
        let mut base = infra.network.clone();
        if base.get("flows").is_none() {
            base["flows"] = json!([]);
        }
        Ok(Admission {
            infra,
            base,
            base_net,
            hosts,
            cores,
            active: Vec::new(),
            class_use,
            group_of,
            request,
        })
    }

    fn compatible(&self, on: &HashMap<String, usize>, class: &str) -> bool {
        let g = self.group_of.get(class);
        on.iter().filter(|(_, n)| **n > 0).all(|(c, _)| match (g, self.group_of.get(c)) {
            _ if c == class => true,
            (Some(a), Some(b)) => a == b,
            // A class in no group mixes with any class, when groups are given only with its own.
            (None, None) => true,
            _ => self.infra.compatible_classes.is_none(),
        })
    }

    fn description(&self, extra: &[Value]) -> Value {
        let mut doc = self.base.clone();
        let flows = doc["flows"].as_array_mut().expect("flows is a list");
        for a in &self.active {
            flows.extend(a.flows.iter().cloned());
        }
        flows.extend(extra.iter().cloned());
        doc
    }

    /// Analyses the network with the active flows and `extra`; Ok((delay, jitter) per extra
    /// flow, µs) or Err((constraint, reason)).
    fn check(&self, extra: &[Value], jitter: &[(String, f64)]) -> Result<Vec<(f64, f64)>, (String, String)> {
        let net = load(self.description(extra)).map_err(|e| ("network".to_string(), e))?;
        let report = analysis::run(&net, &self.request).map_err(|e| ("network".to_string(), e))?;
        let limits: HashMap<&str, f64> = self
            .active
            .iter()
            .flat_map(|a| a.jitter.iter())
            .chain(jitter.iter())
            .map(|(n, j)| (n.as_str(), *j))
            .collect();
        let mut new = vec![(0.0, 0.0); extra.len()];
        let first_new = net.flows.len() - extra.len();
        for row in report.flows.iter() {
            let name = &net.flows[row.flow].name;
            let whose = if row.flow >= first_new { "new" } else { "admitted" };
            match row.status {
                analysis::results::Status::Unbounded => {
                    let why = row.reason.clone().unwrap_or_else(|| "no finite bound".into());
                    return Err(("bandwidth".into(), format!("{whose} flow '{name}': unbounded ({why})")));
                }
                analysis::results::Status::Miss => {
                    return Err((
                        "latency".into(),
                        format!(
                            "{whose} flow '{name}': delay bound {:.1} us > latency {:.1} us",
                            row.delay_us,
                            row.deadline_us.unwrap_or(f64::NAN)
                        ),
                    ));
                }
                analysis::results::Status::Ok => {}
            }
            if let Some(limit) = limits.get(name.as_str()) {
                if row.jitter_us > limit * (1.0 + 1e-12) {
                    return Err((
                        "jitter".into(),
                        format!(
                            "{whose} flow '{name}': jitter bound {:.1} us > limit {:.1} us",
                            row.jitter_us, limit
                        ),
                    ));
                }
            }
            if row.flow >= first_new {
                new[row.flow - first_new] = (row.delay_us, row.jitter_us);
            }
        }
        Ok(new)
    }

    fn release_until(&mut self, t: f64) -> Vec<String> {
        let mut released = Vec::new();
        let mut k = 0;
        while k < self.active.len() {
            if self.active[k].end <= t {
                let a = self.active.remove(k);
                for (p, u) in &a.places {
                    self.cores.remove(*p, *u);
                }
                for (key, class) in &a.class_use {
                    if let Some(n) = self.class_use.get_mut(key).and_then(|m| m.get_mut(class)) {
                        *n -= 1;
                    }
                }
                released.push(a.name);
            } else {
                k += 1;
            }
        }
        released
    }

    /// Decides on one request (already checked).
    pub fn decide(&mut self, r: &vsn::RequestSpec) -> Decision {
        let start = std::time::Instant::now();
        let time_s = r.arrival.secs();
        let released = self.release_until(time_s);
        let mut d = Decision {
            request: r.name.clone(),
            time_s,
            accepted: false,
            constraint: None,
            reason: None,
            placement: Vec::new(),
            links: Vec::new(),
            released,
            analyses: 0,
            decision_ms: 0.0,
            active: 0,
            accepted_so_far: 0,
            acceptance_ratio: 0.0,
        };
        let outcome = self.try_admit(r, &mut d);
        if let Err((constraint, reason)) = outcome {
            d.constraint = Some(constraint);
            d.reason = Some(reason);
            d.placement.clear();
            d.links.clear();
        } else {
            d.accepted = true;
        }
        d.active = self.active.len();
        d.decision_ms = start.elapsed().as_secs_f64() * 1e3;
        d
    }

    fn try_admit(&mut self, r: &vsn::RequestSpec, d: &mut Decision) -> Result<(), (String, String)> {
        let res: Vec<Reservation> = r
            .components
            .iter()
            .map(|c| vsn::reservation(c, "component").expect("checked requests"))
            .collect();
        let index: HashMap<&str, usize> =
            r.components.iter().enumerate().map(|(i, c)| (c.name.as_str(), i)).collect();
        let mut linked = vec![Vec::new(); res.len()];
        for l in &r.links {
            let (a, b) = (index[l.from.as_str()], index[l.to.as_str()]);
            linked[a].push(b);
            linked[b].push(a);
        }
        let places = placement::place(&self.cores, &res, &linked).map_err(|i| {
            (
                "cpu".to_string(),
                format!(
                    "component '{}' (utilisation {:.3}): no core with room (largest free {:.3})",
                    r.components[i].name,
                    res[i].utilisation(),
                    self.cores.largest_free()
                ),
            )
        })?;
        // Candidate paths per remote link, among those whose every link direction carries
        // only compatible classes.
        let node_name = |n: NodeId| self.base_net.nodes[n].name.clone();
        let mut candidates: Vec<Option<Vec<Vec<NodeId>>>> = Vec::new();
        for l in &r.links {
            let (a, b) =
                (self.hosts[places[index[l.from.as_str()]].0], self.hosts[places[index[l.to.as_str()]].0]);
            if a == b {
                candidates.push(None);
                continue;
            }
            let class = l.class.clone().unwrap_or_default();
            let all = placement::k_shortest_paths(&self.base_net, a, b, self.infra.paths);
            let ok: Vec<Vec<NodeId>> = all
                .into_iter()
                .filter(|p| {
                    p.windows(2)
                        .all(|w| self.class_use.get(&(w[0], w[1])).is_none_or(|m| self.compatible(m, &class)))
                })
                .collect();
            if ok.is_empty() {
                return Err((
                    "path".into(),
                    format!(
                        "link '{}': no path from {} to {} of the {} shortest crosses only classes compatible with '{}'",
                        l.name,
                        node_name(a),
                        node_name(b),
                        self.infra.paths,
                        class
                    ),
                ));
            }
            candidates.push(Some(ok));
        }
        let flow_of = |l: &vsn::VirtualLinkSpec, path: &[NodeId]| -> Value {
            let burst = l.burst.unwrap_or(l.max_packet);
            let mut f = json!({
                "name": format!("{}.{}", r.name, l.name),
                "type": "token_bucket",
                "source": node_name(path[0]),
                "destinations": [{"node": node_name(*path.last().unwrap()), "path": path.iter().map(|&n| node_name(n)).collect::<Vec<_>>()}],
                "deadline": l.latency.to_string(),
                "rate": l.bandwidth.to_string(),
                "burst": burst.to_string(),
                "min_packet": l.min_packet.to_string(),
                "max_packet": l.max_packet.to_string(),
            });
            if let Some(c) = &l.class {
                f["class"] = json!(c);
            }
            f
        };
        let jitter: Vec<(String, f64)> = r
            .links
            .iter()
            .filter_map(|l| l.jitter.map(|j| (format!("{}.{}", r.name, l.name), j.us())))
            .collect();
        let remote: Vec<usize> = (0..r.links.len()).filter(|&i| candidates[i].is_some()).collect();
        let mut chosen: Vec<usize> = vec![0; r.links.len()];
        let flows_for = |chosen: &[usize], upto: usize| -> Vec<Value> {
            remote
                .iter()
                .take(upto)
                .map(|&i| flow_of(&r.links[i], &candidates[i].as_ref().unwrap()[chosen[i]]))
                .collect()
        };
        let mut bounds = Vec::new();
        if !remote.is_empty() {
            d.analyses += 1;
            match self.check(&flows_for(&chosen, remote.len()), &jitter) {
                Ok(b) => bounds = b,
                Err(first_failure) => {
                    // Link by link, the first candidate that passes with the links before it.
                    for (k, &i) in remote.iter().enumerate() {
                        let n = candidates[i].as_ref().unwrap().len();
                        let mut last = first_failure.clone();
                        let mut found = false;
                        for c in 0..n {
                            chosen[i] = c;
                            d.analyses += 1;
                            match self.check(&flows_for(&chosen, k + 1), &jitter) {
                                Ok(b) => {
                                    bounds = b;
                                    found = true;
                                    break;
                                }
                                Err(e) => last = e,
                            }
                        }
                        if !found {
                            return Err(last);
                        }
                    }
                }
            }
        }
        // Admitted: record the state.
        let mut a = Active {
            name: r.name.clone(),
            end: r.arrival.secs() + r.lifetime.secs(),
            places: Vec::new(),
            components: Vec::new(),
            flows: flows_for(&chosen, remote.len()),
            class_use: Vec::new(),
            jitter,
        };
        for (i, (p, c)) in places.iter().zip(&r.components).enumerate() {
            self.cores.add(*p, res[i].utilisation());
            a.places.push((*p, res[i].utilisation()));
            let cp = ComponentPlace {
                component: c.name.clone(),
                host: self.infra.hosts[p.0].name.clone(),
                core: p.1,
                runtime_ns: res[i].runtime_ns,
                period_ns: res[i].period_ns,
            };
            a.components.push(cp.clone());
            d.placement.push(cp);
        }
        let mut k = 0;
        for (i, l) in r.links.iter().enumerate() {
            match &candidates[i] {
                None => d.links.push(LinkPath {
                    link: l.name.clone(),
                    flow: None,
                    path: Vec::new(),
                    delay_us: None,
                    jitter_us: None,
                }),
                Some(c) => {
                    let path = &c[chosen[i]];
                    let class = l.class.clone().unwrap_or_default();
                    for w in path.windows(2) {
                        *self.class_use.entry((w[0], w[1])).or_default().entry(class.clone()).or_default() +=
                            1;
                        a.class_use.push(((w[0], w[1]), class.clone()));
                    }
                    d.links.push(LinkPath {
                        link: l.name.clone(),
                        flow: Some(format!("{}.{}", r.name, l.name)),
                        path: path.iter().map(|&n| node_name(n)).collect(),
                        delay_us: Some(bounds[k].0),
                        jitter_us: Some(bounds[k].1),
                    });
                    k += 1;
                }
            }
        }
        self.active.push(a);
        Ok(())
    }

    /// The admitted state as a description.
    pub fn admitted(&self) -> Value {
        self.description(&[])
    }

    /// Per host, the SCHED_DEADLINE parameters of the active components (deadline = period).
    pub fn sched_deadline(&self) -> Vec<HostParams> {
        self.infra
            .hosts
            .iter()
            .enumerate()
            .map(|(h, spec)| HostParams {
                host: spec.name.clone(),
                cores: spec.cores,
                utilisation: self.cores.used[h].clone(),
                components: self
                    .active
                    .iter()
                    .flat_map(|a| a.components.iter().map(move |c| (a, c)))
                    .filter(|(_, c)| c.host == spec.name)
                    .map(|(a, c)| DeadlineParams {
                        vsn: a.name.clone(),
                        component: c.component.clone(),
                        core: c.core,
                        runtime_ns: c.runtime_ns,
                        deadline_ns: c.period_ns,
                        period_ns: c.period_ns,
                    })
                    .collect(),
            })
            .collect()
    }
}

/// Checks the classes the requests name against the network's.
fn check_classes(adm: &Admission, reqs: &Requests) -> Result<(), String> {
    for (i, r) in reqs.requests.iter().enumerate() {
        for (j, l) in r.links.iter().enumerate() {
            if let Some(c) = &l.class {
                if !adm.base_net.classes.iter().any(|k| &k.name == c) {
                    return Err(format!(
                        "requests[{i}].links[{j}].class: no class named '{c}' in the network"
                    ));
                }
            }
            if l.class.is_none() && !adm.base_net.classes.is_empty() {
                return Err(format!("requests[{i}].links[{j}].class: the network has classes; name one"));
            }
        }
    }
    Ok(())
}

/// Runs the whole stream: requests in arrival order (ties in the file's order).
pub fn run(infra: Infrastructure, reqs: &Requests) -> Result<AdmissionReport, String> {
    reqs.check()?;
    let mut adm = Admission::new(infra)?;
    check_classes(&adm, reqs)?;
    let mut order: Vec<usize> = (0..reqs.requests.len()).collect();
    order.sort_by(|&a, &b| reqs.requests[a].arrival.0.total_cmp(&reqs.requests[b].arrival.0));
    let mut decisions = Vec::new();
    let (mut accepted, mut rejected) = (0, 0);
    let mut rejected_by = std::collections::BTreeMap::new();
    for i in order {
        let mut d = adm.decide(&reqs.requests[i]);
        if d.accepted {
            accepted += 1;
        } else {
            rejected += 1;
            *rejected_by.entry(d.constraint.clone().unwrap_or_default()).or_insert(0) += 1;
        }
        d.accepted_so_far = accepted;
        d.acceptance_ratio = accepted as f64 / (accepted + rejected) as f64;
        decisions.push(d);
    }
    Ok(AdmissionReport {
        accepted,
        rejected,
        acceptance_ratio: if accepted + rejected > 0 {
            accepted as f64 / (accepted + rejected) as f64
        } else {
            0.0
        },
        rejected_by,
        decisions,
        admitted: adm.admitted(),
        sched_deadline: adm.sched_deadline(),
    })
}
