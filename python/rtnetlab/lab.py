"""Studies that run on this machine, or model what it shares: seed 001G's service-level-aware
resource manager (`slrm_step`, `slrm_simulate`, `slrm_run`), the middleware latency
laboratory (`middleware`) and the testbed (``Network.run_testbed``, ``Network.testbed_up``,
`testbed_down`).

What runs on this machine needs root as its command does, and keeps the command's guarantees:
its inputs are checked first (the limits of `rtnetlab.limits` included) with the command's
one-line refusals, and what it creates (namespaces, control groups, processes, folders) is
recorded as the run's own and removed on every way out, an exception or Ctrl-C too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rtnetlab.errors import UserError
from rtnetlab.result import Result

if TYPE_CHECKING:
    from rtnetlab.network import Network


class SlrmResult(Result):
    """The resource manager's periods (``rtnetlab slrm simulate --json`` or ``slrm run
    --json``): `data` is the report (``apps``, ``capacity``, ``control_period``, ``periods``...)
    with its ``summary`` (the largest ``|sum of caps - capacity|``, the final caps and SLs);
    `flows` has one row per period and application: ``time``, ``app``, ``cap``, ``sl``,
    ``response_time`` and what the period measured. `files` lists the files written."""

    kind = "slrm"
    #: What the run was, as its table's title says it (``slrm_run``'s source and capacity).
    title = ""

    def __init__(self, data: dict[str, Any], files: list[Path] | None = None, title: str = ""):
        super().__init__(data, [], None)
        #: The files written (with `out`).
        self.files = list(files or [])
        self.title = title

    @property
    def summary(self) -> dict[str, Any]:
        """The RM's invariant and where it ended: ``periods``, ``max_cap_sum_error``,
        ``final_caps``, ``final_sl`` (and on this machine the quotas read back)."""
        return dict(self.data.get("summary") or {})

    @property
    def flows(self) -> list[dict[str, Any]]:
        """One row per period and application."""
        rows = []
        names = self.data.get("apps") or []
        for p in self.data.get("periods") or []:
            for k, a in enumerate(p.get("apps") or []):
                row = {"time": p.get("time"), "app": names[k] if k < len(names) else k}
                row.update({key: v for key, v in a.items() if not isinstance(v, (list, dict))})
                rows.append(row)
        return rows

    def to_json(self, indent: int | None = None) -> str:
        """The report as the command's ``--json`` prints it (one line)."""
        return json.dumps(self.data, indent=indent, allow_nan=False) + "\n"

    def __repr__(self) -> str:
        s = self.summary
        return (f"<rtnetlab.SlrmResult: {len(self.data.get('apps') or [])} apps, {s.get('periods')} periods, "
                f"largest |sum of caps - capacity| {s.get('max_cap_sum_error', 0):.2e}>")


def slrm_step(shares: Sequence[float], matching: Sequence[float], *, epsilon: float = 0.2,
              min_share: float = 0.0) -> list[float]:
    """One step of the resource manager's law (seed 001G, Eq. 3; ``rtnetlab slrm step``):
    ``c_i <- c_i - epsilon (f_i - c_i sum f_p)``, clamped at `min_share` and renormalised. `shares`
    are the current shares c_i (summing to 1), `matching` the matching values
    ``f_i = 1 - t_i / t̄_i``. Returns the new shares.

    ```pycon
    >>> import rtnetlab as rt
    >>> [round(c, 6) for c in rt.slrm_step([0.5, 0.5], [-0.5, 0.2])]
    [0.57, 0.43]

    ```
    """
    from rtnetlab.cloud import slrm as law

    return [round(x, 12) for x in law.step(list(shares), list(matching), epsilon, min_share)]


def _check_seed(seed: int) -> None:
    if seed < 0:
        raise UserError(f"--seed: must be at least 0, got {seed}")


