"""Running a sweep on Dask and streaming its rows to Parquet.

Layout of the output directory::

    DIR/sweep.json            the SPEC's identity (a resume checks it is the same sweep)
    DIR/rows/part-*.parquet   rows, one file per finished batch, each written whole or not at all

A killed sweep leaves complete part files only (each is written under a temporary name, then
renamed); `--resume` reads their row keys (content hashes of point and seed) and runs the rest,
so nothing is lost and nothing is duplicated. Rows do not depend on how points are batched or
on which worker ran them: 1 worker and N workers give the same rows (apart from wall time).
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rtnetlab.errors import UserError
from rtnetlab.sweep.cluster import Remote
from rtnetlab.sweep.spec import Point, SweepSpec, canonical, is_number

ROWS = "rows"
MANIFEST = "sweep.json"
#: Aim for tasks of about this many points when the SPEC does not say (and at least a few tasks
#: per worker, so that a slow batch does not leave the others idle at the end).
DEFAULT_POINTS_PER_TASK = 32
TASKS_PER_WORKER = 4


def param_type(values: list[Any]):
    import pyarrow as pa

    if all(isinstance(v, bool) for v in values):
        return pa.bool_()
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return pa.int64()
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return pa.float64()
    return pa.string()


def schema(spec: SweepSpec):
    """The rows' Arrow schema, fixed by the SPEC, so that every part file has the same one."""
    import pyarrow as pa

    fields = [pa.field("point", pa.string()), pa.field("index", pa.int64()), pa.field("seed", pa.int64())]
    for axis in spec.axes:
        for k, key in enumerate(axis.keys):
            fields.append(pa.field(key, param_type([row[k] for row in axis.values])))
    fields += [pa.field(m, pa.float64()) for m in spec.keep]
    fields += [
        pa.field("engine_version", pa.string()),
        pa.field("wall_s", pa.float64()),
        pa.field("error", pa.string()),
    ]
    return pa.schema(fields)


def _param_value(v: Any, typ) -> Any:
    import pyarrow as pa

    if typ == pa.string() and not isinstance(v, str):
        return canonical(v)
    return v


def to_table(spec: SweepSpec, rows: list[dict]):
    import pyarrow as pa

    sch = schema(spec)
    cols: dict[str, list] = {f.name: [] for f in sch}
    for r in rows:
        cols["point"].append(r["point"])
        cols["index"].append(r["index"])
        cols["seed"].append(r["seed"])
        for key in spec.param_names:
            cols[key].append(_param_value(r["params"][key], sch.field(key).type))
        for m in spec.keep:
            cols[m].append(r["metrics"][m])
        cols["engine_version"].append(r["engine_version"])
        cols["wall_s"].append(r["wall_s"])
        cols["error"].append(r["error"])
    return pa.table(cols, schema=sch)


def write_part(out: Path, table) -> Path:
    """Writes one part file whole or not at all (temporary name, fsync, rename: the rule of every
    output, `rtnetlab.io.output`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rtnetlab.io import output as outfiles

    first = min(table.column("index").to_pylist()) if table.num_rows else 0
    name = f"part-{first:08d}-{table.column('point')[0].as_py() if table.num_rows else 'empty'}.parquet"
    final = out / ROWS / name
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf)
    with outfiles.OutputFile(final, fsync=True) as f:
        f.write(buf.getvalue().to_pybytes())
    return final


def read_rows(out: Path):
    """Every finished row under `out` as one Arrow table sorted by (index, seed), or None."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    parts = sorted((out / ROWS).glob("part-*.parquet")) if (out / ROWS).is_dir() else []
    if not parts:
        return None
    table = pa.concat_tables([pq.read_table(p) for p in parts])
    return table.sort_by([("index", "ascending"), ("seed", "ascending")])


def done_keys(out: Path) -> set[str]:
    import pyarrow.parquet as pq

    keys: set[str] = set()
    if (out / ROWS).is_dir():
        for p in sorted((out / ROWS).glob("part-*.parquet")):
            keys.update(pq.read_table(p, columns=["point"]).column("point").to_pylist())
    return keys


def batches(points: list[Point], workers: int, per_task: int | None) -> list[list[Point]]:
    if not points:
        return []
    if per_task is None:
        per_task = max(1, min(DEFAULT_POINTS_PER_TASK, math.ceil(len(points) / (workers * TASKS_PER_WORKER))))
    return [points[i : i + per_task] for i in range(0, len(points), per_task)]


@dataclass
class Outcome:
    points: int  # rows of the whole sweep
    ran: int  # rows computed by this run
    skipped: int  # rows found done (resume)
    failed: int  # rows of this run with an error
    wall_s: float
    workers: int
    tasks: int
    compute_s: float = 0.0  # from the first task submitted to the last row written (no cluster start)


