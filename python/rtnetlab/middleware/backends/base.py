"""The abstraction every backend implements (the seed's GlobalDataSpace, Publisher, Subscriber)."""

from __future__ import annotations

import socket
from collections.abc import Callable


class BackendUnavailable(Exception):
    """A backend that is not installed or failed to start; the message is one line naming it."""


class Publisher:
    def publish(self, data: bytes) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class Backend:
    """One middleware in one process. `subscriber` returns the endpoint the publisher is given
    (its address where the backend needs one; discovery-based backends return ""), `publisher`
    receives every subscriber's endpoint."""

    name = "base"

    def __init__(self, name: str, transport: str, settings: dict):
        self.name = name
        self.transport = transport
        self.settings = settings

    def subscriber(self, topic: str, callback: Callable[[bytes], None]) -> str:  # pragma: no cover
        raise NotImplementedError

    def publisher(self, topic: str, peers: list[str]) -> Publisher:  # pragma: no cover
        raise NotImplementedError

    def close(self) -> None:
        pass


def free_port(address: str, kind: int = socket.SOCK_STREAM) -> int:
    """A port free on `address` now (the kernel's choice), for libraries that take a port number
    but cannot say which one they bound to."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind((address, 0))
        return s.getsockname()[1]
