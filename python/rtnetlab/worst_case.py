"""``rtnetlab worst-case``: how pessimistic is each bound?

For each (flow, destination, plane) the engine searches release offsets, frame sizes and tie
orders for the largest delay the simulator can realise (``crates/core/src/worst_case/``); every
value is a replayed simulation's maximum, beside the ``best`` bound: the pessimism interval
[achieved, bound]. The scenarios that realise them are written with ``-o`` and replayed by
``rtnetlab simulate FILE --scenario scenarios.json#ID``.

The command and its table are in ``rtnetlab.cli.worst_case``; this module holds the scenarios'
file, what the other commands need of it: reading a scenario for ``simulate --scenario``
(:func:`replay_setup`) and the interval per flow for ``report --worst-case`` (:func:`read_results`,
:func:`html_section`).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from rtnetlab.errors import UserError
from rtnetlab.io import jsontext

#: A scenarios file holds this document: the search's report, its scenarios included.
KIND = "rtnetlab worst-case"


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
        raise UserError(f"--scenario: {jsontext.not_json(path, e)}") from None
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
        raise UserError(f"--worst-case: {jsontext.not_json(path, e)}") from None
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


def budget_seconds(budget: Any, evaluations: int | None, workers: int | None) -> float | None:
    """The search's budget in seconds (None with a budget in `evaluations`), its options checked."""
    from rtnetlab import limits

    if workers is not None:
        limits.check("workers", workers, "--workers", f"{workers:,} search threads")
    if evaluations is not None:
        if evaluations < 1:
            raise UserError(f"--evaluations: must be at least 1, got {evaluations}")
        return None
    if isinstance(budget, (int, float)) and not isinstance(budget, bool):
        seconds = float(budget)
    else:
        from rtnetlab import _core

        try:
            seconds = _core.parse_quantity("duration", str(budget))
        except ValueError as e:
            raise UserError(f"--budget: {e}") from None
    if not seconds > 0:
        raise UserError(f"--budget: must be positive, got {budget}")
    return seconds


def search(
    net: Any,
    budget: Any = "60s",
    evaluations: int | None = None,
    flows: list[str] | None = None,
    seed: int = 1,
    workers: int | None = None,
    output: Path | None = None,
) -> dict:
    """The worst-case search of `net` (the engine's network) within `budget` (wall-clock, text
    with its unit or seconds) or `evaluations` simulations, on `flows` (all when None), with
    `workers` threads (the cores when None); the report as ``worst-case --json`` prints it, and
    written to `output` (rows and scenarios) if given."""
    import os

    seconds = budget_seconds(budget, evaluations, workers)
    names = list(flows or [])
    if output is not None:
        from rtnetlab.io import output as outfiles

        outfiles.check({"-o": output}, [Path(net.source)] if net.source else [])
    known = {f["name"] for f in net.spec.get("flows", [])}
    for n in names:
        if n not in known:
            raise UserError(f"--flows: no flow named '{n}' in {net.source or 'the network'}")
    try:
        report = net.worst_case(seconds, evaluations, seed, workers or os.cpu_count() or 1, names)
    except ValueError as e:
        raise UserError(f"{net.source or 'network'}: {e}") from None
    report["kind"] = KIND
    report["budget"] = {"evaluations": evaluations} if evaluations is not None else {"seconds": seconds}
    report["warnings"] = list(net.warnings)
    if output is not None:
        from rtnetlab.io import output as outfiles

        outfiles.write_all({output: json.dumps(report, indent=1, allow_nan=False) + "\n"})
    return report
