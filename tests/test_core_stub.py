"""The binding's stub (python/rtnetlab/_core.pyi) lists exactly what the compiled binding offers:
a function, class or method added to crates/py/src/ (the module of its domain) without its stub
fails here, and so does a stub left behind by a removed one."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from rtnetlab import _core

STUB = Path(__file__).resolve().parents[1] / "python" / "rtnetlab" / "_core.pyi"


def _stub() -> tuple[set[str], dict[str, set[str]]]:
    """Top-level functions and classes of the stub, and each class's public members."""
    tree = ast.parse(STUB.read_text())
    names: set[str] = set()
    members: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
            members[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
    return names, members


def _public(obj: object) -> set[str]:
    return {n for n in dir(obj) if not n.startswith("_")}


def test_the_stub_lists_every_function_and_class_of_the_binding() -> None:
    names, _ = _stub()
    offered = {n for n in _public(_core) if callable(getattr(_core, n))}
    assert names == offered, {"without a stub": offered - names, "stub of nothing": names - offered}


def test_the_stub_lists_every_method_of_each_class() -> None:
    _, members = _stub()
    for cls, stubbed in members.items():
        offered = _public(getattr(_core, cls))
        if inspect.isclass(getattr(_core, cls)) and issubclass(getattr(_core, cls), BaseException):
            offered -= _public(ValueError)  # an exception's own members come from ValueError
        diff = {"without a stub": offered - stubbed, "stub of nothing": stubbed - offered}
        assert stubbed == offered, (cls, diff)


def test_every_stub_entry_has_its_one_line_description() -> None:
    tree = ast.parse(STUB.read_text())
    missing = [
        n.name
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not (ast.get_docstring(n) or "").strip()
    ]
    assert not missing


def test_the_stub_lists_the_engine_s_constants_and_the_front_reads_them() -> None:
    tree = ast.parse(STUB.read_text())
    annotated = [n.target for n in tree.body if isinstance(n, ast.AnnAssign)]
    stubbed = {t.id for t in annotated if isinstance(t, ast.Name)}
    offered = {n for n in dir(_core) if n.isupper() or n == "__version__"}
    assert stubbed == offered
    assert (_core.INTERFRAME_BYTES, _core.AFDX_FRAME_OVERHEAD_BYTES) == (20, 67)
    assert _core.AFDX_BAGS_MS == tuple(2**k for k in range(8))
    from rtnetlab.io import wopanet

    assert wopanet.DEFAULT_OVERHEAD == _core.AFDX_FRAME_HEADERS_BYTES + _core.INTERFRAME_BYTES
    assert wopanet.VALID_BAGS_MS == tuple(float(b) for b in _core.AFDX_BAGS_MS)
