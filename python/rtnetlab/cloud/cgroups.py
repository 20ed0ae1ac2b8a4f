"""CPU caps on Linux control groups for `rtnetlab slrm run`: cgroup v2's `cpu.max` where the
unified hierarchy has the cpu controller, else cgroup v1's `cpu.cfs_quota_us` /
`cpu.cfs_period_us`. One group per run (`rtnl-<id>`), one child per application
(`rtnl-<id>-<k>`), each recorded in the run's record before it is made (`rtnetlab.ownership`: a
group of that name that exists already is not the run's, and is refused); `remove()` deletes
only the run's own groups."""

from __future__ import annotations

import os
from pathlib import Path

from rtnetlab import ownership

ROOT = Path("/sys/fs/cgroup")
#: The bandwidth period of every application's group (the kernel's default, 100 ms).
PERIOD_US = 100_000
#: The kernel's smallest quota per period (1 ms).
MIN_QUOTA_US = 1_000


def detect(root: Path = ROOT) -> tuple[str, Path] | None:
    """("v2", the unified root) when it offers the cpu controller, else ("v1", the cpu
    hierarchy) when it has CFS bandwidth control; None when neither (or not writable)."""
    controllers = root / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        return ("v2", root) if os.access(root, os.W_OK) else None
    for name in ("cpu", "cpu,cpuacct"):
        v1 = root / name
        if (v1 / "cpu.cfs_quota_us").exists():
            return ("v1", v1) if os.access(v1, os.W_OK) else None
    return None


def describe(kind: str) -> str:
    return "cgroup v2 (cpu.max)" if kind == "v2" else "cgroup v1 (cpu.cfs_quota_us / cpu.cfs_period_us)"


def quotas(caps: list[float], period_us: int = PERIOD_US) -> list[int]:
    """Caps in cores as whole quotas (µs per period) whose sum is exactly round(Σcaps·period):
    largest remainders get the rounding, then quotas below the kernel's minimum are raised to
    it, taken from the largest."""
    exact = [c * period_us for c in caps]
    q = [int(x) for x in exact]
    short = round(sum(exact)) - sum(q)
    for i in sorted(range(len(q)), key=lambda i: q[i] - exact[i])[: max(short, 0)]:
        q[i] += 1
    for i in range(len(q)):
        if q[i] < MIN_QUOTA_US:
            need = MIN_QUOTA_US - q[i]
            q[i] = MIN_QUOTA_US
            q[max(range(len(q)), key=lambda j: q[j])] -= need
    return q


class RunGroups:
    """The groups of run `own`. `create` makes them, `set_quota`/`read_quota` cap one
    application, `attach` moves a process in, `remove` deletes them (the processes must be gone)."""

    def __init__(self, kind: str, base: Path, own: ownership.Run, count: int):
        self.kind = kind
        self.own = own
        self.parent = base / own.name
        self.children = [self.parent / f"{own.name}-{k}" for k in range(count)]
        self.created: list[dict] = []

    def create(self) -> None:
        self.created.append(self.own.make_cgroup(self.parent))
        if self.kind == "v2":
            (self.parent / "cgroup.subtree_control").write_text("+cpu")
        for c in self.children:
            self.created.append(self.own.make_cgroup(c))
            if self.kind == "v1":
                (c / "cpu.cfs_period_us").write_text(str(PERIOD_US))

    def set_quota(self, k: int, quota_us: int) -> None:
        c = self.children[k]
        if self.kind == "v2":
            (c / "cpu.max").write_text(f"{quota_us} {PERIOD_US}")
        else:
            (c / "cpu.cfs_quota_us").write_text(str(quota_us))

    def read_quota(self, k: int) -> int:
        """The quota in force, read back from the kernel (µs per PERIOD_US; -1: none)."""
        c = self.children[k]
        if self.kind == "v2":
            q, p = (c / "cpu.max").read_text().split()
            return -1 if q == "max" else round(int(q) * PERIOD_US / int(p))
        q = int((c / "cpu.cfs_quota_us").read_text())
        return q if q < 0 else round(q * PERIOD_US / int((c / "cpu.cfs_period_us").read_text()))

    def attach(self, k: int, pid: int) -> None:
        (self.children[k] / "cgroup.procs").write_text(str(pid))

    def remove(self) -> list[str]:
        """Deletes the groups, children first (waiting while the kernel still counts exiting
        tasks). Returns the groups that could not be removed (with why)."""
        left, _ = ownership.remove_objects(self.created)
        if not left:
            self.own.forget(*self.created)
        self.created.clear()
        return left
