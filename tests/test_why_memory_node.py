"""Issue 41, round 8: memory exhausted (oom) and the node's own failure (node) in the words of the schedulers, the
runtimes and the codes that print them. Each excerpt is the tool's own message (its source is in the signature's
entry, or beside the excerpt); each class has look-alikes that must not match."""

from __future__ import annotations

import pytest

from clusterdoc.why import foreign, logread, signatures, verdict
from tests.why_helpers import judge_log


@pytest.mark.parametrize(
    "text, rank, node",
    [
        # Slurm's jobacct_gather (src/common/slurm_jobacct_gather.c) with VSizeFactor set
        ("slurmstepd-cn07: error: StepId=1234.0 exceeded virtual memory limit (8589934592 > 4294967296), being "
         "killed\n", None, "cn07"),
        # slurmd's notice of its own memory kill (req.c: 'Exceeded job memory limit', then SIGKILL): no 'at some point'
        ("slurmstepd: error: Exceeded job memory limit\n", None, None),
        # Torque's MOM (adaptivecomputing/torque: msg_momjobovermemlimit), in the job's mail and output
        ("Exit_status=-10\nJob exceeded a memory resource limit (vmem, pvmem, etc.). Job was aborted\n", None, None),
        # PBS Pro's cgroup hook, as sites' docs quote it: '<job_id> Killed Cgroup mem limit exceeded'
        ("3344110.pbs01 Killed Cgroup mem limit exceeded\n", None, None),
        # Grid Engine's execd (execd_ck_to_do.c: MSG_JOB_EXCEEDHLIM_USSFF), the queue's host named
        ('job 2394.1 exceeds job hard limit "h_vmem" of queue "all.q@node12" (20.29G > limit:20.00G) - sending '
         "SIGKILL\n", None, "node12"),
        # Cray ALPS' aprun report (sites' FAQs and log filters quote it)
        ("[NID 04371] 2016-10-19 22:21:28 Apid 23764253: OOM killer terminated this process.\n"
         "Application 23764253 exit signals: Killed\n", None, None),
        # sacct's State column is 10 characters wide: OUT_OF_MEMORY prints cut
        ("       JobID    JobName      State ExitCode\n------------ ---------- ---------- --------\n"
         "12345             train OUT_OF_ME+    0:125\n", None, None),
        # Flux's job shell (flux-core src/shell/oom.c), the host named
        ("flux-shell[0]: ERROR: oom: Memory cgroup out of memory: killed 1 task on node12.\n", None, "node12"),
        # systemd-oomd on a workstation (systemd src/oom/oomd.c)
        ("Sep 21 09:15:58 ws systemd-oomd[581]: Killed /user.slice/user-1000.slice/user@1000.service/app.slice/"
         "run-r1.scope due to memory pressure for /user.slice/user-1000.slice/user@1000.service being 86.80% > "
         "50.00% for > 20s with reclaim activity\n", None, None),
        # HTCondor's hold (htcondor/htcondor: the starter's 'has gone over memory limit')
        ("Job has gone over memory limit of 2048 megabytes. Peak usage: 2100 megabytes.\n", None, None),
        # kubelet's eviction (pkg/kubelet/eviction/helpers.go)
        ("Status:  Failed\nReason:  Evicted\nMessage: The node was low on resource: memory. Container trainer was "
         "using 61Gi, which exceeds its request of 32Gi.\n", None, None),
        # numpy's _ArrayMemoryError, its message alone; OpenFOAM's new-handler; GROMACS' smalloc.cpp
        ("Unable to allocate 28.6 GiB for an array with shape (3840, 1000000) and data type float64\n", None, None),
        ("--> FOAM FATAL ERROR:\n    new cannot satisfy memory request.\n    This does not necessarily mean you have "
         "run out of virtual memory.\n", None, None),
        ("Fatal error:\nNot enough memory. Failed to realloc 8589934592 bytes for nbat->out[0].f, "
         "nbat->out[0].f=0\n", None, None),
        # the runtimes' own words: Go's, the NVIDIA HPC SDK's Fortran (flang's runtime), R's memory.c, Rust's
        # alloc error hook, the JVM's, Dask's nanny, bash's fork, AMReX's CPU arena
        ("fatal error: runtime: out of memory\n", None, None),
        ("0: ALLOCATE: 1683627180072 bytes requested; not enough memory\n", 0, None),
        ("Computing adjacency matrix ...\nError: cannot allocate vector of size 11.8 Gb\nExecution halted\n", None,
         None),
        ("memory allocation of 34359738368 bytes failed\nAborted (core dumped)\n", None, None),
        ('Exception in thread "main" java.lang.OutOfMemoryError: Java heap space\n', None, None),
        ("distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting\n", None, None),
        ("/var/spool/slurmd/job1/slurm_script: fork: Cannot allocate memory\n", None, None),
        ("amrex::Abort::0::Out of memory !!!\n", 0, None),  # appcat: AMReX's abort names its rank
        # Charm++'s allocator (NAMD): src/conv-core/memory.C
        ("Reason: Could not malloc() 1073741824 bytes--are we out of memory?\n", None, None),
        # GPU memory: NCCL's ncclCudaCalloc WARN (nccl-1235), cuSOLVER and XLA's HBM behind an exception (both were
        # the code's before: the exception table read their type), Level Zero's result code, RCCL's HIP failure
        ("ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes\n", None,
         None),
        ("RuntimeError: cusolver error: CUSOLVER_STATUS_ALLOC_FAILED, when calling `cusolverDnCreate(handle)`\n",
         None, None),
        ("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in "
         "memory space hbm. Used 35.83G of 31.25G hbm. Exceeded hbm capacity by 4.59G.\n", None, None),
        ("RuntimeError: level_zero backend failed with error: 20 (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)\n", None,
         None),
        ("[rank3]: RuntimeError: HIP failure 'out of memory'\n", 3, None),
    ],
)  # fmt: skip
def test_memory_exhausted_in_the_tools_own_words_is_oom(text, rank, node):
    cause = judge_log(text)
    assert cause.category == "oom", cause.headline
    assert list(cause.ranks) == ([rank] if rank is not None else []), cause.ranks
    if node:  # the node the line names: in the cause's nodes, or its headline's host
        assert node in cause.nodes or cause.headline.startswith(node), (cause.nodes, cause.headline)


