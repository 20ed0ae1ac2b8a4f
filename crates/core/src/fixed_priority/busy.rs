//! Shared machinery of the busy-period analyses: interferers, the utilisation check that decides
//! whether a busy period can close at all, its horizon, and fixed-point iteration under a step
//! budget. Every analysis in this module family goes through here, so none can loop forever.

use std::cmp::Ordering;

use super::Ticks;

/// Any busy period longer than this is reported unbounded (keeps sums far from `i64::MAX`).
pub(crate) const HORIZON_CAP: Ticks = 1 << 61;

/// A sporadic stream seen by the item under analysis: execution or transmission time C,
/// period (minimum inter-arrival) T, release jitter J.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stream {
    pub c: Ticks,
    pub t: Ticks,
    pub j: Ticks,
}

impl Stream {
    fn utilisation(&self) -> f64 {
        self.c as f64 / self.t as f64
    }
}

#[inline]
pub(crate) fn ceil_div(a: Ticks, b: Ticks) -> Ticks {
    debug_assert!(a >= 0 && b > 0);
    a / b + (a % b != 0) as Ticks
}

/// Releases of `s` in a window of length `x` that starts with a release compressed by jitter:
/// ⌈(x + J)/T⌉ (the window is closed on the left, open on the right).
#[inline]
pub(crate) fn releases(x: Ticks, s: &Stream) -> Ticks {
    ceil_div(x.saturating_add(s.j), s.t)
}

/// Σ ⌈(x + J_k)/T_k⌉·C_k.
#[inline]
pub(crate) fn demand(x: Ticks, streams: &[Stream]) -> Ticks {
    streams.iter().fold(0, |acc: Ticks, s| acc.saturating_add(releases(x, s).saturating_mul(s.c)))
}

/// Exact comparison of Σ C/T with 1 in rationals; `None` if the common denominator overflows.
fn exact_utilisation_vs_one(streams: impl Iterator<Item = Stream>) -> Option<Ordering> {
    fn gcd(mut a: i128, mut b: i128) -> i128 {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }
    let (mut num, mut den): (i128, i128) = (0, 1);
    for s in streams {
        let t = s.t as i128;
        let g = gcd(den, t);
        let lcm = (den / g).checked_mul(t)?;
        num = num.checked_mul(lcm / den)?.checked_add((s.c as i128).checked_mul(lcm / t)?)?;
        den = lcm;
        let g = gcd(num, den).max(1);
        (num, den) = (num / g, den / g);
    }
    Some(num.cmp(&den))
}

/// Decides whether the busy period of a priority level can close, and bounds its length.
///
/// `own` and `hp` together hold every stream at the level and above (the subject included).
/// Returns the horizon beyond which the busy period cannot reach, or the reason it never closes.
pub(crate) fn horizon(own: &[Stream], hp: &[Stream], blocking: Ticks) -> Result<Ticks, String> {
    let level = || own.iter().chain(hp);
    let u: f64 = level().map(Stream::utilisation).sum();
    // Float error on the sum is far below 1e-9; only near 1 is the exact comparison needed.
    let vs_one = if (u - 1.0).abs() <= 1e-9 { exact_utilisation_vs_one(level().copied()) } else { None };
    let vs_one = vs_one.unwrap_or(if u > 1.0 { Ordering::Greater } else { u.total_cmp(&1.0) });
    match vs_one {
        Ordering::Greater => {
            Err(format!("overload: utilisation {u:.4} > 1 at this priority level and above"))
        }
        Ordering::Equal => {
            // Demand ≥ B + t + Σ J·C/T > t for every t: jitter or blocking keeps it open.
            if blocking > 0 || level().any(|s| s.j > 0 && s.c > 0) {
                Err("utilisation is 1 at this priority level and above, and jitter or blocking keeps \
                     the busy period open forever"
                    .into())
            } else {
                // Closes at the hyperperiod at the latest; the step budget bounds the work.
                Ok(HORIZON_CAP)
            }
        }
        Ordering::Less => {
            // t = B + Σ⌈(t+J)/T⌉C ≤ B + U·t + Σ C(1 + J/T)  ⇒  t ≤ (B + Σ C(1 + J/T)) / (1 − U).
            let num: f64 =
                blocking as f64 + level().map(|s| s.c as f64 * (1.0 + s.j as f64 / s.t as f64)).sum::<f64>();
            let h = num / (1.0 - u) * (1.0 + 1e-9) + 2.0;
            Ok(if h.is_finite() && h < HORIZON_CAP as f64 { h as Ticks } else { HORIZON_CAP })
        }
    }
}

