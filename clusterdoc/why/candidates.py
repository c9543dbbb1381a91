"""What a thin line may be, and what decides: the candidates `clusterdoc why` lists with "unknown" where a weak
signature (why/signatures.py) is the only evidence. `for_signature(sig)` gives a weak line's, `for_peer()` a lost
peer's (the other rank first, or the link).
"""

from __future__ import annotations

from clusterdoc.why.sigtable import (
    catalogue_apps,
    catalogue_cuda,
    catalogue_hpcrt,
    catalogue_mpi,
    catalogue_nccl,
    catalogue_torch,
)

# thin lines (why/signatures.py, weak): what each may be, and what decides
_THIN = {
    "cuda-illegal-instruction": (
        "node: the GPU or its PCIe link (XIDs in the node's kernel log: clusterdoc check on it; the same run on "
        "another GPU passes)",
        "code: a kernel's bug (the same failure on every GPU; CUDA_LAUNCH_BLOCKING=1 names the kernel)",
    ),
    "lightning-no-gpu-seen": (
        "environment: torch sees no GPU there (a CPU build of torch, the driver, no GPU requested from the scheduler: "
        "torch.cuda.device_count() on that node decides)",
        "code: the Trainer is built on a machine meant to have none (a CPU-only head or driver process: gpus=0 there, "
        "the GPUs given to the workers)",
    ),
    "ucx-ud-timeout": (
        "network: the fabric link to that peer (the ports' error counters: ibstat, perfquery; the switch's log)",
        "node: the peer's node or process hung or died (its kernel log at that time; a rerun that passes the same "
        "point and recurs on that node decides: exclude it)",
    ),
    "nccl-system-error": (
        "environment: a container's small /dev/shm or no --ipc=host (NCCL_DEBUG=WARN: 'Error while creating shared "
        "memory segment'; df -h /dev/shm)",
        "environment or network: no usable interface in the container or on the node (NCCL_DEBUG=WARN: 'Socket "
        "creation failed', 'no socket interface'; NCCL_SOCKET_IFNAME)",
        "node: a resource limit or a device of that node (ulimit -a, clusterdoc check on it)",
    ),
    "store-connect-timeout": (
        "network: the endpoint's address is wrong or unreachable from this node (nc -zv ADDR PORT; a firewall, "
        "another interface)",
        "scheduler or node: the endpoint's node (rank 0's) started late or not at all (its own log, squeue)",
    ),
    "launcher-signalled": (
        "environment: the terminal or ssh session that ran the launcher closed (SIGHUP: run it under sbatch, nohup "
        "or tmux)",
        "scheduler: Slurm or the cluster stopped the job (SIGTERM: a time limit, a preemption, scancel: sacct -j JOB "
        "-o State,Reason)",
    ),
    "mpi-lost-daemon": (
        "node: the node it names died, rebooted or ran out of memory (its kernel log: the OOM killer, a panic; "
        "clusterdoc check on it)",
        "network: the TCP link between mpirun's node and that node dropped (clusterdoc check (net) on both)",
        "the job itself: a rank that failed or was stopped first (the ranks' output above this line; a suspended "
        "or killed mpirun)",
    ),
    "ray-worker-died": (
        "oom: the OOM killer (Ray's own text lists it first: the node's dmesg, ray logs raylet.out for memory)",
        "code or a library: the worker crashed (SIGSEGV: its own log, python-core-worker-*.log)",
        "node or scheduler: ray stop, or the node shutting down (the raylet's log)",
    ),
    "horovod-stalled": (
        "hang: the ranks its stalled ops miss are behind or stuck outside the collective (evaluation or data on one "
        "rank; their stacks: py-spy dump)",
        "desync: those ranks submitted other tensors (names or order differ between ranks; HOROVOD_TIMELINE)",
    ),
    "ddp-zero-params": (
        "hang: the rank that sent 0 params was behind (still loading data or the model) when the others checked: "
        "its log at that time",
        "desync: the ranks built different models (a model without parameters on one rank: its config)",
        "environment: the backend passed no data (a P2P or transport problem: NCCL_P2P_DISABLE=1 decides)",
    ),
    "slurm-script-missing": (
        "node: the node's Slurm spool or /tmp (full, cleaned, another mount: its slurmd log, df on it)",
        "environment: the script's #! interpreter is not installed on that node (the script's first line)",
    ),
    "orte-daemons": (
        "environment: the nodes lack what mpirun needs there (orted on PATH, LD_LIBRARY_PATH; ssh without a "
        "password: ssh NODE true)",
        "network: a firewall between the nodes (Open MPI's TCP ports; its line 'unable to complete a TCP "
        "connection' says so)",
    ),
    # --- round 8 (memory) ---
    "slurm-exceeded-job-mem": (
        "oom: the job reached its memory limit and a process was killed for it (sacct -j JOB -o State,MaxRSS,ReqMem: "
        "OUT_OF_MEMORY, a task killed by SIGKILL)",
        "the job failed of something else: the limit counts the page cache, which jobs that completed fill too (the "
        "failure's own lines above)",
    ),
    "slurm-exceeded-step-mem": (
        "oom: the job reached its memory limit and a process was killed for it (sacct -j JOB -o State,MaxRSS,ReqMem: "
        "OUT_OF_MEMORY, a task killed by SIGKILL)",
        "the job failed of something else: the limit counts the page cache, which jobs that completed fill too (the "
        "failure's own lines above)",
    ),
    "slurm-hit-memory-limit": (
        "oom: the job reached its memory limit and a process was killed for it (sacct -j JOB -o State,MaxRSS,ReqMem: "
        "OUT_OF_MEMORY, a task killed by SIGKILL)",
        "the job failed of something else: the limit counts the page cache, which jobs that completed fill too (the "
        "failure's own lines above)",
    ),
    "ibv-enomem": (
        "environment: the locked-memory limit (ulimit -l in the job; unlimited for RDMA: slurmd's or the "
        "container's LimitMEMLOCK)",
        "oom: the host's memory ran out (sacct MaxRSS, the node's dmesg)",
    ),
    "ibv-enomem2": (
        "environment: the locked-memory limit (ulimit -l in the job; unlimited for RDMA: slurmd's or the "
        "container's LimitMEMLOCK)",
        "oom: the host's memory ran out (sacct MaxRSS, the node's dmesg)",
    ),
    "cudnn-workspace": (
        "oom: the GPU had too little free memory for the workspace (a smaller batch decides)",
        "code or a library: the algorithm cuDNN chose asks for more than it was given (torch.backends.cudnn."
        "benchmark=False, another torch/cuDNN version)",
    ),
}
# round 8 (issue 41): torch's own words for a rank stuck, each thin alone (what it may be, and what decides)
_THIN.update(
    {
        "torch-heartbeat-stuck": (
            "hang: the rank's NCCL or CUDA call never returned (a collective another rank never joined, a GIL "
            "deadlock): py-spy dump --native on it; the other ranks' logs at that time",
            "node: its GPU stopped answering (an XID in the node's kernel log: clusterdoc check on it)",
            "network: a collective stuck on the fabric between the nodes (NCCL_DEBUG=INFO; clusterdoc check --perf)",
        ),
        "torch-dump-signal": (
            "hang: a rank never joined the collective the others timed out in (the rank named in the line only "
            "noticed first; the flight recorder's dump, TORCH_NCCL_DEBUG_INFO_TEMP_FILE, shows which)",
            "desync: the ranks called different collectives or sizes (TORCH_DISTRIBUTED_DEBUG=DETAIL)",
            "network or node: a collective stuck between the nodes, or a rank's node gone (its kernel log)",
        ),
    }
)
_THIN["pyspy-dump"] = (  # round 10: a py-spy dump of a stuck rank, alone: where it waits, not why
    "hang: the dumped rank waits for something another rank never did (its innermost frames: a collective, a data "
    "loader's queue, a lock): dump every rank at the same moment; the one not in the collective is behind",
    "desync: the ranks' stacks stop in different collectives or call sites (TORCH_DISTRIBUTED_DEBUG=DETAIL)",
    "network or node: a collective stuck between the nodes, or a rank's node gone (NCCL_DEBUG=INFO; the nodes' "
    "kernel logs, clusterdoc check)",
)
_THIN["mpi-abort"] = (  # MPI_Abort alone: the application found something; its message is elsewhere
    "code: the application stopped on an error it detected (the input, a file it reads, the numerics): the "
    "rank's own output before the abort (its FATAL/ERROR line, an rsl.error or .out file of that rank)",
    "oom: the application found no memory for an array and aborted (its allocation message in the same output)",
    "environment: a library it calls failed (an I/O library's file error, an MPI or solver setup): the lines the "
    "library printed before it",
)
_THIN["mpich-abort"] = _THIN["mpi-abort"]
_THIN["ib-collective-mismatch"] = (  # session 21: threads settle it as the ranks' calls and as the nodes' NCCL
    "desync: the ranks are in different collectives or pass different sizes (TORCH_DISTRIBUTED_DEBUG=DETAIL names "
    "each rank's call)",
    "environment: the nodes run NCCL differently (another NCCL version, or NCCL_* settings such as NCCL_BUFFSIZE, "
    "NCCL_PROTO or NCCL_IB_* that differ between nodes: NCCL_DEBUG=INFO's header on each node)",
)
# session 28 (heldout-fresh34): forms whose threads settled two ways, each a candidate, the likelier first
_THIN["srun-task-launch-unspecified"] = (  # session 29: SLURM_ERROR's text, no more
    "environment: a plugin the step asked for (--mpi=pmix vs pmi2, a pyxis/enroot container) or its prolog (the "
    "node's slurmd log for the step; the same step with another --mpi decides)",
    "node: that node's slurmd or slurmstepd (the same step on other nodes starts; scontrol show node)",
)
_THIN["ucx-segv"] = (  # session 29: UCX's handler's segfault (hypre-1131: hypre's code; ucx-7845: the MPI's build)
    "code: the program's or a library's bug (the backtrace's first frame of the program; a debug build)",
    "environment: a GPU buffer given to an MPI or UCX built without GPU support ('invalid permissions for mapped "
    "object': ompi_info | grep -i cuda, ucx_info -d | grep cuda)",
)
_THIN["go-dial-refused"] = (
    "network: the node cannot reach the server (no way out of the compute nodes, a firewall, a proxy not set): "
    "curl the address from the node",
    "environment: the server was not up yet where it should be (a sidecar or init order in a pod, a service not "
    "started): its state at that moment (kubectl describe pod, the service's log)",
)
_THIN["gloo-no-address"] = (
    "environment: GLOO_SOCKET_IFNAME names an interface this node lacks (or the host name resolves to no own "
    "address): ip -br addr, getent hosts $(hostname)",
    "code: the project's launch code sets the interface itself (a hard-coded ib0 or eth0): its setup of "
    "GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME",
)
_THIN["cuda-alloc-beyond-gpu"] = (
    "code: the size is wrong (a shape computed wrong, a length off by orders of magnitude): the frame above the OOM",
    "oom: the size is what the job asked for (an N x N matrix of a large evaluation set): a smaller set or a "
    "chunked computation",
)
_THIN["lammps-unrecognized-style"] = (  # session 21: a style LAMMPS does not know
    "environment: the LAMMPS binary was built without the package or plugin that provides the style (DeePMD, "
    "KIM, a GPU or KOKKOS variant): lmp -h lists what it has",
    "code: the input misspells the style's name, or names one from another LAMMPS release",
)
_HUB = (  # session 26: the hub unreachable, no cached copy: the node's access or the network
    "environment: the compute nodes have no internet (most clusters): download on the login node into a shared "
    "HF_HOME and set HF_HUB_OFFLINE=1, or give the job a proxy (HTTPS_PROXY)",
    "network: the site's network or the hub itself was down at that moment (it worked before: retry; curl -I "
    "https://huggingface.co from the node)",
    "code: a model or file name the hub does not have (a typo, a local path that is not there)",
)
_THIN["hf-hub-unreachable"] = _THIN["hf-hub-unreachable-cache"] = _HUB
_THIN["hip-memory-access-fault"] = (  # session 26: ROCm's GPU page fault
    "code: a kernel of the job (or an extension) read or wrote out of bounds (AMD_SERIALIZE_KERNEL=3 "
    "HIP_LAUNCH_BLOCKING=1 names it)",
    "environment: the ROCm stack on that node (its release's limit on processes sharing one GPU, a driver and "
    "runtime that do not match): fewer ranks per GPU, another ROCm",
    "node: the GPU itself (the node's dmesg: amdgpu errors, RAS)",
)
_THIN["python-thread-limit"] = (  # session 26: "can't start new thread"
    "environment: the process's task limit (ulimit -u, the container's or cgroup's pids.max) where it ran",
    "oom: no memory left for the thread's stack (the node's memory, the job's limit)",
    "code: threads the code starts and never ends (a writer, a pool or a DataLoader made per step or epoch)",
)
_THIN["lmod-program-missing"] = (  # round 9: the module system missing, nothing after it that it explains
    "environment: the node lacks the module system the job's `module load` lines need (its image, the module "
    "tree's mount): a later failure of a missing library or command follows from it",
    "a profile line that failed harmlessly: the job's failure is elsewhere (the ranks' logs, sacct)",
)
_THIN["modulecmd-missing"] = _THIN["lmod-program-missing"]
_THIN["mpich-ofi-poll"] = (
    "network: the fabric failed a transfer (clusterdoc check --perf on the nodes; the fabric's port counters)",
    "environment: the provider's settings or the NIC it picked (a Slingshot resource: PTLTE_NOT_FOUND, "
    "VNI_NOT_FOUND and the site's FI_CXI_* settings; FI_PROVIDER, FI_TCP_IFACE)",
    "an effect: the process was being stopped (a SIGTERM, a cancel) and its transfers were cancelled (the error's "
    "CANCELED): what stopped it decides (sacct -j JOB -o State,Reason; the other ranks' first error)",
)
_THIN["torch-watchdog-stuck"] = _THIN["torch-heartbeat-stuck"]  # the same monitor's two lines
_THIN["torch-global-timeout"] = _THIN["torch-dump-signal"]
# round 8's thin lines: a GPU index the process cannot see, a kill by the owner or an admin (LSF, Flux)
_THIN["cuda-invalid-ordinal"] = (
    "environment: more processes per node than GPUs they see (--nproc_per_node, the job's --gpus or --gres, "
    "CUDA_VISIBLE_DEVICES: nvidia-smi -L inside the job)",
    "code: the script pins the GLOBAL rank's GPU (torch.cuda.set_device(rank)) where it should use LOCAL_RANK: "
    "it fails on the second node only",
)
_KILLED = (
    "another failure first: the job's output before the kill (an error, a hang its owner gave up on)",
    "scheduler: a kill on purpose (its owner, an admin: bhist -l JOB, flux job eventlog JOB)",
)
_THIN.update({"lsf-owner-kill": _KILLED, "lsf-admin-kill": _KILLED, "flux-cancel": _KILLED})
_THIN["slurm-cancelled"] = (  # session 18: one candidate is no "unknown" (trixie-45)
    "scheduler: scancel by its owner or an admin, or Slurm itself (a time limit, a preemption) without saying so "
    "(sacct -j JOB -o State,Reason)",
    "another failure first: the job's output before the cancel (an error, a hang its owner gave up on)",
)
_THIN["slurm-stepd-not-ending"] = (
    "node: processes stuck in the kernel on that node (a hung file system, a GPU): sinfo -R, its kernel log",
    "the step's end itself (a cancel, a time limit) is what to explain first: sacct -j JOB -o State,Reason",
)
_NO_GPU = (
    "environment: the job asked for no GPU (--gres=gpu:N, --gpus) or CUDA_VISIBLE_DEVICES hides them (nvidia-smi -L "
    "and echo $CUDA_VISIBLE_DEVICES inside the job)",
    "node: the node's GPUs are gone (its XIDs, nvidia-smi there: clusterdoc check on it)",
)
_THIN.update({"no-gpu-visible": _NO_GPU, "nccl-no-gpu": _NO_GPU})
_THIN["sge-qmaster-limit"] = (
    "scheduler: the run-time limit h_rt (qacct -j JOB: ru_wallclock reached it)",
    "oom: the memory limit h_vmem (qacct -j JOB: maxvmem reached it)",
)
_THIN["pdsh-ssh-255"] = (
    "environment: ssh from the launching node cannot log in there (keys, known_hosts, the address: ssh HOST hostname)",
    "node or network: the connection was lost mid-run (that node died or its link dropped: its kernel log)",
)
_THIN["pip-no-distribution"] = (
    "environment: the job lacks the package pip could not install (an ImportError after it says so)",
    "harmless: the job went on with what was installed; a failure later in the log is the cause",
)
_THIN["k8s-unschedulable"] = (
    "scheduler: no node can take the pod (its GPU, memory or CPU request; kubectl describe nodes)",
    "a passing event: the pod was placed later (a Scheduled event after it), a failure later is the cause",
)
# round 9 (hang): a wait that ended, alone: who was behind and why is elsewhere
_THIN["gloo-wait-timeout"] = (
    "hang: the peer was behind or stuck (uneven data, evaluation or I/O on that rank): gloo's monitoredBarrier line "
    "or that rank's log names it",
    "node: the peer's process or node died (its own log's last lines, the node's kernel log)",
    "network: the link between the two stalled (clusterdoc check --perf between their nodes)",
)
_THIN["ray-unschedulable"] = (
    "scheduler: no node has the resources the task or actor asks for free (ray status: GPUs claimed by other actors)",
    "the autoscaler: nodes still being added, or a runtime_env still installing (Ray's warning says so first)",
)

