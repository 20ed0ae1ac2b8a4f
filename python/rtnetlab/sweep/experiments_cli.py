"""`rtnetlab experiment soundness` and the seeds' figures built on sweeps."""

from __future__ import annotations

import typer

from rtnetlab.sweep.options import (
    emit,
)


def _show(doc: dict, as_json: bool) -> None:
    """The campaign as `rtnetlab experiment soundness` prints it; exit 1 on a violation."""
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
    from rtnetlab.sweep import soundness as sound
    from rtnetlab.sweep.figures import command_of

    experiment_app.command("soundness")(command_of("soundness", sound.campaign, _show))
    figures.register(experiment_app)
    fig_seed000.register(experiment_app)
    fig_seed001d.register(experiment_app)
    fig_seed003.register(experiment_app)
