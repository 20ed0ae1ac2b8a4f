//! Thin Python bindings: JSON text in, JSON text out, plus one handle on a validated network so
//! that it is parsed and checked once per command. The model itself is defined only in the core
//! crate; Python sees it through JSON and the generated JSON Schema.

// No bare `unwrap` outside tests (clippy.toml): `expect` with the reason, or an error.
#![deny(clippy::unwrap_used)]
// pyo3 0.22's #[pymethods] expansion converts PyResult errors into themselves.
#![allow(clippy::useless_conversion)]

use pyo3::prelude::*;
use rtnetlab_core::model;

mod table_view;

mod errors {
    // PyO3 0.22's macro checks a `gil-refs` feature this crate does not declare.
    #![allow(unexpected_cfgs)]
    pyo3::create_exception!(
        _core,
        ChoiceError,
        pyo3::exceptions::PyValueError,
        "A name given for an option is none of its choices; the message lists them (the caller names the option)."
    );
}
use errors::ChoiceError;

/// A name the user chose, read by the engine ([`rtnetlab_core::choice::parse`]).
fn choice<T: serde::de::DeserializeOwned>(text: &str) -> PyResult<T> {
    rtnetlab_core::choice::parse(text).map_err(ChoiceError::new_err)
}

/// [`choice`] for one of several arguments: the error carries (argument name, reason), so that
/// the caller can name the option that was wrong.
fn named_choice<T: serde::de::DeserializeOwned>(argument: &str, text: &str) -> PyResult<T> {
    rtnetlab_core::choice::parse(text).map_err(|e| ChoiceError::new_err((argument.to_string(), e)))
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("engine results serialise to JSON")
}

/// A validated network held by the engine.
#[pyclass(module = "rtnetlab._core", frozen)]
struct Network {
    inner: model::Network,
}

impl Network {
    /// Runs an analysis; `lp` as in `analyze_json`.
    fn run_analysis(
        &self,
        py: Python<'_>,
        method: &str,
        grouping: bool,
        blind: bool,
        options: (&str, &str),
        lp: Option<PyObject>,
    ) -> PyResult<rtnetlab_core::analysis::results::AnalysisReport> {
        let req = request(method, grouping, blind, options)?;
        with_solver(py, lp, |solver| rtnetlab_core::analysis::run_with(&self.inner, &req, solver))
    }
}

/// The analysis asked for, with its (arrival bounding, fifo-lp effort); an unknown one is a
/// ValueError naming the choices.
fn request(
    method: &str,
    grouping: bool,
    blind: bool,
    (arrival_bounds, lp_effort): (&str, &str),
) -> PyResult<rtnetlab_core::analysis::Request> {
    use pyo3::exceptions::PyValueError;
    let arrival_bounds = rtnetlab_core::analysis::network_bounds::ArrivalBounds::parse(arrival_bounds)
        .map_err(PyValueError::new_err)?;
    let lp_effort =
        rtnetlab_core::analysis::fifo_lp::Effort::parse(lp_effort).map_err(PyValueError::new_err)?;
    Ok(rtnetlab_core::analysis::Request {
        method: method.parse().map_err(PyValueError::new_err)?,
        grouping,
        blind,
        arrival_bounds,
        lp_effort,
    })
}

