//! Every (method, multiplexing) candidate on every route, the smallest bound per route kept
//! with the method that gave it.

use super::*;

/// Flow-server crossings above which the default arrival bounding (`ArrivalBounds::Tightest`)
/// leaves PMOO arrival bounds out, said in a note: DNC's arrival bounds are recomputed for every
/// flow of interest over everything upstream of it, so their cost grows with the square of the
/// network (measured in docs/ANALYSIS.md, "Arrival bounding on server graphs").
/// `--arrival-bounds pmoo` computes them whatever the size.
pub const PMOO_ARRIVAL_BOUNDS_MAX_CROSSINGS: usize = 2000;

/// Runs every (method, multiplexing) candidate on every route and keeps, per route, the smallest
/// bound with the name of the method that gave it. TFA is computed once (with `tfa_mux`) and its
/// propagated arrival curves serve every SFA candidate: they bound the cross traffic whatever the
/// candidate assumes inside the queue of interest.
pub(super) fn run_candidates(
    net: &Network,
    grouping: bool,
    tfa_mux: Multiplexing,
    candidates: &[(Candidate, Multiplexing)],
    name: &'static str,
    arrival: ArrivalBounds,
) -> AnalysisReport {
    let lay = layout(net);
    let tfa_opt = Options { method: Candidate::Tfa, grouping, multiplexing: tfa_mux };
    // The θ-family choice of FIFO left-over service is not monotone in the cross traffic, so
    // grouping can make a bound larger (through an output bound upstream, or SFA's left-over).
    // Both bounds are valid: with grouping, every route is also evaluated on the ungrouped curves
    // and the smaller bound kept. The two TFAs are independent.
    let ((st, notes), ungrouped) = join(
        grouping && two_threads(&lay),
        || tfa(net, &lay, &tfa_opt),
        || grouping.then(|| tfa(net, &lay, &Options { grouping: false, ..tfa_opt }).0),
    );
    report_candidates(net, &lay, &st, ungrouped.as_ref(), notes, grouping, candidates, name, arrival)
}

