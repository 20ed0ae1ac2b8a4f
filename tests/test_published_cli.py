"""Published numbers reproduced through the `rtnetlab` CLI, as a user runs it, each beside a
variant that tests the general rule rather than the sample.

Sources: shared/oracles/README.md ("Small cases from other tools and textbooks" 1-6),
shared/oracles/dnc-functional-tests.md (NetCal/DNC functional tests), and the seed catalogue's
test vectors (shared/spec/seed-catalogue.md section 6). The models are in tests/data/published/;
a variant changes one field of its model here, with its expected value derived by hand in the
comment beside it. The table of every published number and the test that reproduces it is in
docs/ANALYSIS.md ("Published numbers and where they are checked").
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CLI = REPO / ".venv" / "bin" / "rtnetlab"
DATA = REPO / "tests" / "data" / "published"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLI), *map(str, args)], cwd=REPO, capture_output=True, text=True, timeout=120)


def run_json(*args: str | Path) -> dict:
    res = run(*args, "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def variant(tmp_path: Path, base: Path | dict, change, name: str = "variant.yaml") -> Path:
    """`base` (a model file or a description) with `change` applied, written to `tmp_path`."""
    data = yaml.safe_load(base.read_text()) if isinstance(base, Path) else base
    change(data)
    out = tmp_path / name
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


def close(got: float | None, expected: float, rel: float = 1e-9) -> bool:
    return got is not None and abs(got - expected) <= rel * max(1.0, abs(expected))


# --- server graphs (plain numbers: read as seconds and bits; reports give µs and bytes) -------


def graph(servers: list[tuple[str, float, float]], flows: list[tuple[str, float, float, list[str]]]) -> dict:
    return {
        "name": "g",
        "server_graph": {
            "servers": [{"name": n, "rate": r, "latency": t} for n, r, t in servers],
            "flows": [{"name": n, "burst": b, "rate": r, "path": p} for n, b, r, p in flows],
        },
    }


def graph_bounds(
    path: Path, method: str, blind: bool, arrival_bounds: str | None = None
) -> dict[str, tuple[float | None, float | None, dict]]:
    """{flow: (delay, backlog, row)} in the description's units (seconds, bits)."""
    args = ["analyze", path, "-m", method, *(["--blind"] if blind else []),
            *(["--arrival-bounds", arrival_bounds] if arrival_bounds else [])]
    out = {}
    for f in run_json(*args)["flows"]:
        d = None if f["delay_us"] is None else f["delay_us"] / 1e6
        b = None if f["backlog_bytes"] is None else f["backlog_bytes"] * 8
        out[f["flow"]] = (d, b, f)
    return out


def write(tmp_path: Path, doc: dict, name: str) -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(doc, sort_keys=False))
    return p


@pytest.mark.parametrize("method", ["tfa", "sfa", "pmoo", "best"])
@pytest.mark.parametrize("blind", [False, True])
def test_oracle_1_ncbounds_single_node(tmp_path: Path, method: str, blind: bool) -> None:
    # NCBounds doctest: (sigma, rho) = (2, 2) through (rate, latency) = (5, 3): delay 3.4, backlog 8.
    sample = write(tmp_path, graph([("node", 5, 3)], [("f", 2, 2, ["node"])]), "sample.yaml")
    d, b, _ = graph_bounds(sample, method, blind)["f"]
    assert close(d, 3.4) and close(b, 8.0), (d, b)
    # Variant: (3, 1) through (4, 2): delay T + b/R = 2 + 3/4 = 2.75, backlog b + r T = 3 + 2 = 5.
    other = write(tmp_path, graph([("node", 4, 2)], [("f", 3, 1, ["node"])]), "variant.yaml")
    d, b, _ = graph_bounds(other, method, blind)["f"]
    assert close(d, 2.75) and close(b, 5.0), (d, b)


@pytest.mark.parametrize("method", ["tfa", "sfa", "best"])
def test_oracle_1_ncbounds_overloaded_node_is_infinite_with_its_reason(tmp_path: Path, method: str) -> None:
    # NCBounds: (5, 3) through (2, 2) is infinite. Variant: rate 3 into rate 3 (load exactly 1,
    # no room for the burst) is infinite too under blind multiplexing, (b + R T)/(R - r) = x/0.
    sample = write(tmp_path, graph([("node", 2, 2)], [("f", 5, 3, ["node"])]), "sample.yaml")
    d, b, row = graph_bounds(sample, method, False)["f"]
    assert d is None and b is None and "offered 3 > link rate 2" in row["reason"]
    edge_doc = graph([("node", 3, 2)], [("f", 5, 3, ["node"]), ("g", 1, 0, ["node"])])
    edge = write(tmp_path, edge_doc, "edge.yaml")
    d, _, row = graph_bounds(edge, "tfa", True)["f"]
    assert d is None and row["reason"]


def atm(n: int) -> dict:
    """n ATM connections of the affine curve (r 0.04, b 1.16 cells) into beta_{1, 8} (slots)."""
    return graph([("node", 1, 8)], [(f"c{i}", 1.16, 0.04, ["node"]) for i in range(n)])


def test_oracle_2_atm_affine_connections(tmp_path: Path) -> None:
    # Le Boudec & Thiran, ch. 1: ten connections (r = 0.04, b = 1.16 cells) into beta_{1, 8}:
    # delay 8 + 10 x 1.16 / 1 = 19.6 slots. The whole node's backlog is 11.6 + 0.4 x 8 = 14.8 (the
    # book's 11.6 counts the rate queue only; crates/core/src/analysis/textbook_tests.rs asserts
    # both readings). Those are the aggregate's (FIFO TFA, and `best`, which takes it); SFA's
    # per-flow left-over service gives each connection its own, looser delay (20.2525).
    ten = write(tmp_path, atm(10), "ten.yaml")
    for method in ("tfa", "best"):
        d, b, _ = graph_bounds(ten, method, False)["c0"]
        assert close(d, 19.6) and close(b, 14.8), (method, d, b)
    # Variant: five connections: delay 8 + 5 x 1.16 = 13.8, backlog 5.8 + 0.2 x 8 = 7.4.
    five = write(tmp_path, atm(5), "five.yaml")
    d, b, _ = graph_bounds(five, "tfa", False)["c3"]
    assert close(d, 13.8) and close(b, 7.4), (d, b)


def atm_staircase(n: int, tolerance: float = 4) -> dict:
    """n ATM connections, each GCRA(25, tolerance) of one cell, into beta_{1, 8} (slots)."""
    doc = atm(n)
    for f in doc["server_graph"]["flows"]:
        del f["burst"], f["rate"]
        f["staircase"] = {"period": 25, "tolerance": tolerance, "size": 1}
    return doc


