//! What a description may cost before it is validated: its file size, how deep its values nest,
//! how many values it holds (aliases expanded), and how many nodes, flows and paths it describes.
//!
//! Each limit has a name users write to raise it (`--limit flows=2000000`, or the environment
//! variable `RTNETLAB_LIMITS=flows=2000000,depth=100`); every refusal names the limit and says how.
//! The defaults leave room for real networks (a million flows) and stop hostile files (an alias
//! bomb, a file nested a hundred thousand levels deep) in a fraction of a second.

use serde::Serialize;
use std::fmt;

/// Deepest nesting a limit may allow: reading and dropping nested values recurses, and beyond
/// this the stack of a thread of 2 MB could run out.
pub const MAX_DEPTH: u64 = 256;

/// The limits in force; `Default` gives the documented defaults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Bytes of the file.
    pub size: u64,
    /// Nesting of lists and mappings (the top mapping is level 1).
    pub depth: u64,
    /// Values in the document (every scalar, list and mapping), aliases expanded.
    pub values: u64,
    /// Values copied by YAML aliases and merge keys.
    pub aliases: u64,
    /// Nodes: end systems and switches.
    pub nodes: u64,
    /// Flows.
    pub flows: u64,
    /// Paths: one per flow, destination and plane.
    pub paths: u64,
    /// Problems listed for one description (errors and warnings each); the rest are counted.
    pub errors: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            size: 512 << 20,
            depth: 64,
            values: 50_000_000,
            aliases: 1_000_000,
            nodes: 1_000_000,
            flows: 1_000_000,
            paths: 10_000_000,
            errors: 100,
        }
    }
}

/// The names of the limits, in the order of [`Limits`].
pub const NAMES: &[&str] = &["size", "depth", "values", "aliases", "nodes", "flows", "paths", "errors"];

/// How a user raises the limit `name`, for the end of a refusal.
pub fn how_to_raise(name: &str) -> String {
    format!("raise it with --limit {name}=N or RTNETLAB_LIMITS={name}=N")
}

/// A count with thousands separators, as limits are written in messages.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Why the limits refuse: a setting that is wrong, or a description that passes one of them.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// A `name=value` setting of the limits is wrong (the message names it).
    #[error("{0}")]
    Setting(String),
    /// What a description holds passes the limit `limit` (one of [`NAMES`]); the message says
    /// how to raise it.
    #[error("{message}")]
    Exceeded { limit: &'static str, message: String },
}

/// The one line, where callers still carry text.
impl From<LimitError> for String {
    fn from(e: LimitError) -> String {
        e.to_string()
    }
}

/// The refusal when `what` (e.g. "1,000,001 flows") passes the limit `name`.
pub fn exceeded(what: impl fmt::Display, name: &str, limit: u64) -> String {
    format!("{what}, more than the limit of {} ({})", grouped(limit), how_to_raise(name))
}

impl Limits {
    fn slot(&mut self, name: &str) -> Option<&mut u64> {
        Some(match name {
            "size" => &mut self.size,
            "depth" => &mut self.depth,
            "values" => &mut self.values,
            "aliases" => &mut self.aliases,
            "nodes" => &mut self.nodes,
            "flows" => &mut self.flows,
            "paths" => &mut self.paths,
            "errors" => &mut self.errors,
            _ => return None,
        })
    }

    /// Applies one `name=value` setting. `size` also takes a data size (`2GiB`); every limit
    /// takes digits with `_` or `,` between them.
    pub fn set(&mut self, assignment: &str) -> Result<(), LimitError> {
        self.set_one(assignment).map_err(LimitError::Setting)
    }

