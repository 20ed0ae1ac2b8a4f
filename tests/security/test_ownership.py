"""What rtnetlab removes is what it recorded making (docs/SECURITY.md, "Ownership and cleanup").

Namespaces, control groups and processes named like rtnetlab's (`rtnl-...`) but made by someone
else, a user's own or another user's (`nobody`), are left alone by `testbed down --all` and by
the long commands, and removed only with `--force` (their processes never killed); a recorded
process is killed only while its start time matches; the state directory is refused when another
user could have prepared it; captures go, as root, into a folder of the run's own inside the
user's directory, one file per port whatever the node names, never through another user's link.
Namespaces and cgroups can only be made by root, so root makes those look-alikes here.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from rtnetlab import ownership
from rtnetlab.errors import UserError

ROOT = os.geteuid() == 0
CPU = Path("/sys/fs/cgroup/cpu")


def run_cli(cli: Path, *args: str, env: dict | None = None, timeout: float = 180):
    """`rtnetlab ARGS`, its output captured, `env` added to the environment."""
    return subprocess.run(
        [str(cli), *args], capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )


def one_line_error(p: subprocess.CompletedProcess, start: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stderr.strip().startswith(start), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr


def wait_for(condition, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


# --- the state directory -----------------------------------------------------------------------


def test_state_directory_made_private_and_refused_when_others_could_prepare_it(
    tmp_path, monkeypatch, rtnetlab_cli
):
    state = tmp_path / "state"
    monkeypatch.setenv(ownership.STATE_ENV, str(state))
    assert ownership.state_dir() == state
    assert state.stat().st_mode & 0o777 == 0o700 and state.stat().st_uid == os.geteuid()
    # Readable by others: tightened, since it is ours and nobody could have written in it.
    state.chmod(0o755)
    ownership.state_dir()
    assert state.stat().st_mode & 0o777 == 0o700
    # Writable by others: someone may have put a record there.
    state.chmod(0o777)
    with pytest.raises(UserError, match="others may write in it"):
        ownership.state_dir()
    state.chmod(0o700)
    # A symbolic link (to a directory of ours, even): refused, by the command as one line.
    link = tmp_path / "link"
    link.symlink_to(state)
    p = run_cli(rtnetlab_cli, "testbed", "down", "--all", env={ownership.STATE_ENV: str(link)})
    one_line_error(p, f"state directory {link}: is a symbolic link; refused")
    afile = tmp_path / "file"
    afile.write_text("")
    monkeypatch.setenv(ownership.STATE_ENV, str(afile))
    with pytest.raises(UserError, match="is not a directory"):
        ownership.state_dir()


def test_state_directory_of_another_user_is_refused(nobody, world_writable, rtnetlab_cli):
    theirs = world_writable / "rtnetlab-0"
    assert nobody.run(["mkdir", "-m", "700", str(theirs)]).returncode == 0
    p = run_cli(rtnetlab_cli, "testbed", "down", "--all", env={ownership.STATE_ENV: str(theirs)})
    one_line_error(p, f"state directory {theirs}: belongs to uid {nobody.uid}, not to this user; refused")


# --- records ---------------------------------------------------------------------------------------


def test_a_run_records_before_making_and_removes_only_its_record(tmp_path, monkeypatch):
    monkeypatch.setenv(ownership.STATE_ENV, str(tmp_path / "state"))
    with ownership.Run("test") as run:
        doc = json.loads(run.path.read_text())
        assert doc["run"] == run.name and doc["objects"] == [] and doc["owner"]["pid"] == os.getpid()
        folder = run.folder()
        assert folder.stat().st_mode & 0o777 == 0o700
        p = ownership.spawn(["sleep", "60"], what="a sleeper")
        doc = json.loads(run.path.read_text())
        kinds = [(o["kind"], o.get("what")) for o in doc["objects"]]
        assert kinds == [("folder", None), ("process", "a sleeper")]
        entry = doc["objects"][1]
        assert entry["pid"] == p.pid and entry["start"] == ownership.start_time(p.pid)
        # A group whose name exists already is not the run's: refused, and not recorded.
        taken = tmp_path / "taken"
        taken.mkdir()
        with pytest.raises(UserError, match="exists and is not this run's"):
            run.make_cgroup(taken)
        assert len(json.loads(run.path.read_text())["objects"]) == 2
    assert not ownership.running(entry["pid"], entry["start"])
    assert not folder.exists() and not run.path.exists()
    assert taken.is_dir()


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def _plant_record(state: Path, objects: list[dict]) -> Path:
    """A record of a run whose process is gone, listing `objects`."""
    name = f"rtnl-{secrets.token_hex(3)}"
    path = state / f"{name}.json"
    doc = {"version": 1, "run": name, "command": "test", "kept": False,
           "owner": {"pid": _dead_pid(), "start": 1, "uid": os.geteuid()}, "objects": objects}  # fmt: skip
    path.write_text(json.dumps(doc))
    return path


def test_a_recorded_process_is_killed_only_while_its_start_time_matches(request, tmp_path, rtnetlab_cli):
    """The pid of a record may belong to someone else by the time it is read (pid reuse): with
    another start time it is left alone. As root the process is `nobody`'s."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    theirs = (
        request.getfixturevalue("nobody").popen(["sleep", "60"])
        if ROOT
        else subprocess.Popen(["sleep", "60"])
    )
    try:
        wait_for(lambda: ownership.start_time(theirs.pid) is not None, "the sleeper")
        start = ownership.start_time(theirs.pid)
        env = {ownership.STATE_ENV: str(state)}
        wrong = _plant_record(
            state, [{"kind": "process", "pid": theirs.pid, "start": start + 1, "what": "x"}]
        )
        p = run_cli(rtnetlab_cli, "testbed", "down", "--all", "--json", env=env)
        assert p.returncode == 0, p.stderr
        assert theirs.poll() is None, "a process with another start time was killed"
        assert not wrong.exists()  # the record of a finished run goes
        right = _plant_record(state, [{"kind": "process", "pid": theirs.pid, "start": start, "what": "x"}])
        p = run_cli(rtnetlab_cli, "testbed", "down", "--all", "--json", env=env)
        assert p.returncode == 0, p.stderr
        assert theirs.wait(timeout=5) == -signal.SIGKILL
        assert f"process {theirs.pid} (x)" in json.loads(p.stdout)["removed"] and not right.exists()
    finally:
        if theirs.poll() is None:
            theirs.kill()
            theirs.wait()


