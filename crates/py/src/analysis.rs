//! Worst-case analyses of a validated network: the reports (whole, as `analyze --json` prints
//! them, as the terminal tables show them, summed up), where a flow's bounds come from, and the
//! linear-programming solver the front passes in.

use crate::error::{Error, Result};
use crate::{table_view, to_json};
use pyo3::prelude::*;
use rtnetlab_core::analysis::{
    self, fifo_lp, network_bounds::ArrivalBounds, results::AnalysisReport, what_if,
};
use rtnetlab_core::model::Network;

/// An analysis as the front asks for it: the method and options by their names.
pub struct Asked<'a> {
    pub method: &'a str,
    pub grouping: bool,
    pub blind: bool,
    /// On a server graph, how cross traffic is bounded.
    pub arrival_bounds: &'a str,
    /// How hard fifo-lp works.
    pub lp_effort: &'a str,
}

/// The analysis asked for; an unknown name is a ValueError naming the choices.
fn request(asked: &Asked) -> Result<analysis::Request> {
    Ok(analysis::Request {
        method: asked.method.parse()?,
        grouping: asked.grouping,
        blind: asked.blind,
        arrival_bounds: ArrivalBounds::parse(asked.arrival_bounds)?,
        lp_effort: fifo_lp::Effort::parse(asked.lp_effort)?,
    })
}

/// Calls `run` with `lp` (a Python callable, as in `analyze_json`) as fifo-lp's solver, or none.
/// The analysis runs without the interpreter lock (taken back only for each program `lp`
/// solves), so a Python thread can compute bounds while another runs a simulation.
fn with_solver<T: Send, E: Into<Error> + Send>(
    py: Python<'_>,
    lp: Option<PyObject>,
    run: impl FnOnce(Option<fifo_lp::Solver>) -> std::result::Result<T, E> + Send,
) -> Result<T> {
    py.allow_threads(|| {
        let solve = lp.map(Highs);
        run(solve.as_ref().map(|s| s as fifo_lp::Solver))
    })
    .map_err(Into::into)
}

/// The front's `maximise` (python/rtnetlab/analysis/lp.py) as fifo-lp's solver.
struct Highs(PyObject);

impl fifo_lp::LpSolver for Highs {
    fn maximise(&self, p: &fifo_lp::Program) -> std::result::Result<f64, String> {
        self.maximise_each(p, std::slice::from_ref(&p.objective)).remove(0)
    }

    /// One call for every objective: the front keeps the program and re-optimises it for each.
    /// A later objective without an optimum comes back as NaN.
    fn maximise_each(
        &self,
        p: &fifo_lp::Program,
        objectives: &[Vec<f64>],
    ) -> Vec<std::result::Result<f64, String>> {
        let [starts, columns, values, upper] = program_bytes(p);
        let costs: Vec<u8> = objectives.iter().flatten().flat_map(|c| c.to_ne_bytes()).collect();
        Python::with_gil(|py| {
            let bytes = |b: &[u8]| pyo3::types::PyBytes::new_bound(py, b).unbind();
            let args = (
                bytes(&costs),
                bytes(&starts),
                bytes(&columns),
                bytes(&values),
                bytes(&upper),
                objectives.len(),
            );
            match self.0.call1(py, args).and_then(|v| v.extract::<Vec<f64>>(py)) {
                Ok(optima) => optima
                    .into_iter()
                    .map(|v| if v.is_nan() { Err("HiGHS: no optimum".to_string()) } else { Ok(v) })
                    .collect(),
                Err(e) => vec![Err(e.value_bound(py).to_string()); objectives.len()],
            }
        })
    }
}

/// The program's constraints as compressed rows in native-endian bytes (row starts and columns
/// i32, coefficients and bounds f64), which the solver reads without a loop: as Python lists of
/// tuples, their conversion took a third of fifo-lp's time.
fn program_bytes(p: &fifo_lp::Program) -> [Vec<u8>; 4] {
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
    [starts, columns, values, upper]
}

/// The report of the analysis asked for; `lp` as in `analyze_json`.
pub fn report(py: Python<'_>, net: &Network, asked: &Asked, lp: Option<PyObject>) -> Result<AnalysisReport> {
    let req = request(asked)?;
    with_solver(py, lp, |solver| analysis::run_with(net, &req, solver))
}

/// The report and `warnings` as `analyze --json` prints them, indented or compact.
pub fn document(
    py: Python<'_>,
    net: &Network,
    asked: &Asked,
    lp: Option<PyObject>,
    warnings: &[String],
    indent: bool,
) -> Result<String> {
    let report = report(py, net, asked, lp)?;
    let doc = table_view::Document { report: &report, warnings };
    let text = if indent { serde_json::to_string_pretty(&doc) } else { serde_json::to_string(&doc) };
    Ok(text.expect("engine results serialise to JSON"))
}

