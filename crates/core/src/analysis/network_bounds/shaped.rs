//! The levels of a shaped port, highest first: the walk that bounds what each level sends, and
//! the credit-based and time-aware shapers' service per level from their scheduler modules.

use super::*;

/// What the levels above one level of a shaped port send, as the walk over the port's levels
/// (highest first, [`shaped_levels`]) has bounded it.
pub(super) struct Above {
    /// Their output as a token bucket (burst, rate) and as a curve.
    pub(super) tb: (f64, f64),
    pub(super) out: Curve,
    /// Each level's output curve, highest first, `None` for a level without a bound (a gated
    /// level counts only those whose gates may open inside its windows).
    pub(super) levels: Vec<Option<Curve>>,
    /// Why a level above has no bound, if one has none (`tb` and `out` then leave it out).
    pub(super) unbounded: Option<Unbounded>,
    /// Their arrival curves.
    pub(super) arrivals: Curve,
    /// Whether a level above is shaped (bounds its own output, so may hold frames back).
    pub(super) shaped: bool,
}

/// What a shaper gives one level: its service curve, and the level's output bound as a token
/// bucket (burst, rate) when the shaper bounds it itself (else the walk takes α(τ + D), the
/// arrivals advanced by the level's delay bound).
pub(super) type LevelService = (Result<Curve, Unbounded>, Option<(f64, f64)>);

/// The service of each queue (priority level) of a shaped port, highest first: one walk over
/// the levels, `level(k, lmax, above)` the shaper's curve for level k given every level's
/// largest frame and what the levels above send. A level without a bound leaves the levels below
/// without one, unless `gated`: a gated level is then still asked, and answers without a bound
/// only if it depends on such a level ([`Above::unbounded`], [`Above::levels`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn shaped_levels(
    net: &Network,
    lay: &Layout,
    p: PortId,
    opt: &Options,
    alphas: &[Curve],
    blocked: &[Option<Unbounded>],
    gated: bool,
    mut level: impl FnMut(usize, &[f64], &Above) -> LevelService,
) -> Vec<Result<Curve, Unbounded>> {
    let cx = &lay.crossings;
    let queues = &lay.port_queues[p];
    let lmax: Vec<f64> = queues
        .iter()
        .map(|&q| {
            lay.queues[q].crossings.iter().map(|&c| net.flows[cx[c].flow].max_frame_wire).fold(0.0, f64::max)
        })
        .collect();
    let mut above = Above {
        tb: (0.0, 0.0),
        out: Curve::zero(),
        levels: Vec::new(),
        unbounded: None,
        arrivals: Curve::zero(),
        shaped: false,
    };
    let mut out = Vec::with_capacity(queues.len());
    for (k, &q) in queues.iter().enumerate() {
        let service = match (&blocked[k], &above.unbounded) {
            (Some(why), _) => {
                // Its own rule leaves the level without a bound ([`class_blocks`]).
                above.unbounded.get_or_insert_with(|| why.clone());
                above.levels.push(None);
                Err(why.clone())
            }
            (None, Some(why)) if !gated => Err(why.clone()),
            _ => {
                let (service, own_output) = level(k, &lmax, &above);
                let output = match (&service, own_output) {
                    (Err(_), _) => Err(Unbounded::new("a higher priority level has no bound")),
                    (Ok(_), Some((b, r))) => {
                        above.shaped = true;
                        Ok(Curve::token_bucket(r, b))
                    }
                    (Ok(s), None) => {
                        let mux = if lay.queues[q].crossings.len() == 1 {
                            Multiplexing::Fifo
                        } else {
                            opt.multiplexing
                        };
                        queue_delay(&alphas[k], s, mux).map(|d| alphas[k].shift_left(d))
                    }
                };
                match output {
                    Ok(o) => {
                        above.tb = (above.tb.0 + upper_burst(&o), above.tb.1 + o.tail_slope());
                        above.out = above.out.add(&o);
                        above.levels.push(Some(o));
                    }
                    Err(u) => {
                        above.unbounded.get_or_insert(u);
                        above.levels.push(None);
                    }
                }
                service
            }
        };
        above.arrivals = above.arrivals.add(&alphas[k]);
        out.push(service);
    }
    out
}

