"""The ports plot: contract load and simulated utilisation; backlog bound and simulated maximum
against the buffer, log scale.
"""

from __future__ import annotations

from rtnetlab.report.plots.common import MAX_PLOT_PORTS, PLANE_COLOURS, figure, log_labels, style_axes, svg


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
    width = min(16.0, max(7.0, 0.17 * n + 1.5))
    fig = figure(width, 6.6)
    ax1, ax2 = fig.subplots(2, 1, sharex=True)
    x = list(range(len(ports)))
    colours = [PLANE_COLOURS[planes.index(p["plane"]) % len(PLANE_COLOURS)] for p in ports]
    ax1.bar(
        x,
        [100 * p["load"] for p in ports],
        width=0.75,
        color=colours,
        alpha=0.35,
        edgecolor=colours,
        linewidth=0.6,
        label="contract load (analysis)",
    )
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
    ax1.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)

    bounded = [(i, p["backlog_bytes"]) for i, p in enumerate(ports) if p["backlog_bytes"] is not None]
    ax2.bar(
        [i for i, _ in bounded],
        [b for _, b in bounded],
        width=0.75,
        color=[colours[i] for i, _ in bounded],
        alpha=0.35,
        edgecolor=[colours[i] for i, _ in bounded],
        linewidth=0.6,
        label="backlog bound",
    )
    buffers = [(i, p["buffer_bytes"]) for i, p in enumerate(ports) if p["buffer_bytes"]]
    values = [b for _, b in bounded if b] + [b for _, b in buffers]
    values += [p["sim_max_backlog_bytes"] for p in ports if p["sim_max_backlog_bytes"]]
    top = max(values, default=1e4) * 2.0
    bottom = max(min(values, default=10.0) / 2.0, 1.0)
    unb = [i for i, p in enumerate(ports) if p["backlog_bytes"] is None]
    if unb:
        ax2.bar(
            unb,
            [top] * len(unb),
            width=0.75,
            color="none",
            edgecolor="#c62828",
            hatch="///",
            label="unbounded",
        )
    over = [(i, p["backlog_bytes"]) for i, p in enumerate(ports) if p["over_buffer"] and p["backlog_bytes"]]
    if over:
        ax2.bar(
            [i for i, _ in over],
            [b for _, b in over],
            width=0.75,
            color="#c62828",
            alpha=0.5,
            label="bound over buffer",
        )
    if buffers:
        ax2.scatter(
            [i for i, _ in buffers],
            [b for _, b in buffers],
            marker="_",
            s=90,
            color="black",
            linewidths=1.6,
            label="buffer",
            zorder=3,
        )
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
    ax2.set_yscale("log")
    ax2.set_ylim(bottom, top)
    log_labels(ax2.yaxis, bottom, top)
    ax2.set_ylabel("bytes")
    ax2.set_title("backlog against buffer", loc="left", fontsize=10)
    style_axes(ax2)
    ax2.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    ax2.set_xticks(x)
    ax2.set_xticklabels([f"{p['node']}:{p['port']}" for p in ports], rotation=90, fontsize=6.5)
    ax2.set_xlim(-0.7, max(len(ports), 1) - 0.3)
    fig.tight_layout()
    return svg(fig, "ports"), caption
