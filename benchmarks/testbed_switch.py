"""What the testbed's switches forward: frames per second through one switch port, user-space
switch (the engine's schedulers on AF_PACKET sockets) beside the kernel's (qdiscs on veth), at
100 Mbit/s and 1 Gbit/s line rates, largest and smallest frames.

    sudo .venv/bin/python benchmarks/testbed_switch.py [--seconds 2] [--json]

One end system sends a token-bucket flow through a switch to another at a fraction of line rate;
each row gives the offered and the delivered frames per second, the loss and the mean and maximum
latency. The host's own noise (the run's idle baseline) is printed beside every row. The
measured capacity a run is held to (python/rtnetlab/testbed/capacity.py) is not applied here, so
the table shows where each mode really stops. Writes benchmarks/testbed_switch_results.json.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

from rtnetlab import model
from rtnetlab.testbed import run

HERE = Path(__file__).resolve().parent


def network(rate_mbps: int, frame_bytes: int, fraction: float) -> dict:
    wire_bits = (frame_bytes + 20) * 8
    # The flow's rate is of frame bits; the wire adds preamble and gap per frame.
    rate_bps = fraction * rate_mbps * 1e6 * frame_bytes * 8 / wire_bits
    return {
        "name": f"switch-bench-{rate_mbps}-{frame_bytes}",
        "defaults": {"link_rate": f"{rate_mbps}Mbps"},
        "end_systems": [{"name": "SRC"}, {"name": "DST"}],
        "switches": [{"name": "SW", "buffer": "1MB"}],
        "links": [{"from": "SRC", "to": "SW"}, {"from": "SW", "to": "DST"}],
        "flows": [
            {
                "name": "load",
                "type": "token_bucket",
                "burst": f"{frame_bytes}B",
                "rate": f"{rate_bps:.0f}bps",
                "min_packet": f"{frame_bytes}B",
                "max_packet": f"{frame_bytes}B",
                "source": "SRC",
                "destinations": ["DST"],
            }
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for rate in (100, 1000):
        for frame in (1518, 64):
            line_fps = rate * 1e6 / ((frame + 20) * 8)
            for fraction in (0.25, 0.5, 0.95):
                for mode in ("kernel", "user"):
                    desc = network(rate, frame, fraction)
                    net = model.load_data(desc, "<benchmark>")
                    rep = run.run(
                        net,
                        desc,
                        mode=mode,
                        duration_ns=int(args.seconds * 1e9),
                        baseline_ns=300_000_000,
                        simulate=False,
                        calibrating=True,  # where each mode stops, past any measured capacity
                    )
                    f = rep["flows"][0]
                    sent = f["count"] + f["losses"]
                    rows.append(
                        {
                            "link_mbps": rate,
                            "frame_bytes": frame,
                            "mode": mode,
                            "offered_fps": round(fraction * line_fps),
                            "sent_fps": round(sent / args.seconds),
                            "delivered_fps": round(f["count"] / args.seconds),
                            "loss": f["losses"] / sent if sent else None,
                            "mean_us": f["mean_us"],
                            "max_us": f["max_us"],
                            "noise_us": rep["host"]["noise_us"],
                        }
                    )
                    r = rows[-1]
                    if not args.json:
                        print(
                            f"{rate:>5} Mbit/s {frame:>5} B {mode:>6}: offered {r['offered_fps']:>9,} fps, "
                            f"delivered {r['delivered_fps']:>9,} fps, loss {100 * (r['loss'] or 0):6.2f} %, "
                            f"mean {r['mean_us']:8.1f} us, max {r['max_us']:9.1f} us "
                            f"(host noise {r['noise_us']:.1f} us)",
                            flush=True,
                        )
    result = {"host": {"kernel": platform.release(), "cpus": __import__("os").cpu_count()}, "rows": rows}
    (HERE / "testbed_switch_results.json").write_text(json.dumps(result, indent=2) + "\n")
    if args.json:
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