/// Calls `run` with `lp` (a Python callable, as in `analyze_json`) as fifo-lp's solver, or none.
/// The analysis runs without the interpreter lock (taken back only for each program `lp`
/// solves), so a Python thread can compute bounds while another runs a simulation.
fn with_solver<T: Send>(
    py: Python<'_>,
    lp: Option<PyObject>,
    run: impl FnOnce(Option<rtnetlab_core::analysis::fifo_lp::Solver>) -> Result<T, String> + Send,
) -> PyResult<T> {
    py.allow_threads(|| {
        let solve = |p: &rtnetlab_core::analysis::fifo_lp::Program| -> Result<f64, String> {
            let lp = lp.as_ref().expect("called only with a solver");
            // The program as compressed rows in native-endian bytes (costs f64, row starts and
            // columns i32, coefficients and bounds f64), which the solver reads without a loop:
            // as Python lists of tuples, their conversion took a third of fifo-lp's time.
            let nz: usize = p.rows.iter().map(|(terms, _)| terms.len()).sum();
            let (mut starts, mut columns, mut values, mut upper) = (
                Vec::with_capacity(p.rows.len() * 4),
                Vec::with_capacity(nz * 4),
                Vec::with_capacity(nz * 8),
                Vec::with_capacity(p.rows.len() * 8),
            );
            let mut at = 0i32;
            for (terms, b) in &p.rows {
                starts.extend_from_slice(&at.to_ne_bytes());
                at += terms.len() as i32;
                for &(c, a) in terms {
                    columns.extend_from_slice(&(c as i32).to_ne_bytes());
                    values.extend_from_slice(&a.to_ne_bytes());
                }
                upper.extend_from_slice(&b.to_ne_bytes());
            }
            let costs: Vec<u8> = p.objective.iter().flat_map(|c| c.to_ne_bytes()).collect();
            Python::with_gil(|py| {
                let bytes = |b: &[u8]| pyo3::types::PyBytes::new_bound(py, b).unbind();
                let args = (bytes(&costs), bytes(&starts), bytes(&columns), bytes(&values), bytes(&upper));
                lp.call1(py, args)
                    .and_then(|v| v.extract::<f64>(py))
                    .map_err(|e| e.value_bound(py).to_string())
            })
        };
        let solver: Option<rtnetlab_core::analysis::fifo_lp::Solver> =
            if lp.is_some() { Some(&solve) } else { None };
        run(solver)
    })
    .map_err(pyo3::exceptions::PyValueError::new_err)
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
    ) -> PyResult<String> {
        self.run_analysis(py, method, grouping, blind, (arrival_bounds, lp_effort), lp)
            .map(|report| to_json(&report))
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
    ) -> PyResult<String> {
        let report = self.run_analysis(py, method, grouping, blind, (arrival_bounds, lp_effort), lp)?;
        let doc = table_view::Document { report: &report, warnings: &warnings };
        let text = if indent { serde_json::to_string_pretty(&doc) } else { serde_json::to_string(&doc) };
        Ok(text.expect("engine results serialise to JSON"))
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
    ) -> PyResult<String> {
        let report = self.run_analysis(py, method, grouping, blind, (arrival_bounds, lp_effort), lp)?;
        Ok(table_view::table_json(&report, limit))
    }
    /// The same analysis, summed up as (rows, unbounded rows, largest finite delay in µs): what
    /// benchmarks time to compare the engine's computation alone with other implementations.
    #[pyo3(signature = (method, grouping=false, blind=false))]
    fn analyze_summary(&self, method: &str, grouping: bool, blind: bool) -> PyResult<(usize, usize, f64)> {
        let req = rtnetlab_core::analysis::Request {
            method: method.parse().map_err(pyo3::exceptions::PyValueError::new_err)?,
            grouping,
            blind,
            ..Default::default()
        };
        let report = rtnetlab_core::analysis::run(&self.inner, &req)
            .map_err(pyo3::exceptions::PyValueError::new_err)?;
        let unbounded = report.flows.iter().filter(|f| !f.delay_us.is_finite()).count();
        let largest = report.flows.iter().map(|f| f.delay_us).filter(|d| d.is_finite()).fold(0.0, f64::max);
        Ok((report.flows.len(), unbounded, largest))
    }
    /// A simulation of this network; `config_json` is a `rtnetlab_core::sim::SimConfig`.
    fn simulation(&self, config_json: &str) -> PyResult<Simulation> {
        let config: rtnetlab_core::sim::SimConfig = serde_json::from_str(config_json)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("simulation settings: {e}")))?;
        let duration_ns = config.duration_ns;
        let inner = rtnetlab_core::sim::Simulator::new(&self.inner, config)
            .map_err(pyo3::exceptions::PyValueError::new_err)?;
        Ok(Simulation { inner, duration_ns })
    }
    /// Checks a worst-case scenario (JSON text) against this network: ValueError with the place
    /// and the rule when it does not fit.
    fn check_scenario(&self, scenario_json: &str) -> PyResult<()> {
        let bad = pyo3::exceptions::PyValueError::new_err;
        let de = &mut serde_json::Deserializer::from_str(scenario_json);
        let scenario: rtnetlab_core::sim::Scenario = serde_path_to_error::deserialize(de)
            .map_err(|e| bad(format!("scenario.{}: {}", e.path(), e.inner())))?;
        rtnetlab_core::sim::ScenarioTables::resolve(&self.inner, &scenario).map(|_| ()).map_err(bad)
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
    ) -> PyResult<String> {
        use rtnetlab_core::worst_case::{run, Budget, Settings};
        let budget = match (seconds, evaluations) {
            (_, Some(n)) => Budget::Evaluations(n),
            (Some(s), None) => Budget::Time(std::time::Duration::from_secs_f64(s)),
            (None, None) => Budget::Evaluations(Settings::default().budget_evaluations()),
        };
        let settings = Settings { budget, seed, workers, flows, grid_limit };
        let net = &self.inner;
        py.allow_threads(|| run(net, &settings))
            .map(|r| to_json(&r))
            .map_err(pyo3::exceptions::PyValueError::new_err)
    }
    /// Simulates the CAN buses (`config_json`: a `can::model::BusSimConfig`), JSON text.
    fn simulate_buses_json(&self, py: Python<'_>, config_json: &str) -> PyResult<String> {
        let config: rtnetlab_core::can::model::BusSimConfig = serde_json::from_str(config_json)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("simulation settings: {e}")))?;
        let sys = &self.inner.fixed_priority;
        py.allow_threads(|| rtnetlab_core::can::model::simulate(sys, &config))
            .map(|r| to_json(&r))
            .map_err(pyo3::exceptions::PyValueError::new_err)
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
    ) -> PyResult<String> {
        let req = request(method, grouping, blind, (arrival_bounds, lp_effort))?;
        with_solver(py, lp, |solver| rtnetlab_core::analysis::explain_with(&self.inner, &req, flow, solver))
            .map(|e| to_json(&e))
    }
    /// Priority orders per processor and bus (`method`: opa or dm), JSON text.
    fn assign_priorities_json(&self, method: &str) -> PyResult<String> {
        use rtnetlab_core::synthesis::priorities::{assign, Method};
        let method: Method = choice(method)?;
        Ok(to_json(&assign(&self.inner.fixed_priority, method)))
    }
    /// DOPA on the description's chains (`method`: opa or dm), JSON text.
    fn partition_json(&self, method: &str) -> PyResult<String> {
        use rtnetlab_core::fixed_priority::dopa::{DmKey, PriorityPolicy};
        use rtnetlab_core::synthesis::priorities::Method;
        let policy = match choice::<Method>(method)? {
            Method::Opa => PriorityPolicy::Opa,
            Method::Dm => PriorityPolicy::DeadlineMonotonic(DmKey::LocalWindow),
        };
        rtnetlab_core::synthesis::partition::partition(&self.inner.fixed_priority, policy)
            .map(|r| to_json(&r))
            .map_err(pyo3::exceptions::PyValueError::new_err)
    }
    /// The resolved model (indices, routes, per-flow arrival parameters), JSON text.
    fn resolved_json(&self) -> String {
        to_json(&self.inner)
    }
}

