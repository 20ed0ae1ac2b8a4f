"""A long command killed outright (SIGKILL: no cleanup of its own) leaves nothing once
`rtnetlab testbed down --all` has run and one second has passed: no process of the run (each
checked by pid and start time, so a reused pid is not mistaken for one), no namespace, no
cgroup, no temporary folder, no record; what it captured stays.

Each command runs with its shortest meaningful settings and is killed as soon as its record
shows the objects it makes (polled, no fixed sleep); the processes checked are those the record
lists and every descendant of the command alive at the kill (recorded or not yet).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from rtnetlab import ownership

pytestmark = pytest.mark.needs_root(reason="the long commands make namespaces and cgroups: they need root")

CGROUPS = Path("/sys/fs/cgroup")


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def descendants(pid: int) -> list[tuple[int, int]]:
    """(pid, start time) of every live descendant of `pid`."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            s = _stat(int(d.name))
            if s is not None:
                children.setdefault(int(s[1]), []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            s = _stat(c)
            if s is not None and s[0] != "Z":
                out.append((c, int(s[19])))
                todo.append(c)
    return out


def record_of(pid: int) -> dict | None:
    """The record whose run `pid` owns."""
    for doc in ownership.records():
        if doc["owner"].get("pid") == pid:
            return doc
    return None


def start(cli: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [str(cli), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )


def wait_for_record(proc: subprocess.Popen, ready, timeout: float = 90) -> dict:
    """Polls the command's record until `ready(record)` holds."""
    deadline = time.monotonic() + timeout
    while True:
        doc = record_of(proc.pid)
        if doc is not None and ready(doc):
            return doc
        if proc.poll() is not None:
            pytest.fail(f"the command ended before it could be killed: {proc.stderr.read().decode()[-500:]}")
        assert time.monotonic() < deadline, f"the record never showed the run's objects: {doc}"
        time.sleep(0.02)


def processes(doc: dict, what: str = "") -> list[dict]:
    return [o for o in doc["objects"] if o["kind"] == "process" and o["what"].startswith(what)]


def left_of(name: str, procs: list[tuple[int, int]], doc: dict | None) -> list[str]:
    """What of run `name` is still on the host."""
    left = [f"process {pid}" for pid, st in procs if ownership.running(pid, st)]
    left += [ns for ns in ownership.list_namespaces() if ns.startswith(name + "-")]
    left += [str(g) for g in CGROUPS.glob(f"*/{name}*")] + [str(g) for g in CGROUPS.glob(f"{name}*")]
    if doc is not None:
        left += [o["path"] for o in doc["objects"] if o["kind"] == "folder" and os.path.lexists(o["path"])]
        left += [doc["_path"]] if os.path.exists(doc["_path"]) else []
    return left


def kill_then_down(cli: Path, proc: subprocess.Popen, doc: dict | None) -> tuple[list[str], float]:
    """SIGKILL to the command alone, `testbed down --all`, then at most one second: what is left,
    and the time from the kill until nothing was."""
    procs = descendants(proc.pid)
    if doc is not None:
        doc = record_of(proc.pid) or doc  # the latest record, its processes all
        procs += [(o["pid"], o["start"]) for o in processes(doc)]
    name = doc["run"] if doc else "rtnl-none"
    t0 = time.monotonic()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    down = subprocess.run([str(cli), "testbed", "down", "--all", "--json"], capture_output=True, text=True)
    assert down.returncode == 0, down.stderr
    deadline = time.monotonic() + 1.0
    while (left := left_of(name, procs, doc)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left, time.monotonic() - t0


@pytest.fixture
def net(tmp_path) -> Path:
    from test_testbed import PRIORITY_NET

    f = tmp_path / "net.yaml"
    f.write_text(yaml.safe_dump(PRIORITY_NET))
    return f


def test_testbed_run_with_captures(rtnetlab_cli, net, tmp_path):
    """Ten dumpcaps and six nodes at SCHED_FIFO (user-space switches), 20 s planned."""
    caps = tmp_path / "caps"
    proc = start(rtnetlab_cli, "testbed", "run", str(net), "--duration", "20s", "--switch", "user",
                 "--capture", str(caps), "--no-simulate")  # fmt: skip
    doc = wait_for_record(
        proc, lambda d: len(processes(d, "dumpcap")) == 10 and len(processes(d, "node")) == 6
    )
    left, took = kill_then_down(rtnetlab_cli, proc, doc)
    assert left == [], left
    # The captures are the user's: they stay, whole up to the kill.
    (folder,) = list(caps.iterdir())
    assert folder.name == doc["run"] and len(list(folder.iterdir())) == 10
    print(f"testbed run --capture: nothing left {took:.2f} s after the kill")


def test_middleware_pubsub_two_boards(rtnetlab_cli):
    """Publisher and subscribers at SCHED_FIFO 99 in two namespaces."""
    proc = start(rtnetlab_cli, "middleware", "pubsub", "--backends", "udp", "--subscribers", "2", "--payload",
                 "16", "--messages", "100000", "--noise", "0s", "--placement", "two-boards")  # fmt: skip
    doc = wait_for_record(proc, lambda d: any("-pub" in o["what"] for o in processes(d)))
    left, took = kill_then_down(rtnetlab_cli, proc, doc)
    assert left == [], left
    print(f"middleware pubsub: nothing left {took:.2f} s after the kill")


def test_middleware_reqresp_with_its_cgroup(rtnetlab_cli):
    """Killed while the virtualised server runs inside the run's capped cgroup."""
    proc = start(rtnetlab_cli, "middleware", "reqresp", "--backends", "udp-echo", "--payload", "64", "--busy",
                 "0us", "--requests", "3000", "--noise", "0s")  # fmt: skip

    def server_in_cgroup(d: dict) -> bool:
        for o in d["objects"]:
            if o["kind"] == "cgroup":
                try:
                    return bool(Path(o["path"], "cgroup.procs").read_text().split())
                except OSError:
                    return False
        return False

    doc = wait_for_record(proc, server_in_cgroup)
    left, took = kill_then_down(rtnetlab_cli, proc, doc)
    assert left == [], left
    print(f"middleware reqresp: nothing left {took:.2f} s after the kill")


def test_middleware_partitions_with_stopped_processes(rtnetlab_cli):
    """Killed while the window dispatcher (SCHED_FIFO 99) holds partitions stopped (SIGSTOP)."""
    proc = start(rtnetlab_cli, "middleware", "partitions", "--requests", "400", "--noise", "0s")

    def dispatching(d: dict) -> bool:
        if not processes(d, "rrworker dispatcher"):
            return False
        return any((_stat(o["pid"]) or ["?"])[0] == "T" for o in processes(d, "rrworker server"))

    doc = wait_for_record(proc, dispatching)
    left, took = kill_then_down(rtnetlab_cli, proc, doc)
    assert left == [], left
    print(f"middleware partitions: nothing left {took:.2f} s after the kill")


def test_middleware_cwalker(rtnetlab_cli):
    """Eight modules over two boards."""
    proc = start(rtnetlab_cli, "middleware", "cwalker", "--backends", "udp", "--mappings", "2", "--duration",
                 "30s")  # fmt: skip
    doc = wait_for_record(proc, lambda d: len(processes(d, "cwalkerworker")) == 8)
    left, took = kill_then_down(rtnetlab_cli, proc, doc)
    assert left == [], left
    print(f"middleware cwalker: nothing left {took:.2f} s after the kill")


def test_slrm_run_with_its_cgroups(rtnetlab_cli):
    from rtnetlab.cloud import cgroups

    if cgroups.detect() is None:
        pytest.skip("no writable cgroup CPU controller here")
    proc = start(rtnetlab_cli, "slrm", "run", "--apps", "overload", "--duration", "60s")
    doc = wait_for_record(
        proc,
        lambda d: (
            len(processes(d, "application")) == 2 and sum(o["kind"] == "cgroup" for o in d["objects"]) == 3
        ),
    )
    left, took = kill_then_down(rtnetlab_cli, proc, doc)
    assert left == [], left
    print(f"slrm run: nothing left {took:.2f} s after the kill")


def test_experiment_reservation_with_its_spinners(rtnetlab_cli):
    """Killed while the ordinary hogs and the SCHED_DEADLINE spinner run."""
    proc = start(rtnetlab_cli, "experiment", "reservation", "--seconds", "2")

    def reserved_running(d: dict) -> bool:
        return any(Path(f"/proc/{o['pid']}/cmdline").exists() for o in processes(d, "spinner reserved"))

    doc = wait_for_record(proc, reserved_running)
    left, took = kill_then_down(rtnetlab_cli, proc, doc)
    assert left == [], left
    print(f"experiment reservation: nothing left {took:.2f} s after the kill")


SWEEP = """
network: {generate: {virtual_links: 30, switches: 2, planes: 1}}
vary:
  generate.virtual_links: [10, 20, 30, 40]
seeds: 20
points_per_task: 1
run:
  simulate: {duration: 2s}
keep: [simulate.mean_us]
"""


def test_sweep(rtnetlab_cli, tmp_path):
    """The embedded Dask cluster is a recorded run: its workers (by pid and start time) and its
    scratch folder (Dask's local directory) go with `testbed down --all`."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(SWEEP)
    proc = start(rtnetlab_cli, "sweep", str(spec), "--out", str(tmp_path / "out"), "--workers", "2")
    doc = wait_for_record(
        proc,
        lambda d: len(processes(d, "sweep worker")) == 2 and (tmp_path / "out" / "rows").is_dir(),
    )
    (folder,) = [o["path"] for o in doc["objects"] if o["kind"] == "folder"]
    assert Path(folder, "dask-scratch-space").is_dir()
    left, took = kill_then_down(rtnetlab_cli, proc, doc)
    assert left == [], left
    assert not os.path.lexists(folder)
    print(f"sweep: nothing left {took:.2f} s after the kill")


def test_a_kept_setup_goes_with_down(rtnetlab_cli, net):
    """`testbed up` leaves its namespaces, recorded as kept: down --all removes them, and only them."""
    p = subprocess.run(
        [str(rtnetlab_cli), "testbed", "up", str(net), "--json"], capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr
    run = json.loads(p.stdout)["run"]
    (doc,) = [d for d in ownership.records() if d["run"] == run]
    assert doc["kept"] and {o["kind"] for o in doc["objects"]} == {"netns"}
    down = subprocess.run(
        [str(rtnetlab_cli), "testbed", "down", "--all", "--json"], capture_output=True, text=True
    )
    assert down.returncode == 0, down.stderr
    assert left_of(run, [], doc) == []
