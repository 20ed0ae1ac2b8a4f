"""WOPANet XML: import, export and result files.

WOPANet XML is the network format of the WOPANets / Open-Timaeus-Net tools (ISAE-SUPAERO), also
read by xTFA and Saihu. Reading it gives the native description as plain data (the engine then
validates it like any YAML file); writing goes the other way for what WOPANet can express.

How WOPANet values map onto the native model (chosen so that the analyses see exactly the arrival
curves WOPANet uses: burst = one largest frame on the wire, rate = that frame / period):

* A payload of p bytes is an Ethernet frame of ``max(p + overhead - 20, 64)`` bytes, and
  ``defaults.interframe_overhead`` is 20 B, so the frame on the wire is ``max(p + overhead, 84)``
  bytes. ``overhead`` defaults to 67 (47 B of Ethernet/IP/UDP headers + 20 B preamble and gap).
* A flow whose period is a valid BAG (2^k ms, k = 0..7) is a ``virtual_link`` (bag = period,
  lmin/lmax from min-/max-payload, release_jitter = jitter). Any other period becomes a
  ``periodic`` flow of size = the largest frame, min_size = the smallest (when smaller) and
  jitter = jitter: the same arrival curve and the same shortest time (the jitter's lower bound
  reads Lmin). ``token_bucket`` would not do: the engine scales its burst by
  (min_packet + gap) / min_packet, which over-counts when min-payload < max-payload.
* period, deadline and jitter are in ms. ``tech-latency`` is taken as µs (WOPANet does not write
  the unit; every known sample has 0).
* transmission-capacity is in bit/s (a bare number, or with bps/kbps/Mbps/Gbps). A link's rate
  comes from the link; the capacities of its end nodes (the slower one) only when it has none.
* ``priority`` names a traffic class (High before Low). Every port is FIFO, so classes are labels.
* A ``<target>`` with ``<path>`` children lists the nodes after the source; the native path
  includes the source. An empty ``<target>`` is routed by shortest path (fewest hops; with
  several, the routing warns at the target: WOPANet's own tie-break is unknown). ``mode="M"`` (multicast) is
  what the native model always does: a flow with several targets is one multicast tree, counted
  once per port (several targets not all ``mode="M"`` are read so, with a warning).
* The engine's validation errors name native places (``flows[2].destinations[0]``); `Description`
  turns them back into the file's line and element.
* ``switching-technique`` becomes the switch's ``switching`` as written. Note that WOPANet's own
  results add up whole-frame port delays whatever the switching technique says.
* Element names (stations, switches, links, flows) are kept as node, link and flow names;
  x/y (drawing positions) are ignored on reading and laid out on a grid when writing.

Writing refuses (UserError) several planes, non-FIFO schedulers, buffers, propagation and
receive latencies, an inter-frame overhead other than 20 B, token-bucket flows, offsets, SkewMax
and classes other than High/Low. It drops the description and VL ids, labels WOPANet has no place
for and no analysis reads.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET
from xml.parsers import expat

from rtnetlab import _core
from rtnetlab.errors import UserError

if TYPE_CHECKING:
    from decimal import Decimal

# The engine's numbers (rtnetlab_core::constants): 20 B on the wire, 67 B per AFDX frame.
INTERFRAME_BYTES = _core.INTERFRAME_BYTES
DEFAULT_OVERHEAD = _core.AFDX_FRAME_OVERHEAD_BYTES
ETH_MIN, ETH_MAX = _core.ETHERNET_MIN_FRAME_BYTES, _core.ETHERNET_MAX_FRAME_BYTES
BUFFER_BYTES = 65536.0
VALID_BAGS_MS = tuple(float(b) for b in _core.AFDX_BAGS_MS)
PRIORITY_ORDER = {"high": 0, "low": 1}

# Attributes each element may carry (required ones first), and the children it may hold.
ATTRS: dict[str, tuple[set[str], set[str]]] = {
    "elements": (set(), set()),
    "network": ({"name"}, {"overhead", "shortest-path-policy", "technology", "transmission-capacity",
                           "x-type"}),
    "station": ({"name"}, {"service-policy", "transmission-capacity", "tech-latency", "x", "y"}),
    "switch": ({"name"}, {"service-policy", "switching-technique", "tech-latency",
                          "transmission-capacity", "x", "y"}),
    "link": ({"from", "to"}, {"name", "fromPort", "toPort", "transmission-capacity"}),
    "flow": ({"name", "source", "period", "max-payload", "min-payload"},
             {"deadline", "jitter", "priority"}),
    "target": ({"name"}, {"mode"}),
    "path": ({"node"}, set()),
}
CHILDREN = {"elements": {"network", "station", "switch", "link", "flow"}, "flow": {"target"},
            "target": {"path"}}
# Values WOPANet allows that the native model reproduces; anything else is refused by name.
ENUMS = {
    "service-policy": {"FIRST_IN_FIRST_OUT"},
    "switching-technique": {"CUT_THROUGH", "STORE_AND_FORWARD"},
    "shortest-path-policy": {"DIJKSTRA"},
    "technology": {"AFDX"},
    "x-type": {"FULL"},
    "mode": {"M"},
}
SWITCHING = {"CUT_THROUGH": "cut_through", "STORE_AND_FORWARD": "store_and_forward"}


# ---------------------------------------------------------------------------------------------
# Reading


class _Doc:
    """A parsed file: the tree plus the line of each element, for messages that point at it."""

    def __init__(self, path: Path, root: ET.Element, lines: dict[int, int]):
        self.path = path
        self.root = root
        self.lines = lines

    def error(self, el: ET.Element, msg: str) -> UserError:
        name = el.get("name")
        what = f"<{el.tag} name={name!r}>" if name is not None else f"<{el.tag}>"
        return UserError(f"{self.path}:{self.lines.get(id(el), 0)}: {what}: {msg}")

    def number(self, el: ET.Element, attr: str, default: float | None = None) -> float:
        text = el.get(attr)
        if text is None:
            if default is None:
                raise self.error(el, f"missing attribute '{attr}'")
            return default
        try:
            x = float(text)
        except ValueError:
            raise self.error(el, f"{attr}={text!r} is not a number") from None
        if not math.isfinite(x) or x < 0:
            raise self.error(el, f"{attr}={text!r} must be a finite number >= 0")
        return x

    def capacity(self, el: ET.Element) -> float | None:
        text = el.get("transmission-capacity")
        if text is None:
            return None
        m = re.fullmatch(r"\s*([0-9.eE+]+)\s*(Gbps|Mbps|kbps|bps)?\s*", text)
        factor = {"Gbps": 1e9, "Mbps": 1e6, "kbps": 1e3, "bps": 1.0, None: 1.0}
        try:
            bps = float(m.group(1)) * factor[m.group(2)] if m else math.nan
        except ValueError:
            bps = math.nan
        if not (math.isfinite(bps) and bps > 0):
            raise self.error(el, f"transmission-capacity={text!r} is not a rate in bit/s (e.g. 100Mbps)")
        return bps


def _parse(path: Path) -> _Doc:
    """Parses with expat directly so that every element keeps its line number."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a WOPANet XML file") from None
    except OSError as e:
        raise UserError(f"{path}: cannot be read ({e.strerror})") from None
    builder = ET.TreeBuilder()
    lines: dict[int, int] = {}
    parser = expat.ParserCreate()

    def start(tag: str, attrs: dict[str, str]) -> None:
        lines[id(builder.start(tag, attrs))] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(data, True)
    except expat.ExpatError as e:
        msg = expat.errors.messages.get(e.code, str(e))
        raise UserError(f"{path}:{e.lineno}:{e.offset + 1}: not well-formed XML: {msg}") from None
    root = builder.close()
    return _Doc(path, root, lines)


