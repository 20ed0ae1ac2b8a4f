"""Synthesis front: parameters that make a description feasible, computed by the engine and
written back into the user's file (validated first, written whole or not at all)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rtnetlab import _core
from rtnetlab.errors import ModelError, UserError
from rtnetlab.io import formats

#: `configure afdx --objective`: the order in which the search tries (BAG, MTU) pairs.
AFDX_OBJECTIVES = ("first-feasible", "min-bandwidth", "bag-order")
#: `configure afdx --jitter-at`: where the 500 us jitter limit applies.
AFDX_JITTER_AT = ("all", "sources", "none")


def _read(source: Any) -> dict:
    """A description to configure: a file read, a copy of plain data or of a
    :class:`rtnetlab.Network`'s description (the caller's is kept)."""
    to_dict = getattr(source, "to_dict", None)
    if to_dict is not None:
        return to_dict()
    if isinstance(source, dict):
        import copy

        return copy.deepcopy(source)
    return formats.read(source)


def _name(source: Any, given: str) -> str:
    return given or (str(source) if isinstance(source, (str, Path)) else "")


def afdx(
    path: Any,
    objective: str = "first-feasible",
    jitter_at: str = "all",
    check_deadlines: bool = True,
    source: str = "",
) -> tuple[dict, dict | None]:
    """BAG and MTU of every VL that lists its messages (seed 001D on the whole network).

    Returns the engine's report and the configured description (None when infeasible)."""
    if objective not in AFDX_OBJECTIVES:
        raise UserError(
            f"--objective: expected first-feasible, min-bandwidth or bag-order, got '{objective}'"
        )
    if jitter_at not in AFDX_JITTER_AT:
        raise UserError(f"--jitter-at: expected all, sources or none, got '{jitter_at}'")
    data = _read(path)
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


def dtable(path: Any, source: str = "") -> dict:
    """Deficit Table entries and weights that decouple latency from bandwidth (seed 003 §4-5),
    with the DTable-WF2Q, SCFQ and DRR configurations of the same shares. `feasible` is false
    (with the `reason`) when no table meets the requirements; a wrong document is a UserError."""
    data = _read(path)
    try:
        report = json.loads(_core.configure_dtable(json.dumps(data)))
    except ValueError as e:
        raise UserError(f"{_name(path, source) or 'requirements'}: {e}") from None
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


def priorities(path: Any, method: str = "opa", source: str = "") -> tuple[dict, dict | None, dict | None]:
    """A priority order per processor and bus (OPA or deadline monotonic).

    Returns the engine's report, the description with the priorities written in (None when some
    resource has no feasible order) and the analysis of that description."""
    from rtnetlab import model

    data = _read(path)
    where = _name(path, source)
    net = model.load_data(data, where)
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
    analysis = model.load_data(data, where).analyze()
    return report, data, analysis


def partition(path: Any, method: str = "opa", source: str = "") -> tuple[dict, dict | None, dict | None]:
    """Tasks of chains placed on processors, with priorities (DOPA, seed 001E).

    Returns the engine's report, the description with the placement written in (None when
    PARTITION found none) and the analysis of that description. Written in: every task's
    processor and priority, every bus message's sender (the processor of the task before it) and
    priority; a message whose two tasks share a processor is no longer sent, so it leaves
    `messages` and its chain's steps."""
    from rtnetlab import model

    data = _read(path)
    where = _name(path, source)
    net = model.load_data(data, where)
    try:
        report = net.partition(method)
    except model.ChoiceError as e:
        raise UserError(f"--method: {e}") from None
    except ValueError as e:
        raise UserError(f"{where}: {e}") from None
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
    analysis = model.load_data(data, where).analyze()
    return report, data, analysis


#: `configure tsn --objective`, `--solver` and `--verify`.
TSN_OBJECTIVES = ("bandwidth", "slack", "cycle")
TSN_SOLVERS = ("auto", "exact", "heuristic")
TSN_CHECKS = ("analysis", "simulation", "testbed")


