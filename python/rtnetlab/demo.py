"""`rtnetlab demo`: the embedded AFDX case study, end to end, as a guided tour."""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

from rich.console import Console

from rtnetlab import _core, model
from rtnetlab.errors import UserError

CASE_STUDY = "afdx_case_study.yaml"


def case_study_path() -> str:
    return str(resources.files("rtnetlab") / "data" / CASE_STUDY)


def run(as_json: bool = False) -> dict:
    console = Console(highlight=False, stderr=as_json, width=None if sys.stdout.isatty() else 120)
    path = case_study_path()
    console.print(f"[bold]rtnetlab demo[/bold]: {path}")

    console.print("\n[bold]1. Validate[/bold] the description (every rule, every place)")
    net = model.load_file(path)
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

    methods = _core.analysis_methods()
    method = "best" if "best" in methods else None
    if method:
        console.print(f"\n[bold]3. Worst-case analysis[/bold] ({method})")
        report = net.analyze(method)
        worst = max(
            report["flows"], key=lambda f: f["delay_us"] if f["delay_us"] is not None else float("inf")
        )
        misses = [f for f in report["flows"] if f["status"] != "ok"]
        console.print(
            f"   largest end-to-end bound: {worst['flow']} -> {worst['destination']} "
            f"({worst['plane']}): {worst['delay_us']:.1f} us"
        )
        console.print(f"   {len(misses)} (flow, destination, plane) bound(s) above deadline or unbounded")
        summary["analysis"] = {"method": method, "worst": worst, "misses": len(misses)}
    if method:
        from rtnetlab.simulate import run as simulate

        console.print("\n[bold]4. Simulation[/bold], 1 s, packet by packet, checked against the bounds")
        sim = simulate(net, {"duration_ns": 1_000_000_000, "seed": 1}, progress=False)
        bounds = {(f["flow"], f["destination"], f["plane"]): f["delay_us"] for f in report["flows"]}
        ratios = [
            f["max_us"] / bounds[(f["flow"], f["destination"], f["plane"])]
            for f in sim["flows"]
            if f["count"]
        ]
        s = sim["stats"]
        console.print(
            f"   {s['frame_hops']:,} frame-hops; simulated maximum / bound: "
            f"{min(ratios):.2f} .. {max(ratios):.2f} (never above 1)"
        )
        summary["simulation"] = {"frame_hops": s["frame_hops"], "max_ratio": max(ratios)}

        from rtnetlab import report as report_mod

        console.print("\n[bold]5. Report[/bold]: violations, topology, bounds vs simulation, CDFs, ports")
        out_dir = Path("out")
        try:
            out_dir.mkdir(exist_ok=True)
        except OSError as e:
            raise UserError(f"{out_dir}: cannot be created ({e.strerror})") from None
        _, paths = report_mod.generate(
            net, out_dir / "report.html", method, 1_000_000_000, 1, analysis=report, simulation=sim
        )
        console.print(f"   {paths['html'].resolve()}", markup=False, soft_wrap=True)
        summary["report"] = {k: str(p) for k, p in paths.items()}
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    return summary
