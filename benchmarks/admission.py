"""Per-decision time of the VSN admission (seed 001F) on a network already carrying background
flows (5,000 by default, and 1,000 and 20,000 to show how the cost grows with the network), the
whole decision as `rtnetlab admit` takes it: releases of the VSNs whose lifetime ended,
placement, path mapping, trials of the new flows on the live admitted network, the verdict.
Peers measured in the same run: the same admission with every trial on the whole description
loaded, validated and analysed again (the reference, sizes up to --reference-max), one plain
analysis (`Network.analyze_summary`, what `rtnetlab analyze` computes) and one load + validation
of the network. Both admissions must take the same decisions. Reported as milliseconds (median and
p95 per decision) and as ratios.

Run: .venv/bin/python benchmarks/admission.py [--flows 1000 5000 20000] [--requests 40]
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


def requests(n: int, seed: int) -> dict:
    """`n` requests of the experiment's generator, lifetimes of a few arrivals (so that VSNs are
    released along the stream), every virtual link crossing the network; one request in four with
    latency limits below the background's queueing (rejected on `latency`, after the link by link
    search)."""
    reqs = gen.requests(n, seed, mean_gap=1.0, mean_lifetime=6.0)
    for i, r in enumerate(reqs["requests"]):
        # One core per host and components above half a core: every virtual link crosses the
        # network, so that every decision runs the analysis.
        for c in r["components"]:
            c["utilisation"] = 0.6
        for link in r["links"]:
            # Latency limits above the background's queueing (about 80 bursts per host port),
            # or, one request in four, below it.
            link["latency"] = link["jitter"] = "300us" if i % 4 == 3 else "100ms"
            link["class"] = "video" if link["class"] == "bulk" else link["class"]
    return reqs


def p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=20, method="inclusive")[18] if len(xs) > 1 else xs[0]


def measure(flows: int, n_requests: int, seed: int, reference: bool) -> dict:
    infra = infrastructure(flows, seed)
    reqs = requests(n_requests, seed)
    runs = {}
    for mode in (True, False) if reference else (True,):
        t0 = time.perf_counter()
        report = adm.admit(infra, reqs, incremental=mode)
        runs[mode] = (report, time.perf_counter() - t0)
    if reference:
        strip = [
            [{k: v for k, v in d.items() if k != "decision_ms"} for d in runs[m][0]["decisions"]]
            for m in runs
        ]
        assert strip[0] == strip[1], "incremental and whole-description admissions decided differently"
    net_json = json.dumps(infra["network"])
    handle, diags = _core.load(net_json)
    assert handle is not None, diags
    times = []
    for _ in range(3):
        t = time.perf_counter()
        handle.analyze_summary("tfa")
        times.append((time.perf_counter() - t) * 1e3)
    load_times = []
    for _ in range(2):
        t = time.perf_counter()
        _core.load(net_json)
        load_times.append((time.perf_counter() - t) * 1e3)
    out = {"flows": flows, "analysis": statistics.median(times), "load": statistics.median(load_times)}
    rep = runs[True][0]
    out["accepted"], out["rejected"] = rep["accepted"], rep["rejected"]
    out["released"] = sum(len(d["released"]) for d in rep["decisions"])
    out["analyses"] = sum(d["analyses"] for d in rep["decisions"])
    for mode, key in ((True, "incremental"), (False, "whole")):
        if mode in runs:
            per = [d["decision_ms"] for d in runs[mode][0]["decisions"]]
            out[key] = (statistics.median(per), p95(per), max(per))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flows", type=int, nargs="+", default=[1000, 5000, 20000])
    ap.add_argument("--requests", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--reference-max", type=int, default=5000, help="largest network the reference runs on")
    a = ap.parse_args()
    print(f"{a.requests} requests per network; times per decision in ms (median / p95 / max)")
    for flows in a.flows:
        m = measure(flows, a.requests, a.seed, flows <= a.reference_max)
        inc = m["incremental"]
        print(
            f"{flows} background flows: {m['accepted']} accepted, {m['rejected']} rejected, "
            f"{m['released']} released, {m['analyses']} analyses"
            + (" (same decisions both ways)" if "whole" in m else "")
        )
        print(f"  in place (after):            {inc[0]:7.2f} / {inc[1]:7.2f} / {inc[2]:7.2f}")
        if "whole" in m:
            w = m["whole"]
            print(f"  whole description (before):  {w[0]:7.2f} / {w[1]:7.2f} / {w[2]:7.2f}")
            print(f"  ratio before / after (median): {w[0] / inc[0]:.1f}")
        print(
            f"  peers, same run: one TFA analysis {m['analysis']:.1f} ms, "
            f"one load+validate {m['load']:.1f} ms; "
            f"ratio one analysis / decision (median): {m['analysis'] / inc[0]:.1f}"
        )
        print(f"  target 10 ms per decision (median and p95): {'met' if inc[1] <= 10 else 'not met'}")


if __name__ == "__main__":
    main()
