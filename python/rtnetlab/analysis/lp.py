"""HiGHS (the package highspy, extra ``cloud``) as the engine's solver of fifo-lp's programs.

The engine builds each program (crates/core/src/analysis/fifo_lp.rs) and calls ``maximise`` on
it: max c·x subject to A·x <= b, x >= 0, A given row by row. The optimum goes back to the engine,
which turns it into a delay bound. ``solver()`` is None when highspy is not installed: fifo-lp
is then refused with that reason and ``best`` does without it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any


@contextlib.contextmanager
def quiet_highs() -> Iterator[None]:
    """HiGHS prints its banner on the process's standard output (file descriptor 1) when an
    instance is made, where it would corrupt `--json`: that output goes to /dev/null meanwhile.
    Every user of HiGHS here (fifo-lp, the admission's exact placement) makes its instances in it."""
    sys.stdout.flush()
    saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


#: HiGHS instances not in use. The engine solves routes on several threads of its own, each
#: calling ``maximise`` with the interpreter lock taken only around the call (HiGHS runs without
#: it), so an instance is taken from here and given back rather than kept per thread.
_idle: list[Any] = []
_idle_lock = threading.Lock()


@contextlib.contextmanager
def _instance() -> Iterator[Any]:
    """An empty HiGHS instance for one program, made once and reused (a new instance costs about
    0.2 ms, which the many small programs of `best` feel)."""
    import highspy

    with _idle_lock:
        h = _idle.pop() if _idle else None
        if h is None:
            # Made under the lock: the banner's redirection of file descriptor 1 is process-wide.
            with quiet_highs():
                h = highspy.Highs()
            h.setOptionValue("output_flag", False)
            # The primal simplex: measured twice as fast as HiGHS's default (dual) on fifo-lp's
            # programs of 1,000-2,000 variables (benchmarks/nc_families.py), the same optimum.
            h.setOptionValue("simplex_strategy", 4)
            # One thread per program: the engine already solves programs side by side.
            h.setOptionValue("threads", 1)
    try:
        h.clearModel()
        yield h
    finally:
        with _idle_lock:
            _idle.append(h)


#: The programs (variables) HiGHS presolves (``maximise``): measured on the programs of a 150-flow
#: network of benchmarks/nc_scale.py, presolve off saves 22 % of HiGHS's time below 500
#: variables and costs 5-15 % above.
PRESOLVE_FROM = 500


def maximise(costs: bytes, starts: bytes, columns: bytes, coefficients: bytes, upper: bytes,
             objectives: int = 1) -> list[float]:
    """The optima of max c·x, A·x <= b, x >= 0 for each of `objectives` cost vectors c, in turn;
    ValueError naming HiGHS's status when the first has none, NaN for a later one without.
    The engine passes the program as native-endian arrays (the c's as f64, one after the other;
    A in compressed rows: row starts and columns as i32, coefficients as f64; b as f64), read
    here without a copy. Only the costs change from one c to the next: the optimal basis stays
    feasible and the primal simplex goes on from it."""
    import highspy
    import numpy as np

    with _instance() as h:
        inf = highspy.kHighsInf
        every = np.frombuffer(costs, dtype=np.float64)
        n = len(every) // objectives
        every_column = np.arange(n, dtype=np.int32)
        h.addVars(n, np.zeros(n), np.full(n, inf))
        h.changeColsCost(n, every_column, every[:n])
        b = np.frombuffer(upper, dtype=np.float64)
        m = len(b)
        if m:
            index = np.frombuffer(columns, dtype=np.int32)
            h.addRows(m, np.full(m, -inf), b, len(index), np.frombuffer(starts, dtype=np.int32), index,
                      np.frombuffer(coefficients, dtype=np.float64))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        # Presolve pays on large programs only: below PRESOLVE_FROM variables (most of refine's
        # and the screen's programs) it took a fifth of HiGHS's time, for the same optimum.
        h.setOptionValue("presolve", "choose" if n >= PRESOLVE_FROM else "off")
        h.run()
        status = h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            raise ValueError(f"HiGHS: {h.modelStatusToString(status)}")
        optima = [float(h.getInfo().objective_function_value)]
        for k in range(1, objectives):
            h.changeColsCost(n, every_column, every[k * n:(k + 1) * n])
            h.run()
            optimal = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
            optima.append(float(h.getInfo().objective_function_value) if optimal else float("nan"))
        return optima


def solver() -> Callable[..., list[float]] | None:
    """``maximise`` when HiGHS is installed, else None. Found, not imported: importing highspy
    and numpy costs a tenth of a second, and most analyses solve no program."""
    import importlib.util

    return maximise if importlib.util.find_spec("highspy") is not None else None


def solve_milp(program_json: str) -> tuple[str, list[float] | None, float | None, float | None]:
    """The engine's mixed-integer programs (configure tsn's offsets,
    crates/core/src/synthesis/tsn/schedule.rs `Milp`): minimise c·x, lo <= A·x <= hi, bounds and
    integrality per column, within the program's time limit, from its start when it has one.
    Returns (status, x, objective, bound): status `optimal`, `infeasible`, `time_limit` or HiGHS's
    word; x the best solution found (None without one); bound the best proved lower bound."""
    import json

    import highspy
    import numpy as np

    p = json.loads(program_json)
    with quiet_highs():
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", max(float(p["time_limit"]), 0.01))
    # One thread: the machine's other core stays with the rest of the run.
    h.setOptionValue("threads", 1)
    inf = highspy.kHighsInf
    n = len(p["cost"])

    def bound(values: list[float | None], default: float) -> np.ndarray:
        return np.array([default if v is None else v for v in values], dtype=float)

    # serde writes infinite bounds as null.
    h.addVars(n, bound(p["lower"], -inf), bound(p["upper"], inf))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.asarray(p["cost"], dtype=float))
    integer = np.array([i for i, b in enumerate(p["integer"]) if b], dtype=np.int32)
    if len(integer):
        h.changeColsIntegrality(
            len(integer), integer, np.full(len(integer), highspy.HighsVarType.kInteger, dtype=np.uint8)
        )
    rows = p["rows"]
    m = len(rows)
    if m:
        starts = np.zeros(m, dtype=np.int32)
        nz = 0
        for k, (cols, _, _, _) in enumerate(rows):
            starts[k] = nz
            nz += len(cols)
        idx = np.fromiter((c for cols, _, _, _ in rows for c in cols), dtype=np.int32, count=nz)
        val = np.fromiter((a for _, coef, _, _ in rows for a in coef), dtype=float, count=nz)
        lo = np.array([-inf if r[2] is None else r[2] for r in rows], dtype=float)
        hi = np.array([inf if r[3] is None else r[3] for r in rows], dtype=float)
        h.addRows(m, lo, hi, nz, starts, idx, val)
    if p.get("start") is not None:
        sol = highspy.HighsSolution()
        sol.col_value = list(p["start"])
        sol.value_valid = True
        h.setSolution(sol)
    h.run()
    status = h.getModelStatus()
    word = {
        highspy.HighsModelStatus.kOptimal: "optimal",
        highspy.HighsModelStatus.kInfeasible: "infeasible",
        highspy.HighsModelStatus.kTimeLimit: "time_limit",
    }.get(status, h.modelStatusToString(status))
    info = h.getInfo()
    has_x = info.primal_solution_status == 2  # kSolutionStatusFeasible
    x = list(h.getSolution().col_value) if has_x else None
    objective = float(info.objective_function_value) if has_x else None
    lower = float(info.mip_dual_bound) if np.isfinite(info.mip_dual_bound) else None
    return word, x, objective, lower


def milp_solver() -> Callable[[str], tuple[str, list[float] | None, float | None, float | None]] | None:
    """``solve_milp`` when HiGHS is installed, else None (first fit alone then)."""
    import importlib.util

    return solve_milp if importlib.util.find_spec("highspy") is not None else None
