"""The `rtnetlab` command.

Exit codes, one rule for every command:

* 0: done (and, with ``--fail-on-miss``, every deadline met);
* 1: a verdict failed: ``--fail-on-miss`` found a deadline missed (or a bound infinite where a
  deadline exists, or a simulated maximum above its bound), or ``configure`` found no feasible
  configuration; the results are still printed or written;
* 2: a user error (unreadable file, bad description, wrong option): one line per problem on
  stderr, or with ``--json`` the JSON document ``{"errors": [{"place", "message"}], "warnings"}``
  on stdout; nothing is written;
* 3: an internal error (a bug), with its traceback;
* 130: interrupted by Ctrl-C (SIGINT), 143: terminated (SIGTERM); a simulation still reports
  what it measured, and no file is left half-written.
"""

from __future__ import annotations

import json
import math
import signal
import sys
import traceback
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from rtnetlab import model
from rtnetlab.errors import ModelError, Terminated, UserError
from rtnetlab.io import formats
from rtnetlab.io import output as outfiles
from rtnetlab.tables import DEFAULT_ROWS, ResultTable, RowsOpt, parse_limit
from rtnetlab.worst_case import replay_setup, worst_case_command

app = typer.Typer(
    name="rtnetlab",
    help="Design real-time networks and know they meet their deadlines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
generate_app = typer.Typer(help="Generate synthetic networks.", no_args_is_help=True)
app.add_typer(generate_app, name="generate")
experiment_app = typer.Typer(help="Reproduce the seed papers' experiments.", no_args_is_help=True)
app.add_typer(experiment_app, name="experiment")
configure_app = typer.Typer(
    help="Choose parameters that make a description feasible and write them into it.", no_args_is_help=True
)
app.add_typer(configure_app, name="configure")
from rtnetlab.testbed import cli as testbed_cli  # noqa: E402

app.add_typer(testbed_cli.app, name="testbed")
app.add_typer(testbed_cli.export_app, name="export")
app.add_typer(__import__("rtnetlab.middleware.cli", fromlist=["app"]).app, name="middleware")
app.command("worst-case")(worst_case_command)

# Tables keep their columns when piped (rich would otherwise squeeze them to 80 characters).
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 250)
err = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_VERDICT = 1
EXIT_USER = 2
EXIT_INTERNAL = 3
EXIT_SIGINT = 130
EXIT_SIGTERM = 143

FileArg = Annotated[Path, typer.Argument(help="Network description (.yaml, .yml, .json, or WOPANet .xml)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON (errors too).")]
FailOnMissOpt = Annotated[
    bool,
    typer.Option(
        "--fail-on-miss",
        help="Exit with code 1 when a deadline is missed (or a bound is infinite where a deadline "
        "exists); for CI gates.",
    ),
]


@app.callback()
def _options(
    limit: Annotated[
        list[str] | None,
        typer.Option(
            "--limit",
            metavar="NAME=VALUE",
            help="Raise (or lower) a limit on what a description may cost before it is validated: "
            "size, depth, values, aliases, nodes, flows, paths, errors (see docs/MODEL.md). "
            "Also RTNETLAB_LIMITS=NAME=VALUE,...; may follow the command.",
        ),
    ] = None,
) -> None:
    formats.set_limits(limit or [])


