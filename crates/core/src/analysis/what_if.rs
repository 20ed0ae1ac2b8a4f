//! What-if analysis: a validated network whose flows' traffic, ports' rates and schedulers'
//! parameters are edited one at a time and analysed again incrementally, each edit validated on
//! what it changes only and undone exactly.
//!
//! The network keeps its flows, their routes and classes: an edit changes a flow's traffic (its
//! BAG, frame sizes, jitter, deadline...), a link's rate or a named scheduler's parameters. A
//! flow's edit is validated as the admission validates a flow that joins
//! ([`crate::cloud::live`]): the edited flow alone on the topology (the same ids), then the rules
//! between flows on the result; a port's edit validates the topology alone, which gives the
//! ports their rate and scheduler, then the rules between flows. TFA's state follows in place
//! ([`TfaCache::update`]): only the ports whose inputs changed are analysed again. Only the
//! method `tfa` (no grouping, FIFO multiplexing) is kept so; `best`, the analysis' default,
//! combines analyses that have no incremental form.

use super::network_bounds::incremental::{TfaCache, Trial};
use super::results::AnalysisReport;
use crate::model::{self, validate, Diagnostics, EgressPort, Network, PortId};
use serde_json::{Map, Value};

/// The keys of a flow an edit may change: its traffic and deadline, not its route, class,
/// name or type (the layout the analysis keeps stays the network's).
pub const FLOW_KEYS: &[&str] = &[
    "bag",
    "lmin",
    "lmax",
    "release_jitter",
    "skew_max",
    "deadline",
    "period",
    "size",
    "min_size",
    "offset",
    "jitter",
    "burst",
    "rate",
    "min_packet",
    "max_packet",
];

/// Sections of a description that a network's ports do not depend on, left out of its topology.
const NOT_TOPOLOGY: &[&str] = &["flows", "chains"];

/// A network under what-if edits, with TFA's state of it.
pub struct WhatIf {
    /// The description as the edits leave it (the format's keys).
    doc: Value,
    net: Network,
    cache: TfaCache,
    /// How to take back each edit still in force, the last one last.
    done: Vec<Done>,
    warnings: Warnings,
    /// Ports analysed by the last edit (all of them when it took the whole pass).
    pub last_analysed_ports: usize,
}

/// The validation warnings of the network as the edits leave it, kept by the part of the
/// validation that gives them, so that an edit replaces exactly those it can make obsolete (a
/// DRR quantum raised above a flow's frame takes its warning away).
#[derive(Clone, Default)]
struct Warnings {
    /// The topology validated alone (links, schedulers): replaced by an edit of the ports.
    topology: Vec<String>,
    /// Each flow validated alone on the topology, by index: replaced by an edit of that flow.
    flows: Vec<Vec<String>>,
    /// The rules between flows (a scheduler's share against a class's frames): replaced by
    /// every edit.
    together: Vec<String>,
    /// The rest of the first validation, on what no edit changes (routes: their ties, a
    /// cyclic port dependency).
    kept: Vec<String>,
}

impl Warnings {
    /// `first`, the whole validation's warnings, sorted by part: those the topology and the
    /// rules between flows give now, those placed at a flow (`flows[i]...`), the rest.
    fn sorted(first: &[String], topology: Vec<String>, together: Vec<String>, flows: usize) -> Warnings {
        let mut w = Warnings { topology, flows: vec![Vec::new(); flows], together, kept: Vec::new() };
        for line in first {
            if w.topology.contains(line) || w.together.contains(line) {
                continue;
            }
            match flow_of(line).filter(|&i| i < flows) {
                Some(i) => w.flows[i].push(line.clone()),
                None => w.kept.push(line.clone()),
            }
        }
        w
    }

    /// Every warning once, in the validation's order of parts.
    fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let parts = [&self.topology, &self.kept].into_iter().chain(&self.flows).chain([&self.together]);
        for line in parts.flatten() {
            if !out.contains(line) {
                out.push(line.clone());
            }
        }
        out
    }
}

/// The flow a warning is placed at: `i` of a line `warning: flows[i]...`.
fn flow_of(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("warning: ").unwrap_or(line).strip_prefix("flows[")?;
    rest[..rest.find(']')?].parse().ok()
}

