"""`rtnetlab sweep`: SPEC checking, a 2-worker LocalCluster sweep, resume after a real kill,
determinism across worker counts, failing points recorded, aggregation against scipy-free hand
values."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("dask.distributed")

from rtnetlab.cli import main  # noqa: E402
from rtnetlab.sweep import aggregate, runner  # noqa: E402

RTNETLAB = [sys.executable, "-m", "rtnetlab.cli"]

SMALL = """
name: small
network:
  generate: {virtual_links: 20, switches: 2, planes: 1}
vary:
  generate.virtual_links: [10, 20, 30]
seeds: 2
run:
  analyze: {methods: [tfa]}
keep: [analyze.tfa.max_delay_us, analyze.tfa.unbounded]
"""


def write(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def rows(out: Path) -> list[dict]:
    table = runner.read_rows(out)
    return [] if table is None else table.to_pylist()


def without_wall(rs: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "wall_s"} for r in rs]


def test_two_worker_sweep_writes_one_row_per_point_and_seed(tmp_path, capsys):
    spec = write(tmp_path, SMALL)
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "--workers", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["points"], doc["rows"], doc["failed"], doc["workers"]) == (3, 6, 0, 2)
    rs = rows(out)
    assert [(r["index"], r["seed"]) for r in rs] == [(i, s) for i in range(3) for s in (1, 2)]
    assert len({r["point"] for r in rs}) == 6
    # Each row's bound is the engine's own analysis of the generated network (a second engine
    # call here, outside the sweep).
    from rtnetlab import _core, model

    for r in rs:
        doc_net = json.loads(_core.generate_afdx(r["generate.virtual_links"], 2, r["seed"], 1, 0))
        flows = model.load_data(doc_net).analyze("tfa")["flows"]
        assert r["analyze.tfa.max_delay_us"] == max(f["delay_us"] for f in flows)
        assert r["engine_version"] == _core.__version__
    summary = (out / "summary.csv").read_text().splitlines()
    assert len(summary) == 4 and summary[0].startswith("index,generate.virtual_links,rows,failed")


def test_worker_counts_give_identical_rows(tmp_path):
    spec = write(tmp_path, SMALL.replace("seeds: 2", "seeds: 3").replace("points_per_task", "x"))
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["sweep", str(spec), "--out", str(a), "--workers", "1", "--json"]) == 0
    # Another batching too: one point per task.
    spec2 = write(tmp_path, SMALL.replace("seeds: 2", "seeds: 3") + "points_per_task: 1\n", "spec2.yaml")
    assert main(["sweep", str(spec2), "--out", str(b), "--workers", "2", "--json"]) == 0
    ra, rb = without_wall(rows(a)), without_wall(rows(b))
    assert len(ra) == 9 and ra == rb


FAILS_AT_ONE_POINT = """
network: {generate: {virtual_links: 10, switches: 1, planes: 1}}
vary:
  generate.virtual_links: [30, 1, 40]
