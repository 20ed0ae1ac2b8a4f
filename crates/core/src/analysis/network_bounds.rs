//! TFA and SFA on a validated network: every egress port a server, every flow a token bucket
//! at its source, FIFO or static-priority queues at each port.
//!
//! * Each egress port offers β = C·[t − T]^+ (link rate, technological latency of its node).
//!   A FIFO port has one queue; a static-priority port one FIFO queue per priority level, served
//!   with β minus the higher levels' arrivals minus the largest lower-level frame (non-preemption).
//! * **TFA** (total flow analysis) bounds the delay of each queue's aggregate, h(α_q, β_q), and
//!   propagates every flow's burst by its rate × that delay (Le Boudec & Thiran §6.2; the AFDX
//!   practice of Frances, Fraboul and Grieu, ERTS 2006).
//! * **SFA** (separated flow analysis, pay bursts only once) convolves, along each route, the
//!   service left to the flow at each port by the cross traffic (bounded by TFA's propagated
//!   curves), then takes one horizontal deviation (Le Boudec & Thiran §6.4).
//! * **Grouping** (serialisation): flows that reach a port through the same input link cannot
//!   arrive faster than that link, so their joint arrival curve is min(Σ token buckets,
//!   C_in·t + L_max). It is known to tighten AFDX bounds a lot (Grieu 2004; Boyer & Fraboul 2008).
//! * Multiplexing inside a queue is FIFO by default; `blind` assumes nothing about the order.
//!
//! Propagation delays are constant and do not grow bursts; they are added to end-to-end delays.
//! A port whose queue has no finite bound makes every flow through it unbounded, with the reason.

use super::results::*;
use crate::curves::{self, Curve, Unbounded};
use crate::model::{FlowId, Network, PortId};
use crate::schedulers::{self, ClassAtPort};
use std::collections::BTreeMap;

mod fifo_pass;
pub(crate) use fifo_pass::PortTables;

/// Total flow analysis or separated flow analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Tfa,
    Sfa,
}

/// How frames of different flows inside one queue are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Multiplexing {
    /// FIFO inside each queue (what FIFO and static-priority ports do).
    Fifo,
    /// No assumption (arbitrary multiplexing): always sound, usually looser.
    Blind,
}

#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub method: Method,
    pub grouping: bool,
    pub multiplexing: Multiplexing,
}

impl Options {
    /// The method's name in outputs: `tfa`, `sfa+grouping`, `sfa-blind+grouping`, ...
    pub fn name(&self) -> &'static str {
        use {Method::*, Multiplexing::*};
        match (self.method, self.multiplexing, self.grouping) {
            (Tfa, Fifo, false) => "tfa",
            (Tfa, Fifo, true) => "tfa+grouping",
            (Tfa, Blind, false) => "tfa-blind",
            (Tfa, Blind, true) => "tfa-blind+grouping",
            (Sfa, Fifo, false) => "sfa",
            (Sfa, Fifo, true) => "sfa+grouping",
            (Sfa, Blind, false) => "sfa-blind",
            (Sfa, Blind, true) => "sfa-blind+grouping",
        }
    }
}

/// One flow crossing one port (once, even for multicast).
struct Crossing {
    flow: FlowId,
    port: PortId,
    upstream: Option<usize>,
    queue: usize,
}

/// One FIFO queue of one port: the whole port (FIFO) or one priority level.
struct Queue {
    /// Priority level (lower is served first); `None` for a FIFO port.
    priority: Option<u32>,
    crossings: Vec<usize>,
}

/// How an egress port shares its link between its queues: the port's discipline, whose
/// [`schedulers::Service`] says which.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Discipline {
    /// One FIFO queue.
    Fifo,
    /// One FIFO queue per priority level.
    StaticPriority,
    /// One FIFO queue per class, each with the latency-rate guarantee of its share.
    ClassShares,
}

/// The service model of one egress port: the rate its scheduler can count on (the link rate, or
/// a shaper's rate) and how it shares it.
#[derive(Clone, Debug)]
struct PortModel {
    rate: f64,
    discipline: Discipline,
}

/// The model of port `p`, or why this analysis cannot bound it.
fn port_model(net: &Network, p: PortId, flows: &[FlowId]) -> Result<PortModel, String> {
    let port = &net.ports[p];
    let service = schedulers::discipline(&port.discipline).expect("a port's discipline is no shaper");
    let discipline = match service.service() {
        schedulers::Service::Fifo => Discipline::Fifo,
        schedulers::Service::StaticPriority => Discipline::StaticPriority,
        schedulers::Service::PerClass(_) => Discipline::ClassShares,
    };
    let rate = match port.shaper {
        None => port.rate,
        Some(shaper) => {
            let largest = flows.iter().map(|&f| net.flows[f].max_frame_wire).fold(0.0, f64::max);
            if shaper.burst < largest {
                return Err(format!(
                    "{}: the shaper's burst ({}B) is smaller than the largest frame on the wire ({}B)",
                    net.port_label(p),
                    shaper.burst / 8.0,
                    largest / 8.0
                ));
            }
            crate::schedulers::token_bucket::shaped_rate(port.rate, shaper.rate)
        }
    };
    Ok(PortModel { rate, discipline })
}

