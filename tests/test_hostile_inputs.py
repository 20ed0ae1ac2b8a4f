"""Descriptions that used to hang, raise a traceback, or validate and then fail later: each now
gets one line naming the place and the rule, with exit code 2, through the `rtnetlab` entry point
(run in process, so that a traceback fails the test rather than being printed).

The files are the ones users reported (an alias bomb, a JSON file nested 100,000 deep, ...) or the
smallest description showing each case.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rtnetlab import cli
from rtnetlab.io import formats

NET = """\
name: t
end_systems: [{name: ES1}, {name: ES2}]
switches: [{name: SW1}]
links: [{from: ES1, to: SW1}, {from: SW1, to: ES2}]
flows:
  - {name: VL1, type: virtual_link, bag: 2ms, lmin: 64B, lmax: 200B, source: ES1, destinations: [ES2]}
"""

RAISE = "raise it with --limit {0}=N or RTNETLAB_LIMITS={0}=N"
DEPTH = f"lists and mappings nest deeper than the limit of 64 levels ({RAISE.format('depth')})"


@pytest.fixture(autouse=True)
def _no_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts from the default limits (options are kept by the module between runs)."""
    monkeypatch.delenv(formats.LIMITS_ENV, raising=False)
    formats.set_limits([])


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = cli.main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def refused(capsys: pytest.CaptureFixture[str], path: Path, *options: str) -> list[str]:
    """Runs `validate` on `path`: exit 2, nothing on stdout; the lines on stderr."""
    rc, out, err = run(capsys, "validate", str(path), *options)
    assert (rc, out) == (2, ""), err
    return err.splitlines()


def write(tmp_path: Path, text: str, name: str = "net.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# --- A. Hostile files: no hang, no traceback. ---------------------------------------------------


def test_alias_bomb_stops_at_the_alias_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 9 levels of 9 references: 9^9 = 387 million lists if expanded (the reported 20-line file).
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    p = write(tmp_path, "name: x\n" + "\n".join(lines) + "\n")
    # a1 to a5 copy 672,588 values (a_k holds 1 + 9 a_(k-1), a0 10); a6's first reference to
    # a5 (597,871 more, line 8) passes 1,000,000.
    assert refused(capsys, p) == [
        f"{p}:8:10: aliases copy more values than the limit of 1,000,000 ({RAISE.format('aliases')})"
    ]


def test_json_nested_100000_deep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, "[" * 100_000 + "]" * 100_000, "net.json")
    [line] = refused(capsys, p)
    assert line.endswith(DEPTH)
    assert line.startswith(f"{p}:1:6")  # the 65th '[' (or just after it)


@pytest.mark.parametrize("depth", [500, 999, 5000])
def test_yaml_nested_deep(tmp_path: Path, capsys: pytest.CaptureFixture[str], depth: int) -> None:
    p = write(tmp_path, "name: x\nd: " + "[" * depth + "]" * depth + "\n")
    assert refused(capsys, p) == [
        f"{p}:2:259: lists and mappings nest deeper than YAML's flow style allows here (255 levels)"
    ]
    # Block style, one list per line, stops at the depth limit itself.
    block = "name: x\nd:\n" + "".join("  " * i + "-\n" for i in range(depth))
    p = write(tmp_path, block, "block.yaml")
    [line] = refused(capsys, p)
    assert line == f"{p}:66:127: {DEPTH}"


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        ("name: x\nclasses: [{name: c, priority: " + "9" * 4400 + "}]\n", "net.yaml",
         "2:31: the number 999999999999999999999999... is too large (at most 64 bits)"),
        ('{"name": "x", "classes": [{"name": "c", "priority": ' + "9" * 4400 + "}]}", "net.json",
         "1:4452: not valid JSON: number out of range"),
        ("name: x\ntasks:\n- name: t\n  wcet: 1ms\n  !!int period: 15ms\n", "net.yaml",
         "5:3: 'period' is not an integer (tagged !!int)"),
        ("name: !!float abc\n", "net.yaml", "1:7: 'abc' is not a number (tagged !!float)"),
        ("name: x\nlinks:\n- {from: ES1, !!timestamp to: SW1}\n", "net.yaml",
         "3:15: 'to' is not a date (tagged !!timestamp)"),
        ("name: !!python/object/apply:os.system ['true']\n", "net.yaml",
         "1:7: the tag !!python/object/apply:os.system is not allowed: a description holds text, numbers, "
         "true/false, lists and mappings"),
        ("name: a\nname: b\n", "net.yaml", "2:1: key 'name' is given twice in one mapping"),
        ('{"name": "a", "name": "b"}', "net.json", "1:20: key 'name' is given twice in one mapping"),
        ("name: a\nw: .inf\n", "net.yaml", "2:4: '.inf' is not a finite number"),
    ],
)
def test_scalars_and_tags_that_used_to_raise(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                             name: str, expected: str) -> None:
    p = write(tmp_path, text, name)
    assert refused(capsys, p) == [f"{p}:{expected}"]


