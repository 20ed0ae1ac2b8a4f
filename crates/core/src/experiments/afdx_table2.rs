//! Seed 001D's Table II and Fig. 6 at growing sizes: the branch and bound against the exhaustive
//! search on random instances of the paper's generator, with the nodes each visits, its time
//! and its answer.
//!
//! An instance is Sec. V's: `vls` VLs of two message flows each, payload uniform in 20..=80 B,
//! integer MTC (ms) uniform in one interval, one switch port shared by every VL. The paper has 5
//! VLs on 6 Mbit/s; for other sizes the port's rate grows with the VLs (1.2 Mbit/s per VL), so
//! that each VL keeps the paper's share of bandwidth and of the 500 µs jitter budget (Eq. 3,
//! in µs) and the feasible fraction stays comparable across sizes.
//!
//! Four searches per instance, each with the same time cap:
//!
//! * `bb_fig5`: Fig. 5's DFS_BandB (corrected, BAG order, prefix pruning), and `bf_first`, the
//!   exhaustive search that stops at its first feasible leaf in the same order: both return the
//!   same configuration;
//! * `bb_min`: the least-bandwidth configuration by branch and bound, and `bf_all`, the
//!   exhaustive search of every combination ("tests all possible cases"): both find the same
//!   least bandwidth.

use crate::synthesis::afdx_bag_mtu::{
    candidate_pairs, find_feasible_bag_mtu, search_with_stats, BagMtu, ConfigError, Goal, MessageFlow,
    Outcome, Problem, Search, SearchStats, Solver, ARINC_664_JITTER,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::time::Duration;

/// The port's rate per VL: the paper's 6 Mbit/s for 5 VLs.
pub const RATE_PER_VL_BPS: u64 = 1_200_000;
/// Message flows per VL (Sec. V).
pub const FLOWS_PER_VL: usize = 2;
/// Payloads, bytes (Sec. V).
pub const PAYLOAD_BYTES: std::ops::RangeInclusive<u32> = 20..=80;
/// Table II's MTC intervals, ms.
pub const TABLE2_MTC_MS: [(u64, u64); 5] = [(10, 60), (60, 110), (110, 160), (160, 210), (210, 260)];
/// Table II's feasible sets, %.
pub const TABLE2_FEASIBLE_PERCENT: [f64; 5] = [3.4, 23.6, 40.1, 54.0, 62.7];

/// The message flows of one random instance: ChaCha8 from `seed`, per VL and flow the payload
/// then the MTC.
pub fn random_flows(vls: usize, mtc_ms: (u64, u64), seed: u64) -> Vec<Vec<MessageFlow>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..vls)
        .map(|_| {
            (0..FLOWS_PER_VL)
                .map(|_| MessageFlow::ms(rng.gen_range(PAYLOAD_BYTES), rng.gen_range(mtc_ms.0..=mtc_ms.1)))
                .collect()
        })
        .collect()
}

/// The instance: each VL's candidate pairs (Fig. 4) on one port of `vls` × 1.2 Mbit/s with the
/// ARINC 664 jitter budget.
pub fn instance(vls: usize, mtc_ms: (u64, u64), seed: u64) -> Result<Problem, ConfigError> {
    let mtus = random_flows(vls, mtc_ms, seed)
        .iter()
        .map(|flows| find_feasible_bag_mtu(flows))
        .collect::<Result<Vec<_>, _>>()?;
    Problem::single_port(mtus, RATE_PER_VL_BPS * vls as u64, Some(ARINC_664_JITTER))
}

/// One search's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchRun {
    /// None when the search gave up at the time cap.
    pub feasible: Option<bool>,
    /// Reserved bandwidth of the configuration found, bit/s (None: none found or gave up).
    pub reserved_bps: Option<f64>,
    pub choice: Option<Vec<BagMtu>>,
    #[serde(flatten)]
    pub stats: SearchStats,
}

impl SearchRun {
    fn new((outcome, stats): (Option<Outcome>, SearchStats)) -> Self {
        let (feasible, reserved_bps, choice) = match outcome {
            None => (None, None, None),
            Some(Err(_)) => (Some(false), None, None),
            Some(Ok(c)) => (Some(true), Some(c.reserved_bps), Some(c.choice)),
        };
        SearchRun { feasible, reserved_bps, choice, stats }
    }
}

/// The four searches on one instance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub vls: usize,
    pub mtc_ms: (u64, u64),
    pub seed: u64,
    pub rate_bps: u64,
    /// Nodes of the whole search tree, Σ_d Π_{i<d} (candidates of VL i): what `bf_all` visits.
    pub tree_nodes: f64,
    pub bb_fig5: SearchRun,
    pub bf_first: SearchRun,
    pub bb_min: SearchRun,
    pub bf_all: SearchRun,
}

/// Nodes of the whole search tree of `problem`.
pub fn tree_nodes(problem: &Problem) -> f64 {
    let (mut total, mut level) = (1.0, 1.0);
    for mtus in problem.vls() {
        level *= candidate_pairs(mtus).count() as f64;
        total += level;
    }
    total
}