/// Whether every port carrying traffic has a service model here, or the first reason it has not.
pub fn applies(net: &Network) -> Result<(), String> {
    let per_port = net.flows_per_port();
    for (p, flows) in per_port.iter().enumerate() {
        if !flows.is_empty() {
            port_model(net, p, flows)?;
        }
    }
    Ok(())
}

/// The structure shared by TFA and SFA: crossings and queues.
struct Layout {
    crossings: Vec<Crossing>,
    queues: Vec<Queue>,
    /// Queues of each port, highest priority first.
    port_queues: Vec<Vec<usize>>,
    /// Service model of each port.
    models: Vec<PortModel>,
    /// For each flow, its crossing at each port it visits.
    flow_crossings: Vec<Vec<(PortId, usize)>>,
}

impl Layout {
    fn crossing(&self, f: FlowId, p: PortId) -> usize {
        self.flow_crossings[f]
            .iter()
            .find(|(q, _)| *q == p)
            .expect("a flow crosses the ports of its routes")
            .1
    }
}

fn layout(net: &Network) -> Layout {
    let per_port = net.flows_per_port();
    let models: Vec<PortModel> = (0..net.ports.len())
        .map(|p| {
            port_model(net, p, &per_port[p])
                .unwrap_or(PortModel { rate: net.ports[p].rate, discipline: Discipline::Fifo })
        })
        .collect();
    let mut crossings: Vec<Crossing> = Vec::new();
    let mut port_queues: Vec<Vec<usize>> = vec![Vec::new(); net.ports.len()];
    let mut queues: Vec<Queue> = Vec::new();
    let mut flow_crossings = Vec::with_capacity(net.flows.len());
    for (f, flow) in net.flows.iter().enumerate() {
        // Per flow, the crossing of each port it visits: routes of a multicast tree share prefixes.
        let mut seen: Vec<(PortId, usize)> = Vec::new();
        for r in &flow.routes {
            let mut up = None;
            for &p in &r.ports {
                let c = match seen.iter().find(|(q, _)| *q == p) {
                    Some(&(_, c)) => c,
                    None => {
                        // Queue key: the priority level, or the class for per-class shares.
                        let priority = match models[p].discipline {
                            Discipline::Fifo => None,
                            Discipline::StaticPriority => {
                                Some(flow.class.map_or(u32::MAX, |k| net.classes[k].priority))
                            }
                            Discipline::ClassShares => Some(flow.class.map_or(u32::MAX, |k| k as u32)),
                        };
                        // A port has few queues: a linear look-up beats a map.
                        let q = match port_queues[p].iter().find(|&&q| queues[q].priority == priority) {
                            Some(&q) => q,
                            None => {
                                queues.push(Queue { priority, crossings: Vec::new() });
                                port_queues[p].push(queues.len() - 1);
                                queues.len() - 1
                            }
                        };
                        crossings.push(Crossing { flow: f, port: p, upstream: up, queue: q });
                        let c = crossings.len() - 1;
                        queues[q].crossings.push(c);
                        seen.push((p, c));
                        c
                    }
                };
                up = Some(c);
            }
        }
        flow_crossings.push(seen);
    }
    // Highest priority first (a FIFO port has its one queue).
    for qs in port_queues.iter_mut() {
        qs.sort_by_key(|&q| queues[q].priority);
    }
    Layout { crossings, queues, port_queues, models, flow_crossings }
}

/// TFA's results, which SFA reuses for the cross traffic.
struct TfaState {
    /// Burst of each crossing's flow entering its port (bits).
    burst: Vec<f64>,
    /// Arrival-curve pieces of each queue: one curve per group (input link) or per flow.
    groups: Vec<Vec<Group>>,
    /// Σ bursts, Σ rates and size of every group, from the current bursts (SFA removes one member).
    group_sums: Vec<Vec<(f64, f64, usize)>>,
    /// Index, in its queue's `groups`, of each crossing's group.
    group_of: Vec<usize>,
    /// Service curve of each queue, or why there is none.
    service: Vec<Result<Curve, Unbounded>>,
    /// Delay bound of each queue (s), or why there is none.
    delay: Vec<Result<f64, Unbounded>>,
    /// Per port: delay (max over its queues) and backlog (bits).
    port_delay: Vec<Result<f64, Unbounded>>,
    port_backlog: Vec<Result<f64, Unbounded>>,
}

/// Flows of one queue that share an input link (or one flow, without grouping).
#[derive(Clone)]
struct Group {
    members: Vec<usize>,
    /// Line constraint (rate, largest frame) of the shared input link, when grouping applies.
    line: Option<(f64, f64)>,
}

impl Group {
    /// Σ bursts, Σ rates and member count.
    fn sums(&self, net: &Network, cx: &[Crossing], burst: &[f64]) -> (f64, f64, usize) {
        self.members
            .iter()
            .fold((0.0, 0.0, 0), |(b, r, n), &c| (b + burst[c], r + net.flows[cx[c].flow].rate, n + 1))
    }

    /// min(Σ token buckets, line) for the given sums.
    fn curve_of(&self, (b, r, n): (f64, f64, usize)) -> Option<Curve> {
        if n == 0 {
            return None;
        }
        let tb = Curve::token_bucket(r, b);
        Some(match self.line {
            Some((rate, lmax)) if n > 1 || lmax < b => tb.min(&Curve::token_bucket(rate, lmax)),
            _ => tb,
        })
    }
}

