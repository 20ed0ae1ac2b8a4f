"""A server graph written as a switched network, for checking that the switched form of a case
is never analysed more loosely than the abstract network it refines.

Server s (rate R, latency T) becomes the egress port of switch X_s towards its successor: the
link's rate is R and its propagation delay T (a rate server followed by a pure delay T is one of
the systems of service R·[t − T]^+, so the switched form only removes behaviours). Where a
server's flows go on to several servers, its link leads to a hub switch H_s whose links to them
are `FAST` (the largest rate a description may hold): their queues add at most bursts/FAST, a few
parts in 10^7 of any bound here. Flows enter from an end system `src_s` per first server, over a
`FAST` link, and leave to an end system `sink_s` per last server. Bursts are counted in units of
`unit` bits so that a 64-byte packet (the smallest Ethernet frame; no inter-frame overhead) is a
few parts in 10^4 of the smallest burst: its packetization costs as little.
"""

from __future__ import annotations

import math
from typing import Any

FAST = 10e12  # bit/s
PACKET_BITS = 512  # one 64-byte frame


def from_lists(servers: list[tuple[float, float]],
               flows: list[tuple[float, float, list[int]]]) -> dict[str, Any]:
    """The server graph of servers (rate, latency) and flows (burst, rate, path) as a description."""
    return {
        "name": "g",
        "server_graph": {
            "servers": [{"name": f"s{i}", "rate": r, "latency": t} for i, (r, t) in enumerate(servers)],
            "flows": [{"name": f"f{i}", "burst": b, "rate": r, "path": [f"s{s}" for s in path]}
                      for i, (b, r, path) in enumerate(flows)],
        },
    }


def switched(doc: dict[str, Any], unit: float | None = None) -> tuple[dict[str, Any], float]:
    """(the switched form of server-graph description `doc`, the bits per data unit used). Times
    stay in seconds: a delay of d time units is d seconds in both forms."""
    g = doc["server_graph"]
    servers = {s["name"]: s for s in g["servers"]}
    flows = g["flows"]
    smallest = min(f["burst"] for f in flows if f["burst"] > 0)
    unit = unit or 1e5 * PACKET_BITS / smallest
    succ: dict[str, list[str]] = {s: [] for s in servers}
    firsts, lasts = set(), set()
    for f in flows:
        p = f["path"]
        firsts.add(p[0])
        lasts.add(p[-1])
        for a, b in zip(p, p[1:], strict=False):
            if b not in succ[a]:
                succ[a].append(b)

    def rate(x: float) -> str:
        return f"{x!r}bps"

    def ns(seconds: float) -> str:
        return f"{math.ceil(round(seconds * 1e9, 6))}ns"

    switches = [{"name": f"X_{s}"} for s in servers]
    end_systems = [{"name": f"src_{s}"} for s in sorted(firsts)]
    end_systems += [{"name": f"sink_{s}"} for s in sorted(lasts)]
    links = []
    after: dict[str, str] = {}  # the node server s's link leads to
    for name, s in servers.items():
        nxt = succ[name]
        if len(nxt) == 1 and name not in lasts:
            after[name] = f"X_{nxt[0]}"
        elif not nxt:
            after[name] = f"sink_{name}"
        else:
            after[name] = f"H_{name}"
            switches.append({"name": f"H_{name}"})
            for b in nxt:
                links.append({"from": f"H_{name}", "to": f"X_{b}", "rate": rate(FAST)})
        links.append({"from": f"X_{name}", "to": after[name], "rate": rate(s["rate"] * unit),
                      "propagation_delay": ns(s["latency"])})
        if name in lasts and after[name] != f"sink_{name}":
            links.append({"from": after[name], "to": f"sink_{name}", "rate": rate(FAST)})
    for s in sorted(firsts):
        links.append({"from": f"src_{s}", "to": f"X_{s}", "rate": rate(FAST)})
    out_flows = []
    for f in flows:
        p = f["path"]
        path = [f"src_{p[0]}"]
        for s in p:
            path.append(f"X_{s}")
            if after[s].startswith("H_"):
                path.append(after[s])
        if path[-1] != after[p[-1]] and not after[p[-1]].startswith("sink_"):
            path.append(after[p[-1]])
        path.append(f"sink_{p[-1]}")
        burst = max(PACKET_BITS, math.ceil(f["burst"] * unit))
        out_flows.append({
            "name": f["name"], "type": "token_bucket", "source": path[0],
            "destinations": [{"node": path[-1], "path": path}],
            "burst": f"{burst}b", "rate": rate(f["rate"] * unit),
            "min_packet": "64B", "max_packet": "64B",
        })
    net = {
        "name": doc.get("name", "g") + "-switched",
        "defaults": {"interframe_overhead": "0B"},
        "end_systems": end_systems, "switches": switches, "links": links, "flows": out_flows,
    }
    return net, unit
