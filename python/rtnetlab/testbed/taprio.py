"""A port's time-sensitive shapers for real devices: `rtnetlab export taprio` (a shell script of
Linux taprio, cbs, etf and mqprio qdiscs) and `rtnetlab export yang` (the gate control lists as an
IEEE 802.1Qcw YANG instance, ieee802-dot1q-sched-bridge, in JSON per RFC 7951).

Traffic classes. A port's classes are its priority levels (classes of one priority share a
queue), numbered as 802.1Q numbers traffic classes, a larger number a higher priority: with n
levels, the level of priority rank k (0 the highest) is traffic class n − 1 − k. Linux maps a
packet to a traffic class by its socket priority (SO_PRIORITY): the script maps priority t to
traffic class t (every other priority to traffic class 0, the lowest), and lists each class's
number in its comments. Each traffic class has one transmit queue, queue t for class t (NICs
whose queue 0 is the strictest need `queues` reversed).

Times. The gate list's times are ns; its base time is the description's `base_time` on the
TAI timescale: `BASE_TIME` (ns since the TAI epoch, default the description's, 0 unless given)
chooses another start. With base time 0 every device starts its cycles at whole multiples of
its cycle since the TAI epoch, so devices synchronised by 802.1AS (gPTP) open their windows at
the instants the synthesis computed, and a talker releases a stream's frames at whole multiples
of its period plus the stream's `offset`.
"""

from __future__ import annotations

import math
import shlex

from rtnetlab.testbed.tc import comment, interface_problem

#: `--offload`: what the script asks of the NIC.
OFFLOADS = ("none", "txtime", "full")

#: taprio's flags: 0x1 txtime-assist (the kernel sets each frame's launch time, which an etf
#: qdisc per queue and the NIC's launch-time feature honour), 0x2 full offload (the NIC runs the
#: gate list itself; i225/i226, some Microchip and NXP switches).
TAPRIO_FLAGS = {"txtime": "0x1", "full": "0x2"}

#: The time etf gives a frame before its launch time to reach the NIC (ns), and taprio's
#: txtime-delay in txtime-assist mode: the kernel's own default guidance for both is a few
#: hundred µs on a PC; it must exceed the host's wake-up lateness.
TXTIME_DELAY_NS = 200_000


def _ns(text: str) -> int:
    from rtnetlab import _core

    return round(_core.parse_quantity("duration", str(text)) * 1e9)


def _bps(text: str) -> float:
    from rtnetlab import _core

    return _core.parse_quantity("rate", str(text))


def port_of(resolved: dict, node: str, port: str | None) -> int:
    """The port index of `node` (its only port, or the one named `port`); KeyError or
    ValueError with the reason."""
    names = [n["name"] for n in resolved["nodes"]]
    if node not in names:
        raise KeyError(node)
    k = names.index(node)
    ports = resolved["nodes"][k]["ports"]
    if port is None:
        if len(ports) != 1:
            listed = ", ".join(resolved["ports"][p]["name"] for p in ports)
            raise ValueError(f"{node} has {len(ports)} ports ({listed}): name one with --port")
        return ports[0]
    for p in ports:
        if resolved["ports"][p]["name"] == port:
            return p
    raise ValueError(f"{node} has no port {port}")


def levels(resolved: dict) -> list[list[str]]:
    """The classes of each priority level, highest priority first."""
    prios = sorted({c["priority"] for c in resolved["classes"]})
    return [[c["name"] for c in resolved["classes"] if c["priority"] == p] for p in prios]


def traffic_class(resolved: dict) -> dict[str, int]:
    """Each class's traffic class (802.1Q: larger is higher priority)."""
    lv = levels(resolved)
    return {c: len(lv) - 1 - k for k, names in enumerate(lv) for c in names}


def _largest_frames(resolved: dict, p: int) -> dict[str, float]:
    """The largest frame on the wire (bits) of each class at port `p`."""
    names = [c["name"] for c in resolved["classes"]]
    out: dict[str, float] = {}
    for f in resolved["flows"]:
        if f["class"] is None or not any(p in r["ports"] for r in f["routes"]):
            continue
        c = names[f["class"]]
        out[c] = max(out.get(c, 0.0), f["max_frame_wire"])
    return out


