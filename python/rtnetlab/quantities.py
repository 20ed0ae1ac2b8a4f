"""Quantities given to the Python API as numbers, written as the description format writes them.

The format refuses a bare number for a duration, a data size or a data rate (``2`` could be
seconds or milliseconds, bits or bytes). The API takes numbers in SI base units — seconds, bits,
bits per second, what `rtnetlab._core.parse_quantity` returns — and writes them with their
unit before the description reaches the engine: ``0.002`` for a ``bag`` becomes ``"2ms"``,
``12144`` bits for an ``lmax`` becomes ``"1518B"``.

Which key holds which kind of quantity is read from the format's JSON Schema, which the engine
generates from its model (``Duration``, ``DataSize`` and ``DataRate`` types): there is no list of
keys kept by hand here.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

#: The schema's names of the quantity types, and the kind each is.
_TYPES = {"Duration": "duration", "DataSize": "size", "DataRate": "rate"}


#: Parts of the format whose numbers are plain (a server graph's: any consistent units).
PLAIN = frozenset({"server_graph"})


def _kind_of(node: Any) -> str | None:
    """The kind of quantity a schema node is (directly, or through one level of anyOf / allOf)."""
    if not isinstance(node, dict):
        return None
    ref = node.get("$ref")
    if isinstance(ref, str):
        return _TYPES.get(ref.rsplit("/", 1)[-1])
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in node.get(key, []) or []:
            kind = _kind_of(sub)
            if kind is not None:
                return kind
    return None


@lru_cache(maxsize=1)
def kinds() -> dict[str, str]:
    """Every property name of the format holding a quantity, and its kind (duration, size, rate).

    A name used for two kinds is left out (its numbers are then passed as they are, and the
    engine names the problem); a mapping whose values are quantities (DRR ``quanta``, CBS
    ``idle_slopes``) is listed under its own name."""
    import json

    from rtnetlab import _core

    found: dict[str, set[str]] = {}

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict):
                for name, sub in props.items():
                    kind = _kind_of(sub)
                    if kind is None and isinstance(sub, dict):
                        kind = _kind_of(sub.get("additionalProperties"))
                        if kind is None:
                            for alt in sub.get("anyOf", []) or []:
                                kind = kind or _kind_of(alt.get("additionalProperties") if
                                                        isinstance(alt, dict) else None)
                    if kind is not None:
                        found.setdefault(name, set()).add(kind)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(json.loads(_core.schema_json()))
    return {name: next(iter(k)) for name, k in found.items() if len(k) == 1}


def _whole(x: float) -> int | None:
    n = round(x)
    return n if abs(x - n) <= 1e-9 * max(1.0, abs(x)) else None


def format_quantity(kind: str, value: float) -> str:
    """A number in SI base units (seconds, bits, bits per second) as the format writes it.

    ```pycon
    >>> format_quantity("duration", 0.002)
    '2ms'
    >>> format_quantity("size", 12144)
    '1518B'
    >>> format_quantity("rate", 100e6)
    '100Mbps'

    ```
    """
    if isinstance(value, bool) or not math.isfinite(value):
        return repr(value)  # refused by the engine, by name
    if kind == "duration":
        ns = _whole(value * 1e9)
        if ns is None:
            return f"{value!r}s"
        for unit, scale in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
            if ns % scale == 0 and ns != 0:
                return f"{ns // scale}{unit}"
        return f"{ns}ns"
    if kind == "size":
        bits = _whole(value)
        if bits is None:
            return f"{value!r}b"
        return f"{bits // 8}B" if bits % 8 == 0 else f"{bits}b"
    bps = _whole(value)
    if bps is None:
        return f"{value!r}bps"
    for unit, scale in (("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3)):
        if bps % scale == 0 and bps != 0:
            return f"{bps // scale}{unit}"
    return f"{bps}bps"


def with_units(value: Any, key: str | None = None, kind: str | None = None,
               parent: str | None = None) -> Any:
    """`value` (plain data, a description or a part of one) with every number held by a
    quantity key written with its unit (a number under a mapping of quantities, such as DRR
    ``quanta``, takes the mapping's kind); everything else as it is. A new object where
    something changed, the same one otherwise. The schema is read only when a number is met."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        changed = {}
        for k, v in value.items():
            if isinstance(v, str) or k in PLAIN:
                continue
            new = with_units(v, k, kind, key)
            if new is not v:
                changed[k] = new
        return {**value, **changed} if changed else value
    if isinstance(value, list):
        items = [with_units(v, None, kind, key) for v in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if kind is None:
            table = kinds()
            kind = table.get(key or "") or table.get(parent or "")
        if kind is not None:
            return format_quantity(kind, float(value))
    return value