def _check(doc: _Doc, el: ET.Element) -> None:
    """Refuses unknown elements and attributes, missing attributes and unsupported values."""
    required, optional = ATTRS[el.tag]
    for a in el.attrib:
        if a not in required and a not in optional:
            raise doc.error(el, f"unsupported attribute '{a}'")
    for a in sorted(required):
        if a not in el.attrib:
            raise doc.error(el, f"missing attribute '{a}'")
    for a, allowed in ENUMS.items():
        v = el.get(a)
        if v is not None and v not in allowed:
            raise doc.error(el, f"unsupported {a} '{v}' (supported: {', '.join(sorted(allowed))})")
    if (el.text or "").strip():
        raise doc.error(el, "unexpected text content")
    allowed_children = CHILDREN.get(el.tag, set())
    for child in el:
        if child.tag not in allowed_children:
            raise doc.error(child, f"unsupported element inside <{el.tag}>")
        if (child.tail or "").strip():
            raise doc.error(child, "unexpected text after the element")
        _check(doc, child)


def _num(x: float) -> str:
    """A number as short text: 1.0 -> '1', 0.5 -> '0.5'."""
    return str(int(x)) if x == int(x) and abs(x) < 1e15 else repr(x)


def _frame(doc: _Doc, flow: ET.Element, attr: str, overhead: float) -> str:
    """The Ethernet frame size of a payload attribute, as a native size."""
    payload = doc.number(flow, attr)
    frame = max(payload + overhead - INTERFRAME_BYTES, ETH_MIN)
    if frame > ETH_MAX:
        raise doc.error(flow, f"{attr}={_num(payload)} makes a {_num(frame)}-byte Ethernet frame, "
                              f"more than {ETH_MAX} B")
    bits = frame * 8
    return f"{_num(frame)}B" if bits == int(bits) and frame == int(frame) else f"{_num(bits)}b"


