//! Seed 003's multimedia scenario on the 64-endpoint BMIN at one load point, with the Table 5
//! schedulers the engine runs (`cargo bench -p rtnetlab-core --bench fabric`): per class
//! offered and accepted load, mean and p99 latency, and the simulator's speed, as Markdown.
//!
//! Run twice: with injections as fractions of 2.5 Gb/s (the seed's normalisation, I-003-5)
//! and of the 2 Gb/s data rate. MEASURE_MS, WARMUP_MS, BE (best-effort injection per class),
//! REF_GBPS (one reference rate only) and SEEDS override the defaults.

use rtnetlab_core::fabric::{run_scenario, Scenario, Table5, MULTIMEDIA_BEST_EFFORT};
use rtnetlab_core::units::{DataRate, Duration};

fn env(name: &str, default: f64) -> f64 {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn main() {
    let measure_ms = env("MEASURE_MS", 100.0);
    let warmup_ms = env("WARMUP_MS", 20.0);
    let best_effort = env("BE", MULTIMEDIA_BEST_EFFORT);
    let seeds = env("SEEDS", 1.0) as u64;
    let references = match std::env::var("REF_GBPS").ok().and_then(|s| s.parse().ok()) {
        Some(r) => vec![r],
        None => vec![2.5, 2.0],
    };
    for reference in references {
        for variant in Table5::ALL {
            for seed in 1..=seeds {
                let mut s = Scenario::multimedia(variant, best_effort);
                s.seed = seed;
                s.reference_rate = DataRate::from_bps(reference * 1e9);
                s.warmup = Duration::from_ms(warmup_ms);
                s.duration = Duration::from_ms(measure_ms);
                let r = match run_scenario(&s) {
                    Ok(r) => r,
                    Err(e) => {
                        println!("\n{} (reference {reference} Gb/s): {e}", variant.name());
                        break;
                    }
                };
                assert!(r.checks.all_hold(), "{:?}", r.checks);
                println!(
                    "\n{}, injections of {reference} Gb/s, seed {seed}, {warmup_ms} ms + {measure_ms} ms: \
                     offered {:.3}, accepted {:.3}; {} events in {:.1} s ({:.2} M events/s), {} packets \
                     delivered, {} pending at the end",
                    variant.name(),
                    r.offered_load,
                    r.accepted_load,
                    r.stats.events,
                    r.stats.wall_s,
                    r.stats.events_per_s / 1e6,
                    r.stats.packets_delivered,
                    r.checks.pending_at_end,
                );
                println!("| class | offered | accepted | mean µs | p99 µs | max µs | packets |");
                println!("|---|---|---|---|---|---|---|");
                for c in &r.classes {
                    println!(
                        "| {} | {:.4} | {:.4} | {:.1} | {:.1} | {:.1} | {} |",
                        c.class,
                        c.offered_load,
                        c.accepted_load,
                        c.latency.mean_us,
                        c.latency.p99_us,
                        c.latency.max_us,
                        c.packets_delivered
                    );
                }
            }
        }
    }
}
