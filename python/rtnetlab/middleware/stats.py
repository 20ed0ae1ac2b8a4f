"""Latency statistics of a run: the five figures of the seed papers' tables (min, mean, max,
standard deviation, 99th percentile), in microseconds."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile_nearest_rank(sorted_values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile: the smallest value with at least q % of the samples at or
    below it (an observed sample, never an interpolation)."""
    n = len(sorted_values)
    rank = max(1, math.ceil(q / 100.0 * n))
    return sorted_values[rank - 1]


def summary(samples_ns: Sequence[float]) -> dict:
    """count, min_us, mean_us, stdev_us (sample standard deviation, n - 1), p99_us, max_us of
    latencies given in nanoseconds; the figures are None when there is no sample."""
    xs = sorted(float(x) / 1000.0 for x in samples_ns)
    n = len(xs)
    if n == 0:
        return {"count": 0, "min_us": None, "mean_us": None, "stdev_us": None, "p99_us": None, "max_us": None}
    mean = math.fsum(xs) / n
    var = math.fsum((x - mean) ** 2 for x in xs) / (n - 1) if n > 1 else 0.0
    return {
        "count": n,
        "min_us": xs[0],
        "mean_us": mean,
        "stdev_us": math.sqrt(var),
        "p99_us": percentile_nearest_rank(xs, 99.0),
        "max_us": xs[-1],
    }


#: The probability levels of a row's quantile sketch: every percent, and the tail finer (the CDF
#: plots are drawn from it; the raw samples are not kept in the results).
SKETCH_LEVELS = (*(k / 100 for k in range(0, 100)), 0.995, 0.999, 0.9999, 1.0)


def quantile_sketch(samples_ns: Sequence[float]) -> list[list[float]]:
    """[[fraction, latency_us], ...]: for each of `SKETCH_LEVELS`, its nearest-rank sample (an
    observed one; level 0 gives the minimum) and the fraction of the samples ranked at or below it
    (rank / count: a point of the empirical CDF, exact). Levels that few samples cannot tell apart
    fall on one rank and are kept once. Empty without samples."""
    xs = sorted(float(x) / 1000.0 for x in samples_ns)
    n = len(xs)
    if n == 0:
        return []
    ranks = sorted({max(1, math.ceil(q * n - 1e-9)) for q in SKETCH_LEVELS})
    return [[r / n, xs[r - 1]] for r in ranks]
