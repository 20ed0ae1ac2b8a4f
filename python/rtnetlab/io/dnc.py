"""Server graphs written for the Deterministic Network Calculator (DNC, NetCal) as Java sources
(`*.java`, a `ServerGraphFactory` or a test building a `ServerGraph`), read into rtnetlab's
`server_graph` description. Published data sets of random FIFO feed-forward networks come in this
form (one class per network, as DNC's network generator writes them), so they can be analysed
as they are: `rtnetlab analyze random_ff_7.java`.

What is read, statement by statement (the Java is not compiled: anything else is ignored):

* `X = sg.addServer("name", factory.createServiceCurve("SC{...}"), [max service curve,]
  Multiplexing.FIFO, ...)`, X a variable or `servers[i]`. The service curve must be
  rate-latency (`SC{(0.0,0.0),R}` or `SC{(0.0,0.0),0.0;(T,0.0),R}`). A maximum service curve
  other than none is ignored: it can only lower a bound, so the bounds stay sound (looser).
  `Multiplexing.ARBITRARY` is refused: rtnetlab chooses the multiplexing per analysis
  (`--blind`), not per server.
* `sg.addTurn("t", A, B)`: each step of a flow's path must be a declared turn.
* `L.add(X)` ... `sg.addFlow("name", factory.createArrivalCurve("AC{...}"), L)` (or the servers
  listed in the call): a token bucket `AC{(0.0,0.0),0.0;!(0.0,b),r}` (or `AC{(0.0,0.0),r}`,
  no burst).

A server with rate 0 that no flow crosses (DNC's generator writes them for unused nodes) is
left out; one that a flow crosses is an error.
"""

from __future__ import annotations

import re
from pathlib import Path

from rtnetlab.errors import UserError

_NUM = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|Infinity)"
_POINT = rf"!?\(\s*({_NUM})\s*,\s*({_NUM})\s*\)\s*,\s*({_NUM})"
_STRING = r'"([^"\\]*)"'
_REF = r"([A-Za-z_]\w*(?:\s*\[\s*\d+\s*\])?)"


def _segments(curve: str) -> list[tuple[float, float, float]]:
    """The (x, y, slope) segments of a DNC curve string such as `SC{(0.0,0.0),0.0;(2.0,0.0),5.0}`."""
    body = curve[curve.index("{") + 1 : curve.rindex("}")]
    out = []
    for part in body.split(";"):
        m = re.fullmatch(rf"\s*{_POINT}\s*", part)
        if not m:
            raise ValueError(f"cannot read the curve segment {part.strip()!r}")
        a, b, c = (float(g) for g in m.groups())
        out.append((a, b, c))
    return out


def rate_latency(curve: str) -> tuple[float, float]:
    """(rate, latency) of a rate-latency service curve string; ValueError for another shape."""
    segs = _segments(curve)
    if len(segs) == 1 and segs[0][:2] == (0.0, 0.0):
        return segs[0][2], 0.0
    if len(segs) == 2 and segs[0] == (0.0, 0.0, 0.0) and segs[1][1] == 0.0 and segs[1][0] >= 0:
        return segs[1][2], segs[1][0]
    raise ValueError(f"{curve}: not a rate-latency service curve (rate R after a latency T)")


def token_bucket(curve: str) -> tuple[float, float]:
    """(burst, rate) of a token-bucket arrival curve string; ValueError for another shape."""
    segs = _segments(curve)
    if len(segs) == 1 and segs[0][:2] == (0.0, 0.0):
        return 0.0, segs[0][2]
    if len(segs) == 2 and segs[0] == (0.0, 0.0, 0.0) and segs[1][0] == 0.0:
        return segs[1][1], segs[1][2]
    raise ValueError(f"{curve}: not a token-bucket arrival curve (a burst b, then rate r)")


