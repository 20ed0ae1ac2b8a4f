//! The model: reading and validating a description (within the limits), the JSON Schema, the
//! units parser, and the handle on a validated network. The handle's methods are all listed here
//! (PyO3 takes one method block per class) and each runs in the module of its domain.

use crate::error::{Error, Result};
use crate::{analysis, simulation, synthesis, to_json};
use pyo3::prelude::*;
use rtnetlab_core::model;

/// A validated network held by the engine.
#[pyclass(module = "rtnetlab._core", frozen)]
pub struct Network {
    pub inner: model::Network,
}

#[pymethods]
impl Network {
    /// The description as written back by the engine (defaults kept as given), JSON text.
    fn spec_json(&self) -> String {
        to_json(&self.inner.spec)
    }
    /// Counts and per-port / per-link loads, JSON text.
    fn info_json(&self) -> String {
        to_json(&model::info::info(&self.inner))
    }
    /// Runs a worst-case analysis (`method`: see `rtnetlab_core::analysis::METHODS`), JSON text.
    /// `lp`, when given, solves the linear programs of `fifo-lp`: called as
    /// `lp(costs, starts, columns, coefficients, upper)` (bytes: f64, i32, i32, f64, f64 arrays,
    /// native-endian; A in compressed rows), for max c·x, A·x ≤ b,
    /// x ≥ 0, it returns the optimum or raises ValueError with why there is none.
    /// `arrival_bounds`: on a server graph, how cross traffic is bounded (tightest, pboo, pmoo).
    #[pyo3(signature = (method, grouping=false, blind=false, lp=None, arrival_bounds="tightest", lp_effort="default"))]
    // One argument per keyword of the Python call.
    #[allow(clippy::too_many_arguments)]
    fn analyze_json(
        &self,
        py: Python<'_>,
        method: &str,
        grouping: bool,
        blind: bool,
        lp: Option<PyObject>,
        arrival_bounds: &str,
        lp_effort: &str,
    ) -> Result<String> {
        let asked = analysis::Asked { method, grouping, blind, arrival_bounds, lp_effort };
        analysis::report(py, &self.inner, &asked, lp).map(|report| to_json(&report))
    }
    /// The analysis as `analyze --json` prints it: the report's fields, then `warnings`, JSON
    /// text indented by two spaces (`indent`) or compact; serialised here rather than decoded
    /// and re-encoded in Python (a 5000-VL report is 6.8 MB).
    #[pyo3(signature = (method, grouping=false, blind=false, lp=None, warnings=Vec::new(), indent=true, arrival_bounds="tightest", lp_effort="default"))]
    #[allow(clippy::too_many_arguments)]
    fn analyze_document_json(
        &self,
        py: Python<'_>,
        method: &str,
        grouping: bool,
        blind: bool,
        lp: Option<PyObject>,
        warnings: Vec<String>,
        indent: bool,
        arrival_bounds: &str,
        lp_effort: &str,
    ) -> Result<String> {
        let asked = analysis::Asked { method, grouping, blind, arrival_bounds, lp_effort };
        analysis::document(py, &self.inner, &asked, lp, &warnings, indent)
    }
    /// The analysis as its terminal tables show it, JSON text: the first `limit` rows of each
    /// table (every row when None) most critical first, the counts of all rows, the deadline
    /// failures and the unbounded ports (`table_view`).
    #[pyo3(signature = (method, grouping=false, blind=false, lp=None, limit=None, arrival_bounds="tightest", lp_effort="default"))]
    #[allow(clippy::too_many_arguments)]
    fn analyze_table_json(
        &self,
        py: Python<'_>,
        method: &str,
        grouping: bool,
        blind: bool,
        lp: Option<PyObject>,
        limit: Option<usize>,
        arrival_bounds: &str,
        lp_effort: &str,
    ) -> Result<String> {
        let asked = analysis::Asked { method, grouping, blind, arrival_bounds, lp_effort };
        analysis::tables(py, &self.inner, &asked, lp, limit)
    }
    /// The same analysis, summed up as (rows, unbounded rows, largest finite delay in µs): what
    /// benchmarks time to compare the engine's computation alone with other implementations.
    #[pyo3(signature = (method, grouping=false, blind=false))]
    fn analyze_summary(&self, method: &str, grouping: bool, blind: bool) -> Result<(usize, usize, f64)> {
        analysis::summary(&self.inner, method, grouping, blind)
    }
    /// A simulation of this network; `config_json` is a `rtnetlab_core::sim::SimConfig`.
    fn simulation(&self, config_json: &str) -> Result<simulation::Simulation> {
        simulation::start(&self.inner, config_json)
    }
    /// Checks a worst-case scenario (JSON text) against this network: ModelError (a ValueError)
    /// with the place and the rule when it does not fit.
    fn check_scenario(&self, scenario_json: &str) -> Result<()> {
        simulation::check_scenario(&self.inner, scenario_json)
    }
    /// The worst-case search (`rtnetlab worst-case`): a budget in seconds or in simulations,
    /// JSON text; the GIL is released while it runs.
    #[pyo3(signature = (seconds, evaluations, seed, workers, flows, grid_limit=100_000))]
    #[allow(clippy::too_many_arguments)]
    fn worst_case_json(
        &self,
        py: Python<'_>,
        seconds: Option<f64>,
        evaluations: Option<u64>,
        seed: u64,
        workers: usize,
        flows: Vec<String>,
        grid_limit: u64,
    ) -> Result<String> {
        simulation::worst_case(py, &self.inner, (seconds, evaluations), seed, workers, flows, grid_limit)
    }
    /// Simulates the CAN buses (`config_json`: a `can::model::BusSimConfig`), JSON text.
    fn simulate_buses_json(&self, py: Python<'_>, config_json: &str) -> Result<String> {
        simulation::buses(py, &self.inner, config_json)
    }
    /// Where flow `flow`'s bounds come from, hop by hop, under the analysis asked for, JSON text.
    /// `lp` as in `analyze_json` (the bounds explained are then `analyze`'s own).
    #[pyo3(signature = (method, grouping, blind, flow, lp=None, arrival_bounds="tightest", lp_effort="default"))]
    #[allow(clippy::too_many_arguments)]
    fn explain_json(
        &self,
        py: Python<'_>,
        method: &str,
        grouping: bool,
        blind: bool,
        flow: &str,
        lp: Option<PyObject>,
        arrival_bounds: &str,
        lp_effort: &str,
    ) -> Result<String> {
        let asked = analysis::Asked { method, grouping, blind, arrival_bounds, lp_effort };
        analysis::explain(py, &self.inner, &asked, flow, lp)
    }
    /// Priority orders per processor and bus (`method`: opa or dm), JSON text.
    fn assign_priorities_json(&self, method: &str) -> Result<String> {
        synthesis::assign_priorities(&self.inner, method)
    }
    /// DOPA on the description's chains (`method`: opa or dm), JSON text.
    fn partition_json(&self, method: &str) -> Result<String> {
        synthesis::partition(&self.inner, method)
    }
    /// A what-if on this network (`doc_json`: its description, JSON text, whose validation
    /// gave `warnings`), analysed again in place by TFA after each edit; ModelError when TFA or
    /// an edit's validation cannot apply.
    fn what_if(&self, doc_json: &str, warnings: Vec<String>) -> Result<analysis::WhatIf> {
        analysis::what_if_of(&self.inner, doc_json, &warnings)
    }
    /// The resolved model (indices, routes, per-flow arrival parameters), JSON text.
    fn resolved_json(&self) -> String {
        to_json(&self.inner)
    }
}

