"""Every error of every command is one line naming its place, exit 2, no traceback, with and
without --json: every command the CLI app has (walked from the app itself, not listed here) is
given an option it does not have, and each file it reads is given a file that is not YAML; then
the mistakes a new user made, replayed through the command as they typed them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
import yaml

from rtnetlab.cli import app, main

REPO = Path(__file__).resolve().parents[1]
RTNETLAB = [sys.executable, "-m", "rtnetlab.cli"]


def commands() -> list[tuple[list[str], object]]:
    """(path, click command) of every command of the app, groups walked down to their leaves."""
    found = []

    def walk(group, path):
        for name in group.list_commands(None):
            command = group.get_command(None, name)
            if hasattr(command, "list_commands"):
                walk(command, [*path, name])
            elif command is not None:
                found.append(([*path, name], command))

    walk(typer.main.get_command(app), [])
    return found


COMMANDS = commands()


def has_json(command) -> bool:
    return any("--json" in (getattr(p, "opts", None) or []) for p in command.params)


def run(capsys, args: list[str]) -> tuple[int, str, str]:
    rc = main(args)
    got = capsys.readouterr()
    assert "Traceback" not in got.err + got.out, got.err
    return rc, got.out, got.err


def one_error(out: str) -> dict:
    errors = json.loads(out)["errors"]
    assert len(errors) == 1, errors
    return errors[0]


def test_the_walk_finds_every_command():
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {"analyze", "sweep", "admit", "generate afdx", "testbed run", "slrm run", "experiment soundness",
            "middleware partitions", "configure dtable", "export tc"} <= names  # fmt: skip
    assert len(names) >= 40


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=" ".join)
def test_an_unknown_option_is_one_line(capsys, path):
    command = dict((" ".join(p), c) for p, c in COMMANDS)[" ".join(path)]
    name = " ".join(path)
    rc, out, err = run(capsys, [*path, "--no-such-option"])
    assert (rc, out) == (2, "")
    assert err == f"--no-such-option: no such option of rtnetlab {name} (rtnetlab {name} --help)\n"
    assert has_json(command), f"{name} has no --json"
    rc, out, err = run(capsys, [*path, "--no-such-option", "--json"])
    assert (rc, err) == (2, "")
    assert one_error(out)["place"] == "--no-such-option"


def malformed_number(command) -> tuple[str, str] | None:
    """An option of `command` that takes a number, and its name."""
    for p in command.params:
        annotation = getattr(getattr(p, "type_descriptor", None), "annotation", None)
        if p.param_type_name == "option" and annotation in (int, float, int | None, float | None):
            return [o for o in p.opts if o.startswith("--")][0], "whole number" if int in (
                annotation, *getattr(annotation, "__args__", ())
            ) else "number"
    return None


@pytest.mark.parametrize(
    "path", [p for p, c in COMMANDS if malformed_number(c) is not None], ids=" ".join
)
def test_a_malformed_number_is_one_line(capsys, path):
    command = dict((" ".join(p), c) for p, c in COMMANDS)[" ".join(path)]
    option, kind = malformed_number(command)
    name = " ".join(path)
    rc, out, err = run(capsys, [*path, option, "many"])
    assert (rc, out) == (2, "")
    assert err == f"{option}: expected a {kind}, got 'many' (rtnetlab {name} --help)\n"


# Parameters that read a file, and values for the others a command cannot do without.
INPUT_OPTIONS = {"compare", "size_trace", "worst_case", "measured", "requirements", "scenario_file", "into",
                 "apps"}  # fmt: skip
OUTPUTS = {"dst", "output", "out", "out_dir", "trace", "histograms", "capture"}
REQUIRED = {"node": "ES1", "dev": "eth0", "shares": "0.5,0.5", "matching": "0.1,0.1", "apps": "overload",
            "output": "out/o.yaml"}  # fmt: skip
#: The file a command reads besides the bad one, when it is not a network description.
OTHER_INPUT = {"configure dtable": REPO / "examples" / "dtable" / "table4_requirements.yaml"}
#: A file read with an option the command uses only with another: that other option too.
WITH = {"size_trace": ["--sizes", "trace"], "into": ["-o", "out/schedulers.yaml"]}
#: Files read as JSON only (a YAML file is not one): their line names JSON's own position.
JSON_ONLY = {"worst_case", "measured", "results"}


def file_cases() -> list[tuple[list[str], str]]:
    cases = []
    for path, command in COMMANDS:
        for p in command.params:
            annotation = str(getattr(getattr(p, "type_descriptor", None), "annotation", ""))
            argument = p.param_type_name == "argument" and p.name not in OUTPUTS and "Path" in annotation
            if argument or (p.param_type_name == "option" and p.name in INPUT_OPTIONS):
                cases.append((path, p.name))
    return cases


FILE_CASES = file_cases()


def args_for(path: list[str], command, bad_param: str, bad: Path, tmp: Path) -> list[str]:
    args = list(path)
    for p in command.params:
        if p.param_type_name == "argument":
            if p.name == bad_param:
                args.append(str(bad))
            elif p.required:
                other = OTHER_INPUT.get(" ".join(path), tmp / "ok.yaml")
                args.append(str(tmp / "x.json" if p.name in OUTPUTS else other))
    for p in command.params:
        if p.param_type_name == "option":
            flag = [o for o in p.opts if o.startswith("--")][0]
            if p.name == bad_param:
                args += [flag, str(bad), *WITH.get(p.name, [])]
            elif p.required:
                args += [flag, REQUIRED.get(p.name, str(tmp / "out"))]
    return args


@pytest.mark.parametrize("path, param", FILE_CASES, ids=[f"{' '.join(p)} {n}" for p, n in FILE_CASES])
def test_a_file_that_is_not_yaml_is_one_line_naming_its_line(capsys, tmp_path, monkeypatch, path, param):
    monkeypatch.chdir(tmp_path)
    command = dict((" ".join(p), c) for p, c in COMMANDS)[" ".join(path)]
    bad = Path("bad.yaml")
    bad.write_text("name: x\nflows: [\n")
    (tmp_path / "ok.yaml").write_text((REPO / "examples" / "seed002_four_vls.yaml").read_text())
    args = args_for(path, command, param, bad, tmp_path)
    rc, out, err = run(capsys, args)
    assert (rc, out) == (2, ""), err
    assert len(err.splitlines()) == 1, err
    # The file, the line and the column where it stops being what it should be, then why.
    assert re.match(r"(--[a-z-]+: )?bad\.yaml:\d+:\d+: \S", err), err
    assert not (tmp_path / "out").exists() and not (tmp_path / "x.json").exists()
    rc, out, err = run(capsys, [*args, "--json"])
    assert (rc, err) == (2, "")
    error = one_error(out)
    assert re.match(r"(--[a-z-]+: )?bad\.yaml:\d+:\d+: ", f"{error['place']}: {error['message']}"), error
    assert not (tmp_path / "out").exists() and not (tmp_path / "x.json").exists()


# --- the replays ----------------------------------------------------------------------


def cli(*args: str | Path, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*RTNETLAB, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120,
                          env=env)  # fmt: skip


@pytest.mark.parametrize(
    "args, line",
    [
        (["testbed", "run", "net.yaml", "--rt-priority", "200"],
         "--rt-priority: must be at most 99, got '200' (rtnetlab testbed run --help)"),
        (["sweep", "spec.yaml", "--out", "out", "--workers", "-1"],
         "--workers: must be at least 1, got '-1' (rtnetlab sweep --help)"),
        # A duration takes its unit, as every --duration: a bare number is refused.
        (["slrm", "run", "--apps", "overload", "--duration", "5"],
         "--duration: expected a duration with a unit (s, ms, us, ns), e.g. '2ms', got '5'"),
        (["slrm", "run", "--duration", "5s"], "--apps: required, not given (rtnetlab slrm run --help)"),
    ],
)  # fmt: skip
def test_option_mistakes_are_one_line_not_a_usage_block(tmp_path, args, line):
    p = cli(*args, cwd=tmp_path)
    assert (p.returncode, p.stdout, p.stderr) == (2, "", line + "\n")
    place, message = line.split(": ", 1)
    p = cli(*args, "--json", cwd=tmp_path)
    assert (p.returncode, p.stderr) == (2, "")
    assert json.loads(p.stdout)["errors"] == [{"place": place, "message": message}]


@pytest.mark.needs_root(reason="ethernet-measure asks for root before its options")
def test_a_choice_refused_lists_every_choice(tmp_path):
    p = cli("experiment", "ethernet-measure", "--figure", "banana", cwd=tmp_path)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == "--figure: expected one of size, size-shaping, load, all, got 'banana'\n"


def test_a_command_needing_root_names_itself(capsys, monkeypatch):
    """`middleware partitions` as another user said `testbed: needs root`: the namespaces' code is
    the testbed's, the command was not."""
    monkeypatch.setattr(os, "geteuid", lambda: 65534)
    rc, out, err = run(capsys, ["middleware", "partitions", "--requests", "10"])
    assert (rc, out) == (2, "")
    assert err == (
        "middleware partitions: needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN to create network namespaces)\n"
    )
    rc, out, err = run(capsys, ["experiment", "ethernet-measure", "--json"])
    assert rc == 2 and one_error(out) == {
        "place": "experiment ethernet-measure",
        "message": "needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN to create network namespaces)",
    }