def test_a_record_cannot_point_removal_elsewhere(tmp_path, rtnetlab_cli):
    """Removal acts only on names rtnetlab makes: a record naming another folder, a namespace not
    called rtnl-*, or a group outside the cgroup file system leaves them in place (exit 1, each
    named), and the record stays."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "data").write_text("mine")
    group = tmp_path / "rtnl-abcdef-vm"
    group.mkdir()
    ns = f"victim-{secrets.token_hex(3)}"
    if ROOT:
        subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        record = _plant_record(
            state,
            [{"kind": "folder", "path": str(victim)}, {"kind": "netns", "name": ns},
             {"kind": "cgroup", "path": str(group)}, {"kind": "folder", "path": str(state / "..")}],
        )  # fmt: skip
        p = run_cli(rtnetlab_cli, "testbed", "down", "--all", env={ownership.STATE_ENV: str(state)})
        assert p.returncode == 1, p.stderr
        assert all(line.startswith("not removed: ") for line in p.stderr.strip().splitlines()), p.stderr
        assert (victim / "data").read_text() == "mine" and group.is_dir() and record.exists()
        if ROOT:
            assert ns in ownership.list_namespaces()
    finally:
        if ROOT:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_a_live_run_is_left_alone_and_cannot_be_taken_down(tmp_path, monkeypatch, rtnetlab_cli):
    env = {ownership.STATE_ENV: str(tmp_path / "state")}
    monkeypatch.setenv(ownership.STATE_ENV, env[ownership.STATE_ENV])
    with ownership.Run("test") as run:
        folder = run.folder()
        p = run_cli(rtnetlab_cli, "testbed", "down", "--all", "--json", env=env)
        assert p.returncode == 0, p.stderr
        doc = json.loads(p.stdout)
        assert doc["running"] == [{"run": run.name, "command": "test", "pid": os.getpid()}]
        assert doc["removed"] == [] and folder.is_dir() and run.path.exists()
        p = run_cli(rtnetlab_cli, "testbed", "down", run.name, env=env)
        one_line_error(p, f"testbed down: run {run.name} is still going (its process {os.getpid()})")


# --- children ----------------------------------------------------------------------------------------

PARENT = """
import signal, subprocess, sys, time
from rtnetlab import ownership
kids = [
    ownership.spawn(["sleep", "60"], what="a program"),
    ownership.spawn([sys.executable, "-c", "import time; time.sleep(60)"], what="python"),
    ownership.spawn(
        [sys.executable, "-c",
         "from rtnetlab.ownership import die_with_parent; die_with_parent(); import time; time.sleep(60)"],
        what="guarded", guarded=True,
    ),
]
print(" ".join(str(k.pid) for k in kids), flush=True)
time.sleep(60)
"""


def test_children_die_with_the_process_that_started_them():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    pids = [int(x) for x in parent.stdout.readline().split()]
    starts = [ownership.start_time(pid) for pid in pids]
    assert len(pids) == 3 and all(starts)

    def cmdline(pid: int) -> bytes:
        return Path(f"/proc/{pid}/cmdline").read_bytes()

    # The launcher has set the signal once it has exec'd the program. (Had the parent died
    # before, the launcher and the guarded child would exit on their own: either way they end.)
    wait_for(lambda: cmdline(pids[0]).startswith(b"sleep") and b"-I\0-S" not in cmdline(pids[1]), "exec")
    parent.kill()
    parent.wait()
    wait_for(lambda: not any(ownership.running(p, s) for p, s in zip(pids, starts, strict=True)),
             "the children to die with their parent", timeout=5)  # fmt: skip


def test_a_child_whose_parent_died_before_it_could_set_the_signal_exits(repo_root):
    """The race a parent-death signal leaves open (the parent dies between fork and prctl) is
    closed by checking the parent after setting it: a child told another parent exits at once."""
    env = {**os.environ, ownership.PARENT_ENV: str(_dead_pid())}
    code = "from rtnetlab.ownership import die_with_parent; die_with_parent(); print('ran')"
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30)
    assert (p.returncode, p.stdout) == (1, "")
    binary = repo_root / "target" / "release" / "rtnetlab-testbed"
    if binary.exists():
        p = subprocess.run([str(binary), "plan", "/nonexistent"], env=env, capture_output=True, timeout=30)
        assert (p.returncode, p.stdout) == (1, b"")


def test_a_worker_whose_control_pipe_closes_stops_instead_of_running_its_schedule():
    """A publisher waits for "go" on its control pipe before its schedule: the pipe closing (the
    harness gone) ends it."""
    settings = {"address": "127.0.0.1", "interface": "lo", "peers": ["127.0.0.1"], "domain": 1}
    spec = {"role": "pub", "backend": "udp", "settings": settings, "topic": "t", "peers": ["127.0.0.1:9"],
            "messages": 100000, "warmup": 0, "period_ns": 1_000_000, "payload": 16, "cpu": None,
            "rt": False}  # fmt: skip
    w = subprocess.Popen(
        [sys.executable, "-m", "rtnetlab.middleware.worker", json.dumps(spec)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert json.loads(w.stdout.readline()).get("ready"), w.stderr.read()
        w.stdin.close()
        assert w.wait(timeout=10) == 3
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()


def test_a_node_whose_control_pipe_closes_stops(tmp_path, rtnetlab_cli, repo_root):
    """A testbed node set to start in a minute stops at once when the front's end of its stdin
    closes."""
    if not ROOT:
        pytest.skip("a node opens raw sockets in a namespace: root")
    binary = repo_root / "target" / "release" / "rtnetlab-testbed"
    if not binary.exists():
        pytest.fail("rtnetlab-testbed is built by `make build`", pytrace=False)
    net = tmp_path / "net.json"
    net.write_text(json.dumps(TWO_NODES))
    up = run_cli(rtnetlab_cli, "testbed", "up", str(net), "--json")
    assert up.returncode == 0, up.stderr
    setup = json.loads(up.stdout)
    try:
        cfg = {"node": "A", "netns": setup["namespaces"]["A"], "mode": "kernel",
               "epoch_ns": time.time_ns() + 60_000_000_000, "baseline_ns": 0, "run_start_ns": 0,
               "duration_ns": 1_000_000_000, "drain_ns": 200_000_000, "seed": 1, "sizes": "max",
               "release": "random", "sched_priority": 0, "spin_ns": 0}  # fmt: skip
        (tmp_path / "cfg.json").write_text(json.dumps(cfg))
        node = subprocess.Popen(
            [str(binary), "node", str(net), str(tmp_path / "cfg.json")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        node.stdin.close()
        assert node.wait(timeout=10) == 3, node.stderr.read()
    finally:
        run_cli(rtnetlab_cli, "testbed", "down", setup["run"])


# --- look-alikes ---------------------------------------------------------------------------------------


@pytest.fixture
def look_alikes(nobody):
    """`rtnl-<token>` objects rtnetlab did not make: a namespace with a process of `nobody`
    inside, two cgroups (one with a sub-group), a process of `nobody` whose command line carries
    the name, and a folder of `nobody` named like the testbed's old plan folders."""
    if not (CPU / "cpu.cfs_quota_us").exists():
        pytest.skip("no cgroup v1 cpu hierarchy here")
    name = f"rtnl-{secrets.token_hex(3)}"
    ns = f"{name}-0"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    groups = [CPU / f"{name}-vm", CPU / name]
    for g in groups:
        g.mkdir()
    (CPU / name / f"{name}-0").mkdir()
    inside = subprocess.Popen(["ip", "netns", "exec", ns, *nobody.argv(["sleep", "600"])], env=nobody.env)
    named = nobody.popen(["sh", "-c", "sleep 600; true", f"{name}-0"])
    folder = Path("/tmp") / f"rtnetlab-testbed-{name}"
    assert nobody.run(["mkdir", str(folder)]).returncode == 0
    assert nobody.run(["sh", "-c", f"echo '{{}}' > {folder}/description.json"]).returncode == 0
    procs = [inside, named]
    wait_for(lambda: all(ownership.start_time(p.pid) for p in procs), "nobody's processes")
    starts = [(p.pid, ownership.start_time(p.pid)) for p in procs]
    things = {"name": name, "netns": ns, "groups": [*groups, CPU / name / f"{name}-0"], "procs": starts,
              "folder": folder}  # fmt: skip
    try:
        yield things
    finally:
        for p in procs:
            p.kill()
            p.wait()
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        for g in [CPU / name / f"{name}-0", *groups]:
            if g.exists():
                g.rmdir()
        shutil.rmtree(folder, ignore_errors=True)


