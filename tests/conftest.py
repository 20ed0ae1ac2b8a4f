"""Fixtures shared by the test suite."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


#: Modules of long in-process runs (property campaigns, peers, sweeps, solvers): `integration`
#: as a whole, like every test that runs the installed command (below).
INTEGRATION_MODULES = {
    "test_analysis_peer", "test_fifo_lp_fluid", "test_fuzz", "test_sfa_fifo_soundness", "test_sim_peer",
    "test_staircase_fluid", "test_sweep", "test_sweep_seed003_001d", "test_sweep_soundness",
    "test_fig_seed000", "test_wopanet_differential", "test_published_cli", "test_tsn_synthesis",
    "test_examples", "test_source_rules",
}


#: Tests that touch the host as a whole, beyond their own temporary files: they make namespaces,
#: veths, qdiscs or cgroups and compare the host's state before and after, remove what other runs
#: left, replay another user's attacks, or measure latencies against the host's noise. Marked
#: `host`: every `needs_root` test, tests/security and the modules below. `make test` runs them
#: alone, one at a time, after the rest of the suite ran on every core (whose root runs, such as
#: configure tsn's testbed check, would otherwise count as their leftovers or as their load).
HOST_MODULES = {"test_cli_api"}


def _touches_host(item: pytest.Item, module: str) -> bool:
    return (item.get_closest_marker("needs_root") is not None or module in HOST_MODULES
            or "security" in item.path.parts)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`integration` (registered in pyproject.toml; `make check` leaves it out): every test that
    runs the `rtnetlab` command as a process (the `rtnetlab_cli` fixture) or a subprocess of the
    package, and the long in-process modules above. `host`: see HOST_MODULES."""
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1] if item.module else ""
        if "rtnetlab_cli" in getattr(item, "fixturenames", ()) or module in INTEGRATION_MODULES:
            item.add_marker(pytest.mark.integration)
        if _touches_host(item, module):
            item.add_marker(pytest.mark.host)


@pytest.fixture(autouse=True)
def _default_limits_after() -> Iterator[None]:
    """The front keeps `--limit` options in its process from one command to the next: every test
    leaves the default limits behind it, whatever the next test in its process is (under
    pytest-xdist, any of the suite)."""
    yield
    from rtnetlab.io import formats

    formats.set_limits([])


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
