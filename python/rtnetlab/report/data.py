"""The report's data: the analysis and the simulation of one network joined row by row, and
the summary (counts, violations, the ``--fail-on-miss`` verdict).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from rtnetlab.results import Reasons
from rtnetlab.simulate import SIM_SLACK_US

if TYPE_CHECKING:
    from rtnetlab.model import Network


#: The class of a flow whose description names none.
NO_CLASS = "(no class)"


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

    not_guaranteed = bounds_not_applicable(net, {}, resolved)
    rows = []
    for f in analysis["flows"]:
        s = sim_flows.get((f["flow"], f["destination"], f["plane"]))
        measured = s is not None and s["count"] > 0
        s = s or {}
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
    status: defaultdict[str, int] = defaultdict(int)
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