def test_xml_with_an_unknown_encoding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, '<?xml version="1.0" encoding="abc"?><elements/>', "net.xml")
    assert refused(capsys, p) == [f"{p}: not readable XML: unknown encoding: abc"]


def test_file_size_limit_applies_to_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("net.yaml", "net.json", "net.xml"):
        p = write(tmp_path, "x" * 2000, name)
        assert refused(capsys, p, "--limit", "size=1000") == [
            f"{p}: the file has 2,000 bytes, more than the limit of 1,000 ({RAISE.format('size')})"
        ]


# --- Limits: where they are set, how they are named. ---------------------------------------------


def test_limits_by_option_before_or_after_the_command_and_by_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    p = write(tmp_path, NET)
    assert run(capsys, "validate", str(p))[0] == 0
    for args in (["--limit", "flows=1", "validate", str(p)], ["validate", str(p), "--limit=flows=1"]):
        assert run(capsys, *args)[0] == 0
    # One flow, a limit of... none below 1: a lower limit is refused as an option error.
    rc, _, err = run(capsys, "--limit", "flows=0", "validate", str(p))
    assert (rc, err) == (2, "--limit: flows: must be at least 1, got 0\n")
    two = NET + "  - {name: VL2, type: virtual_link, bag: 2ms, lmin: 64B, lmax: 200B, source: ES1, " \
                "destinations: [ES2]}\n"
    p2 = write(tmp_path, two, "two.yaml")
    expected = [f"flows: 2 flows, more than the limit of 1 ({RAISE.format('flows')})"]
    assert refused(capsys, p2, "--limit", "flows=1") == expected
    monkeypatch.setenv(formats.LIMITS_ENV, "flows=1")
    assert refused(capsys, p2) == expected
    # The option comes after the environment.
    assert run(capsys, "validate", str(p2), "--limit", "flows=2")[0] == 0
    monkeypatch.setenv(formats.LIMITS_ENV, "flow=1")
    rc, _, err = run(capsys, "validate", str(p2))
    assert rc == 2 and err.startswith(f"{formats.LIMITS_ENV}: unknown limit 'flow' (limits: size, depth, ")


def test_paths_and_nodes_limits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, NET)
    assert refused(capsys, p, "--limit", "nodes=2") == [
        f"end_systems: 3 nodes, more than the limit of 2 ({RAISE.format('nodes')})"
    ]
    assert run(capsys, "--limit", "paths=1", "validate", str(p))[0] == 0  # one path: within the limit
    multi = NET.replace("destinations: [ES2]", "destinations: [ES2, ES3]").replace(
        "[{name: ES1}, {name: ES2}]", "[{name: ES1}, {name: ES2}, {name: ES3}]").replace(
        "{from: SW1, to: ES2}]", "{from: SW1, to: ES2}, {from: SW1, to: ES3}]")
    p = write(tmp_path, multi, "multi.yaml")
    assert refused(capsys, p, "--limit", "paths=1") == [
        f"flows: 2 paths (flow, destination, plane), more than the limit of 1 ({RAISE.format('paths')})"
    ]


def test_error_listing_is_capped_and_counts_the_rest(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, "name: x\n" + "".join(f"k{i:06d}: 1\n" for i in range(250)))
    lines = refused(capsys, p)
    assert len(lines) == 101
    assert lines[0].startswith("k000000: unknown key, expected one of name, ")
    assert lines[99].startswith("k000099: unknown key")
    assert lines[100] == "(more): 150 more errors not listed (list up to N with --limit errors=N)"
    lines = refused(capsys, p, "--limit", "errors=3")
    assert lines[3] == "(more): 247 more errors not listed (list up to N with --limit errors=N)"


