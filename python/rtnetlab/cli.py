"""The `rtnetlab` command.

Every command takes `--json` for machine-readable output. User mistakes (unreadable files, bad
descriptions, wrong options) are printed as one line each on stderr with exit code 2, never with
a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from rtnetlab import model
from rtnetlab.errors import ModelError, UserError
from rtnetlab.io import formats
from rtnetlab.tables import DEFAULT_ROWS, ResultTable, RowsOpt, parse_limit

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

# Tables keep their columns when piped (rich would otherwise squeeze them to 80 characters).
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False, soft_wrap=True)

FileArg = Annotated[Path, typer.Argument(help="Network description (.yaml, .yml, .json, or WOPANet .xml)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


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


@app.command()
def validate(file: FileArg, as_json: JsonOpt = False) -> None:
    """Check a network description; report every problem, one line each."""
    try:
        net = model.load_file(file)
    except UserError as e:
        if as_json:
            errors, warnings = (e.lines, e.warnings) if isinstance(e, ModelError) else ([str(e)], [])
            emit_json({"file": str(file), "valid": False, "errors": errors, "warnings": warnings})
            raise typer.Exit(2) from None
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
    return "inf" if x is None else f"{x:,.3f}".rstrip("0").rstrip(".")


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
    output_format: Annotated[str, typer.Option("--format", help="table, json or wopanet-res")] = "table",
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write results to this file.")] = None,
    rows: RowsOpt = str(DEFAULT_ROWS),
    as_json: JsonOpt = False,
) -> None:
    """Worst-case delay, jitter and backlog bounds of every flow and egress port."""
    limit = parse_limit(rows)
    if as_json:
        output_format = "json"
    if output_format not in ("table", "json", "wopanet-res"):
        raise UserError(f"--format: expected table, json or wopanet-res, got '{output_format}'")
    net = model.load_file(file)
    report = net.analyze(method, grouping, blind)
    if output_format == "wopanet-res":
        from rtnetlab.io import wopanet

        text = wopanet.results_dumps(net.spec, report, net.info())
        if output is None:
            sys.stdout.write(text)
        else:
            formats.atomic_write(output, text)
            out.print(f"wrote {output}", markup=False)
        return
    if output_format == "json":
        report["warnings"] = net.warnings
        if output is None:
            emit_json(report)
        else:
            formats.atomic_write(output, json.dumps(report, indent=2) + "\n")
            out.print(f"wrote {output}", markup=False)
        return
    _warn(net)
    _print_report(report, limit)


def _print_report(report: dict, limit: int | None = None) -> None:
    if report["flows"] or report["ports"]:
        _print_network_report(report, limit)
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
            i["status"] + (f" ({i['reason']})" if i.get("reason") else ""),
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
                c["status"] + (f" ({c['reason']})" if c.get("reason") else ""),
                style={"unbounded": "bold red", "miss": "red"}.get(c["status"]),
            )
        out.print(chains)
    for n in fp.get("notes", []):
        out.print(f"note: {n}", markup=False)


def _fmt_opt_us(v: float | None) -> str:
    return "-" if v is None else _fmt_us(v)


def _print_network_report(report: dict, limit: int | None) -> None:
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
        flows.add_row(
            f["flow"],
            f["destination"],
            f["plane"],
            _fmt_us(f["delay_us"]),
            _fmt_us(f["jitter_us"]),
            "-" if f["deadline_us"] is None else _fmt_us(f["deadline_us"]),
            "-" if f["deadline_us"] is None else _fmt_us(f["slack_us"]),
            f["status"] + (f" ({f['reason']})" if f.get("reason") else ""),
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
        status = (
            p["status"]
            + (f" ({p['reason']})" if p.get("reason") else "")
            + (" BUFFER OVERFLOW" if over else "")
        )
        ports.add_row(
            f"{p['node']}:{p['port']}",
            p["plane"],
            f"{100 * p['load']:.1f}%",
            _fmt_us(p["delay_us"]),
            "inf" if p["backlog_bytes"] is None else f"{p['backlog_bytes']:,.0f}",
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
        for r in sorted(report["redundancy"], key=lambda r: (r["skew_ok"], -(r["delay_us"] or float("inf")))):
            red.add_row(
                r["flow"],
                r["destination"],
                _fmt_us(r["delay_us"]),
                _fmt_us(r["single_plane_delay_us"]),
                _fmt_us(r["arrival_skew_us"]),
                _fmt_us(r["skew_max_us"]),
                _fmt_us(r["paper_cor7_us"]),
                style=None if r["skew_ok"] else "red",
            )
        red.print(out, limit, "(flow, destination) rows")


def _quantity(kind: str, text: str, option: str) -> float:
    from rtnetlab import _core

    try:
        return _core.parse_quantity(kind, text)
    except ValueError as e:
        raise UserError(f"{option}: {e}") from None


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
            help="With --trace: the trace keeps the first N frame transmissions (default 5000000); "
            "the output says when the limit was reached.",
        ),
    ] = None,
    histograms: Annotated[
        Path | None, typer.Option("--histograms", help="Write latency histograms (CSV).")
    ] = None,
    rows: RowsOpt = str(DEFAULT_ROWS),
    as_json: JsonOpt = False,
) -> None:
    """Simulate the network packet by packet; per-flow latencies and per-port backlog."""
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
    if trace is not None:
        sim_mod.check_output_path(trace, "--trace")
    if histograms is not None:
        sim_mod.check_output_path(histograms, "--histograms")
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
    }
    counts = net.info()["counts"]
    if counts["end_systems"]:
        report = sim_mod.run(net, config, progress=not as_json and sys.stderr.isatty(), trace=trace)
    else:
        if trace or histograms:
            raise UserError("--trace/--histograms: this description has no switched network to trace")
        report = {"flows": [], "ports": [], "stats": {"events": 0, "frame_hops": 0, "wall_s": 0.0}}
    if counts["buses"]:
        bus_config = {"duration_ns": config["duration_ns"], "seed": seed,
                      "random_offsets": release == "random"}
        try:
            report["buses"] = json.loads(net.handle.simulate_buses_json(json.dumps(bus_config)))
        except ValueError as e:
            raise UserError(f"{file}: {e}") from None
    if histograms:
        sim_mod.write_histograms(report, histograms)
    if not histograms:
        for f in report["flows"]:
            f.pop("histogram", None)
    if as_json:
        report["warnings"] = net.warnings
        emit_json(report)
        return
    _warn(net)
    if report["flows"]:
        _print_sim(report, limit)
    if report.get("buses"):
        _print_bus_sim(report["buses"])
    if trace is not None:
        _print_trace(report["stats"], trace)


def _print_trace(stats: dict, trace: Path) -> None:
    written = stats["trace_frames"]
    if stats["trace_truncated"]:
        out.print(
            f"trace: first {written} of {stats['frame_hops']} frame transmissions written to {trace} "
            "(--trace-limit)",
            style="yellow",
            markup=False,
        )
    else:
        out.print(f"trace: {written} frame transmissions written to {trace}", markup=False)


def _print_bus_sim(buses: dict) -> None:
    for b in buses["buses"]:
        t = _table(
            f"Bus {b['bus']} (simulated, utilisation {100 * b['utilisation']:.1f}%)",
            ["message", "priority", "count", "min (us)", "mean (us)", "max (us)", "bound (us)",
             "max / bound"],
            left=("message",),
        )
        for m in b["messages"]:
            ratio = "-" if not (m["bound_us"] and m["max_us"]) else f"{m['max_us'] / m['bound_us']:.3f}"
            name = m["name"] + (f" (via {m['served_by']})" if m["served_by"] else "")
            prio = "-" if m["priority"] is None else str(m["priority"])
            t.add_row(name, prio, str(m["count"]), _fmt_opt_us(m["min_us"]), _fmt_opt_us(m["mean_us"]),
                      _fmt_opt_us(m["max_us"]), _fmt_opt_us(m["bound_us"]), ratio)
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
    cols = [
        "flow",
        "destination",
        "plane",
        "count",
        "min",
        "mean",
        "p50",
        "p99",
        "p99.9",
        "max",
        "jitter",
        "losses",
        "IC discards",
        "retx",
    ]
    flows = ResultTable("Simulated latency (us)", cols, left=("flow", "destination", "plane"))
    # Losses, integrity discards and retransmissions first, then the largest latency.
    def trouble(f: dict) -> int:
        return f["losses"] + f["integrity_discards"] + f["retransmissions"]

    for f in sorted(report["flows"], key=lambda f: (-trouble(f), -f["max_us"])):
        flows.add_row(
            f["flow"],
            f["destination"],
            f["plane"],
            str(f["count"]),
            *[
                f"{f[k]:,.1f}"
                for k in ("min_us", "mean_us", "p50_us", "p99_us", "p999_us", "max_us", "jitter_us")
            ],
            str(f["losses"]),
            str(f["integrity_discards"]),
            str(f["retransmissions"]),
        )
    flows.print(out, limit, "(flow, destination, plane) rows")
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
    if report.get("interrupted"):
        err.print("interrupted: results cover the simulated time above", style="yellow")


@app.command()
def convert(
    src: Annotated[Path, typer.Argument(help="Input (.yaml, .yml, .json or WOPANet .xml)")],
    dst: Annotated[Path, typer.Argument(help="Output (.yaml, .yml, .json or WOPANet .xml)")],
    as_json: JsonOpt = False,
) -> None:
    """Convert between YAML, JSON and WOPANet XML; the input is validated first."""
    net = model.load_file(src)
    formats.write(net.spec, dst)
    if as_json:
        emit_json({"from": str(src), "to": str(dst), "warnings": net.warnings})
        return
    _warn(net)
    out.print(f"wrote {dst}", markup=False)


@app.command()
def schema(
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to this file.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the JSON Schema of the description format (generated from the engine's model)."""
    text = json.dumps(model.schema(), indent=2) + "\n"
    if output:
        formats.atomic_write(output, text)
        if not as_json:
            out.print(f"wrote {output}", markup=False)
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

    text = _core.generate_afdx(vls, switches, seed, planes, end_systems or 0)
    data = json.loads(text)
    if output:
        formats.write(data, output)
        if as_json:
            emit_json({"output": str(output), "virtual_links": vls})
        else:
            out.print(
                f"wrote {output} ({vls} virtual links, {switches} switches x {planes} plane(s))", markup=False
            )
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

    report, configured = configure.afdx(Path(file), objective, jitter_at, deadlines)
    if configured is not None:
        formats.write(configured, output)
    if as_json:
        report["output"] = str(output) if configured is not None else None
        emit_json(report)
    else:
        _print_afdx_configuration(report)
        if configured is not None:
            out.print(f"wrote {output}", markup=False)
    if not report["feasible"]:
        err.print(f"{file}: no feasible configuration: {report['reason']}", markup=False)
        raise typer.Exit(1)


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
            out.print(f"wrote {output}", markup=False)
    if configured is None:
        err.print(f"{file}: no feasible priority order ({method})", markup=False)
        raise typer.Exit(1)
    if not chains_ok:
        err.print(
            f"{file}: every resource has a feasible order for its local windows, but a chain misses its "
            "deadline in the holistic analysis; nothing written",
            markup=False,
        )
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
            out.print(f"wrote {output}", markup=False)
    if configured is None:
        err.print(f"{file}: no feasible partition ({method}): {report['reason']}", markup=False)
        raise typer.Exit(1)


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
    report = configure.dtable(Path(file))
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
        out.print(f"wrote {output}", markup=False)


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
    results = experiments.dopa_fig6(out_dir, sets, points, seed, dm_key, local_test)
    if as_json:
        emit_json({p: [{"x": x, "opa": o, "dm": d} for x, o, d in rows] for p, rows in results.items()})
        return
    for panel, rows in results.items():
        label, stem, _ = experiments.DOPA_PANELS[panel]
        t = _table(
            f"Fig. 6 ({panel}): accepted sets, {sets} per point", [label, "OPA", f"DM ({dm_key})"], left=()
        )
        for x, o, d in rows:
            t.add_row(f"{x:g}", f"{100 * o:.0f}%", f"{100 * d:.0f}%")
        out.print(t)
    out.print(f"wrote {out_dir}/fig6{{a,b,c}}_*.csv and .png", markup=False)


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
        Path, typer.Argument(help="Fabric scenario (JSON or YAML); default: seed 003's multimedia set-up.")
    ] = Path("examples/fabric/multimedia.json"),
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
    from rtnetlab import experiments

    if not scenario.exists():
        raise UserError(f"{scenario}: no such file")
    reports = experiments.fabric(scenario, scheduler, duration, warmup, reference_rate, seed)
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
            f"{r['bound_us']:,.1f}",
        )
    out.print(table)