/// Queue `q` (one class) as a per-class scheduler sees it: its name, share and frame sizes.
fn class_at_port<'a>(
    net: &'a Network,
    lay: &Layout,
    shares: &dyn schedulers::ClassShares,
    q: usize,
) -> (&'a str, ClassAtPort) {
    let flows = || lay.queues[q].crossings.iter().map(|&c| &net.flows[lay.crossings[c].flow]);
    let class = flows().next().and_then(|f| f.class).map(|k| net.classes[k].name.as_str()).unwrap_or("");
    let at = ClassAtPort {
        // Validation refuses a class the discipline gives nothing to.
        share: shares.share(class).expect("validated: every class at a per-class port has a share"),
        lmin: flows().map(|f| f.min_frame_wire).fold(f64::INFINITY, f64::min),
        lmax: flows().map(|f| f.max_frame_wire).fold(0.0, f64::max),
        overhead: net.spec.defaults.interframe_overhead.bits(),
    };
    (class, at)
}

fn sum_curves(curves: impl Iterator<Item = Curve>) -> Curve {
    curves.fold(Curve::zero(), |acc, c| acc.add(&c))
}

fn tfa(net: &Network, lay: &Layout, opt: &Options) -> (TfaState, Vec<String>) {
    let cx = &lay.crossings;
    let nq = lay.queues.len();
    let mut st = TfaState {
        burst: cx.iter().map(|c| net.flows[c.flow].burst).collect(),
        groups: vec![Vec::new(); nq],
        group_sums: vec![Vec::new(); nq],
        group_of: vec![0; cx.len()],
        service: (0..nq).map(|_| Err(Unbounded::new("not computed"))).collect(),
        delay: (0..nq).map(|_| Ok(0.0)).collect(),
        port_delay: (0..net.ports.len()).map(|_| Ok(0.0)).collect(),
        port_backlog: (0..net.ports.len()).map(|_| Ok(0.0)).collect(),
    };
    // Groups do not depend on bursts: build them once. Flows that are not grouped form one plain
    // group: the sum of token buckets is a token bucket, so one curve serves them all.
    for (q, queue) in lay.queues.iter().enumerate() {
        let mut by_link: BTreeMap<Option<PortId>, Vec<usize>> = BTreeMap::new();
        let mut plain = Vec::new();
        for &c in &queue.crossings {
            let up = cx[c].upstream.map(|u| cx[u].port);
            if opt.grouping && up.is_some() {
                by_link.entry(up).or_default().push(c);
            } else {
                plain.push(c);
            }
        }
        if !plain.is_empty() {
            st.groups[q].push(Group { members: plain, line: None });
        }
        let first_line_group = st.groups[q].len();
        for (up, members) in by_link {
            let up = up.expect("only linked crossings are grouped");
            let lmax = members.iter().map(|&c| net.flows[cx[c].flow].max_frame_wire).fold(0.0, f64::max);
            st.groups[q].push(Group { members, line: Some((net.ports[up].rate, lmax)) });
        }
        for (k, g) in st.groups[q].iter().enumerate().skip(first_line_group.saturating_sub(1)) {
            for &c in &g.members {
                st.group_of[c] = k;
            }
        }
    }
    let (order, acyclic) = (&net.port_order().order, net.port_order().acyclic);
    let mut notes = Vec::new();
    let passes = if acyclic { 1 } else { 1000 };
    let mut converged = acyclic;
    for _ in 0..passes {
        let mut change: f64 = 0.0;
        for &p in order {
            // Bursts entering p: upstream burst grown by the upstream queue's delay.
            for &q in &lay.port_queues[p] {
                for &c in &lay.queues[q].crossings {
                    if let Some(u) = cx[c].upstream {
                        let grown = match &st.delay[cx[u].queue] {
                            Ok(d) => st.burst[u] + net.flows[cx[c].flow].rate * d,
                            Err(_) => f64::INFINITY,
                        };
                        if grown.is_finite() && st.burst[c].is_finite() {
                            change = change.max((grown - st.burst[c]).abs() / grown.max(1.0));
                        } else if grown.is_finite() != st.burst[c].is_finite() {
                            change = f64::INFINITY;
                        }
                        st.burst[c] = grown;
                    }
                }
            }
            analyse_port(net, lay, p, opt, &mut st);
        }
        if !acyclic && change < 1e-12 {
            converged = true;
            break;
        }
    }
    if !acyclic {
        if converged {
            notes.push(
                "cyclic port dependencies: bounds are the fixed point of the TFA equations".to_string(),
            );
        } else {
            notes.push("cyclic port dependencies: TFA does not converge; bounds are infinite".to_string());
            let why = || Err(Unbounded::new("cyclic port dependencies: TFA does not converge"));
            st.delay.iter_mut().for_each(|d| *d = why());
            st.port_delay.iter_mut().for_each(|d| *d = why());
            st.port_backlog.iter_mut().for_each(|d| *d = why());
        }
    }
    (st, notes)
}

