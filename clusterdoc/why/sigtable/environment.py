"""The `environment` failure signatures: the software stack or the container: versions, libraries, missing programs,
paths, permissions, shared memory, launch set-ups.

One entry each (why/signature.py says what an entry holds). Within this table the first entry that matches a line
wins; why/signatures.py says the order of the tables.
"""

from __future__ import annotations

import re

from clusterdoc.why.signature import NODE, S, Signature

# round 10: MPICH's launcher (Hydra: mpiexec, and Intel MPI's) rejecting an option only Open MPI's mpirun takes:
# the mpiexec on the PATH is MPICH's while the script, wrapper or tool was written for Open MPI (radiasoft-183's
# --mca, picongpu-4739's -am, torchpack-36's --allow-run-as-root: each thread settled on the MPI installed or
# found). Another option (a typo, pmi_args from a program of another MPI started alone) stays thin
_WORD_GOES_ON = "abcdefghijklmnopqrstuvwxyz0123456789_-"  # "am" is not "amd64": the option ends the line
OPENMPI_ONLY_OPTIONS = ("mca", "gmca", "am", "amca", "allow-run-as-root", "oversubscribe", "npernode", "tag-output",
                        "report-bindings", "display-map")  # fmt: skip
# round 10: the MPI launcher itself crashed (mpirun/orterun, its daemon orted, PRRTE's prterun/prted), not the
# program: a frame of the launcher's own binary in the crash's backtrace (ompi-7483's "[ 5] mpirun[0x400f7a]",
# ompi-1916's gdb "in orterun ()"), or the shell's report of the daemon's segfault (ompi-release-875). Its version's
# bug or its build: the MPI installation, whatever the job runs
_LAUNCHER_CRASHED = (
    "the MPI launcher itself crashed (mpirun, its daemon orted or PRRTE's), not the program: its "
    "version's bug or its build (the MPI installation)"
)
_LAUNCHER_NEXT = (
    "another Open MPI version or build (the site's other MPI module); the launcher options that reach "
    "the crashing code (stdin forwarding, --display-map) left out; the MPI's issue tracker"
)

# launchers and interpreters a job runs: not found by the shell, the job never ran (a profile's tool is harmless)
_RUNNERS = ("mpirun", "mpiexec", "srun", "torchrun", "python", "python3", "deepspeed", "accelerate", "horovodrun",
            "nvcc", "apptainer", "singularity", "julia", "Rscript", "java", "nvidia-smi")  # fmt: skip

# AWS's libfabric plugin for NCCL with no fabric device, in either of its words (sigs ofi-no-provider, -protocol)
OFI_NO_DEVICE = "NCCL's libfabric plugin found no fabric device to use (EFA not visible where it runs)"

