"""Server graphs with staircase (GCRA) flows against exact fluid trajectories (tests/fluid_fifo.py):
no trajectory exceeds any method's bound, and the greedy one reaches the bound where the
analysis is exact.

Sources of the expected numbers:
* Le Boudec & Thiran §1.4.1 (shared/oracles/README.md, small case 2): ten connections GCRA(25, 4)
  of one cell into rate 1, latency 8: 18 slots. A staircase GCRA(T, τ) of packets of size m
  sends ⌊τ/T⌋ + 1 packets at once, then one at every k·T − τ (its greedy trajectory), so the ten
  cells arrive together and the last leaves the lazy server at 8 + 10 = 18: the bound is reached.
* The property: on small random tandems and feed-forward graphs (2 to 4 rate-latency servers, 2
  to 5 flows, staircases and token buckets mixed, loads up to 99 %), no trajectory of the fluid
  run (greedy sources at random offsets, lazy servers or servers releasing at random gates)
  exceeds `tfa`, `sfa`, `sfa-iter`, `pmoo`, `fifo-lp` or `best`, with or without `--blind`
  (docs/MODEL.md, "Server graphs": where each takes the staircases exactly).
"""

from __future__ import annotations

import math
import random
from pathlib import Path

from fluid_fifo import fluid_run

#: (method, blind): a FIFO trajectory is one of every multiplexing, so blind bounds cover it too.
METHODS = [("tfa", False), ("sfa", False), ("sfa-iter", False), ("pmoo", False), ("fifo-lp", False),
           ("best", False), ("tfa", True), ("sfa", True), ("best", True)]


def staircase_jumps(period: float, tolerance: float, size: float, horizon: float,
                    ) -> list[tuple[float, float]]:
    """The greedy trajectory of size·⌈(t + tolerance)/period⌉: (date, amount) up to `horizon`."""
    first = math.floor(tolerance / period) + 1
    jumps = [(0.0, size * first)]
    k = first
    while k * period - tolerance <= horizon:
        jumps.append((k * period - tolerance, size))
        k += 1
    return jumps


def description(tmp_path: Path, servers: list, flows: list) -> Path:
    """Flows are ("tb", burst, rate, path) or ("stair", period, tolerance, size, path)."""
    lines = ["name: g", "server_graph:", "  servers:"]
    lines += [f"    - {{name: s{i}, rate: {r}, latency: {t}}}" for i, (r, t) in enumerate(servers)]
    lines.append("  flows:")
    for i, f in enumerate(flows):
        names = ", ".join(f"s{s}" for s in f[-1])
        curve = (f"burst: {f[1]}, rate: {f[2]}" if f[0] == "tb"
                 else f"staircase: {{period: {f[1]}, tolerance: {f[2]}, size: {f[3]}}}")
        lines.append(f"    - {{name: f{i}, {curve}, path: [{names}]}}")
    out = tmp_path / "g.yaml"
    out.write_text("\n".join(lines) + "\n")
    return out


def bounds(tmp_path: Path, servers: list, flows: list) -> dict[str, list[float]]:
    from rtnetlab import model

    net = model.load_file(description(tmp_path, servers, flows))
    return {m: [r["delay_us"] / 1e6 for r in net.analyze(m[0], blind=m[1])["flows"]] for m in METHODS}


def fluid_flows(flows: list, horizon: float) -> tuple[list, list]:
    """The fluid run's (σ, ρ, path) per flow and each staircase's jumps (None: a token bucket)."""
    runs, jumps = [], []
    for f in flows:
        if f[0] == "tb":
            runs.append((f[1], f[2], f[3]))
            jumps.append(None)
        else:
            runs.append((0.0, 0.0, f[4]))
            jumps.append(staircase_jumps(f[1], f[2], f[3], horizon))
    return runs, jumps


def random_network(rng: random.Random) -> tuple[list, list]:
    """2 to 4 servers, 2 to 5 flows (half of them staircases, some with a tolerance of several
    periods) on a tandem's stretches or on increasing server numbers, each server's load 50 to
    99 %."""
    n = rng.randint(2, 4)
    servers = [(float(rng.choice([1, 2, 5, 10])), float(rng.choice([0, 0.5, 1, 2, 5]))) for _ in range(n)]
    tandem = rng.random() < 0.5
    flows: list = []
    for _ in range(rng.randint(2, 5)):
        if tandem:
            a = rng.randrange(n)
            path = list(range(a, rng.randint(a, n - 1) + 1))
        else:
            path = sorted(rng.sample(range(n), rng.randint(1, n)))
        if rng.random() < 0.5:
            period = float(rng.choice([1, 2, 5, 10]))
            flows.append(("stair", period, period * rng.choice([0, 0.16, 0.5, 2, 3.3]),
                          float(rng.choice([0.5, 1, 5])), path))
        else:
            burst, rate = float(rng.choice([0.5, 1, 5, 10])), float(rng.choice([0.1, 0.5, 1, 2]))
            flows.append(("tb", burst, rate, path))
    load = rng.choice([0.5, 0.8, 0.95, 0.99])
    rate_of = lambda f: f[3] / f[1] if f[0] == "stair" else f[2]  # noqa: E731
    for j, (rate, latency) in enumerate(servers):
        offered = sum(rate_of(f) for f in flows if j in f[-1])
        servers[j] = (max(rate, offered / load), latency)
    return servers, flows


def test_the_greedy_staircases_reach_the_atm_bound(tmp_path: Path) -> None:
    servers = [(1.0, 8.0)]
    flows = [("stair", 25.0, 4.0, 1.0, [0]) for _ in range(10)]
    b = bounds(tmp_path, servers, flows)
    runs, jumps = fluid_flows(flows, 100.0)
    traj = fluid_run(servers, runs, [0.0] * 10, 100.0, jumps=jumps)
    assert max(traj.delay) == 18.0
    assert all(abs(d - 18.0) <= 1e-9 * 18 for d in b["tfa", False] + b["best", False]), b
    assert all(d >= 18.0 * (1 - 1e-9) for m in METHODS for d in b[m]), b


def test_no_fluid_trajectory_above_any_bound(tmp_path: Path) -> None:
    rng = random.Random(11)
    for case in range(15):
        servers, flows = random_network(rng)
        b = bounds(tmp_path, servers, flows)
        tfa = b["tfa", False]
        horizon = 3 * max(max(tfa), 1.0) if all(math.isfinite(x) for x in tfa) else 100.0
        runs, jumps = fluid_flows(flows, horizon)
        for _ in range(20):
            offsets = [rng.choice([0.0, rng.uniform(0, horizon / 3)]) for _ in flows]
            gates = [[rng.uniform(0, horizon / 2) for _ in range(rng.choice([0, 0, 1, 2]))] for _ in servers]
            tail = rng.randrange(len(flows))
            traj = fluid_run(servers, runs, offsets, horizon, gates, tail, jumps=jumps)
            for m in METHODS:
                for f, (d, bound) in enumerate(zip(traj.delay, b[m], strict=True)):
                    assert d <= bound * (1 + 1e-9) + 1e-12, (m, case, f, servers, flows, offsets, gates, d)
