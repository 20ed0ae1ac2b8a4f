"""Seed 001A's realistic test: the cognitive walker's eight periodic modules exchanging topics,
the latency measured at the Audio-Visual Interface (AVI), under three placements over two boards.

The paper states only PT's period (100 ms), LOC's (10 ms) and a minimum period of 10 ms; its
topic graph (Fig. 2) is not in the text. Assumed here (docs/MIDDLEWARE.md):

| module | period | publishes | subscribes |
|---|---|---|---|
| PT  (people tracker)      | 100 ms | people   | - |
| LOC (localisation)        |  10 ms | pose     | - |
| HM  (heat maps)           | 100 ms | heatmap  | people, pose |
| LTP (long-term planner)   | 100 ms | route    | heatmap, pose |
| STP (short-term planner)  |  10 ms | guidance | pose, people, route |
| BC  (brakes control)      |  10 ms | brake    | guidance |
| HC  (haptics control)     |  10 ms | haptic   | guidance |
| AVI (audio-visual iface)  |  20 ms | display  | guidance, brake, haptic, route |

A module publishes on its own period (its latest inputs are state, as in a periodic control
loop); the latency of a message is its arrival at AVI minus its generation stamp."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from rtnetlab import ownership
from rtnetlab.middleware.host import describe
from rtnetlab.middleware.placement import placed
from rtnetlab.middleware.procs import Workers, measure_cases
from rtnetlab.middleware.pubsub import measure_noise
from rtnetlab.middleware.stats import quantile_sketch, summary

#: name: (period ms, published topic, subscribed topics)
MODULES: dict[str, tuple[int, str, tuple[str, ...]]] = {
    "PT": (100, "people", ()),
    "LOC": (10, "pose", ()),
    "HM": (100, "heatmap", ("people", "pose")),
    "LTP": (100, "route", ("heatmap", "pose")),
    "STP": (10, "guidance", ("pose", "people", "route")),
    "BC": (10, "brake", ("guidance",)),
    "HC": (10, "haptic", ("guidance",)),
    "AVI": (20, "display", ("guidance", "brake", "haptic", "route")),
}
#: Board (0: board 1, 1: board 2) of each module per mapping (the paper's M1-M3).
MAPPINGS: dict[int, dict[str, int]] = {
    1: dict.fromkeys(MODULES, 0),
    2: {"AVI": 0, "HM": 0, "LTP": 0, "BC": 1, "HC": 1, "PT": 1, "LOC": 1, "STP": 1},
    3: {m: (0 if m == "AVI" else 1) for m in MODULES},
}
#: Seed 001A's Table I (us): (mapping, protocol) -> (max, avg, stdev).
PAPER = {
    (1, "ZeroMQ"): (1740, 523.41, 183.68),
    (1, "ORTE"): (7599, 712.39, 260.39),
    (1, "OpenDDS"): (6135, 2016.79, 470.46),
    (2, "ZeroMQ"): (6752, 2368.42, 427.55),
    (2, "ORTE"): (10170, 4563.44, 832.93),
    (2, "OpenDDS"): (11268, 4952.68, 680.27),
    (3, "ZeroMQ"): (7851, 3720.68, 680.27),
    (3, "ORTE"): (11940, 5092.19, 410.39),
    (3, "OpenDDS"): (11482, 6179.72, 295.92),
}
PAYLOAD = 256
CWW = "cwalkerworker"


def _run_mapping(ws: Workers, place, tmp: Path, backend: str, mapping: int, seconds: float, rt: bool) -> dict:
    boards = MAPPINGS[mapping] if place.kind == "two-boards" else dict.fromkeys(MODULES, 0)
    what = f"{backend} (mapping M{mapping})"
    workers = {}
    for k, (name, (period, topic, subs)) in enumerate(MODULES.items()):
        spec = {
            "role": "module",
            "name": name,
            "backend": backend,
            "settings": place.settings(boards[name]),
            "period_ns": period * 1_000_000,
            "topic": topic,
            "subscribes": list(subs),
            "payload": PAYLOAD,
            "seconds": seconds,
            "measure": name == "AVI",
            "out": str(tmp / f"avi-{backend}-{mapping}.npy"),
            "cpu": k % 2,
            "rt": rt,
        }
        workers[name] = ws.start(place.prefix(boards[name]), spec, f"{backend}-{name}", CWW)
    endpoints: dict[str, list[str]] = {}
    for w in workers.values():
        for topic, ep in w.expect("ready", 60, what)["endpoints"].items():
            endpoints.setdefault(topic, []).append(ep)
    for name, w in workers.items():
        w.send(json.dumps(endpoints.get(MODULES[name][1], [])))
    for w in workers.values():
        w.expect("publishing", 60, what)
    for w in workers.values():
        w.send("go")
    workers["AVI"].expect("done", seconds * 2 + 60, what)
    lat = np.load(tmp / f"avi-{backend}-{mapping}.npy")
    s = summary(lat.tolist())
    sketch = quantile_sketch(lat.tolist())
    return {
        "backend": backend,
        "mapping": mapping,
        "placement": place.kind,
        "count": s["count"],
        **{k: s[k] for k in ("min_us", "mean_us", "stdev_us", "p99_us", "max_us")},
        "quantiles_us": sketch,
    }


def run(
    backends: list[str],
    mappings: list[int],
    seconds: float,
    placement: str = "two-boards",
    rt: bool = True,
    progress=None,
    noise_s: float = 1.0,
) -> dict:
    host = describe()
    rows, skipped = [], []
    with ownership.Run("middleware cwalker") as own, placed(placement, own) as place:
        tmp = own.folder()
        # The host's timer noise, first, as the other commands measure it.
        host.update(measure_noise(tmp, noise_s, rt))
        for backend in backends:
            measure_cases(
                tmp,
                [(m,) for m in mappings],
                lambda ws, m, backend=backend: _run_mapping(ws, place, tmp, backend, m, seconds, rt),
                rows,
                skipped,
                progress,
            )
    return {
        "host": host,
        "rows": rows,
        "skipped": skipped,
        "paper": [
            {"mapping": m, "protocol": p, "max_us": v[0], "mean_us": v[1], "stdev_us": v[2]}
            for (m, p), v in PAPER.items()
        ],
    }
