"""`clusterdoc why --log` round 9 (issue 41): how sites and platforms end or refuse a job, each from a real paste
(its thread beside it; the whole log and its row in tests/fixtures/why/real/ and SOURCES.md). Every excerpt here
was unknown, or a confident wrong category, under round 8's rules. Pure, in memory.
"""

from __future__ import annotations

import pytest

from tests.why_helpers import judge_log

# --- Slurm's start-up failures: the controller, munge, a node's slurmd, the request ---


@pytest.mark.parametrize(
    "text",
    [
        # https://github.com/ArjunaCluster/ArjunaUsers/issues/100
        "srun: error: Unable to confirm allocation for job 60564: Unable to contact slurm controller (connect "
        "failure)\nsrun: Check SLURM_JOB_ID environment variable. Expired or invalid job 60564\n",
        # https://github.com/galaxyproject/pulsar/issues/254 (round 8: sbatch's prefix, a refusal)
        "Exception: Failed to submit job, error was:\n"
        "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n",
    ],
)
def test_controller_down_is_the_scheduler_and_no_refusal(text):
    c = judge_log(text)
    assert c.category == "scheduler" and not c.weak and not c.refused, c  # the same job runs once it is back


def test_a_query_that_missed_the_controller_is_a_candidate_and_yields_to_the_failure_after_it():
    # https://github.com/ai4d-iasc/trixie/issues/93 (slurmctld had crashed): a query's words, a candidate
    c = judge_log("sinfo\nslurm_load_partitions: Unable to contact slurm controller (connect failure)\n")
    assert c.category == "unknown" and "query" in c.headline and len(c.candidates) >= 2, c
    # a workflow manager's polling hiccup before the job's own memory kill: the kill is the cause
    c = judge_log(
        "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n"
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=37205392.0. Some of your processes may have been "
        "killed by the cgroup out-of-memory handler.\n"
    )
    assert c.category == "oom", c


def test_munge_not_running_is_the_environment_not_a_refusal():
    # https://github.com/dun/munge/issues/118: round 8 read sbatch's prefix as a refused request
    c = judge_log(
        "sbatch: error: If munged is up, restart with --num-threads=10\n\n"
        'sbatch: error: Munge encode failed: Failed to access "/run/munge/munge.socket.2": No such file or '
        "directory\n\n"
        "sbatch: error: slurm_send_node_msg: auth_g_create: REQUEST_SUBMIT_BATCH_JOB has authentication error\n\n"
        "sbatch: error: Batch job submission failed: Protocol authentication error\n"
    )
    assert c.category == "environment" and not c.refused, c


def test_controller_timeout_is_the_scheduler_and_worth_a_retry():
    # https://github.com/AMDResearch/hpcfund/issues/77 (round 8: salloc's prefix, a refusal no retry helps)
    c = judge_log("salloc: error: Job submit/allocate failed: Socket timed out on send/recv operation\n")
    assert c.category == "scheduler" and not c.weak and not c.refused, c


def test_a_node_slurmd_that_does_not_answer_names_the_node_and_stays_a_candidate():
    # https://github.com/mlr-org/batchtools/issues/201: the munge keys differed (the thread); the log cannot tell
    c = judge_log(
        "fpga@ubuntu2:~$ srun hostname\n"
        "srun: error: slurm_receive_msgs: [[ubuntu4]:6818] failed: Socket timed out on send/recv operation\n"
        "srun: error: Task launch for StepId=34.0 failed on node ubuntu4: Socket timed out on send/recv operation\n"
        "srun: error: Application launch failed: Socket timed out on send/recv operation\n"
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
        "srun: error: Timed out waiting for job step to complete\n"
    )
    assert c.category == "unknown" and c.nodes == ["ubuntu4"] and len(c.candidates) >= 2, c
    assert any(k.startswith("environment") for k in c.candidates) and any(k.startswith("node") for k in c.candidates)


def test_invalid_job_credential_names_the_node_and_stays_a_candidate():
    # https://github.com/omnivector-solutions/snap-slurm/issues/78 (unsettled: the node's munge key or its clock)
    c = judge_log(
        "srun: error: Task launch for 47.0 failed on node n-c122: Invalid job credential\n"
        "srun: error: Application launch failed: Invalid job credential\n"
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
    )
    assert c.category == "unknown" and c.nodes == ["n-c122"] and len(c.candidates) >= 2, c


