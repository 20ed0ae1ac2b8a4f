"""TSN shapers from the command line: the credit-based shaper example analysed and simulated,
bad idle slopes refused in one line, and `export tc` refusing what the kernel cannot express."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "tsn" / "cbs_avb.yaml"


def run(cli: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, timeout=300)


def test_cbs_example_bounds_by_hand(rtnetlab_cli: Path) -> None:
    # docs/TSN.md works these out: class A 2·L/I_A + L/C, class B and best effort likewise.
    res = run(rtnetlab_cli, "analyze", EXAMPLE, "--json")
    assert res.returncode == 0, res.stderr
    got = {r["flow"]: r["delay_us"] for r in json.loads(res.stdout)["flows"]}
    assert got == pytest.approx({"video": 261.655, "audio": 527.302, "backup": 40.841}, abs=1e-3)


def test_cbs_example_simulates_within_its_bounds(rtnetlab_cli: Path, tmp_path: Path) -> None:
    res = run(rtnetlab_cli, "simulate", EXAMPLE, "--duration", "20ms", "--json")
    assert res.returncode == 0, res.stderr
    sim = json.loads(res.stdout)
    analysis = json.loads(run(rtnetlab_cli, "analyze", EXAMPLE, "--json").stdout)
    bounds = {r["flow"]: r["delay_us"] for r in analysis["flows"]}
    for row in sim["flows"]:
        assert row["count"] > 0
        assert row["max_us"] <= bounds[row["flow"]]


def write(tmp_path: Path, change, example: Path = EXAMPLE) -> Path:
    net = yaml.safe_load(example.read_text())
    change(net)
    f = tmp_path / "net.yaml"
    f.write_text(yaml.safe_dump(net))
    return f


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda n: n["schedulers"]["avb"]["idle_slopes"].update(sr_b="950Mbps"),
            "schedulers.avb.idle_slopes: idle slopes sum to 1.048688Gbps, more than the rate "
            "1Gbps of port bridge:0",
        ),
        (
            lambda n: n["schedulers"]["avb"]["idle_slopes"].update(sr_b="0bps"),
            "schedulers.avb.idle_slopes.sr_b: an idle slope must be a positive rate, got 0 bit/s",
        ),
        (
            lambda n: n["classes"][1].update(priority=0),
            "schedulers.avb.idle_slopes.sr_b: shaped class 'sr_b' shares priority 0 with class "
            "'sr_a'; a credit-based shaper needs a priority of its own for each shaped class",
        ),
    ],
)
def test_bad_idle_slopes_are_one_line(rtnetlab_cli: Path, tmp_path: Path, change, message: str) -> None:
    write(tmp_path, change)
    res = subprocess.run([str(rtnetlab_cli), "validate", "net.yaml"], capture_output=True, text=True,
                         cwd=tmp_path)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    # One line per problem, not one per port running the scheduler.
    assert res.stderr.strip().splitlines() == [message]


def test_overloaded_class_is_unbounded_with_its_reason(rtnetlab_cli: Path, tmp_path: Path) -> None:
    f = write(tmp_path, lambda n: n["flows"][0].update(period="100us"))
    res = run(rtnetlab_cli, "analyze", f, "--json")
    assert res.returncode == 0, res.stderr
    video = next(r for r in json.loads(res.stdout)["flows"] if r["flow"] == "video")
    assert video["delay_us"] is None or video["delay_us"] == float("inf") or video["status"] != "ok"
    assert "idle slope" in json.dumps(video)


def test_export_tc_refuses_a_cbs_port_in_one_line(rtnetlab_cli: Path, tmp_path: Path) -> None:
    f = write(tmp_path, lambda n: n["end_systems"][0].update(scheduler="avb"))
    out = tmp_path / "tc.sh"
    res = run(rtnetlab_cli, "export", "tc", f, "--node", "talker_a", "--dev", "eth0", "-o", out)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "--node: talker_a's port runs credit-based shapers (802.1Qav) and this kernel has no cbs or "
        "taprio qdisc: no script written"
    ]
    assert not out.exists()


TAS = REPO / "examples" / "tsn" / "tas_gates.yaml"


def test_tas_example_bounds_by_hand_and_simulation(rtnetlab_cli: Path) -> None:
    # docs/TSN.md works these out from the gates' usable windows.
    res = run(rtnetlab_cli, "analyze", TAS, "--json")
    assert res.returncode == 0, res.stderr
    bounds = {r["flow"]: r["delay_us"] for r in json.loads(res.stdout)["flows"]}
    assert bounds == pytest.approx({"setpoints": 1064.911, "logs": 169.093}, abs=1e-3)
    res = run(rtnetlab_cli, "simulate", TAS, "--duration", "20ms", "--json")
    assert res.returncode == 0, res.stderr
    for row in json.loads(res.stdout)["flows"]:
        assert 0 < row["count"] and row["max_us"] <= bounds[row["flow"]]


def validate_one_line(cli: Path, tmp_path: Path, change) -> list[str]:
    write(tmp_path, change, TAS)
    res = subprocess.run([str(cli), "validate", "net.yaml"], capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 2
    return res.stderr.strip().splitlines()


def test_bad_gate_list_is_one_line(rtnetlab_cli: Path, tmp_path: Path) -> None:
    lines = validate_one_line(rtnetlab_cli, tmp_path,
                              lambda n: n["schedulers"]["gates"]["entries"][1].update(duration="800us"))
    assert lines == ["schedulers.gates.entries: durations sum to 900us, not the cycle 1ms"]


def test_a_window_shorter_than_a_frame_is_refused(rtnetlab_cli: Path, tmp_path: Path) -> None:
    def short(n):
        n["schedulers"]["gates"]["entries"] = [{"open": ["control"], "duration": "10us"},
                                               {"open": ["best_effort"], "duration": "990us"}]
    assert validate_one_line(rtnetlab_cli, tmp_path, short) == [
        "schedulers.gates.entries: the gate of class 'control' is never open for 12.304us, the time flow "
        "'setpoints''s largest frame takes on port bridge:2"
    ]


ATS = REPO / "examples" / "tsn" / "ats_ring.yaml"


def test_ats_ring_bounds_by_hand_and_simulation(rtnetlab_cli: Path) -> None:
    # docs/TSN.md: every stream 81.6 + 163.2 + 163.2 + 81.6 us on the ring, hop by hop.
    res = run(rtnetlab_cli, "analyze", ATS, "--json")
    assert res.returncode == 0, res.stderr
    bounds = {r["flow"]: r["delay_us"] for r in json.loads(res.stdout)["flows"]}
    assert bounds == pytest.approx({"a": 489.6, "b": 489.6, "c": 489.6}, abs=1e-6)
    res = run(rtnetlab_cli, "simulate", ATS, "--duration", "20ms", "--json")
    assert res.returncode == 0, res.stderr
    for row in json.loads(res.stdout)["flows"]:
        assert 0 < row["count"] and row["max_us"] <= bounds[row["flow"]]


@pytest.mark.parametrize(
    ("classes", "lines"),
    [
        ([], ["schedulers.ats.classes: must list at least one class to regulate"]),
        (
            ["control", "nobody", "control"],
            [
                "schedulers.ats.classes[1]: unknown class 'nobody'",
                "schedulers.ats.classes[2]: class 'control' is listed twice",
            ],
        ),
    ],
)
def test_bad_ats_classes_are_one_line(rtnetlab_cli: Path, tmp_path: Path, classes, lines) -> None:
    write(tmp_path, lambda n: n["schedulers"]["ats"].update(classes=classes), ATS)
    res = subprocess.run([str(rtnetlab_cli), "validate", "net.yaml"], capture_output=True, text=True,
                         cwd=tmp_path)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines() == lines


def test_export_tc_refuses_an_ats_port_in_one_line(rtnetlab_cli: Path, tmp_path: Path) -> None:
    f = write(tmp_path, lambda n: n["end_systems"][0].update(scheduler="ats"), ATS)
    out = tmp_path / "tc.sh"
    res = run(rtnetlab_cli, "export", "tc", f, "--node", "E1", "--dev", "eth0", "-o", out)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "--node: E1's port runs asynchronous traffic shaping (802.1Qcr) and this kernel has no "
        "per-flow interleaved regulator qdisc: no script written"
    ]
    assert not out.exists()


CBS_TAS = REPO / "examples" / "tsn" / "cbs_tas.yaml"


def test_gated_cbs_example_bounds_by_hand_and_simulation(rtnetlab_cli: Path) -> None:
    # docs/TSN.md ("Credit-based shapers behind gates") works these out.
    res = run(rtnetlab_cli, "analyze", CBS_TAS, "--json")
    assert res.returncode == 0, res.stderr
    bounds = {r["flow"]: r["delay_us"] for r in json.loads(res.stdout)["flows"]}
    assert bounds == pytest.approx({"video": 481.662, "audio": 953.021, "backup": 937.225}, abs=1e-3)
    res = run(rtnetlab_cli, "simulate", CBS_TAS, "--duration", "20ms", "--json")
    assert res.returncode == 0, res.stderr
    for row in json.loads(res.stdout)["flows"]:
        assert 0 < row["count"] and row["max_us"] <= bounds[row["flow"]]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda n: n["schedulers"]["avb_gated"]["idle_slopes"].update(sr_b="800Mbps"),
            "schedulers.avb_gated.idle_slopes: idle slopes sum to 1.05Gbps, more than the rate 1Gbps of "
            "port bridge:0",
        ),
        (
            lambda n: n["schedulers"]["avb_gated"]["gates"]["entries"][0].update(open=["sr_a", "sr_c"]),
            "schedulers.avb_gated.gates.entries[0].open: unknown class 'sr_c'",
        ),
        (
            lambda n: n["schedulers"]["avb_gated"]["gates"]["entries"][1].update(duration="200us"),
            "schedulers.avb_gated.gates.entries: durations sum to 450us, not the cycle 500us",
        ),
        (
            lambda n: n["schedulers"]["avb_gated"]["gates"]["entries"][0].update(open=["sr_a"]),
            "schedulers.avb_gated.gates.entries: the gate of class 'sr_b' is never open for 4.16us, the "
            "time flow 'audio''s largest frame takes on port bridge:3",
        ),
        (
            lambda n: n["schedulers"]["avb_gated"]["gates"]["entries"][0].update(duration="10us")
            or n["schedulers"]["avb_gated"]["gates"]["entries"][1].update(duration="490us"),
            "schedulers.avb_gated.gates.entries: the gate of class 'sr_a' is never open for 12.304us, the "
            "time flow 'video''s largest frame takes on port bridge:3",
        ),
    ],
)
def test_bad_gated_cbs_is_one_line(rtnetlab_cli: Path, tmp_path: Path, change, message: str) -> None:
    write(tmp_path, change, CBS_TAS)
    res = subprocess.run([str(rtnetlab_cli), "validate", "net.yaml"], capture_output=True, text=True,
                         cwd=tmp_path)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines() == [message]


def test_gated_class_over_its_gate_share_is_unbounded_with_its_reason(rtnetlab_cli: Path,
                                                                      tmp_path: Path) -> None:
    # 1518 B every 50 us is 246 Mb/s: within sr_a's idle slope (250 Mb/s) but above what its gate
    # lets it send (250 Mb/s x the usable share 0.475392 = 118.848 Mb/s).
    f = write(tmp_path, lambda n: n["flows"][0].update(period="50us"), CBS_TAS)
    res = run(rtnetlab_cli, "analyze", f, "--json")
    assert res.returncode == 0, res.stderr
    video = next(r for r in json.loads(res.stdout)["flows"] if r["flow"] == "video")
    assert video["delay_us"] is None or video["delay_us"] == float("inf")
    assert "usable share 0.475392 of its gate" in json.dumps(video)


def test_export_tc_refuses_a_gated_cbs_port_in_one_line(rtnetlab_cli: Path, tmp_path: Path) -> None:
    f = write(tmp_path, lambda n: n["end_systems"][0].update(scheduler="avb_gated"), CBS_TAS)
    out = tmp_path / "tc.sh"
    res = run(rtnetlab_cli, "export", "tc", f, "--node", "talker_a", "--dev", "eth0", "-o", out)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "--node: talker_a's port runs credit-based shapers behind a gate control list (802.1Qav with "
        "802.1Qbv) and this kernel has no cbs or taprio qdisc: no script written"
    ]
    assert not out.exists()
