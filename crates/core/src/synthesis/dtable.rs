//! Arbitration-table configuration that decouples latency from bandwidth (seed 003, §4-5).
//!
//! The seed's method (catalogue §4(c)): latency first, bandwidth second.
//!
//! 1. **Entries from latency.** Each class asks for a largest distance d_i between consecutive
//!    entries; met in power-of-two steps, it takes n_i = N/d_i entries. [`plan`] lays them out by
//!    buddy allocation over residues: class i gets every slot ≡ r_i (mod d_i), most demanding
//!    class first, lowest free residue first (TV-003-9's layout for Table 4). That succeeds iff
//!    Σ 1/d_i ≤ 1 (Kraft's inequality); otherwise the plan reports how many entries the distances
//!    need. Slots no class needs go to the leftover (network-control) class.
//! 2. **Bandwidth from weights.** M = GMTU·w credits per entry at most, a pool of N·GMTU·k
//!    credits in all (k ≤ w). Class i can be given between minφ_i = n_i·MTU_i/pool and
//!    maxφ_i = n_i·M/pool. [`decouple`] gives each class ⌈φ_i·pool⌉ credits (at least n_i·MTU_i),
//!    spreads them evenly over its entries (each between MTU_i and M), and gives what is left of
//!    the pool to the leftover class (seed §5: the bandwidth a network cannot use goes to network
//!    control; the scheduler redistributes what is unused).
//!
//! Credits are the flow-control unit (64 B in AS); weights in the network model are
//! credits × `credit`. [`baselines`] derives the comparison schedulers of Table 5: DTable-WF2Q
//! (equal entry weights, entry counts proportional to φ, WF²Q layout), SCFQ weights and DRR
//! quanta.

use crate::model::{SchedulerConfig, TableEntry, TableKind};
use crate::schedulers::service_list;
use crate::units::DataSize;
use serde::Serialize;
use std::collections::BTreeMap;

/// What one class (a virtual channel carrying one service class) needs.
#[derive(Clone, Debug)]
pub struct ClassRequirement {
    pub name: String,
    /// Largest distance allowed between consecutive entries of the class, in entries (≥ 1).
    pub max_distance: u32,
    /// Bandwidth share wanted, φ_i (fraction of the link). For the leftover class, the least it
    /// must get; it gets whatever the pool has left.
    pub share: f64,
    /// Largest frame of the class, MTU_i, in credits (1 ..= GMTU).
    pub mtu: u32,
}

/// The table and weight-field parameters of §4(c).
#[derive(Clone, Debug)]
pub struct DecouplingParams {
    /// N, entries in the table.
    pub entries: u32,
    /// GMTU, the general MTU, in credits.
    pub gmtu: u32,
    /// M = GMTU·w: the largest entry weight (rounded down to whole credits).
    pub w: f64,
    /// pool = N·GMTU·k: the weight to distribute (rounded down to whole credits), k ≤ w.
    pub k: f64,
    /// Size of one credit (64 B in AS and InfiniBand).
    pub credit: DataSize,
    /// The class that receives the pool's leftover (network control).
    pub leftover_class: String,
}

/// Table 4's row for one class: its entries and the shares they allow.
#[derive(Clone, Debug, Serialize)]
pub struct ClassPlan {
    pub name: String,
    /// Distance asked for and distance achieved (largest gap in the layout, ≤ the one asked).
    pub max_distance: u32,
    pub distance: u32,
    /// n_i and n_i / N.
    pub entries: u32,
    pub entry_fraction: f64,
    /// MTU_i, credits.
    pub mtu: u32,
    /// minφ_i = n_i·MTU_i / pool and maxφ_i = n_i·M / pool.
    pub min_share: f64,
    pub max_share: f64,
}

/// The table's layout and the shares each class can be given (Table 4).
#[derive(Clone, Debug, Serialize)]
pub struct TablePlan {
    /// N, M and the pool, in credits.
    pub entries: u32,
    pub max_weight: u32,
    pub pool: u32,
    pub classes: Vec<ClassPlan>,
    /// Class (index into `classes`) of each table entry, in table order.
    pub slots: Vec<usize>,
}

/// Table 5's DTable columns for one class.
#[derive(Clone, Debug, Serialize)]
pub struct ClassWeights {
    pub name: String,
    /// φ_i asked for, and φ_i given (total weight / pool; at least minφ_i).
    pub requested_share: f64,
    pub share: f64,
    /// Weight of each of the class's entries in table order, and their sum (credits).
    pub entry_weights: Vec<u32>,
    pub total_weight: u32,
}

