//! Response times of the fixed-priority part of a description: each processor and bus by its
//! own test (crate::fixed_priority), sporadic servers as periodic interferers, chains by the
//! holistic analysis. Results in microseconds, named, with a status per item.
//!
//! Which test runs where:
//! * preemptive processor: response-time analysis with jitter, blocking and every instance of
//!   the busy period;
//! * non-preemptive processor: the non-preemptive test (Davis et al. 2007 with a zero bit time);
//! * bus whose messages are all single frames: the revised CAN analysis (Davis et al. 2007),
//!   with FIFO transmit queues where the model says so;
//! * bus carrying multi-frame messages or network sporadic servers: each instance is preemptible
//!   between its frames, so it is analysed as a preemptive task of C = frames × frame time with
//!   one lower-priority frame of blocking (seed 004's model: a server is a periodic stream of
//!   C = budget packets every replenishment period). Sound, slightly pessimistic for
//!   single-frame messages (a frame already on the wire cannot be preempted); FIFO transmit
//!   queues are refused there.
//! * resources that run steps of chains: the holistic analysis (Tindell & Clark 1994) of every
//!   item on them at once, each chain step released with the jitter its predecessor's response
//!   leaves it, iterated to a fixed point; it covers preemptive processors and buses of
//!   single-frame priority-queued messages.

use crate::fixed_priority::{holistic, nonpreemptive as np, rta, Priority, Response, Ticks};
use crate::model::fixed_priority::{FixedPrioritySystem, Load, LoadKind, Resource, Step};
use crate::model::TransmitQueue;
use serde::Serialize;

/// Bound of one task, message or server.
#[derive(Clone, Debug, Serialize)]
pub struct ItemBound {
    pub name: String,
    /// `task`, `message` or `server`.
    pub kind: &'static str,
    /// The processor or bus.
    pub resource: String,
    pub priority: Option<u32>,
    /// Execution or transmission time per instance (a server: its budget).
    pub cost_us: f64,
    pub period_us: f64,
    pub deadline_us: f64,
    /// Worst-case response time from the arrival of an instance (own jitter included).
    pub response_us: Option<f64>,
    pub slack_us: Option<f64>,
    /// `ok`, `miss`, `unbounded`, `unassigned` (priorities missing) or `served` (by a server,
    /// whose row gives the bound).
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The test that gave the bound.
    pub analysis: &'static str,
    /// Instances examined in the busy period.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances: Option<u64>,
    /// A step of a chain with a deadline of its own: that deadline, from the step's own release
    /// (the completion of the step before it; for the first step, the chain's event). The row's
    /// `deadline_us` and `response_us` are the chain's, from the event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_deadline_us: Option<f64>,
    /// Worst-case response of that step from its own release (its local response less the
    /// release jitter its predecessors give it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_response_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_slack_us: Option<f64>,
    /// Which deadline a missed step misses: `chain`, `step` or `both`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missed: Option<&'static str>,
}

/// End-to-end bound of one chain, from its external event.
#[derive(Clone, Debug, Serialize)]
pub struct ChainBound {
    pub name: String,
    pub deadline_us: f64,
    pub response_us: Option<f64>,
    pub slack_us: Option<f64>,
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Worst-case completion of each step from the external event.
    pub steps: Vec<StepBound>,
}

