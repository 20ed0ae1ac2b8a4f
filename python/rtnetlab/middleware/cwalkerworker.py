"""One module of the cognitive walker (`python -m rtnetlab.middleware.cwalkerworker SPEC`): it
subscribes to its inputs, says its endpoints, takes its publisher's peers on stdin, then publishes
its topic on its period after "go"; the AVI module records the latency of every input message
(after a one-second warm-up) and writes them to a file."""

from __future__ import annotations

import json
import os
import sys
import threading
import time

from rtnetlab.middleware.worker import HEADER, _backend, _say, _setup, _sleep_until, command, follow_control

WARMUP_S = 1.0


def module(spec: dict) -> None:
    import numpy as np

    sched = _setup(spec)
    be = _backend(spec)
    lat: list[int] = []
    lock = threading.Lock()
    measuring = [False]

    def on_message(data: bytes) -> None:
        now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        _, sent = HEADER.unpack_from(data)
        if measuring[0]:
            with lock:
                lat.append(now - sent)

    endpoints = {}
    try:
        for topic in spec["subscribes"]:
            endpoints[topic] = be.subscriber(topic, on_message if spec["measure"] else (lambda data: None))
    except Exception as e:
        _say({"error": f"{spec['backend']}: {spec['name']} failed to subscribe: {e}"})
        os._exit(1)
    _say({"ready": True, "endpoints": endpoints, **sched})
    peers = json.loads(command())
    pub = be.publisher(spec["topic"], peers)
    _say({"publishing": True})
    command()
    buf = bytearray(spec["payload"])
    period = spec["period_ns"]
    start = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    end = start + int(spec["seconds"] * 1e9)
    warm_end = start + int(WARMUP_S * 1e9)
    nxt, seq = start, 0
    while nxt < end:
        if not measuring[0] and nxt >= warm_end:
            measuring[0] = True
        HEADER.pack_into(buf, 0, seq, time.clock_gettime_ns(time.CLOCK_MONOTONIC))
        pub.publish(bytes(buf))
        seq += 1
        nxt += period
        _sleep_until(nxt)
    time.sleep(0.2)  # the last messages in flight
    measuring[0] = False
    if spec["measure"]:
        with lock:
            np.save(spec["out"], np.array(lat, dtype=np.int64))
    _say({"done": True})
    os._exit(0)


if __name__ == "__main__":
    from rtnetlab.ownership import die_with_parent

    die_with_parent()
    follow_control()
    module(json.loads(sys.argv[1]))
