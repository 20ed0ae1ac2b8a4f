"""Packet simulation of an industrial-size single-plane WOPANet import, as users run it: the whole
`rtnetlab simulate` process against the SimPy peer and (with --ns3) the ns-3 peer, each a whole
process too, in the same job, on the same network, workload and duration.

    .venv/bin/python benchmarks/sim_wopanet.py [--durations 1,10,30,100] [--simpy-durations 1,10]
        [--ns3] [--repeat 3]

The network: benchmarks/wopanet_network.py's (265 VLs, 58 end systems, 8 switches, one plane, in
WOPANet XML). The workload: synchronised releases, largest frames (no random draw, so all three
simulate exactly the same frames; the mean and largest latencies are printed to show it). For each
run: the whole process's wall time (and CPU time, user + system), the event loop's (each
simulator reports its own), frame-hops, and ns per frame-hop of each; ratios peer / rtnetlab for
both. rtnetlab's figures are medians of --repeat runs; the peers run once (they are long
enough). Also the fixed cost of a rtnetlab process (a 1 ms run) and of a bare Python start.
Writes benchmarks/sim_wopanet_results.json.

The ns-3 peer is compiled on first use with g++ against Debian's libns3-dev (`make bench-ns3`
installs it); the rtnetlab model is exported for it by benchmarks/peers/ns3_export.py.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable
CLI = str(Path(PY).with_name("rtnetlab"))
WORKLOAD = ["--release", "synchronized", "--sizes", "max"]


def timed(cmd: list[str]) -> tuple[float, str]:
    wall, _, out = timed_cpu(cmd)
    return wall, out


def timed_cpu(cmd: list[str]) -> tuple[float, float, str]:
    """Wall time, CPU time (user + system of the child: on a shared machine the wall time carries
    other processes' load, the CPU time much less) and stdout of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def rtnetlab_run(net: Path, seconds: float, repeat: int) -> dict:
    runs = []
    cpus = []
    for _ in range(repeat):
        cmd = [CLI, "simulate", str(net), "--duration", f"{seconds}s", *WORKLOAD, "--json"]
        wall, cpu, out = timed_cpu(cmd)
        runs.append((wall, json.loads(out)))
        cpus.append(cpu)
    wall = statistics.median(w for w, _ in runs)
    engine = statistics.median(r["stats"]["wall_s"] for _, r in runs)
    report = runs[0][1]
    flows = report["flows"]
    count = sum(f["count"] for f in flows)
    return {
        "process_s": wall,
        "process_s_runs": [w for w, _ in runs],
        "process_cpu_s": statistics.median(cpus),
        "engine_s": engine,
        "frame_hops": report["stats"]["frame_hops"],
        "delivered": count,
        "mean_latency_us": sum(f["mean_us"] * f["count"] for f in flows) / count,
        "max_latency_us": max(f["max_us"] for f in flows),
    }


def peer_run(cmd: list[str]) -> dict:
    wall, cpu, out = timed_cpu(cmd)
    r = json.loads(out)
    return {"process_s": wall, "process_cpu_s": cpu, "engine_s": r["wall_s"],
            **{k: v for k, v in r.items() if k != "wall_s"}}


def build_ns3(out_dir: Path) -> Path:
    exe = out_dir / "ns3_afdx"
    src = HERE / "peers" / "ns3_afdx.cc"
    if exe.exists() and exe.stat().st_mtime > src.stat().st_mtime:
        return exe
    if shutil.which("pkg-config") is None or subprocess.run(
        ["pkg-config", "--exists", "ns3-core"], check=False
    ).returncode:
        sys.exit("the ns-3 peer needs libns3-dev (Debian): run `make bench-ns3`, which installs it")
    modules = ["ns3-core", "ns3-network", "ns3-point-to-point"]
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", *modules],
                           check=True, capture_output=True, text=True).stdout.split()
    subprocess.run(["g++", "-O2", "-std=c++17", "-o", str(exe), str(src), *flags], check=True)
    return exe


