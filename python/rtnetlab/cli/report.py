"""``rtnetlab report``: the HTML page (with its .csv and .json) of ``rtnetlab.report``, and its
summary on the terminal."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from rtnetlab.cli.common import (
    EXIT_SIGINT,
    EXIT_VERDICT,
    FileArg,
    JsonOpt,
    emit_json,
    err,
    out,
    quantity,
    warn,
    wrote,
)
from rtnetlab.errors import UserError


def report_cmd(
    file: FileArg,
    output: Annotated[
        Path,
        typer.Option(
            "-o",
            "--output",
            help="The HTML page; its .csv and .json are written beside it (x.html: x.csv, x.json).",
        ),
    ] = Path("report.html"),
    duration: Annotated[str, typer.Option("--duration", help="Simulated time, e.g. 1s or 500ms.")] = "1s",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random generator.")] = 1,
    method: Annotated[str, typer.Option("--method", "-m", help="best, tfa, sfa or afdx-naive")] = "best",
    worst_case: Annotated[Path | None, typer.Option(
        "--worst-case", help="Show the pessimism interval per flow from `worst-case -o FILE`.")] = None,
    fail_on_miss: Annotated[
        bool,
        typer.Option(
            "--fail-on-miss",
            help="Exit with code 1 when a bound misses its deadline (or is infinite where one exists), "
            "a simulated frame arrives late, or a simulated maximum exceeds its bound; for CI gates.",
        ),
    ] = False,
    measured: Annotated[
        Path | None,
        typer.Option("--measured", help="A testbed run's JSON: measured beside bound and simulated."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """One self-contained HTML page: violations, topology, bounds vs simulation, CDFs, ports."""
    import rtnetlab as rt
    from rtnetlab.report import files as report_mod
    from rtnetlab.results import failure_line
    from rtnetlab.testbed import compare

    if measured is not None:
        compare.load(measured)  # checked before anything runs

    seconds = quantity("duration", duration, "--duration")
    if seconds <= 0:
        raise UserError(f"--duration: must be positive, got {duration}")
    report_mod.check_output(output, [file])
    net = rt.load(file)
    page = rt.report(net, output, method=method, duration=seconds, seed=seed, measured=measured,
                     worst_case=worst_case, progress=not as_json and sys.stderr.isatty())
    summary, paths = page.summary, page.paths
    failed = fail_on_miss and summary["verdict"]["failed"]
    if as_json:
        files = {k: str(p) for k, p in paths.items()}
        emit_json({"files": files, "summary": summary, "warnings": net.warnings})
    else:
        warn(net)
        wrote(paths["html"], paths["csv"], paths["json"])
        f = summary["flows"]
        out.print(
            f"{f['ok']}/{f['total']} bounds meet their deadline, {f['miss']} miss, "
            f"{f['unbounded']} unbounded",
            markup=False,
        )
        if summary["interrupted"]:
            err.print("warning: interrupted: the simulation covers less than --duration (see the notes)",
                      style="yellow", markup=False)
        if not summary["clean"]:
            n = sum(len(v) for v in summary["violations"].values())
            err.print(f"{n} violation(s) or overload(s): see the top of the report", style="bold red")
        if summary["violations"]["sim_above_bound"]:
            err.print("simulated maximum ABOVE its bound: this must never happen", style="bold red")
        if failed:
            err.print(failure_line(summary["verdict"]["failures"]), style="bold red", markup=False)
    if summary["interrupted"]:
        raise typer.Exit(EXIT_SIGINT)
    if failed:
        raise typer.Exit(EXIT_VERDICT)
