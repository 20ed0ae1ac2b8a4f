"""Options chosen by name: the engine reads the name and lists the choices, the front names the
option; a wrong name is one line with exit code 2."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "fixed_priority"
OPA = str(EXAMPLES / "nonpreemptive_opa.yaml")
DOPA = str(EXAMPLES / "dopa_partition.yaml")
FIG6 = ["experiment", "dopa", "--sets", "1", "--points", "1", "--out-dir", "{dir}"]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["configure", "priorities", OPA, "-o", "{out}", "--method", "rm"],
            "--method: unknown value 'rm', expected `opa` or `dm`",
        ),
        (
            ["configure", "partition", DOPA, "-o", "{out}", "--method", "edf"],
            "--method: unknown value 'edf', expected `opa` or `dm`",
        ),
        (
            [*FIG6, "--dm-key", "xx"],
            "--dm-key: unknown value 'xx', expected one of `local-window`, `end-to-end`, `absolute`",
        ),
        (
            [*FIG6, "--local-test", "eq1"],
            "--local-test: unknown value 'eq1', expected `release-jitter` or `paper`",
        ),
    ],
)
def test_a_wrong_choice_names_the_option(
    tmp_path: Path, args: list[str], line: str, rtnetlab_cli: Path
) -> None:
    argv = [a.format(out=tmp_path / "out.yaml", dir=tmp_path / "d") for a in args]
    res = subprocess.run([str(rtnetlab_cli), *argv], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip().splitlines() == [line]
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "out.yaml").exists()
