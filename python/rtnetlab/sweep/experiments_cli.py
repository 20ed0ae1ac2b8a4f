"""`rtnetlab experiment soundness` and the seeds' figures built on sweeps."""

from __future__ import annotations

import json
import time
from typing import Annotated

import typer

from rtnetlab import limits
from rtnetlab.sweep.options import (
    JsonOpt,
    OutDirOpt,
    ResumeOpt,
    SchedulerOpt,
    TlsCaOpt,
    TlsCertOpt,
    TlsKeyOpt,
    TrustOpt,
    WorkersOpt,
    check_scheduler,
    emit,
)


def soundness(
    out: OutDirOpt,
    networks: Annotated[
        int,
        typer.Option("--networks", min=1, callback=limits.option("rows"), help="Random networks to check."),
    ] = 1000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the campaign.")] = 1,
    duration_ms: Annotated[
        float, typer.Option("--duration-ms", min=1.0, help="Simulated time per network, ms.")
    ] = 300.0,
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
    tls_ca: TlsCaOpt = None,
    tls_cert: TlsCertOpt = None,
    tls_key: TlsKeyOpt = None,
    trust_scheduler: TrustOpt = False,
    resume: ResumeOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Random networks (every scheduler kind, flow type, switching mode, plane count) simulated
    and checked against every sound method's delay and backlog bounds."""
    from rtnetlab.sweep import runner
    from rtnetlab.sweep import soundness as sound
    from rtnetlab.sweep.figures import sweep_figure

    remote = check_scheduler(scheduler, tls_ca, tls_cert, tls_key, trust_scheduler)
    spec = sound.campaign_spec(networks, seed, duration_ms)
    swept = sweep_figure(spec, out, workers, remote, resume, as_json, sound.run_batch, (seed, duration_ms))
    rows, outcome = swept.rows, swept.outcome
    doc = sound.summarise(rows, networks)
    doc["reproducer"] = sound.write_reproducer(rows, seed, duration_ms, out)
    doc["error_reproducer"] = sound.write_reproducer(
        rows, seed, duration_ms, out, "analysis_errors", "reproducer_analysis_error"
    )
    doc.update(
        {
            "seed": seed,
            "duration_ms": duration_ms,
            "ran": outcome.ran,
            "skipped": outcome.skipped,
            "workers": outcome.workers if remote is None else None,
            "wall_s": time.perf_counter() - swept.t0,
            "rows_dir": str(out / runner.ROWS),
        }
    )
    from rtnetlab.io import output as outfiles

    outfiles.atomic_write(out / "soundness.json", json.dumps(doc, indent=1, default=str) + "\n")
    if as_json:
        emit(doc)
    else:
        from rich.console import Console

        con = Console(emoji=False, highlight=False, soft_wrap=True)
        con.print(
            f"{doc['networks']} networks, {doc['routes']} routes, {doc['checks']} checks against "
            f"{len(doc['methods'])} methods: {doc['violations']} violations "
            f"({doc['failed']} networks failed to run) in {doc['wall_s']:.0f} s"
        )
        con.print(
            f"schedulers: {', '.join(doc['schedulers'])}; flow types: {doc['flow_types']}; "
            f"switching: {doc['switching']}; planes: {doc['planes']}"
        )
        con.print(
            f"simulated / bound (best): {doc['simulated_over_bound']['bins']}, max "
            f"{doc['simulated_over_bound']['max']}"
        )
        if doc["analysis_errors"]:
            con.print(
                f"{doc['analysis_errors']} analyses failed inside the engine on "
                f"{doc['analysis_error_networks']} networks: {doc['error_reproducer']['file']}",
                style="bold red",
            )
        if doc["reproducer"]:
            con.print(f"smallest violating network: {doc['reproducer']['file']}", style="bold red")
    if doc["violations"]:
        raise typer.Exit(1)


def register(experiment_app: typer.Typer) -> None:
    from rtnetlab.sweep import fig_seed000, fig_seed001d, fig_seed003, figures

    experiment_app.command("soundness")(soundness)
    figures.register(experiment_app)
    fig_seed000.register(experiment_app)
    fig_seed001d.register(experiment_app)
    fig_seed003.register(experiment_app)
