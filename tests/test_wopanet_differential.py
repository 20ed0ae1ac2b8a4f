"""WOPANet import and `afdx-naive` against an independent reference of the WOPANet rules.

The reference (tests/wopanet_reference.py) is written from the rules in
shared/oracles/README.md ("wopanet/"), in exact fractions; it must first reproduce the eight
published samples exactly, then `rtnetlab analyze --method afdx-naive --format wopanet-res` (the
CLI, as a user runs it) must agree with it on random WOPANet files: switches in lines, trees and
meshes, multicast flows over several branches, mixed link rates, technological latencies,
payloads under the 84-byte floor, periods that are and are not BAGs, release jitters, explicit
paths and shortest-path targets. `make test-slow` runs the larger campaign.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import wopanet_reference as ref
from rtnetlab import model
from rtnetlab.errors import ModelError

SAMPLES = ["3ESE", "EE", "ES2E_M", "ESE", "ESE_F3", "ESSE", "ISAE_TEST_1", "STAR_3"]


@pytest.fixture(scope="module")
def oracle_dir(shared_dir: Path) -> Path:
    return shared_dir / "oracles" / "wopanet"


def product(cli: Path, xml: Path) -> dict:
    out = xml.with_name(xml.stem + "_res.xml")
    r = subprocess.run([str(cli), "analyze", "--method", "afdx-naive", "--format", "wopanet-res", str(xml),
                        "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return ref.read_results(out)


@pytest.mark.parametrize("name", SAMPLES)
def test_reference_reproduces_the_published_sample(oracle_dir: Path, name: str) -> None:
    expected = ref.read_results(oracle_dir / f"{name}_res.xml")
    assert ref.differences(ref.analyze(ref.read(oracle_dir / f"{name}.xml")), expected) == []


def test_the_comparison_sees_every_kind_of_difference(oracle_dir: Path) -> None:
    """A wrong delay, jitter, port delay, backlog, total or load is reported, not passed over."""
    good = ref.analyze(ref.read(oracle_dir / "ISAE_TEST_1.xml"))
    got = ref.read_results(oracle_dir / "ISAE_TEST_1_res.xml")
    got["delays"][("Flow1", "ES#SW2.0")] += 1
    got["jitters"][("Flow2", "ES#SW2.3")] -= 1
    backlog, delay = got["ports"][("SW1", "5")]
    got["ports"][("SW1", "5")] = (backlog, delay + 0.001)
    got["ports"][("SW2", "0")] = (backlog + 1, got["ports"][("SW2", "0")][1])
    got["totals"]["SW2"] = (47950.0, "73.1%", 65536.0)
    got["loads"]["Edge5"]["direct"] = (1.0537e7, "10.5%")
    del got["ports"][("SW2", "4")]
    lines = ref.differences(good, got)
    assert len(lines) == 7, lines
    for what in ("delay Flow1", "jitter Flow2", "SW1:5 delay", "SW2:0 backlog", "SW2 total", "Edge5 direct",
                 "SW2:4"):
        assert any(what in line for line in lines), (what, lines)


def test_generated_files_cover_the_features(tmp_path: Path) -> None:
    """The fast campaign's files hold what the samples do not (so that agreeing means something)."""
    seen: dict[str, int] = {}
    for seed in range(FAST):
        net = ref.read(_write(tmp_path, seed))
        rates = {r for _, r in net.links}
        feats = {
            "several switches": len(net.switches) > 1,
            "mesh (switch cycle)": sum(1 for a, b in net.ports if "SW" in a and "SW" in b) // 2
            >= len(net.switches),
            "mixed link rates": len(rates) > 1,
            "tech-latency": any(v > 0 for v in net.latency_s.values()),
            "several flows from one station": len({f.source for f in net.flows}) < len(net.flows),
            "multicast over branches": any(len({r[-2] for _, r in f.targets}) > 1 for f in net.flows),
            "payload under the floor": any(f.min_frame_bits == ref.FLOOR_BYTES * 8 for f in net.flows),
            "period not a BAG": any(f.period_s * 1000 not in ref.BAGS_MS for f in net.flows),
            "min < max payload": any(f.min_frame_bits < f.frame_bits for f in net.flows),
            "release jitter": any(f.jitter_s for f in net.flows),
        }
        for k, v in feats.items():
            seen[k] = seen.get(k, 0) + int(v)
    text = "".join(_write(tmp_path, s).read_text() for s in range(FAST))
    assert 'mode="M"' in text and "<target name=" in text and "/>\n" in text
    assert all(n > 0 for n in seen.values()), seen


FAST = 50


def _write(tmp_path: Path, seed: int) -> Path:
    path = tmp_path / f"random{seed}.xml"
    path.write_text(ref.generate(seed))
    return path