/// What one edit changed, as it was.
enum Change {
    Flow { index: usize, doc: Value, model: Box<model::FlowModel>, spec: Box<model::Flow> },
    Ports { links: Value, schedulers: Option<Value>, ports: Vec<EgressPort>, spec: Box<model::NetworkSpec> },
}

struct Done {
    change: Change,
    trial: Option<Trial>,
    /// The warnings before the edit.
    warnings: Warnings,
}

/// Why an edit was refused: the rules it breaks, one line each (`place: rule`).
pub type Refusal = Vec<String>;

fn errors(diags: &Diagnostics) -> Refusal {
    let lines: Vec<String> = diags.errors().map(|d| d.to_string()).collect();
    if lines.is_empty() {
        vec!["(network): not valid".into()]
    } else {
        lines
    }
}

fn lines(diags: &Diagnostics) -> Vec<String> {
    diags.warnings().map(|d| d.to_string()).collect()
}

fn one(line: String) -> Refusal {
    vec![line]
}

impl WhatIf {
    /// `net` is `doc` validated (the caller did it once), with the warnings of that validation.
    /// Refused when TFA does not apply to it, or when its topology alone does not validate (a
    /// section that names its flows).
    pub fn new(net: Network, doc: Value, warnings: &[String]) -> Result<WhatIf, Refusal> {
        if net.kind == model::NetworkKind::ServerGraph {
            return Err(one(
                "(network): a what-if edits a switched network's flows, links and schedulers; a server graph \
                 has none (edit the description and analyse it again)"
                    .into(),
            ));
        }
        if !doc.is_object() {
            return Err(one("(network): expected a mapping of the format's keys".into()));
        }
        let cache = super::tfa_cache(&net).map_err(one)?;
        let mut what_if = WhatIf {
            doc,
            net,
            cache,
            done: Vec::new(),
            warnings: Warnings::default(),
            last_analysed_ports: 0,
        };
        let (_, topology) = what_if.topology(Vec::new())?;
        let mut together = Diagnostics::default();
        validate::check_flows_together(&what_if.net, &mut together);
        what_if.warnings =
            Warnings::sorted(warnings, lines(&topology), lines(&together), what_if.net.flows.len());
        Ok(what_if)
    }

