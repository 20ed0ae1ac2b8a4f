"""The seeds' figures as sweeps (`rtnetlab experiment NAME --out DIR`): rows to Parquet, means
with t intervals, plots beside the paper's numbers.

* `seed000-fig8`: seed 000 Fig. 8, mean and p99 latency per class (avionics, multimedia, best
  effort) against the number of VLs, every switch port running FIFO, static priority, WF2Q or
  D2DRR (ω = 6 : 3 : 1, Δ = 1000 B), 50 runs per point, 95 % intervals.
* `seed001e-fig6`: seed 001E Fig. 6, DOPA's acceptance ratio (PARTITION with OPA and with
  deadline monotonic) against total density, processors and applications; each row is one seed's
  batch of task sets per panel, the interval is over the seeds.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from rtnetlab import limits
from rtnetlab.sweep.cluster import Remote
from rtnetlab.sweep.options import (
    JsonOpt,
    OutDirOpt,
    ResumeOpt,
    RunsOpt,
    SchedulerOpt,
    TlsCaOpt,
    TlsCertOpt,
    TlsKeyOpt,
    TrustOpt,
    WorkersOpt,
    check_scheduler,
    emit,
)
from rtnetlab.sweep.spec import Axis, SweepSpec

# Seed 000's simulated figures (Fig. 8, Fig. 9, the ω search, Fig. 11) share these.
VlsOpt = Annotated[str, typer.Option("--vls", help="Numbers of VLs (the load axis), comma-separated.")]
DurationOpt = Annotated[str, typer.Option("--duration", help="Simulated time per run.")]
LinkRateOpt = Annotated[str, typer.Option("--link-rate", help="Rate of every link (sets the load).")]


@dataclass
class Swept:
    """A figure's sweep, run: the SPEC, every row in --out (resumed ones too), the runner's
    outcome and when the figure started."""

    spec: SweepSpec
    rows: list[dict]
    outcome: Any
    t0: float

    def summary(self, metrics: list[str] | None = None) -> list[dict]:
        """Per point: the mean and interval of each metric (default: every kept one)."""
        from rtnetlab.sweep import aggregate

        keep = self.spec.keep if metrics is None else metrics
        return aggregate.summarise(self.rows, self.spec.param_names, keep, self.spec.confidence)

    def doc(self, figure: str, counts: dict | None = None, **rest: Any) -> dict:
        """The figure's document: its name, its rows, failed ones (and `counts`), rows run now,
        wall time, then `rest`."""
        return {
            "figure": figure,
            "rows": len(self.rows),
            "failed": sum(1 for r in self.rows if r["error"]),
            **(counts or {}),
            "ran": self.outcome.ran,
            "wall_s": time.perf_counter() - self.t0,
            **rest,
        }


def sweep_figure(
    spec: SweepSpec,
    out: Path,
    workers: int | None,
    scheduler: Remote | None,
    resume: bool,
    as_json: bool,
    batch_fn: Any = None,
    batch_args: tuple = (),
) -> Swept:
    """Runs a figure's sweep into `out` (resumable; progress unless --json) and reads its rows."""
    from rtnetlab.sweep import runner

    t0 = time.perf_counter()
    outcome = runner.run_sweep(
        spec,
        out,
        workers,
        scheduler,
        resume,
        progress=None if not as_json else False,
        batch_fn=batch_fn,
        batch_args=batch_args,
    )
    return Swept(spec, runner.rows_as_dicts(runner.read_rows(out)), outcome, t0)