    fn set_one(&mut self, assignment: &str) -> Result<(), String> {
        let Some((name, value)) = assignment.split_once('=') else {
            return Err(format!("expected NAME=VALUE (limits: {}), got '{assignment}'", NAMES.join(", ")));
        };
        let (name, value) = (name.trim(), value.trim());
        let Some(slot) = self.slot(name) else {
            return Err(format!("unknown limit '{name}' (limits: {})", NAMES.join(", ")));
        };
        let digits: String = value.chars().filter(|c| !matches!(c, '_' | ',')).collect();
        let parsed = match digits.parse::<u64>() {
            Ok(n) => Some(n),
            Err(_) if name == "size" => bytes(&digits),
            Err(_) => None,
        };
        let Some(n) = parsed else {
            let what =
                if name == "size" { "a number of bytes or a size such as 2GiB" } else { "a whole number" };
            return Err(format!("{name}: expected {what}, got '{value}'"));
        };
        if n == 0 {
            return Err(format!("{name}: must be at least 1, got {value}"));
        }
        if name == "depth" && n > MAX_DEPTH {
            return Err(format!(
                "depth: at most {MAX_DEPTH} (deeper nesting could exhaust the stack), got {value}"
            ));
        }
        *slot = n;
        Ok(())
    }

    /// The defaults with each `name=value` of `assignments` applied in order; an assignment may
    /// hold several, separated by commas or spaces (as the environment variable does).
    pub fn from_assignments<S: AsRef<str>>(assignments: &[S]) -> Result<Limits, LimitError> {
        let mut limits = Limits::default();
        for a in assignments {
            for one in split_assignments(a.as_ref()) {
                limits.set(&one)?;
            }
        }
        Ok(limits)
    }
}

/// A size in bytes written with a unit: `512MiB`, `2GiB`, `100kB`, `1GB`.
fn bytes(text: &str) -> Option<u64> {
    const UNITS: &[(&str, u64)] = &[
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
        ("GB", 1_000_000_000),
        ("MB", 1_000_000),
        ("kB", 1000),
        ("B", 1),
    ];
    let (unit, factor) = UNITS.iter().find(|(u, _)| text.ends_with(u))?;
    let number: u64 = text[..text.len() - unit.len()].trim().parse().ok()?;
    number.checked_mul(*factor)
}

/// `flows=2,000,000 depth=100` or `flows=2000000,depth=100`: a comma starts a new assignment only
/// when a name and `=` follow it, so `2,000,000` stays one number.
fn split_assignments(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        for piece in word.split(',') {
            match out.last_mut() {
                Some(last) if !piece.contains('=') => {
                    last.push(',');
                    last.push_str(piece);
                }
                _ if piece.is_empty() => {}
                _ => out.push(piece.to_string()),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_apply_in_order_and_refuse_mistakes_by_name() {
        let l = Limits::from_assignments(&["flows=2,000,000 depth=100", "size=2GiB,errors=5"]).unwrap();
        assert_eq!((l.flows, l.depth, l.size, l.errors), (2_000_000, 100, 2 << 30, 5));
        assert_eq!(l.nodes, Limits::default().nodes);
        assert_eq!(Limits::from_assignments(&["size=1_000"]).unwrap().size, 1000);
        let err = |a: &str| Limits::from_assignments(&[a]).unwrap_err().to_string();
        assert!(err("flow=3").starts_with("unknown limit 'flow' (limits: size, depth,"));
        assert_eq!(err("flows=many"), "flows: expected a whole number, got 'many'");
        assert_eq!(err("flows=0"), "flows: must be at least 1, got 0");
        assert!(err("depth=5000").starts_with("depth: at most 256"));
        assert!(err("flows").starts_with("expected NAME=VALUE"));
    }

    #[test]
    fn refusals_name_the_limit_and_how_to_raise_it() {
        assert_eq!(grouped(1_000_000), "1,000,000");
        assert_eq!(grouped(999), "999");
        assert_eq!(
            exceeded("1,000,001 flows", "flows", 1_000_000),
            "1,000,001 flows, more than the limit of 1,000,000 (raise it with --limit flows=N or \
             RTNETLAB_LIMITS=flows=N)"
        );
    }
}
