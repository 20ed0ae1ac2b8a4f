"""An AFDX packet simulator in SimPy: what a researcher writes with a general-purpose DES library.

It reads the engine's resolved model (``Network.resolved()``) and simulates the same thing as the
Rust simulator (``crates/core/src/sim``) does on a FIFO network:

* every VL releases one frame per BAG, from a random phase in [0, BAG) (or all at 0 when
  synchronised), of a size drawn uniformly in [lmin, lmax] bytes (or always lmax / lmin);
* the frame is sent on each of the VL's planes (copies on the second and later planes offset by a
  per-VL skew drawn once in [0, sending skew] when releases are random);
* every egress port is a FIFO ``simpy.Store`` served by one process at the link rate (frame +
  preamble and inter-frame gap), store-and-forward;
* a copy that reaches a switch enters the next egress queue(s) after the switch's technological
  latency, one copy per branch of the flow's route tree (multicast);
* a destination records latency from the release (plus jitter and plane skew) to the last bit's
  arrival plus the receive latency, per (flow, destination, plane).

Time is integer nanoseconds; as in the engine, a port keeps its link's exact end of transmission
(ns in fixed point with 64 fractional bits) and events happen at exact times rounded down.
A frame-hop is counted when a frame starts leaving an egress port, as the engine counts it.
"""

from __future__ import annotations

import math
import random
import re
import time

import simpy

_TIME_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def parse_time_ns(text: str | float | int) -> int:
    """'2ms', '500us', '16 µs', or a number of seconds, in integer nanoseconds."""
    if isinstance(text, (int, float)):
        return round(text * 1e9)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([a-zµ]*)\s*", text)
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    value, unit = float(m.group(1)), m.group(2) or "s"
    return round(value * _TIME_UNITS[unit])


class _Crossing:
    """One flow crossing one port, with where its copies go next (the flow's route tree)."""

    __slots__ = ("port", "next", "deliver")

    def __init__(self, port: int):
        self.port = port
        self.next: list[int] = []
        self.deliver: int | None = None


