//! One egress port under TFA: its queues' service (FIFO, static priority, class shares,
//! shapers), the rules that leave a queue without a bound (overload, cycles, regulators).

use super::*;

/// Service curve, delay and backlog of every queue of port `p`, from the current bursts.
pub(super) fn analyse_port(net: &Network, lay: &Layout, p: PortId, opt: &Options, st: &mut TfaState) {
    analyse_port_curves(net, lay, p, opt, st);
    if lay.time_triggered.is_empty() {
        return;
    }
    // A queue of time-triggered frames only: each frame leaves after its own transmission
    // (schedulers::tas, the time-triggered rule), whatever the curves above allow.
    let mut changed = false;
    for &q in &lay.port_queues[p] {
        let tt: Option<Vec<f64>> = lay.queues[q]
            .crossings
            .iter()
            .map(|&c| lay.time_triggered.get(&(lay.crossings[c].flow, p)).copied())
            .collect();
        if let Some(d) = tt.filter(|d| !d.is_empty()) {
            st.delay[q] = Ok(d.iter().copied().fold(0.0, f64::max));
            changed = true;
        }
    }
    if changed {
        st.port_delay[p] =
            lay.port_queues[p].iter().try_fold(0.0, |m: f64, &q| st.delay[q].clone().map(|d| m.max(d)));
    }
}

