"""Speed measurements, each against a named peer run in the same process.

    make bench            # or: .venv/bin/python benchmarks/run.py [--vls 5000] [--repeat 7]

Prints a table and writes benchmarks/results.json. Timings are medians of several runs.

The plain-Python peer (peers/afdx_naive_py.py) computes afdx-naive's bounds and nothing else, so
the engine is timed two ways against it:

* ``summary``: the whole analysis (every bound, the redundancy and end-system checks of every
  report) through a binding that returns only a small summary: computation against computation.
  The peer is given the network's routes already resolved; the engine likewise reads the route
  indices that validation built. The first call on a freshly loaded network is also timed apart
  (it runs on freshly allocated memory).
* ``json``: the same call returning the JSON text of every bound, as ``rtnetlab analyze`` uses it.

On a shared machine timings drift, so each engine measurement is paired with a run of the peer:
round after round, the peer once, then the engine a few times; ``speedup_vs_python_peer`` is the
median over rounds of (peer time / median engine time in that round).
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

# Targets of the worst-case analysis engine on the 5000-VL network.
TFA_TARGET_S = 0.050
SPEEDUP_TARGET = 50.0


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def median_time(fn, repeat: int) -> float:
    return statistics.median(timed(fn) for _ in range(repeat))


def paired(peer, engine, rounds: int, inner: int) -> dict:
    """Peer and engine interleaved: median times, and the median of per-round speedups."""
    peer_t, engine_t, ratios = [], [], []
    for _ in range(rounds):
        p = timed(peer)
        e = median_time(engine, inner)
        peer_t.append(p)
        engine_t.append(e)
        ratios.append(p / e)
    return {
        "seconds": statistics.median(engine_t),
        "peer_seconds": statistics.median(peer_t),
        "speedup_vs_python_peer": statistics.median(ratios),
    }


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

    def peer():
        return afdx_naive_py.analyze(resolved)

    t_py = median_time(peer, max(1, args.repeat // 2))
    results["python-peer afdx-naive"] = {
        "what": "plain-Python afdx-naive on the same network "
        f"({len(resolved['flows'])} VLs, {routes} routes)",
        "seconds": t_py,
    }
    handle = net.handle
    slow = {"sfa", "best"}
    for method, grouping in [
        ("afdx-naive", False),
        ("tfa", False),
        ("tfa", True),
        ("sfa", False),
        ("sfa", True),
        ("best", False),
    ]:
        name = method + ("+grouping" if grouping else "")
        # Slow methods: fewer rounds, one engine run per round.
        rounds, inner = (max(3, args.repeat // 2), 1) if method in slow else (args.repeat, 5)
        if method not in slow:
            r = paired(peer, lambda m=method, g=grouping: handle.analyze_summary(m, g, False), rounds, inner)
            results[f"{name} (summary)"] = {
                "what": f"engine {name}, computation only: every bound computed, a summary returned",
                **r,
            }
        r = paired(peer, lambda m=method, g=grouping: handle.analyze_json(m, g, False), rounds, inner)
        results[name] = {"what": f"engine {name}, including the JSON of every bound", **r}

    # The first analysis of a freshly loaded network: its report lands on memory the process has
    # not used yet (page faults), later calls reuse it.
    def first_call() -> float:
        fresh = model.load_text(text).handle
        return timed(lambda: fresh.analyze_summary("tfa", False, False))

    results["tfa first call (summary)"] = {
        "what": "engine tfa, first call on a freshly loaded network, a summary returned",
        "seconds": statistics.median(first_call() for _ in range(args.repeat)),
    }

    tfa, tfa_json = results["tfa (summary)"], results["tfa"]
    results["targets"] = {
        "what": f"tfa under {TFA_TARGET_S * 1e3:.0f} ms and at least {SPEEDUP_TARGET:.0f}x the Python peer",
        "tfa_under_50ms": tfa_json["seconds"] < TFA_TARGET_S,
        "tfa_speedup_summary": tfa["speedup_vs_python_peer"],
        "tfa_speedup_json": tfa_json["speedup_vs_python_peer"],
        "speedup_50x_summary": tfa["speedup_vs_python_peer"] >= SPEEDUP_TARGET,
        "speedup_50x_json": tfa_json["speedup_vs_python_peer"] >= SPEEDUP_TARGET,
    }

    for name, r in results.items():
        print(f"{name}: {r['what']}")
        for k, v in r.items():
            if k != "what":
                print(f"    {k:24s} {v:.4f}" if isinstance(v, float) else f"    {k:24s} {v}")
    out = Path(__file__).resolve().parent / "results.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
