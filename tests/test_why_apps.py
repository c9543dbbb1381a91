"""`clusterdoc why --log` on HPC applications' own fatal errors (issue 41, session 17): a code that checks its
input, setup and numerics prints what it found and aborts; that line is the job's (code), with the rank that
printed it. MPI_Abort alone says the application stopped itself on an error it found: the code's too (session 28:
seven settled threads of the abort alone were the input or the code, one thread never settled). Each case is
an excerpt of a real log (tests/fixtures/why/real/SOURCES.md names its thread) or the tool's own format.
"""

from __future__ import annotations

import pytest

from tests.why_helpers import judge_log

OMPI_ABORT = (
    "MPI_ABORT was invoked on rank 71 in communicator MPI_COMM_WORLD\nwith errorcode 1.\n\n"
    "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.\n"
)


@pytest.mark.parametrize(
    "text, rank",
    [
        # lammps-2145 (Error::one names the proc), and lammps-4186's with the abort after it
        ("ERROR on proc 17: Out of range atoms - cannot compute PPPM (src/KSPACE/pppm.cpp:1940)\n", 17),
        ("ERROR on proc 71: step300299-ran out of space on angle_list: top=1052, max=1016 "
         "(../reaxc_valence_angles.cpp:414)\nLast command: run  900000\n" + OMPI_ABORT, 71),
        # LAMMPS' Error::all (src/error.cpp's format)
        ("ERROR: Unknown command: pair_style (src/input.cpp:314)\nLast command: pair_style lj/cut 2.5\n", None),
        # firefoam-6: OpenFOAM in parallel, the processor first
        ('[57] --> FOAM FATAL ERROR: (openfoam-2306)\n[57] Cannot find file "points" in directory '
         '"filmRegion/polyMesh" in times "0" down to constant\n[57]\nFOAM parallel run exiting\n', 57),
        # hystrath-7: its IO form and its plain form
        ("    --> FOAM FATAL ERROR: \n    bool IPstream::init(int& argc, char**& argv) : attempt to run parallel on 1 "
         "processor\n\n    FOAM aborting\n", None),
        # Quantum ESPRESSO's errore, then the abort
        (" %%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%\n     Error in routine tweights (1):\n     bad Fermi energy\n"
         " %%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%\n" + OMPI_ABORT.replace("71", "0"), 0),
        # wrfcoop-17: WRF's fatal line, then the abort of rank 160
        ("FATAL CALLED FROM FILE: <stdin> LINE: 1591\nWARNING: Extreme t_soisno at c, level 1 1\n\n"
         + OMPI_ABORT.replace("71", "160"), 160),
    ],
)
def test_an_applications_own_fatal_error_is_the_code_with_its_rank(text, rank):
    cause = judge_log(text)
    assert cause.category == "code", cause.headline
    if rank is not None:
        assert rank in cause.ranks, (cause.ranks, cause.headline)


@pytest.mark.parametrize(
    "text",
    [
        "ERROR on proc 617: Failed to reallocate 1650272 bytes for array comm:buf_send (src/memory.cpp:105)\n",
        "ERROR: Failed to allocate 8589934592 bytes for array atom:x (src/memory.cpp:66)\n",  # Error::all's form
    ],
)
def test_an_applications_memory_failure_is_not_its_code(text):
    assert judge_log(text).category != "code"


def test_mpi_abort_alone_is_the_applications_own_stop():
    """cp2k-4345, cbio-329 (Open MPI's abort block and nothing of the application's; the threads: the input):
    the application stopped itself on an error it found; the rank named, and where its message is."""
    cause = judge_log(OMPI_ABORT.replace("71", "344"))
    assert cause.category == "code", cause
    assert 344 in cause.ranks
    assert "own output" in cause.next_step or "own message" in cause.headline, cause