def untouched(things: dict) -> None:
    assert things["netns"] in ownership.list_namespaces()
    assert all(g.is_dir() for g in things["groups"])
    assert all(ownership.running(pid, start) for pid, start in things["procs"])
    assert (things["folder"] / "description.json").exists()


TWO_NODES = {
    "name": "two",
    "defaults": {"link_rate": "100Mbps"},
    "end_systems": [{"name": "A"}, {"name": "B"}],
    "links": [{"from": "A", "to": "B"}],
    "flows": [{"name": "V", "type": "virtual_link", "id": 1, "bag": "1ms", "lmin": "64B", "lmax": "200B",
               "source": "A", "destinations": ["B"]}],
}  # fmt: skip

COMMANDS = {
    "testbed down --all": ["testbed", "down", "--all"],
    "testbed run": ["testbed", "run", "{net}", "--duration", "300ms", "--baseline", "0s", "--no-simulate"],
    "middleware pubsub": ["middleware", "pubsub", "--backends", "udp", "--subscribers", "1",
                          "--payload", "16", "--messages", "100", "--noise", "0s",
                          "--placement", "two-boards"],
    "middleware reqresp": ["middleware", "reqresp", "--backends", "udp-echo", "--payload", "64",
                           "--busy", "0us", "--requests", "100", "--noise", "0s"],
    "slrm run": ["slrm", "run", "--apps", "overload", "--duration", "2s"],
    "experiment reservation": ["experiment", "reservation", "--seconds", "0.2", "--tolerance", "0.9"],
}  # fmt: skip


