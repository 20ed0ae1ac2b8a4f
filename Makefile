# rtnetlab: `make demo` runs the case study, `make test` runs every test.
# Both set up everything on a fresh machine: a virtual environment in .venv with every Python
# dependency, and the Rust extension built into it.
#
# Python dependencies are declared in ONE place, pyproject.toml: [project] dependencies (what
# `pip install .` needs) and [project.optional-dependencies] (dev, report, testbed, middleware,
# sweep, cloud: a capability adds its own group). This Makefile installs the versions pinned in
# requirements.lock: after changing pyproject.toml, run `make lock` and commit both files. There
# is no PY_DEPS list here any more; do not add one.

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.deps-stamp
BUILD_STAMP := $(VENV)/.build-stamp
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock pyproject.toml

.PHONY: all setup build demo check test test-rust test-python test-slow soak lint lock docs wheel wheel-test bench bench-guard bench-wopanet bench-ns3 bench-testbed bench-sweep clean

all: build

$(STAMP): Makefile pyproject.toml requirements.lock
	@command -v cargo >/dev/null || { echo "error: cargo (Rust) is required; install it with rustup"; exit 2; }
	@# tshark reads the simulator's pcapng traces in the tests (Debian package).
	@command -v tshark >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null; }
	@# shellcheck checks the shell scripts rtnetlab writes (export tc) in the tests (Debian package).
	@command -v shellcheck >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null; }
	@# Headless Chromium opens the HTML report in the tests (Debian package).
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	@# ddsperf cross-checks the middleware laboratory's DDS rows (Debian package).
	@command -v ddsperf >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cyclonedds-tools >/dev/null; }
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.lock
	touch $@

setup: $(STAMP)

# requirements.lock from pyproject.toml: every dependency and extra pinned, for Python 3.10 and later.
lock: $(STAMP)
	$(VENV)/bin/uv pip compile pyproject.toml --all-extras --universal --python-version 3.10 --no-header \
		--quiet -o requirements.lock.new
	{ sed -n '1,3p' requirements.lock; cat requirements.lock.new; } > requirements.lock.tmp
	rm requirements.lock.new && mv requirements.lock.tmp requirements.lock

$(BUILD_STAMP): $(STAMP) $(RUST_SOURCES)
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release --quiet
	@# The testbed's end systems and user-space switch (rtnetlab testbed finds target/release).
	cargo build --release --quiet -p rtnetlab-testbed
	touch $@

build: $(BUILD_STAMP)
	@# pip compiles the bytecode of what it installs, not of the editable rtnetlab package: without
	@# this, an environment that never writes bytecode (PYTHONDONTWRITEBYTECODE) compiles the front
	@# on every start (~0.09 s per command). Incremental: only changed modules are compiled again.
	$(PY) -m compileall -q python/rtnetlab

demo: build
	$(VENV)/bin/rtnetlab demo

# The documentation site (mkdocs.yml): docs/ and the API's docstrings (mkdocstrings), built
# strictly (a broken link fails) into site/. tests/test_docs.py builds it too and runs its examples.
docs: build
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# The fast loop once built: the build, every lint (ruff, the import contracts, types, sizes,
# clippy, rustfmt), the engine's unit tests of its base layers and the Python tests that are not
# `slow`, `needs_root` or `integration` (whole commands and experiments, seconds each: `make test`
# runs them).
check: build lint
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	cargo fmt --all --check
	@# The engine's unit tests of the layers everything stands on (units, model, schedulers, curves,
	@# generator); the analyses', simulator's and synthesis' property runs take minutes
	@# unoptimised and run in `make test`.
	cargo test --workspace --lib --quiet -- units:: model:: schedulers:: curves:: generate:: choice::
	$(call pytest_two_passes,not slow and not needs_root and not integration,)

test: test-rust lint test-python

test-rust: $(STAMP)
	cargo test --workspace --quiet
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	cargo fmt --all --check

# The public Python API is typed (python/rtnetlab/py.typed): its modules checked strictly, and
# the tests that use it as a user would, as a user's code is.
API_MODULES := $(addprefix python/rtnetlab/,__init__.py network.py result.py display.py quantities.py synthesis.py studies.py lab.py what_if.py)

lint: $(STAMP)
	$(VENV)/bin/ruff check python tests benchmarks tools
	@# The Python layers' contracts ([tool.importlinter] in pyproject.toml).
	@# The package from the source tree: lint runs before `build` installs it (make test).
	PYTHONPATH=python $(VENV)/bin/lint-imports --no-cache
	@# The package's types ([tool.mypy] in pyproject.toml).
	$(VENV)/bin/mypy
	@# No function over 150 lines, no non-test module over 1,000 (offenders: tools/sizes_allowed.txt).
	$(PY) tools/check_sizes.py
	@# No rule by a scheduler's kind outside crates/core/src/schedulers (listed: tools/scheduler_kinds_allowed.txt).
	$(PY) tools/check_scheduler_kinds.py
	$(VENV)/bin/mypy --strict --follow-imports=silent --ignore-missing-imports $(API_MODULES)
	$(VENV)/bin/mypy --follow-imports=silent --ignore-missing-imports tests/test_api.py tests/test_api_studies.py tests/test_cli_api.py

