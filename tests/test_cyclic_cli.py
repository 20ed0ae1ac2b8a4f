"""Rings of switches whose routes make cyclic port dependencies, through the CLI as a user runs
it: `validate` warns of the cycle, and every analysis method, with and without --blind, either
gives bounds (exit 0, JSON) or refuses the network in one line (exit 2, e.g. afdx-naive on a
non-FIFO port or with --blind), never a traceback or a crash. The bounds themselves are checked against
simulation in crates/core/tests/cyclic_soundness.rs.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from rtnetlab import _core

METHODS = ["best", "tfa", "sfa", "sfa-iter", "pmoo", "afdx-naive"]
DATA = Path(__file__).resolve().parent / "data" / "regressions"


def ring(n: int, kind: str, classes: int, period_us: float) -> dict:
    """A ring of n switches at 100 Mb/s, one end system each, every switch the source of a
    1518 B VL three ring links clockwise per class: each ring port carries three VLs per class,
    12,304 bits each per period (with the preamble and gap), so 390 µs per class loads it to
    3 * 12304 / 390 µs / 100 Mb/s = 0.95 of the link, near saturation."""
    names = [f"c{k}" for k in range(classes)]
    doc: dict = {
        "name": f"ring-{kind}",
        "classes": [{"name": c, "priority": k} for k, c in enumerate(names)],
        "schedulers": {},
        "end_systems": [{"name": f"E{k}"} for k in range(n)],
        "switches": [],
        "links": [],
        "flows": [],
    }
    for k in range(n):
        config = json.loads(_core.random_port_scheduler(kind, [1518] * classes, k, 100e6))
        doc["schedulers"][f"port{k}"] = config
        doc["switches"].append({"name": f"S{k}", "scheduler": f"port{k}"})
        doc["links"] += [
            {"from": f"E{k}", "to": f"S{k}", "rate": "1Gbps"},
            {"from": f"S{k}", "to": f"S{(k + 1) % n}", "rate": "100Mbps"},
        ]
        for c in names:
            hops = [f"S{(k + h) % n}" for h in range(4)]
            doc["flows"].append({
                "name": f"F{k}{c}",
                "type": "periodic",
                "period": f"{period_us}us",
                "size": "1518B",
                "class": c,
                "source": f"E{k}",
                "destinations": [{"node": f"E{(k + 3) % n}", "path": [f"E{k}", *hops, f"E{(k + 3) % n}"]}],
            })
    return doc


CASES = [("fifo", 1, 390.0), ("static_priority", 2, 780.0), ("drr", 2, 1000.0), ("tas", 2, 8000.0)]


@pytest.mark.parametrize(("kind", "classes", "period_us"), CASES, ids=[c[0] for c in CASES])
def test_every_method_on_a_ring_exits_cleanly(
    rtnetlab_cli: Path, tmp_path: Path, kind: str, classes: int, period_us: float
) -> None:
    path = tmp_path / "ring.yaml"
    path.write_text(yaml.safe_dump(ring(5, kind, classes, period_us), sort_keys=False))
    r = subprocess.run([str(rtnetlab_cli), "validate", str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "cyclic port dependency" in r.stdout + r.stderr
    for method in METHODS:
        for blind in ([], ["--blind"]):
            cmd = [str(rtnetlab_cli), "analyze", str(path), "--method", method, *blind, "--json"]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            what = f"{kind} {method} {blind}: {r.stderr[-2000:]}"
            assert "Traceback" not in r.stderr and "panicked" not in r.stderr, what
            assert r.returncode in (0, 2), what
            if r.returncode == 0:
                rows = json.loads(r.stdout)["flows"]
                assert len(rows) == 5 * classes, what
            else:
                # afdx-naive: FIFO ports only, and no blind variant.
                assert method == "afdx-naive" and (kind != "fifo" or blind), what
                assert len(r.stderr.strip().splitlines()) <= 2, what  # the reason (and the warning)


def test_the_diverging_ring_exits_cleanly_on_every_method(rtnetlab_cli: Path) -> None:
    path = DATA / "diverging_ring.yaml"
    for method in METHODS:
        for blind in ([], ["--blind"]):
            cmd = [str(rtnetlab_cli), "analyze", str(path), "--method", method, *blind, "--json"]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            assert "Traceback" not in r.stderr and "panicked" not in r.stderr, (method, blind, r.stderr)
            assert r.returncode == (2 if method == "afdx-naive" else 0), (method, blind, r.stderr)
