"""The host side of a measurement: real-time priority and CPU pinning of a process (when the
kernel allows them), the host's description, and its timer noise measured in the same run."""

from __future__ import annotations

import os
import platform
import time

from rtnetlab.middleware.stats import summary


def make_realtime(cpu: int | None, rt: bool, below_max: int = 0) -> dict:
    """SCHED_FIFO at the maximum priority (less `below_max`) and pinning to `cpu`, each when
    allowed; what was granted, and why not when it was refused."""
    got = {"rt_granted": False, "pinned": None, "refused": []}
    if cpu is not None:
        try:
            os.sched_setaffinity(0, {cpu})
            got["pinned"] = cpu
        except OSError as e:
            got["refused"].append(f"CPU pinning refused ({e.strerror})")
    if rt:
        try:
            os.sched_setscheduler(
                0, os.SCHED_FIFO, os.sched_param(os.sched_get_priority_max(os.SCHED_FIFO) - below_max)
            )
            got["rt_granted"] = True
        except (OSError, AttributeError) as e:
            got["refused"].append(f"SCHED_FIFO refused ({getattr(e, 'strerror', e)})")
    return got


def timer_noise(seconds: float, interval_us: float = 200.0) -> dict:
    """A cyclictest-like loop: sleep `interval_us`, and take how late the wake-up is (the host's
    and the interpreter's timer noise, what every stamp of the run also suffers)."""
    late = []
    end = time.monotonic_ns() + int(seconds * 1e9)
    step = interval_us * 1e-6
    while True:
        target = time.monotonic_ns() + int(interval_us * 1000)
        time.sleep(step)
        now = time.monotonic_ns()
        late.append(max(0, now - target))
        if now >= end:
            break
    s = summary(late)
    return {"count": s["count"], "mean_us": s["mean_us"], "p99_us": s["p99_us"], "max_us": s["max_us"]}


def describe() -> dict:
    """Kernel, CPU count and model of this host."""
    model = None
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "python": platform.python_version(),
    }
