"""A native cross-check of the dds rows: Cyclone DDS's own ddsperf (Debian's cyclonedds-tools, C)
pinging a ddsperf pong on the same interface, configuration and a domain of this run, one payload
size at a time. ddsperf reports round trips; half of one is comparable to the harness's one-way
latency, and the difference is the Python binding's and the harness's cost."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from rtnetlab import ownership
from rtnetlab.middleware.backends.dds import config_xml

LINE = re.compile(
    r"size (\d+) mean ([\d.]+)us min ([\d.]+)us 50% ([\d.]+)us 90% ([\d.]+)us "
    r"99% ([\d.]+)us max ([\d.]+)us cnt (\d+)"
)


def parse(text: str) -> dict | None:
    """Round-trip statistics over every per-second line of ddsperf's ping output: mean weighted by
    the lines' counts, min and max over them, the worst per-second p99."""
    rows = [m.groups() for m in LINE.finditer(text)]
    if not rows:
        return None
    cnt = [int(r[7]) for r in rows]
    total = sum(cnt)
    if total == 0:
        return None
    return {
        "count": total,
        "rtt_mean_us": sum(float(r[1]) * c for r, c in zip(rows, cnt, strict=True)) / total,
        "rtt_min_us": min(float(r[2]) for r in rows),
        "rtt_p99_us": max(float(r[5]) for r in rows),
        "rtt_max_us": max(float(r[6]) for r in rows),
    }


def cross_check(settings: dict, payloads: list[int], seconds: float = 3.0, rate_hz: int = 1000) -> dict:
    """{"available": bool, "rows": [...]} or the reason it did not run."""
    exe = shutil.which("ddsperf")
    if exe is None:
        return {"available": False, "reason": "ddsperf is not installed (Debian package cyclonedds-tools)"}
    env = {**os.environ, "CYCLONEDDS_URI": config_xml(settings["interface"], settings["peers"])}
    domain = str(settings["domain"])
    rows = []
    for size in payloads:
        dur = str(max(1, round(seconds)))
        # Both die with this process and are recorded in its run.
        pong = ownership.spawn(
            [exe, "-i", domain, "-D", str(int(dur) + 3), "pong"],
            what="ddsperf pong",
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        ping = None
        try:
            ping = ownership.spawn(
                [
                    exe,
                    "-i",
                    domain,
                    "-D",
                    dur,
                    "-Qminmatch:1",
                    "-Qinitwait:5",
                    "ping",
                    f"{rate_hz}Hz",
                    "size",
                    str(size),
                ],
                what="ddsperf ping",
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                out, err = ping.communicate(timeout=seconds + 30)
            except subprocess.TimeoutExpired:
                ping.kill()
                out, err = ping.communicate()
        finally:
            for q in (pong, ping):
                if q is not None:
                    ownership.stop(q)
        stats = parse(out)
        if stats is None:
            return {
                "available": False,
                "reason": f"ddsperf gave no round trip ({(err or out).strip()[-200:]})",
            }
        rows.append({"payload_bytes": size, **stats, "one_way_mean_us": stats["rtt_mean_us"] / 2})
    return {"available": True, "rows": rows}
