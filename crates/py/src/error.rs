//! The one place where the engine's errors become Python exceptions.
//!
//! Every function of the binding returns [`Error`]; its conversion to a Python exception is
//! [`From<Error> for PyErr`] below and nowhere else. The classes are the front's own
//! (`rtnetlab.errors`), all `ValueError`s, so callers catching `ValueError` catch every one:
//!
//! | engine error                                   | Python exception                |
//! |------------------------------------------------|---------------------------------|
//! | [`rtnetlab_core::model::Invalid`] (place, rule) | `ModelError` (one line per rule) |
//! | a description that does not validate (lines)   | `ModelError`                    |
//! | [`rtnetlab_core::model::LimitError`]           | `LimitError`                    |
//! | [`rtnetlab_core::analysis::AnalysisError`]     | `AnalysisError`                 |
//! | an unknown choice                              | `ChoiceError` (this module's)   |
//! | any other refusal (`String`)                   | `ValueError`                    |
//! | a file that cannot be written                  | `OSError`                       |

// PyO3 0.22's macro checks a `gil-refs` feature this crate does not declare.
#![allow(unexpected_cfgs)]

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyType;
use rtnetlab_core::analysis::AnalysisError;
use rtnetlab_core::model::{Invalid, LimitError};

pyo3::create_exception!(
    _core,
    ChoiceError,
    pyo3::exceptions::PyValueError,
    "A name given for an option is none of its choices; the message lists them (the caller names the option)."
);

/// Why the engine refused a call from Python.
#[derive(Debug)]
pub enum Error {
    /// Refused input, one line: `ValueError(message)` (the caller says where it came from).
    Value(String),
    /// Refused input of one of several arguments: `ValueError(argument, reason)`.
    ValueOf(String, String),
    /// A name that is none of its choices: `ChoiceError(reason)`.
    Choice(String),
    /// The same for one of several arguments: `ChoiceError(argument, reason)`.
    ChoiceOf(String, String),
    /// Rules broken, one line each (`place: rule`): `ModelError(lines)`.
    Model(Vec<String>),
    /// A limit passed, or a setting of the limits wrong: `LimitError(message)`.
    Limit(String),
    /// An analysis that cannot run as asked: `AnalysisError(message)`.
    Analysis(String),
    /// A file that could not be written: `OSError(message)`.
    Os(String),
    /// An exception raised by Python code the engine called (a signal handler): as it is.
    Python(PyErr),
}

/// What the binding's functions return.
pub type Result<T> = std::result::Result<T, Error>;

impl From<String> for Error {
    fn from(message: String) -> Self {
        Error::Value(message)
    }
}

impl From<&str> for Error {
    fn from(message: &str) -> Self {
        Error::Value(message.to_string())
    }
}

impl From<Invalid> for Error {
    fn from(e: Invalid) -> Self {
        Error::Model(vec![e.to_string()])
    }
}

impl From<LimitError> for Error {
    fn from(e: LimitError) -> Self {
        Error::Limit(e.to_string())
    }
}

impl From<AnalysisError> for Error {
    fn from(e: AnalysisError) -> Self {
        Error::Analysis(e.to_string())
    }
}

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Self {
        Error::Python(e)
    }
}

/// The class `name` of `rtnetlab.errors`, the front's exceptions.
fn front_class<'py>(py: Python<'py>, name: &str) -> Option<Bound<'py, PyType>> {
    let class = py.import_bound("rtnetlab.errors").and_then(|m| m.getattr(name)).ok()?;
    class.downcast_into::<PyType>().ok()
}

/// An exception of the front's class `name` with `args`; a `ValueError(message)` if the front
/// cannot be imported (the binding loaded outside its package).
fn front_error<A: pyo3::PyErrArguments + Send + Sync + 'static>(
    name: &str,
    args: A,
    message: String,
) -> PyErr {
    Python::with_gil(|py| match front_class(py, name) {
        Some(class) => PyErr::from_type_bound(class, args),
        None => PyValueError::new_err(message),
    })
}

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        match e {
            Error::Value(message) => PyValueError::new_err(message),
            Error::ValueOf(argument, reason) => PyValueError::new_err((argument, reason)),
            Error::Choice(reason) => ChoiceError::new_err(reason),
            Error::ChoiceOf(argument, reason) => ChoiceError::new_err((argument, reason)),
            Error::Model(lines) => {
                let message = lines.join("\n");
                front_error("ModelError", (lines,), message)
            }
            Error::Limit(message) => front_error("LimitError", (message.clone(),), message),
            Error::Analysis(message) => front_error("AnalysisError", (message.clone(),), message),
            Error::Os(message) => PyOSError::new_err(message),
            Error::Python(e) => e,
        }
    }
}

/// A name the user chose, read by the engine ([`rtnetlab_core::choice::parse`]).
pub fn choice<T: serde::de::DeserializeOwned>(text: &str) -> Result<T> {
    rtnetlab_core::choice::parse(text).map_err(Error::Choice)
}

/// [`choice`] for one of several arguments: the error carries (argument name, reason), so that
/// the caller can name the option that was wrong.
pub fn named_choice<T: serde::de::DeserializeOwned>(argument: &str, text: &str) -> Result<T> {
    rtnetlab_core::choice::parse(text).map_err(|e| Error::ChoiceOf(argument.to_string(), e))
}

/// A JSON input read as `T`; a value that does not fit is an [`Invalid`] at its path inside the
/// document, after `prefix` (`scenario.` gives `scenario.flows[0].sizes: ...`).
pub fn from_json_at<T: serde::de::DeserializeOwned>(
    prefix: &str,
    text: &str,
) -> std::result::Result<T, Invalid> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de)
        .map_err(|e| Invalid::new(format!("{prefix}{}", e.path()), e.inner().to_string()))
}

// The tests link no Python (the extension module leaves its symbols to the interpreter), so
// they use nothing that holds a Python object.
#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Doc {
        #[allow(dead_code)]
        flows: Vec<u32>,
    }

    #[test]
    fn a_value_that_does_not_fit_is_invalid_at_its_path() {
        let e = from_json_at::<Doc>("scenario.", r#"{"flows": [1, "x"]}"#).expect_err("a string is no u32");
        assert_eq!(e.place, "scenario.flows[1]");
        assert!(e.rule.starts_with("invalid type: string"), "{}", e.rule);
        let e = from_json_at::<Doc>("", r#"{"flow": []}"#).expect_err("an unknown field");
        assert!(e.to_string().starts_with("flow: unknown field `flow`"), "{e}");
    }
}
