"""The public face of a network description: `Network`, built in code or read with
`load`, analysed, simulated and configured from Python.

A `Network` holds the description as plain data with the format's own keys (what a YAML
file holds) and, once validated, the engine's handle of it. Building and editing only change the
data; the engine validates it — with the same one-line messages as a file — when it is next
needed (`Network.validate`, `Network.analyze`, ...), and keeps it until the next
edit. A network read from a file is validated as it is read, and its data is fetched from the
engine only when asked for (`Network.to_dict`, an edit).

Every bad input raises `rtnetlab.UserError` (a ``ValueError``; a description that breaks
rules raises its subclass `rtnetlab.ModelError`, one line per problem in ``lines``) with
the message the command line prints.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rtnetlab.errors import UserError
from rtnetlab.quantities import kinds, with_units

if TYPE_CHECKING:
    from rtnetlab import model
    from rtnetlab.lab import TestbedResult
    from rtnetlab.result import (
        AnalysisResult,
        ConfigureResult,
        Explanation,
        SimulationResult,
        WorstCaseResult,
    )
    from rtnetlab.what_if import WhatIf

#: Where a built network's problems are said to be (a file's are its path).
BUILT = "(network)"

#: Sections of the format that are lists of named items.
LISTS = ("classes", "end_systems", "switches", "links", "flows", "processors", "buses", "tasks",
         "messages", "servers", "chains")

Quantity = str | float | int


class Network:
    """A network description, built in code or read from a file.

    Keyword arguments are the format's top-level keys (``description``, ``defaults``,
    ``redundancy``, ...). Quantities are strings with their unit, as in a file (``"100Mbps"``,
    ``"2ms"``, ``"1518B"``), or numbers in SI base units: seconds, bits, bits per second.

    ```pycon
    >>> import rtnetlab as rt
    >>> net = rt.Network("two-hosts", defaults={"link_rate": "100Mbps"})
    >>> _ = net.add_end_system("ES1").add_end_system("ES2").add_switch("SW1")
    >>> _ = net.add_link("ES1", "SW1").add_link("ES2", "SW1")
    >>> _ = net.add_virtual_link("VL1", "ES1", ["ES2"], bag="4ms", lmax="1518B", lmin="64B")
    >>> net.analyze().flows[0]["delay_us"] > 0
    True

    ```
    """

    #: How `rtnetlab.generate_afdx` sized a generated network (None otherwise).
    sizing: dict[str, Any] | None = None
    #: Reads the description when first needed (`read`).
    _reader: Callable[[], dict[str, Any]] | None = None

    def __init__(self, name: str = "network", **keys: Any) -> None:
        self._data: dict[str, Any] | None = {"name": name, **with_units(dict(keys))}
        self._engine: model.Network | None = None
        self._source = BUILT

    # -- reading and writing ------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = BUILT) -> Network:
        """A network from its description as plain data (the format's keys; numbers for
        quantities in SI units). Validated when first used."""
        if not isinstance(data, Mapping):
            raise UserError(f"{source}: expected a mapping of the format's keys, got {type(data).__name__}")
        net = cls.__new__(cls)
        net._data = with_units(copy.deepcopy(dict(data)))
        net._engine = None
        net._source = source
        return net

    @classmethod
    def _of_data(cls, data: dict[str, Any], source: str = BUILT) -> Network:
        """A network of `data` as it is (a file's, or the engine's: its quantities have units)."""
        net = cls.__new__(cls)
        net._data = data
        net._engine = None
        net._source = source
        return net

    @classmethod
    def _of_engine(cls, engine: model.Network) -> Network:
        net = cls.__new__(cls)
        net._data = None
        net._engine = engine
        net._source = engine.source or BUILT
        return net

    @property
    def source(self) -> str:
        """Where the description came from: the file it was read from, or ``(network)``."""
        return self._source

    @property
    def name(self) -> str:
        """The network's name."""
        return str(self.data.get("name", ""))

    @property
    def data(self) -> dict[str, Any]:
        """The description as plain data (the format's keys), the object this network edits.
        Change it in place through the ``add_*``/``set_*`` methods, or call `touch` after
        changing it directly."""
        if self._data is None:
            reader = self._reader
            if reader is not None:
                self._data, self._reader = reader(), None
            else:
                assert self._engine is not None
                self._data = self._engine.spec
        return self._data

    def to_dict(self) -> dict[str, Any]:
        """A copy of the description as plain data, the format's keys (``from_dict`` takes it back)."""
        return copy.deepcopy(self.data)

    def to_yaml(self) -> str:
        """The description as YAML text, as ``rtnetlab convert`` writes it."""
        from rtnetlab.io import formats

        return formats.dumps_yaml(self.data)

    def to_json(self) -> str:
        """The description as JSON text."""
        return json.dumps(self.data, indent=2) + "\n"

    def save(self, path: str | Path) -> Path:
        """Writes the description by the file's extension (.yaml, .yml, .json, or WOPANet .xml,
        which is written from the validated network); whole or not at all. Returns the path."""
        from rtnetlab import model

        p = Path(path)
        if p.suffix.lower() not in (".yaml", ".yml", ".json", ".xml"):
            raise UserError(f"{p}: unknown output type '{p.suffix}', expected .yaml, .yml, .json or .xml")
        if p.suffix.lower() == ".xml":
            self.validate()
        model.write(self.data, p)
        return p

    def copy(self) -> Network:
        """An independent copy (editing one leaves the other as it is)."""
        net = Network._of_data(copy.deepcopy(self.data), self._source)
        net._engine = self._engine
        return net

    # -- building and editing -----------------------------------------------------------------

    def touch(self) -> Network:
        """Marks the description changed (after editing `data` directly): the next use
        validates it again."""
        _ = self.data
        self._engine = None
        return self

    def _section(self, key: str) -> list[Any]:
        items = self.data.setdefault(key, [])
        if not isinstance(items, list):
            raise UserError(f"{self._source}: {key}: must be a list")
        return items

    def add(self, section: str, **keys: Any) -> Network:
        """Appends an item to a list section of the format (``classes``, ``end_systems``,
        ``switches``, ``links``, ``flows``, ``processors``, ``buses``, ``tasks``, ``messages``,
        ``servers``, ``chains``) with the format's keys. Returns the network (calls chain)."""
        if section not in LISTS:
            raise UserError(f"{section}: not a list of the format; expected one of {', '.join(LISTS)}")
        return self._append(section, keys)

    def _append(self, section: str, item: dict[str, Any]) -> Network:
        data = self._data if self._data is not None else self.data
        items = data.get(section)
        if items is None:
            items = data[section] = []
        elif not isinstance(items, list):
            raise UserError(f"{self._source}: {section}: must be a list")
        items.append(_units_of(item))
        self._engine = None
        return self

    def add_class(self, name: str, priority: int | None = None, **keys: Any) -> Network:
        """A traffic class (``priority``: 0 is served first by static priority; or ``pcp``)."""
        if priority is not None:
            keys["priority"] = priority
        return self._append("classes", {"name": name, **keys})

    def add_end_system(self, name: str, **keys: Any) -> Network:
        """An end system (``scheduler``, ``buffer``, ``technological_latency``, ``receive_latency``)."""
        return self._append("end_systems", {"name": name, **keys})

    def add_switch(self, name: str, plane: str | None = None, **keys: Any) -> Network:
        """A switch of one plane (``technological_latency``, ``switching``, ``scheduler``,
        ``buffer``, ``ports: {name: {scheduler, buffer}}``)."""
        if plane is not None:
            keys["plane"] = plane
        return self._append("switches", {"name": name, **keys})

    def add_link(self, a: str, b: str, rate: Quantity | None = None, **keys: Any) -> Network:
        """A full-duplex link between nodes `a` and `b` (the format's ``from`` and ``to``;
        ``from_port``, ``to_port``, ``propagation_delay``, ``plane``)."""
        if rate is not None:
            keys["rate"] = rate
        return self._append("links", {"from": a, "to": b, **keys})

    def add_flow(self, name: str, source: str, destinations: Iterable[Any], type: str = "virtual_link",
                 **keys: Any) -> Network:
        """A flow of any type of the format (``virtual_link``, ``periodic``, ``token_bucket``)
        from `source` to `destinations` (names, or ``{node, path}`` / ``{node, paths}``), with its
        type's keys and the common ones (``class``, ``deadline``, ``planes``)."""
        return self._append("flows", {"name": name, "type": type, "source": source,
                                      "destinations": list(destinations), **keys})

    def add_virtual_link(self, name: str, source: str, destinations: Iterable[Any], bag: Quantity,
                         lmax: Quantity, lmin: Quantity, **keys: Any) -> Network:
        """An AFDX virtual link: `bag` (2^k ms), `lmax` and `lmin` (Ethernet frame sizes, 64 to
        1518 B), and ``id``, ``class``, ``deadline``, ``release_jitter``, ``messages``..."""
        item = {"name": name, "type": "virtual_link", "source": source, "destinations": list(destinations),
                "bag": bag, "lmax": lmax, "lmin": lmin}
        item.update(keys)
        return self._append("flows", item)

    def add_scheduler(self, name: str, kind: str, **params: Any) -> Network:
        """A named egress scheduler configuration (``kind``: ``wrr``, ``drr``, ``d2drr``, ``wf2q``,
        ``scfq``, ``table``, ``token_bucket``, ``cbs``, ``tas``, ``ats``) with its parameters;
        ports, nodes or ``defaults`` name it in their ``scheduler``."""
        named = self.data.setdefault("schedulers", {})
        if not isinstance(named, dict):
            raise UserError(f"{self._source}: schedulers: must be a mapping")
        named[name] = with_units({"kind": kind, **params})
        return self.touch()

    def set_defaults(self, **keys: Any) -> Network:
        """Sets keys of ``defaults`` (``link_rate``, ``technological_latency``, ``scheduler``...)."""
        self.data.setdefault("defaults", {}).update(with_units(keys))
        return self.touch()

    def set_redundancy(self, planes: list[str], **keys: Any) -> Network:
        """Redundant planes (``["A", "B"]``) and ``sending_skew``, ``skew_max``."""
        self.data["redundancy"] = with_units({"planes": list(planes), **keys})
        return self.touch()

    def _named(self, section: str, name: str) -> dict[str, Any]:
        for item in self.data.get(section, []) or []:
            if isinstance(item, dict) and item.get("name") == name:
                return item
        raise UserError(f"{self._source}: {section}: no item named '{name}'")

    def flow(self, name: str) -> dict[str, Any]:
        """Flow `name`'s entry in the description (the object itself: edit it with `set_flow`)."""
        return self._named("flows", name)

    def set_flow(self, name: str, **keys: Any) -> Network:
        """Changes keys of flow `name` (``bag``, ``lmax``, ``deadline``, ...): a what-if edit."""
        self.flow(name).update(with_units(keys))
        return self.touch()

    def set_node(self, name: str, **keys: Any) -> Network:
        """Changes keys of end system or switch `name` (``scheduler``, ``technological_latency``...)."""
        for section in ("end_systems", "switches"):
            for item in self.data.get(section, []) or []:
                if isinstance(item, dict) and item.get("name") == name:
                    item.update(with_units(keys))
                    return self.touch()
        raise UserError(f"{self._source}: no end system or switch named '{name}'")

    def set_link(self, a: str, b: str, **keys: Any) -> Network:
        """Changes keys of the link between `a` and `b` (either way round): ``rate``, ..."""
        for item in self.data.get("links", []) or []:
            if isinstance(item, dict) and {item.get("from"), item.get("to")} == {a, b}:
                item.update(with_units(keys))
                return self.touch()
        raise UserError(f"{self._source}: links: no link between '{a}' and '{b}'")

    def set_port_rate(self, node: str, rate: Quantity, port: str | None = None) -> Network:
        """The rate of `node`'s links (or of the one on `port`): both directions of a link run at
        one rate in the format, so this sets the link's ``rate``."""
        found = False
        for item in self.data.get("links", []) or []:
            if not isinstance(item, dict):
                continue
            for end, end_port in (("from", "from_port"), ("to", "to_port")):
                if item.get(end) == node and (port is None or str(item.get(end_port)) == port):
                    item["rate"] = with_units(rate, "rate")
                    found = True
        if not found:
            where = f"'{node}'" + (f" port '{port}'" if port is not None else "")
            raise UserError(f"{self._source}: links: no link at {where}")
        return self.touch()

    def set_scheduler(self, name: str, **params: Any) -> Network:
        """Changes parameters of named scheduler `name`; a mapping parameter (``weights``,
        ``quanta``, ``factors``, ``idle_slopes``) is updated key by key, so
        ``set_scheduler("drr1", quanta={"video": "3000B"})`` changes one class's quantum."""
        named = self.data.get("schedulers") or {}
        if name not in named:
            raise UserError(f"{self._source}: schedulers: no scheduler named '{name}'")
        config = named[name]
        for key, value in with_units(params).items():
            if isinstance(value, dict) and isinstance(config.get(key), dict):
                config[key].update(value)
            else:
                config[key] = value
        return self.touch()

    def remove(self, section: str, name: str) -> Network:
        """Removes item `name` from a list section (``flows``, ``end_systems``...)."""
        items = self._section(section)
        kept = [i for i in items if not (isinstance(i, dict) and i.get("name") == name)]
        if len(kept) == len(items):
            raise UserError(f"{self._source}: {section}: no item named '{name}'")
        items[:] = kept
        return self.touch()

    # -- the engine ---------------------------------------------------------------------------

    @property
    def engine(self) -> model.Network:
        """The engine's validated network (validated now if the description changed); raises
        `rtnetlab.ModelError` with one line per problem."""
        if self._engine is None:
            from rtnetlab import model

            try:
                import orjson

                # A few times faster than json for a large network; a NaN becomes null, which the
                # engine then refuses at its place (json's message names no place).
                text = orjson.dumps(self.data).decode()
            except (TypeError, ValueError):
                self._engine = model.load_data(self.data, self._source)  # json's one-line refusal
            else:
                self._engine = model.load_text(text, self._source)
        return self._engine

    def validate(self) -> list[str]:
        """Validates the description (the checks of ``rtnetlab validate``); returns its warnings,
        raises `rtnetlab.ModelError` on problems."""
        return list(self.engine.warnings)

    @property
    def warnings(self) -> list[str]:
        """The warnings of the last validation (validating now if needed)."""
        return list(self.engine.warnings)

    def info(self) -> dict[str, Any]:
        """What ``rtnetlab info --json`` prints: counts, and the load of every egress port and link."""
        return self.engine.info()

    def resolved(self) -> dict[str, Any]:
        """The resolved model: nodes, ports, links and flows by index, every route's ports."""
        return self.engine.resolved()

    def analyze(self, method: str = "best", *, grouping: bool = False, blind: bool = False,
                arrival_bounds: str = "tightest", lp_effort: str = "default") -> AnalysisResult:
        """Worst-case delay, jitter and backlog bounds (``rtnetlab analyze``).

        `method`: ``best`` (per flow the tightest of the analyses), ``tfa``, ``sfa``, ``sfa-iter``,
        ``pmoo``, ``fifo-lp``, ``afdx-naive`` or ``sink-tree-backlog``; `grouping` serialises
        flows that share an input link; `blind` is blind multiplexing instead of FIFO;
        `arrival_bounds` (server graphs): ``tightest``, ``pboo`` or ``pmoo``; `lp_effort`
        (fifo-lp): ``fast``, ``default`` or ``exhaustive``."""
        from rtnetlab.result import AnalysisResult

        engine = self.engine
        report = engine.analyze(method, grouping, blind, arrival_bounds, lp_effort)
        return AnalysisResult(report, engine.warnings, self)

    def what_if(self, method: str = "tfa") -> WhatIf:
        """A what-if on this network (`rtnetlab.WhatIf`): edit a flow's BAG, a port's rate or a
        scheduler's weights one at a time, each validated on what it changes, and analyse again
        only the ports the edit reaches. `method`: ``tfa``, the one analysis kept up to date in
        place (``best``, `analyze`'s default, combines analyses that have none)."""
        from rtnetlab import what_if

        return what_if.what_if(self, method)

    def analysis_json(self, method: str = "best", *, grouping: bool = False, blind: bool = False,
                      arrival_bounds: str = "tightest", lp_effort: str = "default",
                      indent: bool = True) -> str:
        """The analysis as ``rtnetlab analyze --json`` prints it (the report, then the warnings),
        written by the engine: the fastest way to the whole report as text."""
        return self.engine.analysis_document(method, grouping, blind, indent=indent,
                                             arrival_bounds=arrival_bounds, lp_effort=lp_effort)

    def analysis_table(self, rows: int | None = None, method: str = "best", *, grouping: bool = False,
                       blind: bool = False, arrival_bounds: str = "tightest",
                       lp_effort: str = "default") -> dict[str, Any]:
        """The analysis as ``rtnetlab analyze`` shows it: the report with the first `rows` flow,
        loaded-port and redundancy rows (all when None), most critical first, with ``counts``,
        ``failures`` and ``unbounded_ports``. Only those rows leave the engine."""
        return self.engine.analysis_tables(method, grouping, blind, rows, arrival_bounds=arrival_bounds,
                                           lp_effort=lp_effort)

    def explain(self, flow: str, method: str = "best", *, grouping: bool = False, blind: bool = False,
                arrival_bounds: str = "tightest", lp_effort: str = "default") -> Explanation:
        """Where `flow`'s bound comes from under `method`, route by route and hop by hop
        (``rtnetlab analyze --explain FLOW``)."""
        from rtnetlab.result import Explanation

        engine = self.engine
        return Explanation(engine.explain(method, grouping, blind, flow, arrival_bounds, lp_effort),
                           engine.warnings)

    def simulate(self, duration: Quantity = "1s", seed: int = 1, *, release: str = "random",
                 sizes: str = "uniform", size_trace: list[int] | None = None, workload: str = "periodic",
                 load: float | None = None, retransmit: bool = False,
                 retransmit_timeout: Quantity | None = None, dedup: str | None = None,
                 dedup_counters: int = 1280, bounds: bool = True, trace: str | Path | None = None,
                 trace_limit: int | None = None, histograms: str | Path | None = None,
                 memory_limit: Quantity | None = None, scenario: str | None = None,
                 progress: bool = False) -> SimulationResult:
        """Simulates the network packet by packet (``rtnetlab simulate``): per (flow,
        destination, plane) the latencies (min, mean, percentiles, max) beside the ``best``
        bound (`bounds`), per port the backlog and drops.

        `duration` (``"1s"`` or seconds), `seed`; `release`: ``random`` or ``synchronized``;
        `sizes`: ``uniform``, ``max``, ``min`` or ``trace`` (`size_trace`: frame sizes in
        bytes); `workload`: ``periodic``, ``cbr``, ``poisson`` or ``pareto`` at `load` times the
        contract; `dedup`: ``first_copy`` or ``hold_until_twin`` (Bloom filter of
        `dedup_counters` counters); `trace`: a pcapng file; `histograms`: a CSV file of latency
        histograms; `scenario`: a worst-case scenario to replay (``FILE#ID``). Ctrl-C stops the
        run early and still returns what was measured (``interrupted`` in the result)."""
        from rtnetlab import simulate as sim_mod
        from rtnetlab.result import SimulationResult

        report, simulated = sim_mod.simulate(
            self.engine, duration=duration, seed=seed, release=release, sizes=sizes,
            size_trace=size_trace, workload=workload, load=load, retransmit=retransmit,
            retransmit_timeout=retransmit_timeout, dedup=dedup, dedup_counters=dedup_counters,
            bounds=bounds, trace=None if trace is None else Path(trace),
            trace_limit=trace_limit, histograms=None if histograms is None else Path(histograms),
            memory_limit=memory_limit, scenario=scenario, progress=progress)
        result = SimulationResult(report, report.get("warnings", []), self)
        result.network_warnings = list(simulated.warnings)
        return result

    def worst_case(self, budget: Quantity = "60s", *, evaluations: int | None = None,
                   flows: list[str] | None = None, seed: int = 1, workers: int | None = None,
                   output: str | Path | None = None) -> WorstCaseResult:
        """Searches the worst case of every flow (``rtnetlab worst-case``): the largest delay a
        replayed simulation realises beside its bound, and the scenario that realises it, within
        `budget` (wall-clock) or `evaluations` simulations (the result then depends on `seed`
        alone). `output`: write the rows and scenarios (JSON) for ``simulate(scenario=...)``."""
        from rtnetlab import worst_case
        from rtnetlab.result import WorstCaseResult

        report = worst_case.search(self.engine, budget=budget, evaluations=evaluations, flows=flows,
                                   seed=seed, workers=workers,
                                   output=None if output is None else Path(output))
        return WorstCaseResult(report, report.get("warnings", []), self)

    # -- synthesis ----------------------------------------------------------------------------

    def _configured(self, report: dict[str, Any], configured: dict[str, Any] | None,
                    analysis: dict[str, Any] | None = None,
                    **extra: Any) -> ConfigureResult:
        from rtnetlab.result import ConfigureResult

        net = None if configured is None else Network._of_data(configured, self._source)
        # The description before synthesis need not be valid (a VL without its BAG yet).
        warnings = list(self._engine.warnings) if self._engine is not None else []
        return ConfigureResult(report, warnings, net, analysis, **extra)

    def configure_afdx(self, objective: str = "first-feasible", jitter_at: str = "all",
                       deadlines: bool = True) -> ConfigureResult:
        """BAG and MTU of every virtual link that lists its ``messages`` (seed 001D,
        ``rtnetlab configure afdx``); ``.network`` is the configured network (None when
        infeasible). `objective`: ``first-feasible``, ``min-bandwidth`` or ``bag-order``;
        `jitter_at`: ``all``, ``sources`` or ``none``; `deadlines`: every deadline met (best)."""
        from rtnetlab import configure

        report, configured = configure.afdx(self, objective, jitter_at, deadlines, source=self._source)
        return self._configured(report, configured)

    def configure_priorities(self, method: str = "opa") -> ConfigureResult:
        """A priority order per processor and bus (``opa``: Audsley's optimal assignment, or
        ``dm``: deadline monotonic), ``rtnetlab configure priorities``; ``.analysis`` is the
        configured network's response-time analysis."""
        from rtnetlab import configure

        report, configured, analysis = configure.priorities(self, method, source=self._source)
        return self._configured(report, configured, analysis)

    def configure_partition(self, method: str = "opa") -> ConfigureResult:
        """Tasks of chains placed on processors, with priorities (DOPA, seed 001E,
        ``rtnetlab configure partition``)."""
        from rtnetlab import configure

        report, configured, analysis = configure.partition(self, method, source=self._source)
        return self._configured(report, configured, analysis)

    def configure_tsn(self, objective: str = "bandwidth", time_limit: float = 60.0, solver: str = "auto",
                      exact_limit: int = 5000, *, max_wait: float | str | None = None) -> ConfigureResult:
        """Gate control lists, stream offsets and ``auto`` idle slopes (``rtnetlab configure
        tsn``). `objective`: ``bandwidth``, ``slack`` or ``cycle``; `solver`: ``auto``,
        ``exact`` or ``heuristic``. `max_wait` (seconds or a duration such as ``"20us"``):
        bounded-wait, each scheduled frame may wait at most that long in all at the gates of its
        route (``--max-wait``); None: no-wait."""
        from rtnetlab import configure

        report, configured = configure.tsn(self, objective, time_limit, solver, exact_limit,
                                           source=self._source, max_wait=max_wait)
        return self._configured(report, configured)

    # -- real hosts ---------------------------------------------------------------------------

    def testbed_plan(self) -> dict[str, Any]:
        """What the testbed makes of the description (``rtnetlab testbed``, ``rtnetlab export
        tc``): its nodes, ports, planes and flows as the testbed's program resolves them, every
        rate and time in integers (bits per second, nanoseconds). Validates first."""
        import tempfile

        from rtnetlab.testbed import run as tb

        self.validate()
        with tempfile.TemporaryDirectory(prefix="rtnetlab-export-") as tmp:
            desc = Path(tmp) / "description.json"
            desc.write_text(json.dumps(self.data))
            plan: dict[str, Any] = tb.plan_of(desc)
        return plan

    def run_testbed(self, duration: Quantity = "10s", *, switch: str = "kernel", baseline: Quantity = "1s",
                    seed: int = 1, sizes: str = "max", release: str = "random",
                    capture: str | Path | None = None, keep: bool = False, simulate: bool = True,
                    rt_priority: int = 50, mute: list[str] | None = None, time_scale: float = 1.0,
                    disturbance: Quantity = "100us", calibrate: bool = False,
                    output: str | Path | None = None,
                    say: Callable[[str], None] | None = None, add_modelled: bool = False) -> TestbedResult:
        """Runs the network on real frames in Linux network namespaces (``rtnetlab testbed
        run``; needs root): veth pairs, rate-limited ports, the model's paths; an idle
        `baseline` first measures the host's noise; measured beside bound and simulated.

        `duration` (wall clock) and `baseline` within the ``duration`` limit; `switch`:
        ``kernel`` (qdiscs and tc filters) or ``user`` (the user-space switch running the
        engine's schedulers); `sizes`: ``max``, ``min`` or ``uniform``; `release`: ``random`` or
        ``synchronized``; `capture`: a directory for one pcapng per egress port; `keep`: leave
        the namespaces up (`rtnetlab.testbed_down` removes them); `simulate`: simulate the same
        settings beside; `rt_priority`: SCHED_FIFO priority of the nodes (0: the default
        scheduler); `mute`: flows not to send; `time_scale`: run K times slower and report in
        model time; `disturbance`: a frame whose senders were later than this, or that a stall
        this long overlapped, is disturbed by the host; `calibrate`: measure what this host
        can pace again; `output`: write the JSON report there (checked before the run); `say`:
        called with each progress line; `add_modelled`: in kernel mode, add the switches'
        technological latency, which its switches cannot hold a frame for, to each figure from the
        model (the report's ``latency_basis`` says so); without it such a model is refused.

        Every input is checked before anything is created; what the run creates (namespaces,
        processes, folders) is recorded as its own and removed on every way out, an exception
        or Ctrl-C too. Ctrl-C stops the run early and still returns what the nodes measured
        (`TestbedResult.interrupted`)."""
        from rtnetlab import lab

        return lab.run_testbed(
            self, duration, switch=switch, baseline=baseline, seed=seed, sizes=sizes, release=release,
            capture=capture, keep=keep, simulate=simulate, rt_priority=rt_priority, mute=mute,
            time_scale=time_scale, disturbance=disturbance, calibrate=calibrate, output=output,
            inputs=[Path(self._source)] if self._source != BUILT else [], say=say, add_modelled=add_modelled)

    def testbed_up(self, switch: str = "kernel") -> dict[str, Any]:
        """Sets the network up on the testbed (``rtnetlab testbed up``; needs root): namespaces,
        links, kernel ports and switches, left for inspection. Returns ``run`` (its name, for
        `rtnetlab.testbed_down`), ``namespaces`` (node -> namespace) and ``warnings``."""
        from rtnetlab import lab

        return lab.testbed_up(self, switch)

    def export_tc(self, node: str, dev: str, plane: str | None = None) -> tuple[str, list[str]]:
        """A shell script configuring end system `node`'s port on `plane` (the first plane by
        default) as interface `dev` of a real Linux host (``rtnetlab export tc``): an HTB class
        per virtual link at its BAG/Lmax rate and burst, filters by VL id, the port's scheduler
        where Linux has it. Returns the script and what it cannot express, one line each.

        The script is meant to be run by root: `dev` is checked by the kernel's rule for
        interface names before anything else, and every value from the description is written
        as an escaped comment."""
        from rtnetlab.testbed import tc

        _check_dev(dev)
        plan = self.testbed_plan()
        if plane is not None and plane not in plan["planes"]:
            raise UserError(f"--plane: no plane {plane} (planes: {', '.join(plan['planes'])})")
        try:
            return tc.export_script(plan, node, dev, plane, self._source)
        except KeyError:
            raise UserError(f"--node: no node named {tc.comment(node)}") from None
        except ValueError as e:
            raise UserError(f"--node: {e}") from None

    def export_taprio(self, node: str, dev: str, port: str | None = None,
                      offload: str = "none") -> tuple[str, list[str]]:
        """A shell script configuring a real Linux port's time-aware and credit-based shapers
        (taprio, cbs and etf qdiscs; ``rtnetlab export taprio``) for `node`'s `port` (its only
        one by default) on interface `dev`; `offload`: ``none``, ``txtime`` or ``full``.
        Returns the script and what it cannot express, one line each."""
        from rtnetlab.testbed import taprio, tc

        taprio.check_options(dev, offload)
        try:
            return taprio.export_script(self.resolved(), node, port, dev, offload, self._source)
        except KeyError:
            raise UserError(f"--node: no node named {tc.comment(node)}") from None
        except ValueError as e:
            raise UserError(f"--node: {e}") from None

    def gate_control_yang(self, node: str | None = None) -> dict[str, Any]:
        """The gate control lists (of `node`'s ports, or of every port) as an IEEE 802.1Qcw YANG
        instance, RFC 7951 JSON as plain data (``rtnetlab export yang``)."""
        from rtnetlab.testbed import taprio, tc

        # The description's own errors name their place already.
        resolved = self.resolved()
        try:
            doc: dict[str, Any] = taprio.yang_instance(resolved, node)
        except KeyError:
            raise UserError(f"--node: no node named {tc.comment(node or '')}") from None
        except ValueError as e:
            raise UserError(f"{self._source}: {tc.comment(str(e))}") from None
        if not doc[f"{taprio.IF}:interfaces"]["interface"]:
            where = "" if node is None else " at " + node
            raise UserError(f"{self._source}: no port runs a gate control list{where}")
        return doc

    # -- display ------------------------------------------------------------------------------

    def topology_svg(self) -> str:
        """The topology as SVG (the report's drawing: planes in rows, end systems between)."""
        from rtnetlab import display

        return display.topology_svg(self)

    def _repr_svg_(self) -> str | None:
        try:
            engine = self.engine
        except UserError:
            return None
        if engine.info().get("kind") == "server_graph" or not self.data.get("links"):
            return None
        return self.topology_svg()

    def __repr__(self) -> str:
        d = self._data
        if d is None:
            c = self.info()["counts"]
            counts = f"{c['end_systems']} end systems, {c['switches']} switches, {c['flows']} flows"
        else:
            counts = (f"{len(d.get('end_systems') or [])} end systems, {len(d.get('switches') or [])} "
                      f"switches, {len(d.get('flows') or [])} flows")
        return f"<rtnetlab.Network {self.name!r}: {counts}>"