def _hoist_limits(argv: list[str]) -> list[str]:
    """`--limit` is an option of rtnetlab itself: accepted after the command too, moved before it."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            rest.extend(argv[i:])
            break
        if a == "--limit" and i + 1 < len(argv):
            front += argv[i : i + 2]
            i += 2
            continue
        (front if a.startswith("--limit=") else rest).append(a)
        i += 1
    return front + rest


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, allow_nan=False, default=_json_default) + "\n")


def _json_default(x: Any) -> Any:
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def _warn(net: model.Network) -> None:
    for w in net.warnings:
        err.print(w, markup=False)


def _wrote(*paths: Path, detail: str = "") -> None:
    """Says where each file went (and which directories were created for them)."""
    for d in outfiles.created_directories:
        out.print(f"created directory {d}", markup=False)
    outfiles.created_directories.clear()
    for k, path in enumerate(paths):
        out.print(f"wrote {path}" + (f" ({detail})" if detail and k == len(paths) - 1 else ""), markup=False)


def _error_entry(text: str) -> dict:
    """One problem as the JSON error shape: the place (text before the first ': '), the rule."""
    text = text.removeprefix("warning: ")
    place, sep, message = text.partition(": ")
    if not sep or not place.strip() or "\n" in place:
        return {"place": None, "message": text}
    return {"place": place, "message": message}


def error_document(errors: list[str], warnings: list[str] | None = None, **extra: Any) -> dict:
    """The JSON every command prints for errors with --json (warnings as in successful outputs)."""
    return {**extra, "errors": [_error_entry(e) for e in errors], "warnings": list(warnings or [])}


def _check_outputs(outputs: dict[str, Path | None], inputs: list[Path | None]) -> None:
    outfiles.check({k: v for k, v in outputs.items() if v is not None}, [p for p in inputs if p is not None])


DESCRIPTION_SUFFIXES = (".yaml", ".yml", ".json", ".xml")


def _check_description_output(option: str, path: Path | None) -> None:
    """A description is written by its extension: checked before any work."""
    if path is not None and path.suffix.lower() not in DESCRIPTION_SUFFIXES:
        where = f"{option}: {path}" if option else str(path)
        raise UserError(f"{where}: unknown output type '{path.suffix}', expected .yaml, .yml, .json or .xml")


@app.command()
def validate(file: FileArg, as_json: JsonOpt = False) -> None:
    """Check a network description; report every problem, one line each."""
    try:
        net = model.load_file(file)
    except UserError as e:
        if as_json:
            errors, warnings = (e.lines, e.warnings) if isinstance(e, ModelError) else ([str(e)], [])
            emit_json(error_document(errors, warnings, file=str(file), valid=False))
            raise typer.Exit(EXIT_USER) from None
        raise
    info = net.info()
    if as_json:
        emit_json(
            {
                "file": str(file),
                "valid": True,
                "errors": [],
                "warnings": net.warnings,
                "counts": info["counts"],
            }
        )
        return
    _warn(net)
    c = info["counts"]
    parts = []
    if c["end_systems"] or c["links"] or not c["tasks"] + c["messages"] + c["servers"]:
        parts.append(
            f"{c['end_systems']} end systems, {c['switches']} switches, {c['links']} links, "
            f"{c['flows']} flows ({c['virtual_links']} virtual links), {c['planes']} plane(s)"
        )
    if c["processors"] or c["buses"]:
        parts.append(_fixed_priority_counts(c))
    out.print(f"{file}: valid: {'; '.join(parts)}", markup=False)


def _fixed_priority_counts(c: dict) -> str:
    return (
        f"{c['processors']} processors, {c['buses']} buses, {c['tasks']} tasks, "
        f"{c['messages']} messages, {c['servers']} servers, {c['chains']} chains"
    )


@app.command()
def info(file: FileArg, as_json: JsonOpt = False) -> None:
    """Counts and the load of every egress port (overloaded ports flagged)."""
    net = model.load_file(file)
    data = net.info()
    if as_json:
        data["warnings"] = net.warnings
        emit_json(data)
        return
    _warn(net)
    c = data["counts"]
    out.print(f"[bold]{data['name']}[/bold]  planes: {', '.join(data['planes'])}")
    if c["end_systems"] or c["links"]:
        out.print(
            f"{c['end_systems']} end systems, {c['switches']} switches, {c['links']} links "
            f"({c['egress_ports']} egress ports), {c['flows']} flows ({c['virtual_links']} virtual links, "
            f"{c['routes']} routes)"
        )
    table = _table(
        "Egress ports",
        ["port", "to", "plane", "scheduler", "flows", "load (Mb/s)", "rate (Mb/s)", "utilisation"],
        left=("port", "to", "plane", "scheduler"),
    )
    for p in sorted(data["ports"], key=lambda p: -p["utilisation"]):
        util = f"{100 * p['utilisation']:.1f}%"
        style = None
        if p["overloaded"]:
            util += " OVERLOADED"
            style = "bold red"
        table.add_row(
            f"{p['node']}:{p['port']}",
            p["peer"],
            p["plane"],
            p["scheduler"],
            str(p["flows"]),
            f"{p['load_bps'] / 1e6:.3f}",
            f"{p['rate_bps'] / 1e6:g}",
            util,
            style=style,
        )
    if data["ports"]:
        out.print(table)
    if data["resources"]:
        out.print(_fixed_priority_counts(c))
        res = _table(
            "Processors and buses", ["resource", "kind", "items", "utilisation"], left=("resource", "kind")
        )
        for r in sorted(data["resources"], key=lambda r: -r["utilisation"]):
            util = f"{100 * r['utilisation']:.1f}%" + (" OVERLOADED" if r["overloaded"] else "")
            style = "bold red" if r["overloaded"] else None
            res.add_row(r["name"], r["kind"], str(r["items"]), util, style=style)
        out.print(res)
    if data["overloaded_ports"]:
        err.print(
            f"{data['overloaded_ports']} egress port(s) overloaded: their bounds are infinite",
            style="bold red",
        )


def _table(title: str, columns: list[str], left: tuple[str, ...]) -> Table:
    """A results table: text columns (`left`) aligned left, numbers right."""
    table = Table(title=title, title_justify="left")
    for col in columns:
        table.add_column(col, justify="left" if col in left else "right")
    return table


def _fmt_us(x: float | None) -> str:
    return "-" if x is None else f"{x:,.3f}".rstrip("0").rstrip(".")


#: `analyze -o FILE` without --format: the format by the file's extension.
FORMAT_BY_EXTENSION = {".json": "json", ".csv": "csv", ".xml": "wopanet-res"}
ANALYZE_FORMATS = ("table", "json", "csv", "wopanet-res")


def _analyze_format(output_format: str | None, out_path: Path | None, as_json: bool) -> str:
    """The format of what `analyze` writes: --format, else the extension of -o, else (on the
    terminal) a table, or JSON with --json."""
    if output_format is not None and output_format not in ANALYZE_FORMATS:
        raise UserError(f"--format: expected {', '.join(ANALYZE_FORMATS)}, got '{output_format}'")
    if out_path is None:
        fmt = output_format or ("json" if as_json else "table")
        if as_json and fmt != "json":
            raise UserError(f"--json: prints JSON; --format {fmt} needs -o FILE to go with it")
        return fmt
    if output_format == "table":
        raise UserError("--format table: the table is for the terminal; -o writes json, csv or wopanet-res")
    if output_format is not None:
        return output_format
    fmt = FORMAT_BY_EXTENSION.get(out_path.suffix.lower())
    if fmt is None:
        raise UserError(
            f"-o: {out_path}: unknown output type '{out_path.suffix}', expected .json, .csv or .xml "
            "(WOPANet results), or give --format"
        )
    return fmt


def _analysis_text(fmt: str, net: model.Network, report: dict) -> str:
    if fmt == "json":
        return json.dumps({**report, "warnings": net.warnings}, indent=2, allow_nan=False) + "\n"
    if fmt == "csv":
        from rtnetlab import results

        if report.get("fixed_priority") and report["flows"]:
            raise UserError("--format csv: holds the network's end-to-end bounds only; this description "
                            "also has a fixed-priority part: use json")
        if report.get("fixed_priority"):
            return results.response_times_csv(report["fixed_priority"])
        return results.flows_csv(report)
    from rtnetlab import results
    from rtnetlab.io import wopanet

    return wopanet.results_dumps(net.spec, report, net.info(), results.Reasons.of(net, report))


@app.command()
def analyze(
    file: FileArg,
    method: Annotated[str, typer.Option("--method", "-m", help="best, tfa, sfa or afdx-naive")] = "best",
    grouping: Annotated[
        bool, typer.Option("--grouping", help="Serialise flows sharing an input link.")
    ] = False,
    blind: Annotated[
        bool, typer.Option("--blind", help="Blind (arbitrary) instead of FIFO multiplexing.")
    ] = False,
    output_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="table, json, csv or wopanet-res (default: table on the terminal; with -o, by the "
            "file's extension: .json, .csv, .xml)",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="Write the results to this file (format by extension)."),
    ] = None,
    compare: Annotated[
        Path | None,
        typer.Option("--compare", help="A WOPANet results file (_res.xml) to set beside the bounds."),
    ] = None,
    fail_on_miss: FailOnMissOpt = False,
    rows: RowsOpt = str(DEFAULT_ROWS),
    as_json: JsonOpt = False,
) -> None:
    """Worst-case delay, jitter and backlog bounds of every flow and egress port."""
    from rtnetlab import results

    limit = parse_limit(rows)
    fmt = _analyze_format(output_format, output, as_json)
    _check_outputs({"-o": output}, [file, compare])
    net = model.load_file(file)
    report = net.analyze(method, grouping, blind)
    reference = None
    if compare is not None:
        from rtnetlab.io import wopanet

        reference = wopanet.compare_results(compare, net, report)
    verdict = results.verdict(report)
    if output is not None:
        formats.atomic_write(output, _analysis_text(fmt, net, report))
    if as_json:
        if output is None:
            doc = {**report, "warnings": net.warnings + (reference["warnings"] if reference else [])}
            if reference:
                doc["comparison"] = reference
        else:
            doc = {"files": {"output": str(output)}, "format": fmt, "method": report["method"],
                   "verdict": verdict,
                   "warnings": net.warnings + (reference["warnings"] if reference else [])}
            if reference:
                doc["comparison"] = reference
        emit_json(doc)
    elif output is None and fmt != "table":
        sys.stdout.write(_analysis_text(fmt, net, report))
        _warn(net)
    else:
        _warn(net)
        if output is None:
            _print_report(report, limit, results.Reasons.of(net, report))
        else:
            _wrote(output, detail=fmt)
            out.print(_verdict_line(verdict), markup=False)
        if reference:
            _print_comparison(reference, limit)
    if fail_on_miss and verdict["failed"]:
        if not as_json:
            err.print(results.failure_line(verdict["failures"]), style="bold red", markup=False)
        raise typer.Exit(EXIT_VERDICT)


def _print_comparison(ref: dict, limit: int | None) -> None:
    for w in ref["warnings"]:
        err.print(w, markup=False)
    t = ResultTable(
        f"Beside {ref['file']} (worst plane)",
        ["flow", "destination", "bound (us)", "reference (us)", "reference - bound (us)", "note"],
        left=("flow", "destination", "note"),
    )

    def key(r: dict) -> tuple:
        return (r["reference_is_bound"], r["in_network"] and r["in_reference"])

    for r in sorted(ref["rows"], key=key):
        b, x = r["bound_us"], r["reference_delay_us"]
        if not r["in_network"]:
            note = "not in the network"
        elif not r["in_reference"]:
            note = "not in the reference"
        elif not r["reference_is_bound"]:
            note = f"crosses overloaded {', '.join(r['crosses_overloaded'])}: not a bound"
        else:
            note = ""
        t.add_row(
            r["flow"],
            r["destination"],
            "unbounded" if b is None and r["in_network"] else _fmt_us(b),
            "Infinity" if x is None and r["in_reference"] else _fmt_us(x),
            "-" if b is None or x is None else _fmt_us(x - b),
            note,
            style=None if r["reference_is_bound"] else "bold red",
        )
    t.print(out, limit, "(flow, destination) rows")


def _verdict_line(v: dict) -> str:
    if not v["rows"]:
        return f"{len(v['failures'])} deadline failure(s)"
    return (f"{v['rows']} bounds: {v['ok']} meet their deadline (or have none), {v['miss']} miss, "
            f"{v['unbounded']} unbounded")


def _status(status: str, reason: str | None) -> str:
    """A status cell: the word, and for an infinite bound its reason once ("unbounded: ...")."""
    from rtnetlab.results import clean_reason

    reason = clean_reason(reason)
    return f"{status}: {reason}" if reason else status


def _print_report(report: dict, limit: int | None = None, reasons: Any = None) -> None:
    if report["flows"] or report["ports"]:
        _print_network_report(report, limit, reasons)
    if report.get("fixed_priority"):
        _print_response_times(report["fixed_priority"])
    for n in report.get("notes", []):
        out.print(f"note: {n}", markup=False)


def _print_response_times(fp: dict) -> None:
    items = _table(
        "Response times (fixed priority)",
        ["item", "kind", "on", "priority", "C (us)", "T (us)", "D (us)", "R (us)", "slack (us)", "status",
         "test"],
        left=("item", "kind", "on", "status", "test"),
    )
    order = {"unbounded": 0, "unassigned": 0, "miss": 1, "ok": 2, "served": 3}
    for i in sorted(fp["items"], key=lambda i: (order[i["status"]], i["resource"], i["priority"] or 0)):
        style = {"unbounded": "bold red", "unassigned": "bold red", "miss": "red"}.get(i["status"])
        items.add_row(
            i["name"],
            i["kind"],
            i["resource"],
            "-" if i["priority"] is None else str(i["priority"]),
            _fmt_us(i["cost_us"]),
            _fmt_us(i["period_us"]),
            _fmt_us(i["deadline_us"]),
            "-" if i["response_us"] is None else _fmt_us(i["response_us"]),
            "-" if i["slack_us"] is None else _fmt_us(i["slack_us"]),
            _status(i["status"], i.get("reason")),
            i["analysis"],
            style=style,
        )
    out.print(items)
    if fp["chains"]:
        chains = _table(
            "Chains (from the external event)",
            ["chain", "steps (completion, us)", "R (us)", "D (us)", "slack (us)", "status"],
            left=("chain", "steps (completion, us)", "status"),
        )
        for c in fp["chains"]:
            steps = " -> ".join(f"{s['name']} ({_fmt_opt_us(s['response_us'])})" for s in c["steps"])
            chains.add_row(
                c["name"],
                steps,
                "-" if c["response_us"] is None else _fmt_us(c["response_us"]),
                _fmt_us(c["deadline_us"]),
                "-" if c["slack_us"] is None else _fmt_us(c["slack_us"]),
                _status(c["status"], c.get("reason")),
                style={"unbounded": "bold red", "miss": "red"}.get(c["status"]),
            )
        out.print(chains)
    for n in fp.get("notes", []):
        out.print(f"note: {n}", markup=False)


def _fmt_opt_us(v: float | None) -> str:
    return "-" if v is None else _fmt_us(v)


def _print_network_report(report: dict, limit: int | None, reasons: Any = None) -> None:
    flows = ResultTable(
        f"End-to-end bounds ({report['method']})",
        [
            "flow",
            "destination",
            "plane",
            "delay (us)",
            "jitter (us)",
            "deadline (us)",
            "slack (us)",
            "status",
        ],
        left=("flow", "destination", "plane", "status"),
    )
    order = {"unbounded": 0, "miss": 1, "ok": 2}

    def critical(f: dict) -> tuple:
        # Unbounded, then missed, then the smallest slack, then (no deadline) the largest delay.
        slack = f["slack_us"]
        return (order[f["status"]], slack is None, slack or 0.0, -(f["delay_us"] or 0.0))

    for f in sorted(report["flows"], key=critical):
        style = {"unbounded": "bold red", "miss": "red"}.get(f["status"])
        reason = reasons.flow(f) if reasons is not None and f["status"] == "unbounded" else f.get("reason")
        flows.add_row(
            f["flow"],
            f["destination"],
            f["plane"],
            _fmt_us(f["delay_us"]),
            _fmt_us(f["jitter_us"]),
            _fmt_us(f["deadline_us"]),
            _fmt_us(f["slack_us"]),
            _status(f["status"], reason),
            style=style,
        )
    flows.print(out, limit, "(flow, destination, plane) rows")
    ports = ResultTable(
        "Egress ports",
        ["port", "plane", "load", "delay (us)", "backlog (B)", "buffer (B)", "status"],
        left=("port", "plane", "status"),
    )
    def overflows(p: dict) -> bool:
        buffer = p.get("buffer_bytes")
        return buffer is not None and (p["backlog_bytes"] is None or p["backlog_bytes"] > buffer)

    # Unbounded or overflowing first, then the most loaded.
    loaded = [p for p in report["ports"] if p["load"] > 0]
    for p in sorted(loaded, key=lambda p: (not (p["status"] == "unbounded" or overflows(p)), -p["load"])):
        buffer, over = p.get("buffer_bytes"), overflows(p)
        reason = p.get("reason")
        if reasons is not None and p["status"] == "unbounded":
            # The port's own reason without repeating its name.
            reason = reasons.port(p).removeprefix(f"{p['node']}:{p['port']}").lstrip(": ")
        status = _status(p["status"], reason) + (" BUFFER OVERFLOW" if over else "")
        ports.add_row(
            f"{p['node']}:{p['port']}",
            p["plane"],
            f"{100 * p['load']:.1f}%",
            _fmt_us(p["delay_us"]),
            "-" if p["backlog_bytes"] is None else f"{p['backlog_bytes']:,.0f}",
            "-" if buffer is None else f"{buffer:,.0f}",
            status,
            style="bold red" if p["status"] == "unbounded" or over else None,
        )
    ports.print(out, limit, "ports")
    if report.get("redundancy"):
        red = ResultTable(
            "Redundancy management (first valid copy wins)",
            [
                "flow",
                "destination",
                "both planes (us)",
                "one plane (us)",
                "arrival skew (us)",
                "SkewMax (us)",
                "Cor. 7 as printed (us)",
            ],
            left=("flow", "destination"),
        )
        # Copies that may arrive further apart than SkewMax first, then the largest delay.
        def bound(x: float | None) -> str:
            return "unbounded" if x is None else _fmt_us(x)

        for r in sorted(report["redundancy"], key=lambda r: (r["skew_ok"], -(r["delay_us"] or float("inf")))):
            red.add_row(
                r["flow"],
                r["destination"],
                bound(r["delay_us"]),
                bound(r["single_plane_delay_us"]),
                bound(r["arrival_skew_us"]),
                _fmt_us(r["skew_max_us"]),
                bound(r["paper_cor7_us"]),
                style=None if r["skew_ok"] else "red",
            )
        red.print(out, limit, "(flow, destination) rows")


def _quantity(kind: str, text: str, option: str) -> float:
    from rtnetlab import _core

    try:
        return _core.parse_quantity(kind, text)
    except ValueError as e:
        raise UserError(f"{option}: {e}") from None


def _memory_limit(text: str) -> int:
    limit = _quantity("size", text, "--memory-limit") / 8
    if not 1 <= limit < 2**64:
        raise UserError(f"--memory-limit: expected a size such as 16000MB, got {text}")
    return int(limit)


@app.command()
def simulate(
    file: FileArg,
    duration: Annotated[str, typer.Option("--duration", help="Simulated time, e.g. 10s or 500ms.")] = "1s",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random generator.")] = 1,
    release: Annotated[
        str, typer.Option("--release", help="random or synchronized (worst case).")
    ] = "random",
    sizes: Annotated[
        str, typer.Option("--sizes", help="Frame sizes: uniform, max, min or trace.")
    ] = "uniform",
    size_trace: Annotated[
        Path | None, typer.Option("--size-trace", help="With --sizes trace: a file of frame sizes (bytes).")
    ] = None,
    workload: Annotated[
        str, typer.Option("--workload", help="periodic, cbr, poisson or pareto.")
    ] = "periodic",
    load: Annotated[
        float | None,
        typer.Option("--load", help="CBR/Poisson/Pareto rate vs the contract (default 1 for cbr, else 0.5)"),
    ] = None,
    retransmit: Annotated[
        bool,
        typer.Option(
            "--retransmit",
            help="Resend, once, a frame not delivered at every destination within its timeout "
            "(its flow's deadline, or --retransmit-timeout).",
        ),
    ] = False,
    retransmit_timeout: Annotated[
        str | None,
        typer.Option(
            "--retransmit-timeout", help="Timeout of every flow for --retransmit (implies it), e.g. 4ms."
        ),
    ] = None,
    dedup: Annotated[
        str | None, typer.Option("--dedup", help="Bloom-filter deduplication: first_copy or hold_until_twin.")
    ] = None,
    dedup_counters: Annotated[
        int, typer.Option("--dedup-counters", min=1, help="Bloom filter counters M.")
    ] = 1280,
    trace: Annotated[Path | None, typer.Option("--trace", help="Write a pcapng trace here.")] = None,
    trace_limit: Annotated[
        int | None,
        typer.Option(
            "--trace-limit",
            min=1,
            help="With --trace: the trace keeps the first N frame transmissions (default 1000000: at "
            "most 1.6 GB, about 0.35 GB for AFDX frame mixes); a warning says when it cut the trace.",
        ),
    ] = None,
    histograms: Annotated[
        Path | None, typer.Option("--histograms", help="Write latency histograms (CSV).")
    ] = None,
    with_bounds: Annotated[
        bool,
        typer.Option(
            "--bounds/--no-bounds",
            help="Set the best bound beside each simulated maximum (one analysis: about 1 s for 5000 VLs).",
        ),
    ] = True,
    fail_on_miss: Annotated[
        bool,
        typer.Option(
            "--fail-on-miss",
            help="Exit with code 1 when a simulated frame arrives after its deadline (or above its "
            "bound); for CI gates.",
        ),
    ] = False,
    memory_limit: Annotated[
        str | None,
        typer.Option(
            "--memory-limit", help="Run even if estimated to need this much memory (default 8192MiB)."
        ),
    ] = None,
    scenario: Annotated[str | None, typer.Option("--scenario", help="Replay a scenario (FILE or FILE#ID of "
                        "`worst-case -o`): its duration, releases, frame sizes and tie order.")] = None,
    rows: RowsOpt = str(DEFAULT_ROWS),
    as_json: JsonOpt = False,
) -> None:
    """Simulate the network packet by packet; per-flow latencies beside their bounds, per-port
    backlog. Ctrl-C stops early and still reports (exit 130)."""
    from rtnetlab import simulate as sim_mod

    limit = parse_limit(rows)
    seconds = _quantity("duration", duration, "--duration")
    if seconds <= 0:
        raise UserError(f"--duration: must be positive, got {duration}")
    for name, value, allowed in [
        ("--release", release, ("random", "synchronized")),
        ("--sizes", sizes, ("uniform", "max", "min", "trace")),
        ("--workload", workload, ("periodic", "cbr", "poisson", "pareto")),
    ]:
        if value not in allowed:
            raise UserError(f"{name}: expected one of {', '.join(allowed)}, got '{value}'")
    trace_sizes: list[int] = []
    if sizes == "trace":
        if size_trace is None:
            raise UserError("--sizes trace: give the frame sizes with --size-trace FILE")
        trace_sizes = _read_sizes(size_trace)
    if dedup is not None and dedup not in ("first_copy", "hold_until_twin"):
        raise UserError(f"--dedup: expected first_copy or hold_until_twin, got '{dedup}'")
    if load is None:
        load = 1.0 if workload == "cbr" else 0.5
    if workload != "periodic" and not load > 0:
        raise UserError(f"--load: must be positive, got {load}")
    timeout_ns = 0
    if retransmit_timeout is not None:
        timeout = _quantity("duration", retransmit_timeout, "--retransmit-timeout")
        if not timeout >= 1e-9:
            raise UserError(f"--retransmit-timeout: must be at least 1ns, got {retransmit_timeout}")
        retransmit, timeout_ns = True, round(timeout * 1e9)
    if trace_limit is not None and trace is None:
        raise UserError("--trace-limit: give the trace file with --trace FILE")
    # Before the run: an unwritable output would otherwise only show once it is over.
    _check_outputs({"--trace": trace, "--histograms": histograms}, [file, size_trace])
    work: dict = {"kind": "periodic"}
    if workload in ("cbr", "poisson"):
        work = {"kind": workload, "load": load}
    elif workload == "pareto":
        work = {"kind": "pareto_bursts", "load": load, "alpha": 1.5, "mean_frames": 4.0}
    net = model.load_file(file)
    if retransmit and not timeout_ns and not any(f.get("deadline") for f in net.spec.get("flows", [])):
        raise UserError("--retransmit: no flow has a deadline to time out on; give --retransmit-timeout")
    config = {
        "duration_ns": round(seconds * 1e9),
        "seed": seed,
        "release": release,
        "frame_sizes": sizes,
        "workload": work,
        "retransmit": retransmit,
        "retransmit_timeout_ns": timeout_ns,
        "trace_limit": (trace_limit or sim_mod.DEFAULT_TRACE_LIMIT) if trace else 0,
        "dedup": {"counters": dedup_counters, "mode": dedup} if dedup else None,
        "size_trace": trace_sizes,
        "memory_limit_bytes": 0 if memory_limit is None else _memory_limit(memory_limit),
    }
    if scenario is not None:
        net, config = replay_setup(net, config, scenario)
    counts = net.info()["counts"]
    if net.info()["kind"] == "server_graph":
        raise UserError(f"{file}: a server graph has no frames and no links to simulate; "
                        "analyse it with `rtnetlab analyze`")
    if counts["end_systems"]:
        report = sim_mod.run(net, config, progress=not as_json and sys.stderr.isatty(), trace=trace)
    else:
        if trace or histograms:
            raise UserError("--trace/--histograms: this description has no switched network to trace")
        report = {"flows": [], "ports": [], "stats": {"events": 0, "frame_hops": 0, "wall_s": 0.0},
                  "interrupted": False}
    if counts["buses"] and not report["interrupted"]:
        bus_config = {"duration_ns": config["duration_ns"], "seed": seed,
                      "random_offsets": release == "random"}
        try:
            report["buses"] = json.loads(net.handle.simulate_buses_json(json.dumps(bus_config)))
        except ValueError as e:
            raise UserError(f"{file}: {e}") from None
    written: list[Path] = []
    if trace is not None and report["stats"].get("trace_written"):
        written.append(trace)
    if histograms:
        try:
            sim_mod.write_histograms(report, histograms)
            written.append(histograms)
        except KeyboardInterrupt as e:  # a second Ctrl-C: the measurements are still reported
            report["interrupted"] = True
            report.setdefault("interrupted_by", sim_mod.signal_name(e))
    for f in report["flows"]:
        f.pop("histogram", None)
    report["bounds"] = sim_mod.attach_bounds(net, report, config, analyze=with_bounds)
    unwritten = histograms if histograms is not None and histograms not in written else None
    warnings = list(net.warnings) + _sim_warnings(report, trace, unwritten)
    if as_json:
        report["warnings"] = warnings
        emit_json(report)
    else:
        _warn(net)
        if report["flows"]:
            _print_sim(report, limit)
        if report.get("buses"):
            _print_bus_sim(report["buses"])
        if written:
            _wrote(*written)
        for w in warnings[len(net.warnings):]:
            err.print(w, style="yellow", markup=False)
        if report["bounds"]["above_bound"]:
            err.print(_soundness_line(report["bounds"]["above_bound"]), style="bold white on red",
                      markup=False)
    failures = _sim_failures(report) if fail_on_miss else []
    if failures and not as_json:
        from rtnetlab.results import failure_line

        err.print(failure_line(failures, "simulated deadline or bound"), style="bold red", markup=False)
    if report["interrupted"]:
        raise typer.Exit(EXIT_SIGTERM if report.get("interrupted_by") == "SIGTERM" else EXIT_SIGINT)
    if failures:
        raise typer.Exit(EXIT_VERDICT)


def _sim_warnings(report: dict, trace: Path | None, histograms: Path | None) -> list[str]:
    """Warnings of a simulation (`histograms`: a histogram file requested but not written)."""
    from rtnetlab.simulate import NO_BOUNDS

    st = report["stats"]
    out_w = []
    if report["interrupted"]:
        what = "SIGTERM" if report.get("interrupted_by") == "SIGTERM" else "Ctrl-C"
        simulated = st.get("simulated_us", 0) / 1e6
        out_w.append(f"warning: interrupted ({what}): results cover {simulated:g} s simulated")
    if trace is not None:
        if not st.get("trace_written"):
            out_w.append(f"warning: --trace: {trace}: not written (interrupted while writing it; "
                         "nothing left behind)")
        elif st["trace_truncated"]:
            out_w.append(
                f"warning: --trace: {trace}: first {st['trace_frames']:,} of {st['frame_hops']:,} frame "
                f"transmissions written (--trace-limit {st['trace_limit']:,}; raise it to keep more)"
            )
    if histograms is not None:
        out_w.append(f"warning: --histograms: {histograms}: not written (interrupted while writing it)")
    b = report["bounds"]
    if not b["applies"] and report["flows"] and b["reason"] != NO_BOUNDS:
        out_w.append(f"warning: bounds: not set beside the measurements: {b['reason']}")
    if b["above_bound"]:
        out_w.append("warning: " + _soundness_line(b["above_bound"]))
    return out_w


def _soundness_line(rows: list[dict]) -> str:
    first = rows[0]
    if first.get("bus"):
        where = first["violation"]
    else:
        where = (f"{first['flow']} -> {first['destination']} ({first['plane']}): simulated "
                 f"{first['max_us']:,.3f} us > bound {first['bound_us']:,.3f} us")
    return (f"SIMULATED MAXIMUM ABOVE ITS BOUND in {len(rows)} row(s), first {where}: a bound must never "
            "be exceeded; this is a bug in rtnetlab, please report it with the description and --seed")


def _sim_failures(report: dict) -> list[str]:
    failures = []
    for r in report["bounds"]["late"]:
        if "message" in r:
            failures.append(f"message {r['message']}: simulated {r['max_us']:,.1f} us > deadline "
                            f"{r['deadline_us']:,.1f} us")
        else:
            failures.append(f"{r['flow']} -> {r['destination']} ({r['plane']}): simulated "
                            f"{r['max_us']:,.1f} us > deadline {r['deadline_us']:,.1f} us")
    for r in report["bounds"]["above_bound"]:
        where = r["violation"] if r.get("bus") else f"{r['flow']} -> {r['destination']} ({r['plane']})"
        failures.append(f"above its bound: {where}")
    return failures


def _print_bus_sim(buses: dict) -> None:
    for b in buses["buses"]:
        t = _table(
            f"Bus {b['bus']} (simulated, utilisation {100 * b['utilisation']:.1f}%)",
            ["message", "priority", "count", "min (us)", "mean (us)", "max (us)", "bound (us)",
             "max / bound", "deadline (us)"],
            left=("message",),
        )
        for m in b["messages"]:
            ratio = "-" if not (m["bound_us"] and m["max_us"]) else f"{m['max_us'] / m['bound_us']:.3f}"
            name = m["name"] + (f" (via {m['served_by']})" if m["served_by"] else "")
            prio = "-" if m["priority"] is None else str(m["priority"])
            deadline = _fmt_opt_us(m.get("deadline_us")) + (" LATE" if m.get("late") else "")
            t.add_row(name, prio, str(m["count"]), _fmt_opt_us(m["min_us"]), _fmt_opt_us(m["mean_us"]),
                      _fmt_opt_us(m["max_us"]), _fmt_opt_us(m["bound_us"]), ratio, deadline,
                      style="red" if m.get("late") else None)
        out.print(t)
        for s in b["servers"]:
            out.print(
                f"server {s['name']}: {s['normal_sends']} packets at normal priority, "
                f"{s['background_sends']} in background, {s['replenishments']} replenishments, "
                f"{s['timer_expiries']} timer expiries",
                markup=False,
            )
    for v in buses["violations"]:
        err.print(f"BOUND VIOLATED: {v}", style="bold red")


def _read_sizes(path: Path) -> list[int]:
    """Frame sizes in bytes, one per line (or separated by commas/spaces); '#' starts a comment."""
    try:
        text = path.read_text()
    except OSError as e:
        raise UserError(f"{path}: cannot be read ({e.strerror})") from None
    sizes = []
    for n, line in enumerate(text.splitlines(), 1):
        for word in line.split("#")[0].replace(",", " ").split():
            if not word.isdigit() or not 0 < int(word) < 65536:
                raise UserError(f"{path}:{n}: expected frame sizes in bytes, got '{word}'")
            sizes.append(int(word))
    if not sizes:
        raise UserError(f"{path}: no frame sizes")
    return sizes


def _print_sim(report: dict, limit: int | None) -> None:
    from rtnetlab.simulate import NO_BOUNDS, ratio_text

    bounds = report.get("bounds") or {"applies": False}
    with_bounds = bounds["applies"]
    with_deadlines = any(f.get("deadline_us") is not None for f in report["flows"])
    cols = ["flow", "destination", "plane", "count", "min", "mean", "p50", "p99", "p99.9", "max"]
    if with_bounds:
        cols += [f"bound ({bounds['method']})", "max / bound"]
    if with_deadlines:
        cols += ["deadline"]
    cols += ["jitter", "losses", "IC discards", "retx"]
    flows = ResultTable("Simulated latency (us)", cols, left=("flow", "destination", "plane"))

    # Above its bound (a bug), late, then losses, integrity discards and retransmissions, then the
    # closest to its bound (or the largest latency).
    def trouble(f: dict) -> int:
        return f["losses"] + f["integrity_discards"] + f["retransmissions"]

    def order(f: dict) -> tuple:
        closeness = f.get("max_over_bound")
        if closeness is None:
            closeness = math.inf if with_bounds and f.get("bound_us") is None else 0.0
        return (not f.get("above_bound"), not f.get("late"), -trouble(f), -closeness, -f["max_us"])

    unbounded: dict[str, int] = {}
    for f in sorted(report["flows"], key=order):
        cells = [f["flow"], f["destination"], f["plane"], str(f["count"])]
        cells += [f"{f[k]:,.1f}" for k in ("min_us", "mean_us", "p50_us", "p99_us", "p999_us", "max_us")]
        if with_bounds:
            if f["bound_us"] is None:
                cells += ["unbounded", "-"]
                unbounded[f.get("bound_reason") or "no finite bound"] = (
                    unbounded.get(f.get("bound_reason") or "no finite bound", 0) + 1)
            else:
                ratio = ratio_text(f["max_over_bound"])
                cells += [f"{f['bound_us']:,.1f}", ratio + (" ABOVE BOUND" if f["above_bound"] else "")]
        if with_deadlines:
            deadline = "-" if f["deadline_us"] is None else f"{f['deadline_us']:,.1f}"
            cells += [deadline + (" LATE" if f["late"] else "")]
        cells += [f"{f['jitter_us']:,.1f}", str(f["losses"]), str(f["integrity_discards"]),
                  str(f["retransmissions"])]
        style = "bold white on red" if f.get("above_bound") else "red" if f.get("late") else None
        flows.add_row(*cells, style=style)
    flows.print(out, limit, "(flow, destination, plane) rows")
    for reason, n in unbounded.items():
        out.print(f"bound: unbounded for {n} row(s): {reason}", markup=False)
    if not with_bounds and bounds.get("reason") and bounds["reason"] != NO_BOUNDS:
        out.print(f"bounds: not shown: {bounds['reason']}", markup=False)
    ports = ResultTable(
        "Egress ports",
        ["port", "plane", "frames", "utilisation", "max backlog (B)", "drops", "policed"],
        left=("port", "plane"),
    )
    # Drops and policing first, then the busiest.
    for p in sorted(report["ports"], key=lambda p: (-(p["drops"] + p["policed"]), -p["utilisation"])):
        if p["frames"]:
            ports.add_row(
                f"{p['node']}:{p['port']}",
                p["plane"],
                str(p["frames"]),
                f"{100 * p['utilisation']:.1f}%",
                f"{p['max_backlog_bytes']:,.0f}",
                str(p["drops"]),
                str(p["policed"]),
                style="red" if p["drops"] or p["policed"] else None,
            )
    ports.print(out, limit, "ports")
    if report.get("dedup"):
        dd = _table(
            "Bloom-filter deduplication (seed 000)",
            [
                "destination",
                "mode",
                "M",
                "q",
                "arrivals",
                "delivered",
                "duplicates",
                "false pos.",
                "measured FP",
                "Theorem 8",
                "saturations",
            ],
            left=("destination", "mode"),
        )
        for d in report["dedup"]:
            dd.add_row(
                d["destination"],
                d["mode"],
                str(d["counters"]),
                str(d["hashes"]),
                str(d["arrivals"]),
                str(d["delivered"]),
                str(d["duplicates_dropped"]),
                str(d["false_positives"]),
                f"{d['measured_fp_rate']:.3g}",
                f"{d['theorem8_fp']:.3g}",
                str(d["saturations"]),
            )
        out.print(dd)
    s = report["stats"]
    rate = s["frame_hops"] / s["wall_s"] / 1e6 if s["wall_s"] > 0 else float("nan")
    out.print(
        f"{s['simulated_us'] / 1e6:g} s simulated, {s['events']:,} events, {s['frame_hops']:,} frame-hops "
        f"in {s['wall_s']:.2f} s ({rate:.1f} M frame-hops/s)"
    )


@app.command()
def convert(
    src: Annotated[Path, typer.Argument(help="Input (.yaml, .yml, .json or WOPANet .xml)")],
    dst: Annotated[Path, typer.Argument(help="Output (.yaml, .yml, .json or WOPANet .xml)")],
    as_json: JsonOpt = False,
) -> None:
    """Convert between YAML, JSON and WOPANet XML; the input is validated first."""
    _check_description_output("", dst)
    _check_outputs({"": dst}, [src])
    net = model.load_file(src)
    formats.write(net.spec, dst)
    if as_json:
        emit_json({"from": str(src), "to": str(dst), "warnings": net.warnings})
        return
    _warn(net)
    _wrote(dst)


@app.command()
def schema(
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to this file.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the JSON Schema of the description format (generated from the engine's model)."""
    text = json.dumps(model.schema(), indent=2) + "\n"
    if output:
        _check_outputs({"-o": output}, [])
        formats.atomic_write(output, text)
        if as_json:
            emit_json({"files": {"output": str(output)}})
        else:
            _wrote(output)
        return
    sys.stdout.write(text)


