"""The middleware laboratory's plots (`rtnetlab middleware ... --out`, `rtnetlab middleware
report`): latency against the subscriber count and the payload size per backend, latency CDFs per
backend (from each row's quantile sketch), and seed 001B's partition windows over two major frames
with a request's path through them.
"""

from __future__ import annotations

import math

from rtnetlab.report.plots.common import CLASS_COLOURS, figure, log_labels, style_axes, svg

#: One colour per backend, the same in every plot of a page.
BACKEND_COLOURS = CLASS_COLOURS
WINDOW_COLOURS = {"routing": "#9ecae1", "recorder": "#fdae6b"}


def _colour(names: list[str], name: str) -> str:
    return BACKEND_COLOURS[names.index(name) % len(BACKEND_COLOURS)]


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()


def _grid(n: int, width: float = 4.4, height: float = 3.3):
    ncols = min(3, max(n, 1))
    nrows = max(1, math.ceil(n / ncols))
    fig = figure(width * ncols, height * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes


def _latency_against(rows: list[dict], x_key: str, panel_key: str, x_label: str, panel_label, name: str):
    """Per value of `panel_key` one panel, per backend one line: the mean (solid) and the p99
    (dashed) against `x_key`."""
    rows = [r for r in rows if r.get("count")]
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    panels = sorted({r[panel_key] for r in rows})
    fig, axes = _grid(len(panels), height=3.3 + 0.18 * len(backends))
    for ax, panel in zip(axes, panels, strict=False):
        for b in backends:
            pts = sorted(
                (r[x_key], r["mean_us"], r["p99_us"])
                for r in rows
                if r["backend"] == b and r[panel_key] == panel
            )
            if not pts:
                continue
            colour = _colour(backends, b)
            xs = [p[0] for p in pts]
            ax.plot(xs, [p[1] for p in pts], marker="o", color=colour, linewidth=1.5, label=f"{b} mean")
            ax.plot(
                xs,
                [p[2] for p in pts],
                marker=".",
                color=colour,
                linewidth=1.0,
                linestyle="--",
                label=f"{b} p99",
            )
        if x_key == "payload_bytes":
            ax.set_xscale("log")
            lo, hi = ax.get_xlim()
            log_labels(ax.xaxis, lo, hi)
        else:
            ax.set_xticks(sorted({r[x_key] for r in rows}))
        ax.set_ylim(bottom=0)
        ax.set_xlabel(x_label)
        ax.set_ylabel("latency (µs)")
        ax.set_title(panel_label(panel), loc="left", fontsize=10)
        style_axes(ax)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=7, frameon=False)
    if not panels:
        axes[0].set_visible(True)
        _empty(axes[0], "no row has a sample")
    fig.tight_layout()
    return svg(fig, name)


def plot_vs_subscribers(rows: list[dict]) -> str:
    """Publish/subscribe: latency against the number of subscribers, one panel per payload size."""
    return _latency_against(
        rows, "subscribers", "payload_bytes", "subscribers", lambda p: f"payload {p:,} B", "vs-subscribers"
    )


def plot_vs_payload(rows: list[dict]) -> str:
    """Publish/subscribe: latency against the payload size, one panel per subscriber count."""
    return _latency_against(
        rows, "payload_bytes", "subscribers", "payload (bytes)", lambda n: f"{n} subscriber(s)", "vs-payload"
    )


def plot_cdfs(rows: list[dict], group_key: str, label, name: str = "cdf") -> str:
    """One panel per value of `group_key` (a backend, a scenario), one step line per row: the
    empirical CDF from its quantile sketch (`quantiles_us`: [fraction, latency] points)."""
    rows = [r for r in rows if r.get("quantiles_us")]
    groups = list(dict.fromkeys(r[group_key] for r in rows))
    fig, axes = _grid(len(groups))
    for ax, g in zip(axes, groups, strict=False):
        members = [r for r in rows if r[group_key] == g]
        for k, r in enumerate(members):
            pts = r["quantiles_us"]
            xs = [pts[0][1]] + [v for _, v in pts]
            ys = [0.0] + [f for f, _ in pts]
            ax.step(
                xs,
                ys,
                where="post",
                color=CLASS_COLOURS[k % len(CLASS_COLOURS)],
                linewidth=1.3,
                label=label(r),
            )
        ax.set_xscale("log")
        lo, hi = ax.get_xlim()
        log_labels(ax.xaxis, lo, hi)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("latency (µs)")
        ax.set_ylabel("fraction of samples ≤ x")
        ax.set_title(str(g), loc="left", fontsize=10)
        ax.grid(True, which="major", color="#dddddd", linewidth=0.6)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        ax.legend(loc="lower right", fontsize=7, frameon=True, framealpha=0.85)
    if not groups:
        axes[0].set_visible(True)
        _empty(axes[0], "no quantiles in these results (written by an older version?)")
    fig.tight_layout()
    return svg(fig, name)


