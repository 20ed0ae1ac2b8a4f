"""The notebooks of examples/notebooks/: kept without outputs in the repository, and each run
from start to end (nbclient, the project's own Python as the kernel)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "examples" / "notebooks"
ALL = sorted(NOTEBOOKS.glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert {p.stem for p in ALL} >= {"seed002_case_study", "nc_analyses_compared", "d2drr_study",
                                      "sweep_with_polars"}


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_outputs_are_stripped(path: Path) -> None:
    nb = json.loads(path.read_text())
    for k, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        assert cell.get("outputs") == [], f"{path.name}: cell {k} keeps its outputs"
        assert cell.get("execution_count") is None, f"{path.name}: cell {k} keeps its execution count"
    assert set(nb["metadata"]) <= {"kernelspec", "language_info"}, f"{path.name}: metadata to strip"


def run_notebook(path: Path, timeout: int = 600) -> object:
    """Executes a notebook in its own directory; returns the executed notebook (a failing cell raises)."""
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    return nb


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_notebook_runs(path: Path) -> None:
    nb = run_notebook(path)
    shown = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]  # type: ignore[attr-defined]
    assert shown, f"{path.name} shows nothing"
    assert not [o for o in shown if o.get("output_type") == "error"]
