"""Where the processes of a measurement run: `local` (one host, loopback) or `two-boards` (two
network namespaces, board 1 and board 2, joined by a veth pair shaped to 100 Mbit/s by HTB at
both ends, as the seed's two PandaBoards on a 100 Mbps switch).

Everything two-boards creates belongs to the command's run (`rtnl-<token>-0/1`,
`rtnetlab.ownership`): it is recorded before it is made and removed on every exit path of the
run (`rtnetlab testbed down --all` removes a killed run's)."""

from __future__ import annotations

from contextlib import contextmanager

from rtnetlab import ownership
from rtnetlab.errors import UserError

PLACEMENTS = ("local", "two-boards")
#: The virtualised server's guest: a third namespace behind a link from board 2 (its virtual NIC).
GUEST_ADDRESS = "10.202.0.2"
#: The emulated boards' link.
LINK_RATE = "100mbit"
LINK_BPS = 100e6
#: Addresses inside the run's own namespaces (never configured on the host).
BOARD_ADDRESSES = ("10.201.0.1", "10.201.0.2")


class Placement:
    """Per board: the command prefix that runs a process there, its address and interface."""

    def __init__(self, kind: str, token: str, boards: list[dict]):
        self.kind = kind
        self.token = token
        self.boards = boards
        #: A DDS domain of this run only (concurrent runs on one host do not discover each other).
        self.dds_domain = 1 + int(token, 16) % 200

    def settings(self, board: int) -> dict:
        b = self.boards[board]
        return {
            "address": b["address"],
            "interface": b["interface"],
            "peers": sorted({x["address"] for x in self.boards}),
            "domain": self.dds_domain,
        }

    def prefix(self, board: int) -> list[str]:
        return self.boards[board]["prefix"]

    def link_bytes(self) -> int | None:
        """Bytes both ends of the boards' link have sent so far (None: one host, no link)."""
        if self.kind != "two-boards":
            return None
        import json
        import subprocess

        total = 0
        for b in self.boards[:2]:
            ns = b["prefix"][-1]
            p = subprocess.run(
                ["ip", "-n", ns, "-s", "-j", "link", "show", "dev", b["interface"]],
                capture_output=True,
                text=True,
            )
            try:
                total += int(json.loads(p.stdout)[0]["stats64"]["tx"]["bytes"])
            except (ValueError, KeyError, IndexError):
                return None
        return total


def _shape_lines(dev: str, rate: str = LINK_RATE) -> list[str]:
    # One HTB class at the link rate; a frame counts with its FCS, preamble and gap (24 bytes).
    # Its bucket holds 20 us of the link, as the testbed's ports (testbed/tc.py): a bucket of one
    # frame let two frames out back to back after idle.
    from rtnetlab.testbed.tc import SLACK_NS

    units = {"gbit": 1e9, "mbit": 1e6, "kbit": 1e3, "bit": 1.0}
    unit = next(u for u in units if rate.endswith(u))
    bps = float(rate[: -len(unit)]) * units[unit]
    slack = max(1, round(bps * SLACK_NS / 8e9))
    return [
        f"qdisc add dev {dev} root handle 1: htb default 1",
        f"class add dev {dev} parent 1: classid 1:1 htb rate {rate} ceil {rate} "
        f"burst {slack}b cburst {slack}b overhead 24",
        f"qdisc add dev {dev} parent 1:1 handle 2: pfifo limit 10000",
    ]


@contextmanager
def placed(kind: str, own: ownership.Run, rate: str = LINK_RATE, guest: bool = False):
    """The placement `kind` (two boards: link at `rate`) of run `own`, set up for the block (its
    namespaces are the run's, removed with it whatever happens). With `guest`, board 3 is a
    guest of board 2: its own namespace behind a veth (unshaped) routed by board 2."""
    if kind not in PLACEMENTS:
        raise UserError(f"--placement: expected one of {', '.join(PLACEMENTS)}, got '{kind}'")
    if kind == "local":
        board = {"prefix": [], "address": "127.0.0.1", "interface": "lo"}
        yield Placement(kind, own.token, [board, board])
        return
    from rtnetlab.testbed import netns

    netns.check_privileges()
    run = netns.Run(own)
    plan = {
        "nodes": [{"ports": [0]}, {"ports": [1]}],
        "ports": {0: {"ifname": "mw0", "node": 0}, 1: {"ifname": "mw1", "node": 1}},
        "links": [(0, 1)],
    }
    if guest:
        plan["nodes"][1]["ports"].append(2)
        plan["nodes"].append({"ports": [3]})
        plan["ports"].update({2: {"ifname": "mw2", "node": 1}, 3: {"ifname": "mw3", "node": 2}})
        plan["links"].append((2, 3))
    run.create(plan)
    boards = []
    for k in (0, 1):
        ns, dev = run.netns(k), f"mw{k}"
        # One frame per packet: TCP's segmentation offload would hand the link's HTB a 64 KB
        # segment, which passes in one go when its tokens are not negative (a 10,000 B Zenoh
        # sample crossed the "100 Mbit/s" link in 68 us).
        one_frame = f"link set dev {dev} gso_max_segs 1 gso_max_size 1514"
        netns.batch("ip", [f"addr add {BOARD_ADDRESSES[k]}/24 dev {dev}", one_frame], ns)
        netns.batch("tc", _shape_lines(dev, rate), ns)
        boards.append(
            {"prefix": ["ip", "netns", "exec", ns], "address": BOARD_ADDRESSES[k], "interface": dev}
        )
    if guest:
        ns1, ns2 = run.netns(1), run.netns(2)
        netns.batch("ip", ["addr add 10.202.0.1/24 dev mw2"], ns1)
        netns._run(["ip", "netns", "exec", ns1, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"])
        netns.batch("ip", [f"addr add {GUEST_ADDRESS}/24 dev mw3", "route add default via 10.202.0.1"], ns2)
        netns.batch("ip", ["route add 10.202.0.0/24 via 10.201.0.2"], run.netns(0))
        boards.append({"prefix": ["ip", "netns", "exec", ns2], "address": GUEST_ADDRESS, "interface": "mw3"})
    yield Placement(kind, run.token, boards)
