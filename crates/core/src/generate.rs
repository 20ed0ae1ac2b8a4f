//! Synthetic AFDX networks for benchmarks and random tests.
//!
//! The BAG and frame-size mix per traffic class follows Table 1 of seed 000 (avionics,
//! multimedia, best effort), sampled per class from the two marginals (the seed gives no joint
//! distribution). Switches of a plane form a tree (so routes never make a cyclic port
//! dependency, as in real AFDX topologies); end systems hang off switches round-robin; most VLs
//! stay near their source, the rest go anywhere; a third are multicast.
//!
//! A generated network is sized for its traffic, as an engineer would size it: every link gets
//! the slowest rate of [`LINK_RATES_BPS`] (from the edge rate for end systems' links, at most
//! [`EDGE_MAX_BPS`], and from the trunk rate for switch-to-switch ones) at which each of its two
//! ports carries at most [`TARGET_UTILISATION`] of it, so every route is bounded. End systems'
//! links at the edge rate take it from `defaults.link_rate` (varying that default varies them);
//! every other link says its own rate. Without a switch count (0), there are enough switches for
//! [`END_SYSTEMS_PER_SWITCH`] end systems each, at least 4. What cannot be sized so (an end
//! system sending more than its fastest link carries) is an error naming it.

use crate::model::spec::*;
use crate::units::{DataRate, DataSize, Duration};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// Link rates a generated network uses, slowest first (Ethernet's).
pub const LINK_RATES_BPS: [f64; 8] = [10e6, 100e6, 1e9, 10e9, 25e9, 40e9, 100e9, 400e9];
/// The fastest link an end system is given: beyond, it needs to be more end systems.
pub const EDGE_MAX_BPS: f64 = 10e9;
/// What a generated port carries at most, as a share of its link's rate (a FIFO port's delay
/// bound grows as 1 / (1 - utilisation): a margin, not just "below 1").
pub const TARGET_UTILISATION: f64 = 0.8;
/// End systems per switch when the generator chooses the switches (an AFDX switch has some 24
/// ports).
pub const END_SYSTEMS_PER_SWITCH: usize = 24;

/// What to generate.
#[derive(Clone, Debug)]
pub struct AfdxParams {
    /// VLs, numbered 1.. (VL ids too, when they fit 16 bits).
    pub virtual_links: usize,
    /// Switches per plane; 0: enough for [`END_SYSTEMS_PER_SWITCH`] end systems each, at least 4.
    pub switches: usize,
    /// 0: one end system per 25 VLs, at least two per switch.
    pub end_systems: usize,
    /// 1 or 2 planes (A, B).
    pub planes: usize,
    pub seed: u64,
    /// Rate of end-system links (`defaults.link_rate`), raised where the load needs it.
    pub edge_rate: DataRate,
    /// Slowest rate of switch-to-switch links, raised where the load needs it.
    pub trunk_rate: DataRate,
}

/// How a generated network was sized (see the module docs).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Sizing {
    /// Switches per plane and end systems.
    pub switches: usize,
    pub end_systems: usize,
    /// Links per rate (in bit/s), trunks and end systems' links apart, slowest first.
    pub trunk_rates: Vec<(f64, usize)>,
    pub edge_rates: Vec<(f64, usize)>,
    /// The largest port load over its link's rate, and that port (`node -> peer`).
    pub largest_utilisation: f64,
    pub largest_port: String,
}

impl Default for AfdxParams {
    fn default() -> Self {
        AfdxParams {
            virtual_links: 100,
            switches: 4,
            end_systems: 0,
            planes: 2,
            seed: 1,
            edge_rate: DataRate::from_bps(100e6),
            trunk_rate: DataRate::from_bps(1e9),
        }
    }
}

/// Seed 000 Table 1, one class: VL counts per BAG (2..128 ms) and per frame-length bin.
struct ClassMix {
    name: &'static str,
    bag_counts: [u32; 7],
    size_counts: [u32; 7],
}

const BAGS_MS: [f64; 7] = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0];
/// Frame-length bins in bytes; the seed's "> 1000" bin is closed at the Ethernet maximum.
const SIZE_BINS: [(f64, f64); 7] = [
    (64.0, 100.0),
    (100.0, 200.0),
    (200.0, 400.0),
    (400.0, 600.0),
    (600.0, 800.0),
    (800.0, 1000.0),
    (1000.0, 1518.0),
];
const MIX: [ClassMix; 3] = [
    ClassMix {
        name: "avionics",
        bag_counts: [5, 25, 35, 70, 90, 60, 50],
        size_counts: [180, 70, 35, 20, 15, 10, 5],
    },
    ClassMix {
        name: "multimedia",
        bag_counts: [2, 2, 5, 10, 24, 16, 15],
        size_counts: [0, 1, 5, 8, 12, 18, 25],
    },
    ClassMix {
        name: "best_effort",
        bag_counts: [2, 2, 6, 25, 60, 32, 20],
        size_counts: [5, 8, 16, 35, 50, 20, 18],
    },
];

/// How often each class is drawn: its number of VLs in Table 1, by the BAG column (the size
/// column's sums differ, I-000-1; the grand totals agree).
fn class_weights() -> Vec<u32> {
    MIX.iter().map(|c| c.bag_counts.iter().sum()).collect()
}

fn pick(rng: &mut ChaCha8Rng, weights: &[u32]) -> usize {
    let total: u32 = weights.iter().sum();
    let mut x = rng.gen_range(0..total);
    for (i, &w) in weights.iter().enumerate() {
        if x < w {
            return i;
        }
        x -= w;
    }
    weights.len() - 1
}