def _agree(cli: Path, tmp_path: Path, seeds: range) -> None:
    disagreements = {}
    for seed in seeds:
        xml = _write(tmp_path, seed)
        lines = ref.differences(ref.analyze(ref.read(xml)), product(cli, xml))
        if lines:
            disagreements[seed] = lines[:5]
    assert disagreements == {}


def test_random_networks_agree_with_the_reference(rtnetlab_cli: Path, tmp_path: Path) -> None:
    _agree(rtnetlab_cli, tmp_path, range(FAST))


@pytest.mark.slow
def test_random_networks_agree_with_the_reference_campaign(rtnetlab_cli: Path, tmp_path: Path) -> None:
    _agree(rtnetlab_cli, tmp_path, range(1000, 1400))


# ---------------------------------------------------------------------------------------------
# Disagreements found, pinned


NON_BAG = """<?xml version="1.0" encoding="UTF-8"?>
<elements>
   <network name="NON_BAG" overhead="67" shortest-path-policy="DIJKSTRA" technology="AFDX"
            transmission-capacity="100Mbps" x-type="FULL"/>
   <station name="A" service-policy="FIRST_IN_FIRST_OUT" transmission-capacity="100Mbps"/>
   <station name="B" service-policy="FIRST_IN_FIRST_OUT" transmission-capacity="100Mbps"/>
   <switch name="S" service-policy="FIRST_IN_FIRST_OUT" switching-technique="CUT_THROUGH" tech-latency="0"
           transmission-capacity="100Mbps"/>
   <link from="A" fromPort="0" name="E1" to="S" toPort="0" transmission-capacity="100Mbps"/>
   <link from="S" fromPort="1" name="E2" to="B" toPort="0" transmission-capacity="100Mbps"/>
   <flow deadline="3" jitter="0" max-payload="1000" min-payload="100" name="F" period="3" priority="Low"
         source="A">
      <target name="B">
         <path node="S"/>
         <path node="B"/>
      </target>
   </flow>
</elements>
"""


def test_period_not_a_bag_keeps_its_min_payload(rtnetlab_cli: Path, tmp_path: Path) -> None:
    """A period that is no BAG (3 ms) with min-payload < max-payload: the jitter's Lmin is the
    min-payload's frame, as for a BAG period (the import used to keep the largest frame only).

    Hand derivation: frame 1067 B = 8536 b at 100 Mb/s -> source port 85.36 µs; burst after it
    8536 + (8536 / 3 ms) × 85.36 µs = 8778.878 b -> switch port 87.789 µs, backlog 1098 B;
    end to end 173.149 -> 174 µs. Lmin = 100 + 67 = 167 B = 1336 b -> 13.36 µs over the one switch
    hop: jitter 174 - 13 = 161 µs (with the largest frame instead: 174 - 85 = 89)."""
    xml = tmp_path / "NON_BAG.xml"
    xml.write_text(NON_BAG)
    flow = model.load_file(xml).spec["flows"][0]
    assert (flow["type"], flow["size"], flow["min_size"]) == ("periodic", "1047B", "147B")
    got = product(rtnetlab_cli, xml)
    assert got["delays"] == {("F", "B"): 174.0}
    assert got["jitters"] == {("F", "B"): 161.0}
    assert got["ports"] == {("S", "1"): (1098.0, 87.789)}
    assert ref.differences(ref.analyze(ref.read(xml)), got) == []


# ---------------------------------------------------------------------------------------------
# What WOPANet files allow and the model cannot take: refused in one line naming the file's line


TOPOLOGY = """<?xml version="1.0" encoding="UTF-8"?>
<elements>
   <network name="T" overhead="{overhead}" transmission-capacity="100Mbps"/>
   <station name="A"/>
   <station name="B"/>
   <station name="C"/>
   <switch name="S1" tech-latency="0"/>
   <switch name="S2" tech-latency="0"/>
   <switch name="S3" tech-latency="0"/>
   <link from="A" fromPort="0" name="E1" to="S1" toPort="0"/>
   <link from="S1" fromPort="1" name="E2" to="S2" toPort="0"/>
   <link from="S1" fromPort="2" name="E3" to="S3" toPort="0"/>
   <link from="S3" fromPort="1" name="E4" to="S2" toPort="{s2_port}"/>
   <link from="S2" fromPort="2" name="E5" to="B" toPort="0"/>
   <link from="S2" fromPort="3" name="E6" to="C" toPort="0"/>
{flows}</elements>
"""
ROUTE_B = '<path node="S1"/><path node="S2"/><path node="B"/>'


def _flow(targets: str, period: str = "1", max_p: str = "100", min_p: str = "100") -> str:
    return (f'   <flow name="F" source="A" period="{period}" max-payload="{max_p}" min-payload="{min_p}">\n'
            f"{targets}   </flow>\n")


