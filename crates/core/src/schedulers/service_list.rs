//! Service lists of list-based WRR (Chaskar & Madhow, "Fair scheduling with tunable latency",
//! IEEE/ACM ToN 11(4), 2003; seed 003 §2, catalogue §4(a)): from integer weights w_i, a list of
//! N = Σ w_i slots in which class i appears w_i times. Used as the layout of an arbitration table
//! (one entry per slot), e.g. DTable-WF2Q.
//!
//! Every function returns class indices in slot order; classes of weight 0 do not appear. Ties
//! (several classes due in the same bin or at the same finish time) go to the lower class index.

/// Simply interleaved (Nested-DRR order): W_max = max w_i bins, class i in bins 1..=w_i, bins
/// listed one after the other. Weights 3, 2, 1: A B C A B A.
pub fn simply_interleaved(weights: &[u32]) -> Vec<usize> {
    let bins = weights.iter().copied().max().unwrap_or(0);
    (1..=bins).flat_map(|b| (0..weights.len()).filter(move |&i| weights[i] >= b)).collect()
}

/// Uniformly interleaved (SRR order): W_LCM = lcm(w_i) bins, class i in bins n·W_LCM/w_i for
/// n = 1..=w_i, bins listed one after the other. Weights 3, 2, 1: A B A A B C. The bins are
/// ordered by n/w_i directly (no LCM, which can overflow).
pub fn uniformly_interleaved(weights: &[u32]) -> Vec<usize> {
    let mut slots: Vec<(u64, u64, usize)> = (0..weights.len())
        .flat_map(|i| (1..=weights[i] as u64).map(move |n| (n, weights[i] as u64, i)))
        .collect();
    slots.sort_by(|&(n, w, i), &(m, v, j)| (n * v).cmp(&(m * w)).then(i.cmp(&j)));
    slots.into_iter().map(|(_, _, i)| i).collect()
}

/// WF²Q interleaved: the order in which WF²Q serves the classes, all backlogged with equal
/// (unit) packets, over one cycle of N = Σ w_i packet times. In the fluid reference (GPS over
/// the cycle, normalised to length 1) packet k of class i starts at (k − 1)/w_i and finishes at
/// k/w_i; at slot m (time m/N) the eligible packets are those started by then, and the one that
/// finishes first goes. Weights 3, 2, 1: A B A B A C. Cost O(N · classes), exact integers.
pub fn wf2q_interleaved(weights: &[u32]) -> Vec<usize> {
    let total: u64 = weights.iter().map(|&w| w as u64).sum();
    // Packets each class has sent in this cycle.
    let mut sent = vec![0u64; weights.len()];
    let mut list = Vec::with_capacity(total as usize);
    for m in 0..total {
        // Eligible: (k − 1)/w_i ≤ m/N with k = sent + 1, i.e. sent·N ≤ m·w_i; the smallest
        // finish k/w_i, compared as k_a·w_b against k_b·w_a.
        let next = (0..weights.len())
            .filter(|&i| {
                let w = weights[i] as u64;
                sent[i] < w && sent[i] * total <= m * w
            })
            .min_by(|&a, &b| {
                let (wa, wb) = (weights[a] as u64, weights[b] as u64);
                ((sent[a] + 1) * wb).cmp(&((sent[b] + 1) * wa)).then(a.cmp(&b))
            })
            // Σ_i (⌊m·w_i/N⌋ + 1) > m packets have started by slot m: one is always eligible.
            .expect("some packet is eligible at every slot of the cycle");
        sent[next] += 1;
        list.push(next);
    }
    list
}

/// The largest distance (in slots, cyclically) between consecutive slots of `class` in `list`:
/// N for a class with one slot, None for a class without one.
pub fn max_distance(list: &[usize], class: usize) -> Option<usize> {
    let at: Vec<usize> = (0..list.len()).filter(|&k| list[k] == class).collect();
    let first = *at.first()?;
    let wrap = first + list.len() - at[at.len() - 1];
    Some(at.windows(2).map(|w| w[1] - w[0]).chain(std::iter::once(wrap)).max().unwrap_or(wrap))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[usize], names: &[&'static str]) -> Vec<&'static str> {
        list.iter().map(|&i| names[i]).collect()
    }

    /// TV-003-7: weights A = 3, B = 2, C = 1.
    #[test]
    fn tv_003_7() {
        let n = ["A", "B", "C"];
        assert_eq!(names(&simply_interleaved(&[3, 2, 1]), &n), ["A", "B", "C", "A", "B", "A"]);
        assert_eq!(names(&uniformly_interleaved(&[3, 2, 1]), &n), ["A", "B", "A", "A", "B", "C"]);
        assert_eq!(names(&wf2q_interleaved(&[3, 2, 1]), &n), ["A", "B", "A", "B", "A", "C"]);
    }

    /// TV-003-8: the WF²Q layout of Table 5's DTable-WF2Q column (NC 6, VO 3, VI 32, CL 13,
    /// EE 6, BE 3, BK 1; ties by VC order).
    #[test]
    fn tv_003_8() {
        let vc = ["NC", "VO", "VI", "CL", "EE", "BE", "BK"];
        let want = "VI CL VI NC VI CL VI EE VI VO VI CL VI NC VI CL VI EE VI BE VI CL VI NC VI CL VI EE VI \
                    VO VI CL VI NC VI CL VI EE VI BE VI CL VI NC VI CL VI EE VI VO VI CL VI BE VI CL VI \
                    NC VI EE VI CL VI BK";
        let got = names(&wf2q_interleaved(&[6, 3, 32, 13, 6, 3, 1]), &vc).join(" ");
        assert_eq!(got, want);
    }

    /// Every layout gives class i exactly w_i slots; WF²Q's keeps every class within one slot of
    /// its fluid share at every prefix (its defining property), on random weights.
    #[test]
    fn counts_and_wf2q_fairness() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for _ in 0..200 {
            let w: Vec<u32> = (0..rng.gen_range(1..=6)).map(|_| rng.gen_range(0..=12)).collect();
            let total: u32 = w.iter().sum();
            for list in [simply_interleaved(&w), uniformly_interleaved(&w), wf2q_interleaved(&w)] {
                assert_eq!(list.len(), total as usize);
                for (i, &wi) in w.iter().enumerate() {
                    assert_eq!(list.iter().filter(|&&c| c == i).count(), wi as usize, "{w:?}");
                }
            }
            let list = wf2q_interleaved(&w);
            let mut got = vec![0f64; w.len()];
            for (m, &c) in list.iter().enumerate() {
                got[c] += 1.0;
                for i in 0..w.len() {
                    let fluid = (m + 1) as f64 * w[i] as f64 / total as f64;
                    assert!((got[i] - fluid).abs() < 1.0 + 1e-9, "{w:?} slot {m}: {got:?}");
                }
            }
        }
    }

    #[test]
    fn distances() {
        let list = [0, 1, 0, 0, 2, 1];
        assert_eq!(max_distance(&list, 0), Some(3));
        assert_eq!(max_distance(&list, 1), Some(4));
        assert_eq!(max_distance(&list, 2), Some(6));
        assert_eq!(max_distance(&list, 3), None);
    }
}
