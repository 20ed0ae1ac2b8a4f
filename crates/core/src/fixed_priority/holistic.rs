//! Holistic analysis of chains of tasks and messages (Tindell & Clark, "Holistic schedulability
//! analysis for distributed hard real-time systems", Microprocessing and Microprogramming
//! 40, 1994).
//!
//! A chain is triggered by an external event of period T (release jitter J_ext) and runs its
//! steps in sequence: tasks on preemptive fixed-priority processors, messages on
//! non-preemptive fixed-priority buses ([`super::nonpreemptive`], priority queues). Step s is
//! released between its earliest release E_s = Σ_{k<s} BCET_k and its latest release L_s, the
//! worst-case completion of step s − 1 (L_0 = J_ext), both from the event. It is analysed as a
//! sporadic item of period T and release jitter J_s = L_s − E_s; its response from the event is
//! R_s = E_s + r_s, with r_s its local response including J_s. Every resource is re-analysed
//! with the new jitters until no latest release changes: the least fixed point, reached from
//! below since responses grow with jitter. A step whose response passes the horizon makes the
//! iteration diverge and is reported unbounded, with every step that depends on it.

use super::busy::Stream;
use super::{check_range, nonpreemptive, rta, InputError, Limits, Priority, Response, Ticks, MAX_TICKS};

/// Where a step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Resource {
    /// A preemptive fixed-priority processor.
    Processor(usize),
    /// A non-preemptive fixed-priority bus (priority queues, shared bit time).
    Bus(usize),
}

/// One task or message of a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Processor or bus.
    pub resource: Resource,
    /// Worst-case execution or transmission time.
    pub wcet: Ticks,
    /// Best-case execution or transmission time (≤ `wcet`): a lower bound, 0 is always safe.
    pub bcet: Ticks,
    /// Priority number on its resource; lower is higher priority.
    pub priority: Priority,
}

impl Step {
    /// A task on `processor` (best case 0).
    pub fn task(processor: usize, wcet: Ticks, priority: Priority) -> Self {
        Step { resource: Resource::Processor(processor), wcet, bcet: 0, priority }
    }

    /// A message on `bus` (best case 0).
    pub fn message(bus: usize, transmission: Ticks, priority: Priority) -> Self {
        Step { resource: Resource::Bus(bus), wcet: transmission, bcet: 0, priority }
    }

    /// The same step with best case `bcet`.
    pub fn with_bcet(mut self, bcet: Ticks) -> Self {
        self.bcet = bcet;
        self
    }
}

/// A chain of steps triggered by a sporadic external event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// Minimum inter-arrival time of the external event.
    pub period: Ticks,
    /// End-to-end deadline, from the event to the completion of the last step.
    pub deadline: Ticks,
    /// Release jitter of the first step after the event.
    pub jitter: Ticks,
    /// The steps, in execution order.
    pub steps: Vec<Step>,
}

/// Options of [`analyse_holistic`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HolisticOptions {
    /// Bit time of the buses (0 is infinitesimal).
    pub tau_bit: Ticks,
    /// Global iterations allowed before the steps still growing are declared unbounded.
    pub max_rounds: usize,
    /// A response from the event beyond this is divergence; default 1000 × the largest period
    /// or deadline of the chains.
    pub horizon: Option<Ticks>,
    /// Limits of each local analysis.
    pub limits: Limits,
}

impl Default for HolisticOptions {
    fn default() -> Self {
        HolisticOptions { tau_bit: 0, max_rounds: 1000, horizon: None, limits: Limits::default() }
    }
}

/// Result for one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepResult {
    /// Earliest release E_s, from the event.
    pub earliest_release: Ticks,
    /// Release jitter J_s = L_s − E_s used in the last round, if bounded.
    pub jitter: Option<Ticks>,
    /// Local response r_s, from E_s (own jitter included).
    pub local: Response,
    /// Worst-case completion from the external event, R_s = E_s + r_s.
    pub response: Response,
}

