"""The publish/subscribe latency experiment of seed 001A: one publisher and N subscriber processes
per backend, subscriber count and payload size; the latency of a message is its arrival stamp at
a subscriber minus its send stamp (both CLOCK_MONOTONIC, one host), warm-up discarded, every
subscriber's samples pooled in the row."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from rtnetlab import ownership
from rtnetlab.middleware.backends import NAMES
from rtnetlab.middleware.host import describe
from rtnetlab.middleware.placement import LINK_BPS, placed
from rtnetlab.middleware.procs import Workers, measure_cases
from rtnetlab.middleware.stats import quantile_sketch, summary

ROW_KEYS = (
    "backend",
    "subscribers",
    "payload_bytes",
    "placement",
    "count",
    "lost",
    "min_us",
    "mean_us",
    "stdev_us",
    "p99_us",
    "max_us",
)
#: The smallest payload: the sequence number and the send stamp.
MIN_PAYLOAD = 16


def _cpu(k: int) -> int:
    n = os.cpu_count() or 1
    return k % n


def run_one(
    ws: Workers,
    place,
    tmp: Path,
    backend: str,
    subs: int,
    payload: int,
    messages: int,
    warmup: int,
    period_ns: int,
    rt: bool,
    sched: list,
) -> dict:
    pub_board, sub_board = (0, 1) if place.kind == "two-boards" else (0, 0)
    what = f"{backend} ({subs} subscriber(s), {payload} B)"
    ipc_dir = tmp / "ipc"
    ipc_dir.mkdir(exist_ok=True)
    subs_w = []
    for i in range(subs):
        spec = {
            "role": "sub",
            "backend": backend,
            "settings": {**place.settings(sub_board), "ipc_dir": str(ipc_dir)},
            "topic": "rtnetlab_latency",
            "messages": messages,
            "out": str(tmp / f"sub{i}.npy"),
            "cpu": _cpu(1 + i),
            "rt": rt,
        }
        subs_w.append(ws.start(place.prefix(sub_board), spec, f"{backend}-sub{i}"))
    endpoints, granted = [], []
    for w in subs_w:
        m = w.expect("ready", 60, what)
        endpoints.append(m["endpoint"])
        granted.append(m)
    pub = ws.start(
        place.prefix(pub_board),
        {
            "role": "pub",
            "backend": backend,
            "settings": {**place.settings(pub_board), "ipc_dir": str(ipc_dir)},
            "topic": "rtnetlab_latency",
            "peers": endpoints,
            "messages": messages,
            "warmup": warmup,
            "period_ns": period_ns,
            "payload": payload,
            "cpu": _cpu(0),
            "rt": rt,
        },
        f"{backend}-pub",
    )
    granted.append(pub.expect("ready", 60, what))
    for w in subs_w:
        w.expect("warm", 60, f"{what}: subscribers never matched the publisher")
    before = place.link_bytes()
    started = time.monotonic()
    pub.send("go")
    pub.expect("done", (messages + warmup) * period_ns / 1e9 * 3 + 30, what)
    after = place.link_bytes()
    elapsed = time.monotonic() - started
    samples = []
    for i, w in enumerate(subs_w):
        w.expect("done", 30, what)
        lat = np.load(tmp / f"sub{i}.npy")
        samples.append(lat[lat >= 0])
    pooled = np.concatenate(samples) if samples else np.zeros(0)
    sched.extend(granted)
    row = {"backend": backend, "subscribers": subs, "payload_bytes": payload, "placement": place.kind}
    s = summary(pooled.tolist())
    row.update({"count": s["count"], "lost": messages * subs - s["count"]})
    row.update({k: s[k] for k in ("min_us", "mean_us", "stdev_us", "p99_us", "max_us")})
    row["period_us"] = period_ns / 1000
    row["quantiles_us"] = quantile_sketch(pooled.tolist())
    if before is not None and after is not None:
        link_checks(row, after - before, elapsed, s["count"], subs, payload, period_ns)
    return row


def link_checks(
    row: dict, link_bytes: int, elapsed_s: float, received: int, subs: int, payload: int, period_ns: int
) -> None:
    """Two boards: what crossed the link during the row, against what the row had to carry.
    `bypassed`: fewer bytes on the link than the payloads of the `received` samples alone (each
    reached a subscriber on the other board: shared memory or another way round the modelled
    link); `overloaded`: the payloads alone ask more than the link's rate. Samples a middleware
    dropped (ZeroMQ at its high-water mark under overload) never had to cross: counted against
    the link they flagged an overloaded row as bypassed."""
    needed = received * payload
    offered_bps = subs * payload * 8 / (period_ns / 1e9)
    row["link_bytes"] = link_bytes
    row["link_mbps"] = link_bytes * 8 / elapsed_s / 1e6 if elapsed_s > 0 else None
    row["offered_mbps"] = offered_bps / 1e6
    row["bypassed"] = link_bytes < needed
    row["overloaded"] = offered_bps > LINK_BPS
    warnings = []
    if row["overloaded"]:
        warnings.append(
            f"OVERLOADED: the payloads alone offer {offered_bps / 1e6:,.1f} Mbit/s on the "
            f"{LINK_BPS / 1e6:g} Mbit/s link: latencies grow with the run, not the middleware"
        )
    if row["bypassed"]:
        warnings.append(
            f"the link carried {link_bytes:,} B for {needed:,} B of payloads received across it: samples "
            "went round it"
        )
    row["warnings"] = warnings


def measure_noise(tmp: Path, seconds: float, rt: bool) -> dict:
    """The host's timer noise (the `host` figures), probed by a worker of its own."""
    if seconds <= 0:
        return {}
    with Workers(tmp) as ws:
        w = ws.start([], {"role": "noise", "seconds": seconds, "cpu": _cpu(1), "rt": rt}, "noise")
        m = w.expect("noise", seconds * 3 + 30, "timer noise probe")
    return {
        "noise_us": m["noise"]["max_us"],
        "noise_p99_us": m["noise"]["p99_us"],
        "noise_mean_us": m["noise"]["mean_us"],
    }


