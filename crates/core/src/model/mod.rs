//! The network model: one definition of the file format ([`spec`]), reading it element by element
//! ([`load`]), validating and resolving it ([`validate`]) into the [`Network`] every engine reads.

pub mod diagnostics;
pub mod fixed_priority;
pub mod indices;
pub mod info;
pub mod load;
pub mod network;
pub mod server_graph;
pub mod spec;
pub mod validate;

pub use diagnostics::{Diagnostic, Diagnostics, Severity};
pub use fixed_priority::FixedPrioritySystem;
pub use indices::{Crossings, FlatRoutes, Names};
pub use network::*;
pub use spec::*;

/// Reads and validates a description given as JSON text. Returns the network (when no error was
/// found) and every diagnostic, errors and warnings, in one run.
pub fn load_network(json: &str) -> (Option<Network>, Diagnostics) {
    let mut diags = Diagnostics::default();
    let doc: serde_json::Value = match serde_json::from_str(json) {
        Ok(v) => v,
        Err(e) => {
            diags.error("(file)", format!("not valid JSON: {e}"));
            return (None, diags);
        }
    };
    (load_value(doc, &mut diags), diags)
}

/// Reads and validates a description already parsed into a JSON value.
pub fn load_value(doc: serde_json::Value, diags: &mut Diagnostics) -> Option<Network> {
    let loaded = load::load_spec(doc, diags)?;
    validate::build_at(loaded.spec, &loaded.broken_names, &loaded.origins, diags)
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
