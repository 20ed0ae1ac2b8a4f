"""The `rtnetlab` command's entry point (rtnetlab/command.py) keeps the cyclic garbage collector
out of the start-up only: once the command runs, the collector is on (at a larger first-generation
threshold) and what the imports made is frozen."""

from __future__ import annotations

import json
import subprocess
import sys


def test_the_command_runs_with_the_collector_on_and_the_imports_frozen() -> None:
    code = (
        "import atexit, gc, json, sys\n"
        "from rtnetlab import command\n"
        "atexit.register(lambda: print(json.dumps([gc.isenabled(), gc.get_threshold()[0],"
        " gc.get_freeze_count()])))\n"
        "sys.argv = ['rtnetlab', 'schema']\n"
        "command.entry()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    enabled, threshold, frozen = json.loads(r.stdout.strip().splitlines()[-1])
    assert enabled
    assert threshold == 10_000
    assert frozen > 1000  # typer, click and the command line's modules: some 20,000 objects


def test_a_disabled_collector_stays_disabled() -> None:
    code = (
        "import atexit, gc, sys\n"
        "gc.disable()\n"
        "from rtnetlab import command\n"
        "atexit.register(lambda: print(gc.isenabled()))\n"
        "sys.argv = ['rtnetlab', 'schema']\n"
        "command.entry()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "False"