# admission

NETWORK = {
    "name": "two-hosts",
    "defaults": {"link_rate": "100Mbps", "scheduler": "static_priority"},
    "classes": [{"name": "rt", "priority": 0}],
    "end_systems": [{"name": "A"}, {"name": "B"}],
    "switches": [{"name": "SW"}],
    "links": [{"from": "A", "to": "SW"}, {"from": "B", "to": "SW"}],
}
REQUESTS = """requests:
  - name: v1
    arrival: 0s
    lifetime: 10s
    components:
      - {name: c0, utilisation: 0.5}
      - {name: c1, utilisation: 0.5}
    links:
      - {name: l, from: c0, to: c1, bandwidth: 10Mbs, latency: 1ms, class: rt}
"""


@pytest.fixture
def infra(tmp_path: Path) -> Path:
    (tmp_path / "net.yaml").write_text(yaml.safe_dump(NETWORK, sort_keys=False))
    hosts = "hosts: [{name: A, cores: 1}, {name: B, cores: 1}]\n"
    (tmp_path / "infra.yaml").write_text(f"network: net.yaml\n{hosts}")
    return tmp_path / "infra.yaml"


def test_an_admission_error_names_the_line_of_the_user_s_file(tmp_path, infra):
    """The mistake is on line 9 of requests.yaml; the message pointed into the JSON the file was
    turned into (`at line 1 column 246`)."""
    (tmp_path / "requests.yaml").write_text(REQUESTS)
    p = cli("admit", "infra.yaml", "requests.yaml", cwd=tmp_path)
    line = (
        "requests.yaml:9:37: requests[0].links[0].bandwidth: expected a data rate with a unit (Gbps, Mbps, "
        "kbps, bps), e.g. '100Mbps', got '10Mbs'"
    )
    assert (p.returncode, p.stdout, p.stderr) == (2, "", line + "\n")
    p = cli("admit", "infra.yaml", "requests.yaml", "--json", cwd=tmp_path)
    assert p.returncode == 2 and json.loads(p.stdout)["errors"] == [
        {"place": "requests.yaml:9:37", "message": line.split(": ", 1)[1]}
    ]
    # A field misspelt, and a mistake in the network the infrastructure names: in that file.
    (tmp_path / "requests.yaml").write_text(REQUESTS.replace("lifetime", "lifetme").replace("10Mbs", "1Mbps"))
    p = cli("admit", "infra.yaml", "requests.yaml", cwd=tmp_path)
    assert p.stderr.startswith("requests.yaml:4:5: requests[0].lifetme: unknown field `lifetme`, expected ")
    assert " at line " not in p.stderr and p.returncode == 2
    (tmp_path / "requests.yaml").write_text(REQUESTS.replace("10Mbs", "1Mbps"))
    (tmp_path / "net.yaml").write_text(yaml.safe_dump({**NETWORK, "links": [{"from": "A", "to": "SW9"}]}))
    p = cli("admit", "infra.yaml", "requests.yaml", cwd=tmp_path)
    assert p.stderr.endswith(": links[0].to: unknown node 'SW9'\n") and p.stderr.startswith("net.yaml:")
    assert re.match(r"net\.yaml:\d+:\d+: ", p.stderr) and p.returncode == 2


