//! One row's search: the critical instant, an exhaustive grid where it is small, then a (1+1)
//! evolutionary local search with restarts. See the module's documentation.

use super::evaluate;
use crate::model::Network;
use crate::sim::scenario::PortEntry;
use crate::sim::ScenarioTables;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// What one row may spend.
pub(super) struct RowBudget {
    pub(super) evaluations: u64,
    pub(super) deadline: Option<Instant>,
}

/// A row's best scenario (every flow of the network in it) and what the search spent.
#[derive(Clone, Debug)]
pub(super) struct Found {
    pub(super) tables: ScenarioTables,
    pub(super) duration_ns: i64,
    pub(super) exact_for_grid: bool,
    pub(super) grid_step_ns: Option<i64>,
    pub(super) evaluations: u64,
}

/// What every row's search reads of the network.
pub(super) struct Context<'a> {
    net: &'a Network,
    routes: &'a [(usize, usize)],
    bounds: &'a [Option<f64>],
    store_and_forward: bool,
    period: Vec<i64>,
    lmin: Vec<u32>,
    lmax: Vec<u32>,
    /// Per port, the flows crossing it, each with the ports it crosses before (in route order).
    crossing: Vec<Vec<(usize, Vec<usize>)>>,
    /// Per flow, its largest bound over its routes, ns (the network's longest period where a
    /// route is unbounded).
    reach_ns: Vec<i64>,
    ifg_bits: f64,
    /// Per port with a gate control list (time-aware shaper, or gated credit-based shaper): its
    /// cycle and the instants its entries start, ns within the cycle. What such a port does
    /// depends on when frames come, not only on when they come relative to each other.
    gates: Vec<Option<(i64, Vec<i64>)>>,
}

/// A port's gate control list as (cycle, entry starts within it), ns; None for an ungated port.
fn gate_schedule(port: &crate::model::EgressPort) -> Option<(i64, Vec<i64>)> {
    crate::schedulers::discipline(&port.scheduler)?.gates().map(|g| g.starts_ns())
}

