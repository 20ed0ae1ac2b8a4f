"""`rtnetlab analyze` without -o: the engine selects the rows the terminal tables show
(`Network.analysis_tables`) and writes the `--json` document itself (`Network.analysis_document`).
The property checked: what users see is what the whole report, decoded in Python, gave before:
the same table text, the same verdict, the same JSON document (equal as JSON)."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from rich.console import Console

from rtnetlab import model, results, tables
from rtnetlab.cli import analyze as analyze_cli

# Overloaded ports (a frame of 100 B every ns, ES1 to ES3) beside a flow with a deadline it misses (a
# 1500 B frame takes 120 us at 100 Mb/s on each of two hops; 100 us is asked), and one that
# has no deadline: every status and the overloaded port's reason appear.
MIXED = """name: mixed
end_systems: [{name: ES1}, {name: ES2}, {name: ES3}]
switches: [{name: SW}]
links: [{from: ES1, to: SW, rate: 100Mbps}, {from: SW, to: ES2, rate: 100Mbps},
        {from: ES3, to: SW, rate: 100Mbps}]
flows:
- {name: F1, type: periodic, period: 1ns, size: 100B, source: ES1, destinations: [ES3]}
- {name: F2, type: periodic, period: 1ms, size: 1500B, deadline: 100us, source: ES3, destinations: [ES2]}
- {name: F3, type: periodic, period: 2ms, size: 64B, source: ES3, destinations: [ES2]}
"""

CASES = [
    "examples/afdx_case_study.yaml",  # two planes: the redundancy table
    "examples/seed002_four_vls.yaml",
    "examples/fixed_priority/holistic_chain.yaml",  # response times only
    "examples/tsn/cbs_avb.yaml",
]


def _networks(repo_root, tmp_path):
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(MIXED)
    return [repo_root / c for c in CASES] + [mixed]


def _tables(report: dict, limit: int | None, reasons) -> str:
    console = Console(file=io.StringIO(), width=250, emoji=False, highlight=False, soft_wrap=True)
    saved = analyze_cli.out
    analyze_cli.out = console
    try:
        analyze_cli.print_report(report, limit, reasons)
    finally:
        analyze_cli.out = saved
    return console.file.getvalue()


@pytest.mark.parametrize("limit", [1, 2, 40, None])
def test_the_tables_from_the_engines_selection_equal_those_of_the_whole_report(repo_root, tmp_path, limit):
    for path in _networks(repo_root, tmp_path):
        net = model.load_file(path)
        full = net.analyze("best")
        view = net.analysis_tables("best", limit=limit)
        expected = _tables(full, limit, results.Reasons.of(net, full))
        shown = _tables(view, limit, results.Reasons.of(net, {"ports": view["unbounded_ports"]}))
        assert shown == expected, path
        assert analyze_cli._view_verdict(view) == results.verdict(full), path
        if limit is not None:
            assert len(view["flows"]) <= limit and len(view["ports"]) <= limit


def test_the_mixed_network_shows_every_status(tmp_path):
    path = tmp_path / "mixed.yaml"
    path.write_text(MIXED)
    net = model.load_file(path)
    view = net.analysis_tables("tfa", limit=40)
    assert {f["status"] for f in view["flows"]} == {"unbounded", "miss", "ok"}
    assert view["unbounded_ports"] and view["failures"] == ["F2 -> ES2 (A): miss"]
    text = _tables(view, 40, results.Reasons.of(net, {"ports": view["unbounded_ports"]}))
    assert "overloaded" in text


def test_the_json_document_written_by_the_engine_equals_pythons(repo_root, tmp_path):
    for path in _networks(repo_root, tmp_path):
        net = model.load_file(path)
        expected = {**net.analyze("best"), "warnings": net.warnings}
        text = net.analysis_document("best")
        assert json.loads(text) == expected, path
        assert list(json.loads(text)) == list(expected)  # the same order of fields
        assert json.loads(net.analysis_document("best", indent=False)) == expected


def test_analyze_json_and_table_through_the_cli(rtnetlab_cli, tmp_path):
    path = tmp_path / "mixed.yaml"
    path.write_text(MIXED)
    net = model.load_file(path)
    args = [str(rtnetlab_cli), "analyze", str(path), "--method", "tfa", "--fail-on-miss"]
    r = subprocess.run([*args, "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stdout.endswith("}\n")
    assert json.loads(r.stdout) == {**net.analyze("tfa"), "warnings": net.warnings}
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert "--fail-on-miss: 1 deadline failure(s): F2 -> ES2 (A): miss" in r.stderr


def _rich_text(table: tables.ResultTable, rows) -> str:
    from rich.table import Table

    console = Console(file=io.StringIO(), width=250, emoji=False, highlight=False, soft_wrap=True)
    t = Table(title=table.title, title_justify="left")
    for col in table.columns:
        t.add_column(col, justify="left" if col in table.left else "right")
    for cells, style in rows:
        t.add_row(*cells, style=style)
    console.print(t)
    return console.file.getvalue()


@pytest.mark.parametrize("rows", [
    [(("VL1", "ES2", "A", "12.5", "ok: fine"), None)],
    [(("a-long-flow-name", "x", "B", "1,234,567.125", "unbounded: SW:1 overloaded"), "bold red"),
     (("b", "a much longer destination", "A", "1", "ok"), "red")],
    [(("", "", "", "", ""), None)],
])
def test_the_plain_layout_of_a_table_is_richs(rows):
    table = tables.ResultTable("A title (us)", ["flow", "destination", "plane", "delay (us)", "status"],
                               left=("flow", "destination", "plane", "status"))
    assert table.boxed(rows, 250) == _rich_text(table, rows)
    # What rich would lay out otherwise goes to rich: too wide, markup, wide cells.
    assert table.boxed(rows, 20) is None
    for odd in ("[bold]x[/bold]", "é", "日本"):
        assert table.boxed([((odd, *rows[0][0][1:]), None)], 250) is None
    # Emoji codes are off in every console: a port label "ES1:A:" is text, laid out plain.
    labelled = [(("ES1:A:", *rows[0][0][1:]), None)]
    assert table.boxed(labelled, 250) == _rich_text(table, labelled)


def test_the_tables_printed_without_rich_equal_richs(repo_root, tmp_path, monkeypatch):
    """The command's own console, piped: the same text with or without rich laying it out."""
    from rtnetlab.cli import common

    for path in _networks(repo_root, tmp_path):
        net = model.load_file(path)
        view = net.analysis_tables("best", limit=40)
        reasons = results.Reasons.of(net, {"ports": view["unbounded_ports"]})
        lazy = common._LazyConsole(highlight=False, soft_wrap=True, width=250)
        monkeypatch.setattr(sys, "stdout", io.StringIO())
        monkeypatch.setattr(analyze_cli, "out", lazy)
        analyze_cli.print_report(view, 40, reasons)
        if not view.get("fixed_priority"):  # (its tables are rich's own)
            assert lazy._console is None, path  # rich was not needed
        assert sys.stdout.getvalue() == _tables(view, 40, reasons), path
