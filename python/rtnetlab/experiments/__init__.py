"""Experiments that reproduce the seeds' comparisons on rtnetlab's own engines."""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from pathlib import Path

from rtnetlab import model
from rtnetlab.demo import case_study_path
from rtnetlab.errors import UserError
from rtnetlab.io import formats
from rtnetlab.simulate import run

#: Seed 000's class factors ω (avionics : multimedia : best effort = 6 : 3 : 1) and Δ = 1000 B.
FACTORS = {"avionics": 6.0, "multimedia": 3.0, "best_effort": 1.0}

SCHEDULERS = {
    "FIFO": {"kind": "fifo"},
    "SP": {"kind": "static_priority"},
    "WF2Q": {"kind": "wf2q", "weights": FACTORS},
    "D2DRR": {"kind": "d2drr", "base_quantum": "1000B", "factors": FACTORS},
}


def _quantile(hist: list[tuple[float, int]], q: float) -> float:
    total = sum(n for _, n in hist)
    rank, seen = q * total, 0
    for upper, n in sorted(hist):
        seen += n
        if seen >= rank:
            return upper
    return 0.0


def seed000_schedulers(duration_s: float = 2.0, seed: int = 1, link_rate: str = "10Mbps") -> list[dict]:
    """Seed 000's comparison (Fig. 8) at one load point: the embedded case study (avionics,
    multimedia and best-effort VLs on two planes) with its links slowed to `link_rate` so that the
    display's port is heavily loaded, every switch port running FIFO, static priority, WF2Q or
    D2DRR in turn; per class, the simulated mean, p99 and maximum latency and the largest bound."""
    base = formats.read(__import__("pathlib").Path(case_study_path()))
    base["defaults"]["link_rate"] = link_rate
    rows = []
    for name, config in SCHEDULERS.items():
        spec = copy.deepcopy(base)
        spec["schedulers"] = {"s": config}
        for sw in spec["switches"]:
            sw["scheduler"] = "s" if config["kind"] not in ("fifo", "static_priority") else config["kind"]
        net = model.load_data(spec, f"case study with {name}")
        cls = {f["name"]: f.get("class", "") for f in spec["flows"]}
        report = run(net, {"duration_ns": round(duration_s * 1e9), "seed": seed}, progress=False)
        bounds = net.analyze("best")["flows"]
        hist: dict[str, list] = defaultdict(list)
        count: dict[str, int] = defaultdict(int)
        total: dict[str, float] = defaultdict(float)
        worst: dict[str, float] = defaultdict(float)
        for f in report["flows"]:
            c = cls[f["flow"]]
            hist[c] += f["histogram"]
            count[c] += f["count"]
            total[c] += f["mean_us"] * f["count"]
            worst[c] = max(worst[c], f["max_us"])
        # The class's largest bound; None (unbounded) as soon as one of its flows has none.
        bound: dict[str, float | None] = defaultdict(float)
        for b in bounds:
            c = cls[b["flow"]]
            bound[c] = None if b["delay_us"] is None or bound[c] is None else max(bound[c], b["delay_us"])
        for c in FACTORS:
            rows.append(
                {
                    "scheduler": name,
                    "class": c,
                    "frames": count[c],
                    "mean_us": total[c] / max(count[c], 1),
                    "p99_us": _quantile(hist[c], 0.99),
                    "max_us": worst[c],
                    "bound_us": bound[c],
                }
            )
    return rows


#: Seed 001E, Fig. 6: panel → (x label, file stem, paper's reference point as (x, OPA, DM)).
DOPA_PANELS = {
    "density": ("total density", "fig6a_density", (9.0, 0.52, 0.16)),
    "processors": ("processors", "fig6b_processors", (9.0, 0.70, 0.30)),
    "applications": ("applications", "fig6c_applications", (40.0, 0.69, 0.34)),
}


