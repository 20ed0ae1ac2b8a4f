"""ZeroMQ PUB/SUB (pyzmq): over TCP as in seed 001A, or over ipc (a Unix socket, one host only).
Each subscriber binds and the publisher connects to all of them, so a subscriber is reachable
before the publisher starts; the harness's warm-up covers ZeroMQ's slow-joiner window."""

from __future__ import annotations

import os
import tempfile
import threading

from rtnetlab.middleware.backends.base import Backend, BackendUnavailable, Publisher

try:
    import zmq
except ImportError:  # pragma: no cover - depends on the installation
    zmq = None


class _ZmqPublisher(Publisher):
    def __init__(self, ctx, peers):
        self.sock = ctx.socket(zmq.PUB)
        self.sock.setsockopt(zmq.SNDHWM, 100000)
        self.sock.setsockopt(zmq.LINGER, 0)
        for p in peers:
            self.sock.connect(p)

    def publish(self, data: bytes) -> None:
        self.sock.send(data, copy=len(data) < 4096)


class ZmqBackend(Backend):
    def __init__(self, *a):
        super().__init__(*a)
        if zmq is None:
            raise BackendUnavailable(f"{self.name}: pyzmq is not installed (pip install pyzmq)")
        self.ctx = zmq.Context()
        self.paths: list[str] = []

    def subscriber(self, topic, callback):
        sock = self.ctx.socket(zmq.SUB)
        sock.setsockopt(zmq.RCVHWM, 100000)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.SUBSCRIBE, b"")
        if self.transport == "ipc":
            path = os.path.join(
                self.settings.get("ipc_dir") or tempfile.gettempdir(), f"{topic}-{os.getpid()}"
            )
            self.paths.append(path)
            sock.bind(f"ipc://{path}")
        else:
            sock.bind(f"tcp://{self.settings['address']}:*")
        endpoint = sock.getsockopt(zmq.LAST_ENDPOINT).decode()

        def loop():
            while True:
                try:
                    data = sock.recv()
                except zmq.ZMQError:
                    return
                callback(data)

        threading.Thread(target=loop, daemon=True).start()
        return endpoint

    def publisher(self, topic, peers):
        return _ZmqPublisher(self.ctx, peers)

    def close(self):
        for p in self.paths:
            try:
                os.unlink(p)
            except OSError:
                pass


def make(name, transport, settings):
    return ZmqBackend(name, transport, settings)
