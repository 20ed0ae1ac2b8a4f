//! Engine-side simulator speed on a generated 5000-VL, 16-switch, two-plane AFDX network
//! (`cargo bench -p rtnetlab-core --bench simulation`): frame-hops per second.
//! `VLS` sets the number of VLs, `SIM_S` the simulated seconds, `RUNS` the repetitions (the
//! medians are printed last); `SWITCHES`, `PLANES`, `END_SYSTEMS` the network's shape and
//! `SYNC=1` synchronised releases of largest frames (with `VLS=265 SWITCHES=8 PLANES=1
//! END_SYSTEMS=58`: benchmarks/sim_wopanet.py's network and workload). Rates are given per second of wall time and, where Linux tells the
//! thread's CPU time, per CPU second (steadier on a shared machine). Each run also prints a hash
//! of its JSON report (wall time zeroed): an optimisation must leave it unchanged.
//! benchmarks/sim_bench.py runs the SimPy peer beside it.

use rtnetlab_core::generate::{afdx, AfdxParams};
use rtnetlab_core::model::validate_spec;
use rtnetlab_core::sim::{FrameSizes, Release, SimConfig, Simulator};

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

/// CPU time of this thread, seconds (Linux), or None.
fn cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(s.split_whitespace().next()?.parse::<f64>().ok()? / 1e9)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let env = |k: &str| std::env::var(k).ok();
    let vls: usize = env("VLS").and_then(|s| s.parse().ok()).unwrap_or(5000);
    let secs: f64 = env("SIM_S").and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let runs: usize = env("RUNS").and_then(|s| s.parse().ok()).unwrap_or(3);
    let num = |k: &str, d: usize| env(k).and_then(|s| s.parse().ok()).unwrap_or(d);
    let spec = afdx(&AfdxParams {
        virtual_links: vls,
        switches: num("SWITCHES", 16),
        planes: num("PLANES", 2),
        end_systems: num("END_SYSTEMS", 0),
        ..Default::default()
    });
    let net = validate_spec(spec).0.expect("generated networks validate");
    let mut cfg = SimConfig { duration_ns: (secs * 1e9) as i64, ..Default::default() };
    if env("SYNC").as_deref() == Some("1") {
        cfg.release = Release::Synchronized;
        cfg.frame_sizes = FrameSizes::Max;
    }
    let (mut wall_rates, mut cpu_rates) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let mut sim = Simulator::new(&net, cfg.clone()).expect("simulates");
        let cpu0 = cpu_s();
        sim.run_until(cfg.duration_ns);
        let cpu = cpu_s().zip(cpu0).map(|(b, a)| b - a);
        sim.finish();
        let mut r = sim.report();
        let s = r.stats.clone();
        let rate = s.frame_hops as f64 / s.wall_s / 1e6;
        let cpu_rate = cpu.map_or(f64::NAN, |c| s.frame_hops as f64 / c / 1e6);
        wall_rates.push(rate);
        cpu_rates.push(cpu_rate);
        r.stats.wall_s = 0.0;
        let hash = fnv1a(serde_json::to_string(&r).expect("serialises").as_bytes());
        println!(
            "{vls} VLs, {secs} s simulated: {} frame-hops, {} events in {:.3} s: {rate:.2} M frame-hops/s, \
             {cpu_rate:.2} M per CPU second (report {hash:016x})",
            s.frame_hops, s.events, s.wall_s,
        );
    }
    let best = cpu_rates.iter().copied().fold(f64::NAN, f64::max);
    println!(
        "median: {:.2} M frame-hops/s, {:.2} M per CPU second; least of {runs}: {:.1} ns of CPU per frame-hop",
        median(wall_rates),
        median(cpu_rates),
        1e3 / best
    );
}
