"""Exact fluid trajectories of FIFO server graphs (rate-latency servers, token-bucket flows), in
plain Python and independent of the engine: a soundness check for delay bounds that holds for
every latency, T = 0 included (a packet-level run cannot offer R·[t − T]^+ with T < L_max/R).

**Traffic.** Every cumulative function is piecewise linear with jumps, so a flow's traffic at a
server's input is kept as *parcels* (t0, t1, amount, s0, s1): `amount` arrives at a constant
rate over [t0, t1] (all at once where t0 = t1), and its first and last fluid left the source at
s0 and s1 (the source date is linear in the amount within a parcel: every operation below cuts
parcels at amount fractions and interpolates). A greedy token bucket (σ, ρ) released at offset o
is the parcels (o, o, σ) and (o, o + H, ρ·H), H the horizon: less traffic than the bucket allows
after o + H is still a trajectory of the bucket.

**A server** of rate R and latency T. Its input, merged over flows and cut at every parcel
boundary and gate date, is a sequence of aggregate parcels in FIFO order: what jumps in at τ,
then what arrives continuously over (τ, τ'), mixed in proportion (fluid arriving at the same
instant leaves at the same instant). What jumps in at τ from one origin (the server before, or a
flow's source) keeps the order in which it left there: a server that releases a backlog at once
sends it in its FIFO order, as a link would. Between origins the order is the adversary's: the
`tail` flow's origin last. (Breaking ties arbitrarily within one origin's burst too would let a
bit overtake, at the next server, bits that arrived at the previous one after it: a FIFO server
defined by arrival dates alone allows it, no link does, and `fifo-lp` does not cover it; see
docs/ANALYSIS.md.) The work-conserving fluid queue of rate R serves the aggregate amount X at
w(X) = sup_{Y ≤ X} a(Y) + (X − Y)/R (a(Y) the arrival date of amount Y; Lindley's recursion),
which on a parcel [X0, X0 + m] arriving over [a0, a1] is max(w(X0) + y/R, a0 + y/R, a(X0 + y)):
piecewise linear in y. The server lets amount X go at

    dep(X) = min(w(X) + T, g(a(X)), a(X) + c),

g(a) the first of the server's gate dates at or after a (none: +∞), c ≥ T a hold (+∞: none;
c = T: a pure delay line, which passes bursts on unchanged). So D(t) ≥ (A ⊗ β)(t) for
β = R·[t − T]^+ (w(X) + T is the departure of the lazy server, whose output is exactly A ⊗ β:
the queue of rate R delayed by T), D ≤ A (dep(X) ≥ a(X)), and dep is non-decreasing in X (FIFO).
Without gates nor hold the server is lazy (it serves exactly its service curve); a gate lets it
release at once everything it holds, a hold lets it pass bursts on: the bursts that grow
downstream. All realise the service curve, so every trajectory here is one the bounds must
cover.

Everything is exact up to floating-point rounding: every delay is taken at parcel ends, where
the delay (departure − source date, linear in the amount within a parcel) reaches its maximum.
"""

from __future__ import annotations

from bisect import bisect_left

INF = float("inf")

# (t0, t1, amount, s0, s1, origin, position): origin the server it comes from (-1 - f: flow f's
# source), position where it was in that server's output order
Parcel = tuple[float, float, float, float, float, int, float]


def topological(n: int, paths: list[list[int]]) -> list[int]:
    """An order of the servers in which every flow goes forward (the graph is feed-forward)."""
    succ: list[set[int]] = [set() for _ in range(n)]
    for p in paths:
        for a, b in zip(p, p[1:], strict=False):
            succ[a].add(b)
    indeg = [0] * n
    for s in succ:
        for b in s:
            indeg[b] += 1
    ready = [j for j in range(n) if indeg[j] == 0]
    out = []
    while ready:
        j = ready.pop(0)
        out.append(j)
        for b in sorted(succ[j]):
            indeg[b] -= 1
            if indeg[b] == 0:
                ready.append(b)
    assert len(out) == n, "cyclic server graph"
    return out


