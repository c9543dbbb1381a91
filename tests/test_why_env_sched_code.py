"""`clusterdoc why --log` round 8 (issue 41): environment, scheduler and code failures as other tools and sites
print them, each from the tool's own message (its source is named beside it: the signature's `source` in
why/signatures.py) or a real log's excerpt (its thread: tests/fixtures/why/*/SOURCES.md). Pure, in memory.
"""

from __future__ import annotations

import pytest

from tests.why_helpers import judge_log

# --- the environment: a driver that does not fit, a CPU build, the launcher's variables, containers, ssh ---
ENVIRONMENT = [
    # the CUDA runtime's strings (cudaGetErrorString) as torch raises them, and the driver API's names
    "RuntimeError: CUDA error: system has unsupported display driver / cuda driver combination\n",
    "cuInit failed: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH\n",
    "RuntimeError: CUDA error: forward compatibility was attempted on non supported HW\n",
    "jax.errors.JaxRuntimeError: INTERNAL: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE\n",
    "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.\n",
    "triton: CUDA_ERROR_UNSUPPORTED_PTX_VERSION\n",
    "cudaErrorNoKernelImageForDevice\n",
    # torch/cuda/__init__.py's own assertion: not the code's AssertionError
    'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    model.cuda()\n'
    "AssertionError: Torch not compiled with CUDA enabled\n",
    # torch/distributed/rendezvous.py: a ValueError that names the launcher's variable, not the code's
    'Traceback (most recent call last):\n  File "train.py", line 12, in <module>\n'
    "    dist.init_process_group('nccl')\n"
    "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable MASTER_ADDR "
    "expected, but not set\n",
    # Apptainer's FATAL line; pyxis (slurmstepd's plugin) and the enroot log it prints after it
    "FATAL:   container creation failed: mount /etc/localtime->/etc/localtime error: while mounting "
    "/etc/localtime: mount source /etc/localtime doesn't exist\n",
    "0: slurmstepd: error: pyxis: container start failed with error code: 1\n"
    "0: slurmstepd: error: pyxis: printing enroot log file:\n"
    "0: slurmstepd: error: pyxis:     [ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1\n",
    'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n',
    # deepspeed-4907 (DeepSpeed's ssh check: ssh exits 255 for its own errors) and the RuntimeError after it
    'Traceback (most recent call last):\n  File "/opt/deepspeed/launcher/runner.py", line 437, in main\n'
    "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 hostname' returned "
    "non-zero exit status 255.\n",
    "RuntimeError: Using hostfile at /job/hostfile but host=10.0.0.2 was not reachable via ssh. If you are running "
    "with a single node please remove /job/hostfile or setup passwordless ssh.\n",
    # MPICH's Hydra and Open MPI's mpirun: the program is not on the node
    "[proxy:0:0@node1] HYDU_create_process (utils/launch/launch.c:74): execvp error on file ./a.out (No such file "
    "or directory)\n",
    "mpirun was unable to launch the specified application as it could not access or execute an executable:\n\n"
    "Executable: ./loc\nNode: node1\n\nwhile attempting to start process rank 0.\n",
    # a file system the job writes to: NFS's stale handle, a read-only remount (an OSError, not the code's)
    'Traceback (most recent call last):\n  File "train.py", line 40, in save\n    torch.save(state, path)\n'
    "OSError: [Errno 116] Stale file handle\n",
    'Traceback (most recent call last):\n  File "train.py", line 40, in save\n    os.makedirs(out)\n'
    "OSError: [Errno 30] Read-only file system: '/data/out'\n",
    "The node was low on resource: ephemeral-storage. Container trainer was using 120Gi, which exceeds its request "
    "of 0.\n",
    # the loader's line with straight quotes (a markdown paste loses the backtick)
    "python: /lib64/libc.so.6: version 'GLIBC_2.34' not found (required by python)\n",
    "bash: orted: command not found\n",  # Open MPI's daemon not on a node's PATH (a plain command stays a candidate)
    # torch.utils.cpp_extension's checks, the GPU lacking a feature: RuntimeError/ValueError, not the code's
    "RuntimeError: Ninja is required to load C++ extensions\n",
    "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n",
    "RuntimeError: Distributed package doesn't have NCCL built in\n",
    "RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n",
    "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0\n",
    # the package managers: pkg_resources' conflict (its type split off as a prefix), a missing distribution
    "pkg_resources.ContextualVersionConflict: (numpy 1.19.0 (/usr/lib), Requirement.parse('numpy>=1.21'), "
    "{'scipy'})\n",
    'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n    import pkg_resources\n'
    "pkg_resources.DistributionNotFound: The 'tokenizers>=0.14' distribution was not found and is required by "
    "transformers\n",
    "PackagesNotFoundError: The following packages are not available from current channels:\n",
    # a file system in any tool's words (strerror's): the DataLoader's shared memory in a small /dev/shm (a
    # RuntimeError: why/disk.py's relabel said it before, the signature says it too), a shell's cp over quota, an
    # NFS mount gone stale
    'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    for b in loader:\n'
    "RuntimeError: unable to write to file </torch_18692_1954506624>: No space left on device (28)\n",
    "cp: cannot create regular file '/scratch/run/ckpt.pt': Disk quota exceeded\n",
    "ls: cannot access '/data/shard-0001': Stale file handle\n",
    # HPC stacks: Cray MPICH's GPU transport, HIP's and rocBLAS' missing architecture, a kernel with no image for
    # the device, Slurm's PMI seeing a task twice, Open MPI's runtime, Horovod built without MPI or Gloo, LAMMPS
    # without a package, Ray's runtime_env, vLLM's bf16 on a V100
    "MPICH ERROR [Rank 0] [job id 14833080.5] [Fri Nov 21 09:21:34 2025] [nid007972] - Abort(-1) (rank 0 in comm "
    "0): MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL library is not linked\n",
    '"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"\nAborted (core dumped)\n',
    "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or directory for GPU "
    "arch : gfx1030\n",
    "RuntimeError: CUDA error: invalid device function\n",
    "srun: error: PMK_KVS_Barrier duplicate request from task 0\n",
    "srun: error: Couldn't find the specified plugin name for mpi/pmi2 looking at all files\n",
    "It looks like orte_init failed for some reason; your parallel process is\nlikely to abort.\n",
    "ValueError: Neither MPI nor Gloo support has been built. Try reinstalling Horovod ensuring that either MPI is "
    "installed (MPI) or CMake is installed (Gloo).\n",
    "ERROR: Unrecognized pair style 'reaxff' is part of the REAXFF package which is not enabled in this LAMMPS "
    "binary. (src/force.cpp:275)\nLast command: pair_style reaxff NULL\n",
    "ray.exceptions.RuntimeEnvSetupError: Failed to set up runtime environment.\nCould not create the actor because "
    "its associated runtime env failed to be created.\n",
    "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-"
    "32GB GPU has compute capability 7.0.\n",
]