#[derive(Clone, Debug, Serialize)]
pub struct StepBound {
    pub name: String,
    pub response_us: Option<f64>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ResponseTimes {
    pub items: Vec<ItemBound>,
    pub chains: Vec<ChainBound>,
    pub notes: Vec<String>,
}

fn us(t: Ticks) -> f64 {
    t as f64 / 1000.0
}

/// A load of a resource with the row of its result.
#[derive(Clone, Copy)]
struct Entry {
    /// Index into `ResponseTimes::items`.
    row: usize,
    cost: Ticks,
    /// Longest frame (bus) that blocks the items above it.
    frame: Ticks,
    period: Ticks,
    deadline: Ticks,
    jitter: Ticks,
    blocking: Ticks,
    priority: Option<u32>,
    station: usize,
}

/// Analyses every processor and bus of `sys`.
pub fn analyze(sys: &FixedPrioritySystem) -> ResponseTimes {
    let mut out = ResponseTimes::default();
    // One row per task, message and server, in that order.
    let resource_name = |r: Option<Resource>| match r {
        Some(Resource::Processor(p)) => sys.processors[p].name.clone(),
        Some(Resource::Bus(b)) => sys.buses[b].name.clone(),
        None => "(unplaced)".to_string(),
    };
    let mut push = |name: &str, kind, resource, priority, cost, period, deadline| {
        out.items.push(ItemBound {
            name: name.to_string(),
            kind,
            resource,
            priority,
            cost_us: us(cost),
            period_us: us(period),
            deadline_us: us(deadline),
            response_us: None,
            slack_us: None,
            status: "unbounded",
            reason: None,
            analysis: "",
            instances: None,
            step_deadline_us: None,
            step_response_us: None,
            step_slack_us: None,
            missed: None,
        });
    };
    for t in &sys.tasks {
        let resource = resource_name(t.processor.map(Resource::Processor));
        push(&t.name, "task", resource, t.priority, t.wcet, t.period, t.deadline);
    }
    for m in &sys.messages {
        let resource = resource_name(Some(Resource::Bus(m.bus)));
        push(&m.name, "message", resource, m.priority, m.transmission_time(), m.period, m.deadline);
    }
    for s in &sys.servers {
        let cost = match s.resource {
            Resource::Processor(_) => s.capacity,
            Resource::Bus(_) => s.packet_time * s.budget_packets as Ticks,
        };
        let period = s.replenishment_period;
        push(&s.name, "server", resource_name(Some(s.resource)), Some(s.priority), cost, period, period);
    }
    for (i, t) in sys.tasks.iter().enumerate() {
        match (t.server, t.processor) {
            (Some(s), _) => served(&mut out.items[i], &sys.servers[s].name),
            (None, None) => {
                out.items[i].reason = Some("not placed on a processor".into());
            }
            _ => {}
        }
    }
    let first_message = sys.tasks.len();
    for (i, m) in sys.messages.iter().enumerate() {
        if let Some(s) = m.server {
            served(&mut out.items[first_message + i], &sys.servers[s].name);
        }
    }
    let row_of = |l: &Load| match l.kind {
        LoadKind::Task => l.index,
        LoadKind::Message => first_message + l.index,
        LoadKind::Server => first_message + sys.messages.len() + l.index,
    };
    let entry = |l: &Load| Entry {
        row: row_of(l),
        cost: l.cost,
        frame: l.frame,
        period: l.period,
        deadline: l.deadline,
        jitter: l.jitter,
        blocking: l.blocking,
        priority: l.priority,
        station: l.station,
    };
    let loads = sys.loads();
    let per_processor: Vec<Vec<Entry>> =
        loads.processors.iter().map(|ls| ls.iter().map(entry).collect()).collect();
    let per_bus: Vec<Vec<Entry>> = loads.buses.iter().map(|ls| ls.iter().map(entry).collect()).collect();
    let multi_frame = loads.multi_frame;

    for (p, entries) in per_processor.iter().enumerate() {
        let proc = &sys.processors[p];
        if !assigned(&mut out, entries, &proc.name) {
            continue;
        }
        if proc.preemptive {
            preemptive(&mut out, entries, "preemptive fixed priority");
        } else if let Some(e) = entries.iter().find(|e| e.blocking > 0) {
            let name = out.items[e.row].name.clone();
            refuse(
                &mut out,
                entries,
                &format!(
                    "{name} gives a blocking time; on a non-preemptive processor blocking is the longest \
                     lower-priority task, computed by the analysis, and extra blocking is not supported"
                ),
            );
        } else {
            let messages: Vec<np::Message> = entries.iter().map(|e| np_message(e, 0)).collect();
            match np::analyse_bus(&messages, &np::Bus::new(0)) {
                Ok(res) => {
                    record(&mut out, entries, res.iter().map(|r| &r.detail), "non-preemptive fixed priority")
                }
                Err(e) => refuse(&mut out, entries, &e.0),
            }
        }
    }
    for (b, entries) in per_bus.iter().enumerate() {
        let bus = &sys.buses[b];
        if !assigned(&mut out, entries, &bus.name) {
            continue;
        }
        let fifo: Vec<usize> = bus
            .stations
            .iter()
            .enumerate()
            .filter(|(k, s)| s.queue == TransmitQueue::Fifo && entries.iter().any(|e| e.station == *k))
            .map(|(k, _)| k)
            .collect();
        if multi_frame[b] {
            if let Some(&k) = fifo.first() {
                refuse(
                    &mut out,
                    entries,
                    &format!(
                        "node '{}' has a FIFO transmit queue; FIFO queues are analysed for single-frame \
                         messages only, and this bus carries multi-frame messages or a sporadic server",
                        bus.stations[k].name
                    ),
                );
                continue;
            }
            // One lower-priority frame of blocking: a frame on the wire is never preempted.
            let packetised: Vec<Entry> = entries
                .iter()
                .map(|e| {
                    let blocking = entries
                        .iter()
                        .filter(|o| o.priority > e.priority)
                        .map(|o| o.frame)
                        .max()
                        .unwrap_or(0);
                    Entry { blocking, ..*e }
                })
                .collect();
            preemptive(&mut out, &packetised, "packetised bus (preemptible between frames)");
        } else {
            let messages: Vec<np::Message> = entries.iter().map(|e| np_message(e, e.station)).collect();
            let np_bus = np::Bus { tau_bit: bus.bit_time(), fifo_nodes: fifo };
            match np::analyse_bus(&messages, &np_bus) {
                Ok(res) => {
                    record(&mut out, entries, res.iter().map(|r| &r.detail), "CAN (Davis et al. 2007)")
                }
                Err(e) => refuse(&mut out, entries, &e.0),
            }
        }
    }
    if !sys.chains.is_empty() {
        chains(sys, &mut out, &per_processor, &per_bus, &multi_frame);
    }
    out
}

/// The holistic analysis of every resource that runs a step of a chain: chain steps and the
/// independent items beside them (each a chain of one step) are analysed together, and their
/// rows replaced. Resources the holistic analysis does not cover leave the chains unbounded,
/// with the reason.
fn chains(
    sys: &FixedPrioritySystem,
    out: &mut ResponseTimes,
    per_processor: &[Vec<Entry>],
    per_bus: &[Vec<Entry>],
    multi_frame: &[bool],
) {
    let resource_of = |step: &Step| match *step {
        Step::Task(t) => sys.tasks[t].processor.map(Resource::Processor),
        Step::Message(m) => Some(Resource::Bus(sys.messages[m].bus)),
    };
    let entries_of = |r: Resource| match r {
        Resource::Processor(p) => &per_processor[p],
        Resource::Bus(b) => &per_bus[b],
    };
    let mut hosts: Vec<Resource> = Vec::new();
    let mut problem: Option<String> = None;
    for chain in &sys.chains {
        for step in &chain.steps {
            match resource_of(step) {
                Some(r) if !hosts.contains(&r) => hosts.push(r),
                Some(_) => {}
                None => {
                    problem = Some(format!("chain '{}' has a step not placed on a processor", chain.name))
                }
            }
            let served = match *step {
                Step::Task(t) => sys.tasks[t].server.is_some(),
                Step::Message(m) => sys.messages[m].server.is_some(),
            };
            if served {
                problem = Some(format!("chain '{}' has a step served by a sporadic server", chain.name));
            }
        }
    }
    for &r in &hosts {
        let why = match r {
            Resource::Processor(p) if !sys.processors[p].preemptive => {
                Some(format!("processor '{}' is non-preemptive", sys.processors[p].name))
            }
            Resource::Processor(p) if per_processor[p].iter().any(|e| e.blocking > 0) => {
                Some(format!("a task on processor '{}' gives a blocking time", sys.processors[p].name))
            }
            Resource::Bus(b) if multi_frame[b] => {
                Some(format!("bus '{}' carries multi-frame messages or a sporadic server", sys.buses[b].name))
            }
            Resource::Bus(b) if sys.buses[b].stations.iter().any(|s| s.queue == TransmitQueue::Fifo) => {
                Some(format!("bus '{}' has FIFO transmit queues", sys.buses[b].name))
            }
            _ => None,
        };
        if let Some(why) = why {
            problem = Some(format!("{why}, which the holistic analysis does not cover"));
        }
        if entries_of(r).iter().any(|e| e.priority.is_none()) {
            problem = Some("priorities are not all assigned; run `rtnetlab configure priorities`".into());
        }
    }
    let row_of = |out: &ResponseTimes, step: &Step| -> usize {
        let kind = if matches!(step, Step::Task(_)) { "task" } else { "message" };
        let name = step_name(sys, step);
        out.items.iter().position(|i| i.name == name && i.kind == kind).expect("every step has a row")
    };
    let unbounded_chain = |out: &mut ResponseTimes, c: usize, why: &str| {
        let chain = &sys.chains[c];
        for step in &chain.steps {
            let row = row_of(out, step);
            let item = &mut out.items[row];
            (item.status, item.response_us, item.slack_us) = ("unbounded", None, None);
            item.reason = Some(why.to_string());
        }
        out.chains.push(ChainBound {
            name: chain.name.clone(),
            deadline_us: us(chain.deadline),
            response_us: None,
            slack_us: None,
            status: "unbounded",
            reason: Some(why.to_string()),
            steps: chain
                .steps
                .iter()
                .map(|s| StepBound { name: step_name(sys, s).to_string(), response_us: None })
                .collect(),
        });
    };
    if let Some(why) = problem {
        for c in 0..sys.chains.len() {
            unbounded_chain(out, c, &why);
        }
        return;
    }

    // Chains first, then every other item of the hosting resources as a chain of one step.
    let as_step = |r: Resource, e: &Entry| {
        let priority = e.priority.unwrap_or(u32::MAX) as Priority;
        match r {
            Resource::Processor(p) => holistic::Step::task(p, e.cost, priority),
            Resource::Bus(b) => holistic::Step::message(b, e.cost, priority),
        }
    };
    let mut input: Vec<holistic::Chain> = Vec::new();
    let mut in_chain = vec![false; out.items.len()];
    for chain in &sys.chains {
        let steps = chain
            .steps
            .iter()
            .map(|step| {
                let row = row_of(out, step);
                in_chain[row] = true;
                let r = resource_of(step).expect("placed");
                as_step(r, entries_of(r).iter().find(|e| e.row == row).expect("analysed"))
            })
            .collect();
        input.push(holistic::Chain {
            period: chain.period,
            deadline: chain.deadline,
            jitter: chain.jitter,
            steps,
        });
    }
    let mut single: Vec<usize> = Vec::new();
    for &r in &hosts {
        for e in entries_of(r).iter().filter(|e| !in_chain[e.row]) {
            input.push(holistic::Chain {
                period: e.period,
                deadline: e.deadline,
                jitter: e.jitter,
                steps: vec![as_step(r, e)],
            });
            single.push(e.row);
        }
    }
    // One bit time for every bus: the longest is safe for all (it only adds interference).
    let tau_bit = hosts
        .iter()
        .filter_map(|r| match r {
            Resource::Bus(b) => Some(sys.buses[*b].bit_time()),
            Resource::Processor(_) => None,
        })
        .max()
        .unwrap_or(0);
    let opts = holistic::HolisticOptions { tau_bit, ..Default::default() };
    let result = match holistic::analyse_holistic(&input, &opts) {
        Ok(r) => r,
        Err(e) => {
            for c in 0..sys.chains.len() {
                unbounded_chain(out, c, &e.0);
            }
            return;
        }
    };
    let set = |item: &mut ItemBound, response: &Response, deadline: Ticks| {
        item.analysis = "holistic (Tindell & Clark 1994)";
        item.instances = None;
        match response {
            Response::Bounded(r) => {
                item.response_us = Some(us(*r));
                item.slack_us = Some(us(deadline - r));
                item.status = if *r <= deadline { "ok" } else { "miss" };
                item.reason = None;
            }
            Response::Unbounded(why) => {
                (item.status, item.response_us, item.slack_us) = ("unbounded", None, None);
                item.reason = Some(why.clone());
            }
        }
    };
    for (c, chain) in sys.chains.iter().enumerate() {
        let res = &result.chains[c];
        for (k, (step, r)) in chain.steps.iter().zip(&res.steps).enumerate() {
            // A step's row: its completion from the external event, against the chain's deadline.
            let row = row_of(out, step);
            set(&mut out.items[row], &r.response, chain.deadline);
            out.items[row].deadline_us = us(chain.deadline);
            let item = &mut out.items[row];
            let chain_missed = item.status == "miss";
            item.missed = chain_missed.then_some("chain");
            // Its own deadline, from its own release, checked too.
            if let Some(own) = chain.step_deadlines[k] {
                item.step_deadline_us = Some(us(own));
                if let (Response::Bounded(local), Some(jitter)) = (&r.local, r.jitter) {
                    let from_release = local - jitter;
                    item.step_response_us = Some(us(from_release));
                    item.step_slack_us = Some(us(own - from_release));
                    if from_release > own {
                        item.status = "miss";
                        item.missed = Some(if chain_missed { "both" } else { "step" });
                    }
                }
            }
        }
        let (response_us, slack_us, status, reason) = match &res.end_to_end {
            Response::Bounded(r) => {
                let status = if *r <= chain.deadline { "ok" } else { "miss" };
                (Some(us(*r)), Some(us(chain.deadline - r)), status, None)
            }
            Response::Unbounded(why) => (None, None, "unbounded", Some(why.clone())),
        };
        out.chains.push(ChainBound {
            name: chain.name.clone(),
            deadline_us: us(chain.deadline),
            response_us,
            slack_us,
            status,
            reason,
            steps: chain
                .steps
                .iter()
                .zip(&res.steps)
                .map(|(s, r)| StepBound {
                    name: step_name(sys, s).to_string(),
                    response_us: r.response.bound().map(us),
                })
                .collect(),
        });
    }
    for (k, row) in single.into_iter().enumerate() {
        let at = sys.chains.len() + k;
        set(&mut out.items[row], &result.chains[at].end_to_end, input[at].deadline);
    }
}

fn step_name<'a>(sys: &'a FixedPrioritySystem, step: &Step) -> &'a str {
    match *step {
        Step::Task(t) => &sys.tasks[t].name,
        Step::Message(m) => &sys.messages[m].name,
    }
}

