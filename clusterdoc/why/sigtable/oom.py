"""The `oom` failure signatures: memory that ran out: the GPU's, the host's, a job's or step's limit, as every
runtime, allocator and scheduler prints it.

One entry each (why/signature.py says what an entry holds). Within this table the first entry that matches a line
wins; why/signatures.py says the order of the tables.
"""

from __future__ import annotations

import re

from clusterdoc.why.signature import NODE, S, Signature

# round 8 (memory): an allocator's or a code's own words for memory that ran out. (phrase, a word on the same line
# that says it failed (None: the phrase says it), a real line, its source). "out of memory" alone is also a hint
# ("to avoid running out of memory"): it counts on a line that says it failed, aborted or was killed, and not on
# one that says it may happen (_MEMORY_HINT)
_MEMORY_FAILED = ("error", "fatal", "abort", "fail", "kill", "exception")
_MEMORY_HINT = ("run out of memory", "running out of memory", "runs out of memory", "avoid", "prevent",
                "may cause", "can cause", "could cause", "might", "if you", "in case", "consider", "try ", "reduce",
                "fall back", "falling back", "retrying",  # advice, or a warning the job survived
                "pmpi_", "mpir_", "mpid", "mpi_",  # MPICH's error stack: its "Out of memory" alone is no verdict
                "ibv_", "reg_mr", "register", "memlock", "locked memory", "openib",  # RDMA's ENOMEM: ulimit -l
                "endpoint open failed", "ofi_",  # session 29: libfabric's endpoint (PSM3 with no NIC: shmem4py-28)
                "unable to mmap", "shm", "shared memory",
                "nodes are available", "failedscheduling")  # a scheduler's placement: no allocation failed  # fmt: skip
_C_IDIOM = "https://github.com/bminor/glibc (malloc(3) returns NULL, errno ENOMEM: a code's own check prints it)"
_MEMORY_PHRASES: list[tuple[str, str | None, str, str]] = [
    (
        "cannot allocate memory",
        None,
        "bash: fork: Cannot allocate memory",
        "https://github.com/bminor/glibc (ENOMEM's strerror; fork(2), mmap(2))",
    ),
    ("unable to allocate memory", None, "Unable to allocate memory", _C_IDIOM),
    ("could not allocate memory", None, "Could not allocate memory", _C_IDIOM),
    ("failed to allocate memory", None, "Error: failed to allocate memory for file handles.", _C_IDIOM),
    ("memory allocation failed", None, "Fatal error: memory allocation failed", _C_IDIOM),
    ("memory allocation failure", None, "memory allocation failure", _C_IDIOM),
    ("malloc failed", None, "malloc failed", _C_IDIOM),
] + [
    (phrase, mark, learned, src)
    for phrase, learned, src in (
        (
            "out of memory",
            "fatal error: runtime: out of memory",
            'https://github.com/golang/go (src/runtime: throw("runtime: out of memory"))',
        ),
        (
            "not enough memory",
            "Not enough memory. Failed to realloc 8589934592 bytes for nbat->out[0].f",
            "https://github.com/gromacs/gromacs (src/gromacs/utility/smalloc.cpp: 'Not enough memory. Failed to ...')",
        ),
        ("insufficient memory", "Fatal error: insufficient memory to allocate the work arrays", _C_IDIOM),
    )
    for mark in _MEMORY_FAILED
]