class Description(dict):
    """The native description read from a WOPANet file (plain data), which can say where in the
    file a native place such as ``flows[3].destinations[1]`` comes from: the engine's validation
    names native places, a user of a WOPANet file needs its lines."""

    def __init__(self, spec: dict, doc: _Doc, elements: dict[str, list[ET.Element]], warnings: list[str]):
        super().__init__(spec)
        self._doc = doc
        self._elements = elements
        #: What the file leaves open and the import decided (``warning: place: ...`` lines).
        self.warnings = warnings

    def locate(self, line: str) -> str:
        """One diagnostic line (``place: rule``) with its native place turned into the file's."""
        prefix = "warning: " if line.startswith("warning: ") else ""
        m = _PLACE.match(line[len(prefix):])
        if m is None:
            return line
        kind, i, k, rest, msg = m.groups()
        els = self._elements.get(kind, [])
        if int(i) >= len(els):
            return line
        el = els[int(i)]
        targets = el.findall("target")
        if k is not None and int(k) < len(targets):
            el = targets[int(k)]
            hop = re.fullmatch(r"path\[(\d+)\]", rest)
            hops = [h.get("node", "") for h in el.findall("path")]
            if hop and 1 <= int(hop.group(1)) <= len(hops):  # the native path starts at the source
                rest = f"path node {hops[int(hop.group(1)) - 1]!r}"
        return prefix + str(self._doc.error(el, f"{rest}: {msg}" if rest else msg))


_PLACE = re.compile(
    r"(end_systems|switches|links|flows)\[(\d+)\](?:\.destinations\[(\d+)\])?\.?([^:\s]*): (.*)", re.S)


def read(path: Path) -> Description:
    """Reads a WOPANet XML file into the native description (plain data, not yet validated)."""
    path = Path(path)
    doc = _parse(path)
    root = doc.root
    if root.tag != "elements":
        raise doc.error(root, "expected <elements> as the root element of a WOPANet file")
    _check(doc, root)
    networks = root.findall("network")
    if len(networks) != 1:
        raise UserError(f"{path}: expected exactly one <network> element, found {len(networks)}")
    net_el = networks[0]
    overhead = doc.number(net_el, "overhead", DEFAULT_OVERHEAD)
    spec: dict[str, Any] = {"name": net_el.get("name") or path.stem}
    defaults: dict[str, Any] = {}
    net_rate = doc.capacity(net_el)
    if net_rate is not None:
        defaults["link_rate"] = _native_rate(net_rate)
    defaults["interframe_overhead"] = f"{INTERFRAME_BYTES}B"
    spec["defaults"] = defaults

    node_rate: dict[str, float | None] = {}
    kinds: dict[str, str] = {}
    end_systems: list[dict] = []
    switches: list[dict] = []
    elements: dict[str, list[ET.Element]] = {"end_systems": [], "switches": [], "links": [], "flows": []}
    for el in root:
        if el.tag not in ("station", "switch"):
            continue
        name = el.get("name", "")
        if name in kinds:
            raise doc.error(el, f"the name is already used by a {kinds[name]}")
        kinds[name] = el.tag
        node_rate[name] = doc.capacity(el)
        node: dict[str, Any] = {"name": name}
        # WOPANet writes tech-latency without a unit; µs is assumed (every known sample has 0).
        latency = doc.number(el, "tech-latency", 0.0)
        if latency > 0:
            node["technological_latency"] = f"{_num(latency)}us"
        if el.tag == "switch":
            technique = el.get("switching-technique")
            if technique is not None:
                node["switching"] = SWITCHING[technique]
            switches.append(node)
            elements["switches"].append(el)
        else:
            end_systems.append(node)
            elements["end_systems"].append(el)

    links: list[dict] = []
    for el in root.iter("link"):
        elements["links"].append(el)
        link: dict[str, Any] = {}
        if el.get("name") is not None:
            link["name"] = el.get("name")
        for end in ("from", "to"):
            n = el.get(end, "")
            if n not in kinds:
                raise doc.error(el, f"{end}={n!r} is no station or switch of the file")
            link[end] = n
            port = el.get(end + "Port")
            if port is not None:
                link[end + "_port"] = port
        rate = doc.capacity(el)
        if rate is None:
            ends = [r for r in (node_rate[link["from"]], node_rate[link["to"]]) if r is not None]
            rate = min(ends) if ends else None
        if rate is not None:
            link["rate"] = _native_rate(rate)
        links.append(link)

    flows: list[dict] = []
    priorities: dict[str, int] = {}
    warnings: list[str] = []
    for el in root.iter("flow"):
        elements["flows"].append(el)
        flows.append(_read_flow(doc, el, kinds, overhead, priorities))
        _warn_open_choices(doc, el, warnings)

    if priorities:
        spec["classes"] = [{"name": n, "priority": p}
                           for n, p in sorted(priorities.items(), key=lambda kv: kv[1])]
    spec["end_systems"] = end_systems
    spec["switches"] = switches
    spec["links"] = links
    spec["flows"] = flows
    return Description(spec, doc, elements, warnings)


