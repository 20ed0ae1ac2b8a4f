"""Seed 001B's partitioned DDS: the five scenarios of its Tables 1-2 measured on two emulated
nodes (network namespaces joined by a veth at 1 Gbit/s), and the partition-window analysis beside
the partitioned one.

* NETWORK: a UDP echo (client on node 1, server on node 2).
* TRADITIONAL DDS: a DDS client and server (request topic, reply topic), no partitions.
* SINGLE DDS PARTITION: the same server as the only partition, its window the whole major frame
  (what is left is the dispatcher's own cost: there is no hypervisor here).
* TRADITIONAL DDS WITH ROUTING: the client's domain bridged to the server's by a routing process
  on node 2, no partitions.
* PARTITIONED DDS WITH ROUTING: the same, the routing process in the routing partition and the
  server (the video recorder) in the recorder partition, each running only in its windows.

Partitions are emulated by a window dispatcher (SIGSTOP/SIGCONT at SCHED_FIFO maximum priority,
on its own CPU; the partitions share the other CPU, as the paper's single-core node): its
lateness at each switch is measured and reported (its precision).

The bound of the partitioned scenario is the unpartitioned routing scenario's maximum over the
requests the host did not disturb, plus the analysis's worst extra latency of the path routing →
recorder → routing through the windows (`fixed_priority::partition_supply`), with each stage's
work taken as a third of the routing scenario's p99 less the network's minimum (the time spent on
node 2).

The verdict, request by request: a request is disturbed when a window change was later than the
threshold (``--disturbance``, wall clock) during its flight, the client itself woke that late
before sending it, or a watcher (one per CPU at the highest priority, waking every 200 us) woke
that late; the undisturbed requests' maximum is compared with the bound plus what the
path's three window changes may have added unseen (three thresholds), and too few undisturbed
requests leave it "undecided on this host".

``--time-scale K`` runs the windows and the major frame K times longer and gives every latency back
divided by K (model time): the dispatcher's lateness and the host's stalls shrink K-fold against
the windows; the work on node 2 then counts K times less in model time."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from rtnetlab import ownership
from rtnetlab.middleware.backends import BackendUnavailable
from rtnetlab.middleware.host import describe
from rtnetlab.middleware.placement import placed
from rtnetlab.middleware.procs import Workers
from rtnetlab.middleware.pubsub import measure_noise
from rtnetlab.middleware.stats import quantile_sketch, summary

SCENARIOS = (
    "NETWORK",
    "TRADITIONAL DDS",
    "SINGLE DDS PARTITION",
    "TRADITIONAL DDS WITH ROUTING",
    "PARTITIONED DDS WITH ROUTING",
)
#: Seed 001B's Tables 1-2 (us): MIN, AVG, MAX, STD, PER99.
PAPER = {
    "NETWORK": (154, 206, 262, 20, 249),
    "TRADITIONAL DDS": (218, 286, 415, 29, 383),
    "SINGLE DDS PARTITION": (262, 331, 467, 28, 409),
    "TRADITIONAL DDS WITH ROUTING": (662, 764, 1632, 36, 876),
    "PARTITIONED DDS WITH ROUTING": (1028, 1858, 4157, 539, 3346),
}
RRW = "rrworker"
STAT_KEYS = ("min_us", "mean_us", "max_us", "stdev_us", "p99_us")
#: The verdict needs at least this many undisturbed requests, and this share of them.
MIN_UNDISTURBED = 50
MIN_UNDISTURBED_SHARE = 0.25


def analysis(major_frame_ns: int, windows: list[tuple[str, int]], stage_work_ns: int) -> dict:
    """The request's path routing → recorder → routing through the windows (JSON of the core)."""
    from rtnetlab import _core

    idx = {name: k for k, (name, _) in enumerate(windows)}
    stages = [
        (idx["routing"], stage_work_ns, 0),
        (idx["recorder"], stage_work_ns, 0),
        (idx["routing"], stage_work_ns, 0),
    ]
    return json.loads(_core.partition_latency_json(major_frame_ns, windows, stages, stage_work_ns))


