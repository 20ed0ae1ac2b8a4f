//! Idle slopes for credit-based classes left as `auto`: per class, from the highest priority
//! down, the smallest slope with which `best` bounds every flow of the class within its deadline.
//!
//! A shaped class's bound does not depend on the slopes of the classes below it (they enter its
//! hiCredit only through their largest frame, [`crate::schedulers::cbs`]), and it falls as its
//! own slope grows (its latency (hiCredit − loCredit)/I = (L_lo + a_H)/(C − r_H) + L·(C − I)/(C·I)
//! and its rate I both improve): so the classes are settled one at a time, highest first, each
//! by bisection between its offered rate (below it there is no bound) and what the port has
//! left. The classes below are checked last, with every slope chosen.

use crate::model::{self, Diagnostics, Network, SchedulerConfig};
use serde_json::Value;
use std::collections::BTreeMap;

/// The slopes chosen: scheduler → class → bit/s.
pub type Chosen = BTreeMap<String, BTreeMap<String, f64>>;

/// A rate written for an `auto` slope while the others are chosen: small enough for any port.
const PROVISIONAL: &str = "1bps";

/// The (scheduler, class) pairs whose idle slope is `auto`, each written as a provisional rate.
pub fn provisional_slopes(doc: &mut Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(schedulers) = doc.get_mut("schedulers").and_then(Value::as_object_mut) else { return out };
    for (name, cfg) in schedulers.iter_mut() {
        if cfg.get("kind").and_then(Value::as_str) != Some("cbs") {
            continue;
        }
        let Some(slopes) = cfg.get_mut("idle_slopes").and_then(Value::as_object_mut) else { continue };
        for (class, v) in slopes.iter_mut() {
            if v.as_str() == Some("auto") {
                *v = Value::String(PROVISIONAL.into());
                out.push((name.clone(), class.clone()));
            }
        }
    }
    out
}

fn set(doc: &mut Value, scheduler: &str, class: &str, bps: f64) {
    doc["schedulers"][scheduler]["idle_slopes"][class] = Value::String(format!("{}bps", bps.ceil() as u64));
}

fn load(doc: &Value) -> Result<Network, Vec<String>> {
    let mut diags = Diagnostics::default();
    model::load_value(doc.clone(), &mut diags)
        .ok_or_else(|| diags.errors().map(|d| format!("{}: {}", d.place, d.message)).collect())
}

/// The flows of `class` at the ports running `scheduler` that miss (or have no bound), in `doc`.
fn misses(doc: &Value, scheduler: &str, class: &str) -> Result<Vec<String>, Vec<String>> {
    let net = load(doc)?;
    let report = crate::analysis::run(
        &net,
        &crate::analysis::Request { method: crate::analysis::Method::Best, ..Default::default() },
    )
    .map_err(|e| vec![e.into()])?;
    let k = net.classes.iter().position(|c| c.name == class);
    let crosses = |f: usize| {
        net.flows[f].routes.iter().flat_map(|r| &r.ports).any(|&p| net.ports[p].scheduler_name == scheduler)
    };
    Ok(report
        .flows
        .iter()
        .filter(|b| net.flows[b.flow].class == k && crosses(b.flow))
        .filter(|b| b.status != crate::analysis::results::Status::Ok)
        .map(|b| {
            format!(
                "flow '{}' (bound {:.3} us{})",
                net.flows[b.flow].name,
                b.delay_us,
                b.deadline_us.map_or(String::new(), |d| format!(", deadline {d:.3} us"))
            )
        })
        .collect())
}

/// Chooses every `auto` slope in `doc` (written provisionally). Returns the description with the
/// slopes written and the choices, or one line per class that no slope serves.
pub fn choose(doc: &Value, autos: &[(String, String)]) -> Result<(Value, Chosen), Vec<String>> {
    let mut doc = doc.clone();
    // The provisional document is written with the provisional slopes.
    for (s, c) in autos {
        doc["schedulers"][s.as_str()]["idle_slopes"][c.as_str()] = Value::String(PROVISIONAL.into());
    }
    let net = load(&doc)?;
    let priority = |c: &str| net.classes.iter().find(|k| k.name == c).map_or(u32::MAX, |k| k.priority);
    let mut order: Vec<&(String, String)> = autos.iter().collect();
    order.sort_by_key(|(s, c)| (priority(c), s.clone(), c.clone()));
    let mut chosen: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    let mut reasons = Vec::new();
    for (s, c) in order {
        let ports: Vec<usize> = (0..net.ports.len()).filter(|&p| net.ports[p].scheduler_name == *s).collect();
        let k = net.classes.iter().position(|x| x.name == *c);
        // The class's load at its busiest port, and the least rate any of its ports has left.
        let offered = ports
            .iter()
            .map(|&p| {
                net.port_flows[p]
                    .iter()
                    .filter(|&&f| net.flows[f].class == k)
                    .map(|&f| net.flows[f].rate)
                    .sum()
            })
            .fold(0.0, f64::max);
        let current = load(&doc)?;
        let others: f64 = match &current.spec.schedulers.get(s.as_str()) {
            // Unchosen `auto` slopes are still provisional (1 bit/s).
            Some(SchedulerConfig::Cbs { idle_slopes, .. }) => {
                idle_slopes.iter().filter(|(n, _)| *n != c).map(|(_, r)| r.bps()).sum()
            }
            _ => 0.0,
        };
        let rate = ports.iter().map(|&p| net.ports[p].rate).fold(f64::INFINITY, f64::min);
        if ports.is_empty() || !rate.is_finite() {
            reasons.push(format!(
                "schedulers.{s}.idle_slopes.{c}: no port runs scheduler '{s}'; nothing to size it by"
            ));
            continue;
        }
        let hi = rate - others;
        let lo = (offered * (1.0 + 1e-9)).ceil().max(1.0);
        if lo > hi {
            reasons.push(format!(
                "schedulers.{s}.idle_slopes.{c}: class '{c}' offers {:.6} Mb/s, more than the {:.6} Mb/s its port has \
                 left beside the other slopes",
                offered / 1e6,
                hi / 1e6
            ));
            continue;
        }
        set(&mut doc, s, c, hi);
        let at_most = misses(&doc, s, c)?;
        if !at_most.is_empty() {
            reasons.push(format!(
                "schedulers.{s}.idle_slopes.{c}: even an idle slope of {:.6} Mb/s (all the port has left) leaves {}",
                hi / 1e6,
                at_most.join(", ")
            ));
            continue;
        }
        // Bisection to 1 kb/s (or 0.01 % of the rate on slow ports).
        let (mut a, mut b) = (lo, hi);
        set(&mut doc, s, c, a);
        if misses(&doc, s, c)?.is_empty() {
            b = a;
        }
        let step = (rate * 1e-4).clamp(1.0, 1000.0);
        while b - a > step {
            let mid = ((a + b) / 2.0).ceil();
            set(&mut doc, s, c, mid);
            if misses(&doc, s, c)?.is_empty() {
                b = mid;
            } else {
                a = mid;
            }
        }
        set(&mut doc, s, c, b);
        chosen.entry(s.clone()).or_default().insert(c.clone(), b.ceil());
    }
    if !reasons.is_empty() {
        return Err(reasons);
    }
    Ok((doc, chosen))
}
