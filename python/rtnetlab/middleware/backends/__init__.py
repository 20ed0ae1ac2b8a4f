"""Publish/subscribe backends, one module each, all behind the seed's GlobalDataSpace abstraction
(`base.Backend`): ``publisher(topic, peers).publish(bytes)`` and ``subscriber(topic, callback)``.
Adding a backend is one module and one line in ``NAMES``."""

from __future__ import annotations

import importlib

from rtnetlab.middleware.backends.base import Backend, BackendUnavailable

#: Backend name -> module under rtnetlab.middleware.backends (and its transport when it has two).
NAMES: dict[str, tuple[str, str]] = {
    "udp": ("udp", "udp"),
    "zeromq": ("zeromq", "tcp"),
    "zeromq-ipc": ("zeromq", "ipc"),
    "dds": ("dds", "udp"),
    "zenoh": ("zenoh", "tcp"),
}


def load(name: str, settings: dict) -> Backend:
    """The backend `name`, configured by the run's `settings` (addresses, DDS domain, ...);
    BackendUnavailable (one line naming it) when its library is missing."""
    if name not in NAMES:
        raise BackendUnavailable(f"{name}: unknown backend (known: {', '.join(NAMES)})")
    module, transport = NAMES[name]
    mod = importlib.import_module(f"rtnetlab.middleware.backends.{module}")
    return mod.make(name, transport, settings)


__all__ = ["NAMES", "Backend", "BackendUnavailable", "load"]
