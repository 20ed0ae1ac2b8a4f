"""Type stubs of the compiled engine binding (crates/py/src/: one module per domain).

Every function and class the binding exposes is listed here with its types and a one-line
description; tests/test_core_stub.py fails when the binding and this file differ, so a new
binding function gets its stub in the same change. Results are JSON text unless said otherwise;
only ``rtnetlab.model`` uses the ``Network`` handle and the loading functions (the rest of the
front goes through it).

Errors (crates/py/src/error.rs, the one bridge) are ``ValueError``s: ``ChoiceError`` for an
unknown choice, and the classes of ``rtnetlab.errors``: ``ModelError`` for an input that breaks
a rule (``place: rule``, one line each), ``LimitError`` for a limit passed or a wrong setting of
the limits, ``AnalysisError`` for an analysis that cannot run as asked; any other refusal is a
plain ``ValueError``.
"""

from collections.abc import Callable
from os import PathLike

__version__: str

# The engine's constants (rtnetlab_core::constants), read by the front rather than retyped.
#: Preamble, start frame delimiter and inter-frame gap: a frame's bytes on the wire beyond itself.
INTERFRAME_BYTES: int
#: The shortest and the longest (untagged) Ethernet frame, header and FCS included, bytes.
ETHERNET_MIN_FRAME_BYTES: int
ETHERNET_MAX_FRAME_BYTES: int
#: An AFDX frame's bytes beyond its payload: Ethernet, IP and UDP headers, sequence number, FCS.
AFDX_FRAME_HEADERS_BYTES: int
#: An AFDX frame's cost on the wire beyond its payload: its headers and the interframe bytes.
AFDX_FRAME_OVERHEAD_BYTES: int
#: The bandwidth allocation gaps ARINC 664 allows, ms (2^k for k = 0..7).
AFDX_BAGS_MS: tuple[int, ...]

class ChoiceError(ValueError):
    """A name given for an option is none of its choices; args: (reason) or (argument, reason)."""

class Network:
    """A validated network held by the engine (the model is defined only in Rust)."""

    def spec_json(self) -> str:
        """The description as written back by the engine (defaults kept as given), JSON text."""
    def info_json(self) -> str:
        """Counts and per-port / per-link loads, JSON text."""
    def analyze_json(
        self,
        method: str,
        grouping: bool = False,
        blind: bool = False,
        lp: Callable[[bytes, bytes, bytes, bytes, bytes], float] | None = None,
        arrival_bounds: str = "tightest",
        lp_effort: str = "default",
    ) -> str:
        """A worst-case analysis (`method`: one of analysis_methods()), JSON text; else AnalysisError
        (or ValueError for an unknown name).
        `arrival_bounds`: on a server graph, how cross traffic is bounded (tightest, pboo, pmoo).
        `lp(costs, starts, columns, coefficients, upper)` solves fifo-lp's programs (max c·x,
        A·x <= b, x >= 0; native-endian arrays as bytes: c f64, A in compressed rows with i32
        starts and columns and f64 coefficients, b f64): the optimum, or ValueError."""
    def analyze_document_json(
        self,
        method: str,
        grouping: bool = False,
        blind: bool = False,
        lp: Callable[[bytes, bytes, bytes, bytes, bytes], float] | None = None,
        warnings: list[str] = ...,
        indent: bool = True,
        arrival_bounds: str = "tightest",
        lp_effort: str = "default",
    ) -> str:
        """The same analysis as `analyze --json` prints it: the report's fields then `warnings`,
        JSON text indented by two spaces (or compact); ValueError as analyze_json."""
    def analyze_table_json(
        self,
        method: str,
        grouping: bool = False,
        blind: bool = False,
        lp: Callable[[bytes, bytes, bytes, bytes, bytes], float] | None = None,
        limit: int | None = None,
        arrival_bounds: str = "tightest",
        lp_effort: str = "default",
    ) -> str:
        """The same analysis as its terminal tables show it, JSON text: the report with the first
        `limit` flow, loaded-port and redundancy rows (all when None) most critical first, and
        `counts`, `failures` (flows past their deadline) and `unbounded_ports`."""
    def analyze_summary(
        self, method: str, grouping: bool = False, blind: bool = False
    ) -> tuple[int, int, float]:
        """The same analysis as (rows, unbounded rows, largest finite delay in µs), for benchmarks."""
    def simulation(self, config_json: str) -> Simulation:
        """A simulation of this network (`config_json`: a sim::SimConfig), advanced by the caller."""
    def check_scenario(self, scenario_json: str) -> None:
        """ModelError (place and rule) when a worst-case scenario does not fit this network."""
    def worst_case_json(
        self,
        seconds: float | None,
        evaluations: int | None,
        seed: int,
        workers: int,
        flows: list[str],
        grid_limit: int = 100_000,
    ) -> str:
        """The worst-case search within a budget in seconds or in simulations, JSON text (GIL released)."""
    def simulate_buses_json(self, config_json: str) -> str:
        """Simulates the CAN buses (`config_json`: a can::model::BusSimConfig), JSON text."""
    def explain_json(
        self,
        method: str,
        grouping: bool,
        blind: bool,
        flow: str,
        lp: Callable[[bytes, bytes, bytes, bytes, bytes], float] | None = None,
        arrival_bounds: str = "tightest",
        lp_effort: str = "default",
    ) -> str:
        """Where flow `flow`'s bounds come from, hop by hop, under the analysis asked for, JSON
        text; `lp` as in analyze_json (the bounds explained are then analyze's own)."""
    def assign_priorities_json(self, method: str) -> str:
        """Priority orders per processor and bus (`method`: opa or dm), JSON text."""
    def partition_json(self, method: str) -> str:
        """DOPA on the description's chains (`method`: opa or dm), JSON text."""
    def what_if(self, doc_json: str, warnings: list[str]) -> WhatIf:
        """A what-if on this network (its description as JSON text, whose validation gave
        `warnings`), analysed again in place by TFA."""
    def resolved_json(self) -> str:
        """The resolved model (indices, routes, per-flow arrival parameters), JSON text."""

