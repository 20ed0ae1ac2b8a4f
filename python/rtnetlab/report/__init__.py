"""`rtnetlab report`: one self-contained HTML page people can look at.

The analysis (worst-case bounds) and the simulation (measured latencies) of one network, side by
side, in this order: violations and overloads first, the topology (inline SVG, a virtual-link
selector highlights a VL's path on every plane), per-flow bound vs simulated p99 and maximum with
the deadline, latency CDFs per traffic class, per-port utilisation and backlog against the
buffer, notes. Plots are matplotlib figures rendered to inline SVG; the page needs no network
access. The same data is written beside it as CSV (one row per flow, destination and plane) and
JSON (analysis, simulation, summary), named after the page (``x.html`` -> ``x.csv``,
``x.json``); none of the three may be an input of the command. All three are written through
temporary files and renamed only once all three are complete (`rtnetlab.io.output`).

An unbounded flow (an overloaded port on its path) is marked unbounded everywhere, with the
overloaded port and its load: in the tables, in the CSV (``inf`` bound, and a reason column) and
in the JSON (``null`` bound, ``"status": "unbounded"``, the reason).

Layout of the package:

* ``data``: the analysis and the simulation joined row by row, the summary and the verdict;
* ``files``: the three files' paths, checks and texts (CSV, JSON), their writing;
* ``page``: the page assembled by the Jinja2 template ``templates/page.html.j2`` (its CSS and
  script beside it);
* ``sections/``: one module per section of the page (violations, topology, flows, ports, notes,
  and the testbed's measured section);
* ``plots/``: one module per plot (flows, cdf, ports), ``plots.common`` their shared rendering;
* ``html_text``: escaping and the numbers' formatting shared by the sections.

A new section: a module in ``sections/`` with a function returning its HTML, and its place in
the template. matplotlib is imported by the plots on first use only.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from rtnetlab.report.data import NO_CLASS, build
from rtnetlab.report.files import check_output, generate, output_paths, render_csv, render_json, write
from rtnetlab.report.page import render_html
from rtnetlab.simulate import SIM_SLACK_US

FIGURES = ("flows", "cdf", "ports")
SECTIONS = ("violations", "topology", "flows", "cdf", "ports", "notes")

__all__ = [
    "FIGURES",
    "NO_CLASS",
    "SECTIONS",
    "SIM_SLACK_US",
    "build",
    "check_output",
    "generate",
    "output_paths",
    "render_csv",
    "render_html",
    "render_json",
    "write",
]


class _ReportModule(types.ModuleType):
    """This package, callable: ``rtnetlab.report`` is both the report's package and the API's
    ``rt.report(network, path=None, ...)`` (:func:`rtnetlab.display.report`), whichever was
    imported first (importing the package sets the attribute ``rtnetlab.report`` to it)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from rtnetlab.display import report

        return report(*args, **kwargs)


sys.modules[__name__].__class__ = _ReportModule
