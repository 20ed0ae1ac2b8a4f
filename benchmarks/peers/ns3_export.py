"""Writes what the ns-3 peer (ns3_afdx.cc) reads: a network's ports, nodes, route trees and flows,
taken from the engine's resolved model, as whitespace-separated integers.

    .venv/bin/python benchmarks/peers/ns3_export.py NETWORK OUT.txt

Each flow's routes become one tree of crossings (one per port the flow crosses, as the engine and
the SimPy peer build them): a crossing names its port, the route it delivers (or -1) and the
crossings that follow it at the next node.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rtnetlab import _core


def _ns(seconds: float) -> int:
    return round(seconds * 1e9)


def export(resolved: dict) -> str:
    nodes, ports, flows = resolved["nodes"], resolved["ports"], resolved["flows"]
    for p in ports:
        if p["scheduler"].get("kind") != "fifo" or p["buffer"] is not None:
            raise ValueError("the ns-3 peer models FIFO egress ports with unbounded buffers only")
        if p["rate"] != int(p["rate"]):
            raise ValueError(f"port {p['name']}: the ns-3 peer takes whole bit/s rates")
    crossings: list[list] = []  # [port, deliver, next]
    flow_starts: list[list[list[int]]] = []
    routes = 0
    for flow in flows:
        if flow["traffic"].get("type") != "virtual_link":
            raise ValueError(f"{flow['name']}: the ns-3 peer models virtual links only")
        seen: dict[int, int] = {}
        starts: dict[int, list[int]] = {}
        for r in flow["routes"]:
            up = None
            for p in r["ports"]:
                c = seen.get(p)
                if c is None:
                    c = seen[p] = len(crossings)
                    crossings.append([p, -1, []])
                    if up is None:
                        starts.setdefault(r["plane"], []).append(c)
                    else:
                        crossings[up][2].append(c)
                up = c
            crossings[up][1] = routes
            routes += 1
        flow_starts.append([starts[k] for k in sorted(starts)])
    out = [f"nodes {len(nodes)}"]
    out += [f"{_ns(n['technological_latency'])} {_ns(n['receive_latency'])}" for n in nodes]
    out.append(f"ports {len(ports)}")
    out += [f"{p['node']} {p['peer']} {int(p['rate'])} {_ns(p['propagation_delay'])}" for p in ports]
    out.append(f"crossings {len(crossings)}")
    out += [f"{port} {deliver} {len(nxt)} {' '.join(map(str, nxt))}".rstrip()
            for port, deliver, nxt in crossings]
    out.append(f"flows {len(flows)}")
    for flow, starts in zip(flows, flow_starts, strict=True):
        bag = flow["traffic"]["bag"]
        bag_ns = round(_core.parse_quantity("duration", bag) * 1e9)
        planes = " ".join(f"{len(s)} {' '.join(map(str, s))}" for s in starts)
        out.append(f"{bag_ns} {int(flow['max_frame_wire']) // 8} {int(flow['min_frame_wire']) // 8} "
                   f"{_ns(nodes[flow['source']]['technological_latency'])} {len(starts)} {planes}")
    out.append(f"routes {routes}")
    return "\n".join(out) + "\n"


def main() -> None:
    from rtnetlab import model

    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[3].strip())
    Path(sys.argv[2]).write_text(export(model.load_file(sys.argv[1]).resolved()))


if __name__ == "__main__":
    main()
