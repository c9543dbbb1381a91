"""Start N real ranks of tests/shim_jobs/job.py on loopback with torchrun's variables set by hand.

For unit scenarios only (the launcher is not their point): what the real launchers do is tested in
tests/test_shim_launchers.py and tests/test_shim_launchers_cluster.py, which run torchrun, accelerate, srun,
mpirun and deepspeed themselves.
"""
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

JOB = Path(__file__).parent / "shim_jobs" / "job.py"
REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PORT_TAKEN = "[Errno 98] Address already in use"
PORT_TRIES = 3


def run_ranks(*argv, n=2, env=None, timeout=240, shared=None):
    """Run the scenario on n ranks; return [(returncode, results, stdout+stderr)] by rank.

    shared: a file path all ranks append their output to (to see the order of lines across ranks);
    then each rank's text is the whole file.

    The port free_port() found can be taken by another process before rank 0 binds it (ci52: the test cluster's
    lane runs beside these tests): rank 0 then fails its rendezvous with EADDRINUSE, and the run is tried again on
    another port (a shared file is started afresh), as torch's own tests do.
    """
    for attempt in range(PORT_TRIES):
        if shared and attempt:
            Path(shared).write_text("")
        outs = _run_ranks_on(free_port(), argv, n, env, timeout, shared)
        if not any(rc and PORT_TAKEN in text for rc, _, text in outs):
            break
    return outs


def _run_ranks_on(port, argv, n, env, timeout, shared):
    secret = os.urandom(16).hex()  # the job's store seal, as clusterdoc submit gives each job (hang/seal.py)
    procs = []
    sink = open(shared, "a") if shared else None
    for rank in range(n):
        e = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PMI_", "OMPI_", "CLUSTERDOC_"))}
        e.update(RANK=str(rank), WORLD_SIZE=str(n), LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(n),
                 MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), CLUSTERDOC_INIT_TIMEOUT="30",
                 PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1", CLUSTERDOC_JOB_SECRET=secret)
        e.update(env or {})
        procs.append(subprocess.Popen([sys.executable, str(JOB), *map(str, argv)], env=e,
                                      stdout=sink or subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outs = []
    try:
        for rank, p in enumerate(procs):
            text, _ = p.communicate(timeout=timeout)
            if sink:
                text = Path(shared).read_text()
                results = [r for r in parse_results(text) if r.get("rank") == rank]
            else:
                results = parse_results(text)
            outs.append((p.returncode, results, text))
    finally:
        if sink:
            sink.close()
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return outs


def parse_results(text):
    """The RESULT records in a rank's output. A RESULT is one write, but torch's C++ logging writes a warning
    in pieces to the same pipe, so a record may follow a fragment of one on its line: found anywhere in it."""
    return [json.loads(line[line.index("RESULT {") + 7:]) for line in text.splitlines() if "RESULT {" in line]


def results(outs):
    """The single RESULT of each rank, failing loudly with the rank's output if it is missing."""
    found = []
    for rank, (rc, res, text) in enumerate(outs):
        assert rc == 0 and len(res) == 1, f"rank {rank} rc={rc}:\n{text[-3000:]}"
        found.append(res[0])
    return found


def logged_in_rank_order(lines: list[str]) -> bool:
    """in_order=True's lines from every rank ("[rank N] TIME ... [rank N/W host] ..."): each rank logs after the one
    before it has (a barrier between turns), so the records' times rise with the rank. The order the lines reach the
    screen is the launcher's: mpirun and srun forward several nodes' output, and two lines written a millisecond
    apart on two nodes may arrive swapped (ci40)."""
    stamp = {}
    for line in lines:
        rank = re.match(r"\[rank (\d{1,4})\]", line)
        when = re.search(r"\d{2}:\d{2}:\d{2},\d{3}", line)
        if not rank or not when:
            return False
        stamp[int(rank.group(1))] = when.group(0)
    return [stamp[r] for r in sorted(stamp)] == sorted(stamp.values())

