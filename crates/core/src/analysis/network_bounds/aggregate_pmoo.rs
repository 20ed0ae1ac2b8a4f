//! PMOO on DNC's server graph: the left-over service of a set of flows along a stretch of their
//! path, each interfering aggregate's burst paid once over the part it shares (DNC
//! `PmooAnalysis.getServiceCurves`, flow prolongation off, its default), and from it
//!
//! * the PMOO analysis of a flow (DNC `PmooAnalysis.performAnalysis`), and
//! * PMOO arrival bounding (DNC `AggregatePmoo`, `AGGR_PMOO`): the flows on a turn, bounded
//!   where their common stretch begins, deconvolved by their PMOO left-over service over the
//!   stretch, instead of the concatenation of one left-over service per server
//!   ([`TurnBounding::PbooConcatenation`]): the cross traffic's bursts are paid once over the
//!   stretch. Neither bounding is always tighter (both are valid): on DNC's functional tests,
//!   PMOO bounding tightens TA_3S_1SC_3F_1AC_3P and TA_4S_1SC_2F_1AC_2P, loosens
//!   FF_4S_1SC_4F_1AC_4P.
//!
//! With rate-latency servers (R_j, T_j) and interfering token buckets (b_i, r_i) each sharing the
//! servers P_i of the stretch, the service left is β_{R,T} with
//!
//!   R = min_j (R_j − Σ_{i: j ∈ P_i} r_i),   T = Σ_j T_j + Σ_i (b_i + r_i Σ_{j ∈ P_i} T_j) / R,
//!
//! (Schmitt, Zdarsky & Martinovic, MMB 2008) and none when some R_j − Σ r_i ≤ 0. Arbitrary
//! multiplexing only: PMOO's left-over service assumes nothing of the order.

#[cfg(doc)]
use super::aggregate_pboo::TurnBounding;
use super::aggregate_pboo::{deconvolve, deviations, RateLatency, ServerGraph, TokenBucket};
use crate::model::{FlowId, PortId};

impl ServerGraph<'_> {
    /// The PMOO left-over service of `served` along `stretch` (consecutive servers of their
    /// path). The interfering flows (every other flow on the stretch but `foi`) are grouped by
    /// the run of servers of the stretch they cross (DNC `ServerGraph.groupFlowsPerSubPath`; a
    /// flow that leaves the stretch and joins it again is in one group per run), each group
    /// bounded where it joins with every flow counted (DNC leaves the foi's path there, so it
    /// cannot be taken as lowest priority). `None` where no rate is left.
    pub(super) fn pmoo_service(
        &mut self,
        stretch: &[PortId],
        served: &[FlowId],
        foi: Option<FlowId>,
    ) -> Option<RateLatency> {
        let mut groups: Vec<((usize, usize), Vec<FlowId>)> = Vec::new();
        let mut crossing: Vec<FlowId> =
            stretch.iter().flat_map(|&x| self.flows_at[x].iter().copied()).collect();
        crossing.sort_unstable();
        crossing.dedup();
        for f in crossing {
            if served.contains(&f) || Some(f) == foi {
                continue;
            }
            let path = self.path[f];
            // Each run of consecutive servers the flow shares with the stretch (it may leave the
            // stretch and join it again: one run per join).
            let mut j = 0;
            while let Some(skip) = stretch[j..].iter().position(|x| path.contains(x)) {
                let first = j + skip;
                let at = path.iter().position(|&x| x == stretch[first]).expect("the flow crosses it");
                let shared = stretch[first..].iter().zip(&path[at..]).take_while(|(a, b)| a == b).count();
                let last = first + shared - 1;
                match groups.iter_mut().find(|(span, _)| *span == (first, last)) {
                    Some((_, members)) => members.push(f),
                    None => groups.push(((first, last), vec![f])),
                }
                j = last + 1;
            }
        }
        let mut bounded: Vec<((usize, usize), TokenBucket)> = Vec::with_capacity(groups.len());
        for ((first, last), members) in groups {
            let tb = self.at_server(stretch[first], &members, None)?;
            bounded.push(((first, last), tb));
        }
        let mut rate = f64::INFINITY;
        for (j, &x) in stretch.iter().enumerate() {
            let cross: f64 =
                bounded.iter().filter(|((a, b), _)| (*a..=*b).contains(&j)).map(|(_, tb)| tb.1).sum();
            let left = self.service[x].0 - cross;
            if left <= 0.0 {
                return None;
            }
            rate = rate.min(left);
        }
        let latencies = |a: usize, b: usize| stretch[a..=b].iter().map(|&x| self.service[x].1).sum::<f64>();
        let paid: f64 = bounded.iter().map(|&((a, b), (burst, r))| burst + r * latencies(a, b)).sum();
        Some((rate, latencies(0, stretch.len() - 1) + paid / rate))
    }

    /// DNC `AggregatePmoo.computeArrivalBound`: `flows` (the foi left out) on the turn that ends
    /// `stretch`, their common stretch. Over one server, its left-over service under arbitrary
    /// multiplexing; over more, their PMOO left-over service.
    pub(super) fn pmoo_arrival_bound(
        &mut self,
        stretch: &[PortId],
        flows: &[FlowId],
        foi: Option<FlowId>,
    ) -> Option<TokenBucket> {
        let service = match stretch {
            [x] => {
                let cross: Vec<FlowId> = self.flows_at[*x]
                    .iter()
                    .copied()
                    .filter(|f| !flows.contains(f) && Some(*f) != foi)
                    .collect();
                let alpha = self.at_server(*x, &cross, foi)?;
                self.left_over(*x, alpha)?
            }
            _ => self.pmoo_service(stretch, flows, foi)?,
        };
        let alpha = self.at_server(stretch[0], flows, foi)?;
        deconvolve(alpha, service)
    }

    /// DNC `PmooAnalysis.performAnalysis` for flow `foi` on its path: its PMOO left-over
    /// service, and from it the delay (T + b/R) and backlog (b + r·T) of its token bucket.
    pub(super) fn pmoo(&mut self, foi: FlowId) -> Option<(f64, f64)> {
        let path = self.path[foi].to_vec();
        deviations(self.source_curve(foi), self.pmoo_service(&path, &[foi], Some(foi))?)
    }
}

