"""The failure signatures `clusterdoc why` knows in a job's output: one entry each, by category.

An entry is what an engineer greps for: `needles`, plain substrings that must all be in the line (linear, no
backtracking), an optional `node` pattern (one anchored group, bounded) to name the host it blames, the
category, what it means and what to do, and the real line it was learned from with its source. A new
signature is one entry in why/sigtable/<category>.py and one fixture in tests/fixtures/why/real/ (SOURCES.md).

Categories: code, oom, desync, hang, node, network, scheduler, environment, and two that are never a cause
by themselves: `peer` (a rank lost its connection to another: the network, or the other rank died first)
and `effect` (a rank stopped because something else failed: NCCL's abort after a timeout, a launcher's kill).
`weak` entries name a candidate, not a verdict: alone they give "unknown" with what would decide.
Order matters: the first entry that matches a line wins (specific before general; SIGNATURES below).
"""

from __future__ import annotations

from clusterdoc.why.signature import LINE_CAP, S, Signature
from clusterdoc.why.sigtable import (
    catalogue_apps,
    catalogue_cuda,
    catalogue_hpcrt,
    catalogue_mpi,
    catalogue_nccl,
    catalogue_torch,
    code,
    desync,
    effect,
    environment,
    hang,
    network,
    node,
    oom,
    peer,
    scheduler,
)

# The order of the tables: the first entry that matches a line wins. Few real lines hold two categories' words
# (9 of the ~8,000 lines of tests/fixtures/why: each kept its entry when the one table was split by category; NCCL's
# connect lines leave "Connection refused" to peer-refused by their `unless`); within a table, specific before
# general.
SIGNATURES: list[Signature] = [
    *node.SIGNATURES,
    *oom.SIGNATURES,
    *network.SIGNATURES,
    *environment.SIGNATURES,
    *code.SIGNATURES,
    *desync.SIGNATURES,
    *hang.SIGNATURES,
    *scheduler.SIGNATURES,
    *peer.SIGNATURES,
    *effect.SIGNATURES,
]
# The catalogues read from the tools' own sources (why/sigtable/catalogue_*.py, made by scripts/catalogue_*.py):
# fallbacks after every learned signature, each row's category from the code path that prints it (docs/why.md)
# session 29: the CUDA driver's and runtime's error strings and cuBLAS/cuDNN statuses no learned entry reads, first:
# NCCL's catalogue reads any "Cuda failure '...'" as a CUDA call that failed, these say which
SIGNATURES += catalogue_cuda.SIGNATURES
SIGNATURES += catalogue_nccl.SIGNATURES + catalogue_torch.SIGNATURES + catalogue_mpi.SIGNATURES
# issue 41 (whycat4): the HPC runtimes' catalogue (PETSc's error classes) after the launchers'
SIGNATURES += catalogue_hpcrt.SIGNATURES
# issue 41 (appcat): the scientific applications' and frameworks' own fatal forms (TDEP, AMReX, ESMF, ...), last
SIGNATURES += catalogue_apps.SIGNATURES
# session 29: a CUDA error whose kind no entry names, after all of them
SIGNATURES += catalogue_cuda.UNNAMED


