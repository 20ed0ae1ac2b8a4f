"""The SPEC of a sweep, read and checked: every problem is one line naming its place
(`SPEC:vary.generate.virtual_links: ...`), raised as a UserError (exit 2).

A SPEC (YAML or JSON)::

    name: fifo-vs-sp                  # optional, for titles
    network:                          # one of:
      generate: {virtual_links: 100, switches: 4, planes: 2}   # `rtnetlab generate afdx`
      #   (seeded by the row's seed; `seed: N` here keeps one network and varies the simulation only)
      # base: case.yaml                # a description (relative to the SPEC)
      # random: any                    # a small random network (soundness-style)
    vary:                             # axes; product across axes, zipped within one
      generate.virtual_links: [50, 100, 200]
      network.defaults.link_rate: [10Mbps, 100Mbps]
    # or a list of axes, one mapping each, whose keys are varied together (a key holding [*]
    # is quoted inside {...}, where YAML would read *scheduler as an alias):
    # vary:
    #   - {tag.scheduler: [FIFO, SP], "network.switches[*].scheduler": [fifo, static_priority]}
    seeds: 5                          # 1..5, or a list of seeds (generator and simulation seed)
    run:
      analyze: {methods: [best, tfa], grouping: false, blind: false}
      simulate: {duration: 0.2s, release: random, frame_sizes: uniform, workload: periodic}
      configure: {afdx: {objective: min-bandwidth}}
      fixed_priority: {method: opa}
    keep: [analyze.best.max_delay_us, simulate.p99_us.avionics]   # default: every scalar metric
    confidence: 0.95                  # level of the t-based intervals
    points_per_task: 8                # points batched into one task (default: chosen)

Varied keys: `generate.NAME` (a generator parameter), `network.PATH` (a field of the description
after it is generated or read; `[*]` stands for every element of a list, `[k]` for one),
`simulate.NAME` / `analyze.NAME` (an option of that step) and `tag.NAME` (a label kept in the rows).
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtnetlab.errors import UserError

#: Parameters of the AFDX generator (`rtnetlab generate afdx`) and their defaults.
GENERATOR_PARAMS = {"virtual_links": 100, "switches": 4, "planes": 2, "end_systems": 0}

#: Scheduler sets of the small random networks (`network: {random: ...}`).
RANDOM_SETS = ("fifo", "static_priority", "mixed", "any")

ANALYSIS_METRICS = ("max_delay_us", "mean_delay_us", "unbounded", "max_backlog_bytes", "max_jitter_us")
#: Analysis metrics that may be asked per traffic class (`analyze.best.max_delay_us.avionics`).
ANALYSIS_CLASS_METRICS = ("max_delay_us", "mean_delay_us")
SIM_METRICS = (
    "frames",
    "losses",
    "mean_us",
    "p99_us",
    "max_us",
    "max_backlog_bytes",
    "max_over_bound",
    "above_bound",
    "retransmissions",
)
SIM_CLASS_METRICS = ("frames", "mean_us", "p99_us", "max_us")
CONFIGURE_METRICS = ("feasible", "bandwidth_bps")
FIXED_PRIORITY_METRICS = ("schedulable",)

SIM_OPTIONS = {"duration", "release", "frame_sizes", "workload", "retransmit", "retransmit_timeout", "bounds"}
ANALYZE_OPTIONS = {"methods", "grouping", "blind"}
TOP_KEYS = {"name", "network", "vary", "seeds", "run", "keep", "confidence", "points_per_task"}
VARY_PREFIXES = ("generate", "network", "simulate", "analyze", "tag")


def _bad(place: str, message: str) -> UserError:
    return UserError(f"{place}: {message}")


@dataclass
class Axis:
    """Keys varied together (zipped), with their values in order."""

    keys: list[str]
    values: list[list[Any]]  # values[i][k]: the i-th value of keys[k]
    where: str = ""  # its place in the SPEC (`vary`, or `vary[n]` in a list of axes)


@dataclass
class Point:
    """One row to compute: a point of the grid and a seed."""

    index: int
    seed: int
    params: dict[str, Any]
    key: str = ""  # content hash: identifies the row across runs (resume)


@dataclass
class SweepSpec:
    source: str
    name: str
    network: dict
    axes: list[Axis]
    seeds: list[int]
    run: dict
    keep: list[str]
    confidence: float
    points_per_task: int | None
    base_dir: Path = field(default_factory=Path)
    base: Any = None  # the base description's plain data, when `network.base`

    @property
    def param_names(self) -> list[str]:
        return [k for a in self.axes for k in a.keys]

    def rows(self) -> int:
        """Rows of the sweep (grid points x seeds), counted without building them."""
        return math.prod(len(a.values) for a in self.axes) * len(self.seeds)

    def grid(self) -> list[dict[str, Any]]:
        """Every point of the grid, in a fixed order (the first axis varies slowest)."""
        out = []
        for combo in itertools.product(*[range(len(a.values)) for a in self.axes]):
            params: dict[str, Any] = {}
            for a, i in zip(self.axes, combo, strict=True):
                params.update(zip(a.keys, a.values[i], strict=True))
            out.append(params)
        return out

    def identity(self) -> dict:
        """What the rows depend on besides the point: the same identity, the same rows."""
        return {
            "network": self.network,
            "base": self.base,
            "run": self.run,
            "keep": self.keep,
        }

    def points(self) -> list[Point]:
        ident = canonical(self.identity())
        pts = []
        for index, params in enumerate(self.grid()):
            for seed in self.seeds:
                key = hashlib.sha256(f"{ident}|{canonical(params)}|{seed}".encode()).hexdigest()[:24]
                pts.append(Point(index, seed, params, key))
        return pts


def check_generator(place: str, name: str, value: int) -> None:
    """A generator parameter within the limits (`vls`, the engine's `nodes`): a SPEC must not
    ask a worker for a network that exhausts it."""
    from rtnetlab import limits

    if name == "virtual_links":
        limits.check("vls", value, place)
    elif name in ("switches", "end_systems"):
        limits.check("nodes", value, place)


def check_rows(prefix: str, points: int, seeds: int) -> None:
    """The sweep's rows (points x seeds) within the limit `rows`, before any is built; the place
    named is `vary` when the grid alone is too large, else `seeds`."""
    from rtnetlab import limits

    place = f"{prefix}vary" if points > limits.limit("rows") else f"{prefix}seeds"
    what = f"{points * seeds:,} rows ({points:,} points x {seeds:,} seeds)"
    limits.check("rows", points * seeds, place, what)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _check_path(place: str, path: str) -> list[Any]:
    """`defaults.link_rate`, `switches[*].scheduler`, `flows[0].deadline` into steps."""
    steps: list[Any] = []
    for part in path.split("."):
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_\-]*)((?:\[(?:\*|\d+)\])*)", part)
        if not m:
            raise _bad(place, f"'{path}' is not a path (names separated by '.', with [k] or [*])")
        steps.append(m.group(1))
        for idx in re.findall(r"\[(\*|\d+)\]", m.group(2)):
            steps.append("*" if idx == "*" else int(idx))
    return steps


def set_path(doc: Any, path: str, value: Any) -> None:
    """Sets the field at `path` (see `_check_path`) of `doc` to `value`; raises UserError when
    the description has no such place."""
    steps = _check_path(f"network.{path}", path)

    def walk(node: Any, i: int, where: str) -> None:
        step = steps[i]
        last = i == len(steps) - 1
        if step == "*":
            if not isinstance(node, list):
                raise UserError(f"network.{path}: {where or 'the description'} is not a list")
            for k, item in enumerate(node):
                if last:
                    node[k] = copy.deepcopy(value)
                else:
                    walk(item, i + 1, f"{where}[{k}]")
            return
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                what = where or "the description"
                size = f" (it has {len(node)})" if isinstance(node, list) else " (it is not a list)"
                raise UserError(f"network.{path}: {what} has no element {step}{size}")
            if last:
                node[step] = copy.deepcopy(value)
            else:
                walk(node[step], i + 1, f"{where}[{step}]")
            return
        if not isinstance(node, dict):
            raise UserError(f"network.{path}: {where or 'the description'} is not a mapping")
        if last:
            node[step] = copy.deepcopy(value)
            return
        if step not in node or node[step] is None:
            node[step] = {}
        walk(node[step], i + 1, f"{where}.{step}" if where else step)

    walk(doc, 0, "")


def _check_metric(place: str, name: str, run: dict) -> None:
    parts = name.split(".")
    task = parts[0]
    if task not in run:
        raise _bad(place, f"'{name}': the SPEC does not run '{task}' (run: {', '.join(run) or 'nothing'})")
    if task == "analyze":
        methods = run["analyze"]["methods"]
        if len(parts) < 3 or parts[1] not in methods:
            raise _bad(
                place,
                f"'{name}': analysis metrics are analyze.METHOD.METRIC[.CLASS], METHOD one of "
                f"{', '.join(methods)}",
            )
        metric, rest = parts[2], parts[3:]
        allowed, per_class = ANALYSIS_METRICS, ANALYSIS_CLASS_METRICS
    else:
        metric, rest = (parts[1] if len(parts) > 1 else ""), parts[2:]
        allowed, per_class = {
            "simulate": (SIM_METRICS, SIM_CLASS_METRICS),
            "configure": (CONFIGURE_METRICS, ()),
            "fixed_priority": (FIXED_PRIORITY_METRICS, ()),
        }[task]
    if metric not in allowed:
        raise _bad(place, f"'{name}': unknown {task} metric '{metric}' (one of {', '.join(allowed)})")
    if len(rest) > 1 or (rest and metric not in per_class):
        what = f"only {', '.join(per_class)} may name a class" if per_class else "no metric names a class"
        raise _bad(place, f"'{name}': {what}")


def default_keep(run: dict) -> list[str]:
    keep = []
    for task in run:
        if task == "analyze":
            keep += [f"analyze.{m}.{x}" for m in run["analyze"]["methods"] for x in ANALYSIS_METRICS]
        elif task == "simulate":
            keep += [f"simulate.{x}" for x in SIM_METRICS]
        elif task == "configure":
            keep += [f"configure.{x}" for x in CONFIGURE_METRICS]
        elif task == "fixed_priority":
            keep += [f"fixed_priority.{x}" for x in FIXED_PRIORITY_METRICS]
    return keep


def _check_run(place: str, run: Any, base_dir: Path) -> dict:
    if not isinstance(run, dict) or not run:
        raise _bad(place, "a mapping naming at least one of analyze, simulate, configure, fixed_priority")
    out: dict[str, Any] = {}
    for task, opts in run.items():
        where = f"{place}.{task}"
        opts = {} if opts is None or opts is True else opts
        if not isinstance(opts, dict):
            raise _bad(where, "a mapping of options")
        if task == "analyze":
            unknown = set(opts) - ANALYZE_OPTIONS
            if unknown:
                raise _bad(
                    f"{where}.{sorted(unknown)[0]}", f"unknown option ({', '.join(sorted(ANALYZE_OPTIONS))})"
                )
            from rtnetlab import _core

            methods = opts.get("methods", ["best"])
            if isinstance(methods, str):
                methods = [methods]
            if not isinstance(methods, list) or not methods:
                raise _bad(f"{where}.methods", "a list of analysis methods")
            for m in methods:
                if m not in _core.analysis_methods():
                    raise _bad(
                        f"{where}.methods", f"unknown method '{m}' ({', '.join(_core.analysis_methods())})"
                    )
            for flag in ("grouping", "blind"):
                if not isinstance(opts.get(flag, False), bool):
                    raise _bad(f"{where}.{flag}", "true or false")
            out[task] = {
                "methods": methods,
                "grouping": opts.get("grouping", False),
                "blind": opts.get("blind", False),
            }
        elif task == "simulate":
            unknown = set(opts) - SIM_OPTIONS
            if unknown:
                raise _bad(
                    f"{where}.{sorted(unknown)[0]}", f"unknown option ({', '.join(sorted(SIM_OPTIONS))})"
                )
            sim = {
                "duration": "0.1s",
                "release": "random",
                "frame_sizes": "uniform",
                "workload": "periodic",
                "retransmit": False,
                "bounds": True,
                **opts,
            }
            try:
                sim_config(sim, seed=1)
            except UserError as e:
                raise _bad(where, str(e)) from None
            out[task] = sim
        elif task == "configure":
            if set(opts) != {"afdx"} or not isinstance(opts["afdx"], dict | None):
                raise _bad(where, "`afdx: {request}` (the settings of `rtnetlab configure afdx`)")
            from rtnetlab.configure import AFDX_JITTER_AT, AFDX_OBJECTIVES

            choices = {
                "objective": AFDX_OBJECTIVES,
                "jitter_at": AFDX_JITTER_AT,
                "check_deadlines": (True, False),
            }
            for k, v in (opts["afdx"] or {}).items():
                if k not in choices or v not in choices[k]:
                    raise _bad(
                        f"{where}.afdx.{k}",
                        "unknown setting"
                        if k not in choices
                        else f"'{v}' is none of {', '.join(map(str, choices[k]))}",
                    )
            out[task] = {"afdx": opts["afdx"] or {}}
        elif task == "fixed_priority":
            method = opts.get("method", "opa")
            if set(opts) - {"method"} or method not in ("opa", "dm"):
                raise _bad(where, "`method: opa` or `method: dm` (DOPA's priority policy)")
            out[task] = {"method": method}
        else:
            raise _bad(where, "unknown step (analyze, simulate, configure, fixed_priority)")
    return out


def sim_config(opts: dict, seed: int) -> dict:
    """The engine's SimConfig from a SPEC's simulate options."""
    from rtnetlab import _core

    def seconds(key: str) -> float:
        try:
            return _core.parse_quantity("duration", str(opts[key]))
        except ValueError as e:
            raise UserError(f"{key}: {e}") from None

    cfg: dict[str, Any] = {"duration_ns": round(seconds("duration") * 1e9), "seed": int(seed)}
    if cfg["duration_ns"] <= 0:
        raise UserError("duration: must be positive")
    if opts["release"] not in ("random", "synchronized"):
        raise UserError(f"release: '{opts['release']}' is not random or synchronized")
    if opts["frame_sizes"] not in ("max", "min", "uniform"):
        raise UserError(f"frame_sizes: '{opts['frame_sizes']}' is not max, min or uniform")
    cfg["release"], cfg["frame_sizes"] = opts["release"], opts["frame_sizes"]
    w = opts["workload"]
    if isinstance(w, dict):
        if len(w) != 1 or next(iter(w)) not in ("cbr", "poisson", "pareto_bursts"):
            raise UserError("workload: periodic, or one of cbr / poisson / pareto_bursts with its settings")
    elif w != "periodic":
        raise UserError(f"workload: '{w}' is not periodic (or a mapping: cbr: {{load: 0.8}})")
    # The engine's Workload is tagged by `kind`.
    cfg["workload"] = (
        {"kind": "periodic"} if w == "periodic" else {"kind": next(iter(w)), **(w[next(iter(w))] or {})}
    )
    if not isinstance(opts.get("retransmit", False), bool):
        raise UserError("retransmit: true or false")
    cfg["retransmit"] = opts.get("retransmit", False)
    if opts.get("retransmit_timeout") is not None:
        cfg["retransmit_timeout_ns"] = round(seconds("retransmit_timeout") * 1e9)
    return cfg


def _check_axes(place: str, vary: Any, network: dict) -> list[Axis]:
    if vary is None:
        return []
    groups = (
        vary
        if isinstance(vary, list)
        else ([{k: v} for k, v in vary.items()] if isinstance(vary, dict) else None)
    )
    if groups is None:
        raise _bad(place, "a mapping of KEY: [values], or a list of such mappings (keys varied together)")
    axes, seen = [], set()
    for n, group in enumerate(groups):
        where = f"{place}[{n}]" if isinstance(vary, list) else place
        if not isinstance(group, dict) or not group:
            raise _bad(where, "a mapping of KEY: [values]")
        keys, columns = [], []
        for key, values in group.items():
            kp = f"{where}.{key}"
            if not isinstance(key, str) or key.split(".")[0] not in VARY_PREFIXES or "." not in key:
                raise _bad(kp, f"a varied key starts with one of {', '.join(p + '.' for p in VARY_PREFIXES)}")
            if key in seen:
                raise _bad(kp, "varied twice")
            seen.add(key)
            prefix, rest = key.split(".", 1)
            if prefix == "generate":
                if "generate" not in network:
                    raise _bad(kp, "generator parameters need `network: {generate: ...}`")
                if rest not in GENERATOR_PARAMS:
                    raise _bad(kp, f"unknown generator parameter ({', '.join(GENERATOR_PARAMS)})")
            elif prefix == "network":
                _check_path(kp, rest)
            elif prefix == "simulate" and rest not in SIM_OPTIONS - {"bounds"}:
                raise _bad(kp, f"unknown simulation option ({', '.join(sorted(SIM_OPTIONS - {'bounds'}))})")
            elif prefix == "analyze" and rest not in ANALYZE_OPTIONS - {"methods"}:
                raise _bad(kp, "unknown analysis option (grouping, blind)")
            if not isinstance(values, list) or not values:
                raise _bad(kp, "a non-empty list of values")
            if prefix == "generate":
                lo = 2 if rest == "end_systems" else 1
                for v in values:
                    if (
                        not isinstance(v, int)
                        or isinstance(v, bool)
                        or v < lo
                        or (rest == "planes" and v > 2)
                    ):
                        raise _bad(
                            kp,
                            f"{v!r} is not a whole number >= {lo}"
                            + (" and <= 2" if rest == "planes" else ""),
                        )
                    check_generator(kp, rest, v)
            keys.append(key)
            columns.append(values)
        lengths = {len(c) for c in columns}
        if len(lengths) != 1:
            raise _bad(where, "keys varied together need lists of the same length")
        axes.append(Axis(keys, [list(row) for row in zip(*columns, strict=True)], where))
    return axes


def _check_network(place: str, network: Any, base_dir: Path) -> tuple[dict, Any]:
    if not isinstance(network, dict) or len(network) != 1:
        raise _bad(place, "one of `generate: {...}`, `base: FILE` or `random: SET`")
    ((kind, value),) = network.items()
    if kind == "generate":
        value = {} if value is None else value
        if not isinstance(value, dict):
            raise _bad(f"{place}.generate", "a mapping of generator parameters")
        for k, v in value.items():
            if k not in GENERATOR_PARAMS and k != "seed":
                raise _bad(
                    f"{place}.generate.{k}", f"unknown generator parameter ({', '.join(GENERATOR_PARAMS)})"
                )
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise _bad(f"{place}.generate.{k}", "a whole number")
            check_generator(f"{place}.generate.{k}", k, v)
        return {"generate": {**GENERATOR_PARAMS, **value}}, None
    if kind == "base":
        if not isinstance(value, str):
            raise _bad(f"{place}.base", "the path of a description file")
        path = (base_dir / value) if not Path(value).is_absolute() else Path(value)
        if not path.is_file():
            raise _bad(f"{place}.base", f"{value}: no such file")
        from rtnetlab.io import formats

        try:
            data = formats.read(path)
        except UserError as e:
            raise _bad(f"{place}.base", str(e)) from None
        return {"base": str(value)}, data
    if kind == "random":
        from rtnetlab import _core

        samples = [n for n, _ in _core.random_sample_schedulers()]
        if value not in RANDOM_SETS and value not in samples:
            raise _bad(f"{place}.random", f"'{value}' is none of {', '.join(RANDOM_SETS + tuple(samples))}")
        return {"random": value}, None
    raise _bad(f"{place}.{kind}", "unknown network source (generate, base, random)")


def parse(data: Any, source: str, base_dir: Path) -> SweepSpec:
    """Checks a SPEC given as plain data; `source` prefixes the places in messages."""
    p = f"{source}:" if source else ""
    if not isinstance(data, dict):
        raise UserError(f"{source or 'SPEC'}: a SPEC is a mapping (network, vary, seeds, run, keep)")
    for k in data:
        if k not in TOP_KEYS:
            raise _bad(f"{p}{k}", f"unknown key ({', '.join(sorted(TOP_KEYS))})")
    for k in ("network", "run"):
        if k not in data:
            raise _bad(f"{p}{k}", "missing")
    network, base = _check_network(f"{p}network", data["network"], base_dir)
    axes = _check_axes(f"{p}vary", data.get("vary"), network)
    seeds = data.get("seeds", 1)
    points = math.prod(len(a.values) for a in axes)
    if isinstance(seeds, int) and not isinstance(seeds, bool) and seeds >= 1:
        # Counted before the list is built: `seeds: 100000000` must not take the host's memory.
        check_rows(p, points, seeds)
        seeds = list(range(1, seeds + 1))
    elif not (
        isinstance(seeds, list)
        and seeds
        and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)
        and len(set(seeds)) == len(seeds)
    ):
        raise _bad(f"{p}seeds", "a count >= 1 or a list of distinct seeds >= 0")
    else:
        check_rows(p, points, len(seeds))
    run = _check_run(f"{p}run", data["run"], base_dir)
    keep = data.get("keep")
    if keep is None:
        keep = default_keep(run)
    elif not isinstance(keep, list) or not keep or not all(isinstance(k, str) for k in keep):
        raise _bad(f"{p}keep", "a list of metric names")
    else:
        for k, name in enumerate(keep):
            _check_metric(f"{p}keep[{k}]", name, run)
        if len(set(keep)) != len(keep):
            raise _bad(f"{p}keep", "a metric named twice")
    confidence = data.get("confidence", 0.95)
    if not isinstance(confidence, int | float) or isinstance(confidence, bool) or not 0 < confidence < 1:
        raise _bad(f"{p}confidence", "a level between 0 and 1 (e.g. 0.95)")
    ppt = data.get("points_per_task")
    if ppt is not None and (not isinstance(ppt, int) or isinstance(ppt, bool) or ppt < 1):
        raise _bad(f"{p}points_per_task", "a whole number >= 1")
    name = data.get("name", Path(source).stem if source else "sweep")
    if not isinstance(name, str):
        raise _bad(f"{p}name", "a text")
    spec = SweepSpec(
        source,
        name,
        network,
        axes,
        [int(s) for s in seeds],
        run,
        list(keep),
        float(confidence),
        ppt,
        base_dir,
        base,
    )
    check_network_axes(spec, f"{p}vary")
    return spec


#: Defaults the engine resolves into the ports and nodes (and reads nowhere else), and what
#: gives its own value instead: a varied default that no element takes changes nothing.
RESOLVED_DEFAULTS = {
    "link_rate": "every link gives its own rate (vary network.links[*].rate)",
    "propagation_delay": "every link gives its own propagation_delay "
    "(vary network.links[*].propagation_delay)",
    "technological_latency": "every switch gives its own technological_latency "
    "(vary network.switches[*].technological_latency)",
    "switching": "every switch gives its own switching (vary network.switches[*].switching)",
    "scheduler": "every port gives its own scheduler (vary it where it is set)",
    "buffer": "every port gives its own buffer (vary it where it is set)",
}
#: Networks checked per SPEC at most: random networks differ by seed, generated ones by size.
PROBE_SEEDS = 20
#: Combinations of network values checked together at most (beyond: each value alone).
PROBE_COMBINATIONS = 64


def _probes(spec: SweepSpec) -> list[tuple[str, dict]]:
    """(what, description) of the networks the `network.*` keys are checked on before anything
    runs: the generator's smallest network of the grid (the fewest switches, links and flows: an
    index that fits it fits every row), the first seeds' random networks, or the base."""
    import json

    from rtnetlab import _core

    if "generate" in spec.network:
        g = dict(spec.network["generate"])
        for a in spec.axes:
            for k, key in enumerate(a.keys):
                if key.startswith("generate."):
                    g[key.split(".", 1)[1]] = min(row[k] for row in a.values)
        seed = g.get("seed", spec.seeds[0])
        what = (
            f"the generated network ({g['virtual_links']} virtual links, {g['switches']} switches, "
            f"{g['planes']} plane(s), seed {seed})"
        )
        doc = _core.generate_afdx(g["virtual_links"], g["switches"], seed, g["planes"], g["end_systems"])
        return [(what, json.loads(doc))]
    if "random" in spec.network:
        return [
            (f"the random network of seed {s}", json.loads(_core.random_network(s, spec.network["random"])))
            for s in spec.seeds[:PROBE_SEEDS]
        ]
    return [(f"the description {spec.network['base']}", spec.base)]


