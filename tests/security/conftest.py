"""What the security tests share: running a command as the unprivileged user `nobody` (the other
local user of docs/SECURITY.md's threat model), a directory every user may write to, and the
`rtnetlab` command.

The fixture `nobody` needs root (to become nobody); it is skipped only when the tests do not run
as root. Anything else missing (setpriv, the user, a Python nobody may run) fails the test.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / ".venv" / "bin" / "rtnetlab"


@dataclass
class Nobody:
    """Runs commands as `nobody` (its own user and group, no supplementary groups)."""

    uid: int
    gid: int
    python: str
    env: dict[str, str]

    def argv(self, args: list[str]) -> list[str]:
        return ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups", *args]

    def run(self, args: list[str], **kw) -> subprocess.CompletedProcess:
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        kw.setdefault("timeout", 120)
        return subprocess.run(self.argv([str(a) for a in args]), env=self.env, **kw)

    def popen(self, args: list[str], **kw) -> subprocess.Popen:
        return subprocess.Popen(self.argv([str(a) for a in args]), env=self.env, **kw)

    def python_code(self, code: str, *args: str, **kw) -> subprocess.CompletedProcess:
        """Python code run as nobody, with this checkout's packages (Dask included) importable."""
        return self.run([self.python, "-c", code, *args], **kw)

    def symlink(self, target: Path, link: Path) -> None:
        r = self.run(["ln", "-s", str(target), str(link)])
        assert r.returncode == 0, r.stderr


def _python_for_nobody(uid: int, gid: int, env: dict[str, str]) -> str:
    """An interpreter nobody may run that reads this checkout's packages: the one running the
    tests, or the same Python version installed system-wide when it lives under a private home."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [os.path.realpath(sys.executable), shutil.which(version, path="/usr/local/bin:/usr/bin")]
    probe = "import distributed, rtnetlab._core"
    for python in filter(None, candidates):
        r = subprocess.run(
            ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", python, "-c", probe],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if r.returncode == 0:
            return python
    pytest.fail(f"no Python {version} that nobody may run and that imports this checkout", pytrace=False)


@pytest.fixture(scope="session")
def nobody() -> Nobody:
    if os.geteuid() != 0:
        pytest.skip("replaying another local user's attack needs root (to run commands as nobody)")
    if shutil.which("setpriv") is None:
        pytest.fail("setpriv (util-linux) is needed to run commands as nobody", pytrace=False)
    try:
        user = pwd.getpwnam("nobody")
    except KeyError:
        pytest.fail("no user 'nobody' on this host", pytrace=False)
    site = sysconfig.get_paths()["purelib"]
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/nonexistent",
        "LANG": "C.UTF-8",
        "PYTHONPATH": os.pathsep.join([str(REPO / "python"), site]),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return Nobody(user.pw_uid, user.pw_gid, _python_for_nobody(user.pw_uid, user.pw_gid, env), env)


@pytest.fixture
def world_writable() -> Iterator[Path]:
    """A directory every user may write to, with the sticky bit (as /tmp), in the system's
    temporary directory so that nobody can reach it (pytest's own are private to root)."""
    d = Path(tempfile.mkdtemp(prefix="rtnetlab-shared-", dir="/tmp"))
    d.chmod(0o1777)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def rtnetlab() -> Path:
    if not CLI.exists():
        pytest.fail(f"{CLI} not found: run `make build` first", pytrace=False)
    return CLI
