"""`rtnetlab experiment soundness`: random networks across every scheduler kind, flow type,
switching mode and plane count, each simulated and checked against every sound analysis method:
no simulated delay of a (flow, destination, plane) above its bound, no port's simulated backlog
above its bound. Runs as a sweep (one row per network); the smallest violating network is written
as a reproducer.

Network n of seed S is fully determined by (S, n): the generator's small random network
(`generate::random_small`), then, in turn over n, every switch port given a random configuration
of one scheduler kind (`generate::random_port_scheduler`, or the generator's mix of samples),
flows turned into token-bucket or periodic flows, and cut-through switches. Cut-through switches
are outside what the analyses model (docs/ANALYSIS.md, "Switching"): their rows are compared too
but counted apart (`cut_through.beyond_bound`), not as violations.
"""

from __future__ import annotations

import json
import math
import random
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from rtnetlab import limits
from rtnetlab.errors import UserError
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

#: The methods whose bounds are guaranteed on store-and-forward networks, (name, method, blind).
METHODS = [
    ("best", "best", False),
    ("tfa", "tfa", False),
    ("sfa", "sfa", False),
    ("pmoo", "pmoo", False),
    ("fifo-lp", "fifo-lp", False),
    ("afdx-naive", "afdx-naive", False),
    ("best-blind", "best", True),
]
FLOW_TYPES = ["virtual_link", "token_bucket", "periodic", "mixed"]
#: Bins of simulated maximum / bound (best): [0, 0.1), ..., [0.9, 1], above 1.
RATIO_BINS = [f"{k / 10:.1f}-{(k + 1) / 10:.1f}" for k in range(10)] + [">1"]
#: Integer-ns rounding of transmissions: < 1 ns per hop (as the engine's soundness tests allow).
DELAY_SLACK_US = 0.01
BACKLOG_SLACK_BYTES = 1.0
WORKLOADS: list[Any] = [
    {"kind": "periodic"},
    {"kind": "cbr", "load": 1.0},
    {"kind": "poisson", "load": 1.0},
    {"kind": "pareto_bursts", "load": 0.8, "alpha": 1.5, "mean_frames": 4.0},
]


def modes() -> list[str]:
    """Scheduler modes in turn: every kind the engine registers on every port, then the mix."""
    from rtnetlab import _core

    return list(_core.scheduler_kinds()) + ["mix"]


def metric_names() -> list[str]:
    from rtnetlab import _core

    return (
        [
            "planes",
            "flows",
            "routes",
            "frames",
            "checks",
            "violations",
            "analysis_errors",
            "delay_violations",
            "backlog_violations",
            "not_applicable",
            "beyond_unguaranteed",
            "ratio_max",
            "ratio_mean",
        ]
        + [f"ratio.{b}" for b in RATIO_BINS]
        + [f"uses.{k}" for k in _core.scheduler_kinds()]
    )


