//! Min-plus convolution and deconvolution for the curve classes TFA and SFA produce.

use super::{Curve, Unbounded};
use std::borrow::Cow;

/// Min-plus convolution `(β₁ ⊗ β₂)(t) = inf_{0<=s<=t} β₁(s) + β₂(t − s)` of two convex service
/// curves that are 0 at the origin: the service of the two servers in tandem
/// (Le Boudec–Thiran Theorem 1.4.6; for convex curves the result puts the pieces of both in
/// increasing order of slope, Theorem 3.1.6).
///
/// A curve that is not convex (a left-over service whose convexity a rounding error broke, or
/// that a caller did not make convex) is first replaced by its convex minorant: a lower bound of a
/// service curve is a service curve, so the result stays a (looser) service curve of the tandem.
/// Putting the pieces in increasing order of slope also never goes above the inputs: the result
/// is a lower bound of the exact convolution in every case.
///
/// # Panics
/// If either curve is not 0 at the origin.
pub fn convolve_convex(a: &Curve, b: &Curve) -> Curve {
    assert!(a.at_zero() == 0.0 && b.at_zero() == 0.0, "convolve_convex needs f(0) = 0");
    fn convex(c: &Curve) -> Cow<'_, Curve> {
        if c.is_convex() {
            Cow::Borrowed(c)
        } else {
            Cow::Owned(c.convex_minorant())
        }
    }
    let (a, b) = (convex(a), convex(b));
    // (slope, length) of every finite piece, and the smallest tail slope.
    let mut pieces: Vec<(f64, f64)> = Vec::new();
    for c in [&*a, &*b] {
        for w in c.points().windows(2) {
            let len = w[1].x - w[0].x;
            if len > 0.0 {
                pieces.push(((w[1].y - w[0].y) / len, len));
            }
        }
    }
    let tail = a.tail_slope().min(b.tail_slope());
    pieces.retain(|&(s, _)| s < tail);
    pieces.sort_by(|p, q| p.0.total_cmp(&q.0));
    let mut pts = vec![(0.0, 0.0)];
    let (mut x, mut y) = (0.0, 0.0);
    for (s, len) in pieces {
        x += len;
        y += s * len;
        pts.push((x, y));
    }
    Curve::new(0.0, pts, tail)
}

/// Min-plus convolution of concave arrival curves that are 0 at the origin: their minimum
/// (Le Boudec–Thiran Theorem 3.1.6, property of concave functions).
///
/// # Panics
/// If either curve is not concave or not 0 at the origin.
pub fn convolve_concave(a: &Curve, b: &Curve) -> Curve {
    assert!(a.is_concave() && b.is_concave(), "convolve_concave needs concave curves");
    assert!(a.at_zero() == 0.0 && b.at_zero() == 0.0, "convolve_concave needs f(0) = 0");
    a.min(b)
}

/// Min-plus deconvolution `(α ⊘ β)(t) = sup_{u>=0} α(t + u) − β(u)` of a concave arrival curve
/// by a convex service curve: the output arrival curve of a flow (Le Boudec–Thiran
/// Theorem 1.4.3).
///
/// For fixed `t`, `u ↦ α(t+u) − β(u)` is concave, so its supremum sits at a vertex of `β` (some
/// `u = c`) or where `t + u` is a vertex `a` of `α`. The result is therefore the upper envelope of
/// the curves `t ↦ α(t + c) − β(c)` and `t ↦ α(a) − β(a − t)`, computed exactly.
/// The result is 0 at the origin, as an arrival curve should be.
///
/// Returns [`Unbounded`] when the arrival rate exceeds the service rate.
pub fn deconvolve(alpha: &Curve, beta: &Curve) -> Result<Curve, Unbounded> {
    if alpha.tail_slope() > beta.tail_slope() {
        return Err(Unbounded::new(format!(
            "arrival rate {} > service rate {}",
            alpha.tail_slope(),
            beta.tail_slope()
        )));
    }
    let mut result = alpha.clone();
    for c in distinct_x(beta).into_iter().filter(|&c| c > 0.0) {
        let cand = alpha.shift_left(c).offset(-beta.value(c));
        result = result.max(&cand);
    }
    let beta_x = distinct_x(beta);
    for a in distinct_x(alpha).into_iter().filter(|&a| a > 0.0) {
        let top = alpha.left_limit(a);
        // t ↦ top − β(a − t) on [0, a], constant top − β(0) after (dominated there by α itself).
        let mut pts: Vec<(f64, f64)> = vec![(0.0, top - beta.value(a))];
        for &c in beta_x.iter().rev().filter(|&&c| c < a) {
            pts.push((a - c, top - beta.value(c)));
        }
        pts.push((a, top - beta.value(0.0)));
        pts.sort_by(|p, q| p.0.total_cmp(&q.0));
        result = result.max(&Curve::new(0.0, pts, 0.0));
    }
    Ok(result.with_at_zero(0.0))
}