# what the parsers make of a rank's traceback when no line above names its failure (never matched by needles)
FROM_TRACEBACK = [
    S("python-exception", "code", (), "a rank raised an exception: the code (or its data)",
      "ValueError: bad sample at step 5", "tests/fixtures/why/jobs/code-rank2/rank2.err (a real run)",
      "fix the code where it raised; a retry would fail the same way"),
    S("python-memory-error", "oom", (), "a rank raised MemoryError: the host ran out of memory (not the GPU)",
      "MemoryError", "https://github.com/microsoft/SoftTeacher/issues/149",
      "less host memory per rank (DataLoader workers, the dataset in RAM), or more --mem"),
    S("python-import-error", "environment", (), "a rank could not import a module: a package missing or built for "
      "another version in this environment", "ModuleNotFoundError: No module named 'torch'",
      "https://github.com/svip-lab/FastMVSNet/issues/17",
      "install the package in the job's environment (the same venv on every node: clusterdoc check)"),
    S("python-environment-error", "environment", (), "a rank's exception names its environment: a library that "
      "does not load or is not installed, a path it may not use (permission), a full disk, /dev/shm or the "
      "open-files limit",
      "OSError: [Errno 28] No space left on device",
      "clusterdoc/why/foreign.py EXCEPTION_RULES (made from the exception's type and message: no line of its own)",
      "fix what the message names on the node (the package it asks for, the library path, the disk, docker "
      "--shm-size, ulimit -n)"),
    S("python-env-variable-missing", "environment", (), "the job's environment lacks a variable the code reads "
      "(os.environ[NAME] raised KeyError): the batch script or the launcher does not export it",
      "KeyError: 'model_class_path'", "https://github.com/schaferd/Modular_DSCA_TF_Prediction/blob/"
      "d2d8fdf7dbf544f3ab8d4b140adf765965280c5f/ko_tests/slurm-248823.out (foreign.py: the KeyError's last frame is "
      "os.py's __getitem__)",
      "export the variable in the batch script (or pass it through the launcher: srun --export, mpirun -x)"),
    S("cuda-alloc-beyond-gpu", "code", (), "one allocation larger than any GPU (a TiB or more): no free memory could "
      "hold it, so the size is wrong (a shape the code computed wrong, a length or count off by orders of magnitude)",
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 37631.79 GiB (GPU 3; 79.21 GiB total "
      "capacity; 50.52 GiB already allocated; 24.67 GiB free; 52.32 GiB reserved in total by PyTorch)",
      "https://github.com/bigscience-workshop/Megatron-DeepSpeed/pull/384 (foreign.py _beyond_the_gpu: the size "
      "against the capacity the same message gives)",
      "print the shapes where it allocated (the frame above the OOM): the tensor's size comes from a wrong "
      "dimension, a sequence length or a batch size", weak=True),  # session 28: open_clip-11's was a real need
    S("python-library-error", "code", (), "a library's own exception (not one of Python's) that no rule names: what "
      "the library wraps failed (a device, a service, its install, the network) or the code's call into it",
      "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime executable",
      "clusterdoc/why/foreign.py EXCEPTION_RULES and BUILTIN_TYPES (made from the exception's type: no line of its "
      "own)",
      "the library's documentation of that exception, and its message's own words; the lines the library printed "
      "before it (its log level raised: NCCL_DEBUG=INFO, TF_CPP_MIN_LOG_LEVEL=0)", weak=True),
    S("python-module-attribute", "environment", (), "the code calls a name the installed module does not have: "
      "another version or build of the library than the code was written for, or a local file that shadows it",
      "AttributeError: module 'paddle.base.libpaddle' has no attribute 'ProcessGroupNCCL'",
      "https://github.com/PaddlePaddle/PaddleSeg/issues/3794 (foreign.py EXCEPTION_RULES: AttributeError on a module)",
      "pip show the library against the version the project pins; python -c 'import MOD; print(MOD.__file__)' for "
      "a file that shadows it"),
    S("python-version-mismatch", "environment", (), "a rank's exception says two installed versions disagree (a "
      "library built for another CUDA, torch or NCCL than the one installed): the install's, not the code's",
      "Exception: Installed CUDA version 11.0 does not match the version torch was compiled with 10.1",
      "https://github.com/deepspeedai/DeepSpeed/issues/1077 (foreign.py VERSION_WORDS)",
      "install the versions that match (the wheel built for the CUDA torch was built with; clusterdoc check "
      "compares them on every node)"),
    S("python-exception-unsure", "code", (), "a rank raised an exception whose cause may be outside the code (a "
      "connection, a timeout, a CUDA error no signature names)", "ConnectionResetError: [Errno 104] Connection reset "
      "by peer", "clusterdoc/why/foreign.py EXCEPTION_RULES (made from the exception's type: no line of its own)",
      "read what it was doing: the line before the exception, the other ranks' logs, the node's (dmesg)", weak=True),
    S("app-fatal-abort", "code", (), "the application stopped itself on an error it found (its own fatal message, "
      "then MPI_Abort): its code or its input", "FATAL: mpp_domains_define.inc: not all the pe_end are in the pelist",
      "clusterdoc/why/logs.py _APP_BANNER (the application's banner line before the MPI library's abort report)",
      "the message and the source line it names (the input, the decomposition, the configuration it checks)"),
    S("python-scheduler-error", "scheduler", (), "a rank's exception says the cluster or the cloud refused or ended "
      "the job (no capacity in the zones or regions asked for, a quota, its time limit): the scheduler's, not the "
      "code's",
      "sky.exceptions.ResourcesUnavailableError: Failed to provision all possible launchable resources.",
      "clusterdoc/why/foreign.py EXCEPTION_RULES (made from the exception's type and message: no line of its own)",
      "relax the request (other zones, regions, clouds or GPU types; spot vs on-demand) or raise the quota; retry "
      "later; for a time limit, more time (--time) or a checkpoint the job resumes from"),
    S("python-config-validation", "code", (), "a library's configuration was rejected by its own schema "
      "(pydantic's ValidationError): the library is another version than the config was written for, or a value "
      "is wrong", "pydantic_core._pydantic_core.ValidationError: 1 validation error for DeepSpeedZeroConfig",
      "https://github.com/OpenBMB/MiniCPM-V/issues/694 (foreign.py EXCEPTION_RULES; and "
      "deepspeedai/DeepSpeedExamples#287)",
      "the field the message names: its value, and the library's version against the one the project pins",
      weak=True),
    S("python-api-mismatch", "code", (), "a call got a keyword argument the called function does not take: the "
      "library installed is another version than the code was written for (or the call is wrong)",
      "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'worker_extension_cls'",
      "clusterdoc/why/foreign.py EXCEPTION_RULES (made from the exception's type and message: no line of its own)",
      "pip show the library the call goes into, against the version the project pins (requirements, setup.py)",
      weak=True),
    S("segfault-at-exit", "code", (), "a process crashed (a segmentation fault) in a library's cleanup at exit "
      "(MPI_Finalize, atexit, a destructor): after the work, not in the job's own code",
      "Program received signal SIGSEGV: Segmentation fault - invalid memory reference. ... in PMPI_Finalize",
      "clusterdoc/why/foreign.py (a segfault signature with a cleanup frame or line around it: no line of its own)",
      "the backtrace's library (its version against the MPI, NCCL or driver it was built for); the job's output "
      "before it is complete", weak=True),
    # round 9: a segfault whose backtrace names no routine of the program (nwchem-683: an MSYS2 build's hex frames)
    S("segfault-unnamed", "code", (), "a process crashed (a segmentation fault) and its backtrace names no routine "
      "(bare addresses, `in ???`): nothing says whose code it was", "#0  0xffb69ada (after Program received "
      "signal SIGSEGV)", "https://github.com/nwchemgit/nwchem/issues/683 (foreign.py: a segfault signature with "
      "unnamed frames after it: no line of its own)",
      "rebuild with symbols (-g, -fbacktrace) and rerun: the first named frame says whose code crashed", weak=True),
    S("sigkill-loading", "oom", (), "a rank was killed by SIGKILL while the model's weights were loading: the "
      "host's OOM killer (every rank holds a copy of the weights in host memory at that point)",
      "Loading checkpoint shards:  57% 4/7 ... failed (exitcode: -9) local_rank: 0",
      "clusterdoc/why/foreign.py (a SIGKILL signature right after a loading line: no line of its own)",
      "load the weights once per node or straight to the GPU (low_cpu_mem_usage, device_map), fewer ranks per "
      "node, or more --mem; the node's dmesg shows the OOM killer"),
    S("launcher-sigkill-alone", "oom", (), "a worker was killed by SIGKILL while its launcher lived on, and the log "
      "shows no scheduler, node or user stop: the host's OOM killer (it kills the largest process: a worker)",
      "  exitcode  : -9 (pid: 14750)", "clusterdoc/why/foreign.py (torchrun's, DeepSpeed's or mp.spawn's report of "
      "one worker's SIGKILL, with no time limit, preemption, cancel or node failure line in the log)",
      "the node's dmesg shows the OOM killer (sacct -o MaxRSS under Slurm); less host memory per rank (DataLoader "
      "workers, loading the model once per node, CPU offload), or more --mem"),
    S("gloo-mesh-loopback", "environment", (), "gloo could not connect its ranks, and a rank had bound to loopback "
      "because its host name resolved to no local address: that node's name resolution (or the interface to use "
      "was not given to gloo)", "Gloo connectFullMesh failed (after: Unable to resolve hostname to a (local) "
      "address. Using the loopback address as fallback)", "clusterdoc/why/foreign.py (gloo's loopback warning, then "
      "its mesh failure: no line of its own; vllm-project/vllm#7074)",
      "set GLOO_SOCKET_IFNAME (and NCCL_SOCKET_IFNAME) to the interface the nodes reach each other on, in every "
      "worker's environment; or make the host name resolve to that address (/etc/hosts, DNS)"),
    S("missing-on-a-node", "environment", (), "a task's command is not on the node where it ran, in a job whose log "
      "shows other nodes: that node lacks what the others have (its mount, its image), or it is missing everywhere",
      "slurmstepd: error: execve(): python3: No such file or directory (a log naming two nodes)",
      "clusterdoc/why/foreign.py (a missing-command signature in a log of several nodes: no line of its own)",
      "run `clusterdoc check` on the nodes (or `srun -N2 which CMD`): the node without it is drained or excluded "
      "(--exclude, submit --retries); missing on every node: install it in the job's environment", weak=True),
    S("duplicate-gpu-mpirun", "code", (), "two ranks use the same GPU under mpirun: no launcher there gives each "
      "rank its GPU, the script must pin it from its local rank (Horovod's torch.cuda.set_device(hvd.local_rank()))",
      "[1,2]<stdout>:smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 "
      "both on CUDA device 1000", "clusterdoc/why/foreign.py (Duplicate GPU detected in a log of mpirun's tagged "
      "output: no line of its own)",
      "pin the GPU in the script from the local rank (torch.cuda.set_device(hvd.local_rank()) or "
      "OMPI_COMM_WORLD_LOCAL_RANK) before any CUDA call"),
    S("module-then-missing", "environment", (), "the node has no module system, and a command the job's modules "
      "would have provided is then not found: the job ran without its software on that node",
      "environment: line 17: /usr/share/lmod/lmod/libexec/lmod: No such file or directory ... mpirun: command not "
      "found", "clusterdoc/why/foreign.py (a module-system-missing line, then a command not found: no line of its "
      "own; TACC/Lmod#645, access-ci-org/Jetstream_Cluster#18)",
      "the node's image or its mount of the module tree; `type module` and `module avail` in a job on that node"),
    # round 8 (memory): Slurm's "Exceeded job/step memory limit at some point" and a task killed by SIGKILL in the
    # same log: the older task/cgroup's memory kill (it printed no oom-kill event)
    S("slurm-memory-limit-kill", "oom", (), "the job reached its memory limit (Slurm's cgroup) and a task was killed "
      "by SIGKILL: the cgroup's memory kill (host memory)",
      "slurmstepd: error: Exceeded step memory limit at some point. (and srun: error: node: task 0: Killed)",
      "clusterdoc/why/foreign.py (a memory-limit line with a SIGKILL line in the same log: no line of its own)",
      "ask for more memory (--mem / --mem-per-cpu): sacct -j JOB -o JobID,State,MaxRSS,ReqMem shows the peak"),
    # round 9: a KeyError on a launcher's variable (dmcp-13, pyskl-34, mmdet-77, mmdet-1596, swinbert-48,
    # groupformer-5, bmtrain-19, dat-31): the script was started without the launcher it expects
    S("launcher-variable-missing", "code", (), "the script reads a variable its launcher sets (RANK, WORLD_SIZE, "
      "LOCAL_RANK, MASTER_ADDR ...) and it is not set: it was started without that launcher (python script.py, a "
      "debugger, a --launcher option that does not match how it was run)", "KeyError: 'RANK'",
      "clusterdoc/why/foreign.py (a KeyError naming a launcher variable: no line of its own; "
      "open-mmlab/mmdetection#77 and #1596, Zx55/dmcp#13)",
      "start it with the launcher it expects (torchrun --nproc_per_node N, the project's dist_train.sh, srun with "
      "its --launcher slurm), or turn its distributed mode off for one process"),
    S("nccl-failed", "peer", (), "a torch.distributed (NCCL/gloo) call failed: the lines after it or another "
      "rank's log say why", "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
      "ProcessGroupNCCL.cpp:1333, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.6",
      "https://github.com/hkproj/pytorch-transformer-distributed/issues/1",
      "rerun with NCCL_DEBUG=INFO (the WARN line says why); read the other ranks' logs", weak=True),
]  # fmt: skip
# a rank killed by SIGKILL, said alone: the host's OOM killer most often, but a time limit, a preemption, an
# eviction or a user's kill -9 print the same line; the node's kernel log or Slurm's record decides
# the rank that prints these lines reports the others (Horovod's coordinator lists the ranks it waits for): its
# prefix names the witness, not the culprit
REPORTER_SIGNS = ("horovod-stalled", "torch-dump-signal", "torch-global-timeout")
SIGKILL_SIGNS: tuple[str, ...] = ("torchrun-sigkill", "deepspeed-sigkill", "sigkill", "mpirun-sigkill",
                                  "exit-code-137", "sge-exit-137", "shell-killed", "spawn-sigkill",
                                  "nextflow-exit-137", "launch-sigkill", "shell-killed-bare")  # fmt: skip
# a launcher's report that one worker got SIGKILL while it lived on (torchrun, torch.distributed.launch, DeepSpeed,
# mp.spawn, Nextflow): with no scheduler, node or outside stop in the log, the kernel's OOM killer (mpirun's and a
# shell's are left thin: a node lost under mpirun and a job script's kill print the same)
WORKER_SIGKILL_SIGNS = (
    "torchrun-sigkill",
    "deepspeed-sigkill",
    "sigkill",
    "spawn-sigkill",
    "nextflow-exit-137",
    "launch-sigkill",
    "shell-killed-bare",  # session 28: an interactive shell's bare "Killed" (no job script's line)
)
# an application's fatal-error head: its message may be on the lines after it (a memory one there is oom, not code)
APP_FATAL_SIGNS: tuple[str, ...] = ("openfoam-fatal", "qe-error-routine", "wrf-fatal", "lammps-error-one",
                                    "lammps-error")  # fmt: skip
APP_FATAL_SIGNS += ("namd-fatal", "gromacs-fatal", "gromacs-fatal-old", "fms-fatal")  # round 9
APP_FATAL_SIGNS += ("cesm-errmsg",)  # session 18
APP_FATAL_SIGNS += catalogue_apps.HEADS  # issue 41 (appcat): the applications' catalogue's code rows
# HDF5's error-stack head (a weak row of the applications' catalogue): with netCDF's own error after it, netCDF's
# line names the failure (HDF5 is netCDF-4's storage layer: ngen-749)
HDF5_UNDER_NETCDF = tuple(s.name for s in catalogue_apps.SIGNATURES if s.name.startswith("cat-hdf5-"))
APP_FATAL_NEAR = 6
# a command missing where a task ran (environment by themselves; in a log of several nodes, maybe one node's)
MISSING_SIGNS: tuple[str, ...] = ("execve-missing", "sh-not-found")
# a request Slurm refused (at submission, or a step's): the same request is refused again, a retry cannot help
REFUSED_SIGNS: tuple[str, ...] = ("sbatch-rejected", "sbatch-failed", "srun-step-memory", "slurm-invalid-gres",
                                  "salloc-refused", "slurm-assoc-minutes", "site-hour-balance")  # fmt: skip
# round 8: the other batch systems' refusals (PBS's qsub, LSF's bsub, Grid Engine's qsub, srun's, Flux's
# allocation), and MPI launchers that could not execute the program on a node (as a missing command)
REFUSED_SIGNS += ("srun-allocate-refused", "qsub-exceeds-queue", "qsub-violates", "qsub-would-exceed",
                  "qsub-unknown-queue", "lsf-not-submitted", "sge-unable-to-run", "flux-alloc",
                  "srun-step-cpus", "torque-submit-error")  # fmt: skip
MISSING_SIGNS += ("hydra-execvp", "ompi-no-executable", "ompi-no-executable-find")
SIGKILL_SIGNS += ("k8s-exit-137",)  # round 9 (sites)
MISSING_SIGNS += ("flux-start-failed",)  # round 9 (sites)
# round 9 (sites): a request no node can satisfy, a resource request outside the queue's limits
REFUSED_SIGNS += ("slurm-node-config-unavailable", "lsf-rusage-refused")
# round 8: a file system's strerror on a Python exception's line that EXCEPTION_RULES names the same: the
# exception's sign (its file:line) says it (why/foreign.py)
DEFER_TO_EXCEPTION = ("fs-quota", "fs-stale", "fs-no-space")
# round 9: the variables a launcher sets that a script reads (a KeyError on one: started without its launcher)
LAUNCHER_VARS = frozenset(("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK", "GROUP_RANK",
                           "MASTER_ADDR", "MASTER_PORT", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
                           "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK",
                           "PMI_SIZE"))  # fmt: skip
# round 9: the module system's program missing on the node, and the lines of a command then not found
MODULE_SYSTEM_MISSING = ("lmod-program-missing", "modulecmd-missing")
COMMAND_MISSING = ("command-not-found", "sh-not-found", "execve-missing")
# a segfault's own lines (code by themselves; a cleanup frame around one makes it segfault-at-exit)
SEGV_SIGNS = ("fortran-sigsegv", "srun-task-segv", "ifort-sigsegv")
# a launcher that could not execute the program, like a command missing: in a log of several nodes, maybe one node's
MISSING_SIGNS += ("ompi-no-executable-wrapped", "execve-permission", "ompi-execve-failed")
_BY_NAME = {s.name: s for s in SIGNATURES + FROM_TRACEBACK}


def get(name: str) -> Signature:
    return _BY_NAME[name]


_FIRST = [(s.needles[0], s.lower, s) for s in SIGNATURES]
# A line holds a signature's first needle only if its lowercase holds one of these keys (each needle's lowercase
# holds one: the keys were picked greedily over the needles, and a needle that holds none is its own key). Most
# lines of a training log hold none: one pass of ~60 short checks instead of one per signature (benchmarks.md).
_KEYS_PICKED = (
    "error", "mory", "fail", "able", "not ", "ted ", "term", "exce", " to ", "kill", "the ", "vice", "exit", "atal",
    "job ", "has ", " rank", "sion", "nnec", "sign", "cate", "net/", "match", "stat", "ere ", "cati", "med ", "exec",
    "got ", "allo", "ce f", "n't ", " is ", "mpi_", "addr", "ment", "and ", "qsub: ", "rtion ", "d sy", "led ",
    "handle", "dac mc", " h_r", "inary", "ccl ", "ed p", " bui", "sted", "out_", "rive", "bin/sh", "vate", "er.c",
    "oom-", "runt", "th <= ", "cgrp", "roup ", ": line", " xid",
    "abort",  # issue 41 (appcat): the applications' abort forms (amrex::Abort::N::, MFEM abort:)
)  # fmt: skip
_KEYS = _KEYS_PICKED + tuple(
    sorted(
        {n.lower() for n, _, _ in _FIRST}
        - {n.lower() for n, _, _ in _FIRST if any(k in n.lower() for k in _KEYS_PICKED)}
    )
)


# Each signature filed under one key its first needle holds (the longest: the rarest, most often): a line can hold
# that signature's needle only if it holds that key, so a line is tried against the signatures of the keys it holds
# alone, in SIGNATURES' order (session 21: 965 signatures; a line with "error" no longer tries them all)
_BY_KEY: dict[str, list[int]] = {}
for _i, _first in enumerate(_FIRST):
    _BY_KEY.setdefault(max((k for k in _KEYS if k in _first[0].lower()), key=len), []).append(_i)


def any_key(low: str) -> bool:
    """Whether a lowercased text holds one of the keys (a text without one holds no signature's line)."""
    return any(map(low.__contains__, _KEYS))


def match(line: str) -> Signature | None:
    """The first signature that matches the line (its first LINE_CAP characters), or None."""
    line = line[:LINE_CAP]
    low = line.lower()
    held = [k for k in _KEYS if k in low]
    if not held:
        return None
    tried = _BY_KEY.get(held[0], ()) if len(held) == 1 else sorted(i for k in held for i in _BY_KEY.get(k, ()))
    for i in tried:
        needle, lower, sig = _FIRST[i]
        if needle in (low if lower else line) and sig.matches(line, low):
            return sig
    return None
