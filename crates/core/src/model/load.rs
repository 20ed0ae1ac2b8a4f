//! Reading a network description element by element, so that every malformed element is
//! reported in one run with its place (`flows[3].bag: ...`), not only the first.

use super::diagnostics::{from_value_at, Diagnostic, Diagnostics};
use super::limits::{exceeded, grouped, Limits};
use super::spec::*;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;

fn join(place: &str, inner: &str) -> String {
    match (place.is_empty(), inner.is_empty()) {
        (_, true) => place.to_string(),
        (true, false) => inner.to_string(),
        (false, false) if inner.starts_with('[') => format!("{place}{inner}"),
        (false, false) => format!("{place}.{inner}"),
    }
}

/// The result of reading: the elements that parsed, the names of those that did not (so that
/// references to them are not reported a second time as unknown), and where the elements that
/// parsed sit in the file.
pub struct Loaded {
    pub spec: NetworkSpec,
    pub broken_names: Vec<String>,
    pub origins: Origins,
    /// A count passed its limit (reported): nothing was read beyond the top mapping's keys.
    pub over_limit: bool,
}

/// For each list of the file, the index in the file of every element that was read: once an
/// element is dropped as unreadable, `spec.flows[3]` may be `flows[4]` of the file.
#[derive(Clone, Debug, Default)]
pub struct Origins(BTreeMap<&'static str, ListOrigin>);

#[derive(Clone, Debug, Default)]
struct ListOrigin {
    /// Index in the file of each element read.
    kept: Vec<usize>,
    /// Some element was dropped.
    dropped: bool,
    /// Some element was dropped without a readable name (or the list itself was unreadable).
    lost_name: bool,
}

impl Origins {
    /// The index in the file of element `i` of the list `key` as read.
    pub fn index(&self, key: &str, i: usize) -> usize {
        self.0.get(key).and_then(|l| l.kept.get(i)).copied().unwrap_or(i)
    }
    /// `key[index in the file]`, the place of element `i` of the list `key` as read.
    pub fn place(&self, key: &str, i: usize) -> String {
        format!("{key}[{}]", self.index(key, i))
    }
    /// Whether some element of the list `key` could not be read.
    pub fn dropped_some(&self, key: &str) -> bool {
        self.0.get(key).is_some_and(|l| l.dropped)
    }
    /// Whether an element of the list `key` whose name is not known could not be read.
    pub fn lost_a_name(&self, key: &str) -> bool {
        self.0.get(key).is_some_and(|l| l.lost_name)
    }
}

/// What kind of value the user wrote, for "must be a list, got a string".
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
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
    "processors",
    "buses",
    "tasks",
    "messages",
    "servers",
    "chains",
    "server_graph",
];

/// Reads a whole description within the default limits; see [`load_spec_within`].
pub fn load_spec(doc: Value, diags: &mut Diagnostics) -> Option<Loaded> {
    load_spec_within(doc, &Limits::default(), diags)
}

/// The length of the list `key` of the top mapping (0 when it is not a list).
fn list_len(top: &serde_json::Map<String, Value>, key: &str) -> u64 {
    top.get(key).and_then(Value::as_array).map_or(0, |a| a.len() as u64)
}

