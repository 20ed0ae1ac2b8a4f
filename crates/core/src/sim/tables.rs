//! The engine's flat tables, built from the model: each flow's crossings laid out as hops, what
//! the hot path reads copied into small arrays, the event queue's lanes, and the simulator itself
//! with its first releases.

use super::arrivals::ArrivalLog;
use super::destinations::{Receiver, RouteSink};
use super::engine::Ev;
use super::forwarding::{Hop, NO_ROUTE};
use super::ports::ns_per_bit;
use super::ports::{Link, PortQueue, PortSim, Scheduled, NO_WAKE};
use super::queue::{EventQueue, MAX_LANES};
use super::retransmission::NO_TIMEOUT;
use super::scenario::{ScenarioState, ScenarioTables};
use super::sources::{Source, SourceCold, NEVER};
use super::stats::Latency;
use super::*;
use crate::model::{Network, Switching, Traffic};
use crate::schedulers;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// One flow crossing one port (once per multicast tree), with where copies go next, as built
/// from the routes; [`lay_out`] turns them into [`Hop`]s.
pub(super) struct Crossing {
    pub(super) port: u32,
    /// Crossings at the next node's ports (a switch forwarding the copy).
    pub(super) next: Vec<u32>,
    /// The route (stats index) delivered when the next node is that route's destination.
    pub(super) deliver: Option<u32>,
    /// Every route downstream of this crossing (losses here are losses there).
    pub(super) reach: Vec<u32>,
}

/// Crossings as hops, renumbered breadth-first per flow from its first crossings, plane by plane
/// (so a plane's first crossings are consecutive too, and every list of next crossings keeps its
/// order); with every crossing's reach (routes downstream) as offsets into one array, and each
/// flow's (plane, first crossing, count).
#[allow(clippy::type_complexity)]
pub(super) fn lay_out(
    crossings: &[Crossing],
    starts: &[Vec<(u8, Vec<u32>)>],
) -> (Vec<Hop>, Vec<u32>, Vec<u32>, Vec<Vec<(u8, u32, u32)>>) {
    let mut new_id = vec![u32::MAX; crossings.len()];
    let mut order: Vec<u32> = Vec::with_capacity(crossings.len());
    let mut sources = Vec::with_capacity(starts.len());
    for planes in starts {
        let head = order.len();
        let mut src = Vec::with_capacity(planes.len());
        for (plane, firsts) in planes {
            src.push((*plane, order.len() as u32, firsts.len() as u32));
            for &c in firsts {
                new_id[c as usize] = order.len() as u32;
                order.push(c);
            }
        }
        let mut i = head;
        while i < order.len() {
            for &d in &crossings[order[i] as usize].next {
                new_id[d as usize] = order.len() as u32;
                order.push(d);
            }
            i += 1;
        }
        sources.push(src);
    }
    assert_eq!(order.len(), crossings.len(), "every crossing follows from a flow's first crossings");
    let mut reach_at = Vec::with_capacity(crossings.len() + 1);
    let mut reach = Vec::new();
    let hops = order
        .iter()
        .map(|&c| {
            let c = &crossings[c as usize];
            reach_at.push(reach.len() as u32);
            reach.extend_from_slice(&c.reach);
            let first_next = c.next.first().map_or(0, |&d| new_id[d as usize]);
            debug_assert!(c
                .next
                .iter()
                .enumerate()
                .all(|(k, &d)| new_id[d as usize] == first_next + k as u32));
            Hop {
                port: c.port,
                deliver: c.deliver.unwrap_or(NO_ROUTE),
                first_next,
                n_next: c.next.len() as u32,
            }
        })
        .collect();
    reach_at.push(reach.len() as u32);
    (hops, reach_at, reach, sources)
}

