//! Diagnostics of `load_network`: each problem one diagnostic with its place and rule, all of them
//! in one run; and the units round trip of a description.

use rtnetlab_core::model::{load_network, Diagnostics, Severity};
use serde_json::{json, Value};

/// A small valid network (ES1, ES2 on SW1; ES3 on SW2) with the given flows.
fn net(flows: Value) -> Value {
    json!({
        "name": "t",
        "end_systems": [{"name": "ES1"}, {"name": "ES2"}, {"name": "ES3"}],
        "switches": [{"name": "SW1"}, {"name": "SW2"}],
        "links": [
            {"from": "ES1", "to": "SW1"},
            {"from": "ES2", "to": "SW1"},
            {"from": "SW1", "to": "SW2"},
            {"from": "SW2", "to": "ES3"}
        ],
        "flows": flows
    })
}

fn vl(name: &str, bag: Value, lmin: &str, lmax: &str) -> Value {
    json!({"name": name, "type": "virtual_link", "bag": bag, "lmin": lmin, "lmax": lmax,
           "source": "ES1", "destinations": ["ES3"]})
}

/// (severity, place, message) of every diagnostic, in order.
fn lines(d: &Diagnostics) -> Vec<(Severity, String, String)> {
    d.0.iter().map(|d| (d.severity, d.place.clone(), d.message.clone())).collect()
}

fn error(place: &str, message: &str) -> (Severity, String, String) {
    (Severity::Error, place.to_string(), message.to_string())
}

#[test]
fn bag_not_a_power_of_two() {
    let (n, d) = load_network(&net(json!([vl("VL1", json!("3ms"), "64B", "200B")])).to_string());
    assert!(n.is_none());
    assert_eq!(
        lines(&d),
        vec![error("flows[0].bag", "must be a power of two between 1ms and 128ms, got 3ms")]
    );
    assert_eq!(d.0[0].to_string(), "flows[0].bag: must be a power of two between 1ms and 128ms, got 3ms");
}

#[test]
fn every_problem_of_a_flow_is_reported_at_its_key() {
    // Two unreadable quantities in one flow: both reported, each at its own key.
    let (n, d) = load_network(&net(json!([vl("VL1", json!(2), "64B", "9 furlongs")])).to_string());
    assert!(n.is_none());
    assert_eq!(
        lines(&d),
        vec![
            error("flows[0].bag", "expected a duration with a unit, e.g. '2ms', got the bare number 2"),
            error(
                "flows[0].lmax",
                "expected a data size with a unit (MiB, KiB, MB, kB, B, Mb, kb, b), e.g. '1500B', \
                 got '9 furlongs'"
            ),
        ]
    );
}

#[test]
fn places_are_file_indices_even_after_a_dropped_element() {
    let mut third = vl("VL3", json!("2ms"), "300B", "200B");
    third["class"] = json!("gold");
    let flows =
        json!([vl("VL1", json!("2 weeks"), "64B", "200B"), vl("VL2", json!("2ms"), "64B", "200B"), third]);
    let (_, d) = load_network(&net(flows).to_string());
    assert_eq!(
        lines(&d),
        vec![
            error(
                "flows[0].bag",
                "expected a duration with a unit (s, ms, us, ns), e.g. '2ms', got '2 weeks'"
            ),
            error("flows[2].lmin", "must not exceed lmax (200B), got 300B"),
            error("flows[2].class", "unknown class 'gold'"),
        ]
    );
}

#[test]
fn unreadable_node_causes_no_cascade() {
    let mut doc = net(json!([vl("VL1", json!("2ms"), "64B", "200B")]));
    doc["switches"][1] = json!({"name": "SW2", "switching": "teleport"});
    let (_, d) = load_network(&doc.to_string());
    assert_eq!(
        lines(&d),
        vec![error(
            "switches[1].switching",
            "unknown variant `teleport`, expected `store_and_forward` or `cut_through`"
        )]
    );
}

