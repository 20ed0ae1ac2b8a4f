"""What the commands write and how they end, as users run them: files never destroyed (inputs,
FIFOs, devices, half-written temporaries), exit codes and JSON errors for pipelines, infinite
bounds written correctly in every format, and simulated maxima set beside their bounds.

Networks used (numbers derived by hand):

* OVER (WOPANet XML, 10 Mb/s links, no technological latency): flows F1..F5 each send a
  1000-byte payload every 1 ms, a 1000 + 67 = 1067-byte frame on the wire = 8536 bits, i.e.
  8.536 Mb/s. F1 and F2 leave S1 for D1, F3 (S2) and F4 (S3) go to D2, F5 goes S4 -> D3. Ports
  S1:0, SW:5 (to D1) and SW:6 (to D2) carry two flows, 17.072 Mb/s on 10 Mb/s: 170.7 %, overloaded;
  F1..F4 are unbounded, F1, F2, F3 with a 4 ms deadline, F4 without one. F5 crosses S4:0 and
  SW:7 alone: WOPANet's rule gives 8536 / 10e6 = 853.6 us at S4:0, a burst of
  8536 + 8.536e6 x 853.6e-6 = 15822.3 b and 1582.23 us at SW:7, 2435.83 -> 2436 us.
* TINY (YAML, 100 Mb/s): one VL of 1000-byte frames (1020 B on the wire, 81.6 us per hop) from
  ES1 through SW to ES2: no bound or simulated latency can be below 2 x 81.6 = 163.2 us, so a
  100 us deadline is missed by both.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import signal
import stat
import subprocess
import threading
import time
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

REPO = Path(__file__).resolve().parents[1]
CLI = REPO / ".venv" / "bin" / "rtnetlab"
SEED002 = REPO / "examples" / "seed002_four_vls.yaml"

OVER = """<?xml version="1.0" encoding="UTF-8"?>
<elements>
   <network name="over" overhead="67" shortest-path-policy="DIJKSTRA" technology="AFDX"
            transmission-capacity="10Mbps" x-type="FULL"/>
   <station name="S1" transmission-capacity="10Mbps"/>
   <station name="S2" transmission-capacity="10Mbps"/>
   <station name="S3" transmission-capacity="10Mbps"/>
   <station name="S4" transmission-capacity="10Mbps"/>
   <station name="D1" transmission-capacity="10Mbps"/>
   <station name="D2" transmission-capacity="10Mbps"/>
   <station name="D3" transmission-capacity="10Mbps"/>
   <switch name="SW" switching-technique="STORE_AND_FORWARD" tech-latency="0" transmission-capacity="10Mbps"/>
   <link from="S1" fromPort="0" name="L1" to="SW" toPort="1"/>
   <link from="S2" fromPort="0" name="L2" to="SW" toPort="2"/>
   <link from="S3" fromPort="0" name="L3" to="SW" toPort="3"/>
   <link from="S4" fromPort="0" name="L4" to="SW" toPort="4"/>
   <link from="SW" fromPort="5" name="L5" to="D1" toPort="0"/>
   <link from="SW" fromPort="6" name="L6" to="D2" toPort="0"/>
   <link from="SW" fromPort="7" name="L7" to="D3" toPort="0"/>
   <flow deadline="4" max-payload="1000" min-payload="100" name="F1" period="1"
         source="S1"><target name="D1"/></flow>
   <flow deadline="4" max-payload="1000" min-payload="100" name="F2" period="1"
         source="S1"><target name="D1"/></flow>
   <flow deadline="4" max-payload="1000" min-payload="100" name="F3" period="1"
         source="S2"><target name="D2"/></flow>
   <flow max-payload="1000" min-payload="100" name="F4" period="1"
         source="S3"><target name="D2"/></flow>
   <flow deadline="4" max-payload="1000" min-payload="100" name="F5" period="1"
         source="S4"><target name="D3"/></flow>