class WhatIf:
    """A validated network under what-if edits, analysed again in place by TFA after each one."""

    def set_flow(self, name: str, keys_json: str) -> None:
        """Sets keys of flow `name` (a JSON mapping of the format's keys); ModelError if refused."""
    def set_port_rate(self, node: str, rate_json: str, port: str | None = None) -> None:
        """Sets the rate of `node`'s links (or of the one on `port`); ModelError if refused."""
    def set_scheduler(self, name: str, params_json: str) -> None:
        """Sets parameters of named scheduler `name` (a mapping key by key); ModelError if refused."""
    def undo(self) -> bool:
        """Takes back the last edit still in force; False when there is none."""
    def edits(self) -> int:
        """How many edits are in force."""
    def last_analysed_ports(self) -> int:
        """Ports the last edit analysed again (all of them when it took the whole pass)."""
    def ports(self) -> int:
        """The egress ports' count."""
    def warnings(self) -> list[str]:
        """The warnings of the edits' validations."""
    def analyze_json(self) -> str:
        """TFA's report of the network as edited, JSON text."""
    def spec_json(self) -> str:
        """The description as edited, JSON text."""

class Simulation:
    """A running simulation, advanced slice by slice so the front can show progress and stop early."""

    def run_until(self, t_ns: int) -> None:
        """Processes events up to `t_ns` (the GIL is released meanwhile)."""
    @property
    def now_ns(self) -> int:
        """The simulated time reached, ns."""
    @property
    def duration_ns(self) -> int:
        """The run's configured duration, ns."""
    def memory_estimate(self) -> tuple[float, float, str]:
        """(bytes at the end, bytes added per simulated second, what grows most), estimated before the run."""
    def finish(self) -> None:
        """Ends the run (frames held by deduplication are delivered at their SkewMax expiry)."""
    def write_pcapng(self, path: str | PathLike[str]) -> int:
        """Writes the recorded frames as a pcapng trace, whole or not at all; returns how many."""
    def report_json(self) -> str:
        """Results so far, JSON text."""

def load(json: str) -> tuple[Network | None, str]:
    """Validates a description given as JSON text: (network or None, diagnostics as JSON text)."""

def load_text(text: str, format: str, source: str, limits: list[str]) -> tuple[Network | None, str]:
    """Parses (yaml or json) and validates a description within `limits`: (network or None, diagnostics)."""

def parse_text(text: str, format: str, source: str, limits: list[str]) -> str:
    """A description's text (yaml or json) as plain data, JSON text; else ValueError, one line
    (LimitError when the text passes a limit)."""

def limits_json(limits: list[str]) -> str:
    """The limits in force with `limits` (`name=value`) applied, JSON text; LimitError if one is wrong."""

def size_refusal(size: int, limits: list[str]) -> str | None:
    """The refusal of a file of `size` bytes under `limits`, if it is too large."""

