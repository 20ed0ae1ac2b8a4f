//! `rtnetlab configure priorities`: a priority order per processor and bus, by Audsley's
//! optimal priority assignment (OPA) over the resource's own test, or deadline monotonic.
//!
//! Items are the tasks, messages and sporadic servers of each resource (served items take their
//! server's priority). The test is the one `analyze` uses there: preemptive response-time
//! analysis, the non-preemptive test, the CAN test with the bus's bit time, or the packetised-bus
//! test (blocking by the largest lower-priority frame). A step of a chain is given its local
//! window of the end-to-end deadline, D·C/ΣC over the chain (seed 001E, Eq. 4-5), so that each
//! resource can be ordered on its own (OPA cannot use the holistic test directly); the holistic
//! analysis then checks the result end to end.

use crate::fixed_priority::assignment::{self, NonPreemptiveTest, OpaTest, PreemptiveTest};
use crate::fixed_priority::{nonpreemptive as np, rta, Ticks};
use crate::model::fixed_priority::{FixedPrioritySystem, Load, LoadKind, Step};
use crate::model::TransmitQueue;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Audsley's optimal priority assignment.
    #[default]
    Opa,
    /// Deadline monotonic (shortest deadline, or local window for chain steps, first).
    Dm,
}

/// One item given a priority.
#[derive(Clone, Debug, Serialize)]
pub struct Assigned {
    pub name: String,
    /// `task`, `message` or `server`.
    pub kind: &'static str,
    pub priority: u32,
    /// The deadline the resource's test used (the local window for a chain step), µs.
    pub deadline_us: f64,
}

/// The order found for one processor or bus.
#[derive(Clone, Debug, Serialize)]
pub struct ResourceOrder {
    pub resource: String,
    pub test: &'static str,
    /// Every item meets its deadline under the order.
    pub feasible: bool,
    /// Highest priority first; empty when OPA failed.
    pub order: Vec<Assigned>,
    /// OPA: the items none of which fits the lowest free level. DM: the items that miss.
    pub failing: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub method: Method,
    pub feasible: bool,
    pub resources: Vec<ResourceOrder>,
}

struct Item {
    name: String,
    kind: &'static str,
    cost: Ticks,
    frame: Ticks,
    period: Ticks,
    deadline: Ticks,
    jitter: Ticks,
    blocking: Ticks,
    station: usize,
}

