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
//! it (at most k analyses per link).
//!
//! The network is validated once: admitted flows join and leave a validated network
//! ([`LiveNetwork`]), and a trial validates only its new flows (on the topology alone) before the
//! analysis; with `tfa`, only the ports the new flows affect are analysed again
//! ([`crate::analysis::network_bounds::incremental`]). `incremental = false` loads and
//! validates the whole description for every trial instead (the reference the tests compare
//! with, and the benchmark's "before").

use super::live::LiveNetwork;
use super::placement::{self, Cores, Place};
use super::vsn::{self, Infrastructure, Requests, Reservation};
use crate::analysis::{self, results::FlowBound};
use crate::model::{self, Network, NodeId, NodeKind};
use serde::Serialize;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

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
    /// CPU time the deciding thread spent on it (a measurement as well: on a loaded host the
    /// wall time also counts the other processes' turns).
    pub decision_cpu_ms: f64,
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
    /// The base network with every admitted flow, validated (trials add their flows and take
    /// them away again).
    live: RefCell<LiveNetwork>,
    /// The flows of `live` that are admitted (those after are a trial's).
    admitted_flows: usize,
    /// Trials on `live` (true) or on the whole description loaded again (false).
    pub incremental: bool,
}

/// The calling thread's CPU time, ms (CLOCK_THREAD_CPUTIME_ID; 0 where it is not available).
fn thread_cpu_ms() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes only into `t`, a valid timespec.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } != 0 {
        return 0.0;
    }
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 * 1e-6
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
        let method: analysis::Method = match infra.method.parse() {
            Ok(m) if analysis::Method::LISTED.contains(&m) => m,
            _ => {
                return Err(format!(
                    "method: one of {}, got '{}'",
                    analysis::METHODS.join(", "),
                    infra.method
                ))
            }
        };
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
        let request = analysis::Request { method, ..Default::default() };
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
        let mut live = LiveNetwork::new(base_net.clone(), &base);
        live.settle(&request).map_err(|e| format!("method: {e}"))?;
        let admitted_flows = live.len();
        let live = RefCell::new(live);
        Ok(Admission {
            admitted_flows,
            infra,
            base,
            base_net,
            live,
            incremental: true,
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
        if !self.incremental {
            let net = load(self.description(extra)).map_err(|e| ("network".to_string(), e))?;
            let report = analysis::run(&net, &self.request).map_err(|e| ("network".to_string(), e.into()))?;
            return self.judge(&net, &report.flows, extra.len(), jitter);
        }
        let mut live = self.live.borrow_mut();
        // A trial that passed stays in place until the next one (the decision keeps it).
        live.truncate(self.admitted_flows);
        let before = live.len();
        live.add(extra).map_err(|e| ("network".to_string(), e))?;
        let verdict = match live.trial(&self.request) {
            Ok(true) => self.judge(&live.net, live.rows(), extra.len(), jitter),
            Ok(false) => live
                .analyse(&self.request)
                .map_err(|e| ("network".to_string(), e))
                .and_then(|report| self.judge(&live.net, &report.flows, extra.len(), jitter)),
            Err(e) => Err(("network".to_string(), e)),
        };
        if verdict.is_err() {
            live.truncate(before);
        }
        verdict
    }

    /// Judges the analysis `rows` of `net`, whose last `new` flows are the trial's, against
    /// the deadlines and jitter limits.
    fn judge(
        &self,
        net: &Network,
        rows: &[FlowBound],
        new: usize,
        jitter: &[(String, f64)],
    ) -> Result<Vec<(f64, f64)>, (String, String)> {
        let limits: HashMap<&str, f64> = self
            .active
            .iter()
            .flat_map(|a| a.jitter.iter())
            .chain(jitter.iter())
            .map(|(n, j)| (n.as_str(), *j))
            .collect();
        let first_new = net.flows.len() - new;
        let mut new = vec![(0.0, 0.0); new];
        for row in rows {
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
        let mut gone = HashSet::new();
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
                gone.extend(a.flows.iter().filter_map(|f| f["name"].as_str().map(String::from)));
                released.push(a.name);
            } else {
                k += 1;
            }
        }
        if self.incremental && !gone.is_empty() {
            let live = self.live.get_mut();
            // A failure (the analysis refused) shows at the next trial, on the whole network.
            if live.remove(&gone).is_err() {
                let _ = live.settle(&self.request);
            }
            self.admitted_flows = live.len();
        }
        released
    }

    /// Decides on one request (already checked).
    pub fn decide(&mut self, r: &vsn::RequestSpec) -> Decision {
        let start = std::time::Instant::now();
        let cpu_start = thread_cpu_ms();
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
            decision_cpu_ms: 0.0,
            active: 0,
            accepted_so_far: 0,
            acceptance_ratio: 0.0,
        };
        let outcome = self.try_admit(r, &mut d);
        if self.incremental {
            // A rejected request's last trial that passed (a link by link search that failed
            // further on) is undone.
            let live = self.live.get_mut();
            live.truncate(self.admitted_flows);
        }
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
        d.decision_cpu_ms = thread_cpu_ms() - cpu_start;
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
        let places = placement::place(&self.cores, &res, &linked).map_err(|no| {
            let i = no.component;
            let head = format!(
                "component '{}' (utilisation {:.3}): no core with room",
                r.components[i].name,
                res[i].utilisation()
            );
            // The free capacity the component was offered: after this request's own components
            // placed before it, which is not what the cores had before the request.
            let reason = if no.placed.is_empty() {
                format!("{head} (largest free {:.3})", no.largest_free)
            } else {
                let others: Vec<String> = no
                    .placed
                    .iter()
                    .map(|&j| format!("'{}' ({:.3})", r.components[j].name, res[j].utilisation()))
                    .collect();
                format!(
                    "{head} once this request's {} took theirs (largest free then {:.3}, {:.3} before \
                     the request)",
                    others.join(", "),
                    no.largest_free,
                    self.cores.largest_free()
                )
            };
            ("cpu".to_string(), reason)
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
                "destinations": [{"node": node_name(*path.last().expect("a candidate path has nodes")), "path": path.iter().map(|&n| node_name(n)).collect::<Vec<_>>()}],
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
                .map(|&i| {
                    flow_of(
                        &r.links[i],
                        &candidates[i].as_ref().expect("remote links have candidates")[chosen[i]],
                    )
                })
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
                        let n = candidates[i].as_ref().expect("remote links have candidates").len();
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
        let flows = flows_for(&chosen, remote.len());
        if self.incremental {
            let live = self.live.get_mut();
            let names = flows.iter().map(|f| f["name"].as_str().unwrap_or_default());
            if !live.net.flows[self.admitted_flows..].iter().map(|f| f.name.as_str()).eq(names) {
                // The last trial was not these flows: join them now.
                live.truncate(self.admitted_flows);
                live.add(&flows).map_err(|e| ("network".to_string(), e))?;
                live.trial(&self.request).map_err(|e| ("network".to_string(), e))?;
            }
            live.commit();
            self.admitted_flows = live.len();
        }
        let mut a = Active {
            name: r.name.clone(),
            end: r.arrival.secs() + r.lifetime.secs(),
            places: Vec::new(),
            components: Vec::new(),
            flows,
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
    run_with(infra, reqs, true)
}

/// [`run`], the trials on the live network (`incremental`) or on the whole description.
pub fn run_with(
    infra: Infrastructure,
    reqs: &Requests,
    incremental: bool,
) -> Result<AdmissionReport, String> {
    reqs.check()?;
    let mut adm = Admission::new(infra)?;
    adm.incremental = incremental;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::results::AnalysisReport;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A leaf-spine data centre (`python/rtnetlab/cloud/experiment.py`'s, smaller links so that
    /// streams also meet `bandwidth`, `latency` and `jitter` rejections), carrying background
    /// flows of its own when `background` > 0.
    fn infrastructure(background: usize, rng: &mut ChaCha8Rng) -> Infrastructure {
        let (leaves, per_leaf, spines) = (3, 2, 2);
        let hosts: Vec<String> =
            (1..=leaves).flat_map(|l| (1..=per_leaf).map(move |h| format!("H{l}{h}"))).collect();
        let mut links: Vec<Value> = (1..=leaves)
            .flat_map(|l| {
                (1..=spines)
                    .map(move |s| json!({"from": format!("L{l}"), "to": format!("S{s}"), "rate": "200Mbps"}))
            })
            .collect();
        links.extend(hosts.iter().map(|h| json!({"from": h, "to": format!("L{}", &h[1..2])})));
        let flows: Vec<Value> = (0..background)
            .map(|i| {
                let a = &hosts[rng.gen_range(0..hosts.len())];
                let mut b = &hosts[rng.gen_range(0..hosts.len())];
                while b == a {
                    b = &hosts[rng.gen_range(0..hosts.len())];
                }
                json!({"name": format!("bg{i}"), "type": "token_bucket", "source": a, "destinations": [b],
                       "class": if i % 2 == 0 { "control" } else { "video" }, "rate": "1Mbps",
                       "burst": "1500B", "max_packet": "1500B", "min_packet": "64B"})
            })
            .collect();
        let network = json!({
            "name": "leaf-spine",
            "defaults": {"link_rate": "100Mbps", "technological_latency": "10us", "scheduler": "static_priority"},
            "classes": [{"name": "control", "priority": 0}, {"name": "video", "priority": 1}, {"name": "bulk", "priority": 2}],
            "end_systems": hosts.iter().map(|h| json!({"name": h})).collect::<Vec<_>>(),
            "switches": (1..=leaves).map(|l| json!({"name": format!("L{l}")}))
                .chain((1..=spines).map(|s| json!({"name": format!("S{s}")}))).collect::<Vec<_>>(),
            "links": links,
            "flows": flows,
        });
        serde_json::from_value(json!({
            "network": network,
            "hosts": hosts.iter().map(|h| json!({"name": h, "cores": 2})).collect::<Vec<_>>(),
            "compatible_classes": [["control", "video"], ["bulk"]],
        }))
        .unwrap()
    }

    /// `n` requests: Poisson arrivals, lifetimes of a few arrivals, chains of 2-4 components,
    /// links of 1-40 Mbps with latency limits of 0.1-2 ms.
    fn requests(n: usize, rng: &mut ChaCha8Rng) -> Requests {
        let mut t = 0.0;
        let classes = ["control", "video", "bulk"];
        let requests: Vec<Value> = (0..n)
            .map(|i| {
                t += -(1.0 - rng.gen::<f64>()).ln();
                let k = rng.gen_range(2..=4);
                let comps: Vec<Value> = (0..k)
                    .map(|j| json!({"name": format!("c{j}"), "utilisation": rng.gen_range(0.05..0.9)}))
                    .collect();
                let links: Vec<Value> = (0..k - 1)
                    .map(|j| {
                        let latency = rng.gen_range(100..2000);
                        json!({"name": format!("l{j}"), "from": format!("c{j}"), "to": format!("c{}", j + 1),
                               "bandwidth": format!("{}Mbps", rng.gen_range(1..40)), "burst": "3000B",
                               "latency": format!("{latency}us"), "jitter": format!("{}us", latency / 2),
                               "class": classes[rng.gen_range(0..3)]})
                    })
                    .collect();
                json!({"name": format!("vsn{i}"), "arrival": format!("{}us", (t * 1e6).round()),
                       "lifetime": format!("{}us", (rng.gen_range(1.0..8.0) * 1e6f64).round()),
                       "components": comps, "links": links})
            })
            .collect();
        serde_json::from_value(json!({ "requests": requests })).unwrap()
    }

    fn same_decision(a: &Decision, b: &Decision) -> bool {
        let strip = |d: &Decision| {
            let mut v = serde_json::to_value(d).unwrap();
            v["decision_ms"] = json!(0);
            v["decision_cpu_ms"] = json!(0);
            v
        };
        strip(a) == strip(b)
    }

    /// Incremental admission against the whole-description reference, on random streams: after
    /// every decision the live network's analysis equals, to the bit, that of the admitted state
    /// loaded from scratch, and both admissions took the same decisions.
    #[test]
    fn live_network_equals_a_fresh_analysis_after_every_decision() {
        let mut verdicts = HashMap::new();
        let (mut ports_analysed, mut ports_total, mut releases) = (0, 0, 0);
        for seed in 0..4u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let infra = infrastructure(if seed % 2 == 0 { 0 } else { 30 }, &mut rng);
            let reqs = requests(40, &mut rng);
            reqs.check().unwrap();
            let mut live = Admission::new(infra.clone()).unwrap();
            let mut whole = Admission::new(infra).unwrap();
            whole.incremental = false;
            for r in &reqs.requests {
                let a = live.decide(r);
                let b = whole.decide(r);
                releases += a.released.len();
                assert!(same_decision(&a, &b), "seed {seed}, {}: {a:?} != {b:?}", r.name);
                *verdicts.entry(a.constraint.clone().unwrap_or_else(|| "admitted".into())).or_insert(0) += 1;
                let fresh = load(live.admitted()).unwrap();
                let of = |report: AnalysisReport| serde_json::to_value(report).unwrap();
                let mut state = live.live.borrow_mut();
                assert_eq!(state.net.flows.len(), fresh.flows.len());
                // The ports' flow lists and feed-forward order kept in place are those built anew.
                assert_eq!(state.net.port_flows, fresh.port_flows, "seed {seed}, after {}", r.name);
                assert_eq!(
                    state.net.port_order().order,
                    fresh.port_order().order,
                    "seed {seed}, after {}",
                    r.name
                );
                assert!(state.same_tfa_state_as_fresh(), "seed {seed}, after {}", r.name);
                assert_eq!(
                    of(state.analyse(&live.request).unwrap()),
                    of(analysis::run(&fresh, &live.request).unwrap()),
                    "seed {seed}, after {}",
                    r.name
                );
                // A trial of 1-3 random flows on the admitted state: TFA again on the ports they
                // affect only, against the whole network analysed from scratch.
                let n = state.len();
                let trial: Vec<Value> = (0..rng.gen_range(1..=3))
                    .map(|k| {
                        let (a, b) = (rng.gen_range(1..=3), rng.gen_range(1..=3));
                        let class = ["control", "video", "bulk"][k % 3];
                        json!({"name": format!("trial{k}"), "type": "token_bucket", "source": format!("H{a}1"),
                               "destinations": [format!("H{}2", b)], "class": class,
                               "rate": format!("{}Mbps", rng.gen_range(1..30)), "burst": "3000B",
                               "max_packet": "1500B", "min_packet": "64B"})
                    })
                    .collect();
                state.add(&trial).unwrap();
                let incremental = of(state.analyse(&live.request).unwrap());
                let analysed = state.last_analysed_ports;
                assert_eq!(
                    incremental,
                    of(analysis::run(&state.net, &live.request).unwrap()),
                    "seed {seed}, {}",
                    r.name
                );
                ports_analysed += analysed;
                ports_total += state.net.ports.len();
                // Undone, the trial leaves the state exactly as it was: TFA's state is the fresh
                // one's to the bit, and so are the reports.
                state.truncate(n);
                assert!(state.same_tfa_state_as_fresh(), "seed {seed}, after undoing a trial on {}", r.name);
                assert_eq!(
                    of(state.analyse(&live.request).unwrap()),
                    of(analysis::run(&fresh, &live.request).unwrap()),
                    "seed {seed}, after undoing a trial on {}",
                    r.name
                );
            }
        }
        // The trials left some ports alone.
        assert!(ports_analysed < ports_total, "{ports_analysed} of {ports_total}");
        // The streams exercise admissions, releases and the network's rejections.
        assert!(releases > 0, "no release");
        for kind in ["admitted", "cpu", "latency"] {
            assert!(verdicts.get(kind).copied().unwrap_or(0) > 0, "no '{kind}' decision: {verdicts:?}");
        }
    }

    /// A flow named like one already in the network is refused, and the network is unchanged.
    #[test]
    fn live_network_refuses_a_duplicate_name_and_keeps_its_flows() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let infra = infrastructure(3, &mut rng);
        let net = load(infra.network.clone()).unwrap();
        let mut live = LiveNetwork::new(net, &infra.network);
        let dup = infra.network["flows"][1].clone();
        let err = live.add(&[dup]).unwrap_err();
        assert!(err.starts_with("flows[0].name: 'bg1' is already the name"), "{err}");
        assert_eq!(live.len(), 3);
        let mut bad = infra.network["flows"][0].clone();
        bad["name"] = json!("new");
        bad["class"] = json!("nosuch");
        assert!(live.add(&[bad]).unwrap_err().contains("class"));
        assert_eq!(live.net.flows.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["bg0", "bg1", "bg2"]);
    }
}
