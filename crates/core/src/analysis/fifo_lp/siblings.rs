//! Flows whose tree programs up to a port are one program: solved once, an objective each
//! ([`Bounds::siblings`]).

use super::{model, program, raised, Bounds, Piece, Program, Solver, TreeServer};
use crate::curves::Unbounded;
use crate::model::{FlowId, PortId};

/// A flow's tree bound found with another flow's program ([`Bounds::siblings`]): the bound,
/// the bounds up to where its cut pieces enter (asked again when it is taken, as computing it
/// would), and its program's variables (counted as if solved).
#[derive(Clone)]
pub(super) struct SolvedTree {
    pub(super) result: Result<f64, Unbounded>,
    pub(super) needs: Vec<(FlowId, PortId)>,
    pub(super) variables: usize,
}

/// A flow whose bound comes with another's program: the flow, the node of that program's tree
/// where it enters, and the bounds its cut pieces ask for, in its own order.
pub(super) struct Sibling {
    flow: FlowId,
    node: usize,
    needs: Vec<(FlowId, PortId)>,
}

impl Bounds<'_> {
    /// The flows other than `f` whose route ends at `end` in `end`'s queue, not yet bounded there,
    /// whose tree program there is `f`'s ([`model::Shape`]), on a feed-forward network (on a
    /// cyclic one a cut piece's burst depends on who asks). Route ends only: a bound up to a
    /// port inside a route is asked for only where a tree cuts the flow there, and on the
    /// networks of benchmarks/nc_scale.py most such bounds found in advance were never asked for
    /// (at 150 flows, 50 of 185). Each with the node of `f`'s tree where it enters
    /// and the bounds its cut pieces ask for, in its own order. Its bound is then the optimum of
    /// `f`'s program with the objective of its own bit ([`program::objective_from`]).
    pub(super) fn siblings(
        &mut self,
        f: FlowId,
        end: PortId,
        tree: &model::Tree,
        entries: &[(model::Entry, Piece)],
    ) -> Vec<Sibling> {
        if !self.acyclic {
            return Vec::new();
        }
        let m = &self.model;
        let mut shape = None;
        let mut out = Vec::new();
        for member in &m.members[tree.queues[tree.root]] {
            let g = member.flow;
            let key = (g, end);
            let known = self.memo.contains_key(&key)
                || self.trees.contains_key(&key)
                || self.shared.is_some_and(|s| {
                    s.get(&key).is_some() || s.trees.lock().is_ok_and(|t| t.contains_key(&key))
                });
            let ends_here = m.net.flows[g].routes.iter().any(|r| r.ports.last() == Some(&end));
            if g == f || known || !ends_here {
                continue;
            }
            let own = model::Tree::unfolded(m, g, end, self.effort.dates, self.effort.unfold);
            let own_entries = model::pieces(m, g, &own);
            let shape = shape.get_or_insert_with(|| model::shape(tree, entries));
            if model::shape(&own, &own_entries) != *shape {
                continue;
            }
            let first = own.path(0);
            let Some(node) = (0..tree.queues.len()).find(|&h| tree.path(h) == first) else { continue };
            // Not one another part is computing, or about to give with its own program.
            if let Some(shared) = self.shared {
                if !shared.try_claim(key) {
                    continue;
                }
                self.held.push(key);
            }
            let needs = own_entries
                .iter()
                .filter(|(e, _)| !e.fresh)
                .map(|(e, _)| (e.flow, e.from.expect("a cut piece comes from a port")))
                .collect();
            out.push(Sibling { flow: g, node, needs });
        }
        out
    }

    /// `f`'s tree bound from its one-period program `lp` (time unit `time`) over `servers`,
    /// solved once for `f` and each of its `siblings` (each a bit entering at its own node); the
    /// siblings' bounds kept for when they are asked for ([`Bounds::take_tree`]).
    pub(super) fn solve_with_siblings(
        &mut self,
        f: FlowId,
        end: PortId,
        (lp, time): (Program, f64),
        servers: &[TreeServer],
        siblings: Vec<Sibling>,
        solver: Solver,
    ) -> Result<f64, Unbounded> {
        let variables = lp.objective.len();
        let mut objectives = vec![lp.objective.clone()];
        objectives.extend(siblings.iter().map(|s| program::objective_from(servers, variables, s.node)));
        let optima = solver.maximise_each(&lp, &objectives);
        self.charge(variables);
        for (Sibling { flow: g, needs, .. }, optimum) in siblings.into_iter().zip(&optima[1..]) {
            // One without an optimum is computed on its own when asked for.
            if let Ok(v) = optimum {
                let done = SolvedTree { result: Ok(raised(*v, time)), needs, variables };
                if let Some(shared) = self.shared {
                    if let Ok(mut trees) = shared.trees.lock() {
                        trees.insert((g, end), done.clone());
                    }
                }
                self.trees.insert((g, end), done);
            }
        }
        let name = &self.model.net.flows[f].name;
        match &optima[0] {
            Ok(v) => Ok(raised(*v, time)),
            Err(why) => {
                Err(Unbounded::new(format!("flow '{name}': the linear program has no optimum ({why})")))
            }
        }
    }

    /// The tree bound of `key` found with another flow's program, by this part or another.
    pub(super) fn take_tree(&mut self, key: (FlowId, PortId)) -> Option<SolvedTree> {
        self.trees.remove(&key).or_else(|| self.shared.and_then(|s| s.trees.lock().ok()?.get(&key).cloned()))
    }
}