# --- B. Numbers the model cannot stand behind. ------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("name: t\n", "name: t\ndefaults: {link_rate: 1e308Mbps}\n",
         "defaults.link_rate: is too large to be a data rate, got '1e308Mbps'"),
        ("name: t\n", "name: t\ndefaults: {link_rate: 20000Gbps}\n",
         "defaults.link_rate: must be 0 or between 1bps and 10 Tbps (10000Gbps), got '20000Gbps'"),
        ("name: t\n", "name: t\ndefaults: {technological_latency: 1e308s}\n",
         "defaults.technological_latency: must be a whole number of nanoseconds, at most 1 day (86400s), "
         "got '1e308s'"),
        ("name: t\n", "name: t\ndefaults: {propagation_delay: 0.5ns}\n",
         "defaults.propagation_delay: must be a whole number of nanoseconds, at most 1 day (86400s), "
         "got '0.5ns'"),
        ("{name: ES2}", "{name: ES2, receive_latency: 2e5s}",
         "end_systems[1].receive_latency: must be a whole number of nanoseconds, at most 1 day (86400s), "
         "got '2e5s'"),
        ("name: t\n", "name: t\nschedulers: {tb: {kind: token_bucket, rate: 1Mbps, burst: 1e300B}}\n",
         "schedulers.tb.burst: must be a whole number of bits, at most 1 TiB (1099511627776B), got '1e300B'"),
        ("name: t\n", "name: t\nclasses: [{name: c}]\nschedulers: {d: {kind: table, table_kind: dtable, "
                      "entries: [{class: c, weight: 1e300B}]}}\n",
         "schedulers.d.entries: must be a whole number of bits, at most 1 TiB (1099511627776B), "
         "got '1e300B'"),
        ("name: t\n", "name: t\nclasses: [{name: c}]\nschedulers: {w: {kind: wf2q, weights: {c: 1e300}}}\n",
         "schedulers.w.weights.c: must be a positive number, at most 1e12, got 1e300"),
        ("name: t\n",
         "name: t\nclasses: [{name: c}]\nschedulers: {w: {kind: wrr, weights: {c: 4294967295}}}\n",
         "schedulers.w.weights.c: must be a whole number from 1 to 1000000, got 4294967295"),
        ("name: t\n", 'name: "t\\0"\n', "1:7: text may not hold control characters, got U+0000 in 't\\0'"),
        ("{name: ES2}", "{name: ' ES2'}",
         "end_systems[1].name: must not begin or end with a space, got ' ES2'"),
        ("{name: ES2}", '{name: "E\\tS"}',
         "end_systems[1].name: must not hold tabs or line breaks, got 'E\\tS'"),
    ],
)
def test_quantities_and_names_out_of_range(tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str,
                                           new: str, expected: str) -> None:
    assert old in NET
    p = write(tmp_path, NET.replace(old, new, 1))
    lines = refused(capsys, p)
    assert expected in [line.removeprefix(f"{p}:") for line in lines], lines


def test_bus_server_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = """\
name: t
buses: [{name: can0, bit_rate: 500kbps}]
servers: [{name: s, bus: can0, sender: n1, budget: 4294967295, replenishment_period: 10ms, priority: 1}]
messages: [{name: m, bus: can0, sender: n1, payload: 8B, period: 10ms, server: s}]
"""
    assert refused(capsys, write(tmp_path, text)) == [
        "servers[0].budget: must be a whole number from 1 to 1000000, got 4294967295"
    ]


# --- C. Priorities written the IEEE 802.1p way. ---------------------------------------------------

PCP = """\
name: t
classes: [{name: control, %s}, {name: bulk, %s}]
defaults: {scheduler: static_priority}
end_systems: [{name: A}, {name: B}, {name: C}]
switches: [{name: SW}]
links: [{from: A, to: SW}, {from: B, to: SW}, {from: SW, to: C}]
flows:
  - {name: ctl, type: virtual_link, bag: 1ms, lmin: 64B, lmax: 100B, source: A, destinations: [C],
     class: control}
  - {name: big, type: virtual_link, bag: 1ms, lmin: 64B, lmax: 1518B, source: B, destinations: [C],
     class: bulk}
"""


def bounds(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, float]:
    rc, out, err = run(capsys, "analyze", str(path), "--json")
    assert rc == 0, err
    return {f["flow"]: f["delay_us"] for f in json.loads(out)["flows"]}


def test_pcp_7_is_served_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # pcp 7 (802.1p, highest) is priority 0: the same order written both ways gives the same bounds,
    # and `control` waits for at most one `big` frame rather than the other way round.
    by_pcp = bounds(capsys, write(tmp_path, PCP % ("pcp: 7", "pcp: 0"), "pcp.yaml"))
    by_priority = bounds(capsys, write(tmp_path, PCP % ("priority: 0", "priority: 7"), "prio.yaml"))
    assert by_pcp == by_priority
    assert by_pcp["ctl"] < by_pcp["big"]
    reversed_ = bounds(capsys, write(tmp_path, PCP % ("pcp: 0", "pcp: 7"), "rev.yaml"))
    assert reversed_["ctl"] > by_pcp["ctl"]


@pytest.mark.parametrize(
    ("control", "bulk", "expected"),
    [
        ("pcp: 7, priority: 0", "pcp: 0",
         "classes[0]: give priority (0 is served first) or pcp (IEEE 802.1p: 7 is served first), not both"),
        ("pcp: 8", "pcp: 0",
         "classes[0]: pcp must be an IEEE 802.1p priority code point from 0 to 7 (7 is served first), got 8"),
        ("priority: 0", "pcp: 0",
         "classes[1].pcp: classes[0] gives priority (0 is served first) and this class pcp (IEEE 802.1p, "
         "7 is served first): give every class's priority the same way"),
    ],
)
def test_pcp_mistakes(tmp_path: Path, capsys: pytest.CaptureFixture[str], control: str, bulk: str,
                      expected: str) -> None:
    assert expected in refused(capsys, write(tmp_path, PCP % (control, bulk)))


def test_schema_says_which_way_priorities_go() -> None:
    from rtnetlab import model

    props = model.schema()["definitions"]["TrafficClass"]["properties"]
    assert "0 is served FIRST" in props["priority"]["description"]
    assert "7 is served FIRST" in props["pcp"]["description"]