/// A running simulation: advanced slice by slice so the front can show progress and stop early.
#[pyclass(module = "rtnetlab._core")]
struct Simulation {
    inner: rtnetlab_core::sim::Simulator,
    duration_ns: i64,
}

#[pymethods]
impl Simulation {
    /// Processes events up to `t_ns` (the GIL is released meanwhile).
    fn run_until(&mut self, py: Python<'_>, t_ns: i64) {
        let sim = &mut self.inner;
        py.allow_threads(move || sim.run_until(t_ns));
    }
    #[getter]
    fn now_ns(&self) -> i64 {
        self.inner.now_ns()
    }
    #[getter]
    fn duration_ns(&self) -> i64 {
        self.duration_ns
    }
    /// The memory the run was estimated to need before it started: (bytes at the end, bytes
    /// added per simulated second, what grows most).
    #[getter]
    fn memory_estimate(&self) -> (f64, f64, String) {
        let e = self.inner.memory_estimate();
        (e.bytes, e.growth_per_s, e.why.clone())
    }
    /// Ends the run (frames held by deduplication are delivered at their SkewMax expiry).
    fn finish(&mut self) {
        self.inner.finish();
    }
    /// Writes the recorded frames as a pcapng trace (whole or not at all); returns how many were
    /// written. Python's signal handlers run while it writes: a Ctrl-C (KeyboardInterrupt) or
    /// any exception they raise stops the writing, leaves no file behind and is raised as is.
    fn write_pcapng(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<u64> {
        let mut raised: Option<PyErr> = None;
        let written = self.inner.write_pcapng(&path, || {
            py.check_signals().map_err(|e| {
                raised = Some(e);
                std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted")
            })
        });
        if let Some(e) = raised {
            return Err(e);
        }
        written.map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())))
    }
    /// Results so far, JSON text.
    fn report_json(&self) -> String {
        to_json(&self.inner.report())
    }
}

