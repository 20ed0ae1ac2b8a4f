"""``rtnetlab generate``: synthetic networks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from rtnetlab.cli.common import JsonOpt, check_description_output, check_outputs, emit_json, wrote

app = typer.Typer(help="Generate synthetic networks.", no_args_is_help=True)


@app.command("afdx")
def generate_afdx(
    vls: Annotated[int, typer.Option("--vls", min=1, help="Number of virtual links.")] = 100,
    switches: Annotated[int, typer.Option("--switches", min=1, help="Switches per plane.")] = 4,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random generator.")] = 1,
    planes: Annotated[int, typer.Option("--planes", min=1, max=2, help="1 or 2 redundant planes.")] = 2,
    end_systems: Annotated[
        int | None, typer.Option("--end-systems", min=2, help="End systems (default: enough for the VLs).")
    ] = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to this file.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """A realistic synthetic AFDX network (BAG and frame mix after seed 000 Table 1)."""
    from rtnetlab import _core, limits, model

    # Before the engine allocates them (200,000,000 VLs would take the host's memory).
    limits.check("vls", vls, "--vls")
    limits.check("nodes", switches * planes, "--switches", f"{switches * planes:,} switches")
    if end_systems is not None:
        limits.check("nodes", switches * planes + end_systems, "--end-systems")
    if output:
        check_description_output("-o", output)
        check_outputs({"-o": output}, [])
    text = _core.generate_afdx(vls, switches, seed, planes, end_systems or 0)
    data = json.loads(text)
    if output:
        model.write(data, output)
        if as_json:
            emit_json({"output": str(output), "virtual_links": vls})
        else:
            wrote(output, detail=f"{vls} virtual links, {switches} switches x {planes} plane(s)")
        return
    emit_json(data)
