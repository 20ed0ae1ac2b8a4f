"""`rtnetlab experiment seed001d-table2`: seed 001D's Table II and Fig. 6 at growing sizes, the
branch and bound against the exhaustive search on the paper's random instances.

One row per instance: (VLs, MTC interval, seed). For each, the engine
(`experiments::afdx_table2`) runs four searches with the same time cap and reports per search
the nodes it visited, its time and its answer: Fig. 5's DFS_BandB (corrected) against the
exhaustive search that stops at its first feasible leaf (same configuration), and the
least-bandwidth branch and bound against the exhaustive search of every combination (same least
bandwidth). Sizes grow one VL at a time, interval by interval, until the exhaustive search gives
up at the cap on every instance of the interval (or `--max-vls`): the grid holds every size, and
each size runs once the previous one is known.
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import Annotated

import typer

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
)
from rtnetlab.sweep.spec import Axis, SweepSpec

#: Table II's MTC intervals (ms) and feasible sets (%) among 5000 random sets of 5 VLs.
TABLE2_PAPER = {"10-60": 3.4, "60-110": 23.6, "110-160": 40.1, "160-210": 54.0, "210-260": 62.7}
#: The paper's size: 5 VLs on one 6 Mbit/s port.
PAPER_VLS = 5
#: Fig. 6: the branch and bound is 2-6x faster than the exhaustive search.
FIG6_PAPER_SPEEDUP = (2.0, 6.0)
#: The searches: (column prefix, label).
SEARCHES = [
    ("bb_fig5", "B&B Fig. 5 (first feasible)"),
    ("bf_first", "exhaustive, first feasible"),
    ("bb_min", "B&B least bandwidth"),
    ("bf_all", "exhaustive, every combination"),
]
#: Branch and bound against its exhaustive peer.
PAIRS = [("bb_fig5", "bf_first"), ("bb_min", "bf_all")]


def keep_names() -> list[str]:
    names = ["tree_nodes", "feasible", "same_first", "same_optimum", "same_verdict"]
    for s, _ in SEARCHES:
        names += [f"{s}.nodes", f"{s}.time_us", f"{s}.gave_up"]
    return names + ["bb_min.reserved_bps", "bf_all.reserved_bps"]


def _agree(a: object, b: object, done: bool) -> float | None:
    return (1.0 if a == b else 0.0) if done else None


def row_metrics(c: dict) -> dict[str, float | None]:
    """A row's metrics from the engine's comparison of one instance."""
    m: dict[str, float | None] = {"tree_nodes": float(c["tree_nodes"])}
    for s, _ in SEARCHES:
        r = c[s]
        m[f"{s}.nodes"] = float(r["nodes"])
        m[f"{s}.time_us"] = r["elapsed_s"] * 1e6
        m[f"{s}.gave_up"] = float(r["gave_up"])
    m["bb_min.reserved_bps"] = c["bb_min"]["reserved_bps"]
    m["bf_all.reserved_bps"] = c["bf_all"]["reserved_bps"]
    bb, bf = c["bb_fig5"], c["bf_first"]
    m["same_first"] = _agree(bb["choice"], bf["choice"], not (bb["gave_up"] or bf["gave_up"]))
    lo, al = c["bb_min"], c["bf_all"]
    m["same_optimum"] = _agree(lo["reserved_bps"], al["reserved_bps"], not (lo["gave_up"] or al["gave_up"]))
    m["same_verdict"] = _agree(lo["feasible"], al["feasible"], not (lo["gave_up"] or al["gave_up"]))
    # The verdict: the exhaustive search's, or the branch and bound's where it gave up.
    verdict = al["feasible"] if al["feasible"] is not None else lo["feasible"]
    m["feasible"] = None if verdict is None else float(verdict)
    return m


def table2_batch(cap_s: float, batch: list[tuple[int, int, dict, str]]) -> list[dict]:
    """Rows of seed 001D Table II: one per (VLs, MTC interval, seed) instance."""
    from rtnetlab import _core
    from rtnetlab.sweep.points import record

    def metrics(params: dict, seed: int) -> dict[str, float | None]:
        lo, hi = (int(x) for x in params["tag.mtc_ms"].split("-"))
        return row_metrics(json.loads(_core.afdx_search_compare(params["tag.vls"], lo, hi, seed, cap_s)))

    keep = keep_names()
    return [record(task, keep, lambda t=task: metrics(t[2], t[1])) for task in batch]


class StagedSpec(SweepSpec):
    """The whole grid (stable indices and row keys), of which `run_sweep` runs only the points
    of the current stage."""

    stage: set[tuple[int, str]] = set()

    def points(self):
        return [p for p in super().points() if (p.params["tag.vls"], p.params["tag.mtc_ms"]) in self.stage]


def table2_spec(sizes: list[int], intervals: list[str], sets: int, cap_s: float) -> StagedSpec:
    from rtnetlab.sweep.points import engine_version

    return StagedSpec(
        source="seed001d-table2",
        name="seed 001D Table II",
        network={
            "afdx_table2": {
                "flows_per_vl": 2,
                "payload_bytes": [20, 80],
                "rate_per_vl_bps": 1_200_000,
                "jitter_us": 500,
                "engine": engine_version(),
            }
        },
        axes=[Axis(["tag.vls"], [[n] for n in sizes]), Axis(["tag.mtc_ms"], [[i] for i in intervals])],
        seeds=list(range(1, sets + 1)),
        run={"search": {"cap_s": cap_s}},
        keep=keep_names(),
        confidence=0.95,
        points_per_task=None,
    )


def _ok(rows: list[dict]) -> list[dict]:
    return [r for r in rows if not r["error"]]


def summarise(rows: list[dict], level: float = 0.95) -> list[dict]:
    """Per (VLs, interval): instances, feasible %, and per search the mean nodes and time with
    their intervals over the instances it finished, how often it gave up, the speed-ups and the
    agreement of each branch and bound with its exhaustive peer."""
    from rtnetlab.sweep import aggregate

    groups: dict[tuple[int, str], list[dict]] = {}
    for r in _ok(rows):
        groups.setdefault((r["tag.vls"], r["tag.mtc_ms"]), []).append(r)
    out = []
    order = {k: i for i, k in enumerate(TABLE2_PAPER)}
    for (n, mtc), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], 99), kv[0][1])):
        e: dict = {"vls": n, "mtc_ms": mtc, "sets": len(rs)}
        verdicts = [r["feasible"] for r in rs if r["feasible"] is not None]
        e["feasible_percent"] = 100.0 * sum(verdicts) / len(verdicts) if verdicts else None
        e["tree_nodes"] = sum(r["tree_nodes"] for r in rs) / len(rs)
        for s, _ in SEARCHES:
            done = [r for r in rs if not r[f"{s}.gave_up"]]
            e[f"{s}.gave_up"] = len(rs) - len(done)
            for what in ("nodes", "time_us"):
                ci = aggregate.mean_ci([r[f"{s}.{what}"] for r in done], level)
                e[f"{s}.{what}"] = ci["mean"]
                e[f"{s}.{what}_ci"] = ci["half_width"]
        for bb, bf in PAIRS:
            # Over the instances both finished: the ratio of the mean nodes and of the mean times.
            both = [r for r in rs if not (r[f"{bb}.gave_up"] or r[f"{bf}.gave_up"])]
            for what in ("nodes", "time_us"):
                num = sum(r[f"{bf}.{what}"] for r in both)
                den = sum(r[f"{bb}.{what}"] for r in both)
                e[f"{bf}_over_{bb}.{what}"] = num / den if both and den > 0 else None
            e[f"{bb}.more_nodes"] = sum(1 for r in both if r[f"{bb}.nodes"] > r[f"{bf}.nodes"])
        for agree in ("same_first", "same_optimum", "same_verdict"):
            compared = [r[agree] for r in rs if r[agree] is not None]
            e[f"{agree}.compared"] = len(compared)
            e[f"{agree}.agree"] = int(sum(compared))
        out.append(e)
    return out


def _plots(summary: list[dict], intervals: list[str], out: Path, cap_s: float) -> list[Path]:
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rtnetlab.io import output as outfiles

    paths = []
    for what, label in (("nodes", "nodes visited"), ("time_us", "time (µs)")):
        fig, axes = plt.subplots(
            1, len(intervals), figsize=(3.2 * len(intervals), 3.4), sharey=True, squeeze=False
        )
        for ax, mtc in zip(axes[0], intervals, strict=True):
            es = [e for e in summary if e["mtc_ms"] == mtc]
            for s, name in SEARCHES:
                pts = [
                    (e["vls"], e[f"{s}.{what}"], e[f"{s}.{what}_ci"] or 0.0)
                    for e in es
                    if e[f"{s}.{what}"] is not None and math.isfinite(e[f"{s}.{what}"])
                ]
                if pts:
                    ax.errorbar(
                        [p[0] for p in pts],
                        [p[1] for p in pts],
                        yerr=[p[2] for p in pts],
                        marker="o",
                        capsize=3,
                        label=name,
                    )
            ax.set_yscale("log")
            ax.set_title(f"MTC {mtc} ms", fontsize=9)
            ax.set_xlabel("VLs")
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel(f"mean {label}")
        axes[0][0].legend(fontsize=6)
        fig.suptitle(
            f"seed 001D: branch and bound vs exhaustive search (cap {cap_s:g} s, 95 % CI)", fontsize=9
        )
        fig.tight_layout()
        png = io.BytesIO()
        fig.savefig(png, format="png", dpi=100)
        plt.close(fig)
        path = out / f"table2_{what.split('_')[0]}.png"
        outfiles.atomic_write(path, png.getvalue())
        paths.append(path)
    return paths


def parse_intervals(text: str) -> list[str]:
    from rtnetlab.text import comma_list

    def interval(part: str) -> str:
        m = re.fullmatch(r"(\d+)-(\d+)", part)
        if not m or not 0 < int(m[1]) <= int(m[2]):
            raise ValueError(part)
        return f"{int(m[1])}-{int(m[2])}"

    bad = "{option}: '{item}' is not an interval LO-HI of whole ms with 0 < LO <= HI"
    return comma_list("--mtc", text, interval, bad=bad)


def seed001d_table2(
    out: OutDirOpt,
    sets: Annotated[int, typer.Option("--sets", min=2, help="Random instances per size and interval.")] = 20,
    min_vls: Annotated[int, typer.Option("--min-vls", min=1, help="First size (VLs).")] = PAPER_VLS,
    max_vls: Annotated[int, typer.Option("--max-vls", min=1, help="Largest size tried.")] = 16,
    cap: Annotated[
        float,
        typer.Option("--cap", min=0.001, help="Time cap of each search, s: past it the search gives up."),
    ] = 2.0,
    mtc: Annotated[str, typer.Option("--mtc", help="MTC intervals, ms, comma-separated.")] = ",".join(
        TABLE2_PAPER
    ),
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
    tls_ca: TlsCaOpt = None,
    tls_cert: TlsCertOpt = None,
    tls_key: TlsKeyOpt = None,
    trust_scheduler: TrustOpt = False,
    resume: ResumeOpt = False,
    as_json: JsonOpt = False,
) -> dict:
    """Seed 001D Table II / Fig. 6: branch and bound vs exhaustive search at growing sizes."""
    from rtnetlab import limits
    from rtnetlab.errors import UserError
    from rtnetlab.io import output as outfiles
    from rtnetlab.sweep import aggregate, runner
    from rtnetlab.sweep.figures import _finish

    remote = check_scheduler(scheduler, tls_ca, tls_cert, tls_key, trust_scheduler)
    if max_vls < min_vls:
        raise UserError(f"--max-vls: {max_vls} is below --min-vls {min_vls}")
    limits.check("vls", max_vls, "--max-vls")
    intervals = parse_intervals(mtc)
    # Counted before the sizes and seeds are listed.
    counts = {"--sets": sets, "--max-vls": (max_vls - min_vls + 1, "sizes")}
    limits.check_product("rows", counts, "rows", len(intervals), "intervals")
    sizes = list(range(min_vls, max_vls + 1))
    spec = table2_spec(sizes, intervals, sets, cap)
    t0 = time.perf_counter()
    alive = list(intervals)
    ran = 0
    gave_up_at: dict[str, int | None] = dict.fromkeys(intervals)
    for k, n in enumerate(sizes):
        if not alive:
            break
        spec.stage = {(n, i) for i in alive}
        outcome = runner.run_sweep(
            spec,
            out,
            workers,
            remote,
            resume or k > 0,
            progress=None if not as_json else False,
            batch_fn=table2_batch,
            batch_args=(cap,),
        )
        ran += outcome.ran
        rows = [r for r in _ok(runner.rows_as_dicts(runner.read_rows(out))) if r["tag.vls"] == n]
        for i in list(alive):
            rs = [r for r in rows if r["tag.mtc_ms"] == i]
            if rs and all(r["bf_all.gave_up"] for r in rs):
                gave_up_at[i] = n
                alive.remove(i)
    rows = runner.rows_as_dicts(runner.read_rows(out))
    summary = summarise(rows)
    outfiles.atomic_write(out / "table2.csv", aggregate.csv_text(summary))
    plots = _plots(summary, intervals, out, cap)
    paper = [e for e in summary if e["vls"] == PAPER_VLS]
    doc = {
        "figure": "seed 001D Table II",
        "rows": len(rows),
        "failed": sum(1 for r in rows if r["error"]),
        "ran": ran,
        "wall_s": time.perf_counter() - t0,
        "cap_s": cap,
        "exhaustive_gave_up_at_vls": gave_up_at,
        "table": summary,
        "paper_feasible_percent": TABLE2_PAPER,
        "paper_fig6_speedup": FIG6_PAPER_SPEEDUP,
        "at_paper_size": [
            {
                "mtc_ms": e["mtc_ms"],
                "feasible_percent": e["feasible_percent"],
                "paper_feasible_percent": TABLE2_PAPER.get(e["mtc_ms"]),
                "speedup_first_feasible": e["bf_first_over_bb_fig5.time_us"],
                "speedup_every_combination": e["bf_all_over_bb_min.time_us"],
            }
            for e in paper
        ],
        "files": [str(p) for p in plots] + [str(out / "table2.csv")],
    }
    return _finish(doc)


def register(experiment_app: typer.Typer) -> None:
    from rtnetlab.sweep.figures import command_of

    experiment_app.command("seed001d-table2")(command_of("seed001d-table2", seed001d_table2))
