"""`rtnetlab configure`: AFDX BAG/MTU (seed 001D) and Deficit Table decoupling (seed 003), end to
end through the CLI as a user runs them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
CLI = REPO / ".venv" / "bin" / "rtnetlab"
TABLE1 = REPO / "examples" / "afdx_config" / "table1.yaml"
TABLE4 = REPO / "examples" / "dtable" / "table4_requirements.yaml"


def run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLI), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_configure_afdx_writes_a_valid_feasible_description(tmp_path: Path) -> None:
    out = tmp_path / "configured.yaml"
    res = run("configure", "afdx", str(TABLE1), "-o", str(out), "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["feasible"] and report["deadlines_checked"]
    # The candidates are Find_Feasible_BAG_MTU's (TV-001D-2 for VL1, TV-001D-3 recomputed for VL2).
    cands = {v["flow"]: [tuple(c) for c in v["candidates"]] for v in report["vls"]}
    assert cands["VL1"] == [(1, 5), (2, 9), (4, 17), (8, 34), (16, 67), (32, 200)]
    assert cands["VL2"] == [(1, 7), (2, 13), (4, 25), (8, 50), (16, 125), (32, 250)]
    assert all(p["bandwidth_ok"] and p["jitter_ok"] for p in report["ports"])
    data = yaml.safe_load(out.read_text())
    assert list(data) == ["name", "defaults", "end_systems", "switches", "links", "flows"], "file order kept"
    for v in report["vls"]:
        flow = next(f for f in data["flows"] if f["name"] == v["flow"])
        assert flow["bag"] == f"{v['bag_ms']}ms" and flow["lmax"] == f"{v['lmax_bytes']}B"
        assert (v["bag_ms"], v["mtu_bytes"]) in cands[v["flow"]]
    # The configured file is a valid network whose deadline holds.
    res = run("analyze", str(out), "--json")
    assert res.returncode == 0, res.stderr
    assert all(f["status"] == "ok" for f in json.loads(res.stdout)["flows"])


def test_min_bandwidth_never_reserves_more(tmp_path: Path) -> None:
    first = json.loads(run("configure", "afdx", str(TABLE1), "-o", str(tmp_path / "a.yaml"), "--json").stdout)
    best = json.loads(
        run("configure", "afdx", str(TABLE1), "-o", str(tmp_path / "b.yaml"), "--objective", "min-bandwidth",
            "--json").stdout
    )
    assert best["feasible"] and best["reserved_bps"] <= first["reserved_bps"] + 1e-9
    # Exhaustively: no pair of candidates meeting the constraints reserves less.
    c = {v["flow"]: v["candidates"] for v in best["vls"]}
    cheapest = min(
        (m1 + 67) * 8e3 / b1 + (m2 + 67) * 8e3 / b2
        for b1, m1 in c["VL1"]
        for b2, m2 in c["VL2"]
        if all(40 + 8 * burst / 10 <= 500 for burst in (134 + m1 + m2, 67 + m1, 67 + m2))
    )
    # Deadline of VL2 (2 ms) is easily met at 10 Mbps, so the cheapest pair is the answer.
    assert abs(best["reserved_bps"] - cheapest) < 1e-6


def test_infeasible_configuration_exits_1_and_writes_nothing(tmp_path: Path) -> None:
    data = yaml.safe_load(TABLE1.read_text())
    data["defaults"]["link_rate"] = "1Mbps"
    src = tmp_path / "slow.yaml"
    src.write_text(yaml.safe_dump(data))
    out = tmp_path / "out.yaml"
    res = run("configure", "afdx", str(src), "-o", str(out))
    assert res.returncode == 1
    assert "no feasible configuration" in res.stderr and "jitter" in res.stderr
    assert "Traceback" not in res.stderr
    assert not out.exists()


def test_configure_afdx_reports_model_errors_in_one_line_each(tmp_path: Path) -> None:
    data = yaml.safe_load(TABLE1.read_text())
    data["flows"][0]["messages"][0]["payload"] = "0B"
    src = tmp_path / "bad.yaml"
    src.write_text(yaml.safe_dump(data))
    res = run("configure", "afdx", str(src), "-o", str(tmp_path / "o.yaml"))
    assert res.returncode == 2
    expected = "flows[0].messages[0].payload: must be a whole number of bytes, at least 1B, got 0b"
    assert res.stderr.strip() == expected


def test_configure_dtable_reproduces_tables_4_and_5(tmp_path: Path) -> None:
    out = tmp_path / "schedulers.yaml"
    res = run("configure", "dtable", str(TABLE4), "-o", str(out), "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    plan = report["decoupling"]["plan"]
    assert (plan["max_weight"], plan["pool"]) == (64, 1024)
    rows = {c["name"]: c for c in plan["classes"]}
    # TV-003-1 (Table 4).
    assert [rows[n]["entries"] for n in ["NC", "VO", "VI", "CL", "EE", "BE", "BK"]] == [32, 16, 8, 4, 2, 1, 1]
    assert [rows[n]["min_share"] for n in ["NC", "VO", "VI", "CL", "EE", "BE", "BK"]] == [
        0.09375, 0.046875, 0.25, 0.125, 0.03125, 0.015625, 0.015625]
    assert [rows[n]["max_share"] for n in ["NC", "VO", "VI", "CL", "EE", "BE", "BK"]] == [
        2, 1, 0.5, 0.25, 0.125, 0.0625, 0.0625]
    # TV-003-2..4 (Table 5): total weights, WF2Q entries (BE total 3 x 32 = 96), DRR quanta.
    weights = {w["name"]: w for w in report["decoupling"]["weights"]}
    assert [weights[n]["total_weight"] for n in ["NC", "VO", "VI", "CL", "EE", "BE", "BK"]] == [
        96, 48, 512, 208, 96, 48, 16]
    assert report["baselines"]["wf2q_entries"] == [6, 3, 32, 13, 6, 3, 1]
    assert report["baselines"]["drr_quanta"] == [96, 48, 512, 208, 96, 48, 16]
    # The written schedulers go into a network as they are.
    written = yaml.safe_load(out.read_text())["schedulers"]
    assert sorted(written) == ["drr", "dtable", "dtable_wf2q", "scfq"]
    assert len(written["dtable"]["entries"]) == 64


def test_configure_dtable_refuses_impossible_distances(tmp_path: Path) -> None:
    data = yaml.safe_load(TABLE4.read_text())
    data["classes"][1]["max_distance"] = 2
    src = tmp_path / "req.yaml"
    src.write_text(yaml.safe_dump(data))
    out = tmp_path / "schedulers.yaml"
    res = run("configure", "dtable", str(src), "-o", str(out))
    # No table meets the requirements: a verdict (1), as for every `configure`; nothing written.
    assert res.returncode == 1
    assert "no feasible table: the distances need 80 entries but the table has 64" in res.stderr
    assert not out.exists()
    assert "Traceback" not in res.stderr


PARTITION = REPO / "examples" / "fixed_priority" / "dopa_partition.yaml"


def test_configure_partition_places_chains_and_the_result_meets_its_deadlines(tmp_path: Path) -> None:
    out = tmp_path / "placed.yaml"
    res = run("configure", "partition", str(PARTITION), "-o", str(out), "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["feasible"]
    src = yaml.safe_load(PARTITION.read_text())
    data = yaml.safe_load(out.read_text())
    pinned = {t["name"]: t["processor"] for t in src["tasks"] if "processor" in t}
    placed = {t["name"]: t for t in data["tasks"]}
    assert set(placed) == {t["name"] for t in src["tasks"]}
    for name, proc in pinned.items():
        assert placed[name]["processor"] == proc, "pinned tasks stay"
    assert all("processor" in t and "priority" in t for t in data["tasks"])
    # A message stays exactly when the tasks around it are on different processors, sent by the
    # processor of the task before it; the others leave `messages` and their chain.
    kept = {m["name"]: m for m in data.get("messages", [])}
    for chain in src["chains"]:
        steps = chain["steps"]
        for k in range(1, len(steps), 2):
            before, msg, after = steps[k - 1], steps[k], steps[k + 1]
            across = placed[before]["processor"] != placed[after]["processor"]
            assert (msg in kept) == across, msg
            if across:
                assert kept[msg]["sender"] == placed[before]["processor"]
        out_chain = next(c for c in data["chains"] if c["name"] == chain["name"])
        assert out_chain["steps"] == [s for s in steps if s in placed or s in kept]
    assert kept, "the example sends at least one frame across ECUs"
    # DOPA's bounds and the holistic analysis of the written description both hold.
    assert all(c["end_to_end_us"] <= c["deadline_us"] for c in report["chains"])
    res = run("analyze", str(out), "--json")
    assert res.returncode == 0, res.stderr
    chains = json.loads(res.stdout)["fixed_priority"]["chains"]
    assert len(chains) == len(src["chains"]) and all(c["status"] == "ok" for c in chains)


def test_configure_partition_infeasible_or_outside_dopa(tmp_path: Path) -> None:
    src = yaml.safe_load(PARTITION.read_text())
    for t in src["tasks"]:
        t["wcet"] = "4ms"
    heavy = tmp_path / "heavy.yaml"
    heavy.write_text(yaml.safe_dump(src))
    out = tmp_path / "out.yaml"
    res = run("configure", "partition", str(heavy), "-o", str(out))
    assert res.returncode == 1 and not out.exists()
    assert "no feasible partition" in res.stderr and "chain '" in res.stderr
    # Outside DOPA's model: refused in one line, exit 2.
    src = yaml.safe_load(PARTITION.read_text())
    src["processors"][0]["scheduling"] = "non_preemptive"
    np_file = tmp_path / "np.yaml"
    np_file.write_text(yaml.safe_dump(src))
    res = run("configure", "partition", str(np_file), "-o", str(out))
    assert res.returncode == 2 and not out.exists()
    assert res.stderr.count("\n") == 1 and "processor 'ecu1'" in res.stderr and "Traceback" not in res.stderr
