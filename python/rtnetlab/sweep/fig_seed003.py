"""`rtnetlab experiment seed003-fabric`: seed 003's fabric latency per service class against the
offered load, DTable (decoupled) vs DTable-WF2Q vs credit-aware SCFQ vs credit-aware DRR, with
the scheduler configurations and Tables 4-5 from `rtnetlab configure dtable`.

One row per (load, scheduler, run). A run is the 64-endpoint BMIN of docs/FABRIC.md under one
scheduler at every egress port; the run's seed fixes the traffic, which does not depend on the
scheduler, so the four schedulers of a run see the same packets. NC and QoS injections are Table
5's; the three best-effort classes share the rest of the load equally (the seed raises them from
0.015 to 0.093 each). Per class: offered and accepted load, mean and p99 latency (interface to
delivery), and the latency CDF on a fixed grid, so that the CDFs at the heaviest load average
over the runs like every other metric.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Annotated

import typer

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
)
from rtnetlab.sweep.spec import Axis, SweepSpec

CLASSES = ["NC", "VO", "VI", "CL", "EE", "BE", "BK"]
QOS = ["NC", "VO", "VI", "CL"]
BEST_EFFORT = ["EE", "BE", "BK"]
#: (label, name in `configure dtable`'s schedulers).
SCHEDULERS = [("DTable", "dtable"), ("DTable-WF2Q", "dtable_wf2q"), ("SCFQ", "scfq"), ("DRR", "drr")]
#: Seed 003's Tables 4 and 5 requirements (examples/dtable/table4_requirements.yaml; a test
#: checks they are the same): N = 64, GMTU = 2048 B, w = 2, k = 0.5, NC takes the leftover.
TABLE4_REQUIREMENTS = {
    "entries": 64,
    "gmtu": "2048B",
    "credit": "64B",
    "w": 2,
    "k": 0.5,
    "leftover": "NC",
    "classes": [
        {"name": "NC", "max_distance": 2, "share": 0.093, "mtu": "192B"},
        {"name": "VO", "max_distance": 4, "share": 0.046, "mtu": "192B"},
        {"name": "VI", "max_distance": 8, "share": 0.5, "mtu": "2048B"},
        {"name": "CL", "max_distance": 16, "share": 0.203, "mtu": "2048B"},
        {"name": "EE", "max_distance": 32, "share": 0.093, "mtu": "1024B"},
        {"name": "BE", "max_distance": 64, "share": 0.046, "mtu": "1024B"},
        {"name": "BK", "max_distance": 64, "share": 0.015, "mtu": "1024B"},
    ],
}
#: Table 4 as printed: distance, entries, % entries, MTU_i (B), min φ, max φ.
PAPER_TABLE4 = {
    "NC": (2, 32, 50, 192, 0.093, 2),
    "VO": (4, 16, 25, 192, 0.046, 1),
    "VI": (8, 8, 12.5, 2048, 0.250, 0.5),
    "CL": (16, 4, 6.25, 2048, 0.125, 0.25),
    "EE": (32, 2, 3.125, 1024, 0.031, 0.125),
    "BE": (64, 1, 1.562, 1024, 0.015, 0.062),
    "BK": (64, 1, 1.562, 1024, 0.015, 0.062),
}
#: Table 5 as printed: φ, DTable entries / E.W. / T.W., WF2Q entries / E.W. / T.W., SCFQ weight,
#: DRR quantum (credits). BE's WF2Q T.W. is printed 69 (3 × 32 = 96: catalogue I-003-2).
PAPER_TABLE5 = {
    "NC": (0.093, 32, 3, 96, 6, 32, 192, 0.093, 96),
    "VO": (0.046, 16, 3, 48, 3, 32, 96, 0.046, 48),
    "VI": (0.500, 8, 64, 512, 32, 32, 1024, 0.500, 512),
    "CL": (0.203, 4, 52, 208, 13, 32, 416, 0.203, 208),
    "EE": (0.093, 2, 48, 96, 6, 32, 192, 0.093, 96),
    "BE": (0.046, 1, 48, 48, 3, 32, 69, 0.046, 48),
    "BK": (0.015, 1, 16, 16, 1, 32, 32, 0.015, 16),
}
#: Table 5's NC and QoS injections (fractions of the reference rate).
QOS_INJECTION = {"NC": 0.015, "VO": 0.046, "VI": 0.453, "CL": 0.203}
#: The seed's claims (§4(d)), in %.
PAPER_CLAIMS = {
    "dtable_vs_scfq_within": 10.0,
    "dtable_over_drr_mean": 190.0,
    "dtable_over_drr_p99": 260.0,
    "dtable_over_wf2q_nc_vo": 80.0,
    "dtable_worse_than_wf2q_vi_cl": 10.0,
    "best_effort_saturates_from_load": 0.85,
}
#: The CDF grid: latencies (µs) log-spaced from 1 µs to 100 ms, 10 per decade.
CDF_US = [round(10 ** (k / 10), 3) for k in range(0, 51)]
#: What counts as "gets all it injects": accepted / offered at least this.
ALL_ACCEPTED = 0.99


def keep_names() -> list[str]:
    names = ["checks_hold", "offered_load", "accepted_load"]
    for c in CLASSES:
        names += [f"offered.{c}", f"accepted.{c}", f"mean_us.{c}", f"p99_us.{c}"]
    names += [f"cdf.{c}.{k}" for c in CLASSES for k in range(len(CDF_US))]
    return names


def scenario_for(base: dict, schedulers: dict, scheduler: str, load: float, seed: int) -> dict:
    """The run's scenario: `base` with the configured schedulers, the load's best-effort
    injection ((load - NC and QoS) / 3 per best-effort class) and the run's seed."""
    s = copy.deepcopy(base)
    s["schedulers"] = schedulers
    s["scheduler"] = scheduler
    s["seed"] = seed
    per_be = (load - sum(QOS_INJECTION.values())) / len(BEST_EFFORT)
    for c in s["classes"]:
        c["injection"] = QOS_INJECTION[c["name"]] if c["name"] in QOS_INJECTION else per_be
    return s