def _with(doc: dict, params: dict[str, Any]) -> dict:
    """A copy of `doc` with the `network.*` values of `params` set (UserError: a path it lacks)."""
    doc = copy.deepcopy(doc)
    for key, value in params.items():
        set_path(doc, key.split(".", 1)[1], value)
    return doc


def _invalid(doc: dict) -> tuple[Any, str | None]:
    """(the network of `doc`, None), or (None, the first reason it is not one)."""
    from rtnetlab import model
    from rtnetlab.errors import ModelError

    try:
        return model.load_data(doc), None
    except ModelError as e:
        more = f" (and {len(e.lines) - 1} more)" if len(e.lines) > 1 else ""
        return None, f"{e.lines[0]}{more}"


def _resolved(net: Any) -> str:
    """The resolved model without the description it came from (what the engines read)."""
    import json

    doc = net.resolved()
    doc.pop("spec", None)
    return json.dumps(doc, sort_keys=True)


def check_network_axes(spec: SweepSpec, place: str) -> None:
    """Every `network.*` value of the grid applied to the networks the rows start from and
    validated, before anything runs: a misspelt field, an index out of range or a value the
    description refuses is one line naming the SPEC's place (the key, or the value's own `[k]`),
    not a sweep whose every row fails. Keys varied together are set together (a scheduler's
    name and its configuration); axes together too, while their combinations are few. A varied
    default that no element takes (it changes nothing) is refused as well."""
    # Per axis with network keys: [(key, its place, its column)].
    axes = {}
    for n, a in enumerate(spec.axes):
        where = a.where or place
        keys = [(key, f"{where}.{key}", k) for k, key in enumerate(a.keys) if key.startswith("network.")]
        if keys:
            axes[n] = keys
    if not axes:
        return
    for what, doc in _probes(spec):
        for n, keys in axes.items():
            rows = spec.axes[n].values
            for key, kp, k in keys:  # the paths first: a wrong one is the key's, whatever the value
                try:
                    _with(doc, {key: rows[0][k]})
                except UserError as e:
                    raise _bad(kp, f"{str(e).split(': ', 1)[1]}, in {what}") from None
            seen: set[str] = set()
            for i, row in enumerate(rows):
                net, why = _invalid(_with(doc, {key: row[k] for key, _, k in keys}))
                if why is not None:
                    unknown = [kp for key, kp, _ in keys if f"unknown field `{key.split('.')[-1]}`" in why]
                    if unknown:
                        raise _bad(unknown[0], f"{why}, in {what}")
                    key, kp, k = keys[0]
                    together = "".join(f", with {key2}={row[k2]!r}" for key2, _, k2 in keys[1:])
                    raise _bad(f"{kp}[{i}]", f"{row[k]!r}{together} makes {what} invalid: {why}")
                seen.add(_resolved(net))
            for key, kp, k in keys:
                default = key.removeprefix("network.defaults.")
                distinct = {canonical(row[k]) for row in rows}
                if default in RESOLVED_DEFAULTS and len(distinct) > 1 and len(seen) == 1:
                    raise _bad(kp, f"changes nothing in {what}: {RESOLVED_DEFAULTS[default]}")
        # Axes that pass alone may not pass together (a scheduler on one, its ports on another).
        per_axis = [
            [{key: row[k] for key, _, k in keys} for row in spec.axes[n].values] for n, keys in axes.items()
        ]
        if len(per_axis) > 1 and math.prod(len(c) for c in per_axis) <= PROBE_COMBINATIONS:
            for combo in itertools.product(*per_axis):
                params = {key: v for part in combo for key, v in part.items()}
                _, why = _invalid(_with(doc, params))
                if why is not None:
                    said = ", ".join(f"{key}={v!r}" for key, v in params.items())
                    raise _bad(place, f"the point {said} makes {what} invalid: {why}")


