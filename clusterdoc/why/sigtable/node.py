"""The `node` failure signatures: the node itself: its GPU (Xid, ECC, fallen off the bus), its memory or disk
hardware, a node the scheduler or runtime says died.

One entry each (why/signature.py says what an entry holds). Within this table the first entry that matches a line
wins; why/signatures.py says the order of the tables.
"""

from __future__ import annotations

import re

from clusterdoc.why.signature import NODE, S, Signature

SIGNATURES: list[Signature] = [
    S("slurm-node-failure", "node", ("Node failure on ",),
      "Slurm lost a node of the allocation (it stopped answering slurmctld)",
      "salloc: error: Node failure on worker-1", "https://github.com/nebius/soperator/issues/854",
      "resubmit without that node (--exclude); check it (clusterdoc check, its slurmd log)",
      node=re.compile(r"Node failure on " + NODE)),
    # the node's prolog (the site's script slurmd runs before a job) failed: slurmctld drains the node ("Prolog
    # error") and revokes the allocation (srun's and salloc's "Prolog failure on node N", hpcfund-69)
    S("slurm-prolog-failure", "node", ("Prolog failure on node ",),
      "the node's Slurm prolog failed (the site's start-up script): Slurm drains the node and revokes the job",
      "salloc: Prolog failure on node k003-006", "https://github.com/AMDResearch/hpcfund/issues/69",
      "resubmit without that node (--exclude); the site's admins: its slurmd log and prolog (sinfo -R names it)",
      node=re.compile(r"Prolog failure on node " + NODE)),
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
    S("flux-node-failure", "node", ("node failure on ", " rank "),
      "Flux lost a node under the job (its broker stopped answering: the node crashed, rebooted or was cut off)",
      "fdFmCpYwQZ5  node-failure              node failure on elcap8767 (shell rank 1127)",
      "https://github.com/flux-framework/flux-core/issues/6653",
      "resubmit without that node (flux run --requires=-host:NODE); its console and kernel log",
      node=re.compile(r"node failure on " + NODE)),
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
    S("gpu-no-handle", "node", ("Unable to determine the device handle for GPU",),
      "the driver lost a GPU (nvidia-smi cannot reach it): the GPU or its PCIe link failed",
      "Unable to determine the device handle for GPU0000:03:00.0: Unknown Error",
      "https://github.com/rwth-i6/returnn/issues/1486",
      "drain the node, reboot it (its kernel log: XIDs, PCIe AER errors); resubmit without it"),
    S("gpu-lost", "node", ("ERROR_GPU_IS_LOST",),
      "NVML lost the GPU (it fell off the bus)",
      "failed to get device remapped rows: ERROR_GPU_IS_LOST", "https://github.com/leptonai/gpud/issues/604",
      "drain the node, reboot it; resubmit without it"),
    S("slurm-script-missing", "node", ("execve(): ", "slurm_script", "No such file or directory"),
      "Slurm could not execute the batch script it wrote on the node (its spool directory, or the script's #! "
      "interpreter, missing there)",
      "slurmstepd: error: execve(): /tmp/slurmd/job00089/slurm_script: No such file or directory",
      "tests/fixtures/why/heldout/SOURCES.md (arjuna-46: a GPU node's Slurm tmp directory)",
      "the node's slurmd log and SlurmdSpoolDir (df, its mount); the script's first line (#!) exists on the node; "
      "resubmit without the node meanwhile (--exclude)",
      node=re.compile(r"slurmstepd-" + NODE + r": "), weak=True),
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
    # session 21: the kernel's own tag for a hardware error it was told of (HW_ERR, "[Hardware Error]: ": mce,
    # GHES/APEI, EDAC's "HANDLING MCE MEMORY ERROR"): a fault of that node's CPU, memory or PCIe devices
    S("kernel-hardware-error", "node", ("[Hardware Error]: ",),
      "the node's kernel logged a hardware error (a machine check of its CPU or memory, a PCIe device's error)",
      "[  +0.000013] mce: [Hardware Error]: Machine check events logged",
      "https://github.com/torvalds/linux (include/linux/printk.h: HW_ERR; arch/x86/kernel/cpu/mce)",
      "the node's kernel log around it (mcelog, ras-mc-ctl --errors, edac-util); drain it, resubmit without it"),
    S("edac-mce-memory", "node", ("MCE MEMORY ERROR",),
      "the node's memory controller reported a memory error to the kernel (EDAC): a DIMM is failing",
      "[  +0.000001] EDAC skx MC3: HANDLING MCE MEMORY ERROR",
      "https://github.com/torvalds/linux (drivers/edac/skx_common.c: skx_mce_output_error)",
      "the node's kernel log around it (the DIMM: ras-mc-ctl --errors, edac-util); drain it, resubmit without it"),
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
      node=re.compile(r"execution node " + NODE + r" down")),
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
      node=re.compile(r"on failed node " + NODE)),
    S("ray-task-node-died", "node", ("Task failed due to the node (where this task was running)",),
      "Ray lost the node a task ran on (NODE_DIED: the node crashed, was preempted, or its raylet died)",
      "Task failed due to the node (where this task was running)  was dead or unavailable.",
      "https://github.com/ray-project/ray (src/ray/core_worker/task_manager.cc: rpc::ErrorType::NODE_DIED)",
      "resubmit without that node (the IP on the line after it); its kernel log (the OOM killer, XIDs) and the "
      "raylet's log say why it died"),
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
    # slurmctld's own reason for a node whose slurmd came back with a new boot time while it was in service (sinfo
    # -R, scontrol show node: "Reason=Node unexpectedly rebooted [slurm@TIME]"): the node went down under its jobs
    S("slurm-node-rebooted", "node", ("Node unexpectedly rebooted",),
      "Slurm saw the node reboot while it was in service (its jobs there were lost): a crash, a power or hardware "
      "event, a watchdog",
      "Reason=Node unexpectedly rebooted [slurm@2022-07-23T15:31:00]",
      "https://github.com/ArjunaCluster/ArjunaUsers/issues/164 (SchedMD/slurm: slurmctld's reason string)",
      "resubmit without the node (--exclude); its admins: the node's console and kernel log around that time"),
    # session 18 (issue 41): from the sealed set heldout-fresh6's misses, read after its score was recorded (each
    # the tool's own message, its source beside it)
    # NVML (nvidia-smi) cannot reach a GPU it lists: the GPU is lost (fallen off the bus, XID 79), the node's
    S("nvml-device-handle-unknown", "node", ("Unable to determine the device handle for GPU", "Unknown Error"),
      "the node lost a GPU: NVML cannot reach it (fallen off the bus, a hardware or driver fault)",
      "Unable to determine the device handle for GPU 0000:1C:00.0: Unknown Error",
      "https://github.com/lyulyul/shine-cluster/issues/171 (nvidia-smi's words, NVML_ERROR_UNKNOWN)",
      "drain the node and have its GPU reset or replaced (its XIDs in the kernel log; clusterdoc check on it); "
      "resubmit without it"),
    # slurmstepd could not kill the step's processes (stuck in the kernel: a hung file system, a GPU): Slurm drains
    # the node ("Kill task failed"); the step was ended for some other reason first: a candidate
    S("slurm-stepd-not-ending", "node", ("DUE TO JOB NOT ENDING WITH SIGNALS",),
      "the node could not kill the job's processes (stuck in the kernel: a hung file system or GPU); Slurm drains it",
      "[63532.0] error: *** STEP 63532.0 STEPD TERMINATED ON cn106 AT 2020-12-14T09:44:56 DUE TO JOB NOT ENDING "
      "WITH SIGNALS ***", "https://github.com/ai4d-iasc/trixie/issues/45 (slurmstepd's own line)",
      "sinfo -R (the node drained, 'Kill task failed'); its kernel log for processes in D state", weak=True,
      node=re.compile(r" ON " + NODE + r" AT ")),
    # session 21 (issue 41): the kernel's own reports of a node's fault beside the GPU's: a CPU stuck in the kernel
    # (the watchdog's soft lockup: a hung file system or a failing device under it), a local disk's errors
    S("kernel-soft-lockup", "node", ("BUG: soft lockup",),
      "a CPU of the node was stuck in the kernel (the soft-lockup watchdog): a hung file system or driver on it",
      "[ 1234.567] NMI watchdog: BUG: soft lockup - CPU#12 stuck for 22s! [python:12345]",
      "https://github.com/torvalds/linux (kernel/watchdog.c: the soft lockup report)",
      "the node's kernel log around it (the stuck task's frames: a Lustre/NFS client, a driver); drain it if it "
      "repeats, resubmit without it"),
    S("kernel-fs-disk-error", "node", ("-fs error (device ",),
      "the node's file system reported an error on its disk (EXT4/XFS: a failing or full local disk)",
      "kernel: EXT4-fs error (device nvme0n1p1): ext4_find_entry:1455: inode #2: comm python: reading directory "
      "lblock 0", "https://github.com/torvalds/linux (fs/ext4/super.c: __ext4_error's message)",
      "the node's disk (smartctl, dmesg for the device's I/O errors); drain it, resubmit without it"),
    S("kernel-block-io-error", "node", ("I/O error, dev ",),
      "a disk of the node returned I/O errors (the kernel's block layer): failing storage on that node",
      "blk_update_request: I/O error, dev nvme0n1, sector 123456 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0",
      "https://github.com/torvalds/linux (block/blk-core.c: the I/O error report)",
      "the device it names on that node (smartctl, nvme smart-log); drain it, resubmit without it"),
    # session 22 (issue 41): the workflow manager's report of sacct's states NODE_FAIL and BOOT_FAIL
    S("snakemake-slurm-node-fail", "node", ("SLURM status is: 'NODE_FAIL'",),
      "a node of the workflow's Slurm job failed (sacct's state NODE_FAIL)",
      "    message: SLURM-job '4242' failed, SLURM status is: 'NODE_FAIL'.",
      "https://github.com/snakemake/snakemake-executor-plugin-slurm (the executor's message for a job sacct "
      "reports in a failed state)",
      "rerun it (Slurm drains the node); sacct -j ID -o NodeList names the node for the admins"),
    S("snakemake-slurm-boot-fail", "node", ("SLURM status is: 'BOOT_FAIL'",),
      "the workflow's Slurm job could not start: its node failed to boot (sacct's state BOOT_FAIL)",
      "    message: SLURM-job '4242' failed, SLURM status is: 'BOOT_FAIL'.",
      "https://github.com/snakemake/snakemake-executor-plugin-slurm (the executor's message for a job sacct "
      "reports in a failed state)",
      "rerun it; if it repeats, the admins look at the node (sacct -j ID -o NodeList)"),
    # session 24 (heldout-fresh17, after it was scored): NCCL's NVLink SHARP setup failed in a CUDA call on an
    # NVSwitch node; both threads settled on the node's Fabric Manager restarted without a GPU reset (nccl-976,
    # nccl-1488), cleared by rebooting the node
    S("nccl-nvls-cuda-failure", "node", ("transport/nvls.cc", "Cuda failure"),
      "NCCL's NVLink SHARP (NVLS) setup failed in a CUDA call: the node's NVSwitch fabric state (its Fabric Manager "
      "restarted without a GPU reset, or not running)",
      "transport/nvls.cc:165 NCCL WARN Cuda failure 'invalid argument'",
      "https://github.com/NVIDIA/nccl/issues/976; https://github.com/NVIDIA/nccl/issues/1488",
      "on that node: nvidia-smi -q (Fabric State) and the Fabric Manager's log; reset its GPUs or reboot it; "
      "NCCL_NVLS_ENABLE=0 runs without NVLS meanwhile"),
    # PSM (Intel/QLogic TrueScale, /dev/ipath) and PSM2 (Omni-Path, /dev/hfi1) print "HOST.PID" then the error: the
    # adapter's driver failed to start on that node (ALaDyn-42: some nodes of the cluster, a broken driver)
    S("psm-driver-init", "node", ("Driver initialization failure on /dev/",),
      "the node's fabric adapter driver failed to start (PSM's /dev/ipath or PSM2's /dev/hfi1): that node cannot "
      "reach the fabric",
      "hpc-200-06-22.cr.cnaf.infn.it.25191Driver initialization failure on /dev/ipath (err=23)",
      "https://github.com/ALaDyn/ALaDyn/issues/42",
      "that node's adapter and driver (lsmod, the adapter's state; the site's admins); exclude it meanwhile",
      node=re.compile(r"^([A-Za-z0-9][\w.-]{0,120}?)\.\d{1,10}Driver initialization")),
    # session 27 (heldout-fresh32, after it was scored): CUDA's cudaErrorIllegalInstruction (715): a kernel ran an
    # instruction the GPU refused: a defective GPU or its PCIe link (darknet#5547: it went away with the other GPUs
    # unplugged), or a kernel's bug; a candidate
    S("cuda-illegal-instruction", "node", ("an illegal instruction was encountered",),
      "a GPU kernel hit an illegal instruction: the GPU or its link (hardware), or a bug in the kernel",
      "CUDA Error: an illegal instruction was encountered: No error",
      "https://github.com/AlexeyAB/darknet/issues/5547",
      "the node's kernel log for XIDs (clusterdoc check on it); the same run on another GPU or node decides",
      weak=True),
]  # fmt: skip
