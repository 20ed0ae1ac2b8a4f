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
    # afdx-naive needs FIFO ports: the generated network uses FIFO everywhere.
    resolved = net.resolved()
    t_rust = median_time(lambda: net.handle.analyze_json("afdx-naive"), args.repeat)
    t_py = median_time(lambda: afdx_naive_py.analyze(resolved), max(1, args.repeat // 2))
    results["afdx-naive"] = {
        "what": f"afdx-naive on the same network ({len(resolved['flows'])} VLs, "
        f"{sum(len(f['routes']) for f in resolved['flows'])} routes)",
        "engine_s": t_rust,
        "python_peer_s": t_py,
        "speedup": t_py / t_rust,
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
