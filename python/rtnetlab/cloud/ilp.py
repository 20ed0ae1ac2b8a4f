"""Exact placement of VSN components with HiGHS (through `highspy`), on small instances, to
compare with the online heuristic. The instance is a batch: every request present at once, no
lifetimes, CPU only (virtual links are not in the model). The ILP admits the largest number of
requests: binary y_r (request r admitted) and x_{c,h,k} (component c on core k of host h), with
Σ_{h,k} x_{c,h,k} = y_r for every component c of r, and Σ_c u_c x_{c,h,k} ≤ 1 on every core
(partitioned EDF). Its optimum bounds what any placement, online or not, can admit."""

from __future__ import annotations

from rtnetlab.analysis.lp import quiet_highs
from rtnetlab.errors import UserError


def _highs():
    try:
        import highspy
    except ImportError:
        raise UserError("--exact: needs the highspy package (pip install highspy, or make build)") from None
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


def exact_admitted(cores: list[int], requests: list[list[float]], time_limit: float = 30.0) -> int:
    """The largest number of requests (each a list of component utilisations) that fit."""
    with quiet_highs():
        return _exact(cores, requests, time_limit)


def _exact(cores: list[int], requests: list[list[float]], time_limit: float) -> int:
    h = _highs()
    h.setOptionValue("time_limit", time_limit)
    slots = [(host, k) for host, n in enumerate(cores) for k in range(n)]
    y = h.addBinaries(len(requests))
    load = {s: [] for s in slots}
    for r, comps in enumerate(requests):
        for u in comps:
            x = h.addBinaries(len(slots))
            h.addConstr(sum(x[i] for i in range(len(slots))) == y[r])
            for i, s in enumerate(slots):
                load[s].append((u, x[i]))
    for terms in load.values():
        if terms:
            h.addConstr(sum(u * v for u, v in terms) <= 1)
    h.maximize(sum(y[r] for r in range(len(requests))))
    status = str(h.getModelStatus())
    if "Optimal" not in status:
        raise UserError(f"--exact: HiGHS stopped without an optimum ({status})")
    return round(h.getInfo().objective_function_value)


def heuristic_admitted(admit, cores: list[int], requests: list[list[float]]) -> int:
    """The engine's online heuristic on the same batch (all arriving at once, in order)."""
    network = {
        "name": "hosts",
        "end_systems": [{"name": f"H{i}"} for i in range(len(cores))],
        "switches": [{"name": "SW"}],
        "links": [{"from": f"H{i}", "to": "SW"} for i in range(len(cores))],
    }
    infra = {"network": network, "hosts": [{"name": f"H{i}", "cores": n} for i, n in enumerate(cores)]}
    reqs = {
        "requests": [
            {
                "name": f"r{r}",
                "arrival": "0s",
                "lifetime": "1s",
                "components": [{"name": f"c{j}", "utilisation": u} for j, u in enumerate(comps)],
            }
            for r, comps in enumerate(requests)
        ]
    }
    return admit(infra, reqs)["accepted"]


def compare(
    admit, instances: int, seed: int, hosts: int = 4, cores: int = 2, requests: int = 12
) -> list[dict]:
    """Heuristic against exact on `instances` random batches (utilisations 0.1 to 0.7, 1 to 3
    components per request)."""
    import random

    rng = random.Random(seed)
    rows = []
    for i in range(instances):
        batch = [[round(rng.uniform(0.1, 0.7), 3) for _ in range(rng.randint(1, 3))] for _ in range(requests)]
        c = [cores] * hosts
        rows.append(
            {
                "instance": i,
                "requests": requests,
                "heuristic": heuristic_admitted(admit, c, batch),
                "exact": exact_admitted(c, batch),
            }
        )
    return rows
