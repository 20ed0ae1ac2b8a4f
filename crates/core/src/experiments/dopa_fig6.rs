//! The experiment of seed 001E, Fig. 6: acceptance ratio of DOPA with OPA against deadline
//! monotonic on random systems, sweeping (a) the total density, (b) the number of processors,
//! (c) the number of applications.
//!
//! The generator follows the paper where it speaks (RandFixedSum for application densities in
//! [0.1, 0.9] summing to δ_tot, again for task and message densities in [0.01, 0.9] within an
//! application, D = T, task density C/T per catalogue I-001E-1) and docs/FIXED_PRIORITY.md
//! explains the rest: 2–5 tasks per application, periods log-uniform in [10 ms, 1 s] with 1 ms
//! granularity (Emberson, Stafford & Davis 2010), message times drawn as densities like tasks
//! (the network speed is folded into C^msg), no pinned tasks, ticks of 1 µs.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::fixed_priority::dopa::{
    partition, Application, BestCase, DmKey, DopaConfig, LocalTest, Platform, PriorityPolicy,
};
use crate::fixed_priority::randfixedsum::randfixedsum;
use crate::fixed_priority::{Limits, Ticks};

/// Parameters of the random systems.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorConfig {
    /// Number of applications n.
    pub applications: usize,
    /// Total density δ_tot = Σ δ_i.
    pub total_density: f64,
    /// Bounds of each application's density.
    pub app_density: (f64, f64),
    /// Bounds of each task's and message's density within an application.
    pub element_density: (f64, f64),
    /// Tasks per application, uniform in this inclusive range (reduced if the element
    /// densities could not reach the application's density otherwise).
    pub tasks_per_app: (usize, usize),
    /// Period range in ticks, log-uniform.
    pub period: (Ticks, Ticks),
    /// Periods are multiples of this.
    pub period_granularity: Ticks,
    /// Probability that a task is pinned to a random processor.
    pub pin_probability: f64,
}

impl Default for GeneratorConfig {
    fn default() -> Self {
        GeneratorConfig {
            applications: 50,
            total_density: 8.0,
            app_density: (0.1, 0.9),
            element_density: (0.01, 0.9),
            tasks_per_app: (2, 5),
            period: (10_000, 1_000_000),
            period_granularity: 1_000,
            pin_probability: 0.0,
        }
    }
}

/// A random system, or `None` if the densities cannot be met (δ_tot outside [n·lo, n·hi]).
pub fn generate<R: Rng + ?Sized>(
    cfg: &GeneratorConfig,
    processors: usize,
    rng: &mut R,
) -> Option<Vec<Application>> {
    let (alo, ahi) = cfg.app_density;
    let (elo, ehi) = cfg.element_density;
    let densities = randfixedsum(cfg.applications, cfg.total_density, alo, ahi, rng)?;
    densities
        .into_iter()
        .map(|delta| {
            let (lo_n, hi_n) = cfg.tasks_per_app;
            let mut tasks = rng.gen_range(lo_n.max(1)..=hi_n.max(lo_n.max(1)));
            // 2n − 1 elements in [elo, ehi] must be able to sum to δ.
            while tasks > 1 && (2 * tasks - 1) as f64 * elo > delta {
                tasks -= 1;
            }
            let parts = randfixedsum(2 * tasks - 1, delta, elo, ehi, rng)?;
            let (lo_t, hi_t) = (cfg.period.0 as f64, cfg.period.1 as f64);
            let g = cfg.period_granularity.max(1);
            let raw = (lo_t.ln() + rng.gen::<f64>() * (hi_t.ln() - lo_t.ln())).exp();
            let period = ((raw / g as f64).round() as Ticks * g).max(g);
            let cost = |d: f64| ((d * period as f64).round() as Ticks).max(1);
            let wcets: Vec<Ticks> = parts.iter().step_by(2).map(|&d| cost(d)).collect();
            let msgs: Vec<Ticks> = parts.iter().skip(1).step_by(2).map(|&d| cost(d)).collect();
            let mut app = Application::new(period, period, &wcets, &msgs);
            for t in &mut app.tasks {
                if cfg.pin_probability > 0.0 && rng.gen_bool(cfg.pin_probability.min(1.0)) {
                    t.pinned = Some(rng.gen_range(0..processors));
                }
            }
            Some(app)
        })
        .collect()
}

/// Which panel of Fig. 6.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fig6Kind {
    /// (a) total density swept, 50 applications on 10 processors.
    Density,
    /// (b) processors swept, 50 applications at δ_tot = 8.
    Processors,
    /// (c) applications swept, δ_tot = 8 on 10 processors.
    Applications,
}

/// One point of a sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fig6Row {
    /// Swept value (δ_tot, processors or applications).
    pub x: f64,
    /// Fraction of sets PARTITION accepts with OPA.
    pub opa_acceptance: f64,
    /// Fraction of sets PARTITION accepts with deadline monotonic.
    pub dm_acceptance: f64,
}

/// Everything a sweep can vary besides the swept value.
#[derive(Debug, Clone, PartialEq)]
pub struct Fig6Config {
    /// Generator defaults (its `applications` and `total_density` are overridden per panel).
    pub generator: GeneratorConfig,
    /// Processors (overridden in panel (b)).
    pub processors: usize,
    /// Bus bit time.
    pub tau_bit: Ticks,
    /// Local test of both assignments.
    pub local_test: LocalTest,
    /// Best-case knowledge of both assignments.
    pub best_case: BestCase,
    /// Key of the deadline-monotonic baseline.
    pub dm_key: DmKey,
    /// Swept range (inclusive); `None` for the panel's default: δ_tot 5.5–10, processors
    /// 5–14, applications 10–50.
    pub range: Option<(f64, f64)>,
    /// Worker threads (results do not depend on it: every set has its own seed).
    pub threads: usize,
}