/// A decoupled DTable configuration: the plan, the weights, and the table it makes.
#[derive(Clone, Debug, Serialize)]
pub struct Decoupling {
    pub plan: TablePlan,
    pub weights: Vec<ClassWeights>,
    pub credit: DataSize,
}

impl Decoupling {
    /// The table in order: (class index, weight in credits).
    pub fn entries(&self) -> Vec<(usize, u32)> {
        let mut next = vec![0usize; self.weights.len()];
        self.plan
            .slots
            .iter()
            .map(|&c| {
                next[c] += 1;
                (c, self.weights[c].entry_weights[next[c] - 1])
            })
            .collect()
    }

    /// The entries as the network model writes them (weights in credits × `credit`).
    pub fn table_entries(&self) -> Vec<TableEntry> {
        let names: Vec<&str> = self.weights.iter().map(|w| w.name.as_str()).collect();
        table_entries(&self.entries(), &names, self.credit)
    }

    /// A DTable scheduler configuration to put under `schedulers` in a network description.
    pub fn scheduler_config(&self) -> SchedulerConfig {
        SchedulerConfig::Table { table_kind: TableKind::Dtable, entries: self.table_entries() }
    }
}

/// Why no configuration meets the requirements.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DecouplingError {
    #[error("{0}")]
    Parameter(String),
    #[error(
        "the distances need {needed} entries but the table has {entries} ({}); \
         allow larger distances or use a larger table",
        .per_class.iter().map(|(c, d, n)| format!("{c}: distance {d} takes {n}")).collect::<Vec<_>>().join(", ")
    )]
    TooManyEntries { needed: u32, entries: u32, per_class: Vec<(String, u32, u32)> },
    #[error(
        "class '{class}' asks for a share of {share} but its {entries} entries hold at most {max_share} \
         (n·M/pool); give it more entries (a smaller distance) or raise w"
    )]
    ShareAboveMaximum { class: String, share: f64, entries: u32, max_share: f64 },
    #[error(
        "the classes need {needed} credits but the pool has {pool}; lower the shares, the MTUs or \
         the entries of the small classes, or raise k"
    )]
    PoolExceeded { needed: u32, pool: u32 },
    #[error(
        "the leftover class '{class}' would get {credits} credits, more than its {entries} entries \
         hold ({max}); give it more entries, raise w or lower k"
    )]
    LeftoverAboveMaximum { class: String, credits: u32, entries: u32, max: u32 },
}