@pytest.mark.parametrize("command", list(COMMANDS))
def test_look_alikes_are_left_alone(look_alikes, command, rtnetlab_cli, tmp_path):
    net = tmp_path / "net.yaml"
    net.write_text(yaml.safe_dump(TWO_NODES))
    p = run_cli(rtnetlab_cli, *[a.format(net=net) for a in COMMANDS[command]])
    assert p.returncode == 0, p.stderr
    untouched(look_alikes)
    if command == "testbed down --all":
        line = next(x for x in p.stdout.splitlines() if x.startswith("not made by rtnetlab here"))
        assert look_alikes["netns"] in line and line.endswith("(--force removes them)"), p.stdout
        doc = json.loads(run_cli(rtnetlab_cli, "testbed", "down", "--all", "--json").stdout)
        listed = {x.get("name") or x["path"] for x in doc["look_alikes"]}
        name = look_alikes["name"]
        assert {look_alikes["netns"], str(CPU / name), str(CPU / f"{name}-vm")} <= listed


def test_look_alikes_go_only_with_force_and_their_processes_stay(look_alikes, rtnetlab_cli):
    name = look_alikes["name"]
    p = run_cli(rtnetlab_cli, "testbed", "down", name)
    one_line_error(p, f"testbed down: no record of run {name}:")
    assert "--force removes them" in p.stderr
    untouched(look_alikes)
    p = run_cli(rtnetlab_cli, "testbed", "down", name, "--force", "--json")
    assert p.returncode == 0, p.stderr
    assert look_alikes["netns"] not in ownership.list_namespaces()
    assert not any(g.exists() for g in look_alikes["groups"])
    # Never killed, never deleted: the processes (the one inside keeps its namespace until it
    # ends) and the folder.
    assert all(ownership.running(pid, start) for pid, start in look_alikes["procs"])
    assert (look_alikes["folder"] / "description.json").exists()


