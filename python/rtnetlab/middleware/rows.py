"""How the middleware laboratory names its rows and its host in tables and pages: shared by its
command line (middleware/cli.py) and the report's middleware page (report/middleware.py), which
imports them from here, not from the command line."""

from __future__ import annotations


def figure(x) -> str:
    """A figure in microseconds with one decimal, `-` when there is none."""
    return "-" if x is None else f"{x:,.1f}"


def row_name(r: dict) -> str:
    """A row as its table names it."""
    parts = [r.get("backend") or r.get("scenario") or ""]
    if "subscribers" in r:
        parts.append(f"{r['subscribers']} sub, {r['payload_bytes']} B")
    if "mapping" in r:
        parts.append(f"M{r['mapping']}")
    if "server" in r:
        parts.append(f"{r['server']}, {r['payload_bytes']} B, busy {r['busy_us']:g} us")
    return " ".join(p for p in parts if p)


def host_line(h: dict) -> str:
    noise = (
        f"timer noise max {figure(h.get('noise_us'))} us (p99 {figure(h.get('noise_p99_us'))} us)"
        if "noise_us" in h
        else "no noise probe"
    )
    sched = "; " + ", ".join(h["scheduling"]) if h.get("scheduling") else ""
    return f"host: Linux {h['kernel']}, {h['cpus']} CPUs; {noise}{sched}"
