//! Fuzzing the loader and the validator (proptest, on stable Rust): whatever the text, reading
//! and validating it never panics, every problem is one line with a place and a message, and a
//! description that validates can be analysed and simulated without a panic.
//!
//! Cases per property: the numbers below times RTNETLAB_FUZZ_SCALE (default 1; `make soak` sets
//! it higher). A crash found here becomes an explicit test in `regressions` at the end.

use proptest::prelude::*;
use proptest::test_runner::Config;
use rtnetlab_core::generate::{random_small, RandomSchedulers};
use rtnetlab_core::model::{self, parse::Format, Diagnostics, Limits, Network};
use serde_json::{json, Value};

fn cases(n: u32) -> Config {
    let scale: u32 = std::env::var("RTNETLAB_FUZZ_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    Config { cases: n * scale.max(1), failure_persistence: None, ..Config::default() }
}

/// Every problem is one line, with a place and a rule; no network without an error.
fn check(net: &Option<Network>, diags: &Diagnostics) {
    for d in &diags.0 {
        assert!(!d.place.is_empty() && !d.message.is_empty(), "{d:?}");
        assert!(!d.place.contains('\n') && !d.message.contains('\n'), "{d:?}");
    }
    assert_eq!(net.is_none(), diags.has_errors(), "{:?}", diags.0);
    assert!(diags.0.len() <= 2 * (Limits::default().errors as usize + 1));
}

/// The engines on a network that validated: bounds and a short simulation, no panic.
fn run_engines(net: &Network) {
    for method in ["best", "tfa"] {
        let req = rtnetlab_core::analysis::Request {
            method: method.parse().expect("a method name"),
            grouping: false,
            blind: false,
            ..Default::default()
        };
        let _ = rtnetlab_core::analysis::run(net, &req);
    }
    if !net.flows.is_empty() {
        let cfg = rtnetlab_core::sim::SimConfig { duration_ns: 2_000_000, ..Default::default() };
        if let Ok(mut sim) = rtnetlab_core::sim::Simulator::new(net, cfg) {
            sim.run_until(2_000_000);
            sim.finish();
            let _ = sim.report();
        }
    }
}

/// Loads `text`, checks the diagnostics, and returns the network if it validated.
fn load(text: &str, format: Format) -> Option<Network> {
    let (net, diags) = model::load_text(text, format, "fuzz", &Limits::default());
    check(&net, &diags);
    net
}

/// Pieces YAML and JSON are made of, and values the model reads, put together at random.
const TOKENS: &[&str] = &[
    "name: ",
    "- ",
    "[",
    "]",
    "{",
    "}",
    ", ",
    ": ",
    "\n",
    "  ",
    "&a ",
    "*a",
    "&b ",
    "*b",
    "<<: ",
    "!!int ",
    "!!str ",
    "!!float ",
    "!!timestamp ",
    "!!binary ",
    "!!python/object ",
    "!x ",
    "'",
    "\"",
    "? ",
    "---\n",
    "...\n",
    "#",
    "~",
    "|\n",
    ">\n",
    "\\0",
    "\\u0000",
    "\t",
    "ES1",
    "SW1",
    "2ms",
    "64B",
    "1518B",
    "100Mbps",
    "1e308",
    "1e308Mbps",
    ".inf",
    ".nan",
    "-1",
    "0",
    "010",
    "0x1F",
    "1_000",
    "99999999999999999999",
    "yes",
    "on",
    "2001-12-14",
    "1:30",
    "virtual_link",
    "end_systems",
    "switches",
    "links",
    "flows",
    "from",
    "to",
    "type",
    "bag",
    "lmin",
    "lmax",
    "source",
    "destinations",
    "classes",
    "priority",
    "pcp",
    "schedulers",
    "kind",
    "tasks",
    "chains",
    "steps",
    "{\"name\": ",
    "\"flows\": [",
    "null",
    "true",
];

fn token_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..60).prop_map(|t| t.concat())
}

/// Random valid networks to mutate: making one takes a while in a test build, so a few are made
/// once and shared.
const BASES: u64 = 16;

/// A small valid description with the switched and the fixed-priority parts.
fn base(seed: u64) -> Value {
    static MADE: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
    MADE.get_or_init(|| (0..BASES).map(make_base).collect())[(seed % BASES) as usize].clone()
}

fn make_base(seed: u64) -> Value {
    let mut v = serde_json::to_value(random_small(seed, RandomSchedulers::Any)).expect("serialises");
    v["processors"] = json!([{"name": "p"}]);
    v["buses"] = json!([{"name": "can0", "bit_rate": "500kbps"}]);
    v["tasks"] = json!([{"name": "a", "processor": "p", "wcet": "1ms", "priority": 1},
                        {"name": "b", "processor": "p", "wcet": "2ms", "period": "10ms", "priority": 2}]);
    v["messages"] = json!([{"name": "m", "bus": "can0", "sender": "p", "payload": "8B", "priority": 1}]);
    v["chains"] = json!([{"name": "c", "period": "20ms", "steps": ["a", "m"]}]);
    v
}

