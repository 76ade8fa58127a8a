# The template repository's own targets: what its maintainers run, and its CI, and what a project
# made from the template (copier copy) never gets (copier.yml excludes this file). The Makefile
# includes it, as it includes every *.mk beside it.

# The inspector's browser tests drive Chromium with Playwright, in the dev venv beside the rest.
INSTALL_GROUPS += maintainers

.PHONY: swap-check template-proof release lint-maintainers lint-library format-library lock-tooling clean-library \
	copier-venv

# The machinery the template's own tests and the bench share, typed as strictly as the library.
lint: lint-maintainers lint-library
lint-maintainers: $(INSTALLED)
	$(BIN)/mypy -p tests.support

# --- median-lambda, the library (median-lambda/): linted with its own pyproject.toml's settings, its
# layers held by import-linter, and its locks of the developer tools it drives (the SAM CLI, Checkov,
# the workflows' linters, Copier) checked against their declarations; `make lock` re-locks them.
LIBRARY := median-lambda
lint-library: $(INSTALLED)
	cd $(LIBRARY) && $(CURDIR)/$(BIN)/ruff check . && $(CURDIR)/$(BIN)/ruff format --check .
	cd $(LIBRARY) && $(CURDIR)/$(BIN)/mypy
	cd $(LIBRARY) && $(CURDIR)/$(BIN)/lint-imports
	$(BIN)/python -m median_lambda.project.lock check-tooling
	$(BIN)/python -m median_lambda.project.lock check-tooling --directory maintainers/tooling
format: format-library
format-library: $(INSTALLED)
	cd $(LIBRARY) && $(CURDIR)/$(BIN)/ruff check --fix . && $(CURDIR)/$(BIN)/ruff format .
# UPGRADE=PACKAGE (or all) moves it in the tools' locks too.
lock: lock-tooling
# The library's module re-locks them: from the venv as uv.lock has it, even stale (--frozen).
lock-tooling: $(UV_INSTALLED)
	@[ -x $(MEDIAN) ] || $(UV_ENV) UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --quiet --frozen $(addprefix --group ,$(INSTALL_GROUPS))
	$(BIN)/python -m median_lambda.project.lock tooling $(UPGRADE)
	$(BIN)/python -m median_lambda.project.lock tooling --directory maintainers/tooling $(UPGRADE)
clean: clean-library
clean-library:
	cd $(LIBRARY) && rm -rf .mypy_cache .ruff_cache .import_linter_cache

# The pinned Copier: the template's proofs copy and upgrade projects with it, as `make upgrade` does.
copier-venv: $(INSTALLED)
	$(MEDIAN) tool-venv copier >/dev/null

# --- The template as its users take it (issue 26; docs/releasing.md) -----------------
# A project copied from this version works at once, and one copied from the previous release and
# worked in as a user would upgrades to this version with make upgrade, keeping all it owns.
template-proof: copier-venv ## copier copy this version, and make upgrade a user's project from the previous release, in a temporary folder
	$(BIN)/python -m maintainers.template_proof $(if $(KEEP),--keep)

release: $(INSTALLED) ## Release CHANGELOG.md's Unreleased section as VERSION=X.Y.Z: one commit, one tag
	$(BIN)/python -m maintainers.release $(VERSION)

# The README's "Make it yours", proven in a project copied from this checkout, as a user's is.
swap-check: copier-venv ## In a project copied from this checkout: delete the examples, make new-tool, the guide's project, make lint test check validate build
	VENV="$(VENV)" maintainers/swap_examples.sh

# --- Benchmarks (issue 5) ------------------------------------------------------------
# The function's processes run the artifact `median build-artifact` makes, first on their path,
# in a venv holding only what the Lambda runtime adds to it: aws-sdk (boto3), compiled as the
# runtime's is. The dev venv holds more (moto, pytest, …), and botocore changes what it imports
# when awscrt is present.
BENCH_VENV := $(VENV)/bench-runtime
BENCH_INSTALLED := $(BENCH_VENV)/.installed
.PHONY: bench

