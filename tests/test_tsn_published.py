"""Published TSN examples with delay figures, from the command line: the credit-based shaper alone
and asynchronous traffic shaping on INET's and CoRE4INET's validation network (published
simulated worst cases), and asynchronous traffic shaping on the ICCT 2020 network (published
bounds, as INET's validation test holds them). Each bound is derived by hand below and set beside
the published figure; each example is also simulated."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CBS = REPO / "examples" / "tsn" / "cbs_inet_validation.yaml"
ATS = REPO / "examples" / "tsn" / "ats_icct2020.yaml"

C = 100.0  # both networks: 100 Mb/s links, in bits per microsecond


def run_json(cli: Path, *args: object) -> dict:
    res = subprocess.run([str(cli), *map(str, args), "--json"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def bounds(cli: Path, path: Path, *args: str) -> dict[str, float]:
    return {r["flow"]: r["delay_us"] for r in run_json(cli, "analyze", path, *args)["flows"]}


def worst_simulated(cli: Path, path: Path, duration: str = "100ms") -> dict[str, float]:
    rows = run_json(cli, "simulate", path, "--duration", duration, "--release", "synchronized")["flows"]
    assert all(r["count"] > 0 for r in rows)
    return {r["flow"]: r["max_us"] for r in rows}


def at_published_load(tmp_path: Path, example: Path, flow: str, period: str) -> Path:
    """The example with `flow` back at its published period (which overloads the port)."""
    net = yaml.safe_load(example.read_text())
    next(f for f in net["flows"] if f["name"] == flow)["period"] = period
    out = tmp_path / example.name
    out.write_text(yaml.safe_dump(net))
    return out


# --- Credit-based shaper alone: INET's validation network (CoRE4INET's medium_network) ---------
#
# Published (python/inet/test/validation.py): the largest end-to-end delays CoRE4INET simulates,
# which INET's simulation must match within 1 %. Simulated worst cases, not bounds.
CBS_PUBLISHED_MAX = {"medium": 540.0, "high": 307.2, "critical": 375.84}


def cbs_bounds_by_hand() -> dict[str, float]:
    # On the wire (frame + 4 B tag + 8 B preamble + 12 B gap): critical 1542 B, high and medium
    # 342 B, best effort 1538 B. The switch adds T = 8 us; the talkers' ports send each flow alone.
    lc, lh, lbe, t = 1542 * 8, 342 * 8, 1538 * 8, 8.0
    # Critical (unshaped, above the shaped classes): alone at S7, its frame (123.36 us) and no
    # jitter, so it reaches the switch with a burst of one frame; there static priority behind
    # one best-effort frame (non-preemption): T + (12336 + 12304)/C = 254.4 us.
    d_crit = t + (lc + lbe) / C
    # High (idle slope I = 21.952 Mb/s) under critical: hiCredit = I·(L_lo + a_H)/(C − r_H), L_lo
    # the largest lower frame (best effort's), (a_H, r_H) critical's arrivals advanced by its
    # bound: 12336 + 41.12·254.4 bits, 41.12 Mb/s; loCredit = −L·(C − I)/C. The service is
    # I·[t − T − (hiCredit − loCredit)/I]^+ and the burst one frame: delay T + (hi − lo)/I + L/I.
    i_h, r_c = 21.952, 1542 * 8 / 300.0
    a_c = lc + r_c * d_crit
    hi_h, lo_h = i_h * (lbe + a_c) / (C - r_c), -lh * (C - i_h) / C
    d_high = t + (hi_h - lo_h) / i_h + lh / i_h
    # Medium (I = 10.976 Mb/s) under critical and high: high counted by its output bucket
    # (hiCredit − loCredit, I_high).
    i_m = 10.976
    hi_m = i_m * (lbe + a_c + hi_h - lo_h) / (C - r_c - i_h)
    lo_m = -lh * (C - i_m) / C
    d_med = t + (hi_m - lo_m) / i_m + lh / i_m
    return {"critical": lc / C + d_crit, "high": lh / C + d_high, "medium": lh / C + d_med}


def test_cbs_validation_network_bounds_by_hand(rtnetlab_cli: Path) -> None:
    got = bounds(rtnetlab_cli, CBS)
    hand = cbs_bounds_by_hand()
    # 377.76, 853.415 and 1869.271 us.
    assert {k: got[k] for k in hand} == pytest.approx(hand, abs=1e-6)
    assert hand["critical"] == pytest.approx(377.76)
    # Against the published worst cases. Critical's is exactly its worst case: the published
    # 375.84 us is 2·1530 B + 1538 B at 100 Mb/s plus 8 us (INET ends a frame's delay with its
    # last bit, before its own 12 B gap), rtnetlab counts the gap in each of the frame's two
    # transmissions: 375.84 + 2·0.96 = 377.76. The shaped classes' bounds are 2.8 (high) and
    # 3.5 (medium) times the published worst cases: the rate-latency service charges one frame
    # the whole credit latency (hiCredit − loCredit)/I (693 and 1585 us), a worst case no
    # simulation meets.
    assert hand["critical"] == pytest.approx(CBS_PUBLISHED_MAX["critical"] + 2 * 12 * 8 / C)
    for flow, published in CBS_PUBLISHED_MAX.items():
        assert got[flow] >= published


def test_cbs_validation_network_simulates_the_published_worst_cases(rtnetlab_cli: Path,
                                                                    tmp_path: Path) -> None:
    # The example sends best effort every 500 us: at the published 125 us (98.5 Mb/s; INET drops
    # it at a four-frame queue) the port is overloaded and best effort has no bound there. The
    # bounds of the three classes above count best effort only through its largest frame, so they
    # hold at the published load too (test_published_load_leaves_the_higher_classes_bounded), and
    # so does the simulation there.
    published_load = at_published_load(tmp_path, CBS, "best_effort", "125us")
    hand = cbs_bounds_by_hand()
    sim = worst_simulated(rtnetlab_cli, published_load)
    for flow, published in CBS_PUBLISHED_MAX.items():
        # Within INET's own tolerance of CoRE4INET's figures (1 %), and within the bounds.
        assert sim[flow] == pytest.approx(published, rel=0.01)
        assert sim[flow] <= hand[flow]
    own = worst_simulated(rtnetlab_cli, CBS)
    analysed = bounds(rtnetlab_cli, CBS)
    assert all(own[f] <= analysed[f] for f in own)


# --- The same network under asynchronous traffic shaping (INET's validation against CoRE4INET) --
#
# INET requires its simulated delays with the switch regulating medium and high (instead of
# shaping them by credit) within 1 % of the same CoRE4INET figures.
ATS_VALIDATION = REPO / "examples" / "tsn" / "ats_inet_validation.yaml"


def ats_validation_bounds_by_hand() -> dict[str, float]:
    # Static priority behind the node's latency: level k gets [C·(t − T) − α_higher(t) − L_lower]^+,
    # whose latency (C·T + b_H + L_lower)/(C − r_H) counts the higher levels' arrivals during T.
    # Each regulated flow enters with its own bucket (one 2736-bit frame); critical's burst is its
    # frame, as above. Critical: T + (12336 + 12304)/C, as under the credit-based shaper.
    lc, lh, lbe, t = 1542 * 8, 342 * 8, 1538 * 8, 8.0
    r_c, r_h = lc / 300.0, lh / 125.0

    def level(own: float, higher_b: float, higher_r: float) -> float:
        return t + (own + higher_b + higher_r * t + lbe) / (C - higher_r)

    return {
        "critical": lc / C + level(lc, 0.0, 0.0),
        "high": lh / C + level(lh, lc, r_c),  # 505.893 us
        "medium": lh / C + level(lh, lc + lh, r_c + r_h),  # 863.000 us
    }


def test_ats_validation_network_bounds_by_hand_and_simulation(rtnetlab_cli: Path, tmp_path: Path) -> None:
    got = bounds(rtnetlab_cli, ATS_VALIDATION)
    hand = ats_validation_bounds_by_hand()
    assert {k: got[k] for k in hand} == pytest.approx(hand, abs=1e-6)
    # Regulated, the classes keep their own buckets and are bounded as static-priority levels:
    # 1.7 and 2.2 times below the credit-based shaper's bounds on the same traffic, and still
    # above the published worst cases (critical's is again its own worst case).
    assert hand["high"] < cbs_bounds_by_hand()["high"] and hand["medium"] < cbs_bounds_by_hand()["medium"]
    published_load = at_published_load(tmp_path, ATS_VALIDATION, "best_effort", "125us")
    sim = worst_simulated(rtnetlab_cli, published_load)
    for flow, published in CBS_PUBLISHED_MAX.items():
        assert got[flow] >= published
        assert sim[flow] == pytest.approx(published, rel=0.01)
        assert sim[flow] <= hand[flow]
    own = worst_simulated(rtnetlab_cli, ATS_VALIDATION)
    assert all(own[f] <= got[f] for f in own)


# --- Asynchronous traffic shaping: the ICCT 2020 network ------------------------------------
#
# Published bounds (us) of "The Delay Bound Analysis Based on Network Calculus for Asynchronous
# Traffic Shaping under Parameter Inconsistency" (ICCT 2020), as INET's validation test holds
# them; flows 6, 7 and best effort are published as infinite.
ATS_PUBLISHED = {"cdt": 867.6, "a2": 4665.5, "b3": 10902.0, "a4": 2505.2, "b5": 5678.3}


def ats_bounds_by_hand(b_cdt: float) -> dict[str, float]:
    """Static priority behind interleaved regulators: at a port, level k's service is
    [C·t − α_higher(t) − L_lower]^+ and every regulated flow enters with its own token bucket
    (b = one frame, r = frame/interval: Le Boudec's shaping for free), so a level of bursts B
    below levels of bursts B_H and rates R_H waits at most (B + B_H + L_lower)/(C − R_H).
    Frames count their length on the wire (interframe_overhead 0, as the paper). `b_cdt` is the
    burst of the ten CDT flows at a switch port: unregulated there, it is their 8000 bits at N1
    grown by what TFA adds on the way (the only term not derived here: the tests bracket it)."""
    def hop(own: float, higher_b: float = 0.0, higher_r: float = 0.0, lower: float = 0.0) -> float:
        return (own + higher_b + lower) / (C - higher_r)

    a2, b3, a4, b5, a6, b7 = 10 * 8000, 10 * 12000, 5 * 8000, 5 * 12000, 5 * 6400, 5 * 9600
    r_cdt, r_a2, r_a4, r_a6 = 1.6, 8.0, 4.0, 3.2
    be = 1518 * 8
    return {
        # N1 (behind one best-effort frame), then on each switch port the frames of the ten flows
        # come in over one 100 Mb/s link: at most one frame (800 bits) ahead of the line's rate,
        # so (800 + 12144)/C behind the largest lower frame (best effort's).
        "cdt": hop(10 * 800, lower=be) + 3 * hop(800, lower=be),
        # N2, S1->S2 (under CDT, over class B and best effort), S2->S3 (with flow 4), S3->N7
        # (with flow 6).
        "a2": hop(a2) + hop(a2, b_cdt, r_cdt, be) + hop(a2 + a4, b_cdt, r_cdt, be)
        + hop(a2 + a6, b_cdt, r_cdt, be),
        "b3": hop(b3) + hop(b3, b_cdt + a2, r_cdt + r_a2, be)
        + hop(b3 + b5, b_cdt + a2 + a4, r_cdt + r_a2 + r_a4, be)
        + hop(b3 + b7, b_cdt + a2 + a6, r_cdt + r_a2 + r_a6, be),
        # N4, S2->S3, S3->N6 (over class B's 12000-bit frames).
        "a4": hop(a4) + hop(a2 + a4, b_cdt, r_cdt, be) + hop(a4, lower=12000),
        "b5": hop(b5) + hop(b3 + b5, b_cdt + a2 + a4, r_cdt + r_a2 + r_a4, be) + hop(b5, a4, r_a4),
        # N8 (class A over class B), S3->N7.
        "a6": hop(a6, lower=9600) + hop(a2 + a6, b_cdt, r_cdt, be),
        "b7": hop(b7, a6, r_a6) + hop(b3 + b7, b_cdt + a2 + a6, r_cdt + r_a2 + r_a6, be),
    }


def by_group(rows: dict[str, float]) -> dict[str, float]:
    """The largest bound of each group of identical flows (cdt_0..cdt_9 -> cdt)."""
    out: dict[str, float] = {}
    for flow, d in rows.items():
        key = flow.split("_")[0]
        out[key] = max(out.get(key, 0.0), d if d is not None else float("inf"))
    return out


def test_ats_icct_network_bounds_by_hand(rtnetlab_cli: Path) -> None:
    got = by_group(bounds(rtnetlab_cli, ATS))
    # CDT's burst at the switches: at least its 8000 bits at N1, at most those grown by its rate
    # over its whole TFA bound (818.19 us, --method tfa below).
    low, high = ats_bounds_by_hand(8000.0), ats_bounds_by_hand(8000.0 + 1.6 * 818.19)
    assert got["cdt"] == pytest.approx(low["cdt"], abs=1e-6)  # 201.44 + 3·129.44 = 589.76
    for flow in ("a2", "b3", "a4", "b5", "a6", "b7"):
        assert low[flow] - 1e-6 <= got[flow] <= high[flow] + 1e-6, flow
    # The published bounds lie above ours: CDT's by 32 % (ours serialises the ten CDT flows on
    # their input link; without that, --method tfa, 818.19 us, still 5.7 % below), classes A
    # and B's by 1.0 to 6.3 %, even with CDT's burst at its largest above. The paper's per-hop
    # terms are not reachable here (only its figures, through INET's test), so the margin is not
    # derived; what matters is the direction: a published sound bound below ours would point at
    # a flaw of ours.
    for flow, published in ATS_PUBLISHED.items():
        assert got[flow] < published and high.get(flow, got[flow]) < published
    tfa = by_group(bounds(rtnetlab_cli, ATS, "--method", "tfa"))
    assert tfa["cdt"] == pytest.approx(818.19, abs=0.01)
    assert got["cdt"] < tfa["cdt"] < ATS_PUBLISHED["cdt"]


def test_ats_icct_network_simulates_within_both_bounds(rtnetlab_cli: Path, tmp_path: Path) -> None:
    got = by_group(bounds(rtnetlab_cli, ATS))
    sim = by_group(worst_simulated(rtnetlab_cli, ATS))
    assert all(sim[f] <= got[f] for f in sim)
    # At the published load (best effort every 100 us: 121.44 Mb/s, with CDT's 1.6 on N1's
    # 100 Mb/s link) best
    # effort has no bound, as published; the other flows simulate within our bounds (which count
    # best effort only through its largest frame) and the published ones.
    published_load = at_published_load(tmp_path, ATS, "be", "100us")
    rows = run_json(rtnetlab_cli, "analyze", published_load)["flows"]
    be = next(r for r in rows if r["flow"] == "be")
    assert be["delay_us"] is None
    assert "N1:0 overloaded: class 'best_effort' offered 121.44 Mb/s > link rate 100 Mb/s" in be["reason"]
    sim = by_group(worst_simulated(rtnetlab_cli, published_load))
    for flow in ("cdt", "a2", "b3", "a4", "b5", "a6", "b7"):
        assert sim[flow] <= got[flow]
        assert sim[flow] <= ATS_PUBLISHED.get(flow, float("inf"))


# --- At the published load: best effort overloads its port, the classes above keep their bounds --
#
# Under static priority (and so ATS, whose queues it serves) and the credit-based shaper, a class
# depends on its own and the higher classes' traffic; a lower class delays it by one frame
# (non-preemption), whatever that class's load. The examples send best effort less often than
# published so that every flow has a bound; at the published load only best effort loses its
# bound, and every other flow keeps the bound it has at the reduced load, which counts best
# effort only through its largest frame (the hand derivations above: `lbe`, `be`).
@pytest.mark.parametrize(
    ("example", "flow", "period", "reason"),
    [
        # S0 -> switch: 1538 B every 125 us is 98.432 Mb/s alone; at the switch's port to R the
        # classes above add theirs (41.12 + 21.888 + 10.944 Mb/s).
        (CBS, "best_effort", "125us", "overloaded: class 'best_effort' and the higher classes offered"),
        (ATS_VALIDATION, "best_effort", "125us",
         "overloaded: class 'best_effort' and the higher classes offered"),
        # N1: 1518 B every 100 us is 121.44 Mb/s alone.
        (ATS, "be", "100us", "N1:0 overloaded: class 'best_effort' offered 121.44 Mb/s > link rate"),
    ],
)
def test_published_load_leaves_the_higher_classes_bounded(rtnetlab_cli: Path, tmp_path: Path, example: Path,
                                                          flow: str, period: str, reason: str) -> None:
    reduced = bounds(rtnetlab_cli, example)
    rows = run_json(rtnetlab_cli, "analyze", at_published_load(tmp_path, example, flow, period))["flows"]
    published = {r["flow"]: r for r in rows}
    assert published[flow]["delay_us"] is None and reason in published[flow]["reason"]
    others = {f: r["delay_us"] for f, r in published.items() if f != flow}
    assert others and all(d is not None for d in others.values())
    assert others == {f: reduced[f] for f in others}
