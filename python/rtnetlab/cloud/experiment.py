"""`rtnetlab experiment admission`: seed 001F's admission on a generated request stream."""

from __future__ import annotations

import random

CLASSES = [("control", 0), ("video", 1), ("bulk", 2)]


def infrastructure(hosts_per_leaf: int = 2, leaves: int = 4, spines: int = 2, cores: int = 4) -> dict:
    """A leaf-spine data centre: every leaf switch linked to every spine (so several paths of
    equal length join two racks), hosts of `cores` cores on 100 Mbps links, 1 Gbps between
    switches, static priority by class; control and video may share a link, bulk stays apart."""
    hosts = [f"H{leaf + 1}{h + 1}" for leaf in range(leaves) for h in range(hosts_per_leaf)]
    links = [
        {"from": f"L{leaf + 1}", "to": f"S{s + 1}", "rate": "1Gbps"}
        for leaf in range(leaves)
        for s in range(spines)
    ]
    links += [{"from": h, "to": f"L{h[1]}"} for h in hosts]
    network = {
        "name": "leaf-spine",
        "defaults": {"link_rate": "100Mbps", "technological_latency": "10us", "scheduler": "static_priority"},
        "classes": [{"name": n, "priority": p} for n, p in CLASSES],
        "end_systems": [{"name": h} for h in hosts],
        "switches": [{"name": f"L{i + 1}"} for i in range(leaves)]
        + [{"name": f"S{i + 1}"} for i in range(spines)],
        "links": links,
    }
    return {
        "network": network,
        "hosts": [{"name": h, "cores": cores} for h in hosts],
        "compatible_classes": [["control", "video"], ["bulk"]],
        "paths": 3,
        "method": "tfa",
    }


def requests(n: int, seed: int, mean_gap: float = 1.0, mean_lifetime: float = 20.0) -> dict:
    """`n` VSN requests, Poisson arrivals (mean gap `mean_gap` s), exponential lifetimes; 2 to 4
    components in a chain, utilisation 0.05 to 0.5 each; links of 1 to 30 Mbps with a latency
    limit of 0.2 to 2 ms (jitter limit the same) and a class drawn 40 % control, 40 % video,
    20 % bulk. `n` within the `requests` limit (`--requests`)."""
    from rtnetlab import limits

    limits.check("requests", n, "--requests")
    rng = random.Random(seed)
    out = []
    t = 0.0
    for i in range(n):
        t += rng.expovariate(1 / mean_gap)
        k = rng.randint(2, 4)
        comps = [
            {
                "name": f"c{j}",
                "utilisation": round(rng.uniform(0.05, 0.5), 3),
                "period": rng.choice(["5ms", "10ms", "20ms"]),
            }
            for j in range(k)
        ]
        links = []
        for j in range(k - 1):
            latency = round(rng.uniform(200, 2000))
            links.append(
                {
                    "name": f"l{j}",
                    "from": f"c{j}",
                    "to": f"c{j + 1}",
                    "bandwidth": f"{rng.randint(1, 30)}Mbps",
                    "burst": "3000B",
                    "max_packet": "1500B",
                    "latency": f"{latency}us",
                    "jitter": f"{latency}us",
                    "class": rng.choices([c for c, _ in CLASSES], [0.4, 0.4, 0.2])[0],
                }
            )
        out.append(
            {
                "name": f"vsn{i + 1}",
                "arrival": f"{round(t * 1e6)}us",
                "lifetime": f"{max(1, round(rng.expovariate(1 / mean_lifetime) * 1e6))}us",
                "components": comps,
                "links": links,
            }
        )
    return {"requests": out}


#: Mean CPU demand of a request: 3 components of mean utilisation 0.275.
MEAN_DEMAND = 3 * 0.275


def offered_load(mean_gap: float, mean_lifetime: float, cores: int) -> float:
    """Mean CPU demand of the active VSNs over the cores (Little's law: lifetime / gap VSNs
    active on average)."""
    return mean_lifetime / mean_gap * MEAN_DEMAND / cores


def load_sweep(admit, requests_n: int, seed: int, loads=(0.25, 0.5, 0.75, 1.0, 1.5, 2.0)) -> list[dict]:
    """Acceptance ratio against offered load: the same arrivals, lifetimes scaled."""
    infra = infrastructure()
    cores = sum(h["cores"] for h in infra["hosts"])
    rows = []
    for load in loads:
        lifetime = load * cores / MEAN_DEMAND
        report = admit(infra, requests(requests_n, seed, 1.0, lifetime))
        rows.append(
            {
                "offered_load": load,
                "acceptance_ratio": report["acceptance_ratio"],
                "rejected_by": report["rejected_by"],
            }
        )
    return rows


def sweep_png(rows: list[dict], title: str) -> bytes:
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(
        [r["offered_load"] for r in rows],
        [r["acceptance_ratio"] for r in rows],
        marker="o",
        label="heuristic",
    )
    ax.set_xlabel("offered CPU load (mean demand / cores)")
    ax.set_ylabel("acceptance ratio")
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()
