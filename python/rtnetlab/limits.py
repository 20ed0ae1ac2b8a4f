"""Limits: what a description, a sweep SPEC or an option may ask for, in one place.

A small input must not take the host down (``seeds: 100000000`` in a SPEC, ``--vls 200000000``,
``--workers 24`` on two cores), so every count that sizes memory, processes or time is checked
here before anything starts, and a refusal is one line naming the place and the limit::

    --workers: 24 worker processes, more than the limit of 2 (raise it with --limit workers=N or
    RTNETLAB_LIMITS=workers=N)

The limits on a description before it is validated (size, depth, values, aliases, nodes, flows,
paths, errors) belong to the engine (crates/core/src/model/limits.rs); the others are defined
here. Both follow one rule and one override: the defaults, then the environment variable
``RTNETLAB_LIMITS=NAME=N,...``, then ``--limit NAME=N`` options (repeatable, before or after the
command). Defaults that depend on the host are computed from its memory and cores.

API for commands: ``check(name, value, where)`` (raises UserError), ``check_product`` (counts of
several options that multiply), ``limit(name)`` (the value in force), ``option(name)`` (a typer
option callback doing the check), ``NAMES``.
"""

# No `from __future__ import annotations`: typer reads the annotations of `option`'s callback
# (its context and parameter) as objects, and typer is imported inside `option` only.
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from rtnetlab.errors import UserError

ENV = "RTNETLAB_LIMITS"
#: The engine's limits on a description, in its order (crates/core/src/model/limits.rs).
ENGINE_NAMES = ("size", "depth", "values", "aliases", "nodes", "flows", "paths", "errors")


