//! Delay and backlog bounds: horizontal and vertical deviations between an arrival curve and a
//! service curve.

use super::{Curve, Unbounded};

fn unstable(alpha: &Curve, beta: &Curve) -> Option<Unbounded> {
    (alpha.tail_slope() > beta.tail_slope()).then(|| {
        Unbounded::new(format!("arrival rate {} > service rate {}", alpha.tail_slope(), beta.tail_slope()))
    })
}

/// Vertical deviation `sup_{t>=0} α(t) − β(t)`: the backlog bound of a flow with arrival curve
/// `α` through a server offering `β` (Le Boudec–Thiran Theorem 1.4.1).
///
/// `α − β` is linear between the vertices of both curves, so the supremum is at a vertex (taking
/// both one-sided limits at jumps); it is unbounded only when `α` grows faster than `β`.
pub fn vertical_deviation(alpha: &Curve, beta: &Curve) -> Result<f64, Unbounded> {
    if let Some(u) = unstable(alpha, beta) {
        return Err(u);
    }
    let mut best = (alpha.at_zero() - beta.at_zero()).max(0.0);
    for x in alpha.points().iter().chain(beta.points()).map(|p| p.x) {
        best = best.max(alpha.right_limit(x) - beta.right_limit(x));
        if x > 0.0 {
            best = best.max(alpha.left_limit(x) - beta.left_limit(x));
        }
    }
    Ok(best)
}

/// Horizontal deviation `sup_{t>=0} inf { d >= 0 : α(t) <= β(t + d) }`: the delay bound of a
/// flow with arrival curve `α` through a FIFO-per-flow server offering `β`
/// (Le Boudec–Thiran Theorem 1.4.2).
///
/// `t ↦ β⁻¹(α(t)) − t` is linear between the vertices of `α` and the instants where `α` crosses the
/// level of a vertex of `β`, so the supremum is found at those instants. Unbounded when `α` grows
/// faster than `β` or `β` never reaches the level `α` needs.
pub fn horizontal_deviation(alpha: &Curve, beta: &Curve) -> Result<f64, Unbounded> {
    if let Some(u) = unstable(alpha, beta) {
        return Err(u);
    }
    let never = |y: f64| Unbounded::new(format!("service never reaches {y}"));
    let mut best: f64 = 0.0;
    for p in alpha.points() {
        let ys = if p.x > 0.0 { [alpha.left_limit(p.x), p.y] } else { [p.y, p.y] };
        for y in ys {
            let s = beta.lower_inverse(y).ok_or_else(|| never(y))?;
            best = best.max(s - p.x);
        }
    }
    // Where α leaves the level of a vertex of β (a flat piece of β makes the inverse jump there).
    for q in beta.points() {
        if let Some(t) = alpha.upper_inverse(q.y) {
            let s = beta.upper_inverse(q.y).ok_or_else(|| never(q.y))?;
            best = best.max(s - t);
        }
    }
    Ok(best)
}