#[test]
fn structural_problems() {
    let (n, d) = load_network("[1, 2]");
    assert!(n.is_none());
    assert_eq!(
        lines(&d),
        vec![error(
            "(top)",
            "a network description must be a mapping with name, end_systems, switches, links and flows \
             (or processors, buses, tasks and messages), got a list"
        )]
    );
    let (_, d) = load_network("{\"name\": ");
    assert_eq!(d.0.len(), 1);
    assert_eq!(d.0[0].place, "(file):1:9");
    assert!(d.0[0].message.starts_with("not valid JSON: EOF while parsing a value"), "{}", d.0[0].message);

    let mut doc = net(json!([]));
    doc["links"] = json!("ES1-SW1");
    doc["name"] = json!(7);
    let (_, d) = load_network(&doc.to_string());
    assert_eq!(
        lines(&d),
        vec![error("name", "must be a string, got a number"), error("links", "must be a list, got a string")]
    );
}

#[test]
fn drr_quantum_below_the_largest_frame_is_only_a_warning() {
    let mut doc = net(json!([{"name": "A", "type": "virtual_link", "bag": "2ms", "lmin": "64B",
                              "lmax": "500B", "class": "hi", "source": "ES1", "destinations": ["ES3"]}]));
    doc["classes"] = json!([{"name": "hi"}]);
    doc["schedulers"] = json!({"d": {"kind": "drr", "quanta": {"hi": "100B"}}});
    doc["switches"][0]["scheduler"] = json!("d");
    let (n, d) = load_network(&doc.to_string());
    assert!(n.is_some());
    assert_eq!(
        lines(&d),
        vec![(
            Severity::Warning,
            "schedulers.d".to_string(),
            "quantum of class 'hi' (100B) is smaller than its largest frame (500B, flow 'A'): a frame may \
             wait several rounds, so latency grows"
                .to_string()
        )]
    );
}

#[test]
fn dtable_entry_below_the_largest_frame_is_only_a_warning() {
    let mut doc = net(json!([{"name": "A", "type": "virtual_link", "bag": "2ms", "lmin": "64B",
                              "lmax": "500B", "class": "hi", "source": "ES1", "destinations": ["ES3"]}]));
    doc["classes"] = json!([{"name": "hi"}]);
    doc["schedulers"] = json!({"t": {"kind": "table", "table_kind": "dtable",
                                     "entries": [{"class": "hi", "weight": "600B"}, {"class": "hi", "weight": "200B"}]}});
    doc["switches"][0]["scheduler"] = json!("t");
    let (n, d) = load_network(&doc.to_string());
    assert!(n.is_some());
    assert_eq!(
        lines(&d),
        vec![(
            Severity::Warning,
            "schedulers.t".to_string(),
            "an entry of class 'hi' weighs 200B, less than its largest frame (500B, flow 'A'): the class \
             then needs several passes over the table, so latency grows"
                .to_string()
        )]
    );
}

