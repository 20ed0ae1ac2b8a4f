"""``rtnetlab configure``: parameters chosen by the engine (``rtnetlab.configure``) and written into
the user's own description; the tables of each choice are printed here."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rtnetlab.cli.common import (
    EXIT_VERDICT,
    FileArg,
    JsonOpt,
    check_description_output,
    check_outputs,
    emit_json,
    err,
    fmt_us,
    out,
    table,
    wrote,
)
from rtnetlab.errors import UserError

app = typer.Typer(
    help="Choose parameters that make a description feasible and write them into it.", no_args_is_help=True
)


@app.command("afdx")
def configure_afdx(
    file: FileArg,
    output: Annotated[Path, typer.Option("-o", "--output", help="Write the configured description here.")],
    objective: Annotated[
        str,
        typer.Option(
            "--objective",
            help="first-feasible (least-bandwidth branches first), min-bandwidth (least reserved "
            "bandwidth) or bag-order (the first in BAG order, as the paper's DFS)",
        ),
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
    import rtnetlab as rt

    check_description_output("-o", output)
    check_outputs({"-o": output}, [file])
    result = rt.read(file).configure_afdx(objective, jitter_at, deadlines)
    report, configured = result.data, result.network
    if configured is not None:
        configured.save(output)
    if as_json:
        report["output"] = str(output) if configured is not None else None
        emit_json(report)
    else:
        _print_afdx_configuration(report)
        if configured is not None:
            wrote(output)
    if not report["feasible"]:
        if not as_json:
            err.print(f"{file}: no feasible configuration: {report['reason']}; nothing written", markup=False)
        raise typer.Exit(EXIT_VERDICT)


def _print_afdx_configuration(report: dict) -> None:
    vls = table(
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
    ports = table(
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


@app.command("priorities")
def configure_priorities(
    file: FileArg,
    output: Annotated[Path, typer.Option("-o", "--output", help="Write the prioritised description here.")],
    method: Annotated[str, typer.Option("--method", help="opa (Audsley) or dm (deadline monotonic)")] = "opa",
    as_json: JsonOpt = False,
) -> None:
    """Fixed priorities for every task, message and server (per processor and bus)."""
    import rtnetlab as rt

    check_description_output("-o", output)
    check_outputs({"-o": output}, [file])
    result = rt.read(file).configure_priorities(method)
    report, configured = result.data, result.network
    analysis = result.analysis.data if result.analysis is not None else None
    chains_ok = analysis is None or all(
        c["status"] == "ok" for c in (analysis.get("fixed_priority") or {}).get("chains", [])
    )
    if configured is not None and chains_ok:
        configured.save(output)
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
            from rtnetlab.cli.analyze import print_report

            print_report(analysis)
        if configured is not None and chains_ok:
            wrote(output)
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


@app.command("partition")
def configure_partition(
    file: FileArg,
    output: Annotated[Path, typer.Option("-o", "--output", help="Write the placed description here.")],
    method: Annotated[
        str, typer.Option("--method", help="Priorities: opa (Audsley) or dm (deadline monotonic by window)")
    ] = "opa",
    as_json: JsonOpt = False,
) -> None:
    """Place the tasks of chains on processors, with priorities (DOPA, seed 001E)."""
    import rtnetlab as rt

    check_description_output("-o", output)
    check_outputs({"-o": output}, [file])
    result = rt.read(file).configure_partition(method)
    report, configured = result.data, result.network
    analysis = result.analysis.data if result.analysis is not None else None
    if configured is not None:
        configured.save(output)
    if as_json:
        report["analysis"] = analysis
        emit_json(report)
    else:
        _print_partition(report)
        if analysis is not None:
            from rtnetlab.cli.analyze import print_report

            print_report(analysis)
        if configured is not None:
            wrote(output)
    if configured is None:
        if not as_json:
            err.print(f"{file}: no feasible partition ({method}): {report['reason']}; nothing written",
                      markup=False)
        raise typer.Exit(EXIT_VERDICT)


def _print_partition(report: dict) -> None:
    if not report["feasible"]:
        return
    tasks = table(
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
            fmt_us(t["window_us"]),
            fmt_us(t["jitter_us"]),
            fmt_us(t["response_us"]),
        )
    out.print(tasks)
    if report["messages"]:
        msgs = table(
            "Messages",
            ["message", "chain", "sent by", "priority", "window (us)", "jitter (us)", "response (us)"],
            left=("message", "chain", "sent by"),
        )
        for m in report["messages"]:
            if m["on_bus"]:
                msgs.add_row(m["name"], m["chain"], m["sender"], str(m["priority"]), fmt_us(m["window_us"]),
                             fmt_us(m["jitter_us"]), fmt_us(m["response_us"]))
            else:
                msgs.add_row(m["name"], m["chain"], "- (same processor: not sent)", "-", "-", "-", "-")
        out.print(msgs)
    for c in report["chains"]:
        out.print(
            f"chain {c['name']}: end-to-end bound {fmt_us(c['end_to_end_us'])} us "
            f"<= deadline {fmt_us(c['deadline_us'])} us",
            markup=False,
        )


@app.command("tsn")
def configure_tsn(
    file: FileArg,
    output: Annotated[Path, typer.Option("-o", "--output", help="Write the configured description here.")],
    objective: Annotated[
        str,
        typer.Option(
            "--objective",
            help="bandwidth (most time usable by the unscheduled classes), slack (widest margin between "
            "scheduled windows) or cycle (each port's cycle the least common multiple of its periods)",
        ),
    ] = "bandwidth",
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds the search may take.")] = 60.0,
    solver: Annotated[
        str,
        typer.Option("--solver", help="auto (first fit, then the MILP when small), exact or heuristic"),
    ] = "auto",
    exact_limit: Annotated[
        int, typer.Option("--exact-limit", help="Most stream pairs given to the MILP under --solver auto.")
    ] = 5000,
    max_wait: Annotated[
        str | None,
        typer.Option(
            "--max-wait",
            help="Bounded-wait: the most each scheduled frame may wait in all (summed over its route) behind "
            "other scheduled frames at the gates, e.g. 20us; without it, no-wait (never)",
        ),
    ] = None,
    verify: Annotated[
        str,
        typer.Option(
            "--verify",
            help="Checks of the written description, comma-separated: analysis, simulation, testbed "
            "(root; the user-space switch), or none",
        ),
    ] = "analysis,simulation,testbed",
    sim_duration: Annotated[
        str, typer.Option("--sim-duration", help="Simulated time of the check.")
    ] = "100ms",
    testbed_duration: Annotated[
        str, typer.Option("--testbed-duration", help="Real time of the testbed check.")
    ] = "2s",
    testbed_time_scale: Annotated[
        float,
        typer.Option(
            "--testbed-time-scale",
            help="Run the testbed check K times slower than the model, so that the host's noise shrinks "
            "K-fold against the clock error the windows allow",
        ),
    ] = 1.0,
    as_json: JsonOpt = False,
) -> None:
    """Gate control lists, stream offsets and idle slopes that meet every deadline (802.1Qbv, 802.1Qav)."""
    import rtnetlab as rt
    from rtnetlab import configure
    from rtnetlab.cli.common import comma_list, quantity

    check_description_output("-o", output)
    check_outputs({"-o": output}, [file])
    checks = () if verify == "none" else tuple(comma_list("--verify", verify))
    for c in checks:
        if c not in configure.TSN_CHECKS:
            raise UserError(f"--verify: expected analysis, simulation, testbed or none, got '{c}'")
    sim_s = quantity("duration", sim_duration, "--sim-duration")
    tb_s = quantity("duration", testbed_duration, "--testbed-duration")
    for option, value in (("--sim-duration", sim_s), ("--testbed-duration", tb_s)):
        if not value > 0:
            raise UserError(f"{option}: must be positive")
    from rtnetlab import limits

    limits.check("duration", sim_s, "--sim-duration")
    limits.check("duration", tb_s, "--testbed-duration")
    from rtnetlab.testbed.run import MAX_TIME_SCALE

    if not MAX_TIME_SCALE >= testbed_time_scale >= 1:
        raise UserError(f"--testbed-time-scale: between 1 and {MAX_TIME_SCALE:g}, got {testbed_time_scale:g}")
    configure.max_wait_ns(max_wait)  # a wrong bound before the description is read
    result = rt.read(file).configure_tsn(objective, time_limit, solver, exact_limit, max_wait=max_wait)
    report, configured = result.data, result.network
    verdict_failed = not report["feasible"] or bool(report["misses"]) or bool(report["unconfirmed"])
    if configured is not None and not verdict_failed:
        report["verification"] = configure.verify_tsn(
            configured.data, report, checks, sim_s, tb_s, str(file), testbed_time_scale=testbed_time_scale
        )
        # The testbed measures the host as much as the schedule: reported, never a verdict.
        checked = report["verification"].items()
        verdict_failed = any(v["passed"] is False for k, v in checked if k != "testbed")
        if not verdict_failed:
            configured.save(output)
    if as_json:
        report["output"] = str(output) if configured is not None and not verdict_failed else None
        emit_json(report)
    else:
        _print_tsn(report)
        if configured is not None and not verdict_failed:
            wrote(output)
    if not report["feasible"]:
        if not as_json:
            err.print(f"{file}: no feasible configuration; nothing written", markup=False)
            for r in report["reasons"]:
                err.print(f"  {r}", markup=False)
        raise typer.Exit(EXIT_VERDICT)
    if verdict_failed:
        if not as_json:
            err.print(f"{file}: the configuration failed its checks; nothing written", markup=False)
        raise typer.Exit(EXIT_VERDICT)


def _print_tsn(report: dict) -> None:
    if not report["feasible"]:
        return
    bounded = report.get("mode") == "bounded-wait"
    mode = f"bounded-wait, at most {fmt_us(report['max_wait_ns'] / 1e3)} us" if bounded else "no-wait"
    streams = table(
        f"Streams ({mode}; {report['method']})",
        ["stream", "period (us)", "offset (us)", "hops", "chain (us)"]
        + (["wait (us)"] if bounded else []) + ["deadline (us)"],
        left=("stream",),
    )
    for s in report["streams"]:
        streams.add_row(s["flow"], fmt_us(s["period_ns"] / 1e3), fmt_us(s["offset_ns"] / 1e3), str(s["hops"]),
                        fmt_us(s["chain_us"]), *([fmt_us(s["wait_ns"] / 1e3)] if bounded else []),
                        fmt_us(s["deadline_us"]))
    if report["streams"]:
        out.print(streams)
    ports = table(
        "Gate control lists",
        ["port", "scheduler", "cycle (us)", "streams", "windows", "entries", "scheduled", "usable by others"],
        left=("port", "scheduler"),
    )
    for p in report["ports"]:
        ports.add_row(
            p["port"], p["scheduler"], fmt_us(p["cycle_ns"] / 1e3), str(p["streams"]), str(p["windows"]),
            str(p["entries"]), f"{100 * p['scheduled_share']:.2f} %", f"{100 * p['usable_share']:.2f} %",
        )
    if report["ports"]:
        out.print(ports)
    for scheduler, slopes in report["idle_slopes"].items():
        for c, bps in slopes.items():
            out.print(
                f"idle slope {scheduler}.{c}: {bps / 1e6:,.6f} Mb/s (the smallest that meets its deadlines)",
                markup=False,
            )
    if report["value"] is not None and report["streams"]:
        unit = report["value_unit"]
        show = (lambda v: f"{100 * v:.3f} %") if unit == "share" else (lambda v: f"{v / 1e3:,.3f} us")
        out.print(
            f"objective {report['objective']}: {show(report['value'])}, bound {show(report['bound'])}, "
            f"gap {100 * report['gap']:.2f} % (first fit {report['heuristic_s']:.3f} s, exact "
            f"{report['exact_s']:.3f} s{', ' + report['solver_status'] if report['solver_status'] else ''})",
            markup=False,
        )
    if report.get("solver_note"):
        out.print(report["solver_note"], markup=False)
    for m in report["misses"]:
        err.print(f"deadline missed in the analysis: {m}", markup=False)
    for u in report["unconfirmed"]:
        err.print(f"not confirmed time-triggered: {u}", markup=False)
    for name, v in (report.get("verification") or {}).items():
        word = {True: "passed", False: "FAILED", None: "not decided"}[v["passed"]]
        out.print(f"check {name}: {word}: {v['detail']}", markup=False)
        for k in ("failures", "late", "queued"):
            for line in v.get(k, []):
                out.print(f"  {line}", markup=False)
        for s in v.get("streams", []):
            # A loaded host may disturb every frame of a stream: its jitter is then not measured.
            above = " (above the host noise)" if s["within_noise"] is False else ""
            jitter = ("not measured (no undisturbed frame)" if s["jitter_us"] is None
                      else f"{s['jitter_us']:.1f} us{above}")
            out.print(
                f"  {s['flow']} -> {s['destination']}: {s['count']} frames, chain {s['chain_us']:.3f} us, "
                f"measured {s['min_us']:.1f}..{s['max_us']:.1f} us (mean {s['mean_us']:.1f}), "
                f"jitter {jitter}",
                markup=False,
            )


@app.command("dtable")
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
    import rtnetlab as rt
    from rtnetlab import configure, model

    if into is not None and output is None:
        raise UserError("--into: give -o/--output for the description with the schedulers added")
    check_description_output("-o", output)
    check_outputs({"-o": output}, [file, into])
    report = rt.configure_dtable(Path(file)).data
    if not report["feasible"]:
        if as_json:
            emit_json(report)
        else:
            err.print(f"{file}: no feasible table: {report['reason']}; nothing written", markup=False)
        raise typer.Exit(EXIT_VERDICT)
    if output is not None:
        if into is not None:
            model.write(configure.insert_schedulers(into, report["schedulers"], prefix), output)
        else:
            model.write({"schedulers": {prefix + k: v for k, v in report["schedulers"].items()}}, output)
    if as_json:
        emit_json(report)
        return
    _print_dtable_configuration(report)
    if output is not None:
        wrote(output)


def _print_dtable_configuration(report: dict) -> None:
    plan = report["decoupling"]["plan"]
    t4 = table(
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
    t5 = table(
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
