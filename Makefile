# Two commands set everything up on a fresh machine:
#   make demo   - install into .venv and run the main job on the bundled example session
#   make test   - install into .venv (with test extras) and run the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
DEMO_DIR ?= build/demo

.PHONY: demo test check-imports test-fast test-slow test-agents-sdk typecheck install install-test lock clean bench coverage

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The installs are file targets: a stamp in the venv, newer than
# pyproject.toml (the package's metadata and dependencies), means there is
# nothing to do, so a second `make demo` or `make test` skips pip. The
# package is installed editable: changed sources need no reinstall.
INSTALLED = $(VENV)/.installed
INSTALLED_TEST = $(VENV)/.installed-test

# Every install takes the exact releases of requirements/constraints.txt
# (pip constraints), so a new upstream release cannot change what a fresh
# machine installs; `make lock` refreshes that file. CONSTRAINTS= (empty)
# installs the newest allowed releases instead.
CONSTRAINTS ?= requirements/constraints.txt
CONSTRAINT_ARGS = $(if $(CONSTRAINTS),-c $(CONSTRAINTS))

install: $(INSTALLED)

$(INSTALLED): pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(BIN)/pip install --quiet $(CONSTRAINT_ARGS) -e '.[models,web]'
	@touch $@

# llama-cpp-python (the slow test's local model server) builds from source
# once; pip keeps the wheel in its cache (~/.cache/pip/wheels), so a second
# `make test`, even in a fresh .venv, reuses it. Build on every core, for
# AVX2 rather than for the build machine's own CPU: a virtual machine may
# advertise AMX or AVX-512 extensions the guest cannot use, and a native
# build then crashes on the model's first batch. CMAKE_ARGS overrides.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

install-test: $(INSTALLED_TEST)

$(INSTALLED_TEST): pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	@$(BIN)/python -c "import llama_cpp" 2>/dev/null || echo "Installing the test extras into $(VENV). The first time, pip builds llama-cpp-python (the slow test's local model server) from source: 10-25 minutes on 2 cores, with no output meanwhile; later runs reuse the wheel in pip's cache."
	CMAKE_ARGS="$${CMAKE_ARGS:-$(LLAMA_CMAKE_ARGS)}" \
	CMAKE_BUILD_PARALLEL_LEVEL=$${CMAKE_BUILD_PARALLEL_LEVEL:-$$(nproc 2>/dev/null || echo 2)} \
		$(BIN)/pip install --quiet $(CONSTRAINT_ARGS) -e '.[test,server]'
	@touch $@

# Refresh requirements/constraints.txt: resolve the newest releases that
# pyproject.toml and requirements/bounds.txt allow in a scratch venv (every
# extra), run nothing, freeze them. Then run `make test` and commit the file;
# a new upper bound goes in requirements/bounds.txt with its reason.
LOCK_VENV = build/lock-venv

lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --quiet --upgrade pip
	CMAKE_ARGS="$${CMAKE_ARGS:-$(LLAMA_CMAKE_ARGS)}" \
	CMAKE_BUILD_PARALLEL_LEVEL=$${CMAKE_BUILD_PARALLEL_LEVEL:-$$(nproc 2>/dev/null || echo 2)} \
		$(LOCK_VENV)/bin/pip install --quiet -c requirements/bounds.txt -e '.[test,server,models,web,postgres,agents,pydantic-ai]'
	{ sed -n '1,/^$$/p' requirements/constraints.txt; $(LOCK_VENV)/bin/pip freeze --exclude-editable | LC_ALL=C sort -f; } > requirements/constraints.txt.new
	mv requirements/constraints.txt.new requirements/constraints.txt
	rm -rf $(LOCK_VENV)

demo: install
	@mkdir -p $(DEMO_DIR)
	@cp examples/demo-session.jsonl $(DEMO_DIR)/demo-session.jsonl
	$(BIN)/pi-session info $(DEMO_DIR)/demo-session.jsonl
	$(BIN)/pi-session tree $(DEMO_DIR)/demo-session.jsonl
	$(BIN)/pi-session tokens $(DEMO_DIR)/demo-session.jsonl
	$(BIN)/pi-session compact $(DEMO_DIR)/demo-session.jsonl --keep-recent-tokens 4000 --provider extractive
	$(BIN)/pi-session tokens $(DEMO_DIR)/demo-session.jsonl
	$(BIN)/pi-session context $(DEMO_DIR)/demo-session.jsonl | head -40

typecheck: install-test
	$(BIN)/mypy

# Two workers (pytest-xdist), whole test files per worker (module fixtures
# such as the browser start once). The oracle installs pi's npm package on
# its first call: warm it up once here, not in two workers at the same time.
ORACLE = ../shared/pi-oracle/pi-oracle
PYTEST_WORKERS ?= 2

test-fast: install-test check-imports
	@if [ -x $(ORACLE) ] && command -v node >/dev/null; then \
		PI_ORACLE_PI=1.6.0 $(ORACLE) version >/dev/null || echo "oracle warm-up failed (its tests will say why)"; fi
	$(BIN)/python -m pytest -q -m "not slow" -n $(PYTEST_WORKERS) --dist loadfile

test-slow: install-test
	$(BIN)/python -m pytest -q -m slow

# Layout: no import cycles, no new cross-module private imports (also in
# tests), sizes. Standard library only, so it runs before the install.
check-imports:
	$(PYTHON) scripts/check_imports.py

# The OpenAI Agents SDK's own session tests against PiSession, once per
# store (tests/agents_sdk/README.md): plain files, a file store, SQLite and
# PostgreSQL (PI_SESSION_TEST_POSTGRES, else a private cluster; .ci/run
# requires it). Their own pytest.ini (the SDK's settings), not ours.
AGENTS_SDK_STORES ?= files filestore sqlite postgres

test-agents-sdk: install-test
	@status=0; for store in $(AGENTS_SDK_STORES); do \
		echo "== Agents SDK session tests on PiSession: $$store"; \
		$(BIN)/python -m pytest -q -c tests/agents_sdk/pytest.ini --rootdir tests/agents_sdk \
			-n $(PYTEST_WORKERS) --pi-store $$store tests/agents_sdk/tests || status=1; \
	done; exit $$status

test: check-imports typecheck test-fast test-slow test-agents-sdk

# Line coverage of the fast suite (subprocesses included; see
# [tool.coverage.run] in pyproject.toml). Not run in CI: it takes minutes.
coverage: install-test
	$(BIN)/python -m pytest -q -m "not slow" --cov --cov-report=term

bench: install
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build .pytest_cache