/// Entries from latency requirements (step 1), and the shares they allow (Table 4).
pub fn plan(classes: &[ClassRequirement], p: &DecouplingParams) -> Result<TablePlan, DecouplingError> {
    let bad = |m: String| Err(DecouplingError::Parameter(m));
    if p.entries == 0 || p.gmtu == 0 {
        return bad("the table needs at least one entry and a GMTU of at least one credit".into());
    }
    if !(p.w > 0.0 && p.k > 0.0 && p.k <= p.w) {
        return bad(format!("need 0 < k ≤ w (the pool cannot exceed N·M), got w = {}, k = {}", p.w, p.k));
    }
    if p.credit.bits() <= 0.0 {
        return bad("a credit must be a positive size".into());
    }
    let mut seen = std::collections::BTreeSet::new();
    for c in classes {
        if !seen.insert(c.name.as_str()) {
            return bad(format!("class '{}' is listed twice", c.name));
        }
        if c.max_distance == 0 {
            return bad(format!("class '{}': the distance must be at least 1", c.name));
        }
        if c.mtu == 0 || c.mtu > p.gmtu {
            return bad(format!(
                "class '{}': MTU {} must be between 1 and the GMTU ({})",
                c.name, c.mtu, p.gmtu
            ));
        }
        if !(c.share.is_finite() && c.share >= 0.0) {
            return bad(format!("class '{}': the share must be a fraction ≥ 0, got {}", c.name, c.share));
        }
    }
    let Some(leftover) = classes.iter().position(|c| c.name == p.leftover_class) else {
        return bad(format!("the leftover class '{}' is not among the classes", p.leftover_class));
    };
    let n = p.entries as u64;
    let max_weight = (p.gmtu as f64 * p.w + 1e-9).floor() as u32;
    let pool = (n as f64 * p.gmtu as f64 * p.k + 1e-9).floor() as u32;
    if pool == 0 {
        return bad(format!("the pool N·GMTU·k rounds down to no credit (k = {})", p.k));
    }
    if let Some(c) = classes.iter().find(|c| c.mtu > max_weight) {
        return bad(format!(
            "class '{}': MTU {} exceeds the largest entry weight M = {max_weight}",
            c.name, c.mtu
        ));
    }

    // The largest power of two within the distance asked that divides N: residues mod it repeat
    // exactly around the table.
    let step = |d: u32| {
        let mut s = 1u64;
        while s * 2 <= d as u64 && n.is_multiple_of(s * 2) {
            s *= 2;
        }
        s
    };
    let steps: Vec<u64> = classes.iter().map(|c| step(c.max_distance)).collect();
    let needed: u64 = steps.iter().map(|s| n / s).sum();
    if needed > n {
        let per_class =
            classes.iter().zip(&steps).map(|(c, &s)| (c.name.clone(), s as u32, (n / s) as u32)).collect();
        return Err(DecouplingError::TooManyEntries { needed: needed as u32, entries: p.entries, per_class });
    }

    // Buddy allocation: free residue classes (offset, modulus); the most demanding class first
    // takes the smallest free block that fits, split down to its step.
    let mut order: Vec<usize> = (0..classes.len()).collect();
    order.sort_by_key(|&i| (steps[i], i));
    let mut free: Vec<(u64, u64)> = vec![(0, 1)];
    let mut residue = vec![(0u64, 0u64); classes.len()];
    for &i in &order {
        let s = steps[i];
        let (at, _) = free
            .iter()
            .enumerate()
            .filter(|(_, b)| b.1 <= s)
            .max_by_key(|(_, b)| (b.1, std::cmp::Reverse(b.0)))
            .expect("Kraft's inequality leaves a block for every class");
        let (offset, mut modulus) = free.remove(at);
        while modulus < s {
            free.push((offset + modulus, 2 * modulus));
            modulus *= 2;
        }
        residue[i] = (offset, modulus);
    }
    let slots: Vec<usize> = (0..n)
        .map(|slot| {
            (0..classes.len())
                .find(|&i| slot % residue[i].1 == residue[i].0)
                // Slots of the blocks still free.
                .unwrap_or(leftover)
        })
        .collect();

    let plans = classes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let count = slots.iter().filter(|&&s| s == i).count() as u32;
            let distance = service_list::max_distance(&slots, i).unwrap_or(0) as u32;
            ClassPlan {
                name: c.name.clone(),
                max_distance: c.max_distance,
                distance,
                entries: count,
                entry_fraction: count as f64 / n as f64,
                mtu: c.mtu,
                min_share: (count as u64 * c.mtu as u64) as f64 / pool as f64,
                max_share: (count as u64 * max_weight as u64) as f64 / pool as f64,
            }
        })
        .collect();
    Ok(TablePlan { entries: p.entries, max_weight, pool, classes: plans, slots })
}

/// The whole configuration (steps 1 and 2): entries, then weights from the shares.
pub fn decouple(classes: &[ClassRequirement], p: &DecouplingParams) -> Result<Decoupling, DecouplingError> {
    let plan = plan(classes, p)?;
    let leftover = classes.iter().position(|c| c.name == p.leftover_class).expect("plan checked it");
    let pool = plan.pool as u64;
    let m = plan.max_weight as u64;
    // ⌈φ·pool⌉ credits (a guarantee is never rounded below what was asked), at least n·MTU.
    let asked = |c: &ClassRequirement| (c.share * pool as f64 * (1.0 - 1e-12)).ceil() as u64;
    let least = |i: usize| plan.classes[i].entries as u64 * classes[i].mtu as u64;
    let mut total = vec![0u64; classes.len()];
    for (i, c) in classes.iter().enumerate().filter(|(i, _)| *i != leftover) {
        total[i] = asked(c).max(least(i));
        let max = plan.classes[i].entries as u64 * m;
        if total[i] > max {
            return Err(DecouplingError::ShareAboveMaximum {
                class: c.name.clone(),
                share: c.share,
                entries: plan.classes[i].entries,
                max_share: plan.classes[i].max_share,
            });
        }
    }
    let others: u64 = total.iter().sum();
    let floor = asked(&classes[leftover]).max(least(leftover));
    if others + floor > pool {
        return Err(DecouplingError::PoolExceeded { needed: (others + floor) as u32, pool: plan.pool });
    }
    total[leftover] = pool - others;
    let leftover_max = plan.classes[leftover].entries as u64 * m;
    if total[leftover] > leftover_max {
        return Err(DecouplingError::LeftoverAboveMaximum {
            class: p.leftover_class.clone(),
            credits: total[leftover] as u32,
            entries: plan.classes[leftover].entries,
            max: leftover_max as u32,
        });
    }
    let weights = classes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            // Even spread: entry a gets ⌊(a+1)·T/n⌋ − ⌊a·T/n⌋, each ⌊T/n⌋ or ⌈T/n⌉, so between
            // MTU_i and M since n·MTU_i ≤ T ≤ n·M.
            let n = plan.classes[i].entries as u64;
            let t = total[i];
            ClassWeights {
                name: c.name.clone(),
                requested_share: c.share,
                share: t as f64 / pool as f64,
                entry_weights: (0..n).map(|a| ((a + 1) * t / n - a * t / n) as u32).collect(),
                total_weight: t as u32,
            }
        })
        .collect();
    Ok(Decoupling { plan, weights, credit: p.credit })
}

