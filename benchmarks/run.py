"""Speed measurements, each against a named peer run in the same process.

    make bench            # or: .venv/bin/python benchmarks/run.py [--vls 5000]

Prints a table and writes benchmarks/results.json. Timings are medians of several runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import afdx_naive_py  # noqa: E402
from rtnetlab import _core, model  # noqa: E402


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vls", type=int, default=5000)
    ap.add_argument("--switches", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    results: dict[str, dict] = {}

    def gen() -> str:
        return _core.generate_afdx(args.vls, args.switches, 1, 2, 0)

    text = gen()
    t_gen = median_time(gen, args.repeat)
    t_val = median_time(lambda: model.load_text(text), args.repeat)
    results["generate+validate"] = {
        "what": f"generate a {args.vls}-VL, {args.switches}-switch, two-plane AFDX network, then parse and "
        "validate it from JSON text",
        "generate_s": t_gen,
        "validate_s": t_val,
        "total_s": t_gen + t_val,
    }

    net = model.load_text(_core.generate_afdx(args.vls, args.switches, 1, 2, 0))
    # The generated network is FIFO everywhere, so afdx-naive applies too.
    resolved = net.resolved()
    routes = sum(len(f["routes"]) for f in resolved["flows"])
    t_py = median_time(lambda: afdx_naive_py.analyze(resolved), max(1, args.repeat // 2))
    results["python-peer afdx-naive"] = {
        "what": "plain-Python afdx-naive on the same network "
        f"({len(resolved['flows'])} VLs, {routes} routes)",
        "seconds": t_py,
    }
    for method, grouping in [
        ("afdx-naive", False),
        ("tfa", False),
        ("tfa", True),
        ("sfa", False),
        ("sfa", True),
        ("best", False),
    ]:
        name = method + ("+grouping" if grouping else "")
        t = median_time(lambda m=method, g=grouping: net.handle.analyze_json(m, g, False), args.repeat)
        results[name] = {
            "what": f"engine {name}, including the JSON of every bound",
            "seconds": t,
            "speedup_vs_python_peer": t_py / t,
        }

    for name, r in results.items():
        print(f"{name}: {r['what']}")
        for k, v in r.items():
            if k != "what":
                print(f"    {k:16s} {v:.4f}" if isinstance(v, float) else f"    {k:16s} {v}")
    out = Path(__file__).resolve().parent / "results.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
