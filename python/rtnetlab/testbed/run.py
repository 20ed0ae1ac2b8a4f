"""A testbed run: the plan applied (namespaces, veth pairs, qdiscs or the user-space switch), the
end systems (and switches) started on one shared clock, an idle baseline then the measured run,
the measurements assembled into the simulator's result contract with ``"source": "testbed"``,
the host's noise, the bounds and the simulated values beside them; everything removed on every
exit path."""

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

#: Namespaces one run may create: each holds a process and a few interfaces, and this host is
#: shared.
MAX_NODES = 64
#: Processes a run starts per core (end systems, and switches in user mode): beyond it their
#: wake-ups queue behind each other and the noise is the host's, not the network's.
MAX_PROCESSES_PER_CORE = 16
#: Frame transmissions per second (frames x hops) the user-space ports of one run can pace on this
#: kind of host (one send call per frame at its planned instant): benchmarks/testbed_switch.py
#: measured no loss at 74,000 frames/s through one switch (148,000 transmissions) on 2 cores.
MAX_USER_FRAMES_PER_S = 150_000
#: The same for kernel ports (qdiscs and tc filters): the senders stop near 130,000-145,000
#: frames/s through one switch (about 260,000 transmissions), with losses from 250,000 on.
MAX_KERNEL_FRAMES_PER_S = 250_000
#: The shortest frame time a port can pace (a 64-byte frame at 10 Gbit/s takes 67 ns).
MIN_FRAME_TIME_NS = 60


def binary() -> Path:
    """The testbed's process (`cargo build --release -p rtnetlab-testbed`, done by `make build`)."""
    env = os.environ.get("RTNETLAB_TESTBED_BIN")
    candidates = [Path(env)] if env else []
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


def _offered_frames_per_s(plan: dict) -> float:
    """Frames per second all egress ports together send at the flows' contracts."""
    total = 0.0
    for f in plan["flows"]:
        per_s = f["rate_bps"] / ((f["lmin_bytes"] + 20) * 8)
        total += per_s * sum(len(r["ports"]) for r in f["routes"])
    return total


def check_limits(plan: dict, mode: str) -> None:
    """Refuses a model this host cannot run, naming the limit."""
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
        t = 84 * 8 / p["rate_bps"] * 1e9
        if t < MIN_FRAME_TIME_NS:
            raise UserError(
                f"testbed: port {p['label']}: {p['rate_bps'] / 1e9:g} Gbit/s, a smallest frame in "
                f"{t:.0f} ns, below the {MIN_FRAME_TIME_NS} ns a port can pace"
            )
    limit = MAX_USER_FRAMES_PER_S if mode == "user" else MAX_KERNEL_FRAMES_PER_S
    offered = _offered_frames_per_s(plan)
    if offered > limit:
        raise UserError(
            f"testbed: the flows' contracts make {offered:,.0f} frame transmissions per second, over "
            f"the {limit:,} this host can pace in {mode} mode"
        )
    if mode == "kernel" and plan["kernel_refusals"]:
        raise UserError(f"testbed: kernel mode: {plan['kernel_refusals'][0]}")