def test_a_spawned_process_that_could_not_unpickle_after_a_sigkill_is_no_code():
    """yolox-76: mp.spawn's process 1 was SIGKILLed (the host's memory, the thread found); a new process then read
    a pickle cut short. Neither is the code."""
    text = (
        "    raise ProcessExitedException(\n"
        "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL\n"
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        '  File "/usr/lib/python3.8/multiprocessing/spawn.py", line 126, in _main\n'
        "    self = reduction.pickle.load(from_parent)\n"
        "_pickle.UnpicklingError: pickle data was truncated\n"
    )
    assert judge_log(text).category != "code"


@pytest.mark.parametrize(
    "text, rank",
    [
        # wrfhydro-232: Open MPI's fatal handler, the rank in "reported by process [JOB,RANK]"
        ("*** An error occurred in MPI_Bcast\n*** reported by process [47923237289985,1]\n*** on communicator "
         "MPI_COMM_WORLD\n*** MPI_ERR_COMM: invalid communicator\n*** MPI_ERRORS_ARE_FATAL (processes in this "
         "communicator will now abort,\n", 1),
        # an Open MPI users' thread: a count over 2^31 (the same handler, another class)
        ("[tatami:02271] *** An error occurred in MPI_Recv\n[tatami:02271] *** on communicator MPI_COMM_WORLD\n"
         "[tatami:02271] *** MPI_ERR_COUNT: invalid count argument\n[tatami:02271] *** MPI_ERRORS_ARE_FATAL "
         "(goodbye)\n", None),
    ],
)
def test_an_mpi_call_given_an_invalid_argument_is_the_code_or_two_mpis(text, rank):
    """Open MPI's invalid-argument classes: the program's call (wrfhydro-232: a communicator it broke), or a program
    built against one MPI and run with another (lammps-1463: EPEL's Open MPI 4 build, MPI_Comm_rank on
    MPI_COMM_WORLD): the line cannot tell them apart; both are named, with the rank Open MPI reports."""
    cause = judge_log(text)
    assert cause.category == "unknown", cause.headline
    assert [c.split(":")[0] for c in cause.candidates] == ["code", "environment"], cause.candidates
    if rank is not None:
        assert rank in cause.ranks, (cause.ranks, cause.headline)


def test_a_keyword_the_called_function_does_not_know_is_a_version_first():
    """A TypeError `got an unexpected keyword argument` from a call into a library: most often the library installed
    is another version than the code's (trl's vllm-serve against an older vllm, as its thread settled: trl#3304, a
    validation log of session 17); the call may be wrong too. Both are named, the version first."""
    cause = judge_log(
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.11/site-packages/trl/scripts/vllm_serve.py", line 8, in <module>\n'
        '    args = EngineArgs(model=m, worker_extension_cls="trl.scripts.vllm_serve.WeightSyncWorkerExtension")\n'
        "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'worker_extension_cls'\n"
    )
    assert cause.category == "unknown", cause.headline
    assert [c.split(":")[0] for c in cause.candidates] == ["environment", "code"], cause.candidates


def test_gromacs_fatal_block_is_the_code_on_its_rank_and_its_memory_message_is_oom():
    """GROMACS' gmx_fatal block (biosimspace#305, a validation log of session 17): the rank it names; the same
    block with a memory message is oom (its smalloc's words)."""
    head = (
        "-------------------------------------------------------\nProgram:     gmx mdrun, version 2022\n"
        "Source file: src/gromacs/domdec/domdec.cpp (line 2232)\nMPI rank:    0 (out of 10)\n\nFatal error:\n"
    )
    cause = judge_log(head + "There is no domain decomposition for 10 ranks that is compatible with the\n"
                      "given box and a minimum cell size of 0.8525 nm\n")
    assert (cause.category, cause.ranks) == ("code", [0]), (cause.category, cause.ranks, cause.headline)
    oom = judge_log(head.replace("domdec/domdec.cpp", "utility/smalloc.cpp") + "Not enough memory. Failed to "
                    "realloc 1073741824 bytes for x, x=0x0\n(called from file pme.cpp, line 812)\n")
    assert oom.category == "oom", oom.headline


