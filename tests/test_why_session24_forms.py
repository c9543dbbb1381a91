"""`clusterdoc why --log`, session 24 (issue 41): forms that heldout-fresh17 (threads and committed logs no earlier
set cites) showed after it was scored and opened: NCCL's NVLS setup failing in a CUDA call (the node's Fabric
Manager), PSM's adapter driver failing on a node, Ray's older memory monitor, TensorFlow's job missing from its
cluster spec, MVAPICH's mpispawn naming the rank that died, and mpiexec -l's "[N] " rank tag; then what
heldout-fresh18 showed: Dask's nanny past a worker's memory budget, PBS preempting the job, the batch script's own
command not found, an image pull that could not connect, and Snakemake's own form of an exception; then what
heldout-fresh19 showed: Open MPI's recursive mpiexec, srun with no command, FDS's own errors, HTCondor's memory hold,
a Dask worker killed by a signal, a model directory without its config, Nextflow's exit 140 and an unresolved ssh
host (candidates); then heldout-fresh20's: Horovod's ranks lacking different tensors (a desync), an exception before
torchrun's epilogue where the ranks' tracebacks interleave, sbatch refusing its options, Singularity 2 stopping, and
canu's crash handler; then heldout-fresh21's: file locking a file system does not give, HTCondor's and YARN's memory
kills, a script's bare Exception continued on its next line, TensorFlow's collective group mismatch, a command
missing where it runs, Go's ENOSPC. Each test failed on the rules before it (389d8d1 for the first five, 8aae7bb for
heldout-fresh18's, 111c01b for heldout-fresh19's, 4df1827 for heldout-fresh20's, 974891d for heldout-fresh21's); each
also checks what must stay (a candidate stays a candidate, a neighbouring form keeps its verdict)."""

from __future__ import annotations

from tests.why_helpers import fixture_log as _log
from tests.why_helpers import judge_log


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


# --- heldout-fresh18, after it was scored and opened (each failed on the rules of 8aae7bb) ---


def test_dasks_nanny_restarting_a_worker_past_its_memory_budget_is_host_memory():
    c = judge_log(_log("heldout-fresh18b/db-benchmark-144-dask-worker-memory.log"))
    assert c.category == "oom" and "Dask" in c.headline, (c.category, c.headline)


def test_pbs_preempting_the_job_is_the_scheduler_and_pbs_node_failure_stays_the_node():
    c = judge_log(_log("heldout-fresh18b/nextflow-1367-pbspro-preemption.log"))
    assert c.category == "scheduler" and "preempted" in c.headline, (c.category, c.headline)
    # PBS's own words for a node that failed under the job (cbio-cluster-188's form) are not a preemption
    assert judge_log("=>> PBS: job killed: job preempted (node failure)\n").category == "node"


def test_the_batch_scripts_own_command_not_found_is_the_environment_a_profiles_stays_a_candidate():
    c = judge_log(_log("heldout-fresh18c/cactus-894-toil-worker-command-not-found.log"))
    assert c.category == "environment" and "batch script" in c.headline, (c.category, c.headline)
    profile = "/etc/profile.d/z00_lmod.sh: line 7: module: command not found\n"
    assert judge_log(profile).category == "unknown"


def test_an_image_pull_that_could_not_connect_is_the_network_not_the_container_runtime():
    c = judge_log(_log("heldout-fresh18c/scnanoseq-33-singularity-pull-connection-refused.log"))
    # the network first (thin since session 28: a server not up yet in a pod refuses the same, mpi-operator-407)
    assert c.category == "unknown" and c.candidates[0].startswith("network"), (c.category, c.candidates)
    # Apptainer's FATAL line about anything else stays the environment
    assert judge_log("FATAL:   could not open image /scratch/img.sif: failed to retrieve path\n").category == (
        "environment"
    )


def test_snakemakes_own_exception_form_is_read_as_the_exception_it_names():
    c = judge_log(_log("heldout-fresh18c/snparcher-196-keyerror-sort-reads.log"))
    assert (c.category, c.headline.startswith("raised KeyError")) == ("code", True), (c.category, c.headline)
    c = judge_log("ModuleNotFoundError in file /w/rules/qc.smk, line 3:\nNo module named 'pandas'\n")
    assert c.category == "environment", (c.category, c.headline)


# --- heldout-fresh19, after it was scored and opened (each failed on the rules of 111c01b) ---


def test_open_mpis_recursive_mpiexec_is_the_environment_before_the_walltime_it_ran_into():
    c = judge_log(_log("heldout-fresh19a/fds-7364-openmpi-mpiexec-intel-build.log"))
    assert c.category == "environment" and "another MPI" in c.headline, (c.category, c.headline)
    assert judge_log("=>> PBS: job killed: walltime 602 exceeded limit 600\n").category == "scheduler"


def test_srun_without_a_command_and_fds_own_errors_are_the_job_scripts_and_inputs():
    assert judge_log(_log("heldout-fresh19a/fds-10192-srun-no-command.log")).category == "code"
    c = judge_log(_log("heldout-fresh19a/fds-10990-mpi-processes-exceed-meshes.log"))
    assert c.category == "code" and "FDS" in c.headline, (c.category, c.headline)


