"""`clusterdoc why --log` round 5 (issue 41): classes of failure as a field engineer names them, each in the forms
the tools print (NCCL's CUDACHECK, the OFI and verbs plugins, Ray's death notices, Slurm's and the sites'
refusals, the MPI launchers' own help texts). Each case is a small excerpt of a real log (its thread is named
beside it: tests/fixtures/why/*/SOURCES.md) and a variant in another tool's or version's words.
"""

from __future__ import annotations

import pytest

from clusterdoc.why import foreign, verdict
from tests.why_helpers import judge_log

# --- memory exhausted, however the error that carries it is worded ---
NCCL_CUDA_OOM = (  # peft-1703: NCCL 2.19's CUDACHECK puts the error's number first, as the ncclUnhandledCudaError's detail
    "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1691, unhandled cuda error (run with "
    "NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n"
    "ncclUnhandledCudaError: Call to CUDA function failed.\n"
    "Last error:\n"
    "Cuda failure 2 'out of memory'\n"
)


@pytest.mark.parametrize(
    "text",
    [
        NCCL_CUDA_OOM,
        # NCCL 2.18 and older: the WARN line (trtllm-1670)
        "VM-0-16-ubuntu:392:494 [2] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'\n",
        # mmdet-1767: spawned workers unpickling their arguments, their lines glued together
        "    self = reduction.pickle.load(from_parent)MemoryError\nMemoryErrorTraceback (most recent call last):\n",
        # Python's bare MemoryError at a traceback's end, and numpy's
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    x = load()\nMemoryError\n',
        "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 28.6 GiB for an array with shape (3840, 1000000)\n",
    ],
)
def test_memory_exhausted_inside_another_error_is_oom(text):
    assert judge_log(text).category == "oom"


def test_a_cuda_failure_that_is_not_memory_is_not_oom():
    text = NCCL_CUDA_OOM.replace("Cuda failure 2 'out of memory'", "Cuda failure 700 'an illegal memory access'")
    assert judge_log(text).category != "oom"


# --- the fabric or the network between nodes, in each plugin's and transport's words ---
@pytest.mark.parametrize(
    "text, rank",
    [
        # nccl-1928: libfabric's plugin (NET/OFI) as ncclRemoteError's detail, behind torch's rank prefix
        (
            "[rank3]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
            "prematurely.\n[rank3]: Last error:\n[rank3]: NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: "
            "113. Error: 2 (UNDELIVERABLE). Completed length: 0\n",
            3,
        ),
        # nccl-769 (GID index 1) and nccl-2013 (a rail-only fabric, errno first): a queue pair not brought up
        ("_ibvwrap.cc: NCCL WARN Call to ibv_modify_qp failed with error Connection timed out_\n", None),
        (
            "host-01:1:2 [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on "
            "dev mlx_x:1, curr state INIT, next state RTR, local GID index 3\n",
            None,
        ),
        # vllm-5094 (a Ray cluster) and gpustack-2125 (two docker nodes): gloo's TCP mesh
        (
            "ERROR 05-29 04:08:22 worker_base.py:145] RuntimeError: Gloo connectFullMesh failed with "
            "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error\n",
            None,
        ),
        (
            "(RayWorkerWrapper pid=933, ip=50.147.43.24) [rank1]:[E528 08:52:46.164295950 ProcessGroupGloo.cpp:145] "
            "Gloo connectFullMesh failed with [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:144] no error\n",
            1,
        ),
    ],
)
def test_a_fabric_or_mesh_that_could_not_connect_is_the_network(text, rank):
    c = judge_log(text)
    assert c.category == "network", c
    assert rank is None or c.ranks == [rank], c


# --- a node lost, as the launchers that lost it say ---
RAY_NODE_DIED = (  # ray-43751: Ray Train's worker, its fields (ip) before the reason
    "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.\n"
    "\tclass_name: RayTrainWorker\n\tactor_id: 4473bb2424de8ebfec88acc402000000\n\tpid: 6420\n\tip: 10.72.56.3\n"
    "The actor is dead because its node has died. Node Id: 677df2a9020c5db45e755b0078c469e2ce51e05ea093ed3b283505a0\n"
)


