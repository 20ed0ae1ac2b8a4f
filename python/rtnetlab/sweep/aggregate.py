"""Aggregation of a sweep's rows: per point (over its seeds) the mean of each metric and its
t-based confidence interval (Student's t quantile from scipy.stats), and plots of a metric
against a varied parameter, one series per value of the other varied keys. The report and the
experiments reuse both."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any


def mean_ci(values: list[float], level: float) -> dict[str, float | int | None]:
    """Mean, sample standard deviation and the half-width of the two-sided `level` interval
    t_{(1+level)/2, n-1} · s / √n. An infinite value (an unbounded bound) makes the mean
    infinite and the interval undefined; one value has no interval."""
    from scipy.stats import t

    n = len(values)
    if n == 0:
        return {"n": 0, "mean": None, "std": None, "ci_low": None, "ci_high": None, "half_width": None}
    if any(math.isinf(v) for v in values):
        m = math.inf if all(v > 0 for v in values if math.isinf(v)) else math.nan
        return {"n": n, "mean": m, "std": None, "ci_low": None, "ci_high": None, "half_width": None}
    mean = math.fsum(values) / n
    if n == 1:
        return {"n": 1, "mean": mean, "std": None, "ci_low": None, "ci_high": None, "half_width": None}
    std = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = float(t.ppf((1 + level) / 2, n - 1)) * std / math.sqrt(n)
    return {
        "n": n,
        "mean": mean,
        "std": std,
        "ci_low": mean - half,
        "ci_high": mean + half,
        "half_width": half,
    }


def summarise(rows: list[dict], params: list[str], metrics: list[str], level: float) -> list[dict]:
    """One entry per point (rows grouped by `index`): its parameters, rows and failures, and per
    metric the mean and interval over the seeds whose rows have a value."""
    groups: dict[int, list[dict]] = defaultdict(list)
    for r in rows:
        groups[r["index"]].append(r)
    out = []
    for index in sorted(groups):
        rs = groups[index]
        entry: dict[str, Any] = {
            "index": index,
            **{p: rs[0][p] for p in params},
            "rows": len(rs),
            "failed": sum(1 for r in rs if r.get("error")),
        }
        for m in metrics:
            values = [float(r[m]) for r in rs if r.get(m) is not None and not r.get("error")]
            entry[m] = mean_ci(values, level)
        out.append(entry)
    return out


def flat(summary: list[dict], params: list[str], metrics: list[str]) -> list[dict]:
    """The summary as flat records (`METRIC.mean`, `METRIC.ci_low`, ...) for CSV."""
    recs = []
    for e in summary:
        r = {"index": e["index"], **{p: e[p] for p in params}, "rows": e["rows"], "failed": e["failed"]}
        for m in metrics:
            for k in ("n", "mean", "ci_low", "ci_high"):
                r[f"{m}.{k}"] = e[m][k]
        recs.append(r)
    return recs


def csv_text(records: list[dict]) -> str:
    import csv
    import io

    buf = io.StringIO()
    if records:
        w = csv.DictWriter(buf, fieldnames=list(records[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(records)
    return buf.getvalue()


def plot(
    summary: list[dict],
    x: str,
    metric: str,
    series: list[str],
    path: Path,
    *,
    title: str = "",
    ylabel: str | None = None,
    xlabel: str | None = None,
    level: float = 0.95,
    reference: list[tuple[float, float, str]] | None = None,
    logy: bool = False,
) -> Path:
    """`metric` (mean with its interval as error bars) against parameter `x`, one line per
    combination of the `series` parameters; `reference` points (x, y, label) drawn as stars
    (a paper's numbers). Written whole as PNG."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rtnetlab.io import output as outfiles

    lines: dict[tuple, list[tuple[float, float, float]]] = defaultdict(list)
    for e in summary:
        s = e[metric]
        if s["mean"] is None or not math.isfinite(s["mean"]):
            continue
        hw = s["half_width"] if s["half_width"] is not None else 0.0
        lines[tuple(e[k] for k in series)].append((e[x], s["mean"], hw))
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for label, pts in lines.items():
        pts.sort()
        ax.errorbar(
            [p[0] for p in pts],
            [p[1] for p in pts],
            yerr=[p[2] for p in pts],
            marker="o",
            capsize=3,
            label=" / ".join(str(v) for v in label) or metric,
        )
    for rx, ry, rl in reference or []:
        ax.plot([rx], [ry], "k*", markersize=9)
        ax.annotate(rl, (rx, ry), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or metric)
    if logy:
        ax.set_yscale("log")
    ax.set_title(title or f"{metric} ({round(level * 100)} % CI)", fontsize=9)
    ax.grid(alpha=0.3)
    if len(lines) > 1 or reference:
        ax.legend(fontsize=7)
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110)
    plt.close(fig)
    outfiles.atomic_write(path, png.getvalue())
    return path


def default_plots(
    summary: list[dict], params: list[str], metrics: list[str], out_dir: Path, level: float
) -> list[Path]:
    """One plot per metric against the first numeric varied parameter (the others as series)."""
    numeric = [
        p
        for p in params
        if summary and all(isinstance(e[p], int | float) and not isinstance(e[p], bool) for e in summary)
    ]
    if not numeric:
        return []
    x = numeric[0]
    series = [p for p in params if p != x]
    paths = []
    for m in metrics:
        safe = m.replace("/", "_")
        paths.append(plot(summary, x, m, series, out_dir / f"{safe}.png", level=level))
    return paths


def write_summary(spec: Any, out: Path) -> dict:
    """Summary CSV and JSON and the default plots of the rows in `out` (a sweep `spec`'s);
    returns the files written, the summary and the rows."""
    import json

    from rtnetlab.io import output as outfiles
    from rtnetlab.sweep import runner
    from rtnetlab.sweep.options import _clean, _json_default

    rows = runner.rows_as_dicts(runner.read_rows(out))
    summary = summarise(rows, spec.param_names, spec.keep, spec.confidence)
    files: dict[str, Any] = {
        "rows": str(out / runner.ROWS),
        "summary_csv": str(out / "summary.csv"),
        "summary_json": str(out / "summary.json"),
    }
    outfiles.write_all(
        {
            out / "summary.csv": csv_text(flat(summary, spec.param_names, spec.keep)),
            out / "summary.json": json.dumps(
                _clean({"name": spec.name, "confidence": spec.confidence, "points": summary}),
                indent=1,
                default=_json_default,
            )
            + "\n",
        }
    )
    plots = default_plots(summary, spec.param_names, spec.keep, out / "plots", spec.confidence)
    files["plots"] = [str(p) for p in plots]
    return {"files": files, "summary": summary, "rows": rows}