$(BENCH_INSTALLED): pyproject.toml uv.lock $(UV_INSTALLED)
	$(PYTHON) -m venv $(BENCH_VENV)
	$(UV_ENV) UV_PROJECT_ENVIRONMENT=$(BENCH_VENV) $(UV) sync --quiet --locked --only-group aws-sdk --compile-bytecode || $(STALE_LOCK)
	@touch $@

# BENCH_ARGS="--cold-runs 5 --warm-rounds 5 --no-ideas" for a quick look while developing.
bench: $(INSTALLED) $(BENCH_INSTALLED) ## Cold/warm GET and POST of the artifact as deployed, against the floor and the peer; writes bench/results.json
	$(BIN)/python -m bench --runtime-python $(BENCH_VENV)/bin/python $(BENCH_ARGS)

# --- Inspector and browser tests (issue 6) ------------------------------------------
# `make serve` serves the inspector at http://127.0.0.1:$(PORT)/_inspector. Its browser tests also run
# inside `make test` whenever Debian's chromium is installed; this runs them alone.
.PHONY: test-browser screenshot
test-browser: $(INSTALLED) ## Run the inspector's tests in headless Chromium (apt-get install chromium)
	$(BIN)/python -m pytest -m browser tests/browser

# The browser tests take the README's screenshot into a folder of their own: no test rewrites a
# tracked file. This writes docs/inspector.png, if what the page shows has changed.
screenshot: $(INSTALLED) ## Retake docs/inspector.png from the inspector as it is now (headless Chromium)
	MEDIAN_REFRESH_SCREENSHOT=1 $(BIN)/python -m pytest -m browser tests/browser/test_inspector.py -k readme_screenshot

# --- Mutation testing (issue 18) -----------------------------------------------------
# mutmut mutates each guarding module in a copy of its own (.mutmut/<module>/) and tries each
# mutant against the tests that guard it (maintainers/mutate.py); the table goes to .mutmut/table.md.
# Slow (tens of minutes), so never part of `make test` or .ci/run: the weekly workflow runs it.
# MODULES="signature rules" measures only those. One worker, at the lowest priority.
# mutmut runs the tests in its own interpreter: its venv is the dev venv, as uv.lock pins it, with
# mutmut added as maintainers/tooling/mutmut.py.lock pins it, every file's hash checked.
MUTATION_VENV := $(VENV)/mutmut
MUTATION_INSTALLED := $(MUTATION_VENV)/.installed
MUTMUT_LOCK := maintainers/tooling/mutmut.py.lock
.PHONY: mutate

$(MUTATION_INSTALLED): pyproject.toml uv.lock $(MUTMUT_LOCK) $(INSTALLED)
	$(PYTHON) -m venv $(MUTATION_VENV)
	$(UV_ENV) UV_PROJECT_ENVIRONMENT=$(MUTATION_VENV) $(UV) sync --quiet --locked || $(STALE_LOCK)
	$(BIN)/python -m median_lambda.project.lock tool-requirements --directory maintainers/tooling mutmut > $(MUTATION_VENV)/mutmut-requirements.txt
	$(UV_ENV) $(UV) pip install --quiet --python $(MUTATION_VENV)/bin/python --require-hashes -r $(MUTATION_VENV)/mutmut-requirements.txt
	@touch $@

mutate: $(MUTATION_INSTALLED) ## Mutation testing (mutmut) on the modules that guard signatures, money and sync
	nice -n 19 $(MUTATION_VENV)/bin/python -m maintainers.mutate $(MODULES)

# tests/template renders this template with the pinned Copier, as `make upgrade` runs it.
test: copier-venv

# --- median-lambda's distributions (issue 29) ----------------------------------------------
# The wheel and sdist a release publishes, built and checked as an index takes them (the Release
# workflow runs it on each tag, with DIST_VERSION=the tag; .ci/run on every change).
.PHONY: dist
dist: $(INSTALLED) ## Build median-lambda's wheel and sdist into dist/ and check them; DIST_VERSION=vX.Y.Z must match
	$(BIN)/python -m maintainers.distributions $(if $(DIST_VERSION),--version $(DIST_VERSION))
