"""The testbed on real frames: namespaces, veth pairs, kernel ports and the user-space switch.

These tests need root (CI has it). Each leaves `ip netns list`, the host's links and the
processes it started exactly as it found them, also when interrupted by SIGINT mid-run. Runs are
short (about 1.5 s measured) and assert properties only: every route measured without loss,
measured maximum (less each frame's host delay) within bound + the host's idle noise, orderings;
never an absolute time.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.needs_root(reason="the testbed needs root (network namespaces)")

# Four end systems, two static-priority switches, 100 Mbit/s: every end system sends, a multicast
# VL reaches two destinations, two classes. Bounds (best) are a few hundred us.
PRIORITY_NET = {
    "name": "tb-two-switches",
    "defaults": {"link_rate": "100Mbps"},
    "classes": [{"name": "rt", "priority": 0}, {"name": "be", "priority": 1}],
    "end_systems": [{"name": n} for n in ("ES1", "ES2", "ES3", "ES4")],
    "switches": [
        {"name": "SW1", "scheduler": "static_priority"},
        {"name": "SW2", "scheduler": "static_priority"},
    ],
    "links": [
        {"from": "ES1", "to": "SW1"},
        {"from": "ES2", "to": "SW1"},
        {"from": "SW1", "to": "SW2"},
        {"from": "SW2", "to": "ES3"},
        {"from": "SW2", "to": "ES4"},
    ],
    "flows": [
        {
            "name": "VL1",
            "type": "virtual_link",
            "id": 1,
            "bag": "1ms",
            "lmin": "64B",
            "lmax": "570B",
            "source": "ES1",
            "destinations": ["ES3"],
            "class": "rt",
        },
        {
            "name": "VL2",
            "type": "virtual_link",
            "id": 2,
            "bag": "2ms",
            "lmin": "64B",
            "lmax": "1518B",
            "source": "ES2",
            "destinations": ["ES3", "ES4"],
            "class": "be",
        },
        {
            "name": "VL3",
            "type": "virtual_link",
            "id": 3,
            "bag": "4ms",
            "lmin": "64B",
            "lmax": "1000B",
            "source": "ES3",
            "destinations": ["ES1"],
            "class": "rt",
        },
        {
            "name": "VL4",
            "type": "virtual_link",
            "id": 4,
            "bag": "2ms",
            "lmin": "64B",
            "lmax": "800B",
            "source": "ES4",
            "destinations": ["ES2"],
            "class": "be",
        },
    ],
}


def host_state() -> dict:
    """What a run must leave as it found: namespaces, the host's links, and the testbed's processes."""
    procs = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes()
            except OSError:
                continue
            # The program itself, not any command naming it (`cargo build -p rtnetlab-testbed`
            # of a build running beside the tests is not a testbed process).
            program = Path(cmd.split(b"\0", 1)[0].decode(errors="replace")).name
            if program in ("rtnetlab-testbed", "dumpcap"):
                procs.add(d.name)
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return {
        "netns": subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout,
        "links": sorted(line.split(":")[1].strip() for line in links.splitlines()),
        "processes": procs,
    }


def _run_leftovers(before: dict) -> dict:
    """What a finished run left behind: namespaces whose run's process is gone and testbed
    processes outside any live run's namespaces, among those that appeared since `before`.

    Another run alive on the same host (a second test session) keeps its own namespaces and
    processes; they are neither this test's leftovers nor this test's to remove.
    """
    from rtnetlab.testbed import netns

    dead = {ns for names in netns.leftovers().values() for ns in names}
    namespaces = sorted(dead - set(before["netns"].split()))
    live = set(netns.list_namespaces()) - dead
    procs = []
    for pid in sorted(host_state()["processes"] - before["processes"]):
        where = subprocess.run(["ip", "netns", "identify", pid], capture_output=True, text=True)
        if where.stdout.strip() not in live:
            procs.append(pid)
    return {"namespaces": namespaces, "processes": procs}


@pytest.fixture
def unchanged_host():
    """Fails the test when its run left anything behind (and cleans that up after a failure)."""
    before = host_state()
    yield
    after = host_state()
    left = _run_leftovers(before)
    if left["namespaces"] or left["processes"]:
        subprocess.run(["ip", "netns", "list"])  # for the log
        from rtnetlab.testbed import netns

        netns.remove_namespaces(left["namespaces"])
    assert after["links"] == before["links"], "the host's own links changed"
    assert left == {"namespaces": [], "processes": []}


def write(tmp_path: Path, net: dict, name: str = "net.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(net))
    return p


def run_testbed(cli: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(cli), "testbed", *args], capture_output=True, text=True, timeout=timeout)


def _run_priority_net(cli: Path, f: Path, switch: str) -> dict:
    args = ("--duration", "1500ms", "--baseline", "500ms", "--switch", switch, "--json")
    p = run_testbed(cli, "run", str(f), *args)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.mark.parametrize("switch", ["kernel", "user"])
def test_every_route_within_bound_plus_noise(tmp_path, rtnetlab_cli, unchanged_host, switch):
    f = write(tmp_path, PRIORITY_NET)
    r = _run_priority_net(rtnetlab_cli, f, switch)
    # A stall the run did not see (inside the kernel) can still put one route above; a model error
    # would do it again: the property must hold on a second run when the first saw one.
    if any(row["above_bound"] for row in r["flows"]):
        r = _run_priority_net(rtnetlab_cli, f, switch)
    assert r["source"] == "testbed" and r["mode"] == switch and r["time_scale"] == 1
    routes = {(f["flow"], f["destination"], f["plane"]) for f in r["flows"]}
    assert routes == {
        ("VL1", "ES3", "A"),
        ("VL2", "ES3", "A"),
        ("VL2", "ES4", "A"),
        ("VL3", "ES1", "A"),
        ("VL4", "ES2", "A"),
    }
    noise = r["host"]["noise_us"]
    assert noise is not None and noise >= 0
    # Late sends move a flow's later releases (its frames stay a BAG apart): at most that much
    # model time is lost from the 1.5 s.
    shift_ms = r["host"]["release_shift_us"] / 1000
    for row in r["flows"]:
        # 1.5 s at one frame per BAG from a random phase: 1.5 s / BAG (a frame more or less at the
        # edges, fewer by the releases moved), every one delivered (conservation), none out of order.
        bag_ms = {"VL1": 1, "VL2": 2, "VL3": 4, "VL4": 2}[row["flow"]]
        assert 1500 / bag_ms - 1 - shift_ms / bag_ms <= row["count"] <= 1500 / bag_ms + 1, row
        assert row["losses"] == 0 and row["integrity_discards"] == 0, row
        assert row["bound_us"] is not None
        # Disturbed and undisturbed frames partition the measured ones.
        assert row["undisturbed_count"] + row["disturbed_late"] + row["disturbed_stall"] == row["count"]
        assert row["verdict"] in ("within bound", "undecided on this host"), row
        if row["verdict"] == "within bound":
            # The property: undisturbed frames, less what their senders were seen to add, within
            # the bound and what each hop may have added unseen.
            assert row["undisturbed_max_less_host_us"] <= row["bound_us"] + row["allowance_us"], row
            # Nothing is taken out of a latency that is not in it: the raw maximum is at least that.
            assert row["undisturbed_max_us"] >= row["undisturbed_max_less_host_us"]
        assert row["min_us"] >= row["isolated_us"] - 1.0, row  # no frame beats the model alone
        assert row["sim_max_us"] <= row["bound_us"] + 1e-6
    for d in r["delivered"]:
        assert d["duplicates_discarded"] == 0
    ports = {(p["node"], p["port"]): p for p in r["ports"]}
    # SW1's port towards SW2 carries VL1 and VL2 (VL2 once, multicast replicated at SW2 only).
    assert ports[("SW1", "2")]["frames"] in range(int(2250 - 2 - 1.5 * shift_ms), 1500 + 750 + 3)
    assert all(p["drops"] == 0 for p in r["ports"])


def test_sigint_mid_run_leaves_nothing(tmp_path, rtnetlab_cli, unchanged_host):
    from rtnetlab.testbed import netns

    before = set(netns.list_namespaces())
    f = write(tmp_path, PRIORITY_NET)
    proc = subprocess.Popen(
        [str(rtnetlab_cli), "testbed", "run", str(f), "--duration", "20s", "--switch", "user"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Wait until the run's namespaces and processes are up, then interrupt it.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (set(netns.list_namespaces()) - before):
        time.sleep(0.05)
    assert set(netns.list_namespaces()) - before, "the run never started"
    time.sleep(2.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err


def test_priority_cuts_rt_latency_under_load_tenfold(tmp_path, rtnetlab_cli, unchanged_host):
    """Seed 002's switch-priority effect: a 570 B / 1 ms real-time VL crossing a switch port that
    two 99 Mbit/s background streams overload (FIFO with a 100 kB buffer: about 8 ms of queue)
    waits at least ten times less with static priority than with FIFO (paper: orders of
    magnitude; here the SP wait is at most one background frame, 123 us, per hop)."""

    def net(scheduler: str) -> dict:
        return {
            "name": f"seed002-{scheduler}",
            "defaults": {"link_rate": "100Mbps"},
            "classes": [{"name": "rt", "priority": 0}, {"name": "bg", "priority": 1}],
            "end_systems": [{"name": n} for n in ("RT", "BG1", "BG2", "SINK")],
            "switches": [
                {"name": "SW1", "scheduler": scheduler, "buffer": "100kB"},
                {"name": "SW2", "scheduler": scheduler, "buffer": "100kB"},
            ],
            "links": [
                {"from": "RT", "to": "SW1"},
                {"from": "BG1", "to": "SW1"},
                {"from": "BG2", "to": "SW2"},
                {"from": "SW1", "to": "SW2"},
                {"from": "SW2", "to": "SINK"},
            ],
            "flows": [
                {
                    "name": "rt",
                    "type": "virtual_link",
                    "id": 1,
                    "bag": "1ms",
                    "lmin": "570B",
                    "lmax": "570B",
                    "source": "RT",
                    "destinations": ["SINK"],
                    "class": "rt",
                },
                *[
                    {
                        "name": f"bg{k}",
                        "type": "token_bucket",
                        "burst": "1518B",
                        "rate": "99Mbps",
                        "min_packet": "1518B",
                        "max_packet": "1518B",
                        "source": f"BG{k}",
                        "destinations": ["SINK"],
                        "class": "bg",
                    }
                    for k in (1, 2)
                ],
            ],
        }

    means = {}
    for scheduler in ("fifo", "static_priority"):
        f = write(tmp_path, net(scheduler), f"{scheduler}.yaml")
        p = run_testbed(
            rtnetlab_cli, "run", str(f), "--duration", "1500ms", "--baseline", "0s", "--no-simulate", "--json"
        )
        assert p.returncode == 0, p.stderr
        r = json.loads(p.stdout)
        rt = next(x for x in r["flows"] if x["flow"] == "rt")
        assert rt["count"] > 1000
        means[scheduler] = rt["mean_us"]
        sink = next(x for x in r["ports"] if x["node"] == "SW2" and x["frames"] and x["utilisation"] > 0.9)
        assert sink["drops"] > 0  # the port is overloaded indeed
    assert means["static_priority"] * 10 <= means["fifo"], means


def test_kernel_mode_refuses_what_linux_cannot_express(tmp_path, rtnetlab_cli, unchanged_host):
    net = json.loads(json.dumps(PRIORITY_NET))
    net["schedulers"] = {"d": {"kind": "drr", "quanta": {"rt": "1518B", "be": "1518B"}}}
    net["switches"][1]["scheduler"] = "d"
    f = write(tmp_path, net)
    p = run_testbed(rtnetlab_cli, "run", str(f), "--duration", "1s")
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        "testbed: kernel mode: port SW2:0: scheduler drr cannot be expressed by this kernel's qdiscs (pfifo, "
        "bfifo, pfifo_fast, htb, tbf only): run with --switch user"
    ]


def test_user_switch_runs_drr(tmp_path, rtnetlab_cli, unchanged_host):
    """What the kernel cannot express runs in the user-space switch: the engine's DRR module."""
    net = json.loads(json.dumps(PRIORITY_NET))
    net["schedulers"] = {"d": {"kind": "drr", "quanta": {"rt": "1518B", "be": "1518B"}}}
    for s in net["switches"]:
        s["scheduler"] = "d"
    f = write(tmp_path, net)
    p = run_testbed(
        rtnetlab_cli, "run", str(f), "--duration", "1s", "--baseline", "300ms", "--switch", "user", "--json"
    )
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert all(x["losses"] == 0 and x["count"] > 200 for x in r["flows"])
    assert not r["bounds"]["above_bound"]


