"""WOPANet XML import/export and result files, checked against the WOPANet samples.

Oracle: shared/oracles/wopanet/ (WOPANets / Open-Timaeus-Net samples, ISAE-SUPAERO), each X.xml
with its reference result X_res.xml. The link loads of every _res.xml must come out of
`rtnetlab info` exactly.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import yaml

from rtnetlab import model
from rtnetlab.errors import UserError
from rtnetlab.io import wopanet

ORACLE_DIR = Path(__file__).resolve().parents[2] / "shared" / "oracles" / "wopanet"
SAMPLES = sorted(p.stem for p in ORACLE_DIR.glob("*.xml") if not p.stem.endswith("_res")) or ["<missing>"]


@pytest.fixture(scope="module")
def oracle_dir(shared_dir: Path) -> Path:
    d = shared_dir / "oracles" / "wopanet"
    if not d.is_dir():
        pytest.fail(f"{d} not found", pytrace=False)
    return d


def run_cli(cli: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, timeout=120)


def info_json(cli: Path, path: Path) -> dict:
    r = run_cli(cli, "info", "--json", path)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def canonical(el: ET.Element) -> tuple:
    """An element with its attributes and children, ignoring the order of siblings."""
    return (el.tag, tuple(sorted(el.attrib.items())), tuple(sorted(canonical(c) for c in el)))


def test_all_samples_present(oracle_dir: Path) -> None:
    names = sorted(p.stem for p in oracle_dir.glob("*.xml") if not p.stem.endswith("_res"))
    assert names == SAMPLES
    assert len(names) == 8
    for n in names:
        assert (oracle_dir / f"{n}_res.xml").is_file()


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_imports_and_validates(oracle_dir: Path, name: str) -> None:
    path = oracle_dir / f"{name}.xml"
    net = model.load_file(path)
    assert net.warnings == []
    root = ET.parse(path).getroot()
    spec = net.spec
    assert spec["name"] == root.find("network").get("name")
    assert [e["name"] for e in spec["end_systems"]] == [e.get("name") for e in root.iter("station")]
    assert [s["name"] for s in spec["switches"]] == [s.get("name") for s in root.iter("switch")]
    assert [lk["name"] for lk in spec["links"]] == [lk.get("name") for lk in root.iter("link")]
    for lk, el in zip(spec["links"], root.iter("link"), strict=True):
        assert (lk["from"], lk["from_port"], lk["to"], lk["to_port"]) == (
            el.get("from"), el.get("fromPort"), el.get("to"), el.get("toPort"))
    assert [f["name"] for f in spec["flows"]] == [f.get("name") for f in root.iter("flow")]
    for f, el in zip(spec["flows"], root.iter("flow"), strict=True):
        assert f["type"] == "virtual_link" and f["bag"] == "1ms"
        assert f["lmax"] == f"{int(el.get('max-payload')) + 47}B"
        assert f["class"] == "Low"
        targets = el.findall("target")
        assert [d["node"] for d in f["destinations"]] == [t.get("name") for t in targets]
        for d, t in zip(f["destinations"], targets, strict=True):
            assert d["path"] == [el.get("source")] + [p.get("node") for p in t.findall("path")]


@pytest.mark.parametrize("name", SAMPLES)
def test_info_link_loads_match_res(oracle_dir: Path, rtnetlab_cli: Path, name: str) -> None:
    info = info_json(rtnetlab_cli, oracle_dir / f"{name}.xml")
    got = {lk["name"]: lk for lk in info["links"]}
    res = ET.parse(oracle_dir / f"{name}_res.xml").getroot()
    edges = res.find("load").findall("edge")
    assert sorted(got) == sorted(e.get("name") for e in edges)
    for e in edges:
        for usage in e.findall("usage"):
            want = float(usage.get("value"))
            have = got[e.get("name")][f"{usage.get('type')}_bps"]
            assert have == pytest.approx(want, rel=1e-9, abs=1e-9), (e.get("name"), usage.get("type"))


def test_frame_rule() -> None:
    """payload p -> Ethernet frame max(p + overhead - 20, 64) B, 20 B more on the wire."""
    xml = """<elements>
   <network name="n" overhead="{oh}" transmission-capacity="100Mbps"/>
   <station name="a"/><station name="b"/>
   <link from="a" to="b" name="ab"/>
   <flow name="f" source="a" period="2" max-payload="{hi}" min-payload="{lo}" jitter="0.5">
      <target name="b"/>
   </flow>
