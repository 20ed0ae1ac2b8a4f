"""Synthesis front: parameters that make a description feasible, computed by the engine and
written back into the user's file (validated first, written whole or not at all)."""

from __future__ import annotations

import json
from pathlib import Path

from rtnetlab import _core
from rtnetlab.errors import ModelError, UserError
from rtnetlab.io import formats

#: `configure afdx --objective`: the order in which the search tries (BAG, MTU) pairs.
AFDX_OBJECTIVES = ("first-feasible", "min-bandwidth", "bag-order")
#: `configure afdx --jitter-at`: where the 500 us jitter limit applies.
AFDX_JITTER_AT = ("all", "sources", "none")


def afdx(
    path: Path,
    objective: str = "first-feasible",
    jitter_at: str = "all",
    check_deadlines: bool = True,
) -> tuple[dict, dict | None]:
    """BAG and MTU of every VL that lists its messages (seed 001D on the whole network).

    Returns the engine's report and the configured description (None when infeasible)."""
    if objective not in AFDX_OBJECTIVES:
        raise UserError(
            f"--objective: expected first-feasible, min-bandwidth or bag-order, got '{objective}'"
        )
    if jitter_at not in AFDX_JITTER_AT:
        raise UserError(f"--jitter-at: expected all, sources or none, got '{jitter_at}'")
    data = formats.read(path)
    request = {"objective": objective, "jitter_at": jitter_at, "check_deadlines": check_deadlines}
    try:
        report = json.loads(_core.configure_afdx(json.dumps(data), json.dumps(request)))
    except ValueError as e:
        raise ModelError(str(e).splitlines()) from None
    if not report["feasible"]:
        return report, None
    # The chosen values go into the user's own data, so that the file keeps its order.
    chosen = {v["flow"]: v for v in report["vls"] if v["configured"]}
    for flow in data.get("flows", []):
        v = chosen.get(flow.get("name")) if isinstance(flow, dict) else None
        if v is not None:
            flow["bag"] = f"{v['bag_ms']}ms"
            flow["lmin"] = f"{v['lmin_bytes']}B"
            flow["lmax"] = f"{v['lmax_bytes']}B"
    return report, data


def dtable(path: Path) -> dict:
    """Deficit Table entries and weights that decouple latency from bandwidth (seed 003 §4-5),
    with the DTable-WF2Q, SCFQ and DRR configurations of the same shares. `feasible` is false
    (with the `reason`) when no table meets the requirements; a wrong document is a UserError."""
    data = formats.read(path)
    try:
        report = json.loads(_core.configure_dtable(json.dumps(data)))
    except ValueError as e:
        raise UserError(f"{path}: {e}") from None
    report.setdefault("feasible", True)
    return report


def insert_schedulers(network: Path, schedulers: dict, prefix: str) -> dict:
    """The description at `network` with `schedulers` added under `prefix` + name (validated)."""
    from rtnetlab import model

    data = formats.read(network)
    named = data.setdefault("schedulers", {})
    if not isinstance(named, dict):
        raise UserError(f"{network}: schedulers: must be a mapping")
    for name, config in schedulers.items():
        named[prefix + name] = config
    model.load_data(data, str(network))
    return data


def priorities(path: Path, method: str = "opa") -> tuple[dict, dict | None, dict | None]:
    """A priority order per processor and bus (OPA or deadline monotonic).

    Returns the engine's report, the description with the priorities written in (None when some
    resource has no feasible order) and the analysis of that description."""
    from rtnetlab import model

    data = formats.read(path)
    net = model.load_data(data, str(path))
    try:
        report = net.assign_priorities(method)
    except model.ChoiceError as e:
        raise UserError(f"--method: {e}") from None
    except ValueError as e:
        raise UserError(str(e)) from None
    if not report["feasible"]:
        return report, None, None
    given = {(a["kind"], a["name"]): a["priority"] for r in report["resources"] for a in r["order"]}
    for key, kind in (("tasks", "task"), ("messages", "message"), ("servers", "server")):
        for item in data.get(key, []) or []:
            if isinstance(item, dict) and (kind, item.get("name")) in given:
                item["priority"] = given[(kind, item["name"])]
    analysis = model.load_data(data, str(path)).analyze()
    return report, data, analysis


def partition(path: Path, method: str = "opa") -> tuple[dict, dict | None, dict | None]:
    """Tasks of chains placed on processors, with priorities (DOPA, seed 001E).

    Returns the engine's report, the description with the placement written in (None when
    PARTITION found none) and the analysis of that description. Written in: every task's
    processor and priority, every bus message's sender (the processor of the task before it) and
    priority; a message whose two tasks share a processor is no longer sent, so it leaves
    `messages` and its chain's steps."""
    from rtnetlab import model

    data = formats.read(path)
    net = model.load_data(data, str(path))
    try:
        report = net.partition(method)
    except model.ChoiceError as e:
        raise UserError(f"--method: {e}") from None
    except ValueError as e:
        raise UserError(f"{path}: {e}") from None
    if not report["feasible"]:
        return report, None, None
    tasks = {t["name"]: t for t in report["tasks"]}
    messages = {m["name"]: m for m in report["messages"]}
    for item in data.get("tasks", []) or []:
        placed = tasks.get(item.get("name")) if isinstance(item, dict) else None
        if placed:
            item["processor"] = placed["processor"]
            item["priority"] = placed["priority"]
    dropped = {name for name, m in messages.items() if not m["on_bus"]}
    kept = []
    for item in data.get("messages", []) or []:
        placed = messages.get(item.get("name")) if isinstance(item, dict) else None
        if placed and not placed["on_bus"]:
            continue
        if placed:
            item["sender"] = placed["sender"]
            item["priority"] = placed["priority"]
        kept.append(item)
    if "messages" in data:
        if kept:
            data["messages"] = kept
        else:
            del data["messages"]
    for chain in data.get("chains", []) or []:
        if isinstance(chain, dict):
            chain["steps"] = [s for s in chain.get("steps", []) if s not in dropped]
    analysis = model.load_data(data, str(path)).analyze()
    return report, data, analysis