def test_not_root_is_one_line(tmp_path, rtnetlab_cli):
    f = write(tmp_path, PRIORITY_NET)
    p = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            str(rtnetlab_cli),
            "testbed",
            "run",
            str(f),
        ],
        capture_output=True,
        text=True,
    )
    if "Permission denied" in p.stderr and "rtnetlab" not in p.stderr.splitlines()[-1]:
        pytest.skip("the virtual environment is not readable by an unprivileged user here")
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines()[-1].startswith("testbed: needs root")


def test_down_all_removes_leftovers_only(tmp_path, rtnetlab_cli, unchanged_host):
    f = write(tmp_path, PRIORITY_NET)
    p = run_testbed(rtnetlab_cli, "up", str(f), "--json")
    assert p.returncode == 0, p.stderr
    up = json.loads(p.stdout)
    names = set(up["namespaces"].values())
    from rtnetlab.testbed import netns

    assert names <= set(netns.list_namespaces())
    # Inside: the switch's kernel forwarding and the ports' HTB trees are there.
    sw = up["namespaces"]["SW1"]
    qd = subprocess.run(["tc", "-n", sw, "qdisc", "show"], capture_output=True, text=True).stdout
    assert "htb" in qd and "clsact" in qd
    p = run_testbed(rtnetlab_cli, "down", "--all", "--json")
    assert p.returncode == 0, p.stderr
    assert names <= set(json.loads(p.stdout)["removed"])
    assert not names & set(netns.list_namespaces())


