"""`best` and `fifo-lp` on RTNS-2022-style random FIFO feed-forward networks of 60 to 450 flows,
as a user runs them: whole `rtnetlab analyze --json` processes, wall and CPU time (children
included, since HiGHS may use both cores), and per flow the ratio of `best`'s bound to `fifo-lp`'s
at its default effort (the engine's tight reference at these sizes; exhaustive effort is out of
reach there). The goal of docs/ANALYSIS.md, "fifo-lp in best": every flow within 5 % of the
tightest bound, in at most 10 s on 2 cores.

The networks come from benchmarks/nc_families.py's `rtns_like` generator (servers in a random
order, each with turns to 1-3 later ones; flows as random walks of 1-7 servers; every flow (1, 1);
each server's rate its load over a utilisation in [0.5, 0.98)), with half as many servers as
flows.

    .venv/bin/python benchmarks/nc_scale.py [--flows 60,150,300,450] [--seed 3] [--no-lp]
Writes benchmarks/results/nc_scale.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from nc_families import document, rtns_like  # noqa: E402

CLI = [sys.executable, "-m", "rtnetlab.cli"]


def run(path: Path, method: str) -> tuple[dict, float]:
    """(report, wall s) of one `analyze` process."""
    start = time.perf_counter()
    args = [*CLI, "analyze", str(path), "-m", method, "--json"]
    proc = subprocess.run(args, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{method} on {path}: {proc.stderr.strip()}")
    return json.loads(proc.stdout), wall


def timed(path: Path, method: str) -> tuple[dict, float, float]:
    """`run` with its CPU time, read from the children's resource counters."""
    before = os.times()
    report, wall = run(path, method)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return report, wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", default="60,150,300,450")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--per-size", type=int, default=1)
    ap.add_argument("--no-lp", action="store_true", help="only `best` (no fifo-lp reference)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "nc_scale.json")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for flows in [int(x) for x in args.flows.split(",")]:
            for i in range(args.per_size):
                servers, fl = rtns_like(rng, max(4, flows // 2), flows)
                path = Path(tmp) / f"ff{flows}_{i}.json"
                path.write_text(json.dumps(document(servers, fl, None)))
                best, t_best, c_best = timed(path, "best")
                row = {"flows": flows, "i": i, "best_wall_s": t_best, "best_cpu_s": c_best,
                       "notes": best.get("notes", [])}
                line = f"{flows} flows #{i}: best {t_best:.2f} s wall, {c_best:.2f} s CPU"
                if not args.no_lp:
                    lp, t_lp, c_lp = timed(path, "fifo-lp")
                    ref = {(r["flow"], r.get("destination")): r["delay_us"] for r in lp["flows"]}
                    ratios = [r["delay_us"] / ref[(r["flow"], r.get("destination"))] for r in best["flows"]]
                    within = sum(x <= 1.05 for x in ratios)
                    mean = statistics.mean(ratios)
                    row |= {"fifo_lp_wall_s": t_lp, "fifo_lp_cpu_s": c_lp, "ratio_mean": mean,
                            "ratio_max": max(ratios), "within_5pc": within, "rows": len(ratios)}
                    line += (f"; fifo-lp {t_lp:.2f} s wall, {c_lp:.2f} s CPU; best/fifo-lp mean {mean:.3f} "
                             f"max {max(ratios):.3f}, {within}/{len(ratios)} within 5 %")
                print(line, flush=True)
                rows.append(row)
                args.out.parent.mkdir(exist_ok=True)
                args.out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