/// Table 5's other columns, from the shares a decoupling gave.
#[derive(Clone, Debug, Serialize)]
pub struct Baselines {
    pub names: Vec<String>,
    pub credit: DataSize,
    /// DTable-WF2Q: entries per class (∝ φ, at least one), their common weight, and the WF²Q
    /// layout of the table (class index per entry).
    pub wf2q_entries: Vec<u32>,
    pub wf2q_entry_weight: u32,
    pub wf2q_slots: Vec<usize>,
    /// SCFQ weights: the shares themselves.
    pub scfq_weights: Vec<f64>,
    /// DRR quanta (credits): ∝ φ, scaled so that every quantum is at least its class's MTU (the
    /// least-share class at its MTU in Table 5).
    pub drr_quanta: Vec<u32>,
}

impl Baselines {
    /// The DTable-WF2Q table as a scheduler configuration.
    pub fn dtable_wf2q_config(&self) -> SchedulerConfig {
        let entries: Vec<(usize, u32)> =
            self.wf2q_slots.iter().map(|&c| (c, self.wf2q_entry_weight)).collect();
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        SchedulerConfig::Table {
            table_kind: TableKind::Dtable,
            entries: table_entries(&entries, &names, self.credit),
        }
    }

    pub fn scfq_config(&self) -> SchedulerConfig {
        SchedulerConfig::Scfq {
            weights: self.names.iter().cloned().zip(self.scfq_weights.iter().copied()).collect(),
        }
    }

    pub fn drr_config(&self) -> SchedulerConfig {
        let quanta: BTreeMap<String, DataSize> = self
            .names
            .iter()
            .zip(&self.drr_quanta)
            .map(|(n, &q)| (n.clone(), DataSize::from_bits(q as f64 * self.credit.bits())))
            .collect();
        SchedulerConfig::Drr { quanta }
    }
}

/// DTable-WF2Q, SCFQ and DRR configured for the shares `d` gave, with `entry_weight` credits per
/// DTable-WF2Q entry (one AS MTU, 32 credits, in the seed) over the same number of entries.
pub fn baselines(d: &Decoupling, entry_weight: u32) -> Baselines {
    let shares: Vec<f64> = d.weights.iter().map(|w| w.share).collect();
    let counts = apportion(&shares, d.plan.entries);
    let slots = service_list::wf2q_interleaved(&counts);
    let mtu: Vec<u32> = d.plan.classes.iter().map(|c| c.mtu).collect();
    // The smallest scale at which every quantum covers its MTU.
    let scale =
        shares.iter().zip(&mtu).filter(|(s, _)| **s > 0.0).map(|(s, &m)| m as f64 / s).fold(0.0, f64::max);
    let drr_quanta = shares.iter().map(|s| (s * scale * (1.0 - 1e-12)).ceil() as u32).collect();
    Baselines {
        names: d.weights.iter().map(|w| w.name.clone()).collect(),
        credit: d.credit,
        wf2q_entries: counts,
        wf2q_entry_weight: entry_weight,
        wf2q_slots: slots,
        scfq_weights: shares,
        drr_quanta,
    }
}

