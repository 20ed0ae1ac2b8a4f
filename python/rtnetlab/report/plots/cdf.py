"""The latency CDFs per traffic class: every frame of the class, each flow faint, the class's
largest bound and its deadlines.
"""

from __future__ import annotations

import math
from collections import defaultdict

from rtnetlab.report.data import NO_CLASS
from rtnetlab.report.html_text import us
from rtnetlab.report.plots.common import CLASS_COLOURS, MAX_CDF_LINES, figure, log_labels, svg


def _cdf_points(hist: list[list[float]]) -> tuple[list[float], list[float]]:
    total = sum(n for _, n in hist)
    xs: list[float] = []
    ys: list[float] = []
    seen = 0.0
    for upper, n in sorted(hist):
        seen += n
        xs.append(upper)
        ys.append(seen / total)
    return xs, ys


def plot_cdfs(data: dict) -> tuple[str, str]:
    """Per traffic class: the CDF of every simulated latency of the class (all flows, destinations
    and planes, from the histograms), each flow's own CDF faint, the class's largest bound and its
    deadlines as vertical lines."""
    flows = data["simulation"]["flows"]
    classes_order = [c["name"] for c in data["spec"].get("classes", [])]
    cls_of = {r["flow"]: r["class"] for r in data["rows"]}
    by_class: dict[str, list[dict]] = defaultdict(list)
    for f in flows:
        if f["count"] and f.get("histogram"):
            by_class[cls_of.get(f["flow"], NO_CLASS)].append(f)
    names = [c for c in classes_order if c in by_class] + sorted(
        c for c in by_class if c not in classes_order
    )
    bound: dict[str, float | None] = {}
    deadlines: dict[str, set[float]] = defaultdict(set)
    for r in data["rows"]:
        c = r["class"]
        b = r["bound_us"]
        bound[c] = None if b is None or bound.get(c, 0.0) is None else max(bound.get(c, 0.0) or 0.0, b)
        if r["deadline_us"]:
            deadlines[c].add(r["deadline_us"])
    ncols = min(3, max(len(names), 1))
    nrows = max(1, math.ceil(len(names) / ncols))
    fig = figure(4.4 * ncols, 3.3 * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    caption = ""
    for k, (ax, name) in enumerate(zip(axes, names, strict=False)):
        colour = CLASS_COLOURS[k % len(CLASS_COLOURS)]
        members = by_class[name]
        for f in members[:MAX_CDF_LINES]:
            xs, ys = _cdf_points(f["histogram"])
            ax.step([f["min_us"], *xs], [0.0, *ys], where="post", color=colour, alpha=0.18, linewidth=0.7)
        if len(members) > MAX_CDF_LINES:
            caption = f" At most {MAX_CDF_LINES} individual flows are drawn per class."
        merged: dict[float, int] = defaultdict(int)
        for f in members:
            for upper, n in f["histogram"]:
                merged[upper] += n
        xs, ys = _cdf_points([[u, n] for u, n in merged.items()])
        lo = min(f["min_us"] for f in members)
        ax.step(
            [lo, *xs], [0.0, *ys], where="post", color=colour, linewidth=2.0, label="all frames of the class"
        )
        b = bound.get(name)
        if b is not None:
            ax.axvline(b, color="#c62828", linestyle="--", linewidth=1.2, label=f"largest bound {us(b)} µs")
        for d in sorted(deadlines.get(name, ())):
            ax.axvline(d, color="black", linestyle=":", linewidth=1.2, label=f"deadline {us(d)} µs")
        ax.set_xscale("log")
        lo_x, hi_x = ax.get_xlim()
        log_labels(ax.xaxis, lo_x, hi_x)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("latency (µs)")
        ax.set_ylabel("fraction of frames ≤ x")
        count = sum(f["count"] for f in members)
        ax.set_title(
            f"{name}: {len({f['flow'] for f in members})} flows, {count:,} frames", loc="left", fontsize=10
        )
        ax.grid(True, which="major", color="#dddddd", linewidth=0.6)
        ax.grid(True, which="minor", axis="x", color="#f2f2f2", linewidth=0.4)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        ax.legend(loc="lower right", fontsize=7, frameon=True, framealpha=0.85)
    for ax in axes[len(names) :]:
        ax.set_visible(False)
    if not names:
        axes[0].set_visible(True)
        axes[0].text(
            0.5, 0.5, "no frame was delivered", ha="center", va="center", transform=axes[0].transAxes
        )
        axes[0].set_axis_off()
    fig.tight_layout()
    return svg(fig, "cdf"), caption
