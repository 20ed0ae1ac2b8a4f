"""The simulator as users run it: `rtnetlab simulate`, its JSON contract, traces, Ctrl-C, and the
tightness of the bounds on the WOPANet samples (simulated worst case close to the bound)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
from pathlib import Path

import pytest

from rtnetlab import model
from rtnetlab.io import wopanet
from rtnetlab.simulate import run


def sim_json(cli: Path, *args: str) -> dict:
    r = subprocess.run([str(cli), "simulate", *args, "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return json.loads(r.stdout)


def test_json_contract(rtnetlab_cli, repo_root):
    report = sim_json(rtnetlab_cli, str(repo_root / "examples/seed002_four_vls.yaml"), "--duration", "50ms")
    assert {"flows", "ports", "stats"} <= report.keys()
    for f in report["flows"]:
        assert {"flow", "destination", "plane", "count", "min_us", "mean_us", "p99_us", "max_us"} <= f.keys()
        assert f["count"] > 0 and f["min_us"] <= f["mean_us"] <= f["max_us"]
        assert f["p99_us"] <= f["max_us"]
    for p in report["ports"]:
        assert {"node", "port", "max_backlog_bytes", "utilisation"} <= p.keys()
    assert {"events", "frame_hops", "wall_s"} <= report["stats"].keys()
    assert report["stats"]["frame_hops"] > 0


def test_same_seed_same_output(rtnetlab_cli, repo_root):
    case = str(repo_root / "examples/afdx_case_study.yaml")
    runs = [sim_json(rtnetlab_cli, case, "--duration", "200ms", "--seed", s) for s in ("3", "3", "4")]
    for r in runs:
        r["stats"].pop("wall_s")
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_seed002_example_by_hand(repo_root):
    """VL1 alone would take 40 + 17.6 + 10 + 17.6 + 10 + 17.6 + 40 µs (200 B frames = 1760 wire bits,
    latencies of sender, switches and receiver); synchronised releases add VL2's 400 B frame at the
    sender (33.6 µs), VL3's 500 B frame at switch 1 is sent by another source at the same time."""
    net = model.load_file(repo_root / "examples/seed002_four_vls.yaml")
    report = run(
        net, {"duration_ns": 1_900_000, "release": "synchronized", "frame_sizes": "max"}, progress=False
    )
    vl1 = next(f for f in report["flows"] if f["flow"] == "VL1")
    alone = 40 + 17.6 + 10 + 17.6 + 10 + 17.6 + 40
    assert vl1["min_us"] >= alone - 1e-9
    bound = next(f for f in net.analyze("best")["flows"] if f["flow"] == "VL1")
    assert vl1["max_us"] <= bound["delay_us"]


