"""Cost per frame-hop against the simulated duration: the event loop's time per frame-hop at 1, 10,
30 and 100 s simulated, on single-plane and two-plane 265-VL networks (a WOPANet import, and the
generator's network with FIFO, static-priority, WF2Q and DRR ports), with every workload, both
release patterns, retransmission and both deduplication modes.

    .venv/bin/python benchmarks/sim_flatness.py [--durations 1,10,30,100]

`ratio` is the longest duration's figure over the shortest's, `spread` the largest over the least.

Each run goes through the Python front's library call: the CPU time of the thread running the
engine's `run_until` per frame-hop (the wall time, `stats.wall_s`, carries the machine's other
work; the CPU time much less); each figure is the least of --repeat runs.
Writes benchmarks/sim_flatness_results.json. The same property, in deterministic work units
instead of time, is a test (`work_per_frame_hop_is_flat_in_duration`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
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
    cpu = time.thread_time()
    sim.run_until(ns)
    cpu = time.thread_time() - cpu
    sim.finish()
    stats = json.loads(sim.report_json())["stats"]
    return cpu / stats["frame_hops"] * 1e9


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--durations", default="1,10,30,100", help="simulated seconds, shortest first")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "sim_flatness_results.json")
    args = ap.parse_args()
    durations = [float(d) for d in args.durations.split(",")]
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
    head = " ".join(f"{d:>6g} s" for d in durations)
    print(f"{'network':<40} {'configuration':<24} {head}  ratio spread (CPU ns per frame-hop)")
    for name, net in nets.items():
        for cname, config in configs.items():
            ns = [min(run(net, config, d) for _ in range(args.repeat)) for d in durations]
            ratio, spread = ns[-1] / ns[0], max(ns) / min(ns)
            rows.append({"network": name, "config": cname, "durations_s": durations, "ns": ns,
                         "ratio": ratio, "spread": spread})
            flag = "" if spread <= 1.3 else "  > 1.3"
            figures = " ".join(f"{x:8.1f}" for x in ns)
            print(f"{name:<40} {cname:<24} {figures}  {ratio:5.2f} {spread:5.2f}{flag}", flush=True)
    results = {"durations_s": durations, "runs": rows}
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
