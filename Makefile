# clusterdoc — the commands a newcomer needs. Everything runs from the virtualenv in .venv
# ('. .venv/bin/activate' puts `clusterdoc` on your PATH).
PY         := .venv/bin/python
CLUSTERDOC := .venv/bin/clusterdoc
N          ?= 4
TEST_PARTS ?= 2
STAMP      := .venv/.installed
DEV_STAMP  := .venv/.installed-dev

.PHONY: install install-dev install-test demo test test-fast faults test-torch-range test-cuda-build lint bench cluster-up cluster-down clean

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

# The whole suite, slow end-to-end tests and the test cluster included (those skip, saying why, without root),
# then the shim's tests on the oldest and newest torch that pyproject.toml declares, then the real CUDA build.
# scripts/test_all.sh runs them; every step runs, any failure fails the whole. TEST_PARTS=2 (default): the tests
# marked `timing` alone first, then the test cluster's tests and the CUDA build beside the others and the torch
# range. TEST_PARTS=1: everything one after another (about 80 min on 2 cores).
test: install-test lint
	TEST_PARTS=$(TEST_PARTS) bash scripts/test_all.sh

# The supported torch range's ends, each in its own venv (.venv-torch-VERSION, made by scripts/torch_venv.sh on
# first use and reused after): the shim's tracking, hang report and debug mode.
TORCH_RANGE       ?= 2.4.1 2.15.0
TORCH_RANGE_TESTS ?= tests/test_shim_tracking.py tests/test_shim_ops.py tests/test_hang_report.py tests/test_shim_teardown.py \
	"tests/test_hang_local.py::test_stall_report_names_the_odd_rank_and_the_call_sites[skip]" \
	"tests/test_hang_local.py::test_stall_report_names_the_odd_rank_and_the_call_sites[ddp]" \
	tests/test_shim_debug.py::test_mismatch_kinds_raise_on_every_rank_and_the_group_stays_usable \
	tests/test_shim_debug.py::test_subgroup_checks_members_only_and_names_global_ranks \
	tests/test_shim_launchers.py::test_torchrun_static_rendezvous_two_ranks \
	"tests/test_shim_launchers.py::test_a_rank_skipping_a_collective_is_named_in_the_hang_report[torchrun]"
test-torch-range: install-dev
	@set -e; for v in $(TORCH_RANGE); do \
		py=$$(bash scripts/torch_venv.sh $$v); \
		echo "== torch $$v ($$py)"; \
		$$py -m pytest -q -p no:cacheprovider $(TORCH_RANGE_TESTS); \
	done

# build-wheel with a real nvcc: DeepSpeed's fused_adam compiled for "8.0;9.0" and for "8.0" (no GPU needed), the
# archs read back from the binaries, the "8.0" wheel refused on an H100 node of the test cluster. The venv is the
# torch 2.14.1+cu130 one above plus nvcc 13.0 from the registry (scripts/cuda_venv.sh, ~400 MB more, cached).
# About 3 min on 2 idle cores (two ~70 s builds, then the cluster).
test-cuda-build: install-dev
	@set -e; py=$$(bash scripts/cuda_venv.sh); echo "== CUDA build ($$py)"; \
	CLUSTERDOC_CUDA_PYTHON=$$py $(PY) -m pytest -q -p no:cacheprovider tests/test_wheel_cuda.py

# ruff (lint and format) and mypy on clusterdoc/, configured in pyproject.toml
lint: install-dev
	.venv/bin/ruff check
	.venv/bin/ruff format --check
	.venv/bin/mypy

# The long fault campaign (issue 43, docs/reliability.md): 100 jobs over every kind, on Slurm then mpirun, each
# on a cluster of its own; the reports go to docs/faults-*.json. About an hour each on 2 cores. SEED=N to repeat.
# Every kind of tests/faults/catalog.py that applies to the backend (kinds_for): kill9 stop pause exception oom exit0
# allexit1 nodekill cancel ctldrestart netdrop loss slurmdkill xid79 clockjump timelimit requeue fullfs (ctldrestart,
# slurmdkill, timelimit, requeue: Slurm only). KINDS=a,b to pick; the faults in no list (unlisted.py) only so.
FAULTS_JOBS ?= 100
faults: install-test
	$(PY) -m tests.faults --backend slurm --jobs $(FAULTS_JOBS) $(if $(SEED),--seed $(SEED)) $(if $(KINDS),--kinds $(KINDS)) --report docs/faults-slurm.json
	$(PY) -m tests.faults --backend mpirun --jobs $(FAULTS_JOBS) $(if $(SEED),--seed $(SEED)) $(if $(KINDS),--kinds $(KINDS)) --report docs/faults-mpirun.json

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
	rm -rf .venv .venv-torch-* build dist *.egg-info .pytest_cache
