"""``rtnetlab worst-case``: how pessimistic is each bound? The search (``rtnetlab.worst_case`` and
the engine's ``worst_case``), its table, ``-o`` (the scenarios' file) and its soundness alarm."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from rtnetlab.errors import UserError
from rtnetlab.worst_case import summary_line


def worst_case_command(
    file: Annotated[
        Path, typer.Argument(help="Network description (.yaml, .yml, .json, WOPANet .xml or DNC .java)")
    ],
    budget: Annotated[
        str, typer.Option("--budget", help="Wall-clock time for the whole search, e.g. 60s or 500ms.")
    ] = "60s",
    evaluations: Annotated[
        int | None,
        typer.Option(
            "--evaluations",
            min=1,
            help="A budget in simulations instead of time, shared evenly among the rows: the result "
            "then depends only on the seed (replaces --budget).",
        ),
    ] = None,
    flows: Annotated[
        str | None, typer.Option("--flows", help="Only these flows' rows: names separated by commas.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the search's random moves.")] = 1,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers", min=1, help="Rows searched in parallel (default: the cores; at most the limit)."
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            help="Write the rows and the scenarios (JSON) here, for "
            "`simulate --scenario FILE#ID` and `report --worst-case FILE`.",
        ),
    ] = None,
    rows: Annotated[
        str, typer.Option("--rows", help="Rows shown, most pessimistic bound first: a number or 'all'.")
    ] = "40",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print machine-readable JSON (errors too).")
    ] = False,
) -> None:
    # The help is rich markup: "\\[" keeps the interval's brackets from being read as a tag.
    """Search the worst case of every flow: the largest delay a replayed simulation realises
    beside its bound, the pessimism interval \\[achieved, bound], and the scenario that realises it."""
    from rtnetlab import model
    from rtnetlab.cli import common as cli
    from rtnetlab.io import output as outfiles
    from rtnetlab.tables import parse_limit
    from rtnetlab.worst_case import KIND

    limit = parse_limit(rows)
    if workers is not None:
        from rtnetlab import limits

        limits.check("workers", workers, "--workers", f"{workers:,} search threads")
    seconds = None
    if evaluations is None:
        seconds = cli.quantity("duration", budget, "--budget")
        if not seconds > 0:
            raise UserError(f"--budget: must be positive, got {budget}")
    names = cli.comma_list("--flows", flows, what="flow names") if flows is not None else []
    if output is not None:
        cli.check_outputs({"-o": output}, [file])
    net = model.load_file(file)
    known = {f["name"] for f in net.spec.get("flows", [])}
    for n in names:
        if n not in known:
            raise UserError(f"--flows: no flow named '{n}' in {file}")
    try:
        report = net.worst_case(seconds, evaluations, seed, workers or os.cpu_count() or 1, names)
    except ValueError as e:
        raise UserError(f"{file}: {e}") from None
    report["kind"] = KIND
    report["budget"] = {"evaluations": evaluations} if evaluations is not None else {"seconds": seconds}
    report["warnings"] = list(net.warnings)
    if output is not None:
        outfiles.write_all({output: json.dumps(report, indent=1, allow_nan=False) + "\n"})
    if as_json:
        cli.emit_json(report)
    else:
        cli.warn(net)
        _print(report, limit, cli.out)
        if output is not None:
            cli.wrote(output, detail=f"{len(report['scenarios'])} scenarios")
    if report["violations"]:
        cli.err.print(_violation_line(report["violations"]), style="bold white on red", markup=False)


def _violation_line(violations: list[dict]) -> str:
    v = violations[0]
    return (
        f"SOUNDNESS VIOLATION: achieved above its bound in {len(violations)} row(s), first {v['flow']} -> "
        f"{v['destination']} ({v['plane']}): a replayed simulation realised {v['achieved_us']:,.3f} us > "
        f"bound {v['bound_us']:,.3f} us (scenario {v['scenario']}); a bound must never be exceeded: this is "
        "a bug in rtnetlab, please report it with the description and the scenario"
    )


def _print(report: dict, limit: int | None, console: Any) -> None:
    from rtnetlab.tables import ResultTable

    table = ResultTable(
        f"Worst case found vs bound ({report['method']}): pessimism interval \\[achieved, bound] (us)",
        [
            "flow",
            "destination",
            "plane",
            "achieved",
            "bound",
            "achieved / bound",
            "exact for grid",
            "scenario",
        ],
        left=("flow", "destination", "plane"),
    )

    def order(r: dict) -> tuple:
        ratio = r["ratio"]
        return (not r["above_bound"], ratio is not None, ratio if ratio is not None else 0.0, r["flow"])

    for r in sorted(report["rows"], key=order):
        bound = "unbounded" if r["bound_us"] is None else f"{r['bound_us']:,.3f}"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}"
        ratio += " ABOVE BOUND" if r["above_bound"] else ""
        exact = "-"
        if r["exact_for_grid"]:
            exact = "yes" if r["grid_step_ns"] is None else f"yes, step {r['grid_step_ns']:,} ns"
        table.add_row(
            r["flow"],
            r["destination"],
            r["plane"],
            f"{r['achieved_us']:,.3f}",
            bound,
            ratio,
            exact,
            str(r["scenario"]),
            style="bold white on red" if r["above_bound"] else None,
        )
    table.print(console, limit, "(flow, destination, plane) rows")
    console.print(summary_line(report), markup=False)
    for note in report["notes"]:
        console.print(f"note: {note}", markup=False)
