"""Abstract network-calculus networks (`server_graph:`) through the CLI as a user runs it: every
method's bound beside NetCal/DNC's for the same network (../shared/oracles/dnc-functional-tests.md,
TA_2S_1SC_2F_1AC_1P; SFA under FIFO by hand, counting the flow of interest upstream where the
suite leaves it out), the simulator's refusal, and the description's own rules."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "server_graph" / "tandem_two_flows.yaml"


def run(cli: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("method", "blind", "delay", "backlog"),
    # DNC's functional-test values, in the description's units (read as seconds and bits), but
    # SFA under FIFO: the suite leaves the flow of interest out of its companion's interference
    # at s0 (35, 175; reproduced by crates/core/tests/dnc_functional.rs), `sfa` counts it: by hand
    # (5, 12.5) ⊗ (5, 10 + 87.5/10) = (5, 31.25), delay 31.25 + 25/5 = 36.25, backlog
    # 25 + 5·31.25 = 181.25 (tests/test_sfa_fifo_soundness.py). best under FIFO takes fifo-lp's 25,
    # the exact worst case (tests/test_fifo_lp.py), with SFA's backlog: below DNC's best (35).
    [("tfa", False, 40.0, 250.0), ("sfa", False, 36.25, 181.25), ("sfa", True, 65.0, 325.0),
     ("pmoo", False, 50.0, 250.0), ("best", False, 25.0, 181.25), ("best", True, 50.0, 250.0)],
)
def test_every_method_gives_dncs_bound(rtnetlab_cli: Path, method: str, blind: bool, delay: float,
                                        backlog: float) -> None:
    args = ["analyze", EXAMPLE, "--method", method, "--json"] + (["--blind"] if blind else [])
    res = run(rtnetlab_cli, *args)
    assert res.returncode == 0, res.stderr
    for row in json.loads(res.stdout)["flows"]:
        # fifo-lp's optimum is raised by more than HiGHS's tolerance (1e-6 relative, at most).
        rel = 1e-6 if (method, blind) == ("best", False) else 1e-9
        assert row["delay_us"] / 1e6 == pytest.approx(delay, rel=rel) and row["delay_us"] / 1e6 >= delay
        assert row["backlog_bytes"] * 8 == pytest.approx(backlog, rel=1e-9)


def test_the_simulator_refuses_a_server_graph(rtnetlab_cli: Path) -> None:
    res = run(rtnetlab_cli, "simulate", EXAMPLE)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        f"{EXAMPLE}: a server graph has no frames and no links to simulate; "
        "analyse it with `rtnetlab analyze`"
    ]


def test_grouping_and_afdx_naive_do_not_apply(rtnetlab_cli: Path) -> None:
    res = run(rtnetlab_cli, "analyze", EXAMPLE, "--grouping")
    assert res.returncode == 2 and "grouping does not apply" in res.stderr
    res = run(rtnetlab_cli, "analyze", EXAMPLE, "--method", "afdx-naive")
    assert res.returncode == 2 and "not to a server graph" in res.stderr


def test_a_server_graph_states_its_problems(rtnetlab_cli: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: bad\n"
        "server_graph:\n"
        "  servers: [{name: s0, rate: 0, latency: 1}, {name: s0, rate: 2, latency: -1}]\n"
        "  flows: [{name: f, burst: 1, rate: 1, path: [s0, s9, s0]}]\n"
    )
    res = run(rtnetlab_cli, "validate", bad)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "server_graph.servers[0].rate: must be a positive finite number, got 0",
        "server_graph.servers[1].name: 's0' is already the name of server_graph.servers[0]; "
        "server names must be unique",
        "server_graph.servers[1].latency: must be a finite number, at least 0, got -1",
        "server_graph.flows[0].path[1]: unknown server 's9'",
        "server_graph.flows[0].path[2]: crosses server 's0' twice",
    ]


def test_a_flows_arrival_curve_states_its_problems(rtnetlab_cli: Path, tmp_path: Path) -> None:
    # A flow's arrival curve is a token bucket (burst and rate) or a staircase, each number by its
    # rule; every problem one line naming its place.
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: bad\n"
        "server_graph:\n"
        "  servers: [{name: s0, rate: 1, latency: 8}]\n"
        "  flows:\n"
        "    - {name: a, staircase: {period: 0, tolerance: -1, size: 1}, path: [s0]}\n"
        "    - {name: b, staircase: {period: 25, tolerance: 4, size: 0}, path: [s0]}\n"
        "    - {name: c, burst: 1, rate: 1, staircase: {period: 25, tolerance: 4, size: 1}, path: [s0]}\n"
        "    - {name: d, path: [s0]}\n"
        "    - {name: e, burst: 1, path: [s0]}\n"
        "    - {name: f, rate: 1, path: [s0]}\n"
        "    - {name: g, staircase: {period: 1, tolerance: 2000000, size: 1}, path: [s0]}\n"
    )
    res = run(rtnetlab_cli, "validate", bad)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "server_graph.flows[0].staircase.period: must be a positive finite number, got 0",
        "server_graph.flows[0].staircase.tolerance: must be a finite number, at least 0, got -1",
        "server_graph.flows[1].staircase.size: must be a positive finite number, got 0",
        "server_graph.flows[2]: an arrival curve is a token bucket (burst and rate) or a staircase, not both",
        "server_graph.flows[3]: needs an arrival curve: burst and rate (a token bucket), or staircase",
        "server_graph.flows[4].rate: a token bucket needs a rate beside its burst",
        "server_graph.flows[5].burst: a token bucket needs a burst beside its rate",
        "server_graph.flows[6].staircase.tolerance: must be at most 1e6 periods (1000000), got 2000000",
    ]
    # An unknown key of the staircase is named with its place (the GCRA's `tau` is `tolerance`).
    bad.write_text(
        "name: bad\n"
        "server_graph:\n"
        "  servers: [{name: s0, rate: 1, latency: 8}]\n"
        "  flows: [{name: a, staircase: {period: 25, tau: 4, size: 1}, path: [s0]}]\n"
    )
    res = run(rtnetlab_cli, "validate", bad)
    assert res.returncode == 2
    err = res.stderr.strip()
    assert err.startswith("server_graph.flows[0].staircase") and "tau" in err and "\n" not in err, err