class SimpyAfdx:
    """A SimPy model of a resolved FIFO AFDX network. ``run(until_ns)`` may be called repeatedly."""

    def __init__(
        self,
        resolved: dict,
        *,
        seed: int = 1,
        release: str = "random",
        frame_sizes: str = "uniform",
    ):
        if release not in ("random", "synchronized"):
            raise ValueError(f"release: {release!r}")
        if frame_sizes not in ("uniform", "max", "min"):
            raise ValueError(f"frame_sizes: {frame_sizes!r}")
        self.env = simpy.Environment()
        self.rng = random.Random(seed)
        self.release = release
        self.frame_sizes = frame_sizes
        self.frame_hops = 0
        self.wall_s = 0.0
        self.until_ns = 0
        self.resolved = resolved
        nodes, ports, flows = resolved["nodes"], resolved["ports"], resolved["flows"]
        for p in ports:
            if p["scheduler_name"] != "fifo" and p["scheduler"].get("kind") != "fifo":
                raise ValueError("the SimPy peer models FIFO egress ports only")
        self.node_latency = [round(n["technological_latency"] * 1e9) for n in nodes]
        self.node_receive = [round(n["receive_latency"] * 1e9) for n in nodes]
        # ns per bit in fixed point (64 fractional bits), rounded down, as the engine's.
        self.ns_per_bit = [(10**9 << 64) // max(math.ceil(p["rate"]), 1) for p in ports]
        self.prop = [round(p["propagation_delay"] * 1e9) for p in ports]
        self.peer = [p["peer"] for p in ports]
        self.stores = [simpy.Store(self.env) for _ in ports]

        # Route trees: one crossing per (flow, port), linked along each route in order.
        self.crossings: list[_Crossing] = []
        self.routes: list[tuple[int, int, int]] = []  # (flow, destination node, plane)
        self.starts: list[list[tuple[int, list[int]]]] = []  # per flow: (plane, first crossings)
        for f, flow in enumerate(flows):
            seen: dict[int, int] = {}
            starts: list[tuple[int, list[int]]] = []
            for r in flow["routes"]:
                route_id = len(self.routes)
                self.routes.append((f, r["destination"], r["plane"]))
                up = None
                for p in r["ports"]:
                    c = seen.get(p)
                    if c is None:
                        c = len(self.crossings)
                        self.crossings.append(_Crossing(p))
                        seen[p] = c
                        if up is not None:
                            self.crossings[up].next.append(c)
                        else:
                            for plane, firsts in starts:
                                if plane == r["plane"]:
                                    firsts.append(c)
                                    break
                            else:
                                starts.append((r["plane"], [c]))
                    up = c
                self.crossings[up].deliver = route_id
            self.starts.append(starts)
        n = len(self.routes)
        self.count = [0] * n
        self.sum_ns = [0] * n
        self.min_ns = [math.inf] * n
        self.max_ns = [-math.inf] * n

        skew_ns = round(resolved.get("sending_skew", 0.0) * 1e9)
        for f, flow in enumerate(flows):
            traffic = flow["traffic"]
            if traffic.get("type") != "virtual_link":
                raise ValueError(f"{flow['name']}: the SimPy peer models virtual links only")
            bag = parse_time_ns(traffic["bag"])
            phase = 0 if release == "synchronized" else self.rng.randrange(bag)
            plane_skew = self.rng.randint(0, skew_ns) if release == "random" and skew_ns > 0 else 0
            jitter = parse_time_ns(traffic.get("release_jitter") or 0)
            self.env.process(self._virtual_link(f, bag, phase, plane_skew, jitter))
        for p in range(len(ports)):
            self.env.process(self._port(p))

    # ---- processes ------------------------------------------------------------------------

    def _virtual_link(self, f: int, bag: int, phase: int, plane_skew: int, jitter_max: int):
        env, rng = self.env, self.rng
        flow = self.resolved["flows"][f]
        hi, lo = int(flow["max_frame_wire"]), int(flow["min_frame_wire"])
        sizes = (hi - lo) // 8
        source_latency = self.node_latency[flow["source"]]
        starts = self.starts[f]
        random_release = self.release == "random"
        if phase:
            yield env.timeout(phase)
        while True:
            if self.frame_sizes == "max":
                wire = hi
            elif self.frame_sizes == "min":
                wire = lo
            else:
                wire = lo + 8 * rng.randint(0, sizes)
            jitter = rng.randint(0, jitter_max) if random_release and jitter_max else 0
            for k, (_plane, firsts) in enumerate(starts):
                start = env.now + jitter + (plane_skew if k else 0)
                delay = start + source_latency - env.now
                for c in firsts:
                    if delay:
                        env.process(self._enqueue_later(delay, c, start, wire))
                    else:
                        self.stores[self.crossings[c].port].put((c, start, wire))
            yield env.timeout(bag)

    def _enqueue_later(self, delay: int, c: int, start: int, wire: int):
        yield self.env.timeout(delay)
        self.stores[self.crossings[c].port].put((c, start, wire))

    def _port(self, p: int):
        """An egress port: takes frames in FIFO order and transmits each at the link rate."""
        env, store, ns_per_bit = self.env, self.stores[p], self.ns_per_bit[p]
        prop, peer = self.prop[p], self.peer[p]
        free = 0  # the exact end of the last frame, fixed point
        while True:
            c, start, wire = yield store.get()
            self.frame_hops += 1
            free = max(env.now << 64, free) + wire * ns_per_bit
            yield env.timeout((free >> 64) - env.now)
            env.process(self._link(c, peer, prop, start, wire))

    def _link(self, c: int, node: int, prop: int, start: int, wire: int):
        """The last bit crosses the link; the next node delivers and/or forwards the frame."""
        env = self.env
        if prop:
            yield env.timeout(prop)
        cr = self.crossings[c]
        if cr.deliver is not None:
            self._record(cr.deliver, env.now + self.node_receive[node] - start)
        if cr.next:
            yield env.timeout(self.node_latency[node])
            for d in cr.next:
                self.stores[self.crossings[d].port].put((d, start, wire))

    def _record(self, route: int, ns: int) -> None:
        ns = max(ns, 0)
        self.count[route] += 1
        self.sum_ns[route] += ns
        if ns < self.min_ns[route]:
            self.min_ns[route] = ns
        if ns > self.max_ns[route]:
            self.max_ns[route] = ns

    # ---- running and results --------------------------------------------------------------

    def run(self, until_ns: int) -> None:
        """Processes every event up to ``until_ns`` inclusive (the engine's ``run_until``)."""
        t0 = time.perf_counter()
        if until_ns >= self.env.now:
            self.env.run(until=until_ns + 1)
            self.until_ns = until_ns
        self.wall_s += time.perf_counter() - t0

    def report(self) -> dict:
        nodes, flows, planes = self.resolved["nodes"], self.resolved["flows"], self.resolved["planes"]
        out = []
        for r, (f, dest, plane) in enumerate(self.routes):
            n = self.count[r]
            out.append({
                "flow": flows[f]["name"],
                "destination": nodes[dest]["name"],
                "plane": planes[plane],
                "count": n,
                "min_ns": self.min_ns[r] if n else 0,
                "max_ns": self.max_ns[r] if n else 0,
                "mean_ns": self.sum_ns[r] / n if n else 0.0,
            })
        return {
            "flows": out,
            "stats": {"frame_hops": self.frame_hops, "wall_s": self.wall_s, "simulated_ns": self.until_ns},
        }


def main() -> None:
    """The peer as a whole process, as a user of it runs it: reads the network through rtnetlab's
    loader, simulates, prints one JSON line (frame-hops, the event loop's wall time, latency
    totals)."""
    import argparse
    import json

    from rtnetlab import model

    ap = argparse.ArgumentParser(description="SimPy AFDX peer")
    ap.add_argument("network")
    ap.add_argument("--duration-ns", type=int, required=True)
    ap.add_argument("--release", default="synchronized")
    ap.add_argument("--sizes", default="max")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    peer = SimpyAfdx(model.load_file(args.network).resolved(), seed=args.seed, release=args.release,
                     frame_sizes=args.sizes)
    peer.run(args.duration_ns)
    report = peer.report()
    count = sum(f["count"] for f in report["flows"])
    total = sum(f["mean_ns"] * f["count"] for f in report["flows"])
    print(json.dumps({
        "frame_hops": peer.frame_hops,
        "wall_s": peer.wall_s,
        "delivered": count,
        "mean_latency_us": total / count / 1e3 if count else 0.0,
        "max_latency_us": max((f["max_ns"] for f in report["flows"]), default=0) / 1e3,
    }))


if __name__ == "__main__":
    main()
