"""`rtnetlab testbed run | up | down`, `rtnetlab export tc` and `rtnetlab experiment
ethernet-measure`: the commands of the testbed package (parsing and printing only)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from rtnetlab.errors import UserError

app = typer.Typer(help="Run a description on real frames in Linux network namespaces.", no_args_is_help=True)
export_app = typer.Typer(help="Configurations for real hosts.", no_args_is_help=True)

out = Console(emoji=False, highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 250)
err = Console(emoji=False, stderr=True, highlight=False, soft_wrap=True)

FileArg = Annotated[Path, typer.Argument(help="Network description (.yaml, .yml, .json, or WOPANet .xml)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON (errors too).")]
#: --json of the commands writing a script: what was written instead of the human lines.
ScriptJsonOpt = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print machine-readable JSON (errors too): the file written, its number of lines, what the "
        "script cannot express and the warnings (output, lines, not_expressed, warnings); without -o "
        "the script itself too (script).",
    ),
]
ModeOpt = Annotated[
    str,
    typer.Option(
        "--switch",
        help="kernel (qdiscs and tc filters: FIFO, static priority, token bucket) or user "
        "(the user-space switch running the engine's schedulers, every kind).",
    ),
]


def _choice(option: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise UserError(f"{option}: expected one of {', '.join(allowed)}, got '{value}'")
    return value


def _emit(data: dict) -> None:
    sys.stdout.write(json.dumps(data, indent=2, allow_nan=False) + "\n")


def _write_script(
    output: Path | None, script: str, missing: list[str], warnings: list[str], as_json: bool
) -> None:
    """An exported script to `output` (executable from the start: no chmod through a path, which
    would follow a link) or to stdout, what it cannot express and the description's warnings on
    stderr; with --json, all of it as one JSON document instead."""
    from rtnetlab.io import output as outfiles

    if not as_json:
        for w in warnings:
            err.print(w, markup=False)
    if output is not None:
        outfiles.atomic_write(output, script, mode=0o755)
    if as_json:
        summary = {"output": None if output is None else str(output), "lines": len(script.splitlines())}
        if output is None:
            summary["script"] = script
        _emit({**summary, "not_expressed": list(missing), "warnings": list(warnings)})
        return
    if output is None:
        sys.stdout.write(script)
    else:
        out.print(f"wrote {output}", markup=False)
    for m in missing:
        err.print(f"not expressed: {m}", markup=False, style="yellow")


def _us(x: float | None) -> str:
    return "-" if x is None else f"{x:,.1f}"


def print_report(report: dict, limit: int = 40) -> None:
    k = report.get("time_scale", 1)
    scale = f", time scale {k:g}: model time" if k != 1 else ""
    basis = report.get("latency_basis", "measured")
    t = Table(
        title=f"testbed ({report['mode']} mode{scale}): {basis} beside bound and simulated, per route "
        "(us; verdict on the frames the host did not disturb)"
    )
    for c in (
        "flow",
        "destination",
        "plane",
        "count",
        "lost",
        "disturbed",
        "idle max",
        "mean",
        "max",
        "undisturbed max",
        "less host",
        "allowance",
        "sim max",
        "bound",
        "verdict",
    ):
        t.add_column(c, justify="left" if c in ("flow", "destination", "plane", "verdict") else "right")
    order = {"ABOVE BOUND": 0, "undecided on this host": 1}
    rows = sorted(
        report["flows"],
        key=lambda f: (order.get(f.get("verdict"), 2), -(f.get("undisturbed_over_bound") or 0)),
    )
    for f in rows[:limit]:
        undecided = f["verdict"].startswith("undecided")
        style = "bold white on red" if f["above_bound"] else ("yellow" if undecided else None)
        disturbed = f["disturbed_late"] + f["disturbed_stall"]
        t.add_row(
            f["flow"],
            f["destination"],
            f["plane"],
            str(f["count"]),
            str(f["losses"]),
            f"{disturbed} ({disturbed / f['count']:.0%})" if f["count"] else "0",
            _us(f.get("idle_max_us")),
            _us(f["mean_us"]),
            _us(f["max_us"]),
            _us(f.get("undisturbed_max_us")),
            _us(f.get("undisturbed_max_less_host_us")),
            _us(f.get("allowance_us")),
            _us(f.get("sim_max_us")),
            _us(f.get("bound_us")),
            f["verdict"],
            style=style,
        )
    out.print(t)
    if len(rows) > limit:
        out.print(f"... {len(rows) - limit} more rows (--json for all)", markup=False)
    from rtnetlab.testbed.run import noise_line

    h = report["host"]
    late = h["send_lateness_us"]
    st = h["stalls"]
    out.print(
        f"{noise_line(report)}; send lateness p99 {_us(late['p99_us'])} us, max {_us(late['max_us'])} us "
        f"(wall clock); {st['count']} stall(s) over {st['threshold_us']:g} us, "
        f"longest {_us(st['longest_us'])} us; "
        f"{', '.join(h['scheduling'])}",
        markup=False,
    )
    cap = h.get("capacity")
    if cap:
        out.print(
            f"capacity: {cap['offered_per_s']:,.0f} transmissions/s offered of the "
            f"{cap['transmissions_per_s']:,.0f} this host paces in {cap['mode']} mode "
            f"({'cached, ' if cap['cached'] else ''}measured {cap['measured']})",
            markup=False,
        )
    out.print(
        "verdict: " + report["bounds"]["rule"] + (f"; time scale {k:g}" if k != 1 else ""),
        markup=False,
    )
    for n in report.get("notes", []):
        out.print(f"note: {n}", markup=False)


@app.command("run")
def run_cmd(
    file: FileArg,
    duration: Annotated[
        str, typer.Option("--duration", help="Measured time (wall clock), e.g. 10s.")
    ] = "10s",
    switch: ModeOpt = "kernel",
    baseline: Annotated[
        str, typer.Option("--baseline", help="Idle baseline before the run (host noise); 0s: none.")
    ] = "1s",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the phases, skews and sizes.")] = 1,
    sizes: Annotated[str, typer.Option("--sizes", help="Frame sizes: max, min or uniform.")] = "max",
    release: Annotated[str, typer.Option("--release", help="random or synchronized.")] = "random",
    capture: Annotated[
        Path | None, typer.Option("--capture", help="Write one pcapng per egress port here.")
    ] = None,
    keep: Annotated[
        bool, typer.Option("--keep", help="Leave the namespaces up (remove with testbed down).")
    ] = False,
    simulate: Annotated[
        bool, typer.Option("--simulate/--no-simulate", help="Simulate the same settings beside.")
    ] = True,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write the JSON report here.")] = None,
    rt_priority: Annotated[
        int,
        typer.Option(
            "--rt-priority",
            min=0,
            max=99,
            help="SCHED_FIFO priority of the end systems and switches (0: default scheduler).",
        ),
    ] = 50,
    mute: Annotated[list[str] | None, typer.Option("--mute", help="A flow not to send (repeatable).")] = None,
    time_scale: Annotated[
        float,
        typer.Option(
            "--time-scale",
            help="Run the network K times slower (rates / K, times x K) and report latencies in model "
            "time: the host's noise shrinks K-fold against the bounds.",
        ),
    ] = 1.0,
    disturbance: Annotated[
        str,
        typer.Option(
            "--disturbance",
            help="A frame whose senders were late by more than this in all (wall clock), or whose "
            "flight a stall this long overlapped, is disturbed by the host.",
        ),
    ] = "100us",
    calibrate: Annotated[
        bool,
        typer.Option(
            "--calibrate", help="Measure what this host can pace again (else the cached measurement)."
        ),
    ] = False,
    fail_on_miss: Annotated[
        bool,
        typer.Option(
            "--fail-on-miss", help="Exit 1 when a route's undisturbed maximum is above its bound."
        ),
    ] = False,
    add_modelled: Annotated[
        bool,
        typer.Option(
            "--add-modelled-latency",
            help="Kernel mode: add the switches' technological latency, which its switches cannot "
            "hold a frame for, to each figure from the model (labelled measured + modelled); "
            "without it such a model is refused.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run the network on real frames: namespaces, veth pairs, rate-limited ports, the model's paths;
    an idle baseline measures the host's noise; measured beside bound and simulated."""
    import rtnetlab as rt
    from rtnetlab.cli.common import EXIT_SIGINT, EXIT_SIGTERM

    def say(line: str) -> None:
        if not as_json:
            err.print(line, markup=False)

    result = rt.read(file).run_testbed(
        duration, switch=switch, baseline=baseline, seed=seed, sizes=sizes, release=release, capture=capture,
        keep=keep, simulate=simulate, rt_priority=rt_priority, mute=mute, time_scale=time_scale,
        disturbance=disturbance, calibrate=calibrate, output=output, say=say, add_modelled=add_modelled,
    )
    report = result.data
    code = 0
    if result.interrupted:
        code = EXIT_SIGTERM if result.interrupted == "SIGTERM" else EXIT_SIGINT
    above = result.above_bound
    if as_json:
        _emit(report)
    else:
        for w in report["warnings"]:
            err.print(f"warning: {w}", markup=False, style="bold red" if "ABOVE" in w else None)
        print_report(report)
        if output is not None:
            out.print(f"wrote {output}", markup=False)
        if report.get("kept"):
            out.print(f"kept {report['kept']} (rtnetlab testbed down {report['kept']})", markup=False)
        for c in report.get("captures", []):
            out.print(f"wrote {c}", markup=False)
    if code:
        raise typer.Exit(code)
    if fail_on_miss and above:
        raise typer.Exit(1)