def cdf(hist: list, grid_us: list[float]) -> list[float | None]:
    """The fraction of packets whose latency bucket's upper edge is at most each grid point (a
    lower estimate within the histogram's 1/128)."""
    total = sum(n for _, n in hist)
    if total == 0:
        return [None] * len(grid_us)
    pairs = sorted(hist)
    out, seen, j = [], 0, 0
    for x in grid_us:
        while j < len(pairs) and pairs[j][0] <= x * 1000:
            seen += pairs[j][1]
            j += 1
        out.append(seen / total)
    return out


def row_metrics(report: dict) -> dict[str, float | None]:
    m: dict[str, float | None] = {
        "checks_hold": float(_checks_hold(report["checks"])),
        "offered_load": report["offered_load"],
        "accepted_load": report["accepted_load"],
    }
    for c in report["classes"]:
        n = c["class"]
        m[f"offered.{n}"] = c["offered_load"]
        m[f"accepted.{n}"] = c["accepted_load"]
        lat = c["latency"]
        m[f"mean_us.{n}"] = lat["mean_us"] if lat["count"] else None
        m[f"p99_us.{n}"] = lat["p99_us"] if lat["count"] else None
        for k, v in enumerate(cdf(c["histogram_ns"], CDF_US)):
            m[f"cdf.{n}.{k}"] = v
    return m


def _checks_hold(ch: dict) -> bool:
    # FabricChecks::all_hold: no loss, no overflow, no credit error, in order, conserved.
    return (
        ch["conserved"]
        and ch["out_of_order"] == 0
        and ch["buffer_overflows"] == 0
        and ch["credit_violations"] == 0
        and max(ch["max_interface_fill"], ch["max_input_fill"], ch["max_output_fill"]) <= 1.0
    )


def fabric_batch(base: dict, schedulers: dict, batch: list[tuple[int, int, dict, str]]) -> list[dict]:
    """Rows of seed 003's load sweep: one fabric run per (load, scheduler, seed)."""
    from rtnetlab import _core
    from rtnetlab.sweep.points import record

    def metrics(params: dict, seed: int) -> dict[str, float | None]:
        name = dict(SCHEDULERS)[params["tag.scheduler"]]
        scenario = scenario_for(base, schedulers, name, params["tag.load"], seed)
        return row_metrics(json.loads(_core.fabric_run(json.dumps(scenario))))

    keep = keep_names()
    return [record(task, keep, lambda t=task: metrics(t[2], t[1])) for task in batch]


def configure(requirements: dict) -> dict:
    """`rtnetlab configure dtable`'s report for `requirements`."""
    from rtnetlab import _core
    from rtnetlab.errors import UserError

    try:
        report = json.loads(_core.configure_dtable(json.dumps(requirements)))
    except ValueError as e:
        raise UserError(f"--requirements: {e}") from None
    if report.get("feasible") is False:
        raise UserError(f"--requirements: no feasible table: {report['reason']}")
    return report


