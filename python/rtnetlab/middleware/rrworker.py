"""Processes of the request/response measurements (`python -m rtnetlab.middleware.rrworker SPEC`):
a UDP echo pair (the NETWORK baseline), an ICMP echo client (raw socket; the server's kernel
answers), a DDS client and server (the server busy-works, then
replies on a second topic), a routing process bridging two DDS domains, and the window
dispatcher that lets the processes of a partition run only inside its windows.

The request carries its sequence number and the client's CLOCK_MONOTONIC stamp; the reply copies
them, so the client measures the round trip (ICMP: in the echo request's data, which the echo
reply returns unchanged)."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import struct
import sys
import threading
import time

from rtnetlab.middleware.worker import HEADER, _backend, _say, _setup, command, follow_control

WARM = -1
CLOCK = time.CLOCK_MONOTONIC


def _now() -> int:
    return time.clock_gettime_ns(CLOCK)


def busy(us: float) -> None:
    """Works (spins) for `us` microseconds of wall time."""
    if us <= 0:
        return
    end = _now() + int(us * 1000)
    while _now() < end:
        pass


ICMP_ECHO_REPLY, ICMP_ECHO_REQUEST = 0, 8
#: type, code, checksum, identifier, sequence number (RFC 792), network byte order.
ICMP_HEADER = struct.Struct("!BBHHH")


def icmp_checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071): the one's complement of the one's complement sum of the
    16-bit big-endian words (an odd last byte padded with a zero byte)."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def icmp_echo_request(ident: int, seq: int, data: bytes) -> bytes:
    """An ICMP echo request (type 8, code 0) with its checksum over header and data."""
    blank = ICMP_HEADER.pack(ICMP_ECHO_REQUEST, 0, 0, ident, seq & 0xFFFF)
    return ICMP_HEADER.pack(ICMP_ECHO_REQUEST, 0, icmp_checksum(blank + data), ident, seq & 0xFFFF) + data


def icmp_echo_data(packet: bytes, ident: int) -> bytes | None:
    """The data of an echo reply to `ident` in an IPv4 packet as a raw socket reads it, or None
    (another ICMP message, someone else's, or a bad checksum)."""
    icmp = packet[(packet[0] & 0x0F) * 4 :]
    if len(icmp) < ICMP_HEADER.size:
        return None
    kind, _code, _sum, who, _seq = ICMP_HEADER.unpack_from(icmp)
    if kind != ICMP_ECHO_REPLY or who != ident or icmp_checksum(icmp) != 0:
        return None
    return icmp[ICMP_HEADER.size :]


def _reply(data: bytes, size: int) -> bytes:
    return data[: HEADER.size] + bytes(max(0, size - HEADER.size))


def echo_server(spec: dict) -> None:
    sched = _setup(spec)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((spec["settings"]["address"], 0))
    _say({"ready": True, "endpoint": f"{spec['settings']['address']}:{s.getsockname()[1]}", **sched})
    while True:
        data, peer = s.recvfrom(65536)
        busy(spec.get("busy_us", 0))
        s.sendto(_reply(data, spec["reply_bytes"]), peer)


class Stamps:
    """Where a request's time on node 2 went: per measured request (sequence number >= 0) and leg
    (0: the request, 1: the reply), when this process's callback started and when its publish
    returned (CLOCK_MONOTONIC, the client's clock: one host). Written on "stop" to
    ``spec["out_stamps"]`` as rows (leg, sequence number, start, end); without it, nothing is kept."""

    def __init__(self, spec: dict) -> None:
        self.out = spec.get("out_stamps")
        self.rows: list[tuple[int, int, int, int]] = []

    def add(self, leg: int, data: bytes, start: int) -> None:
        if self.out and len(data) >= HEADER.size:
            seq = HEADER.unpack_from(data)[0]
            if seq >= 0:
                self.rows.append((leg, seq, start, _now()))

    def serve(self) -> None:
        """Until "stop": then the stamps are written and "stamped" said."""
        while command(None) != "stop":
            pass
        if self.out:
            import numpy as np

            np.save(self.out, np.array(self.rows, dtype=np.int64).reshape(-1, 4))
        _say({"stamped": len(self.rows)})
        os._exit(0)


def server(spec: dict) -> None:
    sched = _setup(spec)
    be = _backend(spec)
    pub = be.publisher("rtnetlab_reply", [])

    stamps = Stamps(spec)

    def on_request(data: bytes) -> None:
        start = _now()
        busy(spec.get("busy_us", 0))
        pub.publish(_reply(data, spec["reply_bytes"]))
        stamps.add(0, data, start)

    be.subscriber("rtnetlab_request", on_request)
    _say({"ready": True, "endpoint": "", **sched})
    stamps.serve()


def router(spec: dict) -> None:
    """Bridges the request topic from domain `domain` to `inner_domain` and the reply back (the
    I/O partition's DDS routing service)."""
    sched = _setup(spec)
    outer = _backend(spec)
    inner = _backend({**spec, "settings": {**spec["settings"], "domain": spec["inner_domain"]}})
    to_inner = inner.publisher("rtnetlab_request", [])
    to_outer = outer.publisher("rtnetlab_reply", [])
    stamps = Stamps(spec)

    def forward(leg: int, pub):
        def on_data(data: bytes) -> None:
            start = _now()
            pub.publish(data)
            stamps.add(leg, data, start)

        return on_data

    outer.subscriber("rtnetlab_request", forward(0, to_inner))
    inner.subscriber("rtnetlab_reply", forward(1, to_outer))
    _say({"ready": True, "endpoint": "", **sched})
    stamps.serve()


def client(spec: dict) -> None:
    """`warmup` + `requests` round trips, one at a time, each after a random gap (uniform arrival
    phases against the server's partition windows); writes the round trips (ns, -1: lost)."""
    import numpy as np

    sched = _setup(spec)
    n, size, timeout = spec["requests"], spec["request_bytes"], spec.get("timeout_s", 1.0)
    rng = random.Random(spec.get("seed", 1))
    got = threading.Event()
    answer = [None]

    if spec["backend"] == "udp-echo":
        host, port = spec["peer"].rsplit(":", 1)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect((host, int(port)))
        s.settimeout(timeout)

        def send(buf: bytes) -> None:
            s.send(buf)

        def wait() -> bytes | None:
            try:
                return s.recv(65536)
            except TimeoutError:
                return None
    elif spec["backend"] == "icmp-echo":
        # The server's kernel answers: the request's data (sequence number, send stamp, padding
        # to the payload size) comes back in the reply. Same IP packet size as the UDP echo's
        # (both headers are 8 bytes). connect() makes the socket see only the server's packets.
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        s.connect((spec["peer"], 0))
        ident = os.getpid() & 0xFFFF

        def send(buf: bytes) -> None:
            s.send(icmp_echo_request(ident, HEADER.unpack_from(buf)[0], buf))

        def wait() -> bytes | None:
            end = time.monotonic() + timeout
            while (left := end - time.monotonic()) > 0:
                s.settimeout(left)
                try:
                    data = icmp_echo_data(s.recv(65536), ident)
                except TimeoutError:
                    return None
                if data is not None:
                    return data
            return None
    else:
        be = _backend(spec)
        pub = be.publisher("rtnetlab_request", [])

        def on_reply(data: bytes) -> None:
            answer[0] = data
            got.set()

        be.subscriber("rtnetlab_reply", on_reply)

        def send(buf: bytes) -> None:
            got.clear()
            answer[0] = None
            pub.publish(buf)

        def wait() -> bytes | None:
            return answer[0] if got.wait(timeout) else None

    _say({"ready": True, **sched})
    buf = bytearray(size)
    # Warm-up: until a first reply comes back (discovery), then `warmup` more; all discarded.
    deadline = time.monotonic() + spec.get("discovery_s", 30)
    while True:
        HEADER.pack_into(buf, 0, WARM, _now())
        send(bytes(buf))
        if wait() is not None:
            break
        if time.monotonic() > deadline:
            _say({"error": f"{spec['backend']}: no reply within {spec.get('discovery_s', 30)} s"})
            os._exit(1)
    rtt = np.full(n, -1, dtype=np.int64)
    sent = np.zeros(n, dtype=np.int64)  # each request's send stamp (its phase in the windows)
    gap_ns = spec.get("gap_ns", 0)
    # This process's stalls: woken later than its gap asked, by more than the threshold.
    threshold = spec.get("disturbance_ns", 200_000)
    stalls = []
    for seq in range(-spec["warmup"], n):
        pause = (spec.get("min_gap_ns", 200_000) + rng.random() * gap_ns) / 1e9
        due = _now() + int(pause * 1e9)
        time.sleep(pause)
        stamp = _now()
        if stamp - due > threshold:
            stalls.append((due, stamp))
        if seq >= 0:
            sent[seq] = stamp
        HEADER.pack_into(buf, 0, seq, stamp)
        send(bytes(buf))
        while True:
            data = wait()
            if data is None:
                break
            r_seq, stamp = HEADER.unpack_from(data)
            if r_seq == seq:  # a late reply to an earlier, timed-out request is skipped
                if seq >= 0:
                    rtt[seq] = _now() - stamp
                break
            if spec["backend"] == "dds":
                got.clear()
    np.save(spec["out"], rtt)
    if spec.get("out_sent"):
        np.save(spec["out_sent"], sent)
    if spec.get("out_stalls"):
        np.save(spec["out_stalls"], np.array(stalls, dtype=np.int64).reshape(-1, 2))
    _say({"done": True})
    os._exit(0)


def dispatcher(spec: dict) -> None:
    """A cyclic window schedule by SIGSTOP/SIGCONT: at each window's start the other partitions'
    processes are stopped and its own continued. Runs until "stop" on stdin, then continues
    everyone; reports how late each switch was (its precision)."""
    sched = _setup(spec)
    frame = spec["major_frame_ns"]
    groups = {name: pids for name, pids in spec["groups"].items()}
    everyone = [p for pids in groups.values() for p in pids]
    slots, offset = [], 0
    for name, length in spec["windows"]:
        slots.append((offset, name))
        offset += length
    if offset < frame:
        slots.append((offset, None))  # idle until the frame ends

    def signal_all(pids, sig):
        for p in pids:
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass

    late = []
    # Switches later than the threshold: the windows were not where the schedule says (stalls).
    threshold = spec.get("disturbance_ns", 200_000)
    stalls = []
    start = _now() + 5_000_000
    cycle = 0
    _say({"ready": True, **sched})
    try:
        while True:
            for off, name in slots:
                target = start + cycle * frame + off
                d = target - _now()
                if d > 0:
                    time.sleep(d / 1e9)
                signal_all([p for p in everyone if p not in groups.get(name, [])], signal.SIGSTOP)
                signal_all(groups.get(name, []), signal.SIGCONT)
                done = _now()
                late.append(done - target)
                if done - target > threshold:
                    stalls.append((target, done))
            cycle += 1
            if cycle % 16 == 0 and command(0) is not None:
                break
    finally:
        signal_all(everyone, signal.SIGCONT)
    from rtnetlab.middleware.stats import summary

    if spec.get("out_stalls"):
        import numpy as np

        np.save(spec["out_stalls"], np.array(stalls[1:], dtype=np.int64).reshape(-1, 2))
    s = summary(late[1:])
    _say(
        {
            "dispatch": {
                "switches": s["count"],
                "start_ns": start,  # CLOCK_MONOTONIC: the first major frame's start
                "major_frame_ns": frame,
                "mean_us": s["mean_us"],
                "p99_us": s["p99_us"],
                "max_us": s["max_us"],
            }
        }
    )
    os._exit(0)


def watch(spec: dict) -> None:
    """The host's stalls on one CPU while a scenario runs: at the highest priority, a wake-up
    every 200 us; one later than the threshold means the CPU was taken (by an interrupt, another
    highest-priority task, the hypervisor), and the interval is written down. Until "stop"."""
    import numpy as np

    sched = _setup(spec)
    threshold = spec.get("disturbance_ns", 200_000)
    stalls = []
    _say({"ready": True, **sched})
    while command(0) is None:
        due = _now() + 200_000
        time.sleep(200e-6)
        now = _now()
        if now - due > threshold:
            stalls.append((due, now))
    np.save(spec["out_stalls"], np.array(stalls, dtype=np.int64).reshape(-1, 2))
    _say({"watched": len(stalls)})
    os._exit(0)


def main() -> None:
    from rtnetlab.ownership import die_with_parent

    die_with_parent()
    follow_control()
    spec = json.loads(sys.argv[1])
    roles = {
        "echo_server": echo_server,
        "server": server,
        "router": router,
        "client": client,
        "dispatcher": dispatcher,
        "watch": watch,
    }
    roles[spec["role"]](spec)


if __name__ == "__main__":
    main()
