"""What this host can pace, measured: frame transmissions per second a run's processes (user
mode) or its kernel ports and end systems (kernel mode) carry without losing frames or falling
behind their schedule, and what a model offers at its contracts.

The measurement is a run of its own (`calibrate`): a source, a switch and a sink, one token-bucket
flow of 64-byte frames (a burst of ten) on 10 Gbit/s links, at doubling rates until the run loses
more than 0.1 % of its frames or its source releases fewer than 99 % of the frames due (it fell
behind: a late source moves its later releases so as to keep its contract), then once between
the last rate that held and the first that did not. The send lateness is recorded with each step
but not judged: a stall of the host makes it large at any rate, and the verdict of a run deals
with stalls frame by frame. Each step is a short testbed run (about 2 s). The result is
kept in the user's cache directory (``$XDG_CACHE_HOME/rtnetlab/testbed-capacity.json``, else
``~/.cache/...``) with its date and the host it was measured on (name, kernel, processors), and
read back for 30 days on the same host; ``testbed run --calibrate`` measures again.

A model's offer counts what its contracts allow, per second of model time: one frame per BAG (or
period) per VL and plane, a token bucket's rate in its largest frames (the end systems release
them so), each transmitted once by every egress port of the flow's routes (a multicast frame
once per port, not once per destination). A dilated run (``--time-scale K``) offers K times less
per wall-clock second.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import time
from pathlib import Path

from rtnetlab import _core
from rtnetlab.errors import UserError

#: Days a cached measurement is trusted on the same host.
CACHE_DAYS = 30
#: The steps' rates, frames per second through the switch (two transmissions each).
FIRST_FPS = 12_500
MAX_FPS = 800_000
#: What "holds": losses at most this share, at least this share of the frames due released.
MAX_LOSS = 1e-3
MIN_RELEASED = 0.99
STEP_S = 0.5


def offered(plan: dict) -> float:
    """Frame transmissions per second of model time at the flows' contracts."""
    total = 0.0
    for f in plan["flows"]:
        if f["period_ns"]:
            per_s = 1e9 / f["period_ns"]
        else:
            per_s = f["rate_bps"] / ((f["lmax_bytes"] + _core.INTERFRAME_BYTES) * 8)
        ports = {p for r in f["routes"] for p in r["ports"]}
        total += per_s * len(ports)
    return total


def cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    return root / "rtnetlab" / "testbed-capacity.json"


def host_id() -> dict:
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "host": platform.node(),
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "cpu_model": model,
    }


def cached(mode: str) -> dict | None:
    """The cached measurement of `mode` on this host, when recent enough."""
    try:
        doc = json.loads(cache_path().read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("machine") != host_id():
        return None
    m = (doc.get("modes") or {}).get(mode)
    if not isinstance(m, dict) or not isinstance(m.get("transmissions_per_s"), (int, float)):
        return None
    try:
        when = datetime.datetime.fromisoformat(m["measured"])
    except (KeyError, TypeError, ValueError):
        return None
    age = datetime.datetime.now(datetime.timezone.utc) - when
    if age > datetime.timedelta(days=CACHE_DAYS):
        return None
    return {**m, "cached": True, "file": str(cache_path()), **doc["machine"]}


def _store(mode: str, measurement: dict) -> None:
    from rtnetlab.io import output as outfiles

    path = cache_path()
    try:
        doc = json.loads(path.read_text())
        if not isinstance(doc, dict) or doc.get("machine") != host_id():
            doc = {}
    except (OSError, ValueError):
        doc = {}
    doc["machine"] = host_id()
    doc.setdefault("modes", {})[mode] = measurement
    try:
        outfiles.atomic_write(path, json.dumps(doc, indent=1) + "\n")
    except (UserError, OSError):
        pass  # no cache: the next run measures again


CALIBRATION_NET = {
    "name": "rtnetlab-calibration",
    "defaults": {"link_rate": "10Gbps"},
    "end_systems": [{"name": "SRC"}, {"name": "DST"}],
    "switches": [{"name": "SW"}],
    "links": [{"from": "SRC", "to": "SW"}, {"from": "SW", "to": "DST"}],
}


def _step(mode: str, fps: int, rt_priority: int) -> dict:
    from rtnetlab import model
    from rtnetlab.testbed import run as tb

    desc = {
        **CALIBRATION_NET,
        "flows": [
            {
                "name": "load",
                "type": "token_bucket",
                # Ten frames of burst: a sender late by a few frame times catches up. A token
                # bucket counts packets; on the wire each 64-byte frame takes 84 bytes' time.
                "burst": "640B",
                "rate": f"{fps * 64 * 8}bps",
                "min_packet": "64B",
                "max_packet": "64B",
                "source": "SRC",
                "destinations": ["DST"],
            }
        ],
    }
    net = model.load_data(desc, "calibration")
    r = tb.run(
        net,
        desc,
        mode=mode,
        duration_ns=round(STEP_S * 1e9),
        baseline_ns=0,
        simulate=False,
        rt_priority=rt_priority,
        calibrating=True,
    )
    row = r["flows"][0]
    sent = r["stats"]["frames_released"]
    late = r["host"]["send_lateness_us"]["p99_us"] or 0.0
    loss = row["losses"] / sent if sent else 1.0
    expected = fps * STEP_S
    held = loss <= MAX_LOSS and sent >= MIN_RELEASED * expected
    return {
        "frames_per_s": fps,
        "transmissions_per_s": 2 * fps,
        "released": sent,
        "lost": row["losses"],
        "lateness_p99_us": late,
        "held": held,
    }


def calibrate(mode: str, rt_priority: int = 50, say=None) -> dict:
    """Measures `mode` on this host now (about 10-20 s) and caches the result."""
    steps = []
    fps, good, bad = FIRST_FPS, None, None
    started = time.monotonic()
    while fps <= MAX_FPS:
        s = _step(mode, fps, rt_priority)
        steps.append(s)
        if say:
            due = s["frames_per_s"] * STEP_S
            how = "held" if s["held"] else f"did not hold (lost {s['lost']}, released {s['released']:,}"
            how += "" if s["held"] else f" of {due:,.0f})"
            say(f"calibrating {mode} mode: {s['transmissions_per_s']:,} transmissions/s {how}")
        if not s["held"]:
            bad = fps
            break
        good = fps
        fps *= 2
    if good is not None and bad is not None:
        mid = (good + bad) // 2
        s = _step(mode, mid, rt_priority)
        steps.append(s)
        if s["held"]:
            good = mid
    capacity = 2 * (good or 0)
    if good is None:
        # Even the first step did not hold: the host is too busy now; take half of it.
        capacity = FIRST_FPS
    measurement = {
        "transmissions_per_s": capacity,
        "measured": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "seconds": round(time.monotonic() - started, 1),
        "load_average": list(os.getloadavg()),
        "steps": steps,
    }
    _store(mode, measurement)
    return {**measurement, "cached": False, "file": str(cache_path()), **host_id()}


def capacity(mode: str, recalibrate: bool = False, rt_priority: int = 50, say=None) -> dict:
    """The measurement in force for `mode`: cached, or measured now."""
    if not recalibrate:
        c = cached(mode)
        if c is not None:
            return c
    return calibrate(mode, rt_priority, say)
