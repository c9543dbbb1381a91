"""What a job's output says about how it ended (pure: lines in, facts out; linear and bounded).

`scan(lines)` reads any iterable of lines once (a file, a stream, the tail-first reader's chunks split into
lines) and keeps bounded facts: per rank (from the launchers' prefixes, prefix.py) the exception it died of,
the signature lines it printed (signatures.py), the peers it lost; the NCCL watchdog's timeouts by rank;
Slurm's end and task lines; torchrun's failure table. Only the first LINE_CAP characters of a line are
looked at, every number has a bounded number of digits, and no pattern backtracks over a line: the cost is
linear in the input whatever it holds. The older helpers below (one text in, one fact out) are kept for the
job-folder side (why/evidence.py, launch/outcome.py) and share the same bounds.

The forms are the real ones of torch, gloo, NCCL, CUDA and Slurm (fixtures with their sources in
tests/fixtures/why/real/SOURCES.md and tests/fixtures/why/logs/SOURCES.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from clusterdoc.why import prefix, signatures, vocab
from clusterdoc.why.signatures import LINE_CAP

MAX_FRAMES = 64  # frames kept per traceback (the innermost ones)
MAX_HITS = 2000  # signature lines kept per log (the first ones: the cause is early, effects repeat)
MAX_HITS_PER_SIG = 64  # of one signature: a flood of one line (every rank's "Connection reset") crowds out no other
MAX_PEERS = 16
MAX_PHASE = 64
# words of a library's cleanup after the work (a backtrace's frame, a log line): a crash there is not the job's code
CLEANUP_WORDS = ("finalize", "Finalize", "FINALIZE", "atexit", "at_exit", "cleanup", "Cleanup", "__del__",
                 "destroy_process_group", "shutdown", "Shutdown", "teardown", "_fini", "exit_handler")  # fmt: skip
# a model's weights being read (transformers' progress bar, a framework's own line): host memory's peak
LOADING_WORDS = ("Loading checkpoint shards", "Loading checkpoint", "loading checkpoint", "Loading model",
                 "Loading weights", "Loading safetensors")  # fmt: skip
# gloo found no address for the host's name and bound to loopback (ProcessGroupGloo.cpp's warning): its peers on
# other nodes cannot reach it (session 22: vllm-7074)
LOOPBACK_WORDS = ("loopback address as fallback",)
# data prepared by one process while the others wait (a progress bar's description: HF datasets' Map/Filter, a
# tokenizer, a script's own preprocessing): with a bar unfinished when a wait times out, that process is the one
# the others waited for
PREP_WORDS = ("Map", "Filter", "okeniz", "Running tokenizer", "Grouping texts", "Generating", "Preparing",
              "Preprocessing", "Processing", "Packing", "Converting", "Loading dataset", "Indexing")  # fmt: skip
# what the others print when a wait times out: torch's watchdog, the c10d store's socket, gloo's monitoredBarrier,
# the store based barrier
WAIT_WORDS = ("aught collective operation timeout", "received errors while waiting", "failed to pass monitoredBarrier",
              "store based barrier", "timed out after",
              "waitForInput")  # c10d's store socket, printed under the bar (axolotl-2684, MedicalGPT-425)  # fmt: skip
PREP_NEAR = 3  # lines from an unfinished bar to the wait that timed out (tqdm's line is often glued to it)
# round 9 (issue 41): work one process does alone (a checkpoint's save, an evaluation), said by the last lines before
# the others' wait timed out: that process is the one they waited for (ace-851 "Saving latest checkpoint" 20 min,
# its timeout, before rank 7's watchdog; ufld-119 "Evaluating the results..."; mmdet-11096 "Evaluate annotation
# type"). A save or an evaluation that says it finished ("saved", "is ready now": OneBit-8, unsettled) is not one
# round 9: a rank that reached gloo's monitoredBarrier and lost rank 0 on the way (ProcessGroupGloo.cpp: "Rank 3
# successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check
# rank 0 logs for faulty rank."; deepspeed-4488, CosyVoice-180): the rank it names is the one to look at
_GLOO_BLAMES = re.compile(r"Rank (\d{1,7}) successfully reached monitoredBarrier, but received errors while waiting "
                          r"for send/recv from rank (\d{1,7})")  # fmt: skip
# round 9: torch's store based barrier of init_process_group/new_group counts the ranks that arrived
# (distributed_c10d.py: "... (world_size=8, worker_count=1, timeout=0:30:00)"; LlamaFactory-2485, efficientteacher-85)
_STORE_BARRIER = re.compile(r"\(world_size=(\d{1,7}), worker_count=(\d{1,7}), timeout=")
# the TCPStore server's own count at startup (TCPStore.cpp: "Timed out after 1801 seconds waiting for clients. 3/4
# clients joined.")
_CLIENTS_JOINED = re.compile(r"waiting for clients\. (\d{1,7})/(\d{1,7}) clients joined")
# round 9: JAX's coordination service names the tasks a barrier timed out waiting for, one a line (levanter-432,
# orbax's async checkpoint barrier; xla/tsl coordination_service.cc: "Some timed out task names:" lists the pending)
_JAX_PENDING_HEAD = "imed out task names:"
_JAX_TASK = re.compile(r"\s{0,8}/job:[\w-]{1,64}/replica:\d{1,6}/task:(\d{1,7})\s{0,4}$")
# round 9: a traceback that cuts into a data-preparation bar which had run torch's default collective timeout (30 min,
# 98 % of it): another process's wait ended there (transformers-17106 at 32:12, MedicalGPT-425 at 29:46,
# llamafactory-2424 at 29:55, axolotl-2684 at 29:58 - the last three with the wait's own words as well)
DEFAULT_WAIT_S = 1764
_ELAPSED = re.compile(r"\[(?:(\d{1,3}):)?(\d{1,2}):(\d{2})<")
# round 9: tqdm rounds 1368806/1370895 up to "100%" (MedicalGPT-425): the counts after the bar decide
_BAR_COUNT = re.compile(r"\|\s{0,4}(\d{1,12})/(\d{1,12}) \[")
_ALONE = re.compile(
    r"\b(?:Saving|saving)\b[^\n]{0,60}?\b(?:checkpoint|model|weights)|\bEvaluating\b|\bEvaluate annotation|"
    r"\bRunning (?:[Ee]valuation|[Vv]alidation)\b|\bValidating\b"
)
_ALONE_DONE = re.compile(r"\b(?:[Ss]aved|is ready|[Ff]inished|[Dd]one|[Cc]ompleted)\b")
_BAR = re.compile(r"(\d{1,3})%\|")
# round 10 (issue 41): a frame of a block the main process runs first while every other rank waits at its barrier:
# transformers' TrainingArguments.main_process_first (LlamaFactory-1196, MedicalGPT-425, LlamaFactory-7233),
# accelerate's Accelerator.main_process_first, torch_distributed_zero_first (YOLOv5's utils, YOLOv5-4480),
# as Python prints the frame ('File "...", line N, in NAME') or py-spy does ('NAME (file.py:N)')
_FIRST_BLOCK = re.compile(
    r"(?:, in |^\s{0,8})(?:main_process_first|local_main_process_first|torch_distributed_zero_first)\b"
    r"(?:\s{0,8}$|\s{0,4}\()"
)
# round 9: a frame of a native backtrace (gfortran's "Backtrace for this error:", glibc's): "#3  0x4429e55 in NAME"
# names a routine; "#0  0xffb69ada" or "in ???" names none (a stripped build: nothing says whose code crashed)
_NATIVE_FRAME = re.compile(r"\s{0,8}#\d{1,3}\s{1,4}0x[0-9a-fA-F]{1,16}(?:\s{1,4}in\s{1,4}(\S{1,200}))?")
# session 29: a frame of Intel Fortran's traceback (forrtl): "IMAGE  PC(16 hex)  ROUTINE  LINE  SOURCE"; a routine
# "Unknown" (or libc's) names none (quick-45: every frame Unknown, the host's memory ran out)
_IFORT_FRAME = re.compile(
    r"\s{0,8}\S{1,64}\s{1,24}[0-9A-Fa-f]{16}\s{1,24}(\S{1,200})\s{1,24}(?:Unknown|\d{1,9})\s{1,24}\S{1,200}\s*$"
)
# torch's desync report (TORCH_NCCL_DESYNC_DEBUG, the watchdog's "To our best knowledge, the lagging/dead/mismatched
# ranks that caused the desync are:"), then one line per group of ranks
_LAGGING_HEAD = "the lagging/dead/mismatched ranks"
_NEVER_JOINED = re.compile(r"ranks \[(\d{1,7}(?:, \d{1,7}){0,63})\] are the lagging ranks")  # its other form
_LAGGING = re.compile(r"\s{0,40}(?:- )?\[(\d{1,7}(?:, \d{1,7}){0,63})\] ((?:finished|joined)[^\n]{0,160})")
MAX_RANKS_LISTED = 1 << 16  # missing ranks are inferred only below this world size

# a frame line of a Python traceback; frames in these folders are libraries, not the user's code
_FRAME = re.compile(r'\s{0,16}File "([^"\n]{1,1024})", line (\d{1,9}), in (\S{1,200})')
_LIBRARY = ("/site-packages/", "/dist-packages/", "/lib/python3", "/clusterdoc/", "\\site-packages\\")  # and Windows
# `raise Exception("...")` prints the bare type ("Exception: Installed CUDA version 11.0 does not match ...")
_EXC_LINE = re.compile(
    r"(Exception\w{0,40}|[A-Za-z_][\w.]{0,200}?(?:Error|Exception|Interrupt|Exit|Warning)\w{0,40}): ?(.*)"
)
# a wrapper that names the exception it carries: Ray's "ray.exceptions.RayTaskError(ValueError): ray::Actor.run()
# ...", the same for an actor's (the inner type is the failure; the wrapper is how it reached the driver)
_EXC_WRAPPED = re.compile(
    r"[A-Za-z_][\w.]{0,200}?Error\(([A-Za-z_]\w{0,80}?(?:Error|Exception|Interrupt|Exit)\w{0,40})\): ?(.*)"
)
_EXC_BARE = re.compile(r"(Exception|[A-Za-z_][\w.]{0,200}?(?:Error|Exception|Interrupt))\s*$")

# a peer's connection lost: gloo (pair.cc), NCCL (socket.cc, net_ib), torch's TCPStore
_PEER = [
    re.compile(r"Connection closed by peer \[([0-9A-Fa-f.:]{1,64})\]"),
    re.compile(r"(?:Read|Write) error \[([0-9A-Fa-f.:]{1,64})\]"),
    re.compile(r"Connection reset by peer \[([0-9A-Fa-f.:]{1,64})\]"),
    re.compile(r"Connection closed by remote peer ([\w.-]{1,128})<\d{1,6}>"),
    re.compile(r"Call to recv from ([\w.:-]{1,128})<\d{1,6}> failed"),
    re.compile(r"Got completion from peer ([\w.:-]{1,128})<\d{1,6}> with (?:error|status)"),
]
_PEER_NEEDLES = ("Connection closed by", "Read error [", "Write error [", "Connection reset by peer [",
                 "Call to recv from", "Got completion from peer")  # fmt: skip
_CUDA = re.compile(
    r"(CUDA error: .{0,300}|CUDA driver error: .{0,300}|cudaErrorLaunchFailure.{0,300}|"
    r"GPU has fallen off the bus.{0,300}|uncorrectable ECC error encountered.{0,300})"
)
_OOM_SIZE = re.compile(r"Tried to allocate ([\d.]{1,12} ?[KMGT]i?B)")
_OOM_NEEDLES = ("CUDA out of memory", "OutOfMemoryError", "clusterdoc.run: OUT OF MEMORY", "CUDA error: out of memory",
                "Cuda failure 'out of memory'")  # fmt: skip
# ProcessGroupNCCL's and c10d's own "[Rank 3] ..." or "[PG ID 0 PG GUID 0 Rank 3] ...": the rank that printed it
# (a rank named later in a message without the brackets is another one: "Rank 2 failed to pass ...")
SAYS_RANK = re.compile(r"\[(?:PG [^\]]{0,80}?)?[Rr]ank (\d{1,7})\]")
_WD_HEAD = "aught collective operation timeout"  # "Watchdog caught ...", and torch 1.x's "Caught ..."
_WD_RANK = re.compile(r"\[Rank (\d{1,7})\] (?:Watchdog caught|Caught collective)")
_WD_SEQ = re.compile(r"SeqNum=(\d{1,19})")
_WD_OP = re.compile(r"OpType=(\w{1,40})")
_WD_NUMEL = re.compile(r"NumelIn=(\d{1,19})")
_WD_TIMEOUT = re.compile(r"Timeout\(ms\)=(\d{1,19})")
_WD_RAN = re.compile(r"ran for (\d{1,19}) milliseconds")
_PG = re.compile(r"\[PG (?:ID )?(\d{1,9})")
# torch's own count of a rank's collectives, in its watchdog's, its dump signal's and its heartbeat's lines
_ENQUEUED = re.compile(r"[Ll]ast enqueued (?:NCCL )?work: (-?\d{1,15}), last completed (?:NCCL )?work: (-?\d{1,15})")
_ENQUEUED_RANK = re.compile(r"(?:\[| )Rank (\d{1,7})\]")
_WATCHDOG_AT = re.compile(r"\[(?:PG [^\]]{0,120}?)?Rank (\d{1,7})\] Exception \(either an error or timeout\) detected")
_NCCL_WARN = re.compile(r"(?:(\S{1,128}?):\d{1,10}:\d{1,10} \[\d{1,4}\] )?(?:[\w/.]{1,200}:? ?\d{1,6} )?NCCL WARN (.*)")
_NCCL_HOST = re.compile(r"\s{0,8}([A-Za-z0-9][\w.-]{0,62}):\d{1,10}:\d{1,10} \[\d{1,4}\] ")
_SLURM_END = re.compile(
    r"\*\*\* (JOB|STEP) ([\d.]{1,30}) ON (\S{1,128}) CANCELLED AT (\S{1,40})(?: DUE TO ([A-Z ]{1,40}?))?"
    r"(?:, SEE SLURMCTLD LOG FOR DETAILS)?(?: \*\*\*|$)"  # Slurm's node failure adds where to look
)
_SRUN_TASK = re.compile(r"srun: error: (\S{1,128}): tasks? ([\d,-]{1,200}): (.{0,200})$")
_TR_KEY = re.compile(r"\s{0,8}(time|host|rank|exitcode|traceback)\s{0,12}: (.{0,300})")
# Horovod's stall warning lists each stalled op with the ranks that are ready for it, or missing from it
_HVD_RANKS = re.compile(r"\[(missing|ready) ranks: (\d{1,7}(?:, \d{1,7}){0,255})\]")
# Horovod 0.20+ (horovod/common/stall_inspector.cc) lists the ranks after its warning, one a line: "Missing ranks:"
# then "3: [tensor, ...]", "3!: [...]" for a rank past HOROVOD_STALL_SHUTDOWN_TIME_SECONDS
_HVD_LIST_HEAD = ("Missing ranks:", "Stalled ranks:")
_HVD_LIST_ROW = re.compile(r"(\d{1,7})!?: \[")
HVD_LIST_MAX = 64  # rows read after a head, at most
# torch's ProcessGroupNCCL: a rank creating its communicator waits in the store for the ncclUniqueId its owner (the
# group's rank 0) publishes at its first collective; a timeout there means the owner had not reached it. Round 10:
# torch before 2.0 spells it "retreiving" (ChatGLM-6B-1232 and LlamaFactory-81 print it verbatim)
_ID_WAIT = re.compile(r"\[(\d{1,7})\] is setting up NCCL communicator and retr(?:ie|ei)ving ncclUniqueId from "
                      r"\[(\d{1,7})\].{0,200}?got error: ([^.\n]{0,80})")  # fmt: skip
ID_WAIT_TIMEOUTS = ("Socket Timeout", "timed out", "Timeout")
# torch's flight recorder analyser (torchfrtrace, torch/distributed/flight_recorder): "Not all ranks joining collective
# 5 at entry 4" (or ", sequence number: 4"), then "missing ranks: {1}" a few lines on; its first form on one line,
# "... Missing ranks are {1}"
_FR_HEAD = "Not all ranks joining collective"
_FR_MISSING = re.compile(r"[Mm]issing ranks(?: are|:) \{(\d{1,7}(?:, \d{1,7}){0,63})\}")
FR_NEAR = 8  # lines from its head to the missing ranks
# MPI's launchers name the rank that failed first: MPI_Abort, Open MPI's "first process to do so", its signal line
# torch.multiprocessing.spawn's error for process N (its index: the local rank it passed): an exception ("-- Process
# N terminated with the following error"), a signal or an exit code (ProcessExitedException, spawn.py)
_SPAWN = re.compile(
    r"-- Process (\d{1,7}) terminated with the following error"
    r"|ProcessExitedException: process (\d{1,7}) terminated with (?:signal|exit code)"
)
_MPI_ABORT = re.compile(r"MPI_ABORT was invoked on rank (\d{1,7})")
# Cray MPICH's abort line: "MPICH ERROR [Rank 7] [job id 5.0] [Fri Aug 28 22:45:13 2026] [nid004069] - Abort(1)"
_MPICH_ERROR = re.compile(r"MPICH ERROR \[Rank (\d{1,7})\] \[job id [^\]]{0,64}\] \[[^\]]{0,64}\] \[([\w.-]{1,128})\]")
_MPICH_ABORT = re.compile(r"application called MPI_Abort\([^)]{0,80}\) - process (\d{1,7})")  # MPICH, Intel MPI
# MPICH's PMI client before it aborts the job: "[cli_N]: aborting job:" (simple_pmi's PMIU_printf, its id "cli_" and
# the PMI rank), the error stack on the lines after it
_PMI_ABORT = re.compile(r"\[cli_(\d{1,7})\]: aborting job")
# round 9: Charm++'s "------------- Processor 0 Exiting: Called CmiAbort ------------" (NAMD: prody-878, charm-2849)
_CHARM_EXIT = re.compile(r"Processor (\d{1,7}) Exiting: (Called CmiAbort|Caught Signal)")
# round 9: HPE/SGI MPT's "MPT ERROR: MPI_COMM_WORLD rank 617 has terminated without calling MPI_Finalize()"
# (simpleland-6, fates-374); Fujitsu MPI's "[WARN] PLE 0608 plexec One of MPI processes was aborted.(rank=0)"
_MPT_TERMINATED = re.compile(r"MPI_COMM_WORLD rank (\d{1,7}) has terminated without calling MPI_Finalize")
_FJ_ABORTED = re.compile(r"One of MPI processes was aborted\.\(rank=(\d{1,7})\)")
# MVAPICH's mpispawn names the rank that died, its node in the prefix: "[c558-702.stampede.tacc.utexas.edu:
# mpispawn_0][child_handler] MPI process (rank: 0, pid: 39547) terminated with signal 9 -> abort job"
_MVAPICH_CHILD = re.compile(
    r"^\[([\w.-]{1,128}):mpispawn_\d{1,7}\]\[child_handler\] MPI process \(rank: (\d{1,7}), pid"
)
_LAMMPS_PROC = re.compile(r"\bERROR on proc (\d{1,7}): ")  # LAMMPS' Error::one: the rank that failed
_GMX_RANK = re.compile(r"^MPI rank:\s{1,8}(\d{1,7}) \(out of \d{1,7}\)")  # GROMACS' fatal block: its rank
_FMS_PE = re.compile(r"FATAL from PE\s{1,8}(\d{1,7}):")  # GFDL FMS's mpp_error: the PE (rank) that raised it
# issue 41 (appcat): the ranks the applications' own fatal forms name (why/sigtable/catalogue_apps.py): TDEP's
# lo_stop_gracefully ("active rank: 3 out of 16"), AMReX's Error_host/Assert_host ("amrex::Abort::3::", "3::Assertion
# `"), ESMF's log line ("ERROR    PET270 ..."), HDF5's error-stack head ("... MPI-process 3:")
_APP_RANK = re.compile(
    r"^\s{0,12}active rank: (\d{1,7}) out of \d{1,7}|amrex::(?:Abort|Error)::(\d{1,7})::|^(\d{1,7})::Assertion `"
    r"|\bERROR {1,16}PET(\d{1,7}) |-DIAG: Error detected in [^()]{1,40}\([^()]{0,40}\) MPI-process (\d{1,7}):"
)
_CHARM_NODE_PROC = re.compile(r"^Node: \d{1,7} Proc: (\d{1,7})\s{0,4}$")  # SpECTRE's error block head: its PE
_APP_RANK_WORDS = ("active rank: ", "amrex::", "::Assertion `", " PET", "MPI-process ")
_RSL_TASK = re.compile(r"^\s{0,4}taskid: (\d{1,7}) hostname: ([\w.-]{1,128})")  # WRF's rsl.error.NNNN header
# Open MPI's MPI_ERRORS_ARE_FATAL handler: "*** reported by process [JOBID,RANK]"; OpenFOAM's parallel error prefix
_OMPI_REPORTED = re.compile(r"\*\*\* reported by process \[\d{1,20},(\d{1,7})\]")
_FOAM_RANK = re.compile(r"^\[(\d{1,7})\] --> FOAM FATAL")
# the ranks' own consistency checks name the rank that disagrees: DeepSpeed's assert_ints_same_as_other_ranks,
# DDP's verify_params_across_processes ("[N]: params[...] in this process ... appears not to match")
_DISAGREE = re.compile(
    r"disagreement between rank0 and rank(\d{1,7}):|\[(\d{1,7})\]: params\[\d{1,7}\] in this process"
)
_PALS_DIED = re.compile(r"\brank (\d{1,7}) died from signal (\d{1,3})")  # Cray PALS' mpiexec: "NODE: rank N died ..."
_MPI_FIRST = re.compile(r"Process name: \[\[\d{1,12},\d{1,6}\],(\d{1,7})\]")
_MPI_SIGNAL = re.compile(  # mpirun's, prterun's (Open MPI 5), orterun's
    r"noticed that process rank (\d{1,7}) with PID \d{1,12} on node (\S{1,128}) exited on signal"
)
# PRRTE's (Open MPI 5) help text wraps that line after "exited on": the next line goes on with "signal N (Name)."
_MPI_SIGNAL_CUT = re.compile(r"noticed that process rank \d{1,7} with PID \d{1,12} on node \S{1,128} exited on\s{0,4}$")
# Open MPI's (and OpenSHMEM's) signal handler, printed by the process that crashed: its own host and PID
_OMPI_HANDLER = re.compile(r"^\[([A-Za-z][\w.-]{0,127}):\d{1,9}\] \*\*\* Process received signal \*\*\*")
_HYDRA = re.compile(r"=\s{1,8}RANK (\d{1,7}) PID \d{1,12} RUNNING AT (\S{1,128})")  # MPICH/Intel MPI's BAD TERMINATION
_TR_RANK = re.compile(r"(\d{1,7})")
_TR_CODE = re.compile(r"(-?\d{1,4})")
_TR_LOCAL = re.compile(r"failed \(exitcode: (-?\d{1,4})\) local_rank: (\d{1,7})")
# gloo's monitoredBarrier (ProcessGroupGloo.cpp) on rank 0: the rank(s) that did not arrive
# the node a signature's line leaves to the lines after it (Open MPI's help text: "hostname:  X", "Remote daemon:
# [[J,0],1] on node X"), or to the lines before it (Ray's actor fields: "ip: ADDR"): (pattern, lines away)
_DAEMON_NODE = re.compile(r"\s{0,8}(?:hostname:\s{1,8}|Remote daemon:.{0,200}? on node )([\w.-]{1,128})")
_NODE_AFTER = {"mpi-lost-daemon": (_DAEMON_NODE, 8)}
_NODE_BEFORE = {"ray-node-died": (re.compile(r"\s{0,8}ip: ([\w.:-]{1,128})\s*$"), 8)}
# Open MPI's TCP help text names the host that printed it a few lines on ("  Local host: node-0-22")
_NODE_AFTER["ompi-tcp-peer-connect"] = (re.compile(r"\s{0,8}Local host:\s{1,16}([A-Za-z0-9][\w.-]{0,127})"), 8)
# round 9 (sites): Torque's and PBS's job mail names the one host the job ran on ("Exec host:  gpu-2-17/11") a few
# lines before the server's reason (cbiocluster-188, sarek-541); several hosts ("a/0+b/0") name none
_EXEC_HOST = re.compile(r"\s{0,8}Exec host:\s{1,16}([A-Za-z0-9][\w.-]{0,127})/[\d,-]{1,64}\s*$")
_NODE_BEFORE.update({name: (_EXEC_HOST, 8) for name in ("pbs-node-failure", "pbs-deleted-by-root", "torque-mem-limit")})
# round 10: Open MPI's help text on a program it could not execute: "while attempting to start process rank 0."
# (fastpm-101), its node a line or two before ("Node: cori16"); its execve help text's "Local host:" line
_OMPI_START = re.compile(r"while attempting to start process rank (\d{1,7})")
_NODE_AFTER["ompi-no-executable-wrapped"] = (re.compile(r"\s{0,8}Node:\s{1,16}([A-Za-z0-9][\w.-]{0,127})\s*$"), 6)
_NODE_AFTER["ompi-execve-failed"] = _NODE_AFTER["ompi-tcp-peer-connect"]
# Open MPI's TCP help text on a peer that hung up names it ("  Peer host:  node7", help-mpi-btl-tcp.txt): the node
# to look at (foreign.py keeps it as the peer lost, not the node that printed it)
PEER_AFTER = ("cat-ompi-tcp-peer-hung-up",)
_NODE_AFTER["cat-ompi-tcp-peer-hung-up"] = (re.compile(r"\s{0,8}Peer host:\s{1,16}([A-Za-z0-9][\w.-]{0,127})"), 16)
# a shell prompt before a command that reports on the host it runs on (nvidia-smi, dmesg ...): the lines it printed
# are that host's (returnn-1486 "zeyer@cn-234 ~ % nvidia-smi", shinecluster-171 "(env) user@hoth:~/dir$ nvidia-smi",
# RHEL's "[user@gpu3 ~]$ dmesg"); a prompt before any other command (cat, sbatch) says nothing of the lines after it
_PROMPT = re.compile(
    r"\s{0,4}(?:\([\w.-]{1,64}\) )?\[?[\w.-]{1,32}@([A-Za-z0-9][\w-]{0,62})(?:[:\s][^\s$#%\]]{0,200})?\]? ?[$#%] {1,2}"
    r"(?:sudo )?(?:nvidia-smi|rocm-smi|amd-smi|dmesg|journalctl|ibstat|lspci)\b"  # each holds a logread word
)
PROMPT_NEAR = 40  # lines of a host command's output after its prompt
# session 21 (issue 41): an application's own fatal banner just before MPI_Abort: the application stopped itself on
# an error it found and said which (its code or its input). Upper-case levels and "Error in X" as the codes print them
# (FMS' "FATAL: ...", nekRS' "Error in crystal_router: ...", a C++ code's "... LOGICAL ERROR"); never a line of the
# MPI library, the launcher, the GPU, memory or an I/O library (those are their own causes)
_APP_BANNER = re.compile(r"(?:^|[\s:>\]])(?:FATAL|ERROR)\b|\bError in [A-Za-z_]|\bFatal error\b")
_NOT_BANNER = ("MPI", "mpirun", "mpiexec", "srun", "slurmstepd", "orte", "prte", "CUDA", "cuda", "GPU", "emory",
               "NetCDF", "HDF", "NCCL", "Traceback", "WARN", "arning", "INFO")  # fmt: skip
BANNER_NEAR = 12  # lines between the banner and the abort
# the MPI libraries' report of an MPI_Abort: Open MPI's signature, MPICH's (Intel's, Cray's) words
ABORT_SIGNS = ("mpi-abort", "mpich-abort")
ABORT_WORDS = "application called MPI_Abort"
_BARRIER = re.compile(r"Ranks? (\d{1,7}(?:, \d{1,7}){0,63}) failed to pass monitoredBarrier")
# an ExceptionGroup's sub-tracebacks are printed behind "| " bars (Python 3.11+)
_GROUP_BAR = re.compile(r"\s{0,32}(?:\| ?){1,8}")
# a line that is an exception by itself (no traceback around it): its type ends in Error or Exception
_EXC_LOOSE = re.compile(r"([A-Za-z_][\w.]{0,200}?(?:Error|Exception)):\s{1,4}(\S.{0,2000})")  # "X:  [!] msg" too
# Snakemake's own form of an exception in a Snakefile or a rule's code (its format_error): the type, where, then the
# message on the next line: "KeyError in file /w/rules/fastq.smk, line 45:", "SyntaxError in line 12 of /w/Snakefile:"
_EXC_SNAKEMAKE = re.compile(
    r"(\w{1,80}(?:Error|Exception)) in (?:file (.{1,400}), line (\d{1,7})|line (\d{1,7}) of (.{1,400})):\s*$"
)
# an OSError's str() alone on a line: "[Errno N] strerror: 'path'"; the subclass Python raises for N (PEP 3151: the
# ones EXCEPTION_RULES tells apart), OSError for the others (ENOSPC, ENOMEM: their message says it)
_ERRNO_LINE = re.compile(r"\[Errno (\d{1,4})\] \S")
ERRNO_TYPES = {1: "PermissionError", 2: "FileNotFoundError", 13: "PermissionError", 17: "FileExistsError",
               20: "NotADirectoryError", 21: "IsADirectoryError", 32: "BrokenPipeError", 103: "ConnectionAbortedError",
               104: "ConnectionResetError", 110: "TimeoutError", 111: "ConnectionRefusedError"}  # fmt: skip
# libstdc++'s verbose terminate handler (a C++ exception nothing caught): its type, then "  what():  MESSAGE" on the
# next line; the pair is read as an exception line with no traceback (a C++ program's, or torch's c10:: errors)
_TERMINATE = re.compile(r"terminate called after throwing an instance of '([\w:<>, ]{1,200})'")
# a thrown value of no class (`throw 0;`, `throw "text";`): libstdc++ prints no what() line after it
_SCALAR_THROWN = frozenset(("int", "long", "unsigned int", "unsigned long", "char", "char const*", "char*", "double",
                            "float", "bool", "short", "long long"))  # fmt: skip
_WHAT = re.compile(r"\s{0,16}what\(\):\s{1,8}(\S.{0,2000})")
# torch's distributed errors thrown by its watchdog thread: the watchdog's own lines already say what they say
_DIST_WHAT = ("Watchdog", "NCCL", "ProcessGroup", "c10d", "gloo")
MAX_LOOSE = 64


@dataclass
class Raised:
    """The exception a rank ended with: its type, message and where (the innermost frame of the user's code)."""

    type: str
    message: str
    file: str | None = None
    line: int | None = None
    func: str | None = None
    env_lookup: bool = False  # raised by os.environ[NAME] (its last frame os.py's __getitem__): a variable not set
    inner: str | None = None  # the innermost frame's file, a library's or the code's: where it was raised

    @property
    def where(self) -> str:
        if not self.file:
            return "?"
        return f"{self.file.rsplit('/', 1)[-1]}:{self.line}" + (f" in {self.func}" if self.func else "")


@dataclass
class Hit:
    """One line that matched a signature."""

    line: int  # its index in the log: the order stands for time in a foreign log
    rank: int | None
    host: str | None
    sig: str  # signatures.Signature.name
    category: str
    text: str  # the line (its first 300 characters, prefixes removed)
    node: str | None = None  # the node the line itself blames


@dataclass
class RankLog:
    rank: int
    host: str | None = None
    first: int = 0  # its first line
    lines: int = 0
    raised: Raised | None = None
    raised_at: int | None = None
    loose: Raised | None = None  # its last exception line outside any traceback (a partial paste)
    loose_at: int | None = None
    loose_after: int = 0  # its lines after that one
    peers: list[str] = field(default_factory=list)
    cuda: str | None = None
    oom_size: str | None = None
    tb_at: int | None = None  # the line its first traceback began on (its header, or a cut one's first frame)


@dataclass
class LogFacts:
    lines: int = 0
    ranks: dict[int, RankLog] = field(default_factory=dict)
    hits: list[Hit] = field(default_factory=list)
    unranked_raised: list[tuple[int, Raised]] = field(default_factory=list)  # tracebacks with no rank prefix
    unranked_loose: list[tuple[int, Raised]] = field(default_factory=list)  # exception lines outside tracebacks
    barrier: list[dict] = field(default_factory=list)  # gloo's monitoredBarrier: {ranks, line, rank, text}
    mpi: list[dict] = field(default_factory=list)  # MPI's launcher naming a rank: {rank, node, line, how}
    crashed_on: list[dict] = field(default_factory=list)  # session 25: the first Open MPI signal handler's node
    local: list[dict] = field(default_factory=list)  # a local process index (mp.spawn's): the rank on one node
    horovod: list[tuple[int, str, tuple[int, ...]]] = field(default_factory=list)  # (line, missing|ready, ranks)
    # the first "Missing ranks:" list's rows: rank -> the tensors it has not submitted (the others have)
    hvd_rows: dict[int, frozenset[str]] = field(default_factory=dict)
    watchdog: dict[int, dict] = field(default_factory=dict)  # rank -> {seq, op, timeout_ms, ran_ms, line}
    watchdog_at: set[int] = field(default_factory=set)
    # rank -> the last collective it enqueued in the default group, by torch's own count (lines tagged [PG 0])
    enqueued: dict[int, int] = field(default_factory=dict)
    slurm_ends: list[dict] = field(default_factory=list)
    srun_tasks: list[dict] = field(default_factory=list)
    torchrun: list[dict] = field(default_factory=list)  # {rank, host, exitcode, line, root: its Root Cause entry}
    nccl_warns: list[tuple[str, str]] = field(default_factory=list)
    hosts: set[str] = field(default_factory=set)
    mpirun_tagged: bool = False  # lines with mpirun's --tag-output prefix ([J,R]<stdout>:): ranks mpirun started
    process_groups: set[str] = field(default_factory=set)  # torch's "[PG ID N" in its lines: several groups
    # what the job was doing, by the lines that say it (the last MAX_PHASE of each): a library's cleanup at exit
    # (MPI_Finalize, atexit, a destructor) and a model's weights being loaded (host memory's peak)
    cleanup_at: list[int] = field(default_factory=list)
    loading_at: list[int] = field(default_factory=list)
    # session 22: gloo's warning that the host name resolved to no local address, so it bound to loopback
    loopback_at: list[int] = field(default_factory=list)
    # round 9: a native backtrace's frames (the last MAX_PHASE of each): naming a routine, and naming none
    named_frames_at: list[int] = field(default_factory=list)
    bare_frames_at: list[int] = field(default_factory=list)
    busy: list[dict] = field(default_factory=list)  # unfinished data-preparation bars: {line, rank, text}
    bars: list[tuple[int, int]] = field(default_factory=list)  # session 25: (line, a progress bar's updates on it)
    waits: list[dict] = field(default_factory=list)  # waits that timed out (WAIT_WORDS): {line, rank}
    lagging: list[dict] = field(default_factory=list)  # torch's desync report: {ranks, what, line}
    id_waits: list[dict] = field(default_factory=list)  # waits for another's ncclUniqueId: {line, rank, owner, text}
    fr_missing: list[dict] = field(default_factory=list)  # torch's flight recorder analysis: {line, ranks, text}
    store_barrier: list[dict] = field(default_factory=list)  # torch's store based barrier: {line, world, count, ..}
    gloo_blamed: list[dict] = field(default_factory=list)  # gloo's "Please check rank N logs": {line, rank, by}
    jax_pending: list[dict] = field(default_factory=list)  # JAX's barrier timeout: the tasks not there {line, tasks}
    # round 10: a frame of a "main process first" block (transformers' main_process_first, torch_distributed_zero_first
    # of YOLOv5, accelerate's main_process_first): {line, rank}
    first_blocks: list[dict] = field(default_factory=list)
    # the lines that look like failures and name a family of why/vocab.py (the first vocab.MAX_LINES), in order:
    # {line, rank, host, text, families}
    failures: list[dict] = field(default_factory=list)


class _Traceback:
    """A traceback being read, line by line, for one stream (rank)."""

    __slots__ = ("frames", "start", "after_frame", "cut", "indent", "lead", "ignored")

    def __init__(self, start: int) -> None:
        self.cut = 0  # the column its lines start at, behind a logger's fields of a fixed width (0: none)
        # the text before its header, where each of its lines repeats it: a tag no launcher form names (YARN's
        # "/container_...: ", Ray's "(pid=N) " without an address); "" for none
        self.lead = ""
        self.indent = 0  # spaces before each of its lines inside torchrun's failure table (its field's indent)
        self.frames: list[tuple[str, int, str]] = []
        self.start = start
        self.after_frame = False  # the next line is a frame's source line (code, not a message)
        # printed under Python's "Exception ignored in: <function X.__del__ ...>": an exception Python swallowed (a
        # destructor's, an atexit or weakref callback's during teardown): the process did not die of it
        self.ignored = False

    def feed(self, line: str) -> Raised | None | bool:
        """A Raised at its exception line, True while still inside, False when the line ends it without one."""
        if line.lstrip().startswith("|"):  # an ExceptionGroup's sub-traceback
            line = line[_GROUP_BAR.match(line).end() :]  # type: ignore[union-attr]  # always matches
        m = _FRAME.match(line)
        # a C file's frame (h5py's "HDF5 error back trace": `File "H5F.c", line 509, in H5Fopen`) is followed by
        # HDF5's own message, not by Python source
        self.after_frame = m is not None and not m.group(1).endswith((".c", ".cc", ".cpp"))
        if m:
            self.frames.append((m.group(1), int(m.group(2)), m.group(3)))
            del self.frames[:-MAX_FRAMES]
            return True
        if line[:1] in (" ", "\t") or not line.strip():
            return True
        if line.startswith(("During handling", "The above exception")):
            self.frames = []
            return True
        if "Traceback (most recent call last)" in line[:48]:
            return True
        return _raised(line.strip(), self.frames) or False


def _table_indent(line: str) -> int:
    """The indent of torchrun's failure-table field `  traceback : Traceback (most recent call last):` (its
    worker's error file, printed whole: its frames two spaces further in, its exception line at the field's own
    indent), or 0 for any other traceback header."""
    body = line.lstrip(" ")
    if not body.startswith("traceback") or not body[9:].lstrip(" ").startswith(": Traceback"):
        return 0
    return min(len(line) - len(body), 16)


def _says_rank(line: str) -> int | None:
    """The rank torch or gloo names as the line's own ("[Rank 3] Watchdog ...", "Rank 3 successfully reached")."""
    m = SAYS_RANK.search(line) or _GLOO_RANK.search(line)
    return int(m.group(1)) if m else None


_GLOO_RANK = re.compile(r"\bRank (\d{1,7}) successfully reached monitoredBarrier")


def _raised(line: str, frames: list[tuple[str, int, str]]) -> Raised | None:
    m = _EXC_LINE.match(line) or _EXC_WRAPPED.match(line) or _EXC_BARE.match(line)
    if not m:
        return None
    exc_type = m.group(1).rsplit(".", 1)[-1]
    message = (m.group(2) if m.re is not _EXC_BARE else "").strip()
    own = [f for f in frames if not any(lib in f[0] for lib in _LIBRARY)]
    if not (own or frames):
        return Raised(exc_type, message)
    file, num, func = (own or frames)[-1]
    last = frames[-1] if frames else ("", 0, "")
    env = exc_type == "KeyError" and last[0].endswith("/os.py") and last[2] == "__getitem__"
    return Raised(exc_type, message, file, num, func, env, last[0] or None)


class Scanner:
    """Feed lines (`feed`) or whole texts (`feed_text`); read `facts`. Memory is bounded by the caps above."""

    def __init__(self) -> None:
        self.facts = LogFacts()
        self._tb: dict[object, _Traceback] = {}
        self._ignored_line: tuple[object, int] = (None, -1)  # (stream, line) of the last "Exception ignored in"
        self._raise_line: tuple[object, int] = (None, -1)  # (stream, line) of the last `raise ...` source line
        self._wd: dict[int, tuple] = {}  # 0 -> (stream, line, rank, text, lines): a header whose fields follow
        self._table: dict | None = None  # torchrun's failure table being read
        self._per_sig: dict[str, int] = {}
        self._node_next: tuple[Hit, int, re.Pattern] | None = None  # a hit whose node a later line names
        self._jax_until = -1  # the next line that may name a task JAX's barrier waited for
        self._lagging_until = -1  # the lines after torch's desync report's head that list the lagging ranks
        self._before: dict[str, tuple[int, str]] = {}  # signature -> (line, node) an earlier line named
        self._hvd_list: tuple[int, int] | None = None  # Horovod's "Missing ranks:" list being read: (entry, until)
        self._fr_head = -1  # the line of the flight recorder analyser's last "Not all ranks joining collective"
        self._thrown: dict[object, tuple[int, str]] = {}  # stream -> (line, C++ type) of a terminate line
        self._prompt: tuple[int, str] | None = None  # (line, host) of a prompt before a host command (_PROMPT)
        self._banner: tuple[int, int | None, str | None, str] | None = None  # the last application banner (_APP_BANNER)
        self._cut: str | None = None  # a line wrapped before its end (_MPI_SIGNAL_CUT), joined to the next

    def feed_text(self, text: str) -> None:
        for line in text.splitlines():
            self.feed(line)

    def feed(self, raw: str, keyless: bool = False, wordless: bool = False) -> None:
        """One line; `keyless`: it holds none of the signatures' keys (signatures.any_key), so no signature;
        `wordless`: none of vocab's words, so no failure line."""
        f = self.facts
        n = f.lines
        f.lines += 1
        rank, local, host, line = prefix.split_local(raw[:LINE_CAP])
        if rank is None and local is not None and len(f.hosts) <= 1:  # torchrun's [defaultN]: on one node
            rank = local
        line = line.rstrip("\r\n")
        if self._cut is not None:  # the line a help text's wrap cut: this one goes on with it
            cut, self._cut = self._cut, None
            if line.lstrip().startswith("signal "):
                line, keyless, wordless = f"{cut} {line.strip()}", False, False
        if line.endswith(("exited on", "exited on ")) and _MPI_SIGNAL_CUT.search(line):
            self._cut = line.strip()
        if rank is not None and not f.mpirun_tagged and "]<std" in raw[:48]:
            f.mpirun_tagged = True
        if rank is None and host is None and ("host", None) not in self._tb and len(self._tb) == 1:
            # a traceback begun on a rank's prefixed line (a logger's prefix on its first line only) continues on
            # the lines without one: frames, their source, the exception
            (k,) = self._tb
            if isinstance(k, int) and (line[:1] in (" ", "\t") or _EXC_LINE.match(line) or not line.strip()):
                rank = k
        if "@" in raw and rank is None:
            m = _PROMPT.match(raw)
            if m or ("$ " in raw or "% " in raw or "# " in raw):
                self._prompt = (n, m.group(1)) if m else None  # another command: its output is not the host's
        if host:
            if len(f.hosts) < 4096:
                f.hosts.add(host)
        rl = None
        if rank is not None and rank <= prefix.MAX_RANK:
            rl = f.ranks.get(rank)
            if rl is None:
                rl = f.ranks[rank] = RankLog(rank, host, first=n)
            rl.lines += 1
            rl.loose_after += 1
            if host and not rl.host:
                rl.host = host
        key: object = rank if rank is not None else ("host", host)
        tb = self._tb.get(key)
        # `raise RuntimeError("CUDA error: ...")` under a frame is code, not the error (indented: a filtered log may
        # have lost the source line, and the exception line then follows the frame)
        source = tb is not None and tb.after_frame and line[:1] in (" ", "\t")
        self._traceback(key, n, line, rl)
        self._watchdog(key, n, rank, line)
        if not source:
            self._signature(n, rank, host, line, rl, keyless)
        self._slurm(n, line)
        self._torchrun(n, line, host)
        self._mpi(n, line, host)
        self._horovod_list(n, rank, raw, line)
        self._id_wait(n, line)
        self._flight_recorder(n, line)
        self._jax_barrier(n, line)
        self._terminate(n, key, line, rl)
        self._phase(n, line)
        self._busy(n, rank, line)
        if "_first" in line and len(f.first_blocks) < MAX_PHASE:
            self._first_block(n, rank, line)
        if len(f.failures) < vocab.MAX_LINES and not wordless:
            fams = vocab.families(line)
            if fams:
                f.failures.append({"line": n, "rank": rank, "host": host, "text": line[:300], "families": fams})

    def _flight_recorder(self, n: int, line: str) -> None:
        """The flight recorder analyser's report of a collective some ranks never joined: the ranks it names."""
        f = self.facts
        if _FR_HEAD in line:
            self._fr_head = n
        if self._fr_head < 0 or n - self._fr_head > FR_NEAR or "issing ranks" not in line:
            return
        m = _FR_MISSING.search(line)
        if m and len(f.fr_missing) < MAX_PHASE:
            ranks = [int(x) for x in m.group(1).split(", ")]
            f.fr_missing.append({"line": self._fr_head, "ranks": ranks, "text": line.strip()[:300]})
            self._fr_head = -1

    def _jax_barrier(self, n: int, line: str) -> None:
        """JAX's coordination service on a barrier that timed out: "Timed out task names:" (or "Some timed out task
        names:"), then one line per task that had not reached it (xla's coordination_service.cc: the pending tasks)."""
        f = self.facts
        if _JAX_PENDING_HEAD in line and len(f.jax_pending) < MAX_PHASE:
            f.jax_pending.append({"line": n, "tasks": []})
            self._jax_until = n + 1
            return
        if n != self._jax_until:
            return
        m = _JAX_TASK.match(line)
        if m and len(f.jax_pending[-1]["tasks"]) < MAX_PHASE:
            f.jax_pending[-1]["tasks"].append(int(m.group(1)))
            self._jax_until = n + 1

    def _id_wait(self, n: int, line: str) -> None:
        """A rank that timed out waiting in the store for another's ncclUniqueId (a reset or refused store is a
        lost peer, not this)."""
        f = self.facts
        if "ving ncclUniqueId" not in line or len(f.id_waits) >= MAX_PHASE:
            return
        m = _ID_WAIT.search(line)
        if m and any(w in m.group(3) for w in ID_WAIT_TIMEOUTS):
            wait = {"line": n, "rank": int(m.group(1)), "owner": int(m.group(2)), "text": line.strip()[:300]}
            f.id_waits.append(wait)

    def _horovod_list(self, n: int, rank: int | None, raw: str, line: str) -> None:
        """Horovod's stall warning listing the ranks that did not submit, one a line after its head: each row's rank
        joins one entry of `horovod` ("missing", as the older per-op form's `[missing ranks: ...]`)."""
        f = self.facts
        text = line.strip()
        if text in _HVD_LIST_HEAD:
            self._hvd_list = (-1, n + HVD_LIST_MAX)
            return
        if self._hvd_list is None:
            return
        entry, until = self._hvd_list
        m = _HVD_LIST_ROW.match(text)
        # a row without an outer prefix reads as a labelled line ("3: [...]": rank 3, the rest "[...]")
        who = int(m.group(1)) if m else rank if text.startswith("[") and raw.lstrip().startswith(f"{rank}: [") else None
        if who is None or n > until:
            self._hvd_list = None
            return
        if entry < 0:
            if len(f.horovod) >= 256:
                self._hvd_list = None
                return
            f.horovod.append((n, "missing", ()))
            entry = len(f.horovod) - 1
            self._hvd_list = (entry, until)
        at, kind, ranks = f.horovod[entry]
        if who not in ranks and len(ranks) < 256:
            f.horovod[entry] = (at, kind, (*ranks, who))
        if entry == 0 and who not in f.hvd_rows and len(f.hvd_rows) < 256:
            names = text[text.find("[") + 1 :].rstrip().rstrip("]")[:2000]
            f.hvd_rows[who] = frozenset(x.strip()[:200] for x in names.split(", ")[:16])

    def _phase(self, n: int, line: str) -> None:
        f = self.facts
        for words, at in ((CLEANUP_WORDS, f.cleanup_at), (LOADING_WORDS, f.loading_at),
                          (LOOPBACK_WORDS, f.loopback_at)):  # fmt: skip
            if any(map(line.__contains__, words)):
                del at[: -MAX_PHASE + 1]
                at.append(n)
        if "#" in line[:12] and "0x" in line[:32]:
            m = _NATIVE_FRAME.match(line)
            if m:
                at = f.named_frames_at if m.group(1) and m.group(1) != "???" else f.bare_frames_at
                del at[: -MAX_PHASE + 1]
                at.append(n)
        elif "Unknown" in line or "  0000" in line:
            m = _IFORT_FRAME.match(line)
            if m:
                bare = m.group(1) == "Unknown" or m.group(1).startswith("__libc")
                at = f.bare_frames_at if bare else f.named_frames_at
                del at[: -MAX_PHASE + 1]
                at.append(n)

    def _first_block(self, n: int, rank: int | None, line: str) -> None:
        """Round 10: a traceback's (or py-spy's) frame inside a block only the main process runs first while the
        others wait at its barrier (its name: main_process_first, torch_distributed_zero_first)."""
        if _FIRST_BLOCK.search(line, 0, 600):
            self.facts.first_blocks.append({"line": n, "rank": rank})

    def _alone(self, n: int, rank: int | None, line: str) -> None:
        """A line that says one process is saving a checkpoint or evaluating (not that it finished): kept as busy."""
        m = _ALONE.search(line, 0, 400)
        if m and not any(w in line for w in WAIT_WORDS) and not _ALONE_DONE.search(line, 0, 400):
            self.facts.busy.append({"line": n, "rank": rank, "text": line[m.start() : m.end() + 80].strip()[:200],
                                    "alone": True})  # fmt: skip

    def _busy(self, n: int, rank: int | None, line: str) -> None:
        """A data-preparation bar not at 100 % (its line), and a wait that timed out (often glued after the bar)."""
        f = self.facts
        if "%|" in line:
            k = len(_BAR.findall(line, 0, 20000))  # the bar's updates on this line (tqdm's \r redraws stay on it)
            if k:
                del f.bars[: -MAX_PHASE + 1]
                f.bars.append((n, k))
            m = _BAR.search(line, 0, 400) if len(f.busy) < MAX_PHASE else None
            if m and _unfinished(m, line) and any(w in line[: m.start()] for w in PREP_WORDS):
                f.busy.append({"line": n, "rank": rank, "text": line[: m.end() + 80].strip()[:200],
                               "elapsed": _elapsed(line, m.end())})  # fmt: skip
        if "Traceback (most recent call last)" in line and len(f.waits) < MAX_PHASE:
            near = [b for b in f.busy if n - b["line"] <= PREP_NEAR and (b.get("elapsed") or 0) >= DEFAULT_WAIT_S]
            if near:  # a traceback cutting into a data bar that ran torch's default timeout: another's wait ended
                f.waits.append({"line": n, "rank": rank, "traceback": True})
        if ("aving" in line or "valuat" in line or "alidat" in line) and len(f.busy) < MAX_PHASE:
            self._alone(n, rank, line)
        if len(f.waits) < MAX_PHASE and any(map(line.__contains__, WAIT_WORDS)):
            f.waits.append({"line": n, "rank": rank if rank is not None else _says_rank(line)})
        if ("store based barrier" in line or "clients joined" in line) and len(f.store_barrier) < MAX_PHASE:
            m = _STORE_BARRIER.search(line)
            j = None if m else _CLIENTS_JOINED.search(line)
            if m:
                f.store_barrier.append({"line": n, "world": int(m.group(1)), "count": int(m.group(2)),
                                        "timed_out": "imed out" in line, "text": line.strip()[:240]})  # fmt: skip
            elif j:  # the store's server: its count first, then the world
                f.store_barrier.append({"line": n, "world": int(j.group(2)), "count": int(j.group(1)),
                                        "timed_out": True, "text": line.strip()[:240]})  # fmt: skip
        if "for faulty rank" in line and len(f.gloo_blamed) < MAX_PHASE:
            m = _GLOO_BLAMES.search(line)
            if m:
                f.gloo_blamed.append({"line": n, "rank": int(m.group(2)), "by": int(m.group(1))})
        if "are the lagging ranks" in line and len(f.lagging) < MAX_PHASE:
            m = _NEVER_JOINED.search(line)
            if m:
                ranks = [int(x) for x in m.group(1).split(", ")]
                f.lagging.append({"ranks": ranks, "what": "never joined any collective", "line": n})
        elif _LAGGING_HEAD in line:
            self._lagging_until = n + 4
        elif n <= self._lagging_until and len(f.lagging) < MAX_PHASE:
            m = _LAGGING.match(line)
            if m:
                ranks = [int(x) for x in m.group(1).split(", ")]
                f.lagging.append({"ranks": ranks, "what": m.group(2).strip(), "line": n})

    # --- the parts of a line ---
    def _traceback(self, key: object, n: int, line: str, rl: RankLog | None) -> None:
        tb = self._tb.get(key)
        if tb is None:
            if "Traceback (most recent call last)" in line:  # at the start, or after a logger's "... | "
                self._tb[key] = tb = _Traceback(n)
                tb.ignored = self._ignored_line == (key, n - 1)
                if rl is not None and rl.tb_at is None:
                    rl.tb_at = n
                at = line.find("Traceback (most recent call last)")
                if 2 <= at <= 240 and line[at - 2 : at] == "] ":  # after a logger's bracketed fields: the same
                    tb.cut = at  # width of fields is before each of its lines (Metaflow's "TIME [step (pid)] [id] ")
                if 0 < at <= 240 and line[:at].strip():
                    tb.lead = line[:at]
                tb.indent = _table_indent(line)
            elif 'File "' in line and _FRAME.match(line):  # the traceback's head was cut off: its last frames
                self._tb[key] = tb = _Traceback(n)
                if rl is not None and rl.tb_at is None:
                    rl.tb_at = n
                tb.feed(line)
            elif line.startswith("Exception: ") and self._raise_line == (key, n - 1):
                # a traceback whose head ran into another line: its `raise Exception(` source line, then the bare
                # type (DeepSpeed's "Exception: Current loss scale already at minimum")
                self._record_loose(n, Raised("Exception", line[11:].strip()[:2000]), rl, over_raised=True)
            elif ("Error: " in line or "Exception: " in line) and not line[:1].isspace():
                self._loose(n, line, rl)
            elif line.startswith("[Errno "):
                self._errno(n, line, rl)
            elif " in file " in line or " in line " in line:
                m = _EXC_SNAKEMAKE.match(line)
                if m:
                    where = f"{m.group(2) or m.group(5)}, line {m.group(3) or m.group(4)}"
                    self._record_loose(n, Raised(m.group(1).rsplit(".", 1)[-1], f"in {where}"[:2000]), rl, True)
            elif line.startswith("Exception ignored in"):
                self._ignored_line = (key, n)
            elif line[:1] in (" ", "\t") and line.lstrip().startswith("raise "):
                self._raise_line = (key, n)
            return
        if tb.lead and line.startswith(tb.lead):
            line = line[len(tb.lead) :]
        if tb.indent and line[: tb.indent].isspace() and len(line) > tb.indent:
            line = line[tb.indent :]  # torchrun's table: its exception line is as indented as its field
        got = tb.feed(line)
        if got is False and " | " in line[:160]:  # a logger's "TIME LEVEL | " before each line of it
            got = tb.feed(line[line.rfind(" | ", 0, 160) + 3 :])
        elif got is False and tb.cut and line[tb.cut - 2 : tb.cut] == "] ":
            got = tb.feed(line[tb.cut :])
        if got is True:
            return
        del self._tb[key]
        if isinstance(got, Raised) and not tb.ignored:
            if rl is not None:
                rl.raised, rl.raised_at = got, n
            elif len(self.facts.unranked_raised) < 64:
                self.facts.unranked_raised.append((n, got))
        elif line.startswith("Traceback (most recent call last)"):
            self._tb[key] = _Traceback(n)

    def _loose(self, n: int, line: str, rl: RankLog | None) -> None:
        """`[rank0]: AttributeError: ...` with no traceback around it (a partial paste): the exception line alone,
        also behind a logger's own bracketed fields no launcher prints (`TIME [job/step (pid N)] [id] OSError: ...`)."""
        m = _EXC_LOOSE.match(line)
        i = -2
        for _ in range(4):  # after each of a logger's first bracketed fields
            if m is not None:
                break
            i = line.find("] ", i + 2, 240)
            if i < 0:
                break
            m = _EXC_LOOSE.match(line, i + 2)
        if not m or m.group(1).endswith(("Warning", "Info")):
            return
        self._record_loose(n, Raised(m.group(1).rsplit(".", 1)[-1], m.group(2).strip()[:2000]), rl, over_raised=True)

    def _record_loose(self, n: int, raised: Raised, rl: RankLog | None, over_raised: bool = False) -> None:
        """An exception line with no traceback around it: its rank's (unless the rank already ended with a whole
        traceback and over_raised is False), or the log's unranked ones (the newest MAX_LOOSE)."""
        if rl is not None:
            if over_raised or rl.raised is None:
                rl.loose, rl.loose_at, rl.loose_after = raised, n, 0
        else:
            del self.facts.unranked_loose[: -MAX_LOOSE + 1]
            self.facts.unranked_loose.append((n, raised))

    def _errno(self, n: int, line: str, rl: RankLog | None) -> None:
        """`[Errno 2] No such file or directory: 'ckpt.pt'` alone on its line: an OSError printed by str(), without
        its type (Megatron-LM's checkpoint loader prints `print_rank_0(e)`); its type is the one Python raises for
        that errno (PEP 3151), read as an exception line with no traceback."""
        m = _ERRNO_LINE.match(line)
        if m is None:
            return
        self._record_loose(n, Raised(ERRNO_TYPES.get(int(m.group(1)), "OSError"), line.strip()[:2000]), rl)

    def _terminate(self, n: int, key: object, line: str, rl: RankLog | None) -> None:
        """`terminate called after throwing an instance of 'std::runtime_error'` and, on the next line of the same
        stream, `  what():  MESSAGE`: the uncaught C++ exception, read as `_loose` reads an exception line (its
        type without the namespace: `c10::DistBackendError` is torch's DistBackendError)."""
        if "terminate called after throwing" in line:
            m = _TERMINATE.search(line)
            if m is not None and m.group(1).strip() in _SCALAR_THROWN:  # `throw 0;`: no what() follows it
                t = m.group(1).strip()
                self._record_loose(n, Raised(t, f"uncaught C++ exception of type '{t}'"), rl)
            elif m is not None and len(self._thrown) < MAX_LOOSE:
                self._thrown[key] = (n, m.group(1).rsplit("::", 1)[-1].strip())
            return
        thrown = self._thrown.pop(key, None)
        if thrown is None or n - thrown[0] > 2 or "what()" not in line:
            return
        m = _WHAT.match(line)
        if m is None or any(w in m.group(1)[:400] for w in _DIST_WHAT):
            return
        self._record_loose(n, Raised(thrown[1], m.group(1).strip()[:2000]), rl)

    def _watchdog(self, key: object, n: int, rank: int | None, line: str) -> None:
        f = self.facts
        if "Exception (either an error or timeout) detected" in line:
            m = _WATCHDOG_AT.search(line)
            if m and len(f.watchdog_at) < MAX_RANKS_LISTED:
                f.watchdog_at.add(rank if rank is not None else int(m.group(1)))
        if "ast enqueued" in line:
            self._enqueued(rank, line)
        if "[PG " in line and len(f.process_groups) < 64:
            m = _PG.search(line)
            if m:
                f.process_groups.add(m.group(1))
        pending = self._wd.pop(0, None)
        if pending is not None and (pending[0] == key or (rank is None and not line.startswith("["))):
            _, start, wrank, text, k = pending  # the header's line was wrapped: its fields follow
            whole = (text + line.strip())[:LINE_CAP]  # a terminal's wrap cuts a word ("Timeo" / "ut(ms)=")
            text = (text + " " + line.strip())[:LINE_CAP]
            if self._watchdog_entry(start, wrank, text) is None and self._watchdog_entry(start, wrank, whole) is None:
                if k < 3:
                    self._wd[0] = (key, start, wrank, text, k + 1)
            return
        if _WD_HEAD not in line:
            return
        m = _WD_RANK.search(line)
        wrank = rank if rank is not None else int(m.group(1)) if m else None  # the prefix's rank is the global one
        if self._watchdog_entry(n, wrank, line) is None:
            self._wd[0] = (key, n, wrank, line, 1)

    def _enqueued(self, rank: int | None, line: str) -> None:
        """torch's count of the collectives a rank enqueued in the default group (its watchdog's, dump signal's and
        heartbeat's lines)."""
        f = self.facts
        m, pg = _ENQUEUED.search(line), _PG.search(line)
        if m is None or pg is None or pg.group(1) != "0":  # another group's count does not compare
            return
        r = _ENQUEUED_RANK.search(line) if rank is None else None
        at = rank if rank is not None else int(r.group(1)) if r else None
        if at is None or (at not in f.enqueued and len(f.enqueued) >= MAX_RANKS_LISTED):
            return
        f.enqueued[at] = max(f.enqueued.get(at, -1), int(m.group(1)))

    def _watchdog_entry(self, n: int, rank: int | None, text: str) -> dict | None:
        seq, op, tmo, ran, numel = (p.search(text) for p in (_WD_SEQ, _WD_OP, _WD_TIMEOUT, _WD_RAN, _WD_NUMEL))
        if not (op and tmo and ran):
            return None
        entry = {
            "rank": rank,
            "seq": int(seq.group(1)) if seq else None,
            "op": op.group(1),
            "numel": int(numel.group(1)) if numel else None,
            "timeout_ms": int(tmo.group(1)),
            "ran_ms": int(ran.group(1)),
            "line": n,
        }
        key = rank if rank is not None else -1
        if key not in self.facts.watchdog and len(self.facts.watchdog) < MAX_RANKS_LISTED:
            self.facts.watchdog[key] = entry
        return entry

    def _signature(
        self, n: int, rank: int | None, host: str | None, line: str, rl: RankLog | None, keyless: bool = False
    ) -> None:
        f = self.facts
        sig = None if keyless else signatures.match(line)
        if rl is not None:
            if any(map(line.__contains__, _PEER_NEEDLES)) and len(rl.peers) < MAX_PEERS:
                for pat in _PEER:
                    m = pat.search(line)
                    if m and m.group(1) not in rl.peers:
                        rl.peers.append(m.group(1))
            if rl.cuda is None and ("CUDA" in line or "fallen off" in line or "ECC" in line):
                m = _CUDA.search(line)
                if m and rl.cuda is None:
                    rl.cuda = m.group(1).strip()
            if rl.oom_size is None and "Tried to allocate" in line:
                m = _OOM_SIZE.search(line)
                rl.oom_size = m.group(1) if m else None
        if "failed to pass monitoredBarrier" in line and len(f.barrier) < 64:
            m = _BARRIER.search(line)
            if m:
                ranks = [int(x) for x in m.group(1).split(", ")]
                f.barrier.append({"ranks": ranks, "line": n, "rank": rank, "text": line.strip()[:300]})
        if " ranks: " in line and len(f.horovod) < 256:
            for m in _HVD_RANKS.finditer(line):
                if len(f.horovod) < 256:
                    f.horovod.append((n, m.group(1), tuple(int(x) for x in m.group(2).split(", "))))
        if "NCCL WARN" in line and len(f.nccl_warns) < 64:
            m = _NCCL_WARN.search(line)
            if m:
                item = (m.group(1) or host or "?", m.group(2).strip()[:300])
                if item not in f.nccl_warns:
                    f.nccl_warns.append(item)
        self._nodes_around(n, line)
        if sig is None and ("ERROR" in line or "FATAL" in line or "rror in " in line or "atal error" in line):
            if _APP_BANNER.search(line) and not any(w in line for w in _NOT_BANNER):
                self._banner = (n, rank, host, line.strip()[:300])
        aborted = sig.name in ABORT_SIGNS if sig is not None else ABORT_WORDS in line
        if aborted and self._banner and 0 < n - self._banner[0] <= BANNER_NEAR and len(f.hits) < MAX_HITS:
            at, who, where, text = self._banner
            self._banner = None
            f.hits.append(Hit(at, who, where or host, "app-fatal-abort", "code", text))
        if sig is None or len(f.hits) >= MAX_HITS or self._per_sig.get(sig.name, 0) >= MAX_HITS_PER_SIG:
            return
        if host is None and "NCCL" in line:  # NCCL's own prefix names the host: "node01:1234:5678 [0] NCCL ..."
            m = _NCCL_HOST.match(line)
            host = m.group(1) if m and prefix.is_host(m.group(1)) else None
        if rank is None and "ank " in line:  # torch's "[Rank 3] ..." / "[PG 0 Rank 3] ..." in the line: who said it
            m = SAYS_RANK.search(line)
            rank = int(m.group(1)) if m else None
        if rank is not None and line.lstrip().startswith("slurmstepd: "):
            rank = None  # slurmstepd's own line through srun --label: the stream's task, not the one it names
        if any(h.sig == sig.name and h.rank == rank and h.host == host for h in f.hits[-32:]):
            return  # the same line again (NCCL repeats its warnings per channel)
        hit = Hit(n, rank, host, sig.name, sig.category, line.strip()[:300], sig.node_of(line) or None)
        if hit.node is None and sig.category == "node" and self._prompt and n - self._prompt[0] <= PROMPT_NEAR:
            hit.node = self._prompt[1]  # the output of a host command run at that host's prompt
        if hit.node is None and sig.name in _NODE_BEFORE:
            at, node = self._before.get(sig.name, (-1, ""))
            hit.node = node if at >= 0 and n - at <= _NODE_BEFORE[sig.name][1] else None
        if hit.node is None and sig.name in _NODE_AFTER:
            pat, within = _NODE_AFTER[sig.name]
            self._node_next = (hit, n + within, pat)
        f.hits.append(hit)
        self._per_sig[sig.name] = self._per_sig.get(sig.name, 0) + 1

    def _nodes_around(self, n: int, line: str) -> None:
        """The node a signature's line leaves to the lines around it (_NODE_AFTER, _NODE_BEFORE)."""
        if self._node_next is not None:
            hit, until, pat = self._node_next
            m = pat.match(line) if n <= until else None
            if m or n > until:
                self._node_next = None
            if m:
                hit.node = m.group(1)
        if "ip: " in line or "Exec host:" in line:
            for name, (pat, _) in _NODE_BEFORE.items():
                m = pat.match(line)
                if m:
                    self._before[name] = (n, m.group(1))

    def _slurm(self, n: int, line: str) -> None:
        f = self.facts
        if "CANCELLED AT" in line and "***" in line and len(f.slurm_ends) < 64:
            m = _SLURM_END.search(line)
            if m:
                f.slurm_ends.append(
                    {
                        "kind": m.group(1),
                        "job": m.group(2),
                        "node": m.group(3),
                        "at": m.group(4),
                        "due_to": (m.group(5) or "").strip() or None,
                        "line": n,
                    }
                )
        if "srun: error: " in line and len(f.srun_tasks) < 256:
            m = _SRUN_TASK.search(line)
            if m:
                f.srun_tasks.append({"node": m.group(1), "tasks": m.group(2), "what": m.group(3).strip(), "line": n})

    def _mpi(self, n: int, line: str, host: str | None = None) -> None:
        f = self.facts
        if len(f.mpi) >= 64 or len(f.local) >= 64:
            return
        if not (
            "MPI_ABORT" in line
            or "called MPI_Abort" in line
            or "]: aborting job" in line
            or "died from signal" in line
            or "Process name: [[" in line
            or "noticed that process" in line
            or "-- Process " in line
            or "ProcessExitedException: process " in line
            or " RUNNING AT " in line
            or "MPICH ERROR" in line
            or "ERROR on proc " in line
            or "MPI rank:" in line
            or "FATAL from PE" in line
            or "taskid: " in line
            or "reported by process [" in line
            or "] --> FOAM FATAL" in line
            or "disagreement between rank0" in line
            or "of the same param in process" in line
            or "Exiting: C" in line
            or "has terminated without calling MPI_Finalize" in line
            or " Proc: " in line
            or "One of MPI processes was aborted" in line
            or "[child_handler] MPI process (rank: " in line
            or "attempting to start process rank " in line
            or "*** Process received signal ***" in line
            or any(map(line.__contains__, _APP_RANK_WORDS))
        ):
            return
        m = _OMPI_HANDLER.match(line) if "*** Process received signal ***" in line else None
        if m and not f.crashed_on:  # the first process to crash: the node (the handler does not print a rank)
            f.crashed_on.append({"rank": None, "node": m.group(1), "line": n, "how": "Open MPI's signal handler"})
        m = _SPAWN.search(line) if "terminated with" in line else None
        if m:
            f.local.append({"rank": int(m.group(1) or m.group(2)), "node": None, "line": n, "how": "mp.spawn's process",
                            "heads": True})  # fmt: skip  # printed before the traceback it names
        m = _MPI_ABORT.search(line)
        if m:
            f.mpi.append({"rank": int(m.group(1)), "node": None, "line": n, "how": "MPI_ABORT was invoked on it"})
        m = _MPICH_ABORT.search(line) if "called MPI_Abort" in line else None
        if m:  # MPICH's (and Intel MPI's) own line: the process that called MPI_Abort
            f.mpi.append({"rank": int(m.group(1)), "node": None, "line": n, "how": "MPI_Abort was called by it"})
        m = _PMI_ABORT.match(line) if "]: aborting job" in line else None
        if m:
            f.mpi.append({"rank": int(m.group(1)), "node": None, "line": n, "how": "MPICH's PMI client aborted"})
        m = _LAMMPS_PROC.search(line) if "ERROR on proc " in line else None
        if m:  # LAMMPS' own error line from one process (Error::one), before any abort
            f.mpi.append({"rank": int(m.group(1)), "node": None, "line": n, "how": "LAMMPS' ERROR on proc"})
        m = _GMX_RANK.search(line) if "MPI rank:" in line else None
        if m:  # GROMACS' fatal block names the rank it was raised on (after its Source file line)
            f.mpi.append({"rank": int(m.group(1)), "node": None, "line": n, "how": "GROMACS' MPI rank line"})
        m = _FMS_PE.search(line) if "FATAL from PE" in line else None
        if m:  # FMS's fatal error names the PE (its MPI rank) that raised it
            f.mpi.append({"rank": int(m.group(1)), "node": None, "line": n, "how": "FMS's FATAL from PE"})
        m = _APP_RANK.search(line) if any(w in line for w in _APP_RANK_WORDS) else None
        if m:  # an application's own fatal form names the rank that stopped (TDEP, AMReX, ESMF, HDF5)
            f.mpi.append({"rank": int(next(g for g in m.groups() if g)), "node": None, "line": n,
                          "how": "the application's own fatal line"})  # fmt: skip
        m = _CHARM_NODE_PROC.match(line) if " Proc: " in line else None
        if m:  # session 25: SpECTRE's ERROR block (on Charm++) opens with the node and the PE (rank) that raised it
            f.mpi.append({"rank": int(m.group(1)), "node": None, "line": n, "how": "SpECTRE's error block",
                          "heads": True})  # fmt: skip
        m = _RSL_TASK.search(line) if "taskid: " in line else None
        if m:  # the head of WRF's per-rank rsl.error file: its rank and node (its fatal call comes later)
            f.mpi.append({"rank": int(m.group(1)), "node": m.group(2), "line": n, "how": "WRF's rsl file of",
                          "heads": True})  # fmt: skip
        m = _OMPI_REPORTED.search(line) if "reported by process [" in line else None
        if m:  # the process whose MPI call failed (its error class on the lines after)
            f.mpi.append({"rank": int(m.group(1)), "node": None, "line": n, "how": "Open MPI: reported by process",
                          "heads": True})  # fmt: skip  # printed before the error class it names
        m = _FOAM_RANK.search(line.lstrip()) if "] --> FOAM FATAL" in line else None
        if m:  # OpenFOAM's own error, prefixed with the processor that raised it
            f.mpi.append({"rank": int(m.group(1)), "node": None, "line": n, "how": "OpenFOAM's [N] FATAL ERROR"})
        m = _DISAGREE.search(line) if "disagreement between" in line or "same param in process" in line else None
        if m:  # the rank whose values differ from rank 0's, as the check that raised names it
            f.mpi.append({"rank": int(m.group(1) or m.group(2)), "node": None, "line": n,
                          "how": "its values differ from rank 0's"})  # fmt: skip
        m = _CHARM_EXIT.search(line) if "Exiting: C" in line else None
        if m:  # round 9: Charm++'s (NAMD's) processor that aborted or caught a signal, before its "Reason:" line
            f.mpi.append({"rank": int(m.group(1)), "node": None, "line": n, "how": f"Charm++: {m.group(2)}",
                          "heads": True})  # fmt: skip
        m = _MPT_TERMINATED.search(line) if "has terminated without calling" in line else None
        if m:  # round 9: SGI/HPE MPT names the first rank that died (a signal, an exit) before it aborts the job
            f.mpi.append({"rank": int(m.group(1)), "node": None, "line": n,
                          "how": "MPT: terminated without calling MPI_Finalize"})  # fmt: skip
        m = _FJ_ABORTED.search(line) if "One of MPI processes was aborted" in line else None
        if m:  # round 9: Fujitsu MPI's launcher (plexec, Fugaku and FX1000 sites) names the rank that aborted
            f.mpi.append({"rank": int(m.group(1)), "node": None, "line": n, "how": "plexec: aborted"})
        m = _MVAPICH_CHILD.match(line) if "[child_handler] MPI process (rank: " in line else None
        if m:  # MVAPICH's mpispawn: the rank that died first (a signal or an exit code), on its node
            f.mpi.append({"rank": int(m.group(2)), "node": m.group(1), "line": n,
                          "how": "MVAPICH's mpispawn: terminated"})  # fmt: skip
        m = _PALS_DIED.search(line) if "died from signal" in line else None
        if m:  # Cray PALS' mpiexec names each rank that died and its node (the line's host prefix), first first
            f.mpi.append({"rank": int(m.group(1)), "node": host, "line": n,
                          "how": f"mpiexec: died from signal {m.group(2)}"})  # fmt: skip
        m = _MPI_FIRST.search(line)
        if m:
            f.mpi.append({"rank": int(m.group(1)), "node": None, "line": n, "how": "mpirun's first process to fail"})
        m = _MPI_SIGNAL.search(line)
        if m:
            f.mpi.append({"rank": int(m.group(1)), "node": m.group(2).rstrip("."), "line": n,
                          "how": "mpirun's signal line"})  # fmt: skip
        m = _MPICH_ERROR.search(line)
        if m:
            f.mpi.append({"rank": int(m.group(1)), "node": m.group(2), "line": n, "how": "Cray MPICH's abort line"})
        m = _OMPI_START.search(line) if "attempting to start process rank " in line else None
        if m:  # round 10: Open MPI's help text on a program it could not start names the rank it was starting
            f.mpi.append({"rank": int(m.group(1)), "node": None, "line": n, "how": "mpirun could not start it"})
        m = _HYDRA.search(line) if " RUNNING AT " in line else None
        if m:  # MPICH's hydra names every rank it found dead, the first printed first
            f.mpi.append({"rank": int(m.group(1)), "node": m.group(2), "line": n,
                          "how": "MPICH's BAD TERMINATION (RANK ... RUNNING AT)"})  # fmt: skip

    def _torchrun(self, n: int, line: str, host: str | None) -> None:
        """torchrun's ChildFailedError table ("Root Cause (first observed failure)": rank, host, exitcode)."""
        f = self.facts
        if "failed (exitcode: " in line and "local_rank: " in line:
            m = _TR_LOCAL.search(line)
            if m and len(f.torchrun) < 256:
                f.torchrun.append({"rank": None, "local_rank": int(m.group(2)), "host": host,
                                   "exitcode": int(m.group(1)), "line": n})  # fmt: skip
        if line.strip() in ("Root Cause (first observed failure):", "Failures:"):
            self._table = {"line": n, "host": host, "root": line.strip().startswith("Root")}
            return
        if self._table is None:
            return
        m = _TR_KEY.match(line)
        if not m:
            if line.strip().startswith("[") or not line.strip() or line.strip().startswith(("time", "error_file")):
                return
            if set(line.strip()) <= set("=-"):
                self._finish_table()
            return
        k, v = m.group(1), m.group(2)
        if k == "rank":
            r = _TR_RANK.match(v)
            self._table["rank"] = int(r.group(1)) if r else None
        elif k == "host":
            self._table["host"] = v.strip()[:128]
        elif k == "time":
            self._table["time"] = v.strip()[:40]
        elif k == "exitcode":
            c = _TR_CODE.match(v)
            self._table["exitcode"] = int(c.group(1)) if c else None
            self._table["line"] = n
        elif k == "traceback":
            self._finish_table()

    def _finish_table(self) -> None:
        t, self._table = self._table, None
        if t and "exitcode" in t and len(self.facts.torchrun) < 256:
            self.facts.torchrun.append({"rank": t.get("rank"), "host": t.get("host"), "exitcode": t["exitcode"],
                                        "line": t["line"], "root": t.get("root", False),
                                        "time": t.get("time")})  # fmt: skip


KEY_BLOCK = 64  # lines checked at once for the signatures' keys


def scan(lines: Iterable[str]) -> LogFacts:
    """Every fact above from an iterable of lines (any size: memory stays bounded). The lines go in blocks of
    KEY_BLOCK: a block whose text holds none of the signatures' keys (most of a training log's) skips the
    per-line signature lookup (a key never spans two lines, so no line of such a block holds one)."""
    s = Scanner()
    block: list[str] = []
    for line in lines:
        block.append(line)
        if len(block) == KEY_BLOCK:
            _feed_block(s, block)
            block = []
    _feed_block(s, block)
    s._finish_table()
    return s.facts


def _feed_block(s: Scanner, block: list[str]) -> None:
    text = "\n".join(x[:LINE_CAP] for x in block)
    keyless = not signatures.any_key(text.lower())
    wordless = not vocab.any_word(text)  # no family's word: no failure line (vocab's words hold no line break)
    for line in block:
        s.feed(line, keyless, wordless)


def scan_text(text: str) -> LogFacts:
    return scan(text.splitlines())


# --- one text in, one fact out (the job-folder side; the same bounds) ---
OWN_LINE = ("environment", "node", "network", "desync")  # what a rank's own line names beyond code and OOM


def own_signs(err: str) -> list[dict]:
    """The lines of a rank's output that name an environment, node, network or desync failure (signatures.py),
    the first of each signature."""
    out: list[dict] = []
    for h in scan_text(err).hits:
        if h.sig in signatures.DEFER_TO_EXCEPTION:  # a full disk in a rank's own output: why/disk.py says it
            continue
        if h.category in OWN_LINE and not any(o["sig"] == h.sig for o in out) and len(out) < 8:
            out.append({"sig": h.sig, "category": h.category, "text": h.text, "node": h.node})
    return out


def _lines(text: str) -> Iterable[str]:
    for line in text.splitlines():
        yield line[:LINE_CAP]


def last_traceback(text: str) -> Raised | None:
    """The last traceback in `text` (the one the rank died of), or None."""
    tb: _Traceback | None = None
    last = None
    for line in _lines(text):
        if tb is None:
            if line.startswith("Traceback (most recent call last)"):
                tb = _Traceback(0)
            continue
        got = tb.feed(line)
        if got is True:
            continue
        tb = None
        if isinstance(got, Raised):
            last = got
        elif line.startswith("Traceback (most recent call last)"):
            tb = _Traceback(0)
    return last


# torch's TCPStore host (rank 0) when a client never came: "Timed out after 31 seconds waiting for clients.
# 2/3 clients joined." (c10d's TCPStore::waitForWorkers)
_JOINED = re.compile(r"Timed out after (\d{1,9}) seconds waiting for clients\. (\d{1,7})/(\d{1,7}) clients joined")


def rendezvous_short(text: str) -> list[int] | None:
    """[seconds waited, clients joined, clients expected] from the store host's rendezvous timeout, or None."""
    for line in _lines(text):
        if "clients joined" in line:
            m = _JOINED.search(line)
            if m:
                return [int(m.group(1)), int(m.group(2)), int(m.group(3))]
    return None


def peers_lost(text: str) -> list[str]:
    """Addresses or host names of peers whose connection this output says was lost, in order, once each."""
    found: list[str] = []
    for line in _lines(text):
        if len(found) >= MAX_PEERS or not any(s in line for s in _PEER_NEEDLES):
            continue
        for pat in _PEER:
            m = pat.search(line)
            if m and m.group(1) not in found:
                found.append(m.group(1))
    return found


# mpirun's remote sessions ending under it: ssh's own message (MPICH's Hydra launches through ssh), Open MPI's
_LAUNCHER_LOST = [
    re.compile(r"Connection to (\S{1,256}) closed by remote host"),
    re.compile(r"ssh: connect to host (\S{1,256}) port \d{1,6}: "),
]
_ORTE_NODE = re.compile(r"Remote daemon:.{0,300}? on node (\S{1,256})")


def launcher_lost(text: str) -> list[str]:
    """Hosts or addresses whose connection mpirun lost (mpirun.err), in order, once each."""
    found: list[str] = []
    orte_at = None
    for i, line in enumerate(_lines(text)):
        hosts = []
        for pat in _LAUNCHER_LOST:
            m = pat.search(line)
            if m:
                hosts.append(m.group(1))
        if "ORTE has lost communication with a remote daemon." in line:
            orte_at = i
        if orte_at is not None and i - orte_at <= 8 and "Remote daemon:" in line:
            m = _ORTE_NODE.search(line)
            if m:
                hosts.append(m.group(1))
                orte_at = None
        for h in hosts:
            if h.rstrip(".") not in found:
                found.append(h.rstrip("."))
    return found


def cuda_error(text: str) -> str | None:
    after_frame = False
    for line in _lines(text):
        source, after_frame = after_frame and line[:1] in (" ", "\t"), bool(_FRAME.match(line))
        if source:  # a frame's source line: `raise RuntimeError("CUDA error: ...")` is code, not the error
            continue
        m = _CUDA.search(line) if ("CUDA" in line or "fallen off" in line or "ECC" in line) else None
        if m:
            return m.group(1).strip()
    return None


def oom_size(text: str) -> str | None:
    """'2.00 GiB' from torch's "Tried to allocate 2.00 GiB", else None."""
    for line in _lines(text):
        if "Tried to allocate" in line:
            m = _OOM_SIZE.search(line)
            if m:
                return m.group(1)
    return None


def is_oom(text: str) -> bool:
    return any(n in line for line in _lines(text) for n in _OOM_NEEDLES)


def watchdog_ranks(text: str) -> set[int]:
    """Every rank whose watchdog reported the timeout, in either of its lines."""
    f = scan_text(text)
    return {r for r in f.watchdog if r >= 0} | f.watchdog_at


def watchdog_timeouts(text: str) -> list[dict]:
    """ProcessGroupNCCL's "[Rank R] Watchdog caught collective operation timeout" lines, once per rank."""
    f = scan_text(text)
    return [{k: v for k, v in f.watchdog[r].items() if k != "line"} for r in sorted(f.watchdog)]


def nccl_warnings(text: str) -> list[tuple[str, str]]:
    """(host, message) of each distinct `NCCL WARN` line (with or without NCCL's host:pid:tid prefix)."""
    return scan_text(text).nccl_warns


def slurm_ends(text: str) -> list[dict]:
    """slurmstepd's "*** JOB 12 ON node1 CANCELLED AT 2024-05-01T10:00:00 DUE TO TIME LIMIT ***" lines."""
    return [{k: v for k, v in e.items() if k != "line"} for e in scan_text(text).slurm_ends]


def srun_task_errors(text: str) -> list[dict]:
    """srun's "srun: error: node3: task 2: Exited with exit code 1" (or "Killed")."""
    return [{k: v for k, v in e.items() if k != "line"} for e in scan_text(text).srun_tasks]


def split_by_rank(text: str) -> dict[int, str]:
    """Lines of a job's combined output by rank, from any launcher's prefix (prefix.py)."""
    out: dict[int, list[str]] = {}
    for line in _lines(text):
        r, _, rest = prefix.split(line)
        if r is not None:
            out.setdefault(r, []).append(rest)
    return {r: "\n".join(lines) + "\n" for r, lines in out.items()}


def _unfinished(bar: re.Match, line: str) -> bool:
    """A progress bar not at its end: under 100 %, or at a rounded "100%" with its count short of its total by less
    than tqdm's rounding (99.5 % and up prints "100%"; a count far short of it is not that bar's)."""
    if int(bar.group(1)) < 100:
        return True
    m = _BAR_COUNT.search(line, bar.end(), bar.end() + 200)
    return m is not None and 995 * int(m.group(2)) <= 1000 * int(m.group(1)) < 1000 * int(m.group(2))


def _elapsed(line: str, at: int) -> int | None:
    """A tqdm bar's elapsed time in seconds ("[32:12<53:25", "[1:02:03<..."), after position `at`."""
    m = _ELAPSED.search(line, at, at + 240)
    if not m:
        return None
    return int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + int(m.group(3))
