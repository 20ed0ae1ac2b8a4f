//! Engine-side simulator speed on a generated 5000-VL, 16-switch, two-plane AFDX network
//! (`cargo bench -p rtnetlab-core --bench simulation`): frame-hops per second of wall time.
//! benchmarks/sim_bench.py runs the SimPy peer beside it.

use rtnetlab_core::generate::{afdx, AfdxParams};
use rtnetlab_core::model::validate_spec;
use rtnetlab_core::sim::{simulate, SimConfig};

fn main() {
    let vls: usize = std::env::var("VLS").ok().and_then(|s| s.parse().ok()).unwrap_or(5000);
    let secs: f64 = std::env::var("SIM_S").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let spec = afdx(&AfdxParams { virtual_links: vls, switches: 16, ..Default::default() });
    let net = validate_spec(spec).0.expect("generated networks validate");
    let cfg = SimConfig { duration_ns: (secs * 1e9) as i64, ..Default::default() };
    for _ in 0..3 {
        let r = simulate(&net, &cfg).expect("simulates");
        let s = r.stats;
        println!(
            "{vls} VLs, {secs} s simulated: {} frame-hops, {} events in {:.3} s: {:.2} M frame-hops/s",
            s.frame_hops,
            s.events,
            s.wall_s,
            s.frame_hops as f64 / s.wall_s / 1e6
        );
    }
}
