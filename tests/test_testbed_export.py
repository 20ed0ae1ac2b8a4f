"""`rtnetlab export tc`: the script for a real end system, checked by applying it to a veth
interface in a namespace of its own and reading back what tc installed."""

from __future__ import annotations

import json
import os
import subprocess
import uuid

import pytest
import yaml

from test_testbed import PRIORITY_NET


def export(cli, path, *args):
    return subprocess.run([str(cli), "export", "tc", str(path), *args], capture_output=True, text=True)


def test_script_per_vl_at_its_contract(tmp_path, rtnetlab_cli):
    f = tmp_path / "net.yaml"
    f.write_text(yaml.safe_dump(PRIORITY_NET))
    p = export(rtnetlab_cli, f, "--node", "ES2", "--dev", "eth1")
    assert p.returncode == 0, p.stderr
    script = p.stdout
    # VL2: Lmax 1518 B, BAG 2 ms: (1518 + 20) * 8 bits per 2 ms = 6,152,000 bit/s, a bucket that
    # holds nothing and every frame counted as Lmax on the wire (1538 B): one frame per BAG, at
    # ES2's single priority level (its port is FIFO).
    assert (
        "htb rate 6152000bit ceil 6152000bit burst 1b cburst 1b prio 0 quantum 1538 overhead 24 mpu 1538"
        in script
    )
    assert "match ip dst 224.224.0.2/32 flowid 1:100" in script
    assert "DEV=${DEV:-eth1}" in script
    assert "the BAG as a minimum gap" not in p.stderr + script  # it is expressed now
    assert subprocess.run(["sh", "-n"], input=script, text=True).returncode == 0
    shellcheck = subprocess.run(["shellcheck", "-"], input=script, capture_output=True, text=True)
    assert shellcheck.returncode == 0, shellcheck.stdout


def test_unknown_node_and_switch_are_one_line(tmp_path, rtnetlab_cli):
    f = tmp_path / "net.yaml"
    f.write_text(yaml.safe_dump(PRIORITY_NET))
    p = export(rtnetlab_cli, f, "--node", "ES9", "--dev", "eth0")
    assert (p.returncode, p.stderr.strip()) == (2, "--node: no node named ES9")
    p = export(rtnetlab_cli, f, "--node", "SW1", "--dev", "eth0")
    assert (p.returncode, p.stderr.strip()) == (
        2,
        "--node: SW1 is a switch: export tc configures end systems",
    )


def test_drr_port_is_said_not_expressed(tmp_path, rtnetlab_cli):
    net = yaml.safe_load(yaml.safe_dump(PRIORITY_NET))
    net["schedulers"] = {"d": {"kind": "drr", "quanta": {"rt": "1518B", "be": "1518B"}}}
    net["end_systems"][1]["scheduler"] = "d"
    f = tmp_path / "net.yaml"
    f.write_text(yaml.safe_dump(net))
    p = export(rtnetlab_cli, f, "--node", "ES2", "--dev", "eth0")
    assert p.returncode == 0
    assert "#  - the port's scheduler (drr)" in p.stdout
    assert "not expressed: the port's scheduler (drr)" in p.stderr
    # --json: what was written, what the script cannot express, as one document on stdout.
    script = p.stdout
    missing = [line.removeprefix("not expressed: ") for line in p.stderr.splitlines()]
    assert missing[0].startswith("the port's scheduler (drr)")
    p = export(rtnetlab_cli, f, "--node", "ES2", "--dev", "eth0", "--json")
    assert (p.returncode, p.stderr) == (0, "")
    assert json.loads(p.stdout) == {"output": None, "lines": len(script.splitlines()), "script": script,
                                    "not_expressed": missing, "warnings": []}  # fmt: skip
    p = export(rtnetlab_cli, f, "--node", "ES2", "--dev", "eth0", "-o", tmp_path / "es2.sh", "--json")
    assert (p.returncode, p.stderr) == (0, "")
    assert json.loads(p.stdout) == {"output": str(tmp_path / "es2.sh"), "lines": len(script.splitlines()),
                                    "not_expressed": missing, "warnings": []}  # fmt: skip
    assert (tmp_path / "es2.sh").read_text() == script and os.access(tmp_path / "es2.sh", os.X_OK)


