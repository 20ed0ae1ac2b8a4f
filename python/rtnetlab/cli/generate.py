"""``rtnetlab generate``: synthetic networks."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rtnetlab.cli.common import JsonOpt, check_description_output, check_outputs, emit_json, wrote

app = typer.Typer(help="Generate synthetic networks.", no_args_is_help=True)


def _rates(counts: list) -> str:
    """[(bit/s, links), ...] as `1Gbps x 60, 10Gbps x 3`."""

    def rate(bps: float) -> str:
        return f"{bps / 1e9:g}Gbps" if bps >= 1e9 else f"{bps / 1e6:g}Mbps"

    return ", ".join(f"{rate(r)} x {n}" for r, n in counts)


@app.command("afdx")
def generate_afdx(
    vls: Annotated[int, typer.Option("--vls", min=1, help="Number of virtual links.")] = 100,
    switches: Annotated[
        int | None,
        typer.Option(
            "--switches",
            min=1,
            help="Switches per plane (default: one per 24 end systems, at least 4).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random generator.")] = 1,
    planes: Annotated[int, typer.Option("--planes", min=1, max=2, help="1 or 2 redundant planes.")] = 2,
    end_systems: Annotated[
        int | None, typer.Option("--end-systems", min=2, help="End systems (default: enough for the VLs).")
    ] = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to this file.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """A realistic synthetic AFDX network (BAG and frame mix after seed 000 Table 1).

    Sized for its traffic: every link gets the slowest Ethernet rate at which both its ports
    carry at most 80 % of it (end systems' links from 100Mbps, at most 10Gbps; trunks between
    switches from 1Gbps), so every route is bounded; end systems' links at 100Mbps take it from
    defaults.link_rate. A network no link rate can carry is refused in one line.
    """
    import rtnetlab as rt

    if output:
        check_description_output("-o", output)
        check_outputs({"-o": output}, [])
    net = rt.generate_afdx(vls, switches, seed, planes, end_systems)
    sizing = net.sizing or {}
    data = net.data
    if output:
        net.save(output)
        if as_json:
            emit_json({"output": str(output), "virtual_links": vls, "sizing": sizing})
        else:
            wrote(
                output,
                detail=f"{vls} virtual links, {sizing['switches']} switches x {planes} plane(s), "
                f"{sizing['end_systems']} end systems; trunks {_rates(sizing['trunk_rates']) or 'none'}, "
                f"end systems' links {_rates(sizing['edge_rates'])}; largest port load "
                f"{100 * sizing['largest_utilisation']:.1f} % ({sizing['largest_port']})",
            )
        return
    emit_json(data)
