"""rtnetlab: worst-case analysis, simulation and synthesis for real-time networks.

The engine (model, analysis, simulation, synthesis) is the Rust extension ``rtnetlab._core``;
this package is the front: reading files, the command line, reports.
"""

from rtnetlab._core import __version__
from rtnetlab.errors import ModelError, UserError
from rtnetlab.model import Network, load_file, load_text

__all__ = ["Network", "ModelError", "UserError", "load_file", "load_text", "__version__"]