def test_a_ray_actor_dead_because_its_node_died_is_that_node():
    c = judge_log(RAY_NODE_DIED)
    assert (c.category, c.nodes) == ("node", ["10.72.56.3"]), c
    # the reason after it says the cluster took the node back (ray-63807): the scheduler, not the node
    preempted = RAY_NODE_DIED + "\tthe actor's node was preempted: simulating node drain\n"
    assert judge_log(preempted).category == "scheduler"
    # its owner died (verl-4242): another process's death, not this node's
    owner = "The actor is dead because its owner has died. Owner Ip address: 10.254.32.19 Owner's node has crashed.\n"
    assert judge_log(owner).category != "node"


@pytest.mark.parametrize(
    "text, node",
    [
        # parallelcluster-301: ORTE's help text, the node on a line after it
        (
            " ORTE has lost communication with its daemon located on node:\n\n   hostname:  "
            "ip-10-15-20-17.ec2.internal\n\n This is usually due to either a failure of the TCP network\n",
            "ip-10-15-20-17.ec2.internal",
        ),
        # radicalpilot-2164: the "remote daemon" form (PRRTE prints the same)
        (
            "ORTE has lost communication with a remote daemon.\n\n  HNP daemon   : [[27407,0],0] on node batch2\n"
            "  Remote daemon: [[27407,0],1] on node d23n02\n",
            "d23n02",
        ),
    ],
)
def test_mpirun_losing_a_daemon_names_its_node_as_a_candidate(text, node):
    # the help text says a failure of the link or of the daemon: the node to look at, not a verdict
    # (radicalpilot-2164's thread settled on the job's own executable)
    c = judge_log(text)
    assert (c.category, c.nodes) == ("unknown", [node]), c
    assert len(c.candidates) >= 2 and c.candidates[0].startswith("node"), c


def test_slurms_batch_script_missing_on_its_node_is_a_candidate_not_the_environment():
    # arjuna-46: the script slurmd wrote to a GPU node's spool; a command missing is the environment's
    c = judge_log("slurmstepd: error: execve(): /tmp/slurmd/job00089/slurm_script: No such file or directory\n")
    assert c.category == "unknown" and c.candidates[0].startswith("node"), c
    c = judge_log("slurmstepd: error: execve(): python3: No such file or directory\n")
    assert c.category == "environment", c


# --- the scheduler or the site refused the job: its account's limits or allocation ---
@pytest.mark.parametrize(
    "text",
    [
        # technotes-7: salloc's refusal (sbatch's own form, "Batch job submission failed", was known)
        "salloc: error: QOSMaxSubmitJobPerUserLimit\nsalloc: error: Job submit/allocate failed: Job violates "
        "accounting/QOS policy (job submit limit, user's size and/or time limits)\n",
        # sirepo-7442: NERSC's submit filter, the account's node hours
        "error: No available node hour balance information for user xxx, account xxx. Cannot proceed.\n",
        # Slurm's reason code for an account whose time allocation is spent
        "sbatch: error: AssocGrpBillingMinutes\n",
    ],
)
def test_an_allocation_refused_by_the_accounts_limits_is_the_scheduler_and_not_retried(text):
    v = verdict.judge(foreign.evidence_from_output(text, "1"))
    assert v.cause is not None and (v.cause.category, v.cause.retry) == ("scheduler", False), v.cause


def test_a_load_balance_error_is_not_the_accounts_balance():
    assert judge_log("ERROR: load balance failed on rank 3\n").category != "scheduler"


