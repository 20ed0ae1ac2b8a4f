use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;

fn e2e(r: &HolisticResult) -> Vec<Option<Ticks>> {
    r.chains.iter().map(|c| c.end_to_end.bound()).collect()
}

fn steps(r: &HolisticResult, c: usize) -> Vec<Option<Ticks>> {
    r.chains[c].steps.iter().map(|s| s.response.bound()).collect()
}

/// Two chains crossing two processors and a bus (hand-computed below).
fn two_chains() -> Vec<Chain> {
    vec![
        Chain {
            period: 20,
            deadline: 20,
            jitter: 0,
            steps: vec![Step::task(0, 2, 0), Step::message(0, 1, 0), Step::task(1, 3, 1)],
        },
        Chain {
            period: 30,
            deadline: 30,
            jitter: 0,
            steps: vec![Step::task(1, 4, 0), Step::message(0, 2, 1), Step::task(0, 5, 1)],
        },
    ]
}

#[test]
fn two_chains_by_hand() {
    // Round 1 (no-interference releases): a3 J 3 → 10, b3 J 6 → 13; a2 = J 2 + blocking 2 + 1
    // = 5 and b2 = J 4 + a2 1 + 2 = 7 push a3 and b3 to J 5 and 7. Round 2: a3 = 7 + 5 = 12,
    // b3 = 7 + 7 = 14; nothing moves any more.
    let r = analyse_holistic(&two_chains(), &HolisticOptions::default()).unwrap();
    assert_eq!(steps(&r, 0), [Some(2), Some(5), Some(12)]);
    assert_eq!(steps(&r, 1), [Some(4), Some(7), Some(14)]);
    assert_eq!(r.chains[0].steps[2].jitter, Some(5));
    assert_eq!(r.chains[1].steps[1].local, Response::Bounded(7));
    assert!(r.converged && r.chains.iter().all(|c| c.schedulable));
    assert_eq!(r.rounds, 2, "one round that moves the releases, one that confirms them");
}

#[test]
fn a_lone_chain_sums_its_steps() {
    let chain = Chain {
        period: 100,
        deadline: 10,
        jitter: 1,
        steps: vec![Step::task(0, 2, 0), Step::message(0, 1, 0), Step::task(1, 3, 0)],
    };
    let r = analyse_holistic(&[chain], &HolisticOptions::default()).unwrap();
    assert_eq!(steps(&r, 0), [Some(1 + 2), Some(3 + 1), Some(4 + 3)]);
}

#[test]
fn feedback_through_jitter_diverges() {
    // a2 (higher priority) inherits a1's response as jitter and interferes with a1 again:
    // R ≥ 4 + 0.5·(R + R) has no finite solution although the processor is 90 % loaded.
    let chain =
        Chain { period: 10, deadline: 100, jitter: 0, steps: vec![Step::task(0, 4, 1), Step::task(0, 5, 0)] };
    let opts = HolisticOptions { horizon: Some(500), ..Default::default() };
    let r = analyse_holistic(std::slice::from_ref(&chain), &opts).unwrap();
    assert!(!r.converged);
    let why = r.chains[0].end_to_end.reason().unwrap();
    assert!(why.contains("diverges") && why.contains("horizon of 500"), "{why}");
    let opts = HolisticOptions { max_rounds: 20, ..Default::default() };
    let r = analyse_holistic(&[chain], &opts).unwrap();
    let why = r.chains[0].end_to_end.reason().unwrap();
    assert!(why.contains("did not converge within 20 rounds"), "{why}");
}

