"""A testbed run: the plan applied (namespaces, veth pairs, qdiscs or the user-space switch), the
end systems (and switches) started on one shared clock, an idle baseline then the measured run,
the measurements assembled into the simulator's result contract with ``"source": "testbed"``,
the host's noise, the bounds and the simulated values beside them; everything removed on every
exit path.

The verdict (`attach_bounds_and_simulation`): every measured frame carries its own host
disturbance (how late its senders were, and whether a stall of any process of the run overlapped
its flight: `crates/testbed/src/board.rs`); a route's undisturbed frames are compared with its
bound, the disturbed ones counted apart, and a route with too few undisturbed frames is
"undecided on this host". Nothing is subtracted from a latency.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import time
from pathlib import Path

from rtnetlab import ownership
from rtnetlab.errors import UserError
from rtnetlab.model import Network
from rtnetlab.testbed import netns, tc

#: Namespaces one run may create: each holds a process (or the kernel's ports) and a few
#: interfaces (a 265-VL avionics network has 66 nodes).
MAX_NODES = 128
#: Processes a run starts per core (end systems, and switches in user mode): what their frames
#: cost is the measured capacity's business (`capacity`); this bounds the processes themselves
#: (each locks an 8 MB receive ring per interface).
MAX_PROCESSES_PER_CORE = 64
#: The shortest frame time a port can pace (a 64-byte frame at 10 Gbit/s takes 67 ns).
MIN_FRAME_TIME_NS = 60
#: Wall-clock time dilation a run accepts (`--time-scale`).
MAX_TIME_SCALE = 1000.0
#: A route's verdict needs at least this many undisturbed frames, and this share of its frames.
MIN_UNDISTURBED = 50
MIN_UNDISTURBED_SHARE = 0.25
#: The default disturbance threshold, wall-clock ns (`--disturbance`).
DISTURBANCE_NS = 100_000


def binary() -> Path:
    """The testbed's process: RTNETLAB_TESTBED_BIN, the one a wheel carries (rtnetlab/bin, `make
    wheel`), the checkout's (`cargo build --release -p rtnetlab-testbed`, done by `make build`),
    or one on PATH."""
    env = os.environ.get("RTNETLAB_TESTBED_BIN")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[1] / "bin" / "rtnetlab-testbed")
    candidates.append(Path(__file__).resolve().parents[3] / "target" / "release" / "rtnetlab-testbed")
    found = shutil.which("rtnetlab-testbed")
    if found:
        candidates.append(Path(found))
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise UserError(
        "testbed: the rtnetlab-testbed program is not built (run `make build`, or set RTNETLAB_TESTBED_BIN)"
    )


def gate_aligned(t_ns: int, net: Network) -> int:
    """The first time from `t_ns` on that is a whole number of every gate control list's cycle.
    Gates run on the model's time from the run's epoch, releases from the run's start; the
    simulator starts both at 0, so the run's start must fall where every list's cycle does, or a
    time-triggered frame would reach its gate out of its window."""
    from rtnetlab import _core

    cycle = 1
    for p in net.resolved()["ports"]:
        d = p["discipline"]
        g = d if d["kind"] == "tas" else d.get("gates") if d["kind"] == "cbs" else None
        if g and g.get("cycle"):
            cycle = math.lcm(cycle, round(_core.parse_quantity("duration", g["cycle"]) * 1e9))
    return -(-t_ns // cycle) * cycle


def plan_of(description: Path) -> dict:
    p = subprocess.run([str(binary()), "plan", str(description)], capture_output=True, text=True)
    if p.returncode != 0:
        raise UserError(
            f"testbed: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else 'plan failed'}"
        )
    return json.loads(p.stdout)


#: How a kernel-mode figure is labelled: what it measured, with what the kernel cannot hold a
#: frame for added from the model.
MEASURED_AND_MODELLED = "measured + modelled latency added"


def unrealised_switch_latency(plan: dict) -> str | None:
    """The switches whose technological latency kernel mode cannot realise (its switches are
    tc filters that forward at once, and no qdisc of this kernel holds a frame), as
    "SW1, SW2: 10 us"; None when every switch a route leaves has none."""
    used = {plan["ports"][p]["node"] for f in plan["flows"] for r in f["routes"] for p in r["ports"][1:]}
    by_latency: dict[int, list[str]] = {}
    for i in sorted(used):
        n = plan["nodes"][i]
        if not n["end_system"] and n["technological_latency_ns"] > 0:
            by_latency.setdefault(n["technological_latency_ns"], []).append(n["name"])
    if not by_latency:
        return None
    return "; ".join(f"{', '.join(names)}: {ns / 1e3:g} us" for ns, names in sorted(by_latency.items()))


def modelled_added_us(plan: dict, flow: dict, route: dict) -> float:
    """Kernel mode: what the destination adds to a largest frame of `flow` on `route`, model us:
    its transmission at each hop at the modelled rate and the links' propagation (a kernel port
    releases a frame at the start of its slot and the veth delivers it at once), and the
    technological latency of the switches it leaves (`crates/testbed/src/node.rs`)."""
    t = 0.0
    for h, p in enumerate(route["ports"]):
        port = plan["ports"][p]
        t += (flow["lmax_bytes"] + 20) * 8 / port["rate_bps"] * 1e9 + port["propagation_ns"]
        if h > 0:
            t += plan["nodes"][port["node"]]["technological_latency_ns"]
    return t / 1e3


def check_limits(
    plan: dict,
    mode: str,
    time_scale: float = 1.0,
    capacity: dict | None = None,
    add_modelled: bool = False,
) -> None:
    """Refuses a model this host cannot run, naming the limit (`capacity`: what this host was
    measured to pace in `mode`, `rtnetlab.testbed.capacity`), and in kernel mode a switch
    latency it cannot realise unless `add_modelled` (then added to each figure, labelled)."""
    nodes = len(plan["nodes"])
    if nodes > MAX_NODES:
        raise UserError(f"testbed: {nodes} nodes, over the limit of {MAX_NODES} namespaces per run")
    processes = sum(1 for n in plan["nodes"] if n["end_system"] or mode == "user")
    cores = os.cpu_count() or 1
    if processes > MAX_PROCESSES_PER_CORE * cores:
        raise UserError(
            f"testbed: {processes} processes ({mode} mode) on {cores} cores, over the limit of "
            f"{MAX_PROCESSES_PER_CORE} per core"
        )
    for p in plan["ports"]:
        t = 84 * 8 / p["rate_bps"] * 1e9 * time_scale
        if t < MIN_FRAME_TIME_NS:
            raise UserError(
                f"testbed: port {p['label']}: {p['rate_bps'] / 1e9:g} Gbit/s, a smallest frame in "
                f"{t:.0f} ns, below the {MIN_FRAME_TIME_NS} ns a port can pace"
            )
    if mode == "kernel" and plan["kernel_refusals"]:
        raise UserError(f"testbed: kernel mode: {plan['kernel_refusals'][0]}")
    if mode == "kernel" and not add_modelled:
        unrealised = unrealised_switch_latency(plan)
        if unrealised:
            raise UserError(
                f"testbed: kernel mode cannot realise the switches' technological latency ({unrealised}; "
                "no qdisc of this kernel holds a frame): --switch user realises it, "
                "--add-modelled-latency adds it to each kernel-mode figure, labelled"
            )
    if capacity is not None:
        from rtnetlab.testbed.capacity import offered as offered_of

        offered = offered_of(plan) / time_scale
        limit = capacity["transmissions_per_s"]
        if offered > limit:
            need = offered_of(plan) / limit
            raise UserError(
                f"testbed: the flows' contracts make {offered:,.0f} frame transmissions per second"
                + (f" at --time-scale {time_scale:g}" if time_scale != 1 else "")
                + f", over the {limit:,.0f} this host was measured to pace in {mode} mode "
                f"({'cached ' + capacity['measured'] if capacity.get('cached') else 'measured now'}; "
                f"--time-scale {need:.3g} or more fits)"
            )


def configure_kernel(run: netns.Run, plan: dict, time_scale: float = 1.0) -> None:
    """Kernel mode: every port's qdiscs and every switch's forwarding filters."""
    for k, n in enumerate(plan["nodes"]):
        lines = []
        for p in n["ports"]:
            lines += tc.port_lines(plan["ports"][p]["ifname"], plan["ports"][p], time_scale)
        if not n["end_system"]:
            lines += tc.switch_lines(plan, k)
        netns.batch("tc", lines, run.netns(k))


def kernel_port_stats(run: netns.Run, plan: dict) -> dict[int, dict]:
    """Frames sent and dropped by each port's root qdisc, now."""
    out = {}
    for p in plan["ports"]:
        r = subprocess.run(
            ["tc", "-n", run.netns(p["node"]), "-s", "-j", "qdisc", "show", "dev", p["ifname"]],
            capture_output=True,
            text=True,
        )
        try:
            root = next(q for q in json.loads(r.stdout or "[]") if q.get("root"))
            out[p["id"]] = {
                "frames": root.get("packets", 0),
                "drops": root.get("drops", 0),
                "bytes": root.get("bytes", 0),
            }
        except (StopIteration, ValueError):
            out[p["id"]] = {"frames": 0, "drops": 0, "bytes": 0}
    return out


def _latency_keys(d: dict) -> dict:
    return {
        k: d[k] for k in ("count", "min_us", "mean_us", "p50_us", "p99_us", "p999_us", "max_us", "jitter_us")
    }


def assemble(
    plan: dict, results: list[dict], mode: str, settings: dict, port_stats: dict[int, dict] | None
) -> dict:
    """The simulator's contract (flows, delivered, ports, stats) from the nodes' measurements.
    Latencies are in model time; the host's figures (lateness, stalls) in wall-clock time."""
    released = {r["flow"]: r for res in results for r in res["released"]}
    k = settings["time_scale"]
    names = [n["name"] for n in plan["nodes"]]
    hops = {
        (f["name"], names[r["destination"]], plan["planes"][r["plane"]]): r["ports"]
        for f in plan["flows"]
        for r in f["routes"]
    }
    flows = []
    baseline = []
    for res in results:
        for r in res["routes"]:
            sent = released.get(r["flow"], {}).get("frames", 0)
            u = r["undisturbed"]
            row = {
                "flow": r["flow"],
                "destination": res["node"],
                "plane": r["plane"],
                **_latency_keys(r),
                "losses": max(0, sent - r["count"]),
                "integrity_discards": r["integrity_discards"],
                "retransmissions": 0,
                "histogram": r["histogram"],
                "idle_min_us": r["baseline"]["min_us"] if r["baseline"]["count"] else None,
                "idle_max_us": r["baseline"]["max_us"] if r["baseline"]["count"] else None,
                "isolated_us": r["isolated_us"],
                # The host's disturbance, frame by frame: the frames it did not disturb, and how
                # many it did (senders late in all by more than the threshold; a stall of the run
                # overlapping the frame's flight).
                "undisturbed_count": u["count"],
                "undisturbed_max_us": u["max_us"] if u["count"] else None,
                "undisturbed_mean_us": u["mean_us"] if u["count"] else None,
                "undisturbed_p99_us": u["p99_us"] if u["count"] else None,
                # Each undisturbed frame less its own senders' lateness (inside its latency, which
                # starts at the planned release): what the verdict compares with the bound.
                "undisturbed_max_less_host_us": r["undisturbed_max_less_host_us"],
                # What the host may have added to an undisturbed frame without being seen: up to
                # the threshold at each of its hops (model time).
                "allowance_us": len(hops[(r["flow"], res["node"], r["plane"])])
                * settings["disturbance_ns"]
                / 1e3
                / k,
                "disturbed_late": r["disturbed_late"],
                "disturbed_stall": r["disturbed_stall"],
                "max_host_delay_us": r["max_host_delay_us"],
                # |inter-arrival - inter-release| of consecutive frames (seed 002's jitter).
                "interarrival_mean_us": r["interarrival"]["mean_us"] if r["interarrival"]["count"] else None,
                "interarrival_p99_us": r["interarrival"]["p99_us"] if r["interarrival"]["count"] else None,
                "interarrival_max_us": r["interarrival"]["max_us"] if r["interarrival"]["count"] else None,
            }
            flows.append(row)
            if r["baseline"]["count"]:
                b = r["baseline"]
                baseline.append(
                    {
                        "flow": r["flow"],
                        "destination": res["node"],
                        "plane": r["plane"],
                        **_latency_keys(b),
                        "isolated_us": r["isolated_us"],
                        "excess_us": max(0.0, b["max_us"] - r["isolated_us"], b["max_us"] - b["min_us"]),
                    }
                )
    delivered = [
        {
            "flow": d["flow"],
            "destination": res["node"],
            **_latency_keys(d),
            "duplicates_discarded": d["duplicates_discarded"],
        }
        for res in results
        for d in res["delivered"]
    ]
    stopped = [res["stopped_at_ns"] for res in results if res.get("stopped_at_ns") is not None]
    run_ns = settings["duration_ns"]
    if stopped:
        # Interrupted: the run covered the time up to the stop (model time).
        run_ns = max(0, min(stopped) - settings["run_start_ns"])
    duration_s = run_ns / 1e9
    by_port = {p["port"]: p for res in results for p in res["ports"]}
    ports = []
    for p in plan["ports"]:
        node = plan["nodes"][p["node"]]["name"]
        row = {"node": node, "port": p["label"].split(":", 1)[1], "plane": plan["planes"][p["plane"]]}
        if mode == "user":
            m = by_port.get(p["id"], {})
            row.update(
                max_backlog_bytes=m.get("max_backlog_bytes", 0.0),
                utilisation=m.get("busy_ns", 0.0) / run_ns if run_ns else 0.0,
                frames=m.get("frames", 0),
                drops=m.get("drops", 0) + m.get("send_errors", 0),
                policed=m.get("policed", 0),
            )
        else:
            s = (port_stats or {}).get(p["id"], {"frames": 0, "drops": 0, "bytes": 0})
            wire = (s["bytes"] + tc.OVERHEAD * s["frames"]) * 8
            row.update(
                max_backlog_bytes=None,
                utilisation=wire / p["rate_bps"] / duration_s if duration_s else 0.0,
                frames=s["frames"],
                drops=s["drops"],
                policed=0,
            )
        ports.append(row)
    lateness = [res["lateness"] for res in results if res["lateness"]["count"]]
    excess = [b["excess_us"] for b in baseline]
    noise = max(excess) if excess else None
    host = {
        "noise_us": noise,
        "noise_rule": "idle baseline, one frame at a time in the network: the largest excess, over every "
        "route,"
        " of its maximum above the model's latency alone, or above its own minimum (model time)",
        "baseline": baseline,
        "send_lateness_us": {
            "p99_us": max((x["p99_us"] for x in lateness), default=None),
            "max_us": max((x["max_us"] for x in lateness), default=None),
        },
        "stalls": {
            "count": sum(res["stalls"] for res in results),
            "total_us": sum(res["stalled_us"] for res in results),
            "longest_us": max((res["longest_stall_us"] for res in results), default=0.0),
            "threshold_us": settings["disturbance_ns"] / 1e3,
        },
        "regulated_holds": sum(res["regulated_holds"] for res in results),
        "longest_hold_us": max((res["longest_hold_us"] for res in results), default=0.0),
        # Model time the sources' releases moved, in all, to keep their contracts after late sends.
        "release_shift_us": sum(res["release_shift_us"] for res in results),
        "classified_late": sum(res["classified_late"] for res in results),
        "time_scale": k,
        "wall_clock": "send lateness, stalls, holds and the disturbance threshold are wall-clock "
        "microseconds; latencies, bounds and the idle noise are model time (wall-clock / time scale)",
        "scheduling": sorted({res["scheduling"] for res in results}),
        "cores": os.cpu_count(),
        "kernel": os.uname().release,
    }
    return {
        "network": plan["network"],
        "seed": settings["seed"],
        "source": "testbed",
        "mode": mode,
        "time_scale": k,
        "flows": flows,
        "delivered": delivered,
        "ports": ports,
        "stats": {
            "duration_s": duration_s,
            "wall_duration_s": duration_s * k,
            "baseline_s": settings["baseline_ns"] / 1e9,
            "frames_released": sum(r["frames"] for r in released.values()),
            "copies_received": sum(f["count"] for f in flows),
            "foreign_frames": sum(res["foreign_frames"] for res in results),
            "unrouted": sum(res["unrouted"] for res in results),
            "sizes": settings["sizes"],
            "release": settings["release"],
        },
        "host": host,
    }


def verdict(f: dict) -> str:
    """A route's verdict from its undisturbed frames: `within bound`, `ABOVE BOUND`, `undecided
    on this host` (too few undisturbed frames), `no bound`, `no frames`."""
    if not f["count"]:
        return "no frames"
    if f.get("bound_us") is None:
        return "no bound"
    u = f["undisturbed_count"]
    if u < MIN_UNDISTURBED or u < MIN_UNDISTURBED_SHARE * f["count"]:
        return "undecided on this host"
    if f["undisturbed_max_less_host_us"] > f["bound_us"] + f["allowance_us"]:
        return "ABOVE BOUND"
    return "within bound"


def attach_bounds_and_simulation(net: Network, report: dict, simulate: bool) -> None:
    """The `best` bounds beside every measured row, each route's verdict from the frames the host
    did not disturb, and the simulator's figures for the same settings (`sim_*_us`)."""
    from rtnetlab import simulate as sim_mod

    bounds = sim_mod.attach_bounds(net, report, {})
    threshold_us = report["host"]["stalls"]["threshold_us"]
    bounds["above_bound"] = []
    bounds["undecided"] = []
    for f in report["flows"]:
        f["verdict"] = verdict(f)
        f["above_bound"] = f["verdict"] == "ABOVE BOUND"
        f["undisturbed_over_bound"] = (
            f["undisturbed_max_us"] / f["bound_us"]
            if f.get("bound_us") and f["undisturbed_max_us"] is not None
            else None
        )
        key = {"flow": f["flow"], "destination": f["destination"], "plane": f["plane"]}
        if f["above_bound"]:
            bounds["above_bound"].append(
                {**key, "undisturbed_max_less_host_us": f["undisturbed_max_less_host_us"],
                 "bound_us": f["bound_us"], "allowance_us": f["allowance_us"]}
            )  # fmt: skip
        elif f["verdict"] == "undecided on this host":
            bounds["undecided"].append({**key, "undisturbed": f["undisturbed_count"], "count": f["count"]})
    k = report["time_scale"]
    bounds["rule"] = (
        "per route, the frames the host did not disturb (senders late by at most "
        f"{threshold_us:g} us wall-clock in all, no stall over {threshold_us:g} us of any process of "
        "the run during their flight), each less its own senders' lateness (inside its latency), "
        f"against the bound + {threshold_us / k:g} us per hop (what each hop may have added unseen, "
        f"{threshold_us:g} us wall-clock at time scale {k:g}); undecided with fewer than "
        f"{MIN_UNDISTURBED} undisturbed frames or {MIN_UNDISTURBED_SHARE:.0%} of the route's"
    )
    report["bounds"] = bounds
    if not simulate:
        return
    s = report["stats"]
    config = {
        "duration_ns": max(1, round(s["duration_s"] * 1e9)),
        "seed": report["seed"],
        "release": s["release"],
        "frame_sizes": s["sizes"],
    }
    sim = sim_mod.run(net, config, progress=False)
    rows = {(r["flow"], r["destination"], r["plane"]): r for r in sim["flows"]}
    for f in report["flows"]:
        r = rows.get((f["flow"], f["destination"], f["plane"]))
        for k in ("mean_us", "p99_us", "max_us"):
            f[f"sim_{k}"] = r[k] if r and r["count"] else None


def run(
    net: Network,
    description: dict,
    *,
    mode: str = "kernel",
    duration_ns: int = 10_000_000_000,
    baseline_ns: int = 1_000_000_000,
    seed: int = 1,
    sizes: str = "max",
    release: str = "random",
    capture: Path | None = None,
    keep: bool = False,
    simulate: bool = True,
    rt_priority: int = 50,
    spin_ns: int = 0,
    muted: list[str] | None = None,
    on_start=None,
    time_scale: float = 1.0,
    disturbance_ns: int = DISTURBANCE_NS,
    calibrating: bool = False,
    recalibrate: bool = False,
    say=None,
    add_modelled: bool = False,
) -> dict:
    """Runs `net` (with its `description` as plain data) on real frames; returns the report.
    `duration_ns` and `baseline_ns` are wall-clock; the run covers them / `time_scale` of model
    time. Ctrl-C or SIGTERM during the run stops the nodes, which report what they measured: the
    report then has `interrupted_by` (the exception is raised again once the report is attached
    to it as `.report`). Kernel mode refuses a model whose switches have a technological latency
    unless `add_modelled`: then its figures are labelled `MEASURED_AND_MODELLED`, as they are for
    each hop's transmission and propagation, which kernel mode always adds."""
    netns.check_privileges()
    exe = binary()
    if capture is not None:
        from rtnetlab.testbed import capture as capture_mod

        capture_mod.check(capture)
    if not 1.0 <= time_scale <= MAX_TIME_SCALE:
        raise UserError(f"--time-scale: between 1 and {MAX_TIME_SCALE:g}, got {time_scale:g}")
    files: list[str] = []
    capacity = None
    if not calibrating:
        # What this host can pace, measured before the run's own records exist (a calibration is
        # a run of its own).
        with ownership.Run("testbed plan") as own:
            desc_path = own.folder() / "description.json"
            desc_path.write_text(json.dumps(description))
            plan = plan_of(desc_path)
        check_limits(plan, mode, time_scale, add_modelled=add_modelled)
        from rtnetlab.testbed import capacity as capacity_mod

        capacity = capacity_mod.capacity(mode, recalibrate, rt_priority, say)
    k = time_scale
    interrupted: KeyboardInterrupt | None = None
    # Everything the run makes is recorded in its record first, and removed on every way out
    # (what `keep` asks for stays, recorded, for `testbed down`).
    with ownership.Run("testbed run") as own:
        tmp = own.folder()
        desc_path = tmp / "description.json"
        desc_path.write_text(json.dumps(description))
        plan = plan_of(desc_path)
        check_limits(plan, mode, time_scale, capacity, add_modelled)
        for m in muted or []:
            if m not in {f["name"] for f in plan["flows"]}:
                raise UserError(f"--mute: no flow named {m}")
        # The analysis first: the drain waits for the slowest bounded frame.
        bounds = [f["delay_us"] for f in net.analyze("best")["flows"] if f.get("delay_us") is not None]
        slowest = max(bounds, default=0) * 1e3 * k  # wall-clock ns
        drain_wall = min(max(0.2e9, 2 * slowest), max(5e9, 4 * slowest))
        drain_ns = int(drain_wall / k)
        r = netns.Run(own)
        captures = None
        controls: list = []
        node_procs: list = []
        results = None
        port_stats = None
        try:
            r.create(plan)
            if mode == "kernel":
                configure_kernel(r, plan, k)
            if capture is not None:
                from rtnetlab.testbed.capture import Captures

                captures = Captures(own, plan, r.netns, capture)
            if on_start:
                on_start(r)
            nodes = [i for i, n in enumerate(plan["nodes"]) if n["end_system"] or mode == "user"]
            gap_ns = int(100_000_000 / k)
            baseline_model = int(baseline_ns / k)
            # On a whole number of every gate cycle: the simulator's time 0 (TAS schedules).
            run_start = gate_aligned(baseline_model + gap_ns, net)
            duration_model = int(duration_ns / k)
            board = tmp / "stalls"
            with open(board, "wb") as fb:
                fb.truncate(len(nodes) * 65536)
            for slot, i in enumerate(nodes):
                cfg = {
                    "node": plan["nodes"][i]["name"],
                    "netns": r.netns(i),
                    "mode": mode,
                    # Sent once every node is ready (its receive rings mapped and locked).
                    "epoch_ns": 0,
                    "baseline_ns": baseline_model,
                    "run_start_ns": run_start,
                    "duration_ns": duration_model,
                    "drain_ns": drain_ns,
                    "seed": seed,
                    "sizes": sizes,
                    "release": release,
                    "sched_priority": rt_priority,
                    "spin_ns": spin_ns,
                    "muted_flows": muted or [],
                    "time_scale": k,
                    "stall_board": str(board),
                    "board_slot": slot,
                    "board_slots": len(nodes),
                    "disturbance_ns": disturbance_ns,
                }
                cfg_path = tmp / f"node{i}.json"
                cfg_path.write_text(json.dumps(cfg))
                # The node dies with this process, and stops when its control pipe (stdin)
                # closes; the pipe is held here, apart from the Popen, so that reading the
                # node's output does not close it.
                p = ownership.spawn(
                    [str(exe), "node", str(desc_path), str(cfg_path)],
                    what=f"node {plan['nodes'][i]['name']}",
                    own=own,
                    guarded=True,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
                controls.append(p.stdin)
                p.stdin = None
                node_procs.append(p)
            _wait_ready(node_procs)
            epoch = time.time_ns() + int(100e6 + 5e6 * len(nodes))
            for c in controls:
                c.write(f"epoch {epoch}\n".encode())
                c.flush()
            before = None
            try:
                if mode == "kernel":
                    # Between the baseline's last frame and the run's first.
                    _sleep_until(epoch + int((baseline_model + gap_ns // 2) * k), node_procs)
                    before = kernel_port_stats(r, plan)
                end = epoch + int((run_start + duration_model + drain_ns) * k)
                results = _collect(node_procs, end)
            except KeyboardInterrupt as e:
                # Stop the nodes where they are: each reports what it measured so far.
                interrupted = e
                with ownership.held_signals():
                    for c in controls:
                        try:
                            c.write(b"stop\n")
                            c.flush()
                        except OSError:
                            pass
                    try:
                        results = _collect(node_procs, time.time_ns() + 3_000_000_000, grace_s=5.0)
                    except UserError:
                        results = None
            for p in node_procs:
                own.ended(p.pid)
            if mode == "kernel" and before is not None and results is not None:
                after = kernel_port_stats(r, plan)
                port_stats = {p: {x: after[p][x] - before[p][x] for x in after[p]} for p in after}
            if captures is not None:
                files = captures.stop(own)
        finally:
            for c in controls:
                c.close()
            if captures is not None and not files:
                captures.stop(own)  # interrupted: each file closed whole all the same
            if keep:
                own.keep("netns")
    if results is None:
        if interrupted is not None:
            raise interrupted
        raise UserError("testbed: the run produced no measurement")
    settings = {
        "duration_ns": duration_model,
        "run_start_ns": run_start,
        "baseline_ns": baseline_model,
        "seed": seed,
        "sizes": sizes,
        "release": release,
        "time_scale": k,
        "disturbance_ns": disturbance_ns,
    }
    report = assemble(plan, results, mode, settings, port_stats)
    report["warnings"] = list(plan["kernel_warnings"]) if mode == "kernel" else []
    report["notes"] = []
    # What every latency figure is: measured, or (kernel mode) measured with what the kernel
    # does not hold a frame for added from the model, per route for a largest frame.
    report["latency_basis"] = MEASURED_AND_MODELLED if mode == "kernel" else "measured"
    modelled = {
        (f["name"], plan["nodes"][r["destination"]]["name"], plan["planes"][r["plane"]]): modelled_added_us(
            plan, f, r
        )
        for f in plan["flows"]
        for r in f["routes"]
    }
    for row in report["flows"]:
        row["modelled_added_us"] = (
            modelled.get((row["flow"], row["destination"], row["plane"]), 0.0) if mode == "kernel" else 0.0
        )
    if mode == "kernel":
        switch_latency = unrealised_switch_latency(plan)
        report["notes"].append(
            f"kernel mode, {MEASURED_AND_MODELLED}: each hop's transmission of the frame at the "
            "modelled rate, the links' propagation"
            + (f" and the switches' technological latency ({switch_latency}, --add-modelled-latency)"
               if switch_latency else "")
            + " are added at the destination, frame by frame (modelled_added_us: a largest frame's); "
            "no qdisc of this kernel holds a lone frame (netem, fq and etf are missing). The ports "
            "realise the contention at the line rate, the end systems their latencies. --switch user "
            "realises them all in time."
        )
    if capacity is not None:
        report["host"]["capacity"] = {
            "mode": mode,
            "transmissions_per_s": capacity["transmissions_per_s"],
            "measured": capacity["measured"],
            "cached": capacity.get("cached", False),
            "host": capacity.get("host"),
            "offered_per_s": _offered(plan) / k,
        }
    if keep:
        report["kept"] = r.prefix
    if files:
        from rtnetlab.testbed.capture import frames_in

        report["captures"] = files
        for f in files:
            n = frames_in(Path(f))
            if n == 0:
                report["warnings"].append(
                    f"capture {f}: no frame (the port carried none, or its capture failed)"
                )
    if interrupted is not None:
        from rtnetlab.errors import Terminated

        report["interrupted_by"] = "SIGTERM" if isinstance(interrupted, Terminated) else "SIGINT"
        report["warnings"].append(
            f"interrupted ({'SIGTERM' if isinstance(interrupted, Terminated) else 'Ctrl-C'}): the run "
            f"covers {report['stats']['duration_s'] * k:.3g} s of its {duration_ns / 1e9:g} s"
        )
    attach_bounds_and_simulation(net, report, simulate and interrupted is None)
    if interrupted is not None:
        interrupted.report = report  # type: ignore[attr-defined]
        raise interrupted
    return report


def _offered(plan: dict) -> float:
    from rtnetlab.testbed.capacity import offered

    return offered(plan)


def _wait_ready(procs: list[subprocess.Popen], timeout_s: float = 120.0) -> None:
    """Waits for every node's `ready` (stderr), polling: a node's start-up (its plan, its rings)
    takes from milliseconds to seconds with the network's size and the host's load."""
    import select

    deadline = time.monotonic() + timeout_s
    for p in procs:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise UserError(f"testbed: a node was not ready {timeout_s:g} s after its start")
            ready, _, _ = select.select([p.stderr], [], [], min(left, 0.2))
            if not ready:
                _check_alive(procs)
                continue
            line = p.stderr.readline()
            if line.strip() == b"ready":
                break
            if not line:
                _check_alive(procs)
                raise UserError("testbed: a node stopped before it was ready")


def _sleep_until(t_ns: int, procs: list[subprocess.Popen]) -> None:
    while time.time_ns() < t_ns:
        _check_alive(procs)
        time.sleep(min(0.05, max(0.0, (t_ns - time.time_ns()) / 1e9)))


def _check_alive(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is not None and p.returncode != 0:
            err = p.stderr.read().decode(errors="replace").strip() if p.stderr else ""
            raise UserError(f"testbed: a node stopped: {err.splitlines()[-1] if err else p.returncode}")


def _collect(procs: list[subprocess.Popen], end_ns: int, grace_s: float = 10.0) -> list[dict]:
    """Waits for every node (each stops by itself at the end of the drain) and reads its JSON."""
    results = []
    for p in procs:
        while True:
            _check_alive(procs)
            timeout = max(0.0, (end_ns - time.time_ns()) / 1e9) + grace_s
            try:
                out, err = p.communicate(timeout=min(timeout, 0.2))
                break
            except subprocess.TimeoutExpired:
                if time.time_ns() > end_ns + grace_s * 1e9:
                    raise UserError(
                        f"testbed: a node did not stop {grace_s:g} s after the run's end"
                    ) from None
        if p.returncode != 0:
            raise UserError(
                f"testbed: a node failed: {err.decode(errors='replace').strip().splitlines()[-1:]}"
            )
        results.append(json.loads(out))
    return results


def up(net: Network, description: dict, mode: str) -> tuple[netns.Run, dict]:
    """Creates a run's namespaces, links and (kernel mode) qdiscs and filters, and leaves them
    (recorded, for `testbed down`)."""
    netns.check_privileges()
    with ownership.Run("testbed up") as own:
        desc_path = own.folder() / "description.json"
        desc_path.write_text(json.dumps(description))
        plan = plan_of(desc_path)
        # Nothing is measured on a network left up for inspection: no figure to refuse or label
        # for the switch latency kernel mode leaves out.
        check_limits(plan, mode, add_modelled=True)
        r = netns.Run(own)
        r.create(plan)
        if mode == "kernel":
            configure_kernel(r, plan)
        own.keep("netns")
    return r, plan


def noise_line(report: dict) -> str:
    n = report["host"]["noise_us"]
    return (
        "host noise: not measured (--baseline 0)" if n is None else f"host noise: {n:.1f} us (idle baseline)"
    )
