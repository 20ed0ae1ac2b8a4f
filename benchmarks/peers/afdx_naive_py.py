"""afdx-naive in plain Python: what a researcher writes in an afternoon.

It reads the engine's resolved model (``Network.resolved()``: ports, flows with bursts, rates and
routes) and applies the WOPANet FIFO total-flow rules with burst propagation. The benchmarks time
it against the engine; a test checks that both give the same bounds.
"""

from __future__ import annotations

import math


def analyze(resolved: dict) -> dict:
    ports = resolved["ports"]
    nodes = resolved["nodes"]
    flows = resolved["flows"]
    n = len(ports)
    # (flow, port) -> upstream port of that flow (None at the source)
    upstream: dict[tuple[int, int], int | None] = {}
    succ: list[set[int]] = [set() for _ in range(n)]
    for f, flow in enumerate(flows):
        for route in flow["routes"]:
            prev = None
            for p in route["ports"]:
                upstream.setdefault((f, p), prev)
                if prev is not None:
                    succ[prev].add(p)
                prev = p
    at_port: list[list[int]] = [[] for _ in range(n)]
    for f, p in upstream:
        at_port[p].append(f)
    indeg = [0] * n
    for p in range(n):
        for q in succ[p]:
            indeg[q] += 1
    order = [p for p in range(n) if indeg[p] == 0]
    i = 0
    while i < len(order):
        for q in succ[order[i]]:
            indeg[q] -= 1
            if indeg[q] == 0:
                order.append(q)
        i += 1
    if len(order) != n:
        raise ValueError("cyclic port dependencies: the plain-Python peer handles feed-forward networks only")
    burst: dict[tuple[int, int], float] = {}
    delay = [0.0] * n
    for p in order:
        port = ports[p]
        load = sum(flows[f]["rate"] for f in at_port[p])
        total = 0.0
        for f in at_port[p]:
            up = upstream[(f, p)]
            b = flows[f]["burst"] if up is None else burst[(f, up)] + flows[f]["rate"] * delay[up]
            burst[(f, p)] = b
            total += b
        latency = nodes[port["node"]]["technological_latency"]
        delay[p] = math.inf if load > port["rate"] else total / port["rate"] + latency
    out = []
    for flow in flows:
        for route in flow["routes"]:
            d = sum(delay[p] for p in route["ports"]) + nodes[route["destination"]]["receive_latency"]
            out.append(
                {
                    "flow": flow["name"],
                    "destination": nodes[route["destination"]]["name"],
                    "delay_us": math.ceil(d * 1e6 - 1e-6) if math.isfinite(d) else None,
                }
            )
    return {"flows": out, "port_delay_us": [d * 1e6 for d in delay]}