/// `total` entries in proportion to `shares` (largest remainders, ties to the lower index),
/// every class with a positive share getting at least one.
fn apportion(shares: &[f64], total: u32) -> Vec<u32> {
    let sum: f64 = shares.iter().sum();
    let quota: Vec<f64> = shares.iter().map(|s| s / sum * total as f64).collect();
    let mut count: Vec<u32> = quota
        .iter()
        .zip(shares)
        .map(|(&q, &s)| if s > 0.0 { ((q + 1e-9).floor() as u32).max(1) } else { 0 })
        .collect();
    let mut by_remainder: Vec<usize> = (0..shares.len()).collect();
    by_remainder.sort_by(|&a, &b| {
        let r = |i: usize| quota[i] - count[i] as f64;
        r(b).total_cmp(&r(a)).then(a.cmp(&b))
    });
    // Floors leave fewer than one entry per class to give: one pass is enough.
    let mut assigned: u32 = count.iter().sum();
    for &i in &by_remainder {
        if assigned < total && shares[i] > 0.0 {
            count[i] += 1;
            assigned += 1;
        }
    }
    // Minimums of one may overshoot: take back from the largest counts.
    while assigned > total {
        let i = (0..count.len()).max_by_key(|&i| (count[i], std::cmp::Reverse(i))).expect("some class");
        count[i] -= 1;
        assigned -= 1;
    }
    count
}

fn table_entries(entries: &[(usize, u32)], names: &[&str], credit: DataSize) -> Vec<TableEntry> {
    entries
        .iter()
        .map(|&(c, w)| TableEntry {
            class: names[c].to_string(),
            weight: DataSize::from_bits(w as f64 * credit.bits()),
        })
        .collect()
}

/// `rtnetlab configure dtable`: the requirements file, in the model's units.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequirementsSpec {
    /// N, entries in the table.
    pub entries: u32,
    /// The general MTU.
    pub gmtu: DataSize,
    /// Size of one flow-control credit (64 B in AS and InfiniBand).
    #[serde(default = "default_credit")]
    pub credit: DataSize,
    pub w: f64,
    pub k: f64,
    /// The class that receives the pool's leftover (network control).
    pub leftover: String,
    /// Entry weight of the DTable-WF2Q baseline (default: the general MTU).
    #[serde(default)]
    pub wf2q_entry_weight: Option<DataSize>,
    pub classes: Vec<ClassSpec>,
}

/// One class of a [`RequirementsSpec`].
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassSpec {
    pub name: String,
    /// Largest distance allowed between consecutive entries, in entries.
    pub max_distance: u32,
    /// Bandwidth share wanted (fraction of the link).
    pub share: f64,
    /// Largest frame of the class.
    pub mtu: DataSize,
}

fn default_credit() -> DataSize {
    DataSize::from_bytes(64.0)
}

/// Everything `rtnetlab configure dtable` prints and writes.
#[derive(Clone, Debug, Serialize)]
pub struct ConfigureReport {
    pub decoupling: Decoupling,
    pub baselines: Baselines,
    /// Ready-to-use scheduler configurations: `dtable`, `dtable_wf2q`, `scfq`, `drr`.
    pub schedulers: BTreeMap<String, SchedulerConfig>,
}

/// Why `configure` gives no configuration: the requirements document is wrong (a user error), or
/// it is right but no table meets it (a verdict).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConfigureError {
    /// One line with its place.
    #[error("{0}")]
    Input(String),
    #[error("{0}")]
    Infeasible(DecouplingError),
}

/// Reads a requirements document and decouples it; every error is one line with its place.
pub fn configure(doc: serde_json::Value) -> Result<ConfigureReport, ConfigureError> {
    let spec: RequirementsSpec = crate::model::diagnostics::from_value_at(doc).map_err(|(path, msg)| {
        ConfigureError::Input(if path.is_empty() { msg } else { format!("{path}: {msg}") })
    })?;
    if spec.credit.bits() <= 0.0 {
        return Err(ConfigureError::Input(format!("credit: must be positive, got {}", spec.credit)));
    }
    // Sizes to whole credits: an MTU rounds up (it must fit), the GMTU too.
    let credits = |size: DataSize| (size.bits() / spec.credit.bits() - 1e-9).ceil().max(0.0) as u32;
    let classes: Vec<ClassRequirement> = spec
        .classes
        .iter()
        .map(|c| ClassRequirement {
            name: c.name.clone(),
            max_distance: c.max_distance,
            share: c.share,
            mtu: credits(c.mtu),
        })
        .collect();
    let params = DecouplingParams {
        entries: spec.entries,
        gmtu: credits(spec.gmtu),
        w: spec.w,
        k: spec.k,
        credit: spec.credit,
        leftover_class: spec.leftover.clone(),
    };
    let decoupling = decouple(&classes, &params).map_err(|e| match e {
        DecouplingError::Parameter(m) => ConfigureError::Input(m),
        e => ConfigureError::Infeasible(e),
    })?;
    let wf2q_weight = spec.wf2q_entry_weight.map_or(params.gmtu, credits);
    let baselines = baselines(&decoupling, wf2q_weight);
    let schedulers = BTreeMap::from([
        ("dtable".to_string(), decoupling.scheduler_config()),
        ("dtable_wf2q".to_string(), baselines.dtable_wf2q_config()),
        ("scfq".to_string(), baselines.scfq_config()),
        ("drr".to_string(), baselines.drr_config()),
    ]);
    Ok(ConfigureReport { decoupling, baselines, schedulers })
}

