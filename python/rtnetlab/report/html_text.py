"""Text of the page: escaping, numbers as the tables show them, sort keys, status badges.
"""

from __future__ import annotations

import html
import math
from typing import Any


def esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def us(x: float | None, unbounded: str = "unbounded") -> str:
    if x is None:
        return unbounded
    return f"{x:,.1f}" if abs(x) < 1e5 else f"{x:,.0f}"


def nbytes(x: float | None, unbounded: str = "unbounded") -> str:
    return unbounded if x is None else f"{x:,.0f}"


def pct(x: float | None) -> str:
    if x is None:
        return "–"
    return "unbounded" if math.isinf(x) else f"{100 * x:.1f}%"


def num_attr(x: float | None, missing: float = -1.0) -> str:
    """Sort key of a table cell: unbounded (None) sorts above everything unless `missing` is given."""
    if x is None:
        x = missing
    if math.isinf(x):
        x = 1e300
    return f"{x:.6g}"


def status_badge(status: str) -> str:
    return f'<span class="badge {esc(status)}">{esc(status)}</span>'
