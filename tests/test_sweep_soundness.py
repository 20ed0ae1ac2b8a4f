"""`rtnetlab experiment soundness`: the contract of its JSON, the coverage of its networks, and
a checker that does find violations when a bound is made too small."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("dask.distributed")

from rtnetlab import _core  # noqa: E402
from rtnetlab.cli import main  # noqa: E402
from rtnetlab.sweep import runner, soundness  # noqa: E402


def test_campaign_contract_and_coverage(tmp_path, capsys):
    out = tmp_path / "out"
    # Every scheduler mode (each kind the engine registers, and the mix) under every flow type (4);
    # no cut-through yet.
    modes = len(soundness.modes())
    networks = 4 * modes
    rc = main(
        [
            "experiment",
            "soundness",
            "--networks",
            str(networks),
            "--seed",
            "3",
            "--workers",
            "2",
            "--out",
            str(out),
            "--duration-ms",
            "100",
            "--json",
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    assert rc == (1 if doc["violations"] else 0)
    assert doc["networks"] == networks and doc["rows"] == networks
    assert doc["violations"] == 0, doc.get("reproducer")
    assert doc["routes"] > networks and doc["checks"] > doc["routes"]
    # Every kind the engine registers ran on some port, as the model names it.
    assert doc["schedulers"] == list(_core.scheduler_kinds())
    assert doc["flow_types"] == {
        "virtual_link": modes,
        "token_bucket": modes,
        "periodic": modes,
        "mixed": modes,
    }
    assert sum(doc["simulated_over_bound"]["bins"].values()) > 0
    table = runner.read_rows(out)
    assert table.num_rows == networks and sorted(table.column("tag.network").to_pylist()) == list(
        range(networks)
    )
    assert (out / "soundness.json").is_file()


def test_plans_cover_switching_and_planes():
    plans = [soundness.plan(1, n) for n in range(160)]
    assert {p["switching"] for p in plans} == {"store_and_forward", "cut_through"}
    planes = {len((soundness.network(p).get("redundancy") or {}).get("planes", ["A"])) for p in plans[:60]}
    assert planes == {1, 2}
    # A network is fixed by (seed, index).
    assert soundness.network(soundness.plan(1, 7)) == soundness.network(soundness.plan(1, 7))


def test_checker_reports_a_bound_made_too_small(tmp_path, monkeypatch):
    # With the delay slack at -1 s, every simulated maximum is "above its bound": the checker
    # must count them and write the smallest such network as a reproducer.
    monkeypatch.setattr(soundness, "DELAY_SLACK_US", -1e6)
    rows = []
    for n in range(3):
        p = soundness.plan(5, n)
        m = soundness.check(soundness.network(p), p, 5, 50.0)
        rows.append(
            {"index": n, "seed": 5, "error": None, "tag.network": n, "tag.switching": p["switching"], **m}
        )
    assert all(r["delay_violations"] >= r["routes"] for r in rows)
    rep = soundness.write_reproducer(rows, 5, 50.0, tmp_path)
    assert rep is not None and (tmp_path / "reproducer.yaml").is_file()
    smallest = min(rows, key=lambda r: (r["flows"], r["routes"], r["index"]))
    assert rep["network_index"] == smallest["tag.network"]
    doc = json.loads((tmp_path / "reproducer.json").read_text())
    assert doc["violations"] and doc["violations"][0]["simulated_max_us"] > 0


def test_seed_figures_run_as_sweeps(tmp_path, capsys):
    out8, out6 = tmp_path / "fig8", tmp_path / "fig6"
    assert (
        main(
            [
                "experiment",
                "seed000-fig8",
                "--out",
                str(out8),
                "--vls",
                "10,20",
                "--runs",
                "2",
                "--duration",
                "0.05s",
                "--workers",
                "2",
                "--json",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    # 2 VL counts x 4 schedulers x 2 runs, one row each; one table line per class.
    assert (doc["rows"], doc["failed"], len(doc["table"])) == (16, 0, 24)
    assert {t["scheduler"] for t in doc["table"]} == {"FIFO", "SP", "WF2Q", "D2DRR"}
    assert all(t["runs"] == 2 and t["mean_us"] > 0 for t in doc["table"])
    assert (out8 / "fig8_mean_avionics.png").is_file() and (out8 / "fig8.csv").is_file()
    assert (
        main(
            [
                "experiment",
                "seed001e-fig6",
                "--out",
                str(out6),
                "--seeds",
                "2",
                "--sets",
                "2",
                "--points",
                "3",
                "--workers",
                "2",
                "--json",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert (doc["rows"], doc["failed"], len(doc["table"])) == (6, 0, 9)
    # The same seeds through the engine's own driver, outside the sweep: the same acceptance.
    curve = _core.dopa_fig6("density", 3, 2, 1, "local-window", "release-jitter", 1)
    curve2 = _core.dopa_fig6("density", 3, 2, 2, "local-window", "release-jitter", 1)
    density = [t for t in doc["table"] if t["panel"] == "density"]
    assert [t["opa"] for t in density] == [(a[1] + b[1]) / 2 for a, b in zip(curve, curve2, strict=True)]