#[cfg(test)]
mod tests {
    use super::super::aggregate_pboo::TurnBounding;
    use super::*;
    use crate::model::load_network;

    /// Three servers s0 → s1 → s2 (rate 10, latency 1); f0 (b 2, r 1) over s0, s1; f2 (b 4, r 2)
    /// over s0, s1, s2; f1 (b 1, r 1) at s2 alone. TFA at s2 needs f2's arrival bound on s1 → s2.
    ///
    /// * PMOO: f2's stretch is s0, s1 (from its source), crossed by f0 from s0 on (its source
    ///   bucket (2, 1)): R = min(10 − 1, 10 − 1) = 9, T = 2 + (2 + 1·2)/9 = 22/9, so f2 reaches s2
    ///   with 4 + 2·22/9 = 80/9.
    /// * PBOO over the concatenation: at s0 f0 leaves (9, (10·1 + 2)/9 = 4/3); at s1 f0 arrives
    ///   with 2 + 1·(10·1 + 4)/8 = 15/4 (f2 delays it at s0), leaving (9, (10 + 15/4)/9 = 55/36);
    ///   concatenated (9, 103/36), so f2 reaches s2 with 4 + 2·103/36 = 175/18 (> 80/9 = 160/18):
    ///   f0's burst is paid at each server, and grown by f2 on the way.
    ///
    /// TFA delay at s2 (two flows, arbitrary multiplexing, (b + R·T)/(R − r), r = 3):
    /// PMOO (1 + 80/9 + 10)/7 = 179/63, PBOO (1 + 175/18 + 10)/7 = 373/126; backlogs b + 3·1.
    #[test]
    fn pmoo_arrival_bounds_beat_pboo_on_a_tandem_by_hand() {
        let doc = r#"{"name": "t", "server_graph": {
            "servers": [{"name": "s0", "rate": 10, "latency": 1}, {"name": "s1", "rate": 10, "latency": 1},
                        {"name": "s2", "rate": 10, "latency": 1}],
            "flows": [{"name": "f0", "burst": 2, "rate": 1, "path": ["s0", "s1"]},
                      {"name": "f1", "burst": 1, "rate": 1, "path": ["s2"]},
                      {"name": "f2", "burst": 4, "rate": 2, "path": ["s0", "s1", "s2"]}]}}"#;
        let (net, diags) = load_network(doc);
        let net = net.unwrap_or_else(|| panic!("{:?}", diags.0));
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
        let mut pmoo = ServerGraph::blind(&net, TurnBounding::Pmoo).expect("a server graph");
        let (d, b) = pmoo.tfa(1);
        assert!(close(d, 179.0 / 63.0) && close(b, 1.0 + 80.0 / 9.0 + 3.0), "{d} {b}");
        let mut pboo = ServerGraph::blind(&net, TurnBounding::PbooConcatenation).expect("a server graph");
        let (d, b) = pboo.tfa(1);
        assert!(close(d, 373.0 / 126.0) && close(b, 1.0 + 175.0 / 18.0 + 3.0), "{d} {b}");
    }
}