def schema_json() -> str:
    """The JSON Schema of the description format, JSON text."""

def generate_afdx(virtual_links: int, switches: int, seed: int, planes: int, end_systems: int = 0) -> str:
    """A synthetic AFDX network description (seed 000 Table 1 mix), sized for its load, JSON text
    (switches 0: the generator's count); ValueError when no link rate can carry it."""

def generate_afdx_sized(
    virtual_links: int, switches: int, seed: int, planes: int, end_systems: int = 0
) -> tuple[str, str]:
    """`generate_afdx`'s description and how it was sized (switches, end systems, links per rate,
    the largest port load and its port), JSON text each."""

def analysis_methods() -> list[str]:
    """Names of the analysis methods the engine offers."""

def random_network(seed: int, schedulers: str) -> str:
    """A small random network (`schedulers`: fifo, static_priority, mixed, any or a sample), JSON text."""

def random_sample_schedulers() -> list[tuple[str, str]]:
    """The generator's sample scheduler configurations: (name, kind as the model names it)."""

def random_port_scheduler(kind: str, lmax_bytes: list[int], seed: int, link_bps: float = 1e9) -> str:
    """A random configuration of scheduler `kind` for classes of largest frames `lmax_bytes`."""

def scheduler_kinds() -> list[str]:
    """The scheduler kinds the engine registers, as the model names them."""

def slrm_step(
    shares: list[float], matching: list[float], epsilon: float, min_share: float = 0.0
) -> list[float]:
    """One step of seed 001G's RM law (Eq. 3, clamped and renormalised): the new shares."""

def slrm_sl_next(
    sl: float,
    matching: float,
    previous_matching: float,
    kp: float = 0.1,
    ki: float = 0.3,
    min_sl: float = 0.0,
    max_sl: float = 1.0,
) -> float:
    """One step of an application's SL controller g_i (the PI rule of docs/CLOUD.md): the next SL."""

def slrm_simulate_json(scenario_json: str) -> str:
    """SL-aware applications under the RM simulated (a `cloud::slsim::Scenario`), JSON text."""

def admit_json(infra_json: str, requests_json: str, incremental: bool = True) -> str:
    """Online admission of virtual service networks on an infrastructure, the decisions as JSON text."""

def partition_latency_json(
    major_frame: int, windows: list[tuple[str, int]], stages: list[tuple[int, int, int]], probe_work: int
) -> str:
    """Seed 001B: a request crossing time partitions, its latency over every arrival phase, JSON text."""

def partition_phase_latency(
    major_frame: int, windows: list[tuple[str, int]], stages: list[tuple[int, int, int]]
) -> list[int]:
    """Seed 001B: a request crossing time partitions, its latency from each arrival phase 0, 1, ..."""

def parse_quantity(kind: str, text: str) -> float:
    """A quantity with its unit (`kind`: duration, size or rate) in seconds, bits or bits per second."""

def configure_afdx(doc_json: str, request_json: str) -> str:
    """BAG and MTU of the VLs that list their messages (seed 001D): the report, JSON text."""

def configure_tsn(
    doc_json: str,
    request_json: str,
    milp: Callable[[str], tuple[str, list[float] | None, float | None, float | None]] | None = None,
) -> str:
    """Gate control lists, stream offsets and `auto` idle slopes (configure tsn): the report, JSON text."""

def configure_dtable(requirements_json: str) -> str:
    """A Deficit Table decoupling latency from bandwidth (seed 003) from requirements, JSON text."""

def dopa_fig6(
    kind: str,
    points: int,
    sets_per_point: int,
    seed: int,
    dm_key: str = "local-window",
    local_test: str = "release-jitter",
    threads: int = 1,
) -> list[tuple[float, float, float]]:
    """One panel of seed 001E's Fig. 6: rows (x, OPA acceptance, DM acceptance); GIL released."""

def nss_overhead_json(mean_gaps_ms: list[int], budgets: list[int], packets: int, seeds: int) -> str:
    """Seed 004's Table 4: CPU overhead of the network sporadic server, JSON rows."""

def afdx_search_compare(vls: int, mtc_lo_ms: int, mtc_hi_ms: int, seed: int, cap_s: float) -> str:
    """Seed 001D Table II: branch and bound against exhaustive search on one random instance
    (nodes, time, answers), each search capped at cap_s s (0: none); JSON; GIL released."""

def fabric_run(scenario_json: str) -> str:
    """Runs a lossless-fabric scenario (seed 003), JSON in, JSON out; GIL released."""