/// Orders every processor and bus of `sys`.
pub fn assign(sys: &FixedPrioritySystem, method: Method) -> Report {
    // Local windows of chain steps (Eq. 4-5 of seed 001E: the deadline shared in proportion to C).
    let mut window: Vec<Option<Ticks>> = vec![None; sys.tasks.len() + sys.messages.len()];
    for chain in &sys.chains {
        let cost = |s: &Step| match *s {
            Step::Task(t) => sys.tasks[t].wcet,
            Step::Message(m) => sys.messages[m].transmission_time(),
        };
        let total: Ticks = chain.steps.iter().map(cost).sum::<Ticks>().max(1);
        for s in &chain.steps {
            let w = (chain.deadline as i128 * cost(s) as i128 / total as i128) as Ticks;
            match *s {
                Step::Task(t) => window[t] = Some(w),
                Step::Message(m) => window[sys.tasks.len() + m] = Some(w),
            }
        }
    }
    let item = |l: &Load| {
        let (name, window) = match l.kind {
            LoadKind::Task => (&sys.tasks[l.index].name, window[l.index]),
            LoadKind::Message => (&sys.messages[l.index].name, window[sys.tasks.len() + l.index]),
            LoadKind::Server => (&sys.servers[l.index].name, None),
        };
        let (deadline, jitter) = window.map_or((l.deadline, l.jitter), |w| (w, 0));
        Item {
            name: name.clone(),
            kind: l.kind.name(),
            cost: l.cost,
            frame: l.frame,
            period: l.period,
            deadline,
            jitter,
            blocking: l.blocking,
            station: l.station,
        }
    };
    let loads = sys.loads();
    let per_processor: Vec<Vec<Item>> =
        loads.processors.iter().map(|ls| ls.iter().map(item).collect()).collect();
    let per_bus: Vec<Vec<Item>> = loads.buses.iter().map(|ls| ls.iter().map(item).collect()).collect();
    let multi_frame = loads.multi_frame;

    let mut resources = Vec::new();
    for (p, items) in per_processor.iter().enumerate() {
        if items.is_empty() {
            continue;
        }
        let name = sys.processors[p].name.clone();
        resources.push(if sys.processors[p].preemptive {
            let tasks: Vec<rta::Task> = items.iter().map(task_of).collect();
            match PreemptiveTest::new(&tasks) {
                Ok(mut test) => order(&name, "preemptive fixed priority", items, &mut test, method),
                Err(e) => refused(&name, "preemptive fixed priority", &e.0),
            }
        } else if items.iter().any(|i| i.blocking > 0) {
            refused(
                &name,
                "non-preemptive fixed priority",
                "a task gives a blocking time (not supported there)",
            )
        } else {
            let messages: Vec<np::Message> = items.iter().map(|i| message_of(i, 0)).collect();
            match NonPreemptiveTest::new(&messages, &np::Bus::new(0)) {
                Ok(mut test) => order(&name, "non-preemptive fixed priority", items, &mut test, method),
                Err(e) => refused(&name, "non-preemptive fixed priority", &e.0),
            }
        });
    }
    for (b, items) in per_bus.iter().enumerate() {
        if items.is_empty() {
            continue;
        }
        let bus = &sys.buses[b];
        if let Some(s) = bus.stations.iter().find(|s| s.queue == TransmitQueue::Fifo) {
            resources.push(refused(
                &bus.name,
                "CAN",
                &format!(
                    "node '{}' has a FIFO transmit queue: its messages need contiguous priorities, \
                     which this assignment does not choose; give them by hand",
                    s.name
                ),
            ));
            continue;
        }
        resources.push(if multi_frame[b] {
            let mut test = PacketisedTest { items };
            order(&bus.name, "packetised bus", items, &mut test, method)
        } else {
            let messages: Vec<np::Message> = items.iter().map(|i| message_of(i, i.station)).collect();
            match NonPreemptiveTest::new(&messages, &np::Bus::new(bus.bit_time())) {
                Ok(mut test) => order(&bus.name, "CAN (Davis et al. 2007)", items, &mut test, method),
                Err(e) => refused(&bus.name, "CAN (Davis et al. 2007)", &e.0),
            }
        });
    }
    Report { method, feasible: resources.iter().all(|r| r.feasible), resources }
}

fn task_of(i: &Item) -> rta::Task {
    rta::Task::new(i.cost, i.period, i.deadline).with_jitter(i.jitter).with_blocking(i.blocking)
}

fn message_of(i: &Item, node: usize) -> np::Message {
    np::Message::new(i.cost, i.period, i.deadline).with_jitter(i.jitter).on_node(node)
}

fn refused(resource: &str, test: &'static str, why: &str) -> ResourceOrder {
    ResourceOrder {
        resource: resource.to_string(),
        test,
        feasible: false,
        order: Vec::new(),
        failing: Vec::new(),
        reason: Some(why.to_string()),
    }
}

fn order(
    resource: &str,
    test_name: &'static str,
    items: &[Item],
    test: &mut dyn OpaTest,
    method: Method,
) -> ResourceOrder {
    let (order, failing) = match method {
        Method::Opa => match assignment::audsley(test) {
            Ok(order) => (order, Vec::new()),
            Err(f) => (Vec::new(), f.unplaceable),
        },
        Method::Dm => {
            let order = assignment::deadline_monotonic(items.len(), |i| items[i].deadline);
            let verdict = assignment::check_order(test, &order);
            let failing = (0..items.len()).filter(|&i| !verdict[i]).collect();
            (order, failing)
        }
    };
    ResourceOrder {
        resource: resource.to_string(),
        test: test_name,
        feasible: failing.is_empty() && !order.is_empty(),
        order: order
            .iter()
            .enumerate()
            .map(|(level, &i)| Assigned {
                name: items[i].name.clone(),
                kind: items[i].kind,
                priority: level as u32 + 1,
                deadline_us: items[i].deadline as f64 / 1000.0,
            })
            .collect(),
        failing: failing.iter().map(|&i| items[i].name.clone()).collect(),
        reason: None,
    }
}

