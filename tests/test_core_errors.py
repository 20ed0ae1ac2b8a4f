"""The engine's errors reach Python through one bridge (crates/py/src/error.rs) as the front's
classes: an input breaking a rule is a ModelError (``place: rule``), a limit a LimitError, an
analysis that cannot run an AnalysisError; every one a UserError and so a ValueError, so callers
catching ``ValueError`` catch them as before, with the same message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rtnetlab import _core, model
from rtnetlab.errors import AnalysisError, LimitError, ModelError, UserError

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "seed002_four_vls.yaml"


@pytest.fixture(scope="module")
def handle():
    net, diagnostics = _core.load_text(EXAMPLE.read_text(), "yaml", str(EXAMPLE), [])
    assert net is not None, diagnostics
    return net


def test_a_scenario_that_does_not_fit_is_a_model_error_with_its_place(handle):
    scenario = {"duration_ns": 1_000_000, "flows": [{"flow": "VL9", "offset_ns": 0}]}
    with pytest.raises(ModelError) as e:
        handle.check_scenario(json.dumps(scenario))
    assert e.value.lines == ["scenario.flows[0].flow: no flow named 'VL9' in seed002-four-vls"]
    assert str(e.value) == e.value.lines[0]
    with pytest.raises(ModelError, match=r"^scenario\.duration_ns: invalid type"):
        handle.check_scenario(json.dumps({"duration_ns": "long"}))


def test_a_method_that_does_not_apply_is_an_analysis_error(handle):
    with pytest.raises(AnalysisError, match="^afdx-naive has no grouping"):
        handle.analyze_json("afdx-naive", grouping=True)
    with pytest.raises(AnalysisError, match="^fifo-lp needs a linear-programming solver"):
        handle.analyze_summary("fifo-lp")
    with pytest.raises(AnalysisError, match="^no flow named 'VL9' in the network$"):
        handle.explain_json("tfa", False, False, "VL9")
    # An unknown name stays a plain ValueError, which the front names the option of.
    with pytest.raises(ValueError, match="^unknown analysis method 'nope'") as e:
        handle.analyze_json("nope")
    assert type(e.value) is ValueError


def test_the_front_keeps_the_class_and_adds_the_place():
    net = model.load_file(EXAMPLE)
    with pytest.raises(AnalysisError, match=f"^{EXAMPLE}: afdx-naive has no grouping"):
        net.analyze("afdx-naive", grouping=True)
    with pytest.raises(AnalysisError, match="^--explain: no flow named 'VL9'"):
        net.explain("tfa", False, False, "VL9")


def test_limits_are_limit_errors():
    with pytest.raises(LimitError, match="^flows: must be at least 1, got 0$"):
        _core.limits_json(["flows=0"])
    deeper = r"^f\.json:1:13: lists and mappings nest deeper than the limit of 2 levels"
    with pytest.raises(LimitError, match=deeper):
        _core.parse_text('{"a": {"b": {"c": 1}}}', "json", "f.json", ["depth=2"])
    # A text that is not JSON is no limit: a plain ValueError, as before.
    with pytest.raises(ValueError, match=r"^f\.json:1:") as e:
        _core.parse_text('{"a": ', "json", "f.json", [])
    assert not isinstance(e.value, UserError)


def test_rules_of_the_cloud_studies_are_model_errors():
    with pytest.raises(ModelError, match=r"^shares: must sum to 1"):
        _core.slrm_step([0.6, 0.6], [0.0, 0.0], 0.1)
    with pytest.raises(ModelError, match=r"^kp, ki: must be finite"):
        _core.slrm_sl_next(0.5, 0.0, 0.0, kp=-1.0)
    with pytest.raises(ModelError, match=r"^apps: invalid type"):
        _core.slrm_simulate_json(json.dumps({"apps": 3}))


def test_arguments_named_by_the_engine_stay_in_the_exception_s_args():
    with pytest.raises(ValueError) as e:
        _core.admit_json("{}", "[]")
    assert len(e.value.args) == 2 and e.value.args[0] in ("infrastructure", "requests")
    with pytest.raises(_core.ChoiceError) as c:
        _core.dopa_fig6("nope", 1, 1, 0)
    assert c.value.args[0] == "kind"


def test_every_engine_error_is_a_value_error():
    for cls in (ModelError, LimitError, AnalysisError, _core.ChoiceError):
        assert issubclass(cls, ValueError)
    for cls in (ModelError, LimitError, AnalysisError):
        assert issubclass(cls, UserError)
