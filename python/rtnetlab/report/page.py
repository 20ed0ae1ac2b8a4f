"""The page: its sections and plots rendered by their modules, assembled by the Jinja2 template
``templates/page.html.j2`` (with ``style.css`` and ``script.js`` inlined: the page needs no
network access).

The template does no escaping of its own (the sections arrive as HTML); text put into it goes
through the ``esc`` filter, the same escaping as the sections'.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from rtnetlab.report.html_text import esc, pct
from rtnetlab.report.plots.common import PLANE_COLOURS


@cache
def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("rtnetlab.report", "templates"),
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["esc"] = esc
    return env


def render_html(data: dict, paths: dict[str, Path] | None = None) -> str:
    from rtnetlab.report.plots import cdf as cdf_plot
    from rtnetlab.report.plots import flows as flows_plot
    from rtnetlab.report.plots import ports as ports_plot
    from rtnetlab.report.sections import flows, measured, notes, ports, topology, violations
    from rtnetlab.worst_case import html_section

    s = data["summary"]
    topo_svg, topo_flows = topology.topology(data)
    flows_svg, flows_caption = flows_plot.plot_flows(data)
    cdf_svg, cdf_caption = cdf_plot.plot_cdfs(data)
    ports_svg, ports_caption = ports_plot.plot_ports(data)
    v = s["violations"]
    n_bad = sum(len(x) for x in v.values())
    ratio = s["sim_max_over_bound"]
    busiest = max((p["load"] for p in data["ports"]), default=0.0)
    cards = [
        (f"{s['flows']['ok']} / {s['flows']['total']}", "bounds meet their deadline"),
        (str(s["flows"]["miss"]), "deadline misses"),
        (str(s["flows"]["unbounded"]), "unbounded"),
        ("–" if ratio is None else f"{ratio['max']:.2f}", "largest sim. max / bound"),
        (pct(busiest), "busiest port (contract)"),
        ("none" if n_bad == 0 else str(n_bad), "violations and overloads"),
    ]
    planes = [(PLANE_COLOURS[k % len(PLANE_COLOURS)], p) for k, p in enumerate(data["resolved"]["planes"])]
    script_data = {
        "flows": topo_flows,
        "links": [
            [
                data["resolved"]["ports"][lk["forward"]]["node"],
                data["resolved"]["ports"][lk["forward"]]["peer"],
            ]
            for lk in data["resolved"]["links"]
        ],
    }
    return _environment().get_template("page.html.j2").render(
        title=f"rtnetlab report: {s['network']}",
        desc=data["spec"].get("description") or "",
        s=s,
        c=s["counts"],
        duration=f"{s['duration_s']:g}",
        cards=cards,
        planes=planes,
        violations=violations.html(data),
        topology_svg=topo_svg,
        flows_svg=flows_svg,
        flows_caption=flows_caption,
        flow_table=flows.table(data),
        measured=measured.html(data),
        cdf_svg=cdf_svg,
        cdf_caption=cdf_caption,
        ports_svg=ports_svg,
        ports_caption=ports_caption,
        port_table=ports.table(data),
        notes=notes.html(data, paths),
        worst_case=html_section(data.get("worst_case")),
        script_json=json.dumps(script_data, separators=(",", ":")).replace("</", "<\\/"),
    )