impl<'a> Context<'a> {
    pub(super) fn new(
        net: &'a Network,
        routes: &'a [(usize, usize)],
        bounds: &'a [Option<f64>],
        store_and_forward: bool,
    ) -> Context<'a> {
        use crate::sim::scenario::flow_frames;
        let mut crossing: Vec<Vec<(usize, Vec<usize>)>> = vec![Vec::new(); net.ports.len()];
        for (f, flow) in net.flows.iter().enumerate() {
            for r in &flow.routes {
                for (i, &p) in r.ports.iter().enumerate() {
                    if !crossing[p].iter().any(|(g, _)| *g == f) {
                        crossing[p].push((f, r.ports[..i].to_vec()));
                    }
                }
            }
        }
        let (period, sizes): (Vec<i64>, Vec<(u32, u32)>) =
            (0..net.flows.len()).map(|f| flow_frames(net, f)).map(|(p, lo, hi)| (p, (lo, hi))).unzip();
        let longest = period.iter().copied().max().unwrap_or(1);
        let mut reach_ns = vec![0i64; net.flows.len()];
        for (r, &(f, _)) in routes.iter().enumerate() {
            let b = bounds[r].map_or(longest, |us| (us * 1e3).ceil() as i64);
            reach_ns[f] = reach_ns[f].max(b);
        }
        Context {
            net,
            routes,
            bounds,
            store_and_forward,
            lmin: sizes.iter().map(|s| s.0).collect(),
            lmax: sizes.iter().map(|s| s.1).collect(),
            period,
            crossing,
            reach_ns,
            ifg_bits: net.spec.defaults.interframe_overhead.as_bits() as f64,
            gates: net.ports.iter().map(gate_schedule).collect(),
        }
    }

    /// The flows that can change the delay of route `path`'s frames: those crossing its ports,
    /// and, to a fixed point, those crossing the ports they cross before.
    fn relevant(&self, path: &[usize]) -> Vec<bool> {
        let mut in_set = vec![false; self.net.ports.len()];
        let mut work: Vec<usize> = path.to_vec();
        for &p in path {
            in_set[p] = true;
        }
        let mut rel = vec![false; self.net.flows.len()];
        while let Some(p) = work.pop() {
            for (g, before) in &self.crossing[p] {
                rel[*g] = true;
                for &q in before {
                    if !std::mem::replace(&mut in_set[q], true) {
                        work.push(q);
                    }
                }
            }
        }
        rel
    }

    /// Transmission of `bytes` on port `p`, ns.
    fn tx_ns(&self, bytes: u32, p: usize) -> f64 {
        (bytes as f64 * 8.0 + self.ifg_bits) * 1e9 / self.net.ports[p].rate
    }

    /// From flow `g`'s release to its frame of `bytes` entering port `q`, nothing in its way, ns.
    fn unloaded_ns(&self, g: usize, q: usize, bytes: u32) -> i64 {
        let before = &self.crossing[q].iter().find(|(f, _)| *f == g).expect("g crosses q").1;
        let flow = &self.net.flows[g];
        let mut t = self.net.nodes[flow.source].technological_latency * 1e9;
        for &p in before {
            let port = &self.net.ports[p];
            t = (t + self.tx_ns(bytes, p)).floor()
                + port.propagation_delay * 1e9
                + self.net.nodes[port.peer].technological_latency * 1e9;
        }
        t.round() as i64
    }

    /// The port flow `g` enters `q` from (`None`: `q` is its first).
    fn input(&self, g: usize, q: usize) -> Option<usize> {
        self.crossing[q].iter().find(|(f, _)| *f == g).and_then(|(_, before)| before.last().copied())
    }

    fn crosses(&self, g: usize, q: usize) -> bool {
        self.crossing[q].iter().any(|(f, _)| *f == g)
    }

    /// The exhaustive grid alone, from every flow released with the target: (its step, its
    /// best value, ns), or no step when it does not fit in `limit` points.
    #[cfg(test)]
    pub(super) fn grid_only(&self, row: usize, limit: u64) -> (Option<i64>, Option<i64>) {
        let budget = RowBudget { evaluations: u64::MAX, deadline: None };
        let mut s = RowSearch::new(self, row, 0, &budget);
        s.grid(limit);
        (s.grid_step, s.grid_step.map(|_| s.best_value))
    }

    pub(super) fn search(&self, row: usize, seed: u64, budget: &RowBudget, grid_limit: u64) -> Found {
        let mut s = RowSearch::new(self, row, seed, budget);
        s.construct();
        s.gate_phases();
        s.grid(grid_limit);
        if s.rel.len() > 1 {
            s.local_search();
        }
        Found {
            tables: s.tables(&s.best, true),
            duration_ns: s.horizon,
            exact_for_grid: s.exact,
            grid_step_ns: s.grid_step,
            evaluations: s.evaluations,
        }
    }
}

/// A point of the search: per relevant flow (local index), its release, frame size, whether it
/// sends (only while the critical instant is built), and the tie order.
#[derive(Clone, Debug)]
struct Candidate {
    release: Vec<i64>,
    size: Vec<u32>,
    on: Vec<bool>,
    /// Local indices, first taken first.
    order: Vec<usize>,
}

struct RowSearch<'c, 'a> {
    ctx: &'c Context<'a>,
    row: usize,
    /// The target's path.
    path: Vec<usize>,
    /// Relevant flows (global indices), the target first.
    rel: Vec<usize>,
    active: Vec<bool>,
    /// The target's release; every other release is relative to it.
    t0: i64,
    /// How far from the target's release the others may matter, ns.
    reach: i64,
    horizon: i64,
    rng: ChaCha8Rng,
    evaluations: u64,
    max_evaluations: u64,
    deadline: Option<Instant>,
    best: Candidate,
    best_value: i64,
    best_entries: Vec<PortEntry>,
    grid_step: Option<i64>,
    exact: bool,
    started: Instant,
    /// The longest gate cycle among the ports the relevant flows cross (0: none is gated). Where
    /// it is not 0 the scenario's phase against the gates matters: the search also shifts the
    /// whole scenario, and no grid of relative releases is exhaustive.
    gate_cycle: i64,
}

/// Relative releases tried by the local search, as a power of two of ns at most.
const LARGEST_SHIFT_BITS: u32 = 40;

