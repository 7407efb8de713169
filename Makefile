# make run: set up .venv and launch the app.  make test: set up and run the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test setup system-deps system-deps-test clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "ParaFlux needs Python >= 3.11"'
	@$(PYTHON) -m venv --help >/dev/null 2>&1 && $(PYTHON) -c 'import ensurepip' 2>/dev/null || \
		{ [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[gui,test]'
	@touch $(STAMP)

system-deps:
	@bash scripts/system-deps.sh

system-deps-test:
	@bash scripts/system-deps.sh test

run: system-deps setup
	$(BIN)/paraflux-gui

test: system-deps-test setup
	$(BIN)/python -m pytest -q  # pytest-xvfb starts a virtual display for the GUI tests

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