/// A level of a port with credit-based shapers, after [`schedulers::cbs`]: a shaped class gets
/// β = I·[t − T − (hiCredit − loCredit)/I]^+, hiCredit from the token bucket that bounds the
/// higher classes' output, and its output is within (hiCredit − loCredit, I); an unshaped level
/// gets the link minus the higher classes' output curves (their arrival curves when no shaped
/// class is above it: the levels above then serve whenever they hold frames) and one lower frame.
pub(super) fn credit_based_level<'a>(
    net: &'a Network,
    lay: &'a Layout,
    p: PortId,
    slopes: &'a BTreeMap<String, crate::units::DataRate>,
    latency: f64,
) -> impl FnMut(usize, &[f64], &Above) -> LevelService + 'a {
    use schedulers::cbs;
    let link = net.ports[p].rate;
    let beta = Curve::rate_latency(link, latency);
    let cx = &lay.crossings;
    move |k, lmax, above| {
        let q = lay.port_queues[p][k];
        let flows = || lay.queues[q].crossings.iter().map(|&c| &net.flows[cx[c].flow]);
        let class = flows().find_map(|f| f.class).map_or("", |c| net.classes[c].name.as_str());
        let rate: f64 = flows().map(|f| f.rate).sum();
        let lower = lmax[k + 1..].iter().copied().fold(0.0, f64::max);
        let Some(idle) = slopes.get(class).map(|r| r.bps()) else {
            let higher = if above.shaped { &above.out } else { &above.arrivals };
            return (curves::static_priority_residual(&beta, higher, lower), None);
        };
        if rate > idle * (1.0 + 1e-12) {
            let why = format!(
                "class '{class}' offered {} > idle slope {}",
                rate_text(net, rate),
                rate_text(net, idle)
            );
            return (Err(Unbounded::new(why)), None);
        }
        match cbs::hi_credit(idle, link, lower, above.tb) {
            None => (
                Err(Unbounded::new(format!(
                    "the credit of class '{class}' has no bound (its idle slope and the higher \
                     classes' rates exceed the link)"
                ))),
                None,
            ),
            Some(hi) => {
                let lo = cbs::lo_credit(idle, link, lmax[k]);
                let lr = cbs::latency_rate(idle, hi, lo);
                (
                    Ok(Curve::rate_latency(lr.rate, lr.latency + latency)),
                    Some(cbs::output_bucket(idle, hi, lo)),
                )
            }
        }
    }
}

