"""Property-based fuzzing of the command on valid and near-valid descriptions (Hypothesis).

(a) Whatever the file, `rtnetlab validate` exits 0, or 2 with one problem per line on stderr and
    no traceback (run in process through the entry point: an exception fails the test).
(b) A description that validates is analysed and simulated without a panic.
(c) On it, every simulated delay is at or below its bound (the report's rounding slack aside).

Examples per property: the numbers below times RTNETLAB_FUZZ_SCALE (default 1; `make soak` sets it
higher). A failure found here becomes a plain test in test_hostile_inputs.py.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtnetlab import cli, model
from rtnetlab.io import formats
from rtnetlab.report import SIM_SLACK_US
from rtnetlab.simulate import run as simulate

SCALE = max(1, int(os.environ.get("RTNETLAB_FUZZ_SCALE", "1")))


def examples(n: int) -> Any:
    return settings(max_examples=n * SCALE, deadline=None, database=None, derandomize=SCALE == 1,
                    # capsys is read out after every example, so sharing it between examples is safe.
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(autouse=True)
def _default_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(formats.LIMITS_ENV, raising=False)
    formats.set_limits([])


# --- Valid descriptions: small switched networks of one or two planes. ------------------------------

SCHEDULERS = {
    "fifo": None,
    "static_priority": None,
    "drr": {"kind": "drr", "quanta": {"c0": "1518B", "c1": "600B", "c2": "200B"}},
    "wrr": {"kind": "wrr", "weights": {"c0": 3, "c1": 2, "c2": 1}},
}


@st.composite
def networks(draw: st.DrawFn) -> dict:
    planes = draw(st.sampled_from([["A"], ["A", "B"]]))
    n_sw = draw(st.integers(1, 3))
    n_es = draw(st.integers(2, 6))
    scheduler = draw(st.sampled_from(sorted(SCHEDULERS)))
    notation = draw(st.sampled_from(["priority", "pcp"]))
    classes = [{"name": f"c{k}", notation: (k if notation == "priority" else 7 - k)} for k in range(3)]
    doc: dict[str, Any] = {
        "name": "fuzz",
        "defaults": {
            "link_rate": draw(st.sampled_from(["10Mbps", "100Mbps", "1Gbps"])),
            "technological_latency": f"{draw(st.integers(0, 16))}us",
            "propagation_delay": f"{draw(st.integers(0, 500))}ns",
            "scheduler": scheduler,
        },
        "classes": classes,
        "end_systems": [{"name": f"ES{i}"} for i in range(n_es)],
        "switches": [],
        "links": [],
        "flows": [],
    }
    if SCHEDULERS[scheduler]:
        doc["schedulers"] = {scheduler: SCHEDULERS[scheduler]}
    if len(planes) == 2:
        doc["redundancy"] = {"planes": planes, "skew_max": "2ms"}
    attach = [draw(st.integers(0, n_sw - 1)) for _ in range(n_es)]
    for p in planes:
        for s in range(n_sw):
            doc["switches"].append({"name": f"SW{p}{s}", "plane": p})
            if s:
                doc["links"].append({"from": f"SW{p}{s - 1}", "to": f"SW{p}{s}"})
        for i, s in enumerate(attach):
            doc["links"].append({"from": f"ES{i}", "to": f"SW{p}{s}"})
    for f in range(draw(st.integers(1, 6))):
        src = draw(st.integers(0, n_es - 1))
        others = [i for i in range(n_es) if i != src]
        dests = draw(st.lists(st.sampled_from(others), min_size=1, max_size=min(3, len(others)),
                              unique=True))
        kind = draw(st.sampled_from(["virtual_link", "periodic", "token_bucket"]))
        flow: dict[str, Any] = {"name": f"F{f}", "type": kind, "source": f"ES{src}",
                                "destinations": [f"ES{d}" for d in dests],
                                "class": f"c{draw(st.integers(0, 2))}"}
        lmax = draw(st.integers(64, 1518))
        if kind == "virtual_link":
            flow |= {"bag": f"{2 ** draw(st.integers(0, 4))}ms", "lmin": f"{draw(st.integers(64, lmax))}B",
                     "lmax": f"{lmax}B"}
        elif kind == "periodic":
            flow |= {"period": f"{draw(st.integers(1, 20))}ms", "size": f"{lmax}B"}
        else:
            flow |= {"burst": f"{lmax * draw(st.integers(1, 3))}B", "rate": f"{draw(st.integers(1, 20))}Mbps",
                     "min_packet": "64B", "max_packet": f"{lmax}B"}
        if draw(st.booleans()):
            flow["deadline"] = f"{draw(st.integers(1, 20))}ms"
        doc["flows"].append(flow)
    return doc


# --- Near-valid descriptions: a valid one with a few things broken. ---------------------------------

NASTY = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "0B", "0ms", "-3ms", "1e308Mbps", "1e300B", "86401s", "0.5ns", "20000Gbps", " ES1",
                     "ES1", "ES0", "SWA0", "c0", "fifo", "static_priority", "A", "B", "3ms", "2000B", "x\ny",
                     "virtual_link", "periodic"]),
    st.text(max_size=12),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.sampled_from(["name", "kind", "type", "from", "to", "bogus"]), st.text(max_size=4),
                    max_size=3),
)


def places(v: Any, at: tuple = ()) -> list[tuple]:
    out = [at]
    if isinstance(v, dict):
        for k, x in v.items():
            out += places(x, (*at, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += places(x, (*at, i))
    return out


@st.composite
def near_valid(draw: st.DrawFn) -> dict:
    doc = copy.deepcopy(draw(networks()))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.sampled_from(places(doc)))
        if not at:
            continue
        parent = doc
        for k in at[:-1]:
            parent = parent[k]
        op = draw(st.sampled_from(["delete", "replace", "add", "duplicate"]))
        last = at[-1]
        if op == "delete":
            del parent[last]
        elif op == "replace":
            parent[last] = draw(NASTY)
        elif op == "add" and isinstance(parent[last], dict):
            key = draw(st.sampled_from(["bogus", "pcp", "priority", "id", "buffer", "name"]))
            parent[last][key] = draw(NASTY)
        elif op == "duplicate" and isinstance(parent, list):
            parent.insert(last, copy.deepcopy(parent[last]))
    return doc


# --- The properties. -------------------------------------------------------------------------------


def validate(capsys: pytest.CaptureFixture[str], text: str, suffix: str) -> int:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"net{suffix}"
        path.write_text(text, encoding="utf-8")
        rc = cli.main(["validate", str(path)])
    out, err = capsys.readouterr()
    assert rc in (0, 2), (rc, err)
    assert "Traceback" not in out + err
    if rc == 2:
        lines = err.splitlines()
        assert out == "" and lines, err
        assert all(": " in line for line in lines), lines  # place: rule
        assert len(lines) <= 2 * 101, len(lines)
    return rc


def as_text(doc: Any, fmt: str) -> str:
    return json.dumps(doc) if fmt == ".json" else yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


@examples(1200)
@given(doc=near_valid(), fmt=st.sampled_from([".yaml", ".json"]))
def test_near_valid_descriptions_pass_or_fail_in_one_line_each(capsys: pytest.CaptureFixture[str], doc: dict,
                                                              fmt: str) -> None:
    validate(capsys, as_text(doc, fmt), fmt)


@examples(1500)
@given(doc=networks(), cuts=st.lists(st.tuples(st.integers(0, 10_000), st.text(max_size=3)), min_size=1,
                                     max_size=3))
def test_damaged_yaml_text_passes_or_fails_in_one_line_each(capsys: pytest.CaptureFixture[str], doc: dict,
                                                            cuts: list[tuple[int, str]]) -> None:
    text = as_text(doc, ".yaml")
    for pos, piece in cuts:
        pos %= len(text) + 1
        text = text[:pos] + piece + text[pos + len(piece):]
    validate(capsys, text, ".yaml")


def check_engines(doc: dict) -> list[str]:
    """Analyses and simulates an accepted description; returns the (flow, destination, plane) whose
    simulated maximum exceeds its bound."""
    net = model.load_data(doc, "fuzz")
    analysis = net.analyze("best")
    sim = simulate(net, {"duration_ns": 20_000_000, "seed": 1}, progress=False)
    measured = {(f["flow"], f["destination"], f["plane"]): f for f in sim["flows"]}
    above = []
    for f in analysis["flows"]:
        s = measured.get((f["flow"], f["destination"], f["plane"]))
        bound = f["delay_us"]
        if s and s["count"] and bound is not None and s["max_us"] > bound + SIM_SLACK_US:
            above.append(f"{f['flow']}->{f['destination']} ({f['plane']}): {s['max_us']} > {bound}")
    return above


@examples(150)
@given(doc=networks())
def test_valid_networks_analyse_simulate_and_stay_within_bounds(capsys: pytest.CaptureFixture[str],
                                                                doc: dict) -> None:
    assert validate(capsys, as_text(doc, ".yaml"), ".yaml") == 0, doc
    above = check_engines(doc)
    assert not above, (above, json.dumps(doc))


@examples(300)
@given(doc=near_valid())
def test_accepted_near_valid_networks_analyse_and_simulate(doc: dict) -> None:
    try:
        net = model.load_data(doc, "fuzz")
    except model.UserError:
        return
    net.analyze("best")
    if net.info()["counts"]["flows"]:
        simulate(net, {"duration_ns": 5_000_000, "seed": 1}, progress=False)
