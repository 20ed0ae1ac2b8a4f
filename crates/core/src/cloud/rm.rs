//! Seed 001G's resource manager (Klein, Maggio, Årzén, Hernández-Rodriguez).
//!
//! Every control period the RM reads each application's matching value f_i and moves the
//! shares c_i (fractions of the capacity, summing to 1) by Eq. 3:
//!
//! c_i ← c_i − ε (f_i − c_i Σ_p f_p)
//!
//! Σ_i of the right-hand side is Σc − ε(Σf − Σc·Σf), so Σc = 1 is kept exactly (Eq. 4). Eq. 3
//! alone can push a share below 0 (or above 1) when ε or |f| is large; the paper gives no rule.
//! Ours: when some share leaves [c_min, 1], the shares become the nearest point (Euclidean) of
//! {c : Σc = 1, c_i ≥ c_min}, the projection onto the shifted simplex. Shares already inside are
//! untouched (the projection of a point of the set is itself), those outside are pulled back, and
//! the others give up the same amount each, so Eq. 4 still holds. Inside [c_min, 1] the shares
//! are divided by their sum after each step, so that rounding errors do not accumulate over
//! thousands of steps. c_min (default 0) keeps a
//! minimum reservation for every application; n·c_min must not exceed 1.
//!
//! f = 1 − t/t̄ is unbounded below: a starved application's t grows without limit, and one step
//! of Eq. 3 then moves every share by ε·|f|, which makes the loop oscillate between starving one
//! application and another (seen in our simulation with f ≈ −9). An optional floor on the
//! matching values the RM reads (`matching_floor`, −1 in the simulated experiments: a response
//! time above 2 t̄ counts as 2 t̄) bounds the step; the plain law (no floor) is the default.

use crate::model::Invalid;
use serde::{Deserialize, Serialize};

/// Eq. 1: f = 1 − t / t̄, the matching value of a response time t against the soft deadline t̄.
/// f ≈ 0: matched; f > 0: surplus capacity; f < 0: shortage.
pub fn matching_value(response_time: f64, deadline: f64) -> f64 {
    1.0 - response_time / deadline
}

/// The RM's settings: its gain ε and the smallest share c_min.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RmSettings {
    pub epsilon: f64,
    #[serde(default)]
    pub min_share: f64,
    /// Matching values below this are read as this (absent: Eq. 3 as written).
    #[serde(default)]
    pub matching_floor: Option<f64>,
}

impl Default for RmSettings {
    /// The paper's ε = 0.2, no minimum share.
    fn default() -> Self {
        RmSettings { epsilon: 0.2, min_share: 0.0, matching_floor: None }
    }
}

/// The starting shares c_i^0 = 1/n.
pub fn initial_shares(n: usize) -> Vec<f64> {
    vec![1.0 / n as f64; n]
}

/// Checks what one step needs: as many matching values as shares, finite numbers, shares in
/// [0, 1] summing to 1, ε > 0, 0 ≤ n·c_min ≤ 1. The error names the argument and the rule.
pub fn check(shares: &[f64], matching: &[f64], s: &RmSettings) -> Result<(), Invalid> {
    if shares.is_empty() {
        return Err(Invalid::new("shares", "at least one application"));
    }
    if matching.len() != shares.len() {
        return Err(Invalid::new(
            "matching",
            format!("one value per application ({} shares), got {}", shares.len(), matching.len()),
        ));
    }
    if let Some((i, c)) = shares.iter().enumerate().find(|(_, c)| !(0.0..=1.0).contains(*c)) {
        return Err(Invalid::new(format!("shares[{i}]"), format!("must be between 0 and 1, got {c}")));
    }
    let sum: f64 = shares.iter().sum();
    if (sum - 1.0).abs() > 1e-9 {
        return Err(Invalid::new("shares", format!("must sum to 1 (Eq. 4 keeps that sum), got {sum}")));
    }
    if let Some((i, f)) = matching.iter().enumerate().find(|(_, f)| !f.is_finite()) {
        return Err(Invalid::new(format!("matching[{i}]"), format!("must be a finite number, got {f}")));
    }
    if !(s.epsilon.is_finite() && s.epsilon > 0.0) {
        return Err(Invalid::new("epsilon", format!("must be positive, got {}", s.epsilon)));
    }
    if !(s.min_share >= 0.0 && s.min_share * shares.len() as f64 <= 1.0 + 1e-12) {
        return Err(Invalid::new(
            "min_share",
            format!(
                "must be at least 0 and at most 1/n = {}, got {}",
                1.0 / shares.len() as f64,
                s.min_share
            ),
        ));
    }
    if let Some(floor) = s.matching_floor {
        if !(floor.is_finite() && floor < 0.0) {
            return Err(Invalid::new("matching_floor", format!("must be a negative number, got {floor}")));
        }
    }
    Ok(())
}

/// Eq. 3 alone, without clamping: what the paper writes.
pub fn law(shares: &[f64], matching: &[f64], epsilon: f64) -> Vec<f64> {
    let total: f64 = matching.iter().sum();
    shares.iter().zip(matching).map(|(c, f)| c - epsilon * (f - c * total)).collect()
}

/// One step of the RM: Eq. 3, then the projection onto {Σc = 1, c ≥ c_min} when a share left
/// [c_min, 1]. Call [`check`] first (the user's input); the simulator's own values always pass.
pub fn step(shares: &[f64], matching: &[f64], s: &RmSettings) -> Vec<f64> {
    let floored: Vec<f64>;
    let matching = match s.matching_floor {
        Some(floor) => {
            floored = matching.iter().map(|f| f.max(floor)).collect();
            &floored
        }
        None => matching,
    };
    let raw = law(shares, matching, s.epsilon);
    if raw.iter().all(|c| *c >= s.min_share && *c <= 1.0) {
        // Eq. 4 holds exactly only in exact arithmetic: dividing by the sum keeps rounding
        // errors from accumulating over thousands of steps.
        let sum: f64 = raw.iter().sum();
        return raw.iter().map(|c| c / sum).collect();
    }
    project(&raw, s.min_share)
}

