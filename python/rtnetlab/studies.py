"""Studies over many networks: parameter sweeps on Dask (`sweep`) and the seed papers'
experiments (`experiment`), returning results whose rows read back as data frames.

A sweep's rows are the Parquet files in its output directory, one row per point and seed;
`SweepResult` holds them beside their per-point means with confidence intervals
(`SweepResult.summary`). An experiment's result (`ExperimentResult`) holds the document its
command prints with ``--json`` and its table rows.

The same limits as the command line apply (``rtnetlab --limit``, `rtnetlab.limits`): a SPEC
or an option asking for more rows, workers or time than allowed is refused before anything
runs, with the command's one-line message.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rtnetlab.errors import UserError
from rtnetlab.result import Result

if TYPE_CHECKING:
    import polars


class SweepResult(Result):
    """A parameter sweep (``rtnetlab sweep --json``): `data` holds the counts (``points``,
    ``rows``, ``ran``, ``skipped``, ``failed``), the cluster (``workers``, ``scheduler``,
    ``tasks``), ``wall_s``, ``engine_version`` and the ``files`` written; `rows` has one row
    per point and seed (the varied keys, the kept metrics, ``error``), `summary` one per point
    (each metric's mean and confidence interval).

    ``to_polars()`` gives the rows, ``to_polars("summary")`` the means as ``summary.csv``
    holds them (``METRIC.mean``, ``METRIC.half_width``...)."""

    kind = "sweep"
    _rows = "rows"

    def __init__(self, data: dict[str, Any], rows: list[dict[str, Any]], summary: list[dict[str, Any]],
                 params: list[str], metrics: list[str], confidence: float = 0.95):
        super().__init__(data, [], None)
        #: The level of the intervals in `summary` (the SPEC's ``confidence``).
        self.confidence = float(confidence)
        self._row_list = rows
        self._summary = summary
        #: The varied keys (``network.defaults.link_rate``...), the columns of a point.
        self.params = list(params)
        #: The kept metrics, the columns of a row's measurements.
        self.metrics = list(metrics)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """One row per point and seed, resumed ones too: ``point``, ``index``, ``seed``, the
        varied keys, the kept metrics, ``engine_version``, ``wall_s`` and ``error``."""
        return list(self._row_list)

    @property
    def flows(self) -> list[dict[str, Any]]:
        """The sweep's rows (`rows`): a sweep's table is one row per point and seed."""
        return self.rows

    @property
    def summary(self) -> list[dict[str, Any]]:
        """Per point: the varied keys, ``rows``, ``failed`` and per metric its ``mean``, ``std``,
        ``n`` and ``half_width`` (the confidence interval's)."""
        return list(self._summary)

    @property
    def failed(self) -> int:
        """Rows whose run failed (their error is in the row)."""
        return int(self.data.get("failed") or 0)

    @property
    def files(self) -> dict[str, Any]:
        """The files written: ``rows`` (the Parquet directory), ``summary_csv``, ``summary_json``
        and ``plots``."""
        return dict(self.data.get("files") or {})

    def _table(self, rows: str | None) -> list[dict[str, Any]]:
        name = rows or self._rows
        if name == "rows":
            return self.rows
        if name == "summary":
            from rtnetlab.sweep import aggregate

            return aggregate.flat(self._summary, self.params, self.metrics)
        raise ValueError(f"rows: expected rows or summary, got '{name}'")

    def to_polars(self, rows: str | None = None) -> polars.DataFrame:
        """The rows (`rows`: ``rows``, the default, or ``summary``) as a polars DataFrame."""
        return super().to_polars(rows)

    def to_json(self, indent: int | None = 2) -> str:
        """The sweep as ``rtnetlab sweep --json`` prints it (an infinite mean is ``"inf"``)."""
        from rtnetlab.sweep.options import _clean, _json_default

        return json.dumps(_clean(self.data), indent=indent, default=_json_default) + "\n"

    def __repr__(self) -> str:
        return (f"<rtnetlab.SweepResult {self.data.get('name')!r}: {len(self._row_list)} rows, "
                f"{self.failed} failed, {len(self._summary)} points>")


def sweep(spec: str | Path | Mapping[str, Any], out: str | Path, *, workers: int | None = None,
          scheduler: str | None = None, tls_ca: str | Path | None = None,
          tls_cert: str | Path | None = None, tls_key: str | Path | None = None,
          trust_scheduler: bool = False, resume: bool = False,
          progress: bool | None = None) -> SweepResult:
    """Runs a parameter sweep on Dask (``rtnetlab sweep``): every point of the SPEC's grid and
    every seed, rows to Parquet in `out`, then per point the means with confidence intervals
    (``summary.csv``, ``summary.json``) and the default plots.

    `spec`: a SPEC file (YAML or JSON, docs/SWEEPS.md) or its plain data (paths in it are
    relative to the working directory). A wrong SPEC raises `rtnetlab.UserError` naming its
    place before anything runs. `workers`: processes of the embedded cluster (default: one per
    core); `scheduler`: a Dask scheduler to run on instead (``tls://HOST:8786`` with `tls_ca`,
    `tls_cert` and `tls_key`, or ``tcp://HOST:8786`` with `trust_scheduler`, docs/SWEEPS.md);
    `resume`: go on with the sweep in `out`; `progress`: a progress bar on stderr (default: when
    stderr is a terminal). A row that fails keeps its error in the rows (``failed``)."""
    from rtnetlab.sweep import aggregate, runner
    from rtnetlab.sweep import spec as spec_mod
    from rtnetlab.sweep.cluster import remote

    if workers is not None and workers < 1:
        raise UserError(f"--workers: must be at least 1, got {workers}")
    where = remote(scheduler, _path(tls_ca), _path(tls_cert), _path(tls_key), trust_scheduler)
    if isinstance(spec, Mapping):
        checked = spec_mod.parse(dict(spec), "", Path.cwd())
    else:
        checked, _ = spec_mod.load(Path(spec))
    out = Path(out)
    outcome = runner.run_sweep(checked, out, workers, where, resume, progress=progress)

    written = aggregate.write_summary(checked, out)
    rows, summary, files = written["rows"], written["summary"], written["files"]
    doc = {
        "name": checked.name,
        "points": len(checked.grid()),
        "rows": len(rows),
        "ran": outcome.ran,
        "skipped": outcome.skipped,
        "failed": sum(1 for r in rows if r["error"]),
        "workers": outcome.workers if scheduler is None else None,
        "scheduler": scheduler,
        "tasks": outcome.tasks,
        "wall_s": outcome.wall_s,
        "engine_version": rows[0]["engine_version"] if rows else None,
        "files": files,
    }
    return SweepResult(doc, rows, summary, checked.param_names, checked.keep, checked.confidence)


def _path(p: str | Path | None) -> Path | None:
    return None if p is None else Path(p)


# -- experiments ------------------------------------------------------------------------------


class ExperimentResult(Result):
    """A seed paper's experiment (``rtnetlab experiment NAME --json``): `data` is the document
    the command prints, `flows` its table's rows (one per point, cell or class, as the
    experiment has them) and `files` what it wrote."""

    kind = "experiment"

    def __init__(self, name: str, data: Any, rows: list[dict[str, Any]], files: list[Path] | None = None):
        super().__init__(data if isinstance(data, dict) else {"rows": data}, [], None)
        #: The experiment's name (``schedulers``, ``dopa``...).
        self.name = name
        #: The document as the command prints it with ``--json`` (a list for some experiments).
        self.document = data
        self._row_list = rows
        self.files = list(files or [])

    @property
    def flows(self) -> list[dict[str, Any]]:
        """The experiment's rows, flat: one per point, cell or class."""
        return list(self._row_list)

    def to_json(self, indent: int | None = 2) -> str:
        """The document as ``rtnetlab experiment NAME --json`` prints it."""
        return json.dumps(self.document, indent=indent, allow_nan=False) + "\n"

    def __repr__(self) -> str:
        return f"<rtnetlab.ExperimentResult {self.name!r}: {len(self._row_list)} rows>"


def _dopa(out_dir: str | Path = "out/dopa", sets: int = 100, points: int = 10, seed: int = 1,
          dm_key: str = "local-window", local_test: str = "release-jitter") -> ExperimentResult:
    from rtnetlab import limits
    from rtnetlab.experiments import seed001e_fig6
    from rtnetlab.io import output as outfiles

    _at_least("--sets", sets, 1)
    _at_least("--points", points, 1)
    # Each task set is drawn and partitioned, one row of the figure's data: within `rows`.
    limits.check_product("rows", {"--sets": sets, "--points": points}, "task sets", 3, "panels")
    out_dir = Path(out_dir)
    stems = [stem for _, stem, _ in seed001e_fig6.DOPA_PANELS.values()]
    files = [out_dir / f"{stem}.{ext}" for stem in stems for ext in ("csv", "png")]
    outfiles.check({f"--out-dir ({f.name})": f for f in files}, [])
    results = seed001e_fig6.dopa_fig6(out_dir, sets, points, seed, dm_key, local_test)
    doc = {p: [{"x": x, "opa": o, "dm": d} for x, o, d in rows] for p, rows in results.items()}
    flat = [{"panel": p, **r} for p, rows in doc.items() for r in rows]
    return ExperimentResult("dopa", doc, flat, files)


def _nss_overhead(seeds: int = 20, packets: int = 1000) -> ExperimentResult:
    from rtnetlab import limits
    from rtnetlab.experiments import seed004_table4

    _at_least("--seeds", seeds, 1)
    _at_least("--packets", packets, 1)
    gaps, budgets = [20, 50, 250, 1000], [2, 4, 6, 8, 10]
    limits.check("messages", packets, "--packets")
    limits.check_product("rows", {"--seeds": seeds}, "runs", len(gaps) * len(budgets), "cells")
    rows = seed004_table4.nss_overhead(gaps, budgets, packets, seeds)
    return ExperimentResult("nss-overhead", rows, list(rows))


def _fabric(scenario: str | Path | None = None, schedulers: list[str] | None = None,
            duration: str | None = None, warmup: str | None = None, reference_rate: str | None = None,
            seed: int | None = None,
            started: Callable[[str, int, int], None] | None = None) -> ExperimentResult:
    from rtnetlab.experiments import seed003_fabric

    path = None if scenario is None else Path(scenario)
    if path is not None and not path.exists():
        raise UserError(f"{path}: no such file")
    reports = seed003_fabric.fabric(path, schedulers, duration, warmup, reference_rate, seed,
                                    started or (lambda name, k, n: None))
    rows = [{"scheduler": r["scheduler"], "class": c["class"], "offered_load": c["offered_load"],
             "accepted_load": c["accepted_load"], "mean_us": c["latency"]["mean_us"],
             "p99_us": c["latency"]["p99_us"]}
            for r in reports for c in r["classes"]]
    return ExperimentResult("fabric", reports, rows)


def _schedulers(duration: str | float = "2s", seed: int = 1, link_rate: str = "10Mbps") -> ExperimentResult:
    from rtnetlab.experiments.seed000_comparison import seed000_schedulers
    from rtnetlab.simulate import _quantity

    seconds = _quantity("duration", duration, "--duration")
    _quantity("rate", link_rate, "--link-rate")
    rows = seed000_schedulers(seconds, seed, link_rate)
    return ExperimentResult("schedulers", rows, list(rows))


def _admission(requests: int = 100, seed: int = 1, mean_gap: float = 1.0, mean_lifetime: float = 20.0,
               out_dir: str | Path = "out/admission", exact: int = 0) -> ExperimentResult:
    from rtnetlab.cloud import admit as adm
    from rtnetlab.cloud import experiment as gen
    from rtnetlab.io import output as outfiles

    if not (0 <= exact <= 100):
        raise UserError(f"--exact: between 0 and 100 batches, got {exact}")
    if requests < 1 or requests > 100_000:
        raise UserError(f"--requests: between 1 and 100000, got {requests}")
    if seed < 0:
        raise UserError(f"--seed: must be at least 0, got {seed}")
    for name, v in (("--mean-gap", mean_gap), ("--mean-lifetime", mean_lifetime)):
        if not (0 < v < 1e4):
            raise UserError(f"{name}: must be positive and below 10000 s, got {v}")
    out = Path(out_dir)
    sweep_file = out / "acceptance_vs_load.png"
    outfiles.check({**{f"--out ({k})": v for k, v in adm.outputs(out).items()}, "--out (sweep)": sweep_file})
    infra = gen.infrastructure()
    report = adm.admit(infra, gen.requests(requests, seed, mean_gap, mean_lifetime))
    by_load = gen.load_sweep(adm.admit, requests, seed)
    comparison = None
    if exact:
        from rtnetlab.cloud import ilp

        comparison = ilp.compare(adm.admit, exact, seed)
    data = adm.files(out, report, f"admission: {requests} requests, seed {seed}")
    data[sweep_file] = gen.sweep_png(by_load, f"VSN admission, {requests} requests per point, seed {seed}")
    outfiles.write_all(data)
    summary = adm.summary(report)
    cores = sum(h["cores"] for h in infra["hosts"])
    summary["offered_load"] = gen.offered_load(mean_gap, mean_lifetime, cores)
    doc = {**summary, "requests": requests, "seed": seed, "admitted": str(out / "admitted.yaml"),
           "by_load": by_load, **({"exact_vs_heuristic": comparison} if comparison is not None else {})}
    return ExperimentResult("admission", doc, list(report["decisions"]), list(data))


def _reservation(runtime: str | float = "3ms", period: str | float = "10ms", seconds: float = 2.0,
                 tolerance: float = 0.02) -> ExperimentResult:
    from rtnetlab.cloud import reservation
    from rtnetlab.simulate import _quantity

    q = round(_quantity("duration", runtime, "--runtime") * 1e9)
    t = round(_quantity("duration", period, "--period") * 1e9)
    if not (0 < q <= t):
        raise UserError(f"--runtime: must be positive and at most the period, got {runtime} for {period}")
    if not (0.1 <= seconds <= 600):
        raise UserError(f"--seconds: between 0.1 and 600, got {seconds}")
    if not (0 < tolerance < 1):
        raise UserError(f"--tolerance: between 0 and 1, got {tolerance}")
    r: dict[str, Any] = reservation.check(q, t, seconds, tolerance)
    return ExperimentResult("reservation", r, [r])


def _ethernet_measure(figure: str = "all", out_dir: str | Path = "out/ethernet-measure",
                      messages: int = 10_000,
                      policies: str | Sequence[str] | None = None, sizes: str | Sequence[int] | None = None,
                      loads: str | Sequence[float] | None = None, switch: str = "kernel", seed: int = 1,
                      started: Callable[[str, int, int, Any], None] | None = None) -> ExperimentResult:
    from rtnetlab import limits
    from rtnetlab.io import output as outfiles
    from rtnetlab.lab import _choice
    from rtnetlab.testbed import ethernet_measure as em
    from rtnetlab.testbed import netns
    from rtnetlab.text import comma_list

    netns.check_privileges()
    # `all` is a choice too: the refusal lists it with the figures.
    figures = list(em.FIGURES) if figure == "all" else [_choice("--figure", figure, (*em.FIGURES, "all"))]
    if messages < 100:
        raise UserError(f"--messages: at least 100, got {messages}")
    limits.check("messages", messages, "--messages")
    # One message per millisecond: a point lasts that long.
    per_point = f"{messages:,} messages, {messages / 1000:g} s per point"
    limits.check("duration", messages / 1000, "--messages", per_point)
    chosen = None
    if policies is not None:
        named = comma_list("--policies", _text(policies), what="policies")
        chosen = [_choice("--policies", p, tuple(em.POLICIES)) for p in named]
    size_list = comma_list("--sizes", _text(sizes), int, "integers") if sizes is not None else None
    load_list = comma_list("--loads", _text(loads), float, "numbers") if loads is not None else None
    if size_list is not None and any(s < 1 or s > 65507 for s in size_list):
        raise UserError(f"--sizes: a UDP datagram holds 1..65507 bytes, got {_text(sizes)}")
    if load_list is not None and any(not 0 <= x <= 1 for x in load_list):
        raise UserError(f"--loads: fractions of the link rate in [0, 1], got {_text(loads)}")
    mode = _choice("--switch", switch, ("kernel", "user"))
    out = Path(out_dir)
    files = {f"--out-dir ({f}.{ext})": out / f"{f}.{ext}" for f in figures for ext in ("csv", "png")}
    outfiles.check(files, [])
    rows: list[dict[str, Any]] = []
    for fig in figures:
        pts = list(em.points(fig, chosen, size_list, load_list))
        fig_rows = []
        for k, pt in enumerate(pts, 1):
            if started is not None:
                started(fig, k, len(pts), pt)
            fig_rows.append(em.measure(pt, messages, mode, seed))
        em.write_csv(fig_rows, out / f"{fig}.csv")
        em.plot(fig_rows, fig, out / f"{fig}.png")
        rows.extend(fig_rows)
    from rtnetlab.testbed import run as run_mod

    basis = run_mod.MEASURED_AND_MODELLED if mode == "kernel" else "measured"
    doc = {"messages": messages, "switch": mode, "latency_basis": basis, "rows": rows}
    return ExperimentResult("ethernet-measure", doc, rows, list(files.values()))


def _text(value: Any) -> str:
    """A list option as its command's text (a sequence joined with commas)."""
    return value if isinstance(value, str) else ",".join(str(v) for v in value)


#: The experiments built on sweeps (rows to Parquet in `out`, resumable, on the embedded cluster or
#: a Dask scheduler): name -> "module:function" computing the document their command prints.
SWEPT = {
    "soundness": "rtnetlab.sweep.soundness:campaign",
    "seed000-fig8": "rtnetlab.sweep.figures:seed000_fig8",
    "seed001e-fig6": "rtnetlab.sweep.figures:seed001e_fig6",
    "seed000-omega": "rtnetlab.sweep.fig_seed000:seed000_omega",
    "seed000-fig9": "rtnetlab.sweep.fig_seed000:seed000_fig9",
    "seed000-fig11": "rtnetlab.sweep.fig_seed000:seed000_fig11",
    "seed001d-table2": "rtnetlab.sweep.fig_seed001d:seed001d_table2",
    "seed003-fabric": "rtnetlab.sweep.fig_seed003:seed003_fabric",
}


def _swept(name: str) -> Callable[..., dict[str, Any]]:
    import importlib

    module, _, function = SWEPT[name].partition(":")
    compute: Callable[..., dict[str, Any]] = getattr(importlib.import_module(module), function)
    return compute


def _option_rules(compute: Callable[..., Any], options: dict[str, Any]) -> dict[str, Any]:
    """`options` held to the rules the command line's options carry (their ``min`` and ``max``,
    a limit's check), a path given as text made a `Path`, and a list or tuple given for an option
    the command line takes as comma-separated text (``vls=[40, 80]`` for ``--vls 40,80``) joined
    into that text, which the command's own parser then checks."""
    import typing
    from types import SimpleNamespace

    import typer.models

    hints = typing.get_type_hints(compute, include_extras=True)
    checked = dict(options)
    for key, value in options.items():
        hint = hints.get(key)
        info = next((m for m in getattr(hint, "__metadata__", ()) if isinstance(m, typer.models.OptionInfo)),
                    None)
        base = typing.get_args(hint)[0] if info is not None else hint
        if isinstance(value, str) and (base is Path or Path in typing.get_args(base)):
            checked[key] = Path(value)
        if isinstance(value, (list, tuple)) and base is str:
            checked[key] = value = ",".join(str(v) for v in value)
        if info is None or value is None:
            continue
        flag = next((d for d in info.param_decls or () if d.startswith("--")), f"--{key.replace('_', '-')}")
        if info.min is not None and value < info.min:
            raise UserError(f"{flag}: must be at least {info.min}, got {value}")
        if info.max is not None and value > info.max:
            raise UserError(f"{flag}: must be at most {info.max}, got {value}")
        if info.callback is not None:
            context = SimpleNamespace(resilient_parsing=False)
            info.callback(context, SimpleNamespace(opts=[flag], name=key), value)
    return checked


def _run_swept(name: str, options: dict[str, Any]) -> ExperimentResult:
    import inspect

    compute = _swept(name)
    parameters = {k: p for k, p in inspect.signature(compute).parameters.items() if k != "as_json"}
    progress = options.pop("progress", False)
    for key in options:
        if key not in parameters:
            known = ", ".join([*parameters, "progress"])
            raise UserError(f"experiment {name}: no option '{key}' (options: {known})")
    for key, p in parameters.items():
        if p.default is inspect.Parameter.empty and key not in options:
            raise UserError(f"experiment {name}: '{key}' is required")
    doc = compute(**_option_rules(compute, options), as_json=progress is False)
    table = doc.get("table")
    rows = [r for r in table if isinstance(r, dict)] if isinstance(table, list) else []
    files = [Path(f) for f in doc.get("files") or []]
    return ExperimentResult(name, doc, rows, files)


def _at_least(option: str, value: int, low: int) -> None:
    if value < low:
        raise UserError(f"{option}: must be at least {low}, got {value}")


#: The experiments `experiment` runs, by name (``rtnetlab experiment NAME``).
EXPERIMENTS: dict[str, Callable[..., ExperimentResult]] = {
    "dopa": _dopa,
    "nss-overhead": _nss_overhead,
    "fabric": _fabric,
    "schedulers": _schedulers,
    "admission": _admission,
    "reservation": _reservation,
    "ethernet-measure": _ethernet_measure,
}


def experiment(name: str, **options: Any) -> ExperimentResult:
    """Runs seed paper experiment `name` (``rtnetlab experiment NAME``) with its command's
    options as keywords (``--link-rate`` is ``link_rate``), and returns its document and rows.

    - ``schedulers`` (seed 000's comparison): `duration` (``"2s"``), `seed`, `link_rate`
      (``"10Mbps"``); rows per scheduler and class: frames, mean, p99, max and the bound (µs);
    - ``nss-overhead`` (seed 004 Table 4): `seeds` (20), `packets` (1000); rows per mean gap and
      budget: the CPU overhead (%);
    - ``dopa`` (seed 001E Fig. 6): `out_dir` (``"out/dopa"``: CSV and PNG files), `sets`,
      `points`, `seed`, `dm_key`, `local_test`; rows per panel and point: OPA's and DM's
      acceptance;
    - ``fabric`` (seed 003): `scenario` (a file; default: the shipped set-up), `schedulers`,
      `duration`, `warmup`, `reference_rate`, `seed`, `started` (called with each scheduler's
      name, its index and the count); rows per scheduler and class;
    - ``admission`` (seed 001F): `requests`, `seed`, `mean_gap` and `mean_lifetime` (s),
      `out_dir` (``"out/admission"``), `exact` (batches compared with the exact ILP); rows: the
      decisions, in arrival order;
    - ``reservation`` (seed 001F, needs SCHED_DEADLINE): `runtime`, `period`, `seconds`,
      `tolerance`; one row: the share measured against Q/T;
    - ``ethernet-measure`` (seed 002 on the testbed, needs root): `figure` (``size``,
      ``size-shaping``, ``load`` or ``all``), `out_dir`, `messages`, `policies`, `sizes`,
      `loads`, `switch`, `seed`, `started` (called with the figure, the point's index, the
      count and the point); rows per point: round trip and jitter;
    - the experiments built on sweeps (`SWEPT`: ``soundness``, ``seed000-fig8``,
      ``seed001e-fig6``, ``seed000-omega``, ``seed000-fig9``, ``seed000-fig11``,
      ``seed001d-table2``, ``seed003-fabric``): `out` (required: the rows, figures and tables),
      their command's options, the sweep's `workers`, `scheduler` (with `tls_ca`, `tls_cert`,
      `tls_key` or `trust_scheduler`) and `resume`, and `progress`; rows: the figure's table.
      The options' rules and limits are the command line's; an option it takes as a
      comma-separated list also takes a Python list (``vls=[40, 80]``).

    ```pycon
    >>> import rtnetlab as rt
    >>> r = rt.experiment("nss-overhead", seeds=1, packets=50)
    >>> sorted(r.flows[0])[:2]
    ['budget', 'mean_gap_ns']

    ```
    """
    if name in SWEPT:
        return _run_swept(name, dict(options))
    run = EXPERIMENTS.get(name)
    if run is None:
        known = ", ".join([*EXPERIMENTS, *SWEPT])
        raise UserError(f"experiment: no experiment named '{name}' (experiments: {known})")
    import inspect

    accepted = inspect.signature(run).parameters
    for key in options:
        if key not in accepted:
            raise UserError(f"experiment {name}: no option '{key}' (options: {', '.join(accepted)})")
    return run(**options)
