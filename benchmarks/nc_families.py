"""Families of FIFO networks, generated, for measuring the network-calculus engine's tightness
and cost on networks it was never tuned on (docs/ANALYSIS.md, "Tightness on families").

Shapes (server graphs: rate-latency servers, token-bucket flows, every server FIFO):

* `ff`: random feed-forward networks in the style of the RTNS 2022 data set (Scheffler, Schmitt,
  Bondorf): servers in a random order, a random DAG of turns between them, flows as random walks
  along the turns (1 to 7 servers), every flow (1, 1), each server's rate its load over a
  utilisation drawn in [0.5, 0.98).
* `tandem`: n servers in a line, flows over random intervals of it (interleaved).
* `sink`: a sink tree (every flow ends at the root), `source`: a source tree (every flow starts at
  the root).
* `mesh`: a k × k grid, flows moving right or down (feed-forward).
* `ring`: n servers in a cycle, each flow over k consecutive servers (cyclic dependencies).

Each shape comes plain or line-shaped (`max_rate`: each server never sends faster than a factor
of its rate, as a link: what its successors receive from it is shaped).

Measured per flow: the bound of `fifo-lp` and `best` as a user runs them (default effort), the
bound of `fifo-lp` at `--lp-effort exhaustive` (every backlogged period split and the network
unfolded without cuts, where tractable: the tightest bound the engine can compute), and, on the
small ones, the largest delay an adversarial fluid search realises (tests/fluid_fifo.py: a
trajectory every bound must cover). Ratios: default / exhaustive (what the default gives away),
exhaustive / realised (at most what the bound itself gives away).

    .venv/bin/python benchmarks/nc_families.py [--per-shape 20] [--seed 1] [--out FILE] [--search]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def rtns_like(rng: random.Random, n: int, flows: int) -> tuple[list, list]:
    """Servers in a random order; each server's turns to 1-3 later ones; flows as random walks."""
    succ = [sorted(rng.sample(range(j + 1, n), min(n - j - 1, rng.randint(1, 3)))) for j in range(n)]
    paths = []
    for _ in range(flows):
        j = rng.randrange(n)
        path = [j]
        for _ in range(rng.randint(0, 6)):
            if not succ[path[-1]]:
                break
            path.append(rng.choice(succ[path[-1]]))
        paths.append(path)
    return _servers(rng, n, paths, latency=0.0), [(1.0, 1.0, p) for p in paths]


def _servers(rng: random.Random, n: int, paths: list[list[int]], latency: float) -> list:
    load = [0.0] * n
    for p in paths:
        for j in p:
            load[j] += 1.0
    return [(max(load[j], 1.0) / rng.uniform(0.5, 0.98), latency) for j in range(n)]


def _compact(servers: list, flows: list) -> tuple[list, list]:
    """Servers no flow crosses left out, the rest renumbered."""
    used = sorted({j for _, _, p in flows for j in p})
    index = {j: i for i, j in enumerate(used)}
    return [servers[j] for j in used], [(b, r, [index[j] for j in p]) for b, r, p in flows]


def tandem(rng: random.Random, n: int, flows: int) -> tuple[list, list]:
    paths = []
    for _ in range(flows):
        a = rng.randrange(n)
        paths.append(list(range(a, rng.randint(a, n - 1) + 1)))
    paths.append(list(range(n)))  # one flow over the whole line
    fl = [(rng.uniform(0.5, 2.0), 1.0, p) for p in paths]
    return _servers(rng, n, paths, latency=rng.choice([0.0, 0.1])), fl


def sink_tree(rng: random.Random, n: int, flows: int) -> tuple[list, list]:
    parent = [None] + [rng.randrange(j) for j in range(1, n)]  # 0 is the root

    def down(j: int) -> list[int]:
        out = [j]
        while parent[out[-1]] is not None:
            out.append(parent[out[-1]])
        return out

    paths = [down(rng.randrange(n)) for _ in range(flows)]
    return _servers(rng, n, paths, latency=0.1), [(1.0, 1.0, p) for p in paths]


def source_tree(rng: random.Random, n: int, flows: int) -> tuple[list, list]:
    servers, fl = sink_tree(rng, n, flows)
    return servers, [(b, r, p[::-1]) for b, r, p in fl]


def mesh(rng: random.Random, n: int, flows: int) -> tuple[list, list]:
    k = max(2, round(n ** 0.5))
    paths = []
    for _ in range(flows):
        x, y = rng.randrange(k), rng.randrange(k)
        path = [x * k + y]
        while (x < k - 1 or y < k - 1) and rng.random() < 0.8:
            if y == k - 1 or (x < k - 1 and rng.random() < 0.5):
                x += 1
            else:
                y += 1
            path.append(x * k + y)
        paths.append(path)
    return _servers(rng, k * k, paths, latency=0.05), [(1.0, 1.0, p) for p in paths]


def ring(rng: random.Random, n: int, flows: int) -> tuple[list, list]:
    n = max(n, 3)
    paths = []
    for _ in range(flows):
        a, k = rng.randrange(n), rng.randint(2, n - 1)
        paths.append([(a + i) % n for i in range(k)])
    servers = _servers(rng, n, paths, latency=0.05)
    return servers, [(1.0, 1.0, p) for p in paths]


