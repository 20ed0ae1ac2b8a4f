//! A discrete-time simulation of seed 001G's SL-aware applications sharing a machine under the RM.
//!
//! Each application is a closed loop: N users (N changes at given times) each wait an
//! exponentially distributed think time, then send a request and wait for its response. A
//! request needs `mandatory` seconds of one core, plus `optional` seconds with probability s (the
//! service level). The application's cap C_i = c_i·C cores is shared by its requests in
//! progress, processor sharing, each request using at most one core: with n requests in
//! progress each is served at min(1, C_i/n) cores, which gives response time as a function of
//! load·(mandatory + s·optional)/capacity: the service time below saturation, growing with N
//! beyond it (R ≈ N·D/C_i − Z for a saturated closed loop).
//!
//! Time advances in steps of `time_step` (services and think times are continuous within a
//! step, a request starts at the step after its think time ends). Every `control_period` each
//! application measures t_i, the largest response time over the period (requests still in
//! progress count with their age, so that a starved application does not look matched), sends
//! f_i = 1 − t_i/t̄_i (Eq. 1), updates its SL with its private controller (Eq. 2) and the RM
//! moves the shares (Eq. 3). Every random draw comes from one seeded generator.

use super::rm::{self, RmSettings};
use super::sl::SlController;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// A number of users from a time on.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserStep {
    /// Seconds from the start.
    pub at: f64,
    pub users: u32,
}

/// One SL-aware application.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppSpec {
    pub name: String,
    /// t̄: the soft deadline on response times, seconds.
    pub deadline: f64,
    /// CPU seconds every request needs.
    pub mandatory: f64,
    /// CPU seconds of the optional part (run with probability s).
    pub optional: f64,
    /// Mean think time of a user, seconds.
    pub think_time: f64,
    /// Users over time; the first step at 0.
    pub users: Vec<UserStep>,
    #[serde(default = "half")]
    pub initial_sl: f64,
    #[serde(default)]
    pub controller: SlController,
}

fn half() -> f64 {
    0.5
}

/// A whole run: the machine, the RM and the applications.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Cores shared by the applications.
    pub capacity: f64,
    /// Seconds between two RM steps (the paper: 5 s).
    pub control_period: f64,
    pub duration: f64,
    #[serde(default = "default_step")]
    pub time_step: f64,
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub rm: RmSettings,
    /// Starting shares; absent: 1/n each (the paper's start).
    #[serde(default)]
    pub initial_shares: Option<Vec<f64>>,
    pub apps: Vec<AppSpec>,
}

fn default_step() -> f64 {
    0.01
}

