"""Time of `fifo-lp` (the engine builds each flow's linear program, HiGHS solves it) beside its
peer measured in the same run, SFA on the same network, on DEBORAH-style source trees of n FIFO
servers (rates 8n, 8(n-1), ..., 8; latency 1; the tagged flow over all of them, one flow leaving
after each server; every flow (5, 4): 50 % load everywhere; n = 16 is source16-50), and on
interleaved tandems of n servers (rates 8(n-k)+8, latency 1; the tagged flow over all of them,
cross flow c_k joining at server k and leaving after server k+1: every cross flow enters the
tagged flow's path in the middle, the general case). Reported: the
tagged flow's bounds (SFA, PMOO, fifo-lp), the time of one analysis of every flow by each method,
the ratio fifo-lp / SFA, and the share of fifo-lp's time spent inside HiGHS (the rest is the
engine: the programs, and the SFA run whose backlogs fifo-lp reports).

Run: .venv/bin/python benchmarks/fifo_lp.py [--sizes 4 8 12 16] [--repeat 5]
Writes benchmarks/results/fifo_lp.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from rtnetlab import model
from rtnetlab.analysis import lp


def source_tree(n: int) -> dict:
    servers = [{"name": f"n{k}", "rate": 8 * (n - k), "latency": 1} for k in range(n)]
    flows = [{"name": "t", "burst": 5, "rate": 4, "path": [s["name"] for s in servers]}]
    flows += [{"name": f"c{k}", "burst": 5, "rate": 4, "path": [f"n{j}" for j in range(k)]}
              for k in range(1, n)]
    return {"name": f"source{n}", "server_graph": {"servers": servers, "flows": flows}}


def interleaved(n: int) -> dict:
    servers = [{"name": f"n{k}", "rate": 8 * (n - k) + 8, "latency": 1} for k in range(n)]
    flows = [{"name": "t", "burst": 5, "rate": 4, "path": [s["name"] for s in servers]}]
    flows += [{"name": f"c{k}", "burst": 5, "rate": 4, "path": [f"n{k}", f"n{k + 1}"]}
              for k in range(n - 1)]
    return {"name": f"interleaved{n}", "server_graph": {"servers": servers, "flows": flows}}


FAMILIES = {"source_tree": source_tree, "interleaved": interleaved}


def timed(net: model.Network, method: str, repeat: int) -> tuple[float, float, float]:
    """(median seconds of one analysis, the tagged flow's bound, total seconds)."""
    times, bound = [], 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        report = net.analyze(method)
        times.append(time.perf_counter() - start)
        bound = next(r["delay_us"] for r in report["flows"] if r["flow"] == "t") / 1e6
    return statistics.median(times), bound, sum(times)


lp_maximise = lp.maximise


def timer(solve: Callable[..., float], spent: list[float]) -> Callable[..., float]:
    """`solve`, adding the time it takes to `spent[0]`."""

    def timed_solve(objective: list[float], rows: list) -> float:
        start = time.perf_counter()
        try:
            return solve(objective, rows)
        finally:
            spent[0] += time.perf_counter() - start

    return timed_solve


def measure(family: str, n: int, net: model.Network, repeat: int) -> dict:
    sfa_t, sfa_b, _ = timed(net, "sfa", repeat)
    _, pmoo_b, _ = timed(net, "pmoo", 1)
    timed(net, "fifo-lp", 1)  # HiGHS imported and warm
    # HiGHS's own share: the solver wrapped in a timer for these runs.
    spent = [0.0]
    lp.maximise = timer(lp_maximise, spent)
    try:
        lp_t, lp_b, lp_total = timed(net, "fifo-lp", repeat)
    finally:
        lp.maximise = lp_maximise
    r = {
        "family": family, "servers": n, "flows": n, "sfa": sfa_b, "pmoo": pmoo_b, "fifo_lp": lp_b,
        "sfa_s": sfa_t, "fifo_lp_s": lp_t, "ratio_fifo_lp_over_sfa": lp_t / sfa_t,
        "highs_share": spent[0] / lp_total,
    }
    print(f"{family:12s} n={n:2d}  bounds: sfa {sfa_b:10.3f}  pmoo {pmoo_b:8.3f}  "
          f"fifo-lp {lp_b:8.4f}   time: sfa {sfa_t * 1e3:7.2f} ms  fifo-lp {lp_t * 1e3:7.2f} ms  "
          f"(x{r['ratio_fifo_lp_over_sfa']:.1f}, HiGHS {100 * r['highs_share']:.0f} %)")
    return r


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 12, 16])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rows = []
    for family, make in FAMILIES.items():
        for n in args.sizes:
            rows.append(measure(family, n, model.load_data(make(n), f"{family}{n}"), args.repeat))
    out = Path(__file__).resolve().parent / "results" / "fifo_lp.json"
    out.write_text(json.dumps({"repeat": args.repeat, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
