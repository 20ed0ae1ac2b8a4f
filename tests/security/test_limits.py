"""Small inputs that used to take the host down (the issue's `seeds: 100000000`, 200,000,000 VLs,
`--workers 24` on two cores, `--messages 200000000`) are refused before anything starts: exit 2,
one line naming the option and the limit, nothing written, and no more memory than the same
command refusing a one-word mistake. Then the limits themselves, fuzzed (Hypothesis)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtnetlab import limits
from rtnetlab.errors import UserError

SCALE = max(1, int(os.environ.get("RTNETLAB_FUZZ_SCALE", "1")))
NET = Path(__file__).resolve().parents[2] / "examples" / "seed002_four_vls.yaml"
SPEC = """
network: {{generate: {{virtual_links: 10, switches: 1, planes: 1}}}}
vary: {{generate.virtual_links: {vls}}}
seeds: {seeds}
run: {{analyze: {{methods: [tfa]}}}}
"""


@pytest.fixture(autouse=True)
def _default_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(limits.ENV, raising=False)
    limits.set_options([])


def run_measured(args: list[str], cwd: Path) -> tuple[int, str, int]:
    """(exit code, stderr, peak resident memory in KiB) of one command."""
    p = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         env={k: v for k, v in os.environ.items() if k != limits.ENV})
    stderr = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, stderr, usage.ru_maxrss


def workers_attack() -> int:
    return max(24, limits.limit("workers") + 1)


SWEEP = ["sweep", "{spec}", "--out", "{out}"]
# (what the issue reported, the arguments, the SPEC's values, the peer: the same command with a
# one-word mistake (other SPEC values, or other arguments), the place and the limit named)
ATTACKS = [
    ("seeds: 100000000", SWEEP, {"seeds": 100_000_000, "vls": "[10, 20, 30]"},
     {"seeds": 0, "vls": "[10, 20, 30]"}, "spec.yaml:seeds", "rows"),
    ("a SPEC's 200,000,000 VLs", SWEEP, {"seeds": 1, "vls": "[200000000]"}, {"seeds": 0, "vls": "[10]"},
     "spec.yaml:vary.generate.virtual_links", "vls"),
    ("generate afdx --vls 200000000", ["generate", "afdx", "--vls", "200000000", "-o", "{out}.yaml"], None,
     ["generate", "afdx", "--vls", "10", "--planes", "3", "-o", "{out}.yaml"], "--vls", "vls"),
    ("--workers 24", [*SWEEP, "--workers", "{workers}"], {"seeds": 2, "vls": "[10]"},
     [*SWEEP, "--workers", "0"], "--workers", "workers"),
    ("experiment soundness --networks 100000000",
     ["experiment", "soundness", "--networks", "100000000", "--out", "{out}"], None,
     ["experiment", "soundness", "--networks", "0", "--out", "{out}"], "--networks", "rows"),
    ("middleware pubsub --messages 200000000", ["middleware", "pubsub", "--messages", "200000000"], None,
     ["middleware", "pubsub", "--messages", "0"], "--messages", "messages"),
    # Counts of the other commands, each within a limit too.
    ("experiment dopa --sets 100000000",
     ["experiment", "dopa", "--sets", "100000000", "--out-dir", "{out}"], None,
     ["experiment", "dopa", "--sets", "0", "--out-dir", "{out}"], "--sets", "rows"),
    ("experiment dopa --points 100000000",
     ["experiment", "dopa", "--points", "100000000", "--out-dir", "{out}"], None,
     ["experiment", "dopa", "--points", "0", "--out-dir", "{out}"], "--points", "rows"),
    ("experiment nss-overhead --seeds 100000000",
     ["experiment", "nss-overhead", "--seeds", "100000000"], None,
     ["experiment", "nss-overhead", "--seeds", "0"], "--seeds", "rows"),
    ("experiment nss-overhead --packets 10000000000",
     ["experiment", "nss-overhead", "--packets", "10000000000"], None,
     ["experiment", "nss-overhead", "--packets", "0"], "--packets", "messages"),
    ("experiment seed001e-fig6 --sets 100000000",
     ["experiment", "seed001e-fig6", "--sets", "100000000", "--out", "{out}"], None,
     ["experiment", "seed001e-fig6", "--sets", "0", "--out", "{out}"], "--sets", "rows"),
    ("experiment seed001d-table2 --max-vls 100000000",
     ["experiment", "seed001d-table2", "--max-vls", "100000000", "--out", "{out}"], None,
     ["experiment", "seed001d-table2", "--max-vls", "0", "--out", "{out}"], "--max-vls", "vls"),
    ("experiment seed001d-table2 --sets 100000000",
     ["experiment", "seed001d-table2", "--sets", "100000000", "--out", "{out}"], None,
     ["experiment", "seed001d-table2", "--sets", "0", "--out", "{out}"], "--sets", "rows"),
    ("experiment seed003-fabric --endpoints 100000000",
     ["experiment", "seed003-fabric", "--endpoints", "100000000", "--out", "{out}"], None,
     ["experiment", "seed003-fabric", "--endpoints", "0", "--out", "{out}"], "--endpoints", "nodes"),
    ("worst-case --workers 24", ["worst-case", "{net}", "--workers", "{workers}"], None,
     ["worst-case", "{net}", "--workers", "0"], "--workers", "workers"),
]  # fmt: skip


@pytest.mark.parametrize("what, args, spec, peer, place, name", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_a_small_input_is_refused_before_anything_starts(
    rtnetlab, tmp_path, what, args, spec, peer, place, name
):
    out = tmp_path / "out"
    spec_file = tmp_path / "spec.yaml"

    def argv(template: list[str], values: dict | None) -> list[str]:
        if values is not None:
            spec_file.write_text(SPEC.format(**values))
        subst = {"spec": "spec.yaml", "out": "out", "workers": str(workers_attack()), "net": str(NET)}
        return [str(rtnetlab), *(a.format(**subst) for a in template)]

    rc, stderr, rss = run_measured(argv(args, spec), tmp_path)
    assert rc == 2, stderr
    assert len(stderr.splitlines()) == 1 and "Traceback" not in stderr, stderr
    # A SPEC's place comes with its line and column in the file.
    file, sep, inner = place.partition(":")
    prefix = re.escape(f"{place}: ") if not sep else rf"{re.escape(file)}:\d+:\d+: {re.escape(inner)}: "
    assert re.match(prefix, stderr) and "more than the limit of" in stderr, stderr
    assert f"(raise it with --limit {name}=N or RTNETLAB_LIMITS={name}=N)" in stderr
    assert not out.exists() and not (tmp_path / "out.yaml").exists()
    peer_argv = argv(args, peer) if isinstance(peer, dict) else argv(peer, spec)
    peer_rc, peer_stderr, peer_rss = run_measured(peer_argv, tmp_path)
    assert peer_rc == 2, peer_stderr
    # Refused at the same point as a typo: not after allocating what was asked for.
    assert rss <= 2 * peer_rss, (what, rss, peer_rss)


def test_a_limit_is_raised_or_lowered_by_option_and_environment(tmp_path, monkeypatch):
    from rtnetlab.sweep import spec as spec_mod

    data = {"network": {"generate": {"virtual_links": 5}}, "vary": {"generate.virtual_links": [5, 6]},
            "seeds": 3, "run": {"analyze": {}}}
    assert spec_mod.parse(data, "s.yaml", tmp_path).rows() == 6
    limits.set_options(["rows=5"])
    with pytest.raises(UserError, match=r"^s\.yaml:seeds: 6 rows \(2 points x 3 seeds\), more than the limit "
                                        r"of 5 \(raise it with --limit rows=N or RTNETLAB_LIMITS=rows=N\)$"):
        spec_mod.parse(data, "s.yaml", tmp_path)
    limits.set_options([])
    monkeypatch.setenv(limits.ENV, "rows=5,flows=2,000,000")
    with pytest.raises(UserError, match="more than the limit of 5"):
        spec_mod.parse(data, "s.yaml", tmp_path)
    assert limits.limit("flows") == 2_000_000 and limits.engine_settings() == ["flows=2,000,000"]
    # An option comes after the environment.
    limits.set_options(["rows=6"])
    assert spec_mod.parse(data, "s.yaml", tmp_path).rows() == 6
    monkeypatch.setenv(limits.ENV, "row=5")
    every = "size, depth, values, aliases, nodes, flows, paths, errors, rows, workers, vls, messages"
    with pytest.raises(UserError) as refused:
        limits.limit("rows")
    assert str(refused.value) == f"RTNETLAB_LIMITS: unknown limit 'row' (limits: {every}, requests, duration)"


def test_the_defaults_are_sized_from_this_host():
    assert limits.limit("workers") == max(2, len(os.sched_getaffinity(0)))
    memory = limits.memory_bytes()
    for name, per in (("rows", 16384), ("vls", 16384), ("messages", 512), ("requests", 512)):
        value = limits.limit(name)
        assert value <= memory / per < 10 * value  # the 1-2-5 step at or below memory / per
        assert re.fullmatch(r"[125]0*", str(value)), value
    assert limits.limit("duration") == 3600


# --- Fuzzing the rule (Hypothesis; `make soak` multiplies the examples by RTNETLAB_FUZZ_SCALE). ---

NAMES = list(limits.OPTION_LIMITS) + ["nodes", "flows", "paths", "values", "aliases", "errors"]


def examples(n: int):
    return settings(max_examples=n * SCALE, deadline=None, database=None, derandomize=SCALE == 1)


def grouped_variants(n: int) -> st.SearchStrategy[str]:
    """`n` as users write it: plain, with thousands separators, or with underscores."""
    return st.sampled_from([str(n), f"{n:,}", f"{n:_}"])


@examples(300)
@given(
    name=st.sampled_from(NAMES),
    top=st.integers(1, 10**15),
    value=st.integers(0, 10**16),
    data=st.data(),
    through=st.sampled_from(["option", "environment"]),
)
def test_check_refuses_exactly_above_the_limit_in_one_line(name, top, value, data, through):
    setting = f"{name}={data.draw(grouped_variants(top))}"
    os.environ.pop(limits.ENV, None)
    limits.set_options([])
    try:
        if through == "option":
            limits.set_options([setting])
        else:
            os.environ[limits.ENV] = setting
        assert limits.limit(name) == top
        try:
            limits.check(name, value, "--opt")
        except UserError as e:
            message = str(e)
            assert value > top
            assert "\n" not in message and message.startswith("--opt: ")
            assert f"more than the limit of {top:,}" in message
            assert message.endswith(f"(raise it with --limit {name}=N or RTNETLAB_LIMITS={name}=N)")
        else:
            assert value <= top
    finally:
        os.environ.pop(limits.ENV, None)
        limits.set_options([])


@examples(300)
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=30), max_size=4))
def test_any_setting_is_accepted_or_refused_in_one_line(settings_text):
    try:
        limits.set_options(settings_text)
    except UserError as e:
        assert str(e).startswith("--limit: ") and "\n" not in str(e).strip("\n"), str(e)
    finally:
        limits.set_options([])


@examples(200)
@given(st.dictionaries(st.sampled_from(NAMES), st.integers(1, 10**12), min_size=1), st.data())
def test_settings_split_as_the_engine_splits_them(values, data):
    """`a=1,000,000,b=2 c=3`: a comma starts a new setting only before `NAME=`."""
    parts = [f"{k}={data.draw(grouped_variants(v))}" for k, v in values.items()]
    text = parts[0] + "".join(data.draw(st.sampled_from([",", " ", " ,", ", "])) + p for p in parts[1:])
    assert [s.replace(",", "").replace("_", "") for s in limits.split(text)] == [
        p.replace(",", "").replace("_", "") for p in parts
    ]
    limits.set_options([text])
    try:
        assert all(limits.limit(k) == v for k, v in values.items())
    finally:
        limits.set_options([])
