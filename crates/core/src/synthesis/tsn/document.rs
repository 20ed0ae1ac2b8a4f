//! The description around the synthesis: the provisional lists that let it validate, the
//! schedulers assigned to ports, and the written description checked again.

use super::{Report, MAX_REASONS};
use crate::model::{self, Diagnostics, Network, NodeKind, PortId, Traffic};
use serde_json::{json, Value};

/// The `tas` schedulers without `entries` (names and the cycle written, if any), each given a
/// provisional list with every gate always open so that the description validates.
pub(super) fn provisional_gates(doc: &mut Value) -> Vec<(String, Option<String>)> {
    let classes: Vec<Value> = doc
        .get("classes")
        .and_then(Value::as_array)
        .map(|c| c.iter().filter_map(|k| k.get("name").cloned()).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    let Some(schedulers) = doc.get_mut("schedulers").and_then(Value::as_object_mut) else { return out };
    for (name, cfg) in schedulers.iter_mut() {
        let Some(cfg) = cfg.as_object_mut() else { continue };
        let is_tas = cfg.get("kind").and_then(Value::as_str) == Some("tas");
        let listed = cfg.get("entries").and_then(Value::as_array).is_some_and(|e| !e.is_empty());
        if !is_tas || listed {
            continue;
        }
        let cycle = cfg.get("cycle").and_then(Value::as_str).map(str::to_string);
        let c = cycle.clone().unwrap_or_else(|| "1ms".into());
        cfg.insert("cycle".into(), Value::String(c.clone()));
        cfg.insert("entries".into(), json!([{"open": classes, "duration": c}]));
        out.push((name.clone(), cycle));
    }
    out
}

/// The written description validated again, the streams confirmed by the time-triggered rule and
/// every deadline checked by `best`.
pub(super) fn check(document: &Value, report: &mut Report) -> Result<(), Vec<String>> {
    let mut diags = Diagnostics::default();
    let Some(out) = model::load_value(document.clone(), &mut diags) else {
        // A bug: what was written does not validate.
        return Err(diags
            .errors()
            .map(|d| {
                format!(
                    "internal error: the configured description does not validate: {}: {}",
                    d.place, d.message
                )
            })
            .collect());
    };
    let tt = crate::schedulers::tas::time_triggered(&out);
    let streams: std::collections::HashSet<&str> = report.streams.iter().map(|s| s.flow.as_str()).collect();
    report.unconfirmed = tt
        .refused
        .iter()
        .filter(|(f, _)| streams.contains(out.flows[*f].name.as_str()))
        .map(|(_, why)| why.clone())
        .collect();
    // The waits the rule finds on each route, against the bound (above it: a bug).
    for (f, flow) in out.flows.iter().enumerate() {
        if !streams.contains(flow.name.as_str()) || tt.refused.iter().any(|(g, _)| *g == f) {
            continue;
        }
        for route in &flow.routes {
            let waited: i64 = route.ports.iter().map(|&p| tt.wait.get(&(f, p)).copied().unwrap_or(0)).sum();
            if waited > report.max_wait_ns {
                report.unconfirmed.push(format!(
                    "stream '{}': its frames may wait {} at the gates of its route, more than the bound {}",
                    flow.name,
                    duration_text(waited),
                    duration_text(report.max_wait_ns)
                ));
            }
        }
    }
    let analysis = crate::analysis::run(
        &out,
        &crate::analysis::Request { method: crate::analysis::Method::Best, ..Default::default() },
    )
    .map_err(|e| vec![e.into()])?;
    report.misses = analysis
        .flows
        .iter()
        .filter(|b| b.status != crate::analysis::results::Status::Ok)
        .map(|b| {
            format!(
                "flow '{}': bound {} us{}",
                out.flows[b.flow].name,
                b.delay_us,
                b.deadline_us.map_or(String::new(), |d| format!(" > deadline {d} us"))
            )
        })
        .collect();
    Ok(())
}

/// Makes port `p` run scheduler `name` in the description: an end system's `scheduler`, a
/// switch's `ports.NAME.scheduler`.
pub(super) fn assign_scheduler(doc: &mut Value, net: &Network, p: PortId, name: &str) {
    let node = &net.nodes[net.ports[p].node];
    let (key, switch) = match node.kind {
        NodeKind::EndSystem => ("end_systems", false),
        NodeKind::Switch => ("switches", true),
        NodeKind::Server => return,
    };
    let Some(list) = doc.get_mut(key).and_then(Value::as_array_mut) else { return };
    let Some(obj) = list
        .iter_mut()
        .filter_map(Value::as_object_mut)
        .find(|o| o.get("name").and_then(Value::as_str) == Some(node.name.as_str()))
    else {
        return;
    };
    if !switch {
        obj.insert("scheduler".into(), Value::String(name.into()));
        return;
    }
    let ports = obj.entry("ports").or_insert_with(|| json!({}));
    if let Some(map) = ports.as_object_mut() {
        let entry = map.entry(net.ports[p].name.clone()).or_insert_with(|| json!({}));
        if let Some(e) = entry.as_object_mut() {
            e.insert("scheduler".into(), Value::String(name.into()));
        }
    }
}

/// Periodic flows' offsets as the description gives them, ns (for tests and the front).
pub fn offsets(net: &Network) -> Vec<Option<i64>> {
    net.flows
        .iter()
        .map(|f| match &f.traffic {
            Traffic::Periodic { offset, .. } => Some(offset.as_ns()),
            _ => None,
        })
        .collect()
}

/// A duration as written back: whole ms, µs or ns.
pub fn duration_text(ns: i64) -> String {
    if ns != 0 && ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns != 0 && ns % 1000 == 0 {
        format!("{}us", ns / 1000)
    } else {
        format!("{ns}ns")
    }
}

/// At most [`MAX_REASONS`] causes, the rest counted in one line.
pub(super) fn capped(mut reasons: Vec<String>) -> Vec<String> {
    if reasons.len() > MAX_REASONS {
        let more = reasons.len() - MAX_REASONS;
        reasons.truncate(MAX_REASONS);
        reasons.push(format!("… and {more} more"));
    }
    reasons
}