@generate_app.command("afdx")
def generate_afdx(
    vls: Annotated[int, typer.Option("--vls", min=1, help="Number of virtual links.")] = 100,
    switches: Annotated[int, typer.Option("--switches", min=1, help="Switches per plane.")] = 4,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random generator.")] = 1,
    planes: Annotated[int, typer.Option("--planes", min=1, max=2, help="1 or 2 redundant planes.")] = 2,
    end_systems: Annotated[
        int | None, typer.Option("--end-systems", min=2, help="End systems (default: enough for the VLs).")
    ] = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to this file.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """A realistic synthetic AFDX network (BAG and frame mix after seed 000 Table 1)."""
    from rtnetlab import _core

    if output:
        _check_description_output("-o", output)
        _check_outputs({"-o": output}, [])
    text = _core.generate_afdx(vls, switches, seed, planes, end_systems or 0)
    data = json.loads(text)
    if output:
        formats.write(data, output)
        if as_json:
            emit_json({"output": str(output), "virtual_links": vls})
        else:
            _wrote(output, detail=f"{vls} virtual links, {switches} switches x {planes} plane(s)")
        return
    emit_json(data)


@configure_app.command("afdx")
def configure_afdx(
    file: FileArg,
    output: Annotated[Path, typer.Option("-o", "--output", help="Write the configured description here.")],
    objective: Annotated[
        str, typer.Option("--objective", help="first-feasible or min-bandwidth (least reserved bandwidth)")
    ] = "first-feasible",
    jitter_at: Annotated[
        str, typer.Option("--jitter-at", help="Where the 500 us jitter limit applies: all, sources, none")
    ] = "all",
    deadlines: Annotated[
        bool, typer.Option("--deadlines/--no-deadlines", help="Require every flow deadline to be met (best).")
    ] = True,
    as_json: JsonOpt = False,
) -> None:
    """BAG and MTU of every virtual link that lists the messages it carries (seed 001D)."""
    from rtnetlab import configure

    _check_description_output("-o", output)
    _check_outputs({"-o": output}, [file])
    report, configured = configure.afdx(Path(file), objective, jitter_at, deadlines)
    if configured is not None:
        formats.write(configured, output)
    if as_json:
        report["output"] = str(output) if configured is not None else None
        emit_json(report)
    else:
        _print_afdx_configuration(report)
        if configured is not None:
            _wrote(output)
    if not report["feasible"]:
        if not as_json:
            err.print(f"{file}: no feasible configuration: {report['reason']}; nothing written", markup=False)
        raise typer.Exit(EXIT_VERDICT)


def _print_afdx_configuration(report: dict) -> None:
    vls = _table(
        f"BAG and MTU ({report['objective']})",
        ["virtual link", "BAG (ms)", "MTU (B)", "Lmin (B)", "Lmax (B)", "reserved (kb/s)",
         "candidates (BAG ms, MTU)"],
        left=("virtual link", "candidates (BAG ms, MTU)"),
    )
    for v in report["vls"]:
        vls.add_row(
            v["flow"] + ("" if v["configured"] else " (fixed)"),
            str(v["bag_ms"]),
            str(v["mtu_bytes"]),
            str(v["lmin_bytes"]),
            str(v["lmax_bytes"]),
            f"{v['reserved_bps'] / 1e3:,.1f}",
            " ".join(f"({b},{m})" for b, m in v["candidates"]),
        )
    if report["vls"]:
        out.print(vls)
    ports = _table(
        "Egress ports (Eq. 2 bandwidth, Eq. 3 jitter)",
        ["port", "reserved (kb/s)", "rate (Mb/s)", "jitter (us)", "limit (us)", "status"],
        left=("port", "status"),
    )
    for p in report["ports"]:
        ok = p["bandwidth_ok"] and p["jitter_ok"]
        ports.add_row(
            p["port"],
            f"{p['reserved_bps'] / 1e3:,.1f}",
            f"{p['rate_bps'] / 1e6:g}",
            "-" if p["jitter_us"] is None else f"{p['jitter_us']:.1f}",
            "-" if p["jitter_limit_us"] is None else str(p["jitter_limit_us"]),
            "ok" if ok else "violated",
            style=None if ok else "red",
        )
    if report["ports"]:
        out.print(ports)
    if report["feasible"]:
        checked = "every deadline met (best)" if report["deadlines_checked"] else "no deadlines checked"
        out.print(f"reserved bandwidth {report['reserved_bps'] / 1e3:,.1f} kb/s; {checked}", markup=False)


@configure_app.command("priorities")
def configure_priorities(
    file: FileArg,
    output: Annotated[Path, typer.Option("-o", "--output", help="Write the prioritised description here.")],
    method: Annotated[str, typer.Option("--method", help="opa (Audsley) or dm (deadline monotonic)")] = "opa",
    as_json: JsonOpt = False,
) -> None:
    """Fixed priorities for every task, message and server (per processor and bus)."""
    from rtnetlab import configure

    _check_description_output("-o", output)
    _check_outputs({"-o": output}, [file])
    report, configured, analysis = configure.priorities(Path(file), method)
    chains_ok = analysis is None or all(
        c["status"] == "ok" for c in (analysis.get("fixed_priority") or {}).get("chains", [])
    )
    if configured is not None and chains_ok:
        formats.write(configured, output)
    if as_json:
        report["analysis"] = analysis
        emit_json(report)
    else:
        for r in report["resources"]:
            order = " > ".join(f"{a['name']} ({a['priority']})" for a in r["order"]) or "-"
            verdict = "feasible" if r["feasible"] else "infeasible"
            out.print(f"{r['resource']} [{r['test']}]: {verdict}: {order}", markup=False)
            if r["failing"]:
                out.print(f"  cannot be placed / miss: {', '.join(r['failing'])}", markup=False)
            if r.get("reason"):
                out.print(f"  {r['reason']}", markup=False)
        if analysis is not None:
            _print_report(analysis)
        if configured is not None and chains_ok:
            _wrote(output)
    if configured is None:
        if not as_json:
            err.print(f"{file}: no feasible priority order ({method}); nothing written", markup=False)
        raise typer.Exit(EXIT_VERDICT)
    if not chains_ok:
        if not as_json:
            err.print(
                f"{file}: every resource has a feasible order for its local windows, but a chain misses its "
                "deadline in the holistic analysis; nothing written",
                markup=False,
            )
        raise typer.Exit(EXIT_VERDICT)
        raise typer.Exit(1)


@configure_app.command("partition")
def configure_partition(
    file: FileArg,
    output: Annotated[Path, typer.Option("-o", "--output", help="Write the placed description here.")],
    method: Annotated[
        str, typer.Option("--method", help="Priorities: opa (Audsley) or dm (deadline monotonic by window)")
    ] = "opa",
    as_json: JsonOpt = False,
) -> None:
    """Place the tasks of chains on processors, with priorities (DOPA, seed 001E)."""
    from rtnetlab import configure

    _check_description_output("-o", output)
    _check_outputs({"-o": output}, [file])
    report, configured, analysis = configure.partition(Path(file), method)
    if configured is not None:
        formats.write(configured, output)
    if as_json:
        report["analysis"] = analysis
        emit_json(report)
    else:
        _print_partition(report)
        if analysis is not None:
            _print_report(analysis)
        if configured is not None:
            _wrote(output)
    if configured is None:
        if not as_json:
            err.print(f"{file}: no feasible partition ({method}): {report['reason']}; nothing written",
                      markup=False)
        raise typer.Exit(EXIT_VERDICT)


def _print_partition(report: dict) -> None:
    if not report["feasible"]:
        return
    tasks = _table(
        "Placement (DOPA)",
        ["task", "chain", "processor", "priority", "window (us)", "jitter (us)", "response (us)"],
        left=("task", "chain", "processor"),
    )
    for t in report["tasks"]:
        tasks.add_row(
            t["name"] + (" (pinned)" if t["pinned"] else ""),
            t["chain"],
            t["processor"],
            str(t["priority"]),
            _fmt_us(t["window_us"]),
            _fmt_us(t["jitter_us"]),
            _fmt_us(t["response_us"]),
        )
    out.print(tasks)
    if report["messages"]:
        msgs = _table(
            "Messages",
            ["message", "chain", "sent by", "priority", "window (us)", "jitter (us)", "response (us)"],
            left=("message", "chain", "sent by"),
        )
        for m in report["messages"]:
            if m["on_bus"]:
                msgs.add_row(m["name"], m["chain"], m["sender"], str(m["priority"]), _fmt_us(m["window_us"]),
                             _fmt_us(m["jitter_us"]), _fmt_us(m["response_us"]))
            else:
                msgs.add_row(m["name"], m["chain"], "- (same processor: not sent)", "-", "-", "-", "-")
        out.print(msgs)
    for c in report["chains"]:
        out.print(
            f"chain {c['name']}: end-to-end bound {_fmt_us(c['end_to_end_us'])} us "
            f"<= deadline {_fmt_us(c['deadline_us'])} us",
            markup=False,
        )


@configure_app.command("dtable")
def configure_dtable(
    file: FileArg,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write the scheduler configurations here.")
    ] = None,
    into: Annotated[
        Path | None,
        typer.Option("--into", help="Add them to this network description's schedulers (written to -o)."),
    ] = None,
    prefix: Annotated[str, typer.Option("--prefix", help="Prefix of the scheduler names.")] = "",
    as_json: JsonOpt = False,
) -> None:
    """Deficit Table entries and weights from latency and bandwidth requirements (seed 003)."""
    from rtnetlab import configure

    if into is not None and output is None:
        raise UserError("--into: give -o/--output for the description with the schedulers added")
    _check_description_output("-o", output)
    _check_outputs({"-o": output}, [file, into])
    report = configure.dtable(Path(file))
    if not report["feasible"]:
        if as_json:
            emit_json(report)
        else:
            err.print(f"{file}: no feasible table: {report['reason']}; nothing written", markup=False)
        raise typer.Exit(EXIT_VERDICT)
    if output is not None:
        if into is not None:
            formats.write(configure.insert_schedulers(into, report["schedulers"], prefix), output)
        else:
            formats.write({"schedulers": {prefix + k: v for k, v in report["schedulers"].items()}}, output)
    if as_json:
        emit_json(report)
        return
    _print_dtable_configuration(report)
    if output is not None:
        _wrote(output)


