"""``rtnetlab worst-case``: how pessimistic is each bound? The search (``rtnetlab.worst_case`` and
the engine's ``worst_case``), its table, ``-o`` (the scenarios' file) and its soundness alarm."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from rtnetlab.worst_case import budget_seconds, summary_line


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
    import rtnetlab as rt
    from rtnetlab.cli import common as cli
    from rtnetlab.tables import parse_limit

    limit = parse_limit(rows)
    budget_seconds(budget, evaluations, workers)
    names = cli.comma_list("--flows", flows, what="flow names") if flows is not None else []
    if output is not None:
        cli.check_outputs({"-o": output}, [file])
    net = rt.load(file)
    report = net.worst_case(budget, evaluations=evaluations, flows=names, seed=seed, workers=workers,
                            output=output).data
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
