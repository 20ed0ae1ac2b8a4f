//! What a run will hold in memory, estimated before it starts, so that a description whose
//! numbers would make the simulator allocate without bound (an overloaded port whose queue grows
//! for the whole run, a token bucket's burst of 10^308 bytes released at once, a workload above
//! the contract piling up in the regulators) is refused in one line, or announced, instead of
//! exhausting the machine.
//!
//! The estimate is an upper bound of the order of magnitude, not a measurement: a fixed part
//! (per flow, route, crossing and port), frames the sources release at once (token buckets'
//! bursts), and growth per simulated second where the long-term rate offered to a port with no
//! buffer limit exceeds its link's rate (every frame offered counted at its smallest size, each
//! flow at most at the rate of the links before the port on its route) or a workload above the contract fills a
//! regulator. Everything else the engine keeps is bounded by the network, not by the run's
//! length (see the engine's `retained_entries`).

use super::{SimConfig, Workload};
use crate::model::{Network, Traffic};

/// The limit when the configuration gives none: 8 GiB.
pub const DEFAULT_LIMIT: u64 = 8 << 30;

/// Bytes a frame waiting in a port's queue holds: its packet (32), its copy (56), its entry in
/// the queue (32) and its event, with the slack of growing vectors (measured: 133 bytes per
/// frame on a port offered 10^9 frames per second).
const QUEUED_FRAME_BYTES: f64 = 160.0;
/// Bytes a frame waiting in its regulator holds (an entry of 16, with slack).
const PRODUCED_FRAME_BYTES: f64 = 32.0;

/// A run's estimated memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// At the end of the run, bytes (infinite when a burst has no end).
    pub bytes: f64,
    /// Added per simulated second, bytes.
    pub growth_per_s: f64,
    /// What takes most, in words.
    pub why: String,
}

/// `bytes` as a person reads it: "24.1 GB", "512 MB" (finite).
pub fn human(bytes: f64) -> String {
    let (v, unit) = if bytes >= 1e9 {
        (bytes / 1e9, "GB")
    } else if bytes >= 1e6 {
        (bytes / 1e6, "MB")
    } else {
        (bytes / 1e3, "kB")
    };
    format!("{v:.3} {unit}").replace(".000 ", " ")
}

