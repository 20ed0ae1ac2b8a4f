//! A solver for fifo-lp's programs in the tests: microlp (plain Rust), where the product passes
//! HiGHS from Python. Its optimum is raised by the engine like HiGHS's (the tolerance margin).

use microlp::{ComparisonOp, OptimizationDirection, Problem, SolveOutcome};
use rtnetlab_core::analysis::fifo_lp::Program;

/// max c·x subject to A·x ≤ b, x ≥ 0: the optimum, or why there is none.
pub fn maximise(p: &Program) -> Result<f64, String> {
    let mut problem = Problem::new(OptimizationDirection::Maximize);
    let vars: Vec<_> = p.objective.iter().map(|&c| problem.add_var(c, (0.0, f64::INFINITY))).collect();
    for (terms, upper) in &p.rows {
        let expr: Vec<_> = terms.iter().map(|&(c, a)| (vars[c], a)).collect();
        problem.add_constraint(&expr[..], ComparisonOp::Le, *upper);
    }
    match problem.solve() {
        Ok(SolveOutcome::Solution(s)) => Ok(s.objective()),
        Ok(_) => Err("interrupted".into()),
        // The engine drops a case a solver finds infeasible (it holds no trajectory).
        Err(microlp::Error::Infeasible) => Err("Infeasible".into()),
        Err(e) => Err(e.to_string()),
    }
}