impl<'c, 'a> RowSearch<'c, 'a> {
    fn new(ctx: &'c Context<'a>, row: usize, seed: u64, budget: &RowBudget) -> Self {
        let (t, k) = ctx.routes[row];
        let path = ctx.net.flows[t].routes[k].ports.clone();
        let active = ctx.relevant(&path);
        let mut rel = vec![t];
        rel.extend((0..ctx.net.flows.len()).filter(|&g| active[g] && g != t));
        let reach = rel.iter().map(|&g| ctx.reach_ns[g]).max().unwrap_or(0) + 1_000;
        let own = ctx.bounds[row].map_or(ctx.reach_ns[t], |us| (us * 1e3).ceil() as i64);
        let gate_cycle = (0..ctx.net.ports.len())
            .filter(|&p| ctx.crossing[p].iter().any(|(g, _)| active[*g]))
            .filter_map(|p| ctx.gates[p].as_ref().map(|(cycle, _)| *cycle))
            .max()
            .unwrap_or(0);
        let t0 = reach;
        // Room for the whole scenario shifted by up to a gate cycle.
        let horizon = t0 + 2 * own + 10_000 + gate_cycle;
        let n = rel.len();
        let mut order: Vec<usize> = (1..n).collect();
        order.push(0);
        let best = Candidate {
            release: vec![t0; n],
            size: rel.iter().map(|&g| ctx.lmax[g]).collect(),
            on: vec![true; n],
            order,
        };
        RowSearch {
            ctx,
            row,
            path,
            rel,
            active,
            t0,
            reach,
            horizon,
            rng: ChaCha8Rng::seed_from_u64(seed),
            evaluations: 0,
            max_evaluations: budget.evaluations,
            deadline: budget.deadline,
            best,
            best_value: -1,
            best_entries: Vec::new(),
            grid_step: None,
            exact: false,
            started: Instant::now(),
            gate_cycle,
        }
    }

