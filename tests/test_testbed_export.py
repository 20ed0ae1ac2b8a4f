"""`rtnetlab export tc`: the script for a real end system, checked by applying it to a veth
interface in a namespace of its own and reading back what tc installed."""

from __future__ import annotations

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
    # VL2: Lmax 1518 B, BAG 2 ms: (1518 + 20) * 8 bits per 2 ms = 6,152,000 bit/s, a burst of one
    # frame on the wire (1538 B), at ES2's single priority level (its port is FIFO).
    assert "htb rate 6152000bit ceil 6152000bit burst 1538b cburst 1538b prio 0" in script
    assert "match ip dst 224.224.0.2/32 flowid 1:100" in script
    assert "DEV=${DEV:-eth1}" in script
    assert "the BAG as a minimum gap" in p.stderr
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


@pytest.mark.skipif(os.geteuid() != 0, reason="applying the script needs root")
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
