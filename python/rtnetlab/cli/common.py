"""What every command shares: the two consoles, the exit codes, the common options, the JSON
shapes of results and errors, the rule of output files, the numbers' formatting.

Light on purpose (typer only; rich's consoles are made when first printed to): every command
module imports it at start-up.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from rtnetlab.errors import UserError
from rtnetlab.text import comma_list, plain_text  # noqa: F401 (the commands' own)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    import rtnetlab as rt
    from rtnetlab.model import Network


class _LazyConsole:
    """A rich console made on first use: rich costs a tenth of a second to import, and a command
    that prints JSON, or nothing, never needs it."""

    def __init__(self, **options: Any):
        self._options = options
        self._console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return getattr(self._console, name)

    def plain_file(self) -> Any:
        """The file this console writes to when rich would write plain text to it (not a terminal,
        no colour forced, the console not made yet), else None: a line or a table is then
        written as rich would, without importing rich (a tenth of a second) or laying it out."""
        if self._console is not None or any(v in os.environ for v in _FORCED_TERMINAL):
            return None
        file = sys.stderr if self._options.get("stderr") else sys.stdout
        isatty = getattr(file, "isatty", None)
        return None if isatty is None or isatty() else file

    def plain_width(self) -> int | None:
        """The width this console lays tables out in, when fixed."""
        return self._options.get("width")

    def print(self, *objects: Any, markup: bool | None = None, style: Any = None, **options: Any) -> None:
        file = self.plain_file()
        if (file is not None and not options and len(objects) == 1 and isinstance(objects[0], str)
                and plain_text(objects[0], markup is not False)):
            file.write(objects[0] + "\n")  # the style has no colour to add without a terminal
            return
        self.__getattr__("print")(*objects, markup=markup, style=style, **options)

    # Special methods are looked up on the type, not through __getattr__ (rich's Live uses these).
    def __enter__(self) -> Any:
        return self.__getattr__("__enter__")()

    def __exit__(self, *exc: Any) -> None:
        self.__getattr__("__exit__")(*exc)


#: rich makes a terminal of any output when one of these is set.
_FORCED_TERMINAL = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")


# Tables keep their columns when piped (rich would otherwise squeeze them to 80 characters).
out: Console = _LazyConsole(  # type: ignore[assignment]
    emoji=False, highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 250
)
err: Console = _LazyConsole(emoji=False, stderr=True, highlight=False, soft_wrap=True)  # type: ignore[assignment]

EXIT_VERDICT = 1
EXIT_USER = 2
EXIT_INTERNAL = 3
EXIT_SIGINT = 130
EXIT_SIGTERM = 143

FileArg = Annotated[
    Path,
    typer.Argument(help="Network description (.yaml, .yml, .json, WOPANet .xml or DNC server graph .java)"),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON (errors too).")]
FailOnMissOpt = Annotated[
    bool,
    typer.Option(
        "--fail-on-miss",
        help="Exit with code 1 when a deadline is missed (or a bound is infinite where a deadline "
        "exists); for CI gates.",
    ),
]


def emit_json(data: Any) -> None:
    from rtnetlab.io import jsontext

    sys.stdout.write(jsontext.dumps(data, default=_json_default) + "\n")


def _json_default(x: Any) -> Any:
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def warn(net: Network | rt.Network) -> None:
    for w in net.warnings:
        err.print(w, markup=False)


def wrote(*paths: Path, detail: str = "") -> None:
    """Says where each file went (and which directories were created for them)."""
    from rtnetlab.io import output as outfiles

    for d in outfiles.created_directories:
        out.print(f"created directory {d}", markup=False)
    outfiles.created_directories.clear()
    for k, path in enumerate(paths):
        out.print(f"wrote {path}" + (f" ({detail})" if detail and k == len(paths) - 1 else ""), markup=False)


def _error_entry(text: str) -> dict:
    """One problem as the JSON error shape: the place (text before the first ': '), the rule."""
    text = text.removeprefix("warning: ")
    place, sep, message = text.partition(": ")
    if not sep or not place.strip() or "\n" in place:
        return {"place": None, "message": text}
    return {"place": place, "message": message}


def error_document(errors: list[str], warnings: list[str] | None = None, **extra: Any) -> dict:
    """The JSON every command prints for errors with --json (warnings as in successful outputs)."""
    return {**extra, "errors": [_error_entry(e) for e in errors], "warnings": list(warnings or [])}


def check_outputs(outputs: dict[str, Path | None], inputs: list[Path | None]) -> None:
    from rtnetlab.io import output as outfiles

    outfiles.check({k: v for k, v in outputs.items() if v is not None}, [p for p in inputs if p is not None])


DESCRIPTION_SUFFIXES = (".yaml", ".yml", ".json", ".xml")


def check_description_output(option: str, path: Path | None) -> None:
    """A description is written by its extension: checked before any work."""
    if path is not None and path.suffix.lower() not in DESCRIPTION_SUFFIXES:
        where = f"{option}: {path}" if option else str(path)
        raise UserError(f"{where}: unknown output type '{path.suffix}', expected .yaml, .yml, .json or .xml")


def table(title: str, columns: list[str], left: tuple[str, ...]) -> Table:
    """A results table: text columns (`left`) aligned left, numbers right."""
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for col in columns:
        t.add_column(col, justify="left" if col in left else "right")
    return t


def fmt_us(x: float | None) -> str:
    return "-" if x is None else f"{x:,.3f}".rstrip("0").rstrip(".")


def fmt_opt_us(v: float | None) -> str:
    return "-" if v is None else fmt_us(v)


def quantity(kind: str, text: str, option: str) -> float:
    """A quantity given on the command line (`kind`: duration, rate, size), in SI base units."""
    from rtnetlab import _core

    try:
        return _core.parse_quantity(kind, text)
    except ValueError as e:
        raise UserError(f"{option}: {e}") from None
