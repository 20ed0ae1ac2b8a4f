//! A value of the engine's input that breaks a rule: where it is and which rule.

/// A value that breaks a rule: its place (a path such as `scenario.flows[2].sizes`, or the name
/// of an argument) and the rule, written `place: rule`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{place}: {rule}")]
pub struct Invalid {
    pub place: String,
    pub rule: String,
}

impl Invalid {
    pub fn new(place: impl Into<String>, rule: impl Into<String>) -> Self {
        Invalid { place: place.into(), rule: rule.into() }
    }
}

/// The one line (`place: rule`) where callers still carry text.
impl From<Invalid> for String {
    fn from(e: Invalid) -> String {
        e.to_string()
    }
}