def _print_dtable_configuration(report: dict) -> None:
    plan = report["decoupling"]["plan"]
    t4 = _table(
        f"Latency: entries from distances (N = {plan['entries']}, M = {plan['max_weight']}, "
        f"pool = {plan['pool']} credits)",
        ["class", "distance asked", "distance", "entries", "% entries", "MTU (credits)", "min share",
         "max share"],
        left=("class",),
    )
    for c in plan["classes"]:
        t4.add_row(
            c["name"], str(c["max_distance"]), str(c["distance"]), str(c["entries"]),
            f"{100 * c['entry_fraction']:g}", str(c["mtu"]), f"{c['min_share']:.6g}", f"{c['max_share']:.6g}",
        )
    out.print(t4)
    base = report["baselines"]
    t5 = _table(
        "Bandwidth: weights (credits)",
        ["class", "share asked", "share", "DTable entries", "entry weights", "total", "WF2Q entries",
         "SCFQ weight", "DRR quantum"],
        left=("class", "entry weights"),
    )
    for k, w in enumerate(report["decoupling"]["weights"]):
        weights = sorted(set(w["entry_weights"]))
        t5.add_row(
            w["name"], f"{w['requested_share']:g}", f"{w['share']:.6g}", str(len(w["entry_weights"])),
            "/".join(str(x) for x in weights), str(w["total_weight"]), str(base["wf2q_entries"][k]),
            f"{base['scfq_weights'][k]:.6g}", str(base["drr_quanta"][k]),
        )
    out.print(t5)
    slots = plan["slots"]
    names = [c["name"] for c in plan["classes"]]
    out.print("table: " + " ".join(names[s] for s in slots), markup=False)