def prepare_out(out: Path, spec: SweepSpec, resume: bool, option: str = "--out", write: bool = True) -> None:
    """Checks DIR: a new or empty directory, or with `resume` the same sweep's (and no other
    user's symbolic link on its way, `rtnetlab.io.output`'s rule); then, with `write`, makes it
    a sweep's directory (its manifest)."""
    from rtnetlab.io import output as outfiles

    outfiles.resolve(out, f"{option}: {out}")
    if out.exists() and not out.is_dir():
        raise UserError(f"{option}: {out}: is not a directory")
    manifest = out / MANIFEST
    ident = {
        "name": spec.name,
        "identity": json.loads(canonical(spec.identity())),
        "params": spec.param_names,
        "keep": spec.keep,
    }
    if manifest.exists():
        try:
            old = json.loads(manifest.read_text())
        except (OSError, ValueError) as e:
            raise UserError(f"{option}: {manifest}: unreadable ({e})") from None
        if not resume:
            raise UserError(
                f"{option}: {out} holds a sweep's results; add --resume to go on with it, or choose "
                "another directory"
            )
        if old.get("identity") != ident["identity"] or old.get("params") != ident["params"]:
            raise UserError(
                f"--resume: {out} holds a different sweep (its network, steps, kept metrics or "
                "varied keys differ)"
            )
        return
    if out.is_dir() and any(out.iterdir()) and not resume:
        raise UserError(f"{option}: {out}: is not empty")
    if not write:
        return
    outfiles.directory(out, f"{option}: {out}")
    outfiles.atomic_write(manifest, json.dumps(ident, indent=1, sort_keys=True) + "\n")
    # Temporary files of a killed run are never parts.
    for tmp in (out / ROWS).glob(".*.tmp") if (out / ROWS).is_dir() else []:
        tmp.unlink(missing_ok=True)


def run_sweep(
    spec: SweepSpec,
    out: Path,
    workers: int | None = None,
    scheduler: Remote | None = None,
    resume: bool = False,
    progress: bool | None = None,
    on_rows: Callable[[list[dict]], None] | None = None,
    batch_fn: Callable | None = None,
    batch_args: Iterable[Any] = (),
) -> Outcome:
    """Runs every row of `spec` not yet in `out` on Dask; each finished batch becomes a part file.
    `batch_fn(*batch_args, batch)` computes a batch's rows (default: the SPEC's own steps);
    `scheduler` is checked by `cluster.remote` (None: the embedded cluster)."""
    from rtnetlab import limits
    from rtnetlab.sweep import cluster
    from rtnetlab.sweep import points as points_mod
    from rtnetlab.sweep.spec import check_rows

    # Before anything is written or started (a SPEC built by a command, not read by spec.parse,
    # is counted here).
    check_rows(f"{spec.source}:" if spec.source else "", spec.rows() // len(spec.seeds), len(spec.seeds))
    if workers is not None:
        limits.check("workers", workers, "--workers")
    workers = workers or min(limits.cores(), limits.limit("workers"))
    # Checked now, written once the cluster answers: a scheduler that cannot be reached leaves
    # nothing behind.
    prepare_out(out, spec, resume, write=False)
    pts = spec.points()
    done = done_keys(out) if resume else set()
    todo = [p for p in pts if p.key not in done]
    skipped = len(pts) - len(todo)
    t0 = time.perf_counter()
    failed = ran = 0
    compute = 0.0
    chunks = batches(todo, workers, spec.points_per_task)
    if batch_fn is None:
        batch_fn = points_mod.run_batch
        batch_args = (spec,)
    if not chunks:
        prepare_out(out, spec, resume)
    else:
        with cluster.connect(workers, scheduler) as client:
            from dask.distributed import as_completed

            prepare_out(out, spec, resume)
            payloads = [[(p.index, p.seed, p.params, p.key) for p in c] for c in chunks]
            # The arguments every task shares (the checked SPEC) go to the workers once.
            t_submit = time.perf_counter()
            shared = [client.scatter(a, broadcast=True, hash=False) for a in batch_args]
            futures = [client.submit(batch_fn, *shared, payload, pure=False) for payload in payloads]
            show = sys.stderr.isatty() if progress is None else progress
            with _bar(show, len(todo), skipped) as advance:
                for fut in as_completed(futures):
                    if fut.status == "error":
                        # A task that failed as a whole (a batch function's own bug): stop here;
                        # the batches written so far stay, --resume goes on from them.
                        client.cancel(futures)
                        exc = fut.exception()
                        raise RuntimeError(f"a sweep task failed: {type(exc).__name__}: {exc}")
                    rows = fut.result()
                    write_part(out, to_table(spec, rows))
                    ran += len(rows)
                    failed += sum(1 for r in rows if r["error"])
                    if on_rows is not None:
                        on_rows(rows)
                    advance(len(rows))
                    fut.release()
            compute = time.perf_counter() - t_submit
    return Outcome(len(pts), ran, skipped, failed, time.perf_counter() - t0, workers, len(chunks), compute)


class _bar:
    """A rich progress bar with ETA on stderr, or nothing."""

    def __init__(self, shown: bool, total: int, done: int):
        self.shown, self.total, self.done = shown, total, done

    def __enter__(self):
        if not self.shown:
            return lambda n: None
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("rows"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(emoji=False, stderr=True),
            transient=True,
        )
        self.progress.__enter__()
        task = self.progress.add_task("sweep", total=self.total)
        return lambda n: self.progress.update(task, advance=n)

    def __exit__(self, *exc):
        if self.shown:
            self.progress.__exit__(*exc)
        return False


def rows_as_dicts(table) -> list[dict]:
    return table.to_pylist() if table is not None else []


def finite(values: list[Any]) -> list[float]:
    return [v for v in values if is_number(v)]