/// Result for one chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainResult {
    /// Per step, in chain order.
    pub steps: Vec<StepResult>,
    /// Response of the last step from the external event.
    pub end_to_end: Response,
    /// Bounded and within the end-to-end deadline.
    pub schedulable: bool,
}

/// Result of [`analyse_holistic`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HolisticResult {
    /// Per chain, in input order.
    pub chains: Vec<ChainResult>,
    /// Global iterations performed.
    pub rounds: usize,
    /// The fixed point was reached for every step (no step declared divergent).
    pub converged: bool,
}

/// Flat index of a step: (chain, position).
#[derive(Clone, Copy)]
struct Id {
    chain: usize,
    pos: usize,
}

fn validate(chains: &[Chain], opts: &HolisticOptions) -> Result<(), InputError> {
    check_range("options.tau_bit", opts.tau_bit, 0)?;
    if let Some(h) = opts.horizon {
        check_range("options.horizon", h, 1)?;
    }
    for (c, chain) in chains.iter().enumerate() {
        check_range(&format!("chains[{c}].period"), chain.period, 1)?;
        check_range(&format!("chains[{c}].deadline"), chain.deadline, 0)?;
        check_range(&format!("chains[{c}].jitter"), chain.jitter, 0)?;
        if chain.steps.is_empty() {
            return Err(InputError(format!("chains[{c}].steps: a chain needs at least one step")));
        }
        for (s, step) in chain.steps.iter().enumerate() {
            check_range(&format!("chains[{c}].steps[{s}].wcet"), step.wcet, 0)?;
            check_range(&format!("chains[{c}].steps[{s}].bcet"), step.bcet, 0)?;
            if step.bcet > step.wcet {
                return Err(InputError(format!(
                    "chains[{c}].steps[{s}].bcet: {} exceeds the wcet {}",
                    step.bcet, step.wcet
                )));
            }
        }
    }
    Ok(())
}

