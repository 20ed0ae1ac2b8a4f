"""Running the packet simulator from the front: slices with a progress bar; Ctrl-C (or SIGTERM)
stops early and still reports what was measured, a second one abandons the trace being written
(nothing is left behind); the `best` bounds set beside the measurements."""

from __future__ import annotations

import contextlib
import math
import sys
from pathlib import Path
from typing import Any

from rtnetlab.errors import Terminated, UserError
from rtnetlab.io import output as outfiles
from rtnetlab.io.jsontext import loads
from rtnetlab.model import Network

#: Frame transmissions a trace keeps unless told otherwise (`--trace-limit`). A trace record is
#: about 24 bytes in memory during the run, and a frame 76..1550 bytes in the file: a million
#: frames is at most 1.6 GB of pcapng (0.35 GB on a generated 5000-VL network), which a laptop's
#: disk and Wireshark take; the previous 5 million wrote 1.08 GB for one second of that network.
DEFAULT_TRACE_LIMIT = 1_000_000

#: The simulator keeps each link's exact time and rounds its events down to the ns, so a simulated
#: maximum is never above the continuous-time model the bounds are for; the bounds themselves are
#: f64 arithmetic, a few ulps from exact: a maximum above its bound by less than this is that.
SIM_SLACK_US = 1e-6

#: A run estimated to need more memory than this is announced on stderr before it starts (the
#: engine refuses one above its limit, `--memory-limit`).
WARN_MEMORY_BYTES = 1e9

#: The bounds set beside a simulation.
BOUND_METHOD = "best"
NO_BOUNDS = "not asked for (--no-bounds)"


WORKLOADS = ("periodic", "cbr", "poisson", "pareto")