#: Seed 000's class factors ω (avionics : multimedia : best effort = 6 : 3 : 1), Δ = 1000 B.
FACTORS = {"avionics": 6.0, "multimedia": 3.0, "best_effort": 1.0}
#: (label, scheduler name on the switches, named configurations).
FIG8_SCHEDULERS = [
    ("FIFO", "fifo", {}),
    ("SP", "static_priority", {}),
    ("WF2Q", "s", {"s": {"kind": "wf2q", "weights": FACTORS}}),
    ("D2DRR", "s", {"s": {"kind": "d2drr", "base_quantum": "1000B", "factors": FACTORS}}),
]
#: Seed 000 Fig. 8 as printed (average latency, ms), per class and scheduler.
FIG8_PAPER_MS = {
    "avionics": {"D2DRR": 4.6, "WF2Q": 12.1, "SP": 17.6, "FIFO": 29.8},
    "multimedia": {"D2DRR": 8.2, "WF2Q": 17.6, "SP": 21.2, "FIFO": 30.4},
    "best_effort": {"D2DRR": 12.5, "WF2Q": 22.7, "SP": 26.3, "FIFO": 30.9},
}


def fig8_spec_data(vls: list[int], runs: int, duration: str, link_rate: str) -> dict:
    keep = [f"simulate.{s}.{c}" for c in FACTORS for s in ("mean_us", "p99_us")]
    return {
        "name": "seed 000 Fig. 8",
        # Each run draws its network from its seed (the same network for the four disciplines),
        # so the intervals cover the draw of the VL set as well as release phases and frame sizes.
        "network": {"generate": {"virtual_links": vls[0], "switches": 4, "planes": 1}},
        "vary": [
            {"generate.virtual_links": vls},
            {
                "tag.scheduler": [s[0] for s in FIG8_SCHEDULERS],
                "network.switches[*].scheduler": [s[1] for s in FIG8_SCHEDULERS],
                "network.schedulers": [s[2] for s in FIG8_SCHEDULERS],
            },
            {"network.links[*].rate": [link_rate]},
        ],
        "seeds": runs,
        "run": {
            "simulate": {"duration": duration, "release": "random", "frame_sizes": "uniform", "bounds": False}
        },
        "keep": keep,
        "confidence": 0.95,
    }


def seed000_fig8(
    out: OutDirOpt,
    vls: VlsOpt = "40,80,120,160,200",
    runs: RunsOpt = 50,
    duration: DurationOpt = "0.5s",
    link_rate: LinkRateOpt = "10Mbps",
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
    tls_ca: TlsCaOpt = None,
    tls_cert: TlsCertOpt = None,
    tls_key: TlsKeyOpt = None,
    trust_scheduler: TrustOpt = False,
    resume: ResumeOpt = False,
    as_json: JsonOpt = False,
) -> dict:
    """Seed 000 Fig. 8: latency per class vs number of VLs, FIFO / SP / WF2Q / D2DRR."""
    from rtnetlab.io import output as outfiles
    from rtnetlab.sweep import aggregate
    from rtnetlab.sweep import spec as spec_mod
    from rtnetlab.text import comma_list

    remote = check_scheduler(scheduler, tls_ca, tls_cert, tls_key, trust_scheduler)
    bad = "{option}: '{text}' is not a comma-separated list of whole numbers"
    counts = comma_list("--vls", vls, int, bad=bad)
    data = fig8_spec_data(counts, runs, duration, link_rate)
    spec = spec_mod.parse(data, "seed000-fig8", Path.cwd())
    swept = sweep_figure(spec, out, workers, remote, resume, as_json)
    summary = swept.summary()
    plots = []
    for c in FACTORS:
        for stat, label in (("mean_us", "mean"), ("p99_us", "p99")):
            metric = f"simulate.{stat}.{c}"
            ref = (
                [(counts[-1], FIG8_PAPER_MS[c][s] * 1000, f"paper {s}") for s in FIG8_PAPER_MS[c]]
                if (stat == "mean_us")
                else None
            )
            plots.append(
                aggregate.plot(
                    summary,
                    "generate.virtual_links",
                    metric,
                    ["tag.scheduler"],
                    out / f"fig8_{label}_{c}.png",
                    title=f"seed 000 Fig. 8: {label} latency, {c} ({runs} runs, 95 % CI)",
                    ylabel=f"{label} latency (µs)",
                    xlabel="virtual links",
                    reference=ref,
                    logy=True,
                )
            )
    table = []
    for e in summary:
        for c in FACTORS:
            table.append(
                {
                    "virtual_links": e["generate.virtual_links"],
                    "scheduler": e["tag.scheduler"],
                    "class": c,
                    "runs": e["rows"] - e["failed"],
                    "mean_us": e[f"simulate.mean_us.{c}"]["mean"],
                    "mean_ci_us": e[f"simulate.mean_us.{c}"]["half_width"],
                    "p99_us": e[f"simulate.p99_us.{c}"]["mean"],
                    "p99_ci_us": e[f"simulate.p99_us.{c}"]["half_width"],
                }
            )
    outfiles.atomic_write(out / "fig8.csv", aggregate.csv_text(table))
    doc = swept.doc(
        "seed 000 Fig. 8",
        table=table,
        paper_mean_ms=FIG8_PAPER_MS,
        files=[str(p) for p in plots] + [str(out / "fig8.csv")],
    )
    return _finish(doc)


