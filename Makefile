# The README's two commands are `make demo` and `make test`. Each sets up what it needs
# (a virtualenv in .venv, the pinned npm tools in node_modules) only when missing or stale.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PYSTAMP   := $(VENV)/.installed
NODESTAMP := node_modules/.installed
# The checkout's pinned anvil and solc-js, named explicitly: recompute never looks for programs
# in the working directory (docs/executables.md). A value already in the environment wins.
export RECOMPUTE_ANVIL ?= $(CURDIR)/node_modules
export RECOMPUTE_SOLC  ?= $(CURDIR)/node_modules

.PHONY: setup demo test test-fast docs wheel-check lint bench clean layouts vectors

setup: $(PYSTAMP) $(NODESTAMP)

$(PYSTAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	@# `source .venv/bin/activate` names the checkout's pinned anvil and solc-js too (a value
	@# already set wins): the README's tours run from an activated checkout.
	grep -q RECOMPUTE_ANVIL $(VENV)/bin/activate || printf '%s\n' \
	  '# recompute: this checkout'"'"'s pinned anvil and solc-js (docs/executables.md)' \
	  ': "$${RECOMPUTE_ANVIL:=$(CURDIR)/node_modules}" "$${RECOMPUTE_SOLC:=$(CURDIR)/node_modules}"' \
	  'export RECOMPUTE_ANVIL RECOMPUTE_SOLC' >> $(VENV)/bin/activate
	touch $@

$(NODESTAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

demo: setup
	$(PY) -m recompute demo

# The tests run on TEST_WORKERS processes (pytest-xdist; 0: in this one), each test file on one
# worker (its module fixtures, an anvil, a chain built, are made once); a session fixture, the
# devnet, is built once per worker. The files go out in the order tests/conftest.py sets (the
# longest first: one handed out last would leave a worker idle), not xdist's own. Three workers
# on two cores: much of a test's time is spent waiting for anvil, solc-js or a subprocess, and
# the third fills it (the non-serial tests, quiet machine: 314 s with 3, 461 s with 2 at load
# 3-4). The wall-clock tests run alone afterwards (-m serial), unaffected.
TEST_WORKERS ?= 3
PYTEST := $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

test: setup
	$(PY) -m ruff check .
	$(PY) -m mypy
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict
	$(PYTEST) -m 'not serial'
	$(PY) -m pytest -q -m serial

# The documentation site (mkdocs.yml, docs/) into site/; `make test` builds it too.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

# The inner loop: everything that needs no anvil (a test that starts one unmarked fails here)
# and is not marked slow (the contracts' full rebuild; `make test` runs it).
test-fast: setup
	RECOMPUTE_ANVIL=/nonexistent/anvil $(PYTEST) -m 'not anvil and not slow'

# Build the wheel, install it in a fresh virtualenv outside the checkout, run from there.
wheel-check: setup
	PYTHON=$(PYTHON) bash .ci/wheel-check

bench: setup
	$(PY) benchmarks/bench_proofs.py

clean:
	rm -rf $(VENV) node_modules .pytest_cache build dist site

# Regenerate the bundled layout descriptors from the committed artifacts (layouts/sources.json).
layouts: setup
	$(PY) -c "import json,subprocess,sys; [subprocess.run([sys.executable,'-m','recompute','layout','import',a,'-o',f'layouts/{n}.json'],check=True) for n,a in json.load(open('layouts/sources.json')).items()]"

# Rebuild every shipped conformance vector (geth fixtures, a fresh devnet, the seeds' numbers),
# then measure which vectors each rule decides (vectors/rules.json and its README table).
vectors: setup
	$(PY) -m recompute.vectors.catalog
	$(PY) -m recompute.vectors.inventory
