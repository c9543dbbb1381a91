"""`clusterdoc why`'s catalogue of the MPI launchers', Slurm's and the fabrics' own messages, read from their source
(issue 41; why/sigtable/catalogue_mpi.py, made by scripts/catalogue_mpi.py from tests/fixtures/why/catalogue/mpi.tsv):
the table is what the script makes from the committed raw list, it leaves the pre-check's keys alone, and real lines
from public threads that the learned signatures miss are named by it, while the tools' warnings and hints are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterdoc.why import candidates, signatures
from clusterdoc.why.sigtable import catalogue_cuda, catalogue_mpi
from tests.why_helpers import assert_generated, judge_log, keys_without, learned, load_script

ROOT = Path(__file__).resolve().parents[1]


def _script():
    return load_script("catalogue_mpi")


# --- (a) the table is the script's, from the committed raw list ---


def test_the_table_is_what_the_script_makes_from_the_raw_list():
    text, rows, _ = _script().generate()
    assert_generated(text, ROOT / "clusterdoc" / "why" / "sigtable" / "catalogue_mpi.py",
                     ".venv/bin/python scripts/catalogue_mpi.py")  # fmt: skip
    assert [r["name"] for r in rows] == [s.name for s in catalogue_mpi.SIGNATURES]


def test_the_raw_list_records_each_messages_source():
    raw = _script().read_raw()
    assert 1000 < len(raw) < 5000
    for repo, commit, path, line, _key, msg in raw:
        assert repo in ("open-mpi/ompi", "SchedMD/slurm", "pmodels/mpich", "openucx/ucx") and len(commit) == 40
        assert line > 0 and path and 0 < len(msg) <= 300


def test_every_row_is_sourced_and_keyed_and_last():
    cat = catalogue_mpi.SIGNATURES
    assert 0 < len(cat) <= 400
    start = signatures.SIGNATURES.index(cat[0])  # a fallback: every learned signature goes first (only the
    assert signatures.SIGNATURES[start : start + len(cat)] == cat  # other catalogues may follow it: hpcrt's)
    assert all(s.name.startswith("cat-") for s in signatures.SIGNATURES[start:-1])  # then the CUDA catalogue's
    assert signatures.SIGNATURES[-1] is catalogue_cuda.UNNAMED[0]  # CUDA error of no kind a row names: last
    for s in cat:
        assert s.source.startswith("https://github.com/") and "/blob/" in s.source and "#L" in s.source, s.name
        first = s.needles[0].lower()
        assert any(k in first for k in signatures._KEYS_PICKED), s.name  # no key of its own in the pre-check
        assert any(len(n) >= 12 for n in s.needles), s.name
        assert s.meaning and s.next_step and s.category in ("code", "oom", "desync", "node", "network", "scheduler",
                                                            "environment", "peer")  # fmt: skip
        if s.weak:
            assert candidates.for_signature(s), s.name


def test_the_precheck_keys_are_those_without_the_catalogue():
    assert signatures._KEYS == keys_without(s for s in signatures.SIGNATURES if s.name.startswith("cat-"))


# --- (b) real lines from public threads: the learned signatures miss them, the catalogue names them ---


def test_open_mpi_with_no_transport_between_two_processes_is_the_network():
    # https://github.com/open-mpi/ompi/issues/1501 (bml/r2's help text: no BTL reaches the other process)
    text = ("$ mpirun --hostn1,n2 -np 2 --mca mpi_add_procs_cutoff 1024 --mca btl  sm,self ./hw\n"
            "--------------------------------------------------------------------------\n"
            "At least one pair of MPI processes are unable to reach each other for\n"
            "MPI communications.  This means that no Open MPI device has indicated\n"
            "that it can be used to communicate between these processes.  This is\n"
            "an error; Open MPI requires that all MPI processes be able to reach\n"
            "each other.  This error can sometimes be the result of forgetting to\n"
            "specify the \"self\" BTL.\n\n"
            "  Process 1 ([[39443,1],0]) is on host: n1\n  Process 2 ([[39443,1],1]) is on host: n2\n"
            "  BTLs attempted: self\n\nYour MPI job is now going to abort; sorry.\n")  # fmt: skip
    assert learned("At least one pair of MPI processes are unable to reach each other for") is None
    c = judge_log(text)
    assert c.category == "network", c.headline


@pytest.mark.parametrize("line, name, category, weak", [
    # https://github.com/open-mpi/ompi/issues/12124 (btl/tcp's help text: the peer died first, or the link)
    ("An MPI communication peer process has unexpectedly disconnected.  This", "cat-ompi-tcp-peer-hung-up", "peer",
     False),
    # https://github.com/open-mpi/ompi/issues/6518 (shmem's help text: a system call failed; abort or slower)
    ("1: A system call failed during shared memory initialization that should", "cat-ompi-mmap-sys-call-fail",
     "environment", True),
    # https://github.com/open-mpi/ompi/issues/12038 (mtl/ofi's help text: a libfabric call failed)
    ("Open MPI failed an OFI Libfabric library call (fi_domain).  This is highly", "cat-ompi-ofi-ofi-call-fail",
     "network", True),
    # https://github.com/openucx/ucx/issues/9306 (UCX's status string UCS_ERR_CONNECTION_RESET)
    ("[1692032992.421228] [xm066:789921:1]          ucp_ep.c:1504 UCX  DIAG  ep 0x7ffff4be46c0: error 'Connection "
     "reset by remote peer' on rc_mlx5/mlx5_0:1 will not be handled since no error callback is installed",
     "cat-ucx-ucs-err-connection-reset", "peer", False),
])  # fmt: skip
def test_real_lines_the_learned_signatures_miss_are_named_from_the_source(line, name, category, weak):
    assert learned(line) is None
    s = signatures.match(line)
    assert s is not None and (s.name, s.category, s.weak) == (name, category, weak)


@pytest.mark.parametrize("text", [
    # https://github.com/easybuilders/easybuild-framework/issues/3880 (rmaps' help text: -n 8 on fewer cores)
    "sanity check command mpirun -n 8 /work/guignont/.local/easybuild/build/OpenMPI/4.1.1/GCC-10.3.0/mpi_test_hello_"
    "usempi exited with code 1 (output: ------------------------------------------------------------------------\n"
    "There are not enough slots available in the system to satisfy the 8\n"
    "slots that were requested by the application:\n\n"
    "  /work/guignont/.local/easybuild/build/OpenMPI/4.1.1/GCC-10.3.0/mpi_test_hello_usempi\n\n"
    "Either request fewer slots for your application, or make more slots\navailable for use.\n",
    # https://github.com/hugary1995/raccoon/issues/230
    "There are not enough slots available in the system to satisfy the 16\n"
    "slots that were requested by the application:\n\n  ../../raccoon-opt\n\n"
    "Either request fewer slots for your application, or make more slots\navailable for use.\n",
])  # fmt: skip
def test_more_processes_than_slots_is_the_command_or_the_allocation(text):
    """Threads settle it both ways (the two above: -n on fewer cores, the launch command; Trilinos#3798 on a Mac:
    the allocation), so the line alone names both as candidates (session 21)."""
    assert learned("There are not enough slots available in the system to satisfy the 8") is None
    c = judge_log(text)
    assert c.category == "unknown" and "slots" in c.headline, c.headline
    assert [k.split(":")[0] for k in c.candidates] == ["scheduler", "code"], c.candidates


def test_a_weak_row_alone_is_unknown_with_its_candidates():
    # https://github.com/open-mpi/ompi/issues/6518: the job may go on slower; what decides is listed
    c = judge_log("1: --------------------------------------------------------------------------\n"
                  "1: A system call failed during shared memory initialization that should\n"
                  "1: not have.  It is likely that your MPI job will now either abort or\n"
                  "1: experience performance degradation.\n1: \n1:   Local host:  host.hostname.com\n"
                  "1:   System call: unlink(2) /Users/user/tmp/ompi.host.295430126/pid.55646/1/vader_segment.host.7c9300"
                  "01.6\n1:   Error:       No such file or directory (errno 2)\n")  # fmt: skip
    assert c.category == "unknown", c.headline


def test_learned_signatures_still_come_first():
    # an Open MPI line a learned signature knows keeps its entry (network.py's ompi-ib-retry-exceeded)
    s = signatures.match("The InfiniBand retry count between two MPI processes has been")
    assert s is not None and s.name == "ompi-ib-retry-exceeded"


# --- (c) look-alikes: the tools' warnings, hints and INFO lines are not failures ---


@pytest.mark.parametrize("line", [
    # btl/base's warning: another transport is used instead (https://github.com/open-mpi/ompi/issues/7620)
    "[[18473,1],1]: A high-performance Open MPI point-to-point messaging module",
    "WARNING: There was an error initializing an OpenFabrics device.",  # openib's, harmless with UCX
    "WARNING: No preset parameters were found for the device that Open MPI",
    "NOTE: You can disable this warning by setting the MCA parameter",
    "[1734988213.599525] [85e1b298d55c:1    :0]          ucp_ep.c:1667 UCX  WARN  disconnect failed: Endpoint timeout",
    "Invalid qos specification",  # Slurm's words without its error() marker: a user's echo, a doc line
    "Endpoint timeout",  # UCX's status string with no UCX beside it
    "Out of memory",  # MPICH's short class: anyone's words
    "Invalid rank",
])  # fmt: skip
def test_the_tools_warnings_and_bare_words_are_not_catalogue_failures(line):
    s = signatures.match(line)
    assert s is None or not s.name.startswith("cat-"), s.name


def test_a_slurm_refusal_needs_slurms_error_marker():
    s = signatures.match("srun: error: Task launch for StepId=123.0 failed on node n1: Job prolog failed")
    assert s is not None and (s.name, s.category) == ("cat-slurm-slurmd-prolog-failed", "node")
    assert signatures.match("INFO: Job prolog failed once and was retried") is None


def test_a_verbs_device_open_mpi_leaves_out_is_a_candidate():
    # help-opal-common-verbs.txt's [ibv_open_device fail]: the openib BTL drops that device and the job may go on
    # over another transport, so the line can stand early in a log that failed for something else
    line = "Open MPI failed to open an OpenFabrics device.  This is an unusual\n"
    sig = signatures.match(line)
    assert sig is not None and sig.name.startswith("cat-ompi-verbs") and sig.weak, sig
    c = judge_log(line)
    assert c.category == "unknown" and c.candidates[0].startswith("network"), (c.category, c.candidates)
