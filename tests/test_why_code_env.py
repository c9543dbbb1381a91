"""`clusterdoc why --log` round 9 (issue 41): the job's own errors and its environment as real pastes show them.
Each case is an excerpt of a real log (its thread beside it; tests/fixtures/why/real/SOURCES.md has the rest), and
each was read otherwise by the rules before this round: a quoted paste, a segfault whose backtrace names nothing,
Open MPI's MPI_Init failing and its PMIx client with no server, NAMD's own fatal line, HDF5's file already open.
"""

from __future__ import annotations

import pytest

from tests.why_helpers import judge_log


def test_a_traceback_quoted_in_a_reply_reads_as_one():
    """mmdet-77 (https://github.com/open-mmlab/mmdetection/issues/77): every line behind a reply's "> "."""
    text = (
        '>   File "/home/wit/py36/lib/python3.6/site-packages/mmdet/apis/env.py", line 27, in _init_dist_pytorch\n'
        ">     rank = int(os.environ['RANK'])\n"
        '>   File "/home/wit/anaconda2/envs/py36/lib/python3.6/os.py", line 669, in __getitem__\n'
        ">     raise KeyError(key) from None\n"
        "> KeyError: 'RANK'\n"
    )
    cause = judge_log(text)
    assert cause.category == "code" and "launcher" in cause.headline, cause.headline


def test_a_prompt_is_no_quote():
    """A REPL's ">>> " is the line's text, not a quote (the exception after it is still read)."""
    cause = judge_log(
        ">>> import torch\nTraceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n    x = y[3]\nIndexError: list index out of range\n'
    )
    assert cause.category == "code", cause.headline


NWCHEM_683 = (  # https://github.com/nwchemgit/nwchem/issues/683: an MSYS2 build, hex frames only
    "Program received signal SIGSEGV: Segmentation fault - invalid memory reference.\n\n"
    "Backtrace for this error:\n#0  0xffb69ada\n#1  0xffadf473\n#2  0xd0805571\n#3  0x61ad7ff7\n"
)


def test_a_segfault_whose_backtrace_names_no_routine_is_unknown():
    cause = judge_log(NWCHEM_683)
    assert cause.category == "unknown", cause.headline
    # session 29: and the memory under it (quick-45's forrtl traceback of Unknown routines: the host's 8 GB)
    assert [c.split(":")[0] for c in cause.candidates] == ["code", "environment", "oom"], cause.candidates


def test_a_segfault_whose_backtrace_names_the_routine_stays_the_code():
    """e3sm-7277 (https://github.com/E3SM-Project/E3SM/issues/7277): `in ???` frames, then the model's routine."""
    text = (
        "  76: Program received signal SIGSEGV: Segmentation fault - invalid memory reference.\n"
        "  76: Backtrace for this error:\n  76: #0  0x14bb7071d862 in ???\n  76: #1  0x14bb7071c8f5 in ???\n"
        "  76: #3  0x4429e55 in __seaice_icepack_MOD_seaice_icepack_reinitialize_diagnostics_bgc\n"
    )
    assert judge_log(text).category == "code"


@pytest.mark.parametrize(
    "text",
    [
        # https://github.com/open-mpi/ompi/issues/7949: srun of an Open MPI 4.0.4 program (mpirun works)
        "*** An error occurred in MPI_Init\n*** on a NULL communicator\n*** MPI_ERRORS_ARE_FATAL (processes in "
        "this communicator will now abort,\n***    and potentially your MPI job)\n",
        # https://github.com/tomgoldstein/loss-landscape/issues/20 (its full-width colon as pasted)
        "OPAL ERROR\uff1a Not initialized in  file pmix3x_client.c at line 113\nAn error occurred in MPI_Init_thread\n",
        # https://github.com/mpi4py/mpi4py/issues/141
        "OPAL ERROR: Unreachable in file pmix3x_client.c at line 112\n*** An error occurred in MPI_Init_thread\n"
        "*** on a NULL communicator\nsrun: error: thor: task 0: Exited with exit code 1\n",
    ],
)
def test_mpi_that_cannot_start_under_its_launcher_is_the_environment(text):
    assert judge_log(text).category == "environment"