_THIN["mpi-invalid-arg"] = (  # Open MPI's invalid-argument classes: the program's call, or two MPIs in one program
    "code: the program passed MPI a handle or value it cannot take (a communicator freed or never created, a count "
    "over 2^31, a rank outside it): the call on the line before and its arguments",
    "environment: the program was compiled against one MPI (its mpi.h, mpif.h) and runs with another's library or "
    "mpirun (ldd on the binary and which mpirun: the same installation; EPEL's Open MPI and MPICH builds mixed)",
)


# round 9 (sites): Slurm's start-up lines that name a node but not why it failed; a PBS job deleted by a user
_SLURMD_UNREACHED = (
    "environment: the node's munge key differs from the controller's (munge -n | ssh NODE unmunge), or a firewall "
    "closes slurmd's port (6818) to the host that runs srun",
    "node: that node's slurmd hung or the node went down (scontrol show node NODE: its State and Reason)",
    "scheduler: the controller and the nodes overloaded at once (many steps launched together): it passes on a retry",
)
_THIN.update({"slurm-node-socket-timeout": _SLURMD_UNREACHED, "slurm-slurmd-socket-timeout": _SLURMD_UNREACHED})
_THIN["slurm-invalid-credential"] = (
    "environment: that node's munge key differs from the controller's (munge -n | ssh NODE unmunge; restart munged "
    "after copying the key)",
    "node: that node's clock is off (a credential from the future or the past: its NTP)",
)
_THIN["pbs-deleted"] = _KILLED
_THIN["slurm-controller-query"] = (
    "scheduler: the controller was down and the job was lost with it (sacct -j JOB -o State,Reason once it answers; "
    "the site's status page)",
    "a passing error of a query (a workflow manager's polling): the controller came back and the job's own failure, "
    "if any, is elsewhere in the log",
)
_THIN["lsf-force-kill"] = _KILLED
_THIN["ray-owner-node-crashed"] = (
    "environment: Ray's own processes on that node failed (the dashboard agent, which the raylet fate-shares with; "
    "grpcio or Ray's version: dashboard_agent.log, raylet.out)",
    "oom: the OOM killer took the raylet or the driver (that node's dmesg; Ray's memory monitor lines before it)",
    "node: the node itself crashed or rebooted (its console and kernel log)",
)
_JAX_COORDINATION = (  # a task behind or never there, as the coordination service's own text lists the causes
    "hang: a task was behind (loading, compiling, a checkpoint's write) or never started or crashed before "
    "connecting: the timed-out tasks' own logs (num_processes against what the launcher started; a task that died "
    "first is the cause)",
    "network: the coordinator's address or port cannot be reached from the other hosts (a firewall: JAX 0.8.1 moved "
    "its default port from 8476 to 8482; a coordinator address that is localhost on a multi-host job)",
    "scheduler: some tasks not yet scheduled or still setting up (a larger initialization_timeout if that is expected)",
)
_THIN.update({"jax-barrier-timeout": _JAX_COORDINATION, "jax-register-deadline": _JAX_COORDINATION})
_THIN["pbs-deleted-by-root"] = (
    "scheduler: the site enforced a limit (walltime, cores or memory on a shared node) or an admin ended it: the "
    "mail's or tracejob's lines after it, the admins",
    "node: the job's node failed and the server cleared its jobs (a 'node failure' or MOM line after it)",
)
_THIN["slurm-step-node-config"] = (
    "code: the job script builds the step's node list wrong (two names in one -w, a name outside the allocation): "
    "echo the srun line it runs",
    "scheduler: the site refuses a step that names its nodes (--nodelist inside the allocation): drop it, or ask "
    "for the step by --nodes/--ntasks",
)

