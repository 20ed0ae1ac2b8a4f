"""`rtnetlab middleware ...`: the commands of the middleware package (parsing and printing only)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from rtnetlab import limits
from rtnetlab.cli.common import comma_list
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


def int_list(option: str, text: str, minimum: int = 1) -> list[int]:
    """A comma-separated list of integers, each at least `minimum`."""

    def at_least_minimum(word: str) -> int:
        v = int(word)
        if v < minimum:
            raise UserError(f"{option}: each value must be at least {minimum}, got {v}")
        return v

    bad = "{option}: expected comma-separated integers, got '{item}'"
    return comma_list(option, text, at_least_minimum, bad=bad)


def duration_us(option: str, text: str) -> float:
    """A duration with its unit (e.g. 800us, 1.5ms, 1s), in microseconds."""
    from rtnetlab import _core

    try:
        seconds = _core.parse_quantity("duration", text)
    except ValueError as e:
        raise UserError(f"{option}: {e}") from None
    return seconds * 1e6


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


def check_placement(placement: str) -> None:
    from rtnetlab.middleware.placement import PLACEMENTS


    if placement not in PLACEMENTS:
        raise UserError(f"--placement: expected one of {', '.join(PLACEMENTS)}, got '{placement}'")


def backend_list(text: str, known, refused=()) -> list[str]:
    """`--backends`: comma-separated names among `known` (less `refused`), each once, at least one."""
    names = [b.strip() for b in text.split(",") if b.strip()]
    allowed = [b for b in known if b not in refused]
    for b in names:
        if b not in allowed:
            raise UserError(f"--backends: unknown backend '{b}' (known: {', '.join(allowed)})")
    if not names or len(set(names)) != len(names):
        raise UserError("--backends: give each backend once, at least one")
    return names


def at_least(option: str, value: int, minimum: int) -> None:
    if value < minimum:
        rule = "must not be negative" if minimum == 0 else f"must be at least {minimum}"
        raise UserError(f"{option}: {rule}, got {value}")


def out_paths(out_dir: Path | None, kind: str) -> dict[str, Path] | None:
    """The files of `--out DIR`, checked before anything runs."""
    if out_dir is None:
        return None
    from rtnetlab.io import output as outfiles

    paths = {"json": Path(out_dir) / f"{kind}.json", "html": Path(out_dir) / f"{kind}.html"}
    outfiles.check({"--out": paths["json"], "--out (its page)": paths["html"]})
    return paths


def progress_printer(as_json: bool, line):
    """The per-row progress on stderr (none with --json): `line(row)` is its text."""

    def progress(row):
        if not as_json:
            err.print(line(row), markup=False)

    return progress


def finish(kind: str, report: dict, as_json: bool, paths: dict[str, Path] | None, print_tables) -> None:
    """What every command does with its results: the skipped lines on stderr, the JSON or the
    tables on stdout, the files of --out (written whole, the page with its plots). Nothing
    measured because every backend was skipped is one line, exit 2 (nothing written)."""
    report = {**report, "experiment": kind}
    if not report["rows"] and report["skipped"]:
        raise UserError(f"middleware {kind}: nothing measured: " + "; ".join(report["skipped"]))
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
    if paths is not None:
        from rtnetlab.io import output as outfiles
        from rtnetlab.report.middleware import render

        text = json.dumps(report, indent=2, allow_nan=False) + "\n"
        outfiles.write_all({paths["json"]: text, paths["html"]: render(report, str(paths["json"]))})
        err.print(f"wrote {paths['json']} and {paths['html']}", markup=False)
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
    from rtnetlab.middleware import pubsub
    from rtnetlab.middleware.backends import NAMES

    names = backend_list(backends, NAMES)
    subs = int_list("--subscribers", subscribers)
    if max(subs) > 16:
        raise UserError(f"--subscribers: at most 16 subscriber processes, got {max(subs)}")
    sizes = int_list("--payload", payload, pubsub.MIN_PAYLOAD)
    if max(sizes) > 60000:
        raise UserError(f"--payload: at most 60000 bytes (one UDP datagram), got {max(sizes)}")
    at_least("--messages", messages, 1)
    limits.check("messages", messages, "--messages")
    at_least("--warmup", warmup, 0)
    period_us = duration_us("--period", period)
    if not period_us >= 10:
        raise UserError(f"--period: must be at least 10us, got {period}")
    noise_us = duration_us("--noise", noise)
    if noise_us < 0:
        raise UserError(f"--noise: must not be negative, got {noise}")
    check_placement(placement)
    paths = out_paths(out_dir, "pubsub")
    progress = progress_printer(
        as_json,
        lambda row: (
            f"  {row['backend']:<11} {row['subscribers']} sub, {row['payload_bytes']:>5} B: "
            f"mean {_f(row['mean_us'])} us, max {_f(row['max_us'])} us, lost {row['lost']}"
        ),
    )
    report = pubsub.run(
        names,
        subs,
        sizes,
        messages,
        placement,
        warmup=warmup,
        period_ns=round(period_us * 1000),
        rt=rt,
        noise_s=noise_us / 1e6,
        progress=progress,
        ddsperf=ddsperf,
    )
    cross = report.get("ddsperf")
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

    finish("pubsub", report, as_json, paths, tables)


def parse_windows(text: str) -> list[tuple[str, int]]:
    """`routing=800us,recorder=700us` → [(name, ns)], in order (back to back from offset 0)."""
    windows = []
    for item in text.split(","):
        name, sep, length = item.strip().partition("=")
        if not sep or not name:
            raise UserError(f"--windows: expected name=duration, got '{item.strip()}'")
        us = duration_us("--windows", length)
        if not us > 0:
            raise UserError(f"--windows: window of {name} must be positive, got {length}")
        windows.append((name.strip(), round(us * 1000)))
    names = [n for n, _ in windows]
    if sorted(names) != ["recorder", "routing"]:
        raise UserError(f"--windows: expected the windows of routing and recorder, got {', '.join(names)}")
    return windows


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
    from rtnetlab.middleware import partitions
    from rtnetlab.testbed import netns

    wins = parse_windows(windows)
    frame_ns = round(duration_us("--major-frame", major_frame) * 1000)
    total = sum(w for _, w in wins)
    if frame_ns < total:
        raise UserError(f"--major-frame: {major_frame} is shorter than the windows' {total / 1000:g}us")
    if frame_ns > 16_000_000:
        raise UserError(
            f"--major-frame: at most 16ms (the analysis evaluates every nanosecond phase), got {major_frame}"
        )
    at_least("--requests", requests, 1)
    limits.check("requests", requests, "--requests")
    if not 16 <= payload <= 1400:
        raise UserError(
            f"--payload: must be in [16, 1400] bytes (no fragmentation, as the paper), got {payload}"
        )
    at_least("--warmup", warmup, 0)
    noise_us = duration_us("--noise", noise)
    if not 1 <= time_scale <= 1000:
        raise UserError(f"--time-scale: between 1 and 1000, got {time_scale:g}")
    threshold_us = duration_us("--disturbance", disturbance)
    if not 0 < threshold_us <= 1e6:
        raise UserError(f"--disturbance: in (0, 1s], got {disturbance}")
    paths = out_paths(out_dir, "partitions")
    netns.check_privileges()
    progress = progress_printer(
        as_json,
        lambda row: f"  {row['scenario']:<29} mean {_f(row['mean_us'])} us, max {_f(row['max_us'])} us",
    )
    report = partitions.run(
        wins,
        frame_ns,
        requests,
        payload=payload,
        warmup=warmup,
        rt=rt,
        noise_s=noise_us / 1e6,
        seed=seed,
        progress=progress,
        time_scale=time_scale,
        disturbance_ns=round(threshold_us * 1000),
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
            out.print(
                f"verdict: the {part['undisturbed']:,} undisturbed requests (no window change and no client "
                f"wake-up later than {disturbance} during their flight; {part['disturbed']:,} disturbed) "
                f"against the bound + {_f(part['allowance_us'])} us (three window changes); host noise "
                f"{_f(part['noise_us'])} us beside",
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

    finish("partitions", report, as_json, paths, tables)


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
    from rtnetlab.middleware import reqresp
    from rtnetlab.testbed import netns

    names = backend_list(backends, reqresp.BACKENDS)
    sizes = int_list("--payload", payload, 16)
    if max(sizes) > 1400:
        raise UserError(f"--payload: at most 1400 bytes (one frame), got {max(sizes)}")

    def busy_time(word: str) -> float:
        us = duration_us("--busy", word)
        if not 0 <= us <= 100_000:
            raise UserError(f"--busy: must be in [0, 100ms], got {word}")
        return us

    busy_us = comma_list("--busy", busy, busy_time, "durations")
    at_least("--requests", requests, 1)
    limits.check("requests", requests, "--requests")
    if not 0 < cpu_cap <= 1:
        raise UserError(f"--cpu-cap: must be in (0, 1], got {cpu_cap}")
    at_least("--warmup", warmup, 0)
    gap_us = duration_us("--gap", gap)
    if gap_us < 0:
        raise UserError(f"--gap: must not be negative, got {gap}")
    noise_us = duration_us("--noise", noise)
    paths = out_paths(out_dir, "reqresp")
    netns.check_privileges()
    progress = progress_printer(
        as_json,
        lambda row: (
            f"  {row['backend']:<9} {row['server']:<11} {row['payload_bytes']:>4} B, "
            f"busy {row['busy_us']:g} us: mean {_f(row['mean_us'])} us, max {_f(row['max_us'])} us"
        ),
    )
    report = reqresp.run(
        names,
        sizes,
        busy_us,
        requests,
        cpu_cap,
        warmup=warmup,
        gap_ns=round(gap_us * 1000),
        rt=rt,
        noise_s=noise_us / 1e6,
        progress=progress,
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

    finish("reqresp", report, as_json, paths, tables)


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
    from rtnetlab.middleware import cwalker
    from rtnetlab.middleware.backends import NAMES

    names = backend_list(backends, NAMES, refused=("zeromq-ipc",))
    maps = int_list("--mappings", mappings)
    if any(m not in cwalker.MAPPINGS for m in maps):
        raise UserError(f"--mappings: expected 1, 2 or 3, got {mappings}")
    seconds = duration_us("--duration", duration) / 1e6
    limits.check("duration", seconds, "--duration", f"{duration}")
    if seconds < 2:
        raise UserError(f"--duration: at least 2s (the first second is warm-up), got {duration}")
    check_placement(placement)
    noise_us = duration_us("--noise", noise)
    if noise_us < 0:
        raise UserError(f"--noise: must not be negative, got {noise}")
    paths = out_paths(out_dir, "cwalker")
    progress = progress_printer(
        as_json,
        lambda row: (
            f"  {row['backend']:<7} M{row['mapping']}: "
            f"mean {_f(row['mean_us'])} us, max {_f(row['max_us'])} us"
        ),
    )
    report = cwalker.run(
        names, maps, seconds, placement=placement, rt=rt, progress=progress, noise_s=noise_us / 1e6
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

    finish("cwalker", report, as_json, paths, tables)


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
    from rtnetlab.io import jsontext
    from rtnetlab.io import output as outfiles
    from rtnetlab.report.middleware import kind_of, render

    if output is not None and len(results) != 1:
        raise UserError(f"-o: names one page, but {len(results)} results files are given")
    pages = {}
    for src in results:
        try:
            doc = json.loads(Path(src).read_text())
        except OSError as e:
            raise UserError(f"{src}: cannot be read ({e.strerror or e})") from None
        except ValueError as e:
            raise UserError(jsontext.not_json(src, e)) from None
        kind = kind_of(doc, str(src))
        dest = output if output is not None else Path(src).with_suffix(".html")
        pages[dest] = (doc, src, kind)
    outfiles.check(
        {("-o" if output is not None else f"page of {src}"): d for d, (_, src, _) in pages.items()}, results
    )
    outfiles.write_all({dest: render(doc, str(src)) for dest, (doc, src, _) in pages.items()})
    if as_json:
        _emit({"pages": [{"output": str(dest), "results": str(src), "experiment": kind}
                         for dest, (_, src, kind) in pages.items()]})  # fmt: skip
        return
    for dest in pages:
        err.print(f"wrote {dest}", markup=False)