/// Latency of a service curve, `sup { t : β(t) <= 0 }`: the delay bound for an arbitrarily small
/// flow. Applied to a blind left-over curve `[β − α]^+` it is the arbitrary-multiplexing delay of
/// an aggregate (the `(b + R T)/(R − r)` of DNC's `delayARB`, Le Boudec–Thiran §6.2).
pub fn latency(beta: &Curve) -> Result<f64, Unbounded> {
    beta.upper_inverse(0.0).ok_or_else(|| Unbounded::new("no service is ever guaranteed"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approx(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
    }

    #[test]
    fn token_bucket_rate_latency_bounds() {
        // γ_{2,2} through β_{5,3}: delay T + b/R = 3.4, backlog b + rT = 8 (NCBounds doctest).
        let a = Curve::token_bucket(2.0, 2.0);
        let b = Curve::rate_latency(5.0, 3.0);
        assert!(approx(horizontal_deviation(&a, &b).unwrap(), 3.4));
        assert!(approx(vertical_deviation(&a, &b).unwrap(), 8.0));
    }

    #[test]
    fn overload_is_unbounded_with_reason() {
        // γ_{5,3} through β_{2,2}: NCBounds reports an infinite bound.
        let a = Curve::token_bucket(5.0, 3.0);
        let b = Curve::rate_latency(2.0, 2.0);
        let e = horizontal_deviation(&a, &b).unwrap_err();
        assert!(e.reason.contains("arrival rate 5"), "{e}");
        assert!(vertical_deviation(&a, &b).is_err());
    }

    #[test]
    fn equal_rates_stay_bounded() {
        // γ_{10,50} through β_{10,10}: delay 10 + 5 = 15, backlog 50 + 100 = 150 (DNC S_1SC_2F_1AC).
        let a = Curve::token_bucket(10.0, 50.0);
        let b = Curve::rate_latency(10.0, 10.0);
        assert!(approx(horizontal_deviation(&a, &b).unwrap(), 15.0));
        assert!(approx(vertical_deviation(&a, &b).unwrap(), 150.0));
    }

    #[test]
    fn concave_arrival_convex_service() {
        // α = min(10 + t, 4t), β = max(2(t − 1), 5(t − 3)) (kink at 13/3, value 20/3).
        // While 4t <= 20/3, β⁻¹(4t) = 2t + 1 and the delay t + 1 grows; past the level 20/3 of
        // β's kink, β⁻¹(4t) = 3 + 4t/5 and the delay 3 − t/5 shrinks: sup = 8/3 at t = 5/3.
        let a = Curve::min_of_token_buckets(&[(1.0, 10.0), (4.0, 0.0)]);
        let b = Curve::max_of_rate_latencies(&[(2.0, 1.0), (5.0, 3.0)]);
        assert!(approx(horizontal_deviation(&a, &b).unwrap(), 8.0 / 3.0));
        // Backlog: α − β is 4t, then 2t + 2 up to the kink of α (26/3 at 10/3), then decreasing.
        assert!(approx(vertical_deviation(&a, &b).unwrap(), 26.0 / 3.0));
    }

    #[test]
    fn latency_of_blind_residual() {
        // [β_{10,10} − γ_{9,35}]^+ starts at (35 + 100)/(10 − 9) = 135 (DNC S_1SC_2F_2AC TFA-ARB).
        let r = Curve::rate_latency(10.0, 10.0).sub(&Curve::token_bucket(9.0, 35.0)).positive_part();
        assert!(approx(latency(&r).unwrap(), 135.0));
        assert!(latency(&Curve::zero()).is_err());
    }
}

#[cfg(test)]
mod brute_force_checks {
    use crate::curves::*;
    use rand::{Rng, SeedableRng};

    fn numeric_hdev(a: &Curve, b: &Curve, horizon: f64) -> f64 {
        let n = 4000;
        let mut best: f64 = 0.0;
        for i in 0..=n {
            let t = horizon * i as f64 / n as f64;
            let y = if t == 0.0 { a.right_limit(0.0) } else { a.value(t) };
            // smallest s >= t with b(s) >= y, by bisection on [t, t + horizon*4]
            let (mut lo, mut hi) = (t, t + horizon * 8.0);
            if b.value(hi) < y {
                return f64::INFINITY;
            }
            for _ in 0..80 {
                let m = 0.5 * (lo + hi);
                if b.value(m) >= y {
                    hi = m
                } else {
                    lo = m
                }
            }
            best = best.max(hi - t);
        }
        best
    }

    #[test]
    fn horizontal_deviation_matches_brute_force() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for case in 0..300 {
            let c = 100.0;
            let mut alpha = Curve::zero();
            for _ in 0..rng.gen_range(1..4) {
                let tb = Curve::token_bucket(rng.gen_range(1.0..10.0), rng.gen_range(1.0..50.0));
                let line = Curve::token_bucket(rng.gen_range(20.0..100.0), rng.gen_range(0.5..10.0));
                alpha = alpha.add(&tb.min(&line));
            }
            let beta0 = Curve::rate_latency(c, rng.gen_range(0.0..1.0));
            let mut high = Curve::zero();
            for _ in 0..rng.gen_range(0..3) {
                let tb = Curve::token_bucket(rng.gen_range(1.0..10.0), rng.gen_range(1.0..50.0));
                let line = Curve::token_bucket(rng.gen_range(20.0..100.0), rng.gen_range(0.5..10.0));
                high = high.add(&tb.min(&line));
            }
            let beta = static_priority_residual(&beta0, &high, rng.gen_range(0.0..10.0)).unwrap();
            let h = horizontal_deviation(&alpha, &beta).unwrap();
            let l = latency(&arbitrary_residual(&beta, &alpha).unwrap()).unwrap();
            let num = numeric_hdev(&alpha, &beta, 10.0);
            assert!(
                (h - num).abs() < 1e-3 * (1.0 + num),
                "case {case}: hdev {h} numeric {num}\nalpha {alpha:?}\nbeta {beta:?}"
            );
            assert!(
                h <= l + 1e-9,
                "case {case}: fifo {h} > blind {l} numeric {num}\nalpha {alpha:?}\nbeta {beta:?}\nres {:?}",
                arbitrary_residual(&beta, &alpha)
            );
        }
    }
}
