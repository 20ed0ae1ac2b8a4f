"""Size rules of the source tree: no function over 150 lines and no module over 1,000 lines of
non-test code, in the Rust crates (crates/*/src) and the Python package (python/rtnetlab).

    .venv/bin/python tools/check_sizes.py          # `make lint` runs it
    .venv/bin/python tools/check_sizes.py --list   # every offender, allowed or not

What counts:

* a function is measured from its `fn`/`def` line to its closing line, comments and blank lines
  included (what a reader scrolls through); a closure or nested function counts within its
  enclosing one, and is measured on its own too;
* a Rust module is its file, less the `#[cfg(test)]` modules written inline in it; a file that a
  `#[cfg(test)] mod NAME;` declares (and everything under it) is test code, as are `#[test]`
  functions, crates/*/tests and crates/*/benches;
* a Python module is its file.

Existing offenders are listed in tools/sizes_allowed.txt, each with a comment saying why it is
there. The check fails on an offender missing from that list, and on an entry that no longer
offends (or no longer exists): a split function or module must leave the list, so it only shrinks.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = Path(__file__).resolve().with_name("sizes_allowed.txt")
MAX_FUNCTION = 150
MAX_MODULE = 1000


@dataclass(frozen=True)
class Offence:
    kind: str  # "function" or "module"
    key: str  # path, or path::name
    lines: int

    def __str__(self) -> str:
        limit = MAX_FUNCTION if self.kind == "function" else MAX_MODULE
        return f"{self.kind} {self.key}: {self.lines} lines (at most {limit})"


# ---------------------------------------------------------------------------------------------
# Rust: a small lexer (comments, strings, raw strings, char literals and lifetimes told apart),
# enough to match braces and find items.

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class Token:
    text: str
    line: int


def rust_tokens(src: str) -> list[Token]:
    """Identifiers, `#`, `[`, `]`, braces, parentheses and `;` with their lines; everything else
    (literals, comments, operators) dropped."""
    out: list[Token] = []
    i, n, line = 0, len(src), 1
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif src.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    line += src[i] == "\n"
                    i += 1
        elif (m := re.match(r'b?r(#*)"', src[i:i + 260])) and (i == 0 or not _ident_char(src[i - 1])):
            end = '"' + m.group(1)
            j = src.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            line += src.count("\n", i, j)
            i = j
        elif c == '"' or (c == "b" and src.startswith('b"', i) and (i == 0 or not _ident_char(src[i - 1]))):
            i += 1 if c == '"' else 2
            while i < n and src[i] != '"':
                if src[i] == "\\":
                    i += 1
                line += i < n and src[i] == "\n"
                i += 1
            i += 1
        elif c == "'":
            # A char literal ('x', '\n', '\u{1F600}', '''), or a lifetime / label ('a).
            if i + 1 < n and src[i + 1] == "\\":
                j = src.find("'", i + 3)
                i = n if j < 0 else j + 1
            elif i + 2 < n and src[i + 2] == "'":
                i += 3
            else:
                i += 1
        elif _ident_char(c) and not c.isdigit():
            m = _IDENT.match(src, i)
            assert m
            out.append(Token(m.group(0), line))
            i = m.end()
        elif c.isdigit():
            m = re.compile(r"[0-9A-Za-z_.]+").match(src, i)
            assert m
            i = m.end()
        else:
            if c in "#[]{}();!":
                out.append(Token(c, line))
            i += 1
    return out


def _ident_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _matching(tokens: list[Token], i: int) -> int:
    """Index of the token closing the bracket at i."""
    open_, close = tokens[i].text, {"{": "}", "[": "]", "(": ")"}[tokens[i].text]
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j].text == open_:
            depth += 1
        elif tokens[j].text == close:
            depth -= 1
            if depth == 0:
                return j
    return len(tokens) - 1


@dataclass
class RustFile:
    functions: list[tuple[str, int]]  # (name, lines) outside test code
    test_lines: int  # lines of inline #[cfg(test)] modules
    test_children: list[str]  # `#[cfg(test)] mod NAME;` declarations


def scan_rust(src: str) -> RustFile:
    toks = rust_tokens(src)
    functions: list[tuple[str, int]] = []
    test_lines = 0
    test_children: list[str] = []
    attrs: list[str] = []  # the attributes before the current item
    i = 0
    while i < len(toks):
        t = toks[i].text
        if t == "#" and i + 1 < len(toks) and toks[i + 1].text in ("[", "!"):
            j = i + 1 if toks[i + 1].text == "[" else i + 2
            end = _matching(toks, j)
            attrs.append(" ".join(x.text for x in toks[j + 1:end]))
            i = end + 1
            continue
        is_test = any(a in ("cfg ( test )", "test") or a.startswith("cfg ( test") for a in attrs)
        if t == "mod" and i + 2 < len(toks) and is_test:
            name, after = toks[i + 1].text, toks[i + 2].text
            if after == ";":
                test_children.append(name)
                i += 3
            elif after == "{":
                end = _matching(toks, i + 2)
                test_lines += toks[end].line - toks[i].line + 1
                i = end + 1
            else:
                i += 1
            attrs = []
            continue
        if t == "fn" and i + 1 < len(toks) and _IDENT.fullmatch(toks[i + 1].text):
            # The body: the first `{` outside parentheses and brackets (a `;` first: no body).
            depth, j = 0, i + 2
            while j < len(toks):
                x = toks[j].text
                if x in "([":
                    depth += 1
                elif x in ")]":
                    depth -= 1
                elif depth == 0 and x in "{;":
                    break
                j += 1
            if j < len(toks) and toks[j].text == "{":
                end = _matching(toks, j)
                if not is_test:
                    functions.append((toks[i + 1].text, toks[end].line - toks[i].line + 1))
                    # Nested functions are measured too: go on inside the body.
                    i = j + 1
                else:
                    i = end + 1
                attrs = []
                continue
        if t in ("{", "}", ";"):
            attrs = []
        i += 1
    return RustFile(functions, test_lines, test_children)


def rust_offences() -> list[Offence]:
    files = sorted(p for p in ROOT.glob("crates/*/src/**/*.rs"))
    scanned = {p: scan_rust(p.read_text()) for p in files}
    test_files: set[Path] = set()
    for p, info in scanned.items():
        base = p.parent if p.name in ("mod.rs", "lib.rs", "main.rs") else p.parent / p.stem
        for name in info.test_children:
            test_files.add(base / f"{name}.rs")
            test_files.update((base / name).rglob("*.rs"))
    out: list[Offence] = []
    for p, info in scanned.items():
        if p in test_files:
            continue
        rel = p.relative_to(ROOT).as_posix()
        lines = len(p.read_text().splitlines()) - info.test_lines
        if lines > MAX_MODULE:
            out.append(Offence("module", rel, lines))
        for name, n in info.functions:
            if n > MAX_FUNCTION:
                out.append(Offence("function", f"{rel}::{name}", n))
    return out


# ---------------------------------------------------------------------------------------------
# Python


def python_offences() -> list[Offence]:
    out: list[Offence] = []
    for p in sorted(ROOT.glob("python/rtnetlab/**/*.py")):
        rel = p.relative_to(ROOT).as_posix()
        text = p.read_text()
        lines = len(text.splitlines())
        if lines > MAX_MODULE:
            out.append(Offence("module", rel, lines))
        for node in ast.walk(ast.parse(text, filename=rel)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION:
                    out.append(Offence("function", f"{rel}::{node.name}", n))
    return out


# ---------------------------------------------------------------------------------------------


def read_allowed(path: Path) -> dict[tuple[str, str], int]:
    """(kind, key) -> line number in the allow-list. Lines: `function PATH::NAME` or `module PATH`,
    then optionally `# why`; blank lines and lines starting with `#` are comments."""
    allowed: dict[tuple[str, str], int] = {}
    for no, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or parts[0] not in ("function", "module") or (parts[0] == "function") != (
            "::" in parts[1]
        ):
            raise SystemExit(f"{path.name}:{no}: expected `function PATH::NAME` or `module PATH`: {raw!r}")
        allowed[(parts[0], parts[1])] = no
    return allowed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="print every offender, allowed or not")
    ap.add_argument("--allowed", type=Path, default=ALLOWED)
    args = ap.parse_args()
    offences = rust_offences() + python_offences()
    allowed = read_allowed(args.allowed)
    if args.list:
        for o in sorted(offences, key=lambda o: -o.lines):
            print(o)
        return 0
    failed = False
    for o in offences:
        if (o.kind, o.key) not in allowed:
            print(f"{o}: split it (or, with a reason, list it in {args.allowed.relative_to(ROOT)})")
            failed = True
    found = {(o.kind, o.key) for o in offences}
    for (kind, key), no in sorted(allowed.items(), key=lambda kv: kv[1]):
        if (kind, key) not in found:
            print(f"{args.allowed.relative_to(ROOT)}:{no}: {kind} {key} is within its limit now (or gone): "
                  "remove it from the list")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