# --- the environment: what the MPI, the launcher's SSH or the file system lack ---
@pytest.mark.parametrize(
    "text, nodes",
    [
        # arjuna-172: Open MPI direct-launched by srun without the PMI it was built for (and Open MPI's help text)
        ("srun: error: spank: x11.so: Plugin file not found\nPMI2_Init failed to intialize.  Return code: 1\n", []),
        (
            'The application appears to have been direct launched using "srun",\nbut OMPI was not built with '
            "SLURM's PMI support and therefore cannot\n",
            [],
        ),
        # ompi-9582: PMIx could not open a component
        ("It looks like pmix_init failed for some reason; your parallel process is\n\nlikely to abort.\n", []),
        # colossalai-5213: the launcher's SSH client could not use its key; the node it could not reach
        (
            "Error: failed to run torchrun --nnodes=2 --node_rank=1 pretrain.py on 192.168.1.12, is localhost: False, "
            "exception: not a valid RSA private key file\n",
            ["192.168.1.12"],
        ),
        # dolly-139: a full disk behind a logger's bracketed fields no launcher prints (the exception line read
        # after them; why/disk.py's rule makes it the environment's)
        (
            "2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee] OSError: [Errno 28] No space left on "
            "device\n",
            [],
        ),
    ],
)
def test_what_the_environment_lacks_is_the_environment(text, nodes):
    c = judge_log(text)
    assert (c.category, c.nodes) == ("environment", nodes), c


DUP = "smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000\n"


def test_two_ranks_on_one_gpu_under_mpirun_is_the_scripts_pinning():
    # horovod-3929: mpirun's tagged output; no launcher there gives each rank a GPU (Horovod's docs: the script
    # pins torch.cuda.set_device(hvd.local_rank()))
    assert judge_log("[1,2]<stdout>:" + DUP).category == "code"
    # the same line from torchrun or Ray (verl-161, megatron-661): the launch's placement, the environment
    assert judge_log(DUP).category == "environment"
    assert judge_log("[rank2]:" + DUP).category == "environment"


@pytest.mark.parametrize(
    "text, category, ranks",
    [
        # deepspeed-6892: the JIT build of fused_adam, ninja's exit wrapped in a CalledProcessError (no cause alone)
        (
            "[rank1]:     raise CalledProcessError(retcode, process.args,\n[rank1]: subprocess.CalledProcessError: "
            "Command '['ninja', '-v']' returned non-zero exit status 1.\n",
            "environment",
            [1],
        ),
        ("RuntimeError: Error building extension 'fused_adam'\n", "environment", []),
        # e3sm-3085: Intel Fortran's runtime under srun --label (gfortran's own form was known)
        (
            "2680: forrtl: severe (174): SIGSEGV, segmentation fault occurred\n2680: Image              PC        "
            "        Routine            Line        Source\n2680: e3sm.exe           0000000001916FA0  "
            "radar_simulator_          230  radar_simulator.f90\n",
            "code",
            [2680],
        ),
    ],
)
def test_a_jit_build_is_the_environment_and_a_fortran_runtimes_segfault_the_code(text, category, ranks):
    c = judge_log(text)
    assert (c.category, c.ranks) == (category, ranks), c


# --- one process still preparing the data while the others' wait timed out ---
_WD = (
    "[E ProcessGroupNCCL.cpp:475] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, "
    "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800572 milliseconds before timing out.\n"
)
_TOK = "Running tokenizer on dataset:   {p}%|███▊      | 280000/2969526 [29:55<4:48:08, 155.57 examples/s]"


@pytest.mark.parametrize(
    "text",
    [
        # llamafactory-2424: the tokenizer's bar glued to the watchdog lines of ranks 1-3
        _TOK.format(p=9) + _WD.format(r=2) + _WD.format(r=1) + _WD.format(r=3),
        # axolotl-2684: the c10d store's socket timing out on rank 1 while the prompts are tokenized
        "Tokenizing Prompts (num_proc=64):  92%|█████████▏| 328986/359152 [29:58<12:05, 41.59 examples/s][rank1]:[W516 "
        "14:34:56.854597329 socket.cpp:489] [c10d] waitForInput: socket SocketImpl(fd=79, addr=[localhost]:41170, "
        "remote=[localhost]:29500) timed out after 1800000ms\n",
        # deepspeed-4488: HF datasets' Map, gloo's monitoredBarrier on rank 3
        "Map (num_proc=14):  70%|██████▌   | 652383/930514 [6:39:53<4:31:33, 17.07 examples/s][E ProcessGroupGloo.cpp:"
        "138] Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank "
        "0. Please check rank 0 logs for faulty rank.\n",
    ],
)
def test_a_rank_still_preparing_data_when_the_others_wait_timed_out_is_the_hang(text):
    c = judge_log(text)
    assert (c.category, c.ranks) == ("hang", [0]), c


