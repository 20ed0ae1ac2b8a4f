"""Command-line parsing errors as one line, the place first, as every other error of rtnetlab:

    --workers: must be at least 1, got -1 (rtnetlab sweep --help)
    --frob: no such option of rtnetlab analyze (did you mean --flows?)
    FILE: missing (rtnetlab analyze --help)

click prints a usage block of four lines, the message last; the message alone, with the value
given and where to read more, is what a user needs. Imported only when parsing failed.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

# pydantic's wording (typer coerces values through it) into the project's.
_RULES = (
    (re.compile(r"Input should be greater than or equal to (.+)"), "must be at least {0}"),
    (re.compile(r"Input should be less than or equal to (.+)"), "must be at most {0}"),
    (re.compile(r"Input should be greater than (.+)"), "must be above {0}"),
    (re.compile(r"Input should be less than (.+)"), "must be below {0}"),
    (re.compile(r"Input should be a valid integer.*"), "expected a whole number"),
    (re.compile(r"Input should be a valid number.*"), "expected a number"),
    (re.compile(r"Input should be a valid boolean.*"), "expected true or false"),
    (re.compile(r"Input should be (.+)"), "expected {0}"),
)


def _rule(message: str) -> str:
    message = message.strip().rstrip(".")
    for pattern, words in _RULES:
        m = pattern.fullmatch(message)
        if m:
            return words.format(*m.groups())
    return message[:1].lower() + message[1:] if message[:2] != message[:2].upper() else message


def _given(param: Any, args: list[str]) -> str | None:
    """The text given on the command line for the option `param` (its last occurrence)."""
    opts = [o for o in (getattr(param, "opts", None) or []) + (getattr(param, "secondary_opts", None) or [])]
    if getattr(param, "param_type_name", "") != "option" or not opts:
        return None
    value = None
    for i, a in enumerate(args):
        if a == "--":
            break
        if a in opts and i + 1 < len(args):
            value = args[i + 1]
        else:
            for o in opts:
                if o.startswith("--") and a.startswith(o + "="):
                    value = a[len(o) + 1 :]
                elif not o.startswith("--") and a.startswith(o) and len(a) > len(o):
                    value = a[len(o) :]
    return value


def _name(param: Any) -> str:
    """An option by its long name, an argument by its name in capitals (as --help lists it)."""
    if getattr(param, "param_type_name", "") == "option":
        opts = sorted(param.opts, key=lambda o: (not o.startswith("--"), o))
        return opts[0] if opts else f"--{param.name}"
    return (getattr(param, "metavar", None) or param.name or "ARGUMENT").upper()


def _options_of(ctx: Any) -> list[str]:
    if ctx is None:
        return []
    return [o for p in ctx.command.params for o in (getattr(p, "opts", None) or []) if o.startswith("--")]


def _commands_of(ctx: Any) -> list[str]:
    command = getattr(ctx, "command", None)
    try:
        return list(command.list_commands(ctx))
    except Exception:
        return list(getattr(command, "commands", {}) or {})


def _close(word: str, candidates: list[str]) -> str:
    # Compared without their dashes, which every option shares.
    bare = {c.lstrip("-"): c for c in candidates}
    matches = difflib.get_close_matches(word.lstrip("-"), list(bare), n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(bare[m] for m in matches)}?)" if matches else ""


def command_path(args: list[str]) -> str:
    """`rtnetlab` and the (sub)commands named at the start of `args`, as far as they exist."""
    import typer.main

    from rtnetlab.cli import app

    words = ["rtnetlab"]
    try:
        group: Any = typer.main.get_command(app)
        for a in args:
            if a.startswith("-"):
                if a == "--limit" or not hasattr(group, "get_command"):
                    continue
                break
            sub = group.get_command(None, a) if hasattr(group, "get_command") else None
            if sub is None:
                break
            words.append(a)
            group = sub
    except Exception:  # a command that cannot even be imported: its name is still worth giving
        pass
    return " ".join(words)


def one_line(e: Any, args: list[str]) -> tuple[str | None, str]:
    """(place, rule) of a click usage error `e` raised while parsing `args`."""
    try:
        from typer._click import exceptions as ce
    except ImportError:  # pragma: no cover (older typer: click itself)
        from click import exceptions as ce

    ctx = getattr(e, "ctx", None)
    path = getattr(ctx, "command_path", None) or command_path(args)
    help_hint = f"({path} --help)"
    message = getattr(e, "message", None) or str(e)
    if isinstance(e, ce.MissingParameter) and e.param is not None:
        return _name(e.param), f"required, not given {help_hint}"
    if isinstance(e, ce.BadParameter):
        hint = e.param_hint if isinstance(e.param_hint, str) else None
        place = _name(e.param) if e.param is not None else hint
        given = _given(e.param, args) if e.param is not None else None
        rule = _rule(message)
        if given is not None and "got" not in rule:
            rule += f", got '{given}'"
        return place, f"{rule} {help_hint}"
    if isinstance(e, ce.NoSuchOption):
        name = e.option_name
        return name, f"no such option of {path}{_close(name, _options_of(ctx))} {help_hint}"
    if isinstance(e, ce.BadOptionUsage):
        m = re.fullmatch(r"Option '(.+)' requires (.+)\.", message)
        if m:
            return e.option_name, f"needs a value {help_hint}"
        m = re.fullmatch(r"Option '(.+)' does not take a value\.", message)
        if m:
            return e.option_name, f"takes no value (a flag) {help_hint}"
        return e.option_name, f"{_rule(message)} {help_hint}"
    m = re.match(r"No such command '(.*)'", message)
    if m:
        return m[1], f"no such command of {path}{_close(m[1], _commands_of(ctx))} ({path} --help lists them)"
    m = re.fullmatch(r"Got unexpected extra argument(?:s|\(s\))? \((.*)\)", message)
    if m:
        return m[1], f"one argument too many for {path} {help_hint}"
    return None, f"{path}: {_rule(message)} {help_hint}"


def named_after_command(line: str, args: list[str]) -> str:
    """A line that a capability's shared helper names after itself (`testbed: needs root`, raised
    by the namespaces' code for the middleware laboratory too) named after the command run."""
    from rtnetlab.cli import COMMANDS

    head, sep, rest = line.partition(": ")
    if not sep or head not in COMMANDS:
        return line
    path = command_path(args).removeprefix("rtnetlab").strip()
    if not path or path.split()[0] == head:
        return line
    return f"{path}: {rest}"