    fn spent(&self) -> bool {
        self.evaluations >= self.max_evaluations || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// The scenario of a candidate: the relevant flows as it says, the others at 0 with their
    /// largest frames (silenced unless `whole`: they cannot change the target's delay).
    fn tables(&self, c: &Candidate, whole: bool) -> ScenarioTables {
        let net = self.ctx.net;
        let mut t = ScenarioTables::synchronized(net);
        t.store_and_forward = self.ctx.store_and_forward;
        let mut active = if whole { vec![true; net.flows.len()] } else { self.active.clone() };
        for (l, &g) in self.rel.iter().enumerate() {
            t.offset_ns[g] = c.release[l].rem_euclid(self.ctx.period[g]);
            t.sizes[g] = vec![c.size[l]];
            active[g] = c.on[l];
        }
        // Time-triggered flows are bounded by their schedule: they keep their offsets.
        for g in 0..net.flows.len() {
            if let Some(o) = net.bound_offset(g) {
                t.offset_ns[g] = o;
            }
        }
        // The candidate's order first, then the rest in the description's order.
        let mut rank = 0u32;
        for &l in &c.order {
            t.rank[self.rel[l]] = rank;
            rank += 1;
        }
        for g in 0..net.flows.len() {
            if !self.active[g] {
                t.rank[g] = rank;
                rank += 1;
            }
        }
        if !whole || c.on.iter().any(|&o| !o) {
            t.active = Some(active);
        }
        t.watch = vec![false; net.flows.len()];
        for &g in &self.rel {
            t.watch[g] = true;
        }
        t
    }

    /// Simulates a candidate: the target's largest delay, ns, and the relevant flows' entries
    /// into ports.
    fn run(&mut self, c: &Candidate) -> (i64, Vec<PortEntry>) {
        self.evaluations += 1;
        let tables = self.tables(c, false);
        let sim = evaluate(self.ctx.net, tables, self.horizon).expect("the network simulates");
        (sim.route_max_ns()[self.row], sim.port_entries().to_vec())
    }

    /// Runs a candidate in which every relevant flow sends and keeps it if it is the best.
    fn try_candidate(&mut self, c: &Candidate) -> i64 {
        let (v, entries) = self.run(c);
        if v > self.best_value {
            self.best_value = v;
            self.best = c.clone();
            self.best_entries = entries;
        }
        v
    }

    /// The frame released at `release` of relevant flow `l`, if the run has it.
    fn frame_of(&self, l: usize, release: i64) -> Option<u64> {
        (release >= 0).then(|| (release / self.ctx.period[self.rel[l]]) as u64)
    }

    fn entry(&self, entries: &[PortEntry], l: usize, release: i64, port: usize) -> Option<i64> {
        let frame = self.frame_of(l, release)?;
        let g = self.rel[l] as u32;
        entries.iter().find(|e| e.flow == g && e.frame == frame && e.port == port as u32).map(|e| e.time_ns)
    }

    /// The critical instant of FIFO analysis, hop by hop: at each port of the target's path,
    /// the flows joining it there are released so that their largest frames enter just before
    /// the target's (back to back for those sharing an input link, simultaneous otherwise, taken
    /// first on a tie), measured and corrected until they do.
    fn construct(&mut self) {
        let n = self.rel.len();
        let mut c = self.best.clone();
        c.on = vec![false; n];
        c.on[0] = true;
        let mut placed = vec![false; n];
        placed[0] = true;
        let path = self.path.clone();
        for (k, &q) in path.iter().enumerate() {
            let joining: Vec<usize> = (1..n)
                .filter(|&l| !placed[l] && self.ctx.crosses(self.rel[l], q))
                .filter(|&l| k == 0 || self.ctx.input(self.rel[l], q) != Some(path[k - 1]))
                .collect();
            if joining.is_empty() {
                continue;
            }
            // Per input link, the largest frames last (nearest the target).
            let mut groups: Vec<(Option<usize>, Vec<usize>)> = Vec::new();
            for &l in &joining {
                let input = self.ctx.input(self.rel[l], q);
                match groups.iter_mut().find(|(i, _)| *i == input) {
                    Some((_, v)) => v.push(l),
                    None => groups.push((input, vec![l])),
                }
            }
            for (_, v) in groups.iter_mut() {
                v.sort_by_key(|&l| (c.size[l], self.rel[l]));
            }
            for &l in &joining {
                c.on[l] = true;
                placed[l] = true;
            }
            // The target's entry with what is placed so far, then the joining flows' targets.
            let mut corrections = 0;
            loop {
                if self.spent() && corrections > 0 {
                    break;
                }
                let (_, entries) = self.run(&c);
                let Some(tau) = self.entry(&entries, 0, c.release[0], q) else { break };
                let mut moved = false;
                for (input, members) in &groups {
                    let mut at = tau;
                    for &l in members.iter().rev() {
                        let g = self.rel[l];
                        let want = match input {
                            None => tau,
                            Some(_) => at,
                        };
                        let actual = self.entry(&entries, l, c.release[l], q);
                        let release = match actual {
                            Some(a) if corrections > 0 => c.release[l] + (want - a),
                            _ => want - self.ctx.unloaded_ns(g, q, c.size[l]),
                        };
                        if release != c.release[l] {
                            c.release[l] = release;
                            moved = true;
                        }
                        if let Some(i) = input {
                            at -= self.ctx.tx_ns(c.size[l], *i).floor() as i64;
                        }
                    }
                }
                corrections += 1;
                if !moved || corrections >= 4 {
                    break;
                }
            }
        }
        // Flows that only meet the target's interferers upstream: out of the way for a start.
        for (l, &done) in placed.iter().enumerate().skip(1) {
            if !done {
                c.release[l] = self.horizon;
            }
            c.on[l] = true;
        }
        self.try_candidate(&c);
    }

    /// An exhaustive search over relative releases on a grid (interferers only; the target at
    /// t0), both extreme frame sizes and every tie order of the interferers, when it fits in
    /// `limit` points and the row's budget.
    fn grid(&mut self, limit: u64) {
        let m = self.rel.len() - 1;
        if m == 0 {
            // Alone: nothing to vary but its own frame size.
            let g = self.rel[0];
            let mut c = self.best.clone();
            for bytes in [self.ctx.lmin[g], self.ctx.lmax[g]] {
                c.size[0] = bytes;
                self.try_candidate(&c);
            }
            self.exact = self.gate_cycle == 0;
            return;
        }
        if m > 4 {
            return;
        }
        let mut left = self.max_evaluations.saturating_sub(self.evaluations);
        if let Some(end) = self.deadline {
            // What the time left affords at the speed of the runs so far, half of it.
            let per_run = self.started.elapsed().as_secs_f64() / self.evaluations.max(1) as f64;
            let time_left = end.saturating_duration_since(Instant::now()).as_secs_f64();
            left = left.min((time_left / per_run.max(1e-9)) as u64);
        }
        let cap = limit.min(left / 2);
        let sizes: u64 =
            self.rel.iter().map(|&g| if self.ctx.lmin[g] < self.ctx.lmax[g] { 2 } else { 1 }).product();
        let orders: u64 = (1..=m as u64).product();
        // Releases from t0 - reach to t0 + the target's own reach, centred on t0.
        let lo = self.reach;
        let hi = self.ctx.reach_ns[self.rel[0]] + 1_000;
        let per_step = |step: i64| (lo / step + hi / step + 1) as u64;
        let count =
            |step: i64| per_step(step).checked_pow(m as u32).and_then(|p| p.checked_mul(sizes * orders));
        // The finest step, no coarser than a quarter of the shortest frame on the path.
        let finest = self
            .rel
            .iter()
            .flat_map(|&g| self.path.iter().map(move |&p| (g, p)))
            .map(|(g, p)| self.ctx.tx_ns(self.ctx.lmin[g], p))
            .fold(f64::INFINITY, f64::min);
        let coarsest = ((finest / 4.0).floor() as i64).max(1);
        let points = ((cap / (sizes * orders)) as f64).powf(1.0 / m as f64).floor() as i64;
        if points < 2 {
            return;
        }
        let mut step = ((lo + hi) / (points - 1)).max(1);
        while count(step).is_none_or(|c| c > cap) {
            step += step / 16 + 1;
            if step > coarsest {
                return;
            }
        }
        if step > coarsest {
            return;
        }
        let total = count(step).expect("fits");
        let span = per_step(step) as i64;
        let base = self.best.clone();
        let mut perm: Vec<usize> = (1..=m).collect();
        let mut orders_list = Vec::new();
        permutations(&mut perm, 0, &mut orders_list);
        for point in 0..total {
            let mut x = point;
            let mut c = base.clone();
            for l in 1..=m {
                let j = (x % span as u64) as i64;
                x /= span as u64;
                c.release[l] = self.t0 - (lo / step) * step + j * step;
            }
            for (l, &g) in self.rel.iter().enumerate() {
                if self.ctx.lmin[g] < self.ctx.lmax[g] {
                    c.size[l] = if x % 2 == 0 { self.ctx.lmax[g] } else { self.ctx.lmin[g] };
                    x /= 2;
                }
            }
            let mut order = orders_list[x as usize % orders_list.len()].clone();
            order.push(0);
            c.order = order;
            c.release[0] = self.t0;
            self.try_candidate(&c);
        }
        self.grid_step = Some(step);
        // The grid fixes the target's release: exhaustive only where no gate makes the phase
        // matter.
        self.exact = self.gate_cycle == 0;
    }

    /// Behind gates, the phase of the whole scenario against the gate control lists: the best
    /// candidate shifted so that the target's frame reaches each gated port of its path just
    /// after an entry starts, or just too late to end before it (one ns past the usable part
    /// of the window before), then at a few phases evenly over the cycle.
    fn gate_phases(&mut self) {
        if self.gate_cycle == 0 {
            return;
        }
        let base = self.best.clone();
        let (_, entries) = self.run(&base);
        let mut shifts = Vec::new();
        for &q in &self.path {
            let Some((cycle, starts)) = self.ctx.gates[q].clone() else { continue };
            let Some(at) = self.entry(&entries, 0, base.release[0], q) else { continue };
            let tx = self.ctx.tx_ns(base.size[0], q).ceil() as i64;
            for &start in &starts {
                for target in [start + 1, start - tx + 1] {
                    shifts.push((target - at).rem_euclid(cycle));
                }
            }
        }
        const EVEN: i64 = 16;
        shifts.extend((1..EVEN).map(|k| k * self.gate_cycle / EVEN));
        shifts.sort_unstable();
        shifts.dedup();
        for d in shifts {
            if self.spent() {
                break;
            }
            let mut c = base.clone();
            for r in c.release.iter_mut() {
                *r += d;
            }
            self.try_candidate(&c);
        }
    }

    /// A (1+1) evolutionary local search from the best so far: one to three moves per step,
    /// kept when no worse; after a long stall, a restart from the best with a stronger shake.
    fn local_search(&mut self) {
        let mut cur = self.best.clone();
        let mut cur_value = self.best_value;
        let mut cur_entries = self.best_entries.clone();
        let mut stall = 0u64;
        let restart_after = 40 + 10 * self.rel.len() as u64;
        while !self.spent() {
            let moves = 1 + self.rng.gen_range(0..3usize).min(self.rng.gen_range(0..3usize));
            let mut c = cur.clone();
            for _ in 0..moves {
                self.mutate(&mut c, &cur_entries);
            }
            let (v, entries) = self.run(&c);
            if v > self.best_value {
                self.best_value = v;
                self.best = c.clone();
                self.best_entries = entries.clone();
                stall = 0;
            } else {
                stall += 1;
            }
            if v >= cur_value {
                cur = c;
                cur_value = v;
                cur_entries = entries;
            }
            if stall > restart_after {
                stall = 0;
                cur = self.best.clone();
                for _ in 0..3 + self.rel.len().min(8) {
                    let e = self.best_entries.clone();
                    self.mutate(&mut cur, &e);
                }
                let (v, entries) = self.run(&cur);
                cur_value = v;
                cur_entries = entries;
                if v > self.best_value {
                    self.best_value = v;
                    self.best = cur.clone();
                    self.best_entries = cur_entries.clone();
                }
            }
        }
    }

    fn mutate(&mut self, c: &mut Candidate, entries: &[PortEntry]) {
        let n = self.rel.len();
        if self.gate_cycle > 0 && self.rng.gen_bool(0.1) {
            // The whole scenario against the gates, by up to a cycle either way.
            let d = self.rng.gen_range(-self.gate_cycle..=self.gate_cycle);
            for r in c.release.iter_mut() {
                *r += d;
            }
            return;
        }
        let roll = self.rng.gen_range(0..100);
        if n == 1 || roll < 5 {
            // The target's own size.
            let g = self.rel[0];
            c.size[0] = self.pick_size(g);
            return;
        }
        let l = self.rng.gen_range(1..n);
        let g = self.rel[l];
        match roll {
            5..=39 => {
                // Align on the target where they meet: enter with it (just before on a tie), or a
                // frame's time earlier.
                let shared: Vec<usize> =
                    self.path.iter().copied().filter(|&q| self.ctx.crosses(g, q)).collect();
                let mut done = false;
                if !shared.is_empty() {
                    let q = shared[self.rng.gen_range(0..shared.len())];
                    let tau = self.entry(entries, 0, c.release[0], q);
                    let mine = self.entry(entries, l, c.release[l], q);
                    if let (Some(tau), Some(mine)) = (tau, mine) {
                        let back = match self.rng.gen_range(0..4) {
                            0 => self.rng.gen_range(1..=64),
                            1 => self.ctx.tx_ns(c.size[l], q).floor() as i64,
                            _ => 0,
                        };
                        c.release[l] += tau - mine - back;
                        done = true;
                    }
                }
                if !done {
                    self.shift(c, l);
                }
            }
            40..=79 => self.shift(c, l),
            80..=89 => c.size[l] = self.pick_size(g),
            _ => {
                // Tie order: a flow moved to another place (the target stays after the rest most
                // of the time).
                let i = self.rng.gen_range(0..c.order.len());
                let x = c.order.remove(i);
                let j = self.rng.gen_range(0..=c.order.len());
                c.order.insert(j, x);
                if self.rng.gen_bool(0.7) {
                    let t = c.order.iter().position(|&y| y == 0).expect("the target is ranked");
                    c.order.remove(t);
                    c.order.push(0);
                }
            }
        }
    }

    /// A flow's release moved by a power of two of ns, up to its reach, either way.
    fn shift(&mut self, c: &mut Candidate, l: usize) {
        let top = (64 - (self.reach.max(2) as u64).leading_zeros()).min(LARGEST_SHIFT_BITS);
        let bits = self.rng.gen_range(0..=top);
        let mut d = 1i64 << bits;
        if bits > 2 {
            d = self.rng.gen_range(d / 2..=d);
        }
        if self.rng.gen_bool(0.5) {
            d = -d;
        }
        c.release[l] += d;
    }

    fn pick_size(&mut self, g: usize) -> u32 {
        let (lo, hi) = (self.ctx.lmin[g], self.ctx.lmax[g]);
        match self.rng.gen_range(0..4) {
            0 | 1 => hi,
            2 => lo,
            _ => self.rng.gen_range(lo..=hi),
        }
    }
}

/// Every order of `v[k..]` (Heap's way would do; few elements here).
fn permutations(v: &mut Vec<usize>, k: usize, out: &mut Vec<Vec<usize>>) {
    if k == v.len() {
        out.push(v.clone());
        return;
    }
    for i in k..v.len() {
        v.swap(k, i);
        permutations(v, k + 1, out);
        v.swap(k, i);
    }
}
