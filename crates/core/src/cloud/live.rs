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

use crate::analysis::{
    self,
    network_bounds::incremental::TfaCache,
    results::{AnalysisReport, FlowBound},
};
use crate::model::{self, validate, Network};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

pub struct LiveNetwork {
    /// The base description without flows.
    topology: Value,
    pub net: Network,
    names: HashSet<String>,
    /// TFA's layout, state and rows ([`Self::settle`]), when the analysis is `tfa`: flows added
    /// join it in place ([`Self::trial`]), and [`Self::truncate`] undoes that.
    tfa: Option<TfaCache>,
    /// Ports analysed by the last [`Self::trial`] or [`Self::analyse`].
    pub last_analysed_ports: usize,
    /// How many routes take each (port, next port): flows that join or leave without adding or
    /// removing one keep the ports' feed-forward order.
    successors: HashMap<(usize, usize), usize>,
}

/// Counts the (port, next port) steps of `flows`' routes into `counts` (added, or taken away); true
/// when a count left or reached zero (a port gained or lost a successor).
fn count_successors(
    counts: &mut HashMap<(usize, usize), usize>,
    flows: &[model::network::FlowModel],
    add: bool,
) -> bool {
    let mut edge_changed = false;
    for r in flows.iter().flat_map(|f| &f.routes) {
        for w in r.ports.windows(2) {
            let n = counts.entry((w[0], w[1])).or_insert(0);
            if add {
                edge_changed |= *n == 0;
                *n += 1;
            } else {
                *n -= 1;
                edge_changed |= *n == 0;
            }
        }
    }
    edge_changed
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
        let mut successors = HashMap::new();
        count_successors(&mut successors, &net.flows, true);
        LiveNetwork { topology, net, names, tfa: None, last_analysed_ports: 0, successors }
    }

    /// Whether `req` is TFA as the cache holds it (no grouping, FIFO multiplexing).
    fn cached(req: &analysis::Request) -> bool {
        req.method == crate::analysis::Method::Tfa && !req.grouping && !req.blind
    }

    /// Takes the network as it is now as the state later analyses extend: with `tfa`, its state
    /// is computed on the whole network (after flows were removed: their indices moved).
    pub fn settle(&mut self, req: &analysis::Request) -> Result<(), String> {
        if Self::cached(req) {
            self.tfa = None;
            self.tfa = Some(analysis::tfa_cache(&self.net)?);
            self.last_analysed_ports = self.net.ports.len();
        }
        Ok(())
    }

    /// With `tfa` and a settled state, brings it up to the flows added since, in place (only the
    /// ports they affect are analysed again), its rows then in [`Self::rows`] (every flow's, in
    /// flow order, as `analysis::run` gives them but for the marks of cut-through switches), and
    /// returns true; false otherwise.
    /// [`Self::truncate`] undoes it, [`Self::commit`] keeps it.
    pub fn trial(&mut self, req: &analysis::Request) -> Result<bool, String> {
        if !Self::cached(req) || self.tfa.is_none() {
            return Ok(false);
        }
        let cache = self.tfa.as_mut().expect("checked");
        if cache.flows() < self.net.flows.len() {
            analysis::network_bounds::applies(&self.net)?;
            self.last_analysed_ports = cache.extend(&self.net);
        }
        Ok(true)
    }

    /// The rows [`Self::trial`] keeps (empty without a settled `tfa` state).
    pub fn rows(&self) -> &[FlowBound] {
        self.tfa.as_ref().map_or(&[], |c| c.rows())
    }

    /// Keeps the flows added and their analysis ([`Self::trial`]) as the settled state.
    pub fn commit(&mut self) {
        if let Some(c) = self.tfa.as_mut() {
            c.commit();
        }
    }

    /// The analysis of the network as it is now: with `tfa` and a settled state, from the state
    /// [`Self::trial`] keeps; else of the whole network.
    pub fn analyse(&mut self, req: &analysis::Request) -> Result<AnalysisReport, String> {
        if self.trial(req)? {
            let cache = self.tfa.as_ref().expect("a trial ran");
            return Ok(analysis::tfa_report(&self.net, cache));
        }
        self.last_analysed_ports = self.net.ports.len();
        Ok(analysis::run(&self.net, req)?)
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
        let new_successor = count_successors(&mut self.successors, &small.flows, true);
        self.net.flows.extend(small.flows);
        self.net.spec.flows.extend(small.spec.flows);
        self.net.index_port_flows_from(before, !new_successor);
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

    /// Keeps the first `n` flows; TFA's state added with the others is undone.
    pub fn truncate(&mut self, n: usize) {
        if n >= self.len() {
            return;
        }
        for f in &self.net.flows[n..] {
            self.names.remove(&f.name);
        }
        let lost_successor = count_successors(&mut self.successors, &self.net.flows[n..], false);
        self.net.flows.truncate(n);
        self.net.spec.flows.truncate(n);
        self.net.index_port_flows_from(n, !lost_successor);
        if let Some(c) = self.tfa.as_mut() {
            if c.flows() > n {
                c.undo();
            }
            if c.flows() > n {
                // Committed flows taken away: the state is not that of a prefix any more.
                self.tfa = None;
                self.tfa = analysis::tfa_cache(&self.net).ok();
            }
        }
    }

    /// Removes the flows named in `gone`, the others keeping their order; TFA's state follows in
    /// place (only the ports they crossed, and those downstream, analysed again).
    pub fn remove(&mut self, gone: &HashSet<String>) -> Result<(), String> {
        if gone.is_empty() {
            return Ok(());
        }
        let marks: Vec<bool> = self.net.flows.iter().map(|f| gone.contains(&f.name)).collect();
        let leaving: Vec<_> =
            self.net.flows.iter().zip(&marks).filter(|(_, &m)| m).map(|(f, _)| f.clone()).collect();
        count_successors(&mut self.successors, &leaving, false);
        let mut k = marks.iter();
        self.net.flows.retain(|_| !*k.next().expect("one mark per flow"));
        let mut k = marks.iter();
        self.net.spec.flows.retain(|_| !*k.next().expect("one mark per flow"));
        for n in gone {
            self.names.remove(n);
        }
        self.net.index_port_flows();
        if let Some(c) = self.tfa.as_mut() {
            c.commit();
            if c.flows() != marks.len() {
                self.tfa = None;
                self.tfa = Some(analysis::tfa_cache(&self.net)?);
            } else {
                analysis::network_bounds::applies(&self.net)?;
                self.last_analysed_ports = c.remove(&self.net, &marks);
            }
        }
        Ok(())
    }

    /// Whether the `tfa` state kept in place equals, to the bit, one computed on the network
    /// from scratch (true without a state).
    #[cfg(test)]
    pub fn same_tfa_state_as_fresh(&self) -> bool {
        self.tfa.as_ref().is_none_or(|c| c.same_state(&TfaCache::new(&self.net)))
    }
}
