//! The network model: one definition of the file format ([`spec`]), reading it element by element
//! ([`load`]), validating and resolving it ([`validate`]) into the [`Network`] every engine reads.

pub mod diagnostics;
pub mod fixed_priority;
pub mod info;
mod invalid;
pub mod limits;
pub mod load;
pub mod network;
pub mod parse;
pub mod server_graph;
pub mod spec;
pub mod validate;

pub use diagnostics::{Diagnostic, Diagnostics, Severity};
pub use fixed_priority::FixedPrioritySystem;
pub use invalid::Invalid;
pub use limits::{LimitError, Limits};
pub use network::indices::{self, Crossings, FlatRoutes, Names};
pub use network::*;
pub use spec::*;

/// Reads and validates a description given as JSON text, within the default [`Limits`].
/// Returns the network (when no error was found) and every diagnostic, errors and warnings, in
/// one run.
pub fn load_network(json: &str) -> (Option<Network>, Diagnostics) {
    load_text(json, parse::Format::Json, "(file)", &Limits::default())
}

/// Reads and validates a description's text (`source` names it in messages about the text
/// itself, e.g. `net.yaml:3:1: not valid YAML: ...`), within `limits`. The problems listed are
/// at most `limits.errors` errors and as many warnings; one more line counts the rest.
pub fn load_text(
    text: &str,
    format: parse::Format,
    source: &str,
    limits: &Limits,
) -> (Option<Network>, Diagnostics) {
    let mut diags = Diagnostics::default();
    let net = match parse::parse(text, format, limits) {
        Ok(doc) => load_value_within(doc, limits, &mut diags),
        Err(e) => {
            diags.error(e.place(source), e.message);
            None
        }
    };
    diags.cap(limits.errors as usize);
    (net, diags)
}

/// Reads and validates a description already parsed into a JSON value, within the default
/// [`Limits`].
pub fn load_value(doc: serde_json::Value, diags: &mut Diagnostics) -> Option<Network> {
    load_value_within(doc, &Limits::default(), diags)
}

/// Reads and validates a description already parsed into a JSON value, within `limits` (the
/// counts of nodes, flows and paths; the text's own limits apply when it is parsed).
pub fn load_value_within(
    doc: serde_json::Value,
    limits: &Limits,
    diags: &mut Diagnostics,
) -> Option<Network> {
    let loaded = load::load_spec_within(doc, limits, diags)?;
    if loaded.over_limit {
        return None;
    }
    validate::build_within(loaded.spec, &loaded.broken_names, &loaded.origins, limits, diags)
}

/// Validates a description built in code (generators, tests).
pub fn validate_spec(spec: NetworkSpec) -> (Option<Network>, Diagnostics) {
    let mut diags = Diagnostics::default();
    let net = validate::build(spec, &[], &mut diags);
    (net, diags)
}

/// The JSON Schema of the description format, generated from [`spec::NetworkSpec`].
pub fn json_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(NetworkSpec);
    serde_json::to_value(schema).expect("schema serialises")
}
