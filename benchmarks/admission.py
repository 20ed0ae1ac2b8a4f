"""Per-decision time of the VSN admission (seed 001F) on a network already carrying 5,000 flows,
the trials on the live network (incremental, the default) and on the whole description loaded
and validated again (before), beside peers measured in the same run: one plain analysis
(`Network.analyze_summary`, what `rtnetlab analyze` computes) and one load + validation of the
same network. Both ways must take the same decisions. Reported as milliseconds and as ratios.

Run: .venv/bin/python benchmarks/admission.py [--flows 5000] [--requests 20]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from rtnetlab import _core
from rtnetlab.cloud import admit as adm
from rtnetlab.cloud import experiment as gen


def infrastructure(flows: int, seed: int) -> dict:
    """The experiment's leaf-spine data centre, larger (8 leaves × 8 hosts of one core, 4 spines), carrying
    `flows` background token-bucket flows of 50 kbps between random hosts of different leaves."""
    infra = gen.infrastructure(hosts_per_leaf=8, leaves=8, spines=4, cores=1)
    rng = random.Random(seed)
    hosts = [h["name"] for h in infra["hosts"]]
    background = []
    for i in range(flows):
        a, b = rng.sample(hosts, 2)
        while a[1] == b[1]:
            a, b = rng.sample(hosts, 2)
        background.append(
            {
                "name": f"bg{i}",
                "type": "token_bucket",
                "source": a,
                "destinations": [b],
                "class": rng.choice(["control", "video"]),
                "rate": "50kbps",
                "burst": "1500B",
                "max_packet": "1500B",
                "min_packet": "64B",
            }
        )
    infra["network"]["flows"] = background
    infra.pop("compatible_classes")
    return infra


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flows", type=int, default=5000)
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    infra = infrastructure(a.flows, a.seed)
    reqs = gen.requests(a.requests, a.seed, mean_gap=1.0, mean_lifetime=1e3)
    for r in reqs["requests"]:
        # One core per host and components above half a core: every virtual link crosses the
        # network, so that every decision runs the analysis.
        for c in r["components"]:
            c["utilisation"] = 0.6
        for link in r["links"]:
            # Latency limits above the background's queueing (about 80 bursts per host port).
            link["latency"] = link["jitter"] = "100ms"
            link["class"] = "video" if link["class"] == "bulk" else link["class"]
    runs = {}
    for mode in (False, True):
        t0 = time.perf_counter()
        report = adm.admit(infra, reqs, incremental=mode)
        runs[mode] = (report, time.perf_counter() - t0)
    strip = [
        [{k: v for k, v in d.items() if k != "decision_ms"} for d in runs[m][0]["decisions"]] for m in runs
    ]
    assert strip[0] == strip[1], "incremental and whole-description admissions decided differently"
    net_json = json.dumps(infra["network"])
    handle, diags = _core.load(net_json)
    assert handle is not None, diags
    times = []
    for _ in range(5):
        t = time.perf_counter()
        handle.analyze_summary("tfa")
        times.append((time.perf_counter() - t) * 1e3)
    load_times = []
    for _ in range(3):
        t = time.perf_counter()
        _core.load(net_json)
        load_times.append((time.perf_counter() - t) * 1e3)
    peer = statistics.median(times)
    validate = statistics.median(load_times)
    report = runs[True][0]
    print(f"network: {a.flows} background flows, {len(infra['hosts'])} hosts; {a.requests} requests")
    print(
        f"admission: {report['accepted']} accepted, {report['rejected']} rejected (same decisions both ways)"
    )
    medians = {}
    for mode, label in ((False, "whole description (before)"), (True, "incremental (after)")):
        rep, total = runs[mode]
        per = [d["decision_ms"] for d in rep["decisions"]]
        per_analysis = [d["decision_ms"] / d["analyses"] for d in rep["decisions"] if d["analyses"]]
        medians[mode] = statistics.median(per)
        print(
            f"{label}: decision median {medians[mode]:.1f} ms, max {max(per):.1f} ms; per analysis median "
            f"{statistics.median(per_analysis):.1f} ms; total {total:.2f} s"
        )
    print(f"peer, same run: one TFA analysis {peer:.1f} ms, one load+validate {validate:.1f} ms")
    print(f"ratio before / after: {medians[False] / medians[True]:.1f}")
    print(f"ratio after / one analysis: {medians[True] / peer:.2f}")
    print(f"target 10 ms per decision: {'met' if medians[True] <= 10 else 'not met'}")


if __name__ == "__main__":
    main()
