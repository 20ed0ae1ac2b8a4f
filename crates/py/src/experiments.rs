//! The seed studies the engine computes: DOPA's Fig. 6 (001E), the network sporadic server's
//! overhead (004), the AFDX configuration search (001D), lossless fabrics (003) and requests
//! across time partitions (001B).

use crate::error::{named_choice, Error, Result};
use crate::to_json;
use pyo3::prelude::*;

/// One panel of seed 001E's Fig. 6 (DOPA: acceptance of PARTITION with OPA and with DM):
/// `kind` density | processors | applications; `dm_key` local-window | end-to-end | absolute;
/// `local_test` release-jitter | paper. Returns rows (x, opa, dm). The GIL is released.
#[pyfunction]
#[pyo3(signature = (kind, points, sets_per_point, seed, dm_key="local-window", local_test="release-jitter", threads=1))]
#[allow(clippy::too_many_arguments)]
fn dopa_fig6(
    py: Python<'_>,
    kind: &str,
    points: usize,
    sets_per_point: usize,
    seed: u64,
    dm_key: &str,
    local_test: &str,
    threads: usize,
) -> Result<Vec<(f64, f64, f64)>> {
    use rtnetlab_core::experiments::dopa_fig6::Fig6Kind;
    use rtnetlab_core::experiments::dopa_fig6::{fig6_with, Fig6Config};
    use rtnetlab_core::fixed_priority::dopa::{DmKey, LocalTest};
    let kind: Fig6Kind = named_choice("kind", kind)?;
    let dm_key: DmKey = named_choice("dm_key", dm_key)?;
    let local_test: LocalTest = named_choice("local_test", local_test)?;
    let cfg = Fig6Config { dm_key, local_test, threads: threads.max(1), ..Fig6Config::default() };
    let rows = py.allow_threads(|| fig6_with(kind, points, sets_per_point, seed, &cfg));
    Ok(rows.iter().map(|r| (r.x, r.opa_acceptance, r.dm_acceptance)).collect())
}

/// Seed 004's Table 4: CPU overhead of the network sporadic server, JSON rows.
#[pyfunction]
fn nss_overhead_json(
    py: Python<'_>,
    mean_gaps_ms: Vec<i64>,
    budgets: Vec<u32>,
    packets: usize,
    seeds: u64,
) -> Result<String> {
    if mean_gaps_ms.iter().any(|&g| g <= 0) || budgets.contains(&0) || seeds == 0 || packets == 0 {
        return Err("mean gaps, budgets, packets and seeds must all be positive".into());
    }
    let gaps: Vec<i64> = mean_gaps_ms.iter().map(|g| g * 1_000_000).collect();
    let rows = py.allow_threads(|| {
        rtnetlab_core::experiments::nss_overhead::nss_overhead_table(&gaps, &budgets, packets, seeds)
    });
    Ok(to_json(&rows))
}

/// Seed 001D's Table II at one size: the branch and bound against the exhaustive search on
/// random instance `seed` of `vls` VLs with MTCs in [mtc_lo_ms, mtc_hi_ms], each search capped
/// at `cap_s` seconds (0: none). JSON (`experiments::afdx_table2::Comparison`); the GIL is
/// released.
#[pyfunction]
fn afdx_search_compare(
    py: Python<'_>,
    vls: usize,
    mtc_lo_ms: u64,
    mtc_hi_ms: u64,
    seed: u64,
    cap_s: f64,
) -> Result<String> {
    use rtnetlab_core::experiments::afdx_table2::compare;
    if vls == 0 || mtc_lo_ms == 0 || mtc_lo_ms > mtc_hi_ms || !cap_s.is_finite() || cap_s < 0.0 {
        return Err("vls >= 1, 1 <= mtc_lo_ms <= mtc_hi_ms and a finite cap_s >= 0 are required".into());
    }
    let cap = (cap_s > 0.0).then(|| std::time::Duration::from_secs_f64(cap_s));
    let c = py
        .allow_threads(|| compare(vls, (mtc_lo_ms, mtc_hi_ms), seed, cap))
        .map_err(|e| Error::Value(e.to_string()))?;
    Ok(to_json(&c))
}

/// Runs a lossless-fabric scenario (`rtnetlab experiment fabric`), JSON in, JSON out; the GIL
/// is released while it runs.
#[pyfunction]
fn fabric_run(py: Python<'_>, scenario_json: &str) -> Result<String> {
    use rtnetlab_core::fabric::{run_scenario, Scenario};
    let scenario = Scenario::from_json(scenario_json)?;
    let report = py.allow_threads(|| run_scenario(&scenario))?;
    Ok(to_json(&report))
}

/// Seed 001B's schedule (windows back to back from offset 0 in a major frame) and a request's
/// stages as `(partition index, work, transfer)`, all in ticks; a bad one is a `ValueError`.
fn partitioned(
    major_frame: i64,
    windows: &[(String, i64)],
    stages: Vec<(usize, i64, i64)>,
) -> Result<(
    rtnetlab_core::fixed_priority::partition_supply::PartitionSchedule,
    Vec<rtnetlab_core::fixed_priority::partition_supply::Stage>,
)> {
    use rtnetlab_core::fixed_priority::partition_supply::{PartitionSchedule, Stage};
    let schedule = PartitionSchedule::back_to_back(major_frame, windows).map_err(bad_partition)?;
    let stages =
        stages.into_iter().map(|(partition, work, transfer)| Stage { partition, work, transfer }).collect();
    Ok((schedule, stages))
}

fn bad_partition(e: rtnetlab_core::fixed_priority::InputError) -> Error {
    Error::Value(e.0)
}

/// Seed 001B: a request crossing time partitions (`partitioned`): its latency over every arrival
/// phase and each partition's worst service time of `probe_work`, as JSON.
#[pyfunction]
fn partition_latency_json(
    py: Python<'_>,
    major_frame: i64,
    windows: Vec<(String, i64)>,
    stages: Vec<(usize, i64, i64)>,
    probe_work: i64,
) -> Result<String> {
    let (schedule, stages) = partitioned(major_frame, &windows, stages)?;
    let chain = py
        .allow_threads(|| rtnetlab_core::fixed_priority::partition_supply::chain_latency(&schedule, &stages))
        .map_err(bad_partition)?;
    let service: Vec<Option<i64>> =
        (0..windows.len()).map(|p| schedule.service_time(p, probe_work)).collect();
    Ok(serde_json::json!({ "chain": chain, "service_time": service }).to_string())
}

/// Seed 001B's window analysis per arrival phase (`partitioned`): the latency of `stages` from
/// each phase 0, 1, ... of the major frame.
#[pyfunction]
fn partition_phase_latency(
    py: Python<'_>,
    major_frame: i64,
    windows: Vec<(String, i64)>,
    stages: Vec<(usize, i64, i64)>,
) -> Result<Vec<i64>> {
    let (schedule, stages) = partitioned(major_frame, &windows, stages)?;
    py.allow_threads(|| rtnetlab_core::fixed_priority::partition_supply::phase_latencies(&schedule, &stages))
        .map_err(bad_partition)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dopa_fig6, m)?)?;
    m.add_function(wrap_pyfunction!(nss_overhead_json, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_run, m)?)?;
    m.add_function(wrap_pyfunction!(afdx_search_compare, m)?)?;
    m.add_function(wrap_pyfunction!(partition_latency_json, m)?)?;
    m.add_function(wrap_pyfunction!(partition_phase_latency, m)?)?;
    Ok(())
}
