"""Fixtures shared by the test suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def pytest_runtest_setup(item: pytest.Item) -> None:
    """`needs_root` (registered in pyproject.toml): skipped, with its reason, unless run as root."""
    mark = item.get_closest_marker("needs_root")
    if mark is not None and os.geteuid() != 0:
        pytest.skip(mark.kwargs.get("reason") or "needs root")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository checkout the tests run from."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared material beside the repository (../shared): oracles, seeds, spec.

    Tests that need it must not pass silently without it, so a missing directory fails.
    """
    shared = REPO_ROOT.parent / "shared"
    if not shared.is_dir():
        pytest.fail(f"shared directory not found at {shared} (expected ../shared beside the repository)",
                    pytrace=False)
    return shared


@pytest.fixture(scope="session")
def rtnetlab_cli() -> Path:
    """The `rtnetlab` command installed in the project's virtual environment (`make build`)."""
    cli = REPO_ROOT / ".venv" / "bin" / "rtnetlab"
    if not cli.exists():
        pytest.fail(f"{cli} not found: run `make build` first", pytrace=False)
    return cli
