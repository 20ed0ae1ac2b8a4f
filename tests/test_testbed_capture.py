"""Captures of a testbed run (one pcapng per egress port) read by tshark with the repository's
Wireshark dissector (contrib/wireshark/rtnetlab.lua)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml

from test_testbed import PRIORITY_NET, unchanged_host  # noqa: F401

pytestmark = [
    pytest.mark.needs_root(reason="the testbed needs root (network namespaces)"),
    pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is installed by `make setup`"),
]


@pytest.mark.parametrize("switch", ["kernel", "user"])
def test_capture_per_port_read_by_the_dissector(tmp_path, rtnetlab_cli, repo_root, unchanged_host, switch):  # noqa: F811
    """In both modes every port's file has what crossed it (user-mode ports send past the qdiscs,
    and with them the sending side's packet taps: each port is captured where its link arrives)."""
    f = tmp_path / "net.yaml"
    f.write_text(yaml.safe_dump(PRIORITY_NET))
    cap = tmp_path / "cap"
    p = subprocess.run(
        [
            str(rtnetlab_cli),
            "testbed",
            "run",
            str(f),
            "--duration",
            "1s",
            "--baseline",
            "200ms",
            "--capture",
            str(cap),
            "--switch",
            switch,
            "--no-simulate",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    # One folder of the run's own in the capture directory, one file per egress port in it (10
    # ports: 5 links, both directions).
    (folder,) = list(cap.iterdir())
    assert folder.name.startswith("rtnl-")
    assert sorted(x.name for x in folder.iterdir()) == sorted(
        f"{port['node']}_{port['port']}.pcapng" for port in report["ports"]
    )
    assert sorted(report["captures"]) == sorted(str(x) for x in folder.iterdir())
    from rtnetlab.testbed.capture import frames_in

    # Ports that carry frames have them in their files; those that carry none (the reverse
    # directions here) are named in one warning each.
    by_port = {(x["node"], x["port"]): x["frames"] for x in report["ports"]}
    for (node, port), frames in by_port.items():
        n = frames_in(folder / f"{node}_{port}.pcapng")
        assert n > 0 or frames == 0, (node, port, n, frames)
    empty = [w for w in report["warnings"] if w.startswith("capture ") and "no frame" in w]
    assert len(empty) == sum(1 for x in folder.iterdir() if frames_in(x) == 0)
    cap = folder
    lua = repo_root / "contrib" / "wireshark" / "rtnetlab.lua"
    out = subprocess.run(
        [
            "tshark",
            "-r",
            str(cap / "ES1_0.pcapng"),
            "-X",
            f"lua_script:{lua}",
            "-Y",
            "rtnetlab",
            "-T",
            "fields",
            "-e",
            "rtnetlab.vl",
            "-e",
            "rtnetlab.number",
            "-e",
            "rtnetlab.baseline",
            "-e",
            "rtnetlab.seq",
            "-e",
            "rtnetlab.class",
            "-e",
            "frame.len",
            "-e",
            "eth.dst",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    run = [r for r in rows if r[2] in ("0", "False")]
    # ES1 sends only VL1 (570 B frames, 566 captured without FCS, class rt = DSCP 1), one frame per
    # ms: the run's frames numbered from 0, the AFDX sequence number = number mod 255 + 1.
    # A capture on a loaded host may lose a few frames (dumpcap's buffer); what it has must be
    # the run's frames in order, and nearly all of them.
    received = report["flows"][[x["flow"] for x in report["flows"]].index("VL1")]["count"]
    assert 0.9 * received <= len(run) <= received
    for vl, number, _, seq, cls, length, dst in run:
        assert (vl, cls, length, dst) == ("1", "1", "566", "03:00:00:00:00:01")
        assert int(seq) == int(number) % 255 + 1
    numbers = [int(r[1]) for r in run]
    assert numbers == sorted(set(numbers)) and numbers[-1] < received
    # The baseline's frames come first, marked (those dumpcap was up for: on a loaded host it may
    # start after the first ones).
    marked = [r[2] in ("1", "True") for r in rows]
    assert marked == sorted(marked, reverse=True)