/// What the hot path reads, copied out of the model into small flat arrays (the model's records
/// are large; reaching into them for each frame costs a cache miss).
pub(super) struct Hot {
    pub(super) flow_class: Vec<u16>,
    pub(super) port_prop_ns: Vec<i64>,
    pub(super) port_peer: Vec<u32>,
    pub(super) node_latency_ns: Vec<i64>,
    pub(super) node_receive_ns: Vec<i64>,
    pub(super) node_cut_through: Vec<bool>,
    pub(super) ifg_bits: u32,
    /// Switches police VLs at their inputs.
    pub(super) policing: bool,
    /// Per port, what a frame leaving it reads (see [`PortNext`]).
    pub(super) port_next: Vec<PortNext>,
}

/// What a frame leaving a port needs of the link and the node after it, in one record (one
/// bounds check and one line, where separate tables took five of each): the link's propagation
/// delay, the peer node's technological latency and whether it cuts through, and the event
/// queue's lane of a delivery there and of a forwarding switch's next port, or [`NO_LANE`].
#[derive(Clone, Copy)]
#[repr(C, align(32))]
pub(super) struct PortNext {
    pub(super) prop_ns: i64,
    pub(super) peer_latency_ns: i64,
    pub(super) peer: u32,
    pub(super) arrive_lane: u8,
    pub(super) forward_lane: u8,
    pub(super) peer_cut_through: bool,
}

impl Hot {
    pub(super) fn of(net: &Network) -> Hot {
        let ns = |s: f64| (s * 1e9).round() as i64;
        Hot {
            flow_class: net.flows.iter().map(|f| f.class.map_or(u16::MAX, |k| k as u16)).collect(),
            port_prop_ns: net.ports.iter().map(|p| ns(p.propagation_delay)).collect(),
            port_peer: net.ports.iter().map(|p| p.peer as u32).collect(),
            node_latency_ns: net.nodes.iter().map(|n| ns(n.technological_latency)).collect(),
            node_receive_ns: net.nodes.iter().map(|n| ns(n.receive_latency)).collect(),
            node_cut_through: net.nodes.iter().map(|n| n.switching == Switching::CutThrough).collect(),
            ifg_bits: net.spec.defaults.interframe_overhead.as_bits() as u32,
            policing: net.spec.defaults.policing_jitter.is_some(),
            port_next: Vec::new(),
        }
    }
}

/// Nominal time between two frames of a flow's contract, ns.
pub(super) fn period_ns(traffic: &Traffic) -> i64 {
    match traffic {
        Traffic::VirtualLink { bag, .. } => bag.as_ns(),
        Traffic::Periodic { period, .. } => period.as_ns(),
        Traffic::TokenBucket { max_packet, rate, .. } => {
            (max_packet.bits() / rate.bps() * 1e9).round() as i64
        }
    }
}

/// A flow's smallest and largest frame, bytes.
pub(super) fn size_range(traffic: &Traffic) -> (f64, f64) {
    match traffic {
        Traffic::VirtualLink { lmin, lmax, .. } => (lmin.bytes(), lmax.bytes()),
        Traffic::Periodic { size, min_size, .. } => (min_size.unwrap_or(*size).bytes(), size.bytes()),
        Traffic::TokenBucket { min_packet, max_packet, .. } => (min_packet.bytes(), max_packet.bytes()),
    }
}

/// No lane in the event queue.
pub(super) const NO_LANE: u8 = u8::MAX;

