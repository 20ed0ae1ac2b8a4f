"""`rtnetlab report`: one self-contained HTML page (plus CSV and JSON), checked as files and as a
person sees it, in headless Chromium (Debian's package, installed by `make setup`).

The report is generated once per session with a short simulation; the page must need no network
access, carry every section in order with one inline SVG plot per figure, and its script must run
(it fills the VL selector and sets data-ready="1" on the body).
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CLI = REPO / ".venv" / "bin" / "rtnetlab"
CASE_STUDY = REPO / "examples" / "afdx_case_study.yaml"
SECTIONS = ["violations", "topology", "flows", "cdf", "ports", "notes"]
FIGURES = ["flows", "cdf", "ports"]
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    res = subprocess.run([str(CLI), *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in res.stdout + res.stderr, res.stderr
    return res


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    res = run(out, "report", str(CASE_STUDY), "-o", "report.html", "--duration", "200ms", "--seed", "1")
    assert res.returncode == 0, res.stderr
    assert "wrote report.html" in res.stdout
    return out / "report.html"


def chromium() -> str:
    exe = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if exe is None:
        pytest.fail("chromium not found: `make setup` installs Debian's chromium package", pytrace=False)
    return exe


def test_three_files_and_their_data(report: Path) -> None:
    out = report.parent
    assert sorted(p.name for p in out.iterdir()) == ["report.csv", "report.html", "report.json"]
    doc = json.loads((out / "report.json").read_text())
    assert sorted(doc) == ["analysis", "simulation", "summary"]
    summary = doc["summary"]
    assert summary["network"] == "afdx-case-study"
    assert summary["duration_s"] == 0.2 and summary["seed"] == 1 and summary["method"] == "best"
    assert summary["clean"] is True, summary["violations"]
    assert summary["violations"]["sim_above_bound"] == []
    with (out / "report.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == [
        "flow",
        "destination",
        "plane",
        "class",
        "bound_us",
        "sim_p99_us",
        "sim_max_us",
        "deadline_us",
        "status",
        "reason",
    ]
    assert len(rows) == len(doc["analysis"]["flows"]) == summary["flows"]["total"] == 112
    by_key = {(r["flow"], r["destination"], r["plane"]): r for r in rows}
    for f in doc["analysis"]["flows"]:
        r = by_key[(f["flow"], f["destination"], f["plane"])]
        assert float(r["bound_us"]) == pytest.approx(f["delay_us"])
        assert r["status"] == f["status"]
    for f in doc["simulation"]["flows"]:
        r = by_key[(f["flow"], f["destination"], f["plane"])]
        if f["count"]:
            assert float(r["sim_max_us"]) == pytest.approx(f["max_us"])
            assert float(r["sim_max_us"]) <= float(r["bound_us"]) + 0.01
    assert {r["class"] for r in rows} == {"avionics", "multimedia", "best_effort"}


def test_html_is_self_contained_with_every_section_and_plot(report: Path) -> None:
    page = report.read_text()
    assert page.startswith("<!DOCTYPE html>")
    # Nothing fetched from anywhere: no external src/href, no external stylesheet or font.
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert not re.search(r"""url\(\s*["']?(?:https?:)?//""", page, re.I)
    assert "<link" not in page and "@import" not in page
    positions = [page.find(f'data-section="{s}"') for s in SECTIONS]
    assert all(p >= 0 for p in positions), dict(zip(SECTIONS, positions, strict=True))
    assert positions == sorted(positions), "sections out of order"
    for name in FIGURES:
        assert page.count(f'data-figure="{name}"') == 1, name
        figure = page.split(f'data-figure="{name}"', 1)[1].split("</figure>", 1)[0]
        assert figure.count("<svg") == 1, f"{name}: expected one inline SVG plot"
    assert page.count('class="mpl"') == len(FIGURES)
    assert page.count('<svg id="topo"') == 1 and 'id="vl-select"' in page
    assert 'id="flow-table"' in page and 'id="port-table"' in page
    # The topology draws every node and link of the description.
    spec = json.loads(subprocess.check_output([str(CLI), "info", "--json", str(CASE_STUDY)], text=True))
    topo = page.split('<svg id="topo"', 1)[1].split("</svg>", 1)[0]
    assert topo.count("data-link=") == spec["counts"]["links"]
    assert topo.count("data-node=") == spec["counts"]["end_systems"] + spec["counts"]["switches"]


def test_page_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    exe = chromium()
    url = report.resolve().as_uri()
    shot = tmp_path / "shot.png"
    procs = {
        "shot": subprocess.Popen(
            [exe, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'p1'}", f"--screenshot={shot}",
             "--window-size=1400,3000", url],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        ),
        "dom": subprocess.Popen(
            [exe, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'p2'}", "--enable-logging=stderr", "--v=0",
             "--dump-dom", url],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        ),
    }  # fmt: skip
    results = {}
    for name, proc in procs.items():
        try:
            results[name] = proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            for p in procs.values():
                p.kill()
            pytest.fail(f"chromium ({name}) did not finish within 90 s")
        assert proc.returncode == 0, results[name][1][-2000:]

    # (a) The screenshot is a page, not a blank: many colours, a fair share of non-white pixels.
    from PIL import Image

    with Image.open(shot) as im:
        rgb = im.convert("RGB")
        assert rgb.size == (1400, 3000)
        small = rgb.resize((350, 750))
        colours = small.getcolors(maxcolors=1 << 20)
        assert colours is not None and len(colours) > 200, len(colours or [])
        non_white = sum(n for n, c in colours if min(c) < 235)
        assert non_white / (350 * 750) > 0.05

    # (b) The script ran without errors: the body is marked ready and the selector lists every flow.
    dom, log = results["dom"]
    assert "Uncaught" not in log and "ERROR:CONSOLE" not in log, log[-2000:]
    assert re.search(r"<body[^>]*data-ready=\"1\"", dom), "the page's script did not finish"
    select = dom.split('id="vl-select"', 1)[1].split("</select>", 1)[0]
    options = re.findall(r'<option value="([^"]*)"', select)
    flows = [f["flow"] for f in json.loads(report.with_suffix(".json").read_text())["analysis"]["flows"]]
    flows = list(dict.fromkeys(flows))
    assert options == ["", *flows]


def test_user_errors_leave_nothing(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    blocker = tmp_path_factory.mktemp("elsewhere") / "a-file"
    blocker.write_text("not a directory")
    for args, message in [
        (["-o", "out.csv"], "the report is HTML"),
        (["-o", f"{blocker}/report.html"], f"{blocker} is not a directory"),
        (["-o", "."], "is a directory"),
        (["--duration", "0s"], "--duration"),
        (["--method", "nope"], "--method"),
    ]:
        res = run(tmp_path, "report", str(CASE_STUDY), *args)
        assert res.returncode == 2, (args, res.stderr)
        assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert list(tmp_path.iterdir()) == []


def test_demo_writes_the_report(tmp_path: Path) -> None:
    res = run(tmp_path, "demo")
    assert res.returncode == 0, res.stderr
    html = tmp_path / "out" / "report.html"
    assert str(html.resolve()) in res.stdout.replace("\n", "")
    for name in ("report.html", "report.csv", "report.json"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    assert 'data-figure="cdf"' in html.read_text()
