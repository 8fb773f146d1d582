# The README's two commands are `make demo` and `make test`. Each sets up what it needs
# (a virtualenv in .venv, the pinned npm tools in node_modules) only when missing or stale.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PYSTAMP   := $(VENV)/.installed
NODESTAMP := node_modules/.installed

.PHONY: setup demo test test-fast wheel-check lint bench clean layouts vectors

setup: $(PYSTAMP) $(NODESTAMP)

$(PYSTAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	touch $@

$(NODESTAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

demo: setup
	$(PY) -m recompute demo

test: setup
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m pytest -q

# The inner loop: everything that needs no anvil (a test that starts one unmarked fails here).
test-fast: setup
	RECOMPUTE_ANVIL=/nonexistent/anvil $(PY) -m pytest -q -m 'not anvil'

# Build the wheel, install it in a fresh virtualenv outside the checkout, run from there.
wheel-check: setup
	PYTHON=$(PYTHON) bash .ci/wheel-check

bench: setup
	$(PY) benchmarks/bench_proofs.py

clean:
	rm -rf $(VENV) node_modules .pytest_cache build dist

# Regenerate the bundled layout descriptors from the committed artifacts (layouts/sources.json).
layouts: setup
	$(PY) -c "import json,subprocess,sys; [subprocess.run([sys.executable,'-m','recompute','layout','import',a,'-o',f'layouts/{n}.json'],check=True) for n,a in json.load(open('layouts/sources.json')).items()]"

# Rebuild every shipped conformance vector (geth fixtures, a fresh devnet, the seeds' numbers),
# then measure which vectors each rule decides (vectors/rules.json and its README table).
vectors: setup
	$(PY) -m recompute.vectors.catalog
	$(PY) -m recompute.vectors.inventory
