//! Simulation: the simulator run slice by slice, worst-case scenarios and their search, and the
//! CAN buses' simulation.

use crate::error::{from_json_at, Error, Result};
use crate::to_json;
use pyo3::prelude::*;
use rtnetlab_core::model::Network;

/// A running simulation: advanced slice by slice so the front can show progress and stop early.
#[pyclass(module = "rtnetlab._core")]
pub struct Simulation {
    inner: rtnetlab_core::sim::Simulator,
    duration_ns: i64,
}

/// A simulation of `net`; `config_json` is a `rtnetlab_core::sim::SimConfig`.
pub fn start(net: &Network, config_json: &str) -> Result<Simulation> {
    let config: rtnetlab_core::sim::SimConfig =
        serde_json::from_str(config_json).map_err(|e| Error::Value(format!("simulation settings: {e}")))?;
    let duration_ns = config.duration_ns;
    let inner = rtnetlab_core::sim::Simulator::new(net, config)?;
    Ok(Simulation { inner, duration_ns })
}

/// Checks a worst-case scenario (JSON text) against `net`: the place and the rule when it does
/// not fit.
pub fn check_scenario(net: &Network, scenario_json: &str) -> Result<()> {
    let scenario: rtnetlab_core::sim::Scenario = from_json_at("scenario.", scenario_json)?;
    rtnetlab_core::sim::ScenarioTables::resolve(net, &scenario)?;
    Ok(())
}

/// The worst-case search within a budget (seconds, evaluations), JSON text; the GIL is released.
pub fn worst_case(
    py: Python<'_>,
    net: &Network,
    (seconds, evaluations): (Option<f64>, Option<u64>),
    seed: u64,
    workers: usize,
    flows: Vec<String>,
    grid_limit: u64,
) -> Result<String> {
    use rtnetlab_core::worst_case::{run, Budget, Settings};
    let budget = match (seconds, evaluations) {
        (_, Some(n)) => Budget::Evaluations(n),
        (Some(s), None) => Budget::Time(std::time::Duration::from_secs_f64(s)),
        (None, None) => Budget::Evaluations(Settings::default().budget_evaluations()),
    };
    let settings = Settings { budget, seed, workers, flows, grid_limit };
    Ok(py.allow_threads(|| run(net, &settings)).map(|r| to_json(&r))?)
}

/// Simulates the CAN buses (`config_json`: a `can::model::BusSimConfig`), JSON text.
pub fn buses(py: Python<'_>, net: &Network, config_json: &str) -> Result<String> {
    let config: rtnetlab_core::can::model::BusSimConfig =
        serde_json::from_str(config_json).map_err(|e| Error::Value(format!("simulation settings: {e}")))?;
    let sys = &net.fixed_priority;
    Ok(py.allow_threads(|| rtnetlab_core::can::model::simulate(sys, &config)).map(|r| to_json(&r))?)
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
    fn write_pcapng(&self, py: Python<'_>, path: std::path::PathBuf) -> Result<u64> {
        let mut raised: Option<PyErr> = None;
        let written = self.inner.write_pcapng(&path, || {
            py.check_signals().map_err(|e| {
                raised = Some(e);
                std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted")
            })
        });
        if let Some(e) = raised {
            return Err(Error::Python(e));
        }
        written.map_err(|e| Error::Os(format!("{}: {e}", path.display())))
    }
    /// Results so far, JSON text.
    fn report_json(&self) -> String {
        to_json(&self.inner.report())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    Ok(())
}