def test_wrfs_fatal_banner_is_the_code_and_its_rsl_file_names_the_rank_and_node():
    """wrf-model/WRF#1267 (a validation log of session 17): rsl.error.0020's head names task 20 on node172."""
    cause = judge_log(
        " taskid: 20 hostname: node172.exwexs.fr\n module_io_quilt_old.F        2931 T\n"
        " Ntasks in X            6 , ntasks in Y            8\n*************************************\n"
        "Configuring physics suite '^@^@^@^@'\n\n-------------- FATAL CALLED ---------------\n"
    )
    assert (cause.category, cause.ranks, cause.nodes) == ("code", [20], ["node172.exwexs.fr"]), cause


def test_a_slurm_command_on_a_host_without_slurms_config_is_the_environment():
    cause = judge_log(  # scarab-infra (a validation log of session 17): sinfo on a host that is no Slurm client
        "sinfo: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n"
        "sinfo: error: fetch_config: DNS SRV lookup failed\nsinfo: error: _establish_config_source: failed to fetch "
        "config\nsinfo: fatal: Could not establish a configuration source\n"
    )
    assert cause.category == "environment", cause.headline


@pytest.mark.parametrize(
    "text",
    [
        # rokko#257 (settled: the code's communicator never set) and specfem3d#999 (settled: the MPI install): the
        # same MPICH error stack
        "Fatal error in PMPI_Comm_rank: Invalid communicator, error stack:\nPMPI_Comm_rank(110): "
        "MPI_Comm_rank(comm=0x0, rank=0x654928) failed\nPMPI_Comm_rank(68).: Invalid communicator\n",
        "Fatal error in PMPI_Isend: Invalid rank, error stack:\nPMPI_Isend(103): Invalid rank has value 4 but must "
        "be nonnegative and less than 4\n",
    ],
)
def test_mpichs_invalid_argument_stack_is_the_code_or_two_mpis(text):
    cause = judge_log(text)
    assert cause.category == "unknown", cause.headline
    assert [c.split(":")[0] for c in cause.candidates] == ["code", "environment"], cause.candidates


def test_sruns_segfault_line_alone_is_thin_and_with_the_programs_routine_the_code():
    """srun's `task N: Segmentation fault` says a task crashed, not whose code: one OS's build (spack#37409), a flaky
    node (NRC Trixie#35, drained again) or the program, validation logs of session 17 that it had judged `code`. A
    backtrace that names the program's routine beside it decides for the code (e3sm-7277's form)."""
    line = "srun: error: cn125: task 3: Segmentation fault\n"
    cause = judge_log(line)
    assert cause.category == "unknown" and len(cause.candidates) >= 2, (cause.category, cause.candidates)
    named = (
        "Program received signal SIGSEGV: Segmentation fault - invalid memory reference.\n\nBacktrace for this "
        "error:\n#0  0x2b1c8e3e in __ice_transport_remap_MOD_horizontal_remap\n#1  0x2b1c8f00 in __ice_step_mod_MOD_"
        "step_dyn_horiz\n"
    )
    assert judge_log(named + line).category == "code"


@pytest.mark.parametrize(
    "text, rank",
    [
        # FMS's mpp_error (MOM6's form; ACCESS-OM2's docs quote the same)
        ("NOTE from PE     0: MOM_vert_friction: updateCFLtruncationValue set CFL limit to    7.701E-02\n"
         "FATAL from PE     0: btstep: number of barotropic step (nstep+nfilter) is 0\n", 0),
        ("FATAL from PE   178: ==>Error: time step instability detected for baroclinic gravity waves\n", 178),
        # GROMACS 4.6's block (MDPOW#77, a validation log of session 17)
        ("-------------------------------------------------------\nProgram mdrun, VERSION 4.6.7\nSource code file: "
         "/tmp/gromacs_build/source/gromacs-4.6.7/src/mdlib/domdec.c, line: 3245\n\nFatal error:\nThe initial cell "
         "size (0.738506) is smaller than the cell size limit (0.937500)\n", None),
    ],
)
def test_gfdl_fms_and_old_gromacs_fatal_errors_are_the_code(text, rank):
    cause = judge_log(text)
    assert cause.category == "code", cause.headline
    if rank is not None:
        assert cause.ranks == [rank], cause.ranks
