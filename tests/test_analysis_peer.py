"""afdx-naive in the engine (TFA on FIFO ports with WOPANet's rounding) against an independent
plain-Python implementation of the same rules (benchmarks/peers/afdx_naive_py.py), on generated
networks of several sizes: every (flow, destination, plane) delay must match to the µs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rtnetlab import _core, model

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from peers import afdx_naive_py  # noqa: E402


@pytest.mark.parametrize("vls,switches,seed,planes", [(20, 1, 1, 1), (200, 3, 2, 2), (1000, 8, 3, 2)])
def test_engine_matches_the_python_peer(vls, switches, seed, planes):
    net = model.load_text(_core.generate_afdx(vls, switches, seed, planes, 0))
    engine = net.analyze("afdx-naive")["flows"]
    peer = afdx_naive_py.analyze(net.resolved())["flows"]
    assert len(engine) == len(peer) >= vls
    for e, p in zip(engine, peer, strict=True):
        assert (e["flow"], e["destination"]) == (p["flow"], p["destination"])
        assert e["delay_us"] == p["delay_us"], (e, p)