def test_oracle_2_atm_staircase_connections(tmp_path: Path) -> None:
    # Le Boudec & Thiran §1.4.1: ten connections GCRA(25, 4), each ceil((t + 4) / 25) cells: one
    # cell each at once, the next 21 slots later. The ten cells leave beta_{1, 8} by 8 + 10 = 18
    # slots, buffer 10 cells (at 21 the next ten find 13 served: 20 - 13 = 7). tfa and best take
    # the staircases exactly where they enter. Every method's bounds are at least those: each
    # delay at least 18; the node's backlog at least 10; a row's backlog (TFA's: its ports'; the
    # others': the flow's own, exactly one cell here) at least 1. pmoo takes token buckets, the
    # affine envelopes (1.16, 0.04), as for the affine connections: left-over rate 1 - 9 x 0.04 =
    # 0.64, latency (8 + 9 x 1.16) / 0.64 = 28.8125, delay 28.8125 + 1.16 / 0.64 = 30.625.
    ten = write(tmp_path, atm_staircase(10), "ten.yaml")
    for method in ("tfa", "best"):
        d, b, _ = graph_bounds(ten, method, False)["c0"]
        assert close(d, 18.0) and close(b, 10.0), (method, d, b)
    at_least = 1 - 1e-9
    for method, blind in (("tfa", True), ("sfa", False), ("sfa", True), ("sfa-iter", False), ("pmoo", False),
                          ("best", True)):
        report = run_json("analyze", ten, "-m", method, *(["--blind"] if blind else []))
        (port,) = report["ports"]
        assert port["backlog_bytes"] * 8 >= 10 * at_least, (method, blind, port)
        for row in report["flows"]:
            own = 10 if row["method"].startswith("tfa") else 1
            assert row["delay_us"] / 1e6 >= 18 * at_least and row["backlog_bytes"] * 8 >= own * at_least, row
    assert close(graph_bounds(ten, "pmoo", False)["c0"][0], 30.625)
    notes = run_json("analyze", ten, "-m", "pmoo")["notes"]
    said = "pmoo takes token buckets: each staircase flow ('c0', 'c1', 'c2', 'c3', 'c4' and 5 more) enters by"
    assert any(n.startswith(said) for n in notes), notes
    # Variant: tolerance 29, ceil((t + 29) / 25): two cells each at once, one more at 21 and at 46.
    # The 20 cells leave by 8 + 20 = 28; the 30 at 21 by 38, the 40 at 46 by 48: delay 28. Backlog
    # max(20, 30 - 13, 40 - 38) = 20. (Affine envelopes, burst 2.16 each: 8 + 21.6 = 29.6.)
    late = write(tmp_path, atm_staircase(10, 29), "late.yaml")
    d, b, _ = graph_bounds(late, "tfa", False)["c9"]
    assert close(d, 28.0) and close(b, 20.0), (d, b)


# --- NetCal/DNC functional tests, every network through `rtnetlab analyze` -----------------------

DNC = json.loads((DATA / "dnc_functional.json").read_text())
# The oracle's (analysis, multiplexing) and the CLI's method. The FIFO SFA rows are DNC's
# convention (the flow of interest left out of its companions' arrival bounds upstream), which
# the CLI takes as the unlisted method `sfa-foi-lowest` (docs/ANALYSIS.md); `sfa` counts it.
DNC_METHODS = {
    ("TFA", "ARBITRARY"): ("tfa", True),
    ("TFA", "FIFO"): ("tfa", False),
    ("SFA", "ARBITRARY"): ("sfa", True),
    ("SFA", "FIFO"): ("sfa-foi-lowest", False),
    ("PMOO", "ARBITRARY"): ("pmoo", True),
}
# The networks with a second block (arrival bounding with AGGR_PMOO).
DNC_SECOND = sorted({r["network"] for r in DNC["rows"]
                     if r["block"] == 2 and r["analysis"] != "PMOO (sink-tree AB)"})


def dnc_description(name: str, net: dict) -> dict:
    return graph(
        [(f"s{i}", r, t) for i, (r, t) in enumerate(net["servers"])],
        [(f"f{i}", b, r, [f"s{s}" for s in path]) for i, (r, b, path) in enumerate(net["flows"])],
    )


@pytest.fixture(scope="module")
def dnc_results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """{(network, method, blind, arrival bounds): {flow: (delay, backlog, row)}}, every run through
    the CLI: every method with `--arrival-bounds pboo` (the first blocks), and on the networks
    with a second block the arbitrary-multiplexing methods with `pmoo` and with the default."""
    d = tmp_path_factory.mktemp("dnc")
    jobs = []
    for name, net in DNC["networks"].items():
        path = write(d, dnc_description(name, net), f"{name}.yaml")
        jobs += [(name, path, m, blind, "pboo") for m, blind in DNC_METHODS.values()]
        jobs.append((name, path, "sink-tree-backlog", False, None))
        if name in DNC_SECOND:
            blind_methods = [m for m, blind in DNC_METHODS.values() if blind]
            jobs += [(name, path, m, True, ab) for m in blind_methods for ab in ("pmoo", None)]
    with ThreadPoolExecutor(4) as pool:
        done = pool.map(lambda j: ((j[0], j[2], j[3], j[4]), graph_bounds(j[1], j[2], j[3], j[4])), jobs)
        return dict(done)


def dnc_matches(row: dict, got: tuple) -> bool:
    delay, backlog, _ = got
    for expected, value in ((row["delay"], delay), (row["backlog"], backlog)):
        if expected is None:
            continue
        if expected == "inf":
            if value is not None:
                return False
        elif not close(value, expected):
            return False
    return True


def dnc_failures(rows: list[dict], results: dict, arrival_bounds: str | None) -> list[str]:
    failures = []
    for r in rows:
        method, blind = DNC_METHODS[(r["analysis"], r["mux"])]
        # PMOO arrival bounding is for arbitrary multiplexing: DNC's suite runs FIFO with the PBOO
        # sets only, and a second block's FIFO rows are those.
        got = results[(r["network"], method, blind, arrival_bounds if blind else "pboo")][f"f{r['flow']}"]
        if not dnc_matches(r, got):
            failures.append(f"{r['network']} f{r['flow']} {r['analysis']} {r['mux']}: {r} got {got[:2]}")
    return failures


def test_dnc_functional_first_blocks_through_the_cli(dnc_results: dict) -> None:
    # Every row of the first block of every network: the arrival-bound sets without AGGR_PMOO
    # (for networks without a second block, all seven sets), with `--arrival-bounds pboo`.
    rows = [r for r in DNC["rows"] if r["block"] == 1 and (r["analysis"], r["mux"]) in DNC_METHODS]
    assert len(rows) == 200 and len({r["network"] for r in rows}) == 18
    failures = dnc_failures(rows, dnc_results, "pboo")
    assert not failures, "\n".join(failures)


def test_dnc_functional_second_blocks_through_the_cli(dnc_results: dict) -> None:
    # The second blocks (arrival bounding with AGGR_PMOO), with `--arrival-bounds pmoo`: every
    # row. FF_4S_1SC_4F_1AC_4P's holds for {AGGR_PMOO} alone (looser than its first block there),
    # TA_3S_1SC_3F_1AC_3P's and TA_4S_1SC_2F_1AC_2P's for every set with it (tighter).
    rows = [r for r in DNC["rows"] if r["block"] == 2 and (r["analysis"], r["mux"]) in DNC_METHODS]
    assert len(rows) == 45 and len({r["network"] for r in rows}) == 3
    failures = dnc_failures(rows, dnc_results, "pmoo")
    assert not failures, "\n".join(failures)