/// Reads a whole description; structural problems go to `diags`, and the partial model (every
/// element that could be read) is returned for the semantic checks. A description with more
/// nodes or flows than `limits` allow is refused before any of them is read.
pub fn load_spec_within(doc: Value, limits: &Limits, diags: &mut Diagnostics) -> Option<Loaded> {
    let Value::Object(mut top) = doc else {
        diags.push(Diagnostic::error(
            "(top)",
            format!(
                "a network description must be a mapping with name, end_systems, switches, links and \
                 flows (or processors, buses, tasks and messages), got {}",
                kind(&doc)
            ),
        ));
        return None;
    };
    for key in top.keys() {
        if !TOP_KEYS.contains(&key.as_str()) {
            diags.push(Diagnostic::error(
                if key.is_empty() { "''".to_string() } else { key.clone() },
                format!("unknown key, expected one of {}", TOP_KEYS.join(", ")),
            ));
        }
    }
    let nodes = list_len(&top, "end_systems") + list_len(&top, "switches");
    let flows = list_len(&top, "flows");
    let mut over_limit = false;
    if nodes > limits.nodes {
        diags.error("end_systems", exceeded(format!("{} nodes", grouped(nodes)), "nodes", limits.nodes));
        over_limit = true;
    }
    if flows > limits.flows {
        diags.error("flows", exceeded(format!("{} flows", grouped(flows)), "flows", limits.flows));
        over_limit = true;
    }
    if over_limit {
        return Some(Loaded {
            spec: NetworkSpec::default(),
            broken_names: Vec::new(),
            origins: Origins::default(),
            over_limit,
        });
    }
    let mut broken = Vec::new();
    let mut origins = Origins::default();
    let name = match top.remove("name") {
        Some(Value::String(s)) => s,
        Some(v) => {
            diags.push(Diagnostic::error("name", format!("must be a string, got {}", kind(&v))));
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
        Some(v) => {
            diags.push(Diagnostic::error("description", format!("must be a string, got {}", kind(&v))));
            None
        }
    };
    let defaults = one(&mut top, "defaults", diags).unwrap_or_default();
    let server_graph = one(&mut top, "server_graph", diags);
    let redundancy = one(&mut top, "redundancy", diags).flatten();
    let mut lists = Lists { top: &mut top, diags, broken: &mut broken, origins: &mut origins };
    check_priority_notation(lists.top, lists.diags);
    let classes = lists.read("classes", false, one_error(from_value_at));
    let schedulers = map(lists.top, "schedulers", lists.diags);
    let end_systems = lists.read("end_systems", false, one_error(from_value_at));
    let switches = lists.read("switches", false, one_error(from_value_at));
    let links = lists.read("links", false, one_error(from_value_at));
    let flows = lists.read("flows", false, read_flow);
    let processors = lists.read("processors", false, one_error(from_value_at));
    let buses = lists.read("buses", false, one_error(from_value_at));
    let tasks = lists.read("tasks", false, one_error(from_value_at));
    let messages = lists.read("messages", false, one_error(from_value_at));
    let servers = lists.read("servers", false, one_error(from_value_at));
    let chains = lists.read("chains", false, one_error(from_value_at));
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
            processors,
            buses,
            tasks,
            messages,
            servers,
            chains,
            server_graph,
        },
        broken_names: broken,
        origins,
        over_limit,
    })
}

/// Classes give their priority as `priority` (0 first) or as `pcp` (IEEE 802.1p, 7 first): one
/// file, one notation, or `priority: 3` beside `pcp: 3` would read as the same order by accident.
fn check_priority_notation(top: &serde_json::Map<String, Value>, diags: &mut Diagnostics) {
    let Some(Value::Array(classes)) = top.get("classes") else { return };
    let with = |key: &str| classes.iter().position(|c| c.get(key).is_some());
    if let (Some(p), Some(q)) = (with("priority"), with("pcp")) {
        diags.error(
            format!("classes[{q}].pcp"),
            format!(
                "classes[{p}] gives priority (0 is served first) and this class pcp (IEEE 802.1p, 7 is \
                 served first): give every class's priority the same way"
            ),
        );
    }
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

/// What reading the lists needs: the top mapping and where results go.
struct Lists<'a> {
    top: &'a mut serde_json::Map<String, Value>,
    diags: &'a mut Diagnostics,
    broken: &'a mut Vec<String>,
    origins: &'a mut Origins,
}

impl Lists<'_> {
    /// Reads the list `key` element by element: every unreadable element is reported (all its
    /// problems) and dropped, and its name, if it has one, recorded as broken.
    fn read<T>(
        &mut self,
        key: &'static str,
        required: bool,
        read: impl Fn(Value) -> Result<T, Vec<(String, String)>>,
    ) -> Vec<T> {
        let items = match self.top.remove(key) {
            None | Some(Value::Null) => {
                if required {
                    self.diags.push(Diagnostic::error(key, "missing: must be a list"));
                }
                return Vec::new();
            }
            Some(Value::Array(items)) => items,
            Some(v) => {
                self.diags.push(Diagnostic::error(key, format!("must be a list, got {}", kind(&v))));
                self.origins.0.insert(key, ListOrigin { kept: vec![], dropped: true, lost_name: true });
                return Vec::new();
            }
        };
        let mut origin = ListOrigin::default();
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let name = item.get("name").and_then(Value::as_str).map(str::to_string);
            match read(item) {
                Ok(t) => {
                    out.push(t);
                    origin.kept.push(i);
                }
                Err(problems) => {
                    for (path, msg) in problems {
                        self.diags.push(Diagnostic::error(join(&format!("{key}[{i}]"), &path), msg));
                    }
                    origin.dropped = true;
                    origin.lost_name |= name.is_none();
                    self.broken.extend(name);
                }
            }
        }
        self.origins.0.insert(key, origin);
        out
    }
}

