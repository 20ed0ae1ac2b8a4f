//! Reading a network description element by element, so that every malformed element is
//! reported in one run with its place (`flows[3].bag: ...`), not only the first.

use super::diagnostics::{Diagnostic, Diagnostics};
use super::spec::*;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;

/// Deserializes `value`, returning (path inside it, message) on failure.
pub(crate) fn from_value_at<T: DeserializeOwned>(value: Value) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        (path, clean_message(&e.into_inner().to_string()))
    })
}

/// serde_json appends " at line 1 column 2" to messages about values that no longer have
/// lines; the place is given by the path instead.
fn clean_message(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

fn join(place: &str, inner: &str) -> String {
    match (place.is_empty(), inner.is_empty()) {
        (_, true) => place.to_string(),
        (true, false) => inner.to_string(),
        (false, false) if inner.starts_with('[') => format!("{place}{inner}"),
        (false, false) => format!("{place}.{inner}"),
    }
}

/// The result of reading: the elements that parsed, and the names of those that did not (so that
/// references to them are not reported a second time as unknown).
pub struct Loaded {
    pub spec: NetworkSpec,
    pub broken_names: Vec<String>,
}

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "defaults",
    "redundancy",
    "classes",
    "schedulers",
    "end_systems",
    "switches",
    "links",
    "flows",
];

/// Reads a whole description; structural problems go to `diags`, and the partial model (every
/// element that could be read) is returned for the semantic checks.
pub fn load_spec(doc: Value, diags: &mut Diagnostics) -> Option<Loaded> {
    let Value::Object(mut top) = doc else {
        diags.push(Diagnostic::error(
            "(top)",
            "a network description must be a mapping with name, end_systems, switches, links and flows",
        ));
        return None;
    };
    for key in top.keys() {
        if !TOP_KEYS.contains(&key.as_str()) {
            diags.push(Diagnostic::error(
                key.clone(),
                format!("unknown key, expected one of {}", TOP_KEYS.join(", ")),
            ));
        }
    }
    let mut broken = Vec::new();
    let name = match top.remove("name") {
        Some(Value::String(s)) => s,
        Some(_) => {
            diags.push(Diagnostic::error("name", "must be a string"));
            String::new()
        }
        None => {
            diags.push(Diagnostic::error("name", "missing: every network needs a name"));
            String::new()
        }
    };
    let description = match top.remove("description") {
        Some(Value::String(s)) => Some(s),
        Some(Value::Null) | None => None,
        Some(_) => {
            diags.push(Diagnostic::error("description", "must be a string"));
            None
        }
    };
    let defaults = one(&mut top, "defaults", diags).unwrap_or_default();
    let redundancy = one(&mut top, "redundancy", diags).flatten();
    let classes = list(&mut top, "classes", false, diags, &mut broken, from_value_at);
    let schedulers = map(&mut top, "schedulers", diags);
    let end_systems = list(&mut top, "end_systems", true, diags, &mut broken, from_value_at);
    let switches = list(&mut top, "switches", false, diags, &mut broken, from_value_at);
    let links = list(&mut top, "links", true, diags, &mut broken, from_value_at);
    let flows = list(&mut top, "flows", false, diags, &mut broken, Flow::from_value);
    Some(Loaded {
        spec: NetworkSpec {
            name,
            description,
            defaults,
            redundancy,
            classes,
            schedulers,
            end_systems,
            switches,
            links,
            flows,
        },
        broken_names: broken,
    })
}

fn one<T: DeserializeOwned>(
    top: &mut serde_json::Map<String, Value>,
    key: &str,
    diags: &mut Diagnostics,
) -> Option<T> {
    let v = top.remove(key)?;
    match from_value_at(v) {
        Ok(t) => Some(t),
        Err((path, msg)) => {
            diags.push(Diagnostic::error(join(key, &path), msg));
            None
        }
    }
}

fn list<T>(
    top: &mut serde_json::Map<String, Value>,
    key: &str,
    required: bool,
    diags: &mut Diagnostics,
    broken: &mut Vec<String>,
    read: impl Fn(Value) -> Result<T, (String, String)>,
) -> Vec<T> {
    let items = match top.remove(key) {
        None | Some(Value::Null) => {
            if required {
                diags.push(Diagnostic::error(key, "missing: must be a list"));
            }
            return Vec::new();
        }
        Some(Value::Array(items)) => items,
        Some(_) => {
            diags.push(Diagnostic::error(key, "must be a list"));
            return Vec::new();
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let name = item.get("name").and_then(Value::as_str).map(str::to_string);
        match read(item) {
            Ok(t) => out.push(t),
            Err((path, msg)) => {
                diags.push(Diagnostic::error(join(&format!("{key}[{i}]"), &path), msg));
                broken.extend(name);
            }
        }
    }
    out
}

fn map(
    top: &mut serde_json::Map<String, Value>,
    key: &str,
    diags: &mut Diagnostics,
) -> BTreeMap<String, SchedulerConfig> {
    let mut out = BTreeMap::new();
    match top.remove(key) {
        None | Some(Value::Null) => {}
        Some(Value::Object(entries)) => {
            for (name, v) in entries {
                match from_value_at(v) {
                    Ok(c) => {
                        out.insert(name, c);
                    }
                    Err((path, msg)) => {
                        diags.push(Diagnostic::error(join(&format!("{key}.{name}"), &path), msg))
                    }
                }
            }
        }
        Some(_) => diags.push(Diagnostic::error(key, "must be a mapping from name to configuration")),
    }
    out
}
