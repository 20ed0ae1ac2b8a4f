"""Eclipse Zenoh (`eclipse-zenoh`) in peer mode over TCP. Multicast scouting is off (nothing leaves
the run's addresses): each subscriber's session listens on its own port and the publisher's session
connects to all of them; the publisher is `express` (no batching) and blocks on congestion, so a
sample is neither delayed for a batch nor dropped. Shared memory is off: every sample crosses the
network (on two boards, the modelled link; the harness counts its bytes)."""

from __future__ import annotations

import json

from rtnetlab.middleware.backends.base import Backend, BackendUnavailable, Publisher, free_port

try:
    import zenoh as _zenoh
except ImportError:  # pragma: no cover - depends on the installation
    _zenoh = None


def _config(listen: list[str], connect: list[str]):
    conf = _zenoh.Config()
    conf.insert_json5("mode", '"peer"')
    conf.insert_json5("scouting/multicast/enabled", "false")
    conf.insert_json5("scouting/gossip/enabled", "false")
    # Zenoh hands payloads of 3,072 B and more through shared memory when both ends are on one
    # host, bypassing the network: on two boards the samples must cross the modelled link.
    conf.insert_json5("transport/shared_memory/enabled", "false")
    conf.insert_json5("listen/endpoints", json.dumps(listen))
    conf.insert_json5("connect/endpoints", json.dumps(connect))
    return conf


class _ZenohPublisher(Publisher):
    def __init__(self, pub):
        self.pub = pub

    def publish(self, data: bytes) -> None:
        self.pub.put(data)


class ZenohBackend(Backend):
    def __init__(self, *a):
        super().__init__(*a)
        if _zenoh is None:
            raise BackendUnavailable(
                f"{self.name}: eclipse-zenoh is not installed (pip install eclipse-zenoh)"
            )
        self.sessions: list = []
        self.keep: list = []

    def _open(self, listen, connect):
        try:
            s = _zenoh.open(_config(listen, connect))
        except Exception as e:
            raise BackendUnavailable(f"{self.name}: Zenoh failed to start: {e}") from None
        self.sessions.append(s)
        return s

    def subscriber(self, topic, callback):
        endpoint = f"tcp/{self.settings['address']}:{free_port(self.settings['address'])}"
        s = self._open([endpoint], [])
        self.keep.append(s.declare_subscriber(topic, lambda sample: callback(sample.payload.to_bytes())))
        return endpoint

    def publisher(self, topic, peers):
        s = self._open([], peers)
        pub = s.declare_publisher(
            topic,
            congestion_control=_zenoh.CongestionControl.BLOCK,
            reliability=_zenoh.Reliability.RELIABLE,
            express=True,
        )
        self.keep.append(pub)
        return _ZenohPublisher(pub)


def make(name, transport, settings):
    return ZenohBackend(name, transport, settings)
