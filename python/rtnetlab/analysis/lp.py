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

Row = tuple[list[int], list[float], float]


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


_local = threading.local()


def _instance():
    """This thread's HiGHS instance, emptied: one per thread (an analysis may be run from several),
    made once (a new instance costs about 0.2 ms, which the many small programs of `best` feel)."""
    import highspy

    h = getattr(_local, "highs", None)
    if h is None:
        with quiet_highs():
            h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        # The primal simplex: measured twice as fast as HiGHS's default (dual) on fifo-lp's
        # programs of 1,000-2,000 variables (benchmarks/nc_families.py), the same optimum.
        h.setOptionValue("simplex_strategy", 4)
        _local.highs = h
    else:
        h.clearModel()
    return h


def maximise(objective: list[float], rows: list[Row]) -> float:
    """The optimum of max c·x, A·x <= b, x >= 0; ValueError naming HiGHS's status otherwise."""
    import highspy
    import numpy as np

    h = _instance()
    inf = highspy.kHighsInf
    n = len(objective)
    h.addVars(n, np.zeros(n), np.full(n, inf))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.asarray(objective, dtype=float))
    # All rows at once (compressed rows): one call instead of one per row, which dominates the
    # time of the larger tandem programs.
    m = len(rows)
    starts = np.zeros(m, dtype=np.int32)
    nz = 0
    for k, (columns, _, _) in enumerate(rows):
        starts[k] = nz
        nz += len(columns)
    indices = np.fromiter((c for columns, _, _ in rows for c in columns), dtype=np.int32, count=nz)
    values = np.fromiter((a for _, coefficients, _ in rows for a in coefficients), dtype=float, count=nz)
    upper = np.fromiter((b for _, _, b in rows), dtype=float, count=m)
    if m:
        h.addRows(m, np.full(m, -inf), upper, nz, starts, indices, values)
    h.changeObjectiveSense(highspy.ObjSense.kMaximize)
    h.run()
    status = h.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        raise ValueError(f"HiGHS: {h.modelStatusToString(status)}")
    return float(h.getInfo().objective_function_value)


def solver() -> Callable[[list[float], list[Row]], float] | None:
    """``maximise`` when HiGHS is installed, else None. Found, not imported: importing highspy
    and numpy costs a tenth of a second, and most analyses solve no program."""
    import importlib.util

    return maximise if importlib.util.find_spec("highspy") is not None else None