/// Reads and validates a description given as JSON text.
/// Returns (network or None, diagnostics as JSON text).
#[pyfunction]
fn load(json: &str) -> (Option<Network>, String) {
    let (net, diags) = model::load_network(json);
    (net.map(|inner| Network { inner }), to_json(&diags))
}

fn limits_of(assignments: &[String]) -> PyResult<model::Limits> {
    model::Limits::from_assignments(assignments).map_err(pyo3::exceptions::PyValueError::new_err)
}

fn format_of(format: &str) -> PyResult<model::parse::Format> {
    model::parse::Format::from_extension(format)
        .ok_or_else(|| pyo3::exceptions::PyValueError::new_err(format!("unknown format '{format}'")))
}

/// Reads and validates a description's text (`format`: yaml or json) within the limits
/// `limits` (`name=value` settings over the defaults; ValueError if one is wrong); `source`
/// names the text in messages about it. Returns (network or None, diagnostics as JSON text).
/// The GIL is released meanwhile.
#[pyfunction]
fn load_text(
    py: Python<'_>,
    text: &str,
    format: &str,
    source: &str,
    limits: Vec<String>,
) -> PyResult<(Option<Network>, String)> {
    let (limits, format) = (limits_of(&limits)?, format_of(format)?);
    let (net, diags) = py.allow_threads(|| model::load_text(text, format, source, &limits));
    Ok((net.map(|inner| Network { inner }), to_json(&diags)))
}

/// Reads a description's text (`format`: yaml or json) into plain data within `limits`,
/// returned as JSON text; a text that cannot be read raises ValueError with one line
/// (`source:line:column: ...`).
#[pyfunction]
fn parse_text(
    py: Python<'_>,
    text: &str,
    format: &str,
    source: &str,
    limits: Vec<String>,
) -> PyResult<String> {
    let (limits, format) = (limits_of(&limits)?, format_of(format)?);
    py.allow_threads(|| model::parse::parse(text, format, &limits))
        .map(|v| to_json(&v))
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("{}: {}", e.place(source), e.message)))
}

/// The limits in force with `limits` applied, as JSON text (name to value); ValueError if a
/// setting is wrong.
#[pyfunction]
fn limits_json(limits: Vec<String>) -> PyResult<String> {
    Ok(to_json(&limits_of(&limits)?))
}

/// The refusal of a file of `size` bytes under `limits`, if it is too large.
#[pyfunction]
fn size_refusal(size: u64, limits: Vec<String>) -> PyResult<Option<String>> {
    let limits = limits_of(&limits)?;
    Ok((size > limits.size).then(|| model::parse::size_refusal(size, &limits)))
}

