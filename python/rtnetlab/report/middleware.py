"""The middleware laboratory's HTML page: one experiment's results (the JSON of `rtnetlab
middleware pubsub|partitions|reqresp|cwalker`) as its plots (report/plots/middleware.py) and its
table, assembled by ``templates/middleware.html.j2``; self-contained like the network report.
"""

from __future__ import annotations

from rtnetlab.errors import UserError

#: What the rows of each experiment are told apart by (the results carry no name of their own
#: before `experiment` was added: the rows' keys say it).
KINDS = {"pubsub": "subscribers", "partitions": "scenario", "reqresp": "server", "cwalker": "mapping"}
TITLES = {
    "pubsub": "publish/subscribe latency (seed 001A)",
    "partitions": "partitioned DDS: request/response round trip (seed 001B)",
    "reqresp": "request/response on a native and a virtualised server (seed 001C)",
    "cwalker": "cognitive walker: latency at AVI (seed 001A, Table I)",
}
STATS = ("count", "min_us", "mean_us", "stdev_us", "p99_us", "max_us")
LABELS = {
    "pubsub": ("backend", "subscribers", "payload_bytes", "placement"),
    "partitions": ("scenario",),
    "reqresp": ("backend", "server", "payload_bytes", "busy_us"),
    "cwalker": ("backend", "mapping", "placement"),
}


def kind_of(result: dict, where: str) -> str:
    """The experiment of a results document; a UserError naming `where` when it is none."""
    if not isinstance(result, dict) or not isinstance(result.get("rows"), list) or "host" not in result:
        raise UserError(f'{where}: not middleware results (expected {{"host": ..., "rows": [...]}})')
    kind = result.get("experiment")
    if kind in KINDS:
        return kind
    for kind, key in KINDS.items():
        if result["rows"] and all(isinstance(r, dict) and key in r for r in result["rows"]):
            return kind
    raise UserError(f"{where}: rows of no known middleware experiment (pubsub, partitions, reqresp, cwalker)")


def _cell(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:,.1f}"
    return str(v)


def _figures(kind: str, result: dict) -> list[dict]:
    from rtnetlab.report.plots import middleware as plots

    rows = result["rows"]
    figs = []
    if kind == "pubsub":
        figs.append(
            {
                "id": "vs-subscribers",
                "title": "Latency against the number of subscribers",
                "svg": plots.plot_vs_subscribers(rows),
                "caption": "Per payload size, per backend: mean (solid) and p99 (dashed) from a message's "
                "generation to its arrival at each subscriber.",
            }
        )
        figs.append(
            {
                "id": "vs-payload",
                "title": "Latency against the payload size",
                "svg": plots.plot_vs_payload(rows),
                "caption": "Per subscriber count, per backend: mean (solid) and p99 (dashed); the payload "
                "on a log scale.",
            }
        )
        figs.append(
            {
                "id": "cdf",
                "title": "Latency CDFs per backend",
                "svg": plots.plot_cdfs(
                    rows, "backend", lambda r: f"{r['subscribers']} sub, {r['payload_bytes']:,} B"
                ),
                "caption": "Per backend, one line per subscriber count and payload size: the fraction of the "
                "row's samples at or below a latency (from its quantile sketch: every percent, 99.5, 99.9, "
                "99.99 % and the maximum).",
            }
        )
    elif kind == "partitions":
        if result.get("windows_us") and result.get("major_frame_us"):
            figs.append(
                {
                    "id": "timeline",
                    "title": "Partition windows and a request's path",
                    "svg": plots.plot_partition_timeline(result),
                    "caption": "The routing and recorder windows over the major frames a request needs; red: "
                    "the analysis's worst request on node 2 (routing → recorder → routing, each stage the "
                    "bound's work, from the worst arrival phase); black: the slowest measured request of "
                    "the partitioned scenario, from its send phase in the dispatcher's frame to its reply."
                    + (
                        ""
                        if result.get("analysis")
                        else " The routed scenarios were not both measured: no request is drawn."
                    ),
                }
            )
        figs.append(
            {
                "id": "cdf",
                "title": "Round-trip CDFs per scenario",
                "svg": plots.plot_cdfs(rows, "scenario", lambda r: f"{r['count']:,} round trips"),
                "caption": "Per scenario: the fraction of round trips at or below a latency "
                "(quantile sketch).",
            }
        )
    elif kind == "reqresp":
        figs.append(
            {
                "id": "cdf",
                "title": "Round-trip CDFs per backend",
                "svg": plots.plot_cdfs(
                    rows,
                    "backend",
                    lambda r: f"{r['server']}, {r['payload_bytes']} B, busy {r['busy_us']:g} µs",
                ),
                "caption": "Per backend (icmp-echo and udp-echo: the baselines without middleware), "
                "one line per server, payload and busy time (quantile sketch).",
            }
        )
    else:
        figs.append(
            {
                "id": "cdf",
                "title": "Latency CDFs per backend",
                "svg": plots.plot_cdfs(rows, "backend", lambda r: f"M{r['mapping']}"),
                "caption": "Per backend, one line per mapping: latency at AVI (quantile sketch).",
            }
        )
    return figs


