"""Commands of the sweep capability: `rtnetlab sweep` (registered by the main CLI as one
command) and the experiments built on sweeps, added to `rtnetlab experiment` by
`register_experiments`."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer

from rtnetlab.sweep.options import (
    JsonOpt,
    OutOpt,
    ResumeOpt,
    SchedulerOpt,
    TlsCaOpt,
    TlsCertOpt,
    TlsKeyOpt,
    TrustOpt,
    WorkersOpt,
    emit,
)


def write_summary(spec, out: Path) -> dict:
    """Summary CSV and JSON and the default plots of the rows in `out`; returns the file paths."""
    from rtnetlab.sweep import aggregate

    return aggregate.write_summary(spec, out)


def sweep(
    spec_file: Annotated[Path, typer.Argument(help="The SPEC (YAML or JSON): see docs/SWEEPS.md.")],
    out: OutOpt,
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
    tls_ca: TlsCaOpt = None,
    tls_cert: TlsCertOpt = None,
    tls_key: TlsKeyOpt = None,
    trust_scheduler: TrustOpt = False,
    resume: ResumeOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Run a parameter sweep on Dask: rows to Parquet, means with confidence intervals, plots.

    A wrong SPEC stops before anything runs (one line naming its place, exit 2): every
    `network.*` value is applied to the networks the rows start from and validated first. A row
    that fails still (its error kept in the rows) makes the exit code 1, the files written.
    """
    import rtnetlab as rt
    from rtnetlab.sweep import runner

    result = rt.sweep(spec_file, out, workers=workers, scheduler=scheduler, tls_ca=tls_ca, tls_cert=tls_cert,
                      tls_key=tls_key, trust_scheduler=trust_scheduler, resume=resume,
                      progress=None if not as_json else False)
    doc = result.data
    if as_json:
        emit(doc)
    else:
        from types import SimpleNamespace

        from rtnetlab.cli.common import err
        from rtnetlab.cli.common import out as con

        title = f"{doc['name']}: means over seeds ({round(result.confidence * 100)} % CI)"
        names = SimpleNamespace(param_names=result.params, keep=result.metrics)
        for table in summary_tables(title, names, result.summary[:50], con.width):
            con.print(table)
        con.print(
            f"{doc['rows']} rows ({doc['ran']} run now, {doc['skipped']} already done, "
            f"{doc['failed']} failed) in {doc['wall_s']:.1f} s; rows in {out / runner.ROWS}, "
            f"summary in {out / 'summary.csv'}",
            markup=False,
        )
        if doc["failed"]:
            first = next(r for r in result.rows if r["error"])
            err.print(
                f"{doc['failed']} of {doc['rows']} rows failed; the first: point {first['index']} seed "
                f"{first['seed']}: {first['error']}",
                markup=False,
            )
    if doc["failed"]:
        # The files are written, the failures counted in them: a verdict, as --fail-on-miss's.
        raise typer.Exit(1)


def number(x: float, digits: int | None = None) -> str:
    """A mean as people read it: four significant digits without an exponent (with thousands
    separators) from 0.001 to 10^9, else in scientific notation; `digits` forces the decimals."""
    if not math.isfinite(x):
        return "inf" if x > 0 else ("-inf" if x < 0 else "nan")
    if digits is None:
        if x == 0 or not 1e-3 <= abs(x) < 1e9:
            return "0" if x == 0 else f"{x:.3e}"
        digits = max(0, 3 - math.floor(math.log10(abs(x))))
    return f"{x:,.{digits}f}"


def _cell(stats: dict) -> str:
    mean, half = stats["mean"], stats["half_width"]
    if mean is None:
        return "-"
    if half is None or not math.isfinite(mean) or not 1e-3 <= abs(mean) < 1e9:
        return number(mean) + ("" if half is None else f" ± {half:.2g}")
    digits = max(0, 3 - math.floor(math.log10(abs(mean))))
    return f"{number(mean, digits)} ± {number(half, digits)}"


def summary_tables(title: str, spec, summary: list[dict], width: int | None) -> list:
    """The summary as tables that fit `width` columns without cutting a value: a header breaks
    at its dots, and the metrics are split over as many tables as needed, each repeating the
    varied keys and the row counts."""
    from rich.table import Table

    def head(name: str) -> str:
        return name.replace(".", ".\n") if len(name) > 12 else name

    left = [
        [str(e[p]) for p in spec.param_names] + [f"{e['rows'] - e['failed']}/{e['rows']}"] for e in summary
    ]
    left_names = [*spec.param_names, "rows"]
    metrics = {m: [_cell(e[m]) for e in summary] for m in spec.keep}

    def need(name: str, cells: list[str]) -> int:
        # A column: its widest cell or header line, one space each side, one border.
        return max([len(line) for line in head(name).splitlines()] + [len(c) for c in cells]) + 3

    base = 1 + sum(need(n, [row[k] for row in left]) for k, n in enumerate(left_names))
    groups: list[list[str]] = [[]]
    used = base
    for m, cells in metrics.items():
        w = need(m, cells)
        if groups[-1] and width is not None and used + w > width:
            groups.append([])
            used = base
        groups[-1].append(m)
        used += w
    tables = []
    for g, group in enumerate(groups):
        part = f" ({g + 1}/{len(groups)})" if len(groups) > 1 else ""
        t = Table(title=title + part, title_justify="left")
        for n in left_names:
            t.add_column(head(n), justify="right" if n == "rows" else "left", no_wrap=True)
        for m in group:
            t.add_column(head(m), justify="right", no_wrap=True)
        for k, row in enumerate(left):
            t.add_row(*row, *[metrics[m][k] for m in group])
        tables.append(t)
    return tables


def register_experiments(experiment_app: typer.Typer) -> None:
    """Adds the sweep-based experiments to `rtnetlab experiment`."""
    from rtnetlab.sweep import experiments_cli

    experiments_cli.register(experiment_app)