</elements>
"""
OVERLOADED = {"S1:0", "SW:5", "SW:6"}
REASON_S1 = "S1:0 overloaded: 17.07 Mb/s offered to a 10 Mb/s link (170.7%)"
REASON_SW6 = "SW:6 overloaded: 17.07 Mb/s offered to a 10 Mb/s link (170.7%)"

TINY = """name: tiny
end_systems: [{name: ES1}, {name: ES2}]
switches: [{name: SW}]
links: [{from: ES1, to: SW}, {from: SW, to: ES2}]
flows:
  - {name: VL1, type: virtual_link, bag: 1ms, lmin: 1000B, lmax: 1000B, source: ES1, destinations: [ES2],
     deadline: DEADLINE}
"""


def run(cwd: Path, *args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    res = subprocess.run([str(CLI), *map(str, args)], cwd=cwd, capture_output=True, text=True,
                         timeout=timeout)
    assert "Traceback" not in res.stdout + res.stderr, res.stderr
    return res


@pytest.fixture
def over(tmp_path: Path) -> Path:
    path = tmp_path / "over.xml"
    path.write_text(OVER)
    return path


def tiny(tmp_path: Path, deadline: str = "10ms", name: str = "tiny.yaml") -> Path:
    path = tmp_path / name
    path.write_text(TINY.replace("DEADLINE", deadline))
    return path


def files(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


def read_fifo(path: Path) -> tuple[threading.Thread, dict]:
    """A reader of a FIFO in a thread (a writer blocks until one opens it)."""
    got: dict = {}

    def read() -> None:
        got["data"] = path.read_bytes()

    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t, got


# A. Never destroy a user's file


def test_report_never_overwrites_its_input(tmp_path: Path) -> None:
    """`report net.json -o net.html` used to write the report's JSON data over net.json."""
    src = tmp_path / "net.json"
    assert run(tmp_path, "convert", SEED002, src).returncode == 0
    before = src.read_bytes()
    res = run(tmp_path, "report", "net.json", "-o", "net.html", "--duration", "10ms")
    assert res.returncode == 2
    assert res.stderr.splitlines() == [
        "-o: net.html: its JSON data would go to net.json, which is an input of this command; choose "
        "another name (e.g. -o net-report.html)"
    ]
    assert src.read_bytes() == before and files(tmp_path) == ["net.json"]
    # The suggested name works, every file written is named, and a missing directory is created.
    res = run(tmp_path, "report", "net.json", "-o", "out/net-report.html", "--duration", "10ms")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[:4] == ["created directory out", "wrote out/net-report.html",
                                          "wrote out/net-report.csv", "wrote out/net-report.json"]
    assert files(tmp_path / "out") == ["net-report.csv", "net-report.html", "net-report.json"]
    assert src.read_bytes() == before


def test_an_output_is_never_an_input_nor_another_output(tmp_path: Path) -> None:
    src = tmp_path / "net.yaml"
    src.write_text(SEED002.read_text())
    before = src.read_bytes()
    cases = [
        (["convert", "net.yaml", "net.yaml"], "net.yaml: is an input of this command"),
        (["configure", "afdx", "net.yaml", "-o", "net.yaml"], "-o: net.yaml: is an input of this command"),
        (["analyze", "net.yaml", "-o", "./net.yaml", "--format", "json"], "-o: net.yaml: is an input"),
        (["simulate", "net.yaml", "--trace", "x.out", "--histograms", "x.out"],
         "--histograms: x.out: is also the output of --trace"),
    ]
    for args, message in cases:
        res = run(tmp_path, *args)
        assert res.returncode == 2, args
        assert len(res.stderr.splitlines()) == 1 and res.stderr.startswith(message), res.stderr
    assert src.read_bytes() == before and files(tmp_path) == ["net.yaml"]