def _pct(x) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def _tables(kind: str, result: dict) -> list[dict]:
    """What the terminal and the JSON show beside the results' table: reqresp's derived ratios,
    pubsub's ddsperf cross-check, every row's warnings."""
    tables = []
    if kind == "reqresp" and result.get("ratios"):
        cols = [
            ("payload_bytes", "payload B", _cell),
            ("busy_us", "busy µs", _cell),
            ("dds_overhead", "dds overhead", _pct),
            ("udp-echo_overhead", "udp-echo overhead", _pct),
            ("icmp-echo_overhead", "icmp-echo overhead", _pct),
            ("middleware_share_native", "middleware share, native", _pct),
            ("middleware_share_virtualised", "middleware share, virtualised", _pct),
            ("dds_deadline_share_10ms", "dds deadline share, 10 ms", _pct),
            ("dds_deadline_share_100ms", "100 ms", _pct),
            ("dds_deadline_share_1000ms", "1 s", _pct),
        ]
        tables.append(
            {
                "id": "ratios",
                "title": "Derived ratios (on the means)",
                "columns": [c[1] for c in cols],
                "rows": [[f(d.get(k)) for k, _, f in cols] for d in result["ratios"]],
                "note": "overhead = (T_virt − T_native) / T_native; middleware share = (T_mw − T_ideal) / "
                "T_mw; deadline share = (T_virt − T_native) / D.",
            }
        )
    cross = result.get("ddsperf")
    if kind == "pubsub" and cross is not None:
        if cross.get("available"):
            rows = [
                [_cell(c["payload_bytes"]), _cell(c["rtt_mean_us"]), _cell(c["one_way_mean_us"]),
                 _cell(c.get("rtt_p99_us")), _cell(c.get("rtt_max_us"))]
                for c in cross.get("rows", [])
            ]  # fmt: skip
            note = "Cyclone's own C ping/pong with the same configuration: half its round trip is " \
                "comparable to the dds rows' one-way latency."
        else:
            rows, note = [], f"ddsperf not run: {cross.get('reason')}"
        tables.append(
            {
                "id": "ddsperf",
                "title": "Native cross-check: ddsperf (µs)",
                "columns": ["payload B", "round trip mean", "one way mean", "round trip p99",
                            "round trip max"],  # fmt: skip
                "rows": rows,
                "note": note,
            }
        )
    warned = [(r, w) for r in result["rows"] for w in r.get("warnings", [])]
    if warned:
        from rtnetlab.middleware.rows import row_name

        tables.append(
            {
                "id": "warnings",
                "title": "Warnings per row",
                "columns": ["row", "warning"],
                "rows": [[row_name(r), w] for r, w in warned],
                "note": "",
            }
        )
    return tables


#: Columns a row has only in some runs (two boards, the verdict of the partitioned scenario).
OPTIONAL = {
    "pubsub": ("offered_mbps", "link_mbps", "overloaded", "bypassed"),
    "partitions": ("bound_us", "undisturbed", "undisturbed_max_us", "allowance_us", "verdict"),
}


def render(result: dict, where: str = "results") -> str:
    """The page of one experiment's results."""
    from rtnetlab.middleware.rows import host_line
    from rtnetlab.report.page import _environment

    kind = kind_of(result, where)
    labels = LABELS[kind]
    optional = [c for c in OPTIONAL.get(kind, ()) if any(c in r for r in result["rows"])]
    if kind == "partitions" and "bound_us" not in optional:
        optional.insert(0, "bound_us")
    columns = [*labels, *STATS, *optional]
    rows = [[_cell(r.get(c)) for c in columns] for r in result["rows"]]
    return (
        _environment()
        .get_template("middleware.html.j2")
        .render(
            title=f"rtnetlab middleware: {TITLES[kind]}",
            host=host_line(result["host"]),
            skipped=result.get("skipped", []),
            figures=_figures(kind, result),
            columns=columns,
            rows=rows,
            tables=_tables(kind, result),
            source=f"Source: {where}.",
        )
    )
