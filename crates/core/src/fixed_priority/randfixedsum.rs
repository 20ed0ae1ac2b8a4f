//! Stafford's RandFixedSum (Roger Stafford, 2006, MATLAB Central; used for task-set generation
//! by Emberson, Stafford & Davis, "Techniques for the synthesis of multiprocessor tasksets",
//! WATERS 2010): n values in [a, b] summing to s, uniformly distributed over that slice of the
//! cube.
//!
//! After rescaling to the unit cube (values in [0, 1], sum s' = (s − n·a)/(b − a)), the slice
//! {Σ x = s'} ∩ [0, 1]^n is cut into simplices. A table of relative simplex volumes, built by a
//! recurrence on the dimension, gives at each step the probability of moving to the next slab
//! (integer part of the remaining sum); within the chosen simplex a point is drawn uniformly
//! through the product of powers u^(1/i). A random permutation of the coordinates finishes the
//! draw. This is a port of the algorithm as published, with 0-based indices.

use rand::distributions::Open01;
use rand::seq::SliceRandom;
use rand::Rng;

/// `n` values in `[lo, hi]` summing to `sum`, uniform over the set of such vectors. `None` when
/// no such vector exists (`sum` outside `[n·lo, n·hi]`, `lo > hi`, `n = 0`, or non-finite input).
pub fn randfixedsum<R: Rng + ?Sized>(n: usize, sum: f64, lo: f64, hi: f64, rng: &mut R) -> Option<Vec<f64>> {
    if n == 0 || !(lo.is_finite() && hi.is_finite() && sum.is_finite()) || lo > hi {
        return None;
    }
    let nf = n as f64;
    let slack = 1e-9 * nf * (hi - lo).abs().max(lo.abs()).max(hi.abs()).max(1.0);
    if sum < nf * lo - slack || sum > nf * hi + slack {
        return None;
    }
    if n == 1 || hi == lo {
        return Some(vec![(sum / nf).clamp(lo, hi); n]);
    }

    // Unit cube: y = (x − lo)/(hi − lo), Σ y = s ∈ [k, k + 1].
    let s = ((sum - nf * lo) / (hi - lo)).clamp(0.0, nf);
    let k = (s.floor() as usize).min(n - 1);
    let s = s.clamp(k as f64, k as f64 + 1.0);
    // Distances of s to the slab boundaries, per dimension offset.
    let s1: Vec<f64> = (0..n).map(|i| s - (k as f64 - i as f64)).collect();
    let s2: Vec<f64> = (0..n).map(|i| (k + n - i) as f64 - s).collect();

    // w[i][c]: scaled volumes for dimension i + 1 (started at the largest double so that the
    // recurrence uses the full range); t[i][c]: probability of staying in slab c.
    let tiny = f64::from_bits(1);
    let mut w = vec![vec![0.0f64; n + 1]; n];
    w[0][1] = f64::MAX;
    let mut t = vec![vec![0.0f64; n]; n - 1];
    for i in 1..n {
        let m = (i + 1) as f64;
        for c in 0..=i {
            let up = w[i - 1][c + 1] * s1[c] / m;
            let down = w[i - 1][c] * s2[n - i - 1 + c] / m;
            w[i][c + 1] = up + down;
            let total = w[i][c + 1] + tiny;
            // Computed from the larger side to keep the rounding small; 0 on the left edge
            // and 1 on the right when both terms vanish.
            t[i - 1][c] = if s2[n - i - 1 + c] > s1[c] { down / total } else { 1.0 - up / total };
        }
    }

    // Walk down the dimensions: choose the slab transition, then the simplex coordinate.
    let mut x = vec![0.0f64; n];
    let (mut rest, mut slab) = (s, k);
    let (mut acc, mut prod) = (0.0f64, 1.0f64);
    for i in (1..n).rev() {
        let p = t[i - 1][slab];
        // Exact arithmetic forces the edges (slab 0 cannot step down, slab i must); the guards
        // only absorb rounding.
        let step = if slab == 0 {
            false
        } else if slab == i {
            true
        } else {
            rng.sample::<f64, _>(Open01) <= p
        };
        let sx = rng.sample::<f64, _>(Open01).powf(1.0 / i as f64);
        acc += (1.0 - sx) * prod * rest / (i + 1) as f64;
        prod *= sx;
        x[n - 1 - i] = acc + prod * step as u8 as f64;
        if step {
            rest -= 1.0;
            slab -= 1;
        }
    }
    x[n - 1] = acc + prod * rest;

    x.shuffle(rng);
    Some(x.into_iter().map(|y| (lo + (hi - lo) * y).clamp(lo, hi)).collect())
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    #[test]
    fn sums_and_bounds_hold() {
        let mut rng = ChaCha8Rng::seed_from_u64(2006);
        for _ in 0..2000 {
            let n = rng.gen_range(1..=40);
            let lo: f64 = rng.gen_range(0.0..0.3);
            let hi = lo + rng.gen_range(0.0..1.0);
            let sum = rng.gen_range(n as f64 * lo..=n as f64 * hi);
            let x = randfixedsum(n, sum, lo, hi, &mut rng).unwrap();
            assert_eq!(x.len(), n);
            assert!((x.iter().sum::<f64>() - sum).abs() <= 1e-9 * sum.max(1.0), "{x:?} vs {sum}");
            assert!(x.iter().all(|&v| (lo..=hi).contains(&v)), "{x:?} outside [{lo}, {hi}]");
        }
        // The seed 001E uses: 50 application densities in [0.1, 0.9] summing to 9.
        let x = randfixedsum(50, 9.0, 0.1, 0.9, &mut rng).unwrap();
        assert!((x.iter().sum::<f64>() - 9.0).abs() < 1e-9);
        assert!(x.iter().all(|&v| (0.1..=0.9).contains(&v)));
    }

    #[test]
    fn impossible_requests_are_none() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(randfixedsum(3, 3.1, 0.0, 1.0, &mut rng), None);
        assert_eq!(randfixedsum(3, -0.1, 0.0, 1.0, &mut rng), None);
        assert_eq!(randfixedsum(0, 0.0, 0.0, 1.0, &mut rng), None);
        assert_eq!(randfixedsum(2, 1.0, 1.0, 0.0, &mut rng), None);
        assert_eq!(randfixedsum(3, 1.5, 0.5, 0.5, &mut rng), Some(vec![0.5; 3]));
        assert_eq!(randfixedsum(1, 0.3, 0.0, 1.0, &mut rng), Some(vec![0.3]));
    }

    /// For n = 3, s = 1.5 in [0, 1] the slice is a hexagon; the first coordinate then has the
    /// density ∝ 0.5 + x on [0, 0.5] and 1.5 − x on [0.5, 1]: quarter bins of probability
    /// 5/24, 7/24, 7/24, 5/24.
    #[test]
    fn marginal_matches_the_hexagon() {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        let draws = 40_000;
        let mut bins = [0usize; 4];
        for _ in 0..draws {
            let x = randfixedsum(3, 1.5, 0.0, 1.0, &mut rng).unwrap();
            bins[((x[0] * 4.0) as usize).min(3)] += 1;
        }
        for (got, p) in bins.iter().zip([5.0 / 24.0, 7.0 / 24.0, 7.0 / 24.0, 5.0 / 24.0]) {
            let f = *got as f64 / draws as f64;
            assert!((f - p).abs() < 0.01, "bins {bins:?}");
        }
    }

    /// Uniform on the slice: the same law as rejection sampling (draw n − 1 coordinates
    /// uniformly, set the last by the sum, keep it if in bounds). Compared on the deciles of the
    /// largest coordinate, for a slice that cuts several corners of the cube.
    #[test]
    fn agrees_with_rejection_sampling() {
        let (n, sum, lo, hi) = (5, 1.3, 0.01, 0.9);
        let draws = 20_000;
        let mut rng = ChaCha8Rng::seed_from_u64(2010);
        let mut fixed: Vec<f64> = (0..draws)
            .map(|_| randfixedsum(n, sum, lo, hi, &mut rng).unwrap().into_iter().fold(0.0, f64::max))
            .collect();
        let mut rejected = Vec::with_capacity(draws);
        while rejected.len() < draws {
            let head: Vec<f64> = (0..n - 1).map(|_| rng.gen_range(lo..hi)).collect();
            let last = sum - head.iter().sum::<f64>();
            if (lo..=hi).contains(&last) {
                rejected.push(head.into_iter().fold(last, f64::max));
            }
        }
        fixed.sort_by(f64::total_cmp);
        rejected.sort_by(f64::total_cmp);
        for d in 1..10 {
            let (a, b) = (fixed[d * draws / 10], rejected[d * draws / 10]);
            assert!((a - b).abs() < 0.01, "decile {d}: {a} vs {b}");
        }
        // A naive draw (uniform values scaled to the sum) is biased and fails the same check.
        let mut naive: Vec<f64> = (0..draws)
            .map(|_| {
                let v: Vec<f64> = (0..n).map(|_| rng.gen_range(0.0..1.0)).collect();
                let total: f64 = v.iter().sum();
                v.into_iter().map(|x| x * sum / total).fold(0.0, f64::max)
            })
            .collect();
        naive.sort_by(f64::total_cmp);
        assert!((1..10).any(|d| (naive[d * draws / 10] - rejected[d * draws / 10]).abs() > 0.02));
    }
}
