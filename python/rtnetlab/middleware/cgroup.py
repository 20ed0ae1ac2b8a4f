"""A per-run CPU cap (the "virtualised" server's share of a core): a cgroup named
``rtnl-<token>-vm``, with cgroup v2's cpu.max where the unified hierarchy has the cpu controller,
else cgroup v1's cpu.cfs_quota_us. It is recorded in the run's record before it is made (a group
of that name that exists already is not the run's: refused), and removed on every exit path of
the run; a killed run's by `rtnetlab testbed down --all`."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from rtnetlab import ownership
from rtnetlab.errors import UserError

PERIOD_US = 100_000
V2_ROOT = Path("/sys/fs/cgroup")
V1_ROOT = Path("/sys/fs/cgroup/cpu")


def _root() -> tuple[Path, int]:
    ctl = V2_ROOT / "cgroup.controllers"
    if ctl.exists() and "cpu" in ctl.read_text().split():
        return V2_ROOT, 2
    if (V1_ROOT / "cpu.cfs_quota_us").exists():
        return V1_ROOT, 1
    raise UserError("--cpu-cap: no cgroup cpu controller (v2 cpu.max or v1 cpu.cfs_quota_us) on this host")


@contextmanager
def cpu_cap(own: ownership.Run, share: float):
    """A cgroup of run `own` capped at `share` of one CPU for the block; yields the path of its
    cgroup.procs (a process writes its pid there before it execs the worker)."""
    root, version = _root()
    path = root / f"{own.name}-vm"
    quota = max(1000, round(share * PERIOD_US))
    try:
        entry = own.make_cgroup(path)
    except UserError as e:
        raise UserError(f"--cpu-cap: {e}") from None
    try:
        if version == 2:
            (path / "cpu.max").write_text(f"{quota} {PERIOD_US}\n")
        else:
            (path / "cpu.cfs_period_us").write_text(f"{PERIOD_US}\n")
            (path / "cpu.cfs_quota_us").write_text(f"{quota}\n")
        yield path / "cgroup.procs"
    except PermissionError as e:
        raise UserError(f"--cpu-cap: cannot configure a cgroup ({e.strerror}); needs root") from None
    finally:
        # Its processes (the run's workers) are stopped by then; the run removes it if it cannot
        # be removed yet.
        left, _ = ownership.remove_objects([entry])
        if not left:
            own.forget(entry)