def test_open_mpis_handler_in_a_later_call_is_not_the_launcher():
    """wrfhydro-232's form: the same handler in MPI_Bcast is not MPI's start: the code's call first (or two MPIs
    in one program: tests/test_why_apps.py), rank 1 named."""
    text = (
        "*** An error occurred in MPI_Bcast\n*** reported by process [47923237289985,1]\n*** on communicator "
        "MPI_COMM_WORLD\n*** MPI_ERR_COMM: invalid communicator\n"
    )
    cause = judge_log(text)
    assert cause.category == "unknown" and cause.candidates[0].startswith("code"), (cause.category, cause.candidates)
    assert cause.ranks == [1]


@pytest.mark.parametrize(
    "text",
    [
        # https://github.com/prody/ProDy/issues/878
        "ERROR: ------------- Processor 0 Exiting: Called CmiAbort ------------\nReason: FATAL ERROR: Unable to "
        "access config file min.conf\n\nCharm++ fatal error:\nFATAL ERROR: Unable to access config file min.conf\n",
        # https://github.com/fhh2626/BFEE3/issues/129
        "namd3 002_abf_1.conf > 002_abf_1.conf.log &\n[2] 2891\n$ FATAL ERROR: Unable to open extended system file.\n",
        # https://github.com/PrincetonUniversity/FOCUS/issues/9: HDF5's error stack, the code's fatal, the abort
        "HDF5-DIAG: Error detected in HDF5 (1.8.18) MPI-process 0:\n  #000: H5F.c line 522 in H5Fcreate(): unable "
        "to create file\n  #001: H5Fint.c line 1024 in H5F_open(): unable to truncate a file which is already "
        "open\nrestart :      fatal : myid=  0 ; hdfier.ne.0 ; error calling h5fcreate_f  ;\nMPI_ABORT was invoked "
        "on rank 0 in communicator MPI_COMM_WORLD\n",
    ],
)
def test_an_applications_fatal_line_on_its_input_is_the_code(text):
    cause = judge_log(text)
    assert cause.category == "code", cause.headline


@pytest.mark.parametrize(
    "text",
    [
        "FATAL ERROR: CUDA error cudaStreamCreate on Pe 2 (gpu3 device 0): all CUDA-capable devices are busy\n",
        "FATAL ERROR: Memory allocation failed on processor 4.\n",
    ],
)
def test_a_fatal_line_about_the_gpu_or_memory_is_not_the_input(text):
    assert judge_log(text).category != "code"


LMOD_MISSING = "environment: line 17: /usr/share/lmod/lmod/libexec/lmod: No such file or directory\n"


@pytest.mark.parametrize(
    "text",
    [
        # https://github.com/TACC/Lmod/issues/645
        "module load fastqc/0.12.1\n\n"
        + LMOD_MISSING
        + "/var/spool/slurm/slurmd/job00040/slurm_script: line 14: fastqc: command not found\n",
        # https://github.com/access-ci-org/Jetstream_Cluster/issues/18
        LMOD_MISSING * 2 + "/tmp/slurmd/job00001/slurm_script: line 8: mpirun: command not found\n",
    ],
)
def test_no_module_system_then_a_command_not_found_is_the_environment(text):
    cause = judge_log(text)
    # a launcher not found is the environment by itself (session 21), its headline the module it lacks; any other
    # command is the module system's, named by the line before it
    assert cause.category == "environment" and "module" in cause.headline, cause.headline


def test_no_module_system_alone_is_a_candidate():
    """A profile's module line that fails is often harmless: alone it decides nothing."""
    cause = judge_log(LMOD_MISSING)
    assert cause.category == "unknown" and len(cause.candidates) >= 2, cause


def test_a_command_not_found_before_the_module_system_failed_is_not_explained_by_it():
    cause = judge_log("/tmp/slurmd/job00001/slurm_script: line 3: nvidia-smi: command not found\n" + LMOD_MISSING)
    assert "module system, and a command" not in cause.headline, cause.headline


def test_apptainers_creation_failure_at_debug_verbosity_is_the_environment():
    """https://github.com/apptainer/singularity/issues/4017 (singularity -d)."""
    text = (
        "FATAL   [U=0,P=37]         Master()                      container creation failed: mount /tmp failed: "
        "invalid argument\n"
    )
    assert judge_log(text).category == "environment"


