"""`rtnetlab export taprio` and `export yang`: the synthesised gates for real devices.

This kernel has no taprio, cbs or etf qdisc, so the scripts are not run against it. Each tc
command they hold is instead handed to this host's own `tc` (iproute2) for a device that does not
exist: tc parses every option of the qdisc before it looks the device up, so a well-formed command
ends in exactly `Cannot find device "..."` and a malformed one in a usage or argument error. The
lines are also checked against the grammar of tc-taprio(8), tc-cbs(8), tc-etf(8) and tc-mqprio(8)
written out below, and the scripts are shellcheck clean.

The published IEEE 802.1 YANG modules (ieee802-dot1q-sched, -sched-bridge, -bridge, ieee802-types,
ieee802-dot1q-types) are in no package this machine can install (pyang ships IETF modules only),
so no schema validator runs here: the instance is checked against rules read node by node from the
modules and written out below, each naming the module, revision and node it comes from."""

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


# The YANG instance, checked against rules read node by node from the IEEE 802.1 modules as the
# YangModels/yang repository publishes them (the modules are not copied here; each rule below is
# written out in this file and names the module, revision and node path it comes from):
#   ieee802-dot1q-sched 2023-10-22 (IEEE Std 802.1Qcw-2023; standard/ieee/published/802.1),
#   ieee802-dot1q-sched-bridge 2023-03-08 (802.1Qcw; standard/ieee/draft/802.1/Qcw: the only
#     revision of it the repository holds where it was read; other projects list 2023-10-26 as the
#     standard's final one, not read here),
#   ieee802-dot1q-types 2022-10-31 and ieee802-types 2022-10-31 (802.1Qcw; draft/802.1/Qcw),
#   ieee802-dot1q-bridge 2023-03-16 (802.1Qcw; draft/802.1/Qcw),
#   ietf-interfaces (RFC 8343; its interface list as in the RFC 7223 revision read),
# and RFC 7950 (namespaces of grouping nodes, section 7.13) and RFC 7951 (JSON encoding).

SCHED = "ieee802-dot1q-sched"  # 2023-10-22
SCHED_BRIDGE = "ieee802-dot1q-sched-bridge"  # 2023-03-08
UINT8_MAX, UINT32_MAX = 2**8 - 1, 2**32 - 1

# ieee802-dot1q-sched 2023-10-22, grouping sched-parameters, container gate-parameter-table: its
# configuration nodes (config true) and the type of each; the other children (oper-gate-states,
# oper-control-list, oper-cycle-time, oper-cycle-time-extension, oper-base-time,
# config-change-time, tick-granularity, current-time, config-pending, config-change-error, and
# queue-max-sdu-table's transmission-overrun) are config false and have no place in a configuration.
GATE_PARAMETER_TABLE_CONFIG = {
    "queue-max-sdu-table": "list keyed by traffic-class",
    "gate-enabled": "boolean",
    "admin-gate-states": "uint8",
    "admin-control-list": "container of gate-control-entry",
    "admin-cycle-time": "ieee802-types rational-grouping",
    "admin-cycle-time-extension": "uint32, nanoseconds",
    "admin-base-time": "ieee802-types ptp-time-grouping",
    "config-change": "boolean",
    "supported-list-max": "uint32",
    "supported-cycle-max": "ieee802-types rational-grouping",
    "supported-interval-max": "uint32",
}
CONFIG_FALSE = {"oper-gate-states", "oper-control-list", "oper-cycle-time", "oper-cycle-time-extension",
                "oper-base-time", "config-change-time", "tick-granularity", "current-time", "config-pending",
                "config-change-error"}
# ieee802-dot1q-sched 2023-10-22, refine of gate-control-entry/operation-name: one of its three
# identities (all based on ieee802-dot1q-types' type-of-operation). RFC 7951 section 6.8: an
# identityref is the identity's module name, a colon, and its name.
OPERATIONS = {f"{SCHED}:set-gate-states", f"{SCHED}:set-and-hold-mac", f"{SCHED}:set-and-release-mac"}


