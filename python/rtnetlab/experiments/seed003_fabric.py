"""Seed 003's lossless multistage fabric run under each scheduler of a scenario (the shipped
multimedia set-up by default)."""

from __future__ import annotations

import json
from pathlib import Path

from rtnetlab.errors import UserError

#: Seed 003's multimedia set-up, shipped with the package (examples/fabric/multimedia.json
#: links to it).
FABRIC_SCENARIO = "fabric_multimedia.json"


def fabric_scenario_path() -> Path:
    from importlib import resources

    return Path(str(resources.files("rtnetlab") / "data" / FABRIC_SCENARIO))


def _in_worker(fn, *args):
    """Runs `fn` (an engine call that releases the GIL) in a worker thread so that the main
    thread, which Python's signal handlers run on, answers Ctrl-C at once; the worker is a daemon
    and ends with the process."""
    import threading

    result: dict = {}

    def work() -> None:
        try:
            result["value"] = fn(*args)
        except BaseException as e:  # handed to the main thread
            result["error"] = e

    t = threading.Thread(target=work, daemon=True)
    t.start()
    while t.is_alive():
        t.join(0.1)
    if "error" in result:
        raise result["error"]
    return result["value"]


def fabric(
    scenario_path: Path | None = None,
    schedulers: list[str] | None = None,
    duration: str | None = None,
    warmup: str | None = None,
    reference_rate: str | None = None,
    seed: int | None = None,
    on_start=None,
) -> list[dict]:
    """Seed 003's lossless fabric scenario (the shipped multimedia set-up by default) run once
    per scheduler (all the scenario names by default); returns one engine report per scheduler.
    `on_start(name, k, n)` is called before the k-th of the n runs."""
    from rtnetlab import _core
    from rtnetlab.io import formats

    scenario_path = fabric_scenario_path() if scenario_path is None else Path(scenario_path)

    scenario = formats.read(scenario_path)
    if not isinstance(scenario, dict) or not isinstance(scenario.get("schedulers"), dict):
        raise UserError(f"{scenario_path}: a fabric scenario is a mapping with named `schedulers`")
    names = schedulers or list(scenario["schedulers"])
    for name in names:
        if name not in scenario["schedulers"]:
            known = ", ".join(scenario["schedulers"])
            raise UserError(f"--scheduler: '{name}' is not a scheduler of the scenario ({known})")
    for key, value in (("duration", duration), ("warmup", warmup), ("reference_rate", reference_rate),
                       ("seed", seed)):
        if value is not None:
            scenario[key] = value
    reports = []
    for k, name in enumerate(names):
        if on_start is not None:
            on_start(name, k, len(names))
        scenario["scheduler"] = name
        try:
            reports.append(json.loads(_in_worker(_core.fabric_run, json.dumps(scenario))))
        except ValueError as e:
            raise UserError(f"{scenario_path}: {e}") from None
    return reports
