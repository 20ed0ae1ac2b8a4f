"""The speed guard: the simulator's frame-hops and the analyses' work measured against a recorded
baseline, reporting any drop of more than 20 %.

    .venv/bin/python benchmarks/guard.py            # compare with benchmarks/baseline.json
    .venv/bin/python benchmarks/guard.py --record   # measure and write the baseline

`make bench-guard` runs the first. On a shared machine wall times move by ±20 % from one minute to
the next (other builds share the cores and the caches), so the verdict is taken on instruction
counts, which the machine's load does not move: the engine's own benchmarks (`cargo bench
-p rtnetlab-core --bench simulation` and `--bench analysis`) run under callgrind, and

* for the simulator, the instructions per frame-hop inside `Simulator::run_until` (frame-hops per
  second fall as they rise: a drop of 20 % in frame-hops/s is 25 % more instructions);
* for an analysis, the instructions of the whole benchmark process running it once, less those
  of the same process running none (generating and validating the network), counting every
  thread the analysis starts.

Each case's CPU time (the engine's own figure, least of --runs) is printed beside it for reading,
with the load average, but decides nothing. The baseline records the machine it was taken on
(processor, cores, rustc, valgrind, load average, commit): instruction counts move with the
compiler, so a new toolchain needs a new baseline (`--record`), said in its commit.

Exit status: 0 when no case dropped by more than --threshold, 1 otherwise, 2 when the guard
cannot run (valgrind missing, a case unknown to the baseline).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BASELINE = HERE / "baseline.json"

#: name -> (benchmark, environment, kind): what each case runs.
SIM_CASES = {
    # The generated 5000-VL, 16-switch, two-plane AFDX network, random phases, uniform sizes.
    "sim 5000 VLs, two planes": {"VLS": "5000", "SIM_S": "0.1"},
    # The A380-like network of benchmarks/sim_wopanet.py: 265 VLs, 58 end systems, 8 switches, one
    # plane, synchronised releases of largest frames.
    "sim 265 VLs, WOPANet-like": {"VLS": "265", "SWITCHES": "8", "PLANES": "1", "END_SYSTEMS": "58",
                                  "SYNC": "1", "SIM_S": "2"},
}
ANALYSIS_CASES = {
    "analysis best, 5000 VLs": {"METHOD": "best"},
    "analysis tfa, 5000 VLs": {"METHOD": "tfa"},
}
RUN_UNTIL = "rtnetlab_core::sim::engine::Simulator::run_until"


def build_benches() -> dict[str, str]:
    """The two engine benchmarks built (bench profile: optimised, with symbols); their paths."""
    out = subprocess.run(
        ["cargo", "bench", "-p", "rtnetlab-core", "--bench", "simulation", "--bench", "analysis",
         "--no-run", "--message-format=json", "--quiet"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    paths = {}
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
            paths[msg["target"]["name"]] = msg["executable"]
    return paths


def callgrind(exe: str, env: dict[str, str], toggle: str | None = None) -> tuple[int, str]:
    """(instructions counted, the program's stdout) of `exe` under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        if toggle:
            cmd.append(f"--toggle-collect={toggle}")
        r = subprocess.run([*cmd, exe], env={**os.environ, **env}, check=True, capture_output=True,
                           text=True)
        m = re.search(r"Collected\s*:\s*(\d+)", r.stderr)
        if not m:
            raise RuntimeError(f"callgrind gave no count:\n{r.stderr[-2000:]}")
        return int(m.group(1)), r.stdout


def frame_hops(stdout: str) -> int:
    m = re.search(r"(\d+) frame-hops", stdout)
    if not m:
        raise RuntimeError(f"no frame-hops in the benchmark's output:\n{stdout}")
    return int(m.group(1))


def sim_cpu_ns(exe: str, env: dict[str, str], runs: int) -> float:
    """The benchmark's own least CPU time per frame-hop over `runs` (for reading only)."""
    r = subprocess.run([exe], env={**os.environ, **env, "RUNS": str(runs)}, check=True,
                       capture_output=True, text=True)
    m = re.search(r"([\d.]+) ns of CPU per frame-hop", r.stdout)
    return float(m.group(1)) if m else float("nan")


def measure(runs: int) -> dict:
    paths = build_benches()
    cases = {}
    for name, env in SIM_CASES.items():
        env = {**env, "RUNS": "1"}
        instr, stdout = callgrind(paths["simulation"], env, toggle=RUN_UNTIL)
        hops = frame_hops(stdout)
        cases[name] = {"metric": "instructions per frame-hop in run_until", "value": instr / hops,
                       "frame_hops": hops, "cpu_ns_per_frame_hop": sim_cpu_ns(paths["simulation"], env, runs),
                       "env": env}
        print(f"  {name}: {instr / hops:.1f} instructions per frame-hop", flush=True)
    empty, _ = callgrind(paths["analysis"], {"METHOD": "none", "REPS": "1", "JSON": "0"})
    for name, env in ANALYSIS_CASES.items():
        env = {**env, "REPS": "1", "JSON": "0"}
        instr, _ = callgrind(paths["analysis"], env)
        cases[name] = {"metric": "instructions of METHOD's run (less generating and validating)",
                       "value": float(instr - empty), "env": env}
        print(f"  {name}: {(instr - empty) / 1e6:.1f} M instructions", flush=True)
    return cases


def conditions() -> dict:
    def version(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
        except OSError:
            return "missing"

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    return {"processor": cpu, "cores": os.cpu_count(), "rustc": version(["rustc", "--version"]),
            "valgrind": version(["valgrind", "--version"]), "load_average": os.getloadavg()[0],
            "commit": commit}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--record", action="store_true", help="measure and write the baseline")
    ap.add_argument("--baseline", type=Path, default=BASELINE)
    ap.add_argument("--threshold", type=float, default=0.20, help="largest drop allowed (0.20: 20 %%)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each simulation for its CPU time")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("guard: valgrind is needed (Debian package valgrind)", file=sys.stderr)
        return 2
    base = None
    if not args.record:
        try:
            base = json.loads(args.baseline.read_text())
        except FileNotFoundError:
            print(f"guard: {args.baseline}: no baseline; record one with --record", file=sys.stderr)
            return 2
    now = conditions()
    print(f"measuring (load average {now['load_average']:.2f}) ...", flush=True)
    cases = measure(args.runs)
    if args.record:
        args.baseline.write_text(json.dumps({"conditions": now, "cases": cases}, indent=2) + "\n")
        print(f"wrote {args.baseline}")
        return 0
    assert base is not None
    print(f"baseline: {base['conditions']['commit']}, {base['conditions']['rustc']}, load average "
          f"{base['conditions']['load_average']:.2f}; now: {now['commit']}, load average "
          f"{now['load_average']:.2f}")
    if base["conditions"]["rustc"] != now["rustc"]:
        print(f"warning: the baseline was taken with {base['conditions']['rustc']}: instruction counts "
              "move with the compiler; record a new baseline", file=sys.stderr)
    failed = []
    for name, case in cases.items():
        ref = base["cases"].get(name)
        if ref is None:
            print(f"guard: {name}: not in the baseline; record one with --record", file=sys.stderr)
            return 2
        # Work per unit up by a factor f is a speed down to 1/f: the drop is 1 - ref/now.
        drop = 1 - ref["value"] / case["value"]
        verdict = "DROP" if drop > args.threshold else "ok"
        if drop > args.threshold:
            failed.append(name)
        cpu = case.get("cpu_ns_per_frame_hop")
        extra = "" if cpu is None else (f"; CPU {cpu:.1f} ns per frame-hop, was "
                                        f"{ref.get('cpu_ns_per_frame_hop', float('nan')):.1f} (for reading)")
        print(f"{verdict:>4}  {name}: {case['metric']} {ref['value']:.6g} -> {case['value']:.6g}, "
              f"speed {-drop:+.1%}{extra}")
    if failed:
        print(f"guard: {len(failed)} case(s) slower by more than {args.threshold:.0%}: {', '.join(failed)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
