//! Why a bound is infinite.

use std::fmt;

/// A bound that does not exist: the long-term arrival rate is not below what the server can
/// guarantee, so backlog and delay grow without limit. Carries the reason so that reports can
/// name the server and the loads (design note §5: never a number for an overloaded resource).
#[derive(Debug, Clone, PartialEq)]
pub struct Unbounded {
    /// Human-readable cause, e.g. `server s2: cross-traffic rate 10 >= service rate 10`.
    pub reason: String,
}

impl Unbounded {
    /// A new reason.
    pub fn new(reason: impl Into<String>) -> Unbounded {
        Unbounded { reason: reason.into() }
    }

    /// The same cause, prefixed with where it was met.
    pub fn context(self, place: &str) -> Unbounded {
        Unbounded { reason: format!("{place}: {}", self.reason) }
    }
}

impl fmt::Display for Unbounded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unbounded: {}", self.reason)
    }
}

impl std::error::Error for Unbounded {}