def test_a_request_no_node_can_satisfy_is_refused_but_a_step_form_is_a_candidate():
    # https://github.com/DragonHPC/dragon/issues/61 (the site refused --nodelist) and verl-project/verl#548 (the job
    # script built the node list wrong): the same line, two causes
    step = judge_log(
        "srun: error: Unable to create step for job 17627941: Requested node configuration is not available\n"
    )
    assert step.category == "unknown" and len(step.candidates) >= 2, step
    assert any(k.startswith("code") for k in step.candidates) and any(
        k.startswith("scheduler") for k in step.candidates
    )
    # https://github.com/ArjunaCluster/ArjunaUsers/issues/112 (2 cores of a node reserved): sbatch's form is refused
    c = judge_log("sbatch: error: Batch job submission failed: Requested node configuration is not available\n")
    assert c.category == "scheduler" and c.refused and "no node" in c.headline, c


# --- the other batch systems: PBS/Torque's server, LSF's bsub and its job report ---


def test_pbs_job_deleted_by_root_is_a_candidate_and_a_node_failure_after_it_decides():
    # https://github.com/cBio/cbio-cluster/issues/403: the server's log line; why root deleted it is elsewhere
    c = judge_log(
        "getting output of UniformTimeClustering:  20% (117/558) [#      ] eta 28:34:54 \\Terminated\n"
        "04/18/2016 22:55:25;0008;PBS_Server.12149;Job;7082041.hal-sched1.local;Job deleted at request of "
        "root@hal-sched1\n"
    )
    assert c.category == "unknown" and c.rule == "signature" and "root" in c.headline, c
    assert any(k.startswith("scheduler") for k in c.candidates) and any(k.startswith("node") for k in c.candidates)
    # https://github.com/cBio/cbio-cluster/issues/188: the same deletion, then the reason: the node
    c = judge_log("job deleted\nJob deleted at request of root@mskcc-fe1.local\njob preempted (node failure)\n")
    assert c.category == "node", c


def test_lsf_refusal_of_a_resource_request_is_refused():
    # https://github.com/bcbio/bcbio-nextgen/issues/2803: bsub's "Job not submitted." wrapped onto its own line
    c = judge_log(
        "[sd587@eris1n2 work]$ bsub < lsf_engined9a328c4-8eaa-4970-a7bc-45bc12e1bfc2\n\n"
        "Error in rusage section: The merged job-level and application-level rusage\n"
        "value is outside the range set by RESRSV_LIMIT defined in lsb.queues. Job\n"
        "not submitted.\n"
    )
    assert c.category == "scheduler" and c.refused, c


def test_lsf_thread_limit_is_the_scheduler():
    # https://github.com/cdanielmachado/carveme/issues/34
    c = judge_log(
        "TERM_THREADLIMIT: job killed after reaching LSF thread limit.\nExited with exit code 143.\n\n"
        "Resource usage summary:\n\n    CPU time   :      8.07 sec.\n    Max Memory :      5719 MB\n"
    )
    assert c.category == "scheduler" and not c.weak, c


# --- orchestrators: Ray's memory monitor, Kubernetes' container runtime ---


def test_ray_memory_pressure_is_oom_with_the_node():
    # https://github.com/flwrlabs/flower/issues/2157: the node's address is the summary's IP field
    c = judge_log(
        "(raylet) [2023-07-23 15:21:29,851 E 9751 9751] (raylet) node_manager.cc:3084: 4 Workers (tasks / actors) "
        "killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: "
        "b287aac2de42bef55d13e884c4bdb6cffb2d81d1dc96aa08c4633a43, IP: 172.28.0.12) over the last time period.\n"
    )
    assert c.category == "oom" and c.nodes == ["172.28.0.12"], c
    # https://github.com/WM-PO/WMPO/issues/3: a terminal wrap cut the IP and the docs' link away
    c = judge_log(
        "(raylet) [2025-12-07 09:57:19,206 E 393463 393463] (raylet) node_manager.cc:3277: 2 Workers (tasks / "
        "actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at \n"
        "node (ID: 8289f87b78d161ae21bf723c7c57838345a56248dd48a2c3f0d5ac73, IP: 172.24.0.226) over the last time\n"
    )
    assert c.category == "oom", c


def test_runc_container_init_oom_killed_is_oom():
    # https://github.com/kubeflow/trainer/issues/1661
    c = judge_log(
        'Warning  Failed  113s   kubelet  Error: container create failed: time="2022-09-14T11:35:13Z" '
        'level=error msg="runc create failed: unable to start container process: container init was OOM-killed '
        '(memory limit too low?)"\n'
    )
    assert c.category == "oom", c