# The Python tests of a selection ($(1); pytest options $(2)) in two passes: first those that keep
# to their own files, on TEST_WORKERS processes (pytest-xdist); then, alone on the host and one at
# a time, those marked `host` (namespaces, cgroups, latency measurements: tests/conftest.py). Both
# passes run; either failing fails (5: the selection has no test of that kind).
TEST_WORKERS ?= 2
pytest_two_passes = rc=0; \
	$(VENV)/bin/pytest -q -n $(TEST_WORKERS) -m "($(1)) and not host" $(2) || [ $$? -eq 5 ] || rc=1; \
	$(VENV)/bin/pytest -q -m "($(1)) and host" $(2) || [ $$? -eq 5 ] || rc=1; \
	exit $$rc

test-python: build
	$(call pytest_two_passes,not slow,--durations=15)

test-slow: build
	$(VENV)/bin/pytest -q -m slow
	cargo test --release -p rtnetlab-core --test cyclic_soundness -- --ignored

# The fuzzing of `make test` (about 10,000 cases: tests/test_fuzz.py, crates/core/tests/fuzz_loader.rs)
# at SOAK times as many cases, seeds drawn afresh (default 50: about an hour on two cores).
SOAK ?= 50
soak: build
	RTNETLAB_FUZZ_SCALE=$(SOAK) cargo test --release -p rtnetlab-core --test fuzz_loader
	RTNETLAB_FUZZ_SCALE=$(SOAK) $(VENV)/bin/pytest -q -p no:cacheprovider tests/test_fuzz.py

bench: build
	$(PY) benchmarks/run.py
	$(PY) benchmarks/sim_bench.py
	$(PY) benchmarks/load_bench.py
	@# Synthesis and fixed priority: branch-and-bound vs brute force (seed 001D), DOPA Fig. 6 timing.
	cargo bench -p rtnetlab-core --bench afdx_config
	cargo bench -p rtnetlab-core --bench dopa

# The speed guard: the simulator's instructions per frame-hop and the analyses' instructions under
# callgrind against benchmarks/baseline.json; exit 1 on a drop of more than 20 % (a few minutes;
# needs valgrind). `$(PY) benchmarks/guard.py --record` writes a new baseline (say why in its commit).
bench-guard: $(STAMP)
	@command -v valgrind >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null; }
	$(PY) benchmarks/guard.py

# Sweeps: overhead per tiny point, 1 -> 2 worker scaling, the 10,000-network soundness campaign
# (about 15 minutes on two cores).
bench-sweep: build
	$(PY) benchmarks/sweep_bench.py --campaign 10000

# The simulator on a 265-VL single-plane WOPANet import, whole processes, against the SimPy peer.
bench-wopanet: build
	$(PY) benchmarks/sim_wopanet.py

# What the testbed's kernel and user-space switches forward per second (root; about a minute).
bench-testbed: build
	$(PY) benchmarks/testbed_switch.py

# The same with the ns-3 peer too (installs Debian's ns-3 and a C++ compiler when missing).
bench-ns3: build
	@pkg-config --exists ns3-core 2>/dev/null && command -v g++ >/dev/null || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libns3-dev libgsl-dev g++ pkg-config >/dev/null; }
	$(PY) benchmarks/sim_wopanet.py --ns3

# The middleware laboratory's full runs (root: namespaces, cgroups): seed 001A's pub/sub sweep on
# one host and on two boards and its cWalker Table I, seed 001B's five scenarios, seed 001C's
# request/response; JSON and their HTML pages in out/middleware/ (docs/MIDDLEWARE.md).
.PHONY: middleware-full
middleware-full: build
	mkdir -p out/middleware
	$(VENV)/bin/rtnetlab middleware pubsub --messages 10000 --json > out/middleware/pubsub-local.json
	$(VENV)/bin/rtnetlab middleware pubsub --messages 10000 --placement two-boards --backends udp,zeromq,dds,zenoh --json > out/middleware/pubsub-two-boards.json
	$(VENV)/bin/rtnetlab middleware cwalker --duration 30s --backends udp,zeromq,dds,zenoh --json > out/middleware/cwalker.json
	$(VENV)/bin/rtnetlab middleware partitions --requests 10000 --json > out/middleware/partitions.json
	$(VENV)/bin/rtnetlab middleware reqresp --requests 10000 --json > out/middleware/reqresp.json
	$(VENV)/bin/rtnetlab middleware report out/middleware/*.json

# An abi3 wheel (one for CPython 3.10+) in dist/, the testbed's program inside it (rtnetlab/bin):
# `pip install dist/rtnetlab-*.whl` needs no Rust toolchain. `make wheel-test` installs it in a
# fresh virtual environment without cargo on PATH and runs the CLI's smoke tests and the seed 002
# notebook from it (tests/test_wheel.py).
# Both the engine and the testbed's program are linked against glibc 2.17 (zig as the linker), so
# the wheel is manylinux2014 (manylinux_2_17): it installs on every maintained Linux distribution,
# not only on those as recent as the machine that built it.
WHEEL_TARGET := $(shell uname -m)-unknown-linux-gnu
wheel: $(STAMP)
	PATH=$(abspath $(VENV))/bin:$$PATH cargo zigbuild --release --quiet -p rtnetlab-testbed --target $(WHEEL_TARGET).2.17
	rm -rf dist && mkdir -p python/rtnetlab/bin
	cp target/$(WHEEL_TARGET)/release/rtnetlab-testbed python/rtnetlab/bin/
	PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin build --release --quiet --zig --compatibility manylinux2014 \
		--out dist; rc=$$?; rm -rf python/rtnetlab/bin; exit $$rc
	@ls dist/*.whl

wheel-test: wheel
	RTNETLAB_WHEEL_TEST=1 $(VENV)/bin/pytest -q -s -p no:cacheprovider tests/test_wheel.py

clean:
	rm -rf $(VENV) target dist site
