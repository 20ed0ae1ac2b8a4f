"""The what-if (`Network.what_if`): after any sequence of edits, and after undoing them, its
analysis is the one of the edited description validated and analysed from scratch, row by row;
refused edits name their place and rule, as the format's validation does, and change nothing."""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rtnetlab as rt
from rtnetlab import _core

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p for ext in ("yaml", "json") for p in (REPO / "examples").rglob(f"*.{ext}")
                  if "notebooks" not in p.parts)
RATES = ["10Mbps", "100Mbps", "1Gbps"]


@cache
def _example(path: Path) -> dict[str, Any] | None:
    """The description of example `path` when it has flows and a what-if takes it (TFA
    applies), else None."""
    try:
        net = rt.load(path)
        net.what_if()
    except (rt.UserError, OSError):
        return None
    data = net.to_dict()
    return data if data.get("flows") else None


def _networks() -> list[tuple[str, dict[str, Any]]]:
    taken = [(p.name, d) for p in EXAMPLES if (d := _example(p)) is not None]
    return taken


def _same(a: Any, b: Any, at: str = "") -> None:
    """`a` equals `b`, numbers within 1e-12 relative (in practice to the bit)."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), at
        for k in a:
            _same(a[k], b[k], f"{at}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), at
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{at}[{i}]")
    elif isinstance(a, float) and isinstance(b, float) and math.isfinite(a):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0), f"{at}: {a} != {b}"
    else:
        assert a == b, f"{at}: {a!r} != {b!r}"


def _fresh(wi: rt.WhatIf) -> dict[str, Any]:
    return dict(rt.Network.from_dict(wi.to_dict()).analyze("tfa").data)


def _scheduler_edit(config: dict[str, Any], draw: Any) -> dict[str, Any] | None:
    """A new value for one entry of a named scheduler's first mapping parameter."""
    for key, value in config.items():
        if not isinstance(value, dict) or not value:
            continue
        entry = draw(st.sampled_from(sorted(value)))
        old = value[entry]
        if isinstance(old, bool):
            return None
        if isinstance(old, int):
            new: Any = draw(st.integers(1, 8))
        elif isinstance(old, float):
            new = draw(st.sampled_from([0.5, 1.0, 2.0, 3.0]))
        elif key == "quanta" or key == "base_quantum":
            new = draw(st.sampled_from(["500B", "1500B", "3000B"]))
        elif key == "idle_slopes":
            new = draw(st.sampled_from(["5Mbps", "20Mbps", "50Mbps"]))
        else:
            return None
        return {key: {entry: new}}
    return None


def _edit(wi: rt.WhatIf, draw: Any) -> str:
    """One random edit of `wi`: a flow's traffic, a node's links' rate, a named scheduler's
    parameter. Returns what it did (for the failure's message)."""
    doc = wi.to_dict()
    kind = draw(st.sampled_from(["flow", "flow", "rate", "scheduler"]))
    if kind == "flow":
        flow = draw(st.sampled_from(doc["flows"]))
        keys: dict[str, Any] = {}
        if flow.get("type") == "virtual_link":
            if draw(st.booleans()):
                keys["bag"] = draw(st.sampled_from(["1ms", "2ms", "4ms", "8ms", "32ms", "128ms"]))
            else:
                keys["lmax"] = f"{draw(st.integers(max(64, _bytes(flow.get('lmin'))), 1518))}B"
        elif flow.get("type") == "periodic":
            keys["period"] = draw(st.sampled_from(["250us", "1ms", "2ms", "10ms"]))
        elif flow.get("type") == "token_bucket":
            keys["rate"] = draw(st.sampled_from(["1Mbps", "5Mbps", "20Mbps"]))
        keys["deadline"] = draw(st.sampled_from([None, "1ms", "10ms"])) if "deadline" in flow else None
        keys = {k: v for k, v in keys.items() if v is not None}
        wi.set_flow(flow["name"], **keys)
        return f"set_flow({flow['name']!r}, {keys})"
    if kind == "rate":
        nodes = [n["name"] for s in ("end_systems", "switches") for n in doc.get(s) or []]
        node, rate = draw(st.sampled_from(nodes)), draw(st.sampled_from(RATES))
        wi.set_port_rate(node, rate)
        return f"set_port_rate({node!r}, {rate!r})"
    named = doc.get("schedulers") or {}
    if not named:
        return "nothing"
    name = draw(st.sampled_from(sorted(named)))
    params = _scheduler_edit(named[name], draw)
    if params is None:
        return "nothing"
    wi.set_scheduler(name, **params)
    return f"set_scheduler({name!r}, {params})"