def test_kubernetes_exit_137_without_oomkilled_is_a_sigkill_candidate():
    # https://github.com/kubernetes/kubernetes/issues/122256 (unsettled: a probe, the node's OOM killer, a kill)
    c = judge_log(
        "    Last State: Terminated\n      Reason: Error\n      Exit Code: 137\n"
        "      Started: Mon, 13 Nov 2023 03:48:52 +0100\n    Restart Count: 1\n"
    )
    assert c.category == "unknown" and c.rule == "signature" and "137" in c.headline, c
    assert c.candidates[0].startswith("oom") and any(k.startswith("scheduler") for k in c.candidates), c.candidates
    assert judge_log("    Last State: Terminated\n      Reason: Completed\n      Exit Code: 0\n").category == "unknown"


def test_jax_coordination_timeouts_are_candidates_with_jax_own_causes():
    # https://github.com/ayaka14732/llama-2-jax/issues/20 (round 8 read it as a torch.distributed call)
    c = judge_log(
        "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: PjRT_Client_Connect."
        " Timed out task names:\n/job:jax_worker/replica:0/task:1\n/job:jax_worker/replica:0/task:6\n"
    )
    assert c.category == "unknown" and "JAX" in c.headline, c
    assert any(k.startswith("network") for k in c.candidates) and any("never started" in k for k in c.candidates)
    # https://github.com/google/paxml/issues/77: the registration call's own deadline
    c = judge_log(
        "> 2024-04-12 23:39:41.656900: E external/xla/xla/pjrt/distributed/client.cc:96] Coordination service agent "
        "in error status: DEADLINE_EXCEEDED: Deadline Exceeded\nwhile calling /tensorflow.CoordinationService/"
        "RegisterTask:\n"
    )
    assert c.category == "unknown" and "register" in c.headline, c


def test_flux_start_failed_is_the_environment_before_its_timeout_and_a_lost_node_is_named():
    # https://github.com/flux-framework/flux-core/issues/4195: round 8 named the allocation's timeout after it
    c = judge_log(
        "0.778s: flux-shell[1]: FATAL: task 0: start failed: stress: No such file or directory\n"
        "0.784s: job.exception type=exec severity=0 task 0: start failed: stress: No such file or directory\n"
        "5.488s: job.exception type=timeout severity=0 resource allocation expired\n"
    )
    assert c.category == "environment", c
    # https://github.com/flux-framework/flux-core/issues/6653
    c = judge_log("fdFmCpYwQZ5  node-failure              node failure on elcap8767 (shell rank 1127)\n")
    assert c.category == "node" and c.nodes == ["elcap8767"], c


def test_a_pbs_mail_names_the_one_host_the_job_ran_on():
    # https://github.com/cBio/cbio-cluster/issues/188: the node the server lost is the mail's exec host
    mail = "PBS Job Id: 2598356.mskcc-fe1.local\nJob Name:   QLOGIN\nExec host:  {}\njob deleted\n"
    c = judge_log(
        mail.format("gpu-2-17/11") + "Job deleted at request of root@mskcc-fe1.local\njob preempted (node failure)\n"
    )
    assert c.category == "node" and c.nodes == ["gpu-2-17"], c
    # https://github.com/nf-core/sarek/issues/541: Torque's memory kill, on its exec host
    c = judge_log(
        "PBS Job Id: 75736704\nJob Name:   sarekRecal\nExec host:  node450/0-19\nAborted by PBS Server\n"
        "Job exceeded a memory resource limit (vmem, pvmem, etc.). Job was aborted\n"
    )
    assert c.category == "oom" and c.nodes == ["node450"], c
    # several hosts: none of them is the culprit
    c = judge_log(mail.format("gpu-1-1/0+gpu-1-2/0") + "job preempted (node failure)\n")
    assert c.category == "node" and c.nodes == [], c


def test_ray_owner_node_crashed_is_a_candidate_with_the_owner_address():
    # https://github.com/verl-project/verl/issues/4242 (settled: Ray's dashboard agent, not the hardware) and
    # hiyouga/EasyR1#324 (unsettled): the same line, candidates, the owner's address named
    c = judge_log(
        "The actor is dead because its owner has died. Owner Id: 01000000ffffffffffffffffffffffffffffffffffffffffffffffff"
        " Owner Ip address: 10.254.32.19 Owner worker exit type: SYSTEM_ERROR Worker exit detail: Owner's node has "
        "crashed.\n"
    )
    assert c.category == "unknown" and c.nodes == ["10.254.32.19"], c
    assert any(k.startswith("environment") for k in c.candidates) and any(k.startswith("oom") for k in c.candidates)