seeds: 1
run: {analyze: {methods: [tfa]}}
keep: [analyze.tfa.max_delay_us.multimedia]
"""


def test_failing_point_is_recorded_the_sweep_goes_on_and_exits_1(tmp_path, capsys):
    # A network of one virtual link has no multimedia flow: that point has no metric to keep.
    spec = write(tmp_path, FAILS_AT_ONE_POINT)
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "--workers", "2", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert (doc["rows"], doc["failed"]) == (3, 1)
    rs = rows(out)
    assert [r["error"] is None for r in rs] == [True, False, True]
    assert "multimedia" in rs[1]["error"] and rs[1]["analyze.tfa.max_delay_us.multimedia"] is None
    # The two good points were computed, the files written.
    assert all(rs[k]["analyze.tfa.max_delay_us.multimedia"] > 0 for k in (0, 2))
    assert (out / "summary.csv").is_file()
    # On the terminal: the table, then one line naming the first failure.
    assert main(["sweep", str(spec), "--out", str(out), "--resume"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "1 of 3 rows failed; the first: point 1 seed 1: ValueError: keep: "
        "analyze.tfa.max_delay_us.multimedia: no flow of this network is of traffic class 'multimedia'\n"
    )


@pytest.mark.parametrize(
    "text, place",
    [
        ("network: {generate: {}}\nrun: {analyze: {methods: [nope]}}\n", "run.analyze.methods"),
        ("network: {generate: {}}\nrun: {analyze: {}}\nvary: {generate.vls: [1]}\n", "vary.generate.vls"),
        ("network: {generate: {}}\nrun: {analyze: {}}\nkeep: [simulate.mean_us]\n", "keep[0]"),
        ("network: {generate: {}}\nrun: {analyze: {}}\nconfidence: 1.5\n", "confidence"),
        ("network: {generate: {}}\nrun: {analyze: {}}\nseeds: 0\n", "seeds"),
        ("network: {generate: {}}\nrun: {simulate: {duration: soon}}\n", "run.simulate"),
        ("run: {analyze: {}}\n", "network"),
        ("network: {base: missing.yaml}\nrun: {analyze: {}}\n", "network.base"),
        ("network: {generate: {}}\nrun: {analyze: {}}\nvary: [{tag.a: [1, 2], tag.b: [1]}]\n", "vary[0]"),
    ],
)
def test_bad_spec_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys, text, place):
    spec = write(tmp_path, text)
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    # SPEC:line:column: place: rule, the line and column of that place in the SPEC.
    where = rf"{re.escape(str(spec))}:\d+:\d+: {re.escape(place)}: "
    assert len(err.splitlines()) == 1 and re.match(where, err), err
    assert not out.exists()


def test_out_with_results_needs_resume(tmp_path, capsys):
    spec = write(tmp_path, SMALL.replace("[10, 20, 30]", "[10]").replace("seeds: 2", "seeds: 1"))
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "--workers", "1", "--json"]) == 0
    capsys.readouterr()
    assert main(["sweep", str(spec), "--out", str(out), "--workers", "1"]) == 2
    assert "--resume" in capsys.readouterr().err
    other = write(tmp_path, SMALL.replace("[10, 20, 30]", "[10]").replace("tfa", "sfa"), "other.yaml")
    assert main(["sweep", str(other), "--out", str(out), "--resume"]) == 2
    assert "different sweep" in capsys.readouterr().err


def test_resume_after_a_kill_loses_nothing_and_duplicates_nothing(tmp_path):
    # Simulation points of about 0.1 s each, one point per task: the kill lands mid-sweep.
    text = """
network: {generate: {virtual_links: 30, switches: 2, planes: 1}}
vary:
  generate.virtual_links: [10, 20, 30, 40, 50, 60]
seeds: 4
points_per_task: 1
run:
  simulate: {duration: 0.3s}
keep: [simulate.mean_us, simulate.max_us, simulate.frames]
"""
    spec = write(tmp_path, text)
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [*RTNETLAB, "sweep", str(spec), "--out", str(killed), "--workers", "2", "--json"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((killed / "rows").glob("part-*.parquet"))) < 3:
        assert proc.poll() is None, "the sweep ended before it could be killed"
        time.sleep(0.05)
    # The whole process group (the CLI and its cluster's worker processes), at once.
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = rows(killed)
    assert 3 <= len(partial) < 24, "the kill should land mid-sweep"
    assert main(["sweep", str(spec), "--out", str(killed), "--workers", "2", "--resume", "--json"]) == 0
    assert main(["sweep", str(spec), "--out", str(whole), "--workers", "2", "--json"]) == 0
    resumed = rows(killed)
    assert all(r["error"] is None and r["simulate.frames"] > 0 for r in resumed)
    assert len(resumed) == 24 and len({r["point"] for r in resumed}) == 24
    assert without_wall(resumed) == without_wall(rows(whole))
    # The rows written before the kill were kept, not run again.
    before = {r["point"]: r["wall_s"] for r in partial}
    assert all(r["wall_s"] == before[r["point"]] for r in resumed if r["point"] in before)


def test_record_builds_one_row_with_the_metrics_or_the_error():
    """The row every batch function returns (points.record): the kept metrics, NaN and missing
    ones as None, every other one a float; a failing point keeps its key, has no metrics and its
    error on one line; an interrupt is not recorded."""
    from rtnetlab.sweep import points

    task = (3, 7, {"tag.x": 1}, "key-3")
    row = points.record(task, ["a", "b", "c"], lambda: {"a": 2, "b": math.nan, "z": 1.0}, "v1")
    assert {k: row[k] for k in ("point", "index", "seed", "params", "engine_version", "error")} == {
        "point": "key-3",
        "index": 3,
        "seed": 7,
        "params": {"tag.x": 1},
        "engine_version": "v1",
        "error": None,
    }
    assert row["metrics"] == {"a": 2.0, "b": None, "c": None}
    assert type(row["metrics"]["a"]) is float and row["wall_s"] >= 0

    def fails():
        raise ValueError("first line\n  second line")

    row = points.record(task, ["a", "b"], fails, "v1")
    assert row["metrics"] == {"a": None, "b": None} and row["point"] == "key-3"
    assert row["error"] == "ValueError: first line second line"

    def interrupted():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        points.record(task, ["a"], interrupted, "v1")


def test_a_figures_sweep_gives_its_rows_summary_and_document(tmp_path):
    """figures.sweep_figure, the opening every figure shares: the SPEC's rows in --out, a summary
    per point, and the document's head in its published order (figure, rows, failed, the
    figure's own counts, ran, wall time, then the rest)."""
    from rtnetlab.sweep import figures
    from rtnetlab.sweep import spec as spec_mod

    data = {
        "network": {"generate": {"virtual_links": 10, "switches": 1, "planes": 1}},
        "vary": {"generate.virtual_links": [30, 1]},
        "run": {"analyze": {"methods": ["tfa"]}},
        "keep": ["analyze.tfa.max_delay_us.multimedia"],
    }
    spec = spec_mod.parse(data, "t", tmp_path)
    swept = figures.sweep_figure(spec, tmp_path / "out", 1, None, False, True)
    assert [r["error"] is None for r in swept.rows] == [True, False] and swept.outcome.ran == 2
    assert [e["rows"] - e["failed"] for e in swept.summary()] == [1, 0]
    doc = swept.doc("fig", {"checks_failed": 0}, table=[], files=["x"])
    assert list(doc) == ["figure", "rows", "failed", "checks_failed", "ran", "wall_s", "table", "files"]
    assert (doc["figure"], doc["rows"], doc["failed"], doc["ran"]) == ("fig", 2, 1, 2) and doc["wall_s"] > 0


