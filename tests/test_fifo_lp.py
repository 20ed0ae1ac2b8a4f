"""`--method fifo-lp` (and `best` on server graphs) through the CLI as a user runs it, solved by
HiGHS (highspy): the linear-programming FIFO bound of crates/core/src/analysis/fifo_lp.rs.

Sources of the expected numbers:
* DEBORAH's source16-50 (examples/server_graph/source16_50.yaml; Bisti, Lenzini, Mingozzi, Stea,
  ISoLA 2010): published LUDB upper bound 18.1 and lower bound 16.6 for the tagged flow `t`. By
  hand, the program's optimum is every burst at once, each flow's at the slowest server it
  crosses: 16 + Σ_g 5/R_g = 16 + (5/8)·H_16 = 18.11296 (H_16 the 16th harmonic number).
* Exact worst cases by hand, where every flow crosses the same servers: the aggregate is one
  flow through the concatenation (R, ΣT) of rate-latency servers, and the bound T + B/R is
  reached by greedy sources and lazy servers. Two flows (25, 5) over two servers (10, 10)
  (NetCal/DNC's TA_2S_1SC_2F_1AC_1P, where DNC's best FIFO bound is SFA's 35): 20 + 50/10 = 25.
  Four flows (10, 2) over the same (TA_2S_1SC_4F_1AC_1P, DNC's SFA FIFO 34.5): 20 + 40/10 = 24.
  Two flows (25, 5) at one server (10, 10) (S_1SC_2F_1AC, DNC's TFA FIFO 15): 10 + 50/10 = 15.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE16 = ROOT / "examples" / "server_graph" / "source16_50.yaml"
H16 = sum(1 / m for m in range(1, 17))


def run(cli: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, timeout=300)


def delays(cli: Path, path: Path, method: str, blind: bool = False) -> dict[str, tuple[float, str]]:
    res = run(cli, "analyze", path, "--method", method, "--json", *(["--blind"] if blind else []))
    assert res.returncode == 0, res.stderr
    return {r["flow"]: (r["delay_us"] / 1e6, r["method"]) for r in json.loads(res.stdout)["flows"]}


def graph(tmp_path: Path, servers: list[tuple[float, float]],
          flows: list[tuple[float, float, list[int]]]) -> Path:
    lines = ["name: g", "server_graph:", "  servers:"]
    lines += [f"    - {{name: s{i}, rate: {r}, latency: {t}}}" for i, (r, t) in enumerate(servers)]
    lines.append("  flows:")
    for i, (b, r, path) in enumerate(flows):
        names = ", ".join(f"s{s}" for s in path)
        lines.append(f"    - {{name: f{i}, burst: {b}, rate: {r}, path: [{names}]}}")
    out = tmp_path / "g.yaml"
    out.write_text("\n".join(lines) + "\n")
    return out


def test_source16_50_within_one_percent_of_the_published_bound(rtnetlab_cli: Path) -> None:
    lp = delays(rtnetlab_cli, SOURCE16, "fifo-lp")
    d, method = lp["t"]
    assert method == "fifo-lp"
    assert d >= 16.6  # the published lower bound: below it the bound would be unsound
    assert d == pytest.approx(16 + 0.625 * H16, rel=1e-6)
    assert d <= 18.1 * 1.01
    # best takes it, for every flow where it is smaller; never above a single method.
    best = delays(rtnetlab_cli, SOURCE16, "best")
    assert best["t"][1] == "fifo-lp" and best["t"][0] == pytest.approx(d, rel=1e-12)
    for method in ["tfa", "sfa", "pmoo", "fifo-lp"]:
        one = delays(rtnetlab_cli, SOURCE16, method)
        for flow, (b, _) in best.items():
            assert b <= one[flow][0] * (1 + 1e-9), (flow, method)


@pytest.mark.parametrize(
    ("servers", "flows", "exact"),
    [
        ([(10, 10), (10, 10)], [(25, 5, [0, 1])] * 2, 25.0),
        ([(10, 10), (10, 10)], [(10, 2, [0, 1])] * 4, 24.0),
        ([(10, 10)], [(25, 5, [0])] * 2, 15.0),
    ],
)
def test_exact_on_small_tandems(rtnetlab_cli: Path, tmp_path: Path, servers: list, flows: list,
                                exact: float) -> None:
    path = graph(tmp_path, servers, flows)
    for flow, (d, _) in delays(rtnetlab_cli, path, "fifo-lp").items():
        # Sound (never below the exact worst case), and within the solver's margin of it.
        assert exact <= d <= exact * (1 + 1e-5), (flow, d)


def test_refusals_name_the_rule(rtnetlab_cli: Path, tmp_path: Path) -> None:
    res = run(rtnetlab_cli, "analyze", SOURCE16, "--method", "fifo-lp", "--blind")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "FIFO multiplexing" in res.stderr
    joined = graph(tmp_path, [(10, 1), (10, 1)], [(1, 1, [0, 1]), (1, 1, [1])])
    res = run(rtnetlab_cli, "analyze", joined, "--method", "fifo-lp")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "enter at its first server" in res.stderr
    res = run(rtnetlab_cli, "analyze", SOURCE16, "--method", "fifo-lp", "--explain", "t")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "one linear program" in res.stderr
    res = run(rtnetlab_cli, "analyze", ROOT / "examples" / "seed002_four_vls.yaml", "--method", "fifo-lp")
    assert res.returncode == 2 and "server graphs" in res.stderr
    # best does without it where it does not apply: f1 joins f0 downstream of f0's first server,
    # and f0 came to f1's server from elsewhere
    assert {m for _, m in delays(rtnetlab_cli, joined, "best").values()}.isdisjoint({"fifo-lp"})


def test_random_source_trees(tmp_path: Path) -> None:
    """Random source trees of 4 to 16 servers (every flow enters at the first server, leaves the
    path after a random number of them): best is never above a single method, fifo-lp included,
    and fifo-lp never below the delay the tagged flow's greedy burst alone reaches through lazy
    servers, ΣT + σ/min R."""
    import random

    from rtnetlab import model

    rng = random.Random(5)
    for case in range(12):
        n = rng.randint(4, 16)
        servers = [(rng.randint(30, 80), rng.randint(0, 4)) for _ in range(n)]
        flows = [(rng.randint(1, 20), rng.randint(1, 3), list(range(n)))]
        for _ in range(rng.randint(1, 7)):
            flows.append((rng.randint(1, 20), rng.randint(1, 3), list(range(rng.randint(1, n)))))
        net = model.load_file(graph(tmp_path, servers, flows))
        reports = {m: {r["flow"]: r["delay_us"] / 1e6 for r in net.analyze(m)["flows"]}
                   for m in ["best", "tfa", "sfa", "pmoo", "fifo-lp"]}
        for flow, b in reports["best"].items():
            for m in ["tfa", "sfa", "pmoo", "fifo-lp"]:
                assert b <= reports[m][flow] * (1 + 1e-9), (case, flow, m)
        alone = sum(t for _, t in servers) + flows[0][0] / min(r for r, _ in servers)
        assert reports["fifo-lp"]["f0"] >= alone, case