class Trajectory:
    """One fluid trajectory: per flow its worst delay (`delay`), and per server the dates at
    which its fluid queue became busy (`busy_starts`) and every date at which some flow's
    parcel arrived there (`arrivals`, per flow), the events a search aligns offsets and gates to;
    per server its input and output parcels per flow (`io`), to check the run itself."""

    def __init__(self, n_servers: int, n_flows: int) -> None:
        self.delay = [0.0] * n_flows
        self.busy_starts: list[list[float]] = [[] for _ in range(n_servers)]
        self.arrivals: list[list[list[float]]] = [[[] for _ in range(n_flows)] for _ in range(n_servers)]
        self.io: list[tuple[dict, dict]] = [({}, {}) for _ in range(n_servers)]


def serve(rate: float, latency: float, gates: list[float], hold: float, inputs: dict[int, list[Parcel]],
          tail: int, busy: list[float], name: int, keep_order: bool = True) -> dict[int, list[Parcel]]:
    """The output parcels of every flow of one FIFO server `name` (see the module's text;
    `keep_order` False: what jumps in at one date is ordered by flow alone, the tail last)."""
    cuts = sorted({t for parcels in inputs.values() for p in parcels for t in (p[0], p[1])}
                  | set(gates))
    # Per cut date: the blocks that jump in at it, by (origin, position there), and the block
    # that arrives over the interval after it; a block's pieces (flow, amount, s0, s1) are mixed.
    bursts: list[dict[tuple, list]] = [{} for _ in cuts]
    spans: list[list[tuple[int, float, float, float]]] = [[] for _ in cuts]
    tail_origin = (inputs[tail][0][5] if keep_order else -1 - tail) if tail in inputs else None
    # Rounding's crumbs (a slice between two dates that differ in the last bit) carry no delay
    # and could break a flow's order: amounts below `crumb` are dropped.
    crumb = 1e-12 * sum(p[2] for parcels in inputs.values() for p in parcels)
    for f, parcels in inputs.items():
        for t0, t1, m, s0, s1, origin, seq in parcels:
            if m <= crumb:
                continue
            if t1 == t0:
                key = (origin, seq) if keep_order else (-1 - f, f, seq)
                bursts[bisect_left(cuts, t0)].setdefault(key, []).append((f, m, s0, s1))
                continue
            i, j = bisect_left(cuts, t0), bisect_left(cuts, t1)
            for k in range(i, j):
                a, b = (cuts[k] - t0) / (t1 - t0), (cuts[k + 1] - t0) / (t1 - t0)
                if m * (b - a) > crumb:
                    spans[k].append((f, m * (b - a), s0 + (s1 - s0) * a, s0 + (s1 - s0) * b))
    out: dict[int, list[Parcel]] = {f: [] for f in inputs}
    w_prev = -INF  # work-conserving departure of the amount served so far (without latency)
    served = 0.0  # the amount served so far: the position of the output in this server's order
    for k, tau in enumerate(cuts):
        # What jumps in at tau: one origin's blocks keep that origin's order (they left it in
        # that order); the origins' order is the adversary's, the tail flow's origin last.
        keys = sorted(bursts[k], key=lambda key: (key[0] == tail_origin, str(key[0]), key[1]))
        after = cuts[k + 1] if k + 1 < len(cuts) else tau
        parcels = [([bursts[k][key]], tau, tau) for key in keys] + [([spans[k]], tau, after)]
        for blocks, a0, a1 in parcels:
            m = sum(p[1] for block in blocks for p in block)
            if m <= 0:
                continue
            if w_prev < a0:
                busy.append(a0)
            # the first gate at or after every arrival of the parcel (its arrivals lie in (a0, a1],
            # or at a0 for a burst; no gate inside (a0, a1): gates are cut dates)
            gi = bisect_left(gates, a1)
            gate = gates[gi] if gi < len(gates) else INF
            lines = [(w_prev, 1 / rate), (a0, 1 / rate), (a0, (a1 - a0) / m)]
            ys = {0.0, m}
            for i, (c1, k1) in enumerate(lines):
                for c2, k2 in lines[i + 1:]:
                    if k1 != k2 and c1 > -INF and c2 > -INF:
                        ys.add((c2 - c1) / (k1 - k2))
                if c1 > -INF and gate < INF and k1 > 0:
                    ys.add((gate - latency - c1) / k1)  # where the gate overtakes the queue
            cap = (a0 + hold, (a1 - a0) / m)  # the delay line: the arrival date + hold
            if hold < INF:
                for c1, k1 in lines:
                    if c1 > -INF and k1 != cap[1]:
                        ys.add((cap[0] - c1 - latency) / (k1 - cap[1]))
                if gate < INF and cap[1] > 0:
                    ys.add((gate - cap[0]) / cap[1])
            ys_sorted = sorted(y for y in ys if 0.0 <= y <= m)

            def dep(y: float, lines: list = lines, gate: float = gate, cap: tuple = cap) -> float:
                return min(max(c + s * y for c, s in lines) + latency, gate, cap[0] + cap[1] * y)

            w_prev = max(c + s * m for c, s in lines)
            deps = [dep(y) for y in ys_sorted]
            for block in blocks:  # [start, start + mb] of the parcel, its pieces in proportion
                mb = sum(p[1] for p in block)
                for y0, y1, d0, d1 in zip(ys_sorted, ys_sorted[1:], deps, deps[1:], strict=False):
                    lo, hi = max(y0, 0.0), min(y1, mb)
                    if hi <= lo:
                        continue
                    e0 = d0 + (d1 - d0) * (lo - y0) / (y1 - y0)
                    e1 = d0 + (d1 - d0) * (hi - y0) / (y1 - y0)
                    la, lb = lo / mb, hi / mb
                    for f, pm, s0, s1 in block:
                        if pm * (lb - la) <= crumb:
                            continue
                        out[f].append((e0, e1, pm * (lb - la), s0 + (s1 - s0) * la, s0 + (s1 - s0) * lb,
                                       name, served + lo))
                ys_sorted = [y - mb for y in ys_sorted]
                served += mb
    return out


