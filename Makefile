# Two entry points for a newcomer: `make tune` (the main job) and `make test`.
# Each creates ./.venv and installs gbrank into it (editable, with the extras
# dev, tune, bench, anchor, dask, postgres and catboost) on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
EXTRAS := dev,tune,bench,anchor,dask,postgres,catboost
ARGS ?=
# pytest processes (pytest-xdist): CI has 2 cores, and the suite's cost is mostly numba
# compiling kernels on an empty cache, one core per process. 0 runs in this process.
TEST_WORKERS ?= 2
TEST_OPTS := -n $(TEST_WORKERS) --dist loadfile

.PHONY: tune bench test test-fast test-min wheel lint docs clean clean-cache

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[$(EXTRAS)]"
	touch $(STAMP)

tune: $(STAMP)
	$(PY) -m gbrank tune $(ARGS)

bench: $(STAMP)
	$(PY) experiments/bench/bench.py $(ARGS)

# The full suite, as CI runs it; the slowest tests' cost is printed at the end.
test: $(STAMP)
	$(PY) -m ruff check gbrank tests experiments docs
	$(PY) -m pytest -q $(TEST_OPTS) --durations=15

# The edit-test loop: everything but the tests marked slow.
test-fast: $(STAMP)
	$(PY) -m pytest -q $(TEST_OPTS) -m "not slow" --durations=15

# The fast tests against the declared minimum versions (a separate venv).
test-min:
	bash .ci/min_versions.sh

# Build the wheel and smoke-test it in a clean venv outside the checkout.
wheel: $(STAMP)
	bash .ci/wheel.sh

lint: $(STAMP)
	$(PY) -m ruff check gbrank tests experiments docs

# The documentation site (docs/, Sphinx) into docs/_build/html, as CI builds it: warnings
# are errors (a broken cross-reference, a malformed docstring section, a gallery example
# that fails). The docs extra is installed into .venv once, beside the others.
DOCS_STAMP := $(VENV)/.installed-docs
SPHINXOPTS ?= -W --keep-going -q

$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(PY) -m sphinx -b html $(SPHINXOPTS) docs docs/_build/html
	@echo "docs: open docs/_build/html/index.html"

clean: clean-cache
	rm -rf $(VENV) build dist *.egg-info docs/_build docs/api/generated docs/auto_examples \
		docs/sg_execution_times.rst

# numba's compiled kernels beside the package (stale after editing a called module).
clean-cache:
	find gbrank -name '*.nbi' -delete -o -name '*.nbc' -delete