/// Every place in a value, as JSON pointers.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => m
            .iter()
            .for_each(|(k, x)| pointers(x, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out)),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| pointers(x, format!("{at}/{i}"), out)),
        _ => {}
    }
}

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Replace(usize, Value),
    AddKey(usize, String, Value),
    Duplicate(usize),
}

fn nasty_value() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        prop::num::f64::NORMAL.prop_map(|x| json!(x)),
        prop::sample::select(TOKENS).prop_map(|s| json!(s)),
        prop::sample::select(
            &[
                "",
                "0B",
                "0ms",
                "0bps",
                "-3ms",
                "1e300B",
                "86401s",
                "0.5ns",
                "20000Gbps",
                "4294967295",
                "a\u{0}b",
                " ES1",
                "ES1",
                "ES2",
                "SW1",
                "c0",
                "c1",
                "fifo",
                "static_priority",
                "A",
                "B",
                "128ms",
                "3ms",
                "2000B",
                "10Gbps"
            ][..]
        )
        .prop_map(|s| json!(s)),
    ];
    scalar.prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4).prop_map(|m| json!(m)),
        ]
    })
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        (any::<usize>(), nasty_value()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        (any::<usize>(), prop::sample::select(TOKENS), nasty_value()).prop_map(|(i, k, v)| Mutation::AddKey(
            i,
            k.trim().to_string(),
            v
        )),
        any::<usize>().prop_map(Mutation::Duplicate),
    ]
}

fn apply(doc: &mut Value, m: &Mutation) {
    let mut ps = Vec::new();
    pointers(doc, String::new(), &mut ps);
    let pick = |i: usize| ps[i % ps.len()].clone();
    let parent = |p: &str| p.rsplit_once('/').map(|(a, b)| (a.to_string(), b.to_string()));
    match m {
        Mutation::Replace(i, v) => {
            if let Some(x) = doc.pointer_mut(&pick(*i)) {
                *x = v.clone();
            }
        }
        Mutation::Delete(i) | Mutation::Duplicate(i) => {
            let Some((up, last)) = parent(&pick(*i)) else { return };
            let dup = matches!(m, Mutation::Duplicate(_));
            match doc.pointer_mut(&up) {
                Some(Value::Object(o)) if !dup => {
                    o.shift_remove(&last.replace("~1", "/").replace("~0", "~"));
                }
                Some(Value::Array(a)) => {
                    if let Ok(k) = last.parse::<usize>() {
                        if dup {
                            let x = a[k].clone();
                            a.insert(k, x);
                        } else {
                            a.remove(k);
                        }
                    }
                }
                _ => {}
            }
        }
        Mutation::AddKey(i, k, v) => {
            if let Some(Value::Object(o)) = doc.pointer_mut(&pick(*i)) {
                o.insert(k.clone(), v.clone());
            }
        }
    }
}

proptest! {
    #![proptest_config(cases(5000))]
    #[test]
    fn any_text_is_read_or_refused_in_one_line_each(text in prop_oneof![token_text(), any::<String>()]) {
        load(&text, Format::Yaml);
        load(&text, Format::Json);
    }
}

proptest! {
    #![proptest_config(cases(2000))]
    #[test]
    fn near_valid_descriptions_are_read_or_refused_in_one_line_each(
        seed in 0..BASES,
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let mut doc = base(seed);
        for m in &mutations {
            apply(&mut doc, m);
        }
        load(&doc.to_string(), Format::Json);
    }
}

proptest! {
    // The engines are slow in a test build: fewer cases, each a network that validates.
    #![proptest_config(cases(100))]
    #[test]
    fn accepted_networks_analyse_and_simulate_without_panic(
        seed in 0..BASES,
        mutation in prop::option::of(mutation()),
    ) {
        let mut doc = base(seed);
        if let Some(m) = &mutation {
            apply(&mut doc, m);
        }
        if let Some(net) = load(&doc.to_string(), Format::Json) {
            run_engines(&net);
        }
    }
}

/// Crashes the fuzzing found, kept as plain tests.
mod regressions {
    use super::*;

    fn problems(text: &str) -> Vec<String> {
        let (net, diags) = model::load_text(text, Format::Json, "fuzz", &Limits::default());
        check(&net, &diags);
        diags.0.iter().map(|d| d.to_string()).collect()
    }

    /// An empty top-level key was reported with an empty place (": unknown key ...").
    #[test]
    fn an_empty_key_is_placed() {
        let p = problems(r#"{"name": "x", "": {}}"#);
        assert!(p[0].starts_with("'': unknown key, expected one of name, "), "{p:?}");
    }

    /// A reference holding a line break was reported on two lines.
    #[test]
    fn a_reference_with_a_line_break_stays_on_one_line() {
        let p = problems(
            r#"{"name": "x", "end_systems": [{"name": "A"}], "links": [{"from": "A", "to": "---\n"}]}"#,
        );
        assert_eq!(p, ["links[0].to: unknown node '---\\n'"]);
    }
}
