"""Resources shared under control, modelled or on this machine: seed 001G's service-level-aware
resource manager (`slrm_step`, `slrm_simulate`, `slrm_run`).

A run on this machine (`slrm_run`) needs root, as its command does, and keeps the command's
guarantees: its inputs are checked first (the limits of `rtnetlab.limits` included), what it
creates (control groups, processes) is recorded as the run's own and removed on every way out,
an exception or Ctrl-C too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rtnetlab.errors import UserError
from rtnetlab.result import Result


class SlrmResult(Result):
    """The resource manager's periods (``rtnetlab slrm simulate --json`` or ``slrm run
    --json``): `data` is the report (``apps``, ``capacity``, ``control_period``, ``periods``...)
    with its ``summary`` (the largest ``|sum of caps - capacity|``, the final caps and SLs);
    `flows` has one row per period and application: ``time``, ``app``, ``cap``, ``sl``,
    ``response_time`` and what the period measured. `files` lists the files written."""

    kind = "slrm"
    #: What the run was, as its table's title says it (``slrm_run``'s source and capacity).
    title = ""

    def __init__(self, data: dict[str, Any], files: list[Path] | None = None, title: str = ""):
        super().__init__(data, [], None)
        #: The files written (with `out`).
        self.files = list(files or [])
        self.title = title

    @property
    def summary(self) -> dict[str, Any]:
        """The RM's invariant and where it ended: ``periods``, ``max_cap_sum_error``,
        ``final_caps``, ``final_sl`` (and on this machine the quotas read back)."""
        return dict(self.data.get("summary") or {})

    @property
    def flows(self) -> list[dict[str, Any]]:
        """One row per period and application."""
        rows = []
        names = self.data.get("apps") or []
        for p in self.data.get("periods") or []:
            for k, a in enumerate(p.get("apps") or []):
                row = {"time": p.get("time"), "app": names[k] if k < len(names) else k}
                row.update({key: v for key, v in a.items() if not isinstance(v, (list, dict))})
                rows.append(row)
        return rows

    def to_json(self, indent: int | None = None) -> str:
        """The report as the command's ``--json`` prints it (one line)."""
        return json.dumps(self.data, indent=indent, allow_nan=False) + "\n"

    def __repr__(self) -> str:
        s = self.summary
        return (f"<rtnetlab.SlrmResult: {len(self.data.get('apps') or [])} apps, {s.get('periods')} periods, "
                f"largest |sum of caps - capacity| {s.get('max_cap_sum_error', 0):.2e}>")


def slrm_step(shares: Sequence[float], matching: Sequence[float], *, epsilon: float = 0.2,
              min_share: float = 0.0) -> list[float]:
    """One step of the resource manager's law (seed 001G, Eq. 3; ``rtnetlab slrm step``):
    ``c_i <- c_i - epsilon (f_i - c_i sum f_p)``, clamped at `min_share` and renormalised. `shares`
    are the current shares c_i (summing to 1), `matching` the matching values
    ``f_i = 1 - t_i / t̄_i``. Returns the new shares.

    ```pycon
    >>> import rtnetlab as rt
    >>> [round(c, 6) for c in rt.slrm_step([0.5, 0.5], [-0.5, 0.2])]
    [0.565, 0.435]

    ```
    """
    from rtnetlab.cloud import slrm as law

    return [round(x, 12) for x in law.step(list(shares), list(matching), epsilon, min_share)]


def _check_seed(seed: int) -> None:
    if seed < 0:
        raise UserError(f"--seed: must be at least 0, got {seed}")


def slrm_simulate(scenario: str | Path | None = None, *, experiment: int | None = None, seed: int = 1,
                  out: str | Path | None = None) -> SlrmResult:
    """A discrete-time simulation of service-level-aware applications sharing cores under the
    resource manager (``rtnetlab slrm simulate``): the paper's `experiment` (1: 4 cores, 2
    applications; 2: 8 cores, 4) or a `scenario` file (docs/CLOUD.md). `out`: a directory for
    ``slrm.json``, ``slrm.csv`` and ``slrm.png``."""
    from rtnetlab.cloud import admit as adm
    from rtnetlab.cloud import slrm as law
    from rtnetlab.io import output as outfiles

    _check_seed(seed)
    file = None if scenario is None else Path(scenario)
    sc = law.scenario(experiment, file, seed)
    out_dir = None if out is None else Path(out)
    if out_dir is not None:
        outfiles.check({f"--out ({k})": v for k, v in law.outputs(out_dir).items()},
                       [file] if file else [])
    try:
        report = law.simulate(sc, str(file) if file else "scenario")
    except UserError as e:
        raise UserError(adm.in_user_files(str(e), *([file] if file else []))) from None
    title = f"experiment {experiment}" if experiment else str(file)
    files = law.write(out_dir, report, f"SL-aware RM: {title}") if out_dir is not None else []
    return SlrmResult({"summary": law.summary(report), **report}, files, title)


def slrm_run(apps: str | Path, *, duration: str | float = "20s", capacity: float | None = None, seed: int = 1,
             out: str | Path | None = None,
             started: Callable[[str, str], None] | None = None) -> SlrmResult:
    """Real service-level-aware HTTP services on this machine, capped by control groups, under
    the resource manager (``rtnetlab slrm run``; needs root). `apps`: a scenario file (the keys
    of `slrm_simulate`'s) or a preset (``overload``, ``pair``); `duration`: 2 s to 3600 s (and
    within the ``duration`` limit); `capacity`: the cores shared (default: the scenario's);
    `started(run, cgroup)` is called once the run's groups exist. The groups and processes are
    the run's own (``rtnetlab testbed down`` lists a leftover) and removed on every way out."""
    from rtnetlab import limits
    from rtnetlab.cloud import admit as adm
    from rtnetlab.cloud import slrm as law
    from rtnetlab.cloud import slrmrun
    from rtnetlab.io import output as outfiles
    from rtnetlab.simulate import _quantity

    seconds = _quantity("duration", duration, "--duration")
    limits.check("duration", seconds, "--duration")
    _check_seed(seed)
    if capacity is not None and not (capacity > 0 and capacity != float("inf")):
        raise UserError(f"--capacity: must be a positive number, got {capacity}")
    try:
        sc, source = slrmrun.scenario(str(apps), seconds, capacity)
    except UserError as e:
        raise UserError(adm.in_user_files(str(e), Path(apps))) from None
    out_dir = None if out is None else Path(out)
    if out_dir is not None:
        outfiles.check({f"--out ({k})": v for k, v in law.outputs(out_dir).items()})
    report = slrmrun.run(sc, seed, started)
    title = f"SL-aware RM on this machine: {source}, {sc['capacity']:g} cores"
    files = slrmrun.write(out_dir, report, title) if out_dir is not None else []
    return SlrmResult({"summary": slrmrun.summary(report), **report}, files, title)

