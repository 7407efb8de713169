# make run: set up .venv and launch the app.  make test: set up and run the whole suite.  make fuzz: the
# generated-input properties with 10,000 examples each.  make soak: memory over 500 mixed jobs (docs/soak.md).
PYTHON ?= python3
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test fuzz soak setup system-deps system-deps-test package package-test clean

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

# pytest-xvfb starts a virtual display for the GUI tests; pytest-xdist runs the suite on every core (TEST_WORKERS;
# worksteal: an idle worker takes tests queued on another, so no core idles at the end), BLAS one thread per
# worker (the workers already fill the cores). Should an interpreter die (a crash, not a failed test), the last
# lines name the test it died in and the crashing thread's frames.
TEST_WORKERS ?= auto
test: system-deps-test setup
	@mkdir -p build
	set -o pipefail; OPENBLAS_NUM_THREADS=1 PARAFLUX_TEST_TRACE=build/current-test $(BIN)/python -m pytest -q \
		-n $(TEST_WORKERS) --dist worksteal 2>&1 | tee build/test.log \
		|| { rc=$$?; bash scripts/test-crash-summary.sh build/test.log build/current-test $$rc; exit $$rc; }

# The generated-input properties of tests/test_fuzz.py with 10,000 examples each (CI runs 150).
fuzz: setup
	PARAFLUX_FUZZ_PROFILE=fuzz $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_fuzz.py

# The long-run memory check (docs/soak.md, docs/window.md): JOBS jobs of the mixed cycle in the window under a
# virtual display, then a Dask worker over POINTS sweep points; writes docs/soak/ (JSON, PNG) and docs/soak.md.
JOBS ?= 500
POINTS ?= 200
soak: system-deps-test setup
	xvfb-run -a -s "-screen 0 1366x768x24" $(BIN)/python -m paraflux.app.soak --jobs $(JOBS) --worker-points $(POINTS)

# A self-contained one-folder bundle in dist/ParaFlux and dist/ParaFlux.tar.gz (packaging/README.md).
package: system-deps-test setup
	$(BIN)/pip install -q pyinstaller
	cd packaging && ../$(BIN)/pyinstaller --noconfirm --log-level ERROR --distpath ../dist \
		--workpath ../build/pyinstaller paraflux.spec
	mkdir -p dist/ParaFlux/share/applications dist/ParaFlux/share/metainfo dist/ParaFlux/share/icons/hicolor/scalable/apps
	cp packaging/paraflux.desktop dist/ParaFlux/share/applications/
	cp packaging/io.paraflux.ParaFlux.metainfo.xml dist/ParaFlux/share/metainfo/
	cp resources/icons/paraflux.svg dist/ParaFlux/share/icons/hicolor/scalable/apps/
	QT_QPA_PLATFORM=offscreen $(BIN)/python packaging/make_icons.py resources/icons/paraflux.svg dist/ParaFlux/share/icons/hicolor
	tar -C dist -czf dist/ParaFlux.tar.gz ParaFlux

# Builds the bundle and runs its self-test with an empty environment (tests marked "package").
package-test: system-deps-test setup
	$(BIN)/python -m pytest -q -m package --run-package tests/test_package.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