def slrm_simulate(scenario: str | Path | None = None, *, experiment: int | None = None, seed: int = 1,
                  out: str | Path | None = None) -> SlrmResult:
    """A discrete-time simulation of service-level-aware applications sharing cores under the
    resource manager (``rtnetlab slrm simulate``): the paper's `experiment` (1: 4 cores, 2
    applications; 2: 8 cores, 4) or a `scenario` file (docs/CLOUD.md). `out`: a directory for
    ``slrm.json``, ``slrm.csv`` and ``slrm.png``."""
    from rtnetlab.cloud import admit as adm
    from rtnetlab.cloud import slrm as law
    from rtnetlab.io import output as outfiles

    _check_seed(seed)
    file = None if scenario is None else Path(scenario)
    sc = law.scenario(experiment, file, seed)
    out_dir = None if out is None else Path(out)
    if out_dir is not None:
        outfiles.check({f"--out ({k})": v for k, v in law.outputs(out_dir).items()},
                       [file] if file else [])
    try:
        report = law.simulate(sc, str(file) if file else "scenario")
    except UserError as e:
        raise UserError(adm.in_user_files(str(e), *([file] if file else []))) from None
    title = f"experiment {experiment}" if experiment else str(file)
    files = law.write(out_dir, report, f"SL-aware RM: {title}") if out_dir is not None else []
    return SlrmResult({"summary": law.summary(report), **report}, files, title)


def slrm_run(apps: str | Path, *, duration: str | float = "20s", capacity: float | None = None, seed: int = 1,
             out: str | Path | None = None,
             started: Callable[[str, str], None] | None = None) -> SlrmResult:
    """Real service-level-aware HTTP services on this machine, capped by control groups, under
    the resource manager (``rtnetlab slrm run``; needs root). `apps`: a scenario file (the keys
    of `slrm_simulate`'s) or a preset (``overload``, ``pair``); `duration`: 2 s to 3600 s (and
    within the ``duration`` limit); `capacity`: the cores shared (default: the scenario's);
    `started(run, cgroup)` is called once the run's groups exist. The groups and processes are
    the run's own (``rtnetlab testbed down`` lists a leftover) and removed on every way out."""
    from rtnetlab import limits
    from rtnetlab.cloud import admit as adm
    from rtnetlab.cloud import slrm as law
    from rtnetlab.cloud import slrmrun
    from rtnetlab.io import output as outfiles
    from rtnetlab.simulate import _quantity

    seconds = _quantity("duration", duration, "--duration")
    limits.check("duration", seconds, "--duration")
    _check_seed(seed)
    if capacity is not None and not (capacity > 0 and capacity != float("inf")):
        raise UserError(f"--capacity: must be a positive number, got {capacity}")
    try:
        sc, source = slrmrun.scenario(str(apps), seconds, capacity)
    except UserError as e:
        raise UserError(adm.in_user_files(str(e), Path(apps))) from None
    out_dir = None if out is None else Path(out)
    if out_dir is not None:
        outfiles.check({f"--out ({k})": v for k, v in law.outputs(out_dir).items()})
    report = slrmrun.run(sc, seed, started)
    title = f"SL-aware RM on this machine: {source}, {sc['capacity']:g} cores"
    files = slrmrun.write(out_dir, report, title) if out_dir is not None else []
    return SlrmResult({"summary": slrmrun.summary(report), **report}, files, title)


# -- the middleware laboratory ------------------------------------------------------------------


