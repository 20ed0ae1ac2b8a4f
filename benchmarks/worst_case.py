"""How close the worst case found comes to the bound: the figures of docs/SIMULATION.md.

    .venv/bin/python benchmarks/worst_case.py [--budget 60s] [--sample-budget 5s] [--workers 2]

For every WOPANet sample in ../shared/oracles/wopanet and for the 265-VL single-plane network of
benchmarks/wopanet_network.py, runs `rtnetlab worst-case` as a user would (whole processes, a
budget in wall-clock time on `--workers` cores) and prints the mean, least and largest achieved /
best bound. Beside it, in the same run, the peer the search replaces: one synchronised simulation
with the largest frames (`simulate --release synchronized --sizes max`), over the longest BAG.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("rtnetlab")


def rtnetlab(*args: str | Path) -> dict:
    r = subprocess.run([str(CLI), *map(str, args), "--json"], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        sys.exit(f"rtnetlab {' '.join(map(str, args))}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def synchronized_ratio(path: Path, tmp: str) -> float:
    """The peer, on the model the bound is for: cut-through switches made store-and-forward."""
    import yaml

    copy = Path(tmp) / f"{path.stem}-saf.yaml"
    subprocess.run([str(CLI), "convert", str(path), str(copy)], check=True, capture_output=True)
    spec = yaml.safe_load(copy.read_text())
    spec.setdefault("defaults", {})["switching"] = "store_and_forward"
    for sw in spec.get("switches", []):
        sw.pop("switching", None)
    copy.write_text(yaml.safe_dump(spec, sort_keys=False))
    rep = rtnetlab("simulate", copy, "--release", "synchronized", "--sizes", "max", "--duration", "260ms")
    ratios = [f["max_over_bound"] for f in rep["flows"] if f.get("max_over_bound") is not None]
    return statistics.mean(ratios) if ratios else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", default="60s", help="the 265-VL network's budget")
    ap.add_argument("--sample-budget", default="5s", help="each WOPANet sample's budget")
    ap.add_argument("--workers", default="2")
    ap.add_argument("--seed", default="1")
    args = ap.parse_args()
    oracles = REPO.parent / "shared/oracles/wopanet"
    samples = sorted(p for p in oracles.glob("*.xml") if not p.stem.endswith("_res"))
    print(f"{'network':<14} {'rows':>5} {'budget':>7} {'wall s':>7} {'mean':>6} {'least':>6} {'largest':>7} "
          f"{'exact':>6} {'sync. sim.':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "afdx265.xml"
        subprocess.run([sys.executable, str(REPO / "benchmarks/wopanet_network.py"), str(big)], check=True,
                       capture_output=True)
        for path, budget in [*((s, args.sample_budget) for s in samples), (big, args.budget)]:
            start = time.perf_counter()
            doc = rtnetlab("worst-case", path, "--budget", budget, "--workers", args.workers,
                           "--seed", args.seed)
            wall = time.perf_counter() - start
            exact = sum(r["exact_for_grid"] for r in doc["rows"])
            name = "265-VL" if path == big else path.stem
            print(f"{name:<14} {len(doc['rows']):>5} {budget:>7} {wall:>7.1f} {doc['mean_ratio']:>6.3f} "
                  f"{doc['min_ratio']:>6.3f} {doc['max_ratio']:>7.3f} {exact:>6} "
                  f"{synchronized_ratio(path, tmp):>10.3f}"
                  + (f"  {len(doc['violations'])} VIOLATION(S)" if doc["violations"] else ""))


if __name__ == "__main__":
    main()