</elements>"""
    cases = [(67, 1000, 1, "1047B", "64B"), (67, 1471, 17, "1518B", "64B"), (30, 100, 50, "110B", "64B"),
             (67, 0, 0, "64B", "64B")]
    for oh, hi, lo, lmax, lmin in cases:
        spec = read_text(xml.format(oh=oh, hi=hi, lo=lo))
        f = spec["flows"][0]
        assert (f["type"], f["bag"], f["lmax"], f["lmin"], f["release_jitter"]) == (
            "virtual_link", "2ms", lmax, lmin, "0.5ms")
        assert spec["defaults"]["interframe_overhead"] == "20B"
        assert spec["defaults"]["link_rate"] == "100Mbps" and "rate" not in spec["links"][0]
    with pytest.raises(UserError, match="more than 1518 B"):
        read_text(xml.format(oh=67, hi=1472, lo=0))


def read_text(text: str, name: str = "net.xml") -> dict:
    """Reads WOPANet text through a file, as users do."""
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / name
        p.write_text(text, encoding="utf-8")
        return wopanet.read(p)


def test_empty_target_is_shortest_path(oracle_dir: Path, tmp_path: Path) -> None:
    text = (oracle_dir / "ESSE.xml").read_text(encoding="utf-8")
    start, end = text.index("<target"), text.index("</target>")
    head = text[start:text.index(">", start) + 1]
    routed = text[:start] + head[:-1] + "/>" + text[end + len("</target>"):]
    p = tmp_path / "ESSE_routed.xml"
    p.write_text(routed, encoding="utf-8")
    spec = wopanet.read(p)
    assert spec["flows"][0]["destinations"] == ["AFDX Station 2"]
    routed_info = model.load_file(p).info()
    explicit_info = model.load_file(oracle_dir / "ESSE.xml").info()
    assert routed_info["links"] == explicit_info["links"]


def test_non_bag_period_is_periodic_with_the_same_arrival_curve(tmp_path: Path) -> None:
    xml = """<elements>
   <network name="n" overhead="67" transmission-capacity="100000000"/>
   <station name="a" transmission-capacity="10Mbps"/><station name="b"/>
   <link from="a" to="b"/>
   <flow name="f" source="a" period="3" max-payload="500" min-payload="{lo}" deadline="10">
      <target name="b"/>
   </flow>
</elements>"""
    spec = read_text(xml.format(lo=500))
    f = spec["flows"][0]
    assert (f["type"], f["period"], f["size"], f["deadline"]) == ("periodic", "3ms", "547B", "10ms")
    assert "description" not in spec
    assert spec["links"][0]["rate"] == "10Mbps"  # the station's capacity, the link has none
    resolved = model.load_data(spec).resolved()["flows"][0]
    assert resolved["burst"] == 567 * 8 and resolved["rate"] == pytest.approx(567 * 8 / 3e-3, rel=1e-12)
    assert "min_size" not in f
    spec = read_text(xml.format(lo=100))
    assert "description" not in spec
    assert spec["flows"][0]["min_size"] == "147B"  # the smaller frame is kept (jitters read it)


def test_priorities_become_classes_high_first() -> None:
    xml = """<elements>
   <network name="n"/>
   <station name="a"/><station name="b"/>
   <link from="a" to="b"/>
   <flow name="f" source="a" period="1" max-payload="100" min-payload="100" priority="Low">
      <target name="b"/>
   </flow>
   <flow name="g" source="a" period="1" max-payload="100" min-payload="100" priority="High">
      <target name="b"/>
   </flow>