def test_trace_opens_in_tshark(rtnetlab_cli, tmp_path, repo_root):
    trace = tmp_path / "t.pcapng"
    case = repo_root / "examples/afdx_case_study.yaml"
    report = sim_json(rtnetlab_cli, str(case), "--duration", "20ms", "--trace", str(trace))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.pcapng"], "no temporary file left"
    r = subprocess.run(
        [
            "tshark",
            "-r",
            str(trace),
            "-T",
            "fields",
            "-e",
            "frame.interface_name",
            "-e",
            "eth.dst",
            "-e",
            "ip.dst",
            "-e",
            "frame.len",
            "-e",
            "eth.trailer",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert len(rows) == report["stats"]["frame_hops"] == report["stats"]["trace_frames"]
    assert {row[0] for row in rows} == {"A", "B"}, "one interface per plane"
    spec = net_spec(case)
    sizes = {f["id"]: (int(f["lmin"][:-1]), int(f["lmax"][:-1])) for f in spec["flows"]}
    for _iface, dst, ip, length, seq in rows:
        assert dst.startswith("03:00:00:00:")
        vl = int(dst[-5:].replace(":", ""), 16)
        assert ip == f"224.224.{vl >> 8}.{vl & 255}"
        lo, hi = sizes[vl]
        assert lo - 4 <= int(length) <= hi - 4, "captured without the FCS"
        assert 1 <= int(seq, 16) <= 255, "AFDX sequence number as the last byte"


def tshark_count(trace: Path) -> int:
    r = subprocess.run(["tshark", "-r", str(trace)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return len(r.stdout.splitlines())


def test_trace_limit_reached(rtnetlab_cli, tmp_path, repo_root):
    """The trace keeps the first N transmissions, and the output says that it was cut."""
    trace = tmp_path / "t.pcapng"
    case = str(repo_root / "examples/afdx_case_study.yaml")
    args = [case, "--duration", "20ms", "--trace", str(trace), "--trace-limit", "50"]
    report = sim_json(rtnetlab_cli, *args)
    st = report["stats"]
    assert st["frame_hops"] > 50
    assert st["trace_frames"] == 50 and st["trace_limit"] == 50 and st["trace_truncated"] is True
    assert tshark_count(trace) == 50
    assert sorted(tmp_path.iterdir()) == [trace]
    r = subprocess.run([str(rtnetlab_cli), "simulate", *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    notice = (f"warning: --trace: {trace}: first 50 of {st['frame_hops']:,} frame transmissions written "
              "(--trace-limit 50; raise it to keep more)")
    assert notice in r.stderr.splitlines()
    assert f"wrote {trace}" in r.stdout.splitlines()
    # The same warning in the JSON.
    assert notice in report["warnings"]


def test_trace_limit_not_reached(rtnetlab_cli, tmp_path, repo_root):
    trace = tmp_path / "t.pcapng"
    case = str(repo_root / "examples/afdx_case_study.yaml")
    args = [case, "--duration", "20ms", "--trace", str(trace), "--trace-limit", "100000"]
    report = sim_json(rtnetlab_cli, *args)
    st = report["stats"]
    assert st["trace_frames"] == st["frame_hops"] > 0
    assert st["trace_limit"] == 100000 and st["trace_truncated"] is False
    assert tshark_count(trace) == st["frame_hops"]
    r = subprocess.run([str(rtnetlab_cli), "simulate", *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert f"wrote {trace}" in r.stdout.splitlines()
    assert "--trace-limit" not in r.stdout + r.stderr
    # The default limit (what a laptop takes: at most 1.6 GB of pcapng), not reached either.
    st = sim_json(rtnetlab_cli, case, "--duration", "20ms", "--trace", str(trace))["stats"]
    assert st["trace_limit"] == 1_000_000 and st["trace_truncated"] is False


def test_unwritable_trace_fails_before_the_run(rtnetlab_cli, tmp_path, repo_root):
    """An hour of simulated time would take long: the error comes at once, before the run (the
    place of the trace is under a file, not a directory), with --json as the JSON error shape."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    trace = blocker / "sub" / "t.pcapng"
    case = str(repo_root / "examples/afdx_case_study.yaml")
    message = f"--trace: {trace}: {blocker} is not a directory"
    for json_opt in ([], ["--json"]):
        r = subprocess.run(
            [str(rtnetlab_cli), "simulate", case, "--duration", "3600s", "--trace", str(trace), *json_opt],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert r.returncode == 2
        assert "Traceback" not in r.stderr
        if json_opt:
            assert json.loads(r.stdout) == {"errors": [{"place": "--trace", "message": message[9:]}],
                                            "warnings": []}
        else:
            assert r.stderr.splitlines() == [message]
            assert r.stdout == ""
        assert list(tmp_path.iterdir()) == [blocker]


def test_unwritable_histograms_fail_before_the_run(rtnetlab_cli, tmp_path, repo_root):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = blocker / "h.csv"
    case = str(repo_root / "examples/afdx_case_study.yaml")
    r = subprocess.run(
        [str(rtnetlab_cli), "simulate", case, "--duration", "3600s", "--histograms", str(out)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 2
    assert r.stderr.splitlines() == [f"--histograms: {out}: {blocker} is not a directory"]
    assert list(tmp_path.iterdir()) == [blocker]


def test_cbr_workload(rtnetlab_cli, repo_root):
    """Constant bit rate at half the contract: half the frames of the periodic contract."""
    case = str(repo_root / "examples/seed002_four_vls.yaml")
    base = [case, "--duration", "100ms", "--release", "synchronized"]
    periodic = sim_json(rtnetlab_cli, *base)["stats"]["frames_released"]
    cbr = sim_json(rtnetlab_cli, *base, "--workload", "cbr", "--load", "0.5")["stats"]["frames_released"]
    assert periodic > 0 and abs(cbr - periodic / 2) <= 4
    # By default the contract's own rate.
    assert sim_json(rtnetlab_cli, *base, "--workload", "cbr")["stats"]["frames_released"] == periodic


def test_trace_limit_needs_a_trace(rtnetlab_cli, repo_root):
    case = str(repo_root / "examples/seed002_four_vls.yaml")
    r = subprocess.run(
        [str(rtnetlab_cli), "simulate", case, "--trace-limit", "10"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert r.stderr.splitlines() == ["--trace-limit: give the trace file with --trace FILE"]


def net_spec(path: Path) -> dict:
    return model.load_file(path).spec


# The command run as its entry point runs it, with the simulator's progress callback wrapped to
# write one byte to a pipe once the first slice of the run is done: the test interrupts a run
# that is simulating (not one still starting up), and waits for exactly that, not a fixed time.
_SIGNALLING_RUN = """
import contextlib, os, sys
import rtnetlab.simulate as sim

ready = int(sys.argv[1])
shown = sim._progress_bar


@contextlib.contextmanager
def signalling(show, duration_ns):
    with shown(show, duration_ns) as update:
        def first(t):
            global ready
            update(t)
            if ready >= 0:
                os.write(ready, b"r")
                os.close(ready)
                ready = -1
        yield first


sim._progress_bar = signalling
sys.argv = ["rtnetlab", *sys.argv[2:]]
from rtnetlab.command import entry
entry()
"""


def test_ctrl_c_stops_and_still_reports(rtnetlab_cli, tmp_path):
    big = tmp_path / "big.json"
    subprocess.run(
        [str(rtnetlab_cli), "generate", "afdx", "--vls", "2000", "--switches", "8", "-o", str(big)],
        check=True,
        capture_output=True,
    )
    python = rtnetlab_cli.with_name("python")
    read_end, write_end = os.pipe()
    p = subprocess.Popen(
        [str(python), "-c", _SIGNALLING_RUN, str(write_end), "simulate", str(big), "--duration", "3600s",
         "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        pass_fds=(write_end,),
        # A job started in the background inherits SIGINT ignored; a terminal's Ctrl-C is not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], 60)
        assert ready and os.read(read_end, 1) == b"r", "the run never simulated its first slice"
    finally:
        os.close(read_end)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "Traceback" not in err
    report = json.loads(out)
    assert report["interrupted"] is True
    assert 0 < report["stats"]["simulated_us"] < 3600e6
    assert report["stats"]["frame_hops"] > 0


@pytest.mark.parametrize(
    "args,message",
    [
        (["--duration", "0s"], "--duration: must be positive, got 0s"),
        (["--duration", "10"], "--duration: expected a duration with a unit"),
        (["--release", "sometimes"], "--release: expected one of random, synchronized, got 'sometimes'"),
        (["--retransmit-timeout", "0ms"], "--retransmit-timeout: must be at least 1ns, got 0ms"),
        (["--retransmit-timeout", "0.4ns"], "--retransmit-timeout: must be at least 1ns, got 0.4ns"),
        (["--retransmit"], "--retransmit: no flow has a deadline to time out on; give --retransmit-timeout"),
    ],
)
def test_bad_options(rtnetlab_cli, repo_root, args, message):
    r = subprocess.run(
        [str(rtnetlab_cli), "simulate", str(repo_root / "examples/seed002_four_vls.yaml"), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr


SMALL_SAMPLES = ["EE", "ESE", "ESSE", "ES2E_M", "ESE_F3", "3ESE", "STAR_3", "ISAE_TEST_1"]


def tightness(shared_dir: Path, name: str) -> list[tuple[str, str, float]]:
    """Per (flow, target): simulated maximum / `best` bound, with synchronised worst-case releases,
    largest frames and store-and-forward switches."""
    spec = wopanet.read(shared_dir / "oracles" / "wopanet" / f"{name}.xml")
    for sw in spec.get("switches", []):
        sw["switching"] = "store_and_forward"
    net = model.load_data(spec)
    bounds = {(f["flow"], f["destination"]): f["delay_us"] for f in net.analyze("best")["flows"]}
    report = run(
        net, {"duration_ns": 20_000_000, "release": "synchronized", "frame_sizes": "max"}, progress=False
    )
    return [
        (f["flow"], f["destination"], f["max_us"] / bounds[(f["flow"], f["destination"])])
        for f in report["flows"]
    ]


@pytest.mark.parametrize("name", SMALL_SAMPLES)
def test_bounds_are_tight_on_the_wopanet_samples(shared_dir, name):
    ratios = tightness(shared_dir, name)
    assert all(r <= 1 + 1e-9 for _, _, r in ratios), ratios
    print(name, [(f, d, round(r, 3)) for f, d, r in ratios])
    if name in ("EE", "ESE", "ESSE"):
        assert min(r for _, _, r in ratios) > 0.9, ratios


TINY = """
name: tiny
end_systems: [{name: ES1}, {name: ES2}]
switches: [{name: SW}]
links: [{from: ES1, to: SW}, {from: SW, to: ES2}]
flows:
  - {name: VL1, type: virtual_link, bag: 1ms, lmin: 64B, lmax: 1000B, source: ES1, destinations: [ES2]}
"""


def test_frame_sizes_from_a_trace(rtnetlab_cli, tmp_path):
    """Every frame 500 B from the trace: 520 B on the wire, 41.6 µs per hop, 83.2 µs end to end;
    a size above Lmax is clamped to it (1020 B on the wire: 163.2 µs)."""
    net = tmp_path / "tiny.yaml"
    net.write_text(TINY)
    sizes = tmp_path / "sizes.txt"
    sizes.write_text("# one size per frame\n500\n")
    r = sim_json(rtnetlab_cli, str(net), "--duration", "20ms", "--sizes", "trace", "--size-trace", str(sizes))
    f = r["flows"][0]
    assert f["count"] >= 19 and f["min_us"] == pytest.approx(83.2) and f["max_us"] == pytest.approx(83.2)
    sizes.write_text("500, 4000\n")
    r = sim_json(rtnetlab_cli, str(net), "--duration", "20ms", "--sizes", "trace", "--size-trace", str(sizes))
    assert r["flows"][0]["max_us"] == pytest.approx(163.2)
    sizes.write_text("500 big\n")
    bad = subprocess.run(
        [str(rtnetlab_cli), "simulate", str(net), "--sizes", "trace", "--size-trace", str(sizes)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and bad.stderr == f"{sizes}:1:5: expected frame sizes in bytes, got 'big'\n"
    # Sizes given without --sizes trace were not the ones simulated, silently.
    bad = subprocess.run(
        [str(rtnetlab_cli), "simulate", str(net), "--size-trace", str(sizes)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2
    assert bad.stderr == "--size-trace: used only with --sizes trace, got --sizes uniform\n"


def test_retransmission_on_timeout(rtnetlab_cli, tmp_path):
    """A buffer smaller than a frame loses every frame: each is sent again once its timeout has
    passed (from its emission), and the copies sent again are lost too but not resent."""
    net = tmp_path / "lossy.yaml"
    net.write_text(
        "name: lossy\n"
        "end_systems: [{name: ES1}, {name: ES2}]\n"
        "switches: [{name: SW1, buffer: 100B}]\n"
        "links: [{from: ES1, to: SW1}, {from: SW1, to: ES2}]\n"
        "flows: [{name: VL1, type: virtual_link, bag: 2ms, lmin: 200B, lmax: 200B, source: ES1,"
        " destinations: [ES2]}]\n"
    )
    base = [str(net), "--duration", "9ms", "--release", "synchronized"]
    assert sim_json(rtnetlab_cli, *base)["flows"][0]["retransmissions"] == 0
    r = sim_json(rtnetlab_cli, *base, "--retransmit-timeout", "3ms")
    # Frames at 0, 2, 4, 6, 8 ms (the regulator sends the oldest first, one per BAG): frame 0
    # (t = 0) times out at 3 ms and is resent at 4 ms, ahead of the frame released then; that one
    # leaves at 6 ms and times out at 9 ms + 1 ns, after the end. Frame at 2 ms: resent at 8 ms.
    flow = r["flows"][0]
    assert (flow["losses"], flow["retransmissions"], r["stats"]["frames_released"]) == (5, 2, 5)


def test_periodic_flow_frames_between_min_size_and_size(rtnetlab_cli, tmp_path):
    """A periodic flow's min_size (a WOPANet flow whose period is no BAG keeps its min-payload
    there) is its smallest frame in the simulator too: with --sizes min every frame is 100 B.
    By hand, one flow E1 -> S1 -> E2 at 100 Mb/s, store and forward, nothing else: two
    transmissions of (100 + 20) B = 9.6 us each, 19.2 us; of (1000 + 20) B, 163.2 us."""
    path = tmp_path / "p.yaml"
    path.write_text(
        "name: one-periodic\n"
        "end_systems: [{name: E1}, {name: E2}]\n"
        "switches: [{name: S1}]\n"
        "links: [{from: E1, to: S1}, {from: S1, to: E2}]\n"
        "flows:\n"
        "  - {name: P, type: periodic, period: 1.5ms, size: 1000B, min_size: 100B, source: E1,\n"
        "     destinations: [E2]}\n"
    )
    for sizes, latency in (("min", 19.2), ("max", 163.2)):
        row = sim_json(rtnetlab_cli, str(path), "--duration", "30ms", "--sizes", sizes)["flows"][0]
        assert (row["min_us"], row["max_us"]) == pytest.approx((latency, latency)), (sizes, row)
    uniform = sim_json(rtnetlab_cli, str(path), "--duration", "300ms", "--sizes", "uniform")["flows"][0]
    assert 19.2 - 1e-6 <= uniform["min_us"] < uniform["max_us"] <= 163.2 + 1e-6
