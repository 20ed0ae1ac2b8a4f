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
