"""`clusterdoc why --log`, session 22 (issue 41): forms that heldout-fresh11's first half (parts a-c, a new pool of
threads) showed after it was scored and opened, each written as the class the tool prints: gloo's mesh failure after
gloo bound to loopback, GROMACS' domain decomposition refusal without gmx_fatal's head, Open MPI's PMI2 help text's
first line, verbs' address handle that could not be made. Each class's test failed on the rules before (97d6d19);
the guards beside them (what must stay as it was) passed before and after."""

from __future__ import annotations

import pytest

from tests.why_helpers import judge_log

GLOO_WARN = ("(RayWorkerWrapper pid=1978, ip=10.41.0.8) [rank9]:[W ProcessGroupGloo.cpp:721] Warning: Unable to "
             "resolve hostname to a (local) address. Using the loopback address as fallback. Manually set the network "
             "interface to bind to with GLOO_SOCKET_IFNAME.\n")
GLOO_MESH = ("(RayWorkerWrapper pid=1890, ip=10.41.0.8) [rank8]:[E ProcessGroupGloo.cpp:144] Gloo connectFullMesh "
             "failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error\n")


def test_a_gloo_mesh_that_failed_after_gloo_bound_to_loopback_is_the_environment():
    c = judge_log(GLOO_WARN + GLOO_MESH)
    assert c.category == "environment" and "loopback" in c.headline, (c.category, c.headline)
    assert c.ranks == [8], c.ranks  # the rank whose mesh failed


def test_a_gloo_mesh_failure_alone_or_before_the_warning_stays_the_network():
    assert judge_log(GLOO_MESH).category == "network"
    assert judge_log(GLOO_MESH + GLOO_WARN).category == "network"  # a warning after the failure explains nothing


def test_gromacs_domain_decomposition_refusal_without_its_source_line_is_the_code():
    text = ("Fatal error:\nThere is no domain decomposition for 54 ranks that is compatible with the\n"
            "given box and a minimum cell size of 1.1694 nm\nChange the number of ranks or mdrun option -rdd or -dds\n")
    c = judge_log(text)
    assert c.category == "code" and "ranks" in c.headline, (c.category, c.headline)


def test_open_mpis_pmi2_bad_values_is_the_environment_with_or_without_the_quotes_of_a_paste():
    for head in ("", '"'):
        text = (f"{head}PMI2 initialized but returned bad values for size and rank.\nThis is symptomatic of either a "
                'failure to use the\n"--mpi=pmi2" flag in SLURM, or a borked PMI2 installation.\n')
        c = judge_log(text)
        assert c.category == "environment" and "PMI2" in c.headline, (c.category, c.headline)


def test_an_address_handle_verbs_could_not_make_is_the_network_and_names_the_node():
    text = ("[1641998540.196336] [erchpctmpcpu01:31658:0]       ib_device.c:1319 UCX  ERROR   ibv_create_ah(dlid=49152 "
            "sl=0 port=1 src_path_bits=0 dgid=::ffff:172.17.22.101 sgid_index=1 traffic_class=106) on rocep33s0f1 "
            "failed: Invalid argument\n[erchpctmpcpu01:31658:0:31658]    ud_iface.c:48   Fatal: iface 0xb32050: failed "
            "to get peer address\n")
    c = judge_log(text)
    assert c.category == "network" and c.nodes == ["erchpctmpcpu01"], (c.category, c.nodes, c.headline)


# heldout-fresh11's second half (parts d-f), scored once after the rules above (3ad0c3c), then opened: the state a
# workflow manager reports from Slurm's accounting, a grid's wall-clock kill, a job wrapper's memory limit, a
# workflow task killed by SIGKILL. Each class failed on the rules before (3ad0c3c); its guards did not.
SNAKEMAKE = ("Error in rule run_phyloacc_gt:\n    jobid: 1\n    message: SLURM-job '2254' failed, SLURM status is: "
             "'{}'. For further error details see the cluster/cloud log and the log files of the involved rule(s).\n")


@pytest.mark.parametrize("state,category", [
    ("TIMEOUT", "scheduler"), ("PREEMPTED", "scheduler"), ("DEADLINE", "scheduler"), ("OUT_OF_MEMORY", "oom"),
    ("NODE_FAIL", "node"), ("BOOT_FAIL", "node"),
    ("FAILED", "unknown"), ("CANCELLED", "unknown"),  # the job's own failure, or a cancel: the state says no more
])  # fmt: skip
def test_the_slurm_state_a_workflow_manager_reports_names_the_cause(state, category):
    assert judge_log(SNAKEMAKE.format(state)).category == category


def test_a_grids_wall_clock_kill_is_the_scheduler_and_a_printed_limit_is_nothing():
    kill = "ERROR:RetryJob Not retrying job due to wall clock limit (job automatically killed on the worker node)\n"
    assert judge_log(kill).category == "scheduler"
    assert judge_log("INFO: wall clock limit: 48:00:00\n").category == "unknown"


def test_a_job_wrappers_memory_limit_kill_is_oom():
    text = ("2024-09-29 10:08:59,743:ERROR:PerformanceMonitor:Error in CMSSW step cmsRun1\nNumber of Cores: 8\n"
            "Job has exceeded maxPSS: 16000 MB\nJob has PSS: 16138 MB\n")
    assert judge_log(text).category == "oom"


NEXTFLOW_137 = ("[b8/e9892b] NOTE: Process `RM:CRUMBLE (Macahu1)` terminated with an error exit status (137) -- "
                "Execution is retried (1)\n")


def test_a_workflow_task_killed_by_sigkill_is_oom_unless_the_log_shows_the_scheduler_end_it():
    assert judge_log(NEXTFLOW_137).category == "oom"
    timed = NEXTFLOW_137 + "slurmstepd: error: *** JOB 4242 ON node7 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***\n"
    assert judge_log(timed).category == "scheduler"