class MiddlewareResult(Result):
    """A middleware laboratory run (``rtnetlab middleware EXPERIMENT --json``): `data` is the
    report (``experiment``, ``rows``, ``skipped``, ``host`` and the experiment's own parts:
    ``ddsperf``, ``dispatcher``, ``analysis``, ``ratios``, ``paper``); `flows` has one row per
    measured configuration (backend, subscribers or server, payload...) with its latency
    statistics in µs. `files` lists what `out` wrote (the JSON and its HTML page)."""

    kind = "middleware"
    _rows = "rows"

    def __init__(self, data: dict[str, Any], files: list[Path] | None = None):
        super().__init__(data, [], None)
        #: The files written (with `out`): the report as JSON and its HTML page.
        self.files = list(files or [])

    @classmethod
    def read(cls, path: str | Path) -> MiddlewareResult:
        """Results saved by ``rtnetlab middleware EXPERIMENT --json`` (or ``--out``'s JSON, or
        `to_json`), checked to be a middleware experiment's."""
        from rtnetlab.io import jsontext
        from rtnetlab.report.middleware import kind_of

        try:
            doc = json.loads(Path(path).read_text())
        except OSError as e:
            raise UserError(f"{path}: cannot be read ({e.strerror or e})") from None
        except ValueError as e:
            raise UserError(jsontext.not_json(path, e)) from None
        kind_of(doc, str(path))
        return cls(doc)

    @property
    def experiment(self) -> str:
        """``pubsub``, ``partitions``, ``reqresp`` or ``cwalker`` (results saved before the
        experiment was named in them: told by their rows)."""
        from rtnetlab.report.middleware import kind_of

        return kind_of(self.data, "results")

    def to_html(self, where: str = "results") -> str:
        """The results' HTML page, tables and plots (``rtnetlab middleware report``); `where` names
        the results in the page."""
        from rtnetlab.report.middleware import render

        return render(self.data, where)

    @property
    def flows(self) -> list[dict[str, Any]]:
        """One row per measured configuration, with the report's keys."""
        return list(self.data.get("rows") or [])

    @property
    def skipped(self) -> list[str]:
        """What was not measured, and why, one line each (a backend missing on this host...)."""
        return list(self.data.get("skipped") or [])

    def to_json(self, indent: int | None = 2) -> str:
        """The report as ``rtnetlab middleware EXPERIMENT --json`` prints it."""
        return json.dumps(self.data, indent=indent, allow_nan=False) + "\n"

    def __repr__(self) -> str:
        return (f"<rtnetlab.MiddlewareResult {self.experiment}: {len(self.flows)} rows, "
                f"{len(self.skipped)} skipped>")


Progress = Callable[[dict[str, Any]], None]


def _pubsub(backends: str | Sequence[str] = "udp,zeromq,zeromq-ipc,dds,zenoh",
            subscribers: str | Sequence[int] = "1,2,4", payload: str | Sequence[int] = "16,100,1000,10000",
            messages: int = 10000, warmup: int = 100, period: str | float = "1ms", placement: str = "local",
            rt: bool = True, noise: str | float = "1s", ddsperf: bool = True,
            progress: Progress | None = None) -> tuple[dict[str, Any], Callable[[], dict[str, Any]]]:
    from rtnetlab import limits
    from rtnetlab.middleware import options as opt
    from rtnetlab.middleware import pubsub
    from rtnetlab.middleware.backends import NAMES

    names = opt.backend_list(backends, NAMES)
    subs = opt.int_list("--subscribers", subscribers)
    if max(subs) > 16:
        raise UserError(f"--subscribers: at most 16 subscriber processes, got {max(subs)}")
    sizes = opt.int_list("--payload", payload, pubsub.MIN_PAYLOAD)
    if max(sizes) > 60000:
        raise UserError(f"--payload: at most 60000 bytes (one UDP datagram), got {max(sizes)}")
    opt.at_least("--messages", messages, 1)
    limits.check("messages", messages, "--messages")
    opt.at_least("--warmup", warmup, 0)
    period_us = opt.duration_us("--period", period)
    if not period_us >= 10:
        raise UserError(f"--period: must be at least 10us, got {period}")
    noise_us = opt.duration_us("--noise", noise)
    if noise_us < 0:
        raise UserError(f"--noise: must not be negative, got {noise}")
    opt.check_placement(placement)
    settings = {"placement": placement}

    def run() -> dict[str, Any]:
        report: dict[str, Any] = pubsub.run(names, subs, sizes, messages, placement, warmup=warmup,
                                            period_ns=round(period_us * 1000), rt=rt,
                                            noise_s=noise_us / 1e6, progress=progress, ddsperf=ddsperf)
        return report

    return settings, run