def test_charms_processor_that_aborted_is_the_culprit():
    """prody-878 (https://github.com/prody/ProDy/issues/878): Charm++ names the processor before its Reason."""
    text = (
        "ERROR: ------------- Processor 3 Exiting: Called CmiAbort ------------\nReason: FATAL ERROR: Unable to "
        "access config file min.conf\n"
    )
    cause = judge_log(text)
    assert cause.category == "code" and 3 in cause.ranks, (cause.ranks, cause.headline)


def test_a_fortran_file_permission_denied_is_the_environment_and_other_severe_errors_the_code():
    """fds-9822 (https://github.com/firemodels/fds/issues/9822): Intel's severe (9) is the OS's EACCES."""
    denied = (
        "forrtl: Permission denied\nforrtl: severe (9): permission to access file denied, unit 4, file "
        "/Users/a/FDS/FDS6/Examples/Fires/couch.smv\n"
    )
    assert judge_log(denied).category == "environment"
    assert judge_log("forrtl: severe (24): end-of-file during read, unit 10, file /work/run/input.dat\n").category == (
        "code"
    )


@pytest.mark.parametrize(
    "text, rank",
    [
        # simpleland-6 (https://github.com/ESCOMP/SimpleLand/issues/6) and fates-374: HPE/SGI MPT
        (
            " -1:MPT ERROR: MPI_COMM_WORLD rank 617 has terminated without calling MPI_Finalize()\n\n -1:     aborting "
            "job\n\n MPT: Received signal 11\n",
            617,
        ),
        (
            "10:MPT: -----stack traceback ends-----\n-1:MPT ERROR: MPI_COMM_WORLD rank 10 has terminated without calling "
            "MPI_Finalize()\n-1:\taborting job\n",
            10,
        ),
        # qe-fugaku-19 (https://github.com/yoshiconlab-technical-assistant/analyse-csh/issues/19): Fujitsu's plexec
        (
            "[WARN] PLE 0608 plexec One of MPI processes was aborted.(rank=0)(nid=0xff33000e)(CODE=1903,302825513401614"
            "3360,256)(DETAIL=N/A)\n",
            0,
        ),
    ],
)
def test_the_mpi_runtimes_line_that_names_the_first_rank_is_the_culprit(text, rank):
    cause = judge_log(text)
    assert rank in cause.ranks, (cause.ranks, cause.headline)
    assert cause.category in ("unknown", "code"), cause.headline  # the line alone says who, not why


@pytest.mark.parametrize(
    "text",
    [
        # dmcp-13 (https://github.com/Zx55/dmcp/issues/13): `python main.py` with the distributed config on
        'Traceback (most recent call last):\n  File "/data1/task/tools/dmcp/utils/distributed.py", line 29, in '
        "init_dist\n    rank = int(os.environ['RANK'])\n  File \"/usr/local/miniconda3/lib/python3.6/os.py\", line 669, "
        "in __getitem__\n    raise KeyError(key) from None\nKeyError: 'RANK'\n",
        # groupformer-5 (https://github.com/xueyee/GroupFormer/issues/5): its head and closing quote cut
        ' File "/content/GroupFormer/group/utils/distributed_utils.py", line 73, in dist_init_pytorch\n    rank = '
        "int(os.environ['RANK'])\n  File \"/usr/lib/python3.7/os.py\", line 681, in __getitem__\n    raise "
        "KeyError(key) from None\nKeyError: 'RANK\n",
        # bmtrain-19 (https://github.com/OpenBMB/BMTrain/issues/19): LOCAL_RANK
        'Traceback (most recent call last):\n  File "init.py", line 40, in init_distributed\n    local_rank = '
        "int(os.environ[\"LOCAL_RANK\"])\nKeyError: 'LOCAL_RANK'\n",
    ],
)
def test_a_launcher_variable_that_is_not_set_is_a_script_started_without_its_launcher(text):
    cause = judge_log(text)
    assert cause.category == "code" and "without that launcher" in cause.headline, cause.headline


def test_a_keyerror_on_another_key_is_a_plain_exception():
    text = (
        'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    cfg["model"]\n'
        "KeyError: 'model'\n"
    )
    cause = judge_log(text)
    assert cause.category == "code" and "launcher" not in cause.headline, cause.headline


def test_a_fatal_line_about_the_file_system_is_not_the_input():
    for text in (
        "FATAL ERROR: Error writing restart file: No space left on device\n",
        "PIO: FATAL ERROR: Aborting... FATAL ERROR: Permission denied (file = x.nc)\n",
    ):
        assert judge_log(text).category != "code", text
