"""Writes the benchmark's industrial-size single-plane AFDX network in WOPANet XML.

    .venv/bin/python benchmarks/wopanet_network.py OUT.xml [--vls 265] [--end-systems 58]
        [--switches 8] [--seed 1]

The network is the project's generator's (BAG and frame mix after seed 000 Table 1) on one
plane, with its three traffic classes mapped onto WOPANet's two priorities (avionics High, the
rest Low; every port is FIFO, so they are labels), written as YAML and converted by
`rtnetlab convert`, as a user would: the same command line always writes the same file.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from rtnetlab import _core


def network(vls: int, switches: int, end_systems: int, seed: int) -> dict:
    import json

    spec = json.loads(_core.generate_afdx(vls, switches, seed, 1, end_systems))
    spec["classes"] = [{"name": "High", "priority": 0}, {"name": "Low", "priority": 1}]
    for f in spec["flows"]:
        f["class"] = "High" if f.get("class") == "avionics" else "Low"
    return spec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--vls", type=int, default=265)
    ap.add_argument("--switches", type=int, default=8)
    ap.add_argument("--end-systems", type=int, default=58)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    spec = network(args.vls, args.switches, args.end_systems, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "network.yaml"
        src.write_text(yaml.safe_dump(spec, sort_keys=False))
        cli = Path(sys.executable).with_name("rtnetlab")
        subprocess.run([str(cli), "convert", str(src), str(args.out)], check=True)


if __name__ == "__main__":
    main()
