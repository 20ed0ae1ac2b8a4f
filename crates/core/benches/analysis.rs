//! Engine-side timing of the analyses on a generated 5000-VL, 16-switch, two-plane AFDX network
//! (`cargo bench -p rtnetlab-core --bench analysis`). The Python-side benchmark (benchmarks/run.py)
//! runs the plain-Python peer in the same process; this one separates analysis from JSON output.
//!
//! Environment: `VLS` (default 5000), `METHOD` to run one method only (`tfa`, `afdx-naive`,
//! `tfa+grouping`, `sfa+grouping`, `best`), `REPS` to override the number of runs, `JSON=0` to
//! leave out the JSON (each run then analyses and drops the report, as a summary binding does).

use rtnetlab_core::analysis::network_bounds::{self, Candidate, Multiplexing, Options};
use rtnetlab_core::analysis::{afdx_naive, run, Request};
use rtnetlab_core::generate::{afdx, AfdxParams};
use rtnetlab_core::model::validate_spec;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let vls: usize = std::env::var("VLS").ok().and_then(|s| s.parse().ok()).unwrap_or(5000);
    let only = std::env::var("METHOD").ok();
    let reps_env: Option<usize> = std::env::var("REPS").ok().and_then(|s| s.parse().ok());
    let with_json = std::env::var("JSON").map_or(true, |v| v != "0");
    let t = Instant::now();
    let spec = afdx(&AfdxParams { virtual_links: vls, switches: 16, ..Default::default() });
    let (net, _) = validate_spec(spec);
    let net = net.expect("generated networks validate");
    println!("generate+validate: {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
    for (method, grouping) in
        [("afdx-naive", false), ("tfa", false), ("tfa", true), ("sfa", true), ("best", false)]
    {
        let name = format!("{method}{}", if grouping { "+grouping" } else { "" });
        if only.as_ref().is_some_and(|m| *m != name) {
            continue;
        }
        let req = Request { method: method.parse().expect("a method name"), grouping, ..Default::default() };
        let reps = reps_env.unwrap_or(if method == "sfa" || method == "best" { 3 } else { 15 }).max(1);
        let (mut analysis, mut drop, mut json) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..reps {
            let t = Instant::now();
            let report = run(&net, &req).expect("applies");
            analysis.push(t.elapsed().as_secs_f64());
            if with_json {
                let t = Instant::now();
                let text = serde_json::to_string(&report).expect("json");
                json.push(t.elapsed().as_secs_f64());
                std::hint::black_box(text);
            }
            let t = Instant::now();
            std::mem::drop(report);
            drop.push(t.elapsed().as_secs_f64());
        }
        let fastest = analysis.iter().copied().fold(f64::INFINITY, f64::min);
        print!(
            "{name}: analysis {:.2} ms (fastest {:.2}), drop {:.2} ms",
            median(analysis) * 1e3,
            fastest * 1e3,
            median(drop) * 1e3
        );
        if with_json {
            print!(", JSON {:.2} ms", median(json) * 1e3);
        }
        println!();
        // The bounds alone, without what every report also gets (redundancy-managed bounds and
        // the end-system jitter check, analysis::run's finishing step).
        let bounds_only: Option<fn(&_) -> _> = match name.as_str() {
            "afdx-naive" => Some(afdx_naive::analyze),
            "tfa" => Some(|n| {
                let opt =
                    Options { method: Candidate::Tfa, grouping: false, multiplexing: Multiplexing::Fifo };
                network_bounds::analyze(n, &opt)
            }),
            _ => None,
        };
        if let Some(bounds) = bounds_only {
            let mut times = Vec::new();
            for _ in 0..reps {
                let t = Instant::now();
                std::hint::black_box(bounds(&net));
                times.push(t.elapsed().as_secs_f64());
            }
            println!("{name} bounds only: {:.2} ms, report dropped", median(times) * 1e3);
        }
    }
}