#[test]
fn overload_propagates_with_its_reason() {
    let mut chains = two_chains();
    chains.push(Chain {
        period: 10,
        deadline: 10,
        jitter: 0,
        steps: vec![Step::task(0, 9, 2), Step::message(0, 1, 2)],
    });
    let r = analyse_holistic(&chains, &HolisticOptions::default()).unwrap();
    // P0 carries 2/20 + 5/30 + 9/10 > 1 at priority 2: the new chain's first step and its
    // message are unbounded. The other chains keep bounds; b2 now suffers one more tick of
    // blocking from the new (lower-priority, non-preemptive) message, so b3 ends at 15.
    let why = r.chains[2].end_to_end.reason().unwrap();
    assert!(why.contains("overload: utilisation 1.1667"), "{why}");
    assert!(why.starts_with("chain 2 step 0: "), "{why}");
    assert_eq!(e2e(&r)[..2], [Some(12), Some(15)]);
}

#[test]
fn bad_chains_are_refused() {
    let mut chains = two_chains();
    chains[1].steps[2].bcet = 6;
    let e = analyse_holistic(&chains, &HolisticOptions::default()).unwrap_err();
    assert_eq!(e.to_string(), "chains[1].steps[2].bcet: 6 exceeds the wcet 5");
}

fn random_chains(rng: &mut ChaCha8Rng) -> Vec<Chain> {
    (0..rng.gen_range(1..=4))
        .map(|_| {
            let period = rng.gen_range(20..=80);
            let n = rng.gen_range(1..=4);
            let steps = (0..n)
                .map(|s| {
                    let c = rng.gen_range(1..=6);
                    let prio = rng.gen_range(0..8);
                    if s % 2 == 1 {
                        Step::message(0, c, prio)
                    } else {
                        Step::task(rng.gen_range(0..2), c, prio)
                    }
                })
                .collect();
            Chain { period, deadline: period, jitter: rng.gen_range(0..3), steps }
        })
        .collect()
}

/// Knowing best cases (bcet = wcet) only shrinks jitter, hence responses; every step ends at
/// least its own execution after its predecessor.
#[test]
fn best_cases_only_tighten() {
    let mut rng = ChaCha8Rng::seed_from_u64(1994);
    for _ in 0..300 {
        let chains = random_chains(&mut rng);
        let loose = analyse_holistic(&chains, &HolisticOptions::default()).unwrap();
        let mut exact = chains.clone();
        for s in exact.iter_mut().flat_map(|c| c.steps.iter_mut()) {
            s.bcet = s.wcet;
        }
        let tight = analyse_holistic(&exact, &HolisticOptions::default()).unwrap();
        for (c, chain) in chains.iter().enumerate() {
            let mut before = chain.jitter;
            for (s, step) in chain.steps.iter().enumerate() {
                let (a, b) = (&loose.chains[c].steps[s].response, &tight.chains[c].steps[s].response);
                if let Some(a) = a.bound() {
                    let b = b.bound().expect("tighter jitter cannot lose a bound");
                    assert!(b <= a, "{chains:?}");
                    assert!(a >= before + step.wcet);
                    before = a;
                }
            }
        }
    }
}