def _partitions(windows: str | Mapping[str, str | float] = "routing=800us,recorder=700us",
                major_frame: str | float = "1500us", requests: int = 10000, payload: int = 1000,
                warmup: int = 50, rt: bool = True, noise: str | float = "1s", seed: int = 1,
                time_scale: float = 1.0, disturbance: str | float = "200us",
                progress: Progress | None = None) -> tuple[dict[str, Any], Callable[[], dict[str, Any]]]:
    from rtnetlab import limits
    from rtnetlab.middleware import options as opt
    from rtnetlab.middleware import partitions

    wins = opt.parse_windows(windows)
    frame_ns = round(opt.duration_us("--major-frame", major_frame) * 1000)
    total = sum(w for _, w in wins)
    if frame_ns < total:
        raise UserError(f"--major-frame: {major_frame} is shorter than the windows' {total / 1000:g}us")
    if frame_ns > 16_000_000:
        raise UserError(
            f"--major-frame: at most 16ms (the analysis evaluates every nanosecond phase), got {major_frame}")
    opt.at_least("--requests", requests, 1)
    limits.check("requests", requests, "--requests")
    if not 16 <= payload <= 1400:
        raise UserError(
            f"--payload: must be in [16, 1400] bytes (no fragmentation, as the paper), got {payload}")
    opt.at_least("--warmup", warmup, 0)
    noise_us = opt.duration_us("--noise", noise)
    if not 1 <= time_scale <= 1000:
        raise UserError(f"--time-scale: between 1 and 1000, got {time_scale:g}")
    threshold_us = opt.duration_us("--disturbance", disturbance)
    if not 0 < threshold_us <= 1e6:
        raise UserError(f"--disturbance: in (0, 1s], got {disturbance}")

    def run() -> dict[str, Any]:
        report: dict[str, Any] = partitions.run(
            wins, frame_ns, requests, payload=payload, warmup=warmup, rt=rt, noise_s=noise_us / 1e6,
            seed=seed, progress=progress, time_scale=time_scale, disturbance_ns=round(threshold_us * 1000))
        return report

    return {"root": True}, run


def _reqresp(backends: str | Sequence[str] = "udp-echo,icmp-echo,dds",
             payload: str | Sequence[int] = "64,512",
             busy: str | Sequence[str | float] = "0us,100us", requests: int = 10000, cpu_cap: float = 0.1,
             warmup: int = 50, gap: str | float = "500us", rt: bool = True, noise: str | float = "1s",
             progress: Progress | None = None) -> tuple[dict[str, Any], Callable[[], dict[str, Any]]]:
    from rtnetlab import limits
    from rtnetlab.middleware import options as opt
    from rtnetlab.middleware import reqresp

    names = opt.backend_list(backends, reqresp.BACKENDS)
    sizes = opt.int_list("--payload", payload, 16)
    if max(sizes) > 1400:
        raise UserError(f"--payload: at most 1400 bytes (one frame), got {max(sizes)}")

    def busy_time(word: str, us: float) -> None:
        if not 0 <= us <= 100_000:
            raise UserError(f"--busy: must be in [0, 100ms], got {word}")

    busy_us = opt.duration_list_us("--busy", busy, busy_time)
    opt.at_least("--requests", requests, 1)
    limits.check("requests", requests, "--requests")
    if not 0 < cpu_cap <= 1:
        raise UserError(f"--cpu-cap: must be in (0, 1], got {cpu_cap}")
    opt.at_least("--warmup", warmup, 0)
    gap_us = opt.duration_us("--gap", gap)
    if gap_us < 0:
        raise UserError(f"--gap: must not be negative, got {gap}")
    noise_us = opt.duration_us("--noise", noise)

    def run() -> dict[str, Any]:
        report: dict[str, Any] = reqresp.run(names, sizes, busy_us, requests, cpu_cap, warmup=warmup,
                                             gap_ns=round(gap_us * 1000), rt=rt, noise_s=noise_us / 1e6,
                                             progress=progress)
        return report

    return {"root": True}, run


