"""The `rtnetlab` command: the typer app, its global options, the entry point and the table of
commands (one registration line each, at the end of this file).

Each command lives in its own module of this package (``description``: validate, info, convert,
schema; ``analyze``; ``simulate``; ``generate``; ``configure``; ``experiment``; ``report``;
``demo``; ``worst_case``), or in its capability's package (``rtnetlab.testbed.cli``):
it parses its options, calls the capability and prints the result. Command modules import only
typer and ``rtnetlab.cli.common`` at start-up; the engine, the report and the experiments are
imported inside the command that uses them, so ``rtnetlab --help`` and a small ``analyze`` start
fast.

Exit codes, one rule for every command:

* 0: done (and, with ``--fail-on-miss``, every deadline met);
* 1: a verdict failed: ``--fail-on-miss`` found a deadline missed (or a bound infinite where a
  deadline exists, or a simulated maximum above its bound), or ``configure`` found no feasible
  configuration; the results are still printed or written;
* 2: a user error (unreadable file, bad description, wrong option): one line per problem on
  stderr, or with ``--json`` the JSON document ``{"errors": [{"place", "message"}], "warnings"}``
  on stdout; nothing is written;
* 3: an internal error (a bug), with its traceback;
* 130: interrupted by Ctrl-C (SIGINT), 143: terminated (SIGTERM); a simulation still reports
  what it measured, and no file is left half-written.
"""

from __future__ import annotations

import signal
import sys
import traceback
from typing import Annotated, Any

import typer

from rtnetlab.cli import (
    analyze,
    configure,
    demo,
    description,
    experiment,
    generate,
    report,
    simulate,
    worst_case,
)
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

app = typer.Typer(
    name="rtnetlab",
    help="Design real-time networks and know they meet their deadlines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _options(
    limit: Annotated[
        list[str] | None,
        typer.Option(
            "--limit",
            metavar="NAME=VALUE",
            help="Raise (or lower) a limit on what a description may cost before it is validated: "
            "size, depth, values, aliases, nodes, flows, paths, errors (see docs/MODEL.md). "
            "Also RTNETLAB_LIMITS=NAME=VALUE,...; may follow the command.",
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


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    from rtnetlab.io import output as outfiles

    args = _hoist_limits(sys.argv[1:] if argv is None else list(argv))
    as_json = "--json" in (args[: args.index("--")] if "--" in args else args)
    outfiles.created_directories.clear()

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
        return rc if isinstance(rc, int) else 0
    except ModelError as e:
        return fail(EXIT_USER, e.lines, e.warnings)
    except UserError as e:
        return fail(EXIT_USER, [str(e)])
    except typer.Exit as e:
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
            if as_json:
                hint = getattr(e, "param_hint", None) or getattr(getattr(e, "param", None), "opts", None)
                place = (hint if isinstance(hint, str) else " / ".join(hint)) if hint else None
                emit_json({"errors": [{"place": place, "message": e.format_message()}], "warnings": []})
            else:
                e.show()
            return e.exit_code
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


# The commands, one line each; a capability's package adds its own line at the end of this block
# (its typer app in python/rtnetlab/<capability>/cli.py, light at import).
from rtnetlab.testbed import cli as testbed_cli  # noqa: E402

#: The `experiment` group: another package registers its subcommands onto it (see cli/experiment.py).
experiment_app = experiment.app

app.command("worst-case")(worst_case.worst_case_command)
app.command("validate")(description.validate)
app.command("info")(description.info)
app.command("analyze")(analyze.analyze)
app.command("simulate")(simulate.simulate)
app.command("convert")(description.convert)
app.command("schema")(description.schema)
app.command("report")(report.report_cmd)
app.command("demo")(demo.demo)
app.add_typer(generate.app, name="generate")
app.add_typer(experiment.app, name="experiment")
app.add_typer(configure.app, name="configure")
app.add_typer(testbed_cli.app, name="testbed")
app.add_typer(testbed_cli.export_app, name="export")
experiment_app.command("ethernet-measure")(testbed_cli.experiment_ethernet_measure)
from rtnetlab.sweep import cli as sweep_cli  # noqa: E402

app.command("sweep")(sweep_cli.sweep)
sweep_cli.register_experiments(experiment_app)
from rtnetlab.cloud import cli as cloud_cli  # noqa: E402

app.add_typer(cloud_cli.slrm, name="slrm")
app.command("admit")(cloud_cli.admit_command)
cloud_cli.register_experiments(experiment_app)
from rtnetlab.middleware import cli as middleware_cli  # noqa: E402

app.add_typer(middleware_cli.app, name="middleware")
