"""The baseline: plain UDP datagrams, one per subscriber (unicast), no serialisation. Its latency
is the harness's own cost plus the kernel's."""

from __future__ import annotations

import socket
import threading

from rtnetlab.middleware.backends.base import Backend, Publisher


class _UdpPublisher(Publisher):
    def __init__(self, peers: list[str]):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
        self.peers = []
        for p in peers:
            host, port = p.rsplit(":", 1)
            self.peers.append((host, int(port)))

    def publish(self, data: bytes) -> None:
        for peer in self.peers:
            self.sock.sendto(data, peer)


class UdpBackend(Backend):
    def __init__(self, *a):
        super().__init__(*a)
        self.socks: list[socket.socket] = []

    def subscriber(self, topic, callback):
        address = self.settings["address"]
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        s.bind((address, 0))
        self.socks.append(s)

        def loop():
            while True:
                try:
                    data = s.recv(65536)
                except OSError:
                    return
                callback(data)

        threading.Thread(target=loop, daemon=True).start()
        return f"{address}:{s.getsockname()[1]}"

    def publisher(self, topic, peers):
        return _UdpPublisher(peers)

    def close(self):
        for s in self.socks:
            s.close()


def make(name, transport, settings):
    return UdpBackend(name, transport, settings)
