"""Section 2, the topology: a hand-made SVG (deterministic layout, data attributes for the
page's script to highlight a virtual link's path).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from rtnetlab.report.data import NO_CLASS
from rtnetlab.report.html_text import esc
from rtnetlab.report.plots.common import PLANE_COLOURS


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
    es_rank: dict[int, float] = {n: k for k, n in enumerate(es)}

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
            f'<text class="rowlabel" x="10" y="{row_y[r] + 4:.0f}" fill="{colour}">{esc(label)}</text>'
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
            f'stroke-width="{sw_width:.2f}" fill="none"><title>{esc(title)}</title></path>'
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
            f'<g class="{cls}" data-node="{i}">'
            f'<title>{esc(name)} ({esc(n["kind"].replace("_", " "))})</title>'
            f'<rect x="{x - w / 2:.1f}" y="{yy - box_h / 2:.1f}" width="{w:.1f}" height="{box_h}" rx="6" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="1.3"/>'
            f'<text x="{x:.1f}" y="{yy + 4:.1f}" text-anchor="middle">{esc(label)}</text></g>'
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
