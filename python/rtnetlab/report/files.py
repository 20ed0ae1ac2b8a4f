"""The three files of a report (``x.html``, ``x.csv``, ``x.json``): their paths checked before any
work, their texts, and their writing (all complete before any is renamed into place).
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

from rtnetlab.errors import UserError
from rtnetlab.io import output as outfiles
from rtnetlab.report.data import build
from rtnetlab.results import csv_number
from rtnetlab.worst_case import read_results

if TYPE_CHECKING:
    from rtnetlab.model import Network


def output_paths(output: Path) -> dict[str, Path]:
    """The page and its side files: ``x.html`` -> ``x.csv`` and ``x.json`` beside it."""
    output = Path(output)
    return {"html": output, "csv": output.with_suffix(".csv"), "json": output.with_suffix(".json")}


def check_output(output: Path, inputs: list[Path] | tuple = ()) -> dict[str, Path]:
    """The paths of the three files, checked before anything runs (a user error is reported at
    once): not a directory, not an input of the command (`inputs`), not each other, writable
    (missing directories are created when the files are written)."""
    output = Path(output)
    if output.is_dir() or not output.name:
        raise UserError(f"-o: {output}: is a directory")
    if output.suffix.lower() in (".csv", ".json"):
        raise UserError(f"-o: {output}: the report is HTML (the .csv and .json are written beside it)")
    paths = output_paths(output)
    for kind in ("csv", "json"):
        for src in inputs:
            if outfiles.same_file(paths[kind], Path(src)):
                suggestion = output.with_name(f"{output.stem}-report.html")
                raise UserError(
                    f"-o: {output}: its {kind.upper()} data would go to {paths[kind]}, which is an input of "
                    f"this command; choose another name (e.g. -o {suggestion})"
                )
    outfiles.check({"-o": paths["html"], "-o (its CSV)": paths["csv"], "-o (its JSON)": paths["json"]},
                   inputs)
    return paths


def write(data: dict, output: Path, inputs: list[Path] | tuple = ()) -> dict[str, Path]:
    """Writes the HTML page and the CSV and JSON beside it (same name, .csv and .json). Every file
    is complete in memory and on disk under a temporary name before any is renamed into place."""
    from rtnetlab.report import page

    paths = check_output(output, inputs)
    texts = {"html": page.render_html(data, paths), "csv": render_csv(data), "json": render_json(data)}
    outfiles.write_all({paths[kind]: texts[kind] for kind in paths})
    return paths


def generate(
    net: Network,
    output: Path,
    method: str = "best",
    duration_ns: int = 1_000_000_000,
    seed: int = 1,
    analysis: dict | None = None,
    simulation: dict | None = None,
    progress: bool = False,
    inputs: list[Path] | tuple = (),
    measured: dict | None = None,
    worst_case: Path | None = None,
) -> tuple[dict, dict[str, Path]]:
    """build() then write(): returns the report's summary and the paths written; with a testbed
    `measured` report, the measured figures beside bound and simulated; with `worst_case` (a
    worst-case search's results), the pessimism interval per flow too."""
    check_output(output, inputs)
    if measured is not None:
        from rtnetlab.testbed import compare

        compare.check_network(measured, net.info()["name"])  # before the simulation
    found = read_results(worst_case, net) if worst_case is not None else None
    data = build(net, method, duration_ns, seed, analysis, simulation, progress)
    if measured is not None:
        from rtnetlab.testbed import compare

        compare.attach(data, measured)
    data["worst_case"] = found
    return data["summary"], write(data, output, inputs)


def render_csv(data: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    cols = [
        "flow",
        "destination",
        "plane",
        "class",
        "bound_us",
        "sim_p99_us",
        "sim_max_us",
        "deadline_us",
        "status",
        "reason",
    ]
    w.writerow(cols)
    for r in data["rows"]:
        # An unbounded bound is `inf` (an empty cell means "no value": no deadline, nothing measured).
        unbounded = r["status"] == "unbounded" and r["bound_us"] is None
        cells = {**r, "bound_us": math.inf if unbounded else r["bound_us"]}
        w.writerow([csv_number(cells[c]) if c.endswith("_us") else ("" if cells[c] is None else cells[c])
                    for c in cols])
    return buf.getvalue()


def render_json(data: dict) -> str:
    doc = {"summary": data["summary"], "analysis": data["analysis"], "simulation": data["simulation"]}
    if "measured" in data:
        doc["measured"] = {**data["measured"], "rows": [
            {k: r.get(k) for k in ("flow", "destination", "plane", "bound_us", "sim_max_us",
                                   "measured_mean_us", "measured_max_us", "measured_undisturbed_max_us",
                                   "measured_undisturbed_less_host_us", "measured_allowance_us",
                                   "measured_disturbed", "measured_verdict", "measured_count")}
            for r in data["rows"]]}
    if data.get("worst_case") is not None:
        doc["worst_case"] = data["worst_case"]
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"
