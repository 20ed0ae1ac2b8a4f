"""The Python API (`import rtnetlab as rt`): networks built and edited in code give what the same
description read from a file gives; results as rows, frames and JSON; errors as the CLI words them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import rtnetlab as rt

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
SEED002 = EXAMPLES / "seed002_four_vls.yaml"


def four_vls() -> rt.Network:
    """Seed 002's four virtual links (examples/seed002_four_vls.yaml), built in code; numbers for
    some quantities (SI units), strings for the rest."""
    net = rt.Network("seed002-four-vls",
                     description="AFDX sample network of seed 002, Fig. 4 (reconstructed)",
                     defaults={"link_rate": 100e6, "technological_latency": "10us",
                               "interframe_overhead": "20B"})
    for k in range(1, 7):
        net.add_end_system(f"ES{k}", technological_latency=40e-6, receive_latency="40us")
    for k in range(1, 4):
        net.add_switch(f"SW{k}")
    for a, b in [("ES1", "SW1"), ("ES2", "SW1"), ("SW1", "SW2"), ("SW1", "SW3"), ("SW2", "ES3"),
                 ("SW2", "ES4"), ("SW3", "ES5"), ("ES6", "SW3"), ("SW3", "SW2")]:
        net.add_link(a, b)
    net.add_virtual_link("VL1", "ES1", ["ES4"], bag=0.002, lmax="200B", lmin="64B", id=1)
    net.add_virtual_link("VL2", "ES1", ["ES5"], bag="16ms", lmax=400 * 8, lmin="64B", id=2)
    net.add_virtual_link("VL3", "ES2", ["ES3"], bag="32ms", lmax="500B", lmin="64B", id=3)
    net.add_virtual_link("VL4", "ES6", ["ES4"], bag="4ms", lmax="64B", lmin="64B", id=4)
    return net


def test_built_in_code_is_the_file() -> None:
    built = four_vls().analyze()
    read = rt.load(SEED002).analyze()
    assert built.flows == read.flows
    assert built.ports == read.ports
    assert built.bound("VL1") == max(f["delay_us"] for f in read.flows if f["flow"] == "VL1")


def test_numbers_are_si_units() -> None:
    d = four_vls().to_dict()
    assert d["defaults"]["link_rate"] == "100Mbps"
    assert d["end_systems"][0]["technological_latency"] == "40us"
    assert d["flows"][0]["bag"] == "2ms"
    assert d["flows"][1]["lmax"] == "400B"


def test_round_trips(tmp_path: Path) -> None:
    net = four_vls()
    again = rt.Network.from_dict(net.to_dict())
    assert again.to_dict() == net.to_dict()
    for suffix in (".yaml", ".json"):
        path = net.save(tmp_path / f"n{suffix}")
        assert rt.load(path).analyze().flows == net.analyze().flows, suffix
    assert "VL1" in net.to_yaml()
    assert json.loads(net.to_json())["name"] == "seed002-four-vls"
    with pytest.raises(ValueError, match="WOPANet XML cannot express the receive latency of ES1"):
        net.save(tmp_path / "n.xml")


@pytest.mark.parametrize("path", [
    EXAMPLES / "seed002_four_vls.yaml",
    EXAMPLES / "fabric" / "multimedia.json",
    REPO / "tests" / "data" / "ff_fifo_rtns2022" / "random_ff_7.java",
])
def test_load_reads_every_format(path: Path) -> None:
    if path.suffix == ".json" and "fabric" in str(path):
        path = EXAMPLES / "server_graph" / "tandem_two_flows.yaml"
    net = rt.load(path)
    assert net.source == str(path)
    assert net.analyze().flows


def test_load_reads_wopanet(shared_dir: Path, tmp_path: Path) -> None:
    net = rt.load(shared_dir / "oracles" / "wopanet" / "EE.xml")
    flows = net.analyze("afdx-naive").flows
    assert flows
    assert rt.load(net.save(tmp_path / "again.xml")).analyze("afdx-naive").flows == flows


def test_bad_input_is_a_value_error_with_the_cli_message(tmp_path: Path) -> None:
    net = four_vls().set_flow("VL1", bag="3ms")
    with pytest.raises(ValueError) as built:
        net.analyze()
    assert isinstance(built.value, rt.ModelError)
    path = tmp_path / "bad.yaml"
    net.save(path)
    cli = subprocess.run([sys.executable, "-m", "rtnetlab.cli", "validate", str(path)],
                         capture_output=True, text=True)
    assert cli.returncode == 2
    # The same rule, the same place: only the file name differs.
    assert cli.stderr.strip().splitlines()[-1] == str(built.value).replace("(network)", str(path))
    with pytest.raises(ValueError, match="--method"):
        four_vls().analyze("no-such-method")
    with pytest.raises(ValueError, match="--duration: must be positive"):
        four_vls().simulate(duration="0s")
    with pytest.raises(ValueError, match="no item named 'VL9'"):
        four_vls().set_flow("VL9", bag="2ms")


def test_what_if_loop() -> None:
    net = four_vls()
    before = net.analyze().bound("VL1")
    net.set_flow("VL2", bag="2ms", lmax="1518B")
    after = net.analyze().bound("VL1")
    assert after > before
    net.set_port_rate("SW1", "1Gbps")
    assert net.analyze().bound("VL1") < after
    # A scheduler's weight: D2DRR quanta on SW2's port to ES4.
    net.set_flow("VL1", **{"class": "a"}).set_flow("VL4", **{"class": "b"})
    net.set_flow("VL2", **{"class": "b"}).set_flow("VL3", **{"class": "b"})
    net.add_class("a", 0).add_class("b", 1)
    net.add_scheduler("d2", "d2drr", base_quantum="1518B", factors={"a": 1, "b": 1})
    net.set_node("SW2", scheduler="d2")
    one = net.analyze().bound("VL1")
    net.set_scheduler("d2", factors={"a": 4})
    assert net.analyze().bound("VL1") <= one


def test_results_as_frames() -> None:
    result = four_vls().analyze()
    doc = json.loads(result.to_json())
    assert doc["flows"] == result.flows and doc["warnings"] == []
    pl = pytest.importorskip("polars")
    frame = result.to_polars()
    assert isinstance(frame, pl.DataFrame)
    assert frame.columns == list(result.flows[0])
    assert frame.height == len(result.flows)
    pd_frame = result.to_pandas()
    assert list(pd_frame.columns) == list(result.flows[0])
    assert result.to_polars("ports").height == len(result.ports)


def test_simulate_is_seeded_and_below_its_bounds() -> None:
    net = four_vls()
    a = net.simulate(duration="100ms", seed=3)
    b = net.simulate(duration=0.1, seed=3)
    rows = [{k: v for k, v in f.items()} for f in a.flows]
    assert rows == b.flows
    assert a.data["bounds"]["above_bound"] == []
    assert all(f["max_us"] <= f["bound_us"] for f in a.flows)
    assert a.to_polars().height == len(a.flows)


def test_explain_worst_case_and_configure() -> None:
    net = four_vls()
    e = net.explain("VL1")
    assert e.data["flow"] == "VL1" and e.flows
    w = net.worst_case(evaluations=40, seed=1)
    assert w.flows and all(r["achieved_us"] <= (r["bound_us"] or float("inf")) for r in w.flows)
    conf = rt.read(EXAMPLES / "afdx_config" / "table1.yaml").configure_afdx()
    assert conf.feasible and conf.network is not None
    assert conf.network.analyze().flows
    dt = rt.configure_dtable(EXAMPLES / "dtable" / "table4_requirements.yaml")
    assert dt.feasible and dt.data["schedulers"]


def test_generate() -> None:
    net = rt.generate_afdx(50, seed=2)
    assert net.sizing and len(net.data["flows"]) == 50
    assert net.analyze().flows


def test_jupyter_display() -> None:
    net = four_vls()
    svg = net._repr_svg_()
    assert svg is not None and svg.startswith("<svg") and "SW1" in svg
    html = net.analyze()._repr_html_()
    assert "<table>" in html and "#2e7d32" in html  # the report's colour of a met bound
    page = rt.report(net, duration="50ms")
    assert "<html" in page.html.lower() and page.summary["flows"]["total"] == 4
    assert "iframe" in page._repr_html_()


def test_report_written(tmp_path: Path) -> None:
    page = rt.report(SEED002, tmp_path / "r.html", duration="50ms")
    assert page.paths["html"].exists() and page.paths["csv"].exists()
