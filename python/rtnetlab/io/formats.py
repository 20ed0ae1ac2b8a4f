"""File formats by extension: YAML and JSON (the native description), WOPANet XML (import)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from rtnetlab.errors import UserError

NATIVE = (".yaml", ".yml", ".json")
WOPANET = (".xml",)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a network description file") from None
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise UserError(f"{path}: cannot be read ({e.strerror})") from None


def read(path: Path) -> Any:
    """Reads a description file into plain data, by its extension."""
    suffix = path.suffix.lower()
    if path.is_dir():
        raise UserError(f"{path}: is a directory, expected a network description file")
    if suffix in WOPANET:
        from rtnetlab.io import wopanet

        return wopanet.read(path)
    if suffix not in NATIVE:
        raise UserError(
            f"{path}: unknown file type '{suffix}', expected .yaml, .yml, .json or .xml (WOPANet)"
        )
    text = _read_text(path)
    if suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise UserError(f"{path}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        context = ""
        if e.context and e.context_mark:  # where the unclosed construct began, often the real slip
            context = f" ({e.context} started at {e.context_mark.line + 1}:{e.context_mark.column + 1})"
        raise UserError(f"{where}: not valid YAML: {e.problem}{context}") from None
    except yaml.YAMLError as e:
        raise UserError(f"{path}: not valid YAML: {e}") from None
    if data is None:
        raise UserError(f"{path}: the file is empty")
    return _plain(data, path)


def _plain(data: Any, path: Path) -> Any:
    """YAML may hold dates or other non-JSON scalars; turn them into text rather than fail later."""
    if isinstance(data, dict):
        return {str(k): _plain(v, path) for k, v in data.items()}
    if isinstance(data, list):
        return [_plain(v, path) for v in data]
    if data is None or isinstance(data, (str, int, float, bool)):
        return data
    return str(data)


def write(data: Any, path: Path) -> None:
    """Writes a description (plain data) by extension; written whole or not at all."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        text = json.dumps(data, indent=2) + "\n"
    elif suffix in (".yaml", ".yml"):
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    elif suffix in WOPANET:
        from rtnetlab.io import wopanet

        text = wopanet.dumps(data)
    else:
        raise UserError(f"{path}: unknown output type '{suffix}', expected .yaml, .yml, .json or .xml")
    atomic_write(path, text)


def atomic_write(path: Path, text: str) -> None:
    """Writes whole or not at all, by the rule of every output (see `rtnetlab.io.output`): a
    temporary file renamed over a regular file or a new path, a FIFO or device written directly."""
    from rtnetlab.io import output

    output.atomic_write(path, text)