def load(path: Path) -> tuple[SweepSpec, Any]:
    """Reads and checks a SPEC file; returns it and its plain data."""
    from rtnetlab.io import formats

    if not path.is_file():
        raise UserError(f"{path}: no such file")
    try:
        data = formats.read(path)
    except UserError as e:
        if "anchor or alias" in str(e) and "[*]" in path.read_text(errors="replace"):
            # `{network.switches[*].scheduler: [...]}`: in a flow mapping `*` starts an alias.
            raise UserError(
                f"{e} (a key holding [*] inside {{...}} must be quoted: \"network.links[*].rate\")"
            ) from None
        raise
    except Exception as e:  # a reader's own error, as one line
        raise UserError(f"{path}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    try:
        return parse(data, str(path), path.resolve().parent), data
    except UserError as e:
        raise UserError(in_file(path, str(e))) from None


def in_file(path: Path, message: str) -> str:
    """`SPEC:place: rule` as `SPEC:line:column: place: rule`, the line and column of that place in
    the SPEC (what an editor jumps to); unchanged when the place is not in the file."""
    head = f"{path}:"
    place, sep, rule = message.removeprefix(head).partition(": ")
    if not message.startswith(head) or not sep:
        return message
    from rtnetlab.io import locate

    return f"{locate.at(path, place)}: {place}: {rule}"


def is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
