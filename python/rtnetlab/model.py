"""Loading a network description into the engine, and the one door to its handle.

YAML and JSON files go to the engine as text, which it parses within the limits in force
(`formats.limits()`), validates and resolves; WOPANet XML is read here into plain data first. The
model itself is defined once, in Rust.

Only this module calls the engine's `Network` handle (`rtnetlab._core`, typed in `_core.pyi`):
the rest of the front asks `Network`'s methods, which take and return plain data. Writing a
description is here too (`write`): WOPANet XML is written from the validated, resolved network,
so `rtnetlab.io` never needs the model (io.formats -> io.wopanet, and the model above both).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtnetlab import _core
from rtnetlab.errors import AnalysisError, ModelError, UserError
from rtnetlab.io import formats
from rtnetlab.io.jsontext import loads

#: A name given for an option is none of its choices (the engine lists them; the caller names the
#: option).
ChoiceError = _core.ChoiceError


def _option_of(message: str) -> str | None:
    """The option an engine error about an unknown choice is about, if it is one."""
    if message.startswith("unknown analysis method"):
        return "--method"
    if message.startswith("unknown arrival bounding"):
        return "--arrival-bounds"
    if message.startswith("unknown fifo-lp effort"):
        return "--lp-effort"
    return None


def _as_user_error(e: ValueError) -> type[UserError]:
    """The class of the UserError that says `e` again with its place: the engine's own when it
    is one (AnalysisError), else UserError."""
    return AnalysisError if isinstance(e, AnalysisError) else UserError


@dataclass
class Network:
    """A validated network: the engine's handle plus the warnings found while validating."""

    handle: Any
    warnings: list[str] = field(default_factory=list)
    source: str = ""
    #: The warnings as the engine gave them, placed at the description's keys, when `warnings`
    #: places them elsewhere (a WOPANet file's lines, after its import's own warnings).
    engine_warnings: list[str] | None = None
    #: The warnings of reading the file into a description (a WOPANet import's choices).
    read_warnings: list[str] = field(default_factory=list)

    @property
    def spec(self) -> dict:
        return loads(self.handle.spec_json())

    def info(self) -> dict:
        return loads(self.handle.info_json())

    def analyze(self, method: str = "best", grouping: bool = False, blind: bool = False,
                arrival_bounds: str = "tightest", lp_effort: str = "default") -> dict:
        """Worst-case bounds per (flow, destination, plane) and per egress port; on a server
        graph, cross traffic bounded as `arrival_bounds` says (tightest, pboo or pmoo); fifo-lp
        (alone or in best) at `lp_effort` (fast, default or exhaustive)."""
        return loads(self._analysis(self.handle.analyze_json, method, grouping, blind,
                                    arrival_bounds=arrival_bounds, lp_effort=lp_effort))

    def analysis_document(
        self, method: str = "best", grouping: bool = False, blind: bool = False, indent: bool = True,
        arrival_bounds: str = "tightest", lp_effort: str = "default",
    ) -> str:
        """`analyze --json`'s document as JSON text, written by the engine: the report's fields,
        then this network's warnings (equal, as JSON, to ``{**analyze(...), "warnings": ...}``)."""
        return self._analysis(self.handle.analyze_document_json, method, grouping, blind,
                              warnings=self.warnings, indent=indent, arrival_bounds=arrival_bounds,
                              lp_effort=lp_effort)

    def analysis_tables(
        self, method: str = "best", grouping: bool = False, blind: bool = False, limit: int | None = None,
        arrival_bounds: str = "tightest", lp_effort: str = "default",
    ) -> dict:
        """What `analyze`'s terminal tables show: the report with only the first `limit` rows of
        its flow, port (loaded ports) and redundancy tables, most critical first, plus
        ``counts`` of every row, the deadline ``failures`` of the flows and the
        ``unbounded_ports``; a 5000-VL report's 18,000 rows stay in the engine."""
        text = self._analysis(self.handle.analyze_table_json, method, grouping, blind, limit=limit,
                              arrival_bounds=arrival_bounds, lp_effort=lp_effort)
        return loads(text)

    def _analysis(self, call: Any, method: str, grouping: bool, blind: bool, **options: Any) -> str:
        try:
            # fifo-lp's linear programs (and best's, on server graphs) are solved by HiGHS.
            from rtnetlab.analysis.lp import solver

            return call(method, grouping, blind, solver(), **options)
        except ValueError as e:
            # An unknown choice is an option error; a method that does not fit is the network's.
            where = _option_of(str(e)) or self.source or "network"
            raise _as_user_error(e)(f"{where}: {e}") from None

    def explain(self, method: str, grouping: bool, blind: bool, flow: str,
                arrival_bounds: str = "tightest", lp_effort: str = "default") -> dict:
        """Where `flow`'s bounds come from under the analysis asked for: per route, hop by hop."""
        try:
            from rtnetlab.analysis.lp import solver

            return loads(self.handle.explain_json(method, grouping, blind, flow, solver(),
                                                  arrival_bounds=arrival_bounds, lp_effort=lp_effort))
        except ValueError as e:
            where = _option_of(str(e)) or "--explain"
            raise _as_user_error(e)(f"{where}: {e}") from None

    def resolved(self) -> dict:
        return loads(self.handle.resolved_json())

    def what_if(self, data: dict) -> WhatIf:
        """A what-if on this network, `data` its description (`WhatIf`); ModelError when the
        network's topology or TFA cannot take it."""
        try:
            engine = self.warnings if self.engine_warnings is None else self.engine_warnings
            handle = self.handle.what_if(json.dumps(data), list(engine))
            return WhatIf(handle, self.source, self.read_warnings)
        except ModelError:
            raise
        except ValueError as e:
            raise UserError(f"{self.source or 'network'}: {e}") from None

    def simulation(self, config: dict) -> Any:
        """A simulation of this network (`config`: the engine's SimConfig), the engine's running
        handle advanced slice by slice by `rtnetlab.simulate`; ValueError if `config` is wrong."""
        return self.handle.simulation(json.dumps(config))

    def simulate_buses(self, config: dict) -> dict:
        """The CAN buses simulated (`config`: the engine's BusSimConfig); ValueError if wrong."""
        return loads(self.handle.simulate_buses_json(json.dumps(config)))

    def worst_case(
        self, seconds: float | None, evaluations: int | None, seed: int, workers: int, flows: list[str]
    ) -> dict:
        """The worst-case search's report (a budget in seconds or in simulations)."""
        return loads(self.handle.worst_case_json(seconds, evaluations, seed, workers, flows))

    def check_scenario(self, scenario: dict) -> None:
        """ValueError (place and rule) when a worst-case scenario does not fit this network."""
        self.handle.check_scenario(json.dumps(scenario))

    def assign_priorities(self, method: str) -> dict:
        """Priority orders per processor and bus (`method`: opa or dm; ChoiceError otherwise)."""
        return loads(self.handle.assign_priorities_json(method))

    def partition(self, method: str) -> dict:
        """DOPA on the description's chains (`method`: opa or dm; ChoiceError otherwise)."""
        return loads(self.handle.partition_json(method))


