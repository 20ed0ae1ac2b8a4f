"""``rtnetlab analyze``: worst-case bounds (or response times) as a table, JSON, CSV or WOPANet
results, beside a WOPANet results file with ``--compare``; the tables of an analysis are printed
here (``configure`` prints its analyses with :func:`print_report`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from rtnetlab.cli.common import (
    EXIT_VERDICT,
    FailOnMissOpt,
    FileArg,
    JsonOpt,
    check_outputs,
    emit_json,
    err,
    fmt_opt_us,
    fmt_us,
    out,
    table,
    warn,
    wrote,
)
from rtnetlab.errors import UserError
from rtnetlab.tables import DEFAULT_ROWS, ResultTable, RowsOpt, parse_limit

if TYPE_CHECKING:
    from rtnetlab.model import Network


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


def _analysis_text(fmt: str, net: Network, report: dict) -> str:
    if fmt == "json":
        from rtnetlab.io import jsontext

        return jsontext.dumps({**report, "warnings": net.warnings}) + "\n"
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


def analyze(
    file: FileArg,
    method: Annotated[
        str,
        typer.Option(
            "--method", "-m", help="best, tfa, sfa, sfa-iter, pmoo, fifo-lp, afdx-naive or sink-tree-backlog"
        ),
    ] = "best",
    grouping: Annotated[
        bool, typer.Option("--grouping", help="Serialise flows sharing an input link.")
    ] = False,
    blind: Annotated[
        bool, typer.Option("--blind", help="Blind (arbitrary) instead of FIFO multiplexing.")
    ] = False,
    arrival_bounds: Annotated[
        str,
        typer.Option(
            "--arrival-bounds",
            help="Server graphs, blind multiplexing: bound cross traffic by aggregate pboo, pmoo, or "
            "per flow the tightest of both.",
        ),
    ] = "tightest",
    lp_effort: Annotated[
        str,
        typer.Option(
            "--lp-effort",
            help="fifo-lp's effort, alone and in best: fast (one program per bound), default, or "
            "exhaustive (every backlogged period split, the network unfolded without cuts: the "
            "tightest bound, for small networks), or KEY=N,... (budget=N: the variables best may "
            "spend on fifo-lp's programs; docs/ANALYSIS.md).",
        ),
    ] = "default",
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
    explain: Annotated[
        str | None,
        typer.Option(
            "--explain",
            help="Show where FLOW's bound comes from, hop by hop (the port's rate and latency, the "
            "loads, the burst entering, the queue's delay, the service left to the flow).",
            metavar="FLOW",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Worst-case delay, jitter and backlog bounds of every flow and egress port."""
    import rtnetlab as rt
    from rtnetlab import results
    from rtnetlab.io import formats

    limit = parse_limit(rows)
    if explain is not None:
        if output is not None or compare is not None or output_format not in (None, "table", "json"):
            raise UserError("--explain: prints one flow's terms; it takes no -o, --compare or --format")
        net = rt.load(file)
        explanation = net.explain(explain, method, grouping=grouping, blind=blind,
                                  arrival_bounds=arrival_bounds, lp_effort=lp_effort).data
        if as_json or output_format == "json":
            emit_json({**explanation, "warnings": net.warnings})
        else:
            warn(net)
            print_explanation(explanation)
        return
    fmt = _analyze_format(output_format, output, as_json)
    check_outputs({"-o": output}, [file, compare])
    net = rt.load(file)
    if output is None and compare is None and fmt in ("table", "json"):
        # What a user runs most: the engine writes the JSON document, or selects the rows the
        # tables show; the whole report (6.8 MB of JSON on 5000 VLs) never crosses into Python.
        if fmt == "json":
            text = net.analysis_json(method, grouping=grouping, blind=blind, arrival_bounds=arrival_bounds,
                                     lp_effort=lp_effort)
            sys.stdout.write(text + "\n")
            verdict = results.verdict(json.loads(text)) if fail_on_miss else {"failed": False}
        else:
            view = net.analysis_table(limit, method, grouping=grouping, blind=blind,
                                      arrival_bounds=arrival_bounds, lp_effort=lp_effort)
            verdict = _view_verdict(view)
            warn(net)
            print_report(view, limit, results.Reasons.of(net.engine, {"ports": view["unbounded_ports"]}))
        if fail_on_miss and verdict["failed"]:
            if not as_json:
                err.print(results.failure_line(verdict["failures"]), style="bold red", markup=False)
            raise typer.Exit(EXIT_VERDICT)
        return
    report = net.analyze(method, grouping=grouping, blind=blind, arrival_bounds=arrival_bounds,
                         lp_effort=lp_effort).data
    engine = net.engine
    reference = None
    if compare is not None:
        from rtnetlab.io import wopanet

        reference = wopanet.compare_results(compare, engine, report)
    verdict = results.verdict(report)
    if output is not None:
        formats.atomic_write(output, _analysis_text(fmt, engine, report))
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
        sys.stdout.write(_analysis_text(fmt, engine, report))
        warn(net)
    else:
        warn(net)
        if output is None:
            print_report(report, limit, results.Reasons.of(engine, report))
        else:
            wrote(output, detail=fmt)
            out.print(_verdict_line(verdict), markup=False)
        if reference:
            _print_comparison(reference, limit)
    if fail_on_miss and verdict["failed"]:
        if not as_json:
            err.print(results.failure_line(verdict["failures"]), style="bold red", markup=False)
        raise typer.Exit(EXIT_VERDICT)


