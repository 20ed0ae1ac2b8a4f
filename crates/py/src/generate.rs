//! Generated networks: synthetic AFDX networks sized for their load, small random networks and
//! random port schedulers for soundness campaigns, and the scheduler kinds the engine registers.

use crate::error::{Error, Result};
use crate::to_json;
use pyo3::prelude::*;

/// A synthetic AFDX network description (JSON text), sized for its load; see
/// `rtnetlab_core::generate`. ValueError when no link rate can carry it.
#[pyfunction]
#[pyo3(signature = (virtual_links, switches, seed, planes, end_systems=0))]
fn generate_afdx(
    virtual_links: usize,
    switches: usize,
    seed: u64,
    planes: usize,
    end_systems: usize,
) -> Result<String> {
    generate_afdx_sized(virtual_links, switches, seed, planes, end_systems).map(|(spec, _)| spec)
}

/// `generate_afdx`'s description and how it was sized (JSON text each).
#[pyfunction]
#[pyo3(signature = (virtual_links, switches, seed, planes, end_systems=0))]
fn generate_afdx_sized(
    virtual_links: usize,
    switches: usize,
    seed: u64,
    planes: usize,
    end_systems: usize,
) -> Result<(String, String)> {
    let params = rtnetlab_core::generate::AfdxParams {
        virtual_links,
        switches,
        seed,
        planes,
        end_systems,
        ..Default::default()
    };
    let (spec, sizing) = rtnetlab_core::generate::afdx_sized(&params)?;
    Ok((to_json(&spec), to_json(&sizing)))
}

/// A small random network for soundness campaigns (`rtnetlab_core::generate::random_small`),
/// JSON text: `schedulers` is `fifo`, `static_priority`, `mixed`, `any` or one of the
/// generator's sample configurations (`random_sample_schedulers`).
#[pyfunction]
fn random_network(seed: u64, schedulers: &str) -> Result<String> {
    use rtnetlab_core::generate::{random_small, sample_schedulers, RandomSchedulers};
    let kind = match schedulers {
        "fifo" => RandomSchedulers::Fifo,
        "static_priority" => RandomSchedulers::StaticPriority,
        "mixed" => RandomSchedulers::Mixed,
        "any" => RandomSchedulers::Any,
        name => {
            let Some((sample, _)) = sample_schedulers().into_iter().find(|(n, _)| n == name) else {
                return Err(Error::Choice(format!(
                    "unknown random scheduler set '{name}' (fifo, static_priority, mixed, any or a sample)"
                )));
            };
            // The generator names a sample by a static string; the samples are a fixed few.
            RandomSchedulers::Only(Box::leak(sample.into_boxed_str()))
        }
    };
    Ok(to_json(&random_small(seed, kind)))
}

/// The generator's sample scheduler configurations: (name, kind as the model names it).
#[pyfunction]
fn random_sample_schedulers() -> Vec<(String, &'static str)> {
    rtnetlab_core::generate::sample_schedulers()
}

/// A random configuration of the scheduler `kind` for a port whose classes c0, c1, ... have the
/// largest frames `lmax_bytes` (`rtnetlab_core::generate::random_port_scheduler`), drawn from
/// `seed`, JSON text.
/// `link_bps`: the slowest link the configuration goes on (default 1 Gbit/s).
#[pyfunction]
#[pyo3(signature = (kind, lmax_bytes, seed, link_bps=1e9))]
fn random_port_scheduler(kind: &str, lmax_bytes: Vec<u32>, seed: u64, link_bps: f64) -> Result<String> {
    use rand::SeedableRng;
    if !rtnetlab_core::schedulers::KINDS.contains(&kind) || lmax_bytes.is_empty() {
        return Err(Error::Choice(format!(
            "no random configuration for '{kind}' over {} classes (kinds: {})",
            lmax_bytes.len(),
            rtnetlab_core::schedulers::KINDS.join(", ")
        )));
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    if !(link_bps.is_finite() && link_bps > 0.0) {
        return Err(Error::Choice(format!("link_bps: a positive rate, got {link_bps}")));
    }
    Ok(to_json(&rtnetlab_core::generate::random_port_scheduler_at(kind, &lmax_bytes, link_bps, &mut rng)))
}

/// The scheduler kinds the engine registers, as the model names them.
#[pyfunction]
fn scheduler_kinds() -> Vec<&'static str> {
    rtnetlab_core::schedulers::KINDS.to_vec()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(generate_afdx, m)?)?;
    m.add_function(wrap_pyfunction!(generate_afdx_sized, m)?)?;
    m.add_function(wrap_pyfunction!(random_network, m)?)?;
    m.add_function(wrap_pyfunction!(random_sample_schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(random_port_scheduler, m)?)?;
    m.add_function(wrap_pyfunction!(scheduler_kinds, m)?)?;
    Ok(())
}
