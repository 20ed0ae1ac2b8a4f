"""Namespaces, veth pairs and their removal.

Every name a run creates carries its prefix, ``rtnl-<token>``: the namespaces
``rtnl-<token>-<node index>``, and inside them the interfaces ``rt<port id>`` (created straight in
their namespaces, so nothing ever appears in the host's). The namespaces are recorded in the run's
record (`rtnetlab.ownership`) before they are made; ``testbed down --all`` removes those of every
run whose process is gone (a crash, a kill, a setup kept with ``--keep`` or made by ``testbed
up``), leaves alone those of runs still going, and only lists ``rtnl-*`` namespaces no record
names. Nothing outside the run's namespaces is touched: no host interface, route or firewall rule.
"""

from __future__ import annotations

import os
import subprocess

from rtnetlab import ownership
from rtnetlab.errors import UserError
from rtnetlab.ownership import NETNS_DIR, PREFIX, held_signals, list_namespaces

__all__ = ["NETNS_DIR", "PREFIX", "Run", "batch", "check_privileges", "held_signals", "list_namespaces"]


def check_privileges() -> None:
    """Root (CAP_NET_ADMIN and CAP_SYS_ADMIN) is needed for namespaces; say so in one line."""
    if os.geteuid() != 0:
        raise UserError("testbed: needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN to create network namespaces)")
    for tool in ("ip", "tc"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            raise UserError(f"testbed: the `{tool}` command (iproute2) is missing")


def _run(args: list[str], stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(args, input=stdin, capture_output=True, text=True)
    if check and p.returncode != 0:
        what = (p.stderr or p.stdout).strip().splitlines()
        raise UserError(f"testbed: `{' '.join(args[:4])}` failed: {what[-1] if what else p.returncode}")
    return p


def batch(tool: str, lines: list[str], ns: str | None = None) -> None:
    """Runs iproute2 commands in one process (`ip -batch -`, `tc -batch -`), in namespace `ns`;
    a failure is reported with its line."""
    if not lines:
        return
    where = ["-n", ns] if ns else []
    p = subprocess.run(
        [tool, *where, "-batch", "-"], input="\n".join(lines) + "\n", capture_output=True, text=True
    )
    if p.returncode != 0:
        errors = [x for x in (p.stderr or p.stdout).strip().splitlines() if not x.startswith("Warning")]
        raise UserError(f"testbed: {tool}: {errors[0] if errors else p.returncode}")


class Run:
    """One run's namespaces and links, recorded in the ownership run `own` before they are made
    (the namespaces are named after it: ``<own.name>-<node index>``)."""

    def __init__(self, own: ownership.Run):
        self.own = own
        self.token = own.token
        self.prefix = own.name

    def netns(self, node: int) -> str:
        return f"{self.prefix}-{node}"

    def create(self, plan: dict) -> None:
        """Namespaces (loopback up, IPv6 off so no router solicitation or MLD frame joins the
        measurement) and one veth pair per link, each end in its node's namespace."""
        names = [self.netns(i) for i in range(len(plan["nodes"]))]
        entries = [{"kind": "netns", "name": ns} for ns in names]
        self.own.record(*entries)
        for k, ns in enumerate(names):
            p = _run(["ip", "netns", "add", ns], check=False)
            if p.returncode != 0:
                # Not made: this one (its name may be someone else's) and those after it.
                self.own.forget(*entries[k:])
                what = (p.stderr or p.stdout).strip().splitlines()
                raise UserError(f"testbed: namespace {ns}: {what[-1] if what else 'not created'}")
        lines = []
        ports = plan["ports"]
        for a, b in plan["links"]:
            pa, pb = ports[a], ports[b]
            lines.append(
                f"link add name {pa['ifname']} netns {self.netns(pa['node'])} mtu 1500 txqueuelen 10000 "
                f"type veth peer name {pb['ifname']} netns {self.netns(pb['node'])} mtu 1500 "
                "txqueuelen 10000"
            )
        batch("ip", lines)
        for ns in names:
            for key in ("net.ipv6.conf.all.disable_ipv6", "net.ipv6.conf.default.disable_ipv6"):
                _run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"{key}=1"], check=False)
        for k, ns in enumerate(names):
            batch(
                "ip",
                ["link set lo up"] + [f"link set {ports[p]['ifname']} up" for p in plan["nodes"][k]["ports"]],
                ns,
            )


def remove_namespaces(names) -> list[str]:
    """Deletes namespaces by name (what still runs inside keeps its namespace until it ends:
    processes are killed only from a run's record)."""
    removed = []
    for ns in names:
        if ownership.remove_netns(ns) is None:
            removed.append(ns)
    return removed


def leftovers() -> dict[str, list[str]]:
    """Namespaces of runs whose process is gone (or that were kept), as their records list them,
    by token; ``rtnl-*`` namespaces no record names are someone else's and not among them."""
    out: dict[str, list[str]] = {}
    present = set(list_namespaces())
    for d in ownership.records():
        if ownership.owner_alive(d):
            continue
        names = [o["name"] for o in d["objects"] if o["kind"] == "netns" and o["name"] in present]
        if names:
            out[d["run"][len(PREFIX) :]] = names
    return out