@experiment_app.command("dopa")
def experiment_dopa(
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Where the CSV and PNG files go.")] = Path(
        "out/dopa"
    ),
    sets: Annotated[int, typer.Option("--sets", help="Random systems per point.")] = 100,
    points: Annotated[int, typer.Option("--points", help="Points per curve.")] = 10,
    seed: Annotated[int, typer.Option("--seed")] = 1,
    dm_key: Annotated[
        str, typer.Option("--dm-key", help="DM baseline key: local-window, end-to-end or absolute.")
    ] = "local-window",
    local_test: Annotated[
        str, typer.Option("--local-test", help="release-jitter (safe) or paper (Eq. 1, no jitter).")
    ] = "release-jitter",
    as_json: JsonOpt = False,
) -> None:
    """Seed 001E Fig. 6: acceptance of DOPA's PARTITION with OPA and with DM (three panels)."""
    from rtnetlab import experiments

    if sets < 1 or points < 1:
        raise UserError("--sets and --points: must be at least 1")
    stems = [stem for _, stem, _ in experiments.DOPA_PANELS.values()]
    files = [out_dir / f"{stem}.{ext}" for stem in stems for ext in ("csv", "png")]
    _check_outputs({f"--out-dir ({f.name})": f for f in files}, [])
    results = experiments.dopa_fig6(out_dir, sets, points, seed, dm_key, local_test)
    if as_json:
        emit_json({p: [{"x": x, "opa": o, "dm": d} for x, o, d in rows] for p, rows in results.items()})
        outfiles.created_directories.clear()
        return
    for panel, rows in results.items():
        label, stem, _ = experiments.DOPA_PANELS[panel]
        t = _table(
            f"Fig. 6 ({panel}): accepted sets, {sets} per point", [label, "OPA", f"DM ({dm_key})"], left=()
        )
        for x, o, d in rows:
            t.add_row(f"{x:g}", f"{100 * o:.0f}%", f"{100 * d:.0f}%")
        out.print(t)
    _wrote(*files)