/// Generates the description, sized for its load (see the module docs); it validates (a test
/// checks that, with no port above [`TARGET_UTILISATION`]). Panics on what [`afdx_sized`]
/// refuses: for tests and benchmarks of sizes known to fit.
pub fn afdx(p: &AfdxParams) -> NetworkSpec {
    afdx_sized(p).unwrap_or_else(|e| panic!("{e}")).0
}

/// Switches per plane for `p` (its own count, or the generator's choice).
fn switch_count(p: &AfdxParams) -> usize {
    if p.switches > 0 {
        return p.switches;
    }
    let es = if p.end_systems > 0 { p.end_systems } else { (p.virtual_links / 25).max(2) };
    es.div_ceil(END_SYSTEMS_PER_SWITCH).max(4)
}

/// Generates the description and says how it was sized, or why it cannot be (one line).
pub fn afdx_sized(p: &AfdxParams) -> Result<(NetworkSpec, Sizing), String> {
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let n_sw = switch_count(p);
    let n_es = if p.end_systems > 0 { p.end_systems } else { (p.virtual_links / 25).max(2 * n_sw) };
    let plane_names: Vec<String> =
        ["A", "B"].iter().take(p.planes.clamp(1, 2)).map(|s| s.to_string()).collect();

    let end_systems: Vec<EndSystem> = (0..n_es)
        .map(|i| EndSystem {
            name: format!("ES{}", i + 1),
            scheduler: None,
            buffer: None,
            technological_latency: None,
            receive_latency: None,
        })
        .collect();
    let sw_name = |plane: &str, k: usize| format!("SW{plane}{}", k + 1);
    let mut switches = Vec::new();
    let mut links = Vec::new();
    for plane in &plane_names {
        for k in 0..n_sw {
            switches.push(Switch {
                name: sw_name(plane, k),
                plane: Some(plane.clone()),
                technological_latency: Some(Duration::from_us(16.0)),
                switching: None,
                scheduler: None,
                buffer: None,
                ports: BTreeMap::new(),
            });
            if k > 0 {
                // Tree: switch k hangs off switch (k-1)/2.
                links.push(Link {
                    name: None,
                    from: sw_name(plane, (k - 1) / 2),
                    from_port: None,
                    to: sw_name(plane, k),
                    to_port: None,
                    rate: None, // sized below: the trunk to switch k
                    propagation_delay: None,
                    plane: None,
                });
            }
        }
        for (i, es) in end_systems.iter().enumerate() {
            links.push(Link {
                name: None,
                from: es.name.clone(),
                from_port: Some(plane.clone()),
                to: sw_name(plane, i % n_sw),
                to_port: None,
                rate: None, // sized below: end system i's link
                propagation_delay: None,
                plane: None,
            });
        }
    }

    let classes: Vec<TrafficClass> = MIX
        .iter()
        .enumerate()
        .map(|(i, c)| TrafficClass { name: c.name.to_string(), priority: i as u32, description: None })
        .collect();
    let class_weights = class_weights();

    let mut flows = Vec::with_capacity(p.virtual_links);
    for v in 0..p.virtual_links {
        let class = &MIX[pick(&mut rng, &class_weights)];
        let bag = BAGS_MS[pick(&mut rng, &class.bag_counts)];
        let (lo, hi) = SIZE_BINS[pick(&mut rng, &class.size_counts)];
        let lmax = rng.gen_range(lo..=hi).round();
        let lmin = rng.gen_range(64.0..=lmax).round();
        let source = rng.gen_range(0..n_es);
        let fanout = if rng.gen_bool(0.67) { 1 } else { rng.gen_range(2..=5usize).min(n_es - 1) };
        let mut dests: Vec<usize> = Vec::with_capacity(fanout);
        while dests.len() < fanout {
            // Half the destinations sit on the source's own switch: avionics functions cluster.
            let d = if rng.gen_bool(0.5) && n_es > n_sw {
                let same = (source % n_sw..n_es).step_by(n_sw).count();
                source % n_sw + n_sw * rng.gen_range(0..same)
            } else {
                rng.gen_range(0..n_es)
            };
            if d != source && !dests.contains(&d) {
                dests.push(d);
            }
        }
        flows.push(Flow {
            name: format!("VL{}", v + 1),
            source: end_systems[source].name.clone(),
            destinations: dests.iter().map(|&d| Destination::Name(end_systems[d].name.clone())).collect(),
            class: Some(class.name.to_string()),
            deadline: None,
            planes: None,
            traffic: Traffic::VirtualLink {
                // VL ids are 16 bits: a network with more VLs than that (beyond what AFDX can
                // address, useful to stress the tools) gets none rather than repeated ones.
                id: (p.virtual_links <= 0xFFFF).then_some((v + 1) as u32),
                bag: Duration::from_ms(bag),
                lmin: DataSize::from_bytes(lmin),
                lmax: DataSize::from_bytes(lmax),
                release_jitter: Duration(0.0),
                skew_max: None,
                messages: Vec::new(),
            },
        });
    }

    let sizing = size_links(p, n_sw, n_es, &flows, &mut links)?;
    let spec = NetworkSpec {
        name: format!("afdx-{}vl-{}sw-seed{}", p.virtual_links, n_sw, p.seed),
        description: Some("Synthetic AFDX network (BAG and frame mix after seed 000 Table 1)".to_string()),
        defaults: Defaults { link_rate: p.edge_rate, ..Defaults::default() },
        redundancy: (plane_names.len() > 1).then(|| Redundancy {
            planes: plane_names.clone(),
            sending_skew: Duration::from_ms(0.5),
            skew_max: Duration::from_ms(2.0),
        }),
        classes,
        schedulers: BTreeMap::new(),
        end_systems,
        switches,
        links,
        flows,
        ..Default::default()
    };
    Ok((spec, sizing))
}