def _units_of(item: dict[str, Any]) -> dict[str, Any]:
    """`item` with its quantities given as numbers written with their units: a fast look first,
    as an item built in code is mostly text (names, quantities with their units)."""
    quantity_keys = None
    for k, v in item.items():
        t = type(v)
        if t is str or (t is list and all(type(x) is str for x in v)):
            continue
        if t is int or t is float:
            if quantity_keys is None:
                quantity_keys = kinds()
            if k not in quantity_keys:
                continue
        return with_units(item)  # type: ignore[no-any-return,unused-ignore]
    return item


def _check_dev(dev: str) -> None:
    """Refuses `dev` unless it is a Linux network interface name (a script root runs quotes it)."""
    from rtnetlab.testbed import tc

    problem = tc.interface_problem(dev)
    if problem is not None:
        raise UserError(f"--dev: '{tc.comment(dev)}' is not a network interface name ({problem})")


def load(path: str | Path) -> Network:
    """Reads and validates a description file: YAML (.yaml, .yml), JSON, WOPANet XML (.xml) or a
    DNC server graph (.java), every format the command line reads. Raises
    `rtnetlab.ModelError` (one line per problem) or `rtnetlab.UserError`."""
    from rtnetlab import model

    return Network._of_engine(model.load_file(Path(path)))


def read(path: str | Path) -> Network:
    """The description in a file as written there (its keys and their order), not validated
    yet: what ``configure`` edits and writes back. `load` validates as it reads."""
    from rtnetlab.io import formats

    p = Path(path)
    net = Network._of_data(None, str(p))  # type: ignore[arg-type]
    # Read when first needed: a command checks its options before it reads its file.
    net._reader = lambda: dict(formats.read(p))
    return net


def schema() -> dict[str, Any]:
    """The JSON Schema of the description format (generated from the engine's model)."""
    from rtnetlab import model

    return model.schema()
