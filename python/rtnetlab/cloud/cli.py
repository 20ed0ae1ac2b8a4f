"""`rtnetlab slrm step | simulate`, `rtnetlab admit` and `rtnetlab experiment admission`: the
commands of the cloud package (parsing and printing only)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from rtnetlab.errors import Terminated, UserError

slrm = typer.Typer(help="Seed 001G's service-level-aware resource manager.", no_args_is_help=True)

out = Console(emoji=False, highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 250)
err = Console(emoji=False, stderr=True, highlight=False, soft_wrap=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON (errors too).")]
# `slrm simulate` and `slrm run`: the same draws and the same files.
SlrmSeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the think times and SL draws.")]
SlrmOutOpt = Annotated[
    Path | None,
    typer.Option("--out", help="Write slrm.json, slrm.csv and slrm.png (caps, SL, response times) here."),
]


def _emit(data: dict) -> None:
    sys.stdout.write(json.dumps(data, allow_nan=False) + "\n")


def _numbers(option: str, text: str) -> list[float]:
    from rtnetlab.cli.common import comma_list

    return comma_list(option, text, float, bad="{option}: a comma-separated list of numbers, got '{text}'")


def _check_capacity(capacity: float | None) -> None:
    if capacity is not None and not (capacity > 0 and capacity != float("inf")):
        raise UserError(f"--capacity: must be a positive number, got {capacity}")


def _periods_table(title: str, apps: list[str], periods: list[dict], digits: int) -> None:
    """The RM's periods, one row each: per app its cap, SL and largest response time."""
    t = Table(title=title)
    t.add_column("time", justify="right")
    for name in apps:
        t.add_column(name, justify="right")
    for p in periods:
        t.add_row(
            f"{p['time']:g}",
            *[f"{a['cap']:.2f} / {a['sl']:.2f} / {a['response_time']:.{digits}f}s" for a in p["apps"]],
        )
    out.print(t)


def _wrote(files: list[Path]) -> None:
    from rtnetlab.io import output as outfiles

    for d in outfiles.created_directories:
        err.print(f"created {d}", markup=False)
    outfiles.created_directories.clear()
    for f in files:
        err.print(f"wrote {f}", markup=False)