def test_dnc_functional_sets_with_pboo_and_pmoo_are_the_default(dnc_results: dict) -> None:
    # The sets holding PMOO and a PBOO method (pair_2, pair_3, triplet) are, per flow, the tighter
    # of the two blocks: the default arrival bounding (tightest). Their rows: FF_4S_1SC_4F_1AC_4P's
    # first block, the second block of the two others (arbitrary multiplexing rows).
    rows = [r for r in DNC["rows"] if r["network"] in DNC_SECOND and r["mux"] == "ARBITRARY"
            and (r["analysis"], r["mux"]) in DNC_METHODS
            and r["block"] == (1 if r["network"] == "FF_4S_1SC_4F_1AC_4P" else 2)]
    assert len(rows) == 12 + 9 + 6
    failures = dnc_failures(rows, dnc_results, None)
    assert not failures, "\n".join(failures)


def test_dnc_functional_sink_tree_rows_through_the_cli(dnc_results: dict) -> None:
    # The "PMOO (sink-tree AB)" rows (backlog only): `-m sink-tree-backlog` gives each flow the
    # backlog bound of the server where it leaves, from DNC's sink-tree arrival bounds. Two rows
    # are no output of DNC: TA_3S_1SC_3F_1AC_3P f1 and f2 (1375, TR_7S_1SC_3F_1AC_3P's value),
    # whose tests in the suite print "not applicable" and check nothing (s2's tree loses f0 at
    # s1): there the CLI gives no bound and says why.
    rows = [r for r in DNC["rows"] if r["analysis"] == "PMOO (sink-tree AB)"]
    assert len(rows) == 30
    failures = []
    for r in rows:
        d, b, row = dnc_results[(r["network"], "sink-tree-backlog", False, None)][f"f{r['flow']}"]
        assert d is None and row["method"] == "sink-tree-backlog", row
        if r["network"] == "TA_3S_1SC_3F_1AC_3P" and r["flow"] > 0:
            assert b is None and "not the root of a sink tree" in row["reason"], row
        elif not close(b, r["backlog"]):
            failures.append(f"{r['network']} f{r['flow']}: expected {r['backlog']}, got {b}")
    assert not failures, "\n".join(failures)


def test_arrival_bounds_choices_are_checked(tmp_path: Path) -> None:
    # PMOO arrival bounding assumes arbitrary multiplexing and a server graph; an unknown choice
    # names the option.
    p = write(tmp_path, graph([("s0", 10, 1)], [("f", 1, 1, ["s0"])]), "g.yaml")
    res = run("analyze", p, "-m", "tfa", "--arrival-bounds", "pmoo")
    assert res.returncode != 0 and "add --blind" in res.stderr, res.stderr
    res = run("analyze", p, "-m", "tfa", "--arrival-bounds", "both")
    assert res.returncode != 0, res.stderr
    assert "--arrival-bounds: unknown arrival bounding 'both'" in res.stderr, res.stderr


def test_dnc_variants_by_hand(tmp_path: Path) -> None:
    # S_1SC_2F_2AC (flows (b 10, r 4) and (25, 5), one server (R 10, T 10); oracle: TFA FIFO
    # 10 + 35/10 = 13.5, ARB (35 + 100)/(10 - 9) = 135) with the server's rate doubled to 20:
    # FIFO T + sum b / R = 10 + 35/20 = 11.75; ARB (sum b + R T)/(R - sum r) = (35 + 200)/11 =
    # 21.3636...; backlog either way sum b + sum r T = 35 + 9 x 10 = 125.
    doc = graph([("s0", 20, 10)], [("f0", 10, 4, ["s0"]), ("f1", 25, 5, ["s0"])])
    p = write(tmp_path, doc, "s1.yaml")
    d, b, _ = graph_bounds(p, "tfa", False)["f0"]
    assert close(d, 11.75) and close(b, 125.0), (d, b)
    d, b, _ = graph_bounds(p, "tfa", True)["f0"]
    assert close(d, 235 / 11) and close(b, 125.0), (d, b)
    # TA_2S_1SC_1F_1AC_1P (one flow (25, 5) over two servers (10, 10); oracle TFA 12.5 + 17.5 =
    # 30) with both servers at rate 20: s0: 10 + 25/20 = 11.25, output burst 25 + 5 x 10 = 75;
    # s1: 10 + 75/20 = 13.75; TFA 25.0, backlog max(25 + 50, 75 + 50) = 125. SFA and PMOO: the
    # concatenation (20, 20): 20 + 25/20 = 21.25, backlog 25 + 5 x 20 = 125.
    doc = graph([("s0", 20, 10), ("s1", 20, 10)], [("f0", 25, 5, ["s0", "s1"])])
    p = write(tmp_path, doc, "ta.yaml")
    d, b, _ = graph_bounds(p, "tfa", False)["f0"]
    assert close(d, 25.0) and close(b, 125.0), (d, b)
    for method, blind in (("sfa", False), ("sfa", True), ("pmoo", True)):
        d, b, _ = graph_bounds(p, method, blind)["f0"]
        assert close(d, 21.25) and close(b, 125.0), (method, blind, d, b)


# --- fixed priorities -------------------------------------------------------------------------


def responses(path: Path) -> dict[str, float | None]:
    items = run_json("analyze", path)["fixed_priority"]["items"]
    return {i["name"]: i["response_us"] for i in items}


def with_priorities(order: list[str]):
    def change(data: dict) -> None:
        for key in ("tasks", "messages"):
            for item in data.get(key, []):
                item["priority"] = order.index(item["name"]) + 1

    return change


def configure_priorities(tmp_path: Path, src: Path) -> tuple[list[str], dict[str, float | None]]:
    out = tmp_path / "prio.yaml"
    report = run_json("configure", "priorities", src, "-o", out)
    order = [a["name"] for a in report["resources"][0]["order"]]
    return order, responses(out)


def test_oracle_3_opa_preemptive_lehoczky(tmp_path: Path) -> None:
    src = DATA / "opa_preemptive_lehoczky.yaml"
    # Rate-monotonic order tau1 > tau2: R = 52, 156 ms (tau2 misses 154).
    rm = variant(tmp_path, src, with_priorities(["tau1", "tau2"]), "rm.yaml")
    assert responses(rm) == {"tau1": 52e3, "tau2": 156e3}
    # OPA: tau2 > tau1, R1 = 108 (second instance, 208 - 100; one instance would give 104), R2 = 52.
    order, r = configure_priorities(tmp_path, src)
    assert order == ["tau2", "tau1"] and r == {"tau1": 108e3, "tau2": 52e3}


def test_oracle_3_variant_second_instance_decides(tmp_path: Path) -> None:
    # tau1 = (C 55, T 100, D 120), tau2 = (50, 140, 154).
    # tau2 > tau1: level-1 busy period 105 -> 160 -> 210 -> 265 (ceil(265/100) = 3 instances);
    # instance q: w = (q + 1) 55 + 50 ceil(w / 140): q = 0: 105, R = 105; q = 1: 110 + 50 = 160
    # -> 110 + 100 = 210, R = 210 - 100 = 110; q = 2: 165 + 100 = 265, R = 65. R1 = 110 <= 120.
    # tau1 > tau2 (deadline-monotonic): tau2's w = 50 + 55 ceil(w/100): 105 -> 160 -> 160 > 154.
    # So OPA's only order is tau2 > tau1 with R = 50, 110.
    def change(data: dict) -> None:
        data["tasks"] = [
            {"name": "tau1", "processor": "cpu", "wcet": "55ms", "period": "100ms", "deadline": "120ms"},
            {"name": "tau2", "processor": "cpu", "wcet": "50ms", "period": "140ms", "deadline": "154ms"},
        ]

    src = variant(tmp_path, DATA / "opa_preemptive_lehoczky.yaml", change, "v.yaml")
    dm = variant(tmp_path, src, with_priorities(["tau1", "tau2"]), "dm.yaml")
    assert responses(dm) == {"tau1": 55e3, "tau2": 160e3}
    order, r = configure_priorities(tmp_path, src)
    assert order == ["tau2", "tau1"] and r == {"tau1": 110e3, "tau2": 50e3}


