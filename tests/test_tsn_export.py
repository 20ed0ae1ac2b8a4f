"""`rtnetlab export taprio` and `export yang`: the synthesised gates for real devices.

This kernel has no taprio, cbs or etf qdisc, so the scripts are not run against it. Each tc
command they hold is instead handed to this host's own `tc` (iproute2) for a device that does not
exist: tc parses every option of the qdisc before it looks the device up, so a well-formed command
ends in exactly `Cannot find device "..."` and a malformed one in a usage or argument error. The
lines are also checked against the grammar of tc-taprio(8), tc-cbs(8), tc-etf(8) and tc-mqprio(8)
written out below, and the scripts are shellcheck clean.

The published IEEE 802.1 YANG modules (ieee802-dot1q-sched, -sched-bridge, -types, -dot1q-types)
are in no package this machine can install (pyang ships IETF modules only), so the instance is
checked against the structure those modules define, written out below from 802.1Qcw-2023:
gate-parameter-table under ieee802-dot1q-bridge:bridge-port, its leaves' YANG types as RFC 7951
encodes them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CLI = REPO / ".venv" / "bin" / "rtnetlab"
EXAMPLES = REPO / "examples" / "tsn"
NO_DEVICE = "rtnlnodev0"


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLI), *args], cwd=REPO, capture_output=True, text=True, timeout=300, env=env)


@pytest.fixture(scope="module")
def configured(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tsn") / "configured.yaml"
    res = run("configure", "tsn", str(EXAMPLES / "tsn_synthesis.yaml"), "-o", str(out), "--verify", "none")
    assert res.returncode == 0, res.stderr
    return out


def tc_commands(script: str) -> list[list[str]]:
    """The tc command lines of a script, continuation lines joined, "$DEV" and "$BASE_TIME" as the
    script's defaults would give them (a missing device, base time 0)."""
    joined = re.sub(r"\\\n\s*", " ", script)
    out = []
    for line in joined.splitlines():
        if line.startswith("tc "):
            line = line.replace('"$DEV"', NO_DEVICE).replace('"$BASE_TIME"', "0")
            out.append(line.split())
    return out


# The grammar of the man pages, one token at a time (a regular expression per qdisc).
NUM = r"-?\d+"
GRAMMAR = {
    "taprio": re.compile(
        r"tc qdisc replace dev \S+ parent root handle \d+ taprio"
        r" num_tc [1-8] map( \d+){16} queues( \d+@\d+)+ base-time \d+"
        r"( sched-entry S [0-9a-f]{2} \d+)+"
        r"( flags 0x2| flags 0x1 txtime-delay \d+ clockid CLOCK_TAI| clockid CLOCK_TAI)$"
    ),
    "cbs": re.compile(
        rf"tc qdisc replace dev \S+ parent \d+:\d+ cbs idleslope \d+ sendslope {NUM} hicredit \d+"
        rf" locredit {NUM} offload [01]$"
    ),
    "etf": re.compile(r"tc qdisc replace dev \S+ parent \d+:\d+ etf clockid CLOCK_TAI delta \d+( offload)?"
                      r"( skip_sock_check)?$"),
    "mqprio": re.compile(r"tc qdisc replace dev \S+ parent root handle \d+ mqprio num_tc [1-8] map( \d+){16}"
                         r" queues( \d+@\d+)+ hw [01]$"),
}


def check_grammar(cmd: list[str]) -> None:
    kind = next(k for k in GRAMMAR if k in cmd)
    assert GRAMMAR[kind].match(" ".join(cmd)), " ".join(cmd)


@pytest.mark.parametrize(
    ("node", "port", "offload"),
    [("sw1", "3", "none"), ("sw2", "1", "full"), ("plc1", None, "txtime"), ("camera", None, "none"),
     ("camera", None, "full")],
)
def test_scripts_parse_with_tc_and_the_man_pages(configured: Path, node, port, offload) -> None:
    args = ["export", "taprio", str(configured), "--node", node, "--dev", "eth0", "--offload", offload]
    res = run(*args, *(["--port", port] if port else []))
    assert res.returncode == 0, res.stderr
    script = res.stdout
    assert subprocess.run(["sh", "-n"], input=script, text=True).returncode == 0
    if shutil.which("shellcheck"):
        sc = subprocess.run(["shellcheck", "-"], input=script, capture_output=True, text=True)
        assert sc.returncode == 0, sc.stdout
    cmds = tc_commands(script)
    assert cmds, script
    for cmd in cmds:
        check_grammar(cmd)
        # The host's tc parses the options, then fails on the device alone.
        p = subprocess.run(cmd, capture_output=True, text=True)
        assert p.stderr.strip() == f'Cannot find device "{NO_DEVICE}"', (cmd, p.stderr)
    if node == "camera":
        assert any("mqprio" in c for c in cmds) and any("cbs" in c for c in cmds)
    else:
        taprio = next(c for c in cmds if "taprio" in c)
        assert {"none": "clockid", "full": "0x2", "txtime": "0x1"}[offload] in taprio
    if offload == "txtime":
        assert any("etf" in c for c in cmds)


