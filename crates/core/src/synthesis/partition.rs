//! `rtnetlab configure partition`: DOPA (seed 001E) on a description's chains. Places every free
//! task on a processor, keeps pinned ones where they are, drops the messages whose two tasks end
//! up on the same processor, and orders each processor and the bus (Audsley's OPA, or deadline
//! monotonic), with the safe local test (release jitter from the decomposition charged).
//!
//! DOPA's model is narrower than a description's, so the description must fit it: identical
//! preemptive processors and one CAN bus with priority transmit queues; every task and message a
//! step of a chain, chains alternating task, message, task and ending with a task, end-to-end
//! deadline within the period; no servers, no release jitter or blocking, one frame per message.
//! Anything else is refused by name rather than approximated.

use crate::fixed_priority::dopa::{
    self, Application, DopaConfig, DopaOutcome, DopaTask, Platform, PriorityPolicy,
};
use crate::model::fixed_priority::{FixedPrioritySystem, Ns, Step};
use crate::model::TransmitQueue;
use serde::Serialize;

/// Where one task went.
#[derive(Clone, Debug, Serialize)]
pub struct PlacedTask {
    pub name: String,
    pub chain: String,
    pub processor: String,
    /// Whether the description had already put it there.
    pub pinned: bool,
    /// Lower number = higher priority, 1 for the highest on its processor.
    pub priority: u32,
    /// Its window of the chain's deadline (C·D/Σ), the release jitter charged and its response
    /// from its latest release, µs.
    pub window_us: f64,
    pub jitter_us: f64,
    pub response_us: f64,
}

/// What became of one message.
#[derive(Clone, Debug, Serialize)]
pub struct PlacedMessage {
    pub name: String,
    pub chain: String,
    /// Sent on the bus (its tasks are on different processors); otherwise dropped.
    pub on_bus: bool,
    /// The processor sending it (the one running the task before it), if on the bus.
    pub sender: Option<String>,
    /// CAN identifier order, 1 for the highest, if on the bus.
    pub priority: Option<u32>,
    pub window_us: f64,
    pub jitter_us: f64,
    pub response_us: Option<f64>,
}

/// One chain's bound.
#[derive(Clone, Debug, Serialize)]
pub struct PlacedChain {
    pub name: String,
    pub deadline_us: f64,
    /// Completion bound from the event: the last message's intermediate deadline plus the last
    /// task's response.
    pub end_to_end_us: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub feasible: bool,
    /// Why PARTITION stopped, when it did (chain and task named).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub tasks: Vec<PlacedTask>,
    pub messages: Vec<PlacedMessage>,
    pub chains: Vec<PlacedChain>,
}

fn us(ns: Ns) -> f64 {
    ns as f64 / 1e3
}

