"""The documentation site (`make docs`): built strictly (no broken link, no unresolved
reference), every example in it run, every public name of the API documented."""

from __future__ import annotations

import doctest
import importlib
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import rtnetlab

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
#: Pages whose ```python blocks are run (each block on its own, from the repository's root).
TESTED_PAGES = ["index.md", "python-api.md"]
#: Modules whose docstring examples (>>>) are run as doctests.
DOCTESTED = ["rtnetlab.network", "rtnetlab.quantities", "rtnetlab.synthesis", "rtnetlab.studies",
             "rtnetlab.lab", "rtnetlab.what_if"]


def blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.S)


@pytest.mark.parametrize("page,k", [(p, k) for p in TESTED_PAGES for k in range(len(blocks(p)))])
def test_snippet_runs(page: str, k: int, tmp_path: Path) -> None:
    code = blocks(page)[k]
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "HOME": str(tmp_path)})
    assert done.returncode == 0, f"{page} block {k + 1}:\n{code}\n{done.stderr}"


@pytest.mark.parametrize("module", DOCTESTED)
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0


#: Public functions that share their name with a package of rtnetlab (the package is callable and
#: calls the function): the reference documents the function where it is defined.
CALLABLE_PACKAGES = {"report": "rtnetlab.display.report", "sweep": "rtnetlab.studies.sweep",
                     "middleware": "rtnetlab.lab.middleware"}


def public_names() -> list[str]:
    return [n for n in rtnetlab.__all__ if n != "__version__"]


@pytest.mark.parametrize("name", public_names())
def test_public_name_is_documented(name: str) -> None:
    reference = (DOCS / "reference.md").read_text()
    obj = getattr(rtnetlab, name)
    target = CALLABLE_PACKAGES.get(name, f"rtnetlab.{name}")
    assert f"::: {target}\n" in reference, f"{target} is not in docs/reference.md"
    if name in CALLABLE_PACKAGES:
        module, _, function = target.rpartition(".")
        obj = getattr(importlib.import_module(module), function)
    assert inspect.getdoc(obj), f"rtnetlab.{name} has no docstring"
    if inspect.isclass(obj):
        for attr, member in vars(obj).items():
            if attr.startswith("_"):
                continue
            if isinstance(member, (property, staticmethod, classmethod)) or inspect.isfunction(member):
                function = member.fget if isinstance(member, property) else member
                assert inspect.getdoc(function), f"rtnetlab.{name}.{attr} has no docstring"


def test_site_builds_strictly(tmp_path: Path) -> None:
    """mkdocs --strict: a broken link, a missing page or an unresolved reference fails."""
    done = subprocess.run([str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "--site-dir",
                           str(tmp_path / "site")], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "index.html").exists()
