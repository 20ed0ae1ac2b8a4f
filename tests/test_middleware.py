"""The middleware laboratory (seed 001A-C): statistics against hand-computed samples, the pub/sub
harness end to end on short runs (every backend, both placements), its refusals, and its
cleaning-up (no namespace, veth or process left behind, also after Ctrl-C)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from rtnetlab.middleware.stats import percentile_nearest_rank, summary

ROW_KEYS = {
    "backend",
    "subscribers",
    "payload_bytes",
    "placement",
    "count",
    "lost",
    "min_us",
    "mean_us",
    "stdev_us",
    "p99_us",
    "max_us",
}
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="two boards need root (network namespaces)")


def test_summary_of_hand_computed_samples():
    # Samples 100, 200, 300, 400 ns = 0.1 .. 0.4 us. Mean 0.25; deviations ±0.15, ±0.05; sum of
    # squares 2·0.0225 + 2·0.0025 = 0.05; sample variance 0.05/3; stdev = 0.129099...
    s = summary([400, 100, 300, 200])
    assert s["count"] == 4
    assert s["min_us"] == pytest.approx(0.1)
    assert s["max_us"] == pytest.approx(0.4)
    assert s["mean_us"] == pytest.approx(0.25)
    assert s["stdev_us"] == pytest.approx((0.05 / 3) ** 0.5)
    # Nearest rank: ceil(0.99·4) = 4th value.
    assert s["p99_us"] == pytest.approx(0.4)


def test_p99_nearest_rank_by_hand():
    # 1..200: rank ceil(0.99·200) = 198 → value 198; 1..100: rank 99 → 99; 1..150: rank
    # ceil(148.5) = 149 (never 148, nor an interpolated 148.51); one sample: itself.
    assert percentile_nearest_rank(list(range(1, 201)), 99) == 198
    assert percentile_nearest_rank(list(range(1, 151)), 99) == 149
    assert percentile_nearest_rank(list(range(1, 101)), 99) == 99
    assert percentile_nearest_rank([7], 99) == 7
    s = summary([5000])
    assert (s["count"], s["min_us"], s["stdev_us"], s["p99_us"]) == (1, 5.0, 0.0, 5.0)
    assert summary([])["mean_us"] is None


def our_leftovers(before: set[str]) -> set[str]:
    """Namespaces of finished runs (their process gone) that were not there before: other
    developers' runs still going on this host are not ours to judge."""
    from rtnetlab.testbed import netns

    return {ns for names in netns.leftovers().values() for ns in names} - before


def workers_running() -> set[str]:
    """Worker processes whose harness is gone (their parent is no `rtnetlab` process): leaked.
    Workers of a run still going (another measurement on this host) are not counted."""
    procs = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if b"rtnetlab.middleware." not in (d / "cmdline").read_bytes():
                    continue
                ppid = (d / "stat").read_text().rsplit(")", 1)[1].split()[1]
                parent = Path(f"/proc/{ppid}/cmdline").read_bytes()
            except (OSError, IndexError):
                continue
            if b"rtnetlab" not in parent or b"rtnetlab.middleware." in parent:
                procs.add(d.name)
    return procs


def children_of(pid: int) -> list[str]:
    """The worker processes of the harness `pid`."""
    kids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "stat").read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                    kids.append(d.name)
            except (OSError, IndexError):
                continue
    return kids


@pytest.fixture
def clean_host():
    """Fails when a test leaves a namespace or a worker process behind (and removes them)."""
    from rtnetlab.testbed import netns

    before_ns, before_p = set(netns.list_namespaces()), workers_running()
    yield
    left, after_p = our_leftovers(before_ns), workers_running()
    netns.remove_namespaces(left)
    for pid in after_p - before_p:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert left == set()
    assert after_p - before_p == set()