def _view_verdict(view: dict) -> dict:
    """`results.verdict` of a report from its table view (`Network.analysis_tables`): the
    engine counted the flow rows and listed their deadline failures."""
    from rtnetlab import results

    c = view["counts"]
    failures = view["failures"] + results.verdict({"fixed_priority": view.get("fixed_priority")})["failures"]
    return {"rows": c["flows"], "ok": c["ok"], "miss": c["miss"], "unbounded": c["unbounded"],
            "failed": bool(failures), "failures": failures}


def print_explanation(e: dict) -> None:
    """`analyze --explain FLOW`: per route, what each hop adds to the flow's bound."""
    from rich.table import Table

    def num(x: float | None, fmt: str = "{:,.1f}") -> str:
        return "inf" if x is None else fmt.format(x)

    out.print(
        f"{e['flow']} ({e['method']}): leaves its source with burst {num(e['burst_bits'], '{:,.0f}')} "
        f"bits and rate {num(e['rate_bps'] / 1e6, '{:,.3f}')} Mb/s",
        markup=False,
    )
    if e.get("staircase"):
        s = e["staircase"]
        out.print(
            f"  (the affine envelope of its staircase: period {s['period']:g}, tolerance {s['tolerance']:g}, "
            f"size {s['size']:g}, which its first hop takes exactly)",
            markup=False,
        )
    for r in e["routes"]:
        title = f"to {r['destination']}, plane {r['plane']}: {num(r['bound_us'])} us ({r['method']})"
        if not r["guaranteed"]:
            title += ", NOT GUARANTEED (cut-through)"
        t = Table(title=title, title_justify="left")
        columns = ("port", "rate (Mb/s)", "latency (us)", "queue load (Mb/s)", "port load (Mb/s)",
                   "burst in (bits)", "queue delay (us)", "service left (Mb/s, us)", "propagation (us)")
        for col in columns:
            t.add_column(col, justify="left" if col == "port" else "right")
        for h in r["hops"]:
            lo = h.get("left_over")
            t.add_row(
                h["port"],
                num(h["rate_bps"] / 1e6, "{:,.3f}"),
                num(h["latency_us"]),
                num(h["queue_load_bps"] / 1e6, "{:,.3f}"),
                num(h["port_load_bps"] / 1e6, "{:,.3f}"),
                num(h["burst_bits"], "{:,.0f}"),
                num(h["queue_delay_us"]) + (f" ({h['reason']})" if h.get("reason") else ""),
                "-" if lo is None else f"{lo[0] / 1e6:,.3f}, {lo[1]:,.1f}",
                num(h["propagation_us"]),
            )
        out.print(t)
        out.print(
            f"  + receive latency {num(r['receive_latency_us'])} us. Queue delays + constant delays "
            f"(TFA's sum): {num(r['tfa_sum_us'])} us; the bound: {num(r['bound_us'])} us ({r['method']})",
            markup=False,
        )
        out.print("  " + _terms_text(r["terms"], num), markup=False)


