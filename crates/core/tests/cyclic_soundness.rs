//! Simulation against bounds on networks whose routes make cyclic port dependencies, where the
//! analyses iterate TFA's equations to a fixed point (docs/ANALYSIS.md, "Cyclic port
//! dependencies"). The random generator's networks are trees of switches (feed-forward routes
//! only), so the fixed point is checked here on networks made for it:
//!
//! * rings of 3-7 switches, one end system per switch, full-duplex ring links, every switch the
//!   start of a VL that goes at least two ring links clockwise (so the ring's ports depend on
//!   each other in a cycle), more VLs in either direction, some multicast along the ring;
//! * small meshes (a ring with chords), VLs on random simple paths of switches.
//!
//! Explicit paths, one or two classes, every registered scheduler on every switch port in turn,
//! loads on the busiest port drawn up to 0.99, random and synchronised releases, largest frames
//! mostly. Every method (`best`, `tfa`, `sfa`, `sfa-iter`, `pmoo`, `fifo-lp`, `afdx-naive`, each
//! with and without blind multiplexing; `best` and `fifo-lp` with a linear-programming solver, so
//! that fifo-lp's passes through the cycles' cuts are checked too) either refuses the network or gives bounds no simulated per-route
//! maximum delay or per-port backlog exceeds (checks against an infinite bound cannot fail, and
//! are not counted as bounded). A panic in an analysis is reported with its network.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtnetlab_core::analysis::{run_with, Request};
use rtnetlab_core::generate::random_port_scheduler_at;
use rtnetlab_core::model::{load_value, Diagnostics, Network};
use rtnetlab_core::schedulers::KINDS;
use rtnetlab_core::sim::{simulate, FrameSizes, Release, SimConfig, Workload};
use rtnetlab_core::worst_case::{self, Budget, Settings};
use serde_json::{json, Value};

mod common;
use common::{assert_flows_within, assert_ports_within};

/// The analysis `req` on `net`, with fifo-lp's programs solved in plain Rust when `lp` (`best`
/// then takes fifo-lp's bounds where they are tighter; without, `fifo-lp` is refused).
fn run(
    net: &Network,
    req: &Request,
    lp: bool,
) -> Result<rtnetlab_core::analysis::results::AnalysisReport, String> {
    Ok(run_with(net, req, lp.then_some(&common::lp::maximise as rtnetlab_core::analysis::fifo_lp::Solver))?)
}

/// Whether the campaigns solve fifo-lp's programs on the network of `seed`: on one in four (the
/// plain-Rust solver is slow in test builds: with it on all of the first 48 networks, the
/// campaign took 3.5 CPU minutes and found no bound exceeded, the passes through the cycles'
/// cuts included).
fn with_lp(seed: u64) -> bool {
    seed.is_multiple_of(4)
}

const METHODS: [&str; 7] = ["best", "tfa", "sfa", "sfa-iter", "pmoo", "fifo-lp", "afdx-naive"];

const WORKLOADS: [Workload; 4] = [
    Workload::Periodic,
    Workload::Cbr { load: 1.0 },
    Workload::Poisson { load: 1.0 },
    Workload::ParetoBursts { load: 0.8, alpha: 1.5, mean_frames: 4.0 },
];

/// Switch indices of a path of `len` switches from `start` round a ring of `n`, either way.
fn round(n: usize, start: usize, len: usize, clockwise: bool) -> Vec<usize> {
    (0..len).map(|h| if clockwise { (start + h) % n } else { (start + n * len - h) % n }).collect()
}

