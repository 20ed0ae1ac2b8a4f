use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::fixed_priority::apply_order;

fn bounds(r: &[MessageResponse]) -> Vec<Option<Ticks>> {
    r.iter().map(|m| m.response().bound()).collect()
}

/// Oracle item 4 (OPA, non-preemptive, zero bit time): A (4, 8, 7), B (2, 6, 6), C (1, 15, 11).
fn oracle4() -> Vec<Message> {
    vec![Message::new(4, 8, 7), Message::new(2, 6, 6), Message::new(1, 15, 11)]
}

#[test]
fn oracle4_deadline_monotonic_misses_c() {
    let mut m = oracle4();
    apply_order(&mut m, &[1, 0, 2]).unwrap(); // B > A > C
    let r = analyse_bus(&m, &Bus::new(0)).unwrap();
    // C's queuing delay reaches 14 only because B queued at 12 and A at 8 still win (⌊w/T⌋ + 1).
    assert_eq!(bounds(&r), [Some(7), Some(6), Some(15)]);
    assert_eq!(r.iter().map(|m| m.schedulable).collect::<Vec<_>>(), [true, true, false]);
    assert_eq!(r[0].blocking, 1);
    assert_eq!(r[1].blocking, 4);
}

#[test]
fn oracle4_feasible_order() {
    let mut m = oracle4();
    apply_order(&mut m, &[1, 2, 0]).unwrap(); // B > C > A
    let r = analyse_bus(&m, &Bus::new(0)).unwrap();
    assert_eq!(bounds(&r), [Some(7), Some(6), Some(9)]);
    assert!(r.iter().all(|m| m.schedulable));
    // A's busy period holds two of its instances; the first is the worst.
    assert_eq!((r[0].detail.instances, r[0].detail.worst_instance), (2, 0));
}

#[test]
fn one_tick_bit_time_equals_the_infinitesimal_one() {
    let mut m = oracle4();
    for order in [[1, 0, 2], [1, 2, 0], [0, 1, 2]] {
        apply_order(&mut m, &order).unwrap();
        assert_eq!(analyse_bus(&m, &Bus::new(0)).unwrap(), analyse_bus(&m, &Bus::new(1)).unwrap());
    }
}

/// The shape of the counter-example of Davis et al. (2007) to the original CAN analysis: three
/// 1 ms frames, periods 2.5, 3.5, 3.5 ms, here in units of 0.5 ms. The lowest message is worst
/// in the second instance of its busy period: 7 (3.5 ms), where the first alone gives 6 (3 ms).
#[test]
fn push_through_blocking_needs_the_second_instance() {
    let m = vec![
        Message::new(2, 5, 5).with_priority(1),
        Message::new(2, 7, 7).with_priority(2),
        Message::new(2, 7, 7).with_priority(3),
    ];
    let r = analyse_bus(&m, &Bus::new(0)).unwrap();
    assert_eq!(r[2].response().bound(), Some(7));
    assert_eq!(r[2].detail.first_instance, Some(6));
    assert_eq!(r[2].detail.worst_instance, 1);
}

#[test]
fn overloaded_bus_names_the_utilisation() {
    let m = vec![Message::new(3, 4, 4).with_priority(0), Message::new(2, 5, 5).with_priority(1)];
    let r = analyse_bus(&m, &Bus::new(0)).unwrap();
    assert_eq!(r[0].response().bound(), Some(3 + 2));
    assert!(r[1].response().reason().unwrap().contains("utilisation 1.1500"));
}

