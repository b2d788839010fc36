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

# in parallel, one worker per core (pytest-xdist): 545 s instead of 816 s on a 2-core machine (2026-12-05)
test: install
	$(BIN)/python -m pytest -n auto

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
