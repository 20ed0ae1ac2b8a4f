"""`rtnetlab report`: one self-contained HTML page people can look at.

The analysis (worst-case bounds) and the simulation (measured latencies) of one network, side by
side, in this order: violations and overloads first, the topology (inline SVG, a virtual-link
selector highlights a VL's path on every plane), per-flow bound vs simulated p99 and maximum with
the deadline, latency CDFs per traffic class, per-port utilisation and backlog against the
buffer, notes. Plots are matplotlib figures rendered to inline SVG; the page needs no network
access. The same data is written beside it as CSV (one row per flow, destination and plane) and
JSON (analysis, simulation, summary), named after the page (``x.html`` -> ``x.csv``,
``x.json``); none of the three may be an input of the command. All three are written through
temporary files and renamed only once all three are complete (`rtnetlab.io.output`).

An unbounded flow (an overloaded port on its path) is marked unbounded everywhere, with the
overloaded port and its load: in the tables, in the CSV (``inf`` bound, and a reason column) and
in the JSON (``null`` bound, ``"status": "unbounded"``, the reason).
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from rtnetlab.errors import UserError
from rtnetlab.io import output as outfiles
from rtnetlab.model import Network
from rtnetlab.results import Reasons, csv_number
from rtnetlab.simulate import SIM_SLACK_US
from rtnetlab.worst_case import html_section, read_results

#: Plots stay readable: at most this many flow rows per plane and this many ports are drawn (the
#: tables always have every row).
MAX_PLOT_FLOWS = 120
MAX_PLOT_PORTS = 150
MAX_CDF_LINES = 60

PLANE_COLOURS = ["#1f77b4", "#d95f02", "#7570b3", "#1b9e77", "#e7298a", "#66a61e"]
CLASS_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
NO_CLASS = "(no class)"

FIGURES = ("flows", "cdf", "ports")
SECTIONS = ("violations", "topology", "flows", "cdf", "ports", "notes")


# Data


def build(
    net: Network,
    method: str = "best",
    duration_ns: int = 1_000_000_000,
    seed: int = 1,
    analysis: dict | None = None,
    simulation: dict | None = None,
    progress: bool = False,
) -> dict:
    """Runs (or takes) the analysis and the simulation and joins them: the report's data."""
    if analysis is None:
        analysis = net.analyze(method)
    if simulation is None:
        from rtnetlab.simulate import run

        simulation = run(net, {"duration_ns": duration_ns, "seed": seed}, progress=progress)
    spec = net.spec
    resolved = net.resolved()
    info = net.info()
    classes = {f["name"]: f.get("class") or NO_CLASS for f in spec["flows"]}
    sim_flows = {(f["flow"], f["destination"], f["plane"]): f for f in simulation["flows"]}
    reasons = Reasons(resolved, info, analysis)
    # As `simulate` says: where the bounds are not guaranteed (cut-through switches), a measurement
    # above one is not a soundness violation.
    from rtnetlab.simulate import bounds_not_applicable

    not_guaranteed = bounds_not_applicable(net, {})
    rows = []
    for f in analysis["flows"]:
        s = sim_flows.get((f["flow"], f["destination"], f["plane"]))
        measured = s is not None and s["count"] > 0
        bound = f["delay_us"]
        sim_max = s["max_us"] if measured else None
        rows.append(
            {
                "flow": f["flow"],
                "destination": f["destination"],
                "plane": f["plane"],
                "class": classes.get(f["flow"], NO_CLASS),
                "bound_us": bound,
                "jitter_us": f["jitter_us"],
                "best_case_us": f["best_case_us"],
                "sim_count": s["count"] if s else 0,
                "sim_min_us": s["min_us"] if measured else None,
                "sim_p99_us": s["p99_us"] if measured else None,
                "sim_max_us": sim_max,
                "sim_losses": s["losses"] if s else 0,
                "deadline_us": f["deadline_us"],
                "slack_us": f["slack_us"],
                "ratio": sim_max / bound if sim_max is not None and bound else None,
                "above_bound": not not_guaranteed and sim_max is not None and bound is not None
                and sim_max > bound + SIM_SLACK_US,
                "status": f["status"],
                "method": f["method"],
                "reason": reasons.flow(f) if f["status"] == "unbounded" else f.get("reason"),
            }
        )
    ports = _join_ports(analysis, simulation, info, reasons)
    if not_guaranteed:
        for p in ports:
            p["sim_above_bound"] = False
    summary = _summary(net, analysis, simulation, info, rows, ports, method, duration_ns, seed)
    summary["bounds_not_guaranteed"] = not_guaranteed
    return {
        "spec": spec,
        "resolved": resolved,
        "info": info,
        "analysis": analysis,
        "simulation": simulation,
        "rows": rows,
        "ports": ports,
        "summary": summary,
        "warnings": list(net.warnings),
    }


def _join_ports(analysis: dict, simulation: dict, info: dict, reasons: Reasons) -> list[dict]:
    sim = {(p["node"], p["port"]): p for p in simulation["ports"]}
    inf = {(p["node"], p["port"]): p for p in info["ports"]}
    ports = []
    for p in analysis["ports"]:
        key = (p["node"], p["port"])
        s, i = sim.get(key, {}), inf.get(key, {})
        buffer = p.get("buffer_bytes")
        backlog = p["backlog_bytes"]
        ports.append(
            {
                "node": p["node"],
                "port": p["port"],
                "plane": p["plane"],
                "peer": i.get("peer", ""),
                "scheduler": i.get("scheduler", ""),
                "flows": i.get("flows", 0),
                "load": p["load"],
                "delay_us": p["delay_us"],
                "backlog_bytes": backlog,
                "buffer_bytes": buffer,
                "es_jitter_us": p.get("es_jitter_us"),
                "sim_utilisation": s.get("utilisation"),
                "sim_max_backlog_bytes": s.get("max_backlog_bytes"),
                "sim_frames": s.get("frames", 0),
                "drops": s.get("drops", 0),
                "policed": s.get("policed", 0),
                "over_buffer": buffer is not None and (backlog is None or backlog > buffer),
                "sim_above_bound": backlog is not None
                and s.get("max_backlog_bytes") is not None
                and s["max_backlog_bytes"] > backlog + 1e-6,
                "status": p["status"],
                "reason": reasons.port(p) if p["status"] == "unbounded" else p.get("reason"),
            }
        )
    return ports