/// Node 0 queues x (priority 1) and y (priority 2) in FIFO order; node 1 has z (0, above the
/// FIFO band) and u (3, below it).
#[test]
fn fifo_queue_hand_example() {
    let m = vec![
        Message::new(2, 20, 20).with_priority(1).on_node(0), // x
        Message::new(3, 20, 20).with_priority(2).on_node(0), // y
        Message::new(1, 10, 10).with_priority(0).on_node(1), // z
        Message::new(4, 40, 40).with_priority(3).on_node(1), // u
    ];
    let prio = analyse_bus(&m, &Bus::new(0)).unwrap();
    // Priority queues: x = B 4 + z 1 + 2 = 7; y = 4 + x 2 + z 1 + 3 = 10.
    assert_eq!(bounds(&prio)[..2], [Some(7), Some(10)]);
    let fifo = analyse_bus(&m, &Bus::new(0).with_fifo_node(0)).unwrap();
    // FIFO: x may wait behind y: 4 (u) + 3 (y) + 1 (z) + 2 = 10; y behind x likewise 10.
    assert_eq!(bounds(&fifo), [Some(10), Some(10), Some(4 + 1), Some(2 + 3 + 1 + 4)]);
    assert_eq!(fifo[0].queue, QueuePolicy::Fifo);
    assert_eq!(fifo[0].blocking, 4);
}

#[test]
fn fifo_queue_with_one_message_is_a_priority_queue() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..300 {
        let m = random_bus(&mut rng, 1);
        let nodes: Vec<usize> = m.iter().map(|m| m.node).collect();
        for node in 0..3 {
            if nodes.iter().filter(|&&n| n == node).count() == 1 {
                let a = analyse_bus(&m, &Bus::new(0)).unwrap();
                let b = analyse_bus(&m, &Bus::new(0).with_fifo_node(node)).unwrap();
                for (x, y) in a.iter().zip(&b) {
                    assert_eq!(x.response(), y.response(), "{m:?}");
                }
            }
        }
    }
}

#[test]
fn interleaved_fifo_priorities_are_refused() {
    let m = vec![
        Message::new(1, 10, 10).with_priority(1).on_node(0),
        Message::new(1, 10, 10).with_priority(2).on_node(1),
        Message::new(1, 10, 10).with_priority(3).on_node(0),
    ];
    let e = analyse_bus(&m, &Bus::new(0).with_fifo_node(0)).unwrap_err();
    assert!(e
        .to_string()
        .starts_with("messages[1].priority: 2 lies within the priorities 1..=3 of node 0's FIFO"));
    assert!(analyse_bus(&m, &Bus::new(0)).is_ok());
}

/// A random bus of 2–6 messages on 3 nodes; with `fifo_bands`, the messages of each node get
/// contiguous priorities (so any node may be declared FIFO).
fn random_bus(rng: &mut ChaCha8Rng, max_jitter_periods: i64) -> Vec<Message> {
    let n = rng.gen_range(2..=6);
    let mut m: Vec<Message> = (0..n)
        .map(|_| {
            let c = rng.gen_range(1..=4);
            let t = rng.gen_range(2 * c..=40);
            let d = rng.gen_range(c..=2 * t);
            let j = if rng.gen_bool(0.5) { 0 } else { rng.gen_range(0..=max_jitter_periods * t) };
            Message::new(c, t, d).with_jitter(j).on_node(rng.gen_range(0..3))
        })
        .collect();
    // Contiguous bands: shuffle the nodes, then shuffle within each node.
    let mut nodes = [0, 1, 2];
    nodes.shuffle(rng);
    let mut order = Vec::new();
    for node in nodes {
        let mut mine: Vec<usize> = (0..n).filter(|&i| m[i].node == node).collect();
        mine.shuffle(rng);
        order.extend(mine);
    }
    apply_order(&mut m, &order).unwrap();
    m
}