#[test]
fn units_round_trip_through_the_spec() {
    let mut doc = net(json!([
        {"name": "VL1", "type": "virtual_link", "bag": "0.001s", "lmin": "512b", "lmax": "12001b",
         "release_jitter": "85.36us", "source": "ES1", "destinations": ["ES3"]},
        {"name": "P1", "type": "periodic", "period": "2500 us", "size": "1.5kB", "jitter": "1e3ns",
         "source": "ES2", "destinations": ["ES3"]},
        {"name": "T1", "type": "token_bucket", "burst": "4KiB", "rate": "2.5Mbps", "min_packet": "64B",
         "max_packet": "1518B", "source": "ES1", "destinations": [{"node": "ES2", "path": ["ES1", "SW1", "ES2"]}]}
    ]));
    doc["defaults"] = json!({"link_rate": "1Gb/s", "technological_latency": "16us",
                             "propagation_delay": "0.5 ms"});
    let (n, d) = load_network(&doc.to_string());
    assert!(!d.has_errors(), "{:?}", lines(&d));
    let first = serde_json::to_value(&n.unwrap().spec).unwrap();
    // Written back in the largest unit that keeps the value.
    assert_eq!(first["defaults"]["link_rate"], "1Gbps");
    assert_eq!(first["defaults"]["propagation_delay"], "500us");
    assert_eq!(first["flows"][0]["bag"], "1ms");
    assert_eq!(first["flows"][0]["lmin"], "64B");
    assert_eq!(first["flows"][0]["lmax"], "12001b");
    assert_eq!(first["flows"][0]["release_jitter"], "85.36us");
    assert_eq!(first["flows"][1]["period"], "2.5ms");
    assert_eq!(first["flows"][1]["size"], "1500B");
    assert_eq!(first["flows"][1]["jitter"], "1us");
    assert_eq!(first["flows"][2]["burst"], "4096B");
    assert_eq!(first["flows"][2]["rate"], "2.5Mbps");

    let (again, d) = load_network(&first.to_string());
    assert!(!d.has_errors(), "{:?}", lines(&d));
    let second = serde_json::to_value(&again.unwrap().spec).unwrap();
    assert_eq!(first, second);
}

/// A description cannot redefine a built-in scheduler name: with `fifo` redefined as WRR, a
/// shaper whose inner scheduler is `fifo` would mean one thing to the simulator and another to
/// the analysis. Refused in one line at the redefinition.
#[test]
fn built_in_scheduler_names_are_reserved() {
    let mut doc = net(json!([vl("VL1", json!("2ms"), "64B", "200B")]));
    doc["classes"] = json!([{"name": "c"}]);
    doc["schedulers"] = json!({
        "fifo": {"kind": "wrr", "weights": {"c": 2}},
        "shaped": {"kind": "token_bucket", "rate": "50Mbps", "burst": "3000B", "inner": "fifo"}
    });
    doc["switches"][0]["scheduler"] = json!("shaped");
    let (n, d) = load_network(&doc.to_string());
    assert!(n.is_none());
    assert_eq!(
        lines(&d),
        vec![error(
            "schedulers.fifo",
            "'fifo' is the name of a built-in scheduler and cannot be redefined; choose another name"
        )]
    );
}

/// A shaper's inner scheduler is resolved once, at validation, and stored on the port: the
/// analysis and the simulator read the same discipline.
#[test]
fn a_shapers_inner_scheduler_is_resolved_on_the_port() {
    let mut doc = net(json!([vl("VL1", json!("2ms"), "64B", "200B")]));
    doc["classes"] = json!([{"name": "c", "priority": 1}]);
    doc["flows"][0]["class"] = json!("c");
    doc["schedulers"] = json!({
        "rr": {"kind": "wrr", "weights": {"c": 2}},
        "shaped": {"kind": "token_bucket", "rate": "50Mbps", "burst": "3000B", "inner": "rr"},
        "shaped_sp": {"kind": "token_bucket", "rate": "50Mbps", "burst": "3000B", "inner": "static_priority"},
        "nested": {"kind": "token_bucket", "rate": "50Mbps", "burst": "3000B", "inner": "shaped"}
    });
    doc["switches"][0]["scheduler"] = json!("shaped");
    doc["switches"][1]["scheduler"] = json!("shaped_sp");
    let (n, d) = load_network(&doc.to_string());
    assert_eq!(
        lines(&d),
        vec![error("schedulers.nested.inner", "a token-bucket shaper cannot wrap another shaper")]
    );
    assert!(n.is_none());
    doc["schedulers"].as_object_mut().unwrap().remove("nested");
    let (n, d) = load_network(&doc.to_string());
    let n = n.unwrap_or_else(|| panic!("{:?}", lines(&d)));
    let port = |node: &str| n.ports.iter().find(|p| n.nodes[p.node].name == node).unwrap();
    use rtnetlab_core::model::{SchedulerConfig, Shaper};
    let sw1 = port("SW1");
    assert!(matches!(sw1.discipline, SchedulerConfig::Wrr { .. }), "{:?}", sw1.discipline);
    assert_eq!(sw1.shaper, Some(Shaper { rate: 50e6, burst: 24000.0 }));
    assert!(matches!(port("SW2").discipline, SchedulerConfig::StaticPriority));
    assert!(matches!(port("ES1").discipline, SchedulerConfig::Fifo) && port("ES1").shaper.is_none());
}

