"""`rtnetlab validate` on broken inputs: every problem one line naming its place and rule, all of
them in one run, exit code 2, and never a traceback.

Each case writes a small description into a temporary directory and runs the installed command
from there, so messages name the file as the user typed it. The expected stderr is compared line
for line: a missing message, an extra (cascaded) one, or a changed wording all fail.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CLI = REPO / ".venv" / "bin" / "rtnetlab"

TOP_KEYS = (
    "name, description, defaults, redundancy, classes, schedulers, end_systems, switches, links, flows, "
    "processors, buses, tasks, messages, servers, chains, server_graph"
)

NODES = """\
end_systems: [{name: ES1}, {name: ES2}, {name: ES3}]
switches: [{name: SW1}, {name: SW2}]
"""
LINKS = """\
links:
  - {from: ES1, to: SW1}
  - {from: ES2, to: SW1}
  - {from: SW1, to: SW2}
  - {from: SW2, to: ES3}
"""


def vl(name: str = "VL1", bag: str = "2ms", lmin: str = "64B", lmax: str = "200B", source: str = "ES1",
       destinations: str = "[ES3]", extra: str = "") -> str:
    """One virtual link as a flow-style YAML list item."""
    return (f"  - {{name: {name}, type: virtual_link, bag: {bag}, lmin: {lmin}, lmax: {lmax}, "
            f"source: {source}, destinations: {destinations}{extra}}}\n")


def net(flows: str | None = None, nodes: str = NODES, links: str = LINKS, head: str = "name: t\n") -> str:
    """A small valid network (ES1, ES2 on SW1; ES3 on SW2) with the given parts replaced."""
    return head + nodes + links + "flows:\n" + (vl() if flows is None else flows)


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLI), *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def no_traceback(res: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in res.stdout
    assert "Traceback" not in res.stderr


def validate_text(tmp_path: Path, text: str, name: str = "net.yaml") -> subprocess.CompletedProcess[str]:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return run(tmp_path, "validate", name)


def assert_user_error(res: subprocess.CompletedProcess[str], expected: list[str]) -> None:
    """Exit 2, no traceback, nothing on stdout, and exactly these lines on stderr."""
    no_traceback(res)
    assert res.returncode == 2, res.stderr
    assert res.stdout == ""
    assert res.stderr.splitlines() == expected


# Broken descriptions, each with every line `validate` must print for it (and nothing else).
CASES: dict[str, tuple[str, list[str]]] = {
    "top level is a list": (
        "- ES1\n- SW1\n",
        ["(top): a network description must be a mapping with name, end_systems, switches, links and "
         "flows (or processors, buses, tasks and messages), got a list"],
    ),
    "unknown top-level key": (
        net(head="name: t\nswitchs: []\n"),
        [f"switchs: unknown key, expected one of {TOP_KEYS}"],
    ),
    "string where a list is expected": (
        net(nodes="end_systems: ES1\nswitches: [{name: SW1}, {name: SW2}]\n"),
        # The links and the flow name end systems that could not be read: no cascade of unknowns.
        ["end_systems: must be a list, got a string"],
    ),
    "name of the wrong type": (
        net(head="name: 5\n"),
        ["name: must be a string, got a number"],
    ),
    "quantity without unit": (
        net(vl(bag="2")),
        ["flows[0].bag: expected a duration with a unit, e.g. '2ms', got the bare number 2"],
    ),
    "unknown unit": (
        net(vl(lmax="100 parsecs")),
        ["flows[0].lmax: expected a data size with a unit (MiB, KiB, MB, kB, B, Mb, kb, b), e.g. '1500B', "
         "got '100 parsecs'"],
    ),
    "negative duration": (
        net(vl(bag="-2ms")),
        ["flows[0].bag: must not be negative, got '-2ms'"],
    ),
    "BAG not a power of two": (
        net(vl("VL1") + vl("VL2") + vl("VL3") + vl("VL4", bag="3ms")),
        ["flows[3].bag: must be a power of two between 1ms and 128ms, got 3ms"],
    ),
    "BAG above 128ms": (
        net(vl(bag="256ms")),
        ["flows[0].bag: must be a power of two between 1ms and 128ms, got 256ms"],
    ),
    "lmin above lmax": (
        net(vl(lmin="300B", lmax="200B")),
        ["flows[0].lmin: must not exceed lmax (200B), got 300B"],
    ),
    "frame above 1518 bytes": (
        net(vl(lmax="1519B")),
        ["flows[0].lmax: must be an Ethernet frame size between 64B and 1518B, got 1519B"],
    ),
    "frame below 64 bytes": (
        net(vl(lmin="63B")),
        ["flows[0].lmin: must be an Ethernet frame size between 64B and 1518B, got 63B"],
    ),
    "unknown node in a link": (
        net(links=LINKS.replace("{from: SW2, to: ES3}", "{from: SW2, to: ES9}")),
        # ES3 is then unreachable, but that follows from the link error and is not reported again.
        ["links[3].to: unknown node 'ES9'"],
    ),
    "link to itself": (
        net(links=LINKS + "  - {from: SW1, to: SW1}\n"),
        ["links[4]: must join two different nodes, got 'SW1' to itself"],
    ),
    "unknown destination": (
        net(vl(destinations="[ES9]")),
        ["flows[0].destinations[0]: unknown node 'ES9'"],
    ),
    "destination is the source": (
        net(vl(destinations="[ES3, ES1]")),
        ["flows[0].destinations[1]: must not be the flow's own source, got 'ES1'"],
    ),
    "destination is a switch": (
        net(vl(destinations="[SW2]")),
        ["flows[0].destinations[0]: must be an end system (flows end at end systems), got the switch 'SW2'"],
    ),
    "destination repeated": (
        net(vl(destinations="[ES3, ES2, ES3]")),
        ["flows[0].destinations[2]: must not repeat a destination, got 'ES3' a second time"],
    ),
    "source is a switch": (
        net(vl(source="SW1")),
        ["flows[0].source: must be an end system (flows start at end systems), got the switch 'SW1'"],
    ),
    "unknown source": (
        net(vl(source="ES7")),
        ["flows[0].source: unknown node 'ES7'"],
    ),
    "explicit path not connected": (
        net(vl(destinations="[{node: ES3, path: [ES1, SW2, ES3]}]")),
        ["flows[0].destinations[0].path[1]: no link from 'ES1' to 'SW2' on this plane"],
    ),
    "explicit path with a loop": (
        net(vl(destinations="[{node: ES3, path: [ES1, SW1, SW2, SW1, SW2, ES3]}]")),
        ["flows[0].destinations[0].path[3]: 'SW1' appears twice: paths must be loop-free"],
    ),
    "explicit path through an end system": (
        net(vl(destinations="[{node: ES3, path: [ES1, SW1, ES2, SW1, SW2, ES3]}]")),
        ["flows[0].destinations[0].path[2]: 'ES2' is an end system; only switches forward"],
    ),
    "explicit path not ending at its destination": (
        net(vl(destinations="[{node: ES3, path: [ES1, SW1, ES2]}]")),
        ["flows[0].destinations[0].path: must end at the destination 'ES3'"],
    ),
    "explicit path naming an unknown node": (
        net(vl(destinations="[{node: ES3, path: [ES1, SW1, SW5, ES3]}]")),
        ["flows[0].destinations[0].path[2]: unknown node 'SW5'"],
    ),
    "duplicate node names": (
        net(nodes="end_systems: [{name: ES1}, {name: ES2}, {name: ES3}]\n"
                  "switches: [{name: SW1}, {name: SW2}, {name: ES2}]\n"),
        ["switches[2].name: 'ES2' is already the name of end_systems[1]; node names must be unique"],
    ),
    "duplicate port on a node": (
        net(links=LINKS.replace("{from: ES1, to: SW1}", "{from: ES1, to: SW1, to_port: p1}")
            .replace("{from: ES2, to: SW1}", "{from: ES2, to: SW1, to_port: p1}")),
        ["links[1].to_port: port 'p1' of 'SW1' is already used by links[0]; a port takes one link"],
    ),
    "zero link rate": (
        net(links=LINKS.replace("{from: SW1, to: SW2}", "{from: SW1, to: SW2, rate: 0Mbps}")),
        ["links[2].rate: must be positive, got 0bps"],
    ),
    "negative link rate": (
        net(links=LINKS.replace("{from: SW1, to: SW2}", "{from: SW1, to: SW2, rate: -100Mbps}")),
        # The unreadable link is dropped; the flow's missing route follows from it and is not reported.
        ["links[2].rate: must not be negative, got '-100Mbps'"],
    ),
    "zero default link rate": (
        net(head="name: t\ndefaults: {link_rate: 0Gbps}\n"),
        ["defaults.link_rate: must be positive, got 0bps"],
    ),
    "unknown class": (
        net(head="name: t\nclasses: [{name: hi}]\n", flows=vl(extra=", class: gold")),
        ["flows[0].class: unknown class 'gold'"],
    ),
    "unknown scheduler": (
        net(nodes="end_systems: [{name: ES1}, {name: ES2}, {name: ES3}]\n"
                  "switches: [{name: SW1, scheduler: wfq}, {name: SW2}]\n"),
        ["switches[0].scheduler: unknown scheduler 'wfq': use fifo, static_priority or a name defined "
         "under schedulers"],
    ),
    "unknown field in a flow": (
        net(vl(extra=", bagg: 4ms")),
        ["flows[0]: unknown field `bagg`, expected one of `id`, `bag`, `lmin`, `lmax`, `release_jitter`, "
         "`skew_max`, `messages`"],
    ),
    "flow without type": (
        net("  - {name: VL1, bag: 2ms, lmin: 64B, lmax: 200B, source: ES1, destinations: [ES3]}\n"),
        ["flows[0]: missing field `type` (virtual_link, token_bucket or periodic)"],
    ),
    "unknown flow type": (
        net("  - {name: VL1, type: vlink, bag: 2ms, source: ES1, destinations: [ES3]}\n"),
        ["flows[0].type: unknown variant `vlink`, expected one of `virtual_link`, `token_bucket`, "
         "`periodic`"],
    ),
    "flow that is not a mapping": (
        net("  - VL1\n"),
        ["flows[0]: must be a mapping, got a string"],
    ),
    "duplicate flow names and VL ids": (
        net(vl("VL1", extra=", id: 7") + vl("VL1", extra=", id: 7")),
        ["flows[1].name: 'VL1' is already the name of flows[0]; flow names must be unique",
         "flows[1].id: VL id 7 is already used by flows[0]"],
    ),
    "multicast paths that are not a tree": (
        "name: t\n"
        "end_systems: [{name: ES1}, {name: ES2}, {name: ES3}]\n"
        "switches: [{name: SW1}, {name: SW2}, {name: SW3}]\n"
        "links:\n"
        "  - {from: ES1, to: SW1}\n  - {from: SW1, to: SW2}\n  - {from: SW1, to: SW3}\n"
        "  - {from: SW2, to: SW3}\n  - {from: SW3, to: ES2}\n  - {from: SW3, to: ES3}\n"
        "flows:\n"
        + vl("M", destinations="[{node: ES2, path: [ES1, SW1, SW3, ES2]}, "
                               "{node: ES3, path: [ES1, SW1, SW2, SW3, ES3]}]"),
        ["flows[0].destinations: the paths must form a tree, got 'SW3' reached from both 'SW1' and 'SW2'"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_broken_description(tmp_path: Path, case: str) -> None:
    text, expected = CASES[case]
    assert_user_error(validate_text(tmp_path, text), expected)


def test_valid_description_exits_0(tmp_path: Path) -> None:
    res = validate_text(tmp_path, net(vl("VL1") + vl("VL2", destinations="[ES2, ES3]", bag="128ms")))
    no_traceback(res)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""
    assert res.stdout == ("net.yaml: valid: 3 end systems, 2 switches, 4 links, 2 flows (2 virtual links), "
                          "1 plane(s)\n")


# Files that cannot be read as a description at all.


def test_missing_file(tmp_path: Path) -> None:
    assert_user_error(run(tmp_path, "validate", "nothere.yaml"), ["nothere.yaml: no such file"])


def test_directory(tmp_path: Path) -> None:
    (tmp_path / "net.yaml").mkdir()
    (tmp_path / "plain").mkdir()
    assert_user_error(run(tmp_path, "validate", "net.yaml"),
                      ["net.yaml: is a directory, expected a network description file"])
    assert_user_error(run(tmp_path, "validate", "plain"),
                      ["plain: is a directory, expected a network description file"])


def test_unknown_extension(tmp_path: Path) -> None:
    (tmp_path / "net.txt").write_text(net())
    assert_user_error(run(tmp_path, "validate", "net.txt"),
                      ["net.txt: unknown file type '.txt', expected .yaml, .yml, .json, .xml (WOPANet) "
                       "or .java (DNC)"])


def test_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "net.yaml").write_bytes(b"name: caf\xe9\n")
    assert_user_error(run(tmp_path, "validate", "net.yaml"),
                      ["net.yaml: not UTF-8 text (invalid continuation byte at byte 9)"])


def test_empty_file(tmp_path: Path) -> None:
    assert_user_error(validate_text(tmp_path, ""), ["net.yaml: the file is empty"])


def test_bad_yaml_gives_line_and_column(tmp_path: Path) -> None:
    res = validate_text(tmp_path, "name: t\nend_systems: [{name: ES1}, {name: ES2}\nlinks: []\n")
    assert_user_error(res, ["net.yaml:3:1: not valid YAML: invalid indentation in flow construct "
                           "(in the list started at 2:14)"])


def test_bad_json_gives_line_and_column(tmp_path: Path) -> None:
    res = validate_text(tmp_path, '{"name": "t",\n "links": [],\n}\n', name="net.json")
    assert_user_error(res, ["net.json:3:1: not valid JSON: trailing comma"])


def test_json_description_is_checked_like_yaml(tmp_path: Path) -> None:
    doc = {"name": "t", "end_systems": [{"name": "ES1"}, {"name": "ES2"}],
           "links": [{"from": "ES1", "to": "ES2"}],
           "flows": [{"name": "V", "type": "virtual_link", "bag": 2, "lmin": "64B", "lmax": "64B",
                      "source": "ES1", "destinations": ["ES2"]}]}
    res = validate_text(tmp_path, json.dumps(doc), name="net.json")
    assert_user_error(res, ["flows[0].bag: expected a duration with a unit, e.g. '2ms', got the bare "
                           "number 2"])


# Several problems in one file.


def test_every_problem_reported_in_one_run(tmp_path: Path) -> None:
    flows = (vl("VL1", bag="3ms")                               # flows[0]: BAG
             + vl("VL2", bag="2", lmax="2000 parsecs")          # flows[1]: two unreadable keys
             + vl("VL3", lmin="300B", lmax="2000B")             # flows[2]: frame size and lmin > lmax
             + vl("VL4", destinations="[ES9, ES1]", extra=", class: gold")  # flows[3]: three problems
             + vl("VL5", destinations="[{node: ES3, path: [ES1, SW2, ES3]}]"))  # flows[4]: path
    res = validate_text(tmp_path, net(flows, head="name: t\nbogus: 1\n"))
    expected = [
        f"bogus: unknown key, expected one of {TOP_KEYS}",
        "flows[1].bag: expected a duration with a unit, e.g. '2ms', got the bare number 2",
        "flows[1].lmax: expected a data size with a unit (MiB, KiB, MB, kB, B, Mb, kb, b), e.g. '1500B', "
        "got '2000 parsecs'",
        "flows[0].bag: must be a power of two between 1ms and 128ms, got 3ms",
        "flows[2].lmax: must be an Ethernet frame size between 64B and 1518B, got 2000B",
        "flows[3].class: unknown class 'gold'",
        "flows[3].destinations[0]: unknown node 'ES9'",
        "flows[3].destinations[1]: must not be the flow's own source, got 'ES1'",
        "flows[4].destinations[0].path[1]: no link from 'ES1' to 'SW2' on this plane",
    ]
    assert_user_error(res, expected)
    assert len(res.stderr.splitlines()) == 9


def test_places_keep_file_indices_after_an_unreadable_element(tmp_path: Path) -> None:
    # flows[0] cannot be read and is dropped: the later flows must still be named by their index
    # in the file, not by their index among the flows that were read.
    flows = vl("VL1", bag="2") + vl("VL2") + vl("VL3", extra=", class: gold")
    res = validate_text(tmp_path, net(flows))
    assert_user_error(res, [
        "flows[0].bag: expected a duration with a unit, e.g. '2ms', got the bare number 2",
        "flows[2].class: unknown class 'gold'",
    ])


def test_broken_element_does_not_cascade(tmp_path: Path) -> None:
    # SW1 cannot be read (misspelt key): the links and routes through it must not be reported as
    # unknown nodes or missing paths; only the real second problem (ES9) is.
    nodes = ("end_systems: [{name: ES1}, {name: ES2}, {name: ES3}]\n"
             "switches: [{name: SW1, latncy: 1us}, {name: SW2}]\n")
    flows = vl("VL1") + vl("VL2", source="ES2", destinations="[ES9]")
    res = validate_text(tmp_path, net(flows, nodes=nodes))
    assert_user_error(res, [
        "switches[0].latncy: unknown field `latncy`, expected one of `name`, `plane`, "
        "`technological_latency`, `switching`, `scheduler`, `buffer`, `ports`",
        "flows[1].destinations[0]: unknown node 'ES9'",
    ])


def test_json_output_for_an_invalid_file(tmp_path: Path) -> None:
    (tmp_path / "net.yaml").write_text(net(vl(bag="3ms") + vl("VL2", lmin="300B")))
    res = run(tmp_path, "validate", "--json", "net.yaml")
    no_traceback(res)
    assert res.returncode == 2
    assert json.loads(res.stdout) == {
        "file": "net.yaml",
        "valid": False,
        "errors": [
            {"place": "flows[0].bag", "message": "must be a power of two between 1ms and 128ms, got 3ms"},
            {"place": "flows[1].lmin", "message": "must not exceed lmax (200B), got 300B"},
        ],
        "warnings": [],
    }


def test_json_output_for_an_unreadable_file(tmp_path: Path) -> None:
    res = run(tmp_path, "validate", "--json", "nothere.yaml")
    no_traceback(res)
    assert res.returncode == 2
    assert json.loads(res.stdout) == {"file": "nothere.yaml", "valid": False,
                                      "errors": [{"place": "nothere.yaml", "message": "no such file"}],
                                      "warnings": []}


# Warnings: reported with their reason, exit code 0.

DRR = """\
name: t
classes: [{name: hi}, {name: lo}]
schedulers:
  drr1: {kind: drr, quanta: {hi: 100B, lo: 1500B}}
