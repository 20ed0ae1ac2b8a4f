"""DDS through Eclipse Cyclone DDS (the `cyclonedds` package): one participant per process, a
reliable keep-last topic whose sample is the payload as a byte sequence, a listener callback on
the subscriber side.

Discovery is unicast to the run's own addresses (multicast off, participant index automatic) on a
per-run domain, so nothing is sent on the host's interfaces and concurrent runs do not meet."""

# No `from __future__ import annotations`: Cyclone reads the IDL struct's annotations as types.

import os
from dataclasses import dataclass

from rtnetlab.middleware.backends.base import Backend, BackendUnavailable, Publisher

try:
    from cyclonedds.core import Listener, Policy, Qos
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.idl import IdlStruct
    from cyclonedds.idl.types import sequence, uint8
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic
    from cyclonedds.util import duration
except ImportError:  # pragma: no cover - depends on the installation
    IdlStruct = None

if IdlStruct is not None:

    @dataclass
    class Payload(IdlStruct, typename="rtnetlab::Payload"):
        data: sequence[uint8]


def config_xml(interface: str, peers: list[str]) -> str:
    """The Cyclone configuration of one process: its interface, no multicast, the run's peers."""
    peer_xml = "".join(f'<Peer address="{p}"/>' for p in peers)
    return (
        "<CycloneDDS><Domain>"
        f'<General><Interfaces><NetworkInterface name="{interface}"/></Interfaces>'
        "<AllowMulticast>false</AllowMulticast></General>"
        f"<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>60"
        f"</MaxAutoParticipantIndex><Peers>{peer_xml}</Peers></Discovery>"
        "</Domain></CycloneDDS>"
    )


class _DdsPublisher(Publisher):
    def __init__(self, writer):
        self.writer = writer

    def publish(self, data: bytes) -> None:
        self.writer.write(Payload(data))


class DdsBackend(Backend):
    def __init__(self, *a):
        super().__init__(*a)
        if IdlStruct is None:
            raise BackendUnavailable(f"{self.name}: cyclonedds is not installed (pip install cyclonedds)")
        os.environ["CYCLONEDDS_URI"] = config_xml(self.settings["interface"], self.settings["peers"])
        try:
            self.participant = DomainParticipant(self.settings["domain"])
        except Exception as e:
            raise BackendUnavailable(f"{self.name}: Cyclone DDS failed to start: {e}") from None
        self.qos = Qos(
            Policy.Reliability.Reliable(duration(seconds=1)),
            Policy.History.KeepLast(1000),
            Policy.Durability.Volatile,
        )
        self.entities: list = []

    def _topic(self, name):
        return Topic(self.participant, name, Payload, qos=self.qos)

    def subscriber(self, topic, callback):
        def on_data(reader):
            for sample in reader.take(N=64):
                callback(bytes(sample.data))  # the binding hands a list of ints

        reader = DataReader(
            self.participant, self._topic(topic), qos=self.qos, listener=Listener(on_data_available=on_data)
        )
        self.entities.append(reader)
        return ""

    def publisher(self, topic, peers):
        writer = DataWriter(self.participant, self._topic(topic), qos=self.qos)
        self.entities.append(writer)
        return _DdsPublisher(writer)


def make(name, transport, settings):
    return DdsBackend(name, transport, settings)