/// The JSON Schema of the description format, JSON text.
#[pyfunction]
fn schema_json() -> String {
    to_json(&model::json_schema())
}

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
) -> PyResult<String> {
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
) -> PyResult<(String, String)> {
    let params = rtnetlab_core::generate::AfdxParams {
        virtual_links,
        switches,
        seed,
        planes,
        end_systems,
        ..Default::default()
    };
    let (spec, sizing) =
        rtnetlab_core::generate::afdx_sized(&params).map_err(pyo3::exceptions::PyValueError::new_err)?;
    Ok((to_json(&spec), to_json(&sizing)))
}

/// Parses a quantity with its unit (`kind`: duration, size or rate) into seconds, bits or bits
/// per second: the engine's one units parser, for the front's options.
#[pyfunction]
fn parse_quantity(kind: &str, text: &str) -> PyResult<f64> {
    use rtnetlab_core::units::{DataRate, DataSize, Duration};
    let parsed = match kind {
        "duration" => Duration::parse(text).map(|d| d.secs()),
        "size" => DataSize::parse(text).map(|d| d.bits()),
        "rate" => DataRate::parse(text).map(|d| d.bps()),
        other => Err(format!("unknown quantity kind '{other}'")),
    };
    parsed.map_err(pyo3::exceptions::PyValueError::new_err)
}

/// Chooses BAG and MTU of the VLs that list their messages (`rtnetlab configure afdx`).
/// `doc_json`: the description; `request_json`: a `synthesis::afdx_network::Request`.
/// Returns the report JSON (feasible or not, the chosen values); a description that does not
/// validate raises ValueError with one line per problem.
#[pyfunction]
fn configure_afdx(doc_json: &str, request_json: &str) -> PyResult<String> {
    use rtnetlab_core::synthesis::afdx_network;
    let bad = |e: String| pyo3::exceptions::PyValueError::new_err(e);
    let doc: serde_json::Value = serde_json::from_str(doc_json).map_err(|e| bad(format!("(file): {e}")))?;
    let req: afdx_network::Request =
        serde_json::from_str(request_json).map_err(|e| bad(format!("configuration settings: {e}")))?;
    let report = afdx_network::configure(doc, &req).map_err(|lines| bad(lines.join("\n")))?;
    Ok(to_json(&report))
}

/// Gate control lists, stream offsets and `auto` idle slopes (`rtnetlab configure tsn`).
/// `doc_json`: the description; `request_json`: a `synthesis::tsn::Request`; `milp`, when given,
/// solves the offsets' mixed-integer program: called as `milp(program)` with the program as JSON
/// text (`synthesis::tsn::schedule::Milp`), it returns (status, x or None, objective or None,
/// bound or None). Returns the report JSON; a description that does not validate raises
/// ValueError with one line per problem. The GIL is released while the engine works.
#[pyfunction]
#[pyo3(signature = (doc_json, request_json, milp=None))]
fn configure_tsn(
    py: Python<'_>,
    doc_json: &str,
    request_json: &str,
    milp: Option<PyObject>,
) -> PyResult<String> {
    use rtnetlab_core::synthesis::tsn::{self, schedule};
    let bad = |e: String| pyo3::exceptions::PyValueError::new_err(e);
    let doc: serde_json::Value = serde_json::from_str(doc_json).map_err(|e| bad(format!("(file): {e}")))?;
    let req: tsn::Request =
        serde_json::from_str(request_json).map_err(|e| bad(format!("configuration settings: {e}")))?;
    let report = py.allow_threads(|| {
        let mut solve = |m: &schedule::Milp| -> Result<schedule::MilpAnswer, String> {
            let f = milp.as_ref().expect("called only with a solver");
            let text = to_json(m);
            Python::with_gil(|py| {
                let answer = f.call1(py, (text,)).map_err(|e| e.value_bound(py).to_string())?;
                let (status, x, objective, bound): (String, Option<Vec<f64>>, Option<f64>, Option<f64>) =
                    answer.extract(py).map_err(|e| e.value_bound(py).to_string())?;
                Ok(schedule::MilpAnswer { status, x, objective, bound })
            })
        };
        let solver: Option<schedule::MilpSolver> = if milp.is_some() { Some(&mut solve) } else { None };
        tsn::configure(doc, &req, solver)
    });
    report.map(|r| to_json(&r)).map_err(|lines| bad(lines.join("\n")))
}

