//! Asynchronous traffic shaping (802.1Qcr, `kind: ats`) on networks with cyclic dependencies,
//! which interleaved regulators make analysable hop by hop: a ring worked by hand, random rings
//! simulated against their bounds, and the rule that makes a regulator's delay free.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtnetlab_core::analysis::{run, Request};
use rtnetlab_core::model::{load_network, Network};
use rtnetlab_core::sim::{simulate, FrameSizes, Release, SimConfig, Workload};

mod common;
use common::{assert_flows_within, assert_ports_within};

/// A ring of `k` switches S1 → S2 → ... → Sk → S1, end system Ei on switch Si, the flows given
/// as (source switch, hops clockwise, class, bag ms, lmax bytes); `sched` the switches'
/// scheduler and `config` its definition.
fn ring(
    k: usize,
    flows: &[(usize, usize, usize, u32, u32)],
    sched: &str,
    config: &str,
    rate: &str,
) -> String {
    let es: Vec<String> = (1..=k).map(|i| format!(r#"{{"name": "E{i}"}}"#)).collect();
    let sw: Vec<String> = (1..=k).map(|i| format!(r#"{{"name": "S{i}", "scheduler": "{sched}"}}"#)).collect();
    let mut links: Vec<String> = (1..=k).map(|i| format!(r#"{{"from": "E{i}", "to": "S{i}"}}"#)).collect();
    links.extend((1..=k).map(|i| format!(r#"{{"from": "S{i}", "to": "S{}", "rate": "{rate}"}}"#, i % k + 1)));
    let fl: Vec<String> = flows
        .iter()
        .enumerate()
        .map(|(n, &(s, hops, class, bag, lmax))| {
            let mut path = vec![format!("\"E{}\"", s + 1)];
            path.extend((0..=hops).map(|h| format!("\"S{}\"", (s + h) % k + 1)));
            let dst = (s + hops) % k + 1;
            path.push(format!("\"E{dst}\""));
            format!(
                r#"{{"name": "F{n}", "type": "virtual_link", "bag": "{bag}ms", "lmin": "64B", "lmax": "{lmax}B",
                  "class": "c{class}", "source": "E{}", "destinations": [{{"node": "E{dst}", "path": [{}]}}]}}"#,
                s + 1,
                path.join(", ")
            )
        })
        .collect();
    format!(
        r#"{{"name": "ring", "defaults": {{"link_rate": "100Mbps", "technological_latency": "0us"}},
          "classes": [{{"name": "c0", "priority": 0}}, {{"name": "c1", "priority": 1}}, {{"name": "c2", "priority": 2}}],
          "schedulers": {{"ats": {config}}},
          "end_systems": [{}], "switches": [{}], "links": [{}], "flows": [{}]}}"#,
        es.join(", "),
        sw.join(", "),
        links.join(", "),
        fl.join(", ")
    )
}

fn load(text: &str) -> Network {
    let (net, d) = load_network(text);
    net.unwrap_or_else(|| panic!("{:?}", d.0))
}

fn bounds(net: &Network, method: &str) -> Vec<(f64, Option<String>, String)> {
    let r =
        run(net, &Request { method: method.parse().expect("a method name"), ..Default::default() }).unwrap();
    r.flows.iter().map(|f| (f.delay_us, f.reason.clone(), f.method.to_string())).collect()
}

const ATS_ALL: &str = r#"{"kind": "ats", "classes": ["c0", "c1", "c2"]}"#;

/// Three switches in a ring, each flow two ring hops clockwise (the port dependency graph is a
/// cycle), one class, 1020 B frames on the wire (8160 bits) every ms, 100 Mb/s links, no
/// latencies. With ATS every ring port sees its two flows with their own token buckets (8160
/// bits, 8.16 Mb/s): delay 2·8160/1e8 = 163.2 µs; the end-system port and the last switch port
/// carry one flow each: 81.6 µs. So every flow's bound is 81.6 + 163.2 + 163.2 + 81.6 = 489.6 µs,
/// with no fixed point to seek. Static priority on the same ring needs TFA's fixed point, whose
/// bursts grow around the ring: its bound is above 81.6 + 3·163.2 = 571.2 µs.
#[test]
fn ring_by_hand() {
    let flows = [(0, 2, 0, 1, 1000), (1, 2, 0, 1, 1000), (2, 2, 0, 1, 1000)];
    let ats = load(&ring(3, &flows, "ats", ATS_ALL, "100Mbps"));
    for (d, reason, method) in bounds(&ats, "best") {
        assert!((d - 489.6).abs() < 1e-6, "{d} {reason:?} {method}");
        assert_eq!(method, "tfa+grouping");
    }
    let sp = load(&ring(3, &flows, "static_priority", ATS_ALL, "100Mbps"));
    for (d, _, _) in bounds(&sp, "tfa") {
        assert!(d > 571.2, "{d}");
    }
    // SFA would convolve services across the regulators: it refuses, with the reason.
    for (d, reason, _) in bounds(&ats, "sfa") {
        assert!(d.is_infinite() && reason.unwrap().contains("interleaved regulators"));
    }
}

/// The simulator's regulators on the same ring: every flow's frames all released together
/// (synchronised, largest frames) see at most the bound, and the ring's ports a backlog within
/// theirs.
fn check_sound(net: &Network, what: &str, runs: u64) -> (u64, f64) {
    let r =
        run(net, &Request { method: rtnetlab_core::analysis::Method::Best, ..Default::default() }).unwrap();
    let mut frames = 0;
    let mut closest: f64 = 0.0;
    for seed in 0..runs {
        let workload = [
            Workload::Periodic,
            Workload::Cbr { load: 1.0 },
            Workload::Poisson { load: 1.0 },
            Workload::ParetoBursts { load: 0.8, alpha: 1.5, mean_frames: 4.0 },
        ][seed as usize % 4];
        let cfg = SimConfig {
            duration_ns: 60_000_000,
            seed,
            release: if seed % 2 == 0 { Release::Synchronized } else { Release::Random },
            frame_sizes: if seed % 3 == 0 { FrameSizes::Uniform } else { FrameSizes::Max },
            workload,
            ..Default::default()
        };
        let sim = simulate(net, &cfg).unwrap_or_else(|e| panic!("{what} seed {seed}: {e}"));
        let checked = assert_flows_within(&sim, &r, &format!("{what} seed {seed} {workload:?}"));
        frames += checked.bounded_frames;
        closest = closest.max(checked.closest);
        assert_ports_within(&sim, &r, &format!("{what} seed {seed}"));
    }
    (frames, closest)
}

#[test]
fn ring_simulated_within_bound() {
    let flows = [(0, 2, 0, 1, 1000), (1, 2, 0, 1, 1000), (2, 2, 0, 1, 1000)];
    let (frames, closest) = check_sound(&load(&ring(3, &flows, "ats", ATS_ALL, "100Mbps")), "ring", 8);
    assert!(frames > 1000, "{frames}");
    eprintln!("ring: {frames} frames, closest simulated/bound {closest:.3}");
}

/// Random rings of 3-5 switches with 3-14 flows going 1 to k−1 hops clockwise, random classes,
/// BAGs, frame sizes, ring link rates and regulated classes: the simulation never exceeds the
/// bound, and most bounds are finite.
#[test]
fn random_rings_simulated_within_bound() {
    let mut frames = 0;
    let mut closest: f64 = 0.0;
    let mut cyclic = 0;
    for seed in 0..24u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let k = rng.gen_range(3..=5usize);
        let flows: Vec<(usize, usize, usize, u32, u32)> = (0..rng.gen_range(3..=14))
            .map(|_| {
                (
                    rng.gen_range(0..k),
                    rng.gen_range(1..k),
                    rng.gen_range(0..3),
                    [1, 2, 4, 8][rng.gen_range(0..4)],
                    rng.gen_range(64..=1518),
                )
            })
            .collect();
        let regulated: Vec<String> =
            (0..3).filter(|&c| c == 0 || rng.gen_bool(0.6)).map(|c| format!("\"c{c}\"")).collect();
        let config = format!(r#"{{"kind": "ats", "classes": [{}]}}"#, regulated.join(", "));
        let rate = ["100Mbps", "200Mbps", "1Gbps"][rng.gen_range(0..3)];
        let net = load(&ring(k, &flows, "ats", &config, rate));
        cyclic += !net.port_order().acyclic as usize;
        let (f, c) = check_sound(&net, &format!("ring seed {seed}"), 2);
        frames += f;
        closest = closest.max(c);
    }
    eprintln!("random rings: {frames} frames with a finite bound, {cyclic} cyclic, closest {closest:.3}");
    assert!(cyclic > 10 && frames > 10_000, "{cyclic} cyclic, {frames} frames");
}

/// A regulated flow coming from a switch port that does not regulate it (static priority, its
/// burst grown there) has no bound: the regulator's delay is free only behind a FIFO system whose
/// input flows conform (Le Boudec 2018, Theorem 5). The reason names the port and the flow.
#[test]
fn a_regulator_behind_an_unregulated_switch_is_not_free() {
    let flows = [(0, 2, 0, 1, 1000), (1, 1, 0, 1, 1000)];
    let mut text = ring(3, &flows, "ats", ATS_ALL, "100Mbps");
    text = text.replace(
        r#"{"name": "S2", "scheduler": "ats"}"#,
        r#"{"name": "S2", "scheduler": "static_priority"}"#,
    );
    let net = load(&text);
    let b = bounds(&net, "best");
    assert!(b[0].0.is_infinite(), "{b:?}");
    let reason = b[0].1.as_ref().unwrap();
    assert!(
        reason.contains("S3") && reason.contains("F0") && reason.contains("does not regulate it"),
        "{reason}"
    );
    // F1 ends at S3's port towards E3 but its regulator there is behind S2 too.
    assert!(b[1].0.is_infinite());
}
