"""What PMOO arrival bounding costs on server graphs under blind multiplexing, as a user runs it:
`rtnetlab analyze FILE --method M --blind --arrival-bounds A --json`, whole processes, with
A = pboo (aggregate PBOO only, the cheaper), pmoo and tightest (the default), on the published
RTNS 2022 networks (DNC's own `.java` sources and their YAML, tests/data/ff_fifo_rtns2022) and
on generated random feed-forward graphs of growing size. Per run: the least wall time of
`--repeat` processes, the ratio to pboo's, and how many flows the default bounds below pboo.

    .venv/bin/python benchmarks/arrival_bounds.py [--sizes 25x150,50x300,100x600] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "ff_fifo_rtns2022"
CLI = Path(sys.executable).parent / "rtnetlab"
CHOICES = ("pboo", "pmoo", "tightest")


def generated(servers: int, flows: int, seed: int, out: Path) -> Path:
    """Servers in a line of feed-forward order, each flow over 2-6 servers in increasing order,
    loads below one at every server (rates scaled after drawing)."""
    rng = random.Random(seed)
    paths = []
    for _ in range(flows):
        first = rng.randrange(servers - 1)
        hops = sorted(rng.sample(range(first + 1, servers), min(rng.randint(1, 5), servers - first - 1)))
        paths.append([first, *hops])
    crossing = [0] * servers
    for p in paths:
        for s in p:
            crossing[s] += 1
    rate = 0.8 * 10.0 / max(crossing)  # the busiest server at 80 % of its rate 10
    lines = [f"name: random_{servers}x{flows}_{seed}", "server_graph:", "  servers:"]
    lines += [f"    - {{name: s{i}, rate: 10, latency: {rng.choice((0.1, 0.5, 1))}}}" for i in range(servers)]
    lines.append("  flows:")
    for i, p in enumerate(paths):
        names = ", ".join(f"s{s}" for s in p)
        burst = rng.uniform(0.5, 5)
        lines.append(f"    - {{name: f{i}, burst: {burst:.3f}, rate: {rate:.6f}, path: [{names}]}}")
    out.write_text("\n".join(lines) + "\n")
    return out


def run(path: Path, method: str, choice: str, repeat: int) -> tuple[float, dict[str, float | None]]:
    best = float("inf")
    delays: dict[str, float | None] = {}
    for _ in range(repeat):
        t = time.perf_counter()
        r = subprocess.run([str(CLI), "analyze", str(path), "--method", method, "--blind", "--arrival-bounds",
                            choice, "--json"], capture_output=True, text=True, timeout=3600)
        best = min(best, time.perf_counter() - t)
        if r.returncode != 0:
            sys.exit(f"{path}: {r.stderr.strip()}")
        delays = {f["flow"]: f["delay_us"] for f in json.loads(r.stdout)["flows"]}
    return best, delays


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="25x150,50x300,100x600", help="SERVERSxFLOWS,... generated")
    ap.add_argument("--method", default="sfa")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cases = [DATA / f"random_ff_{k}.yaml" for k in (1, 5, 6)] + [DATA / "random_ff_7.java"]
        for size in args.sizes.split(","):
            s, f = map(int, size.split("x"))
            cases.append(generated(s, f, 1, Path(tmp) / f"random_{s}x{f}.yaml"))
        print(f"{args.method} --blind, least wall time of {args.repeat} processes")
        for path in cases:
            times, rows = {}, {}
            for choice in CHOICES:
                times[choice], rows[choice] = run(path, args.method, choice, args.repeat)
            tighter = sum(1 for k, d in rows["tightest"].items()
                          if d is not None and (rows["pboo"][k] is None or d < rows["pboo"][k] * (1 - 1e-12)))
            print(f"  {path.name:24} " + "  ".join(
                f"{c} {times[c]:7.3f} s ({times[c] / times['pboo']:5.1f}x)" for c in CHOICES)
                + f"  default below pboo on {tighter}/{len(rows['pboo'])} flows")


if __name__ == "__main__":
    main()
