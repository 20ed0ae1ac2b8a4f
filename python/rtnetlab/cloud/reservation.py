"""A real check of a CPU reservation with Linux SCHED_DEADLINE (the CBS/EDF scheduler seed 001F
relies on): a spinning component under a reservation (Q, T) receives Q/T of a CPU while every
CPU is also loaded by ordinary (SCHED_OTHER) spinners. The host's own noise is measured in the
same run: the share an ordinary spinner gets alone, before. The spinners are children of this
command, named with the run's name on their command line and recorded in its record
(`rtnetlab.ownership`); they are killed on every exit path (normal end, error, Ctrl-C, SIGTERM)
and die with the command if it is killed outright (parent-death signal)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

from rtnetlab import ownership

SPIN = """
import json, sys, time
d = float(sys.argv[1])
t0 = time.monotonic(); c0 = time.thread_time()
while time.monotonic() - t0 < d:
    pass
print(json.dumps({"wall": time.monotonic() - t0, "cpu": time.thread_time() - c0}))
"""


def _python() -> str:
    # The interpreter itself, not a launcher that forks: a SCHED_DEADLINE task may not fork.
    return os.path.realpath(sys.executable)


def _spin(prefix: str, role: str, seconds: float, wrap: list[str] | None = None) -> subprocess.Popen:
    cmd = [*(wrap or []), _python(), "-c", SPIN, str(seconds), f"{prefix}-{role}"]
    return ownership.spawn(
        cmd, what=f"spinner {role}", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _share(p: subprocess.Popen, timeout: float) -> tuple[float | None, str]:
    out, err = p.communicate(timeout=timeout)
    if p.returncode != 0:
        return None, (err.strip().splitlines() or ["exit code " + str(p.returncode)])[-1]
    m = json.loads(out)
    return m["cpu"] / m["wall"], ""


def check(
    runtime_ns: int = 3_000_000, period_ns: int = 10_000_000, seconds: float = 2.0, tolerance: float = 0.02
) -> dict:
    """Runs the check; returns {"skipped": reason} when SCHED_DEADLINE is refused or missing."""
    chrt = shutil.which("chrt")
    if chrt is None:
        return {"skipped": "chrt (util-linux) not found"}
    expected = runtime_ns / period_ns
    procs: list[subprocess.Popen] = []
    with ownership.Run("experiment reservation") as own:
        prefix = own.name
        try:
            # Noise: an ordinary spinner alone.
            p = _spin(prefix, "noise", seconds / 2)
            procs.append(p)
            alone, _ = _share(p, seconds * 5 + 10)
            # Contention: one ordinary spinner per CPU, then the reserved spinner.
            hogs = [_spin(prefix, f"hog{i}", seconds + 1) for i in range(os.cpu_count() or 1)]
            procs += hogs
            time.sleep(0.1)
            wrap = [
                chrt, "--deadline", "--sched-runtime", str(runtime_ns),
                "--sched-deadline", str(period_ns), "--sched-period", str(period_ns), "0",
            ]  # fmt: skip
            p = _spin(prefix, "reserved", seconds, wrap)
            procs.append(p)
            share, why = _share(p, seconds * 5 + 10)
            if share is None:
                return {"skipped": f"SCHED_DEADLINE refused: {why}", "prefix": prefix}
            return {
                "prefix": prefix,
                "runtime_ns": runtime_ns,
                "period_ns": period_ns,
                "seconds": seconds,
                "expected_share": expected,
                "measured_share": share,
                "tolerance": tolerance,
                "within_tolerance": abs(share - expected) <= tolerance,
                "contending_spinners": len(hogs),
                "noise_ordinary_share_alone": alone,
            }
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
            for p in procs:
                try:
                    p.communicate(timeout=5)
                except Exception:  # noqa: BLE001 - already killed; nothing more to do
                    pass
                own.ended(p.pid)