_THIN["mpich-invalid-arg"] = _THIN["mpi-invalid-arg"]
_THIN["netcdf-error"] = (  # round 10: NetCDF's error string alone
    "environment: the file or the library: missing or unreadable input (its permissions), a file system or module "
    "changed under the model (a site's maintenance), a NetCDF4/HDF5 file read by a build without it: ls -l and "
    "ncdump -h the file it names; the modules loaded against those it was built with",
    "code: the model's I/O calls (a dimension or variable name its input lacks, a parallel read or close it does "
    "wrong): the file's header against what the code asks for",
)
# round 10: Hydra's "unrecognized argument" for an option that is not Open MPI's alone (pmi_args, a typo)
_THIN["hydra-unrecognized-arg"] = (
    "environment: two MPI installs mixed: the option is another MPI's (its launcher's manual), or pmi_args from a "
    "program built with another MPI than this mpiexec's (which mpiexec; ldd PROGRAM | grep mpi)",
    "code: the command line the script or tool builds (a typo, an option of another launcher): the mpiexec line as run",
)
_THIN["mkl-threading-layer"] = (
    "environment: the process stopped there: numpy/MKL and torch's OpenMP of different builds (MKL_THREADING_LAYER="
    "GNU, or one numpy build; the line is the log's last)",
    "the line is a warning of a run that went on (MKL_SERVICE_FORCE_INTEL set): the failure is further on",
)
_THIN["python-config-validation"] = (
    "environment: the library is another version than the config was written for (a newer release validates a "
    "value the older took, or drops a key: pip show it against the version the project pins)",
    "code: the config's value itself is wrong (the field the message names, its type)",
)
_THIN["python-api-mismatch"] = (
    "environment: the library is another version than the code was written for (pip show it; the version the "
    "project pins: a newer trl with an older vllm, or the reverse)",
    "code: the call itself is wrong (a typo, an argument of another function)",
)

