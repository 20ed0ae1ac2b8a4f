"""`rtnetlab experiment seed003-fabric` and `seed001d-table2` on small instances: complete rows,
intervals around their means, the paper's Tables 4-5 from `configure dtable`, the branch and
bound against the exhaustive search (same answers, no more nodes), the growth stopping where the
exhaustive search gives up, and bad input as one line with exit code 2."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("dask.distributed")

from rtnetlab.cli import main  # noqa: E402
from rtnetlab.io import formats  # noqa: E402
from rtnetlab.sweep import fig_seed001d, fig_seed003, runner  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def rows(out: Path) -> list[dict]:
    return runner.rows_as_dicts(runner.read_rows(out))


# ---------------------------------------------------------------------------------------------
# Seed 003
# ---------------------------------------------------------------------------------------------


def test_cdf_on_the_grid_by_hand():
    # Two packets in buckets ending at 1 µs and 3 µs: half by 1 µs and 2 µs, all by 3 µs.
    assert fig_seed003.cdf([(3000, 1), (1000, 1)], [1.0, 2.0, 3.0]) == [0.5, 0.5, 1.0]
    assert fig_seed003.cdf([], [1.0]) == [None]


def test_claims_by_hand():
    # DTable 10 µs, DRR 29 µs: DRR is 190 % slower (the seed's "190 % better"); SCFQ 11 µs:
    # DTable within 9.09 % of it; DTable-WF2Q 18 µs: 80 % slower for NC.
    means = {"DTable": 10.0, "DRR": 29.0, "SCFQ": 11.0, "DTable-WF2Q": 18.0}
    table = [
        {
            "load": 0.9,
            "scheduler": s,
            "class": "NC",
            "mean_us": m,
            "p99_us": 2 * m,
            "offered": 0.01,
            "accepted": 0.01,
        }
        for s, m in means.items()
    ]
    c = fig_seed003.claims(table, [0.9])
    assert c["dtable_over_drr_mean_us"]["percent"] == pytest.approx(190.0)
    assert c["dtable_vs_scfq_mean_us"]["percent"] == pytest.approx(100 / 11)
    assert c["dtable_over_wf2q_nc_vo_mean_us"]["percent"] == pytest.approx(80.0)
    assert c["order_at_max_load"]["NC"] == ["DTable", "SCFQ", "DTable-WF2Q", "DRR"]
    assert c["best_effort_saturates_from_load"] is None


def test_table4_requirements_are_the_example_file():
    assert fig_seed003.TABLE4_REQUIREMENTS == formats.read(ROOT / "examples/dtable/table4_requirements.yaml")


def test_seed003_small_fabric_sweep(tmp_path, capsys):
    out = tmp_path / "fabric"
    args = [
        "experiment",
        "seed003-fabric",
        "--out",
        str(out),
        "--runs",
        "2",
        "--loads",
        "0.8,0.99",
        "--duration",
        "1ms",
        "--warmup",
        "0.2ms",
        "--endpoints",
        "4",
        "--workers",
        "2",
        "--json",
    ]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    # 2 loads x 4 schedulers x 2 runs, one row each, complete; no loss, overflow or disorder.
    rs = rows(out)
    assert (doc["rows"], doc["failed"], doc["checks_failed"]) == (16, 0, 0)
    keys = {(r["tag.load"], r["tag.scheduler"], r["seed"]) for r in rs}
    assert keys == {(x, s, n) for x in (0.8, 0.99) for s, _ in fig_seed003.SCHEDULERS for n in (1, 2)}
    for r in rs:
        assert r["error"] is None and r["checks_hold"] == 1.0
        assert all(r[f"mean_us.{c}"] > 0 and r[f"p99_us.{c}"] > 0 for c in fig_seed003.QOS)
        for c in fig_seed003.CLASSES:
            cdf = [r[f"cdf.{c}.{k}"] for k in range(len(fig_seed003.CDF_US))]
            assert all(0 <= a <= b <= 1 for a, b in zip(cdf, cdf[1:], strict=False)) and cdf[-1] == 1.0
    # The traffic depends on the seed only: the four schedulers of a run are offered the same.
    for x in (0.8, 0.99):
        for n in (1, 2):
            offered = {
                r["tag.scheduler"]: r["offered.VI"] for r in rs if (r["tag.load"], r["seed"]) == (x, n)
            }
            assert len(set(offered.values())) == 1, offered
    # More best-effort load is offered at the higher point.
    be = {x: sum(r["offered.BE"] for r in rs if r["tag.load"] == x) for x in (0.8, 0.99)}
    assert be[0.99] > be[0.8]
    # Every interval contains its mean, over the 2 runs (t at 90 %).
    for t in doc["table"]:
        assert t["runs"] == 2
        vals = [
            r[f"mean_us.{t['class']}"]
            for r in rs
            if (r["tag.load"], r["tag.scheduler"]) == (t["load"], t["scheduler"])
        ]
        assert t["mean_us"] == pytest.approx(sum(vals) / 2)
        assert t["mean_ci_us"] >= 0
        assert t["mean_us"] - t["mean_ci_us"] <= min(vals) <= max(vals) <= t["mean_us"] + t["mean_ci_us"]
    # Tables 4 and 5 (catalogue TV-003-1..3): every printed cell, bar BE's WF2Q total (printed 69,
    # 3 x 32 = 96: I-003-2) and the shares, which the paper truncates to three decimals.
    for row in doc["table4"]:
        for k in ("distance", "entries", "mtu_bytes"):
            assert row[k] == row[f"paper_{k}"], (row["class"], k)
        for k in ("min_share", "max_share"):
            assert math.floor(row[k] * 1000) / 1000 == pytest.approx(row[f"paper_{k}"]), (row["class"], k)
    for row in doc["table5"]:
        for k in ("dtable_entries", "dtable_total", "wf2q_entries", "wf2q_entry_weight", "drr_quantum"):
            assert row[k] == row[f"paper_{k}"], (row["class"], k)
        assert row["dtable_entry_weights"] == str(row["paper_dtable_entry_weight"])
        assert row["wf2q_total"] == (96 if row["class"] == "BE" else row["paper_wf2q_total"])
    assert sum(r["dtable_total"] for r in doc["table5"]) == 1024
    for name in ("table4.csv", "table5.csv", "fabric.csv", "cdf_max_load.png", "fabric_mean_NC.png"):
        assert (out / name).is_file(), name
    assert set(doc["claims"]) >= {"dtable_vs_scfq_mean_us", "dtable_over_drr_p99_us", "order_at_max_load"}


@pytest.mark.parametrize(
    "extra, place",
    [
        (["--loads", "0.5"], "--loads"),
        (["--loads", "x"], "--loads"),
        (["--duration", "soon"], "--duration"),
        (["--reference-rate", "0bps"], "--reference-rate"),
    ],
)
def test_seed003_bad_input_is_one_line_exit_2(tmp_path, capsys, extra, place):
    out = tmp_path / "out"
    assert main(["experiment", "seed003-fabric", "--out", str(out), "--endpoints", "4", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and place in err, err
    assert not out.exists()


# ---------------------------------------------------------------------------------------------
# Seed 001D
# ---------------------------------------------------------------------------------------------


def test_seed001d_branch_and_bound_against_exhaustive(tmp_path, capsys):
    out = tmp_path / "t2"
    args = [
        "experiment",
        "seed001d-table2",
        "--out",
        str(out),
        "--sets",
        "3",
        "--min-vls",
        "2",
        "--max-vls",
        "4",
        "--cap",
        "30",
        "--workers",
        "1",
        "--json",
    ]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    rs = rows(out)
    # Every size x interval x instance, complete (the exhaustive search never gives up here).
    intervals = list(fig_seed001d.TABLE2_PAPER)
    assert (doc["rows"], doc["failed"]) == (3 * 5 * 3, 0)
    assert {(r["tag.vls"], r["tag.mtc_ms"], r["seed"]) for r in rs} == {
        (n, i, s) for n in (2, 3, 4) for i in intervals for s in (1, 2, 3)
    }
    assert all(v is None for v in doc["exhaustive_gave_up_at_vls"].values())
    verdicts = set()
    for r in rs:
        assert all(r[k] is not None for k in fig_seed001d.keep_names() if "reserved" not in k), r
        assert all(r[f"{s}.gave_up"] == 0.0 for s, _ in fig_seed001d.SEARCHES)
        # Same first configuration, same least bandwidth, same verdict.
        assert r["same_first"] == r["same_optimum"] == r["same_verdict"] == 1.0
        assert r["bb_min.reserved_bps"] == r["bf_all.reserved_bps"]
        # Pruning visits no more nodes; trying every combination visits the whole tree.
        assert r["bb_fig5.nodes"] <= r["bf_first.nodes"] and r["bb_min.nodes"] <= r["bf_all.nodes"]
        assert r["bf_all.nodes"] == r["tree_nodes"]
        verdicts.add(r["feasible"])
    assert verdicts == {0.0, 1.0}
    for e in doc["table"]:
        assert e["sets"] == 3 and e["bb_fig5.more_nodes"] == e["bb_min.more_nodes"] == 0
        assert e["same_optimum.agree"] == e["same_optimum.compared"] == 3
        for s, _ in fig_seed001d.SEARCHES:
            vals = [r[f"{s}.nodes"] for r in rs if (r["tag.vls"], r["tag.mtc_ms"]) == (e["vls"], e["mtc_ms"])]
            assert e[f"{s}.nodes"] == pytest.approx(sum(vals) / 3)
            hw = e[f"{s}.nodes_ci"]
            assert e[f"{s}.nodes"] - hw <= min(vals) <= max(vals) <= e[f"{s}.nodes"] + hw
    assert (out / "table2.csv").is_file() and (out / "table2_nodes.png").is_file()


def test_seed001d_growth_stops_where_the_exhaustive_search_gives_up(tmp_path, capsys):
    # 9 VLs at 210..260 ms: tens of millions of leaves, so a 1 ms cap stops every exhaustive
    # search (the branch and bound needs a few thousand nodes); size 10 is then never run.
    out = tmp_path / "t2"
    args = [
        "experiment",
        "seed001d-table2",
        "--out",
        str(out),
        "--sets",
        "2",
        "--min-vls",
        "9",
        "--max-vls",
        "11",
        "--cap",
        "0.001",
        "--mtc",
        "210-260",
        "--workers",
        "1",
        "--json",
    ]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["exhaustive_gave_up_at_vls"] == {"210-260": 9}
    rs = rows(out)
    assert {r["tag.vls"] for r in rs} == {9} and len(rs) == 2
    for r in rs:
        assert r["bf_all.gave_up"] == 1.0 and r["bf_all.reserved_bps"] is None
        assert r["same_optimum"] is None
        # Fig. 5's branch and bound needs 10 nodes; the cap is read every 4096.
        assert r["bb_fig5.gave_up"] == 0.0 and r["bb_fig5.nodes"] == 10


@pytest.mark.parametrize(
    "extra, place",
    [
        (["--mtc", "60-10"], "--mtc"),
        (["--mtc", "a-b"], "--mtc"),
        (["--min-vls", "6", "--max-vls", "5"], "--max-vls"),
    ],
)
def test_seed001d_bad_input_is_one_line_exit_2(tmp_path, capsys, extra, place):
    out = tmp_path / "out"
    assert main(["experiment", "seed001d-table2", "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and place in err, err
    assert not out.exists()
