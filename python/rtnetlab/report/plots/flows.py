"""The flows plot: per (flow, destination) on each plane the bound (bar), the simulated p99 and
maximum (dots) and the deadline (tick), log scale.
"""

from __future__ import annotations

import math

from rtnetlab.report.plots.common import (
    MAX_PLOT_FLOWS,
    PLANE_COLOURS,
    alarm_bars,
    figure,
    item_axis,
    legend_right,
    limit_ticks,
    log_y,
    strip_width,
    style_axes,
    svg,
    unbounded_bars,
    value_bars,
)


def plot_flows(data: dict) -> tuple[str, str]:
    """Per (flow, destination) on each plane: the bound (bar), the simulated p99 and maximum (dots)
    and the deadline (tick), log scale."""
    rows = data["rows"]
    planes = list(dict.fromkeys(r["plane"] for r in rows))
    caption = ""
    per_plane = []
    for plane in planes:
        pr = [r for r in rows if r["plane"] == plane]
        if len(pr) > MAX_PLOT_FLOWS:
            keep = sorted(
                range(len(pr)),
                key=lambda i: -(pr[i]["bound_us"] if pr[i]["bound_us"] is not None else math.inf),
            )
            kept = set(keep[:MAX_PLOT_FLOWS])
            pr = [r for i, r in enumerate(pr) if i in kept]
            caption = f" Each plane shows its {MAX_PLOT_FLOWS} largest bounds; the table has every row."
        per_plane.append((plane, pr))
    n = max((len(pr) for _, pr in per_plane), default=1)
    fig = figure(strip_width(n), 3.3 * max(len(per_plane), 1))
    axes = fig.subplots(max(len(per_plane), 1), 1, squeeze=False)[:, 0]
    values = [
        v for r in rows for v in (r["bound_us"], r["sim_p99_us"], r["sim_max_us"], r["deadline_us"]) if v
    ]
    top = max(values, default=1000.0) * 1.8
    bottom = min(values, default=10.0) / 1.8
    for ax, (plane, pr) in zip(axes, per_plane, strict=False):
        bounded = [(i, r["bound_us"]) for i, r in enumerate(pr) if r["bound_us"] is not None]
        unb = [i for i, r in enumerate(pr) if r["bound_us"] is None]
        colour = PLANE_COLOURS[planes.index(plane) % len(PLANE_COLOURS)]
        value_bars(ax, bounded, colour, 0.28, "bound")
        unbounded_bars(ax, unb, top)
        miss = [(i, r["bound_us"]) for i, r in enumerate(pr) if r["status"] == "miss" and r["bound_us"]]
        alarm_bars(ax, miss, 0.45, "miss")
        limit_ticks(ax, [(i, r["deadline_us"]) for i, r in enumerate(pr) if r["deadline_us"]], "deadline")
        p99 = [(i, r["sim_p99_us"]) for i, r in enumerate(pr) if r["sim_p99_us"]]
        ax.scatter(
            [i for i, _ in p99],
            [v for _, v in p99],
            s=14,
            color="#ff9800",
            edgecolors="#8a5300",
            linewidths=0.5,
            label="simulated p99",
            zorder=4,
        )
        mx = [(i, r["sim_max_us"]) for i, r in enumerate(pr) if r["sim_max_us"]]
        ax.scatter(
            [i for i, _ in mx],
            [v for _, v in mx],
            s=16,
            marker="D",
            color="#b71c1c",
            linewidths=0,
            label="simulated max",
            zorder=5,
        )
        above = [(i, r["sim_max_us"]) for i, r in enumerate(pr) if r["above_bound"]]
        if above:
            ax.scatter(
                [i for i, _ in above],
                [v for _, v in above],
                s=160,
                facecolors="none",
                edgecolors="red",
                linewidths=2,
                label="max ABOVE bound",
                zorder=6,
            )
        log_y(ax, bottom, top)
        item_axis(ax, [f"{r['flow']}→{r['destination']}" for r in pr])
        ax.set_ylabel("latency (µs)")
        ax.set_title(f"plane {plane}", loc="left", fontsize=10)
        style_axes(ax)
        legend_right(ax)
    fig.tight_layout()
    return svg(fig, "flows"), caption