# issue 41 (whycat2): the weak rows of NCCL's catalogue from its source, by the component that prints them
_THIN.update(catalogue_nccl.THIN)


# issue 41: the torch catalogue's weak rows (why/sigtable/catalogue_torch.py, from torch's source), by the code path
# that prints them (the row's name less its number): what the path leaves open, and what decides
_TORCH_PATHS = {
    "torchsrc-rdzv-connect": (
        "network: the rendezvous endpoint is unreachable from this node (nc -zv on --rdzv-endpoint; a firewall, "
        "another interface, a name that does not resolve)",
        "the endpoint's node (the one hosting the store) is not up, or its job ended first and took the store with "
        "it (its own log; another job on the same --rdzv-endpoint)",
    ),
    "torchsrc-store-wait-timeout": (
        "hang or scheduler: a rank started late or not at all (its node's log, squeue; the barrier's missing ranks)",
        "a rank failed before the wait (its own first error) or could not reach the store (network: nc -zv "
        "MASTER_ADDR MASTER_PORT)",
    ),
    "torchsrc-dataloader-exited": (
        "oom: the host's OOM killer took the worker (the node's dmesg; sacct -o MaxRSS; fewer num_workers)",
        "environment: a container's small /dev/shm (df -h /dev/shm; docker --shm-size or --ipc=host)",
        "code: the worker crashed in the dataset's code or a library it calls (num_workers=0 shows its error)",
    ),
    "torchsrc-dataloader-timeout": (
        "hang: a worker is stuck in the dataset's code (a lock, a remote read): py-spy dump on the worker",
        "environment: the data's file system or network store is slow or hung (its mount, its server)",
    ),
    "torchsrc-worker-d-state": (
        "node: a device of the node stopped answering (the GPU: an Xid in dmesg; the NIC)",
        "environment: a file system hung (NFS, Lustre: the node's dmesg, the mount's server)",
    ),
}
_THIN.update({s.name: _TORCH_PATHS[s.name.rsplit("-", 1)[0]] for s in catalogue_torch.SIGNATURES if s.weak})
_THIN.update(catalogue_cuda.THIN_OF)  # session 29: the CUDA catalogue's weak rows, by class