def test_the_script_holds_the_synthesised_list(configured: Path) -> None:
    """The taprio entries are the port's gate list: intervals in order summing to the cycle, each
    mask the traffic classes of the classes the entry opens (control 2, video 1, best effort 0)."""
    data = yaml.safe_load(configured.read_text())
    sched = data["switches"][0]["ports"]["3"]["scheduler"]
    entries = data["schedulers"][sched]["entries"]
    res = run("export", "taprio", str(configured), "--node", "sw1", "--port", "3", "--dev", "eth0")
    taprio = next(c for c in tc_commands(res.stdout) if "taprio" in c)
    got = [(int(taprio[i + 2], 16), int(taprio[i + 3])) for i, t in enumerate(taprio) if t == "sched-entry"]
    tc_of = {"control": 2, "video": 1, "best_effort": 0}
    want = []
    for e in entries:
        ns = round(float(re.match(r"[\d.]+", e["duration"]).group()) * {"ns": 1, "us": 1e3, "ms": 1e6}[
            re.search(r"[a-z]+$", e["duration"]).group()])
        want.append((sum(1 << tc_of[c] for c in e["open"]), ns))
    assert got == want and sum(i for _, i in got) == 1_000_000


def test_hostile_names_stay_quoted_and_commented(configured: Path, tmp_path: Path) -> None:
    data = yaml.safe_load(configured.read_text())
    # Line breaks are refused in names by validation; a Unicode line separator is not.
    data["name"] = "net\u2028rm -rf /tmp/x; `id` $(id)"
    f = tmp_path / "hostile.yaml"
    f.write_text(yaml.safe_dump(data))
    res = run("export", "taprio", str(f), "--node", "sw1", "--port", "3", "--dev", "e$x`y")
    assert res.returncode == 0, res.stderr
    assert "\u2028" not in res.stdout and "net\\u2028rm -rf" in res.stdout
    assert all(line.startswith("#") for line in res.stdout.splitlines() if "rm -rf" in line)
    assert "DEV=${DEV:-'e$x`y'}" in res.stdout
    if shutil.which("shellcheck"):
        sc = subprocess.run(["shellcheck", "-"], input=res.stdout, capture_output=True, text=True)
        assert sc.returncode == 0, sc.stdout
    for dev in ("eth 0", "a/b", "x" * 16):
        res = run("export", "taprio", str(f), "--node", "sw1", "--port", "3", "--dev", dev)
        assert res.returncode == 2 and res.stderr.startswith("--dev:") and len(res.stderr.splitlines()) == 1


def test_refusals_are_one_line(configured: Path) -> None:
    for args, line in (
        (("--node", "drive", "--dev", "eth0"),
         "--node: drive:0 runs fifo, not a time-aware or credit-based shaper: use `rtnetlab export tc`"),
        (("--node", "sw1", "--dev", "eth0"), "--node: sw1 has 4 ports (0, 1, 2, 3): name one with --port"),
        (("--node", "nobody", "--dev", "eth0"), "--node: no node named nobody"),
        (("--node", "sw1", "--port", "9", "--dev", "eth0"), "--node: sw1 has no port 9"),
        (("--node", "sw1", "--port", "3", "--dev", "eth0", "--offload", "magic"),
         "--offload: expected none, txtime or full, got 'magic'"),
    ):
        res = run("export", "taprio", str(configured), *args)
        assert (res.returncode, res.stderr.strip()) == (2, line)


# ieee802-dot1q-sched's gate-parameter-table (802.1Qcw-2023), as RFC 7951 encodes it: uint8 and
# uint32 as JSON numbers, uint64 as a string, identityref qualified by its module, the list keyed
# by `index`.
U8, U32 = range(0, 2**8), range(0, 2**32)


