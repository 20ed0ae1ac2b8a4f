"""Result tables on the terminal: the most critical rows first, and only as many as asked for.

A 5000-VL network has 18,000 (flow, destination, plane) rows; nobody reads them on a terminal,
and rich lays out a row in about 0.6 ms, so printing them all took 20 s. Commands sort rows by
how critical they are, show the first ``--rows`` (40 by default) and say how many were left out;
``--rows all`` shows every row, laid out as plain aligned text beyond ``PLAIN_ABOVE`` rows.
``--json`` (or ``-o FILE``) always carries every row.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from rtnetlab.errors import UserError

if TYPE_CHECKING:
    from rich.console import Console

DEFAULT_ROWS = 40
PLAIN_ABOVE = 2000

RowsOpt = Annotated[
    str,
    typer.Option(
        "--rows",
        help=f"Rows per results table, most critical first: a number or 'all' (default {DEFAULT_ROWS}).",
    ),
]


def parse_limit(text: str) -> int | None:
    """``--rows``: a positive number, or ``all`` (None)."""
    if text == "all":
        return None
    if not text.isdigit() or int(text) < 1:
        raise UserError(f"--rows: expected a positive number or 'all', got '{text}'")
    return int(text)


class ResultTable:
    """A titled table whose text columns (``left``) align left and numbers right."""

    def __init__(self, title: str, columns: list[str], left: tuple[str, ...]):
        self.title = title
        self.columns = columns
        self.left = left
        self.rows: list[tuple[tuple[str, ...], str | None]] = []
        #: Rows counted but not laid out (see `add_rows`).
        self.unformatted = 0

    def add_row(self, *cells: str, style: str | None = None) -> None:
        self.rows.append((cells, style))

    def add_rows(self, items: list, row: Callable, limit: int | None, key: Callable) -> None:
        """The rows of `items`, most critical (smallest `key`) first, as `row(item)` gives them,
        ``(cells, style)``: only the first `limit` are sorted out and formatted, the others only
        counted (``heapq.nsmallest`` is ``sorted(...)[:limit]``, in one pass)."""
        shown = sorted(items, key=key) if limit is None else heapq.nsmallest(limit, items, key=key)
        self.rows.extend(row(i) for i in shown)
        self.unformatted += len(items) - len(shown)

    def print(self, console: Console, limit: int | None, what: str = "rows") -> None:
        shown = self.rows if limit is None else self.rows[:limit]
        # The commands' lazy consoles (cli/common.py) know when they would print plain text; a rich
        # Console given by a caller does not (looked up on the type: the lazy one would make its
        # console to answer).
        lazy: Any = console if hasattr(type(console), "plain_file") else None
        file = lazy.plain_file() if lazy is not None else None
        if file is not None and not (getattr(file, "encoding", None) or "utf-8").lower().startswith("utf"):
            file = None  # rich draws the box in ASCII then
        boxed = None if file is None or len(shown) > PLAIN_ABOVE else self.boxed(shown, lazy.plain_width())
        if len(shown) > PLAIN_ABOVE:
            self._print_plain(console, shown)
        elif boxed is not None and file is not None:
            file.write(boxed)
        else:
            from rich.table import Table

            table = Table(title=self.title, title_justify="left")
            for col in self.columns:
                table.add_column(col, justify="left" if col in self.left else "right")
            for cells, style in shown:
                table.add_row(*cells, style=style)
            console.print(table)
        hidden = len(self.rows) - len(shown) + self.unformatted
        if hidden:
            console.print(
                f"... {hidden:,} more {what} not shown (the least critical): --rows all shows them, "
                "--json gives every field",
                markup=False,
            )

    def boxed(self, rows: list[tuple[tuple[str, ...], str | None]], width: int | None) -> str | None:
        """The table as rich lays it out without a terminal (no colours; heavy head box, columns
        as wide as their widest cell, one space of padding), when that layout is plain: the
        table fits in `width`, has rows, and every cell is plain ASCII text; else None (rich
        lays it out). tests/test_analyze_view.py holds it to rich's own text."""
        from rtnetlab.text import plain_text

        if not rows or width is None:
            return None
        grid = [tuple(self.columns), *(cells for cells, _ in rows)]
        if not all(plain_text(c, True) and "\n" not in c for cells in grid for c in cells):
            return None
        widths = [max(len(cells[i]) for cells in grid) for i in range(len(self.columns))]
        total = sum(widths) + 3 * len(widths) + 1
        if total > width or len(self.title) > total or not plain_text(self.title, True):
            return None
        left = [col in self.left for col in self.columns]

        def line(cells: tuple[str, ...], bar: str) -> str:
            return bar + bar.join(
                f" {c.ljust(w) if lj else c.rjust(w)} " for c, w, lj in zip(cells, widths, left, strict=True)
            ) + bar

        def rule(a: str, fill: str, mid: str, b: str) -> str:
            return a + mid.join(fill * (w + 2) for w in widths) + b

        text = [self.title, rule("┏", "━", "┳", "┓"), line(grid[0], "┃"), rule("┡", "━", "╇", "┩")]
        text.extend(line(cells, "│") for cells in grid[1:])
        text.append(rule("└", "─", "┴", "┘"))
        return "\n".join(text) + "\n"

    def _print_plain(self, console: Console, rows: list[tuple[tuple[str, ...], str | None]]) -> None:
        widths = [len(c) for c in self.columns]
        for cells, _ in rows:
            widths = [max(w, len(c)) for w, c in zip(widths, cells, strict=True)]

        def line(cells) -> str:
            return "  ".join(
                c.ljust(w) if col in self.left else c.rjust(w)
                for c, w, col in zip(cells, widths, self.columns, strict=True)
            ).rstrip()

        text = [self.title, line(self.columns), "  ".join("-" * w for w in widths)]
        text.extend(line(cells) for cells, _ in rows)
        console.file.write("\n".join(text) + "\n")