def is_uint(v, top: int) -> bool:
    """RFC 7951 section 6.1: uint8, uint16 and uint32 are JSON numbers (a JSON true is not one,
    although Python's bool is an int)."""
    return type(v) is int and 0 <= v <= top


def is_uint64(v, top: int = 2**64 - 1) -> bool:
    """RFC 7951 section 6.1: int64 and uint64 are JSON strings of decimal digits."""
    return isinstance(v, str) and re.fullmatch(r"0|[1-9][0-9]*", v) is not None and int(v) <= top


def check_rational(r: dict) -> None:
    # ieee802-types 2022-10-31, grouping rational-grouping: numerator uint32, denominator uint32 of
    # range 1 to the uint32 maximum (a rational number of seconds where sched uses it).
    assert set(r) == {"numerator", "denominator"}, r
    assert is_uint(r["numerator"], UINT32_MAX)
    assert is_uint(r["denominator"], UINT32_MAX) and r["denominator"] >= 1


def check_ptp_time(t: dict) -> None:
    # ieee802-types 2022-10-31, grouping ptp-time-grouping: seconds uint64 whose upper 16 bits are
    # zero (so below 2^48), nanoseconds uint32 always below 10^9.
    assert set(t) == {"seconds", "nanoseconds"}, t
    assert is_uint64(t["seconds"], 2**48 - 1), t
    assert is_uint(t["nanoseconds"], 10**9 - 1), t


def check_gate_parameter_table(t: dict) -> None:
    assert set(t) <= set(GATE_PARAMETER_TABLE_CONFIG), set(t) - set(GATE_PARAMETER_TABLE_CONFIG)
    assert not set(t) & CONFIG_FALSE
    # gate-enabled and config-change: boolean, a JSON true or false (RFC 7951 section 6.3).
    assert type(t["gate-enabled"]) is bool and type(t["config-change"]) is bool
    assert t["gate-enabled"] is True and t["config-change"] is True
    # admin-gate-states: uint8, bit t the gate of traffic class t (msb traffic class 7).
    assert is_uint(t["admin-gate-states"], UINT8_MAX)
    # admin-control-list/gate-control-entry (ieee802-dot1q-types 2022-10-31, grouping
    # base-gate-control-entries, as sched-gate-control-entries uses it): a list keyed by index
    # (uint32), so the indexes are unique; operation-name mandatory; time-interval-value uint32 ns;
    # gate-states-value (sched's augment of the entry) uint8 and mandatory.
    assert set(t["admin-control-list"]) == {"gate-control-entry"}
    entries = t["admin-control-list"]["gate-control-entry"]
    assert entries
    assert [e["index"] for e in entries] == list(range(len(entries)))
    for e in entries:
        assert set(e) == {"index", "operation-name", "time-interval-value", "gate-states-value"}, e
        assert is_uint(e["index"], UINT32_MAX)
        assert e["operation-name"] in OPERATIONS and e["operation-name"] == f"{SCHED}:set-gate-states"
        assert is_uint(e["time-interval-value"], UINT32_MAX) and e["time-interval-value"] > 0
        assert is_uint(e["gate-states-value"], UINT8_MAX)
    # admin-cycle-time: a rational number of seconds; admin-base-time: a PTP time;
    # admin-cycle-time-extension: uint32 ns.
    check_rational(t["admin-cycle-time"])
    check_ptp_time(t["admin-base-time"])
    assert is_uint(t["admin-cycle-time-extension"], UINT32_MAX)
    # The entries fill the cycle exactly: the sum of the intervals (ns) is numerator/denominator s.
    cycle = t["admin-cycle-time"]
    assert sum(e["time-interval-value"] for e in entries) * cycle["denominator"] == cycle["numerator"] * 10**9
    # The device's limits are the device's to report: the instance leaves them out.
    assert not {"supported-list-max", "supported-cycle-max", "supported-interval-max"} & set(t)