# --- whycat3 (issue 41): the weak rows of the catalogue read from the MPI launchers' and fabrics' source
# (why/sigtable/catalogue_mpi.py): candidates per class (the component and error path), not per message ---
_CATALOGUE_MPI = {
    "ompi-verbs-device": (
        "network: that node's InfiniBand adapter or its driver failed (ibv_devinfo, dmesg for mlx5 on it): where the "
        "job needed it, the cause",
        "a warning of a job that went on over another transport: the failure is further on (the ranks' own errors)",
    ),
    "mpich-arg": (
        "code: the call's argument is wrong (the rank, count or root it computed: the error stack's call)",
        "environment or the launch: fewer processes than the program expects, or another MPI's mpirun starting "
        "each process alone (a rank past the size: mpirun -np against the program's needs; which mpirun, ldd on "
        "the program)",
    ),
    "ompi-ofi": (
        "network: the fabric or its libfabric provider on that node (fi_info; FI_LOG_LEVEL=warn for its reason)",
        "environment: a provider that does not fit the build (Open MPI and libfabric versions; --mca mtl ^ofi to "
        "test); the job may have gone on and failed for another reason (the lines after it)",
    ),
    "ompi-shm-syscall": (
        "environment: /dev/shm or the session directory full, too small or not writable (df -h /dev/shm; TMPDIR; "
        "a container's --shm-size)",
        "nothing: the job went on slower and failed for another reason (the lines after it)",
    ),
    "ompi-daemon-lost": (
        "node: the node of that daemon died, rebooted or ran out of memory (its kernel log, sinfo -R)",
        "network: the daemons lost their connection (the interfaces between the nodes: --mca oob_tcp_if_include)",
        "environment: the daemon could not start there (orted not on that node's PATH: mpirun --prefix)",
    ),
    # session 21: a thread settled it as the allocation (heldout-fresh8, trilinos-3798), the common one is -np on a
    # machine with fewer cores: the line alone does not say which
    "ompi-too-many-procs": (
        "scheduler: the allocation has fewer slots than the job means to run (sbatch --ntasks / --nodes, "
        "scontrol show job: NumCPUs; a PBS nodefile's lines)",
        "code: the launch command asks for more than it should (-np, --map-by ...:PE=N against the slots of the "
        "hostfile or the machine's cores; --oversubscribe where meant)",
    ),
    "ompi-init-failed": (
        "environment: a transport or PMI that does not fit this node (the help text above it says which part)",
        "network: no fabric device usable at startup (ompi_info, ibv_devinfo on that node)",
    ),
}


