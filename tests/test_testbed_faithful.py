"""The testbed's measurements that mean something: contracts kept on the wire, time dilation, the
capacity counted per contract, interrupted runs that still report, and the newcomer's one-line
refusals, each replayed as a command with its exit code and its one line.

Runs are short; the assertions are properties (orderings, counts, bound + what the run allows),
never absolute times."""

from __future__ import annotations

import json
import signal
import struct
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from test_testbed import PRIORITY_NET, unchanged_host, write  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
COCKPIT = ROOT / "examples" / "cockpit_five_vls.yaml"
needs_root = pytest.mark.needs_root(reason="the testbed needs root (network namespaces)")


def cli(rtnetlab_cli, *args, timeout=180):
    return subprocess.run([str(rtnetlab_cli), *args], capture_output=True, text=True, timeout=timeout)


def one_line(p) -> str:
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert "Traceback" not in p.stderr
    return lines[0]


# --- what a model offers ----------------------------------------------------------------------


def test_offer_counts_one_frame_per_bag_per_vl_and_plane_once_per_port(tmp_path):
    """The issue's cockpit network offers about 20,000 frame transmissions per second at its
    contracts (the old count, a VL's byte rate in its smallest frames, said 319,762)."""
    from rtnetlab.testbed import capacity
    from rtnetlab.testbed.run import plan_of

    desc = tmp_path / "cockpit.json"
    desc.write_text(json.dumps(yaml.safe_load(COCKPIT.read_text())))
    plan = plan_of(desc)
    # Per plane: AIR_DATA 1000/s x 5 ports (ADIRU, SW1->SW2, SW2->each display, SW1->FCC),
    # FLIGHT_CONTROL 500 x 4, ENGINE 500 x 2, FLIGHT_PLAN 250 x 5, PILOT_INPUT 250 x 2.
    per_plane = 1000 * 5 + 500 * 4 + 500 * 2 + 250 * 5 + 250 * 2
    assert capacity.offered(plan) == pytest.approx(2 * per_plane)


# --- the newcomer's items: one line, exit 2 ---------------------------------------------------


@needs_root
def test_capture_on_a_file_or_where_nothing_can_be_made_is_one_line(tmp_path, rtnetlab_cli):
    net = write(tmp_path, PRIORITY_NET)
    afile = tmp_path / "afile.txt"
    afile.write_text("x")
    p = cli(rtnetlab_cli, "testbed", "run", str(net), "--duration", "1s", "--capture", str(afile))
    assert p.returncode == 2
    assert one_line(p) == f"--capture: {afile}: is not a directory"
    p = cli(rtnetlab_cli, "testbed", "run", str(net), "--duration", "1s", "--capture", "/proc/nope")
    assert p.returncode == 2
    assert one_line(p) == "--capture: /proc/nope: cannot make nope (No such file or directory)"


@needs_root
def test_duration_within_the_limit(tmp_path, rtnetlab_cli):
    net = write(tmp_path, PRIORITY_NET)
    p = cli(rtnetlab_cli, "testbed", "run", str(net), "--duration", "7200s")
    assert p.returncode == 2
    assert one_line(p) == (
        "--duration: 7200s, more than the limit of 3,600 s (raise it with --limit duration=N or "
        "RTNETLAB_LIMITS=duration=N)"
    )
    p = cli(rtnetlab_cli, "testbed", "run", str(net), "--duration", "1s", "--time-scale", "0.5")
    assert p.returncode == 2
    assert one_line(p) == "--time-scale: between 1 and 1000, got 0.5"


def test_report_refuses_another_networks_measurement(tmp_path, rtnetlab_cli):
    """`report NET --measured m.json` where m.json measured another network: one line, exit 2
    (it wrote a page with every measured cell '-' and 112 routes 'not in the model')."""
    m = tmp_path / "m.json"
    m.write_text(
        json.dumps(
            {
                "source": "testbed",
                "network": "cockpit-five-vls",
                "flows": [{"flow": "AIR_DATA", "destination": "FCC", "plane": "A", "count": 1}],
            }
        )
    )
    out = tmp_path / "out" / "r.html"
    p = cli(rtnetlab_cli, "report", str(ROOT / "examples" / "afdx_case_study.yaml"), "--measured", str(m),
            "-o", str(out))  # fmt: skip
    assert p.returncode == 2
    assert one_line(p) == (
        "--measured: a measurement of network 'cockpit-five-vls', not of 'afdx-case-study' (this description)"
    )
    assert not out.exists()


