"""What the API's analyses, simulations, searches and syntheses return: the engine's report with
its rows at hand and as data frames.

Every result holds `Result.data`, the same document the command's ``--json`` prints (without
the ``warnings``, which are in `Result.notes`), and gives its rows as lists of dicts
(`Result.flows`: one per flow, destination and plane; `Result.ports`: one per egress
port), as a polars or pandas data frame with the JSON's column names (`Result.to_polars`,
`Result.to_pandas`), and as JSON text (`Result.to_json`). In Jupyter a result shows
as tables coloured as the HTML report colours them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas
    import polars

    from rtnetlab.network import Network


def _missing(package: str) -> ImportError:
    return ImportError(f"{package} is not installed: pip install {package}")


class Result:
    """The base of every result: the report as plain data, its rows and its notes."""

    #: The name of the rows one frame is made of by default (``flows`` or ``ports``).
    _rows = "flows"
    #: What the result is, in its display.
    kind = "result"

    def __init__(self, data: dict[str, Any], warnings: list[str] | None = None,
                 network: Network | None = None):
        self.data = data
        self._warnings = list(warnings or [])
        self.network = network

    @property
    def flows(self) -> list[dict[str, Any]]:
        """One row per (flow, destination, plane), with the JSON's keys."""
        return list(self.data.get("flows") or [])

    @property
    def ports(self) -> list[dict[str, Any]]:
        """One row per egress port, with the JSON's keys."""
        return list(self.data.get("ports") or [])

    @property
    def notes(self) -> list[str]:
        """The warnings of the network and of the run, and the report's own notes, one line each."""
        own = self.data.get("notes") or []
        return self._warnings + [n if isinstance(n, str) else str(n) for n in own]

    def to_json(self, indent: int | None = 2) -> str:
        """The result as the command's ``--json`` prints it (the report, then its warnings)."""
        from rtnetlab.io import jsontext

        doc = {k: v for k, v in self.data.items() if k != "warnings"}
        doc["warnings"] = self._warnings
        if indent is None:
            import json

            return json.dumps(doc, allow_nan=False)
        return jsontext.dumps(doc)

    def _table(self, rows: str | None) -> list[dict[str, Any]]:
        name = rows or self._rows
        if name not in ("flows", "ports"):
            value = self.data.get(name)
            if not isinstance(value, list):
                raise ValueError(f"rows: expected flows, ports or a list of the report, got '{name}'")
            return value
        return self.flows if name == "flows" else self.ports

    def to_polars(self, rows: str | None = None) -> polars.DataFrame:
        """The rows (`rows`: ``flows``, the default, ``ports``, or another list of the report) as a
        polars DataFrame, one column per JSON key; an infinite bound is a null with its
        ``status`` and ``reason``, as in the JSON."""
        try:
            import polars as pl
        except ImportError:
            raise _missing("polars") from None
        table = _flat(self._table(rows))
        return pl.DataFrame(table, infer_schema_length=None) if table else pl.DataFrame()

    def to_pandas(self, rows: str | None = None) -> pandas.DataFrame:
        """The rows as a pandas DataFrame (the same columns as `to_polars`)."""
        try:
            import pandas as pd
        except ImportError:
            raise _missing("pandas") from None
        return pd.DataFrame(_flat(self._table(rows)))

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __repr__(self) -> str:
        return f"<rtnetlab.{type(self).__name__}: {len(self.flows)} flow rows, {len(self.ports)} ports>"

    def _repr_html_(self) -> str:
        from rtnetlab import display

        return display.result_html(self)