@pytest.mark.needs_root(reason="applying the script needs root")
def test_script_applies(tmp_path, rtnetlab_cli):
    f = tmp_path / "net.yaml"
    f.write_text(yaml.safe_dump(PRIORITY_NET))
    script = tmp_path / "es1.sh"
    assert export(rtnetlab_cli, f, "--node", "ES1", "--dev", "veth0", "-o", str(script)).returncode == 0
    ns = f"rtnl-export-{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(
            ["ip", "-n", ns, "link", "add", "name", "veth0", "type", "veth", "peer", "name", "veth1"],
            check=True,
        )
        p = subprocess.run(["ip", "netns", "exec", ns, "sh", str(script)], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        classes = subprocess.run(
            ["tc", "-n", ns, "class", "show", "dev", "veth0"], capture_output=True, text=True
        ).stdout
        # VL1: (570 + 20) * 8 bits per 1 ms = 4.72 Mbit/s.
        assert "class htb 1:100 parent 1:1" in classes and "rate 4720Kbit" in classes
        assert "rate 100Mbit" in classes
    finally:
        subprocess.run(["ip", "netns", "del", ns])


#: Run inside a namespace: sends frames of the given sizes (bytes with FCS) back to back on one
#: veth end, IPv4 to 224.224.<id>, and prints the kernel's arrival stamps (ns) at the other end.
PROBE = r"""
import json, socket, struct, sys, time
dev_out, dev_in, vl, sizes = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
rx.bind((dev_in, 0))
SO_TIMESTAMPNS = 35  # Linux, x86 and arm: the kernel's receive stamp, ns
rx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
tx.bind((dev_out, 0))
def frame(n):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, n - 18, 0, 0, 1, 17, 0, bytes([10, 0, 0, 1]),
                     bytes([224, 224, vl >> 8, vl & 255]))
    return bytes([3, 0, 0, 0, vl >> 8, vl & 255, 2, 0, 0, 0, 0, 1]) + b"\x08\x00" + ip + bytes(n - 4 - 34)
time.sleep(0.2)  # idle: every bucket full
for n in sizes:
    tx.send(frame(n))
stamps = []
rx.settimeout(5)
while len(stamps) < len(sizes):
    data, anc, _, _ = rx.recvmsg(2048, 256)
    if data[30:34] == bytes([224, 224, vl >> 8, vl & 255]):
        for level, kind, value in anc:
            if kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", value[:16])
                stamps.append(sec * 10**9 + nsec)
print(json.dumps(stamps))
"""


def _gaps(ns: str, setup: list[str], vl: int, sizes: list[int]) -> list[int]:
    """Arrival gaps (ns) of back-to-back frames through veth0 configured by `setup` (tc lines)."""
    import json as _json

    for line in setup:
        subprocess.run(["ip", "netns", "exec", ns, "sh", "-c", line], check=True)
    p = subprocess.run(
        ["ip", "netns", "exec", ns, "python3", "-c", PROBE, "veth0", "veth1", str(vl), _json.dumps(sizes)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert p.returncode == 0, p.stderr
    stamps = _json.loads(p.stdout)
    return [b - a for a, b in zip(stamps[:-1], stamps[1:], strict=True)]


@pytest.fixture
def veth_ns():
    ns = f"rtnl-export-{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(
            ["ip", "-n", ns, "link", "add", "name", "veth0", "type", "veth", "peer", "name", "veth1"],
            check=True,
        )
        for dev in ("veth0", "veth1"):
            subprocess.run(["ip", "-n", ns, "link", "set", dev, "up"], check=True)
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns])


@pytest.mark.needs_root(reason="applying the script needs root")
def test_script_keeps_the_bag_after_idle(tmp_path, rtnetlab_cli, veth_ns):
    """ARINC 664's rule on the wire: after idle, two (or three) frames of a VL handed to the
    script's qdiscs back to back leave a BAG apart, whatever their sizes (a bucket of one frame
    let two out 22-24 us apart)."""
    f = tmp_path / "net.yaml"
    f.write_text(yaml.safe_dump(PRIORITY_NET))
    script = tmp_path / "es1.sh"
    assert export(rtnetlab_cli, f, "--node", "ES1", "--dev", "veth0", "-o", str(script)).returncode == 0
    # VL1: Lmax 570 B, BAG 1 ms; a small frame first, then two largest.
    gaps = _gaps(veth_ns, [f"sh {script}"], 1, [64, 570, 570])
    assert len(gaps) == 2
    for g in gaps:
        # The qdisc's timer is at most a few tens of us late on this host; never early.
        assert 1_000_000 - 5_000 <= g <= 1_000_000 + 2_000_000, gaps


@pytest.mark.needs_root(reason="the kernel's ports need root")
def test_kernel_port_serialises_at_the_line_rate(veth_ns):
    """A testbed port (HTB, `tc.port_lines`) after idle lets one frame out at once and the next
    one a transmission time later (less the port's 20 us of slack), not two at veth speed."""
    from rtnetlab.testbed import tc

    port = {
        "kernel": {"Ok": {"levels": [[]]}},
        "rate_bps": 10e6,  # 1518 B take 1,230.4 us on the wire
        "max_frame_bytes": 1518,
        "shaper": None,
        "buffer_bytes": None,
    }
    lines = [f"tc {x}" for x in tc.port_lines("veth0", port)]
    gaps = _gaps(veth_ns, lines, 7, [1518, 1518, 1518])
    tx = 1538 * 8 / 10e6 * 1e9
    for g in gaps:
        assert tx - tc.SLACK_NS - 5_000 <= g <= tx + 2_000_000, gaps