/// [`run_candidates`]' bounds from TFA's states already computed.
#[allow(clippy::too_many_arguments)]
pub(super) fn report_candidates(
    net: &Network,
    lay: &Layout,
    st: &TfaState,
    ungrouped: Option<&TfaState>,
    mut notes: Vec<String>,
    grouping: bool,
    candidates: &[(Candidate, Multiplexing)],
    name: &'static str,
    arrival: ArrivalBounds,
) -> AnalysisReport {
    let mut labels: Vec<Vec<&'static str>> = Vec::with_capacity(candidates.len());
    // The SFA candidates' runs, one per candidate and state (the grouped, then the ungrouped
    // curves), are independent: on a large network the first half runs on another thread, the
    // second here.
    enum Run {
        Sfa(Vec<Result<Curve, Unbounded>>),
        Iter(SfaIteration),
    }
    impl Run {
        fn plain(self) -> Vec<Result<Curve, Unbounded>> {
            match self {
                Run::Sfa(services) => services,
                Run::Iter(_) => unreachable!("SFA's runs are plain"),
            }
        }
        fn iterated(self) -> SfaIteration {
            match self {
                Run::Iter(it) => it,
                Run::Sfa(_) => unreachable!("SFA-iter's runs iterate"),
            }
        }
    }
    let jobs: Vec<(Candidate, Multiplexing, bool)> = candidates
        .iter()
        .filter(|(method, _)| matches!(method, Candidate::Sfa | Candidate::SfaIter))
        .flat_map(|&(method, mux)| {
            std::iter::once((method, mux, false)).chain(ungrouped.map(|_| (method, mux, true)))
        })
        .collect();
    // The crossings SFA's rows read: the last of each route.
    let mut route_ends = vec![false; lay.crossings.len()];
    for (f, flow) in net.flows.iter().enumerate() {
        for r in &flow.routes {
            route_ends[lay.crossing(f, *r.ports.last().expect("routes have ports"))] = true;
        }
    }
    let run = |&(method, mux, plain): &(Candidate, Multiplexing, bool)| {
        let (st, grouping) = match ungrouped {
            Some(st_u) if plain => (st_u, false),
            _ => (st, grouping),
        };
        let opt = Options { method, grouping, multiplexing: mux };
        match method {
            Candidate::Sfa => Run::Sfa(sfa_services(net, lay, st, &opt, Some(&route_ends))),
            // TFA's own passes assume what the candidate assumes (as `st` does, in every
            // candidate list that holds SFA-iter).
            _ => Run::Iter(sfa_iterate(net, lay, st, &Options { method: Candidate::Tfa, ..opt }, &opt)),
        }
    };
    let half = jobs.len() / 2;
    let (second, mut runs) = join(
        jobs.len() >= 2 && two_threads(lay),
        || jobs[half..].iter().map(run).collect::<Vec<Run>>(),
        || jobs[..half].iter().map(run).collect::<Vec<Run>>(),
    );
    runs.extend(second);
    let mut runs = runs.into_iter();
    let per_candidate = 1 + usize::from(ungrouped.is_some());
    // Per candidate, the end-to-end services to evaluate each route on, each with the name its
    // rows get: SFA-iter's plain-SFA passes are named as SFA, so that a row says `sfa-iter` only
    // where the iteration tightened it (they come first: a tie goes to the first).
    let services: Vec<Vec<Vec<Result<Curve, Unbounded>>>> = candidates
        .iter()
        .map(|&(method, mux)| match method {
            Candidate::Tfa | Candidate::Pmoo => {
                labels.push(Vec::new());
                Vec::new()
            }
            Candidate::Sfa => {
                let opt = Options { method, grouping, multiplexing: mux };
                let v: Vec<_> = runs.by_ref().take(per_candidate).map(Run::plain).collect();
                labels.push(vec![opt.name(); v.len()]);
                v
            }
            Candidate::SfaIter => {
                let opt = Options { method, grouping, multiplexing: mux };
                let sfa_name = Options { method: Candidate::Sfa, ..opt }.name();
                let iterations: Vec<SfaIteration> =
                    runs.by_ref().take(per_candidate).map(Run::iterated).collect();
                // Alone, SFA-iter says how it ended; among `best`'s candidates, only when it
                // iterated or could not.
                for (run, curves) in iterations.iter().zip(["", " (on the ungrouped curves)"]) {
                    if candidates.len() == 1 || run.passes > 0 || run.skipped.is_some() {
                        notes.push(run.note(&format!("{}{curves}", opt.name())));
                    }
                }
                let (mut first, mut later) = (Vec::new(), Vec::new());
                for run in iterations {
                    let mut passes = run.services.into_iter();
                    first.extend(passes.next());
                    later.extend(passes);
                }
                labels.push([vec![sfa_name; first.len()], vec![opt.name(); later.len()]].concat());
                first.extend(later);
                first
            }
        })
        .collect();
    // On a server graph, SFA also as DNC computes it, its cross traffic bounded by aggregate PBOO
    // over concatenated sub-paths ([`aggregate_pboo`]): per flow, its (delay, backlog), named as
    // plain SFA. Both bounds are valid; the smaller is kept.
    let dnc_sfa: Vec<Option<aggregate_pboo::FlowBounds>> = candidates
        .iter()
        .zip(labels.iter_mut())
        .map(|(&(method, mux), labels)| {
            let mut graph = aggregate_pboo::ServerGraph::new(net, mux)
                .filter(|_| matches!(method, Candidate::Sfa | Candidate::SfaIter))?;
            labels.push(Options { method: Candidate::Sfa, grouping, multiplexing: mux }.name());
            Some((0..net.flows.len()).map(|f| graph.sfa(f)).collect())
        })
        .collect();
    // On a server graph under arbitrary multiplexing, each candidate also as DNC computes it with
    // PMOO arrival bounding ([`aggregate_pmoo`]): per flow, its (delay, backlog), the delay
    // infinite where TFA has none. With `ArrivalBounds::Pmoo` these are the candidate's only
    // bounds; with `Tightest` the smaller delay (and its backlog) is kept.
    // One graph for every candidate: its cached arrival bounds do not depend on the method.
    let mut pmoo_graph = (arrival != ArrivalBounds::Pboo)
        .then(|| aggregate_pboo::ServerGraph::blind(net, aggregate_pboo::TurnBounding::Pmoo))
        .flatten();
    if arrival == ArrivalBounds::Pmoo && pmoo_graph.is_some() {
        notes.push("cross traffic bounded by PMOO arrival bounds alone (--arrival-bounds pmoo)".to_string());
    }
    let crossings = lay.crossings.len();
    if arrival == ArrivalBounds::Tightest
        && crossings > PMOO_ARRIVAL_BOUNDS_MAX_CROSSINGS
        && pmoo_graph.take().is_some()
        && candidates.iter().any(|&(_, mux)| mux == Multiplexing::Blind)
    {
        notes.push(format!(
            "PMOO arrival bounds not computed ({crossings} flow-server crossings > \
             {PMOO_ARRIVAL_BOUNDS_MAX_CROSSINGS}): cross traffic bounded by PBOO; ask for them with \
             --arrival-bounds pmoo"
        ));
    }
    // Per candidate (None: no PMOO arrival bounds for it), per flow: (delay, backlog) if bounded.
    type PerFlow = Vec<Option<(f64, f64)>>;
    let dnc_pmoo: Vec<Option<PerFlow>> = candidates
        .iter()
        .map(|&(method, mux)| {
            let graph = pmoo_graph.as_mut().filter(|_| mux == Multiplexing::Blind)?;
            Some(
                (0..net.flows.len())
                    .map(|f| match method {
                        Candidate::Tfa => Some(graph.tfa(f)).filter(|(_, b)| b.is_finite()),
                        Candidate::Sfa | Candidate::SfaIter => graph.sfa(f),
                        Candidate::Pmoo => graph.pmoo(f),
                    })
                    .collect(),
            )
        })
        .collect();
    let method_names: Vec<&'static str> = candidates
        .iter()
        .map(|&(method, mux)| Options { method, grouping, multiplexing: mux }.name())
        .collect();
    let sfa_names: Vec<&'static str> = candidates
        .iter()
        .map(|&(_, mux)| Options { method: Candidate::Sfa, grouping, multiplexing: mux }.name())
        .collect();
    // The rows of different flows are independent: on a large network, the second half of the
    // flows' are computed on another thread.
    let rows = |range: std::ops::Range<usize>| {
        let mut rows = Vec::with_capacity(net.flows[range.clone()].iter().map(|f| f.routes.len()).sum());
        let mut pmoo_scratch = pmoo::Scratch::new(lay);
        for f in range {
            let flow = &net.flows[f];
            for r in &flow.routes {
                let fixed: f64 = r.ports.iter().map(|&p| net.ports[p].propagation_delay).sum::<f64>()
                    + net.nodes[r.destination].receive_latency;
                // (delay, the same method's backlog, method) of the smallest delay; without a finite
                // delay, the smallest backlog any method bounds.
                let mut best: Option<(f64, f64, &'static str)> = None;
                let mut backlog_only = f64::INFINITY;
                let mut reason = None;
                // An interleaved regulator's delay is free only hop by hop, with the queue before it
                // (TFA's sum); it has no service curve to convolve along the route.
                let through_regulator = r.ports.iter().any(|&p| {
                    let c = lay.crossing(f, p);
                    lay.regulated[c] && lay.crossings[c].upstream.is_some()
                });
                for (k, (&(method, _), cname)) in candidates.iter().zip(&method_names).enumerate() {
                    let pmoo_alone = arrival == ArrivalBounds::Pmoo && dnc_pmoo[k].is_some();
                    let mut bounds: Vec<Result<(f64, f64), Unbounded>> = if pmoo_alone {
                        Vec::new()
                    } else {
                        match method {
                            Candidate::Sfa | Candidate::SfaIter | Candidate::Pmoo if through_regulator => vec![Err(Unbounded::new(
                                "the route crosses interleaved regulators (ATS), bounded hop by hop only: use tfa or best",
                            ))],
                            Candidate::Tfa => {
                                // Either state's backlog bounds the same quantity: keep the smaller.
                                let backlog = std::iter::once(st)
                                    .chain(ungrouped)
                                    .map(|st| tfa_backlog(st, &r.ports))
                                    .fold(f64::INFINITY, f64::min);
                                backlog_only = backlog_only.min(backlog);
                                std::iter::once(st)
                                    .chain(ungrouped)
                                    .map(|st| tfa_route(lay, st, f, &r.ports).map(|d| (d, backlog)))
                                    .collect()
                            }
                            // SFA-iter: every pass's bound is valid; the smallest is kept.
                            Candidate::Sfa | Candidate::SfaIter => services[k]
                                .iter()
                                .map(|s| sfa_route(net, lay, st, s, f, &r.ports))
                                .chain(dnc_sfa[k].as_ref().and_then(|b| b[f]).map(Ok))
                                .collect(),
                            // Its interferers as token buckets (the ungrouped curves, in closed form):
                            // with the links' lines they cost three times more for a bound that, on
                            // Ethernet, TFA or SFA beats anyway (PMOO pays the slowest left-over rate of
                            // the whole route).
                            Candidate::Pmoo => {
                                let st = ungrouped.unwrap_or(st);
                                let hopeless = best.is_some_and(|(b, _, _)| {
                                    pmoo::pmoo_lower_bound(net, lay, st, f, &r.ports, &mut pmoo_scratch) + fixed >= b
                                });
                                if hopeless {
                                    Vec::new()
                                } else {
                                    vec![pmoo::pmoo_route(net, lay, st, f, &r.ports, &mut pmoo_scratch)]
                                }
                            }
                        }
                    };
                    // DNC's analysis with PMOO arrival bounds: SFA's is not iterated.
                    let pmoo_at = bounds.len();
                    let pmoo_label = match method {
                        Candidate::SfaIter => sfa_names[k],
                        _ => *cname,
                    };
                    if let Some(by_pmoo) = dnc_pmoo[k].as_ref() {
                        bounds.push(match by_pmoo[f] {
                            Some((d, b)) if d.is_finite() => Ok((d, b)),
                            Some((_, b)) => {
                                backlog_only = backlog_only.min(b);
                                Err(Unbounded::new(
                                    "a server on the path has no delay bound with PMOO arrival bounds",
                                ))
                            }
                            None => Err(Unbounded::new("no bound with PMOO arrival bounds")),
                        });
                    }
                    for (i, bound) in bounds.into_iter().enumerate() {
                        match bound {
                            Ok((d, b)) if best.as_ref().is_none_or(|(x, _, _)| d + fixed < *x) => {
                                let label = if i == pmoo_at && dnc_pmoo[k].is_some() {
                                    pmoo_label
                                } else {
                                    labels[k].get(i).copied().unwrap_or(*cname)
                                };
                                best = Some((d + fixed, b, label))
                            }
                            Ok(_) => {}
                            Err(u) => reason = reason.or(Some(u.to_string())),
                        }
                    }
                }
                let (delay, backlog, method) = best.unwrap_or((f64::INFINITY, backlog_only, name));
                let reason = if delay.is_finite() { None } else { reason };
                rows.push(flow_bound(net, f, r, (delay, backlog), reason, method));
            }
        }
        rows
    };
    let half = net.flows.len() / 2;
    let (mut flows, second) = join(two_threads(lay), || rows(0..half), || rows(half..net.flows.len()));
    flows.extend(second);
    if candidates.iter().all(|&(_, m)| m == Multiplexing::Blind) {
        notes.push("blind multiplexing: no assumption on the order of frames inside a queue".to_string());
    }
    let (port_delay, port_backlog) = match ungrouped {
        None => (st.port_delay.clone(), st.port_backlog.clone()),
        Some(u) => (smaller(&st.port_delay, &u.port_delay), smaller(&st.port_backlog, &u.port_backlog)),
    };
    AnalysisReport::new(net, name, flows, port_bounds(net, &port_delay, &port_backlog), notes)
}

/// The smaller of two bounds, element by element (finite beats infinite).
pub(super) fn smaller(
    a: &[Result<f64, Unbounded>],
    b: &[Result<f64, Unbounded>],
) -> Vec<Result<f64, Unbounded>> {
    a.iter()
        .zip(b)
        .map(|(x, y)| match (x, y) {
            (Ok(x), Ok(y)) => Ok(x.min(*y)),
            (Ok(v), Err(_)) | (Err(_), Ok(v)) => Ok(*v),
            (Err(e), Err(_)) => Err(e.clone()),
        })
        .collect()
}
