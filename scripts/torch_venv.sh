#!/usr/bin/env bash
# A venv with another torch, for the shim's tests at the ends of the supported range (make test-torch-range).
# Usage: scripts/torch_venv.sh VERSION   -> makes .venv-torch-VERSION (reused when it already has that torch and
# clusterdoc), prints its python. It is scripts/install.sh with VENV and TORCH_SPEC set: clusterdoc in editable
# mode from this checkout and the test tools. Wheels come through pip's cache (~/.cache/pip, or PIP_CACHE_DIR),
# so a venv made again on the same machine downloads nothing.
# Which build pip finds: torch from PyPI on Linux x86_64 is the CUDA build (it runs on CPU; 2.4.1 brings ~2 GB of
# nvidia-* wheels, 2.7 GB in all, a 5 GB venv; 2.15.0, built for CUDA 13.2, about as much).
# pip's configuration files are left out (PIP_CONFIG_FILE=/dev/null): a machine's pip config can cap or pin torch
# (this project's machines cap it at the release their local mirror holds), and the range's ends are tested as
# PyPI serves them to users. PIP_* variables still apply (PIP_INDEX_URL for a mirror of PyPI).
# The check below is also the proof that installing clusterdoc never downgrades a user's torch: install.sh
# installs torch==VERSION first, then `pip install -e .`, and the venv must still have VERSION.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${1:?usage: scripts/torch_venv.sh VERSION}
VENV=.venv-torch-$VERSION
# one maker at a time: make test's two lanes both want the newest end (the torch range's tests, the CUDA build's
# venv), and two pips in one venv break it; the second waits here, then finds the venv made
mkdir -p .cache
exec 9>".cache/$VENV.lock"
flock 9
check="import torch, clusterdoc, pytest; assert torch.__version__.split('+')[0] == '$VERSION', torch.__version__"
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -W ignore -c "$check" >/dev/null 2>&1; then
    echo "$VENV/bin/python"
    exit 0
fi
rm -rf "$VENV"
VENV=$VENV TORCH_SPEC="torch==$VERSION" PIP_CONFIG_FILE=/dev/null bash scripts/install.sh dev >&2
"$VENV/bin/python" -W ignore -c "$check"
echo "$VENV/bin/python"
