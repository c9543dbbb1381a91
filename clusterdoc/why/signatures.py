"""The failure signatures `clusterdoc why` knows in a job's output: one entry each, by category.

An entry is what an engineer greps for: `needles`, plain substrings that must all be in the line (linear, no
backtracking), an optional `node` pattern (one anchored group, bounded) to name the host it blames, the
category, what it means and what to do, and the real line it was learned from with its source. A new
signature is one entry here and one fixture in tests/fixtures/why/real/ (SOURCES.md).

Categories: code, oom, desync, hang, node, network, scheduler, environment, and two that are never a cause
by themselves: `peer` (a rank lost its connection to another: the network, or the other rank died first)
and `effect` (a rank stopped because something else failed: NCCL's abort after a timeout, a launcher's kill).
`weak` entries name a candidate, not a verdict: alone they give "unknown" with what would decide.
Order matters: the first entry that matches a line wins (specific before general).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LINE_CAP = 4096  # the part of a line any parser looks at: the cost of a line is bounded whatever its length


@dataclass(frozen=True)
class Signature:
    name: str
    category: str
    needles: tuple[str, ...]
    meaning: str
    learned: str  # the real line it was learned from
    source: str  # where that line was posted
    next_step: str = ""
    node: re.Pattern | None = None  # group 1: the node the line blames
    weak: bool = False
    lower: bool = False  # needles are matched against the lowercased line
    unless: tuple[str, ...] = ()  # a line holding one of these is not it (a library's INFO line of a retry)

    def matches(self, line: str, low: str) -> bool:
        text = low if self.lower else line
        return all(n in text for n in self.needles) and not any(u in text for u in self.unless)

    def node_of(self, line: str) -> str | None:
        if self.node is None:
            return None
        m = self.node.search(line)
        return m.group(1) if m else None


_NODE = r"([A-Za-z0-9][\w.-]{0,62})"
S = Signature
SIGNATURES: list[Signature] = [
    # --- scheduler (Slurm's own lines) ---
    S("slurm-time-limit", "scheduler", ("CANCELLED AT", "DUE TO TIME LIMIT"),
      "Slurm ended the job at its time limit",
      "slurmstepd: error: *** STEP 55595933.0 ON maestro-3017 CANCELLED AT 2025-01-10T15:27:25 DUE TO TIME LIMIT ***",
      "https://github.com/Lightning-AI/pytorch-lightning/issues/20542",
      "checkpoint on SIGUSR1 (sbatch --signal=B:USR1@90) and resubmit; or ask for more --time"),
    S("slurm-requeue", "scheduler", ("CANCELLED AT", "DUE TO JOB REQUEUE"),
      "Slurm requeued the job (preemption or a requeue by the admin): not a failure of the job",
      "slurmstepd: error: *** JOB 608 ON SERVER_NAME CANCELLED AT 2022-08-12T02:06:12 DUE TO JOB REQUEUE ***",
      "https://github.com/facebookincubator/submitit/issues/1708",
      "nothing to fix: the job runs again; resume from a checkpoint (handle SIGUSR1/SIGTERM)"),
    S("submitit-preempted", "scheduler", ("this job is preempted",),
      "submitit caught Slurm's preemption signal",
      "submitit WARNING (2022-08-12 02:06:11,453) - Caught signal SIGUSR2 on SERVER_NAME: this job is preempted.",
      "https://github.com/facebookincubator/submitit/issues/1708",
      "nothing to fix: the job is requeued; resume from a checkpoint"),
    S("slurm-node-failure", "node", ("Node failure on ",),
      "Slurm lost a node of the allocation (it stopped answering slurmctld)",
      "salloc: error: Node failure on worker-1", "https://github.com/nebius/soperator/issues/854",
      "resubmit without that node (--exclude); check it (clusterdoc check, its slurmd log)",
      node=re.compile(r"Node failure on " + _NODE)),
    S("slurm-oom-kill", "oom", ("oom-kill event",),
      "the job step ran out of host memory (the cgroup's OOM killer killed a rank): its own memory limit",
      "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=37205392.0. Some of your processes may have been "
      "killed by the cgroup out-of-memory handler.", "https://github.com/brain-score/vision/pull/950",
      "ask for more memory (--mem / --mem-per-gpu) or load less per rank (DataLoader workers, dataset in RAM)",
      node=re.compile(r"slurmstepd-" + _NODE + r": ")),
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
    S("ray-node-dead", "node", ("has been marked dead because the detector has missed too many heartbeats",),
      "Ray lost a node (its raylet stopped answering): the node died, rebooted or was cut off",
      "WARNING worker.py:1462 -- The node with node id: 8f205b12643d25d8c1ce57c45527a6c912f3479765096718ad2bf0d3 and "
      "ip: 10.128.0.103 has been marked dead because the detector has missed too many heartbeats from it.",
      "https://github.com/ray-project/ray/issues/22349",
      "resubmit without that node; check it (its kernel log, the raylet's log: ray logs raylet.out -ip ADDR)",
      node=re.compile(r"and ip: (\d{1,3}(?:\.\d{1,3}){3})")),
    # Ray's death notice of an actor whose node died (the raylet gone: a crash, a reboot, a cut link); the node's
    # address is the actor's "ip:" field printed above it. Followed by "the actor's node was preempted" it is a
    # preemption (why/foreign.py reads that line as the reason)
    S("ray-node-died", "node", ("because its node has died",),
      "Ray lost the node an actor ran on (its raylet died: the node crashed, rebooted or was cut off)",
      "The actor is dead because its node has died. Node Id: 677df2a9020c5db45e755b0078c469e2ce51e05ea093ed3b283505a0",
      "https://github.com/ray-project/ray/issues/43751",
      "resubmit without that node; check it (its kernel log: the OOM killer, XIDs; the raylet's log: ray logs "
      "raylet.out -ip ADDR)"),
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
    S("ray-node-preempted", "scheduler", ("the actor's node was preempted",),
      "the cluster took the node back (preemption or a drain): not a failure of the job",
      "\tthe actor's node was preempted: preemption_integration_demo: simulating node drain",
      "https://github.com/ray-project/ray/pull/63807",
      "nothing to fix: resume from a checkpoint on the remaining or new nodes"),
    S("sbatch-rejected", "scheduler", ("sbatch: error: ", "Job rejected"),
      "Slurm refused the job at submission (the site's submit filter)",
      "submitit.core.utils.FailedJobError: sbatch: error: Job rejected: Please do not specify cores/CPUs/tasks for GPU "
      "jobs.", "https://github.com/facebookincubator/submitit/issues/1649",
      "change the request as the message says (the site's rules: scontrol show config, its documentation)"),
    S("sbatch-failed", "scheduler", ("Batch job submission failed",),
      "Slurm refused the job at submission (an option it does not accept, or over a limit)",
      "sbatch: error: Batch job submission failed: Invalid job array specification",
      "https://github.com/facebookresearch/cc_net/issues/32",
      "change the request as the message says (array size: MaxArraySize in scontrol show config; the partition's "
      "limits: sinfo, sacctmgr show qos)"),
    # salloc's and srun's refusal (sbatch's is "Batch job submission failed"): the reason follows the colon
    S("salloc-refused", "scheduler", ("Job submit/allocate failed",),
      "Slurm refused the allocation (salloc or srun outside a job): a limit or policy of the account, QOS or "
      "partition",
      "salloc: error: Job submit/allocate failed: Job violates accounting/QOS policy (job submit limit, user's size "
      "and/or time limits)", "https://github.com/chpc-uofu/technotes/issues/7",
      "the reason after the colon (squeue -u $USER for the jobs counted against the limit; sacctmgr show assoc, "
      "show qos for the limits); wait for jobs to end, or ask within the limits"),
    # the site's accounting: the account's time allocation (core-, node- or GPU-hours) used up or unknown. Slurm's
    # own reason codes for it (AssocGrp...Minutes) and the sites' submit filters' words ("node hour balance")
    S("slurm-assoc-minutes", "scheduler", ("AssocGrp", "Minutes"),
      "Slurm will not run the job: the account's allocation of time (CPU, GPU or billing minutes) is used up",
      "sbatch: error: AssocGrpBillingMinutes",
      "https://github.com/SchedMD/slurm/blob/master/doc/html/job_reason_codes.shtml",
      "sshare -l / sacctmgr show assoc for the account's usage against its GrpTRESMins; another account "
      "(--account), or a renewed allocation"),
    S("site-hour-balance", "scheduler", ("error", "hour balance"),
      "the site refused the job: the account's allocation of node or core hours is used up or unknown to it",
      "error: No available node hour balance information for user xxx, account xxx. Cannot proceed.",
      "https://github.com/radiasoft/sirepo/issues/7442",
      "the account's balance (the site's iris/sbank/mybalance tool); submit with an account that has hours "
      "(--account / -A)", lower=True),
    S("slurm-invalid-gres", "scheduler", ("Invalid generic resource (gres) specification",),
      "Slurm refused the request: it asks for a generic resource (a GPU gres) the cluster, the partition or the "
      "allocation the step runs in does not have (the job or step never ran)",
      "srun: error: Unable to create step for job 16413634: Invalid generic resource (gres) specification",
      "https://github.com/mehta-lab/waveorder/issues/201",
      "ask for a gres the partition has (sinfo -o '%P %G'; --gres=gpu:N or --gpus=N); a step inside an allocation "
      "can use only the allocation's gres (submit from a login node, or srun --gres within it)"),
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
      node=re.compile(r"srun: error: " + _NODE + r": task")),
    S("slurm-mem-limit", "oom", ("exceeded memory limit",),
      "Slurm killed the job for going over its memory limit (host memory)",
      "slurmstepd-dback-c11-n01: error: Job 848444 exceeded memory limit (33715636 > 32757760), being killed",
      "https://github.com/bcbio/bcbio-nextgen/issues/2393",
      "ask for more memory (--mem / --mem-per-gpu) or load less per rank",
      node=re.compile(r"slurmstepd-" + _NODE + r": "), lower=True),
    # the other batch systems' own end lines: PBS's MOM ("=>> PBS: job killed: mem|vmem|walltime N exceeded limit
    # M") and LSF's exit reasons (TERM_MEMLIMIT, TERM_RUNLIMIT, in the job's report)
    S("pbs-mem-limit", "oom", ("PBS: job killed: ", "mem ", "exceeded limit"),
      "PBS killed the job for going over its memory limit (host memory)",
      "=>> PBS: job killed: mem 2097152kb exceeded limit 1048576kb", "https://github.com/openpbs/openpbs (MOM's "
      "limit enforcement: 'job killed: mem ... exceeded limit')",
      "ask for more memory (#PBS -l mem= / select=...:mem=), or load less per process"),
    S("pbs-walltime", "scheduler", ("PBS: job killed: walltime",),
      "PBS ended the job at its walltime limit",
      "=>> PBS: job killed: walltime 3650 exceeded limit 3600", "https://github.com/openpbs/openpbs (MOM's limit "
      "enforcement: 'job killed: walltime ... exceeded limit')",
      "checkpoint and resubmit, or ask for more time (#PBS -l walltime=)"),
    S("lsf-mem-limit", "oom", ("TERM_MEMLIMIT",),
      "LSF killed the job for going over its memory limit (host memory)",
      "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.",
      "https://github.com/FredslundMagnus/Myretuen (its LSF job reports)",
      "ask for more memory (bsub -M and -R \"rusage[mem=...]\"), or load less per process"),
    S("lsf-run-limit", "scheduler", ("TERM_RUNLIMIT",),
      "LSF ended the job at its run time limit",
      "TERM_RUNLIMIT: job killed after reaching LSF run time limit.",
      "https://github.com/FredslundMagnus/Myretuen (its LSF job reports)",
      "checkpoint and resubmit, or ask for more time (bsub -W)"),
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
    S("slurm-cancelled", "scheduler", ("CANCELLED AT",),
      "the job was cancelled (scancel, or Slurm for a reason it did not print)",
      "slurmstepd-gpu20-15: error: *** STEP 9411285.0 ON gpu20-15 CANCELLED AT 2022-05-17T17:58:10 ***",
      "https://github.com/ZwwWayne/K-Net/issues/30", "see why it was cancelled: sacct -j JOB -o State,Reason",
      weak=True),
    S("srun-credential-expired", "scheduler", ("Job credential expired",),
      "a node rejected Slurm's job credential (the nodes' clocks or munge keys disagree with the controller's)",
      "srun: error: Task launch for 1443722.0 failed on node compute-0-1: Job credential expired",
      "https://github.com/c3nl-neuraldynamics/c3nl_cluster/issues/61",
      "the cluster's admins: that node's clock (NTP) and munge key; resubmit without the node meanwhile",
      node=re.compile(r"failed on node " + _NODE + r":")),
    S("srun-step-memory", "scheduler", ("Unable to create step", "Memory required by task is not available"),
      "Slurm could not start the job step: the memory it asks for is held by the job's other steps",
      "srun: error: Unable to create step for job 29986033: Memory required by task is not available",
      "https://github.com/eth-cscs/DLA-Future/issues/337",
      "give each step its share (srun --mem=... or --exact / --overlap), or run the steps one after another"),
    S("pbs-node-failure", "node", ("job preempted (node failure)",),
      "the batch system lost the job's node (it could not reach the node's daemon)",
      "job preempted (node failure)", "https://github.com/cBio/cbio-cluster/issues/188",
      "resubmit without that node; the admins check it"),
    # --- node: the GPU or the machine ---
    S("ecc-uncorrectable", "node", ("uncorrectable ECC error",),
      "the GPU hit an uncorrectable ECC memory error: the hardware, not the code",
      "RuntimeError: CUDA error: uncorrectable ECC error encountered",
      "https://github.com/jade-hpc-gpu/jade-hpc-gpu.github.io/issues/194",
      "drain the node and reset the GPU (clusterdoc check: ECC, row remapping); resubmit without it"),
    S("gpu-off-bus", "node", ("fallen off the bus",),
      "a GPU fell off the PCIe bus (XID 79): the node needs a reset",
      "NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.",
      "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1151",
      "drain the node, reboot it; resubmit without it"),
    S("xid", "node", ("NVRM: Xid",),
      "the GPU driver logged an XID (a GPU error): see which one (clusterdoc check reads them)",
      "NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.",
      "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1151",
      "clusterdoc check on the node (its XIDs and what each means); drain it if it is a hardware XID"),
    S("rm-init-adapter", "node", ("RmInitAdapter failed",),
      "the GPU driver could not bring up a GPU (NVRM RmInitAdapter): the GPU or its slot is failing",
      "[   39.147720] NVRM: RmInitAdapter failed! (0x26:0xffff:1127)", "https://github.com/microsoft/pai/issues/4344",
      "drain the node (a GPU is gone: nvidia-smi shows fewer); reboot or replace it; resubmit without it"),
    S("cuda-not-initialized", "node", ("system not yet initialized",),
      "CUDA could not start: the node's GPU system is not initialized (NVSwitch machines: the fabric manager is not "
      "running)", "Cuda failure 802 'system not yet initialized'",
      "https://github.com/hiyouga/LlamaFactory/issues/8968",
      "start the node's nvidia-fabricmanager (systemctl status nvidia-fabricmanager) or drain it; resubmit elsewhere"),
    S("gpu-no-handle", "node", ("Unable to determine the device handle for GPU",),
      "the driver lost a GPU (nvidia-smi cannot reach it): the GPU or its PCIe link failed",
      "Unable to determine the device handle for GPU0000:03:00.0: Unknown Error",
      "https://github.com/rwth-i6/returnn/issues/1486",
      "drain the node, reboot it (its kernel log: XIDs, PCIe AER errors); resubmit without it"),
    S("gpu-lost", "node", ("ERROR_GPU_IS_LOST",),
      "NVML lost the GPU (it fell off the bus)",
      "failed to get device remapped rows: ERROR_GPU_IS_LOST", "https://github.com/leptonai/gpud/issues/604",
      "drain the node, reboot it; resubmit without it"),
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
    S("sigkill", "oom", ("Signal 9 (SIGKILL) received by PID",),
      "the rank was killed by SIGKILL: the host's OOM killer most often (a time limit, a preemption or a kill -9 "
      "print the same)",
      "  traceback : Signal 9 (SIGKILL) received by PID 14750", "https://github.com/lzhxmu/CPPO/issues/6",
      "look for the OOM killer (dmesg, sacct MaxRSS); less host memory per rank, or more --mem", weak=True),
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
    S("modulefile-missing", "environment", ("Unable to locate a modulefile",),
      "a `module load` failed (Environment Modules): the job runs without the software it asked for",
      "ModuleCmd_Load.c(213):ERROR:105: Unable to locate a modulefile for 'openmpi/4.1.1'",
      "https://github.com/cea-hpc/modules (its ERROR:105 message)", "module avail on the node; the name and version",
      weak=True),
    S("slurm-script-missing", "node", ("execve(): ", "slurm_script", "No such file or directory"),
      "Slurm could not execute the batch script it wrote on the node (its spool directory, or the script's #! "
      "interpreter, missing there)",
      "slurmstepd: error: execve(): /tmp/slurmd/job00089/slurm_script: No such file or directory",
      "tests/fixtures/why/heldout/SOURCES.md (arjuna-46: a GPU node's Slurm tmp directory)",
      "the node's slurmd log and SlurmdSpoolDir (df, its mount); the script's first line (#!) exists on the node; "
      "resubmit without the node meanwhile (--exclude)",
      node=re.compile(r"slurmstepd-" + _NODE + r": "), weak=True),
    S("execve-missing", "environment", ("execve(): ", "No such file or directory"),
      "Slurm could not start the task's command: it is not installed where the task runs (not on that node's PATH)",
      "slurmstepd: error: execve(): torchrun: No such file or directory",
      "https://github.com/CSCfi/pytorch-ddp-examples/issues/1",
      "install it in the job's environment on every node (module load, the container), or call it by its path"),
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
      "CUDA Version=11.3 and torchvision has CUDA Version=11.7.", "https://github.com/mathmanu/edgeai-torchvision/issues/18",
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
    S("nccl-no-socket-if", "environment", ("no socket interface found",),
      "NCCL found no usable network interface (NCCL_SOCKET_IFNAME names one that is not there)",
      "Bootstrap : no socket interface found", "https://github.com/EvolvingLMMs-Lab/open-r1-multimodal/issues/7",
      "set NCCL_SOCKET_IFNAME to an interface every node has (ip -br addr), or unset it"),
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
      "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 10", "https://github.com/verl-project/verl/issues/161",
      "one GPU per rank: torch.cuda.set_device(LOCAL_RANK) before init, CUDA_VISIBLE_DEVICES per rank, the "
      "launcher's GPUs per node equal to its ranks per node"),
    S("nccl-socket-truncated", "desync", ("NET/Socket", "message truncated"),
      "NCCL received a bigger message than the rank expected: the ranks called collectives with different sizes "
      "(or their NCCL settings differ)",
      "transport/net_socket.cc:424 NCCL WARN NET/Socket : peer 192.168.161.30<59210> message truncated :",
      "https://github.com/NVIDIA/nccl/issues/626",
      "make every rank call the same collectives with the same sizes; the same NCCL_* environment on every node"),
    S("collective-mismatch", "desync", ("Detected mismatch between collectives",),
      "the ranks called different collectives (or one with different shapes): TORCH_DISTRIBUTED_DEBUG caught it",
      "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running inconsistent collective: "
      "CollectiveFingerPrint(OpType=ALLGATHER, TensorShape=[41, 256, 8, 8, 8], ...",
      "https://github.com/xljh0520/JOTR/issues/4",
      "make every rank call the same collectives with the same shapes (uneven last batch: drop_last=True)"),
    S("nccl-mismatched", "desync", ("Mismatched collective detected",),
      "NCCL saw ranks call different collectives (or with different sizes)",
      "init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank "
      "39. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs",
      "https://github.com/NVIDIA/nccl/issues/296",
      "make every rank call the same collectives in the same order with the same sizes"),
    # Horovod's coordinator checks that every rank submitted the same op (its controller's "Mismatched ...: One
    # rank ..., but another rank ..." errors): the ranks disagree, as torch's DETAIL check says it
    S("horovod-mismatch", "desync", ("Mismatched ", "One rank "),
      "the ranks submitted different collectives for the same tensor (Horovod's check: shapes, types, op or device "
      "differ between ranks)",
      "tensorflow.python.framework.errors_impl.FailedPreconditionError: Mismatched ALLREDUCE CPU/GPU device "
      "selection: One rank specified device GPU, but another rank specified device CPU.",
      "https://github.com/horovod/horovod/issues/398 (horovod#1559: Mismatched ALLREDUCE tensor shapes)",
      "make every rank build the same graph and tensors (the same shapes, dtypes and devices, in the same order)"),
    # --- round 7: the ranks' disagreement as each library's own check states it (a RuntimeError or an abort that
    # carries it is the ranks' desync, not the code's bug nor a hang) ---
    S("torch-collectives-differ", "desync", ("Collectives differ in the following aspects",),
      "the ranks called different collectives (TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprint check lists how they "
      "differ: op, shapes, dtypes or sequence)",
      "Collectives differ in the following aspects: \t Op type: ALLREDUCEvs BROADCAST",
      "https://github.com/pytorch/pytorch (torch/csrc/distributed/c10d/ProcessGroupWrapper.cpp)",
      "make every rank call the same collectives in the same order with the same shapes"),
    S("ddp-param-sizes", "desync", ("of the same param in process",),
      "DDP found a parameter of another size (or stride) on this rank than on rank 0: the ranks built different "
      "models",
      "RuntimeError: [1]: params[0] in this process with sizes [96, 32] appears not to match sizes of the same "
      "param in process 0.", "https://github.com/pytorch/pytorch (torch/csrc/distributed/c10d/comm.cpp, "
      "verify_params_across_processes)",
      "build the same model on every rank (the same config, vocab size, layers added on rank 0 only)"),
    S("ddp-zero-params", "desync", ("DDP expects same model across all ranks", "inconsistent 0 params"),
      "DDP's parameter-count check read 0 parameters from a rank: that rank never joined the check (behind in its "
      "data setup, or a backend that passed no data), more often than a model without parameters",
      "RuntimeError: DDP expects same model across all ranks, but Rank 1 has 338 params, while rank 0 has "
      "inconsistent 0 params.", "https://github.com/pytorch/pytorch (torch/csrc/distributed/c10d/comm.cpp)",
      "see what the rank with 0 params did at that time (its log); then whether the ranks' models differ",
      weak=True),
    S("ddp-param-count", "desync", ("DDP expects same model across all ranks",),
      "DDP found a different number of parameters on two ranks: the ranks built different models",
      "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 162 params, while rank 1 has "
      "inconsistent 161 params.", "https://github.com/pytorch/pytorch (torch/csrc/distributed/c10d/comm.cpp, "
      "_verify_param_shape_across_processes)",
      "build the same model on every rank (a layer created under `if rank == 0`, a different config per node)"),
    S("deepspeed-rank-disagreement", "desync", ("disagreement between rank0 and rank",),
      "DeepSpeed's check that every rank holds the same values (ZeRO's parameter and partition counts) failed: "
      "the ranks disagree",
      "RuntimeError: disagreement between rank0 and rank3: rank0: [1024, 4], rank3: [1020, 4]",
      "https://github.com/deepspeedai/DeepSpeed (deepspeed/runtime/zero/utils.py, assert_ints_same_as_other_ranks)",
      "make every rank build the same model and the same DeepSpeed config (frozen parameters, the ZeRO stage)"),
    S("gloo-size-mismatch", "desync", ("op.preamble.length <= op.nbytes",),
      "gloo received a bigger message than the rank expected: the ranks called collectives with different sizes "
      "(or different collectives at the same time)",
      "what():  [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] op.preamble.length <= "
      "op.nbytes. 6232 vs 4", "https://github.com/facebookincubator/gloo (gloo/transport/tcp/pair.cc)",
      "make every rank call the same collectives in the same order with the same sizes (an uneven last batch)"),
    S("mpi-truncate", "desync", ("MPI_ERR_TRUNCATE",),
      "MPI received a message bigger than the receive buffer: the sender and receiver disagree on its size "
      "(or a receive matched another message)",
      "[udp012400uds:91098] *** MPI_ERR_TRUNCATE: message truncated", "https://github.com/salilab/imp/issues/758 "
      "(SGpp/DisCoTec#10, 3dem/relion#1052 the same: Open MPI's error class)",
      "make the receive's count and the send's agree (a tag or source that matches another message)"),
    S("mpich-truncate", "desync", ("Message truncated", "buffer size is"),
      "MPI received a message bigger than the receive buffer: the sender and receiver disagree on its size",
      "MPIDI_CH3U_Request_unpack_uebuf(611): Message truncated; 16 bytes received but buffer size is 8",
      "https://github.com/m-a-d-n-e-s-s/madness/issues/113 (pmodels/mpich#879: MPICH's own text)",
      "make the receive's count and the send's agree (a tag or source that matches another message)"),
    S("ddp-unused-params", "code", ("Expected to have finished reduction in the prior iteration",),
      "DDP: the model has parameters that got no gradient (unused in the loss)",
      "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This "
      "error indicates that your module has parameters that were not used i", "https://github.com/open-mmlab/mmagic/issues/419",
      "DistributedDataParallel(find_unused_parameters=True), or make every output take part in the loss"),
    S("device-assert", "code", ("device-side assert triggered",),
      "a CUDA kernel's assertion failed: an index out of range (labels >= classes, bad embedding ids)",
      "RuntimeError: CUDA error: device-side assert triggered",
      "https://github.com/huggingface/pytorch-image-models/issues/1077",
      "rerun with CUDA_LAUNCH_BLOCKING=1 (or on CPU) to see the index; check labels against num_classes"),
    S("kernel-assert", "code", ("Assertion `", "` failed."),
      "a CUDA kernel's assertion failed: an index out of range",
      "/pytorch/aten/src/ATen/native/cuda/ScatterGatherKernel.cu:276: operator(): block: [0,0,0], thread: [26,0,0] "
      "Assertion `idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\"` failed.",
      "https://github.com/huggingface/pytorch-image-models/issues/1077",
      "rerun with CUDA_LAUNCH_BLOCKING=1 (or on CPU) to see the index; check labels against num_classes"),
    S("mpi-abort", "code", ("MPI_ABORT was invoked on rank",),
      "a rank called MPI_Abort: the application stopped itself on an error it detected (its own message is above)",
      "MPI_ABORT was invoked on rank 160 in communicator MPI_COMM_WORLD", "https://github.com/davegill/wrf-coop/issues/17",
      "read that rank's own output before the abort (the model's FATAL/ERROR line: input, configuration, numerics)",
      weak=True),
    S("fortran-sigsegv", "code", ("Program received signal SIGSEGV",),
      "a rank crashed with a segmentation fault in the application (its backtrace names the routine)",
      "  76: Program received signal SIGSEGV: Segmentation fault - invalid memory reference.",
      "https://github.com/E3SM-Project/E3SM/issues/7277",
      "the routine in the backtrace (a debug build: -g -fcheck=all; the input or configuration it reads)"),
    # Intel Fortran's runtime (ifort, ifx) prints its own line and a traceback of the routines
    S("ifort-sigsegv", "code", ("SIGSEGV, segmentation fault occurred",),
      "a rank crashed with a segmentation fault in the application (its traceback names the routine and line)",
      "2680: forrtl: severe (174): SIGSEGV, segmentation fault occurred",
      "https://github.com/E3SM-Project/E3SM/issues/3085",
      "the routine in the traceback after it (a debug build: -g -traceback -check all; the input it reads there)"),
    S("srun-task-segv", "code", ("srun: error: ", ": Segmentation fault"),
      "a task crashed with a segmentation fault (srun names it and its node)",
      "srun: error: frontier06754: task 11634: Segmentation fault", "https://github.com/E3SM-Project/scream/issues/2519",
      "that task's own output (srun --label) for its backtrace; a debug build shows where",
      node=re.compile(r"srun: error: " + _NODE + r": task")),
    S("mpirun-sigkill", "oom", ("mpirun noticed that process rank", "exited on signal 9"),
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
    S("no-module", "environment", ("No module named ",),
      "a module could not be imported: a package missing from this environment, or the script run from another folder",
      "Invalid MIT-MAGIC-COOKIE-1 key/usr/bin/python3: No module named run",
      "https://github.com/clvrai/skill-chaining/issues/4",
      "install the package in the job's environment (the same on every node), or run from the folder that has it"),
    S("illegal-access", "code", ("an illegal memory access was encountered",),
      "a CUDA kernel read or wrote out of bounds (the code or an extension; an XID 13/31 names the node rarely)",
      "RuntimeError: CUDA error: an illegal memory access was encountered",
      "https://github.com/zai-org/CodeGeeX/issues/160",
      "rerun with CUDA_LAUNCH_BLOCKING=1; if it moves between nodes, check their XIDs (clusterdoc check)"),
    S("unspecified-launch-failure", "code", ("unspecified launch failure",),
      "a CUDA kernel failed without saying why: the code, or the GPU (XID 13/31/43 in the node's kernel log)",
      "RuntimeError: CUDA error: unspecified launch failure", "https://github.com/ultralytics/yolov5/issues/1752",
      "clusterdoc check on the node (its XIDs decide: hardware or the code); rerun with CUDA_LAUNCH_BLOCKING=1",
      weak=True),
    # --- network: the link itself ---
    S("no-route", "network", ("No route to host",),
      "a rank could not reach another's address: the route or the interface NCCL picked is wrong",
      "socketStartConnect: Connect to 192.168.19.14<52822> failed : No route to host",
      "https://github.com/hkproj/pytorch-transformer-distributed/issues/1",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on; "
      "clusterdoc check (net) on the nodes"),
    S("ib-completion-error", "network", ("NET/IB", "completion", "error 12"),
      "InfiniBand gave up on a transfer (status 12: transport retry counter exceeded): a link, a port or a peer HCA",
      "transport/net_ib.cu:781 WARN NET/IB : Got completion with error 12, opcode 1, len0, vendor err 129",
      "https://github.com/horovod/horovod/issues/147",
      "clusterdoc check --perf on the nodes (ibstat, link errors); NCCL_IB_HCA to the working ports"),
    S("ib-completion-status-12", "network", ("Got completion from peer", "status=12"),
      "InfiniBand gave up on a transfer (status 12: transport retry counter exceeded, vendor err 129): the link, "
      "a port, the peer's HCA or the RoCE/routing between the two addresses",
      "kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer "
      "10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid "
      "fd00:1148:9000:5000:4:200:3:ff22 remoteGidsfd00:1148:9000:5000:4:200:3:ff1f",
      "https://github.com/NVIDIA/nccl/issues/1405",
      "clusterdoc check --perf on the two nodes (ibstat, link errors, the routes between the addresses the line "
      "names); NCCL_IB_HCA to the working ports"),
    S("ib-async-fatal", "network", ("NET/IB", "async", "error"),
      "the InfiniBand adapter reported a fatal event (a catastrophic error of the HCA, a queue pair's fatal "
      "access or transport error): the link or the adapter of the node that printed it",
      "container-e275-1553839402050-12124-01-000057:815:864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got "
      "async event : local catastrophic error", "https://github.com/NVIDIA/nccl/issues/230",
      "clusterdoc check --perf on that node (ibstat, the port's error counters, dmesg for mlx5); resubmit without it "
      "meanwhile (--exclude)"),
    S("ib-completion-any", "network", ("NET/IB", "completion", "with error"),
      "InfiniBand failed a transfer (a work completion with an error status: the link, a port, the peer's HCA, "
      "the GID/RoCE setup between the two addresses)",
      "H100-2:19989:20082 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer fe80::966d:ae03:"
      "8b:df78%ib0<53249> with error 4, opcode 32564, len 32564, vendor err 81 (Send)",
      "https://github.com/NVIDIA/nccl/issues/928",
      "clusterdoc check --perf on the nodes (ibstat, ibv_devinfo, link errors); NCCL_IB_HCA and NCCL_IB_GID_INDEX"),
    S("ucx-unreachable", "network", ("Destination is unreachable",),
      "UCX found no transport to reach another rank's address (an interface the other host cannot reach: a docker "
      "bridge, the wrong NIC)",
      "pml_ucx.c:424  Error: ucp_ep_create(proc=3) failed: Destination is unreachable",
      "https://github.com/NVIDIA/nccl-tests/issues/180 (and deepops-1199)",
      "pin the interface (UCX_NET_DEVICES, mpirun -x UCX_TLS / --mca btl_tcp_if_exclude docker0,lo)"),
    S("name-not-resolved", "network", ("Name does not resolve",),
      "a host name did not resolve (DNS: the master's or a peer's name is not known where this ran)",
      "nslookup: can't resolve 'dlc1dwuhvtro4c27-master-0': Name does not resolve",
      "https://github.com/modelscope/ms-swift/issues/6368",
      "use an address the nodes resolve (MASTER_ADDR as an IP), or wait for the cluster's DNS entry"),
    S("ucx-ib-retry-exceeded", "network", ("Transport retry count exceeded",),
      "InfiniBand gave up on a transfer (UCX: transport retry count exceeded, NCCL's status 12): the link, a "
      "port, or the peer's adapter",
      "[r1i6n33:1546795:0:1546795] ib_mlx5_log.c:139  Transport retry count exceeded on mlx5_0:1/IB (synd 0x15 "
      "vend 0x81 hw_synd 0/0)", "https://github.com/hemelb-codes/hemelb/issues/813",
      "clusterdoc check --perf on the node (ibstat, link errors) and its peers; UCX_NET_DEVICES to the working ports",
      node=re.compile(r"\[" + _NODE + r":\d{1,10}:")),
    # a fabric's completion error in the words of the other NCCL network plugins: libfabric's (NET/OFI: EFA,
    # Slingshot/CXI) "completed with error" names a transfer the fabric could not deliver, as IB's status 12 does
    S("ofi-completion-error", "network", ("NET/OFI", "completed with error"),
      "the fabric (libfabric: EFA, Slingshot) could not deliver a transfer (UNDELIVERABLE, EHOSTUNREACH): a link, "
      "a port, or the peer's endpoint",
      "NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0",
      "https://github.com/NVIDIA/nccl/issues/1928",
      "clusterdoc check --perf on the nodes (fi_info, the fabric's port counters: cxi_stat, the EFA's); "
      "FI_PROVIDER and NCCL_NET to the plugin the nodes share"),
    # bringing a queue pair up to its peer (INIT -> RTR -> RTS) failed: the addressing between the two ports (the
    # GID index, RoCE's routing or VLAN, a rail the peer is not on), whatever errno the verbs call returns
    S("ib-modify-qp", "network", ("ibv_modify_qp failed",),
      "InfiniBand/RoCE could not connect a queue pair to its peer (ibv_modify_qp): the addressing between the two "
      "ports (the GID index, RoCE routing, a rail the peer is not on)",
      "NCCL WARN Call to ibv_modify_qp failed with error Connection timed out",
      "https://github.com/NVIDIA/nccl/issues/769 (and nccl#2013's rail-only fabric: \"failed with 110\")",
      "NCCL_IB_GID_INDEX (show_gids: the RoCE v2 index), NCCL_IB_HCA to the ports that reach each other; "
      "clusterdoc check --perf between the two nodes"),
    # gloo could not connect every pair of ranks (its TCP mesh): the interface it picked does not reach the others
    S("gloo-full-mesh", "network", ("connectFullMesh failed",),
      "gloo could not connect its ranks to each other (its TCP mesh): the interface it picked does not reach the "
      "other nodes (a container's bridge, another subnet, a firewall)",
      "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
      "https://github.com/vllm-project/vllm/issues/5094 (and gpustack#2125, two docker nodes)",
      "set GLOO_SOCKET_IFNAME (and NCCL_SOCKET_IFNAME) to the interface the nodes reach each other on; containers: "
      "--network=host"),
    S("link-local-connect", "network", ("Connect to 169.254.",),
      "NCCL connected to a link-local address (169.254.x.x): it picked an interface the other node cannot reach",
      "socketStartConnect: Connect to 169.254.0.1<40815> failed : Software caused connection abort",
      "https://github.com/verl-project/verl/issues/726",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on"),
    S("link-local-connect6", "network", ("Connect to fe80:",),
      "NCCL connected to an IPv6 link-local address (fe80::): it picked an interface the other node cannot reach "
      "(a container's veth, docker0)",
      "NCCL WARN Connect to fe80::a480:7fff:fecf:1ed9%13<45166> failed : Network is unreachable",
      "https://github.com/Oneflow-Inc/DLPerf (its report's NCCL troubleshooting section)",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on"),
    S("net-unreachable", "network", ("Network is unreachable",),
      "a rank could not reach another's address (no route on the interface NCCL picked: a link-local fe80:: or a "
      "container bridge address, or a fabric port down)",
      "dgxh100-3:225140:225355 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is "
      "unreachable", "https://github.com/NVIDIA/nccl-tests/issues/185",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on; "
      "clusterdoc check (net) on the nodes"),
    S("nccl-no-net", "environment", ("Could not find NET with id",),
      "NCCL's topology has no network device it can use for this path (NIC merging of NCCL 2.26, or a container "
      "that does not see the node's NICs)",
      "NCCL WARN Could not find NET with id 0", "https://github.com/NVIDIA/nccl/issues/1748",
      "use the NCCL torch ships (2.27+ fixes the merge), or NCCL_NET_MERGE_LEVEL=LOC; give the container the NICs"),
    # --- code: the script's own arguments ---
    S("argparse-unrecognized", "code", ("error: unrecognized arguments",),
      "the script's argument parser rejected an argument (a launcher passes --local-rank/--local_rank, or a typo)",
      "main.py: error: unrecognized arguments: --local-rank=0", "https://github.com/skycrapers/TecoGAN-PyTorch/issues/31",
      "accept the argument the launcher passes (torchrun sets LOCAL_RANK in the environment; "
      "torch.distributed.launch passes --local-rank), or fix the command line"),
    S("argparse-required", "code", ("error: the following arguments are required",),
      "the script's argument parser is missing a required argument",
      "train.py: error: the following arguments are required: 0", "https://github.com/megvii-research/NAFNet/issues/112",
      "pass the argument on the command line after the script's name (launcher options go before it)"),
    S("argparse-invalid", "code", (": error: argument ",),
      "the command line has an argument its parser rejects (a value of the wrong type, an unknown choice, a variable "
      "left unexpanded)",
      "main/0 torchrun: error: argument --node-rank/--node_rank: invalid int value: '$AWS_BATCH_JOB_NODE_INDEX'",
      "https://github.com/meta-pytorch/torchx/pull/759",
      "fix the value on the command line (a shell variable must be expanded where the command is built)"),
    S("python-no-script", "code", ("can't open file '", "No such file or directory"),
      "the interpreter could not open the script it was told to run: the command names a file that is not there",
      "/usr/bin/python3: can't open file 'train_jonas.py': [Errno 2] No such file or directory",
      "https://github.com/fdbtrs/IDiff-Face/issues/6 (and ROMP-230: a module given as a file name)",
      "fix the script's path in the launch command (a module is run with python -m, or torchrun -m)"),
    S("ompi-tcp-connect", "network", ("unable to complete a TCP connection",),
      "Open MPI's processes could not reach each other over TCP (a firewall, or an interface the other host cannot "
      "reach: containers on different hosts)",
      "A process or daemon was unable to complete a TCP connection", "https://github.com/open-mpi/ompi/issues/12103",
      "open the ports between the hosts (or the containers' network: --network host), and pin the interface "
      "(mpirun --mca btl_tcp_if_include / oob_tcp_if_include)"),
    S("ssh-no-auth", "environment", ("No authentication methods available",),
      "the launcher could not log in to another node over SSH (no key set up between the nodes)",
      "Error: failed to run torchrun --nproc_per_node=4 --nnodes=2 --node_rank=1 --rdzv_backend=c10d "
      "--rdzv_endpoint=ip:29501 --rdzv_id=colossalai-default-job train.py --strategy colossalai_zero2 on gpu-1648, is "
      "localhost: False, exception: No authentication methods available", "https://github.com/hpcaitech/ColossalAI/issues/3066",
      "passwordless SSH between the nodes (clusterdoc check tests it), or launch each node's torchrun yourself",
      node=re.compile(r" on " + _NODE + r", is localhost")),
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
      node=re.compile(r" on " + _NODE + r", is localhost")),
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
    S("ssh-host-key", "environment", ("Host key verification failed",),
      "the launcher's SSH to another node refused the node's host key (unknown, or changed since a reinstall)",
      "Host key verification failed.", "https://github.com/pmodels/mpich/issues/4712",
      "add the nodes to known_hosts (ssh-keyscan), or ask the admins for the cluster's ssh_known_hosts"),
    S("horovod-stalled", "hang", ("submitted to be reduced, gathered or broadcasted by subset of ranks",),
      "Horovod: some ranks wait in a collective the others have not submitted (a rank late, stuck or dead, or "
      "ranks submitting different tensors): its stalled ops' ready or missing ranks decide",
      "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are "
      "waiting for remainder of ranks for more than 60 seconds.", "https://github.com/horovod/horovod/issues/336",
      "compare the stalled ops' ranks (HOROVOD_TIMELINE shows them): a rank missing from all is late or dead, "
      "ranks ready for different ops submit different tensors", weak=True),
    # --- a peer went away: the network, or the peer died first (weak alone) ---
    S("peer-reset", "peer", ("Connection reset by peer",),
      "a connection to another rank was reset: the network, or that rank died",
      "worker0-0d9gnb:15:91 [3] include/socket.h 398 NCCL WARN Call to write failed : Connection reset by peer.",
      "https://github.com/NVIDIA/nccl/issues/193", weak=True),
    S("peer-closed-remote", "peer", ("Connection closed by remote peer",),
      "another rank closed its connection: it died (or its node did), or the network dropped it",
      "socketProgress: Connection closed by remote peer dgxh100-sapphire-ib0<40484>",
      "https://github.com/huggingface/accelerate/issues/3413", weak=True),
    S("peer-closed-gloo", "peer", ("Connection closed by peer",),
      "gloo lost its connection to another rank: it died, or the network dropped it",
      "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer "
      "[198.18.16.4]:50353.",
      "tests/fixtures/why/jobs/killed-node3/rank1.err (a real run on the test cluster)", weak=True),
    S("peer-recv-failed", "peer", ("NCCL WARN", "failed : Broken pipe"),
      "a send or receive to another rank failed: it died, or the network dropped it",
      "NCCL WARN Net : Call to recv from 10.200.84.247<49473> failed : Broken pipe",
      "https://github.com/NVIDIA/nccl/issues/795", weak=True),
    S("nccl-remote-error", "peer", ("remote process exiting prematurely",),
      "NCCL: a network error or a remote rank exited first",
      "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
      "https://github.com/huggingface/accelerate/issues/3413", weak=True),
    S("ssh-refused", "environment", ("ssh: connect to host", "Connection refused"),
      "the launcher (mpirun, pdsh) could not log in to a node over ssh: no sshd listening there, a firewall, or "
      "the host name resolves to another address (/etc/hosts): its daemons never started",
      "ssh: connect to host node2 port 22: Connection refused", "https://github.com/open-mpi/ompi/issues/6379",
      "from the launching node: ssh NODE true (passwordless, by the name the hostfile uses; getent hosts NODE); "
      "clusterdoc check --transport ssh on the nodes",
      node=re.compile(r"connect to host " + _NODE + r" port")),
    S("peer-refused", "peer", ("Connection refused",),
      "a rank could not connect to another (not listening: not started yet, or died)",
      "slurmstepd: error: Failed to send MESSAGE_TASK_EXIT: Connection refused",
      "https://github.com/facebookincubator/submitit/issues/1708", weak=True),
    # --- round 8 (issue 41): the sockets and the fabric between nodes in every NCCL version's words. NCCL retries a
    # connect that was refused or timed out (a peer not listening yet); any other errno ends it at once, and is the
    # network under the job: a CNI or firewall that aborts it, an address the node cannot use. Refused, reset and
    # broken-pipe lines are matched above (a peer, weak). Forms: 2.9-2.11 "Connect to A failed : E" (socket.h),
    # 2.12-2.18 "socketStartConnect: Connect to A failed : E", 2.19+ "socketStartConnect: connect to A returned E"
    # and socketPollConnect's (src/misc/socket.cc) ---
    S("nccl-connect-failed", "network", ("socketStartConnect: Connect to ", " failed"),
      "NCCL could not open a connection to another rank's address (an error it does not retry: the network "
      "between the nodes, a CNI or firewall that aborts it, an interface the peer cannot be reached on)",
      "socketStartConnect: Connect to 192.168.102.1<38007> failed : Software caused connection abort",
      "https://github.com/NVIDIA/nccl/issues/1016 (and verl-726: the same abort to a link-local address)",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on; in "
      "Kubernetes the pods' network (its CNI, network policies); clusterdoc check (net) on the nodes",
      unless=("retrying",)),
    S("nccl-connect-returned", "network", ("Connect: connect to ", " returned "),
      "NCCL could not open a connection to another rank's address (an error it does not retry, or a timeout past "
      "its retries: the network between the nodes, a firewall, an interface the peer cannot be reached on)",
      "socketStartConnect: connect to 192.168.102.1<38007> returned Software caused connection abort",
      "https://github.com/NVIDIA/nccl/blob/master/src/misc/socket.cc (socketConnectCheck, NCCL 2.19+: the form it "
      "prints)",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on; "
      "clusterdoc check (net) on the nodes", unless=("retrying",)),
    S("nccl-connect-failed-old", "network", ("NCCL WARN", "Connect to ", " failed : "),
      "NCCL could not open a connection to another rank's address (the network between the nodes, a firewall, an "
      "interface the peer cannot be reached on)",
      "misc/socket.cc:480 NCCL WARN Connect to 10.0.0.2<43211> failed : Connection timed out",
      "https://github.com/NVIDIA/nccl/blob/v2.11.4-1/src/include/socket.h (connectAddress: the form it prints)",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on; "
      "clusterdoc check (net) on the nodes", unless=("retrying",)),
    # NCCL 2.19+ prints a work completion's status as "status=N" (any status but success is a transfer the fabric
    # failed: 12 retry exceeded, 4 local protection, 10 remote access, 13 RNR), the newest as "status=NAME(N)"
    S("ib-completion-status", "network", ("NET/IB", "Got completion from peer", "with status="),
      "InfiniBand failed a transfer (a work completion with an error status: the link, a port, the peer's HCA, "
      "the GID/RoCE setup between the two addresses)",
      "NET/IB : Got completion from peer 10.1.1.2<54862> with status=4 opcode=0 len=0 vendor err 81 (Recv)",
      "https://github.com/NVIDIA/nccl/blob/master/src/transport/net_ib.cc (ncclIbTest, NCCL 2.19+: the form it prints; "
      "nccl-1405 and nccl-1664 print status=12)",
      "clusterdoc check --perf on the nodes (ibstat, ibv_devinfo, link errors); NCCL_IB_HCA and NCCL_IB_GID_INDEX"),
    # libfabric's plugin could not read its completion queue at all (fi_cq_read failed): the fabric's device
    S("ofi-cq-read-failed", "network", ("NET/OFI", "Unable to retrieve completion queue entries"),
      "the fabric (libfabric: EFA, Slingshot) failed: its completion queue could not be read (the device or its "
      "provider)",
      "NET/OFI Unable to retrieve completion queue entries. RC: -5, ERROR: Input/output error",
      "https://github.com/aws/aws-ofi-nccl (src/nccl_ofi_sendrecv.cpp, nccl_ofi_rdma.cpp: the form ofi_process_cq "
      "prints)",
      "clusterdoc check --perf on the nodes (fi_info, the fabric's port counters); FI_PROVIDER and NCCL_NET to "
      "the plugin the nodes share"),
    # the verbs call that reads completions failed itself (NCCL's ibvwrap): the adapter, not a transfer
    S("ibv-poll-cq-failed", "network", ("Call to ibv_poll_cq() returned",),
      "InfiniBand's completion queue could not be read (ibv_poll_cq failed): the adapter or its driver on that node",
      "node1:3468:3905 [4] misc/ibvwrap.cc:199 NCCL WARN Call to ibv_poll_cq() returned -5",
      "https://github.com/NVIDIA/nccl/blob/master/src/misc/ibvwrap.cc (wrap_ibv_poll_cq: the form it prints)",
      "clusterdoc check --perf on that node (ibstat, ibv_devinfo, dmesg for mlx5); resubmit without it meanwhile"),
    # Open MPI's openib BTL: a completion with an error status, and its help text for status 12, the line wrapped
    # after "with status" as often as not ("from NODE to: PEER error polling LP CQ with status RETRY EXCEEDED ...")
    S("ompi-openib-cq-error", "network", ("error polling ", "CQ with status"),
      "InfiniBand failed a transfer between two MPI processes (Open MPI's openib: a completion with an error "
      "status, 12 the retry count exceeded): the link, a port or the peer's adapter",
      "[[718,1],20][btl_openib_component.c:2902:handle_wc] from node-0-22.local to: node-0-2 error polling LP CQ "
      "with status RETRY EXCEEDED ERROR status number 12 for wr_id 38996224 opcode 0 qp_idx 0",
      "https://github.com/open-mpi/ompi/blob/v4.1.x/opal/mca/btl/openib/btl_openib_component.c (handle_wc: the "
      "form it prints; the users' list has it from many sites)",
      "clusterdoc check --perf on the two nodes the line names (ibstat, link error counters); the fabric's "
      "manager (ibdiagnet) for the path between them",
      node=re.compile(r"handle_wc\] from " + _NODE + r" to: ")),
    S("ompi-ib-retry-exceeded", "network", ("InfiniBand retry count between two MPI processes",),
      "InfiniBand gave up on a transfer between two MPI processes (the retry count exceeded): the link, a port or "
      "the peer's adapter",
      "The InfiniBand retry count between two MPI processes has been exceeded.",
      "https://github.com/open-mpi/ompi/blob/v4.1.x/opal/mca/btl/openib/help-mpi-btl-openib.txt (pp retry "
      "exceeded: the form it prints)",
      "clusterdoc check --perf on the nodes (ibstat, link error counters); Open MPI's help text names the host and "
      "its peer on the lines after it"),
    # NCCL's socket transport found no interface to use (NCCL_SOCKET_IFNAME names none there): as its bootstrap's
    S("nccl-net-socket-no-if", "environment", ("NET/Socket : no interface found",),
      "NCCL found no usable network interface (NCCL_SOCKET_IFNAME names one that is not there)",
      "node1:3468:3905 [0] NCCL WARN NET/Socket : no interface found",
      "https://github.com/NVIDIA/nccl/blob/master/src/transport/net_socket.cc (ncclNetSocketInit: the form it "
      "prints; its bootstrap's twin: mftcoder-31, mambatree-14)",
      "set NCCL_SOCKET_IFNAME to an interface the node has (ip -br addr), the one the nodes reach each other on"),
    # torch's ProcessGroupNCCL in its own words for a rank stuck (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp),
    # thin alone: the heartbeat monitor found the rank's watchdog itself stuck (a NCCL/CUDA call that never returned:
    # the rank that prints it is the stuck one); a dump signal is a rank told that ANOTHER timed out (the rank named
    # there noticed first: a witness, never the culprit)
    S("torch-heartbeat-stuck", "hang", ("Heartbeat monitor timed out",),
      "the rank's watchdog was stuck (a NCCL or CUDA call that never returned): torch's heartbeat monitor ended it",
      "[rank25]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 25] Heartbeat monitor timed out! Process will be terminated "
      "after dumping debug info. workMetaList_.size()=2",
      "https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the form its "
      "heartbeat monitor prints)",
      "py-spy dump --native on the rank (where its NCCL/CUDA call waits); the other ranks' logs at that time; "
      "clusterdoc check on its node (XIDs)", weak=True),
    S("torch-watchdog-stuck", "hang", ("watchdog got stuck for", "without making progress"),
      "the rank's watchdog was stuck (a NCCL or CUDA call that never returned): torch's heartbeat monitor ended it",
      "[rank25]:[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank 25] ProcessGroupNCCL's watchdog got stuck for 600 seconds "
      "without making progress in monitoring enqueued collectives.",
      "https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the form its "
      "heartbeat monitor prints)",
      "py-spy dump --native on the rank (where its NCCL/CUDA call waits); the other ranks' logs at that time; "
      "clusterdoc check on its node (XIDs)", weak=True),
    S("torch-dump-signal", "hang", ("Received a dump signal",),
      "another rank's collective timed out and this rank was told to dump its flight recorder: a rank never joined "
      "a collective (which one, the dumps say)",
      "[PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump signal due to a collective timeout from rank 3 and we "
      "will try our best to dump the debug info.",
      "https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the form it "
      "prints)",
      "read the flight recorder's dumps (TORCH_NCCL_DEBUG_INFO_TEMP_FILE; torch's fr_trace tool names the rank "
      "that never joined); the other ranks' logs", weak=True),
    S("torch-global-timeout", "hang", ("Received a global timeout from another rank",),
      "another rank's collective timed out and this rank was told to dump its flight recorder: a rank never joined "
      "a collective (which one, the dumps say)",
      "[PG 0 Rank 2] Received a global timeout from another rank and will start to dump the debug info.",
      "https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the form it "
      "prints)",
      "read the flight recorder's dumps (TORCH_NCCL_DEBUG_INFO_TEMP_FILE; torch's fr_trace tool names the rank "
      "that never joined); the other ranks' logs", weak=True),
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
      "or make the host name resolve to the node's own address (getent hosts $(hostname))"),
    # MPICH's ch4:ofi (Cray MPICH, Intel MPI) could not complete a transfer on the fabric: a Slingshot/CXI resource
    # (PTLTE_NOT_FOUND, VNI_NOT_FOUND: HPE answers with FI_CXI_* settings) or the NIC libfabric picked (a VPN's on a
    # laptop, at MPI_Finalize): the fabric or its settings, thin alone
    S("mpich-ofi-poll", "network", ("OFI poll failed",),
      "MPICH's libfabric layer got an error completion: the fabric, or the provider's settings and the NIC it picked",
      "MPIDI_OFI_handle_cq_error(1062): OFI poll failed (ofi_events.c:1064:MPIDI_OFI_handle_cq_error:Input/output "
      "error - PTLTE_NOT_FOUND)",
      "https://github.com/pmodels/mpich/blob/main/src/mpid/ch4/netmod/ofi/ofi_events.c (MPIDI_OFI_handle_cq_error, "
      "errnames.txt's **ofid_poll: the form it prints)",
      "the error after the file name decides: a CXI resource (PTLTE_NOT_FOUND, VNI_NOT_FOUND: the site's FI_CXI_* "
      "settings), the NIC libfabric picked (FI_PROVIDER, FI_TCP_IFACE), else the fabric (clusterdoc check --perf)",
      weak=True),
    # Open MPI 4/5's TCP BTL help text (help-mpi-btl-tcp.txt, "client connect fail"): a process could not open a
    # connection to a peer's address; users' threads find a docker bridge, a link-local or VPN interface or a
    # firewall each time (its "Local host:" line names the node that printed it)
    S("ompi-tcp-peer-connect", "network", ("failed to TCP connect to a peer MPI process",),
      "Open MPI could not connect two processes over TCP: the interface it picked (a docker bridge, a link-local or "
      "VPN address) or a firewall between the hosts",
      "WARNING: Open MPI failed to TCP connect to a peer MPI process.  This",
      "https://github.com/open-mpi/ompi/blob/v5.0.x/opal/mca/btl/tcp/help-mpi-btl-tcp.txt (client connect fail: "
      "the form it prints)",
      "pin the interface the hosts reach each other on (mpirun --mca btl_tcp_if_include IFACE --mca "
      "oob_tcp_if_include IFACE); open the ports between them"),
    # NCCL's own sanity check on a receive: the sender posted more than this rank's buffer holds. Its source says
    # what it catches: "user collective call count/size mismatches" (the ranks are in different calls)
    S("ib-collective-mismatch", "desync", ("collective mismatch error, local size",),
      "NCCL saw two ranks post different sizes to the same transfer: they are in different collectives (or one "
      "with different shapes)",
      "NET/IB : req 0/1 tag 7 peer 10.1.1.2<39012> collective mismatch error, local size 4096 remote size 8192",
      "https://github.com/NVIDIA/nccl/blob/master/src/transport/net_ib.cc (the receive's sanity check: the form it "
      "prints)",
      "rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL (it names the collective each rank called); look for a collective "
      "under a rank condition or a tensor whose shape differs per rank"),
    # --- an application's own fatal error (session 17): HPC codes check their input, setup and numerics, print
    # what they found and abort (MPI_Abort after it: see mpi-abort). The job's own, as a Python exception is; a
    # message about memory is left to the memory rows (`unless`)
    S("lammps-error-one", "code", ("ERROR on proc ",),
      "the application stopped on an error one process found (LAMMPS' Error::one: the input, the setup or the "
      "numerics: atoms out of range, lost atoms, a list out of space)",
      "ERROR on proc 17: Out of range atoms - cannot compute PPPM (src/KSPACE/pppm.cpp:1940)",
      "https://github.com/lammps/lammps/issues/2145 (lammps#4186 the same form; src/error.cpp: Error::one)",
      "the message and the input script (timestep, neighbor and kspace settings, the domain decomposition); the "
      "proc named is the rank that failed", unless=("alloc", "memory", "Memory")),
    S("lammps-error-all", "code", ("ERROR: ", " (src/", ".cpp:"),
      "the application stopped on an error in its input or setup (LAMMPS' Error::all: every process agrees)",
      "ERROR: Unknown command: pair_style (src/input.cpp:314)",
      "https://github.com/lammps/lammps/blob/develop/src/error.cpp (Error::all: 'ERROR: {} ({}:{})', the form it "
      "prints)",
      "the input script's line the message names (Last command:), or a package the binary was built without",
      unless=("alloc", "memory", "Memory")),
    S("openfoam-fatal", "code", ("FOAM FATAL",),
      "the application stopped on an error in the case's setup (OpenFOAM's FatalError / FatalIOError: a "
      "dictionary, a mesh, a decomposition, a boundary condition)",
      "[57] --> FOAM FATAL ERROR: (openfoam-2306)",
      "https://github.com/fireFoam-dev/fireFoam-dev/issues/6 (hystrath#7 the same: OpenFOAM's error.C prints it)",
      "the message and the file it names (the case's dictionaries; decomposePar for every region; mpirun -np N "
      "... -parallel)", unless=("alloc", "memory", "Memory")),
    S("qe-error-routine", "code", ("Error in routine ",),
      "the application stopped on an error it found (Quantum ESPRESSO's errore: the input, a pseudopotential "
      "file, or no convergence)",
      "Error in routine tweights (1): bad Fermi energy",
      "https://github.com/QEF/q-e/blob/develop/UtilXlib/error_handler.f90 (errore: 'Error in routine ... (N):', "
      "the form it prints)",
      "the message under it (the input card, pseudo_dir and the file names, the k-points and smearing)",
      unless=("alloc", "memory", "Memory")),
    S("wrf-fatal", "code", ("FATAL CALLED FROM FILE",),
      "the application stopped on an error it found (WRF's wrf_error_fatal: the namelist, the input data, or "
      "the numerics: a CFL violation)",
      "FATAL CALLED FROM FILE: <stdin> LINE: 1591", "https://github.com/davegill/wrf-coop/issues/17",
      "the lines above it in that rank's rsl.error file (the namelist, the domain's input; a smaller time_step for "
      "CFL errors)", unless=("alloc", "memory", "Memory")),
    # an MPI call given an argument it cannot take: the program's bug (Open MPI's error classes, as its
    # MPI_ERRORS_ARE_FATAL handler prints them; ompi/errhandler/errcode.c)
    S("mpi-invalid-arg", "code", ("*** MPI_ERR_", ": invalid "),
      "an MPI call got an argument it cannot take (a communicator, a count, a datatype, a rank, a tag, a root): "
      "the program's call (or a handle from another library's MPI)",
      "*** MPI_ERR_COMM: invalid communicator",
      "https://github.com/NCAR/wrf_hydro_nwm_public/issues/232 (Open MPI's ompi/errhandler/errcode.c: each class's "
      "'MPI_ERR_X: invalid ...', as MPI_ERRORS_ARE_FATAL prints it)",
      "the call named on the line before (An error occurred in MPI_...) and its arguments on every rank (a count "
      "over 2^31, a rank outside the communicator, a communicator freed or never created)",
      unless=("MPI_ERR_FILE",)),
    # --- thin by themselves: a candidate with what decides, never a verdict ---
    S("store-connect-timeout", "network", ("client socket has timed out", "trying to connect to"),
      "a rank could not reach the rendezvous endpoint (MASTER_ADDR:PORT, --rdzv_endpoint) in time: the address is "
      "wrong or unreachable from this node (a firewall, another interface), or the endpoint's node was not up yet",
      "[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to 192.0.0.1:1234",
      "https://github.com/pytorch/pytorch/issues/107021",
      "from this node: nc -zv ADDR PORT while the first node's launcher runs (reachable: the first node started "
      "late, raise the timeout; not: the address or a firewall)", weak=True),
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
    # Open MPI's (ORTE, PRRTE) own help text: "lost communication with its daemon located on node: hostname: X" /
    # "with a remote daemon ... Remote daemon: [[J,0],1] on node X": "either a failure of the TCP network
    # connection to the node, or possibly an internal failure of the daemon itself". The node it names (on the
    # lines after it: why/logs.py) is the one to look at; whether it died or its link did, the line cannot say
    S("mpi-lost-daemon", "node", ("lost communication with", "daemon"),
      "mpirun lost the daemon of another node: that node died or was cut off (or its daemon crashed)",
      "ORTE has lost communication with its daemon located on node:",
      "https://github.com/aws/aws-parallelcluster/issues/301 (and radical.pilot#2164's 'with a remote daemon')",
      "that node's kernel log (the OOM killer, a reboot) and its link (clusterdoc check on it); resubmit without it",
      weak=True),
    S("orte-daemons", "environment", ("ORTE was unable to reliably start one or more daemons",),
      "mpirun could not start its daemons on the other nodes (ssh refused or asking a password, orted not on the "
      "node's PATH, a firewall): no rank ran there",
      "ORTE was unable to reliably start one or more daemons.", "https://github.com/open-mpi/ompi/issues/5639",
      "from the launching node: ssh NODE which orted (passwordless; the same PATH and LD_LIBRARY_PATH), or mpirun "
      "--prefix; the lines above it in the output often say which", weak=True),
    # --- effects: a rank stopping because something else failed ---
    S("nccl-abort", "effect", ("To avoid data inconsistency, we are taking the entire process down",),
      "NCCL's watchdog takes the rank down after a failed or timed-out collective",
      "[E ProcessGroupNCCL.cpp:494] To avoid data inconsistency, we are taking the entire process down.",
      "https://github.com/EleutherAI/lm-evaluation-harness/pull/1404"),
    S("launcher-sigterm", "effect", ("closing signal SIGTERM",),
      "torchrun stops the other ranks after one failed",
      "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3710366 closing signal SIGTERM",
      "https://github.com/codefuse-ai/MFTCoder/issues/31"),
    S("srun-aborted", "effect", ("srun: error: ", "Aborted"),
      "a task aborted (SIGABRT: NCCL's watchdog or a C++ exception took it down)",
      "srun: error: ... Aborted (core dumped)", "https://github.com/alan-turing-institute/autocast/issues/381"),
]  # fmt: skip

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
      "does not load, a full disk, /dev/shm or the open-files limit", "OSError: [Errno 28] No space left on device",
      "clusterdoc/why/foreign.py EXCEPTION_RULES (made from the exception's type and message: no line of its own)",
      "fix what the message names on the node (the library path, the disk, docker --shm-size, ulimit -n)"),
    S("python-exception-unsure", "code", (), "a rank raised an exception whose cause may be outside the code (a "
      "connection, a timeout, a CUDA error no signature names)", "ConnectionResetError: [Errno 104] Connection reset "
      "by peer", "clusterdoc/why/foreign.py EXCEPTION_RULES (made from the exception's type: no line of its own)",
      "read what it was doing: the line before the exception, the other ranks' logs, the node's (dmesg)", weak=True),
    S("segfault-at-exit", "code", (), "a process crashed (a segmentation fault) in a library's cleanup at exit "
      "(MPI_Finalize, atexit, a destructor): after the work, not in the job's own code",
      "Program received signal SIGSEGV: Segmentation fault - invalid memory reference. ... in PMPI_Finalize",
      "clusterdoc/why/foreign.py (a segfault signature with a cleanup frame or line around it: no line of its own)",
      "the backtrace's library (its version against the MPI, NCCL or driver it was built for); the job's output "
      "before it is complete", weak=True),
    S("sigkill-loading", "oom", (), "a rank was killed by SIGKILL while the model's weights were loading: the "
      "host's OOM killer (every rank holds a copy of the weights in host memory at that point)",
      "Loading checkpoint shards:  57% 4/7 ... failed (exitcode: -9) local_rank: 0",
      "clusterdoc/why/foreign.py (a SIGKILL signature right after a loading line: no line of its own)",
      "load the weights once per node or straight to the GPU (low_cpu_mem_usage, device_map), fewer ranks per "
      "node, or more --mem; the node's dmesg shows the OOM killer"),
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
SIGKILL_SIGNS = ("torchrun-sigkill", "deepspeed-sigkill", "sigkill", "mpirun-sigkill", "exit-code-137", "sge-exit-137")
# a command missing where a task ran (environment by themselves; in a log of several nodes, maybe one node's)
MISSING_SIGNS = ("execve-missing", "sh-not-found")
# a request Slurm refused (at submission, or a step's): the same request is refused again, a retry cannot help
REFUSED_SIGNS = ("sbatch-rejected", "sbatch-failed", "srun-step-memory", "slurm-invalid-gres", "salloc-refused",
                 "slurm-assoc-minutes", "site-hour-balance")  # fmt: skip
# a segfault's own lines (code by themselves; a cleanup frame around one makes it segfault-at-exit)
SEGV_SIGNS = ("fortran-sigsegv", "srun-task-segv", "ifort-sigsegv")
_BY_NAME = {s.name: s for s in SIGNATURES + FROM_TRACEBACK}


def get(name: str) -> Signature:
    return _BY_NAME[name]


_FIRST = [(s.needles[0], s.lower, s) for s in SIGNATURES]


def match(line: str) -> Signature | None:
    """The first signature that matches the line (its first LINE_CAP characters), or None."""
    line = line[:LINE_CAP]
    low = line.lower()
    for needle, lower, sig in _FIRST:
        if needle in (low if lower else line) and sig.matches(line, low):
            return sig
    return None
