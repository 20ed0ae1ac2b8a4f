//! What the three arbitration-table schedulers (AS basic, IBA weighted, DTable) share: entries
//! resolved to class indices, the search for the next entry of a backlogged class, and the
//! worst-case service model built from the gaps between a class's entries.
//!
//! Service model (derived step by step in docs/ANALYSIS.md, "Table schedulers"). Let class i be
//! served at entries q_0 .. q_{n−1} (table order) and g_a be the entries strictly between q_{a−1}
//! and q_a (cyclically). Each kind says, in wire bits:
//!
//! * X_k: the most a visit of entry k of another class sends; X(g) = Σ_{k ∈ g} X_k, X = Σ_g X(g);
//! * A_a: the least a visit of q_a sends while i is backlogged; P = Σ_a A_a;
//! * K: what the other classes may send beyond Σ X_k (their carried deficits);
//! * D: how far i's service may lag behind Σ A_a (its own deficit);
//! * L_i: i's largest frame, which may be on the wire when i becomes backlogged again.
//!
//! Then, with r = X / P, class i is guaranteed β_{ρ,Θ} with ρ = P·C / (P + X) and
//!
//!   C·Θ = L_i + K + max( max_a X(g_a),  D·r + max_e [U(e+1) + r·A_e] − min_a U(a) ),
//!
//! U(0) = 0, U(a+1) = U(a) + X(g_a) − r·A_a (periodic: U(n) = 0). The first term of the max is the
//! wait before the first visit; the second the largest excess of the others' work over what the
//! rate ρ owes i, over any run of consecutive visits.

use super::{ClassAtPort, ClassQueues, LatencyRate};
use crate::model::{TableEntry, TrafficClass};

/// One entry of an arbitration table as the schedulers run it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Class index in the network.
    pub class: usize,
    /// The entry's weight in Ethernet frame bits (at least 1).
    pub weight: u64,
}

/// The configured entries resolved against the network's classes, weights rounded to whole bits
/// (at least one). Entries naming an unknown class (validation refuses them) are dropped.
pub fn resolve(entries: &[TableEntry], classes: &[TrafficClass]) -> Vec<Entry> {
    entries
        .iter()
        .filter_map(|e| {
            let class = classes.iter().position(|c| c.name == e.class)?;
            Some(Entry { class, weight: e.weight.bits().round().max(1.0) as u64 })
        })
        .collect()
}

/// Whether each of `n_classes` class indices has at least one entry (its frames are scheduled).
pub(crate) fn listed(entries: &[Entry], n_classes: usize) -> Vec<bool> {
    (0..n_classes).map(|c| entries.iter().any(|e| e.class == c)).collect()
}

/// The first entry after `position` (cyclically, `position` itself last) whose class has frames
/// waiting. O(entries) at worst, as the hardware's table search (seed 003 §3.1).
pub(crate) fn next_backlogged<T: Clone>(
    entries: &[Entry],
    position: usize,
    queues: &ClassQueues<T>,
) -> Option<usize> {
    let n = entries.len();
    (1..=n).map(|k| (position + k) % n).find(|&k| !queues.classes[entries[k].class].is_empty())
}

/// What a table kind guarantees, as the service model of the module comment needs it (wire bits).
pub(crate) struct VisitBounds<'a> {
    /// Entries of the classes present at the port: (index into `classes`, weight in frame bits).
    pub entries: &'a [(usize, f64)],
    /// X_k: the most one visit of entry k (of another class) may send.
    pub most: &'a dyn Fn(usize) -> f64,
    /// A_a: the least one visit of entry k (of the tagged class) sends while it is backlogged.
    pub least: &'a dyn Fn(usize) -> f64,
    /// K: what the other classes may send beyond Σ X_k.
    pub carry: f64,
    /// D: how far the tagged class's service may lag behind Σ A_a.
    pub lag: f64,
}

/// The latency-rate guarantee of class `i` (index into `classes`) from the bounds of one visit.
pub(crate) fn latency_rate(i: usize, classes: &[ClassAtPort], v: &VisitBounds, capacity: f64) -> LatencyRate {
    let mine: Vec<usize> = (0..v.entries.len()).filter(|&k| v.entries[k].0 == i).collect();
    let n = mine.len();
    if n == 0 {
        return LatencyRate { rate: 0.0, latency: f64::INFINITY };
    }
    // X(g_a): the other entries strictly between q_{a−1} and q_a, cyclically.
    let entries = v.entries.len();
    let gap: Vec<f64> = (0..n)
        .map(|a| {
            let from = mine[(a + n - 1) % n];
            let len = (mine[a] + entries - from - 1) % entries;
            (1..=len).map(|d| (v.most)((from + d) % entries)).sum()
        })
        .collect();
    let least: Vec<f64> = mine.iter().map(|&k| (v.least)(k)).collect();
    let x: f64 = gap.iter().sum();
    let p: f64 = least.iter().sum();
    let r = x / p;
    // U over one period; U(n) = 0 up to rounding.
    let mut u = vec![0.0; n + 1];
    for a in 0..n {
        u[a + 1] = u[a] + gap[a] - r * least[a];
    }
    let u_min = u[..n].iter().copied().fold(f64::INFINITY, f64::min);
    let runs = (0..n).map(|e| u[e + 1] + r * least[e]).fold(f64::NEG_INFINITY, f64::max) - u_min;
    let first = gap.iter().copied().fold(0.0, f64::max);
    let work = classes[i].lmax + v.carry + first.max(v.lag * r + runs);
    LatencyRate { rate: p * capacity / (p + x), latency: work / capacity }
}