def _catalogue_mpi_thin() -> dict[str, tuple[str, ...]]:
    return {name: _CATALOGUE_MPI[cls] for name, cls, *_ in catalogue_mpi.ROWS if cls in _CATALOGUE_MPI}


_THIN.update(_catalogue_mpi_thin())

# --- whycat4 (issue 41): the weak rows of the HPC runtimes' catalogue (why/sigtable/catalogue_hpcrt.py: PETSc's
# error classes that do not decide the cause), one list per class ---
_CATALOGUE_HPCRT = {
    "petsc-unsure": (
        "code: the program or a library it calls (the specific message after the class, the '#1' frame below it; "
        "a SEGV signal: a memory bug, valgrind or -malloc_debug)",
        "scheduler or oom: a signal from outside (SIGTERM at a time limit or a preemption, SIGKILL of the OOM "
        "killer: sacct -j JOB -o State,MaxRSS; the node's dmesg)",
        "environment: an external package or system call that failed on that node (the library it names, its "
        "build; --with-64-bit-indices for an integer overflow)",
    ),
}
_THIN.update({name: _CATALOGUE_HPCRT[cls] for name, cls, *_ in catalogue_hpcrt.ROWS if cls in _CATALOGUE_HPCRT})
# issue 41 (appcat): the applications' catalogue's weak rows (TDEP's I/O and MPI codes, ESMF's unsure classes, HDF5's
# error stack, NWChem's uncategorised errors): its THIN, one list per class
_THIN.update({name: catalogue_apps.THIN[cls] for name, cls, *_ in catalogue_apps.ROWS if cls in catalogue_apps.THIN})


