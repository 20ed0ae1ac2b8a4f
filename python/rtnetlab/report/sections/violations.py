"""Section 1, violations and overloads: soundness alarms, unbounded and late flows, overloaded
ports, losses; or the all-clear.
"""

from __future__ import annotations

from rtnetlab.report.html_text import esc, nbytes, pct, status_badge, us


def _flow_key(r: dict) -> str:
    return f"{r['flow']} → {r['destination']} ({r['plane']})"


def html(data: dict) -> str:
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
                    f'<tr class="alarm"><td class="l">{esc(_flow_key(r))}</td><td>{us(r["bound_us"])}</td>'
                    f"<td>{us(r['sim_max_us'])}</td><td>{r['sim_max_us'] - r['bound_us']:,.3f}</td></tr>"
                )
        for p in ports:
            if p["sim_above_bound"]:
                out.append(
                    f'<tr class="alarm"><td class="l">port {esc(p["node"])}:{esc(p["port"])} backlog (B)</td>'
                    f"<td>{nbytes(p['backlog_bytes'])}</td><td>{nbytes(p['sim_max_backlog_bytes'])}</td>"
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
            out.append(f'<div class="banner {level}">{len(items)} {esc(text)}</div>')
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
                f'<tr class="over"><td class="l">{esc(p["node"])}:{esc(p["port"])} → {esc(p["peer"])}</td>'
                f'<td class="l">{esc(p["plane"])}</td><td>{pct(p["load"])}</td>'
                f"<td>{nbytes(p['backlog_bytes'])}</td>"
                f"<td>{nbytes(p['buffer_bytes'], '–')}</td><td>{nbytes(p['sim_max_backlog_bytes'], '–')}</td>"
                f'<td>{p["drops"]}</td><td>{p["policed"]}</td><td class="reason">{esc(reason)}</td></tr>'
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
                    f'<tr class="{r["status"]}"><td class="l">{esc(_flow_key(r))}</td>'
                    f"<td>{us(r['bound_us'])}</td>"
                    f"<td>{us(r['deadline_us'], '–')}</td><td>{us(r['slack_us'], '–')}</td>"
                    f'<td class="l">{status_badge(r["status"])}</td>'
                    f'<td class="reason">{esc(r["reason"] or "")}</td></tr>'
                )
        out.append("</tbody></table></div>")
    if v["sim_losses"]:
        out.append(
            '<h3>Simulated losses</h3><table><thead><tr><th class="l">flow → destination (plane)</th>'
            "<th>frames lost</th></tr></thead><tbody>"
        )
        for r in rows:
            if r["sim_losses"]:
                out.append(f'<tr><td class="l">{esc(_flow_key(r))}</td><td>{r["sim_losses"]}</td></tr>')
        out.append("</tbody></table>")
    if data["summary"]["clean"]:
        s = data["summary"]
        ratio = s["sim_max_over_bound"]
        extra = f" (simulated maximum / bound: {ratio['min']:.2f} to {ratio['max']:.2f})" if ratio else ""
        out.append(
            f'<div class="banner ok">No violation: all {s["flows"]["total"]} (flow, destination, plane) '
            f"bounds are finite and meet their deadlines, no port is overloaded or over its buffer, the "
            f"simulation lost nothing and stayed within every bound{esc(extra)}.</div>"
        )
    return "".join(out)
