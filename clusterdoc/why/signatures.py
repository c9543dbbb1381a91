"""The failure signatures `clusterdoc why` knows in a job's output: one entry each, by category.

An entry is what an engineer greps for: `needles`, plain substrings that must all be in the line (linear, no
backtracking), an optional `node` pattern (one anchored group, bounded) to name the host it blames, the
category, what it means and what to do, and the real line it was learned from with its source. A new
signature is one entry here and one fixture in tests/fixtures/why/real/ (SOURCES.md).

Categories: code, oom, desync, hang, node, network, scheduler, environment, and two that are never a cause
by themselves: `peer` (a rank lost its connection to another: the network, or the other rank died first)
and `effect` (a rank stopped because something else failed: NCCL's abort after a timeout, a launcher's kill).
`weak` entries name a candidate, not a verdict: alone they give "unknown" with what would decide.
Order matters: the first entry that matches a line wins (specific before general).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LINE_CAP = 4096  # the part of a line any parser looks at: the cost of a line is bounded whatever its length


@dataclass(frozen=True)
class Signature:
    name: str
    category: str
    needles: tuple[str, ...]
    meaning: str
    learned: str  # the real line it was learned from
    source: str  # where that line was posted
    next_step: str = ""
    node: re.Pattern | None = None  # group 1: the node the line blames
    weak: bool = False
    lower: bool = False  # needles are matched against the lowercased line
    unless: tuple[str, ...] = ()  # a line holding one of these is not it (a retry's INFO line, a hint)

    def matches(self, line: str, low: str) -> bool:
        text = low if self.lower else line
        return all(n in text for n in self.needles) and not any(u in text for u in self.unless)

    def node_of(self, line: str) -> str | None:
        if self.node is None:
            return None
        m = self.node.search(line)
        return m.group(1) if m else None


_NODE = r"([A-Za-z0-9][\w.-]{0,62})"
S = Signature
# round 8 (memory): an allocator's or a code's own words for memory that ran out. (phrase, a word on the same line
# that says it failed (None: the phrase says it), a real line, its source). "out of memory" alone is also a hint
# ("to avoid running out of memory"): it counts on a line that says it failed, aborted or was killed, and not on
# one that says it may happen (_MEMORY_HINT)
_MEMORY_FAILED = ("error", "fatal", "abort", "fail", "kill", "exception")
_MEMORY_HINT = ("run out of memory", "running out of memory", "runs out of memory", "avoid", "prevent",
                "may cause", "can cause", "could cause", "might", "if you", "in case", "consider", "try ", "reduce",
                "fall back", "falling back", "retrying",  # advice, or a warning the job survived
                "pmpi_", "mpir_", "mpid", "mpi_",  # MPICH's error stack: its "Out of memory" alone is no verdict
                "ibv_", "reg_mr", "register", "memlock", "locked memory", "openib",  # RDMA's ENOMEM: ulimit -l
                "unable to mmap", "shm", "shared memory")  # fmt: skip
_C_IDIOM = "https://github.com/bminor/glibc (malloc(3) returns NULL, errno ENOMEM: a code's own check prints it)"
_MEMORY_PHRASES: list[tuple[str, str | None, str, str]] = [
    (
        "cannot allocate memory",
        None,
        "bash: fork: Cannot allocate memory",
        "https://github.com/bminor/glibc (ENOMEM's strerror; fork(2), mmap(2))",
    ),
    ("unable to allocate memory", None, "Unable to allocate memory", _C_IDIOM),
    ("could not allocate memory", None, "Could not allocate memory", _C_IDIOM),
    ("failed to allocate memory", None, "Error: failed to allocate memory for file handles.", _C_IDIOM),
    ("memory allocation failed", None, "Fatal error: memory allocation failed", _C_IDIOM),
    ("memory allocation failure", None, "memory allocation failure", _C_IDIOM),
    ("malloc failed", None, "malloc failed", _C_IDIOM),
] + [
    (phrase, mark, learned, src)
    for phrase, learned, src in (
        (
            "out of memory",
            "fatal error: runtime: out of memory",
            'https://github.com/golang/go (src/runtime: throw("runtime: out of memory"))',
        ),
        (
            "not enough memory",
            "Not enough memory. Failed to realloc 8589934592 bytes for nbat->out[0].f",
            "https://github.com/gromacs/gromacs (src/gromacs/utility/smalloc.cpp: 'Not enough memory. Failed to ...')",
        ),
        ("insufficient memory", "Fatal error: insufficient memory to allocate the work arrays", _C_IDIOM),
    )
    for mark in _MEMORY_FAILED
]
SIGNATURES: list[Signature] = [
    # --- scheduler (Slurm's own lines) ---
    S("slurm-time-limit", "scheduler", ("CANCELLED AT", "DUE TO TIME LIMIT"),
      "Slurm ended the job at its time limit",
      "slurmstepd: error: *** STEP 55595933.0 ON maestro-3017 CANCELLED AT 2025-01-10T15:27:25 DUE TO TIME LIMIT ***",
      "https://github.com/Lightning-AI/pytorch-lightning/issues/20542",
      "checkpoint on SIGUSR1 (sbatch --signal=B:USR1@90) and resubmit; or ask for more --time"),
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
    S("slurm-node-failure", "node", ("Node failure on ",),
      "Slurm lost a node of the allocation (it stopped answering slurmctld)",
      "salloc: error: Node failure on worker-1", "https://github.com/nebius/soperator/issues/854",
      "resubmit without that node (--exclude); check it (clusterdoc check, its slurmd log)",
      node=re.compile(r"Node failure on " + _NODE)),
    S("slurm-oom-kill", "oom", ("oom-kill event",),
      "the job step ran out of host memory (the cgroup's OOM killer killed a rank): its own memory limit",
      "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=37205392.0. Some of your processes may have been "
      "killed by the cgroup out-of-memory handler.", "https://github.com/brain-score/vision/pull/950",
      "ask for more memory (--mem / --mem-per-gpu) or load less per rank (DataLoader workers, dataset in RAM)",
      node=re.compile(r"slurmstepd-" + _NODE + r": ")),
    S("slurm-oom-kill2", "oom", ("oom_kill event",),
      "the job step ran out of host memory (the cgroup's OOM killer killed a rank): its own memory limit",
      "slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks have been OOM Killed.",
      "https://github.com/nextflow-io/nextflow/issues/5932",
      "ask for more memory (--mem / --mem-per-gpu) or load less per rank (DataLoader workers, dataset in RAM)"),
    S("ray-oom", "oom", ("Memory on the node (", "was running was"),
      "Ray's memory monitor killed a task or actor: the node's host memory was nearly full",
      "Memory on the node (IP: 22.8.197.77, ID: 012d92e8eb02243a135cc0370650c943be7d9c0fa7514a14fa2c5aef) where the "
      "task (actor ID: 4bccdadc1a067a5710ecd4bf02000000, name=TaskRunner.__init__, pid=358, memory used=1519.84GB) "
      "was running was 1520.01GB", "https://github.com/verl-project/verl/issues/1684",
      "load less per node (fewer actors or workers per node, offload, a smaller model copy per process), or "
      "nodes with more memory; RAY_memory_usage_threshold only moves the line",
      node=re.compile(r"(?:IP: |-ip )(\d{1,3}(?:\.\d{1,3}){3})")),
    S("ray-oom-killed", "oom", ("Task was killed due to the node running low on memory",),
      "Ray's memory monitor killed a task or actor: the node's host memory was nearly full",
      "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
      "https://github.com/OpenRLHF/OpenRLHF/issues/911",
      "load less per node (fewer actors or workers per node, offload), or nodes with more memory"),
    S("ray-oom-doc", "oom", ("ray-oom-prevention",),
      "Ray's memory monitor killed a task or actor (it points at its out-of-memory page): the node's host memory",
      "(ActorModelRayActor pid=8249) Refer to the documentation on how to address the out of memory issue: "
      "https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. Consider provisioning more memory "
      "on this node or reducing task parallelism", "https://github.com/OpenRLHF/OpenRLHF/issues/911",
      "load less per node (fewer actors or workers per node, offload), or nodes with more memory"),
    S("ray-node-dead", "node", ("has been marked dead because the detector has missed too many heartbeats",),
      "Ray lost a node (its raylet stopped answering): the node died, rebooted or was cut off",
      "WARNING worker.py:1462 -- The node with node id: 8f205b12643d25d8c1ce57c45527a6c912f3479765096718ad2bf0d3 and "
      "ip: 10.128.0.103 has been marked dead because the detector has missed too many heartbeats from it.",
      "https://github.com/ray-project/ray/issues/22349",
      "resubmit without that node; check it (its kernel log, the raylet's log: ray logs raylet.out -ip ADDR)",
      node=re.compile(r"and ip: (\d{1,3}(?:\.\d{1,3}){3})")),
    # Ray's death notice of an actor whose node died (the raylet gone: a crash, a reboot, a cut link); the node's
    # address is the actor's "ip:" field printed above it. Followed by "the actor's node was preempted" it is a
    # preemption (why/foreign.py reads that line as the reason)
    S("ray-node-died", "node", ("because its node has died",),
      "Ray lost the node an actor ran on (its raylet died: the node crashed, rebooted or was cut off)",
      "The actor is dead because its node has died. Node Id: 677df2a9020c5db45e755b0078c469e2ce51e05ea093ed3b283505a0",
      "https://github.com/ray-project/ray/issues/43751",
      "resubmit without that node; check it (its kernel log: the OOM killer, XIDs; the raylet's log: ray logs "
      "raylet.out -ip ADDR)"),
    # Ray's death notice of a worker that exited without a word (SYSTEM_ERROR): its own text lists the causes, the
    # OOM killer first; a candidate, never a verdict (openrlhf-621's beside an mlx5 line stayed unsettled)
    S("ray-worker-died", "oom", ("Worker unexpectedly exits with a connection error code",),
      "a Ray worker died without a word (SYSTEM_ERROR): the OOM killer most often, as Ray's own text says first; or "
      "a crash (SIGSEGV) or a ray stop",
      "Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. "
      "End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to "
      "high memory usage.", "https://github.com/verl-project/verl/issues/3349 (and verl#217)",
      "the node's dmesg for the OOM killer and Ray's memory monitor (ray logs raylet.out -ip ADDR); the worker's own "
      "log (python-core-worker-*.log) for a crash", weak=True),
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
    # Slurm's authentication (munge) failed on the host that submits: munged not running, its socket or key
    # missing (munge-118; Slurm's auth/munge plugin prints "Munge encode failed")
    S("slurm-munge-auth", "environment", ("Protocol authentication error",),
      "Slurm could not authenticate the request: munge (its authentication daemon) is not running or cannot be "
      "reached on this host, or its key differs from the controller's",
      "sbatch: error: Batch job submission failed: Protocol authentication error",
      "https://github.com/dun/munge/issues/118",
      "the admins: munged on this host (munge -n | unmunge; its socket, its key against the controller's)"),
    S("slurm-munge-encode", "environment", ("Munge encode failed",),
      "Slurm could not authenticate the request: munge (its authentication daemon) is not running or cannot be "
      "reached on this host",
      "sbatch: error: Munge encode failed: Failed to access \"/run/munge/munge.socket.2\": No such file or directory",
      "https://github.com/dun/munge/issues/118", "the admins: munged on this host (munge -n | unmunge)"),
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
      node=re.compile(r"failed on node " + _NODE + r":"), weak=True),
    S("slurm-slurmd-socket-timeout", "scheduler", ("]:6818] failed: Socket timed out",),
      "srun could not reach a node's slurmd (port 6818) in time",
      "srun: error: slurm_receive_msgs: [[ubuntu4]:6818] failed: Socket timed out on send/recv operation",
      "https://github.com/mlr-org/batchtools/issues/201",
      "scontrol show node NODE; on it: slurmd running, munge -n | ssh NODE unmunge (the same key), port 6818 open",
      node=re.compile(r"\[\[" + _NODE + r"\]:6818\]"), weak=True),
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
      node=re.compile(r"failed on node " + _NODE + r":"), weak=True),
    # Ray's raylet killed workers for memory pressure: its summary line (the docs' link that ray-oom names may
    # be cut from a paste); the node's address is its IP field (wmpo-3, flower-2157, easyr1-185)
    S("ray-memory-pressure", "oom", ("killed due to memory pressure (OOM)",),
      "Ray's memory monitor killed workers: the node's host memory ran low (over RAY_memory_usage_threshold)",
      "(raylet) node_manager.cc:3084: 4 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers "
      "crashed due to other reasons at node (ID: b287aac2de42bef55d13e884c4bdb6cffb2d81d1dc96aa08c4633a43, IP: "
      "172.28.0.12) over the last time period.", "https://github.com/flwrlabs/flower/issues/2157 (and WM-PO/WMPO#3)",
      "load less per node (fewer workers or actors, more CPUs per task), or nodes with more memory (ray logs "
      "raylet.out -ip ADDR names the processes)",
      node=re.compile(r"IP: (\d{1,3}(?:\.\d{1,3}){3})")),
    # runc: a container's init killed by the cgroup's OOM killer before it started (Kubernetes' CreateContainerError)
    S("runc-init-oom", "oom", ("container init was OOM-killed",),
      "the container was OOM-killed as it started: its memory limit is below what it needs",
      "Error: container create failed: ... level=error msg=\"runc create failed: unable to start container process: "
      "container init was OOM-killed (memory limit too low?)\"",
      "https://github.com/kubeflow/trainer/issues/1661 (runc: libcontainer/process_linux.go)",
      "raise the container's memory limit (resources.limits.memory)"),
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
    S("lsf-swap-limit", "oom", ("TERM_SWAP",),
      "LSF killed the job for going over its swap (virtual memory) limit",
      "TERM_SWAP: job killed after reaching LSF swap usage limit.",
      "https://github.com/IBMSpectrumComputing/lsf-python-api (LSF's termination reasons)",
      "ask for more memory (bsub -v / -M), or load less at once"),
    # kubectl describe pod: a container's last state ended by SIGKILL (137) with a reason other than OOMKilled
    # (k8s-122256's "Reason: Error"): a failed liveness probe, the node's OOM killer, a kill; a SIGKILL candidate
    S("k8s-exit-137", "oom", ("Exit Code:", "137"),
      "a container was killed by SIGKILL (exit code 137) without Kubernetes' OOMKilled reason",
      "      Exit Code: 137", "https://github.com/kubernetes/kubernetes/issues/122256",
      "kubectl describe pod (its Events: a failed liveness probe, an eviction), the node's dmesg for the OOM killer",
      weak=True),
    # JAX's coordination service: tasks that did not register or reach a barrier in time. Its own text lists the
    # causes (tasks crashed before connecting, never scheduled, scheduling delays); a coordinator port no firewall
    # opens prints the same (jax-35905): candidates, never a verdict (llama2jax-20, gpurecipes-2, paxml-77,
    # levanter-432)
    S("jax-barrier-timeout", "network", ("DEADLINE_EXCEEDED: Barrier timed out",),
      "JAX's coordination service timed out waiting for tasks at a barrier (registration or the job's own)",
      "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: PjRT_Client_Connect. "
      "Timed out task names:", "https://github.com/ayaka14732/llama-2-jax/issues/20 (and AI-Hypercomputer/"
      "gpu-recipes#2, marin-community/levanter#432)",
      "the timed-out tasks' own logs (did they start? num_processes against what the launcher started), the "
      "coordinator's address and port from those hosts", weak=True),
    S("jax-register-deadline", "network", ("CoordinationService/RegisterTask",),
      "a JAX task could not register with the coordination service in time",
      "Additional GRPC error information from remote target unknown_target_for_coordination_leader while calling "
      "/tensorflow.CoordinationService/RegisterTask:", "https://github.com/google/paxml/issues/77 (and "
      "jax-ml/jax#35905)",
      "the coordinator's address and port from this host (a firewall, the port JAX picks), the other tasks' logs",
      weak=True),
    # Flux: the job shell could not start the program (flux-core-4195: not installed on the nodes; the allocation's
    # timeout after it is its effect), and a node lost under a job as flux jobs prints the exception's note
    # (flux-core-6653)
    S("flux-start-failed", "environment", ("start failed: ", ": No such file or directory"),
      "Flux could not start the program on a node: it is not there (not installed, not on the PATH, a path only the "
      "login node has)",
      "0.778s: flux-shell[1]: FATAL: task 0: start failed: stress: No such file or directory",
      "https://github.com/flux-framework/flux-core/issues/4195",
      "the program's path on the compute nodes (flux run -N1 which PROG), the module or the container"),
    S("flux-node-failure", "node", ("node failure on ", " rank "),
      "Flux lost a node under the job (its broker stopped answering: the node crashed, rebooted or was cut off)",
      "fdFmCpYwQZ5  node-failure              node failure on elcap8767 (shell rank 1127)",
      "https://github.com/flux-framework/flux-core/issues/6653",
      "resubmit without that node (flux run --requires=-host:NODE); its console and kernel log",
      node=re.compile(r"node failure on " + _NODE)),
    # Ray: an actor dead because its owner's node crashed (the driver's node: its raylet gone). Ray's processes on
    # the node failing (verl-4242: the dashboard agent, which the raylet fate-shares with), the OOM killer, or the
    # node itself print the same: candidates, the owner's address named (easyr1-324)
    S("ray-owner-node-crashed", "node", ("Owner's node has crashed",),
      "a Ray actor died because its owner's node crashed (that node's raylet is gone)",
      "The actor is dead because its owner has died. Owner Id: 01000000ffffffffffffffffffffffffffffffffffffffffffff"
      "ffff Owner Ip address: 10.254.32.19 Owner worker exit type: SYSTEM_ERROR Worker exit detail: Owner's node "
      "has crashed.", "https://github.com/verl-project/verl/issues/4242 (and hiyouga/EasyR1#324)",
      "that node's raylet.out, dashboard_agent.log and dmesg (ray logs raylet.out -ip ADDR)",
      node=re.compile(r"Owner Ip address: (\d{1,3}(?:\.\d{1,3}){3})"), weak=True),
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
    S("sbatch-failed", "scheduler", ("Batch job submission failed",),
      "Slurm refused the job at submission (an option it does not accept, or over a limit)",
      "sbatch: error: Batch job submission failed: Invalid job array specification",
      "https://github.com/facebookresearch/cc_net/issues/32",
      "change the request as the message says (array size: MaxArraySize in scontrol show config; the partition's "
      "limits: sinfo, sacctmgr show qos)"),
    # salloc's and srun's refusal (sbatch's is "Batch job submission failed"): the reason follows the colon
    S("salloc-refused", "scheduler", ("Job submit/allocate failed",),
      "Slurm refused the allocation (salloc or srun outside a job): a limit or policy of the account, QOS or "
      "partition",
      "salloc: error: Job submit/allocate failed: Job violates accounting/QOS policy (job submit limit, user's size "
      "and/or time limits)", "https://github.com/chpc-uofu/technotes/issues/7",
      "the reason after the colon (squeue -u $USER for the jobs counted against the limit; sacctmgr show assoc, "
      "show qos for the limits); wait for jobs to end, or ask within the limits"),
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
    # the kernel's OOM killer in a pasted dmesg ("Out of memory: Killed process N (python)", the cgroup's "Memory
    # cgroup out of memory: Killed process N"), Kubernetes' OOMKilled, torch's CPU allocator: host memory
    S("kernel-oom-killer", "oom", ("out of memory: killed process",),
      "the kernel's OOM killer killed a process: the node's (or the cgroup's) host memory ran out",
      "Out of memory: Killed process 31337 (python) total-vm:98765432kB, anon-rss:87654321kB",
      "https://github.com/torvalds/linux (mm/oom_kill.c)",
      "less host memory per rank (DataLoader workers, the dataset in RAM, loading the model once per node), or "
      "more --mem", lower=True),
    S("k8s-oomkilled", "oom", ("OOMKilled",),
      "Kubernetes killed the container for going over its memory limit (host memory)",
      "Last State: Terminated  Reason: OOMKilled  Exit Code: 137", "https://github.com/kubernetes/kubernetes",
      "raise the pod's memory limit (resources.limits.memory), or load less per rank"),
    S("cpu-allocator", "oom", ("DefaultCPUAllocator: can't allocate memory",),
      "torch could not allocate host memory (the CPU allocator): the node's or the job's memory ran out",
      "RuntimeError: [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: you "
      "tried to allocate 2359296 bytes. Error code 12 (Cannot allocate memory)",
      "https://github.com/Lightning-AI/pytorch-lightning (utilities/memory.py: is_out_of_cpu_memory)",
      "less host memory per rank (load the model once per node: low_cpu_mem_usage, device_map), or more --mem"),
    S("enomem", "oom", ("[Errno 12] Cannot allocate memory",),
      "the host ran out of memory (a process could not allocate or fork: ENOMEM)",
      "OSError: [Errno 12] Cannot allocate memory", "https://github.com/spine-generic/spine-generic/issues/108",
      "more memory per task (--mem / --mem-per-cpu), or fewer processes per node"),
    S("srun-task-oom", "oom", ("srun: error: ", ": Out Of Memory"),
      "Slurm killed the task for exceeding its host memory (cgroup)",
      "srun: error: node107: task 0: Out Of Memory", "https://github.com/brain-score/vision/pull/950",
      "ask for more memory (--mem / --mem-per-gpu) or load less per rank",
      node=re.compile(r"srun: error: " + _NODE + r": task")),
    S("slurm-mem-limit", "oom", ("exceeded memory limit",),
      "Slurm killed the job for going over its memory limit (host memory)",
      "slurmstepd-dback-c11-n01: error: Job 848444 exceeded memory limit (33715636 > 32757760), being killed",
      "https://github.com/bcbio/bcbio-nextgen/issues/2393",
      "ask for more memory (--mem / --mem-per-gpu) or load less per rank",
      node=re.compile(r"slurmstepd-" + _NODE + r": "), lower=True),
    # the other batch systems' own end lines: PBS's MOM ("=>> PBS: job killed: mem|vmem|walltime N exceeded limit
    # M") and LSF's exit reasons (TERM_MEMLIMIT, TERM_RUNLIMIT, in the job's report)
    S("pbs-mem-limit", "oom", ("PBS: job killed: ", "mem ", "exceeded limit"),
      "PBS killed the job for going over its memory limit (host memory)",
      "=>> PBS: job killed: mem 2097152kb exceeded limit 1048576kb", "https://github.com/openpbs/openpbs (MOM's "
      "limit enforcement: 'job killed: mem ... exceeded limit')",
      "ask for more memory (#PBS -l mem= / select=...:mem=), or load less per process"),
    S("pbs-walltime", "scheduler", ("PBS: job killed: walltime",),
      "PBS ended the job at its walltime limit",
      "=>> PBS: job killed: walltime 3650 exceeded limit 3600", "https://github.com/openpbs/openpbs (MOM's limit "
      "enforcement: 'job killed: walltime ... exceeded limit')",
      "checkpoint and resubmit, or ask for more time (#PBS -l walltime=)"),
    S("lsf-mem-limit", "oom", ("TERM_MEMLIMIT",),
      "LSF killed the job for going over its memory limit (host memory)",
      "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.",
      "https://github.com/FredslundMagnus/Myretuen (its LSF job reports)",
      "ask for more memory (bsub -M and -R \"rusage[mem=...]\"), or load less per process"),
    S("lsf-run-limit", "scheduler", ("TERM_RUNLIMIT",),
      "LSF ended the job at its run time limit",
      "TERM_RUNLIMIT: job killed after reaching LSF run time limit.",
      "https://github.com/FredslundMagnus/Myretuen (its LSF job reports)",
      "checkpoint and resubmit, or ask for more time (bsub -W)"),
    # host memory as the other schedulers and the applications' own allocators print it: Slurm's older cgroup line
    # and its job state, SGE's h_vmem, Moab's MEM limit; LAMMPS' memory.cpp, C++'s bad_alloc, the Fortran runtimes,
    # numpy's array allocation, and the GPU runtimes' own allocation errors (CUDA driver API, cuDNN, XLA/TF)
    S("slurm-cgroup-oom-handler", "oom", ("killed by the cgroup out-of-memory",),
      "Slurm's cgroup killed processes of the job for going over its memory (host memory)",
      "Some of your processes may have been killed by the cgroup out-of-memory handler.",
      "https://github.com/UNINETTSigma2/documentation (jobs/common_job_failures.md: Slurm's output on a memory kill)",
      "ask for more memory (--mem / --mem-per-cpu), or load less per task"),
    S("slurm-state-oom", "oom", ("OUT_OF_MEMORY",),
      "Slurm's accounting says the job (or a step) ended OUT_OF_MEMORY: a memory kill (host memory)",
      "State: OUT_OF_MEMORY (exit code 0)", "https://github.com/gferhpc/supercomputing.tue.nl (seff's report of a "
      "job Slurm's cgroup killed; Slurm's state code OUT_OF_MEMORY)",
      "ask for more memory (--mem / --mem-per-cpu): sacct -j JOB -o JobID,State,MaxRSS,ReqMem shows the peak"),
    S("moab-mem-limit", "oom", ("exceeded MEM usage hard limit",),
      "Moab killed the job for going over its memory (MEM usage hard limit)",
      "job 3132467 exceeded MEM usage hard limit (2528 > 1126)", "https://github.com/cBio/cbio-cluster/issues/251 "
      "(Torque/Moab; its 'soft limit' form is a warning and no cause)",
      "ask for more memory (#PBS -l mem=), or load less per process"),
    S("lammps-alloc", "oom", ("Failed to ", "bytes for array"),
      "a process could not allocate memory (LAMMPS' own allocator: malloc or realloc returned nothing)",
      "ERROR on proc 617: Failed to reallocate 1650272 bytes for array comm:buf_send (src/memory.cpp:105)",
      "https://github.com/lammps/lammps/issues/3526",
      "more memory per rank (fewer ranks per node, --mem-per-cpu), or a smaller problem per rank; the proc named "
      "is the rank that failed"),
    S("cxx-bad-alloc", "oom", ("std::bad_alloc",),
      "a C++ allocation failed (std::bad_alloc: operator new found no memory)",
      "terminate called after throwing an instance of 'std::bad_alloc'",
      "https://github.com/rcthomas/es/issues/13 (under mpirun; cnclabs/smore#39, cdhit#34 on Slurm)",
      "more memory per process (--mem), or less data per rank; a huge size asked for is a bug (the allocation's "
      "size in a debugger)"),
    S("ifort-vm", "oom", ("insufficient virtual memory",),
      "the Fortran runtime could not allocate (Intel Fortran's severe (41): insufficient virtual memory)",
      "forrtl: severe (41): insufficient virtual memory", "https://github.com/NOAA-EMC/UPP/issues/238 (and "
      "NOAA-EMC/GSI#859 behind srun's '175: ' label)",
      "more memory per rank, or fewer ranks per node"),
    S("cuda-driver-oom", "oom", ("CUDA_ERROR_OUT_OF_MEMORY",),
      "the GPU ran out of memory (the CUDA driver API's error: JAX, CuPy, TensorRT, the driver)",
      "failed to allocate 17.79G (19104890880 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
      "https://github.com/philip-huang/PIXOR/issues/31",
      "a smaller batch or model per GPU (XLA_PYTHON_CLIENT_MEM_FRACTION for JAX's preallocation)"),
    S("cudnn-alloc", "oom", ("CUDNN_STATUS_ALLOC_FAILED",),
      "cuDNN could not allocate GPU memory for its workspace (the GPU is full)",
      "cuDNN failure 2: CUDNN_STATUS_ALLOC_FAILED ; GPU=0 ; hostname=PTNUWCL5099642 ; expr=finder(calgo, algoPerf)",
      "https://github.com/microsoft/CNTK/issues/220 (the maintainer: out of GPU memory; ssd.pytorch#33 the same)",
      "a smaller batch per GPU (the memory torch's allocator holds leaves cuDNN none)"),
    S("xla-resource-exhausted", "oom", ("RESOURCE_EXHAUSTED", "allocate"),
      "the device ran out of memory (XLA's and TensorFlow's RESOURCE_EXHAUSTED: an allocation failed)",
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 "
      "bytes.", "https://github.com/patrickbryant1/AFProfile/issues/8 (jaxline#11; jax_privacy#10: 'Failed to "
      "allocate request for 176.00MiB')",
      "a smaller batch or model per device; for JAX, XLA_PYTHON_CLIENT_PREALLOCATE=false shows the real peak"),
    S("tf-oom-tensor", "oom", ("OOM when allocating tensor",),
      "TensorFlow could not allocate a tensor (the GPU ran out of memory)",
      "ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[500,17,17,4032] and "
      "type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
      "https://github.com/tensorflow/models/issues/7142",
      "a smaller batch per GPU"),
    S("kernel-oom-invoked", "oom", ("invoked oom-killer",),
      "the kernel's OOM killer ran on the node (a pasted dmesg): host memory ran out",
      "2024-04-29T14:55:41,678628+02:00 pool invoked oom-killer: gfp_mask=0x6200ca(GFP_HIGHUSER_MOVABLE), order=0, "
      "oom_score_adj=0", "https://github.com/equinor/ert/issues/7797 (gensyn-ai/rl-swarm#463 the same)",
      "more host memory per task (--mem), or less per rank; the dmesg lines after it name the process killed"),
    S("hip-oom", "oom", ("hipErrorOutOfMemory",),
      "the GPU ran out of memory (ROCm's HIP runtime: hipErrorOutOfMemory)",
      "error: 'hipErrorOutOfMemory'(2) at square.cpp:76", "https://github.com/ROCm/hip/issues/2132",
      "a smaller batch or model per GPU"),
    S("hip-oom-tf", "oom", ("HIP_ERROR_OutOfMemory",),
      "the GPU ran out of memory (ROCm's driver, as TensorFlow's ROCm build prints it)",
      "E tensorflow/stream_executor/rocm/rocm_driver.cc:600] failed to allocate 890.06M (933298432 bytes) from "
      "device: HIP_ERROR_OutOfMemory", "https://github.com/keras-team/keras/issues/13889",
      "a smaller batch or model per GPU"),
    S("cuda-rt-oom", "oom", ("cudaErrorMemoryAllocation",),
      "the GPU ran out of memory (the CUDA runtime's cudaErrorMemoryAllocation)",
      "cudaErrorMemoryAllocation : out of memory", "https://github.com/jax-ml/jax/issues/17217",
      "a smaller batch or model per GPU; another process (JAX's preallocation) may hold the memory"),
    S("vllm-no-cache-memory", "oom", ("No available memory for the cache blocks",),
      "vLLM found no GPU memory left for its KV cache after loading the model (the model, or another process, "
      "takes what gpu_memory_utilization allows)",
      "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
      "initializing the engine.", "https://github.com/vllm-project/vllm/issues/10439 (QwenLM/Qwen#853 on 4 A100s)",
      "raise gpu_memory_utilization, lower max_model_len, more tensor parallelism, or free the GPU of other "
      "processes"),
    # --- round 7: memory exhausted as the kernel, MPI, compiled runtimes and GPU codes print it ---
    S("kernel-oom-kill-process", "oom", ("out of memory: kill process",),
      "the kernel's OOM killer killed a process (older kernels' words; a cgroup's 'Memory cgroup out of memory' "
      "the same)",
      "Out of memory: Kill process 41528 (python) score 913 or sacrifice child",
      "https://github.com/torvalds/linux (mm/oom_kill.c, before 4.19)",
      "ask for more memory, or load less per rank (DataLoader workers, dataset in RAM)", lower=True),
    S("kernel-oom-constraint", "oom", ("oom-kill:constraint=",),
      "the kernel's OOM killer chose a process (its summary line)",
      "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0-1,task=python,pid=1234,uid=1000",
      "https://github.com/torvalds/linux (mm/oom_kill.c, dump_oom_summary)",
      "ask for more memory, or load less per rank (DataLoader workers, dataset in RAM)"),
    S("kernel-oom-reaper", "oom", ("oom_reaper: reaped process",),
      "the kernel's OOM reaper freed a killed process's memory (it was killed for memory)",
      "oom_reaper: reaped process 1234 (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB",
      "https://github.com/torvalds/linux (mm/oom_kill.c)",
      "ask for more memory, or load less per rank (DataLoader workers, dataset in RAM)"),
    S("mpich-out-of-memory-in-file", "oom", ("Out of memory in file ",),
      "MPICH's (Cray MPT's, ROMIO's) allocation check failed: the rank ran out of host memory inside MPI",
      "129: Out of memory in file /notbackedup/tmp/ulib/mpt_base/mpich2/src/mpi/romio/adio/ad_cray/"
      "ad_cray_write_coll.c, line 486", "https://github.com/E3SM-Project/E3SM/issues/1217 (Cori, cray-mpich 7.4.4)",
      "fewer ranks per node (more memory per rank) or smaller collective buffers (cb_buffer_size, the I/O tasks)"),
    S("mpi-err-no-mem", "oom", ("MPI_ERR_NO_MEM",),
      "MPI could not allocate memory (MPI_Alloc_mem, buffers)", "*** MPI_ERR_NO_MEM: out of memory",
      "https://github.com/open-mpi/ompi (ompi/errhandler/errcode.c: the MPI standard's error class; "
      "pmodels/mpich#1112 on its use)",
      "fewer ranks per node or more memory per rank; smaller MPI buffers"),
    S("gfortran-alloc", "oom", ("Allocation would exceed memory limit",),
      "gfortran's runtime could not allocate an array (the host's memory, or the job's limit)",
      "Operating system error: Cannot allocate memory\nAllocation would exceed memory limit",
      "https://github.com/gcc-mirror/gcc (libgfortran/runtime/error.c, os_error)",
      "more memory per rank (--mem-per-cpu) or fewer ranks per node; smaller arrays per rank"),
    S("cudamalloc-oom", "oom", ("cudamalloc", "out of memory"),
      "a cudaMalloc failed for want of GPU memory",
      "cudaMalloc failed: out of memory",
      "https://github.com/apache/mxnet/issues/5341 (TuSimple/mx-maskrcnn#98 the same)",
      "a smaller problem per GPU, or more GPUs", lower=True),
    S("amrex-gpu-oom", "oom", ("out of gpu memory",),
      "AMReX's arena (WarpX, Nyx, Castro...) found no GPU memory left for an allocation",
      "amrex::Abort::0::Out of gpu memory. Free: 0 Asking: 1073741824 Bytes",
      "https://github.com/AMReX-Codes/amrex (Src/Base/AMReX_Arena.cpp)",
      "fewer cells per GPU (max_grid_size, more nodes), or amrex.the_arena_init_size lower", lower=True),
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
      node=re.compile(r"failed on node " + _NODE + r":")),
    S("srun-step-memory", "scheduler", ("Unable to create step", "Memory required by task is not available"),
      "Slurm could not start the job step: the memory it asks for is held by the job's other steps",
      "srun: error: Unable to create step for job 29986033: Memory required by task is not available",
      "https://github.com/eth-cscs/DLA-Future/issues/337",
      "give each step its share (srun --mem=... or --exact / --overlap), or run the steps one after another"),
    S("pbs-node-failure", "node", ("job preempted (node failure)",),
      "the batch system lost the job's node (it could not reach the node's daemon)",
      "job preempted (node failure)", "https://github.com/cBio/cbio-cluster/issues/188",
      "resubmit without that node; the admins check it"),
    # --- node: the GPU or the machine ---
    S("ecc-uncorrectable", "node", ("uncorrectable ECC error",),
      "the GPU hit an uncorrectable ECC memory error: the hardware, not the code",
      "RuntimeError: CUDA error: uncorrectable ECC error encountered",
      "https://github.com/jade-hpc-gpu/jade-hpc-gpu.github.io/issues/194",
      "drain the node and reset the GPU (clusterdoc check: ECC, row remapping); resubmit without it"),
    S("gpu-off-bus", "node", ("fallen off the bus",),
      "a GPU fell off the PCIe bus (XID 79): the node needs a reset",
      "NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.",
      "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1151",
      "drain the node, reboot it; resubmit without it"),
    S("xid", "node", ("NVRM: Xid",),
      "the GPU driver logged an XID (a GPU error): see which one (clusterdoc check reads them)",
      "NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.",
      "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1151",
      "clusterdoc check on the node (its XIDs and what each means); drain it if it is a hardware XID"),
    S("rm-init-adapter", "node", ("RmInitAdapter failed",),
      "the GPU driver could not bring up a GPU (NVRM RmInitAdapter): the GPU or its slot is failing",
      "[   39.147720] NVRM: RmInitAdapter failed! (0x26:0xffff:1127)", "https://github.com/microsoft/pai/issues/4344",
      "drain the node (a GPU is gone: nvidia-smi shows fewer); reboot or replace it; resubmit without it"),
    S("cuda-not-initialized", "node", ("system not yet initialized",),
      "CUDA could not start: the node's GPU system is not initialized (NVSwitch machines: the fabric manager is not "
      "running)", "Cuda failure 802 'system not yet initialized'",
      "https://github.com/hiyouga/LlamaFactory/issues/8968",
      "start the node's nvidia-fabricmanager (systemctl status nvidia-fabricmanager) or drain it; resubmit elsewhere"),
    S("gpu-no-handle", "node", ("Unable to determine the device handle for GPU",),
      "the driver lost a GPU (nvidia-smi cannot reach it): the GPU or its PCIe link failed",
      "Unable to determine the device handle for GPU0000:03:00.0: Unknown Error",
      "https://github.com/rwth-i6/returnn/issues/1486",
      "drain the node, reboot it (its kernel log: XIDs, PCIe AER errors); resubmit without it"),
    S("gpu-lost", "node", ("ERROR_GPU_IS_LOST",),
      "NVML lost the GPU (it fell off the bus)",
      "failed to get device remapped rows: ERROR_GPU_IS_LOST", "https://github.com/leptonai/gpud/issues/604",
      "drain the node, reboot it; resubmit without it"),
    # --- oom: GPU memory ---
    # NCCL's CUDACHECK prints "Cuda failure 'out of memory'" (2.18 and older) or "Cuda failure 2 'out of memory'"
    # (the error's number first, 2.19+), on its own WARN line or as the "Last error:" of ncclUnhandledCudaError
    S("nccl-cuda-oom", "oom", ("Cuda failure ", "'out of memory'"),
      "NCCL could not allocate its GPU buffers: the GPU is out of memory",
      "VM-0-16-ubuntu:392:494 [2] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'",
      "https://github.com/NVIDIA/TensorRT-LLM/issues/1670 (and peft#1703's \"Last error: Cuda failure 2 'out of "
      "memory'\")",
      "leave NCCL room: a smaller batch, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, fewer NCCL channels"),
    S("torch-oom", "oom", ("CUDA out of memory",),
      "a rank ran out of GPU memory",
      "OutOfMemoryError: CUDA out of memory. Tried to allocate 172.00 MiB (GPU 0; 79.35 GiB total capacity; ...",
      "https://github.com/Instruction-Tuning-with-GPT-4/GPT-4-LLM/issues/16",
      "lower the batch (submit --oom-retry batch-size), shard more (FSDP/ZeRO), or activation checkpointing"),
    S("cuda-runtime-oom", "oom", ("CUDA runtime error: out of memory",),
      "a rank ran out of GPU memory (an inference engine's own CUDA check)",
      "RuntimeError: [TM][ERROR] CUDA runtime error: out of memory", "https://github.com/InternLM/lmdeploy/issues/2993",
      "less memory per GPU: a smaller batch or cache (the engine's memory fraction), or more GPUs (tensor parallel)"),
    S("cuda-error-oom", "oom", ("CUDA error: out of memory",),
      "a rank ran out of GPU memory (the CUDA runtime's form, often at context creation)",
      "RuntimeError: CUDA error: out of memory", "https://github.com/ruotianluo/ImageCaptioning.pytorch/issues/176",
      "lower the batch; check that no other process holds the GPU (nvidia-smi)"),
    S("cublas-alloc", "oom", ("CUBLAS_STATUS_ALLOC_FAILED",),
      "cuBLAS could not allocate its workspace: the GPU is out of memory",
      "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
      "https://github.com/deepspeedai/DeepSpeedExamples/issues/323",
      "lower the batch or shard more; check that no other process holds the GPU (nvidia-smi)"),
    # round 8 (memory): the JVM's own error (Spark, Hadoop, a Java tool in a pipeline): host memory, not the GPU's
    S("java-oom", "oom", ("java.lang.OutOfMemoryError",),
      "the JVM ran out of memory (its heap, -Xmx, or native memory): host memory, not the GPU's",
      "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space",
      "https://github.com/openjdk/jdk (java.lang.OutOfMemoryError: 'Java heap space')",
      "a larger heap (-Xmx, JAVA_OPTS; within the job's --mem), or less data per process"),
    S("torch-oom-type", "oom", ("OutOfMemoryError",),
      "a rank ran out of GPU memory",
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 496.00 MiB. GPU 0 has a total capacty ...",
      "https://github.com/FoundationVision/GenerateU/issues/10",
      "lower the batch (submit --oom-retry batch-size), shard more (FSDP/ZeRO), or activation checkpointing"),
    # Python's own MemoryError (a malloc that failed: host memory, never the GPU's), however it is printed: alone
    # on its line, glued to the next "Traceback" by interleaved workers, numpy's _ArrayMemoryError
    S("memory-error", "oom", ("MemoryError",),
      "a process raised MemoryError: the host ran out of memory (not the GPU)",
      "MemoryErrorTraceback (most recent call last):", "https://github.com/open-mmlab/mmdetection/issues/1767 (and "
      "microsoft/SoftTeacher#149's MemoryError in a DataLoader worker)",
      "less host memory per rank (DataLoader workers, the dataset in RAM, spawn's pickled arguments), or more --mem"),
    S("loader-killed", "oom", ("DataLoader worker", "killed by signal: Killed"),
      "a DataLoader worker was killed by SIGKILL: almost always the host's OOM killer (the job's host memory)",
      "DataLoader worker (pid 12847) is killed by signal: Killed", "https://github.com/TorchSSL/TorchSSL/issues/4",
      "fewer DataLoader workers or a smaller prefetch; more host memory (--mem); check dmesg for the OOM killer"),
    S("torchrun-sigkill", "oom", ("exitcode", ": -9"),
      "the rank was killed by SIGKILL: the host's OOM killer most often (a time limit, a preemption or a kill -9 "
      "print the same)",
      "  exitcode  : -9 (pid: 14750)", "https://github.com/lzhxmu/CPPO/issues/6",
      "look for the OOM killer (dmesg, sacct MaxRSS); less host memory per rank (DataLoader workers, "
      "loading the model once per node), or more --mem", weak=True),
    S("deepspeed-sigkill", "oom", ("exits with return code = -9",),
      "DeepSpeed's launcher saw a rank killed by SIGKILL: the host's OOM killer most often",
      "'/content/DeepSpeedExamples/applications/DeepSpeed-Chat/output/actor-models/125m'] exits with return code = -9",
      "https://github.com/deepspeedai/DeepSpeed/issues/3232",
      "look for the OOM killer (dmesg); less host memory per rank (ZeRO offload to CPU needs RAM), or more --mem",
      weak=True),
    # torch.multiprocessing.spawn's ProcessExitedException: "process 1 terminated with signal SIGKILL"
    S("spawn-sigkill", "oom", ("terminated with signal SIGKILL",),
      "a spawned rank was killed by SIGKILL: the host's OOM killer most often (a kill -9 prints the same)",
      "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL",
      "https://github.com/Megvii-BaseDetection/YOLOX/issues/76",
      "look for the OOM killer (dmesg); fewer DataLoader workers, less host memory per rank", weak=True),
    S("sigkill", "oom", ("Signal 9 (SIGKILL) received by PID",),
      "the rank was killed by SIGKILL: the host's OOM killer most often (a time limit, a preemption or a kill -9 "
      "print the same)",
      "  traceback : Signal 9 (SIGKILL) received by PID 14750", "https://github.com/lzhxmu/CPPO/issues/6",
      "look for the OOM killer (dmesg, sacct MaxRSS); less host memory per rank, or more --mem", weak=True),
    # --- environment: the software stack or the container ---
    S("nccl-shm", "environment", ("Error while creating shared memory segment",),
      "NCCL could not create its shared-memory segment: /dev/shm is too small (a container's 64 MB default)",
      "include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-250a7cc850ba9298-0-1-3 "
      "(size 9637888)", "https://github.com/NVIDIA/nccl/issues/342",
      "give the container more /dev/shm (docker --shm-size=16g or --ipc=host), or NCCL_SHM_DISABLE=1"),
    S("nccl-shm-extend", "environment", ("NCCL WARN", "failed to extend /dev/shm"),
      "NCCL could not grow its segment in /dev/shm: too small (a container's default)",
      "ubuntu:9621:9691 [6] misc/shmutils.cc:71 NCCL WARN Error: failed to extend /dev/shm/nccl-fjwOOB to 5967876 "
      "bytes", "https://github.com/NVIDIA/nccl-tests/issues/166",
      "give the container more /dev/shm (docker --shm-size=16g or --ipc=host)"),
    S("shm-fallocate", "environment", ("posix_fallocate failed",),
      "no space left in /dev/shm for NCCL's buffers",
      "include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device",
      "https://github.com/NVIDIA/nccl/issues/342",
      "give the container more /dev/shm (docker --shm-size=16g or --ipc=host)"),
    S("shm-bus-error", "environment", ("Unexpected bus error encountered in worker",),
      "a DataLoader worker died of a bus error: /dev/shm is too small (a container's default 64 MB)",
      "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
      "https://github.com/msr-fiddle/pipedream/issues/28",
      "docker --shm-size=16g or --ipc=host (or -v /dev/shm:/dev/shm); or fewer DataLoader workers"),
    S("sigbus", "environment", ("Caught signal 7 (Bus error",),
      "a process died of SIGBUS (a bus error): in a container, /dev/shm too small for NCCL's or the loader's "
      "shared memory",
      "[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)",
      "https://github.com/msr-fiddle/pipedream/issues/76",
      "docker --shm-size=16g or --ipc=host; NCCL_SHM_DISABLE=1 to confirm"),
    # torchrun's failure table for a rank that died of SIGBUS: in a PyTorch job, shared memory (/dev/shm: the
    # DataLoader's and NCCL's) too small, as UCX's and the DataLoader's own bus-error lines above say
    S("torchrun-sigbus", "environment", ("Signal 7 (SIGBUS) received by PID",),
      "a rank died of SIGBUS (a bus error): in a PyTorch job, /dev/shm too small for the DataLoader's or NCCL's "
      "shared memory (a container's 64 MB default, or a node's small tmpfs)",
      "  traceback : Signal 7 (SIGBUS) received by PID 16614",
      "https://github.com/hiyouga/LlamaFactory/issues/2206",
      "df -h /dev/shm on the node; docker --shm-size=16g or --ipc=host, fewer DataLoader workers; NCCL_SHM_DISABLE=1 "
      "to confirm"),
    S("loader-bus-error", "environment", ("DataLoader worker", "killed by signal: Bus error"),
      "a DataLoader worker died of a bus error: /dev/shm is too small (a container's default 64 MB)",
      "RuntimeError: DataLoader worker (pid 325) is killed by signal: Bus error.",
      "https://github.com/msr-fiddle/pipedream/issues/28",
      "docker --shm-size=16g or --ipc=host (or -v /dev/shm:/dev/shm); or fewer DataLoader workers"),
    S("sh-not-found", "environment", ("/bin/sh: ", ": not found"),
      "a command the job runs is not installed where it runs (not on the PATH of that node or container)",
      "/bin/sh: 1: torchrun: not found", "https://github.com/hiyouga/LlamaFactory/issues/5217",
      "install it in the job's environment on every node (or call it by its path: python -m torch.distributed.run)"),
    # the batch script itself, which slurmd wrote to the node's spool (SlurmdSpoolDir/jobN/slurm_script), is gone
    # or cannot be executed there: that node's spool or /tmp (full, cleaned, another mount), or the script's #!
    # interpreter missing on it: the node first, a candidate (its slurmd log decides)
    # dash (Debian's and Ubuntu's /bin/sh) running a script written for bash: "SCRIPT: LINE: source: not found"
    S("sh-source-not-found", "environment", ("source: not found",),
      "a bash script ran under sh (dash): `source` is bash's, so the environment it sets up was never loaded",
      "run.sh: 18: source: not found", "https://github.com/sgl-project/sglang/issues/3512",
      "run it with bash (`bash run.sh`, or `#!/bin/bash` as its first line), or use `.` in place of `source`"),
    # a module the job asked for that the site's module system does not have: the job then lacks what it loads.
    # A candidate only: profiles print such errors for stale module names in jobs that fail of something else
    S("lmod-error", "environment", ("Lmod has detected the following error",),
      "a `module load` failed (Lmod): the job runs without the software or libraries it asked for",
      "Lmod has detected the following error: The following module(s) are unknown:",
      "https://github.com/hpcugent/vsc_user_docs/issues/440", "module spider NAME on the cluster the job ran on (the "
      "name, its version, the module path: `module use`); a failure later in the log may follow from it",
      weak=True),
    S("modulefile-missing", "environment", ("Unable to locate a modulefile",),
      "a `module load` failed (Environment Modules): the job runs without the software it asked for",
      "ModuleCmd_Load.c(213):ERROR:105: Unable to locate a modulefile for 'openmpi/4.1.1'",
      "https://github.com/cea-hpc/modules (its ERROR:105 message)", "module avail on the node; the name and version",
      weak=True),
    S("slurm-script-missing", "node", ("execve(): ", "slurm_script", "No such file or directory"),
      "Slurm could not execute the batch script it wrote on the node (its spool directory, or the script's #! "
      "interpreter, missing there)",
      "slurmstepd: error: execve(): /tmp/slurmd/job00089/slurm_script: No such file or directory",
      "tests/fixtures/why/heldout/SOURCES.md (arjuna-46: a GPU node's Slurm tmp directory)",
      "the node's slurmd log and SlurmdSpoolDir (df, its mount); the script's first line (#!) exists on the node; "
      "resubmit without the node meanwhile (--exclude)",
      node=re.compile(r"slurmstepd-" + _NODE + r": "), weak=True),
    S("execve-missing", "environment", ("execve(): ", "No such file or directory"),
      "Slurm could not start the task's command: it is not installed where the task runs (not on that node's PATH)",
      "slurmstepd: error: execve(): torchrun: No such file or directory",
      "https://github.com/CSCfi/pytorch-ddp-examples/issues/1",
      "install it in the job's environment on every node (module load, the container), or call it by its path"),
    # round 8: Open MPI's daemon is not on the remote nodes' PATH (a non-interactive ssh shell without the module)
    S("orted-not-found", "environment", ("orted: command not found",),
      "mpirun could not start its daemon on a node: Open MPI is not on that node's PATH for a non-interactive "
      "shell", "bash: orted: command not found", "https://github.com/open-mpi/ompi-www (the FAQ: orted not found)",
      "mpirun --prefix $MPI_HOME (or the module in ~/.bashrc before its interactive-only guard)"),
    S("prted-not-found", "environment", ("prted: command not found",),
      "mpirun (Open MPI 5) could not start its daemon on a node: Open MPI is not on that node's PATH",
      "bash: prted: command not found", "https://github.com/open-mpi/ompi (prte's daemon)",
      "mpirun --prefix $MPI_HOME (or the module in ~/.bashrc before its interactive-only guard)"),
    S("command-not-found", "environment", (": command not found",),
      "a shell could not find a command (a module or a tool a profile script calls is often harmless; the launcher "
      "or the script itself is not)", "sbatch: command not found",
      "https://github.com/p-lambda/incontext-learning/issues/4",
      "see which command: the launcher's (install it on every node) or a profile line's (harmless)", weak=True),
    S("ninja-build-failed", "environment", ("ninja: build stopped",),
      "a C++/CUDA extension failed to compile at run time (the CUDA toolkit or compiler does not fit torch)",
      "  ninja: build stopped: subcommand failed.", "https://github.com/ashawkey/torch-ngp/issues/66",
      "build the extension once where the job runs (the same CUDA toolkit as torch.version.cuda, a supported gcc), "
      "or install a prebuilt wheel"),
    # torch.utils.cpp_extension's JIT build (DeepSpeed's ops, apex, flash-attn): its own failure line, and the
    # ninja call it wraps in a CalledProcessError (a launcher-like wrapper elsewhere, here the build's exit)
    S("extension-build-failed", "environment", ("Error building extension",),
      "a C++/CUDA extension failed to compile at run time (the CUDA toolkit or compiler does not fit torch)",
      "RuntimeError: Error building extension 'fused_adam'", "https://github.com/deepspeedai/DeepSpeed/issues/6892",
      "build the op ahead (DS_BUILD_FUSED_ADAM=1 pip install deepspeed) where the job runs, with the CUDA toolkit of "
      "torch.version.cuda and a supported gcc; the compiler's error above the line says what failed"),
    S("ninja-jit-failed", "environment", ("Command '['ninja', '-v']' returned non-zero exit status",),
      "a C++/CUDA extension failed to compile at run time (torch's JIT build: ninja exited non-zero)",
      "[rank1]: subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
      "https://github.com/deepspeedai/DeepSpeed/issues/6892",
      "build the op ahead where the job runs (the CUDA toolkit of torch.version.cuda, a supported gcc); the "
      "compiler's error above the line says what failed"),
    S("nvcc-failed", "environment", ("error: command '", "nvcc' failed"),
      "nvcc failed to build an extension (the CUDA toolkit, the GPU architecture or the compiler)",
      "error: command '/usr/local/cuda/bin/nvcc' failed with exit status 4",
      "https://github.com/GOATmessi8/RFBNet/issues/74",
      "the CUDA toolkit that matches torch.version.cuda, TORCH_CUDA_ARCH_LIST for the node's GPUs, a supported gcc"),
    S("cuda-version-mismatch", "environment", ("mismatches the version that was used to compile",),
      "the CUDA toolkit found differs from the one torch was built with (an extension cannot be built against it)",
      "The detected CUDA version (11.8) mismatches the version that was used to compile",
      "https://github.com/icip-cas/AutoAlign/issues/25",
      "load the CUDA toolkit of torch.version.cuda (module load, CUDA_HOME), or install the torch built for yours"),
    S("torchvision-cuda-mismatch", "environment", ("were compiled with different CUDA",),
      "two packages of the job were built for different CUDA versions (torch and torchvision)",
      "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA versions. PyTorch has "
      "CUDA Version=11.3 and torchvision has CUDA Version=11.7.",
      "https://github.com/mathmanu/edgeai-torchvision/issues/18",
      "install the torchvision (torchaudio, ...) built for the same torch and CUDA (the same --index-url)"),
    S("driver-too-old", "environment", ("NVIDIA driver on your system is too old",),
      "the node's NVIDIA driver is older than the CUDA torch was built for",
      "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver "
      "by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx",
      "https://github.com/lllyasviel/Fooocus/issues/1313",
      "a torch built for an older CUDA (the driver's: nvidia-smi's 'CUDA Version'), or a newer driver on the node"),
    S("cuda-driver-insufficient", "environment", ("CUDA driver version is insufficient",),
      "the node's NVIDIA driver is older than the CUDA runtime the job uses (or the container sees no driver)",
      "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version at "
      "/pytorch/aten/src/THC/THCGeneral.cpp:74", "https://github.com/microsoft/human-pose-estimation.pytorch/issues/23",
      "a torch built for the driver's CUDA (nvidia-smi's 'CUDA Version'), or a newer driver; in a container: --gpus"),
    S("undefined-symbol", "environment", ("undefined symbol: ",),
      "a library is older or newer than what was built against it (e.g. a libnccl older than torch's)",
      "ImportError: /root/miniconda3/envs/py310/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined "
      "symbol: ncclCommInitRankScalable", "https://github.com/PaddlePaddle/Paddle/issues/74792",
      "use the NCCL that torch ships (unset LD_LIBRARY_PATH/LD_PRELOAD entries that put another libnccl first)"),
    S("no-kernel-image", "environment", ("no kernel image is available",),
      "the binary was not built for this GPU's architecture (torch, an extension, or a wheel)",
      "RuntimeError: CUDA error: no kernel image is available for execution on the device",
      "https://github.com/facebookresearch/detectron2/issues/235",
      "install a build for this GPU (clusterdoc check: arch), or rebuild with TORCH_CUDA_ARCH_LIST for it"),
    S("nccl-no-socket-if", "environment", ("no socket interface found",),
      "NCCL found no usable network interface (NCCL_SOCKET_IFNAME names one that is not there)",
      "Bootstrap : no socket interface found", "https://github.com/EvolvingLMMs-Lab/open-r1-multimodal/issues/7",
      "set NCCL_SOCKET_IFNAME to an interface every node has (ip -br addr), or unset it"),
    S("nccl-addr-family", "environment", ("Address family not supported",),
      "NCCL's socket has an address family the node does not have (IPv6 vs IPv4, or no interface)",
      "include/socket.h:344 WARN Socket creation failed : Address family not supported by protocol",
      "https://github.com/NVIDIA/nccl/issues/210",
      "NCCL_SOCKET_IFNAME to an interface with an IPv4 address on every node (or NCCL_SOCKET_FAMILY=AF_INET)"),
    S("address-in-use", "environment", ("Address already in use",),
      "the rendezvous port is taken (another job on the node uses the same MASTER_PORT)",
      "RuntimeError: Address already in use", "https://github.com/open-mmlab/mmdetection/issues/2129",
      "a free port per job (MASTER_PORT / --master_port; torchrun --rdzv-endpoint=HOST:0 picks one)"),
    # torch 2.x's form of the same (the c10d store's socket): "... name: EADDRINUSE, message: address already in use"
    S("address-in-use-c10d", "environment", ("EADDRINUSE",),
      "the rendezvous port is taken (another job or a leftover process on the node holds MASTER_PORT)",
      "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
      "port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
      "https://github.com/pytorch/pytorch (torch/csrc/distributed/c10d/socket.cpp)",
      "a free port per job (MASTER_PORT / --master_port; torchrun --rdzv-endpoint=HOST:0 picks one); a leftover "
      "process from the last run: lsof -i :PORT"),
    S("duplicate-gpu", "environment", ("Duplicate GPU detected",),
      "two ranks were given the same GPU: the launch or placement gives every rank of a node the same device",
      "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 10",
      "https://github.com/verl-project/verl/issues/161",
      "one GPU per rank: torch.cuda.set_device(LOCAL_RANK) before init, CUDA_VISIBLE_DEVICES per rank, the "
      "launcher's GPUs per node equal to its ranks per node"),
    S("nccl-socket-truncated", "desync", ("NET/Socket", "message truncated"),
      "NCCL received a bigger message than the rank expected: the ranks called collectives with different sizes "
      "(or their NCCL settings differ)",
      "transport/net_socket.cc:424 NCCL WARN NET/Socket : peer 192.168.161.30<59210> message truncated :",
      "https://github.com/NVIDIA/nccl/issues/626",
      "make every rank call the same collectives with the same sizes; the same NCCL_* environment on every node"),
    S("collective-mismatch", "desync", ("Detected mismatch between collectives",),
      "the ranks called different collectives (or one with different shapes): TORCH_DISTRIBUTED_DEBUG caught it",
      "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running inconsistent collective: "
      "CollectiveFingerPrint(OpType=ALLGATHER, TensorShape=[41, 256, 8, 8, 8], ...",
      "https://github.com/xljh0520/JOTR/issues/4",
      "make every rank call the same collectives with the same shapes (uneven last batch: drop_last=True)"),
    S("nccl-mismatched", "desync", ("Mismatched collective detected",),
      "NCCL saw ranks call different collectives (or with different sizes)",
      "init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank "
      "39. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs",
      "https://github.com/NVIDIA/nccl/issues/296",
      "make every rank call the same collectives in the same order with the same sizes"),
    # Horovod's coordinator checks that every rank submitted the same op (its controller's "Mismatched ...: One
    # rank ..., but another rank ..." errors): the ranks disagree, as torch's DETAIL check says it
    S("horovod-mismatch", "desync", ("Mismatched ", "One rank "),
      "the ranks submitted different collectives for the same tensor (Horovod's check: shapes, types, op or device "
      "differ between ranks)",
      "tensorflow.python.framework.errors_impl.FailedPreconditionError: Mismatched ALLREDUCE CPU/GPU device "
      "selection: One rank specified device GPU, but another rank specified device CPU.",
      "https://github.com/horovod/horovod/issues/398 (horovod#1559: Mismatched ALLREDUCE tensor shapes)",
      "make every rank build the same graph and tensors (the same shapes, dtypes and devices, in the same order)"),
    # --- round 7: the ranks' disagreement as each library's own check states it (a RuntimeError or an abort that
    # carries it is the ranks' desync, not the code's bug nor a hang) ---
    S("torch-collectives-differ", "desync", ("Collectives differ in the following aspects",),
      "the ranks called different collectives (TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprint check lists how they "
      "differ: op, shapes, dtypes or sequence)",
      "Collectives differ in the following aspects: \t Op type: ALLREDUCEvs BROADCAST",
      "https://github.com/pytorch/pytorch (torch/csrc/distributed/c10d/ProcessGroupWrapper.cpp)",
      "make every rank call the same collectives in the same order with the same shapes"),
    S("ddp-param-sizes", "desync", ("of the same param in process",),
      "DDP found a parameter of another size (or stride) on this rank than on rank 0: the ranks built different "
      "models",
      "RuntimeError: [1]: params[0] in this process with sizes [96, 32] appears not to match sizes of the same "
      "param in process 0.", "https://github.com/pytorch/pytorch (torch/csrc/distributed/c10d/comm.cpp, "
      "verify_params_across_processes)",
      "build the same model on every rank (the same config, vocab size, layers added on rank 0 only)"),
    S("ddp-zero-params", "desync", ("DDP expects same model across all ranks", "inconsistent 0 params"),
      "DDP's parameter-count check read 0 parameters from a rank: that rank never joined the check (behind in its "
      "data setup, or a backend that passed no data), more often than a model without parameters",
      "RuntimeError: DDP expects same model across all ranks, but Rank 1 has 338 params, while rank 0 has "
      "inconsistent 0 params.", "https://github.com/pytorch/pytorch (torch/csrc/distributed/c10d/comm.cpp)",
      "see what the rank with 0 params did at that time (its log); then whether the ranks' models differ",
      weak=True),
    S("ddp-param-count", "desync", ("DDP expects same model across all ranks",),
      "DDP found a different number of parameters on two ranks: the ranks built different models",
      "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 162 params, while rank 1 has "
      "inconsistent 161 params.", "https://github.com/pytorch/pytorch (torch/csrc/distributed/c10d/comm.cpp, "
      "_verify_param_shape_across_processes)",
      "build the same model on every rank (a layer created under `if rank == 0`, a different config per node)"),
    S("deepspeed-rank-disagreement", "desync", ("disagreement between rank0 and rank",),
      "DeepSpeed's check that every rank holds the same values (ZeRO's parameter and partition counts) failed: "
      "the ranks disagree",
      "RuntimeError: disagreement between rank0 and rank3: rank0: [1024, 4], rank3: [1020, 4]",
      "https://github.com/deepspeedai/DeepSpeed (deepspeed/runtime/zero/utils.py, assert_ints_same_as_other_ranks)",
      "make every rank build the same model and the same DeepSpeed config (frozen parameters, the ZeRO stage)"),
    S("gloo-size-mismatch", "desync", ("op.preamble.length <= op.nbytes",),
      "gloo received a bigger message than the rank expected: the ranks called collectives with different sizes "
      "(or different collectives at the same time)",
      "what():  [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] op.preamble.length <= "
      "op.nbytes. 6232 vs 4", "https://github.com/facebookincubator/gloo (gloo/transport/tcp/pair.cc)",
      "make every rank call the same collectives in the same order with the same sizes (an uneven last batch)"),
    S("mpi-truncate", "desync", ("MPI_ERR_TRUNCATE",),
      "MPI received a message bigger than the receive buffer: the sender and receiver disagree on its size "
      "(or a receive matched another message)",
      "[udp012400uds:91098] *** MPI_ERR_TRUNCATE: message truncated", "https://github.com/salilab/imp/issues/758 "
      "(SGpp/DisCoTec#10, 3dem/relion#1052 the same: Open MPI's error class)",
      "make the receive's count and the send's agree (a tag or source that matches another message)"),
    S("mpich-truncate", "desync", ("Message truncated", "buffer size is"),
      "MPI received a message bigger than the receive buffer: the sender and receiver disagree on its size",
      "MPIDI_CH3U_Request_unpack_uebuf(611): Message truncated; 16 bytes received but buffer size is 8",
      "https://github.com/m-a-d-n-e-s-s/madness/issues/113 (pmodels/mpich#879: MPICH's own text)",
      "make the receive's count and the send's agree (a tag or source that matches another message)"),
    S("ddp-unused-params", "code", ("Expected to have finished reduction in the prior iteration",),
      "DDP: the model has parameters that got no gradient (unused in the loss)",
      "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This "
      "error indicates that your module has parameters that were not used i",
      "https://github.com/open-mmlab/mmagic/issues/419",
      "DistributedDataParallel(find_unused_parameters=True), or make every output take part in the loss"),
    S("device-assert", "code", ("device-side assert triggered",),
      "a CUDA kernel's assertion failed: an index out of range (labels >= classes, bad embedding ids)",
      "RuntimeError: CUDA error: device-side assert triggered",
      "https://github.com/huggingface/pytorch-image-models/issues/1077",
      "rerun with CUDA_LAUNCH_BLOCKING=1 (or on CPU) to see the index; check labels against num_classes"),
    S("kernel-assert", "code", ("Assertion `", "` failed."),
      "a CUDA kernel's assertion failed: an index out of range",
      "/pytorch/aten/src/ATen/native/cuda/ScatterGatherKernel.cu:276: operator(): block: [0,0,0], thread: [26,0,0] "
      "Assertion `idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\"` failed.",
      "https://github.com/huggingface/pytorch-image-models/issues/1077",
      "rerun with CUDA_LAUNCH_BLOCKING=1 (or on CPU) to see the index; check labels against num_classes"),
    S("mpi-abort", "code", ("MPI_ABORT was invoked on rank",),
      "a rank called MPI_Abort: the application stopped itself on an error it detected (its own message is above)",
      "MPI_ABORT was invoked on rank 160 in communicator MPI_COMM_WORLD", "https://github.com/davegill/wrf-coop/issues/17",
      "read that rank's own output before the abort (the model's FATAL/ERROR line: input, configuration, numerics)",
      weak=True),
    S("fortran-sigsegv", "code", ("Program received signal SIGSEGV",),
      "a rank crashed with a segmentation fault in the application (its backtrace names the routine)",
      "  76: Program received signal SIGSEGV: Segmentation fault - invalid memory reference.",
      "https://github.com/E3SM-Project/E3SM/issues/7277",
      "the routine in the backtrace (a debug build: -g -fcheck=all; the input or configuration it reads)"),
    # Intel Fortran's runtime (ifort, ifx) prints its own line and a traceback of the routines
    S("ifort-sigsegv", "code", ("SIGSEGV, segmentation fault occurred",),
      "a rank crashed with a segmentation fault in the application (its traceback names the routine and line)",
      "2680: forrtl: severe (174): SIGSEGV, segmentation fault occurred",
      "https://github.com/E3SM-Project/E3SM/issues/3085",
      "the routine in the traceback after it (a debug build: -g -traceback -check all; the input it reads there)"),
    S("srun-task-segv", "code", ("srun: error: ", ": Segmentation fault"),
      "a task crashed with a segmentation fault (srun names it and its node)",
      "srun: error: frontier06754: task 11634: Segmentation fault",
      "https://github.com/E3SM-Project/scream/issues/2519",
      "that task's own output (srun --label) for its backtrace; a debug build shows where",
      node=re.compile(r"srun: error: " + _NODE + r": task")),
    S("mpirun-sigkill", "oom", ("mpirun noticed that process rank", "exited on signal 9"),
      "mpirun saw a rank killed by SIGKILL: the host's OOM killer most often",
      "mpirun noticed that process rank 0 with PID 21183 on node host01 exited on signal 9 (Killed).",
      "https://github.com/open-mpi/ompi/issues/2661",
      "look for the OOM killer on that node (dmesg); less memory per rank or more nodes",
      node=re.compile(r"on node (\S{1,128}?)\.? exited"), weak=True),
    # LSF's job report and Slurm's srun print a SIGKILL as exit code 137 (128 + 9), SGE's qacct as exit_status 137
    S("exit-code-137", "oom", ("Exited with exit code 137",),
      "the job's process exited with 137: killed by SIGKILL (the OOM killer, a memory limit, or a kill -9)",
      "Exited with exit code 137.",
      "https://github.com/cBio/cbio-cluster/issues/232 (the OOM killer; LSF and srun print the same)",
      "the node's dmesg for the OOM killer; the job's memory (bjobs -l MAX MEM, sacct -o MaxRSS)", weak=True),
    S("sge-exit-137", "oom", ("exit_status", " 137"),
      "the job's process exited with 137: killed by SIGKILL (h_vmem/h_rss exceeded, the OOM killer, or qdel)",
      "exit_status  137", "https://github.com/marbl/canu/issues/1438 (SGE's queue_conf(5): h_vmem exceeded -> SIGKILL)",
      "qacct -j JOB: maxvmem against the h_vmem asked; the node's dmesg", weak=True),
    S("no-module", "environment", ("No module named ",),
      "a module could not be imported: a package missing from this environment, or the script run from another folder",
      "Invalid MIT-MAGIC-COOKIE-1 key/usr/bin/python3: No module named run",
      "https://github.com/clvrai/skill-chaining/issues/4",
      "install the package in the job's environment (the same on every node), or run from the folder that has it"),
    S("illegal-access", "code", ("an illegal memory access was encountered",),
      "a CUDA kernel read or wrote out of bounds (the code or an extension; an XID 13/31 names the node rarely)",
      "RuntimeError: CUDA error: an illegal memory access was encountered",
      "https://github.com/zai-org/CodeGeeX/issues/160",
      "rerun with CUDA_LAUNCH_BLOCKING=1; if it moves between nodes, check their XIDs (clusterdoc check)"),
    S("unspecified-launch-failure", "code", ("unspecified launch failure",),
      "a CUDA kernel failed without saying why: the code, or the GPU (XID 13/31/43 in the node's kernel log)",
      "RuntimeError: CUDA error: unspecified launch failure", "https://github.com/ultralytics/yolov5/issues/1752",
      "clusterdoc check on the node (its XIDs decide: hardware or the code); rerun with CUDA_LAUNCH_BLOCKING=1",
      weak=True),
    # --- network: the link itself ---
    S("no-route", "network", ("No route to host",),
      "a rank could not reach another's address: the route or the interface NCCL picked is wrong",
      "socketStartConnect: Connect to 192.168.19.14<52822> failed : No route to host",
      "https://github.com/hkproj/pytorch-transformer-distributed/issues/1",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on; "
      "clusterdoc check (net) on the nodes"),
    S("ib-completion-error", "network", ("NET/IB", "completion", "error 12"),
      "InfiniBand gave up on a transfer (status 12: transport retry counter exceeded): a link, a port or a peer HCA",
      "transport/net_ib.cu:781 WARN NET/IB : Got completion with error 12, opcode 1, len0, vendor err 129",
      "https://github.com/horovod/horovod/issues/147",
      "clusterdoc check --perf on the nodes (ibstat, link errors); NCCL_IB_HCA to the working ports"),
    S("ib-completion-status-12", "network", ("Got completion from peer", "status=12"),
      "InfiniBand gave up on a transfer (status 12: transport retry counter exceeded, vendor err 129): the link, "
      "a port, the peer's HCA or the RoCE/routing between the two addresses",
      "kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer "
      "10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid "
      "fd00:1148:9000:5000:4:200:3:ff22 remoteGidsfd00:1148:9000:5000:4:200:3:ff1f",
      "https://github.com/NVIDIA/nccl/issues/1405",
      "clusterdoc check --perf on the two nodes (ibstat, link errors, the routes between the addresses the line "
      "names); NCCL_IB_HCA to the working ports"),
    S("ib-async-fatal", "network", ("NET/IB", "async", "error"),
      "the InfiniBand adapter reported a fatal event (a catastrophic error of the HCA, a queue pair's fatal "
      "access or transport error): the link or the adapter of the node that printed it",
      "container-e275-1553839402050-12124-01-000057:815:864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got "
      "async event : local catastrophic error", "https://github.com/NVIDIA/nccl/issues/230",
      "clusterdoc check --perf on that node (ibstat, the port's error counters, dmesg for mlx5); resubmit without it "
      "meanwhile (--exclude)"),
    S("ib-completion-any", "network", ("NET/IB", "completion", "with error"),
      "InfiniBand failed a transfer (a work completion with an error status: the link, a port, the peer's HCA, "
      "the GID/RoCE setup between the two addresses)",
      "H100-2:19989:20082 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer fe80::966d:ae03:"
      "8b:df78%ib0<53249> with error 4, opcode 32564, len 32564, vendor err 81 (Send)",
      "https://github.com/NVIDIA/nccl/issues/928",
      "clusterdoc check --perf on the nodes (ibstat, ibv_devinfo, link errors); NCCL_IB_HCA and NCCL_IB_GID_INDEX"),
    S("ucx-unreachable", "network", ("Destination is unreachable",),
      "UCX found no transport to reach another rank's address (an interface the other host cannot reach: a docker "
      "bridge, the wrong NIC)",
      "pml_ucx.c:424  Error: ucp_ep_create(proc=3) failed: Destination is unreachable",
      "https://github.com/NVIDIA/nccl-tests/issues/180 (and deepops-1199)",
      "pin the interface (UCX_NET_DEVICES, mpirun -x UCX_TLS / --mca btl_tcp_if_exclude docker0,lo)"),
    S("name-not-resolved", "network", ("Name does not resolve",),
      "a host name did not resolve (DNS: the master's or a peer's name is not known where this ran)",
      "nslookup: can't resolve 'dlc1dwuhvtro4c27-master-0': Name does not resolve",
      "https://github.com/modelscope/ms-swift/issues/6368",
      "use an address the nodes resolve (MASTER_ADDR as an IP), or wait for the cluster's DNS entry"),
    S("ucx-ib-retry-exceeded", "network", ("Transport retry count exceeded",),
      "InfiniBand gave up on a transfer (UCX: transport retry count exceeded, NCCL's status 12): the link, a "
      "port, or the peer's adapter",
      "[r1i6n33:1546795:0:1546795] ib_mlx5_log.c:139  Transport retry count exceeded on mlx5_0:1/IB (synd 0x15 "
      "vend 0x81 hw_synd 0/0)", "https://github.com/hemelb-codes/hemelb/issues/813",
      "clusterdoc check --perf on the node (ibstat, link errors) and its peers; UCX_NET_DEVICES to the working ports",
      node=re.compile(r"\[" + _NODE + r":\d{1,10}:")),
    # a fabric's completion error in the words of the other NCCL network plugins: libfabric's (NET/OFI: EFA,
    # Slingshot/CXI) "completed with error" names a transfer the fabric could not deliver, as IB's status 12 does
    S("ofi-completion-error", "network", ("NET/OFI", "completed with error"),
      "the fabric (libfabric: EFA, Slingshot) could not deliver a transfer (UNDELIVERABLE, EHOSTUNREACH): a link, "
      "a port, or the peer's endpoint",
      "NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0",
      "https://github.com/NVIDIA/nccl/issues/1928",
      "clusterdoc check --perf on the nodes (fi_info, the fabric's port counters: cxi_stat, the EFA's); "
      "FI_PROVIDER and NCCL_NET to the plugin the nodes share"),
    # bringing a queue pair up to its peer (INIT -> RTR -> RTS) failed: the addressing between the two ports (the
    # GID index, RoCE's routing or VLAN, a rail the peer is not on), whatever errno the verbs call returns
    S("ib-modify-qp", "network", ("ibv_modify_qp failed",),
      "InfiniBand/RoCE could not connect a queue pair to its peer (ibv_modify_qp): the addressing between the two "
      "ports (the GID index, RoCE routing, a rail the peer is not on)",
      "NCCL WARN Call to ibv_modify_qp failed with error Connection timed out",
      "https://github.com/NVIDIA/nccl/issues/769 (and nccl#2013's rail-only fabric: \"failed with 110\")",
      "NCCL_IB_GID_INDEX (show_gids: the RoCE v2 index), NCCL_IB_HCA to the ports that reach each other; "
      "clusterdoc check --perf between the two nodes"),
    # gloo could not connect every pair of ranks (its TCP mesh): the interface it picked does not reach the others
    S("gloo-full-mesh", "network", ("connectFullMesh failed",),
      "gloo could not connect its ranks to each other (its TCP mesh): the interface it picked does not reach the "
      "other nodes (a container's bridge, another subnet, a firewall)",
      "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
      "https://github.com/vllm-project/vllm/issues/5094 (and gpustack#2125, two docker nodes)",
      "set GLOO_SOCKET_IFNAME (and NCCL_SOCKET_IFNAME) to the interface the nodes reach each other on; containers: "
      "--network=host"),
    S("link-local-connect", "network", ("Connect to 169.254.",),
      "NCCL connected to a link-local address (169.254.x.x): it picked an interface the other node cannot reach",
      "socketStartConnect: Connect to 169.254.0.1<40815> failed : Software caused connection abort",
      "https://github.com/verl-project/verl/issues/726",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on"),
    S("link-local-connect6", "network", ("Connect to fe80:",),
      "NCCL connected to an IPv6 link-local address (fe80::): it picked an interface the other node cannot reach "
      "(a container's veth, docker0)",
      "NCCL WARN Connect to fe80::a480:7fff:fecf:1ed9%13<45166> failed : Network is unreachable",
      "https://github.com/Oneflow-Inc/DLPerf (its report's NCCL troubleshooting section)",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on"),
    S("net-unreachable", "network", ("Network is unreachable",),
      "a rank could not reach another's address (no route on the interface NCCL picked: a link-local fe80:: or a "
      "container bridge address, or a fabric port down)",
      "dgxh100-3:225140:225355 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is "
      "unreachable", "https://github.com/NVIDIA/nccl-tests/issues/185",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on; "
      "clusterdoc check (net) on the nodes"),
    S("nccl-no-net", "environment", ("Could not find NET with id",),
      "NCCL's topology has no network device it can use for this path (NIC merging of NCCL 2.26, or a container "
      "that does not see the node's NICs)",
      "NCCL WARN Could not find NET with id 0", "https://github.com/NVIDIA/nccl/issues/1748",
      "use the NCCL torch ships (2.27+ fixes the merge), or NCCL_NET_MERGE_LEVEL=LOC; give the container the NICs"),
    # --- code: the script's own arguments ---
    S("argparse-unrecognized", "code", ("error: unrecognized arguments",),
      "the script's argument parser rejected an argument (a launcher passes --local-rank/--local_rank, or a typo)",
      "main.py: error: unrecognized arguments: --local-rank=0",
      "https://github.com/skycrapers/TecoGAN-PyTorch/issues/31",
      "accept the argument the launcher passes (torchrun sets LOCAL_RANK in the environment; "
      "torch.distributed.launch passes --local-rank), or fix the command line"),
    S("argparse-required", "code", ("error: the following arguments are required",),
      "the script's argument parser is missing a required argument",
      "train.py: error: the following arguments are required: 0",
      "https://github.com/megvii-research/NAFNet/issues/112",
      "pass the argument on the command line after the script's name (launcher options go before it)"),
    S("argparse-invalid", "code", (": error: argument ",),
      "the command line has an argument its parser rejects (a value of the wrong type, an unknown choice, a variable "
      "left unexpanded)",
      "main/0 torchrun: error: argument --node-rank/--node_rank: invalid int value: '$AWS_BATCH_JOB_NODE_INDEX'",
      "https://github.com/meta-pytorch/torchx/pull/759",
      "fix the value on the command line (a shell variable must be expanded where the command is built)"),
    S("python-no-script", "code", ("can't open file '", "No such file or directory"),
      "the interpreter could not open the script it was told to run: the command names a file that is not there",
      "/usr/bin/python3: can't open file 'train_jonas.py': [Errno 2] No such file or directory",
      "https://github.com/fdbtrs/IDiff-Face/issues/6 (and ROMP-230: a module given as a file name)",
      "fix the script's path in the launch command (a module is run with python -m, or torchrun -m)"),
    S("ompi-tcp-connect", "network", ("unable to complete a TCP connection",),
      "Open MPI's processes could not reach each other over TCP (a firewall, or an interface the other host cannot "
      "reach: containers on different hosts)",
      "A process or daemon was unable to complete a TCP connection", "https://github.com/open-mpi/ompi/issues/12103",
      "open the ports between the hosts (or the containers' network: --network host), and pin the interface "
      "(mpirun --mca btl_tcp_if_include / oob_tcp_if_include)"),
    S("ssh-no-auth", "environment", ("No authentication methods available",),
      "the launcher could not log in to another node over SSH (no key set up between the nodes)",
      "Error: failed to run torchrun --nproc_per_node=4 --nnodes=2 --node_rank=1 --rdzv_backend=c10d "
      "--rdzv_endpoint=ip:29501 --rdzv_id=colossalai-default-job train.py --strategy colossalai_zero2 on gpu-1648, is "
      "localhost: False, exception: No authentication methods available",
      "https://github.com/hpcaitech/ColossalAI/issues/3066",
      "passwordless SSH between the nodes (clusterdoc check tests it), or launch each node's torchrun yourself",
      node=re.compile(r" on " + _NODE + r", is localhost")),
    S("ssh-publickey", "environment", ("Permission denied (publickey",),
      "the launcher could not log in to another node over SSH (its key is not accepted there)",
      "localhost: jiaming@localhost: Permission denied (publickey,password).",
      "https://github.com/deepspeedai/DeepSpeed/issues/5709",
      "passwordless SSH between the nodes (ssh-copy-id; clusterdoc check tests it), or launch each node yourself"),
    # paramiko's (ColossalAI's and fabric-based launchers') SSH client: the key it was given is not one it can use
    S("ssh-key-invalid", "environment", ("not a valid RSA private key file",),
      "the launcher could not log in to another node over SSH: its private key is in a format its SSH client "
      "(paramiko) cannot read (an OpenSSH-format or ed25519 key where RSA PEM is expected)",
      "Error: failed to run torchrun --nproc_per_node=2 --nnodes=2 --node_rank=1 --master_addr=192.168.1.11 "
      "--master_port=29508 pretrain.py on 192.168.1.12, is localhost: False, exception: not a valid RSA private key "
      "file", "https://github.com/hpcaitech/ColossalAI/issues/5213",
      "a PEM RSA key (ssh-keygen -t rsa -m PEM) in ~/.ssh/id_rsa, its public half in the other nodes' "
      "authorized_keys; ssh NODE true from the launching node",
      node=re.compile(r" on " + _NODE + r", is localhost")),
    # the MPI library and the launcher do not speak the same process-management interface (PMI): a direct launch
    # by srun of an MPI built without Slurm's PMI (or the wrong --mpi=), a PMIx missing a component. Open MPI's help
    # texts and the PMI libraries' own lines
    S("pmi-init-failed", "environment", ("pmi2_init failed",),
      "the MPI library could not start under the launcher: the process-management interface (PMI2) srun offers is "
      "not the one the MPI was built for",
      "PMI2_Init failed to intialize.  Return code: 1", "tests/fixtures/why/heldout/SOURCES.md (arjuna-172)",
      "srun --mpi=list and the MPI's build (ompi_info | grep -i pmi): launch with the matching --mpi=pmix|pmi2, or "
      "through mpirun inside the allocation", lower=True),
    S("pmix-init-failed", "environment", ("pmix_init failed",),
      "the MPI library could not start: PMIx failed to initialise (a component missing or not loadable: munge, a "
      "library path, a PMIx older or newer than the MPI's)",
      "It looks like pmix_init failed for some reason; your parallel process is",
      "https://github.com/open-mpi/ompi/issues/9582",
      "the component the lines after it name (pmix_info; the library path of the PMIx the MPI was built with); "
      "srun --mpi=list", lower=True),
    S("ompi-no-slurm-pmi", "environment", ("not built with SLURM's PMI support",),
      "Open MPI was direct-launched by srun, but it was built without Slurm's PMI support",
      "The application appears to have been direct launched using \"srun\", but OMPI was not built with SLURM's "
      "PMI support and therefore cannot execute.",
      "https://github.com/open-mpi/ompi (Open MPI 4's ess/pmi help text; with PMI2_Init failed in arjuna-172 and "
      "CliMA's FAQ)",
      "launch with mpirun inside the allocation, or an Open MPI built --with-pmix / --with-pmi (srun --mpi=list)"),
    # an MPI that cannot start at all (MPICH's and Open MPI's own init failures: a device/channel, a module, a PMI
    # its launcher does not speak), and Slurm's PMIx plugin failing between the MPI's processes and srun
    S("mpich-init-fatal", "environment", ("Fatal error in ", "MPI_Init"),
      "the MPI library could not start (MPI_Init failed: its channel or device, the process manager it was given, "
      "a module or library it needs on the node)",
      "Fatal error in MPI_Init: Other MPI error, error stack:",
      "https://github.com/jtriley/StarCluster/issues/406",
      "the error stack's last line names what is missing; mpiexec -n 2 hostname, then a hello-world MPI program "
      "with the same mpiexec and module set"),
    S("ompi-init-failed", "environment", ("MPI_INIT failed",),
      "the MPI library could not start (Open MPI's MPI_INIT failed: the lines after it name the component)",
      "It looks like MPI_INIT failed for some reason; your parallel process is",
      "https://github.com/open-mpi/ompi/issues/3144 (GCHP#94, temporal-segment-networks#121: the same help text)",
      "the component named after it (ompi_info); the same mpirun with a hello-world program"),
    S("ompi-pmi2-init", "environment", ("PMI2 failed to initialize",),
      "the MPI library could not start under the launcher: PMI2 did not initialise (srun's --mpi= and the MPI's "
      "build do not match)",
      "\"PMI2 failed to initialize, returning an error code of 14.", "https://github.com/radical-cybertools/"
      "radical.pilot/issues/1085",
      "srun --mpi=list and the MPI's build (ompi_info | grep -i pmi): the matching --mpi=, or mpirun in the "
      "allocation"),
    S("slurm-pmix-plugin", "environment", ("error:", "mpi/pmix"),
      "Slurm's PMIx plugin failed between srun and the MPI's processes (a PMIx or MPI that does not match the "
      "plugin's, or a launch mixing srun and another mpiexec)",
      "[2026-09-08T13:01:38.539] error:  mpi/pmix_v4: _process_server_request: c112-002 [0]: pmixp_server.c:935: "
      "unexpected contrib from c112-003:1, coll->seq=0, seq=0", "https://github.com/pmodels/mpich/issues/7957",
      "launch with one process manager: srun --mpi=pmix with an MPI built for it, or mpiexec alone"),
    S("glibc-version", "environment", ("version `GLIBC", "not found"),
      "a binary needs a newer C library (GLIBC/GLIBCXX) than the node has: built on another system or image",
      "gadget: /lib64/libc.so.6: version `GLIBC_2.14' not found (required by gadget)",
      "https://github.com/gadget-framework/gadget2/issues/18 (a shared cluster; KymoKnot#1 on an HPC cluster)",
      "run it in the image it was built for, or build it on the node's OS (module load gcc for GLIBCXX)"),
    S("loader-shared-lib", "environment", ("error while loading shared libraries", "cannot open shared object file"),
      "the dynamic loader could not load a library the program needs (not on LD_LIBRARY_PATH on this node: a "
      "module not loaded, a container without it)",
      "./build/all_reduce_perf: error while loading shared libraries: libmpi.so.40: cannot open shared object file: "
      "No such file or directory", "https://github.com/NVIDIA/nccl/issues/872 (ArjunaUsers#110: lmp under srun)",
      "ldd on the binary on the node: load the module that provides it, or set LD_LIBRARY_PATH in the job"),
    S("ssh-host-key", "environment", ("Host key verification failed",),
      "the launcher's SSH to another node refused the node's host key (unknown, or changed since a reinstall)",
      "Host key verification failed.", "https://github.com/pmodels/mpich/issues/4712",
      "add the nodes to known_hosts (ssh-keyscan), or ask the admins for the cluster's ssh_known_hosts"),
    S("horovod-stalled", "hang", ("submitted to be reduced, gathered or broadcasted by subset of ranks",),
      "Horovod: some ranks wait in a collective the others have not submitted (a rank late, stuck or dead, or "
      "ranks submitting different tensors): its stalled ops' ready or missing ranks decide",
      "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are "
      "waiting for remainder of ranks for more than 60 seconds.", "https://github.com/horovod/horovod/issues/336",
      "compare the stalled ops' ranks (HOROVOD_TIMELINE shows them): a rank missing from all is late or dead, "
      "ranks ready for different ops submit different tensors", weak=True),
    # --- round 8: environment, as the tools print it (their own messages, from their sources) ---
    # the CUDA runtime's and driver API's own error strings for a driver that does not fit the toolkit or the GPU
    # (cudaGetErrorString / cuGetErrorName: the CUDA Runtime API's cudaError enum)
    S("cuda-driver-mismatch", "environment", ("system has unsupported display driver / cuda driver combination",),
      "the node's display driver and its CUDA driver (libcuda) are of different versions: a driver upgraded "
      "without a reboot, or a container's libcuda that is not the host's",
      "CUDA error: system has unsupported display driver / cuda driver combination",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorSystemDriverMismatch = 803)",
      "nvidia-smi on the node (it says the same); reboot it or load the matching kernel module; in a container, "
      "the host's libcuda (--nv, the NVIDIA container toolkit)"),
    S("cuda-driver-mismatch-name", "environment", ("DRIVER_MISMATCH",),
      "the node's display driver and its CUDA driver (libcuda) are of different versions",
      "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
      "https://github.com/NVIDIA/cuda-python (driver: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803)",
      "nvidia-smi on the node; reboot it or load the matching kernel module"),
    S("cuda-driver-mismatch-rt", "environment", ("cudaErrorSystemDriverMismatch",),
      "the node's display driver and its CUDA driver (libcuda) are of different versions",
      "cudaErrorSystemDriverMismatch",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorSystemDriverMismatch = 803)",
      "nvidia-smi on the node; reboot it or load the matching kernel module"),
    S("cuda-forward-compat", "environment", ("forward compatibility was attempted on non supported HW",),
      "the CUDA forward-compatibility package (a newer libcuda than the driver) is used on a GPU it does not "
      "support (consumer GPUs): the toolkit is newer than the node's driver",
      "RuntimeError: CUDA error: forward compatibility was attempted on non supported HW",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorCompatNotSupportedOnDevice = 804)",
      "a torch/CUDA build for the node's driver (nvidia-smi's CUDA version), or remove the cuda-compat libraries "
      "from LD_LIBRARY_PATH"),
    S("cuda-forward-compat-name", "environment", ("COMPAT_NOT_SUPPORTED_ON_DEVICE",),
      "the CUDA forward-compatibility package is used on a GPU it does not support",
      "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
      "https://github.com/NVIDIA/cuda-python (driver: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804)",
      "a build for the node's driver, or no cuda-compat libraries on LD_LIBRARY_PATH"),
    S("cuda-forward-compat-rt", "environment", ("cudaErrorCompatNotSupportedOnDevice",),
      "the CUDA forward-compatibility package is used on a GPU it does not support",
      "cudaErrorCompatNotSupportedOnDevice",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorCompatNotSupportedOnDevice = 804)",
      "a build for the node's driver, or no cuda-compat libraries on LD_LIBRARY_PATH"),
    S("cuda-ptx-toolchain", "environment", ("PTX was compiled with an unsupported toolchain",),
      "a kernel's PTX was made by a CUDA newer than the node's driver can compile (a JIT build, Triton, a "
      "package built with a newer toolkit)",
      "CUDA error: the provided PTX was compiled with an unsupported toolchain.",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorUnsupportedPtxVersion = 222)",
      "a newer driver on the node, or build with the CUDA the driver supports (nvidia-smi's CUDA version)"),
    S("cuda-ptx-name", "environment", ("UNSUPPORTED_PTX_VERSION",),
      "a kernel's PTX was made by a CUDA newer than the node's driver can compile",
      "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
      "https://github.com/NVIDIA/cuda-python (driver: CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222)",
      "a newer driver on the node, or build with the CUDA the driver supports"),
    S("cuda-ptx-rt", "environment", ("cudaErrorUnsupportedPtxVersion",),
      "a kernel's PTX was made by a CUDA newer than the node's driver can compile",
      "cudaErrorUnsupportedPtxVersion",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorUnsupportedPtxVersion = 222)",
      "a newer driver on the node, or build with the CUDA the driver supports"),
    S("cuda-no-binary", "environment", ("NO_BINARY_FOR_GPU",),
      "the GPU's architecture is not among those the library was built for (no kernel image for it)",
      "CUDA_ERROR_NO_BINARY_FOR_GPU",
      "https://github.com/NVIDIA/cuda-python (driver: CUDA_ERROR_NO_BINARY_FOR_GPU = 209)",
      "a build for this GPU (TORCH_CUDA_ARCH_LIST, a wheel for its CUDA)"),
    S("cuda-no-binary-rt", "environment", ("cudaErrorNoKernelImageForDevice",),
      "the GPU's architecture is not among those the library was built for (no kernel image for it)",
      "cudaErrorNoKernelImageForDevice",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorNoKernelImageForDevice = 209)",
      "a build for this GPU (TORCH_CUDA_ARCH_LIST, a wheel for its CUDA)"),
    S("cuda-insufficient-driver", "environment", ("INSUFFICIENT_DRIVER",),
      "the node's NVIDIA driver is older than the CUDA the program was built with",
      "CUDA_ERROR_INSUFFICIENT_DRIVER",
      "https://github.com/NVIDIA/cuda-python (driver: CUDA_ERROR_INSUFFICIENT_DRIVER = 35)",
      "a build for the node's driver (nvidia-smi's CUDA version), or a newer driver"),
    S("cuda-insufficient-driver-rt", "environment", ("cudaErrorInsufficientDriver",),
      "the node's NVIDIA driver is older than the CUDA the program was built with",
      "cudaErrorInsufficientDriver", "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorInsufficientDriver = 35)",
      "a build for the node's driver (nvidia-smi's CUDA version), or a newer driver"),
    S("torch-no-cuda-build", "environment", ("Torch not compiled with CUDA enabled",),
      "the job's torch is a CPU-only build (pip's default wheel on some platforms, a conda solve): no GPU use",
      "AssertionError: Torch not compiled with CUDA enabled",
      "https://github.com/pytorch/pytorch (torch/cuda/__init__.py: _lazy_init)",
      "install a CUDA build of torch in the job's environment (pip's --index-url for its CUDA)"),
    # a process asked for a GPU beyond those it sees: more ranks per node than visible GPUs (--nproc_per_node,
    # CUDA_VISIBLE_DEVICES, Slurm's --gpus) or a script that pins the GLOBAL rank's GPU on a second node: the
    # environment or the code, the log alone cannot say
    S("cuda-invalid-ordinal", "environment", ("invalid device ordinal",),
      "a process asked for a GPU index it cannot see: more processes per node than visible GPUs "
      "(--nproc_per_node, CUDA_VISIBLE_DEVICES, the job's --gpus), or the script pins the global rank's GPU",
      "RuntimeError: CUDA error: invalid device ordinal",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorInvalidDevice = 101)",
      "compare processes per node with the GPUs each sees (nvidia-smi -L inside the job, echo "
      "$CUDA_VISIBLE_DEVICES); the script should use LOCAL_RANK for its device", weak=True),
    # torch's env:// rendezvous without the launcher's variables: the script was started without torchrun/srun
    # exporting them (torch/distributed/rendezvous.py: _env_error)
    S("torch-env-unset", "environment", ("environment variable ", "expected, but not set"),
      "torch.distributed's env:// rendezvous found no MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE: the script was "
      "started without a launcher that exports them",
      "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable MASTER_ADDR "
      "expected, but not set", "https://github.com/pytorch/pytorch (torch/distributed/rendezvous.py: _env_error)",
      "start it with torchrun (or export them in the job script from Slurm's: MASTER_ADDR=$(scontrol show "
      "hostnames $SLURM_JOB_NODELIST | head -n1), RANK=$SLURM_PROCID, WORLD_SIZE=$SLURM_NTASKS)"),
    # containers that did not start: Apptainer/Singularity's own FATAL line, pyxis (Slurm's enroot plugin), the
    # Docker daemon without the NVIDIA runtime, an OCI runtime's refusal
    S("apptainer-creation-failed", "environment", ("FATAL:", "container creation failed"),
      "Apptainer/Singularity could not create the container (a bind path missing in the image or on the node, its "
      "session or tmp directory, cgroups): the job's command never ran",
      "FATAL:   container creation failed: mount /etc/localtime->/etc/localtime error: while mounting "
      "/etc/localtime: mount source /etc/localtime doesn't exist",
      "https://github.com/apptainer/apptainer (its FATAL message)",
      "the path its message names (--bind, APPTAINER_TMPDIR, the image); run the same exec by hand on the node"),
    S("apptainer-image-open", "environment", ("FATAL:", "could not open image"),
      "Apptainer/Singularity could not open the container image (its path on the node, its format)",
      "FATAL:   could not open image /scratch/img.sif: failed to retrieve path for /scratch/img.sif: lstat "
      "/scratch/img.sif: no such file or directory", "https://github.com/apptainer/apptainer (its FATAL message)",
      "the image's path as the node sees it (its mount), and the image itself (apptainer inspect)"),
    S("pyxis-start-failed", "environment", ("pyxis: container start failed",),
      "pyxis (Slurm's enroot plugin) could not start the task's container: an enroot hook failed (the NVIDIA "
      "hook, a mount); the lines after it print enroot's log",
      "slurmstepd: error: pyxis: container start failed with error code: 1",
      "https://github.com/NVIDIA/pyxis (pyxis_slurmstepd.c)",
      "read enroot's log lines after it ([ERROR] ...); the image and the hooks in /etc/enroot/hooks.d"),
    S("pyxis-exited-early", "environment", ("pyxis: container exited too soon",),
      "pyxis could not start the task's container: it exited at once (the image's entrypoint)",
      "slurmstepd: error: pyxis: container exited too soon", "https://github.com/NVIDIA/pyxis (pyxis_slurmstepd.c)",
      "the image's ENTRYPOINT (pyxis needs a shell in it), enroot's log"),
    S("docker-no-gpu-driver", "environment", ("could not select device driver",),
      "Docker has no GPU runtime on this host (the NVIDIA container toolkit is not installed or configured)",
      "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].",
      "https://github.com/moby/moby (daemon: the device driver lookup for --gpus)",
      "install and configure the NVIDIA container toolkit (nvidia-ctk runtime configure), restart dockerd"),
    S("oci-runtime-failed", "environment", ("OCI runtime ", " failed"),
      "the container runtime (runc and its hooks: the NVIDIA hook, a mount) could not create or start the "
      "container: the job's command never ran",
      "docker: Error response from daemon: OCI runtime create failed: container_linux.go:380: starting container "
      "process caused: process_linux.go:545: container init caused: Running hook #0:: error running hook: exit "
      "status 1, stdout: , stderr: nvidia-container-cli: initialization error",
      "https://github.com/opencontainers/runc",
      "its message after 'caused:' names the part (a hook, a mount, the command); docker run by hand on the node"),
    # a launcher's ssh to the job's hosts failing (ssh exits 255 for its own errors, never the remote command's:
    # ssh(1)): DeepSpeed's pre-launch check and pdsh say so in their own words
    S("deepspeed-ssh-check", "environment", ("was not reachable via ssh",),
      "the DeepSpeed launcher could not ssh to the hostfile's first host (no passwordless ssh, a wrong address)",
      "RuntimeError: Using hostfile at /job/hostfile but host=192.168.3.100 was not reachable via ssh. If you are "
      "running with a single node please remove /job/hostfile or setup passwordless ssh.",
      "https://github.com/deepspeedai/DeepSpeed (deepspeed/launcher/runner.py)",
      "ssh -o PasswordAuthentication=no HOST hostname from the launching node (keys, known_hosts, the address)"),
    S("ssh-exit-255", "environment", ("Command 'ssh ", "returned non-zero exit status 255"),
      "a launcher's ssh to a host failed in ssh itself (exit 255: unreachable, refused, no key), not in the remote "
      "command", "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 hostname' "
      "returned non-zero exit status 255.", "https://github.com/deepspeedai/DeepSpeed/issues/4907",
      "ssh -o PasswordAuthentication=no HOST hostname from the launching node (keys, known_hosts, the address)"),
    # pdsh's 255 is ssh's own failure at the start (keys) or a connection lost mid-run (the node or the link): a
    # candidate
    S("pdsh-ssh-255", "environment", ("ssh exited with exit code 255",),
      "pdsh (DeepSpeed's multi-node launcher) could not ssh to a host (exit 255: unreachable, refused, no key)",
      "pdsh@node1: node2: ssh exited with exit code 255", "https://github.com/chaos/pdsh (its exit-code message)",
      "ssh HOST hostname from the launching node (keys, known_hosts, the address)",
      node=re.compile(r"pdsh@[\w.-]{1,128}: " + _NODE + r": ssh exited"), weak=True),
    # an MPI launcher that cannot execute the program on a node (MPICH's Hydra, Open MPI's mpirun/prterun)
    S("hydra-execvp", "environment", ("execvp error on file",),
      "MPICH's launcher (Hydra) could not execute the program on a node (not on its PATH, not there)",
      "[proxy:0:0@node1] HYDU_create_process (utils/launch/launch.c:74): execvp error on file ./a.out (No such file "
      "or directory)", "https://github.com/pmodels/mpich (src/pm/hydra: HYDU_create_process)",
      "the program's path on every node (an absolute path, a shared file system), the module loaded there",
      node=re.compile(r"\[proxy:[\d:]{1,16}@" + _NODE + r"\]")),
    S("ompi-no-executable", "environment", ("could not access or execute an executable",),
      "Open MPI's mpirun could not execute the program on a node (not there, not on its PATH, not executable); "
      "the lines after it name the executable and the node",
      "mpirun was unable to launch the specified application as it could not access or execute an executable:",
      "https://github.com/open-mpi/ompi (help-orterun.txt / prte's help text)",
      "the program's path on every node (an absolute path, a shared file system), its permissions"),
    S("ompi-no-executable-find", "environment", ("was unable to find the specified executable file",),
      "Open MPI's mpirun could not find the program on a node",
      "mpirun was unable to find the specified executable file, and therefore did not launch the job.",
      "https://github.com/open-mpi/ompi (help-orterun.txt)",
      "the program's path on every node (an absolute path, a shared file system)"),
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
    S("k8s-evicted-disk", "environment", ("The node was low on resource: ephemeral-storage",),
      "the kubelet evicted the pod: the node's local disk (ephemeral storage) was full",
      "The node was low on resource: ephemeral-storage. Container trainer was using 120Gi, which exceeds its "
      "request of 0.", "https://github.com/kubernetes/kubernetes (pkg/kubelet/eviction)",
      "write checkpoints and caches to a volume, or request ephemeral-storage"),
    # --- round 8: code in compiled runtimes' own words ---
    # gfortran's runtime (libgfortran/runtime/error.c) prints it after "At line N of file F" (the source line)
    S("gfortran-runtime", "code", ("Fortran runtime error: ",),
      "the Fortran program stopped on a runtime error (an I/O error on its input, an array bound, a bad value): "
      "its source line is on the line before",
      "Fortran runtime error: Cannot open file 'namelist.input': No such file or directory",
      "https://github.com/gcc-mirror/gcc (libgfortran/runtime/error.c)",
      "the file and line of 'At line N of file F' above it, the input it reads"),
    # Intel Fortran's runtime: any severe error but SIGSEGV (174, above) and insufficient memory (41, above);
    # "forrtl: error (78): process killed (SIGTERM)" is a kill from outside, not matched here
    # round 9: Intel Fortran's severe (9), the OS's EACCES on a file the program opens: the file system's
    # permissions (a directory not the user's, a read-only copy), not the code's I/O (fds-9822)
    S("ifort-permission-denied", "environment", ("forrtl: severe (9)",),
      "the Fortran program may not open a file (permission denied: a directory or file that is not the user's, "
      "or read-only where it writes)",
      "forrtl: severe (9): permission to access file denied, unit 4, file /Users/a/FDS/Fires/couch.smv",
      "https://github.com/firemodels/fds/issues/9822 (Intel's documented severe (9))",
      "ls -l the file and its directory on the node; run from a directory the user owns"),
    S("ifort-severe", "code", ("forrtl: severe (",),
      "the Fortran program stopped on a severe runtime error (I/O, a bound, an unallocated array); the traceback "
      "after it names the routine and line",
      "forrtl: severe (24): end-of-file during read, unit 10, file /work/run/input.dat",
      "https://github.com/open-mpi/ompi-www (its FAQ: forrtl: severe (24) on stdin)",
      "the routine and line of its traceback, the input it reads"),
    # --- round 8: what a Python job's environment lacks, in the libraries' own words ---
    # the loader's version line as a markdown paste or a newer message prints it: straight quotes
    S("glibc-version-quoted", "environment", ("version 'GLIBC", "not found"),
      "a library needs a newer glibc/libstdc++ than the node has (built on a newer system, or a conda library "
      "shadowed by the system's)",
      "ImportError: /lib64/libstdc++.so.6: version 'GLIBCXX_3.4.29' not found (required by /opt/env/lib/x.so)",
      "https://github.com/bminor/glibc (elf/dl-version.c: the version-not-found error)",
      "put the environment's own libstdc++ first (LD_LIBRARY_PATH=$CONDA_PREFIX/lib), or a build for the node's "
      "glibc (ldd --version)"),
    # torch.utils.cpp_extension's own checks before a JIT build (DeepSpeed ops, apex, flash-attn)
    S("ninja-required", "environment", ("Ninja is required to load C++ extensions",),
      "a JIT build of a C++/CUDA extension needs ninja, and the job's environment has none",
      "RuntimeError: Ninja is required to load C++ extensions",
      "https://github.com/pytorch/pytorch (torch/utils/cpp_extension.py: verify_ninja_availability)",
      "pip install ninja in the job's environment (or prebuild the ops: DS_BUILD_OPS=1)"),
    S("cuda-home-unset", "environment", ("CUDA_HOME environment variable is not set",),
      "a build of a CUDA extension found no CUDA toolkit (CUDA_HOME unset, no nvcc on the node)",
      "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
      "https://github.com/pytorch/pytorch (torch/utils/cpp_extension.py: _join_cuda_home)",
      "module load cuda (or export CUDA_HOME) on every node that builds, or a prebuilt wheel"),
    S("torch-no-nccl", "environment", ("Distributed package doesn't have NCCL built in",),
      "the job's torch has no NCCL (a CPU, Windows or macOS build): the nccl backend cannot start",
      "RuntimeError: Distributed package doesn't have NCCL built in",
      "https://github.com/pytorch/pytorch (torch/distributed/distributed_c10d.py)",
      "a CUDA build of torch on Linux, or backend='gloo'"),
    # the GPU lacks a feature the job asks for: flash-attn on pre-Ampere GPUs, bf16 without Ampere (accelerate)
    S("flash-attn-arch", "environment", ("FlashAttention only supports Ampere GPUs or newer",),
      "flash-attn needs an Ampere or newer GPU (compute capability 8.0+): the node's GPUs are older",
      "RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
      "https://github.com/Dao-AILab/flash-attention (csrc: the architecture check)",
      "nodes with A100/H100-class GPUs (the job's --constraint/--gres type), or attn_implementation='sdpa'"),
    S("bf16-unsupported", "environment", ("doesn't support bf16/gpu",),
      "bf16 was asked for on GPUs (or a torch) without it: pre-Ampere GPUs",
      "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0",
      "https://github.com/huggingface/transformers (training_args.py: the bf16 check)",
      "fp16 on these GPUs, or nodes with Ampere or newer GPUs"),
    # the process sees no GPU: the job asked for none (--gres/--gpus), CUDA_VISIBLE_DEVICES hides them, or the
    # node lost them: a candidate, the node decides
    S("no-gpu-visible", "environment", ("No CUDA GPUs are available",),
      "the process sees no GPU: the job did not ask for any (--gres=gpu:N, --gpus), CUDA_VISIBLE_DEVICES hides "
      "them, or the node's GPUs are gone", "RuntimeError: No CUDA GPUs are available",
      "https://github.com/pytorch/pytorch (torch/cuda/__init__.py: _lazy_init)",
      "inside the job: nvidia-smi -L and echo $CUDA_VISIBLE_DEVICES; the job's GPU request", weak=True),
    S("nccl-no-gpu", "environment", ("ProcessGroupNCCL is only supported with GPUs, no GPUs found",),
      "the nccl backend found no GPU in this process: the job asked for none, or CUDA_VISIBLE_DEVICES hides them",
      "RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
      "https://github.com/pytorch/pytorch (ProcessGroupNCCL.cpp)",
      "inside the job: nvidia-smi -L and echo $CUDA_VISIBLE_DEVICES; the job's GPU request", weak=True),
    # setuptools' pkg_resources at import time (an entry point's requirements): a version conflict, a package
    # not installed (their types end in no "Error": the exception parsers do not see them; the needles are in
    # their messages, which a prefix reader may have split from the type)
    S("pkg-version-conflict", "environment", ("Requirement.parse('",),
      "an installed package's version conflicts with what another requires (the environment's versions)",
      "pkg_resources.ContextualVersionConflict: (numpy 1.19.0 (/usr/lib), Requirement.parse('numpy>=1.21'), "
      "{'scipy'})", "https://github.com/pypa/setuptools (pkg_resources: VersionConflict)",
      "pip install the version it requires (pip check lists the conflicts)"),
    S("pkg-dist-not-found", "environment", ("distribution was not found and is required by",),
      "a package another one requires is not installed in the job's environment",
      "pkg_resources.DistributionNotFound: The 'tokenizers>=0.14' distribution was not found and is required by "
      "transformers", "https://github.com/pypa/setuptools (pkg_resources: DistributionNotFound)",
      "pip install it in the job's environment (pip check)"),
    # pip in the job could not install what it needs (a candidate: the job may go on with what is there)
    S("pip-no-distribution", "environment", ("No matching distribution found for",),
      "pip could not install a package the job needs (no wheel for this Python, platform or index; no network "
      "from the node)", "ERROR: No matching distribution found for torch==2.9.9",
      "https://github.com/pypa/pip (its resolver's error)",
      "build the environment before the job (on a node with the same Python), or the version that exists",
      weak=True),
    # conda's activation inside a batch script (a non-interactive shell without `conda init`'s hook): the job
    # then runs another Python. A candidate: profiles print it in jobs that set their PATH otherwise
    S("conda-init", "environment", ("Run 'conda init' before 'conda activate'",),
      "`conda activate` failed in the job's shell (conda's shell hook is not loaded there): the job runs without "
      "its environment", "CondaError: Run 'conda init' before 'conda activate'",
      "https://github.com/conda/conda (conda/cli/main.py: the activate error)",
      "in the script: eval \"$(conda shell.bash hook)\" before conda activate (or source .../etc/profile.d/conda.sh)",
      weak=True),
    S("conda-env-missing", "environment", ("Could not find conda environment",),
      "`conda activate NAME` found no such environment where the job ran (another conda install, a path not "
      "mounted there)", "EnvironmentNameNotFound: Could not find conda environment: myenv",
      "https://github.com/conda/conda (EnvironmentNameNotFound)",
      "conda env list on the node; activate it by path (conda activate /path/to/env)", weak=True),
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
    # --- round 8: a CLI's own usage errors (click/typer, Hydra): the command line, as argparse's ---
    S("click-no-option", "code", ("Error: No such option: ",),
      "the script's command line has an option it does not take (click/typer)", "Error: No such option: --lr",
      "https://github.com/pallets/click (exceptions.py: NoSuchOption)", "the script's --help; fix the command line"),
    S("click-missing", "code", ("Error: Missing option ",),
      "the script's command line lacks a required option (click/typer)", "Error: Missing option '--config'.",
      "https://github.com/pallets/click (exceptions.py: MissingParameter)",
      "the script's --help; fix the command line"),
    S("hydra-override", "code", ("Could not override '",),
      "a Hydra override on the command line names a key the config does not have",
      "Could not override 'trainer.gpus'.", "https://github.com/facebookresearch/hydra (the override error)",
      "the config's keys (--cfg job); add new keys with +key=value"),
    # --- round 8: a file system the job writes to, in any tool's words (strerror's texts: EDQUOT, ESTALE, ENOSPC),
    # a shell's cp or tar as well as Python's OSError ---
    S("fs-quota", "environment", ("Disk quota exceeded",),
      "the job's file system quota is used up (EDQUOT): its writes fail", "cp: cannot create regular file "
      "'/scratch/run/ckpt.pt': Disk quota exceeded", "https://github.com/bminor/glibc (strerror: EDQUOT)",
      "the quota (quota -s, lfs quota -u $USER /scratch, the site's tool); clean up, or write elsewhere"),
    S("fs-stale", "environment", ("Stale file handle",),
      "a file on an NFS mount was removed or the mount re-exported under the job (ESTALE): the node's mount",
      "ls: cannot access '/data/shard-0001': Stale file handle", "https://github.com/bminor/glibc (strerror: ESTALE)",
      "remount it on that node (or resubmit without it); do not delete files a running job reads"),
    S("fs-no-space", "environment", ("No space left on device",),
      "a file system the job writes to is full (ENOSPC): the disk, /tmp, or /dev/shm in a container",
      "RuntimeError: unable to write to file </torch_18692_1954506624>: No space left on device (28)",
      "https://github.com/bminor/glibc (strerror: ENOSPC)",
      "df -h on the node for the path it wrote (/dev/shm: docker --shm-size or --ipc=host); clean up or write "
      "elsewhere"),
    # torch.save's zip writer stopped short of what it wrote ("unexpected pos A vs B"): the disk full or over
    # quota most often, a file system that cut the write otherwise: a candidate
    S("torch-save-short", "environment", ("inline_container.cc", "unexpected pos"),
      "a checkpoint write stopped short (torch.save's zip writer): the disk full or over its quota, or a network "
      "file system that cut the write",
      "RuntimeError: [enforce fail at inline_container.cc:595] . unexpected pos 1234 vs 5678",
      "https://github.com/pytorch/pytorch (caffe2/serialize/inline_container.cc)",
      "df -h and the quota of the checkpoint's directory at that time; save to local disk and copy", weak=True),
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
    # --- round 8: HPC stacks' own words for a build or a runtime that does not fit the machine (environment) ---
    # Cray MPICH asked for GPU-aware MPI (MPICH_GPU_SUPPORT_ENABLED=1) by a binary without Cray's GPU transport
    S("cray-gtl-not-linked", "environment", ("GTL library is not linked",),
      "Cray MPICH was asked for GPU-aware MPI (MPICH_GPU_SUPPORT_ENABLED=1) by a program not linked with its GPU "
      "transport layer (GTL)", "MPICH ERROR [Rank 0] [job id 14833080.5] [Fri Nov 21 09:21:34 2025] [nid007972] - "
      "Abort(-1) (rank 0 in comm 0): MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL library is not linked",
      "https://github.com/pmodels/mpich (Cray MPICH's MPIDI_CRAY_init, as the sites' docs quote it)",
      "load the craype-accel module for the GPU when building (or link libmpi_gtl), or unset "
      "MPICH_GPU_SUPPORT_ENABLED"),
    # HIP (ROCm): no code object for the GPU's architecture (gfx90a, gfx942 ...): a build for another GPU
    S("hip-no-binary", "environment", ("hipErrorNoBinaryForGpu",),
      "the program (or a library: torch, rocBLAS) has no code object for this GPU's architecture",
      "\"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\"",
      "https://github.com/ROCm/HIP (hipErrorNoBinaryForGpu = 209)",
      "a build for the node's GPU (rocminfo | grep gfx; PYTORCH_ROCM_ARCH, --offload-arch)"),
    S("hip-no-code-object", "environment", ("Unable to find code object for all current devices",),
      "the program (or a library) has no code object for this GPU's architecture",
      "Unable to find code object for all current devices!", "https://github.com/ROCm/HIP (its runtime's message)",
      "a build for the node's GPU (rocminfo | grep gfx)"),
    S("rocblas-no-arch", "environment", ("rocBLAS error: Cannot read",),
      "rocBLAS has no kernels for this GPU's architecture (its TensileLibrary for the gfx target is missing)",
      "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or directory for "
      "GPU arch : gfx1030", "https://github.com/ROCm/rocBLAS (its Tensile library loader)",
      "a ROCm built for this GPU (HSA_OVERRIDE_GFX_VERSION only for a compatible one)"),
    # a kernel with no image for this device: the extension was built for other architectures
    S("cuda-invalid-device-function", "environment", ("invalid device function",),
      "a GPU kernel has no image for this device (an extension or library built for other GPU architectures)",
      "RuntimeError: CUDA error: invalid device function",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorInvalidDeviceFunction = 98)",
      "rebuild the extension for this GPU (TORCH_CUDA_ARCH_LIST with its compute capability)"),
    # Slurm's PMI server receiving the same task twice: an MPI started by srun twice over (a bare MPI binary run
    # inside an srun step, mpirun of another MPI under srun): the launch, not the code (Slurm's pmi_server.c)
    S("slurm-pmi-duplicate", "environment", ("PMK_KVS_Barrier duplicate request",),
      "Slurm's PMI saw the same task twice: the MPI program was started inside an srun step by another launcher "
      "(or an MPI built for another PMI)", "srun: error: PMK_KVS_Barrier duplicate request from task 0",
      "https://github.com/SchedMD/slurm (src/api/pmi_server.c)",
      "start it once: srun --mpi=pmix (or pmi2) ./prog in the batch script, not mpirun inside an srun step"),
    S("slurm-plugin-missing", "environment", ("Couldn't find the specified plugin name for",),
      "Slurm has no such plugin (srun --mpi=NAME, a switch or a GRES plugin the site did not build)",
      "srun: error: Couldn't find the specified plugin name for mpi/pmi2 looking at all files",
      "https://github.com/SchedMD/slurm (src/common/plugin.c)",
      "srun --mpi=list for what the site has; the MPI's PMI to match"),
    # Open MPI's help texts for a runtime that could not start on the node
    S("ompi-orte-init", "environment", ("orte_init failed for some reason",),
      "Open MPI's runtime could not start (its environment: the launcher, PMI, a component it needs)",
      "It looks like orte_init failed for some reason; your parallel process is",
      "https://github.com/open-mpi/ompi (help-orte-runtime.txt)",
      "the lines after it name the failing part; the MPI the program was built with against the one that runs it"),
    S("ompi-opal-init", "environment", ("opal_init failed for some reason",),
      "Open MPI's base layer could not start (its installation on the node: a library or a component)",
      "It looks like opal_init failed for some reason; your parallel process is",
      "https://github.com/open-mpi/ompi (help-opal-runtime.txt)",
      "the lines after it; the Open MPI installation on the node (ompi_info)"),
    S("ompi-component-missing", "environment", ("A requested component was not found",),
      "Open MPI could not open a component it was asked for (not built, or its library missing on the node); a "
      "warning where another component serves (PMIx's psec munge)",
      "A requested component was not found, or was unable to be opened.  This",
      "https://github.com/open-mpi/ompi (help-mca-base.txt)",
      "its Framework and Component lines after it; ompi_info | grep COMPONENT on the node", weak=True),
    S("horovod-not-built", "environment", ("Neither MPI nor Gloo support has been built",),
      "Horovod was installed without MPI and without Gloo: it cannot start",
      "ValueError: Neither MPI nor Gloo support has been built. Try reinstalling Horovod ensuring that either MPI "
      "is installed (MPI) or CMake is installed (Gloo).", "https://github.com/horovod/horovod (horovod/runner)",
      "reinstall Horovod with HOROVOD_WITH_MPI=1 or HOROVOD_WITH_GLOO=1 (horovodrun --check-build)"),
    S("lammps-package-missing", "environment", ("not enabled in this LAMMPS binary",),
      "the LAMMPS binary was built without the package the input uses (a style of that package)",
      "ERROR: Unrecognized pair style 'reaxff' is part of the REAXFF package which is not enabled in this LAMMPS "
      "binary. (src/force.cpp:275)", "https://github.com/lammps/lammps (src/utils.cpp: check_packages_for_style)",
      "a LAMMPS built with that package (cmake -D PKG_NAME=yes; lmp -h lists the installed ones)"),
    S("ray-runtime-env", "environment", ("Failed to set up runtime environment",),
      "Ray could not set up a task's runtime environment (its pip/conda packages, the working dir upload)",
      "ray.exceptions.RuntimeEnvSetupError: Failed to set up runtime environment.",
      "https://github.com/ray-project/ray (python/ray/exceptions.py: RuntimeEnvSetupError)",
      "the message after it (the package or upload that failed); the runtime_env's pip list on a node"),
    S("vllm-bf16", "environment", ("Bfloat16 is only supported on GPUs with compute capability",),
      "bf16 was asked for on GPUs without it (compute capability below 8.0: V100, T4)",
      "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-"
      "32GB GPU has compute capability 7.0.", "https://github.com/vllm-project/vllm (the dtype check)",
      "dtype float16 on these GPUs (--dtype half), or nodes with Ampere or newer"),
    # --- round 8: the scheduler's and the applications' own words for a task no node can take, an input error ---
    S("ray-unschedulable-error", "scheduler", (" is unschedulable: ",),
      "Ray gave up placing a task or actor: no node can take what it asks for (its resources, a node affinity to "
      "a node gone)", "ray.exceptions.ActorUnschedulableError: The actor 3c2a is unschedulable: The node specified "
      "via NodeAffinitySchedulingStrategy doesn't exist any more", "https://github.com/ray-project/ray (python/ray/"
      "exceptions.py: TaskUnschedulableError, ActorUnschedulableError)",
      "the resources it asks for against the cluster's (ray status)"),
    # C's assert() as glibc prints it ("PROG: FILE:LINE: FUNC: Assertion `EXPR' failed."; CUDA's device-side form,
    # `EXPR` failed, is kernel-assert above), and with straight quotes (a markdown paste, newer messages)
    S("c-assert", "code", ("Assertion `", "' failed."),
      "the program's own assert() failed (an invariant of the code or its input)",
      "a.out: main.c:12: main: Assertion `n > 0' failed.", "https://github.com/bminor/glibc (assert/assert.c)",
      "the file:line and expression it names; the input that broke it"),
    S("c-assert-quoted", "code", ("Assertion '", "' failed."),
      "the program's own assert() failed (an invariant of the code or its input)",
      "a.out: main.c:12: main: Assertion 'n > 0' failed.", "https://github.com/bminor/glibc (assert/assert.c)",
      "the file:line and expression it names; the input that broke it"),
    # LAMMPS' Error::all: "ERROR: MESSAGE (src/FILE.cpp:LINE)", then "Last command: ..." (its memory and package
    # errors above take theirs first): the input script or the simulation it describes
    S("lammps-error", "code", ("ERROR: ", ".cpp:", " ("),
      "the program stopped on its own error check (LAMMPS' ERROR: the input script or the simulation it "
      "describes: lost atoms, a bad style or value)",
      "ERROR: Lost atoms: original 8000 current 7999 (src/thermo.cpp:486)",
      "https://github.com/lammps/lammps (src/error.cpp: Error::all)",
      "the message and the input's 'Last command:' after it (a smaller timestep, the input's values)"),
    # --- a peer went away: the network, or the peer died first (weak alone) ---
    S("peer-reset", "peer", ("Connection reset by peer",),
      "a connection to another rank was reset: the network, or that rank died",
      "worker0-0d9gnb:15:91 [3] include/socket.h 398 NCCL WARN Call to write failed : Connection reset by peer.",
      "https://github.com/NVIDIA/nccl/issues/193", weak=True),
    S("peer-closed-remote", "peer", ("Connection closed by remote peer",),
      "another rank closed its connection: it died (or its node did), or the network dropped it",
      "socketProgress: Connection closed by remote peer dgxh100-sapphire-ib0<40484>",
      "https://github.com/huggingface/accelerate/issues/3413", weak=True),
    S("peer-closed-gloo", "peer", ("Connection closed by peer",),
      "gloo lost its connection to another rank: it died, or the network dropped it",
      "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer "
      "[198.18.16.4]:50353.",
      "tests/fixtures/why/jobs/killed-node3/rank1.err (a real run on the test cluster)", weak=True),
    S("peer-recv-failed", "peer", ("NCCL WARN", "failed : Broken pipe"),
      "a send or receive to another rank failed: it died, or the network dropped it",
      "NCCL WARN Net : Call to recv from 10.200.84.247<49473> failed : Broken pipe",
      "https://github.com/NVIDIA/nccl/issues/795", weak=True),
    S("nccl-remote-error", "peer", ("remote process exiting prematurely",),
      "NCCL: a network error or a remote rank exited first",
      "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
      "https://github.com/huggingface/accelerate/issues/3413", weak=True),
    S("ssh-refused", "environment", ("ssh: connect to host", "Connection refused"),
      "the launcher (mpirun, pdsh) could not log in to a node over ssh: no sshd listening there, a firewall, or "
      "the host name resolves to another address (/etc/hosts): its daemons never started",
      "ssh: connect to host node2 port 22: Connection refused", "https://github.com/open-mpi/ompi/issues/6379",
      "from the launching node: ssh NODE true (passwordless, by the name the hostfile uses; getent hosts NODE); "
      "clusterdoc check --transport ssh on the nodes",
      node=re.compile(r"connect to host " + _NODE + r" port")),
    S("peer-refused", "peer", ("Connection refused",),
      "a rank could not connect to another (not listening: not started yet, or died)",
      "slurmstepd: error: Failed to send MESSAGE_TASK_EXIT: Connection refused",
      "https://github.com/facebookincubator/submitit/issues/1708", weak=True),
    # --- round 8 (issue 41): the sockets and the fabric between nodes in every NCCL version's words. NCCL retries a
    # connect that was refused or timed out (a peer not listening yet); any other errno ends it at once, and is the
    # network under the job: a CNI or firewall that aborts it, an address the node cannot use. Refused, reset and
    # broken-pipe lines are matched above (a peer, weak). Forms: 2.9-2.11 "Connect to A failed : E" (socket.h),
    # 2.12-2.18 "socketStartConnect: Connect to A failed : E", 2.19+ "socketStartConnect: connect to A returned E"
    # and socketPollConnect's (src/misc/socket.cc) ---
    S("nccl-connect-failed", "network", ("socketStartConnect: Connect to ", " failed"),
      "NCCL could not open a connection to another rank's address (an error it does not retry: the network "
      "between the nodes, a CNI or firewall that aborts it, an interface the peer cannot be reached on)",
      "socketStartConnect: Connect to 192.168.102.1<38007> failed : Software caused connection abort",
      "https://github.com/NVIDIA/nccl/issues/1016 (and verl-726: the same abort to a link-local address)",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on; in "
      "Kubernetes the pods' network (its CNI, network policies); clusterdoc check (net) on the nodes",
      unless=("retrying",)),
    S("nccl-connect-returned", "network", ("Connect: connect to ", " returned "),
      "NCCL could not open a connection to another rank's address (an error it does not retry, or a timeout past "
      "its retries: the network between the nodes, a firewall, an interface the peer cannot be reached on)",
      "socketStartConnect: connect to 192.168.102.1<38007> returned Software caused connection abort",
      "https://github.com/NVIDIA/nccl/blob/master/src/misc/socket.cc (socketConnectCheck, NCCL 2.19+: the form it "
      "prints)",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on; "
      "clusterdoc check (net) on the nodes", unless=("retrying",)),
    S("nccl-connect-failed-old", "network", ("NCCL WARN", "Connect to ", " failed : "),
      "NCCL could not open a connection to another rank's address (the network between the nodes, a firewall, an "
      "interface the peer cannot be reached on)",
      "misc/socket.cc:480 NCCL WARN Connect to 10.0.0.2<43211> failed : Connection timed out",
      "https://github.com/NVIDIA/nccl/blob/v2.11.4-1/src/include/socket.h (connectAddress: the form it prints)",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on; "
      "clusterdoc check (net) on the nodes", unless=("retrying",)),
    # NCCL 2.19+ prints a work completion's status as "status=N" (any status but success is a transfer the fabric
    # failed: 12 retry exceeded, 4 local protection, 10 remote access, 13 RNR), the newest as "status=NAME(N)"
    S("ib-completion-status", "network", ("NET/IB", "Got completion from peer", "with status="),
      "InfiniBand failed a transfer (a work completion with an error status: the link, a port, the peer's HCA, "
      "the GID/RoCE setup between the two addresses)",
      "NET/IB : Got completion from peer 10.1.1.2<54862> with status=4 opcode=0 len=0 vendor err 81 (Recv)",
      "https://github.com/NVIDIA/nccl/blob/master/src/transport/net_ib.cc (ncclIbTest, NCCL 2.19+: the form it prints; "
      "nccl-1405 and nccl-1664 print status=12)",
      "clusterdoc check --perf on the nodes (ibstat, ibv_devinfo, link errors); NCCL_IB_HCA and NCCL_IB_GID_INDEX"),
    # libfabric's plugin could not read its completion queue at all (fi_cq_read failed): the fabric's device
    S("ofi-cq-read-failed", "network", ("NET/OFI", "Unable to retrieve completion queue entries"),
      "the fabric (libfabric: EFA, Slingshot) failed: its completion queue could not be read (the device or its "
      "provider)",
      "NET/OFI Unable to retrieve completion queue entries. RC: -5, ERROR: Input/output error",
      "https://github.com/aws/aws-ofi-nccl (src/nccl_ofi_sendrecv.cpp, nccl_ofi_rdma.cpp: the form ofi_process_cq "
      "prints)",
      "clusterdoc check --perf on the nodes (fi_info, the fabric's port counters); FI_PROVIDER and NCCL_NET to "
      "the plugin the nodes share"),
    # the verbs call that reads completions failed itself (NCCL's ibvwrap): the adapter, not a transfer
    S("ibv-poll-cq-failed", "network", ("Call to ibv_poll_cq() returned",),
      "InfiniBand's completion queue could not be read (ibv_poll_cq failed): the adapter or its driver on that node",
      "node1:3468:3905 [4] misc/ibvwrap.cc:199 NCCL WARN Call to ibv_poll_cq() returned -5",
      "https://github.com/NVIDIA/nccl/blob/master/src/misc/ibvwrap.cc (wrap_ibv_poll_cq: the form it prints)",
      "clusterdoc check --perf on that node (ibstat, ibv_devinfo, dmesg for mlx5); resubmit without it meanwhile"),
    # Open MPI's openib BTL: a completion with an error status, and its help text for status 12, the line wrapped
    # after "with status" as often as not ("from NODE to: PEER error polling LP CQ with status RETRY EXCEEDED ...")
    S("ompi-openib-cq-error", "network", ("error polling ", "CQ with status"),
      "InfiniBand failed a transfer between two MPI processes (Open MPI's openib: a completion with an error "
      "status, 12 the retry count exceeded): the link, a port or the peer's adapter",
      "[[718,1],20][btl_openib_component.c:2902:handle_wc] from node-0-22.local to: node-0-2 error polling LP CQ "
      "with status RETRY EXCEEDED ERROR status number 12 for wr_id 38996224 opcode 0 qp_idx 0",
      "https://github.com/open-mpi/ompi/blob/v4.1.x/opal/mca/btl/openib/btl_openib_component.c (handle_wc: the "
      "form it prints; the users' list has it from many sites)",
      "clusterdoc check --perf on the two nodes the line names (ibstat, link error counters); the fabric's "
      "manager (ibdiagnet) for the path between them",
      node=re.compile(r"handle_wc\] from " + _NODE + r" to: ")),
    S("ompi-ib-retry-exceeded", "network", ("InfiniBand retry count between two MPI processes",),
      "InfiniBand gave up on a transfer between two MPI processes (the retry count exceeded): the link, a port or "
      "the peer's adapter",
      "The InfiniBand retry count between two MPI processes has been exceeded.",
      "https://github.com/open-mpi/ompi/blob/v4.1.x/opal/mca/btl/openib/help-mpi-btl-openib.txt (pp retry "
      "exceeded: the form it prints)",
      "clusterdoc check --perf on the nodes (ibstat, link error counters); Open MPI's help text names the host and "
      "its peer on the lines after it"),
    # NCCL's socket transport found no interface to use (NCCL_SOCKET_IFNAME names none there): as its bootstrap's
    S("nccl-net-socket-no-if", "environment", ("NET/Socket : no interface found",),
      "NCCL found no usable network interface (NCCL_SOCKET_IFNAME names one that is not there)",
      "node1:3468:3905 [0] NCCL WARN NET/Socket : no interface found",
      "https://github.com/NVIDIA/nccl/blob/master/src/transport/net_socket.cc (ncclNetSocketInit: the form it "
      "prints; its bootstrap's twin: mftcoder-31, mambatree-14)",
      "set NCCL_SOCKET_IFNAME to an interface the node has (ip -br addr), the one the nodes reach each other on"),
    # torch's ProcessGroupNCCL in its own words for a rank stuck (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp),
    # thin alone: the heartbeat monitor found the rank's watchdog itself stuck (a NCCL/CUDA call that never returned:
    # the rank that prints it is the stuck one); a dump signal is a rank told that ANOTHER timed out (the rank named
    # there noticed first: a witness, never the culprit)
    S("torch-heartbeat-stuck", "hang", ("Heartbeat monitor timed out",),
      "the rank's watchdog was stuck (a NCCL or CUDA call that never returned): torch's heartbeat monitor ended it",
      "[rank25]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 25] Heartbeat monitor timed out! Process will be terminated "
      "after dumping debug info. workMetaList_.size()=2",
      "https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the form its "
      "heartbeat monitor prints)",
      "py-spy dump --native on the rank (where its NCCL/CUDA call waits); the other ranks' logs at that time; "
      "clusterdoc check on its node (XIDs)", weak=True),
    S("torch-watchdog-stuck", "hang", ("watchdog got stuck for", "without making progress"),
      "the rank's watchdog was stuck (a NCCL or CUDA call that never returned): torch's heartbeat monitor ended it",
      "[rank25]:[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank 25] ProcessGroupNCCL's watchdog got stuck for 600 seconds "
      "without making progress in monitoring enqueued collectives.",
      "https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the form its "
      "heartbeat monitor prints)",
      "py-spy dump --native on the rank (where its NCCL/CUDA call waits); the other ranks' logs at that time; "
      "clusterdoc check on its node (XIDs)", weak=True),
    S("torch-dump-signal", "hang", ("Received a dump signal",),
      "another rank's collective timed out and this rank was told to dump its flight recorder: a rank never joined "
      "a collective (which one, the dumps say)",
      "[PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump signal due to a collective timeout from rank 3 and we "
      "will try our best to dump the debug info.",
      "https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the form it "
      "prints)",
      "read the flight recorder's dumps (TORCH_NCCL_DEBUG_INFO_TEMP_FILE; torch's fr_trace tool names the rank "
      "that never joined); the other ranks' logs", weak=True),
    S("torch-global-timeout", "hang", ("Received a global timeout from another rank",),
      "another rank's collective timed out and this rank was told to dump its flight recorder: a rank never joined "
      "a collective (which one, the dumps say)",
      "[PG 0 Rank 2] Received a global timeout from another rank and will start to dump the debug info.",
      "https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the form it "
      "prints)",
      "read the flight recorder's dumps (TORCH_NCCL_DEBUG_INFO_TEMP_FILE; torch's fr_trace tool names the rank "
      "that never joined); the other ranks' logs", weak=True),
    # gloo (torch's CPU backend, vLLM's and Ray's side channel) found no address on the interface GLOO_SOCKET_IFNAME
    # names (a bond's slave, a name another node has, '^lo' which gloo reads literally), or none it can bind for the
    # host's own name (/etc/hosts): gloo/transport/tcp/device.cc's two GLOO_ENFORCE
    S("gloo-no-address", "environment", ("Unable to find address for: ",),
      "gloo found no usable address: the interface GLOO_SOCKET_IFNAME names has none on this node (or is not "
      "there), or the host's name resolves to no address of its own",
      "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable "
      "to find address for: eth0",
      "https://github.com/pytorch/gloo/blob/main/gloo/transport/tcp/device.cc (lookupAddrForIface, "
      "lookupAddrForHostname: the form they print)",
      "set GLOO_SOCKET_IFNAME to an interface with an address on every node (ip -br addr; a bond, not its slave); "
      "or make the host name resolve to the node's own address (getent hosts $(hostname))"),
    # MPICH's ch4:ofi (Cray MPICH, Intel MPI) could not complete a transfer on the fabric: a Slingshot/CXI resource
    # (PTLTE_NOT_FOUND, VNI_NOT_FOUND: HPE answers with FI_CXI_* settings) or the NIC libfabric picked (a VPN's on a
    # laptop, at MPI_Finalize): the fabric or its settings, thin alone
    S("mpich-ofi-poll", "network", ("OFI poll failed",),
      "MPICH's libfabric layer got an error completion: the fabric, or the provider's settings and the NIC it picked",
      "MPIDI_OFI_handle_cq_error(1062): OFI poll failed (ofi_events.c:1064:MPIDI_OFI_handle_cq_error:Input/output "
      "error - PTLTE_NOT_FOUND)",
      "https://github.com/pmodels/mpich/blob/main/src/mpid/ch4/netmod/ofi/ofi_events.c (MPIDI_OFI_handle_cq_error, "
      "errnames.txt's **ofid_poll: the form it prints)",
      "the error after the file name decides: a CXI resource (PTLTE_NOT_FOUND, VNI_NOT_FOUND: the site's FI_CXI_* "
      "settings), the NIC libfabric picked (FI_PROVIDER, FI_TCP_IFACE), else the fabric (clusterdoc check --perf)",
      weak=True),
    # Open MPI 4/5's TCP BTL help text (help-mpi-btl-tcp.txt, "client connect fail"): a process could not open a
    # connection to a peer's address; users' threads find a docker bridge, a link-local or VPN interface or a
    # firewall each time (its "Local host:" line names the node that printed it)
    S("ompi-tcp-peer-connect", "network", ("failed to TCP connect to a peer MPI process",),
      "Open MPI could not connect two processes over TCP: the interface it picked (a docker bridge, a link-local or "
      "VPN address) or a firewall between the hosts",
      "WARNING: Open MPI failed to TCP connect to a peer MPI process.  This",
      "https://github.com/open-mpi/ompi/blob/v5.0.x/opal/mca/btl/tcp/help-mpi-btl-tcp.txt (client connect fail: "
      "the form it prints)",
      "pin the interface the hosts reach each other on (mpirun --mca btl_tcp_if_include IFACE --mca "
      "oob_tcp_if_include IFACE); open the ports between them"),
    # NCCL's own sanity check on a receive: the sender posted more than this rank's buffer holds. Its source says
    # what it catches: "user collective call count/size mismatches" (the ranks are in different calls)
    S("ib-collective-mismatch", "desync", ("collective mismatch error, local size",),
      "NCCL saw two ranks post different sizes to the same transfer: they are in different collectives (or one "
      "with different shapes)",
      "NET/IB : req 0/1 tag 7 peer 10.1.1.2<39012> collective mismatch error, local size 4096 remote size 8192",
      "https://github.com/NVIDIA/nccl/blob/master/src/transport/net_ib.cc (the receive's sanity check: the form it "
      "prints)",
      "rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL (it names the collective each rank called); look for a collective "
      "under a rank condition or a tensor whose shape differs per rank"),
    # --- round 8 (memory): memory exhausted as the schedulers, the kernel's neighbours and the applications word it,
    # beyond the forms above. Each row is the tool's own message (its source or documentation); the generic phrases
    # ("out of memory", "not enough memory") count only on a line that also says it failed (_MEMORY_FAILED below)
    S("ibv-enomem", "environment", ("Cannot allocate memory", "reg_mr"),
      "an RDMA memory registration failed with ENOMEM: the locked-memory limit (ulimit -l) most often, or the "
      "host's memory",
      "k300:UCM:10c7c:73c03540: 7393885 us(7393885 us!!!):  DAPL ERR reg_mr Cannot allocate memory",
      "https://github.com/linux-rdma/rdma-core (ibv_reg_mr(3): ENOMEM; NOAA-EMC/global-workflow#1301's DAPL line)",
      "ulimit -l on the node (unlimited for RDMA: the container's or slurmd's memlock limit), then the job's memory",
      weak=True),
    S("ibv-enomem2", "environment", ("Cannot allocate memory", "ibv_"),
      "an InfiniBand verbs call failed with ENOMEM: the locked-memory limit (ulimit -l) most often, or the host's "
      "memory", "NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory",
      "https://github.com/linux-rdma/rdma-core (ibv_reg_mr(3), ibv_create_qp(3): ENOMEM)",
      "ulimit -l on the node (unlimited for RDMA: the container's or slurmd's memlock limit), then the job's memory",
      weak=True),
    # Slurm's older task/cgroup prints these at the step's end when the cgroup reached its limit at some point: the
    # page cache counts, so jobs that completed print them too (a candidate); with a task killed by SIGKILL in the
    # same log they are the memory kill (why/foreign.py: slurm-memory-limit-kill)
    S("slurm-exceeded-job-mem", "oom", ("exceeded job memory limit", "at some point"),
      "Slurm's cgroup saw the job reach its memory limit at some point (host memory; the page cache counts too)",
      "slurmstepd: error: Exceeded job memory limit at some point.",
      "https://github.com/SchedMD/slurm (task/cgroup: 'Exceeded job memory limit at some point'; galaxyproject/"
      "galaxy's Slurm runner reads the same line)",
      "ask for more memory (--mem / --mem-per-cpu): sacct -j JOB -o JobID,State,MaxRSS,ReqMem shows the peak",
      node=re.compile(r"slurmstepd-" + _NODE + r": "), lower=True, weak=True),
    S("slurm-exceeded-step-mem", "oom", ("exceeded step memory limit", "at some point"),
      "Slurm's cgroup saw a job step reach its memory limit at some point (host memory; the page cache counts too)",
      "slurmstepd: error: Exceeded step memory limit at some point.",
      "https://github.com/SchedMD/slurm (task/cgroup: 'Exceeded step memory limit at some point')",
      "ask for more memory (--mem / --mem-per-cpu): sacct -j JOB -o JobID,State,MaxRSS,ReqMem shows the peak",
      node=re.compile(r"slurmstepd-" + _NODE + r": "), lower=True, weak=True),
    # without "at some point" it is slurmd's notice of its own memory kill (job_mem_limit: the notice, then SIGKILL)
    S("slurm-job-mem-notify", "oom", ("exceeded job memory limit",),
      "Slurm killed the job for going over its memory limit (slurmd's notice before its SIGKILL): host memory",
      "slurmstepd: error: Exceeded job memory limit", "https://github.com/SchedMD/slurm (src/slurmd/slurmd/req.c: "
      "notify_req.message = \"Exceeded job memory limit\", then kill_req.signal = SIGKILL)",
      "ask for more memory (--mem / --mem-per-cpu): sacct -j JOB -o JobID,State,MaxRSS,ReqMem shows the peak",
      node=re.compile(r"slurmstepd-" + _NODE + r": "), lower=True),
    # Slurm's newer task/cgroup (cgroup v1) says the same at the step's end: 'may or may not result in some failure'
    S("slurm-hit-memory-limit", "oom", ("hit memory", "limit at least once"),
      "Slurm's cgroup saw a step reach its memory (or memory+swap) limit at least once (the page cache counts too)",
      "slurmstepd-node1: error: Step 123.0 hit memory+swap limit at least once during execution. This may or may "
      "not result in some failure.", "https://github.com/SchedMD/slurm (src/plugins/cgroup/v1: '%ps hit "
      "memory+swap limit at least once during execution')",
      "sacct -j JOB -o JobID,State,MaxRSS,ReqMem: a task killed (State OUT_OF_MEMORY, a SIGKILL) decides it; "
      "ask for more memory", node=re.compile(r"slurmstepd-" + _NODE + r": "), lower=True, weak=True),
    S("flux-oom", "oom", ("out of memory: killed", " task"),
      "Flux's job shell saw the kernel's OOM killer kill tasks in the job's cgroup (host memory)",
      "flux-shell[0]: ERROR: oom: Memory cgroup out of memory: killed 1 task on node12.",
      "https://github.com/flux-framework/flux-core (src/shell/oom.c: 'Memory cgroup out of memory: killed %lu "
      "task%s on %s.')",
      "ask for more memory per node (fewer tasks per node), or load less per task",
      node=re.compile(r"killed \d{1,9} tasks? on ([A-Za-z0-9][\w-]{0,62})"), lower=True),
    S("systemd-oomd", "oom", ("due to memory pressure for", "killed"),
      "systemd-oomd killed the job's processes: the machine's memory (and swap) was under pressure (Ubuntu, Fedora "
      "workstations run it by default)",
      "systemd-oomd[939]: Killed /user.slice/user-1000.slice/user@1000.service/app.slice/run-r25ac.scope due to "
      "memory pressure for /user.slice/user-1000.slice/user@1000.service being 82.36% > 80.00% for > 20s with "
      "reclaim activity", "https://github.com/systemd/systemd (src/oom/oomd.c: 'Killed %s due to memory pressure "
      "for %s being ...')",
      "less host memory per process (DataLoader workers, the dataset in RAM), or the slice's ManagedOOM limits",
      lower=True),
    S("charm-malloc", "oom", ("could not malloc",),
      "Charm++ (NAMD, ChaNGa) could not allocate: memory ran out",
      "Could not malloc() 1073741824 bytes--are we out of memory?",
      "https://github.com/UIUC-PPL/charm (src/conv-core/memory.C: 'Could not malloc() %d bytes--are we out of "
      "memory?')",
      "fewer processes per node (more memory each), or a smaller problem per process", lower=True),
    # bash's report of a command killed by a signal in a script (Slurm's batch script: slurm_script: line N): the
    # SIGKILL alone, a candidate as torchrun's -9 is
    S("shell-killed", "oom", (": line ", " Killed"),
      "a command of the job script was killed by SIGKILL (bash's report): the OOM killer most often (a limit, a "
      "preemption or a kill -9 print the same)",
      "/var/spool/slurmd/job1234/slurm_script: line 14:  4321 Killed                  python train.py",
      "https://github.com/bminor/bash (jobs.c: a job's status, strsignal's 'Killed', with the script's line)",
      "look for the OOM killer (dmesg, sacct -j JOB -o JobID,State,MaxRSS,ReqMem); more --mem or less per rank",
      weak=True),
    S("sacct-oom-cut", "oom", ("OUT_OF_ME+",),
      "Slurm's accounting says the job (or a step) ended OUT_OF_MEMORY (sacct's column cut it): a memory kill",
      "12345.0      python     OUT_OF_ME+    0:125", "https://github.com/SchedMD/slurm (sacct: a State wider than "
      "its 10-character column ends in '+')",
      "ask for more memory (--mem / --mem-per-cpu): sacct -j JOB -o JobID,State%20,MaxRSS,ReqMem shows the peak"),
    S("pbs-cgroup-mem", "oom", ("cgroup mem", "limit exceeded"),
      "PBS's cgroup hook killed the job for going over its memory (host memory)",
      "3344110.pbs Killed Cgroup mem limit exceeded", "https://github.com/openpbs/openpbs (hooks/cgroups/"
      "pbs_cgroups.PY: 'Cgroup mem limit exceeded', 'Cgroup memsw limit exceeded')",
      "ask for more memory (#PBS -l select=...:mem=), or load less per process", lower=True),
    S("sge-hard-mem-limit", "oom", ("exceeds job hard limit", "mem"),
      "Grid Engine killed the job for going over its memory limit (h_vmem, h_rss)",
      "job 2394.1 exceeds job hard limit \"h_vmem\" of queue \"all.q@node12\" (20.29G > limit:20.00G) - sending "
      "SIGKILL", "https://github.com/hpc-gridware/clusterscheduler (execd: 'exceeds job hard limit ... sending "
      "SIGKILL')",
      "ask for more memory (qsub -l h_vmem=...; it is per slot), or load less per process",
      node=re.compile(r"of queue \"[^\"@]{0,64}@([A-Za-z0-9][\w.-]{0,62})\"")),
    S("cray-oom-killer", "oom", ("OOM killer terminated this process",),
      "the node's OOM killer killed the application (Cray ALPS' report): host memory ran out",
      "[NID 04371] 2016-10-19 22:21:28 Apid 23764253: OOM killer terminated this process.",
      "https://github.com/HPE/cray (ALPS' aprun; sites' FAQs quote it, e.g. CSCS's and ARCHER's)",
      "fewer ranks per node (aprun -N, more nodes) or less memory per rank"),
    S("numpy-unable-to-allocate", "oom", ("Unable to allocate", "for an array with shape"),
      "numpy could not allocate an array: the host ran out of memory (or the job's limit)",
      "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 28.6 GiB for an array with shape (3840, 1000000) "
      "and data type float64", "https://github.com/numpy/numpy (numpy/_core/_exceptions.py: _ArrayMemoryError)",
      "more host memory per task (--mem), or load the data in pieces (memmap, chunks)"),
    S("openfoam-new-handler", "oom", ("new cannot satisfy memory request",),
      "OpenFOAM's new-handler: an allocation failed (the host's memory or the job's limit; its text says a corrupt "
      "pointer can print it too)",
      "new cannot satisfy memory request.", "https://github.com/OpenFOAM/OpenFOAM-dev (src/OSspecific/POSIX/"
      "newError handler: 'new cannot satisfy memory request')",
      "more memory per rank (more nodes, --mem-per-cpu) or a coarser mesh per rank"),
    S("nccl-cuda-calloc", "oom", ("Failed to CUDA calloc",),
      "NCCL could not allocate its GPU buffers: the GPU is out of memory",
      "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes",
      "https://github.com/NVIDIA/nccl (src/include/alloc.h: ncclCudaCalloc's WARN)",
      "leave NCCL room: a smaller batch, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, fewer NCCL channels"),
    S("gpu-lib-alloc-failed", "oom", ("_ALLOC_FAILED",),
      "a GPU library could not allocate its workspace (cuSOLVER, cuSPARSE, cuFFT, hipBLAS: *_ALLOC_FAILED): "
      "the GPU is out of memory",
      "RuntimeError: cusolver error: CUSOLVER_STATUS_ALLOC_FAILED, when calling `cusolverDnCreate(handle)`",
      "https://github.com/pytorch/pytorch (aten/src/ATen/cuda/Exceptions.h: TORCH_CUSOLVER_CHECK; cuSPARSE's, "
      "cuFFT's and hipBLAS's *_ALLOC_FAILED the same)",
      "lower the batch or shard more; check that no other process holds the GPU (nvidia-smi)"),
    S("xla-hbm-oom", "oom", ("Ran out of memory in memory space",),
      "XLA ran out of device memory (HBM) compiling or running the program",
      "RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 20.5G of "
      "15.48G hbm.", "https://github.com/openxla/xla (its memory-space assignment's error)",
      "a smaller batch or model per device, more sharding, rematerialization"),
    S("cudnn-workspace", "oom", ("CUDNN_STATUS_NOT_ENOUGH_WORKSPACE",),
      "cuDNN had too little workspace for the algorithm it chose: the GPU's free memory most often",
      "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_ENOUGH_WORKSPACE",
      "https://github.com/pytorch/pytorch (aten/src/ATen/cudnn: cuDNN error: cudnnGetErrorString's name)",
      "a smaller batch; torch.backends.cudnn.benchmark=False; a newer torch/cuDNN", weak=True),
    S("slurm-oom-state-reason", "oom", ("JobState=OUT_OF_MEMORY",),
      "Slurm says the job ended OUT_OF_MEMORY (scontrol show job): a memory kill",
      "JobState=OUT_OF_MEMORY Reason=OutOfMemory", "https://github.com/SchedMD/slurm (job state codes)",
      "ask for more memory (--mem / --mem-per-cpu)"),
    S("slurm-exceeded-vmem", "oom", ("exceeded virtual memory limit",),
      "Slurm killed the step for going over its virtual memory limit (VSizeFactor): host memory",
      "slurmstepd: error: StepId=1234.0 exceeded virtual memory limit (8589934592 > 4294967296), being killed",
      "https://github.com/SchedMD/slurm (src/common/slurm_jobacct_gather.c: '%ps exceeded virtual memory limit "
      "(... > ...), being killed')",
      "ask for more memory (--mem / --mem-per-cpu; the virtual size counts), or map less (fewer threads, smaller "
      "arenas: MALLOC_ARENA_MAX)", node=re.compile(r"slurmstepd-" + _NODE + r": "), lower=True),
    S("torque-mem-limit", "oom", ("exceeded a memory resource limit",),
      "Torque's MOM killed the job for going over a memory limit (mem, vmem, pvmem)",
      "Job exceeded a memory resource limit (vmem, pvmem, etc.). Job was aborted",
      "https://github.com/adaptivecomputing/torque (its MOM's message msg_momjobovermemlimit)",
      "ask for more memory (#PBS -l mem= / vmem= / pmem=), or load less per process", lower=True),
    S("htcondor-mem-limit", "oom", ("gone over memory limit",),
      "HTCondor held the job for going over its memory request (request_memory)",
      "Job has gone over memory limit of 2048 megabytes. Peak usage: 2100 megabytes.",
      "https://github.com/htcondor/htcondor (the starter's hold: 'Docker job has gone over memory limit of %d Mb')",
      "raise request_memory (condor_qedit, or the submit file) and release the job", lower=True),
    S("k8s-evicted-memory", "oom", ("low on resource: memory",),
      "Kubernetes evicted the pod: its node ran low on memory (kubelet's memory pressure)",
      "Message: The node was low on resource: memory. Container httpd-container was using 22Mi, which exceeds its "
      "request of 15Mi.", "https://github.com/kubernetes/kubernetes (pkg/kubelet/eviction/helpers.go: 'The node "
      "was low on resource: %v. ')",
      "set the pod's memory request to its real use (requests = limits for a training pod), or nodes with more "
      "memory"),
    S("dask-memory-budget", "oom", ("memory budget", "restarting"),
      "Dask's nanny restarted a worker that went over its memory budget (host memory)",
      "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting",
      "https://github.com/dask/distributed (distributed/nanny.py: 'Worker exceeded %d%% memory budget. Restarting')",
      "more memory per worker (memory_limit), fewer threads per worker, or smaller partitions", lower=True),
    S("rust-alloc", "oom", ("memory allocation of", "bytes failed"),
      "a Rust program (or library: tokenizers, polars) could not allocate: host memory ran out",
      "memory allocation of 34359738368 bytes failed",
      "https://github.com/rust-lang/rust (library/std/src/alloc.rs: default_alloc_error_hook)",
      "more host memory per task (--mem), or less data per process"),
    S("r-vector", "oom", ("cannot allocate vector of size",),
      "R could not allocate a vector: host memory ran out (or the job's limit)",
      "Error: cannot allocate vector of size 11.8 Gb",
      "https://github.com/wch/r-source (src/main/memory.c: 'cannot allocate vector of size %0.1f Gb')",
      "more host memory per task (--mem), or less data at once"),
    S("flang-allocate", "oom", ("bytes requested; not enough memory",),
      "the Fortran runtime could not ALLOCATE (NVIDIA HPC SDK's nvfortran, classic flang): memory ran out (the "
      "host's, or the GPU's for a device array)",
      "0: ALLOCATE: 1683627180072 bytes requested; not enough memory",
      "https://github.com/flang-compiler/flang (its Fortran runtime: 'ALLOCATE: %lu bytes requested; not enough "
      "memory')",
      "more memory per rank (fewer ranks per node), smaller arrays per rank; a huge size is a bug"),
    S("perl-oom", "oom", ("Out of memory during request",),
      "Perl could not allocate (its 'Out of memory during request for N bytes'): host memory ran out",
      "Out of memory during request for 4088 bytes, total sbrk() is 1073741824 bytes!",
      "https://github.com/Perl/perl5 (malloc.c: 'Out of memory during request for')",
      "more host memory per task (--mem), or less data at once"),
    S("device-out-of-memory", "oom", ("OUT_OF_DEVICE_MEMORY",),
      "the GPU ran out of memory (Level Zero's, Vulkan's or SYCL's OUT_OF_DEVICE_MEMORY)",
      "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "https://github.com/oneapi-src/level-zero (ze_api.h: "
      "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY; Vulkan's VK_ERROR_OUT_OF_DEVICE_MEMORY the same)",
      "a smaller batch or model per device, or more devices"),
    S("host-out-of-memory-code", "oom", ("OUT_OF_HOST_MEMORY",),
      "the host ran out of memory (OpenCL's, Level Zero's or Vulkan's OUT_OF_HOST_MEMORY)",
      "CL_OUT_OF_HOST_MEMORY", "https://github.com/KhronosGroup/OpenCL-Headers (CL/cl.h: CL_OUT_OF_HOST_MEMORY -6)",
      "more host memory per task, or less per process"),
    S("opencl-alloc-failure", "oom", ("CL_MEM_OBJECT_ALLOCATION_FAILURE",),
      "the device could not allocate a buffer (OpenCL's CL_MEM_OBJECT_ALLOCATION_FAILURE): its memory is full",
      "CL_MEM_OBJECT_ALLOCATION_FAILURE", "https://github.com/KhronosGroup/OpenCL-Headers (CL/cl.h: "
      "CL_MEM_OBJECT_ALLOCATION_FAILURE -4)",
      "a smaller problem per device, or more devices"),
    *[S(f"memory-phrase-{i}", "oom", (phrase,) + ((mark,) if mark else ()),
        "a process could not get the memory it asked for (the host's, or the GPU's; the job's limit): its own "
        "words", learned, src, "more memory per rank (fewer ranks per node, --mem), or less data per rank; the "
        "lines before it say what was being allocated", lower=True, unless=_MEMORY_HINT)
      for i, (phrase, mark, learned, src) in enumerate(_MEMORY_PHRASES)],
    # --- round 8 (node): the node's own failure in the other tools' words (the CUDA driver API's and HIP's ECC
    # errors, NVML's lost GPU, Slurm's NODE_FAIL state as sacct and scontrol print it, Ray's NODE_DIED task error)
    S("cuda-ecc-uncorrectable", "node", ("ECC_UNCORRECTABLE",),
      "the GPU hit an uncorrectable ECC memory error (the CUDA driver API's CUDA_ERROR_ECC_UNCORRECTABLE): the "
      "hardware, not the code", "CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered",
      "https://github.com/NVIDIA/cuda-python (CUresult.CUDA_ERROR_ECC_UNCORRECTABLE = 214)",
      "drain the node and reset the GPU (clusterdoc check: ECC, row remapping); resubmit without it"),
    S("cudart-ecc-uncorrectable", "node", ("cudaErrorECCUncorrectable",),
      "the GPU hit an uncorrectable ECC memory error (the CUDA runtime's cudaErrorECCUncorrectable): the hardware",
      "cudaErrorECCUncorrectable: uncorrectable ECC error encountered",
      "https://github.com/NVIDIA/cuda-python (cudaError_t.cudaErrorECCUncorrectable = 214)",
      "drain the node and reset the GPU (clusterdoc check: ECC, row remapping); resubmit without it"),
    S("hip-ecc", "node", ("hipErrorECCNotCorrectable",),
      "the GPU hit an uncorrectable ECC memory error (ROCm's HIP runtime): the hardware, not the code",
      "hipErrorECCNotCorrectable", "https://github.com/ROCm/HIP (hipError_t: hipErrorECCNotCorrectable)",
      "drain the node and check the GPU (amd-smi / rocm-smi: ECC counts); resubmit without it"),
    S("nvml-gpu-is-lost", "node", ("GPU is lost",),
      "NVML lost the GPU (it fell off the bus or stopped answering): the node needs a reboot",
      "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system to recover this "
      "GPU", "https://github.com/NVIDIA/go-nvml (nvml.h: NVML_ERROR_GPU_IS_LOST, nvmlErrorString's 'GPU is lost')",
      "drain the node, reboot it (its kernel log: XID 79, PCIe AER errors); resubmit without it"),
    S("slurm-state-node-fail", "node", ("NODE_FAIL",),
      "Slurm's accounting says the job ended NODE_FAIL: a node of the allocation failed (slurmctld lost it)",
      "12345        train       gpu     NODE_FAIL      0:0", "https://github.com/SchedMD/slurm (job state codes: "
      "NODE_FAIL, 'terminated due to failure of one or more allocated nodes')",
      "sacct -j JOB -o JobID,State,NodeList names the nodes; resubmit without the failed one (--exclude, submit "
      "--retries); the admins: its slurmd log"),
    S("edac-uncorrected", "node", ("EDAC MC", " UE "),
      "the node's memory had an uncorrected ECC error (the kernel's EDAC): a DIMM is failing",
      "EDAC MC0: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0",
      "https://github.com/torvalds/linux (drivers/edac/edac_mc.c: the 'UE' (uncorrected) report)",
      "drain the node (its DIMM named on the line); resubmit without it"),
    S("fatal-machine-check", "node", ("Fatal machine check",),
      "the node's CPU or memory raised a fatal machine check: the kernel panicked (hardware)",
      "Kernel panic - not syncing: Fatal machine check",
      "https://github.com/torvalds/linux (arch/x86/kernel/cpu/mce/core.c: mce_panic)",
      "drain the node (mcelog / rasdaemon name the bank); resubmit without it"),
    S("nvlink-uncorrectable", "node", ("uncorrectable NVLink error",),
      "an NVLink between the node's GPUs failed (cudaErrorNvlinkUncorrectable): the hardware, not the code",
      "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution",
      "https://github.com/NVIDIA/cuda-python (cudaError_t.cudaErrorNvlinkUncorrectable = 220)",
      "drain the node (nvidia-smi nvlink -e: the link's error counters; its XIDs 74); resubmit without it"),
    S("pbs-node-down", "node", ("Job requeued, execution node", "down"),
      "PBS lost an execution node of the job (its MOM went down) and requeued the job",
      "Job requeued, execution node node12 down", "https://github.com/openpbs/openpbs (the server's log line, "
      "tracejob: 'Job requeued, execution node <node> down')",
      "nothing to fix in the job: it runs again; the admins check the node",
      node=re.compile(r"execution node " + _NODE + r" down")),
    # slurmctld's own log (pasted by admins): the node stopped answering, and the jobs it killed with it
    S("slurmctld-node-down", "node", ("not responding, setting DOWN",),
      "Slurm's controller lost a node (its slurmd stopped answering): the node died, hung or was cut off",
      "error: Nodes node03 not responding, setting DOWN", "https://github.com/SchedMD/slurm (src/slurmctld/"
      "ping_nodes.c: 'Nodes %s not responding, setting DOWN')",
      "resubmit without that node (--exclude, submit --retries); the admins: its slurmd log, its console",
      node=re.compile(r"Nodes ([A-Za-z0-9][\w.\-\[\],]{0,62}) not responding")),
    S("slurmctld-failed-node", "node", ("on failed node ",),
      "Slurm's controller killed the job because one of its nodes failed",
      "Killing JobId=48 on failed node node03", "https://github.com/SchedMD/slurm (src/slurmctld/node_mgr.c: "
      "'Killing %pJ on failed node %s')",
      "resubmit without that node (--exclude, submit --retries); the admins: its slurmd log",
      node=re.compile(r"on failed node " + _NODE)),
    S("ray-task-node-died", "node", ("Task failed due to the node (where this task was running)",),
      "Ray lost the node a task ran on (NODE_DIED: the node crashed, was preempted, or its raylet died)",
      "Task failed due to the node (where this task was running)  was dead or unavailable.",
      "https://github.com/ray-project/ray (src/ray/core_worker/task_manager.cc: rpc::ErrorType::NODE_DIED)",
      "resubmit without that node (the IP on the line after it); its kernel log (the OOM killer, XIDs) and the "
      "raylet's log say why it died"),
    # --- an application's own fatal error (session 17): HPC codes check their input, setup and numerics, print
    # what they found and abort (MPI_Abort after it: see mpi-abort). The job's own, as a Python exception is; a
    # message about memory is left to the memory rows (`unless`)
    S("lammps-error-one", "code", ("ERROR on proc ",),
      "the application stopped on an error one process found (LAMMPS' Error::one: the input, the setup or the "
      "numerics: atoms out of range, lost atoms, a list out of space)",
      "ERROR on proc 17: Out of range atoms - cannot compute PPPM (src/KSPACE/pppm.cpp:1940)",
      "https://github.com/lammps/lammps/issues/2145 (lammps#4186 the same form; src/error.cpp: Error::one)",
      "the message and the input script (timestep, neighbor and kspace settings, the domain decomposition); the "
      "proc named is the rank that failed", unless=("alloc", "memory", "Memory")),
    S("openfoam-fatal", "code", ("FOAM FATAL",),
      "the application stopped on an error in the case's setup (OpenFOAM's FatalError / FatalIOError: a "
      "dictionary, a mesh, a decomposition, a boundary condition)",
      "[57] --> FOAM FATAL ERROR: (openfoam-2306)",
      "https://github.com/fireFoam-dev/fireFoam-dev/issues/6 (hystrath#7 the same: OpenFOAM's error.C prints it)",
      "the message and the file it names (the case's dictionaries; decomposePar for every region; mpirun -np N "
      "... -parallel)", unless=("alloc", "memory", "Memory")),
    S("qe-error-routine", "code", ("Error in routine ",),
      "the application stopped on an error it found (Quantum ESPRESSO's errore: the input, a pseudopotential "
      "file, or no convergence)",
      "Error in routine tweights (1): bad Fermi energy",
      "https://github.com/QEF/q-e/blob/develop/UtilXlib/error_handler.f90 (errore: 'Error in routine ... (N):', "
      "the form it prints)",
      "the message under it (the input card, pseudo_dir and the file names, the k-points and smearing)",
      unless=("alloc", "memory", "Memory")),
    S("wrf-fatal", "code", ("FATAL CALLED",),
      "the application stopped on an error it found (WRF's wrf_error_fatal: the namelist, the input data, or "
      "the numerics: a CFL violation)",
      "FATAL CALLED FROM FILE: <stdin> LINE: 1591", "https://github.com/davegill/wrf-coop/issues/17 (its banner "
      "'-------------- FATAL CALLED ---------------' before it in newer WRF: wrf-model/WRF#1267)",
      "the lines above it in that rank's rsl.error file (the namelist, the domain's input; a smaller time_step for "
      "CFL errors)", unless=("alloc", "memory", "Memory")),
    # GROMACS' fatal-error block (gmx_fatal): "Program: gmx mdrun ... / Source file: src/gromacs/... / MPI rank: N
    # (out of M) / Fatal error: / MESSAGE": the input or the run's setup (a domain decomposition for that many
    # ranks, the topology); its memory message after the head is oom (APP_FATAL_SIGNS)
    S("gromacs-fatal", "code", ("Source file: src/gromacs/",),
      "the application stopped on an error in its input or setup (GROMACS' fatal error: the topology, the box "
      "against the number of ranks, an option)",
      "Source file: src/gromacs/domdec/domdec.cpp (line 2232)",
      "https://github.com/gromacs/gromacs/blob/main/src/gromacs/utility/fatalerror.cpp (gmx_fatal's block: its "
      "'Source file:' and 'MPI rank:' lines, the form it prints)",
      "the message after 'Fatal error:' (fewer ranks or -rdd/-dds for a domain decomposition; the .top and .mdp it "
      "names); the MPI rank line names the rank", unless=("alloc", "memory", "Memory")),
    S("gromacs-fatal-old", "code", ("Source code file: ", "gromacs"),
      "the application stopped on an error in its input or setup (GROMACS 4 and 5's fatal error: the box against "
      "the number of ranks, the topology, an option)",
      "Source code file: /tmp/gromacs_build/source/gromacs-4.6.7/src/mdlib/domdec.c, line: 3245",
      "https://github.com/Becksteinlab/MDPOW/issues/77 (GROMACS 4.6's gmx_fatal block)",
      "the message after 'Fatal error:' (fewer ranks or -rdd/-dds for a domain decomposition; the .top and .mdp it "
      "names)", unless=("alloc", "memory", "Memory")),
    # GFDL's FMS (MOM6, ACCESS-OM2, GCHP, SHiELD): mpp_error(FATAL, ...) prints "FATAL from PE N: ROUTINE: MESSAGE"
    # and aborts: the model's own check of its input, namelist or numerics, on rank N
    S("fms-fatal", "code", ("FATAL from PE",),
      "the model stopped on an error it found (FMS's mpp_error: the namelist, an input file, the layout, or the "
      "numerics: an instability, a NaN)",
      "FATAL from PE     0: btstep: number of barotropic step (nstep+nfilter) is 0",
      "https://github.com/NOAA-GFDL/FMS/blob/main/mpp/include/mpp_util.inc (mpp_error's 'FATAL from PE', the form "
      "it prints)",
      "the message: the namelist or input it names (the layout against the PEs started, the time step for an "
      "instability); the PE is the rank", unless=("alloc", "memory", "Memory")),
    # a Slurm command on a host that is no Slurm client: no slurm.conf, no configless DNS record (any command:
    # sinfo, srun, sbatch print the same)
    S("slurm-no-config", "environment", ("Could not establish a configuration source",),
      "a Slurm command found no configuration on this host (no slurm.conf, no configless SRV record): the host is "
      "not set up as a Slurm client",
      "sinfo: fatal: Could not establish a configuration source",
      "https://github.com/SchedMD/slurm/blob/master/src/common/fetch_config.c (the fatal it ends with)",
      "run it on a login node of the cluster, or point it at the cluster's config (SLURM_CONF, the conf-server)"),
    # MPICH's (and Intel MPI's) error stack for an argument a call cannot take: Open MPI's classes below in MPICH's
    # words ("Fatal error in PMPI_Comm_rank: Invalid communicator, error stack:")
    S("mpich-invalid-arg", "code", ("Fatal error in PMPI_", ": Invalid "),
      "an MPI call got an argument it cannot take (MPICH's error stack: a communicator, a rank, a count, a "
      "datatype)", "Fatal error in PMPI_Comm_rank: Invalid communicator, error stack:",
      "https://github.com/pmodels/mpich/blob/main/src/mpi/errhan/errnames.txt (**comm, **rank: the classes it "
      "prints)",
      "the call and its arguments in the stack under it (a rank past the size: the job started with fewer "
      "processes than the program expects; comm=0x0: a communicator never set)", weak=True),
    # an MPI call given an argument it cannot take: the program's bug (Open MPI's error classes, as its
    # MPI_ERRORS_ARE_FATAL handler prints them; ompi/errhandler/errcode.c)
    S("mpi-invalid-arg", "code", ("*** MPI_ERR_", ": invalid "),
      "an MPI call got an argument it cannot take (a communicator, a count, a datatype, a rank, a tag, a root): "
      "the program's call (or a handle from another library's MPI)",
      "*** MPI_ERR_COMM: invalid communicator",
      "https://github.com/NCAR/wrf_hydro_nwm_public/issues/232 (Open MPI's ompi/errhandler/errcode.c: each class's "
      "'MPI_ERR_X: invalid ...', as MPI_ERRORS_ARE_FATAL prints it)",
      "the call named on the line before (An error occurred in MPI_...) and its arguments on every rank (a count "
      "over 2^31, a rank outside the communicator, a communicator freed or never created)",
      unless=("MPI_ERR_FILE",), weak=True),
    # --- thin by themselves: a candidate with what decides, never a verdict ---
    S("store-connect-timeout", "network", ("client socket has timed out", "trying to connect to"),
      "a rank could not reach the rendezvous endpoint (MASTER_ADDR:PORT, --rdzv_endpoint) in time: the address is "
      "wrong or unreachable from this node (a firewall, another interface), or the endpoint's node was not up yet",
      "[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to 192.0.0.1:1234",
      "https://github.com/pytorch/pytorch/issues/107021",
      "from this node: nc -zv ADDR PORT while the first node's launcher runs (reachable: the first node started "
      "late, raise the timeout; not: the address or a firewall)", weak=True),
    S("nccl-system-error", "environment", ("unhandled system error",),
      "NCCL: a system call failed (a container's small /dev/shm or missing --ipc=host, no usable network "
      "interface, a resource limit): NCCL_DEBUG=WARN prints which",
      "fastmoe: Test NCCL failure common.cu:777 'unhandled system error'", "https://github.com/NVIDIA/nccl/issues/473",
      "rerun with NCCL_DEBUG=WARN (its WARN line names the call); in a container: --ipc=host or --shm-size, and "
      "--network=host", weak=True),
    S("launcher-signalled", "environment", ("death signal, shutting down workers",),
      "the launcher (torchrun's agent) was stopped from outside: SIGHUP (its terminal or ssh session closed), "
      "SIGTERM or SIGINT (scancel, a time limit, a preemption, a user): no rank failed by itself",
      "W0920 09:10:41.194000 84933 site-packages/torch/distributed/elastic/agent/server/api.py:719] Received 1 "
      "death signal, shutting down workers", "https://github.com/modelscope/ms-swift/issues/5884",
      "the signal the workers got (closing signal SIGHUP: run under sbatch, nohup or tmux; SIGTERM: sacct -j JOB "
      "-o State,Reason)", weak=True),
    # Open MPI's (ORTE, PRRTE) own help text: "lost communication with its daemon located on node: hostname: X" /
    # "with a remote daemon ... Remote daemon: [[J,0],1] on node X": "either a failure of the TCP network
    # connection to the node, or possibly an internal failure of the daemon itself". The node it names (on the
    # lines after it: why/logs.py) is the one to look at; whether it died or its link did, the line cannot say
    S("mpi-lost-daemon", "node", ("lost communication with", "daemon"),
      "mpirun lost the daemon of another node: that node died or was cut off (or its daemon crashed)",
      "ORTE has lost communication with its daemon located on node:",
      "https://github.com/aws/aws-parallelcluster/issues/301 (and radical.pilot#2164's 'with a remote daemon')",
      "that node's kernel log (the OOM killer, a reboot) and its link (clusterdoc check on it); resubmit without it",
      weak=True),
    S("orte-daemons", "environment", ("ORTE was unable to reliably start one or more daemons",),
      "mpirun could not start its daemons on the other nodes (ssh refused or asking a password, orted not on the "
      "node's PATH, a firewall): no rank ran there",
      "ORTE was unable to reliably start one or more daemons.", "https://github.com/open-mpi/ompi/issues/5639",
      "from the launching node: ssh NODE which orted (passwordless; the same PATH and LD_LIBRARY_PATH), or mpirun "
      "--prefix; the lines above it in the output often say which", weak=True),
    # round 9 (code and environment, from real pastes): MPI_Init failing in Open MPI (its error handler on the NULL
    # communicator: the launcher and the library disagree: srun without PMI/PMIx, another MPI's mpirun), the PMIx
    # client with no server to reach; NAMD's own fatal line (NAMD_die: an input or configuration it cannot read; a
    # CUDA or memory failure printed the same way is not the input's); HDF5's "already open" (the code creates a
    # file it holds open, or two ranks create one file)
    S("ompi-init-null-comm", "environment", ("An error occurred in MPI_Init",),
      "MPI_Init failed (Open MPI's handler on the NULL communicator): the MPI library could not start under this "
      "launcher (srun without the PMI/PMIx it was built for, another MPI's mpirun, a broken install)",
      "*** An error occurred in MPI_Init", "https://github.com/open-mpi/ompi/issues/7949 (mpi4py/mpi4py#141, "
      "tomgoldstein/loss-landscape#20, Valdes-Tresanco-MS/gmx_MMPBSA#26 the same)",
      "launch it with the MPI it was built against (its own mpirun, or srun --mpi=pmix/pmi2 as it was built: "
      "srun --mpi=list; ldd the binary or mpi4py for libmpi)"),
    S("pmix-client-unreachable", "environment", ("OPAL ERROR", "pmix"),
      "Open MPI's PMIx client found no server to talk to: the program was started without the launcher it was "
      "built for (srun without --mpi=pmix, a bare ./a.out, another MPI's mpirun)",
      "[cmti093:37763] OPAL ERROR: Unreachable in file pmix3x_client.c at line 111",
      "https://github.com/mpi4py/mpi4py/issues/141 (tomgoldstein/loss-landscape#20: 'Not initialized')",
      "start it with its own mpirun, or srun --mpi=pmix (srun --mpi=list); an Open MPI built --with-pmi for srun"),
    S("namd-fatal", "code", ("FATAL ERROR: ",),
      "the application stopped on its own fatal error (\"FATAL ERROR: \" as NAMD and PIO print it: an input, "
      "parameter or configuration file it cannot open or read)",
      "Reason: FATAL ERROR: Unable to access config file min.conf", "https://github.com/prody/ProDy/issues/878 "
      "(fhh2626/BFEE3#129: 'FATAL ERROR: Unable to open extended system file.'; E3SM-Project/scream#2159: PIO's)",
      "the file or parameter the line names (its path from the job's working directory, the config's keywords)",
      unless=("FOAM", "CUDA", "cuda", "GPU", "memory", "Memory", "malloc", "license", "socket", "connect",
              "No space left", "quota", "Permission denied", "Read-only", "Stale file")),  # the file system's
    S("hdf5-already-open", "code", ("unable to truncate a file which is already open",),
      "HDF5 refused to create a file the job already holds open (opened twice, never closed, or created by "
      "several ranks at once): the code's file handling",
      "  #001: H5Fint.c line 1024 in H5F_open(): unable to truncate a file which is already open",
      "https://github.com/PrincetonUniversity/FOCUS/issues/9 (hel-astro-lab/runko#28 the same)",
      "close the file before recreating it; one rank (or parallel HDF5 with MPI-IO) creates a shared file"),
    # round 9: the module system's own program missing on the node (Lmod's libexec/lmod, Environment Modules'
    # modulecmd.tcl): every `module load` of the job did nothing. A candidate alone (a profile's line); with a
    # command then not found, that command is what the module would have provided (foreign.py: module-then-missing)
    S("lmod-program-missing", "environment", ("/libexec/lmod", "No such file or directory"),
      "the node has no module system (Lmod's program is missing there): the job's `module load` lines did nothing",
      "environment: line 17: /usr/share/lmod/lmod/libexec/lmod: No such file or directory",
      "https://github.com/TACC/Lmod/issues/645 (access-ci-org/Jetstream_Cluster#18 the same)",
      "the node's image or its mount of the module tree (/usr/share/lmod); `type module` in a job on that node",
      weak=True),
    S("modulecmd-missing", "environment", ("libexec/modulecmd", "no such file or directory"),
      "the node has no module system (Environment Modules' modulecmd.tcl is missing there): the job's `module "
      "load` lines did nothing",
      "couldn't read file \"/mpcdf/soft/SLE_15/packages/x86_64/Modules/5.0.1/libexec/modulecmd.tcl\": no such file "
      "or directory", "https://github.com/pyiron/pyiron_atomistics/issues/1553",
      "the node's mount of the module tree (MODULESHOME); `type module` in a job on that node", weak=True,
      lower=True),
    # round 9: Apptainer/Singularity's same failure at debug verbosity (-d: "FATAL   [U=0,P=37]  Master()  ...")
    S("apptainer-creation-failed-debug", "environment", ("FATAL ", "container creation failed"),
      "Apptainer/Singularity could not create the container on this host (a mount it needs: /tmp, the image's loop "
      "device, a bind path)", "FATAL   [U=0,P=37]         Master()                      container creation failed: "
      "mount /tmp failed: invalid argument", "https://github.com/apptainer/singularity/issues/4017",
      "the mount the line names on this host (its /tmp, loop devices, the bind path); the same image on another "
      "node tells the host from the image"),
    # --- effects: a rank stopping because something else failed ---
    S("nccl-abort", "effect", ("To avoid data inconsistency, we are taking the entire process down",),
      "NCCL's watchdog takes the rank down after a failed or timed-out collective",
      "[E ProcessGroupNCCL.cpp:494] To avoid data inconsistency, we are taking the entire process down.",
      "https://github.com/EleutherAI/lm-evaluation-harness/pull/1404"),
    S("launcher-sigterm", "effect", ("closing signal SIGTERM",),
      "torchrun stops the other ranks after one failed",
      "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3710366 closing signal SIGTERM",
      "https://github.com/codefuse-ai/MFTCoder/issues/31"),
    S("srun-aborted", "effect", ("srun: error: ", "Aborted"),
      "a task aborted (SIGABRT: NCCL's watchdog or a C++ exception took it down)",
      "srun: error: ... Aborted (core dumped)", "https://github.com/alan-turing-institute/autocast/issues/381"),
]  # fmt: skip

# what the parsers make of a rank's traceback when no line above names its failure (never matched by needles)
FROM_TRACEBACK = [
    S("python-exception", "code", (), "a rank raised an exception: the code (or its data)",
      "ValueError: bad sample at step 5", "tests/fixtures/why/jobs/code-rank2/rank2.err (a real run)",
      "fix the code where it raised; a retry would fail the same way"),
    S("python-memory-error", "oom", (), "a rank raised MemoryError: the host ran out of memory (not the GPU)",
      "MemoryError", "https://github.com/microsoft/SoftTeacher/issues/149",
      "less host memory per rank (DataLoader workers, the dataset in RAM), or more --mem"),
    S("python-import-error", "environment", (), "a rank could not import a module: a package missing or built for "
      "another version in this environment", "ModuleNotFoundError: No module named 'torch'",
      "https://github.com/svip-lab/FastMVSNet/issues/17",
      "install the package in the job's environment (the same venv on every node: clusterdoc check)"),
    S("python-environment-error", "environment", (), "a rank's exception names its environment: a library that "
      "does not load, a full disk, /dev/shm or the open-files limit", "OSError: [Errno 28] No space left on device",
      "clusterdoc/why/foreign.py EXCEPTION_RULES (made from the exception's type and message: no line of its own)",
      "fix what the message names on the node (the library path, the disk, docker --shm-size, ulimit -n)"),
    S("python-exception-unsure", "code", (), "a rank raised an exception whose cause may be outside the code (a "
      "connection, a timeout, a CUDA error no signature names)", "ConnectionResetError: [Errno 104] Connection reset "
      "by peer", "clusterdoc/why/foreign.py EXCEPTION_RULES (made from the exception's type: no line of its own)",
      "read what it was doing: the line before the exception, the other ranks' logs, the node's (dmesg)", weak=True),
    S("python-api-mismatch", "code", (), "a call got a keyword argument the called function does not take: the "
      "library installed is another version than the code was written for (or the call is wrong)",
      "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'worker_extension_cls'",
      "clusterdoc/why/foreign.py EXCEPTION_RULES (made from the exception's type and message: no line of its own)",
      "pip show the library the call goes into, against the version the project pins (requirements, setup.py)",
      weak=True),
    S("segfault-at-exit", "code", (), "a process crashed (a segmentation fault) in a library's cleanup at exit "
      "(MPI_Finalize, atexit, a destructor): after the work, not in the job's own code",
      "Program received signal SIGSEGV: Segmentation fault - invalid memory reference. ... in PMPI_Finalize",
      "clusterdoc/why/foreign.py (a segfault signature with a cleanup frame or line around it: no line of its own)",
      "the backtrace's library (its version against the MPI, NCCL or driver it was built for); the job's output "
      "before it is complete", weak=True),
    # round 9: a segfault whose backtrace names no routine of the program (nwchem-683: an MSYS2 build's hex frames)
    S("segfault-unnamed", "code", (), "a process crashed (a segmentation fault) and its backtrace names no routine "
      "(bare addresses, `in ???`): nothing says whose code it was", "#0  0xffb69ada (after Program received "
      "signal SIGSEGV)", "https://github.com/nwchemgit/nwchem/issues/683 (foreign.py: a segfault signature with "
      "unnamed frames after it: no line of its own)",
      "rebuild with symbols (-g, -fbacktrace) and rerun: the first named frame says whose code crashed", weak=True),
    S("sigkill-loading", "oom", (), "a rank was killed by SIGKILL while the model's weights were loading: the "
      "host's OOM killer (every rank holds a copy of the weights in host memory at that point)",
      "Loading checkpoint shards:  57% 4/7 ... failed (exitcode: -9) local_rank: 0",
      "clusterdoc/why/foreign.py (a SIGKILL signature right after a loading line: no line of its own)",
      "load the weights once per node or straight to the GPU (low_cpu_mem_usage, device_map), fewer ranks per "
      "node, or more --mem; the node's dmesg shows the OOM killer"),
    S("launcher-sigkill-alone", "oom", (), "a worker was killed by SIGKILL while its launcher lived on, and the log "
      "shows no scheduler, node or user stop: the host's OOM killer (it kills the largest process: a worker)",
      "  exitcode  : -9 (pid: 14750)", "clusterdoc/why/foreign.py (torchrun's, DeepSpeed's or mp.spawn's report of "
      "one worker's SIGKILL, with no time limit, preemption, cancel or node failure line in the log)",
      "the node's dmesg shows the OOM killer (sacct -o MaxRSS under Slurm); less host memory per rank (DataLoader "
      "workers, loading the model once per node, CPU offload), or more --mem"),
    S("missing-on-a-node", "environment", (), "a task's command is not on the node where it ran, in a job whose log "
      "shows other nodes: that node lacks what the others have (its mount, its image), or it is missing everywhere",
      "slurmstepd: error: execve(): python3: No such file or directory (a log naming two nodes)",
      "clusterdoc/why/foreign.py (a missing-command signature in a log of several nodes: no line of its own)",
      "run `clusterdoc check` on the nodes (or `srun -N2 which CMD`): the node without it is drained or excluded "
      "(--exclude, submit --retries); missing on every node: install it in the job's environment", weak=True),
    S("duplicate-gpu-mpirun", "code", (), "two ranks use the same GPU under mpirun: no launcher there gives each "
      "rank its GPU, the script must pin it from its local rank (Horovod's torch.cuda.set_device(hvd.local_rank()))",
      "[1,2]<stdout>:smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 "
      "both on CUDA device 1000", "clusterdoc/why/foreign.py (Duplicate GPU detected in a log of mpirun's tagged "
      "output: no line of its own)",
      "pin the GPU in the script from the local rank (torch.cuda.set_device(hvd.local_rank()) or "
      "OMPI_COMM_WORLD_LOCAL_RANK) before any CUDA call"),
    S("module-then-missing", "environment", (), "the node has no module system, and a command the job's modules "
      "would have provided is then not found: the job ran without its software on that node",
      "environment: line 17: /usr/share/lmod/lmod/libexec/lmod: No such file or directory ... mpirun: command not "
      "found", "clusterdoc/why/foreign.py (a module-system-missing line, then a command not found: no line of its "
      "own; TACC/Lmod#645, access-ci-org/Jetstream_Cluster#18)",
      "the node's image or its mount of the module tree; `type module` and `module avail` in a job on that node"),
    # round 8 (memory): Slurm's "Exceeded job/step memory limit at some point" and a task killed by SIGKILL in the
    # same log: the older task/cgroup's memory kill (it printed no oom-kill event)
    S("slurm-memory-limit-kill", "oom", (), "the job reached its memory limit (Slurm's cgroup) and a task was killed "
      "by SIGKILL: the cgroup's memory kill (host memory)",
      "slurmstepd: error: Exceeded step memory limit at some point. (and srun: error: node: task 0: Killed)",
      "clusterdoc/why/foreign.py (a memory-limit line with a SIGKILL line in the same log: no line of its own)",
      "ask for more memory (--mem / --mem-per-cpu): sacct -j JOB -o JobID,State,MaxRSS,ReqMem shows the peak"),
    # round 9: a KeyError on a launcher's variable (dmcp-13, pyskl-34, mmdet-77, mmdet-1596, swinbert-48,
    # groupformer-5, bmtrain-19, dat-31): the script was started without the launcher it expects
    S("launcher-variable-missing", "code", (), "the script reads a variable its launcher sets (RANK, WORLD_SIZE, "
      "LOCAL_RANK, MASTER_ADDR ...) and it is not set: it was started without that launcher (python script.py, a "
      "debugger, a --launcher option that does not match how it was run)", "KeyError: 'RANK'",
      "clusterdoc/why/foreign.py (a KeyError naming a launcher variable: no line of its own; "
      "open-mmlab/mmdetection#77 and #1596, Zx55/dmcp#13)",
      "start it with the launcher it expects (torchrun --nproc_per_node N, the project's dist_train.sh, srun with "
      "its --launcher slurm), or turn its distributed mode off for one process"),
    S("nccl-failed", "peer", (), "a torch.distributed (NCCL/gloo) call failed: the lines after it or another "
      "rank's log say why", "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
      "ProcessGroupNCCL.cpp:1333, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.6",
      "https://github.com/hkproj/pytorch-transformer-distributed/issues/1",
      "rerun with NCCL_DEBUG=INFO (the WARN line says why); read the other ranks' logs", weak=True),
]  # fmt: skip
# a rank killed by SIGKILL, said alone: the host's OOM killer most often, but a time limit, a preemption, an
# eviction or a user's kill -9 print the same line; the node's kernel log or Slurm's record decides
# the rank that prints these lines reports the others (Horovod's coordinator lists the ranks it waits for): its
# prefix names the witness, not the culprit
REPORTER_SIGNS = ("horovod-stalled", "torch-dump-signal", "torch-global-timeout")
SIGKILL_SIGNS: tuple[str, ...] = ("torchrun-sigkill", "deepspeed-sigkill", "sigkill", "mpirun-sigkill",
                                  "exit-code-137", "sge-exit-137", "shell-killed", "spawn-sigkill")  # fmt: skip
# a Python launcher's report that one worker got SIGKILL while it lived on (torchrun, DeepSpeed, mp.spawn): with no
# scheduler, node or outside stop in the log, the kernel's OOM killer (mpirun's and a shell's are left thin: a node
# lost under mpirun and a job script's kill print the same)
WORKER_SIGKILL_SIGNS = ("torchrun-sigkill", "deepspeed-sigkill", "sigkill", "spawn-sigkill")
# an application's fatal-error head: its message may be on the lines after it (a memory one there is oom, not code)
APP_FATAL_SIGNS: tuple[str, ...] = ("openfoam-fatal", "qe-error-routine", "wrf-fatal", "lammps-error-one",
                                    "lammps-error")  # fmt: skip
APP_FATAL_SIGNS += ("namd-fatal", "gromacs-fatal", "gromacs-fatal-old", "fms-fatal")  # round 9
APP_FATAL_NEAR = 6
# a command missing where a task ran (environment by themselves; in a log of several nodes, maybe one node's)
MISSING_SIGNS: tuple[str, ...] = ("execve-missing", "sh-not-found")
# a request Slurm refused (at submission, or a step's): the same request is refused again, a retry cannot help
REFUSED_SIGNS: tuple[str, ...] = ("sbatch-rejected", "sbatch-failed", "srun-step-memory", "slurm-invalid-gres",
                                  "salloc-refused", "slurm-assoc-minutes", "site-hour-balance")  # fmt: skip
# round 8: the other batch systems' refusals (PBS's qsub, LSF's bsub, Grid Engine's qsub, srun's, Flux's
# allocation), and MPI launchers that could not execute the program on a node (as a missing command)
REFUSED_SIGNS += ("srun-allocate-refused", "qsub-exceeds-queue", "qsub-violates", "qsub-would-exceed",
                  "qsub-unknown-queue", "lsf-not-submitted", "sge-unable-to-run", "flux-alloc",
                  "srun-step-cpus", "torque-submit-error")  # fmt: skip
MISSING_SIGNS += ("hydra-execvp", "ompi-no-executable", "ompi-no-executable-find")
SIGKILL_SIGNS += ("k8s-exit-137",)  # round 9 (sites)
MISSING_SIGNS += ("flux-start-failed",)  # round 9 (sites)
# round 9 (sites): a request no node can satisfy, a resource request outside the queue's limits
REFUSED_SIGNS += ("slurm-node-config-unavailable", "lsf-rusage-refused")
# round 8: a file system's strerror on a Python exception's line that EXCEPTION_RULES names the same: the
# exception's sign (its file:line) says it (why/foreign.py)
DEFER_TO_EXCEPTION = ("fs-quota", "fs-stale", "fs-no-space")
# round 9: the variables a launcher sets that a script reads (a KeyError on one: started without its launcher)
LAUNCHER_VARS = frozenset(("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK", "GROUP_RANK",
                           "MASTER_ADDR", "MASTER_PORT", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
                           "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK",
                           "PMI_SIZE"))  # fmt: skip
# round 9: the module system's program missing on the node, and the lines of a command then not found
MODULE_SYSTEM_MISSING = ("lmod-program-missing", "modulecmd-missing")
COMMAND_MISSING = ("command-not-found", "sh-not-found", "execve-missing")
# a segfault's own lines (code by themselves; a cleanup frame around one makes it segfault-at-exit)
SEGV_SIGNS = ("fortran-sigsegv", "srun-task-segv", "ifort-sigsegv")
# round 9 (issue 41, hang): waits that ended, in the runtimes' own words, each thin alone (who was behind is in
# another line or another log; causes.py's _THIN says what decides)
SIGNATURES += [
    S("gloo-wait-timeout", "hang", ("Timed out waiting ", "operation to complete"),
      "a gloo send or receive waited past its timeout: the peer never reached the matching call (behind, dead, or "
      "its link)",
      "[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 30000ms for recv operation "
      "to complete", "https://github.com/QwenAudio/CosyVoice/issues/180; https://github.com/wenet-e2e/wenet/issues/"
      "2552 (the same line under a monitoredBarrier timeout)",
      "the other ranks' logs at that time (gloo's monitoredBarrier names the rank that did not arrive)", weak=True),
]  # fmt: skip
# round 10 (issue 41, platform ends): a scheduler's own end-of-job or refused-step words in forms the field prints,
# each from real pastes (real/SOURCES.md) of two projects or the tool's own message shown verbatim
SIGNATURES += [
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
    # the verbs library's own text for IBV_WC_RETRY_EXC_ERR (ibv_wc_status_str), as UCX's rc_verbs/dc_verbs, UCCL
    # and RDMA codes print it: the sender got no ACK from the peer's adapter within the retries (not "RNR retry
    # counter exceeded": a receiver without posted buffers, another failure)
    S("verbs-retry-counter-exceeded", "network", ("transport retry counter exceeded",),
      "InfiniBand/RoCE gave up on a transfer (the verbs status 12, transport retry counter exceeded): the link, a "
      "port, the fabric's configuration (RoCE's lossless settings) or the peer's adapter",
      "CQE ERROR wr_id=3 status=12(transport retry counter exceeded) opcode=1 byte_len=0 vendor_err=0xa "
      "qp_num=0x2c10", "https://github.com/uccl-project/uccl/issues/799 (openucx/ucx#2322 and #1880 print the "
      "same verbs text)",
      "the ports of both nodes (ibstat, the switch's counters; for RoCE its PFC/ECN settings); an ib_write_bw "
      "between the two nodes; resubmit without the node if one port is bad", lower=True),
    # MPICH Hydra's proxy could not resolve the launcher host's name (its own message, then "unable to connect to
    # server HOST at port N (check for firewalls!)"): name resolution between the hosts, as "Name does not resolve"
    # is above; the name is the launcher's, no node at fault. A refused connect with a resolved name stays thin
    S("hydra-host-address", "network", ("HYDU_sock_connect", "unable to get host address for "),
      "MPICH's launcher proxy could not resolve the launching host's name (DNS or /etc/hosts on the node the proxy "
      "ran on): it never connected back",
      "[proxy:0:1@gunavaran-HP-Pavilion-Notebook] HYDU_sock_connect (utils/sock/sock.c:113): unable to get host "
      "address for gunavaran-HP-ENVY-15-Notebook-PC", "https://github.com/pmodels/mpich/issues/4712 "
      "(open-mpi/ompi#7187 the same on a Raspberry Pi cluster)",
      "make every host's name resolve on every node (the same /etc/hosts or DNS; getent hosts NAME on each), or "
      "give the launcher addresses (-hosts with IPs, -iface)"),
    # slurmctld's own reason for a node whose slurmd came back with a new boot time while it was in service (sinfo
    # -R, scontrol show node: "Reason=Node unexpectedly rebooted [slurm@TIME]"): the node went down under its jobs
    S("slurm-node-rebooted", "node", ("Node unexpectedly rebooted",),
      "Slurm saw the node reboot while it was in service (its jobs there were lost): a crash, a power or hardware "
      "event, a watchdog",
      "Reason=Node unexpectedly rebooted [slurm@2022-07-23T15:31:00]",
      "https://github.com/ArjunaCluster/ArjunaUsers/issues/164 (SchedMD/slurm: slurmctld's reason string)",
      "resubmit without the node (--exclude); its admins: the node's console and kernel log around that time"),
]  # fmt: skip
# --- round 10 (HPC applications and launch set-ups), from real pastes (real/SOURCES.md) ---
SIGNATURES += [
    # Open MPI's help text wraps its "could not access or execute" over two lines: its first line alone says it
    # (fastpm-101, hyphy-1751: the program not there or not built, as pasted from three sites)
    S("ompi-no-executable-wrapped", "environment",
      ("unable to launch the specified application as it could not access",),
      "Open MPI's mpirun could not execute the program on a node (not there, not built, not executable); the lines "
      "after it name the executable and the node",
      "mpirun was unable to launch the specified application as it could not access",
      "https://github.com/veg/hyphy/issues/1751 (and fastpm/fastpm#101: Open MPI's help-orterun.txt as printed)",
      "the program's path on every node (an absolute path, a shared file system), its permissions; that it was "
      "built (an MPI build's own make target)"),
    # the program is there but the launcher may not execute it (EACCES): its mode, a directory given as the
    # program, a noexec mount. Three launchers' words: slurmstepd's execve(), Hydra's execvp, Open MPI's odls
    # help text (wandbonslurm-5, boutdev-1599, srnmultilabel-21)
    S("execve-permission", "environment", ("execve(): ", "Permission denied"),
      "Slurm could not start the task's command: it may not be executed there (not executable, a directory, a "
      "noexec mount)",
      "slurmstepd: error: execve(): start-agent.sh: Permission denied",
      "https://github.com/elyall/wandb_on_slurm/issues/5",
      "ls -l the command on the node (chmod +x; #! names an interpreter there); call it through its interpreter "
      "(bash script.sh, python script.py)"),
    S("ompi-execve-failed", "environment", ('tried to fork a new process via the "execve" system call',),
      "Open MPI could not execute the program (the lines after it give the error: Permission denied is a file "
      "not executable or a directory given as the program)",
      'Open MPI tried to fork a new process via the "execve" system call but',
      "https://github.com/zhufengx/SRN_multilabel/issues/21 (Open MPI's help-orte-odls-default.txt)",
      "the Application name it prints: ls -l it on the node (a directory? chmod +x?), or run it through its "
      "interpreter"),
]  # fmt: skip
# round 10: MPICH's launcher (Hydra: mpiexec, and Intel MPI's) rejecting an option only Open MPI's mpirun takes:
# the mpiexec on the PATH is MPICH's while the script, wrapper or tool was written for Open MPI (radiasoft-183's
# --mca, picongpu-4739's -am, torchpack-36's --allow-run-as-root: each thread settled on the MPI installed or
# found). Another option (a typo, pmi_args from a program of another MPI started alone) stays thin
_WORD_GOES_ON = "abcdefghijklmnopqrstuvwxyz0123456789_-"  # "am" is not "amd64": the option ends the line
OPENMPI_ONLY_OPTIONS = ("mca", "gmca", "am", "amca", "allow-run-as-root", "oversubscribe", "npernode", "tag-output",
                        "report-bindings", "display-map")  # fmt: skip
SIGNATURES += [
    S(f"hydra-rejects-openmpi-{opt}", "environment", ("match_arg (", f": unrecognized argument {opt}"),
      "MPICH's mpiexec (Hydra) rejected an option only Open MPI's mpirun takes: the MPI on the PATH is not the one "
      "the script or tool was written for (two MPI installs mixed)",
      "[mpiexec@rs14.local] match_arg (utils/args/args.c:159): unrecognized argument mca",
      "https://github.com/radiasoft/devops/issues/183 (and ComputationalRadiationPhysics/picongpu#4739, "
      "zhijian-liu/torchpack#36)",
      "which mpiexec and the MPI the program was built with (ldd PROGRAM | grep mpi): load that MPI's module, or "
      "use the launcher options of the MPI that is there",
      unless=tuple(f": unrecognized argument {opt}{c}" for c in _WORD_GOES_ON))
    for opt in OPENMPI_ONLY_OPTIONS
] + [
    S("hydra-unrecognized-arg", "environment", ("match_arg (", ": unrecognized argument "),
      "MPICH's mpiexec (Hydra) rejected an option it was given: another MPI's option, a typo, or a program of "
      "another MPI started without its launcher (pmi_args)",
      "[mpiexec@r013.opa.vera.psc.edu] match_arg (utils/args/args.c:159): unrecognized argument pmi_args",
      "https://github.com/amusecode/amuse/issues/681",
      "the option named: which MPI's launcher takes it (which mpiexec; ldd PROGRAM | grep mpi)", weak=True),
    # CP2K's input parser on a keyword or section it does not know, before its [ABORT] banner (cp2k-1195's
    # subsection, cp2k-3407's keyword): the input file
    S("cp2k-unknown-input", "code", ("Possible matches for unknown ",),
      "CP2K stopped on its input: a keyword or section it does not know (a typo, a name from another CP2K "
      "version); the lines after it list the closest names",
      " Possible matches for unknown keyword ", "https://github.com/cp2k/cp2k/issues/3407 (and cp2k/cp2k#1195)",
      "the input against the manual of the CP2K version that ran (cp2k --version; the names listed after it)"),
]  # fmt: skip
# round 10: the MPI launcher itself crashed (mpirun/orterun, its daemon orted, PRRTE's prterun/prted), not the
# program: a frame of the launcher's own binary in the crash's backtrace (ompi-7483's "[ 5] mpirun[0x400f7a]",
# ompi-1916's gdb "in orterun ()"), or the shell's report of the daemon's segfault (ompi-release-875). Its version's
# bug or its build: the MPI installation, whatever the job runs
_LAUNCHER_CRASHED = (
    "the MPI launcher itself crashed (mpirun, its daemon orted or PRRTE's), not the program: its "
    "version's bug or its build (the MPI installation)"
)
_LAUNCHER_NEXT = (
    "another Open MPI version or build (the site's other MPI module); the launcher options that reach "
    "the crashing code (stdin forwarding, --display-map) left out; the MPI's issue tracker"
)
SIGNATURES += [
    S("launcher-frame-mpirun", "environment", ("mpirun[0x",), _LAUNCHER_CRASHED,
      "[gadi-cpu-clx-2532:87043] [ 5] mpirun[0x400f7a]",
      "https://github.com/open-mpi/ompi/issues/7483 (Open MPI's signal handler's frame list)", _LAUNCHER_NEXT),
    S("launcher-frame-gdb", "environment", (" in orterun ()",), _LAUNCHER_CRASHED,
      "#5  0x00000000004016b2 in orterun ()", "https://github.com/open-mpi/ompi/issues/1916", _LAUNCHER_NEXT),
    S("orted-segfault", "environment", ("Segmentation fault", "bin/orted "), _LAUNCHER_CRASHED,
      "bash: line 1:   823 Segmentation fault      (core dumped) /labhome/valentinp/workspace/ompi-release/"
      "build_v1.10_rel/install/bin/orted --hnp-topo-sig 2N:2S:2L3:16L2:16L1:16C:16H:x86_64",
      "https://github.com/open-mpi/ompi-release/issues/875", _LAUNCHER_NEXT),
]  # fmt: skip
# round 10: NetCDF's own error strings (nc_strerror: "NetCDF: HDF error", "NetCDF: Invalid dimension ID or name"),
# as a model's check routine prints them: the file (missing, unreadable, another format, written by another library
# build) or the code's I/O calls; thin alone (globalworkflow-1256: Hera's maintenance; e3sm-1010: input files'
# permissions; ngen-749, asgs-984: unsettled)
SIGNATURES += [
    S("netcdf-error", "environment", ("NetCDF: ",),
      "the NetCDF library failed on a file the model reads or writes (the file, its permissions or format, the "
      "library build, or the code's I/O calls)",
      "  1219:  file: module_write_netcdf.F90 line:          663 NetCDF: HDF error",
      "https://github.com/NOAA-EMC/global-workflow/issues/1256 (and E3SM-Project/E3SM#1010, NOAA-OWP/ngen#749)",
      "the file named before it: ls -l it (readable by the job?), ncdump -h it (its format and dimensions); the "
      "NetCDF/HDF5 modules the model was built with against those loaded", weak=True),
]  # fmt: skip
# a launcher that could not execute the program, like a command missing: in a log of several nodes, maybe one node's
MISSING_SIGNS += ("ompi-no-executable-wrapped", "execve-permission", "ompi-execve-failed")
# round 10 (issue 41, hang): py-spy's dump of a process, in its own header ('Thread 0x7FA6E7C01740 (idle):
# "MainThread"', 'Thread 27321 (active): "MainThread"'): someone dumped a stuck rank. The stack alone names no cause
# (fairseq-4816: rank 0 in its data iterator's queue; transformers-22363: in DeepSpeed's model broadcast;
# DeepSpeed-6524, unsettled: in backward): thin, hang first (causes.py's _THIN says what decides)
SIGNATURES += [
    S("pyspy-dump", "hang", ('): "MainThread"', "Thread "),
      "a py-spy dump of a stuck process (its threads' stacks): where it waits, not why",
      'Thread 0x7FA6E7C01740 (idle): "MainThread"',
      "https://github.com/facebookresearch/fairseq/issues/4816; https://github.com/huggingface/transformers/issues/"
      "22363; https://github.com/deepspeedai/DeepSpeed/issues/6524 (py-spy's header, as each paste shows it)",
      "dump every rank at the same moment (py-spy dump --pid on each, or clusterdoc stacks under clusterdoc "
      "submit): the rank not in the collective the others wait in is the one behind", weak=True),
]  # fmt: skip
_BY_NAME = {s.name: s for s in SIGNATURES + FROM_TRACEBACK}


def get(name: str) -> Signature:
    return _BY_NAME[name]


_FIRST = [(s.needles[0], s.lower, s) for s in SIGNATURES]
# A line holds a signature's first needle only if its lowercase holds one of these keys (each needle's lowercase
# holds one: the keys were picked greedily over the needles, and a needle that holds none is its own key). Most
# lines of a training log hold none: one pass of ~60 short checks instead of one per signature (benchmarks.md).
_KEYS_PICKED = (
    "error", "mory", "fail", "able", "not ", "ted ", "term", "exce", " to ", "kill", "the ", "vice", "exit", "atal",
    "job ", "has ", " rank", "sion", "nnec", "sign", "cate", "net/", "match", "stat", "ere ", "cati", "med ", "exec",
    "got ", "allo", "ce f", "n't ", " is ", "mpi_", "addr", "ment", "and ", "qsub: ", "rtion ", "d sy", "led ",
    "handle", "dac mc", " h_r", "inary", "ccl ", "ed p", " bui", "sted", "out_", "rive", "bin/sh", "vate", "er.c",
    "oom-", "runt", "th <= ", "cgrp", "roup ", ": line", " xid",
)  # fmt: skip
_KEYS = _KEYS_PICKED + tuple(
    sorted(
        {n.lower() for n, _, _ in _FIRST}
        - {n.lower() for n, _, _ in _FIRST if any(k in n.lower() for k in _KEYS_PICKED)}
    )
)


def match(line: str) -> Signature | None:
    """The first signature that matches the line (its first LINE_CAP characters), or None."""
    line = line[:LINE_CAP]
    low = line.lower()
    if not any(k in low for k in _KEYS):
        return None
    for needle, lower, sig in _FIRST:
        if needle in (low if lower else line) and sig.matches(line, low):
            return sig
    return None