/// A level of a port whose credit-based shapers sit behind a gate control list, after
/// [`schedulers::cbs`]'s gated model: a shaped class gets I·ρ·[t − T − θ − (hiCredit −
/// loCredit)/(I·ρ)]^+, (ρ, θ) the supply bound of its gate's windows less its largest frame at
/// their ends, hiCredit from [`schedulers::cbs::gated_hi_credit`]; an unshaped level is a gated
/// level as under the time-aware shaper ([`time_aware_level`]), the shaped levels above it
/// counted by their output buckets.
pub(super) fn gated_credit_based_level<'a>(
    net: &'a Network,
    lay: &'a Layout,
    p: PortId,
    slopes: &'a BTreeMap<String, crate::units::DataRate>,
    gates: &'a schedulers::tas::TasDiscipline<'a>,
    latency: f64,
) -> impl FnMut(usize, &[f64], &Above) -> LevelService + 'a {
    use schedulers::cbs;
    let link = net.ports[p].rate;
    let cx = &lay.crossings;
    let mut unshaped = time_aware_level(net, lay, p, gates, latency);
    move |k, lmax, above| {
        let q = lay.port_queues[p][k];
        let flows = || lay.queues[q].crossings.iter().map(|&c| &net.flows[cx[c].flow]);
        let class = flows().find_map(|f| f.class).map_or("", |c| net.classes[c].name.as_str());
        let Some(idle) = slopes.get(class).map(|r| r.bps()) else {
            return unshaped(k, lmax, above);
        };
        let rate: f64 = flows().map(|f| f.rate).sum();
        // The other levels' largest frames and classes (a shaped class is a level of its own).
        let level_names = |j: usize| -> Vec<&str> {
            let prio = lay.queues[lay.port_queues[p][j]].priority;
            net.classes.iter().filter(|c| Some(c.priority) == prio).map(|c| c.name.as_str()).collect()
        };
        let others: Vec<(f64, Vec<&str>)> =
            (0..lmax.len()).filter(|&j| j != k).map(|j| (lmax[j], level_names(j))).collect();
        let cycle = gates.cycle.secs();
        let windows = gates.windows(&[class]);
        // What the higher classes may send while the class waits with a growing credit, inside
        // its windows: a higher class whose gate never opens there sends only outside them.
        let relevant: Vec<usize> = match &windows {
            None => (0..k).collect(),
            Some(w) => {
                (0..k).filter(|&j| w.iter().any(|&(o, c)| gates.open_within(&level_names(j), o, c))).collect()
            }
        };
        // The lower frame on the wire when the credit last was 0: one that started inside a window
        // (a frame on the wire as a window opens is counted in the blocking below).
        let lower = (k + 1..lmax.len())
            .filter(|&j| {
                windows
                    .as_ref()
                    .is_none_or(|w| w.iter().any(|&(o, c)| gates.open_within(&level_names(j), o, c)))
            })
            .map(|j| lmax[j])
            .fold(0.0, f64::max);
        let Some(tb) = relevant.iter().try_fold((0.0, 0.0), |(b, r), &j| {
            above
                .levels
                .get(j)
                .and_then(Option::as_ref)
                .map(|out| (b + upper_burst(out), r + out.tail_slope()))
        }) else {
            return (Err(Unbounded::new("a higher priority level has no bound")), None);
        };
        let (supply, blocking) = match windows {
            None => (Some((1.0, 0.0)), 0.0),
            Some(windows) => {
                let usable: Vec<(f64, f64)> =
                    windows.iter().map(|&(o, c)| (o, c - lmax[k] / link)).filter(|(a, b)| b > a).collect();
                // Per cycle, the frames of other levels that may be on the wire as a window opens.
                let blocking: f64 = windows
                    .iter()
                    .map(|&(o, _)| {
                        others
                            .iter()
                            .filter(|(_, n)| gates.open_across(n, o))
                            .map(|&(l, _)| l)
                            .fold(0.0, f64::max)
                    })
                    .sum();
                (schedulers::tas::supply_bound(&usable, cycle), blocking)
            }
        };
        let Some((rho, theta)) = supply else {
            return (
                Err(Unbounded::new(format!(
                    "the gate windows of class '{class}' leave no time for its frames after the guard band"
                ))),
                None,
            );
        };
        if rate > idle * rho * (1.0 + 1e-12) {
            let why = format!(
                "class '{class}' offered {} > idle slope {} x the usable share {:.6} of its gate",
                rate_text(net, rate),
                rate_text(net, idle),
                rho
            );
            return (Err(Unbounded::new(why)), None);
        }
        let gate = cbs::GateSupply { rho, theta, blocking, cycle };
        match cbs::gated_hi_credit(idle, link, lower, tb, gate) {
            None => (
                Err(Unbounded::new(format!(
                    "the credit of class '{class}' has no bound (the higher classes' rate and the frames \
                     blocking its window starts reach the link's rate in its usable share {rho:.6})"
                ))),
                None,
            ),
            Some(hi) => {
                let lo = cbs::lo_credit(idle, link, lmax[k]);
                let lr = cbs::gated_latency_rate(idle, hi, lo, gate);
                (
                    Ok(Curve::rate_latency(lr.rate, lr.latency + latency)),
                    Some(cbs::output_bucket(idle, hi, lo)),
                )
            }
        }
    }
}

