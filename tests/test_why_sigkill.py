"""A worker killed by SIGKILL (issue 41, session 17). torchrun, DeepSpeed's launcher and mp.spawn report one worker's
SIGKILL while they live on: with nothing else in the log that stops a job (a scheduler's line, a node's failure, a
signal to the launcher itself), that is the kernel's OOM killer, which takes the largest process (14 of 14 such logs
in the dev sets were settled as host memory). mpirun's signal 9 and a job script's `Killed` stay thin: a node lost
under mpirun and a kill of the script print the same (paddle-13288, c3nl-20)."""

from __future__ import annotations

import pytest

from tests.why_helpers import judge_log

TORCHRUN = (  # cppo-6 (https://github.com/lzhxmu/CPPO/issues/6), torchrun's failure table
    "Root Cause (first observed failure):\n[0]:\n  time      : 2025-05-21_15:43:03\n  host      : worker-3\n"
    "  rank      : 0 (local_rank: 0)\n  exitcode  : -9 (pid: 14750)\n  error_file: <N/A>\n"
    "  traceback : Signal 9 (SIGKILL) received by PID 14750\n"
)


@pytest.mark.parametrize(
    "text",
    [
        TORCHRUN,
        # deepspeed-3232 (https://github.com/deepspeedai/DeepSpeed/issues/3232): DeepSpeed's launcher
        "[2023-04-13 05:05:43,163] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python3', '-u', 'main.py', "
        "'--local_rank=0'] exits with return code = -9\n",
        # yolox-76 (https://github.com/Megvii-BaseDetection/YOLOX/issues/76): mp.spawn, then a child's cut pickle
        "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL\n"
        "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
        "_pickle.UnpicklingError: pickle data was truncated\n",
    ],
)
def test_a_workers_sigkill_with_nothing_else_is_the_hosts_oom_killer(text):
    assert judge_log(text).category == "oom"


@pytest.mark.parametrize(
    "before",
    [
        "slurmstepd: error: *** STEP 1234.0 ON node07 CANCELLED AT 2025-05-21T15:43:01 DUE TO TIME LIMIT ***\n",
        # the launcher itself was signalled first (scancel, a preemption, a closed terminal)
        "W0521 15:43:01.194000 84933 torch/distributed/elastic/agent/server/api.py:719] Received 15 death signal, "
        "shutting down workers\n",
    ],
)
def test_a_sigkill_after_a_stop_from_outside_is_not_the_oom_killer(before):
    assert judge_log(before + TORCHRUN).category != "oom"


@pytest.mark.parametrize(
    "text",
    [
        # ompi-2661's form: mpirun's report (a node lost under it prints the same: paddle-13288)
        "mpirun noticed that process rank 0 with PID 21183 on node host01 exited on signal 9 (Killed).\n",
        # a job script's command killed (bash's report; c3nl-20, unsettled)
        "/var/spool/slurmd/job123/slurm_script: line 12: 43431 Killed                  python train.py\n",
    ],
)
def test_mpiruns_and_a_scripts_sigkill_stay_thin(text):
    cause = judge_log(text)
    assert cause.category == "unknown" and cause.candidates[0].startswith("oom"), (cause.category, cause.candidates)