fn served(item: &mut ItemBound, server: &str) {
    item.status = "served";
    item.reason = Some(format!("by {server}"));
    item.analysis = "sporadic server";
}

/// Every item of a resource needs a priority; otherwise its interference is unknown.
fn assigned(out: &mut ResponseTimes, entries: &[Entry], resource: &str) -> bool {
    let missing: Vec<String> =
        entries.iter().filter(|e| e.priority.is_none()).map(|e| out.items[e.row].name.clone()).collect();
    if missing.is_empty() {
        return true;
    }
    let why = format!(
        "priorities not all assigned on '{resource}' ({} without one); run `rtnetlab configure priorities`",
        missing.join(", ")
    );
    for e in entries {
        out.items[e.row].status = "unassigned";
        out.items[e.row].reason = Some(why.clone());
    }
    false
}

fn refuse(out: &mut ResponseTimes, entries: &[Entry], why: &str) {
    for e in entries {
        out.items[e.row].status = "unbounded";
        out.items[e.row].reason = Some(why.to_string());
    }
}

fn np_message(e: &Entry, node: usize) -> np::Message {
    np::Message::new(e.cost, e.period, e.deadline)
        .with_jitter(e.jitter)
        .with_priority(e.priority.unwrap_or(u32::MAX) as Priority)
        .on_node(node)
}