def _quantity(kind: str, value: Any, option: str) -> float:
    """A quantity given as text with its unit, or as a number in SI units (seconds, bits)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    from rtnetlab import _core

    try:
        return _core.parse_quantity(kind, str(value))
    except ValueError as e:
        raise UserError(f"{option}: {e}") from None


def _memory_limit(value: Any) -> int:
    limit = _quantity("size", value, "--memory-limit") / 8
    if not 1 <= limit < 2**64:
        raise UserError(f"--memory-limit: expected a size such as 16000MB, got {value}")
    return int(limit)


def read_sizes(path: Path) -> list[int]:
    """Frame sizes in bytes, one per line (or separated by commas/spaces); '#' starts a comment."""
    try:
        text = path.read_text()
    except OSError as e:
        raise UserError(f"{path}: cannot be read ({e.strerror})") from None
    sizes = []
    for n, line in enumerate(text.splitlines(), 1):
        for word in line.split("#")[0].replace(",", " ").split():
            if not word.isdigit() or not 0 < int(word) < 65536:
                column = line.index(word) + 1
                raise UserError(f"{path}:{n}:{column}: expected frame sizes in bytes, got '{word}'")
            sizes.append(int(word))
    if not sizes:
        raise UserError(f"{path}: no frame sizes")
    return sizes


def config(
    duration: Any = "1s",
    seed: int = 1,
    release: str = "random",
    sizes: str = "uniform",
    size_trace: Path | list[int] | None = None,
    workload: str = "periodic",
    load: float | None = None,
    retransmit: bool = False,
    retransmit_timeout: Any = None,
    dedup: str | None = None,
    dedup_counters: int = 1280,
    trace: Path | None = None,
    trace_limit: int | None = None,
    memory_limit: Any = None,
) -> dict:
    """The engine's SimConfig from a simulation's options, each checked (the messages name the
    command line's options); `size_trace` is a file of frame sizes or the sizes in bytes."""
    seconds = _quantity("duration", duration, "--duration")
    if not seconds > 0:
        raise UserError(f"--duration: must be positive, got {duration}")
    for name, value, allowed in [
        ("--release", release, ("random", "synchronized")),
        ("--sizes", sizes, ("uniform", "max", "min", "trace")),
        ("--workload", workload, WORKLOADS),
    ]:
        if value not in allowed:
            raise UserError(f"{name}: expected one of {', '.join(allowed)}, got '{value}'")
    trace_sizes: list[int] = []
    if size_trace is not None and sizes != "trace":
        # Ignored until now: the sizes the user gave were silently not the ones simulated.
        raise UserError(f"--size-trace: used only with --sizes trace, got --sizes {sizes}")
    if sizes == "trace":
        if size_trace is None:
            raise UserError("--sizes trace: give the frame sizes with --size-trace FILE")
        if isinstance(size_trace, list):
            if not size_trace or not all(isinstance(x, int) and 0 < x < 65536 for x in size_trace):
                raise UserError("--size-trace: expected frame sizes in bytes (1..65535)")
            trace_sizes = list(size_trace)
        else:
            trace_sizes = read_sizes(Path(size_trace))
    if dedup is not None and dedup not in ("first_copy", "hold_until_twin"):
        raise UserError(f"--dedup: expected first_copy or hold_until_twin, got '{dedup}'")
    if load is None:
        load = 1.0 if workload == "cbr" else 0.5
    if workload != "periodic" and not load > 0:
        raise UserError(f"--load: must be positive, got {load}")
    if not 1 <= dedup_counters:
        raise UserError(f"--dedup-counters: must be at least 1, got {dedup_counters}")
    timeout_ns = 0
    if retransmit_timeout is not None:
        timeout = _quantity("duration", retransmit_timeout, "--retransmit-timeout")
        if not timeout >= 1e-9:
            raise UserError(f"--retransmit-timeout: must be at least 1ns, got {retransmit_timeout}")
        retransmit, timeout_ns = True, round(timeout * 1e9)
    if trace_limit is not None and trace is None:
        raise UserError("--trace-limit: give the trace file with --trace FILE")
    work: dict = {"kind": "periodic"}
    if workload in ("cbr", "poisson"):
        work = {"kind": workload, "load": load}
    elif workload == "pareto":
        work = {"kind": "pareto_bursts", "load": load, "alpha": 1.5, "mean_frames": 4.0}
    return {
        "duration_ns": round(seconds * 1e9),
        "seed": seed,
        "release": release,
        "frame_sizes": sizes,
        "workload": work,
        "retransmit": retransmit,
        "retransmit_timeout_ns": timeout_ns,
        "trace_limit": (trace_limit or DEFAULT_TRACE_LIMIT) if trace else 0,
        "dedup": {"counters": dedup_counters, "mode": dedup} if dedup else None,
        "size_trace": trace_sizes,
        "memory_limit_bytes": 0 if memory_limit is None else _memory_limit(memory_limit),
    }


def simulate_configured(
    net: Network,
    config: dict,
    *,
    bounds: bool = True,
    trace: Path | None = None,
    histograms: Path | None = None,
    scenario: str | None = None,
    progress: bool = False,
) -> tuple[dict, Network]:
    """Runs a simulation of `net` with `config` (from :func:`config`): the switched network and
    the CAN buses, the histograms written, the `best` bounds set beside the measurements, the
    warnings (the network's, then the run's) in ``warnings``. Returns the report and the network
    simulated (a scenario's, when one is replayed); ``files`` lists what was written."""
    if config.get("retransmit") and not config.get("retransmit_timeout_ns") and not any(
            f.get("deadline") for f in net.spec.get("flows", [])):
        raise UserError("--retransmit: no flow has a deadline to time out on; give --retransmit-timeout")
    if scenario is not None:
        from rtnetlab.worst_case import replay_setup

        net, config = replay_setup(net, config, scenario)
    info = net.info()
    counts = info["counts"]
    if info["kind"] == "server_graph":
        raise UserError(f"{net.source or 'network'}: a server graph has no frames and no links to simulate; "
                        "analyse it with `rtnetlab analyze`")
    bounds_job = BoundsJob(net, config, analyze=bounds)
    if counts["end_systems"]:
        report = run(net, config, progress=progress, trace=trace)
    else:
        if trace or histograms:
            raise UserError("--trace/--histograms: this description has no switched network to trace")
        report = {"flows": [], "ports": [], "stats": {"events": 0, "frame_hops": 0, "wall_s": 0.0},
                  "interrupted": False}
    if counts["buses"] and not report["interrupted"]:
        bus_config = {"duration_ns": config["duration_ns"], "seed": config.get("seed", 1),
                      "random_offsets": config.get("release", "random") == "random"}
        try:
            report["buses"] = net.simulate_buses(bus_config)
        except ValueError as e:
            raise UserError(f"{net.source or 'network'}: {e}") from None
    written: list[Path] = []
    if trace is not None and report["stats"].get("trace_written"):
        written.append(trace)
    if histograms:
        try:
            write_histograms(report, histograms)
            written.append(histograms)
        except KeyboardInterrupt as e:  # a second Ctrl-C: the measurements are still reported
            report["interrupted"] = True
            report.setdefault("interrupted_by", signal_name(e))
    for f in report["flows"]:
        f.pop("histogram", None)
    report["bounds"] = attach_bounds(net, report, config, job=bounds_job)
    unwritten = histograms if histograms is not None and histograms not in written else None
    report["warnings"] = list(net.warnings) + sim_warnings(report, trace, unwritten)
    report["files"] = [str(p) for p in written]
    return report, net


def simulate(net: Network, *, bounds: bool = True, trace: Path | None = None,
             histograms: Path | None = None, scenario: str | None = None, progress: bool = False,
             **options: Any) -> tuple[dict, Network]:
    """:func:`config` of `options`, the output files checked, then :func:`simulate_configured`."""
    conf = config(trace=trace, **options)
    outfiles.check({k: v for k, v in {"--trace": trace, "--histograms": histograms}.items() if v is not None},
                   [p for p in [net.source and Path(net.source)] if p])
    return simulate_configured(net, conf, bounds=bounds, trace=trace, histograms=histograms,
                               scenario=scenario, progress=progress)


def sim_warnings(report: dict, trace: Path | None, histograms: Path | None) -> list[str]:
    """Warnings of a simulation (`histograms`: a histogram file requested but not written)."""
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
        out_w.append("warning: " + soundness_line(b["above_bound"]))
    return out_w


def soundness_line(rows: list[dict]) -> str:
    first = rows[0]
    if first.get("bus"):
        where = first["violation"]
    else:
        where = (f"{first['flow']} -> {first['destination']} ({first['plane']}): simulated "
                 f"{first['max_us']:,.3f} us > bound {first['bound_us']:,.3f} us")
    return (f"SIMULATED MAXIMUM ABOVE ITS BOUND in {len(rows)} row(s), first {where}: a bound must never "
            "be exceeded; this is a bug in rtnetlab, please report it with the description and --seed")


def signal_name(e: BaseException) -> str:
    return "SIGTERM" if isinstance(e, Terminated) else "SIGINT"


@contextlib.contextmanager
def _progress_bar(shown: bool, duration_ns: int):
    """Yields a function taking the simulated time reached; a bar on the terminal when `shown`
    (rich's progress module is imported only then: it is a good part of a short run's start-up)."""
    if not shown:
        yield lambda _t: None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("simulating"),
        BarColumn(),
        TextColumn("{task.fields[sim]} simulated"),
        TimeElapsedColumn(),
        transient=True,
    )
    with bar:
        task = bar.add_task("sim", total=duration_ns, sim="0 s")
        yield lambda t: bar.update(task, completed=t, sim=f"{t / 1e9:.3g} s")