/// Counts fixed-point steps for one analysed item.
pub(crate) struct Budget {
    left: u64,
    max: u64,
}

impl Budget {
    pub(crate) fn new(max: u64) -> Self {
        Budget { left: max, max }
    }

    /// Takes one step (an iteration, an instance or an instant examined).
    #[inline]
    pub(crate) fn spend(&mut self) -> Result<(), String> {
        if self.left == 0 {
            return Err(format!("no fixed point within {} iterations", self.max));
        }
        self.left -= 1;
        Ok(())
    }
}

/// Least fixed point of `x = base + interference(x)` by iteration from `start`, which must not
/// exceed it (`interference` is non-decreasing). Errors past `horizon` or the budget.
#[inline]
pub(crate) fn least_fixed_point(
    start: Ticks,
    base: Ticks,
    horizon: Ticks,
    budget: &mut Budget,
    interference: impl Fn(Ticks) -> Ticks,
) -> Result<Ticks, String> {
    let mut x = start;
    loop {
        let next = base.saturating_add(interference(x));
        if next <= x {
            debug_assert_eq!(next, x, "iteration started above the fixed point");
            return Ok(x);
        }
        x = next;
        if x > horizon {
            return Err(format!("busy period exceeds its horizon of {horizon} ticks"));
        }
        budget.spend()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TV-001E-3: c (C = 3) under a = (1, 4) and b = (2, 6) iterates 3 → 6 → 7 → 9 → 10 → 10.
    #[test]
    fn tv_001e_3_iteration_sequence() {
        let hp = [s(1, 4, 0), s(2, 6, 0)];
        let seen = std::cell::RefCell::new(Vec::new());
        let r = least_fixed_point(3, 3, 1000, &mut Budget::new(100), |x| {
            seen.borrow_mut().push(x);
            demand(x, &hp)
        });
        assert_eq!(r, Ok(10));
        assert_eq!(seen.into_inner(), [3, 6, 7, 9, 10]);
    }

    fn s(c: Ticks, t: Ticks, j: Ticks) -> Stream {
        Stream { c, t, j }
    }

    #[test]
    fn exact_utilisation_near_one() {
        // 1/3 + 1/3 + 1/3: the float sum is not exactly 1.
        let level = [s(1, 3, 0), s(1, 3, 0), s(1, 3, 0)];
        assert_eq!(exact_utilisation_vs_one(level.iter().copied()), Some(Ordering::Equal));
        assert_eq!(horizon(&level, &[], 0), Ok(HORIZON_CAP));
        assert!(horizon(&level[..1], &level[1..], 1).unwrap_err().contains("utilisation is 1"));
        assert!(horizon(&[s(2, 3, 0)], &[s(1, 2, 0)], 0)
            .unwrap_err()
            .contains("overload: utilisation 1.1667"));
    }

    #[test]
    fn horizon_bounds_the_busy_period() {
        let level = [s(2, 5, 1), s(3, 7, 0)];
        let h = horizon(&level, &[], 2).unwrap();
        let mut budget = Budget::new(1000);
        let t = least_fixed_point(1, 2, h, &mut budget, |x| demand(x, &level)).unwrap();
        assert!(t <= h);
        assert_eq!(t, 2 + demand(t, &level));
    }

    #[test]
    fn budget_stops_iteration() {
        let level = [s(1, 2, 0), s(1, 2, 0)];
        let mut budget = Budget::new(3);
        let r = least_fixed_point(0, 1, HORIZON_CAP, &mut budget, |x| demand(x, &level));
        assert!(r.unwrap_err().contains("within 3 iterations"));
    }
}