FIXED_PRIORITY = REPO / "examples" / "fixed_priority"
NONPREEMPTIVE = FIXED_PRIORITY / "nonpreemptive_opa.yaml"


def test_oracle_4_deadline_monotonic_responses(tmp_path: Path) -> None:
    # Deadline-monotonic B > A > C: R = 6, 7, 15 (C misses its 11). OPA's B > C > A is in
    # tests/test_fixed_priority.py (R = 6, 9, 7).
    dm = variant(tmp_path, NONPREEMPTIVE, with_priorities(["B", "A", "C"]))
    assert responses(dm) == {"A": 7e3, "B": 6e3, "C": 15e3}


def test_oracle_4_variant_no_order_is_feasible(tmp_path: Path) -> None:
    # C's execution 1 -> 2 (A (4, 8, 7), B (2, 6, 6), C (2, 15, 11)); non-preemptive, zero bit
    # time: w = blocking + sum_hp (floor(w / T) + 1) C, R = w + C.
    # Whichever task is lowest has no blocking and the other two above it:
    #   A lowest: w = 2 + 2 = 4 (floor(4/6) = floor(4/15) = 0), R = 8 > 7;
    #   B lowest: w = 4 + 2 = 6 (floor(6/8) = floor(6/15) = 0), R = 8 > 6;
    #   C lowest: w: 6 -> 8 -> 12 -> 14 (A 2 x 4, B 3 x 2), R = 16 > 11.
    # No task fits the lowest level: no feasible order; OPA says so and writes nothing.
    def change(data: dict) -> None:
        data["tasks"][2]["wcet"] = "2ms"

    src = variant(tmp_path, NONPREEMPTIVE, change)
    out = tmp_path / "prio.yaml"
    res = run("configure", "priorities", src, "-o", out)
    assert res.returncode == 1 and "no feasible priority order" in res.stderr, res.stderr
    assert not out.exists()


def test_oracle_5_can_frame_length(tmp_path: Path) -> None:
    src = DATA / "can_frame.yaml"
    # 8 bytes, 11-bit identifier: 55 + 80 = 135 bits = 270 us at 500 kbit/s, 1080 us at 125 kbit/s.
    assert responses(src) == {"m": 270.0}

    def rate(r: str):
        def change(data: dict) -> None:
            data["buses"][0]["bit_rate"] = r

        return change

    assert responses(variant(tmp_path, src, rate("125kbps"))) == {"m": 1080.0}

    # Variants: 29-bit identifier, 8 bytes: 80 + 80 = 160 bits = 320 us at 500 kbit/s; 11-bit,
    # 3 bytes: 55 + 30 = 85 bits = 170 us.
    def extended(data: dict) -> None:
        data["buses"][0]["identifier"] = "extended"

    assert responses(variant(tmp_path, src, extended, "ext.yaml")) == {"m": 320.0}

    def three_bytes(data: dict) -> None:
        data["messages"][0]["payload"] = "3B"

    assert responses(variant(tmp_path, src, three_bytes, "three.yaml")) == {"m": 170.0}

    # Variant: a second, lower-priority 8-byte message: the first waits for one lower frame
    # already on the bus (blocking 270 us), then sends: R = 270 + 270 = 540 us; the second waits
    # for the first once (270 < 10 ms): R = 270 + 270 = 540 us.
    def second(data: dict) -> None:
        data["messages"].append({"name": "low", "bus": "can0", "sender": "node2", "payload": "8B",
                                 "period": "10ms", "priority": 2})

    assert responses(variant(tmp_path, src, second, "two.yaml")) == {"m": 540.0, "low": 540.0}


def test_oracle_6_variant_faster_top_task(tmp_path: Path) -> None:
    # MAST's sporadic server example (t1 = 1, t2 = 5, t3 = 9 in tests/test_fixed_priority.py) with
    # t1's period 5 -> 4, the server a periodic task (C 2, T 10) below t1:
    #   t2: w = 2 + ceil(w/4) 1 + ceil(w/10) 2: 2 -> 5 -> 6 -> 6; R2 = 6 (busy period 6 < 12).
    #   t3: w = 3 + ceil(w/4) + 2 ceil(w/10) + 2 ceil(w/12): 3 -> 8 -> 9 -> 10 -> 10; R3 = 10.
    def change(data: dict) -> None:
        data["tasks"][0]["period"] = "4ms"

    r = responses(variant(tmp_path, FIXED_PRIORITY / "sporadic_server_cpu.yaml", change))
    assert (r["t1"], r["t2"], r["t3"]) == (1e3, 6e3, 10e3)


def test_tv_001e_2_opa_scan_order(tmp_path: Path) -> None:
    # TV-001E-2/3: OPA scanning a, b, c gives b > a > c, R = b 2, a 3, c 10.
    order, r = configure_priorities(tmp_path, DATA / "dopa_opa_rta.yaml")
    assert order == ["b", "a", "c"] and r == {"a": 3e3, "b": 2e3, "c": 10e3}


def test_tv_001e_2_variant_heavier_c(tmp_path: Path) -> None:
    # c's C 3 -> 4. Lowest level, scanning a, b, c: a under {b, c}: 1 + 2 + 4 = 7 -> 9 > 3; b under
    # {a, c}: 2 + 1 + 4 = 7 -> 8 > 5; c under {a, b}: w = 4 + ceil(w/4) + 2 ceil(w/6): 7 -> 8 ->
    # 10 -> 11 -> 11 <= 12 (busy period 11 < 12: one instance). Next level: a under {b}: 1 + 2 = 3
    # <= 3. So b > a > c with R = 2, 3, 11.
    def change(data: dict) -> None:
        data["tasks"][2]["wcet"] = "4ms"

    order, r = configure_priorities(tmp_path, variant(tmp_path, DATA / "dopa_opa_rta.yaml", change))
    assert order == ["b", "a", "c"] and r == {"a": 3e3, "b": 2e3, "c": 11e3}


def partition_deadlines(tmp_path: Path, src: Path) -> dict[str, tuple[float, float]]:
    """{step: (window, absolute deadline)} in ms: the deadline is the release offset + window."""
    report = run_json("configure", "partition", src, "-o", tmp_path / "placed.yaml")
    assert report["feasible"]
    return {i["name"]: (i["window_us"] / 1e3, (i["jitter_us"] + i["window_us"]) / 1e3)
            for i in report["tasks"] + report["messages"] if i["window_us"] > 0}


def test_tv_001e_1_intermediate_deadlines(tmp_path: Path) -> None:
    got = partition_deadlines(tmp_path, DATA / "dopa_windows.yaml")
    expected = {"tau1": (4, 4), "mu1": (2, 6), "tau2": (6, 12), "mu2": (2, 14), "tau3": (10, 24)}
    assert got.keys() == expected.keys()
    for k, (w, d) in expected.items():
        assert close(got[k][0], w, 1e-6) and close(got[k][1], d, 1e-6), (k, got[k])