def _flat(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with lists and mappings (a histogram, a route) left out of frames' columns as text."""
    out = []
    for r in rows:
        out.append({k: (v if not isinstance(v, (list, dict)) else repr(v)) for k, v in r.items()})
    return out


class AnalysisResult(Result):
    """Worst-case bounds (``rtnetlab analyze --json``): `flows` holds per (flow,
    destination, plane) ``delay_us``, ``jitter_us``, ``best_case_us``, ``deadline_us``,
    ``slack_us``, ``status`` (ok, miss, unbounded), ``method`` and ``reason``; `ports`
    per egress port its backlog and delay bounds."""

    kind = "analysis"

    @property
    def method(self) -> str:
        """The analysis asked for (``best``, ``tfa``...)."""
        return str(self.data.get("method", ""))

    @property
    def verdict(self) -> dict[str, Any]:
        """Counts of the bounds (``ok``, ``miss``, ``unbounded``) and ``failures``, the rows
        that fail their deadline (``--fail-on-miss``'s verdict); ``failed`` when any."""
        from rtnetlab import results

        return results.verdict(self.data)

    def bound(self, flow: str, destination: str | None = None, plane: str | None = None) -> float:
        """Flow `flow`'s delay bound in µs (the largest over its destinations and planes unless
        given; ``inf`` when unbounded)."""
        found = [f for f in self.flows if f["flow"] == flow
                 and (destination is None or f["destination"] == destination)
                 and (plane is None or f["plane"] == plane)]
        if not found:
            raise ValueError(f"no row of flow '{flow}'" + (f" to '{destination}'" if destination else ""))
        return max(math.inf if f["delay_us"] is None else f["delay_us"] for f in found)

    def to_csv(self) -> str:
        """The end-to-end bounds as ``rtnetlab analyze -o x.csv`` writes them."""
        from rtnetlab import results

        return results.flows_csv(self.data)


class SimulationResult(Result):
    """A simulation (``rtnetlab simulate --json``): `flows` holds per (flow, destination,
    plane) ``count``, ``min_us``, ``mean_us``, ``p50_us``, ``p99_us``, ``p999_us``, ``max_us``,
    ``jitter_us``, losses and the ``bound_us`` beside; `ports` the backlog, drops and
    utilisation; ``data["bounds"]`` the soundness check (``above_bound`` must be empty)."""

    kind = "simulation"

    #: The warnings of the network simulated (the first of `notes`; the run's follow).
    network_warnings: list[str] = []

    @property
    def interrupted(self) -> bool:
        """Whether Ctrl-C stopped the run before its duration."""
        return bool(self.data.get("interrupted"))


class WorstCaseResult(Result):
    """A worst-case search (``rtnetlab worst-case --json``): per row the delay achieved by a
    replayed scenario beside its bound, in ``rows``."""

    kind = "worst-case"
    _rows = "rows"

    @property
    def flows(self) -> list[dict[str, Any]]:
        """One row per (flow, destination, plane): achieved, bound, and the scenario's id."""
        return list(self.data.get("rows") or [])


class Explanation(Result):
    """Where one flow's bound comes from (``rtnetlab analyze --explain FLOW --json``): per route
    the hops, each with its port's rate and latency, the loads, the burst entering and the delay
    it adds; `flows` has one row per hop."""

    kind = "explanation"

    @property
    def flows(self) -> list[dict[str, Any]]:
        """One row per hop of every route, with the route's destination and plane."""
        rows = []
        for r in self.data.get("routes") or []:
            for h in r.get("hops") or []:
                rows.append({"destination": r.get("destination"), "plane": r.get("plane"), **h})
        return rows


class ConfigureResult(Result):
    """A synthesis (``rtnetlab configure ... --json``): the engine's report in `data`,
    the configured network in `network` (None when nothing feasible was found) and, where
    the command analyses it, its `analysis`."""

    kind = "configuration"

    def __init__(self, data: dict[str, Any], warnings: list[str] | None, network: Network | None,
                 analysis: dict[str, Any] | None = None):
        super().__init__(data, warnings, network)
        self.analysis = None if analysis is None else AnalysisResult(analysis, warnings, network)

    @property
    def feasible(self) -> bool:
        """Whether a configuration was found."""
        return bool(self.data.get("feasible", True))

    @property
    def flows(self) -> list[dict[str, Any]]:
        """The report's rows: virtual links (afdx), streams (tsn), or tasks (partition)."""
        for key in ("vls", "streams", "tasks", "flows"):
            if isinstance(self.data.get(key), list):
                return list(self.data[key])
        return []


class AdmissionResult(Result):
    """An admission (``rtnetlab admit --json``): :attr:`flows` has one row per request's
    decision (``request``, ``accepted``, ``constraint``...); :attr:`summary` the counts, the
    acceptance ratio and the decision times."""

    kind = "admission"

    @property
    def flows(self) -> list[dict[str, Any]]:
        """One row per decision, in arrival order."""
        return list(self.data.get("decisions") or [])

    @property
    def summary(self) -> dict[str, Any]:
        """Accepted, rejected, the acceptance ratio, the mean and largest decision time."""
        from rtnetlab.cloud import admit

        return admit.summary(self.data)
