#!/usr/bin/env bash
# Installs what clusterdoc and its tests need on a fresh Debian machine; safe to run again.
#  - Debian packages for the one-machine test cluster (root only; otherwise those tests skip, saying why)
#  - a virtualenv in .venv with clusterdoc in editable mode and the test tools
#  - MPI: Debian's openmpi-bin takes over the `mpirun` alternative from MPICH when it is installed; the venv's
#    mpi4py runs on MPICH (pip's `mpich` wheel), so after installing the packages the `mpirun` alternative is
#    set back to MPICH and `clusterdoc check` on a fresh machine finds one MPI, not two
#    (Open MPI stays callable as mpirun.openmpi).
# torch: `pip install torch==2.13.0` (TORCH_SPEC) before clusterdoc, so the requirement is met. Which build that
# is depends on where pip looks: from plain PyPI on Linux x86_64 it is the CUDA build (several GB of CUDA
# wheels); on a machine whose pip is configured with a CPU wheel source (as the project's own machine is,
# --find-links /opt/wheels holding 2.13.0+cpu) it is the CPU build. The last line printed says which.
# To choose: TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu make install (CPU build; .../whl/cu126 for a
# CUDA 12.6 one), TORCH_SPEC='torch==2.12.*' for another version. An existing torch in the venv is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
DEB_PACKAGES="openssh-server openssh-client mpich openmpi-bin slurm-wlm munge pdsh iproute2 nftables procps util-linux"

need_debs() {
    for cmd in sshd ssh mpirun.mpich mpirun.openmpi slurmctld slurmd munged pdsh nsenter unshare prlimit ps ip nft; do
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
        if command -v update-alternatives >/dev/null 2>&1 && [ -x /usr/bin/mpirun.mpich ]; then
            update-alternatives --quiet --set mpirun /usr/bin/mpirun.mpich
        fi
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
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
if ! "$VENV/bin/python" -c "import torch" >/dev/null 2>&1; then
    echo "install: $TORCH_SPEC${TORCH_INDEX_URL:+ from $TORCH_INDEX_URL} (the build pip finds; see the top of this script)"
    $PIP install ${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"} "$TORCH_SPEC"
fi
$PIP install -e ".[test]"
echo "install: done ($("$VENV/bin/python" -c 'import torch, clusterdoc; print("clusterdoc", clusterdoc.__version__, "torch", torch.__version__)'))"
