//! Measurement: the run's report (per route, per destination, per port, deduplication, copy
//! accounting), and the deterministic counts tests read (work units, entries held).

use super::ports::PortQueue;
use super::stats::LatencySummary;
use super::*;
use std::collections::HashSet;

impl Simulator {
    /// Deterministic work units so far: events plus the entries of per-destination state visited
    /// (a measure of cost that no machine's speed affects).
    pub fn work_units(&self) -> u64 {
        self.events + self.work
    }

    /// Entries held in every structure of the engine that could grow with the run:
    /// per-destination state, frames awaited for retransmission, packets and copies (the pools'
    /// peak), frames waiting in FIFO ports, arrivals logged, trace records. (Not the frames the
    /// applications produced that wait in their regulators: the workload's own backlog.)
    pub fn retained_entries(&self) -> usize {
        let ports: usize = self
            .ports
            .iter()
            .map(|p| match &p.queue {
                PortQueue::Fifo { waiting } => waiting.len(),
                PortQueue::Scheduled(_) => 0,
            })
            .sum();
        let dedup: usize = self.dedups.iter().flatten().map(|(d, known)| d.live_keys() + known.len()).sum();
        self.receivers.iter().map(|r| r.awaiting_twins.len()).sum::<usize>()
            + dedup
            + self.awaited.len()
            + self.timeouts.len()
            + self.packets.len()
            + self.copies.len()
            + ports
            + self.arrivals.as_ref().map_or(0, |l| l.held())
            + self.trace.len()
    }

    pub fn report(&self) -> SimReport {
        let net = &self.net;
        let flows = self
            .routes
            .iter()
            .enumerate()
            .map(|(r, &(f, dest, plane, _))| {
                let l = &self.route_stats[r];
                FlowStats {
                    flow: net.flows[f as usize].name.clone(),
                    destination: net.nodes[dest as usize].name.clone(),
                    plane: net.planes[plane as usize].clone(),
                    latency: LatencySummary::from(l),
                    losses: self.route_losses[r],
                    integrity_discards: self.route_sinks[r].integrity_discards,
                    retransmissions: self.sources_cold[f as usize].retransmissions,
                    frames_due: self.cfg.retransmit.then_some(self.sources_cold[f as usize].frames_due),
                    histogram: l.histogram().into_iter().map(|(ns, n)| (ns as f64 / 1e3, n)).collect(),
                }
            })
            .collect();
        let mut delivered = Vec::new();
        let mut seen = HashSet::new();
        for &(f, dest, _, rx) in &self.routes {
            if net.planes.len() > 1 && seen.insert(rx) {
                let r = &self.receivers[rx as usize];
                delivered.push(DeliveredStats {
                    flow: net.flows[f as usize].name.clone(),
                    destination: net.nodes[dest as usize].name.clone(),
                    latency: LatencySummary::from(&self.delivered[rx as usize]),
                    duplicates_discarded: r.duplicates,
                });
            }
        }
        let dedup = self
            .dedups
            .iter()
            .enumerate()
            .filter_map(|(n, d)| d.as_ref().map(|(d, _)| (n, d)))
            .map(|(n, d)| {
                let st = d.stats();
                let filter = d.filter();
                DedupReport {
                    destination: net.nodes[n].name.clone(),
                    mode: self.cfg.dedup.map_or(DedupMode::FirstCopy, |s| s.mode),
                    counters: filter.counters(),
                    hashes: filter.hashes(),
                    arrivals: st.arrivals,
                    delivered: st.delivered,
                    duplicates_dropped: st.duplicates_dropped,
                    false_positives: st.false_positives,
                    measured_fp_rate: st.measured_fp_rate(),
                    theorem8_fp: filter.predicted_fp(st.peak_table_size as u64),
                    saturations: st.saturations,
                    peak_keys: st.peak_table_size,
                }
            })
            .collect();
        let elapsed = self.now.max(1) as f64;
        let mut unstarted_hops = 0;
        let ports = net
            .ports
            .iter()
            .zip(&self.ports)
            .enumerate()
            .map(|(k, (p, s))| {
                // A FIFO port counts a frame when it schedules it: those not started by now
                // have not left it yet.
                let (frames, busy_ns) = match &s.queue {
                    PortQueue::Fifo { waiting, .. } => waiting
                        .iter()
                        .filter(|w| w.started > self.now)
                        .fold((s.frames, s.busy_ns), |(n, b), w| (n - 1, b - w.tx_ns)),
                    PortQueue::Scheduled(_) => (s.frames, s.busy_ns),
                };
                unstarted_hops += s.frames - frames;
                PortStats {
                    node: net.nodes[p.node].name.clone(),
                    port: p.name.clone(),
                    plane: net.planes[p.plane].clone(),
                    max_backlog_bytes: s.max_backlog_bits / 8.0,
                    utilisation: (busy_ns.min(self.now) as f64 / elapsed).min(1.0),
                    frames,
                    drops: self.port_drops[k].0,
                    policed: self.port_drops[k].1,
                }
            })
            .collect();
        SimReport {
            network: net.spec.name.clone(),
            seed: self.cfg.seed,
            flows,
            delivered,
            dedup,
            ports,
            stats: RunStats {
                events: self.events,
                frame_hops: self.frame_hops - unstarted_hops,
                wall_s: self.wall_s,
                simulated_us: self.now as f64 / 1e3,
                frames_released: self.sources.iter().map(|s| s.next_frame).sum(),
                packets_created: self.packets_created,
                packets_delivered: self.packets_delivered,
                packets_forwarded: self.packets_forwarded,
                packets_dropped: self.packets_dropped,
                packets_policed: self.packets_policed,
                packets_in_flight: (self.packets.len() - self.free_packets.len()
                    + self.arrivals.as_ref().map_or(0, |l| l.held()))
                    as u64,
            },
        }
    }
}
