"""A per-run CPU cap (the "virtualised" server's share of a core): a cgroup named
``rtnl-<token>-vm``, with cgroup v2's cpu.max where the unified hierarchy has the cpu controller,
else cgroup v1's cpu.cfs_quota_us. Removed on every exit path; the caps of runs whose process is
gone (a crash, a kill) are removed by the next run."""

from __future__ import annotations

import time
from contextlib import contextmanager
from pathlib import Path

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


def _remove(path: Path) -> None:
    for _ in range(100):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)  # its last processes are still exiting


def sweep_leftovers() -> None:
    """Removes the caps of runs whose process is gone."""
    from rtnetlab.testbed.netns import PREFIX, _owner_alive

    try:
        root, _ = _root()
    except UserError:
        return
    for d in root.glob(f"{PREFIX}*-vm"):
        token = d.name[len(PREFIX) :].rsplit("-", 1)[0]
        if not _owner_alive(token):
            _remove(d)


@contextmanager
def cpu_cap(prefix: str, share: float):
    """A cgroup capped at `share` of one CPU for the block; yields the path of its cgroup.procs
    (a process writes its pid there before it execs the worker)."""
    root, version = _root()
    path = root / f"{prefix}-vm"
    quota = max(1000, round(share * PERIOD_US))
    try:
        path.mkdir(exist_ok=True)
        if version == 2:
            (path / "cpu.max").write_text(f"{quota} {PERIOD_US}\n")
        else:
            (path / "cpu.cfs_period_us").write_text(f"{PERIOD_US}\n")
            (path / "cpu.cfs_quota_us").write_text(f"{quota}\n")
        yield path / "cgroup.procs"
    except PermissionError as e:
        raise UserError(f"--cpu-cap: cannot create a cgroup ({e.strerror}); needs root") from None
    finally:
        _remove(path)
