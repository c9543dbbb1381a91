"""The `scheduler` failure signatures: the scheduler or the site ended or refused the job: time limits, preemption,
accounts, cancellations, refusals.

One entry each (why/signature.py says what an entry holds). Within this table the first entry that matches a line
wins; why/signatures.py says the order of the tables.
"""

from __future__ import annotations

import re

from clusterdoc.why.signature import NODE, S, Signature

SIGNATURES: list[Signature] = [
    # --- scheduler (Slurm's own lines) ---
    S("slurm-time-limit", "scheduler", ("CANCELLED AT", "DUE TO TIME LIMIT"),
      "Slurm ended the job at its time limit",
      "slurmstepd: error: *** STEP 55595933.0 ON maestro-3017 CANCELLED AT 2025-01-10T15:27:25 DUE TO TIME LIMIT ***",
      "https://github.com/Lightning-AI/pytorch-lightning/issues/20542",
      "checkpoint on SIGUSR1 (sbatch --signal=B:USR1@90) and resubmit; or ask for more --time",
      node=re.compile(r"\*\*\* (?:JOB|STEP) [\w.+]{1,40} ON " + NODE + r" CANCELLED AT")),  # the node slurmstepd ran on
    S("slurm-requeue", "scheduler", ("CANCELLED AT", "DUE TO JOB REQUEUE"),
      "Slurm requeued the job (preemption or a requeue by the admin): not a failure of the job",
      "slurmstepd: error: *** JOB 608 ON SERVER_NAME CANCELLED AT 2022-08-12T02:06:12 DUE TO JOB REQUEUE ***",
      "https://github.com/facebookincubator/submitit/issues/1708",
      "nothing to fix: the job runs again; resume from a checkpoint (handle SIGUSR1/SIGTERM)"),
    S("submitit-preempted", "scheduler", ("this job is preempted",),
      "submitit caught Slurm's preemption signal",
      "submitit WARNING (2022-08-12 02:06:11,453) - Caught signal SIGUSR2 on SERVER_NAME: this job is preempted.",
      "https://github.com/facebookincubator/submitit/issues/1708",
      "nothing to fix: the job is requeued; resume from a checkpoint"),
    S("ray-node-preempted", "scheduler", ("the actor's node was preempted",),
      "the cluster took the node back (preemption or a drain): not a failure of the job",
      "\tthe actor's node was preempted: preemption_integration_demo: simulating node drain",
      "https://github.com/ray-project/ray/pull/63807",
      "nothing to fix: resume from a checkpoint on the remaining or new nodes"),
    # --- round 9 (sites): how sites and platforms end or refuse a job, from real pastes (real/SOURCES.md) ---
    # Slurm's start-up failures: before sbatch-failed and salloc-refused, whose prefixes they share. The
    # controller down or unreachable (a crash, a power event, a daemon not started: arjuna-100, pulsar-254,
    # trixie-93): no refusal of the request, the same job runs once it is back
    S("slurm-controller-down", "scheduler", ("Unable to contact slurm controller",),
      "the Slurm controller (slurmctld) did not answer: it is down, restarting or cut off from this host",
      "srun: error: Unable to confirm allocation for job 60564: Unable to contact slurm controller (connect failure)",
      "https://github.com/ArjunaCluster/ArjunaUsers/issues/100 (and galaxyproject/pulsar#254, ai4d-iasc/trixie#93)",
      "the site's status page or admins (scontrol ping); submit again once it answers",
      unless=("slurm_load_", "slurm_reconfigure", "squeue", "sacct", "scontrol")),
    # the same words from a query (squeue, sinfo, sacct: slurm_load_jobs, slurm_load_partitions), as a workflow
    # manager's polling prints them: a controller that came back may have run the job on; a candidate
    S("slurm-controller-query", "scheduler", ("Unable to contact slurm controller",),
      "a Slurm query (squeue, sinfo, sacct) could not reach the controller: down, restarting or overloaded",
      "slurm_load_partitions: Unable to contact slurm controller (connect failure)",
      "https://github.com/ai4d-iasc/trixie/issues/93 (and ArjunaCluster/ArjunaUsers#92)",
      "scontrol ping; the job's own end (sacct -j JOB -o State,Reason once the controller answers)", weak=True),
    # a request no node of the partition can ever satisfy (more cores or memory per node than a node has, a node
    # list outside the partition): sbatch's, salloc's and srun's step form (arjuna-112, arjuna-75, aws-pc-282,
    # dragon-61)
    S("slurm-node-config-unavailable", "scheduler", ("Requested node configuration is not available",),
      "Slurm refused the request: no node of the partition has what it asks for (cores, memory or GPUs per node, "
      "or the nodes it names)",
      "sbatch: error: Batch job submission failed: Requested node configuration is not available",
      "https://github.com/ArjunaCluster/ArjunaUsers/issues/112 (and ArjunaUsers#75, aws/aws-parallelcluster#282)",
      "ask for what one node has (sinfo -N -o '%N %c %m %G', scontrol show node; cores reserved for the system "
      "count against it)", unless=("Unable to create step",)),
    # srun's step form inside an allocation: a --nodelist the site refuses (dragon-61) or one the job script built
    # wrong (verl-548: two node names in one -w): a candidate
    S("slurm-step-node-config", "scheduler", ("Unable to create step", "Requested node configuration is not available"),
      "Slurm refused a job step: its node request (--nodelist/-w, --nodes, cores per node) does not fit the job's "
      "allocation",
      "srun: error: Unable to create step for job 17627941: Requested node configuration is not available",
      "https://github.com/DragonHPC/dragon/issues/61 (and verl-project/verl#548)",
      "echo the srun line the script runs: the node names it passes (scontrol show hostnames), against the "
      "allocation's (echo $SLURM_JOB_NODELIST)", weak=True),
    # a socket timeout: to slurmctld (sbatch, salloc: a controller too busy to answer, chip-seq-pipeline2-150,
    # hpcfund-77) or to a node's slurmd when srun launches its tasks (batchtools-201: munge keys that differed;
    # a node's slurmd hung, a firewall on port 6818): the controller's form is the scheduler's, a node's a
    # candidate
    S("slurm-node-socket-timeout", "scheduler", ("failed on node ", "Socket timed out on send/recv operation"),
      "srun could not launch its tasks on a node: that node's slurmd did not answer in time",
      "srun: error: Task launch for StepId=34.0 failed on node ubuntu4: Socket timed out on send/recv operation",
      "https://github.com/mlr-org/batchtools/issues/201",
      "scontrol show node NODE; on it: slurmd running, munge -n | ssh NODE unmunge (the same key), port 6818 open",
      node=re.compile(r"failed on node " + NODE + r":"), weak=True),
    S("slurm-slurmd-socket-timeout", "scheduler", ("]:6818] failed: Socket timed out",),
      "srun could not reach a node's slurmd (port 6818) in time",
      "srun: error: slurm_receive_msgs: [[ubuntu4]:6818] failed: Socket timed out on send/recv operation",
      "https://github.com/mlr-org/batchtools/issues/201",
      "scontrol show node NODE; on it: slurmd running, munge -n | ssh NODE unmunge (the same key), port 6818 open",
      node=re.compile(r"\[\[" + NODE + r"\]:6818\]"), weak=True),
    S("slurm-controller-timeout", "scheduler", ("failed: Socket timed out on send/recv operation",),
      "the Slurm controller did not answer in time (too busy: many submissions or queries at once, or a "
      "controller in trouble)",
      "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation",
      "https://github.com/ENCODE-DCC/chip-seq-pipeline2/issues/150 (and AMDResearch/hpcfund#77)",
      "submit again after a pause (fewer submissions at once: a workflow's submission rate); the admins if it "
      "lasts", unless=("launch failed", "6818]", "failed on node")),
    # a node's slurmd rejected the step's credential: its munge key or clock differs from the controller's
    # (snap-slurm-78); a candidate, with the node
    S("slurm-invalid-credential", "scheduler", ("Invalid job credential",),
      "a node's slurmd rejected the job's credential (its munge key or its clock differs from the controller's)",
      "srun: error: Task launch for 47.0 failed on node n-c122: Invalid job credential",
      "https://github.com/omnivector-solutions/snap-slurm/issues/78",
      "the admins: that node's munge key and clock (munge -n | ssh NODE unmunge; NTP); resubmit without the node",
      node=re.compile(r"failed on node " + NODE + r":"), weak=True),
    # PBS/Torque's server: a job deleted by root (an admin, or the scheduler enforcing a limit);
    # by its owner or another user it is a kill after something else, a candidate (cbio-403; pbs_server's
    # "Job deleted at request of %s@%s")
    S("pbs-deleted-by-root", "scheduler", ("Job deleted at request of root@",),
      "PBS deleted the job at the request of root: the site (an admin, or the scheduler enforcing a limit or "
      "clearing a failed node's jobs)",
      "04/18/2016 22:55:25;0008;PBS_Server.12149;Job;7082041.hal-sched1.local;Job deleted at request of "
      "root@hal-sched1", "https://github.com/cBio/cbio-cluster/issues/403",
      "the lines after it (a node failure, a limit) or the admins (tracejob JOB on the server)", weak=True),
    S("pbs-deleted", "scheduler", ("Job deleted at request of ",),
      "the job was deleted (qdel) by its owner or another user: after another failure, or on purpose",
      "Job deleted at request of user@login1", "https://github.com/openpbs/openpbs (pbs_server: qdel)",
      "the job's output before it: a failure there is the cause", weak=True),
    # LSF's bsub: a resource request outside the queue's RESRSV_LIMIT (its "Job not submitted." may be wrapped
    # onto the next line: bcbio-2803)
    S("lsf-rusage-refused", "scheduler", ("Error in rusage section",),
      "LSF refused the job at submission: its resource request (rusage) is outside what the queue allows",
      "Error in rusage section: The merged job-level and application-level rusage value is outside the range set "
      "by RESRSV_LIMIT defined in lsb.queues. Job not submitted.", "https://github.com/bcbio/bcbio-nextgen/issues/2803",
      "a request within the queue's RESRSV_LIMIT (bqueues -l QUEUE), or another queue"),
    # LSF's job report: the limits round 8 lacked (carveme-34's TERM_THREADLIMIT, as LSF's report prints it), and
    # the forced kills (bkill -r: no time for cleanup), candidates as TERM_OWNER and TERM_ADMIN
    S("lsf-thread-limit", "scheduler", ("TERM_THREADLIMIT",),
      "LSF killed the job for running more threads than its limit allows",
      "TERM_THREADLIMIT: job killed after reaching LSF thread limit.",
      "https://github.com/cdanielmachado/carveme/issues/34",
      "limit the program's threads and processes (its own option, OMP_NUM_THREADS), or a queue that allows more "
      "(bqueues -l QUEUE: THREADLIMIT)"),
    S("lsf-process-limit", "scheduler", ("TERM_PROCESSLIMIT",),
      "LSF killed the job for running more processes than its limit allows",
      "TERM_PROCESSLIMIT: job killed after reaching LSF process limit.",
      "https://github.com/IBMSpectrumComputing/lsf-python-api (LSF's termination reasons)",
      "fewer processes at once (the program's workers), or a queue that allows more (bqueues -l: PROCLIMIT)"),
    S("lsf-force-kill", "scheduler", ("TERM_FORCE_",),
      "the job was killed without time for cleanup (bkill -r) by its owner or an administrator",
      "TERM_FORCE_OWNER: job killed by owner without time for cleanup.",
      "https://github.com/IBMSpectrumComputing/lsf-python-api (LSF's termination reasons)",
      "the job's output before it: a failure there is the cause", weak=True),
    S("sbatch-rejected", "scheduler", ("sbatch: error: ", "Job rejected"),
      "Slurm refused the job at submission (the site's submit filter)",
      "submitit.core.utils.FailedJobError: sbatch: error: Job rejected: Please do not specify cores/CPUs/tasks for GPU "
      "jobs.", "https://github.com/facebookincubator/submitit/issues/1649",
      "change the request as the message says (the site's rules: scontrol show config, its documentation)"),
    # any case: a workflow tool may print sbatch's words lowercased (Autosubmit: "sbatch: error: batch job ...")
    S("sbatch-failed", "scheduler", ("batch job submission failed",),
      "Slurm refused the job at submission (an option it does not accept, or over a limit)",
      "sbatch: error: Batch job submission failed: Invalid job array specification",
      "https://github.com/facebookresearch/cc_net/issues/32",
      "change the request as the message says (array size: MaxArraySize in scontrol show config; the partition's "
      "limits: sinfo, sacctmgr show qos)", lower=True),
    # salloc's and srun's refusal (sbatch's is "Batch job submission failed"): the reason follows the colon
    S("salloc-refused", "scheduler", ("job submit/allocate failed",),
      "Slurm refused the allocation (salloc or srun outside a job): a limit or policy of the account, QOS or "
      "partition",
      "salloc: error: Job submit/allocate failed: Job violates accounting/QOS policy (job submit limit, user's size "
      "and/or time limits)", "https://github.com/chpc-uofu/technotes/issues/7",
      "the reason after the colon (squeue -u $USER for the jobs counted against the limit; sacctmgr show assoc, "
      "show qos for the limits); wait for jobs to end, or ask within the limits", lower=True),
    # the site's accounting: the account's time allocation (core-, node- or GPU-hours) used up or unknown. Slurm's
    # own reason codes for it (AssocGrp...Minutes) and the sites' submit filters' words ("node hour balance")
    S("slurm-assoc-minutes", "scheduler", ("AssocGrp", "Minutes"),
      "Slurm will not run the job: the account's allocation of time (CPU, GPU or billing minutes) is used up",
      "sbatch: error: AssocGrpBillingMinutes",
      "https://github.com/SchedMD/slurm/blob/master/doc/html/job_reason_codes.shtml",
      "sshare -l / sacctmgr show assoc for the account's usage against its GrpTRESMins; another account "
      "(--account), or a renewed allocation"),
    S("site-hour-balance", "scheduler", ("error", "hour balance"),
      "the site refused the job: the account's allocation of node or core hours is used up or unknown to it",
      "error: No available node hour balance information for user xxx, account xxx. Cannot proceed.",
      "https://github.com/radiasoft/sirepo/issues/7442",
      "the account's balance (the site's iris/sbank/mybalance tool); submit with an account that has hours "
      "(--account / -A)", lower=True),
    S("slurm-invalid-gres", "scheduler", ("Invalid generic resource (gres) specification",),
      "Slurm refused the request: it asks for a generic resource (a GPU gres) the cluster, the partition or the "
      "allocation the step runs in does not have (the job or step never ran)",
      "srun: error: Unable to create step for job 16413634: Invalid generic resource (gres) specification",
      "https://github.com/mehta-lab/waveorder/issues/201",
      "ask for a gres the partition has (sinfo -o '%P %G'; --gres=gpu:N or --gpus=N); a step inside an allocation "
      "can use only the allocation's gres (submit from a login node, or srun --gres within it)"),
    S("pbs-walltime", "scheduler", ("PBS: job killed: walltime",),
      "PBS ended the job at its walltime limit",
      "=>> PBS: job killed: walltime 3650 exceeded limit 3600", "https://github.com/openpbs/openpbs (MOM's limit "
      "enforcement: 'job killed: walltime ... exceeded limit')",
      "checkpoint and resubmit, or ask for more time (#PBS -l walltime=)"),
    S("lsf-run-limit", "scheduler", ("TERM_RUNLIMIT",),
      "LSF ended the job at its run time limit",
      "TERM_RUNLIMIT: job killed after reaching LSF run time limit.",
      "https://github.com/FredslundMagnus/Myretuen (its LSF job reports)",
      "checkpoint and resubmit, or ask for more time (bsub -W)"),
    S("slurm-cancelled", "scheduler", ("CANCELLED AT",),
      "the job was cancelled (scancel, or Slurm for a reason it did not print)",
      "slurmstepd-gpu20-15: error: *** STEP 9411285.0 ON gpu20-15 CANCELLED AT 2022-05-17T17:58:10 ***",
      "https://github.com/ZwwWayne/K-Net/issues/30", "see why it was cancelled: sacct -j JOB -o State,Reason",
      weak=True),
    S("srun-credential-expired", "scheduler", ("Job credential expired",),
      "a node rejected Slurm's job credential (the nodes' clocks or munge keys disagree with the controller's)",
      "srun: error: Task launch for 1443722.0 failed on node compute-0-1: Job credential expired",
      "https://github.com/c3nl-neuraldynamics/c3nl_cluster/issues/61",
      "the cluster's admins: that node's clock (NTP) and munge key; resubmit without the node meanwhile",
      node=re.compile(r"failed on node " + NODE + r":")),
    S("srun-step-memory", "scheduler", ("Unable to create step", "Memory required by task is not available"),
      "Slurm could not start the job step: the memory it asks for is held by the job's other steps",
      "srun: error: Unable to create step for job 29986033: Memory required by task is not available",
      "https://github.com/eth-cscs/DLA-Future/issues/337",
      "give each step its share (srun --mem=... or --exact / --overlap), or run the steps one after another"),
    # --- round 8: scheduler, as the other batch systems print it ---
    # Slurm's srun refused the allocation it asked for (salloc's own form is "Job submit/allocate failed")
    S("srun-allocate-refused", "scheduler", ("Unable to allocate resources",),
      "Slurm refused the allocation srun asked for (an account, partition, QOS or limit the request breaks)",
      "srun: error: Unable to allocate resources: Invalid account or account/partition combination specified",
      "https://github.com/SchedMD/slurm (src/srun: allocate.c)",
      "the request against the limits (sacctmgr show assoc user=$USER; scontrol show partition); fix it and "
      "submit again"),
    # PBS Pro / Torque MOM: a job killed for a limit other than memory (cput, ncpus, walltime: pbs-mem-limit and
    # pbs-walltime above take theirs first)
    S("pbs-limit", "scheduler", ("PBS: job killed: ", "exceeded limit"),
      "PBS killed the job for exceeding a resource limit it asked for (CPU time, cores)",
      "=>> PBS: job killed: ncpus 5.12 exceeded limit 4", "https://github.com/openpbs/openpbs (src/resmom: mom_mach.c)",
      "ask for what it uses (qsub -l ncpus=/cput=), or use fewer threads (OMP_NUM_THREADS, torch.set_num_threads)"),
    # qsub's refusals (PBS Pro's and Torque's pbs_errno texts): the request, not the job
    S("qsub-exceeds-queue", "scheduler", ("qsub: ", "exceeds queue"),
      "PBS refused the job: it asks for more than the queue allows",
      "qsub: Job exceeds queue resource limits", "https://github.com/openpbs/openpbs (PBSE_EXCQRESC)",
      "a request within the queue's limits (qstat -Qf QUEUE), or another queue"),
    S("qsub-violates", "scheduler", ("qsub: ", "violates queue"),
      "PBS refused the job: it breaks the queue's or the server's resource limits",
      "qsub: Job violates queue and/or server resource limits", "https://github.com/openpbs/openpbs (pbs_messages)",
      "a request within the limits (qstat -Qf QUEUE; qmgr -c 'list server')"),
    S("qsub-would-exceed", "scheduler", ("qsub: would exceed",),
      "PBS refused the job: it would exceed a per-user or per-queue limit of jobs or resources",
      "qsub: would exceed queue workq's per-user limit of jobs in 'Q' state",
      "https://github.com/openpbs/openpbs (the limits' messages)", "wait for your queued jobs, or another queue"),
    S("qsub-unknown-queue", "scheduler", ("qsub: Unknown queue",),
      "PBS refused the job: its queue does not exist", "qsub: Unknown queue",
      "https://github.com/openpbs/openpbs (PBSE_UNKQUE)", "qstat -Q for the queues; -q NAME"),
    # Torque's qsub wraps the server's refusal ("qsub: submit error (REASON MSG=...)")
    S("torque-submit-error", "scheduler", ("qsub: submit error",),
      "Torque refused the job at submission (the reason in parentheses: a queue limit, the account, the request)",
      "qsub: submit error (Unauthorized Request  MSG=group ACL is not satisfied: user jdoe, queue gpu)",
      "https://github.com/adaptivecomputing/torque (qsub's submit error)",
      "the request against the queue (qstat -Qf QUEUE); fix it and submit again"),
    # LSF's job report: the termination reason (bhist/bacct TERM_*; TERM_RUNLIMIT and TERM_MEMLIMIT above). A
    # kill by the owner or an admin often follows another failure (as Slurm's bare CANCELLED): a candidate
    S("lsf-preempt", "scheduler", ("TERM_PREEMPT",),
      "LSF killed the job to preempt it for a higher-priority job", "TERM_PREEMPT: job killed after preemption.",
      "https://github.com/IBMSpectrumComputing/lsf-python-api (LSF's termination reasons)",
      "resubmit (a requeue-able queue: bsub -r), resume from a checkpoint"),
    S("lsf-cpu-limit", "scheduler", ("TERM_CPULIMIT",),
      "LSF killed the job at its CPU time limit", "TERM_CPULIMIT: job killed after reaching LSF CPU usage limit.",
      "https://github.com/IBMSpectrumComputing/lsf-python-api (LSF's termination reasons)",
      "ask for more CPU time (bsub -c)"),
    S("lsf-deadline", "scheduler", ("TERM_DEADLINE",),
      "LSF killed the job at its deadline (a termination time, -t)",
      "TERM_DEADLINE: job killed after deadline expires.",
      "https://github.com/IBMSpectrumComputing/lsf-python-api (LSF's termination reasons)",
      "a later termination time (bsub -t)"),
    S("lsf-window", "scheduler", ("TERM_WINDOW",),
      "LSF killed the job when its queue's run window closed", "TERM_WINDOW: job killed after queue run window closed.",
      "https://github.com/IBMSpectrumComputing/lsf-python-api (LSF's termination reasons)",
      "a queue without a run window"),
    S("lsf-owner-kill", "scheduler", ("TERM_OWNER",),
      "the job was killed by its owner (bkill): after another failure, or on purpose",
      "TERM_OWNER: job killed by owner.",
      "https://github.com/IBMSpectrumComputing/lsf-python-api (LSF's termination reasons)",
      "the job's output before it: a failure there is the cause", weak=True),
    S("lsf-admin-kill", "scheduler", ("TERM_ADMIN",),
      "the job was killed by root or an LSF administrator", "TERM_ADMIN: job killed by root or LSF administrator.",
      "https://github.com/IBMSpectrumComputing/lsf-python-api (LSF's termination reasons)",
      "ask the admins why (bhist -l JOB); the job's output before it", weak=True),
    S("lsf-not-submitted", "scheduler", ("Job not submitted",),
      "LSF refused the job at submission (bsub: the request, the queue, the project)",
      "Too many processors requested. Job not submitted.",
      "https://github.com/IBMSpectrumComputing/lsf-python-api (bsub's refusal)",
      "the reason before it: the request against the queue (bqueues -l QUEUE)"),
    # Grid Engine (SGE, UGE, OGS): execd's own limit messages, qsub's refusal
    S("sge-wallclock", "scheduler", ("exceeded hard wallclock time",),
      "Grid Engine killed the job at its run-time limit (h_rt)",
      "job 48.1 exceeded hard wallclock time - initiate terminate method",
      "https://github.com/gridengine/gridengine (execd: MSG_EXECD_EXCEEDHWALLCLOCK_UU)",
      "ask for more time (qsub -l h_rt=), checkpoint and resubmit"),
    S("sge-hard-limit-rt", "scheduler", ("exceeds job hard limit", "h_rt"),
      "Grid Engine killed the job at its run-time limit (h_rt)",
      "job 12.1 exceeds job hard limit \"h_rt\" of queue \"all.q@node1\" (3601.00000 > limit:3600.00000) - sending "
      "SIGKILL", "https://github.com/gridengine/gridengine (execd's hard-limit message)",
      "ask for more time (qsub -l h_rt=)"),
    S("sge-unable-to-run", "scheduler", ("Unable to run job: ",),
      "Grid Engine refused the job at submission (no queue fits the request, a parallel environment or a "
      "project it does not have)",
      "Unable to run job: job rejected: the requested parallel environment \"mpi\" does not exist.",
      "https://github.com/gridengine/gridengine (qsub)", "qconf -spl / qconf -sql for what exists; qsub -w v to see "
      "why no queue fits"),
    # Flux: the job's exceptions as flux job attach / flux run print them (src/cmd/flux-job.c)
    S("flux-timeout", "scheduler", ("job.exception type=timeout",),
      "Flux ended the job at its time limit (resource allocation expired)",
      "0.512s: job.exception type=timeout severity=0 resource allocation expired",
      "https://github.com/flux-framework/flux-core (job-exec: the timeout exception)",
      "ask for more time (flux run -t), checkpoint and resubmit"),
    S("flux-alloc", "scheduler", ("job.exception type=alloc",),
      "Flux could not allocate the job's request (unsatisfiable, or no such queue)",
      "job.exception type=alloc severity=0 unsatisfiable request",
      "https://github.com/flux-framework/flux-core (the scheduler's alloc exception)",
      "a request the instance can satisfy (flux resource list), the queue's name"),
    S("flux-cancel", "scheduler", ("job.exception type=cancel",),
      "the Flux job was cancelled (flux cancel: a user, or a wrapper after another failure)",
      "job.exception type=cancel severity=0", "https://github.com/flux-framework/flux-core (flux cancel)",
      "the job's output before it: a failure there is the cause", weak=True),
    # Kubernetes: a pod preempted by the scheduler or by the kubelet for a critical pod; a node-pressure eviction
    S("k8s-preempted-by", "scheduler", ("Preempted by ", " on node "),
      "Kubernetes preempted the pod for a higher-priority pod", "Preempted by pod 6bd8a34b on node gpu-node-3",
      "https://github.com/kubernetes/kubernetes (pkg/scheduler: the preemption event)",
      "a PriorityClass for the job, or a queue (Kueue/Volcano); resume from a checkpoint"),
    S("k8s-preempted-critical", "scheduler", ("Preempted in order to admit critical pod",),
      "the kubelet preempted the pod to admit a critical pod on its node",
      "Preempted in order to admit critical pod", "https://github.com/kubernetes/kubernetes (pkg/kubelet/preemption)",
      "resubmit; a PriorityClass for the job"),
    # --- round 8: the scheduler's own refusals and ends, more forms ---
    S("srun-step-cpus", "scheduler", ("Unable to create step", "More processors requested than permitted"),
      "Slurm could not start the job step: it asks for more CPUs than the job's allocation has",
      "srun: error: Unable to create step for job 55: More processors requested than permitted",
      "https://github.com/SchedMD/slurm (ESLURM_TOO_MANY_REQUESTED_CPUS)",
      "the step within the allocation (srun -n/-c against sbatch's --ntasks/--cpus-per-task)"),
    S("salloc-revoked", "scheduler", ("has been revoked",),
      "Slurm ended the allocation salloc held (a time limit, scancel, a preemption; a node failure says so "
      "before it)", "salloc: Job allocation 1234 has been revoked.", "https://github.com/SchedMD/slurm (salloc.c)",
      "sacct -j JOB -o State,Reason,Timelimit,Elapsed", weak=True),
    S("k8s-deadline", "scheduler", ("Job was active longer than specified deadline",),
      "Kubernetes ended the job at its deadline (activeDeadlineSeconds)",
      "Job was active longer than specified deadline",
      "https://github.com/kubernetes/kubernetes (pkg/controller/job: DeadlineExceeded)",
      "a longer activeDeadlineSeconds, or checkpoint and resume"),
    # FailedScheduling is an event a pod that later ran also shows (kubectl describe): a candidate
    S("k8s-unschedulable", "scheduler", ("nodes are available:", "Insufficient "),
      "Kubernetes could not place the pod: no node has the resources it asks for (GPUs, memory, CPU)",
      "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",
      "https://github.com/kubernetes/kubernetes (pkg/scheduler: FailedScheduling)",
      "the pod's requests against the nodes' (kubectl describe nodes), or wait for the cluster to scale",
      weak=True),
    # --- round 8: a job's end state as the scheduler's own query prints it (pasted `scontrol show job`, SGE's
    # qacct), and a Ray task no node can take ---
    S("scontrol-timeout", "scheduler", ("JobState=TIMEOUT",),
      "Slurm ended the job at its time limit (scontrol show job: JobState=TIMEOUT)",
      "JobState=TIMEOUT Reason=TimeLimit Dependency=(null)", "https://github.com/SchedMD/slurm (scontrol's job state)",
      "checkpoint on SIGUSR1 (sbatch --signal=B:USR1@90) and resubmit; or ask for more --time"),
    S("scontrol-preempted", "scheduler", ("JobState=PREEMPTED",),
      "Slurm preempted the job (scontrol show job: JobState=PREEMPTED)",
      "JobState=PREEMPTED Reason=None Dependency=(null)", "https://github.com/SchedMD/slurm (scontrol's job state)",
      "resubmit (--requeue), resume from a checkpoint"),
    S("scontrol-deadline", "scheduler", ("JobState=DEADLINE",),
      "Slurm ended the job at its deadline (--deadline: JobState=DEADLINE)",
      "JobState=DEADLINE Reason=DeadLine Dependency=(null)", "https://github.com/SchedMD/slurm (scontrol's job state)",
      "a later --deadline, or a shorter --time that fits before it"),
    # SGE's qacct "failed 37": the master killed the job for a limit, run time (h_rt) or memory (h_vmem) alike
    S("sge-qmaster-limit", "scheduler", ("qmaster enforced h_rt",),
      "Grid Engine's master killed the job for a hard limit: its run time (h_rt, most often), its CPU time or its "
      "memory (h_vmem): qacct's ru_wallclock and maxvmem against the request decide",
      "failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit",
      "https://github.com/gridengine/gridengine (SSTATE_QMASTER_ENFORCED_LIMIT)",
      "qacct -j JOB: ru_wallclock against h_rt, maxvmem against h_vmem", weak=True),
    # Ray's own warning for a task or actor no node can take (its resources all claimed, or none has them)
    S("ray-unschedulable", "scheduler", ("cannot be scheduled right now",),
      "Ray could not place a task or actor: no node has the resources it asks for free (GPUs all claimed by other "
      "actors), or the autoscaler has not added them yet",
      "The actor or task with ID ffffffffffffffff9c08bcf94d34ab010a5c459102000000 cannot be scheduled right now.",
      "https://github.com/ray-project/ray/issues/21097",
      "the actors' resource requests against the cluster's (ray status); fewer actors, or more nodes", weak=True),
    # --- round 8: the scheduler's and the applications' own words for a task no node can take, an input error ---
    S("ray-unschedulable-error", "scheduler", (" is unschedulable: ",),
      "Ray gave up placing a task or actor: no node can take what it asks for (its resources, a node affinity to "
      "a node gone)", "ray.exceptions.ActorUnschedulableError: The actor 3c2a is unschedulable: The node specified "
      "via NodeAffinitySchedulingStrategy doesn't exist any more", "https://github.com/ray-project/ray (python/ray/"
      "exceptions.py: TaskUnschedulableError, ActorUnschedulableError)",
      "the resources it asks for against the cluster's (ray status)"),
    # round 10 (issue 41, platform ends): a scheduler's own end-of-job or refused-step words in forms the field prints,
    # each from real pastes (real/SOURCES.md) of two projects or the tool's own message shown verbatim
    # srun could not lay the step's tasks out on the CPUs it was given (Slurm's own "this should never happen": the
    # step's CPU binding against the allocation); the node the launch names is not at fault, so none is blamed
    S("srun-layout-tasks", "scheduler", ("Unable to layout tasks on given cpus",),
      "Slurm could not lay the job step's tasks out on the CPUs it was given (the step's CPU and binding request "
      "against the allocation): the step never started",
      "srun: error: Task launch for StepId=21249880.0 failed on node orion-24-42: Unable to layout tasks on given "
      "cpus", "https://github.com/snakemake/snakemake-executor-plugin-slurm/issues/225 (NOAA-EMC/global-workflow"
      "#4210 the same)",
      "resubmit (it is often transient); if it repeats, ask for whole cores per task (--cpus-per-task, "
      "--hint=nomultithread) or fewer tasks per node"),
    # Moab's own end line in a Torque/PBS job mail (MOAB_INFO): the job ran past its wallclock limit
    S("moab-wallclock", "scheduler", ("job exceeded wallclock limit",),
      "Moab ended the job at its wallclock limit",
      "MOAB_INFO:  job exceeded wallclock limit", "https://github.com/CoBrALab/MAGeTbrain/issues/20",
      "ask for more time (#PBS -l walltime=) or checkpoint and resubmit; a limit far shorter than asked for is the "
      "queue's (qstat -Qf)"),
    # session 18 (issue 41): from the sealed set heldout-fresh5's misses, read after its score was recorded (each
    # the tool's own message, its source beside it)
    # Nextflow's own end of a task at its time limit (the process's `time` directive, which it submits to the
    # executor): TaskProcessor's "Process exceeded running time limit (4h)" (nf-core/eager#872)
    S("nextflow-time-limit", "scheduler", ("Process exceeded running time limit",),
      "Nextflow ended a task at its time limit (the process's `time` directive)",
      "  Process exceeded running time limit (4h)",
      "https://github.com/nf-core/eager/issues/872 (nextflow-io/nextflow: TaskProcessor's ProcessException)",
      "more time for that process (its `time` directive; errorStrategy 'retry' with time { 4.h * task.attempt })"),
    # session 21 (issue 41): sbatch's own error line, whatever follows it: a site's submit filter (job_submit.lua's
    # slurm.log_user: "sbatch: error:  No number of nodes specified."), a QOS reason code ("sbatch: error:
    # QOSMaxWallDurationPerJobLimit"), in any case. Of the 32 logs of tests/fixtures/why that hold the line, 31
    # were the scheduler's refusal; the one that was not (munge) is environment.py's, whose table comes first.
    # Not a script sbatch could not read or an option it does not know: the user's command line
    S("sbatch-error", "scheduler", ("sbatch: error: ",),
      "Slurm refused the job at submission (sbatch's error: the site's submit filter, a limit of the account, QOS or "
      "partition, or a request no node can meet)",
      "sbatch: error: Please add  #SBATCH --nodes=NN  where NN is number of nodes for the job, in your submission "
      "script", "https://github.com/snakemake/snakemake-executor-plugin-slurm/issues/97 (and chpc-uofu, hpcfund#45)",
      "change the request as sbatch's lines say (the site's rules: its documentation, sacctmgr show qos, sinfo)",
      lower=True, unless=("unable to open file", "invalid option", "unrecognized option", "does not look like a batch",
                          "command not found", "no such file", "munge", "authentication", "fetch_config",
                          "config_source", "slurm.conf", "dns srv")),
    # PBS's qsub prints every refusal after its own name ("qsub: Job has no walltime requested", "qsub: Unauthorized
    # Request"): any other qsub line of its own is the server's refusal of the request
    S("qsub-refused", "scheduler", ("qsub: ",),
      "PBS refused the job at submission (qsub's message: the request against the queue's or the server's rules)",
      "qsub: Job has no walltime requested. Request walltime with \"-l walltime=HH:MM:SS\"",
      "https://github.com/openpbs/openpbs (src/cmds/qsub.c: its error messages)",
      "change the request as qsub's message says (qstat -Qf QUEUE for the queue's limits)",
      unless=("command not found", "No such file", "usage: qsub", "qsub: waiting for job", "qsub: job ", "ready")),
    # session 22 (issue 41): a workflow manager's report of the state Slurm's accounting gave its job (Snakemake's
    # SLURM executor: "SLURM-job 'ID' failed, SLURM status is: 'STATE'"); FAILED and CANCELLED say nothing more
    S("snakemake-slurm-timeout", "scheduler", ("SLURM status is: 'TIMEOUT'",),
      "Slurm ended the workflow's job at its time limit (sacct's state TIMEOUT, as the workflow manager reports it)",
      "    message: SLURM-job '26605857' failed, SLURM status is: 'TIMEOUT'.",
      "https://github.com/snakemake/snakemake-executor-plugin-slurm (the executor's message for a job sacct "
      "reports in a failed state)",
      "more time for that rule (its runtime resource, --time), or split its work; the job's log names the step"),
    S("snakemake-slurm-preempted", "scheduler", ("SLURM status is: 'PREEMPTED'",),
      "Slurm preempted the workflow's job (sacct's state PREEMPTED): a job of higher priority took its nodes",
      "    message: SLURM-job '4242' failed, SLURM status is: 'PREEMPTED'.",
      "https://github.com/snakemake/snakemake-executor-plugin-slurm (the executor's message for a job sacct "
      "reports in a failed state)",
      "rerun it (the workflow's --retries), or submit it to a partition or QOS that is not preempted"),
    S("snakemake-slurm-deadline", "scheduler", ("SLURM status is: 'DEADLINE'",),
      "Slurm ended the workflow's job at its deadline (sacct's state DEADLINE, --deadline)",
      "    message: SLURM-job '4242' failed, SLURM status is: 'DEADLINE'.",
      "https://github.com/snakemake/snakemake-executor-plugin-slurm (the executor's message for a job sacct "
      "reports in a failed state)",
      "a later --deadline, or a shorter job"),
    # a job the grid's own monitor killed at the wall-clock limit (CMS CRAB's RetryJob on HTCondor: "Not retrying job
    # due to wall clock limit (job automatically killed on the worker node)")
    S("wall-clock-killed", "scheduler", ("wall clock limit", "killed"),
      "the batch system killed the job at its wall-clock limit",
      "ERROR:RetryJob Not retrying job due to wall clock limit (job automatically killed on the worker node)",
      "https://github.com/dmwm/CRABServer/pull/9366 (RetryJob's message)",
      "ask for more wall time (the task's maxJobRuntimeMin, #SBATCH --time) or split the work into shorter jobs",
      lower=True),
    # session 23: Slurm's reason codes for a pending job that will not start as asked (job_reason_codes.shtml),
    # printed by squeue or by a tool that gave up waiting (ReFrame: "job cancelled because it was blocked due to a
    # perhaps non-recoverable reason: ReqNodeNotAvail, UnavailableNodes:nid00[003,033]"): the request against the
    # nodes or the partition's limits, not the job's code (it never ran)
    S("slurm-reqnode-not-avail", "scheduler", ("ReqNodeNotAvail",),
      "Slurm could not start the job: nodes it requires are not available (down, drained, reserved or in "
      "maintenance)",
      "Reason: job blocked error: [jobid=807785] job cancelled because it was blocked due to a perhaps "
      "non-recoverable reason: ReqNodeNotAvail,  UnavailableNodes:nid00[003,033,420-423]",
      "https://github.com/SchedMD/slurm/blob/master/doc/html/job_reason_codes.shtml (reframe-hpc/reframe#995)",
      "sinfo -R for why those nodes are out; drop --nodelist/-w or the constraint that needs them, or wait for the "
      "maintenance (scontrol show reservation) to end"),
    # session 24 (heldout-fresh18, after it was scored): PBS Pro's scheduler preempted the job (tracejob's lines: "Job
    # Rerun at request of Scheduler", "preempting job"), on an owner's node
    S("pbs-preempting", "scheduler", ("preempting job",),
      "PBS preempted the job for a higher-priority one (requeued or killed, as the queue's preempt order says)",
      "11/06/2019 14:54:53  L    Simulation: preempting job", "https://github.com/nextflow-io/nextflow/issues/1367",
      "a queue whose nodes are not preemptible, checkpoints the job can resume from, or resubmit"),
    # Nextflow's exit status 140 (128 + SIGUSR2): SGE's, LSF's and Slurm's sites' signal at a limit: the time limit
    # most often (bactopia-537, aindephys-81), memory or disk at some (nf-core/eager-1166's maintainer): a candidate
    S("nextflow-exit-140", "scheduler", ("terminated with an error exit status (140)",),
      "a Nextflow task ended with exit status 140: the scheduler stopped it at a limit (its time limit most often; "
      "memory or disk at some sites)",
      "NOTE: Process `BACTOPIATOOLS:SNIPPY:GUBBINS:GUBBINS_MODULE (snippy-core)` terminated with an error exit "
      "status (140) -- Execution is retried (1)", "https://github.com/bactopia/bactopia/issues/537",
      "the task's .command.log and the scheduler's record (sacct -j JOB -o State,Elapsed,Timelimit,MaxRSS); raise "
      "the process's time (or memory) in its config", weak=True),
    # session 24 (heldout-fresh20, after it was scored): sbatch refused its own options before submitting (its
    # "fatal:" lines: options that exclude each other, a value it cannot parse), as a workflow's profile passes them
    S("sbatch-fatal", "scheduler", ("sbatch: fatal: ",),
      "sbatch refused the job's options before submitting it (options that exclude each other, or a value it "
      "cannot read)",
      "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.",
      "https://github.com/snakemake/snakemake/issues/1829",
      "the sbatch options the job (or the workflow's profile) passes: one memory option, values sbatch accepts"),
]  # fmt: skip