def test_tv_001e_1_without_the_first_message(tmp_path: Path) -> None:
    # TV-001E-1's second case: tau1 and tau2 on one ECU, mu1 dropped, sum = 11: windows 24/11 x
    # (2, 3, 5) and 24/11 for mu2; d = 4.3636, 10.9091, 24 and d_msg2 = 13.0909.
    def change(data: dict) -> None:
        data["tasks"][1]["processor"] = "ecu1"

    got = partition_deadlines(tmp_path, variant(tmp_path, DATA / "dopa_windows.yaml", change))
    k = 24 / 11
    expected = {"tau1": (2 * k, 2 * k), "tau2": (3 * k, 5 * k), "mu2": (k, 6 * k), "tau3": (5 * k, 24)}
    assert got.keys() == expected.keys()
    for name, (w, d) in expected.items():
        assert close(got[name][0], w, 1e-6) and close(got[name][1], d, 1e-6), (name, got[name])


def test_tv_001e_1_variant_longer_deadline(tmp_path: Path) -> None:
    # D = 36 with the same costs (sum 12): every window scales by 36/12 = 3: tasks 6, 9, 15,
    # messages 3, 3; d = 6, 18, 36 and d_msg = 9, 21.
    def change(data: dict) -> None:
        data["chains"][0]["deadline"] = "36ms"
        data["chains"][0]["period"] = "36ms"

    got = partition_deadlines(tmp_path, variant(tmp_path, DATA / "dopa_windows.yaml", change))
    expected = {"tau1": (6, 6), "mu1": (3, 9), "tau2": (9, 18), "mu2": (3, 21), "tau3": (15, 36)}
    for k, (w, d) in expected.items():
        assert close(got[k][0], w, 1e-6) and close(got[k][1], d, 1e-6), (k, got[k])


# --- AFDX -------------------------------------------------------------------------------------


def candidates(tmp_path: Path, src: Path) -> dict[str, list[tuple[int, int]]]:
    res = run("configure", "afdx", src, "-o", tmp_path / "configured.yaml", "--json")
    assert res.returncode in (0, 1), res.stderr
    return {v["flow"]: [tuple(c) for c in v["candidates"]] for v in json.loads(res.stdout)["vls"]}


def test_tv_001d_1_find_feasible_bag_mtu(tmp_path: Path) -> None:
    assert candidates(tmp_path, DATA / "afdx_conf_example.yaml") == {"VL1": [(1, 17), (2, 40), (4, 100)]}


def test_tv_001d_1_variant_longer_cycle(tmp_path: Path) -> None:
    # The 100 B message every 24 ms instead of 12: sum ceil(80/m)/10 + ceil(100/m)/24 <= 1/BAG.
    #   BAG 1: m = 14: 6/10 + 8/24 = 0.933 ok; m = 13: 7/10 + 8/24 = 1.033 no.
    #   BAG 2: m = 27: 3/10 + 4/24 = 0.467 ok; m = 26: 4/10 + 4/24 = 0.567 no.
    #   BAG 4: m = 80: 1/10 + 2/24 = 0.183 ok; m = 79: 2/10 + 2/24 = 0.283 no.
    #   BAG 8: floor 1/10 + 1/24 = 0.142 > 0.125: none.
    def change(data: dict) -> None:
        data["flows"][0]["messages"][1]["period"] = "24ms"

    got = candidates(tmp_path, variant(tmp_path, DATA / "afdx_conf_example.yaml", change))
    assert got == {"VL1": [(1, 14), (2, 27), (4, 80)]}


#: Seed 000's Table 1, by class: VLs per BAG (2, 4, ..., 128 ms) and per frame-length bin (0-100,
#: 100-200, 200-400, 400-600, 600-800, 800-1000, > 1000 B).
TABLE_1 = {
    "avionics": ([5, 25, 35, 70, 90, 60, 50], [180, 70, 35, 20, 15, 10, 5]),
    "multimedia": ([2, 2, 5, 10, 24, 16, 15], [0, 1, 5, 8, 12, 18, 25]),
    "best_effort": ([2, 2, 6, 25, 60, 32, 20], [5, 8, 16, 35, 50, 20, 18]),
}


def test_tv_000_1_generated_networks_follow_table_1() -> None:
    # TV-000-1: Table 1's columns sum to 335 / 335, 74 / 69, 147 / 152 (BAG / size), 556 each.
    assert [(sum(b), sum(z)) for b, z in TABLE_1.values()] == [(335, 335), (74, 69), (147, 152)]
    # `generate afdx` draws each VL's class by the BAG columns' sums (335 : 74 : 147), then its BAG
    # and its frame-length bin from the class's two columns (the seed gives no joint distribution).
    # At N VLs (one seed, so the draw is fixed) every share is within 4 binomial standard
    # deviations, sqrt(p (1 - p) / n), of the table's (at this N the multimedia share 74/556 and
    # the size column's 69/556 are 6 deviations apart), and the bin the table leaves empty
    # (multimedia frames below 100 B) stays empty.
    n_vls = 50_000
    net = run_json("generate", "afdx", "--vls", str(n_vls), "--switches", "8", "--planes", "1")
    bag_names = [f"{2**k}ms" for k in range(1, 8)]
    by_class: dict[str, list[tuple[int, int, int]]] = {c: [] for c in TABLE_1}
    for f in net["flows"]:
        # (BAG bin, frame-length bin, lmax in B): a bin's upper edge is in it (a frame drawn in a
        # bin and rounded onto its lower edge counts in the bin below: at most 0.5 % of a bin).
        lmax = int(f["lmax"].removesuffix("B"))
        size_bin = sum(1 for edge in (100, 200, 400, 600, 800, 1000) if lmax > edge)
        by_class[f["class"]].append((bag_names.index(f["bag"]), size_bin, lmax))
    worst = 0.0
    for c, (bags, sizes) in TABLE_1.items():
        vls = by_class[c]
        shares = [
            (len(vls), n_vls, sum(bags), 556),
            *((sum(1 for b, _, _ in vls if b == k), len(vls), bags[k], sum(bags)) for k in range(7)),
            *((sum(1 for _, z, _ in vls if z == k), len(vls), sizes[k], sum(sizes)) for k in range(7)),
        ]
        for count, n, printed, total in shares:
            p = printed / total
            sigma = (p * (1 - p) / n) ** 0.5
            if p > 0:
                worst = max(worst, abs(count / n - p) / sigma)
    assert worst <= 4.0, worst
    assert min(lmax for _, _, lmax in by_class["multimedia"]) >= 100


SEED002 = REPO / "examples" / "seed002_four_vls.yaml"