def _bytes(size: Any) -> int:
    """Bytes of a frame size as the description writes it (``"64B"``), 64 if not given so."""
    if isinstance(size, str) and size.endswith("B") and size[:-1].isdigit():
        return int(size[:-1])
    return 64


def _check_edits(data: dict[str, Any], draw: Any, steps: int) -> None:
    wi = rt.Network.from_dict(data).what_if()
    start = wi.analyze().data
    done: list[str] = []
    for _ in range(steps):
        before = wi.analyze().data
        try:
            what = _edit(wi, draw)
        except rt.ModelError as e:
            assert e.lines and all("\n" not in line and ": " in line for line in e.lines)
            _same(wi.analyze().data, before, "refused edit")
            continue
        done.append(what)
        _same(wi.analyze().data, _fresh(wi), " after " + "; ".join(done))
        _same_warnings(wi, " after " + "; ".join(done))
    if wi.edits:
        wi.undo()
        _same(wi.analyze().data, _fresh(wi), " one undone after " + "; ".join(done))
        _same_warnings(wi, " one undone after " + "; ".join(done))
    while wi.edits:
        wi.undo()
    _same(wi.analyze().data, start, " all undone after " + "; ".join(done))
    _same_warnings(wi, " all undone after " + "; ".join(done))


def _same_warnings(wi: rt.WhatIf, at: str) -> None:
    """The what-if's warnings are those of its description validated from scratch."""
    fresh = rt.Network.from_dict(wi.to_dict()).validate()
    assert sorted(wi.warnings) == sorted(fresh), at


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_edits_on_random_networks_give_the_fresh_analysis(data: st.DataObject) -> None:
    seed = data.draw(st.integers(0, 10_000), label="seed")
    doc = rt.Network.from_dict(_load_json(_core.random_network(seed, "any"))).to_dict()
    _check_edits(doc, data.draw, 6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_edits_on_the_examples_give_the_fresh_analysis(data: st.DataObject) -> None:
    networks = _networks()
    name, doc = data.draw(st.sampled_from(networks), label="example")
    _check_edits(doc, data.draw, 5)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_edits_on_generated_afdx_networks_give_the_fresh_analysis(data: st.DataObject) -> None:
    seed = data.draw(st.integers(1, 1000), label="seed")
    doc = rt.generate_afdx(vls=80, seed=seed, planes=data.draw(st.sampled_from([1, 2]))).to_dict()
    _check_edits(doc, data.draw, 5)


def _load_json(text: str) -> dict[str, Any]:
    import json

    loaded: dict[str, Any] = json.loads(text)
    return loaded


def test_enough_examples_are_taken() -> None:
    taken = [name for name, _ in _networks()]
    assert len(taken) >= 15, taken


def _two_hosts() -> rt.Network:
    net = rt.Network("two-hosts", defaults={"link_rate": "100Mbps"})
    net.add_end_system("ES1").add_end_system("ES2").add_switch("SW1")
    net.add_link("ES1", "SW1").add_link("ES2", "SW1")
    net.add_virtual_link("VL1", "ES1", ["ES2"], bag="4ms", lmax="1518B", lmin="64B")
    net.add_virtual_link("VL2", "ES1", ["ES2"], bag="2ms", lmax="1518B", lmin="64B")
    return net


def test_an_edit_is_refused_with_the_format_s_own_line() -> None:
    net = _two_hosts()
    wi = net.what_if()
    with pytest.raises(rt.ModelError) as refused:
        wi.set_flow("VL2", bag="3ms")
    with pytest.raises(rt.ModelError) as invalid:
        net.copy().set_flow("VL2", bag="3ms").validate()
    assert refused.value.lines == invalid.value.lines == [
        "flows[1].bag: must be a power of two between 1ms and 128ms, got 3ms"]
    with pytest.raises(rt.ModelError) as refused:
        wi.set_port_rate("SW1", "-5bps")
    with pytest.raises(rt.ModelError) as invalid:
        net.copy().set_port_rate("SW1", "-5bps").validate()
    assert refused.value.lines == invalid.value.lines
    with pytest.raises(rt.ModelError, match=r"^flows\[0\]\.source: a what-if edit changes a flow's traffic"):
        wi.set_flow("VL1", source="ES2")
    with pytest.raises(rt.UserError, match="no item named 'VL9'"):
        wi.set_flow("VL9", bag="2ms")
    with pytest.raises(rt.UserError, match="no link at 'SW9'"):
        wi.set_port_rate("SW9", "1Gbps")
    assert wi.edits == 0
    with pytest.raises(rt.UserError, match="no edit to undo"):
        wi.undo()


def test_best_is_refused_in_one_line_naming_the_method_kept() -> None:
    with pytest.raises(rt.UserError) as refused:
        _two_hosts().what_if("best")
    assert "\n" not in str(refused.value)
    assert str(refused.value).startswith("--method: a what-if keeps tfa up to date in place, not 'best'")


def test_an_edit_analyses_again_only_the_ports_it_reaches() -> None:
    net = rt.generate_afdx(vls=200, seed=3)
    wi = net.what_if()
    flow = net.to_dict()["flows"][0]["name"]
    wi.set_flow(flow, bag="128ms")
    assert 0 < wi.analysed_ports < wi.ports
    edited = wi.network()
    assert edited.flow(flow)["bag"] == "128ms" and net.flow(flow)["bag"] != "128ms"
    _same(wi.analyze().data, edited.analyze("tfa").data)


def test_an_edit_that_removes_a_warning_s_cause_removes_the_warning() -> None:
    net = rt.Network("drr", defaults={"link_rate": "100Mbps"})
    _ = net.add_end_system("ES1").add_end_system("ES2").add_switch("SW1")
    _ = net.add_link("ES1", "SW1").add_link("ES2", "SW1").add_class("a", 0).add_class("b", 1)
    _ = net.add_virtual_link("VL1", "ES1", ["ES2"], bag="4ms", lmax="1518B", lmin="64B", **{"class": "a"})
    _ = net.add_virtual_link("VL2", "ES1", ["ES2"], bag="4ms", lmax="200B", lmin="64B", **{"class": "b"})
    net.add_scheduler("d", "drr", quanta={"a": "500B", "b": "500B"})
    net.set_node("SW1", scheduler="d")
    small = [w for w in net.validate() if "quantum of class 'a'" in w]
    assert len(small) == 1 and "flow 'VL1'" in small[0]
    wi = net.what_if()
    assert small[0] in wi.warnings and small[0] in wi.analyze().notes
    # The quantum raised above VL1's frame: no warning, then back with the edit undone.
    wi.set_scheduler("d", quanta={"a": "1600B"})
    assert not [w for w in wi.analyze().notes if "quantum" in w]
    wi.undo()
    assert small[0] in wi.warnings
    # The frame made smaller than the quantum: the same.
    wi.set_flow("VL1", lmax="400B")
    assert not [w for w in wi.warnings if "quantum" in w]
    assert sorted(wi.warnings) == sorted(wi.network().validate())


def test_a_server_graph_is_refused_in_one_line() -> None:
    net = rt.load(REPO / "examples" / "server_graph" / "tandem_two_flows.yaml")
    with pytest.raises(rt.ModelError) as refused:
        net.what_if()
    assert len(refused.value.lines) == 1 and "a server graph has none" in refused.value.lines[0]