def configure_kernel(run: netns.Run, plan: dict) -> None:
    """Kernel mode: every port's qdiscs and every switch's forwarding filters."""
    for k, n in enumerate(plan["nodes"]):
        lines = []
        for p in n["ports"]:
            lines += tc.port_lines(plan["ports"][p]["ifname"], plan["ports"][p])
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
    """The simulator's contract (flows, delivered, ports, stats) from the nodes' measurements."""
    released = {r["flow"]: r for res in results for r in res["released"]}
    flows = []
    baseline = []
    for res in results:
        for r in res["routes"]:
            sent = released.get(r["flow"], {}).get("frames", 0)
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
                "max_host_delay_us": r["max_host_delay_us"],
                "max_less_host_us": r["max_less_host_us"] if r["count"] else None,
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
    duration_s = settings["duration_ns"] / 1e9
    by_port = {p["port"]: p for res in results for p in res["ports"]}
    ports = []
    for p in plan["ports"]:
        node = plan["nodes"][p["node"]]["name"]
        row = {"node": node, "port": p["label"].split(":", 1)[1], "plane": plan["planes"][p["plane"]]}
        if mode == "user":
            m = by_port.get(p["id"], {})
            row.update(
                max_backlog_bytes=m.get("max_backlog_bytes", 0.0),
                utilisation=m.get("busy_ns", 0.0) / settings["duration_ns"],
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
        " of its maximum above the model's latency alone, or above its own minimum",
        "baseline": baseline,
        "send_lateness_us": {
            "p99_us": max((x["p99_us"] for x in lateness), default=None),
            "max_us": max((x["max_us"] for x in lateness), default=None),
        },
        "scheduling": sorted({res["scheduling"] for res in results}),
        "cores": os.cpu_count(),
        "kernel": os.uname().release,
    }
    return {
        "network": plan["network"],
        "seed": settings["seed"],
        "source": "testbed",
        "mode": mode,
        "flows": flows,
        "delivered": delivered,
        "ports": ports,
        "stats": {
            "duration_s": duration_s,
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


def attach_bounds_and_simulation(net: Network, report: dict, simulate: bool) -> None:
    """The `best` bounds beside every measured row (a maximum above bound + noise flagged), and
    the simulator's figures for the same settings (`sim_*_us`)."""
    from rtnetlab import simulate as sim_mod

    bounds = sim_mod.attach_bounds(net, report, {})
    noise = report["host"]["noise_us"]
    slack = noise if noise is not None else 0.0
    bounds["above_bound"] = []
    for f in report["flows"]:
        # Each frame carries the delay the host added to it (how late each sender was); what is
        # left beyond the bound once that and the idle noise are allowed for is a soundness question.
        f["above_bound"] = bool(
            f["bound_us"] is not None and f["count"] and f["max_less_host_us"] > f["bound_us"] + slack
        )
        if f["above_bound"]:
            bounds["above_bound"].append(
                {
                    "flow": f["flow"],
                    "destination": f["destination"],
                    "plane": f["plane"],
                    "max_us": f["max_us"],
                    "bound_us": f["bound_us"],
                    "noise_us": noise,
                }
            )
    bounds["rule"] = "measured maximum less the frame's host delay > bound + idle noise"
    report["bounds"] = bounds
    if not simulate:
        return
    s = report["stats"]
    config = {
        "duration_ns": round(s["duration_s"] * 1e9),
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
) -> dict:
    """Runs `net` (with its `description` as plain data) on real frames; returns the report."""
    netns.check_privileges()
    exe = binary()
    if capture is not None:
        from rtnetlab.testbed import capture as capture_mod

        capture_mod.check(capture)
    files: list[str] = []
    # Everything the run makes is recorded in its record first, and removed on every way out
    # (what `keep` asks for stays, recorded, for `testbed down`).
    with ownership.Run("testbed run") as own:
        tmp = own.folder()
        desc_path = tmp / "description.json"
        desc_path.write_text(json.dumps(description))
        plan = plan_of(desc_path)
        check_limits(plan, mode)
        for m in muted or []:
            if m not in {f["name"] for f in plan["flows"]}:
                raise UserError(f"--mute: no flow named {m}")
        # The analysis first: the drain waits for the slowest bounded frame.
        bounds = [f["delay_us"] for f in net.analyze("best")["flows"] if f.get("delay_us") is not None]
        drain_ns = int(min(max(0.2e9, 2 * max(bounds, default=0) * 1e3), 5e9))
        r = netns.Run(own)
        captures = None
        controls: list = []
        try:
            r.create(plan)
            if mode == "kernel":
                configure_kernel(r, plan)
            if capture is not None:
                from rtnetlab.testbed.capture import Captures

                captures = Captures(own, plan, r.netns, capture)
            if on_start:
                on_start(r)
            nodes = [k for k, n in enumerate(plan["nodes"]) if n["end_system"] or mode == "user"]
            startup_ns = int(1e9 + 50e6 * len(nodes))
            epoch = time.time_ns() + startup_ns
            gap_ns = 100_000_000
            run_start = gate_aligned(baseline_ns + gap_ns, net)
            node_procs = []
            for k in nodes:
                cfg = {
                    "node": plan["nodes"][k]["name"],
                    "netns": r.netns(k),
                    "mode": mode,
                    "epoch_ns": epoch,
                    "baseline_ns": baseline_ns,
                    "run_start_ns": run_start,
                    "duration_ns": duration_ns,
                    "drain_ns": drain_ns,
                    "seed": seed,
                    "sizes": sizes,
                    "release": release,
                    "sched_priority": rt_priority,
                    "spin_ns": spin_ns,
                    "muted_flows": muted or [],
                }
                cfg_path = tmp / f"node{k}.json"
                cfg_path.write_text(json.dumps(cfg))
                # The node dies with this process, and stops when its control pipe (stdin)
                # closes; the pipe is held here, apart from the Popen, so that reading the
                # node's output does not close it.
                p = ownership.spawn(
                    [str(exe), "node", str(desc_path), str(cfg_path)],
                    what=f"node {plan['nodes'][k]['name']}",
                    own=own,
                    guarded=True,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
                controls.append(p.stdin)
                p.stdin = None
                node_procs.append(p)
            before = None
            if mode == "kernel":
                # Between the baseline's last frame and the run's first.
                _sleep_until(epoch + baseline_ns + gap_ns // 2, node_procs)
                before = kernel_port_stats(r, plan)
            end = epoch + run_start + duration_ns + drain_ns
            results = _collect(node_procs, end)
            for p in node_procs:
                own.ended(p.pid)
            port_stats = None
            if mode == "kernel":
                after = kernel_port_stats(r, plan)
                port_stats = {p: {k: after[p][k] - before[p][k] for k in after[p]} for p in after}
            if captures is not None:
                files = captures.stop(own)
        finally:
            for c in controls:
                c.close()
            if captures is not None and not files:
                captures.stop(own)  # interrupted: each file closed whole all the same
            if keep:
                own.keep("netns")
    settings = {
        "duration_ns": duration_ns,
        "baseline_ns": baseline_ns,
        "seed": seed,
        "sizes": sizes,
        "release": release,
    }
    report = assemble(plan, results, mode, settings, port_stats)
    report["warnings"] = list(plan["kernel_warnings"]) if mode == "kernel" else []
    if keep:
        report["kept"] = r.prefix
    if files:
        report["captures"] = files
    attach_bounds_and_simulation(net, report, simulate)
    return report


def _sleep_until(t_ns: int, procs: list[subprocess.Popen]) -> None:
    while time.time_ns() < t_ns:
        _check_alive(procs)
        time.sleep(min(0.05, max(0.0, (t_ns - time.time_ns()) / 1e9)))


def _check_alive(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is not None and p.returncode != 0:
            err = p.stderr.read().decode(errors="replace").strip() if p.stderr else ""
            raise UserError(f"testbed: a node stopped: {err.splitlines()[-1] if err else p.returncode}")


def _collect(procs: list[subprocess.Popen], end_ns: int) -> list[dict]:
    """Waits for every node (each stops by itself at the end of the drain) and reads its JSON."""
    results = []
    for p in procs:
        while True:
            _check_alive(procs)
            timeout = max(0.0, (end_ns - time.time_ns()) / 1e9) + 10.0
            try:
                out, err = p.communicate(timeout=min(timeout, 0.2))
                break
            except subprocess.TimeoutExpired:
                if time.time_ns() > end_ns + 10e9:
                    raise UserError("testbed: a node did not stop 10 s after the run's end") from None
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
        check_limits(plan, mode)
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