def test_a_finished_bar_or_a_training_bar_names_no_rank_busy_elsewhere():
    for bar in (_TOK.format(p=100), "Epoch 3:  42%|████▏     | 420/1000 [29:55<30:00, 1.2it/s]"):
        c = judge_log(bar + _WD.format(r=1) + _WD.format(r=2) + _WD.format(r=3))
        assert "preparing the data" not in c.headline, c
    # rank 0 is among the waiting: the bar is another rank's, which the line does not say
    c = judge_log(_TOK.format(p=9) + _WD.format(r=0) + _WD.format(r=1))
    assert c.ranks != [0], c


def test_mpichs_own_abort_line_names_the_process_that_called_it():
    # regcm-20: the model's own fatal check, then MPICH's line; the rank is named whatever the category
    text = (
        " -------------- FATAL CALLED ---------------\n  Fatal in file: mod_sound.F90 at line:      652\n"
        "application called MPI_Abort(comm=0x84000000, 1) - process 0\n"
    )
    assert judge_log(text).ranks == [0]


def test_the_lines_that_name_a_culprit_after_their_signature_pass_the_big_logs_prefilter():
    from clusterdoc.why import logread

    for line in ("   hostname:  ip-10-15-20-17.ec2.internal", "  Remote daemon: [[27407,0],1] on node d23n02",
                 "\tip: 10.72.56.3"):  # fmt: skip
        assert any(w in line.encode() for w in logread.WORDS), line


# --- the batch systems', the kernel's and the allocators' own words for the same classes ---
@pytest.mark.parametrize(
    "text, category",
    [
        ("=>> PBS: job killed: mem 2097152kb exceeded limit 1048576kb\n", "oom"),
        ("=>> PBS: job killed: vmem 9437184kb exceeded limit 8388608kb\n", "oom"),
        ("=>> PBS: job killed: walltime 3650 exceeded limit 3600\n", "scheduler"),
        ("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.\nExited with exit code 137.\n", "oom"),
        ("TERM_RUNLIMIT: job killed after reaching LSF run time limit.\nExited with exit code 140.\n", "scheduler"),
        ("[Tue Mar  5 10:12:01 2024] Out of memory: Killed process 31337 (python) total-vm:98765432kB\n", "oom"),
        ("Memory cgroup out of memory: Killed process 4242 (pt_main_thread) total-vm:1234kB\n", "oom"),
        ("    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n", "oom"),
        (
            "RuntimeError: [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: "
            "you tried to allocate 2359296 bytes. Error code 12 (Cannot allocate memory)\n",
            "oom",
        ),
        # any exception whose message says its allocator ran out (ROCm's HIP, an engine's own)
        ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB\n", "oom"),
        ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8.0G\n", "oom"),
        ("ValueError: batch_size 512 may run out of memory on 16 GB GPUs; use --accumulate\n", "code"),  # a hint
        (
            "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
            "address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use\n",
            "environment",
        ),
    ],
)
def test_other_tools_words_for_the_same_classes(text, category):
    assert judge_log(text).category == category


# a Ray worker dead without a word: the OOM killer since session 23, a candidate beside a fabric error
# (tests/test_why_session23_forms.py)


def test_a_rank_dead_of_sigbus_in_a_pytorch_job_is_its_shared_memory():
    # llamafactory-2206: torchrun's table on every rank (UCX's and the DataLoader's own bus-error lines were known)
    table = "  exitcode  : -7 (pid: 16615)\n  error_file: <N/A>\n  traceback : Signal 7 (SIGBUS) received by PID 16615\n"
    assert judge_log(table).category == "environment"
    # an MPI launcher's bare "Bus error (signal 7)" (mlsh-17, unsettled) is no PyTorch job's table: not decided here
    assert judge_log("APPLICATION TERMINATED WITH THE EXIT STRING: Bus error (signal 7)\n").category == "unknown"