def plot_partition_timeline(result: dict, frames: int = 2) -> str:
    """Seed 001B: the partition windows over `frames` major frames (one lane per partition), the
    analysis's worst request through them (its three stages routing → recorder → routing from the
    worst arrival phase, with the bound's stage work) and the slowest measured request (from its
    send phase, its whole round trip)."""
    from rtnetlab.middleware.partitions import path_through_windows

    frame = result["major_frame_us"]
    windows = list(result["windows_us"].items())
    names = [n for n, _ in windows]
    lanes = {n: k for k, n in enumerate(reversed(names))}
    top = len(names)
    a = result.get("analysis")
    routed = [r for r in result["rows"] if r["scenario"] == "PARTITIONED DDS WITH ROUTING"]
    part = next((r for r in routed if r.get("worst_request")), None)
    pieces = []
    if a:
        work_ns = round(a["stage_work_bound_us"] * 1000)
        pieces = path_through_windows(
            round(a["worst_phase_us"] * 1000),
            round(frame * 1000),
            [(n, round(w * 1000)) for n, w in windows],
            [("routing", work_ns), ("recorder", work_ns), ("routing", work_ns)],
        )
    end = max(
        [frames * frame]
        + [pieces[-1][2] / 1000 if pieces else 0.0]
        + ([part["worst_request"]["phase_us"] + part["worst_request"]["rtt_us"]] if part else [])
    )
    frames = math.ceil(end / frame - 1e-9)
    fig = figure(10.0, 3.2)
    ax = fig.subplots(1, 1)
    off = 0.0
    for n, length in windows:
        ax.broken_barh(
            [(f * frame + off, length) for f in range(frames)],
            (lanes[n] - 0.35, 0.7),
            facecolors=WINDOW_COLOURS.get(n, "#cccccc"),
            edgecolors="#555555",
            linewidth=0.5,
        )
        off += length
    for f in range(frames + 1):
        ax.axvline(f * frame, color="black", linewidth=0.8, linestyle=":")
    for k, (n, s, e) in enumerate(pieces):
        ax.broken_barh(
            [(s / 1000, (e - s) / 1000)],
            (lanes[n] - 0.12, 0.24),
            facecolors="#c62828",
            label="worst request's stages (analysis)" if k == 0 else None,
        )
    for (n0, _, e0), (n1, s1, _) in zip(pieces, pieces[1:], strict=False):
        ax.plot(
            [e0 / 1000, s1 / 1000], [lanes[n0], lanes[n1]], color="#c62828", linewidth=0.8, linestyle="--"
        )
    if pieces and a is not None:
        t0, t1 = a["worst_phase_us"], pieces[-1][2] / 1000
        ax.annotate(
            "",
            xy=(t1, top - 0.2),
            xytext=(t0, top - 0.2),
            arrowprops={"arrowstyle": "<->", "color": "#c62828"},
        )
        ax.text(
            (t0 + t1) / 2,
            top - 0.1,
            f"worst on node 2: {t1 - t0:,.0f} µs for {3 * work_ns / 1000:,.0f} µs of work",
            ha="center",
            va="bottom",
            fontsize=8,
            color="#c62828",
        )
    if part:
        w = part["worst_request"]
        ax.broken_barh(
            [(w["phase_us"], w["rtt_us"])],
            (top + 0.35, 0.3),
            facecolors="#333333",
            label="slowest measured request (send to reply)",
        )
        ax.text(
            w["phase_us"], top + 0.75, f"measured round trip {w['rtt_us']:,.0f} µs", fontsize=8, va="bottom"
        )
    ax.set_xlim(0, end * 1.02)
    ax.set_ylim(-0.6, top + 1.3)
    ax.set_yticks([lanes[n] for n in names])
    ax.set_yticklabels([f"{n} window" for n in names])
    ax.set_xlabel(f"time from a major frame's start (µs); major frame {frame:,.0f} µs")
    style_axes(ax)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    fig.tight_layout()
    return svg(fig, "partition-timeline")