def _summary(
    net: Network,
    analysis: dict,
    simulation: dict,
    info: dict,
    rows: list[dict],
    ports: list[dict],
    method: str,
    duration_ns: int,
    seed: int,
) -> dict:
    from rtnetlab import __version__

    def key(r: dict) -> dict:
        return {"flow": r["flow"], "destination": r["destination"], "plane": r["plane"]}

    def pkey(p: dict) -> dict:
        return {"node": p["node"], "port": p["port"], "plane": p["plane"]}

    violations = {
        "deadline_misses": [
            {**key(r), "bound_us": r["bound_us"], "deadline_us": r["deadline_us"]}
            for r in rows
            if r["status"] == "miss"
        ],
        "unbounded_flows": [{**key(r), "reason": r["reason"]} for r in rows if r["status"] == "unbounded"],
        "overloaded_ports": [
            {**pkey(p), "load": p["load"], "reason": p["reason"]} for p in ports if p["status"] == "unbounded"
        ],
        "ports_over_buffer": [
            {**pkey(p), "backlog_bytes": p["backlog_bytes"], "buffer_bytes": p["buffer_bytes"]}
            for p in ports
            if p["over_buffer"]
        ],
        "sim_above_bound": [
            {**key(r), "sim_max_us": r["sim_max_us"], "bound_us": r["bound_us"]}
            for r in rows
            if r["above_bound"]
        ],
        "sim_backlog_above_bound": [
            {
                **pkey(p),
                "sim_max_backlog_bytes": p["sim_max_backlog_bytes"],
                "backlog_bytes": p["backlog_bytes"],
            }
            for p in ports
            if p["sim_above_bound"]
        ],
        "sim_drops": [
            {**pkey(p), "drops": p["drops"], "policed": p["policed"]}
            for p in ports
            if p["drops"] or p["policed"]
        ],
        "sim_losses": [{**key(r), "losses": r["sim_losses"]} for r in rows if r["sim_losses"]],
    }
    from rtnetlab.results import verdict

    # What --fail-on-miss acts on: bounds above (or infinite beside) their deadline, simulated
    # frames after their deadline, simulated maxima above their bound.
    failures = verdict(analysis)["failures"]
    failures += [f"{r['flow']} -> {r['destination']} ({r['plane']}): simulated {r['sim_max_us']:,.1f} us > "
                 f"deadline {r['deadline_us']:,.1f} us" for r in rows
                 if r["sim_max_us"] is not None and r["deadline_us"] is not None
                 and r["sim_max_us"] > r["deadline_us"]]
    failures += [f"{r['flow']} -> {r['destination']} ({r['plane']}): simulated maximum above its bound"
                 for r in rows if r["above_bound"]]
    ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
    status = defaultdict(int)
    for r in rows:
        status[r["status"]] += 1
    return {
        "network": info["name"],
        "source": net.source,
        "rtnetlab_version": __version__,
        "method": analysis.get("method", method),
        "duration_s": duration_ns / 1e9,
        "seed": seed,
        "counts": info["counts"],
        "planes": info["planes"],
        "flows": {
            "total": len(rows),
            "ok": status["ok"],
            "miss": status["miss"],
            "unbounded": status["unbounded"],
        },
        "sim_max_over_bound": {"min": min(ratios), "max": max(ratios)} if ratios else None,
        "simulated_frame_hops": simulation["stats"]["frame_hops"],
        "interrupted": bool(simulation.get("interrupted")),
        "violations": violations,
        "clean": not any(violations.values()),
        "verdict": {"failed": bool(failures), "failures": failures},
    }


# Writing


def output_paths(output: Path) -> dict[str, Path]:
    """The page and its side files: ``x.html`` -> ``x.csv`` and ``x.json`` beside it."""
    output = Path(output)
    return {"html": output, "csv": output.with_suffix(".csv"), "json": output.with_suffix(".json")}


def check_output(output: Path, inputs: list[Path] | tuple = ()) -> dict[str, Path]:
    """The paths of the three files, checked before anything runs (a user error is reported at
    once): not a directory, not an input of the command (`inputs`), not each other, writable
    (missing directories are created when the files are written)."""
    output = Path(output)
    if output.is_dir() or not output.name:
        raise UserError(f"-o: {output}: is a directory")
    if output.suffix.lower() in (".csv", ".json"):
        raise UserError(f"-o: {output}: the report is HTML (the .csv and .json are written beside it)")
    paths = output_paths(output)
    for kind in ("csv", "json"):
        for src in inputs:
            if outfiles.same_file(paths[kind], Path(src)):
                suggestion = output.with_name(f"{output.stem}-report.html")
                raise UserError(
                    f"-o: {output}: its {kind.upper()} data would go to {paths[kind]}, which is an input of "
                    f"this command; choose another name (e.g. -o {suggestion})"
                )
    outfiles.check({"-o": paths["html"], "-o (its CSV)": paths["csv"], "-o (its JSON)": paths["json"]},
                   inputs)
    return paths


def write(data: dict, output: Path, inputs: list[Path] | tuple = ()) -> dict[str, Path]:
    """Writes the HTML page and the CSV and JSON beside it (same name, .csv and .json). Every file
    is complete in memory and on disk under a temporary name before any is renamed into place."""
    paths = check_output(output, inputs)
    texts = {"html": render_html(data, paths), "csv": render_csv(data), "json": render_json(data)}
    outfiles.write_all({paths[kind]: texts[kind] for kind in paths})
    return paths


def generate(
    net: Network,
    output: Path,
    method: str = "best",
    duration_ns: int = 1_000_000_000,
    seed: int = 1,
    analysis: dict | None = None,
    simulation: dict | None = None,
    progress: bool = False,
    inputs: list[Path] | tuple = (),
    measured: dict | None = None,
    worst_case: Path | None = None,
) -> tuple[dict, dict[str, Path]]:
    """build() then write(): returns the report's summary and the paths written; with a testbed
    `measured` report, the measured figures beside bound and simulated; with `worst_case` (a
    worst-case search's results), the pessimism interval per flow too."""
    check_output(output, inputs)
    found = read_results(worst_case, net) if worst_case is not None else None
    data = build(net, method, duration_ns, seed, analysis, simulation, progress)
    if measured is not None:
        from rtnetlab.testbed import compare

        compare.attach(data, measured)
    data["worst_case"] = found
    return data["summary"], write(data, output, inputs)


