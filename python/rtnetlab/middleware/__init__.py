"""Middleware latency laboratory (seed 001A-C): a small publish/subscribe abstraction with
pluggable backends (UDP, ZeroMQ, DDS, Zenoh), a latency harness of real processes (SCHED_FIFO and
pinned when allowed, CLOCK_MONOTONIC stamps in the payload), an emulated second board (two network
namespaces joined by a link shaped to 100 Mbit/s), and partition windows (ARINC 653 style) both
emulated and bounded by the core's periodic-window supply analysis."""

import sys
import types
from typing import Any


class _MiddlewareModule(types.ModuleType):
    """This package, callable: ``rtnetlab.middleware`` is both the laboratory's package and the
    API's ``rt.middleware(experiment, ...)`` (:func:`rtnetlab.lab.middleware`), whichever was
    imported first (importing the package sets the attribute ``rtnetlab.middleware`` to it)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from rtnetlab.lab import middleware

        return middleware(*args, **kwargs)


sys.modules[__name__].__class__ = _MiddlewareModule