@pytest.mark.parametrize(
    "report, ranks",
    [
        # pytorch-152623: torch's desync report (TORCH_NCCL_DESYNC_DEBUG=1) after rank 0's watchdog line
        (
            "[rank0]:[E515 18:36:47.343377708 ProcessGroupNCCL.cpp:1937] Rank 0\n"
            "         - [0] Timeout at collective: ALLREDUCE, #315\n"
            "         - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:\n"
            "             [7] finished collective #182, but didn't join collective #183 (count from 1)\n"
            "         - Snapshot of ranks' latest states:\n",
            [7],
        ),
        # its other form (TraceUtils.h): a rank that never joined any collective
        (
            " - To our best knowledge, ranks [47] are the lagging ranks that caused this timeout.\n"
            "   They never joined any collectives\n",
            [47],
        ),
    ],
)
def test_torchs_desync_report_names_the_ranks_and_leaves_which_of_its_three_words(report, ranks):
    wd = (
        "[rank0]:[E515 18:36:47 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=241, OpType=ALLREDUCE, NumelIn=6, NumelOut=6, Timeout(ms)=600000) ran for 600086 "
        "milliseconds before timing out.\n"
    )
    c = judge_log(wd + report)
    # "lagging/dead/mismatched": a hang, a dead rank or a desync, which the report does not say
    assert (c.category, c.ranks) == ("unknown", ranks), c
    assert len(c.candidates) >= 3, c


def test_a_traceback_behind_a_loggers_bracketed_fields_is_read_whole():
    # dolly-139 (Metaflow): every line of the traceback behind the same fields; the full disk is why/disk.py's
    fields = "2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160] "
    tb = [
        "Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.7/site-packages/torch/serialization.py", line 379, in save',
        "    _save(obj, opened_zipfile, pickle_module, pickle_protocol)",
        "OSError: [Errno 28] No space left on device",
    ]
    c = judge_log("".join(fields + x + "\n" for x in tb))
    assert c.category == "environment" and "serialization.py:379" in " ".join([c.headline, *c.evidence]), c
    code = tb[:3] + ["KeyError: 'step'"]
    assert judge_log("".join(fields + x + "\n" for x in code)).category == "code"


def test_cray_pals_mpiexec_names_the_rank_that_died_and_its_node():
    # mpich-7605 (Aurora): the first rank it names is the one to look at; what killed it, the line does not say
    text = (
        "x4213c4s7b0n0.hsn.cm.aurora.alcf.anl.gov: rank 27421 died from signal 6\n"
        "x4417c3s5b0n0.hsn.cm.aurora.alcf.anl.gov: rank 48109 died from signal 15\n"
    )
    c = judge_log(text)
    assert (c.category, c.ranks, c.nodes) == ("unknown", [27421], ["x4213c4s7b0n0.hsn.cm.aurora.alcf.anl.gov"]), c