/// Decouples latency from bandwidth in a Deficit Table (`rtnetlab configure dtable`):
/// requirements JSON in, report JSON out (tables 4 and 5 and scheduler configurations), or
/// `{"feasible": false, "reason"}` when no table meets the requirements.
#[pyfunction]
fn configure_dtable(requirements_json: &str) -> PyResult<String> {
    let doc: serde_json::Value = serde_json::from_str(requirements_json)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("(file): {e}")))?;
    use rtnetlab_core::synthesis::dtable::{configure, ConfigureError};
    // No table meets the requirements: a verdict, reported as `{"feasible": false, "reason"}`
    // (the report of a configuration has no `feasible` key); a wrong document: ValueError.
    match configure(doc) {
        Ok(r) => Ok(to_json(&r)),
        Err(ConfigureError::Infeasible(e)) => {
            Ok(to_json(&serde_json::json!({"feasible": false, "reason": e.to_string()})))
        }
        Err(e @ ConfigureError::Input(_)) => Err(pyo3::exceptions::PyValueError::new_err(e.to_string())),
    }
}

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
) -> PyResult<Vec<(f64, f64, f64)>> {
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
) -> PyResult<String> {
    if mean_gaps_ms.iter().any(|&g| g <= 0) || budgets.contains(&0) || seeds == 0 || packets == 0 {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "mean gaps, budgets, packets and seeds must all be positive",
        ));
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
) -> PyResult<String> {
    use rtnetlab_core::experiments::afdx_table2::compare;
    let bad = |m: String| pyo3::exceptions::PyValueError::new_err(m);
    if vls == 0 || mtc_lo_ms == 0 || mtc_lo_ms > mtc_hi_ms || !cap_s.is_finite() || cap_s < 0.0 {
        return Err(bad("vls >= 1, 1 <= mtc_lo_ms <= mtc_hi_ms and a finite cap_s >= 0 are required".into()));
    }
    let cap = (cap_s > 0.0).then(|| std::time::Duration::from_secs_f64(cap_s));
    let c = py
        .allow_threads(|| compare(vls, (mtc_lo_ms, mtc_hi_ms), seed, cap))
        .map_err(|e| bad(e.to_string()))?;
    Ok(to_json(&c))
}

/// Runs a lossless-fabric scenario (`rtnetlab experiment fabric`), JSON in, JSON out; the GIL
/// is released while it runs.
#[pyfunction]
fn fabric_run(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    use rtnetlab_core::fabric::{run_scenario, Scenario};
    let bad = pyo3::exceptions::PyValueError::new_err;
    let scenario = Scenario::from_json(scenario_json).map_err(bad)?;
    let report = py.allow_threads(|| run_scenario(&scenario)).map_err(bad)?;
    Ok(to_json(&report))
}

/// Seed 001B: a request crossing time partitions (windows back to back from offset 0 in a major
/// frame; stages as `(partition index, work, transfer)`, all in ticks): its latency over every
/// arrival phase and each partition's worst service time of `probe_work`, as JSON.
#[pyfunction]
fn partition_latency_json(
    py: Python<'_>,
    major_frame: i64,
    windows: Vec<(String, i64)>,
    stages: Vec<(usize, i64, i64)>,
    probe_work: i64,
) -> PyResult<String> {
    use rtnetlab_core::fixed_priority::partition_supply::{chain_latency, PartitionSchedule, Stage};
    let bad = |e: rtnetlab_core::fixed_priority::InputError| pyo3::exceptions::PyValueError::new_err(e.0);
    let schedule = PartitionSchedule::back_to_back(major_frame, &windows).map_err(bad)?;
    let stages: Vec<Stage> =
        stages.into_iter().map(|(partition, work, transfer)| Stage { partition, work, transfer }).collect();
    let chain = py.allow_threads(|| chain_latency(&schedule, &stages)).map_err(bad)?;
    let service: Vec<Option<i64>> =
        (0..windows.len()).map(|p| schedule.service_time(p, probe_work)).collect();
    Ok(serde_json::json!({ "chain": chain, "service_time": service }).to_string())
}