def test_htcondors_memory_hold_and_a_dask_worker_killed_by_a_signal_are_memory():
    assert judge_log(_log("heldout-fresh19b/1-ogc-2-condor-held-memory.log")).category == "oom"
    assert judge_log(_log("heldout-fresh19b/rapids-notebooks-89-dask-worker-killed.log")).category == "oom"


def test_a_model_directory_without_its_config_is_the_jobs_input_not_an_unsure_oserror():
    c = judge_log(_log("heldout-fresh19c/openvla-oft-missing-config-json.log"))
    assert c.category == "code" and "lacks a file" in c.headline, (c.category, c.headline)


def test_nextflows_exit_140_and_an_unresolved_ssh_host_stay_candidates_with_what_decides():
    c = judge_log(_log("heldout-fresh19b/bactopia-537-gubbins-time-limit.log"))
    assert c.category == "unknown" and c.candidates[0].startswith("scheduler"), (c.category, c.candidates)
    assert len(c.candidates) >= 2
    c = judge_log(_log("heldout-fresh19b/kubeflow-887-openmpi-worker-unresolved.log"))
    assert c.category == "unknown" and c.candidates[0].startswith("environment"), (c.category, c.candidates)


# --- heldout-fresh20, after it was scored and opened (each failed on the rules of 4df1827) ---


def test_horovod_ranks_lacking_different_tensors_submitted_different_collectives_the_odd_rank_named():
    c = judge_log(_log("heldout-fresh20b/horovod-1652-different-graph-per-rank.log"))
    assert c.category == "desync" and c.ranks == [0, 1], (c.category, c.ranks, c.headline)
    # horovodrun's --timestamp-output glues the date to its rank tag; rank 0 lacks another tensor than ranks 1-7
    c = judge_log(_log("real/insightface-1287-horovod-stalled-tensor-mismatch.log"))
    assert (c.category, c.ranks) == ("desync", [0]), (c.category, c.ranks, c.headline)
    # every listed rank lacking the same tensor stays what it was (those ranks are behind: a candidate)
    same = "Stalled ranks:\n4: [HorovodAllreduce_grads_0]\n"
    assert judge_log(same).category == "unknown"


def test_an_exception_before_torchruns_epilogue_is_the_cause_when_the_ranks_tracebacks_interleave():
    c = judge_log(_log("heldout-fresh20c/soyexpr-torchrun-peft-target-modules.log"))
    assert c.category == "code" and "Target modules" in c.headline, (c.category, c.headline)


def test_sbatch_refusing_its_options_singularity_2_stopping_and_canus_crash_handler():
    assert judge_log(_log("heldout-fresh20d/snakemake-1829-sbatch-mem-mutually-exclusive.log")).category == "scheduler"
    assert judge_log(_log("heldout-fresh20b/nextflow-1407-singularity-image-tmp-path.log")).category == "environment"
    assert judge_log(_log("heldout-fresh20d/canu-1505-bogart-segfault.log")).category == "code"
    # Ray's GCS reconnect failure alone: a candidate (the link, or the head's GCS died)
    c = judge_log(_log("heldout-fresh20b/ray-15389-remote-worker-gcs-reconnect.log"))
    assert c.category == "unknown" and c.candidates[0].startswith("network"), (c.category, c.candidates)


# --- heldout-fresh21, after it was scored and opened (each failed on the rules of 974891d) ---


def test_file_locking_a_file_system_does_not_give_hdf5_or_mpi_io_is_the_environment():
    assert judge_log(_log("heldout-fresh21a/alpscore-348-hdf5-flock-cori.log")).category == "environment"
    assert judge_log(_log("heldout-fresh21a/smilei-342-lustre-no-flock.log")).category == "environment"


def test_htcondors_and_yarns_memory_kills_are_memory():
    assert judge_log(_log("heldout-fresh21b/crabserver-9367-condor-excessive-memory.log")).category == "oom"
    assert judge_log(_log("heldout-fresh21b/tensorflowonspark-282-yarn-container-memory.log")).category == "oom"


def test_a_scripts_bare_exception_defers_to_what_its_next_line_says_failed():
    c = judge_log(_log("heldout-fresh21b/atlas-333-sbatch-time-limit-invalid.log"))
    assert c.category == "scheduler", (c.category, c.headline)
    # a bare Exception whose next line says nothing more stays the code's
    plain = ('Traceback (most recent call last):\n  File "/w/run.py", line 3, in <module>\n'
             '    raise Exception("bad config")\nException: bad config\nDone.\n')
    assert judge_log(plain).category == "code"


def test_tensorflow_workers_disagreeing_on_the_collective_group_are_a_desync():
    assert judge_log(_log("heldout-fresh21b/tensorflow-47203-collective-group-size.log")).category == "desync"


def test_a_command_missing_where_it_runs_and_a_full_image_store_are_the_environment():
    for name in ("influenza-di-identification-pipeline-2-sbatch-missing.log",
                 "easybuild-life-sciences-543-nextflow-module-java.log", "rnaseq-887-singularity-not-found.log",
                 "nextflow-5099-awsbatch-pull-no-space.log"):  # fmt: skip
        c = judge_log(_log("heldout-fresh21d/" + name))
        assert c.category == "environment", (name, c.category, c.headline)