def for_signature(sig) -> list[str]:
    from clusterdoc.why import signatures

    if sig.name in _THIN:
        return list(_THIN[sig.name])
    if sig.name == "python-library-error":
        return [
            "environment: the library's install, its device or a service it needs (another version than the code's, "
            "a driver, a daemon, a file it reads): its message's words",
            "code: the code's call into the library (its arguments, an API of another version)",
            "network or oom: a connection or memory the library ran out of (its message; the node's logs)",
        ]
    if sig.name == "python-exception-unsure":
        return [
            "code: the script's own error (the exception's line and the code around it)",
            "network or environment: a connection, a download or a device the exception reached (its message)",
            "node: a CUDA or driver error of the GPU (the node's XIDs: clusterdoc check on it)",
        ]
    if sig.name in signatures.SIGKILL_SIGNS:
        return [
            "oom: the host's OOM killer (the node's dmesg: 'Out of memory: Killed process'; sacct -j JOB -o MaxRSS)",
            "scheduler: Slurm or the cluster killed it (a time limit, a preemption, scancel, a pod eviction: sacct -j "
            "JOB -o State,Reason)",
            "a user or a watchdog script killed it (kill -9), or the node went down (its kernel log)",
        ]
    if sig.name == "command-not-found":
        return [
            "environment: the launcher or the script's command is not installed on that node (its PATH, the module, "
            "the container)",
            "a profile or module line that failed harmlessly: the job's failure is elsewhere (the ranks' logs, sacct)",
        ]
    if sig.name.startswith("shell-path-missing"):
        return [
            "environment: the job's interpreter or launcher is not at that path on the node that printed it (another "
            "machine's virtualenv or conda path, a file system not mounted there)",
            "a profile or module line's file that is missing harmlessly: the job's failure is elsewhere (the ranks' "
            "logs, sacct)",
        ]
    if sig.name == "missing-on-a-node":
        return [
            "node: that node lacks what the others have (its mount of the shared software, its image): clusterdoc "
            "check on it; exclude it (--exclude, submit --retries)",
            "environment: the command is installed on no node (its PATH, the module, the container)",
        ]
    if sig.name == "watchdog-illegal-access":
        return [
            "code: a kernel of the job (or an extension) wrote out of bounds before the collective "
            "(CUDA_LAUNCH_BLOCKING=1 names it)",
            "environment: NCCL's transport on this machine (P2P or shared memory through the IOMMU/ACS, the driver): "
            "NCCL_P2P_DISABLE=1 or NCCL_SHM_DISABLE=1 decides",
            "node: the GPU (XID 13/31/48 in the node's kernel log: clusterdoc check)",
        ]
    if sig.name == "python-no-script":
        return [
            "code: the launch command names a script that is not there (a typo, a module given as a file name: "
            "python -m / torchrun -m)",
            "environment: the job ran in another directory or tree than the script's (the batch script's working "
            "directory, Slurm's spool copy of it, a checkout where the script is gone)",
        ]
    if sig.name == "segfault-at-exit":
        return [
            "environment: a library crashed in its cleanup at exit (MPI, NCCL, a driver: its version against what "
            "it was built for); the job's work may be complete",
            "code: the job's own code left the library in a bad state (a handle freed twice, a thread still running)",
        ]
    if sig.name == "segfault-unnamed":
        return [
            "code: the program's own bug (a debug build with -g names the routine; the input it was reading)",
            "environment: the build or the platform (a compiler, an MPI or a math library it was linked against, "
            "a runtime that differs from the one it was built for)",
            "oom: the memory ran out under it (a Fortran program's big automatic arrays on a small stack: ulimit -s; "
            "the node's memory: sacct MaxRSS, dmesg; quick-45's 8 GB for its basis)",
        ]
    if sig.name == "nextflow-exit-140":
        return [
            "scheduler: the task's time limit (the scheduler's record: sacct -j JOB -o State,Elapsed,Timelimit)",
            "oom: its memory limit, where the site signals that with 140 too (sacct -o MaxRSS,ReqMem)",
            "a disk quota or scratch limit the site enforces the same way (the task's .command.log)",
        ]
    if sig.name == "ssh-unresolved-host":
        return [
            "environment: the hostfile or the launcher names a host DNS does not know (a typo, a short name, a node "
            "or pod not up yet)",
            "network: the node's DNS is unreachable or broken (getent hosts NAME on it)",
        ]
    if sig.name == "ray-gcs-reconnect-failed":
        return [
            "network: the link from the node to the head (a firewall, the ports, a long or lossy path: its RTT)",
            "node: the head's GCS server died or restarted (gcs_server.out on the head)",
        ]
    if sig.name == "unspecified-launch-failure":
        return [
            "code: a kernel fault of the code or an extension (CUDA_LAUNCH_BLOCKING=1 shows where)",
            "node: the GPU failed (an XID 13/31/43/79 in the node's kernel log: clusterdoc check on it)",
        ]
    return [f"{sig.category}: {sig.meaning}"]


def for_peer() -> list[str]:
    return [
        "another rank (or its node) died first: its own log or the node's (dmesg, XIDs) would show it",
        "network: the link between the nodes dropped (clusterdoc check --perf; NCCL_SOCKET_IFNAME/NCCL_IB_HCA)",
    ]
