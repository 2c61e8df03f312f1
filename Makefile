# `make demo` and `make test` create .venv on first use and install what they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test check pytest pytest-fast lit fuzz fuzz-short lint bench zoo clean

# Byte code is cached (in `__pycache__`, ignored by git) even where the environment sets
# PYTHONDONTWRITEBYTECODE: the suites start hundreds of Python processes, and without the cache
# each compiles the project's modules again and pytest rewrites every test module's asserts again.
export PYTHONDONTWRITEBYTECODE :=

# pytest workers (pytest-xdist): one per CPU, at most 4 (each imports torch and the compiler).
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 4 ] && n=4; echo $$n)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,mlir,torch,plot]'
	$(BIN)/python -m compileall -q -j 0 ktir dialects passes tools  # pip compiles only what it copies
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

# Every suite always runs (pytest, lit, the short fuzz, lint): one failure must not hide another.
# Lint runs beside the others (pyright is one thread; its output, kept in build/lint.log, is
# printed at the end): it fills the core pytest's start-up and last test leave idle.
test: $(STAMP)
	@status=0; mkdir -p build; \
	$(MAKE) --no-print-directory lint > build/lint.log 2>&1 & lint=$$!; \
	$(MAKE) --no-print-directory pytest || status=1; \
	$(MAKE) --no-print-directory lit || status=1; \
	$(MAKE) --no-print-directory fuzz-short || status=1; \
	wait $$lint || status=1; cat build/lint.log; \
	exit $$status

# The fast tier for the edit loop: unit tests not marked slow, the lit suite and lint.
check: $(STAMP)
	@status=0; mkdir -p build; \
	$(MAKE) --no-print-directory lint > build/lint.log 2>&1 & lint=$$!; \
	$(MAKE) --no-print-directory pytest-fast || status=1; \
	$(MAKE) --no-print-directory lit || status=1; \
	wait $$lint || status=1; cat build/lint.log; \
	exit $$status

# One test at a time to whichever worker is free (--dist load --maxschedchunk 1): with the longest
# tests collected first (test/unit/conftest.py) both workers start on them and the short ones
# fill in. (worksteal and load's default chunks hand the first worker a contiguous block: all of
# the long tests.)
pytest: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) --dist load --maxschedchunk 1

pytest-fast: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) --dist worksteal -m "not slow"

lit: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/lit -sv test/lit

# The mutation fuzzer of ktir-opt and ktir-run over the lit inputs (docs/ktir-opt.md, "Fuzzing").
fuzz-short: $(STAMP)
	$(BIN)/python tools/fuzz.py --short --quiet

fuzz: $(STAMP)
	$(BIN)/python tools/fuzz.py --long

# pyright (configured in pyproject.toml, [tool.pyright]) finds ktir.dialects, ktir.passes and
# ktir.tools through the links in build/typecheck/ktir, one per package-dir entry of pyproject.toml.
TYPECHECK_TREE := build/typecheck/ktir

lint: $(STAMP)
	mkdir -p $(TYPECHECK_TREE)
	ln -sfn ../../../ktir/__init__.py $(TYPECHECK_TREE)/__init__.py
	for d in dialects passes tools; do ln -sfn ../../../$$d $(TYPECHECK_TREE)/$$d || exit 1; done
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/pyright --project pyproject.toml --pythonpath $(BIN)/python

# Every architecture of the model zoo (docs/zoo.md): compiled, simulated, compared with eager.
zoo: $(STAMP)
	$(BIN)/python test/zoo/run.py --min-pass 40 --json zoo.json

bench: $(STAMP)
	$(BIN)/python bench/layout_bench.py
	$(BIN)/python bench/import_bench.py
	$(BIN)/python bench/layout_pass_bench.py

clean:
	rm -rf $(VENV) build *.egg-info
