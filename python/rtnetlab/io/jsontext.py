"""Indented JSON text, byte for byte what ``json.dumps(data, indent=2, allow_nan=False)`` writes,
written by orjson (Rust) where the result is provably the same.

Python's ``json`` writes indented JSON with its pure-Python encoder (its C encoder does not
indent): about 20 ms for a 265-VL simulation's report, most of what ``--json`` cost. orjson writes
the same text (the same indentation, separators, key order, escapes and shortest round-trip
digits of floats) except where the two differ, each handled here:

* floats below 1e-4 in magnitude: Python spells them ``1e-05``, ``1.5e-07``, orjson
  ``0.00001``, ``1.5e-7`` (the same digits): such numbers are rewritten with ``repr``;
* non-ASCII text (and DEL) Python escapes (``ensure_ascii``) as ``\\u00e9``, surrogate pairs
  above U+FFFF; orjson writes it as UTF-8: the characters are escaped afterwards the same way;
* NaN and infinities Python refuses (``ValueError``), orjson writes ``null``; integers beyond 64
  bits, keys that are not strings, and every type besides dict, list, tuple, str, int, float, bool
  and None (subclasses, enums, dataclasses, dates...) each encoder treats its own way: a
  document with any of these goes to Python's encoder, which does what it always did.

`loads` reads the engine's JSON (serde_json's, whose integers fit in 64 bits and which writes no
NaN) with orjson: the same objects as ``json.loads``, three to six times faster.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

#: A float written by orjson that Python spells otherwise: in a value's place (after a space, at
#: the start; before a comma or the end of a line: a raw newline never stands inside a JSON
#: string, so no match can fall inside one), 0.0000... or with a negative exponent.
_SMALL_FLOAT = r"(?:(?<= )|^)-?(?:0\.0000[0-9]+|[0-9](?:\.[0-9]+)?e-[0-9]+)(?=,?\n|,?\Z)"
#: What ``ensure_ascii`` escapes: everything above ``~``.
_NON_ASCII = "[\x7f-\U0010ffff]"
_PLAIN_SCALARS = frozenset((str, int, bool, type(None)))


def dumps(data: Any, default: Callable[[Any], Any] | None = None) -> str:
    """``json.dumps(data, indent=2, allow_nan=False, default=default)``'s text (and its errors),
    faster."""
    # orjson first: it refuses cycles (its depth limit), which the walk would not end on.
    text = _orjson_dumps(data)
    if text is None or not _plain(data):
        return json.dumps(data, indent=2, allow_nan=False, default=default)
    # The patterns are compiled (re caches them) only when the text may need them: compiling
    # costs more than the whole document's writing.
    if "e-" in text or "0.0000" in text:
        text = re.sub(_SMALL_FLOAT, lambda m: repr(float(m.group())), text)
    if not text.isascii() or "\x7f" in text:
        text = re.sub(_NON_ASCII, _escape, text)
    return text


def loads(text: str) -> Any:
    """``json.loads(text)`` for the engine's JSON text. orjson reads integers beyond 64 bits as
    floats (serde_json writes none); what it refuses (NaN, a lone surrogate, nesting beyond its
    limit) goes to ``json.loads``, which gives what it always gave."""
    try:
        import orjson
    except ImportError:
        return json.loads(text)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def not_json(path: Any, e: ValueError) -> str:
    """A file that is not JSON, as one line naming where it stops being JSON:
    `FILE:line:column: not JSON (Expecting value)` (a text that does not decode: `FILE: ...`)."""
    if isinstance(e, json.JSONDecodeError):
        return f"{path}:{e.lineno}:{e.colno}: not JSON ({e.msg})"
    return f"{path}: not JSON ({e})"


def _orjson_dumps(data: Any) -> str | None:
    try:
        import orjson
    except ImportError:  # an install without it still writes the same JSON, slower
        return None
    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # a key not a string, an integer beyond 64 bits, a lone surrogate, a cycle...
        return None


def _plain(data: Any) -> bool:
    """Whether `data` holds only dicts, lists, tuples, str, int, bool, None and finite floats
    (exactly these types: the ones both encoders write the same way)."""
    stack = [data]
    scalars = _PLAIN_SCALARS
    isfinite = math.isfinite
    while stack:
        o = stack.pop()
        t = type(o)
        if t is dict:
            values = o.values()
        elif t is list or t is tuple:
            values = o
        else:
            values = (o,)
        for v in values:
            tv = type(v)
            if tv in scalars:
                continue
            if tv is float:
                if not isfinite(v):
                    return False
            elif tv is dict or tv is list or tv is tuple:
                stack.append(v)
            else:
                return False
    return True


def _escape(m: re.Match) -> str:
    n = ord(m.group())
    if n < 0x10000:
        return f"\\u{n:04x}"
    n -= 0x10000
    return f"\\u{0xD800 | (n >> 10):04x}\\u{0xDC00 | (n & 0x3FF):04x}"