end_systems: [{name: ES1}, {name: ES2}, {name: ES3}]
switches: [{name: SW1, scheduler: drr1}, {name: SW2}]
""" + LINKS + "flows:\n" + (vl("A", lmax="500B", extra=", class: hi")
                             + vl("B", source="ES2", extra=", class: lo"))

RING = """\
name: ring
end_systems: [{name: ES1}, {name: ES2}, {name: ES3}]
switches: [{name: SW1}, {name: SW2}, {name: SW3}]
links:
  - {from: ES1, to: SW1}
  - {from: ES2, to: SW2}
  - {from: ES3, to: SW3}
  - {from: SW1, to: SW2}
  - {from: SW2, to: SW3}
  - {from: SW3, to: SW1}
flows:
""" + (vl("A", destinations="[{node: ES3, path: [ES1, SW1, SW2, SW3, ES3]}]")
       + vl("B", source="ES2", destinations="[{node: ES1, path: [ES2, SW2, SW3, SW1, ES1]}]")
       + vl("C", source="ES3", destinations="[{node: ES2, path: [ES3, SW3, SW1, SW2, ES2]}]"))


def test_drr_quantum_below_largest_frame_is_a_warning_with_its_reason(tmp_path: Path) -> None:
    res = validate_text(tmp_path, DRR)
    no_traceback(res)
    assert res.returncode == 0, res.stderr
    assert res.stderr.splitlines() == [
        "warning: schedulers.drr1: quantum of class 'hi' (100B) is smaller than its largest frame "
        "(500B, flow 'A'): a frame may wait several rounds, so latency grows",
    ]
    assert res.stdout.startswith("net.yaml: valid: ")


def test_cyclic_port_dependency_is_a_warning(tmp_path: Path) -> None:
    res = validate_text(tmp_path, RING)
    no_traceback(res)
    assert res.returncode == 0, res.stderr
    assert res.stderr.splitlines() == [
        "warning: flows: routes make a cyclic port dependency (SW1:1 -> SW2:2 -> SW3:2 -> SW1:1); "
        "analyses need a fixed point there",
    ]


def test_warnings_in_json_output(tmp_path: Path) -> None:
    (tmp_path / "net.yaml").write_text(DRR)
    res = run(tmp_path, "validate", "--json", "net.yaml")
    no_traceback(res)
    assert res.returncode == 0
    data = json.loads(res.stdout)
    assert data["valid"] is True
    assert data["errors"] == []
    assert data["warnings"] == [
        "warning: schedulers.drr1: quantum of class 'hi' (100B) is smaller than its largest frame "
        "(500B, flow 'A'): a frame may wait several rounds, so latency grows",
    ]
    assert data["counts"]["flows"] == 2



FP_HEAD = """\
name: fp
processors: [{name: cpu1}]
buses: [{name: can0, bit_rate: 500kbps}]
"""

FP_CASES: dict[str, tuple[str, list[str]]] = {
    "task on an unknown processor": (
        "tasks: [{name: t1, processor: cpu9, wcet: 1ms, period: 10ms, priority: 1}]\n",
        ["tasks[0].processor: unknown processor 'cpu9'"],
    ),
    "task without period": (
        "tasks: [{name: t1, processor: cpu1, wcet: 1ms, priority: 1}]\n",
        ["tasks[0].period: missing: give a period or make it a step of a chain"],
    ),
    "CAN payload above 8 bytes": (
        "messages: [{name: m1, bus: can0, sender: cpu1, payload: 9B, period: 10ms, priority: 1}]\n",
        ["messages[0].payload: must be a whole number of bytes from 0B to 8B (one CAN frame), got 9B"],
    ),
    "two messages with one identifier": (
        "messages:\n"
        "  - {name: m1, bus: can0, sender: cpu1, payload: 8B, period: 10ms, priority: 5}\n"
        "  - {name: m2, bus: can0, sender: n2, payload: 8B, period: 10ms, priority: 5}\n",
        ["messages[1].priority: priority 5 is already used on bus 'can0' by messages[0]; CAN identifiers "
         "are unique"],
    ),
    "server on both a processor and a bus": (
        "servers: [{name: s, processor: cpu1, bus: can0, capacity: 1ms, replenishment_period: 10ms, "
        "priority: 1}]\n",
        ["servers[0]: give exactly one of processor or bus"],
    ),
    "bus server without budget": (
        "servers: [{name: s, bus: can0, sender: n1, replenishment_period: 10ms, priority: 1}]\n",
        ["servers[0].budget: missing: a bus server needs a budget of at least one packet"],
    ),
    "chain naming an unknown step and a step with another period": (
        "chains: [{name: c, period: 10ms, steps: [t1, nope]}]\n"
        "tasks: [{name: t1, processor: cpu1, wcet: 1ms, period: 20ms, priority: 1}]\n",
        ["tasks[0].period: is a step of chain 'c', whose period (10ms) it takes; got 20ms",
         "chains[0].steps[1]: unknown task or message 'nope'"],
    ),
    "task and message with one name": (
        "tasks: [{name: x, processor: cpu1, wcet: 1ms, period: 10ms, priority: 1}]\n"
        "messages: [{name: x, bus: can0, sender: cpu1, payload: 8B, period: 10ms, priority: 1}]\n",
        ["messages[0].name: 'x' is already the name of tasks[0]"],
    ),
    "nothing described": (
        "",
        ["(top): describes nothing: give end_systems and links (a switched network), or tasks and messages "
         "(a fixed-priority system)"],
    ),
}


@pytest.mark.parametrize("case", list(FP_CASES))
def test_broken_fixed_priority_description(tmp_path: Path, case: str) -> None:
    body, expected = FP_CASES[case]
    assert_user_error(validate_text(tmp_path, FP_HEAD + body), expected)


def test_fixed_priority_examples_are_valid() -> None:
    for path in sorted((REPO / "examples" / "fixed_priority").glob("*.yaml")):
        res = run(REPO, "validate", str(path))
        assert res.returncode == 0, res.stderr