/// Delays worth a FIFO lane in the event queue: zero (regulators and shapers due now); the most
/// frequent delays from a scheduled port's end of transmission to the copy's next event (a
/// store-and-forward switch's propagation plus technological latency, a destination's
/// propagation), counted over the hops leaving such ports, up to [`MAX_LANES`] in all. (A FIFO
/// port forwards as it schedules, a variable time ahead: its hops need no lane.)
pub(super) fn lane_delays(hot: &Hot, hops: &[Hop], ports: &[PortSim]) -> Vec<i64> {
    let mut count: BTreeMap<i64, u64> = BTreeMap::new();
    for h in hops.iter().filter(|h| matches!(ports[h.port as usize].queue, PortQueue::Scheduled(_))) {
        let prop = hot.port_prop_ns[h.port as usize];
        let node = hot.port_peer[h.port as usize] as usize;
        if h.deliver != NO_ROUTE {
            *count.entry(prop).or_default() += 1;
        } else if h.n_next > 0 && !hot.node_cut_through[node] {
            *count.entry(prop + hot.node_latency_ns[node]).or_default() += 1;
        }
    }
    count.remove(&0);
    let mut by_count: Vec<(u64, i64)> = count.into_iter().map(|(d, n)| (n, d)).collect();
    by_count.sort_by_key(|&(n, d)| (std::cmp::Reverse(n), d));
    std::iter::once(0).chain(by_count.iter().take(MAX_LANES - 1).map(|&(_, d)| d)).collect()
}