def fluid_run(servers: list[tuple[float, float]], flows: list[tuple[float, float, list[int]]],
              offsets: list[float], horizon: float, gates: list[list[float]] | None = None,
              tail: int = -1, keep_order: bool = True, holds: list[float] | None = None,
              jumps: list[list[tuple[float, float]] | None] | None = None) -> Trajectory:
    """A fluid trajectory of the server graph: server j of rate R_j and latency T_j (any T_j ≥ 0)
    releasing at its gate dates `gates[j]` and holding no bit longer than `holds[j]` ≥ T_j (none,
    and +∞: lazy), every flow (σ, ρ, path) greedy from its
    offset until offset + `horizon`, flow `tail` last among simultaneous arrivals (from other
    origins; with `keep_order` False, among all of them). A flow with `jumps[f]` sends instead
    those (date after its offset, amount) at once each (a staircase's greedy trajectory)."""
    n = len(servers)
    traj = Trajectory(n, len(flows))
    at: list[dict[int, list[Parcel]]] = [{} for _ in range(n)]
    for f, ((sigma, rho, path), o) in enumerate(zip(flows, offsets, strict=True)):
        if jumps and jumps[f] is not None:
            at[path[0]][f] = [(o + t, o + t, m, o + t, o + t, -1 - f, float(k))
                              for k, (t, m) in enumerate(jumps[f]) if t <= horizon]
            continue
        at[path[0]][f] = [(o, o, sigma, o, o, -1 - f, 0.0),
                          (o, o + horizon, rho * horizon, o, o + horizon, -1 - f, 1.0)]
    for j in topological(n, [p for _, _, p in flows]):
        if not at[j]:
            continue
        for f, parcels in at[j].items():
            traj.arrivals[j][f] = sorted({t for p in parcels for t in (p[0], p[1])})
        rate, latency = servers[j]
        out = serve(rate, latency, sorted(gates[j]) if gates else [], holds[j] if holds else INF, at[j],
                    tail, traj.busy_starts[j], j, keep_order)
        traj.io[j] = (at[j], out)
        for f, parcels in out.items():
            path = flows[f][2]
            i = path.index(j)
            if i + 1 < len(path):
                at[path[i + 1]][f] = parcels
            else:
                traj.delay[f] = max([traj.delay[f]] + [max(p[0] - p[3], p[1] - p[4]) for p in parcels])
    return traj
