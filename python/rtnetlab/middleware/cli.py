"""`rtnetlab middleware ...`: the commands of the middleware package (parsing and printing only)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from rtnetlab.errors import UserError
from rtnetlab.middleware.rows import figure as _f
from rtnetlab.middleware.rows import host_line, row_name

app = typer.Typer(
    help="Middleware latency laboratory (publish/subscribe, partitions, request/response).",
    no_args_is_help=True,
)

out = Console(emoji=False, highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 250)
err = Console(emoji=False, stderr=True, highlight=False, soft_wrap=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def _emit(data: dict) -> None:
    sys.stdout.write(json.dumps(data, indent=2, allow_nan=False) + "\n")


OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Directory for the results: <command>.json (as --json) and <command>.html (tables and plots).",
    ),
]


# The request/response commands (partitions, reqresp) share these two.
NoiseOpt = Annotated[str, typer.Option("--noise", help="Length of the timer-noise probe (0s: none).")]
RequestWarmupOpt = Annotated[int, typer.Option("--warmup", help="Requests sent first and discarded.")]


def progress_printer(as_json: bool, line):
    """The per-row progress on stderr (none with --json): `line(row)` is its text."""

    def progress(row):
        if not as_json:
            err.print(line(row), markup=False)

    return progress


def finish(result, as_json: bool, print_tables) -> None:
    """What every command does with its results (`rtnetlab.middleware`'s): the skipped lines
    on stderr, the JSON or the tables on stdout, the files of --out written (exit 1 when nothing
    was measured and nothing skipped)."""
    report = result.data
    for line in report["skipped"]:
        err.print(line, markup=False)
    for r in report["rows"]:
        for w in r.get("warnings", []):
            err.print(f"warning: {row_name(r)}: {w}", markup=False, style="bold red" if "OVER" in w else None)
    if as_json:
        _emit(report)
    else:
        print_tables(report)
        out.print(host_line(report["host"]), markup=False)
    if result.files:
        err.print(f"wrote {result.files[0]} and {result.files[1]}", markup=False)
    if not report["rows"]:
        raise typer.Exit(1)


@app.command("pubsub")
def pubsub_cmd(
    backends: Annotated[
        str, typer.Option("--backends", help="Comma-separated: udp, zeromq (tcp), zeromq-ipc, dds, zenoh.")
    ] = "udp,zeromq,zeromq-ipc,dds,zenoh",
    subscribers: Annotated[
        str, typer.Option("--subscribers", help="Subscriber counts, e.g. 1,2,4.")
    ] = "1,2,4",
    payload: Annotated[
        str, typer.Option("--payload", help="Payload sizes in bytes (at least 16), e.g. 16,100,1000,10000.")
    ] = "16,100,1000,10000",
    messages: Annotated[
        int, typer.Option("--messages", help="Measured messages per row (after the warm-up).")
    ] = 10000,
    warmup: Annotated[int, typer.Option("--warmup", help="Messages sent first and discarded.")] = 100,
    period: Annotated[str, typer.Option("--period", help="The publisher's period, e.g. 1ms.")] = "1ms",
    placement: Annotated[
        str,
        typer.Option("--placement", help="local (one host) or two-boards (two namespaces, 100 Mbit/s link)."),
    ] = "local",
    rt: Annotated[
        bool,
        typer.Option("--rt/--no-rt", help="SCHED_FIFO at maximum priority and CPU pinning when allowed."),
    ] = True,
    noise: Annotated[
        str, typer.Option("--noise", help="Length of the timer-noise probe run first (0s: none).")
    ] = "1s",
    ddsperf: Annotated[
        bool,
        typer.Option(
            "--ddsperf/--no-ddsperf", help="Cross-check the dds rows with Cyclone's native ddsperf."
        ),
    ] = True,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
) -> None:
    """Publish/subscribe latency (seed 001A): a publisher and N subscriber processes per backend,
    subscriber count and payload size."""
    import rtnetlab

    progress = progress_printer(
        as_json,
        lambda row: (
            f"  {row['backend']:<11} {row['subscribers']} sub, {row['payload_bytes']:>5} B: "
            f"mean {_f(row['mean_us'])} us, max {_f(row['max_us'])} us, lost {row['lost']}"
        ),
    )
    result = rtnetlab.middleware(
        "pubsub", backends=backends, subscribers=subscribers, payload=payload, messages=messages,
        warmup=warmup, period=period, placement=placement, rt=rt, noise=noise, ddsperf=ddsperf, out=out_dir,
        progress=progress,
    )
    cross = result.data.get("ddsperf")
    if cross is not None and not cross["available"]:
        err.print(f"ddsperf: not run: {cross['reason']}", markup=False)

    def tables(report):
        t = Table(
            title=f"publish/subscribe latency ({placement}), us, generation to arrival at each subscriber"
        )
        link = any("link_mbps" in r for r in report["rows"])
        extra = ("offered Mbit/s", "link Mbit/s", "link") if link else ()
        for c in (
            "backend",
            "subscribers",
            "payload B",
            "count",
            "lost",
            "min",
            "mean",
            "stdev",
            "p99",
            "max",
            *extra,
        ):
            t.add_column(c, justify="left" if c in ("backend", "link") else "right")
        for r in report["rows"]:
            flags = []
            if r.get("overloaded"):
                flags.append("OVERLOADED")
            if r.get("bypassed"):
                flags.append("BYPASSED")
            t.add_row(
                r["backend"],
                str(r["subscribers"]),
                str(r["payload_bytes"]),
                str(r["count"]),
                str(r["lost"]),
                *(_f(r[k]) for k in ("min_us", "mean_us", "stdev_us", "p99_us", "max_us")),
                *((_f(r.get("offered_mbps")), _f(r.get("link_mbps")), ", ".join(flags) or "ok")
                  if link else ()),  # fmt: skip
                style="bold white on red" if flags else None,
            )
        out.print(t)
        for c in (cross or {}).get("rows", []):
            out.print(
                f"ddsperf (Cyclone's C ping/pong, same configuration) {c['payload_bytes']} B: round trip "
                f"mean {_f(c['rtt_mean_us'])} us (one way {_f(c['one_way_mean_us'])} us), "
                f"p99 {_f(c['rtt_p99_us'])} us",
                markup=False,
            )

    finish(result, as_json, tables)


@app.command("partitions")
def partitions_cmd(
    windows: Annotated[
        str,
        typer.Option(
            "--windows", help="Partition windows in frame order, e.g. routing=800us,recorder=700us."
        ),
    ] = "routing=800us,recorder=700us",
    major_frame: Annotated[
        str, typer.Option("--major-frame", help="The major frame, e.g. 1500us.")
    ] = "1500us",
    requests: Annotated[int, typer.Option("--requests", help="Measured requests per scenario.")] = 10000,
    payload: Annotated[
        int, typer.Option("--payload", help="Request and reply size in bytes (16 to 1400).")
    ] = 1000,
    warmup: RequestWarmupOpt = 50,
    rt: Annotated[bool, typer.Option("--rt/--no-rt", help="SCHED_FIFO and CPU pinning when allowed.")] = True,
    noise: NoiseOpt = "1s",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the requests' random gaps.")] = 1,
    time_scale: Annotated[
        float,
        typer.Option(
            "--time-scale",
            help="Run the windows and the major frame K times longer; latencies given back in model time.",
        ),
    ] = 1.0,
    disturbance: Annotated[
        str,
        typer.Option(
            "--disturbance",
            help="A request during whose flight a window change (or the client) was later than this "
            "(wall clock) is disturbed by the host.",
        ),
    ] = "200us",
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
) -> None:
    """Partitioned DDS (seed 001B): the five scenarios of Tables 1-2 on two emulated nodes, the
    partitions run by a SIGSTOP/SIGCONT window dispatcher, the window analysis's bound beside."""
    import rtnetlab

    progress = progress_printer(
        as_json,
        lambda row: f"  {row['scenario']:<29} mean {_f(row['mean_us'])} us, max {_f(row['max_us'])} us",
    )
    result = rtnetlab.middleware(
        "partitions", windows=windows, major_frame=major_frame, requests=requests, payload=payload,
        warmup=warmup, rt=rt, noise=noise, seed=seed, time_scale=time_scale, disturbance=disturbance,
        out=out_dir, progress=progress,
    )

    def tables(report):
        scale = f", time scale {time_scale:g}: model time" if time_scale != 1 else ""
        t = Table(title=f"request/response round trip (us{scale}), measured | paper's Tables 1-2")
        for c in (
            "scenario",
            "count",
            "lost",
            "min",
            "avg",
            "max",
            "std",
            "per99",
            "disturbed",
            "undist. max",
            "bound",
            "verdict",
            "paper min/avg/max/std/per99",
        ):
            left = c in ("scenario", "verdict", "paper min/avg/max/std/per99")
            t.add_column(c, justify="left" if left else "right")
        for r in report["rows"]:
            p = r["paper"]
            t.add_row(
                r["scenario"],
                str(r["count"]),
                str(r["lost"]),
                *(_f(r[k]) for k in ("min_us", "mean_us", "max_us", "stdev_us", "p99_us")),
                str(r.get("disturbed", "-")),
                _f(r.get("undisturbed_max_us")),
                _f(r.get("bound_us")),
                r.get("verdict", ""),
                "/".join(str(p[k]) for k in ("min_us", "mean_us", "max_us", "stdev_us", "p99_us")),
                style="bold white on red" if r.get("verdict") == "ABOVE BOUND" else None,
            )
        out.print(t)
        part = next((r for r in report["rows"] if r.get("verdict")), None)
        if part:
            test = part.get("verdict_test") or {}
            bins = test.get("bins") or []
            worst = max(bins, key=lambda t: t["ks_d"] / t["ks_critical"], default=None)
            out.print(
                f"verdict: the {part['undisturbed']:,} undisturbed requests (no window change and no client "
                f"wake-up later than {disturbance} during their flight; {part['disturbed']:,} disturbed), "
                f"less {_f(part['allowance_us'])} us (three window changes), against the "
                f"{part.get('bounded_requests', 0):,} routed requests' own bounds in their arrival phase's "
                f"bin (level {test.get('alpha', 0):g})"
                + (
                    f"; closest bin: KS {worst['ks_d']:.3f} of {worst['ks_critical']:.3f}, "
                    f"{worst['above_every_bound']} above every bound of {worst['tail_k']} allowed"
                    if worst
                    else ""
                )
                + f"; host noise {_f(part['noise_us'])} us beside",
                markup=False,
            )
            above = sum(b["above_every_bound"] for b in bins)
            if above:
                w = part.get("worst_request") or {}
                legs = ", ".join("-" if v is None else _f(v) for v in w.get("legs_us") or [])
                out.print(
                    f"warning: {above} undisturbed request(s) above every bound of their bin (the slowest "
                    f"{_f(part['undisturbed_max_us'])} us; its legs from the send, router / server / "
                    f"router: {legs or '-'} us): too few to reject the analysis, and beyond what it covers",
                    markup=False,
                )
        d, a = report.get("dispatcher"), report.get("analysis")
        if d:
            out.print(
                f"window dispatcher (SIGSTOP/SIGCONT): {d['switches']} switches, "
                f"late by mean {_f(d['mean_us'])} us, "
                f"p99 {_f(d['p99_us'])} us, max {_f(d['max_us'])} us",
                markup=False,
            )
        if a:
            out.print(
                f"analysis: extra latency of the windows, worst {_f(a['extra_worst_us'])} us, mean "
                f"{_f(a['extra_mean_us'])} us over arrival phases (measured mean extra "
                f"{_f(a['measured_extra_mean_us'])} us); stage work {_f(a['stage_work_bound_us'])} us "
                f"(bound), {_f(a['stage_work_typical_us'])} us (mean)",
                markup=False,
            )

    finish(result, as_json, tables)


@app.command("reqresp")
def reqresp_cmd(
    backends: Annotated[
        str,
        typer.Option(
            "--backends",
            help="udp-echo (the ideal baseline), icmp-echo (the server's kernel answers, raw socket), dds.",
        ),
    ] = "udp-echo,icmp-echo,dds",
    payload: Annotated[
        str, typer.Option("--payload", help="Request and reply sizes in bytes, e.g. 64,512.")
    ] = "64,512",
    busy: Annotated[
        str, typer.Option("--busy", help="Server processing (busy work) per request, e.g. 0us,100us.")
    ] = "0us,100us",
    requests: Annotated[int, typer.Option("--requests", help="Measured requests per row.")] = 10000,
    cpu_cap: Annotated[
        float,
        typer.Option(
            "--cpu-cap", help="The virtualised server's share of one CPU (cgroup quota), in (0, 1]."
        ),
    ] = 0.1,
    warmup: RequestWarmupOpt = 50,
    gap: Annotated[str, typer.Option("--gap", help="Pause between a reply and the next request.")] = "500us",
    rt: Annotated[
        bool, typer.Option("--rt/--no-rt", help="SCHED_FIFO and pinning of the client when allowed.")
    ] = True,
    noise: NoiseOpt = "1s",
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
) -> None:
    """Request/response on a native and a "virtualised" server (seed 001C): UDP echo (ideal), ICMP
    echo (the kernel's, when raw sockets are allowed) and DDS, the server busy-working per request;
    min/avg/max/stdev/p99 and the derived ratios."""
    import rtnetlab

    progress = progress_printer(
        as_json,
        lambda row: (
            f"  {row['backend']:<9} {row['server']:<11} {row['payload_bytes']:>4} B, "
            f"busy {row['busy_us']:g} us: mean {_f(row['mean_us'])} us, max {_f(row['max_us'])} us"
        ),
    )
    result = rtnetlab.middleware(
        "reqresp", backends=backends, payload=payload, busy=busy, requests=requests, cpu_cap=cpu_cap,
        warmup=warmup, gap=gap, rt=rt, noise=noise, out=out_dir, progress=progress,
    )

    def tables(report):
        t = Table(
            title=f"request/response round trip (us); virtualised = guest namespace, {cpu_cap:g} of a CPU"
        )
        for c in (
            "backend",
            "server",
            "payload B",
            "busy us",
            "count",
            "lost",
            "min",
            "avg",
            "max",
            "stdev",
            "p99",
        ):
            t.add_column(c, justify="left" if c in ("backend", "server") else "right")
        for r in report["rows"]:
            t.add_row(
                r["backend"],
                r["server"],
                str(r["payload_bytes"]),
                f"{r['busy_us']:g}",
                str(r["count"]),
                str(r["lost"]),
                *(_f(r[k]) for k in ("min_us", "mean_us", "max_us", "stdev_us", "p99_us")),
            )
        out.print(t)
        t = Table(title="derived ratios (on the means)")
        cols = [
            "payload B",
            "busy us",
            "dds overhead",
            "udp-echo overhead",
            "icmp-echo overhead",
            "mw share native",
            "mw share virt.",
            "dds deadline share 10 ms",
            "100 ms",
        ]
        for c in cols:
            t.add_column(c, justify="right")

        def pct(x):
            return "-" if x is None else f"{100 * x:.1f} %"

        for d in report["ratios"]:
            t.add_row(
                str(d["payload_bytes"]),
                f"{d['busy_us']:g}",
                pct(d.get("dds_overhead")),
                pct(d.get("udp-echo_overhead")),
                pct(d.get("icmp-echo_overhead")),
                pct(d.get("middleware_share_native")),
                pct(d.get("middleware_share_virtualised")),
                pct(d.get("dds_deadline_share_10ms")),
                pct(d.get("dds_deadline_share_100ms")),
            )
        out.print(t)

    finish(result, as_json, tables)


@app.command("cwalker")
def cwalker_cmd(
    backends: Annotated[
        str, typer.Option("--backends", help="Comma-separated: udp, zeromq, dds, zenoh.")
    ] = "zeromq,dds,zenoh",
    mappings: Annotated[
        str, typer.Option("--mappings", help="The paper's placements M1-M3, e.g. 1,2,3.")
    ] = "1,2,3",
    duration: Annotated[
        str,
        typer.Option("--duration", help="Run time per backend and mapping (the first second is warm-up)."),
    ] = "30s",
    placement: Annotated[
        str, typer.Option("--placement", help="two-boards (M2 and M3 split the modules) or local.")
    ] = "two-boards",
    rt: Annotated[
        bool, typer.Option("--rt/--no-rt", help="SCHED_FIFO at maximum priority and pinning when allowed.")
    ] = True,
    noise: NoiseOpt = "1s",
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
) -> None:
    """The cognitive walker's eight periodic modules (seed 001A, Table I): latency at the AVI per
    backend and placement (assumed topic graph and periods: docs/MIDDLEWARE.md)."""
    import rtnetlab

    progress = progress_printer(
        as_json,
        lambda row: (
            f"  {row['backend']:<7} M{row['mapping']}: "
            f"mean {_f(row['mean_us'])} us, max {_f(row['max_us'])} us"
        ),
    )
    result = rtnetlab.middleware(
        "cwalker", backends=backends, mappings=mappings, duration=duration, placement=placement, rt=rt,
        noise=noise, out=out_dir, progress=progress,
    )

    def tables(report):
        t = Table(title=f"cWalker latency at AVI (us), {placement}; Table I format")
        for c in ("mapping", "protocol", "count", "max", "avg", "stdev", "p99"):
            t.add_column(c, justify="left" if c == "protocol" else "right")
        for r in report["rows"]:
            t.add_row(
                f"M{r['mapping']}",
                r["backend"],
                str(r["count"]),
                *(_f(r[k]) for k in ("max_us", "mean_us", "stdev_us", "p99_us")),
            )
        for p in report["paper"]:
            t.add_row(
                f"M{p['mapping']}",
                f"paper: {p['protocol']}",
                "-",
                _f(p["max_us"]),
                _f(p["mean_us"]),
                _f(p["stdev_us"]),
                "-",
                style="dim",
            )
        out.print(t)

    finish(result, as_json, tables)


@app.command("report")
def report_cmd(
    results: Annotated[
        list[Path], typer.Argument(help="Results of `rtnetlab middleware ... --json` (or --out's .json).")
    ],
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="The page (one results file only; default: beside it, .html)."),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help='Print machine-readable JSON (errors too): under "pages", each page written, with the '
            "results file and the experiment it shows (output, results, experiment).",
        ),
    ] = False,
) -> None:
    """The HTML page (tables and plots) of saved middleware results: one page per results file,
    written beside it (x.json -> x.html) unless -o names it."""
    import rtnetlab
    from rtnetlab.io import output as outfiles

    if output is not None and len(results) != 1:
        raise UserError(f"-o: names one page, but {len(results)} results files are given")
    pages = {}
    for src in results:
        result = rtnetlab.MiddlewareResult.read(src)
        dest = output if output is not None else Path(src).with_suffix(".html")
        pages[dest] = (result, src, result.experiment)
    outfiles.check(
        {("-o" if output is not None else f"page of {src}"): d for d, (_, src, _) in pages.items()}, results
    )
    outfiles.write_all({dest: result.to_html(str(src)) for dest, (result, src, _) in pages.items()})
    if as_json:
        _emit({"pages": [{"output": str(dest), "results": str(src), "experiment": kind}
                         for dest, (_, src, kind) in pages.items()]})  # fmt: skip
        return
    for dest in pages:
        err.print(f"wrote {dest}", markup=False)