/// Network `seed` of the family: a ring or a mesh, its switch ports all running `kind`.
fn cyclic_network(seed: u64, kind: &str) -> (Network, bool, String) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mesh = rng.gen_bool(0.35);
    let n = if mesh { rng.gen_range(4..=6usize) } else { rng.gen_range(3..=7usize) };
    let n_classes = rng.gen_range(1..=2usize);
    let rates = ["66Mbps", "100Mbps", "1Gbps"];
    let trunk_rate = rates[rng.gen_range(0..3)];
    // Switch adjacency: the ring, and for a mesh chords to the switch two along.
    let mut adjacent = vec![Vec::new(); n];
    let mut links = Vec::new();
    for k in 0..n {
        links.push(json!({"from": format!("E{k}"), "to": format!("S{k}"),
            "rate": rates[rng.gen_range(1..3)]}));
    }
    let mut connect = |a: usize, b: usize, rate: &str, links: &mut Vec<Value>| {
        if a != b && !adjacent[a].contains(&b) {
            adjacent[a].push(b);
            adjacent[b].push(a);
            links.push(json!({"from": format!("S{a}"), "to": format!("S{b}"), "rate": rate,
                "propagation_delay": "1us"}));
        }
    };
    for k in 0..n {
        connect(k, (k + 1) % n, trunk_rate, &mut links);
    }
    if mesh {
        for k in 0..n {
            if rng.gen_bool(0.6) {
                connect(k, (k + 2) % n, rates[rng.gen_range(0..3)], &mut links);
            }
        }
    }
    let mut lmax = vec![64u32; n_classes];
    let mut flows = Vec::new();
    let n_flows = n + rng.gen_range(0..=2 * n);
    for v in 0..n_flows {
        // Switches on the path: the first n go clockwise round the ring from every switch (the
        // cycle); the others round the ring either way, or a random simple path in a mesh.
        let switches: Vec<usize> = if v < n {
            round(n, v, rng.gen_range(3..=n.max(3)), true)
        } else if !mesh || rng.gen_bool(0.3) {
            let start = rng.gen_range(0..n);
            round(n, start, rng.gen_range(2..=n), rng.gen_bool(0.7))
        } else {
            let mut path = vec![rng.gen_range(0..n)];
            let len = rng.gen_range(2..=n);
            while path.len() < len {
                let here = *path.last().unwrap();
                let next: Vec<usize> = adjacent[here].iter().copied().filter(|s| !path.contains(s)).collect();
                if next.is_empty() {
                    break;
                }
                path.push(next[rng.gen_range(0..next.len())]);
            }
            path
        };
        let nodes = |upto: usize| -> Vec<String> {
            let mut p = vec![format!("E{}", switches[0])];
            p.extend(switches[..=upto].iter().map(|s| format!("S{s}")));
            p.push(format!("E{}", switches[upto]));
            p
        };
        // Multicast now and then: a copy leaves the path at an earlier switch too.
        let mut ends = vec![switches.len() - 1];
        if switches.len() > 2 && rng.gen_bool(0.2) {
            ends.insert(0, rng.gen_range(1..switches.len() - 1));
        }
        let destinations: Vec<Value> =
            ends.iter().map(|&e| json!({"node": format!("E{}", switches[e]), "path": nodes(e)})).collect();
        let class = rng.gen_range(0..n_classes);
        let size = if rng.gen_bool(0.5) { 1518 } else { rng.gen_range(64..=1518u32) };
        lmax[class] = lmax[class].max(size);
        flows.push(json!({
            "name": format!("F{v}"),
            "type": "periodic",
            "period": "1ms",
            "size": format!("{size}B"),
            "jitter": format!("{}us", [0, 0, 50][rng.gen_range(0..3)]),
            "source": format!("E{}", switches[0]),
            "class": format!("c{class}"),
            "destinations": destinations,
        }));
    }
    let classes: Vec<Value> =
        (0..n_classes).map(|k| json!({"name": format!("c{k}"), "priority": k})).collect();
    let end_systems: Vec<Value> = (0..n).map(|k| json!({"name": format!("E{k}")})).collect();
    let switches: Vec<Value> = (0..n)
        .map(|k| {
            json!({"name": format!("S{k}"), "scheduler": format!("port{k}"),
                "technological_latency": format!("{}us", rng.gen_range(0..=8))})
        })
        .collect();
    // Rate-dependent parameters (idle slopes, gate windows) drawn for the slowest link: 66 Mb/s.
    let schedulers: serde_json::Map<String, Value> = (0..n)
        .map(|k| {
            let config = random_port_scheduler_at(kind, &lmax, 66e6, &mut rng);
            (format!("port{k}"), serde_json::to_value(config).unwrap())
        })
        .collect();
    let mut doc = json!({
        "name": format!("cyclic-{seed}"),
        "classes": classes,
        "schedulers": schedulers,
        "end_systems": end_systems,
        "switches": switches,
        "links": links,
        "flows": flows,
    });
    // Scale every period by one factor so that the busiest port carries the drawn load: near
    // saturation in a quarter of the networks.
    let target = if rng.gen_bool(0.25) { rng.gen_range(0.9..0.99) } else { rng.gen_range(0.1..0.9) };
    let (net, _) = load(&doc, seed);
    let busiest = net.port_loads().iter().zip(&net.ports).map(|(l, p)| l / p.rate).fold(0.0, f64::max);
    for f in doc["flows"].as_array_mut().unwrap() {
        // Whole nanoseconds, rounded up: the load stays at or below the target.
        let period_ns = (1e6 * busiest / target).ceil() as u64;
        f["period"] = json!(format!("{period_ns}ns"));
    }
    let what = format!(
        "{} of {n} switches, {n_classes} class(es), {n_flows} flows, {kind}, load {target:.3}",
        if mesh { "mesh" } else { "ring" }
    );
    let (net, cyclic) = load(&doc, seed);
    (net, cyclic, what)
}