@pytest.mark.parametrize(
    "kill, rank",
    [
        ("srun: error: cn12: task 3: Killed\n", 3),  # srun's report: the task is the rank
        ("/var/spool/slurmd/job1234/slurm_script: line 14:  4321 Killed                  python train.py\n", None),
        ("    exitcode  : -9 (pid: 14750)\n", None),
    ],
)
@pytest.mark.parametrize(
    "limit",
    [
        "slurmstepd-cn12: error: Exceeded step memory limit at some point.\n",
        "slurmstepd-cn12: error: Step 123.0 hit memory+swap limit at least once during execution. This may or may "
        "not result in some failure.\n",
    ],
)
def test_slurms_memory_limit_reached_and_a_task_killed_is_the_memory_kill(kill, rank, limit):
    # Slurm's older task/cgroup prints only 'Exceeded ... memory limit at some point' (or 'hit memory limit at least
    # once') for its memory kill
    cause = judge_log(kill + limit)
    assert cause.category == "oom", cause.headline
    if rank is not None:
        assert cause.ranks == [rank]


@pytest.mark.parametrize(
    "limit",
    [
        "slurmstepd: error: Exceeded job memory limit at some point.\n",
        "slurmstepd-node1: error: Step 123.0 hit memory limit at least once during execution. This may or may not "
        "result in some failure.\n",
    ],
)
def test_slurms_memory_limit_reached_alone_is_a_candidate(limit):
    # printed for jobs that completed too (the page cache counts): no verdict alone, oom its first candidate
    cause = judge_log(limit)
    assert cause.category == "unknown"
    assert len(cause.candidates) >= 2 and cause.candidates[0].startswith("oom"), cause.candidates


def test_a_bare_killed_from_the_job_script_stays_unknown_with_its_candidates():
    # c3nl_cluster#20's one line: the OOM killer, a reboot or an admin could have sent it
    cause = judge_log("/tmp/slurmd/job603995/slurm_script: line 9:  4727 Killed \n")
    assert cause.category == "unknown" and len(cause.candidates) >= 2, cause.candidates


@pytest.mark.parametrize(
    "text, rank, node",
    [
        # the CUDA driver API's and runtime's ECC errors, HIP's; NVML's lost GPU as nvidia-smi prints it
        ("RuntimeError: CUDA driver error: CUDA_ERROR_ECC_UNCORRECTABLE\n", None, None),
        ("[rank2]: cudaErrorECCUncorrectable: uncorrectable ECC error encountered\n", 2, None),
        ("RuntimeError: HIP error: hipErrorECCNotCorrectable\n", None, None),
        ("Unable to determine the device handle for gpu 0000:3B:00.0: GPU is lost.  Reboot the system to recover "
         "this GPU\n", None, None),
        # cudaErrorNvlinkUncorrectable's string (cuda-python: cudaError_t = 220)
        ("[rank5]: RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution\n", 5, None),
        # Slurm's NODE_FAIL state in a pasted sacct table; PBS Pro's requeue of a job whose node went down
        ("       JobID    JobName      State ExitCode\n------------ ---------- ---------- --------\n"
         "12345             train  NODE_FAIL      0:0\n", None, None),
        ("Job requeued, execution node node12 down\n", None, "node12"),
        # slurmctld's log pasted by an admin (ping_nodes.c, node_mgr.c): the node named
        ("[2024-05-01T10:00:00.123] error: Nodes node03 not responding, setting DOWN\n"
         "[2024-05-01T10:00:00.124] Killing JobId=48 on failed node node03\n", None, "node03"),
        # Ray's NODE_DIED task error (src/ray/core_worker/task_manager.cc)
        ("ray.exceptions.NodeDiedError: Task failed due to the node (where this task was running)  was dead or "
         "unavailable.\n", None, None),
        # the kernel's EDAC and machine-check reports (the node's own memory or CPU)
        ("EDAC MC0: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0\n", None, None),
        ("Kernel panic - not syncing: Fatal machine check\n", None, None),
    ],
)  # fmt: skip
def test_the_nodes_own_failure_in_the_tools_words_is_node(text, rank, node):
    cause = judge_log(text)
    assert cause.category == "node", cause.headline
    assert list(cause.ranks) == ([rank] if rank is not None else []), cause.ranks
    if node:
        assert node in cause.nodes, cause.nodes


