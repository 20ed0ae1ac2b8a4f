"""Dependencies are declared once (pyproject.toml) and pinned in requirements.lock, which the
Makefile installs: a dependency added to pyproject.toml without `make lock` fails here (a fresh
machine would not install it), and so does a package list creeping back into the Makefile."""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 (tomli is pinned in the lock for it)
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    """The normalised project name of a requirement (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1)).lower()


def test_every_declared_dependency_is_pinned_in_the_lock() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {_name(r) for r in project["dependencies"]}
    for extra in project.get("optional-dependencies", {}).values():
        declared |= {_name(r) for r in extra}
    pinned = {
        _name(line)
        for line in (REPO / "requirements.lock").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#") and "==" in line
    }
    assert declared - pinned == set(), "run `make lock` after changing pyproject.toml's dependencies"


def test_the_makefile_installs_from_the_lock_and_lists_no_packages() -> None:
    makefile = (REPO / "Makefile").read_text()
    assert "-r requirements.lock" in makefile
    assert not re.search(r"^PY_DEPS\s*:?=", makefile, flags=re.M)


def test_the_report_templates_ship_inside_the_package() -> None:
    templates = REPO / "python" / "rtnetlab" / "report" / "templates"
    assert {p.name for p in templates.iterdir()} >= {"page.html.j2", "style.css", "script.js"}
