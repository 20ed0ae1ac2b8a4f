"""The command's layout as other packages rely on it: the `experiment` group is a module-level
typer app a package registers subcommands onto (documented in rtnetlab/cli/experiment.py), and
the commands' modules leave the engine, the report and the experiments unimported until a
command runs."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer


def test_a_package_registers_an_experiment_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    from rtnetlab import cli
    from rtnetlab.cli import experiment

    assert cli.experiment_app is experiment.app

    def register(experiment_app: typer.Typer) -> None:
        @experiment_app.command("layout-probe")
        def probe(times: int = 2) -> None:
            """A subcommand registered from outside the cli package."""
            print("probe " * times)

    register(experiment.app)
    try:
        assert cli.main(["experiment", "layout-probe", "--times", "3"]) == 0
        assert capsys.readouterr().out.split() == ["probe"] * 3
    finally:
        experiment.app.registered_commands = [
            c for c in experiment.app.registered_commands if c.name != "layout-probe"
        ]


def test_help_loads_neither_the_engine_nor_the_report_nor_the_experiments() -> None:
    code = (
        "import sys\n"
        "from rtnetlab.cli import main\n"
        "rc = main(['--help'])\n"
        "heavy = [m for m in ('rtnetlab.report', 'rtnetlab.experiments', 'rtnetlab.simulate', 'matplotlib',"
        " 'jinja2', 'rtnetlab.io.wopanet', 'rtnetlab._core', 'rtnetlab.model') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[]"


def test_the_command_table_says_what_each_command_says() -> None:
    """`rtnetlab --help` lists the commands from the table in rtnetlab/cli/__init__.py without
    importing them: each line there must be the command's own first paragraph of help."""
    import inspect

    import typer.main

    from rtnetlab import cli

    root = typer.main.get_command(cli.app)
    ctx = root.make_context("rtnetlab", ["analyze"], resilient_parsing=True)
    assert root.list_commands(ctx) == list(cli.COMMANDS)
    for name, (_, short) in cli.COMMANDS.items():
        command = root.get_command(ctx, name)
        assert command is not None and command.name == name
        assert not command.hidden and not command.deprecated
        assert not getattr(command, "rich_help_panel", None), name
        own = inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]
        assert own == short, name


def test_a_command_loads_only_its_own_module() -> None:
    code = (
        "import sys\n"
        "from rtnetlab.cli import main\n"
        "rc = main(['analyze', '--help'])\n"
        "others = [m for m in ('rtnetlab.cli.simulate', 'rtnetlab.cli.experiment', 'rtnetlab.sweep.cli',"
        " 'rtnetlab.cloud.cli', 'rtnetlab.middleware.cli', 'rtnetlab.testbed.cli') if m in sys.modules]\n"
        "print(rc, others)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "0 []"


def _all_commands(command, ctx):
    yield command
    for name in command.list_commands(ctx) if hasattr(command, "list_commands") else []:
        yield from _all_commands(command.get_command(ctx, name), ctx)


def test_plain_values_convert_as_typers_adapters_do(tmp_path) -> None:
    """rtnetlab/cli/plain_params.py converts plain values without pydantic: for every parameter
    of every command and each of these values, the result (or the error message) is typer's."""
    import typer.main
    from typer import _click
    from typer._coercion import build_runtime_param
    from typer.core import _TyperParameter

    from rtnetlab import cli
    from rtnetlab.cli import plain_params

    a_file = tmp_path / "net.yaml"
    a_file.write_text("x")
    values = [None, (), ("a", "b"), ["--x"], "x", "", "12", "-3", "0", "007", "1.5", "-0.25", "1e3", "inf",
              "nan", "abc", " 7", "1_000", "99999999999999999999", str(a_file), str(tmp_path), "./x",
              "a//b", "no/such/file.yaml", "-", 0, 1, 5, 2.5, -1, True, False, a_file]
    root = typer.main.get_command(cli.app)
    ctx = _click.Context(root)
    checked = plain = 0
    for command in _all_commands(root, ctx):
        plain_params.install(command)
        for p in command.params + [command.get_help_option(ctx)]:
            if not isinstance(p, _TyperParameter) or p.type_descriptor is None:
                continue
            mine, typers = plain_params.PlainParam(p.type_descriptor), build_runtime_param(p.type_descriptor)
            for v in [*values, p.default]:
                results = []
                for conv in (mine, typers):
                    try:
                        results.append(("ok", conv.coerce(v, param=p, ctx=ctx)))
                    except Exception as e:  # the same error, with the same message
                        results.append((type(e).__name__, str(e)))
                got, want = results
                same = repr(got) == repr(want) and type(got[1]) is type(want[1])
                assert same, (command.name, p.name, v, got, want)
                checked += 1
                plain += mine.plain(v, p) is not plain_params._FALLBACK
    assert checked > 1000 and plain > checked // 4


def test_the_listing_wraps_each_command_as_one_paragraph() -> None:
    """A command's help of two lines in the table is one paragraph in `rtnetlab --help`: wide
    enough, each command's whole help sits on its own line (a kept line break would split it)."""
    import os
    import re

    from rtnetlab import cli

    env = {**os.environ, "COLUMNS": "400", "TERM": "dumb", "NO_COLOR": "1"}
    r = subprocess.run([sys.executable, "-m", "rtnetlab.cli", "--help"], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    lines = [re.sub(r"\s+", " ", line.strip("│ ")) for line in r.stdout.splitlines()]
    for name, (_, short) in cli.COMMANDS.items():
        text = " ".join(short.replace("\\[", "[").split())
        assert f"{name} {text}" in lines, (name, [x for x in lines if x.startswith(name)])