def test_tv_002_1_port_delays_with_burst_growth(tmp_path: Path) -> None:
    # TV-002-1 (seed 002's sample network, bursts without the 20-byte preamble and gap): the
    # sender's port d_snd = (200 + 400) x 8 / 100 Mb/s + 40 = 88 us, exactly the paper's. The
    # paper's 224 us end to end leaves out burst growth (and its VL4 is 50 B, below Ethernet's
    # 64); the CLI's `afdx-naive` (the WOPANet rules) grows bursts, so at SW1's port to SW2:
    # VL1 8 x 200 + 800 kb/s x 88 us = 1670.4 b, VL3 8 x 500 + 125 kb/s x 80 us = 4010 b:
    # 5680.4 / 100 + 10 = 66.804 us (paper: 56 + 10 = 66), backlog ceil(5680.4 / 8) = 711 B.
    def no_gap(data: dict) -> None:
        data["defaults"]["interframe_overhead"] = "0B"

    report = run_json("analyze", variant(tmp_path, SEED002, no_gap), "-m", "afdx-naive")
    ports = {(p["node"], p["port"]): p for p in report["ports"]}
    es1 = next(p for (n, _), p in ports.items() if n == "ES1")
    assert close(es1["delay_us"], 88.0)
    sw1 = max((p for (n, _), p in ports.items() if n == "SW1"), key=lambda p: p["delay_us"])
    assert close(sw1["delay_us"], 66.804) and sw1["backlog_bytes"] == 711
    # End to end: VL4 (64 B = 512 b, 128 kb/s) leaves ES6 after 40 + 5.12 us with 512 + 0.128 x
    # 45.12 = 517.775 b and SW3 after 10 + 5.178 us with 519.718 b; VL1 leaves SW1 with 1670.4 +
    # 0.8 x 66.804 = 1723.843 b; SW2's port: 10 + (1723.843 + 519.718) / 100 = 32.436 us. VL1:
    # 88 + 66.804 + 32.436 + 40 (d_rcv) = 227.24, reported rounded up: 228 us (paper: 224).
    vl1 = next(f for f in report["flows"] if f["flow"] == "VL1")
    assert vl1["delay_us"] == 228
    # With the 20 bytes (Eq. 4's b_k): d_snd = (220 + 420) x 8 / 100 + 40 = 91.2 us, as the paper.
    es1 = next(p for p in run_json("analyze", SEED002, "-m", "afdx-naive")["ports"] if p["node"] == "ES1")
    assert close(es1["delay_us"], 91.2)


SELECTION = DATA / "afdx_conf_selection.yaml"


def configured_pairs(tmp_path: Path, src: Path, *options: str) -> list[tuple[int, int]]:
    report = run_json("configure", "afdx", src, "-o", tmp_path / "configured.yaml", *options)
    assert report["feasible"], report
    return [(v["bag_ms"], v["mtu_bytes"]) for v in report["vls"]]


def test_tv_001d_4_pair_selection_in_bag_order(tmp_path: Path) -> None:
    # TV-001D-4: the paper's DFS (BAG order, jitter never binding) at 1 Mbit/s picks (1,5) +
    # (2,12); (1,5) + (1,6) reserves 145 B/ms > 125.
    pairs = configured_pairs(tmp_path, SELECTION, "--objective", "bag-order", "--jitter-at", "none")
    assert pairs == [(1, 5), (2, 12)]
    # With the jitter limit in microseconds nothing is feasible: VL1 alone at its source port,
    # MTU 5: (67 + 5) x 8 / 1 Mbit/s + 40 = 616 us > 500.
    res = run("configure", "afdx", SELECTION, "-o", tmp_path / "o.yaml", "--objective", "bag-order")
    assert res.returncode == 1 and "jitter" in res.stderr and "616.0 us > 500 us" in res.stderr
    assert not (tmp_path / "o.yaml").exists()


def test_tv_001d_4_variant_faster_link(tmp_path: Path) -> None:
    # At 2 Mbit/s (250 B/ms) the first pairs in BAG order fit: (1,5) + (1,6) reserves
    # (5 + 67)/1 + (6 + 67)/1 = 145 B/ms <= 250 at the switch's output.
    def faster(data: dict) -> None:
        data["defaults"]["link_rate"] = "2Mbps"

    src = variant(tmp_path, SELECTION, faster)
    pairs = configured_pairs(tmp_path, src, "--objective", "bag-order", "--jitter-at", "none")
    assert pairs == [(1, 5), (1, 6)]


# --- seed 004, seed 001G, seed 003 --------------------------------------------------------------


def test_tv_004_3_variant_smaller_server_budget(tmp_path: Path) -> None:
    # Table 1 (R = 11, 31, 100 in tests/test_fixed_priority.py) with the server's budget 20 -> 10
    # packets per 50 (1 ms per packet, blocking of one packet except for the lowest level):
    #   m1: 1 + 10 = 11; server: 1 + 10 + 10 = 21;
    #   m3: w = 50 + 10 ceil(w/200) + 10 ceil(w/50): 70 -> 80 -> 80 (busy period 80 < 200).
    def change(data: dict) -> None:
        data["servers"][0]["budget"] = 10
        data["messages"][1]["packets"] = 10

    r = responses(variant(tmp_path, FIXED_PRIORITY / "nss_table1.yaml", change))
    assert (r["m1"], r["nss2"], r["m3"]) == (11e3, 21e3, 80e3)


def test_tv_001g_1_variant_three_applications() -> None:
    # Eq. 3 with three applications, c = (0.4, 0.3, 0.3), f = (0.1, -0.4, 0.2), eps = 0.2:
    # sum f = -0.1; c1 = 0.4 - 0.2 (0.1 + 0.04) = 0.372, c2 = 0.3 - 0.2 (-0.4 + 0.03) = 0.374,
    # c3 = 0.3 - 0.2 (0.2 + 0.03) = 0.254 (sum 1).
    got = run_json("slrm", "step", "--shares", "0.4,0.3,0.3", "--matching=0.1,-0.4,0.2", "--epsilon", "0.2")
    assert all(close(g, e) for g, e in zip(got["shares"], [0.372, 0.374, 0.254], strict=True)), got


def test_tv_003_8_and_9_layouts(tmp_path: Path) -> None:
    # TV-003-9 (the decoupled layout: NC at even slots, VO = 1 mod 4, VI = 3 mod 8, CL = 7 mod 16,
    # EE = 15 mod 32, BE at 31, BK at 63) and TV-003-8 (the WF2Q layout of Table 5's weights NC 6,
    # VO 3, VI 32, CL 13, EE 6, BE 3, BK 1, ties by VC order), as `configure dtable` writes them.
    out = tmp_path / "schedulers.yaml"
    run_json("configure", "dtable", REPO / "examples" / "dtable" / "table4_requirements.yaml", "-o", out)
    written = yaml.safe_load(out.read_text())["schedulers"]
    layout = [e["class"] for e in written["dtable"]["entries"]]
    def slot(s: int) -> str:
        for modulus, rest, name in ((2, 0, "NC"), (4, 1, "VO"), (8, 3, "VI"), (16, 7, "CL"), (32, 15, "EE")):
            if s % modulus == rest:
                return name
        return {31: "BE", 63: "BK"}[s]

    expected = [slot(s) for s in range(64)]
    assert layout == expected
    wf2q = " ".join(e["class"] for e in written["dtable_wf2q"]["entries"])
    assert wf2q == (
        "VI CL VI NC VI CL VI EE VI VO VI CL VI NC VI CL VI EE VI BE VI CL VI NC VI CL VI EE "
        "VI VO VI CL VI NC VI CL VI EE VI BE VI CL VI NC VI CL VI EE VI VO VI CL VI BE VI CL "
        "VI NC VI EE VI CL VI BK"
    )


def port_rows(*args: str | Path) -> dict[str, dict]:
    """The `ports` of a command's JSON, by node:port."""
    return {f"{p['node']}:{p['port']}": p for p in run_json(*args)["ports"]}


