//! Problems found in a network description: one line each, naming the place and the rule.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
}

/// One problem: where (`flows[3].bag`) and what rule it breaks.
#[derive(Clone, Debug, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub place: String,
    pub message: String,
}

impl Diagnostic {
    pub fn error(place: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic { severity: Severity::Error, place: place.into(), message: message.into() }
    }
    pub fn warning(place: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic { severity: Severity::Warning, place: place.into(), message: message.into() }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tag = match self.severity {
            Severity::Error => "",
            Severity::Warning => "warning: ",
        };
        write!(f, "{tag}{}: {}", self.place, self.message)
    }
}

/// Every problem of one run, in the order found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Adds a problem; one without a place (an empty key's, say) is placed at the top, and line
    /// breaks the file's text brings into it (a name quoted with one) are written as `\n`, so
    /// that every problem stays one line.
    pub fn push(&mut self, mut d: Diagnostic) {
        if d.place.is_empty() {
            d.place = "(top)".to_string();
        }
        for text in [&mut d.place, &mut d.message] {
            if text.contains(['\n', '\r']) {
                *text = text.replace('\n', "\\n").replace('\r', "\\r");
            }
        }
        self.0.push(d);
    }
    pub fn error(&mut self, place: impl Into<String>, message: impl Into<String>) {
        self.push(Diagnostic::error(place, message));
    }
    pub fn warning(&mut self, place: impl Into<String>, message: impl Into<String>) {
        self.push(Diagnostic::warning(place, message));
    }
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter().filter(|d| d.severity == Severity::Error)
    }
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter().filter(|d| d.severity == Severity::Warning)
    }

    /// Keeps the first `n` errors and the first `n` warnings, in order, and counts the rest in
    /// one last line each: a file with 200,000 mistakes is told about in a screenful.
    pub fn cap(&mut self, n: usize) {
        let (mut errors, mut warnings) = (0usize, 0usize);
        self.0.retain(|d| {
            let seen = if d.severity == Severity::Error { &mut errors } else { &mut warnings };
            *seen += 1;
            *seen <= n
        });
        let more = |count: usize, what: &str| {
            format!(
                "{} more {what} not listed (list up to N with --limit errors=N)",
                super::limits::grouped((count - n) as u64)
            )
        };
        if errors > n {
            self.error("(more)", more(errors, "errors"));
        }
        if warnings > n {
            self.warning("(more)", more(warnings, "warnings"));
        }
    }
}

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
