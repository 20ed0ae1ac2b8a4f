//! Analysis results: a bound is a number or an infinity with its reason.

use std::fmt;

use crate::curves::Unbounded;

/// A delay or backlog bound.
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    /// A finite bound (time or data units of the input curves).
    Finite(f64),
    /// No finite bound exists; the reason names the server and the loads.
    Infinite(Unbounded),
}

impl Bound {
    /// The bound as a number, `+∞` when infinite.
    pub fn value(&self) -> f64 {
        match self {
            Bound::Finite(v) => *v,
            Bound::Infinite(_) => f64::INFINITY,
        }
    }

    /// Why the bound is infinite, if it is.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Bound::Finite(_) => None,
            Bound::Infinite(u) => Some(&u.reason),
        }
    }

    /// Sum of two bounds (delays along a path); the first infinity wins.
    pub fn plus(self, other: Bound) -> Bound {
        match (self, other) {
            (Bound::Finite(a), Bound::Finite(b)) => Bound::Finite(a + b),
            (Bound::Infinite(u), _) | (_, Bound::Infinite(u)) => Bound::Infinite(u),
        }
    }

    /// Maximum of two bounds (largest local backlog); the first infinity wins.
    pub fn max(self, other: Bound) -> Bound {
        match (self, other) {
            (Bound::Finite(a), Bound::Finite(b)) => Bound::Finite(a.max(b)),
            (Bound::Infinite(u), _) | (_, Bound::Infinite(u)) => Bound::Infinite(u),
        }
    }
}

impl From<Result<f64, Unbounded>> for Bound {
    fn from(r: Result<f64, Unbounded>) -> Bound {
        match r {
            Ok(v) => Bound::Finite(v),
            Err(u) => Bound::Infinite(u),
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::Finite(v) => write!(f, "{v}"),
            Bound::Infinite(u) => write!(f, "+inf ({})", u.reason),
        }
    }
}

/// Per-flow result of an analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowBounds {
    /// End-to-end delay bound.
    pub delay: Bound,
    /// Backlog bound; its meaning depends on the analysis (see [`super::tfa`], [`super::sfa`]).
    pub backlog: Bound,
}