@cache
def memory_bytes() -> int:
    """Memory this process may use: the host's, or its control group's when smaller."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            text = f.read().strip()
        if text.isdigit():
            total = min(total, int(text))
    except OSError:
        pass
    return total


@cache
def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def round_down(n: float) -> int:
    """The largest of 1, 2, 5, 10, 20, 50, ... not above n (at least 1): a default people can read."""
    if n < 1:
        return 1
    power = 10 ** int(math.floor(math.log10(n)))
    return max(step * power for step in (1, 2, 5) if step * power <= n)


@dataclass(frozen=True)
class Limit:
    name: str
    #: What one unit is, for messages ("24 worker processes").
    noun: str
    #: What it bounds and how its default is sized, for --help and docs/SECURITY.md.
    doc: str
    default: Callable[[], int]
    #: A duration in seconds (settings may also be written with a unit: 7200s).
    seconds: bool = False


#: The limits defined here, in the order they are listed.
OPTION_LIMITS: dict[str, Limit] = {
    lim.name: lim
    for lim in (
        Limit(
            "rows",
            "rows",
            "rows of a sweep (grid points x seeds; --runs, --networks, --seeds of the figures), and "
            "what the experiments draw and compute one by one (--sets x --points task sets, "
            "--seeds runs): memory / 16 KiB",
            lambda: round_down(memory_bytes() / 16384),
        ),
        Limit(
            "workers",
            "worker processes",
            "worker processes of a sweep's cluster: the cores this process may run on (at least 2)",
            lambda: max(2, cores()),
        ),
        Limit(
            "vls",
            "virtual links",
            "virtual links a generator creates (`generate afdx --vls`, a SPEC's generate."
            "virtual_links): memory / 16 KiB",
            lambda: round_down(memory_bytes() / 16384),
        ),
        Limit(
            "messages",
            "messages",
            "measured messages per row of a middleware run (8 bytes per message and subscriber, "
            "up to 16 subscribers, a quarter of memory): memory / 512 B",
            lambda: round_down(memory_bytes() / 512),
        ),
        Limit(
            "requests",
            "requests",
            "measured requests per row or scenario of a middleware run: memory / 512 B",
            lambda: round_down(memory_bytes() / 512),
        ),
        Limit(
            "duration",
            "s",
            "seconds one real-time run lasts (testbed, middleware): 3600",
            lambda: 3600,
            seconds=True,
        ),
    )
}

NAMES: tuple[str, ...] = ENGINE_NAMES + tuple(OPTION_LIMITS)

_options: list[str] = []


def grouped(n: int | float) -> str:
    """A count with thousands separators, as the engine writes limits."""
    return f"{n:,}" if float(n).is_integer() else f"{n:,.6g}"


def how_to_raise(name: str) -> str:
    return f"raise it with --limit {name}=N or {ENV}={name}=N"


def split(text: str) -> list[str]:
    """`flows=2,000,000 rows=10` or `flows=2000000,rows=10` into assignments: a comma starts a new
    one only when `NAME=` follows it, so `2,000,000` stays one number (as the engine splits)."""
    out: list[str] = []
    for word in text.split():
        for piece in word.split(","):
            if out and "=" not in piece:
                out[-1] += "," + piece
            elif piece:
                out.append(piece)
    return out


def _value(lim: Limit, text: str) -> int:
    digits = text.replace("_", "").replace(",", "")
    if digits.isdigit():
        n = int(digits)
    elif lim.seconds:
        from rtnetlab import _core

        try:
            n = math.floor(_core.parse_quantity("duration", text))
        except ValueError:
            raise ValueError(
                f"{lim.name}: expected seconds or a duration such as 7200s, got '{text}'"
            ) from None
    else:
        raise ValueError(f"{lim.name}: expected a whole number, got '{text}'")
    if n < 1:
        raise ValueError(f"{lim.name}: must be at least 1, got {text}")
    return n


def _parse(settings: list[str]) -> tuple[list[str], dict[str, int]]:
    """Settings in order of application into (the engine's assignments, the values of ours);
    ValueError naming the first wrong one."""
    engine: list[str] = []
    ours: dict[str, int] = {}
    for setting in settings:
        for one in split(setting):
            name, eq, value = one.partition("=")
            name, value = name.strip(), value.strip()
            if not eq:
                raise ValueError(f"expected NAME=VALUE (limits: {', '.join(NAMES)}), got '{one}'")
            if name in OPTION_LIMITS:
                ours[name] = _value(OPTION_LIMITS[name], value)
            elif name in ENGINE_NAMES:
                engine.append(f"{name}={value}")
            else:
                raise ValueError(f"unknown limit '{name}' (limits: {', '.join(NAMES)})")
    if engine:
        from rtnetlab import _core

        _core.limits_json(engine)  # the engine's own message for a wrong value
    return engine, ours


def _env() -> list[str]:
    text = os.environ.get(ENV, "").strip()
    if text:
        try:
            _parse([text])
        except ValueError as e:
            raise UserError(f"{ENV}: {e}") from None
    return [text] if text else []


def set_options(assignments: list[str]) -> None:
    """The `--limit NAME=N` options of this command, applied over RTNETLAB_LIMITS and the defaults."""
    try:
        _parse(list(assignments))
    except ValueError as e:
        raise UserError(f"--limit: {e}") from None
    _options[:] = assignments


def engine_settings() -> list[str]:
    """The settings of the engine's limits in force, in the order they apply (for `rtnetlab._core`)."""
    engine, _ = _parse(_env() + _options)
    return engine


def limit(name: str) -> int:
    """The value in force of the limit `name` (any of NAMES)."""
    engine, ours = _parse(_env() + _options)
    if name in OPTION_LIMITS:
        return ours.get(name, OPTION_LIMITS[name].default())
    if name in ENGINE_NAMES:
        import json

        from rtnetlab import _core

        return int(json.loads(_core.limits_json(engine))[name])
    raise KeyError(name)


def check(name: str, value: int | float, where: str, what: str | None = None) -> None:
    """Refuses `value` (a count, or seconds for `duration`) above the limit `name` with one line
    naming `where` (an option, or a SPEC's place) and the limit. `what` replaces the default
    description of the value ("24 worker processes")."""
    top = limit(name)
    if value > top:
        noun = OPTION_LIMITS[name].noun if name in OPTION_LIMITS else name
        unit = " s" if noun == "s" else ""
        said = what or (f"{grouped(value)} s" if noun == "s" else f"{grouped(value)} {noun}")
        raise UserError(
            f"{where}: {said}, more than the limit of {grouped(top)}{unit} ({how_to_raise(name)})"
        )


def check_product(
    name: str, factors: dict[str, int | tuple[int, str]], noun: str, times: int = 1, of: str = ""
) -> None:
    """Refuses counts given by several options that multiply (`--sets` x `--points` task sets,
    `times` more `of` something fixed) above the limit `name`, in one line naming the option
    that alone goes beyond it (else the largest) and the product:
    `--points: 3,000,000 task sets (100 sets x 10,000 points x 3 panels), more than ...`.
    A factor is a count, or (count, what it counts) when the option's name does not say it."""
    counts = {o: (v if isinstance(v, tuple) else (v, o.lstrip("-"))) for o, v in factors.items()}
    total = times * math.prod(v for v, _ in counts.values())
    if total <= limit(name):
        return
    largest = max(counts, key=lambda o: counts[o][0])
    place = next((o for o, (v, _) in counts.items() if v * times > limit(name)), largest)
    how = " x ".join(f"{grouped(v)} {what}" for v, what in counts.values())
    check(name, total, place, f"{grouped(total)} {noun} ({how}{f' x {times} {of}' if of else ''})")


def option(name: str) -> Callable[..., Any]:
    """A typer option callback checking the option's value (an int, or None) against `name`."""
    import typer

    def callback(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
        if value is not None and not ctx.resilient_parsing:
            check(name, value, (param.opts or [param.name or name])[0])
        return value

    return callback


def defaults() -> list[tuple[str, int, str]]:
    """(name, default on this host, what it bounds) of the limits defined here."""
    return [(lim.name, lim.default(), lim.doc) for lim in OPTION_LIMITS.values()]