@app.command("up")
def up_cmd(file: FileArg, switch: ModeOpt = "kernel", as_json: JsonOpt = False) -> None:
    """Set the network up (namespaces, links, kernel ports and switches) and leave it for inspection."""
    import rtnetlab as rt

    setup = rt.read(file).testbed_up(switch)
    if as_json:
        _emit(setup)
        return
    for node, ns in setup["namespaces"].items():
        out.print(f"{node}: ip netns exec {ns} ...", markup=False)
    out.print(f"up: {setup['run']} (remove with: rtnetlab testbed down {setup['run']})", markup=False)


@app.command("down")
def down_cmd(
    run: Annotated[str | None, typer.Argument(help="The run to remove (rtnl-xxxxxx).")] = None,
    all_runs: Annotated[
        bool,
        typer.Option(
            "--all", help="Remove every leftover: runs whose process is gone, setups left by up or --keep."
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Also remove rtnl-* namespaces and control groups that no record names (not made by "
            "rtnetlab here, or their record is lost); processes are never killed for them.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Remove what runs made, as their records list it: namespaces (their links and qdiscs go with
    them), processes, control groups, temporary folders. Look-alikes without a record are listed,
    and removed only with --force."""
    import rtnetlab as rt

    report = rt.testbed_down(run, all=all_runs, force=force)
    if as_json:
        _emit(report)
    else:
        for r in report["runs"]:
            why = "kept" if r["kept"] else "its process is gone"
            out.print(
                f"removed run {r['run']} ({r.get('command')}, {why}): "
                + (", ".join(r["removed"]) or "nothing left"),
                markup=False,
            )
            for c in r.get("captures", []):
                out.print(f"  its captures stay: {c}", markup=False)
        for r in report["running"]:
            out.print(
                f"left alone, still running: {r['run']} ({r['command']}, process {r['pid']})", markup=False
            )
        if report["look_alikes"]:
            names = ", ".join(x.get("name") or f"cgroup {x['path']}" for x in report["look_alikes"])
            if force:
                out.print(f"removed without a record (--force): {names}", markup=False)
            else:
                out.print(
                    f"not made by rtnetlab here (no record), left alone: {names} (--force removes them)",
                    markup=False,
                )
        if not (report["runs"] or report["running"] or report["look_alikes"]):
            out.print("nothing to remove", markup=False)
    for line in report["left"]:
        err.print(f"not removed: {line}", markup=False)
    if report["left"]:
        raise typer.Exit(1)


@export_app.command("tc")
def export_tc(
    file: FileArg,
    node: Annotated[str, typer.Option("--node", help="The end system to configure.")],
    dev: Annotated[str, typer.Option("--dev", help="Its network interface on the real host.")],
    plane: Annotated[
        str | None, typer.Option("--plane", help="The plane this interface is on (default: the first).")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write the script here (else stdout).")
    ] = None,
    as_json: ScriptJsonOpt = False,
) -> None:
    """Write a shell script configuring a real Linux end system: an HTB class per VL at its BAG/Lmax rate
    and burst, filters by VL id, the port's scheduler where Linux has it; what it cannot express is said."""
    import rtnetlab as rt
    from rtnetlab.io import output as outfiles
    from rtnetlab.network import _check_dev

    # The script runs as root: what goes into it is checked before anything is read.
    _check_dev(dev)
    if output is not None:
        outfiles.check({"--output": output}, [file])
    net = rt.read(file)
    script, missing = net.export_tc(node, dev, plane)
    _write_script(output, script, missing, net.warnings, as_json)


@export_app.command("taprio")
def export_taprio(
    file: FileArg,
    node: Annotated[str, typer.Option("--node", help="The end system or switch to configure.")],
    dev: Annotated[str, typer.Option("--dev", help="The port's network interface on the real device.")],
    port: Annotated[
        str | None, typer.Option("--port", help="The node's port (default: its only one).")
    ] = None,
    offload: Annotated[
        str,
        typer.Option(
            "--offload",
            help="none (software taprio), txtime (taprio txtime-assist with etf launch times) or full "
            "(the NIC runs the gate list)",
        ),
    ] = "none",
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write the script here (else stdout).")
    ] = None,
    as_json: ScriptJsonOpt = False,
) -> None:
    """Write a shell script configuring a real Linux port's time-aware and credit-based shapers: taprio
    (gate control list), cbs and etf qdiscs, mqprio without gates."""
    import rtnetlab as rt
    from rtnetlab.io import output as outfiles
    from rtnetlab.testbed import taprio

    # The script runs as root: what goes into it is checked before anything is read.
    taprio.check_options(dev, offload)
    if output is not None:
        outfiles.check({"--output": output}, [file])
    net = rt.read(file)
    script, missing = net.export_taprio(node, dev, port, offload)
    _write_script(output, script, missing, net.warnings, as_json)


@export_app.command("yang")
def export_yang(
    file: FileArg,
    node: Annotated[str | None, typer.Option("--node", help="Only this node's ports.")] = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write the JSON here (else stdout).")
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print machine-readable JSON (errors too): the file written and its number of ports "
            "(output, ports); without -o the instance itself too (instance).",
        ),
    ] = False,
) -> None:
    """Write the gate control lists as an IEEE 802.1Qcw YANG instance (ieee802-dot1q-sched-bridge,
    RFC 7951 JSON)."""
    import rtnetlab as rt
    from rtnetlab.io import output as outfiles
    from rtnetlab.testbed import taprio

    if output is not None:
        outfiles.check({"--output": output}, [file])
    doc = rt.read(file).gate_control_yang(node)
    text = json.dumps(doc, indent=2) + "\n"
    if output is not None:
        outfiles.atomic_write(output, text)
    if as_json:
        ports = len(doc[f"{taprio.IF}:interfaces"]["interface"])
        _emit({"output": None if output is None else str(output), "ports": ports,
               **({"instance": doc} if output is None else {})})  # fmt: skip
    elif output is None:
        sys.stdout.write(text)
    else:
        out.print(f"wrote {output}", markup=False)