def pairs(t: dict) -> list[tuple[int, int]]:
    """A gate-parameter-table's list as (gate-states-value, time-interval-value) pairs."""
    entries = t["admin-control-list"]["gate-control-entry"]
    return [(e["gate-states-value"], e["time-interval-value"]) for e in entries]


def must_constraints_hold(t: dict, list_max: int | None, interval_max: int | None,
                          cycle_max: tuple[int, int] | None) -> bool:
    """ieee802-dot1q-sched 2023-10-22's three `must` statements on a gate-parameter-table whose
    supported-list-max, supported-interval-max and supported-cycle-max are the given values (None:
    absent), evaluated as XPath 1.0 does: admin-control-list holds at most supported-list-max
    entries; every time-interval-value is at most supported-interval-max (the refine of
    gate-control-entry/time-interval-value); admin-cycle-time, numerator div denominator, is at
    most supported-cycle-max's. A comparison with an absent node is false, and `div` of absent
    nodes is NaN, so the constraints fail where the device's limits are missing."""
    entries = t["admin-control-list"]["gate-control-entry"]
    if list_max is None or interval_max is None or cycle_max is None:
        return False
    cycle = t["admin-cycle-time"]["numerator"] / t["admin-cycle-time"]["denominator"]
    return (len(entries) <= list_max and all(e["time-interval-value"] <= interval_max for e in entries)
            and cycle <= cycle_max[0] / cycle_max[1])


def test_yang_instance_follows_the_published_modules(configured: Path, tmp_path: Path) -> None:
    out = tmp_path / "gates.json"
    res = run("export", "yang", str(configured), "-o", str(out))
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())
    # ietf-interfaces: the top-level container interfaces, qualified by its module (RFC 7951
    # section 4), holding the list interface keyed by name; type is mandatory, an identityref.
    assert set(doc) == {"ietf-interfaces:interfaces"}
    assert set(doc["ietf-interfaces:interfaces"]) == {"interface"}
    interfaces = doc["ietf-interfaces:interfaces"]["interface"]
    names = [i["name"] for i in interfaces]
    assert all(isinstance(n, str) for n in names) and len(set(names)) == len(names)
    data = yaml.safe_load(configured.read_text())
    gated = {f"{s['name']}:{p}" for s in data["switches"] for p in s.get("ports", {})}
    assert gated <= set(names)
    for i in interfaces:
        # ieee802-dot1q-bridge 2023-03-16: bridge-port augments /if:interfaces/if:interface when the
        # interface's type derives from ianaif bridge, ethernetCsmacd, ieee8023adLag or ilan; an
        # augmenting node is qualified by its module's name.
        assert i["type"] == "iana-if-type:ethernetCsmacd"
        assert set(i) == {"name", "type", "ieee802-dot1q-bridge:bridge-port"}
        port = i["ieee802-dot1q-bridge:bridge-port"]
        # ieee802-dot1q-sched-bridge 2023-03-08: augments /if:interfaces/if:interface/dot1q:bridge-port
        # with sched's grouping sched-parameters; the grouping's nodes take the namespace of the
        # module whose `uses` instantiates them (RFC 7950 section 7.13), so gate-parameter-table is
        # qualified by ieee802-dot1q-sched-bridge, and its descendants, in the same namespace, are not.
        assert set(port) == {f"{SCHED_BRIDGE}:gate-parameter-table"}
        t = port[f"{SCHED_BRIDGE}:gate-parameter-table"]
        check_gate_parameter_table(t)
        assert not any(":" in k for e in t["admin-control-list"]["gate-control-entry"] for k in e)
        entries = t["admin-control-list"]["gate-control-entry"]
        longest = max(e["time-interval-value"] for e in entries)
        cycle = (t["admin-cycle-time"]["numerator"], t["admin-cycle-time"]["denominator"])
        # On a device whose limits admit the list the `must` statements hold; the file alone,
        # without the device's limits, does not satisfy them.
        assert must_constraints_hold(t, len(entries), longest, cycle)
        assert not must_constraints_hold(t, len(entries) - 1, longest, cycle)
        assert not must_constraints_hold(t, None, None, None)
    # gate-states-value: bit t is traffic class t's gate (sched 2023-10-22, the augment of
    # gate-control-entry); traffic classes are control 2, video 1, best effort 0. The list is the
    # description's, and the same as the taprio script's.
    sw = next(i for i in interfaces if i["name"] == "sw1:3")
    t = sw["ieee802-dot1q-bridge:bridge-port"][f"{SCHED_BRIDGE}:gate-parameter-table"]
    got = pairs(t)
    sched = data["switches"][0]["ports"]["3"]["scheduler"]
    tc_of = {"control": 2, "video": 1, "best_effort": 0}
    want = data["schedulers"][sched]["entries"]
    assert [m for m, _ in got] == [sum(1 << tc_of[c] for c in e["open"]) for e in want]
    res = run("export", "taprio", str(configured), "--node", "sw1", "--port", "3", "--dev", "eth0")
    taprio = next(c for c in tc_commands(res.stdout) if "taprio" in c)
    assert got == [(int(taprio[i + 2], 16), int(taprio[i + 3]))
                   for i, tok in enumerate(taprio) if tok == "sched-entry"]
    assert t["admin-cycle-time"] == {"numerator": 1, "denominator": 1000}
    assert t["admin-base-time"] == {"seconds": "0", "nanoseconds": 0}
    res = run("export", "yang", str(EXAMPLES / "cbs_avb.yaml"))
    assert res.returncode == 2 and "no port runs a gate control list" in res.stderr


