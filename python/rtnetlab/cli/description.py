"""``rtnetlab validate``, ``info``, ``convert`` and ``schema``: a description checked, counted,
converted between formats, and the format's JSON Schema."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from rtnetlab.cli.common import (
    EXIT_USER,
    FileArg,
    JsonOpt,
    check_description_output,
    check_outputs,
    emit_json,
    err,
    error_document,
    out,
    table,
    warn,
    wrote,
)
from rtnetlab.errors import ModelError, UserError


def validate(file: FileArg, as_json: JsonOpt = False) -> None:
    """Check a network description; report every problem, one line each."""
    import rtnetlab as rt

    try:
        net = rt.load(file)
    except UserError as e:
        if as_json:
            errors, warnings = (e.lines, e.warnings) if isinstance(e, ModelError) else ([str(e)], [])
            emit_json(error_document(errors, warnings, file=str(file), valid=False))
            raise typer.Exit(EXIT_USER) from None
        raise
    info = net.info()
    if as_json:
        emit_json(
            {
                "file": str(file),
                "valid": True,
                "errors": [],
                "warnings": net.warnings,
                "counts": info["counts"],
            }
        )
        return
    warn(net)
    c = info["counts"]
    parts = []
    if c["end_systems"] or c["links"] or not c["tasks"] + c["messages"] + c["servers"]:
        parts.append(
            f"{c['end_systems']} end systems, {c['switches']} switches, {c['links']} links, "
            f"{c['flows']} flows ({c['virtual_links']} virtual links), {c['planes']} plane(s)"
        )
    if c["processors"] or c["buses"]:
        parts.append(_fixed_priority_counts(c))
    out.print(f"{file}: valid: {'; '.join(parts)}", markup=False)


def _fixed_priority_counts(c: dict) -> str:
    return (
        f"{c['processors']} processors, {c['buses']} buses, {c['tasks']} tasks, "
        f"{c['messages']} messages, {c['servers']} servers, {c['chains']} chains"
    )


def info(file: FileArg, as_json: JsonOpt = False) -> None:
    """Counts and the load of every egress port (overloaded ports flagged)."""
    import rtnetlab as rt

    net = rt.load(file)
    data = net.info()
    if as_json:
        data["warnings"] = net.warnings
        emit_json(data)
        return
    warn(net)
    c = data["counts"]
    out.print(f"[bold]{data['name']}[/bold]  planes: {', '.join(data['planes'])}")
    if c["end_systems"] or c["links"]:
        out.print(
            f"{c['end_systems']} end systems, {c['switches']} switches, {c['links']} links "
            f"({c['egress_ports']} egress ports), {c['flows']} flows ({c['virtual_links']} virtual links, "
            f"{c['routes']} routes)"
        )
    ports = table(
        "Egress ports",
        ["port", "to", "plane", "scheduler", "flows", "load (Mb/s)", "rate (Mb/s)", "utilisation"],
        left=("port", "to", "plane", "scheduler"),
    )
    for p in sorted(data["ports"], key=lambda p: -p["utilisation"]):
        util = f"{100 * p['utilisation']:.1f}%"
        style = None
        if p["overloaded"]:
            util += " OVERLOADED"
            style = "bold red"
        ports.add_row(
            f"{p['node']}:{p['port']}",
            p["peer"],
            p["plane"],
            p["scheduler"],
            str(p["flows"]),
            f"{p['load_bps'] / 1e6:.3f}",
            f"{p['rate_bps'] / 1e6:g}",
            util,
            style=style,
        )
    if data["ports"]:
        out.print(ports)
    if data["resources"]:
        out.print(_fixed_priority_counts(c))
        res = table(
            "Processors and buses", ["resource", "kind", "items", "utilisation"], left=("resource", "kind")
        )
        for r in sorted(data["resources"], key=lambda r: -r["utilisation"]):
            util = f"{100 * r['utilisation']:.1f}%" + (" OVERLOADED" if r["overloaded"] else "")
            style = "bold red" if r["overloaded"] else None
            res.add_row(r["name"], r["kind"], str(r["items"]), util, style=style)
        out.print(res)
    if data["overloaded_ports"]:
        err.print(
            f"{data['overloaded_ports']} egress port(s) overloaded: their bounds are infinite",
            style="bold red",
        )


def convert(
    src: Annotated[Path, typer.Argument(help="Input (.yaml, .yml, .json, WOPANet .xml or DNC .java)")],
    dst: Annotated[Path, typer.Argument(help="Output (.yaml, .yml, .json or WOPANet .xml)")],
    as_json: JsonOpt = False,
) -> None:
    """Convert between YAML, JSON and WOPANet XML; the input is validated first."""
    import rtnetlab as rt

    check_description_output("", dst)
    check_outputs({"": dst}, [src])
    net = rt.load(src)
    net.save(dst)
    if as_json:
        emit_json({"from": str(src), "to": str(dst), "warnings": net.warnings})
        return
    warn(net)
    wrote(dst)


def schema(
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to this file.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the JSON Schema of the description format (generated from the engine's model)."""
    import rtnetlab as rt
    from rtnetlab.io import formats

    text = json.dumps(rt.schema(), indent=2) + "\n"
    if output:
        check_outputs({"-o": output}, [])
        formats.atomic_write(output, text)
        if as_json:
            emit_json({"files": {"output": str(output)}})
        else:
            wrote(output)
        return
    sys.stdout.write(text)
