"""The testbed's section (``report --measured``): measured beside bound and simulated, from
``rtnetlab.testbed.compare``.
"""

from __future__ import annotations


def html(data: dict) -> str:
    if "measured" not in data:
        return ""
    from rtnetlab.testbed import compare

    return compare.section(data)