def test_mean_and_interval_by_hand():
    # 1, 2, 3: mean 2, s = 1. Student's t with 2 degrees of freedom has the closed form
    # t_p = (2p - 1) sqrt(2 / (1 - (2p - 1)^2)): t_0.975 = 0.95 sqrt(2 / 0.0975) = 4.3026527;
    # half width t · s / sqrt(3) = 2.48414.
    s = aggregate.mean_ci([1.0, 2.0, 3.0], 0.95)
    assert s["mean"] == 2.0 and s["std"] == 1.0
    assert math.isclose(s["half_width"], 0.95 * math.sqrt(2 / 0.0975) / math.sqrt(3), rel_tol=1e-9)
    # The 90 % level: t_0.95 = 0.9 sqrt(2 / 0.19) = 2.919986.
    s90 = aggregate.mean_ci([1.0, 2.0, 3.0], 0.90)
    assert math.isclose(s90["half_width"], 0.9 * math.sqrt(2 / 0.19) / math.sqrt(3), rel_tol=1e-9)
    assert aggregate.mean_ci([5.0], 0.95)["half_width"] is None
    assert aggregate.mean_ci([1.0, math.inf], 0.95)["mean"] == math.inf


def test_configure_and_fixed_priority_steps_match_the_commands(tmp_path):
    from rtnetlab import _core, model
    from rtnetlab.io import formats
    from rtnetlab.sweep import points
    from rtnetlab.sweep import spec as spec_mod

    root = Path(__file__).resolve().parent.parent / "examples"
    cfg = spec_mod.parse(
        {
            "network": {"base": str(root / "afdx_config/table1.yaml")},
            "run": {"configure": {"afdx": {"objective": "min-bandwidth"}}},
        },
        "t",
        tmp_path,
    )
    kept, error, _ = points.run_point(cfg, {}, 1)
    doc = formats.read(root / "afdx_config/table1.yaml")
    direct = json.loads(_core.configure_afdx(json.dumps(doc), json.dumps({"objective": "min-bandwidth"})))
    assert error is None and kept["configure.bandwidth_bps"] == direct["reserved_bps"] > 0
    fp = spec_mod.parse(
        {
            "network": {"base": str(root / "fixed_priority/dopa_partition.yaml")},
            "run": {"fixed_priority": {"method": "opa"}},
        },
        "t",
        tmp_path,
    )
    kept, error, _ = points.run_point(fp, {}, 1)
    net = model.load_file(root / "fixed_priority/dopa_partition.yaml")
    assert error is None
    assert kept["fixed_priority.schedulable"] == float(
        json.loads(net.handle.partition_json("opa"))["feasible"]
    )


def test_generate_seed_keeps_one_network_for_every_row(tmp_path):
    """`seed: N` under `generate` fixes the network; without it each row's seed draws its own."""
    import yaml

    from rtnetlab.sweep import points, spec

    fixed = yaml.safe_load(SMALL)
    fixed["network"]["generate"]["seed"] = 7
    one = spec.parse(fixed, "spec.yaml", tmp_path)
    drawn = spec.parse(yaml.safe_load(SMALL), "spec.yaml", tmp_path)
    params = {"generate.virtual_links": 20}
    assert points.description(one, params, 1) == points.description(one, params, 2)
    assert points.description(drawn, params, 1) != points.description(drawn, params, 2)
    assert points.description(one, params, 1) == points.description(drawn, params, 7)