def tables_4_5(report: dict) -> tuple[list[dict], list[dict]]:
    """Tables 4 and 5 from the configuration report, the paper's printed values beside."""
    t4 = []
    for c in report["decoupling"]["plan"]["classes"]:
        p = PAPER_TABLE4.get(c["name"])
        t4.append(
            {
                "class": c["name"],
                "distance": c["distance"],
                "entries": c["entries"],
                "percent_entries": 100 * c["entry_fraction"],
                "mtu_bytes": c["mtu"] * 64,
                "min_share": c["min_share"],
                "max_share": c["max_share"],
                **(
                    {
                        "paper_" + k: v
                        for k, v in zip(
                            ("distance", "entries", "percent_entries", "mtu_bytes", "min_share", "max_share"),
                            p,
                            strict=True,
                        )
                    }
                    if p
                    else {}
                ),
            }
        )
    base = report["baselines"]
    t5 = []
    for k, w in enumerate(report["decoupling"]["weights"]):
        p = PAPER_TABLE5.get(w["name"])
        wf2q_entries = base["wf2q_entries"][k]
        t5.append(
            {
                "class": w["name"],
                "share": w["share"],
                "dtable_entries": len(w["entry_weights"]),
                "dtable_entry_weights": "/".join(str(x) for x in sorted(set(w["entry_weights"]))),
                "dtable_total": w["total_weight"],
                "wf2q_entries": wf2q_entries,
                "wf2q_entry_weight": base["wf2q_entry_weight"],
                "wf2q_total": wf2q_entries * base["wf2q_entry_weight"],
                "scfq_weight": base["scfq_weights"][k],
                "drr_quantum": base["drr_quanta"][k],
                **(
                    {
                        "paper_" + n: v
                        for n, v in zip(
                            (
                                "share",
                                "dtable_entries",
                                "dtable_entry_weight",
                                "dtable_total",
                                "wf2q_entries",
                                "wf2q_entry_weight",
                                "wf2q_total",
                                "scfq_weight",
                                "drr_quantum",
                            ),
                            p,
                            strict=True,
                        )
                    }
                    if p
                    else {}
                ),
            }
        )
    return t4, t5


def _pct(a: float | None, b: float | None) -> float | None:
    """How much larger a is than b, in % of b."""
    if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)) or b <= 0:
        return None
    return 100.0 * (a / b - 1.0)


def claims(table: list[dict], loads: list[float]) -> dict:
    """The seed's claims (§4(d)) against the table of means (per load, scheduler, class)."""
    at = {(e["load"], e["scheduler"], e["class"]): e for e in table}

    def val(load, sched, cls, stat):
        e = at.get((load, sched, cls))
        return None if e is None else e[stat]

    def extreme(fn, pairs, stat, pick=max):
        vals = [(fn(load, c, stat), load, c) for load in loads for c in pairs]
        vals = [v for v in vals if v[0] is not None]
        if not vals:
            return None
        v, load, c = pick(vals)
        return {"percent": v, "load": load, "class": c}

    def over(a, b):
        return lambda load, c, stat: _pct(val(load, a, c, stat), val(load, b, c, stat))

    out: dict = {}
    # DTable within 10 % of SCFQ (NC and QoS): the largest gap either way.
    gap = lambda load, c, stat: (  # noqa: E731
        None if (x := _pct(val(load, "DTable", c, stat), val(load, "SCFQ", c, stat))) is None else abs(x)
    )
    for stat in ("mean_us", "p99_us"):
        out[f"dtable_vs_scfq_{stat}"] = extreme(gap, QOS, stat)
        out[f"dtable_over_drr_{stat}"] = extreme(over("DRR", "DTable"), QOS, stat)
        out[f"dtable_over_wf2q_nc_vo_{stat}"] = extreme(over("DTable-WF2Q", "DTable"), ["NC", "VO"], stat)
        out[f"dtable_worse_than_wf2q_vi_cl_{stat}"] = extreme(
            over("DTable", "DTable-WF2Q"), ["VI", "CL"], stat
        )
    # NC and QoS get all they inject; best effort saturates from some load on.
    ratio = [(e["accepted"] / e["offered"], e) for e in table if e["offered"] and e["accepted"] is not None]
    worst = min(((r, e) for r, e in ratio if e["class"] in QOS), key=lambda x: x[0], default=None)
    out["qos_accepted_over_offered_min"] = (
        None
        if worst is None
        else {
            "ratio": worst[0],
            "load": worst[1]["load"],
            "scheduler": worst[1]["scheduler"],
            "class": worst[1]["class"],
        }
    )
    sat = [e["load"] for r, e in ratio if e["class"] in BEST_EFFORT and r < ALL_ACCEPTED]
    out["best_effort_saturates_from_load"] = min(sat) if sat else None
    # Orderings at the heaviest load, best first, by mean latency.
    top = max(loads)
    out["order_at_max_load"] = {
        c: [
            s
            for s, _ in sorted(
                (
                    (label, val(top, label, c, "mean_us"))
                    for label, _ in SCHEDULERS
                    if val(top, label, c, "mean_us") is not None
                ),
                key=lambda x: x[1],
            )
        ]
        for c in CLASSES
    }
    return out


