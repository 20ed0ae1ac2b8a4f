"""Cost per frame-hop against the simulated duration: the event loop's time per frame-hop at 1 s
and at 100 s simulated, on single-plane and two-plane 265-VL networks (a WOPANet import, and the
generator's network with FIFO, static-priority, WF2Q and DRR ports), with every workload, both
release patterns, retransmission and both deduplication modes.

    .venv/bin/python benchmarks/sim_flatness.py [--short 1] [--long 100]

Each run goes through the Python front's library call (the engine's own wall time, `stats.wall_s`,
per frame-hop); each figure is the least of --repeat runs (the machine's other work only adds).
Writes benchmarks/sim_flatness_results.json. The same property, in deterministic work units
instead of time, is a test (`work_per_frame_hop_is_flat_in_duration`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from rtnetlab import _core, model

HERE = Path(__file__).resolve().parent
CLASSES = ("avionics", "multimedia", "best_effort")


def two_planes(scheduler: str | None) -> model.Network:
    spec = json.loads(_core.generate_afdx(265, 8, 1, 2, 58))
    if scheduler == "static_priority":
        spec["defaults"]["scheduler"] = "static_priority"
    elif scheduler == "wf2q":
        spec["schedulers"] = {"w": {"kind": "wf2q", "weights": dict(zip(CLASSES, (6, 3, 1), strict=True))}}
        spec["defaults"]["scheduler"] = "w"
    elif scheduler == "drr":
        spec["schedulers"] = {"d": {"kind": "drr", "quanta": dict.fromkeys(CLASSES, "1518B")}}
        spec["defaults"]["scheduler"] = "d"
    return model.load_text(json.dumps(spec))


def run(net: model.Network, config: dict, seconds: float) -> float:
    ns = round(seconds * 1e9)
    sim = net.handle.simulation(json.dumps({**config, "duration_ns": ns}))
    sim.run_until(ns)
    sim.finish()
    stats = json.loads(sim.report_json())["stats"]
    return stats["wall_s"] / stats["frame_hops"] * 1e9


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--short", type=float, default=1.0)
    ap.add_argument("--long", type=float, default=100.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "sim_flatness_results.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "wopanet.xml"
        subprocess.run([sys.executable, str(HERE / "wopanet_network.py"), str(xml)], check=True,
                       capture_output=True)
        wopanet = model.load_file(xml)
    nets = {
        "WOPANet import, one plane, FIFO": wopanet,
        "generated, two planes, FIFO": two_planes(None),
        "generated, two planes, static priority": two_planes("static_priority"),
        "generated, two planes, WF2Q": two_planes("wf2q"),
        "generated, two planes, DRR": two_planes("drr"),
    }
    base = {"seed": 1, "release": "random", "frame_sizes": "uniform", "workload": {"kind": "periodic"}}
    configs = {
        "periodic, random": base,
        "synchronized, max": {**base, "release": "synchronized", "frame_sizes": "max"},
        "retransmit 4 ms": {**base, "retransmit": True, "retransmit_timeout_ns": 4_000_000},
        "dedup first_copy": {**base, "dedup": {"counters": 1280, "mode": "first_copy"}},
        "dedup hold_until_twin": {**base, "dedup": {"counters": 1280, "mode": "hold_until_twin"}},
        "poisson 0.8": {**base, "workload": {"kind": "poisson", "load": 0.8}},
        "pareto 0.5": {**base,
                       "workload": {"kind": "pareto_bursts", "load": 0.5, "alpha": 1.5, "mean_frames": 4.0}},
        "cbr 1": {**base, "workload": {"kind": "cbr", "load": 1.0}},
    }
    rows = []
    print(f"{'network':<40} {'configuration':<24} {args.short:>6g} s {args.long:>6g} s  ratio "
          "(ns per frame-hop)")
    for name, net in nets.items():
        for cname, config in configs.items():
            short = min(run(net, config, args.short) for _ in range(args.repeat))
            long = min(run(net, config, args.long) for _ in range(args.repeat))
            rows.append({"network": name, "config": cname, "short_ns": short, "long_ns": long,
                         "ratio": long / short})
            flag = "" if long <= 1.3 * short else "  > 1.3"
            print(f"{name:<40} {cname:<24} {short:8.1f} {long:8.1f}  {long / short:5.2f}{flag}", flush=True)
    results = {"short_s": args.short, "long_s": args.long, "runs": rows}
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