/// Largest observed response per message when the frames arrive at `arrivals` (arrival,
/// queued) and the bus arbitrates among node queue heads at every instant it is free
/// (frames queued at that very instant take part).
fn simulate(m: &[Message], fifo_nodes: &[usize], arrivals: &[Vec<(Ticks, Ticks)>]) -> Vec<Ticks> {
    // (queued, seq, message, arrival), in queuing order.
    let mut frames: Vec<(Ticks, usize, usize, Ticks)> = Vec::new();
    for (msg, list) in arrivals.iter().enumerate() {
        for &(arrival, queued) in list {
            frames.push((queued, frames.len(), msg, arrival));
        }
    }
    frames.sort_unstable();
    let mut worst = vec![0; m.len()];
    let mut pending: Vec<(Ticks, usize, usize, Ticks)> = Vec::new();
    let mut next = 0;
    let mut now = Ticks::MIN;
    while next < frames.len() || !pending.is_empty() {
        if pending.is_empty() {
            now = now.max(frames[next].0);
        }
        while next < frames.len() && frames[next].0 <= now {
            pending.push(frames[next]);
            next += 1;
        }
        // Each node's head (FIFO: first queued; else highest priority), then arbitration.
        let head_of = |node: usize| {
            let mine = (0..pending.len()).filter(|&f| m[pending[f].2].node == node);
            if fifo_nodes.contains(&node) {
                mine.min_by_key(|&f| (pending[f].0, pending[f].1))
            } else {
                mine.min_by_key(|&f| (m[pending[f].2].priority, pending[f].0, pending[f].1))
            }
        };
        let winner =
            (0..3).filter_map(head_of).min_by_key(|&f| (m[pending[f].2].priority, m[pending[f].2].node));
        let (_, _, msg, arrival) = pending.swap_remove(winner.unwrap());
        now += m[msg].transmission;
        worst[msg] = worst[msg].max(now - arrival);
    }
    worst
}

fn random_arrivals(rng: &mut ChaCha8Rng, m: &[Message], horizon: Ticks) -> Vec<Vec<(Ticks, Ticks)>> {
    // Half the patterns start near a critical instant: every message queued within a few ticks
    // of 0 with its first instance at maximum jitter, strictly periodic after.
    let critical = rng.gen_bool(0.5);
    m.iter()
        .map(|msg| {
            let mut out = Vec::new();
            let mut a = if critical {
                rng.gen_range(0..3) - msg.jitter
            } else if rng.gen_bool(0.5) {
                0
            } else {
                rng.gen_range(0..msg.period)
            };
            let mut last_queued = Ticks::MIN;
            while a < horizon {
                let first = out.is_empty();
                let j = match rng.gen_range(0..3) {
                    _ if critical => {
                        if first {
                            msg.jitter
                        } else {
                            0
                        }
                    }
                    0 => 0,
                    1 => msg.jitter,
                    _ => rng.gen_range(0..=msg.jitter),
                };
                // Instances of one message are queued in arrival order (the sender is sequential).
                last_queued = (a + j).max(last_queued);
                out.push((a, last_queued));
                let slack = if critical || rng.gen_bool(0.8) { 0 } else { rng.gen_range(0..msg.period) };
                a += msg.period + slack;
            }
            out
        })
        .collect()
}

/// Simulated responses never exceed the bounds, with priority and FIFO queues, jitter up to
/// two periods and deadlines up to two periods.
#[test]
fn simulated_responses_stay_within_the_bounds() {
    let mut rng = ChaCha8Rng::seed_from_u64(2007);
    let mut checked = 0;
    let mut tight = 0;
    for _ in 0..400 {
        let m = random_bus(&mut rng, 2);
        let fifo_nodes: Vec<usize> = (0..3).filter(|_| rng.gen_bool(0.5)).collect();
        let bus = Bus { tau_bit: 0, fifo_nodes: fifo_nodes.clone() };
        let r = analyse_bus(&m, &bus).unwrap();
        if r.iter().any(|x| x.response().bound().is_none()) {
            continue;
        }
        let mut seen = vec![0; m.len()];
        for _ in 0..20 {
            let arrivals = random_arrivals(&mut rng, &m, 200);
            for (s, w) in seen.iter_mut().zip(simulate(&m, &fifo_nodes, &arrivals)) {
                *s = (*s).max(w);
            }
        }
        for (i, (x, s)) in r.iter().zip(&seen).enumerate() {
            let bound = x.response().bound().unwrap();
            assert!(
                *s <= bound,
                "message {i}: simulated {s} > bound {bound}\n{m:?}\nFIFO nodes {fifo_nodes:?}"
            );
            tight += (*s == bound) as usize;
        }
        checked += 1;
    }
    assert!(checked > 200, "only {checked} bounded buses");
    assert!(tight > 0, "no bound was ever reached by the simulation");
}