fn one_error<T>(
    read: impl Fn(Value) -> Result<T, (String, String)>,
) -> impl Fn(Value) -> Result<T, Vec<(String, String)>> {
    move |v| read(v).map_err(|e| vec![e])
}

/// Reads one flow. Its traffic keys (`bag`, `lmax`, ...) are read through an enum tagged by `type`,
/// and serde does not say which key of such an enum was wrong; so when the flow does not read,
/// each key is read again alone beside the tag, to report every bad key at its own place.
fn read_flow(value: Value) -> Result<Flow, Vec<(String, String)>> {
    if !value.is_object() {
        return Err(vec![(String::new(), format!("must be a mapping, got {}", kind(&value)))]);
    }
    let first = match Flow::from_value(value.clone()) {
        Ok(flow) => return Ok(flow),
        Err(e) => e,
    };
    let Value::Object(fields) = &value else { return Err(vec![first]) };
    let Some(tag) = fields.get("type") else { return Err(vec![first]) };
    let alone = |key: &str, v: &Value| {
        let mut m = serde_json::Map::new();
        m.insert("type".to_string(), tag.clone());
        m.insert(key.to_string(), v.clone());
        from_value_at::<Traffic>(Value::Object(m)).err()
    };
    // A wrong tag is reported as it is; trying keys beside it would only repeat it.
    if alone("type", tag).is_some_and(|(path, _)| !path.is_empty()) {
        return Err(vec![first]);
    }
    let mut bad: Vec<(String, String)> = Vec::new();
    for (key, v) in fields.iter().filter(|(k, _)| k.as_str() != "type") {
        match alone(key, v) {
            // Well-formed key: only the other keys are missing. Not a traffic key: the common
            // part of the flow has it (or it is unknown, which the first error says).
            None => {}
            Some((_, msg)) if msg.starts_with("missing field `") => {}
            Some((_, msg)) if msg.starts_with(&format!("unknown field `{key}`")) => {}
            Some((path, msg)) => bad.push((join(key, &path), msg)),
        }
    }
    // The first error is kept unless it is one of those just placed at their key.
    let mut out = Vec::new();
    if !(first.0.is_empty() && bad.iter().any(|(_, msg)| *msg == first.1)) {
        out.push(first);
    }
    out.extend(bad);
    Err(out)
}

/// serde does not say which key of a scheduler (an enum tagged by `kind`) was wrong: the key
/// that, read alone beside the tag, gives the same message (as flows' traffic keys are placed).
fn scheduler_key_at_fault(value: &Value, msg: &str) -> String {
    let Value::Object(fields) = value else { return String::new() };
    let Some(tag) = fields.get("kind") else { return String::new() };
    for (key, v) in fields.iter().filter(|(k, _)| k.as_str() != "kind") {
        let alone = serde_json::json!({"kind": tag, key.as_str(): v});
        if let Err((path, m)) = from_value_at::<SchedulerConfig>(alone) {
            if m == msg {
                return join(key, &path);
            }
        }
    }
    String::new()
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
                match from_value_at(v.clone()) {
                    Ok(c) => {
                        out.insert(name, c);
                    }
                    Err((path, msg)) => {
                        let path = if path.is_empty() { scheduler_key_at_fault(&v, &msg) } else { path };
                        // `auto` idle slopes are for the synthesis to choose: say so.
                        let auto = v
                            .get("idle_slopes")
                            .and_then(Value::as_object)
                            .is_some_and(|m| m.values().any(|x| x.as_str() == Some("auto")));
                        let msg = if auto && msg.ends_with("got 'auto'") {
                            format!("{msg}: `auto` slopes are chosen by `rtnetlab configure tsn`")
                        } else {
                            msg
                        };
                        diags.push(Diagnostic::error(join(&format!("{key}.{name}"), &path), msg))
                    }
                }
            }
        }
        Some(v) => diags.push(Diagnostic::error(
            key,
            format!("must be a mapping from name to configuration, got {}", kind(&v)),
        )),
    }
    out
}