/// The estimate for simulating `net` with `cfg`.
pub fn estimate(net: &Network, cfg: &SimConfig) -> Estimate {
    let load = match cfg.workload {
        Workload::Periodic => 1.0,
        Workload::Cbr { load } | Workload::Poisson { load } | Workload::ParetoBursts { load, .. } => load,
    };
    let crossings: usize =
        net.flows.iter().map(|f| f.routes.iter().map(|r| r.ports.len()).sum::<usize>()).sum();
    let routes: usize = net.flows.iter().map(|f| f.routes.len()).sum();
    let mut bytes = 1e6
        + 512.0 * net.flows.len() as f64
        + 600.0 * routes as f64
        + 64.0 * crossings as f64
        + 256.0 * net.ports.len() as f64;
    let seconds = cfg.duration_ns.max(0) as f64 / 1e9;
    // Long-term wire rate each flow offers its ports, and frames piling in its regulator.
    let mut burst_frames = 0.0;
    let mut regulator_growth = 0.0;
    let mut worst = (0.0, String::new());
    let offered: Vec<f64> = net
        .flows
        .iter()
        .map(|f| match &f.traffic {
            Traffic::TokenBucket { burst, max_packet, .. } => {
                let frames = (burst.bits() / max_packet.bits().max(1.0)).min(f64::MAX);
                if frames > 1.0 {
                    burst_frames += frames * f.routes.len() as f64;
                    let b = frames * QUEUED_FRAME_BYTES * f.routes.len() as f64;
                    if b > worst.0 {
                        worst = (b, format!("{} releases {frames:.3e} frames at once, its burst", f.name));
                    }
                }
                f.rate
            }
            _ => {
                let period = f.period().unwrap_or(1.0).max(1e-9);
                regulator_growth += (load - 1.0).max(0.0) / period;
                f.rate * load.min(1.0)
            }
        })
        .collect();
    // Each flow's rate at each port it crosses, capped by the links before it.
    let mut at_port = vec![0.0; net.ports.len()];
    let mut counted = vec![usize::MAX; net.ports.len()];
    for (f, flow) in net.flows.iter().enumerate() {
        for r in &flow.routes {
            let mut rate = offered[f];
            for &p in &r.ports {
                if counted[p] != f {
                    counted[p] = f;
                    at_port[p] += rate;
                }
                rate = rate.min(net.ports[p].rate);
            }
        }
    }
    let mut queue_growth = 0.0;
    for (p, port) in net.ports.iter().enumerate() {
        if port.buffer.is_some() {
            continue;
        }
        let flows = &net.flows_per_port()[p];
        let rate = at_port[p];
        if rate <= port.rate {
            continue;
        }
        let smallest = flows.iter().map(|&f| net.flows[f].min_frame_wire).fold(f64::INFINITY, f64::min);
        let frames = (rate - port.rate) / smallest.max(1.0);
        queue_growth += frames;
        let b = frames * QUEUED_FRAME_BYTES;
        if b > worst.0 {
            worst = (
                b,
                format!(
                    "port {} is overloaded ({:.3e} bit/s offered for {:.3e})",
                    net.port_label(p),
                    rate,
                    port.rate
                ),
            );
        }
    }
    if regulator_growth * PRODUCED_FRAME_BYTES > worst.0 {
        worst = (
            regulator_growth * PRODUCED_FRAME_BYTES,
            format!("the workload's load {load} exceeds the contracts"),
        );
    }
    let growth_per_s = queue_growth * QUEUED_FRAME_BYTES + regulator_growth * PRODUCED_FRAME_BYTES;
    bytes += burst_frames * QUEUED_FRAME_BYTES + growth_per_s * seconds;
    if let Some(d) = cfg.dedup {
        // Each destination's filter: 4-bit counters, two to a byte.
        let destinations: std::collections::HashSet<usize> =
            net.flows.iter().flat_map(|f| f.routes.iter().map(|r| r.destination)).collect();
        let filters = destinations.len() as f64 * (d.counters as f64 / 2.0);
        bytes += filters;
        if filters > worst.0 {
            let what = format!(
                "deduplication filters of {} counters at {} destinations",
                d.counters,
                destinations.len()
            );
            worst = (filters, what);
        }
    }
    if cfg.trace_limit > 0 {
        // A record per frame transmission, up to the limit.
        let hops_per_s: f64 = net
            .flows
            .iter()
            .zip(&offered)
            .map(|(f, &rate)| {
                let crossings: usize = f.routes.iter().map(|r| r.ports.len()).sum();
                rate / f.min_frame_wire.max(1.0) * crossings as f64
            })
            .sum();
        let records = (cfg.trace_limit as f64).min(hops_per_s * seconds + burst_frames * crossings as f64);
        bytes += 24.0 * records;
    }
    let why = if worst.1.is_empty() { "the network's tables".to_string() } else { worst.1 };
    Estimate { bytes, growth_per_s, why }
}