@pytest.mark.parametrize("text", ENVIRONMENT)
def test_the_environment_in_each_tools_words(text):
    assert judge_log(text).category == "environment", text


def test_an_invalid_device_ordinal_is_the_launch_s_or_the_code_s():
    # more ranks per node than GPUs (the launch line's), or the script pins the global rank's GPU (the code's): a
    # candidate until session 29, when all five settled threads of it in the corpus were one of those two
    cause = judge_log("[rank9]: RuntimeError: CUDA error: invalid device ordinal\n")
    assert cause.category == "code" and cause.ranks == [9], cause.headline


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: No CUDA GPUs are available\n",
        "RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!\n",
    ],
)
def test_no_gpu_visible_is_the_request_or_the_node_not_the_code(text):
    # was "code": the job asked for no GPU, CUDA_VISIBLE_DEVICES hides them, or the node lost them
    cause = judge_log(text)
    assert cause.category == "unknown"
    assert [c.split(":")[0] for c in cause.candidates] == ["environment", "node"]


def test_a_checkpoint_write_cut_short_is_a_candidate_not_the_code():
    # torch.save's zip writer: the disk full or over quota most often (was "code")
    text = (
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    torch.save(m, p)\n'
        "RuntimeError: [enforce fail at inline_container.cc:595] . unexpected pos 1234 vs 5678\n"
    )
    cause = judge_log(text)
    assert cause.category == "unknown" and cause.candidates[0].startswith("environment")