</elements>"""
    spec = read_text(xml)
    assert spec["classes"] == [{"name": "High", "priority": 0}, {"name": "Low", "priority": 1}]
    assert [f["class"] for f in spec["flows"]] == ["Low", "High"]
    model.load_data(spec)


BAD_INPUTS = {
    "malformed": ('<?xml version="1.0"?>\n<elements>\n   <network name="x"\n</elements>\n', "bad.xml:4:1"),
    "empty": ("", "bad.xml:1:1: not well-formed XML"),
    "root": ("<network name='x'/>", "expected <elements>"),
    "element": ("<elements><network name='x'/><router name='r'/></elements>",
                "bad.xml:1: <router name='r'>: unsupported element"),
    "attribute": ("<elements><network name='x'/><station name='a' color='red'/></elements>",
                  "unsupported attribute 'color'"),
    "policy": ("<elements><network name='x'/><switch name='s' service-policy='ROUND_ROBIN'/></elements>",
               "unsupported service-policy 'ROUND_ROBIN'"),
    "priority": ("<elements><network name='x'/><station name='a'/><station name='b'/><link from='a' to='b'/>"
                 "<flow name='f' source='a' period='1' max-payload='1' min-payload='1' priority='Urgent'>"
                 "<target name='b'/></flow></elements>", "unsupported priority 'Urgent'"),
    "unknown node": ("<elements><network name='x'/><station name='a'/><link from='a' to='b'/></elements>",
                     "to='b' is no station or switch"),
    "missing": ("<elements><network name='x'/><station name='a'/><station name='b'/><link from='a' to='b'/>"
                "<flow name='f' source='a' period='1' max-payload='1'><target name='b'/></flow></elements>",
                "missing attribute 'min-payload'"),
    "number": ("<elements><network name='x'/><station name='a'/><station name='b'/><link from='a' to='b'/>"
               "<flow name='f' source='a' period='one' max-payload='1' min-payload='1'><target name='b'/>"
               "</flow></elements>", "period='one' is not a number"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_line_exit_2(rtnetlab_cli: Path, tmp_path: Path, case: str) -> None:
    text, expected = BAD_INPUTS[case]
    p = tmp_path / "bad.xml"
    p.write_text(text, encoding="utf-8")
    for command in ("validate", "info", "convert"):
        args = [command, p] + ([tmp_path / "out.yaml"] if command == "convert" else [])
        r = run_cli(rtnetlab_cli, *args)
        assert r.returncode == 2, r.stderr
        assert "Traceback" not in r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, r.stderr
        assert expected in lines[0]
        assert str(p) in lines[0]
    assert not (tmp_path / "out.yaml").exists()


def test_missing_file_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file"):
        wopanet.read(tmp_path / "nope.xml")


@pytest.mark.parametrize("name", SAMPLES)
def test_read_dumps_round_trip(oracle_dir: Path, tmp_path: Path, name: str) -> None:
    spec = wopanet.read(oracle_dir / f"{name}.xml")
    p = tmp_path / f"{name}.xml"
    p.write_text(wopanet.dumps(model.load_data(spec)), encoding="utf-8")
    assert wopanet.read(p) == spec


@pytest.mark.parametrize("name", SAMPLES)
def test_convert_xml_yaml_xml_round_trip(oracle_dir: Path, rtnetlab_cli: Path, tmp_path: Path,
                                         name: str) -> None:
    src = oracle_dir / f"{name}.xml"
    for a, b in [(src, tmp_path / "a.yaml"), (tmp_path / "a.yaml", tmp_path / "b.xml"),
                 (tmp_path / "b.xml", tmp_path / "c.yaml")]:
        r = run_cli(rtnetlab_cli, "convert", a, b)
        assert r.returncode == 0, r.stderr
    assert wopanet.read(tmp_path / "b.xml") == wopanet.read(src)
    assert model.load_file(tmp_path / "b.xml").spec == model.load_file(src).spec
    assert (tmp_path / "c.yaml").read_text() == (tmp_path / "a.yaml").read_text()
    # Everything the samples say survives, attribute by attribute (x/y are drawing positions).
    def semantic(path: Path) -> tuple:
        root = ET.parse(path).getroot()
        for el in root.iter():
            for a in ("x", "y", "mode"):
                el.attrib.pop(a, None)
            for a in ("transmission-capacity",):
                if a in el.attrib:
                    el.attrib[a] = el.attrib[a].replace("Mbps", "000000")
        return canonical(root)

    assert semantic(tmp_path / "b.xml") == semantic(src)


def test_dumps_refuses_what_wopanet_cannot_express(oracle_dir: Path, rtnetlab_cli: Path,
                                                   tmp_path: Path) -> None:
    spec = wopanet.read(oracle_dir / "ESE.xml")
    spec["defaults"]["scheduler"] = "static_priority"
    with pytest.raises(UserError, match="static_priority scheduler"):
        wopanet.dumps(model.load_data(spec))
    spec = wopanet.read(oracle_dir / "ESE.xml")
    spec["flows"][0].update(type="token_bucket", burst="2000B", rate="1Mbps", min_packet="100B",
                            max_packet="1000B")
    for k in ("bag", "lmin", "lmax"):
        del spec["flows"][0][k]
    with pytest.raises(UserError, match="token_bucket flow"):
        wopanet.dumps(model.load_data(spec))
    two = tmp_path / "two.yaml"
    r = run_cli(rtnetlab_cli, "generate", "afdx", "--vls", "4", "--switches", "2", "--planes", "2", "-o", two)
    assert r.returncode == 0, r.stderr
    r = run_cli(rtnetlab_cli, "convert", two, tmp_path / "two.xml")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "redundant planes" in r.stderr
    assert not (tmp_path / "two.xml").exists()


def test_dumps_one_plane_generated_network(rtnetlab_cli: Path, tmp_path: Path) -> None:
    one = tmp_path / "one.yaml"
    r = run_cli(rtnetlab_cli, "generate", "afdx", "--vls", "20", "--switches", "3", "--planes", "1",
                "-o", one)
    assert r.returncode == 0, r.stderr
    r = run_cli(rtnetlab_cli, "convert", one, tmp_path / "one.xml")
    assert r.returncode == 2 and "class 'avionics'" in r.stderr  # WOPANet priorities are High/Low
    data = yaml.safe_load(one.read_text())
    del data["classes"]
    for f in data["flows"]:
        del f["class"]
    one.write_text(yaml.safe_dump(data))
    r = run_cli(rtnetlab_cli, "convert", one, tmp_path / "one.xml")
    assert r.returncode == 0, r.stderr
    a = model.load_file(one)
    b = model.load_file(tmp_path / "one.xml")
    assert b.info()["links"] == a.info()["links"]


# ---------------------------------------------------------------------------------------------
# Result files


def analysis_from_res(res: ET.Element, info: dict) -> dict:
    """The analysis JSON a method would give for the numbers of a _res.xml file."""
    jitters = {(f.get("name"), t.get("name")): float(t.get("value"))
               for f in res.find("jitters") for t in f}
    flows = [{"flow": f.get("name"), "destination": t.get("name"), "plane": "A",
              "delay_us": float(t.get("value")), "jitter_us": jitters[(f.get("name"), t.get("name"))]}
             for f in res.find("delays") for t in f]
    listed = set()
    ports = []
    for sw in res.find("backlogs"):
        for p in sw.findall("port"):
            listed.add((sw.get("name"), p.get("num")))
            ports.append({"node": sw.get("name"), "port": p.get("num"), "load": 1.0,
                          "delay_us": float(p.get("delay")), "backlog_bytes": float(p.get("backlog"))})
    for p in info["ports"]:  # idle ports are in the analysis too, but not in the file
        if (p["node"], p["port"]) not in listed:
            ports.append({"node": p["node"], "port": p["port"], "load": p["load_bps"],
                          "delay_us": 0.0, "backlog_bytes": 0.0})
    return {"method": "afdx-naive", "flows": flows, "ports": ports}


@pytest.mark.parametrize("name", SAMPLES)
def test_results_dumps_reproduces_res(oracle_dir: Path, rtnetlab_cli: Path, name: str) -> None:
    res = ET.parse(oracle_dir / f"{name}_res.xml").getroot()
    info = info_json(rtnetlab_cli, oracle_dir / f"{name}.xml")
    spec = wopanet.read(oracle_dir / f"{name}.xml")
    text = wopanet.results_dumps(spec, analysis_from_res(res, info), info)
    assert canonical(ET.fromstring(text)) == canonical(res)
    assert [c.tag for c in ET.fromstring(text)] == ["delays", "jitters", "backlogs", "load"]


@pytest.mark.parametrize("name", ["EE", "ESE", "ESSE"])
def test_results_dumps_text_matches_single_flow_samples(oracle_dir: Path, rtnetlab_cli: Path,
                                                        name: str) -> None:
    """Where WOPANet's (hash map) order is not in play, the text itself is the same."""
    res_text = (oracle_dir / f"{name}_res.xml").read_text(encoding="utf-8")
    info = info_json(rtnetlab_cli, oracle_dir / f"{name}.xml")
    spec = wopanet.read(oracle_dir / f"{name}.xml")
    text = wopanet.results_dumps(spec, analysis_from_res(ET.fromstring(res_text), info), info)
    if name == "ESSE":  # WOPANet lists switch 2 before switch 1 and edge 2 before edge 1
        assert sorted(text.splitlines()) == sorted(res_text.splitlines())
    else:
        assert text == res_text