def tsn(
    path: Any,
    objective: str = "bandwidth",
    time_limit: float = 60.0,
    solver: str = "auto",
    exact_limit: int = 5000,
    source: str = "",
    max_wait: float | str | None = None,
) -> tuple[dict, dict | None]:
    """Gate control lists for every `tas` port without entries, offsets for the streams of its
    `scheduled` classes, and idle slopes for `auto` credit-based classes (the engine's
    synthesis::tsn; HiGHS solves its offsets' program when installed).

    `max_wait` (seconds, or a duration such as ``"20us"``): bounded-wait, each scheduled frame
    may wait at most that long in all, behind other scheduled frames at the gates of its route;
    None or 0: no-wait.

    Returns the engine's report (without the document) and the configured description (None when
    infeasible)."""
    from rtnetlab.analysis.lp import milp_solver

    if objective not in TSN_OBJECTIVES:
        raise UserError(f"--objective: expected bandwidth, slack or cycle, got '{objective}'")
    if solver not in TSN_SOLVERS:
        raise UserError(f"--solver: expected auto, exact or heuristic, got '{solver}'")
    if not time_limit > 0:
        raise UserError(f"--time-limit: must be a positive number of seconds, got {time_limit}")
    if exact_limit < 0:
        raise UserError(f"--exact-limit: must not be negative, got {exact_limit}")
    wait_ns = max_wait_ns(max_wait)
    data = _read(path)
    request = {"objective": objective, "time_limit": time_limit, "solver": solver, "exact_limit": exact_limit,
               "max_wait_ns": wait_ns}
    milp = None if solver == "heuristic" else milp_solver()
    try:
        report = json.loads(_core.configure_tsn(json.dumps(data), json.dumps(request), milp))
    except ValueError as e:
        raise ModelError(str(e).splitlines()) from None
    document = report.pop("document", None)
    return report, document if report["feasible"] else None


def max_wait_ns(max_wait: float | str | None) -> int:
    """`--max-wait` in whole ns (0: no-wait): seconds, or a duration as the descriptions write
    them. A negative, non-finite or unreadable bound is a UserError naming the option."""
    import math

    if max_wait is None:
        return 0
    if isinstance(max_wait, str):
        try:
            seconds = _core.parse_quantity("duration", max_wait)
        except ValueError as e:
            raise UserError(f"--max-wait: {e}") from None
    elif isinstance(max_wait, (int, float)) and not isinstance(max_wait, bool):
        seconds = float(max_wait)
    else:
        raise UserError(f"--max-wait: expected a duration such as 20us, got {max_wait!r}")
    if not math.isfinite(seconds) or seconds < 0:
        raise UserError(f"--max-wait: must be a duration of zero or more, got {max_wait}")
    if seconds > 1.0:
        raise UserError(
            f"--max-wait: at most 1 s (a frame held longer is not time-triggered), got {max_wait}"
        )
    return round(seconds * 1e9)


def verify_tsn(
    configured: dict,
    report: dict,
    checks: tuple[str, ...],
    sim_seconds: float,
    testbed_seconds: float,
    source: str = "",
    testbed_time_scale: float = 1.0,
) -> dict:
    """The configured description checked three ways: `analysis` (`best`, every deadline met:
    analyze --fail-on-miss's verdict), `simulation` (every frame in time, and every stream's
    frames all at its no-wait chain: none ever queued; under bounded-wait, every frame between its
    chain and its chain plus the bound: none waited longer) and `testbed` (the user-space switch
    running the gates on real frames, `testbed_time_scale` times slower than the model; needs root,
    skipped with the reason otherwise; undecided where the host's noise exceeds the clock error). Returns
    {check: {"passed": bool | None, "detail": str, ...}}."""
    from rtnetlab import model, results

    net = model.load_data(configured, source)
    out: dict = {}
    chains = {s["flow"]: s["chain_us"] for s in report.get("streams", [])}
    if "analysis" in checks:
        analysis = net.analyze("best")
        v = results.verdict(analysis)
        out["analysis"] = {
            "passed": not v["failed"],
            "detail": f"{v['rows']} bounds, {v['miss']} above their deadline, {v['unbounded']} unbounded",
            "failures": v["failures"],
        }
    if "simulation" in checks:
        from rtnetlab import simulate

        config = {"duration_ns": round(sim_seconds * 1e9), "seed": 1, "release": "random"}
        sim = simulate.run(net, config, progress=False)
        simulate.attach_bounds(net, sim, config)
        late = [f"{f['flow']} -> {f['destination']}" for f in sim["flows"] if f.get("late")]
        # No-wait: every frame of a stream takes exactly its chain (1 ns of rounding allowed).
        # Bounded-wait: its wait (delay less chain) at most the bound.
        bound_us = report.get("max_wait_ns", 0) / 1e3
        scheduled = [f for f in sim["flows"] if f["flow"] in chains and f["count"]]
        queued = [
            f"{f['flow']} -> {f['destination']}: {f['min_us']:.3f}..{f['max_us']:.3f} us, chain "
            f"{chains[f['flow']]:.3f} us" + (f", wait bound {bound_us:g} us" if bound_us else "")
            for f in scheduled
            if f["max_us"] > chains[f["flow"]] + bound_us + 1e-3 or f["min_us"] < chains[f["flow"]] - 1e-3
        ]
        waited = max((f["max_us"] - chains[f["flow"]] for f in scheduled), default=0.0)
        frames = sum(f["count"] for f in sim["flows"])
        streams = sum(f["count"] for f in sim["flows"] if f["flow"] in chains)
        what = (f"{len(queued)} stream(s) whose frames waited more than {bound_us:g} us (longest wait "
                f"{max(waited, 0.0):.3f} us)" if bound_us else f"{len(queued)} stream(s) whose frames queued")
        out["simulation"] = {
            "passed": not late and not queued,
            "detail": f"{sim_seconds:g} s, {frames} frames ({streams} of scheduled streams): "
            f"{len(late)} route(s) with a frame after its deadline, {what}",
            "late": late,
            "queued": queued,
            "max_wait_us": max(waited, 0.0),
        }
    if "testbed" in checks:
        eps = report.get("sync_error_ns", 0)
        bound_us = report.get("max_wait_ns", 0) / 1e3
        out["testbed"] = _testbed_check(
            net, configured, chains, testbed_seconds, eps, bound_us, testbed_time_scale
        )
    return out