def pubsub(cli: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(cli), "middleware", "pubsub", "--noise", "0.2s", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def check_rows(doc: dict, placement: str, messages: int) -> None:
    for r in doc["rows"]:
        assert ROW_KEYS <= set(r), r
        assert r["placement"] == placement
        assert r["count"] + r["lost"] == messages * r["subscribers"]
        # A short run on a loaded host may drop a few, never most.
        assert r["count"] >= 0.9 * messages * r["subscribers"], r
        assert 0 < r["min_us"] <= r["mean_us"] <= r["p99_us"] <= r["max_us"]


def test_pubsub_every_backend_local(rtnetlab_cli, clean_host):
    p = pubsub(
        rtnetlab_cli,
        "--backends",
        "udp,zeromq,zeromq-ipc,dds,zenoh",
        "--subscribers",
        "1,2",
        "--payload",
        "16,1000",
        "--messages",
        "300",
        "--period",
        "500us",
        "--json",
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert {"kernel", "cpus", "rt_granted", "noise_us"} <= set(doc["host"])
    assert doc["skipped"] == [], doc["skipped"]
    assert [(r["backend"], r["subscribers"], r["payload_bytes"]) for r in doc["rows"]] == [
        (b, s, n) for b in ("udp", "zeromq", "zeromq-ipc", "dds", "zenoh") for s in (1, 2) for n in (16, 1000)
    ]
    check_rows(doc, "local", 300)


@needs_root
def test_pubsub_two_boards_shaped_link(rtnetlab_cli, clean_host):
    # 10,000 B of UDP payload (+8 B header) are 7 IP fragments: 6 of 1,480 B and one of 1,128 B,
    # on the wire 6·1,538 + 1,186 = 10,414 B (Ethernet, FCS, preamble, gap). HTB lets at most its
    # burst and cburst (2·1,538 B) leave at once, so at least 7,338 B wait for tokens: 587 us at
    # 100 Mbit/s, where an unshaped veth takes a few tens of us.
    p = pubsub(
        rtnetlab_cli,
        "--backends",
        "udp,zeromq,zeromq-ipc",
        "--subscribers",
        "1",
        "--payload",
        "16,10000",
        "--messages",
        "200",
        "--placement",
        "two-boards",
        "--json",
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["skipped"] and doc["skipped"][0].startswith("zeromq-ipc:")
    check_rows(doc, "two-boards", 200)
    big = [r for r in doc["rows"] if r["payload_bytes"] == 10000]
    assert big and all(r["min_us"] >= 587 for r in big), big


@pytest.mark.parametrize(
    "args, message",
    [
        (["--backends", "udp,corba"], "--backends: unknown backend 'corba'"),
        (["--subscribers", "1,x"], "--subscribers: expected comma-separated integers, got 'x'"),
        (["--payload", "8"], "--payload: each value must be at least 16, got 8"),
        (["--placement", "moon"], "--placement: expected one of local, two-boards, got 'moon'"),
        (["--period", "fast"], "--period:"),
    ],
)
def test_pubsub_refuses_bad_options(rtnetlab_cli, args, message):
    p = pubsub(rtnetlab_cli, *args)
    assert p.returncode == 2
    assert p.stderr.strip().startswith(message), p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""


def test_a_failing_backend_is_named_and_the_others_run(rtnetlab_cli, clean_host, tmp_path):
    # A stand-in `zmq` module that fails on import hides pyzmq: zeromq is reported in one line.
    (tmp_path / "zmq.py").write_text("raise ImportError('hidden by the test')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    p = subprocess.run(
        [
            str(rtnetlab_cli),
            "middleware",
            "pubsub",
            "--backends",
            "zeromq,udp",
            "--subscribers",
            "1",
            "--payload",
            "16",
            "--messages",
            "50",
            "--noise",
            "0s",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert [r["backend"] for r in doc["rows"]] == ["udp"]
    assert len(doc["skipped"]) == 1 and doc["skipped"][0].startswith("zeromq: pyzmq is not installed")
    assert "zeromq: pyzmq is not installed" in p.stderr


@needs_root
def test_ctrl_c_leaves_nothing_behind(rtnetlab_cli, clean_host):
    p = subprocess.Popen(
        [
            str(rtnetlab_cli),
            "middleware",
            "pubsub",
            "--backends",
            "udp",
            "--subscribers",
            "2",
            "--payload",
            "16",
            "--messages",
            "100000",
            "--placement",
            "two-boards",
            "--noise",
            "0s",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Interrupted while it measures (namespaces up, workers running).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not children_of(p.pid):
        time.sleep(0.1)
    assert children_of(p.pid)
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err


def test_partition_analysis_through_the_binding():
    # Seed 001B's schedule in ns: routing [0, 800 us), recorder [800, 1500 us); three stages of
    # 1 us each (routing, recorder, routing). By hand, the worst arrival is at 799.001 us: 0.999 us
    # of routing before its window closes, the last 0.001 us at 1500 us, the recorder at 2300 us
    # (done 2301), routing again at 3000 us (done 3001): 3001 - 799.001 = 2201.999 us, extra
    # 2198.999 us over the 3 us of work. Compositional: 701 + 801 + 701 = 2203 us.
    from rtnetlab.middleware.partitions import analysis

    a = analysis(1_500_000, [("routing", 800_000), ("recorder", 700_000)], 1000)
    assert a["chain"]["worst"] == 2_201_999
    assert a["chain"]["worst_phase"] == 799_001
    assert a["chain"]["compositional"] == 2_203_000
    assert a["service_time"] == [701_000, 801_000]


@needs_root
def test_partitions_five_scenarios_and_the_bound(rtnetlab_cli, clean_host):
    p = subprocess.run(
        [str(rtnetlab_cli), "middleware", "partitions", "--requests", "200", "--noise", "0.3s", "--json"],
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert [r["scenario"] for r in doc["rows"]] == [
        "NETWORK",
        "TRADITIONAL DDS",
        "SINGLE DDS PARTITION",
        "TRADITIONAL DDS WITH ROUTING",
        "PARTITIONED DDS WITH ROUTING",
    ]
    for r in doc["rows"]:
        assert {"scenario", "count", "min_us", "mean_us", "max_us", "stdev_us", "p99_us"} <= set(r)
        assert r["count"] + r["lost"] == 200 and r["count"] >= 190
    part = doc["rows"][-1]
    # The property: measured maximum within the analysis's bound plus the measured noise.
    assert part["max_us"] <= part["bound_us"] + part["noise_us"], part
    assert "bound_us" not in doc["rows"][0]
    assert doc["dispatcher"]["switches"] > 0


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--windows", "routing=800us"],
            "--windows: expected the windows of routing and recorder, got routing",
        ),
        (
            ["--windows", "routing:800us,recorder=700us"],
            "--windows: expected name=duration, got 'routing:800us'",
        ),
        (["--major-frame", "1ms"], "--major-frame: 1ms is shorter than the windows' 1500us"),
        (["--payload", "4000"], "--payload: must be in [16, 1400] bytes"),
    ],
)
def test_partitions_refuses_bad_options(rtnetlab_cli, args, message):
    p = subprocess.run(
        [str(rtnetlab_cli), "middleware", "partitions", *args], capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 2
    assert p.stderr.strip().startswith(message), p.stderr
    assert "Traceback" not in p.stderr


def test_reqresp_ratios_by_hand():
    # Native UDP echo mean 100 us, virtualised 250 us: overhead (250 - 100)/100 = 150 %, deadline
    # share at 10 ms = 150 us / 10,000 us = 1.5 %. DDS native 400 us: middleware share
    # (400 - 100)/400 = 75 %.
    from rtnetlab.middleware.reqresp import ratios

    def row(backend, server, mean):
        return {
            "backend": backend,
            "server": server,
            "payload_bytes": 64,
            "busy_us": 0.0,
            "count": 10,
            "mean_us": mean,
            "max_us": mean,
        }

    [d] = ratios(
        [row("udp-echo", "native", 100.0), row("udp-echo", "virtualised", 250.0), row("dds", "native", 400.0)]
    )
    assert d["udp-echo_overhead"] == pytest.approx(1.5)
    assert d["udp-echo_deadline_share_10ms"] == pytest.approx(0.015)
    assert d["middleware_share_native"] == pytest.approx(0.75)
    assert "dds_overhead" not in d and "middleware_share_virtualised" not in d


def cgroups_left() -> list[str]:
    return sorted(
        p.name
        for root in (Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup"))
        if root.is_dir()
        for p in root.glob("rtnl-*-vm")
    )


@needs_root
def test_reqresp_native_and_virtualised(rtnetlab_cli, clean_host):
    before = cgroups_left()
    p = subprocess.run(
        [
            str(rtnetlab_cli),
            "middleware",
            "reqresp",
            "--requests",
            "100",
            "--payload",
            "64,512",
            "--busy",
            "0us,100us",
            "--noise",
            "0s",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["skipped"] == []
    assert len(doc["rows"]) == 2 * 2 * 2 * 2
    for r in doc["rows"]:
        assert r["count"] + r["lost"] == 100 and r["count"] >= 95, r
        # A reply waits at least for the server's busy work.
        assert r["min_us"] >= r["busy_us"]
    assert {d["payload_bytes"] for d in doc["ratios"]} == {64, 512}
    assert all("middleware_share_native" in d and "dds_overhead" in d for d in doc["ratios"])
    assert cgroups_left() == before


@needs_root
def test_reqresp_ctrl_c_removes_the_cgroup(rtnetlab_cli, clean_host):
    before = cgroups_left()
    p = subprocess.Popen(
        [
            str(rtnetlab_cli),
            "middleware",
            "reqresp",
            "--requests",
            "100000",
            "--backends",
            "udp-echo",
            "--noise",
            "0s",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and cgroups_left() == before:
        time.sleep(0.1)
    assert cgroups_left() != before
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert cgroups_left() == before


@needs_root
def test_cwalker_mappings(rtnetlab_cli, clean_host):
    # AVI receives guidance, brake and haptic every 10 ms and route every 100 ms: 310 messages a
    # second, so about 310 in the 1 s measured after the 1 s warm-up of a 2 s run.
    p = subprocess.run(
        [
            str(rtnetlab_cli),
            "middleware",
            "cwalker",
            "--backends",
            "udp,zeromq",
            "--mappings",
            "1,3",
            "--duration",
            "2s",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert [(r["backend"], r["mapping"]) for r in doc["rows"]] == [
        ("udp", 1),
        ("udp", 3),
        ("zeromq", 1),
        ("zeromq", 3),
    ]
    for r in doc["rows"]:
        assert 280 <= r["count"] <= 340, r
        assert 0 < r["min_us"] <= r["mean_us"] <= r["max_us"]
    assert len(doc["paper"]) == 9


def test_cwalker_refuses_bad_mapping(rtnetlab_cli):
    p = subprocess.run(
        [str(rtnetlab_cli), "middleware", "cwalker", "--mappings", "4"], capture_output=True, text=True
    )
    assert p.returncode == 2 and p.stderr.strip() == "--mappings: expected 1, 2 or 3, got 4"


def test_ddsperf_output_parsed_by_hand():
    # Two per-second lines of ddsperf's ping: counts 900 and 100, means 20 and 40 us: weighted mean
    # (900·20 + 100·40)/1000 = 22 us; min over lines 10, worst p99 80, max 200.
    from rtnetlab.middleware.ddsperf import parse

    text = (
        "[1] 1.000  vm:2 size 100 mean 20.000us min 10.000us 50% 19.000us 90% 25.000us 99% 50.000us "
        "max 90.000us cnt 900\n[1] 1.000  rss:7.4MB vcsw:1882\n"
        "[1] 2.000  vm:2 size 100 mean 40.000us min 12.000us 50% 39.000us 90% 45.000us 99% 80.000us "
        "max 200.000us cnt 100\n"
    )
    assert parse(text) == {
        "count": 1000,
        "rtt_mean_us": pytest.approx(22.0),
        "rtt_min_us": 10.0,
        "rtt_p99_us": 80.0,
        "rtt_max_us": 200.0,
    }
    assert parse("no statistics") is None


def test_ddsperf_cross_check_beside_the_dds_rows(rtnetlab_cli, clean_host):
    import shutil

    if shutil.which("ddsperf") is None:
        pytest.skip("ddsperf (cyclonedds-tools) is not installed")
    p = pubsub(
        rtnetlab_cli,
        "--backends",
        "dds",
        "--subscribers",
        "1",
        "--payload",
        "16",
        "--messages",
        "200",
        "--json",
    )
    assert p.returncode == 0, p.stderr
    cross = json.loads(p.stdout)["ddsperf"]
    assert cross["available"], cross
    [row] = cross["rows"]
    assert row["payload_bytes"] == 16 and row["count"] > 0
    assert 0 < row["rtt_min_us"] <= row["rtt_mean_us"] <= row["rtt_max_us"]
