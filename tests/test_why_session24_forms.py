"""`clusterdoc why --log`, session 24 (issue 41): forms that heldout-fresh17 (threads and committed logs no earlier
set cites) showed after it was scored and opened: NCCL's NVLS setup failing in a CUDA call (the node's Fabric
Manager), PSM's adapter driver failing on a node, Ray's older memory monitor, TensorFlow's job missing from its
cluster spec, MVAPICH's mpispawn naming the rank that died, and mpiexec -l's "[N] " rank tag. Each test failed on
the rules before (389d8d1 for the first five); the SIGKILL one also checks what must stay (a candidate, not a
verdict)."""

from __future__ import annotations

from tests.why_helpers import judge_log

FIX = "tests/fixtures/why/"


def _log(path: str) -> str:
    with open(FIX + path, encoding="utf-8", errors="replace") as f:
        return f.read()


def test_nccls_nvls_setup_failing_in_a_cuda_call_is_the_nodes_fabric_state_and_names_the_node():
    # two threads, both settled on the node's Fabric Manager restarted without a GPU reset
    c = judge_log(_log("heldout-fresh16a/nccl-1488-nvls-fabricmanager.log"))
    assert (c.category, c.nodes) == ("node", ["node23"]), (c.category, c.nodes, c.headline)
    assert judge_log(_log("heldout-fresh17c/nccl-976-nvls-cuda-invalid-argument.log")).category == "node"


def test_psms_driver_failing_on_a_node_is_that_node_before_intel_mpis_fabric_line_after_it():
    c = judge_log(_log("heldout-fresh17a/aladyn-42-cnaf-ipath-tmi-fabric.log"))
    assert c.category == "node" and "hpc-200-06-22.cr.cnaf.infn.it" in c.nodes, (c.category, c.nodes, c.headline)
    # Intel MPI's fabric line alone stays the environment (a fabric the job asked for and this node lacks)
    alone = "[128] MPI startup(): tmi fabric is not available and fallback fabric is not enabled\n"
    assert judge_log(alone).category == "environment"


def test_rays_older_memory_monitor_is_the_nodes_host_memory_and_names_the_node():
    c = judge_log(_log("heldout-fresh17b/ray-28781-raylet-system-memory-low.log"))
    assert (c.category, c.nodes) == ("oom", ["10.0.3.179"]), (c.category, c.nodes, c.headline)


def test_a_tensorflow_job_its_cluster_spec_does_not_define_is_the_launchs_own_arguments():
    c = judge_log(_log("heldout-fresh17b/lingvo-121-job-not-defined-in-cluster.log"))
    assert c.category == "code" and "cluster spec" in c.headline, (c.category, c.headline)


def test_mvapichs_mpispawn_names_the_rank_and_node_a_sigkill_stays_a_candidate():
    c = judge_log(_log("heldout-fresh17a/peridigm-12-stampede-rank0-signal-9.log"))
    assert c.category == "unknown" and c.candidates and c.candidates[0].startswith("oom"), (c.category, c.candidates)
    assert 0 in c.ranks or "rank 0" in c.headline, (c.ranks, c.headline)
    assert "c558-702.stampede.tacc.utexas.edu" in c.headline, c.headline


def test_mpiexec_dash_l_rank_tag_names_the_rank_that_threw():
    text = "[1] About to throw 0\n[1] terminate called after throwing an instance of 'int'\n"
    c = judge_log(text)
    assert c.category == "code" and c.ranks == [1], (c.category, c.ranks, c.headline)