def gate_list(discipline: dict, tc_of: dict[str, int]) -> tuple[int, int, list[tuple[int, int]]]:
    """(cycle ns, base time ns, [(gate mask, interval ns)]) of a `tas` discipline or of a `cbs`
    one's `gates`; the mask's bit t is traffic class t's gate."""
    g = discipline if discipline["kind"] == "tas" else discipline["gates"]
    entries = []
    for e in g["entries"]:
        mask = 0
        for c in e["open"]:
            mask |= 1 << tc_of[c]
        entries.append((mask, _ns(e["duration"])))
    return _ns(g["cycle"]), _ns(g.get("base_time", "0ns")), entries


def cbs_credits(rate: float, slopes: dict[str, float], tc_of: dict[str, int],
                frames: dict[str, float]) -> dict[str, tuple[float, float]]:
    """(hiCredit, loCredit) in bytes of each shaped class, 802.1Q Annex L as Linux's cbs takes them:
    loCredit = −L·(C − I)/C; hiCredit, for the highest shaped class, I·L_lo/C (L_lo the largest
    frame of a lower class), and for a class below shaped ones I·(L_lo/(C − ΣI_above) +
    ΣL_above/C) (Annex L's class-B form, summed over the classes above)."""
    out = {}
    shaped = sorted(slopes, key=lambda c: -tc_of[c])
    for k, c in enumerate(shaped):
        idle = slopes[c]
        lower = max((frames.get(o, 0.0) for o in tc_of if tc_of[o] < tc_of[c]), default=0.0)
        above = shaped[:k]
        if above:
            i_above = sum(slopes[a] for a in above)
            l_above = sum(frames.get(a, 0.0) for a in above)
            hi = idle * (lower / (rate - i_above) + l_above / rate)
        else:
            hi = idle * lower / rate
        lo = -frames.get(c, 0.0) * (rate - idle) / rate
        out[c] = (hi / 8, lo / 8)
    return out


