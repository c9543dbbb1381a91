#!/usr/bin/env bash
# The CUDA build test's environment: the venv of the torch-range tests' newest end (torch 2.15.0 from PyPI, a
# CUDA 13.2 build, made by scripts/torch_venv.sh; no venv of its own, so no more GB on disk) plus NVIDIA's nvcc of
# that torch's CUDA from the package registry, which compiles for any GPU architecture on a machine with no GPU.
# Usage: scripts/cuda_venv.sh [VENV]  -> prints the venv's python. Idempotent: pip installs only what is missing
# (wheels from pip's cache), the CUDA_HOME folder is remade.
#
# pip's layout is not a toolkit's: nvcc, its headers (crt/, cccl/) and the runtime all land in
# site-packages/nvidia/cu13/{bin,include,lib,nvvm}, and lib/ has libcudart.so.13 but no libcudart.so for -lcudart.
# torch.utils.cpp_extension wants CUDA_HOME/bin/nvcc, CUDA_HOME/include and CUDA_HOME/lib64, so $VENV/cuda is a
# folder of symlinks into that tree (nvcc finds its own nvvm/ and headers from its real path) plus libcudart.so.
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH=2.15.0  # the newest end of Makefile's TORCH_RANGE
if [ $# -ge 1 ]; then
    PY=$1/bin/python
else
    PY=$(bash scripts/torch_venv.sh $TORCH)
fi
VENV=$(cd "$(dirname "$PY")/.." && pwd)
# torch_venv.sh's lock (taken after it returned: it takes the same one): no other pip in this venv meanwhile
mkdir -p .cache
exec 9>".cache/$(basename "$VENV").lock"
flock 9
# nvcc must match the CUDA torch was built for: torch refuses another major, DeepSpeed another minor
CUDA=$("$PY" -W ignore -c "import torch; print(torch.version.cuda or '')")
[ -n "$CUDA" ] || { echo "the torch in $VENV is not a CUDA build (torch.version.cuda is None)" >&2; exit 1; }
MAJOR=${CUDA%%.*}
PKGS="nvidia-cuda-nvcc==$CUDA.* nvidia-cuda-crt==$CUDA.* nvidia-cuda-cccl==$CUDA.* nvidia-nvvm==$CUDA.* nvidia-cuda-cuobjdump==$CUDA.*"
ROOT=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/nvidia/cu$MAJOR
if ! [ -x "$ROOT/bin/nvcc" ] || ! [ -x "$ROOT/bin/cuobjdump" ] || ! [ -d "$ROOT/include/cccl" ] ||
    ! "$ROOT/bin/nvcc" --version | grep -q "release $CUDA,"; then
    # shellcheck disable=SC2086
    PIP_CONFIG_FILE=/dev/null "$PY" -m pip install -q $PKGS >&2  # from PyPI, like the venv (torch_venv.sh)
fi
HOME_DIR=$VENV/cuda
rm -rf "$HOME_DIR"
mkdir -p "$HOME_DIR/lib64"
for d in bin include nvvm; do ln -s "$ROOT/$d" "$HOME_DIR/$d"; done
for f in "$ROOT"/lib/*; do ln -s "$f" "$HOME_DIR/lib64/"; done
ln -sf "$ROOT/lib/libcudart.so.$MAJOR" "$HOME_DIR/lib64/libcudart.so"
"$HOME_DIR/bin/nvcc" --version | grep -q "release $CUDA," || { echo "nvcc in $HOME_DIR is not CUDA $CUDA" >&2; exit 1; }
echo "$VENV/bin/python"
