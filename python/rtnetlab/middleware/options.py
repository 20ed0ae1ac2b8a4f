"""The middleware laboratory's inputs, checked before anything runs: lists of counts, sizes and
backends, durations, partition windows, the placement and the output files. Below the command
line (`rtnetlab.middleware.cli`) and the Python API (`rtnetlab.middleware`), which give the
same one-line refusals. A list may be given as its command's text (``"1,2,4"``) or as a Python
sequence; a duration as text with its unit (``"800us"``) or as a number of seconds."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rtnetlab.errors import UserError
from rtnetlab.text import comma_list


def as_text(value: str | Iterable[Any], item: Callable[[Any], str] = str) -> str:
    """A list option as its command's text: a sequence joined with commas."""
    return value if isinstance(value, str) else ",".join(item(v) for v in value)


def _seconds_text(v: Any) -> str:
    return f"{v!r}s" if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


def int_list(option: str, value: str | Iterable[int], minimum: int = 1) -> list[int]:
    """A comma-separated list of integers, each at least `minimum`."""

    def at_least_minimum(word: str) -> int:
        v = int(word)
        if v < minimum:
            raise UserError(f"{option}: each value must be at least {minimum}, got {v}")
        return v

    bad = "{option}: expected comma-separated integers, got '{item}'"
    return comma_list(option, as_text(value), at_least_minimum, bad=bad)


def duration_us(option: str, value: str | float) -> float:
    """A duration with its unit (e.g. 800us, 1.5ms, 1s) or a number of seconds, in microseconds."""
    from rtnetlab import _core

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) * 1e6
    try:
        seconds = _core.parse_quantity("duration", str(value))
    except ValueError as e:
        raise UserError(f"{option}: {e}") from None
    return seconds * 1e6


def duration_list_us(option: str, value: str | Iterable[str | float], check: Callable[[str, float], None]
                     ) -> list[float]:
    """A comma-separated list of durations in microseconds, each through `check(word, us)`."""

    def one(word: str) -> float:
        us = duration_us(option, word)
        check(word, us)
        return us

    return comma_list(option, as_text(value, _seconds_text), one, "durations")


def check_placement(placement: str) -> None:
    from rtnetlab.middleware.placement import PLACEMENTS

    if placement not in PLACEMENTS:
        raise UserError(f"--placement: expected one of {', '.join(PLACEMENTS)}, got '{placement}'")


def backend_list(value: str | Iterable[str], known: Iterable[str], refused: Iterable[str] = ()) -> list[str]:
    """`--backends`: comma-separated names among `known` (less `refused`), each once, at least one."""
    names = [b.strip() for b in as_text(value).split(",") if b.strip()]
    allowed = [b for b in known if b not in set(refused)]
    for b in names:
        if b not in allowed:
            raise UserError(f"--backends: unknown backend '{b}' (known: {', '.join(allowed)})")
    if not names or len(set(names)) != len(names):
        raise UserError("--backends: give each backend once, at least one")
    return names


def at_least(option: str, value: int, minimum: int) -> None:
    if value < minimum:
        rule = "must not be negative" if minimum == 0 else f"must be at least {minimum}"
        raise UserError(f"{option}: {rule}, got {value}")


def parse_windows(value: str | Mapping[str, str | float] | Sequence[tuple[str, str | float]]
                  ) -> list[tuple[str, int]]:
    """`routing=800us,recorder=700us` (or ``{"routing": "800us", "recorder": "700us"}``) →
    [(name, ns)], in order (back to back from offset 0)."""
    if not isinstance(value, str):
        items = value.items() if isinstance(value, Mapping) else value
        value = ",".join(f"{n}={_seconds_text(w)}" for n, w in items)
    windows = []
    for item in value.split(","):
        name, sep, length = item.strip().partition("=")
        if not sep or not name:
            raise UserError(f"--windows: expected name=duration, got '{item.strip()}'")
        us = duration_us("--windows", length)
        if not us > 0:
            raise UserError(f"--windows: window of {name} must be positive, got {length}")
        windows.append((name.strip(), round(us * 1000)))
    names = [n for n, _ in windows]
    if sorted(names) != ["recorder", "routing"]:
        raise UserError(f"--windows: expected the windows of routing and recorder, got {', '.join(names)}")
    return windows


def out_paths(out_dir: str | Path | None, kind: str) -> dict[str, Path] | None:
    """The files of `--out DIR`, checked before anything runs."""
    if out_dir is None:
        return None
    from rtnetlab.io import output as outfiles

    paths = {"json": Path(out_dir) / f"{kind}.json", "html": Path(out_dir) / f"{kind}.html"}
    outfiles.check({"--out": paths["json"], "--out (its page)": paths["html"]})
    return paths
