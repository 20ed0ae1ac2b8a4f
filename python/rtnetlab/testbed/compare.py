"""Bound, simulated and measured side by side: what `rtnetlab report --measured m.json` adds to
the report (a section of the HTML page, and the measured figures on each row of its data)."""

from __future__ import annotations

import html
import json
from pathlib import Path

from rtnetlab.errors import UserError


def load(path: Path) -> dict:
    """A testbed measurement (`rtnetlab testbed run --json` or `-o`), checked."""
    try:
        m = json.loads(Path(path).read_text())
    except OSError as e:
        raise UserError(f"--measured: {path}: {e.strerror or e}") from None
    except ValueError as e:
        raise UserError(f"--measured: {path}: not JSON ({e})") from None
    if not isinstance(m, dict) or m.get("source") != "testbed" or not isinstance(m.get("flows"), list):
        raise UserError(f'--measured: {path}: not a testbed measurement (no "source": "testbed" with flows)')
    return m


def attach(data: dict, measured: dict) -> None:
    """Sets the measured figures beside each (flow, destination, plane) row of the report."""
    rows = {(f["flow"], f["destination"], f["plane"]): f for f in measured["flows"]}
    noise = (measured.get("host") or {}).get("noise_us")
    matched = set()
    for r in data["rows"]:
        key = (r["flow"], r["destination"], r["plane"])
        m = rows.get(key)
        matched.add(key)
        r["measured_mean_us"] = m["mean_us"] if m and m["count"] else None
        r["measured_max_us"] = m["max_us"] if m and m["count"] else None
        r["measured_max_less_host_us"] = m.get("max_less_host_us") if m and m["count"] else None
        r["measured_count"] = m["count"] if m else 0
        r["measured_above"] = bool(m and m.get("above_bound"))
    data["measured"] = {
        "mode": measured.get("mode"),
        "network": measured.get("network"),
        "noise_us": noise,
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
    out = [
        '<section id="measured" data-section="measured"><h2>Bound, simulated and measured</h2>',
        f'<p class="muted">Testbed run ({e(str(m["mode"]))} mode, {_us(m["duration_s"] or 0)} s) of network '
        f"{e(str(m['network']))}; host noise {_us(m['noise_us'])} µs (idle baseline). A measured maximum, "
        "less the delay the host added to each frame, above bound + noise is flagged.</p>",
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
        "max less host delay (µs)",
        "frames",
    ]
    out += [f"<th>{e(h)}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for r in data["rows"]:
        cls = ' class="alarm"' if r.get("measured_above") else ""
        out.append(
            f"<tr{cls}><td>{e(r['flow'])}</td><td>{e(r['destination'])}</td><td>{e(r['plane'])}</td>"
            f"<td>{_us(r['bound_us'])}</td><td>{_us(r['sim_max_us'])}</td>"
            f"<td>{_us(r.get('measured_mean_us'))}</td><td>{_us(r.get('measured_max_us'))}</td>"
            f"<td>{_us(r.get('measured_max_less_host_us'))}</td><td>{r.get('measured_count', 0):,}</td></tr>"
        )
    out.append("</tbody></table></div>")
    if m["not_in_model"]:
        out.append(
            f'<p class="muted">Measured routes not in this description: {e(", ".join(m["not_in_model"]))}</p>'
        )
    out.append("</section>")
    return "".join(out)