/// The network, and whether its routes make a cyclic port dependency (the validator's warning).
fn load(doc: &Value, seed: u64) -> (Network, bool) {
    let mut d = Diagnostics::default();
    let net = load_value(doc.clone(), &mut d).unwrap_or_else(|| panic!("seed {seed}: {:?}\n{doc:#}", d.0));
    let cyclic = d.warnings().any(|w| w.message.contains("cyclic port dependency"));
    (net, cyclic)
}

/// Totals of a campaign.
#[derive(Default, Debug)]
struct Tally {
    networks: u64,
    cyclic: u64,
    analyses: u64,
    refused: u64,
    checks: u64,
    bounded_checks: u64,
    /// The largest simulated / bound ratio of a route's delay, and of a port's backlog.
    closest_delay: f64,
    closest_backlog: f64,
}

/// Checks networks `seeds` (each with the scheduler kind its seed picks), simulated for
/// `duration_ms` each.
fn campaign(seeds: std::ops::Range<u64>, duration_ms: i64) -> Tally {
    let mut t = Tally::default();
    for seed in seeds {
        let kind = KINDS[seed as usize % KINDS.len()];
        let (net, cyclic, what) = cyclic_network(seed, kind);
        let what = format!("seed {seed} ({what})");
        t.networks += 1;
        t.cyclic += u64::from(cyclic);
        let release = if seed % 2 == 0 { Release::Synchronized } else { Release::Random };
        let frame_sizes = if seed % 5 == 4 { FrameSizes::Uniform } else { FrameSizes::Max };
        let workload = WORKLOADS[(seed / 2) as usize % WORKLOADS.len()];
        let cfg = SimConfig {
            duration_ns: duration_ms * 1_000_000,
            seed,
            release,
            frame_sizes,
            workload,
            ..Default::default()
        };
        let sim = simulate(&net, &cfg).unwrap_or_else(|e| panic!("{what}: {e}"));
        for method in METHODS {
            for blind in [false, true] {
                let req =
                    Request { method: method.parse().expect("a method name"), blind, ..Default::default() };
                let bounds = std::panic::catch_unwind(|| run(&net, &req, with_lp(seed)))
                    .unwrap_or_else(|_| panic!("{what}: {method} (blind {blind}) panicked"));
                t.analyses += 1;
                let Ok(bounds) = bounds else {
                    t.refused += 1;
                    continue;
                };
                let label = format!("{what} {workload:?} {release:?}: {method} (blind {blind})");
                let checked = assert_flows_within(&sim, &bounds, &label);
                assert_ports_within(&sim, &bounds, &label);
                t.checks += (sim.flows.len() + sim.ports.len()) as u64;
                t.bounded_checks += bounds.flows.iter().filter(|b| b.delay_us.is_finite()).count() as u64
                    + bounds.ports.iter().filter(|b| b.backlog_bytes.is_finite()).count() as u64;
                t.closest_delay = t.closest_delay.max(checked.closest);
                for (s, b) in sim.ports.iter().zip(&bounds.ports) {
                    if b.backlog_bytes.is_finite() && b.backlog_bytes > 0.0 {
                        t.closest_backlog = t.closest_backlog.max(s.max_backlog_bytes / b.backlog_bytes);
                    }
                }
            }
        }
    }
    eprintln!("{t:?}");
    t
}

