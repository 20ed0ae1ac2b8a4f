"""``rtnetlab worst-case``: how pessimistic is each bound?

For each (flow, destination, plane) the engine searches release offsets, frame sizes and tie
orders for the largest delay the simulator can realise (``crates/core/src/worst_case/``); every
value is a replayed simulation's maximum, beside the ``best`` bound: the pessimism interval
[achieved, bound]. The scenarios that realise them are written with ``-o`` and replayed by
``rtnetlab simulate FILE --scenario scenarios.json#ID``.

This module also holds what the other commands need of it: reading a scenario for ``simulate
--scenario`` (:func:`replay_setup`) and the interval per flow for ``report --worst-case``
(:func:`read_results`, :func:`html_section`).
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from rtnetlab.errors import UserError

#: A scenarios file holds this document: the search's report, its scenarios included.
KIND = "rtnetlab worst-case"


def worst_case_command(
    file: Annotated[Path, typer.Argument(help="Network description (.yaml, .yml, .json, or WOPANet .xml)")],
    budget: Annotated[
        str, typer.Option("--budget", help="Wall-clock time for the whole search, e.g. 60s or 2min.")
    ] = "60s",
    evaluations: Annotated[
        int | None,
        typer.Option(
            "--evaluations",
            min=1,
            help="A budget in simulations instead of time, shared evenly among the rows: the result "
            "then depends only on the seed (replaces --budget).",
        ),
    ] = None,
    flows: Annotated[
        str | None, typer.Option("--flows", help="Only these flows' rows: names separated by commas.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the search's random moves.")] = 1,
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, help="Rows searched in parallel (default: the cores).")
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="Write the rows and the scenarios (JSON) here, for "
                     "`simulate --scenario FILE#ID` and `report --worst-case FILE`."),
    ] = None,
    rows: Annotated[
        str, typer.Option("--rows", help="Rows shown, most pessimistic bound first: a number or 'all'.")
    ] = "40",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print machine-readable JSON (errors too).")
    ] = False,
) -> None:
    """Search the worst case of every flow: the largest delay a replayed simulation realises
    beside its bound, the pessimism interval [achieved, bound], and the scenario that realises it."""
    from rtnetlab import model
    from rtnetlab.cli import common as cli
    from rtnetlab.io import output as outfiles
    from rtnetlab.tables import parse_limit

    limit = parse_limit(rows)
    seconds = None
    if evaluations is None:
        seconds = cli.quantity("duration", budget, "--budget")
        if not seconds > 0:
            raise UserError(f"--budget: must be positive, got {budget}")
    names = [n.strip() for n in flows.split(",")] if flows is not None else []
    if flows is not None and not all(names):
        raise UserError(f"--flows: expected flow names separated by commas, got '{flows}'")
    if output is not None:
        cli.check_outputs({"-o": output}, [file])
    net = model.load_file(file)
    known = {f["name"] for f in net.spec.get("flows", [])}
    for n in names:
        if n not in known:
            raise UserError(f"--flows: no flow named '{n}' in {file}")
    try:
        report = net.worst_case(seconds, evaluations, seed, workers or os.cpu_count() or 1, names)
    except ValueError as e:
        raise UserError(f"{file}: {e}") from None
    report["kind"] = KIND
    report["budget"] = {"evaluations": evaluations} if evaluations is not None else {"seconds": seconds}
    report["warnings"] = list(net.warnings)
    if output is not None:
        outfiles.write_all({output: json.dumps(report, indent=1, allow_nan=False) + "\n"})
    if as_json:
        cli.emit_json(report)
    else:
        cli.warn(net)
        _print(report, limit, cli.out)
        if output is not None:
            cli.wrote(output, detail=f"{len(report['scenarios'])} scenarios")
    if report["violations"]:
        cli.err.print(_violation_line(report["violations"]), style="bold white on red", markup=False)


def _violation_line(violations: list[dict]) -> str:
    v = violations[0]
    return (
        f"SOUNDNESS VIOLATION: achieved above its bound in {len(violations)} row(s), first {v['flow']} -> "
        f"{v['destination']} ({v['plane']}): a replayed simulation realised {v['achieved_us']:,.3f} us > "
        f"bound {v['bound_us']:,.3f} us (scenario {v['scenario']}); a bound must never be exceeded: this is "
        "a bug in rtnetlab, please report it with the description and the scenario"
    )


def _print(report: dict, limit: int | None, console: Any) -> None:
    from rtnetlab.tables import ResultTable

    table = ResultTable(
        f"Worst case found vs bound ({report['method']}): pessimism interval \\[achieved, bound] (us)",
        ["flow", "destination", "plane", "achieved", "bound", "achieved / bound", "exact for grid",
         "scenario"],
        left=("flow", "destination", "plane"),
    )

    def order(r: dict) -> tuple:
        ratio = r["ratio"]
        return (not r["above_bound"], ratio is not None, ratio if ratio is not None else 0.0, r["flow"])

    for r in sorted(report["rows"], key=order):
        bound = "unbounded" if r["bound_us"] is None else f"{r['bound_us']:,.3f}"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}"
        ratio += " ABOVE BOUND" if r["above_bound"] else ""
        exact = "-"
        if r["exact_for_grid"]:
            exact = "yes" if r["grid_step_ns"] is None else f"yes, step {r['grid_step_ns']:,} ns"
        table.add_row(r["flow"], r["destination"], r["plane"], f"{r['achieved_us']:,.3f}", bound, ratio,
                      exact, str(r["scenario"]), style="bold white on red" if r["above_bound"] else None)
    table.print(console, limit, "(flow, destination, plane) rows")
    console.print(summary_line(report), markup=False)
    for note in report["notes"]:
        console.print(f"note: {note}", markup=False)


def summary_line(report: dict) -> str:
    n = sum(1 for r in report["rows"] if r["ratio"] is not None)
    exact = sum(1 for r in report["rows"] if r["exact_for_grid"])
    if report["mean_ratio"] is None:
        means = "no finite bound to compare with"
    else:
        means = (f"achieved / bound: mean {report['mean_ratio']:.3f}, least {report['min_ratio']:.3f}, "
                 f"largest {report['max_ratio']:.3f} over {n} bounded row(s)")
    return (f"{means}; {exact} row(s) exact for their grid; {report['evaluations']:,} simulations searched, "
            f"{report['replays']:,} replayed; seed {report['seed']}, {report['workers']} worker(s)")


# simulate --scenario


def read_scenario(ref: str) -> tuple[dict, str]:
    """A scenario from ``FILE`` (one scenario, or a scenarios file holding exactly one) or
    ``FILE#ID`` (the scenario ``ID`` of a scenarios file written by ``worst-case -o``). Returns it
    with the place to name in errors."""
    path_text, sep, ident = ref.rpartition("#") if "#" in ref else (ref, "", "")
    path = Path(path_text)
    try:
        doc = json.loads(path.read_text())
    except OSError as e:
        raise UserError(f"--scenario: {path}: cannot be read ({e.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"--scenario: {path}: not JSON ({e})") from None
    if isinstance(doc, dict) and "scenarios" in doc:
        scenarios = doc["scenarios"]
        if not isinstance(scenarios, list) or not scenarios:
            raise UserError(f"--scenario: {path}: 'scenarios' must be a non-empty list")
        if not sep:
            if len(scenarios) != 1:
                raise UserError(f"--scenario: {path}: holds {len(scenarios)} scenarios; name one as "
                                f"{path}#ID (0 to {len(scenarios) - 1}, the rows' scenario column)")
            return scenarios[0], f"{path}#0"
        if not ident.isdigit() or int(ident) >= len(scenarios):
            raise UserError(f"--scenario: {ref}: expected a scenario number from 0 to {len(scenarios) - 1}")
        return scenarios[int(ident)], f"{path}#{ident}"
    if sep:
        raise UserError(f"--scenario: {ref}: {path} holds one scenario, not a list to choose from")
    if not isinstance(doc, dict):
        raise UserError(f"--scenario: {path}: expected a JSON object (a scenario)")
    return doc, str(path)


def replay_setup(net: Any, config: dict, ref: str) -> tuple[Any, dict]:
    """``simulate --scenario``: the scenario checked against the network, the run set to replay it
    (its duration, releases, sizes and tie order), and, when the scenario runs cut-through switches
    store-and-forward, the network so changed (so that the bounds apply and are shown)."""
    from rtnetlab import model

    scenario, where = read_scenario(ref)
    try:
        net.check_scenario(scenario)
    except ValueError as e:
        raise UserError(f"--scenario: {where}: {e}") from None
    if scenario.get("store_and_forward"):
        spec = net.spec
        spec.setdefault("defaults", {})["switching"] = "store_and_forward"
        for sw in spec.get("switches", []):
            sw.pop("switching", None)
        net = model.load_data(spec, net.source)
    config = {**config, "scenario": scenario, "duration_ns": scenario["duration_ns"],
              "release": "synchronized", "frame_sizes": "max", "workload": {"kind": "periodic"}}
    return net, config


# report --worst-case


def read_results(path: Path, net: Any) -> dict:
    """A worst-case search's results (``worst-case -o`` or ``--json``) for ``report
    --worst-case``: checked to be of this network."""
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as e:
        raise UserError(f"--worst-case: {path}: cannot be read ({e.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"--worst-case: {path}: not JSON ({e})") from None
    if not isinstance(doc, dict) or doc.get("kind") != KIND or not isinstance(doc.get("rows"), list):
        raise UserError(f"--worst-case: {path}: not the results of `rtnetlab worst-case` (-o or --json)")
    name = net.spec.get("name")
    if doc.get("network") != name:
        raise UserError(f"--worst-case: {path}: results of network '{doc.get('network')}', not of '{name}'")
    return doc


def html_section(doc: dict | None) -> str:
    """The report's section: per (flow, destination, plane) the interval [achieved, bound] as a
    bar, with the ratio; empty without results."""
    if doc is None:
        return ""
    e = html.escape
    rows = sorted(doc["rows"], key=lambda r: (r["ratio"] is None, r["ratio"] or 0.0, r["flow"]))
    head = (
        '<section id="worst-case" data-section="worst-case"><h2>Worst case found: pessimism interval</h2>'
        f"<p>{e(summary_line(doc))}. Each row: the largest delay a replayed scenario realised (achieved) and "
        "the bound; the true worst case lies between.</p>"
    )
    if doc["violations"]:
        head += ('<div class="banner alarm">SOUNDNESS VIOLATION: a replayed scenario realised a delay above '
                 f"its bound in {len(doc['violations'])} row(s).</div>")
    body = ['<table class="sortable" data-table="worst-case"><thead><tr><th>flow</th><th>destination</th>'
            "<th>plane</th><th>achieved (µs)</th><th>bound (µs)</th><th>achieved / bound</th>"
            "<th>interval</th><th>scenario</th></tr></thead><tbody>"]
    for r in rows:
        bound = "unbounded" if r["bound_us"] is None else f"{r['bound_us']:,.3f}"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}"
        width = 0 if r["ratio"] is None else max(0.0, min(r["ratio"], 1.0)) * 100
        bar = (f'<div style="background:#dde;width:120px;height:10px;position:relative">'
               f'<div style="background:#46a;width:{width:.1f}%;height:10px"></div></div>')
        style = ' style="background:#fcc"' if r["above_bound"] else ""
        body.append(f"<tr{style}><td>{e(r['flow'])}</td><td>{e(r['destination'])}</td><td>{e(r['plane'])}</td>"
                    f"<td>{r['achieved_us']:,.3f}</td><td>{bound}</td><td>{ratio}</td><td>{bar}</td>"
                    f"<td>{r['scenario']}</td></tr>")
    body.append("</tbody></table></section>")
    return head + "".join(body)