@pytest.mark.parametrize(
    "text, not_category",
    [
        # hints a healthy job prints
        ("WARNING: To avoid out of memory errors, set --max-tokens lower\n", "oom"),
        ("ValueError: batch_size 512 may run out of memory on 16 GB GPUs; use --accumulate\n", "oom"),
        ("distributed.worker - WARNING - Worker is at 85% memory usage. Pausing worker.\n", "oom"),
        ("If you get an out of memory error, lower --micro-batch-size\n", "oom"),
        ("WARNING: pinned memory allocation failed, falling back to pageable memory\n", "oom"),
        # RDMA's ENOMEM is the locked-memory limit (ulimit -l) first; MPICH's error stack alone is no verdict
        # (round 7: mpich#200 printed it with memory to spare)
        ("node1:12:34 [0] NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory\n", "oom"),
        ("NCCL WARN NET/IB : Failed to register memory: Cannot allocate memory\n", "oom"),
        ("Fatal error in PMPI_Alloc_mem: Out of memory, error stack:\n", "oom"),
        # torch's DataLoader tensor sharing: /dev/shm or the mappings' limit, not memory exhausted
        ("RuntimeError: unable to mmap 1024 bytes from file </torch_4242_2958934837_1>: Cannot allocate memory (12)\n",
         "oom"),
        # NCCL's generic text names malloc; glibc's heap corruption is the code's
        ("ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n",
         "oom"),
        ("malloc(): corrupted top size\n", "oom"),
        ("slurmstepd: error: Exceeded job memory limit at some point.\n", "oom"),
        # a GPU that is merely busy, a driver not reachable at start: not a verdict of node
        ("CUDA error: all CUDA-capable devices are busy or unavailable\n", "node"),
    ],
)  # fmt: skip
def test_look_alikes_are_not_that_class(text, not_category):
    cause = verdict.judge(foreign.evidence_from_output(text, "1")).cause
    assert cause is None or cause.category != not_category, cause.headline


def test_round_8s_words_pass_the_big_logs_prefilter():
    new = [s for s in signatures.SIGNATURES if s.name.startswith("memory-phrase-")] + [
        signatures.get(n)
        for n in ("ibv-enomem", "slurm-exceeded-job-mem", "slurm-exceeded-step-mem", "shell-killed", "sacct-oom-cut",
                  "pbs-cgroup-mem", "sge-hard-mem-limit", "cray-oom-killer", "numpy-unable-to-allocate",
                  "openfoam-new-handler", "nccl-cuda-calloc", "gpu-lib-alloc-failed", "xla-hbm-oom",
                  "slurm-exceeded-vmem", "torque-mem-limit", "htcondor-mem-limit", "k8s-evicted-memory",
                  "dask-memory-budget", "rust-alloc", "r-vector", "flang-allocate", "perl-oom", "java-oom",
                  "device-out-of-memory", "host-out-of-memory-code", "opencl-alloc-failure",
                  "cuda-ecc-uncorrectable", "cudart-ecc-uncorrectable", "hip-ecc", "nvml-gpu-is-lost",
                  "slurm-state-node-fail", "edac-uncorrected", "fatal-machine-check", "nvlink-uncorrectable",
                  "pbs-node-down", "ray-task-node-died", "slurm-hit-memory-limit", "charm-malloc", "flux-oom",
                  "systemd-oomd", "slurm-job-mem-notify",
                  "slurmctld-node-down", "slurmctld-failed-node")
    ]  # fmt: skip
    for sig in new:
        line = sig.learned.encode()
        assert any(w in line for w in logread.WORDS), sig.name


@pytest.mark.parametrize(
    "tasks, ranks",
    [("task 0", [0]), ("tasks 0-3", [])],  # one task: the rank the kill hit; the node's tasks: none of them
)
def test_the_task_srun_reports_killed_after_a_memory_kill_is_the_culprit(tasks, ranks):
    # openbabel#2658 (STAR under srun): slurmstepd's memory kill, then srun's report of the task it hit
    cause = judge_log(
        "slurmstepd-falkor7: error: Step 1141810.0 exceeded memory limit (52917772 > 20971520), being killed\n"
        "srun: Exceeded job memory limit\n"
        "slurmstepd-falkor7: error: *** STEP 1141810.0 ON falkor7 CANCELLED AT 2023-12-13T08:58:22 ***\n"
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
        f"srun: error: falkor7: {tasks}: Killed\n"
    )
    assert (cause.category, list(cause.ranks)) == ("oom", ranks), cause.headline
    assert "falkor7" in cause.headline
