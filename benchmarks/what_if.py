"""One BAG edit and the analysis after it, incremental (`Network.what_if`) against whole
(`Network.set_flow` then `Network.analyze`, which validates and analyses the whole network again).

    .venv/bin/python benchmarks/what_if.py [--vls 5000] [--rounds 9]

On a generated AFDX network (``rtnetlab generate afdx``'s generator, two planes), each round
changes one virtual link's BAG (a different VL each round, to twice or half its BAG) both ways,
on two copies of the network kept equal, and checks that the two analyses agree row for row.
Timed in process CPU time, median over rounds:

- ``incremental``: ``wi.set_flow(vl, bag=...)`` then ``wi.analyze()`` (the report as Python data);
- ``incremental, engine only``: the edit and the report as JSON text, not decoded in Python;
- ``whole``: ``net.set_flow(vl, bag=...)`` then ``net.analyze("tfa")`` (validation, analysis,
  the report as Python data);
- ``whole, validation``: the validation alone (``net.validate()`` after the edit).

Prints a table and writes benchmarks/results/what_if.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import rtnetlab as rt

BAGS = ["1ms", "2ms", "4ms", "8ms", "16ms", "32ms", "64ms", "128ms"]


def cpu(f: Any) -> tuple[float, Any]:
    t = time.process_time()
    out = f()
    return time.process_time() - t, out


def other_bag(bag: str) -> str:
    i = BAGS.index(bag)
    return BAGS[i + 1] if i + 1 < len(BAGS) else BAGS[i - 1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vls", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    net = rt.generate_afdx(vls=args.vls, seed=args.seed, planes=2)
    data = net.to_dict()
    whole = rt.Network.from_dict(data)
    t_setup, wi = cpu(lambda: rt.Network.from_dict(data).what_if())
    flows = data["flows"]
    step = max(1, len(flows) // args.rounds)
    times: dict[str, list[float]] = {"incremental": [], "incremental, engine only": [], "whole": [],
                                     "whole, validation": []}
    ports: list[int] = []
    for r in range(args.rounds):
        flow = flows[(r * step) % len(flows)]
        bag = other_bag(wi.to_dict()["flows"][(r * step) % len(flows)]["bag"])
        name = flow["name"]
        t, result = cpu(lambda n=name, b=bag: wi.set_flow(n, bag=b).analyze())
        times["incremental"].append(t)
        ports.append(wi.analysed_ports)
        t_whole, fresh = cpu(lambda n=name, b=bag: whole.set_flow(n, bag=b).analyze("tfa"))
        times["whole"].append(t_whole)
        assert result.flows == fresh.flows and result.ports == fresh.ports, f"round {r}: the analyses differ"
        # The engine alone: the same edit undone and done again, the report left as JSON text.
        wi.undo()
        engine = wi._engine.handle
        t, _ = cpu(lambda n=name, b=bag, e=engine: (wi.set_flow(n, bag=b), e.analyze_json()))
        times["incremental, engine only"].append(t)
        whole.touch()
        t, _ = cpu(whole.validate)
        times["whole, validation"].append(t)
    rows = {name: statistics.median(v) for name, v in times.items()}
    result_doc = {
        "vls": args.vls,
        "ports": wi.ports,
        "rows_per_report": len(fresh.flows),
        "rounds": args.rounds,
        "median_cpu_s": rows,
        "speedup_incremental_vs_whole": rows["whole"] / rows["incremental"],
        "speedup_engine_only_vs_whole": rows["whole"] / rows["incremental, engine only"],
        "ports_analysed_per_edit_median": statistics.median(ports),
        "what_if_setup_cpu_s": t_setup,
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
    }
    print(f"{args.vls} VLs, {wi.ports} egress ports, {len(fresh.flows)} rows; one BAG edit and its "
          f"analysis, median CPU of {args.rounds} rounds")
    for name, s in rows.items():
        print(f"{name:<28}{s * 1e3:>10.1f} ms")
    print(f"ports analysed again per edit (median): {statistics.median(ports)} of {wi.ports}; "
          f"what-if set-up: {t_setup:.2f} s")
    out = Path(__file__).resolve().parent / "results" / "what_if.json"
    out.write_text(json.dumps(result_doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