def dopa_fig6(
    out_dir: Path,
    sets: int = 100,
    points: int = 10,
    seed: int = 1,
    dm_key: str = "local-window",
    local_test: str = "release-jitter",
    threads: int = 2,
) -> dict[str, list[tuple[float, float, float]]]:
    """The three curves of seed 001E's Fig. 6 (acceptance of PARTITION with OPA and with deadline
    monotonic), as CSV and PNG files in `out_dir`; returns the rows per panel."""
    import csv
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rtnetlab import _core
    from rtnetlab.io import output as outfiles

    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"--out-dir: {out_dir}: is not a directory")
    results = {}
    for panel, (label, stem, (px, popa, pdm)) in DOPA_PANELS.items():
        try:
            rows = _core.dopa_fig6(panel, points, sets, seed, dm_key, local_test, threads)
        except _core.ChoiceError as e:
            # The engine names the argument and lists its values; the option is ours to name.
            argument, reason = e.args
            option = {"dm_key": "--dm-key", "local_test": "--local-test"}.get(argument, argument)
            raise UserError(f"{option}: {reason}") from None
        except ValueError as e:
            raise UserError(str(e)) from None
        results[panel] = rows
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([label.replace(" ", "_"), "opa_acceptance", "dm_acceptance"])
        w.writerows(rows)
        outfiles.atomic_write(out_dir / f"{stem}.csv", buf.getvalue())
        fig, ax = plt.subplots(figsize=(5, 3.4))
        ax.plot([r[0] for r in rows], [r[1] for r in rows], "o-", label="OPA")
        ax.plot([r[0] for r in rows], [r[2] for r in rows], "s--", label=f"DM ({dm_key})")
        ax.plot([px], [popa], "k*", label="paper: OPA")
        ax.plot([px], [pdm], "kx", label="paper: DM")
        ax.set_xlabel(label)
        ax.set_ylabel("accepted sets")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        png = io.BytesIO()
        fig.savefig(png, format="png", dpi=120)
        plt.close(fig)
        outfiles.atomic_write(out_dir / f"{stem}.png", png.getvalue())
    return results


def nss_overhead(gaps_ms: list[int], budgets: list[int], packets: int = 1000, seeds: int = 20) -> list[dict]:
    """Seed 004's Table 4: the network sporadic server's CPU overhead (%) per mean inter-arrival
    gap and budget, by simulation of rules 1-4 with the paper's costs."""
    from rtnetlab import _core

    try:
        return json.loads(_core.nss_overhead_json(gaps_ms, budgets, packets, seeds))
    except ValueError as e:
        raise UserError(str(e)) from None


#: Seed 003's multimedia set-up, shipped with the package (examples/fabric/multimedia.json
#: links to it).
FABRIC_SCENARIO = "fabric_multimedia.json"


def fabric_scenario_path() -> Path:
    from importlib import resources

    return Path(str(resources.files("rtnetlab") / "data" / FABRIC_SCENARIO))


def _in_worker(fn, *args):
    """Runs `fn` (an engine call that releases the GIL) in a worker thread so that the main
    thread, which Python's signal handlers run on, answers Ctrl-C at once; the worker is a daemon
    and ends with the process."""
    import threading

    result: dict = {}

    def work() -> None:
        try:
            result["value"] = fn(*args)
        except BaseException as e:  # handed to the main thread
            result["error"] = e

    t = threading.Thread(target=work, daemon=True)
    t.start()
    while t.is_alive():
        t.join(0.1)
    if "error" in result:
        raise result["error"]
    return result["value"]


def fabric(
    scenario_path: Path | None = None,
    schedulers: list[str] | None = None,
    duration: str | None = None,
    warmup: str | None = None,
    reference_rate: str | None = None,
    seed: int | None = None,
    on_start=None,
) -> list[dict]:
    """Seed 003's lossless fabric scenario (the shipped multimedia set-up by default) run once
    per scheduler (all the scenario names by default); returns one engine report per scheduler.
    `on_start(name, k, n)` is called before the k-th of the n runs."""
    from rtnetlab import _core
    from rtnetlab.io import formats

    scenario_path = fabric_scenario_path() if scenario_path is None else Path(scenario_path)

    scenario = formats.read(scenario_path)
    if not isinstance(scenario, dict) or not isinstance(scenario.get("schedulers"), dict):
        raise UserError(f"{scenario_path}: a fabric scenario is a mapping with named `schedulers`")
    names = schedulers or list(scenario["schedulers"])
    for name in names:
        if name not in scenario["schedulers"]:
            known = ", ".join(scenario["schedulers"])
            raise UserError(f"--scheduler: '{name}' is not a scheduler of the scenario ({known})")
    for key, value in (("duration", duration), ("warmup", warmup), ("reference_rate", reference_rate),
                       ("seed", seed)):
        if value is not None:
            scenario[key] = value
    reports = []
    for k, name in enumerate(names):
        if on_start is not None:
            on_start(name, k, len(names))
        scenario["scheduler"] = name
        try:
            reports.append(json.loads(_in_worker(_core.fabric_run, json.dumps(scenario))))
        except ValueError as e:
            raise UserError(f"{scenario_path}: {e}") from None
    return reports