/// Service curve, delay and backlog of every queue of port `p`, from the current bursts.
fn analyse_port(net: &Network, lay: &Layout, p: PortId, opt: &Options, st: &mut TfaState) {
    let port = &net.ports[p];
    let cx = &lay.crossings;
    let latency = net.nodes[port.node].technological_latency;
    let model = &lay.models[p];
    let beta = Curve::rate_latency(model.rate, latency);
    let queues = &lay.port_queues[p];
    let load: f64 =
        queues.iter().flat_map(|&q| &lay.queues[q].crossings).map(|&c| net.flows[cx[c].flow].rate).sum();
    if load > model.rate {
        let why = format!(
            "{} overloaded: offered {:.6} Mb/s > {} rate {} Mb/s",
            net.port_label(p),
            load / 1e6,
            if model.rate < port.rate { "shaped" } else { "link" },
            model.rate / 1e6
        );
        for &q in queues {
            st.service[q] = Err(Unbounded::new(why.clone()));
            st.delay[q] = Err(Unbounded::new(why.clone()));
        }
        st.port_delay[p] = Err(Unbounded::new(why.clone()));
        st.port_backlog[p] = Err(Unbounded::new(why));
        return;
    }
    if queues.iter().flat_map(|&q| &lay.queues[q].crossings).any(|&c| !st.burst[c].is_finite()) {
        let why = format!("{}: an upstream port has no finite bound", net.port_label(p));
        for &q in queues {
            st.service[q] = Err(Unbounded::new(why.clone()));
            st.delay[q] = Err(Unbounded::new(why.clone()));
        }
        st.port_delay[p] = Err(Unbounded::new(why.clone()));
        st.port_backlog[p] = Err(Unbounded::new(why));
        return;
    }
    // Fast path: one FIFO queue of token buckets behind β_{C,T} has the closed forms
    // delay T + B/C and backlog B + R·T (Le Boudec & Thiran Thm 1.4.1-1.4.2); no curve needed.
    if let [q] = queues[..] {
        if matches!(model.discipline, Discipline::Fifo)
            && opt.multiplexing == Multiplexing::Fifo
            && st.groups[q].len() == 1
            && st.groups[q][0].line.is_none()
        {
            let sums = st.groups[q][0].sums(net, cx, &st.burst);
            st.group_sums[q] = vec![sums];
            let (b, r, _) = sums;
            st.service[q] = Ok(beta);
            st.delay[q] = Ok(latency + b / model.rate);
            st.port_delay[p] = Ok(latency + b / model.rate);
            st.port_backlog[p] = Ok(b + r * latency);
            return;
        }
    }
    let alphas: Vec<Curve> = queues
        .iter()
        .map(|&q| {
            st.group_sums[q] = st.groups[q].iter().map(|g| g.sums(net, cx, &st.burst)).collect();
            sum_curves(st.groups[q].iter().zip(&st.group_sums[q]).filter_map(|(g, &sums)| g.curve_of(sums)))
        })
        .collect();
    let mut port_delay: Result<f64, Unbounded> = Ok(0.0);
    for (k, &q) in queues.iter().enumerate() {
        let service = match (&model.discipline, lay.queues[q].priority) {
            (Discipline::Fifo, _) | (_, None) => Ok(beta.clone()),
            (Discipline::ClassShares, Some(_)) => {
                let d = schedulers::discipline(&net.ports[p].discipline)
                    .expect("a port's discipline is no shaper");
                let schedulers::Service::PerClass(shares) = d.service() else {
                    unreachable!("the port model follows the discipline's service")
                };
                let (names, present): (Vec<&str>, Vec<ClassAtPort>) =
                    queues.iter().map(|&o| class_at_port(net, lay, shares, o)).unzip();
                let lr = shares.latency_rate(k, &present, &names, model.rate);
                let guaranteed = Curve::rate_latency(lr.rate, lr.latency + latency);
                // Work conservation also guarantees the class whatever the other classes leave,
                // [β − Σ α_others]^+ (blind multiplexing). Either curve gives a valid bound; the
                // one with the smaller delay for this class's traffic is kept (below), so a class
                // whose share is below its load is still bounded while the port is not overloaded.
                let others = sum_curves(
                    queues
                        .iter()
                        .zip(&alphas)
                        .enumerate()
                        .filter(|(o, _)| *o != k)
                        .map(|(_, (_, a))| a.clone()),
                );
                match curves::arbitrary_residual(&beta, &others) {
                    Ok(l) => Err((guaranteed, l)),
                    Err(_) => Ok(guaranteed),
                }
                .map_or_else(
                    |(a, b)| {
                        let d =
                            |c: &Curve| queue_delay(&alphas[k], c, opt.multiplexing).unwrap_or(f64::INFINITY);
                        Ok(if d(&b) < d(&a) { b } else { a })
                    },
                    Ok,
                )
            }
            (Discipline::StaticPriority, Some(level)) => {
                let higher = sum_curves(
                    queues
                        .iter()
                        .zip(&alphas)
                        .filter(|(&o, _)| lay.queues[o].priority < Some(level))
                        .map(|(_, a)| a.clone()),
                );
                let lower_frame = queues
                    .iter()
                    .filter(|&&o| lay.queues[o].priority > Some(level))
                    .flat_map(|&o| &lay.queues[o].crossings)
                    .map(|&c| net.flows[cx[c].flow].max_frame_wire)
                    .fold(0.0, f64::max);
                curves::static_priority_residual(&beta, &higher, lower_frame)
            }
        };
        let delay = service.clone().and_then(|s| queue_delay(&alphas[k], &s, opt.multiplexing));
        let delay = delay.map_err(|u| u.context(&net.port_label(p)));
        port_delay = match (port_delay, &delay) {
            (Ok(a), Ok(b)) => Ok(a.max(*b)),
            (Err(e), _) => Err(e),
            (_, Err(e)) => Err(e.clone()),
        };
        st.service[q] = service;
        st.delay[q] = delay;
    }
    st.port_delay[p] = port_delay;
    st.port_backlog[p] = curves::vertical_deviation(&sum_curves(alphas.into_iter()), &beta)
        .map_err(|u| u.context(&net.port_label(p)));
}