def check_gate_parameter_table(t: dict) -> None:
    allowed = {"gate-enabled", "admin-gate-states", "admin-control-list", "admin-cycle-time",
               "admin-cycle-time-extension", "admin-base-time", "config-change", "queue-max-sdu-table",
               "supported-list-max", "supported-cycle-max", "supported-interval-max"}
    assert set(t) <= allowed, set(t) - allowed
    assert isinstance(t["gate-enabled"], bool) and isinstance(t["config-change"], bool)
    assert t["admin-gate-states"] in U8
    entries = t["admin-control-list"]["gate-control-entry"]
    assert [e["index"] for e in entries] == list(range(len(entries)))
    for e in entries:
        assert set(e) == {"index", "operation-name", "time-interval-value", "gate-states-value"}
        assert e["operation-name"] == "ieee802-dot1q-sched:set-gate-states"
        assert e["time-interval-value"] in U32 and e["time-interval-value"] > 0
        assert e["gate-states-value"] in U8
    cycle = t["admin-cycle-time"]
    assert set(cycle) == {"numerator", "denominator"}
    assert cycle["numerator"] in U32 and cycle["denominator"] in U32
    # The entries fill the cycle exactly: Σ intervals (ns) = numerator/denominator s.
    assert sum(e["time-interval-value"] for e in entries) * cycle["denominator"] == cycle["numerator"] * 10**9
    base = t["admin-base-time"]
    assert isinstance(base["seconds"], str) and base["seconds"].isdigit()
    assert base["nanoseconds"] in range(10**9)
    assert t["admin-cycle-time-extension"] in U32


def test_yang_instance_has_the_published_structure(configured: Path, tmp_path: Path) -> None:
    out = tmp_path / "gates.json"
    res = run("export", "yang", str(configured), "-o", str(out))
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())
    assert set(doc) == {"ietf-interfaces:interfaces"}
    interfaces = doc["ietf-interfaces:interfaces"]["interface"]
    names = [i["name"] for i in interfaces]
    assert len(set(names)) == len(names)
    data = yaml.safe_load(configured.read_text())
    gated = {f"{s['name']}:{p}" for s in data["switches"] for p in s.get("ports", {})}
    assert gated <= set(names)
    for i in interfaces:
        assert i["type"] == "iana-if-type:ethernetCsmacd"
        assert set(i) == {"name", "type", "ieee802-dot1q-bridge:bridge-port"}
        port = i["ieee802-dot1q-bridge:bridge-port"]
        assert set(port) == {"ieee802-dot1q-sched-bridge:gate-parameter-table"}
        check_gate_parameter_table(port["ieee802-dot1q-sched-bridge:gate-parameter-table"])
    # The same list as taprio's: masks and intervals.
    sw = next(i for i in interfaces if i["name"] == "sw1:3")
    t = sw["ieee802-dot1q-bridge:bridge-port"]["ieee802-dot1q-sched-bridge:gate-parameter-table"]
    res = run("export", "taprio", str(configured), "--node", "sw1", "--port", "3", "--dev", "eth0")
    taprio = next(c for c in tc_commands(res.stdout) if "taprio" in c)
    got = [(int(taprio[i + 2], 16), int(taprio[i + 3]))
           for i, tok in enumerate(taprio) if tok == "sched-entry"]
    assert got == [(e["gate-states-value"], e["time-interval-value"])
                   for e in t["admin-control-list"]["gate-control-entry"]]
    res = run("export", "yang", str(EXAMPLES / "cbs_avb.yaml"))
    assert res.returncode == 2 and "no port runs a gate control list" in res.stderr


def test_json_says_what_was_written(configured: Path, tmp_path: Path) -> None:
    """--json: the script or instance written, as one document on stdout instead of the human
    lines; an error as the JSON error document, and nothing written."""
    script = run("export", "taprio", str(configured), "--node", "sw1", "--port", "3", "--dev", "eth0").stdout
    out = tmp_path / "sw1.sh"
    res = run("export", "taprio", str(configured), "--node", "sw1", "--port", "3", "--dev", "eth0", "-o",
              str(out), "--json")  # fmt: skip
    assert (res.returncode, res.stderr) == (0, "")
    got = json.loads(res.stdout)
    assert got == {"output": str(out), "lines": len(script.splitlines()),
                   "not_expressed": got["not_expressed"], "warnings": []}  # fmt: skip
    assert out.read_text() == script
    res = run("export", "taprio", str(configured), "--node", "sw1", "--port", "3", "--dev", "eth0", "--json")
    assert json.loads(res.stdout)["script"] == script
    instance = json.loads(run("export", "yang", str(configured)).stdout)
    ports = len(instance["ietf-interfaces:interfaces"]["interface"])
    res = run("export", "yang", str(configured), "-o", str(tmp_path / "gates.json"), "--json")
    assert (res.returncode, res.stderr) == (0, "")
    assert json.loads(res.stdout) == {"output": str(tmp_path / "gates.json"), "ports": ports}
    assert json.loads((tmp_path / "gates.json").read_text()) == instance
    res = run("export", "yang", str(configured), "--json")
    assert json.loads(res.stdout) == {"output": None, "ports": ports, "instance": instance}
    res = run("export", "yang", str(EXAMPLES / "cbs_avb.yaml"), "-o", str(tmp_path / "none.json"), "--json")
    assert (res.returncode, res.stderr) == (2, "")
    assert json.loads(res.stdout)["errors"][0]["message"].startswith("no port runs a gate control list")
    assert not (tmp_path / "none.json").exists()
