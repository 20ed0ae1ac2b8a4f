"""Records every analysis's JSON document on a set of networks, or checks that a build gives the
same documents byte for byte: the check a change meant only to make the analyses faster must pass.

    .venv/bin/python benchmarks/bounds_identity.py record DIR [--more FILE ...] [--large FILE ...]
    .venv/bin/python benchmarks/bounds_identity.py compare DIR

The networks: every description in examples/, the WOPANet samples of ../shared/oracles/wopanet,
random networks of the engine's generator (`random_network`, every scheduler set), random server
graphs (rate-latency servers, token-bucket flows on random paths), the `--more` files given, and
the `--large` ones (e.g. a generated 5000-VL AFDX network), where only `best` and the methods it
is made of run.
`record` copies each network's text into DIR with its documents, so that `compare` analyses the
very same inputs. The engine writes floats in their shortest round-trip form (`null` for
infinity), so equal text is equal bits.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path

from rtnetlab import _core, model
from rtnetlab.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
ORACLES = ROOT.parent / "shared" / "oracles" / "wopanet"

METHODS = ["best", "tfa", "sfa", "sfa-iter", "pmoo", "afdx-naive", "fifo-lp", "sfa-foi-lowest"]
#: On the large networks: what `best` runs, and the methods it is made of.
LARGE = [("best", False, False), ("best", False, True), ("tfa", False, False), ("tfa", True, False),
         ("sfa", True, False), ("sfa", False, True), ("pmoo", False, False)]


def random_server_graph(seed: int) -> dict:
    """A feed-forward server graph: servers s0..sN-1, each flow on an increasing run of them."""
    rng = random.Random(seed)
    n = rng.randint(2, 6)
    servers = [{"name": f"s{i}", "rate": rng.choice([10.0, 20.0, 50.0, 100.0]),
                "latency": rng.choice([0.0, 0.01, 0.1, 1.0])} for i in range(n)]
    flows = []
    for k in range(rng.randint(1, 8)):
        a = rng.randrange(n)
        b = rng.randrange(a, n)
        path = [f"s{i}" for i in range(a, b + 1) if i == a or i == b or rng.random() < 0.7]
        flows.append({"name": f"f{k}", "rate": rng.choice([0.5, 1.0, 2.0, 3.0]),
                      "burst": rng.choice([0.0, 1.0, 5.0, 25.0]), "path": path})
    return {"name": f"graph{seed}", "server_graph": {"servers": servers, "flows": flows}}


def inputs(more: list[Path], large: list[Path]) -> list[tuple[str, str, bool]]:
    """(name, text, large) of every network: names end with the format's extension."""
    out = []
    for p in sorted((ROOT / "examples").rglob("*")):
        if p.suffix in (".yaml", ".yml", ".json", ".xml") and p.is_file():
            out.append((str(p.relative_to(ROOT)).replace("/", "__"), p.read_text(), False))
    for p in sorted(ORACLES.glob("*.xml")):
        if not p.name.endswith("_res.xml"):
            out.append((f"oracle__{p.name}", p.read_text(), False))
    kinds = ["mixed", "any", "fifo", "static_priority"] + [n for n, _ in _core.random_sample_schedulers()]
    for seed in range(60):
        kind = kinds[seed % len(kinds)]
        out.append((f"random_{seed}_{kind}.json", _core.random_network(seed, kind), False))
    for seed in range(25):
        out.append((f"graph_{seed}.json", json.dumps(random_server_graph(seed)), False))
    for p in more:
        out.append((f"more__{p.name}", p.read_text(), False))
    for p in large:
        out.append((f"large__{p.name}", p.read_text(), True))
    return out


def documents(path: Path, is_large: bool) -> dict[str, str]:
    """Every analysis's document (or its error) on the network in `path`, by `method/g/b`."""
    try:
        net = model.load_file(path)
    except UserError as e:
        return {"load": f"error: {e}"}
    runs = LARGE if is_large else [(m, g, b) for m in METHODS for g in (False, True) for b in (False, True)]
    docs = {}
    for method, grouping, blind in runs:
        key = f"{method}/{'g' if grouping else '-'}/{'b' if blind else '-'}"
        try:
            docs[key] = net.analysis_document(method, grouping, blind, indent=False)
        except UserError as e:
            docs[key] = f"error: {e}"
    return docs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=["record", "compare"])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--more", type=Path, nargs="*", default=[])
    ap.add_argument("--large", type=Path, nargs="*", default=[])
    args = ap.parse_args()
    nets = args.dir / "networks"
    if args.action == "record":
        shutil.rmtree(args.dir, ignore_errors=True)
        nets.mkdir(parents=True)
        listing = []
        for name, text, is_large in inputs(args.more, args.large):
            (nets / name).write_text(text)
            listing.append({"name": name, "large": is_large})
        (args.dir / "listing.json").write_text(json.dumps(listing, indent=1))
    listing = json.loads((args.dir / "listing.json").read_text())
    differ, total = [], 0
    for entry in listing:
        t = time.perf_counter()
        docs = documents(nets / entry["name"], entry["large"])
        where = args.dir / "documents" / (entry["name"] + ".json")
        if args.action == "record":
            where.parent.mkdir(exist_ok=True)
            where.write_text(json.dumps(docs, indent=0))
        else:
            want = json.loads(where.read_text())
            for key in sorted(set(want) | set(docs)):
                total += 1
                if want.get(key) != docs.get(key):
                    differ.append(f"{entry['name']} {key}")
        print(f"{entry['name']}: {len(docs)} documents, {time.perf_counter() - t:.2f} s", file=sys.stderr)
    if args.action == "compare":
        for d in differ:
            print(f"DIFFERS: {d}")
        print(f"{total - len(differ)} of {total} documents identical")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
