# clusterdoc — the commands a newcomer needs. Everything runs from the virtualenv in .venv.
PY      := .venv/bin/python
N       ?= 4
STAMP   := .venv/.installed

.PHONY: install demo test test-fast lint bench cluster-up cluster-down clean

install: $(STAMP)

$(STAMP): pyproject.toml scripts/install.sh
	bash scripts/install.sh
	touch $@

# The main job on this one machine: the doctor on this machine, then a 4-rank job through the local backend.
demo: install
	-$(PY) -m clusterdoc check --local
	$(PY) -m clusterdoc submit --backend local --nodes 4 jobs/train_ddp.py --epochs 2

# The whole suite, slow end-to-end tests and the test cluster included (those skip, saying why, without root).
test: install lint
	$(PY) -m pytest

# ruff (lint and format) and mypy on clusterdoc/, configured in pyproject.toml
lint: install
	.venv/bin/ruff check
	.venv/bin/ruff format --check
	.venv/bin/mypy

test-fast: install
	$(PY) -m pytest -m "not slow and not cluster"

bench: install
	@set -e; for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b; done

# SPEC=tests/cluster/cpu.yaml: CPU nodes with the venv's real torch (default: tests/cluster/default.yaml, GPU nodes)
cluster-up: install
	$(PY) -m tests.cluster up --nodes $(N) $(if $(SPEC),--spec $(SPEC))

cluster-down:
	$(PY) -m tests.cluster down

clean: cluster-down
	rm -rf .venv build dist *.egg-info .pytest_cache