def test_tv_002_2_to_4_rates_and_frame_times(tmp_path: Path) -> None:
    # TV-002-2: BAG 32 ms, Lmax 200 B: 200 x 8 x 1000 / 32 = 50,000 bit/s. TV-002-4: 570 B every
    # 1 ms = 4.56 Mbit/s; 1500 B at 100 Mb/s = 120 us (the sender's port, nothing else queued).
    src = DATA / "seed002_arithmetic.yaml"
    ports = port_rows("info", src)
    assert ports["ES1:0"]["load_bps"] == pytest.approx(50_000, rel=1e-12)
    assert ports["ES3:0"]["load_bps"] == pytest.approx(4.56e6, rel=1e-12)
    assert ports["ES5:0"]["load_bps"] == pytest.approx(1500 * 8 / 0.128, rel=1e-12)
    ports = port_rows("analyze", src, "-m", "afdx-naive")
    # One frame alone at its port: 1500 x 8 / 100 = 120 us; 200 B: 16 us; 570 B: 45.6 us.
    assert [ports[k]["delay_us"] for k in ("ES5:0", "ES1:0", "ES3:0")] == pytest.approx([120.0, 16.0, 45.6])
    # Variant: with the 20-byte preamble and gap counted, 1520 B = 121.6 us at 100 Mb/s and RT
    # loads 590 x 8 x 1000 = 4.72 Mbit/s.
    def gap(data: dict) -> None:
        data["defaults"]["interframe_overhead"] = "20B"

    with_gap = variant(tmp_path, src, gap)
    ports = port_rows("info", with_gap)
    assert ports["ES3:0"]["load_bps"] == pytest.approx(4.72e6, rel=1e-12)
    ports = port_rows("analyze", with_gap, "-m", "afdx-naive")
    assert close(ports["ES5:0"]["delay_us"], 121.6)


def test_tv_002_3_bag_from_message_rates(tmp_path: Path) -> None:
    # TV-002-3: ports at 10, 20 and 40 Hz share one VL: 70 Hz, an average period of 14.29 ms, so the
    # largest BAG is 8 ms (1/8 >= 70/1000 > 1/16). Small payloads (one frame each at any MTU >= 64).
    def change(data: dict) -> None:
        data["flows"][0]["messages"] = [{"payload": "64B", "period": p} for p in ("100ms", "50ms", "25ms")]

    got = candidates(tmp_path, variant(tmp_path, DATA / "afdx_conf_example.yaml", change))["VL1"]
    assert max(bag for bag, _ in got) == 8
    # Variant: 10 + 20 + 30 Hz = 60 Hz (16.7 ms): still below 1/16 = 62.5 Hz, so BAG 16 fits.
    def slower(data: dict) -> None:
        data["flows"][0]["messages"] = [{"payload": "64B", "period": p} for p in ("100ms", "50ms", "33.4ms")]

    src = variant(tmp_path, DATA / "afdx_conf_example.yaml", slower, "slower.yaml")
    got = candidates(tmp_path, src)["VL1"]
    assert max(bag for bag, _ in got) == 16


def test_oracle_4_5_variant_second_instance_of_a_non_preemptive_busy_period(tmp_path: Path) -> None:
    # Davis, Burns, Bril, Lukkien 2007's case for the revised CAN analysis (the one oracle 5 cites):
    # A (C 1, T 2.5), B (1, 3.5), C (1, 3.5), deadlines = periods, A > B > C, non-preemptive.
    # C (lowest, no blocking): busy period 3 -> 4 -> 6 -> 7 -> 7, so ceil(7 / 3.5) = 2 instances;
    # w(q) = q + (floor(w/2.5) + 1) + (floor(w/3.5) + 1): q = 0: w = 2, R = 3; q = 1: 3 -> 4 -> 5 ->
    # 6 -> 6, R = 6 + 1 - 3.5 = 3.5 (a first instance alone would give 3).
    # B (blocked by C's 1): q = 0: w = 1 + 1 = 2, R = 3; q = 1 (busy period 5): w = 3 -> 4, R = 1.5.
    # A: w = 1 (blocking), R = 2.
    doc = {
        "name": "davis-2007",
        "processors": [{"name": "link", "scheduling": "non_preemptive"}],
        "tasks": [
            {"name": "A", "processor": "link", "wcet": "1ms", "period": "2500us", "priority": 1},
            {"name": "B", "processor": "link", "wcet": "1ms", "period": "3500us", "priority": 2},
            {"name": "C", "processor": "link", "wcet": "1ms", "period": "3500us", "priority": 3},
        ],
    }
    assert responses(write(tmp_path, doc, "link.yaml")) == {"A": 2e3, "B": 3e3, "C": 3.5e3}
    # The same on a CAN bus: 7-byte frames are 55 + 70 = 125 bits, 1 ms at 125 kbit/s. The bit
    # time (8 us) in ceil((w + tau_bit) / T) changes no step above: R = 2, 3, 3.5 ms.
    can = {
        "name": "davis-2007-can",
        "buses": [{"name": "can0", "bit_rate": "125kbps"}],
        "messages": [
            {"name": n, "bus": "can0", "sender": f"node{p}", "payload": "7B", "period": t, "priority": p}
            for n, t, p in (("A", "2500us", 1), ("B", "3500us", 2), ("C", "3500us", 3))
        ],
    }
    assert responses(write(tmp_path, can, "can.yaml")) == {"A": 2e3, "B": 3e3, "C": 3.5e3}


def test_dnc_fifo_sfa_counts_the_flow_of_interest_upstream(tmp_path: Path) -> None:
    # `sfa` under FIFO (not DNC's convention) on TA_2S_1SC_2F_1AC_1P: two flows (25, 5) over two
    # servers (10, 10). f1 leaves s0 within the left-over (10 - 5, 10 + 25/10) = (5, 12.5), so it
    # reaches s1 with burst 25 + 5 x 12.5 = 87.5; f0's left-overs (5, 12.5) and (5, 10 + 87.5/10)
    # give 12.5 + 18.75 + 25/5 = 36.25 (DNC's 35 leaves f0 out of f1's burst: 25 + 5 x 10 = 75).
    # Backlog: 25 + 5 x 31.25 = 181.25.
    net = DNC["networks"]["TA_2S_1SC_2F_1AC_1P"]
    p = write(tmp_path, dnc_description("TA_2S_1SC_2F_1AC_1P", net), "ta.yaml")
    for flow in ("f0", "f1"):
        d, b, _ = graph_bounds(p, "sfa", False)[flow]
        assert close(d, 36.25) and close(b, 181.25), (flow, d, b)


def explained_hops(path: Path, flow: str) -> tuple[float, list[tuple[float, float, float]]]:
    """SFA under blind multiplexing, `--explain FLOW`: the bound and, per hop, (burst entering,
    left-over rate, left-over latency), in the description's units."""
    route = run_json("analyze", path, "-m", "sfa", "--blind", "--explain", flow)["routes"][0]
    hops = [(h["burst_bits"], h["left_over"][0], h["left_over"][1] / 1e6) for h in route["hops"]]
    return route["bound_us"] / 1e6, hops