/// Holistic response times of chains over processors and buses.
pub fn analyse_holistic(chains: &[Chain], opts: &HolisticOptions) -> Result<HolisticResult, InputError> {
    validate(chains, opts)?;
    let horizon = opts.horizon.unwrap_or_else(|| {
        let longest = chains.iter().map(|c| c.period.max(c.deadline)).max().unwrap_or(1);
        longest.saturating_mul(1000).min(MAX_TICKS)
    });
    let ids: Vec<Id> = chains
        .iter()
        .enumerate()
        .flat_map(|(chain, c)| (0..c.steps.len()).map(move |pos| Id { chain, pos }))
        .collect();
    let step = |id: Id| &chains[id.chain].steps[id.pos];
    // Steps sharing each step's resource (itself excluded), split by priority.
    let mut hp_of: Vec<Vec<usize>> = vec![Vec::new(); ids.len()];
    let mut blocking: Vec<Ticks> = vec![0; ids.len()];
    for (a, &ia) in ids.iter().enumerate() {
        for (b, &ib) in ids.iter().enumerate() {
            if a == b || step(ia).resource != step(ib).resource {
                continue;
            }
            if step(ib).priority <= step(ia).priority {
                hp_of[a].push(b);
            } else if matches!(step(ia).resource, Resource::Bus(_)) {
                blocking[a] = blocking[a].max(step(ib).wcet);
            }
        }
    }
    // Flat index of the first step of each chain.
    let mut first = Vec::with_capacity(chains.len());
    let mut earliest = Vec::with_capacity(ids.len());
    for c in chains {
        first.push(earliest.len());
        let mut e: Ticks = 0;
        for s in &c.steps {
            earliest.push(e);
            e = e.saturating_add(s.bcet);
        }
    }
    // Latest release L_s from the event: Ok(bounded) or Err(why unbounded). Start from the
    // no-interference values, below the least fixed point.
    let mut latest: Vec<Result<Ticks, String>> = Vec::with_capacity(ids.len());
    for c in chains {
        let mut l = c.jitter;
        for s in &c.steps {
            latest.push(Ok(l));
            l = l.saturating_add(s.wcet);
        }
    }
    fn jitter_of<'a>(
        latest: &'a [Result<Ticks, String>],
        earliest: &[Ticks],
        k: usize,
    ) -> Result<Ticks, &'a str> {
        latest[k].as_ref().map(|l| l - earliest[k]).map_err(String::as_str)
    }

    let analyse = |latest: &[Result<Ticks, String>], k: usize| -> Response {
        let id = ids[k];
        let own_j = match jitter_of(latest, &earliest, k) {
            Ok(j) => j,
            Err(why) => return Response::Unbounded(why.to_string()),
        };
        let mut hp = Vec::with_capacity(hp_of[k].len());
        for &o in &hp_of[k] {
            match jitter_of(latest, &earliest, o) {
                Ok(j) => hp.push(Stream { c: step(ids[o]).wcet, t: chains[ids[o].chain].period, j }),
                Err(_) => {
                    return Response::Unbounded(format!(
                        "interference from chain {} step {} is unbounded",
                        ids[o].chain, ids[o].pos
                    ))
                }
            }
        }
        let own = Stream { c: step(id).wcet, t: chains[id.chain].period, j: own_j };
        match step(id).resource {
            Resource::Processor(_) => rta::response(own, 0, &hp, &opts.limits).response,
            Resource::Bus(_) => {
                nonpreemptive::response(own, blocking[k], &hp, opts.tau_bit, &opts.limits).response
            }
        }
    };

    let mut rounds = 0;
    let mut converged = true;
    let mut local: Vec<Response> = vec![Response::Bounded(0); ids.len()];
    loop {
        rounds += 1;
        // Jacobi round: every step sees the jitters of the previous round.
        for (k, r) in local.iter_mut().enumerate() {
            *r = analyse(&latest, k);
        }
        let give_up = rounds > opts.max_rounds;
        let mut changed = false;
        for k in 0..ids.len() {
            let id = ids[k];
            if id.pos + 1 == chains[id.chain].steps.len() {
                continue;
            }
            let next = k + 1;
            let new = match &local[k] {
                Response::Bounded(r) => {
                    let done = earliest[k].saturating_add(*r);
                    if done > horizon {
                        converged = false;
                        Err(format!(
                            "holistic iteration diverges: chain {} step {} completes beyond the horizon of {horizon} ticks",
                            id.chain, id.pos
                        ))
                    } else {
                        Ok(done)
                    }
                }
                Response::Unbounded(why) => Err(format!("chain {} step {}: {why}", id.chain, id.pos)),
            };
            if latest[next].is_ok() && new != latest[next] {
                changed = true;
                latest[next] = match new {
                    Ok(_) if give_up => {
                        converged = false;
                        Err(format!(
                            "holistic iteration did not converge within {} rounds (chain {} step {} still growing)",
                            opts.max_rounds, id.chain, id.pos
                        ))
                    }
                    other => other,
                };
            }
        }
        if !changed {
            break;
        }
    }

    let results = chains
        .iter()
        .enumerate()
        .map(|(c, chain)| {
            let steps: Vec<StepResult> = (0..chain.steps.len())
                .map(|pos| {
                    let k = first[c] + pos;
                    let response = match &local[k] {
                        Response::Bounded(r) if earliest[k].saturating_add(*r) > horizon => {
                            converged = false;
                            Response::Unbounded(format!(
                                "holistic iteration diverges: completes beyond the horizon of {horizon} ticks"
                            ))
                        }
                        Response::Bounded(r) => Response::Bounded(earliest[k] + r),
                        Response::Unbounded(why) => Response::Unbounded(why.clone()),
                    };
                    StepResult {
                        earliest_release: earliest[k],
                        jitter: jitter_of(&latest, &earliest, k).ok(),
                        local: local[k].clone(),
                        response,
                    }
                })
                .collect();
            let end_to_end = steps.last().expect("validated non-empty").response.clone();
            let schedulable = end_to_end.meets(chain.deadline);
            ChainResult { steps, end_to_end, schedulable }
        })
        .collect();
    Ok(HolisticResult { chains: results, rounds, converged })
}

#[cfg(test)]
mod tests;