/// ES1 reaches ES2 through SW1 then SW2 or SW3 (a diamond): two paths of three hops. The routing
/// takes the one through the link listed first (SW1 -> SW2) and says so, once per destination;
/// a destination with one fewest-hop path, or given a path, is not warned.
#[test]
fn a_tie_in_fewest_hop_routing_is_warned_at_the_destination() {
    let doc = |destinations: Value, planes: usize| {
        let mut doc = json!({
            "name": "diamond",
            "end_systems": [{"name": "ES1"}, {"name": "ES2"}, {"name": "ES3"}],
            "switches": [{"name": "SW1"}, {"name": "SW2"}, {"name": "SW3"}],
            "links": [
                {"from": "ES1", "to": "SW1"},
                {"from": "SW1", "to": "SW2"},
                {"from": "SW1", "to": "SW3"},
                {"from": "SW2", "to": "ES2"},
                {"from": "SW3", "to": "ES2"},
                {"from": "SW1", "to": "ES3"}
            ],
            "flows": [{"name": "A", "type": "virtual_link", "bag": "2ms", "lmin": "64B", "lmax": "200B",
                       "source": "ES1", "destinations": destinations}]
        });
        if planes == 2 {
            // Plane B: the same diamond of its own switches.
            doc["redundancy"] = json!({"planes": ["A", "B"], "skew_max": "1ms"});
            for sw in ["SW1", "SW2", "SW3"] {
                doc["switches"].as_array_mut().unwrap().push(json!({"name": format!("{sw}B"), "plane": "B"}));
            }
            let links: Vec<Value> = doc["links"].as_array().unwrap().clone();
            for l in links {
                let b = |end: &str| if end.starts_with("SW") { format!("{end}B") } else { end.to_string() };
                let (from, to) = (b(l["from"].as_str().unwrap()), b(l["to"].as_str().unwrap()));
                doc["links"].as_array_mut().unwrap().push(json!({"from": from, "to": to}));
            }
            doc["switches"][0]["plane"] = json!("A");
            doc["switches"][1]["plane"] = json!("A");
            doc["switches"][2]["plane"] = json!("A");
        }
        doc
    };
    let tie = "2 paths of 3 hops lead there; the one through the link listed first is taken (give a \
               path to choose)";
    let (n, d) = load_network(&doc(json!(["ES3", "ES2"]), 1).to_string());
    let n = n.unwrap_or_else(|| panic!("a tie is no error: {:?}", lines(&d)));
    assert_eq!(lines(&d), vec![(Severity::Warning, "flows[0].destinations[1]".to_string(), tie.to_string())]);
    let route = n.flows[0].routes.iter().find(|r| n.nodes[r.destination].name == "ES2").unwrap();
    let through: Vec<&str> = route.ports.iter().map(|&p| n.nodes[n.ports[p].peer].name.as_str()).collect();
    assert_eq!(through, ["SW1", "SW2", "ES2"]);

    // Two planes, the same tie on each: one warning naming both.
    let (_, d) = load_network(&doc(json!(["ES2"]), 2).to_string());
    let got = lines(&d);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].2.starts_with("2 paths of 3 hops lead there on plane A, B; "), "{got:?}");

    // A path given by hand: nothing to warn.
    let given = json!([{"node": "ES2", "path": ["ES1", "SW1", "SW3", "ES2"]}]);
    let (n, d) = load_network(&doc(given, 1).to_string());
    assert!(n.is_some() && d.0.is_empty(), "{:?}", lines(&d));
}