def path_through_windows(
    phase_ns: int, major_frame_ns: int, windows: list[tuple[str, int]], stages: list[tuple[str, int]]
) -> list[tuple[str, int, int]]:
    """The stages (window name, work in ns) of a request reaching node 2 at `phase_ns` of the major
    frame, each run only inside its own window (back to back from offset 0, repeated every frame)
    after the previous stage ends: [(name, start, end)] in ns from the frame's start, where a stage
    split across windows has one piece per window."""
    slots, off = {}, 0
    for name, length in windows:
        slots[name] = (off, off + length)
        off += length
    t, pieces = phase_ns, []
    for name, work in stages:
        lo, hi = slots[name]
        while work > 0:
            frame = t // major_frame_ns * major_frame_ns
            if t < frame + lo:
                t = frame + lo
            elif t >= frame + hi:
                t = frame + major_frame_ns + lo
            run = min(work, frame + hi - t) if frame + lo <= t < frame + hi else 0
            if run:
                pieces.append((name, t, t + run))
                t += run
                work -= run
    return pieces


def _scenario(ws: Workers, place, tmp: Path, name: str, args: dict) -> tuple[dict, dict | None, dict]:
    """One scenario measured: its row, the dispatcher's figures (partitioned scenarios) and the raw
    sample (round trips and send stamps in ns, which requests the host left undisturbed, and in the
    routed scenarios the node-2 processes' stamps, `Stamps`)."""
    s1, s2 = place.settings(0), place.settings(1)
    out = tmp / f"rtt-{SCENARIOS.index(name)}.npy"
    client_stalls = out.with_suffix(".stalls.npy")
    dispatch_stalls = out.with_suffix(".dispatch.npy")
    common = {"rt": args["rt"], "below_max": 1, "busy_us": args["busy_us"], "reply_bytes": args["payload"]}
    domain_in = s2["domain"] + 1  # the recorder's own domain behind the routing process
    partitioned = name in ("SINGLE DDS PARTITION", "PARTITIONED DDS WITH ROUTING")
    routed = "ROUTING" in name
    groups: dict[str, list[int]] = {}
    if name == "NETWORK":
        srv = ws.start(
            place.prefix(1), {**common, "role": "echo_server", "settings": s2, "cpu": 1}, "echo-server", RRW
        )
        peer = srv.expect("ready", 30, name)["endpoint"]
        backend = "udp-echo"
        node2 = []
    else:
        srv_settings = {**s2, "domain": domain_in} if routed else s2
        srv = ws.start(
            place.prefix(1),
            {
                **common,
                "role": "server",
                "backend": "dds",
                "settings": srv_settings,
                "cpu": 1,
                "out_stamps": str(out.with_suffix(".server.npy")),
            },
            "server",
            RRW,
        )
        srv.expect("ready", 60, name)
        peer, backend = None, "dds"
        groups["recorder" if routed else "single"] = [srv.p.pid]
        node2 = [srv]
        if routed:
            rt = ws.start(
                place.prefix(1),
                {
                    "role": "router",
                    "backend": "dds",
                    "settings": s2,
                    "inner_domain": domain_in,
                    "cpu": 1,
                    "rt": args["rt"],
                    "below_max": 1,
                    "out_stamps": str(out.with_suffix(".router.npy")),
                },
                "router",
                RRW,
            )
            rt.expect("ready", 60, name)
            groups["routing"] = [rt.p.pid]
            node2.append(rt)
    disp = None
    if partitioned:
        windows = args["windows"] if routed else [("single", args["major_frame_ns"])]
        disp = ws.start(
            [],
            {
                "role": "dispatcher",
                "major_frame_ns": args["major_frame_ns"],
                "windows": windows,
                "groups": groups,
                "cpu": 0,
                "rt": args["rt"],
                "out_stalls": str(dispatch_stalls),
                "disturbance_ns": args["disturbance_ns"],
            },
            "dispatcher",
            RRW,
        )
        disp.expect("ready", 30, name)
    # A watcher on each CPU at the highest priority: the stalls of the host (the client and the
    # dispatcher see only their own, and a stall of the server's CPU while the client waits on
    # its reply is neither's).
    watchers = []
    for cpu in range(min(2, os.cpu_count() or 1)):
        w = ws.start(
            [],
            {"role": "watch", "cpu": cpu, "rt": args["rt"], "disturbance_ns": args["disturbance_ns"],
             "out_stalls": str(out.with_suffix(f".watch{cpu}.npy"))},
            f"watch{cpu}",
            RRW,
        )  # fmt: skip
        w.expect("ready", 30, name)
        watchers.append(w)
    cl = ws.start(
        place.prefix(0),
        {
            "role": "client",
            "backend": backend,
            "settings": s1,
            "peer": peer,
            "requests": args["requests"],
            "warmup": args["warmup"],
            "request_bytes": args["payload"],
            "gap_ns": args["major_frame_ns"],
            "out": str(out),
            "out_sent": str(out.with_suffix(".sent.npy")),
            "out_stalls": str(client_stalls),
            "disturbance_ns": args["disturbance_ns"],
            "cpu": 0,
            "rt": args["rt"],
            "below_max": 1,
            "seed": args["seed"],
        },
        "client",
        RRW,
    )
    cl.expect("ready", 60, name)
    cl.expect("done", args["requests"] * 0.05 + 90, name)
    dispatch = None
    if disp is not None:
        disp.send("stop")
        dispatch = disp.expect("dispatch", 30, name)["dispatch"]
    for w in watchers:
        w.send("stop")
        w.expect("watched", 30, name)
    for proc in node2:  # after the dispatcher: every process continued
        proc.send("stop")
        proc.expect("stamped", 30, name)
    stalls = [np.load(client_stalls)]
    if disp is not None and dispatch_stalls.exists():
        stalls.append(np.load(dispatch_stalls))
    stalls += [np.load(out.with_suffix(f".watch{cpu}.npy")) for cpu in range(len(watchers))]
    row, sample = _measured(name, out, stalls, dispatch, routed)
    return row, dispatch, sample


