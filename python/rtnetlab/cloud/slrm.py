"""Seed 001G's resource manager: one step of the law, and the simulation's runs and plots."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from rtnetlab import _core
from rtnetlab.errors import UserError


def step(shares: list[float], matching: list[float], epsilon: float, min_share: float = 0.0) -> list[float]:
    """One step of Eq. 3 (clamped and renormalised as docs/CLOUD.md says)."""
    try:
        return _core.slrm_step(shares, matching, epsilon, min_share)
    except ValueError as e:
        raise UserError(f"--{e}") from None


def _app(name: str, kind: str, users: list[tuple[float, int]]) -> dict:
    """An application in the manner of SL-aware RUBiS (t̄ = 1 s, an auction site) or RUBBoS
    (t̄ = 0.5 s, a bulletin board); the optional part (recommendations) costs four times the
    mandatory part. Demands and user counts are ours: the paper gives neither."""
    deadline, mandatory = (1.0, 0.02) if kind == "rubis" else (0.5, 0.01)
    return {
        "name": name,
        "deadline": deadline,
        "mandatory": mandatory,
        "optional": 4 * mandatory,
        "think_time": 1.0,
        "users": [{"at": at, "users": n} for at, n in users],
        "initial_sl": 0.5,
        "controller": CONTROLLER,
    }


#: The applications' SL controller in the built-in experiments (a PI rule on f, docs/CLOUD.md).
CONTROLLER = {"kp": 0.05, "ki": 0.1, "min_sl": 0.0, "max_sl": 1.0}
#: The RM as in the paper (ε = 0.2, period 5 s), with a floor of −0.5 on the matching values it reads
#: and a 2 % minimum share (docs/CLOUD.md: Eq. 3 oscillates on unbounded shortages).
RM = {"epsilon": 0.2, "min_share": 0.02, "matching_floor": -0.5}


def experiment(number: int, seed: int) -> dict:
    """The paper's experiments in kind. 1: 4 cores, RUBiS and RUBBoS, both fit at full SL until
    RUBBoS's users grow at 200 s. 2: 8 cores, two RUBiS and two RUBBoS whose loads grow at 200,
    400 and 600 s until none fits at full SL; at 800 s application 1 loses most of its users,
    reaches full SL and keeps a below-fair cap while the others share the rest."""
    if number == 1:
        apps = [
            _app("RUBiS", "rubis", [(0, 20), (400, 30), (800, 20)]),
            _app("RUBBoS", "rubbos", [(0, 20), (200, 100), (600, 20)]),
        ]
        capacity = 4.0
    elif number == 2:
        apps = [
            _app("RUBiS-1", "rubis", [(0, 20), (200, 30), (400, 40), (600, 50), (800, 2)]),
            _app("RUBiS-2", "rubis", [(0, 20), (200, 30), (400, 40), (600, 50)]),
            _app("RUBBoS-1", "rubbos", [(0, 30), (200, 50), (400, 70), (600, 90)]),
            _app("RUBBoS-2", "rubbos", [(0, 30), (200, 50), (400, 70), (600, 90)]),
        ]
        capacity = 8.0
    else:
        raise UserError(f"--experiment: 1 or 2, got {number}")
    return {
        "capacity": capacity,
        "control_period": 5.0,
        "duration": 1000.0,
        "time_step": 0.01,
        "seed": seed,
        "rm": dict(RM),
        "apps": apps,
    }


def scenario(experiment_number: int | None, file: Path | None, seed: int) -> dict:
    """The scenario to run: a built-in experiment (1 or 2) or a YAML/JSON file."""
    if (experiment_number is None) == (file is None):
        raise UserError("--experiment / --scenario: give exactly one")
    if file is not None:
        from rtnetlab.io import formats

        if file.suffix.lower() not in (".yaml", ".yml", ".json"):
            raise UserError(f"{file}: a scenario is a .yaml, .yml or .json file")
        data = formats.read(file)
        if not isinstance(data, dict):
            raise UserError(f"{file}: a scenario is a mapping (capacity, control_period, duration, apps)")
        data.setdefault("seed", seed)
        return data
    return experiment(experiment_number, seed)


def simulate(sc: dict, source: str = "scenario") -> dict:
    try:
        return json.loads(_core.slrm_simulate_json(json.dumps(sc)))
    except ValueError as e:
        raise UserError(f"{source}: {e}") from None


def summary(report: dict) -> dict:
    """Checks the RM's invariant on a run: the largest |Σ caps − capacity| over the periods."""
    worst = max(
        (abs(sum(a["cap"] for a in p["apps"]) - report["capacity"]) for p in report["periods"]), default=0.0
    )
    last = report["periods"][-1]["apps"] if report["periods"] else []
    return {
        "periods": len(report["periods"]),
        "max_cap_sum_error": worst,
        "final_caps": [a["cap"] for a in last],
        "final_sl": [a["sl"] for a in last],
    }


def csv_text(report: dict) -> str:
    out = io.StringIO()
    out.write("time_s,app,users,sl,share,cap_cores,response_time_s,mean_response_time_s,matching,completed\n")
    for p in report["periods"]:
        for name, a in zip(report["apps"], p["apps"], strict=True):
            mean = "" if a["mean_response_time"] is None else f"{a['mean_response_time']:.6g}"
            out.write(
                f"{p['time']:g},{name},{a['users']},{a['sl']:.6g},{a['share']:.6g},{a['cap']:.6g},"
                f"{a['response_time']:.6g},{mean},{a['matching']:.6g},{a['completed']}\n"
            )
    return out.getvalue()


def plot_png(report: dict, title: str) -> bytes:
    """Caps, service levels and response times against time, one line per application (the
    paper's Figs. 1 and 2 in kind); the deadlines t̄ dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [p["time"] for p in report["periods"]]
    fig, axes = plt.subplots(4, 1, figsize=(9, 10), sharex=True)
    for i, name in enumerate(report["apps"]):
        series = [p["apps"][i] for p in report["periods"]]
        (line,) = axes[0].plot(t, [a["cap"] for a in series], label=name)
        axes[1].plot(t, [a["sl"] for a in series], color=line.get_color())
        axes[2].plot(t, [a["response_time"] for a in series], color=line.get_color())
        axes[2].axhline(report["deadlines"][i], color=line.get_color(), linestyle="--", linewidth=0.8)
        axes[3].plot(t, [a["users"] for a in series], color=line.get_color())
    axes[0].set_ylabel("cap (cores)")
    axes[0].axhline(report["capacity"], color="grey", linewidth=0.8)
    axes[1].set_ylabel("service level s")
    axes[1].set_ylim(-0.05, 1.05)
    axes[2].set_ylabel("max response (s)")
    axes[2].set_yscale("log")
    axes[3].set_ylabel("users")
    axes[3].set_xlabel("time (s)")
    axes[0].legend(loc="upper right", fontsize=8)
    axes[0].set_title(title)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def outputs(out_dir: Path) -> dict[str, Path]:
    return {name: out_dir / name for name in ("slrm.json", "slrm.csv", "slrm.png")}


def write(out_dir: Path, report: dict, title: str) -> list[Path]:
    from rtnetlab.io import output as outfiles

    files = outputs(out_dir)
    data: dict[Path, Any] = {
        files["slrm.json"]: json.dumps(report, indent=1, allow_nan=False) + "\n",
        files["slrm.csv"]: csv_text(report),
        files["slrm.png"]: plot_png(report, title),
    }
    outfiles.write_all(data)
    return list(files.values())
