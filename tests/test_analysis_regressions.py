"""Networks that once broke an analysis, kept as they were found."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "regressions"


def analyze(cli: Path, path: Path, method: str) -> dict:
    r = subprocess.run([str(cli), "analyze", str(path), "--blind", "--method", method, "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def test_blind_best_on_wrr_ports_gives_bounds_not_a_panic(rtnetlab_cli: Path, tmp_path: Path) -> None:
    # The iterated SFA with grouping met a left-over service that was not convex (within the
    # convexity test's tolerance) and the tandem convolution stopped the process; it now takes the
    # curve's convex minorant, a lower bound of a service curve and so a service curve.
    path = DATA / "blind_wrr_sfa_iter.yaml"
    best = analyze(rtnetlab_cli, path, "best")["flows"]
    assert best and all(r["delay_us"] is not None for r in best)
    # Never above a single blind method, row by row (the rows come in the same order).
    for method in ("tfa", "sfa", "sfa-iter"):
        one = analyze(rtnetlab_cli, path, method)["flows"]
        assert [(r["flow"], r["destination"]) for r in one] == [(r["flow"], r["destination"]) for r in best]
        for b, o in zip(best, one, strict=True):
            if o["delay_us"] is not None:
                assert b["delay_us"] <= o["delay_us"] * (1 + 1e-9), (b, o, method)
    # And the simulator stays within them.
    r = subprocess.run([str(rtnetlab_cli), "simulate", str(path), "--duration", "50ms", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    sim = json.loads(r.stdout)
    bound = {(b["flow"], b["destination"]): b["delay_us"] for b in best}
    rows = [row for row in sim["flows"] if (row["flow"], row["destination"]) in bound]
    assert rows
    for row in rows:
        assert row["max_us"] <= bound[(row["flow"], row["destination"])] * (1 + 1e-9), row


def test_a_diverging_cycle_leaves_the_class_above_it_bounded(rtnetlab_cli: Path) -> None:
    # The low class's bursts grow at every pass of TFA's fixed point around the ring; they
    # overflowed the curves (a panic, a traceback), and before that any divergence made every
    # bound infinite. The high class (static priority) depends on the low one only through one
    # frame of blocking: it keeps finite bounds, the low class's rows say why they have none.
    path = DATA / "diverging_ring.yaml"
    for method in ("tfa", "best"):
        r = subprocess.run([str(rtnetlab_cli), "analyze", str(path), "--method", method, "--json"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
        rows = json.loads(r.stdout)["flows"]
        high = [row for row in rows if row["flow"].startswith("H")]
        assert len(high) == 6 and all(row["delay_us"] is not None for row in high), high
        if method == "tfa":
            low = [row for row in rows if row["flow"].startswith("L")]
            assert low
            assert all(row["delay_us"] is None and "TFA does not converge" in row["reason"] for row in low)
    # The simulator, with the default bounds beside it, never exceeds the high class's.
    r = subprocess.run([str(rtnetlab_cli), "simulate", str(path), "--duration", "1s",
                        "--release", "synchronized", "--sizes", "max", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    sim = json.loads(r.stdout)
    assert sim["bounds"]["above_bound"] == []
    high = [row for row in sim["flows"] if row["flow"].startswith("H")]
    assert high and all(row["bound_us"] is not None and row["max_us"] <= row["bound_us"] for row in high)
