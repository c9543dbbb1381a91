#!/usr/bin/env bash
# Benchmark-only venv with Accelerate and transformers (the anchors the shim benchmarks compare against)
# and ClusterShell (the anchor of bench_fold.py).
# They stay out of the project's own venv. torch comes from the project venv (a .pth line), so both
# sides of every ratio run the very same torch build and nothing large is downloaded twice.
# Usage: bench/setup_bench_env.sh [VENV]   (default .venv-bench next to .venv; prints the python path)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MAIN_PY=${CLUSTERDOC_PYTHON:-$ROOT/.venv/bin/python}
BENCH=${1:-${CLUSTERDOC_BENCH_VENV:-$ROOT/.venv-bench}}
if [ ! -x "$BENCH/bin/python" ]; then
    "$MAIN_PY" -m venv "$BENCH" >&2
fi
MAIN_SITE=$("$MAIN_PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
BENCH_SITE=$("$BENCH/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$MAIN_SITE" > "$BENCH_SITE/clusterdoc_main_venv.pth"
echo "$ROOT" >> "$BENCH_SITE/clusterdoc_main_venv.pth"
if ! "$BENCH/bin/python" -c 'import accelerate, transformers, ClusterShell' 2>/dev/null; then
    "$BENCH/bin/python" -m pip install -q --disable-pip-version-check accelerate transformers ClusterShell >&2
fi
echo "$BENCH/bin/python"
