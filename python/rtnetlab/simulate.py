"""Running the packet simulator from the front: slices with a progress bar; Ctrl-C (or SIGTERM)
stops early and still reports what was measured, a second one abandons the trace being written
(nothing is left behind); the `best` bounds set beside the measurements."""

from __future__ import annotations

import contextlib
import math
import sys
from pathlib import Path

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
