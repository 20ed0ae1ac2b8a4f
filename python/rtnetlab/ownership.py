"""What a run of rtnetlab creates on the host, recorded before it is created, and removed from
that record alone.

A long command (a testbed run, a middleware measurement, ``slrm run``, ``experiment
reservation``) is one run, named ``rtnl-<token>``. Its record, ``STATE/rtnl-<token>.json``, says
which process owns the run (pid and start time) and lists, in the order they were made, the
objects made for it:

    {"version": 1, "run": "rtnl-3fa9c1", "command": "testbed run", "kept": false,
     "owner": {"pid": 4242, "start": 912345, "uid": 0},
     "objects": [{"kind": "folder", "path": "/run/rtnetlab/rtnl-3fa9c1"},
                 {"kind": "netns", "name": "rtnl-3fa9c1-0"},
                 {"kind": "cgroup", "path": "/sys/fs/cgroup/cpu/rtnl-3fa9c1-vm"},
                 {"kind": "process", "pid": 4250, "start": 912399, "what": "node ES1"},
                 {"kind": "capture", "path": "/home/me/caps/rtnl-3fa9c1"}]}

A namespace, control group or folder is recorded before it is made (and forgotten again when
making it fails, e.g. because the name is taken); a process as soon as it has a pid, its start
time (clock ticks since boot, /proc/PID/stat) beside it, since a pid alone may belong to someone
else by then. Removal (`Run.close` on every exit path of the run, `clean` for runs whose process
is gone) acts on the record only: a process is killed only while its start time still matches,
a name is removed only if the record has it. ``kind: capture`` (the user's output) is recorded
and never removed.

STATE is ``/run/rtnetlab`` for root; other users get ``$XDG_RUNTIME_DIR/rtnetlab`` or else
``/tmp/rtnetlab-<uid>`` (``RTNETLAB_STATE_DIR`` overrides both). It is created 0700 and refused
when it is a symbolic link, is not a directory, belongs to someone else or others may write in
it. Each run also gets a private folder there (``STATE/rtnl-<token>/``) for its temporary files.

Children die with the process that started them: `spawn` sets their parent-death signal
(PR_SET_PDEATHSIG) before they exec (a tiny launcher, or the child itself for rtnetlab's own
programs, which call `die_with_parent` first), then checks that its parent is still the one that
started it, closing the race of a parent dying in between.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from rtnetlab.errors import UserError

PREFIX = "rtnl-"
ROOT_STATE_DIR = Path("/run/rtnetlab")
NETNS_DIR = Path("/run/netns")
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: Set in a child's environment by `spawn`: the pid its parent-death signal refers to.
PARENT_ENV = "RTNETLAB_PARENT_PID"
STATE_ENV = "RTNETLAB_STATE_DIR"
VERSION = 1
#: How long removal waits for a killed process to be gone, and for a group to empty.
WAIT_S = 3.0

_PR_SET_PDEATHSIG = 1

#: Run by `spawn` in front of a program that cannot set its parent-death signal itself: set it,
#: check the parent is still there (it may have died between fork and prctl), exec the program.
_LAUNCHER = (
    "import ctypes,os,sys\n"
    "ctypes.CDLL(None,use_errno=True).prctl(1,int(sys.argv[2]),0,0,0)\n"
    "os.getppid()==int(sys.argv[1]) or os._exit(1)\n"
    "os.environ.pop('RTNETLAB_PARENT_PID',None)\n"
    "os.execvp(sys.argv[3],sys.argv[3:])\n"
)


# --- processes ------------------------------------------------------------------------------


def start_time(pid: int) -> int | None:
    """Clock ticks from boot to the start of `pid` (None: no such process)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def running(pid: int, start: int | None) -> bool:
    """Whether `pid` is still the process that started at `start` and has not exited (a zombie,
    exited and waiting to be reaped, no longer runs)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return fields[0] not in ("Z", "X") and start is not None and fields[19] == str(start)


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Called first by rtnetlab's own child programs: die with the process that started us
    (`spawn` put its pid in the environment), and exit now if it is already gone."""
    parent = os.environ.pop(PARENT_ENV, None)
    if not parent:
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != int(parent):
        os._exit(1)


