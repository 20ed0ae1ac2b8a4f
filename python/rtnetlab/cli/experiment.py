"""``rtnetlab experiment``: the seed papers' experiments (``rtnetlab.experiments``), one subcommand
each, with their tables.

:data:`app` is the ``experiment`` group itself, created once here at import; another package adds
a subcommand to it without touching this module: a function of its own that registers onto it,
named by one line of ``EXPERIMENTS`` in ``rtnetlab/cli/__init__.py`` (called when the group is
first needed)::

    # python/rtnetlab/sweep/cli.py
    def register(experiment_app: typer.Typer) -> None:
        @experiment_app.command("sweep")
        def experiment_sweep(...) -> None:
            ...

    # python/rtnetlab/cli/__init__.py, in EXPERIMENTS
    "rtnetlab.sweep.cli:register",

Keep the registered function's module light at import (heavy imports inside the command).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from rtnetlab.cli.common import JsonOpt, emit_json, err, out, table, wrote
from rtnetlab.errors import UserError

app = typer.Typer(help="Reproduce the seed papers' experiments.", no_args_is_help=True)


@app.command("dopa")
def experiment_dopa(
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Where the CSV and PNG files go.")] = Path(
        "out/dopa"
    ),
    sets: Annotated[int, typer.Option("--sets", min=1, help="Random systems per point.")] = 100,
    points: Annotated[int, typer.Option("--points", min=1, help="Points per curve.")] = 10,
    seed: Annotated[int, typer.Option("--seed")] = 1,
    dm_key: Annotated[
        str, typer.Option("--dm-key", help="DM baseline key: local-window, end-to-end or absolute.")
    ] = "local-window",
    local_test: Annotated[
        str, typer.Option("--local-test", help="release-jitter (safe) or paper (Eq. 1, no jitter).")
    ] = "release-jitter",
    as_json: JsonOpt = False,
) -> None:
    """Seed 001E Fig. 6: acceptance of DOPA's PARTITION with OPA and with DM (three panels)."""
    import rtnetlab as rt
    from rtnetlab.experiments import seed001e_fig6
    from rtnetlab.io import output as outfiles

    result = rt.experiment("dopa", out_dir=out_dir, sets=sets, points=points, seed=seed, dm_key=dm_key,
                           local_test=local_test)
    if as_json:
        emit_json(result.document)
        outfiles.created_directories.clear()
        return
    for panel, rows in result.document.items():
        label, stem, _ = seed001e_fig6.DOPA_PANELS[panel]
        t = table(
            f"Fig. 6 ({panel}): accepted sets, {sets} per point", [label, "OPA", f"DM ({dm_key})"], left=()
        )
        for r in rows:
            t.add_row(f"{r['x']:g}", f"{100 * r['opa']:.0f}%", f"{100 * r['dm']:.0f}%")
        out.print(t)
    wrote(*result.files)


@app.command("nss-overhead")
def experiment_nss_overhead(
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="Runs averaged per cell.")] = 20,
    packets: Annotated[int, typer.Option("--packets", min=1, help="Aperiodic packets per run.")] = 1000,
    as_json: JsonOpt = False,
) -> None:
    """Seed 004 Table 4: CPU overhead (%) of the network sporadic server, by simulation."""
    import rtnetlab as rt

    gaps, budgets = [20, 50, 250, 1000], [2, 4, 6, 8, 10]
    rows = rt.experiment("nss-overhead", seeds=seeds, packets=packets).flows
    if as_json:
        emit_json(rows)
        return
    t = table(
        "Network sporadic server: CPU overhead (%)",
        ["1/lambda"] + [f"n = {n}" for n in budgets],
        left=("1/lambda",),
    )
    for g in gaps:
        cells = [r for r in rows if r["mean_gap_ns"] == g * 1_000_000]
        t.add_row(f"{g} ms", *[f"{r['overhead_percent']:.4f}" for r in cells])
    out.print(t)


