"""Seed 002's measurements (Vila-Carbó et al., "Analysis of switched Ethernet for real-time
transmission", section 4) on the testbed: four "blades" on one 100 Mbit/s switch, a real-time
message of 570 B every 1 ms from blade 2 to blade 4 and its echo back, and UDP background
traffic where the paper put it.

* Contention (the paper's Fig. 6; TCn is blade n's outbound queue, SPn the switch's port to it):
  ``tc`` background B2 -> B3 (meets the message in TC2), ``switch`` background B4 -> B2 (meets
  the echo in TC4 and SP2), ``both`` B2 -> B3 and B3 -> B2 (TC2, and SP2 for the echo).
* Policies: ``fifo`` (no priority anywhere), ``tc-priority`` (the blades' queues serve the
  real-time class first, the switch is FIFO), ``switch-priority`` (the switch serves it first,
  and so do the blades' queues: Linux's default pfifo_fast honours the message's ToS marking, which
  is how we read the paper's platform, whose switch-priority runs kept the round trip flat at the
  blades too), ``tc-shaping`` (switch priority, FIFO blades whose background leaves through a
  token bucket at 80 Mbit/s: its fragments spaced at 80 Mbit/s instead of back to back).
* A background "packet" of S bytes is one UDP datagram: IP fragments it into ceil((S + 8) / 1480)
  frames released together, so it occupies its sender's queue as the paper's large datagrams
  did. Its period is set by the load: S on the wire / (load x 100 Mbit/s).

Measured per point: the one-way latency of the message and of its echo (all namespaces share one
clock; the round trip is their sum: exact for the mean, an upper bound for the extremes) and the
paper's jitter |inter-arrival - period| of the message at blade 4. The paper used 10^5 messages
per point; ``--messages`` chooses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from rtnetlab import _core

LINK_BPS = 100e6
RT_BYTES = 570
RT_PERIOD_US = 1000
SHAPER_BPS = 80e6
#: IPv4 payload per fragment of a 1500-byte MTU, and the Ethernet + IP headers around it.
FRAGMENT_PAYLOAD = 1480
FRAME_OVERHEAD = 14 + 4 + 20
#: Preamble, start delimiter and inter-frame gap (seed 002's 20 bytes, the engine's number).
WIRE_OVERHEAD = _core.INTERFRAME_BYTES

SCENARIOS = {
    "tc": [("B2", "B3")],
    "switch": [("B4", "B2")],
    "both": [("B2", "B3"), ("B3", "B2")],
}
#: policy: (blades' scheduler, switch's scheduler, background shaper rate or None)
POLICIES = {
    "fifo": ("fifo", "fifo", None),
    "switch-priority": ("static_priority", "static_priority", None),
    "tc-priority": ("static_priority", "fifo", None),
    "tc-shaping": ("fifo", "static_priority", SHAPER_BPS),
}

#: The paper's three studies: what varies, the contention, the policies compared.
FIGURES = {
    # Sec. 4.3 "packet size", contention at TC: RTT grows linearly with the datagram size.
    "size": {
        "vary": "size",
        "scenario": "tc",
        "policies": ["fifo", "tc-priority"],
        "sizes": [100, 1000, 1500, 5000, 10000, 25000],
        "loads": [0.5],
    },
    # Sec. 4.3, the switch prioritises and TC only shapes (TBF at 80 Mbit/s): flat above 1500 B.
    "size-shaping": {
        "vary": "size",
        "scenario": "both",
        "policies": ["tc-shaping"],
        # 100-byte datagrams at 80 % from two senders would be 270,000 frame transmissions per
        # second, about what this host's kernel ports forward (testbed/capacity.py measures it).
        "sizes": [500, 1000, 1500, 5000, 10000, 25000],
        "loads": [0.8],
    },
    # Sec. 4.4 "bandwidth utilisation", 25 KB datagrams: switch priority holds, the others collapse
    # above 80 %.
    "load": {
        "vary": "load",
        "scenario": "both",
        "policies": ["switch-priority", "fifo", "tc-priority"],
        "sizes": [25000],
        "loads": [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0],
    },
}

ROW_KEYS = (
    "figure",
    "scenario",
    "policy",
    "background_bytes",
    "load",
    "sent",
    "count",
    "lost",
    "rtt_min_us",
    "rtt_mean_us",
    "rtt_p99_us",
    "rtt_max_us",
    "jitter_mean_us",
    "jitter_max_us",
    "noise_us",
    "load_achieved",
    "release_shift_us",
    "latency_basis",
)


def fragments(size: int) -> list[int]:
    """Ethernet frame sizes (bytes, without preamble and gap) of one UDP datagram of `size` bytes."""
    data = size + 8  # the UDP header travels in the first fragment
    n = max(1, math.ceil(data / FRAGMENT_PAYLOAD))
    sizes = [FRAGMENT_PAYLOAD + FRAME_OVERHEAD] * (n - 1)
    sizes.append(max(64, data - (n - 1) * FRAGMENT_PAYLOAD + FRAME_OVERHEAD))
    return sizes


@dataclass(frozen=True)
class Point:
    figure: str
    scenario: str
    policy: str
    size: int
    load: float


def description(point: Point) -> dict:
    """The network of one measurement point, as a description."""
    es_sched, sw_sched, shaper = POLICIES[point.policy]
    flows: list[dict] = [
        {
            "name": name,
            "type": "periodic",
            "period": f"{RT_PERIOD_US}us",
            "size": f"{RT_BYTES}B",
            "source": src,
            "destinations": [dst],
            "class": "rt",
        }
        for name, src, dst in (("rt", "B2", "B4"), ("echo", "B4", "B2"))
    ]
    if point.load > 0:
        frames = fragments(point.size)
        wire_bits = sum((f + WIRE_OVERHEAD) * 8 for f in frames)
        period_ns = math.ceil(wire_bits / (point.load * LINK_BPS) * 1e9)
        for src, dst in SCENARIOS[point.scenario]:
            offset_ns = 0.0
            for k, size in enumerate(frames):
                flows.append(
                    {
                        "name": f"bg-{src}-{dst}-{k}",
                        "type": "periodic",
                        "period": f"{period_ns}ns",
                        "size": f"{size}B",
                        "offset": f"{math.ceil(offset_ns)}ns",
                        "source": src,
                        "destinations": [dst],
                        "class": "bg",
                    }
                )
                if shaper is not None:
                    offset_ns += (size + WIRE_OVERHEAD) * 8 / shaper * 1e9
    return {
        "name": f"seed002-{point.scenario}-{point.policy}",
        "description": "Seed 002's measurement platform: four blades on one managed 100 Mbit/s switch",
        "defaults": {"link_rate": "100Mbps"},
        "classes": [{"name": "rt", "priority": 0}, {"name": "bg", "priority": 1}],
        "end_systems": [{"name": f"B{k}", "scheduler": es_sched, "buffer": "200kB"} for k in (1, 2, 3, 4)],
        "switches": [{"name": "SW", "scheduler": sw_sched, "buffer": "100kB"}],
        "links": [{"from": f"B{k}", "to": "SW"} for k in (1, 2, 3, 4)],
        "flows": flows,
    }


def points(figure: str, policies: list[str] | None, sizes: list[int] | None, loads: list[float] | None):
    f = FIGURES[figure]
    for policy in policies or f["policies"]:
        for size in sizes or f["sizes"]:
            for load in loads or f["loads"]:
                yield Point(figure, f["scenario"], policy, size, load)


def _route(report: dict, flow: str) -> dict | None:
    return next((r for r in report["flows"] if r["flow"] == flow), None)


def achieved_load(point: Point, report: dict) -> float | None:
    """The background load the senders achieved, a fraction of the link per sender: a sender late
    on this host moves its later releases so as to keep each flow's period (docs/TESTBED.md), so
    it may offer less than `point.load`."""
    if point.load <= 0:
        return 0.0
    frames = fragments(point.size)
    sent = {p["node"]: p for p in report["ports"]}
    senders = [src for src, _ in SCENARIOS[point.scenario]]
    bits = 0.0
    for src in senders:
        # The sender's port carries its background and, for B2 and B4, the message or its echo.
        p = sent.get(src)
        if p is None:
            return None
        bits += p["utilisation"] * LINK_BPS * report["stats"]["duration_s"]
    own = sum(RT_BYTES + WIRE_OVERHEAD for src in senders if src in ("B2", "B4")) * 8
    own *= report["stats"]["duration_s"] * 1e6 / RT_PERIOD_US
    del frames
    return round(max(0.0, bits - own) / (LINK_BPS * report["stats"]["duration_s"] * len(senders)), 4)


def row(point: Point, report: dict) -> dict:
    """One point's figures from a testbed report."""
    fwd, back = _route(report, "rt"), _route(report, "echo")
    both = fwd and back and fwd["count"] and back["count"]

    def total(key: str) -> float | None:
        return round(fwd[key] + back[key], 3) if both else None

    def one(key: str) -> float | None:
        return round(fwd[key], 3) if fwd and fwd.get(key) is not None else None

    return {
        "figure": point.figure,
        "scenario": point.scenario,
        "policy": point.policy,
        "background_bytes": point.size,
        "load": point.load,
        "sent": fwd["count"] + fwd["losses"] if fwd else None,
        "count": fwd["count"] if fwd else 0,
        "lost": fwd["losses"] if fwd else None,
        "rtt_min_us": total("min_us"),
        "rtt_mean_us": total("mean_us"),
        "rtt_p99_us": total("p99_us"),
        "rtt_max_us": total("max_us"),
        "jitter_mean_us": one("interarrival_mean_us"),
        "jitter_max_us": one("interarrival_max_us"),
        "noise_us": None if report["host"]["noise_us"] is None else round(report["host"]["noise_us"], 3),
        "load_achieved": achieved_load(point, report),
        "release_shift_us": round(report["host"]["release_shift_us"], 1),
        # Kernel mode adds each hop's transmission and propagation from the model (its ports do
        # not hold a lone frame): "measured + modelled latency added"; user mode: "measured".
        "latency_basis": report.get("latency_basis", "measured"),
    }


