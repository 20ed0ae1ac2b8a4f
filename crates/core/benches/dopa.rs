//! Seed 001E, Fig. 6: DOPA acceptance with OPA against deadline monotonic, and the time the
//! sweeps take (`cargo bench -p rtnetlab-core --bench dopa`). Panel (a) at 10 density points ×
//! 100 sets × 2 assignments is the timed target; the other panels and variants follow.
//! `SETS=n` changes the sets per point, `THREADS=n` the worker threads.

use rtnetlab_core::experiments::dopa_fig6::{fig6_with, Fig6Config, Fig6Kind, Fig6Row};
use rtnetlab_core::fixed_priority::dopa::{BestCase, DmKey, LocalTest};
use std::time::Instant;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn show(title: &str, kind: Fig6Kind, points: usize, sets: usize, cfg: &Fig6Config) -> Vec<Fig6Row> {
    let t = Instant::now();
    let rows = fig6_with(kind, points, sets, 2013, cfg);
    let secs = t.elapsed().as_secs_f64();
    println!("{title}: {points} points x {sets} sets x 2 assignments in {secs:.2} s");
    println!("  {:>6}  {:>6}  {:>6}", "x", "OPA", "DM");
    for r in &rows {
        println!("  {:>6.2}  {:>5.0}%  {:>5.0}%", r.x, 100.0 * r.opa_acceptance, 100.0 * r.dm_acceptance);
    }
    rows
}

fn main() {
    let sets = env("SETS", 100);
    let threads = env("THREADS", 1);
    let base = Fig6Config { threads, ..Fig6Config::default() };
    show("Fig. 6(a) density, release-jitter test, DM by local window", Fig6Kind::Density, 10, sets, &base);
    for (name, key) in [("end-to-end D", DmKey::EndToEnd), ("absolute d_j", DmKey::AbsoluteDeadline)] {
        let cfg = Fig6Config { dm_key: key, ..base.clone() };
        show(&format!("Fig. 6(a), DM by {name}"), Fig6Kind::Density, 10, sets, &cfg);
    }
    let paper = Fig6Config { local_test: LocalTest::Paper, ..base.clone() };
    show("Fig. 6(a), the paper's Eq. 1 (no jitter), DM by local window", Fig6Kind::Density, 10, sets, &paper);
    let paper_e2e = Fig6Config { dm_key: DmKey::EndToEnd, ..paper.clone() };
    show("Fig. 6(a), the paper's Eq. 1, DM by end-to-end D", Fig6Kind::Density, 10, sets, &paper_e2e);
    let wcet = Fig6Config { best_case: BestCase::Wcet, ..base.clone() };
    show("Fig. 6(a), release jitter with best case = WCET", Fig6Kind::Density, 10, sets, &wcet);
    show("Fig. 6(b) processors at density 8", Fig6Kind::Processors, 10, sets, &base);
    show("Fig. 6(b), the paper's Eq. 1", Fig6Kind::Processors, 10, sets, &paper);
    show("Fig. 6(c) applications at density 8", Fig6Kind::Applications, 9, sets, &base);
    show("Fig. 6(c), the paper's Eq. 1", Fig6Kind::Applications, 9, sets, &paper);
}