def spawn(args: list[str], *, what: str, own: Run | None = None, sig: int = signal.SIGKILL,
          guarded: bool = False, **popen) -> subprocess.Popen:  # fmt: skip
    """Starts `args` so that it dies with this process (signal `sig`), and records it in `own`
    (default: the run in progress, if any). `guarded`: the program calls `die_with_parent`
    itself (rtnetlab's own children); otherwise a launcher sets the signal before exec."""
    env = dict(popen.pop("env", None) or os.environ)
    env[PARENT_ENV] = str(os.getpid())
    if not guarded:
        args = [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(os.getpid()), str(int(sig)), *args]
    p = subprocess.Popen(args, env=env, **popen)
    run = own if own is not None else current()
    if run is not None:
        run.add_process(p.pid, what)
    return p


def stop(p: subprocess.Popen, timeout: float = 3.0, sig: int = signal.SIGTERM) -> None:
    """Ends a child started by `spawn` (`sig`, then SIGKILL after `timeout` seconds), waits for it
    and takes it out of the record of the run in progress."""
    if p.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            p.send_signal(sig)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    run = current()
    if run is not None:
        run.ended(p.pid)


def _kill_and_wait(procs: list[tuple[int, int | None]], wait: float = WAIT_S) -> list[int]:
    """SIGKILL to each (pid, start) still running as recorded; waits until they are gone.
    Returns the pids still running after `wait` seconds."""
    for pid, start in procs:
        if running(pid, start):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + wait
    alive = [(p, s) for p, s in procs if running(p, s)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.01)
        alive = [(p, s) for p, s in alive if running(p, s)]
    for pid, _ in procs:
        # Those that are our own children: reaped, not left as zombies.
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)
    return [p for p, _ in alive]


# --- the state directory --------------------------------------------------------------------


def state_dir(create: bool = True) -> Path | None:
    """The directory of the records (see the module's docstring), checked; None when it does not
    exist and `create` is false."""
    override = os.environ.get(STATE_ENV)
    if override:
        path = Path(override)
    elif os.geteuid() == 0:
        path = ROOT_STATE_DIR
    else:
        xdg = os.environ.get("XDG_RUNTIME_DIR")
        base = Path(xdg) if xdg and _owned_private_dir(Path(xdg)) else None
        path = base / "rtnetlab" if base else Path(f"/tmp/rtnetlab-{os.geteuid()}")
    return private_dir(path, create, what="state directory")