def measure(point: Point, messages: int, mode: str, seed: int) -> dict:
    from rtnetlab import model
    from rtnetlab.testbed import run

    desc = description(point)
    net = model.load_data(desc, f"<seed 002 {point.scenario}/{point.policy}>")
    report = run.run(
        net,
        desc,
        mode=mode,
        duration_ns=messages * RT_PERIOD_US * 1000,
        baseline_ns=300_000_000,
        seed=seed,
        sizes="max",
        release="random",
        simulate=False,
    )
    return row(point, report)


def plot(rows: list[dict], figure: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    vary = FIGURES[figure]["vary"]
    key = "background_bytes" if vary == "size" else "load"
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for policy in dict.fromkeys(r["policy"] for r in rows):
        pts = sorted((r[key], r["rtt_mean_us"]) for r in rows if r["policy"] == policy and r["rtt_mean_us"])
        if pts:
            xs = [x / 1000 if key == "background_bytes" else 100 * x for x, _ in pts]
            ax.plot(xs, [y for _, y in pts], marker="o", label=policy)
    ax.set_xlabel("background datagram (kB)" if key == "background_bytes" else "background load (%)")
    ax.set_ylabel("round trip, mean (µs)")
    ax.set_yscale("log")
    ax.set_title(f"seed 002, {figure}: contention at {FIGURES[figure]['scenario']}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    import io

    from rtnetlab.io import output

    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    output.atomic_write(path, buf.getvalue())


def write_csv(rows: list[dict], path: Path) -> None:
    import csv
    import io

    from rtnetlab.io import output

    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=ROW_KEYS)
    w.writeheader()
    for r in rows:
        w.writerow({k: "" if r[k] is None else r[k] for k in ROW_KEYS})
    output.atomic_write(path, buf.getvalue())