@pytest.mark.parametrize("basis", ["measured + modelled latency added", "measured"])
def test_report_says_what_the_measured_latencies_are(tmp_path, rtnetlab_cli, basis):
    """A kernel-mode measurement's latencies carry what was added from the model: the page and
    its JSON say "measured + modelled latency added", never plain "measured"."""
    m = tmp_path / "m.json"
    row = {"flow": "VL1", "destination": "ES4", "plane": "A", "count": 3, "mean_us": 160.0, "max_us": 170.0}
    m.write_text(json.dumps({"source": "testbed", "network": "seed002-four-vls", "mode": "kernel",
                             "latency_basis": basis, "flows": [row]}))  # fmt: skip
    out = tmp_path / "r.html"
    p = cli(rtnetlab_cli, "report", str(ROOT / "examples" / "seed002_four_vls.yaml"), "--measured", str(m),
            "-o", str(out))  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert f"Latencies: <strong>{basis}</strong>" in out.read_text()


# --- on real frames ---------------------------------------------------------------------------


def _epb(path: Path) -> list[tuple[int, bytes]]:
    """(timestamp ns, frame bytes) of every enhanced packet block of a little-endian pcapng file
    (dumpcap's: microsecond or nanosecond resolution, read from the interface block)."""
    data = path.read_bytes()
    out, at, unit = [], 0, 1000
    while at + 12 <= len(data):
        kind, length = struct.unpack_from("<II", data, at)
        if kind == 1:  # interface: if_tsresol (option 9)
            o = at + 16
            while o + 4 <= at + length - 4:
                code, size = struct.unpack_from("<HH", data, o)
                if code == 0:
                    break
                if code == 9:
                    r = data[o + 4]
                    unit = 10 ** (9 - r) if r < 128 else 1
                o += 4 + (size + 3) // 4 * 4
        if kind == 6:
            hi, lo, caplen = struct.unpack_from("<III", data, at + 12)
            out.append((((hi << 32) | lo) * unit, data[at + 28 : at + 28 + caplen]))
        at += length
    return out


#: The cockpit network's switches have a technological latency: kernel mode runs it only with it
#: added from the model (labelled).
ADD = {"kernel": ("--add-modelled-latency",), "user": ()}


@needs_root
def test_kernel_mode_refuses_a_switch_latency_it_cannot_realise(tmp_path, rtnetlab_cli, unchanged_host):  # noqa: F811
    """The kernel's switches forward at once and no qdisc here holds a frame: without
    --add-modelled-latency a model with a switch latency is refused in one line naming the mode
    that realises it, before anything is made."""
    p = cli(rtnetlab_cli, "testbed", "run", str(COCKPIT), "--duration", "1s", "--switch", "kernel")
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines() == [
        "testbed: kernel mode cannot realise the switches' technological latency (SW1A, SW2A, SW1B, "
        "SW2B: 16 us; no qdisc of this kernel holds a frame): --switch user realises it, "
        "--add-modelled-latency adds it to each kernel-mode figure, labelled"
    ]


@needs_root
@pytest.mark.parametrize("switch", ["kernel", "user"])
def test_no_two_frames_of_a_vl_closer_than_its_bag_on_the_wire(
    tmp_path, rtnetlab_cli, unchanged_host, switch  # noqa: F811
):
    """Each source port's capture (stamped where the link arrives): a VL's frames at least a BAG
    apart (less the veth's own jitter), whatever the senders' lateness in the run."""
    cap = tmp_path / "cap"
    p = cli(rtnetlab_cli, "testbed", "run", str(COCKPIT), "--duration", "2s", "--baseline", "200ms",
            "--switch", switch, *ADD[switch], "--capture", str(cap), "--no-simulate", "--json")  # fmt: skip
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    (folder,) = list(cap.iterdir())
    bags = {10: 1e6, 20: 2e6, 30: 2e6, 40: 4e6, 50: 4e6}
    sources = {"ADIRU", "FCC", "EEC", "FMS", "DISPLAY_L"}
    checked, short = 0, []
    for f in folder.iterdir():
        if f.name.split("_")[0] not in sources:
            continue
        last: dict[int, int] = {}
        for ts, frame in _epb(f):
            vl = int.from_bytes(frame[4:6], "big")
            baseline = frame[50] & 0x80
            if vl not in bags or baseline:
                continue
            if vl in last:
                checked += 1
                if ts - last[vl] < bags[vl] - 20_000:
                    short.append(bags[vl] - (ts - last[vl]))
            last[vl] = ts
    assert checked > 1000
    # The senders regulate their sends; what the kernel does to a frame inside the send call (the
    # stamp is taken there) is the host's: a gap shorter than the BAG by more than 20 us only
    # where the run saw a stall at least as long, and rarely (the sends were 100 us late by up
    # to milliseconds before, and the next frame then left on time).
    stalls = r["host"]["stalls"]
    assert all(x <= stalls["longest_us"] * 1000 for x in short), (short, stalls)
    assert len(short) <= 0.01 * checked, (short, stalls)


