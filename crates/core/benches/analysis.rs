//! Engine-side timing of the analyses on a generated 5000-VL, 16-switch, two-plane AFDX network
//! (`cargo bench -p rtnetlab-core --bench analysis`). The Python-side benchmark (benchmarks/run.py)
//! runs the plain-Python peer in the same process; this one separates analysis from JSON output.

use rtnetlab_core::analysis::{run, Request};
use rtnetlab_core::generate::{afdx, AfdxParams};
use rtnetlab_core::model::validate_spec;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let vls: usize = std::env::var("VLS").ok().and_then(|s| s.parse().ok()).unwrap_or(5000);
    let t = Instant::now();
    let spec = afdx(&AfdxParams { virtual_links: vls, switches: 16, ..Default::default() });
    let (net, _) = validate_spec(spec);
    let net = net.expect("generated networks validate");
    println!("generate+validate: {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
    for (method, grouping) in
        [("afdx-naive", false), ("tfa", false), ("tfa", true), ("sfa", true), ("best", false)]
    {
        let req = Request { method: method.into(), grouping, blind: false };
        let reps = if method == "sfa" || method == "best" { 3 } else { 15 };
        let mut analysis = Vec::new();
        let mut json = Vec::new();
        for _ in 0..reps {
            let t = Instant::now();
            let report = run(&net, &req).expect("applies");
            analysis.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            let text = serde_json::to_string(&report).expect("json");
            json.push(t.elapsed().as_secs_f64());
            std::hint::black_box(text);
        }
        println!(
            "{method}{}: analysis {:.2} ms, JSON {:.2} ms",
            if grouping { "+grouping" } else { "" },
            median(analysis) * 1e3,
            median(json) * 1e3
        );
    }
}