def _statements(text: str) -> list[tuple[int, str]]:
    """The source's statements with the line each starts on, comments removed."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    # Split at the semicolons outside string literals (DNC's curve strings hold semicolons).
    chunks: list[str] = []
    current: list[str] = []
    for token in re.findall(r'"(?:[^"\\\n]|\\.)*"|;|[^";]+|"', text):
        if token == ";":
            chunks.append("".join(current))
            current = []
        else:
            current.append(token)
    chunks.append("".join(current))
    out, line = [], 1
    for chunk in chunks:
        lead = len(chunk) - len(chunk.lstrip())
        out.append((line + chunk[:lead].count("\n"), " ".join(chunk.split())))
        line += chunk.count("\n")
    return out


def _key(ref: str) -> str:
    return re.sub(r"\s+", "", ref)


def read(path: Path) -> dict:
    """The description (plain data) of the server graph a DNC Java source builds."""
    from rtnetlab.io import formats  # its reader keeps the size limit and the one-line errors

    return parse(formats._read_text(path), str(path))


def parse(text: str, source: str = "(dnc)") -> dict:
    """The description of the server graph built by DNC Java source `text`."""
    servers: dict[str, dict] = {}  # by the Java reference (variable or servers[i])
    turns: set[tuple[str, str]] = set()
    lists: dict[str, list[str]] = {}
    flows: list[dict] = []

    def fail(line: int, msg: str) -> UserError:
        return UserError(f"{source}:{line}: {msg}")

    def server_name(line: int, ref: str) -> str:
        s = servers.get(_key(ref))
        if s is None:
            raise fail(line, f"'{ref}' is not a server added before (sg.addServer)")
        return s["name"]

    for line, st in _statements(text):
        if m := re.search(rf"{_REF}\s*=\s*\w+\.addServer\s*\((.*)\)\s*$", st):
            ref, args = m.group(1), m.group(2)
            name = re.match(rf"\s*{_STRING}", args)
            sc = re.search(r'createServiceCurve\s*\(\s*"([^"]*)"', args)
            if not name or not sc:
                raise fail(line, "addServer: expected a name and factory.createServiceCurve(\"SC{...}\")")
            msc = re.search(r'createMaxServiceCurve\s*\(\s*"([^"]*)"', args)
            mux = re.search(r"Multiplexing\.(\w+)", args)
            if mux and mux.group(1) != "FIFO":
                raise fail(
                    line,
                    f"server '{name.group(1)}': Multiplexing.{mux.group(1)} is not read: rtnetlab takes the "
                    "multiplexing per analysis; make it FIFO and analyse with --blind for arbitrary "
                    "multiplexing",
                )
            try:
                rate, latency = rate_latency(sc.group(1))
                if msc:
                    _segments(msc.group(1))  # read, then ignored: a maximum service curve only lowers bounds
            except ValueError as e:
                raise fail(line, f"server '{name.group(1)}': {e}") from None
            servers[_key(ref)] = {"name": name.group(1), "rate": rate, "latency": latency}
        elif m := re.search(rf"\w+\.addTurn\s*\(\s*{_STRING}\s*,\s*{_REF}\s*,\s*{_REF}\s*\)", st):
            turns.add((server_name(line, m.group(2)), server_name(line, m.group(3))))
        elif m := re.search(rf"(?:^|[{{}}]\s*){_REF}\s*\.\s*add\s*\(\s*{_REF}\s*\)$", st):
            lists.setdefault(m.group(1), []).append(server_name(line, m.group(2)))
        elif m := re.search(rf"(?:^|[{{}}]\s*){_REF}\s*\.\s*clear\s*\(\s*\)$", st):
            lists[m.group(1)] = []
        elif m := re.search(r"\w+\.addFlow\s*\((.*)\)\s*$", st):
            args = m.group(1)
            name = re.match(rf"\s*{_STRING}\s*,", args)
            ac = re.search(r'createArrivalCurve\s*\(\s*"([^"]*)"\s*\)', args)
            if not ac:
                raise fail(line, "addFlow: expected factory.createArrivalCurve(\"AC{...}\")")
            fname = name.group(1) if name else f"f{len(flows)}"
            rest = [a.strip() for a in args[ac.end() :].split(",") if a.strip()]
            if len(rest) == 1 and rest[0] in lists:
                path = list(lists[rest[0]])
            else:
                path = [server_name(line, r) for r in rest]
            if not path:
                raise fail(line, f"flow '{fname}': its path is empty")
            for a, b in zip(path, path[1:], strict=False):
                if turns and (a, b) not in turns:
                    raise fail(line, f"flow '{fname}': no turn from '{a}' to '{b}' (sg.addTurn)")
            try:
                burst, rate = token_bucket(ac.group(1))
            except ValueError as e:
                raise fail(line, f"flow '{fname}': {e}") from None
            flows.append({"name": fname, "burst": burst, "rate": rate, "path": path})

    if not flows:
        raise UserError(f"{source}: no flow found (sg.addFlow): not a DNC server graph")
    used = {s for f in flows for s in f["path"]}
    kept = []
    for s in servers.values():
        if s["name"] not in used and s["rate"] == 0:
            continue  # an unused node of the generator: it affects no bound
        if s["rate"] <= 0:
            raise UserError(f"{source}: server '{s['name']}': rate {s['rate']}, but flows cross it")
        kept.append(s)
    name = re.search(r"class\s+(\w+)", text)
    return {
        "name": name.group(1) if name else Path(source).stem,
        "server_graph": {"servers": kept, "flows": flows},
    }
