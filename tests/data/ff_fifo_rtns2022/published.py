"""The published per-flow bounds of these networks (published.csv), by network then flow name:
{"LUDB_FF": ..., "LB_FF": ..., "SFA_FIFO": ...}. Read by tests/test_dnc_import.py and
benchmarks/fifo_dataset.py."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path


def bounds() -> dict[str, dict[str, dict[str, float]]]:
    out: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    with open(Path(__file__).with_name("published.csv")) as f:
        for r in csv.DictReader(f):
            out[r["network"]][r["flow"]] = {k: float(r[k]) for k in ("LUDB_FF", "LB_FF", "SFA_FIFO")}
    return out
