"""The `rtnetlab` command's entry point ([project.scripts] in pyproject.toml; `python -m
rtnetlab.cli`): the command line of ``rtnetlab.cli`` started with the cyclic garbage collector
kept out of the start-up.

Importing the command line (typer and its click, then the command's module, the engine's front,
the reader of the description) allocates some 20,000 objects that live as long as the process.
Python's collector counts them as they come and walks them some 30 times during the imports,
and again after: about 5 ms of CPU in a `simulate` or `analyze` of 0.1 s, for nothing freed.
So the imports run with the collector off, what they made is set aside for good
(``gc.freeze``: never walked again), and the command runs with the first generation collected
every 10,000 allocations instead of 700: the documents read from the engine (tens of thousands
of dicts and lists) no longer trigger passes over themselves either. Cycles are still collected,
a little later. Importing ``rtnetlab.cli`` as a library changes nothing of this.
"""

from __future__ import annotations

import gc
import sys

#: The first generation's threshold while a command runs (Python's default: 700).
COMMAND_GC_THRESHOLD = 10_000


def entry() -> None:
    enabled = gc.isenabled()
    gc.disable()
    try:
        from rtnetlab.cli import main
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
    first, *older = gc.get_threshold()
    gc.set_threshold(max(COMMAND_GC_THRESHOLD, first), *older)
    sys.exit(main())
