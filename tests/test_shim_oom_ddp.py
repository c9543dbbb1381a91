"""OOM retry when the ranks stop at different points of an attempt: DDP training on real gloo groups.

tests/shim_jobs/job.py oom_ddp: a DDP model with several gradient buckets, three steps per attempt; one rank
(or two) runs out of memory at a given point while its peers are in DDP's all_reduce, in the next forward or
in plain collectives. Every rank must end on the same batch with the same parameters, the group usable, no
listener thread left behind, and the retry quick.
"""
import pytest

from tests.shim_helpers import results, run_ranks

SIZES = [256, 230, 207, 186, 167, 150, 135, 121, 108, 97, 87, 78, 70, 63, 56, 50, 45]  # 0.9 back-off


def check_consistent(found, used, attempts):
    world = len(found)
    for r in found:
        assert r["error"] is None, r["error"]
        assert (r["used"], r["attempts"]) == (used, attempts), r
        assert r["sum"] == world  # the default group still works
        assert "clusterdoc-oom-listener" not in r["threads"], r["threads"]
    # the same parameters everywhere (DDP kept them in step, the retry re-synced them), and a DDP step after
    # the search still averages the gradients
    assert all(r["checksum"] == found[0]["checksum"] for r in found), [r["checksum"] for r in found]
    assert all(r["grads"] == found[0]["grads"] for r in found)
    # the drained calls count in the tracker too: a hang report after a retry compares the same sequence numbers
    assert all(r["seq"] == found[0]["seq"] for r in found), [r["seq"] for r in found]


def retry_latency(found):
    """Seconds from the first OOM of attempt 1 to the last rank starting attempt 2."""
    first_oom = min(t for r in found for t in r["times"]["oom"])
    return max(r["times"]["start"][1] for r in found) - first_oom


@pytest.mark.parametrize("where", ["forward", "backward", "step", "plain"])
def test_one_rank_oom_while_the_other_is_in_a_collective(where):
    found = results(run_ranks("oom_ddp", where, "1:230", n=2))
    check_consistent(found, used=230, attempts=2)
    assert len(found[1]["times"]["oom"]) == 1 and not found[0]["times"]["oom"]
    print(f"{where}: retry latency {retry_latency(found):.2f} s")


def test_four_ranks_one_oom_in_forward_retries_quickly():
    found = results(run_ranks("oom_ddp", "forward", "1:230", n=4))
    check_consistent(found, used=230, attempts=2)
    latency = retry_latency(found)
    print(f"4 ranks: retry latency {latency:.2f} s")
    assert latency < 10  # target 2 s (met on a quiet machine); this one is shared


def test_four_ranks_two_ooms_at_different_points_and_sizes():
    # rank 1 fits 220 (OOM in the first forward), rank 2 fits 200 (OOM in the second backward): 256 and 230
    # stop at rank 1 (rank 2 never gets to its second step), 207 at rank 2, 186 fits
    found = results(run_ranks("oom_ddp", "forward,backward", "1:220,2:200", n=4))
    check_consistent(found, used=186, attempts=4)
    assert len(found[1]["times"]["oom"]) == 2 and len(found[2]["times"]["oom"]) == 1


def test_must_show_ddp_rank_1_fits_48_both_finish_on_the_same_size():
    found = results(run_ranks("oom_ddp", "forward", "1:48", n=2, timeout=600))
    check_consistent(found, used=45, attempts=len(SIZES))
    assert 24 <= found[0]["used"] <= 48


def test_peers_in_a_collective_that_cannot_be_replayed_all_raise_one_clear_error():
    found = results(run_ranks("oom_ddp", "unsafe", "1:230", n=2))
    for r in found:
        assert r["error"].startswith("RetryUnsafe: find_executable_batch_size cannot retry in-process"), r
        assert "rank 1 ran out of memory" in r["error"] and "all_to_all_single" in r["error"]
        assert "probe=" in r["error"] and "clusterdoc submit --oom-retry" in r["error"]
        assert r["elapsed"] < 60


# ---- the example job under clusterdoc submit (local backend)

@pytest.mark.slow
def test_example_under_submit_local_both_ranks_finish_on_the_same_batch(tmp_path):
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_"))}
    env.update(HOME=str(tmp_path), CLUSTERDOC_BACKEND="local", PYTHONPATH=str(root))
    res = subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--nodes", "2", "--no-preflight",
                          str(root / "jobs" / "train_ddp_oom.py")], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=900, check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "job completed: all 2 ranks exited 0" in res.stderr
    done = re.findall(r"\[rank (\d)/2 .*trained with batch size (\d+), parameter checksum (\S+)", res.stderr)
    assert [d[0] for d in done] == ["0", "1"], res.stderr[-3000:]
    assert len({(d[1], d[2]) for d in done}) == 1 and 24 <= int(done[0][1]) <= 48, done
    assert "retrying with batch_size=" in res.stderr and "SIGABRT" not in res.stderr


# ---- single process: Accelerate's signature

def test_signature_is_accelerates_and_reduce_batch_size_fn_is_used():
    import inspect

    from clusterdoc.shim.oom import find_executable_batch_size

    params = list(inspect.signature(find_executable_batch_size).parameters)
    assert params[:3] == ["function", "starting_batch_size", "reduce_batch_size_fn"]
    calls = []

    def step(batch_size):
        calls.append(batch_size)
        if batch_size > 40:
            raise RuntimeError("CUDA out of memory.")
        return batch_size

    sizes = iter([64, 37])
    assert find_executable_batch_size(step, 100, lambda: next(sizes))() == 37
    assert calls == [100, 64, 37]
