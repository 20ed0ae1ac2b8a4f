"""``rtnetlab demo``: the guided case study (``rtnetlab.demo``)."""

from __future__ import annotations

from rtnetlab.cli.common import JsonOpt


def demo(as_json: JsonOpt = False) -> None:
    """Run the embedded AFDX case study end to end."""
    from rtnetlab import demo as demo_mod

    demo_mod.run(as_json=as_json)