/// Names of the analysis methods the engine offers.
#[pyfunction]
fn analysis_methods() -> Vec<&'static str> {
    rtnetlab_core::analysis::METHODS.to_vec()
}

/// A small random network for soundness campaigns (`rtnetlab_core::generate::random_small`),
/// JSON text: `schedulers` is `fifo`, `static_priority`, `mixed`, `any` or one of the
/// generator's sample configurations (`random_sample_schedulers`).
#[pyfunction]
fn random_network(seed: u64, schedulers: &str) -> PyResult<String> {
    use rtnetlab_core::generate::{random_small, sample_schedulers, RandomSchedulers};
    let kind = match schedulers {
        "fifo" => RandomSchedulers::Fifo,
        "static_priority" => RandomSchedulers::StaticPriority,
        "mixed" => RandomSchedulers::Mixed,
        "any" => RandomSchedulers::Any,
        name => {
            let Some((sample, _)) = sample_schedulers().into_iter().find(|(n, _)| n == name) else {
                return Err(ChoiceError::new_err(format!(
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
fn random_port_scheduler(kind: &str, lmax_bytes: Vec<u32>, seed: u64, link_bps: f64) -> PyResult<String> {
    use rand::SeedableRng;
    if !rtnetlab_core::schedulers::KINDS.contains(&kind) || lmax_bytes.is_empty() {
        return Err(ChoiceError::new_err(format!(
            "no random configuration for '{kind}' over {} classes (kinds: {})",
            lmax_bytes.len(),
            rtnetlab_core::schedulers::KINDS.join(", ")
        )));
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    if !(link_bps.is_finite() && link_bps > 0.0) {
        return Err(ChoiceError::new_err(format!("link_bps: a positive rate, got {link_bps}")));
    }
    Ok(to_json(&rtnetlab_core::generate::random_port_scheduler_at(kind, &lmax_bytes, link_bps, &mut rng)))
}

/// The scheduler kinds the engine registers, as the model names them.
#[pyfunction]
fn scheduler_kinds() -> Vec<&'static str> {
    rtnetlab_core::schedulers::KINDS.to_vec()
}

/// One step of seed 001G's RM law (Eq. 3 with clamping and renormalisation): new shares.
/// ValueError "argument: rule" when the input breaks a rule.
#[pyfunction]
#[pyo3(signature = (shares, matching, epsilon, min_share=0.0))]
fn slrm_step(shares: Vec<f64>, matching: Vec<f64>, epsilon: f64, min_share: f64) -> PyResult<Vec<f64>> {
    use rtnetlab_core::cloud::rm;
    let settings = rm::RmSettings { epsilon, min_share, matching_floor: None };
    rm::check(&shares, &matching, &settings).map_err(pyo3::exceptions::PyValueError::new_err)?;
    Ok(rm::step(&shares, &matching, &settings))
}

/// One step of an application's SL controller g_i (seed 001G, Eq. 2; the PI rule of
/// `cloud::sl`): the next service level. ValueError "argument: rule" on bad gains or range.
#[pyfunction]
#[pyo3(signature = (sl, matching, previous_matching, kp=0.1, ki=0.3, min_sl=0.0, max_sl=1.0))]
fn slrm_sl_next(
    sl: f64,
    matching: f64,
    previous_matching: f64,
    kp: f64,
    ki: f64,
    min_sl: f64,
    max_sl: f64,
) -> PyResult<f64> {
    use rtnetlab_core::cloud::sl::SlController;
    let g = SlController { kp, ki, min_sl, max_sl };
    g.check().map_err(pyo3::exceptions::PyValueError::new_err)?;
    if !(sl.is_finite() && matching.is_finite() && previous_matching.is_finite()) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "sl, matching: must be finite, got {sl}, {matching}, {previous_matching}"
        )));
    }
    Ok(g.next(sl, matching, previous_matching))
}

/// Simulates SL-aware applications under the RM (`scenario_json`: a `cloud::slsim::Scenario`),
/// JSON text; ValueError with the place and the rule; the GIL is released while it runs.
#[pyfunction]
fn slrm_simulate_json(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    use rtnetlab_core::cloud::slsim;
    let bad = pyo3::exceptions::PyValueError::new_err;
    let de = &mut serde_json::Deserializer::from_str(scenario_json);
    let scenario: slsim::Scenario =
        serde_path_to_error::deserialize(de).map_err(|e| bad(format!("{}: {}", e.path(), e.inner())))?;
    let report = py.allow_threads(|| slsim::simulate(&scenario)).map_err(bad)?;
    Ok(to_json(&report))
}

/// Online admission of VSN requests (seed 001F) on an infrastructure, both JSON text (a
/// `cloud::vsn::Infrastructure`, a `cloud::vsn::Requests`); the report as JSON text.
/// ValueError (argument, "place: rule") on bad input; the GIL is released while it runs.
/// `incremental=False` re-validates the whole description for every trial (the reference).
#[pyfunction]
#[pyo3(signature = (infra_json, requests_json, incremental=true))]
fn admit_json(py: Python<'_>, infra_json: &str, requests_json: &str, incremental: bool) -> PyResult<String> {
    use rtnetlab_core::cloud::{admission, vsn};
    let bad = |which: &str, e: String| pyo3::exceptions::PyValueError::new_err((which.to_string(), e));
    let de = &mut serde_json::Deserializer::from_str(infra_json);
    let infra: vsn::Infrastructure = serde_path_to_error::deserialize(de)
        .map_err(|e| bad("infrastructure", format!("{}: {}", e.path(), e.inner())))?;
    let de = &mut serde_json::Deserializer::from_str(requests_json);
    let requests: vsn::Requests = serde_path_to_error::deserialize(de)
        .map_err(|e| bad("requests", format!("{}: {}", e.path(), e.inner())))?;
    requests.check().map_err(|e| bad("requests", e))?;
    let report = py.allow_threads(|| admission::run_with(infra, &requests, incremental)).map_err(|e| {
        let which = if e.starts_with("requests[") { "requests" } else { "infrastructure" };
        bad(which, e)
    })?;
    Ok(to_json(&report))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Network>()?;
    m.add("ChoiceError", m.py().get_type_bound::<ChoiceError>())?;
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(load_text, m)?)?;
    m.add_function(wrap_pyfunction!(parse_text, m)?)?;
    m.add_function(wrap_pyfunction!(limits_json, m)?)?;
    m.add_function(wrap_pyfunction!(size_refusal, m)?)?;
    m.add_function(wrap_pyfunction!(schema_json, m)?)?;
    m.add_function(wrap_pyfunction!(generate_afdx, m)?)?;
    m.add_function(wrap_pyfunction!(generate_afdx_sized, m)?)?;
    m.add_function(wrap_pyfunction!(analysis_methods, m)?)?;
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    m.add_function(wrap_pyfunction!(configure_afdx, m)?)?;
    m.add_function(wrap_pyfunction!(configure_dtable, m)?)?;
    m.add_function(wrap_pyfunction!(configure_tsn, m)?)?;
    m.add_function(wrap_pyfunction!(dopa_fig6, m)?)?;
    m.add_function(wrap_pyfunction!(nss_overhead_json, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_run, m)?)?;
    m.add_function(wrap_pyfunction!(afdx_search_compare, m)?)?;
    m.add_function(wrap_pyfunction!(random_network, m)?)?;
    m.add_function(wrap_pyfunction!(random_sample_schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(random_port_scheduler, m)?)?;
    m.add_function(wrap_pyfunction!(scheduler_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(slrm_step, m)?)?;
    m.add_function(wrap_pyfunction!(admit_json, m)?)?;
    m.add_function(wrap_pyfunction!(slrm_simulate_json, m)?)?;
    m.add_function(wrap_pyfunction!(slrm_sl_next, m)?)?;
    m.add_function(wrap_pyfunction!(partition_latency_json, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
