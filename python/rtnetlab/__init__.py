"""rtnetlab: worst-case analysis, simulation and synthesis for real-time networks.

``import rtnetlab as rt``, then build a network in code (`Network`) or read one
(`load`), analyse it (`Network.analyze`), simulate it (`Network.simulate`),
search its worst case (`Network.worst_case`), explain a bound (`Network.explain`),
configure it (``Network.configure_*``), run studies over many networks (`sweep`,
`experiment`) and read the results as rows or data frames
(`AnalysisResult`, `SimulationResult`...). Every command of the ``rtnetlab`` command
line is a layer over these functions.

The engine (model, analysis, simulation, synthesis) is the Rust extension ``rtnetlab._core``. The
names below are loaded on first use, so that importing a part of the front (``rtnetlab --help``)
does not load the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rtnetlab.errors import ModelError, UserError

if TYPE_CHECKING:
    from rtnetlab.display import Report, report
    from rtnetlab.lab import (
        MiddlewareResult,
        SlrmResult,
        TestbedResult,
        middleware,
        slrm_run,
        slrm_simulate,
        slrm_step,
        testbed_down,
    )
    from rtnetlab.model import load_file as load_file
    from rtnetlab.model import load_text as load_text
    from rtnetlab.network import Network, load, read, schema
    from rtnetlab.result import (
        AdmissionResult,
        AnalysisResult,
        ConfigureResult,
        Explanation,
        Result,
        SimulationResult,
        WorstCaseResult,
    )
    from rtnetlab.studies import ExperimentResult, SweepResult, experiment, sweep
    from rtnetlab.synthesis import admit, configure_dtable, generate_afdx
    from rtnetlab.what_if import WhatIf

__all__ = [
    "AdmissionResult",
    "AnalysisResult",
    "ConfigureResult",
    "Explanation",
    "ExperimentResult",
    "MiddlewareResult",
    "ModelError",
    "Network",
    "Report",
    "Result",
    "SimulationResult",
    "SlrmResult",
    "SweepResult",
    "TestbedResult",
    "UserError",
    "WhatIf",
    "WorstCaseResult",
    "__version__",
    "admit",
    "configure_dtable",
    "experiment",
    "generate_afdx",
    "load",
    "middleware",
    "read",
    "report",
    "schema",
    "slrm_run",
    "slrm_simulate",
    "slrm_step",
    "sweep",
    "testbed_down",
]

#: Where each lazily loaded public name lives.
_LAZY = {
    "Network": "rtnetlab.network",
    "load": "rtnetlab.network",
    "schema": "rtnetlab.network",
    "read": "rtnetlab.network",
    "Result": "rtnetlab.result",
    "AnalysisResult": "rtnetlab.result",
    "SimulationResult": "rtnetlab.result",
    "WorstCaseResult": "rtnetlab.result",
    "Explanation": "rtnetlab.result",
    "ConfigureResult": "rtnetlab.result",
    "AdmissionResult": "rtnetlab.result",
    "admit": "rtnetlab.synthesis",
    "Report": "rtnetlab.display",
    "configure_dtable": "rtnetlab.synthesis",
    "generate_afdx": "rtnetlab.synthesis",
    "sweep": "rtnetlab.studies",
    "SlrmResult": "rtnetlab.lab",
    "middleware": "rtnetlab.lab",
    "MiddlewareResult": "rtnetlab.lab",
    "TestbedResult": "rtnetlab.lab",
    "testbed_down": "rtnetlab.lab",
    "slrm_step": "rtnetlab.lab",
    "slrm_simulate": "rtnetlab.lab",
    "slrm_run": "rtnetlab.lab",
    "SweepResult": "rtnetlab.studies",
    "experiment": "rtnetlab.studies",
    "ExperimentResult": "rtnetlab.studies",
    "WhatIf": "rtnetlab.what_if",
    # The engine's handle of a file, for code written before the API (``rt.load`` supersedes them).
    "load_file": "rtnetlab.model",
    "load_text": "rtnetlab.model",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from rtnetlab._core import __version__

        return __version__
    if name == "report":
        # The report's package is callable (rt.report(...) is rtnetlab.display.report): importing
        # it sets this attribute to it anyway.
        import rtnetlab.report

        return rtnetlab.report
    module = _LAZY.get(name)
    if module is not None:
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rtnetlab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