# --- round 6: the wider field's own words (LAMMPS, MPICH, Open MPI, Slurm, Moab, JAX/TF, the loader, the shell) ---
@pytest.mark.parametrize(
    "text, category, ranks",
    [
        # lammps-3526: LAMMPS' allocator under MVAPICH2; its "ERROR on proc N" is the rank that failed first
        ("LAMMPS (23 Jun 2022 - Update 2)\nERROR on proc 617: Failed to reallocate 1650272 bytes for array "
         "comm:buf_send (src/memory.cpp:105)\nLast command: run             100000   # equil for 100 ps\n"
         "ERROR on proc 79: Failed to reallocate 1102864 bytes for array comm:buf_send (src/memory.cpp:105)\n"
         "slurmstepd: error: *** STEP 2489114.1 ON h053 CANCELLED AT 2022-11-15T09:38:39 ***\n", "oom", [617]),
        # es-13 under mpirun: C++'s allocation failure
        ("terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n"
         "[raya:11663] *** Process received signal ***\n", "oom", []),
        # GSI-859: Intel Fortran's behind srun's label
        ("175: read_atms: number of bins with any obs       9836\n175: forrtl: severe (41): insufficient virtual "
         "memory\n175: Image              PC                Routine            Line        Source\n", "oom", [175]),
        # cbio-cluster-251: Torque/Moab's hard limit (its soft limit is a warning)
        ("job deleted\nJob deleted at request of root@mskcc-fe1.local\njob 3132467 exceeded MEM usage hard limit "
         "(2528 > 1126)\n", "oom", []),
        ("slurmstepd: error: Detected 1 oom-kill event(s) in step 997857.batch cgroup. Some of your processes may "
         "have been killed by the cgroup out-of-memory handler.\n", "oom", []),
        ("State: OUT_OF_MEMORY (exit code 0)\n", "oom", []),
        # the GPU runtimes' own allocation errors: the CUDA driver API (JAX, TF), cuDNN, XLA, TensorFlow
        ("E external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_driver.cc:796] failed to allocate 17.79G "
         "(19104890880 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n", "oom", []),
        ("cuDNN failure 2: CUDNN_STATUS_ALLOC_FAILED ; GPU=0 ; hostname=PTNUWCL5099642 ; expr=finder(calgo, "
         "algoPerf)\n", "oom", []),
        ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
         "4770354232 bytes.\n", "oom", []),
        ("Original error: RESOURCE_EXHAUSTED: Failed to allocate request for 176.00MiB (184549376B) on device "
         "ordinal 0\n", "oom", []),
        ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor of shape "
         "[4096] and type float\n", "oom", []),
        # the kernel's OOM killer in a pasted dmesg (ert-7797), ROCm's and the CUDA runtime's names, vLLM's KV cache
        ("2024-04-29T14:55:41,678628+02:00 pool invoked oom-killer: gfp_mask=0x6200ca(GFP_HIGHUSER_MOVABLE), "
         "order=0, oom_score_adj=0\n", "oom", []),
        ("E tensorflow/compiler/xla/stream_executor/rocm/rocm_driver.cc:606] failed to allocate 127.99TiB "
         "(140729850295296 bytes) from device: HIP_ERROR_OutOfMemory\n", "oom", []),
        ("error: 'hipErrorOutOfMemory'(2) at square.cpp:76\n", "oom", []),
        ("cudaErrorMemoryAllocation : out of memory\n", "oom", []),
        ("vllm-1  | ERROR 11-18 18:07:28 engine.py:366] ValueError: No available memory for the cache blocks. Try "
         "increasing `gpu_memory_utilization` when initializing the engine.\n", "oom", []),
        # Horovod's coordinator: the ranks submitted different ops for one tensor (horovod-398, horovod-1559)
        ("[1,2]<stderr>:tensorflow.python.framework.errors_impl.FailedPreconditionError: Mismatched ALLREDUCE "
         "CPU/GPU device selection: One rank specified device GPU, but another rank specified device CPU.\n",
         "desync", [2]),
        # an MPI that cannot start: MPICH (starcluster-406), Open MPI's help text (GCHP-94), its PMI2 (radical-1085)
        ("Fatal error in MPI_Init: Other MPI error, error stack:\nMPIR_Init_thread(392).: \nMPID_Init(139)"
         "..........: channel initialization failed\n", "environment", []),
        ("It looks like MPI_INIT failed for some reason; your parallel process is\nlikely to abort.  There are many "
         "reasons that a parallel process can\n", "environment", []),
        ('"PMI2 failed to initialize, returning an error code of 14.\nWe cannot use PMI2 at this time, and your job '
         'will\nlikely abort."\n', "environment", []),
        # mpich-7957: Slurm's PMIx plugin under MPICH's mpiexec
        ("[2026-09-08T13:01:38.539] error:  mpi/pmix_v4: _process_server_request: c112-002 [0]: "
         "pmixp_server.c:935: 0x40039c008b10: unexpected contrib from c112-003:1, coll->seq=0, seq=0\n",
         "environment", []),
        # the loader: a C library older than the binary's, a library not on the node's path (nccl-872)
        ("gadget: /lib64/libc.so.6: version `GLIBC_2.14' not found (required by gadget)\n", "environment", []),
        ("./build/all_reduce_perf: error while loading shared libraries: libmpi.so.40: cannot open shared object "
         "file: No such file or directory\n", "environment", []),
        # sglang-3512: a bash script under dash
        ("[INFO] Activating environment on node \nrun.sh: 18: source: not found\n[ERROR] Failed to activate "
         "environment\n", "environment", []),
        # the launch command: a script that is not there (idiff-face-6, romp-230: a candidate since session 25, its
        # threads split four to three between the command and the tree it ran in), an argument its parser rejects
        ("/usr/bin/python3: can't open file 'train_jonas.py': [Errno 2] No such file or directory\n", "unknown", []),
        ("/z/home/u/env/romp/bin/python: can't open file 'romp.train': [Errno 2] No such file or directory\n",
         "unknown", []),
        ("main/0 torchrun: error: argument --node-rank/--node_rank: invalid int value: "
         "'$AWS_BATCH_JOB_NODE_INDEX'\n", "code", []),
        # the fabric: any InfiniBand completion error (nccl-928: error 4), UCX with no path (nccl-tests-180)
        ("H100-2:19989:20082 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
         "fe80::966d:ae03:8b:df78%ib0<53249> with error 4, opcode 32564, len 32564, vendor err 81 (Send)\n",
         "network", []),
        ("[10-192-80-132:07356] pml_ucx.c:424  Error: ucp_ep_create(proc=3) failed: Destination is unreachable\n",
         "network", []),
        ("nslookup: can't resolve 'dlc1dwuhvtro4c27-master-0': Name does not resolve\n", "network", []),
    ],
)
def test_the_wider_fields_own_words(text, category, ranks):
    cause = judge_log(text)
    assert (cause.category, list(cause.ranks)) == (category, ranks), cause.headline


