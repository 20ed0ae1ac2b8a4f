"""`rtnetlab experiment fabric`: seed 003's lossless multistage fabric under the Table 5
schedulers (DTable, DTable-WF2Q, DRR, SCFQ), end to end."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI = REPO / ".venv" / "bin" / "rtnetlab"


def test_fabric_runs_every_table5_scheduler_losslessly() -> None:
    res = subprocess.run(
        [str(CLI), "experiment", "fabric", "--duration", "1ms", "--warmup", "1ms",
         "--reference-rate", "2Gbps", "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert res.returncode == 0, res.stderr
    reports = json.loads(res.stdout)
    assert [r["scheduler"] for r in reports] == ["drr", "dtable", "dtable_wf2q", "scfq"]
    for r in reports:
        ch = r["checks"]
        assert ch["conserved"] and ch["out_of_order"] == 0
        assert ch["buffer_overflows"] == 0 and ch["credit_violations"] == 0
        assert [c["class"] for c in r["classes"]] == ["NC", "VO", "VI", "CL", "EE", "BE", "BK"]
        assert all(c["packets_delivered"] > 0 for c in r["classes"])


def test_unknown_scheduler_is_one_line() -> None:
    res = subprocess.run([str(CLI), "experiment", "fabric", "--scheduler", "nope"], cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert res.stderr.strip().startswith("--scheduler: 'nope' is not a scheduler of the scenario")
