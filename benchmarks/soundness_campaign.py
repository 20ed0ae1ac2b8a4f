"""The soundness campaign at scale: `rtnetlab experiment soundness --networks N` timed end to end
(the CLI as a user runs it: cluster start, every network, summary and reproducers).

    .venv/bin/python benchmarks/soundness_campaign.py [--networks 10000] [--workers 2] [--out DIR]

Prints the campaign's JSON summary with the wall time and networks per second. The machine is
shared with other work: the time is what this run got, not the machine's best.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--networks", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="soundness-")) / "campaign"
    cmd = [
        sys.executable,
        "-m",
        "rtnetlab.cli",
        "experiment",
        "soundness",
        "--networks",
        str(args.networks),
        "--seed",
        str(args.seed),
        "--workers",
        str(args.workers),
        "--out",
        str(out),
        "--json",
    ]
    if out.exists():
        cmd.append("--resume")
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        sys.stderr.write(done.stderr[-3000:])
        return done.returncode
    doc = json.loads(done.stdout)
    doc["benchmark"] = {
        "wall_s": wall,
        "networks_per_s": args.networks / wall,
        "workers": args.workers,
        "cpus": os.cpu_count(),
        "load_after": os.getloadavg(),
    }
    print(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
