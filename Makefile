# Two entry points for a fresh machine (Python >= 3.11 with venv):
#   make app   - install into .venv and serve the planner app at http://localhost:8866
#   make test  - install into .venv (with test extras) and run the whole test suite
VENV ?= .venv
PYTHON ?= python3
BIN = $(VENV)/bin

.PHONY: app test test-minimum install clean

$(BIN)/.installed: pyproject.toml binder/jupyterhub/package-lock.json
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	# the JupyterHub proxy for tests/test_hub.py (skipped without it, except in CI)
	if command -v npm >/dev/null; then npm ci --prefix binder/jupyterhub --no-audit --no-fund --loglevel=error; fi
	touch $@

install: $(BIN)/.installed

PORT ?= 8866

app: install
	$(BIN)/workbench app --port=$(PORT)

# the engine, files and server tests in parallel, one worker per core (pytest-xdist); then the app in Chromium on
# its own, as a reader's browser runs, not beside two fuzzing workers (a box typed while the machine was that
# busy was once lost: docs/operations.md)
BROWSER_TESTS = tests/test_app_browser.py tests/test_app_lifecycle.py
test: install
	$(BIN)/python -m pytest -n auto $(addprefix --ignore=,$(BROWSER_TESTS))
	$(BIN)/python -m pytest $(BROWSER_TESTS)

# the suite (without the browser, hub and load tests) on the lowest versions pyproject.toml declares (.ci/minimum.txt)
MINIMUM_VENV ?= .venv-minimum
test-minimum:
	$(PYTHON) -m venv $(MINIMUM_VENV)
	$(MINIMUM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(MINIMUM_VENV)/bin/python -m pip install --quiet -c .ci/minimum.txt -e '.[test]'
	$(MINIMUM_VENV)/bin/python -m pytest -n auto -p no:cacheprovider --ignore=tests/test_hub.py --ignore=tests/test_load.py \
		--ignore=tests/test_app_browser.py --ignore=tests/test_app_lifecycle.py

clean:
	rm -rf $(VENV) $(MINIMUM_VENV) .pytest_cache .hypothesis dist build
