"""The API's studies and runs on this machine (`rt.sweep`, `rt.experiment`, `rt.middleware`,
`rt.slrm_*`, `Network.export_tc`, `rt.testbed_down`): what the commands do, from Python, with the
same refusals and limits; a package that shares a function's name still calls it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import rtnetlab as rt
from rtnetlab.io import formats

REPO = Path(__file__).resolve().parents[1]
SEED002 = REPO / "examples" / "seed002_four_vls.yaml"

SPEC = {"name": "tiny", "network": {"generate": {"virtual_links": 10, "switches": 2, "planes": 1}},
        "vary": {"generate.virtual_links": [10, 12]}, "seeds": 2,
        "run": {"analyze": {"methods": ["tfa"]}}, "keep": ["analyze.tfa.max_delay_us"]}


def test_sweep_of_plain_data_gives_rows_and_summary_as_frames(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed")
    pl = pytest.importorskip("polars")
    swept = rt.sweep(SPEC, tmp_path / "out", workers=1, progress=False)
    assert (swept.data["points"], swept.data["rows"], swept.failed) == (2, 4, 0)
    rows = swept.to_polars()
    assert isinstance(rows, pl.DataFrame) and rows.height == 4
    assert set(rows["generate.virtual_links"]) == {10, 12}
    summary = swept.to_polars("summary")
    assert summary.height == 2 and "analyze.tfa.max_delay_us.mean" in summary.columns
    assert json.loads(swept.to_json())["files"]["summary_csv"].endswith("summary.csv")
    with pytest.raises(rt.UserError, match="--out: .* holds a sweep's results"):
        rt.sweep(SPEC, tmp_path / "out", workers=1, progress=False)


def test_sweep_refuses_what_the_command_refuses(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed")
    with pytest.raises(rt.UserError, match="unknown key"):
        rt.sweep({**SPEC, "bogus": 1}, tmp_path / "a")
    with pytest.raises(rt.UserError, match="--workers: 100,000 worker processes, more than the limit"):
        rt.sweep(SPEC, tmp_path / "b", workers=100_000)
    with pytest.raises(rt.UserError, match="--trust-scheduler"):
        rt.sweep(SPEC, tmp_path / "c", scheduler="tcp://127.0.0.1:1")
    assert not (tmp_path / "b").exists()


def test_experiment_rows_and_refusals(tmp_path: Path) -> None:
    r = rt.experiment("schedulers", duration=0.02)
    assert {row["scheduler"] for row in r.flows} >= {"FIFO", "D2DRR"}
    assert json.loads(r.to_json()) == r.document
    with pytest.raises(rt.UserError, match="experiment: no experiment named 'nope'"):
        rt.experiment("nope")
    with pytest.raises(rt.UserError, match="experiment schedulers: no option 'speed'"):
        rt.experiment("schedulers", speed=1)
    with pytest.raises(rt.UserError, match="--packets: 10,000,000,000 messages, more than the limit"):
        rt.experiment("nss-overhead", packets=10**10)
    # A figure's options keep their command-line rules (min, the limits) and `out` is required.
    with pytest.raises(rt.UserError, match="--runs: must be at least 2, got 1"):
        rt.experiment("seed000-fig8", out=tmp_path / "f", runs=1)
    with pytest.raises(rt.UserError, match="--networks: 1,000,000,000 rows, more than the limit"):
        rt.experiment("soundness", out=tmp_path / "s", networks=10**9)
    with pytest.raises(rt.UserError, match="'out' is required"):
        rt.experiment("seed000-fig8")
    # A comma-separated option also takes a list, joined into the text its parser checks.
    with pytest.raises(rt.UserError, match="--vls: '40,x' is not a comma-separated list of whole numbers"):
        rt.experiment("seed000-fig8", out=tmp_path / "v", vls=[40, "x"])
    assert not (tmp_path / "v").exists()


def test_slrm_step_and_simulation() -> None:
    assert [round(c, 6) for c in rt.slrm_step([0.5, 0.5], [-0.5, 0.2])] == [0.57, 0.43]
    with pytest.raises(rt.UserError):
        rt.slrm_step([0.5, 0.5], [0.1])
    r = rt.slrm_simulate(experiment=1)
    assert r.summary["periods"] == len(r.data["periods"]) > 0
    assert {row["app"] for row in r.flows} == set(r.data["apps"])
    with pytest.raises(rt.UserError, match="--seed: must be at least 0"):
        rt.slrm_simulate(experiment=1, seed=-1)
    with pytest.raises(rt.UserError, match="--duration: 100,000(.0)? s, more than the limit"):
        rt.slrm_run("overload", duration="100000s")


def test_middleware_checks_lists_given_as_sequences_or_text() -> None:
    for options, message in (
        ({"backends": ["udp", "nope"]}, "--backends: unknown backend 'nope'"),
        ({"backends": "udp", "payload": [8]}, "--payload: each value must be at least 16, got 8"),
        ({"subscribers": "1,x"}, "--subscribers: expected comma-separated integers, got 'x'"),
        ({"messages": 10**12}, "--messages: 1,000,000,000,000 messages, more than the limit"),
        ({"period": 1e-6}, "--period: must be at least 10us"),
        ({"bogus": 1}, "middleware pubsub: no option 'bogus'"),
    ):
        with pytest.raises(rt.UserError, match=message.replace("(", r"\(")):
            rt.middleware("pubsub", **options)
    with pytest.raises(rt.UserError, match="--windows: expected the windows of routing and recorder"):
        rt.middleware("partitions", windows={"routing": "800us"})
    with pytest.raises(rt.UserError, match="middleware: no experiment named"):
        rt.middleware("nope")


def test_middleware_result_reads_back_and_renders(tmp_path: Path) -> None:
    result = rt.middleware("pubsub", backends=["udp"], subscribers=[1], payload=[16], messages=20, warmup=0,
                           noise=0, rt=False, ddsperf=False, out=tmp_path)
    assert result.experiment == "pubsub" and len(result.flows) == 1
    assert [p.name for p in result.files] == ["pubsub.json", "pubsub.html"]
    again = rt.MiddlewareResult.read(tmp_path / "pubsub.json")
    assert again.flows[0]["count"] == result.flows[0]["count"]
    assert again.to_html().lstrip().lower().startswith("<!doctype html")
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(rt.UserError, match="not middleware results"):
        rt.MiddlewareResult.read(tmp_path / "x.json")


def test_export_tc_of_a_network_built_or_read() -> None:
    read_script, missing = rt.read(SEED002).export_tc("ES1", "eth0")
    built = rt.Network.from_dict(formats.read(SEED002))
    built_script, _ = built.export_tc("ES1", "eth0")
    # The same commands; only the comment naming where the description came from differs.
    def commands(script: str) -> list[str]:
        return [line for line in script.splitlines() if not line.startswith("#")]
    assert commands(read_script) == commands(built_script) and isinstance(missing, list)
    with pytest.raises(rt.UserError, match="--dev: 'a b' is not a network interface name"):
        built.export_tc("ES1", "a b")
    with pytest.raises(rt.UserError, match="--node: no node named ES9"):
        built.export_tc("ES9", "eth0")
    with pytest.raises(rt.UserError, match="--plane: no plane Z"):
        built.export_tc("ES1", "eth0", plane="Z")


def test_testbed_down_needs_a_run_or_all() -> None:
    with pytest.raises(rt.UserError, match="give a run"):
        rt.testbed_down()
    with pytest.raises(rt.UserError, match="no run rtnl-zzzzzz here"):
        rt.testbed_down("rtnl-zzzzzz")


@pytest.mark.parametrize("first", ["rtnetlab.sweep.spec", "rtnetlab.middleware.options", "rtnetlab.studies"])
def test_packages_named_like_functions_stay_callable(first: str) -> None:
    """`rtnetlab.sweep` and `rtnetlab.middleware` are packages too: whichever is imported first,
    rt.sweep and rt.middleware call the API's functions."""
    code = (f"import {first}, rtnetlab as rt\n"
            "try:\n    rt.middleware('nope')\nexcept rt.UserError as e:\n    print(e)\n"
            "try:\n    rt.sweep({'name': 1}, '/nonexistent/x')\nexcept rt.UserError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("middleware: no experiment named 'nope'")
    assert "SPEC" in lines[1] or "network" in lines[1]
