"""The sweep capability's shared command-line pieces: its options, the `--scheduler` check and
JSON output. Below both the `rtnetlab sweep` command (sweep/cli.py) and the experiments built on
sweeps (the figures' modules), which import them from here, not from each other."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from rtnetlab import limits

OutOpt = Annotated[Path, typer.Option("--out", help="Directory of the rows (Parquet), summary and plots.")]
WorkersOpt = Annotated[
    int | None,
    typer.Option(
        "--workers",
        min=1,
        callback=limits.option("workers"),
        help="Worker processes of the embedded cluster (default: one per core; at most the limit "
        "`workers`, the cores).",
    ),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="Run on this Dask scheduler instead: tls://HOST:8786 with --tls-ca, --tls-cert and "
        "--tls-key, or tcp://HOST:8786 with --trust-scheduler. Its workers run code in this process "
        "(their results are unpickled here): see docs/SWEEPS.md.",
    ),
]
TlsCaOpt = Annotated[
    Path | None,
    typer.Option(
        "--tls-ca", help="The tls:// cluster's CA certificate (PEM): the scheduler's must be signed by it."
    ),
]
TlsCertOpt = Annotated[
    Path | None, typer.Option("--tls-cert", help="This client's certificate for the tls:// cluster (PEM).")
]
TlsKeyOpt = Annotated[
    Path | None,
    typer.Option("--tls-key", help="This client's private key (PEM; default: in --tls-cert's file)."),
]
TrustOpt = Annotated[
    bool,
    typer.Option(
        "--trust-scheduler",
        help="Accept a tcp:// scheduler, which nothing authenticates: whoever answers at that address "
        "runs code in this process. Needed for 127.0.0.1 too: any local user can bind a loopback port.",
    ),
]
ResumeOpt = Annotated[
    bool, typer.Option("--resume", help="Go on with the sweep in --out: finished rows are kept.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON (errors too).")]
# The experiments built on sweeps (`rtnetlab experiment soundness`, the seeds' figures).
OutDirOpt = Annotated[
    Path, typer.Option("--out", help="Directory of the rows (Parquet), figures and tables.")
]
RunsOpt = Annotated[
    int, typer.Option("--runs", min=2, callback=limits.option("rows"), help="Runs (seeds) per point.")
]


def _json_default(x: Any) -> Any:
    return None if isinstance(x, float) and not math.isfinite(x) else str(x)


def _clean(x: Any) -> Any:
    """JSON has no infinity: an infinite mean (unbounded) is written as the string 'inf'."""
    if isinstance(x, float):
        return x if math.isfinite(x) else ("inf" if x > 0 else None)
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def emit(data: Any) -> None:
    sys.stdout.write(json.dumps(_clean(data), indent=2, default=_json_default) + "\n")


def check_scheduler(
    scheduler: str | None,
    tls_ca: Path | None = None,
    tls_cert: Path | None = None,
    tls_key: Path | None = None,
    trust: bool = False,
):
    """The `--scheduler` options checked before anything starts: a `cluster.Remote`, or None
    for the embedded cluster."""
    from rtnetlab.sweep import cluster

    return cluster.remote(scheduler, tls_ca, tls_cert, tls_key, trust)