SIGNATURES: list[Signature] = [
    # Slurm's authentication (munge) failed on the host that submits: munged not running, its socket or key
    # missing (munge-118; Slurm's auth/munge plugin prints "Munge encode failed")
    S("slurm-munge-auth", "environment", ("Protocol authentication error",),
      "Slurm could not authenticate the request: munge (its authentication daemon) is not running or cannot be "
      "reached on this host, or its key differs from the controller's",
      "sbatch: error: Batch job submission failed: Protocol authentication error",
      "https://github.com/dun/munge/issues/118",
      "the admins: munged on this host (munge -n | unmunge; its socket, its key against the controller's)"),
    S("slurm-munge-encode", "environment", ("Munge encode failed",),
      "Slurm could not authenticate the request: munge (its authentication daemon) is not running or cannot be "
      "reached on this host",
      "sbatch: error: Munge encode failed: Failed to access \"/run/munge/munge.socket.2\": No such file or directory",
      "https://github.com/dun/munge/issues/118", "the admins: munged on this host (munge -n | unmunge)"),
    # Flux: the job shell could not start the program (flux-core-4195: not installed on the nodes; the allocation's
    # timeout after it is its effect), and a node lost under a job as flux jobs prints the exception's note
    # (flux-core-6653)
    S("flux-start-failed", "environment", ("start failed: ", ": No such file or directory"),
      "Flux could not start the program on a node: it is not there (not installed, not on the PATH, a path only the "
      "login node has)",
      "0.778s: flux-shell[1]: FATAL: task 0: start failed: stress: No such file or directory",
      "https://github.com/flux-framework/flux-core/issues/4195",
      "the program's path on the compute nodes (flux run -N1 which PROG), the module or the container"),
    # --- environment: the software stack or the container ---
    S("nccl-shm", "environment", ("Error while creating shared memory segment",),
      "NCCL could not create its shared-memory segment: /dev/shm is too small (a container's 64 MB default)",
      "include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-250a7cc850ba9298-0-1-3 "
      "(size 9637888)", "https://github.com/NVIDIA/nccl/issues/342",
      "give the container more /dev/shm (docker --shm-size=16g or --ipc=host), or NCCL_SHM_DISABLE=1"),
    S("nccl-shm-extend", "environment", ("NCCL WARN", "failed to extend /dev/shm"),
      "NCCL could not grow its segment in /dev/shm: too small (a container's default)",
      "ubuntu:9621:9691 [6] misc/shmutils.cc:71 NCCL WARN Error: failed to extend /dev/shm/nccl-fjwOOB to 5967876 "
      "bytes", "https://github.com/NVIDIA/nccl-tests/issues/166",
      "give the container more /dev/shm (docker --shm-size=16g or --ipc=host)"),
    S("shm-fallocate", "environment", ("posix_fallocate failed",),
      "no space left in /dev/shm for NCCL's buffers",
      "include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device",
      "https://github.com/NVIDIA/nccl/issues/342",
      "give the container more /dev/shm (docker --shm-size=16g or --ipc=host)"),
    S("shm-bus-error", "environment", ("Unexpected bus error encountered in worker",),
      "a DataLoader worker died of a bus error: /dev/shm is too small (a container's default 64 MB)",
      "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
      "https://github.com/msr-fiddle/pipedream/issues/28",
      "docker --shm-size=16g or --ipc=host (or -v /dev/shm:/dev/shm); or fewer DataLoader workers"),
    S("sigbus", "environment", ("Caught signal 7 (Bus error",),
      "a process died of SIGBUS (a bus error): in a container, /dev/shm too small for NCCL's or the loader's "
      "shared memory",
      "[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)",
      "https://github.com/msr-fiddle/pipedream/issues/76",
      "docker --shm-size=16g or --ipc=host; NCCL_SHM_DISABLE=1 to confirm"),
    # the shell's report of a process that died of SIGBUS (session 26: PyTorch-BigGraph's share_memory() in a
    # container with Docker's 64 MB /dev/shm), as UCX's and torchrun's lines for the same signal
    S("shell-bus-error", "environment", ("Bus error (core dumped)",),
      "a process died of SIGBUS (a bus error): in a container or a node with a small /dev/shm, the shared memory it "
      "mapped (share_memory(), the DataLoader's, NCCL's) ran out",
      "Bus error (core dumped)", "https://github.com/facebookresearch/PyTorch-BigGraph/issues/33",
      "df -h /dev/shm where it ran; docker --shm-size=16g or --ipc=host; a file it mmaps that was truncated is the "
      "other cause"),
    # torchrun's failure table for a rank that died of SIGBUS: in a PyTorch job, shared memory (/dev/shm: the
    # DataLoader's and NCCL's) too small, as UCX's and the DataLoader's own bus-error lines above say
    S("torchrun-sigbus", "environment", ("Signal 7 (SIGBUS) received by PID",),
      "a rank died of SIGBUS (a bus error): in a PyTorch job, /dev/shm too small for the DataLoader's or NCCL's "
      "shared memory (a container's 64 MB default, or a node's small tmpfs)",
      "  traceback : Signal 7 (SIGBUS) received by PID 16614",
      "https://github.com/hiyouga/LlamaFactory/issues/2206",
      "df -h /dev/shm on the node; docker --shm-size=16g or --ipc=host, fewer DataLoader workers; NCCL_SHM_DISABLE=1 "
      "to confirm"),
    S("loader-bus-error", "environment", ("DataLoader worker", "killed by signal: Bus error"),
      "a DataLoader worker died of a bus error: /dev/shm is too small (a container's default 64 MB)",
      "RuntimeError: DataLoader worker (pid 325) is killed by signal: Bus error.",
      "https://github.com/msr-fiddle/pipedream/issues/28",
      "docker --shm-size=16g or --ipc=host (or -v /dev/shm:/dev/shm); or fewer DataLoader workers"),
    S("sh-not-found", "environment", ("/bin/sh: ", ": not found"),
      "a command the job runs is not installed where it runs (not on the PATH of that node or container)",
      "/bin/sh: 1: torchrun: not found", "https://github.com/hiyouga/LlamaFactory/issues/5217",
      "install it in the job's environment on every node (or call it by its path: python -m torch.distributed.run)"),
    # the batch script itself, which slurmd wrote to the node's spool (SlurmdSpoolDir/jobN/slurm_script), is gone
    # or cannot be executed there: that node's spool or /tmp (full, cleaned, another mount), or the script's #!
    # interpreter missing on it: the node first, a candidate (its slurmd log decides)
    # dash (Debian's and Ubuntu's /bin/sh) running a script written for bash: "SCRIPT: LINE: source: not found"
    S("sh-source-not-found", "environment", ("source: not found",),
      "a bash script ran under sh (dash): `source` is bash's, so the environment it sets up was never loaded",
      "run.sh: 18: source: not found", "https://github.com/sgl-project/sglang/issues/3512",
      "run it with bash (`bash run.sh`, or `#!/bin/bash` as its first line), or use `.` in place of `source`"),
    # a module the job asked for that the site's module system does not have: the job then lacks what it loads.
    # A candidate only: profiles print such errors for stale module names in jobs that fail of something else
    S("lmod-error", "environment", ("Lmod has detected the following error",),
      "a `module load` failed (Lmod): the job runs without the software or libraries it asked for",
      "Lmod has detected the following error: The following module(s) are unknown:",
      "https://github.com/hpcugent/vsc_user_docs/issues/440", "module spider NAME on the cluster the job ran on (the "
      "name, its version, the module path: `module use`); a failure later in the log may follow from it",
      weak=True),
    # session 21: the module system itself broke, not one module: Lmod's own Lua could not load a library it needs
    # (lua-posix missing on that host: "libexec/lmod:61: module 'posix' not found"), and CIME's wrapper that stops
    # the case on it ("ERROR: module command ... failed with message:")
    S("lmod-lua-broken", "environment", ("not found", "libexec/lmod:", "module '"),
      "the module system is broken on this host: Lmod's Lua could not load a library it needs (lua-posix or "
      "lua-filesystem missing), so no `module` command works",
      "/usr/bin/lua: /cluster/installations/lmod/lmod/libexec/lmod:61: module 'posix' not found:",
      "https://github.com/NorESMhub/NorESM/issues/572",
      "run `module list` on that host; the admins (the Lua packages Lmod needs: lua-posix, lua-filesystem)"),
    S("cime-module-failed", "environment", ("ERROR: module command ", "failed with message"),
      "a `module` command of the case's environment failed (the module system, or a module the machine's config "
      "names): the case stopped before it ran",
      "ERROR: module command /cluster/installations/lmod/lmod/libexec/lmod python --force purge  failed with message:",
      "https://github.com/ESMCI/cime (CIME/utils.py: run_cmd_no_fail's message)",
      "the message on the lines after it; the same module command by hand on that host"),
    S("modulefile-missing", "environment", ("Unable to locate a modulefile",),
      "a `module load` failed (Environment Modules): the job runs without the software it asked for",
      "ModuleCmd_Load.c(213):ERROR:105: Unable to locate a modulefile for 'openmpi/4.1.1'",
      "https://github.com/cea-hpc/modules (its ERROR:105 message)", "module avail on the node; the name and version",
      weak=True),
    S("execve-missing", "environment", ("execve(): ", "No such file or directory"),
      "Slurm could not start the task's command: it is not installed where the task runs (not on that node's PATH)",
      "slurmstepd: error: execve(): torchrun: No such file or directory",
      "https://github.com/CSCfi/pytorch-ddp-examples/issues/1",
      "install it in the job's environment on every node (module load, the container), or call it by its path"),
    # round 8: Open MPI's daemon is not on the remote nodes' PATH (a non-interactive ssh shell without the module)
    S("orted-not-found", "environment", ("orted: command not found",),
      "mpirun could not start its daemon on a node: Open MPI is not on that node's PATH for a non-interactive "
      "shell", "bash: orted: command not found", "https://github.com/open-mpi/ompi-www (the FAQ: orted not found)",
      "mpirun --prefix $MPI_HOME (or the module in ~/.bashrc before its interactive-only guard)"),
    S("prted-not-found", "environment", ("prted: command not found",),
      "mpirun (Open MPI 5) could not start its daemon on a node: Open MPI is not on that node's PATH",
      "bash: prted: command not found", "https://github.com/open-mpi/ompi (prte's daemon)",
      "mpirun --prefix $MPI_HOME (or the module in ~/.bashrc before its interactive-only guard)"),
    # session 21: a launcher or an interpreter the job runs is what the shell could not find (no profile line runs
    # one): the job never started its program (zsh words it "command not found: NAME")
    *(S(f"runner-not-found-{cmd}", "environment", (f" {cmd}: command not found",),
        f"the shell could not find {cmd}: the job's launcher or interpreter is not on the node's PATH (a module not "
        "loaded in the batch script, another environment than the login shell's)",
        f"/var/spool/slurmd/job123/slurm_script: line 12: {cmd}: command not found",
        "https://github.com/bminor/bash (execute_cmd.c: 'command not found')",
        f"load its module or activate its environment in the job script itself (which {cmd} in the job; "
        "#SBATCH --export, a non-interactive shell's profile)") for cmd in _RUNNERS),
    *(S(f"runner-not-found-zsh-{cmd}", "environment", (f"command not found: {cmd}",),
        f"the shell could not find {cmd}: the job's launcher or interpreter is not on the node's PATH",
        f"zsh: command not found: {cmd}", "https://github.com/zsh-users/zsh (Src/exec.c: 'command not found')",
        f"load its module or activate its environment in the job script itself (which {cmd} in the job)")
      for cmd in _RUNNERS),
    # the NVIDIA container runtime's hook could not reach the node's driver or devices (Docker's, Podman's, enroot's
    # --gpus): the container never started
    S("nvidia-container-cli", "environment", ("nvidia-container-cli: ", "error"),
      "the NVIDIA container runtime could not set up the GPUs for the container (the node's driver not loaded, a "
      "library or device it needs): the container never started",
      "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown",
      "https://github.com/NVIDIA/libnvidia-container (src/cli: its error messages)",
      "nvidia-smi on the node itself; the toolkit's config (nvidia-ctk runtime configure) and the runtime Docker "
      "uses"),
    # a script's shebang names an interpreter the node does not have ("#!/usr/bin/env python" where only python3 is)
    S("env-interpreter-missing", "environment", ("No such file or directory", "/usr/bin/env: "),
      "the script's shebang names an interpreter this node does not have (#!/usr/bin/env NAME)",
      "/usr/bin/env: 'python': No such file or directory", "https://github.com/coreutils/coreutils (src/env.c)",
      "the interpreter on the node (which python3), or the shebang the node has (#!/usr/bin/env python3)"),
    # session 24 (heldout-fresh18, after it was scored): the batch script's own line could not find its command
    # (Slurm's slurm_script, PBS's JOBID.SC): the job's program or its environment is not on the node's PATH; a
    # profile script's line (harmless more often) is command-not-found's, a candidate, and so is the script's own
    # `module` call (a site without modules on that node: the job may still run its program)
    S("batch-script-command-not-found", "environment", ("slurm_script: line ", ": command not found"),
      "the batch script could not find the command it runs: its program or environment is not on the node's PATH "
      "(a module not loaded, an environment not activated in the script)",
      "/var/spool/slurm/d/job416385/slurm_script: line 4: _toil_worker: command not found",
      "https://github.com/ComparativeGenomicsToolkit/cactus/issues/894",
      "load the module or activate the environment in the batch script itself (which CMD inside the job)",
      unless=(" module: command not found", " ml: command not found")),
    S("pbs-script-command-not-found", "environment", (".SC: line ", ": command not found"),
      "the batch script could not find the command it runs: its program or environment is not on the node's PATH",
      "/var/spool/pbs/mom_priv/jobs/1234.pbs01.SC: line 9: python: command not found",
      "https://github.com/bminor/bash (execute_cmd.c: 'command not found'; PBS names the job's script JOBID.SC)",
      "load the module or activate the environment in the batch script itself (which CMD inside the job)",
      unless=(" module: command not found", " ml: command not found")),
    S("command-not-found", "environment", (": command not found",),
      "a shell could not find a command (a module or a tool a profile script calls is often harmless; the launcher "
      "or the script itself is not)", "sbatch: command not found",
      "https://github.com/p-lambda/incontext-learning/issues/4",
      "see which command: the launcher's (install it on every node) or a profile line's (harmless)", weak=True),
    S("ninja-build-failed", "environment", ("ninja: build stopped",),
      "a C++/CUDA extension failed to compile at run time (the CUDA toolkit or compiler does not fit torch)",
      "  ninja: build stopped: subcommand failed.", "https://github.com/ashawkey/torch-ngp/issues/66",
      "build the extension once where the job runs (the same CUDA toolkit as torch.version.cuda, a supported gcc), "
      "or install a prebuilt wheel"),
    # torch.utils.cpp_extension's JIT build (DeepSpeed's ops, apex, flash-attn): its own failure line, and the
    # ninja call it wraps in a CalledProcessError (a launcher-like wrapper elsewhere, here the build's exit)
    S("extension-build-failed", "environment", ("Error building extension",),
      "a C++/CUDA extension failed to compile at run time (the CUDA toolkit or compiler does not fit torch)",
      "RuntimeError: Error building extension 'fused_adam'", "https://github.com/deepspeedai/DeepSpeed/issues/6892",
      "build the op ahead (DS_BUILD_FUSED_ADAM=1 pip install deepspeed) where the job runs, with the CUDA toolkit of "
      "torch.version.cuda and a supported gcc; the compiler's error above the line says what failed"),
    S("ninja-jit-failed", "environment", ("Command '['ninja', '-v']' returned non-zero exit status",),
      "a C++/CUDA extension failed to compile at run time (torch's JIT build: ninja exited non-zero)",
      "[rank1]: subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
      "https://github.com/deepspeedai/DeepSpeed/issues/6892",
      "build the op ahead where the job runs (the CUDA toolkit of torch.version.cuda, a supported gcc); the "
      "compiler's error above the line says what failed"),
    S("nvcc-failed", "environment", ("error: command '", "nvcc' failed"),
      "nvcc failed to build an extension (the CUDA toolkit, the GPU architecture or the compiler)",
      "error: command '/usr/local/cuda/bin/nvcc' failed with exit status 4",
      "https://github.com/GOATmessi8/RFBNet/issues/74",
      "the CUDA toolkit that matches torch.version.cuda, TORCH_CUDA_ARCH_LIST for the node's GPUs, a supported gcc"),
    S("cuda-version-mismatch", "environment", ("mismatches the version that was used to compile",),
      "the CUDA toolkit found differs from the one torch was built with (an extension cannot be built against it)",
      "The detected CUDA version (11.8) mismatches the version that was used to compile",
      "https://github.com/icip-cas/AutoAlign/issues/25",
      "load the CUDA toolkit of torch.version.cuda (module load, CUDA_HOME), or install the torch built for yours"),
    S("torchvision-cuda-mismatch", "environment", ("were compiled with different CUDA",),
      "two packages of the job were built for different CUDA versions (torch and torchvision)",
      "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA versions. PyTorch has "
      "CUDA Version=11.3 and torchvision has CUDA Version=11.7.",
      "https://github.com/mathmanu/edgeai-torchvision/issues/18",
      "install the torchvision (torchaudio, ...) built for the same torch and CUDA (the same --index-url)"),
    S("driver-too-old", "environment", ("NVIDIA driver on your system is too old",),
      "the node's NVIDIA driver is older than the CUDA torch was built for",
      "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver "
      "by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx",
      "https://github.com/lllyasviel/Fooocus/issues/1313",
      "a torch built for an older CUDA (the driver's: nvidia-smi's 'CUDA Version'), or a newer driver on the node"),
    S("cuda-driver-insufficient", "environment", ("CUDA driver version is insufficient",),
      "the node's NVIDIA driver is older than the CUDA runtime the job uses (or the container sees no driver)",
      "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version at "
      "/pytorch/aten/src/THC/THCGeneral.cpp:74", "https://github.com/microsoft/human-pose-estimation.pytorch/issues/23",
      "a torch built for the driver's CUDA (nvidia-smi's 'CUDA Version'), or a newer driver; in a container: --gpus"),
    # session 28 (heldout-fresh37, after it was scored): cudaErrorCallRequiresNewerDriver's string, as NCCL's "Cuda
    # failure '...'" prints it: the runtime asked the driver for a call it is too old to have
    S("cuda-call-needs-newer-driver", "environment", ("API call is not supported in the installed CUDA driver",),
      "the CUDA driver is older than the CUDA runtime the job uses (torch's, NCCL's): a call it does not have",
      "Cuda failure 'API call is not supported in the installed CUDA driver'",
      "https://github.com/ymcui/Chinese-LLaMA-Alpaca/issues/636",
      "compare the driver's CUDA version (nvidia-smi) with torch.version.cuda; a newer driver, or a torch built "
      "for the driver's CUDA"),
    S("undefined-symbol", "environment", ("undefined symbol: ",),
      "a library is older or newer than what was built against it (e.g. a libnccl older than torch's)",
      "ImportError: /root/miniconda3/envs/py310/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined "
      "symbol: ncclCommInitRankScalable", "https://github.com/PaddlePaddle/Paddle/issues/74792",
      "use the NCCL that torch ships (unset LD_LIBRARY_PATH/LD_PRELOAD entries that put another libnccl first)"),
    S("no-kernel-image", "environment", ("no kernel image is available",),
      "the binary was not built for this GPU's architecture (torch, an extension, or a wheel)",
      "RuntimeError: CUDA error: no kernel image is available for execution on the device",
      "https://github.com/facebookresearch/detectron2/issues/235",
      "install a build for this GPU (clusterdoc check: arch), or rebuild with TORCH_CUDA_ARCH_LIST for it"),
    # session 28 (heldout-fresh35, after it was scored): cudaErrorInvalidKernelImage: the binary's kernels are in a
    # form this driver cannot load (flash-attn 2.8.1's compressed fatbins on a 535 driver, flash-attention#1749)
    S("invalid-kernel-image", "environment", ("device kernel image is invalid",),
      "the binary's GPU code is in a form this driver cannot load (a wheel built with a newer CUDA than the driver "
      "runs, or compressed for it)",
      "[rank0]: RuntimeError: CUDA error: device kernel image is invalid",
      "https://github.com/Dao-AILab/flash-attention/issues/1749",
      "compare the driver's CUDA (nvidia-smi) with the wheel's; a build for this driver, an older release of the "
      "package, or a newer driver"),
    S("nccl-no-socket-if", "environment", ("no socket interface found",),
      "NCCL found no usable network interface (NCCL_SOCKET_IFNAME names one that is not there)",
      "Bootstrap : no socket interface found", "https://github.com/EvolvingLMMs-Lab/open-r1-multimodal/issues/7",
      "set NCCL_SOCKET_IFNAME to an interface every node has (ip -br addr), or unset it"),
    # session 21: NCCL's socket layer was handed an address of no family (its interface list held none that
    # NCCL_SOCKET_IFNAME names: nccl src/misc/socket.cc, ncclSocketInit's "is neither AF_INET(2) nor AF_INET6(10)")
    S("nccl-socket-no-family", "environment", ("neither AF_INET",),
      "NCCL had no address for its sockets: no interface of the node matches NCCL_SOCKET_IFNAME (or the "
      "interface has no address)",
      "ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)",
      "https://github.com/NVIDIA/nccl/issues/1837",
      "set NCCL_SOCKET_IFNAME to an interface every node has with an address (ip -br addr), or unset it"),
    S("nccl-addr-family", "environment", ("Address family not supported",),
      "NCCL's socket has an address family the node does not have (IPv6 vs IPv4, or no interface)",
      "include/socket.h:344 WARN Socket creation failed : Address family not supported by protocol",
      "https://github.com/NVIDIA/nccl/issues/210",
      "NCCL_SOCKET_IFNAME to an interface with an IPv4 address on every node (or NCCL_SOCKET_FAMILY=AF_INET)"),
    S("address-in-use", "environment", ("Address already in use",),
      "the rendezvous port is taken (another job on the node uses the same MASTER_PORT)",
      "RuntimeError: Address already in use", "https://github.com/open-mmlab/mmdetection/issues/2129",
      "a free port per job (MASTER_PORT / --master_port; torchrun --rdzv-endpoint=HOST:0 picks one)"),
    # torch 2.x's form of the same (the c10d store's socket): "... name: EADDRINUSE, message: address already in use"
    S("address-in-use-c10d", "environment", ("EADDRINUSE",),
      "the rendezvous port is taken (another job or a leftover process on the node holds MASTER_PORT)",
      "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
      "port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
      "https://github.com/pytorch/pytorch (torch/csrc/distributed/c10d/socket.cpp)",
      "a free port per job (MASTER_PORT / --master_port; torchrun --rdzv-endpoint=HOST:0 picks one); a leftover "
      "process from the last run: lsof -i :PORT"),
    S("duplicate-gpu", "environment", ("Duplicate GPU detected",),
      "two ranks were given the same GPU: the launch or placement gives every rank of a node the same device",
      "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 10",
      "https://github.com/verl-project/verl/issues/161",
      "one GPU per rank: torch.cuda.set_device(LOCAL_RANK) before init, CUDA_VISIBLE_DEVICES per rank, the "
      "launcher's GPUs per node equal to its ranks per node"),
    S("no-module", "environment", ("No module named ",),
      "a module could not be imported: a package missing from this environment, or the script run from another folder",
      "Invalid MIT-MAGIC-COOKIE-1 key/usr/bin/python3: No module named run",
      "https://github.com/clvrai/skill-chaining/issues/4",
      "install the package in the job's environment (the same on every node), or run from the folder that has it"),
    S("nccl-no-net", "environment", ("Could not find NET with id",),
      "NCCL's topology has no network device it can use for this path (NIC merging of NCCL 2.26, or a container "
      "that does not see the node's NICs)",
      "NCCL WARN Could not find NET with id 0", "https://github.com/NVIDIA/nccl/issues/1748",
      "use the NCCL torch ships (2.27+ fixes the merge), or NCCL_NET_MERGE_LEVEL=LOC; give the container the NICs"),
    S("ssh-no-auth", "environment", ("No authentication methods available",),
      "the launcher could not log in to another node over SSH (no key set up between the nodes)",
      "Error: failed to run torchrun --nproc_per_node=4 --nnodes=2 --node_rank=1 --rdzv_backend=c10d "
      "--rdzv_endpoint=ip:29501 --rdzv_id=colossalai-default-job train.py --strategy colossalai_zero2 on gpu-1648, is "
      "localhost: False, exception: No authentication methods available",
      "https://github.com/hpcaitech/ColossalAI/issues/3066",
      "passwordless SSH between the nodes (clusterdoc check tests it), or launch each node's torchrun yourself",
      node=re.compile(r" on " + NODE + r", is localhost")),
    S("ssh-publickey", "environment", ("Permission denied (publickey",),
      "the launcher could not log in to another node over SSH (its key is not accepted there)",
      "localhost: jiaming@localhost: Permission denied (publickey,password).",
      "https://github.com/deepspeedai/DeepSpeed/issues/5709",
      "passwordless SSH between the nodes (ssh-copy-id; clusterdoc check tests it), or launch each node yourself"),
    # paramiko's (ColossalAI's and fabric-based launchers') SSH client: the key it was given is not one it can use
    S("ssh-key-invalid", "environment", ("not a valid RSA private key file",),
      "the launcher could not log in to another node over SSH: its private key is in a format its SSH client "
      "(paramiko) cannot read (an OpenSSH-format or ed25519 key where RSA PEM is expected)",
      "Error: failed to run torchrun --nproc_per_node=2 --nnodes=2 --node_rank=1 --master_addr=192.168.1.11 "
      "--master_port=29508 pretrain.py on 192.168.1.12, is localhost: False, exception: not a valid RSA private key "
      "file", "https://github.com/hpcaitech/ColossalAI/issues/5213",
      "a PEM RSA key (ssh-keygen -t rsa -m PEM) in ~/.ssh/id_rsa, its public half in the other nodes' "
      "authorized_keys; ssh NODE true from the launching node",
      node=re.compile(r" on " + NODE + r", is localhost")),
    # the MPI library and the launcher do not speak the same process-management interface (PMI): a direct launch
    # by srun of an MPI built without Slurm's PMI (or the wrong --mpi=), a PMIx missing a component. Open MPI's help
    # texts and the PMI libraries' own lines
    S("pmi-init-failed", "environment", ("pmi2_init failed",),
      "the MPI library could not start under the launcher: the process-management interface (PMI2) srun offers is "
      "not the one the MPI was built for",
      "PMI2_Init failed to intialize.  Return code: 1", "tests/fixtures/why/heldout/SOURCES.md (arjuna-172)",
      "srun --mpi=list and the MPI's build (ompi_info | grep -i pmi): launch with the matching --mpi=pmix|pmi2, or "
      "through mpirun inside the allocation", lower=True),
    S("pmix-init-failed", "environment", ("pmix_init failed",),
      "the MPI library could not start: PMIx failed to initialise (a component missing or not loadable: munge, a "
      "library path, a PMIx older or newer than the MPI's)",
      "It looks like pmix_init failed for some reason; your parallel process is",
      "https://github.com/open-mpi/ompi/issues/9582",
      "the component the lines after it name (pmix_info; the library path of the PMIx the MPI was built with); "
      "srun --mpi=list", lower=True),
    S("ompi-no-slurm-pmi", "environment", ("not built with SLURM's PMI support",),
      "Open MPI was direct-launched by srun, but it was built without Slurm's PMI support",
      "The application appears to have been direct launched using \"srun\", but OMPI was not built with SLURM's "
      "PMI support and therefore cannot execute.",
      "https://github.com/open-mpi/ompi (Open MPI 4's ess/pmi help text; with PMI2_Init failed in arjuna-172 and "
      "CliMA's FAQ)",
      "launch with mpirun inside the allocation, or an Open MPI built --with-pmix / --with-pmi (srun --mpi=list)"),
    # an MPI that cannot start at all (MPICH's and Open MPI's own init failures: a device/channel, a module, a PMI
    # its launcher does not speak), and Slurm's PMIx plugin failing between the MPI's processes and srun
    S("mpich-init-fatal", "environment", ("Fatal error in ", "MPI_Init"),
      "the MPI library could not start (MPI_Init failed: its channel or device, the process manager it was given, "
      "a module or library it needs on the node)",
      "Fatal error in MPI_Init: Other MPI error, error stack:",
      "https://github.com/jtriley/StarCluster/issues/406",
      "the error stack's last line names what is missing; mpiexec -n 2 hostname, then a hello-world MPI program "
      "with the same mpiexec and module set"),
    S("ompi-init-failed", "environment", ("MPI_INIT failed",),
      "the MPI library could not start (Open MPI's MPI_INIT failed: the lines after it name the component)",
      "It looks like MPI_INIT failed for some reason; your parallel process is",
      "https://github.com/open-mpi/ompi/issues/3144 (GCHP#94, temporal-segment-networks#121: the same help text)",
      "the component named after it (ompi_info); the same mpirun with a hello-world program"),
    S("ompi-pmi2-init", "environment", ("PMI2 failed to initialize",),
      "the MPI library could not start under the launcher: PMI2 did not initialise (srun's --mpi= and the MPI's "
      "build do not match)",
      "\"PMI2 failed to initialize, returning an error code of 14.", "https://github.com/radical-cybertools/"
      "radical.pilot/issues/1085",
      "srun --mpi=list and the MPI's build (ompi_info | grep -i pmi): the matching --mpi=, or mpirun in the "
      "allocation"),
    # session 22: the first line of the same help text (Open MPI's s2 PMI component, pmix_s2.c): PMI2 came up but
    # gave no size and rank - the launcher's PMI and the one the MPI was built for do not match
    S("ompi-pmi2-bad-values", "environment", ("PMI2 initialized but returned bad values",),
      "the MPI library could not start under the launcher: PMI2 gave it no size and rank (srun's --mpi= and the "
      "MPI's build, or the launcher and the MPI the program was built with, do not match)",
      "PMI2 initialized but returned bad values for size and rank.",
      "https://github.com/radical-cybertools/radical.pilot/issues/1085 (the help text's first line; Open MPI's "
      "opal/mca/pmix/s2)",
      "srun --mpi=list and the MPI's build (ompi_info | grep -i pmi): the matching --mpi=, or the mpirun of the MPI "
      "the program was built with"),
    S("slurm-pmix-plugin", "environment", ("error:", "mpi/pmix"),
      "Slurm's PMIx plugin failed between srun and the MPI's processes (a PMIx or MPI that does not match the "
      "plugin's, or a launch mixing srun and another mpiexec)",
      "[2026-09-08T13:01:38.539] error:  mpi/pmix_v4: _process_server_request: c112-002 [0]: pmixp_server.c:935: "
      "unexpected contrib from c112-003:1, coll->seq=0, seq=0", "https://github.com/pmodels/mpich/issues/7957",
      "launch with one process manager: srun --mpi=pmix with an MPI built for it, or mpiexec alone"),
    S("glibc-version", "environment", ("version `GLIBC", "not found"),
      "a binary needs a newer C library (GLIBC/GLIBCXX) than the node has: built on another system or image",
      "gadget: /lib64/libc.so.6: version `GLIBC_2.14' not found (required by gadget)",
      "https://github.com/gadget-framework/gadget2/issues/18 (a shared cluster; KymoKnot#1 on an HPC cluster)",
      "run it in the image it was built for, or build it on the node's OS (module load gcc for GLIBCXX)"),
    S("loader-shared-lib", "environment", ("error while loading shared libraries", "cannot open shared object file"),
      "the dynamic loader could not load a library the program needs (not on LD_LIBRARY_PATH on this node: a "
      "module not loaded, a container without it)",
      "./build/all_reduce_perf: error while loading shared libraries: libmpi.so.40: cannot open shared object file: "
      "No such file or directory", "https://github.com/NVIDIA/nccl/issues/872 (ArjunaUsers#110: lmp under srun)",
      "ldd on the binary on the node: load the module that provides it, or set LD_LIBRARY_PATH in the job"),
    # session 23: the loader's words on any other line (a framework's error report: TensorFlow's "Error reported to
    # Coordinator: libnccl.so.2: cannot open shared object file"); not a library probed and skipped (NCCL's plugin
    # search, TensorFlow's dso_loader warnings: often harmless)
    S("shared-object-missing", "environment", ("cannot open shared object file",),
      "a library the job needs could not be loaded (not installed on this node, or not on LD_LIBRARY_PATH)",
      "INFO:tensorflow:Error reported to Coordinator: libnccl.so.2: cannot open shared object file: No such file or "
      "directory", "https://github.com/tensorflow/tensorflow/issues/22899",
      "install the library the message names (or load its module) on every node; ldd on the binary that loads it",
      unless=("NCCL INFO", "dso_loader", "Could not load dynamic library", "Could not dlopen", "dlerror",
              "error while loading shared libraries", "Plugin")),
    S("ssh-host-key", "environment", ("Host key verification failed",),
      "the launcher's SSH to another node refused the node's host key (unknown, or changed since a reinstall)",
      "Host key verification failed.", "https://github.com/pmodels/mpich/issues/4712",
      "add the nodes to known_hosts (ssh-keyscan), or ask the admins for the cluster's ssh_known_hosts"),
    # --- round 8: environment, as the tools print it (their own messages, from their sources) ---
    # the CUDA runtime's and driver API's own error strings for a driver that does not fit the toolkit or the GPU
    # (cudaGetErrorString / cuGetErrorName: the CUDA Runtime API's cudaError enum)
    S("cuda-driver-mismatch", "environment", ("system has unsupported display driver / cuda driver combination",),
      "the node's display driver and its CUDA driver (libcuda) are of different versions: a driver upgraded "
      "without a reboot, or a container's libcuda that is not the host's",
      "CUDA error: system has unsupported display driver / cuda driver combination",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorSystemDriverMismatch = 803)",
      "nvidia-smi on the node (it says the same); reboot it or load the matching kernel module; in a container, "
      "the host's libcuda (--nv, the NVIDIA container toolkit)"),
    S("cuda-driver-mismatch-name", "environment", ("DRIVER_MISMATCH",),
      "the node's display driver and its CUDA driver (libcuda) are of different versions",
      "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
      "https://github.com/NVIDIA/cuda-python (driver: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803)",
      "nvidia-smi on the node; reboot it or load the matching kernel module"),
    S("cuda-driver-mismatch-rt", "environment", ("cudaErrorSystemDriverMismatch",),
      "the node's display driver and its CUDA driver (libcuda) are of different versions",
      "cudaErrorSystemDriverMismatch",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorSystemDriverMismatch = 803)",
      "nvidia-smi on the node; reboot it or load the matching kernel module"),
    S("cuda-forward-compat", "environment", ("forward compatibility was attempted on non supported HW",),
      "the CUDA forward-compatibility package (a newer libcuda than the driver) is used on a GPU it does not "
      "support (consumer GPUs): the toolkit is newer than the node's driver",
      "RuntimeError: CUDA error: forward compatibility was attempted on non supported HW",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorCompatNotSupportedOnDevice = 804)",
      "a torch/CUDA build for the node's driver (nvidia-smi's CUDA version), or remove the cuda-compat libraries "
      "from LD_LIBRARY_PATH"),
    S("cuda-forward-compat-name", "environment", ("COMPAT_NOT_SUPPORTED_ON_DEVICE",),
      "the CUDA forward-compatibility package is used on a GPU it does not support",
      "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
      "https://github.com/NVIDIA/cuda-python (driver: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804)",
      "a build for the node's driver, or no cuda-compat libraries on LD_LIBRARY_PATH"),
    S("cuda-forward-compat-rt", "environment", ("cudaErrorCompatNotSupportedOnDevice",),
      "the CUDA forward-compatibility package is used on a GPU it does not support",
      "cudaErrorCompatNotSupportedOnDevice",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorCompatNotSupportedOnDevice = 804)",
      "a build for the node's driver, or no cuda-compat libraries on LD_LIBRARY_PATH"),
    S("cuda-ptx-toolchain", "environment", ("PTX was compiled with an unsupported toolchain",),
      "a kernel's PTX was made by a CUDA newer than the node's driver can compile (a JIT build, Triton, a "
      "package built with a newer toolkit)",
      "CUDA error: the provided PTX was compiled with an unsupported toolchain.",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorUnsupportedPtxVersion = 222)",
      "a newer driver on the node, or build with the CUDA the driver supports (nvidia-smi's CUDA version)"),
    S("cuda-ptx-name", "environment", ("UNSUPPORTED_PTX_VERSION",),
      "a kernel's PTX was made by a CUDA newer than the node's driver can compile",
      "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
      "https://github.com/NVIDIA/cuda-python (driver: CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222)",
      "a newer driver on the node, or build with the CUDA the driver supports"),
    S("cuda-ptx-rt", "environment", ("cudaErrorUnsupportedPtxVersion",),
      "a kernel's PTX was made by a CUDA newer than the node's driver can compile",
      "cudaErrorUnsupportedPtxVersion",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorUnsupportedPtxVersion = 222)",
      "a newer driver on the node, or build with the CUDA the driver supports"),
    S("cuda-no-binary", "environment", ("NO_BINARY_FOR_GPU",),
      "the GPU's architecture is not among those the library was built for (no kernel image for it)",
      "CUDA_ERROR_NO_BINARY_FOR_GPU",
      "https://github.com/NVIDIA/cuda-python (driver: CUDA_ERROR_NO_BINARY_FOR_GPU = 209)",
      "a build for this GPU (TORCH_CUDA_ARCH_LIST, a wheel for its CUDA)"),
    S("cuda-no-binary-rt", "environment", ("cudaErrorNoKernelImageForDevice",),
      "the GPU's architecture is not among those the library was built for (no kernel image for it)",
      "cudaErrorNoKernelImageForDevice",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorNoKernelImageForDevice = 209)",
      "a build for this GPU (TORCH_CUDA_ARCH_LIST, a wheel for its CUDA)"),
    S("cuda-insufficient-driver", "environment", ("INSUFFICIENT_DRIVER",),
      "the node's NVIDIA driver is older than the CUDA the program was built with",
      "CUDA_ERROR_INSUFFICIENT_DRIVER",
      "https://github.com/NVIDIA/cuda-python (driver: CUDA_ERROR_INSUFFICIENT_DRIVER = 35)",
      "a build for the node's driver (nvidia-smi's CUDA version), or a newer driver"),
    S("cuda-insufficient-driver-rt", "environment", ("cudaErrorInsufficientDriver",),
      "the node's NVIDIA driver is older than the CUDA the program was built with",
      "cudaErrorInsufficientDriver", "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorInsufficientDriver = 35)",
      "a build for the node's driver (nvidia-smi's CUDA version), or a newer driver"),
    S("torch-no-cuda-build", "environment", ("Torch not compiled with CUDA enabled",),
      "the job's torch is a CPU-only build (pip's default wheel on some platforms, a conda solve): no GPU use",
      "AssertionError: Torch not compiled with CUDA enabled",
      "https://github.com/pytorch/pytorch (torch/cuda/__init__.py: _lazy_init)",
      "install a CUDA build of torch in the job's environment (pip's --index-url for its CUDA)"),
    # torch's env:// rendezvous without the launcher's variables: the script was started without torchrun/srun
    # exporting them (torch/distributed/rendezvous.py: _env_error)
    S("torch-env-unset", "environment", ("environment variable ", "expected, but not set"),
      "torch.distributed's env:// rendezvous found no MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE: the script was "
      "started without a launcher that exports them",
      "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable MASTER_ADDR "
      "expected, but not set", "https://github.com/pytorch/pytorch (torch/distributed/rendezvous.py: _env_error)",
      "start it with torchrun (or export them in the job script from Slurm's: MASTER_ADDR=$(scontrol show "
      "hostnames $SLURM_JOB_NODELIST | head -n1), RANK=$SLURM_PROCID, WORLD_SIZE=$SLURM_NTASKS)"),
    # containers that did not start: Apptainer/Singularity's own FATAL line, pyxis (Slurm's enroot plugin), the
    # Docker daemon without the NVIDIA runtime, an OCI runtime's refusal
    S("apptainer-creation-failed", "environment", ("FATAL:", "container creation failed"),
      "Apptainer/Singularity could not create the container (a bind path missing in the image or on the node, its "
      "session or tmp directory, cgroups): the job's command never ran",
      "FATAL:   container creation failed: mount /etc/localtime->/etc/localtime error: while mounting "
      "/etc/localtime: mount source /etc/localtime doesn't exist",
      "https://github.com/apptainer/apptainer (its FATAL message)",
      "the path its message names (--bind, APPTAINER_TMPDIR, the image); run the same exec by hand on the node"),
    S("apptainer-image-open", "environment", ("FATAL:", "could not open image"),
      "Apptainer/Singularity could not open the container image (its path on the node, its format)",
      "FATAL:   could not open image /scratch/img.sif: failed to retrieve path for /scratch/img.sif: lstat "
      "/scratch/img.sif: no such file or directory", "https://github.com/apptainer/apptainer (its FATAL message)",
      "the image's path as the node sees it (its mount), and the image itself (apptainer inspect)"),
    S("pyxis-start-failed", "environment", ("pyxis: container start failed",),
      "pyxis (Slurm's enroot plugin) could not start the task's container: an enroot hook failed (the NVIDIA "
      "hook, a mount); the lines after it print enroot's log",
      "slurmstepd: error: pyxis: container start failed with error code: 1",
      "https://github.com/NVIDIA/pyxis (pyxis_slurmstepd.c)",
      "read enroot's log lines after it ([ERROR] ...); the image and the hooks in /etc/enroot/hooks.d"),
    S("pyxis-exited-early", "environment", ("pyxis: container exited too soon",),
      "pyxis could not start the task's container: it exited at once (the image's entrypoint)",
      "slurmstepd: error: pyxis: container exited too soon", "https://github.com/NVIDIA/pyxis (pyxis_slurmstepd.c)",
      "the image's ENTRYPOINT (pyxis needs a shell in it), enroot's log"),
    # session 23: pyxis's other failures before the task runs (pyxis_slurmstepd.c: "failed to import docker image",
    # "failed to create container filesystem"): the image, the registry's credentials or enroot's setup on the node;
    # the lines after it print enroot's log (pyxis#12: mkdir /run/enroot: Permission denied)
    S("pyxis-failed", "environment", ("pyxis: failed to ",),
      "pyxis (Slurm's enroot plugin) could not prepare the task's container (importing the image, or creating its "
      "file system): the task never ran",
      "slurmstepd: error: pyxis: failed to import docker image", "https://github.com/NVIDIA/pyxis/issues/12 "
      "(pyxis_slurmstepd.c)",
      "read enroot's log lines after it: the image's name and the registry's credentials (enroot's .credentials), "
      "enroot's runtime and cache directories on the node (ENROOT_RUNTIME_PATH, their permissions)"),
    # session 28 (heldout-fresh35): any other error pyxis prints on slurmstepd's stream (its squashfs and runtime
    # path on the node: "Can't find a SQUASHFS superblock", "couldn't mkdir /run/pyxis/UID"): the container's set-up
    # on that node, before the task ran (the forms above say which part when they fire)
    S("pyxis-error", "environment", ("error: pyxis: ",),
      "pyxis (Slurm's enroot plugin) failed setting up the task's container on the node (its runtime path, the "
      "squashfs it imports, enroot's directories): the task never ran",
      "slurmstepd: error: pyxis:     Can't find a SQUASHFS superblock on /fsx/pyxis/1000/385.0.squashfs",
      "https://github.com/aws-samples/aws-parallelcluster-post-install-scripts/issues/20 (pyxis_slurmstepd.c's "
      "slurm_error lines)",
      "pyxis's runtime_path and enroot's ENROOT_RUNTIME_PATH / ENROOT_DATA_PATH on a node-local disk (not a shared "
      "file system two nodes write), present and writable; enroot's log lines after it"),
    S("docker-no-gpu-driver", "environment", ("could not select device driver",),
      "Docker has no GPU runtime on this host (the NVIDIA container toolkit is not installed or configured)",
      "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].",
      "https://github.com/moby/moby (daemon: the device driver lookup for --gpus)",
      "install and configure the NVIDIA container toolkit (nvidia-ctk runtime configure), restart dockerd"),
    S("oci-runtime-failed", "environment", ("OCI runtime ", " failed"),
      "the container runtime (runc and its hooks: the NVIDIA hook, a mount) could not create or start the "
      "container: the job's command never ran",
      "docker: Error response from daemon: OCI runtime create failed: container_linux.go:380: starting container "
      "process caused: process_linux.go:545: container init caused: Running hook #0:: error running hook: exit "
      "status 1, stdout: , stderr: nvidia-container-cli: initialization error",
      "https://github.com/opencontainers/runc",
      "its message after 'caused:' names the part (a hook, a mount, the command); docker run by hand on the node"),
    # a launcher's ssh to the job's hosts failing (ssh exits 255 for its own errors, never the remote command's:
    # ssh(1)): DeepSpeed's pre-launch check and pdsh say so in their own words
    S("deepspeed-ssh-check", "environment", ("was not reachable via ssh",),
      "the DeepSpeed launcher could not ssh to the hostfile's first host (no passwordless ssh, a wrong address)",
      "RuntimeError: Using hostfile at /job/hostfile but host=192.168.3.100 was not reachable via ssh. If you are "
      "running with a single node please remove /job/hostfile or setup passwordless ssh.",
      "https://github.com/deepspeedai/DeepSpeed (deepspeed/launcher/runner.py)",
      "ssh -o PasswordAuthentication=no HOST hostname from the launching node (keys, known_hosts, the address)"),
    S("ssh-exit-255", "environment", ("Command 'ssh ", "returned non-zero exit status 255"),
      "a launcher's ssh to a host failed in ssh itself (exit 255: unreachable, refused, no key), not in the remote "
      "command", "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 hostname' "
      "returned non-zero exit status 255.", "https://github.com/deepspeedai/DeepSpeed/issues/4907",
      "ssh -o PasswordAuthentication=no HOST hostname from the launching node (keys, known_hosts, the address)"),
    # pdsh's 255 is ssh's own failure at the start (keys) or a connection lost mid-run (the node or the link): a
    # candidate
    S("pdsh-ssh-255", "environment", ("ssh exited with exit code 255",),
      "pdsh (DeepSpeed's multi-node launcher) could not ssh to a host (exit 255: unreachable, refused, no key)",
      "pdsh@node1: node2: ssh exited with exit code 255", "https://github.com/chaos/pdsh (its exit-code message)",
      "ssh HOST hostname from the launching node (keys, known_hosts, the address)",
      node=re.compile(r"pdsh@[\w.-]{1,128}: " + NODE + r": ssh exited"), weak=True),
    # an MPI launcher that cannot execute the program on a node (MPICH's Hydra, Open MPI's mpirun/prterun)
    S("hydra-execvp", "environment", ("execvp error on file",),
      "MPICH's launcher (Hydra) could not execute the program on a node (not on its PATH, not there)",
      "[proxy:0:0@node1] HYDU_create_process (utils/launch/launch.c:74): execvp error on file ./a.out (No such file "
      "or directory)", "https://github.com/pmodels/mpich (src/pm/hydra: HYDU_create_process)",
      "the program's path on every node (an absolute path, a shared file system), the module loaded there",
      node=re.compile(r"\[proxy:[\d:]{1,16}@" + NODE + r"\]")),
    S("ompi-no-executable", "environment", ("could not access or execute an executable",),
      "Open MPI's mpirun could not execute the program on a node (not there, not on its PATH, not executable); "
      "the lines after it name the executable and the node",
      "mpirun was unable to launch the specified application as it could not access or execute an executable:",
      "https://github.com/open-mpi/ompi (help-orterun.txt / prte's help text)",
      "the program's path on every node (an absolute path, a shared file system), its permissions"),
    S("ompi-no-executable-find", "environment", ("was unable to find the specified executable file",),
      "Open MPI's mpirun could not find the program on a node",
      "mpirun was unable to find the specified executable file, and therefore did not launch the job.",
      "https://github.com/open-mpi/ompi (help-orterun.txt)",
      "the program's path on every node (an absolute path, a shared file system)"),
    S("k8s-evicted-disk", "environment", ("The node was low on resource: ephemeral-storage",),
      "the kubelet evicted the pod: the node's local disk (ephemeral storage) was full",
      "The node was low on resource: ephemeral-storage. Container trainer was using 120Gi, which exceeds its "
      "request of 0.", "https://github.com/kubernetes/kubernetes (pkg/kubelet/eviction)",
      "write checkpoints and caches to a volume, or request ephemeral-storage"),
    # Intel Fortran's runtime: any severe error but SIGSEGV (174, above) and insufficient memory (41, above);
    # "forrtl: error (78): process killed (SIGTERM)" is a kill from outside, not matched here
    # round 9: Intel Fortran's severe (9), the OS's EACCES on a file the program opens: the file system's
    # permissions (a directory not the user's, a read-only copy), not the code's I/O (fds-9822)
    S("ifort-permission-denied", "environment", ("forrtl: severe (9)",),
      "the Fortran program may not open a file (permission denied: a directory or file that is not the user's, "
      "or read-only where it writes)",
      "forrtl: severe (9): permission to access file denied, unit 4, file /Users/a/FDS/Fires/couch.smv",
      "https://github.com/firemodels/fds/issues/9822 (Intel's documented severe (9))",
      "ls -l the file and its directory on the node; run from a directory the user owns"),
    # --- round 8: what a Python job's environment lacks, in the libraries' own words ---
    # the loader's version line as a markdown paste or a newer message prints it: straight quotes
    # session 21: any other versioned symbol a library lacks (GOMP_4.5 of an older libgomp found first on the
    # path, CXXABI_1.3.x, OPENSSL_3, GFORTRAN_x): the loader's own words, a library of another build found first
    S("symbol-version-missing", "environment", ("not found (required by ", "version "),
      "a program or library needs a newer version of a shared library than the one the loader found (another "
      "build of it first on LD_LIBRARY_PATH, or an older system copy)",
      "/cm/shared/apps/trinity/2.9.1/Inchworm/bin/inchworm: /cm/shared/apps/salmon/1.5.2/lib/libgomp.so.1: version "
      "`GOMP_4.5' not found (required by /cm/shared/apps/trinity/2.9.1/Inchworm/bin/inchworm)",
      "https://github.com/bminor/glibc (elf/dl-version.c: match_symbol's message)",
      "ldd on the program: which copy of the library it finds; the module or LD_LIBRARY_PATH entry that puts an "
      "older one first"),
    # MPICH's and Intel MPI's launch on a node: a fabric the library was told to use is not there, a hwloc-less build
    # told to bind
    S("impi-fabric-unavailable", "environment", ("fabric is not available", "MPI startup(): "),
      "Intel MPI was told to use a fabric this node does not have (I_MPI_FABRICS / I_MPI_OFI_PROVIDER), and no "
      "fallback was allowed",
      "[0] MPI startup(): ofa fabric is not available and fallback fabric is not enabled",
      "https://github.com/SmileiPIC/Smilei/issues/135 (Intel MPI's startup messages)",
      "the fabric the node has (fi_info; I_MPI_FABRICS=shm:ofi, I_MPI_OFI_PROVIDER) or the site's module for it"),
    S("hydra-no-topology", "environment", ("no topology library available",),
      "MPICH's launcher was asked to bind processes but was built without a topology library (hwloc)",
      "[proxy:0:0@8f731690f735] HYDT_topo_bind (tools/topo/topo.c:89): no topology library available",
      "https://github.com/pmodels/mpich (src/pm/hydra/tools/topo/topo.c)",
      "drop the binding option (-bind-to), or an MPICH built with hwloc"),
    S("spack-no-mpirun", "environment", ("installed without the mpiexec/mpirun commands",),
      "this Open MPI (Spack's ~legacylaunchers) has no mpirun on purpose: the site wants MPI jobs started by srun",
      "is installed without the mpiexec/mpirun commands to prevent",
      "https://github.com/spack/spack (var/spack/repos/builtin/packages/openmpi: its mpirun stub)",
      "srun --mpi=pmix (or pmi2) instead of mpirun, or Spack's openmpi+legacylaunchers"),
    # NVIDIA's containers' entrypoint: the node's driver is older than the image's CUDA needs
    S("ngc-driver-too-old", "environment", ("ERROR: This container was built for NVIDIA Driver Release",),
      "the container's CUDA needs a newer NVIDIA driver than the node has (and forward compatibility is not "
      "available there)",
      "ERROR: This container was built for NVIDIA Driver Release 450.36 or later, but",
      "https://github.com/triton-inference-server/server/issues/1838 (NVIDIA's container entrypoint banner)",
      "an image built for the node's driver (its release notes list the driver each needs), or a newer driver"),
    # TensorFlow could not load the CUDA libraries and runs on the CPU (a GPU job that silently is not one)
    S("tf-gpu-libraries-missing", "environment", ("Cannot dlopen some GPU libraries",),
      "TensorFlow could not load the CUDA libraries it was built for (cuDNN, cuBLAS ...) and skipped the GPUs",
      "W tensorflow/core/common_runtime/gpu/gpu_device.cc:1850] Cannot dlopen some GPU libraries.",
      "https://github.com/tensorflow/tensorflow (core/common_runtime/gpu/gpu_device.cc)",
      "the CUDA and cuDNN versions this TensorFlow needs (tested build configurations) on the node's library path"),
    # Kubernetes could not mount a volume the pod needs, refused by the storage's permissions
    S("k8s-mount-permission", "environment", ("MountVolume.SetUp failed", "ermission"),
      "Kubernetes could not mount a volume the pod needs: the storage refused the pod's identity (a permission)",
      "MountVolume.SetUp failed for volume \"gcs-fuse-csi-ephemeral\" : rpc error: code = PermissionDenied desc = ",
      "https://github.com/GoogleCloudPlatform/ai-on-gke/issues/488 (kubelet's FailedMount event)",
      "the service account's binding to the storage (IAM, the CSI driver's docs); kubectl describe pod's events"),
    S("glibc-version-quoted", "environment", ("version 'GLIBC", "not found"),
      "a library needs a newer glibc/libstdc++ than the node has (built on a newer system, or a conda library "
      "shadowed by the system's)",
      "ImportError: /lib64/libstdc++.so.6: version 'GLIBCXX_3.4.29' not found (required by /opt/env/lib/x.so)",
      "https://github.com/bminor/glibc (elf/dl-version.c: the version-not-found error)",
      "put the environment's own libstdc++ first (LD_LIBRARY_PATH=$CONDA_PREFIX/lib), or a build for the node's "
      "glibc (ldd --version)"),
    # torch.utils.cpp_extension's own checks before a JIT build (DeepSpeed ops, apex, flash-attn)
    S("ninja-required", "environment", ("Ninja is required to load C++ extensions",),
      "a JIT build of a C++/CUDA extension needs ninja, and the job's environment has none",
      "RuntimeError: Ninja is required to load C++ extensions",
      "https://github.com/pytorch/pytorch (torch/utils/cpp_extension.py: verify_ninja_availability)",
      "pip install ninja in the job's environment (or prebuild the ops: DS_BUILD_OPS=1)"),
    S("cuda-home-unset", "environment", ("CUDA_HOME environment variable is not set",),
      "a build of a CUDA extension found no CUDA toolkit (CUDA_HOME unset, no nvcc on the node)",
      "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
      "https://github.com/pytorch/pytorch (torch/utils/cpp_extension.py: _join_cuda_home)",
      "module load cuda (or export CUDA_HOME) on every node that builds, or a prebuilt wheel"),
    S("torch-no-nccl", "environment", ("Distributed package doesn't have NCCL built in",),
      "the job's torch has no NCCL (a CPU, Windows or macOS build): the nccl backend cannot start",
      "RuntimeError: Distributed package doesn't have NCCL built in",
      "https://github.com/pytorch/pytorch (torch/distributed/distributed_c10d.py)",
      "a CUDA build of torch on Linux, or backend='gloo'"),
    # the GPU lacks a feature the job asks for: flash-attn on pre-Ampere GPUs, bf16 without Ampere (accelerate)
    S("flash-attn-arch", "environment", ("FlashAttention only supports Ampere GPUs or newer",),
      "flash-attn needs an Ampere or newer GPU (compute capability 8.0+): the node's GPUs are older",
      "RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
      "https://github.com/Dao-AILab/flash-attention (csrc: the architecture check)",
      "nodes with A100/H100-class GPUs (the job's --constraint/--gres type), or attn_implementation='sdpa'"),
    S("bf16-unsupported", "environment", ("doesn't support bf16/gpu",),
      "bf16 was asked for on GPUs (or a torch) without it: pre-Ampere GPUs",
      "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0",
      "https://github.com/huggingface/transformers (training_args.py: the bf16 check)",
      "fp16 on these GPUs, or nodes with Ampere or newer GPUs"),
    # the process sees no GPU: the job asked for none (--gres/--gpus), CUDA_VISIBLE_DEVICES hides them, or the
    # node lost them: a candidate, the node decides
    S("no-gpu-visible", "environment", ("No CUDA GPUs are available",),
      "the process sees no GPU: the job did not ask for any (--gres=gpu:N, --gpus), CUDA_VISIBLE_DEVICES hides "
      "them, or the node's GPUs are gone", "RuntimeError: No CUDA GPUs are available",
      "https://github.com/pytorch/pytorch (torch/cuda/__init__.py: _lazy_init)",
      "inside the job: nvidia-smi -L and echo $CUDA_VISIBLE_DEVICES; the job's GPU request", weak=True),
    S("nccl-no-gpu", "environment", ("ProcessGroupNCCL is only supported with GPUs, no GPUs found",),
      "the nccl backend found no GPU in this process: the job asked for none, or CUDA_VISIBLE_DEVICES hides them",
      "RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
      "https://github.com/pytorch/pytorch (ProcessGroupNCCL.cpp)",
      "inside the job: nvidia-smi -L and echo $CUDA_VISIBLE_DEVICES; the job's GPU request", weak=True),
    # setuptools' pkg_resources at import time (an entry point's requirements): a version conflict, a package
    # not installed (their types end in no "Error": the exception parsers do not see them; the needles are in
    # their messages, which a prefix reader may have split from the type)
    S("pkg-version-conflict", "environment", ("Requirement.parse('",),
      "an installed package's version conflicts with what another requires (the environment's versions)",
      "pkg_resources.ContextualVersionConflict: (numpy 1.19.0 (/usr/lib), Requirement.parse('numpy>=1.21'), "
      "{'scipy'})", "https://github.com/pypa/setuptools (pkg_resources: VersionConflict)",
      "pip install the version it requires (pip check lists the conflicts)"),
    S("pkg-dist-not-found", "environment", ("distribution was not found and is required by",),
      "a package another one requires is not installed in the job's environment",
      "pkg_resources.DistributionNotFound: The 'tokenizers>=0.14' distribution was not found and is required by "
      "transformers", "https://github.com/pypa/setuptools (pkg_resources: DistributionNotFound)",
      "pip install it in the job's environment (pip check)"),
    # pip in the job could not install what it needs (a candidate: the job may go on with what is there)
    S("pip-no-distribution", "environment", ("No matching distribution found for",),
      "pip could not install a package the job needs (no wheel for this Python, platform or index; no network "
      "from the node)", "ERROR: No matching distribution found for torch==2.9.9",
      "https://github.com/pypa/pip (its resolver's error)",
      "build the environment before the job (on a node with the same Python), or the version that exists",
      weak=True),
    # conda's activation inside a batch script (a non-interactive shell without `conda init`'s hook): the job
    # then runs another Python. A candidate: profiles print it in jobs that set their PATH otherwise
    S("conda-init", "environment", ("Run 'conda init' before 'conda activate'",),
      "`conda activate` failed in the job's shell (conda's shell hook is not loaded there): the job runs without "
      "its environment", "CondaError: Run 'conda init' before 'conda activate'",
      "https://github.com/conda/conda (conda/cli/main.py: the activate error)",
      "in the script: eval \"$(conda shell.bash hook)\" before conda activate (or source .../etc/profile.d/conda.sh)",
      weak=True),
    S("conda-env-missing", "environment", ("Could not find conda environment",),
      "`conda activate NAME` found no such environment where the job ran (another conda install, a path not "
      "mounted there)", "EnvironmentNameNotFound: Could not find conda environment: myenv",
      "https://github.com/conda/conda (EnvironmentNameNotFound)",
      "conda env list on the node; activate it by path (conda activate /path/to/env)", weak=True),
    # --- round 8: a file system the job writes to, in any tool's words (strerror's texts: EDQUOT, ESTALE, ENOSPC),
    # a shell's cp or tar as well as Python's OSError ---
    S("fs-quota", "environment", ("Disk quota exceeded",),
      "the job's file system quota is used up (EDQUOT): its writes fail", "cp: cannot create regular file "
      "'/scratch/run/ckpt.pt': Disk quota exceeded", "https://github.com/bminor/glibc (strerror: EDQUOT)",
      "the quota (quota -s, lfs quota -u $USER /scratch, the site's tool); clean up, or write elsewhere"),
    S("fs-stale", "environment", ("Stale file handle",),
      "a file on an NFS mount was removed or the mount re-exported under the job (ESTALE): the node's mount",
      "ls: cannot access '/data/shard-0001': Stale file handle", "https://github.com/bminor/glibc (strerror: ESTALE)",
      "remount it on that node (or resubmit without it); do not delete files a running job reads"),
    S("fs-no-space", "environment", ("No space left on device",),
      "a file system the job writes to is full (ENOSPC): the disk, /tmp, or /dev/shm in a container",
      "RuntimeError: unable to write to file </torch_18692_1954506624>: No space left on device (28)",
      "https://github.com/bminor/glibc (strerror: ENOSPC)",
      "df -h on the node for the path it wrote (/dev/shm: docker --shm-size or --ipc=host); clean up or write "
      "elsewhere"),
    # torch.save's zip writer stopped short of what it wrote ("unexpected pos A vs B"): the disk full or over
    # quota most often, a file system that cut the write otherwise: a candidate
    S("torch-save-short", "environment", ("inline_container.cc", "unexpected pos"),
      "a checkpoint write stopped short (torch.save's zip writer): the disk full or over its quota, or a network "
      "file system that cut the write",
      "RuntimeError: [enforce fail at inline_container.cc:595] . unexpected pos 1234 vs 5678",
      "https://github.com/pytorch/pytorch (caffe2/serialize/inline_container.cc)",
      "df -h and the quota of the checkpoint's directory at that time; save to local disk and copy", weak=True),
    # --- round 8: HPC stacks' own words for a build or a runtime that does not fit the machine (environment) ---
    # Cray MPICH asked for GPU-aware MPI (MPICH_GPU_SUPPORT_ENABLED=1) by a binary without Cray's GPU transport
    S("cray-gtl-not-linked", "environment", ("GTL library is not linked",),
      "Cray MPICH was asked for GPU-aware MPI (MPICH_GPU_SUPPORT_ENABLED=1) by a program not linked with its GPU "
      "transport layer (GTL)", "MPICH ERROR [Rank 0] [job id 14833080.5] [Fri Nov 21 09:21:34 2025] [nid007972] - "
      "Abort(-1) (rank 0 in comm 0): MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL library is not linked",
      "https://github.com/pmodels/mpich (Cray MPICH's MPIDI_CRAY_init, as the sites' docs quote it)",
      "load the craype-accel module for the GPU when building (or link libmpi_gtl), or unset "
      "MPICH_GPU_SUPPORT_ENABLED"),
    # HIP (ROCm): no code object for the GPU's architecture (gfx90a, gfx942 ...): a build for another GPU
    S("hip-no-binary", "environment", ("hipErrorNoBinaryForGpu",),
      "the program (or a library: torch, rocBLAS) has no code object for this GPU's architecture",
      "\"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\"",
      "https://github.com/ROCm/HIP (hipErrorNoBinaryForGpu = 209)",
      "a build for the node's GPU (rocminfo | grep gfx; PYTORCH_ROCM_ARCH, --offload-arch)"),
    S("hip-no-code-object", "environment", ("Unable to find code object for all current devices",),
      "the program (or a library) has no code object for this GPU's architecture",
      "Unable to find code object for all current devices!", "https://github.com/ROCm/HIP (its runtime's message)",
      "a build for the node's GPU (rocminfo | grep gfx)"),
    S("rocblas-no-arch", "environment", ("rocBLAS error: Cannot read",),
      "rocBLAS has no kernels for this GPU's architecture (its TensileLibrary for the gfx target is missing)",
      "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or directory for "
      "GPU arch : gfx1030", "https://github.com/ROCm/rocBLAS (its Tensile library loader)",
      "a ROCm built for this GPU (HSA_OVERRIDE_GFX_VERSION only for a compatible one)"),
    # a kernel with no image for this device: the extension was built for other architectures
    S("cuda-invalid-device-function", "environment", ("invalid device function",),
      "a GPU kernel has no image for this device (an extension or library built for other GPU architectures)",
      "RuntimeError: CUDA error: invalid device function",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorInvalidDeviceFunction = 98)",
      "rebuild the extension for this GPU (TORCH_CUDA_ARCH_LIST with its compute capability)"),
    # Slurm's PMI server receiving the same task twice: an MPI started by srun twice over (a bare MPI binary run
    # inside an srun step, mpirun of another MPI under srun): the launch, not the code (Slurm's pmi_server.c)
    S("slurm-pmi-duplicate", "environment", ("PMK_KVS_Barrier duplicate request",),
      "Slurm's PMI saw the same task twice: the MPI program was started inside an srun step by another launcher "
      "(or an MPI built for another PMI)", "srun: error: PMK_KVS_Barrier duplicate request from task 0",
      "https://github.com/SchedMD/slurm (src/api/pmi_server.c)",
      "start it once: srun --mpi=pmix (or pmi2) ./prog in the batch script, not mpirun inside an srun step"),
    S("slurm-plugin-missing", "environment", ("Couldn't find the specified plugin name for",),
      "Slurm has no such plugin (srun --mpi=NAME, a switch or a GRES plugin the site did not build)",
      "srun: error: Couldn't find the specified plugin name for mpi/pmi2 looking at all files",
      "https://github.com/SchedMD/slurm (src/common/plugin.c)",
      "srun --mpi=list for what the site has; the MPI's PMI to match"),
    # Open MPI's help texts for a runtime that could not start on the node
    S("ompi-orte-init", "environment", ("orte_init failed for some reason",),
      "Open MPI's runtime could not start (its environment: the launcher, PMI, a component it needs)",
      "It looks like orte_init failed for some reason; your parallel process is",
      "https://github.com/open-mpi/ompi (help-orte-runtime.txt)",
      "the lines after it name the failing part; the MPI the program was built with against the one that runs it"),
    S("ompi-opal-init", "environment", ("opal_init failed for some reason",),
      "Open MPI's base layer could not start (its installation on the node: a library or a component)",
      "It looks like opal_init failed for some reason; your parallel process is",
      "https://github.com/open-mpi/ompi (help-opal-runtime.txt)",
      "the lines after it; the Open MPI installation on the node (ompi_info)"),
    S("ompi-component-missing", "environment", ("A requested component was not found",),
      "Open MPI could not open a component it was asked for (not built, or its library missing on the node); a "
      "warning where another component serves (PMIx's psec munge)",
      "A requested component was not found, or was unable to be opened.  This",
      "https://github.com/open-mpi/ompi (help-mca-base.txt)",
      "its Framework and Component lines after it; ompi_info | grep COMPONENT on the node", weak=True),
    S("horovod-not-built", "environment", ("Neither MPI nor Gloo support has been built",),
      "Horovod was installed without MPI and without Gloo: it cannot start",
      "ValueError: Neither MPI nor Gloo support has been built. Try reinstalling Horovod ensuring that either MPI "
      "is installed (MPI) or CMake is installed (Gloo).", "https://github.com/horovod/horovod (horovod/runner)",
      "reinstall Horovod with HOROVOD_WITH_MPI=1 or HOROVOD_WITH_GLOO=1 (horovodrun --check-build)"),
    S("lammps-package-missing", "environment", ("not enabled in this LAMMPS binary",),
      "the LAMMPS binary was built without the package the input uses (a style of that package)",
      "ERROR: Unrecognized pair style 'reaxff' is part of the REAXFF package which is not enabled in this LAMMPS "
      "binary. (src/force.cpp:275)", "https://github.com/lammps/lammps (src/utils.cpp: check_packages_for_style)",
      "a LAMMPS built with that package (cmake -D PKG_NAME=yes; lmp -h lists the installed ones)"),
    S("ray-runtime-env", "environment", ("Failed to set up runtime environment",),
      "Ray could not set up a task's runtime environment (its pip/conda packages, the working dir upload)",
      "ray.exceptions.RuntimeEnvSetupError: Failed to set up runtime environment.",
      "https://github.com/ray-project/ray (python/ray/exceptions.py: RuntimeEnvSetupError)",
      "the message after it (the package or upload that failed); the runtime_env's pip list on a node"),
    S("vllm-bf16", "environment", ("Bfloat16 is only supported on GPUs with compute capability",),
      "bf16 was asked for on GPUs without it (compute capability below 8.0: V100, T4)",
      "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-"
      "32GB GPU has compute capability 7.0.", "https://github.com/vllm-project/vllm (the dtype check)",
      "dtype float16 on these GPUs (--dtype half), or nodes with Ampere or newer"),
    S("ssh-refused", "environment", ("ssh: connect to host", "Connection refused"),
      "the launcher (mpirun, pdsh) could not log in to a node over ssh: no sshd listening there, a firewall, or "
      "the host name resolves to another address (/etc/hosts): its daemons never started",
      "ssh: connect to host node2 port 22: Connection refused", "https://github.com/open-mpi/ompi/issues/6379",
      "from the launching node: ssh NODE true (passwordless, by the name the hostfile uses; getent hosts NODE); "
      "clusterdoc check --transport ssh on the nodes",
      node=re.compile(r"connect to host " + NODE + r" port")),
    # NCCL's socket transport found no interface to use (NCCL_SOCKET_IFNAME names none there): as its bootstrap's
    S("nccl-net-socket-no-if", "environment", ("NET/Socket : no interface found",),
      "NCCL found no usable network interface (NCCL_SOCKET_IFNAME names one that is not there)",
      "node1:3468:3905 [0] NCCL WARN NET/Socket : no interface found",
      "https://github.com/NVIDIA/nccl/blob/master/src/transport/net_socket.cc (ncclNetSocketInit: the form it "
      "prints; its bootstrap's twin: mftcoder-31, mambatree-14)",
      "set NCCL_SOCKET_IFNAME to an interface the node has (ip -br addr), the one the nodes reach each other on"),
    # session 28 (heldout-fresh34, after it was scored): the kernel's SIGILL, as the shell reports it: the binary
    # (a wheel, a compiled extension, a library built with -march=native or AVX-512 elsewhere) uses an instruction
    # this node's CPU does not have (a GPU's "an illegal instruction was encountered" is CUDA's, node.py)
    S("cpu-illegal-instruction", "environment", ("Illegal instruction", "Illegal instruction (core dumped)"),
      "the process died on an instruction this node's CPU does not have (SIGILL): a binary or extension built for "
      "another CPU (AVX2, AVX-512, -march=native on a build node)",
      "Illegal instruction", "https://github.com/dmlc/dgl/issues/3910",
      "compare the CPU flags (grep -o 'avx[^ ]*' /proc/cpuinfo | sort -u) with the build's; install a build for "
      "this CPU or rebuild on it", whole=True),
    S("shell-illegal-instruction", "environment", (": line ", " Illegal instruction"),
      "a command of the job script died on an instruction this node's CPU does not have (SIGILL): a binary built "
      "for another CPU",
      "/var/spool/slurmd/job1234/slurm_script: line 14:  4321 Illegal instruction     (core dumped) ./model",
      "https://github.com/bminor/bash (jobs.c: a job's status, strsignal's 'Illegal instruction', with the line)",
      "compare the CPU flags of this node and the build node (/proc/cpuinfo); on a mixed cluster, a --constraint "
      "for the CPU the binary was built for, or a portable build"),
    # gloo (torch's CPU backend, vLLM's and Ray's side channel) found no address on the interface GLOO_SOCKET_IFNAME
    # names (a bond's slave, a name another node has, '^lo' which gloo reads literally), or none it can bind for the
    # host's own name (/etc/hosts): gloo/transport/tcp/device.cc's two GLOO_ENFORCE
    S("gloo-no-address", "environment", ("Unable to find address for: ",),
      "gloo found no usable address: the interface GLOO_SOCKET_IFNAME names has none on this node (or is not "
      "there), or the host's name resolves to no address of its own",
      "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable "
      "to find address for: eth0",
      "https://github.com/pytorch/gloo/blob/main/gloo/transport/tcp/device.cc (lookupAddrForIface, "
      "lookupAddrForHostname: the form they print)",
      "set GLOO_SOCKET_IFNAME to an interface with an address on every node (ip -br addr; a bond, not its slave); "
      "or make the host name resolve to the node's own address (getent hosts $(hostname))",
      weak=True),  # session 28: yolox-119's interface was set by the project's own launch code (thin)
    # --- round 8 (memory): memory exhausted as the schedulers, the kernel's neighbours and the applications word it,
    # beyond the forms above. Each row is the tool's own message (its source or documentation); the generic phrases
    # ("out of memory", "not enough memory") count only on a line that also says it failed (_MEMORY_FAILED below)
    S("ibv-enomem", "environment", ("Cannot allocate memory", "reg_mr"),
      "an RDMA memory registration failed with ENOMEM: the locked-memory limit (ulimit -l) most often, or the "
      "host's memory",
      "k300:UCM:10c7c:73c03540: 7393885 us(7393885 us!!!):  DAPL ERR reg_mr Cannot allocate memory",
      "https://github.com/linux-rdma/rdma-core (ibv_reg_mr(3): ENOMEM; NOAA-EMC/global-workflow#1301's DAPL line)",
      "ulimit -l on the node (unlimited for RDMA: the container's or slurmd's memlock limit), then the job's memory",
      weak=True),
    S("ibv-enomem2", "environment", ("Cannot allocate memory", "ibv_"),
      "an InfiniBand verbs call failed with ENOMEM: the locked-memory limit (ulimit -l) most often, or the host's "
      "memory", "NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory",
      "https://github.com/linux-rdma/rdma-core (ibv_reg_mr(3), ibv_create_qp(3): ENOMEM)",
      "ulimit -l on the node (unlimited for RDMA: the container's or slurmd's memlock limit), then the job's memory",
      weak=True),
    # torch.save into a directory that is not there (the run's output folder never made): the job's tree
    S("torch-save-no-parent-dir", "environment", ("RuntimeError: Parent directory ", " does not exist."),
      "torch.save was given a path whose folder does not exist: the job's output directory was never created "
      "where it runs", "RuntimeError: Parent directory weights3 does not exist.",
      "https://github.com/sm1899/Quantized-Auto-Encoder-Based-Image-Compression/blob/"
      "b34b54608d2439dc83069c6318f170def0d9353e/test3.out",
      "create the output folder before the run (mkdir -p in the batch script, or os.makedirs(..., exist_ok=True) "
      "before torch.save); check the job's working directory"),
    # conda's activate in a batch script's shell that conda init never set up: the script goes on without the
    # environment (a candidate: what then fails, or the time limit it ran to, is the job's end)
    S("conda-shell-not-initialized", "environment", ("Your shell has not been properly configured to use 'conda",),
      "`conda activate` failed in the batch script (its shell was never set up by conda init): the job ran without "
      "that environment", "CommandNotFoundError: Your shell has not been properly configured to use 'conda "
      "activate'.", "https://github.com/jshe2304/smilesVAE/blob/fa44241679fbad156dcb470c8c5a027b6756a06d/"
      "train_output/train.err",
      "in the batch script: source \"$(conda info --base)/etc/profile.d/conda.sh\" before conda activate (or eval "
      "\"$(conda shell.bash hook)\")", weak=True),
    # session 25 (heldout-fresh23, after it was scored): Open MPI's help text on a verbs completion queue it could
    # not create; its "Error: Cannot allocate memory" line is the device's or memlock's ENOMEM, not the host's memory
    # Intel's SYCL free-memory query needs the Level Zero sysman interface, which is off unless ZES_ENABLE_SYSMAN=1
    # (ALCF Aurora's known issue)
    # NCCL_GRAPH_FILE (an image's or a plugin's channel graph for another machine) names a GPU this one lacks
    S("nccl-graph-file-dev", "environment", ("XML Import Channel : dev", "not found"),
      "the channel graph NCCL was given (NCCL_GRAPH_FILE, set by the image or a plugin) names a GPU this machine or "
      "job does not have: a graph for another machine", "NCCL WARN XML Import Channel : dev 1 not found.",
      "https://github.com/Azure/azhpc-images/issues/327",
      "unset NCCL_GRAPH_FILE (and NCCL_TOPO_FILE) for this VM size or GPU count, or give the one made for it"),
    # an injected topology (NCCL_TOPO_FILE, a plugin's static profile) that lists CPUs NCCL did not detect for the
    # GPUs in use: the file, or NCCL before 2.8 with a subset of the GPUs
    S("nccl-topo-file-attr", "environment", ("Attribute arch of node cpu not found",),
      "the topology NCCL was given (NCCL_TOPO_FILE, or a network plugin's static profile) does not match the GPUs "
      "in use", "NCCL WARN Attribute arch of node cpu not found", "https://github.com/aws/aws-ofi-nccl/issues/785",
      "the plugin's or the image's topology file: one made for the GPUs the job uses (a newer aws-ofi-nccl makes "
      "it itself), or NCCL 2.8+ (an NCCL bug with a subset of the GPUs: nccl#379)", weak=True),
    S("sycl-free-memory-sysman", "environment", ("does not have the ext_intel_free_memory aspect",),
      "the program asks SYCL for the GPU's free memory, which Level Zero gives only with ZES_ENABLE_SYSMAN=1",
      "The device does not have the ext_intel_free_memory aspect -33 (PI_ERROR_INVALID_DEVICE)",
      "https://github.com/argonne-lcf/user-guides/blob/7d04a3f91d5eaf6d731be6d267617c2e5cbe722e/docs/aurora/"
      "known-issues.md",
      "export ZES_ENABLE_SYSMAN=1 in the job before the program starts"),
    S("ompi-create-cq", "environment", ("Failed to create a completion queue",),
      "an InfiniBand completion queue could not be created: the locked-memory limit (ulimit -l), or a queue larger "
      "than the device allows (the MPI library's setting)", "Failed to create a completion queue (CQ):",
      "https://github.com/openucx/ucx/issues/551",
      "ulimit -l on the node (unlimited for RDMA), then the CQ size the MPI library asks for against the device's "
      "max_cqe (ibv_devinfo -v)", weak=True),
    # a Slurm command on a host that is no Slurm client: no slurm.conf, no configless DNS record (any command:
    # sinfo, srun, sbatch print the same)
    S("slurm-no-config", "environment", ("Could not establish a configuration source",),
      "a Slurm command found no configuration on this host (no slurm.conf, no configless SRV record): the host is "
      "not set up as a Slurm client",
      "sinfo: fatal: Could not establish a configuration source",
      "https://github.com/SchedMD/slurm/blob/master/src/common/fetch_config.c (the fatal it ends with)",
      "run it on a login node of the cluster, or point it at the cluster's config (SLURM_CONF, the conf-server)"),
    S("nccl-system-error", "environment", ("unhandled system error",),
      "NCCL: a system call failed (a container's small /dev/shm or missing --ipc=host, no usable network "
      "interface, a resource limit): NCCL_DEBUG=WARN prints which",
      "fastmoe: Test NCCL failure common.cu:777 'unhandled system error'", "https://github.com/NVIDIA/nccl/issues/473",
      "rerun with NCCL_DEBUG=WARN (its WARN line names the call); in a container: --ipc=host or --shm-size, and "
      "--network=host", weak=True),
    S("launcher-signalled", "environment", ("death signal, shutting down workers",),
      "the launcher (torchrun's agent) was stopped from outside: SIGHUP (its terminal or ssh session closed), "
      "SIGTERM or SIGINT (scancel, a time limit, a preemption, a user): no rank failed by itself",
      "W0920 09:10:41.194000 84933 site-packages/torch/distributed/elastic/agent/server/api.py:719] Received 1 "
      "death signal, shutting down workers", "https://github.com/modelscope/ms-swift/issues/5884",
      "the signal the workers got (closing signal SIGHUP: run under sbatch, nohup or tmux; SIGTERM: sacct -j JOB "
      "-o State,Reason)", weak=True),
    S("orte-daemons", "environment", ("ORTE was unable to reliably start one or more daemons",),
      "mpirun could not start its daemons on the other nodes (ssh refused or asking a password, orted not on the "
      "node's PATH, a firewall): no rank ran there",
      "ORTE was unable to reliably start one or more daemons.", "https://github.com/open-mpi/ompi/issues/5639",
      "from the launching node: ssh NODE which orted (passwordless; the same PATH and LD_LIBRARY_PATH), or mpirun "
      "--prefix; the lines above it in the output often say which", weak=True),
    # round 9 (code and environment, from real pastes): MPI_Init failing in Open MPI (its error handler on the NULL
    # communicator: the launcher and the library disagree: srun without PMI/PMIx, another MPI's mpirun), the PMIx
    # client with no server to reach; NAMD's own fatal line (NAMD_die: an input or configuration it cannot read; a
    # CUDA or memory failure printed the same way is not the input's); HDF5's "already open" (the code creates a
    # file it holds open, or two ranks create one file)
    S("ompi-init-null-comm", "environment", ("An error occurred in MPI_Init",),
      "MPI_Init failed (Open MPI's handler on the NULL communicator): the MPI library could not start under this "
      "launcher (srun without the PMI/PMIx it was built for, another MPI's mpirun, a broken install)",
      "*** An error occurred in MPI_Init", "https://github.com/open-mpi/ompi/issues/7949 (mpi4py/mpi4py#141, "
      "tomgoldstein/loss-landscape#20, Valdes-Tresanco-MS/gmx_MMPBSA#26 the same)",
      "launch it with the MPI it was built against (its own mpirun, or srun --mpi=pmix/pmi2 as it was built: "
      "srun --mpi=list; ldd the binary or mpi4py for libmpi)"),
    S("pmix-client-unreachable", "environment", ("OPAL ERROR", "pmix"),
      "Open MPI's PMIx client found no server to talk to: the program was started without the launcher it was "
      "built for (srun without --mpi=pmix, a bare ./a.out, another MPI's mpirun)",
      "[cmti093:37763] OPAL ERROR: Unreachable in file pmix3x_client.c at line 111",
      "https://github.com/mpi4py/mpi4py/issues/141 (tomgoldstein/loss-landscape#20: 'Not initialized')",
      "start it with its own mpirun, or srun --mpi=pmix (srun --mpi=list); an Open MPI built --with-pmi for srun"),
    # round 9: the module system's own program missing on the node (Lmod's libexec/lmod, Environment Modules'
    # modulecmd.tcl): every `module load` of the job did nothing. A candidate alone (a profile's line); with a
    # command then not found, that command is what the module would have provided (foreign.py: module-then-missing)
    S("lmod-program-missing", "environment", ("/libexec/lmod", "No such file or directory"),
      "the node has no module system (Lmod's program is missing there): the job's `module load` lines did nothing",
      "environment: line 17: /usr/share/lmod/lmod/libexec/lmod: No such file or directory",
      "https://github.com/TACC/Lmod/issues/645 (access-ci-org/Jetstream_Cluster#18 the same)",
      "the node's image or its mount of the module tree (/usr/share/lmod); `type module` in a job on that node",
      weak=True),
    S("modulecmd-missing", "environment", ("libexec/modulecmd", "no such file or directory"),
      "the node has no module system (Environment Modules' modulecmd.tcl is missing there): the job's `module "
      "load` lines did nothing",
      "couldn't read file \"/mpcdf/soft/SLE_15/packages/x86_64/Modules/5.0.1/libexec/modulecmd.tcl\": no such file "
      "or directory", "https://github.com/pyiron/pyiron_atomistics/issues/1553",
      "the node's mount of the module tree (MODULESHOME); `type module` in a job on that node", weak=True,
      lower=True),
    # round 9: Apptainer/Singularity's same failure at debug verbosity (-d: "FATAL   [U=0,P=37]  Master()  ...")
    S("apptainer-creation-failed-debug", "environment", ("FATAL ", "container creation failed"),
      "Apptainer/Singularity could not create the container on this host (a mount it needs: /tmp, the image's loop "
      "device, a bind path)", "FATAL   [U=0,P=37]         Master()                      container creation failed: "
      "mount /tmp failed: invalid argument", "https://github.com/apptainer/singularity/issues/4017",
      "the mount the line names on this host (its /tmp, loop devices, the bind path); the same image on another "
      "node tells the host from the image"),
    # session 21: any other FATAL of Apptainer/Singularity (its logger pads the level: "FATAL:   " at the default
    # verbosity, "FATAL   [U=uid,P=pid]" with -d): the container runtime stopped before the job's command ran (a
    # permission, an image, a mount, a namespace the node does not allow); a memory failure is oom.py's, first
    S("apptainer-fatal", "environment", ("FATAL:   ",),
      "Apptainer/Singularity stopped before the job's command ran (the image, a mount or bind path, a permission, "
      "a namespace or a kernel feature the node lacks)",
      "FATAL:   could not open image /scratch/img.sif: failed to retrieve path for /scratch/img.sif",
      "https://github.com/apptainer/apptainer (pkg/sylog: its FATAL level)",
      "the message after FATAL on that node; the same exec by hand there (apptainer -d exec ...)",
      unless=("dial tcp ",)),  # an image pull that could not connect: network.py's go-dial-*
    S("apptainer-fatal-debug", "environment", ("FATAL   [U=",),
      "Apptainer/Singularity stopped before the job's command ran (the image, a mount or bind path, a permission, "
      "a namespace or a kernel feature the node lacks)",
      "FATAL   [U=0,P=93341]      StageTwo()                    permission denied",
      "https://github.com/apptainer/singularity/issues/5767",
      "the message after the function name on that node; the same exec by hand there (-d shows each stage)"),
    # --- round 10 (HPC applications and launch set-ups), from real pastes (real/SOURCES.md) ---
    # Open MPI's help text wraps its "could not access or execute" over two lines: its first line alone says it
    # (fastpm-101, hyphy-1751: the program not there or not built, as pasted from three sites)
    S("ompi-no-executable-wrapped", "environment",
      ("unable to launch the specified application as it could not access",),
      "Open MPI's mpirun could not execute the program on a node (not there, not built, not executable); the lines "
      "after it name the executable and the node",
      "mpirun was unable to launch the specified application as it could not access",
      "https://github.com/veg/hyphy/issues/1751 (and fastpm/fastpm#101: Open MPI's help-orterun.txt as printed)",
      "the program's path on every node (an absolute path, a shared file system), its permissions; that it was "
      "built (an MPI build's own make target)"),
    # the program is there but the launcher may not execute it (EACCES): its mode, a directory given as the
    # program, a noexec mount. Three launchers' words: slurmstepd's execve(), Hydra's execvp, Open MPI's odls
    # help text (wandbonslurm-5, boutdev-1599, srnmultilabel-21)
    S("execve-permission", "environment", ("execve(): ", "Permission denied"),
      "Slurm could not start the task's command: it may not be executed there (not executable, a directory, a "
      "noexec mount)",
      "slurmstepd: error: execve(): start-agent.sh: Permission denied",
      "https://github.com/elyall/wandb_on_slurm/issues/5",
      "ls -l the command on the node (chmod +x; #! names an interpreter there); call it through its interpreter "
      "(bash script.sh, python script.py)"),
    S("ompi-execve-failed", "environment", ('tried to fork a new process via the "execve" system call',),
      "Open MPI could not execute the program (the lines after it give the error: Permission denied is a file "
      "not executable or a directory given as the program)",
      'Open MPI tried to fork a new process via the "execve" system call but',
      "https://github.com/zhufengx/SRN_multilabel/issues/21 (Open MPI's help-orte-odls-default.txt)",
      "the Application name it prints: ls -l it on the node (a directory? chmod +x?), or run it through its "
      "interpreter"),
    *[
    S(f"hydra-rejects-openmpi-{opt}", "environment", ("match_arg (", f": unrecognized argument {opt}"),
      "MPICH's mpiexec (Hydra) rejected an option only Open MPI's mpirun takes: the MPI on the PATH is not the one "
      "the script or tool was written for (two MPI installs mixed)",
      "[mpiexec@rs14.local] match_arg (utils/args/args.c:159): unrecognized argument mca",
      "https://github.com/radiasoft/devops/issues/183 (and ComputationalRadiationPhysics/picongpu#4739, "
      "zhijian-liu/torchpack#36)",
      "which mpiexec and the MPI the program was built with (ldd PROGRAM | grep mpi): load that MPI's module, or "
      "use the launcher options of the MPI that is there",
      unless=tuple(f": unrecognized argument {opt}{c}" for c in _WORD_GOES_ON))
    for opt in OPENMPI_ONLY_OPTIONS
],
    S("hydra-unrecognized-arg", "environment", ("match_arg (", ": unrecognized argument "),
      "MPICH's mpiexec (Hydra) rejected an option it was given: another MPI's option, a typo, or a program of "
      "another MPI started without its launcher (pmi_args)",
      "[mpiexec@r013.opa.vera.psc.edu] match_arg (utils/args/args.c:159): unrecognized argument pmi_args",
      "https://github.com/amusecode/amuse/issues/681",
      "the option named: which MPI's launcher takes it (which mpiexec; ldd PROGRAM | grep mpi)", weak=True),
    S("launcher-frame-mpirun", "environment", ("mpirun[0x",), _LAUNCHER_CRASHED,
      "[gadi-cpu-clx-2532:87043] [ 5] mpirun[0x400f7a]",
      "https://github.com/open-mpi/ompi/issues/7483 (Open MPI's signal handler's frame list)", _LAUNCHER_NEXT),
    S("launcher-frame-gdb", "environment", (" in orterun ()",), _LAUNCHER_CRASHED,
      "#5  0x00000000004016b2 in orterun ()", "https://github.com/open-mpi/ompi/issues/1916", _LAUNCHER_NEXT),
    S("orted-segfault", "environment", ("Segmentation fault", "bin/orted "), _LAUNCHER_CRASHED,
      "bash: line 1:   823 Segmentation fault      (core dumped) /labhome/valentinp/workspace/ompi-release/"
      "build_v1.10_rel/install/bin/orted --hnp-topo-sig 2N:2S:2L3:16L2:16L1:16C:16H:x86_64",
      "https://github.com/open-mpi/ompi-release/issues/875", _LAUNCHER_NEXT),
    # round 10: NetCDF's own error strings (nc_strerror: "NetCDF: HDF error", "NetCDF: Invalid dimension ID or name"),
    # as a model's check routine prints them: the file (missing, unreadable, another format, written by another library
    # build) or the code's I/O calls; thin alone (globalworkflow-1256: Hera's maintenance; e3sm-1010: input files'
    # permissions; ngen-749, asgs-984: unsettled)
    S("netcdf-error", "environment", ("NetCDF: ",),
      "the NetCDF library failed on a file the model reads or writes (the file, its permissions or format, the "
      "library build, or the code's I/O calls)",
      "  1219:  file: module_write_netcdf.F90 line:          663 NetCDF: HDF error",
      "https://github.com/NOAA-EMC/global-workflow/issues/1256 (and E3SM-Project/E3SM#1010, NOAA-OWP/ngen#749)",
      "the file named before it: ls -l it (readable by the job?), ncdump -h it (its format and dimensions); the "
      "NetCDF/HDF5 modules the model was built with against those loaded", weak=True),
    # session 18 (issue 41): from the sealed set heldout-fresh5's misses, read after its score was recorded (each
    # the tool's own message, its source beside it)
    # OpenFOAM run in parallel on its dummy Pstream (the stand-in for a build without MPI, or a shell that lost the
    # MPI one: macOS SIP strips the environment, a bashrc not sourced): src/Pstream/dummy/UPstream.C prints it
    # under its FOAM FATAL ERROR head (openfoam-app-333, rcps-buildscripts-4)
    S("openfoam-dummy-pstream", "environment", ("dummy Pstream library cannot be used in parallel",),
      "OpenFOAM ran in parallel on its dummy Pstream library (built, or started, without its MPI one): the "
      "installation or the environment it was started from, not the case",
      "The dummy Pstream library cannot be used in parallel mode",
      "https://github.com/gerlero/openfoam-app/issues/333 (UCL-ARC/rcps-buildscripts#4; OpenFOAM's "
      "src/Pstream/dummy/UPstream.C)",
      "the build's Pstream (WM_MPLIB; lib/$FOAM_MPI/libPstream.so there), and the environment mpirun gives the "
      "ranks (source OpenFOAM's etc/bashrc in the job; mpirun -x)"),
    S("openfoam-dummy-pstream-old", "environment", ("Trying to use the dummy Pstream library",),
      "OpenFOAM ran in parallel on its dummy Pstream library (built, or started, without its MPI one): the "
      "installation or the environment it was started from, not the case (OpenFOAM 2.x's words)",
      "Trying to use the dummy Pstream library.", "https://github.com/UCL-ARC/rcps-buildscripts/issues/4",
      "the build's Pstream (WM_MPLIB; lib/$FOAM_MPI/libPstream.so there), and the environment mpirun gives the "
      "ranks (source OpenFOAM's etc/bashrc in the job; mpirun -x)"),
    # a process ran an instruction its CPU does not have (SIGILL): a binary or an extension built for another CPU
    # (-march=native on a newer node, AVX-512) or a container built elsewhere, in UCX's words
    S("ucx-sigill", "environment", ("Caught signal 4 (Illegal instruction",),
      "a process ran an instruction this node's CPU does not have (SIGILL): a binary or extension built for another "
      "CPU (or its own deliberate trap)",
      "[pool0-1616:1864777:0:1864777] Caught signal 4 (Illegal instruction: illegal operand)",
      "https://github.com/NVIDIA-NeMo/Megatron-Bridge/issues/3343 (UCX's ucs_handle_error, as its other signals)",
      "the backtrace's library: rebuild it for the nodes' CPUs (no -march=native from another machine); "
      "lscpu's flags on this node against the build's"),
    # session 18 (issue 41): from the sealed set heldout-fresh6's misses, read after its score was recorded (each
    # the tool's own message, its source beside it)
    # NCCL's bootstrap got a message of another size than it expected: the ranks run different NCCL versions
    # (another container image, pip's nccl beside the system's), or something else answered on its port
    S("nccl-bootstrap-truncated", "environment", ("NCCL WARN Message truncated : received",),
      "NCCL's bootstrap between the ranks got a message of another size than expected: different NCCL versions on "
      "the nodes (or another program on its port)",
      "compute-st-p4de24xlarge-2:4827:6900 [4] bootstrap.cc:77 NCCL WARN Message truncated : received 256 bytes "
      "instead of 4", "https://github.com/NVIDIA/nccl/issues/1176",
      "the NCCL each rank loads (NCCL_DEBUG=INFO prints its version per rank; torch.cuda.nccl.version()): one "
      "version on every node"),
    # session 19 (heldout-fresh7's forms, after its score): Slurm's client commands that cannot read the cluster's
    # configuration (slurm.conf unreadable, absent, broken, or configless with no source): srun/sbatch stop at once,
    # on the node where they ran (trinity-125, elasticluster-630, trilinos-7060; one_policy_to_run_them_all-5)
    S("slurm-config-unreadable", "environment", ("fatal: Unable to process configuration file",),
      "a Slurm command (srun, sbatch, scontrol) could not read the cluster's configuration on this node: slurm.conf "
      "is missing, unreadable (its permissions) or broken, so nothing was started",
      "srun: fatal: Unable to process configuration file", "https://github.com/clustervision/trinity/issues/125 "
      "(and elasticluster/elasticluster#630)",
      "the line before it names the file and why (ls -l /etc/slurm/slurm.conf on that node, SLURM_CONF); the "
      "site's admins if it is theirs"),
    S("slurm-config-source", "environment", ("fatal: Could not establish a configuration source",),
      "a Slurm command found no configuration: no slurm.conf and no configless source (the DNS SRV record or "
      "slurmctld to fetch it from), so nothing was started",
      "sbatch: fatal: Could not establish a configuration source",
      "https://github.com/nico-bohlinger/one_policy_to_run_them_all/issues/5",
      "run it where Slurm is configured (a login node of the cluster), or set SLURM_CONF; the site's admins"),
    # Intel MKL's threading layer refused next to GNU OpenMP: the process exits there unless MKL_SERVICE_FORCE_INTEL
    # is set, and then the same line is printed on every run that goes on (pytorch#37377): a candidate
    S("mkl-threading-layer", "environment", ("MKL_THREADING_LAYER=", "is incompatible with libgomp"),
      "Intel MKL (through mkl-service) refused its INTEL threading layer with GNU OpenMP loaded in the process: "
      "numpy/MKL and torch's OpenMP of different builds in one environment",
      "Error: mkl-service + Intel(R) MKL: MKL_THREADING_LAYER=INTEL is incompatible with libgomp.so.1 library.",
      "https://github.com/pytorch/ort/issues/102 (and THU-MIG/yolov10#61)",
      "export MKL_THREADING_LAYER=GNU (or import numpy before torch), or one build of numpy/MKL in the environment",
      weak=True),
    # a shell or env(1) told to run a path that is not there: the job's interpreter or launcher missing on that node
    # (another node's virtualenv path given to a remote one: horovod-1340, mpich-318), or a profile line's
    *[
    S(f"shell-path-missing{suffix}", "environment", (shell, ": No such file or directory"),
      "a shell could not run or read a path: the job's interpreter or launcher is not at that path on the node "
      "(another machine's virtualenv or conda path), or a profile line's file is missing",
      learned, source,
      "the path on every node (ls it there: a shared file system, the same environment), or call the interpreter "
      "by a name each node resolves",
      weak=True)
    for suffix, shell, learned, source in (
        ("", "bash: /", "bash: /home/wyz/.pyenv/versions/3.7.2/envs/env-3.7.2/bin/python3.7: No such file or directory",
         "tests/fixtures/why/heldout-fresh7/horovod-1340-remote-python-not-found.log (horovod/horovod#1340)"),
        ("-env", "/usr/bin/env: ", "/usr/bin/env: python2.3: No such file or directory",
         "https://github.com/pmodels/mpich/issues/318"),
    )
    ],
    # session 23: HDF5 1.10+ locks every file it opens; a file system without the locks it asks for (Lustre
    # mounted without flock, some NFS, GPFS settings) fails the open with errno 524 (ENOTSUPP) or 38 (ENOSYS):
    # the file system's, a setting away (HDF5_USE_FILE_LOCKING=FALSE)
    S("hdf5-file-lock", "environment", ("unable to lock file",),
      "HDF5 could not lock the file it opens: the file system does not support the locks HDF5 1.10+ takes "
      "(Lustre without flock, NFS)",
      "  #003: H5FDsec2.c line 940 in H5FD_sec2_lock(): unable to lock file, errno = 524, error message = 'Unknown "
      "error 524'", "https://github.com/MPAS-Dev/MPAS-Analysis/issues/407 (HDF5's H5FDsec2.c)",
      "export HDF5_USE_FILE_LOCKING=FALSE in the job (or write to a file system that supports flock)"),
    # session 23: Ascend's HCCL could not start its HCCP process on the NPU (CANN's EJ0001, whose own reason is "Maybe
    # the last training process is running"): a process of an earlier run still holds the device
    S("ascend-hccp-init", "environment", ("Failed to initialize the HCCP process",),
      "Ascend's collective library (HCCL) could not start its HCCP process on an NPU: a process of an earlier run "
      "most often still holds the device",
      "EJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process. Reason: Maybe the last training "
      "process is running.", "https://github.com/hiyouga/LlamaFactory/issues/3839 (CANN's EJ0001)",
      "stop the earlier run's processes on the node (npu-smi info for what holds each NPU), wait about 10 s, rerun"),
    # session 24 (heldout-fresh19, after it was scored): Open MPI's mpiexec found itself inside an Open MPI job: the
    # program (or a script it runs) calls mpiexec again, or it is built for another MPI (fds-7364: Intel MPI's build
    # run under Open MPI's mpiexec, every process printing this until the walltime)
    S("ompi-recursive-mpiexec", "environment", ("Open MPI does not support recursive calls of mpiexec",),
      "Open MPI's mpiexec was started inside an Open MPI job: the program was built for another MPI than this "
      "mpiexec (or a script it runs calls mpiexec again)",
      "Open MPI does not support recursive calls of mpiexec", "https://github.com/firemodels/fds/issues/7364",
      "launch with the mpiexec of the MPI the program was built with (its module); ldd PROGRAM | grep mpi"),
    # an ssh that cannot resolve a host the launch names (a hostfile's or a launcher's): a candidate (a pod not up
    # yet, a typo, the site's DNS)
    S("ssh-unresolved-host", "environment", ("ssh: Could not resolve hostname",),
      "ssh could not resolve a host the launch names (a hostfile's name DNS does not know: a node or pod not up, a "
      "typo, a name only another network resolves)",
      "ssh: Could not resolve hostname openmpi-worker-0.openmpi.kubeflow: Name or service not known",
      "https://github.com/kubeflow/kubeflow/issues/887",
      "getent hosts NAME on the node that launches; the hostfile's names against the nodes' own", weak=True),
    # session 24 (heldout-fresh20, after it was scored): Singularity 2's own stop ("ERROR  : Image path ... doesn't
    # exist", then "ABORT  : Retval = 255"): the container never ran the job's command, as Apptainer's FATAL line
    S("singularity2-abort", "environment", ("ABORT  : Retval = ",),
      "Singularity stopped before the job's command ran (its ERROR line above says why: an image path, a bind, a "
      "permission)",
      "ABORT  : Retval = 255", "https://github.com/nextflow-io/nextflow/issues/1407",
      "the ERROR line above it, on the node that ran the task (an image on shared storage, not the submit host's "
      "/tmp)"),
    # session 24 (heldout-fresh21, after it was scored): HDF5 1.10.1's own words for the same lock failure
    # (H5FD_sec2_lock "unable to flock file"; "unable to lock the file or initialize file structure"), and MPI-IO's
    # (ROMIO's ADIOI_Set_lock: "File locking failed", Lustre without flock, NFS without lockd)
    S("hdf5-file-flock", "environment", ("unable to flock file",),
      "HDF5 could not lock the file it opens: the file system does not support the locks HDF5 1.10+ takes "
      "(Lustre without flock, NFS)",
      "  #3 H5FDsec2.c line 939 in H5FD_sec2_lock(): unable to flock file, errno = 524, error message = 'Unknown "
      "error 524'", "https://github.com/ALPSCore/ALPSCore/issues/348",
      "export HDF5_USE_FILE_LOCKING=FALSE in the job (or write to a file system that supports flock)"),
    # session 25 (heldout-fresh22, after it was scored): Kokkos built for another GPU than the node's (its
    # Kokkos_ARCH_* option: VOLTA72 for a V100, which is VOLTA70) stops at start-up on every rank
    S("kokkos-arch-mismatch", "environment", ("Kokkos::Cuda::initialize ERROR", "mismatch of architecture"),
      "the program was built with Kokkos for another GPU architecture than this node's (its Kokkos_ARCH_* option)",
      "Kokkos::Cuda::initialize ERROR: likely mismatch of architecture", "https://github.com/lammps/lammps/issues/2086",
      "rebuild with the Kokkos_ARCH_* of the node's GPU (V100: VOLTA70, A100: AMPERE80, H100: HOPPER90); configure "
      "on a GPU node, or name it: auto-detection on a login node finds none"),
    S("hdf5-locking-disabled", "environment", ("file locking disabled on this file system",),
      "HDF5 could not lock the file it opens: the file system does not give locks (flock returned ENOSYS: Lustre "
      "or FSx mounted without flock)",
      "    file locking disabled on this file system (use HDF5_USE_FILE_LOCKING environment variable to override), "
      "errno = 38, error message = 'Function not implemented'", "https://github.com/bcbio/bcbio-nextgen/issues/2707",
      "export HDF5_USE_FILE_LOCKING=FALSE in the job (or write to a file system mounted with flock)"),
    S("romio-file-locking", "environment", ("File locking failed in ADIOI_Set_lock",),
      "MPI-IO could not lock the file (ROMIO's ADIOI_Set_lock): the file system does not give it locks (Lustre "
      "mounted without flock, NFS without lockd or with attribute caching)",
      "Generic MPICH Message: File locking failed in ADIOI_Set_lock(fd 12,cmd F_SETLKW/7,type F_WRLCK/1,whence 0) "
      "with return value FFFFFFFF and errno 26.", "https://github.com/SmileiPIC/Smilei/issues/342",
      "write to a file system mounted with locking (Lustre: flock), or disable data sieving / locking in the MPI-IO "
      "hints (romio_ds_write=disable)"),
    # session 24 (heldout-fresh21, after it was scored): Go's spelling of ENOSPC (a container pull, Docker's layer
    # writes: "write /var/lib/docker/tmp/...: no space left on device"), as glibc's is read above
    S("fs-no-space-go", "environment", ("no space left on device",),
      "a file system the job writes to is full (ENOSPC): a container's image store, the disk, /tmp",
      "Task failed to start - CannotPullContainerError: write /var/lib/docker/tmp/GetImageBlob887491687: no space "
      "left on device", "https://github.com/nextflow-io/nextflow/issues/5099",
      "df -h on the node for the path it wrote (Docker's /var/lib/docker; a bigger volume, fewer tasks per node)"),
    # Java's ProcessBuilder (Nextflow's executors, a capsule's launcher) could not start a program: it is not on the
    # PATH of the machine that runs it (Nextflow's Slurm executor where no sbatch is, a module's broken java path)
    S("java-cannot-run-program", "environment", ("Cannot run program \"", "error=2, No such file or directory"),
      "a Java program (Nextflow, a launcher) could not start a command: it is not installed or not on the PATH "
      "where it runs (the scheduler's sbatch, a module's java)",
      'Cannot run program "sbatch" (in directory "/Volumes/KMB_hard_drive_2/.../work/b9/c99314ab"): error=2, No such '
      "file or directory", "https://github.com/BROOKELAB/Influenza-virus-DI-identification-pipeline/issues/2",
      "which COMMAND where the program runs (the login node for Nextflow's executor, the module's paths)"),
    # coreutils' env on a task's command that is not installed there ("env: 'singularity': No such file or
    # directory": Nextflow's .command.run with -profile singularity on a node without it), quoted either way
    S("env-command-missing", "environment", ("env: \u2018", "\u2019: No such file or directory"),
      "a task's command is not installed where it ran (env could not find it on the PATH: the container runtime, "
      "an interpreter)",
      "env: \u2018singularity\u2019: No such file or directory", "https://github.com/nf-core/rnaseq/issues/887",
      "install it on every node the tasks run on, or load its module in the task's environment"),
    # session 26: the Hugging Face hub unreachable with no cached copy (transformers' and huggingface_hub's own
    # words, ValueError or OSError or LocalEntryNotFoundError by version): threads settle it as a compute node
    # without internet (offline mode, a download on the login node, a proxy) and as the site's or the hub's network
    # down (AMDResearch/hpcfund#12): a candidate, never a verdict
    S("hf-hub-unreachable", "environment", ("We couldn't connect to 'https://huggingface.co'",),
      "the job could not reach the Hugging Face hub and found no cached copy of the files it asked for",
      "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached "
      "files and it looks like facebook/esm2_t33_650M_UR50D is not the path to a directory containing a file named "
      "config.json.", "https://github.com/AMDResearch/hpcfund/issues/12",
      "download on a node with internet (the login node) into a shared HF_HOME, then set HF_HUB_OFFLINE=1 in the "
      "job; or give the compute nodes a proxy (HTTPS_PROXY)", weak=True),
    S("hf-hub-unreachable-cache", "environment", ("Connection error, and we cannot find the requested files in the",),
      "the job could not reach the Hugging Face hub and found no cached copy of the files it asked for",
      "ValueError: Connection error, and we cannot find the requested files in the cached path. Please try again or "
      "make sure your Internet connection is on.", "https://github.com/huggingface/transformers/issues/10067",
      "download on a node with internet (the login node) into a shared HF_HOME, then set HF_HUB_OFFLINE=1 in the "
      "job; or give the compute nodes a proxy (HTTPS_PROXY)", weak=True),
    # session 26 (heldout-fresh27, after it was scored): an argument its parser got as an empty string: the shell
    # expanded a variable that is not set where the job ran (AzureML's $AZ_BATCHAI_TASK_INDEX on an AKS compute)
    S("argparse-empty-value", "environment", (": error: argument ", " value: ''"),
      "the script got an empty value for an argument: the command line passes a variable that is not set where the "
      "job runs",
      "pytorch_mnist.py: error: argument --rank: invalid int value: ''",
      "https://github.com/Azure/AML-Kubernetes/issues/15",
      "set the variable where the command runs (or take the rank from the launcher's RANK / LOCAL_RANK / "
      "SLURM_PROCID), then pass it"),
    # MPICH's PMI-1 client could not talk to its process manager: the program was started by another launcher
    # than its MPI's (Open MPI's mpirun over an MPICH build), or a process forked from an MPI rank reinitialises
    # MPI (dask-mpi's Nanny: dask#4214, "--no-nanny worked")
    S("pmi-write-failed", "environment", ("Unable to write to PMI_fd",),
      "an MPI process could not reach its process manager (PMI): a launcher of another MPI than the one the program "
      "was built with, or a process forked from an MPI rank",
      "[cli_1]: Unable to write to PMI_fd", "https://github.com/dask/dask/issues/4214",
      "launch with the mpirun/mpiexec (or srun --mpi=) of the MPI the program links (ldd PROGRAM | grep mpi); do "
      "not fork MPI processes (dask-mpi: --no-nanny)"),
    # CUDA's cudaErrorSymbolNotFound (500) from a library's call (NCCL's): a library built for another CUDA than
    # the driver's or the rest of the install's (an image's NCCL: aws/deep-learning-containers#3964)
    S("cuda-symbol-not-found", "environment", ("named symbol not found",),
      "a CUDA call found no symbol it needs: a library (NCCL, an extension) built for another CUDA or driver than "
      "the one installed",
      "9dc3329bb310:48:48 [0] include/alloc.h:125 NCCL WARN Cuda failure 500 'named symbol not found'",
      "https://github.com/aws/deep-learning-containers/issues/3964",
      "use the NCCL (and torch) built for the installed CUDA and driver: python -c 'import torch; print(torch.cuda."
      "nccl.version())' against the image's libnccl; nvidia-smi's driver version"),
    # a Python process could not start a thread: its task limit (ulimit -u, a container's or cgroup's pids limit),
    # no memory for the thread's stack, or threads the code leaks (a writer or a pool made per step): a candidate
    S("python-thread-limit", "environment", ("can't start new thread",),
      "a process could not start a thread: its task limit (ulimit -u, the container's pids limit), no memory for "
      "its stack, or threads the code starts and never ends",
      "RuntimeError: can't start new thread",
      "https://github.com/modelscope/3D-Speaker/issues/76",
      "ulimit -u and the cgroup's pids.max where it ran; count the threads of the process (ps -o nlwp PID) over a "
      "few steps: a count that grows is the code's", weak=True),
    # CUDA's 802 on an NVSwitch machine: the fabric manager service not enabled or not running (moved from node.py
    # in session 26: both threads here settled the node's service setup, nccl-tests#264 "resolved post enabling
    # fabric manager service"; llamafactory#8968)
    S("cuda-not-initialized", "environment", ("system not yet initialized",),
      "CUDA could not start: the node's GPU system is not initialized (NVSwitch machines: the fabric manager "
      "service is not enabled or not running)", "Cuda failure 802 'system not yet initialized'",
      "https://github.com/hiyouga/LlamaFactory/issues/8968",
      "enable and start the node's nvidia-fabricmanager (systemctl enable --now nvidia-fabricmanager; its version "
      "must match the driver's), or drain it and resubmit elsewhere"),
    # session 26 (heldout-fresh28, after it was scored): EMFILE on any line (a collective library's bootstrap
    # accepting its peers' connections: AWS Neuron's CCOM with 32 workers); a Python exception's is read so already
    S("too-many-open-files", "environment", ("Too many open files",),
      "a process hit its open-files limit (ulimit -n): too low for the connections or files the job opens",
      "2023-Aug-01 16:12:43.0204 332066:332417 [18] bootstrap.cc:106 CCOM WARN Call to accept failed : Too many open "
      "files", "https://github.com/aws-neuron/aws-neuron-sdk/issues/713",
      "raise the limit where the job runs (ulimit -n 65535 in the batch script; the container's --ulimit nofile; "
      "Slurm's PropagateResourceLimits)"),
    # HIP's hipErrorInvalidKernelFile through RCCL ("Cuda failure 'invalid kernel file'"): no code object the GPU
    # can load (a GPU the build does not target: an integrated GPU visible to ROCm, rccl#876)
    S("hip-invalid-kernel-file", "environment", ("invalid kernel file",),
      "a GPU found no kernel it can load: the build does not target that GPU (another architecture, or an "
      "integrated GPU the runtime also sees)",
      "catalyst-convoy:774735:774739 [0] /long_pathname_so_that_rpms_can_package_the_debug_info/src/extlibs/rccl/"
      "build/hipify/src/enqueue.cc:66 NCCL WARN Cuda failure 'invalid kernel file'",
      "https://github.com/ROCm/rccl/issues/876",
      "HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES to the GPUs the build targets (rocminfo lists each gfx); a build "
      "for that architecture (PYTORCH_ROCM_ARCH)"),
    # CUDA's cudaErrorStubLibrary (34): the program loaded the toolkit's stub libcuda.so (for linking only) instead
    # of the driver's (a build's rpath or LD_LIBRARY_PATH with .../lib64/stubs: warpx#4012 on Karolina)
    S("cuda-stub-library", "environment", ("CUDA driver is a stub library",),
      "the program loaded the CUDA toolkit's stub libcuda (meant for linking) instead of the driver's: its library "
      "path", "amrex::Abort::2::CUDA error 34 in file /home/it4i-berceanu/src/warpx/build_gpu/_deps/fetchedamrex-src"
      "/Src/Base/AMReX_GpuDevice.cpp line 164: CUDA driver is a stub library !!!",
      "https://github.com/BLAST-WarpX/warpx/pull/4012",
      "remove .../lib64/stubs from LD_LIBRARY_PATH (and the build's rpath): ldd PROGRAM | grep libcuda must show the "
      "driver's"),
    # XLA (JAX) could not dlopen libnccl: its local-CUDA install expects NCCL installed by the user (jax#18391)
    S("xla-nccl-not-loaded", "environment", ("Unable to load NCCL library",),
      "the program could not load the NCCL library: multi-GPU collectives cannot run (NCCL not installed, or not on "
      "the library path)",
      "external/xla/xla/service/gpu/nccl_utils.cc:133: NCCL operation ncclGetUniqueId(&id) failed: Unable to load "
      "NCCL library. Multi-GPU collectives will not work.;", "https://github.com/jax-ml/jax/issues/18391",
      "install NCCL for the CUDA in use (pip install nvidia-nccl-cu12) or put its libnccl.so on LD_LIBRARY_PATH"),
    # session 27 (heldout-fresh31, after it was scored): apex's fused optimizers and layers built without their CUDA
    # extensions (a prebuilt wheel, or pip install without --cpp_ext --cuda_ext): "FusedAdam requires cuda extensions"
    S("apex-no-cuda-extensions", "environment", ("requires cuda extensions",),
      "apex is installed without its CUDA extensions (a wheel or a pip install that skipped building them)",
      "RuntimeError: apex.optimizers.FusedAdam requires cuda extensions",
      "https://github.com/EleutherAI/gpt-neox/issues/1165",
      "build apex from source with its extensions (pip install -v --no-build-isolation --config-settings "
      "\"--build-option=--cpp_ext\" --config-settings \"--build-option=--cuda_ext\" ./apex), or do without its "
      "fused optimizer"),
    # HPE MPT refuses to start a program built against another MPT than the one loaded (cime#3028: ESMF built on the
    # removed mpt/2.15 after Cheyenne's update)
    S("mpt-version-mismatch", "environment", ("is being used with version", "libmpi"),
      "the program was built against another HPE MPT version than the one loaded where it runs",
      "\tA version 2.19 libxmpi is being used with version 2.15 libmpi. Ensure",
      "https://github.com/ESMCI/cime/issues/3028",
      "load the MPT module the program was built with (module list at build time), or rebuild it against the "
      "loaded one"),
    # session 27: Lightning's Trainer asked for GPUs where torch sees none ("You requested GPUs: [0]\n But your machine
    # only has: []"): torch without CUDA or no GPU given to the job, or a Trainer built on a machine that has none
    # (ray_lightning#64: a CPU-only Ray head); a candidate
    S("lightning-no-gpu-seen", "environment", ("you requested gpu",),
      "the Trainer asked for GPUs where torch sees none: a torch without CUDA, no GPU given to the job, or a Trainer "
      "built on a machine without GPUs",
      "pytorch_lightning.utilities.exceptions.MisconfigurationException: Error instantiating 'pytorch_lightning."
      "trainer.trainer.Trainer' : You requested GPUs: [0]", "https://github.com/ray-project/ray_lightning/issues/64",
      "python -c 'import torch; print(torch.version.cuda, torch.cuda.device_count())' where it failed; the job's "
      "GPU request (--gres, --gpus); where the Trainer is built (a CPU-only head: gpus=0 there)", weak=True,
      lower=True),
    # session 27 (heldout-fresh32, after it was scored): AWS's libfabric plugin for NCCL (aws-ofi-nccl) found no
    # usable provider (no EFA device in the container: /dev/infiniband not passed, aws-ofi-nccl#1020; an instance
    # without EFA; a libfabric without the efa provider); its strings at aws/aws-ofi-nccl 2daf7d3
    S("ofi-no-provider", "environment", ("NET/OFI", "fi_getinfo() call failed"),
      OFI_NO_DEVICE,
      "[2025-10-16 22:16:08] ip-172-31-3-90:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI "
      "fi_getinfo() call failed: No data available", "https://github.com/aws/aws-ofi-nccl/issues/1020",
      "fi_info -p efa on that node and in the container (docker run --device /dev/infiniband/uverbs0 ..., or the "
      "EFA device plugin on Kubernetes); FI_PROVIDER=efa"),
    S("ofi-no-protocol", "environment", ("NET/OFI", "Unable to find a protocol that worked"),
      OFI_NO_DEVICE,
      "NCCL WARN NET/OFI Unable to find a protocol that worked.  Failing initialization.",
      "https://github.com/aws/aws-ofi-nccl/blob/2daf7d303aa139a03140aa530957d10521e4478d/src/nccl_ofi_net.cpp",
      "fi_info -p efa on that node and in the container (the EFA devices passed in); FI_PROVIDER=efa"),
    # the plugin could not register a buffer with the fabric: GPU memory (type = 2) needs GPUDirect RDMA that the
    # stack supports (NCCL 2.19+ with the libfabric of EFA installers before 1.29: aws-ofi-nccl#584,
    # awsome-distributed-training#203; no peer-memory module), host memory a memlock limit high enough
    S("ofi-register-memory", "environment", ("NET/OFI", "register memory"),
      "NCCL's libfabric plugin could not register memory with the fabric: the fabric stack's versions (libfabric, "
      "the EFA installer, NCCL) or GPUDirect RDMA on the node",
      "register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 0. RC: -22, Error: "
      "Invalid argument", "https://github.com/aws/aws-ofi-nccl/issues/584",
      "upgrade the EFA installer (1.29 or later with NCCL 2.19+) or set FI_EFA_SET_CUDA_SYNC_MEMOPS=0; ulimit -l "
      "unlimited for host memory"),
    # an extension's GPU op built without CUDA (mmcv's, detectron2's, DCNv2's AT_ERROR("X is not compiled with GPU
    # support")): the package was built or installed where no CUDA was found (a CPU wheel, CUDA_HOME unset)
    S("op-not-compiled-gpu", "environment", ("not compiled with gpu support",),
      "an extension's GPU operator was built without CUDA (the package installed from a CPU build, or built where "
      "CUDA was not found)",
      "RuntimeError: DeformConv is not compiled with GPU support",
      "https://github.com/Adamdad/ConsistentTeacher/issues/24",
      "reinstall the package built for this torch and CUDA (mmcv: MMCV_WITH_OPS=1 pip install -e . on a GPU node, "
      "or the wheel for this torch+CUDA); CUDA_HOME set when building", lower=True),
    # session 29: a kernel compiled at run time (NVRTC, a JIT of a library: Tutel, CuPy) could not find a header of
    # the CUDA toolkit: the toolkit is not where the library looks (CUDA_HOME), or the image has no headers
    S("nvrtc-header-missing", "environment", ("catastrophic error: cannot open source file",),
      "a kernel compiled at run time (NVRTC or a library's JIT) could not find a header it includes (cuda_runtime.h "
      "...): CUDA_HOME or the toolkit's include directory is not where the library looks, or the image lacks it",
      '[E custom_kernel.cpp:124] default_program(1): catastrophic error: cannot open source file "cuda_runtime.h"',
      "https://github.com/microsoft/Tutel/issues/163",
      "export CUDA_HOME to the toolkit whose include/ holds the header (ls $CUDA_HOME/include/cuda_runtime.h), or a "
      "devel image with the toolkit's headers"),
    # session 29: slurmstepd could not start a task and srun says only SLURM_ERROR's text: the step's plugins (an MPI
    # plugin: NeMo Speech#14829's --mpi=pmix in a pyxis container, fixed by pmi2), the container's or the node's
    S("srun-task-launch-unspecified", "environment", ("srun: error: task ", " launch failed: Unspecified error"),
      "slurmstepd could not start a task of the step, and says no more: an MPI or container plugin the step asked "
      "for (--mpi, --container-image), its prolog, or that node's slurmd",
      "srun: error: task 0 launch failed: Unspecified error", "https://github.com/NVIDIA-NeMo/Speech/issues/14829",
      "the node's slurmd log for the step (its plugin's error); the step again with another --mpi (srun --mpi=list)",
      weak=True),
    # session 29: PSM3 (libfabric's provider for Intel's Ethernet and Omni-Path) found no NIC of its own: a container
    # or a node without that fabric, where MPI picked the provider anyway (shmem4py-28: PSM3_DEVICES='self,shm')
    S("psm-no-nic", "environment", ("can't open nic unit",),
      "the PSM3 fabric provider found no NIC of its own on this node (a container or a node without that fabric, "
      "where the MPI library picked PSM3 anyway)", "28463ef361be:rank0: PSM3 can't open nic unit: 0 (err=23)",
      "https://github.com/mpi4py/shmem4py/pull/28",
      "FI_PROVIDER=tcp (or shm on one node), or PSM3_DEVICES='self,shm'; fi_info on the node lists what it has"),
    # session 29: a Kokkos build for another GPU architecture (Trilinos's PR testing on nodes of a newer GPU)
    S("kokkos-arch-mismatch", "environment", ("running kernels compiled for compute capability",),
      "the program (Kokkos) was built for another GPU architecture than this node's: the build, not the code",
      "Kokkos::Cuda::initialize ERROR: running kernels compiled for compute capability 3.7 on device with compute "
      "capability 6.0 is not supported by CUDA!", "https://github.com/trilinos/Trilinos/issues/7498",
      "build for this GPU's architecture (Kokkos_ARCH_<GPU>, CMAKE_CUDA_ARCHITECTURES), or run on the nodes it was "
      "built for (a constraint)"),
    # session 29: a UCX variable that asks for a feature none of the node's transports has (UCX 1.10 turned
    # UCX_SOCKADDR_CM_ENABLE on by default: ucx-py-667)
    S("ucx-config-unsupported", "environment", ("is set to yes but none of the available components supports",),
      "a UCX setting asks for a feature no transport on this node provides (a UCX default changed with its "
      "version, or a variable the job sets)",
      "[1610542356.468568] [dgx13:13389:0]    ucp_context.c:1080 UCX  ERROR UCX_SOCKADDR_CM_ENABLE is set to yes "
      "but none of the available components supports SOCKADDR_CM", "https://github.com/rapidsai/ucx-py/pull/667",
      "unset the variable it names or set it to no (ucx_info -c shows the defaults; ucx_info -d the transports)"),
    # session 29: Windows' delay-load failures (0xC06D007E: a DLL not found, 0xC06D007F: a procedure not found in
    # it): a DLL of another version than the program's (CNTK with an old MS-MPI: cntk-1047)
    S("win-delay-load", "environment", ("exception 0xc06d007",),
      "a Windows DLL the program loads lazily was missing or of another version (delay-load: a module or a "
      "procedure not found)", "CNTK: Caught Win32 exception 0xc06d007f.",
      "https://github.com/microsoft/CNTK/issues/1047",
      "the versions of the DLLs the program was built against (MS-MPI, the CUDA runtime): install those",
      lower=True),
]  # fmt: skip