def _owned_private_dir(path: Path) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def private_dir(path: Path, create: bool, what: str) -> Path | None:
    """`path` as a directory only this user may use: made 0700 if missing; refused (UserError,
    naming it) when it is a symbolic link, not a directory, someone else's, or writable by
    others. Read permission of others is taken away."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            return None
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass  # made meanwhile: checked below like any other
        except OSError as e:
            raise UserError(f"{what} {path}: cannot be created ({e.strerror})") from None
        st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise UserError(f"{what} {path}: is a symbolic link; refused (remove it, rtnetlab makes its own)")
    if not stat.S_ISDIR(st.st_mode):
        raise UserError(f"{what} {path}: is not a directory; refused")
    if st.st_uid != os.geteuid():
        raise UserError(f"{what} {path}: belongs to uid {st.st_uid}, not to this user; refused")
    if st.st_mode & 0o022:
        raise UserError(f"{what} {path}: others may write in it (mode {st.st_mode & 0o777:o}); refused")
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


# --- one run --------------------------------------------------------------------------------

_current: list[Run] = []


def current() -> Run | None:
    """The run in progress in this process (the innermost `with Run(...)`), if any."""
    return _current[-1] if _current else None


class Run:
    """One run's record. `with Run("testbed run") as run:` writes it, and removes every object
    it lists (and the record) when the block ends, however it ends; `keep(kinds)` leaves objects
    of those kinds in place, and their record, for `testbed down`."""

    def __init__(self, command: str, token: str | None = None):
        self.command = command
        made = state_dir(create=True)
        assert made is not None  # created, or refused with an error
        self.dir: Path = made
        self.token = token or self._free_token()
        self.name = f"{PREFIX}{self.token}"
        self.objects: list[dict] = []
        self.kept = False
        self._keep_kinds: set[str] = set()
        self._folder: Path | None = None
        self.owner = {"pid": os.getpid(), "start": start_time(os.getpid()), "uid": os.geteuid()}
        self._write()

    def _free_token(self) -> str:
        """A token no namespace uses, its record file claimed (created exclusively) at once, so
        that two runs starting together cannot take the same one."""
        taken = {p.name for p in NETNS_DIR.glob(f"{PREFIX}*")} if NETNS_DIR.is_dir() else set()
        while True:
            token = secrets.token_hex(3)
            name = f"{PREFIX}{token}"
            if any(t == name or t.startswith(name + "-") for t in taken):
                continue
            try:
                fd = os.open(
                    self.dir / f"{name}.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600
                )
            except FileExistsError:
                continue
            os.close(fd)
            return token

    @property
    def path(self) -> Path:
        return self.dir / f"{self.name}.json"

    def _write(self) -> None:
        doc = {
            "version": VERSION,
            "run": self.name,
            "command": self.command,
            "kept": self.kept,
            "owner": self.owner,
            "objects": self.objects,
        }
        tmp = self.dir / f".{self.name}.json.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(doc))
        os.replace(tmp, self.path)

    # Recording.

    def record(self, *entries: dict) -> None:
        """Records objects about to be made (call it before making them)."""
        self.objects.extend(entries)
        self._write()

    def forget(self, *entries: dict) -> None:
        """Drops objects from the record: gone, or never made (their name was taken)."""
        ids = {id(e) for e in entries}
        self.objects = [o for o in self.objects if id(o) not in ids]
        self._write()

    def add_process(self, pid: int, what: str) -> dict:
        entry = {"kind": "process", "pid": pid, "start": start_time(pid), "what": what}
        self.record(entry)
        return entry

    def ended(self, pid: int) -> None:
        """A recorded process that has ended (and was waited for): out of the record."""
        self.forget(*[o for o in self.objects if o["kind"] == "process" and o["pid"] == pid])

    def folder(self) -> Path:
        """The run's private folder (0700, inside the state directory), made on first use."""
        if self._folder is None:
            path = self.dir / self.name
            entry = {"kind": "folder", "path": str(path)}
            self.record(entry)
            try:
                os.mkdir(path, 0o700)
            except OSError as e:
                self.forget(entry)
                raise UserError(f"run {self.name}: its folder {path} cannot be made ({e.strerror})") from None
            self._folder = path
        return self._folder

    def make_cgroup(self, path: Path) -> dict:
        """A control group of this run: recorded, then made; refused when the name exists (it is
        not this run's)."""
        entry = {"kind": "cgroup", "path": str(path)}
        self.record(entry)
        try:
            os.mkdir(path)
        except OSError as e:
            self.forget(entry)
            why = "exists and is not this run's" if e.errno == errno.EEXIST else e.strerror
            raise UserError(f"cgroup {path}: {why}") from None
        return entry

    # Ending.

    def keep(self, *kinds: str) -> None:
        """At the end, leave the objects of `kinds` (and the record naming them) in place."""
        self.kept = True
        self._keep_kinds = set(kinds)

    def close(self) -> list[str]:
        """Removes every recorded object (but those kept) and the record, signals held meanwhile.
        Returns what could not be removed, one line each."""
        with held_signals():
            keep = self._keep_kinds if self.kept else set()
            gone = [o for o in self.objects if o["kind"] not in keep and o["kind"] != "capture"]
            left, _ = _remove(gone)
            # What could not be removed stays recorded, for `testbed down` to try again.
            self.objects = [o for o in self.objects if o["kind"] in keep] + [o for o, _ in left]
            if self.objects:
                self._write()
            else:
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()
        return [why for _, why in left]

    def __enter__(self) -> Run:
        _current.append(self)
        return self

    def __exit__(self, *exc) -> Literal[False]:
        with contextlib.suppress(ValueError):
            _current.remove(self)
        left = self.close()
        if left and exc[0] is None:
            raise UserError(f"run {self.name}: could not remove {'; '.join(left)}")
        return False


