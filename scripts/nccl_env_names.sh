#!/bin/sh
# The names NCCL reads, for clusterdoc/checks/nccl_names.py: run in a clone of github.com/NVIDIA/nccl.
# Prints one NCCL_* name a line (the checks module keeps them without the prefix).
set -eu
{
  git grep -hoE 'NCCL_PARAM\([A-Za-z0-9_]+, *"[A-Z0-9_]+"' HEAD -- src | sed -E 's/.*"([A-Z0-9_]+)"/NCCL_\1/'
  git grep -hoE 'DEFINE_NCCL_PARAM\([A-Za-z0-9_]+, *[a-z0-9_]+, *NCCL_[A-Z0-9_]+' HEAD -- src | sed -E 's/.*(NCCL_[A-Z0-9_]+)$/\1/'
  git grep -hoE '(ncclGetEnv|getenv|GetEnv)\("NCCL_[A-Z0-9_]+"' HEAD -- src | sed -E 's/.*"(NCCL_[A-Z0-9_]+)"/\1/'
  git show HEAD:docs/userguide/source/env.rst | grep -oE '^NCCL_[A-Z0-9_]+'
} | grep -v INITIALIZER | sort -u
