"""File formats by extension: YAML and JSON (the native description), WOPANet XML and DNC server
graphs in Java (imports).

YAML and JSON are read by the engine (`rtnetlab._core`), within limits on what a description may
cost before it is validated (file size, nesting, values and aliases, nodes, flows, paths): the
defaults, then the environment variable RTNETLAB_LIMITS, then `--limit` options (see
docs/MODEL.md, "Limits"; `rtnetlab.limits` holds the settings, with the limits on options).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rtnetlab import _core
from rtnetlab import limits as limits_mod
from rtnetlab.errors import LimitError, UserError

NATIVE = (".yaml", ".yml", ".json")
WOPANET = (".xml",)
DNC = (".java",)
LIMITS_ENV = limits_mod.ENV


def set_limits(assignments: list[str]) -> None:
    """Limits given as options (`NAME=VALUE` each), applied over RTNETLAB_LIMITS and the defaults."""
    limits_mod.set_options(assignments)


def limits() -> list[str]:
    """The engine's limit settings in force, in the order they apply (the engine holds the defaults)."""
    return limits_mod.engine_settings()


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        refusal = _core.size_refusal(size, limits())
        if refusal:
            raise UserError(f"{path}: {refusal}")
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a network description file") from None
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise UserError(f"{path}: cannot be read ({e.strerror})") from None


def native_format(path: Path) -> str | None:
    """`yaml` or `json` for a native description file, None for an import (WOPANet XML, DNC Java)."""
    suffix = path.suffix.lower()
    if path.is_dir():
        raise UserError(f"{path}: is a directory, expected a network description file")
    if suffix in NATIVE:
        return "json" if suffix == ".json" else "yaml"
    if suffix in WOPANET or suffix in DNC:
        return None
    raise UserError(
        f"{path}: unknown file type '{suffix}', expected .yaml, .yml, .json, .xml (WOPANet) or .java (DNC)"
    )


def read_native(path: Path) -> tuple[str, str]:
    """The text of a native description file and its format (`yaml` or `json`), not yet parsed."""
    fmt = native_format(path)
    if fmt is None:
        raise UserError(f"{path}: expected a .yaml, .yml or .json file")
    return _read_text(path), fmt


def read(path: Path, located: bool = False) -> Any:
    """Reads a description file into plain data, by its extension. `located`: a WOPANet file
    gives its `wopanet.Description` (a dict that also turns native places into the file's lines,
    and holds the import's warnings) instead of a plain dict."""
    fmt = native_format(path)
    if fmt is None and path.suffix.lower() in DNC:
        from rtnetlab.io import dnc

        return dnc.parse(_read_text(path), str(path))
    if fmt is None:
        from rtnetlab.io import wopanet

        try:
            refusal = _core.size_refusal(path.stat().st_size, limits())
        except OSError:
            refusal = None  # the reader says why it cannot read the file
        if refusal:
            raise UserError(f"{path}: {refusal}")
        try:
            description = wopanet.read(path)
            return description if located else dict(description)
        except LookupError as e:  # an XML declaration naming an encoding Python does not know
            raise UserError(f"{path}: not readable XML: {e}") from None
    text = _read_text(path)
    try:
        return json.loads(_core.parse_text(text, fmt, str(path), limits()))
    except LimitError:
        raise  # the engine's own, naming the limit
    except ValueError as e:
        raise UserError(str(e)) from None


def write(data: Any, path: Path) -> None:
    """Writes plain data as YAML or JSON by extension; written whole or not at all. A description
    that may go to WOPANet XML is written by `rtnetlab.model.write` (XML needs it validated)."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        text = json.dumps(data, indent=2) + "\n"
    elif suffix in (".yaml", ".yml"):
        text = dumps_yaml(data)
    elif suffix in WOPANET:
        raise TypeError(f"{path}: WOPANet XML is written by rtnetlab.model.write (validated first)")
    else:
        raise UserError(f"{path}: unknown output type '{suffix}', expected .yaml, .yml, .json or .xml")
    atomic_write(path, text)


def dumps_yaml(data: Any) -> str:
    """Plain data as the YAML text a description file holds (keys in their order)."""
    import yaml

    # libyaml's dumper when there: the same text, a few times faster (100,000 generated VLs).
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True, width=100)


def atomic_write(path: Path, text: str) -> None:
    """Writes whole or not at all, by the rule of every output (see `rtnetlab.io.output`): a
    temporary file renamed over a regular file or a new path, a FIFO or device written directly."""
    from rtnetlab.io import output

    output.atomic_write(path, text)