impl Default for Fig6Config {
    fn default() -> Self {
        Fig6Config {
            generator: GeneratorConfig::default(),
            processors: 10,
            tau_bit: 0,
            local_test: LocalTest::ReleaseJitter,
            best_case: BestCase::Zero,
            dm_key: DmKey::LocalWindow,
            range: None,
            threads: 1,
        }
    }
}

/// Fig. 6 panel `kind` with the default configuration: `points` values of the swept parameter,
/// `sets_per_point` random systems each, all seeded from `seed`.
pub fn fig6(kind: Fig6Kind, points: usize, sets_per_point: usize, seed: u64) -> Vec<Fig6Row> {
    fig6_with(kind, points, sets_per_point, seed, &Fig6Config::default())
}

/// [`fig6`] with an explicit configuration.
pub fn fig6_with(
    kind: Fig6Kind,
    points: usize,
    sets_per_point: usize,
    seed: u64,
    cfg: &Fig6Config,
) -> Vec<Fig6Row> {
    let (lo, hi) = cfg.range.unwrap_or(match kind {
        Fig6Kind::Density => (5.5, 10.0),
        Fig6Kind::Processors => (5.0, 14.0),
        Fig6Kind::Applications => (10.0, 50.0),
    });
    let xs: Vec<f64> = (0..points)
        .map(|k| {
            let x = if points > 1 { lo + (hi - lo) * k as f64 / (points - 1) as f64 } else { lo };
            if kind == Fig6Kind::Density {
                x
            } else {
                x.round()
            }
        })
        .collect();
    xs.iter()
        .enumerate()
        .map(|(point, &x)| {
            let mut generator = cfg.generator.clone();
            let mut processors = cfg.processors;
            match kind {
                Fig6Kind::Density => {
                    generator.applications = 50;
                    generator.total_density = x;
                }
                Fig6Kind::Processors => {
                    generator.applications = 50;
                    generator.total_density = 8.0;
                    processors = x as usize;
                }
                Fig6Kind::Applications => {
                    generator.applications = x as usize;
                    generator.total_density = 8.0;
                }
            }
            let platform = Platform { processors: processors.max(1), tau_bit: cfg.tau_bit };
            let dopa = |policy| DopaConfig {
                policy,
                local_test: cfg.local_test,
                best_case: cfg.best_case,
                limits: Limits::default(),
            };
            let (opa, dm) = (dopa(PriorityPolicy::Opa), dopa(PriorityPolicy::DeadlineMonotonic(cfg.dm_key)));
            // One set: (accepted by OPA, accepted by DM); the same system for both.
            let run_set = |set: usize| -> (bool, bool) {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                rng.set_stream((point * sets_per_point + set) as u64);
                let Some(apps) = generate(&generator, platform.processors, &mut rng) else {
                    return (false, false);
                };
                let accepted =
                    |c: &DopaConfig| partition(&apps, &platform, c).is_ok_and(|o| o.is_schedulable());
                (accepted(&opa), accepted(&dm))
            };
            let threads = cfg.threads.clamp(1, sets_per_point.max(1));
            let counts: Vec<(usize, usize)> = std::thread::scope(|scope| {
                let workers: Vec<_> = (0..threads)
                    .map(|w| {
                        let run_set = &run_set;
                        scope.spawn(move || {
                            (w..sets_per_point)
                                .step_by(threads)
                                .map(run_set)
                                .fold((0, 0), |(a, b), (o, d)| (a + o as usize, b + d as usize))
                        })
                    })
                    .collect();
                workers.into_iter().map(|h| h.join().expect("worker")).collect()
            });
            let (o, d) = counts.into_iter().fold((0, 0), |(a, b), (x, y)| (a + x, b + y));
            let n = sets_per_point.max(1) as f64;
            Fig6Row { x, opa_acceptance: o as f64 / n, dm_acceptance: d as f64 / n }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_systems_have_the_requested_densities() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let cfg = GeneratorConfig { total_density: 9.0, ..GeneratorConfig::default() };
        for _ in 0..20 {
            let apps = generate(&cfg, 10, &mut rng).unwrap();
            assert_eq!(apps.len(), 50);
            // Rounding C to whole µs moves each density by at most 0.5 µs / 10 ms per element.
            let total: f64 = apps.iter().map(Application::density).sum();
            assert!((total - 9.0).abs() < 50.0 * 9.0 * 0.5 / 10_000.0, "{total}");
            for a in &apps {
                assert!((2..=5).contains(&a.tasks.len()) && a.messages.len() + 1 == a.tasks.len());
                assert!((10_000..=1_000_000).contains(&a.period) && a.period % 1000 == 0);
                assert_eq!(a.deadline, a.period);
                assert!(a.density() > 0.099 && a.density() < 0.901);
            }
        }
        // δ_tot out of reach of 50 densities in [0.1, 0.9].
        assert!(generate(&GeneratorConfig { total_density: 4.0, ..cfg }, 10, &mut rng).is_none());
    }

    #[test]
    fn sweeps_are_reproducible_and_thread_independent() {
        let cfg = Fig6Config { threads: 1, ..Fig6Config::default() };
        let a = fig6_with(Fig6Kind::Applications, 2, 3, 99, &cfg);
        let b = fig6_with(Fig6Kind::Applications, 2, 3, 99, &Fig6Config { threads: 2, ..cfg });
        assert_eq!(a, b);
        assert_eq!(a.iter().map(|r| r.x).collect::<Vec<_>>(), [10.0, 50.0]);
        assert!(a
            .iter()
            .all(|r| (0.0..=1.0).contains(&r.opa_acceptance) && (0.0..=1.0).contains(&r.dm_acceptance)));
    }
}
