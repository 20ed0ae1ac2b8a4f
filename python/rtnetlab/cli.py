"""The `rtnetlab` command.

Every command takes `--json` for machine-readable output. User mistakes (unreadable files, bad
descriptions, wrong options) are printed as one line each on stderr with exit code 2, never with
a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from rtnetlab import model
from rtnetlab.errors import ModelError, UserError
from rtnetlab.io import formats

app = typer.Typer(
    name="rtnetlab",
    help="Design real-time networks and know they meet their deadlines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
generate_app = typer.Typer(help="Generate synthetic networks.", no_args_is_help=True)
app.add_typer(generate_app, name="generate")

# Tables keep their columns when piped (rich would otherwise squeeze them to 80 characters).
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False, soft_wrap=True)

FileArg = Annotated[Path, typer.Argument(help="Network description (.yaml, .yml, .json, or WOPANet .xml)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, allow_nan=False, default=_json_default) + "\n")


def _json_default(x: Any) -> Any:
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def _warn(net: model.Network) -> None:
    for w in net.warnings:
        err.print(w, markup=False)


@app.command()
def validate(file: FileArg, as_json: JsonOpt = False) -> None:
    """Check a network description; report every problem, one line each."""
    try:
        net = model.load_file(file)
    except ModelError as e:
        if as_json:
            emit_json({"file": str(file), "valid": False, "errors": e.lines, "warnings": e.warnings})
            raise typer.Exit(2) from None
        raise
    info = net.info()
    if as_json:
        emit_json({"file": str(file), "valid": True, "errors": [], "warnings": net.warnings,
                   "counts": info["counts"]})
        return
    _warn(net)
    c = info["counts"]
    out.print(
        f"{file}: valid: {c['end_systems']} end systems, {c['switches']} switches, {c['links']} links, "
        f"{c['flows']} flows ({c['virtual_links']} virtual links), {c['planes']} plane(s)",
        markup=False,
    )


@app.command()
def info(file: FileArg, as_json: JsonOpt = False) -> None:
    """Counts and the load of every egress port (overloaded ports flagged)."""
    net = model.load_file(file)
    data = net.info()
    if as_json:
        data["warnings"] = net.warnings
        emit_json(data)
        return
    _warn(net)
    c = data["counts"]
    out.print(f"[bold]{data['name']}[/bold]  planes: {', '.join(data['planes'])}")
    out.print(
        f"{c['end_systems']} end systems, {c['switches']} switches, {c['links']} links "
        f"({c['egress_ports']} egress ports), {c['flows']} flows ({c['virtual_links']} virtual links, "
        f"{c['routes']} routes)"
    )
    table = Table(title="Egress ports", title_justify="left")
    for col, just in [("port", "left"), ("to", "left"), ("plane", "left"), ("scheduler", "left"),
                      ("flows", "right"), ("load (Mb/s)", "right"), ("rate (Mb/s)", "right"),
                      ("utilisation", "right")]:
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for p in sorted(data["ports"], key=lambda p: -p["utilisation"]):
        util = f"{100 * p['utilisation']:.1f}%"
        style = None
        if p["overloaded"]:
            util += " OVERLOADED"
            style = "bold red"
        table.add_row(f"{p['node']}:{p['port']}", p["peer"], p["plane"], p["scheduler"], str(p["flows"]),
                      f"{p['load_bps'] / 1e6:.3f}", f"{p['rate_bps'] / 1e6:g}", util, style=style)
    out.print(table)
    if data["overloaded_ports"]:
        err.print(f"{data['overloaded_ports']} egress port(s) overloaded: their bounds are infinite",
                  style="bold red")


@app.command()
def convert(
    src: Annotated[Path, typer.Argument(help="Input (.yaml, .yml, .json or WOPANet .xml)")],
    dst: Annotated[Path, typer.Argument(help="Output (.yaml, .yml, .json or WOPANet .xml)")],
    as_json: JsonOpt = False,
) -> None:
    """Convert between YAML, JSON and WOPANet XML; the input is validated first."""
    net = model.load_file(src)
    formats.write(net.spec, dst)
    if as_json:
        emit_json({"from": str(src), "to": str(dst), "warnings": net.warnings})
        return
    _warn(net)
    out.print(f"wrote {dst}", markup=False)


@app.command()
def schema(
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to this file.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the JSON Schema of the description format (generated from the engine's model)."""
    text = json.dumps(model.schema(), indent=2) + "\n"
    if output:
        formats.atomic_write(output, text)
        if not as_json:
            out.print(f"wrote {output}", markup=False)
        return
    sys.stdout.write(text)


@generate_app.command("afdx")
def generate_afdx(
    vls: Annotated[int, typer.Option("--vls", min=1, help="Number of virtual links.")] = 100,
    switches: Annotated[int, typer.Option("--switches", min=1, help="Switches per plane.")] = 4,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random generator.")] = 1,
    planes: Annotated[int, typer.Option("--planes", min=1, max=2, help="1 or 2 redundant planes.")] = 2,
    end_systems: Annotated[int | None, typer.Option("--end-systems", min=2,
                                                   help="End systems (default: enough for the VLs).")] = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to this file.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """A realistic synthetic AFDX network (BAG and frame mix after seed 000 Table 1)."""
    from rtnetlab import _core

    text = _core.generate_afdx(vls, switches, seed, planes, end_systems or 0)
    data = json.loads(text)
    if output:
        formats.write(data, output)
        if as_json:
            emit_json({"output": str(output), "virtual_links": vls})
        else:
            out.print(f"wrote {output} ({vls} virtual links, {switches} switches x {planes} plane(s))",
                      markup=False)
        return
    emit_json(data)


@app.command()
def demo(as_json: JsonOpt = False) -> None:
    """Run the embedded AFDX case study end to end."""
    from rtnetlab import demo as demo_mod

    demo_mod.run(as_json=as_json)


def main(argv: list[str] | None = None) -> int:
    try:
        rc = app(args=argv, prog_name="rtnetlab", standalone_mode=False)
        return rc if isinstance(rc, int) else 0
    except ModelError as e:
        for w in e.warnings:
            err.print(w, markup=False)
        for line in e.lines:
            err.print(line, markup=False)
        return 2
    except UserError as e:
        err.print(str(e), markup=False)
        return 2
    except typer.Exit as e:
        return e.exit_code
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130
    except Exception as e:  # click's own usage errors
        import click

        if isinstance(e, click.exceptions.ClickException):
            e.show()
            return e.exit_code
        if isinstance(e, click.exceptions.Abort):
            return 130
        raise


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