@pytest.mark.parametrize(
    "text, first",
    [
        # SGE's qacct: the master enforced h_rt, h_cpu or h_vmem: run time or memory, its other fields decide
        ("failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit\nexit_status  137\n", "scheduler"),
        # ray-21097: Ray's warning for an actor no node can take (a warning: the autoscaler may still add one)
        ("2021-12-12 08:24:41,346\tWARNING worker.py:1245 -- The actor or task with ID ffffffffffffffff9c08 cannot "
         "be scheduled right now. You can ignore this message if this Ray cluster is expected to auto-scale\n",
         "scheduler"),
    ],
)  # fmt: skip
def test_a_limit_or_a_placement_the_line_leaves_open_is_a_candidate(text, first):
    cause = judge_log(text)
    assert cause.category == "unknown" and cause.candidates[0].startswith(first)


def test_a_conda_activation_error_is_a_candidate():
    # a profile's stale `conda activate` is harmless where the job sets its PATH otherwise: never "code"
    cause = judge_log("CondaError: Run 'conda init' before 'conda activate'\n")
    assert cause.category == "unknown" and cause.candidates[0].startswith("environment")


def test_pdsh_names_the_host_it_could_not_reach_and_leaves_why_open():
    # ssh's own failure: at the start its keys (environment), mid-run a connection lost (the node or the link)
    cause = judge_log("pdsh@node1: node7: ssh exited with exit code 255\n")
    assert cause.category == "unknown" and cause.nodes == ["node7"]
    assert [c.split(":")[0] for c in cause.candidates] == ["environment", "node or network"]


@pytest.mark.parametrize(
    "text, first",
    [
        # pip's failure: the job may go on with what is installed
        ("ERROR: Could not find a version that satisfies the requirement torch==2.9.9 (from versions: none)\n"
         "ERROR: No matching distribution found for torch==2.9.9\n", "environment"),
        # Kubernetes' FailedScheduling: an event a pod that ran later shows too
        ("0/4 nodes are available: 4 Insufficient nvidia.com/gpu.\n", "scheduler"),
    ],
)  # fmt: skip
def test_a_passing_install_or_placement_failure_is_a_candidate(text, first):
    cause = judge_log(text)
    assert cause.category == "unknown" and cause.candidates[0].startswith(first)


# --- the scheduler: the other batch systems' limits, refusals and preemptions ---
SCHEDULER = [
    "srun: error: Unable to allocate resources: Invalid account or account/partition combination specified\n",
    "=>> PBS: job killed: ncpus 5.12 exceeded limit 4\n",  # PBS Pro's MOM (walltime's and mem's were known)
    "qsub: Job exceeds queue resource limits\n",
    "qsub: would exceed queue workq's per-user limit of jobs in 'Q' state\n",
    "qsub: submit error (Unauthorized Request  MSG=group ACL is not satisfied: user jdoe, queue gpu)\n",  # Torque
    "TERM_PREEMPT: job killed after preemption.\nExited with exit code 143.\n",  # LSF's job report
    "TERM_CPULIMIT: job killed after reaching LSF CPU usage limit.\n",
    "Too many processors requested. Job not submitted.\n",  # bsub
    "05/04/2011 03:36:38|  main|node001|W|job 48.1 exceeded hard wallclock time - initiate terminate method\n",
    'Unable to run job: job rejected: the requested parallel environment "mpi" does not exist.\n',  # SGE's qsub
    "0.512s: job.exception type=timeout severity=0 resource allocation expired\nflux-job: task(s) exited with exit "
    "code 142\n",
    "Preempted by pod 6bd8a34b-1c2d on node gpu-node-3\n",  # Kubernetes' scheduler event
    "Job was active longer than specified deadline\n",  # a Kubernetes Job's activeDeadlineSeconds
    "srun: error: Unable to create step for job 55: More processors requested than permitted\n",
    # a pasted `scontrol show job` (its state is the scheduler's own word)
    "   JobState=TIMEOUT Reason=TimeLimit Dependency=(null)\n",
    # Ray's own unschedulable errors (a RayError: was "code")
    "ray.exceptions.ActorUnschedulableError: The actor 3c2a is unschedulable: The node specified via "
    "NodeAffinitySchedulingStrategy doesn't exist any more\n",
]


@pytest.mark.parametrize("text", SCHEDULER)
def test_the_scheduler_in_each_batch_systems_words(text):
    assert judge_log(text).category == "scheduler", text