/// Wire bits per frame bit of a class's frames: at most `worst` (its smallest frame carries the
/// most overhead), at least `best` (its largest).
pub(crate) fn wire_ratio(c: &ClassAtPort) -> (f64, f64) {
    let frame = |w: f64| (w - c.overhead).max(1.0);
    (c.lmin / frame(c.lmin), c.lmax / frame(c.lmax))
}

/// The configuration checks every table kind shares: at least one entry, known classes,
/// positive weights.
pub(crate) fn check_entries(
    place: &str,
    entries: &[TableEntry],
    class_known: &dyn Fn(&str) -> bool,
) -> Vec<super::ConfigProblem> {
    use super::ConfigProblem::{Error, UnknownClass};
    let mut out = Vec::new();
    if entries.is_empty() {
        out.push(Error {
            place: format!("{place}.entries"),
            message: "an arbitration table needs at least one entry".into(),
        });
    }
    for (k, e) in entries.iter().enumerate() {
        if !class_known(&e.class) {
            out.push(UnknownClass { place: format!("{place}.entries[{k}].class"), class: e.class.clone() });
        }
        if e.weight.bits().is_nan() || e.weight.bits() <= 0.0 {
            out.push(Error {
                place: format!("{place}.entries[{k}].weight"),
                message: "must be positive".into(),
            });
        }
    }
    out
}

/// What a table gives `class`: the total weight of its entries (frame bits), `None` without one.
pub(crate) fn share(entries: &[TableEntry], class: &str) -> Option<f64> {
    let mut mine = entries.iter().filter(|e| e.class == class).peekable();
    mine.peek().is_some().then(|| mine.map(|e| e.weight.bits()).sum())
}

/// The entries whose class is present at a port, as (index into the present classes `names`,
/// weight in frame bits); entries of absent classes are never visited.
pub(crate) fn at_port(entries: &[TableEntry], names: &[&str]) -> Vec<(usize, f64)> {
    entries
        .iter()
        .filter_map(|e| Some((names.iter().position(|n| *n == e.class)?, e.weight.bits())))
        .collect()
}

/// One table kind as a [`super::Discipline`]: its name, its behaviour and its class bound.
macro_rules! table_discipline {
    ($name:ident, $kind:literal, $behaviour:ident, $doc:literal) => {
        #[doc = $doc]
        pub struct $name<'a> {
            pub entries: &'a [crate::model::TableEntry],
        }

        impl super::Discipline for $name<'_> {
            fn kind(&self) -> &'static str {
                $kind
            }
            fn check(&self, place: &str, class_known: &dyn Fn(&str) -> bool) -> Vec<super::ConfigProblem> {
                super::table::check_entries(place, self.entries, class_known)
            }
            fn service(&self) -> super::Service<'_> {
                super::Service::PerClass(self)
            }
            fn behaviour(
                &self,
                classes: &[crate::model::TrafficClass],
                _link_rate: f64,
            ) -> Box<dyn super::Behaviour> {
                Box::new($behaviour::new(&super::table::resolve(self.entries, classes), classes.len()))
            }
        }
    };
}
pub(crate) use table_discipline;

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force over every start entry and every run of visits (no closed form): the same
    /// latency as the O(n) evaluation, on random tables.
    #[test]
    fn latency_matches_brute_force() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..300 {
            let n_classes = rng.gen_range(1..=4);
            let classes: Vec<ClassAtPort> = (0..n_classes)
                .map(|_| {
                    let lmax = rng.gen_range(100.0..2000.0);
                    ClassAtPort { share: 0.0, lmin: lmax / 2.0, lmax, overhead: 10.0 }
                })
                .collect();
            let entries: Vec<(usize, f64)> = (0..rng.gen_range(1..=12))
                .map(|_| (rng.gen_range(0..n_classes), rng.gen_range(100.0..3000.0)))
                .collect();
            let most = |k: usize| entries[k].1 * 1.1 + 7.0;
            let least = |k: usize| entries[k].1 * 0.9;
            let v = VisitBounds { entries: &entries, most: &most, least: &least, carry: 55.0, lag: 123.0 };
            for i in 0..n_classes {
                let got = latency_rate(i, &classes, &v, 1.0);
                let mine: Vec<usize> = (0..entries.len()).filter(|&k| entries[k].0 == i).collect();
                if mine.is_empty() {
                    assert_eq!(got.rate, 0.0);
                    continue;
                }
                let m = entries.len();
                let x: f64 = (0..m).filter(|&k| entries[k].0 != i).map(most).sum();
                let p: f64 = mine.iter().map(|&k| least(k)).sum();
                // From the entry after q_{a0−1}, walk the table for up to two periods: before each
                // visit of i, the work others did minus what rate ρ has owed i since.
                let mut worst = f64::NEG_INFINITY;
                for a0 in 0..mine.len() {
                    let start = mine[(a0 + mine.len() - 1) % mine.len()] + 1;
                    let (mut others, mut served, mut visits) = (0.0, 0.0, 0);
                    for d in 0..2 * m {
                        let k = (start + d) % m;
                        if entries[k].0 == i {
                            let lag = if visits > 0 { 123.0 } else { 0.0 };
                            worst = worst.max(others - (served - lag) * x / p);
                            served += least(k);
                            visits += 1;
                        } else {
                            others += most(k);
                        }
                    }
                }
                let want = classes[i].lmax + 55.0 + worst;
                assert!((got.latency - want).abs() < 1e-6 * want, "{got:?} vs {want}");
                assert!((got.rate - p / (p + x)).abs() < 1e-12);
            }
        }
    }
}
