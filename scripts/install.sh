#!/usr/bin/env bash
# Installs what clusterdoc and its tests need on a fresh Debian machine; safe to run again.
#  - Debian packages for the one-machine test cluster (root only; otherwise those tests skip, saying why)
#  - a virtualenv in .venv with clusterdoc in editable mode and the test tools
# torch: a bare `torch` requirement pulls a multi-GB CUDA build, so the CPU build 2.13.0 goes in first.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
DEB_PACKAGES="openssh-server openssh-client mpich openmpi-bin slurm-wlm munge pdsh iproute2 procps util-linux"

need_debs() {
    for cmd in sshd ssh mpirun.mpich mpirun.openmpi slurmctld slurmd munged pdsh nsenter unshare ps ip; do
        command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || { echo "$cmd"; return 0; }
    done
    return 1
}

if missing=$(need_debs); then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "install: '$missing' is missing; installing Debian packages: $DEB_PACKAGES"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q >/dev/null
        apt-get install -y -q --no-install-recommends $DEB_PACKAGES >/dev/null
    else
        echo "install: '$missing' is missing and this is not root with apt-get:" \
             "tests that need the one-machine test cluster will be skipped" >&2
    fi
fi

if [ ! -x "$VENV/bin/python" ]; then
    echo "install: creating $VENV with $($PYTHON --version)"
    "$PYTHON" -m venv "$VENV"
fi
PIP="$VENV/bin/python -m pip --disable-pip-version-check -q"
if ! "$VENV/bin/python" -c "import torch" >/dev/null 2>&1; then
    echo "install: torch==2.13.0 (CPU build)"
    $PIP install "torch==2.13.0"
fi
$PIP install -e ".[test]"
echo "install: done ($("$VENV/bin/python" -c 'import torch, clusterdoc; print("clusterdoc", clusterdoc.__version__, "torch", torch.__version__)'))"
