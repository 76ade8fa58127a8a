# Every target sets up what it needs: a fresh clone runs `make test` or `make serve` directly.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
PORT ?= 3000

.DEFAULT_GOAL := help
.PHONY: help install test serve check lint format clean

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade "pip>=25.1"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --group dev
	@touch $@

install: $(INSTALLED) ## Create .venv and install the runtime, test and lint dependencies

test: $(INSTALLED) ## Run the whole test suite
	$(BIN)/python -m pytest

serve: $(INSTALLED) ## Serve the endpoint on http://127.0.0.1:$(PORT) with a local dev key
	PORT=$(PORT) $(BIN)/python -m devserver

check: $(INSTALLED) ## Check the tools against Median's sync rules
	$(BIN)/python -m handler check

lint: $(INSTALLED) ## ruff (lint and format) and mypy on handler/
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(INSTALLED) ## Fix what ruff can fix and format the code
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean: ## Remove the virtualenv, caches and build output
	rm -rf $(VENV) .aws-sam .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

# --- SAM: build, local invoke, deploy (issue 3) --------------------------------------

# --- Benchmarks (issue 5) ------------------------------------------------------------

# --- Inspector and browser tests (issue 6) ------------------------------------------
# `make serve` serves the inspector at http://127.0.0.1:$(PORT)/_inspector. Its browser tests also run
# inside `make test` whenever Debian's chromium is installed; this runs them alone.
.PHONY: test-browser
test-browser: $(INSTALLED) ## Run the inspector's tests in headless Chromium (apt-get install chromium)
	$(BIN)/python -m pytest -m browser tests/browser