fn distinct_x(c: &Curve) -> Vec<f64> {
    let mut xs: Vec<f64> = c.points().iter().map(|p| p.x).collect();
    xs.dedup();
    xs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approx(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
    }

    #[test]
    fn rate_latencies_concatenate() {
        // β_{3,2} ⊗ β_{5,1} = β_{3,3}.
        let c = convolve_convex(&Curve::rate_latency(3.0, 2.0), &Curve::rate_latency(5.0, 1.0));
        assert_eq!(c, Curve::rate_latency(3.0, 3.0));
    }

    #[test]
    fn convex_pieces_sorted_by_slope() {
        // max(2(t−1), 5(t−3)) ⊗ β_{3,1}: pieces 0×1, 0×1, 2×(10/3), 3×∞ → latency 2, slope 2 for
        // 10/3, then 3.
        let a = Curve::max_of_rate_latencies(&[(2.0, 1.0), (5.0, 3.0)]);
        let c = convolve_convex(&a, &Curve::rate_latency(3.0, 1.0));
        assert!(approx(c.value(2.0), 0.0));
        assert!(approx(c.value(2.0 + 10.0 / 3.0), 20.0 / 3.0));
        assert!(approx(c.value(10.0), 20.0 / 3.0 + 3.0 * (10.0 - 2.0 - 10.0 / 3.0)));
        assert_eq!(c.tail_slope(), 3.0);
    }

    #[test]
    fn a_non_convex_service_gives_a_convex_lower_bound_of_the_convolution() {
        // f: slopes 5, 1, then 5 (not convex) ⊗ β_{3,1}. The result must be convex and nowhere
        // above inf_s f(s) + β(t − s), taken here on a grid of step 1/1000 (it used to panic).
        let f = Curve::new(0.0, vec![(0.0, 0.0), (1.0, 5.0), (2.0, 6.0)], 5.0);
        assert!(!f.is_convex());
        let b = Curve::rate_latency(3.0, 1.0);
        let c = convolve_convex(&f, &b);
        assert!(c.is_convex());
        for i in 0..=100 {
            let t = i as f64 / 10.0;
            let exact = (0..=(t * 1000.0) as usize)
                .map(|j| j as f64 / 1000.0)
                .map(|s| f.value(s) + b.value(t - s))
                .fold(f64::INFINITY, f64::min);
            assert!(c.value(t) <= exact + 1e-9, "t = {t}: {} > {exact}", c.value(t));
        }
        // Its convex minorant (0,0)-(2,6) then slope 5, after latency 1 at rate 3: 3·(t − 1)
        // for t in [1, 3], reached exactly.
        assert!(approx(c.value(3.0), 6.0));
    }

    #[test]
    fn concave_convolution_is_the_minimum() {
        let c = convolve_concave(&Curve::token_bucket(1.0, 5.0), &Curve::token_bucket(3.0, 1.0));
        assert!(approx(c.value(2.0), 7.0));
        assert!(approx(c.value(1.0), 4.0));
    }

    #[test]
    fn token_bucket_through_rate_latency() {
        // γ_{2,2} ⊘ β_{5,3} = γ_{2, 2 + 2·3}: the single-node case of the NCBounds doctests.
        let out = deconvolve(&Curve::token_bucket(2.0, 2.0), &Curve::rate_latency(5.0, 3.0)).unwrap();
        assert_eq!(out, Curve::token_bucket(2.0, 8.0));
    }

    #[test]
    fn concave_through_rate_latency() {
        // α = min(10 + t, 4t) (kink at 10/3), β = β_{2,1}.
        // Output: sup_u α(t+u) − 2[u−1]^+. For small t the sup is at u = 10/3 − t (the kink),
        // giving 40/3 − 2(10/3 − t − 1) = 26/3 + 2t; beyond, the tail b + r T = 11 + t.
        let a = Curve::min_of_token_buckets(&[(1.0, 10.0), (4.0, 0.0)]);
        let out = deconvolve(&a, &Curve::rate_latency(2.0, 1.0)).unwrap();
        assert!(approx(out.value(0.0), 0.0));
        assert!(approx(out.value(1e-12), 26.0 / 3.0));
        assert!(approx(out.value(1.0), 26.0 / 3.0 + 2.0));
        assert!(approx(out.value(5.0), 16.0));
        assert!(out.is_concave());
    }

    #[test]
    fn unstable_deconvolution_is_unbounded() {
        let e = deconvolve(&Curve::token_bucket(3.0, 5.0), &Curve::rate_latency(2.0, 2.0));
        assert!(e.is_err());
    }
}
