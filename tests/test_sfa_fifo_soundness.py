"""SFA on FIFO server graphs against adversarial trajectories (docs/ANALYSIS.md, "The flow of
interest in the hop-by-hop SFA under FIFO").

Sources of the expected numbers:
* The property: on small random tandems and feed-forward graphs near full load (2 to 4
  rate-latency servers, 2 to 5 token-bucket flows, large bursts and latencies), no trajectory of
  the packet-level run below exceeds `sfa` (its cross traffic's arrival curves all valid, so the
  left-over service theorem applies as stated), nor `sfa-foi-lowest`, the functional tests'
  convention that leaves the flow of interest (foi) out of its companions' interference upstream.
  That convention is not proven under FIFO: a trajectory above it would be a counter-example, and
  the assertion says so.
* TA_2S_1SC_2F_1AC_1P (shared/oracles/dnc-functional-tests.md): two flows (25, 5) over two
  servers (10, 10). SFA FIFO by the functional tests' convention 35 (the oracle row); with the foi
  counted, by hand: f1 leaves s0 within the left-over (10 − 5, 10 + 25/10) = (5, 12.5), so it
  reaches s1 with burst 25 + 5·12.5 = 87.5 (where the convention says 25 + 5·10 = 75, and FIFO
  lets it reach 25 + 5·(10 + 50/10) = 100); f0's left-overs (5, 12.5) and (5, 10 + 87.5/10) give
  12.5 + 18.75 + 25/5 = 36.25. Exact worst case 20 + 50/10 = 25 (tests/test_fifo_lp.py).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from server_graphs import graph, packet_run

SFA_FOI_LOWEST = "sfa-foi-lowest"


def bounds(tmp_path: Path, servers: list, flows: list, methods: list[str]) -> dict[str, list[float]]:
    from rtnetlab import model

    net = model.load_file(graph(tmp_path, servers, flows))
    return {m: [r["delay_us"] / 1e6 for r in net.analyze(m)["flows"]] for m in methods}


def random_network(rng: random.Random) -> tuple[list, list]:
    """2 to 4 servers, 2 to 5 flows on a tandem's stretches or on increasing server numbers
    (feed-forward), each server's load 50 to 99 %, latencies covering a burst's packet."""
    n = rng.randint(2, 4)
    servers = [(float(rng.choice([1, 2, 5, 10, 20])), float(rng.choice([0.5, 1, 2, 5, 10, 20])))
               for _ in range(n)]
    tandem = rng.random() < 0.5
    flows = []
    for _ in range(rng.randint(2, 5)):
        if tandem:
            a = rng.randrange(n)
            path = list(range(a, rng.randint(a, n - 1) + 1))
        else:
            path = sorted(rng.sample(range(n), rng.randint(1, n)))
        burst, rate = rng.choice([0.5, 1, 5, 10, 25, 50]), rng.choice([0.1, 0.5, 1, 2, 5])
        flows.append((float(burst), float(rate), path))
    load = rng.choice([0.5, 0.8, 0.95, 0.99])
    for j, (rate, latency) in enumerate(servers):
        offered = sum(r for _, r, p in flows if j in p)
        rate = max(rate, offered / load)
        largest = max((b / 8 for b, _, p in flows if j in p), default=0.0)
        servers[j] = (rate, max(latency, largest / rate))
    return servers, flows


def worst_trajectory(servers: list, flows: list, foi: int, horizon: float, rng: random.Random,
                     tries: int) -> float:
    """The largest delay of flow `foi` over `tries` random scenarios (release offsets, gate
    times), then as many random moves from the worst one kept."""
    def scenario() -> tuple[list[float], list[list[float]]]:
        offsets = [rng.choice([0.0, rng.uniform(0, horizon / 3)]) for _ in flows]
        gates = [[rng.uniform(0, horizon / 2) for _ in range(rng.choice([0, 0, 1, 2, 4]))] for _ in servers]
        return offsets, gates

    best, (offsets, gates) = 0.0, scenario()
    for _ in range(tries):
        o, g = scenario()
        d = packet_run(servers, flows, o, horizon, g, foi, packets=8)[foi]
        if d > best:
            best, offsets, gates = d, o, g
    for _ in range(tries):
        o = [max(0.0, x + rng.gauss(0, 0.3)) if rng.random() < 0.5 else x for x in offsets]
        g = [[max(0.0, x + rng.gauss(0, 0.3)) for x in gs] for gs in gates]
        d = packet_run(servers, flows, o, horizon, g, foi, packets=8)[foi]
        if d > best:
            best, offsets, gates = d, o, g
    return best


def campaign(tmp_path: Path, seed: int, networks: int, tries: int) -> float:
    """Every flow's worst trajectory found within its `sfa` and `sfa-foi-lowest` bounds; returns
    the largest ratio of a trajectory to `sfa-foi-lowest` on the flows where the two differ."""
    rng = random.Random(seed)
    closest = 0.0
    for case in range(networks):
        servers, flows = random_network(rng)
        b = bounds(tmp_path, servers, flows, ["sfa", SFA_FOI_LOWEST])
        for f in range(len(flows)):
            horizon = 3 * max(b[SFA_FOI_LOWEST][f], 1.0)
            d = worst_trajectory(servers, flows, f, horizon, rng, tries)
            assert d <= b["sfa"][f] * (1 + 1e-9), ("sfa below a trajectory", case, f, servers, flows, d)
            assert d <= b[SFA_FOI_LOWEST][f] * (1 + 1e-9), (
                "a counter-example to the foi left out under FIFO", case, f, servers, flows, d)
            if b[SFA_FOI_LOWEST][f] < b["sfa"][f] * (1 - 1e-9):
                closest = max(closest, d / b[SFA_FOI_LOWEST][f])
    return closest


def test_the_functional_tests_convention_is_reproduced_and_sfa_counts_the_foi(tmp_path: Path) -> None:
    servers, flows = [(10.0, 10.0), (10.0, 10.0)], [(25.0, 5.0, [0, 1]), (25.0, 5.0, [0, 1])]
    b = bounds(tmp_path, servers, flows, ["sfa", SFA_FOI_LOWEST, "best"])
    assert b[SFA_FOI_LOWEST] == pytest.approx([35.0, 35.0], rel=1e-9)
    assert b["sfa"] == pytest.approx([36.25, 36.25], rel=1e-9)
    assert all(25.0 <= x <= 36.25 * (1 + 1e-9) for x in b["best"])
    # A trajectory of the packet-level run reaches the exact 25 less what whole packets lose.
    worst = packet_run(servers, flows, [0.0, 0.0], 40.0, [[], []], tail=0, packets=8)
    assert 24.0 <= worst[0] <= 25.0


def test_the_campaign_gets_close_to_the_bound() -> None:
    """The search is sharp enough to find a bound a few per cent too low: on this tandem (found
    by the campaign) a trajectory reaches 98 % of `sfa-foi-lowest`, 41.86."""
    servers = [(8.875, 20.0), (6.375, 20.0)]
    flows = [(5.0, 0.1, [0, 1]), (1.0, 2.0, [0]), (0.5, 5.0, [0, 1])]
    d = worst_trajectory(servers, flows, 2, 3 * 41.86, random.Random(4), 150)
    assert 0.97 * 41.856 <= d <= 41.856


def test_no_trajectory_above_sfa_on_random_small_networks(tmp_path: Path) -> None:
    campaign(tmp_path, seed=3, networks=12, tries=25)


@pytest.mark.slow
def test_no_trajectory_above_sfa_on_many_random_small_networks(tmp_path: Path) -> None:
    campaign(tmp_path, seed=7, networks=150, tries=150)