/// Reads and validates a description given as JSON text.
/// Returns (network or None, diagnostics as JSON text).
#[pyfunction]
fn load(json: &str) -> (Option<Network>, String) {
    let (net, diags) = model::load_network(json);
    (net.map(|inner| Network { inner }), to_json(&diags))
}

fn limits_of(assignments: &[String]) -> Result<model::Limits> {
    Ok(model::Limits::from_assignments(assignments)?)
}

fn format_of(format: &str) -> Result<model::parse::Format> {
    model::parse::Format::from_extension(format)
        .ok_or_else(|| Error::Value(format!("unknown format '{format}'")))
}

/// Reads and validates a description's text (`format`: yaml or json) within the limits
/// `limits` (`name=value` settings over the defaults; LimitError if one is wrong); `source`
/// names the text in messages about it. Returns (network or None, diagnostics as JSON text).
/// The GIL is released meanwhile.
#[pyfunction]
fn load_text(
    py: Python<'_>,
    text: &str,
    format: &str,
    source: &str,
    limits: Vec<String>,
) -> Result<(Option<Network>, String)> {
    let (limits, format) = (limits_of(&limits)?, format_of(format)?);
    let (net, diags) = py.allow_threads(|| model::load_text(text, format, source, &limits));
    Ok((net.map(|inner| Network { inner }), to_json(&diags)))
}

/// Reads a description's text (`format`: yaml or json) into plain data within `limits`,
/// returned as JSON text; a text that cannot be read raises ValueError with one line
/// (`source:line:column: ...`), LimitError when it passes a limit.
#[pyfunction]
fn parse_text(py: Python<'_>, text: &str, format: &str, source: &str, limits: Vec<String>) -> Result<String> {
    let (limits, format) = (limits_of(&limits)?, format_of(format)?);
    py.allow_threads(|| model::parse::parse(text, format, &limits)).map(|v| to_json(&v)).map_err(|e| {
        let line = format!("{}: {}", e.place(source), e.message);
        if e.limit.is_some() {
            Error::Limit(line)
        } else {
            Error::Value(line)
        }
    })
}

/// The limits in force with `limits` applied, as JSON text (name to value); LimitError if a
/// setting is wrong.
#[pyfunction]
fn limits_json(limits: Vec<String>) -> Result<String> {
    Ok(to_json(&limits_of(&limits)?))
}

/// The refusal of a file of `size` bytes under `limits`, if it is too large.
#[pyfunction]
fn size_refusal(size: u64, limits: Vec<String>) -> Result<Option<String>> {
    let limits = limits_of(&limits)?;
    Ok((size > limits.size).then(|| model::parse::size_refusal(size, &limits)))
}

/// The JSON Schema of the description format, JSON text.
#[pyfunction]
fn schema_json() -> String {
    to_json(&model::json_schema())
}

/// Parses a quantity with its unit (`kind`: duration, size or rate) into seconds, bits or bits
/// per second: the engine's one units parser, for the front's options.
#[pyfunction]
fn parse_quantity(kind: &str, text: &str) -> Result<f64> {
    use rtnetlab_core::units::{DataRate, DataSize, Duration};
    let parsed = match kind {
        "duration" => Duration::parse(text).map(|d| d.secs()),
        "size" => DataSize::parse(text).map(|d| d.bits()),
        "rate" => DataRate::parse(text).map(|d| d.bps()),
        other => Err(format!("unknown quantity kind '{other}'")),
    };
    Ok(parsed?)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Network>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(load_text, m)?)?;
    m.add_function(wrap_pyfunction!(parse_text, m)?)?;
    m.add_function(wrap_pyfunction!(limits_json, m)?)?;
    m.add_function(wrap_pyfunction!(size_refusal, m)?)?;
    m.add_function(wrap_pyfunction!(schema_json, m)?)?;
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    Ok(())
}
