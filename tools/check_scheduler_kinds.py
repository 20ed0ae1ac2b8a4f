"""One place per scheduler: no rule decided by a scheduler's kind outside crates/core/src/schedulers.

    .venv/bin/python tools/check_scheduler_kinds.py          # `make lint` runs it
    .venv/bin/python tools/check_scheduler_kinds.py --list   # every line found, allowed or not

Every scheduler-specific rule (validation, gates, service models, worst-case search hints, the
kernel's qdiscs, names) is a method of the `Discipline` trait (crates/core/src/schedulers/mod.rs),
so that a new kind of scheduler is added in schedulers/ alone and nothing else analyses, searches
or exports it as some other kind. What counts, in non-test code:

* Rust (crates/*/src, less crates/core/src/schedulers, less the `#[cfg(test)] mod` at a file's
  end): a line naming a variant of `SchedulerConfig` (`SchedulerConfig::Tas`, or through an alias
  `use ... SchedulerConfig as S`), a comparison of `kind_name()` or `kind()`, and a match arm on a
  kind's name written as a string (`"tas" =>`);
* Python (python/rtnetlab): a comparison of a `kind` with a scheduler kind's name written as a
  string (`d["kind"] == "tas"`, `kind in ("tas", "cbs")`). Python asks the engine instead (what
  the testbed's plan or `resolved()` says of a port).

The files still naming kinds are listed in tools/scheduler_kinds_allowed.txt with the number of
lines found and why. The check fails on a file missing from that list, on a count that differs
(more lines: a new rule outside schedulers/; fewer: lower the count) and on an entry that no longer
finds any line, so the list only shrinks.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = Path(__file__).resolve().with_name("scheduler_kinds_allowed.txt")
SCHEDULERS = "crates/core/src/schedulers/"

VARIANTS = "Fifo|StaticPriority|Wrr|Drr|D2drr|Wf2q|Scfq|Table|TokenBucket|Cbs|Tas|Ats"
KINDS = "fifo|static_priority|wrr|drr|d2drr|wf2q|scfq|table|token_bucket|cbs|tas|ats"
RUST_KIND_COMPARED = re.compile(
    rf'\bkind(_name)?\(\)\s*(==|!=)\s*"({KINDS})"|"({KINDS})"\s*(==|!=)\s*\S*\bkind(_name)?\(\)'
)
RUST_KIND_ARM = re.compile(rf'"({KINDS})"\s*(\|[^=]*)?=>')
TEST_MODULE = re.compile(r"(pub(\(\w+\))? )?mod \w+ \{")
PY_KIND_COMPARED = re.compile(
    rf"""kind\W{{0,3}}\s*(==|!=|\bin\b|\bnot in\b)\s*[(\[{{]?\s*"({KINDS})"|"({KINDS})"\s*(==|!=)\s*\S*kind"""
)


def rust_lines(text: str) -> list[tuple[int, str]]:
    """The non-test lines of a Rust file, numbered: less each inline `#[cfg(test)] mod NAME {`
    (rustfmt closes a top-level module with a `}` alone on its line)."""
    out: list[tuple[int, str]] = []
    lines = text.splitlines()
    skipping = False
    for n, line in enumerate(lines, 1):
        if skipping:
            skipping = line != "}"
        elif line.strip() == "#[cfg(test)]" and n < len(lines) and TEST_MODULE.match(lines[n]):
            skipping = True
        else:
            out.append((n, line))
    return out


def rust_hits(text: str) -> list[tuple[int, str]]:
    aliases = re.findall(r"SchedulerConfig as (\w+)", text)
    names = "|".join(["SchedulerConfig", *aliases])
    variant = re.compile(rf"\b({names})::({VARIANTS})\b")
    return [
        (n, line.strip())
        for n, line in rust_lines(text)
        if not line.lstrip().startswith("//")
        and (variant.search(line) or RUST_KIND_COMPARED.search(line) or RUST_KIND_ARM.search(line))
    ]


def python_hits(text: str) -> list[tuple[int, str]]:
    return [
        (n, line.strip())
        for n, line in enumerate(text.splitlines(), 1)
        if not line.lstrip().startswith("#") and PY_KIND_COMPARED.search(line)
    ]


def test_files(paths: list[Path]) -> set[Path]:
    """The files a `#[cfg(test)] mod NAME;` declares: NAME.rs, or NAME/mod.rs, and all under it."""
    out: set[Path] = set()
    for path in paths:
        here = path.parent if path.name in ("mod.rs", "lib.rs", "main.rs") else path.with_suffix("")
        for name in re.findall(r"#\[cfg\(test\)\]\s*(?:pub(?:\(\w+\))? )?mod (\w+);", path.read_text()):
            out.add(here / f"{name}.rs")
            out.update((here / name).glob("**/*.rs"))
    return out


def found() -> dict[str, list[tuple[int, str]]]:
    out: dict[str, list[tuple[int, str]]] = {}
    rust = sorted(ROOT.glob("crates/*/src/**/*.rs"))
    tests = test_files(rust)
    for path in rust:
        rel = path.relative_to(ROOT).as_posix()
        if path in tests or rel.startswith(SCHEDULERS):
            continue
        if hits := rust_hits(path.read_text()):
            out[rel] = hits
    for path in sorted(ROOT.glob("python/rtnetlab/**/*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if hits := python_hits(path.read_text()):
            out[rel] = hits
    return out


def allowed() -> dict[str, int]:
    """`path count  # why` per line; `#` lines are comments."""
    out: dict[str, int] = {}
    for line in ALLOWED.read_text().splitlines():
        entry = line.split("#", 1)[0].split()
        if entry:
            out[entry[0]] = int(entry[1])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--list", action="store_true", help="every line found, allowed or not")
    args = parser.parse_args()
    hits, allow = found(), allowed()
    if args.list:
        for path, lines in hits.items():
            for n, line in lines:
                print(f"{path}:{n}: {line}")
        return 0
    problems = []
    for path, lines in hits.items():
        where = "\n".join(f"    {path}:{n}: {line}" for n, line in lines)
        if path not in allow:
            problems.append(
                f"{path}: decides by a scheduler's kind outside {SCHEDULERS}; make it a method of the "
                f"`Discipline` trait (crates/core/src/schedulers/mod.rs):\n{where}"
            )
        elif allow[path] != len(lines):
            problems.append(
                f"{path}: {len(lines)} lines name a scheduler kind, {ALLOWED.name} allows {allow[path]}; "
                f"a new rule belongs behind the `Discipline` trait, a removed one lowers the count:\n{where}"
            )
    for path in sorted(set(allow) - set(hits)):
        problems.append(f"{path}: listed in {ALLOWED.name} but names no scheduler kind; remove its line")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
