"""Running the packet simulator from the front: slices with a progress bar, Ctrl-C stops early and
still reports what was measured."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from rtnetlab.errors import UserError
from rtnetlab.model import Network


def run(net: Network, config: dict, progress: bool = True, trace: Path | None = None) -> dict:
    """Simulates `net` with `config` (the engine's SimConfig as a dict); returns the report, and
    writes a pcapng trace to `trace` if given (written whole through a temporary file)."""
    try:
        sim = net.handle.simulation(json.dumps(config))
    except ValueError as e:
        raise UserError(f"{net.source or 'network'}: {e}") from None
    duration = sim.duration_ns
    # Slices short enough to stay responsive (progress, Ctrl-C), long enough to cost nothing.
    step = max(duration // 200, 1_000_000)
    interrupted = False
    bar = Progress(
        TextColumn("simulating"),
        BarColumn(),
        TextColumn("{task.fields[sim]} simulated"),
        TimeElapsedColumn(),
        transient=True,
        disable=not progress,
    )
    with bar:
        task = bar.add_task("sim", total=duration, sim="0 s")
        try:
            t = 0
            while t < duration:
                t = min(t + step, duration)
                sim.run_until(t)
                bar.update(task, completed=t, sim=f"{t / 1e9:.3g} s")
        except KeyboardInterrupt:
            interrupted = True
    sim.finish()
    report = json.loads(sim.report_json())
    report["interrupted"] = interrupted
    if trace is not None:
        tmp = trace.with_name(trace.name + ".tmp")
        try:
            report["stats"]["trace_frames"] = sim.write_pcapng(tmp)
            tmp.replace(trace)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise UserError(f"--trace: {e}") from None
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


