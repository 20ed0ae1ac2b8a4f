"""Running the packet simulator from the front: slices with a progress bar, Ctrl-C stops early and
still reports what was measured."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import sys
import tempfile
from pathlib import Path

from rtnetlab.errors import UserError
from rtnetlab.model import Network

# A run estimated to need more memory than this is announced on stderr before it starts (the
# engine refuses one above its limit, `--memory-limit`).
WARN_MEMORY_BYTES = 1e9

# Frame transmissions a trace keeps unless told otherwise (`--trace-limit`): about 24 bytes each
# in memory during the run.
DEFAULT_TRACE_LIMIT = 5_000_000


def check_output_path(path: Path, option: str) -> None:
    """Checks, before anything runs, that an output of the run (`option`'s file) can be written:
    its directory exists and a file can be created there (one is created and removed again). A
    user error otherwise, and nothing is left behind."""
    if path.is_dir():
        raise UserError(f"{option}: {path}: is a directory")
    parent = path.parent
    if not parent.is_dir():
        problem = "is not a directory" if parent.exists() else "does not exist"
        raise UserError(f"{option}: {path}: directory {parent} {problem}")
    try:
        # A fresh file of its own: never one of the user's, which a fixed name could be.
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise UserError(f"{option}: {path}: cannot be written ({e.strerror or e})") from None


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
    writes a pcapng trace to `trace` if given (written whole through a temporary file).

    With a trace, `stats` also has `trace_frames` (frames written), `trace_limit` (config's
    `trace_limit`, the most a trace keeps) and `trace_truncated` (whether frames were left out:
    tracing runs every port on events, so each of the `frame_hops` transmissions is one record
    until the limit is reached)."""
    try:
        sim = net.handle.simulation(json.dumps(config))
    except ValueError as e:
        raise UserError(f"{net.source or 'network'}: {e}") from None
    duration = sim.duration_ns
    memory, growth, why = sim.memory_estimate
    if memory > WARN_MEMORY_BYTES:
        grows = f", growing by {growth / 1e12:.3g} GB per simulated ms" if growth > 0 else ""
        sys.stderr.write(f"warning: this run may need about {memory / 1e9:.3g} GB of memory ({why}{grows})\n")
    # Slices short enough to stay responsive (progress, Ctrl-C), long enough to cost nothing.
    step = max(duration // 200, 1_000_000)
    interrupted = False
    with _progress_bar(progress, duration) as update:
        try:
            t = 0
            while t < duration:
                t = min(t + step, duration)
                sim.run_until(t)
                update(t)
        except KeyboardInterrupt:
            interrupted = True
    sim.finish()
    report = json.loads(sim.report_json())
    report["interrupted"] = interrupted
    if trace is not None:
        tmp = trace.with_name(trace.name + ".tmp")
        try:
            written = sim.write_pcapng(tmp)
            tmp.replace(trace)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise UserError(f"--trace: {e}") from None
        stats = report["stats"]
        stats["trace_frames"] = written
        stats["trace_limit"] = config.get("trace_limit", 0)
        stats["trace_truncated"] = stats["frame_hops"] > written
    return report


def write_histograms(report: dict, path: Path) -> None:
    """Latency histograms as CSV rows (flow, destination, plane, upper_us, count), for CDFs."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["flow", "destination", "plane", "upper_us", "count"])
            for f in report["flows"]:
                for upper, count in f["histogram"]:
                    w.writerow([f["flow"], f["destination"], f["plane"], upper, count])
        tmp.replace(path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise UserError(f"{path}: cannot be written ({e.strerror})") from None


