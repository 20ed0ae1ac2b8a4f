"""What the front reads out of an analysis report for people and gates: why a bound is infinite
(the overloaded port on the path and its load), the verdict that `--fail-on-miss` acts on, and
the analysis as CSV.

An infinite bound is written the same way in every output: JSON ``null`` with ``"status":
"unbounded"`` and a ``reason``; CSV ``inf`` (``-inf`` for the slack of a flow with a deadline)
with the status and reason columns, an empty cell meaning "no value" (no deadline, nothing
measured); WOPANet results ``Infinity`` (see `rtnetlab.io.wopanet.results_dumps`); terminal
tables and the HTML report ``unbounded`` with the reason once.
"""

from __future__ import annotations

import math
from typing import Any

#: Rows of a verdict listed by name in messages; the rest are counted.
SHOWN_FAILURES = 5


def clean_reason(text: str | None) -> str:
    """The engine's reason without a leading "unbounded: " (the status already says it)."""
    text = (text or "").strip()
    while text.lower().startswith("unbounded:"):
        text = text[len("unbounded:") :].strip()
    return text


def port_label(p: dict) -> str:
    return f"{p['node']}:{p['port']}"


class Reasons:
    """Human reasons for unbounded rows: for a port, its load against its rate; for a flow, the
    first unbounded port on its path (usually the overloaded one) with that port's reason.
    Falls back on the engine's own reason where the path tells nothing."""

    def __init__(self, resolved: dict, info: dict, analysis: dict):
        rates = {(p["node"], p["port"]): p for p in info.get("ports", [])}
        self.ports: dict[tuple[str, str], str] = {}
        for p in analysis.get("ports", []):
            if p.get("status") != "unbounded":
                continue
            key = (p["node"], p["port"])
            i = rates.get(key)
            if i is not None and i["load_bps"] > i["rate_bps"]:
                self.ports[key] = (
                    f"{port_label(p)} overloaded: {i['load_bps'] / 1e6:.4g} Mb/s offered to a "
                    f"{i['rate_bps'] / 1e6:.4g} Mb/s link ({100 * i['utilisation']:.1f}%)"
                )
            else:
                self.ports[key] = f"{port_label(p)}: {clean_reason(p.get('reason')) or 'unbounded'}"
        nodes = resolved.get("nodes", [])
        planes = resolved.get("planes", [])
        port_keys = [(nodes[p["node"]]["name"], p["name"]) for p in resolved.get("ports", [])]
        self.paths: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
        for f in resolved.get("flows", []):
            for r in f.get("routes", []):
                route = (f["name"], nodes[r["destination"]]["name"], planes[r["plane"]])
                self.paths[route] = [port_keys[i] for i in r["ports"]]

    def port(self, p: dict) -> str:
        return self.ports.get((p["node"], p["port"])) or clean_reason(p.get("reason"))

    def flow(self, f: dict) -> str:
        for key in self.paths.get((f["flow"], f["destination"], f["plane"]), []):
            if key in self.ports:
                return self.ports[key]
        return clean_reason(f.get("reason"))

    @classmethod
    def of(cls, net: Any, analysis: dict) -> Reasons:
        # Only an unbounded port gives a reason of its own; without one, every reason is the
        # engine's, and the resolved network and its port loads (large) need not be read.
        if not any(p.get("status") == "unbounded" for p in analysis.get("ports", [])):
            return cls({}, {}, analysis)
        return cls(net.resolved(), net.info(), analysis)


def verdict(analysis: dict) -> dict:
    """Counts of the bounds and the rows that fail a deadline gate: a bound above its deadline,
    or an infinite one where a deadline exists (network flows, fixed-priority items and chains)."""
    flows = analysis.get("flows", [])
    counts = {"rows": len(flows), "ok": 0, "miss": 0, "unbounded": 0}
    failures: list[str] = []
    for f in flows:
        counts[f["status"]] = counts.get(f["status"], 0) + 1
        if f["deadline_us"] is not None and f["status"] in ("miss", "unbounded"):
            failures.append(f"{f['flow']} -> {f['destination']} ({f['plane']}): {f['status']}")
    fp = analysis.get("fixed_priority") or {}
    for i in fp.get("items", []):
        if i.get("deadline_us") is not None and i["status"] in ("miss", "unbounded", "unassigned"):
            failures.append(f"{i['kind']} {i['name']}: {i['status']}")
    for c in fp.get("chains", []):
        if c.get("deadline_us") is not None and c["status"] in ("miss", "unbounded"):
            failures.append(f"chain {c['name']}: {c['status']}")
    return {**counts, "failed": bool(failures), "failures": failures}


def failure_line(failures: list[str], what: str = "deadline") -> str:
    shown = "; ".join(failures[:SHOWN_FAILURES])
    more = f"; and {len(failures) - SHOWN_FAILURES} more" if len(failures) > SHOWN_FAILURES else ""
    return f"--fail-on-miss: {len(failures)} {what} failure(s): {shown}{more}"


def csv_number(x: float | None) -> str:
    """A number for a CSV cell: empty when absent, ``inf`` / ``-inf`` when infinite."""
    if x is None:
        return ""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


FLOW_COLUMNS = ["flow", "destination", "plane", "delay_us", "jitter_us", "best_case_us", "deadline_us",
                "slack_us", "status", "method", "reason"]


def flows_csv(analysis: dict) -> str:
    """The end-to-end bounds as CSV, one row per (flow, destination, plane). An unbounded row has
    ``inf`` delay and jitter, ``-inf`` slack when it has a deadline, and its reason."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(FLOW_COLUMNS)
    for f in analysis.get("flows", []):
        unbounded = f["status"] == "unbounded"
        delay = math.inf if unbounded and f["delay_us"] is None else f["delay_us"]
        jitter = math.inf if unbounded and f["jitter_us"] is None else f["jitter_us"]
        slack = f["slack_us"]
        if unbounded and slack is None and f["deadline_us"] is not None:
            slack = -math.inf
        w.writerow([f["flow"], f["destination"], f["plane"], csv_number(delay), csv_number(jitter),
                    csv_number(f.get("best_case_us")), csv_number(f["deadline_us"]), csv_number(slack),
                    f["status"], f.get("method") or "", clean_reason(f.get("reason"))])
    return buf.getvalue()


ITEM_COLUMNS = ["item", "kind", "resource", "priority", "cost_us", "period_us", "deadline_us", "response_us",
                "slack_us", "status", "analysis", "reason"]


def response_times_csv(fp: dict) -> str:
    """The fixed-priority response times as CSV, one row per task, message or server; an
    unbounded response is ``inf`` (an unassigned item has none: empty)."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(ITEM_COLUMNS)
    for i in fp["items"]:
        unbounded = i["status"] == "unbounded"
        response = math.inf if unbounded and i["response_us"] is None else i["response_us"]
        slack = i["slack_us"]
        if unbounded and slack is None and i["deadline_us"] is not None:
            slack = -math.inf
        w.writerow([i["name"], i["kind"], i["resource"], "" if i["priority"] is None else i["priority"],
                    csv_number(i["cost_us"]), csv_number(i["period_us"]), csv_number(i["deadline_us"]),
                    csv_number(response), csv_number(slack), i["status"], i["analysis"],
                    clean_reason(i.get("reason"))])
    return buf.getvalue()