/// The Euclidean projection of `x` onto {c : Σc = 1, c_i ≥ m} (Held, Wolfe, Crowder's sort
/// method on y = x − m and the simplex of total 1 − n·m): c_i = max(x_i − θ, m) with the θ that
/// makes the total 1.
pub fn project(x: &[f64], m: f64) -> Vec<f64> {
    let n = x.len();
    let budget = 1.0 - m * n as f64;
    let mut y: Vec<f64> = x.iter().map(|v| v - m).collect();
    y.sort_by(|a, b| b.total_cmp(a));
    let mut cumulative = 0.0;
    let mut theta = 0.0;
    for (k, v) in y.iter().enumerate() {
        cumulative += v;
        let t = (cumulative - budget) / (k + 1) as f64;
        if v - t > 0.0 {
            theta = t;
        }
    }
    x.iter().map(|v| (v - m - theta).max(0.0) + m).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tv_001g_1() {
        // TV-001G-1 (seed catalogue): RUBiS t̄ = 1 s, t = 1.5 s → f1 = −0.5; RUBBoS t̄ = 0.5 s,
        // t = 0.4 s → f2 = 0.2; Σf = −0.3, ε = 0.2, c = [0.5, 0.5] → c' = [0.57, 0.43], and on a
        // 4-core platform (Xen caps, 400 = 4 cores) caps 228 and 172.
        let f = [matching_value(1.5, 1.0), matching_value(0.4, 0.5)];
        assert!((f[0] + 0.5).abs() < 1e-12 && (f[1] - 0.2).abs() < 1e-12);
        let c = step(&[0.5, 0.5], &f, &RmSettings::default());
        assert!((c[0] - 0.57).abs() < 1e-12 && (c[1] - 0.43).abs() < 1e-12, "{c:?}");
        assert!((c[0] * 400.0 - 228.0).abs() < 1e-9 && (c[1] * 400.0 - 172.0).abs() < 1e-9);
    }

    #[test]
    fn sum_is_kept_and_shares_stay_in_bounds() {
        // Eq. 4 by hand: Σc' = Σc − ε Σf + ε Σc Σf = 1 when Σc = 1. Large ε and f push Eq. 3
        // outside [0, 1]: c = [0.1, 0.9], f = [2, −1], ε = 0.5: Σf = 1, c1' = 0.1 − 0.5(2 − 0.1)
        // = −0.85, c2' = 0.9 − 0.5(−1 − 0.9) = 1.85 (sum 1). Projected onto the simplex: [0, 1].
        let s = RmSettings { epsilon: 0.5, min_share: 0.0, matching_floor: None };
        let raw = law(&[0.1, 0.9], &[2.0, -1.0], 0.5);
        assert!((raw[0] + 0.85).abs() < 1e-12 && (raw[1] - 1.85).abs() < 1e-12);
        let c = step(&[0.1, 0.9], &[2.0, -1.0], &s);
        assert_eq!(c, vec![0.0, 1.0]);
        // With a floor of 0.05 the projection gives [0.05, 0.95].
        let c = step(
            &[0.1, 0.9],
            &[2.0, -1.0],
            &RmSettings { epsilon: 0.5, min_share: 0.05, matching_floor: None },
        );
        assert!((c[0] - 0.05).abs() < 1e-12 && (c[1] - 0.95).abs() < 1e-12, "{c:?}");
        // A floor of −1 reads f = [2, −1] unchanged, and f = [−9, 0] as [−1, 0]: with c = [0.5,
        // 0.5], ε = 0.2: c1' = 0.5 − 0.2(−1 + 0.5) = 0.6 (without the floor: 0.5 − 0.2(−9 + 4.5)
        // = 1.4, projected to 1).
        let floor = RmSettings { epsilon: 0.2, min_share: 0.0, matching_floor: Some(-1.0) };
        let c = step(&[0.5, 0.5], &[-9.0, 0.0], &floor);
        assert!((c[0] - 0.6).abs() < 1e-12 && (c[1] - 0.4).abs() < 1e-12, "{c:?}");
        assert_eq!(step(&[0.5, 0.5], &[-9.0, 0.0], &RmSettings::default()), vec![1.0, 0.0]);
    }

    #[test]
    fn projection_of_three() {
        // x = [0.8, 0.5, −0.3] (sum 1): θ from the two largest: (1.3 − 1)/2 = 0.15 → [0.65,
        // 0.35, 0], sum 1, and 0.5 − 0.15 > 0 so the second stays in.
        let c = project(&[0.8, 0.5, -0.3], 0.0);
        for (a, b) in c.iter().zip([0.65, 0.35, 0.0]) {
            assert!((a - b).abs() < 1e-12, "{c:?}");
        }
    }

    #[test]
    fn checks_name_the_argument() {
        let s = RmSettings::default();
        assert!(check(&[0.5, 0.5], &[0.1], &s).unwrap_err().to_string().starts_with("matching:"));
        assert!(check(&[0.6, 0.5], &[0.1, 0.0], &s).unwrap_err().to_string().starts_with("shares: must sum"));
        assert!(check(&[1.5, -0.5], &[0.1, 0.0], &s).unwrap_err().to_string().starts_with("shares[0]"));
        let bad = RmSettings { epsilon: 0.0, min_share: 0.0, matching_floor: None };
        assert!(check(&[0.5, 0.5], &[0.1, 0.0], &bad).unwrap_err().to_string().starts_with("epsilon"));
    }
}
