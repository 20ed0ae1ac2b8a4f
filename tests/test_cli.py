"""The `rtnetlab` commands end to end: info, schema, generate, convert, and usage errors.

Every command runs as the user runs it (the installed script, in a subprocess); user mistakes must
give exit code 2 and one-line messages, never a traceback.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from rtnetlab import model

REPO = Path(__file__).resolve().parents[1]
CLI = REPO / ".venv" / "bin" / "rtnetlab"
SEED002 = REPO / "examples" / "seed002_four_vls.yaml"


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    res = subprocess.run([str(CLI), *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in res.stdout + res.stderr
    return res


# info


def test_info_json_shape(tmp_path: Path) -> None:
    res = run(tmp_path, "info", "--json", str(SEED002))
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert sorted(data) == ["counts", "kind", "links", "name", "overloaded_ports", "planes", "ports",
                            "resources", "warnings"]
    assert data["name"] == "seed002-four-vls"
    assert data["kind"] == "ethernet"
    assert data["planes"] == ["A"]
    assert data["counts"] == {"end_systems": 6, "switches": 3, "links": 9, "egress_ports": 18, "flows": 4,
                              "virtual_links": 4, "routes": 4, "planes": 1, "processors": 0, "buses": 0,
                              "tasks": 0, "messages": 0, "servers": 0, "chains": 0}
    assert data["overloaded_ports"] == 0
    assert data["warnings"] == []
    assert len(data["ports"]) == 18
    assert sorted(data["ports"][0]) == ["flows", "link", "load_bps", "node", "overloaded", "peer", "plane",
                                        "port", "rate_bps", "scheduler", "utilisation"]
    assert len(data["links"]) == 9
    assert sorted(data["links"][0]) == ["direct_bps", "from", "name", "rate_bps", "reverse_bps", "to"]


def test_info_port_loads_by_hand(tmp_path: Path) -> None:
    """Per-port load = sum over crossing VLs of (lmax + 20 B) * 8 / BAG, derived from the file.

    Ports are numbered per node in link order (ES1:0 is ES1's end of links[0], SW1:2 is SW1's end of
    links[2], ...). Shortest routes: VL1 ES1-SW1-SW2-ES4, VL2 ES1-SW1-SW3-ES5, VL3 ES2-SW1-SW2-ES3,
    VL4 ES6-SW3-SW2-ES4.
    """
    spec = yaml.safe_load(SEED002.read_text())
    assert spec["defaults"]["interframe_overhead"] == "20B"

    def load(vl: dict) -> float:
        lmax_bytes = int(vl["lmax"].removesuffix("B"))
        bag_s = int(vl["bag"].removesuffix("ms")) / 1000
        return (lmax_bytes + 20) * 8 / bag_s

    vl = {f["name"]: load(f) for f in spec["flows"]}
    assert vl == {"VL1": 880_000.0, "VL2": 210_000.0, "VL3": 130_000.0, "VL4": 168_000.0}
    crossing = {
        "ES1:0": ["VL1", "VL2"], "ES2:0": ["VL3"], "ES6:0": ["VL4"],
        "SW1:2": ["VL1", "VL3"], "SW1:3": ["VL2"],
        "SW2:1": ["VL3"], "SW2:2": ["VL1", "VL4"],
        "SW3:1": ["VL2"], "SW3:3": ["VL4"],
    }
    res = run(tmp_path, "info", "--json", str(SEED002))
    assert res.returncode == 0, res.stderr
    ports = {f"{p['node']}:{p['port']}": p for p in json.loads(res.stdout)["ports"]}
    for label, p in ports.items():
        names = crossing.get(label, [])
        expected = sum(vl[n] for n in names)
        assert p["load_bps"] == pytest.approx(expected, rel=1e-12, abs=1e-9), label
        assert p["flows"] == len(names), label
        assert p["rate_bps"] == 100e6, label
        assert p["utilisation"] == pytest.approx(expected / 100e6, rel=1e-12, abs=1e-15), label
        assert p["overloaded"] is False
    assert ports["SW2:2"]["peer"] == "ES4"
    assert ports["SW2:2"]["link"] == "SW2-ES4"
    assert ports["SW2:2"]["load_bps"] == pytest.approx(1_048_000.0, rel=1e-12)
    assert ports["ES1:0"]["load_bps"] == pytest.approx(1_090_000.0, rel=1e-12)


def test_info_on_invalid_file_exits_2(tmp_path: Path) -> None:
    text = SEED002.read_text().replace("bag: 16ms", "bag: 12ms")
    (tmp_path / "bad.yaml").write_text(text)
    res = run(tmp_path, "info", "bad.yaml")
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr.splitlines() == ["flows[1].bag: must be a power of two between 1ms and 128ms, got 12ms"]


# schema


def test_schema_is_json_with_definitions_for_every_field(tmp_path: Path) -> None:
    res = run(tmp_path, "schema")
    assert res.returncode == 0, res.stderr
    schema = json.loads(res.stdout)
    assert schema["title"] == "NetworkSpec"
    assert schema["type"] == "object"
    assert sorted(schema["properties"]) == ["buses", "chains", "classes", "defaults", "description",
                                            "end_systems", "flows", "links", "messages", "name", "processors",
                                            "redundancy", "schedulers", "server_graph", "servers", "switches",
                                            "tasks"]
    assert schema["required"] == ["name"]
    definitions = schema["definitions"]
    for name in ["Defaults", "Redundancy", "TrafficClass", "SchedulerConfig", "EndSystem", "Switch", "Link",
                 "Flow", "Destination", "Duration", "DataSize", "DataRate"]:
        assert name in definitions, name

    refs: list[str] = []

    def collect(node: object) -> None:
        if isinstance(node, dict):
            if "$ref" in node:
                refs.append(node["$ref"])
            for v in node.values():
                collect(v)
        elif isinstance(node, list):
            for v in node:
                collect(v)

    collect(schema)
    assert refs
    for ref in refs:
        assert ref.startswith("#/definitions/"), ref
        assert ref.removeprefix("#/definitions/") in definitions, ref
    assert definitions["Duration"]["type"] == "string"
    assert "ms" in definitions["Duration"]["pattern"]


def test_schema_to_file(tmp_path: Path) -> None:
    res = run(tmp_path, "schema", "-o", "schema.json")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "wrote schema.json\n"
    assert json.loads((tmp_path / "schema.json").read_text()) == json.loads(run(tmp_path, "schema").stdout)


# generate


def test_generate_then_validate_and_determinism(tmp_path: Path) -> None:
    args = ["generate", "afdx", "--vls", "50", "--switches", "3"]
    res = run(tmp_path, *args, "--seed", "4", "-o", "x.yaml")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("wrote x.yaml (50 virtual links, 3 switches x 2 plane(s), 6 end systems; ")
    res = run(tmp_path, "validate", "x.yaml")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("x.yaml: valid: ")
    assert "50 flows (50 virtual links), 2 plane(s)" in res.stdout

    assert run(tmp_path, *args, "--seed", "4", "-o", "y.yaml").returncode == 0
    assert run(tmp_path, *args, "--seed", "5", "-o", "z.yaml").returncode == 0
    x, y, z = ((tmp_path / n).read_text() for n in ["x.yaml", "y.yaml", "z.yaml"])
    assert x == y
    assert x != z
    spec = yaml.safe_load(x)
    assert len(spec["flows"]) == 50
    assert len(spec["switches"]) == 6


def test_generate_sizes_what_it_generates(tmp_path: Path) -> None:
    """`generate afdx --vls 100000 --switches 64` wrote a network whose every one of its 364,888
    routes was unbounded (the tree's top trunks at 1 Gbit/s loaded up to 348 %): the trunks are now
    sized for the load, every port within 80 % of its rate, and the command says so in its line."""
    res = run(tmp_path, "generate", "afdx", "--vls", "100000", "--switches", "64", "-o", "big.json")
    assert res.returncode == 0, res.stderr
    line = res.stdout.strip()
    assert line.startswith("wrote big.json (100000 virtual links, 64 switches x 2 plane(s), 4000 end ")
    assert "10Gbps" in line and "largest port load" in line and len(res.stdout.splitlines()) == 1
    info = json.loads(run(tmp_path, "info", "big.json", "--json").stdout)
    assert info["counts"]["routes"] == 364888 and info["overloaded_ports"] == 0
    largest = max(p["utilisation"] for p in info["ports"])
    assert largest <= 0.8 and f"largest port load {100 * largest:.1f} %" in line
    # End systems' links take defaults.link_rate; trunks carry their own rates.
    doc = json.loads((tmp_path / "big.json").read_text())
    assert doc["defaults"]["link_rate"] == "100Mbps"
    assert all(("rate" in link) == link["from"].startswith("SW") for link in doc["links"])


def test_generate_refuses_what_no_link_carries_in_one_line(tmp_path: Path) -> None:
    res = run(tmp_path, "generate", "afdx", "--vls", "200000", "--end-systems", "2", "--planes", "1")
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.splitlines() == [
        "generate afdx: end system ES1 would receive 18.625 Gbit/s, more than 80 % of the fastest "
        "end-system link (10.000 Gbit/s): more end systems (--end-systems) share the virtual links"
    ]


def test_generate_bad_option_exits_2(tmp_path: Path) -> None:
    res = run(tmp_path, "generate", "afdx", "--vls", "0")
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr == "--vls: must be at least 1, got '0' (rtnetlab generate afdx --help)\n"
    res = run(tmp_path, "generate", "afdx", "--vls", "many")
    assert res.returncode == 2
    assert res.stderr == "--vls: expected a whole number, got 'many' (rtnetlab generate afdx --help)\n"


# convert


def test_convert_yaml_to_json_keeps_the_spec(tmp_path: Path) -> None:
    res = run(tmp_path, "convert", str(SEED002), "b.json")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "wrote b.json\n"
    res = run(tmp_path, "validate", "b.json")
    assert res.returncode == 0, res.stderr
    original = model.load_file(SEED002).spec
    converted = json.loads((tmp_path / "b.json").read_text())
    assert converted == original
    assert model.load_file(tmp_path / "b.json").spec == original
    # And back to YAML: the same description again.
    assert run(tmp_path, "convert", "b.json", "c.yaml").returncode == 0
    assert model.load_file(tmp_path / "c.yaml").spec == original


def test_convert_json_output(tmp_path: Path) -> None:
    res = run(tmp_path, "convert", "--json", str(SEED002), "b.json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {"from": str(SEED002), "to": "b.json", "warnings": []}


def test_convert_refuses_invalid_input_and_writes_nothing(tmp_path: Path) -> None:
    text = SEED002.read_text().replace("lmax: 500B", "lmax: 1600B")
    (tmp_path / "a.yaml").write_text(text)
    res = run(tmp_path, "convert", "a.yaml", "b.json")
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr.splitlines() == [
        "flows[2].lmax: must be an Ethernet frame size between 64B and 1518B, got 1600B"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml"]


def test_convert_to_unknown_format_writes_nothing(tmp_path: Path) -> None:
    res = run(tmp_path, "convert", str(SEED002), "b.txt")
    assert res.returncode == 2
    assert res.stderr.splitlines() == [
        "b.txt: unknown output type '.txt', expected .yaml, .yml, .json or .xml"]
    assert list(tmp_path.iterdir()) == []


# usage


def test_no_arguments_prints_help(tmp_path: Path) -> None:
    res = run(tmp_path)
    text = res.stdout + res.stderr
    assert "Usage: rtnetlab [OPTIONS] COMMAND [ARGS]..." in text
    for command in ["validate", "info", "convert", "schema", "generate"]:
        assert command in text
    # Click (>= 8.2) treats "no arguments" as a usage error: help is shown, the exit code is 2.
    assert res.returncode == 2


def test_help_exits_0(tmp_path: Path) -> None:
    res = run(tmp_path, "--help")
    assert res.returncode == 0
    assert "Usage: rtnetlab [OPTIONS] COMMAND [ARGS]..." in res.stdout


def test_unknown_command_and_missing_argument_exit_2(tmp_path: Path) -> None:
    res = run(tmp_path, "frobnicate")
    assert res.returncode == 2
    assert res.stderr == "frobnicate: no such command of rtnetlab (rtnetlab --help lists them)\n"
    res = run(tmp_path, "validat")
    assert res.stderr == (
        "validat: no such command of rtnetlab (did you mean validate?) (rtnetlab --help lists them)\n"
    )
    res = run(tmp_path, "validate")
    assert res.returncode == 2
    assert res.stderr == "FILE: required, not given (rtnetlab validate --help)\n"


@pytest.mark.parametrize(
    "text, parse, expected",
    [("a, b,c", str, ["a", "b", "c"]), ("1,2", int, [1, 2]), ("0.5", float, [0.5])],
)
def test_comma_list_parses_each_item(text, parse, expected) -> None:
    from rtnetlab.cli.common import comma_list

    assert comma_list("--x", text, parse) == expected


@pytest.mark.parametrize(
    "text, parse, message",
    [
        ("1,,2", int, "--x: expected values separated by commas, got '1,,2'"),
        ("", str, "--x: expected values separated by commas, got ''"),
        ("1,y", float, "--x: expected values separated by commas, got '1,y'"),
        ("1,inf", float, "--x: numbers must be finite, got '1,inf'"),
    ],
)
def test_comma_list_refuses_in_one_line(text, parse, message) -> None:
    from rtnetlab.cli.common import comma_list
    from rtnetlab.errors import UserError

    with pytest.raises(UserError) as e:
        comma_list("--x", text, parse)
    assert str(e.value) == message


def test_comma_list_words_a_refusal_as_its_option_does() -> None:
    """`bad` words the refusal ({item}: the item refused, {text}: the list); a parse raising
    UserError (an item's own rule) keeps its line; items are parsed in order."""
    from rtnetlab.cli.common import comma_list
    from rtnetlab.errors import UserError

    def positive(word: str) -> int:
        if int(word) <= 0:
            raise UserError(f"--x: must be positive, got {word}")
        return int(word)

    assert comma_list("--x", " 3, 1", positive) == [3, 1]
    for text, message in [
        ("3,y,0", "--x: 'y' in '3,y,0' is not whole"),
        ("3,,y", "--x: '' in '3,,y' is not whole"),
        ("3,0,y", "--x: must be positive, got 0"),
    ]:
        with pytest.raises(UserError) as e:
            comma_list("--x", text, positive, bad="{option}: '{item}' in '{text}' is not whole")
        assert str(e.value) == message
