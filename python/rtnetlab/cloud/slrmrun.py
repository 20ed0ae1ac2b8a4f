"""Seed 001G on this machine (`rtnetlab slrm run`): real SL-aware services under CPU caps set by
the resource manager.

Per application: one process (`rtnetlab.cloud.slrmapp`, an HTTP service on 127.0.0.1) in its own
control group whose CPU cap is the RM's c_i·C. A closed-loop load generator (asyncio, in this
process) runs each application's users: exponential think time, one request, wait for the
answer; user counts follow the scenario's steps. Every control period: t_i = the largest response
time of the period measured at the client (requests still in progress count with their age, as
in the simulation), f_i = 1 − t_i/t̄_i (Eq. 1) sent to the application, whose private controller
g_i moves its SL (Eq. 2; the SL reported for a period is the mean of those its requests
used), then the RM's step (Eq. 3, the floor and minimum share of the
scenario's `rm`) and the new caps written to the groups and read back.

The scenario is the simulation's (`cloud::slsim::Scenario`, checked by the engine); `capacity`
is in cores of this machine. Everything the run creates carries its prefix `rtnl-<id>` (the
control groups, the applications' command lines), is recorded in the run's record
(`rtnetlab.ownership`) and is removed on every exit path: normal end, error, Ctrl-C and SIGTERM
(the CLI turns it into an interrupt); the applications also die with this process if it is
killed outright (parent-death signal; their stdin, the control pipe, closes too), and
`rtnetlab testbed down --all` removes the groups of a killed run.

The host's noise is measured and reported: the CPU share a spinner gets alone just before the
run, the load average, every control tick's lateness, and per period the CPU each application
actually used against its cap (from /proc)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rtnetlab import _core, ownership
from rtnetlab.cloud import cgroups
from rtnetlab.cloud import slrm as law
from rtnetlab.errors import UserError

_TICK = os.sysconf("SC_CLK_TCK")


def preset(name: str, duration: float) -> dict:
    """Built-in scenarios on 1 core. `overload`: two identical applications (t̄ = 50 ms, 10 ms per
    request, 30 users thinking 0.1 s) that no cap fits even at SL 0, starting from shares
    0.8/0.2: the RM must bring them to equal shares. `pair`: a shop (t̄ = 0.3 s) and a board
    (t̄ = 0.15 s) that both fit at full SL until the board's users triple at 40 % of the run."""
    controller = {"kp": 0.05, "ki": 0.1, "min_sl": 0.0, "max_sl": 1.0}
    if name == "overload":
        app = {"deadline": 0.05, "mandatory": 0.01, "optional": 0.01, "think_time": 0.1,
               "users": [{"at": 0, "users": 30}], "initial_sl": 0.5, "controller": controller}  # fmt: skip
        return {
            "capacity": 1.0, "control_period": 1.0, "duration": duration,
            "rm": {"epsilon": 0.2, "min_share": 0.02, "matching_floor": -0.5},
            "initial_shares": [0.8, 0.2],
            "apps": [{"name": "A", **app}, {"name": "B", **app}],
        }  # fmt: skip
    if name == "pair":
        later = round(0.4 * duration, 3)
        return {
            "capacity": 1.0, "control_period": 1.0, "duration": duration,
            "rm": dict(law.RM),
            "apps": [
                {"name": "shop", "deadline": 0.3, "mandatory": 0.004, "optional": 0.016, "think_time": 0.5,
                 "users": [{"at": 0, "users": 6}], "initial_sl": 0.5, "controller": controller},
                {"name": "board", "deadline": 0.15, "mandatory": 0.002, "optional": 0.008, "think_time": 0.5,
                 "users": [{"at": 0, "users": 8}, {"at": later, "users": 24}], "initial_sl": 0.5,
                 "controller": controller},
            ],
        }  # fmt: skip
    raise UserError(f"--apps: a scenario file (.yaml/.json) or one of overload, pair; got '{name}'")