#[cfg(test)]
mod tests {
    use super::*;

    const VC: [&str; 7] = ["NC", "VO", "VI", "CL", "EE", "BE", "BK"];

    /// Table 4 (TV-003-1): N = 64, GMTU = 32 credits, w = 2, k = 0.5 (I-003-1: the table's values,
    /// not the text's swapped ones); distances 2 .. 64; MTU_i 192 B, 2048 B, 1024 B in credits.
    /// Shares are Table 5's φ as printed; NC takes the leftover (at least its 1.5 % injection).
    fn table_4(shares: [f64; 7]) -> (Vec<ClassRequirement>, DecouplingParams) {
        let distance = [2, 4, 8, 16, 32, 64, 64];
        let mtu = [3, 3, 32, 32, 16, 16, 16];
        let classes = (0..7)
            .map(|i| ClassRequirement {
                name: VC[i].into(),
                max_distance: distance[i],
                share: shares[i],
                mtu: mtu[i],
            })
            .collect();
        let params = DecouplingParams {
            entries: 64,
            gmtu: 32,
            w: 2.0,
            k: 0.5,
            credit: DataSize::from_bytes(64.0),
            leftover_class: "NC".into(),
        };
        (classes, params)
    }

    const PRINTED: [f64; 7] = [0.015, 0.046, 0.5, 0.203, 0.093, 0.046, 0.015];

    #[test]
    fn tv_003_1_table_4() {
        let (classes, params) = table_4(PRINTED);
        let p = plan(&classes, &params).unwrap();
        assert_eq!((p.max_weight, p.pool), (64, 1024));
        let entries: Vec<u32> = p.classes.iter().map(|c| c.entries).collect();
        assert_eq!(entries, [32, 16, 8, 4, 2, 1, 1]);
        let fraction: Vec<f64> = p.classes.iter().map(|c| c.entry_fraction * 100.0).collect();
        assert_eq!(fraction, [50.0, 25.0, 12.5, 6.25, 3.125, 1.5625, 1.5625]);
        let min: Vec<f64> = p.classes.iter().map(|c| c.min_share).collect();
        assert_eq!(min, [0.09375, 0.046875, 0.25, 0.125, 0.03125, 0.015625, 0.015625]);
        assert_eq!(min.iter().sum::<f64>(), 0.578125);
        let max: Vec<f64> = p.classes.iter().map(|c| c.max_share).collect();
        assert_eq!(max, [2.0, 1.0, 0.5, 0.25, 0.125, 0.0625, 0.0625]);
        assert_eq!(max.iter().sum::<f64>(), 4.0);
        for c in &p.classes {
            assert_eq!(c.distance, c.max_distance, "{}", c.name);
        }
    }

    /// TV-003-9: NC at even slots, VO ≡ 1 (mod 4), VI ≡ 3 (mod 8), CL ≡ 7 (mod 16), EE ≡ 15
    /// (mod 32), BE at 31, BK at 63.
    #[test]
    fn tv_003_9_layout() {
        let (classes, params) = table_4(PRINTED);
        let p = plan(&classes, &params).unwrap();
        let want = |slot: usize| match slot {
            s if s % 2 == 0 => 0,
            s if s % 4 == 1 => 1,
            s if s % 8 == 3 => 2,
            s if s % 16 == 7 => 3,
            s if s % 32 == 15 => 4,
            31 => 5,
            _ => 6,
        };
        assert_eq!(p.slots, (0..64).map(want).collect::<Vec<_>>());
        let head: Vec<&str> = p.slots[..16].iter().map(|&c| VC[c]).collect();
        assert_eq!(head.join(" "), "NC VO NC VI NC VO NC CL NC VO NC VI NC VO NC EE");
    }