def export_script(
    resolved: dict, node: str, port: str | None, dev: str, offload: str, source: str
) -> tuple[str, list[str]]:
    """The shell script configuring `node`'s port (`port`, or its only one) on interface `dev`,
    and what it cannot express (also in the script). Values from the description are numbers the
    script computes from, or comments escaped by `comment`; the interface is checked by
    `interface_problem` (ValueError) and quoted."""
    problem = interface_problem(dev)
    if problem is not None:
        raise ValueError(f"'{comment(dev)}' is not a network interface name ({problem})")
    if offload not in OFFLOADS:
        raise ValueError(f"--offload: expected none, txtime or full, got '{comment(offload)}'")
    p = port_of(resolved, node, port)
    pp = resolved["ports"][p]
    d = pp["discipline"]
    kind = d["kind"]
    gated = kind == "tas" or (kind == "cbs" and d.get("gates"))
    if kind not in ("tas", "cbs"):
        raise ValueError(
            f"{node}:{pp['name']} runs {kind}, not a time-aware or credit-based shaper: "
            "use `rtnetlab export tc`"
        )
    lv = levels(resolved)
    if len(lv) > 8:
        raise ValueError(f"{len(lv)} priority levels: 802.1Q and taprio have at most 8 traffic classes")
    n = len(lv)
    tc_of = traffic_class(resolved)
    rate = pp["rate"]
    frames = _largest_frames(resolved, p)
    notes: list[str] = []
    command = shlex.join(
        ["rtnetlab", "export", "taprio", source, "--node", node, "--dev", dev, "--offload", offload]
        + (["--port", port] if port is not None else [])
    )
    literal = ["# shellcheck disable=SC2016  # the name is literal"] if "$" in dev or "`" in dev else []
    out = [
        "#!/bin/sh",
        f"# Time-sensitive shapers of port {comment(node)}:{comment(pp['name'])} of network "
        f"{comment(resolved['spec']['name'])},",
        f"# written by `{comment(command)}`.",
        "# Run as root on the device; DEV=other-interface ./script.sh configures another interface,",
        "# BASE_TIME=ns (TAI) another start of the gate cycles.",
        "#",
        "# Traffic classes (802.1Q numbering: larger is higher priority); an application sends a",
        "# class's frames with SO_PRIORITY set to its traffic class:",
    ]
    for k, names in enumerate(lv):
        out.append(f"#   traffic class {n - 1 - k} (queue {n - 1 - k}): {comment(', '.join(names))}")
    skb_map = " ".join(str(t if t < n else 0) for t in range(16))
    queues = " ".join(f"1@{t}" for t in range(n))
    out += ["set -e", *literal, f"DEV=${{DEV:-{shlex.quote(dev)}}}"]
    if gated:
        cycle, base, entries = gate_list(d, tc_of)
        out += [
            f"BASE_TIME=${{BASE_TIME:-{int(base)}}}",
            f"# Gate control list: cycle {cycle} ns, {len(entries)} entries (gate mask: bit t opens traffic "
            "class t).",
        ]
        if kind == "tas" and d.get("scheduled"):
            out.append(f"# Scheduled (time-triggered) classes: {comment(', '.join(d['scheduled']))}.")
        out.append(
            "# taprio's software mode sends a frame only if it ends before its gate closes (a length-aware"
        )
        out.append("# guard band), as rtnetlab's model does.")
        lines = [
            'tc qdisc replace dev "$DEV" parent root handle 100 taprio \\',
            f"  num_tc {n} map {skb_map} \\",
            f"  queues {queues} \\",
            '  base-time "$BASE_TIME" \\',
        ]
        lines += [f"  sched-entry S {mask:02x} {interval} \\" for mask, interval in entries]
        if offload == "full":
            lines.append(f"  flags {TAPRIO_FLAGS['full']}")
        elif offload == "txtime":
            lines.append(f"  flags {TAPRIO_FLAGS['txtime']} txtime-delay {TXTIME_DELAY_NS} clockid CLOCK_TAI")
        else:
            lines.append("  clockid CLOCK_TAI")
        out += lines
        if len(entries) > 1024:
            notes.append(
                f"{len(entries)} gate entries: NICs and switches hold a limited number; check the device's"
            )
    else:
        out += [
            "# No gate list: mqprio gives each traffic class its queue.",
            f'tc qdisc replace dev "$DEV" parent root handle 100 mqprio num_tc {n} map {skb_map} '
            f"queues {queues} hw {1 if offload != 'none' else 0}",
        ]
    slopes = {c: _bps(v) for c, v in (d.get("idle_slopes") or {}).items()}
    if slopes:
        credits = cbs_credits(rate, slopes, tc_of, frames)
        for c in sorted(slopes, key=lambda x: -tc_of[x]):
            hi, lo = credits[c]
            idle_k = round(slopes[c] / 1e3)
            send_k = idle_k - round(rate / 1e3)
            out += [
                f"# {comment(c)}: idle slope {slopes[c] / 1e6:.6g} Mbit/s, credits by 802.1Q Annex L",
                f'tc qdisc replace dev "$DEV" parent 100:{tc_of[c] + 1} cbs idleslope {idle_k} '
                f"sendslope {send_k} hicredit {int(round(hi))} locredit {int(round(lo))} "
                f"offload {1 if offload != 'none' else 0}",
            ]
        notes.append(
            "Linux's cbs takes hiCredit and loCredit from Annex L; rtnetlab's analysis bounds the credit "
            "by its own (sound) hiCredit, which may be larger for a class below another shaped one"
        )
    if kind == "tas" and d.get("scheduled") and offload == "txtime":
        for c in d["scheduled"]:
            out.append(
                f'tc qdisc replace dev "$DEV" parent 100:{tc_of[c] + 1} etf clockid CLOCK_TAI '
                f"delta {TXTIME_DELAY_NS} offload skip_sock_check"
            )
        notes.append(
            "with txtime the talker's application sets each scheduled frame's launch time (SO_TXTIME) to its "
            "release: a whole multiple of the period plus the stream's offset, on the TAI timescale"
        )
    if offload == "none":
        notes.append(
            "software taprio opens the gates on the host's timers: expect tens of µs of lateness on a PC, "
            "more than a scheduled window widened by the sync error usually allows (use --offload full on a "
            "NIC with 802.1Qbv, or txtime with launch time)"
        )
    notes.append("clock synchronisation (802.1AS, e.g. linuxptp's ptp4l and phc2sys) is the host's")
    out.append("#")
    out.append("# Not expressed by this script:")
    out += [f"#  - {comment(m)}" for m in notes]
    return "\n".join(out) + "\n", notes


#: Module names of the YANG instance (RFC 7951 qualifies a member by its module's name).
IF = "ietf-interfaces"
BRIDGE = "ieee802-dot1q-bridge"
SCHED_BRIDGE = "ieee802-dot1q-sched-bridge"
SCHED = "ieee802-dot1q-sched"

