# The two commands of the README: `make demo` and `make test`. Both set up .venv first.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
# Elsewhere, get torch's CPU wheel with: make demo PIP_EXTRA="--extra-index-url https://download.pytorch.org/whl/cpu"
PIP_EXTRA ?=

.PHONY: demo test lint install

$(BIN)/kb: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --editable '.[test]' $(PIP_EXTRA)
	touch $(BIN)/kb

install: $(BIN)/kb

demo: $(BIN)/kb
	$(BIN)/kb demo

lint: $(BIN)/kb
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy bot agent store jobs

test: lint
	$(BIN)/python -m pytest
