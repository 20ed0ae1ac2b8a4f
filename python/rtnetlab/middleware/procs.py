"""The harness's worker processes: started with a JSON spec (in a board's namespace when placed
there), talked to in JSON lines, and always stopped (terminate, then kill) when the block ends.
Each is recorded in the run's record (`rtnetlab.ownership`) as soon as it has a pid, dies with
the harness (parent-death signal) and stops when its stdin, the control pipe, closes."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from rtnetlab import ownership
from rtnetlab.middleware.backends import BackendUnavailable


class Worker:
    def __init__(self, prefix: list[str], spec: dict, label: str, logdir: Path, module: str = "worker"):
        self.label = label
        self.log = logdir / f"{label}-{time.monotonic_ns()}.err"
        self.lines: queue.Queue = queue.Queue()
        with open(self.log, "w") as errf:
            self.p = ownership.spawn(
                [*prefix, sys.executable, "-m", f"rtnetlab.middleware.{module}", json.dumps(spec)],
                what=f"{module} {label}",
                guarded=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errf,
                text=True,
                start_new_session=True,  # a terminal's Ctrl-C reaches the harness, which stops us
            )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.p.stdout:
            try:
                self.lines.put(json.loads(line))
            except ValueError:
                continue
        self.lines.put(None)

    def _last_error(self) -> str:
        try:
            lines = [x for x in self.log.read_text().strip().splitlines() if x.strip()]
        except OSError:
            lines = []
        return lines[-1] if lines else f"exit code {self.p.poll()}"

    def expect(self, key: str, timeout: float, what: str) -> dict:
        """The next message carrying `key`; BackendUnavailable (one line) on an error message,
        the process's end, or `timeout` seconds."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise BackendUnavailable(f"{what}: timed out after {timeout:.0f} s")
            try:
                msg = self.lines.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            if msg is None:
                raise BackendUnavailable(f"{what}: {self.label} stopped ({self._last_error()})")
            if "error" in msg:
                raise BackendUnavailable(msg["error"])
            if key in msg:
                return msg

    def send(self, line: str) -> None:
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        for f in (self.p.stdin, self.p.stdout):
            try:
                f.close()
            except OSError:
                pass
        run = ownership.current()
        if run is not None:
            run.ended(self.p.pid)


class Workers:
    """Every worker of a block; all stopped when it ends (exceptions, Ctrl-C, SIGTERM included)."""

    def __init__(self, logdir: Path):
        self.logdir = logdir
        self.all: list[Worker] = []

    def start(self, prefix, spec, label, module="worker") -> Worker:
        w = Worker(prefix, spec, label, self.logdir, module)
        self.all.append(w)
        return w

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        with ownership.held_signals():
            for w in self.all:
                w.stop()
        return False


def measure_cases(
    tmp: Path, cases, measure, rows: list, skipped: list, progress=None, label: str = ""
) -> None:
    """Measures each case (a tuple of arguments) as `measure(ws, *case)` in a block of workers of
    its own (all stopped after it, whatever happens), appending the row it returns and reporting
    it to `progress`. A backend that is unavailable or fails (BackendUnavailable) ends the cases:
    its one-line reason goes to `skipped`."""
    try:
        for case in cases:
            with Workers(tmp) as ws:
                row = measure(ws, *case)
            rows.append(row)
            if progress:
                progress(row)
    except BackendUnavailable as e:
        skipped.append(str(e).splitlines()[0])
