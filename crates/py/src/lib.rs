//! Thin Python bindings: JSON text in, JSON text out, plus one handle on a validated network so
//! that it is parsed and checked once per command. The model itself is defined only in the core
//! crate; Python sees it through JSON and the generated JSON Schema.
//!
//! One module per domain of the engine, each registering its functions ([`_core`]); the
//! [`model::Network`] handle's methods are listed in [`model`] and run in the module of their
//! domain; every error reaches Python through [`error`], the one bridge to its exceptions.

// No bare `unwrap` outside tests (clippy.toml): `expect` with the reason, or an error.
#![deny(clippy::unwrap_used)]
// pyo3 0.22's #[pymethods] expansion converts PyResult errors into themselves.
#![allow(clippy::useless_conversion)]

use pyo3::prelude::*;

mod analysis;
mod cloud;
mod constants;
mod error;
mod experiments;
mod generate;
mod model;
mod simulation;
mod synthesis;
mod table_view;

/// An engine result as JSON text.
fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("engine results serialise to JSON")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ChoiceError", m.py().get_type_bound::<error::ChoiceError>())?;
    model::register(m)?;
    analysis::register(m)?;
    simulation::register(m)?;
    synthesis::register(m)?;
    generate::register(m)?;
    experiments::register(m)?;
    cloud::register(m)?;
    constants::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