#: Seed 001E Fig. 6: panel -> (x label, the paper's point (x, OPA, DM)).
FIG6_PANELS = {
    "density": ("total density", (9.0, 0.52, 0.16)),
    "processors": ("processors", (9.0, 0.70, 0.30)),
    "applications": ("applications", (40.0, 0.69, 0.34)),
}


def fig6_batch(points: int, sets: int, batch: list[tuple[int, int, dict, str]]) -> list[dict]:
    """Rows of seed 001E Fig. 6: one per (panel, seed): the x values and both acceptance ratios
    at each of the panel's points, over `sets` task sets per point."""
    from rtnetlab import _core
    from rtnetlab.sweep.points import record

    def metrics(params: dict, seed: int) -> dict[str, float]:
        curve = _core.dopa_fig6(params["tag.panel"], points, sets, seed, "local-window", "release-jitter", 1)
        out: dict[str, float] = {}
        for k, (x, opa, dm) in enumerate(curve):
            out.update({f"x.{k}": x, f"opa.{k}": opa, f"dm.{k}": dm})
        return out

    keep = fig6_keep(points)
    return [record(task, keep, lambda t=task: metrics(t[2], t[1])) for task in batch]


def fig6_keep(points: int) -> list[str]:
    return [f"{m}.{k}" for k in range(points) for m in ("x", "opa", "dm")]


