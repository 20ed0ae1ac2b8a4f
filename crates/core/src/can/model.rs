//! The buses of a validated description, simulated (`rtnetlab simulate` on a fixed-priority
//! file): each message stream at its period with its queuing jitter drawn uniformly, streams
//! served by a network sporadic server at their minimum inter-arrival, every node's transmit
//! queue as the model says; and each simulated maximum next to the analysis bound.
//!
//! Releases are synchronous (all at time 0, the critical instant of the analysis) unless random
//! offsets are asked for. A response is measured from queuing to the end of the last frame, which
//! is never more than the analysis' response from arrival (it adds the queuing jitter).

use super::bus::{Arrivals, Bus, Node, Payload, Sender, ServerSpec, SimConfig, Stream, TxQueue};
use super::frame::{CanId, Stuffing};
use crate::model::fixed_priority::{FixedPrioritySystem, Resource};
use crate::model::{CanIdentifier, TransmitQueue};
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BusSimConfig {
    pub duration_ns: i64,
    pub seed: u64,
    /// Release offsets drawn uniformly in one period (else all streams start at 0).
    #[serde(default)]
    pub random_offsets: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct MessageStats {
    pub name: String,
    /// `message` or `server` traffic (a served message).
    pub served_by: Option<String>,
    pub priority: Option<u32>,
    pub count: u64,
    pub pending: u64,
    pub min_us: Option<f64>,
    pub mean_us: Option<f64>,
    pub max_us: Option<f64>,
    /// The analysis bound (from arrival); for a served message, its server's.
    pub bound_us: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ServerStats {
    pub name: String,
    pub replenishments: u64,
    pub timer_expiries: u64,
    pub normal_sends: u64,
    pub background_sends: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct BusStats {
    pub bus: String,
    pub utilisation: f64,
    pub messages: Vec<MessageStats>,
    pub servers: Vec<ServerStats>,
}

#[derive(Clone, Debug, Serialize)]
pub struct BusSimReport {
    pub buses: Vec<BusStats>,
    /// Simulated maxima above their bound (a bug in one engine or the other; never expected).
    pub violations: Vec<String>,
}

fn can_id(identifier: CanIdentifier, priority: u32) -> CanId {
    match identifier {
        CanIdentifier::Standard => CanId::Standard(priority as u16),
        CanIdentifier::Extended => CanId::Extended(priority),
    }
}

/// The simulator's input for bus `b`: (bus, message index of each stream).
pub fn bus_of(sys: &FixedPrioritySystem, b: usize, cfg: &BusSimConfig) -> Result<(Bus, Vec<usize>), String> {
    let model = &sys.buses[b];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(cfg.seed ^ (b as u64).wrapping_mul(0x9E37_79B9));
    let nodes = model
        .stations
        .iter()
        .map(|s| Node {
            queue: match s.queue {
                TransmitQueue::Priority => TxQueue::Priority,
                TransmitQueue::Fifo => TxQueue::Fifo,
            },
        })
        .collect();
    let mut servers = Vec::new();
    let mut server_index = vec![None; sys.servers.len()];
    for (k, s) in sys.servers.iter().enumerate() {
        if s.resource != Resource::Bus(b) {
            continue;
        }
        server_index[k] = Some(servers.len());
        servers.push(ServerSpec {
            node: s.station.unwrap_or(0),
            normal_id: can_id(model.identifier, s.priority),
            low_id: s.background_priority.map(|p| can_id(model.identifier, p)),
            init_budget: s.budget_packets,
            repl_period_ns: s.replenishment_period,
        });
    }
    let mut streams = Vec::new();
    let mut index = Vec::new();
    for (i, m) in sys.messages.iter().enumerate().filter(|(_, m)| m.bus == b) {
        let sender = match (m.server, m.priority) {
            (Some(s), _) => Sender::Server(server_index[s].expect("a served message's server is on its bus")),
            (None, Some(p)) => Sender::Id(can_id(model.identifier, p)),
            (None, None) => {
                return Err(format!(
                    "message '{}' has no priority; run `rtnetlab configure priorities` first",
                    m.name
                ))
            }
        };
        let offset = if cfg.random_offsets { rng.gen_range(0..m.period) } else { 0 };
        let arrivals = if m.server.is_some() {
            Arrivals::Sporadic { offset_ns: offset, min_gap_ns: m.period, mean_extra_gap_ns: 0 }
        } else {
            Arrivals::Periodic { period_ns: m.period, offset_ns: offset, jitter_ns: m.jitter }
        };
        let payload = Payload::Bytes { bytes: m.payload_bytes as u8, stuffing: Stuffing::WorstCase };
        streams.push(Stream::new(m.station, sender, payload, arrivals).with_frames_per_message(m.packets));
        index.push(i);
    }
    let bus = Bus { bit_rate_bps: model.bit_rate.round() as i64, nodes, servers, streams };
    bus.validate().map_err(|e| format!("{}: {}", e.place, e.message))?;
    Ok((bus, index))
}

/// Simulates every bus of `sys` and compares each message's maximum with its bound.
pub fn simulate(sys: &FixedPrioritySystem, cfg: &BusSimConfig) -> Result<BusSimReport, String> {
    let bounds = crate::analysis::response_time::analyze(sys);
    let bound_of = |name: &str, kind: &str| {
        bounds.items.iter().find(|i| i.name == name && i.kind == kind).and_then(|i| i.response_us)
    };
    let mut report = BusSimReport { buses: Vec::new(), violations: Vec::new() };
    for (b, model) in sys.buses.iter().enumerate() {
        let (bus, index) = bus_of(sys, b, cfg)?;
        let sim = bus
            .simulate(&SimConfig { until_ns: cfg.duration_ns, seed: cfg.seed, trace: false })
            .map_err(|e| format!("{}: {}", e.place, e.message))?;
        let us = |ns: i64| ns as f64 / 1000.0;
        let mut messages = Vec::new();
        for (k, &i) in index.iter().enumerate() {
            let m = &sys.messages[i];
            let st = &sim.streams[k];
            let served_by = m.server.map(|s| sys.servers[s].name.clone());
            // A served message's frames wait for the server's budget: no bound of its own.
            let bound_us = if served_by.is_some() { None } else { bound_of(&m.name, "message") };
            let max_us = st.max_response_ns.map(us);
            if let (Some(max), Some(bound)) = (max_us, bound_us) {
                if max > bound + 1e-9 {
                    report
                        .violations
                        .push(format!("{}: simulated {max} us above the bound {bound} us", m.name));
                }
            }
            messages.push(MessageStats {
                name: m.name.clone(),
                served_by,
                priority: m.priority,
                count: st.delivered,
                pending: st.pending(),
                min_us: st.min_response_ns.map(us),
                mean_us: st.mean_response_ns.map(|x| x / 1000.0),
                max_us,
                bound_us,
            });
        }
        let servers = sys
            .servers
            .iter()
            .filter(|s| s.resource == Resource::Bus(b))
            .zip(&sim.servers)
            .map(|(s, st)| ServerStats {
                name: s.name.clone(),
                replenishments: st.replenishments,
                timer_expiries: st.timer_expiries,
                normal_sends: st.normal_sends,
                background_sends: st.low_sends,
            })
            .collect();
        report.buses.push(BusStats {
            bus: model.name.clone(),
            utilisation: if sim.end_ns > 0 { sim.busy_ns as f64 / sim.end_ns as f64 } else { 0.0 },
            messages,
            servers,
        });
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;

    /// Random CAN buses described in the model (single- and multi-frame messages, jitter,
    /// priority and FIFO nodes, sometimes a sporadic server): every simulated maximum at or
    /// below the bound `analyze` gives, with synchronous and random releases.
    #[test]
    fn simulated_responses_never_exceed_the_analysis() {
        let mut checked = 0;
        for seed in 0..150u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = rng.gen_range(2..=7usize);
            let fifo = rng.gen_bool(0.2);
            let multi = !fifo && rng.gen_bool(0.3);
            let server = !fifo && rng.gen_bool(0.3);
            let mut messages = Vec::new();
            let mut ids: Vec<u32> = (1..=40).collect();
            for k in 0..n {
                let id = ids.remove(rng.gen_range(0..ids.len()));
                let period_ms = [2, 5, 10, 20][rng.gen_range(0..4)];
                // FIFO analysis needs each FIFO node's priorities contiguous: one FIFO node
                // holding the lowest identifiers of the bus.
                let node = if fifo { "fifo_node".to_string() } else { format!("n{k}") };
                messages.push(format!(
                    r#"{{"name": "m{k}", "bus": "can0", "sender": "{node}", "payload": "{}B", "packets": {},
                    "period": "{period_ms}ms", "jitter": "{}us", "priority": {id}}}"#,
                    rng.gen_range(0..=8),
                    if multi { rng.gen_range(1..=3) } else { 1 },
                    rng.gen_range(0..=300),
                ));
            }
            let mut servers = String::new();
            if server {
                messages.push(
                    r#"{"name": "served", "bus": "can0", "sender": "s", "payload": "8B", "packets": 1, "server": "nss", "period": "1ms"}"#
                        .to_string(),
                );
                servers = format!(
                    r#", "servers": [{{"name": "nss", "bus": "can0", "sender": "s", "budget": {}, "replenishment_period": "10ms", "priority": 100}}]"#,
                    rng.gen_range(1..=4)
                );
            }
            let json = format!(
                r#"{{"name": "r", "buses": [{{"name": "can0", "bit_rate": "500kbps", "nodes": {{"fifo_node": {{"queue": "{}"}}}}}}],
                "messages": [{}]{servers}}}"#,
                if fifo { "fifo" } else { "priority" },
                messages.join(",")
            );
            let (net, diags) = crate::model::load_network(&json);
            let net = net.unwrap_or_else(|| panic!("{json}\n{:?}", diags.errors().collect::<Vec<_>>()));
            for random_offsets in [false, true] {
                let cfg = BusSimConfig { duration_ns: 400_000_000, seed, random_offsets };
                let report = match simulate(&net.fixed_priority, &cfg) {
                    Ok(r) => r,
                    Err(e) => panic!("seed {seed}: {e}"),
                };
                assert!(report.violations.is_empty(), "seed {seed}: {:?}\n{json}", report.violations);
                checked += report.buses[0].messages.iter().filter(|m| m.bound_us.is_some()).count();
            }
        }
        assert!(checked > 800, "only {checked} bounded messages compared");
    }

    /// Seed 004 Table 1 on the simulated bus: within 11 / 31 / 100 units.
    #[test]
    fn nss_table1_simulated_within_bounds() {
        let json = r#"{"name": "t", "buses": [{"name": "can0", "bit_rate": "135kbps"}],
            "messages": [
              {"name": "m1", "bus": "can0", "sender": "n1", "payload": "8B", "packets": 10, "period": "200ms", "deadline": "20ms", "priority": 1},
              {"name": "m2", "bus": "can0", "sender": "n2", "payload": "8B", "packets": 20, "server": "nss2"},
              {"name": "m3", "bus": "can0", "sender": "n3", "payload": "8B", "packets": 50, "period": "200ms", "deadline": "100ms", "priority": 3}],
            "servers": [{"name": "nss2", "bus": "can0", "sender": "n2", "budget": 20, "replenishment_period": "50ms", "priority": 2}]}"#;
        let (net, _) = crate::model::load_network(json);
        let report = simulate(
            &net.unwrap().fixed_priority,
            &BusSimConfig { duration_ns: 2_000_000_000, seed: 1, random_offsets: false },
        )
        .unwrap();
        assert!(report.violations.is_empty());
        let max = |n: &str| report.buses[0].messages.iter().find(|m| m.name == n).unwrap().max_us.unwrap();
        assert!(max("m1") <= 11_000.0 && max("m3") <= 100_000.0);
        assert!(max("m1") >= 10_000.0, "m1 takes at least its own 10 packets");
        assert_eq!(report.buses[0].servers[0].name, "nss2");
    }
}
