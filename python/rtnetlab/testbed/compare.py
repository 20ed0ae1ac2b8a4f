"""Bound, simulated and measured side by side: what `rtnetlab report --measured m.json` adds to
the report (a section of the HTML page, and the measured figures on each row of its data)."""

from __future__ import annotations

import html
import json
from pathlib import Path

from rtnetlab.errors import UserError
from rtnetlab.io import jsontext


def load(path: Path) -> dict:
    """A testbed measurement (`rtnetlab testbed run --json` or `-o`), checked."""
    try:
        m = json.loads(Path(path).read_text())
    except OSError as e:
        raise UserError(f"--measured: {path}: {e.strerror or e}") from None
    except ValueError as e:  # not JSON, or not text: where it stops being JSON, as the others say it
        raise UserError(f"--measured: {jsontext.not_json(path, e)}") from None
    if not isinstance(m, dict) or m.get("source") != "testbed" or not isinstance(m.get("flows"), list):
        raise UserError(f'--measured: {path}: not a testbed measurement (no "source": "testbed" with flows)')
    return m


def check_network(measured: dict, name: str | None) -> None:
    """Refuses, in one line and before any work, a measurement of another network."""
    if measured.get("network") is not None and name is not None and measured["network"] != name:
        raise UserError(
            f"--measured: a measurement of network {measured['network']!r}, not of {name!r} "
            "(this description)"
        )


def attach(data: dict, measured: dict) -> None:
    """Sets the measured figures beside each (flow, destination, plane) row of the report. A
    measurement of another network (another name, or none of its routes in this description)
    is refused in one line."""
    rows = {(f["flow"], f["destination"], f["plane"]): f for f in measured["flows"]}
    check_network(measured, data.get("network"))
    keys = {(r["flow"], r["destination"], r["plane"]) for r in data["rows"]}
    if rows and not keys & set(rows):
        raise UserError(f"--measured: none of the measurement's {len(rows)} routes is in this description")
    noise = (measured.get("host") or {}).get("noise_us")
    matched = set()
    for r in data["rows"]:
        key = (r["flow"], r["destination"], r["plane"])
        m = rows.get(key)
        matched.add(key)
        seen = bool(m and m["count"])
        r["measured_mean_us"] = m["mean_us"] if seen else None
        r["measured_max_us"] = m["max_us"] if seen else None
        r["measured_undisturbed_max_us"] = m.get("undisturbed_max_us") if seen else None
        r["measured_undisturbed_less_host_us"] = m.get("undisturbed_max_less_host_us") if seen else None
        r["measured_disturbed"] = (m.get("disturbed_late", 0) + m.get("disturbed_stall", 0)) if m else 0
        r["measured_allowance_us"] = m.get("allowance_us") if m else None
        r["measured_verdict"] = m.get("verdict") if m else None
        r["measured_count"] = m["count"] if m else 0
        r["measured_above"] = bool(m and m.get("above_bound"))
    host = measured.get("host") or {}
    data["measured"] = {
        "mode": measured.get("mode"),
        "latency_basis": measured.get("latency_basis", "measured"),
        "network": measured.get("network"),
        "noise_us": noise,
        "time_scale": measured.get("time_scale", 1),
        "send_lateness_us": host.get("send_lateness_us"),
        "stalls": host.get("stalls"),
        "rule": (measured.get("bounds") or {}).get("rule"),
        "duration_s": (measured.get("stats") or {}).get("duration_s"),
        "not_in_model": sorted(f"{k[0]} -> {k[1]} ({k[2]})" for k in set(rows) - matched),
    }


def _us(x: float | None) -> str:
    return "–" if x is None else f"{x:,.1f}"


def section(data: dict) -> str:
    """The HTML section (empty without a measurement)."""
    m = data.get("measured")
    if not m:
        return ""
    e = html.escape
    k = m.get("time_scale") or 1
    late = m.get("send_lateness_us") or {}
    stalls = m.get("stalls") or {}
    host = (
        f"host noise {_us(m['noise_us'])} µs (idle baseline, model time); send lateness p99 "
        f"{_us(late.get('p99_us'))} µs, max {_us(late.get('max_us'))} µs and {stalls.get('count', 0)} "
        f"stall(s) over {_us(stalls.get('threshold_us'))} µs (wall clock)"
    )
    out = [
        '<section id="measured" data-section="measured"><h2>Bound, simulated and measured</h2>',
        f'<p class="muted">Testbed run ({e(str(m["mode"]))} mode, {_us(m["duration_s"] or 0)} s of model '
        f"time, time scale {k:g}: the network ran {k:g} times slower and its latencies are given back in "
        f"model time) of network {e(str(m['network']))}; {e(host)}. Latencies: "
        f"<strong>{e(str(m.get('latency_basis') or 'measured'))}</strong>.</p>",
        f'<p class="muted">Verdict: {e(str(m.get("rule") or ""))}.</p>',
        '<div class="tablewrap"><table class="sortable" id="measured-table"><thead><tr>',
    ]
    head = [
        "flow",
        "destination",
        "plane",
        "bound (µs)",
        "sim. max (µs)",
        "measured mean (µs)",
        "measured max (µs)",
        "undisturbed max (µs)",
        "less host delay (µs)",
        "allowance (µs)",
        "disturbed",
        "frames",
        "verdict",
    ]
    out += [f"<th>{e(h)}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for r in data["rows"]:
        cls = ' class="alarm"' if r.get("measured_above") else ""
        out.append(
            f"<tr{cls}><td>{e(r['flow'])}</td><td>{e(r['destination'])}</td><td>{e(r['plane'])}</td>"
            f"<td>{_us(r['bound_us'])}</td><td>{_us(r['sim_max_us'])}</td>"
            f"<td>{_us(r.get('measured_mean_us'))}</td><td>{_us(r.get('measured_max_us'))}</td>"
            f"<td>{_us(r.get('measured_undisturbed_max_us'))}</td>"
            f"<td>{_us(r.get('measured_undisturbed_less_host_us'))}</td>"
            f"<td>{_us(r.get('measured_allowance_us'))}</td><td>{r.get('measured_disturbed', 0):,}</td>"
            f"<td>{r.get('measured_count', 0):,}</td><td>{e(str(r.get('measured_verdict') or '–'))}</td></tr>"
        )
    out.append("</tbody></table></div>")
    if m["not_in_model"]:
        out.append(
            f'<p class="muted">Measured routes not in this description: {e(", ".join(m["not_in_model"]))}</p>'
        )
    out.append("</section>")
    return "".join(out)
