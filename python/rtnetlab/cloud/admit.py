"""Seed 001F's admission of virtual service networks: reading the infrastructure and the
requests, running the engine's online admission, writing the decisions, the admitted state (an
ordinary description), per-host SCHED_DEADLINE parameters and the acceptance ratio over time."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from rtnetlab import _core
from rtnetlab.errors import UserError

NATIVE = (".yaml", ".yml", ".json")


def _read(path: Path, what: str) -> Any:
    from rtnetlab.io import formats

    if path.suffix.lower() not in NATIVE:
        raise UserError(f"{path}: {what} is a .yaml, .yml or .json file")
    return formats.read(path)


def read_infrastructure(path: Path) -> dict:
    """The infrastructure file; its `network` is a description inline or a file's path (relative
    to the infrastructure file)."""
    data = _read(path, "an infrastructure")
    if not isinstance(data, dict):
        raise UserError(f"{path}: an infrastructure is a mapping (network, hosts)")
    net = data.get("network")
    if isinstance(net, str):
        data["network"] = _read((path.parent / net), "a network description")
    return data


def read_requests(path: Path) -> dict:
    """The requests file; its number of requests within the `requests` limit."""
    from rtnetlab import limits

    data = _read(path, "a requests file")
    if not isinstance(data, dict):
        raise UserError(f"{path}: a requests file is a mapping with a list `requests`")
    if isinstance(data.get("requests"), list):
        limits.check("requests", len(data["requests"]), f"{path}: requests")
    return data


def admit(
    infra: dict,
    requests: dict,
    infra_name: str = "infrastructure",
    requests_name: str = "requests",
    incremental: bool = True,
) -> dict:
    """Runs the admission; a bad input is a UserError naming the file and the place.
    `incremental=False`: every trial loads and validates the whole description (the reference)."""
    try:
        return json.loads(_core.admit_json(json.dumps(infra), json.dumps(requests), incremental))
    except ValueError as e:
        which, message = e.args if len(e.args) == 2 else ("infrastructure", str(e))
        raise UserError(f"{infra_name if which == 'infrastructure' else requests_name}: {message}") from None


def timeline_csv(report: dict) -> str:
    out = io.StringIO()
    out.write(
        "time_s,request,accepted,constraint,active,accepted_so_far,acceptance_ratio,analyses,decision_ms\n"
    )
    for d in report["decisions"]:
        out.write(
            f"{d['time_s']:g},{d['request']},{int(d['accepted'])},{d.get('constraint', '')},{d['active']},"
            f"{d['accepted_so_far']},{d['acceptance_ratio']:.6g},{d['analyses']},{d['decision_ms']:.4f}\n"
        )
    return out.getvalue()


#: The script's own part: where each component runs, then SCHED_DEADLINE as Linux accepts it.
_DEADLINE_TAIL = r"""shift
# Everything the script makes is named after this run and removed when the command ends.
run="${RUN_PREFIX:-rtnl-edf}-$$"
top=/sys/fs/cgroup/cpuset
dir=""
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
    if [ -n "$dir" ] && [ -d "$dir" ]; then
        if [ -f "$dir/tasks" ]; then echo $$ > "$top/tasks"; else echo $$ > /sys/fs/cgroup/cgroup.procs; fi
        rmdir "$dir" 2>/dev/null || true
    fi
}
trap cleanup EXIT
edf="${EDF:-partitioned}"
case "$edf" in
partitioned)
    # Linux admits a SCHED_DEADLINE task only when its CPUs are a whole root domain: the
    # component's core alone, an exclusive cpuset of its own. The host's own cgroup settings are
    # left as they are: where they make no root domain of one core, global EDF instead.
    v2=/sys/fs/cgroup/cgroup.subtree_control
    if [ -f "$v2" ] && grep -qw cpuset "$v2"; then
        # cgroup v2 with the cpuset controller on: a partition root is a root domain of its own.
        dir="/sys/fs/cgroup/$run-core$core"
        mkdir "$dir"
        echo "$core" > "$dir/cpuset.cpus"
        echo root > "$dir/cpuset.cpus.partition"
        echo $$ > "$dir/cgroup.procs"
    elif [ -d "$top" ] && [ "$(cat "$top/cpuset.sched_load_balance")" = 0 ]; then
        # cgroup v1 whose top cpuset does not balance load: an exclusive cpuset is a root domain.
        dir="$top/$run-core$core"
        mkdir "$dir"
        echo "$core" > "$dir/cpuset.cpus"
        cat "$top/cpuset.mems" > "$dir/cpuset.mems"
        echo 1 > "$dir/cpuset.cpu_exclusive"
        echo $$ > "$dir/tasks"
    else
        echo "partitioned EDF: impossible here (cgroup v1, the top cpuset balances load over every" \
            "CPU: one root domain, the host's setting); global EDF over this run's cpuset instead" >&2
        edf=global
    fi
    ;;
