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
    data = _read(path, "a requests file")
    if not isinstance(data, dict):
        raise UserError(f"{path}: a requests file is a mapping with a list `requests`")
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


def sched_deadline_text(report: dict) -> str:
    """Per host, the `chrt`-style parameters of each component (runtime, deadline, period in ns,
    and the core it is pinned to), as a shell script that documents them."""
    lines = ["# SCHED_DEADLINE parameters of the admitted components, per host (ns; deadline = period)."]
    for h in report["sched_deadline"]:
        lines.append(
            f"# host {h['host']}: {h['cores']} cores, utilisation "
            + " ".join(f"{u:.3f}" for u in h["utilisation"])
        )
        for c in h["components"]:
            lines.append(
                f"taskset -c {c['core']} chrt --deadline --sched-runtime {c['runtime_ns']} "
                f"--sched-deadline {c['deadline_ns']} --sched-period {c['period_ns']} 0 "
                f"COMMAND  # {h['host']}: {c['vsn']}.{c['component']}"
            )
    return "\n".join(lines) + "\n"


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
    class is named after its flow, `<vsn>.<link>`. The exporter's own notes follow each host."""
    import tempfile

    from rtnetlab.testbed import run as tb
    from rtnetlab.testbed import tc

    vsns = policing(report)
    hosts = sorted({link["host"] for v in vsns for link in v["links"]})
    head = [
        "#!/bin/sh",
        "# Policing of the admitted VSNs' virtual links at their source hosts (the `rtnetlab export tc`",
        "# exporter on the admitted state): run as root on each host, HOST=<host> DEV=<interface>.",
        "# VSNs per host: "
        + "; ".join(
            f"{h}: " + ", ".join(v["vsn"] for v in vsns if any(x["host"] == h for x in v["links"]))
            for h in hosts
        ),
        "set -e",
        f'DEV="${{DEV:-{dev}}}"',
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
        keep = [x for x in lines[3:] if not x.startswith(("set -e", "DEV=", "# Run as root"))]
        body += [f"{h})", *(f"    {x}" for x in keep), "    ;;"]
    body += [f'*) echo "HOST: one of {" ".join(hosts)}" >&2; exit 2 ;;', "esac"]
    return "\n".join(head + body) + "\n"


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