impl Simulator {
    /// `arrival_batch`: arrivals logged between two batches (0: the engine's choice), `None` for
    /// arrival events. `scenario`: a scenario already resolved (else `cfg.scenario`'s, if any).
    pub(super) fn build(
        net: &Network,
        cfg: SimConfig,
        generic_fifo: bool,
        arrival_batch: Option<usize>,
        scenario: Option<ScenarioTables>,
    ) -> Result<Simulator, String> {
        let scenario = match (scenario, &cfg.scenario) {
            (Some(t), _) => Some(t),
            (None, Some(s)) => Some(ScenarioTables::resolve(net, s)?),
            (None, None) => None,
        };
        let load = match cfg.workload {
            Workload::Periodic => 1.0,
            Workload::Cbr { load } | Workload::Poisson { load } | Workload::ParetoBursts { load, .. } => load,
        };
        if !(load > 0.0 && load.is_finite()) {
            return Err(format!("the workload's load must be positive, got {load}"));
        }
        if cfg.retransmit_timeout_ns < 0 {
            return Err("the retransmission timeout must not be negative".into());
        }
        if cfg.frame_sizes == FrameSizes::Trace && cfg.size_trace.is_empty() {
            return Err("frame sizes from a trace need a non-empty size trace".into());
        }
        if let Some(n) = net.nodes.iter().find(|n| n.technological_latency * 1e9 >= i32::MAX as f64) {
            return Err(format!("{}: the simulator takes technological latencies below 2.1 s", n.name));
        }
        let memory = super::memory::check(net, &cfg)?;
        let mut net = net.clone();
        if let Some(s) = &scenario {
            s.apply(&mut net);
        }
        let mut ports = Vec::with_capacity(net.ports.len());
        for (p, port) in net.ports.iter().enumerate() {
            let plain_fifo = schedulers::plain_fifo(port);
            let queue = match plain_fifo && !generic_fifo {
                true => PortQueue::Fifo { waiting: VecDeque::new() },
                false => PortQueue::Scheduled(Scheduled {
                    behaviour: schedulers::port_behaviour(&net, p),
                    busy: false,
                    current: 0,
                    tx_end: 0,
                    wake_at: NO_WAKE,
                }),
            };
            ports.push(PortSim {
                link: Link { free_at: 0, free_frac: 0, ns_per_bit: ns_per_bit(port.rate) },
                started_end: 0,
                queued_bits: 0,
                ps_per_bit: 1e12 / port.rate,
                max_backlog_bits: 0.0,
                buffer_bits: port.buffer.map_or(u64::MAX, |b| b.round() as u64),
                busy_ns: 0,
                frames: 0,
                queue,
            });
        }

        // Crossings: one per (flow, port), linked along each flow's multicast trees.
        let mut crossings: Vec<Crossing> = Vec::new();
        let mut sources_of = Vec::with_capacity(net.flows.len());
        let mut routes = Vec::new();
        let mut receivers: Vec<Receiver> = Vec::new();
        let mut receiver_of: HashMap<(usize, usize), u32> = HashMap::new();
        for (f, flow) in net.flows.iter().enumerate() {
            let mut seen: Vec<(usize, u32)> = Vec::new();
            let mut starts: Vec<(u8, Vec<u32>)> = Vec::new();
            for r in &flow.routes {
                let route_id = routes.len() as u32;
                let rx = *receiver_of.entry((f, r.destination)).or_insert_with(|| {
                    receivers.push(Receiver::default());
                    receivers.len() as u32 - 1
                });
                routes.push((f as u32, r.destination as u32, r.plane as u8, rx));
                let mut up: Option<u32> = None;
                for (k, &p) in r.ports.iter().enumerate() {
                    let c = match seen.iter().find(|(q, _)| *q == p) {
                        Some(&(_, c)) => c,
                        None => {
                            crossings.push(Crossing {
                                port: p as u32,
                                next: Vec::new(),
                                deliver: None,
                                reach: Vec::new(),
                            });
                            let c = crossings.len() as u32 - 1;
                            seen.push((p, c));
                            match up {
                                Some(u) => crossings[u as usize].next.push(c),
                                None => match starts.iter_mut().find(|(pl, _)| *pl == r.plane as u8) {
                                    Some((_, v)) => v.push(c),
                                    None => starts.push((r.plane as u8, vec![c])),
                                },
                            }
                            c
                        }
                    };
                    crossings[c as usize].reach.push(route_id);
                    if k + 1 == r.ports.len() {
                        crossings[c as usize].deliver = Some(route_id);
                    }
                    up = Some(c);
                }
            }
            sources_of.push(starts);
        }
        let mut hot = Hot::of(&net);
        let sources: Vec<Source> = net
            .flows
            .iter()
            .map(|flow| {
                let (lo, hi) = size_range(&flow.traffic);
                Source {
                    period_ns: period_ns(&flow.traffic),
                    last_emit: NEVER,
                    next_frame: 0,
                    jitter_ns: match &flow.traffic {
                        Traffic::VirtualLink { release_jitter, .. } => release_jitter.as_ns(),
                        Traffic::Periodic { jitter, .. } => jitter.as_ns(),
                        Traffic::TokenBucket { .. } => 0,
                    },
                    source_latency_ns: hot.node_latency_ns[flow.source],
                    plane_skew_ns: 0,
                    waiting: 0,
                    lmin_bytes: lo.round() as u32,
                    lmax_bytes: hi.round() as u32,
                    token_bucket: matches!(flow.traffic, Traffic::TokenBucket { .. }),
                    regulate_pending: false,
                }
            })
            .collect();
        let n_routes = routes.len();
        let (mut hops, reach_at, reach, sources_of) = lay_out(&crossings, &sources_of);
        for h in hops.iter_mut().filter(|h| h.deliver != NO_ROUTE) {
            debug_assert_eq!(h.n_next, 0, "a destination forwards nothing");
            h.first_next = routes[h.deliver as usize].3;
        }
        let mut starts_at = vec![0];
        for s in &sources_of {
            starts_at.push(starts_at.last().expect("starts at 0") + s.len() as u32);
        }
        let starts = sources_of.concat();
        let delays = lane_delays(&hot, &hops, &ports);
        let lane_of = |d: i64| delays.iter().position(|&x| x == d).map_or(NO_LANE, |l| l as u8);
        for p in 0..net.ports.len() {
            let node = hot.port_peer[p] as usize;
            let prop = hot.port_prop_ns[p];
            hot.port_next.push(PortNext {
                prop_ns: prop,
                peer_latency_ns: hot.node_latency_ns[node],
                peer: node as u32,
                arrive_lane: lane_of(prop),
                forward_lane: if hot.node_cut_through[node] {
                    NO_LANE
                } else {
                    lane_of(prop + hot.node_latency_ns[node])
                },
                peer_cut_through: hot.node_cut_through[node],
            });
        }
        // A flow's retransmission timeout: the one asked for, else its deadline.
        let flow_timeout_ns: Vec<i64> = net
            .flows
            .iter()
            .map(|flow| match (cfg.retransmit_timeout_ns, flow.deadline) {
                (t, _) if t > 0 => t,
                (_, Some(d)) => (d * 1e9).round() as i64,
                _ => NO_TIMEOUT,
            })
            .collect();
        let mut flow_receivers: Vec<Vec<u32>> = vec![Vec::new(); net.flows.len()];
        let mut receiver_node = vec![0; receivers.len()];
        for &(f, destination, _, rx) in &routes {
            receivers[rx as usize].copies += 1;
            receiver_node[rx as usize] = destination;
            if !flow_receivers[f as usize].contains(&rx) {
                flow_receivers[f as usize].push(rx);
            }
        }
        let ns = |s: f64| (s * 1e9).round() as i64;
        let route_sinks = routes
            .iter()
            .map(|&(f, destination, _, rx)| {
                let flow = &net.flows[f as usize];
                RouteSink {
                    receive_ns: hot.node_receive_ns[destination as usize],
                    // SkewMax, redundancy management's window.
                    skew_max_ns: match &flow.traffic {
                        Traffic::VirtualLink { skew_max: Some(s), .. } => ns(s.secs()),
                        _ if net.skew_max > 0.0 => ns(net.skew_max),
                        _ => i64::MAX,
                    },
                    // A VL's copies carry an AFDX sequence number, checked at the destination.
                    is_vl: matches!(flow.traffic, Traffic::VirtualLink { .. }),
                    twins: receivers[rx as usize].copies > 1,
                    ..RouteSink::default()
                }
            })
            .collect();
        let arrivals = arrival_batch
            .filter(|_| cfg.dedup.is_none() && !cfg.retransmit && !hot.node_cut_through.iter().any(|&c| c))
            .map(|batch| {
                ArrivalLog::new(
                    net.nodes.len(),
                    routes.iter().map(|&(_, destination, _, _)| destination),
                    batch,
                )
            });
        let mut sim = Simulator {
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            cfg,
            queue: EventQueue::new(&delays),
            now: 0,
            accounts: vec![(f64::INFINITY, 0); hops.len()],
            hops,
            reach_at,
            reach,
            starts_at,
            starts,
            sources_cold: (0..sources.len()).map(|_| SourceCold::default()).collect(),
            sources,
            port_drops: vec![(0, 0); ports.len()],
            ports,
            copies: Vec::new(),
            free_copies: Vec::new(),
            packets: Vec::new(),
            free_packets: Vec::new(),
            route_stats: vec![Latency::default(); n_routes],
            route_losses: vec![0; n_routes],
            route_sinks,
            routes,
            delivered: (0..receivers.len()).map(|_| Latency::default()).collect(),
            receivers,
            flow_timeout_ns,
            flow_receivers,
            receiver_node,
            awaited: HashMap::new(),
            timeouts: Vec::new(),
            free_timeouts: Vec::new(),
            dedups: Vec::new(),
            arrivals,
            batch: Vec::new(),
            expired: Vec::new(),
            events: 0,
            work: 0,
            frame_hops: 0,
            packets_created: 0,
            packets_delivered: 0,
            packets_forwarded: 0,
            packets_dropped: 0,
            packets_policed: 0,
            wall_s: 0.0,
            memory,
            trace: Vec::new(),
            hot,
            net,
            scenario: scenario.map(|t| Box::new(ScenarioState::new(t))),
        };
        sim.dedups = sim.build_dedups()?;
        for f in 0..sim.net.flows.len() {
            if sim.scenario.is_some() {
                sim.start_from_scenario(f);
                continue;
            }
            let start = sim.first_release(f);
            sim.sources_cold[f].start_ns = start;
            let skew_ns = (sim.net.sending_skew * 1e9).round() as i64;
            if sim.cfg.release == Release::Random && skew_ns > 0 {
                sim.sources[f].plane_skew_ns = sim.rng.gen_range(0..=skew_ns);
            }
            sim.push(start, Ev::Release { flow: f as u32 });
        }
        Ok(sim)
    }
}
