"""`clusterdoc why --log` reads a log's structure (issue 41): every launcher's rank and host prefix, a wrapper's
carried exception, what the job was doing when it died (weights loading, a library's cleanup), and caution where
the structure is thin. Each from small real excerpts: the tuning logs of tests/fixtures/why/real (SOURCES.md
names their threads) or the public thread named beside it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterdoc.why import foreign, logs, prefix, verdict
from tests.why_helpers import judge_log

REAL = Path(__file__).parent / "fixtures" / "why" / "real"
LOGS = Path(__file__).parent / "fixtures" / "why" / "logs"


# an exception line of a tuning log (lightning-17436), behind each launcher's rank tag
EXC = "ValueError: Invalid rank 8, rank should be in the interval [0, 7]"


@pytest.mark.parametrize(
    "tag, rank, host",
    [
        ("[rank3]:", 3, None),  # torch
        ("[rank3]:[rank3]:", 3, None),  # torch's prefix doubled (torchtitan)
        ("[default3]:[rank3]:", 3, None),  # torchrun --tee, then torch's
        ("[RANK 3]", 3, None),
        ("[rank: 3]", 3, None),  # Lightning
        ("rank3:", 3, None),  # a script's own print
        ("RANK 3:", 3, None),
        ("Rank 3/8:", 3, None),
        ("[rank3/8]", 3, None),
        ("(rank 3)", 3, None),
        ("[3]:", 3, None),
        ("[3]", 3, None),  # MPICH's / Intel MPI's mpiexec -l (-prepend-rank); OpenFOAM's parallel output
        ("[1,3]<stderr>:", 3, None),  # Open MPI --tag-output
        ("[3]<stderr>:", 3, None),  # horovodrun (gloo)
        ("  3:", 3, None),  # srun --label
        ("node-12:3:", 3, "node-12"),  # a host and a rank
        ("10.3.0.41: [rank3]:", 3, "10.3.0.41"),  # DeepSpeed's launcher over pdsh
    ],
)
def test_every_launchers_rank_tag_names_the_rank(tag, rank, host):
    assert prefix.split(f"{tag} {EXC}") == (rank, host, EXC)
    cause = judge_log(f"{tag} {EXC}\n")
    assert (cause.category, cause.ranks) == ("code", [rank])


@pytest.mark.parametrize(
    "line, host",
    [
        # NCCL's host:pid:tid [device] (nccltests-166): the host; the device [6] is no rank
        ("ubuntu:9621:9691 [6] misc/shmutils.cc:71 NCCL WARN Error: failed to extend /dev/shm/nccl-fjwOOB to 5967876 "
         "bytes", "ubuntu"),
        # Ray's worker prefix (ray-22349)
        ("(BackendExecutor pid=5126, ip=10.128.0.32) 2022-02-15 16:53:52,097\tERROR utils.py:42 -- The actor died "
         "unexpectedly before finishing this task.", "10.128.0.32"),
        # MPICH's Hydra proxy (a public MPICH thread's line, as posted)
        ("[proxy:0:1@hpc-c11-node23.unitn.it] HYD_pmcd_pmip_control_cmd_cb (pm/pmiserv/pmip_cb.c:885): assert "
         "(!closed) failed", "hpc-c11-node23.unitn.it"),
    ],
)  # fmt: skip
def test_host_prefixes_name_the_host_and_no_rank(line, host):
    rank, got, rest = prefix.split(line)
    assert (rank, got) == (None, host)
    assert rest and not rest.startswith(host)


@pytest.mark.parametrize(
    "line",
    [
        "train.py:12: UserWarning: the default value will change",  # a warning's file:line is no host:rank
        "foo.c:12: error: expected ';'",
        "Epoch 3: 100%|##########| 588/588",
        "[80746] [rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] x",  # a pid, then the rank (0)
        "node1:29500: Connection refused",  # a host's port, not a rank
        "[3]: ",  # torchrun's failure table's entry header (accelerate-1519), a trailing blank pasted after it
        "[1] 12345",  # a shell's job number and pid
        "[2] NCCL INFO misc/socket.cc:80 -> 6",  # NCCL's device index where the paste cut the host
    ],
)
def test_what_is_not_a_rank_tag(line):
    rank, host, _ = prefix.split(line)
    assert host is None
    assert rank in (None, 0) and (rank == 0) == line.startswith("[80746]")


def test_the_rank_inside_torchs_own_message_names_a_signature_line_without_a_prefix():
    # torch's "[Rank N]" in a ProcessGroupNCCL line (the watchdog's form) says which rank printed it
    line = ("[E ProcessGroupNCCL.cpp:1182] [Rank 5] NCCL watchdog thread terminated with exception: CUDA error: an "
            "illegal memory access was encountered")  # fmt: skip
    (hit,) = [h for h in logs.scan_text(line).hits if h.category == "code"]
    assert hit.rank == 5
    assert judge_log(line).ranks == [5]


def test_a_wrapper_carries_the_exception_that_failed():
    # Ray's RayTaskError(NotImplementedError) (verl-5558, whose inner traceback is cut): the inner type is the failure
    cause = judge_log((REAL / "verl-5558-reward-data-source-code.log").read_text())
    assert cause.category == "code" and "NotImplementedError" in cause.headline
    # and RayTaskError(ModuleNotFoundError) (openrlhf-400) is the environment's, read the same way
    assert judge_log((REAL / "openrlhf-400-ray-env-no-vllm.log").read_text()).category == "environment"


@pytest.mark.parametrize(
    "name", ["chatglm2-525-loading-shards-sigkill.log", "accelerate-1214-launcher-sigkill-30b.log"]
)
def test_a_sigkill_while_the_weights_load_is_the_oom_killer(name):
    assert judge_log((REAL / name).read_text()).category == "oom"


def test_a_workers_sigkill_alone_is_the_oom_killer_and_after_a_time_limit_a_candidate():
    # the same torchrun line as chatglm2-525 without the loading bar before it: a worker killed while torchrun lived
    # on, nothing else stopping the job (tests/test_why_sigkill.py); after Slurm's time limit line it is thin again
    text = (
        (REAL / "chatglm2-525-loading-shards-sigkill.log")
        .read_text()
        .replace("Loading checkpoint shards:  57% 4/7 [00:37<00:28,  9.42s/it]", "")
    )
    assert judge_log(text).category == "oom"
    limit = "slurmstepd: error: *** JOB 9 ON n1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***\n"
    assert judge_log(limit + text).category == "scheduler"


SEGV = (REAL / "e3sm-7277-seaice-segfault-rank76.log").read_text()


def test_a_segfault_in_the_applications_routine_is_the_code():
    assert judge_log(SEGV).category == "code"


def test_a_segfault_in_a_librarys_finalize_is_a_candidate_not_the_code():
    # e3sm-7277's SIGSEGV line, its backtrace in MPI_Finalize as open-mpi/ompi#1751 posted it
    text = "\n".join(
        [
            "  76: Program received signal SIGSEGV: Segmentation fault - invalid memory reference.",
            "  76: ",
            "  76: Backtrace for this error:",
            "  76: #6  0x00007f837d1cbe59 in ompi_mpi_finalize () from /install/lib/libmpi.so.20",
            "  76: #7  0x00007f837d1f35e9 in PMPI_Finalize () from /install/lib/libmpi.so.20",
            "  76: #8  0x00000000004008e8 in main ()",
        ]
    )
    cause = judge_log(text)
    assert cause.category == "unknown" and cause.ranks == [76]
    assert cause.candidates[0].startswith("environment: a library crashed in its cleanup")


def test_a_command_missing_in_a_log_of_several_nodes_may_be_that_nodes():
    one = "slurmstepd: error: execve(): torchrun: No such file or directory\n"  # its signature's own line
    assert judge_log(one).category == "environment"
    two = (
        one
        + "srun: error: gpu-2: task 1: Exited with exit code 2\nsrun: error: gpu-1: task 0: Exited with exit code 1\n"
    )
    cause = judge_log(two)
    assert cause.category == "unknown"
    assert cause.candidates[0].startswith("node: that node lacks what the others have")


def test_every_rank_timing_out_with_one_absent_names_it_as_a_candidate_not_a_hang():
    # llamafactory-7396: ranks 0, 2, 3, 4 time out in ALLREDUCE SeqNum=1580; rank 1 is in no line
    cause = judge_log((LOGS / "llamafactory-7396-watchdog.log").read_text())
    assert (cause.category, cause.ranks) == ("unknown", [1])
    assert len(cause.candidates) >= 3


def test_srun_naming_several_tasks_of_one_node_names_the_node():
    # srun's task line with a range (the form of scream-2519's, several tasks): the node, no rank
    text = "\n".join(
        [
            "[rank0]: " + EXC.replace("rank 8", "x"),
            "srun: error: frontier06754: tasks 0-7: Exited with exit code 1",
        ]
    )
    ev = foreign.evidence_from_output(text, "1")
    assert {"rank": None, "node": "frontier06754"}.items() <= ev.culprits[0].items()
    unranked = "ValueError: bad sample\nsrun: error: frontier06754: tasks 0-7: Exited with exit code 1\n"
    cause = judge_log(unranked)
    assert cause.category == "code" and cause.nodes == ["frontier06754"] and cause.ranks == []


# a public thread's lines of a Jean Zay job (Slurm's own format: "DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS")
NODE_FAILURE = (
    "slurmstepd: error: *** STEP 1943824.0 ON jean-zay-iam17 CANCELLED AT 2023-03-06T03:17:51 DUE TO NODE FAILURE, "
    "SEE SLURMCTLD LOG FOR DETAILS ***"
)


def test_slurms_node_failure_line_never_names_the_node_that_printed_it():
    # slurmstepd on jean-zay-iam17 printed it: that node is alive; the failed one is another of the job's
    cause = judge_log(NODE_FAILURE)
    assert (cause.category, cause.nodes) == ("node", [])
    two = verdict.judge(foreign.evidence_from_output(NODE_FAILURE, "1", scontrol={"NodeList": "jean-zay-iam[17,37]"}))
    assert two.cause is not None and two.cause.nodes == ["jean-zay-iam37"]
    # srun's "Node failure on NODE" before it names the failed node itself
    cause = judge_log("srun: error: Node failure on jean-zay-iam37\n" + NODE_FAILURE)
    assert (cause.category, cause.nodes) == ("node", ["jean-zay-iam37"])


# round 3 (issue 41): classes of failure the 52 new tuning logs showed, each rule from two projects' logs at least
@pytest.mark.parametrize(
    "name, category, ranks, nodes",
    [
        # an undefined symbol carried by a wrapper's message ("Failed to import X because of the following error")
        ("flashattn-1612-rl-undefined-symbol.log", "environment", [], []),
        # Slurm refuses a gres request: sbatch's and srun's step form
        ("awsome-196-sbatch-invalid-gres.log", "scheduler", [], []),
        ("waveorder-201-srun-step-invalid-gres.log", "scheduler", [], []),
        # mpirun's daemons never started: ssh to the node refused
        ("ompi-5639-mpirun-ssh-port22-refused.log", "environment", [], ["192.168.43.57"]),
        ("ompi-6379-mpirun-ssh-refused-hosts-file.log", "environment", [], ["node2"]),
        # InfiniBand: NCCL's fatal async events, UCX's retry count exceeded (the node that printed it)
        ("nccl-1905-ib-local-access-violation-tp16.log", "network", [], []),
        ("nccl-230-ib-local-catastrophic-error.log", "network", [12], []),
        ("hemelb-813-ib-retry-exceeded-task-abort.log", "network", [], ["r1i6n33"]),
        # every other rank of the node times out in one collective, rank 0 silent: it was busy alone
        ("ufld-119-rank0-evaluating-others-timeout.log", "hang", [0], []),
        ("torchtune-1165-epoch-end-save-timeout.log", "hang", [0], []),
        # a Horovod shutdown is another rank's effect: unknown, mpirun's first process to exit named (rank 0)
        ("uniter-31-horovod-shutdown-missed-oom.log", "unknown", [0], []),
        # a DataLoader worker killed by a signal (Aborted): outside the code as often as in it
        ("llamafactory-8043-llvm-pthread-worker-aborted.log", "unknown", [4], []),
        # thin lines: candidates with what decides, never "names no failure"
        ("nccl-473-docker-shm-unhandled-system-error.log", "unknown", [], []),
        ("pytorch-107021-c10d-rendezvous-connect-timeout.log", "unknown", [], []),
        ("msswift-5884-launcher-sighup.log", "unknown", [], []),
        # a weak line ('unhandled system error') never swallows the strong one after it (/dev/shm)
        ("llamafactory-7233-nccl-dev-shm-segment.log", "environment", [1], []),
    ],
)
def test_round_3_classes_on_their_tuning_logs(name, category, ranks, nodes):
    c = judge_log((REAL / name).read_text())
    assert (c.category, c.ranks, c.nodes) == (category, ranks, nodes), c
    if category == "unknown":
        assert len(c.candidates) >= 2, c
        assert "names no failure" not in c.headline, c


_WD0 = (
    "[rank{r}]:[E1 x] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, "
    "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600034 milliseconds before timing out.\n"
)


def test_rank_0_silent_is_named_only_where_every_other_rank_of_its_node_is_in_the_log():
    assert judge_log("".join(_WD0.format(r=r, seq=900) for r in (1, 2, 3))).category == "hang"
    # rank 2 absent too: which one they wait for is not in the log
    assert judge_log("".join(_WD0.format(r=r, seq=900) for r in (1, 3))).category == "unknown"
    # rank 1 alone (a two-rank job, or one rank's paste): a hang or a barrier only rank 0 reached (a desync)
    assert judge_log(_WD0.format(r=1, seq=900)).category == "unknown"
    # one of the first collectives: a rank busy before it, or the network
    assert judge_log("".join(_WD0.format(r=r, seq=3) for r in (1, 2, 3))).category == "unknown"
    # another node's paste (ranks 9-11): rank 0 is not on it
    assert judge_log("".join(_WD0.format(r=r, seq=900) for r in (9, 10, 11))).category == "unknown"


def test_an_infiniband_event_that_is_no_error_is_no_failure():
    # ibv's benign events ("port active", "GID table change") print through the same NCCL line
    line = "n1:815:864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : port active\n"
    assert judge_log(line).category == "unknown"


def test_an_exception_whose_message_goes_on_with_a_library_failure_is_that_failure_and_only_there():
    # flashattn-1612's form: the wrapper's message, then the undefined symbol on the next line
    sym = "/opt/lib/flash_attn_2_cuda.so: undefined symbol: _ZN2at4_ops5zeros4callE\n"
    wrapper = "RuntimeError: Failed to import transformers.models.bloom because of the following error:\n"
    assert judge_log(wrapper + sym).category == "environment"
    # a code error, then lines of the run, then a library's line: not its message
    later = "ValueError: bad sample at step 5\n" + "".join(f"step {i}\n" for i in range(3)) + sym
    assert judge_log(later).category == "code"


def test_a_lost_peer_named_only_in_nccls_last_error_is_the_node_to_look_at():
    # pytorch-150916: rank 1's ncclRemoteError, its "Last error:" line (no prefix) names the peer that went away
    c = judge_log((REAL / "pytorch-150916-peer-node-killed-remote-error.log").read_text())
    assert (c.category, c.nodes) == ("unknown", ["ip-172-31-45-209.eu-north-1.compute.internal"]), c
    assert len(c.candidates) >= 2


def test_orte_failing_to_start_its_daemons_alone_is_a_candidate_and_the_line_above_it_decides():
    orte = "ORTE was unable to reliably start one or more daemons.\nThis usually is caused by:\n"
    c = judge_log(orte)
    assert c.category == "unknown" and len(c.candidates) >= 2, c
    # ompi-12103: Open MPI's own line before it says a firewall (network); ompi-5639: ssh refused (environment)
    assert judge_log((REAL / "ompi-12103-tcp-connect-firewall-containers.log").read_text()).category == "network"
    assert judge_log("ssh: connect to host 192.168.43.57 port 22: Connection refused\n" + orte).category == "environment"


def test_a_request_slurm_refused_is_not_retried_and_a_time_limit_is():
    refused = verdict.judge(
        foreign.evidence_from_output((REAL / "waveorder-201-srun-step-invalid-gres.log").read_text(), "1")
    )
    assert refused.cause is not None and (refused.cause.category, refused.cause.retry) == ("scheduler", False)
    limit = (
        "slurmstepd: error: *** STEP 55595933.0 ON maestro-3017 CANCELLED AT 2025-01-10T15:27:25 DUE TO TIME LIMIT ***"
    )
    timed = verdict.judge(foreign.evidence_from_output(limit, "1")).cause
    assert timed is not None and (timed.category, timed.retry) == ("scheduler", True)