# --- captures as root ------------------------------------------------------------------------------------


@pytest.fixture
def capture_ready():
    if not ROOT:
        pytest.skip("the testbed needs root")
    if shutil.which("dumpcap") is None:
        pytest.skip("dumpcap is installed by `make setup` (tshark)")


@pytest.mark.parametrize("sticky", [True, False])
def test_capture_refuses_another_users_link(
    capture_ready, nobody, world_writable, tmp_path, rtnetlab_cli, sticky
):
    """A link planted by `nobody` in a shared directory (sticky as /tmp, or not) is not followed,
    whether it is the capture directory or a directory above it."""
    shared = world_writable
    if not sticky:
        shared = world_writable / "plain"
        shared.mkdir()
        shared.chmod(0o777)
    target = tmp_path / "target"
    target.mkdir()
    nobody.symlink(target, shared / "caps")
    net = tmp_path / "net.yaml"
    net.write_text(yaml.safe_dump(TWO_NODES))
    before = set(ownership.list_namespaces())
    for where in (shared / "caps", shared / "caps" / "deeper"):
        p = run_cli(rtnetlab_cli, "testbed", "run", str(net), "--duration", "300ms", "--capture", str(where))
        one_line_error(p, f"--capture: {shared / 'caps'} is a symbolic link made by nobody")
    assert list(target.iterdir()) == []
    assert set(ownership.list_namespaces()) == before


def test_capture_files_one_per_port_in_the_runs_own_folder(capture_ready, nobody, tmp_path, rtnetlab_cli):
    """Node names differing only by characters a file name cannot hold map to different files
    (each outside [A-Za-z0-9._-] percent-encoded); the files are in a folder the run made, and
    with the directory's owner (here `nobody`)."""
    net = {
        "name": "names",
        "defaults": {"link_rate": "100Mbps"},
        "end_systems": [{"name": n} for n in ("E/1", "E:1", "E%3A1", "Z")],
        "switches": [{"name": "SW"}],
        "links": [{"from": n, "to": "SW"} for n in ("E/1", "E:1", "E%3A1")] + [{"from": "SW", "to": "Z"}],
        "flows": [
            {"name": f"V{k}", "type": "virtual_link", "id": k, "bag": "1ms", "lmin": "64B", "lmax": "200B",
             "source": src, "destinations": ["Z"]}
            for k, src in ((1, "E/1"), (2, "E:1"), (3, "E%3A1"))
        ],
    }  # fmt: skip
    f = tmp_path / "net.yaml"
    f.write_text(yaml.safe_dump(net))
    caps = tmp_path / "caps"
    caps.mkdir()
    os.chown(caps, nobody.uid, nobody.gid)
    p = run_cli(rtnetlab_cli, "testbed", "run", str(f), "--duration", "300ms", "--baseline", "0s",
                 "--no-simulate", "--capture", str(caps), "--json")  # fmt: skip
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    (folder,) = list(caps.iterdir())
    assert folder.name.startswith("rtnl-") and folder.stat().st_uid == nobody.uid
    names = sorted(x.name for x in folder.iterdir())
    assert names == sorted(
        ["E%2F1_0.pcapng", "E%3A1_0.pcapng", "E%253A1_0.pcapng", "SW_0.pcapng", "SW_1.pcapng", "SW_2.pcapng",
         "SW_3.pcapng", "Z_0.pcapng"]
    )  # fmt: skip
    assert sorted(report["captures"]) == sorted(str(folder / n) for n in names)
    for x in folder.iterdir():
        assert x.stat().st_uid == nobody.uid and x.stat().st_size > 0
    # Each source's own frames in its own file: E:1 sends V2 only (VL id 2).
    for node, vl in (("E%2F1", 1), ("E%3A1", 2), ("E%253A1", 3)):
        out = subprocess.run(
            ["tshark", "-r", str(folder / f"{node}_0.pcapng"), "-T", "fields", "-e", "ip.dst"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert set(out.stdout.split()) == {f"224.224.0.{vl}"}, (node, out.stdout[:200])