/// Sets every link's rate for the load the flows put on its ports (see the module docs). The
/// links are each plane's trunks (to switch 1, 2, ... of the tree) then its end systems' links,
/// in the order `afdx_sized` made them; every plane carries every flow, so one plane's loads
/// size them all.
fn size_links(
    p: &AfdxParams,
    n_sw: usize,
    n_es: usize,
    flows: &[Flow],
    links: &mut [Link],
) -> Result<Sizing, String> {
    let ifg = Defaults::default().interframe_overhead.bits();
    // Per end system: sent and received; per switch k > 0: up (k -> parent) and down.
    let (mut sent, mut received) = (vec![0.0; n_es], vec![0.0; n_es]);
    let (mut up, mut down) = (vec![0.0; n_sw], vec![0.0; n_sw]);
    // The generator names end system i "ES{i + 1}".
    let es_index = |name: &str| name[2..].parse::<usize>().expect("generated end system names") - 1;
    let mut crossed: Vec<(usize, bool)> = Vec::new();
    for f in flows {
        let Traffic::VirtualLink { bag, lmax, .. } = &f.traffic else { continue };
        let rate = (lmax.bits() + ifg) / bag.secs();
        let src = es_index(&f.source);
        sent[src] += rate;
        crossed.clear();
        for d in &f.destinations {
            let Destination::Name(d) = d else { continue };
            let d = es_index(d);
            received[d] += rate;
            // The tree path between the two switches: up from the source's, down to the
            // destination's (switch k's parent is (k - 1) / 2); a multicast VL crosses a port once.
            let (mut a, mut b) = (src % n_sw, d % n_sw);
            while a != b {
                if a > b {
                    crossed.push((a, true));
                    a = (a - 1) / 2;
                } else {
                    crossed.push((b, false));
                    b = (b - 1) / 2;
                }
            }
        }
        crossed.sort_unstable();
        crossed.dedup();
        for &(k, upward) in &crossed {
            if upward {
                up[k] += rate;
            } else {
                down[k] += rate;
            }
        }
    }
    let pick = |load: f64, from: f64, to: f64| -> Option<f64> {
        LINK_RATES_BPS.iter().copied().find(|&r| r >= from && r <= to && load <= TARGET_UTILISATION * r)
    };
    let gbps = |bps: f64| format!("{:.3} Gbit/s", bps / 1e9);
    let edge_from = p.edge_rate.bps();
    let mut sizing = Sizing { switches: n_sw, end_systems: n_es, ..Default::default() };
    let count = |rates: &mut Vec<(f64, usize)>, r: f64| match rates.iter_mut().find(|(x, _)| *x == r) {
        Some((_, n)) => *n += 1,
        None => rates.push((r, 1)),
    };
    let mut trunk_rate = vec![0.0; n_sw];
    for k in 1..n_sw {
        let load = up[k].max(down[k]);
        trunk_rate[k] = pick(load, p.trunk_rate.bps(), f64::INFINITY).ok_or_else(|| {
            format!(
                "the trunk to switch {} would carry {}, more than {:.0} % of the fastest link ({}): \
                 too much traffic crosses the tree there for any link (fewer virtual links)",
                k + 1,
                gbps(load),
                TARGET_UTILISATION * 100.0,
                gbps(LINK_RATES_BPS[LINK_RATES_BPS.len() - 1])
            )
        })?;
    }
    let mut edge_rate = vec![0.0; n_es];
    for e in 0..n_es {
        let load = sent[e].max(received[e]);
        edge_rate[e] = pick(load, edge_from, EDGE_MAX_BPS.max(edge_from)).ok_or_else(|| {
            format!(
                "end system ES{} would {} {}, more than {:.0} % of the fastest end-system link ({}): \
                 more end systems (--end-systems) share the virtual links",
                e + 1,
                if sent[e] >= received[e] { "send" } else { "receive" },
                gbps(load),
                TARGET_UTILISATION * 100.0,
                gbps(EDGE_MAX_BPS)
            )
        })?;
    }
    let per_plane = (n_sw - 1) + n_es;
    for (i, link) in links.iter_mut().enumerate() {
        let j = i % per_plane;
        let (rate, loads, what) = if j < n_sw - 1 {
            let k = j + 1;
            (trunk_rate[k], (up[k], down[k]), (link.to.clone(), link.from.clone()))
        } else {
            let e = j - (n_sw - 1);
            (edge_rate[e], (sent[e], received[e]), (link.from.clone(), link.to.clone()))
        };
        if i < per_plane {
            if j < n_sw - 1 {
                count(&mut sizing.trunk_rates, rate);
            } else {
                count(&mut sizing.edge_rates, rate);
            }
            for (load, port) in [
                (loads.0, format!("{} -> {}", what.0, what.1)),
                (loads.1, format!("{} -> {}", what.1, what.0)),
            ] {
                if load / rate > sizing.largest_utilisation {
                    sizing.largest_utilisation = load / rate;
                    sizing.largest_port = port;
                }
            }
        }
        // An end system's link at the edge rate takes it from defaults.link_rate.
        link.rate = (j < n_sw - 1 || rate != edge_from).then(|| DataRate::from_bps(rate));
    }
    sizing.trunk_rates.sort_by(|a, b| a.0.total_cmp(&b.0));
    sizing.edge_rates.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(sizing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{info::info, validate_spec};

    #[test]
    fn generated_networks_validate_without_overload() {
        // 50,000 VLs on 32 switches loaded the tree's top trunks at 1 Gbit/s to 179 % before the
        // generator sized them.
        for (vls, sw, seed) in [(10, 1, 1), (200, 3, 2), (5000, 16, 3), (50_000, 32, 1)] {
            let (spec, sizing) =
                afdx_sized(&AfdxParams { virtual_links: vls, switches: sw, seed, ..Default::default() })
                    .unwrap();
            let (net, diags) = validate_spec(spec);
            let net = net.unwrap_or_else(|| panic!("{:?}", diags.0));
            assert_eq!(net.flows.len(), vls);
            assert_eq!(net.planes.len(), 2);
            let i = info(&net);
            assert_eq!(i.overloaded_ports, 0, "overloaded ports at {vls} VLs");
            // The engine's own loads: every port within the target, the largest the one the
            // generator reports.
            let largest = i.ports.iter().map(|p| p.utilisation).fold(0.0, f64::max);
            assert!(largest <= TARGET_UTILISATION + 1e-9, "{vls} VLs: {largest}");
            assert!((largest - sizing.largest_utilisation).abs() < 1e-9, "{largest} vs {sizing:?}");
            // Sized up only where needed: a trunk at the next slower rate would be above the target.
            for p in i
                .ports
                .iter()
                .filter(|p| p.rate_bps > 1e9 && p.node.starts_with("SW") && p.peer.starts_with("SW"))
            {
                let slower = LINK_RATES_BPS.iter().rev().find(|&&r| r < p.rate_bps).unwrap();
                let other =
                    i.ports.iter().filter(|q| q.link == p.link).map(|q| q.load_bps).fold(0.0, f64::max);
                assert!(other > TARGET_UTILISATION * slower, "{} at {} could be slower", p.link, p.rate_bps);
            }
        }
    }

    #[test]
    fn the_issue_s_100000_virtual_links_on_64_switches_are_sized() {
        // Every route of this network was unbounded (switch ports at up to 348 %): now its top
        // trunks are faster, every port within the target.
        let p = AfdxParams { virtual_links: 100_000, switches: 64, seed: 1, ..Default::default() };
        let (spec, sizing) = afdx_sized(&p).unwrap();
        assert!(sizing.largest_utilisation <= TARGET_UTILISATION, "{sizing:?}");
        assert!(sizing.trunk_rates.iter().any(|&(r, _)| r > 1e9), "{sizing:?}");
        assert_eq!(sizing.trunk_rates.iter().map(|(_, n)| n).sum::<usize>(), 63);
        assert_eq!(spec.switches.len(), 128);
    }

    #[test]
    fn end_systems_links_take_the_default_rate_and_trunks_their_own() {
        let p = AfdxParams { virtual_links: 200, switches: 3, planes: 1, ..Default::default() };
        let (spec, _) = afdx_sized(&p).unwrap();
        assert_eq!(spec.defaults.link_rate.bps(), 100e6);
        for l in &spec.links {
            let trunk = l.from.starts_with("SW") && l.to.starts_with("SW");
            assert_eq!(l.rate.is_some(), trunk, "{l:?}");
        }
    }

    #[test]
    fn without_a_switch_count_enough_switches_for_the_end_systems() {
        let count = |vls, es| {
            switch_count(&AfdxParams {
                virtual_links: vls,
                switches: 0,
                end_systems: es,
                ..Default::default()
            })
        };
        assert_eq!(count(100, 0), 4);
        assert_eq!(count(100_000, 0), 4000_usize.div_ceil(END_SYSTEMS_PER_SWITCH));
        assert_eq!(count(10, 200), 9);
    }

    #[test]
    fn what_no_link_can_carry_is_refused_in_one_line() {
        // 200,000 VLs from two end systems: some 10 Gbit/s each, above 80 % of 10 Gbit/s.
        let p = AfdxParams {
            virtual_links: 200_000,
            switches: 1,
            end_systems: 2,
            planes: 1,
            ..Default::default()
        };
        let e = afdx_sized(&p).unwrap_err();
        assert!(e.starts_with("end system ES") && e.contains("more end systems") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn vl_ids_never_repeat() {
        let ids = |vls: usize| -> Vec<Option<u32>> {
            let spec = afdx(&AfdxParams { virtual_links: vls, switches: 2, planes: 1, ..Default::default() });
            spec.flows
                .iter()
                .map(|f| match &f.traffic {
                    Traffic::VirtualLink { id, .. } => *id,
                    _ => None,
                })
                .collect()
        };
        // 65,535 VLs: ids 1..=65535 (16 bits); one more and none (ids used to wrap to 0 and 1).
        let small = ids(0xFFFF);
        assert_eq!((small[0], small[0xFFFE]), (Some(1), Some(0xFFFF)));
        assert!(ids(0x1_0000).iter().all(Option::is_none));
    }

    /// TV-000-1: the mix is seed 000's Table 1 as printed, bin by bin, with its column sums:
    /// avionics 335 / 335, multimedia 74 / 69, data 147 / 152 (BAG / size), grand totals 556
    /// each. The per-class columns disagree (I-000-1); classes are drawn by the BAG column.
    #[test]
    fn tv_000_1_table_1() {
        type Printed = (&'static str, [u32; 7], [u32; 7], u32, u32);
        let printed: [Printed; 3] = [
            ("avionics", [5, 25, 35, 70, 90, 60, 50], [180, 70, 35, 20, 15, 10, 5], 335, 335),
            ("multimedia", [2, 2, 5, 10, 24, 16, 15], [0, 1, 5, 8, 12, 18, 25], 74, 69),
            ("best_effort", [2, 2, 6, 25, 60, 32, 20], [5, 8, 16, 35, 50, 20, 18], 147, 152),
        ];
        for (class, (name, bags, sizes, bag_sum, size_sum)) in MIX.iter().zip(printed) {
            assert_eq!((class.name, class.bag_counts, class.size_counts), (name, bags, sizes));
            let sum = |c: &[u32; 7]| c.iter().sum::<u32>();
            assert_eq!((sum(&class.bag_counts), sum(&class.size_counts)), (bag_sum, size_sum), "{name}");
        }
        let total = |col: fn(&ClassMix) -> [u32; 7]| MIX.iter().flat_map(col).sum::<u32>();
        assert_eq!((total(|c| c.bag_counts), total(|c| c.size_counts)), (556, 556));
        assert_eq!(BAGS_MS, [2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]);
        let edges: Vec<f64> = SIZE_BINS.iter().map(|b| b.1).collect();
        assert_eq!(edges, [100.0, 200.0, 400.0, 600.0, 800.0, 1000.0, 1518.0]);
        assert_eq!(class_weights(), [335, 74, 147]);
    }

    #[test]
    fn same_seed_same_network() {
        let a = serde_json::to_string(&afdx(&AfdxParams { seed: 7, ..Default::default() })).unwrap();
        let b = serde_json::to_string(&afdx(&AfdxParams { seed: 7, ..Default::default() })).unwrap();
        let c = serde_json::to_string(&afdx(&AfdxParams { seed: 8, ..Default::default() })).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}

/// Egress schedulers a random network may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandomSchedulers {
    Fifo,
    StaticPriority,
    /// Each port draws FIFO or static priority.
    Mixed,
    /// Each port draws any scheduler with a service model: FIFO, static priority, WRR, DRR,
    /// D2DRR, WF2Q, SCFQ, a token-bucket shaper, or an arbitration table (AS basic, IBA
    /// weighted, DTable with weights above the frames or partly below them).
    Any,
    /// Every switch port runs the named configuration: a built-in name or one of
    /// [`sample_schedulers`].
    Only(&'static str),
}

/// The sample configurations random networks draw from, by name, each with the kind of
/// scheduler it is (`fifo`, `drr`, ...): at least one per kind the format has (the scheduler
/// soundness tests check it), and shapers around several inner disciplines.
pub fn sample_schedulers() -> Vec<(String, &'static str)> {
    let mut out: Vec<(String, &'static str)> =
        vec![("fifo".into(), "fifo"), ("static_priority".into(), "static_priority")];
    out.extend(random_scheduler_configs().into_iter().map(|(name, c)| (name, c.kind_name())));
    out
}

/// Named scheduler configurations over classes c0, c1, c2 for random networks.
fn random_scheduler_configs() -> BTreeMap<String, SchedulerConfig> {
    let classes =
        |v: [f64; 3]| -> BTreeMap<String, f64> { (0..3).map(|k| (format!("c{k}"), v[k])).collect() };
    let mut m = BTreeMap::new();
    m.insert(
        "wrr".into(),
        SchedulerConfig::Wrr { weights: (0..3).map(|k| (format!("c{k}"), 3 - k as u32)).collect() },
    );
    m.insert(
        "drr".into(),
        SchedulerConfig::Drr {
            quanta: (0..3)
                .map(|k| (format!("c{k}"), DataSize::from_bytes([3000.0, 1500.0, 500.0][k])))
                .collect(),
        },
    );
    m.insert(
        "d2drr".into(),
        SchedulerConfig::D2drr {
            base_quantum: DataSize::from_bytes(1000.0),
            factors: classes([6.0, 3.0, 1.0]),
        },
    );
    m.insert("wf2q".into(), SchedulerConfig::Wf2q { weights: classes([4.0, 2.0, 1.0]) });
    m.insert("scfq".into(), SchedulerConfig::Scfq { weights: classes([1.0, 1.0, 2.0]) });
    let table = |kind: TableKind, entries: &[(usize, f64)]| SchedulerConfig::Table {
        table_kind: kind,
        entries: entries
            .iter()
            .map(|&(k, bytes)| TableEntry { class: format!("c{k}"), weight: DataSize::from_bytes(bytes) })
            .collect(),
    };
    // Interleaved layouts with unequal distances; AS ignores the weights.
    m.insert(
        "as_table".into(),
        table(TableKind::AsBasic, &[(0, 1.0), (1, 1.0), (0, 1.0), (2, 1.0), (0, 1.0)]),
    );
    m.insert(
        "iba_table".into(),
        table(TableKind::IbaWeighted, &[(0, 2176.0), (1, 1024.0), (0, 640.0), (2, 64.0), (1, 1518.0)]),
    );
    m.insert(
        "dtable".into(),
        table(TableKind::Dtable, &[(0, 1518.0), (1, 3000.0), (0, 2000.0), (2, 1600.0), (1, 1518.0)]),
    );
    // Weights below the largest frames (outside the paper's constraint): entries bank weight.
    m.insert(
        "dtable_small".into(),
        table(TableKind::Dtable, &[(0, 300.0), (2, 1000.0), (1, 500.0), (0, 200.0), (1, 64.0)]),
    );
    m.insert(
        "shaper".into(),
        SchedulerConfig::TokenBucket {
            rate: DataRate::from_bps(1e9),
            burst: DataSize::from_bytes(3000.0),
            inner: Some("static_priority".into()),
        },
    );
    // Credit-based shapers within the slowest link (10 Mb/s): the two highest classes shaped over
    // best effort, and a shaped class below an unshaped one.
    let slopes = |v: &[(usize, f64)]| -> BTreeMap<String, DataRate> {
        v.iter().map(|&(k, r)| (format!("c{k}"), DataRate::from_bps(r))).collect()
    };
    m.insert("cbs".into(), SchedulerConfig::Cbs { idle_slopes: slopes(&[(0, 5e6), (1, 4e6)]), gates: None });
    m.insert("cbs_mid".into(), SchedulerConfig::Cbs { idle_slopes: slopes(&[(1, 6e6)]), gates: None });
    // Time-aware shapers: every window longer than a largest frame at 10 Mb/s (1.23 ms); c0 alone,
    // c1 and c2 together, then all three; and one where c2 has two windows.
    let gate = |open: &[usize], us: f64| GateEntry {
        open: open.iter().map(|k| format!("c{k}")).collect(),
        duration: Duration::from_us(us),
    };
    m.insert(
        "tas".into(),
        SchedulerConfig::Tas {
            cycle: Duration::from_us(4000.0),
            base_time: Duration::from_us(0.0),
            entries: vec![gate(&[0], 1500.0), gate(&[1, 2], 1500.0), gate(&[0, 1, 2], 1000.0)],
            scheduled: Vec::new(),
            sync_error: Duration::default(),
        },
    );
    m.insert(
        "tas_split".into(),
        SchedulerConfig::Tas {
            cycle: Duration::from_us(6000.0),
            base_time: Duration::from_us(250.0),
            entries: vec![
                gate(&[0, 2], 1500.0),
                gate(&[1], 1500.0),
                gate(&[0, 1], 1500.0),
                gate(&[2], 1500.0),
            ],
            scheduled: Vec::new(),
            sync_error: Duration::default(),
        },
    );
    // Credit-based shapers behind a gate list: c0 and c1 shaped, c2 open in every entry (so
    // its frames may be on the wire as the shaped classes' windows open), c1 in two windows.
    m.insert(
        "cbs_tas".into(),
        SchedulerConfig::Cbs {
            idle_slopes: slopes(&[(0, 4e6), (1, 3e6)]),
            gates: Some(crate::model::GateSchedule {
                cycle: Duration::from_us(7000.0),
                base_time: Duration::from_us(300.0),
                entries: vec![gate(&[0, 1, 2], 3000.0), gate(&[2], 1500.0), gate(&[1, 2], 2500.0)],
            }),
        },
    );
    // Asynchronous traffic shaping: the two highest classes regulated over an unregulated best
    // effort class, and every class regulated.
    let names = |v: &[usize]| -> Vec<String> { v.iter().map(|k| format!("c{k}")).collect() };
    m.insert("ats".into(), SchedulerConfig::Ats { classes: names(&[0, 1]) });
    m.insert("ats_all".into(), SchedulerConfig::Ats { classes: names(&[0, 1, 2]) });
    // Shapers that cut the link rate, around FIFO and around a per-class discipline.
    m.insert(
        "shaper_fifo".into(),
        SchedulerConfig::TokenBucket {
            rate: DataRate::from_bps(80e6),
            burst: DataSize::from_bytes(3100.0),
            inner: None,
        },
    );
    m.insert(
        "shaper_drr".into(),
        SchedulerConfig::TokenBucket {
            rate: DataRate::from_bps(90e6),
            burst: DataSize::from_bytes(1600.0),
            inner: Some("drr".into()),
        },
    );
    m
}

/// A small random network for property tests (analysis vs analysis, analysis vs simulation):
/// a tree of 1-4 switches per plane, 2-8 end systems, 1-16 virtual links with multicast, one or
/// two planes, technological latencies, random link rates, and loads up to about 0.9 on the
/// busiest port (BAGs are shortened until the target load is reached).
pub fn random_small(seed: u64, schedulers: RandomSchedulers) -> NetworkSpec {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n_sw = rng.gen_range(1..=4usize);
    let n_es = rng.gen_range(2..=8usize);
    let n_vl = rng.gen_range(1..=16usize);
    let planes: Vec<String> = if rng.gen_bool(0.3) { vec!["A".into(), "B".into()] } else { vec!["A".into()] };
    let classes: Vec<TrafficClass> =
        (0..3).map(|k| TrafficClass { name: format!("c{k}"), priority: k, description: None }).collect();
    let rates = [10e6, 100e6, 1e9];
    let end_systems: Vec<EndSystem> = (0..n_es)
        .map(|i| EndSystem {
            name: format!("ES{}", i + 1),
            scheduler: None,
            buffer: None,
            technological_latency: Some(Duration::from_us(rng.gen_range(0..=40) as f64)),
            receive_latency: None,
        })
        .collect();
    let mut switches = Vec::new();
    let mut links = Vec::new();
    for plane in &planes {
        for k in 0..n_sw {
            let sched = match schedulers {
                RandomSchedulers::Fifo => "fifo",
                RandomSchedulers::StaticPriority => "static_priority",
                RandomSchedulers::Mixed => ["fifo", "static_priority"][rng.gen_range(0..2)],
                RandomSchedulers::Any => {
                    const ANY: [&str; 12] = [
                        "fifo",
                        "static_priority",
                        "wrr",
                        "drr",
                        "d2drr",
                        "wf2q",
                        "scfq",
                        "shaper",
                        "as_table",
                        "iba_table",
                        "dtable",
                        "dtable_small",
                    ];
                    ANY[rng.gen_range(0..ANY.len())]
                }
                RandomSchedulers::Only(name) => name,
            };
            switches.push(Switch {
                name: format!("SW{plane}{}", k + 1),
                plane: Some(plane.clone()),
                technological_latency: Some(Duration::from_us(rng.gen_range(0..=20) as f64)),
                switching: None,
                scheduler: Some(sched.to_string()),
                buffer: None,
                ports: BTreeMap::new(),
            });
            if k > 0 {
                links.push(Link {
                    name: None,
                    from: format!("SW{plane}{}", rng.gen_range(0..k) + 1),
                    from_port: None,
                    to: format!("SW{plane}{}", k + 1),
                    to_port: None,
                    rate: Some(DataRate::from_bps(rates[rng.gen_range(1..3)])),
                    propagation_delay: Some(Duration::from_us(rng.gen_range(0..=2) as f64)),
                    plane: None,
                });
            }
        }
        for (i, es) in end_systems.iter().enumerate() {
            links.push(Link {
                name: None,
                from: es.name.clone(),
                from_port: Some(plane.clone()),
                to: format!("SW{plane}{}", (i * 7 + 3) % n_sw + 1),
                to_port: None,
                rate: Some(DataRate::from_bps(rates[rng.gen_range(0..2)])),
                propagation_delay: None,
                plane: None,
            });
        }
    }
    let mut flows: Vec<Flow> = (0..n_vl)
        .map(|v| {
            let source = rng.gen_range(0..n_es);
            let fanout = rng.gen_range(1..=3usize).min(n_es - 1);
            let mut dests: Vec<usize> = Vec::new();
            while dests.len() < fanout {
                let d = rng.gen_range(0..n_es);
                if d != source && !dests.contains(&d) {
                    dests.push(d);
                }
            }
            let lmax = rng.gen_range(64..=1518) as f64;
            let lmin = rng.gen_range(64..=lmax as i32) as f64;
            Flow {
                name: format!("VL{}", v + 1),
                source: end_systems[source].name.clone(),
                destinations: dests.iter().map(|&d| Destination::Name(end_systems[d].name.clone())).collect(),
                class: Some(format!("c{}", rng.gen_range(0..3))),
                deadline: None,
                planes: None,
                traffic: Traffic::VirtualLink {
                    id: Some(v as u32 + 1),
                    bag: Duration::from_ms(128.0),
                    lmin: DataSize::from_bytes(lmin),
                    lmax: DataSize::from_bytes(lmax),
                    release_jitter: Duration::from_us([0.0, 0.0, 100.0][rng.gen_range(0..3)]),
                    skew_max: None,
                    messages: Vec::new(),
                },
            }
        })
        .collect();
    let mut spec = NetworkSpec {
        name: format!("random-{seed}"),
        description: None,
        defaults: Defaults::default(),
        redundancy: (planes.len() > 1).then(|| Redundancy {
            planes: planes.clone(),
            sending_skew: Duration::from_ms(0.5),
            skew_max: Duration::from_ms(2.0),
        }),
        classes,
        schedulers: if matches!(schedulers, RandomSchedulers::Any | RandomSchedulers::Only(_)) {
            random_scheduler_configs()
        } else {
            BTreeMap::new()
        },
        end_systems,
        switches,
        links,
        flows: Vec::new(),
        ..Default::default()
    };
    // Halve BAGs of random VLs while the busiest port stays under the drawn target load.
    let target = rng.gen_range(0.05..0.9);
    for _ in 0..200 {
        let v = rng.gen_range(0..flows.len());
        let Traffic::VirtualLink { bag, .. } = &mut flows[v].traffic else { unreachable!() };
        if bag.ms() <= 1.0 {
            continue;
        }
        let old = *bag;
        *bag = Duration::from_ms(old.ms() / 2.0);
        spec.flows = flows.clone();
        let (net, _) = crate::model::validate_spec(spec.clone());
        let Some(net) = net else { unreachable!("random networks validate") };
        let max_util = net.port_loads().iter().zip(&net.ports).map(|(l, p)| l / p.rate).fold(0.0, f64::max);
        if max_util > target {
            let Traffic::VirtualLink { bag, .. } = &mut flows[v].traffic else { unreachable!() };
            *bag = old;
        }
    }
    spec.flows = flows;
    spec
}

/// A random configuration of the scheduler `kind` (as written in files) for one port whose
/// classes `c0`, `c1`, ... have the largest frames `lmax_bytes`: the shares, quanta, weights and
/// tables the schedulers' soundness tests draw, above and far below the frame sizes. Every kind
/// of [`crate::schedulers::KINDS`] has one (a kind without one panics, and the tests fail).
pub fn random_port_scheduler(kind: &str, lmax_bytes: &[u32], rng: &mut ChaCha8Rng) -> SchedulerConfig {
    random_port_scheduler_at(kind, lmax_bytes, 1e9, rng)
}

/// [`random_port_scheduler`] for ports of at least `link_bps`: the rate-dependent parameters (a
/// credit-based shaper's idle slopes, a gate list's windows) drawn for that rate, so that the
/// configuration is valid on every port of a switch whose slowest link it is.
pub fn random_port_scheduler_at(
    kind: &str,
    lmax_bytes: &[u32],
    link_bps: f64,
    rng: &mut ChaCha8Rng,
) -> SchedulerConfig {
    let scale = link_bps / 1e9;
    let n = lmax_bytes.len();
    let class = |k: usize| format!("c{k}");
    let per_class = |rng: &mut ChaCha8Rng, draw: &dyn Fn(&mut ChaCha8Rng) -> f64| -> BTreeMap<String, f64> {
        (0..n).map(|k| (class(k), draw(rng))).collect()
    };
    match kind {
        "fifo" => SchedulerConfig::Fifo,
        "static_priority" => SchedulerConfig::StaticPriority,
        "wrr" => SchedulerConfig::Wrr { weights: (0..n).map(|k| (class(k), rng.gen_range(1..=5))).collect() },
        "drr" => SchedulerConfig::Drr {
            quanta: per_class(rng, &|r| r.gen_range(1..=3000) as f64)
                .into_iter()
                .map(|(c, q)| (c, DataSize::from_bytes(q)))
                .collect(),
        },
        "d2drr" => SchedulerConfig::D2drr {
            base_quantum: DataSize::from_bytes(rng.gen_range(64..=1500) as f64),
            factors: per_class(rng, &|r| r.gen_range(1..=40) as f64 / 10.0),
        },
        "wf2q" => SchedulerConfig::Wf2q { weights: per_class(rng, &|r| r.gen_range(1..=100) as f64 / 10.0) },
        "scfq" => SchedulerConfig::Scfq { weights: per_class(rng, &|r| r.gen_range(1..=100) as f64 / 10.0) },
        "table" => {
            let table_kind =
                [TableKind::AsBasic, TableKind::IbaWeighted, TableKind::Dtable][rng.gen_range(0..3)];
            // DTable weights at least the class's largest frame (as seed 003 requires) in half
            // the tables, anywhere in the others.
            let paper_weights = rng.gen_bool(0.5);
            let n_entries = rng.gen_range(n..=16);
            // Every class gets an entry, the rest are drawn; then the order is shuffled.
            let mut classes: Vec<usize> = (0..n).chain((n..n_entries).map(|_| rng.gen_range(0..n))).collect();
            for k in (1..classes.len()).rev() {
                classes.swap(k, rng.gen_range(0..=k));
            }
            let entries = classes
                .into_iter()
                .map(|k| {
                    let lmax = lmax_bytes[k];
                    let bytes = match table_kind {
                        TableKind::AsBasic => 1,
                        TableKind::Dtable if paper_weights => rng.gen_range(lmax..=3 * lmax),
                        TableKind::Dtable | TableKind::IbaWeighted => rng.gen_range(64..=3000),
                    };
                    TableEntry { class: class(k), weight: DataSize::from_bytes(bytes as f64) }
                })
                .collect();
            SchedulerConfig::Table { table_kind, entries }
        }
        "token_bucket" => SchedulerConfig::TokenBucket {
            rate: DataRate::from_bps(rng.gen_range(10..=100) as f64 * 1e6),
            burst: DataSize::from_bytes((lmax_bytes.iter().max().copied().unwrap_or(1518) + 20) as f64 * 2.0),
            inner: None,
        },
        // Idle slopes on a link of 1 bit per time unit (the port tests' scale), summing to at
        // most 0.9, on a random subset of the classes (at least one).
        "cbs" => {
            let mut idle_slopes = BTreeMap::new();
            let mut left = 0.9;
            for k in 0..n {
                if idle_slopes.is_empty() && k + 1 == n || rng.gen_bool(0.6) {
                    let r = rng.gen_range(0.05..=0.6f64).min(left);
                    if r >= 0.01 {
                        left -= r;
                        idle_slopes.insert(class(k), DataRate::from_bps(r * 1e9 * scale));
                    }
                }
            }
            if idle_slopes.is_empty() {
                idle_slopes.insert(class(n - 1), DataRate::from_bps(0.3e9 * scale));
            }
            SchedulerConfig::Cbs { idle_slopes, gates: None }
        }
        // Gate lists on a link of 1 bit per ns: every class open in a window of at least its
        // largest frame, random phases.
        "tas" => {
            let longest = lmax_bytes.iter().max().copied().unwrap_or(1518) as f64 + 20.0;
            let window = longest * 8.0 * 1e-3 / scale * rng.gen_range(1.0..3.0);
            let entries: Vec<GateEntry> = (0..n)
                .map(|k| GateEntry {
                    open: (0..n).filter(|&j| j == k || rng.gen_bool(0.3)).map(class).collect(),
                    duration: Duration::from_us(window.ceil()),
                })
                .collect();
            let cycle = Duration::from_us(window.ceil() * n as f64);
            SchedulerConfig::Tas {
                cycle,
                base_time: Duration::from_us(rng.gen_range(0.0..10.0f64).floor()),
                entries,
                scheduled: Vec::new(),
                sync_error: Duration::default(),
            }
        }
        // A random non-empty subset of the classes regulated.
        "ats" => {
            let mut classes: Vec<String> = (0..n).filter(|_| rng.gen_bool(0.6)).map(class).collect();
            if classes.is_empty() {
                classes.push(class(rng.gen_range(0..n)));
            }
            SchedulerConfig::Ats { classes }
        }
        other => panic!("no random configuration for the scheduler kind '{other}'"),
    }
}
