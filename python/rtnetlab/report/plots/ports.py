"""The ports plot: contract load and simulated utilisation; backlog bound and simulated maximum
against the buffer, log scale.
"""

from __future__ import annotations

from rtnetlab.report.plots.common import (
    MAX_PLOT_PORTS,
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


def _plotted_ports(data: dict) -> list[dict]:
    ports = [p for p in data["ports"] if p["load"] > 0 or p["sim_frames"]]
    if len(ports) > MAX_PLOT_PORTS:
        keep = set(sorted(range(len(ports)), key=lambda i: -ports[i]["load"])[:MAX_PLOT_PORTS])
        ports = [p for i, p in enumerate(ports) if i in keep]
    return ports


def plot_ports(data: dict) -> tuple[str, str]:
    """Per loaded egress port: contract load and simulated utilisation; backlog bound and simulated
    maximum backlog against the buffer."""
    ports = _plotted_ports(data)
    caption = ""
    loaded = sum(1 for p in data["ports"] if p["load"] > 0 or p["sim_frames"])
    if len(ports) < loaded:
        caption = f" The {MAX_PLOT_PORTS} most loaded of {loaded} loaded ports are drawn; the table has all."
    planes = list(dict.fromkeys(p["plane"] for p in data["ports"]))
    n = max(len(ports), 1)
    fig = figure(strip_width(n), 6.6)
    ax1, ax2 = fig.subplots(2, 1, sharex=True)
    colours = [PLANE_COLOURS[planes.index(p["plane"]) % len(PLANE_COLOURS)] for p in ports]
    loads = [(i, 100 * p["load"]) for i, p in enumerate(ports)]
    value_bars(ax1, loads, colours, 0.35, "contract load (analysis)")
    sim_u = [(i, 100 * p["sim_utilisation"]) for i, p in enumerate(ports) if p["sim_utilisation"] is not None]
    ax1.scatter(
        [i for i, _ in sim_u],
        [u for _, u in sim_u],
        s=14,
        color="#333333",
        zorder=3,
        label="simulated utilisation",
    )
    top = max([100 * p["load"] for p in ports] + [u for _, u in sim_u] + [1.0])
    ylim = min(top * 1.15, 1000.0) if top > 100 else min(110.0, top * 1.3)
    if ylim >= 100:
        ax1.axhline(100, color="#c62828", linewidth=1, linestyle="--", label="100% (link rate)")
    ax1.set_ylim(0, ylim)
    ax1.set_ylabel("utilisation (%)")
    ax1.set_title("utilisation", loc="left", fontsize=10)
    style_axes(ax1)
    legend_right(ax1)

    bounded = [(i, p["backlog_bytes"]) for i, p in enumerate(ports) if p["backlog_bytes"] is not None]
    value_bars(ax2, bounded, [colours[i] for i, _ in bounded], 0.35, "backlog bound")
    buffers = [(i, p["buffer_bytes"]) for i, p in enumerate(ports) if p["buffer_bytes"]]
    values = [b for _, b in bounded if b] + [b for _, b in buffers]
    values += [p["sim_max_backlog_bytes"] for p in ports if p["sim_max_backlog_bytes"]]
    top = max(values, default=1e4) * 2.0
    bottom = max(min(values, default=10.0) / 2.0, 1.0)
    unbounded_bars(ax2, [i for i, p in enumerate(ports) if p["backlog_bytes"] is None], top)
    over = [(i, p["backlog_bytes"]) for i, p in enumerate(ports) if p["over_buffer"] and p["backlog_bytes"]]
    alarm_bars(ax2, over, 0.5, "bound over buffer")
    limit_ticks(ax2, buffers, "buffer")
    sim_b = [(i, p["sim_max_backlog_bytes"]) for i, p in enumerate(ports) if p["sim_max_backlog_bytes"]]
    ax2.scatter(
        [i for i, _ in sim_b],
        [b for _, b in sim_b],
        s=14,
        marker="D",
        color="#b71c1c",
        zorder=4,
        linewidths=0,
        label="simulated max backlog",
    )
    log_y(ax2, bottom, top)
    ax2.set_ylabel("bytes")
    ax2.set_title("backlog against buffer", loc="left", fontsize=10)
    style_axes(ax2)
    legend_right(ax2)
    item_axis(ax2, [f"{p['node']}:{p['port']}" for p in ports])
    fig.tight_layout()
    return svg(fig, "ports"), caption