def _terms_text(terms: dict, num) -> str:
    """One line: what the method that gave a route's bound computed it from."""
    constant = f"+ constant delays {num(terms['constant_us'])} us"
    kind = terms["kind"]
    if kind == "tfa":
        return f"Terms (TFA): the queue delays {num(terms['queue_delays_us'])} us {constant}."
    if kind == "service":
        if terms["service"] is None:
            return f"Terms (end-to-end service): none ({terms.get('reason')})."
        corners = ", ".join(f"({x:,.3f} us, {y:,.0f} bits)" for x, y in terms["service"][:6])
        more = " ..." if len(terms["service"]) > 6 else ""
        bucket = f"{num(terms['burst_bits'], '{:,.0f}')} bits, {num(terms['rate_bps'] / 1e6, '{:,.3f}')} Mb/s"
        return (f"Terms (end-to-end service): the horizontal deviation between the token bucket ({bucket}) "
                f"and the left-over service through {corners}{more}, then "
                f"{num(terms['service_rate_bps'] / 1e6, '{:,.3f}')} Mb/s, {constant}.")
    lp = terms["program"]
    cut = ", ".join(lp["cut_flows"][:8]) + (" ..." if len(lp["cut_flows"]) > 8 else "")
    return (f"Terms (fifo-lp): one linear program over {lp['servers']} queues unfolded from the route's end, "
            f"{lp['entering']} token buckets entering ({len(lp['cut_flows'])} flows cut from their source, "
            f"their bursts grown by their delay bounds before the cut{': ' + cut if cut else ''}), "
            f"{lp['lines']} line-shaping constraints, {lp['variables']} variables {constant}.")


def _print_backlog_report(report: dict, limit: int | None) -> None:
    """A backlog-only method's tables: each flow's row gives the backlog bound of the server
    where it leaves (the method's note says whose backlog it is), each port's its own."""

    def status(row: dict) -> str:
        if row["backlog_bytes"] is not None:
            return "backlog bound (no delay)"
        return _status("unbounded", row.get("reason"))

    def bounded_first(row: dict) -> tuple:
        return (row["backlog_bytes"] is not None, -(row["backlog_bytes"] or 0.0))

    flows = ResultTable(f"Backlog bounds ({report['method']})",
                        ["flow", "destination", "plane", "backlog where it leaves (B)", "status"],
                        left=("flow", "destination", "plane", "status"))
    def style(row: dict) -> str | None:
        return None if row["backlog_bytes"] is not None else "bold red"

    def flow_row(f: dict) -> tuple[tuple[str, ...], str | None]:
        return (f["flow"], f["destination"], f["plane"], fmt_us(f["backlog_bytes"]), status(f)), style(f)

    def port_row(p: dict) -> tuple[tuple[str, ...], str | None]:
        load = f"{100 * p['load']:.1f}%"
        cells = (f"{p['node']}:{p['port']}", p["plane"], load, fmt_us(p["backlog_bytes"]), status(p))
        return cells, style(p)

    counts = report.get("counts")  # a table view: the rows not sent are counted too
    flows.add_rows(report["flows"], flow_row, limit, key=bounded_first)
    if counts:
        flows.unformatted += counts["flows"] - len(report["flows"])
    flows.print(out, limit, "(flow, destination, plane) rows")
    ports = ResultTable("Egress ports", ["port", "plane", "load", "backlog (B)", "status"],
                        left=("port", "plane", "status"))
    loaded = [p for p in report["ports"] if p["load"] > 0]
    ports.add_rows(loaded, port_row, limit, key=bounded_first)
    if counts:
        ports.unformatted += counts["ports"] - len(loaded)
    ports.print(out, limit, "ports")


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
            "unbounded" if b is None and r["in_network"] else fmt_us(b),
            "Infinity" if x is None and r["in_reference"] else fmt_us(x),
            "-" if b is None or x is None else fmt_us(x - b),
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


def print_report(report: dict, limit: int | None = None, reasons: Any = None) -> None:
    """The tables of a report, or of its table view (`Network.analysis_tables`: the rows shown
    and ``counts`` of every row)."""
    counts = report.get("counts")
    if (counts["flows"] or counts["all_ports"]) if counts else (report["flows"] or report["ports"]):
        _print_network_report(report, limit, reasons)
    if report.get("fixed_priority"):
        _print_response_times(report["fixed_priority"])
    for n in report.get("notes", []):
        out.print(f"note: {n}", markup=False)


