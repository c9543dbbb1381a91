"""scripts/before_after.py's normalising (pure): what differs between two runs of the same code goes, what differs
between two versions of the code stays. The cluster run itself is the script (docs/development.md)."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("before_after", ROOT / "scripts" / "before_after.py")
ba = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ba)

# two runs of `submit --wait` of one failing Slurm job, as each printed it (ids, paths, times, sizes, order)
RUN_A = """job slurm-20261128-021653-685212dc (slurm, 2 node(s) x 1 rank(s)); logs: /w/before/clusterdoc-jobs/slurm-20261128-021653-685212dc
slurm job 12 submitted
[rank 1] [W1128 02:16:58.123 socket.cpp:207] hostname err=-3
[rank 0] rank 0 (node1): compute 12.5 ms, waiting 3 ms (0%); peak RSS 233.5 MiB
mpirun job 535 started; -f /tmp/clusterdoc-mpi-xy7wea_2/hostfile
4 node(s) checked in 2.3s: 0 problem(s)
"""
RUN_B = """job slurm-20261128-031102-0a1b2c3d (slurm, 2 node(s) x 1 rank(s)); logs: /w/after/clusterdoc-jobs/slurm-20261128-031102-0a1b2c3d
slurm job 40 submitted
[rank 0] rank 0 (node1): compute 11 ms, waiting 4 ms (0%); peak RSS 231.9 MiB
[rank 1] [W1128 03:11:07.456 socket.cpp:207] hostname err=-3
mpirun job 3311 started; -f /tmp/clusterdoc-mpi-q4cwsinf/hostfile
4 node(s) checked in 1.1s: 0 problem(s)
"""
PATHS = {"/w/before": "<CWD>", "/w/after": "<CWD>"}


def test_two_runs_of_the_same_code_normalise_alike():
    a, b = ba.Normaliser(PATHS)(RUN_A), ba.Normaliser(PATHS)(RUN_B)
    assert a == b, a
    assert "<JOB-slurm1>" in a and "slurm job <ID1>" in a and "[rank 0]" in a.splitlines()[2]


def test_a_changed_word_or_state_still_differs():
    changed = RUN_B.replace("0 problem(s)", "1 problem(s)").replace("(node1)", "(node2)")
    assert ba.Normaliser(PATHS)(RUN_A) != ba.Normaliser(PATHS)(changed)
    # each rank's own lines keep their order
    lines = ["[rank 1] b1", "[rank 0] a1", "[rank 1] b2", "[rank 0] a2", "x"]
    assert ba.rank_blocks_sorted(lines) == ["[rank 0] a1", "[rank 0] a2", "[rank 1] b1", "[rank 1] b2", "x"]


def test_json_is_reindented_and_mpiruns_hostnames_sorted():
    a = ba.canonical('{"mpirun": {"names": ["node1", "node4", "node3"]}, "order": ["b", "a"]}')
    b = ba.canonical('{"mpirun": {"names": ["node3", "node1", "node4"]}, "order": ["b", "a"]}')
    assert a == b and '"order": [\n  "b",\n  "a"\n ]' in a
    assert ba.canonical("not json\n") == "not json\n"
