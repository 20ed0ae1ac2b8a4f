"""`rtnetlab export tc` writes a script that root runs: nothing from outside (the interface, file
paths, names in the description) may become a command in it. Each script is run here with `tc`
replaced by a recorder, and must run nothing else; every script passes shellcheck."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_testbed import PRIORITY_NET  # noqa: E402


@pytest.fixture
def net(tmp_path: Path) -> Path:
    f = tmp_path / "net.yaml"
    f.write_text(yaml.safe_dump(PRIORITY_NET))
    return f


def export(rtnetlab: Path, description: Path, *args: str, cwd: Path | None = None):
    return subprocess.run(
        [str(rtnetlab), "export", "tc", str(description), *args], capture_output=True, text=True, cwd=cwd
    )


def run_script(script: str, tmp_path: Path) -> tuple[list[list[str]], subprocess.CompletedProcess]:
    """Runs `script` with sh in `tmp_path`, `tc` recording its arguments instead of configuring
    anything; the calls to tc and the run."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "tc.log"
    tc = bin_dir / "tc"
    tc.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    tc.chmod(0o755)
    path = tmp_path / "script.sh"
    path.write_text(script)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    p = subprocess.run(["sh", str(path)], cwd=tmp_path, env=env, capture_output=True, text=True)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return calls, p


def shellcheck(script: str) -> subprocess.CompletedProcess:
    assert shutil.which("shellcheck"), "shellcheck is installed by `make` (Debian package shellcheck)"
    return subprocess.run(["shellcheck", "-"], input=script, capture_output=True, text=True)


@pytest.mark.parametrize(
    "dev, rule",
    [
        ("eth0$(touch /tmp/x)", "1 to 15 bytes, got 19"),
        ("e0;touch x", "no '/', ':', whitespace or control characters, got ' '"),
        ("eth0\ntouch", "got '\\n'"),
        ("a/b", "got '/'"),
        ("eth0:1", "got ':'"),
        ("..", "not '.' or '..'"),
        ("", "1 to 15 bytes, got 0"),
    ],
)
def test_an_interface_that_is_not_one_is_refused(rtnetlab, net, tmp_path, dev, rule):
    script = tmp_path / "es1.sh"
    p = export(rtnetlab, net, "--node", "ES1", "--dev", dev, "-o", str(script))
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, p.stderr
    assert p.stderr.startswith("--dev: ") and rule in p.stderr, p.stderr
    assert not script.exists()


def test_a_legal_but_hostile_interface_name_stays_a_name(rtnetlab, net, tmp_path):
    # Linux accepts this name (no '/', ':' or space): the script must pass it to tc as it is.
    dev = "e$(id>PWNED)"
    p = export(rtnetlab, net, "--node", "ES1", "--dev", dev)
    assert p.returncode == 0, p.stderr
    assert shellcheck(p.stdout).returncode == 0, shellcheck(p.stdout).stdout
    calls, run = run_script(p.stdout, tmp_path)
    assert run.returncode == 0, run.stderr
    assert not (tmp_path / "PWNED").exists()
    assert calls and all(c[c.index("dev") + 1] == dev for c in calls if "dev" in c)


def test_a_path_with_line_breaks_stays_in_its_comment(rtnetlab, tmp_path):
    """The description's path is written in the script's header: a newline in it used to start
    a command line."""
    hostile = tmp_path / "net\ntouch PWNED\n.yaml"
    hostile.write_text(yaml.safe_dump(PRIORITY_NET))
    p = export(rtnetlab, hostile, "--node", "ES1", "--dev", "eth0", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "\\x0atouch PWNED\\x0a" in p.stdout
    calls, run = run_script(p.stdout, tmp_path)
    assert run.returncode == 0, run.stderr
    assert not (tmp_path / "PWNED").exists()
    assert {c[0] for c in calls} == {"qdisc", "class", "filter"}
    assert shellcheck(p.stdout).returncode == 0


def test_names_from_the_description_are_comments_only(rtnetlab, tmp_path):
    """Names may hold characters an editor breaks lines at (U+2028); they are escaped too."""
    data = json.loads(json.dumps(PRIORITY_NET))
    data["name"] = "net\u2028touch PWNED"
    data["flows"][0]["name"] = "VL1\u2029touch PWNED"
    f = tmp_path / "net.json"
    f.write_text(json.dumps(data))
    p = export(rtnetlab, f, "--node", "ES1", "--dev", "eth0")
    assert p.returncode == 0, p.stderr
    assert "net\\u2028touch PWNED" in p.stdout and "VL1\\u2029touch PWNED" in p.stdout
    for line in p.stdout.splitlines():
        assert line.startswith(("#", "tc ", "set -e", "DEV=")), line
    calls, run = run_script(p.stdout, tmp_path)
    assert run.returncode == 0 and not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("node", ["ES1", "ES2", "ES3", "ES4"])
def test_every_exported_script_passes_shellcheck(rtnetlab, net, node):
    p = export(rtnetlab, net, "--node", node, "--dev", "enp3s0")
    assert p.returncode == 0, p.stderr
    check = shellcheck(p.stdout)
    assert check.returncode == 0, check.stdout


def test_the_script_is_executable_when_written(rtnetlab, net, tmp_path):
    script = tmp_path / "es1.sh"
    assert export(rtnetlab, net, "--node", "ES1", "--dev", "eth0", "-o", str(script)).returncode == 0
    assert os.access(script, os.X_OK) and (script.stat().st_mode & 0o777) == 0o755


#: Characters a name must not hold: controls (line breaks among them), format characters (bidi
#: overrides, zero-width), line and paragraph separators.
HIDDEN = ("Cc", "Cf", "Zl", "Zp")


def kernel_accepts(name: str) -> bool:
    """Linux's dev_valid_name (net/core/dev.c) on the name's bytes, and nothing HIDDEN."""
    raw = name.encode("utf-8", "surrogatepass")
    return (
        0 < len(raw) < 16
        and name not in (".", "..")
        and not any(ch in "/:" or ch.isspace() or unicodedata.category(ch) in HIDDEN for ch in name)
    )


@settings(max_examples=500, deadline=None, database=None, derandomize=True)
@given(st.text(max_size=20))
def test_interfaces_and_comments_hold_no_command(text):
    from rtnetlab.testbed import tc

    assert (tc.interface_problem(text) is None) == kernel_accepts(text)
    line = tc.comment(text)
    assert len(("# " + line).splitlines()) == 1
    assert not any(unicodedata.category(ch) in HIDDEN for ch in line)