def test_no_core_with_room_names_the_room_the_component_was_offered(tmp_path, infra):
    """Three components of 0.9 on two single-core hosts: the third finds 0.1 free once the
    request's first two took theirs; the cores had 1.0 before the request (what the message
    said alone, which read as a contradiction)."""
    comps = ", ".join(f"{{name: {n}, utilisation: 0.9}}" for n in "efg")
    (tmp_path / "requests.yaml").write_text(
        f"requests:\n  - {{name: v1, arrival: 0s, lifetime: 10s, components: [{comps}]}}\n"
    )
    p = cli("admit", "infra.yaml", "requests.yaml", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    (d,) = json.loads(p.stdout)["decisions"]
    assert (d["accepted"], d["constraint"]) == (False, "cpu")
    assert d["reason"] == (
        "component 'g' (utilisation 0.900): no core with room once this request's 'e' (0.900), 'f' (0.900) "
        "took theirs (largest free then 0.100, 1.000 before the request)"
    )


def test_a_scenario_error_names_the_line_of_the_user_s_file(tmp_path):
    app = (
        "{name: %s, deadline: %s, mandatory: 0.01, optional: 0.01, think_time: 1, "
        "users: [{at: 0, users: 5}]}"
    )
    (tmp_path / "sc.yaml").write_text(
        f"capacity: 2\ncontrol_period: 1\nduration: 10\napps:\n  - {app % ('a', 1)}\n  - {app % ('b', -1)}\n"
    )
    line = "sc.yaml:6:15: apps[1].deadline: must be a positive number, got -1\n"
    for args in (["simulate", "--scenario", "sc.yaml"], ["run", "--apps", "sc.yaml", "--duration", "3s"]):
        p = cli("slrm", *args, cwd=tmp_path)
        assert (p.returncode, p.stdout, p.stderr) == (2, "", line)
