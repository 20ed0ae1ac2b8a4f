"""One SL-aware application of `rtnetlab slrm run` (seed 001G), run as its own process:
`python -m rtnetlab.cloud.slrmapp RUN-NAME SPEC-JSON`.

A small HTTP service on 127.0.0.1 (a port chosen by the system, printed on stdout as
`{"port": N}` once it listens). `GET /r`: a request, which burns `mandatory` CPU seconds and,
with probability s (the service level), `optional` CPU seconds more (the optional branch, the
paper's recommendations); the answer says whether the optional branch ran and the s it used.
`POST /sl` with `PERIOD F` as its body (the period's number and its matching value f): the
application's private SL controller g_i (the PI rule of `cloud::sl`) moves s (a message older
than the last one applied is ignored), and the answer is the new s. One thread per request, so that
requests in progress share the process's CPU (its cgroup's cap) as in processor sharing.

The process dies with its parent (PR_SET_PDEATHSIG, set before anything else and checked
against the pid the runner gave), and ends when its stdin, the runner's control pipe, closes: a
runner killed by SIGKILL leaves no application behind."""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _die_with_parent() -> None:
    from rtnetlab.ownership import die_with_parent

    die_with_parent()

    def watch() -> None:
        for _ in sys.stdin:
            pass
        os._exit(0)  # the control pipe closed: the runner is gone or done with us

    threading.Thread(target=watch, daemon=True).start()


def burn(seconds: float) -> None:
    """Spends `seconds` of this thread's CPU time (time spent throttled or waiting does not count)."""
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        for _ in range(100):
            x += 1


class App:
    def __init__(self, spec: dict, seed: int):
        from rtnetlab import _core

        self.core = _core
        self.mandatory = float(spec["mandatory"])
        self.optional = float(spec["optional"])
        self.controller = {"kp": 0.1, "ki": 0.3, "min_sl": 0.0, "max_sl": 1.0, **spec.get("controller", {})}
        self.sl = float(spec.get("initial_sl", 0.5))
        self.previous_f = 0.0
        self.period = 0
        self.rng = random.Random(seed)
        self.lock = threading.Lock()

    def request(self) -> tuple[bool, float]:
        with self.lock:
            sl = self.sl
            optional = self.rng.random() < sl
        burn(self.mandatory + (self.optional if optional else 0.0))
        return optional, sl

    def matching(self, period: int, f: float) -> float:
        """Period `period`'s matching value; a late message of an older period is ignored."""
        with self.lock:
            if period > self.period:
                self.sl = self.core.slrm_sl_next(self.sl, f, self.previous_f, **self.controller)
                self.previous_f = f
                self.period = period
            return self.sl


def main(argv: list[str]) -> int:
    _die_with_parent()
    spec = json.loads(argv[1])
    app = App(spec, int(spec.get("seed", 0)))

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path != "/r":
                self.send_error(404)
                return
            optional, sl = app.request()
            self._answer({"optional": optional, "sl": sl})

        def do_POST(self) -> None:  # noqa: N802
            if self.path != "/sl":
                self.send_error(404)
                return
            period, f = self.rfile.read(int(self.headers.get("Content-Length", "0"))).split()
            self._answer({"sl": app.matching(int(period), float(f))})

        def log_message(self, *args) -> None:
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        # A closed loop of up to a few hundred users connects at once.
        request_queue_size = 512

    server = Server(("127.0.0.1", 0), Handler)
    sys.stdout.write(json.dumps({"port": server.server_address[1]}) + "\n")
    sys.stdout.flush()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    server.serve_forever(poll_interval=0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
