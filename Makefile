# Every target sets itself up: a fresh clone needs nothing but python3 (>= 3.11); a C compiler, where
# there is one, builds the footer decoder's optional accelerator (service/parquet/_compact.c).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint install clean bench

$(STAMP): pyproject.toml service/parquet/_compact.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m service.demo

test: $(STAMP)
	$(BIN)/ruff check service tests bench migrations
	$(BIN)/mypy
	$(BIN)/python -m pytest -n 2 --dist loadgroup -q

# Today's figures: a short configuration of bench/ (minutes), rewriting the table that opens
# BENCHMARKS.md. Needs the PostgreSQL of SHREDCAT_BENCH_PG_ADMIN_URL (default: loopback, as tests).
bench: $(STAMP)
	$(BIN)/python bench/summary.py $(BENCH_ARGS)

# mypy reads its configuration ([tool.mypy] in pyproject.toml: which packages are strict) itself.
lint: $(STAMP)
	$(BIN)/ruff check service tests bench migrations
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache shredcat.db demo-data test-artifacts
