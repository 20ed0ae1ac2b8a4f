"""Every file in examples/ loaded and analysed as its header says to run it: a network description
through `rtnetlab analyze`, a configuration problem through its `rtnetlab configure` command (and,
where it writes a description, that description analysed), seed 003's fabric scenario through the
engine's fabric run. A new example with a kind not handled here fails until it is added."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"

#: Problems for a `configure` command instead of networks, and whether what it writes is a
#: network description to analyse in turn (and the options its header runs it with).
CONFIGURE: dict[str, tuple] = {
    "afdx_config/table1.yaml": ("afdx", True),
    "dtable/table4_requirements.yaml": ("dtable", False),
    "tsn/inet_gatescheduling.yaml": ("tsn", True),
    "tsn/tsn_eager_fails.yaml": ("tsn", True),
    "tsn/tsn_bounded_wait.yaml": ("tsn", True, ("--max-wait", "32us")),
    "tsn/tsn_synthesis.yaml": ("tsn", True),
}
#: Files that are neither: documentation, and the fabric scenario (run below).
OTHER = {"wopanet/README.md", "fabric/multimedia.json"}


def example_files() -> list[str]:
    return sorted(p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*") if p.is_file())


def rtnetlab(cli: Path, *args: str) -> subprocess.CompletedProcess:
    r = subprocess.run([str(cli), *args], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def analysed(cli: Path, path: Path) -> dict:
    r = rtnetlab(cli, "analyze", str(path), "--json")
    assert r.returncode in (0, 1), r.stderr  # 1: a deadline missed, which an example may show
    report = json.loads(r.stdout)
    # Something was analysed: flows with their bounds, or a fixed-priority system's responses.
    assert report.get("flows") or report.get("fixed_priority"), sorted(report)
    for f in report.get("flows", []):
        assert f["delay_us"] is None or f["delay_us"] >= 0, f
    return report


def test_every_example_is_covered():
    files = set(example_files())
    assert files, "no examples found"
    # Notebooks run whole in tests/test_notebooks.py.
    notebooks = {f for f in files if f.startswith("notebooks/") and f.endswith(".ipynb")}
    handled = {f for f in files if f.endswith((".yaml", ".yml"))} | set(CONFIGURE) | OTHER | notebooks
    assert files <= handled, f"examples this test does not know how to run: {sorted(files - handled)}"
    assert set(CONFIGURE) | OTHER <= files, "an example named here is gone: update the lists"


@pytest.mark.parametrize(
    "name", [f for f in example_files() if f.endswith((".yaml", ".yml")) and f not in CONFIGURE]
)
def test_description_is_analysed(rtnetlab_cli, name):
    analysed(rtnetlab_cli, EXAMPLES / name)


@pytest.mark.parametrize("name", sorted(CONFIGURE))
def test_problem_is_configured(rtnetlab_cli, tmp_path, name):
    command, writes_network, *rest = CONFIGURE[name]
    options = rest[0] if rest else ()
    # Such a file is not a network as it stands: analyze says so in one line naming the place.
    refused = rtnetlab(rtnetlab_cli, "analyze", str(EXAMPLES / name))
    assert refused.returncode == 2 and refused.stderr.strip(), refused.stderr
    out = tmp_path / "configured.yaml"
    r = rtnetlab(rtnetlab_cli, "configure", command, str(EXAMPLES / name), "-o", str(out), *options)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 0
    if writes_network:
        analysed(rtnetlab_cli, out)


def test_fabric_scenario_runs():
    from rtnetlab.experiments import seed003_fabric

    path = EXAMPLES / "fabric" / "multimedia.json"
    scenario = json.loads(path.read_text())
    first = next(iter(scenario["schedulers"]))
    (report,) = seed003_fabric.fabric(path, schedulers=[first], duration="200us", warmup="0ms")
    assert report, "the fabric run gave an empty report"