@slrm.command("step")
def slrm_step(
    shares: Annotated[str, typer.Option("--shares", help="Current shares c_i, summing to 1: 0.5,0.5")],
    matching: Annotated[str, typer.Option("--matching", help="Matching values f_i = 1 - t_i/t̄_i: -0.5,0.2")],
    epsilon: Annotated[float, typer.Option("--epsilon", help="The RM's gain ε (the paper: 0.2).")] = 0.2,
    min_share: Annotated[float, typer.Option("--min-share", help="Smallest share kept by clamping.")] = 0.0,
    capacity: Annotated[
        float | None, typer.Option("--capacity", help="Also print the caps c_i·C for this capacity.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """One step of the RM law (Eq. 3): c_i <- c_i - ε (f_i - c_i Σ f_p), clamped and renormalised."""
    import rtnetlab as rt

    c = _numbers("--shares", shares)
    f = _numbers("--matching", matching)
    _check_capacity(capacity)
    new = rt.slrm_step(c, f, epsilon=epsilon, min_share=min_share)
    doc: dict = {"shares": new}
    if capacity is not None:
        doc["caps"] = [round(x * capacity, 9) for x in new]
    if as_json:
        _emit(doc)
        return
    t = Table(title=f"RM step (ε = {epsilon:g}, Σf = {sum(f):.6g})")
    for col in ["app", "share", "f", "new share"] + (["cap"] if capacity is not None else []):
        t.add_column(col, justify="right")
    for i, (a, b, n) in enumerate(zip(c, f, new, strict=True)):
        row = [str(i + 1), f"{a:.6g}", f"{b:.6g}", f"{n:.6g}"]
        if capacity is not None:
            row.append(f"{n * capacity:.6g}")
        t.add_row(*row)
    out.print(t)


@slrm.command("simulate")
def slrm_simulate(
    experiment: Annotated[
        int | None,
        typer.Option(
            "--experiment", help="The paper's experiment 1 (4 cores, 2 apps) or 2 (8 cores, 4 apps)."
        ),
    ] = None,
    scenario_file: Annotated[
        Path | None, typer.Option("--scenario", help="A scenario file (.yaml/.json; docs/CLOUD.md).")
    ] = None,
    seed: SlrmSeedOpt = 1,
    out_dir: SlrmOutOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Discrete-time simulation of SL-aware applications sharing cores under the RM."""
    import rtnetlab as rt
    from rtnetlab.io import output as outfiles

    result = rt.slrm_simulate(scenario_file, experiment=experiment, seed=seed, out=out_dir)
    report, s, files, title = result.data, result.summary, result.files, result.title
    if as_json:
        _emit(report)
        outfiles.created_directories.clear()
        return
    step = max(1, round(100 / report["control_period"]))
    title = f"SL-aware RM, {title}: every 100 s (cap in cores, SL, max response time)"
    _periods_table(title, report["apps"], report["periods"][step - 1 :: step], 2)
    out.print(f"largest |sum of caps - capacity| over {s['periods']} periods: {s['max_cap_sum_error']:.2e}")
    _wrote(files)


@slrm.command("run")
def slrm_run(
    apps: Annotated[
        str,
        typer.Option(
            "--apps",
            help="A scenario file (.yaml/.json, the keys of `slrm simulate --scenario`) or a preset: "
            "overload (two identical overloaded apps from shares 0.8/0.2), pair (one app's users triple).",
        ),
    ],
    duration: Annotated[
        str,
        typer.Option("--duration", help="Length of the run with its unit, as every --duration (2s to 3600s)"),
    ] = "20s",
    capacity: Annotated[
        float | None, typer.Option("--capacity", help="Cores shared by the apps (default: the scenario's).")
    ] = None,
    seed: SlrmSeedOpt = 1,
    out_dir: SlrmOutOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Real SL-aware HTTP services on this machine, capped by cgroups, under the RM (needs root)."""
    import rtnetlab as rt
    from rtnetlab.io import output as outfiles

    def started(prefix: str, kind: str) -> None:
        err.print(f"run {prefix}: caps on {kind}", markup=False)

    try:
        result = rt.slrm_run(apps, duration=duration, capacity=capacity, seed=seed, out=out_dir,
                             started=started)
    except Terminated:
        # click turns every KeyboardInterrupt into an abort (exit 130): SIGTERM keeps its 143.
        err.print("terminated", markup=False)
        raise typer.Exit(143) from None
    report, s, files, title = result.data, result.summary, result.files, result.title
    if as_json:
        _emit(report)
        outfiles.created_directories.clear()
        return
    _periods_table(f"{title} (cap in cores / SL / max response time)", report["apps"], report["periods"], 3)
    noise = report["host_noise"]
    share = noise["spinner_share_alone"]
    out.print(
        f"{report['cgroup']}; largest |sum of caps - capacity| {s['max_cap_sum_error']:.2e}, of the quotas "
        f"read back {s['max_quota_sum_error_us']} us; host noise: a spinner alone got "
        f"{'?' if share is None else f'{share:.2f}'} of a CPU, load {noise['loadavg_1min_before']:.2f}, "
        f"control ticks late by up to {noise['max_tick_lateness_s'] * 1e3:.1f} ms",
        markup=False,
    )
    _wrote(files)


def _decisions_table(report: dict, limit: int = 40) -> None:
    t = Table(title="admission decisions, in arrival order")
    for c in ("time", "request", "decision", "constraint / placement"):
        t.add_column(c, justify="right" if c == "time" else "left")
    for d in report["decisions"][:limit]:
        if d["accepted"]:
            what = ", ".join(f"{p['component']}@{p['host']}:{p['core']}" for p in d["placement"])
        else:
            what = f"{d['constraint']}: {d['reason']}"
        t.add_row(f"{d['time_s']:.3f}s", d["request"], "admitted" if d["accepted"] else "rejected", what)
    out.print(t)
    if len(report["decisions"]) > limit:
        out.print(f"... {len(report['decisions']) - limit} more decisions (--json or --out for all)")


def _in_user_files(message: str, *files: Path, infra: Path | None = None) -> str:
    from rtnetlab.cloud import admit as adm

    return adm.in_user_files(message, *files, infra=infra)


def admit_command(
    infra: Annotated[
        Path, typer.Argument(help="Infrastructure: network description + hosts (docs/CLOUD.md).")
    ],
    requests_file: Annotated[Path, typer.Argument(metavar="REQUESTS", help="VSN requests (.yaml/.json).")],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Write decisions.json, admitted.yaml, sched_deadline.sh, acceptance.csv/.png here."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Admit VSN requests in arrival order: components on cores (EDF), virtual links on paths
    whose flows' bounds meet their latency and jitter; every rejection names its constraint."""
    import rtnetlab as rt
    from rtnetlab.cloud import admit as adm
    from rtnetlab.io import output as outfiles

    if out_dir is not None:
        outfiles.check({f"--out ({k})": v for k, v in adm.outputs(out_dir).items()}, [infra, requests_file])
    infrastructure = adm.read_infrastructure(infra)
    try:
        report = rt.admit(infrastructure, adm.read_requests(requests_file),
                          names=(str(infra), str(requests_file))).data
    except UserError as e:
        raise UserError(_in_user_files(str(e), requests_file, infra=infra)) from None
    written: list[Path] = []
    if out_dir is not None:
        data = adm.files(out_dir, report, f"admission: {requests_file.name} on {infra.name}")
        outfiles.write_all(data)
        written = list(data)
    if as_json:
        _emit({"summary": adm.summary(report), **{k: v for k, v in report.items() if k != "admitted"}})
        outfiles.created_directories.clear()
        return
    _decisions_table(report)
    s = adm.summary(report)
    out.print(
        f"admitted {s['accepted']}, rejected {s['rejected']} (ratio {s['acceptance_ratio']:.3f}); "
        f"decision time mean {s['decision_ms_mean']:.2f} ms, max {s['decision_ms_max']:.2f} ms"
    )
    _wrote(written)


def experiment_admission(
    requests: Annotated[int, typer.Option("--requests", help="VSN requests in the generated stream.")] = 100,
    seed: Annotated[int, typer.Option("--seed")] = 1,
    mean_gap: Annotated[float, typer.Option("--mean-gap", help="Mean time between arrivals (s).")] = 1.0,
    mean_lifetime: Annotated[float, typer.Option("--mean-lifetime", help="Mean lifetime (s).")] = 20.0,
    out_dir: Annotated[
        Path, typer.Option("--out", help="Where admitted.yaml and the other files go.")
    ] = Path("out/admission"),
    exact: Annotated[
        int,
        typer.Option(
            "--exact",
            help="Also compare the heuristic with the exact ILP placement (HiGHS) on this many small "
            "batches (4 hosts x 2 cores, 12 requests, CPU only).",
        ),
    ] = 0,
    as_json: JsonOpt = False,
) -> None:
    """Seed 001F: online admission of a generated VSN stream on a leaf-spine data centre."""
    import rtnetlab as rt
    from rtnetlab.io import output as outfiles

    result = rt.experiment("admission", requests=requests, seed=seed, mean_gap=mean_gap,
                           mean_lifetime=mean_lifetime, out_dir=out_dir, exact=exact)
    doc = result.document
    if as_json:
        _emit(doc)
        outfiles.created_directories.clear()
        return
    sweep, comparison, s = doc["by_load"], doc.get("exact_vs_heuristic"), doc
    _decisions_table({"decisions": result.flows}, limit=20)
    t = Table(title="acceptance ratio against offered load (same arrivals, lifetimes scaled)")
    for c in ("offered load", "acceptance", "rejected by"):
        t.add_column(c, justify="right")
    for row in sweep:
        t.add_row(f"{row['offered_load']:g}", f"{row['acceptance_ratio']:.3f}", str(row["rejected_by"]))
    out.print(t)
    if comparison is not None:
        t = Table(title="requests admitted on small batches: online heuristic against exact ILP (HiGHS)")
        for c in ("batch", "requests", "heuristic", "exact"):
            t.add_column(c, justify="right")
        for row in comparison:
            t.add_row(str(row["instance"]), str(row["requests"]), str(row["heuristic"]), str(row["exact"]))
        out.print(t)
    out.print(
        f"admitted {s['accepted']}, rejected {s['rejected']} (ratio {s['acceptance_ratio']:.3f}); "
        f"by constraint: {s['rejected_by']}"
    )
    _wrote(result.files)


def experiment_reservation(
    runtime: Annotated[str, typer.Option("--runtime", help="Budget Q per period.")] = "3ms",
    period: Annotated[str, typer.Option("--period", help="Period T (= relative deadline).")] = "10ms",
    seconds: Annotated[float, typer.Option("--seconds", help="Length of the measured run.")] = 2.0,
    tolerance: Annotated[float, typer.Option("--tolerance", help="Allowed |measured - Q/T|.")] = 0.02,
    as_json: JsonOpt = False,
) -> None:
    """Seed 001F: a spinning component under SCHED_DEADLINE (Q, T) gets Q/T of a CPU while every
    CPU is loaded by ordinary spinners (exit 1 when outside the tolerance)."""
    import rtnetlab as rt

    r = rt.experiment("reservation", runtime=runtime, period=period, seconds=seconds,
                      tolerance=tolerance).document
    if as_json:
        _emit(r)
    elif "skipped" in r:
        out.print(f"skipped: {r['skipped']}", markup=False)
    else:
        out.print(
            f"SCHED_DEADLINE ({runtime} every {period}) against {r['contending_spinners']} ordinary "
            f"spinners: share {r['measured_share']:.4f}, expected {r['expected_share']:.4f} ± {tolerance:g} "
            f"({'within' if r['within_tolerance'] else 'OUTSIDE'}); host noise: an ordinary spinner "
            f"alone got {r['noise_ordinary_share_alone']:.3f} of a CPU",
            markup=False,
        )
    if "skipped" not in r and not r["within_tolerance"]:
        raise typer.Exit(1)


def register_experiments(experiment_app: typer.Typer) -> None:
    """Adds `rtnetlab experiment admission` and `experiment reservation` to the experiment group."""
    experiment_app.command("admission")(experiment_admission)
    experiment_app.command("reservation")(experiment_reservation)