@experiment_app.command("nss-overhead")
def experiment_nss_overhead(
    seeds: Annotated[int, typer.Option("--seeds", help="Runs averaged per cell.")] = 20,
    packets: Annotated[int, typer.Option("--packets", help="Aperiodic packets per run.")] = 1000,
    as_json: JsonOpt = False,
) -> None:
    """Seed 004 Table 4: CPU overhead (%) of the network sporadic server, by simulation."""
    from rtnetlab import experiments

    gaps, budgets = [20, 50, 250, 1000], [2, 4, 6, 8, 10]
    rows = experiments.nss_overhead(gaps, budgets, packets, seeds)
    if as_json:
        emit_json(rows)
        return
    t = _table(
        "Network sporadic server: CPU overhead (%)",
        ["1/lambda"] + [f"n = {n}" for n in budgets],
        left=("1/lambda",),
    )
    for g in gaps:
        cells = [r for r in rows if r["mean_gap_ns"] == g * 1_000_000]
        t.add_row(f"{g} ms", *[f"{r['overhead_percent']:.4f}" for r in cells])
    out.print(t)


@experiment_app.command("fabric")
def experiment_fabric(
    scenario: Annotated[
        Path | None,
        typer.Argument(
            help="Fabric scenario (JSON or YAML); default: seed 003's multimedia set-up (shipped).",
            show_default=False,
        ),
    ] = None,
    scheduler: Annotated[
        list[str] | None, typer.Option("--scheduler", help="A scheduler of the scenario (repeatable).")
    ] = None,
    duration: Annotated[str | None, typer.Option("--duration", help="Measured time, e.g. 100ms.")] = None,
    warmup: Annotated[str | None, typer.Option("--warmup", help="Warm-up before measuring.")] = None,
    reference_rate: Annotated[
        str | None, typer.Option("--reference-rate", help="Injections are fractions of this rate.")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Seed 003: the lossless multistage fabric under each scheduler, per class throughput and
    mean / p99 latency."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from rtnetlab import experiments

    if scenario is not None and not scenario.exists():
        raise UserError(f"{scenario}: no such file")
    # Each scheduler's run takes seconds: a progress bar on the terminal, nothing with --json.
    bar = Progress(TextColumn("fabric: {task.description}"), BarColumn(),
                   TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(), console=err,
                   transient=True, disable=as_json or not sys.stderr.isatty())
    with bar:
        task = bar.add_task("", total=None)

        def started(name: str, k: int, n: int) -> None:
            bar.update(task, description=f"scheduler {name}", completed=k, total=n)

        reports = experiments.fabric(scenario, scheduler, duration, warmup, reference_rate, seed, started)
    if as_json:
        emit_json(reports)
        return
    t = _table(
        f"{reports[0]['scenario']}: {reports[0]['topology']}, {reports[0]['measured_s'] * 1e3:g} ms "
        f"measured, offered {reports[0]['offered_load']:.3f}",
        ["class", "scheduler", "accepted / offered", "mean (us)", "p99 (us)"],
        left=("class", "scheduler"),
    )
    for k, c0 in enumerate(reports[0]["classes"]):
        for r in reports:
            c = r["classes"][k]
            accepted = c["accepted_load"] / max(c["offered_load"], 1e-12)
            t.add_row(c0["class"], r["scheduler"], f"{accepted:.3f}", f"{c['latency']['mean_us']:,.1f}",
                      f"{c['latency']['p99_us']:,.1f}", end_section=r is reports[-1])
    out.print(t)
    for r in reports:
        st = r["stats"]
        ch = r["checks"]
        broken = ch["out_of_order"] or ch["buffer_overflows"] or ch["credit_violations"]
        held = ch["conserved"] and not broken
        ok = "lossless, in order, buffers and credits within bounds" if held else "INVARIANTS VIOLATED"
        out.print(f"{r['scheduler']}: {st['events']:,} events in {st['wall_s']:.1f} s; {ok}", markup=False)


@experiment_app.command("schedulers")
def experiment_schedulers(
    duration: Annotated[str, typer.Option("--duration", help="Simulated time per scheduler.")] = "2s",
    seed: Annotated[int, typer.Option("--seed")] = 1,
    link_rate: Annotated[str, typer.Option("--link-rate", help="Link rate (sets the load).")] = "10Mbps",
    as_json: JsonOpt = False,
) -> None:
    """Seed 000's comparison: FIFO, static priority, WF2Q and D2DRR (6:3:1) per traffic class."""
    from rtnetlab.experiments import seed000_schedulers

    seconds = _quantity("duration", duration, "--duration")
    _quantity("rate", link_rate, "--link-rate")
    rows = seed000_schedulers(seconds, seed, link_rate)
    if as_json:
        emit_json(rows)
        return
    table = _table(
        f"Seed 000 comparison at {link_rate} ({duration} simulated, seed {seed})",
        ["scheduler", "class", "frames", "mean (us)", "p99 (us)", "max (us)", "bound (us)"],
        left=("scheduler", "class"),
    )
    for r in rows:
        table.add_row(
            r["scheduler"],
            r["class"],
            str(r["frames"]),
            f"{r['mean_us']:,.1f}",
            f"{r['p99_us']:,.1f}",
            f"{r['max_us']:,.1f}",
            "unbounded" if r["bound_us"] is None else f"{r['bound_us']:,.1f}",
        )
    out.print(table)


@app.command("report")
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
    from rtnetlab import report as report_mod
    from rtnetlab.results import failure_line
    from rtnetlab.testbed import compare

    measured_data = compare.load(measured) if measured is not None else None

    seconds = _quantity("duration", duration, "--duration")
    if seconds <= 0:
        raise UserError(f"--duration: must be positive, got {duration}")
    report_mod.check_output(output, [file])
    net = model.load_file(file)
    summary, paths = report_mod.generate(
        net,
        output,
        method=method,
        duration_ns=round(seconds * 1e9),
        seed=seed,
        progress=not as_json and sys.stderr.isatty(),
        inputs=[file] + ([measured] if measured is not None else []),
        measured=measured_data,
        worst_case=worst_case,
    )
    failed = fail_on_miss and summary["verdict"]["failed"]
    if as_json:
        files = {k: str(p) for k, p in paths.items()}
        emit_json({"files": files, "summary": summary, "warnings": net.warnings})
    else:
        _warn(net)
        _wrote(paths["html"], paths["csv"], paths["json"])
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


@app.command()
def demo(as_json: JsonOpt = False) -> None:
    """Run the embedded AFDX case study end to end."""
    from rtnetlab import demo as demo_mod

    demo_mod.run(as_json=as_json)


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    args = _hoist_limits(sys.argv[1:] if argv is None else list(argv))
    as_json = "--json" in (args[: args.index("--")] if "--" in args else args)
    outfiles.created_directories.clear()

    def fail(code: int, errors: list[str], warnings: list[str] | None = None) -> int:
        if as_json:
            emit_json(error_document(errors, warnings))
        else:
            for w in warnings or []:
                err.print(w, markup=False)
            for line in errors:
                err.print(line, markup=False)
        return code

    try:
        # SIGTERM unwinds like Ctrl-C, so temporary files go and a simulation still reports.
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread (embedded use)
        previous = None
    try:
        rc = app(args=args, prog_name="rtnetlab", standalone_mode=False)
        return rc if isinstance(rc, int) else 0
    except ModelError as e:
        return fail(EXIT_USER, e.lines, e.warnings)
    except UserError as e:
        return fail(EXIT_USER, [str(e)])
    except typer.Exit as e:
        return e.exit_code
    except Terminated:
        return fail(EXIT_SIGTERM, ["terminated"])
    except KeyboardInterrupt:
        return fail(EXIT_SIGINT, ["interrupted"])
    except Exception as e:  # click's own usage errors (recent typer vendors click as typer._click)
        try:
            from typer._click.exceptions import ClickException
        except ImportError:
            from click.exceptions import ClickException

        if isinstance(e, ClickException):
            if as_json:
                hint = getattr(e, "param_hint", None) or getattr(getattr(e, "param", None), "opts", None)
                place = (hint if isinstance(hint, str) else " / ".join(hint)) if hint else None
                emit_json({"errors": [{"place": place, "message": e.format_message()}], "warnings": []})
            else:
                e.show()
            return e.exit_code
        if isinstance(e, typer.Abort):
            return fail(EXIT_SIGINT, ["interrupted"])
        traceback.print_exc()
        message = f"internal error: {type(e).__name__}: {e} (a bug in rtnetlab; please report it)"
        if as_json:
            emit_json({"errors": [{"place": None, "message": message}], "warnings": []})
        else:
            err.print(message, markup=False)
        return EXIT_INTERNAL
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
