# Two entry points for a newcomer: `make bench` (the main job) and `make test`.
# Each creates ./.venv and installs gbrank into it on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: bench test lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,bench]"
	touch $(STAMP)

bench: $(STAMP)
	$(PY) experiments/bench.py

test: $(STAMP)
	$(PY) -m ruff check gbrank tests experiments
	$(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check gbrank tests experiments

clean:
	rm -rf $(VENV) build *.egg-info