@app.command("fabric")
def experiment_fabric(
    scenario: Annotated[
        Path | None,
        typer.Argument(
            help="Fabric scenario (JSON or YAML); default: seed 003's multimedia set-up (shipped).",
            show_default=False,
        ),
    ] = None,
    scheduler: Annotated[
        list[str] | None, typer.Option("--scheduler", help="A scheduler of the scenario (repeatable).")
    ] = None,
    duration: Annotated[str | None, typer.Option("--duration", help="Measured time, e.g. 100ms.")] = None,
    warmup: Annotated[str | None, typer.Option("--warmup", help="Warm-up before measuring.")] = None,
    reference_rate: Annotated[
        str | None, typer.Option("--reference-rate", help="Injections are fractions of this rate.")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Seed 003: the lossless multistage fabric under each scheduler, per class throughput and
    mean / p99 latency."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    import rtnetlab as rt

    if scenario is not None and not scenario.exists():
        raise UserError(f"{scenario}: no such file")
    # Each scheduler's run takes seconds: a progress bar on the terminal, nothing with --json.
    bar = Progress(TextColumn("fabric: {task.description}"), BarColumn(),
                   TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(), console=err,
                   transient=True, disable=as_json or not sys.stderr.isatty())
    with bar:
        task = bar.add_task("", total=None)

        def started(name: str, k: int, n: int) -> None:
            bar.update(task, description=f"scheduler {name}", completed=k, total=n)

        reports = rt.experiment("fabric", scenario=scenario, schedulers=scheduler, duration=duration,
                                warmup=warmup, reference_rate=reference_rate, seed=seed,
                                started=started).document
    if as_json:
        emit_json(reports)
        return
    t = table(
        f"{reports[0]['scenario']}: {reports[0]['topology']}, {reports[0]['measured_s'] * 1e3:g} ms "
        f"measured, offered {reports[0]['offered_load']:.3f}",
        ["class", "scheduler", "accepted / offered", "mean (us)", "p99 (us)"],
        left=("class", "scheduler"),
    )
    for k, c0 in enumerate(reports[0]["classes"]):
        for r in reports:
            c = r["classes"][k]
            accepted = c["accepted_load"] / max(c["offered_load"], 1e-12)
            t.add_row(c0["class"], r["scheduler"], f"{accepted:.3f}", f"{c['latency']['mean_us']:,.1f}",
                      f"{c['latency']['p99_us']:,.1f}", end_section=r is reports[-1])
    out.print(t)
    for r in reports:
        st = r["stats"]
        ch = r["checks"]
        broken = ch["out_of_order"] or ch["buffer_overflows"] or ch["credit_violations"]
        held = ch["conserved"] and not broken
        ok = "lossless, in order, buffers and credits within bounds" if held else "INVARIANTS VIOLATED"
        out.print(f"{r['scheduler']}: {st['events']:,} events in {st['wall_s']:.1f} s; {ok}", markup=False)


@app.command("schedulers")
def experiment_schedulers(
    duration: Annotated[str, typer.Option("--duration", help="Simulated time per scheduler.")] = "2s",
    seed: Annotated[int, typer.Option("--seed")] = 1,
    link_rate: Annotated[str, typer.Option("--link-rate", help="Link rate (sets the load).")] = "10Mbps",
    as_json: JsonOpt = False,
) -> None:
    """Seed 000's comparison: FIFO, static priority, WF2Q and D2DRR (6:3:1) per traffic class."""
    import rtnetlab as rt

    rows = rt.experiment("schedulers", duration=duration, seed=seed, link_rate=link_rate).flows
    if as_json:
        emit_json(rows)
        return
    t = table(
        f"Seed 000 comparison at {link_rate} ({duration} simulated, seed {seed})",
        ["scheduler", "class", "frames", "mean (us)", "p99 (us)", "max (us)", "bound (us)"],
        left=("scheduler", "class"),
    )
    for r in rows:
        t.add_row(
            r["scheduler"],
            r["class"],
            str(r["frames"]),
            f"{r['mean_us']:,.1f}",
            f"{r['p99_us']:,.1f}",
            f"{r['max_us']:,.1f}",
            "unbounded" if r["bound_us"] is None else f"{r['bound_us']:,.1f}",
        )
    out.print(t)