/// A level of a port with a time-aware shaper, after [`schedulers::tas`]: the rate-latency bound
/// of the supply of its gate's usable windows (each window less the largest frame of another
/// level whose gate is open across the window's start, and the level's largest frame at its end),
/// minus the output (arrival curves advanced by their delay bounds) of the higher levels whose
/// gates open inside one of the level's windows (the others send only outside them), and the largest
/// frame of another level whose gate is open during one of the level's windows (a frame of a
/// level whose gate closes at the window's start, or never opens inside the window, has ended
/// before it: frames end before their gate closes).
pub(super) fn time_aware_level<'a>(
    net: &'a Network,
    lay: &'a Layout,
    p: PortId,
    tas: &'a schedulers::tas::TasDiscipline<'a>,
    latency: f64,
) -> impl FnMut(usize, &[f64], &Above) -> LevelService + 'a {
    let link = net.ports[p].rate;
    move |k, lmax, above| {
        // The classes of the level: every class of the network at its priority.
        let level = lay.queues[lay.port_queues[p][k]].priority;
        let names: Vec<&str> =
            net.classes.iter().filter(|c| Some(c.priority) == level).map(|c| c.name.as_str()).collect();
        // The other levels at the port: their largest frame and their classes.
        let others: Vec<(f64, Vec<&str>)> = (0..lmax.len())
            .filter(|&j| j != k)
            .map(|j| {
                let prio = lay.queues[lay.port_queues[p][j]].priority;
                (
                    lmax[j],
                    net.classes
                        .iter()
                        .filter(|c| Some(c.priority) == prio)
                        .map(|c| c.name.as_str())
                        .collect(),
                )
            })
            .collect();
        let largest = |open: &dyn Fn(&[&str]) -> bool| {
            others.iter().filter(|(_, n)| open(n)).map(|&(l, _)| l).fold(0.0, f64::max)
        };
        let windows = tas.windows(&names);
        // A higher level whose gate never opens inside the level's windows sends only outside
        // them (its frames end before its gate closes): the supply does not count that time, so
        // its output is not subtracted.
        let relevant: Vec<usize> = match &windows {
            None => (0..k).collect(),
            Some(w) => {
                (0..k).filter(|&j| w.iter().any(|&(o, c)| tas.open_within(&others[j].1, o, c))).collect()
            }
        };
        let Some(higher) = relevant.iter().try_fold(Curve::zero(), |sum, &j| {
            above.levels.get(j).and_then(Option::as_ref).map(|out| sum.add(out))
        }) else {
            return (Err(Unbounded::new("a higher priority level has no bound")), None);
        };
        let (supply, other) = match &windows {
            None => (Some((1.0, 0.0)), largest(&|_| true)),
            Some(windows) => {
                let usable: Vec<(f64, f64)> = windows
                    .iter()
                    .map(|&(o, c)| (o + largest(&|n| tas.open_across(n, o)) / link, c - lmax[k] / link))
                    .filter(|(a, b)| b > a)
                    .collect();
                let inside = largest(&|n| windows.iter().any(|&(o, c)| tas.open_within(n, o, c)));
                (schedulers::tas::supply_bound(&usable, tas.cycle.secs()), inside)
            }
        };
        let service = match supply {
            None => Err(Unbounded::new(format!(
                "the gate windows of priority {} leave no time for its frames after the guard band \
                 and a frame of another level",
                level.map_or("-".to_string(), |l| l.to_string())
            ))),
            Some((rho, theta)) => {
                let beta = Curve::rate_latency(link * rho, theta + latency);
                curves::static_priority_residual(&beta, &higher, other)
            }
        };
        (service, None)
    }
}

/// The least burst b with `c(t) ≤ b + r·t`, r the tail slope of the concave curve `c`.
pub(super) fn upper_burst(c: &Curve) -> f64 {
    let r = c.tail_slope();
    c.points().iter().map(|pt| pt.y - r * pt.x).fold(c.burst(), f64::max)
}

/// Delay of a queue's aggregate `alpha` served by `service`: FIFO inside the queue, or blind.
pub(super) fn queue_delay(alpha: &Curve, service: &Curve, mux: Multiplexing) -> Result<f64, Unbounded> {
    match mux {
        Multiplexing::Fifo => curves::horizontal_deviation(alpha, service),
        Multiplexing::Blind => curves::arbitrary_residual(service, alpha).and_then(|r| curves::latency(&r)),
    }
}