def run(net: Network, config: dict, progress: bool = True, trace: Path | None = None) -> dict:
    """Simulates `net` with `config` (the engine's SimConfig as a dict); returns the report, and
    writes a pcapng trace to `trace` if given (whole or not at all, by the engine).

    With a trace, `stats` also has `trace_frames` (frames written), `trace_limit` (config's
    `trace_limit`, the most a trace keeps), `trace_truncated` (whether frames were left out:
    tracing runs every port on events, so each of the `frame_hops` transmissions is one record
    until the limit is reached) and `trace_written` (false when an interruption abandoned it).
    `interrupted` says whether Ctrl-C or SIGTERM stopped the run or the trace (`interrupted_by`
    names the signal)."""
    try:
        sim = net.simulation(config)
    except ValueError as e:
        raise UserError(f"{net.source or 'network'}: {e}") from None
    duration = sim.duration_ns
    memory, growth, why = sim.memory_estimate
    if memory > WARN_MEMORY_BYTES:
        grows = f", growing by {growth / 1e12:.3g} GB per simulated ms" if growth > 0 else ""
        sys.stderr.write(f"warning: this run may need about {memory / 1e9:.3g} GB of memory ({why}{grows})\n")
    # Slices short enough to stay responsive (progress, Ctrl-C), long enough to cost nothing.
    step = max(duration // 200, 1_000_000)
    interrupted: str | None = None
    with _progress_bar(progress, duration) as update:
        try:
            t = 0
            while t < duration:
                t = min(t + step, duration)
                sim.run_until(t)
                update(t)
        except KeyboardInterrupt as e:
            interrupted = signal_name(e)
    sim.finish()
    report = loads(sim.report_json())
    if trace is not None:
        stats = report["stats"]
        stats["trace_limit"] = config.get("trace_limit", 0)
        written = None
        try:
            # Checked again now, the run over (a link may have appeared meanwhile), and the engine
            # given the path with its links followed: it opens no link another user made.
            target = outfiles.resolve(trace, f"--trace: {trace}")
            outfiles.make_parent(trace)
            written = sim.write_pcapng(target)
        except KeyboardInterrupt as e:
            # The engine removed its temporary file; nothing of the trace is left.
            interrupted = interrupted or signal_name(e)
        except OSError as e:
            raise UserError(f"--trace: {e}") from None
        stats["trace_written"] = written is not None
        stats["trace_frames"] = written or 0
        stats["trace_truncated"] = written is not None and stats["frame_hops"] > written
    report["interrupted"] = interrupted is not None
    if interrupted:
        report["interrupted_by"] = interrupted
    return report


def write_histograms(report: dict, path: Path) -> None:
    """Latency histograms as CSV rows (flow, destination, plane, upper_us, count), for CDFs;
    written whole or not at all."""
    import csv
    import io

    with outfiles.OutputFile(path) as out:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["flow", "destination", "plane", "upper_us", "count"])
        for f in report["flows"]:
            for upper, count in f["histogram"]:
                w.writerow([f["flow"], f["destination"], f["plane"], upper, count])
            if buf.tell() > 1 << 20:
                out.write(buf.getvalue())
                buf.seek(0)
                buf.truncate()
        out.write(buf.getvalue())


