# The two commands of the README: `make demo` and `make test`. Both set up .venv first.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
# Elsewhere, get torch's CPU wheel with: make demo PIP_EXTRA="--extra-index-url https://download.pytorch.org/whl/cpu"
PIP_EXTRA ?=

.PHONY: demo test lint install system-packages pgvector

$(BIN)/kb: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --editable '.[test]' $(PIP_EXTRA)
	touch $(BIN)/kb

# The embedded Postgres's pgvector, rebuilt for this CPU when it lacks AVX-512 (a no-op
# otherwise, and once done): see deploy/portable-pgvector.sh.
pgvector: $(BIN)/kb
	deploy/portable-pgvector.sh $(BIN)/python

install: $(BIN)/kb pgvector

demo: install
	$(BIN)/kb demo

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy bot agent store jobs

# Debian packages the tests need (headless Chromium and a font), installed when missing.
system-packages:
	scripts/test-system-packages.sh

test: system-packages lint
	$(BIN)/python -m pytest