SIGNATURES: list[Signature] = [
    S("slurm-oom-kill", "oom", ("oom-kill event",),
      "the job step ran out of host memory (the cgroup's OOM killer killed a rank): its own memory limit",
      "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=37205392.0. Some of your processes may have been "
      "killed by the cgroup out-of-memory handler.", "https://github.com/brain-score/vision/pull/950",
      "ask for more memory (--mem / --mem-per-gpu) or load less per rank (DataLoader workers, dataset in RAM)",
      node=re.compile(r"slurmstepd-" + NODE + r": ")),
    # session 21: a Cray compute node's memory cgroup at its limit ("under_oom detected for N seconds ... re-enabling
    # OOM killer", before PALS' "rank N died from signal 9"): the job's processes filled the node's memory
    S("cray-under-oom", "oom", ("OOM killer", "under_oom detected"),
      "the node's memory was exhausted (its memory cgroup stayed under OOM, and the OOM killer was let loose on the "
      "job's processes)",
      "under_oom detected for 5 seconds. Cache usage 21749760 less than minimum 429496725, re-enabling OOM killer",
      "https://github.com/NOAA-EMC/global-workflow/issues/2266",
      "less memory per node (fewer ranks per node, more nodes, a smaller problem per rank), or a node with more"),
    # the kernel's memory-cgroup report of an OOM (mem_cgroup_print_oom_meminfo: "memory: usage N, limit N, failcnt
    # N"): a container or job cgroup at its limit
    S("memcg-oom-report", "oom", ("memory: usage ", "failcnt"),
      "the kernel's memory cgroup of the job or container reached its limit (its OOM report)",
      "[Thu Aug 16 09:05:19 2018] memory: usage 184320000kB, limit 184320000kB, failcnt 2316326",
      "https://github.com/torvalds/linux (mm/memcontrol.c: mem_cgroup_print_oom_meminfo)",
      "more memory for the container or job (its limit), or less in it"),
    S("slurm-oom-kill2", "oom", ("oom_kill event",),
      "the job step ran out of host memory (the cgroup's OOM killer killed a rank): its own memory limit",
      "slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks have been OOM Killed.",
      "https://github.com/nextflow-io/nextflow/issues/5932",
      "ask for more memory (--mem / --mem-per-gpu) or load less per rank (DataLoader workers, dataset in RAM)"),
    S("ray-oom", "oom", ("Memory on the node (", "was running was"),
      "Ray's memory monitor killed a task or actor: the node's host memory was nearly full",
      "Memory on the node (IP: 22.8.197.77, ID: 012d92e8eb02243a135cc0370650c943be7d9c0fa7514a14fa2c5aef) where the "
      "task (actor ID: 4bccdadc1a067a5710ecd4bf02000000, name=TaskRunner.__init__, pid=358, memory used=1519.84GB) "
      "was running was 1520.01GB", "https://github.com/verl-project/verl/issues/1684",
      "load less per node (fewer actors or workers per node, offload, a smaller model copy per process), or "
      "nodes with more memory; RAY_memory_usage_threshold only moves the line",
      node=re.compile(r"(?:IP: |-ip )(\d{1,3}(?:\.\d{1,3}){3})")),
    S("ray-oom-killed", "oom", ("Task was killed due to the node running low on memory",),
      "Ray's memory monitor killed a task or actor: the node's host memory was nearly full",
      "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
      "https://github.com/OpenRLHF/OpenRLHF/issues/911",
      "load less per node (fewer actors or workers per node, offload), or nodes with more memory"),
    S("ray-oom-doc", "oom", ("ray-oom-prevention",),
      "Ray's memory monitor killed a task or actor (it points at its out-of-memory page): the node's host memory",
      "(ActorModelRayActor pid=8249) Refer to the documentation on how to address the out of memory issue: "
      "https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. Consider provisioning more memory "
      "on this node or reducing task parallelism", "https://github.com/OpenRLHF/OpenRLHF/issues/911",
      "load less per node (fewer actors or workers per node, offload), or nodes with more memory"),
    # Ray's death notice of a worker that exited without a word (SYSTEM_ERROR): its own text lists the causes, the
    # OOM killer first; a candidate, never a verdict (openrlhf-621's beside an mlx5 line stayed unsettled)
    S("ray-worker-died", "oom", ("Worker unexpectedly exits with a connection error code",),
      "a Ray worker died without a word (SYSTEM_ERROR): the OOM killer most often, as Ray's own text says first; or "
      "a crash (SIGSEGV) or a ray stop",
      "Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. "
      "End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to "
      "high memory usage.", "https://github.com/verl-project/verl/issues/3349 (and verl#217)",
      "the node's dmesg for the OOM killer and Ray's memory monitor (ray logs raylet.out -ip ADDR); the worker's own "
      "log (python-core-worker-*.log) for a crash", weak=True),
    # Ray's raylet killed workers for memory pressure: its summary line (the docs' link that ray-oom names may
    # be cut from a paste); the node's address is its IP field (wmpo-3, flower-2157, easyr1-185)
    S("ray-memory-pressure", "oom", ("killed due to memory pressure (OOM)",),
      "Ray's memory monitor killed workers: the node's host memory ran low (over RAY_memory_usage_threshold)",
      "(raylet) node_manager.cc:3084: 4 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers "
      "crashed due to other reasons at node (ID: b287aac2de42bef55d13e884c4bdb6cffb2d81d1dc96aa08c4633a43, IP: "
      "172.28.0.12) over the last time period.", "https://github.com/flwrlabs/flower/issues/2157 (and WM-PO/WMPO#3)",
      "load less per node (fewer workers or actors, more CPUs per task), or nodes with more memory (ray logs "
      "raylet.out -ip ADDR names the processes)",
      node=re.compile(r"IP: (\d{1,3}(?:\.\d{1,3}){3})")),
    # runc: a container's init killed by the cgroup's OOM killer before it started (Kubernetes' CreateContainerError)
    S("runc-init-oom", "oom", ("container init was OOM-killed",),
      "the container was OOM-killed as it started: its memory limit is below what it needs",
      "Error: container create failed: ... level=error msg=\"runc create failed: unable to start container process: "
      "container init was OOM-killed (memory limit too low?)\"",
      "https://github.com/kubeflow/trainer/issues/1661 (runc: libcontainer/process_linux.go)",
      "raise the container's memory limit (resources.limits.memory)"),
    S("lsf-swap-limit", "oom", ("TERM_SWAP",),
      "LSF killed the job for going over its swap (virtual memory) limit",
      "TERM_SWAP: job killed after reaching LSF swap usage limit.",
      "https://github.com/IBMSpectrumComputing/lsf-python-api (LSF's termination reasons)",
      "ask for more memory (bsub -v / -M), or load less at once"),
    # kubectl describe pod: a container's last state ended by SIGKILL (137) with a reason other than OOMKilled
    # (k8s-122256's "Reason: Error"): a failed liveness probe, the node's OOM killer, a kill; a SIGKILL candidate
    S("k8s-exit-137", "oom", ("Exit Code:", "137"),
      "a container was killed by SIGKILL (exit code 137) without Kubernetes' OOMKilled reason",
      "      Exit Code: 137", "https://github.com/kubernetes/kubernetes/issues/122256",
      "kubectl describe pod (its Events: a failed liveness probe, an eviction), the node's dmesg for the OOM killer",
      weak=True, unless=("OOMKilled",)),
    # the kernel's OOM killer in a pasted dmesg ("Out of memory: Killed process N (python)", the cgroup's "Memory
    # cgroup out of memory: Killed process N"), Kubernetes' OOMKilled, torch's CPU allocator: host memory
    S("kernel-oom-killer", "oom", ("out of memory: killed process",),
      "the kernel's OOM killer killed a process: the node's (or the cgroup's) host memory ran out",
      "Out of memory: Killed process 31337 (python) total-vm:98765432kB, anon-rss:87654321kB",
      "https://github.com/torvalds/linux (mm/oom_kill.c)",
      "less host memory per rank (DataLoader workers, the dataset in RAM, loading the model once per node), or "
      "more --mem", lower=True),
    S("k8s-oomkilled", "oom", ("OOMKilled",),
      "Kubernetes killed the container for going over its memory limit (host memory)",
      "Last State: Terminated  Reason: OOMKilled  Exit Code: 137", "https://github.com/kubernetes/kubernetes",
      "raise the pod's memory limit (resources.limits.memory), or load less per rank"),
    S("cpu-allocator", "oom", ("DefaultCPUAllocator: can't allocate memory",),
      "torch could not allocate host memory (the CPU allocator): the node's or the job's memory ran out",
      "RuntimeError: [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: you "
      "tried to allocate 2359296 bytes. Error code 12 (Cannot allocate memory)",
      "https://github.com/Lightning-AI/pytorch-lightning (utilities/memory.py: is_out_of_cpu_memory)",
      "less host memory per rank (load the model once per node: low_cpu_mem_usage, device_map), or more --mem"),
    S("enomem", "oom", ("[Errno 12] Cannot allocate memory",),
      "the host ran out of memory (a process could not allocate or fork: ENOMEM)",
      "OSError: [Errno 12] Cannot allocate memory", "https://github.com/spine-generic/spine-generic/issues/108",
      "more memory per task (--mem / --mem-per-cpu), or fewer processes per node"),
    S("srun-task-oom", "oom", ("srun: error: ", ": Out Of Memory"),
      "Slurm killed the task for exceeding its host memory (cgroup)",
      "srun: error: node107: task 0: Out Of Memory", "https://github.com/brain-score/vision/pull/950",
      "ask for more memory (--mem / --mem-per-gpu) or load less per rank",
      node=re.compile(r"srun: error: " + NODE + r": task")),
    S("slurm-mem-limit", "oom", ("exceeded memory limit",),
      "Slurm killed the job for going over its memory limit (host memory)",
      "slurmstepd-dback-c11-n01: error: Job 848444 exceeded memory limit (33715636 > 32757760), being killed",
      "https://github.com/bcbio/bcbio-nextgen/issues/2393",
      "ask for more memory (--mem / --mem-per-gpu) or load less per rank",
      node=re.compile(r"slurmstepd-" + NODE + r": "), lower=True),
    # the other batch systems' own end lines: PBS's MOM ("=>> PBS: job killed: mem|vmem|walltime N exceeded limit
    # M") and LSF's exit reasons (TERM_MEMLIMIT, TERM_RUNLIMIT, in the job's report)
    S("pbs-mem-limit", "oom", ("PBS: job killed: ", "mem ", "exceeded limit"),
      "PBS killed the job for going over its memory limit (host memory)",
      "=>> PBS: job killed: mem 2097152kb exceeded limit 1048576kb", "https://github.com/openpbs/openpbs (MOM's "
      "limit enforcement: 'job killed: mem ... exceeded limit')",
      "ask for more memory (#PBS -l mem= / select=...:mem=), or load less per process"),
    S("lsf-mem-limit", "oom", ("TERM_MEMLIMIT",),
      "LSF killed the job for going over its memory limit (host memory)",
      "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.",
      "https://github.com/FredslundMagnus/Myretuen (its LSF job reports)",
      "ask for more memory (bsub -M and -R \"rusage[mem=...]\"), or load less per process"),
    # host memory as the other schedulers and the applications' own allocators print it: Slurm's older cgroup line
    # and its job state, SGE's h_vmem, Moab's MEM limit; LAMMPS' memory.cpp, C++'s bad_alloc, the Fortran runtimes,
    # numpy's array allocation, and the GPU runtimes' own allocation errors (CUDA driver API, cuDNN, XLA/TF)
    S("slurm-cgroup-oom-handler", "oom", ("killed by the cgroup out-of-memory",),
      "Slurm's cgroup killed processes of the job for going over its memory (host memory)",
      "Some of your processes may have been killed by the cgroup out-of-memory handler.",
      "https://github.com/UNINETTSigma2/documentation (jobs/common_job_failures.md: Slurm's output on a memory kill)",
      "ask for more memory (--mem / --mem-per-cpu), or load less per task"),
    S("slurm-state-oom", "oom", ("OUT_OF_MEMORY",),
      "Slurm's accounting says the job (or a step) ended OUT_OF_MEMORY: a memory kill (host memory)",
      "State: OUT_OF_MEMORY (exit code 0)", "https://github.com/gferhpc/supercomputing.tue.nl (seff's report of a "
      "job Slurm's cgroup killed; Slurm's state code OUT_OF_MEMORY)",
      "ask for more memory (--mem / --mem-per-cpu): sacct -j JOB -o JobID,State,MaxRSS,ReqMem shows the peak"),
    S("moab-mem-limit", "oom", ("exceeded MEM usage hard limit",),
      "Moab killed the job for going over its memory (MEM usage hard limit)",
      "job 3132467 exceeded MEM usage hard limit (2528 > 1126)", "https://github.com/cBio/cbio-cluster/issues/251 "
      "(Torque/Moab; its 'soft limit' form is a warning and no cause)",
      "ask for more memory (#PBS -l mem=), or load less per process"),
    S("lammps-alloc", "oom", ("Failed to ", "bytes for array"),
      "a process could not allocate memory (LAMMPS' own allocator: malloc or realloc returned nothing)",
      "ERROR on proc 617: Failed to reallocate 1650272 bytes for array comm:buf_send (src/memory.cpp:105)",
      "https://github.com/lammps/lammps/issues/3526",
      "more memory per rank (fewer ranks per node, --mem-per-cpu), or a smaller problem per rank; the proc named "
      "is the rank that failed"),
    S("cxx-bad-alloc", "oom", ("std::bad_alloc",),
      "a C++ allocation failed (std::bad_alloc: operator new found no memory)",
      "terminate called after throwing an instance of 'std::bad_alloc'",
      "https://github.com/rcthomas/es/issues/13 (under mpirun; cnclabs/smore#39, cdhit#34 on Slurm)",
      "more memory per process (--mem), or less data per rank; a huge size asked for is a bug (the allocation's "
      "size in a debugger)"),
    S("ifort-vm", "oom", ("insufficient virtual memory",),
      "the Fortran runtime could not allocate (Intel Fortran's severe (41): insufficient virtual memory)",
      "forrtl: severe (41): insufficient virtual memory", "https://github.com/NOAA-EMC/UPP/issues/238 (and "
      "NOAA-EMC/GSI#859 behind srun's '175: ' label)",
      "more memory per rank, or fewer ranks per node"),
    S("cuda-driver-oom", "oom", ("CUDA_ERROR_OUT_OF_MEMORY",),
      "the GPU ran out of memory (the CUDA driver API's error: JAX, CuPy, TensorRT, the driver)",
      "failed to allocate 17.79G (19104890880 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
      "https://github.com/philip-huang/PIXOR/issues/31",
      "a smaller batch or model per GPU (XLA_PYTHON_CLIENT_MEM_FRACTION for JAX's preallocation)"),
    S("cudnn-alloc", "oom", ("CUDNN_STATUS_ALLOC_FAILED",),
      "cuDNN could not allocate GPU memory for its workspace (the GPU is full)",
      "cuDNN failure 2: CUDNN_STATUS_ALLOC_FAILED ; GPU=0 ; hostname=PTNUWCL5099642 ; expr=finder(calgo, algoPerf)",
      "https://github.com/microsoft/CNTK/issues/220 (the maintainer: out of GPU memory; ssd.pytorch#33 the same)",
      "a smaller batch per GPU (the memory torch's allocator holds leaves cuDNN none)"),
    S("xla-resource-exhausted", "oom", ("RESOURCE_EXHAUSTED", "allocate"),
      "the device ran out of memory (XLA's and TensorFlow's RESOURCE_EXHAUSTED: an allocation failed)",
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 "
      "bytes.", "https://github.com/patrickbryant1/AFProfile/issues/8 (jaxline#11; jax_privacy#10: 'Failed to "
      "allocate request for 176.00MiB')",
      "a smaller batch or model per device; for JAX, XLA_PYTHON_CLIENT_PREALLOCATE=false shows the real peak"),
    S("tf-oom-tensor", "oom", ("OOM when allocating tensor",),
      "TensorFlow could not allocate a tensor (the GPU ran out of memory)",
      "ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[500,17,17,4032] and "
      "type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
      "https://github.com/tensorflow/models/issues/7142",
      "a smaller batch per GPU"),
    S("kernel-oom-invoked", "oom", ("invoked oom-killer",),
      "the kernel's OOM killer ran on the node (a pasted dmesg): host memory ran out",
      "2024-04-29T14:55:41,678628+02:00 pool invoked oom-killer: gfp_mask=0x6200ca(GFP_HIGHUSER_MOVABLE), order=0, "
      "oom_score_adj=0", "https://github.com/equinor/ert/issues/7797 (gensyn-ai/rl-swarm#463 the same)",
      "more host memory per task (--mem), or less per rank; the dmesg lines after it name the process killed"),
    S("hip-oom", "oom", ("hipErrorOutOfMemory",),
      "the GPU ran out of memory (ROCm's HIP runtime: hipErrorOutOfMemory)",
      "error: 'hipErrorOutOfMemory'(2) at square.cpp:76", "https://github.com/ROCm/hip/issues/2132",
      "a smaller batch or model per GPU"),
    S("hip-oom-tf", "oom", ("HIP_ERROR_OutOfMemory",),
      "the GPU ran out of memory (ROCm's driver, as TensorFlow's ROCm build prints it)",
      "E tensorflow/stream_executor/rocm/rocm_driver.cc:600] failed to allocate 890.06M (933298432 bytes) from "
      "device: HIP_ERROR_OutOfMemory", "https://github.com/keras-team/keras/issues/13889",
      "a smaller batch or model per GPU"),
    S("cuda-rt-oom", "oom", ("cudaErrorMemoryAllocation",),
      "the GPU ran out of memory (the CUDA runtime's cudaErrorMemoryAllocation)",
      "cudaErrorMemoryAllocation : out of memory", "https://github.com/jax-ml/jax/issues/17217",
      "a smaller batch or model per GPU; another process (JAX's preallocation) may hold the memory"),
    S("vllm-no-cache-memory", "oom", ("No available memory for the cache blocks",),
      "vLLM found no GPU memory left for its KV cache after loading the model (the model, or another process, "
      "takes what gpu_memory_utilization allows)",
      "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
      "initializing the engine.", "https://github.com/vllm-project/vllm/issues/10439 (QwenLM/Qwen#853 on 4 A100s)",
      "raise gpu_memory_utilization, lower max_model_len, more tensor parallelism, or free the GPU of other "
      "processes"),
    # --- round 7: memory exhausted as the kernel, MPI, compiled runtimes and GPU codes print it ---
    S("kernel-oom-kill-process", "oom", ("out of memory: kill process",),
      "the kernel's OOM killer killed a process (older kernels' words; a cgroup's 'Memory cgroup out of memory' "
      "the same)",
      "Out of memory: Kill process 41528 (python) score 913 or sacrifice child",
      "https://github.com/torvalds/linux (mm/oom_kill.c, before 4.19)",
      "ask for more memory, or load less per rank (DataLoader workers, dataset in RAM)", lower=True),
    S("kernel-oom-constraint", "oom", ("oom-kill:constraint=",),
      "the kernel's OOM killer chose a process (its summary line)",
      "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0-1,task=python,pid=1234,uid=1000",
      "https://github.com/torvalds/linux (mm/oom_kill.c, dump_oom_summary)",
      "ask for more memory, or load less per rank (DataLoader workers, dataset in RAM)"),
    S("kernel-oom-reaper", "oom", ("oom_reaper: reaped process",),
      "the kernel's OOM reaper freed a killed process's memory (it was killed for memory)",
      "oom_reaper: reaped process 1234 (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB",
      "https://github.com/torvalds/linux (mm/oom_kill.c)",
      "ask for more memory, or load less per rank (DataLoader workers, dataset in RAM)"),
    S("mpich-out-of-memory-in-file", "oom", ("Out of memory in file ",),
      "MPICH's (Cray MPT's, ROMIO's) allocation check failed: the rank ran out of host memory inside MPI",
      "129: Out of memory in file /notbackedup/tmp/ulib/mpt_base/mpich2/src/mpi/romio/adio/ad_cray/"
      "ad_cray_write_coll.c, line 486", "https://github.com/E3SM-Project/E3SM/issues/1217 (Cori, cray-mpich 7.4.4)",
      "fewer ranks per node (more memory per rank) or smaller collective buffers (cb_buffer_size, the I/O tasks)"),
    S("mpi-err-no-mem", "oom", ("MPI_ERR_NO_MEM",),
      "MPI could not allocate memory (MPI_Alloc_mem, buffers)", "*** MPI_ERR_NO_MEM: out of memory",
      "https://github.com/open-mpi/ompi (ompi/errhandler/errcode.c: the MPI standard's error class; "
      "pmodels/mpich#1112 on its use)",
      "fewer ranks per node or more memory per rank; smaller MPI buffers"),
    S("gfortran-alloc", "oom", ("Allocation would exceed memory limit",),
      "gfortran's runtime could not allocate an array (the host's memory, or the job's limit)",
      "Operating system error: Cannot allocate memory\nAllocation would exceed memory limit",
      "https://github.com/gcc-mirror/gcc (libgfortran/runtime/error.c, os_error)",
      "more memory per rank (--mem-per-cpu) or fewer ranks per node; smaller arrays per rank"),
    S("cudamalloc-oom", "oom", ("cudamalloc", "out of memory"),
      "a cudaMalloc failed for want of GPU memory",
      "cudaMalloc failed: out of memory",
      "https://github.com/apache/mxnet/issues/5341 (TuSimple/mx-maskrcnn#98 the same)",
      "a smaller problem per GPU, or more GPUs", lower=True),
    S("amrex-gpu-oom", "oom", ("out of gpu memory",),
      "AMReX's arena (WarpX, Nyx, Castro...) found no GPU memory left for an allocation",
      "amrex::Abort::0::Out of gpu memory. Free: 0 Asking: 1073741824 Bytes",
      "https://github.com/AMReX-Codes/amrex (Src/Base/AMReX_Arena.cpp)",
      "fewer cells per GPU (max_grid_size, more nodes), or amrex.the_arena_init_size lower", lower=True),
    # --- oom: GPU memory ---
    # NCCL's CUDACHECK prints "Cuda failure 'out of memory'" (2.18 and older) or "Cuda failure 2 'out of memory'"
    # (the error's number first, 2.19+), on its own WARN line or as the "Last error:" of ncclUnhandledCudaError
    S("nccl-cuda-oom", "oom", ("Cuda failure ", "'out of memory'"),
      "NCCL could not allocate its GPU buffers: the GPU is out of memory",
      "VM-0-16-ubuntu:392:494 [2] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'",
      "https://github.com/NVIDIA/TensorRT-LLM/issues/1670 (and peft#1703's \"Last error: Cuda failure 2 'out of "
      "memory'\")",
      "leave NCCL room: a smaller batch, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, fewer NCCL channels"),
    S("torch-oom", "oom", ("CUDA out of memory",),
      "a rank ran out of GPU memory",
      "OutOfMemoryError: CUDA out of memory. Tried to allocate 172.00 MiB (GPU 0; 79.35 GiB total capacity; ...",
      "https://github.com/Instruction-Tuning-with-GPT-4/GPT-4-LLM/issues/16",
      "lower the batch (submit --oom-retry batch-size), shard more (FSDP/ZeRO), or activation checkpointing"),
    S("cuda-runtime-oom", "oom", ("CUDA runtime error: out of memory",),
      "a rank ran out of GPU memory (an inference engine's own CUDA check)",
      "RuntimeError: [TM][ERROR] CUDA runtime error: out of memory", "https://github.com/InternLM/lmdeploy/issues/2993",
      "less memory per GPU: a smaller batch or cache (the engine's memory fraction), or more GPUs (tensor parallel)"),
    S("cuda-error-oom", "oom", ("CUDA error: out of memory",),
      "a rank ran out of GPU memory (the CUDA runtime's form, often at context creation)",
      "RuntimeError: CUDA error: out of memory", "https://github.com/ruotianluo/ImageCaptioning.pytorch/issues/176",
      "lower the batch; check that no other process holds the GPU (nvidia-smi)"),
    S("cublas-alloc", "oom", ("CUBLAS_STATUS_ALLOC_FAILED",),
      "cuBLAS could not allocate its workspace: the GPU is out of memory",
      "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
      "https://github.com/deepspeedai/DeepSpeedExamples/issues/323",
      "lower the batch or shard more; check that no other process holds the GPU (nvidia-smi)"),
    # round 8 (memory): the JVM's own error (Spark, Hadoop, a Java tool in a pipeline): host memory, not the GPU's
    S("java-oom", "oom", ("java.lang.OutOfMemoryError",),
      "the JVM ran out of memory (its heap, -Xmx, or native memory): host memory, not the GPU's",
      "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space",
      "https://github.com/openjdk/jdk (java.lang.OutOfMemoryError: 'Java heap space')",
      "a larger heap (-Xmx, JAVA_OPTS; within the job's --mem), or less data per process"),
    S("torch-oom-type", "oom", ("OutOfMemoryError",),
      "a rank ran out of GPU memory",
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 496.00 MiB. GPU 0 has a total capacty ...",
      "https://github.com/FoundationVision/GenerateU/issues/10",
      "lower the batch (submit --oom-retry batch-size), shard more (FSDP/ZeRO), or activation checkpointing"),
    # Python's own MemoryError (a malloc that failed: host memory, never the GPU's), however it is printed: alone
    # on its line, glued to the next "Traceback" by interleaved workers, numpy's _ArrayMemoryError
    S("memory-error", "oom", ("MemoryError",),
      "a process raised MemoryError: the host ran out of memory (not the GPU)",
      "MemoryErrorTraceback (most recent call last):", "https://github.com/open-mmlab/mmdetection/issues/1767 (and "
      "microsoft/SoftTeacher#149's MemoryError in a DataLoader worker)",
      "less host memory per rank (DataLoader workers, the dataset in RAM, spawn's pickled arguments), or more --mem"),
    S("loader-killed", "oom", ("DataLoader worker", "killed by signal: Killed"),
      "a DataLoader worker was killed by SIGKILL: almost always the host's OOM killer (the job's host memory)",
      "DataLoader worker (pid 12847) is killed by signal: Killed", "https://github.com/TorchSSL/TorchSSL/issues/4",
      "fewer DataLoader workers or a smaller prefetch; more host memory (--mem); check dmesg for the OOM killer"),
    S("torchrun-sigkill", "oom", ("exitcode", ": -9"),
      "the rank was killed by SIGKILL: the host's OOM killer most often (a time limit, a preemption or a kill -9 "
      "print the same)",
      "  exitcode  : -9 (pid: 14750)", "https://github.com/lzhxmu/CPPO/issues/6",
      "look for the OOM killer (dmesg, sacct MaxRSS); less host memory per rank (DataLoader workers, "
      "loading the model once per node), or more --mem", weak=True),
    S("deepspeed-sigkill", "oom", ("exits with return code = -9",),
      "DeepSpeed's launcher saw a rank killed by SIGKILL: the host's OOM killer most often",
      "'/content/DeepSpeedExamples/applications/DeepSpeed-Chat/output/actor-models/125m'] exits with return code = -9",
      "https://github.com/deepspeedai/DeepSpeed/issues/3232",
      "look for the OOM killer (dmesg); less host memory per rank (ZeRO offload to CPU needs RAM), or more --mem",
      weak=True),
    # torch.multiprocessing.spawn's ProcessExitedException: "process 1 terminated with signal SIGKILL"
    S("spawn-sigkill", "oom", ("terminated with signal SIGKILL",),
      "a spawned rank was killed by SIGKILL: the host's OOM killer most often (a kill -9 prints the same)",
      "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL",
      "https://github.com/Megvii-BaseDetection/YOLOX/issues/76",
      "look for the OOM killer (dmesg); fewer DataLoader workers, less host memory per rank", weak=True),
    S("sigkill", "oom", ("Signal 9 (SIGKILL) received by PID",),
      "the rank was killed by SIGKILL: the host's OOM killer most often (a time limit, a preemption or a kill -9 "
      "print the same)",
      "  traceback : Signal 9 (SIGKILL) received by PID 14750", "https://github.com/lzhxmu/CPPO/issues/6",
      "look for the OOM killer (dmesg, sacct MaxRSS); less host memory per rank, or more --mem", weak=True),
    # any launcher name before it: Open MPI's mpirun, Debian's and Horovod images' mpirun.real, orterun, prterun
    S("mpirun-sigkill", "oom", ("noticed that process rank", "exited on signal 9"),
      "mpirun saw a rank killed by SIGKILL: the host's OOM killer most often",
      "mpirun noticed that process rank 0 with PID 21183 on node host01 exited on signal 9 (Killed).",
      "https://github.com/open-mpi/ompi/issues/2661",
      "look for the OOM killer on that node (dmesg); less memory per rank or more nodes",
      node=re.compile(r"on node (\S{1,128}?)\.? exited"), weak=True),
    # LSF's job report and Slurm's srun print a SIGKILL as exit code 137 (128 + 9), SGE's qacct as exit_status 137
    S("exit-code-137", "oom", ("Exited with exit code 137",),
      "the job's process exited with 137: killed by SIGKILL (the OOM killer, a memory limit, or a kill -9)",
      "Exited with exit code 137.",
      "https://github.com/cBio/cbio-cluster/issues/232 (the OOM killer; LSF and srun print the same)",
      "the node's dmesg for the OOM killer; the job's memory (bjobs -l MAX MEM, sacct -o MaxRSS)", weak=True),
    S("sge-exit-137", "oom", ("exit_status", " 137"),
      "the job's process exited with 137: killed by SIGKILL (h_vmem/h_rss exceeded, the OOM killer, or qdel)",
      "exit_status  137", "https://github.com/marbl/canu/issues/1438 (SGE's queue_conf(5): h_vmem exceeded -> SIGKILL)",
      "qacct -j JOB: maxvmem against the h_vmem asked; the node's dmesg", weak=True),
    # Slurm's older task/cgroup prints these at the step's end when the cgroup reached its limit at some point: the
    # page cache counts, so jobs that completed print them too (a candidate); with a task killed by SIGKILL in the
    # same log they are the memory kill (why/foreign.py: slurm-memory-limit-kill)
    S("slurm-exceeded-job-mem", "oom", ("exceeded job memory limit", "at some point"),
      "Slurm's cgroup saw the job reach its memory limit at some point (host memory; the page cache counts too)",
      "slurmstepd: error: Exceeded job memory limit at some point.",
      "https://github.com/SchedMD/slurm (task/cgroup: 'Exceeded job memory limit at some point'; galaxyproject/"
      "galaxy's Slurm runner reads the same line)",
      "ask for more memory (--mem / --mem-per-cpu): sacct -j JOB -o JobID,State,MaxRSS,ReqMem shows the peak",
      node=re.compile(r"slurmstepd-" + NODE + r": "), lower=True, weak=True),
    S("slurm-exceeded-step-mem", "oom", ("exceeded step memory limit", "at some point"),
      "Slurm's cgroup saw a job step reach its memory limit at some point (host memory; the page cache counts too)",
      "slurmstepd: error: Exceeded step memory limit at some point.",
      "https://github.com/SchedMD/slurm (task/cgroup: 'Exceeded step memory limit at some point')",
      "ask for more memory (--mem / --mem-per-cpu): sacct -j JOB -o JobID,State,MaxRSS,ReqMem shows the peak",
      node=re.compile(r"slurmstepd-" + NODE + r": "), lower=True, weak=True),
    # without "at some point" it is slurmd's notice of its own memory kill (job_mem_limit: the notice, then SIGKILL)
    S("slurm-job-mem-notify", "oom", ("exceeded job memory limit",),
      "Slurm killed the job for going over its memory limit (slurmd's notice before its SIGKILL): host memory",
      "slurmstepd: error: Exceeded job memory limit", "https://github.com/SchedMD/slurm (src/slurmd/slurmd/req.c: "
      "notify_req.message = \"Exceeded job memory limit\", then kill_req.signal = SIGKILL)",
      "ask for more memory (--mem / --mem-per-cpu): sacct -j JOB -o JobID,State,MaxRSS,ReqMem shows the peak",
      node=re.compile(r"slurmstepd-" + NODE + r": "), lower=True),
    # Slurm's newer task/cgroup (cgroup v1) says the same at the step's end: 'may or may not result in some failure'
    S("slurm-hit-memory-limit", "oom", ("hit memory", "limit at least once"),
      "Slurm's cgroup saw a step reach its memory (or memory+swap) limit at least once (the page cache counts too)",
      "slurmstepd-node1: error: Step 123.0 hit memory+swap limit at least once during execution. This may or may "
      "not result in some failure.", "https://github.com/SchedMD/slurm (src/plugins/cgroup/v1: '%ps hit "
      "memory+swap limit at least once during execution')",
      "sacct -j JOB -o JobID,State,MaxRSS,ReqMem: a task killed (State OUT_OF_MEMORY, a SIGKILL) decides it; "
      "ask for more memory", node=re.compile(r"slurmstepd-" + NODE + r": "), lower=True, weak=True),
    S("flux-oom", "oom", ("out of memory: killed", " task"),
      "Flux's job shell saw the kernel's OOM killer kill tasks in the job's cgroup (host memory)",
      "flux-shell[0]: ERROR: oom: Memory cgroup out of memory: killed 1 task on node12.",
      "https://github.com/flux-framework/flux-core (src/shell/oom.c: 'Memory cgroup out of memory: killed %lu "
      "task%s on %s.')",
      "ask for more memory per node (fewer tasks per node), or load less per task",
      node=re.compile(r"killed \d{1,9} tasks? on ([A-Za-z0-9][\w-]{0,62})"), lower=True),
    S("systemd-oomd", "oom", ("due to memory pressure for", "killed"),
      "systemd-oomd killed the job's processes: the machine's memory (and swap) was under pressure (Ubuntu, Fedora "
      "workstations run it by default)",
      "systemd-oomd[939]: Killed /user.slice/user-1000.slice/user@1000.service/app.slice/run-r25ac.scope due to "
      "memory pressure for /user.slice/user-1000.slice/user@1000.service being 82.36% > 80.00% for > 20s with "
      "reclaim activity", "https://github.com/systemd/systemd (src/oom/oomd.c: 'Killed %s due to memory pressure "
      "for %s being ...')",
      "less host memory per process (DataLoader workers, the dataset in RAM), or the slice's ManagedOOM limits",
      lower=True),
    S("charm-malloc", "oom", ("could not malloc",),
      "Charm++ (NAMD, ChaNGa) could not allocate: memory ran out",
      "Could not malloc() 1073741824 bytes--are we out of memory?",
      "https://github.com/UIUC-PPL/charm (src/conv-core/memory.C: 'Could not malloc() %d bytes--are we out of "
      "memory?')",
      "fewer processes per node (more memory each), or a smaller problem per process", lower=True),
    # bash's report of a command killed by a signal in a script (Slurm's batch script: slurm_script: line N): the
    # SIGKILL alone, a candidate as torchrun's -9 is
    S("shell-killed", "oom", (": line ", " Killed"),
      "a command of the job script was killed by SIGKILL (bash's report): the OOM killer most often (a limit, a "
      "preemption or a kill -9 print the same)",
      "/var/spool/slurmd/job1234/slurm_script: line 14:  4321 Killed                  python train.py",
      "https://github.com/bminor/bash (jobs.c: a job's status, strsignal's 'Killed', with the script's line)",
      "look for the OOM killer (dmesg, sacct -j JOB -o JobID,State,MaxRSS,ReqMem); more --mem or less per rank",
      weak=True),
    # session 28: an interactive shell (or a container build's /bin/sh -c) says only "Killed" when its foreground
    # command got SIGKILL; with no batch system in the log, no time limit or preemption sent it: the OOM killer
    # (a job script's shell names its line and PID: shell-killed above, left thin)
    S("shell-killed-bare", "oom", ("Killed",),
      "a command was killed by SIGKILL (the shell's bare report): the OOM killer most often",
      "Killed", "https://github.com/bminor/bash (jobs.c: a foreground job's status, strsignal's 'Killed')",
      "look for the OOM killer (dmesg, journalctl -k); less host memory (smaller batches, fewer workers) or more RAM",
      weak=True, whole=True),
    S("sacct-oom-cut", "oom", ("OUT_OF_ME+",),
      "Slurm's accounting says the job (or a step) ended OUT_OF_MEMORY (sacct's column cut it): a memory kill",
      "12345.0      python     OUT_OF_ME+    0:125", "https://github.com/SchedMD/slurm (sacct: a State wider than "
      "its 10-character column ends in '+')",
      "ask for more memory (--mem / --mem-per-cpu): sacct -j JOB -o JobID,State%20,MaxRSS,ReqMem shows the peak"),
    S("pbs-cgroup-mem", "oom", ("cgroup mem", "limit exceeded"),
      "PBS's cgroup hook killed the job for going over its memory (host memory)",
      "3344110.pbs Killed Cgroup mem limit exceeded", "https://github.com/openpbs/openpbs (hooks/cgroups/"
      "pbs_cgroups.PY: 'Cgroup mem limit exceeded', 'Cgroup memsw limit exceeded')",
      "ask for more memory (#PBS -l select=...:mem=), or load less per process", lower=True),
    S("sge-hard-mem-limit", "oom", ("exceeds job hard limit", "mem"),
      "Grid Engine killed the job for going over its memory limit (h_vmem, h_rss)",
      "job 2394.1 exceeds job hard limit \"h_vmem\" of queue \"all.q@node12\" (20.29G > limit:20.00G) - sending "
      "SIGKILL", "https://github.com/hpc-gridware/clusterscheduler (execd: 'exceeds job hard limit ... sending "
      "SIGKILL')",
      "ask for more memory (qsub -l h_vmem=...; it is per slot), or load less per process",
      node=re.compile(r"of queue \"[^\"@]{0,64}@([A-Za-z0-9][\w.-]{0,62})\"")),
    S("cray-oom-killer", "oom", ("OOM killer terminated this process",),
      "the node's OOM killer killed the application (Cray ALPS' report): host memory ran out",
      "[NID 04371] 2016-10-19 22:21:28 Apid 23764253: OOM killer terminated this process.",
      "https://github.com/HPE/cray (ALPS' aprun; sites' FAQs quote it, e.g. CSCS's and ARCHER's)",
      "fewer ranks per node (aprun -N, more nodes) or less memory per rank"),
    S("numpy-unable-to-allocate", "oom", ("Unable to allocate", "for an array with shape"),
      "numpy could not allocate an array: the host ran out of memory (or the job's limit)",
      "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 28.6 GiB for an array with shape (3840, 1000000) "
      "and data type float64", "https://github.com/numpy/numpy (numpy/_core/_exceptions.py: _ArrayMemoryError)",
      "more host memory per task (--mem), or load the data in pieces (memmap, chunks)"),
    S("openfoam-new-handler", "oom", ("new cannot satisfy memory request",),
      "OpenFOAM's new-handler: an allocation failed (the host's memory or the job's limit; its text says a corrupt "
      "pointer can print it too)",
      "new cannot satisfy memory request.", "https://github.com/OpenFOAM/OpenFOAM-dev (src/OSspecific/POSIX/"
      "newError handler: 'new cannot satisfy memory request')",
      "more memory per rank (more nodes, --mem-per-cpu) or a coarser mesh per rank"),
    S("nccl-cuda-calloc", "oom", ("Failed to CUDA calloc",),
      "NCCL could not allocate its GPU buffers: the GPU is out of memory",
      "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes",
      "https://github.com/NVIDIA/nccl (src/include/alloc.h: ncclCudaCalloc's WARN)",
      "leave NCCL room: a smaller batch, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, fewer NCCL channels"),
    S("gpu-lib-alloc-failed", "oom", ("_ALLOC_FAILED",),
      "a GPU library could not allocate its workspace (cuSOLVER, cuSPARSE, cuFFT, hipBLAS: *_ALLOC_FAILED): "
      "the GPU is out of memory",
      "RuntimeError: cusolver error: CUSOLVER_STATUS_ALLOC_FAILED, when calling `cusolverDnCreate(handle)`",
      "https://github.com/pytorch/pytorch (aten/src/ATen/cuda/Exceptions.h: TORCH_CUSOLVER_CHECK; cuSPARSE's, "
      "cuFFT's and hipBLAS's *_ALLOC_FAILED the same)",
      "lower the batch or shard more; check that no other process holds the GPU (nvidia-smi)"),
    S("xla-hbm-oom", "oom", ("Ran out of memory in memory space",),
      "XLA ran out of device memory (HBM) compiling or running the program",
      "RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 20.5G of "
      "15.48G hbm.", "https://github.com/openxla/xla (its memory-space assignment's error)",
      "a smaller batch or model per device, more sharding, rematerialization"),
    S("cudnn-workspace", "oom", ("CUDNN_STATUS_NOT_ENOUGH_WORKSPACE",),
      "cuDNN had too little workspace for the algorithm it chose: the GPU's free memory most often",
      "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_ENOUGH_WORKSPACE",
      "https://github.com/pytorch/pytorch (aten/src/ATen/cudnn: cuDNN error: cudnnGetErrorString's name)",
      "a smaller batch; torch.backends.cudnn.benchmark=False; a newer torch/cuDNN", weak=True),
    S("slurm-oom-state-reason", "oom", ("JobState=OUT_OF_MEMORY",),
      "Slurm says the job ended OUT_OF_MEMORY (scontrol show job): a memory kill",
      "JobState=OUT_OF_MEMORY Reason=OutOfMemory", "https://github.com/SchedMD/slurm (job state codes)",
      "ask for more memory (--mem / --mem-per-cpu)"),
    S("slurm-exceeded-vmem", "oom", ("exceeded virtual memory limit",),
      "Slurm killed the step for going over its virtual memory limit (VSizeFactor): host memory",
      "slurmstepd: error: StepId=1234.0 exceeded virtual memory limit (8589934592 > 4294967296), being killed",
      "https://github.com/SchedMD/slurm (src/common/slurm_jobacct_gather.c: '%ps exceeded virtual memory limit "
      "(... > ...), being killed')",
      "ask for more memory (--mem / --mem-per-cpu; the virtual size counts), or map less (fewer threads, smaller "
      "arenas: MALLOC_ARENA_MAX)", node=re.compile(r"slurmstepd-" + NODE + r": "), lower=True),
    S("torque-mem-limit", "oom", ("exceeded a memory resource limit",),
      "Torque's MOM killed the job for going over a memory limit (mem, vmem, pvmem)",
      "Job exceeded a memory resource limit (vmem, pvmem, etc.). Job was aborted",
      "https://github.com/adaptivecomputing/torque (its MOM's message msg_momjobovermemlimit)",
      "ask for more memory (#PBS -l mem= / vmem= / pmem=), or load less per process", lower=True),
    S("htcondor-mem-limit", "oom", ("gone over memory limit",),
      "HTCondor held the job for going over its memory request (request_memory)",
      "Job has gone over memory limit of 2048 megabytes. Peak usage: 2100 megabytes.",
      "https://github.com/htcondor/htcondor (the starter's hold: 'Docker job has gone over memory limit of %d Mb')",
      "raise request_memory (condor_qedit, or the submit file) and release the job", lower=True),
    S("k8s-evicted-memory", "oom", ("low on resource: memory",),
      "Kubernetes evicted the pod: its node ran low on memory (kubelet's memory pressure)",
      "Message: The node was low on resource: memory. Container httpd-container was using 22Mi, which exceeds its "
      "request of 15Mi.", "https://github.com/kubernetes/kubernetes (pkg/kubelet/eviction/helpers.go: 'The node "
      "was low on resource: %v. ')",
      "set the pod's memory request to its real use (requests = limits for a training pod), or nodes with more "
      "memory"),
    S("dask-memory-budget", "oom", ("memory budget", "restarting"),
      "Dask's nanny restarted a worker that went over its memory budget (host memory)",
      "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting",
      "https://github.com/dask/distributed (distributed/nanny.py: 'Worker exceeded %d%% memory budget. Restarting')",
      "more memory per worker (memory_limit), fewer threads per worker, or smaller partitions", lower=True),
    S("rust-alloc", "oom", ("memory allocation of", "bytes failed"),
      "a Rust program (or library: tokenizers, polars) could not allocate: host memory ran out",
      "memory allocation of 34359738368 bytes failed",
      "https://github.com/rust-lang/rust (library/std/src/alloc.rs: default_alloc_error_hook)",
      "more host memory per task (--mem), or less data per process"),
    S("r-vector", "oom", ("cannot allocate vector of size",),
      "R could not allocate a vector: host memory ran out (or the job's limit)",
      "Error: cannot allocate vector of size 11.8 Gb",
      "https://github.com/wch/r-source (src/main/memory.c: 'cannot allocate vector of size %0.1f Gb')",
      "more host memory per task (--mem), or less data at once"),
    S("flang-allocate", "oom", ("bytes requested; not enough memory",),
      "the Fortran runtime could not ALLOCATE (NVIDIA HPC SDK's nvfortran, classic flang): memory ran out (the "
      "host's, or the GPU's for a device array)",
      "0: ALLOCATE: 1683627180072 bytes requested; not enough memory",
      "https://github.com/flang-compiler/flang (its Fortran runtime: 'ALLOCATE: %lu bytes requested; not enough "
      "memory')",
      "more memory per rank (fewer ranks per node), smaller arrays per rank; a huge size is a bug"),
    S("perl-oom", "oom", ("Out of memory during request",),
      "Perl could not allocate (its 'Out of memory during request for N bytes'): host memory ran out",
      "Out of memory during request for 4088 bytes, total sbrk() is 1073741824 bytes!",
      "https://github.com/Perl/perl5 (malloc.c: 'Out of memory during request for')",
      "more host memory per task (--mem), or less data at once"),
    S("device-out-of-memory", "oom", ("OUT_OF_DEVICE_MEMORY",),
      "the GPU ran out of memory (Level Zero's, Vulkan's or SYCL's OUT_OF_DEVICE_MEMORY)",
      "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "https://github.com/oneapi-src/level-zero (ze_api.h: "
      "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY; Vulkan's VK_ERROR_OUT_OF_DEVICE_MEMORY the same)",
      "a smaller batch or model per device, or more devices"),
    S("host-out-of-memory-code", "oom", ("OUT_OF_HOST_MEMORY",),
      "the host ran out of memory (OpenCL's, Level Zero's or Vulkan's OUT_OF_HOST_MEMORY)",
      "CL_OUT_OF_HOST_MEMORY", "https://github.com/KhronosGroup/OpenCL-Headers (CL/cl.h: CL_OUT_OF_HOST_MEMORY -6)",
      "more host memory per task, or less per process"),
    S("opencl-alloc-failure", "oom", ("CL_MEM_OBJECT_ALLOCATION_FAILURE",),
      "the device could not allocate a buffer (OpenCL's CL_MEM_OBJECT_ALLOCATION_FAILURE): its memory is full",
      "CL_MEM_OBJECT_ALLOCATION_FAILURE", "https://github.com/KhronosGroup/OpenCL-Headers (CL/cl.h: "
      "CL_MEM_OBJECT_ALLOCATION_FAILURE -4)",
      "a smaller problem per device, or more devices"),
    *[S(f"memory-phrase-{i}", "oom", (phrase,) + ((mark,) if mark else ()),
        "a process could not get the memory it asked for (the host's, or the GPU's; the job's limit): its own "
        "words", learned, src, "more memory per rank (fewer ranks per node, --mem), or less data per rank; the "
        "lines before it say what was being allocated", lower=True, unless=_MEMORY_HINT)
      for i, (phrase, mark, learned, src) in enumerate(_MEMORY_PHRASES)],
    # session 22 (issue 41): Nextflow's report of a task that ended by SIGKILL (128 + 9) while Nextflow lived on,
    # as torchrun's -9: the OOM killer when the log shows no time limit, preemption or node failure
    S("nextflow-exit-137", "oom", ("terminated with an error exit status (137)",),
      "a workflow's task was killed by SIGKILL (exit status 137): the host's or the job's memory limit most often",
      "[b8/e9892b] NOTE: Process `SANGERTOL_READMAPPING:READMAPPING:CONVERT_STATS:CRUMBLE (Macahu1)` terminated with "
      "an error exit status (137) -- Execution is retried (1)",
      "https://github.com/sanger-tol/readmapping/issues/152 (nextflow-io/nextflow's TaskProcessor message)",
      "more memory for that process (its memory directive, a retry that asks for more: task.attempt), or less data "
      "per task", weak=True),
    # session 22 (issue 41): the workflow manager's report of sacct's state OUT_OF_MEMORY (Snakemake's SLURM executor)
    S("snakemake-slurm-oom", "oom", ("SLURM status is: 'OUT_OF_MEMORY'",),
      "the workflow's Slurm job ran out of memory (sacct's state OUT_OF_MEMORY: the cgroup's OOM killer)",
      "    message: SLURM-job '4242' failed, SLURM status is: 'OUT_OF_MEMORY'.",
      "https://github.com/snakemake/snakemake-executor-plugin-slurm (the executor's message for a job sacct "
      "reports in a failed state)",
      "more memory for that rule (its mem_mb resource, --mem); sacct -j ID -o MaxRSS,ReqMem shows the peak"),
    # CMS's job wrapper (WMCore's PerformanceMonitor) kills a step over its memory limit, in its own words
    S("wmcore-max-pss", "oom", ("Job has exceeded maxPSS",),
      "the job's memory (PSS) passed the limit its wrapper enforces, which killed the step",
      "Job has exceeded maxPSS: 16000 MB", "https://github.com/cms-sw/cmssw/issues/46040 (WMCore's "
      "PerformanceMonitor)", "find what grows (the step's memory profile), or ask for more memory per job"),
    S("wmcore-max-vsize", "oom", ("Job has exceeded maxVSize",),
      "the job's virtual memory passed the limit its wrapper enforces, which killed the step",
      "Job has exceeded maxVSize: 20000 MB", "https://github.com/dmwm/WMCore (PerformanceMonitor's message)",
      "find what grows (the step's memory profile), or ask for more memory per job"),
    # session 24 (heldout-fresh17, after it was scored): Ray's older memory monitor (raylet's node_manager.cc)
    S("ray-memory-low", "oom", ("System memory low at node with IP",),
      "Ray's memory monitor found the node's host memory nearly full and killed a task",
      "(raylet, ip=10.0.3.179) [...] node_manager.cc:2966: System memory low at node with IP 10.0.3.179. Used memory "
      "(216.78GB) / total capacity (219.60GB) (0.98715) exceeds threshold 0.95, killing latest task",
      "https://github.com/ray-project/ray/issues/28781",
      "load less per node (fewer tasks or actors in parallel, smaller partitions), or nodes with more memory",
      node=re.compile(r"node with IP (\d{1,3}(?:\.\d{1,3}){3})")),
    # MVAPICH's mpispawn: a rank killed by SIGKILL, as mpirun's own line is read (a candidate, the OOM killer first)
    S("mvapich-sigkill", "oom", ("[child_handler] MPI process (rank: ", "terminated with signal 9"),
      "MVAPICH saw a rank killed by SIGKILL: the host's OOM killer most often",
      "[c558-702.stampede.tacc.utexas.edu:mpispawn_0][child_handler] MPI process (rank: 0, pid: 39547) terminated "
      "with signal 9 -> abort job", "https://github.com/peridigm/peridigm/issues/12",
      "look for the OOM killer on that node (dmesg, the site's memory monitor); less memory per rank or more nodes",
      node=re.compile(r"^\[([\w.-]{1,128}):mpispawn_"), weak=True),
    # session 24 (heldout-fresh18, after it was scored): Dask's nanny restarts a worker past its memory budget
    # (distributed/nanny.py's "Worker exceeded 95% memory budget. Restarting"; newer ones name the worker's address)
    S("dask-memory-budget", "oom", ("exceeded ", "% memory budget"),
      "Dask's nanny killed a worker that went past its memory budget (the worker's memory_limit): host memory",
      "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting",
      "https://github.com/h2oai/db-benchmark/issues/144",
      "fewer threads or tasks per worker, smaller partitions, or a higher memory_limit per worker (within the job's "
      "memory)"),
    # session 24 (heldout-fresh19, after it was scored): HTCondor holds a job past its requested memory (a pool's
    # SYSTEM_PERIODIC_HOLD on MemoryUsage > RequestMemory: the Open Science Grid's and most pools' policy)
    S("condor-hold-memory", "oom", ("put on hold by", "memory usage"),
      "HTCondor put the job on hold for using more memory than it requested (the pool's periodic hold policy)",
      "1050981.0   dbrown   11/7  23:48 Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage "
      "3000000.", "https://github.com/gwastro/1-ogc/issues/2",
      "request more memory (request_memory) and release the job (condor_qedit, condor_release), or use less"),
    # Dask's nanny, when its worker process died of a signal (the OOM killer's SIGKILL, as its memory monitor's kill
    # reads): db-benchmark-144 (host memory), rapidsai/notebooks-89 (the GPU worker's memory)
    S("dask-worker-killed", "oom", ("Worker process ", "was killed by unknown signal"),
      "a Dask worker process was killed by a signal: the OOM killer most often (host memory, or a GPU worker's)",
      "distributed.nanny - WARNING - Worker process 50 was killed by unknown signal",
      "https://github.com/rapidsai/notebooks/issues/89; https://github.com/h2oai/db-benchmark/issues/144",
      "the node's dmesg for the OOM killer, the workers' memory (the dashboard, nvidia-smi); fewer threads per "
      "worker, smaller partitions, or a higher memory_limit"),
    # session 24 (heldout-fresh21, after it was scored): HTCondor's and YARN's own memory kills
    S("condor-killed-memory", "oom", ("killed by HTCondor due to excessive memory use",),
      "HTCondor killed the job for using more memory than it requested",
      "ERROR:RetryJob Job killed by HTCondor due to excessive memory use (RSS=2250 MB). Will not retry it.",
      "https://github.com/dmwm/CRABServer/issues/9367",
      "request more memory (request_memory, the job's memory setting) or use less"),
    S("yarn-container-memory", "oom", ("Container killed by YARN for exceeding memory limits",),
      "YARN killed an executor's container for going past its memory limit (host memory)",
      "Container killed by YARN for exceeding memory limits. 8.2 GB of 8 GB physical memory used. Consider "
      "boosting spark.yarn.executor.memoryOverhead.", "https://github.com/yahoo/TensorFlowOnSpark/issues/282",
      "more executor memory or memoryOverhead (spark.executor.memory, spark.yarn.executor.memoryOverhead), or less "
      "per executor"),
    # session 26: AWS Neuron's runtime out of a NeuronCore's device memory (TDRV's tensor allocation)
    S("neuron-device-oom", "oom", ("Failed to allocate ", "bytes on DEVICE for tensor"),
      "a NeuronCore ran out of device memory (the Neuron runtime could not allocate a tensor)",
      "2024-Oct-15 18:01:18.356933  3882:3882  ERROR  TDRV:tensor_allocate                         Failed to allocate "
      "180355072 bytes on DEVICE for tensor UNKNOWN.", "https://github.com/aws-neuron/aws-neuron-sdk/issues/1014",
      "a smaller batch or sequence, more tensor parallelism (more NeuronCores per model), or a bigger instance"),
    # session 27: torch.distributed.launch's own report (subprocess.CalledProcessError) of a rank it started that
    # died of SIGKILL: the launcher lived on, as torchrun's "exitcode: -9" (why/foreign.py _worker_sigkill)
    S("launch-sigkill", "oom", ("died with <Signals.SIGKILL: 9>",),
      "a rank torch.distributed.launch started was killed by SIGKILL: the host's OOM killer most often",
      "subprocess.CalledProcessError: Command '['/home/bengui/miniconda3/bin/python', '-u', './tools/train.py', "
      "'--local_rank=2', 'configs/unet/fcn_unet_s5-d16_256x256_40k_face_parse.py', '--launcher', 'pytorch']' died "
      "with <Signals.SIGKILL: 9>.",
      "https://github.com/open-mmlab/mmsegmentation/issues/1181",
      "look for the OOM killer (dmesg); less host memory per rank (the dataset in RAM, DataLoader workers)",
      weak=True),
    # session 29: the RAPIDS Accelerator for Spark gave up on a task after its memory retries (GpuRetryOOM,
    # GpuSplitAndRetryOOM, SplitAndRetryOOM, CpuRetryOOM): the GPU's (or the host's) memory ran out
    S("rapids-retry-oom", "oom", ("RetryOOM",),
      "the RAPIDS Accelerator gave up on a task after retrying it for memory (RetryOOM): the GPU's memory (the "
      "host's for CpuRetryOOM) ran out for that task",
      "Job aborted due to stage failure: Task 33 in stage 1303.0 failed 4 times, most recent failure: Lost task "
      "33.3 in stage 1303.0 (TID 37289) (10.59.128.149 executor 2): com.nvidia.spark.rapids.jni.SplitAndRetryOOM: "
      "Attempted to handle a split, but was not initialized with a splitPolicy.",
      "https://github.com/NVIDIA/cudf-spark/issues/8090",
      "smaller tasks (spark.sql.files.maxPartitionBytes, more partitions), fewer concurrent GPU tasks "
      "(spark.rapids.sql.concurrentGpuTasks), or a GPU with more memory"),
]  # fmt: skip