fn preemptive(out: &mut ResponseTimes, entries: &[Entry], analysis: &'static str) {
    let tasks: Vec<rta::Task> = entries
        .iter()
        .map(|e| {
            rta::Task::new(e.cost, e.period, e.deadline)
                .with_jitter(e.jitter)
                .with_blocking(e.blocking)
                .with_priority(e.priority.unwrap_or(u32::MAX) as Priority)
        })
        .collect();
    match rta::analyse_preemptive(&tasks) {
        Ok(res) => record(out, entries, res.iter().map(|r| &r.detail), analysis),
        Err(e) => refuse(out, entries, &e.0),
    }
}

fn record<'a>(
    out: &mut ResponseTimes,
    entries: &[Entry],
    details: impl Iterator<Item = &'a crate::fixed_priority::ResponseDetail>,
    analysis: &'static str,
) {
    for (e, d) in entries.iter().zip(details) {
        let item = &mut out.items[e.row];
        item.analysis = analysis;
        match &d.response {
            Response::Bounded(r) => {
                item.response_us = Some(us(*r));
                item.slack_us = Some(us(e.deadline - r));
                item.status = if *r <= e.deadline { "ok" } else { "miss" };
                item.instances = Some(d.instances);
            }
            Response::Unbounded(why) => {
                item.status = "unbounded";
                item.reason = Some(why.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyze_json(json: &str) -> ResponseTimes {
        let (net, diags) = crate::model::load_network(json);
        let net = net.unwrap_or_else(|| panic!("{:?}", diags.errors().collect::<Vec<_>>()));
        analyze(&net.fixed_priority)
    }

    fn response(r: &ResponseTimes, name: &str) -> Option<f64> {
        r.items.iter().find(|i| i.name == name).unwrap().response_us
    }

    /// Seed 004, Table 1 (TV-004-3): one 8-byte frame lasts 1 ms at 135 kbit/s; the server is a
    /// periodic stream of 20 packets every 50 ms; one packet of blocking but at the lowest level.
    #[test]
    fn nss_table1_responses() {
        let r = analyze_json(
            r#"{"name": "t", "buses": [{"name": "can0", "bit_rate": "135kbps"}],
            "messages": [
              {"name": "m1", "bus": "can0", "sender": "n1", "payload": "8B", "packets": 10, "period": "200ms", "deadline": "20ms", "priority": 1},
              {"name": "m2", "bus": "can0", "sender": "n2", "payload": "8B", "packets": 20, "server": "nss2"},
              {"name": "m3", "bus": "can0", "sender": "n3", "payload": "8B", "packets": 50, "period": "200ms", "deadline": "100ms", "priority": 3}],
            "servers": [{"name": "nss2", "bus": "can0", "sender": "n2", "budget": 20, "replenishment_period": "50ms", "priority": 2}]}"#,
        );
        assert_eq!(response(&r, "m1"), Some(11_000.0));
        assert_eq!(response(&r, "nss2"), Some(31_000.0));
        assert_eq!(response(&r, "m3"), Some(100_000.0));
        assert_eq!(r.items.iter().find(|i| i.name == "m2").unwrap().status, "served");
        assert!(r.items.iter().filter(|i| i.kind != "message" || i.name != "m2").all(|i| i.status == "ok"));
    }

    /// Oracle item 6 (MAST): a sporadic server on a processor counted as a periodic task.
    #[test]
    fn processor_sporadic_server() {
        let r = analyze_json(
            r#"{"name": "t", "processors": [{"name": "cpu"}],
            "tasks": [
              {"name": "t1", "processor": "cpu", "wcet": "1ms", "period": "5ms", "deadline": "10ms", "priority": 1},
              {"name": "t2", "processor": "cpu", "wcet": "2ms", "period": "12ms", "priority": 3},
              {"name": "t3", "processor": "cpu", "wcet": "3ms", "period": "15ms", "priority": 4},
              {"name": "s", "processor": "cpu", "wcet": "1ms", "period": "6ms", "deadline": "10ms", "server": "ss"}],
            "servers": [{"name": "ss", "processor": "cpu", "capacity": "2ms", "replenishment_period": "10ms", "priority": 2, "background_priority": 6}]}"#,
        );
        assert_eq!(response(&r, "t1"), Some(1000.0));
        assert_eq!(response(&r, "t2"), Some(5000.0));
        assert_eq!(response(&r, "t3"), Some(9000.0));
        assert_eq!(response(&r, "ss"), Some(3000.0));
    }

    /// Oracle item 4 on a non-preemptive processor: B > C > A gives 6, 9, 7; missing
    /// priorities leave the whole processor unassigned.
    #[test]
    fn non_preemptive_processor() {
        let json = |pa: &str, pb: &str, pc: &str| {
            format!(
                r#"{{"name": "t", "processors": [{{"name": "p", "scheduling": "non_preemptive"}}],
                "tasks": [
                  {{"name": "A", "processor": "p", "wcet": "4ms", "period": "8ms", "deadline": "7ms"{pa}}},
                  {{"name": "B", "processor": "p", "wcet": "2ms", "period": "6ms"{pb}}},
                  {{"name": "C", "processor": "p", "wcet": "1ms", "period": "15ms", "deadline": "11ms"{pc}}}]}}"#
            )
        };
        let r = analyze_json(&json(r#", "priority": 3"#, r#", "priority": 1"#, r#", "priority": 2"#));
        assert_eq!(["B", "C", "A"].map(|n| response(&r, n)), [Some(6000.0), Some(9000.0), Some(7000.0)]);
        let r = analyze_json(&json(r#", "priority": 2"#, r#", "priority": 1"#, r#", "priority": 3"#));
        assert_eq!(response(&r, "C"), Some(15000.0));
        assert_eq!(r.items.iter().find(|i| i.name == "C").unwrap().status, "miss");
        let r = analyze_json(&json("", r#", "priority": 1"#, ""));
        assert!(r.items.iter().all(|i| i.status == "unassigned"));
        assert!(r.items[0].reason.as_deref().unwrap().contains("A, C without one"));
    }

    /// Single-frame CAN messages get the revised analysis with the bus's bit time: at
    /// 500 kbit/s an 8-byte frame is 270 µs (oracle item 5) and the highest-priority message
    /// waits for one lower-priority frame.
    #[test]
    fn can_bus_single_frames() {
        let r = analyze_json(
            r#"{"name": "t", "buses": [{"name": "can0", "bit_rate": "500kbps"}],
            "messages": [
              {"name": "hi", "bus": "can0", "sender": "a", "payload": "8B", "period": "10ms", "priority": 1},
              {"name": "lo", "bus": "can0", "sender": "b", "payload": "8B", "period": "10ms", "priority": 2}]}"#,
        );
        assert_eq!(response(&r, "hi"), Some(540.0));
        assert_eq!(response(&r, "lo"), Some(540.0));
        assert!(r.items.iter().all(|i| i.analysis == "CAN (Davis et al. 2007)"));
    }

    /// An overloaded processor gives no number, with the reason.
    #[test]
    fn overload_is_unbounded_with_reason() {
        let r = analyze_json(
            r#"{"name": "t", "processors": [{"name": "p"}],
            "tasks": [{"name": "a", "processor": "p", "wcet": "6ms", "period": "10ms", "priority": 1},
                      {"name": "b", "processor": "p", "wcet": "6ms", "period": "10ms", "priority": 2}]}"#,
        );
        let b = r.items.iter().find(|i| i.name == "b").unwrap();
        assert_eq!((b.status, b.response_us), ("unbounded", None));
        assert!(b.reason.as_deref().unwrap().contains("utilisation"), "{:?}", b.reason);
    }

    /// A chain sensor task → CAN frame → controller task (examples/fixed_priority/
    /// holistic_chain.yaml), by hand: sense completes by 1 + 1.5 = 2.5 ms (logging preempts it);
    /// the frame, released with 2.5 ms of jitter, waits one lower-priority frame (270 µs) and
    /// one `status` frame (270 µs) and takes 270 µs: 3.31 ms; control, first on ecu2, ends
    /// 2 ms later: 5.31 ms from the event.
    #[test]
    fn holistic_chain_by_hand() {
        let r = analyze_json(
            r#"{"name": "t", "processors": [{"name": "ecu1"}, {"name": "ecu2"}],
            "buses": [{"name": "can0", "bit_rate": "500kbps"}],
            "chains": [{"name": "loop", "period": "10ms", "deadline": "8ms", "steps": ["sense", "frame", "control"]}],
            "tasks": [
              {"name": "sense", "processor": "ecu1", "wcet": "1ms", "priority": 2},
              {"name": "control", "processor": "ecu2", "wcet": "2ms", "priority": 1},
              {"name": "logging", "processor": "ecu1", "wcet": "1500us", "period": "5ms", "priority": 1},
              {"name": "diagnostics", "processor": "ecu2", "wcet": "3ms", "period": "20ms", "priority": 2}],
            "messages": [
              {"name": "frame", "bus": "can0", "sender": "ecu1", "payload": "8B", "priority": 2},
              {"name": "status", "bus": "can0", "sender": "ecu2", "payload": "8B", "period": "1ms", "priority": 1},
              {"name": "bulk", "bus": "can0", "sender": "ecu2", "payload": "8B", "period": "5ms", "priority": 3}]}"#,
        );
        let chain = &r.chains[0];
        assert_eq!(
            chain.steps.iter().map(|s| s.response_us).collect::<Vec<_>>(),
            [Some(2500.0), Some(3310.0), Some(5310.0)]
        );
        assert_eq!((chain.response_us, chain.status), (Some(5310.0), "ok"));
        // Independent items keep their own bounds; diagnostics now sees control's jitter.
        assert_eq!(response(&r, "logging"), Some(1500.0));
        assert!(r.items.iter().all(|i| i.analysis == "holistic (Tindell & Clark 1994)"));
        // Without priorities the chain is unbounded, with the reason.
        let r = analyze_json(
            r#"{"name": "t", "processors": [{"name": "p"}],
            "chains": [{"name": "c", "period": "10ms", "steps": ["a"]}],
            "tasks": [{"name": "a", "processor": "p", "wcet": "1ms"}]}"#,
        );
        assert_eq!(r.chains[0].status, "unbounded");
        assert!(r.chains[0].reason.as_deref().unwrap().contains("configure priorities"));
    }

    /// A step's own deadline is checked beside the chain's, from the step's own release. In
    /// the chain above, `frame` is released when `sense` completes (0 to 2.5 ms after the
    /// event) and then waits one `bulk` frame (270 µs), one `status` frame (270 µs) and is sent
    /// (270 µs): 810 µs from its release, 3.31 ms from the event. `sense`, first, takes 2.5 ms
    /// from the event, which is its release.
    #[test]
    fn a_step_deadline_is_checked_from_the_step_release() {
        let doc = |frame_deadline: &str, sense_deadline: &str, chain_deadline: &str| {
            format!(
                r#"{{"name": "t", "processors": [{{"name": "ecu1"}}, {{"name": "ecu2"}}],
            "buses": [{{"name": "can0", "bit_rate": "500kbps"}}],
            "chains": [{{"name": "loop", "period": "10ms", "deadline": "{chain_deadline}",
                         "steps": ["sense", "frame", "control"]}}],
            "tasks": [
              {{"name": "sense", "processor": "ecu1", "wcet": "1ms", "priority": 2, "deadline": "{sense_deadline}"}},
              {{"name": "control", "processor": "ecu2", "wcet": "2ms", "priority": 1}},
              {{"name": "logging", "processor": "ecu1", "wcet": "1500us", "period": "5ms", "priority": 1}},
              {{"name": "diagnostics", "processor": "ecu2", "wcet": "3ms", "period": "20ms", "priority": 2}}],
            "messages": [
              {{"name": "frame", "bus": "can0", "sender": "ecu1", "payload": "8B", "priority": 2,
                "deadline": "{frame_deadline}"}},
              {{"name": "status", "bus": "can0", "sender": "ecu2", "payload": "8B", "period": "1ms", "priority": 1}},
              {{"name": "bulk", "bus": "can0", "sender": "ecu2", "payload": "8B", "period": "5ms", "priority": 3}}]}}"#
            )
        };
        let item = |r: &ResponseTimes, n: &str| r.items.iter().find(|i| i.name == n).unwrap().clone();
        // Both deadlines met: the row keeps the chain's deadline and response, and shows the step's.
        let r = analyze_json(&doc("1ms", "3ms", "8ms"));
        let f = item(&r, "frame");
        assert_eq!((f.deadline_us, f.response_us, f.status), (8000.0, Some(3310.0), "ok"));
        assert_eq!(
            (f.step_deadline_us, f.step_response_us, f.step_slack_us),
            (Some(1000.0), Some(810.0), Some(190.0))
        );
        assert_eq!(f.missed, None);
        assert_eq!(item(&r, "control").step_deadline_us, None, "no deadline of its own");
        // The step's own deadline missed, the chain's met: the step misses, and says which.
        let r = analyze_json(&doc("800us", "2ms", "8ms"));
        let (f, s) = (item(&r, "frame"), item(&r, "sense"));
        assert_eq!((f.status, f.missed, f.step_slack_us), ("miss", Some("step"), Some(-10.0)));
        assert_eq!((s.status, s.missed, s.step_response_us), ("miss", Some("step"), Some(2500.0)));
        assert_eq!(r.chains[0].status, "ok");
        // The chain's deadline missed too (5.31 ms > 5 ms): control misses the chain's, frame
        // (3.31 ms from the event) only its own.
        let r = analyze_json(&doc("800us", "3ms", "5ms"));
        assert_eq!((item(&r, "control").status, item(&r, "control").missed), ("miss", Some("chain")));
        assert_eq!(item(&r, "frame").missed, Some("step"));
        let r = analyze_json(&doc("800us", "3ms", "3ms"));
        assert_eq!(item(&r, "frame").missed, Some("both"));
    }
}