/// Delay of a queue's aggregate `alpha` served by `service`: FIFO inside the queue, or blind.
fn queue_delay(alpha: &Curve, service: &Curve, mux: Multiplexing) -> Result<f64, Unbounded> {
    match mux {
        Multiplexing::Fifo => curves::horizontal_deviation(alpha, service),
        Multiplexing::Blind => curves::arbitrary_residual(service, alpha).and_then(|r| curves::latency(&r)),
    }
}

/// SFA's end-to-end left-over service for every crossing: the service left to the crossing's flow
/// at its port by the cross traffic, convolved with the same at every upstream crossing. Routes of
/// a multicast tree share their prefixes, so each crossing is computed once.
///
/// FIFO left-over service is a family β_θ, valid for every θ >= 0 (Le Boudec & Thiran Prop.
/// 6.4.1); θ is the time β needs to serve the cross burst, as DNC chooses it.
fn sfa_services(net: &Network, lay: &Layout, st: &TfaState, opt: &Options) -> Vec<Result<Curve, Unbounded>> {
    let cx = &lay.crossings;
    let mut out: Vec<Result<Curve, Unbounded>> = Vec::with_capacity(cx.len());
    // The same, with every hop packetized: a store-and-forward node passes a frame on only once it
    // has all of it, so between hops the flow's service loses up to one of its largest frames,
    // [β − l_max]^+ (Le Boudec & Thiran Thm 1.7.1). The last hop needs no packetizer: a frame's
    // delay ends with its last bit.
    let mut packetized: Vec<Result<Curve, Unbounded>> = Vec::with_capacity(cx.len());
    let mut others = OtherGroups::new(st);
    // Crossings are numbered along routes, so an upstream crossing always comes first.
    for (me, c) in cx.iter().enumerate() {
        let left = left_over(net, lay, st, opt, me, &mut others);
        let lmax = net.flows[c.flow].max_frame_wire;
        let (e2e, pk) = match (c.upstream.map(|u| &packetized[u]), left) {
            (Some(Err(e)), _) => (Err(e.clone()), Err(e.clone())),
            (_, Err(e)) => (Err(e.clone()), Err(e)),
            (None, Ok(l)) => (Ok(l.clone()), Ok(packetize(&l, lmax))),
            (Some(Ok(acc)), Ok(l)) => {
                (Ok(curves::convolve_convex(acc, &l)), Ok(curves::convolve_convex(acc, &packetize(&l, lmax))))
            }
        };
        out.push(e2e);
        packetized.push(pk);
    }
    out
}

/// [β − l]^+: the service of a node followed by a packetizer of largest packet `l`.
fn packetize(beta: &Curve, l: f64) -> Curve {
    beta.offset(-l).positive_part().non_decreasing_closure()
}

/// Per queue and group, the sum of the other groups' arrival curves: what every member of the
/// group sees as cross traffic besides its own group. Computed once per group on first use,
/// where summing every group again for each crossing made SFA quadratic in a port's flows.
struct OtherGroups {
    sums: Vec<Vec<Option<Option<Curve>>>>,
}

impl OtherGroups {
    fn new(st: &TfaState) -> OtherGroups {
        OtherGroups { sums: st.groups.iter().map(|g| vec![None; g.len()]).collect() }
    }

    /// Σ over the groups of queue `q` but `k` (in group order), `None` when there are none.
    fn of(&mut self, st: &TfaState, q: usize, k: usize) -> Option<&Curve> {
        self.sums[q][k]
            .get_or_insert_with(|| {
                let mut curves = st.groups[q]
                    .iter()
                    .zip(&st.group_sums[q])
                    .enumerate()
                    .filter(|&(i, _)| i != k)
                    .filter_map(|(_, (g, &sums))| g.curve_of(sums))
                    .peekable();
                curves.peek().is_some().then(|| sum_curves(curves))
            })
            .as_ref()
    }
}

/// The service left to crossing `me`'s flow at its port.
fn left_over(
    net: &Network,
    lay: &Layout,
    st: &TfaState,
    opt: &Options,
    me: usize,
    others: &mut OtherGroups,
) -> Result<Curve, Unbounded> {
    let cx = &lay.crossings;
    let (q, p) = (cx[me].queue, cx[me].port);
    let service = st.service[q].clone()?;
    let flow = &net.flows[cx[me].flow];
    let k = st.group_of[me];
    // Its own group without it, and every other group.
    let (b, r, n) = st.group_sums[q][k];
    let own = st.groups[q][k].curve_of((b - st.burst[me], r - flow.rate, n - 1));
    let cross = match (others.of(st, q, k), own) {
        (None, None) => return Ok(service),
        (Some(o), None) => o.clone(),
        (None, Some(c)) => c,
        (Some(o), Some(c)) => o.add(&c),
    };
    let left = match opt.multiplexing {
        Multiplexing::Fifo => curves::fifo_residual(&service, &cross),
        Multiplexing::Blind => curves::arbitrary_residual(&service, &cross),
    }
    .map_err(|u| u.context(&net.port_label(p)))?;
    if !left.is_convex() {
        return Err(Unbounded::new(format!("{}: left-over service is not convex", net.port_label(p))));
    }
    Ok(left)
}

