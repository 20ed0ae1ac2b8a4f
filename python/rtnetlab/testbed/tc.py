"""Linux traffic control for the model's egress ports: kernel-mode ports and switches of a testbed
run, and the script `rtnetlab export tc` writes for a real end system.

A port is an HTB tree. Class 1:1 is the link: its rate and ceiling are the link rate. HTB lets a
class send while its tokens are not negative, then charges the frame (they may go below zero): so
its bucket holds only `SLACK_NS` of the link (wall clock), and after idle one frame leaves at once
and each next one when the previous one's transmission is over, less that slack at most: the port
serialises at the line rate (veth has no rate of its own). A bucket of one frame, as the model's
shapers are written, lets two frames out back to back after idle; a bucket of nothing loses HTB's
timer lateness from every frame's slot (a saturated 100 Mbit/s port then carried 89 % of it
here). With a token-bucket shaper 1:1's rate is the shaper's and its bucket the shaper's burst
less one largest frame (a frame passes HTB with any non-negative tokens, the model's shaper needs
the frame's own), its ceiling the link's. HTB counts a frame as its length without FCS plus
``overhead 24`` (FCS, preamble, start delimiter,
inter-frame gap): exactly the frame's time on the wire. A FIFO port has one bfifo under 1:1, of the model's
buffer. A static-priority port has one leaf per priority level (HTB ``prio`` 0..7, highest first),
each with a tiny guaranteed rate (1/1000 of the link's) and the link as ceiling, so they borrow
from 1:1 in priority order; u32 filters send a frame to its level by its class field (the IPv4
TOS byte, DSCP = class index + 1), frames without a class to the last level.

What differs from the model (docs/TESTBED.md): a kernel port releases a frame at the start of its
transmission slot and the veth delivers it at once, where the model's frame reaches the next hop
at the end of its transmission, after the link's propagation and the switch's technological
latency; this kernel has no qdisc that holds a lone frame (netem, fq, etf), so a switch latency
is refused (`run.check_limits`) unless the run asks for it to be added, and the transmissions and
propagation are added at the destination, from each frame's size (`crates/testbed/src/node.rs`),
the figures labelled "measured + modelled latency added"; a level's guaranteed rate
lets it pass a higher level at most once per 1000 frame times; a static-priority port's buffer is
per level.

The script of `export tc` keeps ARINC 664's rule for every VL: a class at Lmax per BAG whose
bucket holds nothing and where every frame counts as Lmax (``mpu``): after idle one frame leaves,
the next one a BAG later, whatever their sizes.
"""

from __future__ import annotations

import shlex
import unicodedata

from rtnetlab import _core

#: Per-frame bytes HTB adds to a frame's length without FCS: FCS 4 + preamble, SFD and gap 20.
OVERHEAD = 4 + _core.INTERFRAME_BYTES
#: A bfifo standing for an unbounded buffer.
UNBOUNDED_BYTES = 1 << 30
#: A static-priority leaf's guaranteed share of its link (its rate, below which it is served
#: before borrowing leaves whatever their priority).
LEAF_SHARE = 1e-3


def _rate(bps: float) -> str:
    return f"{max(8, round(bps))}bit"


def _bytes(b: float) -> str:
    return f"{max(1, round(b))}b"


#: HTB's least bucket (it shows as 0b): a class sends while its tokens are not negative.
EMPTY = "1b"
#: Wall-clock ns of the link a port's bucket holds: what HTB's timer may be late by (about 10 us
#: on this host under load) without the port losing it; a frame may leave this much early.
SLACK_NS = 20_000


def _slack(rate_bps: float) -> str:
    """The bucket of `SLACK_NS` at `rate_bps` (wall clock)."""
    return _bytes(rate_bps * SLACK_NS / 8e9)


def _deficit(burst: float, frame: float) -> str:
    """HTB's bucket for a token bucket of `burst` bytes whose largest frame is `frame` bytes: HTB
    passes a frame on any non-negative tokens, the model's bucket on the frame's own."""
    return _bytes(burst - frame) if burst > frame + 1 else EMPTY