def _warn_open_choices(doc: _Doc, el: ET.Element, warnings: list[str]) -> None:
    """Warnings where the file leaves a choice open that WOPANet's own tools may make otherwise:
    several targets not all marked mode="M" (read as one multicast flow, counted once per port).
    A target without <path> with several fewest-hop paths is warned by the engine's routing, at
    the target's line."""
    targets = el.findall("target")
    plain = [t for t in targets if t.get("mode") != "M"]
    if len(targets) > 1 and plain:
        warnings.append(f"warning: {doc.error(el, '')}{len(plain)} of its {len(targets)} targets have no "
                        'mode="M"; all are read as one multicast flow (counted once per port)')


def _read_flow(doc: _Doc, el: ET.Element, kinds: dict[str, str], overhead: float,
               priorities: dict[str, int]) -> dict:
    """One <flow>: its traffic model and its targets."""
    name = el.get("name", "")
    source = el.get("source", "")
    if kinds.get(source) != "station":
        raise doc.error(el, f"source={source!r} is no station of the file")
    flow: dict[str, Any] = {"name": name}
    period = doc.number(el, "period")
    if period <= 0:
        raise doc.error(el, "period must be positive")
    jitter = doc.number(el, "jitter", 0.0)
    lmax = _frame(doc, el, "max-payload", overhead)
    lmin = _frame(doc, el, "min-payload", overhead)
    if doc.number(el, "min-payload") > doc.number(el, "max-payload"):
        raise doc.error(el, f"min-payload={el.get('min-payload')} exceeds "
                            f"max-payload={el.get('max-payload')}")
    if any(abs(period - b) < 1e-9 for b in VALID_BAGS_MS):
        flow.update(type="virtual_link", bag=f"{_num(period)}ms", lmin=lmin, lmax=lmax)
        if jitter > 0:
            flow["release_jitter"] = f"{_num(jitter)}ms"
    else:
        flow.update(type="periodic", period=f"{_num(period)}ms", size=lmax)
        if jitter > 0:
            flow["jitter"] = f"{_num(jitter)}ms"
        if lmin != lmax:
            flow["min_size"] = lmin
    flow["source"] = source
    destinations: list[Any] = []
    targets = el.findall("target")
    if not targets:
        raise doc.error(el, "has no <target>")
    for t in targets:
        dest = t.get("name", "")
        if kinds.get(dest) != "station":
            raise doc.error(t, "is no station of the file")
        hops = [p.get("node", "") for p in t.findall("path")]
        if not hops:
            destinations.append(dest)
            continue
        for h in hops:
            if h not in kinds:
                raise doc.error(t, f"path node {h!r} is no station or switch of the file")
        if hops[-1] != dest:
            raise doc.error(t, f"the path ends at {hops[-1]!r}, not at the target")
        destinations.append({"node": dest, "path": [source, *hops]})
    flow["destinations"] = destinations
    prio = el.get("priority")
    if prio is not None:
        level = PRIORITY_ORDER.get(prio.lower())
        if level is None:
            raise doc.error(el, f"unsupported priority '{prio}' (supported: High, Low)")
        priorities.setdefault(prio, level)
        flow["class"] = prio
    if el.get("deadline") is not None:
        flow["deadline"] = f"{_num(doc.number(el, 'deadline'))}ms"
    return flow


# ---------------------------------------------------------------------------------------------
# Writing a network

_UNITS = {
    "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9,
    "MiB": 8.0 * 1024 * 1024, "KiB": 8.0 * 1024, "MB": 8e6, "kB": 8e3, "B": 8.0, "Mb": 1e6,
    "Mbit": 1e6, "kb": 1e3, "kbit": 1e3, "b": 1.0, "bit": 1.0,
    "Gbps": 1e9, "Gb/s": 1e9, "Mbps": 1e6, "Mb/s": 1e6, "kbps": 1e3, "kb/s": 1e3, "bps": 1.0, "b/s": 1.0,
}


def _quantity(text: str) -> float:
    """A quantity as the engine writes it back ('2ms', '1047B', '100Mbps') in s, bits or bit/s.

    The engine validated the description already; this only undoes its unit suffixes.
    """
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(\S+)\s*", str(text))
    if not m or m.group(2) not in _UNITS:
        raise UserError(f"cannot read the quantity {text!r}")
    factor = _UNITS[m.group(2)]
    value = float(m.group(1))
    return value / round(1 / factor) if factor < 1 else value * factor


def _fmt(x: float) -> str:
    """A number for a WOPANet attribute: integral values without a decimal point."""
    r = round(x)
    if abs(x - r) <= 1e-9 * max(1.0, abs(x)):
        return str(int(r))
    return format(x, ".12g")


