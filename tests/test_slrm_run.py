"""`rtnetlab slrm run`: seed 001G's resource manager on real services capped by cgroups.

The runs need root and a cgroup CPU controller (skipped otherwise). They are short (about 15 s)
and assert properties with tolerances, never times: the host has 2 cores shared with builds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from rtnetlab.cloud import cgroups, slrmrun

FOUND = cgroups.detect()


def needs_cgroups(test):
    """Root and a writable cgroup CPU controller."""
    test = pytest.mark.skipif(FOUND is None, reason="needs a writable cgroup CPU controller")(test)
    return pytest.mark.needs_root(reason="the run's groups need root")(test)



def _leftovers(prefix: str) -> list[str]:
    """The run's groups and processes still there (none may be)."""
    left = [str(p) for p in cgroups.ROOT.glob(f"*/{prefix}*")] + [
        str(p) for p in cgroups.ROOT.glob(f"{prefix}*")
    ]
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if prefix.encode() in (d / "cmdline").read_bytes():
                    left.append(f"process {d.name}")
            except OSError:
                pass
    return left


def _remove_leftovers(prefix: str) -> None:
    """After a failed test: kill the run's processes, then remove its groups (children first),
    so that a failure leaves nothing on the host either."""
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if prefix.encode() in (d / "cmdline").read_bytes():
                    os.kill(int(d.name), signal.SIGKILL)
            except OSError:
                pass
    parents = [*cgroups.ROOT.glob(f"*/{prefix}*"), *cgroups.ROOT.glob(f"{prefix}*")]
    for g in [c for p in parents for c in p.iterdir() if c.is_dir()] + parents:
        deadline = time.monotonic() + 5
        while g.exists():
            try:
                g.rmdir()
            except OSError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)


def test_quotas_sum_to_the_capacity_exactly():
    # 1/3 core each of 1 core: 33333.33 µs each; the largest remainder takes the missing 1 µs.
    assert cgroups.quotas([1 / 3, 1 / 3, 1 / 3]) == [33334, 33333, 33333]
    # 0.004 core is below the kernel's 1 ms minimum: raised to 1000 µs, taken from the largest
    # (0.996 core → 99600 − 600 = 99000).
    assert cgroups.quotas([0.996, 0.004]) == [99000, 1000]
    assert sum(cgroups.quotas([0.8 * 1.5, 0.2 * 1.5])) == 150000