def render_csv(data: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    cols = [
        "flow",
        "destination",
        "plane",
        "class",
        "bound_us",
        "sim_p99_us",
        "sim_max_us",
        "deadline_us",
        "status",
        "reason",
    ]
    w.writerow(cols)
    for r in data["rows"]:
        # An unbounded bound is `inf` (an empty cell means "no value": no deadline, nothing measured).
        unbounded = r["status"] == "unbounded" and r["bound_us"] is None
        cells = {**r, "bound_us": math.inf if unbounded else r["bound_us"]}
        w.writerow([csv_number(cells[c]) if c.endswith("_us") else ("" if cells[c] is None else cells[c])
                    for c in cols])
    return buf.getvalue()


def render_json(data: dict) -> str:
    doc = {"summary": data["summary"], "analysis": data["analysis"], "simulation": data["simulation"]}
    if "measured" in data:
        doc["measured"] = {**data["measured"], "rows": [
            {k: r.get(k) for k in ("flow", "destination", "plane", "bound_us", "sim_max_us",
                                   "measured_mean_us", "measured_max_us", "measured_max_less_host_us",
                                   "measured_count")}
            for r in data["rows"]]}
    if data.get("worst_case") is not None:
        doc["worst_case"] = data["worst_case"]
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


# Formatting helpers


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _us(x: float | None, unbounded: str = "unbounded") -> str:
    if x is None:
        return unbounded
    return f"{x:,.1f}" if abs(x) < 1e5 else f"{x:,.0f}"


def _bytes(x: float | None, unbounded: str = "unbounded") -> str:
    return unbounded if x is None else f"{x:,.0f}"


def _pct(x: float | None) -> str:
    if x is None:
        return "–"
    return "unbounded" if math.isinf(x) else f"{100 * x:.1f}%"


def _num_attr(x: float | None, missing: float = -1.0) -> str:
    """Sort key of a table cell: unbounded (None) sorts above everything unless `missing` is given."""
    if x is None:
        x = missing
    if math.isinf(x):
        x = 1e300
    return f"{x:.6g}"


def _status_badge(status: str) -> str:
    return f'<span class="badge {_e(status)}">{_e(status)}</span>'


# Plots (matplotlib, Agg, inline SVG)


def _mpl() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    return matplotlib


_SVG_COUNTER = [0]


def _svg(fig: Any, name: str) -> str:
    """The figure as an inline <svg> element: scalable, its ids prefixed so that several figures
    can share one page."""
    matplotlib = _mpl()
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
    head += f' class="mpl" style="{max_px}" role="img" aria-label="{_e(name)} plot"'
    return head + text[head_end:]


def _figure(width: float, height: float) -> Any:
    _mpl()
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    return fig


def _log_labels(axis: Any, lo: float, hi: float) -> None:
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


def _style(ax: Any) -> None:
    ax.grid(True, axis="y", which="major", color="#dddddd", linewidth=0.6)
    ax.grid(True, axis="y", which="minor", color="#f0f0f0", linewidth=0.4)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


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
    fig = _figure(width, 3.3 * max(len(per_plane), 1))
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
        _log_labels(ax.yaxis, bottom, top)
        ax.set_xlim(-0.7, max(len(pr), 1) - 0.3)
        ax.set_xticks(x)
        ax.set_xticklabels([f"{r['flow']}→{r['destination']}" for r in pr], rotation=90, fontsize=6.5)
        ax.set_ylabel("latency (µs)")
        ax.set_title(f"plane {plane}", loc="left", fontsize=10)
        _style(ax)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    fig.tight_layout()
    return _svg(fig, "flows"), caption


def _cdf_points(hist: list[list[float]]) -> tuple[list[float], list[float]]:
    total = sum(n for _, n in hist)
    xs, ys, seen = [], [], 0
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
    fig = _figure(4.4 * ncols, 3.3 * nrows)
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
            ax.axvline(b, color="#c62828", linestyle="--", linewidth=1.2, label=f"largest bound {_us(b)} µs")
        for d in sorted(deadlines.get(name, ())):
            ax.axvline(d, color="black", linestyle=":", linewidth=1.2, label=f"deadline {_us(d)} µs")
        ax.set_xscale("log")
        lo_x, hi_x = ax.get_xlim()
        _log_labels(ax.xaxis, lo_x, hi_x)
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
    return _svg(fig, "cdf"), caption


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
    fig = _figure(width, 6.6)
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
    _style(ax1)
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
    _log_labels(ax2.yaxis, bottom, top)
    ax2.set_ylabel("bytes")
    ax2.set_title("backlog against buffer", loc="left", fontsize=10)
    _style(ax2)
    ax2.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    ax2.set_xticks(x)
    ax2.set_xticklabels([f"{p['node']}:{p['port']}" for p in ports], rotation=90, fontsize=6.5)
    ax2.set_xlim(-0.7, max(len(ports), 1) - 0.3)
    fig.tight_layout()
    return _svg(fig, "ports"), caption


# Topology (hand-made SVG: deterministic layout, data attributes for the page's script)


def topology(data: dict) -> tuple[str, list[dict]]:
    """The network as inline SVG: the switches of each plane in a row, the end systems in a row
    between the planes, links between rows as lines and within a row as arcs. Returns the SVG and,
    per flow, the links, nodes and paths the page's script highlights."""
    res = data["resolved"]
    nodes, ports, links = res["nodes"], res["ports"], res["links"]
    planes = res["planes"]
    load = {lk["name"]: lk for lk in data["info"]["links"]}
    ends = [(ports[lk["forward"]]["node"], ports[lk["forward"]]["peer"]) for lk in links]
    adj: dict[int, set[int]] = defaultdict(set)
    for a, b in ends:
        adj[a].add(b)
        adj[b].add(a)
    es = [i for i, n in enumerate(nodes) if n["kind"] == "end_system"]
    sw = [i for i, n in enumerate(nodes) if n["kind"] != "end_system"]
    row_keys = sorted({nodes[i]["plane"] for i in sw}, key=lambda p: (p is None, p if p is not None else 0))
    sw_rows = {k: [i for i in sw if nodes[i]["plane"] == k] for k in row_keys}

    # End systems in description order, then grouped under the switches they hang from.
    es_rank = {n: k for k, n in enumerate(es)}

    def bary(i: int, rank: dict[int, float]) -> float:
        r = [rank[j] for j in adj[i] if j in rank]
        return sum(r) / len(r) if r else math.inf

    sw_rank: dict[int, float] = {}
    for k in row_keys:
        order = sorted(sw_rows[k], key=lambda i: (bary(i, es_rank), nodes[i]["name"]))
        sw_rank.update({i: r for r, i in enumerate(order)})
    es_order = sorted(
        es, key=lambda i: (min((sw_rank[j] for j in adj[i] if j in sw_rank), default=math.inf), es_rank[i])
    )
    spacing, box_h, left = 86, 28, 90
    n_cols = max([len(es_order)] + [len(v) for v in sw_rows.values()] + [1])
    width = left + n_cols * spacing + 30
    pos: dict[int, tuple[float, float]] = {}
    es_x = {i: left + (k + 0.5) * spacing for k, i in enumerate(es_order)}

    # Rows: the first plane above the end systems, the others below. Links within a row are arcs,
    # bulging up above the end systems and down below them.
    layout_rows: list[tuple[str, Any]] = []
    if row_keys:
        layout_rows.append(("sw", row_keys[0]))
    layout_rows.append(("es", None))
    layout_rows += [("sw", k) for k in row_keys[1:]]
    es_row = layout_rows.index(("es", None))
    row_gap = 170

    def arc_height(dx: float) -> float:
        return min(18 + 0.22 * abs(dx), 120)

    # Switch x: over their end systems (else over their neighbours), pushed at least a column apart.
    right = left + (n_cols - 0.5) * spacing
    for k in row_keys:
        members = sw_rows[k]
        x0: dict[int, float] = {}
        for i in members:
            b = [es_x[j] for j in adj[i] if j in es_x]
            if b:
                x0[i] = sum(b) / len(b)
        for i in members:
            if i not in x0:
                b = [x0[j] for j in adj[i] if j in x0]
                x0[i] = sum(b) / len(b) if b else (left + right) / 2
        order = sorted(members, key=lambda i: (x0[i], sw_rank[i]))
        xs = [x0[i] for i in order]
        for r in range(1, len(xs)):
            xs[r] = max(xs[r], xs[r - 1] + spacing)
        if xs and xs[-1] > right:
            xs[-1] = right
            for r in range(len(xs) - 2, -1, -1):
                xs[r] = min(xs[r], xs[r + 1] - spacing)
        for i, x in zip(order, xs, strict=True):
            pos[i] = (x, 0.0)

    def pos_x(i: int) -> float:
        return es_x[i] if i in es_x else pos[i][0]

    rows_members = [es_order if kind == "es" else sw_rows[key] for kind, key in layout_rows]
    row_of = {i: r for r, members in enumerate(rows_members) for i in members}

    def bulge(r: int) -> int:
        return -1 if r < es_row else 1

    room = [
        max((arc_height(pos_x(a) - pos_x(b)) for a, b in ends if row_of[a] == row_of[b] == r), default=0.0)
        for r in range(len(layout_rows))
    ]
    y = 30.0 + box_h / 2 + (room[0] if bulge(0) < 0 else 0.0)
    row_y = []
    for r in range(len(layout_rows)):
        row_y.append(y)
        y += row_gap + (room[r] if bulge(r) > 0 else 0.0)
    height = row_y[-1] + (room[-1] if bulge(len(layout_rows) - 1) > 0 else 0.0) + box_h / 2 + 24
    for r, members in enumerate(rows_members):
        for i in members:
            pos[i] = (pos_x(i), row_y[r])

    parts = [
        f'<svg id="topo" class="topo" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}" '
        'role="img" aria-label="network topology">'
    ]
    for r, (kind, key) in enumerate(layout_rows):
        label = "end systems" if kind == "es" else ("plane " + planes[key] if key is not None else "switches")
        colour = "#555" if kind == "es" or key is None else PLANE_COLOURS[key % len(PLANE_COLOURS)]
        parts.append(
            f'<text class="rowlabel" x="10" y="{row_y[r] + 4:.0f}" fill="{colour}">{_e(label)}</text>'
        )
    parts.append('<g class="links">')
    for li, (lk, (a, b)) in enumerate(zip(links, ends, strict=True)):
        (x1, y1), (x2, y2) = pos[a], pos[b]
        plane = ports[lk["forward"]]["plane"]
        colour = "#888" if plane is None else PLANE_COLOURS[plane % len(PLANE_COLOURS)]
        ld = load.get(lk["name"], {})
        rate = ld.get("rate_bps") or 1.0
        u1, u2 = ld.get("direct_bps", 0.0) / rate, ld.get("reverse_bps", 0.0) / rate
        sw_width = 1.4 + 5.0 * min(max(u1, u2), 1.0)
        if row_of[a] == row_of[b]:
            h = arc_height(x2 - x1)
            cy = y1 + bulge(row_of[a]) * 2 * h
            d = f"M{x1:.1f},{y1:.1f} Q{(x1 + x2) / 2:.1f},{cy:.1f} {x2:.1f},{y2:.1f}"
        else:
            d = f"M{x1:.1f},{y1:.1f} L{x2:.1f},{y2:.1f}"
        title = (
            f"{nodes[a]['name']} → {nodes[b]['name']}: {100 * u1:.1f}%\n"
            f"{nodes[b]['name']} → {nodes[a]['name']}: {100 * u2:.1f}%"
        )
        overloaded = max(u1, u2) > 1.0
        parts.append(
            f'<path class="link{" over" if overloaded else ""}" data-link="{li}" d="{d}" stroke="{colour}" '
            f'stroke-width="{sw_width:.2f}" fill="none"><title>{_e(title)}</title></path>'
        )
    parts.append('</g><g class="nodes">')
    for i, n in enumerate(nodes):
        if i not in pos:
            continue
        x, yy = pos[i]
        name = n["name"]
        w = min(spacing - 8, max(44, 7.2 * len(name) + 12))
        label = name if 7.2 * len(name) + 8 <= w else name[: int((w - 14) / 7.2)] + "…"
        if n["kind"] == "end_system":
            fill, stroke, cls = "#ffffff", "#666666", "node es"
        else:
            p = n["plane"]
            stroke = "#666666" if p is None else PLANE_COLOURS[p % len(PLANE_COLOURS)]
            fill, cls = "#f3f6fb" if p is None else _tint(stroke), "node sw"
        parts.append(
            f'<g class="{cls}" data-node="{i}"><title>{_e(name)} ({_e(n["kind"].replace("_", " "))})</title>'
            f'<rect x="{x - w / 2:.1f}" y="{yy - box_h / 2:.1f}" width="{w:.1f}" height="{box_h}" rx="6" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="1.3"/>'
            f'<text x="{x:.1f}" y="{yy + 4:.1f}" text-anchor="middle">{_e(label)}</text></g>'
        )
    parts.append("</g></svg>")

    # Per flow: which links and nodes to highlight, and its routes as text.
    name_of = {i: n["name"] for i, n in enumerate(nodes)}
    cls_names = [c["name"] for c in res.get("classes", [])]
    flows = []
    for f in res["flows"]:
        lks: set[int] = set()
        dests: list[str] = []
        paths = []
        for route in f["routes"]:
            lks.update(ports[p]["link"] for p in route["ports"])
            hops = [name_of[ports[p]["node"]] for p in route["ports"]] + [name_of[route["destination"]]]
            plane = planes[route["plane"]] if route.get("plane") is not None else ""
            paths.append({"plane": plane, "hops": hops})
            if name_of[route["destination"]] not in dests:
                dests.append(name_of[route["destination"]])
        node_ids = sorted(
            {ports[p]["node"] for r in f["routes"] for p in r["ports"]}
            | {r["destination"] for r in f["routes"]}
        )
        c = f.get("class")
        flows.append(
            {
                "name": f["name"],
                "cls": cls_names[c] if isinstance(c, int) and c < len(cls_names) else (c or NO_CLASS),
                "source": name_of[f["source"]],
                "src": f["source"],
                "destinations": dests,
                "dst": sorted({r["destination"] for r in f["routes"]}),
                "links": sorted(lks),
                "nodes": node_ids,
                "paths": paths,
            }
        )
    return "".join(parts), flows


def _tint(hex_colour: str, amount: float = 0.85) -> str:
    r, g, b = (int(hex_colour[k : k + 2], 16) for k in (1, 3, 5))
    r, g, b = (round(c + (255 - c) * amount) for c in (r, g, b))
    return f"#{r:02x}{g:02x}{b:02x}"


# The page


CSS = """
:root { --ok: #2e7d32; --miss: #e65100; --bad: #c62828; --muted: #666; --line: #e3e3e3; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: #1d1d1d; background: #fafafa; }
header { background: #22313f; color: #fff; padding: 18px 28px 14px; }
header h1 { margin: 0 0 4px; font-size: 22px; font-weight: 600; }
header .meta { color: #c8d2dc; font-size: 13px; }
nav { position: sticky; top: 0; z-index: 5; background: #fff; border-bottom: 1px solid var(--line);
  padding: 6px 28px; font-size: 13px; }
nav a { color: #22313f; text-decoration: none; margin-right: 16px; }
nav a:hover { text-decoration: underline; }
main { max-width: 1320px; margin: 0 auto; padding: 8px 28px 40px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px 20px 18px;
  margin: 18px 0; }
h2 { font-size: 18px; margin: 2px 0 10px; }
h3 { font-size: 15px; margin: 14px 0 6px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin-top: 12px; }
.card { background: rgba(255,255,255,.08); border-radius: 6px; padding: 6px 12px; min-width: 120px; }
.card b { display: block; font-size: 18px; }
.card span { font-size: 12px; color: #c8d2dc; }
.banner { border-radius: 6px; padding: 10px 14px; margin: 6px 0 10px; font-weight: 600; }
.banner.ok { background: #e8f5e9; color: var(--ok); border: 1px solid #a5d6a7; }
.banner.warn { background: #fff3e0; color: var(--miss); border: 1px solid #ffcc80; }
.banner.bad { background: #ffebee; color: var(--bad); border: 1px solid #ef9a9a; }
.banner.alarm { background: var(--bad); color: #fff; font-size: 17px; border: 3px solid #7f0000;
  padding: 14px 16px; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 7px; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; }
th { white-space: normal; vertical-align: bottom; line-height: 1.2; }
th.l, td.l { text-align: left; }
thead th { background: #f3f4f6; position: sticky; top: 31px; z-index: 1; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th::after { content: " \\2195"; color: #bbb; font-size: 10px; }
table.sortable th[aria-sort="ascending"]::after { content: " \\25B2"; color: #333; }
table.sortable th[aria-sort="descending"]::after { content: " \\25BC"; color: #333; }
tbody tr:hover { background: #fff8e1; }
tr.miss td { background: #fff3e0; }
tr.unbounded td, tr.alarm td, tr.over td { background: #ffebee; }
td.reason { white-space: normal; text-align: left; max-width: 420px; color: #444; }
.badge { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 11.5px; color: #fff;
  background: var(--ok); }
.badge.miss { background: var(--miss); }
.badge.unbounded, .badge.alarm { background: var(--bad); }
.tablewrap { max-height: 560px; overflow: auto; border: 1px solid var(--line); border-radius: 6px; }
.tablewrap thead th { top: 0; }
.tablewrap.short { max-height: 340px; }
figure { margin: 8px 0 14px; }
figure svg.mpl { width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: 12.5px; margin-top: 4px; }
.controls { display: flex; align-items: center; gap: 12px; flex-wrap: wrap; margin-bottom: 6px; }
select { font: inherit; padding: 3px 6px; max-width: 520px; }
#vl-info { font-size: 12.5px; color: #333; }
#vl-info div { margin: 1px 0; }
.topowrap { overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; background: #fcfcfd; }
svg.topo { display: block; margin: 0 auto; font: 11.5px system-ui, "DejaVu Sans", sans-serif; }
svg.topo .rowlabel { font-weight: 600; font-size: 12px; }
svg.topo .link { stroke-linecap: round; opacity: .75; transition: opacity .12s; }
svg.topo .link:hover { opacity: 1; stroke-width: 6px; }
svg.topo .link.over { stroke-dasharray: 6 3; }
svg.topo .node text { fill: #222; pointer-events: none; }
svg.topo.dim .link { opacity: .1; }
svg.topo.dim .node { opacity: .35; }
svg.topo .link.hl { opacity: 1; stroke-width: 5px; }
svg.topo .node.hl { opacity: 1; }
svg.topo .node.src rect { stroke: var(--ok); stroke-width: 3.5px; }
svg.topo .node.dst rect { stroke: var(--bad); stroke-width: 3.5px; }
.legend { font-size: 12px; color: var(--muted); margin-top: 6px; }
.legend i { display: inline-block; width: 22px; height: 4px; vertical-align: middle; margin: 0 4px 0 10px; }
ul.notes li { margin: 3px 0; }
.muted { color: var(--muted); }
details summary { cursor: pointer; margin: 8px 0 4px; font-weight: 600; }
"""

JS = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("rt-data").textContent);
  var svg = document.getElementById("topo");
  var sel = document.getElementById("vl-select");
  var info = document.getElementById("vl-info");
  var byName = {};
  data.flows.forEach(function (f) {
    byName[f.name] = f;
    var o = document.createElement("option");
    o.value = f.name;
    o.textContent = f.name + " (" + f.cls + "): " + f.source + " \u2192 " + f.destinations.join(", ");
    sel.appendChild(o);
  });
  function clear() {
    svg.querySelectorAll(".hl, .src, .dst").forEach(function (e) { e.classList.remove("hl", "src", "dst"); });
  }
  function show(name) {
    clear();
    var f = byName[name];
    info.textContent = "";
    if (!f) { svg.classList.remove("dim"); return; }
    svg.classList.add("dim");
    f.links.forEach(function (i) {
      var e = svg.querySelector('[data-link="' + i + '"]');
      if (e) { e.classList.add("hl"); }
    });
    f.nodes.forEach(function (i) {
      var e = svg.querySelector('[data-node="' + i + '"]');
      if (e) { e.classList.add("hl"); }
    });
    var s = svg.querySelector('[data-node="' + f.src + '"]');
    if (s) { s.classList.add("src"); }
    f.dst.forEach(function (i) {
      var e = svg.querySelector('[data-node="' + i + '"]');
      if (e) { e.classList.add("dst"); }
    });
    f.paths.forEach(function (p) {
      var d = document.createElement("div");
      d.textContent = (p.plane ? "plane " + p.plane + ": " : "") + p.hops.join(" \u2192 ");
      info.appendChild(d);
    });
  }
  sel.addEventListener("change", function () { show(sel.value); });
  document.querySelectorAll("tr[data-flow]").forEach(function (tr) {
    tr.addEventListener("mouseenter", function () { show(tr.dataset.flow); });
    tr.addEventListener("mouseleave", function () { show(sel.value); });
    tr.addEventListener("click", function () { sel.value = tr.dataset.flow; show(sel.value); });
  });
  svg.querySelectorAll(".node").forEach(function (g) {
    g.addEventListener("mouseenter", function () {
      if (sel.value) { return; }
      var i = Number(g.dataset.node);
      data.links.forEach(function (ends, li) {
        if (ends[0] === i || ends[1] === i) {
          var e = svg.querySelector('[data-link="' + li + '"]');
          if (e) { e.classList.add("hl"); }
        }
      });
      svg.classList.add("dim");
      g.classList.add("hl");
    });
    g.addEventListener("mouseleave", function () { show(sel.value); });
  });
  function key(td) {
    var v = td.getAttribute("data-v");
    return v === null ? td.textContent.trim().toLowerCase() : parseFloat(v);
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var ths = table.querySelectorAll("thead th");
    ths.forEach(function (th, col) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        ths.forEach(function (o) { o.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows).map(function (r, i) { return [r, i]; });
        rows.sort(function (a, b) {
          var x = key(a[0].cells[col]), y = key(b[0].cells[col]);
          var c = x < y ? -1 : x > y ? 1 : 0;
          return (asc ? c : -c) || a[1] - b[1];
        });
        rows.forEach(function (r) { body.appendChild(r[0]); });
      });
    });
  });
  document.body.dataset.ready = "1";
})();
"""


def _flow_key(r: dict) -> str:
    return f"{r['flow']} → {r['destination']} ({r['plane']})"


def _violations_html(data: dict) -> str:
    v = data["summary"]["violations"]
    rows = data["rows"]
    ports = data["ports"]
    out = []
    if v["sim_above_bound"] or v["sim_backlog_above_bound"]:
        out.append(
            '<div class="banner alarm">SOUNDNESS VIOLATION: the simulation measured a latency or backlog '
            "above its worst-case bound. This must never happen: the analysis or the simulator is wrong. "
            "Please report it with this page's JSON.</div>"
        )
        out.append(
            '<table><thead><tr><th class="l">flow → destination (plane)</th><th>bound (µs)</th>'
            "<th>simulated max (µs)</th><th>excess (µs)</th></tr></thead><tbody>"
        )
        for r in rows:
            if r["above_bound"]:
                out.append(
                    f'<tr class="alarm"><td class="l">{_e(_flow_key(r))}</td><td>{_us(r["bound_us"])}</td>'
                    f"<td>{_us(r['sim_max_us'])}</td><td>{r['sim_max_us'] - r['bound_us']:,.3f}</td></tr>"
                )
        for p in ports:
            if p["sim_above_bound"]:
                out.append(
                    f'<tr class="alarm"><td class="l">port {_e(p["node"])}:{_e(p["port"])} backlog (B)</td>'
                    f"<td>{_bytes(p['backlog_bytes'])}</td><td>{_bytes(p['sim_max_backlog_bytes'])}</td>"
                    f"<td>{p['sim_max_backlog_bytes'] - p['backlog_bytes']:,.0f}</td></tr>"
                )
        out.append("</tbody></table>")
    problems = [
        (v["unbounded_flows"], "bad", "flow(s) unbounded"),
        (v["overloaded_ports"], "bad", "port(s) overloaded"),
        (v["deadline_misses"], "warn", "bound(s) above the deadline"),
        (v["ports_over_buffer"], "bad", "port(s) whose backlog bound exceeds the buffer"),
        (v["sim_drops"], "bad", "port(s) dropped or policed frames in the simulation"),
        (v["sim_losses"], "warn", "flow(s) lost frames in the simulation"),
    ]
    for items, level, text in problems:
        if items:
            out.append(f'<div class="banner {level}">{len(items)} {_e(text)}</div>')
    bad_ports = [
        p for p in ports if p["status"] == "unbounded" or p["over_buffer"] or p["drops"] or p["policed"]
    ]
    if bad_ports:
        out.append(
            '<h3>Ports</h3><table><thead><tr><th class="l">port</th><th class="l">plane</th><th>load</th>'
            "<th>backlog bound (B)</th><th>buffer (B)</th><th>sim. max backlog (B)</th><th>drops</th>"
            '<th>policed</th><th class="l">reason</th></tr></thead><tbody>'
        )
        for p in bad_ports:
            reason = p["reason"] or ("backlog bound above the buffer" if p["over_buffer"] else "")
            out.append(
                f'<tr class="over"><td class="l">{_e(p["node"])}:{_e(p["port"])} → {_e(p["peer"])}</td>'
                f'<td class="l">{_e(p["plane"])}</td><td>{_pct(p["load"])}</td>'
                f"<td>{_bytes(p['backlog_bytes'])}</td>"
                f"<td>{_bytes(p['buffer_bytes'], '–')}</td><td>{_bytes(p['sim_max_backlog_bytes'], '–')}</td>"
                f'<td>{p["drops"]}</td><td>{p["policed"]}</td><td class="reason">{_e(reason)}</td></tr>'
            )
        out.append("</tbody></table>")
    if v["unbounded_flows"] or v["deadline_misses"]:
        out.append(
            '<h3>Flows</h3><div class="tablewrap short"><table><thead><tr>'
            '<th class="l">flow → destination (plane)</th><th>bound (µs)</th>'
            '<th>deadline (µs)</th><th>slack (µs)</th><th class="l">status</th><th class="l">reason</th>'
            "</tr></thead><tbody>"
        )
        for r in sorted(rows, key=lambda r: (r["status"] != "unbounded", r["slack_us"] or 0)):
            if r["status"] in ("miss", "unbounded"):
                out.append(
                    f'<tr class="{r["status"]}"><td class="l">{_e(_flow_key(r))}</td>'
                    f"<td>{_us(r['bound_us'])}</td>"
                    f"<td>{_us(r['deadline_us'], '–')}</td><td>{_us(r['slack_us'], '–')}</td>"
                    f'<td class="l">{_status_badge(r["status"])}</td>'
                    f'<td class="reason">{_e(r["reason"] or "")}</td></tr>'
                )
        out.append("</tbody></table></div>")
    if v["sim_losses"]:
        out.append(
            '<h3>Simulated losses</h3><table><thead><tr><th class="l">flow → destination (plane)</th>'
            "<th>frames lost</th></tr></thead><tbody>"
        )
        for r in rows:
            if r["sim_losses"]:
                out.append(f'<tr><td class="l">{_e(_flow_key(r))}</td><td>{r["sim_losses"]}</td></tr>')
        out.append("</tbody></table>")
    if data["summary"]["clean"]:
        s = data["summary"]
        ratio = s["sim_max_over_bound"]
        extra = f" (simulated maximum / bound: {ratio['min']:.2f} to {ratio['max']:.2f})" if ratio else ""
        out.append(
            f'<div class="banner ok">No violation: all {s["flows"]["total"]} (flow, destination, plane) '
            f"bounds are finite and meet their deadlines, no port is overloaded or over its buffer, the "
            f"simulation lost nothing and stayed within every bound{_e(extra)}.</div>"
        )
    return "".join(out)


def _measured_section(data: dict) -> str:
    if "measured" not in data:
        return ""
    from rtnetlab.testbed import compare

    return compare.section(data)


def _flow_table(data: dict) -> str:
    head = [
        ("flow", "l"),
        ("destination", "l"),
        ("plane", "l"),
        ("class", "l"),
        ("bound (µs)", ""),
        ("sim. p99 (µs)", ""),
        ("sim. max (µs)", ""),
        ("deadline (µs)", ""),
        ("slack (µs)", ""),
        ("max / bound", ""),
        ("frames", ""),
        ("status", "l"),
        ("method", "l"),
    ]
    out = ['<div class="tablewrap"><table class="sortable" id="flow-table"><thead><tr>']
    out += [f'<th class="{c}">{_e(h)}</th>' for h, c in head]
    out.append("</tr></thead><tbody>")
    for r in data["rows"]:
        cls = r["status"] + (" alarm" if r["above_bound"] else "")
        ratio = "–" if r["ratio"] is None else f"{r['ratio']:.2f}"
        reason = ""
        if r["status"] == "unbounded" and r["reason"]:
            reason = f' <span class="muted">{_e(r["reason"])}</span>'
        out.append(
            f'<tr class="{cls}" data-flow="{_e(r["flow"])}">'
            f'<td class="l">{_e(r["flow"])}</td><td class="l">{_e(r["destination"])}</td>'
            f'<td class="l">{_e(r["plane"])}</td><td class="l">{_e(r["class"])}</td>'
            f'<td data-v="{_num_attr(r["bound_us"], math.inf)}">{_us(r["bound_us"])}</td>'
            f'<td data-v="{_num_attr(r["sim_p99_us"])}">{_us(r["sim_p99_us"], "–")}</td>'
            f'<td data-v="{_num_attr(r["sim_max_us"])}">{_us(r["sim_max_us"], "–")}</td>'
            f'<td data-v="{_num_attr(r["deadline_us"])}">{_us(r["deadline_us"], "–")}</td>'
            f'<td data-v="{_num_attr(r["slack_us"], -1e300)}">{_us(r["slack_us"], "–")}</td>'
            f'<td data-v="{_num_attr(r["ratio"])}">{ratio}</td>'
            f'<td data-v="{r["sim_count"]}">{r["sim_count"]:,}</td>'
            f'<td class="l">{_status_badge("alarm" if r["above_bound"] else r["status"])}{reason}</td>'
            f'<td class="l">{_e(r["method"] or "")}</td></tr>'
        )
    out.append("</tbody></table></div>")
    return "".join(out)


def _port_table(data: dict) -> str:
    head = [
        ("port", "l"),
        ("to", "l"),
        ("plane", "l"),
        ("scheduler", "l"),
        ("flows", ""),
        ("load", ""),
        ("sim. utilisation", ""),
        ("delay bound (µs)", ""),
        ("backlog bound (B)", ""),
        ("sim. max backlog (B)", ""),
        ("buffer (B)", ""),
        ("bound / buffer", ""),
        ("frames", ""),
        ("drops", ""),
        ("status", "l"),
    ]
    out = ['<div class="tablewrap"><table class="sortable" id="port-table"><thead><tr>']
    out += [f'<th class="{c}">{_e(h)}</th>' for h, c in head]
    out.append("</tr></thead><tbody>")
    for p in data["ports"]:
        if not (p["load"] > 0 or p["sim_frames"]):
            continue
        fill = None
        if p["buffer_bytes"]:
            fill = math.inf if p["backlog_bytes"] is None else p["backlog_bytes"] / p["buffer_bytes"]
        bad = p["status"] == "unbounded" or p["over_buffer"] or p["drops"] or p["policed"]
        status = p["status"] + (" (over buffer)" if p["over_buffer"] else "")
        out.append(
            f'<tr class="{"over" if bad else ""}">'
            f'<td class="l">{_e(p["node"])}:{_e(p["port"])}</td><td class="l">{_e(p["peer"])}</td>'
            f'<td class="l">{_e(p["plane"])}</td><td class="l">{_e(p["scheduler"])}</td>'
            f'<td data-v="{p["flows"]}">{p["flows"]}</td>'
            f'<td data-v="{_num_attr(p["load"])}">{_pct(p["load"])}</td>'
            f'<td data-v="{_num_attr(p["sim_utilisation"])}">{_pct(p["sim_utilisation"])}</td>'
            f'<td data-v="{_num_attr(p["delay_us"], math.inf)}">{_us(p["delay_us"])}</td>'
            f'<td data-v="{_num_attr(p["backlog_bytes"], math.inf)}">{_bytes(p["backlog_bytes"])}</td>'
            f'<td data-v="{_num_attr(p["sim_max_backlog_bytes"])}">'
            f"{_bytes(p['sim_max_backlog_bytes'], '–')}</td>"
            f'<td data-v="{_num_attr(p["buffer_bytes"])}">{_bytes(p["buffer_bytes"], "–")}</td>'
            f'<td data-v="{_num_attr(fill)}">{"–" if fill is None else _pct(fill)}</td>'
            f'<td data-v="{p["sim_frames"]}">{p["sim_frames"]:,}</td>'
            f'<td data-v="{p["drops"]}">{p["drops"]}</td>'
            f'<td class="l">{_status_badge("unbounded" if bad else p["status"])} '
            f'<span class="muted">{_e(status if bad else "")}</span></td></tr>'
        )
    out.append("</tbody></table></div>")
    return "".join(out)


def _notes_html(data: dict, paths: dict[str, Path] | None = None) -> str:
    s = data["summary"]
    a = data["analysis"]
    st = data["simulation"]["stats"]
    out = ['<ul class="notes">']
    for n in a.get("notes", []):
        out.append(f"<li>{_e(n)}</li>")
    for w in data["warnings"]:
        out.append(f"<li>{_e(w)}</li>")
    if not a.get("notes") and not data["warnings"]:
        out.append('<li class="muted">The analysis made no note and the description raised no warning.</li>')
    out.append(
        f"<li>Analysis: method <b>{_e(s['method'])}</b>; the bound of each row is the smallest of the "
        "methods it ran (column “method”). Bounds are from the release into the source's output queue "
        "to the delivery at the destination.</li>"
    )
    out.append(
        f"<li>Simulation: {s['duration_s']:g} s simulated, seed {s['seed']}, random phases, uniform frame "
        f"sizes; {st['events']:,} events, {st['frame_hops']:,} frame-hops in {1e3 * st['wall_s']:.1f} ms. "
        "Simulated maxima are of one run: below the bound by design, not a worst case. A simulated maximum "
        f"more than {SIM_SLACK_US} µs above its bound (integer-ns rounding) is reported as a soundness "
        "violation.</li>"
    )
    if s["interrupted"]:
        out.append(
            "<li><b>The simulation was interrupted</b>: its results cover less than the time above.</li>"
        )
    if s.get("bounds_not_guaranteed"):
        out.append(f"<li><b>Bounds not guaranteed</b>: {_e(s['bounds_not_guaranteed'])}; a simulated value "
                   "above one is not reported as a violation.</li>")
    out.append(
        "<li>p99 and the CDFs come from the simulator's log-linear histograms (quantiles within 1/128, "
        "never below the truth).</li>"
    )
    out.append("</ul>")
    red = a.get("redundancy") or []
    if red:
        bad = sum(1 for r in red if not r["skew_ok"])
        out.append(
            f"<details><summary>Redundancy management: {len(red)} (flow, destination) pairs, "
            f"{bad} with copies possibly further apart than SkewMax</summary>"
            '<div class="tablewrap"><table class="sortable"><thead><tr><th class="l">flow</th>'
            '<th class="l">destination</th><th>both planes (µs)</th><th>one plane (µs)</th>'
            "<th>arrival skew (µs)</th><th>SkewMax (µs)</th></tr></thead><tbody>"
        )
        for r in red:
            out.append(
                f'<tr class="{"" if r["skew_ok"] else "miss"}"><td class="l">{_e(r["flow"])}</td>'
                f'<td class="l">{_e(r["destination"])}</td>'
                f'<td data-v="{_num_attr(r["delay_us"], math.inf)}">{_us(r["delay_us"])}</td>'
                f'<td data-v="{_num_attr(r["single_plane_delay_us"], math.inf)}">'
                f"{_us(r['single_plane_delay_us'])}</td>"
                f'<td data-v="{_num_attr(r["arrival_skew_us"], math.inf)}">{_us(r["arrival_skew_us"])}</td>'
                f'<td data-v="{_num_attr(r["skew_max_us"])}">{_us(r["skew_max_us"], "–")}</td></tr>'
            )
        out.append("</tbody></table></div></details>")
    out.append(
        f'<p class="muted">Generated by rtnetlab {_e(s["rtnetlab_version"])} from '
        f"{_e(s['source'] or s['network'])}. "
        f"The same data: {_e(paths['csv'].name if paths else 'report.csv')} (one row per flow, destination "
        f"and plane) and {_e(paths['json'].name if paths else 'report.json')} (analysis, "
        "simulation, summary) beside this page.</p>"
    )
    return "".join(out)


def render_html(data: dict, paths: dict[str, Path] | None = None) -> str:
    s = data["summary"]
    spec = data["spec"]
    topo_svg, flows = topology(data)
    flows_svg, flows_caption = plot_flows(data)
    cdf_svg, cdf_caption = plot_cdfs(data)
    ports_svg, ports_caption = plot_ports(data)
    c = s["counts"]
    v = s["violations"]
    n_bad = sum(len(x) for x in v.values())
    ratio = s["sim_max_over_bound"]
    busiest = max((p["load"] for p in data["ports"]), default=0.0)
    cards = [
        (f"{s['flows']['ok']} / {s['flows']['total']}", "bounds meet their deadline"),
        (str(s["flows"]["miss"]), "deadline misses"),
        (str(s["flows"]["unbounded"]), "unbounded"),
        ("–" if ratio is None else f"{ratio['max']:.2f}", "largest sim. max / bound"),
        (_pct(busiest), "busiest port (contract)"),
        ("none" if n_bad == 0 else str(n_bad), "violations and overloads"),
    ]
    planes_legend = "".join(
        f'<i style="background:{PLANE_COLOURS[k % len(PLANE_COLOURS)]}"></i>plane {_e(p)}'
        for k, p in enumerate(data["resolved"]["planes"])
    )
    script_data = {
        "flows": flows,
        "links": [
            [
                data["resolved"]["ports"][lk["forward"]]["node"],
                data["resolved"]["ports"][lk["forward"]]["peer"],
            ]
            for lk in data["resolved"]["links"]
        ],
    }
    script_json = json.dumps(script_data, separators=(",", ":")).replace("</", "<\\/")
    title = f"rtnetlab report: {s['network']}"
    desc = spec.get("description") or ""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f"<header><h1>{_e(title)}</h1>",
        f'<div class="meta">{_e(desc)}{" · " if desc else ""}{c["end_systems"]} end systems, '
        f"{c['switches']} switches, {c['links']} links, {c['flows']} flows on {c['planes']} plane(s) · "
        f"analysis {_e(s['method'])} · simulation {s['duration_s']:g} s, seed {s['seed']}</div>",
        '<div class="cards">',
        *[f'<div class="card"><b>{_e(a)}</b><span>{_e(b)}</span></div>' for a, b in cards],
        "</div></header>",
        '<nav><a href="#violations">1 Violations</a><a href="#topology">2 Topology</a>'
        '<a href="#flows">3 Flows</a><a href="#cdf">4 Latency CDFs</a><a href="#ports">5 Ports</a>'
        '<a href="#notes">6 Notes</a></nav><main>',
        '<section id="violations" data-section="violations"><h2>1. Violations and overloads</h2>',
        _violations_html(data),
        "</section>",
        '<section id="topology" data-section="topology"><h2>2. Topology</h2>',
        '<div class="controls"><label for="vl-select">Virtual link</label>'
        '<select id="vl-select"><option value="">(none: whole network)</option></select>'
        '<span class="muted">or hover a row of the flow table; hover a node for its links</span></div>',
        '<div id="vl-info"></div>',
        f'<div class="topowrap">{topo_svg}</div>',
        f'<div class="legend">{planes_legend}<i style="background:#999;height:2px"></i>line width: '
        "load of the busier direction (hover a link for both) · selected VL: "
        '<b style="color:var(--ok)">source</b>, <b style="color:var(--bad)">destinations</b></div>',
        "</section>",
        '<section id="flows" data-section="flows"><h2>3. Flows: bound vs simulation</h2>',
        f'<figure class="plot" data-figure="flows">{flows_svg}<figcaption>Per flow → destination on each '
        "plane: the worst-case bound (bar), the simulated p99 (dot) and maximum (diamond), the deadline "
        f"(black tick); log scale.{_e(flows_caption)}</figcaption></figure>",
        _flow_table(data),
        '<p class="muted">Click a column to sort; hover a row to see its path in the topology.</p>',
        "</section>",
        _measured_section(data),
        '<section id="cdf" data-section="cdf"><h2>4. Latency CDFs per traffic class</h2>',
        f'<figure class="plot" data-figure="cdf">{cdf_svg}<figcaption>Simulated latency of every frame of '
        "the class (all flows, destinations and planes; bold), each flow faint; dashed: the class's largest "
        f"bound, dotted: deadlines.{_e(cdf_caption)}</figcaption></figure>",
        "</section>",
        '<section id="ports" data-section="ports"><h2>5. Ports: utilisation and backlog</h2>',
        f'<figure class="plot" data-figure="ports">{ports_svg}<figcaption>Loaded egress ports, coloured by '
        "plane: contract load (bars) and simulated utilisation (dots); backlog bound (bars) and simulated "
        f"maximum backlog (diamonds) against the buffer (black tick), log scale.{_e(ports_caption)}"
        "</figcaption></figure>",
        _port_table(data),
        "</section>",
        '<section id="notes" data-section="notes"><h2>6. Notes</h2>',
        _notes_html(data, paths),
        "</section>",
        html_section(data.get("worst_case")),
        "</main>",
        f'<script type="application/json" id="rt-data">{script_json}</script>',
        f"<script>{JS}</script>",
        "</body></html>\n",
    ]
    return "\n".join(parts)