@pytest.mark.parametrize(
    "text, not_category",
    [
        ("job 3264830 exceeded MEM usage soft limit\n", "oom"),  # Moab's warning: the job goes on
        # c10d's IPv6 lookup warning: benign, printed by jobs that run fine
        ("[W socket.cpp:601] [c10d] The IPv6 network addresses of (user, 53821) cannot be retrieved (gai error: -3 - "
         "Temporary failure in name resolution).\n", "network"),
        # the loader failing for memory is no missing library
        ("ls: error while loading shared libraries: libpcre.so.3: failed to map segment from shared object: Cannot "
         "allocate memory\n", "environment"),
    ],
)
def test_the_same_words_in_a_warning_or_another_failure_are_not_that_class(text, not_category):
    cause = verdict.judge(foreign.evidence_from_output(text, "1")).cause
    assert cause is None or cause.category != not_category


def test_one_rank_alone_in_a_broadcast_names_rank_0_without_a_verdict():
    """discoscene-5: rank 7 of 8 alone in a BROADCAST: its source (rank 0) is the first candidate and named, but no
    other rank's lines say it was behind (threads settled the same line both ways)."""
    text = (
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  what():  [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=806, OpType=BROADCAST, "
        "Timeout(ms)=1800000) ran for 1801027 milliseconds before timing out.\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 7 (pid: 561642)\n"
    )
    cause = judge_log(text)
    assert cause.category == "unknown" and cause.ranks == [0]
    assert len(cause.candidates) >= 2 and cause.candidates[0].startswith("hang: rank 0")


def test_round_6s_words_pass_the_big_logs_prefilter():
    from clusterdoc.why import logread

    assert any(w in b"ERROR on proc 617: Failed to reallocate" for w in logread.WORDS)


def test_a_module_that_did_not_load_is_a_candidate_not_the_verdict():
    """Lmod's error names what the job lacks, but a profile prints it for stale names in jobs that then fail of
    something else: `unknown`, the environment first (vsc_user_docs-440)."""
    text = ('Lmod has detected the following error: The following module(s) are unknown: "MODULENAME"\n'
            "Please check the spelling or version number. Also try \"module spider ...\"\n")  # fmt: skip
    cause = judge_log(text)
    assert cause.category == "unknown" and cause.candidates and "environment" in cause.candidates[0]