def _print_response_times(fp: dict) -> None:
    items = table(
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
            fmt_us(i["cost_us"]),
            fmt_us(i["period_us"]),
            fmt_us(i["deadline_us"]),
            "-" if i["response_us"] is None else fmt_us(i["response_us"]),
            "-" if i["slack_us"] is None else fmt_us(i["slack_us"]),
            _status(i["status"], i.get("reason")),
            i["analysis"],
            style=style,
        )
    out.print(items)
    if fp["chains"]:
        chains = table(
            "Chains (from the external event)",
            ["chain", "steps (completion, us)", "R (us)", "D (us)", "slack (us)", "status"],
            left=("chain", "steps (completion, us)", "status"),
        )
        for c in fp["chains"]:
            steps = " -> ".join(f"{s['name']} ({fmt_opt_us(s['response_us'])})" for s in c["steps"])
            chains.add_row(
                c["name"],
                steps,
                "-" if c["response_us"] is None else fmt_us(c["response_us"]),
                fmt_us(c["deadline_us"]),
                "-" if c["slack_us"] is None else fmt_us(c["slack_us"]),
                _status(c["status"], c.get("reason")),
                style={"unbounded": "bold red", "miss": "red"}.get(c["status"]),
            )
        out.print(chains)
    for n in fp.get("notes", []):
        out.print(f"note: {n}", markup=False)


#: Methods that bound backlogs only: their rows carry no delay by design, which is no failure.
BACKLOG_ONLY_METHODS = ("sink-tree-backlog",)


def _print_network_report(report: dict, limit: int | None, reasons: Any = None) -> None:
    if report["method"] in BACKLOG_ONLY_METHODS:
        _print_backlog_report(report, limit)
        return
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

    def flow_row(f: dict) -> tuple[tuple[str, ...], str | None]:
        style = {"unbounded": "bold red", "miss": "red"}.get(f["status"])
        reason = reasons.flow(f) if reasons is not None and f["status"] == "unbounded" else f.get("reason")
        return (
            f["flow"],
            f["destination"],
            f["plane"],
            fmt_us(f["delay_us"]),
            fmt_us(f["jitter_us"]),
            fmt_us(f["deadline_us"]),
            fmt_us(f["slack_us"]),
            # A route through a cut-through switch: the bound assumes store-and-forward.
            _status(f["status"], reason) + ("" if f.get("guaranteed", True) else " (not guaranteed)"),
        ), style

    # Only the rows shown are formatted (a 5000-VL network has 18,000; 40 are shown by default).
    counts = report.get("counts")
    flows.add_rows(report["flows"], flow_row, limit, key=critical)
    if counts:  # a table view: the rows not sent are counted too
        flows.unformatted += counts["flows"] - len(report["flows"])
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
    def port_row(p: dict) -> tuple[tuple[str, ...], str | None]:
        buffer, over = p.get("buffer_bytes"), overflows(p)
        reason = p.get("reason")
        if reasons is not None and p["status"] == "unbounded":
            # The port's own reason without repeating its name.
            reason = reasons.port(p).removeprefix(f"{p['node']}:{p['port']}").lstrip(": ")
        status = _status(p["status"], reason) + (" BUFFER OVERFLOW" if over else "")
        return (
            f"{p['node']}:{p['port']}",
            p["plane"],
            f"{100 * p['load']:.1f}%",
            fmt_us(p["delay_us"]),
            "-" if p["backlog_bytes"] is None else f"{p['backlog_bytes']:,.0f}",
            "-" if buffer is None else f"{buffer:,.0f}",
            status,
        ), "bold red" if p["status"] == "unbounded" or over else None

    def critical_port(p: dict) -> tuple:
        return (not (p["status"] == "unbounded" or overflows(p)), -p["load"])

    ports.add_rows(loaded, port_row, limit, key=critical_port)
    if counts:
        ports.unformatted += counts["ports"] - len(loaded)
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
            return "unbounded" if x is None else fmt_us(x)

        def redundancy_row(r: dict) -> tuple[tuple[str, ...], str | None]:
            return (
                r["flow"],
                r["destination"],
                bound(r["delay_us"]),
                bound(r["single_plane_delay_us"]),
                bound(r["arrival_skew_us"]),
                fmt_us(r["skew_max_us"]),
                bound(r["paper_cor7_us"]),
            ), None if r["skew_ok"] else "red"

        def skew_first(r: dict) -> tuple:
            return (r["skew_ok"], -(r["delay_us"] or float("inf")))

        red.add_rows(report["redundancy"], redundancy_row, limit, key=skew_first)
        if counts:
            red.unformatted += counts["redundancy"] - len(report["redundancy"])
        red.print(out, limit, "(flow, destination) rows")
