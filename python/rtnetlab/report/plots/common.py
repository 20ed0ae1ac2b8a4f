"""What every plot shares: matplotlib (Agg) loaded on first use, a figure, its rendering to an
inline SVG element, log axes with plain numbers, the axes' style, the colours.
"""

from __future__ import annotations

import io
import math
import re
from typing import Any

from rtnetlab.report.html_text import esc

#: Plots stay readable: at most this many flow rows per plane and this many ports are drawn (the
#: tables always have every row).
MAX_PLOT_FLOWS = 120
MAX_PLOT_PORTS = 150
MAX_CDF_LINES = 60

PLANE_COLOURS = ["#1f77b4", "#d95f02", "#7570b3", "#1b9e77", "#e7298a", "#66a61e"]
CLASS_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


def mpl() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    return matplotlib


_SVG_COUNTER = [0]


def svg(fig: Any, name: str) -> str:
    """The figure as an inline <svg> element: scalable, its ids prefixed so that several figures
    can share one page."""
    matplotlib = mpl()
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "rtnetlab"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    prefix = f"{name}-"
    text = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}\1"', text)
    text = re.sub(r"url\(#", f"url(#{prefix}", text)
    text = re.sub(r'href="#', f'href="#{prefix}', text)
    # Scale with the page: keep the viewBox, drop the fixed size.
    head_end = text.index(">")
    head = text[:head_end]
    natural = re.search(r'\swidth="([0-9.]+)pt"', head)
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)
    # Never drawn much larger than matplotlib's size (small figures would get huge letters).
    max_px = f"max-width:{float(natural.group(1)) * 4 / 3 * 1.15:.0f}px" if natural else ""
    head += f' class="mpl" style="{max_px}" role="img" aria-label="{esc(name)} plot"'
    return head + text[head_end:]


def figure(width: float, height: float) -> Any:
    mpl()
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    return fig


def log_labels(axis: Any, lo: float, hi: float) -> None:
    """Plain numbers on a log axis: powers of ten, and 2 and 5 times them on short ranges."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    ratio = hi / lo if lo > 0 else math.inf
    mantissas = (1.0,) if ratio > 300 else (1.0, 2.0, 5.0) if ratio > 8 else tuple(range(1, 10))

    def label(v: float, _pos: Any) -> str:
        if v <= 0:
            return ""
        m = v / 10 ** math.floor(math.log10(v) + 1e-9)
        return f"{v:,.0f}" if v >= 1 and any(abs(m - k) < 1e-6 for k in mantissas) else ""

    axis.set_major_locator(LogLocator(base=10))
    axis.set_minor_locator(LogLocator(base=10, subs=(2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)))
    axis.set_major_formatter(FuncFormatter(label))
    axis.set_minor_formatter(FuncFormatter(label))


def style_axes(ax: Any) -> None:
    ax.grid(True, axis="y", which="major", color="#dddddd", linewidth=0.6)
    ax.grid(True, axis="y", which="minor", color="#f0f0f0", linewidth=0.4)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def strip_width(n: int) -> float:
    """Width (inches) of a plot with one column per item (flow, port): readable, never huge."""
    return min(16.0, max(7.0, 0.17 * n + 1.5))


def item_axis(ax: Any, labels: list[str]) -> None:
    """The x axis of a plot with one column per item: each labelled, vertically."""
    ax.set_xticks(list(range(len(labels))))
    ax.set_xticklabels(labels, rotation=90, fontsize=6.5)
    ax.set_xlim(-0.7, max(len(labels), 1) - 0.3)


def log_y(ax: Any, bottom: float, top: float) -> None:
    """A log y axis from `bottom` to `top`, plain numbers."""
    ax.set_yscale("log")
    ax.set_ylim(bottom, top)
    log_labels(ax.yaxis, bottom, top)


def legend_right(ax: Any) -> None:
    """The legend outside, right of the axes."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)


def value_bars(ax: Any, points: list[tuple[int, float]], colour: Any, alpha: float, label: str) -> None:
    """Faint bars with an outline (a bound, a load) at (column, value) points."""
    ax.bar(
        [i for i, _ in points],
        [v for _, v in points],
        width=0.75,
        color=colour,
        alpha=alpha,
        edgecolor=colour,
        linewidth=0.6,
        label=label,
    )


def alarm_bars(ax: Any, points: list[tuple[int, float]], alpha: float, label: str) -> None:
    """Red bars over the columns at fault (a deadline miss, a bound over the buffer)."""
    if points:
        columns, values = [i for i, _ in points], [v for _, v in points]
        ax.bar(columns, values, width=0.75, color="#c62828", alpha=alpha, label=label)


def unbounded_bars(ax: Any, columns: list[int], top: float) -> None:
    """Hatched red outlines up to the top of the plot over the unbounded columns."""
    if columns:
        ax.bar(
            columns,
            [top] * len(columns),
            width=0.75,
            color="none",
            edgecolor="#c62828",
            hatch="///",
            label="unbounded",
        )


def limit_ticks(ax: Any, points: list[tuple[int, float]], label: str) -> None:
    """Black horizontal ticks at (column, limit) points (a deadline, a buffer)."""
    if points:
        ax.scatter(
            [i for i, _ in points],
            [v for _, v in points],
            marker="_",
            s=90,
            color="black",
            linewidths=1.6,
            label=label,
            zorder=3,
        )