/// SFA's bound for one route, from the end-to-end service at its last crossing.
fn sfa_route(
    net: &Network,
    lay: &Layout,
    services: &[Result<Curve, Unbounded>],
    f: FlowId,
    ports: &[PortId],
) -> Result<f64, Unbounded> {
    let flow = &net.flows[f];
    let last = lay.crossing(f, *ports.last().expect("routes have ports"));
    let service = services[last].clone()?;
    curves::horizontal_deviation(&Curve::token_bucket(flow.rate, flow.burst), &service)
}

/// Port delays as plain numbers, infinite where there is no bound (the reason is looked up then).
fn or_infinite(delays: &[Result<f64, Unbounded>]) -> Vec<f64> {
    delays.iter().map(|d| *d.as_ref().unwrap_or(&f64::INFINITY)).collect()
}

/// TFA on FIFO ports without grouping, as afdx-naive reports it: each port's delay (infinite
/// when unbounded) and the sum of the bursts entering it.
pub(crate) struct FifoTfa {
    pub port_delay: Vec<f64>,
    pub port_bursts: Vec<f64>,
    pub notes: Vec<String>,
}

pub(crate) fn fifo_tfa(net: &Network) -> FifoTfa {
    match fifo_pass::pass(net) {
        Some(pass) => {
            FifoTfa { port_delay: or_infinite(&pass.delay), port_bursts: pass.bursts, notes: Vec::new() }
        }
        None => fifo_tfa_general(net),
    }
}

/// [`fifo_tfa`] on the general path (curves, queues and groups).
pub(crate) fn fifo_tfa_general(net: &Network) -> FifoTfa {
    let lay = layout(net);
    let opt = Options { method: Method::Tfa, grouping: false, multiplexing: Multiplexing::Fifo };
    let (st, notes) = tfa(net, &lay, &opt);
    let port_bursts = lay
        .port_queues
        .iter()
        .map(|qs| qs.iter().flat_map(|&q| &lay.queues[q].crossings).fold(0.0, |s, &c| s + st.burst[c]))
        .collect();
    let port_delay = or_infinite(&st.port_delay);
    FifoTfa { port_delay, port_bursts, notes }
}

/// TFA's bound for one route: the sum of its queues' delays.
fn tfa_route(lay: &Layout, st: &TfaState, f: FlowId, ports: &[PortId]) -> Result<f64, Unbounded> {
    ports
        .iter()
        .try_fold(0.0, |acc, &p| st.delay[lay.crossings[lay.crossing(f, p)].queue].clone().map(|d| acc + d))
}

fn port_bounds(
    net: &Network,
    delay: &[Result<f64, Unbounded>],
    backlog: &[Result<f64, Unbounded>],
) -> Vec<PortBound> {
    let loads = net.port_loads();
    net.ports
        .iter()
        .enumerate()
        .map(|(p, port)| {
            let reason = delay[p].as_ref().err().map(|u| u.to_string());
            PortBound {
                node: net.nodes[port.node].name.clone(),
                port: port.name.clone(),
                plane: net.planes[port.plane].clone(),
                load: loads[p] / port.rate,
                delay_us: delay[p].as_ref().map_or(f64::INFINITY, |d| d * 1e6),
                backlog_bytes: backlog[p].as_ref().map_or(f64::INFINITY, |b| b / 8.0),
                buffer_bytes: port.buffer.map(|b| b / 8.0),
                es_jitter_us: None,
                status: if reason.is_none() { Status::Ok } else { Status::Unbounded },
                reason,
            }
        })
        .collect()
}

