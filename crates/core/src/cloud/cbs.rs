//! A CBS/EDF reservation simulator: the constant bandwidth server of Abeni and Buttazzo (RTSS
//! 1998), the isolation seed 001F relies on for VMs and Linux SCHED_DEADLINE implements.
//!
//! One processor; each server (Q, T) has a budget c and a deadline d, and servers with pending
//! work run by earliest deadline (ties to the server listed first). The rules:
//!
//! * a job arriving at an idle server at t: if c ≥ (d − t)·Q/T the server takes a new deadline
//!   d = t + T and a full budget c = Q, else it keeps (c, d);
//! * while a server runs its budget decreases with the time it runs;
//! * when c reaches 0 the budget is recharged, c = Q, and the deadline postponed, d = d + T
//!   (the server stays eligible, at a later deadline).
//!
//! Under Σ Q/T ≤ 1, EDF meets every server deadline, so a server with work pending over
//! [d − T, d] gets Q there whatever the others demand. Times are integer nanoseconds.

use serde::{Deserialize, Serialize};

/// What a server's application does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    /// Always has work (a spinning component).
    Greedy,
    /// A job of `work` every `period` from `offset`.
    Periodic { work: i64, period: i64, offset: i64 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Server {
    pub budget: i64,
    pub period: i64,
    pub workload: Workload,
}

/// What a server got over a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ServerReport {
    /// Processor time received.
    pub received: i64,
    /// Processor time received in each window [kT, (k+1)T) of the server's own period.
    pub per_period: Vec<i64>,
    /// Deadline postponements (budget exhausted with work pending).
    pub postponements: u64,
    /// Jobs completed, and the largest response time of a job (periodic workloads).
    pub jobs: u64,
    pub max_response: i64,
}

struct State {
    c: i64,
    d: i64,
    /// Work pending, and the release times of the jobs queued (FIFO inside the server).
    pending: i64,
    queue: std::collections::VecDeque<(i64, i64)>,
    next_release: i64,
}

