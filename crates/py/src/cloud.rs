//! The cloud studies: seed 001G's resource manager and service-level controllers (one step, or
//! simulated), and seed 001F's online admission of virtual service networks.

use crate::error::{from_json_at, Error, Result};
use crate::to_json;
use pyo3::prelude::*;

/// One step of seed 001G's RM law (Eq. 3 with clamping and renormalisation): new shares.
/// ModelError (a ValueError) "argument: rule" when the input breaks a rule.
#[pyfunction]
#[pyo3(signature = (shares, matching, epsilon, min_share=0.0))]
fn slrm_step(shares: Vec<f64>, matching: Vec<f64>, epsilon: f64, min_share: f64) -> Result<Vec<f64>> {
    use rtnetlab_core::cloud::rm;
    let settings = rm::RmSettings { epsilon, min_share, matching_floor: None };
    rm::check(&shares, &matching, &settings)?;
    Ok(rm::step(&shares, &matching, &settings))
}

/// One step of an application's SL controller g_i (seed 001G, Eq. 2; the PI rule of
/// `cloud::sl`): the next service level. ModelError (a ValueError) "argument: rule" on bad gains
/// or range.
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
) -> Result<f64> {
    use rtnetlab_core::cloud::sl::SlController;
    use rtnetlab_core::model::Invalid;
    let g = SlController { kp, ki, min_sl, max_sl };
    g.check()?;
    if !(sl.is_finite() && matching.is_finite() && previous_matching.is_finite()) {
        let rule = format!("must be finite, got {sl}, {matching}, {previous_matching}");
        return Err(Invalid::new("sl, matching", rule).into());
    }
    Ok(g.next(sl, matching, previous_matching))
}

/// Simulates SL-aware applications under the RM (`scenario_json`: a `cloud::slsim::Scenario`),
/// JSON text; ValueError with the place and the rule; the GIL is released while it runs.
#[pyfunction]
fn slrm_simulate_json(py: Python<'_>, scenario_json: &str) -> Result<String> {
    use rtnetlab_core::cloud::slsim;
    let scenario: slsim::Scenario = from_json_at("", scenario_json)?;
    let report = py.allow_threads(|| slsim::simulate(&scenario))?;
    Ok(to_json(&report))
}

/// Online admission of VSN requests (seed 001F) on an infrastructure, both JSON text (a
/// `cloud::vsn::Infrastructure`, a `cloud::vsn::Requests`); the report as JSON text.
/// ValueError (argument, "place: rule") on bad input; the GIL is released while it runs.
/// `incremental=False` re-validates the whole description for every trial (the reference).
#[pyfunction]
#[pyo3(signature = (infra_json, requests_json, incremental=true))]
fn admit_json(py: Python<'_>, infra_json: &str, requests_json: &str, incremental: bool) -> Result<String> {
    use rtnetlab_core::cloud::{admission, vsn};
    let bad = |which: &str, e: String| Error::ValueOf(which.to_string(), e);
    let infra: vsn::Infrastructure =
        from_json_at("", infra_json).map_err(|e| bad("infrastructure", e.into()))?;
    let requests: vsn::Requests = from_json_at("", requests_json).map_err(|e| bad("requests", e.into()))?;
    requests.check().map_err(|e| bad("requests", e))?;
    let report = py.allow_threads(|| admission::run_with(infra, &requests, incremental)).map_err(|e| {
        let which = if e.starts_with("requests[") { "requests" } else { "infrastructure" };
        bad(which, e)
    })?;
    Ok(to_json(&report))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(slrm_step, m)?)?;
    m.add_function(wrap_pyfunction!(admit_json, m)?)?;
    m.add_function(wrap_pyfunction!(slrm_simulate_json, m)?)?;
    m.add_function(wrap_pyfunction!(slrm_sl_next, m)?)?;
    Ok(())
}
