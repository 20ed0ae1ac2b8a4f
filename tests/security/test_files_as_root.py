"""Outputs written as root never follow a symbolic link another user planted: the issue's "a
root-owned 0600 file was overwritten and made 0755" through `-o` in a shared directory,
replayed with the links made by `nobody`."""

from __future__ import annotations

import itertools
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_testbed import PRIORITY_NET  # noqa: E402

SEED002 = Path(__file__).resolve().parents[2] / "examples" / "seed002_four_vls.yaml"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file of root's that only root may read, which the attacks aim at."""
    f = tmp_path / "secret"
    f.write_text("root's own\n")
    f.chmod(0o600)
    return f


def untouched(victim: Path) -> bool:
    st = victim.stat()
    return victim.read_text() == "root's own\n" and stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == 0


def refused(p: subprocess.CompletedProcess, link: Path) -> None:
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and f"{link} is a symbolic link made by nobody" in lines[0], p.stderr


def rtnetlab_run(rtnetlab: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(rtnetlab), *map(str, args)], capture_output=True, text=True, timeout=300)


def test_a_link_planted_in_a_shared_directory_is_not_followed(
    nobody, rtnetlab, world_writable, victim, tmp_path
):
    net = tmp_path / "net.yaml"
    net.write_text(yaml.safe_dump(PRIORITY_NET))
    for name, command in (
        ("bounds.json", ["analyze", SEED002, "-o"]),
        ("es1.sh", ["export", "tc", net, "--node", "ES1", "--dev", "eth0", "-o"]),
        ("net.yaml", ["convert", SEED002]),
        ("big.json", ["generate", "afdx", "--vls", "10", "-o"]),
    ):
        link = world_writable / name
        nobody.symlink(victim, link)
        refused(rtnetlab_run(rtnetlab, *command, link), link)
        assert untouched(victim), f"{command[0]} wrote through the link"
        assert link.is_symlink()  # another user's file: not ours to remove


def test_a_directory_link_is_not_followed_either(nobody, rtnetlab, world_writable, tmp_path):
    target = tmp_path / "roots"
    target.mkdir()
    link = world_writable / "results"
    nobody.symlink(target, link)
    refused(rtnetlab_run(rtnetlab, "analyze", SEED002, "-o", link / "bounds.json"), link)
    # A sweep's output directory too.
    spec = tmp_path / "spec.yaml"
    spec.write_text("network: {generate: {virtual_links: 4, switches: 1, planes: 1}}\nrun: {analyze: {}}\n")
    p = rtnetlab_run(rtnetlab, "sweep", spec, "--out", link / "sweep")
    assert p.returncode == 2 and f"{link} is a symbolic link made by nobody" in p.stderr, p.stderr
    assert list(target.iterdir()) == []


def test_another_users_link_in_their_own_directory_is_not_followed(nobody, rtnetlab, world_writable, victim):
    theirs = world_writable / "nobodys"
    assert nobody.run(["mkdir", "-m", "0755", str(theirs)]).returncode == 0
    link = theirs / "bounds.json"
    nobody.symlink(victim, link)
    p = rtnetlab_run(rtnetlab, "analyze", SEED002, "-o", link)
    refused(p, link)
    assert "another user" in p.stderr and untouched(victim)


def test_roots_own_link_is_followed(rtnetlab, world_writable, tmp_path):
    target = tmp_path / "bounds.json"
    target.write_text("{}")
    target.chmod(0o640)
    link = world_writable / "mine.json"
    link.symlink_to(target)
    p = rtnetlab_run(rtnetlab, "analyze", SEED002, "-o", link)
    assert p.returncode == 0, p.stderr
    assert link.is_symlink() and "flows" in target.read_text()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_links_planted_at_the_temporary_names_are_not_followed(nobody, world_writable, victim, monkeypatch):
    """The temporary file's name is predictable (pid, counter): links planted at the next ones
    are skipped (O_EXCL | O_NOFOLLOW), the file is written, and the links are left as they are."""
    from rtnetlab.io import output

    start = 1_000_000
    monkeypatch.setattr(output, "_counter", itertools.count(start))
    planted = [world_writable / f".out.json.{os.getpid()}-{start + k}.tmp" for k in range(3)]
    for link in planted:
        nobody.symlink(victim, link)
    output.atomic_write(world_writable / "out.json", "{}\n")
    assert (world_writable / "out.json").read_text() == "{}\n"
    assert not (world_writable / "out.json").is_symlink()
    assert untouched(victim)
    assert all(link.is_symlink() for link in planted)


def test_safe_name_keeps_names_apart_and_inside_their_directory():
    from rtnetlab.io.output import safe_name

    names = ["SW1_p0", "SW1/p0", "SW1%2Fp0", "..", ".", ".hidden", "a b", "é", "x\ny"]
    encoded = [safe_name(n) for n in names]
    assert len(set(encoded)) == len(names)
    assert encoded[:4] == ["SW1_p0", "SW1%2Fp0", "SW1%252Fp0", "%2E."]
    for e in encoded:
        assert "/" not in e and not e.startswith(".") and e.isascii() and e.isprintable()
    with pytest.raises(ValueError):
        safe_name("")


def test_a_link_planted_while_the_simulation_runs_is_not_followed(
    nobody, rtnetlab, world_writable, victim, tmp_path
):
    """The trace is written when the simulation ends: a link planted at its name meanwhile (the
    name was free when the command started) is refused then."""
    big = tmp_path / "big.json"
    made = rtnetlab_run(rtnetlab, "generate", "afdx", "--vls", "2000", "--switches", "8", "-o", big)
    assert made.returncode == 0, made.stderr
    trace = world_writable / "trace.pcapng"
    proc = subprocess.Popen(
        [str(rtnetlab), "simulate", str(big), "--duration", "600s", "--trace", str(trace)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # A job started in the background inherits SIGINT ignored; a terminal's Ctrl-C is not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while cpu_seconds(proc.pid) < 0.5:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        nobody.symlink(victim, trace)
        proc.send_signal(signal.SIGINT)  # Ctrl-C: the simulation stops and writes what it has
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 2, stderr
    assert f"{trace} is a symbolic link made by nobody" in stderr
    assert untouched(victim) and trace.is_symlink()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def test_the_engine_s_trace_writer_follows_no_link_itself(nobody, world_writable, victim):
    """The front checks a trace's path, then hands it to the engine: a link swapped in between
    (at the trace's name, on a directory of its path, or at the writer's temporary name) is not
    followed by the engine's own open (O_NOFOLLOW, O_EXCL | O_NOFOLLOW), the victim untouched."""
    from rtnetlab import model

    net = model.load_file(SEED002)
    sim = net.simulation({"duration_ns": 2_000_000, "seed": 1, "trace_limit": 100})
    sim.run_until(sim.duration_ns)
    sim.finish()
    at_name = world_writable / "trace.pcapng"
    nobody.symlink(victim, at_name)
    real_dir = world_writable / "real"
    assert nobody.run(["mkdir", str(real_dir)]).returncode == 0
    nobody.symlink(real_dir, world_writable / "via")
    for path in (at_name, world_writable / "via" / "trace.pcapng"):
        with pytest.raises(OSError, match="symbolic link"):
            sim.write_pcapng(path)
    assert untouched(victim) and at_name.is_symlink() and list(real_dir.iterdir()) == []
    written = sim.write_pcapng(world_writable / "mine.pcapng")
    assert written > 0 and not (world_writable / "mine.pcapng").is_symlink()