SHAPES = {"ff": rtns_like, "tandem": tandem, "sink": sink_tree, "source": source_tree, "mesh": mesh,
          "ring": ring}


def document(servers: list, flows: list, shaping: float | None) -> dict[str, Any]:
    servers, flows = _compact(servers, flows)
    srv = []
    for i, (r, t) in enumerate(servers):
        s: dict[str, Any] = {"name": f"s{i}", "rate": r, "latency": t}
        if shaping is not None:
            s["max_rate"] = r * shaping
        srv.append(s)
    return {"name": "family", "server_graph": {
        "servers": srv,
        "flows": [{"name": f"f{i}", "burst": b, "rate": r, "path": [f"s{j}" for j in p]}
                  for i, (b, r, p) in enumerate(flows)]}}


def bounds(doc: dict, method: str, effort: str = "default") -> tuple[list[float], float]:
    import rtnetlab

    net = rtnetlab.load_text(json.dumps(doc), "family")
    start = time.perf_counter()
    rows = net.analyze(method, lp_effort=effort)["flows"]
    return [r["delay_us"] / 1e6 for r in rows], time.perf_counter() - start


def realised(doc: dict, rng: random.Random) -> list[float]:
    """The largest delay per flow an adversarial fluid search finds (no line shaping: the fluid
    servers release bursts at once)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fluid_fifo import fluid_run

    g = doc["server_graph"]
    index = {s["name"]: i for i, s in enumerate(g["servers"])}
    servers = [(s["rate"], s["latency"]) for s in g["servers"]]
    flows = [(f["burst"], f["rate"], [index[x] for x in f["path"]]) for f in g["flows"]]
    k, n = len(flows), len(servers)
    best = [0.0] * k
    for tail in range(k):
        for _ in range(8):
            offsets = [rng.choice([0.0, 0.5, 1.0, 2.0]) * rng.random() for _ in range(k)]
            offsets[tail] = max(offsets)
            traj = fluid_run(servers, flows, offsets, 10.0, [[] for _ in range(n)], tail)
            best = [max(a, b) for a, b in zip(best, traj.delay, strict=True)]
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-shape", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sizes", default="4,8,16")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--search", action="store_true", help="also the fluid search (no shaping only)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    rows = []
    for shape in args.shapes.split(","):
        for size in [int(x) for x in args.sizes.split(",")]:
            for i in range(args.per_shape):
                for shaping in (None, 1.0):
                    servers, flows = SHAPES[shape](rng, size, max(2, round(1.3 * size)))
                    doc = document(servers, flows, shaping)
                    lp, t_lp = bounds(doc, "fifo-lp")
                    best, t_best = bounds(doc, "best")
                    ex, t_ex = bounds(doc, "fifo-lp", "exhaustive") if size <= 8 else (None, None)
                    row = {"shape": shape, "size": size, "i": i, "shaping": shaping, "flows": len(lp),
                           "fifo_lp": lp, "best": best, "exhaustive": ex,
                           "t_fifo_lp": t_lp, "t_best": t_best, "t_exhaustive": t_ex}
                    # The fluid search runs feed-forward graphs (a ring is cyclic).
                    if args.search and shaping is None and size <= 8 and shape != "ring":
                        row["realised"] = realised(doc, rng)
                    rows.append(row)
                    print(f"{shape} n={size} #{i} shaping={shaping}: {len(lp)} flows, best {t_best:.2f}s",
                          file=sys.stderr, flush=True)
                    if args.out:  # kept as it grows: a long run interrupted keeps its rows
                        args.out.write_text(json.dumps(rows, indent=1) + "\n")
    report(rows)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")


def report(rows: list[dict]) -> None:
    keys = sorted({(r["shape"], r["size"], r["shaping"]) for r in rows}, key=str)
    print(f"{'shape':7} {'n':>3} {'shaped':6} {'flows':>5}  best/lp   lp/exh (mean max)   exh/real (mean max)"
          f"   t_best max s")
    for shape, size, shaping in keys:
        rs = [r for r in rows if (r["shape"], r["size"], r["shaping"]) == (shape, size, shaping)]
        bl = [b / a for r in rs for a, b in zip(r["fifo_lp"], r["best"], strict=True) if a > 0]
        le = [a / e for r in rs if r["exhaustive"] for a, e in zip(r["fifo_lp"], r["exhaustive"], strict=True)
              if e > 0]
        er = [e / d for r in rs if r.get("realised") and r["exhaustive"]
              for e, d in zip(r["exhaustive"], r["realised"], strict=True) if d > 0]

        def mm(xs: list[float]) -> str:
            return f"{statistics.fmean(xs):6.3f} {max(xs):6.3f}" if xs else "     -      -"

        flows = sum(r["flows"] for r in rs)
        print(f"{shape:7} {size:3} {str(shaping):6} {flows:5}  {mm(bl)}  {mm(le)}  {mm(er)}"
              f"   {max(r['t_best'] for r in rs):6.2f}")


if __name__ == "__main__":
    main()