REFUSED = {
    # (the file's flows, overhead, S2's port of E4) -> the line of the message and its rule
    "multicast paths that are no tree": (
        _flow(f'      <target mode="M" name="B">{ROUTE_B}</target>\n'
              '      <target mode="M" name="C"><path node="S1"/><path node="S3"/><path node="S2"/>'
              '<path node="C"/></target>\n'),
        67, 1, ":16: <flow name='F'>: destinations: the paths must form a tree"),
    "a target twice": (
        _flow(f'      <target mode="M" name="B">{ROUTE_B}</target>\n'
              '      <target mode="M" name="B"/>\n'),
        67, 1, ":18: <target name='B'>: must not repeat a destination"),
    "a path through a station": (
        _flow(f'      <target name="C">{ROUTE_B}<path node="C"/></target>\n'),
        67, 1, ":17: <target name='C'>: path node 'B': 'B' is an end system; only switches forward"),
    "a path skipping a link": (
        _flow('      <target name="B"><path node="S2"/><path node="B"/></target>\n'),
        67, 1, ":17: <target name='B'>: path node 'S2': no link from 'A' to 'S2'"),
    "the source as its own target": (
        _flow('      <target name="A"/>\n'), 67, 1,
        ":17: <target name='A'>: must not be the flow's own source"),
    "min-payload above max-payload, BAG": (
        _flow('      <target name="B"/>\n', min_p="200"), 67, 1,
        ":16: <flow name='F'>: min-payload=200 exceeds max-payload=100"),
    "min-payload above max-payload, no BAG": (
        _flow('      <target name="B"/>\n', period="3", min_p="200"), 67, 1,
        ":16: <flow name='F'>: min-payload=200 exceeds max-payload=100"),
    "a frame longer than Ethernet's": (
        _flow('      <target name="B"/>\n', max_p="1467"), 80, 1,
        ":16: <flow name='F'>: max-payload=1467 makes a 1527-byte Ethernet frame, more than 1518 B"),
    "a switch port taking two links": (
        _flow('      <target name="B"/>\n'), 67, 0,
        ":13: <link name='E4'>: to_port: port '0' of 'S2' is already used"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_the_model_cannot_take_is_refused_at_its_line(rtnetlab_cli: Path, tmp_path: Path,
                                                           case: str) -> None:
    flows, overhead, s2_port, message = REFUSED[case]
    xml = tmp_path / "t.xml"
    xml.write_text(TOPOLOGY.format(overhead=overhead, s2_port=s2_port, flows=flows))
    out = tmp_path / "t_res.xml"
    r = subprocess.run([str(rtnetlab_cli), "analyze", "--method", "afdx-naive", "--format", "wopanet-res",
                        str(xml), "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [r.stderr.strip()] and r.stderr.startswith(f"{xml}{message}"), r.stderr
    assert "Traceback" not in r.stderr and not out.exists()


WARNED = {
    "a shortest path with a tie": (
        TOPOLOGY.replace('   <link from="S3" fromPort="1" name="E4" to="S2" toPort="{s2_port}"/>\n',
                         '   <link from="S3" fromPort="1" name="E4" to="B" toPort="1"/>\n'),
        _flow('      <target name="B"/>\n'),
        ":17: <target name='B'>: 2 paths of 3 hops lead there; the one through the link listed first"),
    "several targets, not all multicast": (
        TOPOLOGY, _flow('      <target name="B"/>\n      <target mode="M" name="C"/>\n'),
        ":16: <flow name='F'>: 1 of its 2 targets have no mode=\"M\"; all are read as one multicast flow"),
}


@pytest.mark.parametrize("case", sorted(WARNED))
def test_choices_the_file_leaves_open_are_warned(rtnetlab_cli: Path, tmp_path: Path, case: str) -> None:
    """Read (WOPANet's own tools may choose otherwise), with a warning at the line."""
    topology, flows, message = WARNED[case]
    xml = tmp_path / "t.xml"
    xml.write_text(topology.format(overhead=67, s2_port=1, flows=flows))
    r = subprocess.run([str(rtnetlab_cli), "validate", str(xml)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"warning: {xml}{message}" in r.stdout + r.stderr


def test_export_and_import_again_keeps_every_result(rtnetlab_cli: Path, tmp_path: Path) -> None:
    """WOPANet -> YAML -> WOPANet (`rtnetlab convert`): the file written back gives the reference's
    results of the original (payload floor, min-payload of periods that are no BAGs, rates,
    latencies and paths survive the export)."""
    for seed in range(8):
        xml = _write(tmp_path, seed)
        yaml_file, back = tmp_path / f"r{seed}.yaml", tmp_path / f"back{seed}.xml"
        for a, b in ((xml, yaml_file), (yaml_file, back)):
            r = subprocess.run([str(rtnetlab_cli), "convert", str(a), str(b)], capture_output=True, text=True,
                               timeout=120)
            assert r.returncode == 0, r.stderr
        assert ref.differences(ref.analyze(ref.read(xml)), product(rtnetlab_cli, back)) == [], seed


RING = """<?xml version="1.0" encoding="UTF-8"?>
<elements>
   <network name="RING" overhead="67" transmission-capacity="100Mbps"/>
   <station name="A"/><station name="B"/><station name="C"/>
   <switch name="S1" tech-latency="0"/><switch name="S2" tech-latency="0"/>
   <switch name="S3" tech-latency="0"/>
   <link from="A" fromPort="0" name="EA" to="S1" toPort="0"/>
   <link from="B" fromPort="0" name="EB" to="S2" toPort="0"/>
   <link from="C" fromPort="0" name="EC" to="S3" toPort="0"/>
   <link from="S1" fromPort="1" name="E12" to="S2" toPort="1"/>
   <link from="S2" fromPort="2" name="E23" to="S3" toPort="1"/>
   <link from="S3" fromPort="2" name="E31" to="S1" toPort="2"/>
   <flow name="F1" source="A" period="1" max-payload="1000" min-payload="1000">
      <target name="C"><path node="S1"/><path node="S2"/><path node="S3"/><path node="C"/></target></flow>
   <flow name="F2" source="B" period="1" max-payload="1000" min-payload="1000">
      <target name="A"><path node="S2"/><path node="S3"/><path node="S1"/><path node="A"/></target></flow>
   <flow name="F3" source="C" period="1" max-payload="1000" min-payload="1000">
      <target name="B"><path node="S3"/><path node="S1"/><path node="S2"/><path node="B"/></target></flow>
</elements>
"""


def test_a_ring_of_port_dependencies_takes_the_fixed_point(rtnetlab_cli: Path, tmp_path: Path) -> None:
    """The README's rules need the ports in order; on a ring they are equations, and the bounds are
    their fixed point (the random files stay feed-forward, so this case is pinned by hand).

    Hand derivation: b1 = 8536 b × 1.08536 = 9264.633 b after the source port; each ring port
    serves one flow's first switch hop (b1) and another's second (b1 + r x), r = 8.536 Mb/s:
    x = (2 b1 + r x) / C -> x = 2 b1 / (C - r) = 202.585 µs, backlog ⌈(2 b1 + r x) / 8⌉ = 2533 B.
    The last port: (b1 + 2 r x) / C = 127.232 µs, ⌈(b1 + 2 r x) / 8⌉ = 1591 B. End to end
    85.36 + 2 x + 127.232 = 617.77 -> 618 µs; jitter 618 - ⌊3 × 85.36⌋ = 362 µs."""
    xml = tmp_path / "RING.xml"
    xml.write_text(RING)
    out = tmp_path / "RING_res.xml"
    r = subprocess.run([str(rtnetlab_cli), "analyze", "--method", "afdx-naive", "--format", "wopanet-res",
                        str(xml), "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "cyclic port dependency" in r.stderr
    got = ref.read_results(out)
    assert set(got["delays"].values()) == {618.0} and set(got["jitters"].values()) == {362.0}
    assert {got["ports"][(s, p)] for s, p in (("S1", "1"), ("S2", "2"), ("S3", "2"))} == {(2533.0, 202.585)}
    assert {got["ports"][(s, "0")] for s in ("S1", "S2", "S3")} == {(1591.0, 127.232)}


def test_periodic_min_size_is_checked_like_a_frame() -> None:
    """The native key the import fills for periods that are no BAGs: a frame, at most `size`."""
    def spec(min_size: str) -> dict:
        return {"name": "n", "end_systems": [{"name": "a"}, {"name": "b"}],
                "links": [{"from": "a", "to": "b"}],
                "flows": [{"name": "f", "type": "periodic", "period": "3ms", "size": "547B",
                           "min_size": min_size, "source": "a", "destinations": ["b"]}]}

    assert model.load_data(spec("64B")).resolved()["flows"][0]["burst"] == 567 * 8
    with pytest.raises(ModelError) as e:
        model.load_data(spec("600B"))
    assert e.value.lines == ["flows[0].min_size: must not exceed size (547B), got 600B"]
    with pytest.raises(ModelError) as e:
        model.load_data(spec("40B"))
    assert e.value.lines == [
        "flows[0].min_size: must be an Ethernet frame size between 64B and 1518B, got 40B"]


def test_a_wopanet_file_read_as_data_stays_plain(oracle_dir: Path) -> None:
    """Only `load_file` takes the located description; readers of plain data (sweeps, cloud)
    still get a dict that YAML can write."""
    import yaml

    from rtnetlab.io import formats

    data = formats.read(oracle_dir / "ESE.xml")
    assert type(data) is dict and "AFDX Flow 1" in yaml.safe_dump(data)
    assert model.load_file(oracle_dir / "ESE.xml").warnings == []