def _cdf_plot(rows: list[dict], load: float, out: Path, runs: int) -> Path:
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rtnetlab.io import output as outfiles

    fig, axes = plt.subplots(2, 4, figsize=(13, 6), sharex=True, sharey=True)
    for ax, c in zip(axes.flat, CLASSES, strict=False):
        for label, _ in SCHEDULERS:
            rs = [r for r in rows if r["tag.scheduler"] == label and r["tag.load"] == load and not r["error"]]
            ys = []
            for k in range(len(CDF_US)):
                vals = [r[f"cdf.{c}.{k}"] for r in rs if r[f"cdf.{c}.{k}"] is not None]
                ys.append(sum(vals) / len(vals) if vals else math.nan)
            ax.plot(CDF_US, ys, label=label)
        ax.set_xscale("log")
        ax.set_title(c, fontsize=9)
        ax.grid(alpha=0.3)
    axes.flat[-1].axis("off")
    axes[0][0].legend(fontsize=7)
    for ax in axes[1]:
        ax.set_xlabel("latency (µs)")
    for ax in axes[:, 0]:
        ax.set_ylabel("P(latency ≤ x)")
    fig.suptitle(f"seed 003: latency CDF per class at load {load:g} (mean of {runs} runs)", fontsize=10)
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=90)
    plt.close(fig)
    path = out / "cdf_max_load.png"
    outfiles.atomic_write(path, png.getvalue())
    return path


