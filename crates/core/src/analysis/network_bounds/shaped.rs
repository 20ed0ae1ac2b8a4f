//! The levels of a shaped port, highest first: the walk that bounds what each level sends, with
//! the service each level gets from its shaper's model ([`schedulers::cbs::level_service`],
//! [`schedulers::tas::level_service`]), and the port as those models read it.

use super::*;
use crate::curves::upper_burst;
use crate::schedulers::{Above, Level, ShapedPort, ShaperLevels};

/// Port `p`'s levels as its shaper's service model reads them: each queue's priority, classes,
/// long-term rate and largest frame, highest first.
pub(super) fn shaped_port<'a>(
    net: &'a Network,
    lay: &Layout,
    p: PortId,
    latency: f64,
    rate_text: &'a dyn Fn(f64) -> String,
) -> ShapedPort<'a> {
    let cx = &lay.crossings;
    let levels = lay.port_queues[p]
        .iter()
        .map(|&q| {
            let flows = || lay.queues[q].crossings.iter().map(|&c| &net.flows[cx[c].flow]);
            let priority = lay.queues[q].priority;
            Level {
                priority,
                classes: net
                    .classes
                    .iter()
                    .filter(|c| Some(c.priority) == priority)
                    .map(|c| c.name.as_str())
                    .collect(),
                class: flows().find_map(|f| f.class).map_or("", |c| net.classes[c].name.as_str()),
                rate: flows().map(|f| f.rate).sum(),
                max_frame: flows().map(|f| f.max_frame_wire).fold(0.0, f64::max),
            }
        })
        .collect();
    ShapedPort { link: net.ports[p].rate, latency, levels, rate_text }
}

/// The service of each queue (priority level) of a shaped port, highest first: one walk over
/// the levels, `level(k, above)` the shaper's curve for level k given what the levels above
/// send. A level without a bound leaves the levels below
/// without one, unless `gated`: a gated level is then still asked, and answers without a bound
/// only if it depends on such a level ([`Above::unbounded`], [`Above::levels`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn shaped_levels(
    lay: &Layout,
    p: PortId,
    opt: &Options,
    alphas: &[Curve],
    blocked: &[Option<Unbounded>],
    gated: bool,
    mut level: ShaperLevels<'_>,
) -> Vec<Result<Curve, Unbounded>> {
    let queues = &lay.port_queues[p];
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
                let (service, own_output) = level(k, &above);
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

/// Delay of a queue's aggregate `alpha` served by `service`: FIFO inside the queue, or blind.
pub(super) fn queue_delay(alpha: &Curve, service: &Curve, mux: Multiplexing) -> Result<f64, Unbounded> {
    match mux {
        Multiplexing::Fifo => curves::horizontal_deviation(alpha, service),
        Multiplexing::Blind => curves::arbitrary_residual(service, alpha).and_then(|r| curves::latency(&r)),
    }
}
