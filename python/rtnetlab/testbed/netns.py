"""Namespaces, veth pairs and their removal.

Every name a run creates carries its prefix, ``rtnl-<token>``: the namespaces
``rtnl-<token>-<node index>``, and inside them the interfaces ``rt<port id>`` (created straight in
their namespaces, so nothing ever appears in the host's). A run records itself in
``/run/rtnetlab/<token>.json`` (its process and namespaces); ``testbed down --all`` removes the
namespaces of every run whose process is gone (a crash, a kill, a setup kept with ``--keep`` or
made by ``testbed up``), and leaves alone those of runs still going. Nothing outside the run's
namespaces is touched: no host interface, route or firewall rule.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

from rtnetlab.errors import UserError

PREFIX = "rtnl-"
STATE_DIR = Path("/run/rtnetlab")
NETNS_DIR = Path("/run/netns")


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


def _start_time(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def list_namespaces() -> list[str]:
    try:
        return sorted(p.name for p in NETNS_DIR.iterdir())
    except FileNotFoundError:
        return []


class Run:
    """One run's names and state file. `create` records it before making anything, so that an
    interruption at any point leaves nothing `remove` (or `down --all`) does not find."""

    def __init__(self, token: str | None = None):
        self.token = token or secrets.token_hex(3)
        self.prefix = f"{PREFIX}{self.token}"
        self.namespaces: list[str] = []
        self.processes: list[subprocess.Popen] = []

    def netns(self, node: int) -> str:
        return f"{self.prefix}-{node}"

    @property
    def state_file(self) -> Path:
        return STATE_DIR / f"{self.token}.json"

    def record(self, kept: bool = False) -> None:
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        state = {
            "pid": os.getpid(),
            "start": _start_time(os.getpid()),
            "kept": kept,
            "namespaces": self.namespaces,
        }
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        tmp.replace(self.state_file)

    def create(self, plan: dict) -> None:
        """Namespaces (loopback up, IPv6 off so no router solicitation or MLD frame joins the
        measurement) and one veth pair per link, each end in its node's namespace."""
        self.namespaces = [self.netns(i) for i in range(len(plan["nodes"]))]
        self.record()
        for ns in self.namespaces:
            _run(["ip", "netns", "add", ns])
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
        for ns in self.namespaces:
            for key in ("net.ipv6.conf.all.disable_ipv6", "net.ipv6.conf.default.disable_ipv6"):
                _run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"{key}=1"], check=False)
        for k, ns in enumerate(self.namespaces):
            batch(
                "ip",
                ["link set lo up"] + [f"link set {ports[p]['ifname']} up" for p in plan["nodes"][k]["ports"]],
                ns,
            )

    def stop_processes(self) -> None:
        for p in self.processes:
            if p.poll() is None:
                p.terminate()
        deadline = time.monotonic() + 3
        for p in self.processes:
            try:
                p.wait(timeout=max(0.05, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.processes = []

    def remove(self) -> None:
        """Stops the run's processes and removes its namespaces (their interfaces and qdiscs go
        with them) and its state file. Signals are held meanwhile, so a second Ctrl-C cannot
        leave half of it."""
        with held_signals():
            self.stop_processes()
            remove_namespaces(n for n in list_namespaces() if n.startswith(self.prefix + "-"))
            self.state_file.unlink(missing_ok=True)


def remove_namespaces(names) -> list[str]:
    """Kills what still runs in each namespace, then deletes it."""
    removed = []
    for ns in names:
        pids = _run(["ip", "netns", "pids", ns], check=False).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        for _ in range(50):
            if _run(["ip", "netns", "del", ns], check=False).returncode == 0 or not (NETNS_DIR / ns).exists():
                removed.append(ns)
                break
            time.sleep(0.05)
    return removed


@contextmanager
def held_signals():
    """SIGINT and SIGTERM wait until the block is done (then act as usual)."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    except (ValueError, OSError):
        old = None
    try:
        yield
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _owner_alive(token: str) -> bool:
    path = STATE_DIR / f"{token}.json"
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    if state.get("kept"):
        return False
    pid = state.get("pid")
    return isinstance(pid, int) and _start_time(pid) is not None and _start_time(pid) == state.get("start")


def leftovers() -> dict[str, list[str]]:
    """Namespaces of runs whose process is gone (or kept), by token."""
    out: dict[str, list[str]] = {}
    for ns in list_namespaces():
        if not ns.startswith(PREFIX):
            continue
        token = ns[len(PREFIX) :].split("-", 1)[0]
        if not _owner_alive(token):
            out.setdefault(token, []).append(ns)
    return out


def down(token: str | None = None) -> list[str]:
    """Removes one run's namespaces (by token or prefix), or every leftover when `token` is None."""
    if token is not None:
        token = token.removeprefix(PREFIX)
        names = [n for n in list_namespaces() if n.startswith(f"{PREFIX}{token}-")]
        if not names:
            raise UserError(f"testbed down: no namespace of run {PREFIX}{token}")
        with held_signals():
            removed = remove_namespaces(names)
            (STATE_DIR / f"{token}.json").unlink(missing_ok=True)
        return removed
    removed = []
    with held_signals():
        for tok, names in leftovers().items():
            removed += remove_namespaces(names)
            (STATE_DIR / f"{tok}.json").unlink(missing_ok=True)
        # State files of runs whose namespaces are all gone.
        if STATE_DIR.is_dir():
            for f in STATE_DIR.glob("*.json"):
                if not _owner_alive(f.stem) and not any(
                    n.startswith(f"{PREFIX}{f.stem}-") for n in list_namespaces()
                ):
                    f.unlink(missing_ok=True)
    return removed