/// The report as the terminal tables show it, the first `limit` rows of each.
pub fn tables(
    py: Python<'_>,
    net: &Network,
    asked: &Asked,
    lp: Option<PyObject>,
    limit: Option<usize>,
) -> Result<String> {
    let report = report(py, net, asked, lp)?;
    Ok(table_view::table_json(&report, limit))
}

/// (rows, unbounded rows, largest finite delay in µs), without a solver.
pub fn summary(net: &Network, method: &str, grouping: bool, blind: bool) -> Result<(usize, usize, f64)> {
    let req = analysis::Request { method: method.parse()?, grouping, blind, ..Default::default() };
    let report = analysis::run(net, &req)?;
    let unbounded = report.flows.iter().filter(|f| !f.delay_us.is_finite()).count();
    let largest = report.flows.iter().map(|f| f.delay_us).filter(|d| d.is_finite()).fold(0.0, f64::max);
    Ok((report.flows.len(), unbounded, largest))
}

/// Where flow `flow`'s bounds come from, hop by hop, JSON text.
pub fn explain(
    py: Python<'_>,
    net: &Network,
    asked: &Asked,
    flow: &str,
    lp: Option<PyObject>,
) -> Result<String> {
    let req = request(asked)?;
    with_solver(py, lp, |solver| analysis::explain_with(net, &req, flow, solver)).map(|e| to_json(&e))
}

/// Names of the analysis methods the engine offers.
#[pyfunction]
fn analysis_methods() -> Vec<&'static str> {
    analysis::METHODS.to_vec()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(analysis_methods, m)?)?;
    m.add_class::<WhatIf>()?;
    Ok(())
}

/// A validated network under what-if edits, analysed again in place by TFA
/// (`rtnetlab_core::analysis::what_if`): edits take the format's values as JSON text; a refused
/// edit raises ModelError with its lines (`place: rule`) and leaves the network as it was.
#[pyclass(module = "rtnetlab._core")]
pub struct WhatIf {
    inner: what_if::WhatIf,
}

/// A what-if on `net`, the validation of `doc_json` (the description as JSON text) that gave
/// `warnings`.
pub fn what_if_of(net: &Network, doc_json: &str, warnings: &[String]) -> Result<WhatIf> {
    let doc: serde_json::Value = crate::error::from_json_at("", doc_json)?;
    what_if::WhatIf::new(net.clone(), doc, warnings).map(|inner| WhatIf { inner }).map_err(Error::Model)
}

fn mapping(json: &str) -> Result<serde_json::Map<String, serde_json::Value>> {
    match crate::error::from_json_at::<serde_json::Value>("", json)? {
        serde_json::Value::Object(m) => Ok(m),
        other => Err(Error::Value(format!("expected a mapping of keys, got {other}"))),
    }
}

#[pymethods]
impl WhatIf {
    /// Sets keys of flow `name` (`keys_json`: a mapping of the format's keys to values).
    fn set_flow(&mut self, name: &str, keys_json: &str) -> Result<()> {
        self.inner.set_flow(name, &mapping(keys_json)?).map_err(Error::Model)
    }
    /// Sets the rate of `node`'s links, or of the one on its port `port` (`rate_json`: a value).
    #[pyo3(signature = (node, rate_json, port=None))]
    fn set_port_rate(&mut self, node: &str, rate_json: &str, port: Option<&str>) -> Result<()> {
        let rate: serde_json::Value = crate::error::from_json_at("", rate_json)?;
        self.inner.set_port_rate(node, port, &rate).map_err(Error::Model)
    }
    /// Sets parameters of named scheduler `name`, a mapping parameter key by key.
    fn set_scheduler(&mut self, name: &str, params_json: &str) -> Result<()> {
        self.inner.set_scheduler(name, &mapping(params_json)?).map_err(Error::Model)
    }
    /// Takes back the last edit still in force; false when there is none.
    fn undo(&mut self) -> bool {
        self.inner.undo()
    }
    /// How many edits are in force.
    fn edits(&self) -> usize {
        self.inner.edits()
    }
    /// Ports the last edit analysed again (all of them when it took the whole pass).
    fn last_analysed_ports(&self) -> usize {
        self.inner.last_analysed_ports
    }
    /// The egress ports' count.
    fn ports(&self) -> usize {
        self.inner.network().ports.len()
    }
    /// The validation warnings of the network as edited (what validating it again gives).
    fn warnings(&self) -> Vec<String> {
        self.inner.warnings()
    }
    /// TFA's report of the network as edited, JSON text (what `analyze_json("tfa")` gives on it).
    fn analyze_json(&self, py: Python<'_>) -> Result<String> {
        py.allow_threads(|| self.inner.report().map(|r| to_json(&r))).map_err(Error::Analysis)
    }
    /// The description as edited, JSON text.
    fn spec_json(&self) -> String {
        to_json(self.inner.doc())
    }
}