    /// The validation warnings of the network as the edits leave it (what validating the edited
    /// description gives), each once.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.lines()
    }

    /// The description as the edits leave it.
    pub fn doc(&self) -> &Value {
        &self.doc
    }

    pub fn network(&self) -> &Network {
        &self.net
    }

    /// How many edits [`Self::undo`] can take back.
    pub fn edits(&self) -> usize {
        self.done.len()
    }

    /// The description without its flows, with `flows` instead, validated.
    fn topology(&self, flows: Vec<Value>) -> Result<(Network, Diagnostics), Refusal> {
        let mut doc: Map<String, Value> = self
            .doc
            .as_object()
            .expect("checked in new")
            .iter()
            .filter(|(k, _)| !NOT_TOPOLOGY.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        doc.insert("flows".into(), Value::Array(flows));
        let mut diags = Diagnostics::default();
        match model::load_value(Value::Object(doc), &mut diags) {
            Some(small) if small.ports.len() == self.net.ports.len() => Ok((small, diags)),
            Some(_) => {
                Err(one("(network): the topology alone has other ports; what-if cannot edit it".into()))
            }
            None => Err(errors(&diags)),
        }
    }

    /// The rules between flows on the network as it is now, whose warnings replace those of
    /// the network before; on a refusal the last edit is taken back.
    fn check_together(&mut self) -> Result<(), Refusal> {
        let mut diags = Diagnostics::default();
        validate::check_flows_together(&self.net, &mut diags);
        if diags.has_errors() {
            self.undo();
            return Err(errors(&diags));
        }
        self.warnings.together = lines(&diags);
        Ok(())
    }

    /// Sets keys of flow `name` ([`FLOW_KEYS`]; values as the format writes them).
    pub fn set_flow(&mut self, name: &str, keys: &Map<String, Value>) -> Result<(), Refusal> {
        let flows = self.doc["flows"].as_array().map(Vec::as_slice).unwrap_or_default();
        let index = flows
            .iter()
            .position(|f| f.get("name").and_then(Value::as_str) == Some(name))
            .ok_or_else(|| one(format!("flows: no item named '{name}'")))?;
        if let Some(k) = keys.keys().find(|k| !FLOW_KEYS.contains(&k.as_str())) {
            return Err(one(format!(
                "flows[{index}].{k}: a what-if edit changes a flow's traffic or deadline ({}), not its \
                 route, class, name or type (edit the description and analyse it again)",
                FLOW_KEYS.join(", ")
            )));
        }
        let mut edited = flows[index].clone();
        let item = edited.as_object_mut().ok_or_else(|| one(format!("flows[{index}]: must be a mapping")))?;
        for (k, v) in keys {
            item.insert(k.clone(), v.clone());
        }
        // Validated alone on the topology: its place is its own index in the description.
        let (mut small, diags) = self.topology(vec![edited.clone()]).map_err(|lines| {
            lines
                .into_iter()
                .map(|l| l.replacen("flows[0]", &format!("flows[{index}]"), 1))
                .collect::<Vec<_>>()
        })?;
        let model = small.flows.pop().expect("one flow validated");
        let spec = small.spec.flows.pop().expect("one flow validated");
        let old = &self.net.flows[index];
        let same_routes = model.routes.len() == old.routes.len()
            && model.routes.iter().zip(&old.routes).all(|(a, b)| a.ports == b.ports);
        if !same_routes || model.class != old.class {
            return Err(one(format!(
                "flows[{index}]: the edit changes the flow's routes or class; a what-if edit keeps them"
            )));
        }
        let ports: Vec<PortId> = model.routes.iter().flat_map(|r| r.ports.iter().copied()).collect();
        let doc = std::mem::replace(&mut self.doc["flows"][index], edited);
        let model = std::mem::replace(&mut self.net.flows[index], model);
        let spec = std::mem::replace(&mut self.net.spec.flows[index], spec);
        self.last_analysed_ports = self.cache.update(&self.net, &ports);
        let trial = self.cache.take_trial();
        self.done.push(Done {
            change: Change::Flow { index, doc, model: Box::new(model), spec: Box::new(spec) },
            trial,
            warnings: self.warnings.clone(),
        });
        self.check_together()?;
        // The flow's own warnings; the one-flow network's rules between flows are not the
        // network's (check_together gave those).
        let at = format!("flows[{index}]");
        self.warnings.flows[index] = lines(&diags)
            .into_iter()
            .filter(|w| flow_of(w) == Some(0))
            .map(|w| w.replacen("flows[0]", &at, 1))
            .collect();
        Ok(())
    }

    /// Sets the rate of `node`'s links (or of the one on its port `port`): a link runs at one
    /// rate both ways, as the format writes it.
    pub fn set_port_rate(&mut self, node: &str, port: Option<&str>, rate: &Value) -> Result<(), Refusal> {
        let mut links = self.doc.get("links").cloned().unwrap_or(Value::Null);
        let mut found = false;
        for item in links.as_array_mut().into_iter().flatten().filter_map(Value::as_object_mut) {
            let at = |end: &str, end_port: &str| {
                item.get(end).and_then(Value::as_str) == Some(node)
                    && port.is_none_or(|p| item.get(end_port).is_some_and(|v| port_name(v) == p))
            };
            if at("from", "from_port") || at("to", "to_port") {
                item.insert("rate".into(), rate.clone());
                found = true;
            }
        }
        if !found {
            let place = port.map_or(String::new(), |p| format!(" port '{p}'"));
            return Err(one(format!("links: no link at '{node}'{place}")));
        }
        self.set_ports(Some(links), None)
    }

    /// Sets parameters of the named scheduler `name`; a mapping parameter (`weights`, `quanta`,
    /// ...) is updated key by key.
    pub fn set_scheduler(&mut self, name: &str, params: &Map<String, Value>) -> Result<(), Refusal> {
        let mut named = self.doc.get("schedulers").cloned().unwrap_or(Value::Null);
        let config = named
            .get_mut(name)
            .and_then(Value::as_object_mut)
            .ok_or_else(|| one(format!("schedulers: no scheduler named '{name}'")))?;
        if let Some(k) = params.keys().find(|k| k.as_str() == "kind") {
            return Err(one(format!(
                "schedulers.{name}.{k}: a what-if edit changes a scheduler's parameters, not its kind"
            )));
        }
        for (k, v) in params {
            match (config.get_mut(k), v) {
                (Some(Value::Object(old)), Value::Object(new)) => {
                    old.extend(new.iter().map(|(a, b)| (a.clone(), b.clone())));
                }
                _ => {
                    config.insert(k.clone(), v.clone());
                }
            }
        }
        self.set_ports(None, Some(named))
    }

    /// Takes the description's `links` or `schedulers` as edited: the topology validated alone
    /// gives the ports their rate and scheduler; the ports whose service changed are analysed
    /// again, and those downstream.
    fn set_ports(&mut self, links: Option<Value>, schedulers: Option<Value>) -> Result<(), Refusal> {
        let old_links = self.doc.get("links").cloned().unwrap_or(Value::Null);
        let old_schedulers = self.doc.get("schedulers").cloned();
        let doc = self.doc.as_object_mut().expect("checked in new");
        if let Some(l) = links {
            doc.insert("links".into(), l);
        }
        if let Some(s) = schedulers {
            doc.insert("schedulers".into(), s);
        }
        let (small, diags) = match self.topology(Vec::new()) {
            Ok(x) => x,
            Err(lines) => {
                self.restore_doc(old_links, old_schedulers);
                return Err(lines);
            }
        };
        let service = |p: &EgressPort| {
            serde_json::to_value((p.rate, &p.discipline, &p.shaper, p.propagation_delay, p.buffer))
                .expect("a port serialises")
        };
        let seeds: Vec<PortId> = (0..small.ports.len())
            .filter(|&p| service(&small.ports[p]) != service(&self.net.ports[p]))
            .collect();
        let mut spec = small.spec;
        spec.flows = std::mem::take(&mut self.net.spec.flows);
        spec.chains = std::mem::take(&mut self.net.spec.chains);
        let spec = std::mem::replace(&mut self.net.spec, spec);
        let ports = std::mem::replace(&mut self.net.ports, small.ports);
        self.last_analysed_ports = self.cache.update(&self.net, &seeds);
        let trial = self.cache.take_trial();
        self.done.push(Done {
            change: Change::Ports {
                links: old_links,
                schedulers: old_schedulers,
                ports,
                spec: Box::new(spec),
            },
            trial,
            warnings: self.warnings.clone(),
        });
        self.check_together()?;
        self.warnings.topology = lines(&diags);
        Ok(())
    }

    fn restore_doc(&mut self, links: Value, schedulers: Option<Value>) {
        let doc = self.doc.as_object_mut().expect("checked in new");
        doc.insert("links".into(), links);
        match schedulers {
            Some(s) => doc.insert("schedulers".into(), s),
            None => doc.remove("schedulers"),
        };
    }

    /// Takes back the last edit still in force (the description, the network and TFA's state
    /// as they were before it, to the bit); false when there is none.
    pub fn undo(&mut self) -> bool {
        let Some(Done { change, trial, warnings }) = self.done.pop() else { return false };
        self.warnings = warnings;
        match change {
            Change::Flow { index, doc, model, spec } => {
                self.doc["flows"][index] = doc;
                self.net.flows[index] = *model;
                self.net.spec.flows[index] = *spec;
            }
            Change::Ports { links, schedulers, ports, spec } => {
                self.restore_doc(links, schedulers);
                self.net.ports = ports;
                let mut spec = *spec;
                spec.flows = std::mem::take(&mut self.net.spec.flows);
                spec.chains = std::mem::take(&mut self.net.spec.chains);
                self.net.spec = spec;
            }
        }
        if let Some(t) = trial {
            self.cache.undo_trial(t);
        }
        true
    }

    /// TFA's report of the network as the edits leave it: what `analysis::run` gives with the
    /// method `tfa`.
    pub fn report(&self) -> Result<AnalysisReport, String> {
        super::network_bounds::applies(&self.net)?;
        Ok(super::tfa_report(&self.net, &self.cache))
    }

    /// Whether TFA's state kept in place equals, to the bit, one computed from scratch.
    #[cfg(test)]
    pub fn same_state_as_fresh(&self) -> bool {
        self.cache.same_state(&TfaCache::new(&self.net))
    }
}