def test_yang_instance_keeps_to_the_types(configured: Path, tmp_path: Path) -> None:
    """What the types cannot carry: an interval above uint32 ns is cut into entries of the same
    mask (the list keeps its timing); a cycle whose reduced fraction of a second has a numerator
    above uint32 is refused in one line, as are more than 8 traffic classes (the uint8 mask) and a
    base time beyond a PTP time's 2^48 s."""
    data = yaml.safe_load(configured.read_text())
    for cycle, want in (("5s", 0), ("4294967297ns", 2)):
        d = yaml.safe_load(yaml.safe_dump(data))
        entries = [{"open": ["video", "best_effort"], "duration": cycle}]
        d["schedulers"]["tsn"].update(cycle=cycle, entries=entries)
        f = tmp_path / "long.yaml"
        f.write_text(yaml.safe_dump(d))
        res = run("export", "yang", str(f), "--node", "sw1")
        assert res.returncode == want, res.stderr
        if want:
            assert res.stderr.strip() == (f"{f}: sw1:0: cycle 4294967297 ns is 4294967297/1000000000 s, "
                                          "a numerator above uint32 (admin-cycle-time)")
            continue
        t = json.loads(res.stdout)["ietf-interfaces:interfaces"]["interface"][0][
            "ieee802-dot1q-bridge:bridge-port"][f"{SCHED_BRIDGE}:gate-parameter-table"]
        check_gate_parameter_table(t)
        assert pairs(t) == [(3, UINT32_MAX), (3, 5 * 10**9 - UINT32_MAX)]
        assert t["admin-cycle-time"] == {"numerator": 5, "denominator": 1}
    # Input validation bounds the classes and the base time before the exporter sees them, so
    # these two refusals are checked on the exporter's own input.
    from rtnetlab.testbed import taprio

    def resolved(n_classes: int, base: str) -> dict:
        return {"classes": [{"name": f"c{k}", "priority": k} for k in range(n_classes)],
                "nodes": [{"name": "sw"}],
                "ports": [{"node": 0, "name": "0", "discipline": {
                    "kind": "tas", "cycle": "1ms", "base_time": base,
                    "entries": [{"open": ["c0"], "duration": "1ms"}]}}]}

    t = taprio.yang_instance(resolved(8, "0ns"))["ietf-interfaces:interfaces"]["interface"][0]
    assert t["ieee802-dot1q-bridge:bridge-port"][f"{SCHED_BRIDGE}:gate-parameter-table"][
        "admin-control-list"]["gate-control-entry"][0]["gate-states-value"] == 1 << 7
    with pytest.raises(ValueError, match="9 priority levels"):
        taprio.yang_instance(resolved(9, "0ns"))
    with pytest.raises(ValueError, match="outside a PTP time"):
        taprio.yang_instance(resolved(3, f"{2**48}s"))


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


