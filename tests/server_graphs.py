"""Server graphs written as descriptions for the tests (rate-latency servers, token-bucket flows)."""

from __future__ import annotations

from pathlib import Path


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


def packet_run(servers: list[tuple[float, float]], flows: list[tuple[float, float, list[int]]],
               offsets: list[float], horizon: float, gates: list[list[float]] | None = None,
               tail: int = -1, packets: int = 4) -> list[float]:
    """Each flow's largest packet delay in a packet-level run of a FIFO server graph, every flow
    greedy from its offset: its burst σ as `packets` packets at once, then one every (σ/packets)/ρ
    (a token-bucket (σ, ρ) arrival). Server j serves in arrival order (flow `tail` last among
    simultaneous arrivals) at rate R_j: packet k finishes at F_k. It hands a packet on at the
    first of its gate times in [F_k, F_k + T_j − L_max/R_j], at the end of that interval if none,
    and never before the packet ahead: each packet within T_j − L_max/R_j of its fluid finish, so
    the server offers R_j·[t − T_j]^+ (as tests/test_fifo_lp.py's lazy servers, which are the
    case without gates: `gates` None), and the gates let it hold traffic and release it at once, the bursts
    that grow downstream. Servers are numbered in an order of the flows' paths."""
    arrivals: list[list[tuple[float, int, int]]] = [[] for _ in servers]
    size = [b / packets for b, _, _ in flows]
    released: dict[tuple[int, int], float] = {}
    for f, ((_, r, path), o) in enumerate(zip(flows, offsets, strict=True)):
        k, t = 0, o
        while t <= o + horizon:
            released[(f, k)] = t
            arrivals[path[0]].append((t, f, k))
            k += 1
            t = o if k < packets else o + (k - packets + 1) * size[f] / r
    worst = [0.0] * len(flows)
    for j, (rate, latency) in enumerate(servers):
        hold = latency - max((size[f] for _, f, _ in arrivals[j]), default=0.0) / rate
        assert hold >= 0
        opens = sorted(gates[j]) if gates else []
        free, ahead, g = float("-inf"), float("-inf"), 0
        for t, f, k in sorted(arrivals[j], key=lambda a: (a[0], a[1] == tail, a[1], a[2])):
            free = max(free, t) + size[f] / rate
            while g < len(opens) and opens[g] < free:
                g += 1
            out = opens[g] if g < len(opens) and opens[g] <= free + hold else free + hold
            ahead = out = max(out, ahead)
            path = flows[f][2]
            nxt = path.index(j) + 1
            if nxt < len(path):
                arrivals[path[nxt]].append((out, f, k))
            else:
                worst[f] = max(worst[f], out - released[(f, k)])
    return worst
