"""The embedded Dask cluster of a sweep, attacked by another local user (`nobody`) while a sweep
runs as root: the issue's replay of "nobody connected and a submitted function ran as uid 0",
"the address was also served on 127.0.0.1:8787" and "Dask spills to the predictable
/tmp/dask-scratch-space"."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from rtnetlab import ownership

pytest.importorskip("dask.distributed")

WORKERS = 2
# Long enough that the sweep is still running when the attacks end; it is stopped by SIGTERM.
SLOW = """
network: {generate: {virtual_links: 30, switches: 2, planes: 1}}
vary: {generate.virtual_links: [10, 20, 30, 40, 50]}
seeds: 400
points_per_task: 1
run: {simulate: {duration: 0.5s}}
keep: [simulate.mean_us]
"""

# Run as nobody against every port of the cluster: what answers a plain HTTP request, a TLS
# handshake without a certificate, and Dask clients (plain, and with credentials of their own)
# submitting os.getuid, all ports at once.
ATTACK = r"""
import asyncio, json, os, socket, ssl, sys
ports = [int(p) for p in sys.argv[1:]]
results = {p: {} for p in ports}
for port, result in results.items():
    with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
        s.sendall(b"GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n")
        try:
            result["http"] = s.recv(64).decode("latin-1")
        except OSError:
            result["http"] = ""
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3) as raw:
            with ctx.wrap_socket(raw) as tls:
                tls.sendall(b"\0" * 8)
                result["tls_without_certificate"] = "closed" if tls.recv(1) == b"" else "answered"
    except ssl.SSLError as e:
        result["tls_without_certificate"] = "refused: " + str(e)
    except TimeoutError:
        result["tls_without_certificate"] = "kept open"

from distributed import Client, Security

async def attempt(port, name, address, security):
    try:
        async with Client(address, security=security, timeout=5, asynchronous=True) as client:
            uid = await client.submit(os.getuid, pure=False)
            results[port][name] = "ran as uid %d" % uid
    except Exception as e:
        results[port][name] = "failed: " + type(e).__name__

async def main():
    await asyncio.gather(*(
        attempt(port, name, address, security)
        for port in ports
        for name, address, security in (
            ("tcp_client", f"tcp://127.0.0.1:{port}", None),
            ("tls_client_own_credentials", f"tls://127.0.0.1:{port}", Security.temporary()),
        )
    ))

asyncio.run(main())
print(json.dumps(results))
"""


def group_pids(leader: int) -> set[int]:
    """The processes of the sweep's process group (the command, its workers)."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == leader:  # the process group
                pids.add(int(entry.name))
    return pids


def listening(pids: set[int]) -> list[tuple[str, int, int]]:
    """(address, port, pid) of every TCP socket listening in `pids`, as `ss -ltnp` sees them."""
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        local = line.split()[3]
        for pid in map(int, re.findall(r"pid=(\d+)", line)):
            if pid in pids:
                address, port = local.rsplit(":", 1)
                found.append((address, int(port), pid))
    return found


