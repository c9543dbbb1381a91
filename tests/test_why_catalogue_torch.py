"""`clusterdoc why`'s catalogue of torch's own failure messages, read from torch's source (issue 41): the table is
what scripts/catalogue_torch.py makes of the committed raw list, its rows cost the pre-check nothing, real lines
from public threads that the learned signatures missed are named by it, and torch's own INFO lines are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterdoc.why import candidates, signatures
from clusterdoc.why.sigtable import (
    catalogue_torch,
    code,
    desync,
    effect,
    environment,
    hang,
    network,
    node,
    oom,
    peer,
    scheduler,
)
from tests.why_helpers import assert_generated, judge_log, keys_without, load_script

ROOT = Path(__file__).resolve().parents[1]


def _script():
    return load_script("catalogue_torch")


def test_the_table_is_what_the_script_makes_of_the_committed_raw_list():
    script = _script()
    rows = script.read_raw()
    assert 100 < len(rows) <= script.MAX_ROWS
    assert all(len(r) == 5 and r[2].isdigit() for r in rows), "commit, file, line, kind, format"
    assert {r[0] for r in rows} == {"cf30153c4c131c8164ee7798e5022d810682e2cb"}  # one commit
    assert_generated(script.render(script.classify(rows)), script.TABLE, "python scripts/catalogue_torch.py table")


def test_the_rows_keep_the_pre_check_and_come_last():
    sigs = catalogue_torch.SIGNATURES
    assert 0 < len(sigs) <= 400
    tables = (code, desync, effect, environment, hang, network, node, oom, peer, scheduler)
    at = {id(s): i for i, s in enumerate(signatures.SIGNATURES)}
    mine = sorted(at[id(s)] for s in sigs)
    assert mine == list(range(mine[0], mine[0] + len(sigs)))  # one block, in the table's order
    assert max(at[id(s)] for t in tables for s in t.SIGNATURES) < mine[0]  # a fallback: every learned one first
    assert signatures._KEYS == keys_without(sigs)  # the catalogue adds no key: no line pays one more check
    for s in sigs:
        assert any(k in s.needles[0].lower() for k in signatures._KEYS_PICKED), s.name
        assert len(s.needles[0]) >= 24 and all(len(n) >= 12 or n == "Backend " for n in s.needles), s.name
        assert s.source.startswith("https://github.com/pytorch/pytorch/blob/cf30153c"), s.source
        assert s.name.startswith("torchsrc-") and s.meaning and s.next_step
        assert not s.weak or len(candidates.for_signature(s)) >= 2, s.name  # a candidate names what decides


# --- real lines from public threads (each thread beside its line) that the learned signatures did not name ---


def test_a_torch_build_without_mpi_is_the_environment_not_the_code():
    # https://github.com/open-ce/open-ce/issues/376 (a conda build of torch without MPI; the main rules said code)
    c = judge_log(
        '  File "python3.7/site-packages/torch/distributed/distributed_c10d.py", line 496, in '
        '_new_process_group_helper\n    "Distributed package doesn\'t have MPI built in."\n'
        "RuntimeError: Distributed package doesn't have MPI built in. MPI is only included if you build "
        "PyTorch from source on a host that has MPI installed.\n"
    )
    assert c.category == "environment", c.headline
    assert signatures.match("RuntimeError: Distributed package doesn't have Gloo built in").category == "environment"


@pytest.mark.parametrize(
    "line, name, category",
    [
        # https://github.com/wenet-e2e/wekws/issues/172 (torchrun's rendezvous: its store gone when another job ended)
        (
            "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has "
            "failed. See inner exception for details.",
            "torchsrc-rdzv-connect-",
            "network",
        ),
        # https://github.com/pytorch/pytorch/issues/68643 (the DataLoader's own timeout; the main rules named NCCL)
        ("RuntimeError: DataLoader timed out after 5 seconds", "torchsrc-dataloader-timeout-", "hang"),
        # https://github.com/tczhangzhi/pytorch-distributed/issues/18 (torch 1.x's words: worker_count, not
        # num_workers_joined: the long first piece names it alone)
        (
            "RuntimeError: Timed out initializing process group in store based barrier on rank: 2, for key: "
            "store_based_barrier_key:1 (world_size=2, worker_count=4, timeout=0:30:00)",
            "torchsrc-store-wait-timeout-",
            "hang",
        ),
    ],
)
def test_a_wait_or_a_connection_that_ended_is_a_candidate_never_a_verdict(line, name, category):
    sig = signatures.match(line)
    assert sig is not None and sig.name.startswith(name) and sig.weak and sig.category == category, sig
    c = judge_log(line + "\n")
    assert c.category == "unknown" and len(c.candidates) >= 2, (c.category, c.candidates)  # and what decides


# --- look-alikes: torch's INFO and WARNING lines, and hints, are no failure ---


@pytest.mark.parametrize(
    "line",
    [
        # torch/distributed/distributed_c10d.py (at the catalogue's commit): the barrier's INFO while it waits
        "INFO:torch.distributed.distributed_c10d:Waiting in store based barrier to initialize process group for "
        "30 seconds",
        "INFO:torch.distributed.distributed_c10d:Added key: store_based_barrier_key:1 to store for rank: 0",
        # torch/distributed/elastic/agent/server/api.py: the rendezvous done
        "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:",
        # https://github.com/epfml/powersgd/issues/21 (torchrun's start-up warning)
        "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being "
        "overloaded, please further tune the variable for optimal performance in your application as needed.",
        "Cuda is not available.",  # too common a text for a needle (run.py's short message is left out)
    ],
)
def test_torchs_info_lines_and_hints_match_no_catalogue_row(line):
    sig = signatures.match(line)
    assert sig is None or not sig.name.startswith("torchsrc-"), sig.name


# --- torch's C++ side (the headers the wheel ships, at the same commit): c10d's collective checks, the store ---


def test_a_collectives_argument_check_is_the_code_on_that_rank():
    # https://github.com/pytorch/pytorch/issues/27440 (gloo's gather given a list of the wrong length)
    line = (
        "ValueError: ProcessGroupGloo::gather: requires a single-element output list containing a list with "
        "<size> tensors"
    )
    sig = signatures.match(line)
    assert sig is not None and sig.name.startswith("torchsrc-collective-argument-") and not sig.weak, sig
    assert "Utils.hpp#L" in sig.source
    assert judge_log(line + "\n").category == "code"
    assert signatures.match("RuntimeError: Backend gloo does not support reduce_scatter").category == "code"


def test_the_stores_socket_closed_by_the_other_side_is_never_a_cause_alone():
    # https://github.com/pytorch/pytorch/pull/153586 (its test plan: a TCPStore whose server went away)
    line = (
        "[W514 18:33:36.536327028 TCPStore.cpp:138] [c10d] recvValueWithTimeout failed on SocketImpl(fd=3, "
        "addr=[localhost]:34658, remote=[localhost]:1234): Failed to recv, got 0 bytes. Connection was likely "
        "closed. Did the remote server shutdown or crash?"
    )
    sig = signatures.match(line)
    assert sig is not None and sig.name.startswith("torchsrc-store-socket-closed-") and sig.category == "peer", sig
    assert judge_log(line + "\n").category == "unknown"


@pytest.mark.parametrize(
    "line",
    [
        "MPS backend does not support allgather",  # another library's words: torch's own say `Backend NAME`
        "the kernel does not support allreduce here",
    ],
)
def test_another_tools_words_are_not_torchs_backend_check(line):
    sig = signatures.match(line)
    assert sig is None or not sig.name.startswith("torchsrc-"), sig.name
