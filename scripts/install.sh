#!/usr/bin/env bash
# Installs what clusterdoc needs; safe to run again. One argument says how much:
#   venv   a virtualenv in .venv with torch and clusterdoc in editable mode (what `make demo` needs):
#          nothing outside the repository is changed, no Debian package is installed
#   dev    the venv plus the test tools (pytest, ruff, mypy, ...; pip's `mpich` wheel), still only in .venv
#   debs   (as root, with apt-get) the Debian packages of the one-machine test cluster (and g++: the real CUDA
#          tests need Debian 12's gcc 12 as nvcc's host compiler), saying which first;
#          without root it only says what is missing (the cluster tests then skip, saying why)
#   test   debs, then dev (`make test`)
# MPI (test): Debian's openmpi-bin takes over the `mpirun` alternative from MPICH when it is installed; the
# venv's mpi4py runs on MPICH (pip's `mpich` wheel), so after installing the packages the `mpirun` alternative
# is set back to MPICH and `clusterdoc check` on a fresh machine finds one MPI, not two (Open MPI stays
# callable as mpirun.openmpi). This is the only system setting changed, and only by `debs` and `test`.
# torch: `pip install torch==2.13.0` (TORCH_SPEC) before clusterdoc, so the requirement is met. Which build that
# is depends on where pip looks: from plain PyPI on Linux x86_64 it is the CUDA build (several GB of CUDA
# wheels); with a pip configured with a CPU wheel source (--find-links holding 2.13.0+cpu) it is the CPU build.
# The last line printed says which. To choose: TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu make install
# (CPU build; .../whl/cu126 for a CUDA 12.6 one), TORCH_SPEC='torch==2.12.*' for another version. An existing
# torch in the venv is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=${1:-venv}
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
DEB_PACKAGES="openssh-server openssh-client mpich openmpi-bin slurm-wlm munge pdsh iproute2 nftables procps util-linux g++ mariadb-server slurmdbd lmod"

case "$MODE" in
    venv | dev | debs | test) ;;
    *) echo "usage: scripts/install.sh [venv|dev|debs|test]" >&2; exit 2 ;;
esac

need_debs() {
    for cmd in sshd ssh mpirun.mpich mpirun.openmpi slurmctld slurmd munged pdsh nsenter unshare prlimit ps ip nft g++ slurmdbd mariadbd; do
        command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || { echo "$cmd"; return 0; }
    done
    return 1
}

install_debs() {
    local missing
    missing=$(need_debs) || return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "install: the tests' one-machine cluster needs Debian packages ('$missing' is missing);" \
             "installing with apt-get: $DEB_PACKAGES, and setting the mpirun alternative to MPICH"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q >/dev/null
        apt-get install -y -q --no-install-recommends $DEB_PACKAGES >/dev/null
        if command -v update-alternatives >/dev/null 2>&1 && [ -x /usr/bin/mpirun.mpich ]; then
            update-alternatives --quiet --set mpirun /usr/bin/mpirun.mpich
        fi
    else
        echo "install: '$missing' is missing and this is not root with apt-get:" \
             "tests that need the one-machine test cluster will be skipped" \
             "(as root: apt-get install $DEB_PACKAGES)" >&2
    fi
}

make_venv() {
    if [ ! -x "$VENV/bin/python" ]; then
        echo "install: creating $VENV with $($PYTHON --version)"
        if ! "$PYTHON" -m venv "$VENV"; then
            rm -rf "$VENV"
            echo "install: '$PYTHON -m venv' does not work here; install Python's venv module" \
                 "(Debian: apt-get install python3-venv) or set PYTHON=/path/to/python3" >&2
            exit 1
        fi
    fi
    PIP="$VENV/bin/python -m pip --disable-pip-version-check -q"
    TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
    if ! "$VENV/bin/python" -c "import torch" >/dev/null 2>&1; then
        echo "install: $TORCH_SPEC${TORCH_INDEX_URL:+ from $TORCH_INDEX_URL} (the build pip finds; see the top of this script)"
        $PIP install ${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"} "$TORCH_SPEC"
    fi
    if [ "$MODE" = venv ]; then
        $PIP install -e . numpy  # numpy: torch warns on every import without it
    else
        $PIP install -e ".[test]"
    fi
}

if [ "$MODE" = debs ] || [ "$MODE" = test ]; then
    install_debs
fi
[ "$MODE" = debs ] && exit 0
make_venv
echo "install: done ($("$VENV/bin/python" -c 'import torch, clusterdoc; print("clusterdoc", clusterdoc.__version__, "torch", torch.__version__)'))"
echo "install: '. $VENV/bin/activate' puts clusterdoc on your PATH"
