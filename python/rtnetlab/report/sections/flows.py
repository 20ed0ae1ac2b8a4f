"""Section 3, flows: the bound vs simulation plot and the sortable table of every row.
"""

from __future__ import annotations

import math

from rtnetlab.report.html_text import esc, num_attr, status_badge, us


def table(data: dict) -> str:
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
    out += [f'<th class="{c}">{esc(h)}</th>' for h, c in head]
    out.append("</tr></thead><tbody>")
    for r in data["rows"]:
        cls = r["status"] + (" alarm" if r["above_bound"] else "")
        ratio = "–" if r["ratio"] is None else f"{r['ratio']:.2f}"
        reason = ""
        if r["status"] == "unbounded" and r["reason"]:
            reason = f' <span class="muted">{esc(r["reason"])}</span>'
        out.append(
            f'<tr class="{cls}" data-flow="{esc(r["flow"])}">'
            f'<td class="l">{esc(r["flow"])}</td><td class="l">{esc(r["destination"])}</td>'
            f'<td class="l">{esc(r["plane"])}</td><td class="l">{esc(r["class"])}</td>'
            f'<td data-v="{num_attr(r["bound_us"], math.inf)}">{us(r["bound_us"])}</td>'
            f'<td data-v="{num_attr(r["sim_p99_us"])}">{us(r["sim_p99_us"], "–")}</td>'
            f'<td data-v="{num_attr(r["sim_max_us"])}">{us(r["sim_max_us"], "–")}</td>'
            f'<td data-v="{num_attr(r["deadline_us"])}">{us(r["deadline_us"], "–")}</td>'
            f'<td data-v="{num_attr(r["slack_us"], -1e300)}">{us(r["slack_us"], "–")}</td>'
            f'<td data-v="{num_attr(r["ratio"])}">{ratio}</td>'
            f'<td data-v="{r["sim_count"]}">{r["sim_count"]:,}</td>'
            f'<td class="l">{status_badge("alarm" if r["above_bound"] else r["status"])}{reason}</td>'
            f'<td class="l">{esc(r["method"] or "")}</td></tr>'
        )
    out.append("</tbody></table></div>")
    return "".join(out)
