"""The OOM retry's drain (shim/drain.py) answers a peer waiting in all_gather_object without unpickling what the
peer sent (issue 32: nothing crosses between processes as pickle into clusterdoc): a peer whose object has a
__reduce__ payload runs nothing in the draining rank, and the peer gets None from it as before."""

import subprocess
import sys

import pytest

from clusterdoc.launch.job import free_port

pytestmark = pytest.mark.slow  # two real gloo processes

RANK = r"""
import datetime, os, sys
import torch.distributed as dist
rank, port, marker = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=2,
                        timeout=datetime.timedelta(seconds=20))


class Evil:
    def __reduce__(self):
        return (os.system, ("echo $PPID >> " + marker,))  # the pid of the process that unpickles it


if rank == 0:  # the user's own call, with a hostile object
    objs = [None, None]
    dist.all_gather_object(objs, Evil())
    print("rank0 got", objs[1])
else:  # the rank that stopped earlier drains it
    from clusterdoc.shim import drain
    drain._all_gather_object(None, 2)
    print("rank1 drained in pid %d" % os.getpid())
dist.destroy_process_group()
"""


def test_draining_a_peers_all_gather_object_unpickles_nothing(tmp_path):
    marker = tmp_path / "ran"
    port = free_port()
    procs = [subprocess.Popen([sys.executable, "-c", RANK, str(r), str(port), str(marker)], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for r in (1, 0)]  # fmt: skip
    outs = [p.communicate(timeout=60)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert "rank1 drained" in outs[0] and "rank0 got None" in outs[1], outs
    drained_pid = outs[0].split("rank1 drained in pid ")[1].split()[0]
    ran_in = marker.read_text().split() if marker.exists() else []
    assert ran_in == [str(procs[1].pid)]  # only in rank 0, which unpickles its own object (the user's call)
    assert drained_pid not in ran_in  # the draining rank never unpickled it