global) ;;
*)
    echo "EDF: partitioned or global" >&2
    exit 2
    ;;
esac
if [ "$edf" = global ]; then
    # Every CPU, one root domain: accepted while the host's deadline bandwidth holds; global
    # EDF bounds tardiness, it does not keep the partitioned admission's deadlines. The process
    # goes to a cpuset of this run spanning the whole root domain.
    if [ -d "$top" ]; then
        dir="$top/$run"
        mkdir "$dir"
        cat "$top/cpuset.effective_cpus" > "$dir/cpuset.cpus"
        cat "$top/cpuset.mems" > "$dir/cpuset.mems"
        echo $$ > "$dir/tasks"
    fi
fi
# A SCHED_DEADLINE task may not fork: COMMAND runs in chrt's process, this shell waits for it
# (and passes SIGINT and SIGTERM on) to remove the run's cpuset after.
exec 3<&0
chrt --deadline --sched-runtime "$runtime" --sched-deadline "$deadline" --sched-period "$period" 0 \
    "$@" <&3 3<&- &
child=$!
trap 'kill -TERM "$child" 2>/dev/null || true' INT TERM
status=0
while :; do
    wait "$child" && status=0 || status=$?
    kill -0 "$child" 2>/dev/null || break
done
exit "$status"
"""


def sched_deadline_text(report: dict) -> str:
    """A script running a command as one admitted component under SCHED_DEADLINE, as Linux
    accepts it: `HOST=<host> sh sched_deadline.sh <vsn.component> COMMAND [ARGUMENT...]`, root.
    Partitioned EDF (the admission's: each component on its core) in an exclusive cpuset of that
    core (cgroup v2's partition root, or cgroup v1's exclusive cpuset where the host's top cpuset
    does not balance load); where the host's settings make that impossible, one line says so and
    the component runs under global EDF, as with EDF=global: in a cpuset of the run spanning
    every CPU, removed when the command ends.
    Every name that reaches the shell is quoted, and written in comments escaped."""
    import shlex

    from rtnetlab.testbed.tc import comment

    hosts = report["sched_deadline"]
    out = [
        "#!/bin/sh",
        "# SCHED_DEADLINE for the admitted components (runtime, deadline and period in ns).",
        "# As root on a host: HOST=<host> sh sched_deadline.sh <vsn.component> COMMAND [ARGUMENT...]",
        "# runs COMMAND as that component. EDF=partitioned (the default: the admission's partitioned",
        "# EDF, each component on its core) puts it in an exclusive cpuset of its core, or says why it",
        "# cannot and runs it under global EDF; EDF=global runs it under global EDF on every CPU.",
        "set -eu",
        "if [ $# -lt 2 ]; then",
        '    echo "usage: HOST=<host> sh sched_deadline.sh <vsn.component> COMMAND [ARGUMENT...]" >&2',
        "    exit 2",
        "fi",
        'case "${HOST:-}" in',
    ]
    for h in hosts:
        out.append(
            f"# host {comment(h['host'])}: {int(h['cores'])} cores, utilisation "
            + " ".join(f"{float(u):.3f}" for u in h["utilisation"])
        )
        out.append(f"{shlex.quote(h['host'])})")
        out.append('    case "$1" in')
        names = []
        for c in h["components"]:
            name = f"{c['vsn']}.{c['component']}"
            names.append(name)
            out.append(
                f"    {shlex.quote(name)}) core={int(c['core'])} runtime={int(c['runtime_ns'])} "
                f"deadline={int(c['deadline_ns'])} period={int(c['period_ns'])} ;;"
            )
        known = shlex.quote(" ".join(names))
        out.append(f'    *) echo "COMPONENT: one of "{known}" on this host" >&2; exit 2 ;;')
        out.append("    esac")
        out.append("    ;;")
    all_hosts = shlex.quote(" ".join(h["host"] for h in hosts))
    out.append(f'*) echo "HOST: one of "{all_hosts} >&2; exit 2 ;;')
    out.append("esac")
    names = [h["host"] for h in hosts]
    names += [f"{c['vsn']}.{c['component']}" for h in hosts for c in h["components"]]
    if any(ch in x for x in names for ch in "$`"):
        out.insert(1, "# shellcheck disable=SC2016  # names are quoted literals, never expanded")
    return "\n".join(out) + "\n" + _DEADLINE_TAIL


def policing(report: dict) -> list[dict]:
    """Per admitted VSN, what its virtual links' source hosts police: each flow at its contract
    (rate, burst) on the host's port."""
    origin = {}
    for d in report["decisions"]:
        for link in d["links"]:
            if link.get("flow"):
                origin[link["flow"]] = (d["request"], link["path"][0])
    by_vsn: dict[str, list[dict]] = {}
    for f in report["admitted"].get("flows", []):
        if f["name"] in origin:
            vsn, host = origin[f["name"]]
            by_vsn.setdefault(vsn, []).append(
                {
                    "flow": f["name"],
                    "host": host,
                    "rate": f["rate"],
                    "burst": f["burst"],
                    "class": f.get("class"),
                }
            )
    return [{"vsn": v, "links": links} for v, links in by_vsn.items()]


def tc_policing_text(report: dict, dev: str = "eth0") -> str:
    """The `export tc` script of every source host of an admitted VSN's virtual links, in one file
    (`HOST=H DEV=eth0 sh tc_policing.sh` on host H): the host's port as an HTB tree with one class
    per virtual link at its contract (rate, burst), chosen by the flow's destination address. Each
    class is named after its flow, `<vsn>.<link>`. The exporter's own notes follow each host. The
    interface and the host names are shell-quoted, every name in a comment escaped."""
    import shlex
    import tempfile

    from rtnetlab.testbed import run as tb
    from rtnetlab.testbed import tc

    problem = tc.interface_problem(dev)
    if problem is not None:
        raise UserError(f"'{tc.comment(dev)}' is not a network interface name ({problem})")
    vsns = policing(report)
    hosts = sorted({link["host"] for v in vsns for link in v["links"]})
    head = [
        "#!/bin/sh",
        "# Policing of the admitted VSNs' virtual links at their source hosts (the `rtnetlab export tc`",
        "# exporter on the admitted state): run as root on each host, HOST=<host> DEV=<interface>.",
        "# VSNs per host: "
        + tc.comment(
            "; ".join(
                f"{h}: " + ", ".join(v["vsn"] for v in vsns if any(x["host"] == h for x in v["links"]))
                for h in hosts
            )
        ),
        "set -e",
        f"DEV=${{DEV:-{shlex.quote(dev)}}}",
        'case "${HOST:-}" in',
    ]
    if not hosts:
        return "\n".join([*head[:3], "# No admitted VSN has a virtual link between two hosts."]) + "\n"
    with tempfile.TemporaryDirectory(prefix="rtnetlab-admit-") as tmp:
        desc = Path(tmp) / "admitted.json"
        desc.write_text(json.dumps(report["admitted"]))
        plan = tb.plan_of(desc)
    body: list[str] = []
    for h in hosts:
        script, _ = tc.export_script(plan, h, dev, None, "admitted.yaml")
        lines = script.splitlines()
        # The exporter's header and settings are the file's own; its commands go under the host.
        keep = [
            x
            for x in lines[3:]
            if not x.startswith(("set -e", "DEV=", "# Run as root", "# shellcheck disable=SC2016"))
        ]
        body += [f"{shlex.quote(h)})", *(f"    {x}" for x in keep), "    ;;"]
    known = shlex.quote(" ".join(hosts))
    body += [f'*) echo "HOST: one of "{known} >&2; exit 2 ;;', "esac"]
    literal = ["# shellcheck disable=SC2016  # the name is literal"] if "$" in dev or "`" in dev else []
    return "\n".join(head[:5] + literal + head[5:] + body) + "\n"


def plot_png(report: dict, title: str) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = report["decisions"]
    t = [x["time_s"] for x in d]
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    a1.plot(t, [x["acceptance_ratio"] for x in d], drawstyle="steps-post")
    a1.set_ylabel("acceptance ratio")
    a1.set_ylim(0, 1.05)
    a1.set_title(title)
    a2.plot(t, [x["active"] for x in d], drawstyle="steps-post", color="tab:green")
    a2.set_ylabel("active VSNs")
    a2.set_xlabel("time (s)")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def outputs(out_dir: Path) -> dict[str, Path]:
    names = (
        "decisions.json",
        "admitted.yaml",
        "sched_deadline.sh",
        "tc_policing.sh",
        "acceptance.csv",
        "acceptance.png",
    )
    return {n: out_dir / n for n in names}


def files(out_dir: Path, report: dict, title: str) -> dict[Path, Any]:
    import yaml

    o = outputs(out_dir)
    decisions = {k: v for k, v in report.items() if k not in ("admitted",)}
    decisions["policing"] = policing(report)
    return {
        o["decisions.json"]: json.dumps(decisions, indent=1, allow_nan=False) + "\n",
        o["admitted.yaml"]: yaml.safe_dump(
            report["admitted"], sort_keys=False, allow_unicode=True, width=100
        ),
        o["sched_deadline.sh"]: sched_deadline_text(report),
        o["tc_policing.sh"]: tc_policing_text(report),
        o["acceptance.csv"]: timeline_csv(report),
        o["acceptance.png"]: plot_png(report, title),
    }


def summary(report: dict) -> dict:
    times = [d["decision_ms"] for d in report["decisions"]]
    return {
        "accepted": report["accepted"],
        "rejected": report["rejected"],
        "acceptance_ratio": report["acceptance_ratio"],
        "rejected_by": report["rejected_by"],
        "decision_ms_mean": sum(times) / len(times) if times else 0.0,
        "decision_ms_max": max(times, default=0.0),
    }


def in_user_files(message: str, *files: Path, infra: Path | None = None) -> str:
    """An error of the engine reading a user's file turned into JSON (`FILE: place: rule`) as
    `FILE:line:column: place: rule` in the user's own file: the position of the JSON text it came
    with (`at line 1 column 246`) said nothing of it. A problem in the network description an
    infrastructure (`infra`) names by path is placed in that file."""
    import re

    from rtnetlab.io import formats, locate

    for path in [*files, *([infra] if infra is not None else [])]:
        head = f"{path}: "
        if not message.startswith(head):
            continue
        place, sep, rule = message.removeprefix(head).partition(": ")
        if not sep or not locate.looks_like_place(place):
            return message
        rule = re.sub(r" at line \d+ column \d+$", "", rule)
        if path == infra and place == "network":
            inner, sep, why = rule.partition(": ")
            try:
                named = formats.read(infra).get("network") if sep else None
            except (UserError, AttributeError):
                named = None
            if isinstance(named, str) and locate.looks_like_place(inner):
                where = infra.parent / named
                return f"{locate.at(where, inner)}: {inner}: {why}"
            if isinstance(named, dict) and locate.looks_like_place(inner):
                return f"{locate.at(infra, f'network.{inner}')}: network.{inner}: {why}"
        return f"{locate.at(path, place)}: {place}: {rule}"
    return message
