use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::fixed_priority::nonpreemptive::analyse_bus;
use crate::fixed_priority::rta::analyse_preemptive;
use crate::fixed_priority::{apply_order, Ticks};

/// Oracle item 3: rate monotonic fails, OPA puts τ1 lowest (R1 = 108 ≤ 110).
#[test]
fn opa_preemptive_oracle3() {
    let tasks = vec![Task::new(52, 100, 110), Task::new(52, 140, 154)];
    let mut test = PreemptiveTest::new(&tasks).unwrap();
    assert_eq!(check_order(&mut test, &deadline_monotonic(2, |i| tasks[i].deadline)), [true, false]);
    assert_eq!(audsley(&mut test), Ok(vec![1, 0]));
}

/// TV-001E-2: scanning a, b, c at each level, OPA returns b > a > c.
#[test]
fn opa_scan_order_shapes_the_result() {
    let tasks = vec![Task::new(1, 4, 3), Task::new(2, 6, 5), Task::new(3, 12, 12)];
    let mut test = PreemptiveTest::new(&tasks).unwrap();
    assert_eq!(audsley(&mut test), Ok(vec![1, 0, 2]));
    // Only c fits the lowest level; at the next level both a and b fit, and the first scanned
    // wins: scanning b first gives the deadline-monotonic order a > b > c.
    assert_eq!(audsley_scan(&mut test, &[2, 0, 1]), Ok(vec![1, 0, 2]));
    assert_eq!(audsley_scan(&mut test, &[1, 0, 2]), Ok(vec![0, 1, 2]));
    assert_eq!(check_order(&mut test, &[0, 1, 2]), [true, true, true]);
}

/// Oracle item 4: DM (B > A > C) fails on C; the only feasible order B > C > A is found.
#[test]
fn opa_nonpreemptive_oracle4() {
    let m = vec![Message::new(4, 8, 7), Message::new(2, 6, 6), Message::new(1, 15, 11)];
    let mut test = NonPreemptiveTest::new(&m, &Bus::new(0)).unwrap();
    let dm = deadline_monotonic(3, |i| m[i].deadline);
    assert_eq!(dm, [1, 0, 2]);
    assert_eq!(check_order(&mut test, &dm), [true, true, false]);
    assert_eq!(audsley(&mut test), Ok(vec![1, 2, 0]));
}

#[test]
fn opa_reports_the_items_it_cannot_place() {
    // Level 3 takes c (long deadline); then a and b, 3 + 3 in windows of 4, cannot share.
    let tasks = vec![Task::new(3, 8, 4), Task::new(3, 8, 4), Task::new(1, 100, 100)];
    let mut test = PreemptiveTest::new(&tasks).unwrap();
    let e = audsley(&mut test).unwrap_err();
    assert_eq!(e.placed_lowest_first, [2]);
    assert_eq!(e.unplaceable, [0, 1]);
}

#[test]
fn fifo_buses_are_refused_for_opa() {
    let m = vec![Message::new(1, 10, 10).on_node(3)];
    let e = NonPreemptiveTest::new(&m, &Bus::new(0).with_fifo_node(3)).unwrap_err();
    assert!(e.to_string().starts_with("messages[0].node: node 3 uses a FIFO queue"));
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    fn extend(prefix: &mut Vec<usize>, n: usize, out: &mut Vec<Vec<usize>>) {
        if prefix.len() == n {
            out.push(prefix.clone());
            return;
        }
        for i in 0..n {
            if !prefix.contains(&i) {
                prefix.push(i);
                extend(prefix, n, out);
                prefix.pop();
            }
        }
    }
    let mut out = Vec::new();
    extend(&mut Vec::new(), n, &mut out);
    out
}

/// Random (C, T, D, J), 2–6 items, total utilisation drawn from `load`.
fn random_items(rng: &mut ChaCha8Rng, load: std::ops::Range<f64>) -> Vec<(Ticks, Ticks, Ticks, Ticks)> {
    let n = rng.gen_range(2..=6);
    let u: f64 = rng.gen_range(load);
    let weights: Vec<f64> = (0..n).map(|_| rng.gen_range(0.1..1.0)).collect();
    let total: f64 = weights.iter().sum();
    weights
        .iter()
        .map(|w| {
            let t: Ticks = rng.gen_range(5..=60);
            let c = ((u * w / total * t as f64).round() as Ticks).max(1);
            let d = rng.gen_range(c..=2 * t);
            let j = if rng.gen_bool(0.5) { 0 } else { rng.gen_range(0..=t / 2) };
            (c, t, d, j)
        })
        .collect()
}