@pytest.mark.parametrize(
    ("args", "place"),
    [
        (["--apps", "nosuch"], "--apps"),
        (["--apps", "overload", "--duration", "1s"], "--duration"),
        # A bare number, as no other --duration takes.
        (["--apps", "overload", "--duration", "5"], "--duration"),
        (["--apps", "overload", "--capacity", "64"], "capacity"),
        (["--apps", "overload", "--seed", "-1"], "--seed"),
    ],
)
def test_refusals_are_one_line(rtnetlab_cli, args, place):
    r = subprocess.run([str(rtnetlab_cli), "slrm", "run", *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert place in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_scenario_file_refusal_names_the_place(rtnetlab_cli, tmp_path):
    bad = tmp_path / "apps.yaml"
    bad.write_text(json.dumps(slrmrun.preset("overload", 10) | {"rm": {"epsilon": -1}}))
    r = subprocess.run(
        [str(rtnetlab_cli), "slrm", "run", "--apps", str(bad)], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 2 and "epsilon" in r.stderr and "Traceback" not in r.stderr, r.stderr


@needs_cgroups
def test_overloaded_apps_converge_to_fair_caps_whose_sum_is_the_capacity(rtnetlab_cli, tmp_path):
    """Two identical applications, each overloaded even at SL 0 on any cap (30 users, 10 ms of CPU
    per request, 0.1 s think time: R ≈ 30·0.01/C_i − 0.1 ≥ 0.2 s > 1.5·t̄ = 75 ms for C_i ≤ 1),
    start from shares 0.8/0.2. Both matching values sit at the RM's floor −0.5, so Eq. 3 gives
    c_i ← c_i − 0.2(−0.5 − c_i·(−1)) = 0.8·c_i + 0.1: the gap shrinks by 0.8 per period, from 0.6
    to 0.6·0.8^11 ≈ 0.05 after 11 steps. Host noise can lift one application's f above the floor
    for a period (a slower step), hence the tolerance: the final gap at most 0.25."""
    out = tmp_path / "out"
    r = subprocess.run(
        [
            str(rtnetlab_cli),
            "slrm",
            "run",
            "--apps",
            "overload",
            "--duration",
            "12s",
            "--json",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["prefix"].startswith("rtnl-") and "cgroup v" in rep["cgroup"]
    assert r.stderr.splitlines()[0] == f"run {rep['prefix']}: caps on {rep['cgroup']}"
    periods = rep["periods"]
    assert len(periods) == 12
    for p in periods:
        # The RM's invariant, on the shares and on the quotas read back from the kernel.
        assert abs(sum(a["cap"] for a in p["apps"]) - 1.0) < 1e-9
        assert sum(a["quota_us"] for a in p["apps"]) == cgroups.PERIOD_US
        assert all(a["completed"] + a["failed"] > 0 or a["response_time"] > 0 for a in p["apps"])
    first = [a["share"] for a in periods[0]["apps"]]
    assert first == pytest.approx([0.8, 0.2])
    # The shares of the last period are those the RM set after 11 steps.
    last = [a["share"] for a in periods[-1]["apps"]]
    assert abs(last[0] - last[1]) <= 0.25, [[round(a["share"], 3) for a in p["apps"]] for p in periods]
    # Both overloaded: the RM read shortages (f < 0) from both every period after the first.
    assert all(a["matching"] < 0 for p in periods[1:] for a in p["apps"])
    # The caps are enforced: no application used much more CPU than its cap over a period (the
    # kernel's accounting and the window's edges allow a little).
    for p in periods[1:]:
        for a in p["apps"]:
            assert a["used_cores"] <= 1.25 * a["cap"] + 0.05, (p["time"], a)
    noise = rep["host_noise"]
    assert {"spinner_share_alone", "loadavg_1min_before", "max_tick_lateness_s"} <= set(noise)
    assert {f.name for f in out.iterdir()} == {"slrm.json", "slrm.csv", "slrm.png"}
    assert len((out / "slrm.csv").read_text().splitlines()) == 1 + 2 * 12
    assert _leftovers(rep["prefix"]) == []


@needs_cgroups
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signals_remove_the_groups_and_processes(rtnetlab_cli, tmp_path, sig, code):
    p = subprocess.Popen(
        [
            str(rtnetlab_cli),
            "slrm",
            "run",
            "--apps",
            "pair",
            "--duration",
            "60s",
            "--out",
            str(tmp_path / "o"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    prefix = None
    try:
        line = p.stderr.readline()
        assert line.startswith("run rtnl-"), line
        prefix = line.split()[1].rstrip(":")
        # Wait for the applications to run under their groups.
        deadline = time.monotonic() + 30
        while (
            time.monotonic() < deadline
            and len([x for x in _leftovers(prefix) if x.startswith("process")]) < 2
        ):
            time.sleep(0.1)
        assert len([x for x in _leftovers(prefix) if x.startswith("process")]) == 2, _leftovers(prefix)
        time.sleep(1.0)
        p.send_signal(sig)
        p.wait(timeout=30)
    finally:
        # A failure above: ask the run to clean up as a user would, and clean up after it if it
        # does not (a run killed outright cannot remove its own groups).
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        left = _leftovers(prefix) if prefix else []
        if left:
            _remove_leftovers(prefix)
    assert p.returncode == code
    assert left == []
    assert not (tmp_path / "o").exists()


@needs_cgroups
def test_an_error_during_the_run_removes_everything(monkeypatch):
    started: list[str] = []

    def broken_step(*args):
        raise RuntimeError("a failure inside the control loop")

    monkeypatch.setattr(slrmrun._core, "slrm_step", broken_step)
    sc, _ = slrmrun.scenario("overload", 4, None)
    with pytest.raises(RuntimeError, match="control loop"):
        slrmrun.run(sc, 1, lambda prefix, kind: started.append(prefix))
    assert len(started) == 1
    assert _leftovers(started[0]) == []
