"""`rtnetlab configure tsn --max-wait`: bounded-wait schedules, in which a scheduled frame may wait
behind other scheduled frames at the gates of its route, at most the stated time in all. The
example no no-wait schedule carries, the bound honoured three ways (the engine's own check, the
analysis, the simulator's measured delays), and an impossible bound refused in one line."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest
import yaml

from test_tsn_synthesis import FAST, REPO, run
from test_tsn_synthesis import configure as configure_tsn

EXAMPLE = REPO / "examples" / "tsn" / "tsn_bounded_wait.yaml"


def configure(src: Path, out: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    res, doc = configure_tsn(src, out, *extra)
    assert "Traceback" not in res.stderr
    return res, doc


def test_no_wait_cannot_schedule_the_example(tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    res, report = configure(EXAMPLE, out, "--solver", "exact")
    assert res.returncode == 1 and not report["feasible"] and report["mode"] == "no-wait"
    assert report["reasons"] == [
        "no offsets exist: the exact program (HiGHS) proves that no no-wait schedule keeps every pair of "
        "streams apart at every port"
    ]
    assert not out.exists()


@pytest.mark.parametrize("solver", ["exact", "heuristic"])
def test_bounded_wait_schedules_it_within_the_bound(tmp_path: Path, solver: str) -> None:
    out = tmp_path / "out.yaml"
    res, report = configure(EXAMPLE, out, "--max-wait", "32us", "--solver", solver)
    assert res.returncode == 0 and report["feasible"], report
    assert report["mode"] == "bounded-wait" and report["max_wait_ns"] == 32_000
    assert report["misses"] == [] and report["unconfirmed"] == []
    # Some frame waits (no-wait has no schedule), none more than the bound.
    waits = {s["flow"]: s["wait_ns"] for s in report["streams"]}
    assert max(waits.values()) > 0 and all(0 <= w <= 32_000 for w in waits.values()), waits
    v = report["verification"]
    assert v["analysis"]["passed"] and v["simulation"]["passed"], v
    assert 0 < v["simulation"]["max_wait_us"] <= 32.0 + 1e-3
    # analyze --fail-on-miss of the output: every stream time-triggered, its bound at most its
    # chain plus the bound on its wait.
    chains = {s["flow"]: s["chain_us"] for s in report["streams"]}
    res = run("analyze", str(out), "--fail-on-miss", "--json")
    assert res.returncode == 0, res.stdout
    bounds = {f["flow"]: f["delay_us"] for f in json.loads(res.stdout)["flows"]}
    for flow, chain in chains.items():
        assert chain - 1e-3 <= bounds[flow] <= chain + 32.0 + 1e-3, (flow, bounds[flow], chain)
    # The simulator's every frame: delay within [chain, chain + 30 us].
    res = run("simulate", str(out), "--duration", "20ms", "--json")
    rows = json.loads(res.stdout)["flows"]
    assert rows and all(r["count"] > 0 for r in rows)
    for r in rows:
        assert chains[r["flow"]] - 1e-3 <= r["min_us"] <= r["max_us"] <= chains[r["flow"]] + 32.0 + 1e-3, r


def test_an_impossible_bound_is_one_line(tmp_path: Path) -> None:
    """31.2 us is the least wait that separates the example's two streams (ε = 200 ns): 31.1 us
    cannot, and the exact program says so in one line."""
    out = tmp_path / "out.yaml"
    res, report = configure(EXAMPLE, out, "--max-wait", "31.1us", "--solver", "exact")
    assert res.returncode == 1 and not report["feasible"]
    assert report["reasons"] == [
        "no offsets and waits exist: the exact program (HiGHS) proves that no schedule in which each frame "
        "waits at most 31100ns in all (--max-wait) keeps every pair of streams apart at every port"
    ]
    plain = run("configure", "tsn", str(EXAMPLE), "-o", str(out), "--max-wait", "31.1us", "--solver", "exact",
                *FAST)
    assert plain.returncode == 1 and "waits at most 31100ns in all" in plain.stderr
    assert "Traceback" not in plain.stderr and not out.exists()


def test_bad_bound_is_one_line_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    for value, line in [
        ("-5us", "--max-wait: must not be negative, got '-5us'"),
        ("2s", "--max-wait: at most 1 s (a frame held longer is not time-triggered), got 2s"),
    ]:
        res = run("configure", "tsn", str(EXAMPLE), "-o", str(out), "--max-wait", value)
        assert (res.returncode, res.stderr.strip()) == (2, line)
    res = run("configure", "tsn", str(EXAMPLE), "-o", str(out), "--max-wait", "soon")
    assert res.returncode == 2 and res.stderr.startswith("--max-wait: ") and len(res.stderr.splitlines()) == 1
    assert not out.exists()


def test_python_api(tmp_path: Path) -> None:
    import rtnetlab as rt
    from rtnetlab.errors import UserError

    net = rt.read(EXAMPLE)
    result = net.configure_tsn(solver="exact", max_wait="32us")
    assert result.data["feasible"] and result.data["mode"] == "bounded-wait"
    assert result.network is not None
    same = net.configure_tsn(solver="exact", max_wait=32e-6)
    assert same.data["max_wait_ns"] == 32_000
    assert not net.configure_tsn(solver="exact").data["feasible"]
    with pytest.raises(UserError, match="--max-wait"):
        net.configure_tsn(max_wait=-1.0)


def line(seed: int) -> dict:
    """A random line of 3 switches with talkers and listeners and streams of one scheduled class."""
    rng = random.Random(seed)
    switches = ["s0", "s1", "s2"]
    ends = [f"e{i}" for i in range(6)]
    links = [{"from": a, "to": b} for a, b in zip(switches, switches[1:], strict=False)]
    links += [{"from": e, "to": switches[i // 2]} for i, e in enumerate(ends)]
    flows = [
        {"name": f"tt{k}", "type": "periodic", "period": f"{rng.choice([100, 200])}us",
         "size": f"{rng.randint(200, 600)}B", "class": "tt", "source": a, "destinations": [b],
         "deadline": "1ms"}
        for k, (a, b) in enumerate(rng.sample(ends, 2) for _ in range(rng.randint(3, 6)))
    ]
    return {
        "name": f"line-{seed}", "defaults": {"link_rate": "100Mbps", "technological_latency": "5us"},
        "classes": [{"name": "tt", "priority": 0}, {"name": "be", "priority": 1}],
        "schedulers": {"g": {"kind": "tas", "scheduled": ["tt"], "sync_error": "100ns"}},
        "end_systems": [{"name": e, "scheduler": "g"} for e in ends],
        "switches": [{"name": s, "scheduler": "g"} for s in switches], "links": links, "flows": flows,
    }


@pytest.mark.parametrize("seed", range(4))
def test_random_lines_keep_the_bound(tmp_path: Path, seed: int) -> None:
    """Whatever bounded-wait synthesises holds three ways, its waits within the bound."""
    src = tmp_path / "net.yaml"
    src.write_text(yaml.safe_dump(line(seed), sort_keys=False))
    out = tmp_path / "out.yaml"
    res, report = configure(src, out, "--max-wait", "15us")
    if not report["feasible"]:
        assert res.returncode == 1 and report["reasons"], report
        return
    assert res.returncode == 0, report
    assert report["unconfirmed"] == [] and report["misses"] == []
    assert all(s["wait_ns"] <= 15_000 for s in report["streams"])
    sim = report["verification"]["simulation"]
    assert sim["passed"] and sim["max_wait_us"] <= 15.0 + 1e-3, sim


def measured_run(noise_us: float, rows: list[tuple[str, float, float]], late_p99_us: float = 80.0):
    """A stand-in for the testbed's run: the host's noise (model time) and per stream its minimum
    and undisturbed maximum (us)."""

    def run(net, configured, **kw):
        flows = [{"flow": f, "destination": "d", "count": 100, "undisturbed_count": 90, "min_us": lo,
                  "mean_us": lo, "max_us": hi + 500, "undisturbed_max_us": hi}
                 for f, lo, hi in rows]  # fmt: skip
        return {"host": {"noise_us": noise_us, "send_lateness_us": {"p99_us": late_p99_us}}, "flows": flows}

    return run


def test_testbed_check_decides_only_where_the_noise_fits_the_clock_error(monkeypatch) -> None:
    # The check used to pass a schedule whenever each stream's jitter was within the host's noise:
    # on a loaded host (noise 1.6 ms against 1 us of clock error) that is every schedule. It now
    # decides only where the noise is within the clock error the windows allow, and then also
    # holds each stream to its chain plus the wait bound.
    from rtnetlab import configure
    from rtnetlab.testbed import run as tb

    monkeypatch.setattr(os, "geteuid", lambda: 0)  # the check's own root test, not the run's
    monkeypatch.setattr(tb, "binary", lambda: None)
    chains = {"a": 10.0}

    def check(noise, lo, hi, eps_ns=1000, bound_us=0.0, scale=1.0):
        monkeypatch.setattr(tb, "run", measured_run(noise, [("a", lo, hi)]))
        return configure._testbed_check(None, {}, chains, 1.0, eps_ns, bound_us, scale)

    loaded = check(1650.0, 525.0, 1085.0)
    assert loaded["passed"] is None and loaded["detail"].startswith("undecided on this host"), loaded
    assert "--testbed-time-scale 80 or more" in loaded["detail"]
    assert check(0.8, 10.1, 10.6)["passed"] is True
    assert check(0.8, 10.1, 11.2)["passed"] is False  # jitter above the noise
    assert check(0.8, 20.0, 20.5)["passed"] is False  # above its chain: a missed window
    assert check(0.8, 20.0, 20.5, bound_us=11.0)["passed"] is True  # within chain + wait bound
    assert "time scale 50 (model time)" in check(0.8, 10.1, 10.6, scale=50.0)["detail"]


def test_a_stream_without_an_undisturbed_frame_is_said_so(monkeypatch, capsys) -> None:
    # A loaded host may disturb every frame of a stream: its jitter is not measured, the check
    # decides nothing on it (nor passes it), and the summary says so instead of failing on the
    # missing figure.
    from rtnetlab import configure
    from rtnetlab.cli import configure as cli
    from rtnetlab.testbed import run as tb

    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(tb, "binary", lambda: None)
    base = measured_run(0.8, [("a", 10.1, 10.6)])

    def run(net, configured, **kw):
        measured = base(net, configured, **kw)
        measured["flows"][0]["undisturbed_count"] = 0
        return measured

    monkeypatch.setattr(tb, "run", run)
    check = configure._testbed_check(None, {}, {"a": 10.0}, 1.0, 1000, 0.0, 1.0)
    assert check["passed"] is None and check["streams"][0]["jitter_us"] is None, check
    report = {"feasible": True, "mode": "no-wait", "method": "first-fit", "streams": [], "ports": [],
              "idle_slopes": {}, "value": None, "misses": [], "unconfirmed": [],
              "verification": {"testbed": check}}  # fmt: skip
    cli._print_tsn(report)
    printed = capsys.readouterr().out
    assert "check testbed: not decided" in printed and "jitter not measured (no undisturbed frame)" in printed
