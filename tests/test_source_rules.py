"""tools/check_sizes.py, the size rules of `make lint`: its Rust reader on the constructs that could
mislead a brace count, and the tree as it is (no offender outside the allow-list, no stale entry)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from conftest import REPO_ROOT

_spec = importlib.util.spec_from_file_location("check_sizes", REPO_ROOT / "tools" / "check_sizes.py")
assert _spec and _spec.loader
sizes = importlib.util.module_from_spec(_spec)
sys.modules["check_sizes"] = sizes
_spec.loader.exec_module(sizes)

RUST = """\
/// A doc comment with a brace {
fn tricky<'a>(x: &'a str) -> char {
    let open = '{';
    let quote = '\\'';
    let s = "}}} \\" {";
    let r = r#"}"#;
    /* } /* nested } */ */
    'outer: loop { break 'outer; }
    let f = |c: char| c == '}';
    open
}

trait T { fn no_body(&self); }

fn after() {
    fn inner() {}
}

#[cfg(test)]
mod tests {
    fn long_test_helper() {
    }
}

#[cfg(test)]
mod more;
"""


def test_rust_reader_matches_braces_past_literals_and_comments():
    info = sizes.scan_rust(RUST)
    assert info.functions == [("tricky", 10), ("after", 3), ("inner", 1)]
    assert info.test_lines == 4 and info.test_children == ["more"]


def test_a_long_function_offends(tmp_path):
    body = "\n".join(["fn long() {", *["    let _ = 1;"] * 150, "}"])
    assert sizes.scan_rust(body).functions == [("long", 152)]


@pytest.mark.parametrize("line", ["function a.rs", "module", "file a.rs"])
def test_malformed_allow_list_line_is_refused(tmp_path, line):
    path = tmp_path / "allowed.txt"
    path.write_text(f"# comment\n{line}\n")
    with pytest.raises(SystemExit, match="allowed.txt:2"):
        sizes.read_allowed(path)


def test_tree_keeps_the_rules():
    r = subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "check_sizes.py")], capture_output=True,
                       text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