def test_results_dumps_worked_check(oracle_dir: Path) -> None:
    """README worked check (ESE): port delay 92.64633 us is written 92.646, backlog 1159 B."""
    spec = wopanet.read(oracle_dir / "ESE.xml")
    info = model.load_data(spec).info()
    burst = 8536 + 8.536e6 * 85.36e-6
    analysis = {"method": "afdx-naive",
                "flows": [{"flow": "AFDX Flow 1", "destination": "AFDX Station 6", "plane": "A",
                           "delay_us": 179.0, "jitter_us": 94.0}],
                "ports": [{"node": "AFDX Switch 1", "port": "1", "load": 8.536e6,
                           "delay_us": burst / 100e6 * 1e6, "backlog_bytes": 1159.0}]}
    root = ET.fromstring(wopanet.results_dumps(spec, analysis, info))
    port = root.find("backlogs/switch/port")
    assert port.attrib == {"backlog": "1159.0", "delay": "92.646", "num": "1"}
    assert root.find("backlogs/switch/total").attrib == {"backlog": "1159.0", "buffer": "65536.0",
                                                         "percent": "1.8%"}


def test_results_dumps_worst_plane_and_rounding() -> None:
    spec = {"name": "n", "switches": [], "flows": [{"name": "f", "destinations": ["b"]}]}
    analysis = {"flows": [{"flow": "f", "destination": "b", "plane": "A", "delay_us": 178.006,
                           "jitter_us": 93.0000000001},
                          {"flow": "f", "destination": "b", "plane": "B", "delay_us": 178.0061,
                           "jitter_us": 12.0}], "ports": []}
    root = ET.fromstring(wopanet.results_dumps(spec, analysis, {"links": []}))
    assert root.find("delays/flow/target").get("value") == "178.007"
    assert root.find("jitters/flow/target").get("value") == "93.0"