/// Tick-by-tick schedule of the chains: preemptive processors, a non-preemptive bus (a frame
/// queued at t takes part in the arbitration at t), each step released when its predecessor
/// completes; execution times drawn in [max(bcet, 1), wcet]. Largest event-to-completion time
/// per chain.
fn simulate(chains: &[Chain], rng: &mut ChaCha8Rng, horizon: Ticks) -> Vec<Ticks> {
    struct Job {
        chain: usize,
        step: usize,
        event: Ticks,
        released: Ticks,
        left: Ticks,
    }
    // External events: periodic with random slack and release jitter.
    let mut events: Vec<(Ticks, usize, Ticks)> = Vec::new(); // (release, chain, event time)
    for (c, chain) in chains.iter().enumerate() {
        let mut e = rng.gen_range(0..chain.period);
        while e < horizon {
            events.push((e + rng.gen_range(0..=chain.jitter), c, e));
            e += chain.period + if rng.gen_bool(0.8) { 0 } else { rng.gen_range(0..chain.period) };
        }
    }
    events.sort_unstable();
    let draw = |rng: &mut ChaCha8Rng, s: &Step| rng.gen_range(s.bcet.max(1)..=s.wcet.max(1));
    let mut ready: Vec<Job> = Vec::new();
    let mut on_bus: Option<usize> = None; // index into ready of the frame in transmission
    let mut worst = vec![0; chains.len()];
    let mut next_event = 0;
    let mut now = 0;
    while now < 4 * horizon && (next_event < events.len() || !ready.is_empty()) {
        if ready.is_empty() {
            now = now.max(events[next_event].0);
        }
        while next_event < events.len() && events[next_event].0 <= now {
            let (r, c, e) = events[next_event];
            let left = draw(rng, &chains[c].steps[0]);
            ready.push(Job { chain: c, step: 0, event: e, released: r, left });
            next_event += 1;
        }
        // One tick on every resource: the running job of each processor, the frame on the bus.
        let prio = |j: &Job| (chains[j.chain].steps[j.step].priority, j.released, j.event, j.chain);
        let mut running: Vec<usize> = Vec::new();
        for p in 0..2 {
            let on_p = (0..ready.len()).filter(|&k| {
                chains[ready[k].chain].steps[ready[k].step].resource == Resource::Processor(p)
                    && ready[k].released <= now
            });
            if let Some(k) = on_p.min_by_key(|&k| prio(&ready[k])) {
                running.push(k);
            }
        }
        if on_bus.is_none() {
            let frames = (0..ready.len()).filter(|&k| {
                matches!(chains[ready[k].chain].steps[ready[k].step].resource, Resource::Bus(_))
                    && ready[k].released <= now
            });
            on_bus = frames.min_by_key(|&k| prio(&ready[k]));
        }
        running.extend(on_bus);
        for &k in &running {
            ready[k].left -= 1;
        }
        now += 1;
        // Completions at the end of the tick release the next steps at `now`.
        let mut done: Vec<usize> = running.into_iter().filter(|&k| ready[k].left == 0).collect();
        done.sort_unstable_by(|a, b| b.cmp(a));
        for k in done {
            if on_bus == Some(k) {
                on_bus = None;
            }
            let job = ready.swap_remove(k);
            if on_bus == Some(ready.len()) {
                on_bus = Some(k);
            }
            let chain = &chains[job.chain];
            if job.step + 1 < chain.steps.len() {
                let left = draw(rng, &chain.steps[job.step + 1]);
                ready.push(Job { step: job.step + 1, released: now, left, ..job });
            } else {
                worst[job.chain] = worst[job.chain].max(now - job.event);
            }
        }
    }
    worst
}

/// Simulated end-to-end times never exceed the holistic bounds (random chains over two
/// processors and a bus, random execution times between best and worst case). A sanity check:
/// it catches gross errors (halving a step's own jitter fails at once), but the slack of the
/// holistic bound hides finer ones, which the hand-computed cases pin down.
#[test]
fn simulated_chains_stay_within_the_bounds() {
    let mut rng = ChaCha8Rng::seed_from_u64(1940);
    let mut checked = 0;
    for _ in 0..120 {
        let mut chains = random_chains(&mut rng);
        for c in &mut chains {
            // Shorter periods than `random_chains` for loads where jitter matters.
            c.period = rng.gen_range(12..=40);
            c.deadline = 4 * c.period;
            for s in &mut c.steps {
                s.bcet = if rng.gen_bool(0.5) { 0 } else { rng.gen_range(0..=s.wcet) };
            }
        }
        let r = analyse_holistic(&chains, &HolisticOptions::default()).unwrap();
        if r.chains.iter().any(|c| c.end_to_end.bound().is_none()) {
            continue;
        }
        checked += 1;
        for _ in 0..8 {
            let seen = simulate(&chains, &mut rng, 200);
            for (c, s) in seen.iter().enumerate() {
                let bound = r.chains[c].end_to_end.bound().unwrap();
                assert!(*s <= bound, "chain {c}: simulated {s} > bound {bound}\n{chains:?}");
            }
        }
    }
    assert!(checked > 60, "only {checked} bounded systems");
}