def _rate_text(bps: float, units: tuple[tuple[str, float], ...] = (("Mbps", 1e6),)) -> str:
    """A rate in the largest unit that keeps it whole ('100Mbps'), else in bit/s."""
    for unit, factor in units:
        if bps >= factor and abs(bps / factor - round(bps / factor)) < 1e-9:
            return f"{round(bps / factor)}{unit}"
    return _fmt(bps)


def _native_rate(bps: float) -> str:
    """A rate for the native description, which always names its unit."""
    text = _rate_text(bps, (("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)))
    return text if text.endswith("bps") else f"{text}bps"


def _element(tag: str, attrs: dict[str, str], indent: int, children: list[str] | None = None) -> str:
    """One element in the samples' layout: 3-space indent, attributes sorted by name."""
    # Imported here: xml.sax.saxutils imports urllib.request (http, email, ssl), which a reader
    # of WOPANet files never needs.
    from xml.sax.saxutils import quoteattr

    pad = "   " * indent
    text = "".join(f" {k}={quoteattr(v)}" for k, v in sorted(attrs.items()))
    if children is None:
        return f"{pad}<{tag}{text}/>\n"
    return f"{pad}<{tag}{text}>\n{''.join(children)}{pad}</{tag}>\n"


def _payload(size_text: str, overhead: int, what: str) -> str:
    """The payload that reads back as this Ethernet frame size."""
    bits = _quantity(size_text)
    if bits % 8:
        raise UserError(f"{what}: {size_text} is not a whole number of bytes; WOPANet payloads are bytes")
    return str(int(bits // 8) - (overhead - INTERFRAME_BYTES))


def dumps(net: Any) -> str:
    """Writes a validated network (`rtnetlab.model.Network`: its `spec` and `resolved()`) as WOPANet
    XML, refusing what WOPANet cannot express."""
    spec = net.spec
    res = net.resolved()
    nodes, ports = res["nodes"], res["ports"]

    def refuse(what: str) -> UserError:
        return UserError(f"WOPANet XML cannot express {what}")

    if len(res["planes"]) > 1:
        raise refuse(f"redundant planes ({', '.join(res['planes'])}): convert one plane at a time")
    if _quantity(spec["defaults"]["interframe_overhead"]) != INTERFRAME_BYTES * 8:
        raise refuse(f"defaults.interframe_overhead = {spec['defaults']['interframe_overhead']} "
                     f"(its payload overhead assumes {INTERFRAME_BYTES}B)")
    for p in ports:
        label = f"port {nodes[p['node']]['name']}:{p['name']}"
        if p["scheduler"]["kind"] != "fifo":
            raise refuse(f"the {p['scheduler']['kind']} scheduler of {label} (FIFO only)")
        if p["buffer"] is not None:
            raise refuse(f"the buffer size of {label}")
        if p["propagation_delay"]:
            raise refuse(f"the propagation delay of the link of {label}")
    for n in nodes:
        if n["receive_latency"]:
            raise refuse(f"the receive latency of {n['name']}")

    overhead = DEFAULT_OVERHEAD
    link_rate = _quantity(spec["defaults"]["link_rate"])
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n', "<elements>\n"]
    out.append(_element("network", {
        "name": spec["name"], "overhead": str(overhead), "shortest-path-policy": "DIJKSTRA",
        "technology": "AFDX", "transmission-capacity": _rate_text(link_rate), "x-type": "FULL",
    }, 1))
    n_es = 0
    n_sw = 0
    for n in nodes:
        rates = {ports[p]["rate"] for p in n["ports"]}
        attrs = {"name": n["name"], "service-policy": "FIRST_IN_FIRST_OUT",
                 "transmission-capacity": _rate_text(rates.pop() if len(rates) == 1 else link_rate)}
        if n["kind"] == "switch":
            attrs.update({"switching-technique": n["switching"].upper(),
                          "tech-latency": _fmt(n["technological_latency"] * 1e6),
                          "x": f"{240 + 160 * (n_sw // 8)}.0", "y": f"{80 + 64 * (n_sw % 8)}.0"})
            n_sw += 1
        else:
            if n["technological_latency"]:
                attrs["tech-latency"] = _fmt(n["technological_latency"] * 1e6)
            attrs.update({"x": f"{80 + 320 * (n_es % 2)}.0", "y": f"{48 + 48 * (n_es // 2)}.0"})
            n_es += 1
        out.append(_element("station" if n["kind"] == "end_system" else "switch", attrs, 1))
    for link in res["links"]:
        fwd, back = ports[link["forward"]], ports[link["backward"]]
        out.append(_element("link", {
            "from": nodes[fwd["node"]]["name"], "fromPort": fwd["name"], "name": link["name"],
            "to": nodes[back["node"]]["name"], "toPort": back["name"],
            "transmission-capacity": _rate_text(fwd["rate"]),
        }, 1))
    for i, f in enumerate(spec["flows"]):
        out.append(_dump_flow(f, f"flows[{i}] ({f['name']})", overhead))
    out.append("</elements>\n")
    return "".join(out)


def _dump_flow(f: dict, where: str, overhead: int) -> str:
    kind = f["type"]
    attrs: dict[str, str] = {"name": f["name"], "source": f["source"]}
    if kind == "virtual_link":
        attrs["period"] = _fmt(_quantity(f["bag"]) * 1e3)
        attrs["max-payload"] = _payload(f["lmax"], overhead, where)
        attrs["min-payload"] = _payload(f["lmin"], overhead, where)
        attrs["jitter"] = _fmt(_quantity(f.get("release_jitter", "0ms")) * 1e3)
        if f.get("skew_max") is not None:
            raise UserError(f"WOPANet XML cannot express the skew_max of {where}")
    elif kind == "periodic":
        if _quantity(f.get("offset", "0ms")):
            raise UserError(f"WOPANet XML cannot express the offset of {where}")
        attrs["period"] = _fmt(_quantity(f["period"]) * 1e3)
        attrs["max-payload"] = _payload(f["size"], overhead, where)
        attrs["min-payload"] = _payload(f.get("min_size") or f["size"], overhead, where)
        attrs["jitter"] = _fmt(_quantity(f.get("jitter", "0ms")) * 1e3)
    else:
        raise UserError(f"WOPANet XML cannot express the {kind} flow {where} (virtual_link or periodic only)")
    if f.get("deadline") is not None:
        attrs["deadline"] = _fmt(_quantity(f["deadline"]) * 1e3)
    if f.get("class") is not None:
        if f["class"].lower() not in PRIORITY_ORDER:
            raise UserError(f"WOPANet XML cannot express the class '{f['class']}' of {where} "
                            "(priorities High and Low only)")
        attrs["priority"] = f["class"]
    targets = []
    for d in f["destinations"]:
        if isinstance(d, str):
            targets.append(_element("target", {"mode": "M", "name": d}, 2))
            continue
        path = d.get("path")
        if path is None and d.get("paths"):
            path = next(iter(d["paths"].values()))
        hops = [_element("path", {"node": n}, 3) for n in (path or [])[1:]]
        targets.append(_element("target", {"mode": "M", "name": d["node"]}, 2, hops))
    return _element("flow", attrs, 1, targets)


# ---------------------------------------------------------------------------------------------
# Writing results


def java_double(x: float) -> str:
    """Java's Double.toString, which WOPANet uses: '8536000.0', '2.5608E7', '92.646'."""
    x = float(x) + 0.0  # no '-0.0'
    if x == 0:
        return "0.0"
    if not math.isfinite(x):
        return "Infinity" if x > 0 else ("-Infinity" if x < 0 else "NaN")
    from decimal import Decimal  # for writing results only: reading does without it

    sign = "-" if x < 0 else ""
    d = Decimal(repr(abs(x)))
    _, digits, exp = d.normalize().as_tuple()
    s = "".join(map(str, digits))
    point = len(s) + int(exp)  # position of the decimal point in the digit string
    if 1e-3 <= abs(x) < 1e7:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{s}"
        if point >= len(s):
            return f"{sign}{s}{'0' * (point - len(s))}.0"
        return f"{sign}{s[:point]}.{s[point:]}"
    mantissa = s[0] + "." + (s[1:] or "0")
    return f"{sign}{mantissa}E{point - 1}"


def _half_up(x: float, places: int) -> Decimal:
    from decimal import ROUND_HALF_UP, Decimal

    return Decimal(repr(float(x))).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def _percent(part: float, whole: float) -> str:
    ratio = 100.0 * part / whole if whole else 0.0
    if math.isinf(ratio):
        return "Infinity%"  # Java's String.format("%.1f%%", Double.POSITIVE_INFINITY)
    return f"{_half_up(ratio, 1)}%"


def _ceil_ns(us: float) -> float:
    """Rounds a bound up to whole ns (an integral µs value stays as it is)."""
    if math.isinf(us):
        return us
    scaled = us * 1e3
    r = round(scaled)
    return (r if abs(scaled - r) <= 1e-9 * max(1.0, abs(scaled)) else math.ceil(scaled)) / 1e3


def _port_key(name: str) -> tuple[int, int, str]:
    return (0, int(name), "") if name.isdigit() else (1, 0, name)


#: How an infinite bound is written in a results file: ``Infinity`` is what WOPANet's Java
#: (``Double.toString``) writes for one and what the readers of these files parse back
#: (``Double.parseDouble`` in Java tools, ``float()`` in Python ones such as xTFA's and Saihu's
#: pipelines). The file has no place for the reason, so an XML comment before the element
#: gives it; every XML reader skips comments.
INFINITY = "Infinity"


def _comment(text: str, indent: int) -> str:
    # "--" may not appear inside an XML comment.
    return f"{'   ' * indent}<!-- {text.replace('--', '- -')} -->\n"


def _value(x: float | None) -> float:
    """A bound as a float: an absent (unbounded) one is infinite."""
    return math.inf if x is None else float(x)


def results_dumps(spec: dict, analysis: dict, info: dict, reasons: Any = None) -> str:
    """Writes analysis results in the shape of WOPANet's ``_res.xml`` files.

    ``analysis`` is the analysis JSON (flows with delay_us / jitter_us, ports with delay_us /
    backlog_bytes), ``info`` the output of ``rtnetlab info --json`` (link loads). Flow delays and
    jitters are written as computed (rounded up to ns), port delays rounded half-up to ns like
    WOPANet's; with several planes a (flow, target) gets its worst plane. Elements follow the
    description's order (WOPANet's own order is that of a Java hash map).

    An unbounded delay, jitter, port delay or backlog (an overloaded port on the way) is written
    ``Infinity`` (see `INFINITY`), preceded by a comment with its reason: `reasons` (a
    `rtnetlab.results.Reasons`) when given, else the analysis' own.
    """
    from rtnetlab.results import clean_reason

    worst: dict[tuple[str, str], tuple[float, float]] = {}
    why: dict[tuple[str, str], str] = {}
    for r in analysis.get("flows", []):
        key = (r["flow"], r["destination"])
        d, j = _value(r["delay_us"]), _value(r["jitter_us"])
        if r["delay_us"] is None and key not in why:
            why[key] = reasons.flow(r) if reasons is not None else clean_reason(r.get("reason"))
        if key in worst:
            d, j = max(d, worst[key][0]), max(j, worst[key][1])
        worst[key] = (d, j)

    def dest_name(d: Any) -> str:
        return d if isinstance(d, str) else d["node"]

    order = [(f["name"], dest_name(d)) for f in spec.get("flows", []) for d in f["destinations"]]
    order += [k for k in worst if k not in set(order)]
    by_flow: dict[str, list[str]] = {}
    for flow, dest in order:
        if (flow, dest) in worst:
            by_flow.setdefault(flow, []).append(dest)

    def target(flow: str, d: str, which: int) -> str:
        value = worst[(flow, d)][which]
        text = _element("target", {"name": d, "value": java_double(_ceil_ns(value))}, 3)
        if math.isinf(value):
            text = _comment(f"unbounded: {why.get((flow, d)) or 'no finite bound'}", 3) + text
        return text

    def section(tag: str, which: int) -> str:
        flows = [_element("flow", {"name": flow}, 2, [target(flow, d, which) for d in dests])
                 for flow, dests in by_flow.items()]
        return _element(tag, {}, 1, flows)

    switch_names = [s["name"] for s in spec.get("switches", [])]
    per_switch: dict[str, list[dict]] = {s: [] for s in switch_names}
    for p in analysis.get("ports", []):
        if p["node"] in per_switch and float(p.get("load", 0.0)) > 0:
            per_switch[p["node"]].append(p)

    def port(p: dict) -> str:
        backlog, delay = _value(p["backlog_bytes"]), _value(p["delay_us"])
        delay_text = java_double(delay if math.isinf(delay) else float(_half_up(delay, 3)))
        attrs = {"backlog": java_double(backlog), "delay": delay_text, "num": str(p["port"])}
        text = _element("port", attrs, 3)
        if math.isinf(backlog) or math.isinf(delay):
            reason = reasons.port(p) if reasons is not None else clean_reason(p.get("reason"))
            text = _comment(f"unbounded: {reason or 'no finite bound'}", 3) + text
        return text

    switches = []
    for s in switch_names:
        ps = sorted(per_switch[s], key=lambda p: _port_key(str(p["port"])))
        if not ps:
            continue
        total = sum(_value(p["backlog_bytes"]) for p in ps)
        rows = [port(p) for p in ps]
        rows.append(_element("total", {"backlog": java_double(total), "buffer": java_double(BUFFER_BYTES),
                                       "percent": _percent(total, BUFFER_BYTES)}, 3))
        switches.append(_element("switch", {"name": s}, 2, rows))

    edges = []
    for link in info.get("links", []):
        usages = [_element("usage", {"percent": _percent(float(link[key]), float(link["rate_bps"])),
                                     "type": kind, "value": java_double(link[key])}, 3)
                  for kind, key in (("direct", "direct_bps"), ("reverse", "reverse_bps"))]
        edges.append(_element("edge", {"name": link["name"]}, 2, usages))

    body = [section("delays", 0), section("jitters", 1), _element("backlogs", {}, 1, switches),
            _element("load", {}, 1, edges)]
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + _element("results", {}, 0, body)


# ---------------------------------------------------------------------------------------------
# Reading results


def results_read(path: Path) -> dict:
    """Reads a WOPANet results file (``_res.xml``): per (flow, target) delay and jitter in µs,
    per (switch, port) delay (µs) and backlog (bytes). ``Infinity`` reads as an infinite value."""
    doc = _parse(Path(path))
    root = doc.root
    if root.tag != "results":
        raise doc.error(root, "expected <results> as the root element of a WOPANet results file")

    def number(el: ET.Element, attr: str) -> float:
        text = el.get(attr)
        if text is None:
            raise doc.error(el, f"missing attribute '{attr}'")
        try:
            x = float(text)
        except ValueError:
            raise doc.error(el, f"{attr}={text!r} is not a number") from None
        if math.isnan(x) or x < 0:
            raise doc.error(el, f"{attr}={text!r} must be a number >= 0 (or Infinity)")
        return x

    out: dict[str, Any] = {"delays": {}, "jitters": {}, "ports": {}, "lines": {}}
    for section in ("delays", "jitters"):
        for flow in root.findall(f"{section}/flow"):
            for t in flow.findall("target"):
                key = (flow.get("name", ""), t.get("name", ""))
                out[section][key] = number(t, "value")
                out["lines"].setdefault(key, doc.lines.get(id(t), 0))
    for sw in root.findall("backlogs/switch"):
        for p in sw.findall("port"):
            key = (sw.get("name", ""), p.get("num", ""))
            out["ports"][key] = {"delay_us": number(p, "delay"), "backlog_bytes": number(p, "backlog")}
            out["lines"].setdefault(key, doc.lines.get(id(p), 0))
    return out


def compare_results(path: Path, net: Any, analysis: dict) -> dict:
    """Sets a WOPANet results file beside an analysis of the same network: per (flow, target)
    the reference delay against the bound (the worst plane's), and warnings where the reference
    cannot be a bound: a finite value for a (flow, target) whose path crosses an overloaded port,
    or for an overloaded switch port, and entries the network does not have."""
    from rtnetlab.results import Reasons

    path = Path(path)
    ref = results_read(path)
    reasons = Reasons.of(net, analysis)
    info = net.info()
    overloaded = {(p["node"], p["port"]): p for p in info["ports"] if p["load_bps"] > p["rate_bps"]}
    bound: dict[tuple[str, str], float] = {}
    crossing: dict[tuple[str, str], list[str]] = {}
    for f in analysis.get("flows", []):
        key = (f["flow"], f["destination"])
        bound[key] = max(bound.get(key, 0.0), _value(f["delay_us"]))
        for port_key in reasons.paths.get((f["flow"], f["destination"], f["plane"]), []):
            if port_key in overloaded:
                label = f"{port_key[0]}:{port_key[1]} ({100 * overloaded[port_key]['utilisation']:.1f}%)"
                crossing.setdefault(key, [])
                if label not in crossing[key]:
                    crossing[key].append(label)
    rows = []
    for key in dict.fromkeys([*bound, *ref["delays"]]):
        r = ref["delays"].get(key)
        b = bound.get(key)
        rows.append({
            "flow": key[0], "destination": key[1],
            "bound_us": None if b is None or math.isinf(b) else b,
            "reference_delay_us": None if r is None or math.isinf(r) else r,
            "reference_jitter_us": (None if ref["jitters"].get(key) is None
                                    or math.isinf(ref["jitters"][key]) else ref["jitters"][key]),
            "crosses_overloaded": crossing.get(key, []),
            "reference_is_bound": not (crossing.get(key) and r is not None and math.isfinite(r)),
            "in_network": b is not None,
            "in_reference": r is not None,
        })
    warnings = []
    bad = [row for row in rows if not row["reference_is_bound"]]
    if bad:
        ports = sorted({p for row in bad for p in row["crosses_overloaded"]})
        first = bad[0]
        warnings.append(
            f"warning: {path}: {len(bad)} (flow, target) value(s) cross overloaded ports "
            f"({', '.join(ports)}): "
            f"they cannot be bounds, those delays are unbounded (first: {first['flow']} -> "
            f"{first['destination']}, {java_double(first['reference_delay_us'])} us at line "
            f"{ref['lines'].get((first['flow'], first['destination']), 0)})")
    bad_ports = [(k, v) for k, v in ref["ports"].items() if k in overloaded
                 and (math.isfinite(v["delay_us"]) or math.isfinite(v["backlog_bytes"]))]
    for k, v in bad_ports:
        o = overloaded[k]
        warnings.append(
            f"warning: {path}:{ref['lines'].get(k, 0)}: port {k[0]}:{k[1]} is overloaded "
            f"({100 * o['utilisation']:.1f}% of its rate): its delay {java_double(v['delay_us'])} us and "
            f"backlog {java_double(v['backlog_bytes'])} B cannot be bounds")
    unknown = [row for row in rows if not row["in_network"]]
    if unknown:
        names = ", ".join(f"{r['flow']} -> {r['destination']}" for r in unknown[:5])
        warnings.append(f"warning: {path}: {len(unknown)} (flow, target) pair(s) not in the network: {names}")
    return {"file": str(path), "rows": rows, "warnings": warnings}
