"""One point of a sweep, computed where a worker runs it: the network built (generated, read or
drawn), the SPEC's steps run on it, the metrics kept. A point that fails gives a row with its
error instead of metrics; the batch goes on."""

from __future__ import annotations

import copy
import json
import math
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rtnetlab.sweep.spec import SweepSpec, set_path, sim_config


def engine_version() -> str:
    from rtnetlab import _core

    return str(getattr(_core, "__version__", "unknown"))


def quantile(hist: list, q: float) -> float | None:
    """The q-quantile of a simulator histogram [(upper edge µs, count), ...]: the upper edge of
    the bin where the cumulated count reaches q of the total (an upper estimate)."""
    # Flows share the simulator's bin edges: merge them first, so the sort is over distinct
    # edges, not over every flow's bins (that sort held the GIL for most of a point).
    merged: dict[float, int] = defaultdict(int)
    for upper, n in hist:
        merged[upper] += n
    total = sum(merged.values())
    if total == 0:
        return None
    rank, seen = q * total, 0
    for upper in sorted(merged):
        seen += merged[upper]
        if seen >= rank:
            return float(upper)
    return float(max(merged))


def description(spec: SweepSpec, params: dict, seed: int) -> dict:
    """The point's network description as plain data."""
    from rtnetlab import _core

    if "generate" in spec.network:
        g = {**spec.network["generate"]}
        g.update({k.split(".", 1)[1]: v for k, v in params.items() if k.startswith("generate.")})
        # `seed` in the SPEC keeps one network for every row; without it each row draws its own.
        doc = json.loads(
            _core.generate_afdx(
                g["virtual_links"], g["switches"], g.get("seed", seed), g["planes"], g["end_systems"]
            )
        )
    elif "random" in spec.network:
        doc = json.loads(_core.random_network(seed, spec.network["random"]))
    else:
        doc = copy.deepcopy(spec.base)
    for k, v in params.items():
        if k.startswith("network."):
            set_path(doc, k.split(".", 1)[1], v)
    return doc


def _num(x: Any) -> float:
    """A bound from the engine's JSON: null is an infinite bound."""
    return math.inf if x is None else float(x)


def _analysis_metrics(report: dict, classes: dict[str, str]) -> dict[str, float]:
    delays = [_num(f["delay_us"]) for f in report["flows"]]
    finite = [d for d in delays if math.isfinite(d)]
    out = {
        "max_delay_us": max(delays, default=math.nan),
        "mean_delay_us": sum(delays) / len(delays) if delays else math.nan,
        "unbounded": float(len(delays) - len(finite)),
        "max_backlog_bytes": max((_num(p["backlog_bytes"]) for p in report["ports"]), default=math.nan),
        "max_jitter_us": max((_num(f.get("jitter_us")) for f in report["flows"]), default=math.nan),
    }
    per: dict[str, list[float]] = defaultdict(list)
    for f, d in zip(report["flows"], delays, strict=True):
        per[classes.get(f["flow"], "")].append(d)
    for c, ds in per.items():
        out[f"max_delay_us.{c}"] = max(ds)
        out[f"mean_delay_us.{c}"] = sum(ds) / len(ds)
    return out


def _sim_metrics(report: dict, classes: dict[str, str], bounds: dict | None) -> dict[str, float]:
    flows = report["flows"]
    frames = sum(f["count"] for f in flows)
    hist = [h for f in flows for h in f.get("histogram", [])]
    out = {
        "frames": float(frames),
        "losses": float(sum(f.get("losses", 0) for f in flows)),
        "mean_us": sum(f["mean_us"] * f["count"] for f in flows) / frames if frames else math.nan,
        "p99_us": quantile(hist, 0.99),
        "max_us": max((f["max_us"] for f in flows if f["count"]), default=math.nan),
        "max_backlog_bytes": max(
            (p.get("max_backlog_bytes", 0.0) for p in report.get("ports", [])), default=math.nan
        ),
        "retransmissions": float(sum(f.get("retransmissions", 0) for f in flows)),
        "max_over_bound": math.nan,
        "above_bound": math.nan,
    }
    if bounds is not None:
        by_route = {(b["flow"], b["destination"], b["plane"]): _num(b["delay_us"]) for b in bounds["flows"]}
        ratios, above = [], 0
        for f in flows:
            b = by_route.get((f["flow"], f["destination"], f["plane"]))
            if b is None or not f["count"]:
                continue
            ratios.append(f["max_us"] / b if b > 0 else math.inf)
            above += f["max_us"] > b + 0.01
        out["max_over_bound"] = max(ratios, default=math.nan)
        out["above_bound"] = float(above)
    per_frames: dict[str, int] = defaultdict(int)
    per_total: dict[str, float] = defaultdict(float)
    per_max: dict[str, float] = defaultdict(float)
    per_hist: dict[str, list] = defaultdict(list)
    for f in flows:
        c = classes.get(f["flow"], "")
        per_frames[c] += f["count"]
        per_total[c] += f["mean_us"] * f["count"]
        if f["count"]:
            per_max[c] = max(per_max[c], f["max_us"])
        per_hist[c] += f.get("histogram", [])
    for c in per_frames:
        n = per_frames[c]
        out[f"frames.{c}"] = float(n)
        out[f"mean_us.{c}"] = per_total[c] / n if n else math.nan
        out[f"p99_us.{c}"] = quantile(per_hist[c], 0.99)
        out[f"max_us.{c}"] = per_max[c] if n else math.nan
    return out