    /// Table 5's DTable columns (TV-003-2), from the printed φ and from the exact ones alike.
    #[test]
    fn tv_003_2_table_5_dtable() {
        let exact = [0.09375, 0.046875, 0.5, 0.203125, 0.09375, 0.046875, 0.015625];
        for shares in [PRINTED, exact] {
            let (classes, params) = table_4(shares);
            let d = decouple(&classes, &params).unwrap();
            let n: Vec<usize> = d.weights.iter().map(|w| w.entry_weights.len()).collect();
            assert_eq!(n, [32, 16, 8, 4, 2, 1, 1]);
            let ew: Vec<u32> = d.weights.iter().map(|w| w.entry_weights[0]).collect();
            assert_eq!(ew, [3, 3, 64, 52, 48, 48, 16]);
            for w in &d.weights {
                assert!(w.entry_weights.iter().all(|&x| x == w.entry_weights[0]), "{}", w.name);
            }
            let tw: Vec<u32> = d.weights.iter().map(|w| w.total_weight).collect();
            assert_eq!(tw, [96, 48, 512, 208, 96, 48, 16]);
            assert_eq!(tw.iter().sum::<u32>(), 1024);
            let phi: Vec<f64> = d.weights.iter().map(|w| w.share).collect();
            assert_eq!(phi, exact);
            // Every entry between MTU_i and M (VI exactly at M).
            for ((w, c), mtu) in d.weights.iter().zip(&d.plan.classes).zip([3, 3, 32, 32, 16, 16, 16]) {
                assert!(w.entry_weights.iter().all(|&x| x >= mtu && x <= 64), "{}", c.name);
            }
            // The table in the model: 64 entries, weights in 64-byte credits.
            let t = d.table_entries();
            assert_eq!(t.len(), 64);
            assert_eq!((t[0].class.as_str(), t[0].weight.bytes()), ("NC", 192.0));
            assert_eq!((t[3].class.as_str(), t[3].weight.bytes()), ("VI", 4096.0));
        }
    }

    /// Table 5's DTable-WF2Q (TV-003-3, with BE's total weight 96, not the printed 69: I-003-2),
    /// SCFQ and DRR columns (TV-003-4), and the WF²Q layout of TV-003-8.
    #[test]
    fn tv_003_3_and_4_baselines() {
        let (classes, params) = table_4(PRINTED);
        let d = decouple(&classes, &params).unwrap();
        let b = baselines(&d, 32);
        assert_eq!(b.wf2q_entries, [6, 3, 32, 13, 6, 3, 1]);
        let tw: Vec<u32> = b.wf2q_entries.iter().map(|n| n * b.wf2q_entry_weight).collect();
        assert_eq!(tw, [192, 96, 1024, 416, 192, 96, 32]);
        assert_eq!(tw.iter().sum::<u32>(), 2048);
        assert_eq!(b.wf2q_slots, service_list::wf2q_interleaved(&[6, 3, 32, 13, 6, 3, 1]));
        assert_eq!(b.scfq_weights, [0.09375, 0.046875, 0.5, 0.203125, 0.09375, 0.046875, 0.015625]);
        assert_eq!(b.drr_quanta, [96, 48, 512, 208, 96, 48, 16]);
        let ratios: Vec<f64> =
            b.drr_quanta.iter().zip([3, 3, 32, 32, 16, 16, 16]).map(|(&q, m)| q as f64 / m as f64).collect();
        assert_eq!(ratios, [32.0, 16.0, 16.0, 6.5, 6.0, 3.0, 1.0]);
        let SchedulerConfig::Drr { quanta } = b.drr_config() else { panic!() };
        assert_eq!(quanta["BK"].bytes(), 1024.0);
        let SchedulerConfig::Table { entries, .. } = b.dtable_wf2q_config() else { panic!() };
        assert_eq!((entries.len(), entries[0].class.as_str(), entries[0].weight.bytes()), (64, "VI", 2048.0));
    }