def test_seed002_datagrams_fragment_as_ip_does():
    """A UDP datagram of S bytes is ceil((S + 8) / 1480) frames: 1480 bytes of IP payload each, plus
    38 bytes of Ethernet (14 + FCS 4) and IP (20) headers; the last frame at least 64 bytes."""
    from rtnetlab.testbed.ethernet_measure import fragments

    assert fragments(100) == [146]  # 108 + 38
    assert fragments(1472) == [1518]  # 1480 exactly: one full frame
    assert fragments(1473) == [1518, 64]  # 1 byte left: 39 bytes, padded to the minimum
    assert fragments(25000) == [1518] * 16 + [1366]  # 25008 - 16 x 1480 = 1328, + 38


def test_seed002_switch_priority_holds_under_load(tmp_path, rtnetlab_cli, unchanged_host):
    """`experiment ethernet-measure`: at 90 % background of 25 KB datagrams the round trip of the
    real-time message with priority (switch and blades) is at least 2x shorter than with FIFO
    everywhere (the paper: flat under 80 % with priority, collapsing without), and every row has
    the contract's keys; the CSV and the plot are written. 2x, not more: the priority row's round
    trip is mostly the host's own latency, which a busy host raises (2.93x was measured with a
    build running beside the test); without priority the ratio is about 1."""
    p = subprocess.run(
        [
            str(rtnetlab_cli),
            "experiment",
            "ethernet-measure",
            "--figure",
            "load",
            "--loads",
            "0.9",
            "--policies",
            "switch-priority,fifo",
            "--messages",
            "1500",
            "--out-dir",
            str(tmp_path),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    rows = {x["policy"]: x for x in r["rows"]}
    assert set(rows) == {"switch-priority", "fifo"}
    for x in rows.values():
        assert x["count"] > 1000 and x["noise_us"] is not None
        assert x["rtt_min_us"] <= x["rtt_mean_us"] <= x["rtt_max_us"]
        assert x["jitter_mean_us"] is not None
    assert rows["switch-priority"]["rtt_mean_us"] * 2 <= rows["fifo"]["rtt_mean_us"], rows
    assert (tmp_path / "load.csv").read_text().count("\n") == 3
    assert (tmp_path / "load.png").stat().st_size > 1000
