"""`clusterdoc why --log` on MPI/HPC launch set-ups and applications, round 10 (issue 41): each rule from what
several real pastes share, in the tools' own words. Each excerpt is from a real log (its thread beside it; the
rows in tests/fixtures/why/real/SOURCES.md), and each look-alike that must not match is one too.
"""

from __future__ import annotations

import pytest

from tests.why_helpers import judge_log

_HYDRA_TAIL = (
    "[mpiexec@h] HYDU_parse_array (utils/args/args.c:178): argument matching returned error\n"
    "[mpiexec@h] parse_args (ui/mpich/utils.c:1642): error parsing input array\n"
)


@pytest.mark.parametrize(
    "first",
    [
        # https://github.com/radiasoft/devops/issues/183 (a wrapper passing --mca to MPICH's mpiexec)
        "[mpiexec@rs14.local] match_arg (utils/args/args.c:159): unrecognized argument mca\n",
        # https://github.com/ComputationalRadiationPhysics/picongpu/issues/4739 (a newer Hydra's file names)
        "[mpiexec@QUASAR] match_arg (lib/utils/args.c:166): unrecognized argument am\n",
        # https://github.com/zhijian-liu/torchpack/issues/36 (MPICH installed where Open MPI was expected)
        "[mpiexec@cappuccino-Super-Server] match_arg (utils/args/args.c:163): unrecognized argument allow-run-as-root\n",
    ],
)
def test_hydra_rejecting_an_open_mpi_option_is_two_mpis_mixed(first):
    cause = judge_log(first + _HYDRA_TAIL)
    assert cause.category == "environment", cause.headline
    assert "Open MPI" in cause.headline, cause.headline


def test_hydra_rejecting_another_option_stays_thin():
    """https://github.com/amusecode/amuse/issues/681: pmi_args (a program of another MPI started alone, or a
    typo's look-alike): either MPIs mixed or the command line; unknown with both."""
    cause = judge_log(
        "[mpiexec@r013.opa.vera.psc.edu] match_arg (utils/args/args.c:159): unrecognized argument pmi_args\n"
        + _HYDRA_TAIL
    )
    assert cause.category == "unknown", cause.headline
    assert [c.split(":")[0] for c in cause.candidates] == ["environment", "code"], cause.candidates


@pytest.mark.parametrize(
    "text",
    [
        # https://github.com/elyall/wandb_on_slurm/issues/5
        "running script\nslurmstepd: error: execve(): start-agent.sh: Permission denied\n"
        "srun: error: my-node01: task 0: Exited with exit code 13\n",
        # https://github.com/zhufengx/SRN_multilabel/issues/21 (Open MPI's help text; a directory given as the program)
        'Open MPI tried to fork a new process via the "execve" system call but\n'
        "failed.  Open MPI checks many things before attempting to launch a\n\n"
        "  Local host:        feng-Precision-Tower-5810\n"
        "  Application name:  /home/feng/fengfeng/SRN_multilabel/caffe/python\n"
        "  Error:             Permission denied\n",
        # https://github.com/veg/hyphy/issues/1751 (the help text wrapped: its first line alone)
        "mpirun was unable to launch the specified application as it could not access\n"
        "or execute an executable:\n\nExecutable: build/HYPHYMPI\n",
    ],
)
def test_a_launcher_that_could_not_execute_the_program_is_the_environment(text):
    assert judge_log(text).category == "environment"


def test_cp2k_on_an_unknown_input_keyword_is_the_input():
    """https://github.com/cp2k/cp2k/issues/3407 (and cp2k/cp2k#1195): CP2K's parser lists the closest names,
    then aborts; an Open MPI warning before it is no cause."""
    text = (
        "[[2842,0],0]: A high-performance Open MPI point-to-point messaging module\n"
        "was unable to find any relevant network interfaces:\n"
        " Possible matches for unknown keyword \n GLOBAL\n"
        "   subsection GLOBAL in section %__ROOT__ score:  54\n"
        " * [ABORT]                                                                     *\n"
    )
    assert judge_log(text).category == "code"


def test_cp2k_on_a_failed_internal_assertion_is_not_called_the_input():
    """https://github.com/cp2k/cp2k/issues/2549: CPASSERT failed at start-up (CP2K 2023.1 with libxc 6.0.0): its
    code or its build, not the input; never named the code's input by the rule above."""
    text = (
        " * [ABORT]                                                                     *\n"
        " *  \\___/                             CPASSERT failed                          *\n"
        " * / \\                                         input/input_keyword_types.F:204 *\n"
    )
    assert judge_log(text).category == "unknown"