def per_hop_ns(r: dict, key: str) -> float:
    return r[key] / r["frame_hops"] * 1e9


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--durations", default="1,10,30,100", help="simulated seconds, rtnetlab (and ns-3)")
    ap.add_argument("--simpy-durations", default="1,10", help="simulated seconds, SimPy peer")
    ap.add_argument("--ns3", action="store_true", help="run the ns-3 peer too")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "sim_wopanet_results.json")
    args = ap.parse_args()
    durations = [float(d) for d in args.durations.split(",")]
    simpy_durations = [float(d) for d in args.simpy_durations.split(",") if d]

    work = Path(tempfile.mkdtemp(prefix="rtnetlab-bench-"))
    net = work / "wopanet-265vl.xml"
    subprocess.run([PY, str(HERE / "wopanet_network.py"), str(net)], check=True, capture_output=True)
    ns3 = None
    if args.ns3:
        ns3 = build_ns3(Path(os.environ.get("NS3_PEER_DIR", work)))
        subprocess.run([PY, str(HERE / "peers" / "ns3_export.py"), str(net), str(work / "net.ns3.txt")],
                       check=True)

    python_start = statistics.median(timed([PY, "-c", "pass"])[0] for _ in range(5))
    fixed = statistics.median(
        timed([CLI, "simulate", str(net), "--duration", "1ms", *WORKLOAD, "--json"])[0] for _ in range(5)
    )
    rows = []
    for s in sorted(set(durations) | set(simpy_durations)):
        ns = round(s * 1e9)
        row = {"simulated_s": s, "rtnetlab": rtnetlab_run(net, s, args.repeat)}
        if s in simpy_durations:
            row["simpy"] = peer_run([PY, str(HERE / "peers" / "simpy_afdx.py"), str(net), "--duration-ns",
                                     str(ns), "--release", "synchronized", "--sizes", "max"])
        if ns3 is not None and s in durations:
            row["ns3"] = peer_run([str(ns3), str(work / "net.ns3.txt"), str(ns), "synchronized", "max"])
        for peer in ("simpy", "ns3"):
            if peer in row:
                row[f"{peer}_over_rtnetlab"] = {
                    "process": row[peer]["process_s"] / row["rtnetlab"]["process_s"],
                    "process_cpu": row[peer]["process_cpu_s"] / row["rtnetlab"]["process_cpu_s"],
                    "engine": per_hop_ns(row[peer], "engine_s") / per_hop_ns(row["rtnetlab"], "engine_s"),
                }
        rows.append(row)
        print(f"{s:>6g} s simulated:", flush=True)
        for name in ("rtnetlab", "simpy", "ns3"):
            if name in row:
                r = row[name]
                print(f"  {name:<9} {r['frame_hops']:>10} frame-hops  process {r['process_s']:8.3f} s "
                      f"(CPU {r['process_cpu_s']:7.3f} s) "
                      f"({per_hop_ns(r, 'process_s'):8.1f} ns/hop)  event loop {r['engine_s']:8.3f} s "
                      f"({per_hop_ns(r, 'engine_s'):8.1f} ns/hop)  latency mean {r['mean_latency_us']:.3f} "
                      f"max {r['max_latency_us']:.3f} us", flush=True)
        for peer in ("simpy", "ns3"):
            if f"{peer}_over_rtnetlab" in row:
                q = row[f"{peer}_over_rtnetlab"]
                print(f"  {peer} / rtnetlab: process {q['process']:.1f}x (CPU time {q['process_cpu']:.1f}x), "
                      f"per frame-hop in the event loop {q['engine']:.1f}x", flush=True)
    results = {
        "what": "whole-process and event-loop time of `rtnetlab simulate` and its peers on a 265-VL "
        "single-plane WOPANet import, synchronised releases, largest frames",
        "machine": {"python": sys.version.split()[0], "cpus": os.cpu_count()},
        "python_start_s": python_start,
        "rtnetlab_1ms_process_s": fixed,
        "runs": rows,
    }
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"python start {python_start:.3f} s, rtnetlab simulate of 1 ms {fixed:.3f} s (fixed cost)")
    print(f"wrote {args.out}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