def test_a_kill_by_the_owner_after_an_error_blames_the_error():
    # LSF's TERM_OWNER, like Slurm's bare CANCELLED, often follows the real failure: the error before it wins
    text = (
        'Traceback (most recent call last):\n  File "train.py", line 7, in <module>\n    cfg["lr"]\nKeyError: '
        "'lr'\nTERM_OWNER: job killed by owner.\nExited with exit code 1.\n"
    )
    assert judge_log(text).category == "code"
    assert judge_log("TERM_OWNER: job killed by owner.\n").category == "unknown"


# --- the code, in compiled runtimes' words ---
CODE = [
    # gfortran's runtime, after the source line
    "At line 652 of file mod_sound.F90 (unit = 10, file = 'namelist.input')\nFortran runtime error: Cannot open "
    "file 'namelist.input': No such file or directory\n",
    "forrtl: severe (24): end-of-file during read, unit 10, file /work/run/input.dat\n",  # Intel Fortran
    "Usage: train.py [OPTIONS]\nTry 'train.py --help' for help.\n\nError: No such option: --lr\n",  # click
    "Could not override 'trainer.gpus'.\nTo append to your config use +trainer.gpus=2\nKey 'gpus' is not in "
    "struct\n",  # Hydra
    # glibc's assert() (CUDA's device-side form was known), before srun's Aborted
    "a.out: main.c:12: main: Assertion `n > 0' failed.\nsrun: error: node1: task 2: Aborted (core dumped)\n",
    # LAMMPS' Error::all (its memory and package errors are oom and environment)
    "ERROR: Lost atoms: original 8000 current 7999 (src/thermo.cpp:486)\nLast command: run 1000\n",
    # libstdc++'s terminate handler for an exception nothing caught
    "terminate called after throwing an instance of 'std::runtime_error'\n  what():  Cannot open mesh file "
    "input/mesh.dat\nAborted (core dumped)\n",
]


@pytest.mark.parametrize("text", CODE)
def test_the_code_in_compiled_runtimes_words(text):
    assert judge_log(text).category == "code", text


def test_a_cpp_terminate_names_the_rank_that_threw():
    text = (
        "[rank3]: terminate called after throwing an instance of 'std::invalid_argument'\n"
        "[rank3]:   what():  mesh size must be positive\n"
    )
    cause = judge_log(text)
    assert cause.category == "code" and cause.ranks == [3]
    # session 25: `what(): stoi` (a string-to-number conversion of a value from outside the log) is a candidate,
    # the rank still named
    cause = judge_log(text.replace("mesh size must be positive", "stoi"))
    assert cause.category == "unknown" and cause.ranks == [3]


def test_torchruns_table_with_its_traceback_field_is_that_exception_and_names_the_rank():
    # the worker's error file printed inside the Root Cause entry (its exception as indented as its field): was
    # "the log names no failure"
    text = (
        "Root Cause (first observed failure):\n[0]:\n  time      : 2024-01-01_00:00:00\n  host      : node1\n"
        "  rank      : 3 (local_rank: 3)\n  exitcode  : 1 (pid: 123)\n  error_file: /tmp/torchelastic_x/error.json\n"
        "  traceback : Traceback (most recent call last):\n"
        '    File "/opt/lib/python3.10/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", '
        "line 346, in wrapper\n      return f(*args, **kwargs)\n"
        '    File "train.py", line 10, in main\n      x = cfg["lr"]\n'
        "  KeyError: 'lr'\n============================================================\n"
    )
    cause = judge_log(text)
    assert cause.category == "code" and "train.py:10" in cause.headline
    assert cause.ranks == [3] and cause.nodes == ["node1"]


def test_torchs_watchdog_thrown_as_cpp_is_not_the_code():
    # c10::DistBackendError from the NCCL watchdog thread: its own lines decide, never "code"
    text = (
        "[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Process group watchdog thread terminated with exception: "
        "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=28956, OpType=ALLREDUCE, "
        "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600071 milliseconds before timing out.\n"
        "[rank1]: terminate called after throwing an instance of 'c10::DistBackendError'\n"
        "[rank1]:   what():  [PG 0 Rank 1] Process group watchdog thread terminated with exception: [Rank 1] "
        "Watchdog caught collective operation timeout\n"
    )
    assert judge_log(text).category != "code"
