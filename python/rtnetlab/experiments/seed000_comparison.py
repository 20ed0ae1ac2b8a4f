"""Seed 000's scheduler comparison (Fig. 8) at one load point: FIFO, static priority, WF2Q and
D2DRR (6:3:1) per traffic class, on the embedded case study with its links slowed down."""

from __future__ import annotations

import copy
from collections import defaultdict
from pathlib import Path
from typing import Any

from rtnetlab import model
from rtnetlab.demo import case_study_path
from rtnetlab.io import formats
from rtnetlab.simulate import run

#: Seed 000's class factors ω (avionics : multimedia : best effort = 6 : 3 : 1) and Δ = 1000 B.
FACTORS = {"avionics": 6.0, "multimedia": 3.0, "best_effort": 1.0}

SCHEDULERS: dict[str, dict[str, Any]] = {
    "FIFO": {"kind": "fifo"},
    "SP": {"kind": "static_priority"},
    "WF2Q": {"kind": "wf2q", "weights": FACTORS},
    "D2DRR": {"kind": "d2drr", "base_quantum": "1000B", "factors": FACTORS},
}


def _quantile(hist: list[tuple[float, int]], q: float) -> float:
    total = sum(n for _, n in hist)
    rank, seen = q * total, 0
    for upper, n in sorted(hist):
        seen += n
        if seen >= rank:
            return upper
    return 0.0


def seed000_schedulers(duration_s: float = 2.0, seed: int = 1, link_rate: str = "10Mbps") -> list[dict]:
    """Seed 000's comparison (Fig. 8) at one load point: the embedded case study (avionics,
    multimedia and best-effort VLs on two planes) with its links slowed to `link_rate` so that the
    display's port is heavily loaded, every switch port running FIFO, static priority, WF2Q or
    D2DRR in turn; per class, the simulated mean, p99 and maximum latency and the largest bound."""
    base = formats.read(Path(case_study_path()))
    base["defaults"]["link_rate"] = link_rate
    rows = []
    for name, config in SCHEDULERS.items():
        spec = copy.deepcopy(base)
        spec["schedulers"] = {"s": config}
        for sw in spec["switches"]:
            sw["scheduler"] = "s" if config["kind"] not in ("fifo", "static_priority") else config["kind"]
        net = model.load_data(spec, f"case study with {name}")
        cls = {f["name"]: f.get("class", "") for f in spec["flows"]}
        report = run(net, {"duration_ns": round(duration_s * 1e9), "seed": seed}, progress=False)
        bounds = net.analyze("best")["flows"]
        hist: dict[str, list] = defaultdict(list)
        count: dict[str, int] = defaultdict(int)
        total: dict[str, float] = defaultdict(float)
        worst: dict[str, float] = defaultdict(float)
        for f in report["flows"]:
            c = cls[f["flow"]]
            hist[c] += f["histogram"]
            count[c] += f["count"]
            total[c] += f["mean_us"] * f["count"]
            worst[c] = max(worst[c], f["max_us"])
        # The class's largest bound; None (unbounded) as soon as one of its flows has none.
        bound: dict[str, float | None] = defaultdict(float)
        for b in bounds:
            c = cls[b["flow"]]
            bound[c] = None if b["delay_us"] is None or bound[c] is None else max(bound[c], b["delay_us"])
        for c in FACTORS:
            rows.append(
                {
                    "scheduler": name,
                    "class": c,
                    "frames": count[c],
                    "mean_us": total[c] / max(count[c], 1),
                    "p99_us": _quantile(hist[c], 0.99),
                    "max_us": worst[c],
                    "bound_us": bound[c],
                }
            )
    return rows
