"""The simulator protects the machine: a run estimated to need more memory than its limit is refused
before it starts, in one line with exit code 2 naming the figure and the option to run it anyway; a
large one is announced. The figures are the engine's estimate (hand-checked in
crates/core/src/sim/memory.rs)."""

from __future__ import annotations

import subprocess
from pathlib import Path

OVERLOADED = """name: overloaded
end_systems: [{name: ES1}, {name: ES2}]
switches: [{name: SW}]
links: [{from: ES1, to: SW}, {from: SW, to: ES2}]
flows:
- {name: F1, type: periodic, period: 1ns, size: 100B, source: ES1, destinations: [ES2]}
"""

BURST = """name: huge-burst
end_systems: [{name: ES1}, {name: ES2}]
switches: [{name: SW}]
links: [{from: ES1, to: SW}, {from: SW, to: ES2}]
flows:
- {name: F1, type: token_bucket, burst: 1000000MB, rate: 1Mbps, min_packet: 64B, max_packet: 1000B,
   source: ES1, destinations: [ES2]}
"""


def simulate(cli: Path, path: Path, *args: str) -> subprocess.CompletedProcess:
    # Without --json: its errors go to stdout as JSON, the one-line form to stderr.
    return subprocess.run([str(cli), "simulate", str(path), *args, "--no-bounds"], capture_output=True,
                          text=True, timeout=120)


def test_an_overloaded_network_is_refused_then_forced(rtnetlab_cli, tmp_path):
    net = tmp_path / "overloaded.yaml"
    net.write_text(OVERLOADED)
    r = simulate(rtnetlab_cli, net, "--duration", "100ms")
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert "about 15.999 GB" in lines[0] and "port ES1:0 is overloaded" in lines[0]
    assert "--memory-limit 17600MB runs it anyway" in lines[0]
    # A short run goes, announced; a limit below its figure refuses it.
    r = simulate(rtnetlab_cli, net, "--duration", "7ms")
    assert r.returncode == 0 and r.stderr.startswith("warning: this run may need about 1.12 GB"), r.stderr
    r = simulate(rtnetlab_cli, net, "--duration", "2ms", "--memory-limit", "100MB")
    assert r.returncode == 2 and "over the limit of 100 MB" in r.stderr
    r = simulate(rtnetlab_cli, net, "--duration", "2ms", "--memory-limit", "lots")
    assert r.returncode == 2 and r.stderr.startswith("--memory-limit:")


def test_a_huge_burst_is_refused(rtnetlab_cli, tmp_path):
    # 10^12 B released at once, frames of 1000 B: 10^9 frames of 160 B waiting, 160 GB. (A burst
    # of 1e308B no longer validates: sizes end at 1 TiB.)
    net = tmp_path / "burst.yaml"
    net.write_text(BURST)
    r = simulate(rtnetlab_cli, net, "--duration", "1ms")
    assert r.returncode == 2 and "would need about 160." in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    net.write_text(BURST.replace("1000000MB", "1e308B"))
    r = simulate(rtnetlab_cli, net, "--duration", "1ms")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "flows[0].burst: is too large to be a data size, got '1e308B'"]
