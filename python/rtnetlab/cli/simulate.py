"""``rtnetlab simulate``: the options checked, the run (``rtnetlab.simulate``), its tables, warnings
and verdict."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Annotated

import typer

from rtnetlab.cli.common import (
    EXIT_SIGINT,
    EXIT_SIGTERM,
    EXIT_VERDICT,
    FileArg,
    JsonOpt,
    check_outputs,
    emit_json,
    err,
    fmt_opt_us,
    out,
    table,
    wrote,
)
from rtnetlab.tables import DEFAULT_ROWS, ResultTable, RowsOpt, parse_limit


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
            help="Set the best bound beside each simulated maximum (one analysis, run while the "
            "simulation runs: about 0.4 s for 5000 VLs).",
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
    import rtnetlab as rt
    from rtnetlab import simulate as sim_mod

    limit = parse_limit(rows)
    options = dict(duration=duration, seed=seed, release=release, sizes=sizes, size_trace=size_trace,
                   workload=workload, load=load, retransmit=retransmit,
                   retransmit_timeout=retransmit_timeout, dedup=dedup, dedup_counters=dedup_counters,
                   trace_limit=trace_limit, memory_limit=memory_limit)
    # The options checked before the description is read (and an unwritable output before the run).
    sim_mod.config(trace=trace, **options)  # type: ignore[arg-type]
    check_outputs({"--trace": trace, "--histograms": histograms}, [file, size_trace])
    net = rt.load(file)
    result = net.simulate(**options, bounds=with_bounds, trace=trace, histograms=histograms,  # type: ignore[arg-type]
                          scenario=scenario, progress=not as_json and sys.stderr.isatty())
    report = result.data
    written = [Path(p) for p in report.pop("files")]
    warnings = report["warnings"]
    network_warnings = result.network_warnings
    if as_json:
        emit_json(report)
    else:
        for w in network_warnings:
            err.print(w, markup=False)
        if report["flows"]:
            _print_sim(report, limit)
        if report.get("buses"):
            print_bus_sim(report["buses"])
        if written:
            wrote(*written)
        for w in warnings[len(network_warnings):]:
            err.print(w, style="yellow", markup=False)
        if report["bounds"]["above_bound"]:
            err.print(sim_mod.soundness_line(report["bounds"]["above_bound"]), style="bold white on red",
                      markup=False)
    failures = _sim_failures(report) if fail_on_miss else []
    if failures and not as_json:
        from rtnetlab.results import failure_line

        err.print(failure_line(failures, "simulated deadline or bound"), style="bold red", markup=False)
    if report["interrupted"]:
        raise typer.Exit(EXIT_SIGTERM if report.get("interrupted_by") == "SIGTERM" else EXIT_SIGINT)
    if failures:
        raise typer.Exit(EXIT_VERDICT)


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


def print_bus_sim(buses: dict) -> None:
    for b in buses["buses"]:
        t = table(
            f"Bus {b['bus']} (simulated, utilisation {100 * b['utilisation']:.1f}%)",
            ["message", "priority", "count", "min (us)", "mean (us)", "max (us)", "bound (us)",
             "max / bound", "deadline (us)"],
            left=("message",),
        )
        for m in b["messages"]:
            ratio = "-" if not (m["bound_us"] and m["max_us"]) else f"{m['max_us'] / m['bound_us']:.3f}"
            name = m["name"] + (f" (via {m['served_by']})" if m["served_by"] else "")
            prio = "-" if m["priority"] is None else str(m["priority"])
            deadline = fmt_opt_us(m.get("deadline_us")) + (" LATE" if m.get("late") else "")
            t.add_row(name, prio, str(m["count"]), fmt_opt_us(m["min_us"]), fmt_opt_us(m["mean_us"]),
                      fmt_opt_us(m["max_us"]), fmt_opt_us(m["bound_us"]), ratio, deadline,
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
        dd = table(
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