@pytest.mark.parametrize(
    "text",
    [
        # https://github.com/open-mpi/ompi/issues/7483 (heldout-fresh2: Gadi's PBS jobs; a frame of mpirun's binary)
        "[gadi-cpu-clx-2532:87043] *** Process received signal ***\n"
        "[gadi-cpu-clx-2532:87043] Signal: Segmentation fault (11)\n"
        "[gadi-cpu-clx-2532:87043] [ 1] /apps/openmpi-mofed4.7-pbs19.2/4.0.2/lib/openmpi/mca_iof_hnp.so"
        "(orte_iof_hnp_read_local_handler+0x30e)[0x14f9d4e19c4e]\n"
        "[gadi-cpu-clx-2532:87043] [ 5] mpirun[0x400f7a]\n",
        # https://github.com/open-mpi/ompi/issues/1916 (gdb's backtrace of the core: mpirun's own function)
        "Segmentation fault (core dumped)\n(gdb) bt\n#0  0x00007f3c08c71b20 in ?? ()\n"
        "#5  0x00000000004016b2 in orterun ()\n#6  0x00000000004010b8 in main ()\n",
        # https://github.com/open-mpi/ompi-release/issues/875 (the shell's report of the daemon's segfault)
        "bash: line 1:   823 Segmentation fault      (core dumped) /labhome/v/build_v1.10_rel/install/bin/orted "
        "--hnp-topo-sig 2N:2S:2L3:16L2:16L1:16C:16H:x86_64 -mca ess \"env\"\n"
        "ORTE was unable to reliably start one or more daemons.\n",
    ],
)
def test_the_mpi_launcher_crashing_is_the_mpi_installation(text):
    cause = judge_log(text)
    assert cause.category == "environment", cause.headline
    assert "launcher itself crashed" in cause.headline, cause.headline


def test_an_applications_own_segfault_frames_are_not_the_launchers():
    """The look-alike: a rank's crash under mpirun names the program's binary in its frames, never mpirun's; it
    stays what the segfault rules say (not the launcher)."""
    text = (
        "[n1:4411] *** Process received signal ***\n[n1:4411] Signal: Segmentation fault (11)\n"
        "[n1:4411] [ 1] ./lmp_mpi(_ZN9LAMMPS_NS4Pair7computeEii+0x2e)[0x4a1b2e]\n"
        "mpirun noticed that process rank 3 with PID 4411 on node n1 exited on signal 11 (Segmentation fault).\n"
    )
    assert "launcher itself crashed" not in judge_log(text).headline


@pytest.mark.parametrize(
    "text",
    [
        # https://github.com/NOAA-EMC/global-workflow/issues/1256 (Hera's maintenance: the environment)
        "1219:  file: module_write_netcdf.F90 line:          663 NetCDF: HDF error\n"
        "  1219: application called MPI_Abort(comm=0x84000002, 1) - process 1219\n",
        # https://github.com/NOAA-OWP/ngen/issues/749 (unsettled: after the run, closing its file under mpirun)
        "HDF5-DIAG: Error detected in HDF5 (1.10.1) thread 0:\n  #000: H5D.c line 332 in H5Dclose(): not a dataset\n"
        "NetCDF: HDF error\nfile: ncFile.cpp  line:33\n",
    ],
)
def test_a_netcdf_error_alone_names_the_file_and_the_code_as_candidates(text):
    """NetCDF's own strings are the library's report on a file: the file or library (its permissions, a site's
    change, a format) or the code's calls; unknown with both, the environment first."""
    cause = judge_log(text)
    assert cause.category == "unknown", cause.headline
    assert [c.split(":")[0] for c in cause.candidates] == ["environment", "code"], cause.candidates
    assert "NetCDF" in cause.headline, cause.headline


def test_the_rank_and_node_open_mpi_could_not_start_are_named():
    """https://github.com/fastpm/fastpm/issues/101: Open MPI's help text names the node and the rank it was
    starting when it could not execute the program."""
    cause = judge_log(
        "mpirun was unable to launch the specified application as it could not access\n"
        "or execute an executable:\n\nExecutable: ../src/fastpm\nNode: cori16\n\n"
        "while attempting to start process rank 0.\n"
    )
    assert cause.category == "environment", cause.headline
    assert cause.ranks == [0] and cause.nodes == ["cori16"], (cause.ranks, cause.nodes)


def test_an_option_that_only_begins_like_an_open_mpi_one_stays_thin():
    """The look-alike of the rule above: Hydra's line for an argument that begins with "am" but is another word."""
    cause = judge_log("[mpiexec@h] match_arg (utils/args/args.c:163): unrecognized argument amd64\n" + _HYDRA_TAIL)
    assert cause.category == "unknown", cause.headline
