"""Every command of the CLI is a layer over the Python API: the table below lists, per command,
the API functions it calls, and each command is run to see it call them. A command not yet
rewritten over the API is listed in NOT_YET with what it calls instead, so that a new command
must be put in one of the two tables."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest

import rtnetlab
import rtnetlab.display
import rtnetlab.lab
import rtnetlab.network
import rtnetlab.studies
from rtnetlab.cli import main

REPO = Path(__file__).resolve().parents[1]
EX = REPO / "examples"
SEED002 = str(EX / "seed002_four_vls.yaml")

#: command -> (arguments after the command, API functions it must call). {tmp}: a fresh directory.
OVER_THE_API: dict[str, tuple[list[str], set[str]]] = {
    "validate": ([SEED002], {"rt.load"}),
    "info": ([SEED002], {"rt.load", "Network.info"}),
    "convert": ([SEED002, "{tmp}/x.json"], {"rt.load", "Network.save"}),
    "schema": ([], {"rt.schema"}),
    "analyze": ([SEED002], {"rt.load", "Network.analysis_table"}),
    "analyze --json": ([SEED002, "--json"], {"rt.load", "Network.analysis_json"}),
    "analyze -o": ([SEED002, "-o", "{tmp}/a.csv"], {"rt.load", "Network.analyze"}),
    "analyze --explain": ([SEED002, "--explain", "VL1"], {"rt.load", "Network.explain"}),
    "simulate": ([SEED002, "--duration", "20ms"], {"rt.load", "Network.simulate"}),
    "worst-case": ([SEED002, "--evaluations", "8"], {"rt.load", "Network.worst_case"}),
    "report": ([SEED002, "-o", "{tmp}/r.html", "--duration", "20ms"], {"rt.load", "rt.report"}),
    "generate afdx": (["--vls", "5"], {"rt.generate_afdx"}),
    "configure afdx": ([str(EX / "afdx_config" / "table1.yaml"), "-o", "{tmp}/c.yaml"],
                       {"rt.read", "Network.configure_afdx"}),
    "configure priorities": ([str(EX / "fixed_priority" / "nonpreemptive_opa.yaml"), "-o", "{tmp}/p.yaml"],
                             {"rt.read", "Network.configure_priorities"}),
    "configure partition": ([str(EX / "fixed_priority" / "dopa_partition.yaml"), "-o", "{tmp}/d.yaml"],
                            {"rt.read", "Network.configure_partition"}),
    "configure tsn": ([str(EX / "tsn" / "tsn_synthesis.yaml"), "-o", "{tmp}/t.yaml", "--verify", "none"],
                      {"rt.read", "Network.configure_tsn"}),
    "configure dtable": ([str(EX / "dtable" / "table4_requirements.yaml")], {"rt.configure_dtable"}),
    "admit": (["{tmp}/infra.yaml", "{tmp}/requests.yaml"], {"rt.admit"}),
    "export taprio": ([str(EX / "tsn" / "tas_gates.yaml"), "--node", "bridge", "--port", "2",
                       "--dev", "eth0"],
                      {"rt.read", "Network.export_taprio"}),
    "export yang": ([str(EX / "tsn" / "tas_gates.yaml")], {"rt.read", "Network.gate_control_yang"}),
    "export tc": ([SEED002, "--node", "ES1", "--dev", "eth0", "-o", "{tmp}/tc.sh"],
                  {"rt.read", "Network.export_tc"}),
    "experiment schedulers": (["--duration", "20ms"], {"rt.experiment"}),
    "experiment nss-overhead": (["--seeds", "1", "--packets", "20"], {"rt.experiment"}),
    "experiment dopa": (["--sets", "1", "--points", "1", "--out-dir", "{tmp}/dopa"], {"rt.experiment"}),
    "experiment fabric": (["--duration", "1ms", "--warmup", "0s"], {"rt.experiment"}),
    "experiment admission": (["--requests", "20", "--out", "{tmp}/admission"], {"rt.experiment"}),
    "experiment reservation": (["--seconds", "0.2"], {"rt.experiment"}),
    "experiment ethernet-measure": (["--figure", "load", "--loads", "0.5", "--policies", "fifo", "--messages",
                                     "100", "--out-dir", "{tmp}/em"], {"rt.experiment"}),
    "experiment seed000-fig8": (["--out", "{tmp}/fig8", "--vls", "10", "--runs", "2", "--duration", "20ms",
                                 "--workers", "1"], {"rt.experiment"}),
    "experiment soundness": (["--out", "{tmp}/soundness", "--networks", "2", "--duration-ms", "10",
                              "--workers", "1"], {"rt.experiment"}),
    "slrm step": (["--shares", "0.5,0.5", "--matching", "-0.5,0.2"], {"rt.slrm_step"}),
    "slrm simulate": (["--experiment", "1"], {"rt.slrm_simulate"}),
    "middleware pubsub": (["--backends", "udp", "--subscribers", "1", "--payload", "16", "--messages", "20",
                           "--warmup", "0", "--noise", "0s", "--no-rt", "--no-ddsperf"], {"rt.middleware"}),
    "middleware report": (["{tmp}/pubsub.json", "-o", "{tmp}/pubsub.html"], {"MiddlewareResult.read"}),
    "testbed run": ([SEED002, "--duration", "100ms", "--baseline", "0s", "--no-simulate",
                     "--rt-priority", "0", "--add-modelled-latency"], {"rt.read", "Network.run_testbed"}),
    "testbed up": ([SEED002, "--json"], {"rt.read", "Network.testbed_up"}),
    "testbed down": (["rtnl-zzzzzz"], {"rt.testbed_down"}),
    "demo": ([], {"rt.load", "Network.info", "Network.analyze", "Network.simulate", "rt.report",
                  "rt.configure_dtable"}),
    "sweep": (["{tmp}/spec.yaml", "--out", "{tmp}/sweep", "--workers", "1"], {"rt.sweep"}),
}

#: Commands the API refuses as called here (exit 2): `testbed down` of a run that does not exist;
#: without root, the commands that need it (the API checks the privileges before anything else).
REFUSED = {"testbed down"}
NEEDS_ROOT = {"testbed run", "testbed up", "experiment ethernet-measure"}

#: Commands that still call their capability's package directly (not yet over rtnetlab's API).
NOT_YET: dict[str, str] = {}


def test_every_command_is_listed() -> None:
    from rtnetlab.cli import COMMANDS

    covered = {name.split()[0] for name in OVER_THE_API}
    not_yet = {name.split()[0] for name in NOT_YET}
    assert set(COMMANDS) == covered | not_yet, "a command is in neither table"
    assert not {n for n in OVER_THE_API if " " not in n} & not_yet


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    seen: set[str] = set()

    def spy(owner: object, attribute: str, label: str) -> None:
        original = getattr(owner, attribute)

        @functools.wraps(original)
        def wrapper(*args: object, **kwargs: object) -> object:
            seen.add(label)
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, attribute, wrapper)

    for name in ("load", "read", "schema", "generate_afdx", "configure_dtable", "admit", "experiment",
                 "slrm_step", "slrm_simulate", "slrm_run", "testbed_down"):
        spy(rtnetlab, name, f"rt.{name}")
    # rt.report, rt.sweep and rt.middleware are also packages (callable ones): their functions.
    spy(rtnetlab.display, "report", "rt.report")
    spy(rtnetlab.studies, "sweep", "rt.sweep")
    spy(rtnetlab.lab, "middleware", "rt.middleware")
    spy(rtnetlab.lab.MiddlewareResult, "read", "MiddlewareResult.read")
    for method in ("info", "save", "analyze", "analysis_json", "analysis_table", "explain", "simulate",
                   "worst_case", "configure_afdx", "configure_priorities", "configure_partition",
                   "configure_tsn", "export_taprio", "export_tc", "gate_control_yang", "run_testbed",
                   "testbed_up"):
        spy(rtnetlab.network.Network, method, f"Network.{method}")
    return seen


@pytest.mark.parametrize("command", list(OVER_THE_API))
def test_command_calls_the_api(command: str, calls: set[str], tmp_path: Path,
                               capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    args, expected = OVER_THE_API[command]
    monkeypatch.chdir(tmp_path)  # demo writes out/report.html where it runs
    if command == "admit":
        import yaml

        from test_cloud import two_host_infra, vsn

        two_host_infra(tmp_path)  # infra.yaml, net.yaml

        (tmp_path / "requests.yaml").write_text(yaml.safe_dump(
            {"requests": [vsn("v1", "0s", "10s", [0.3])]}))
    if command == "middleware report":
        rtnetlab.lab.middleware("pubsub", backends=["udp"], subscribers=[1], payload=[16], messages=20,
                                warmup=0, noise=0, rt=False, ddsperf=False, out=tmp_path)
    if command == "sweep":
        (tmp_path / "spec.yaml").write_text(
            "name: tiny\nnetwork:\n  generate: {virtual_links: 10, switches: 2, planes: 1}\n"
            "vary:\n  generate.virtual_links: [10, 12]\nseeds: 1\nrun:\n  analyze: {methods: [tfa]}\n"
            "keep: [analyze.tfa.max_delay_us]\n")
    words = [w for w in command.split() if not w.startswith("-")]
    rest = [a.replace("{tmp}", str(tmp_path)) for a in args]
    options = [w for w in command.split() if w.startswith("-")]
    rc = main([*words, *rest, *[o for o in options if o not in rest]])
    printed = capsys.readouterr().out
    if command == "testbed up" and rc == 0:
        rtnetlab.lab.testbed_down(json.loads(printed)["run"])  # what it left up for inspection
    refused = command in REFUSED or (command in NEEDS_ROOT and os.geteuid() != 0)
    assert rc in ((2,) if refused else (0, 1)), f"rtnetlab {command}: exit {rc}"
    assert expected <= calls, f"rtnetlab {command} called {sorted(calls)}"