def bounds_not_applicable(net: Network, config: dict, resolved: dict | None = None) -> str | None:
    """Why the analysis' bounds do not hold for this run, if they do not (`resolved`: the
    network's `resolved()`, when the caller has it already)."""
    if config.get("retransmit"):
        return "--retransmit sends frames again, which the analyses do not model"
    cut = [n["name"] for n in (net.resolved() if resolved is None else resolved)["nodes"]
           if n["kind"] == "switch" and n.get("switching") == "cut_through"]
    if cut:
        names = ", ".join(cut[:4]) + (f" and {len(cut) - 4} more" if len(cut) > 4 else "")
        return (f"cut-through switches ({names}): the analyses assume store-and-forward, so their bounds "
                "are not guaranteed here")
    return None


class BoundsJob:
    """The `best` analysis whose bounds are set beside a simulation, computed once the run is
    over. Started beside the run on a thread of its own, it took the run's second core with its
    own two threads and shared the caches: a generated 5000-VL network's run went at a third of
    its speed on two cores, a 265-VL one at two thirds, and the command as a whole was no faster
    on a busy machine (docs/SIMULATION.md, "The bounds after the run")."""

    def __init__(self, net: Network, config: dict, analyze: bool = True, start: bool = True) -> None:
        self.resolved = net.resolved()
        self.why = bounds_not_applicable(net, config, self.resolved) if analyze else NO_BOUNDS
        self._analysis: dict | None = None
        self._error: BaseException | None = None
        # Whether there is an analysis to run (`start`: whether it is wanted at all).
        self._net = net if self.why is None and start else None

    def _run(self, net: Network) -> None:
        try:
            self._analysis = net.analyze(BOUND_METHOD)
        except BaseException as e:  # handed to the caller, in its thread, by result()
            self._error = e

    def result(self) -> tuple[dict | None, str | None]:
        """(the analysis, or None; why there are no bounds, or None), computed on first call."""
        if self._net is not None:
            import threading

            net, self._net = self._net, None
            # On a thread, joined: Ctrl-C interrupts the wait, not the engine's call.
            thread = threading.Thread(target=self._run, args=(net,), name="bounds", daemon=True)
            thread.start()
            thread.join()
        if isinstance(self._error, UserError):
            return None, str(self._error)
        if self._error is not None:
            raise self._error
        return self._analysis, self.why