def test_oracle_1_ncbounds_toy_network_hop_by_hop(tmp_path: Path) -> None:
    bound, hops = explained_hops(DATA / "ncbounds_toy.yaml", "flow0")
    # NCBounds' arrival curves of flow 0 entering servers 0, 1, 2 and its residuals at 0 and 1.
    assert [h[0] for h in hops] == pytest.approx([1, 7, 24], rel=1e-9)
    assert hops[0][1:] == pytest.approx((3, 3), rel=1e-9) and hops[1][1:] == pytest.approx((2, 8.5), rel=1e-9)
    # Server2 and the bound in DNC's reading (the model file's comment): (7 x 1 + 11 + 5.5) / 3.
    assert hops[2][1:] == pytest.approx((3, 23.5 / 3), rel=1e-9) and close(bound, 3 + 8.5 + 23.5 / 3 + 0.5)

    # Variant: server1 at rate 6. Flow 0's residual there: (6 - 3, (6 x 3 + 2) / 3) = (3, 20/3);
    # it enters server2 with 1 + 2 (3 + 20/3) = 20.333. Flow 1 alone at server1 leaves with
    # 2 + 3 x 3 = 11; flow 2 leaves server0 (beside flow 0: (2, (8 + 1)/2 = 4.5)) with 5.5; so
    # server2 leaves (7 - 4, (7 + 16.5) / 3) = (3, 23.5/3), and the end-to-end left-over is
    # rate min(3, 3, 3) = 3, latency 3 + 20/3 + 23.5/3 = 17.5: bound 17.5 + 1/3 = 17.8333.
    def faster(data: dict) -> None:
        data["server_graph"]["servers"][1]["rate"] = 6

    bound, hops = explained_hops(variant(tmp_path, DATA / "ncbounds_toy.yaml", faster), "flow0")
    assert [h[0] for h in hops] == pytest.approx([1, 7, 1 + 2 * (3 + 20 / 3)], rel=1e-9)
    assert hops[1][1:] == pytest.approx((3, 20 / 3), rel=1e-9)
    assert hops[2][1:] == pytest.approx((3, 23.5 / 3), rel=1e-9)
    assert close(bound, 17.5 + 1 / 3)


def test_tv_003_1_variants_of_w_and_k(tmp_path: Path) -> None:
    # Table 4 (TV-003-1 in tests/test_configure.py) with the decoupling parameters changed, by the
    # seed's formulas: M = GMTU w, pool = N GMTU k, min phi = (n/N)(MTU/GMTU)/k, max phi = (n/N) w/k.
    table4 = REPO / "examples" / "dtable" / "table4_requirements.yaml"
    names = ["NC", "VO", "VI", "CL", "EE", "BE", "BK"]

    # w = 4: M = 32 x 4 = 128 credits, pool still 64 x 32 x 0.5 = 1024; the minima do not depend
    # on w (Table 4's), the maxima double: (n/64) x 8 = 4, 2, 1, 0.5, 0.25, 0.125, 0.125.
    def w4(data: dict) -> None:
        data["w"] = 4

    plan = run_json("configure", "dtable", variant(tmp_path, table4, w4), "-o", tmp_path / "s.yaml")
    plan = plan["decoupling"]["plan"]
    assert (plan["max_weight"], plan["pool"]) == (128, 1024)
    rows = {c["name"]: c for c in plan["classes"]}
    table4_minima = [0.09375, 0.046875, 0.25, 0.125, 0.03125, 0.015625, 0.015625]
    assert [rows[n]["min_share"] for n in names] == table4_minima
    assert [rows[n]["max_share"] for n in names] == [4, 2, 1, 0.5, 0.25, 0.125, 0.125]

    # k = 1: pool 2048, so VI's 8 entries hold at most (8/64) x 2/1 = 0.25 < its share 0.5:
    # no table; the verdict names the class and the rule, and nothing is written.
    def k1(data: dict) -> None:
        data["k"] = 1

    out = tmp_path / "k1_schedulers.yaml"
    res = run("configure", "dtable", variant(tmp_path, table4, k1, "k1.yaml"), "-o", out)
    assert res.returncode == 1
    assert "'VI' asks for a share of 0.5 but its 8 entries hold at most 0.25" in res.stderr
    assert not out.exists()


def test_tv_003_5_injection_totals_at_the_seeds_load_points(tmp_path: Path) -> None:
    # TV-003-5: the sweep's default loads run from the seed's lightest to its heaviest point,
    # Table 5's Inj. Min and Inj. Max columns: NC 0.015, VO 0.046, VI 0.453, CL 0.203 fixed, EE,
    # BE and BK 0.015 each (total 0.762, printed 0.76) or 0.093 each (total 0.996, printed 1).
    # A tiny fabric (2 endpoints, 0.1 ms): the injections do not depend on it. (About 10 s: the
    # sweep's cluster, 5 loads x 4 schedulers x 2 runs; each run takes milliseconds.)
    doc = run_json("experiment", "seed003-fabric", "--out", tmp_path / "fabric", "--runs", "2", "--duration",
                   "0.1ms", "--warmup", "0.05ms", "--endpoints", "2")
    assert (doc["rows"], doc["failed"]) == (40, 0)
    injection = {e["load"]: e for e in doc["injection"]}
    assert list(injection) == [0.762, 0.82, 0.88, 0.94, 0.996]
    qos = {"NC": 0.015, "VO": 0.046, "VI": 0.453, "CL": 0.203}
    # Variant: the middle load, 0.88: (0.88 - 0.717) / 3 = 0.0543333... per best-effort class.
    for load, per_best_effort in ((0.762, 0.015), (0.996, 0.093), (0.88, 0.163 / 3)):
        e = injection[load]
        assert list(e["classes"]) == ["NC", "VO", "VI", "CL", "EE", "BE", "BK"]
        expected = {**qos, "EE": per_best_effort, "BE": per_best_effort, "BK": per_best_effort}
        assert all(close(e["classes"][c], v) for c, v in expected.items()), e
        assert close(e["total"], load) and close(sum(e["classes"].values()), load), e


def test_sink_tree_backlog_table_shows_backlogs_not_failures(tmp_path: Path) -> None:
    # The table of a backlog-only method: each row its backlog and "backlog bound (no delay)",
    # not "unbounded" in red; a server that is no sink tree's root says why. Two flows (b 10,
    # r 1) and (b 5, r 1) over s0 (R 10, T 1) then s1 (R 10, T 2): the tree's root s1 holds
    # 10 + 1 x 1 + 5 + 1 x 1 (each burst grown over s0's latency) + 2 x 2 = 21 (bits: 2.625 B).
    p = write(tmp_path, graph([("s0", 10, 1), ("s1", 10, 2)],
                              [("f0", 10, 1, ["s0", "s1"]), ("f1", 5, 1, ["s0", "s1"])]), "tree.yaml")
    res = run("analyze", p, "-m", "sink-tree-backlog")
    assert res.returncode == 0, res.stderr
    assert "unbounded" not in res.stdout, res.stdout
    rows = [line for line in res.stdout.splitlines() if line.startswith("│ f")]
    assert len(rows) == 2 and all("2.625" in r and "backlog bound (no delay)" in r for r in rows), res.stdout
    # A flow leaving before the other's server: s1 is no sink tree's root.
    p = write(tmp_path, graph([("s0", 10, 1), ("s1", 10, 2), ("s2", 10, 1)],
                              [("f0", 10, 1, ["s0", "s1"]), ("f1", 5, 1, ["s0", "s2"])]), "split.yaml")
    res = run("analyze", p, "-m", "sink-tree-backlog")
    assert res.returncode == 0, res.stderr
    assert "unbounded" in res.stdout and "root of a sink tree" in res.stdout, res.stdout