def experiment_ethernet_measure(
    figure: Annotated[
        str,
        typer.Option(
            "--figure",
            help="size (datagram size, contention at TC), size-shaping (switch priority, TC shaping "
            "at 80 Mbit/s) or load (25 KB datagrams, 0-100 % load), or all.",
        ),
    ] = "all",
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Where the CSV and PNG files go.")] = Path(
        "out/ethernet-measure"
    ),
    messages: Annotated[
        int, typer.Option("--messages", help="Real-time messages per point (the paper: 100000).")
    ] = 10_000,
    policies: Annotated[
        str | None,
        typer.Option(
            "--policies", help="fifo, switch-priority, tc-priority, tc-shaping (default: the figure's)."
        ),
    ] = None,
    sizes: Annotated[str | None, typer.Option("--sizes", help="Background datagram sizes in bytes.")] = None,
    loads: Annotated[
        str | None, typer.Option("--loads", help="Background loads, fractions of 100 Mbit/s.")
    ] = None,
    switch: ModeOpt = "kernel",
    seed: Annotated[int, typer.Option("--seed")] = 1,
    as_json: JsonOpt = False,
) -> None:
    """Seed 002's measurements on the testbed: round trip and jitter of a 570 B / 1 ms real-time
    message under UDP background, FIFO vs switch priority vs TC priority vs TC shaping."""
    import rtnetlab as rt

    def started(fig: str, k: int, n: int, pt) -> None:
        if not as_json:
            err.print(
                f"[{fig} {k}/{n}] {pt.policy}, {pt.size} B at {pt.load:.0%} ({pt.scenario})", markup=False
            )

    result = rt.experiment("ethernet-measure", figure=figure, out_dir=out_dir, messages=messages,
                           policies=policies, sizes=sizes, loads=loads, switch=switch, seed=seed,
                           started=started)
    rows = result.flows
    if as_json:
        _emit(result.document)
        return
    basis = result.document["latency_basis"]
    table = Table(title=f"seed 002 on the testbed (µs, {basis}; round trip = message + echo one-way)")
    for col in (
        "figure",
        "policy",
        "bytes",
        "load",
        "count",
        "lost",
        "rtt mean",
        "rtt p99",
        "rtt max",
        "jitter",
    ):
        table.add_column(col, justify="left" if col in ("figure", "policy") else "right")
    for r in rows:
        table.add_row(
            r["figure"],
            r["policy"],
            str(r["background_bytes"]),
            f"{r['load']:.0%}",
            str(r["count"]),
            str(r["lost"]),
            _us(r["rtt_mean_us"]),
            _us(r["rtt_p99_us"]),
            _us(r["rtt_max_us"]),
            _us(r["jitter_mean_us"]),
        )
    out.print(table)
    noise = [r["noise_us"] for r in rows if r["noise_us"] is not None]
    if noise:
        out.print(f"host noise: {min(noise):.1f} to {max(noise):.1f} us (idle baselines)", markup=False)
    for f in result.files:
        out.print(f"wrote {f}", markup=False)