# --- what a newcomer trips over (the replays, through the command) ----------------------

TYPO = """name: typo
network:
  generate: {virtual_links: 20, switches: 2, planes: 1}
vary:
  KEY: VALUES
seeds: [1, 2]
run:
  analyze: {methods: [best]}
"""


def cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RTNETLAB, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.mark.parametrize(
    "key, values, line",
    [
        # A misspelt field: the key's place, whatever the value.
        (
            "network.switches[*].schedulr",
            "[fifo, static_priority]",
            "spec.yaml:5:3: vary.network.switches[*].schedulr: switches[0].schedulr: unknown field "
            "`schedulr`, expected one of `name`, `plane`, `technological_latency`, `switching`, "
            "`scheduler`, `buffer`, `ports` (and 1 more), in the generated network (20 virtual links, "
            "2 switches, 1 plane(s), seed 1)",
        ),
        # An index the network does not have.
        (
            "network.links[99].rate",
            "[100Mbps, 1Gbps]",
            "spec.yaml:5:3: vary.network.links[99].rate: links has no element 99 (it has 5), in the "
            "generated network (20 virtual links, 2 switches, 1 plane(s), seed 1)",
        ),
        # A value the description refuses: the value's own place.
        (
            "network.links[*].rate",
            "[100Mbps, 100Mbit]",
            "spec.yaml:5:36: vary.network.links[*].rate[1]: '100Mbit' makes the generated network "
            "(20 virtual links, 2 switches, 1 plane(s), seed 1) invalid: links[0].rate: expected a "
            "data rate with a unit (Gbps, Mbps, kbps, bps), e.g. '100Mbps', got '100Mbit' (and 4 more)",
        ),
    ],
)
def test_a_network_key_mistake_stops_before_anything_runs(tmp_path, key, values, line):
    """`rtnetlab sweep spec.yaml --out out`: every row used to fail, with exit code 0."""
    write(tmp_path, TYPO.replace("KEY", key).replace("VALUES", values))
    for as_json in (False, True):
        p = cli("sweep", "spec.yaml", "--out", "out", *(["--json"] if as_json else []), cwd=tmp_path)
        assert p.returncode == 2 and "Traceback" not in p.stderr
        if as_json:
            place, message = line.split(": ", 1)
            assert json.loads(p.stdout)["errors"] == [{"place": place, "message": message}]
        else:
            assert p.stderr.splitlines() == [line]
        assert not (tmp_path / "out").exists()


def test_the_zipped_axes_of_the_docs_read_as_written(tmp_path):
    """docs/SWEEPS.md's SPEC with its commented variant of `vary` (keys varied together) in
    place of the plain one: valid YAML, and a SPEC that checks (an unquoted `[*]` inside `{}` was
    read as an alias)."""
    import yaml

    from rtnetlab.sweep import spec as spec_mod

    text = (Path(__file__).resolve().parents[1] / "docs" / "SWEEPS.md").read_text()
    block = text.split("## The SPEC\n\n```yaml\n", 1)[1].split("```", 1)[0]
    lines = block.splitlines()
    start = lines.index("# vary:")
    zipped = [line.removeprefix("# ") for line in lines[start : start + 2]]
    plain_start = lines.index(next(x for x in lines if x.startswith("vary:")))
    plain_end = next(i for i in range(plain_start + 1, len(lines)) if not lines[i].startswith(" "))
    plain_end = next(i for i in range(plain_end, len(lines)) if not lines[i].startswith("#"))
    spec_lines = lines[:plain_start] + zipped + lines[plain_end:]
    data = yaml.safe_load("\n".join(spec_lines))
    assert data["vary"] == [
        {"tag.scheduler": ["FIFO", "SP"], "network.switches[*].scheduler": ["fifo", "static_priority"]}
    ]
    data["network"]["generate"] = {"virtual_links": 20, "switches": 2, "planes": 2}
    data["keep"] = [k for k in data["keep"] if not k.endswith(".avionics")]
    parsed = spec_mod.parse(data, "", tmp_path)
    assert [a.keys for a in parsed.axes] == [["tag.scheduler", "network.switches[*].scheduler"]]
    # Unquoted, as the docs had it: one line saying what to do.
    spec = write(tmp_path, "network: {generate: {}}\nrun: {analyze: {}}\nvary:\n  - {tag.a: [1], "
                 "network.switches[*].scheduler: [fifo]}\n")  # fmt: skip
    p = cli("sweep", spec, "--out", tmp_path / "out")
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1
    assert p.stderr.startswith(f"{spec}:4:") and p.stderr.rstrip().endswith(
        '(a key holding [*] inside {...} must be quoted: "network.links[*].rate")'
    )