def start_sweep(rtnetlab: Path, tmp_path: Path, tmpdir: Path, text: str) -> tuple[subprocess.Popen, Path]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [str(rtnetlab), "sweep", str(spec), "--out", str(out), "--workers", str(WORKERS), "--json"],
        env={**os.environ, "TMPDIR": str(tmpdir)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    return proc, out


def test_no_other_user_reaches_the_embedded_cluster(nobody, rtnetlab, world_writable, tmp_path):
    # What a hostile user prepares first: Dask's predictable scratch directory, and a look-alike
    # of a killed sweep's scratch directory (which is not ours to remove).
    planted = world_writable / "dask-scratch-space"
    assert nobody.run(["mkdir", "-m", "0777", str(planted)]).returncode == 0
    lookalike = world_writable / "rtnetlab-sweep-999999-planted"
    assert nobody.run(["mkdir", "-m", "0700", str(lookalike)]).returncode == 0

    proc, out = start_sweep(rtnetlab, tmp_path, world_writable, SLOW)
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob("rows/part-*.parquet")):
            assert proc.poll() is None, f"the sweep ended before it could be attacked: {proc.stderr.read()}"
            assert time.monotonic() < deadline, "no row after 120 s"
            time.sleep(0.1)
        sockets = listening(group_pids(proc.pid))
        # Only the cluster's own ports (the scheduler, a nanny and a worker per worker process),
        # on the loopback address; no HTTP server, 8787 or other.
        assert len(sockets) == 1 + 2 * WORKERS, sockets
        assert {a for a, _, _ in sockets} == {"127.0.0.1"}, sockets
        assert 8787 not in {p for _, p, _ in sockets}

        attack = nobody.python_code(ATTACK, *(str(p) for _, p, _ in sockets), timeout=120)
        assert attack.returncode == 0, attack.stderr
        results = json.loads(attack.stdout)
        assert proc.poll() is None, "the sweep must still be running when the attacks end"
        assert len(results) == len(sockets)
        for port, r in results.items():
            assert not r["http"].startswith("HTTP/"), (port, r)
            # A TLS port that wants a certificate (a plain one would answer "wrong version number").
            tls = r["tls_without_certificate"]
            assert tls.startswith(("refused", "closed")) and "WRONG_VERSION_NUMBER" not in tls, (port, r)
            assert r["tcp_client"].startswith("failed"), (port, r)
            assert r["tls_client_own_credentials"].startswith("failed"), (port, r)

        # The run's scratch directory is its own: the private folder of its record, not the
        # planted one, nor anything in the shared temporary directory.
        (doc,) = [d for d in ownership.records() if d["owner"]["pid"] == proc.pid]
        (folder,) = [Path(o["path"]) for o in doc["objects"] if o["kind"] == "folder"]
        st = folder.stat()
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o700)
        assert folder.parent == ownership.state_dir() and (folder / "dask-scratch-space").is_dir()
        ours = [p.name for p in world_writable.iterdir() if p.name.startswith("rtnetlab-")]
        assert ours == [lookalike.name]
    finally:
        # SIGTERM: the command unwinds as on Ctrl-C (exit 143) and closes the cluster.
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 143, proc.stderr.read()
    # Its worker processes (and multiprocessing's resource tracker) end with it.
    deadline = time.monotonic() + 30
    while group_pids(proc.pid):
        assert time.monotonic() < deadline, f"processes outlived the sweep: {group_pids(proc.pid)}"
        time.sleep(0.1)
    # Nothing of the run is left in the temporary directory or in its record, and what others
    # made is untouched.
    assert sorted(p.name for p in world_writable.iterdir()) == [planted.name, lookalike.name]
    assert list(planted.iterdir()) == []
    assert not folder.exists() and not [d for d in ownership.records() if d["run"] == doc["run"]]


def test_a_finished_sweep_leaves_nothing_in_the_temporary_directory(rtnetlab, tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    # What a sweep killed outright (SIGKILL) leaves: its private scratch directory, whose
    # process is gone (an earlier version's, in the temporary directory, and a recorded run's);
    # the next sweep removes both.
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = tmpdir / f"rtnetlab-sweep-{gone.pid}-killed"
    (stale / "dask-scratch-space").mkdir(parents=True)
    stale.chmod(0o700)
    state = ownership.state_dir()
    killed = "rtnl-" + os.urandom(3).hex()
    (state / killed / "dask-scratch-space").mkdir(parents=True, mode=0o700)
    record = {"version": ownership.VERSION, "run": killed, "command": "sweep", "kept": False,
              "owner": {"pid": gone.pid, "start": 1, "uid": 0},
              "objects": [{"kind": "folder", "path": str(state / killed)}]}  # fmt: skip
    (state / f"{killed}.json").write_text(json.dumps(record))
    proc, out = start_sweep(
        rtnetlab,
        tmp_path,
        tmpdir,
        "network: {generate: {virtual_links: 5, switches: 1, planes: 1}}\n"
        "seeds: 2\nrun: {analyze: {methods: [tfa]}}\n",
    )
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert len(list((out / "rows").glob("part-*.parquet"))) >= 1
    assert list(tmpdir.iterdir()) == []
    assert not (state / killed).exists() and not (state / f"{killed}.json").exists()
