"""`rtnetlab demo`: the embedded AFDX case study, end to end, as a guided tour of the Python API
(``rt.load``, ``Network.info``, ``Network.analyze``, ``Network.simulate``, ``rt.report``,
``rt.configure_dtable``): what it prints is what these return."""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

from rich.console import Console

import rtnetlab as rt
from rtnetlab.errors import UserError

CASE_STUDY = "afdx_case_study.yaml"


def case_study_path() -> str:
    return str(resources.files("rtnetlab") / "data" / CASE_STUDY)


def run(as_json: bool = False) -> dict:
    width = None if sys.stdout.isatty() else 120
    console = Console(emoji=False, highlight=False, stderr=as_json, width=width)
    path = case_study_path()
    console.print(f"[bold]rtnetlab demo[/bold]: {path}")

    console.print("\n[bold]1. Validate[/bold] the description (every rule, every place)")
    net = rt.load(path)
    info = net.info()
    c = info["counts"]
    console.print(
        f"   {c['end_systems']} end systems, {c['switches']} switches on {c['planes']} planes, "
        f"{c['flows']} virtual links, {c['routes']} routes; {len(net.warnings)} warning(s)"
    )

    console.print("\n[bold]2. Load[/bold] of every egress port")
    busiest = sorted(info["ports"], key=lambda p: -p["utilisation"])[:3]
    for p in busiest:
        console.print(
            f"   {p['node']}:{p['port']} -> {p['peer']} ({p['plane']}): {100 * p['utilisation']:.1f}%"
        )
    summary: dict = {"network": info["name"], "counts": c, "busiest_ports": busiest}

    method = "best"
    if method:
        console.print(f"\n[bold]3. Worst-case analysis[/bold] ({method})")
        report = net.analyze(method).data
        worst = max(
            report["flows"], key=lambda f: f["delay_us"] if f["delay_us"] is not None else float("inf")
        )
        misses = [f for f in report["flows"] if f["status"] != "ok"]
        largest = "unbounded" if worst["delay_us"] is None else f"{worst['delay_us']:.1f} us"
        console.print(
            f"   largest end-to-end bound: {worst['flow']} -> {worst['destination']} "
            f"({worst['plane']}): {largest}"
        )
        console.print(f"   {len(misses)} (flow, destination, plane) bound(s) above deadline or unbounded")
        summary["analysis"] = {"method": method, "worst": worst, "misses": len(misses)}
    if method:
        console.print("\n[bold]4. Simulation[/bold], 1 s, packet by packet, checked against the bounds")
        # The bounds are the analysis' above (the simulation need not compute them again).
        sim = net.simulate(duration="1s", seed=1, bounds=False).data
        bounds = {(f["flow"], f["destination"], f["plane"]): f["delay_us"] for f in report["flows"]}
        ratios = [
            f["max_us"] / bounds[(f["flow"], f["destination"], f["plane"])]
            for f in sim["flows"]
            if f["count"] and bounds[(f["flow"], f["destination"], f["plane"])]
        ] or [0.0]
        s = sim["stats"]
        console.print(
            f"   {s['frame_hops']:,} frame-hops; simulated maximum / bound: "
            f"{min(ratios):.2f} .. {max(ratios):.2f} (never above 1)"
        )
        summary["simulation"] = {"frame_hops": s["frame_hops"], "max_ratio": max(ratios)}

        console.print("\n[bold]5. Report[/bold]: violations, topology, bounds vs simulation, CDFs, ports")
        out_dir = Path("out")
        try:
            out_dir.mkdir(exist_ok=True)
        except OSError as e:
            raise UserError(f"{out_dir}: cannot be created ({e.strerror})") from None
        paths = rt.report(net, out_dir / "report.html", method=method, duration="1s", seed=1).paths
        console.print(f"   {paths['html'].resolve()}", markup=False, soft_wrap=True)
        summary["report"] = {k: str(p) for k, p in paths.items()}
    summary["fixed_priority"] = _can_bus(console)
    summary["dtable"] = _dtable(console)
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    return summary


#: Seed 004, Table 1: a CAN bus (one 8-byte frame = 1 ms at 135 kbit/s) with a network sporadic
#: server of 20 packets per 50 ms between two periodic streams.
NSS_TABLE1 = {
    "name": "nss-table1",
    "buses": [{"name": "can0", "bit_rate": "135kbps"}],
    "messages": [
        {"name": "m1", "bus": "can0", "sender": "n1", "payload": "8B", "packets": 10, "period": "200ms",
         "deadline": "20ms", "priority": 1},
        {"name": "m2", "bus": "can0", "sender": "n2", "payload": "8B", "packets": 20, "server": "nss2"},
        {"name": "m3", "bus": "can0", "sender": "n3", "payload": "8B", "packets": 50, "period": "200ms",
         "deadline": "100ms", "priority": 3},
    ],
    "servers": [{"name": "nss2", "bus": "can0", "sender": "n2", "budget": 20, "replenishment_period": "50ms",
                 "priority": 2, "background_priority": 4}],
}

#: Seed 003, Table 4: latency (largest entry distance) and bandwidth needs of seven classes.
DTABLE_TABLE4 = {
    "entries": 64, "gmtu": "2048B", "credit": "64B", "w": 2, "k": 0.5, "leftover": "NC",
    "classes": [
        {"name": n, "max_distance": d, "share": f, "mtu": m}
        for n, d, f, m in [("NC", 2, 0.093, "192B"), ("VO", 4, 0.046, "192B"), ("VI", 8, 0.5, "2048B"),
                           ("CL", 16, 0.203, "2048B"), ("EE", 32, 0.093, "1024B"), ("BE", 64, 0.046, "1024B"),
                           ("BK", 64, 0.015, "1024B")]
    ],
}


def _can_bus(console: Console) -> dict:
    console.print("\n[bold]6. Fixed priority[/bold]: seed 004's CAN bus with a network sporadic server")
    net = rt.Network.from_dict(NSS_TABLE1, "seed 004 Table 1")
    items = {i["name"]: i for i in net.analyze().data["fixed_priority"]["items"]}
    # Every message released at 0 (the synchronous release, the bus' critical instant).
    sim = net.simulate(duration="2s", seed=1, release="synchronized", bounds=False).data["buses"]
    simulated = {m["name"]: m["max_us"] for m in sim["buses"][0]["messages"]}
    for name in ("m1", "nss2", "m3"):
        bound = items[name]["response_us"] / 1e3
        deadline = items[name]["deadline_us"] / 1e3
        line = f"   {name}: worst-case response {bound:g} ms (deadline {deadline:g} ms)"
        if name in simulated:
            line += f", simulated maximum {simulated[name] / 1e3:g} ms"
        console.print(line)
    return {"bounds_ms": {n: items[n]["response_us"] / 1e3 for n in ("m1", "nss2", "m3")},
            "violations": sim["violations"]}


def _dtable(console: Console) -> dict:
    console.print("\n[bold]7. Synthesis[/bold]: a Deficit Table decoupling latency from bandwidth (seed 003)")
    report = rt.configure_dtable(DTABLE_TABLE4).data
    rows = []
    for c, w in zip(report["decoupling"]["plan"]["classes"], report["decoupling"]["weights"], strict=True):
        rows.append(f"{c['name']} {c['entries']}x{w['entry_weights'][0]}")
    console.print("   entries x weight (64-byte credits): " + ", ".join(rows))
    return {"entries": {c["name"]: c["entries"] for c in report["decoupling"]["plan"]["classes"]}}
