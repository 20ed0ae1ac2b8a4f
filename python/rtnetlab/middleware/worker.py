"""One process of a measurement (`python -m rtnetlab.middleware.worker SPEC`): a subscriber, the
publisher, or the timer-noise probe. It speaks JSON lines on stdout to the harness (ready,
warm, done) and takes "go" on stdin; a subscriber writes its latencies to a file. Every worker
dies with the harness (parent-death signal) and stops as soon as its stdin, the harness's control
pipe, closes, whatever it was doing.

The payload starts with the message's sequence number and its CLOCK_MONOTONIC send stamp (16
bytes, little-endian); warm-up messages carry sequence -1 and the end markers -2."""

from __future__ import annotations

import json
import os
import queue
import struct
import sys
import threading
import time

HEADER = struct.Struct("<qQ")
WARM = -1
STOP = -2


_commands: queue.Queue[str] = queue.Queue()


def follow_control() -> None:
    """Called first by every worker program (after `die_with_parent`): the lines of stdin (the
    harness's control pipe) queue up for `command`; its end means the harness is gone or done
    with us, and ends this process at once (a publisher must not run its schedule alone)."""

    def read() -> None:
        for line in sys.stdin:
            _commands.put(line.rstrip("\n"))
        os._exit(3)

    threading.Thread(target=read, daemon=True, name="control").start()


def command(timeout: float | None = None) -> str | None:
    """The next line from the harness; None after `timeout` seconds (0: do not wait)."""
    try:
        return _commands.get_nowait() if timeout == 0 else _commands.get(timeout=timeout)
    except queue.Empty:
        return None


def _say(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _setup(spec: dict) -> dict:
    from rtnetlab.middleware.host import make_realtime

    return make_realtime(spec.get("cpu"), spec.get("rt", True), spec.get("below_max", 0))


def _backend(spec: dict):
    from rtnetlab.middleware import backends

    try:
        return backends.load(spec["backend"], spec["settings"])
    except backends.BackendUnavailable as e:
        _say({"error": str(e)})
        os._exit(1)


def subscriber(spec: dict) -> None:
    import numpy as np

    sched = _setup(spec)
    n = spec["messages"]
    lat = np.full(n, -1, dtype=np.int64)
    done = threading.Event()
    warm = threading.Event()
    last = [time.monotonic()]

    def on_message(data: bytes) -> None:
        now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        seq, sent = HEADER.unpack_from(data)
        last[0] = time.monotonic()
        if seq >= 0:
            if seq < n and lat[seq] < 0:
                lat[seq] = now - sent
        elif seq == WARM:
            if not warm.is_set():
                warm.set()
                _say({"warm": True})
        elif seq == STOP:
            done.set()

    be = _backend(spec)
    try:
        endpoint = be.subscriber(spec["topic"], on_message)
    except Exception as e:
        _say({"error": f"{spec['backend']}: subscriber failed to start: {e}"})
        os._exit(1)
    _say({"ready": True, "endpoint": endpoint, **sched})
    idle = spec.get("idle_s", 3.0)
    while not done.wait(0.1):
        if warm.is_set() and time.monotonic() - last[0] > idle:
            break
    np.save(spec["out"], lat)
    _say({"done": True})
    sys.stdout.flush()
    os._exit(0)  # libraries' receive threads are blocked in their calls: no orderly teardown


def publisher(spec: dict) -> None:
    sched = _setup(spec)
    be = _backend(spec)
    try:
        pub = be.publisher(spec["topic"], spec["peers"])
    except Exception as e:
        _say({"error": f"{spec['backend']}: publisher failed to start: {e}"})
        os._exit(1)
    _say({"ready": True, **sched})
    buf = bytearray(spec["payload"])
    period = spec["period_ns"]
    clock = time.CLOCK_MONOTONIC

    def send(seq: int) -> None:
        HEADER.pack_into(buf, 0, seq, time.clock_gettime_ns(clock))
        pub.publish(bytes(buf))

    # Warm-up until the harness says every subscriber has one (discovery, slow joiners), then
    # `warmup` more, all discarded.
    while command(timeout=max(period / 1e9, 0.002)) is None:
        send(WARM)
    nxt = time.clock_gettime_ns(clock)
    for _ in range(spec["warmup"]):
        send(WARM)
        nxt += period
        _sleep_until(nxt)
    for seq in range(spec["messages"]):
        nxt += period
        _sleep_until(nxt)
        send(seq)
    for _ in range(5):
        time.sleep(0.02)
        send(STOP)
    time.sleep(0.1)
    _say({"done": True})
    os._exit(0)


def _sleep_until(t_ns: int) -> None:
    d = t_ns - time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    if d > 0:
        time.sleep(d / 1e9)


def noise(spec: dict) -> None:
    from rtnetlab.middleware.host import timer_noise

    sched = _setup(spec)
    _say({"noise": timer_noise(spec["seconds"], spec.get("interval_us", 200.0)), **sched})


def main() -> None:
    from rtnetlab.ownership import die_with_parent

    die_with_parent()
    follow_control()
    spec = json.loads(sys.argv[1])
    {"sub": subscriber, "pub": publisher, "noise": noise}[spec["role"]](spec)
    # Other roles (request/response, partitions) register in their own modules.


if __name__ == "__main__":
    main()