/// Runs every (method, multiplexing) candidate on every route and keeps, per route, the smallest
/// bound with the name of the method that gave it. TFA is computed once (with `tfa_mux`) and its
/// propagated arrival curves serve every SFA candidate: they bound the cross traffic whatever the
/// candidate assumes inside the queue of interest.
fn run_candidates(
    net: &Network,
    grouping: bool,
    tfa_mux: Multiplexing,
    candidates: &[(Method, Multiplexing)],
    name: &'static str,
) -> AnalysisReport {
    let lay = layout(net);
    let tfa_opt = Options { method: Method::Tfa, grouping, multiplexing: tfa_mux };
    let (st, mut notes) = tfa(net, &lay, &tfa_opt);
    // The θ-family choice of FIFO SFA is not monotone in the cross traffic, so grouping can make one
    // route's SFA bound larger. Both bounds are valid: with grouping, SFA also evaluates the route
    // on the ungrouped TFA curves and keeps the smaller bound.
    let ungrouped = (grouping && candidates.iter().any(|&(m, _)| m == Method::Sfa))
        .then(|| tfa(net, &lay, &Options { grouping: false, ..tfa_opt }).0);
    let services: Vec<Vec<Vec<Result<Curve, Unbounded>>>> = candidates
        .iter()
        .map(|&(method, mux)| match method {
            Method::Tfa => Vec::new(),
            Method::Sfa => {
                let opt = Options { method, grouping, multiplexing: mux };
                let mut v = vec![sfa_services(net, &lay, &st, &opt)];
                if let Some(st_u) = &ungrouped {
                    v.push(sfa_services(net, &lay, st_u, &Options { grouping: false, ..opt }));
                }
                v
            }
        })
        .collect();
    let method_names: Vec<&'static str> = candidates
        .iter()
        .map(|&(method, mux)| Options { method, grouping, multiplexing: mux }.name())
        .collect();
    let mut flows = Vec::with_capacity(net.flows.iter().map(|f| f.routes.len()).sum());
    for (f, flow) in net.flows.iter().enumerate() {
        for r in &flow.routes {
            let fixed: f64 = r.ports.iter().map(|&p| net.ports[p].propagation_delay).sum::<f64>()
                + net.nodes[r.destination].receive_latency;
            let mut best: Option<(f64, &'static str)> = None;
            let mut reason = None;
            for (k, (&(method, _), cname)) in candidates.iter().zip(&method_names).enumerate() {
                let bounds: Vec<Result<f64, Unbounded>> = match method {
                    Method::Tfa => vec![tfa_route(&lay, &st, f, &r.ports)],
                    Method::Sfa => services[k].iter().map(|s| sfa_route(net, &lay, s, f, &r.ports)).collect(),
                };
                for bound in bounds {
                    match bound {
                        Ok(d) if best.as_ref().is_none_or(|(b, _)| d + fixed < *b) => {
                            best = Some((d + fixed, *cname))
                        }
                        Ok(_) => {}
                        Err(u) => reason = reason.or(Some(u.to_string())),
                    }
                }
            }
            let (delay, method) = best.unwrap_or((f64::INFINITY, name));
            let reason = if delay.is_finite() { None } else { reason };
            flows.push(flow_bound(net, f, r, delay, reason, method));
        }
    }
    if candidates.iter().all(|&(_, m)| m == Multiplexing::Blind) {
        notes.push("blind multiplexing: no assumption on the order of frames inside a queue".to_string());
    }
    AnalysisReport::new(net, name, flows, port_bounds(net, &st.port_delay, &st.port_backlog), notes)
}

/// Runs TFA or SFA with the given options. TFA without grouping on FIFO ports takes a
/// curve-free pass over flat arrays ([`fifo_pass`]), with the same results.
pub fn analyze(net: &Network, opt: &Options) -> AnalysisReport {
    fifo_pass::analyze(net, opt).unwrap_or_else(|| analyze_general(net, opt))
}

/// [`analyze`] on the general path (curves, queues and groups).
fn analyze_general(net: &Network, opt: &Options) -> AnalysisReport {
    run_candidates(net, opt.grouping, opt.multiplexing, &[(opt.method, opt.multiplexing)], opt.name())
}

/// `best`: every sound method that applies under the multiplexing the user assumes, each with
/// grouping, and per (flow, destination, plane) the smallest bound and the method that gave it.
///
/// * FIFO multiplexing (the default: FIFO and static-priority queues serve their frames in
///   arrival order): TFA, SFA with FIFO left-over service, and SFA with blind left-over service
///   (a blind bound holds whatever the order, so it is a candidate too).
/// * Blind multiplexing (`--blind`: the order of frames inside a queue is unknown): only the
///   blind candidates, TFA and SFA. A FIFO candidate would assume an order the user ruled out.
///
/// afdx-naive is not a candidate: TFA without grouping is the same computation before rounding,
/// and grouping only tightens it.
pub fn best(net: &Network, multiplexing: Multiplexing) -> AnalysisReport {
    match multiplexing {
        Multiplexing::Fifo => run_candidates(
            net,
            true,
            Multiplexing::Fifo,
            &[
                (Method::Tfa, Multiplexing::Fifo),
                (Method::Sfa, Multiplexing::Fifo),
                (Method::Sfa, Multiplexing::Blind),
            ],
            "best",
        ),
        Multiplexing::Blind => run_candidates(
            net,
            true,
            Multiplexing::Blind,
            &[(Method::Tfa, Multiplexing::Blind), (Method::Sfa, Multiplexing::Blind)],
            "best-blind",
        ),
    }
}

/// Smallest possible delay of a route: latencies, one smallest frame per hop, propagation.
pub fn best_case_delay(net: &Network, f: FlowId, ports: &[PortId], destination: usize) -> f64 {
    let flow = &net.flows[f];
    ports
        .iter()
        .map(|&p| {
            let port = &net.ports[p];
            net.nodes[port.node].technological_latency
                + flow.min_frame_wire / port.rate
                + port.propagation_delay
        })
        .sum::<f64>()
        + net.nodes[destination].receive_latency
}

pub(crate) fn flow_bound(
    net: &Network,
    f: FlowId,
    r: &crate::model::Route,
    delay: f64,
    reason: Option<String>,
    method: &'static str,
) -> FlowBound {
    let best_case = best_case_delay(net, f, &r.ports, r.destination);
    row(&net.flows[f], f, (r.destination, r.plane), delay, best_case, reason, method)
}

/// The row of flow `f` on `route` (destination, plane), from its delay and best-case delay (s).
fn row(
    flow: &crate::model::FlowModel,
    f: FlowId,
    (destination, plane): (usize, usize),
    delay: f64,
    best_case: f64,
    reason: Option<String>,
    method: &'static str,
) -> FlowBound {
    let delay_us = delay * 1e6;
    let bcd_us = best_case * 1e6;
    let deadline_us = flow.deadline.map(|d| d * 1e6);
    FlowBound {
        flow: f,
        destination,
        plane,
        delay_us,
        jitter_us: (delay_us - bcd_us).max(0.0),
        best_case_us: bcd_us,
        deadline_us,
        slack_us: deadline_us.map(|d| d - delay_us),
        status: status_of(delay_us, deadline_us),
        method,
        reason,
    }
}

#[cfg(test)]
mod table_tests {
    use super::*;
    use crate::model::load_network;
    use serde_json::json;

    /// ES1 (class hi: 500 B every 1 ms) and ES2 (class lo: a 20 kB burst, frames 64..1500 B) to
    /// ES3 through SW, whose port to ES3 runs `table`; 100 Mb/s, no latencies.
    fn network(table: serde_json::Value) -> Network {
        let doc = json!({
            "name": "table",
            "defaults": {"link_rate": "100Mbps", "technological_latency": "0us", "propagation_delay": "0us"},
            "classes": [{"name": "hi"}, {"name": "lo"}],
            "schedulers": {"t": table},
            "end_systems": [{"name": "ES1"}, {"name": "ES2"}, {"name": "ES3"}],
            "switches": [{"name": "SW", "scheduler": "t"}],
            "links": [{"from": "ES1", "to": "SW"}, {"from": "ES2", "to": "SW"}, {"from": "SW", "to": "ES3"}],
            "flows": [
                {"name": "H", "type": "virtual_link", "bag": "1ms", "lmin": "64B", "lmax": "500B",
                 "class": "hi", "source": "ES1", "destinations": ["ES3"]},
                {"name": "L", "type": "token_bucket", "burst": "20000B", "rate": "10Mbps",
                 "min_packet": "64B", "max_packet": "1500B", "class": "lo", "source": "ES2",
                 "destinations": ["ES3"]}
            ]
        });
        let (n, d) = load_network(&doc.to_string());
        n.unwrap_or_else(|| panic!("{:?}", d.0))
    }

    /// Every table kind is analysed by tfa, sfa and best, with finite bounds.
    #[test]
    fn table_ports_are_analysed() {
        for kind in ["as_basic", "iba_weighted", "dtable"] {
            let net = network(json!({"kind": "table", "table_kind": kind, "entries": [
                {"class": "hi", "weight": "600B"}, {"class": "lo", "weight": "1600B"},
                {"class": "hi", "weight": "600B"}, {"class": "lo", "weight": "1600B"}]}));
            assert!(applies(&net).is_ok(), "{kind}");
            for report in [
                analyze(
                    &net,
                    &Options { method: Method::Tfa, grouping: false, multiplexing: Multiplexing::Fifo },
                ),
                analyze(
                    &net,
                    &Options { method: Method::Sfa, grouping: true, multiplexing: Multiplexing::Fifo },
                ),
                best(&net, Multiplexing::Fifo),
                best(&net, Multiplexing::Blind),
            ] {
                assert!(report.flows.iter().all(|f| f.delay_us.is_finite() && f.reason.is_none()), "{kind}");
            }
        }
    }

    /// The DTable class bound by hand (docs/ANALYSIS.md, "Table schedulers"). Class hi: entries
    /// 0 and 2 of 600 B, lo's entries 1 and 3 of 1600 B. Wire bits: L_hi = 4160, s'_hi = 520/500;
    /// lo's smallest frame 84/64 B, s_lo = 1.3125, L_lo = 12000 frame bits. X per lo entry
    /// = 1.3125·12800 = 16800, X = 33600; A = 1.04·4800 = 4992, P = 9984, r = X/P = 3.3654;
    /// K = 1.3125·12000 = 15750; D = 4160; U ≡ 0 (the layout is regular), so
    /// C·Θ = 4160 + 15750 + max(16800, 4160·r + 16800) = 50710 bits: Θ = 507.1 µs,
    /// ρ = P·C/(P + X) = 22.9075 Mb/s. H's burst at SW: 4160 + 4.16 Mb/s × 41.6 µs (its ES1 port
    /// delay) = 4333.056 bits, so SW adds Θ + b/ρ and H's bound is 41.6 + 507.1 + 189.154 µs
    /// (lo's 20 kB burst makes the blind residual looser).
    #[test]
    fn dtable_bound_by_hand() {
        let net = network(json!({"kind": "table", "table_kind": "dtable", "entries": [
            {"class": "hi", "weight": "600B"}, {"class": "lo", "weight": "1600B"},
            {"class": "hi", "weight": "600B"}, {"class": "lo", "weight": "1600B"}]}));
        let r = analyze(
            &net,
            &Options { method: Method::Tfa, grouping: false, multiplexing: Multiplexing::Fifo },
        );
        let h = r.flows.iter().find(|f| r.flows.names_of(f).0 == "H").unwrap();
        let rho = 9984.0 / 43584.0 * 100e6;
        let want = 41.6 + 507.1 + 4333.056 / rho * 1e6;
        assert!((h.delay_us - want).abs() < 1e-6, "{} vs {want}", h.delay_us);
    }
}