def attach_bounds(net: Network, report: dict, config: dict, analyze: bool = True,
                  job: BoundsJob | None = None) -> dict:
    """Sets the `best` bound beside every simulated (flow, destination, plane) row: `bound_us`,
    `max_over_bound`, `above_bound` (a simulated maximum above its bound: a soundness bug), and
    the deadline with `late` (some frame arrived after it). An unbounded row has `bound_us` null
    and `bound_reason`. Returns the summary stored as the report's `bounds`. `job`: the analysis
    started before the run (`analyze` is then the job's)."""
    summary: dict = {"method": BOUND_METHOD, "applies": True, "reason": None, "above_bound": [], "late": []}
    has_rows = bool(report.get("flows") or report.get("buses"))
    if job is None:
        job = BoundsJob(net, config, analyze, start=has_rows)
    resolved = job.resolved
    deadlines = {f["name"]: f.get("deadline") for f in resolved.get("flows", [])}
    analysis, why = job.result()
    if not has_rows:  # nothing to set a bound beside: the analysis (and its error) does not matter
        analysis, why = None, job.why
    if why is not None:
        summary.update(applies=False, reason=why)
    bounds = {}
    reasons = None
    if analysis is not None:
        bounds = {(f["flow"], f["destination"], f["plane"]): f for f in analysis["flows"]}
        if any(f["status"] == "unbounded" for f in analysis["flows"]):
            from rtnetlab.results import Reasons

            reasons = Reasons(resolved, net.info(), analysis)
    for f in report.get("flows", []):
        deadline_s = deadlines.get(f["flow"])
        f["deadline_us"] = None if deadline_s is None else deadline_s * 1e6
        f["late"] = bool(f["count"]) and f["deadline_us"] is not None and f["max_us"] > f["deadline_us"]
        b = bounds.get((f["flow"], f["destination"], f["plane"]))
        f["bound_us"] = b["delay_us"] if b else None
        f["max_over_bound"] = (f["max_us"] / b["delay_us"]
                               if b and b["delay_us"] and f["count"] else None)
        f["above_bound"] = bool(b and b["delay_us"] is not None and f["count"]
                                and f["max_us"] > b["delay_us"] + SIM_SLACK_US)
        if b and b["status"] == "unbounded":
            f["bound_reason"] = reasons.flow(b) if reasons else b.get("reason")
        key = {"flow": f["flow"], "destination": f["destination"], "plane": f["plane"]}
        if f["above_bound"]:
            summary["above_bound"].append({**key, "max_us": f["max_us"], "bound_us": f["bound_us"]})
        if f["late"]:
            summary["late"].append({**key, "max_us": f["max_us"], "deadline_us": f["deadline_us"]})
    buses = report.get("buses")
    if buses:
        items = {}
        if analysis is not None and analysis.get("fixed_priority"):
            items = {i["name"]: i for i in analysis["fixed_priority"]["items"]}
        for b in buses["buses"]:
            for m in b["messages"]:
                # A message a server carries has no deadline of its own (its item's is the server's).
                item = items.get(m["name"])
                m["deadline_us"] = item.get("deadline_us") if item and item["status"] != "served" else None
                m["late"] = (bool(m["count"]) and m["deadline_us"] is not None
                             and (m["max_us"] or 0) > m["deadline_us"])
                if m["late"]:
                    summary["late"].append({"message": m["name"], "bus": b["bus"], "max_us": m["max_us"],
                                            "deadline_us": m["deadline_us"]})
        for v in buses.get("violations", []):
            summary["above_bound"].append({"bus": True, "violation": v})
    return summary


def ratio_text(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:.3f}"
