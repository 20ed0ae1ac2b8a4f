"""Results tables on the terminal: most critical rows first, `--rows` of them, a footer for the rest."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

from rich.console import Console

from rtnetlab import tables


def run(cli, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(cli), *args], capture_output=True, text=True, timeout=120)


def body_rows(text: str, title: str) -> list[list[str]]:
    """Cells of the rich table titled `title` in `text`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rows = []
    for line in lines[start + 4:]:
        if not line.startswith("│"):
            break
        rows.append([c.strip() for c in line.strip("│").split("│")])
    return rows


def test_analyze_shows_the_smallest_slack_first_and_counts_the_rest(rtnetlab_cli, repo_root):
    case = str(repo_root / "examples/afdx_case_study.yaml")
    r = run(rtnetlab_cli, "analyze", case, "--method", "tfa", "--rows", "5")
    assert r.returncode == 0, r.stderr
    rows = body_rows(r.stdout, "End-to-end bounds")
    assert len(rows) == 5
    slack = [float(row[6].replace(",", "")) for row in rows]
    assert slack == sorted(slack)
    assert "... 107 more (flow, destination, plane) rows not shown" in r.stdout
    # The smallest slack of all rows is the first one shown.
    report = json.loads(run(rtnetlab_cli, "analyze", case, "--method", "tfa", "--json").stdout)
    assert round(min(f["slack_us"] for f in report["flows"] if f["slack_us"] is not None), 3) == slack[0]
    # SkewMax violations lead the redundancy table.
    red = body_rows(r.stdout, "Redundancy management")
    late = {(f["flow"], f["destination"]) for f in report["redundancy"] if not f["skew_ok"]}
    assert {(row[0], row[1]) for row in red[: len(late)]} == late


def test_rows_all_and_bad_values(rtnetlab_cli, repo_root):
    case = str(repo_root / "examples/afdx_case_study.yaml")
    r = run(rtnetlab_cli, "analyze", case, "--method", "tfa", "--rows", "all")
    assert r.returncode == 0 and "not shown" not in r.stdout
    assert len(body_rows(r.stdout, "End-to-end bounds")) == 112
    for bad in ("0", "-3", "many"):
        r = run(rtnetlab_cli, "analyze", case, "--rows", bad)
        assert r.returncode == 2
        assert r.stderr.strip().count("\n") == 0 and "--rows" in r.stderr and "Traceback" not in r.stderr


def test_simulate_limits_rows_too(rtnetlab_cli, repo_root):
    case = str(repo_root / "examples/afdx_case_study.yaml")
    r = run(rtnetlab_cli, "simulate", case, "--duration", "20ms", "--rows", "4")
    assert r.returncode == 0, r.stderr
    rows = body_rows(r.stdout, "Simulated latency")
    assert len(rows) == 4
    # Closest to its bound first (the simulated maximum / the `best` bound).
    ratios = [float(row[11]) for row in rows]
    assert ratios == sorted(ratios, reverse=True)
    assert re.search(r"\.\.\. \d+ more \(flow, destination, plane\) rows not shown", r.stdout)


def test_many_rows_are_laid_out_as_plain_text():
    t = tables.ResultTable("T", ["name", "value"], left=("name",))
    for i in range(tables.PLAIN_ABOVE + 1):
        t.add_row(f"f{i}", f"{i:,}")
    buf = io.StringIO()
    t.print(Console(file=buf, width=100), None)
    lines = buf.getvalue().splitlines()
    assert lines[0] == "T" and lines[1].split() == ["name", "value"]
    assert len(lines) == 3 + tables.PLAIN_ABOVE + 1
    # Numbers right-aligned under their header, names left-aligned.
    assert lines[-1].endswith("2,000") and lines[3].startswith("f0 ")
    assert len({len(line) for line in lines[3:]}) == 1


def test_port_labels_are_printed_as_written_not_as_emoji_codes():
    # A two-plane port label followed by a colon ("ES1:A: ...") reads to rich as the emoji code
    # ":A:" (a red "A" button); every console has emoji codes off, in the plain path, in rich's
    # own (forced by FORCE_COLOR) and in a table's cells.
    script = (
        "from rtnetlab.cli.common import out\n"
        "from rich.table import Table\n"
        "out.print('ES1:A: end-system multiplexing jitter 600.0 us :smile:')\n"
        "t = Table('port')\n"
        "t.add_row('SW1:B:')\n"
        "out.print(t)\n"
    )
    for env in ({}, {"FORCE_COLOR": "1"}):
        r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                           env={**os.environ, **env})
        assert r.returncode == 0, r.stderr
        text = re.sub(r"\x1b\[[0-9;]*m", "", r.stdout)
        assert "ES1:A: end-system multiplexing jitter 600.0 us :smile:" in text
        assert "SW1:B:" in text
        assert "\U0001f170" not in r.stdout and "\U0001f604" not in r.stdout