def _measured(name: str, out: Path, stalls: list, dispatch: dict | None, routed: bool) -> tuple[dict, dict]:
    """A scenario's row and raw sample from what its processes wrote: the round trips and send
    stamps (`out`), the stalls every watcher saw, the node-2 stamps of a routed scenario."""
    rtt = np.load(out)
    sent = np.load(out.with_suffix(".sent.npy"))
    spans = np.concatenate(stalls) if stalls else np.zeros((0, 2), dtype=np.int64)
    ok = rtt >= 0
    # A request is disturbed when a stall overlaps its flight [sent, sent + rtt].
    disturbed = np.zeros(len(rtt), dtype=bool)
    for a, b in spans:
        disturbed |= ok & (sent <= b) & (sent + rtt >= a)
    s = summary(rtt[ok].tolist())
    row = {"scenario": name, "count": s["count"], "lost": int((rtt < 0).sum())}
    quiet = rtt[ok & ~disturbed]
    row["undisturbed"] = int(len(quiet))
    row["disturbed"] = int((ok & disturbed).sum())
    row["undisturbed_max_us"] = float(quiet.max()) / 1000 if len(quiet) else None
    row["undisturbed_p99_us"] = summary(quiet.tolist())["p99_us"] if len(quiet) else None
    row.update({k: s[k] for k in ("min_us", "mean_us", "max_us", "stdev_us", "p99_us")})
    row["quantiles_us"] = quantile_sketch(rtt[rtt >= 0].tolist())
    sample = {"rtt": rtt, "sent": sent, "quiet": ok & ~disturbed}
    if routed:
        sample["server"] = np.load(out.with_suffix(".server.npy"))
        sample["router"] = np.load(out.with_suffix(".router.npy"))
    if dispatch is not None and s["count"]:
        # The slowest measured request, placed in the windows: its send stamp's phase in the
        # dispatcher's major frame (both stamps are this host's CLOCK_MONOTONIC).
        k = int(np.argmax(rtt))
        phase = (int(sent[k]) - dispatch["start_ns"]) % dispatch["major_frame_ns"]
        row["worst_request"] = {"phase_us": phase / 1000, "rtt_us": int(rtt[k]) / 1000}
        if routed:
            # Where its time went: the router's forward, the server's reply and the router's
            # forward back, from its send (a DDS repair or a stall shows in one leg).
            marks = [
                _stamp(sample[who], leg, k) for who, leg in (("router", 0), ("server", 0), ("router", 1))
            ]
            row["worst_request"]["legs_us"] = [
                None if m is None else (m - int(sent[k])) / 1000 for m in marks
            ]
    return row, sample