def port_lines(dev: str, port: dict, time_scale: float = 1.0) -> list[str]:
    """`tc` batch lines (without the leading `tc`) configuring `port` (a plan port with its
    `kernel` levels) on interface `dev`, its rates divided by `time_scale` (a dilated run)."""
    kernel = port["kernel"]
    if "Err" in kernel:
        raise ValueError(kernel["Err"])
    levels = kernel["Ok"]["levels"]
    n = ""
    link = port["rate_bps"] / time_scale
    frame = port["max_frame_bytes"] + _core.INTERFRAME_BYTES
    shaper = port.get("shaper")
    rate = shaper["rate_bps"] / time_scale if shaper else link
    # Deficit: HTB passes a frame on non-negative tokens, the model's shaper on the frame's own.
    burst = _deficit(shaper["burst_bits"] / 8, frame) if shaper else EMPTY
    buffer = port["buffer_bytes"] if port.get("buffer_bytes") is not None else UNBOUNDED_BYTES
    last = 10 + len(levels) - 1
    slack = _slack(link)
    if burst == EMPTY:
        burst = _slack(rate)
    lines = [
        f"{n}qdisc add dev {dev} root handle 1: htb default {last if len(levels) > 1 else 1} r2q 1",
        f"{n}class add dev {dev} parent 1: classid 1:1 htb rate {_rate(rate)} ceil {_rate(link)} "
        f"burst {burst} cburst {slack} overhead {OVERHEAD}",
    ]
    if len(levels) == 1:
        lines.append(f"{n}qdisc add dev {dev} parent 1:1 handle 2: bfifo limit {round(buffer)}")
        return lines
    for i, dscps in enumerate(levels):
        cls = f"1:{10 + i}"
        lines.append(
            f"{n}class add dev {dev} parent 1:1 classid {cls} htb rate {_rate(link * LEAF_SHARE)} "
            f"ceil {_rate(link)} burst {EMPTY} cburst {slack} prio {i} "
            f"quantum {frame} overhead {OVERHEAD}"
        )
        lines.append(f"{n}qdisc add dev {dev} parent {cls} handle {20 + i}: bfifo limit {round(buffer)}")
        for d in dscps:
            lines.append(
                f"{n}filter add dev {dev} parent 1: protocol ip prio 1 u32 "
                f"match ip tos {d << 2:#04x} 0xfc flowid {cls}"
            )
    return lines


def _vl_ip(frame_id: int) -> str:
    return f"224.224.{frame_id >> 8}.{frame_id & 0xFF}"


def switch_lines(plan: dict, switch: int, block: int = 1) -> list[str]:
    """A kernel-mode switch: every port's ingress in one shared filter block; each frame id's
    frames mirrored to every output port of its routes (multicast replicated) and redirected to
    the last."""
    ports = [p for p in plan["ports"] if p["node"] == switch]
    lines = [f"qdisc add dev {p['ifname']} ingress_block {block} clsact" for p in ports]
    for e in plan["forwarding"]:
        if e["switch"] != switch:
            continue
        outs = [plan["ports"][p]["ifname"] for p in e["out_ports"]]
        actions = " ".join(f"action mirred egress mirror dev {d}" for d in outs[:-1])
        actions += f" action mirred egress redirect dev {outs[-1]}"
        lines.append(
            f"filter add block {block} protocol ip prio 1 u32 "
            f"match ip dst {_vl_ip(e['frame_id'])}/32 {actions.strip()}"
        )
    # Frames of no route are left to the switch namespace's own stack, which has no use for them
    # (this kernel has no drop action).
    return lines


#: Longest interface name Linux accepts, in bytes (IFNAMSIZ less the terminating NUL).
IFNAMSIZ = 15


def interface_problem(name: str) -> str | None:
    """Why `name` cannot be a Linux interface name (the kernel's own rule, `dev_valid_name`, and
    no control characters), or None."""
    size = len(name.encode("utf-8", "surrogatepass"))
    if not 1 <= size <= IFNAMSIZ:
        return f"1 to {IFNAMSIZ} bytes, got {size}"
    if name in (".", ".."):
        return "not '.' or '..'"
    for ch in name:
        if ch in "/:" or ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            return f"no '/', ':', whitespace or control characters, got {ch!r}"
    return None


