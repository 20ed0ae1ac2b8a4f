"""The `rtnetlab` command as a user runs it: whole processes, wall and CPU time, medians of N runs.

    .venv/bin/python benchmarks/cli_bench.py [--runs 11] [--only help,analyze,...] [--peer CLI]

Cases: a bare Python start, Python with the compiled engine imported, `rtnetlab --help`,
`rtnetlab analyze --method tfa` of a generated 5000-VL YAML file (stdout piped, as a script reads
it; its tables, and with --json the whole report), `rtnetlab validate` of that file,
`rtnetlab simulate` of benchmarks/wopanet_network.py's 265-VL single-plane network for about
2 M frame-hops (30 s simulated, synchronised releases, largest frames, --json) and for 1 ms (the
fixed cost of a simulation). CPU time (user + system, of the child) is printed next to the wall
time: on a host shared with other work the wall time carries other processes' load, the CPU time
much less. The children run with Python's default bytecode cache (PYTHONDONTWRITEBYTECODE is
removed from their environment; the warm-up run writes the cache), as an installed command runs.
With --peer CLI (another build's `rtnetlab`, e.g. main's), every `rtnetlab` case runs with both
commands, alternately run by run, and the ratio of the CPU medians is printed: the figures of a
change, measured in the same run under the same load. Writes benchmarks/cli_results.json.
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
    ap.add_argument("--peer", default="", help="another `rtnetlab` command to measure beside this one")
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
        "validate-5000vl": [CLI, "validate", str(big)],
        "simulate-1ms": [CLI, "simulate", str(net), "--duration", "1ms", *WORKLOAD],
        "simulate-2M-hops": [CLI, "simulate", str(net), "--duration", "27s", *WORKLOAD],
    }
    only = [c for c in args.only.split(",") if c]
    results = {}
    for name, cmd in cases.items():
        if only and name not in only:
            continue
        variants = {name: cmd}
        if args.peer and cmd[0] == CLI:
            variants[f"{name} (peer)"] = [args.peer, *cmd[1:]]
        for c in variants.values():
            run(c)  # warm the file cache
        times: dict[str, list[tuple[float, float]]] = {v: [] for v in variants}
        for _ in range(args.runs):
            for v, c in variants.items():
                times[v].append(run(c))
        for v in variants:
            walls, cpus = zip(*times[v], strict=True)
            results[v] = {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus),
                          "wall_min_s": min(walls), "cpu_min_s": min(cpus), "runs": args.runs}
            r = results[v]
            print(f"{v:<33} wall {r['wall_s']:6.3f} s (min {r['wall_min_s']:6.3f})   "
                  f"cpu {r['cpu_s']:6.3f} s (min {r['cpu_min_s']:6.3f})", flush=True)
        if len(variants) == 2:
            ratio = results[name]["cpu_s"] / results[f"{name} (peer)"]["cpu_s"]
            results[name]["cpu_ratio_to_peer"] = ratio
            print(f"{'':<33} cpu this / peer {ratio:.2f}", flush=True)
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} cpus")
    doc = {"what": "whole `rtnetlab` processes, medians", "cpus": os.cpu_count(), "load_average": load,
           "peer": args.peer or None,
           "python": sys.version.split()[0], "cases": results}
    args.out.write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