def seed003_fabric(
    out: OutDirOpt,
    runs: RunsOpt = 10,
    loads: Annotated[
        str,
        typer.Option(
            "--loads", help="Total offered loads (fractions of the reference rate), comma-separated."
        ),
    ] = "0.762,0.82,0.88,0.94,0.996",
    duration: Annotated[str, typer.Option("--duration", help="Measured simulated time per run.")] = "20ms",
    warmup: Annotated[str, typer.Option("--warmup", help="Simulated time before measuring.")] = "5ms",
    reference_rate: Annotated[
        str, typer.Option("--reference-rate", help="What the loads are fractions of (the seed: 2.5Gbps).")
    ] = "2Gbps",
    endpoints: Annotated[
        int, typer.Option("--endpoints", min=2, help="64: the seed's BMIN; else one switch of this many.")
    ] = 64,
    requirements: Annotated[
        Path | None,
        typer.Option("--requirements", help="`configure dtable` requirements (default: Table 4's)."),
    ] = None,
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
    tls_ca: TlsCaOpt = None,
    tls_cert: TlsCertOpt = None,
    tls_key: TlsKeyOpt = None,
    trust_scheduler: TrustOpt = False,
    resume: ResumeOpt = False,
    as_json: JsonOpt = False,
) -> dict:
    """Seed 003: fabric latency per class vs load, DTable / DTable-WF2Q / SCFQ / DRR, Tables 4-5."""
    from rtnetlab import limits
    from rtnetlab.errors import UserError
    from rtnetlab.experiments.seed003_fabric import fabric_scenario_path
    from rtnetlab.io import formats
    from rtnetlab.io import output as outfiles
    from rtnetlab.sweep import aggregate
    from rtnetlab.sweep.figures import _finish, sweep_figure
    from rtnetlab.sweep.points import engine_version
    from rtnetlab.text import comma_list

    limits.check("nodes", endpoints, "--endpoints", f"{endpoints:,} end points")
    remote = check_scheduler(scheduler, tls_ca, tls_cert, tls_key, trust_scheduler)
    bad = "{option}: '{text}' is not a comma-separated list of numbers"
    xs = comma_list("--loads", loads, float, bad=bad)
    floor = sum(QOS_INJECTION.values())
    for x in xs:
        if not floor < x <= 2.0:
            raise UserError(
                f"--loads: {x:g} must exceed the NC and QoS injection {floor:g} (and be at most 2)"
            )
    reqs = TABLE4_REQUIREMENTS if requirements is None else formats.read(requirements)
    report = configure(reqs)
    missing = [n for _, n in SCHEDULERS if n not in report["schedulers"]]
    if missing:
        raise UserError(f"--requirements: the configuration has no {', '.join(missing)} scheduler")
    base = formats.read(fabric_scenario_path())
    base.update({"duration": duration, "warmup": warmup, "reference_rate": reference_rate})
    if endpoints != 64:
        base["topology"] = {"kind": "single_switch", "endpoints": endpoints}
    # A wrong duration or rate stops here, before the cluster starts.
    from rtnetlab import _core

    for option, kind, text in (
        ("--duration", "duration", duration),
        ("--warmup", "duration", warmup),
        ("--reference-rate", "rate", reference_rate),
    ):
        try:
            value = _core.parse_quantity(kind, text)
        except ValueError as e:
            raise UserError(f"{option}: {e}") from None
        if value <= 0 and option != "--warmup":
            raise UserError(f"{option}: must be positive, got {text}")
    spec = SweepSpec(
        source="seed003-fabric",
        name="seed 003 fabric latency vs load",
        network={"fabric": base, "schedulers": report["schedulers"], "engine": engine_version()},
        axes=[Axis(["tag.load"], [[x] for x in xs]), Axis(["tag.scheduler"], [[s] for s, _ in SCHEDULERS])],
        seeds=list(range(1, runs + 1)),
        run={"fabric": {"cdf_us": CDF_US}},
        keep=keep_names(),
        confidence=0.90,
        points_per_task=1,
    )
    batch_args = (base, report["schedulers"])
    swept = sweep_figure(spec, out, workers, remote, resume, as_json, fabric_batch, batch_args)
    rows = swept.rows
    summary = swept.summary([m for m in keep_names() if not m.startswith("cdf.")])
    plots = []
    for c in CLASSES:
        for stat, label in (("mean_us", "mean"), ("p99_us", "p99")):
            plots.append(
                aggregate.plot(
                    summary,
                    "tag.load",
                    f"{stat}.{c}",
                    ["tag.scheduler"],
                    out / f"fabric_{label}_{c}.png",
                    title=f"seed 003: {label} latency, {c} ({runs} runs, 90 % CI)",
                    ylabel=f"{label} latency (µs)",
                    xlabel="offered load",
                    level=spec.confidence,
                    logy=True,
                )
            )
    plots.append(_cdf_plot(rows, max(xs), out, runs))
    table = []
    for e in summary:
        for c in CLASSES:
            table.append(
                {
                    "load": e["tag.load"],
                    "scheduler": e["tag.scheduler"],
                    "class": c,
                    "runs": e["rows"] - e["failed"],
                    "offered": e[f"offered.{c}"]["mean"],
                    "accepted": e[f"accepted.{c}"]["mean"],
                    "mean_us": e[f"mean_us.{c}"]["mean"],
                    "mean_ci_us": e[f"mean_us.{c}"]["half_width"],
                    "p99_us": e[f"p99_us.{c}"]["mean"],
                    "p99_ci_us": e[f"p99_us.{c}"]["half_width"],
                }
            )
    t4, t5 = tables_4_5(report)
    # Each load's injection per class, as the runs took it (at the seed's lightest and heaviest
    # loads, 0.762 and 0.996, Table 5's Inj. Min and Inj. Max columns: TV-003-5).
    injection = []
    for x in xs:
        run = scenario_for(base, report["schedulers"], SCHEDULERS[0][1], x, 1)
        classes = {c["name"]: c["injection"] for c in run["classes"]}
        injection.append({"load": x, "total": sum(classes.values()), "classes": classes})
    outfiles.atomic_write(out / "table4.csv", aggregate.csv_text(t4))
    outfiles.atomic_write(out / "table5.csv", aggregate.csv_text(t5))
    outfiles.atomic_write(out / "fabric.csv", aggregate.csv_text(table))
    doc = swept.doc(
        "seed 003 fabric latency vs load",
        {"checks_failed": sum(1 for r in rows if not r["error"] and not r["checks_hold"])},
        reference_rate=reference_rate,
        duration=duration,
        warmup=warmup,
        claims=claims(table, xs),
        paper_claims_percent=PAPER_CLAIMS,
        injection=injection,
        table=table,
        table4=t4,
        table5=t5,
        files=[str(p) for p in plots] + [str(out / n) for n in ("table4.csv", "table5.csv", "fabric.csv")],
    )
    return _finish(doc)
    if doc["checks_failed"]:
        raise typer.Exit(1)


def register(experiment_app: typer.Typer) -> None:
    from rtnetlab.sweep.figures import command_of

    experiment_app.command("seed003-fabric")(command_of("seed003-fabric", seed003_fabric))
