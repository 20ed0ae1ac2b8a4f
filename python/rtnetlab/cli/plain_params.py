"""Command-line values that need no validator: typer coerces every parameter through a pydantic
type adapter, and importing pydantic and building the adapters costs about a tenth of a second
of every `rtnetlab` run. A value whose conversion is plain (an absent option, a string, a decimal
integer or number inside its range, a path written as Python writes it) is converted here to
exactly what typer's adapter gives; anything else (choices, custom parsers, out-of-range or
malformed values, which need the adapter's own error message) goes to typer's adapter as before.
tests/test_cli_layout.py checks both give the same result for every parameter of every command.
"""

from __future__ import annotations

import re
import types
from pathlib import Path
from typing import Any, get_args, get_origin

try:  # typer's own coercion layer (typer >= 0.20); without it, typer's path throughout
    from typer._coercion import build_runtime_param
    from typer._param_types import coerce_cli_path
    from typer.core import _TyperParameter
except ImportError:  # pragma: no cover
    _TyperParameter = None

_INT = re.compile(r"-?(0|[1-9][0-9]{0,17})\Z")
_FLOAT = re.compile(r"-?(0|[1-9][0-9]{0,15})(\.[0-9]{1,15})?([eE][-+]?[0-9]{1,2})?\Z")
_FALLBACK = object()


class PlainParam:
    """The runtime conversion of one typer parameter: the plain cases here, the rest by typer."""

    def __init__(self, descriptor: Any):
        self.descriptor = descriptor
        self._full: Any = None

    def full(self) -> Any:
        if self._full is None:
            self._full = build_runtime_param(self.descriptor)
        return self._full

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        result = self.plain(value, param)
        if result is _FALLBACK:
            return self.full().coerce(value, param=param, ctx=ctx)
        if isinstance(result, Path):
            # Path checks (exists, readable, ...) and their messages are typer's own.
            info = self.descriptor.parameter_info
            return coerce_cli_path(result, info, path_type=Path, param=param, ctx=ctx)
        return result

    def plain(self, value: Any, param: Any) -> Any:
        d = self.descriptor
        info, annotation = d.parameter_info, d.annotation
        multi = param.multiple or param.nargs == -1
        if value is None:
            return () if multi else None
        if d.file_annotation is not None or info.parser is not None or getattr(info, "click_type", None):
            return _FALLBACK
        if multi:
            if (
                isinstance(value, (tuple, list))
                and get_origin(annotation) is list
                and get_args(annotation) == (str,)
                and all(isinstance(v, str) for v in value)
            ):
                return list(value)
            return _FALLBACK
        if param.nargs != 1:
            return _FALLBACK
        plain_path = annotation is Path and info.path_type in (None, Path) and not info.allow_dash
        if plain_path and type(value) is Path:
            return value  # a default
        if annotation in (int, float) and not info.clamp and type(value) in (str, annotation):
            # A default is of its type already; text, a plain decimal.
            if type(value) is str and not (_INT if annotation is int else _FLOAT).match(value):
                return _FALLBACK
            number = annotation(value)
            if (info.min is not None and number < info.min) or (info.max is not None and number > info.max):
                return _FALLBACK
            return number
        if type(value) is not str:
            return _FALLBACK
        if annotation is str:
            return value
        if plain_path and value and str(Path(value)) == value:
            return Path(value)
        return _FALLBACK


def install(command: Any) -> Any:
    """Gives every typer parameter of `command` (and of its subcommands) the plain conversion."""
    if _TyperParameter is None:  # pragma: no cover
        return command
    params = list(command.params)
    if getattr(command, "_help_option", 0) is None:
        # --help is made when first parsed (click's get_help_option), from the names the context
        # gives: the command's own context settings, else click's default (none of ours sets them).
        names = command.context_settings.get("help_option_names", ["--help"])
        option = command.get_help_option(types.SimpleNamespace(help_option_names=names))
        if option is not None:
            params.append(option)
    for p in params:
        if isinstance(p, _TyperParameter) and getattr(p, "_runtime_param", 0) is None:
            p._runtime_param = PlainParam(p.type_descriptor)
    for sub in getattr(command, "commands", {}).values():
        install(sub)
    return command