def test_fifos_and_devices_are_written_into_not_replaced(tmp_path: Path) -> None:
    """A rename over a FIFO or /dev/null would replace it with a plain file (as root, /dev/null
    itself); every writer writes into them instead."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for args in (["analyze", SEED002, "-o", fifo, "--format", "json"],
                 ["simulate", SEED002, "--duration", "20ms", "--trace", fifo],
                 ["simulate", SEED002, "--duration", "20ms", "--histograms", fifo]):
        reader, got = read_fifo(fifo)
        res = run(tmp_path, *args)
        assert res.returncode == 0, res.stderr
        assert stat.S_ISFIFO(fifo.stat().st_mode), f"{args[0]} replaced the FIFO"
        reader.join(10)
        assert got["data"], "the reader of the FIFO got the output"
    assert got["data"].startswith(b"flow,destination,plane,upper_us,count\n")
    assert files(tmp_path) == ["pipe"]
    null = Path("/dev/null")
    for args in (["analyze", SEED002, "-o", null, "--format", "csv"],
                 ["simulate", SEED002, "--duration", "5ms", "--trace", null]):
        res = run(tmp_path, *args)
        assert res.returncode == 0, res.stderr
        assert stat.S_ISCHR(null.stat().st_mode), "/dev/null is still the device"
        assert "wrote /dev/null" in res.stdout


def test_a_replaced_file_keeps_its_mode_and_links_stay(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    res = run(tmp_path, "analyze", SEED002, "-o", link)
    assert res.returncode == 0, res.stderr
    assert link.is_symlink() and json.loads(real.read_text())["method"] == "best"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert files(tmp_path) == ["link.json", "real.json"]


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "big.json"
    subprocess.run([str(CLI), "generate", "afdx", "--vls", "2000", "--switches", "8", "-o", str(path)],
                   check=True, capture_output=True)
    return path


def start(args: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [str(CLI), *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # A job started in the background inherits SIGINT ignored; a terminal's Ctrl-C is not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def wait_for_cpu(p: subprocess.Popen, seconds: float) -> None:
    """Wait until the process has used `seconds` of CPU: a fixed sleep let a loaded host interrupt
    it before it had simulated enough for its trace to take a while to write."""
    tick = os.sysconf("SC_CLK_TCK")
    deadline = time.monotonic() + 120
    while True:
        fields = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()
        if (int(fields[11]) + int(fields[12])) / tick >= seconds:  # utime + stime
            return
        assert p.poll() is None, "finished before it was interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_second_ctrl_c_while_the_trace_is_written_leaves_nothing(big: Path, tmp_path: Path) -> None:
    """First Ctrl-C: the run stops and the trace of what was simulated is being written; a second
    one while it is written (its temporary file exists) abandons it: no trace, no temporary file,
    the measurements still printed, exit 130."""
    p = start(["simulate", str(big), "--duration", "3600s", "--trace", "t.pcapng", "--trace-limit", "3000000",
               "--json"], tmp_path)
    wait_for_cpu(p, 3)
    p.send_signal(signal.SIGINT)
    deadline = time.monotonic() + 60
    while not any(n.endswith(".tmp") for n in os.listdir(tmp_path)):
        assert p.poll() is None, "finished before the trace was written"
        assert time.monotonic() < deadline
        time.sleep(0.005)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "Traceback" not in err
    assert os.listdir(tmp_path) == [], "neither the trace nor its temporary file is left"
    report = json.loads(out)
    assert report["interrupted"] is True and report["interrupted_by"] == "SIGINT"
    assert report["stats"]["trace_written"] is False and report["stats"]["frame_hops"] > 0
    assert "warning: --trace: t.pcapng: not written (interrupted while writing it; nothing left behind)" \
        in report["warnings"]


def test_sigterm_stops_like_ctrl_c_with_143(big: Path, tmp_path: Path) -> None:
    p = start(["simulate", str(big), "--duration", "3600s", "--histograms", "h.csv", "--json"], tmp_path)
    wait_for_cpu(p, 2)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    report = json.loads(out)
    assert report["interrupted_by"] == "SIGTERM" and 0 < report["stats"]["simulated_us"] < 3600e6
    # What was measured is still written, whole.
    assert files(tmp_path) == ["h.csv"]
    assert (tmp_path / "h.csv").read_text().startswith("flow,destination,plane,upper_us,count\n")


def test_analyze_output_format_by_extension(tmp_path: Path) -> None:
    """`analyze -o file` used to ignore -o without --format (exit 0, nothing written)."""
    assert run(tmp_path, "analyze", SEED002, "-o", "r.json").returncode == 0
    assert json.loads((tmp_path / "r.json").read_text())["method"] == "best"
    assert run(tmp_path, "analyze", SEED002, "-o", "r.csv").returncode == 0
    assert (tmp_path / "r.csv").read_text().splitlines()[0].startswith("flow,destination,plane,delay_us")
    assert run(tmp_path, "analyze", SEED002, "-o", "r.xml").returncode == 0
    assert ET.parse(tmp_path / "r.xml").getroot().tag == "results"
    # --format wins over the extension.
    assert run(tmp_path, "analyze", SEED002, "-o", "r.out", "--format", "json").returncode == 0
    json.loads((tmp_path / "r.out").read_text())
    before = files(tmp_path)
    for args, message in [
        (["-o", "r.txt"], "-o: r.txt: unknown output type '.txt', expected .json, .csv or .xml (WOPANet "
                          "results), or give --format"),
        (["-o", "r.json", "--format", "table"], "--format table: the table is for the terminal"),
    ]:
        res = run(tmp_path, "analyze", SEED002, *args)
        assert res.returncode == 2 and res.stderr.splitlines()[0].startswith(message), res.stderr
        assert len(res.stderr.splitlines()) == 1
    res = run(tmp_path, "analyze", SEED002, "--json", "--format", "csv")
    assert res.returncode == 2 and json.loads(res.stdout)["errors"] == [
        {"place": "--json", "message": "prints JSON; --format csv needs -o FILE to go with it"}]
    assert files(tmp_path) == before
    # With --json and -o, stdout says what went where.
    res = run(tmp_path, "analyze", SEED002, "-o", "r2.csv", "--json")
    doc = json.loads(res.stdout)
    assert doc["files"] == {"output": "r2.csv"} and doc["format"] == "csv"


# B. Exit codes and machine interfaces


def test_fail_on_miss(tmp_path: Path, over: Path) -> None:
    # Every bound finite and within its deadline (or none): 0 with or without the gate.
    assert run(tmp_path, "analyze", SEED002, "--fail-on-miss").returncode == 0
    # A bound of at least 163.2 us against 100 us: 1 with the gate, 0 without.
    net = tiny(tmp_path, "100us")
    assert run(tmp_path, "analyze", net).returncode == 0
    res = run(tmp_path, "analyze", net, "--fail-on-miss")
    assert res.returncode == 1
    assert res.stderr.startswith("--fail-on-miss: 1 deadline failure(s): VL1 -> ES2 (A): miss")
    # Unbounded where a deadline exists fails (F1, F2, F3; F4 has no deadline), even with -o.
    res = run(tmp_path, "analyze", over, "--fail-on-miss", "-o", "r.json", "--json")
    assert res.returncode == 1
    assert json.loads(res.stdout)["verdict"]["failures"] == [
        "F1 -> D1 (A): unbounded", "F2 -> D1 (A): unbounded", "F3 -> D2 (A): unbounded"]
    assert (tmp_path / "r.json").exists(), "the results are written all the same"
    # The simulation: every frame takes at least 163.2 us, later than 100 us.
    res = run(tmp_path, "simulate", net, "--duration", "10ms", "--fail-on-miss", "--json")
    assert res.returncode == 1
    late = json.loads(res.stdout)["bounds"]["late"]
    assert [r["flow"] for r in late] == ["VL1"] and late[0]["max_us"] >= 163.2 - 1e-9
    relaxed = tiny(tmp_path, "10ms", "relaxed.yaml")
    assert run(tmp_path, "simulate", relaxed, "--duration", "10ms", "--fail-on-miss").returncode == 0
    # A CAN bus: seed 004's m3 is 50 packets of one 8-byte frame (1 ms each at 135 kbit/s), so
    # at least 50 ms from its release: a 40 ms deadline is always missed.
    can = yaml_load(REPO / "examples" / "fixed_priority" / "nss_table1.yaml")
    m3 = next(m for m in can["messages"] if m["name"] == "m3")
    m3["deadline"] = "40ms"
    (tmp_path / "can.yaml").write_text(yaml_dump(can))
    res = run(tmp_path, "simulate", "can.yaml", "--duration", "1s", "--fail-on-miss", "--json")
    assert res.returncode == 1
    late = json.loads(res.stdout)["bounds"]["late"]
    assert [r["message"] for r in late] == ["m3"] and late[0]["max_us"] >= 50_000
    (tmp_path / "can.yaml").unlink()
    # The report gates on both.
    res = run(tmp_path, "report", net, "-o", "t.html", "--duration", "10ms", "--fail-on-miss")
    assert res.returncode == 1 and "VL1 -> ES2 (A): miss" in res.stderr
    assert files(tmp_path) == sorted(["r.json", "t.csv", "t.html", "t.json", "tiny.yaml", "relaxed.yaml",
                                      "over.xml"])


def test_every_command_prints_its_errors_as_json(tmp_path: Path) -> None:
    missing = "nothere.yaml"
    cases = [
        ["validate", missing], ["info", missing], ["analyze", missing], ["simulate", missing],
        ["report", missing], ["convert", missing, "x.json"], ["configure", "afdx", missing, "-o", "x.yaml"],
        ["configure", "priorities", missing, "-o", "x.yaml"],
        ["configure", "partition", missing, "-o", "x.yaml"],
        ["configure", "dtable", missing],
    ]
    for args in cases:
        res = run(tmp_path, *args, "--json")
        assert res.returncode == 2, args
        doc = json.loads(res.stdout)
        assert doc["errors"] == [{"place": missing, "message": "no such file"}], args
        assert doc["warnings"] == [] and res.stderr == "", args
    # Option errors, the engine's diagnostics and usage errors too.
    res = run(tmp_path, "simulate", SEED002, "--duration", "0s", "--json")
    assert res.returncode == 2
    assert json.loads(res.stdout)["errors"] == [
        {"place": "--duration", "message": "must be positive, got 0s"}]
    bad = tmp_path / "bad.yaml"
    bad.write_text(SEED002.read_text().replace("bag: 4ms", "bag: 3ms", 1))
    res = run(tmp_path, "analyze", bad, "--json")
    assert res.returncode == 2
    assert json.loads(res.stdout)["errors"][0]["place"].startswith("flows[")
    res = run(tmp_path, "generate", "afdx", "--vls", "0", "--json")
    assert res.returncode == 2
    assert json.loads(res.stdout)["errors"][0]["place"] == "--vls"


def test_configure_infeasible_is_a_verdict(tmp_path: Path) -> None:
    """Every `configure`: no feasible configuration = 1 (nothing written), bad input = 2."""
    table1 = yaml_load(REPO / "examples" / "afdx_config" / "table1.yaml")
    for link in table1.get("links", []):
        link["rate"] = "1Mbps"
    table1.setdefault("defaults", {})["link_rate"] = "1Mbps"
    src = tmp_path / "slow.yaml"
    src.write_text(yaml_dump(table1))
    res = run(tmp_path, "configure", "afdx", src, "-o", "out.yaml")
    assert res.returncode == 1 and "no feasible configuration" in res.stderr
    res = run(tmp_path, "configure", "afdx", src, "-o", "out.yaml", "--json")
    assert res.returncode == 1 and json.loads(res.stdout)["feasible"] is False
    req = yaml_load(REPO / "examples" / "dtable" / "table4_requirements.yaml")
    req["classes"][1]["max_distance"] = 2
    (tmp_path / "req.yaml").write_text(yaml_dump(req))
    res = run(tmp_path, "configure", "dtable", "req.yaml", "-o", "out.yaml", "--json")
    assert res.returncode == 1 and json.loads(res.stdout)["feasible"] is False
    req["w"] = -1
    (tmp_path / "req.yaml").write_text(yaml_dump(req))
    res = run(tmp_path, "configure", "dtable", "req.yaml", "-o", "out.yaml")
    assert res.returncode == 2
    assert not (tmp_path / "out.yaml").exists()


def yaml_load(path: Path):
    import yaml

    return yaml.safe_load(path.read_text())


def yaml_dump(data) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False)


def test_fabric_runs_from_anywhere_with_progress_on_a_terminal(tmp_path: Path) -> None:
    """The default scenario is package data (it was looked up in the checkout); a terminal shows
    progress, --json shows none."""
    args = ["experiment", "fabric", "--scheduler", "drr", "--duration", "200us", "--warmup", "100us"]
    res = run(tmp_path, *args, "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)[0]["scheduler"] == "drr" and res.stderr == ""
    import pty

    leader, follower = pty.openpty()
    p = subprocess.Popen([str(CLI), *args], cwd=tmp_path, stdout=subprocess.PIPE, stderr=follower, text=True)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    out, _ = p.communicate(timeout=60)
    os.close(leader)
    assert p.returncode == 0
    assert b"fabric: scheduler drr" in seen
    assert "multimedia" in out


# C. Infinite bounds written correctly in every format


def test_unbounded_in_every_analysis_format(tmp_path: Path, over: Path) -> None:
    res = run(tmp_path, "analyze", over, "--method", "afdx-naive", "--json")
    flows = {f["flow"]: f for f in json.loads(res.stdout)["flows"]}
    assert [f["delay_us"] for f in flows.values()] == [None, None, None, None, 2436.0]
    assert all(flows[n]["status"] == "unbounded" and flows[n]["reason"] for n in ("F1", "F2", "F3", "F4"))
    # WOPANet results: Infinity (what Java writes and Java and Python parse), the reason in a
    # comment; it used to end with a TypeError and write nothing.
    res = run(tmp_path, "analyze", over, "--method", "afdx-naive", "--format", "wopanet-res", "-o", "res.xml")
    assert res.returncode == 0, res.stderr
    text = (tmp_path / "res.xml").read_text()
    root = ET.fromstring(text)
    delays = {f.get("name"): float(f.find("target").get("value")) for f in root.find("delays")}
    assert delays == {"F1": math.inf, "F2": math.inf, "F3": math.inf, "F4": math.inf, "F5": 2436.0}
    ports = {p.get("num"): p.attrib for p in root.find("backlogs/switch").findall("port")}
    assert ports["5"]["delay"] == ports["6"]["backlog"] == "Infinity" and ports["7"]["delay"] == "1582.233"
    assert root.find("backlogs/switch/total").get("percent") == "Infinity%"
    assert f"<!-- unbounded: {REASON_S1} -->" in text
    # CSV: inf, -inf slack where a deadline exists, empty where none; status and reason.
    res = run(tmp_path, "analyze", over, "--method", "afdx-naive", "--format", "csv")
    rows = {r["flow"]: r for r in csv.DictReader(io.StringIO(res.stdout))}
    assert (rows["F1"]["delay_us"], rows["F1"]["jitter_us"], rows["F1"]["slack_us"]) == ("inf", "inf", "-inf")
    assert (rows["F4"]["slack_us"], rows["F4"]["deadline_us"], rows["F4"]["status"]) == ("", "", "unbounded")
    assert float(rows["F5"]["delay_us"]) == 2436.0 and rows["F5"]["reason"] == ""
    # The terminal: `unbounded` once with its reason, never `inf`.
    res = run(tmp_path, "analyze", over, "--method", "afdx-naive")
    assert "inf" not in res.stdout.replace("Infinity", "")
    assert "unbounded (unbounded" not in res.stdout and "unbounded: unbounded" not in res.stdout
    table = [line for line in res.stdout.splitlines() if line.startswith("│ F")]
    f1 = [c.strip() for c in table[0].strip("│").split("│")]
    assert f1 == ["F1", "D1", "A", "-", "-", "4,000", "-", f"unbounded: {REASON_S1}"]
    f4 = [c.strip() for c in table[3].strip("│").split("│")]
    assert f4[-1] == f"unbounded: {REASON_SW6}" and f4[6] == "-"
    port = next(line for line in res.stdout.splitlines() if line.startswith("│ SW:6"))
    assert port.count("unbounded") == 1 and "170.7%" in port


def test_unbounded_in_the_report(tmp_path: Path, over: Path) -> None:
    res = run(tmp_path, "report", over, "-o", "r.html", "--duration", "20ms")
    assert res.returncode == 0, res.stderr
    rows = {r["flow"]: r for r in csv.DictReader((tmp_path / "r.csv").open())}
    f1 = rows["F1"]
    assert (f1["bound_us"], f1["status"], f1["reason"]) == ("inf", "unbounded", REASON_S1)
    assert float(rows["F5"]["bound_us"]) > 0
    doc = json.loads((tmp_path / "r.json").read_text())
    overloaded = doc["summary"]["violations"]["overloaded_ports"]
    assert {p["node"] + ":" + p["port"] for p in overloaded} == OVERLOADED
    page = (tmp_path / "r.html").read_text()
    row = page.split('data-flow="F3"', 1)[1].split("</tr>", 1)[0]
    assert "<td" in row and ">unbounded</td>" in row and REASON_SW6 in row


def test_imported_results_across_an_overloaded_port_are_not_bounds(tmp_path: Path, over: Path) -> None:
    """A results file with finite values where ports are overloaded (the naive sums of bursts
    over the rate, without the stability check): each such value is flagged, not taken as a bound."""
    res = run(tmp_path, "analyze", over, "--method", "afdx-naive", "-o", "res.xml")
    assert res.returncode == 0
    text = (tmp_path / "res.xml").read_text()
    (tmp_path / "ref_res.xml").write_text(text.replace('"Infinity"', '"1707.2"').replace("Infinity%", "6.5%"))
    res = run(tmp_path, "analyze", over, "--method", "afdx-naive", "--compare", "ref_res.xml", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    rows = {r["flow"]: r for r in doc["comparison"]["rows"]}
    assert [n for n, r in rows.items() if not r["reference_is_bound"]] == ["F1", "F2", "F3", "F4"]
    assert rows["F1"]["crosses_overloaded"] == ["S1:0 (170.7%)", "SW:5 (170.7%)"]
    f5 = rows["F5"]
    assert f5["reference_is_bound"] and f5["reference_delay_us"] == f5["bound_us"] == 2436
    warned = [w for w in doc["warnings"] if "cannot be bounds" in w]
    assert len(warned) == 3  # the flows' values, then ports SW:5 and SW:6
    assert warned[0].startswith("warning: ref_res.xml: 4 (flow, target) value(s) cross overloaded ports")
    # On the terminal: the warnings on stderr, the rows flagged.
    res = run(tmp_path, "analyze", over, "--method", "afdx-naive", "--compare", "ref_res.xml")
    assert "port SW:5 is overloaded (170.7% of its rate)" in res.stderr
    assert "crosses overloaded S1:0 (170.7%), SW:5 (170.7%): not a bound" in res.stdout


# D. Simulated beside bound


def test_simulate_sets_each_maximum_beside_its_bound(tmp_path: Path) -> None:
    sim = json.loads(run(tmp_path, "simulate", SEED002, "--duration", "100ms", "--json").stdout)
    bounds = json.loads(run(tmp_path, "analyze", SEED002, "--json").stdout)["flows"]
    bound = {(f["flow"], f["destination"], f["plane"]): f["delay_us"] for f in bounds}
    assert sim["bounds"]["applies"] is True and sim["bounds"]["method"] == "best"
    for f in sim["flows"]:
        assert f["bound_us"] == bound[(f["flow"], f["destination"], f["plane"])]
        assert f["max_over_bound"] == pytest.approx(f["max_us"] / f["bound_us"])
        assert 0 < f["max_over_bound"] <= 1 and f["above_bound"] is False
    res = run(tmp_path, "simulate", SEED002, "--duration", "100ms")
    assert "bound (best)" in res.stdout and "max / bound" in res.stdout
    # Left out when not asked for (an analysis of a large network costs about a second).
    doc = json.loads(run(tmp_path, "simulate", SEED002, "--duration", "10ms", "--no-bounds", "--json").stdout)
    assert doc["bounds"]["applies"] is False and doc["bounds"]["reason"] == "not asked for (--no-bounds)"
    assert all(f["bound_us"] is None for f in doc["flows"]) and doc["warnings"] == []


def test_simulate_says_when_the_bounds_do_not_apply(tmp_path: Path, over: Path) -> None:
    cut = tmp_path / "cut.yaml"
    cut_through = TINY.replace("{name: SW}", "{name: SW, switching: cut_through}")
    cut.write_text(cut_through.replace("DEADLINE", "10ms"))
    doc = json.loads(run(tmp_path, "simulate", cut, "--duration", "10ms", "--json").stdout)
    assert doc["bounds"]["applies"] is False and "cut-through switches (SW)" in doc["bounds"]["reason"]
    assert doc["flows"][0]["bound_us"] is None
    res = run(tmp_path, "simulate", cut, "--duration", "10ms")
    assert "bound (best)" not in res.stdout
    assert "bounds: not shown: cut-through switches (SW)" in res.stdout
    # The report says the same, and does not call a measurement above such a bound a violation.
    assert run(tmp_path, "report", cut, "-o", "cut.html", "--duration", "10ms").returncode == 0
    summary = json.loads((tmp_path / "cut.json").read_text())["summary"]
    assert "cut-through switches (SW)" in summary["bounds_not_guaranteed"]
    assert "Bounds not guaranteed" in (tmp_path / "cut.html").read_text()
    doc = json.loads(run(tmp_path, "simulate", tiny(tmp_path), "--duration", "10ms", "--retransmit",
                         "--json").stdout)
    assert doc["bounds"]["applies"] is False and doc["bounds"]["reason"].startswith("--retransmit")
    # An overloaded network: the bound is unbounded, with its reason.
    doc = json.loads(run(tmp_path, "simulate", over, "--duration", "20ms", "--json").stdout)
    f1 = next(f for f in doc["flows"] if f["flow"] == "F1")
    assert f1["bound_us"] is None and f1["max_over_bound"] is None and f1["bound_reason"] == REASON_S1


def test_bounds_computed_after_the_run_keep_their_failures(tmp_path: Path, monkeypatch, capsys) -> None:
    """The bounds are computed on a thread once the simulation is over: an analysis that cannot
    bound the network still becomes the reason beside the measurements, and any other error
    still reaches the caller (in its own thread)."""
    from rtnetlab import cli, model
    from rtnetlab import simulate as sim_mod
    from rtnetlab.errors import UserError

    def refused(self, *args, **kwargs):
        raise UserError("net.yaml: no analysis bounds this network")

    monkeypatch.setattr(model.Network, "analyze", refused)
    assert cli.main(["simulate", str(SEED002), "--duration", "10ms", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["bounds"]["applies"] is False
    assert doc["bounds"]["reason"] == "net.yaml: no analysis bounds this network"
    assert all(f["bound_us"] is None for f in doc["flows"])

    def broken(self, *args, **kwargs):
        raise RuntimeError("engine defect")

    monkeypatch.setattr(model.Network, "analyze", broken)
    net = model.load_file(SEED002)
    job = sim_mod.BoundsJob(net, {})
    with pytest.raises(RuntimeError, match="engine defect"):
        job.result()


def test_a_maximum_above_its_bound_is_shown_loudly(tmp_path: Path, monkeypatch, capsys) -> None:
    """A soundness bug cannot be produced on purpose: the bounds are halved here (in the process,
    through the command's entry point) to stand for one."""
    from rtnetlab import cli, model

    real = model.Network.analyze

    def halved(self, *args, **kwargs):
        report = real(self, *args, **kwargs)
        for f in report["flows"]:
            f["delay_us"] = f["delay_us"] / 2
        return report

    monkeypatch.setattr(model.Network, "analyze", halved)
    assert cli.main(["simulate", str(SEED002), "--duration", "50ms"]) == 0
    out, err = capsys.readouterr()
    assert "ABOVE BOUND" in out
    assert "SIMULATED MAXIMUM ABOVE ITS BOUND in 4 row(s)" in err and "this is a bug in rtnetlab" in err
    assert cli.main(["simulate", str(SEED002), "--duration", "50ms", "--json", "--fail-on-miss"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["bounds"]["above_bound"]) == 4 and all(f["above_bound"] for f in doc["flows"])
    assert any("SIMULATED MAXIMUM ABOVE ITS BOUND" in w for w in doc["warnings"])