def _cwalker(backends: str | Sequence[str] = "zeromq,dds,zenoh", mappings: str | Sequence[int] = "1,2,3",
             duration: str | float = "30s", placement: str = "two-boards", rt: bool = True,
             noise: str | float = "1s",
             progress: Progress | None = None) -> tuple[dict[str, Any], Callable[[], dict[str, Any]]]:
    from rtnetlab import limits
    from rtnetlab.middleware import cwalker
    from rtnetlab.middleware import options as opt
    from rtnetlab.middleware.backends import NAMES

    names = opt.backend_list(backends, NAMES, refused=("zeromq-ipc",))
    maps = opt.int_list("--mappings", mappings)
    if any(m not in cwalker.MAPPINGS for m in maps):
        raise UserError(f"--mappings: expected 1, 2 or 3, got {opt.as_text(mappings)}")
    seconds = opt.duration_us("--duration", duration) / 1e6
    limits.check("duration", seconds, "--duration", f"{duration}")
    if seconds < 2:
        raise UserError(f"--duration: at least 2s (the first second is warm-up), got {duration}")
    opt.check_placement(placement)
    noise_us = opt.duration_us("--noise", noise)
    if noise_us < 0:
        raise UserError(f"--noise: must not be negative, got {noise}")

    def run() -> dict[str, Any]:
        report: dict[str, Any] = cwalker.run(names, maps, seconds, placement=placement, rt=rt,
                                             progress=progress, noise_s=noise_us / 1e6)
        return report

    return {}, run


#: The laboratory's experiments: their options checked, then a function that runs them.
MIDDLEWARE: dict[str, Callable[..., tuple[dict[str, Any], Callable[[], dict[str, Any]]]]] = {
    "pubsub": _pubsub,
    "partitions": _partitions,
    "reqresp": _reqresp,
    "cwalker": _cwalker,
}


def middleware(experiment: str, *, out: str | Path | None = None, **options: Any) -> MiddlewareResult:
    """Runs an experiment of the middleware latency laboratory (``rtnetlab middleware
    EXPERIMENT``) with its command's options as keywords (``--major-frame`` is ``major_frame``;
    a list as a sequence or as the option's text, ``"1,2,4"``; a duration as text with its unit
    or a number of seconds), and returns its rows.

    - ``pubsub`` (seed 001A): `backends`, `subscribers`, `payload` (bytes), `messages`,
      `warmup`, `period`, `placement` (``local`` or ``two-boards``, which needs root), `rt`,
      `noise`, `ddsperf`;
    - ``partitions`` (seed 001B, needs root): `windows` (``{"routing": "800us", "recorder":
      "700us"}``), `major_frame`, `requests`, `payload`, `warmup`, `rt`, `noise`, `seed`,
      `time_scale`, `disturbance`;
    - ``reqresp`` (seed 001C, needs root): `backends`, `payload`, `busy`, `requests`,
      `cpu_cap`, `warmup`, `gap`, `rt`, `noise`;
    - ``cwalker`` (seed 001A, Table I): `backends`, `mappings`, `duration`, `placement`, `rt`,
      `noise`.

    Every experiment takes `progress` (called with each row as it is measured) and `out` (a
    directory for ``EXPERIMENT.json`` and its HTML page, checked before anything runs). Options
    are checked first with the command's one-line refusals and limits (`rtnetlab.UserError`);
    the processes, namespaces and control groups a run makes are its own (recorded, removed on
    every way out; ``rtnetlab testbed down`` lists a leftover). Raises `rtnetlab.UserError`
    when every backend was skipped (nothing measured)."""
    import inspect

    from rtnetlab.middleware import options as opt

    check = MIDDLEWARE.get(experiment)
    if check is None:
        known = ", ".join(MIDDLEWARE)
        raise UserError(f"middleware: no experiment named '{experiment}' (experiments: {known})")
    accepted = inspect.signature(check).parameters
    for key in options:
        if key not in accepted:
            known = ", ".join([*accepted, "out"])
            raise UserError(f"middleware {experiment}: no option '{key}' (options: {known})")
    settings, run = check(**options)
    paths = opt.out_paths(out, experiment)
    if settings.get("root"):
        from rtnetlab.testbed import netns

        netns.check_privileges()
    report = {**run(), "experiment": experiment}
    if not report["rows"] and report["skipped"]:
        raise UserError(f"middleware {experiment}: nothing measured: " + "; ".join(report["skipped"]))
    files: list[Path] = []
    if paths is not None:
        from rtnetlab.io import output as outfiles
        from rtnetlab.report.middleware import render

        text = json.dumps(report, indent=2, allow_nan=False) + "\n"
        outfiles.write_all({paths["json"]: text, paths["html"]: render(report, str(paths["json"]))})
        files = [paths["json"], paths["html"]]
    return MiddlewareResult(report, files)