/// Runs DOPA on `sys`; an `Err` says, in one line, what does not fit DOPA's model.
pub fn partition(sys: &FixedPrioritySystem, policy: PriorityPolicy) -> Result<Report, String> {
    if sys.chains.is_empty() {
        return Err("configure partition places the tasks of chains; this description has no chains".into());
    }
    if sys.processors.is_empty() {
        return Err("configure partition: the description has no processors to place tasks on".into());
    }
    if let Some(p) = sys.processors.iter().find(|p| !p.preemptive) {
        return Err(format!(
            "processor '{}': DOPA places tasks on preemptive processors only (scheduling: non_preemptive)",
            p.name
        ));
    }
    if let Some(s) = sys.servers.first() {
        return Err(format!("server '{}': DOPA has no sporadic servers; remove it to partition", s.name));
    }
    if let Some(t) = sys.tasks.iter().find(|t| t.chain.is_none()) {
        return Err(format!("task '{}': not a step of any chain (DOPA places chains only)", t.name));
    }
    if let Some(m) = sys.messages.iter().find(|m| m.chain.is_none()) {
        return Err(format!("message '{}': not a step of any chain (DOPA places chains only)", m.name));
    }
    let buses: std::collections::BTreeSet<usize> = sys.messages.iter().map(|m| m.bus).collect();
    if buses.len() > 1 {
        return Err("configure partition: DOPA has one shared bus; the chains' messages use several".into());
    }
    let bus = buses.first().map(|&b| &sys.buses[b]);
    if let Some(b) = bus {
        if let Some(s) = b.stations.iter().find(|s| s.queue == TransmitQueue::Fifo) {
            return Err(format!(
                "bus '{}': node '{}' has a FIFO transmit queue; DOPA orders the bus by priority",
                b.name, s.name
            ));
        }
    }
    if let Some(t) = sys.tasks.iter().find(|t| t.jitter > 0 || t.blocking > 0) {
        return Err(format!(
            "task '{}': DOPA has no release jitter or blocking terms (give neither)",
            t.name
        ));
    }
    if let Some(m) = sys.messages.iter().find(|m| m.packets != 1 || m.jitter > 0) {
        return Err(format!(
            "message '{}': DOPA sends a message as one frame without jitter (packets: 1, no jitter)",
            m.name
        ));
    }
    let mut apps = Vec::with_capacity(sys.chains.len());
    for c in &sys.chains {
        let place = format!("chain '{}'", c.name);
        if c.jitter > 0 {
            return Err(format!("{place}: DOPA's events have no jitter (give none)"));
        }
        if c.deadline > c.period {
            return Err(format!("{place}: deadline above the period (DOPA needs D <= T)"));
        }
        let (mut tasks, mut messages) = (Vec::new(), Vec::new());
        for (k, step) in c.steps.iter().enumerate() {
            match (k % 2, step) {
                (0, Step::Task(t)) => {
                    tasks.push(DopaTask { wcet: sys.tasks[*t].wcet, pinned: sys.tasks[*t].processor })
                }
                (1, Step::Message(m)) => messages.push(sys.messages[*m].transmission_time()),
                _ => {
                    return Err(format!(
                        "{place}.steps[{k}]: DOPA's chains alternate task, message, task (a {} here)",
                        if matches!(step, Step::Task(_)) { "task" } else { "message" }
                    ))
                }
            }
        }
        if c.steps.len() % 2 == 0 {
            return Err(format!("{place}: a chain must end with a task"));
        }
        apps.push(Application { period: c.period, deadline: c.deadline, tasks, messages });
    }
    let platform = Platform { processors: sys.processors.len(), tau_bit: bus.map_or(0, |b| b.bit_time()) };
    let config = DopaConfig { policy, ..DopaConfig::default() };
    let outcome = dopa::partition(&apps, &platform, &config).map_err(|e| e.0)?;
    let solution = match outcome {
        DopaOutcome::Schedulable(s) => s,
        DopaOutcome::Unschedulable(f) => {
            let chain = &sys.chains[f.application];
            let task = match chain.steps[2 * f.task] {
                Step::Task(t) => sys.tasks[t].name.as_str(),
                Step::Message(_) => unreachable!("even steps are tasks"),
            };
            return Ok(Report {
                feasible: false,
                reason: Some(format!("chain '{}', task '{task}': {}", chain.name, f.reason)),
                tasks: Vec::new(),
                messages: Vec::new(),
                chains: Vec::new(),
            });
        }
    };
    let mut report =
        Report { feasible: true, reason: None, tasks: Vec::new(), messages: Vec::new(), chains: Vec::new() };
    for ((c, app), placed) in sys.chains.iter().zip(&apps).zip(&solution.applications) {
        for (j, t) in placed.tasks.iter().enumerate() {
            let Step::Task(ti) = c.steps[2 * j] else { unreachable!("even steps are tasks") };
            report.tasks.push(PlacedTask {
                name: sys.tasks[ti].name.clone(),
                chain: c.name.clone(),
                processor: sys.processors[t.processor].name.clone(),
                pinned: app.tasks[j].pinned.is_some(),
                priority: t.priority as u32 + 1,
                window_us: us(t.window),
                jitter_us: us(t.jitter),
                response_us: us(t.response),
            });
        }
        for (j, m) in placed.messages.iter().enumerate() {
            let Step::Message(mi) = c.steps[2 * j + 1] else { unreachable!("odd steps are messages") };
            report.messages.push(PlacedMessage {
                name: sys.messages[mi].name.clone(),
                chain: c.name.clone(),
                on_bus: m.on_bus,
                sender: m.on_bus.then(|| sys.processors[placed.tasks[j].processor].name.clone()),
                priority: m.priority.map(|p| p as u32 + 1),
                window_us: us(m.window),
                jitter_us: us(m.jitter),
                response_us: m.response.map(us),
            });
        }
        report.chains.push(PlacedChain {
            name: c.name.clone(),
            deadline_us: us(c.deadline),
            end_to_end_us: us(placed.end_to_end),
        });
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::response_time;
    use serde_json::{json, Value};

    fn system(doc: Value) -> FixedPrioritySystem {
        let (net, diags) = crate::model::load_network(&doc.to_string());
        net.unwrap_or_else(|| panic!("{:?}", diags.0)).fixed_priority
    }

    /// Two ECUs and a bus; chain `a` from a pinned sensor on ecu1 to a pinned actuator on ecu2,
    /// chain `b` of two free tasks.
    fn doc() -> Value {
        json!({
            "name": "p",
            "processors": [{"name": "ecu1"}, {"name": "ecu2"}],
            "buses": [{"name": "can0", "bit_rate": "500kbps"}],
            "chains": [
                {"name": "a", "period": "10ms", "deadline": "8ms", "steps": ["s", "m1", "c", "m2", "act"]},
                {"name": "b", "period": "20ms", "steps": ["x", "m3", "y"]}
            ],
            "tasks": [
                {"name": "s", "processor": "ecu1", "wcet": "500us"},
                {"name": "c", "wcet": "1ms"},
                {"name": "act", "processor": "ecu2", "wcet": "300us"},
                {"name": "x", "wcet": "3ms"},
                {"name": "y", "wcet": "4ms"}
            ],
            "messages": [
                {"name": "m1", "bus": "can0", "sender": "ecu1", "payload": "8B"},
                {"name": "m2", "bus": "can0", "sender": "ecu1", "payload": "8B"},
                {"name": "m3", "bus": "can0", "sender": "ecu1", "payload": "2B"}
            ]
        })
    }

    #[test]
    fn places_free_tasks_keeps_pinned_ones_and_sends_only_across_processors() {
        let sys = system(doc());
        let r = partition(&sys, PriorityPolicy::Opa).unwrap();
        assert!(r.feasible, "{:?}", r.reason);
        let at = |name: &str| r.tasks.iter().find(|t| t.name == name).unwrap();
        assert_eq!((at("s").processor.as_str(), at("s").pinned), ("ecu1", true));
        assert_eq!(at("act").processor, "ecu2");
        assert!(!at("c").pinned);
        for m in &r.messages {
            let (from, to) = match m.name.as_str() {
                "m1" => ("s", "c"),
                "m2" => ("c", "act"),
                _ => ("x", "y"),
            };
            let across = at(from).processor != at(to).processor;
            assert_eq!(m.on_bus, across, "{}", m.name);
            assert_eq!(m.sender.as_deref(), across.then_some(at(from).processor.as_str()));
        }
        // s -> c -> act crosses from ecu1 to ecu2 somewhere: at least one frame is sent.
        assert!(r.messages.iter().filter(|m| m.chain == "a").any(|m| m.on_bus));
        // Priorities are 1.. per processor and per bus, each used once.
        for p in ["ecu1", "ecu2"] {
            let mut prios: Vec<u32> =
                r.tasks.iter().filter(|t| t.processor == p).map(|t| t.priority).collect();
            prios.sort();
            assert_eq!(prios, (1..=prios.len() as u32).collect::<Vec<_>>());
        }
        for c in &r.chains {
            assert!(c.end_to_end_us <= c.deadline_us, "{}", c.name);
        }
    }

    /// The placement written back into the description passes the holistic analysis.
    #[test]
    fn the_placed_description_meets_its_deadlines_in_the_holistic_analysis() {
        let mut d = doc();
        let r = partition(&system(d.clone()), PriorityPolicy::Opa).unwrap();
        for t in d["tasks"].as_array_mut().unwrap() {
            let placed = r.tasks.iter().find(|p| p.name == t["name"]).unwrap();
            t["processor"] = json!(placed.processor);
            t["priority"] = json!(placed.priority);
        }
        let dropped: Vec<&str> = r.messages.iter().filter(|m| !m.on_bus).map(|m| m.name.as_str()).collect();
        let msgs = d["messages"].as_array_mut().unwrap();
        msgs.retain(|m| !dropped.contains(&m["name"].as_str().unwrap()));
        for m in msgs.iter_mut() {
            let placed = r.messages.iter().find(|p| p.name == m["name"]).unwrap();
            m["sender"] = json!(placed.sender);
            m["priority"] = json!(placed.priority);
        }
        for c in d["chains"].as_array_mut().unwrap() {
            c["steps"].as_array_mut().unwrap().retain(|s| !dropped.contains(&s.as_str().unwrap()));
        }
        let times = response_time::analyze(&system(d));
        assert_eq!(times.chains.len(), 2);
        for c in &times.chains {
            assert_eq!(c.status, "ok", "{c:?}");
        }
    }

    #[test]
    fn too_much_work_is_infeasible_with_the_chain_and_task_named() {
        let mut d = doc();
        d["tasks"][3]["wcet"] = json!("19ms");
        d["tasks"][4]["wcet"] = json!("19ms");
        let r = partition(&system(d), PriorityPolicy::Opa).unwrap();
        assert!(!r.feasible);
        let reason = r.reason.unwrap();
        assert!(reason.starts_with("chain 'b', task '"), "{reason}");
    }

    #[test]
    fn what_dopa_does_not_model_is_refused_by_name() {
        type Edit = fn(&mut Value);
        let cases: Vec<(Edit, &str)> = vec![
            (|d| d["processors"][1]["scheduling"] = json!("non_preemptive"), "processor 'ecu2'"),
            (|d| d["buses"][0]["nodes"] = json!({"ecu1": {"queue": "fifo"}}), "FIFO transmit queue"),
            (
                |d| {
                    d["tasks"]
                        .as_array_mut()
                        .unwrap()
                        .push(json!({"name": "z", "processor": "ecu1", "wcet": "1ms", "period": "5ms"}))
                },
                "task 'z': not a step of any chain",
            ),
            (|d| d["chains"][1]["steps"] = json!(["m3", "x", "y"]), "chain 'b'.steps[0]"),
            (|d| d["chains"][1]["deadline"] = json!("30ms"), "chain 'b': deadline above the period"),
            (|d| d["tasks"][1]["jitter"] = json!("1ms"), "task 'c'"),
            (|d| d["messages"][0]["packets"] = json!(2), "message 'm1'"),
        ];
        for (edit, expected) in cases {
            let mut d = doc();
            edit(&mut d);
            let e = partition(&system(d), PriorityPolicy::Opa).unwrap_err();
            assert!(e.contains(expected), "{e} (expected {expected})");
            assert!(!e.contains('\n'));
        }
        let d = json!({"name": "q", "processors": [{"name": "p"}],
            "tasks": [{"name": "t", "processor": "p", "wcet": "1ms", "period": "5ms"}]});
        assert!(partition(&system(d), PriorityPolicy::Opa).unwrap_err().contains("no chains"));
    }
}