/// Refuses a run estimated above its limit, in one line that names the figure, the cause and
/// how to run it anyway.
pub fn check(net: &Network, cfg: &SimConfig) -> Result<Estimate, String> {
    let e = estimate(net, cfg);
    let limit = if cfg.memory_limit_bytes > 0 { cfg.memory_limit_bytes } else { DEFAULT_LIMIT };
    if e.bytes > limit as f64 {
        let growth = if e.growth_per_s > 0.0 {
            format!(", growing by {} per simulated ms", human(e.growth_per_s / 1e3))
        } else {
            String::new()
        };
        let shorten = e.growth_per_s > 0.0;
        let (need, force) = if e.bytes < 1.8e19 {
            let mb = (e.bytes * 1.1 / 1e6).ceil();
            let or = if shorten { ", or" } else { ":" };
            (format!("about {}", human(e.bytes)), format!("{or} --memory-limit {mb}MB runs it anyway"))
        } else {
            ("more memory than any machine has".into(), String::new())
        };
        return Err(format!(
            "the simulation would need {need} ({}{growth}), over the limit of {}{}{force}",
            e.why,
            human(limit as f64),
            if shorten { ": shorten --duration" } else { "" },
        ));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::load_network;

    fn net(flow: &str) -> Network {
        let json = format!(
            r#"{{"name": "m", "end_systems": [{{"name": "ES1"}}, {{"name": "ES2"}}],
              "switches": [{{"name": "SW"}}],
              "links": [{{"from": "ES1", "to": "SW"}}, {{"from": "SW", "to": "ES2"}}],
              "flows": [{flow}]}}"#
        );
        let (n, d) = load_network(&json);
        n.unwrap_or_else(|| panic!("{:?}", d.0))
    }

    /// A 100 B frame every ns on a 100 Mbit/s link: 120 B = 960 bits on the wire, 9.6e11 bit/s
    /// offered, 9.6e11 - 1e8 in excess, 999.9 M frames of 960 bits a second piling up at ES1's
    /// port (SW's port is fed by a 100 Mbit/s link: not overloaded), 160 B each: 159,984 MB per
    /// simulated second. 1 ms passes with a warning's figure, 100 ms is refused, or runs with a
    /// limit above its estimate.
    #[test]
    fn an_overloaded_port_grows_and_is_refused() {
        let n = net(r#"{"name": "F", "type": "periodic", "period": "1ns", "size": "100B",
                        "source": "ES1", "destinations": ["ES2"]}"#);
        let cfg = |ms: i64| SimConfig { duration_ns: ms * 1_000_000, ..Default::default() };
        let e = estimate(&n, &cfg(1));
        assert!((e.growth_per_s - (9.6e11 - 1e8) / 960.0 * 160.0).abs() < 1.0, "{e:?}");
        assert!(e.why.contains("ES1"), "{}", e.why);
        assert!(check(&n, &cfg(1)).is_ok());
        let refused = check(&n, &cfg(100)).unwrap_err();
        assert!(
            refused.contains("about 15.999 GB") && refused.contains("--memory-limit 17600MB"),
            "{refused}"
        );
        assert!(check(&n, &SimConfig { memory_limit_bytes: 17_600_000_000, ..cfg(100) }).is_ok());
        assert!(crate::sim::Simulator::new(&n, cfg(100)).is_err(), "refused before anything runs");
    }

    /// `--dedup-counters` is a user's number: 10^12 counters in the one destination's filter, two
    /// to a byte, make 5 x 10^11 bytes (500 GB), and the 1 MB of the fixed part.
    #[test]
    fn deduplication_filters_are_counted() {
        let n = net(r#"{"name": "F", "type": "virtual_link", "bag": "1ms", "lmin": "64B", "lmax": "1000B",
                        "source": "ES1", "destinations": ["ES2"]}"#);
        let dedup = Some(crate::sim::DedupSettings { counters: 1_000_000_000_000, ..Default::default() });
        let refused = check(&n, &SimConfig { dedup, ..Default::default() }).unwrap_err();
        let expected = "about 500.001 GB (deduplication filters of 1000000000000 counters at 1 \
                        destinations), over the limit of 8.590 GB: --memory-limit 550002MB runs it anyway";
        assert!(refused.ends_with(expected), "{refused}");
    }

    /// A token bucket of 10^12 bytes (the largest size a description may hold is 1 TiB; 10^308
    /// is refused at validation) releases 10^9 frames of 1000 B at once, 160 B each: 160 GB,
    /// refused with the figure.
    #[test]
    fn a_huge_burst_is_refused() {
        let n = net(r#"{"name": "F", "type": "token_bucket", "burst": "1000000MB", "rate": "1Mbps",
                        "min_packet": "64B", "max_packet": "1000B", "source": "ES1", "destinations": ["ES2"]}"#);
        let cfg = SimConfig { duration_ns: 1_000_000, ..Default::default() };
        let refused = check(&n, &cfg).unwrap_err();
        assert!(refused.contains("about 160.") && refused.contains("burst"), "{refused}");
        // A contract the network carries grows nothing.
        let n = net(r#"{"name": "F", "type": "virtual_link", "bag": "1ms", "lmin": "64B", "lmax": "1000B",
                        "source": "ES1", "destinations": ["ES2"]}"#);
        let e = estimate(&n, &SimConfig { duration_ns: 100_000_000_000, ..Default::default() });
        assert_eq!(e.growth_per_s, 0.0);
        assert!(e.bytes < 2e6, "{e:?}");
    }
}