/// Runs the four searches on instance (`vls`, `mtc_ms`, `seed`), each capped at `time_cap`.
pub fn compare(
    vls: usize,
    mtc_ms: (u64, u64),
    seed: u64,
    time_cap: Option<Duration>,
) -> Result<Comparison, ConfigError> {
    let problem = instance(vls, mtc_ms, seed)?;
    let run = |solver| SearchRun::new(search_with_stats(&problem, solver, time_cap));
    Ok(Comparison {
        vls,
        mtc_ms,
        seed,
        rate_bps: RATE_PER_VL_BPS * vls as u64,
        tree_nodes: tree_nodes(&problem),
        bb_fig5: run(Solver::BranchAndBound(Search::FIG5)),
        bf_first: run(Solver::BruteForce(Goal::FirstFeasible)),
        bb_min: run(Solver::MinBandwidth),
        bf_all: run(Solver::BruteForce(Goal::MinBandwidth)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthesis::afdx_bag_mtu::{
        branch_and_bound, brute_force, min_bandwidth, MtuPerBag, BAG_COUNT,
    };

    #[test]
    fn searches_agree_and_branch_and_bound_visits_no_more_nodes() {
        let mut feasible = [0usize; 2];
        for (k, &mtc) in TABLE2_MTC_MS.iter().enumerate() {
            for seed in 0..40 {
                let vls = 2 + (seed as usize % 4); // 2..=5 VLs: the exhaustive search is instant
                let c = compare(vls, mtc, 1000 * k as u64 + seed, None).unwrap();
                let problem = instance(vls, mtc, 1000 * k as u64 + seed).unwrap();
                for r in [&c.bb_fig5, &c.bf_first, &c.bb_min, &c.bf_all] {
                    assert!(!r.stats.gave_up);
                }
                // The counted searches return what the solvers themselves return.
                let fig5 = branch_and_bound(&problem, Search::FIG5, None).ok().map(|c| c.choice);
                assert_eq!(c.bb_fig5.choice, fig5);
                let first = brute_force(&problem, Goal::FirstFeasible, None).ok().map(|c| c.choice);
                assert_eq!(c.bf_first.choice, first);
                let least = min_bandwidth(&problem, None).ok().map(|c| c.reserved_bps);
                assert_eq!(c.bb_min.reserved_bps, least);
                let all = brute_force(&problem, Goal::MinBandwidth, None).ok().map(|c| c.reserved_bps);
                assert_eq!(c.bf_all.reserved_bps, all);
                // Same verdicts, same first configuration, same least bandwidth.
                assert_eq!(c.bb_fig5.choice, c.bf_first.choice);
                assert_eq!(c.bb_min.reserved_bps, c.bf_all.reserved_bps);
                assert_eq!(c.bb_fig5.feasible, c.bf_all.feasible);
                // Pruning only removes nodes from the same tree.
                assert!(c.bb_fig5.stats.nodes <= c.bf_first.stats.nodes);
                assert!(c.bb_min.stats.nodes <= c.bf_all.stats.nodes);
                // Trying every combination visits the whole tree.
                assert_eq!(c.bf_all.stats.nodes as f64, c.tree_nodes);
                feasible[usize::from(c.bf_all.feasible.unwrap())] += 1;
            }
        }
        // Both verdicts occur, so the agreement is not vacuous.
        assert!(feasible[0] > 0 && feasible[1] > 0, "{feasible:?}");
    }

    #[test]
    fn tree_nodes_by_hand() {
        // Two VLs with 3 and 2 candidate pairs: the root, 3 prefixes of one VL, 3 × 2 leaves = 10.
        let mut a: MtuPerBag = [None; BAG_COUNT];
        let mut b: MtuPerBag = [None; BAG_COUNT];
        a[0] = Some(100);
        a[1] = Some(50);
        a[2] = Some(25);
        b[0] = Some(60);
        b[3] = Some(10);
        let problem = Problem::single_port(vec![a, b], 100_000_000, None).unwrap();
        assert_eq!(tree_nodes(&problem), 10.0);
        let (outcome, stats) = search_with_stats(&problem, Solver::BruteForce(Goal::MinBandwidth), None);
        assert!(outcome.unwrap().is_ok());
        assert_eq!(stats.nodes, 10);
        // The first leaf in BAG order (100 @ 1 ms, 60 @ 1 ms) is feasible on 100 Mbit/s: root,
        // one prefix, one leaf.
        let (_, stats) = search_with_stats(&problem, Solver::BruteForce(Goal::FirstFeasible), None);
        assert_eq!(stats.nodes, 3);
    }

    #[test]
    fn a_search_past_its_time_cap_gives_up_without_an_answer() {
        // 9 VLs at 210..260 ms have 7-8 candidates each: some 10^8 leaves, far more than the
        // 4096 nodes after which a zero cap is noticed.
        let problem = instance(9, (210, 260), 7).unwrap();
        assert!(tree_nodes(&problem) > 1e7);
        let (outcome, stats) =
            search_with_stats(&problem, Solver::BruteForce(Goal::MinBandwidth), Some(Duration::ZERO));
        assert!(outcome.is_none() && stats.gave_up);
        assert_eq!(stats.nodes, 4096);
        let c = compare(9, (210, 260), 7, Some(Duration::ZERO)).unwrap();
        assert_eq!((c.bf_all.feasible, c.bf_all.reserved_bps), (None, None));
        // Without a cap the branch and bound answers at once on the same instance.
        let (outcome, stats) = search_with_stats(&problem, Solver::MinBandwidth, None);
        assert!(outcome.is_some() && !stats.gave_up);
    }

    #[test]
    fn the_paper_size_is_the_paper_port() {
        assert_eq!(RATE_PER_VL_BPS * 5, 6_000_000);
        let flows = random_flows(5, (10, 60), 3);
        assert_eq!(flows.len(), 5);
        for f in flows.iter().flatten() {
            assert!(PAYLOAD_BYTES.contains(&f.payload_bytes));
            assert!((10_000..=60_000).contains(&f.mtc_us) && f.mtc_us % 1000 == 0);
        }
    }
}
