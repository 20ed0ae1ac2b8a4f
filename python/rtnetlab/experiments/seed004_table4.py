"""Seed 004's Table 4: the network sporadic server's CPU overhead, by simulation."""

from __future__ import annotations

import json

from rtnetlab.errors import UserError


def nss_overhead(gaps_ms: list[int], budgets: list[int], packets: int = 1000, seeds: int = 20) -> list[dict]:
    """Seed 004's Table 4: the network sporadic server's CPU overhead (%) per mean inter-arrival
    gap and budget, by simulation of rules 1-4 with the paper's costs."""
    from rtnetlab import _core

    try:
        return json.loads(_core.nss_overhead_json(gaps_ms, budgets, packets, seeds))
    except ValueError as e:
        raise UserError(str(e)) from None
