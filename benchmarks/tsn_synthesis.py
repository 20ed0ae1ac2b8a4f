"""`rtnetlab configure tsn` at scale, and on INET's gate-scheduling showcase network.

* 100 scheduled streams on a 20-switch network (a tree of 20 bridges, 3 end systems each, 1 Gb/s,
  1 us of bridge latency, 500 ns of clock error): first fit, then the MILP (HiGHS) from it, within
  60 s; the written description checked by the analysis and a 20 ms simulation.
* 1,000 streams on the same network: first fit and the search around it (the MILP's pairs exceed
  --exact-limit) within a 180 s limit (the written description's checks, about 90 s more, keep
  the whole command within 5 min), its gap to the bound of its objective reported; the analysis's
  check in the same run.
* INET's showcase (examples/tsn/inet_gatescheduling.yaml) and the eager counterexample
  (examples/tsn/tsn_eager_fails.yaml): whether a schedule is found, and by which method.
* Bounded-wait (--max-wait): the example no no-wait schedule carries
  (examples/tsn/tsn_bounded_wait.yaml, 32 us), and the 100 streams on 20 switches with each frame
  allowed 20 us of waiting in all; the simulation's longest measured wait beside the bound.

Each run is the whole command's work: description read and validated, streams timed, first fit,
the MILP, gate lists, the written description validated again, the time-triggered rule and `best`
on it. Times are wall-clock seconds on this (shared, 2-core) host, with its load average beside,
and the process's CPU seconds (cpu_s: every thread, HiGHS's included) beside them.

Run: .venv/bin/python benchmarks/tsn_synthesis.py [--out benchmarks/results/tsn_synthesis.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

import yaml

from rtnetlab import configure

REPO = Path(__file__).resolve().parents[1]


def tree_network(streams: int, seed: int, sizes: tuple[int, int], periods: list[int]) -> dict:
    """20 bridges in a binary tree (bridge i below bridge (i − 1) // 2), three end systems on each;
    `streams` time-triggered streams between random end systems (periods in us, sizes in B), and
    one best-effort flow per bridge."""
    rng = random.Random(seed)
    bridges = [f"sw{i}" for i in range(20)]
    ends = [f"es{i}" for i in range(60)]
    links = [{"from": bridges[(i - 1) // 2], "to": bridges[i]} for i in range(1, 20)]
    links += [{"from": e, "to": bridges[i // 3]} for i, e in enumerate(ends)]
    flows = []
    for k in range(streams):
        a, b = rng.sample(ends, 2)
        flows.append({
            "name": f"tt{k}", "type": "periodic", "period": f"{rng.choice(periods)}us",
            "size": f"{rng.randint(*sizes)}B", "class": "control", "source": a, "destinations": [b],
            "deadline": "2ms",
        })
    for k in range(20):
        a, b = rng.sample(ends, 2)
        flows.append({"name": f"be{k}", "type": "periodic", "period": "1ms", "size": "1500B",
                      "class": "best_effort", "source": a, "destinations": [b], "deadline": "10ms"})
    return {
        "name": f"tree-20-{streams}",
        "defaults": {"link_rate": "1Gbps", "technological_latency": "1us"},
        "classes": [{"name": "control", "priority": 0}, {"name": "best_effort", "priority": 1}],
        "schedulers": {"tsn": {"kind": "tas", "scheduled": ["control"], "sync_error": "500ns"}},
        "end_systems": [{"name": e, "scheduler": "tsn"} for e in ends],
        "switches": [{"name": s, "scheduler": "tsn"} for s in bridges],
        "links": links,
        "flows": flows,
    }


ONLY = ""


def one(path: Path, label: str, **options) -> dict | None:
    if ONLY and ONLY not in label:
        return None
    load_before = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    report, document = configure.tsn(path, **options)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    row = {
        "case": label,
        "options": options,
        "feasible": report["feasible"],
        "reasons": report["reasons"][:5],
        "method": report["method"],
        "solver_status": report["solver_status"],
        "solver_note": report["solver_note"],
        "streams": len(report["streams"]),
        "pairs": report["pairs"],
        "seconds": round(seconds, 3),
        "cpu_s": round(cpu, 3),
        "first_fit_s": round(report["heuristic_s"], 4),
        "search_s": round(report["search_s"], 3),
        "search": report["search"],
        "exact_s": round(report["exact_s"], 3),
        "objective": report["objective"],
        "value": report["value"],
        "bound": report["bound"],
        "gap": report["gap"],
        "misses": len(report["misses"]),
        "mode": report.get("mode"),
        "max_wait_ns": report.get("max_wait_ns"),
        "planned_wait_max_ns": max((s["wait_ns"] for s in report["streams"]), default=None),
        "unconfirmed": len(report["unconfirmed"]),
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }
    if document is not None and options.get("verify", True):
        checks = configure.verify_tsn(document, report, ("analysis", "simulation"), 0.02, 1.0, str(path))
        row["analysis"] = checks["analysis"]["detail"]
        row["simulation"] = checks["simulation"]["detail"]
        row["checks_passed"] = all(c["passed"] for c in checks.values())
        row["measured_wait_max_us"] = round(checks["simulation"]["max_wait_us"], 3)
    print(json.dumps({k: v for k, v in row.items() if k != "reasons"}), flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "tsn_synthesis.json")
    ap.add_argument("--only", default="", help="Run only the cases whose label contains this text.")
    args = ap.parse_args()
    global ONLY
    ONLY = args.only
    rows: list = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("inet_gatescheduling", "tsn_eager_fails"):
            src = REPO / "examples" / "tsn" / f"{name}.yaml"
            for solver in ("heuristic", "exact"):
                rows.append(one(src, f"{name} ({solver})", solver=solver, time_limit=60.0))
        bounded = REPO / "examples" / "tsn" / "tsn_bounded_wait.yaml"
        rows.append(one(bounded, "tsn_bounded_wait (exact, no-wait)", solver="exact", time_limit=60.0))
        for solver in ("heuristic", "exact"):
            rows.append(one(bounded, f"tsn_bounded_wait ({solver}, bounded-wait 32us)", solver=solver,
                            time_limit=60.0, max_wait="32us"))
        p100 = Path(tmp) / "tree100.yaml"
        p100.write_text(yaml.safe_dump(tree_network(100, 1, (64, 1500), [500, 1000, 2000]), sort_keys=False))
        for objective in ("bandwidth", "slack"):
            rows.append(one(p100, f"100 streams, 20 switches ({objective})", objective=objective,
                            time_limit=60.0, solver="auto", exact_limit=20_000))
        for solver in ("heuristic", "auto"):
            rows.append(one(p100, f"100 streams, 20 switches (bandwidth, bounded-wait 20us, {solver})",
                            time_limit=60.0, solver=solver, exact_limit=20_000, max_wait="20us"))
        p1000 = Path(tmp) / "tree1000.yaml"
        big = tree_network(1000, 2, (64, 300), [1000, 2000, 4000])
        p1000.write_text(yaml.safe_dump(big, sort_keys=False))
        for objective in ("bandwidth", "slack"):
            rows.append(one(p1000, f"1000 streams, 20 switches ({objective})", objective=objective,
                            time_limit=180.0, solver="auto", exact_limit=5000))
    rows = [r for r in rows if r is not None]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if ONLY and args.out.exists():
        # A partial run replaces its own rows and keeps the others.
        kept = [r for r in json.loads(args.out.read_text())["rows"] if ONLY not in r["case"]]
        rows = kept + rows
    args.out.write_text(json.dumps({"host_cores": os.cpu_count(), "rows": rows}, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