@app.command("report")
def report_cmd(
    file: FileArg,
    output: Annotated[
        Path, typer.Option("-o", "--output", help="The HTML page; .csv and .json are written beside it.")
    ] = Path("report.html"),
    duration: Annotated[str, typer.Option("--duration", help="Simulated time, e.g. 1s or 500ms.")] = "1s",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random generator.")] = 1,
    method: Annotated[str, typer.Option("--method", "-m", help="best, tfa, sfa or afdx-naive")] = "best",
    as_json: JsonOpt = False,
) -> None:
    """One self-contained HTML page: violations, topology, bounds vs simulation, CDFs, ports."""
    from rtnetlab import report as report_mod

    seconds = _quantity("duration", duration, "--duration")
    if seconds <= 0:
        raise UserError(f"--duration: must be positive, got {duration}")
    net = model.load_file(file)
    summary, paths = report_mod.generate(
        net,
        output,
        method=method,
        duration_ns=round(seconds * 1e9),
        seed=seed,
        progress=not as_json and sys.stderr.isatty(),
    )
    if as_json:
        files = {k: str(p) for k, p in paths.items()}
        emit_json({"files": files, "summary": summary, "warnings": net.warnings})
        return
    _warn(net)
    f = summary["flows"]
    out.print(
        f"wrote {paths['html']} (+ {paths['csv'].name}, {paths['json'].name}): {f['ok']}/{f['total']} bounds "
        f"meet their deadline, {f['miss']} miss, {f['unbounded']} unbounded",
        markup=False,
    )
    if not summary["clean"]:
        n = sum(len(v) for v in summary["violations"].values())
        err.print(f"{n} violation(s) or overload(s): see the top of the report", style="bold red")
    if summary["violations"]["sim_above_bound"]:
        err.print("simulated maximum ABOVE its bound: this must never happen", style="bold red")


@app.command()
def demo(as_json: JsonOpt = False) -> None:
    """Run the embedded AFDX case study end to end."""
    from rtnetlab import demo as demo_mod

    demo_mod.run(as_json=as_json)


def main(argv: list[str] | None = None) -> int:
    argv = _hoist_limits(sys.argv[1:] if argv is None else list(argv))
    try:
        rc = app(args=argv, prog_name="rtnetlab", standalone_mode=False)
        return rc if isinstance(rc, int) else 0
    except ModelError as e:
        for w in e.warnings:
            err.print(w, markup=False)
        for line in e.lines:
            err.print(line, markup=False)
        return 2
    except UserError as e:
        err.print(str(e), markup=False)
        return 2
    except typer.Exit as e:
        return e.exit_code
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130
    except Exception as e:  # click's own usage errors (recent typer vendors click as typer._click)
        try:
            from typer._click.exceptions import ClickException
        except ImportError:
            from click.exceptions import ClickException

        if isinstance(e, ClickException):
            e.show()
            return e.exit_code
        if isinstance(e, typer.Abort):
            return 130
        raise


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
