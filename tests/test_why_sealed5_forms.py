"""`clusterdoc why --log`, session 18 (issue 41): the forms the sealed set heldout-fresh5 held that no rule knew,
read only after its score was recorded (24/40 unseen, 3 confidently wrong): an OSError printed without its type,
the tools' own words (OpenFOAM's dummy Pstream, Nextflow's time limit, CESM's endrun, Open MPI's command line,
torch's gather, SIGILL), a C++ throw of no class, and the culprit in UCX's prefix and under srun --label. Each
excerpt is from tests/fixtures/why/heldout-fresh5/ (its thread in SOURCES.md); each failed on the rules before."""

from __future__ import annotations

import pytest

from tests.why_helpers import judge_log

# --- an OSError printed by str() alone: "[Errno N] ..." is the exception Python raises for N (PEP 3151) ---


def test_a_bare_errno_line_is_the_exception_of_its_errno():
    # https://github.com/NVIDIA/Megatron-LM/issues/185 (Megatron's checkpoint loader prints the exception alone)
    c = judge_log("[Errno 2] No such file or directory: 'checkpoints/gpt2_345m/iter_0006000/mp_rank_00/"
                  "model_optim_rng.pt'\n")
    assert c.category == "code" and "FileNotFoundError" in c.headline, c.headline
    assert judge_log("[Errno 28] No space left on device: '/scratch/ckpt/model.pt'\n").category == "environment"
    assert judge_log("[Errno 12] Cannot allocate memory\n").category == "oom"
    c = judge_log("[rank3]: [Errno 111] Connection refused\n")  # a connection: a candidate, never a verdict
    assert c.category == "unknown" and c.ranks == [3], (c.category, c.ranks)


@pytest.mark.parametrize("line", [
    "Warning: [Errno 2] No such file or directory: 'nvidia-smi'\n",  # a warning that quotes one: not the failure
    "  [Errno 2] No such file or directory\n",  # indented: part of something else's message
    "[Errno x] text\n",
])
def test_an_errno_inside_other_text_is_no_exception(line):
    assert judge_log(line).category == "unknown"


# --- the tools' own words ---


@pytest.mark.parametrize("text", [
    # https://github.com/gerlero/openfoam-app/issues/333 (OpenFOAM's src/Pstream/dummy/UPstream.C)
    "--> FOAM FATAL ERROR: (openfoam-2406)\nThe dummy Pstream library cannot be used in parallel mode\n\n"
    "    From static bool Foam::UPstream::init(int &, char **&, const bool)\n    in file UPstream.C at line 49.\n\n"
    "FOAM exiting\n",
    # https://github.com/UCL-ARC/rcps-buildscripts/issues/4 (OpenFOAM 2.x's words)
    "--> FOAM FATAL ERROR: \nTrying to use the dummy Pstream library.\nThis dummy library cannot be used in parallel "
    "mode\n\n    From function UPstream::init(int& argc, char**& argv)\n    in file UPstream.C at line 37.\n\n"
    "FOAM exiting\n",
])
def test_openfoam_on_its_dummy_pstream_is_the_installation_not_the_case(text):
    assert judge_log(text).category == "environment"


def test_openfoams_other_fatal_errors_stay_the_case():
    c = judge_log("--> FOAM FATAL ERROR: \ncannot find file \"0/U\"\n\n    From function regIOobject::readStream()\n"
                  "FOAM exiting\n")
    assert c.category == "code", c.headline


@pytest.mark.parametrize("text, category", [
    # https://github.com/nf-core/eager/issues/872
    ("Error executing process > 'bwa (SAMPLE)'\n\nCaused by:\n  Process exceeded running time limit (4h)\n\n"
     "Command executed:\n bwa aln ....\n", "scheduler"),
    # https://github.com/E3SM-Project/E3SM/issues/7836 (CLM's endrun, then MPI_Abort)
    ("ERROR: RUN FAIL: Command 'mpirun -n 128 e3sm.exe >> e3sm.log.$LID 2>&1 ' failed\n"
     "ERROR in restFileMod.F90 at line 1375   \nStack trace terminated abnormally.\n"
     "[c066:17859] 127 more processes have sent help message help-mpi-api.txt / mpi-abort\n", "code"),
    # https://github.com/solids4foam/solids4foam/issues/122
    ("Open MPI has detected that a parameter given to a command line\noption does not match the expected format:\n"
     "  Option: n\n  Param:  solids4Foam\nThis is frequently caused by omitting to provide the parameter\n"
     "to an option that requires one. Please check the command line and try again.\n", "code"),
    # https://github.com/huggingface/transformers/pull/4757 (torch's gather across devices)
    ("RuntimeError: Gather got an input of invalid size: got [2, 1, 20, 256, 64], but expected [2, 2, 20, 256, 64] "
     "(gather at /pytorch/torch/csrc/cuda/comm.cpp:231)\n", "desync"),
    # https://github.com/NVIDIA-NeMo/Megatron-Bridge/issues/3343 (UCX's handler, srun's exit code 132 = SIGILL)
    ("  [pool0-1616:1864777:0:1864777] Caught signal 4 (Illegal instruction: illegal operand)\n"
     "  ==== backtrace (tid:1864777) ====\n   0  /opt/hpcx/ucx/lib/libucs.so.0(ucs_handle_error+0x2e4) [0x15551d4a3774]\n"
     "  srun: error: pool0-1361: tasks 0-7: Exited with exit code 132\n", "environment"),
])
def test_the_tools_own_words(text, category):
    c = judge_log(text)
    assert c.category == category, c.headline


# --- a C++ throw of no class (`throw 0;`): libstdc++ prints no what() after it ---


def test_a_thrown_int_is_the_codes_with_its_rank():
    # https://github.com/pmodels/mpich/issues/6124 (under a rank tag)
    c = judge_log("[rank0]: About to call MPI_Init\n[rank1]: About to throw 0\n"
                  "[rank1]: terminate called after throwing an instance of 'int'\n")
    assert (c.category, c.ranks) == ("code", [1]), (c.category, c.ranks, c.headline)


def test_a_thrown_class_still_waits_for_its_what_line():
    c = judge_log("terminate called after throwing an instance of 'std::runtime_error'\n")
    assert c.category == "unknown", c.headline


# --- the culprit where the log names it ---


def test_ucxs_prefix_names_the_node():
    # https://github.com/openucx/ucx/issues/9590
    for cut in ("[", ""):  # the paste's first line lost its "["
        c = judge_log(f"{cut}lxbk1127:2330856:0:2330856] ib_mlx5_log.c:177  Transport retry count exceeded on "
                      "mlx5_0:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)\n")
        assert (c.category, c.nodes) == ("network", ["lxbk1127"]), (c.category, c.nodes, c.headline)


def test_slurmstepds_line_under_a_label_is_not_that_tasks():
    # https://github.com/NOAA-EMC/global-workflow/issues/2227 (srun -l: slurmstepd's line came through task 84's
    # stream; srun's own line names task 92)
    c = judge_log(" 84: slurmstepd: error: Detected 1 oom-kill event(s) in StepId=54315683.0. Some of your processes "
                  "may have been killed by the cgroup out-of-memory handler.\n"
                  "srun: error: h23c26: task 92: Out Of Memory\n"
                  "srun: launch/slurm: _step_signal: Terminating StepId=54315683.0\n")
    assert (c.category, c.ranks, c.nodes) == ("oom", [92], ["h23c26"]), (c.category, c.ranks, c.nodes)
