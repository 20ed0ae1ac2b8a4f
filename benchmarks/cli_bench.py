"""The `rtnetlab` command as a user runs it: whole processes, wall and CPU time, medians of N runs.

    .venv/bin/python benchmarks/cli_bench.py [--runs 11] [--only help,analyze,...]

Cases: a bare Python start, Python with the compiled engine imported, `rtnetlab --help`,
`rtnetlab analyze --method tfa` of a generated 5000-VL YAML file (stdout piped, as a script reads
it), `rtnetlab simulate` of benchmarks/wopanet_network.py's 265-VL single-plane network for about
2 M frame-hops (30 s simulated, synchronised releases, largest frames, --json) and for 1 ms (the
fixed cost of a simulation). CPU time (user + system, of the child) is printed next to the wall
time: on a host shared with other work the wall time carries other processes' load, the CPU time
much less. The children run with Python's default bytecode cache (PYTHONDONTWRITEBYTECODE is
removed from their environment; the warm-up run writes the cache), as an installed command runs.
Writes benchmarks/cli_results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable
CLI = str(Path(PY).with_name("rtnetlab"))
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
WORKLOAD = ["--release", "synchronized", "--sizes", "max", "--json"]


def run(cmd: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--out", type=Path, default=HERE / "cli_results.json")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rtnetlab-cli-bench-"))
    net = work / "wopanet-265vl.xml"
    subprocess.run([PY, str(HERE / "wopanet_network.py"), str(net)], check=True, capture_output=True)
    big = work / "afdx-5000vl.yaml"
    subprocess.run([CLI, "generate", "afdx", "--vls", "5000", "--switches", "16", "--seed", "1",
                    "-o", str(big)], check=True, capture_output=True)
    cases = {
        "python": [PY, "-c", "pass"],
        "python+engine": [PY, "-c", "import rtnetlab._core"],
        "help": [CLI, "--help"],
        "analyze-tfa-5000vl": [CLI, "analyze", str(big), "--method", "tfa"],
        "analyze-tfa-5000vl-json": [CLI, "analyze", str(big), "--method", "tfa", "--json"],
        "simulate-1ms": [CLI, "simulate", str(net), "--duration", "1ms", *WORKLOAD],
        "simulate-2M-hops": [CLI, "simulate", str(net), "--duration", "27s", *WORKLOAD],
    }
    only = [c for c in args.only.split(",") if c]
    results = {}
    for name, cmd in cases.items():
        if only and name not in only:
            continue
        run(cmd)  # warm the file cache
        walls, cpus = zip(*(run(cmd) for _ in range(args.runs)), strict=True)
        results[name] = {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus),
                         "wall_min_s": min(walls), "cpu_min_s": min(cpus), "runs": args.runs}
        r = results[name]
        print(f"{name:<26} wall {r['wall_s']:6.3f} s (min {r['wall_min_s']:6.3f})   "
              f"cpu {r['cpu_s']:6.3f} s (min {r['cpu_min_s']:6.3f})", flush=True)
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} cpus")
    doc = {"what": "whole `rtnetlab` processes, medians", "cpus": os.cpu_count(), "load_average": load,
           "python": sys.version.split()[0], "cases": results}
    args.out.write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
