"""The `rtnetlab` command: the typer app, its global options, the entry point and the table of
commands (one registration line each, at the end of this file).

Each command lives in its own module of this package (``description``: validate, info, convert,
schema; ``analyze``; ``simulate``; ``generate``; ``configure``; ``experiment``; ``report``;
``demo``; ``worst_case``), or in its capability's package (``rtnetlab.testbed.cli``):
it parses its options, calls the capability and prints the result. The root group
(:class:`LazyGroup`) imports a command's module only when that command runs: ``rtnetlab --help``
lists the commands from the table :data:`COMMANDS` (name, "module:attribute", first paragraph of
the help) and ``rtnetlab analyze`` imports ``rtnetlab.cli.analyze`` alone. Command modules import
only typer and ``rtnetlab.cli.common`` at start-up; the engine, the report and the experiments are
imported inside the command that uses them.

Exit codes, one rule for every command:

* 0: done (and, with ``--fail-on-miss``, every deadline met);
* 1: a verdict failed: ``--fail-on-miss`` found a deadline missed (or a bound infinite where a
  deadline exists, or a simulated maximum above its bound), ``configure`` found no feasible
  configuration, or a row of a ``sweep`` failed; the results are still printed or written;
* 2: a user error (unreadable file, bad description, wrong option): one line per problem on
  stderr (an option parsed wrong too, ``cli.usage``), or with ``--json`` the JSON document
  ``{"errors": [{"place", "message"}], "warnings"}`` on stdout; nothing is written;
* 3: an internal error (a bug), with its traceback;
* 130: interrupted by Ctrl-C (SIGINT), 143: terminated (SIGTERM); a simulation still reports
  what it measured, and no file is left half-written.
"""

from __future__ import annotations

import importlib
import signal
import sys
import traceback
from typing import Annotated, Any

import typer
import typer.core
import typer.main
import typer.models

from rtnetlab.cli import plain_params
from rtnetlab.cli.common import (
    EXIT_INTERNAL,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    EXIT_USER,
    EXIT_VERDICT,
    emit_json,
    err,
    error_document,
    out,
)
from rtnetlab.errors import ModelError, Terminated, UserError

__all__ = ["EXIT_VERDICT", "app", "emit_json", "entry", "error_document", "main", "out"]


class LazyGroup(typer.core.TyperGroup):
    """The root group: knows each command of :data:`COMMANDS` by name and one-line help, and
    imports its module only when that command runs (or its own --help is asked for). The list of
    commands in ``rtnetlab --help`` comes from the table alone."""

    _listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*self.commands, *(name for name in COMMANDS if name not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name not in COMMANDS:
            return None
        target, short = COMMANDS[cmd_name]
        if self._listing:
            # One paragraph: its line breaks (the docstring's) would break the listing's lines.
            return typer.core.TyperCommand(name=cmd_name, help=short.replace("\n", " "))
        module, _, attribute = target.partition(":")
        obj = getattr(importlib.import_module(module), attribute)
        if cmd_name == "experiment":
            _register_experiments()
        if isinstance(obj, typer.Typer):
            command = typer.main.get_group_from_info(
                typer.models.TyperInfo(obj, name=cmd_name),
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode,
                suggest_commands=app.suggest_commands,
            )
        else:
            command = typer.main.get_command_from_info(
                typer.models.CommandInfo(name=cmd_name, callback=obj),
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode,
            )
        return plain_params.install(command)

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        plain_params.install(self)
        return super().make_context(*args, **kwargs)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    name="rtnetlab",
    help="Design real-time networks and know they meet their deadlines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=LazyGroup,
)


@app.callback()
def _options(
    limit: Annotated[
        list[str] | None,
        typer.Option(
            "--limit",
            metavar="NAME=VALUE",
            help="Raise (or lower) a limit on what a description may cost before it is validated "
            "(size, depth, values, aliases, nodes, flows, paths, errors: docs/MODEL.md) or on what "
            "an option or a sweep SPEC may ask for (rows, workers, vls, messages, requests, duration: "
            "docs/SECURITY.md). Also RTNETLAB_LIMITS=NAME=VALUE,...; may follow the command.",
        ),
    ] = None,
) -> None:
    from rtnetlab.io import formats

    formats.set_limits(limit or [])