/// What one application did over one control period, and what it was given for the next.
#[derive(Clone, Debug, Serialize)]
pub struct AppPeriod {
    pub users: u32,
    /// The SL used during the period.
    pub sl: f64,
    /// The share and cap (cores) in force during the period.
    pub share: f64,
    pub cap: f64,
    /// The largest response time of the period (s), and the matching value sent.
    pub response_time: f64,
    pub mean_response_time: Option<f64>,
    pub matching: f64,
    pub completed: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Period {
    /// End of the period, seconds.
    pub time: f64,
    pub apps: Vec<AppPeriod>,
}

#[derive(Clone, Debug, Serialize)]
pub struct SimReport {
    pub capacity: f64,
    pub control_period: f64,
    pub apps: Vec<String>,
    pub deadlines: Vec<f64>,
    pub periods: Vec<Period>,
}

impl Scenario {
    /// Checks the scenario; the error names the place and the rule.
    pub fn check(&self) -> Result<(), String> {
        let pos = |place: &str, x: f64| {
            if x.is_finite() && x > 0.0 {
                Ok(())
            } else {
                Err(format!("{place}: must be a positive number, got {x}"))
            }
        };
        pos("capacity", self.capacity)?;
        pos("control_period", self.control_period)?;
        pos("duration", self.duration)?;
        pos("time_step", self.time_step)?;
        if self.time_step > self.control_period {
            return Err(format!(
                "time_step: must not exceed control_period ({}), got {}",
                self.control_period, self.time_step
            ));
        }
        if self.duration / self.time_step > 1e8 {
            return Err("duration / time_step: at most 10^8 steps".into());
        }
        if self.apps.is_empty() {
            return Err("apps: at least one application".into());
        }
        let n = self.apps.len();
        let shares = self.initial_shares.clone().unwrap_or_else(|| rm::initial_shares(n));
        rm::check(&shares, &vec![0.0; n], &self.rm).map_err(|e| match e.place.strip_prefix("shares") {
            Some(rest) => format!("initial_shares{rest}: {}", e.rule),
            None => format!("rm.{e}"),
        })?;
        for (i, a) in self.apps.iter().enumerate() {
            let p = format!("apps[{i}]");
            pos(&format!("{p}.deadline"), a.deadline)?;
            pos(&format!("{p}.mandatory"), a.mandatory)?;
            pos(&format!("{p}.think_time"), a.think_time)?;
            if !(a.optional.is_finite() && a.optional >= 0.0) {
                return Err(format!("{p}.optional: must be at least 0, got {}", a.optional));
            }
            if !(0.0..=1.0).contains(&a.initial_sl) {
                return Err(format!("{p}.initial_sl: must be between 0 and 1, got {}", a.initial_sl));
            }
            a.controller.check().map_err(|e| format!("{p}.controller.{e}"))?;
            if a.users.first().is_none_or(|u| u.at != 0.0) {
                return Err(format!("{p}.users: the first step must be at 0"));
            }
            if a.users.iter().any(|u| !u.at.is_finite()) || a.users.windows(2).any(|w| w[1].at <= w[0].at) {
                return Err(format!("{p}.users: times must increase"));
            }
            if a.users.iter().any(|u| u.users > 100_000) {
                return Err(format!("{p}.users: at most 100,000 users"));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum User {
    /// Thinking until this time.
    Thinking(f64),
    /// A request in progress: CPU seconds left, and when it was sent.
    Busy { left: f64, sent: f64 },
}

struct App {
    users: Vec<User>,
    /// Users to remove as soon as they finish what they do.
    leaving: u32,
    sl: f64,
    previous_f: f64,
    next_change: usize,
    // The current period's measurements.
    worst: f64,
    sum: f64,
    completed: u64,
}

fn think(rng: &mut ChaCha8Rng, mean: f64) -> f64 {
    // Exponential by inversion; 1 − u is in (0, 1].
    -mean * (1.0 - rng.gen::<f64>()).ln()
}

/// Runs a scenario (checked first).
pub fn simulate(sc: &Scenario) -> Result<SimReport, String> {
    sc.check()?;
    let n = sc.apps.len();
    let mut rng = ChaCha8Rng::seed_from_u64(sc.seed);
    let mut shares = sc.initial_shares.clone().unwrap_or_else(|| rm::initial_shares(n));
    let mut apps: Vec<App> = sc
        .apps
        .iter()
        .map(|a| App {
            users: Vec::new(),
            leaving: 0,
            sl: a.initial_sl,
            previous_f: 0.0,
            next_change: 0,
            worst: 0.0,
            sum: 0.0,
            completed: 0,
        })
        .collect();
    let dt = sc.time_step;
    let steps_per_period = (sc.control_period / dt).round().max(1.0) as u64;
    let total_steps = (sc.duration / dt).round() as u64;
    let mut periods = Vec::new();
    let mut period_users: Vec<u32> = vec![0; n];
    let mut period_sl: Vec<f64> = apps.iter().map(|a| a.sl).collect();
    for step in 0..total_steps {
        let now = step as f64 * dt;
        for (i, (a, spec)) in apps.iter_mut().zip(&sc.apps).enumerate() {
            // User count changes.
            while a.next_change < spec.users.len() && spec.users[a.next_change].at <= now + 1e-9 {
                let target = spec.users[a.next_change].users as usize;
                let present = a.users.len() - a.leaving as usize;
                if target > present {
                    let keep = a.leaving.min((target - present) as u32);
                    a.leaving -= keep;
                    for _ in 0..(target - present - keep as usize) {
                        a.users.push(User::Thinking(now + think(&mut rng, spec.think_time)));
                    }
                } else {
                    a.leaving += (present - target) as u32;
                }
                a.next_change += 1;
            }
            let cap = shares[i] * sc.capacity;
            let busy = a.users.iter().filter(|u| matches!(u, User::Busy { .. })).count();
            let rate = if busy > 0 { (cap / busy as f64).min(1.0) } else { 0.0 };
            let end = now + dt;
            let mut k = 0;
            while k < a.users.len() {
                match a.users[k] {
                    User::Busy { left, sent } => {
                        let served = rate * dt;
                        if served >= left {
                            let done = now + left / rate;
                            let r = done - sent;
                            a.worst = a.worst.max(r);
                            a.sum += r;
                            a.completed += 1;
                            if a.leaving > 0 {
                                a.leaving -= 1;
                                a.users.swap_remove(k);
                                continue;
                            }
                            a.users[k] = User::Thinking(done + think(&mut rng, spec.think_time));
                        } else {
                            a.users[k] = User::Busy { left: left - served, sent };
                        }
                    }
                    User::Thinking(until) if until < end => {
                        if a.leaving > 0 {
                            a.leaving -= 1;
                            a.users.swap_remove(k);
                            continue;
                        }
                        let optional = rng.gen::<f64>() < a.sl;
                        let work = spec.mandatory + if optional { spec.optional } else { 0.0 };
                        a.users[k] = User::Busy { left: work, sent: until };
                    }
                    User::Thinking(_) => {}
                }
                k += 1;
            }
            period_users[i] = period_users[i].max((a.users.len() - a.leaving as usize) as u32);
        }
        if (step + 1) % steps_per_period == 0 {
            let end = (step + 1) as f64 * dt;
            let mut rows = Vec::with_capacity(n);
            let mut f = Vec::with_capacity(n);
            for (i, (a, spec)) in apps.iter_mut().zip(&sc.apps).enumerate() {
                let in_progress = a
                    .users
                    .iter()
                    .filter_map(|u| match u {
                        User::Busy { sent, .. } => Some(end - sent),
                        _ => None,
                    })
                    .fold(0.0, f64::max);
                let t = a.worst.max(in_progress);
                let fi = rm::matching_value(t, spec.deadline);
                rows.push(AppPeriod {
                    users: period_users[i],
                    sl: period_sl[i],
                    share: shares[i],
                    cap: shares[i] * sc.capacity,
                    response_time: t,
                    mean_response_time: (a.completed > 0).then(|| a.sum / a.completed as f64),
                    matching: fi,
                    completed: a.completed,
                });
                a.sl = spec.controller.next(a.sl, fi, a.previous_f);
                a.previous_f = fi;
                a.worst = 0.0;
                a.sum = 0.0;
                a.completed = 0;
                period_users[i] = 0;
                period_sl[i] = a.sl;
                f.push(fi);
            }
            shares = rm::step(&shares, &f, &sc.rm);
            periods.push(Period { time: end, apps: rows });
        }
    }
    Ok(SimReport {
        capacity: sc.capacity,
        control_period: sc.control_period,
        apps: sc.apps.iter().map(|a| a.name.clone()).collect(),
        deadlines: sc.apps.iter().map(|a| a.deadline).collect(),
        periods,
    })
}