def scenario(apps: str, duration: float, capacity: float | None) -> tuple[dict, str]:
    """The scenario of `--apps` (a preset's name or a file), with --duration and --capacity, and
    checked by the engine's rules (a one-period simulation of it). Returns it and its source."""
    if not (2.0 <= duration <= 3600.0):
        raise UserError(f"--duration: between 2 and 3600 s, got {duration:g}")
    path = Path(apps)
    if path.suffix.lower() in (".yaml", ".yml", ".json"):
        from rtnetlab.io import formats

        if not path.is_file():
            raise UserError(f"--apps: {apps}: no such file")
        sc = formats.read(path)
        if not isinstance(sc, dict):
            raise UserError(f"{apps}: a scenario is a mapping (capacity, control_period, apps)")
        sc["duration"] = duration
        source = apps
    else:
        sc = preset(apps, duration)
        source = f"preset {apps}"
    if capacity is not None:
        sc["capacity"] = capacity
    law.simulate({**sc, "duration": sc.get("control_period", 1.0)}, source)
    cpus = os.cpu_count() or 1
    if not sc["capacity"] <= cpus:
        raise UserError(f"{source}: capacity: at most this machine's {cpus} cores, got {sc['capacity']:g}")
    n = len(sc["apps"])
    if sc["capacity"] * cgroups.PERIOD_US < n * cgroups.MIN_QUOTA_US:
        raise UserError(f"{source}: capacity: at least {n} ms per 100 ms (1 ms per application)")
    if sc["control_period"] < 0.2 or sc["control_period"] > duration / 2:
        raise UserError(
            f"{source}: control_period: between 0.2 s and half the duration, got {sc['control_period']:g}"
        )
    if n > 16 or sum(max(u["users"] for u in a["users"]) for a in sc["apps"]) > 400:
        raise UserError(f"{source}: apps: at most 16 applications and 400 users in all on this machine")
    return sc, source