def test_an_unreachable_scheduler_leaves_nothing_in_out(tmp_path):
    """`--scheduler` that nobody answers: one line, exit 2, and no sweep.json that would make
    the next run into that folder ask for --resume."""
    import socket

    with socket.socket() as s:  # a port nothing listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        spec = write(tmp_path, SMALL.replace("[10, 20, 30]", "[10]").replace("seeds: 2", "seeds: 1"))
        out = tmp_path / "out"
        p = cli("sweep", spec, "--out", out, "--scheduler", f"tcp://127.0.0.1:{port}", "--trust-scheduler")
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, p.stderr
    assert p.stderr.startswith(f"--scheduler: tcp://127.0.0.1:{port}: cannot connect")
    assert not out.exists()
    p = cli("sweep", spec, "--out", out, "--workers", "1", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["rows"] == 1


def test_the_summary_fits_80_columns_without_cutting_a_value(tmp_path):
    """On an 80-column terminal rich squeezed the columns and cut the means (`1.8e+...`): the
    metrics are now spread over tables that fit, each value whole."""
    from rich.console import Console

    from rtnetlab.sweep import cli as sweep_cli
    from rtnetlab.sweep import spec as spec_mod

    spec = spec_mod.parse(
        {
            "network": {"generate": {"virtual_links": 20, "switches": 2, "planes": 1}},
            "vary": {"generate.virtual_links": [20, 400], "network.links[*].rate": ["10Mbps", "1Gbps"]},
            "seeds": 2,
            "run": {"analyze": {"methods": ["best", "tfa"]}},
        },
        "",
        tmp_path,
    )
    runner.run_sweep(spec, tmp_path / "out", 1, progress=False)
    summary = sweep_cli.write_summary(spec, tmp_path / "out")["summary"]
    console = Console(width=80, record=True, color_system=None)
    tables = sweep_cli.summary_tables("t", spec, summary, 80)
    for t in tables:
        console.print(t)
    text = console.export_text()
    assert len(tables) > 1 and max(map(len, text.splitlines())) <= 80
    cells = [sweep_cli._cell(e[m]) for e in summary for m in spec.keep]
    assert any(len(c) > 12 for c in cells)  # values a squeezed column would cut
    assert all(c in text for c in cells) and "…" not in text


def test_defaults_link_rate_varies_a_generated_network_and_is_refused_where_no_link_takes_it(tmp_path):
    """docs/SWEEPS.md's own example key changed nothing on a generated network, silently (every
    generated link had its own rate). Generated end systems' links now take the default, so the
    bounds follow it; on a description whose every link says its rate, varying it is refused."""
    spec = write(
        tmp_path,
        "network: {generate: {virtual_links: 20, switches: 2, planes: 1}}\n"
        "vary:\n  network.defaults.link_rate: [10Mbps, 100Mbps]\n"
        "run: {analyze: {methods: [tfa]}}\nkeep: [analyze.tfa.max_delay_us]\n",
    )
    p = cli("sweep", spec, "--out", tmp_path / "out", "--workers", "1", "--json")
    assert p.returncode == 0, p.stderr
    slow, fast = (r["analyze.tfa.max_delay_us"] for r in rows(tmp_path / "out"))
    assert slow > 5 * fast > 0
    (tmp_path / "net.yaml").write_text(
        "name: tiny\nend_systems: [{name: ES1}, {name: ES2}]\nswitches: [{name: SW1}]\n"
        "links: [{from: ES1, to: SW1, rate: 1Gbps}, {from: SW1, to: ES2, rate: 1Gbps}]\n"
        "flows: [{name: VL1, type: virtual_link, bag: 2ms, lmin: 64B, lmax: 1518B, source: ES1, "
        "destinations: [ES2]}]\n"
    )
    spec = write(
        tmp_path,
        "network: {base: net.yaml}\nvary:\n  network.defaults.link_rate: [10Mbps, 100Mbps]\n"
        "run: {analyze: {methods: [tfa]}}\n",
        "base.yaml",
    )
    p = cli("sweep", spec, "--out", tmp_path / "out2")
    assert p.returncode == 2 and p.stderr == (
        f"{spec}:3:3: vary.network.defaults.link_rate: changes nothing in the description net.yaml: every "
        "link gives its own rate (vary network.links[*].rate)\n"
    )
    assert not (tmp_path / "out2").exists()