class WhatIf:
    """The engine's what-if on a validated network (`Network.what_if`): edits as plain data in,
    TFA's report out; a refused edit raises `ModelError` (its lines: place and rule) and leaves
    the network as it was."""

    def __init__(self, handle: Any, source: str = "", read_warnings: list[str] | None = None) -> None:
        self.handle = handle
        self.source = source
        self.read_warnings = list(read_warnings or [])

    @property
    def warnings(self) -> list[str]:
        """The file's reading warnings, then the validation warnings of the network as edited
        (placed at the description's keys)."""
        return self.read_warnings + [w for w in self.handle.warnings() if w not in self.read_warnings]

    def _edit(self, call: Any, *args: Any) -> None:
        try:
            call(*args)
        except ModelError:
            raise
        except ValueError as e:
            raise UserError(f"{self.source or 'network'}: {e}") from None

    def set_flow(self, name: str, keys: dict) -> None:
        self._edit(self.handle.set_flow, name, json.dumps(keys))

    def set_port_rate(self, node: str, rate: Any, port: str | None) -> None:
        self._edit(self.handle.set_port_rate, node, json.dumps(rate), port)

    def set_scheduler(self, name: str, params: dict) -> None:
        self._edit(self.handle.set_scheduler, name, json.dumps(params))

    def analyze(self) -> dict:
        try:
            return loads(self.handle.analyze_json())
        except ValueError as e:
            raise _as_user_error(e)(f"{self.source or 'network'}: {e}") from None

    @property
    def spec(self) -> dict:
        return loads(self.handle.spec_json())


def _format(d: dict) -> str:
    prefix = "warning: " if d["severity"] == "warning" else ""
    return f"{prefix}{d['place']}: {d['message']}"


def load_data(data: Any, source: str = "") -> Network:
    """Validates a description given as plain data (dicts and lists)."""
    try:
        text = json.dumps(data, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        raise UserError(f"{source or 'input'}: cannot be represented as JSON: {e}") from None
    return load_text(text, source)


def load_text(json_text: str, source: str = "") -> Network:
    """Validates a description given as JSON text."""
    return _load(json_text, "json", source)


def _load(text: str, fmt: str, source: str) -> Network:
    """Validates a description's text (`fmt`: yaml or json) in the engine, within the limits in force."""
    handle, diags_json = _core.load_text(text, fmt, source or "(file)", formats.limits())
    diags = loads(diags_json)
    errors = [_format(d) for d in diags if d["severity"] == "error"]
    warnings = [_format(d) for d in diags if d["severity"] == "warning"]
    if handle is None:
        raise ModelError(errors or ["(model): invalid description"], warnings)
    return Network(handle, warnings, source)


def load_file(path: str | Path) -> Network:
    """Reads and validates a description file (.yaml, .yml, .json or WOPANet .xml).

    YAML and JSON go to the engine as text: parsed, checked and resolved there, without a round
    trip through Python objects.
    """
    p = Path(path)
    if formats.native_format(p) is None:
        data = formats.read(p, located=True)
        # A WOPANet file's places are its lines; its import warns where the file leaves a choice.
        locate = getattr(data, "locate", None)
        read_warnings = list(getattr(data, "warnings", []))
        try:
            net = load_data(data, str(p))
        except ModelError as e:
            if locate is None:
                raise
            raise ModelError([locate(line) for line in e.lines],
                             read_warnings + [locate(line) for line in e.warnings]) from None
        if locate is not None:
            net.engine_warnings, net.read_warnings = net.warnings, read_warnings
            net.warnings = read_warnings + [locate(line) for line in net.warnings]
        return net
    text, fmt = formats.read_native(p)
    return _load(text, fmt, str(p))


def write(data: Any, path: Path) -> None:
    """Writes a description (plain data) by its extension, whole or not at all. WOPANet XML is
    written from the validated network (it refuses what WOPANet cannot express); YAML and JSON as
    given."""
    if path.suffix.lower() in formats.WOPANET:
        from rtnetlab.io import wopanet

        net = load_data(data, str(data.get("name", "")) if isinstance(data, dict) else "")
        formats.atomic_write(path, wopanet.dumps(net))
        return
    formats.write(data, path)


def schema() -> dict:
    """The JSON Schema of the description format (generated from the engine's model)."""
    return loads(_core.schema_json())