def seed001e_fig6(
    out: OutDirOpt,
    seeds: Annotated[
        int,
        typer.Option(
            "--seeds",
            min=2,
            callback=limits.option("rows"),
            help="Seeds per panel (the interval is over them).",
        ),
    ] = 20,
    sets: Annotated[int, typer.Option("--sets", min=1, help="Task sets per point and seed.")] = 50,
    points: Annotated[int, typer.Option("--points", min=2, help="Points per panel.")] = 10,
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
    tls_ca: TlsCaOpt = None,
    tls_cert: TlsCertOpt = None,
    tls_key: TlsKeyOpt = None,
    trust_scheduler: TrustOpt = False,
    resume: ResumeOpt = False,
    as_json: JsonOpt = False,
) -> dict:
    """Seed 001E Fig. 6: DOPA acceptance ratio (OPA vs DM) vs density, processors, applications."""
    from rtnetlab.io import output as outfiles
    from rtnetlab.sweep import aggregate
    from rtnetlab.sweep.points import engine_version

    # Every task set of every point, panel and seed is drawn and partitioned; the points are
    # columns of the rows: all within `rows`, before anything is built.
    counts = {"--seeds": seeds, "--sets": sets, "--points": points}
    limits.check_product("rows", counts, "task sets", 3, "panels")
    remote = check_scheduler(scheduler, tls_ca, tls_cert, tls_key, trust_scheduler)
    spec = SweepSpec(
        source="seed001e-fig6",
        name="seed 001E Fig. 6",
        network={"dopa_fig6": {"points": points, "sets": sets, "engine": engine_version()}},
        axes=[Axis(["tag.panel"], [[p] for p in FIG6_PANELS])],
        seeds=list(range(1, seeds + 1)),
        run={"dopa": {"dm_key": "local-window", "local_test": "release-jitter"}},
        keep=fig6_keep(points),
        confidence=0.95,
        points_per_task=1,
    )
    swept = sweep_figure(spec, out, workers, remote, resume, as_json, fig6_batch, (points, sets))
    rows = swept.rows
    table, plots = [], []
    for panel, (label, (px, popa, pdm)) in FIG6_PANELS.items():
        rs = [r for r in rows if r["tag.panel"] == panel and not r["error"]]
        entries = []
        for k in range(points):
            xs = {r[f"x.{k}"] for r in rs}
            opa = aggregate.mean_ci([r[f"opa.{k}"] for r in rs], 0.95)
            dm = aggregate.mean_ci([r[f"dm.{k}"] for r in rs], 0.95)
            entries.append(
                {
                    "panel": panel,
                    "x": min(xs) if xs else None,
                    "sets": sets * len(rs),
                    "opa": opa["mean"],
                    "opa_ci": opa["half_width"],
                    "dm": dm["mean"],
                    "dm_ci": dm["half_width"],
                }
            )
        table += entries
        summary = [
            {
                "x": e["x"],
                "policy": pol,
                "acceptance": {"mean": e[pol.lower()], "half_width": e[f"{pol.lower()}_ci"]},
            }
            for e in entries
            for pol in ("OPA", "DM")
        ]
        plots.append(
            aggregate.plot(
                summary,
                "x",
                "acceptance",
                ["policy"],
                out / f"fig6_{panel}.png",
                title=f"seed 001E Fig. 6 ({panel}): {sets * seeds} sets per point, 95 % CI",
                xlabel=label,
                ylabel="accepted sets",
                reference=[(px, popa, "paper OPA"), (px, pdm, "paper DM")],
            )
        )
    outfiles.atomic_write(out / "fig6.csv", aggregate.csv_text(table))
    doc = swept.doc(
        "seed 001E Fig. 6",
        table=table,
        paper={p: v[1] for p, v in FIG6_PANELS.items()},
        files=[str(p) for p in plots] + [str(out / "fig6.csv")],
    )
    return _finish(doc)


def _finish(doc: dict) -> dict:
    """A figure's document written beside its files (figure.json); returns it."""
    from rtnetlab.io import output as outfiles

    outdir = Path(doc["files"][-1]).parent
    outfiles.atomic_write(outdir / "figure.json", json.dumps(doc, indent=1, default=str) + "\n")
    return doc


def show(doc: dict, as_json: bool) -> None:
    """A figure's document as its command prints it: the JSON, or its counts and files."""
    if as_json:
        emit(doc)
        return
    from rich.console import Console

    con = Console(emoji=False, highlight=False, soft_wrap=True)
    con.print(f"{doc['figure']}: {doc['rows']} rows ({doc['failed']} failed) in {doc['wall_s']:.0f} s")
    for f in doc["files"]:
        con.print(f"wrote {f}")


def command_of(name: str, compute: Callable[..., dict],
               shown: Callable[[dict, bool], None] = show) -> Callable[..., None]:
    """The command `rtnetlab experiment NAME`: `compute`'s options (``--json`` among them), run
    through the API (``rt.experiment(NAME, ...)``, which applies the options' rules and limits
    to its keywords as the command line does), then `shown`."""

    @functools.wraps(compute)
    def command(**options: Any) -> None:
        import rtnetlab as rt

        as_json = bool(options.pop("as_json", False))
        doc = rt.experiment(name, progress=None if not as_json else False, **options).document
        shown(doc, as_json)

    return command


def register(experiment_app: typer.Typer) -> None:
    experiment_app.command("seed000-fig8")(command_of("seed000-fig8", seed000_fig8))
    experiment_app.command("seed001e-fig6")(command_of("seed001e-fig6", seed001e_fig6))
