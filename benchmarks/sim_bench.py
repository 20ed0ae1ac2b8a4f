"""Packet-simulator speed: the Rust engine against a SimPy model of the same network, same process.

    .venv/bin/python benchmarks/sim_bench.py [--vls 5000] [--rust-s 0.5] [--simpy-s 0.25]

Both simulate a generated AFDX network (FIFO everywhere, two planes) with random VL phases and
uniform frame sizes; the figure of merit is frame-hops per wall-clock second (a frame-hop is one
frame leaving one egress port; both count it when the frame starts leaving). The SimPy peer is much
slower, so it simulates a shorter time. Rust timings are medians of several runs; the SimPy run is
timed once (it is long enough not to need more). Writes benchmarks/sim_results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import simpy  # noqa: E402

from peers.simpy_afdx import SimpyAfdx  # noqa: E402
from rtnetlab import _core, model  # noqa: E402

CONFIG = {"seed": 1, "release": "random", "frame_sizes": "uniform", "workload": {"kind": "periodic"}}


def build(vls: int, switches: int, planes: int):
    return model.load_text(_core.generate_afdx(vls, switches, 1, planes, 0))


def mean_latency_us(flows: list[dict], key: str, scale: float) -> float:
    """Latency averaged over every recorded frame copy (a sanity check that both do the same work)."""
    total = sum(f["count"] for f in flows)
    return sum(f[key] * f["count"] for f in flows) / total * scale if total else 0.0


def rust_run(net, duration_ns: int, repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        sim = net.handle.simulation(json.dumps({**CONFIG, "duration_ns": duration_ns}))
        t0 = time.perf_counter()
        sim.run_until(duration_ns)
        wall = time.perf_counter() - t0
        report = json.loads(sim.report_json())
        runs.append((wall, report))
    walls = [w for w, _ in runs]
    wall = statistics.median(walls)
    report = runs[0][1]
    hops = report["stats"]["frame_hops"]
    return {
        "simulated_s": duration_ns / 1e9,
        "wall_s_runs": walls,
        "wall_s": wall,
        "frame_hops": hops,
        "events": report["stats"]["events"],
        "frame_hops_per_s": hops / wall,
        "frame_hops_per_simulated_s": hops / (duration_ns / 1e9),
        "mean_latency_us": mean_latency_us(report["flows"], "mean_us", 1.0),
    }


def simpy_run(net, duration_ns: int) -> dict:
    t0 = time.perf_counter()
    peer = SimpyAfdx(net.resolved(), seed=CONFIG["seed"], release=CONFIG["release"],
                     frame_sizes=CONFIG["frame_sizes"])
    setup = time.perf_counter() - t0
    peer.run(duration_ns)
    report = peer.report()
    hops = report["stats"]["frame_hops"]
    return {
        "simulated_s": duration_ns / 1e9,
        "setup_s": setup,
        "wall_s": peer.wall_s,
        "frame_hops": hops,
        "frame_hops_per_s": hops / peer.wall_s,
        "frame_hops_per_simulated_s": hops / (duration_ns / 1e9),
        "mean_latency_us": mean_latency_us(report["flows"], "mean_ns", 1e-3),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vls", type=int, default=5000)
    ap.add_argument("--small-vls", type=int, default=500)
    ap.add_argument("--switches", type=int, default=16)
    ap.add_argument("--planes", type=int, default=2)
    ap.add_argument("--rust-s", type=float, default=0.5, help="simulated seconds, Rust, large network")
    ap.add_argument("--small-rust-s", type=float, default=5.0, help="simulated seconds, Rust, small network")
    ap.add_argument("--simpy-s", type=float, default=0.25, help="simulated seconds, SimPy peer")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "sim_results.json")
    args = ap.parse_args()

    net = build(args.vls, args.switches, args.planes)
    small = build(args.small_vls, args.switches, args.planes)
    label = f"{args.vls}-VL, {args.switches}-switch, {args.planes}-plane generated AFDX network"
    small_label = f"{args.small_vls}-VL, {args.switches}-switch, {args.planes}-plane generated AFDX network"

    rust = rust_run(net, round(args.rust_s * 1e9), args.repeat)
    rust_small = rust_run(small, round(args.small_rust_s * 1e9), args.repeat)
    peer = simpy_run(net, round(args.simpy_s * 1e9))
    ratio = rust["frame_hops_per_s"] / peer["frame_hops_per_s"]

    results = {
        "what": "packet simulation speed in frame-hops per wall-clock second (random VL phases, uniform "
        "frame sizes, periodic VLs, FIFO ports); Rust wall times are medians of "
        f"{args.repeat} runs",
        "machine": {"python": platform.python_version(), "simpy": simpy.__version__,
                    "cpus": os.cpu_count()},
        "rust": {"network": label, **rust},
        "rust_small": {"network": small_label, **rust_small},
        "simpy": {"network": label, **peer},
        "ratio_rust_over_simpy": ratio,
    }
    args.out.write_text(json.dumps(results, indent=2) + "\n")

    rows = [
        (f"rust {args.vls} VLs", rust),
        (f"rust {args.small_vls} VLs", rust_small),
        (f"simpy {args.vls} VLs", peer),
    ]
    print(f"{'simulator':<18} {'sim s':>7} {'wall s':>8} {'frame-hops':>11} {'hops/s':>12} "
          f"{'hops/sim-s':>11} {'mean lat us':>11}")
    for name, r in rows:
        print(f"{name:<18} {r['simulated_s']:>7.3f} {r['wall_s']:>8.3f} {r['frame_hops']:>11} "
              f"{r['frame_hops_per_s']:>12,.0f} {r['frame_hops_per_simulated_s']:>11,.0f} "
              f"{r['mean_latency_us']:>11.2f}")
    print(f"Rust / SimPy (frame-hops per second, {args.vls} VLs): {ratio:.1f}x")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
