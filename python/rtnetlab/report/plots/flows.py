"""The flows plot: per (flow, destination) on each plane the bound (bar), the simulated p99 and
maximum (dots) and the deadline (tick), log scale.
"""

from __future__ import annotations

import math

from rtnetlab.report.plots.common import MAX_PLOT_FLOWS, PLANE_COLOURS, figure, log_labels, style_axes, svg


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
    width = min(16.0, max(7.0, 0.17 * n + 1.5))
    fig = figure(width, 3.3 * max(len(per_plane), 1))
    axes = fig.subplots(max(len(per_plane), 1), 1, squeeze=False)[:, 0]
    values = [
        v for r in rows for v in (r["bound_us"], r["sim_p99_us"], r["sim_max_us"], r["deadline_us"]) if v
    ]
    top = max(values, default=1000.0) * 1.8
    bottom = min(values, default=10.0) / 1.8
    for ax, (plane, pr) in zip(axes, per_plane, strict=False):
        x = list(range(len(pr)))
        bounded = [(i, r["bound_us"]) for i, r in enumerate(pr) if r["bound_us"] is not None]
        unb = [i for i, r in enumerate(pr) if r["bound_us"] is None]
        colour = PLANE_COLOURS[planes.index(plane) % len(PLANE_COLOURS)]
        ax.bar(
            [i for i, _ in bounded],
            [b for _, b in bounded],
            width=0.75,
            color=colour,
            alpha=0.28,
            edgecolor=colour,
            linewidth=0.6,
            label="bound",
        )
        if unb:
            ax.bar(
                unb,
                [top] * len(unb),
                width=0.75,
                color="none",
                edgecolor="#c62828",
                hatch="///",
                label="unbounded",
            )
        miss = [(i, r["bound_us"]) for i, r in enumerate(pr) if r["status"] == "miss" and r["bound_us"]]
        if miss:
            ax.bar(
                [i for i, _ in miss],
                [b for _, b in miss],
                width=0.75,
                color="#c62828",
                alpha=0.45,
                label="miss",
            )
        dl = [(i, r["deadline_us"]) for i, r in enumerate(pr) if r["deadline_us"]]
        if dl:
            ax.scatter(
                [i for i, _ in dl],
                [d for _, d in dl],
                marker="_",
                s=90,
                color="black",
                linewidths=1.6,
                label="deadline",
                zorder=3,
            )
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
        ax.set_yscale("log")
        ax.set_ylim(bottom, top)
        log_labels(ax.yaxis, bottom, top)
        ax.set_xlim(-0.7, max(len(pr), 1) - 0.3)
        ax.set_xticks(x)
        ax.set_xticklabels([f"{r['flow']}→{r['destination']}" for r in pr], rotation=90, fontsize=6.5)
        ax.set_ylabel("latency (µs)")
        ax.set_title(f"plane {plane}", loc="left", fontsize=10)
        style_axes(ax)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    fig.tight_layout()
    return svg(fig, "flows"), caption
