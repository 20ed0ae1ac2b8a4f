"""Seed 001C's request/response benchmark: a client on board 1 writes an array on a request
topic, the server busy-works and replies on a second topic; the client measures the round trip.
The "ideal" baseline is a UDP echo (no middleware, no serialisation); the ICMP echo is a second
one below it: the server's kernel answers (no server process, no socket, no busy work, and no
CPU cap: the reply is sent in the kernel's softirq), the client reads it on a raw socket, so it
needs CAP_NET_RAW (root). The server runs either
natively on board 2, or "virtualised": in its own namespace (a guest) behind a link from board 2,
in a per-run cgroup capped to a share of one CPU (a VM's vCPU as the host's scheduler sees it).

Derived ratios (the catalogue's): overhead = (T_virt - T_native) / T_native; middleware share =
(T_mw - T_ideal) / T_mw; deadline share = (T_virt - T_native) / D; all on the means of the same
payload and busy time."""

from __future__ import annotations

import socket

import numpy as np

from rtnetlab import ownership
from rtnetlab.middleware.host import describe
from rtnetlab.middleware.placement import placed
from rtnetlab.middleware.procs import measure_cases
from rtnetlab.middleware.pubsub import measure_noise
from rtnetlab.middleware.stats import quantile_sketch, summary

BACKENDS = ("udp-echo", "icmp-echo", "dds")
SERVERS = ("native", "virtualised")
DEADLINES_MS = (10, 100, 1000)
RRW = "rrworker"


def _one(ws, place, tmp, procs_file, backend, payload, busy_us, server, args) -> dict:
    board = 2 if server == "virtualised" else 1
    prefix = place.prefix(board)
    if server == "virtualised":
        prefix = ["sh", "-c", f'echo $$ > {procs_file} && exec "$@"', "sh", *prefix]
    what = f"{backend} ({server}, {payload} B, busy {busy_us:g} us)"
    spec = {
        "settings": place.settings(board),
        "busy_us": busy_us,
        "reply_bytes": payload,
        "cpu": 1,
        "rt": False,
    }
    if backend == "udp-echo":
        srv = ws.start(prefix, {**spec, "role": "echo_server"}, "server", RRW)
        peer = srv.expect("ready", 30, what)["endpoint"]
    elif backend == "icmp-echo":
        peer = place.settings(board)["address"]  # the server's namespace: its kernel answers
    else:
        srv = ws.start(prefix, {**spec, "role": "server", "backend": "dds"}, "server", RRW)
        srv.expect("ready", 60, what)
        peer = None
    out = tmp / "rtt.npy"
    cl = ws.start(
        place.prefix(0),
        {
            "role": "client",
            "backend": backend,
            "settings": place.settings(0),
            "peer": peer,
            "requests": args["requests"],
            "warmup": args["warmup"],
            "request_bytes": payload,
            "gap_ns": 0,
            "min_gap_ns": args["gap_ns"],
            "out": str(out),
            "cpu": 0,
            "rt": args["rt"],
            "seed": 1,
        },
        "client",
        RRW,
    )
    cl.expect("ready", 60, what)
    cl.expect("done", args["requests"] * 0.05 + 90, what)
    rtt = np.load(out)
    s = summary(rtt[rtt >= 0].tolist())
    row = {
        "backend": backend,
        "payload_bytes": payload,
        "busy_us": busy_us,
        "server": server,
        "count": s["count"],
        "lost": int((rtt < 0).sum()),
    }
    row.update({k: s[k] for k in ("min_us", "mean_us", "max_us", "stdev_us", "p99_us")})
    row["quantiles_us"] = quantile_sketch(rtt[rtt >= 0].tolist())
    return row


def raw_sockets_allowed() -> bool:
    """Whether this process may open a raw ICMP socket (CAP_NET_RAW), as the ICMP client will."""
    try:
        socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close()
    except PermissionError:
        return False
    return True


def ratios(rows: list[dict]) -> list[dict]:
    """The catalogue's derived ratios per (payload, busy time)."""
    by = {(r["backend"], r["payload_bytes"], r["busy_us"], r["server"]): r for r in rows if r["count"]}
    out = []
    for payload, busy in sorted({(r["payload_bytes"], r["busy_us"]) for r in rows}):
        d = {"payload_bytes": payload, "busy_us": busy}
        for backend in BACKENDS:
            nat, virt = (
                by.get((backend, payload, busy, "native")),
                by.get((backend, payload, busy, "virtualised")),
            )
            if nat and virt:
                d[f"{backend}_overhead"] = (virt["mean_us"] - nat["mean_us"]) / nat["mean_us"]
                for dl in DEADLINES_MS:
                    d[f"{backend}_deadline_share_{dl}ms"] = (virt["mean_us"] - nat["mean_us"]) / (dl * 1000)
        for server in SERVERS:
            mw, ideal = by.get(("dds", payload, busy, server)), by.get(("udp-echo", payload, busy, server))
            if mw and ideal:
                d[f"middleware_share_{server}"] = (mw["mean_us"] - ideal["mean_us"]) / mw["mean_us"]
        out.append(d)
    return out


def run(
    backends,
    payloads,
    busy_list,
    requests,
    cpu_cap,
    warmup=50,
    gap_ns=500_000,
    rt=True,
    noise_s=1.0,
    progress=None,
) -> dict:
    from rtnetlab.middleware import cgroup

    args = {"requests": requests, "warmup": warmup, "gap_ns": gap_ns, "rt": rt}
    host = describe()
    host["scheduling"] = [
        "client SCHED_FIFO and pinned when allowed; servers SCHED_OTHER (a capped guest cannot "
        "hold a real-time class)"
    ]
    host["cpu_cap"] = cpu_cap
    rows, skipped = [], []
    if "icmp-echo" in backends and not raw_sockets_allowed():
        skipped.append("icmp-echo: raw sockets are not allowed (needs CAP_NET_RAW: root); not run")
        backends = [b for b in backends if b != "icmp-echo"]
    with ownership.Run("middleware reqresp") as own, placed("two-boards", own, guest=True) as place:
        tmp = own.folder()
        host.update(measure_noise(tmp, noise_s, rt))
        with cgroup.cpu_cap(own, cpu_cap) as procs_file:
            for backend in backends:
                # The kernel's echo does no busy work: one row per payload and server.
                busy_times = busy_list if backend != "icmp-echo" else [0.0]
                measure_cases(
                    tmp,
                    [(p, b, server) for p in payloads for b in busy_times for server in SERVERS],
                    lambda ws, payload, busy, server, backend=backend: _one(
                        ws, place, tmp, procs_file, backend, payload, busy, server, args
                    ),
                    rows,
                    skipped,
                    progress,
                )
    return {"host": host, "rows": rows, "ratios": ratios(rows), "skipped": skipped}
