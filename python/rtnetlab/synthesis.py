"""Networks and configurations made from requirements rather than read: a synthetic AFDX network
(`generate_afdx`), a Deficit Table from latency and bandwidth requirements (`configure_dtable`),
and the admission of virtual service networks on an infrastructure (`admit`). Configurations of
a given network are its ``configure_*`` methods (`rtnetlab.Network`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rtnetlab.errors import UserError

if TYPE_CHECKING:
    from rtnetlab.network import Network
    from rtnetlab.result import AdmissionResult, ConfigureResult


def generate_afdx(vls: int = 100, switches: int | None = None, seed: int = 1, planes: int = 2,
                  end_systems: int | None = None) -> Network:
    """A realistic synthetic AFDX network (BAG and frame mix after seed 000 Table 1) of `vls`
    virtual links on `planes` (1 or 2) redundant planes, sized for its traffic as
    ``rtnetlab generate afdx`` sizes it; how it was sized is in the network's ``sizing``
    attribute (switches, end systems, link rates, the largest port load).

    ```pycon
    >>> import rtnetlab as rt
    >>> net = rt.generate_afdx(20, seed=3)
    >>> len(net.data["flows"])
    20

    ```
    """
    from rtnetlab import _core, limits
    from rtnetlab.network import Network

    # Before the engine allocates them (200,000,000 VLs would take the host's memory).
    limits.check("vls", vls, "--vls")
    if switches is not None:
        limits.check("nodes", switches * planes, "--switches", f"{switches * planes:,} switches")
    if end_systems is not None:
        limits.check("nodes", (switches or 0) * planes + end_systems, "--end-systems")
    try:
        text, sizing_text = _core.generate_afdx_sized(vls, switches or 0, seed, planes, end_systems or 0)
    except ValueError as e:
        raise UserError(f"generate afdx: {e}") from None
    net = Network._of_data(json.loads(text))
    net.sizing = json.loads(sizing_text)
    return net


def configure_dtable(requirements: str | Path | dict[str, Any]) -> ConfigureResult:
    """Deficit Table entries and weights that decouple latency from bandwidth (seed 003 §4-5),
    with the DTable-WF2Q, SCFQ and DRR configurations of the same shares, from a requirements
    file or its plain data (``rtnetlab configure dtable``). ``.data["schedulers"]`` holds the
    configurations (named scheduler entries for a description); ``feasible`` is false, with the
    ``reason``, when no table meets the requirements."""
    from rtnetlab import configure
    from rtnetlab.result import ConfigureResult

    source = requirements if isinstance(requirements, dict) else Path(requirements)
    return ConfigureResult(configure.dtable(source), [], None)


def admit(infrastructure: str | Path | dict[str, Any], requests: str | Path | dict[str, Any], *,
          incremental: bool = True, names: tuple[str, str] | None = None) -> AdmissionResult:
    """Online admission of virtual service networks (seed 001F, ``rtnetlab admit``): the
    requests in arrival order, components placed on cores (EDF), virtual links on paths whose
    flows' bounds meet their latency and jitter; every rejection names its constraint.
    `infrastructure` and `requests` are files (docs/CLOUD.md) or their plain data.
    `incremental=False` validates and analyses the whole description at every trial (the
    reference the incremental admission is tested against). `names`: how messages name the two
    inputs (default: their paths). ``.flows`` has one row per decision; ``.summary`` the
    acceptance ratio and decision times."""
    from rtnetlab.cloud import admit as adm
    from rtnetlab.result import AdmissionResult

    infra_name = "infrastructure" if isinstance(infrastructure, dict) else str(infrastructure)
    requests_name = "requests" if isinstance(requests, dict) else str(requests)
    infra = (infrastructure if isinstance(infrastructure, dict)
             else adm.read_infrastructure(Path(infrastructure)))
    reqs = requests if isinstance(requests, dict) else adm.read_requests(Path(requests))
    if names is not None:
        infra_name, requests_name = names
    report = adm.admit(infra, reqs, infra_name, requests_name, incremental)
    return AdmissionResult(report, [], None)