pub(super) fn analyse_port_curves(net: &Network, lay: &Layout, p: PortId, opt: &Options, st: &mut TfaState) {
    let port = &net.ports[p];
    let cx = &lay.crossings;
    let latency = net.nodes[port.node].technological_latency;
    let model = &lay.models[p];
    let beta = Curve::rate_latency(model.rate, latency);
    let queues = &lay.port_queues[p];
    // Which queues have no bound for lack of service (an overloaded class, or an infinite burst
    // entering a class the queue depends on), each with its reason; see [`class_blocks`].
    let (blocked, by_cycle) = class_blocks(net, lay, p, st);
    for (&q, &b) in queues.iter().zip(&by_cycle) {
        st.cycle_blocked[q] = b;
    }
    if !blocked.is_empty() && blocked.iter().all(Option::is_some) {
        for (&q, why) in queues.iter().zip(&blocked) {
            let why = why.clone().expect("every queue is blocked");
            st.service[q] = Err(why.clone());
            st.delay[q] = Err(why);
        }
        let why = blocked[0].clone().expect("a port has a queue");
        st.port_delay[p] = Err(why.clone());
        st.port_backlog[p] = Err(why);
        return;
    }
    let first_blocked = blocked.iter().flatten().next().cloned();
    if let Some(why) = unfree_regulator(net, lay, p) {
        for &q in queues {
            st.service[q] = Err(why.clone());
            st.delay[q] = Err(why.clone());
        }
        st.port_delay[p] = Err(why.clone());
        st.port_backlog[p] = Err(why);
        return;
    }
    for &q in queues {
        st.group_sums[q] = st.groups[q].iter().map(|g| g.sums(net, cx, &st.burst)).collect();
    }
    source_curves(net, lay, p, st);
    // Fast path: one FIFO queue of token buckets behind β_{C,T} has the closed forms
    // delay T + B/C (FIFO; (C·T + B)/(C − R) blind) and backlog B + R·T (Le Boudec & Thiran
    // Thm 1.4.1-1.4.2, §6.2); no curve needed.
    if let [q] = queues[..] {
        let tb = (0..st.groups[q].len())
            .try_fold((0.0, 0.0), |(b, r), k| st.group_tb(q, k).map(|(gb, gr)| (b + gb, r + gr)));
        if let (Sharing::Fifo, Some((b, r))) = (&model.sharing, tb) {
            let blind = opt.multiplexing == Multiplexing::Blind && lay.queues[q].crossings.len() > 1;
            let delay = if blind {
                if r < model.rate {
                    Ok((model.rate * latency + b) / (model.rate - r))
                } else {
                    Err(Unbounded::new(format!(
                        "{}: blind multiplexing at full load (offered {} = rate)",
                        net.port_label(p),
                        rate_text(net, r)
                    )))
                }
            } else {
                Ok(latency + b / model.rate)
            };
            st.service[q] = Ok(beta);
            st.port_delay[p] = delay.clone();
            st.delay[q] = delay;
            st.port_backlog[p] = Ok(b + r * latency);
            return;
        }
    }
    // A blocked queue's arrivals may have infinite bursts: none of the curves below reads them
    // (its service and delay are its reason), so it stands as the zero curve. A staircase's exact
    // curve only under FIFO: blind multiplexing reads a left-over service.
    let exact = opt.multiplexing == Multiplexing::Fifo && model.sharing == Sharing::Fifo;
    let alphas: Vec<Curve> = queues
        .iter()
        .zip(&blocked)
        .map(|(&q, b)| match b {
            Some(_) => Curve::zero(),
            None if exact => sum_curves((0..st.groups[q].len()).filter_map(|k| st.exact_group_curve(q, k))),
            None => sum_curves((0..st.groups[q].len()).filter_map(|k| st.group_curve(q, k))),
        })
        .collect();
    let mut port_delay: Result<f64, Unbounded> = Ok(0.0);
    // Shaped ports: one walk over the levels, the shaper's curve for each.
    let d = schedulers::discipline(&port.discipline).expect("a port's discipline is no shaper");
    let rate_text = |bps: f64| rate_text(net, bps);
    let view = shaped_port(net, lay, p, latency, &rate_text);
    let walk = |gated, level| shaped_levels(lay, p, opt, &alphas, &blocked, gated, level);
    let mut shaped = match d.service() {
        schedulers::Service::CreditBased(cbs) => Some(match &cbs.gates {
            None => walk(false, Box::new(schedulers::cbs::level_service(&view, cbs.idle_slopes))),
            Some(gates) => {
                walk(true, Box::new(schedulers::cbs::gated_level_service(&view, cbs.idle_slopes, gates)))
            }
        }),
        schedulers::Service::TimeAware(tas) => {
            Some(walk(true, Box::new(schedulers::tas::level_service(&view, tas))))
        }
        _ => None,
    }
    .map(Vec::into_iter);
    for (k, &q) in queues.iter().enumerate() {
        let service = match (&model.sharing, lay.queues[q].priority) {
            (Sharing::CreditBased | Sharing::TimeAware, _) => {
                shaped.as_mut().and_then(|s| s.next()).expect("one service per queue")
            }
            (Sharing::Fifo, _) | (_, None) => Ok(beta.clone()),
            (Sharing::ClassShares, Some(_)) => {
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
                // Without a bound on another class (blocked), only the guaranteed share holds.
                let others_bounded = blocked.iter().enumerate().all(|(o, b)| o == k || b.is_none());
                match curves::arbitrary_residual(&beta, &others).ok().filter(|_| others_bounded) {
                    Some(l) => Err((guaranteed, l)),
                    None => Ok(guaranteed),
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
            (Sharing::StaticPriority | Sharing::Asynchronous, Some(level)) => {
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
        // With one flow in the queue there is no order to assume: blind is FIFO.
        let mux = if lay.queues[q].crossings.len() == 1 { Multiplexing::Fifo } else { opt.multiplexing };
        let (service, delay) = match &blocked[k] {
            Some(why) => (Err(why.clone()), Err(why.clone())),
            None => {
                let delay = service.clone().and_then(|s| queue_delay(&alphas[k], &s, mux));
                (service, delay.map_err(|u| u.context(&net.port_label(p))))
            }
        };
        port_delay = match (port_delay, &delay) {
            (Ok(a), Ok(b)) => Ok(a.max(*b)),
            (Err(e), _) => Err(e),
            (_, Err(e)) => Err(e.clone()),
        };
        st.service[q] = service;
        st.delay[q] = delay;
    }
    st.port_delay[p] = port_delay;
    if let Some(why) = first_blocked {
        // The port's backlog counts every queue's: one without a bound leaves it without one.
        st.port_backlog[p] = Err(why);
        return;
    }
    st.port_backlog[p] = if model.sharing == Sharing::Asynchronous {
        // The regulators hold frames while the link may idle: the queues' backlogs (each within
        // its own service) and what the regulators hold. A frame leaves its regulator within the
        // delay bound D_u of the queue upstream (shaping for free), so the regulator holds at
        // most the flow's arrivals at the port in D_u: its output bound upstream, b_u + r·D_u.
        let held = queues.iter().flat_map(|&q| &lay.queues[q].crossings).try_fold(0.0, |sum, &c| {
            match cx[c].upstream.filter(|_| lay.regulated[c]) {
                None => Ok(sum),
                Some(u) => st.delay[cx[u].queue]
                    .as_ref()
                    .map(|d| sum + st.out_burst[u] + net.flows[cx[c].flow].rate * d)
                    .map_err(|e| e.clone()),
            }
        });
        held.and_then(|held| {
            queues.iter().zip(&alphas).try_fold(held, |sum, (&q, a)| {
                let s = st.service[q].as_ref().map_err(|u| u.clone())?;
                curves::vertical_deviation(a, s).map(|b| sum + b)
            })
        })
    } else if matches!(model.sharing, Sharing::CreditBased | Sharing::TimeAware) {
        // A shaper may hold frames while the link idles: the port is not work-conserving, so its
        // backlog is the sum of its queues' (each within its own service).
        queues.iter().zip(&alphas).try_fold(0.0, |sum, (&q, a)| {
            let s = st.service[q].as_ref().map_err(|u| u.clone())?;
            curves::vertical_deviation(a, s).map(|b| sum + b)
        })
    } else {
        curves::vertical_deviation(&sum_curves(alphas.into_iter()), &beta)
    }
    .map_err(|u| u.context(&net.port_label(p)));
}

/// Which queues of port `p` have no bound for lack of service, each with its reason, the others
/// `None`. A queue depends on the classes whose load and bursts its service counts: under FIFO
/// (one queue) every flow; under static priority, asynchronous traffic shaping (its queues are
/// served by static priority) and credit-based shaping, its own level and the higher ones (a
/// lower level blocks it by one frame, finite whatever that level's load); under a time-aware
/// shaper or class shares, its own class only (its windows, its guaranteed share; the higher
/// levels a gated level depends on answer in [`shaped_levels`]). It has no bound when those
/// classes offer more than the port's rate, or when one of their flows enters with an infinite
/// burst (an upstream port has no bound for it), and beside each queue whether a diverging cycle of
/// the TFA equations is why ([`tfa_with`]).
pub(super) fn class_blocks(
    net: &Network,
    lay: &Layout,
    p: PortId,
    st: &TfaState,
) -> (Vec<Option<Unbounded>>, Vec<bool>) {
    let cx = &lay.crossings;
    let model = &lay.models[p];
    let queues = &lay.port_queues[p];
    let load =
        |q: usize| -> f64 { lay.queues[q].crossings.iter().map(|&c| net.flows[cx[c].flow].rate).sum() };
    let rate_kind = if model.rate < net.ports[p].rate { "shaped" } else { "link" };
    // `who` ("", "class 'x' ", ...) offers more than the port's rate; never the cycle's doing.
    let overloaded = |who: String, offered: f64| {
        let why = format!(
            "{} overloaded: {who}offered {} > {rate_kind} rate {}",
            net.port_label(p),
            rate_text(net, offered),
            rate_text(net, model.rate)
        );
        (Unbounded::new(why), false)
    };
    // A flow entering with an infinite burst, and whether a diverging cycle is the cause (its
    // burst here, or a queue upstream that the cycle left without a bound).
    let unbounded_flow = |qs: &[usize]| {
        qs.iter().flat_map(|&q| &lay.queues[q].crossings).find(|&&c| !st.burst[c].is_finite()).map(|&c| {
            let (flow, here) = (&net.flows[cx[c].flow].name, net.port_label(p));
            let upstream_cycle = cx[c].upstream.is_some_and(|u| st.cycle_blocked[cx[u].queue]);
            let why = if st.diverged[c] {
                format!(
                    "{here}: cyclic port dependencies: TFA does not converge, the burst of flow '{flow}' \
                     entering here grows without bound"
                )
            } else if upstream_cycle {
                format!(
                    "{here}: flow '{flow}' enters with an unbounded burst: cyclic port dependencies \
                     upstream, where TFA does not converge"
                )
            } else {
                format!("{here}: an upstream port has no finite bound for flow '{flow}'")
            };
            (Unbounded::new(why), st.diverged[c] || upstream_cycle)
        })
    };
    if model.sharing == Sharing::Fifo || queues.len() == 1 {
        let total: f64 = queues.iter().map(|&q| load(q)).sum();
        let why =
            if total > model.rate { Some(overloaded(String::new(), total)) } else { unbounded_flow(queues) };
        let (why, by_cycle) = why.map_or((None, false), |(w, c)| (Some(w), c));
        return (vec![why; queues.len()], vec![by_cycle; queues.len()]);
    }
    let class_name = |q: usize| {
        lay.queues[q].crossings.iter().find_map(|&c| net.flows[cx[c].flow].class).map_or_else(
            || format!("priority {}", lay.queues[q].priority.map_or("-".to_string(), |l| l.to_string())),
            |c| format!("'{}'", net.classes[c].name),
        )
    };
    queues
        .iter()
        .map(|&q| {
            let deps: Vec<usize> = match model.sharing {
                Sharing::TimeAware | Sharing::ClassShares => vec![q],
                _ => queues
                    .iter()
                    .copied()
                    .filter(|&o| lay.queues[o].priority <= lay.queues[q].priority)
                    .collect(),
            };
            let (own, with_higher) = (load(q), deps.iter().map(|&o| load(o)).sum::<f64>());
            if own > model.rate {
                Some(overloaded(format!("class {} ", class_name(q)), own))
            } else if with_higher > model.rate {
                Some(overloaded(format!("class {} and the higher classes ", class_name(q)), with_higher))
            } else {
                unbounded_flow(&deps)
            }
        })
        .map(|b| b.map_or((None, false), |(w, c)| (Some(w), c)))
        .unzip()
}

/// Why the interleaved regulators of port `p` are not free, if one is not: a regulated flow whose
/// port upstream is neither its source nor regulated for it enters its regulator with a burst
/// grown on the way, and Le Boudec's shaping-for-free theorem ([`schedulers::ats`]) needs the
/// flows to conform to their regulators at the input of the FIFO system before them.
pub(super) fn unfree_regulator(net: &Network, lay: &Layout, p: PortId) -> Option<Unbounded> {
    let cx = &lay.crossings;
    lay.port_queues[p].iter().flat_map(|&q| &lay.queues[q].crossings).find_map(|&c| {
        let u = cx[c].upstream.filter(|_| lay.regulated[c])?;
        (!lay.regulated[u] && cx[u].upstream.is_some()).then(|| {
            Unbounded::new(format!(
                "{}: flow '{}' reaches its interleaved regulator from {}, which does not regulate it \
                 (shaping for free needs the port upstream to be the flow's source or to regulate it)",
                net.port_label(p),
                net.flows[cx[c].flow].name,
                net.port_label(cx[u].port)
            ))
        })
    })
}