/// A port's name as the description writes it (a number or text).
fn port_name(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{self, Method, Request};
    use crate::generate::{random_small, RandomSchedulers};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use serde_json::json;

    fn what_if(seed: u64) -> Option<WhatIf> {
        let doc = serde_json::to_value(random_small(seed, RandomSchedulers::Any)).expect("serialises");
        let mut diags = Diagnostics::default();
        let net = model::load_value(doc.clone(), &mut diags)?;
        WhatIf::new(net, doc, &lines(&diags)).ok()
    }

    /// The warnings of the edited description validated from scratch, sorted, against the
    /// what-if's own.
    fn same_warnings(w: &WhatIf, what: &str) {
        let mut diags = Diagnostics::default();
        model::load_value(w.doc().clone(), &mut diags).expect("an accepted edit validates");
        let (mut fresh, mut kept) = (lines(&diags), w.warnings());
        fresh.sort();
        kept.sort();
        assert_eq!(kept, fresh, "{what}: the what-if's warnings are the edited description's");
    }

    /// The report of the edited description validated and analysed from scratch, as JSON.
    fn fresh(w: &WhatIf) -> Value {
        let mut diags = Diagnostics::default();
        let net = model::load_value(w.doc().clone(), &mut diags).expect("an accepted edit validates");
        let model = |n: &Network| serde_json::to_value((&n.flows, &n.ports)).expect("serialises");
        same(&model(w.network()), &model(&net), "the edited model is the description's");
        let req = Request { method: Method::Tfa, ..Default::default() };
        serde_json::to_value(analysis::run(&net, &req).expect("tfa applies")).expect("serialises")
    }

    /// The first place where `a` and `b` differ, if any.
    fn diff(a: &Value, b: &Value, at: &str) -> Option<String> {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                keys.into_iter().find_map(|k| {
                    diff(
                        x.get(k).unwrap_or(&Value::Null),
                        y.get(k).unwrap_or(&Value::Null),
                        &format!("{at}.{k}"),
                    )
                })
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                x.iter().zip(y).enumerate().find_map(|(i, (p, q))| diff(p, q, &format!("{at}[{i}]")))
            }
            _ => (a != b).then(|| format!("{at}: {a} != {b}")),
        }
    }

    fn same(a: &Value, b: &Value, what: &str) {
        if let Some(d) = diff(a, b, "") {
            panic!("{what}: {d}");
        }
    }

    fn report(w: &WhatIf) -> Value {
        serde_json::to_value(w.report().expect("tfa applies")).expect("serialises")
    }

    /// A parameter of a named scheduler doubled: one entry of its first mapping (weights,
    /// quanta, factors), or its rate.
    fn scheduler_edit(config: &Value) -> Option<Map<String, Value>> {
        let twice = |v: &Value| match v {
            Value::Number(n) if n.is_u64() => Some(json!(n.as_u64()? * 2)),
            Value::Number(n) => Some(json!(n.as_f64()? * 2.0)),
            _ => None,
        };
        let obj = config.as_object()?;
        for (k, v) in obj {
            if let Some(m) = v.as_object() {
                let (class, x) = m.iter().next()?;
                let mut inner = Map::new();
                inner.insert(class.clone(), twice(x)?);
                let mut out = Map::new();
                out.insert(k.clone(), Value::Object(inner));
                return Some(out);
            }
        }
        None
    }

    /// One random edit: a flow's BAG or lmax, a node's links' rate, a named scheduler's share.
    fn edit(w: &mut WhatIf, rng: &mut ChaCha8Rng) -> (usize, Result<(), Refusal>) {
        let doc = w.doc().clone();
        let flows = doc["flows"].as_array().expect("flows");
        let kind = rng.gen_range(0..4);
        let done = match kind {
            0 | 1 => {
                let f = &flows[rng.gen_range(0..flows.len())];
                let mut keys = Map::new();
                if rng.gen_bool(0.5) {
                    keys.insert("bag".into(), json!(format!("{}ms", 1 << rng.gen_range(0..8))));
                } else {
                    keys.insert("lmax".into(), json!(format!("{}B", rng.gen_range(200..=1518))));
                }
                w.set_flow(f["name"].as_str().expect("named"), &keys)
            }
            2 => {
                let nodes: Vec<&Value> = doc["switches"].as_array().into_iter().flatten().collect();
                let node = nodes[rng.gen_range(0..nodes.len())]["name"].as_str().expect("named");
                let rate = ["10Mbps", "100Mbps", "1Gbps"][rng.gen_range(0..3)];
                w.set_port_rate(node, None, &json!(rate))
            }
            _ => {
                let Some(named) = doc.get("schedulers").and_then(Value::as_object) else {
                    return (4, Ok(()));
                };
                let (name, config) = named.iter().nth(rng.gen_range(0..named.len())).expect("in range");
                match scheduler_edit(config) {
                    Some(params) => w.set_scheduler(name, &params),
                    None => return (4, Ok(())),
                }
            }
        };
        ([0, 0, 1, 2][kind], done)
    }

    /// After every accepted edit, and after undoing edits, the report is the one of the edited
    /// description analysed from scratch, to the bit, and so is TFA's state.
    #[test]
    fn edits_and_undo_give_the_whole_analysis() {
        // Per kind of edit (flow, rate, scheduler, none): accepted, of which analysed in place.
        let (mut accepted, mut in_place, mut refused) = ([0; 5], [0; 5], 0);
        for seed in 0..40 {
            let Some(mut w) = what_if(seed) else { continue };
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let start = report(&w);
            for step in 0..6 {
                let before = report(&w);
                let edits = w.edits();
                match edit(&mut w, &mut rng) {
                    (4, _) => {}
                    (kind, Ok(())) => {
                        assert_eq!(w.edits(), edits + 1);
                        accepted[kind] += 1;
                        in_place[kind] += usize::from(w.last_analysed_ports < w.network().ports.len());
                        same(&report(&w), &fresh(&w), &format!("seed {seed}, step {step}"));
                        same_warnings(&w, &format!("seed {seed}, step {step}"));
                        assert!(w.same_state_as_fresh(), "seed {seed}, step {step}");
                    }
                    (_, Err(lines)) => {
                        refused += 1;
                        assert!(!lines.is_empty() && lines.iter().all(|l| !l.contains('\n')));
                        same(&report(&w), &before, &format!("a refused edit changes nothing (seed {seed})"));
                    }
                }
            }
            if w.edits() > 0 {
                assert!(w.undo());
                same(&report(&w), &fresh(&w), &format!("seed {seed}, one undone"));
                same_warnings(&w, &format!("seed {seed}, one undone"));
                assert!(w.same_state_as_fresh(), "seed {seed}, one undone");
            }
            while w.undo() {}
            same(&report(&w), &start, &format!("seed {seed}: every edit undone"));
            same_warnings(&w, &format!("seed {seed}: every edit undone"));
            assert!(w.same_state_as_fresh(), "seed {seed}: every edit undone");
        }
        eprintln!("accepted {accepted:?}, in place {in_place:?}, refused {refused}");
        assert!(
            (0..3).all(|k| accepted[k] >= 10 && in_place[k] >= 5),
            "{accepted:?} accepted ({in_place:?} in place)"
        );
    }

    /// An edit that breaks a rule is refused with the rule at its place, and one that would
    /// change a flow's route or a scheduler's kind is refused by name.
    #[test]
    fn refusals_name_the_place_and_rule() {
        let mut w = what_if(3).expect("a network");
        let flows = w.doc()["flows"].as_array().expect("flows").clone();
        let (i, name) = (flows.len() - 1, flows.last().expect("a flow")["name"].as_str().expect("named"));
        let mut keys = Map::new();
        keys.insert("bag".into(), json!("3ms"));
        let lines = w.set_flow(name, &keys).expect_err("3ms is no BAG");
        assert!(lines[0].starts_with(&format!("flows[{i}].bag: must be a power of two")), "{lines:?}");
        let mut keys = Map::new();
        keys.insert("source".into(), json!("ES1"));
        let lines = w.set_flow(name, &keys).expect_err("a route");
        assert!(lines[0].starts_with(&format!("flows[{i}].source: a what-if edit")), "{lines:?}");
        assert_eq!(w.set_flow("nope", &Map::new()).expect_err("no flow"), ["flows: no item named 'nope'"]);
        let lines = w.set_port_rate("nowhere", None, &json!(1e9)).expect_err("no node");
        assert_eq!(lines, ["links: no link at 'nowhere'"]);
        let node = w.doc()["switches"][0]["name"].as_str().expect("named").to_string();
        let lines = w.set_port_rate(&node, None, &json!("-5bps")).expect_err("negative");
        assert!(lines.iter().all(|l| l.contains(".rate: must not be negative")), "{lines:?}");
        assert_eq!(w.edits(), 0);
        assert!(!w.undo());
    }
}