# -- the testbed --------------------------------------------------------------------------------


class TestbedResult(Result):
    """A testbed run (``rtnetlab testbed run --json``): per (flow, destination, plane) in `flows`
    the frames measured on real frames (``count``, ``losses``, ``mean_us``, ``max_us``...),
    those the host disturbed, the ``undisturbed_max_us`` beside the ``bound_us`` and the
    simulated ``sim_max_us``, and the ``verdict``; ``data["host"]`` the host's noise and
    capacity, ``data["bounds"]`` the routes ``above_bound`` (a possible soundness problem) and
    ``undecided``. The warnings (the description's, then the run's) are `notes`."""

    __test__ = False  # not a test class, whatever its name
    kind = "testbed"

    def __init__(self, data: dict[str, Any], network: Network | None = None):
        super().__init__(data, None, network)

    @property
    def notes(self) -> list[str]:
        """The warnings of the description and of the run, and the report's own notes."""
        own = self.data.get("notes") or []
        return [*(self.data.get("warnings") or []), *(n if isinstance(n, str) else str(n) for n in own)]

    @property
    def above_bound(self) -> list[Any]:
        """The routes whose undisturbed maximum is above their bound (``--fail-on-miss``'s verdict)."""
        return list(self.data["bounds"]["above_bound"])

    @property
    def interrupted(self) -> str | None:
        """``SIGINT`` or ``SIGTERM`` when the run was stopped before its duration, else None."""
        return self.data.get("interrupted_by")

    def to_json(self, indent: int | None = 2) -> str:
        """The report as ``rtnetlab testbed run --json`` prints it (``-o`` writes the same)."""
        return json.dumps(self.data, indent=indent, allow_nan=False) + "\n"