#: Largest values of the instance's YANG integer types: uint32 (gate-control-entry's index and
#: time-interval-value, admin-cycle-time's numerator and denominator, admin-cycle-time-extension),
#: a PTP time's seconds (a uint64 whose upper 16 bits are zero, so below 2^48).
UINT32_MAX = 2**32 - 1
PTP_SECONDS_LIMIT = 2**48


def yang_entries(entries: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The gate list's (mask, interval ns) entries with every interval longer than a uint32 of
    ns (about 4.29 s) cut into consecutive entries of the same mask: setting the gates to the
    states they already hold changes nothing, so the list keeps its timing."""
    out = []
    for mask, interval in entries:
        while interval > UINT32_MAX:
            out.append((mask, UINT32_MAX))
            interval -= UINT32_MAX
        out.append((mask, interval))
    return out


def yang_instance(resolved: dict, node: str | None = None) -> dict:
    """The gate control lists of every gated port (of `node`, or of every node) as an instance of
    ieee802-dot1q-sched-bridge's gate-parameter-table under each interface's bridge-port (IEEE
    802.1Qcw-2023), in RFC 7951 JSON: the interface named `node:port`, the cycle as a rational
    number of seconds, the base time as PTP seconds (uint64, a string in JSON) and nanoseconds,
    one gate-control-entry per list entry (set-gate-states, the gate mask, the interval in ns).

    The device's own limits (supported-list-max, supported-cycle-max, supported-interval-max,
    which the module's constraints on the list compare it with) are left out: they describe the
    device, which reports them. A list the types cannot carry is refused (ValueError): more than
    8 traffic classes (the gate mask is a uint8), a cycle whose reduced fraction of a second has a
    numerator above uint32, a base time at or beyond 2^48 s."""
    tc_of = traffic_class(resolved)
    names = [n["name"] for n in resolved["nodes"]]
    if node is not None and node not in names:
        raise KeyError(node)
    interfaces = []
    for pp in resolved["ports"]:
        owner = names[pp["node"]]
        if node is not None and owner != node:
            continue
        d = pp["discipline"]
        if not (d["kind"] == "tas" or (d["kind"] == "cbs" and d.get("gates"))):
            continue
        where = f"{owner}:{pp['name']}"
        if len(tc_of) and max(tc_of.values()) > 7:
            raise ValueError(
                f"{where}: {max(tc_of.values()) + 1} priority levels: 802.1Q has at most 8 traffic classes "
                "(the gate mask is 8 bits)"
            )
        cycle, base, entries = gate_list(d, tc_of)
        g = math.gcd(cycle, 1_000_000_000)
        if cycle // g > UINT32_MAX:
            raise ValueError(
                f"{where}: cycle {cycle} ns is {cycle // g}/{1_000_000_000 // g} s, a numerator above "
                "uint32 (admin-cycle-time)"
            )
        if base < 0 or base // 1_000_000_000 >= PTP_SECONDS_LIMIT:
            raise ValueError(f"{where}: base time {base} ns is outside a PTP time (0 to 2^48 s)")
        table = {
            "gate-enabled": True,
            "admin-gate-states": 255,
            "admin-control-list": {
                "gate-control-entry": [
                    {
                        "index": i,
                        "operation-name": f"{SCHED}:set-gate-states",
                        "time-interval-value": interval,
                        "gate-states-value": mask,
                    }
                    for i, (mask, interval) in enumerate(yang_entries(entries))
                ]
            },
            "admin-cycle-time": {"numerator": cycle // g, "denominator": 1_000_000_000 // g},
            "admin-cycle-time-extension": 0,
            "admin-base-time": {"seconds": str(base // 1_000_000_000), "nanoseconds": base % 1_000_000_000},
            "config-change": True,
        }
        interfaces.append({
            "name": where,
            "type": "iana-if-type:ethernetCsmacd",
            f"{BRIDGE}:bridge-port": {f"{SCHED_BRIDGE}:gate-parameter-table": table},
        })
    return {f"{IF}:interfaces": {"interface": interfaces}}


def check_options(dev: str, offload: str) -> None:
    """`export taprio`'s options, checked before anything is read (the script runs as root)."""
    from rtnetlab.errors import UserError
    from rtnetlab.testbed import tc

    problem = tc.interface_problem(dev)
    if problem is not None:
        raise UserError(f"--dev: '{tc.comment(dev)}' is not a network interface name ({problem})")
    if offload not in OFFLOADS:
        raise UserError(f"--offload: expected none, txtime or full, got '{tc.comment(offload)}'")