    /// Random requirement sets: a plan exists iff the distances, rounded down to powers of two
    /// dividing N, need at most N entries (Kraft), and then every class's largest distance is
    /// within what it asked.
    #[test]
    fn random_layouts_meet_every_distance() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
        let (mut feasible, mut infeasible) = (0, 0);
        for _ in 0..2000 {
            let n = if rng.gen_bool(0.8) { 1u32 << rng.gen_range(0..=9) } else { rng.gen_range(1..=200) };
            let classes: Vec<ClassRequirement> = (0..rng.gen_range(1..=8))
                .map(|i| ClassRequirement {
                    name: format!("c{i}"),
                    max_distance: rng.gen_range(1..=2 * n),
                    share: 0.0,
                    mtu: 1,
                })
                .collect();
            let params = DecouplingParams {
                entries: n,
                gmtu: 1,
                w: 1.0,
                k: 1.0,
                credit: DataSize::from_bytes(64.0),
                leftover_class: "c0".into(),
            };
            let pow2 =
                |d: u32| (0..32).map(|e| 1u32 << e).take_while(|&s| s <= d && n % s == 0).last().unwrap();
            let need: u32 = classes.iter().map(|c| n / pow2(c.max_distance)).sum();
            match plan(&classes, &params) {
                Ok(p) => {
                    feasible += 1;
                    assert!(need <= n);
                    assert_eq!(p.slots.len(), n as usize);
                    for (i, c) in classes.iter().enumerate() {
                        let d = service_list::max_distance(&p.slots, i).expect("every class has an entry");
                        assert!(
                            d as u32 <= c.max_distance,
                            "n = {n}: {} asked {} got {d}",
                            c.name,
                            c.max_distance
                        );
                        assert_eq!(p.classes[i].distance, d as u32);
                    }
                }
                Err(DecouplingError::TooManyEntries { needed, entries, .. }) => {
                    infeasible += 1;
                    assert_eq!((needed, entries), (need, n));
                    assert!(need > n);
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert!(feasible > 300 && infeasible > 300, "{feasible} / {infeasible}");
    }

    /// Infeasible requirements are reported with what to change.
    #[test]
    fn infeasible_requirements_say_why() {
        let (mut classes, params) = table_4(PRINTED);
        classes[6].max_distance = 32;
        let e = plan(&classes, &params).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the distances need 65 entries but the table has 64 (NC: distance 2 takes 32"),
            "{e}"
        );

        let (mut classes, params) = table_4(PRINTED);
        classes[3].share = 0.3; // CL's 4 entries hold at most 0.25
        let e = decouple(&classes, &params).unwrap_err();
        assert_eq!(
            e,
            DecouplingError::ShareAboveMaximum {
                class: "CL".into(),
                share: 0.3,
                entries: 4,
                max_share: 0.25
            }
        );

        let (mut classes, params) = table_4(PRINTED);
        classes[4].share = 0.12; // 123 credits: the pool no longer covers NC's minimum of 96
        assert_eq!(
            decouple(&classes, &params).unwrap_err(),
            DecouplingError::PoolExceeded { needed: 1051, pool: 1024 }
        );

        // k = w: the pool is N·M, so whatever the other classes leave below their maximum
        // overflows NC's entries: VO and VI ask for ⌈0.046·4096⌉ + 1024 = 1213 of 4096 credits,
        // NC's 32 entries hold 2048.
        let (mut classes, mut params) = table_4(PRINTED);
        classes.truncate(3);
        (classes[1].max_distance, classes[2].max_distance, classes[2].share) = (4, 4, 0.25);
        params.k = 2.0;
        assert_eq!(
            decouple(&classes, &params).unwrap_err(),
            DecouplingError::LeftoverAboveMaximum {
                class: "NC".into(),
                credits: 4096 - 1213,
                entries: 32,
                max: 2048
            }
        );

        let (classes, mut params) = table_4(PRINTED);
        params.k = 3.0;
        assert!(plan(&classes, &params).unwrap_err().to_string().contains("k ≤ w"));
        params.k = 0.5;
        params.leftover_class = "XX".into();
        assert!(plan(&classes, &params).unwrap_err().to_string().contains("'XX' is not among"));
    }

    /// The configuration runs: the DTable behaviour sends every class's share of a backlogged
    /// port, in credits, within a few frames.
    #[test]
    fn configuration_gives_the_shares() {
        use crate::schedulers::{dtable::Dtable, table::Entry, Behaviour, Queued};
        let (classes, params) = table_4(PRINTED);
        let d = decouple(&classes, &params).unwrap();
        let entries: Vec<Entry> =
            d.entries().iter().map(|&(class, w)| Entry { class, weight: w as u64 * 512 }).collect();
        let mut s = Dtable::new(&entries, 7);
        let mut id = 0;
        for c in 0..7u16 {
            for _ in 0..3000 {
                // Each class's frames at its MTU.
                let bits = classes[c as usize].mtu * 512;
                s.enqueue(
                    Queued { flow: u32::MAX, frame: id, class: c, wire_bits: bits, frame_bits: bits },
                    0,
                );
                id += 1;
            }
        }
        let mut got = [0f64; 7];
        for _ in 0..4000 {
            let q = s.dequeue(0).unwrap();
            got[q.class as usize] += q.frame_bits as f64;
        }
        let total: f64 = got.iter().sum();
        for (c, w) in d.weights.iter().enumerate() {
            assert!((got[c] / total - w.share).abs() < 0.01, "{}: {} vs {}", w.name, got[c] / total, w.share);
        }
    }
}