def _cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _spinner_share(prefix: str, seconds: float = 0.5) -> float | None:
    """The CPU share an ordinary spinner gets alone (1.0 on an idle core): the host's noise."""
    code = (
        "import sys,time\nt=time.monotonic();c=time.process_time()\n"
        "while time.monotonic()-t<float(sys.argv[1]): pass\n"
        "print((time.process_time()-c)/(time.monotonic()-t))"
    )
    p = ownership.spawn(
        [sys.executable, "-c", code, str(seconds), f"{prefix}-noise"],
        what="noise spinner",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, _ = p.communicate(timeout=30)
    finally:
        ownership.stop(p, timeout=0)
    return float(out.strip()) if p.returncode == 0 else None


class _Measure:
    """One application's client-side measurements over the current period."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.total = 0.0
        self.completed = 0
        self.optional = 0
        self.failed = 0
        self.sl_total = 0.0
        self.in_progress: dict[int, float] = {}

    def reset(self) -> None:
        self.worst = self.total = self.sl_total = 0.0
        self.completed = self.optional = self.failed = 0


async def _http(port: int, request: bytes) -> dict:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        data = await reader.read()
    finally:
        writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.0 200") and not head.startswith(b"HTTP/1.1 200"):
        raise ConnectionError(head.split(b"\r\n", 1)[0].decode(errors="replace"))
    return json.loads(body)


_GET = b"GET /r HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"


def _post_sl(period: int, f: float) -> bytes:
    body = f"{period} {f!r}".encode()
    return b"POST /sl HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


async def _user(port: int, think: float, m: _Measure, rng: random.Random, key: int) -> None:
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(rng.expovariate(1.0 / think))
        sent = loop.time()
        m.in_progress[key] = sent
        try:
            answer = await _http(port, _GET)
        except (OSError, ConnectionError, ValueError):
            m.failed += 1
            await asyncio.sleep(0.05)
            continue
        finally:
            m.in_progress.pop(key, None)
        r = loop.time() - sent
        m.worst = max(m.worst, r)
        m.total += r
        m.completed += 1
        m.optional += bool(answer.get("optional"))
        m.sl_total += float(answer.get("sl", 0.0))


async def _population(spec: dict, port: int, m: _Measure, rng: random.Random, t0: float, stop: float) -> None:
    """Keeps the user count of the scenario's steps: users added, or retired at once (a retired
    user's request in progress is abandoned)."""
    loop = asyncio.get_running_loop()
    users: list[asyncio.Task] = []
    key = 0
    try:
        for step in sorted(spec["users"], key=lambda s: s["at"]):
            if step["at"] >= stop:
                break
            await asyncio.sleep(max(0.0, t0 + step["at"] - loop.time()))
            while len(users) < step["users"]:
                key += 1
                users.append(asyncio.create_task(_user(port, spec["think_time"], m, rng, key)))
            while len(users) > step["users"]:
                users.pop().cancel()
        await asyncio.sleep(max(0.0, t0 + stop - loop.time()) + 3600)
    finally:
        for u in users:
            u.cancel()
        await asyncio.gather(*users, return_exceptions=True)


def _users_at(spec: dict, t: float) -> int:
    n = 0
    for step in sorted(spec["users"], key=lambda s: s["at"]):
        if step["at"] <= t + 1e-9:
            n = step["users"]
    return n


async def _control(sc: dict, ports: list[int], pids: list[int], groups: cgroups.RunGroups, seed: int) -> dict:
    loop = asyncio.get_running_loop()
    apps = sc["apps"]
    n = len(apps)
    rm = {"epsilon": 0.2, "min_share": 0.0, "matching_floor": None, **sc.get("rm", {})}
    shares = list(sc.get("initial_shares") or [1.0 / n] * n)
    caps = [c * sc["capacity"] for c in shares]
    for k, q in enumerate(cgroups.quotas(caps)):
        groups.set_quota(k, q)
    sls = [float(a.get("initial_sl", 0.5)) for a in apps]
    measures = [_Measure() for _ in apps]
    rngs = [random.Random(seed * 1000 + k) for k in range(n)]
    period = sc["control_period"]
    count = int(sc["duration"] / period + 1e-9)
    t0 = loop.time()
    pops = [
        asyncio.create_task(_population(a, ports[k], measures[k], rngs[k], t0, count * period))
        for k, a in enumerate(apps)
    ]
    cpu_before = [_cpu_seconds(p) for p in pids]
    window_start = loop.time()
    periods: list[dict] = []
    sending: list[asyncio.Task] = []
    try:
        for j in range(1, count + 1):
            tick = t0 + j * period
            await asyncio.sleep(max(0.0, tick - loop.time()))
            now = loop.time()
            lateness = now - tick
            cpu_now = [_cpu_seconds(p) for p in pids]
            rows = []
            for k, (a, m) in enumerate(zip(apps, measures, strict=True)):
                ages = [now - s for s in m.in_progress.values()]
                t = max([m.worst, *ages])
                f = 1.0 - t / a["deadline"]
                if m.completed:
                    sls[k] = m.sl_total / m.completed
                rows.append(
                    {
                        "users": _users_at(a, (j - 0.5) * period),
                        "sl": sls[k],
                        "share": shares[k],
                        "cap": caps[k],
                        "quota_us": groups.read_quota(k),
                        "used_cores": (cpu_now[k] - cpu_before[k]) / (now - window_start),
                        "response_time": t,
                        "mean_response_time": m.total / m.completed if m.completed else None,
                        "matching": f,
                        "completed": m.completed,
                        "optional_fraction": m.optional / m.completed if m.completed else None,
                        "failed": m.failed,
                    }
                )
                m.reset()
            cpu_before = cpu_now
            window_start = now
            # Each application's private controller moves its SL (Eq. 2): sent without waiting
            # for the answer, since a throttled application answers late (its requests in
            # progress hold its CPU) and the RM's step does not need it ...
            sending = [t for t in sending if not t.done()]
            sending += [
                asyncio.create_task(_http(ports[k], _post_sl(j, r["matching"]))) for k, r in enumerate(rows)
            ]
            # ... and the RM moves the shares (Eq. 3), which become the caps of the next period.
            floor = rm.get("matching_floor")
            fs = [r["matching"] if floor is None else max(r["matching"], floor) for r in rows]
            shares = _core.slrm_step(shares, fs, rm["epsilon"], rm["min_share"])
            caps = [c * sc["capacity"] for c in shares]
            for k, q in enumerate(cgroups.quotas(caps)):
                groups.set_quota(k, q)
            periods.append({"time": round(j * period, 9), "lateness": lateness, "apps": rows})
    finally:
        for p in pops + sending:
            p.cancel()
        await asyncio.gather(*pops, *sending, return_exceptions=True)
    return {"periods": periods}


def _start_apps(sc: dict, prefix: str, groups: cgroups.RunGroups, seed: int, procs: list) -> list[int]:
    ports = []
    for k, a in enumerate(sc["apps"]):
        spec = {**a, "seed": seed * 1000 + 500 + k}
        # It dies with this process, and ends when its stdin (held here) closes.
        p = ownership.spawn(
            [sys.executable, "-m", "rtnetlab.cloud.slrmapp", f"{prefix}-{k}", json.dumps(spec)],
            what=f"application {a['name']}",
            guarded=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(p)
        groups.attach(k, p.pid)
    for p in procs:
        line = p.stdout.readline()
        if not line:
            why = (p.stderr.read().strip().splitlines() or ["no output"])[-1]
            raise RuntimeError(f"application {p.args[3]} did not start: {why}")
        ports.append(int(json.loads(line)["port"]))
    return ports


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        ownership.stop(p, timeout=5, sig=signal.SIGKILL)
        for stream in (p.stdin, p.stdout, p.stderr):
            if stream is not None:
                stream.close()


def run(sc: dict, seed: int = 1, on_start=None) -> dict:
    """Runs the scenario on this machine. `on_start(prefix, cgroup line)` is called once the
    groups exist (the CLI prints it). Raises UserError when no cgroup CPU controller is usable."""
    found = cgroups.detect()
    if found is None:
        raise UserError("slrm run: no writable cgroup CPU controller (needs root and cgroup v1 or v2 cpu)")
    kind, base = found
    noise: dict[str, Any] = {"loadavg_1min_before": os.getloadavg()[0]}
    with ownership.Run("slrm run") as own:
        prefix = own.name
        groups = cgroups.RunGroups(kind, base, own, len(sc["apps"]))
        procs: list[subprocess.Popen] = []
        try:
            noise["spinner_share_alone"] = _spinner_share(prefix)
            groups.create()
            if on_start is not None:
                on_start(prefix, cgroups.describe(kind))
            ports = _start_apps(sc, prefix, groups, seed, procs)
            wall0 = time.monotonic()
            result = asyncio.run(_control(sc, ports, [p.pid for p in procs], groups, seed))
            wall = time.monotonic() - wall0
        finally:
            _stop(procs)
            left = groups.remove()
    if left:
        raise RuntimeError("could not remove " + "; ".join(left))
    periods = result["periods"]
    noise["loadavg_1min_after"] = os.getloadavg()[0]
    noise["max_tick_lateness_s"] = max((p["lateness"] for p in periods), default=0.0)
    noise["mean_tick_lateness_s"] = sum(p["lateness"] for p in periods) / max(len(periods), 1)
    return {
        "prefix": prefix,
        "cgroup": cgroups.describe(kind),
        "cgroup_period_us": cgroups.PERIOD_US,
        "capacity": sc["capacity"],
        "control_period": sc["control_period"],
        "duration": sc["duration"],
        "wall_time_s": wall,
        "apps": [a["name"] for a in sc["apps"]],
        "deadlines": [a["deadline"] for a in sc["apps"]],
        "initial_shares": list(sc.get("initial_shares") or [1.0 / len(sc["apps"])] * len(sc["apps"])),
        "host_noise": noise,
        "periods": periods,
    }


def summary(report: dict) -> dict:
    """The RM's invariant on the real run (Σ caps = C, and Σ of the quotas read back from the
    kernel = C·period), the final caps and SLs, and how closely the applications used their caps."""
    s = law.summary(report)
    target = round(report["capacity"] * report["cgroup_period_us"])
    s["max_quota_sum_error_us"] = max(
        (abs(sum(a["quota_us"] for a in p["apps"]) - target) for p in report["periods"]), default=0
    )
    used = [a["used_cores"] / a["cap"] for p in report["periods"][1:] for a in p["apps"] if a["cap"] > 0]
    s["max_used_over_cap"] = max(used, default=None)
    s["failed_requests"] = sum(a["failed"] for p in report["periods"] for a in p["apps"])
    return s


def csv_text(report: dict) -> str:
    out = io.StringIO()
    out.write(
        "time_s,app,users,sl,share,cap_cores,quota_us,used_cores,response_time_s,mean_response_time_s,"
        "matching,completed,optional_fraction,failed,tick_lateness_s\n"
    )

    def num(x: float | None) -> str:
        return "" if x is None else f"{x:.6g}"

    for p in report["periods"]:
        for name, a in zip(report["apps"], p["apps"], strict=True):
            out.write(
                f"{p['time']:g},{name},{a['users']},{a['sl']:.6g},{a['share']:.6g},{a['cap']:.6g},{a['quota_us']},"
                f"{a['used_cores']:.6g},{a['response_time']:.6g},{num(a['mean_response_time'])},"
                f"{a['matching']:.6g},{a['completed']},{num(a['optional_fraction'])},{a['failed']},"
                f"{p['lateness']:.6g}\n"
            )
    return out.getvalue()


def write(out_dir: Path, report: dict, title: str) -> list[Path]:
    from rtnetlab.io import output as outfiles

    files = law.outputs(out_dir)
    outfiles.write_all(
        {
            files["slrm.json"]: json.dumps(report, indent=1, allow_nan=False) + "\n",
            files["slrm.csv"]: csv_text(report),
            files["slrm.png"]: law.plot_png(report, title),
        }
    )
    return list(files.values())