def _stamp(stamps: np.ndarray, leg: int, seq: int) -> int | None:
    """When a node-2 process's publish of request `seq` on `leg` returned (`Stamps`), or None."""
    rows = stamps.reshape(-1, 4)
    hit = rows[(rows[:, 0] == leg) & (rows[:, 1] == seq)]
    return int(hit[0, 3]) if len(hit) else None


def _dilate(row: dict, k: float) -> None:
    """A row's latencies (measured on a run `k` times slower) back in model time."""
    for key in (*STAT_KEYS, "undisturbed_max_us", "undisturbed_p99_us"):
        if row.get(key) is not None:
            row[key] /= k
    row["quantiles_us"] = [[q, v / k] for q, v in row.get("quantiles_us", [])]
    w = row.get("worst_request")
    if w:
        row["worst_request"] = {
            **w,
            "phase_us": w["phase_us"] / k,
            "rtt_us": w["rtt_us"] / k,
            **({"legs_us": [None if v is None else v / k for v in w["legs_us"]]} if "legs_us" in w else {}),
        }


#: The verdict rejects "within bound" wrongly at most this often (both tests, every phase bin).
ALPHA = 0.001
#: The major frame is cut into this many arrival-phase bins; a request is compared with the bounds
#: of its own bin (the window analysis's worst over the bin's phases).
PHASE_BINS = 6


def stage_work(sample: dict, one_way_ns: float) -> tuple[np.ndarray, np.ndarray]:
    """The undisturbed requests of a routed scenario whose node-2 stamps are all there: their
    round trips (ns) and their work in the three stages (ns, rows: routing, recorder, routing),
    split where each process's publish returned: the routing stage from the request's arrival on
    node 2 (sent + the network's one-way minimum) to the router's forward, the recorder's to the
    server's reply, the routing stage back to the router's forward of the reply. Work counted
    from the send stamp that was in fact done on node 1 only makes the bound larger: a stage that
    runs outside its window finishes no later than the analysis says."""
    n = len(sample["rtt"])
    ends = np.full((3, n), -1, dtype=np.int64)
    for stamps, legs in ((sample["router"], (0, 2)), (sample["server"], (1,))):
        rows = stamps.reshape(-1, 4)
        for leg, stage in enumerate(legs):
            mine = rows[(rows[:, 0] == leg) & (rows[:, 1] < n)]
            ends[stage, mine[:, 1]] = mine[:, 3]
    keep = sample["quiet"] & (ends >= 0).all(axis=0)
    arrive = sample["sent"][keep] + int(one_way_ns)
    e = ends[:, keep]
    work = np.maximum(0, np.vstack([e[0] - arrive, e[1] - e[0], e[2] - e[1]]))
    return sample["rtt"][keep], work