@pytest.mark.parametrize("x, text", [
    (0.0, "0.0"), (-0.0, "0.0"), (8536000.0, "8536000.0"), (2.5608e7, "2.5608E7"), (4.748e7, "4.748E7"),
    (1e7, "1.0E7"), (92.646, "92.646"), (1159.0, "1159.0"), (0.001, "0.001"), (0.0005, "5.0E-4"),
    (9999999.0, "9999999.0"), (123456789.5, "1.234567895E8"), (0.25, "0.25"), (-3.5, "-3.5"),
])
def test_java_double(x: float, text: str) -> None:
    assert wopanet.java_double(x) == text


@pytest.mark.parametrize("name", SAMPLES)
def test_examples_match_the_samples(oracle_dir: Path, repo_root: Path, name: str) -> None:
    example = repo_root / "examples" / "wopanet" / f"{name}.yaml"
    assert model.load_file(example).spec == model.load_file(oracle_dir / f"{name}.xml").spec


@pytest.mark.parametrize("name", SAMPLES)
def test_analyze_wopanet_res_reproduces_the_sample(oracle_dir: Path, rtnetlab_cli: Path, tmp_path: Path,
                                                   name: str) -> None:
    """End to end: afdx-naive analysis written as a _res.xml gives WOPANet's file (up to order)."""
    out = tmp_path / f"{name}_res.xml"
    r = run_cli(rtnetlab_cli, "analyze", "--method", "afdx-naive", "--format", "wopanet-res",
                oracle_dir / f"{name}.xml", "-o", out)
    assert r.returncode == 0, r.stderr
    assert canonical(ET.parse(out).getroot()) == canonical(ET.parse(oracle_dir / f"{name}_res.xml").getroot())
