"""`rtnetlab analyze --explain FLOW`: where a flow's bound comes from, hop by hop."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SEED002 = REPO / "examples" / "seed002_four_vls.yaml"


def run(cli: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(cli), "analyze", *args], capture_output=True, text=True, timeout=60)


def test_sender_hop_is_seed002_eq4(rtnetlab_cli):
    """Seed 002 Eq. 4 at ES1's port (VL1 200 B and VL2 400 B, 20 B preamble and gap each, 100
    Mbit/s, t_mux 40 us): 8 x (220 + 420) / 100 + 40 = 91.2 us; VL1 enters with its own frame,
    220 B = 1,760 bits; both VLs load the port: 1760 / 2 ms + 3360 / 16 ms = 1.09 Mbit/s."""
    p = run(rtnetlab_cli, str(SEED002), "--method", "tfa", "--explain", "VL1", "--json")
    assert p.returncode == 0, p.stderr
    e = json.loads(p.stdout)
    (route,) = e["routes"]
    first = route["hops"][0]
    assert first["port"] == "ES1:0"
    assert first["burst_bits"] == pytest.approx(1760)
    assert first["queue_delay_us"] == pytest.approx(91.2)
    assert first["port_load_bps"] == pytest.approx(1.09e6)
    assert e["burst_bits"] == pytest.approx(1760) and e["rate_bps"] == pytest.approx(880_000)


@pytest.mark.parametrize("method", ["tfa", "best"])
def test_terms_add_up_to_the_bound_analyze_gives(rtnetlab_cli, method):
    """TFA's bound is the sum of the queue delays, the propagation delays and the receive latency;
    under `best` the explained bound is the one `analyze` prints, never above TFA's sum."""
    bounds = json.loads(run(rtnetlab_cli, str(SEED002), "--method", method, "--json").stdout)
    for flow in ("VL1", "VL2", "VL3", "VL4"):
        e = json.loads(
            run(rtnetlab_cli, str(SEED002), "--method", method, "--explain", flow, "--json").stdout
        )
        for r in e["routes"]:
            terms = (
                sum(h["queue_delay_us"] + h["propagation_us"] for h in r["hops"]) + r["receive_latency_us"]
            )
            assert r["tfa_sum_us"] == pytest.approx(terms)
            row = next(
                b
                for b in bounds["flows"]
                if (b["flow"], b["destination"], b["plane"]) == (flow, r["destination"], r["plane"])
            )
            assert r["bound_us"] == pytest.approx(row["delay_us"])
            assert r["bound_us"] <= r["tfa_sum_us"] * (1 + 1e-9)
            if method == "tfa":
                assert r["bound_us"] == pytest.approx(terms)


def test_table_names_every_hop(rtnetlab_cli):
    p = run(rtnetlab_cli, str(SEED002), "--explain", "VL1")
    assert p.returncode == 0, p.stderr
    for port in ("ES1:0", "SW1:", "SW2:"):
        assert port in p.stdout
    assert "to ES4, plane A" in p.stdout


def test_unknown_flow_and_wrong_combinations_are_one_line(rtnetlab_cli, tmp_path):
    p = run(rtnetlab_cli, str(SEED002), "--explain", "nope")
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == ["--explain: no flow named 'nope' in the network"]
    p = run(rtnetlab_cli, str(SEED002), "--explain", "VL1", "-o", str(tmp_path / "x.json"))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.json").exists()


def test_best_on_a_server_graph_explains_the_bound_analyze_gives(rtnetlab_cli):
    """On DEBORAH's source16-50 `best` takes the tagged flow's bound from fifo-lp (18.113, against
    TFA's 771): `--explain` must name that bound and that method, not the best of the hop-by-hop
    methods alone (it used to run without the linear-program solver)."""
    pytest.importorskip("highspy")
    tree = str(REPO / "examples" / "server_graph" / "source16_50.yaml")
    rows = {r["flow"]: r for r in json.loads(run(rtnetlab_cli, tree, "--json").stdout)["flows"]}
    assert rows["t"]["method"] == "fifo-lp"
    p = run(rtnetlab_cli, tree, "--explain", "t", "--json")
    assert p.returncode == 0, p.stderr
    (route,) = json.loads(p.stdout)["routes"]
    assert route["method"] == "fifo-lp"
    assert route["bound_us"] == rows["t"]["delay_us"]