def _hoist_limits(argv: list[str]) -> list[str]:
    """`--limit` is an option of rtnetlab itself: accepted after the command too, moved before it."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            rest.extend(argv[i:])
            break
        if a == "--limit" and i + 1 < len(argv):
            front += argv[i : i + 2]
            i += 2
            continue
        (front if a.startswith("--limit=") else rest).append(a)
        i += 1
    return front + rest


_terminated: list[int] = []


def _on_sigterm(signum: int, frame: Any) -> None:
    _terminated.append(signum)
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    from rtnetlab.io import output as outfiles

    args = _hoist_limits(sys.argv[1:] if argv is None else list(argv))
    as_json = "--json" in (args[: args.index("--")] if "--" in args else args)
    outfiles.created_directories.clear()
    _terminated.clear()

    def fail(code: int, errors: list[str], warnings: list[str] | None = None) -> int:
        if as_json:
            emit_json(error_document(errors, warnings))
        else:
            for w in warnings or []:
                err.print(w, markup=False)
            for line in errors:
                err.print(line, markup=False)
        return code

    try:
        # SIGTERM unwinds like Ctrl-C, so temporary files go and a simulation still reports.
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread (embedded use)
        previous = None
    try:
        rc = app(args=args, prog_name="rtnetlab", standalone_mode=False)
        if rc == EXIT_SIGINT and _terminated:
            # typer turns any KeyboardInterrupt, SIGTERM's Terminated too, into exit 130.
            return fail(EXIT_SIGTERM, ["terminated"])
        return rc if isinstance(rc, int) else 0
    except ModelError as e:
        return fail(EXIT_USER, e.lines, e.warnings)
    except UserError as e:
        line = str(e)
        if line.partition(": ")[0] in COMMANDS:
            from rtnetlab.cli import usage

            line = usage.named_after_command(line, args)
        return fail(EXIT_USER, [line])
    except typer.Exit as e:
        if e.exit_code == EXIT_SIGINT and _terminated:
            return fail(EXIT_SIGTERM, ["terminated"])
        return e.exit_code
    except Terminated:
        return fail(EXIT_SIGTERM, ["terminated"])
    except KeyboardInterrupt:
        return fail(EXIT_SIGINT, ["interrupted"])
    except Exception as e:  # click's own usage errors (recent typer vendors click as typer._click)
        try:
            from typer._click.exceptions import ClickException
        except ImportError:
            from click.exceptions import ClickException

        if isinstance(e, ClickException):
            try:
                from typer._click.exceptions import NoArgsIsHelpError
            except ImportError:
                from click.exceptions import NoArgsIsHelpError
            if isinstance(e, NoArgsIsHelpError) and not as_json:
                e.show()  # the help itself, asked for by giving nothing
                return e.exit_code
            from rtnetlab.cli import usage

            place, message = usage.one_line(e, args)
            if as_json:
                emit_json({"errors": [{"place": place, "message": message}], "warnings": []})
            else:
                err.print(f"{place}: {message}" if place else message, markup=False)
            return EXIT_USER
        if isinstance(e, typer.Abort):
            return fail(EXIT_SIGINT, ["interrupted"])
        traceback.print_exc()
        message = f"internal error: {type(e).__name__}: {e} (a bug in rtnetlab; please report it)"
        if as_json:
            emit_json({"errors": [{"place": None, "message": message}], "warnings": []})
        else:
            err.print(message, markup=False)
        return EXIT_INTERNAL
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def entry() -> None:
    sys.exit(main())


# The commands, one line each, in the order of `rtnetlab --help`: the name, where it lives
# ("module:attribute", a command function or a typer app) and the first paragraph of its help
# (what `rtnetlab --help` shows; tests/test_cli_layout.py checks it against the command's own).
# A capability's package adds its own line (its typer app in python/rtnetlab/<capability>/cli.py).
COMMANDS: dict[str, tuple[str, str]] = {
    "worst-case": (
        "rtnetlab.cli.worst_case:worst_case_command",
        "Search the worst case of every flow: the largest delay a replayed simulation realises\n"
        "beside its bound, the pessimism interval \\[achieved, bound], and the scenario that realises it.",
    ),
    "validate": ("rtnetlab.cli.description:validate",
                 "Check a network description; report every problem, one line each."),
    "info": ("rtnetlab.cli.description:info",
             "Counts and the load of every egress port (overloaded ports flagged)."),
    "analyze": ("rtnetlab.cli.analyze:analyze",
                "Worst-case delay, jitter and backlog bounds of every flow and egress port."),
    "simulate": (
        "rtnetlab.cli.simulate:simulate",
        "Simulate the network packet by packet; per-flow latencies beside their bounds, per-port\n"
        "backlog. Ctrl-C stops early and still reports (exit 130).",
    ),
    "convert": ("rtnetlab.cli.description:convert",
                "Convert between YAML, JSON and WOPANet XML; the input is validated first."),
    "schema": ("rtnetlab.cli.description:schema",
               "Print the JSON Schema of the description format (generated from the engine's model)."),
    "report": ("rtnetlab.cli.report:report_cmd",
               "One self-contained HTML page: violations, topology, bounds vs simulation, CDFs, ports."),
    "demo": ("rtnetlab.cli.demo:demo", "Run the embedded AFDX case study end to end."),
    "sweep": ("rtnetlab.sweep.cli:sweep",
              "Run a parameter sweep on Dask: rows to Parquet, means with confidence intervals, plots."),
    "admit": (
        "rtnetlab.cloud.cli:admit_command",
        "Admit VSN requests in arrival order: components on cores (EDF), virtual links on paths\n"
        "whose flows' bounds meet their latency and jitter; every rejection names its constraint.",
    ),
    "generate": ("rtnetlab.cli.generate:app", "Generate synthetic networks."),
    "experiment": ("rtnetlab.cli.experiment:app", "Reproduce the seed papers' experiments."),
    "configure": ("rtnetlab.cli.configure:app",
                  "Choose parameters that make a description feasible and write them into it."),
    "testbed": ("rtnetlab.testbed.cli:app", "Run a description on real frames in Linux network namespaces."),
    "export": ("rtnetlab.testbed.cli:export_app", "Configurations for real hosts."),
    "slrm": ("rtnetlab.cloud.cli:slrm", "Seed 001G's service-level-aware resource manager."),
    "middleware": ("rtnetlab.middleware.cli:app",
                   "Middleware latency laboratory (publish/subscribe, partitions, request/response)."),
}


def _testbed_experiments(experiment_app: typer.Typer) -> None:
    from rtnetlab.testbed import cli as testbed_cli

    experiment_app.command("ethernet-measure")(testbed_cli.experiment_ethernet_measure)


#: What adds subcommands to the `experiment` group ("module:function" taking the group's typer
#: app, or a function), one line per package; run once, when the group is first needed.
EXPERIMENTS: list[Any] = [
    _testbed_experiments,
    "rtnetlab.sweep.cli:register_experiments",
    "rtnetlab.cloud.cli:register_experiments",
]

_experiments_registered = False


def _register_experiments() -> typer.Typer:
    """The `experiment` group's typer app with every package's subcommands on it."""
    global _experiments_registered
    from rtnetlab.cli import experiment

    if not _experiments_registered:
        _experiments_registered = True
        for register in EXPERIMENTS:
            if isinstance(register, str):
                module, _, attribute = register.partition(":")
                register = getattr(importlib.import_module(module), attribute)
            register(experiment.app)
    return experiment.app


def __getattr__(name: str) -> Any:
    # `experiment_app`: the `experiment` group another package registers its subcommands onto
    # (see cli/experiment.py); imported on first use.
    if name == "experiment_app":
        return _register_experiments()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