@needs_root
@pytest.mark.parametrize("switch", ["kernel", "user"])
def test_time_dilation_reports_model_time(tmp_path, rtnetlab_cli, unchanged_host, switch):  # noqa: F811
    """--time-scale 5: the cockpit network five times slower; every (flow, destination, plane)
    receives its frames (2 s of wall clock are 0.4 s of model time), no frame beats the model's
    latency of the frame alone, and the run says the scale it used."""
    p = cli(rtnetlab_cli, "testbed", "run", str(COCKPIT), "--duration", "2s", "--baseline", "500ms",
            "--switch", switch, *ADD[switch], "--time-scale", "5", "--json")  # fmt: skip
    assert p.returncode in (0,), p.stderr
    r = json.loads(p.stdout)
    assert r["time_scale"] == 5 and r["stats"]["duration_s"] == pytest.approx(0.4)
    # Kernel mode's figures say what they add from the model; user mode's are measured alone.
    if switch == "kernel":
        assert r["latency_basis"] == "measured + modelled latency added"
        assert all(row["modelled_added_us"] > 0 for row in r["flows"])
        assert any("measured + modelled latency added" in n for n in r["notes"])
    else:
        assert r["latency_basis"] == "measured"
        assert all(row["modelled_added_us"] == 0 for row in r["flows"])
    assert len(r["flows"]) == 20
    bag_ms = {"AIR_DATA": 1, "FLIGHT_CONTROL": 2, "ENGINE": 2, "FLIGHT_PLAN": 4, "PILOT_INPUT": 4}
    shift_ms = r["host"]["release_shift_us"] / 1000
    for row in r["flows"]:
        expected = 400 / bag_ms[row["flow"]]
        assert expected - 1 - shift_ms / bag_ms[row["flow"]] <= row["count"] <= expected + 1, row
        assert row["losses"] == 0
        assert row["min_us"] >= row["isolated_us"] - 1.0, row
        # What each hop may add unseen is the threshold divided by the scale.
        hops = round(row["allowance_us"] / (100 / 5))
        assert hops in (2, 3) and row["allowance_us"] == pytest.approx(hops * 20)


@needs_root
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_run_still_reports(tmp_path, rtnetlab_cli, unchanged_host, sig, code):  # noqa: F811
    """Ctrl-C or SIGTERM mid-run: the nodes stop where they are and the run prints what it
    measured, with a warning saying so (it printed nothing), exit 130 or 143."""
    from rtnetlab.testbed import netns

    before = set(netns.list_namespaces())
    f = write(tmp_path, PRIORITY_NET)
    proc = subprocess.Popen(
        [str(rtnetlab_cli), "testbed", "run", str(f), "--duration", "30s", "--baseline", "200ms",
         "--switch", "user"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (set(netns.list_namespaces()) - before):
        time.sleep(0.05)
    time.sleep(3.5)  # startup, baseline, then a second of the run
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "testbed (user mode)" in out and "VL1" in out
    what = "Ctrl-C" if sig == signal.SIGINT else "SIGTERM"
    assert f"warning: interrupted ({what}): the run covers" in err


@needs_root
def test_ethernet_measure_terminated_exits_143(tmp_path, rtnetlab_cli, unchanged_host):  # noqa: F811
    proc = subprocess.Popen(
        [str(rtnetlab_cli), "experiment", "ethernet-measure", "--figure", "load", "--loads", "0.5",
         "--policies", "fifo", "--messages", "20000", "--out-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    time.sleep(4)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == "terminated"
    assert not list(tmp_path.iterdir())  # nothing written by an interrupted experiment
