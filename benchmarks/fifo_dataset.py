"""rtnetlab's bounds on published random FIFO feed-forward networks, beside the bounds published
for them (the RTNS 2022 data set, tests/data/ff_fifo_rtns2022/README.md): per method, per flow,
ours / the best published bound (the least of LUDB-FF, LB-FF and DNC's SFA under FIFO), and
ours / DNC's own SFA. Each network is analysed as a user runs it (`rtnetlab analyze FILE
--method M --json`), with the wall time of each process; and fifo-lp once more in this process,
with the time of the analysis, the time inside HiGHS and the number of programs solved.

    .venv/bin/python benchmarks/fifo_dataset.py [--methods tfa,sfa,pmoo,fifo-lp,best] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "ff_fifo_rtns2022"
sys.path.insert(0, str(DATA))
from published import bounds as published  # noqa: E402

CLI = Path(sys.executable).parent / "rtnetlab"


def network_file(name: str) -> Path:
    return next(p for p in (DATA / f"{name}.java", DATA / f"{name}.yaml") if p.exists())


def spread(xs: list[float]) -> dict[str, float]:
    return {"min": min(xs), "mean": statistics.fmean(xs), "max": max(xs)}


def fifo_lp_times(path: Path, repeat: int = 3) -> dict[str, float]:
    """fifo-lp on every flow of the network at `path`, in this process: the median time of one
    analysis, the time inside HiGHS and the programs solved in it (HiGHS imported and warm)."""
    from rtnetlab import model
    from rtnetlab.analysis import lp

    net, solve = model.load_file(path), lp.maximise
    net.analyze("fifo-lp")
    runs = []
    for _ in range(repeat):
        spent, programs = [0.0], [0]

        def timed(objective: list[float], rows: list, spent: list = spent,
                  programs: list = programs) -> float:
            start = time.perf_counter()
            try:
                return solve(objective, rows)
            finally:
                spent[0] += time.perf_counter() - start
                programs[0] += 1

        lp.maximise = timed
        try:
            start = time.perf_counter()
            net.analyze("fifo-lp")
            runs.append((time.perf_counter() - start, spent[0], programs[0]))
        finally:
            lp.maximise = solve
    total, highs, programs = sorted(runs)[len(runs) // 2]
    return {"analysis_s": total, "highs_s": highs, "programs": programs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--methods", default="tfa,sfa,pmoo,fifo-lp,best")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "fifo_dataset.json")
    args = ap.parse_args()
    result: dict = {"networks": {}}
    for net, flows in sorted(published().items()):
        rows: dict = {}
        for method in args.methods.split(","):
            t0 = time.perf_counter()
            res = subprocess.run([str(CLI), "analyze", str(network_file(net)), "--method", method, "--json"],
                                 capture_output=True, text=True)
            wall = time.perf_counter() - t0
            if res.returncode:  # with --json the error is a JSON document on stdout
                errors = json.loads(res.stdout)["errors"] if not res.stderr.strip() else []
                refusal = res.stderr.strip() or "; ".join(e["message"] for e in errors)
                rows[method] = {"refused": refusal}
                continue
            ours = {f["flow"]: (f["delay_us"] if f["delay_us"] is not None else float("inf")) / 1e6
                    for f in json.loads(res.stdout)["flows"]}
            best_pub = [ours[f] / min(v.values()) for f, v in flows.items()]
            sfa = [ours[f] / v["SFA_FIFO"] for f, v in flows.items()]
            rows[method] = {
                "over_best_published": spread(best_pub),
                "within_5_percent": sum(r <= 1.05 for r in best_pub),
                "below_best_published": sum(r < 1 - 1e-9 for r in best_pub),
                "over_dnc_sfa_fifo": spread(sfa),
                "wall_s": wall,
            }
        if "fifo-lp" in rows and "refused" not in rows["fifo-lp"]:
            rows["fifo-lp"]["in_process"] = fifo_lp_times(network_file(net))
        result["networks"][net] = {"flows": len(flows), "methods": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{'network':12} {'flows':>5} {'method':8} {'ours/best published (min mean max)':>36} "
          f"{'<=5%':>5} {'ours/DNC SFA (min max)':>24} {'wall s':>7}")
    for net, r in result["networks"].items():
        for m, row in r["methods"].items():
            if "refused" in row:
                print(f"{net:12} {r['flows']:5} {m:8} refused: {row['refused'][:70]}")
                continue
            b, s = row["over_best_published"], row["over_dnc_sfa_fifo"]
            print(f"{net:12} {r['flows']:5} {m:8} {b['min']:12.3f} {b['mean']:11.3f} {b['max']:11.3f} "
                  f"{row['within_5_percent']:5} {s['min']:12.3f} {s['max']:11.3f} {row['wall_s']:7.2f}")
    for net, r in result["networks"].items():
        t = r["methods"].get("fifo-lp", {}).get("in_process")
        if t:
            print(f"{net:12} fifo-lp in process: {t['analysis_s'] * 1e3:7.1f} ms, "
                  f"HiGHS {t['highs_s'] * 1e3:7.1f} ms, {t['programs']} programs")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