/// Simulates `servers` on one processor over [0, horizon).
pub fn simulate(servers: &[Server], horizon: i64) -> Result<Vec<ServerReport>, String> {
    let total: f64 = servers.iter().map(|s| s.budget as f64 / s.period as f64).sum();
    for (i, s) in servers.iter().enumerate() {
        if s.budget <= 0 || s.budget > s.period {
            return Err(format!("servers[{i}]: need 0 < budget <= period"));
        }
        if let Workload::Periodic { work, period, offset } = s.workload {
            if work <= 0 || period <= 0 || offset < 0 {
                return Err(format!("servers[{i}].workload: need work > 0, period > 0, offset >= 0"));
            }
        }
    }
    if total > 1.0 + 1e-12 {
        return Err(format!("servers: total bandwidth {total:.4} above 1"));
    }
    let mut st: Vec<State> = servers
        .iter()
        .map(|s| State {
            c: 0,
            d: 0,
            pending: 0,
            queue: Default::default(),
            next_release: match s.workload {
                Workload::Greedy => 0,
                Workload::Periodic { offset, .. } => offset,
            },
        })
        .collect();
    let mut rep: Vec<ServerReport> = servers
        .iter()
        .map(|s| ServerReport {
            per_period: vec![0; ((horizon + s.period - 1) / s.period) as usize],
            ..Default::default()
        })
        .collect();
    let mut t = 0;
    while t < horizon {
        // Releases at t (the CBS arrival rule when the server was idle).
        for (i, s) in servers.iter().enumerate() {
            let x = &mut st[i];
            while x.next_release <= t {
                let idle = x.pending == 0;
                let (work, next) = match s.workload {
                    Workload::Greedy => (i64::MAX / 4, i64::MAX),
                    Workload::Periodic { work, period, .. } => (work, x.next_release + period),
                };
                if idle {
                    // c ≥ (d − t)·Q/T, in integers: c·T ≥ (d − t)·Q.
                    if (x.c as i128) * (s.period as i128) >= ((x.d - t).max(0) as i128) * (s.budget as i128) {
                        x.d = t + s.period;
                        x.c = s.budget;
                    }
                }
                x.pending += work;
                x.queue.push_back((x.next_release, work));
                x.next_release = next;
            }
        }
        let next_release = st.iter().map(|x| x.next_release).min().unwrap_or(i64::MAX).min(horizon);
        let running = (0..servers.len()).filter(|&i| st[i].pending > 0).min_by_key(|&i| (st[i].d, i));
        let Some(i) = running else {
            t = next_release;
            continue;
        };
        let x = &mut st[i];
        let head = x.queue.front().map(|q| q.1).unwrap_or(x.pending);
        let run = x.c.min(head).min(next_release - t).max(0);
        // Account the run in the server's period windows.
        let p = servers[i].period;
        let mut a = t;
        while a < t + run {
            let w = (a / p) as usize;
            let b = ((w as i64 + 1) * p).min(t + run);
            if w < rep[i].per_period.len() {
                rep[i].per_period[w] += b - a;
            }
            a = b;
        }
        rep[i].received += run;
        x.c -= run;
        x.pending -= run;
        t += run;
        if let Some(front) = x.queue.front_mut() {
            front.1 -= run;
            if front.1 == 0 {
                let (release, _) = x.queue.pop_front().expect("the queue has the front just read");
                rep[i].jobs += 1;
                rep[i].max_response = rep[i].max_response.max(t - release);
            }
        }
        if x.c == 0 && x.pending > 0 {
            x.c = servers[i].budget;
            x.d += servers[i].period;
            rep[i].postponements += 1;
        }
    }
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn spinner_gets_its_budget_every_period_under_contention() {
        // A spinning component (3 ms every 10 ms) against another spinner (5 ms / 20 ms) and a
        // periodic job stream that overruns its reservation (4 ms of work every 10 ms on a
        // 2 ms / 10 ms server): Σ Q/T = 0.3 + 0.25 + 0.2 = 0.75 ≤ 1. A greedy server with its
        // deadlines at 10, 20, ... ms meets each of them under EDF (each budget is spent by its
        // deadline; a greedy server may run ahead into later budgets), so by 10(k+1) ms it has
        // had at least 3(k+1) ms; the overrunning server is postponed.
        let servers = vec![
            Server { budget: 3 * MS, period: 10 * MS, workload: Workload::Greedy },
            Server { budget: 5 * MS, period: 20 * MS, workload: Workload::Greedy },
            Server {
                budget: 2 * MS,
                period: 10 * MS,
                workload: Workload::Periodic { work: 4 * MS, period: 10 * MS, offset: 0 },
            },
        ];
        let r = simulate(&servers, 1000 * MS).unwrap();
        for (k, (q, rep)) in [(3 * MS, &r[0]), (5 * MS, &r[1])].into_iter().enumerate() {
            let mut sum = 0;
            for (w, x) in rep.per_period.iter().enumerate() {
                sum += x;
                assert!(sum >= (w as i64 + 1) * q, "server {k}, window {w}: {sum}");
            }
        }
        assert!(r[2].postponements > 0);
        // The processor is never idle (two spinners): everything adds up to the horizon.
        assert_eq!(r.iter().map(|x| x.received).sum::<i64>(), 1000 * MS);
    }

    #[test]
    fn arrival_rule_keeps_deadline_when_budget_is_short() {
        // Q = 2, T = 10 ms, jobs of 1 ms at 0 and at 1 ms... by hand: at 0 the server is idle with
        // c = 0 ≥ (0 − 0)·0.2 → new deadline 10, c = 2; it runs 1 ms (c = 1) and idles. At 6 ms
        // (second job, offset 0, period 6 ms): c = 1 vs (10 − 6)·0.2 = 0.8: 1 ≥ 0.8 → new
        // deadline 16 ms, c = 2. Alone, each job completes in 1 ms.
        let servers = vec![Server {
            budget: 2 * MS,
            period: 10 * MS,
            workload: Workload::Periodic { work: MS, period: 6 * MS, offset: 0 },
        }];
        let r = simulate(&servers, 60 * MS).unwrap();
        assert_eq!(r[0].jobs, 10);
        assert_eq!(r[0].max_response, MS);
        assert_eq!(r[0].postponements, 0);
    }

    #[test]
    fn refuses_overload() {
        let s = |q| Server { budget: q * MS, period: 10 * MS, workload: Workload::Greedy };
        assert!(simulate(&[s(6), s(5)], 10 * MS).unwrap_err().contains("above 1"));
    }
}