/// Outcome counts of a property run, to make sure it exercised both answers and DM failures.
#[derive(Default, Debug)]
struct Tally {
    feasible: usize,
    infeasible: usize,
    dm_failed_opa_found: usize,
}

/// OPA finds an order exactly when brute force over all permutations does, for the preemptive
/// test with jitter, blocking and arbitrary deadlines; the order it finds passes the full
/// analysis.
#[test]
fn opa_matches_brute_force_preemptive() {
    let perms: Vec<Vec<Vec<usize>>> = (0..=6).map(permutations).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(1991);
    let mut tally = Tally::default();
    for _ in 0..2000 {
        let tasks: Vec<Task> = random_items(&mut rng, 0.4..1.0)
            .into_iter()
            .map(|(c, t, d, j)| {
                let b = if rng.gen_bool(0.3) { rng.gen_range(0..=3) } else { 0 };
                Task::new(c, t, d).with_jitter(j).with_blocking(b)
            })
            .collect();
        let n = tasks.len();
        let limits = Limits::default();
        let fits = |order: &[usize]| {
            (0..n).all(|k| {
                let t = &tasks[order[k]];
                let hp: Vec<_> = order[..k].iter().map(|&h| tasks[h].stream()).collect();
                rta::response(t.stream(), t.blocking, &hp, &limits).response.meets(t.deadline)
            })
        };
        let exists = perms[n].iter().any(|p| fits(p));
        let mut test = PreemptiveTest::new(&tasks).unwrap();
        let opa = audsley(&mut test);
        assert_eq!(opa.is_ok(), exists, "{tasks:?}");
        if let Ok(order) = opa {
            let mut ordered = tasks.clone();
            apply_order(&mut ordered, &order).unwrap();
            assert!(analyse_preemptive(&ordered).unwrap().iter().all(|r| r.schedulable));
            let dm = deadline_monotonic(n, |i| tasks[i].deadline);
            tally.dm_failed_opa_found += !fits(&dm) as usize;
            tally.feasible += 1;
        } else {
            tally.infeasible += 1;
        }
    }
    assert!(tally.feasible > 300 && tally.infeasible > 300 && tally.dm_failed_opa_found > 30, "{tally:?}");
}

/// The same for the non-preemptive (CAN) test, whose blocking depends on the lower set.
#[test]
fn opa_matches_brute_force_nonpreemptive() {
    let perms: Vec<Vec<Vec<usize>>> = (0..=6).map(permutations).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(2009);
    let mut tally = Tally::default();
    for _ in 0..2000 {
        let msgs: Vec<Message> = random_items(&mut rng, 0.3..0.9)
            .into_iter()
            .map(|(c, t, d, j)| Message::new(c, t, d).with_jitter(j))
            .collect();
        let n = msgs.len();
        let limits = Limits::default();
        let fits = |order: &[usize]| {
            (0..n).all(|k| {
                let m = &msgs[order[k]];
                let hp: Vec<_> = order[..k].iter().map(|&h| msgs[h].stream()).collect();
                let b = order[k + 1..].iter().map(|&l| msgs[l].transmission).max().unwrap_or(0);
                nonpreemptive::response(m.stream(), b, &hp, 0, &limits).response.meets(m.deadline)
            })
        };
        let exists = perms[n].iter().any(|p| fits(p));
        let mut test = NonPreemptiveTest::new(&msgs, &Bus::new(0)).unwrap();
        let opa = audsley(&mut test);
        assert_eq!(opa.is_ok(), exists, "{msgs:?}");
        if let Ok(order) = opa {
            let mut ordered = msgs.clone();
            apply_order(&mut ordered, &order).unwrap();
            assert!(analyse_bus(&ordered, &Bus::new(0)).unwrap().iter().all(|r| r.schedulable));
            let dm = deadline_monotonic(n, |i| msgs[i].deadline);
            tally.dm_failed_opa_found += !fits(&dm) as usize;
            tally.feasible += 1;
        } else {
            tally.infeasible += 1;
        }
    }
    assert!(tally.feasible > 300 && tally.infeasible > 300 && tally.dm_failed_opa_found > 15, "{tally:?}");
}
