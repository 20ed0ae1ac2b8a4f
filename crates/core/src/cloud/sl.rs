//! An SL-aware application's private service-level controller g_i (seed 001G, Eq. 2):
//! s^{j+1} = g_i(s^j, f^j). The paper leaves g open (its ref. [17]); ours is a PI rule on the
//! matching value in velocity form,
//!
//! s^{j+1} = clamp(s^j + k_p (f^j − f^{j−1}) + k_i f^j, s_min, s_max),
//!
//! which drives f to 0 (the integral term) and, being incremental, winds up no further than the
//! clamp: at s = 1 with a surplus it stays at 1 and leaves as soon as f turns negative.

use crate::model::Invalid;
use serde::{Deserialize, Serialize};

/// The PI gains and the SL's range (default [0, 1], the SL being a probability).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SlController {
    pub kp: f64,
    pub ki: f64,
    pub min_sl: f64,
    pub max_sl: f64,
}

impl Default for SlController {
    fn default() -> Self {
        SlController { kp: 0.1, ki: 0.3, min_sl: 0.0, max_sl: 1.0 }
    }
}

impl SlController {
    /// g(s, f) given the previous matching value.
    pub fn next(&self, sl: f64, f: f64, previous_f: f64) -> f64 {
        (sl + self.kp * (f - previous_f) + self.ki * f).clamp(self.min_sl, self.max_sl)
    }

    pub fn check(&self) -> Result<(), Invalid> {
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        if !ok(self.kp) || !ok(self.ki) {
            return Err(Invalid::new(
                "kp, ki",
                format!("must be finite and at least 0, got {} and {}", self.kp, self.ki),
            ));
        }
        if !(0.0 <= self.min_sl && self.min_sl <= self.max_sl && self.max_sl <= 1.0) {
            return Err(Invalid::new(
                "min_sl, max_sl",
                format!("need 0 <= min_sl <= max_sl <= 1, got {} and {}", self.min_sl, self.max_sl),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pi_rule_by_hand_and_clamped() {
        let g = SlController { kp: 0.1, ki: 0.3, min_sl: 0.0, max_sl: 1.0 };
        // s = 0.5, f = 0.2, previous f = 0.1: 0.5 + 0.1·0.1 + 0.3·0.2 = 0.57.
        assert!((g.next(0.5, 0.2, 0.1) - 0.57).abs() < 1e-12);
        // A large surplus at s = 0.9: 0.9 + 0.1·0.9 + 0.3·0.9 = 1.26 → 1.
        assert_eq!(g.next(0.9, 0.9, 0.0), 1.0);
        // A deep shortage: clamped at 0.
        assert_eq!(g.next(0.1, -3.0, 0.0), 0.0);
        // Matched (f = 0 twice): unchanged.
        assert_eq!(g.next(0.4, 0.0, 0.0), 0.4);
    }
}