def plan(seed: int, n: int) -> dict:
    """What network n of the campaign is: its generator seed, scheduler mode, flow type,
    switching and simulation settings."""
    ms = modes()
    rng = random.Random(seed * 1_000_003 + n)
    return {
        "net_seed": seed * 1_000_003 + n,
        "scheduler": ms[n % len(ms)],
        "flow_type": FLOW_TYPES[(n // len(ms)) % len(FLOW_TYPES)],
        "switching": "cut_through" if (n // (len(ms) * len(FLOW_TYPES))) % 4 == 3 else "store_and_forward",
        "release": rng.choice(["synchronized", "random"]),
        "frame_sizes": rng.choice(["max", "uniform"]),
        "workload": rng.choice(WORKLOADS),
    }


def _bytes(text: str) -> float:
    from rtnetlab import _core

    return _core.parse_quantity("size", text) / 8


def network(p: dict) -> dict:
    """The description of a planned network (plain data)."""
    from rtnetlab import _core

    mix = p["scheduler"] == "mix"
    doc = json.loads(_core.random_network(p["net_seed"], "any" if mix else "fifo"))
    rng = random.Random(p["net_seed"] ^ 0x5EED)
    classes = [c["name"] for c in doc["classes"]]
    if not mix:
        lmax = []
        for c in classes:
            sizes = [round(_bytes(f["lmax"])) for f in doc["flows"] if f.get("class") == c]
            lmax.append(max(sizes, default=1518))
        doc["schedulers"] = {}
        default_rate = (doc.get("defaults") or {}).get("link_rate", "100Mbps")
        for i, sw in enumerate(doc["switches"]):
            # Rate-dependent parameters (idle slopes, gate windows) drawn for the slowest link.
            rates = [
                _core.parse_quantity("rate", link.get("rate", default_rate))
                for link in doc["links"]
                if sw["name"] in (link["from"], link["to"])
            ]
            config = json.loads(
                _core.random_port_scheduler(
                    p["scheduler"], lmax, rng.randrange(2**32), min(rates, default=1e9)
                )
            )
            doc["schedulers"][f"port{i}"] = config
            sw["scheduler"] = f"port{i}"
    for k, f in enumerate(doc["flows"]):
        kind = p["flow_type"] if p["flow_type"] != "mixed" else FLOW_TYPES[k % 3]
        if kind == "virtual_link":
            continue
        bag, lmin, lmax, jitter = f["bag"], f["lmin"], f["lmax"], f.get("release_jitter")
        for key in ("type", "id", "bag", "lmin", "lmax", "release_jitter", "skew_max"):
            f.pop(key, None)
        if kind == "periodic":
            f.update({"type": "periodic", "period": bag, "size": lmax})
            if jitter:
                f["jitter"] = jitter
        else:
            # The VL's contract as a token bucket: a burst of two frames, the VL's rate.
            from rtnetlab import _core as c

            rate = _bytes(lmax) * 8 / c.parse_quantity("duration", bag)
            f.update(
                {
                    "type": "token_bucket",
                    "burst": f"{2 * round(_bytes(lmax))}B",
                    "rate": f"{rate:.6g}bps",
                    "min_packet": lmin,
                    "max_packet": lmax,
                }
            )
    if p["switching"] == "cut_through":
        for sw in doc["switches"]:
            sw["switching"] = "cut_through"
    return doc


def kinds_used(doc: dict) -> set[str]:
    """Scheduler kinds the switch ports run (a shaper's inner discipline included)."""
    configs = doc.get("schedulers") or {}
    default = (doc.get("defaults") or {}).get("scheduler", "fifo")

    def kinds(name: str) -> set[str]:
        c = configs.get(name)
        if c is None:
            return {name}
        inner = c.get("inner")
        return {c["kind"]} | (kinds(inner) if inner else set())

    out: set[str] = set()
    for sw in doc["switches"]:
        out |= kinds(sw.get("scheduler") or default)
    return out


def sim_config(p: dict, seed: int, duration_ms: float) -> dict:
    return {
        "duration_ns": round(duration_ms * 1e6),
        "seed": seed,
        "release": p["release"],
        "frame_sizes": p["frame_sizes"],
        "workload": p["workload"],
    }


def check(doc: dict, p: dict, seed: int, duration_ms: float, details: bool = False) -> dict:
    """Simulates the network and compares every route and port with every method's bounds."""
    from rtnetlab import _core, model
    from rtnetlab.simulate import run

    net = model.load_data(doc, f"network {p['net_seed']}")
    sim = run(net, sim_config(p, seed, duration_ms), progress=False)
    guaranteed = p["switching"] == "store_and_forward"
    m: dict[str, float] = {k: 0.0 for k in metric_names()}
    m["planes"] = float(len((doc.get("redundancy") or {}).get("planes", ["A"])))
    m["flows"] = float(len(doc["flows"]))
    m["routes"] = float(len(sim["flows"]))
    m["frames"] = float(sum(f["count"] for f in sim["flows"]))
    used = kinds_used(doc)
    for k in _core.scheduler_kinds():
        m[f"uses.{k}"] = float(k in used)
    found: list[dict] = []
    ratios: list[float] = []
    for name, method, blind in METHODS:
        try:
            bounds = net.analyze(method, False, blind)
        except (ValueError, UserError):
            m["not_applicable"] += 1  # e.g. afdx-naive on a non-FIFO port
            continue
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # an engine panic: a finding, recorded with the network
            m["analysis_errors"] += 1
            found.append({"method": name, "error": f"{type(e).__name__}: {' '.join(str(e).split())}"})
            continue
        by_route = {(b["flow"], b["destination"], b["plane"]): b["delay_us"] for b in bounds["flows"]}
        for f in sim["flows"]:
            b = by_route[(f["flow"], f["destination"], f["plane"])]
            bound = math.inf if b is None else float(b)
            m["checks"] += 1
            if f["count"] and name == "best":
                ratios.append(f["max_us"] / bound if bound > 0 else math.inf)
            if f["count"] and f["max_us"] > bound + DELAY_SLACK_US:
                what = {
                    "method": name,
                    "route": [f["flow"], f["destination"], f["plane"]],
                    "simulated_max_us": f["max_us"],
                    "bound_us": bound,
                }
                if guaranteed:
                    m["violations"] += 1
                    m["delay_violations"] += 1
                    found.append(what)
                else:
                    m["beyond_unguaranteed"] += 1
        by_port = {(b["node"], b["port"], b["plane"]): b["backlog_bytes"] for b in bounds["ports"]}
        for s in sim["ports"]:
            b = by_port.get((s["node"], s["port"], s["plane"]))
            bound = math.inf if b is None else float(b)
            m["checks"] += 1
            if s["max_backlog_bytes"] > bound + BACKLOG_SLACK_BYTES:
                what = {
                    "method": name,
                    "port": [s["node"], s["port"], s["plane"]],
                    "simulated_backlog_bytes": s["max_backlog_bytes"],
                    "bound_bytes": bound,
                }
                if guaranteed:
                    m["violations"] += 1
                    m["backlog_violations"] += 1
                    found.append(what)
                else:
                    m["beyond_unguaranteed"] += 1
    finite = [r for r in ratios if math.isfinite(r)]
    m["ratio_max"] = max(ratios, default=math.nan)
    m["ratio_mean"] = sum(finite) / len(finite) if finite else math.nan
    for r in finite:
        m[f"ratio.{RATIO_BINS[min(int(r * 10), 9) if r <= 1 else 10]}"] += 1
    if details:
        m["found"] = found  # type: ignore[assignment]
    return m


def run_batch(seed: int, duration_ms: float, batch: list[tuple[int, int, dict, str]]) -> list[dict]:
    """Rows of a batch of networks (a sweep task)."""
    from rtnetlab.sweep.points import engine_version, record

    version, rows = engine_version(), []
    names = metric_names()
    for task in batch:
        p = plan(seed, task[2]["tag.network"])
        rows.append(record(task, names, lambda p=p, s=task[1]: check(network(p), p, s, duration_ms), version))
    return rows


def campaign_spec(networks: int, seed: int, duration_ms: float) -> SweepSpec:
    ps = [plan(seed, n) for n in range(networks)]
    axis = Axis(
        ["tag.network", "tag.scheduler", "tag.flow_type", "tag.switching"],
        [[n, p["scheduler"], p["flow_type"], p["switching"]] for n, p in enumerate(ps)],
    )
    from rtnetlab.sweep.points import engine_version

    return SweepSpec(
        source="soundness",
        name="soundness",
        network={"soundness": {"seed": seed, "engine": engine_version()}},
        axes=[axis],
        seeds=[seed],
        run={"soundness": {"duration_ms": duration_ms, "methods": [m[0] for m in METHODS]}},
        keep=metric_names(),
        confidence=0.95,
        points_per_task=None,
    )


def summarise(rows: list[dict], networks: int) -> dict:
    from rtnetlab import _core

    ok = [r for r in rows if not r["error"]]

    def total(k: str) -> int:
        return int(sum(r[k] or 0 for r in ok))

    covered = [k for k in _core.scheduler_kinds() if any(r[f"uses.{k}"] for r in ok)]
    sf = [r for r in ok if r["tag.switching"] == "store_and_forward"]
    ratios_max = [r["ratio_max"] for r in sf if r["ratio_max"] is not None]
    return {
        "networks": networks,
        "rows": len(rows),
        "failed": len(rows) - len(ok),
        "routes": total("routes"),
        "frames": total("frames"),
        "checks": total("checks"),
        "violations": int(sum(r["violations"] or 0 for r in sf)),
        "delay_violations": int(sum(r["delay_violations"] or 0 for r in sf)),
        "backlog_violations": int(sum(r["backlog_violations"] or 0 for r in sf)),
        "violating_networks": sum(1 for r in sf if r["violations"]),
        "analysis_errors": total("analysis_errors"),
        "analysis_error_networks": sum(1 for r in ok if r["analysis_errors"]),
        "schedulers": covered,
        "scheduler_modes": sorted({r["tag.scheduler"] for r in rows}),
        "flow_types": {t: sum(1 for r in ok if r["tag.flow_type"] == t) for t in FLOW_TYPES},
        "switching": {
            s: sum(1 for r in ok if r["tag.switching"] == s) for s in ("store_and_forward", "cut_through")
        },
        "planes": {str(k): sum(1 for r in ok if r["planes"] == k) for k in (1, 2)},
        "methods": [m[0] for m in METHODS],
        "methods_not_applicable": total("not_applicable"),
        "cut_through": {
            "networks": sum(1 for r in ok if r["tag.switching"] == "cut_through"),
            "beyond_bound": total("beyond_unguaranteed"),
        },
        "simulated_over_bound": {
            "method": "best",
            "bins": {b: total(f"ratio.{b}") for b in RATIO_BINS},
            "max": max(ratios_max, default=None),
            "mean_of_network_means": (
                sum(r["ratio_mean"] for r in sf if r["ratio_mean"] is not None)
                / max(1, sum(1 for r in sf if r["ratio_mean"] is not None))
            ),
        },
        "errors": sorted({r["error"] for r in rows if r["error"]})[:5],
    }


def write_reproducer(
    rows: list[dict],
    seed: int,
    duration_ms: float,
    out: Path,
    what: str = "violations",
    stem: str = "reproducer",
) -> dict | None:
    """The smallest network (fewest flows, then routes) with `what` (violations, or
    analysis_errors: an engine failure) as DIR/STEM.json: the description, the simulation
    settings and what was found, re-checked here; the description alone as DIR/STEM.yaml."""
    from rtnetlab.io import output as outfiles

    bad = [
        r
        for r in rows
        if not r["error"] and r[what] and (what != "violations" or r["tag.switching"] == "store_and_forward")
    ]
    if not bad:
        return None
    r = min(bad, key=lambda r: (r["flows"], r["routes"], r["index"]))
    p = plan(seed, r["tag.network"])
    doc = network(p)
    again = check(doc, p, r["seed"], duration_ms, details=True)
    rep = {
        "network_index": r["tag.network"],
        "plan": p,
        "simulate": sim_config(p, r["seed"], duration_ms),
        "violations": again["found"],
        "description": doc,
        "replay": "rtnetlab simulate reproducer.yaml --duration D --seed S --release R --frame-sizes F",
    }
    outfiles.write_all(
        {
            out / f"{stem}.json": json.dumps(rep, indent=1, default=str) + "\n",
        }
    )
    from rtnetlab.io import formats

    formats.write(doc, out / f"{stem}.yaml")
    return {
        "file": str(out / f"{stem}.json"),
        "description": str(out / f"{stem}.yaml"),
        "network_index": r["tag.network"],
        "flows": r["flows"],
        "found": len(again["found"]),
    }


def campaign(
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
) -> dict:
    """Random networks (every scheduler kind, flow type, switching mode, plane count) simulated
    and checked against every sound method's delay and backlog bounds."""
    from rtnetlab.sweep import runner
    from rtnetlab.sweep.figures import sweep_figure

    remote = check_scheduler(scheduler, tls_ca, tls_cert, tls_key, trust_scheduler)
    spec = campaign_spec(networks, seed, duration_ms)
    swept = sweep_figure(spec, out, workers, remote, resume, as_json, run_batch, (seed, duration_ms))
    rows, outcome = swept.rows, swept.outcome
    doc = summarise(rows, networks)
    doc["reproducer"] = write_reproducer(rows, seed, duration_ms, out)
    doc["error_reproducer"] = write_reproducer(
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
    return doc
