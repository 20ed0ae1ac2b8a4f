"""An independent reference for WOPANet's AFDX results, and a generator of random WOPANet files.

The reference is written from the rules of shared/oracles/README.md ("wopanet/"), not from the
project's importer or analysis: it reads the XML with ElementTree and computes in exact rational
arithmetic (fractions), so that its roundings (ceil, floor, one decimal) never depend on floating
point. Where the README is silent it decides as follows (each choice is what the eight samples
allow, and is said where it is used):

* a link's rate is the link's ``transmission-capacity``; without one, the slower of its two ends';
  without those, the network's;
* ``tech-latency`` is in µs (the samples have 0 only);
* a flow's ``jitter`` (ms) is a release jitter: its burst at the source is one frame + rate × jitter
  (the samples have 0 only);
* a target without ``<path>`` is routed by the fewest hops through switches (``DIJKSTRA`` on hop
  counts); the generator writes one only where that path is unique;
* the port ``delay`` of a results file has three decimals (the README gives no rounding; the
  samples' are within 0.0005 µs of the exact value);
* a switch appears under ``<backlogs>`` with its ports that carry traffic, when it has one.
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from xml.etree import ElementTree as ET

FLOOR_BYTES = 84
BUFFER_BYTES = 65536
BAGS_MS = (1, 2, 4, 8, 16, 32, 64, 128)
_UNITS = {"Gbps": 10**9, "Mbps": 10**6, "kbps": 10**3, "bps": 1}


def rate_bps(text: str) -> Fraction:
    """'100Mbps' or '100000000' (bit/s)."""
    for unit, factor in _UNITS.items():
        if text.endswith(unit):
            return Fraction(text[: -len(unit)]) * factor
    return Fraction(text)


@dataclass
class Flow:
    name: str
    source: str
    period_s: Fraction
    frame_bits: Fraction  # max(max-payload + overhead, 84) bytes, in bits
    min_frame_bits: Fraction
    jitter_s: Fraction
    targets: list[tuple[str, list[str]]]  # (target, [source, ..., target])

    @property
    def rate(self) -> Fraction:
        return self.frame_bits / self.period_s


@dataclass
class Net:
    kinds: dict[str, str] = field(default_factory=dict)  # node -> "station" | "switch"
    latency_s: dict[str, Fraction] = field(default_factory=dict)
    # (node, neighbour) -> (port number at node, rate in bit/s, link name, "direct" | "reverse")
    ports: dict[tuple[str, str], tuple[str, Fraction, str, str]] = field(default_factory=dict)
    links: list[tuple[str, Fraction]] = field(default_factory=list)  # (name, rate)
    flows: list[Flow] = field(default_factory=list)
    switches: list[str] = field(default_factory=list)


def shortest_path(net: Net, source: str, target: str) -> list[str]:
    """Fewest hops, forwarding through switches only; the unique such path (else an error)."""
    adj: dict[str, list[str]] = {}
    for a, b in net.ports:
        adj.setdefault(a, []).append(b)
    dist = {source: 0}
    count = {source: 1}
    prev: dict[str, str] = {}
    queue = deque([source])
    while queue:
        u = queue.popleft()
        if u != source and net.kinds[u] != "switch":
            continue
        for v in adj.get(u, []):
            if v not in dist:
                dist[v], count[v], prev[v] = dist[u] + 1, count[u], u
                queue.append(v)
            elif dist[v] == dist[u] + 1:
                count[v] += count[u]
    if target not in dist or count[target] != 1:
        raise ValueError(f"no unique shortest path {source} -> {target}")
    path = [target]
    while path[-1] != source:
        path.append(prev[path[-1]])
    return path[::-1]


def read(path: Path) -> Net:
    root = ET.parse(path).getroot()
    net_el = root.find("network")
    overhead = Fraction(net_el.get("overhead", "67"))
    net_rate = net_el.get("transmission-capacity")
    net = Net()
    node_rate: dict[str, Fraction | None] = {}
    for el in root:
        if el.tag in ("station", "switch"):
            name = el.get("name")
            net.kinds[name] = el.tag
            net.latency_s[name] = Fraction(el.get("tech-latency", "0")) / 10**6
            cap = el.get("transmission-capacity")
            node_rate[name] = rate_bps(cap) if cap else None
            if el.tag == "switch":
                net.switches.append(name)
    for el in root.iter("link"):
        a, b = el.get("from"), el.get("to")
        if el.get("transmission-capacity"):
            rate = rate_bps(el.get("transmission-capacity"))
        else:
            ends = [r for r in (node_rate[a], node_rate[b]) if r is not None]
            rate = min(ends) if ends else rate_bps(net_rate)
        name = el.get("name")
        net.links.append((name, rate))
        net.ports[(a, b)] = (el.get("fromPort"), rate, name, "direct")
        net.ports[(b, a)] = (el.get("toPort"), rate, name, "reverse")

    def wire(payload: str) -> Fraction:
        return max(Fraction(payload) + overhead, FLOOR_BYTES) * 8

    for el in root.iter("flow"):
        source = el.get("source")
        targets = []
        for t in el.findall("target"):
            hops = [p.get("node") for p in t.findall("path")]
            route = [source, *hops] if hops else shortest_path(net, source, t.get("name"))
            targets.append((t.get("name"), route))
        net.flows.append(Flow(
            name=el.get("name"), source=source, period_s=Fraction(el.get("period")) / 1000,
            frame_bits=wire(el.get("max-payload")), min_frame_bits=wire(el.get("min-payload")),
            jitter_s=Fraction(el.get("jitter", "0")) / 1000, targets=targets))
    return net


@dataclass
class Result:
    delays: dict[tuple[str, str], int]  # (flow, target) -> µs
    jitters: dict[tuple[str, str], int]
    ports: dict[tuple[str, str], tuple[int, Fraction]]  # (switch, port) -> (backlog B, delay µs)
    totals: dict[str, tuple[int, str]]  # switch -> (backlog B, percent text)
    loads: dict[str, dict[str, tuple[Fraction, str]]]  # link -> direct/reverse -> (bit/s, percent)


def percent(part: Fraction, whole: Fraction) -> str:
    """One decimal, halves up (Java's %.1f)."""
    tenths = math.floor(part * 1000 / whole + Fraction(1, 2))
    return f"{tenths // 10}.{tenths % 10}%"


def analyze(net: Net) -> Result:
    """The README's rules: FIFO total-flow analysis with bursts grown port by port."""
    # Each flow's ports (once per flow: a multicast flow counts once per port) and what precedes
    # each of them on the flow's tree.
    before: dict[tuple[int, tuple[str, str]], tuple[str, str] | None] = {}
    for i, f in enumerate(net.flows):
        for _, route in f.targets:
            prev = None
            for a, b in zip(route, route[1:], strict=False):
                port = (a, b)
                if before.setdefault((i, port), prev) != prev:
                    raise ValueError(f"flow {f.name}: its paths do not form a tree")
                prev = port
    # Ports in an order where every port comes after those feeding it (feed-forward networks).
    feeds: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for (_, port), prev in before.items():
        feeds.setdefault(port, set())
        if prev is not None:
            feeds[port].add(prev)
    order: list[tuple[str, str]] = []
    done: set[tuple[str, str]] = set()
    while len(order) < len(feeds):
        ready = [p for p in feeds if p not in done and feeds[p] <= done]
        if not ready:
            raise ValueError("cyclic port dependencies")
        for p in sorted(ready):
            order.append(p)
            done.add(p)
    burst_out: dict[tuple[int, tuple[str, str]], Fraction] = {}
    delay: dict[tuple[str, str], Fraction] = {}
    bursts_in: dict[tuple[str, str], Fraction] = {}
    for port in order:
        rate = net.ports[port][1]
        users = [(i, prev) for (i, p), prev in before.items() if p == port]
        entering = {}
        for i, prev in users:
            f = net.flows[i]
            entering[i] = f.frame_bits + f.rate * f.jitter_s if prev is None else burst_out[(i, prev)]
        total = sum(entering.values(), Fraction(0))
        d = total / rate + net.latency_s[port[0]]
        delay[port], bursts_in[port] = d, total
        for i, b in entering.items():
            burst_out[(i, port)] = b + net.flows[i].rate * d

    delays, jitters = {}, {}
    for f in net.flows:
        for target, route in f.targets:
            hops = list(zip(route, route[1:], strict=False))
            e2e = sum((delay[p] for p in hops), Fraction(0)) * 10**6
            shortest = sum((f.min_frame_bits / net.ports[p][1] for p in hops
                            if net.kinds[p[0]] == "switch"), Fraction(0)) * 10**6
            delays[(f.name, target)] = math.ceil(e2e)
            jitters[(f.name, target)] = math.ceil(e2e) - math.floor(shortest)

    ports, totals = {}, {}
    for s in net.switches:
        rows = {net.ports[p][0]: (math.ceil(bursts_in[p] / 8), delay[p] * 10**6)
                for p in order if p[0] == s}
        if rows:
            for num, row in rows.items():
                ports[(s, num)] = row
            total = sum(b for b, _ in rows.values())
            totals[s] = (total, percent(Fraction(total), Fraction(BUFFER_BYTES)))

    loads: dict[str, dict[str, tuple[Fraction, str]]] = {}
    for name, _ in net.links:
        loads[name] = {"direct": (Fraction(0), "0.0%"), "reverse": (Fraction(0), "0.0%")}
    carried: dict[tuple[str, str], Fraction] = {}
    for (i, port) in before:
        carried[port] = carried.get(port, Fraction(0)) + net.flows[i].rate
    for port, value in carried.items():
        _, rate, name, kind = net.ports[port]
        loads[name][kind] = (value, percent(value, rate))
    return Result(delays, jitters, ports, totals, loads)


def read_results(path: Path) -> dict:
    """A ``_res.xml`` as plain values (strings for the texts compared as written)."""
    root = ET.parse(path).getroot()
    out: dict = {"delays": {}, "jitters": {}, "ports": {}, "totals": {}, "loads": {}}
    for section in ("delays", "jitters"):
        for f in root.findall(f"{section}/flow"):
            for t in f.findall("target"):
                out[section][(f.get("name"), t.get("name"))] = float(t.get("value"))
    for s in root.findall("backlogs/switch"):
        for p in s.findall("port"):
            out["ports"][(s.get("name"), p.get("num"))] = (float(p.get("backlog")), float(p.get("delay")))
        t = s.find("total")
        out["totals"][s.get("name")] = (float(t.get("backlog")), t.get("percent"), float(t.get("buffer")))
    for e in root.findall("load/edge"):
        out["loads"][e.get("name")] = {u.get("type"): (float(u.get("value")), u.get("percent"))
                                       for u in e.findall("usage")}
    return out


def differences(ref: Result, got: dict) -> list[str]:
    """Every place where a results file differs from the reference, one line each."""
    out = []
    for section, expected in (("delays", ref.delays), ("jitters", ref.jitters)):
        for key in sorted(set(expected) | set(got[section])):
            e, g = expected.get(key), got[section].get(key)
            if e is None or g is None or g != e:
                out.append(f"{section[:-1]} {key[0]} -> {key[1]}: reference {e}, got {g}")
    for key in sorted(set(ref.ports) | set(got["ports"])):
        e, g = ref.ports.get(key), got["ports"].get(key)
        if e is None or g is None:
            out.append(f"port {key[0]}:{key[1]}: reference {e}, got {g}")
            continue
        if g[0] != e[0]:
            out.append(f"port {key[0]}:{key[1]} backlog: reference {e[0]} B, got {g[0]}")
        if abs(Fraction(g[1]) - e[1]) > Fraction(5, 10**4) + Fraction(1, 10**9):
            out.append(f"port {key[0]}:{key[1]} delay: reference {float(e[1])} us, got {g[1]}")
    for key in sorted(set(ref.totals) | set(got["totals"])):
        e, g = ref.totals.get(key), got["totals"].get(key)
        if e is None or g is None or (g[0], g[1], g[2]) != (e[0], e[1], BUFFER_BYTES):
            out.append(f"switch {key} total: reference {e}, got {g}")
    for key in sorted(set(ref.loads) | set(got["loads"])):
        e, g = ref.loads.get(key), got["loads"].get(key)
        if e is None or g is None:
            out.append(f"edge {key}: reference {e}, got {g}")
            continue
        for kind in ("direct", "reverse"):
            ev, ep = e[kind]
            gv, gp = g.get(kind, (None, None))
            if gv is None or not math.isclose(gv, float(ev), rel_tol=1e-12, abs_tol=1e-6) or gp != ep:
                out.append(f"edge {key} {kind}: reference {float(ev)} ({ep}), got {gv} ({gp})")
    return out


# ---------------------------------------------------------------------------------------------
# Random WOPANet files


_RATE_TEXTS = {10**7: ["10Mbps", "10000000", "10000kbps"], 10**8: ["100Mbps", "100000000"],
               10**9: ["1Gbps", "1000Mbps", "1000000000"]}


def _rate_text(rng: random.Random, bps: int) -> str:
    return rng.choice(_RATE_TEXTS[bps])


def _attrs(d: dict[str, str]) -> str:
    from xml.sax.saxutils import quoteattr

    return "".join(f" {k}={quoteattr(str(v))}" for k, v in d.items())


def _num(x: Fraction | float | int) -> str:
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else str(float(x))


def generate(seed: int) -> str:
    """A valid WOPANet file: switches in a line, tree or mesh, stations on them, unicast and
    multicast flows with explicit or shortest paths, mixed rates, latencies, payloads and periods.
    Every port stays below its rate and the port dependencies are feed-forward."""
    rng = random.Random(seed)
    shape = rng.choice(["line", "tree", "mesh", "star", "direct"])
    n_sw = {"line": rng.randint(2, 5), "tree": rng.randint(3, 7), "mesh": rng.randint(3, 6),
            "star": 1, "direct": 0}[shape]
    switches = [f"SW{i + 1}" for i in range(n_sw)]
    sw_links: list[tuple[str, str]] = []
    for i in range(1, n_sw):
        parent = i - 1 if shape == "line" else rng.randrange(i)
        sw_links.append((switches[parent], switches[i]))
    if shape == "mesh":
        pairs = [(a, b) for i, a in enumerate(switches) for b in switches[i + 1:]
                 if (a, b) not in sw_links and (b, a) not in sw_links]
        for a, b in rng.sample(pairs, min(len(pairs), rng.randint(1, 3))):
            sw_links.append((a, b))
    n_st = 2 if shape == "direct" else rng.randint(max(2, n_sw), n_sw * 3 + 2)
    stations = [f"ES {i + 1}" for i in range(n_st)]
    attach = {s: (switches[rng.randrange(n_sw)] if n_sw else None) for s in stations}
    if n_sw:  # every switch has at least one station where possible
        for i, s in enumerate(stations[:n_sw]):
            attach[s] = switches[i]

    net_rate = rng.choice([10**8, 10**8, 10**9])
    link_rate: dict[frozenset, int] = {}
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', "<elements>"]
    overhead = rng.choice([67, 67, 67, 47, 80])
    net_attrs = {"name": f"RAND{seed}", "overhead": str(overhead), "shortest-path-policy": "DIJKSTRA",
                 "technology": "AFDX", "transmission-capacity": _rate_text(rng, net_rate), "x-type": "FULL"}
    if overhead == 67 and rng.random() < 0.3:
        del net_attrs["overhead"]  # the default
    lines.append(f"   <network{_attrs(net_attrs)}/>")
    st_rate = {s: rng.choice([10**7, 10**8, 10**8, 10**9]) for s in stations}
    for s in stations:
        a = {"name": s, "service-policy": "FIRST_IN_FIRST_OUT",
             "transmission-capacity": _rate_text(rng, st_rate[s]), "x": "10.0", "y": "20.0"}
        if rng.random() < 0.2:
            a["tech-latency"] = rng.choice(["3", "0.5", "12"])
        lines.append(f"   <station{_attrs(a)}/>")
    for s in switches:
        a = {"name": s, "service-policy": "FIRST_IN_FIRST_OUT",
             "switching-technique": rng.choice(["CUT_THROUGH", "STORE_AND_FORWARD"]),
             "tech-latency": rng.choice(["0", "0", "16", "8", "2.5", "100"]),
             "transmission-capacity": _rate_text(rng, net_rate), "x": "1", "y": "2"}
        lines.append(f"   <switch{_attrs(a)}/>")
    port_count: dict[str, int] = {}

    def next_port(n: str) -> str:
        port_count[n] = port_count.get(n, -1) + 1
        return str(port_count[n])

    edges: list[tuple[str, str]] = []
    if shape == "direct":
        edges.append((stations[0], stations[1]))
    for s in stations if shape != "direct" else []:
        edges.append((s, attach[s]) if rng.random() < 0.8 else (attach[s], s))
    edges += [(a, b) if rng.random() < 0.5 else (b, a) for a, b in sw_links]
    rng.shuffle(edges)
    for k, (a, b) in enumerate(edges):
        if a in st_rate or b in st_rate:
            st = a if a in st_rate else b
            rate = st_rate[st]
        else:
            rate = rng.choice([10**8, 10**9, net_rate])
        link_rate[frozenset((a, b))] = rate
        la = {"from": a, "fromPort": next_port(a), "name": f"Edge {k + 1}", "to": b, "toPort": next_port(b)}
        # A link without a rate takes the slower of its ends': only where that is the link's own.
        ends = min(st_rate.get(a, net_rate), st_rate.get(b, net_rate))
        if not (rate == ends and rng.random() < 0.15):
            la["transmission-capacity"] = _rate_text(rng, rate)
        lines.append(f"   <link{_attrs(la)}/>")

    adj: dict[str, list[str]] = {}
    for a, b in edges:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    skeleton = Net(kinds={**{s: "station" for s in stations}, **{s: "switch" for s in switches}})
    for a, b in edges:
        skeleton.ports[(a, b)] = ("", Fraction(0), "", "")
        skeleton.ports[(b, a)] = ("", Fraction(0), "", "")

    def tree_from(source: str) -> dict[str, str]:
        """A random spanning tree of the switches reached from the source (parent links)."""
        parent = {source: ""}
        frontier = [source]
        while frontier:
            u = frontier.pop(rng.randrange(len(frontier)))
            if u != source and u in st_rate:
                continue
            for v in adj.get(u, []):
                if v not in parent:
                    parent[v] = u
                    frontier.append(v)
        return parent

    load: dict[tuple[str, str], Fraction] = {}
    feeds: dict[tuple[str, str], set[tuple[str, str]]] = {}

    def acyclic(extra: dict[tuple[str, str], set[tuple[str, str]]]) -> bool:
        graph = {p: set(s) for p, s in feeds.items()}
        for p, s in extra.items():
            graph.setdefault(p, set()).update(s)
        for s in list(graph.values()):
            for q in s:
                graph.setdefault(q, set())
        state: dict = {}
        for start in graph:
            if start in state:
                continue
            stack = [(start, iter(graph[start]))]
            state[start] = 1
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    state[node] = 2
                    stack.pop()
                elif state.get(nxt) == 1:
                    return False
                elif nxt not in state:
                    state[nxt] = 1
                    stack.append((nxt, iter(graph[nxt])))
        return True

    n_flows = 0
    for src in stations:
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            others = [s for s in stations if s != src]
            targets = rng.sample(others, min(len(others), rng.choice([1, 1, 1, 2, 3, 4])))
            parent = tree_from(src)
            routes = {}
            for t in targets:
                route = [t]
                while route[-1] != src:
                    route.append(parent[route[-1]])
                routes[t] = route[::-1]
            period = rng.choice([*BAGS_MS, 1, 2, 4, Fraction(1, 2), 3, 5, 10, Fraction(3, 2), 20, 100, 256])
            big = rng.random() < 0.5
            # The largest payload keeps the Ethernet frame (payload + overhead - 20 B) <= 1518 B.
            max_p = rng.randint(200, 1538 - overhead) if big else rng.randint(0, 120)
            min_p = rng.choice([max_p, rng.randint(0, max_p), rng.randint(0, min(max_p, 30))])
            frame = max(Fraction(max_p + overhead), FLOOR_BYTES) * 8
            jitter = rng.choice([0, 0, 0, 0, Fraction(1, 10), Fraction(1, 2), 2])
            rate = frame / (Fraction(period) / 1000)
            ports = {(a, b) for r in routes.values() for a, b in zip(r, r[1:], strict=False)}
            extra: dict = {}
            for r in routes.values():
                hops = list(zip(r, r[1:], strict=False))
                for p, q in zip(hops, hops[1:], strict=False):
                    extra.setdefault(q, set()).add(p)
            if any(load.get(p, 0) + rate > Fraction(85, 100) * link_rate[frozenset(p)] for p in ports):
                continue
            if not acyclic(extra):
                continue
            for p in ports:
                load[p] = load.get(p, 0) + rate
            for q, s in extra.items():
                feeds.setdefault(q, set()).update(s)
            n_flows += 1
            fa = {"deadline": rng.choice(["1", "2", "10"]), "jitter": _num(jitter),
                  "max-payload": str(max_p), "min-payload": str(min_p), "name": f"Flow {n_flows}",
                  "period": _num(period), "priority": rng.choice(["Low", "Low", "High"]),
                  "source": src}
            if rng.random() < 0.2:
                del fa["jitter"]
            lines.append(f"   <flow{_attrs(fa)}>")
            multicast = len(targets) > 1 or rng.random() < 0.5
            for t in targets:
                route = routes[t]
                ta = {"name": t}
                if multicast:
                    ta = {"mode": "M", "name": t}
                try:
                    unique = shortest_path(skeleton, src, t) == route
                except ValueError:
                    unique = False
                if unique and rng.random() < 0.4:
                    lines.append(f"      <target{_attrs(ta)}/>")
                    continue
                lines.append(f"      <target{_attrs(ta)}>")
                lines.extend(f"         <path{_attrs({'node': n})}/>" for n in route[1:])
                lines.append("      </target>")
            lines.append("   </flow>")
    lines.append("</elements>")
    return "\n".join(lines) + "\n"
