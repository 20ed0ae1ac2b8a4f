//! Synthesis: choosing what a description leaves open (AFDX BAG and MTU, TSN gate control lists,
//! offsets and idle slopes, Deficit Tables, priorities and DOPA's partition).

use crate::error::{choice, Error, Result};
use crate::to_json;
use pyo3::prelude::*;
use rtnetlab_core::model::Network;

/// Priority orders per processor and bus (`method`: opa or dm), JSON text.
pub fn assign_priorities(net: &Network, method: &str) -> Result<String> {
    use rtnetlab_core::synthesis::priorities::{assign, Method};
    let method: Method = choice(method)?;
    Ok(to_json(&assign(&net.fixed_priority, method)))
}

/// DOPA on the description's chains (`method`: opa or dm), JSON text.
pub fn partition(net: &Network, method: &str) -> Result<String> {
    use rtnetlab_core::fixed_priority::dopa::{DmKey, PriorityPolicy};
    use rtnetlab_core::synthesis::priorities::Method;
    let policy = match choice::<Method>(method)? {
        Method::Opa => PriorityPolicy::Opa,
        Method::Dm => PriorityPolicy::DeadlineMonotonic(DmKey::LocalWindow),
    };
    Ok(rtnetlab_core::synthesis::partition::partition(&net.fixed_priority, policy).map(|r| to_json(&r))?)
}

/// A description (`doc_json`) and the settings of its configuration (`request_json`) read.
fn inputs<R: serde::de::DeserializeOwned>(
    doc_json: &str,
    request_json: &str,
) -> Result<(serde_json::Value, R)> {
    let doc = serde_json::from_str(doc_json).map_err(|e| Error::Model(vec![format!("(file): {e}")]))?;
    let req = serde_json::from_str(request_json)
        .map_err(|e| Error::Value(format!("configuration settings: {e}")))?;
    Ok((doc, req))
}

/// Chooses BAG and MTU of the VLs that list their messages (`rtnetlab configure afdx`).
/// `doc_json`: the description; `request_json`: a `synthesis::afdx_network::Request`.
/// Returns the report JSON (feasible or not, the chosen values); a description that does not
/// validate raises ModelError (a ValueError) with one line per problem.
#[pyfunction]
fn configure_afdx(doc_json: &str, request_json: &str) -> Result<String> {
    use rtnetlab_core::synthesis::afdx_network;
    let (doc, req): (_, afdx_network::Request) = inputs(doc_json, request_json)?;
    let report = afdx_network::configure(doc, &req).map_err(Error::Model)?;
    Ok(to_json(&report))
}

/// Gate control lists, stream offsets and `auto` idle slopes (`rtnetlab configure tsn`).
/// `doc_json`: the description; `request_json`: a `synthesis::tsn::Request`; `milp`, when given,
/// solves the offsets' mixed-integer program: called as `milp(program)` with the program as JSON
/// text (`synthesis::tsn::schedule::Milp`), it returns (status, x or None, objective or None,
/// bound or None). Returns the report JSON; a description that does not validate raises
/// ModelError (a ValueError) with one line per problem. The GIL is released while the engine
/// works.
#[pyfunction]
#[pyo3(signature = (doc_json, request_json, milp=None))]
fn configure_tsn(
    py: Python<'_>,
    doc_json: &str,
    request_json: &str,
    milp: Option<PyObject>,
) -> Result<String> {
    use rtnetlab_core::synthesis::tsn::{self, schedule};
    let (doc, req): (_, tsn::Request) = inputs(doc_json, request_json)?;
    let report = py.allow_threads(|| {
        let mut solve = |m: &schedule::Milp| -> std::result::Result<schedule::MilpAnswer, String> {
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
    report.map(|r| to_json(&r)).map_err(Error::Model)
}

/// Decouples latency from bandwidth in a Deficit Table (`rtnetlab configure dtable`):
/// requirements JSON in, report JSON out (tables 4 and 5 and scheduler configurations), or
/// `{"feasible": false, "reason"}` when no table meets the requirements.
#[pyfunction]
fn configure_dtable(requirements_json: &str) -> Result<String> {
    use rtnetlab_core::synthesis::dtable::{configure, ConfigureError};
    let doc: serde_json::Value =
        serde_json::from_str(requirements_json).map_err(|e| Error::Value(format!("(file): {e}")))?;
    // No table meets the requirements: a verdict, reported as `{"feasible": false, "reason"}`
    // (the report of a configuration has no `feasible` key); a wrong document: ValueError.
    match configure(doc) {
        Ok(r) => Ok(to_json(&r)),
        Err(ConfigureError::Infeasible(e)) => {
            Ok(to_json(&serde_json::json!({"feasible": false, "reason": e.to_string()})))
        }
        Err(e @ ConfigureError::Input(_)) => Err(Error::Value(e.to_string())),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(configure_afdx, m)?)?;
    m.add_function(wrap_pyfunction!(configure_dtable, m)?)?;
    m.add_function(wrap_pyfunction!(configure_tsn, m)?)?;
    Ok(())
}
