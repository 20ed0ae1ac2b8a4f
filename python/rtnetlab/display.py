"""Rich display in Jupyter: a network's topology as SVG, results as HTML tables coloured as the
HTML report colours them, and the report itself (`report`) in a cell."""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rtnetlab.network import Network
    from rtnetlab.result import Result

#: The report's colours (report/templates/style.css): a met deadline, a missed one, unbounded.
COLOURS = {"ok": "#2e7d32", "miss": "#e65100", "unbounded": "#c62828", "alarm": "#c62828"}
ROW_BACKGROUND = {"miss": "#fff3e0", "unbounded": "#ffebee", "alarm": "#ffebee"}

#: Rows a result shows in a notebook (the data frame has them all).
SHOWN_ROWS = 50

_TOPOLOGY_STYLE = """<style>
svg.topo .link { fill: none; }
svg.topo .link.over { stroke-dasharray: 6 3; }
svg.topo .node text { fill: #222; }
</style>"""


def topology_svg(net: Network) -> str:
    """The topology as the HTML report draws it (one row of switches per plane, the end systems
    between), as a standalone SVG element."""
    from rtnetlab.report.sections import topology

    engine = net.engine
    svg, _ = topology.topology({"resolved": engine.resolved(), "info": engine.info(), "spec": net.data})
    return svg


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isinf(value):
            return "inf"
        return f"{value:,.3f}".rstrip("0").rstrip(".")
    return html.escape(str(value))


def rows_html(rows: list[dict[str, Any]], title: str = "", limit: int = SHOWN_ROWS) -> str:
    """Rows (dicts with the same keys) as an HTML table: a row's ``status`` (ok, miss,
    unbounded) colours it and its badge as in the report; a row above its bound is an alarm."""
    if not rows:
        return f"<p><b>{html.escape(title)}</b>: no rows</p>" if title else ""
    columns: list[str] = []
    for r in rows[:limit]:
        columns += [k for k in r if k not in columns and not isinstance(r[k], (list, dict))]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = []
    for r in rows[:limit]:
        status = "alarm" if r.get("above_bound") else r.get("status")
        style = f' style="background:{ROW_BACKGROUND[status]}"' if status in ROW_BACKGROUND else ""
        cells = []
        for c in columns:
            v = r.get(c)
            if c == "status" and v in COLOURS:
                cells.append(f'<td><span style="background:{COLOURS[v]};color:#fff;border-radius:9px;'
                             f'padding:0 7px;font-size:11.5px">{html.escape(v)}</span></td>')
            else:
                align = "right" if isinstance(v, (int, float)) and not isinstance(v, bool) else "left"
                cells.append(f'<td style="text-align:{align}">{_cell(v)}</td>')
        body.append(f"<tr{style}>{''.join(cells)}</tr>")
    more = (f"<p style='color:#666'>first {limit} of {len(rows)} rows (all in .to_polars())</p>"
            if len(rows) > limit else "")
    caption = f"<b>{html.escape(title)}</b>" if title else ""
    return (f"{caption}<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}")


def result_html(result: Result) -> str:
    """A result as HTML: its notes, then its flow rows and its port rows."""
    parts = [f"<p><b>rtnetlab {html.escape(result.kind)}</b>"
             + (f" ({html.escape(str(result.data['method']))})" if result.data.get("method") else "")
             + "</p>"]
    if result.notes:
        parts.append("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in result.notes) + "</ul>")
    parts.append(rows_html(result.flows, "flows"))
    if result.ports:
        parts.append(rows_html(result.ports, "ports"))
    return "".join(parts)


class Report:
    """The HTML report of a network (``rtnetlab report``): bounds beside simulation, topology,
    CDFs, ports. Shown in a notebook cell as the page itself; `summary` holds its verdict
    and `paths` the files written (when a path was given)."""

    def __init__(self, html_text: str, summary: dict[str, Any], paths: dict[str, Path] | None = None):
        self.html = html_text
        self.summary = summary
        self.paths = paths or {}

    def _repr_html_(self) -> str:
        page = html.escape(self.html, quote=True)
        return f'<iframe srcdoc="{page}" style="width:100%;height:720px;border:1px solid #e3e3e3"></iframe>'

    def __repr__(self) -> str:
        f = self.summary.get("flows", {})
        return (f"<rtnetlab.Report: {f.get('ok')}/{f.get('total')} bounds meet their deadline, "
                f"{f.get('miss')} miss, {f.get('unbounded')} unbounded>")


def report(network: Network | str | Path, path: str | Path | None = None, *, method: str = "best",
           duration: str | float = "1s", seed: int = 1, measured: str | Path | None = None,
           worst_case: str | Path | None = None, progress: bool = False) -> Report:
    """The HTML report of `network` (a `rtnetlab.Network` or a description file): the
    `method` analysis beside a `duration` simulation of seed `seed`. With `path`, the page is
    written there with its .csv and .json beside it (``rtnetlab report -o PATH``); `measured`:
    a testbed run's JSON; `worst_case`: a worst-case search's results."""
    from rtnetlab.network import Network, load
    from rtnetlab.report import files as report_files
    from rtnetlab.simulate import _quantity

    net = network if isinstance(network, Network) else load(network)
    seconds = _quantity("duration", duration, "--duration")
    if seconds <= 0:
        raise ValueError(f"--duration: must be positive, got {duration}")
    measured_data = None
    if measured is not None:
        from rtnetlab.testbed import compare

        measured_data = compare.load(Path(measured))
    inputs = [Path(net.source)] if net.source and Path(net.source).exists() else []
    if path is not None:
        out = Path(path)
        report_files.check_output(out, inputs)
        summary, paths = report_files.generate(
            net.engine, out, method=method, duration_ns=round(seconds * 1e9), seed=seed, progress=progress,
            inputs=inputs + ([Path(measured)] if measured is not None else []), measured=measured_data,
            worst_case=None if worst_case is None else Path(worst_case))
        return Report(paths["html"].read_text(), summary, paths)
    from rtnetlab.report import page
    from rtnetlab.report.data import build
    from rtnetlab.worst_case import read_results

    found = read_results(Path(worst_case), net.engine) if worst_case is not None else None
    data = build(net.engine, method, round(seconds * 1e9), seed, progress=progress)
    if measured_data is not None:
        from rtnetlab.testbed import compare

        compare.check_network(measured_data, net.info()["name"])
        compare.attach(data, measured_data)
    data["worst_case"] = found
    return Report(page.render_html(data, None), data["summary"])
