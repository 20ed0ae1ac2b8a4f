"""rtnetlab: worst-case analysis, simulation and synthesis for real-time networks.

The engine (model, analysis, simulation, synthesis) is the Rust extension ``rtnetlab._core``;
this package is the front: reading files, the command line, reports. The names below are
loaded on first use, so that importing a part of the front (``rtnetlab --help``) does not load
the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rtnetlab.errors import ModelError, UserError

if TYPE_CHECKING:
    from rtnetlab.model import Network, load_file, load_text

__all__ = ["Network", "ModelError", "UserError", "load_file", "load_text", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from rtnetlab._core import __version__

        return __version__
    if name in ("Network", "load_file", "load_text"):
        from rtnetlab import model

        return getattr(model, name)
    raise AttributeError(f"module 'rtnetlab' has no attribute {name!r}")
