"""What-if analysis: edit a validated network one change at a time and analyse it again
incrementally (`Network.what_if`).

A `WhatIf` holds the engine's validated network and TFA's state of it. Each edit — a flow's
``bag``, ``lmax``, jitter or deadline, a link's rate, a named scheduler's weights or quanta — is
validated on what it changes only (the edited flow on the topology, or the topology alone, then
the rules between flows), with the format's one-line messages, and only the ports whose inputs
changed are analysed again. `WhatIf.analyze` gives what ``Network.analyze("tfa")`` gives on the
edited description, row for row, to the bit.

Only ``tfa`` (FIFO multiplexing, no grouping) is kept incrementally. ``best``, the default of
`Network.analyze`, takes per flow the tightest of several analyses (SFA, PMOO, the linear
program...) that have no incremental form: a what-if refuses it, and every other method.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rtnetlab.errors import UserError
from rtnetlab.quantities import with_units

if TYPE_CHECKING:
    from rtnetlab import model
    from rtnetlab.network import Network
    from rtnetlab.result import AnalysisResult

#: The analyses a what-if keeps up to date in place.
METHODS = ("tfa",)

Quantity = str | float | int


class WhatIf:
    """A validated network under what-if edits, analysed again in place after each one.

    Made by `Network.what_if`. The edits chain (each returns the what-if); a refused edit raises
    `rtnetlab.ModelError` (one line per broken rule: place and rule) and changes nothing.

    ```pycon
    >>> import rtnetlab as rt
    >>> net = rt.Network("two-hosts", defaults={"link_rate": "100Mbps"})
    >>> _ = net.add_end_system("ES1").add_end_system("ES2").add_switch("SW1")
    >>> _ = net.add_link("ES1", "SW1").add_link("ES2", "SW1")
    >>> _ = net.add_virtual_link("VL1", "ES1", ["ES2"], bag="4ms", lmax="1518B", lmin="64B")
    >>> _ = net.add_virtual_link("VL2", "ES1", ["ES2"], bag="2ms", lmax="1518B", lmin="64B")
    >>> wi = net.what_if()
    >>> before = wi.analyze().bound("VL1")
    >>> wi.set_flow("VL2", bag="1ms").set_port_rate("SW1", "1Gbps").analyze().bound("VL1") < before
    True
    >>> wi.undo().undo().analyze().bound("VL1") == before
    True

    ```
    """

    def __init__(self, engine: model.WhatIf, base: Network, method: str) -> None:
        self._engine = engine
        self._base = base
        self._method = method

    @property
    def method(self) -> str:
        """The analysis kept up to date (``tfa``)."""
        return self._method

    # -- edits --------------------------------------------------------------------------------

    def set_flow(self, name: str, **keys: Any) -> WhatIf:
        """Changes keys of flow `name`: its traffic (``bag``, ``lmin``, ``lmax``,
        ``release_jitter``, ``period``, ``size``, ``jitter``, ``offset``, ``burst``, ``rate``,
        ``min_packet``, ``max_packet``, ``skew_max``) or ``deadline``; not its route, class, name
        or type (edit the `Network` and analyse it again)."""
        self._engine.set_flow(name, with_units(keys))
        return self

    def set_port_rate(self, node: str, rate: Quantity, port: str | None = None) -> WhatIf:
        """The rate of `node`'s links (or of the one on `port`), both directions, as
        `Network.set_port_rate` sets it."""
        self._engine.set_port_rate(node, with_units(rate, "rate"), port)
        return self

    def set_scheduler(self, name: str, **params: Any) -> WhatIf:
        """Changes parameters of named scheduler `name` (not its ``kind``); a mapping parameter
        (``weights``, ``quanta``, ``factors``, ``idle_slopes``) is updated key by key, as
        `Network.set_scheduler` does."""
        self._engine.set_scheduler(name, with_units(params))
        return self

    def undo(self) -> WhatIf:
        """Takes back the last edit still in force: the description, the network and the
        analysis' state as they were before it. `rtnetlab.UserError` when there is none."""
        if not self._engine.handle.undo():
            raise UserError("what-if: no edit to undo")
        return self

    @property
    def edits(self) -> int:
        """How many edits are in force."""
        return int(self._engine.handle.edits())

    @property
    def analysed_ports(self) -> int:
        """How many egress ports the last edit analysed again (`ports` when it took the whole
        pass: a change of a port's queues or regulators, a cyclic network)."""
        return int(self._engine.handle.last_analysed_ports())

    @property
    def ports(self) -> int:
        """The network's egress ports."""
        return int(self._engine.handle.ports())

    # -- results ------------------------------------------------------------------------------

    def analyze(self) -> AnalysisResult:
        """The bounds of the network as edited: what ``Network.analyze(method)`` gives on
        `network`, with the validation warnings of the network as edited (those an edit made
        obsolete are gone). The result's ``network`` is None (`network` builds it)."""
        from rtnetlab.result import AnalysisResult

        return AnalysisResult(self._engine.analyze(), self.warnings, None)

    @property
    def warnings(self) -> list[str]:
        """The validation warnings of the network as edited: what validating `to_dict` gives,
        each once (an edit that takes a warning's cause away takes the warning away)."""
        return self._engine.warnings

    def to_dict(self) -> dict[str, Any]:
        """The description as edited, as plain data (`Network.from_dict` takes it back)."""
        return self._engine.spec

    def network(self) -> Network:
        """The network as edited, a new `Network` (its description: `to_dict`)."""
        from rtnetlab.network import Network

        return Network._of_data(self.to_dict(), self._base.source)

    def __repr__(self) -> str:
        return f"<rtnetlab.WhatIf on {self._base.name!r}: {self.edits} edits, method {self._method}>"


def what_if(network: Network, method: str) -> WhatIf:
    """A what-if on `network` (validated now if needed) kept up to date by `method`."""
    if method not in METHODS:
        raise UserError(f"--method: a what-if keeps {', '.join(METHODS)} up to date in place, not "
                        f"'{method}' (best combines analyses without an incremental form: analyse the "
                        f"edited network, what_if().network().analyze('{method}'))")
    return WhatIf(network.engine.what_if(network.data), network, method)