#[test]
fn cyclic_networks_stay_within_every_methods_bounds() {
    // The first networks of the larger campaign, simulated as long: among them a ring (seed 1042)
    // whose backlog bound falls below the simulated one when the bursts do not grow round the
    // cycle (a single pass in port order, or the source bursts at every hop).
    let t = campaign(1000..1048, 300);
    assert!(t.cyclic == t.networks, "{t:?}");
    assert!(t.bounded_checks > t.checks / 4, "too few finite bounds: {t:?}");
}

/// The worst-case search (release offsets, frame sizes, tie orders from the critical instant the
/// analysis implies) on cyclic networks: every delay it realises, replayed, at or below every
/// method's bound. It reaches some bounds to within 0.1 %, where random and synchronised runs stay
/// further below. What it does not do: catch a fixed point stopped after one pass (measured on
/// seeds 1000-1099: neither campaign catches it but on seed 1042's backlog, since on these rings
/// the converged TFA bounds lie up to 5x above the one-pass ones and what the network realises
/// stays below both); that rule is held by the fixed point's own tests (network_tests.rs).
fn searched_campaign(seeds: std::ops::Range<u64>, evaluations: u64) -> (u64, u64, f64) {
    let (mut rows, mut bounded, mut closest) = (0u64, 0u64, 0.0f64);
    for seed in seeds {
        let kind = KINDS[seed as usize % KINDS.len()];
        let (net, _, what) = cyclic_network(seed, kind);
        let what = format!("seed {seed} ({what})");
        let settings = Settings { budget: Budget::Evaluations(evaluations), seed, ..Default::default() };
        let report = worst_case::run(&net, &settings).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(report.violations.is_empty(), "{what}: above best's bound: {:?}", report.violations);
        for method in METHODS {
            for blind in [false, true] {
                let req =
                    Request { method: method.parse().expect("a method name"), blind, ..Default::default() };
                let Ok(bounds) = run(&net, &req, with_lp(seed)) else { continue };
                for row in &report.rows {
                    let b = bounds
                        .flows
                        .iter()
                        .find(|b| {
                            net.flows[b.flow].name == row.flow
                                && net.nodes[b.destination].name == row.destination
                                && net.planes[b.plane] == row.plane
                        })
                        .unwrap_or_else(|| panic!("{what}: no {method} row for {}", row.flow));
                    rows += 1;
                    assert!(
                        row.achieved_us <= b.delay_us + worst_case::SLACK_US,
                        "{what}: {method} (blind {blind}): {} -> {} ({}): searched {} us > bound {} us \
                         (scenario {:?})",
                        row.flow,
                        row.destination,
                        row.plane,
                        row.achieved_us,
                        b.delay_us,
                        report.scenarios.get(row.scenario)
                    );
                    if b.delay_us.is_finite() {
                        bounded += 1;
                        closest = closest.max(row.achieved_us / b.delay_us);
                    }
                }
            }
        }
    }
    eprintln!("searched: {rows} rows, {bounded} bounded, closest {closest:.3}");
    (rows, bounded, closest)
}

#[test]
fn searched_worst_cases_on_cyclic_networks_stay_within_every_methods_bounds() {
    let (rows, bounded, _) = searched_campaign(1000..1024, 60);
    assert!(bounded > rows / 4, "too few finite bounds: {bounded} of {rows}");
}

/// The larger campaign, simulated longer (`make test-slow`: about a minute in release).
#[test]
#[ignore]
fn cyclic_networks_stay_within_every_methods_bounds_at_scale() {
    let t = campaign(1000..4000, 300);
    assert!(t.cyclic == t.networks, "{t:?}");
}

/// The searched campaign on more networks, searched longer (`make test-slow`).
#[test]
#[ignore]
fn searched_worst_cases_on_cyclic_networks_at_scale() {
    searched_campaign(1000..1400, 400);
}