def run(
    backends: list[str],
    subscribers: list[int],
    payloads: list[int],
    messages: int,
    placement: str,
    warmup: int = 100,
    period_ns: int = 1_000_000,
    rt: bool = True,
    noise_s: float = 1.0,
    progress=None,
    ddsperf: bool = False,
) -> dict:
    """Every combination; a backend that is not installed or fails to start is reported in
    `skipped` (one line naming it) and the others run."""
    rows, skipped, sched = [], [], []
    host = describe()
    with ownership.Run("middleware pubsub") as own, placed(placement, own) as place:
        tmp = own.folder()
        host.update(measure_noise(tmp, noise_s, rt))
        for backend in backends:
            if backend == "zeromq-ipc" and placement == "two-boards":
                skipped.append(
                    "zeromq-ipc: a Unix socket does not cross boards; not run with --placement two-boards"
                )
                continue
            measure_cases(
                tmp,
                [(subs, payload) for subs in subscribers for payload in payloads],
                lambda ws, subs, payload, backend=backend: run_one(
                    ws, place, tmp, backend, subs, payload, messages, warmup, period_ns, rt, sched
                ),
                rows,
                skipped,
                progress,
            )
        if ddsperf and "dds" in backends and placement == "local":
            from rtnetlab.middleware.ddsperf import cross_check

            cross = cross_check(place.settings(0), payloads)
    host["rt_granted"] = bool(sched) and all(m.get("rt_granted") for m in sched)
    host["pinned"] = bool(sched) and all(m.get("pinned") is not None for m in sched)
    refused = sorted({r for m in sched for r in m.get("refused", [])})
    host["scheduling"] = refused or (
        ["SCHED_FIFO at maximum priority, every process pinned"] if rt else ["default scheduler (--no-rt)"]
    )
    report = {"host": host, "rows": rows, "skipped": skipped, "known_backends": list(NAMES)}
    if ddsperf and "dds" in backends and placement == "local":
        report["ddsperf"] = cross
    return report
