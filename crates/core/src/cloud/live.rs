//! A validated network that flows join and leave without the whole description being read and
//! validated again: the admission's state between decisions (seed 001F).
//!
//! Validating a description is mostly per flow (its traffic, class, deadline, route); the rules
//! between flows are the unique names and what the ports' schedulers give the flows they share
//! ([`validate::check_flows_together`]). New flows are validated on the topology alone (the base
//! description with only them as flows: same nodes, ports and classes, so the same ids), appended
//! to the network, and the rules between flows are checked again on the result. The flows keep
//! the order of a description listing the base flows and then the added ones, so that analysing
//! this network is analysing that description (tested against it after every decision).

use crate::analysis::{self, network_bounds::incremental::TfaCache, results::AnalysisReport};
use crate::model::{self, validate, Network};
use serde_json::{json, Value};
use std::collections::HashSet;

pub struct LiveNetwork {
    /// The base description without flows.
    topology: Value,
    pub net: Network,
    names: HashSet<String>,
    /// TFA's state of the settled network ([`Self::settle`]), when the analysis is `tfa`.
    tfa: Option<TfaCache>,
    /// Ports analysed by the last [`Self::analyse`].
    pub last_analysed_ports: usize,
}

fn first_error(diags: &model::Diagnostics) -> String {
    diags.errors().next().map(|d| d.to_string()).unwrap_or_else(|| "not valid".into())
}

impl LiveNetwork {
    /// `net` is `doc` validated (the caller did it once).
    pub fn new(net: Network, doc: &Value) -> LiveNetwork {
        let mut topology = doc.clone();
        topology["flows"] = json!([]);
        let names = net.flows.iter().map(|f| f.name.clone()).collect();
        LiveNetwork { topology, net, names, tfa: None, last_analysed_ports: 0 }
    }

    /// Whether `req` is TFA as the cache holds it (no grouping, FIFO multiplexing).
    fn cached(req: &analysis::Request) -> bool {
        req.method == "tfa" && !req.grouping && !req.blind
    }

    /// Takes the network as it is now as the state later analyses extend (after admitted flows
    /// were added or removed): with `tfa`, its state is computed (from the previous one when the
    /// network only grew).
    pub fn settle(&mut self, req: &analysis::Request) -> Result<(), String> {
        if Self::cached(req) {
            let (_, cache, _) = analysis::tfa_after(&self.net, self.tfa.as_ref())?;
            self.tfa = Some(cache);
        }
        Ok(())
    }

    /// The analysis of the network as it is now: with `tfa` and a settled state, only the ports
    /// the flows added since affect are analysed again; else the whole network.
    pub fn analyse(&mut self, req: &analysis::Request) -> Result<AnalysisReport, String> {
        if Self::cached(req) && self.tfa.is_some() {
            let (report, _, analysed) = analysis::tfa_after(&self.net, self.tfa.as_ref())?;
            self.last_analysed_ports = analysed;
            return Ok(report);
        }
        self.last_analysed_ports = self.net.ports.len();
        analysis::run(&self.net, req)
    }

    pub fn len(&self) -> usize {
        self.net.flows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.net.flows.is_empty()
    }

    /// Appends `flows` (flow descriptions), validated; on an error (the rule, its place counted
    /// in `flows`) the network is left as it was.
    pub fn add(&mut self, flows: &[Value]) -> Result<(), String> {
        let mut fresh = HashSet::new();
        for (i, f) in flows.iter().enumerate() {
            let name = f.get("name").and_then(Value::as_str).unwrap_or_default();
            if self.names.contains(name) || !fresh.insert(name) {
                return Err(format!(
                    "flows[{i}].name: '{name}' is already the name of a flow; flow names must be unique"
                ));
            }
        }
        let mut doc = self.topology.clone();
        doc["flows"] = Value::Array(flows.to_vec());
        let mut diags = model::Diagnostics::default();
        let small = model::load_value(doc, &mut diags).ok_or_else(|| first_error(&diags))?;
        let before = self.len();
        self.net.flows.extend(small.flows);
        self.net.spec.flows.extend(small.spec.flows);
        self.net.index_port_flows();
        let mut diags = model::Diagnostics::default();
        validate::check_flows_together(&self.net, &mut diags);
        if diags.has_errors() {
            self.truncate(before);
            return Err(first_error(&diags));
        }
        for f in flows {
            self.names.insert(f["name"].as_str().unwrap_or_default().to_string());
        }
        Ok(())
    }

    /// Keeps the first `n` flows.
    pub fn truncate(&mut self, n: usize) {
        if n >= self.len() {
            return;
        }
        for f in &self.net.flows[n..] {
            self.names.remove(&f.name);
        }
        self.net.flows.truncate(n);
        self.net.spec.flows.truncate(n);
        self.net.index_port_flows();
    }

    /// Removes the flows named in `gone`, the others keeping their order.
    pub fn remove(&mut self, gone: &HashSet<String>) {
        if gone.is_empty() {
            return;
        }
        let keep: Vec<bool> = self.net.flows.iter().map(|f| !gone.contains(&f.name)).collect();
        let mut k = keep.iter();
        self.net.flows.retain(|_| *k.next().unwrap());
        let mut k = keep.iter();
        self.net.spec.flows.retain(|_| *k.next().unwrap());
        for n in gone {
            self.names.remove(n);
        }
        // Removed flows shift the others' indices: the next settle analyses the whole network.
        self.tfa = None;
        self.net.index_port_flows();
    }
}
