"""Loading a description, the engine's reader against the PyYAML reader it replaced, in one run.

    .venv/bin/python benchmarks/load_bench.py [--vls 5000] [--rounds 7]

The peer is what the front did before: PyYAML's safe loader (libyaml's C parser when present),
the values turned into plain data, dumped to JSON text and handed to the engine to validate. The
engine reads the YAML text itself (`_core.load_text`). Both end with the same validated network.
Timed apart: reading alone (peer: PyYAML to plain data; engine: `_core.parse_text`, which also
writes the JSON text back for Python) and reading plus validation. Round after round, the peer
once then the engine once; the ratio is the median over rounds of peer time / engine time.
Prints a table and writes benchmarks/load_results.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from rtnetlab import _core


def plain(data: Any) -> Any:
    """The peer's conversion of YAML values into JSON-ready data (dates and the like to text)."""
    if isinstance(data, dict):
        return {str(k): plain(v) for k, v in data.items()}
    if isinstance(data, list):
        return [plain(v) for v in data]
    if data is None or isinstance(data, (str, int, float, bool)):
        return data
    return str(data)


def peer_read(text: str) -> Any:
    return plain(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))


def peer_load(text: str) -> Any:
    handle, _ = _core.load(json.dumps(peer_read(text), allow_nan=False))
    assert handle is not None
    return handle


def engine_read(text: str) -> Any:
    return _core.parse_text(text, "yaml", "bench", [])


def engine_load(text: str) -> Any:
    handle, _ = _core.load_text(text, "yaml", "bench", [])
    assert handle is not None
    return handle


def timed(f: Any, text: str) -> float:
    t = time.perf_counter()
    f(text)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vls", type=int, default=5000)
    ap.add_argument("--switches", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    spec = json.loads(_core.generate_afdx(args.vls, args.switches, 1, 2, 0))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "net.yaml"
        path.write_text(yaml.safe_dump(spec, sort_keys=False, width=100))
        text = path.read_text()
    rows = {}
    for name, peer, engine in (("read", peer_read, engine_read), ("read+validate", peer_load, engine_load)):
        p_times, e_times, ratios = [], [], []
        for _ in range(args.rounds):
            p, e = timed(peer, text), timed(engine, text)
            p_times.append(p)
            e_times.append(e)
            ratios.append(p / e)
        rows[name] = {
            "peer_s": statistics.median(p_times),
            "engine_s": statistics.median(e_times),
            "speedup_vs_pyyaml": statistics.median(ratios),
        }
    result = {"vls": args.vls, "bytes": len(text.encode()), "rounds": args.rounds, "rows": rows}
    print(f"{args.vls} VLs, {result['bytes']:,} bytes of YAML, median of {args.rounds} paired rounds")
    print(f"{'':<15}{'PyYAML peer (s)':>16}{'engine (s)':>12}{'speed-up':>10}")
    for name, r in rows.items():
        print(f"{name:<15}{r['peer_s']:>16.3f}{r['engine_s']:>12.3f}{r['speedup_vs_pyyaml']:>9.1f}x")
    out = Path(__file__).resolve().parent / "load_results.json"
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