def comment(text: str) -> str:
    """`text` safe inside a `#` comment line: line breaks and other control characters written as
    escapes, so that nothing from a description or a path ends the comment."""
    out = []
    for ch in str(text):
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def export_script(plan: dict, node: str, dev: str, plane: str | None, source: str) -> tuple[str, list[str]]:
    """The shell script configuring end system `node`'s port on `plane` as interface `dev` of a
    real Linux host, and what it cannot express (also written in the script). Every value from
    outside (names, paths) is a comment, escaped by `comment`, except the interface, which is
    checked by `interface_problem` (ValueError) and quoted."""
    problem = interface_problem(dev)
    if problem is not None:
        raise ValueError(f"'{comment(dev)}' is not a network interface name ({problem})")
    names = [n["name"] for n in plan["nodes"]]
    if node not in names:
        raise KeyError(node)
    k = names.index(node)
    if not plan["nodes"][k]["end_system"]:
        raise ValueError(f"{node} is a switch: export tc configures end systems")
    plane_index = plan["planes"].index(plane) if plane is not None else 0
    port = next(
        (plan["ports"][p] for p in plan["nodes"][k]["ports"] if plan["ports"][p]["plane"] == plane_index),
        None,
    )
    if port is None:
        raise ValueError(f"{node} has no port on plane {plan['planes'][plane_index]}")
    unrun = port.get("shaper_without_qdisc")
    if unrun:
        # Half a configuration (HTB in place of the shapers) would not keep the model's bounds.
        raise ValueError(
            f"{node}'s port runs {unrun['what']} and this kernel has no {unrun['qdisc']}: no script written"
        )
    flows = [f for f in plan["flows"] if f["source"] == k and plane_index in f["planes"]]
    missing: list[str] = []
    link = port["rate_bps"]
    frame = port["max_frame_bytes"] + 20
    kernel = port["kernel"]
    levels = kernel["Ok"]["levels"] if "Ok" in kernel else [[]]
    if "Err" in kernel:
        missing.append(
            f"the port's scheduler ({port['discipline']}): {kernel['Err'].split(': ', 1)[-1]}; "
            "the script serves the VLs in FIFO order instead"
        )
    level_of = {d: i for i, ds in enumerate(levels) for d in ds}
    shaper = port.get("shaper")
    rate = shaper["rate_bps"] if shaper else link
    burst = _deficit(shaper["burst_bits"] / 8, frame) if shaper else EMPTY
    command = shlex.join(["rtnetlab", "export", "tc", source, "--node", node, "--dev", dev])
    # The interface as a literal word: `${DEV:-'...'}` unquoted is quote-removed, never expanded.
    literal = ["# shellcheck disable=SC2016  # the name is literal"] if "$" in dev or "`" in dev else []
    out = [
        "#!/bin/sh",
        f"# Linux traffic control for end system {comment(node)} (plane "
        f"{comment(plan['planes'][plane_index])}) of network {comment(plan['network'])},",
        f"# written by `{comment(command)}`.",
        "# Run as root on the end system; DEV=other-interface ./script.sh configures another interface.",
        "#",
        "# The port: HTB class 1:1 at the link rate (frame + 24 B per frame on the wire: FCS, preamble,",
        "# start delimiter, gap); under it one class per VL at its contract, (Lmax + 20 B) per BAG, chosen",
        "# by the VL's destination address (224.224.<VL id>). HTB sends while a class's tokens are not",
        "# negative: a VL's bucket holds nothing (burst 1b) and its frames all count as Lmax (mpu), so",
        "# after idle one frame leaves and the next one a BAG later (ARINC 664), whatever their sizes;",
        "# a token bucket's class holds its burst less one largest frame; the link's, 20 us of it",
        "# (what HTB's timer may be late by).",
        "set -e",
        *literal,
        f"DEV=${{DEV:-{shlex.quote(dev)}}}",
        'tc qdisc del dev "$DEV" root 2>/dev/null || true',
        'tc qdisc add dev "$DEV" root handle 1: htb default 2 r2q 1',
        f'tc class add dev "$DEV" parent 1: classid 1:1 htb rate {_rate(rate)} ceil {_rate(link)} '
        f"burst {burst if shaper else _slack(link)} cburst {_slack(link)} overhead {OVERHEAD}",
        "# The host's other traffic: last priority, what the VLs leave of the link.",
        f'tc class add dev "$DEV" parent 1:1 classid 1:2 htb rate {_rate(link * LEAF_SHARE)} '
        f"ceil {_rate(link)} burst {EMPTY} cburst {_slack(link)} prio 7 overhead {OVERHEAD}",
    ]
    for i, f in enumerate(flows):
        cls = f"1:{100 + i}"
        wire = f["lmax_bytes"] + 20
        if f["kind"] == "token_bucket":
            vl_rate, vl_burst = f["rate_bps"], f["burst_bits"] / 8
            # Deficit, as the port's: the class holds the burst less one largest frame.
            bucket = _deficit(vl_burst, wire)
            mpu, what = "", f"burst {vl_burst:g} B"
        else:
            vl_rate, vl_burst = wire * 8 / (f["period_ns"] / 1e9), wire
            bucket, mpu = EMPTY, f" mpu {int(wire)}"
            what = f"one frame per {f['period_ns'] / 1e6:g} ms, each counted as {int(wire)} B"
        prio = int(min(level_of.get(f["dscp"], len(levels) - 1), 7))
        out += [
            f"# {comment(f['name'])} ({comment(f['kind'])}, frame id {int(f['frame_id'])}): "
            f"{vl_rate / 1e6:.6g} Mbit/s, {what}, priority level {prio}",
            f'tc class add dev "$DEV" parent 1:1 classid {cls} htb rate {_rate(vl_rate)} '
            f"ceil {_rate(vl_rate)} burst {bucket} cburst {bucket} prio {prio} "
            f"quantum {int(wire)} overhead {OVERHEAD}{mpu}",
            f'tc qdisc add dev "$DEV" parent {cls} handle {100 + i}: bfifo limit '
            f"{round(port['buffer_bytes'] or UNBOUNDED_BYTES)}",
            f'tc filter add dev "$DEV" parent 1: protocol ip prio 1 u32 '
            f"match ip dst {_vl_ip(f['frame_id'])}/32 flowid {cls}",
        ]
    missing += [
        "sequence numbers, the second plane's copy and its skew: the AFDX stack's (or the application's)",
        "frames of the same priority level share the link round-robin by HTB quantum, not in arrival order",
    ]
    if len(flows) > 900:
        missing.append(f"{len(flows)} VLs: HTB class ids stop at 1:ffff")
    out.append("#")
    out.append("# Not expressed by this script:")
    out += [f"#  - {comment(m)}" for m in missing]
    return "\n".join(out) + "\n", missing
