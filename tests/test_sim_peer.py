"""The Rust packet simulator against the SimPy peer (benchmarks/peers/simpy_afdx.py).

With synchronised releases and maximum frame sizes nothing is random, so both must give the same
latencies: every (flow, destination, plane) minimum and maximum within 1 ns per hop, the same
number of frames delivered, and the same number of frame-hops. A hand-computed case pins the
semantics both implement (store-and-forward, FIFO in release order, technological latency).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from peers.simpy_afdx import SimpyAfdx  # noqa: E402
from rtnetlab import _core, model  # noqa: E402

# Past the 128 ms hyperperiod of the generated BAGs, and on no BAG boundary (so no frame is cut
# short by the end of the run in one simulator and not in the other).
DURATION_NS = 129_500_000


def run_both(net, duration_ns: int, release: str = "synchronized", frame_sizes: str = "max"):
    config = {"duration_ns": duration_ns, "seed": 1, "release": release, "frame_sizes": frame_sizes}
    sim = net.handle.simulation(json.dumps(config))
    sim.run_until(duration_ns)
    rust = json.loads(sim.report_json())
    peer = SimpyAfdx(net.resolved(), seed=1, release=release, frame_sizes=frame_sizes)
    peer.run(duration_ns)
    return rust, peer.report()


def route_hops(resolved: dict) -> list[int]:
    return [len(r["ports"]) for f in resolved["flows"] for r in f["routes"]]


@pytest.mark.parametrize(
    "vls, switches, seed, planes",
    [(20, 2, 1, 1), (20, 2, 2, 1), (20, 2, 3, 1), (100, 4, 1, 2)],
)
def test_simpy_peer_agrees_with_rust_when_deterministic(vls, switches, seed, planes):
    net = model.load_text(_core.generate_afdx(vls, switches, seed, planes, 0))
    resolved = net.resolved()
    rust, peer = run_both(net, DURATION_NS)
    assert len(rust["flows"]) == len(peer["flows"]) == len(route_hops(resolved))
    mismatches = []
    for r, p, hops in zip(rust["flows"], peer["flows"], route_hops(resolved), strict=True):
        key = (r["flow"], r["destination"], r["plane"])
        assert key == (p["flow"], p["destination"], p["plane"])
        assert r["count"] > 0
        if r["count"] != p["count"]:
            mismatches.append(f"{key}: {r['count']} frames (rust) vs {p['count']} (simpy)")
        for what in ("min", "max"):
            rust_ns = r[f"{what}_us"] * 1e3
            if abs(rust_ns - p[f"{what}_ns"]) > hops:
                mismatches.append(f"{key} {what}: {rust_ns:.0f} ns (rust) vs {p[what + '_ns']} ns (simpy)")
    assert not mismatches, "\n".join(mismatches)
    assert rust["stats"]["frame_hops"] == peer["stats"]["frame_hops"]


def test_hand_computed_fifo_case():
    """Two VLs from ES1 to ES2 through SW at 100 Mbit/s, released together, SW latency 16 µs.

    VL_A (100 B + 20 B preamble/gap = 960 bits, 9.6 µs) goes first (release order):
    9.6 + 16 + 9.6 = 35.2 µs. VL_B (200 B -> 1760 bits, 17.6 µs) waits for A at ES1, reaches SW
    at 27.2 µs, enters its queue at 43.2 µs (A left it at 35.2 µs) and arrives at 60.8 µs.
    """
    spec = {
        "name": "hand",
        "defaults": {"link_rate": "100Mbps", "technological_latency": "0ns", "interframe_overhead": "20B"},
        "end_systems": [{"name": "ES1"}, {"name": "ES2"}],
        "switches": [{"name": "SW", "technological_latency": "16us"}],
        "links": [{"from": "ES1", "to": "SW"}, {"from": "ES2", "to": "SW"}],
        "flows": [
            {"name": "VL_A", "source": "ES1", "destinations": ["ES2"], "type": "virtual_link", "id": 1,
             "bag": "4ms", "lmin": "100B", "lmax": "100B"},
            {"name": "VL_B", "source": "ES1", "destinations": ["ES2"], "type": "virtual_link", "id": 2,
             "bag": "4ms", "lmin": "200B", "lmax": "200B"},
        ],
    }
    net = model.load_text(json.dumps(spec))
    rust, peer = run_both(net, 10_000_000)
    expected_ns = {"VL_A": 35_200, "VL_B": 60_800}
    for r, p in zip(rust["flows"], peer["flows"], strict=True):
        want = expected_ns[r["flow"]]
        assert r["count"] == p["count"] == 3
        assert round(r["min_us"] * 1e3) == round(r["max_us"] * 1e3) == want, r
        assert p["min_ns"] == p["max_ns"] == want, p
    # Two frames per BAG, two egress ports each, three BAGs (0, 4 and 8 ms).
    assert rust["stats"]["frame_hops"] == peer["stats"]["frame_hops"] == 12