@contextlib.contextmanager
def held_signals():
    """SIGINT and SIGTERM wait until the block is done (then act as usual)."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    except (ValueError, OSError):
        old = None
    try:
        yield
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


# --- removal --------------------------------------------------------------------------------


def _describe(o: dict) -> str:
    if o["kind"] == "process":
        return f"process {o['pid']} ({o.get('what', '?')})"
    if o["kind"] == "netns":
        return o["name"]
    return f"{o['kind']} {o['path']}"


def remove_netns(name: str) -> str | None:
    if "/" in name or not name.startswith(PREFIX):
        return f"namespace {name!r}: not a name rtnetlab makes; left alone"
    for _ in range(50):
        if not (NETNS_DIR / name).exists():
            return None
        try:
            p = subprocess.run(["ip", "netns", "del", name], capture_output=True, text=True)
        except FileNotFoundError:
            return f"namespace {name}: the `ip` command (iproute2) is missing"
        if p.returncode == 0:
            return None
        time.sleep(0.05)
    return f"namespace {name}: {p.stderr.strip() or 'not removed'}"


def _under_cgroupfs(path: Path) -> bool:
    return path.is_absolute() and CGROUP_ROOT in path.parents and ".." not in path.parts


def _remove_cgroup(path: Path, wait: float = WAIT_S) -> str | None:
    """rmdir of a group, its sub-groups first; waits while the kernel still counts exiting tasks."""
    if not _under_cgroupfs(path) or not path.name.startswith(PREFIX):
        return f"cgroup {path}: not a group rtnetlab makes; left alone"
    try:
        subs = [p for p in path.iterdir() if p.is_dir() and not p.is_symlink()]
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"cgroup {path}: {e.strerror}"
    for sub in subs:
        why = _remove_cgroup(sub, wait) if sub.name.startswith(PREFIX) else f"cgroup {sub}: not rtnetlab's"
        if why:
            return why
    deadline = time.monotonic() + wait
    while True:
        try:
            path.rmdir()
            return None
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno == errno.EBUSY and time.monotonic() < deadline:
                time.sleep(0.02)
                continue
            return f"cgroup {path}: {e.strerror} (processes not of this run are in it)"


def _remove_folder(path: Path) -> str | None:
    """A run's private folder: in the state directory, named after a run, still a directory of
    this user."""
    home = state_dir(create=False)
    if home is None or path.parent != home or not path.name.startswith(PREFIX):
        return f"folder {path}: not a run's private folder; left alone"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        return f"folder {path}: no longer the run's own folder; left alone"
    try:
        shutil.rmtree(path)  # never follows symbolic links inside (rmtree.avoids_symlink_attacks)
    except OSError as e:
        return f"folder {path}: {e.strerror}"
    return None


def remove_objects(objects: Iterable[dict]) -> tuple[list[str], list[str]]:
    """Removes recorded objects: processes first (killed only while their start time matches),
    then the others in reverse order of their making. Returns (left, removed), one line each;
    objects already gone (a process that ended, a name never made) are in neither."""
    left, removed = _remove(objects)
    return [why for _, why in left], removed


def _remove(objects: Iterable[dict]) -> tuple[list[tuple[dict, str]], list[str]]:
    """`remove_objects`, what is left with its entry."""
    objects = list(objects)
    left: list[tuple[dict, str]] = []
    removed: list[str] = []
    procs = [o for o in objects if o["kind"] == "process" and running(o["pid"], o.get("start"))]
    still = set(_kill_and_wait([(o["pid"], o.get("start")) for o in procs]))
    for o in procs:
        if o["pid"] in still:
            left.append((o, f"{_describe(o)}: still running"))
        else:
            removed.append(_describe(o))
    for o in reversed([o for o in objects if o["kind"] != "process"]):
        kind = o["kind"]
        where = NETNS_DIR / o["name"] if kind == "netns" else Path(o.get("path", ""))
        if kind != "capture" and not os.path.lexists(where):
            continue
        if kind == "netns":
            why = remove_netns(o["name"])
        elif kind == "cgroup":
            why = _remove_cgroup(Path(o["path"]))
        elif kind == "folder":
            why = _remove_folder(Path(o["path"]))
        elif kind == "capture":
            continue  # the user's output: listed, never removed
        else:
            why = f"{kind}: unknown kind of object; left alone"
        if why:
            left.append((o, why))
        else:
            removed.append(_describe(o))
    return left, removed


# --- other runs: `testbed down` ---------------------------------------------------------------


def _read(path: Path) -> dict | None:
    """A record (a previous version's, `<token>.json` with its namespaces, read as one)."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    if "objects" not in doc and isinstance(doc.get("namespaces"), list):
        name = path.stem if path.stem.startswith(PREFIX) else PREFIX + path.stem
        doc = {
            "run": name,
            "command": "testbed",
            "kept": bool(doc.get("kept")),
            "owner": {"pid": doc.get("pid"), "start": doc.get("start")},
            "objects": [{"kind": "netns", "name": n} for n in doc["namespaces"] if isinstance(n, str)],
        }
    if not isinstance(doc.get("objects"), list) or not isinstance(doc.get("owner"), dict):
        return None
    doc["objects"] = [o for o in doc["objects"] if _valid(o)]
    doc["run"] = str(doc.get("run") or path.stem)
    doc["_path"] = str(path)
    return doc


def _valid(o) -> bool:
    """An entry removal can act on (anything else in a record is ignored)."""
    if not isinstance(o, dict):
        return False
    kind = o.get("kind")
    if kind == "process":
        return isinstance(o.get("pid"), int) and o["pid"] > 1 and isinstance(o.get("start"), int)
    if kind == "netns":
        return isinstance(o.get("name"), str)
    return kind in ("cgroup", "folder", "capture") and isinstance(o.get("path"), str)


def records() -> list[dict]:
    """Every readable record of the state directory."""
    d = state_dir(create=False)
    if d is None:
        return []
    out = []
    for p in sorted(d.glob("*.json")):
        doc = _read(p)
        if doc is not None:
            out.append(doc)
    return out


def owner_alive(doc: dict) -> bool:
    """The run's process is still the one that wrote the record (and the run is not kept)."""
    if doc.get("kept"):
        return False
    o = doc["owner"]
    pid, start = o.get("pid"), o.get("start")
    return isinstance(pid, int) and running(pid, int(start) if start is not None else None)


def list_namespaces() -> list[str]:
    try:
        return sorted(p.name for p in NETNS_DIR.iterdir())
    except FileNotFoundError:
        return []


def cgroup_roots() -> list[Path]:
    """The mounted cgroup hierarchies (v1 controllers, v2's unified tree)."""
    roots = []
    try:
        for line in Path("/proc/self/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) > 2 and parts[2] in ("cgroup", "cgroup2"):
                roots.append(Path(parts[1].replace("\\040", " ")))
    except OSError:
        pass
    return roots


def look_alikes() -> list[dict]:
    """`rtnl-*` namespaces and top-level control groups that no record names: not made by
    rtnetlab here, as far as it knows (a user's own, or a record lost)."""
    found = [{"kind": "netns", "name": n} for n in list_namespaces() if n.startswith(PREFIX)]
    for root in cgroup_roots():
        try:
            names = sorted(p for p in root.iterdir() if p.name.startswith(PREFIX) and p.is_dir())
        except OSError:
            continue
        found += [{"kind": "cgroup", "path": str(p)} for p in names]
    # The records are read after the objects are listed: a run records a name before making it,
    # so one starting meanwhile is not taken for a look-alike.
    recorded = _all_names(records())
    return [o for o in found if (o.get("name") or o["path"]) not in recorded]


def _all_names(docs: list[dict]) -> set[str]:
    """The namespaces and groups the records name."""
    return {o.get("name") or o.get("path") or "" for d in docs for o in d["objects"] if isinstance(o, dict)}


def clean(run: str | None = None, force: bool = False) -> dict:
    """Removes the objects of runs whose process is gone (or kept: `testbed up`, `--keep`), or
    of one run (`run`: its name or token), as recorded. `rtnl-*` namespaces and groups no record
    names are listed in `look_alikes` and removed only with `force` (their processes are never
    killed). Live runs are left alone (listed in `running`)."""
    report: dict = {"removed": [], "runs": [], "running": [], "look_alikes": [], "left": []}
    docs = records()
    if run is not None:
        name = run if run.startswith(PREFIX) else PREFIX + run
        docs_of = [d for d in docs if d["run"] == name]
        if docs_of and owner_alive(docs_of[0]):
            o = docs_of[0]["owner"]
            raise UserError(
                f"testbed down: run {name} is still going (its process {o['pid']}); stop it first "
                "(Ctrl-C or SIGTERM remove what it made)"
            )
        if not docs_of:
            others = [
                x
                for x in look_alikes()
                if (base := Path(x.get("name") or x["path"]).name) == name or base.startswith(name + "-")
            ]
            if not others:
                raise UserError(
                    f"testbed down: no run {name} here (no record, no namespace or group of that name)"
                )
            if not force:
                what = ", ".join(x.get("name") or x["path"] for x in others)
                raise UserError(
                    f"testbed down: no record of run {name}: {what} were not made by rtnetlab here "
                    "(or their record is lost); --force removes them"
                )
            report["look_alikes"] = others
            _remove_look_alikes(others, report)
            return report
        docs = docs_of
    with held_signals():
        for doc in docs:
            if run is None and owner_alive(doc):
                report["running"].append(
                    {"run": doc["run"], "command": doc.get("command"), "pid": doc["owner"]["pid"]}
                )
                continue
            left_entries, removed = _remove(doc["objects"])
            left = [why for _, why in left_entries]
            report["removed"] += removed
            report["left"] += left
            report["runs"].append(
                {"run": doc["run"], "command": doc.get("command"), "kept": bool(doc.get("kept")),
                 "removed": removed, "left": left}
            )  # fmt: skip
            captures = [o["path"] for o in doc["objects"] if o["kind"] == "capture"]
            if captures:
                report["runs"][-1]["captures"] = captures
            if not left:
                with contextlib.suppress(FileNotFoundError):
                    Path(doc["_path"]).unlink()
            else:
                _rewrite(doc, [o for o, _ in left_entries])
        if run is None:
            _stale_temporaries()
            report["look_alikes"] = look_alikes()
            if force:
                _remove_look_alikes(report["look_alikes"], report)
    return report


def _rewrite(doc: dict, objects: list[dict]) -> None:
    """A record of a finished run, down to what is still there."""
    path = Path(doc["_path"])
    body = {k: v for k, v in doc.items() if k != "_path"}
    body["objects"] = objects
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(body))
    os.replace(tmp, path)


def _remove_look_alikes(objects: list[dict], report: dict) -> None:
    if os.geteuid() != 0:
        raise UserError("testbed down --force: needs root (namespaces and control groups are root's)")
    for o in objects:
        why = remove_netns(o["name"]) if o["kind"] == "netns" else _remove_cgroup(Path(o["path"]), wait=0.5)
        (report["left"] if why else report["removed"]).append(why or _describe(o))


def _stale_temporaries() -> None:
    """Half-written records (`.rtnl-*.json.PID.tmp`) of writers that are gone."""
    d = state_dir(create=False)
    if d is None:
        return
    for p in d.glob(f".{PREFIX}*.json.*.tmp"):
        try:
            pid = int(p.name.rsplit(".", 2)[1])
        except (IndexError, ValueError):
            continue
        if start_time(pid) is None:
            p.unlink(missing_ok=True)