def _testbed_check(net, configured: dict, chains: dict, seconds: float, eps_ns: int, bound_us: float,
                   time_scale: float = 1.0) -> dict:
    """The user-space switch runs the synthesised gates on real frames, `time_scale` times slower
    than the model (figures in model time). A frame later than its window allows (the clock error
    ε) waits a whole cycle, so the run decides only where the host's noise, measured in the same
    run (model time), is within ε: then every stream's frames the host did not disturb must keep
    their jitter within the noise and their latency within the chain plus the wait bound plus the
    noise. Elsewhere it says "undecided on this host" and the least time scale at which the host's
    send lateness (p99, wall clock) fits in ε: a schedule that passed because the noise is large
    would pass by construction."""
    import math
    import os

    if os.geteuid() != 0:
        return {"passed": None, "detail": "skipped: the testbed needs root (network namespaces)"}
    from rtnetlab.testbed import run as tb

    try:
        tb.binary()
    except UserError as e:
        return {"passed": None, "detail": f"skipped: {e}"}
    measured = tb.run(net, configured, mode="user", duration_ns=round(seconds * 1e9), simulate=False,
                      time_scale=time_scale)
    noise = measured["host"]["noise_us"]
    rows = []
    for f in measured["flows"]:
        if f["flow"] not in chains or not f["count"]:
            continue
        top = f["undisturbed_max_us"] if f.get("undisturbed_count") else None
        jitter = None if top is None else top - f["min_us"]
        # A stream the host disturbed in every frame gives no evidence either way (None).
        within = None if jitter is None or noise is None else bool(
            jitter <= noise and top <= chains[f["flow"]] + bound_us + noise)
        rows.append({
            "flow": f["flow"], "destination": f["destination"], "count": f["count"],
            "undisturbed": f.get("undisturbed_count", 0), "losses": f.get("losses", 0),
            "chain_us": chains[f["flow"]], "min_us": f["min_us"], "mean_us": f["mean_us"],
            "max_us": f["max_us"], "undisturbed_max_us": top, "jitter_us": jitter, "within_noise": within,
        })
    scale = f", time scale {time_scale:g} (model time)" if time_scale != 1 else ""
    said = "not measured" if noise is None else f"{noise:.1f} us"
    detail = f"{seconds:g} s on the user-space switch{scale}; host noise {said}"
    verdicts = [r["within_noise"] for r in rows]
    passed: bool | None = False if False in verdicts else True if verdicts and None not in verdicts else None
    if noise is None or noise * 1e3 > eps_ns:
        passed = None
        late = (measured["host"].get("send_lateness_us") or {}).get("p99_us")
        need = "" if late is None or eps_ns <= 0 else (
            f"; the host's send lateness, p99 {late:,.0f} us of wall clock, needs --testbed-time-scale "
            f"{math.ceil(late * 1e3 / eps_ns):,} or more")
        detail = (
            f"undecided on this host: its noise ({said}) exceeds the clock error the windows allow "
            f"({eps_ns / 1e3:g} us), so a frame the host delays misses its window and waits a cycle{need}; "
            f"{seconds:g} s on the user-space switch{scale}"
        )
    return {"passed": passed, "detail": detail, "noise_us": noise, "time_scale": time_scale, "streams": rows}
