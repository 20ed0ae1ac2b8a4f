"""Section 5, ports: the utilisation and backlog plot and the sortable table of loaded ports.
"""

from __future__ import annotations

import math

from rtnetlab.report.html_text import esc, nbytes, num_attr, pct, status_badge, us


def table(data: dict) -> str:
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
    out += [f'<th class="{c}">{esc(h)}</th>' for h, c in head]
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
            f'<td class="l">{esc(p["node"])}:{esc(p["port"])}</td><td class="l">{esc(p["peer"])}</td>'
            f'<td class="l">{esc(p["plane"])}</td><td class="l">{esc(p["scheduler"])}</td>'
            f'<td data-v="{p["flows"]}">{p["flows"]}</td>'
            f'<td data-v="{num_attr(p["load"])}">{pct(p["load"])}</td>'
            f'<td data-v="{num_attr(p["sim_utilisation"])}">{pct(p["sim_utilisation"])}</td>'
            f'<td data-v="{num_attr(p["delay_us"], math.inf)}">{us(p["delay_us"])}</td>'
            f'<td data-v="{num_attr(p["backlog_bytes"], math.inf)}">{nbytes(p["backlog_bytes"])}</td>'
            f'<td data-v="{num_attr(p["sim_max_backlog_bytes"])}">'
            f"{nbytes(p['sim_max_backlog_bytes'], '–')}</td>"
            f'<td data-v="{num_attr(p["buffer_bytes"])}">{nbytes(p["buffer_bytes"], "–")}</td>'
            f'<td data-v="{num_attr(fill)}">{"–" if fill is None else pct(fill)}</td>'
            f'<td data-v="{p["sim_frames"]}">{p["sim_frames"]:,}</td>'
            f'<td data-v="{p["drops"]}">{p["drops"]}</td>'
            f'<td class="l">{status_badge("unbounded" if bad else p["status"])} '
            f'<span class="muted">{esc(status if bad else "")}</span></td></tr>'
        )
    out.append("</tbody></table></div>")
    return "".join(out)