def _choice(option: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise UserError(f"{option}: expected one of {', '.join(allowed)}, got '{value}'")
    return value


def run_testbed(network: Network, duration: str | float = "10s", *, switch: str = "kernel",
                baseline: str | float = "1s", seed: int = 1, sizes: str = "max", release: str = "random",
                capture: str | Path | None = None, keep: bool = False, simulate: bool = True,
                rt_priority: int = 50, mute: Sequence[str] | None = None, time_scale: float = 1.0,
                disturbance: str | float = "100us", calibrate: bool = False,
                output: str | Path | None = None, inputs: Sequence[Path] = (),
                say: Callable[[str], None] | None = None, add_modelled: bool = False) -> TestbedResult:
    """`rtnetlab.Network.run_testbed` (its documentation); `inputs`: files `output` must not
    overwrite (the description's)."""
    from rtnetlab import limits
    from rtnetlab.io import output as outfiles
    from rtnetlab.simulate import _quantity
    from rtnetlab.testbed import netns
    from rtnetlab.testbed import run as tb

    netns.check_privileges()
    seconds = _quantity("duration", duration, "--duration")
    if not seconds > 0:
        raise UserError(f"--duration: must be positive, got {duration}")
    limits.check("duration", seconds, "--duration", str(duration))
    base = _quantity("duration", baseline, "--baseline")
    if base < 0:
        raise UserError(f"--baseline: must not be negative, got {baseline}")
    limits.check("duration", base, "--baseline", str(baseline))
    if not tb.MAX_TIME_SCALE >= time_scale >= 1:
        raise UserError(f"--time-scale: between 1 and {tb.MAX_TIME_SCALE:g}, got {time_scale:g}")
    threshold = _quantity("duration", disturbance, "--disturbance")
    if not 0 < threshold <= 1:
        raise UserError(f"--disturbance: in (0, 1s], got {disturbance}")
    if not 0 <= rt_priority <= 99:
        raise UserError(f"--rt-priority: between 0 and 99, got {rt_priority}")
    mode = _choice("--switch", switch, ("kernel", "user"))
    _choice("--sizes", sizes, ("max", "min", "uniform"))
    _choice("--release", release, ("random", "synchronized"))
    out = None if output is None else Path(output)
    if out is not None:
        outfiles.check({"--output": out}, list(inputs))
    engine = network.engine
    try:
        report: dict[str, Any] = tb.run(
            engine, network.data, mode=mode, duration_ns=round(seconds * 1e9), baseline_ns=round(base * 1e9),
            seed=seed, sizes=sizes, release=release, capture=None if capture is None else Path(capture),
            keep=keep, simulate=simulate, rt_priority=rt_priority, muted=None if mute is None else list(mute),
            time_scale=time_scale, disturbance_ns=round(threshold * 1e9), recalibrate=calibrate, say=say,
            add_modelled=add_modelled)
    except KeyboardInterrupt as e:
        # The nodes were stopped and reported what they measured: the result says so.
        partial = getattr(e, "report", None)
        if partial is None:
            raise
        report = partial
    report["warnings"] = list(engine.warnings) + report.get("warnings", [])
    above = report["bounds"]["above_bound"]
    if above:
        report["warnings"].append(
            f"UNDISTURBED MAXIMUM ABOVE ITS BOUND on {len(above)} route(s): frames the host did not "
            "disturb took longer than the bound allows (a possible soundness problem)")
    undecided = report["bounds"]["undecided"]
    if undecided:
        report["warnings"].append(
            f"undecided on this host: {len(undecided)} route(s) with too few frames the host did not "
            "disturb (a larger --time-scale or a quieter moment)")
    if out is not None:
        outfiles.atomic_write(out, json.dumps(report, indent=2, allow_nan=False) + "\n")
    return TestbedResult(report, network)


def testbed_up(network: Network, switch: str = "kernel") -> dict[str, Any]:
    """`rtnetlab.Network.testbed_up` (its documentation)."""
    from rtnetlab.testbed import netns
    from rtnetlab.testbed import run as tb

    netns.check_privileges()
    mode = _choice("--switch", switch, ("kernel", "user"))
    engine = network.engine
    r, plan = tb.up(engine, network.data, mode)
    names = {plan["nodes"][k]["name"]: r.netns(k) for k in range(len(plan["nodes"]))}
    return {"run": r.prefix, "namespaces": names, "warnings": list(engine.warnings)}


def testbed_down(run: str | None = None, *, all: bool = False, force: bool = False) -> dict[str, Any]:
    """Removes what testbed and laboratory runs made, as their records list it (``rtnetlab
    testbed down``): namespaces (their links and qdiscs go with them), processes, control
    groups, temporary folders; of run `run` (``rtnl-xxxxxx``), or with `all` of every run whose
    process is gone and every setup left by `rtnetlab.Network.testbed_up` or ``keep``.
    Look-alikes that no record names are listed (``look_alikes``) and removed only with
    `force`; a run still going is left alone (``running``). ``left`` lists what could not be
    removed."""
    from rtnetlab import ownership

    if (run is None) == (not all):
        raise UserError("testbed down: give a run (rtnl-xxxxxx) or --all")
    report: dict[str, Any] = ownership.clean(None if all else run, force=force)
    return report