def compute(spec: SweepSpec, params: dict, seed: int) -> dict[str, float]:
    """Every metric of the point's steps, by full name (`analyze.best.max_delay_us`, ...)."""
    from rtnetlab import _core, model
    from rtnetlab.simulate import run as simulate

    doc = description(spec, params, seed)
    step_opts = {k: v for k, v in params.items() if k.startswith(("simulate.", "analyze."))}
    metrics: dict[str, float] = {}
    classes = {f["name"]: f.get("class", "") for f in doc.get("flows", [])}
    net = None
    needs_net = any(t in spec.run for t in ("analyze", "simulate", "fixed_priority"))
    if needs_net:
        net = model.load_data(doc, f"point {params} seed {seed}")
    if "analyze" in spec.run:
        a = spec.run["analyze"]
        grouping = step_opts.get("analyze.grouping", a["grouping"])
        blind = step_opts.get("analyze.blind", a["blind"])
        for method in a["methods"]:
            report = net.analyze(method, grouping, blind)
            for k, v in _analysis_metrics(report, classes).items():
                metrics[f"analyze.{method}.{k}"] = v
    if "simulate" in spec.run:
        opts = {**spec.run["simulate"]}
        opts.update({k.split(".", 1)[1]: v for k, v in step_opts.items() if k.startswith("simulate.")})
        report = simulate(net, sim_config(opts, seed), progress=False)
        bounds = net.analyze("best") if opts.get("bounds", True) and not opts.get("retransmit") else None
        for k, v in _sim_metrics(report, classes, bounds).items():
            metrics[f"simulate.{k}"] = v
    if "configure" in spec.run:
        report = json.loads(_core.configure_afdx(json.dumps(doc), json.dumps(spec.run["configure"]["afdx"])))
        metrics["configure.feasible"] = float(bool(report.get("feasible")))
        metrics["configure.bandwidth_bps"] = float(report.get("reserved_bps", math.nan))
    if "fixed_priority" in spec.run:
        report = net.partition(spec.run["fixed_priority"]["method"])
        metrics["fixed_priority.schedulable"] = float(bool(report.get("feasible")))
    return metrics


def error_line(e: BaseException) -> str:
    """An exception as a row's error: its type and its message on one line."""
    message = " ".join(str(e).split()) or type(e).__name__
    return f"{type(e).__name__}: {message}"


def _metric(v: Any) -> float | None:
    """A metric for the rows: None when undefined (missing or NaN), else a float."""
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def record(
    task: tuple[int, int, dict, str],
    keep: Sequence[str],
    compute: Callable[[], Mapping[str, Any]],
    version: str | None = None,
) -> dict:
    """One Parquet row of a sweep task (index, seed, params, key): the metrics `keep` of
    `compute()` (None where missing or NaN), or, when it raises, none and the error on one line
    (an engine panic too: the batch goes on); the wall time is the computation's."""
    index, seed, params, key = task
    t0 = time.perf_counter()
    try:
        values = compute()
        metrics, error = {name: _metric(values.get(name)) for name in keep}, None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # recorded in the row; the sweep goes on
        metrics, error = dict.fromkeys(keep), error_line(e)
    return {
        "point": key,
        "index": index,
        "seed": seed,
        "params": params,
        "metrics": metrics,
        "engine_version": engine_version() if version is None else version,
        "wall_s": time.perf_counter() - t0,
        "error": error,
    }


def _kept(spec: SweepSpec, params: dict, seed: int) -> dict[str, float]:
    """The point's metrics; a kept name the point does not give is the point's error."""
    metrics = compute(spec, params, seed)
    for name in spec.keep:
        if name not in metrics:
            cls = name.rsplit(".", 1)[-1]
            raise ValueError(f"keep: {name}: no flow of this network is of traffic class '{cls}'")
    return metrics


def run_point(spec: SweepSpec, params: dict, seed: int) -> tuple[dict[str, float | None], str | None, float]:
    """(kept metrics, error or None, wall time in s) of one point and seed."""
    row = record((0, seed, params, ""), spec.keep, lambda: _kept(spec, params, seed), version="")
    return row["metrics"], row["error"], row["wall_s"]


def run_batch(spec: SweepSpec, batch: list[tuple[int, int, dict, str]]) -> list[dict]:
    """Runs a batch of (index, seed, params, key) on a worker; returns its rows. The checked SPEC
    travels with the task (a base description as its data), so a worker needs only rtnetlab."""
    version = engine_version()
    return [record(task, spec.keep, lambda t=task: _kept(spec, t[2], t[1]), version) for task in batch]
