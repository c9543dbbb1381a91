"""The rank that never joined the rendezvous (issue 43's mpirun campaign, job 47): a rank stopped before the
rendezvous makes the store's host (rank 0) time out ("Timed out after N seconds waiting for clients. K/N clients
joined") and exit 1, its clients lose the store. `why` names the rank that never joined (a hang of it), from the
ranks' own records against the store's count; before, it said "unknown" (rank 0's exit code as a candidate).
Real ranks of the local backend, a real gloo rendezvous, a real SIGSTOP: rank 2 stops itself as it first imports
torch.distributed (a sitecustomize hook), after its start record, before clusterdoc.run's rendezvous."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from clusterdoc.why import evidence, logs, verdict

pytestmark = pytest.mark.slow
INIT = 10  # CLUSTERDOC_INIT_TIMEOUT: rank 0 waits this long for its clients

JOB = "import torch.distributed as dist\ndist.barrier()\n"
STOP = """
import builtins, os, signal
if os.environ.get("RANK") == "2":
    _import = builtins.__import__

    def _stop_at_torch_distributed(name, *args, **kwargs):
        if name.startswith("torch.distributed"):
            builtins.__import__ = _import
            os.kill(os.getpid(), signal.SIGSTOP)  # never reaches the rendezvous (until the launcher kills it)
        return _import(name, *args, **kwargs)

    builtins.__import__ = _stop_at_torch_distributed
"""


def test_the_rank_stopped_before_the_rendezvous_is_named(tmp_path):
    script = tmp_path / "stopper.py"
    script.write_text(JOB)
    (tmp_path / "hook").mkdir()
    (tmp_path / "hook" / "sitecustomize.py").write_text(STOP)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_"))}
    env.update(
        OMP_NUM_THREADS="1",
        CLUSTERDOC_INIT_TIMEOUT=str(INIT),
        PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path / "hook"), env.get("PYTHONPATH")])),
    )
    res = subprocess.run([sys.executable, "-m", "clusterdoc", "submit", "--backend", "local", "--nodes", "3",
                          "--no-preflight", "--hang-timeout", "0", "--folder", str(tmp_path / "jobs"), str(script)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)  # fmt: skip
    assert res.returncode == 1, res.stderr[-3000:]
    (jd,) = (tmp_path / "jobs").iterdir()
    assert (jd / "rank2.start").exists() and not (jd / "rank2.exit").exists()  # it started, then stopped
    assert logs.rendezvous_short((jd / "rank0.err").read_text())[1:] == [2, 3], (jd / "rank0.err").read_text()[-2000:]
    why = subprocess.run([sys.executable, "-m", "clusterdoc", "why", str(jd), "--json", "--no-probe"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    cause = json.loads(why.stdout)["cause"]
    assert cause["category"] == "hang" and cause["ranks"] == [2], cause
    assert "rank 2" in cause["headline"] and "never joined the rendezvous" in cause["headline"], cause
    assert "2/3 clients joined" in " ".join(cause["evidence"]), cause


def facts(rank: int, **kw) -> evidence.RankFacts:
    return evidence.RankFacts(rank=rank, host=f"node{rank + 1}", **kw)


def judged(ranks: list[evidence.RankFacts], world: int = 3):
    return verdict.judge(evidence.Evidence(job="j", backend="mpirun", world=world, state="FAILED", ranks=ranks)).cause


def test_only_where_the_count_matches_the_silent_ranks():
    host = facts(0, code=1, recorded=True, ended=131.0, rendezvous=[30, 2, 3])
    lost = facts(
        1, code=1, recorded=True, ended=131.5, raised={"type": "DistNetworkError", "message": "Failed to recv"}
    )
    c = judged([host, lost, facts(2)])
    assert c.category == "hang" and c.ranks == [2] and "never joined" in c.headline, c
    # two silent ranks, one missing from the count: which one is not known, nobody is named
    c = judged([host, facts(1), facts(2)])
    assert c.category != "hang" or c.ranks != [1], c
    assert "never joined" not in c.headline, c
    # no count from the store: nothing to go by
    assert "never joined" not in judged([facts(0, code=1, recorded=True), lost, facts(2)]).headline