@pytest.fixture(scope="module")
def held(tmp_path_factory) -> tuple[Path, dict]:
    """The bounded-wait example configured with frames held at gates (--max-wait 32us): stream `a`
    waits 31.2 us at one of its ports, so its lists open the scheduled class later than the frame
    arrives."""
    out = tmp_path_factory.mktemp("held") / "held.yaml"
    res = run("configure", "tsn", str(EXAMPLES / "tsn_bounded_wait.yaml"), "-o", str(out),
              "--max-wait", "32us", "--verify", "none", "--json")  # fmt: skip
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert max(s["wait_ns"] for s in report["streams"]) > 0, report["streams"]
    return out, report


def duration_ns(text: str) -> int:
    value, unit = re.fullmatch(r"([\d.]+)\s*([a-z]+)", text).groups()
    return round(float(value) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit])


def test_held_frames_reach_both_exports_port_by_port(held: tuple[Path, dict], tmp_path: Path) -> None:
    """Every synthesised port of the held configuration: the taprio script parses (tc, the man
    pages' grammar) and holds the port's list, and the YANG instance keeps to the published
    modules and holds the same list, mask and interval for mask and interval."""
    configured, report = held
    data = yaml.safe_load(configured.read_text())
    tc_of = {"tt": 1 << 1, "best_effort": 1 << 0}  # priority 0 the highest: traffic class 1
    res = run("export", "yang", str(configured), "-o", str(tmp_path / "gates.json"))
    assert res.returncode == 0, res.stderr
    interfaces = {i["name"]: i for i in json.loads((tmp_path / "gates.json").read_text())[
        "ietf-interfaces:interfaces"]["interface"]}  # fmt: skip
    assert {p["port"] for p in report["ports"]} <= set(interfaces)
    for p in report["ports"]:
        node, port = p["port"].split(":")
        entries = data["schedulers"][p["scheduler"]]["entries"]
        want = [(sum(tc_of[c] for c in e["open"]), duration_ns(e["duration"])) for e in entries]
        assert sum(i for _, i in want) == p["cycle_ns"]
        res = run("export", "taprio", str(configured), "--node", node, "--port", port, "--dev", "eth0")
        assert res.returncode == 0, res.stderr
        cmds = tc_commands(res.stdout)
        for cmd in cmds:
            check_grammar(cmd)
            if shutil.which("tc"):
                got = subprocess.run(cmd, capture_output=True, text=True)
                assert got.stderr.strip() == f'Cannot find device "{NO_DEVICE}"', (cmd, got.stderr)
        taprio = next(c for c in cmds if "taprio" in c)
        script = [(int(taprio[i + 2], 16), int(taprio[i + 3]))
                  for i, t in enumerate(taprio) if t == "sched-entry"]  # fmt: skip
        assert script == want, (p["port"], script, want)
        t = interfaces[p["port"]]["ieee802-dot1q-bridge:bridge-port"][f"{SCHED_BRIDGE}:gate-parameter-table"]
        check_gate_parameter_table(t)
        assert pairs(t) == want
