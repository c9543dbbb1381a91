# clusterdoc — the commands a newcomer needs. Everything runs from the virtualenv in .venv
# ('. .venv/bin/activate' puts `clusterdoc` on your PATH).
PY         := .venv/bin/python
CLUSTERDOC := .venv/bin/clusterdoc
N          ?= 4
STAMP      := .venv/.installed
DEV_STAMP  := .venv/.installed-dev

.PHONY: install install-dev install-test demo test test-fast lint bench cluster-up cluster-down clean

# The venv only: torch, clusterdoc and its Python dependencies. No root, no Debian package.
install: $(STAMP)

$(STAMP): pyproject.toml scripts/install.sh
	bash scripts/install.sh venv
	touch $@

# The venv with the test tools (pytest, ruff, mypy, pip's mpich wheel): still nothing outside .venv.
install-dev: $(DEV_STAMP)

$(DEV_STAMP): pyproject.toml scripts/install.sh
	bash scripts/install.sh dev
	touch $@ $(STAMP)

# What the tests need: the one-machine test cluster's Debian packages (as root; the script says which
# before it installs them), then the dev venv.
install-test:
	bash scripts/install.sh debs
	@$(MAKE) --no-print-directory install-dev

# The main job on this one machine: the doctor on this machine, then a 4-rank job through the local backend.
# Needs only the venv: no SSH, MPI or Slurm (the doctor says what it could not check).
demo: install
	-$(CLUSTERDOC) check --local
	$(CLUSTERDOC) submit --backend local --nodes 4 jobs/train_ddp.py --epochs 2
	@echo "demo: done. '. .venv/bin/activate' puts clusterdoc on your PATH; README.md goes on from here."

# The whole suite, slow end-to-end tests and the test cluster included (those skip, saying why, without root).
test: install-test lint
	$(PY) -m pytest

# ruff (lint and format) and mypy on clusterdoc/, configured in pyproject.toml
lint: install-dev
	.venv/bin/ruff check
	.venv/bin/ruff format --check
	.venv/bin/mypy

test-fast: install-dev
	$(PY) -m pytest -m "not slow and not cluster"

bench: install-test
	@set -e; for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b; done

# SPEC=tests/cluster/cpu.yaml: CPU nodes with the venv's real torch (default: tests/cluster/default.yaml, GPU nodes)
cluster-up: install-test
	$(PY) -m tests.cluster up --nodes $(N) $(if $(SPEC),--spec $(SPEC))

cluster-down:
	$(PY) -m tests.cluster down

clean: cluster-down
	rm -rf .venv build dist *.egg-info .pytest_cache
