"""`--json` documents are written by orjson (rtnetlab.io.jsontext) and must stay, byte for byte,
what Python's ``json.dumps(data, indent=2, allow_nan=False)`` wrote before: the commands' real
documents, the spellings where the two encoders differ, and random documents."""

from __future__ import annotations

import enum
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtnetlab.cli import main
from rtnetlab.io import jsontext

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def python_json(data, default=None) -> str:
    return json.dumps(data, indent=2, allow_nan=False, default=default)


def outcome(encode, data):
    try:
        return "text", encode(data)
    except Exception as e:  # the same error, with the same message
        return type(e).__name__, str(e)


@pytest.mark.parametrize("argv", [
    ["simulate", "examples/wopanet/ESSE.yaml", "--duration", "20ms", "--json"],
    ["simulate", "examples/afdx_case_study.yaml", "--duration", "10ms", "--release", "synchronized",
     "--sizes", "max", "--json"],
    ["simulate", "examples/fixed_priority/sporadic_server_cpu.yaml", "--duration", "50ms", "--json"],
    ["simulate", "examples/tsn/cbs_tas.yaml", "--duration", "5ms", "--no-bounds", "--json"],
    ["analyze", "examples/afdx_case_study.yaml", "--method", "tfa", "--format", "json", "-o", "OUT"],
    ["info", "examples/tsn/ats_ring.yaml", "--json"],
    ["validate", "examples/seed002_four_vls.yaml", "--json"],
])
def test_the_commands_documents_are_pythons_text(argv, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(EXAMPLES.parent)
    out_file = tmp_path / "report.json"
    argv = [str(out_file) if a == "OUT" else a for a in argv]
    assert main(argv) == 0
    text = out_file.read_text() if out_file.exists() else capsys.readouterr().out
    doc = json.loads(text)  # floats and key order survive a round trip: the text Python writes
    assert text == python_json(doc) + "\n"
    assert jsontext.dumps(doc) == python_json(doc)


class Colour(enum.Enum):
    RED = 1


class Level(enum.IntEnum):
    HIGH = 2


class Microseconds(float):
    pass


def test_where_the_encoders_differ_python_is_written() -> None:
    cycle: list = []
    cycle.append(cycle)
    cases = [
        # orjson: 0.00001, -2.5e-7, 5e-324 (the same digits)
        {"a": 1e-05, "b": [-2.5e-07, 5e-324, 1.5e-05, 0.0001, 1e-100, 1e16, -0.0]},
        1e-05,
        # the same text inside strings stays as it is
        {"text 1e-5": "1e-5\t0.00001: 0.00001,", "x": ["0.00001", "a 1e-7"]},
        # ensure_ascii: escapes, surrogate pairs above U+FFFF, DEL
        {"réseau": "é€😀\x7f\x01\n\"\\/", "ü": ["ß"]}, ["DEL alone: \x7f"],
        # Python's encoder alone: NaN and infinities refused, keys turned into strings, integers
        # beyond 64 bits, subclasses, enums, a cycle
        {"x": math.nan}, [math.inf], {"x": -math.inf}, {1: 2, None: 3, 2.5: 4}, {"big": 2**64},
        [Microseconds(1e-05)], {"e": Level.HIGH}, {"e": Colour.RED}, cycle, "\ud800",
        {"nested": [[[]], {}, (1, 2e-06)]},
    ]
    for data in cases:
        assert outcome(jsontext.dumps, data) == outcome(python_json, data), repr(data)

    def default(x):
        raise TypeError(f"not JSON serialisable: {type(x).__name__}")

    assert (outcome(lambda d: jsontext.dumps(d, default=default), [Colour.RED])
            == outcome(lambda d: python_json(d, default), [Colour.RED]))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
    | st.sampled_from([1e-05, -3.2e-07, 2e-300, 1e16, 0.0001]) | st.text(),
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(st.text(max_size=4), children, max_size=4)),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_random_documents_are_pythons_text(data) -> None:
    assert outcome(jsontext.dumps, data) == outcome(python_json, data)