/// The packetised-bus test: preemptive between frames, blocked by the largest frame of the
/// lower-priority set. Depends on the sets above and below only, and moving an item up trades
/// a whole instance of interference for at most one frame of blocking, so OPA applies.
struct PacketisedTest<'a> {
    items: &'a [Item],
}

impl OpaTest for PacketisedTest<'_> {
    fn item_count(&self) -> usize {
        self.items.len()
    }

    fn schedulable(&mut self, item: usize, higher: &[usize], lower: &[usize]) -> bool {
        let blocking = lower.iter().map(|&k| self.items[k].frame).max().unwrap_or(0);
        let mut tasks: Vec<rta::Task> =
            higher.iter().map(|&k| task_of(&self.items[k]).with_priority(0)).collect();
        tasks.push(task_of(&self.items[item]).with_blocking(blocking).with_priority(1));
        rta::analyse_preemptive(&tasks).is_ok_and(|r| r.last().is_some_and(|t| t.schedulable))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sys(json: &str) -> FixedPrioritySystem {
        let (net, diags) = crate::model::load_network(json);
        net.unwrap_or_else(|| panic!("{:?}", diags.errors().collect::<Vec<_>>())).fixed_priority
    }

    /// Oracle item 4 on a non-preemptive processor: DM (B > A > C) misses C; OPA finds B > C > A.
    #[test]
    fn opa_and_dm_non_preemptive() {
        let s = sys(r#"{"name": "t", "processors": [{"name": "p", "scheduling": "non_preemptive"}],
            "tasks": [
              {"name": "A", "processor": "p", "wcet": "4ms", "period": "8ms", "deadline": "7ms"},
              {"name": "B", "processor": "p", "wcet": "2ms", "period": "6ms"},
              {"name": "C", "processor": "p", "wcet": "1ms", "period": "15ms", "deadline": "11ms"}]}"#);
        let names = |r: &ResourceOrder| r.order.iter().map(|a| a.name.as_str()).collect::<Vec<_>>().join(">");
        let opa = assign(&s, Method::Opa);
        assert!(opa.feasible);
        assert_eq!(names(&opa.resources[0]), "B>C>A");
        let dm = assign(&s, Method::Dm);
        assert!(!dm.feasible);
        assert_eq!(names(&dm.resources[0]), "B>A>C");
        assert_eq!(dm.resources[0].failing, ["C"]);
    }

    /// Oracle item 3 (preemptive, deadlines beyond periods): rate monotonic misses τ2; OPA puts
    /// τ1 lowest.
    #[test]
    fn opa_preemptive_arbitrary_deadlines() {
        let s = sys(r#"{"name": "t", "processors": [{"name": "p"}],
            "tasks": [
              {"name": "t1", "processor": "p", "wcet": "52ms", "period": "100ms", "deadline": "110ms"},
              {"name": "t2", "processor": "p", "wcet": "52ms", "period": "140ms", "deadline": "154ms"}]}"#);
        let opa = assign(&s, Method::Opa);
        assert!(opa.feasible);
        assert_eq!(opa.resources[0].order.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["t2", "t1"]);
        assert!(!assign(&s, Method::Dm).feasible);
    }

    /// Seed 004 Table 1 with priorities to choose: the server and both streams fit.
    #[test]
    fn packetised_bus_with_server() {
        let s = sys(r#"{"name": "t", "buses": [{"name": "can0", "bit_rate": "135kbps"}],
            "messages": [
              {"name": "m1", "bus": "can0", "sender": "n1", "payload": "8B", "packets": 10, "period": "200ms", "deadline": "20ms"},
              {"name": "m3", "bus": "can0", "sender": "n3", "payload": "8B", "packets": 50, "period": "200ms", "deadline": "100ms"}],
            "servers": [{"name": "nss2", "bus": "can0", "sender": "n2", "budget": 20, "replenishment_period": "50ms", "priority": 2}]}"#);
        let r = assign(&s, Method::Opa);
        assert!(r.feasible, "{r:?}");
        let dm = assign(&s, Method::Dm);
        assert_eq!(
            dm.resources[0].order.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
            ["m1", "nss2", "m3"]
        );
        assert!(dm.feasible);
    }
}