def request_bounds(
    rtt_ns: np.ndarray, work_ns: np.ndarray, major_frame_ns: int, windows: list[tuple[str, int]], k: float
) -> np.ndarray:
    """Per unpartitioned request and arrival-phase bin (model-time us, shape (requests,
    `PHASE_BINS`)): its round trip plus the window analysis's worst extra latency, over the bin's
    phases, for its own three measured stages. Evaluated on a 1 us tick and kept an upper bound:
    each stage's work rounded up to the tick (the latency grows with the work, and the request's
    own work is what is taken off), a phase between two ticks taken at the later one plus the tick
    (the completion grows with the phase), the bin's last edge included."""
    from rtnetlab import _core

    idx = {name: i for i, (name, _) in enumerate(windows)}
    order = (idx["routing"], idx["recorder"], idx["routing"])
    # On the tick, windows shortened and the frame lengthened (less supply: a larger latency),
    # so that a schedule of fractions of a microsecond still fits its frame.
    frame_us = -(-major_frame_ns // 1000)
    windows_us = [(n, w // 1000) for n, w in windows]
    edges = np.linspace(0, frame_us, PHASE_BINS + 1).round().astype(int)
    cache: dict[tuple[int, ...], np.ndarray] = {}
    out = np.empty((len(rtt_ns), PHASE_BINS))
    for i in range(len(rtt_ns)):
        work_us = work_ns[:, i] / k / 1000
        ticks = tuple(max(1, int(np.ceil(w))) for w in work_us)
        if ticks not in cache:
            stages = [(order[j], ticks[j], 0) for j in range(3)]
            lat = np.array(_core.partition_phase_latency(frame_us, windows_us, stages))
            lat = np.append(lat, lat[0])  # the next frame's phase 0 closes the last bin
            cache[ticks] = np.array(
                [lat[a : b + 1].max() for a, b in zip(edges[:-1], edges[1:], strict=True)]
            )
        out[i] = rtt_ns[i] / k / 1000 + cache[ticks] + 1 - work_us.sum()
    return out


def phase_bins(sent_ns: np.ndarray, one_way_ns: float, dispatch: dict) -> np.ndarray:
    """Each request's arrival-phase bin: where in the dispatcher's major frame (its first frame's
    start, CLOCK_MONOTONIC, the client's clock) it reached node 2."""
    frame = dispatch["major_frame_ns"]
    phase = (sent_ns + int(one_way_ns) - dispatch["start_ns"]) % frame
    return np.minimum(PHASE_BINS - 1, phase * PHASE_BINS // frame)


def tail_size(n: int, m: int, alpha: float) -> int:
    """The least k for which the k largest of n + m exchangeable values all fall among the n with
    probability C(n, k) / C(n + m, k) <= alpha (n + 1 where none does)."""
    p = 1.0
    for k in range(1, n + 1):
        p *= (n - k + 1) / (n + m - k + 1)
        if p <= alpha:
            return k
    return n + 1


def two_sample(lat: np.ndarray, bnd: np.ndarray, alpha: float) -> dict:
    """Whether `lat` is stochastically larger than `bnd`, by two distribution-free tests at
    level `alpha` each: the body (one-sided two-sample Kolmogorov-Smirnov, the latencies' CDF below
    the bounds' by more than the critical distance somewhere) and the tail (the `tail_size`
    largest of both samples all latencies)."""
    lat, bnd = np.sort(lat), np.sort(bnd)
    n, m = len(lat), len(bnd)
    xs = np.concatenate([lat, bnd])
    gap = np.searchsorted(bnd, xs, side="right") / m - np.searchsorted(lat, xs, side="right") / n
    d = float(gap.max(initial=0.0))
    critical = float(np.sqrt(-np.log(alpha) / 2 * (n + m) / (n * m)))
    k = tail_size(n, m, alpha)
    above = int((lat > bnd[-1]).sum())
    return {"tested": n, "ks_d": d, "ks_critical": critical, "tail_k": k, "above_every_bound": above,
            "reject": d > critical or above >= k}  # fmt: skip


def verdict(
    latencies_us: np.ndarray, bins: np.ndarray, bounds_us: np.ndarray, allowance_us: float, count: int
) -> dict:
    """The partitioned requests the host did not disturb against the bounds of the unpartitioned
    ones, bin by arrival phase. A bound is of a request's own unpartitioned round trip, which the
    partitioned run cannot measure: its requests are other draws from the same host, so their
    maximum against the other run's would fail about half the time with no fault anywhere. Under
    the analysis, a partitioned request's latency less what the window changes added unseen
    (`allowance_us`) is at most a draw of its phase bin's bounds; `two_sample` rejects that in any
    bin at level `ALPHA` / bins (Bonferroni). Too few undisturbed requests (fewer than
    `MIN_UNDISTURBED` on either side, or than `MIN_UNDISTURBED_SHARE` of the `count` measured):
    undecided."""
    n, m = len(latencies_us), len(bounds_us)
    out: dict = {"tested": n, "bounds": m, "alpha": ALPHA, "bins": []}
    if min(n, m) < MIN_UNDISTURBED or n < MIN_UNDISTURBED_SHARE * count:
        return {**out, "verdict": "undecided on this host"}
    used = [b for b in range(PHASE_BINS) if (bins == b).any()]
    for b in used:
        test = two_sample(latencies_us[bins == b] - allowance_us, bounds_us[:, b], ALPHA / len(used))
        out["bins"].append({"bin": b, **test})
    out["verdict"] = "ABOVE BOUND" if any(t["reject"] for t in out["bins"]) else "within bound"
    return out


def run(
    windows: list[tuple[str, int]],
    major_frame_ns: int,
    requests: int,
    payload: int = 1000,
    busy_us: float = 0.0,
    warmup: int = 50,
    rt: bool = True,
    noise_s: float = 1.0,
    seed: int = 1,
    progress=None,
    time_scale: float = 1.0,
    disturbance_ns: int = 200_000,
) -> dict:
    """The five scenarios; `windows` and `major_frame_ns` are model time, run `time_scale` times
    longer, and every latency is given back in model time."""
    k = time_scale
    args = {
        "windows": [(n, round(w * k)) for n, w in windows],
        "major_frame_ns": round(major_frame_ns * k),
        "requests": requests,
        "payload": payload,
        "busy_us": busy_us,
        "warmup": warmup,
        "rt": rt,
        "seed": seed,
        "disturbance_ns": disturbance_ns,
    }
    host = describe()
    host["scheduling"] = (
        ["SCHED_FIFO: the dispatcher at the maximum priority on CPU 0, the rest one below (node 2 on CPU 1)"]
        if rt
        else ["default scheduler (--no-rt): the dispatcher's windows are approximate"]
    )
    rows, skipped, dispatch, samples = [], [], None, {}
    with ownership.Run("middleware partitions") as own, placed("two-boards", own, rate="1gbit") as place:
        tmp = own.folder()
        host.update(measure_noise(tmp, noise_s, rt))
        for name in SCENARIOS:
            try:
                with Workers(tmp) as ws:
                    row, d, samples[name] = _scenario(ws, place, tmp, name, args)
            except BackendUnavailable as e:
                skipped.append(f"{name}: {str(e).splitlines()[0]}")
                continue
            if d is not None and name == "PARTITIONED DDS WITH ROUTING":
                dispatch = d
            _dilate(row, k)
            row["paper"] = dict(zip(STAT_KEYS, PAPER[name], strict=True))
            rows.append(row)
            if progress:
                progress(row)
    if dispatch is not None:
        # The dispatcher's lateness, wall clock, and in model time beside the windows.
        dispatch = {**dispatch, "model_max_us": (dispatch.get("max_us") or 0.0) / k}
    by = {r["scenario"]: r for r in rows}
    host["time_scale"] = k
    host["disturbance_us"] = disturbance_ns / 1000
    result = {
        "host": host,
        "rows": rows,
        "skipped": skipped,
        "dispatcher": dispatch,
        "time_scale": k,
        "major_frame_us": major_frame_ns / 1000,
        "windows_us": {n: w / 1000 for n, w in windows},
    }
    routed, part = by.get("TRADITIONAL DDS WITH ROUTING"), by.get("PARTITIONED DDS WITH ROUTING")
    net = by.get("NETWORK")
    if routed and part and routed["count"] and part["count"]:
        net_min = net["min_us"] if net and net["count"] else 0.0
        net_mean = net["mean_us"] if net and net["count"] else 0.0
        # Work of each of the three stages on node 2 for the figures: a third of the routed
        # scenario's undisturbed p99 beyond the network's minimum (the worst request drawn), and of
        # its mean beyond the network's mean (the expected extra).
        p99 = routed.get("undisturbed_p99_us") or routed["p99_us"]
        work_bound = max(1, round(max(0.0, p99 - net_min) * 1000 / 3))
        work_typical = max(1, round(max(0.0, routed["mean_us"] - net_mean) * 1000 / 3))
        a = analysis(major_frame_ns, windows, work_bound)
        t = analysis(major_frame_ns, windows, work_typical)
        extra = a["chain"]["worst"] - a["chain"]["unpartitioned"]
        # The verdict's bounds: each undisturbed routed request's round trip plus the windows'
        # worst extra for its own measured stages (wall-clock one-way minimum: net_min is model time).
        rtt_ns, work = stage_work(samples["TRADITIONAL DDS WITH ROUTING"], net_min * k * 1000 / 2)
        bounds = request_bounds(rtt_ns, work, major_frame_ns, windows, k)
        part["bound_us"] = float(bounds.max()) if len(bounds) else None  # the worst bin's
        part["bounded_requests"] = int(len(bounds))
        # Host noise beside the figure, as before: the timer noise and the dispatcher's worst
        # lateness at each of the path's three window changes (model time).
        noise = ((host.get("noise_us") or 0.0) + 3 * ((dispatch or {}).get("max_us") or 0.0)) / k
        part["noise_us"] = noise
        # What the three window changes of an undisturbed request may have added unseen.
        part["allowance_us"] = 3 * disturbance_ns / 1000 / k
        mine = samples["PARTITIONED DDS WITH ROUTING"]
        quiet = mine["quiet"]
        bins = phase_bins(mine["sent"][quiet], net_min * k * 1000 / 2, dispatch) if dispatch else None
        if bins is None:
            tested = {"verdict": "undecided on this host", "why": "no dispatcher figures"}
        else:
            lat = mine["rtt"][quiet] / k / 1000
            tested = verdict(lat, bins, bounds, part["allowance_us"], part["count"])
        part["verdict"] = tested.pop("verdict")
        part["verdict_test"] = tested
        part["within_bound"] = part["verdict"] != "ABOVE BOUND"
        unpart = t["chain"]["unpartitioned"]
        result["analysis"] = {
            "stage_work_bound_us": work_bound / 1000,
            "extra_worst_us": extra / 1000,
            "compositional_extra_us": (a["chain"]["compositional"] - a["chain"]["unpartitioned"]) / 1000,
            "stage_work_typical_us": work_typical / 1000,
            "extra_mean_us": (t["chain"]["mean"] - unpart) / 1000,
            "extra_quantiles_us": {str(q): v / 1000 for q, v in t["chain"]["extra_quantiles"]},
            "measured_extra_mean_us": part["mean_us"] - routed["mean_us"],
            # For the timeline: where the worst request reaches node 2, and the network's share.
            "worst_phase_us": a["chain"]["worst_phase"] / 1000,
            "network_min_us": net_min,
            # The measured stages (routing, recorder, routing), model time.
            "stage_work_measured_us": {
                q: [float(np.percentile(w, pct)) / k / 1000 if len(w) else None for w in work]
                for q, pct in (("p50", 50), ("p99", 99))
            },
        }
    return result
