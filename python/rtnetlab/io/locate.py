"""Where a place of a YAML or JSON file (`vary.network.links[*].rate[1]`, `requests[0].links[0].bandwidth`)
is written in it: line and column, so that an error names the user's own file as an editor
reads it (`spec.yaml:6:30: vary...: ...`), not the JSON the file was turned into on its way.

Keys may hold dots and brackets themselves (a sweep's `network.links[*].rate`): a place is
matched against the keys the file actually has, the longest first. Only called once an error
is known, so the file is read again here (PyYAML's composer, which keeps positions).
"""

from __future__ import annotations

import re
from pathlib import Path

#: Files larger than this are not searched (an error message is not worth a minute of parsing).
MAX_BYTES = 20_000_000
_INDEX = re.compile(r"\[(\d+)\]")
_PLACE = re.compile(r"[A-Za-z_][\w\-]*(\[(\d+|\*)\]|\.[A-Za-z_*][\w\-*]*)*(\[(\d+|\*)\])*")


def looks_like_place(text: str) -> bool:
    """A path into a document (`a.b[0].c`), as opposed to a sentence."""
    return bool(_PLACE.fullmatch(text))


def position(file: Path, place: str) -> tuple[int, int] | None:
    """(line, column), both from 1, of `place` in `file`, or of its deepest part the file has
    (a missing key: the mapping that should hold it); None when the file cannot be read as YAML."""
    try:
        import yaml

        if file.stat().st_size > MAX_BYTES:
            return None
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        with open(file, encoding="utf-8") as f:
            node = yaml.compose(f, Loader=loader)
    except Exception:  # not YAML after all, unreadable: the message goes without a position
        return None
    if node is None:
        return None
    mark = node.start_mark
    rest = place
    while rest:
        if isinstance(node, yaml.SequenceNode):
            m = _INDEX.match(rest)
            if not m or int(m[1]) >= len(node.value):
                break
            node = node.value[int(m[1])]
            mark = node.start_mark
            rest = rest[m.end() :].removeprefix(".")
        elif isinstance(node, yaml.MappingNode):
            best = None
            for key, value in node.value:
                k = key.value if isinstance(key, yaml.ScalarNode) else None
                if k and (rest == k or rest.startswith((k + ".", k + "["))):
                    if best is None or len(k) > len(best[0].value):
                        best = (key, value)
            if best is None:
                break
            key, node = best
            mark = key.start_mark
            rest = rest[len(key.value) :].removeprefix(".")
        else:
            break
    return mark.line + 1, mark.column + 1


def at(file: Path, place: str) -> str:
    """`file:line:column` of `place`, or `file` alone when it cannot be placed."""
    pos = position(file, place)
    return f"{file}:{pos[0]}:{pos[1]}" if pos else str(file)
