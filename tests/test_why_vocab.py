"""`clusterdoc why --log`'s fallback where no signature and no exception rule decides (issue 41, why/vocab.py): the
log's failure lines by family. One family decides, with its first line; two families are "unknown" with both as
candidates; an effect or a lone ambiguous word decides nothing. Each from small real excerpts of the tuning logs
in tests/fixtures/why/real (SOURCES.md names their threads).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterdoc.why import logread, vocab
from tests.why_helpers import judge_log

REAL = Path(__file__).parent / "fixtures" / "why" / "real"

NETWORK = (
    " The client socket has failed to connect to any network address of (hcp-bb-03, 52873). The client socket has "
    "failed to connect to hcp-bb-03:52873 (errno: 110 - Connection timed out)"
)  # colossalai-examples-207 (heldout-fresh); nccl-1016's connect abort and nccl-2013's ibv_modify_qp line, the
# examples before, are signatures of their own now (nccl-connect-failed, ib-modify-qp)
NODE = (
    "2047: [Mon Feb 2 22:52:45 2026] nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 12028, Non-fatal, Link 62 egress "
    "non-posted PRIV error (First)"
)  # sulao-nvswitch-sxid12028 (heldout-fresh15c), with srun -l's task prefix; e3sm-8699's cudaErrorDevicesUnavailable,
# the example before, is the CUDA catalogue's (a candidate of three: the node, the node's set-up, the code's mapping)


@pytest.mark.parametrize(
    "line, family",
    [
        (NETWORK, "network"),
        ("[E528 08:52:46.164295950 ProcessGroupGloo.cpp:145] Gloo connectFullMesh failed with "
         "[/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:144] no error", "network"),  # gpustack-2125
        (NODE, "node"),
        ("salloc: error: QOSMaxSubmitJobPerUserLimit", "scheduler"),  # technotes-7
        ("timed out initializing process group in store based barrier on rank", "hang"),  # chatglm2ft-6
        ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=37205392.0. Some of your processes may have "
         "been killed by the cgroup out-of-memory handler.", "oom"),  # brainscore-950
        ("ImportError: /root/miniconda3/envs/py310/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: "
         "undefined symbol: ncclCommInitRankScalable", "environment"),  # paddle-74792
    ],
)  # fmt: skip
def test_a_failure_line_names_its_family(line, family):
    assert vocab.families(line) == [family]


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: Timed out after 1800 seconds",  # a lone ambiguous word
        "[rank1]: RuntimeError: Connection closed by peer [10.0.0.2]:29500",  # an effect of a peer's end
        "W0313 Sending process 1234 closing signal SIGTERM",  # the launcher stopping the others
        "loading checkpoint: out of memory handling is set to retry",  # no failure marker: not a failure line
        "n1:815:864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : port active",  # benign
    ],
)
def test_an_effect_or_an_ambiguous_word_names_no_family(line):
    assert vocab.families(line) == []


def test_one_family_is_the_first_candidate_with_its_line_and_prefix_never_the_verdict():
    # thin evidence: on the logs kept back, a family word deciding made as many ambiguous logs confidently wrong as
    # it made right (issue 41), so it leads the candidates of an unknown, with its line, rank and node
    # (nccl-2013's ibv_modify_qp line, once this example, is now a signature of its own: ib-modify-qp)
    c = judge_log(NETWORK + "\n")
    assert c.category == "unknown" and c.rule == "failure-lines" and len(c.candidates) >= 2
    assert c.candidates[0].startswith("network:") and "client socket" in c.evidence[0]
    c = judge_log(NODE + "\n")
    assert (c.category, c.candidates[0].split(":")[0], c.ranks) == ("unknown", "node", [2047])  # srun -l's task
    c = judge_log((REAL / "e3sm-8699-pm-gpu-devices-unavailable-nid004069.log").read_text())
    assert "node" in [k.split(":")[0] for k in c.candidates] and (c.ranks, c.nodes) == ([2047], ["nid004069"])


def test_two_families_with_no_link_are_unknown_with_both_candidates():
    c = judge_log(NODE + "\n" + NETWORK + "\n")
    assert c.category == "unknown"
    assert [k.split(":")[0] for k in c.candidates] == ["node", "network"]
    assert "which failed first" in c.next_step


def test_a_timeout_waiting_beside_another_family_is_its_effect():
    hang = "timed out initializing process group in store based barrier on rank\n"  # chatglm2ft-6, whole
    assert judge_log(hang).candidates[0].startswith("hang:")
    c = judge_log(NETWORK + "\n" + hang)
    assert c.candidates[0].startswith("network:") and "client socket" in c.evidence[0]


def test_every_family_word_reaches_the_parsers_of_a_big_log():
    """A family's word on a line of a big log's bulk (read through the grep prefilter) is kept."""
    for word in vocab.WORDS:
        assert any(w in word.encode() for w in logread.WORDS), word
