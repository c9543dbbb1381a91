"""`clusterdoc why` on a job clusterdoc did not start: its output, read as an engineer reads it (pure: lines in,
Evidence out).

Every launcher's rank prefix (why/prefix.py), each rank's traceback, the signature lines that name a failure
by themselves (why/signatures.py), the NCCL watchdog lines compared across ranks, torchrun's failure table,
Slurm's end and task lines. Times are unknown in such logs; the order of lines stands for them (what is
printed first happened first). Evidence is thinner than a clusterdoc job's (no exit records, no start records,
no hang report): where the lines do not say what failed, the verdict is "unknown" with the candidates.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable
from dataclasses import asdict

from clusterdoc.why import logs, signatures
from clusterdoc.why.evidence import Evidence, RankFacts

# a launcher's own exception after a rank failed, a stop, or a wrapper of the real ones: never the cause
EFFECT_TYPES = ("ChildFailedError", "CalledProcessError", "SignalException", "KeyboardInterrupt", "SystemExit",
                "ExceptionGroup", "BaseExceptionGroup", "ProcessExitedException", "ProcessRaisedException")  # fmt: skip
# torch.distributed's failures: what failed is in the lines after them ("Last error:"), or in another rank
NCCL_TYPES = ("DistBackendError", "DistNetworkError", "DistStoreError", "ncclSystemError", "ncclInternalError",
              "ncclRemoteError", "ncclUnhandledCudaError", "ProcessGroupNCCL", "RendezvousTimeoutError",
              "RendezvousClosedError", "RendezvousConnectionError", "RendezvousError", "DistError")  # fmt: skip
NCCL_WORDS = ("NCCL", "Connection closed by", "Broken pipe", "Socket Timeout", "Connection reset", "Watchdog caught",
              "ProcessGroup", "c10d", "remote process exiting", "Timed out", "timed out", "gloo",
              "monitoredBarrier", "Connection refused", "TCPStore", "NCCL communicator",
              "Horovod has been shut down")  # fmt: skip

# an exception's message that says two installed versions disagree (session 23: DeepSpeed's "Installed CUDA version
# 11.0 does not match the version torch was compiled with 10.1", a library's own check of another's version)
VERSION_WORDS = ("does not match the version", "version mismatch", "Version mismatch", "versions do not match",
                 "version does not match", "compiled with", "compiled against", "requires a newer version",
                 "is incompatible with the installed", "is not compatible with the installed",
                 "version incompatibility")  # fmt: skip  # torch's "cuDNN version incompatibility: PyTorch was ..."

# an exception's message that says a package the code needs is not there (HunyuanWorld-Voyager#5's "Ulysses
# Attention and Ring Attention requires xfuser package.", "X is not installed", "Please install X", "pip install X"):
# the install lacks an optional dependency, as an ImportError says
MISSING_PACKAGE = re.compile(
    r"\b(?:requires?|needs?) (?:the )?[\w.\-]{1,40} (?:package|library)\b|\bnot installed\b|\bpip install\b|"
    r"\b[Pp]lease install\b"
)
# session 28: an exception whose message tells the user to set an environment variable (coqui TTS's "Define the
# target GPU by `CUDA_VISIBLE_DEVICES`", "environment variable MASTER_ADDR expected, but not set"): the job's
# environment is what to change; never a debugging hint's variable (TORCH_DISTRIBUTED_DEBUG, HYDRA_FULL_ERROR,
# CUDA_LAUNCH_BLOCKING: "set ... to see more")
SET_ENV_VAR = re.compile(
    r"\b(?:[Ss]et|[Dd]efine|[Ee]xport|[Ss]pecify)\b[^.;]{0,40}?\b(?!\w*(?:DEBUG|FULL_ERROR|LAUNCH_BLOCKING|"
    r"STACKTRACE))[A-Z][A-Z0-9]{1,20}_[A-Z0-9_]{2,40}\b|\benvironment variable [A-Z][A-Z0-9_]{2,40} expected\b"
)

# What an exception says by its type and message, where no signature line says more (the first row that fits
# wins): (types, words in the message (any; () for none needed), kind). kind: "effect" (not a cause), "nccl"
# (a distributed call failed: look for what failed first), or a category. An exception no row names is the
# code's (or its data's): ValueError, KeyError, AttributeError, a collate error, a DataLoader worker's, ...
EXCEPTION_RULES: list[tuple[tuple[str, ...], tuple[str, ...] | re.Pattern, str]] = [
    (EFFECT_TYPES, (), "effect"),
    # session 26: a wrapper that points at what failed before it (vLLM's "Engine core initialization failed. See
    # root cause above.", Ray Tune's "Trials did not complete" over its trials' own errors): never the cause
    ((), ("See root cause above", "see root cause above", "See the root cause above"), "effect"),
    (("TuneError",), ("Trials did not complete",), "effect"),
    (("OutOfMemoryError",), (), "oom"),
    (("MemoryError",), (), "oom"),
    # an allocator's own words in any exception's message (ROCm's HIP, Apple's MPS, XLA's RESOURCE_EXHAUSTED, a CUDA
    # call's ": out of memory"); not a hint that something "may run out of memory"
    ((), ("HIP out of memory", "MPS backend out of memory", "Out of memory", "OUT OF MEMORY", "OUT_OF_MEMORY",
          ": out of memory", "out of memory (", "out of memory. Tried to allocate",
          "BadAlloc", "std::bad_alloc"), "oom"),  # torch's, any device; Paddle's allocator's, C++'s
    (NCCL_TYPES, (), "nccl"),
    # a keyword the called function does not know: most often the library is another version than the code's
    (("TypeError",), ("got an unexpected keyword argument",), "api"),
    # a library's config rejected by its own schema (pydantic): a value or key another release of it accepts as
    # often as a wrong value (DeepSpeed 0.15's ZeRO config, DeepSpeed-Chat's `extra fields not permitted`)
    (("ValidationError",), ("validation error for", "validation errors for"), "config"),
    # a pickle cut short: the process that sent it died (mp.spawn's parent, a DataLoader worker) or the file was
    # cut (a partial checkpoint): never the code's by itself
    (("UnpicklingError",), ("pickle data was truncated", "truncated"), "unsure"),
    (("ImportError", "ModuleNotFoundError"), (), "environment"),
    # session 29: transformers' lazy import re-raises an import's failure as a RuntimeError (chai-lab#337: a torch
    # older than its transformers); torch's TCPStore asked for libuv on a build without it (Windows wheels)
    (("RuntimeError",), ("because of the following error",
                         "was build without libuv support", "was built without libuv support"), "environment"),
    # session 29: submitit's job ran out of its time limit and could not be requeued (not checkpointable)
    (("UncompletedJobError",), ("timed-out",), "scheduler"),
    # session 29: a library telling its caller the order of calls (wandb's "You must call wandb.init() before
    # wandb.log()" on a rank where only rank 0 initialised it: simpletuner-304, unitraj-23); DeepSpeed's ZeRO refusing
    # what it was asked (a checkpoint of another world size: deepspeed-3810)
    ((), ("You must call ",), "code"),
    (("ZeRORuntimeException",), (), "code"),
    # session 29: torch.save could not open its file: a directory the code never made, or a full or read-only disk
    # (ronin-51: the disk): the exception alone does not say which
    (("RuntimeError",), ("cannot be opened.",), "unsure"),
    ((), VERSION_WORDS, "environment"),  # two installed versions disagree: the install's
    ((), MISSING_PACKAGE, "environment"),  # session 27: a package the code needs is not installed
    ((), SET_ENV_VAR, "environment"),  # session 28: the message asks for an environment variable
    # transformers older than the model it loads (its Auto classes know no such tokenizer or architecture:
    # llm-cxr#8 and transformers#22222 settled by upgrading it, transformers#9250 by installing sentencepiece);
    # Triton finding no driver library (libcuda.so)
    ((), ("does not exist or is not currently imported", "Transformers does not recognize this architecture",
          "libcuda.so cannot found"), "environment"),
    # session 21: a cloud or cluster with no room for the request (SkyPilot's, AWS's and GCP's capacity words): the
    # scheduler's answer, raised in the launcher's Python
    (("ResourcesUnavailableError",), (), "scheduler"),
    ((), ("InsufficientInstanceCapacity", "ZONE_RESOURCE_POOL_EXHAUSTED", "Quota exceeded for quota"), "scheduler"),
    # a shared-memory segment the node would not give (Docker's 64 MB /dev/shm, a DataLoader's workers, Paddle's
    # "Memory map failed when create shared memory"): the node's or the container's setup
    ((), ("shared memory", "/dev/shm"), "environment"),
    # an MPI library's own error class raised through its binding (mpi4py's "Other MPI error, error stack: ..."):
    # the fabric, the launch or the call's arguments; its stack decides
    ((), ("Other MPI error", "error stack:", "MPI_ERR_"), "unsure"),
    ((), ("HDF5 error back trace",), "unsure"),  # h5py's (old) wrapper: HDF5's own frames after it say what failed
    (("OSError",), ("Cannot allocate memory",), "oom"),
    # CUDA's driver API name for an illegal address in a library's own exception (OpenMM's): a kernel's bad access,
    # the code's as torch's "an illegal memory access was encountered" is (why/sigtable/code.py illegal-access)
    ((), ("CUDA_ERROR_ILLEGAL_ADDRESS",), "code"),
    (("OSError",), ("No space left on device", "Disk quota exceeded"), "environment"),
    (("OSError",), ("undefined symbol", "cannot open shared object file", "GLIBC"), "environment"),
    # the dynamic loader's own words in any exception's message (Paddle's "(PreconditionNotMet) The third-party
    # dynamic library (libnccl.so) ... cannot open shared object file", a RuntimeError's "undefined symbol: ..."):
    # a library the install lacks or built against another (session 23: ernie-786)
    ((), ("cannot open shared object file", "undefined symbol: "), "environment"),
    ((), ("unable to open shared memory object", "Too many open files"), "environment"),  # /dev/shm, ulimit -n
    # a file system the job reads or writes is gone or read-only: NFS's ESTALE (errno 116), a mount remounted
    # read-only (EROFS, 30), a FUSE mount whose daemon died (ENOTCONN, 107): the node's mounts, not the code
    (("OSError",), ("Stale file handle", "Read-only file system", "Transport endpoint is not connected"),
     "environment"),
    # a path or a program the job may not use (EACCES, EPERM): every log of tests/fixtures/why whose failure is
    # "Permission denied" (a chdir, an execve, a config file, a container's stage) was the node's or the account's
    # setup, never the code's (session 21: 7 of 7)
    (("PermissionError",), (), "environment"),
    (("OSError",), ("Permission denied", "Operation not permitted"), "environment"),
    # the package managers' own errors: a distribution's metadata not there (importlib.metadata), conda's
    (("PackageNotFoundError", "CondaError", "PackagesNotFoundError", "EnvironmentLocationNotFound",
      "EnvironmentNameNotFound"), (), "environment"),
    # conda's `conda activate` in a shell it did not set up: the batch script goes on (with another python, or to
    # the failure that line has itself): no cause by itself (session 25: three committed logs ran on to their time
    # limit after it); why/sigtable/environment.py's weak line names it as a candidate
    (("CommandNotFoundError",), ("conda",), "effect"),
    # session 26: a module without a name the code calls ("module 'numpy' has no attribute 'float'", a Windows build
    # of Paddle without ProcessGroupNCCL, a local file named like the library it shadows): the install's version or
    # build, not the code's logic (an object's missing attribute stays the code's)
    (("AttributeError",), ("module '",), "environment"),
    # session 26: GitPython finding no repository (the code records its commit; a checkout downloaded as a zip, a
    # copy without .git, a container) or no git at all: the tree it runs in, not the code
    (("InvalidGitRepositoryError", "NoSuchPathError", "GitCommandNotFound"), (), "environment"),
    # session 25: flash-attn's functions undefined where the code imported them optionally (another major version
    # of flash-attn installed, or none): the install's
    (("NameError",), ("flash_attn",), "environment"),
    # session 25: C++'s string-to-number conversions failing (`what(): stoul`): a value the program read from
    # outside (an environment variable, a file, a command's output: ALCF's gpu_tile_compact.sh under DAOS's
    # interception library) that the log does not show
    (("invalid_argument", "out_of_range"), ("stoul", "stoi", "stol", "stoll", "stoull", "stod", "stof"), "unsure"),
    # session 25: a host name that did not resolve (the rendezvous' MASTER_ADDR: a pod or node not up yet, a name
    # the DNS does not know, a typo in the launch): the launch, the network or the cluster's DNS decide
    ((), ("Name or service not known", "Temporary failure in name resolution", "nodename nor servname provided",
          "No address associated with hostname"), "unsure"),
    # what these say failed is outside the code as often as in it: a candidate, never a verdict
    (("ConnectionError", "ConnectionRefusedError", "ConnectionResetError", "ConnectionAbortedError", "BrokenPipeError",
      "ProtocolError", "ChunkedEncodingError",
      "TimeoutError", "EOFError", "HTTPError", "ReadTimeout", "ConnectTimeout", "ReadTimeoutError",
      "ProxyError", "SSLError", "RemoteDisconnected", "LocalEntryNotFoundError", "IncompleteRead", "OSError",
      "ActorDiedError", "RayActorError", "WorkerCrashedError", "NodeDiedError", "OwnerDiedError", "ObjectLostError"),
     (), "unsure"),
    ((), ("CUDA error", "CUDA driver", "CUDNN_STATUS", "cuDNN error", "CUBLAS_STATUS", "NVML", "no CUDA GPUs",
          "NVIDIA driver", "CUDA-capable device", "exited unexpectedly", "is killed by signal",
          "PytorchStreamWriter failed", "NPU error, error code is", "HCCL",  # Ascend's as CUDA's
          # the other vendors' device runtimes' error codes (HIP, SYCL's PI and UR, Level Zero) as CUDA's
          "hipError", "HIP error", "PI_ERROR_", "UR_RESULT_ERROR_", "ZE_RESULT_ERROR_",
          # Triton's CUDA errors; cuDNN finding no algorithm (its version against torch's, or memory)
          "Triton Error [CUDA]", "unable to find an engine to execute"), "unsure"),
    ((), NCCL_WORDS, "nccl"),
]  # fmt: skip
INF_SEQ = 1 << 62
# collectives whose input has the same size on every rank (not all-to-all, scatter, gather: sizes differ there)
SAME_SIZE_OPS = ("BROADCAST", "ALLREDUCE", "ALLGATHER", "_ALLGATHER_BASE", "REDUCE_SCATTER", "_REDUCE_SCATTER_BASE",
                 "REDUCE", "COALESCED")  # fmt: skip
# srun's "node: task N: ..." of a task that failed by itself (not one srun stopped: Terminated, Killed)
SRUN_FAILED = ("Exited with exit code", "Segmentation fault", "Bus error", "Floating point exception",
               "Illegal instruction", "Out Of Memory")  # fmt: skip
BAR_WENT_ON = 3  # a progress bar's updates after an exception line: the job went on (it survived that one)
LOOSE_TAIL = 16  # an exception line without a traceback counts when its rank printed at most this many lines after
LOW_SEQ = 10  # a watchdog's SeqNum up to this: one of the process group's first collectives
MESSAGE_NEXT = 2  # lines after an exception that may still be its message (a wrapper's "because of: ...")
NEAR = 8  # lines after an exception where its detail ("Last error: ...") is printed


def evidence_from_output(text: str, job: str, state: str = "FAILED", scontrol: dict | None = None) -> Evidence:
    return evidence_from_lines(text.splitlines(), job, state, scontrol)


def evidence_from_lines(
    lines: Iterable[str], job: str, state: str = "FAILED", scontrol: dict | None = None
) -> Evidence:
    return evidence_from_facts(logs.scan(lines), job, state, scontrol)


# an exception raised inside a network client (its innermost frame in one of these files): a connection, a
# name that did not resolve, a server's answer, whatever its type (a ValueError of socket's getaddrinfo)
NETWORK_CLIENTS = ("/socket.py", "/ssl.py", "/http/client.py", "/urllib/request.py", "/urllib3/", "/requests/",
                   "/httpx/", "/httpcore/", "/aiohttp/", "/grpc/", "/botocore/", "/paramiko/")  # fmt: skip


# Python's own exception types (ValueError, KeyError, RuntimeError, ...): raised by the code or for it, the
# code's when no rule above names them (the table). A type of a library's own (jaxlib's XlaRuntimeError,
# hivemind's P2PDaemonError, GitPython's errors, Ray Tune's TuneError) reports what the library wraps (a device, a
# service, its install, a network) as often as a wrong call: on every folder here the ones no rule named were the
# environment's, the network's or memory's (session 26: 4 of 5 unseen), so a candidate, never a verdict
BUILTIN_TYPES = frozenset(
    n
    for n in dir(builtins)
    if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException)
)
# libraries' types that are the code's or its input's by their kind: a config or data file that does not parse
# (YAML, JSON, TOML, OmegaConf / Hydra), an argument parser's, a framework's misuse, C++'s standard exceptions thrown
# by a program
CODE_TYPES = ("JSONDecodeError", "TOMLDecodeError", "ConstructorError", "ScannerError", "ParserError", "ComposerError",
              "YAMLError", "ConfigAttributeError", "ConfigKeyError", "ConfigTypeError", "ConfigValueError",
              "MissingMandatoryValue", "InterpolationResolutionError", "InterpolationKeyError", "ValidationError",
              "ConfigCompositionException", "MissingConfigException", "ArgumentError", "ArgumentTypeError",
              "MissingOutputException", "MissingInputException", "RuleException",  # Snakemake's rules
              "MisconfigurationException",  # Lightning's: "misuse of PyTorch Lightning" (its docstring)
              "runtime_error", "logic_error", "out_of_range", "length_error", "domain_error", "range_error",
              "overflow_error", "underflow_error", "invalid_argument", "exception")  # fmt: skip


def _kind(raised: logs.Raised) -> str:
    """What the exception is by EXCEPTION_RULES: 'effect', 'nccl' (look around it) or a category ('code' when no
    rule fits, 'unsure' when a network client raised it)."""
    if raised.env_lookup and not _launcher_variable(raised):  # os.environ[NAME]: the job's environment lacks it
        return "environment"
    for types, words, kind in EXCEPTION_RULES:
        if types and raised.type not in types:
            continue
        if isinstance(words, re.Pattern):
            if not words.search(raised.message):
                continue
        elif words and not any(w in raised.message for w in words):
            continue
        return kind
    if raised.inner and any(c in raised.inner for c in NETWORK_CLIENTS):
        return "unsure"
    if raised.type not in BUILTIN_TYPES and raised.type not in CODE_TYPES and not raised.type[:1].islower():
        return "library"  # (a lowercase type is C++'s: a program's own throw, `int` or std::runtime_error)
    return "code"


def evidence_from_facts(f: logs.LogFacts, job: str, state: str = "FAILED", scontrol: dict | None = None) -> Evidence:
    signs = [asdict(h) for h in f.hits]
    ranks: list[RankFacts] = []
    exceptions: list[dict] = []
    for r in sorted(f.ranks):
        rl = f.ranks[r]
        rf = RankFacts(
            rank=r,
            host=rl.host,
            raised=asdict(rl.raised) if rl.raised else None,
            peers_lost=list(rl.peers),
            cuda=rl.cuda,
            oom=any(h["rank"] == r and h["category"] == "oom" for h in signs),
            oom_size=rl.oom_size,
        )
        if rl.raised:
            rf.recorded, rf.code, rf.ended = True, 1, float(rl.raised_at or 0)
            exceptions.append({"rank": r, "host": rl.host, "line": rl.raised_at, "raised": rl.raised})
        elif rl.peers:
            rf.recorded, rf.code = True, 1
        ranks.append(rf)
    for n, raised in f.unranked_raised:  # torch's own "[Rank N] ..." at the message's start names who raised it
        m = logs.SAYS_RANK.match(raised.message)
        exceptions.append({"rank": int(m.group(1)) if m else None, "host": None, "line": n, "raised": raised})
    # an exception line with no traceback around it (a partial paste): a rank's where it has no traceback; a
    # line without a rank only where the log has no traceback at all
    for r in sorted(f.ranks):
        rl = f.ranks[r]
        if rl.loose and not rl.raised and rl.loose_after <= LOOSE_TAIL:  # the rank stopped right after it
            exceptions.append({"rank": r, "host": rl.host, "line": rl.loose_at, "raised": rl.loose})
            rf = next(x for x in ranks if x.rank == r)
            rf.raised, rf.recorded, rf.code, rf.ended = asdict(rl.loose), True, 1, float(rl.loose_at or 0)
    # the last one, near the log's end (a logged and survived error earlier is no cause), where no exception but a
    # launcher's own (torchrun's ChildFailedError after ranks' tracebacks interleaved past reading) is in the log
    if all(e["raised"].type in EFFECT_TYPES for e in exceptions):
        for n, raised in f.unranked_loose[-1:]:
            # not one the job's progress bar went on after (conda's activate failing in a batch script that ran on;
            # one redraw after is tqdm closing its bar as the exception ends the job)
            if f.lines - n <= LOOSE_TAIL * 8 and sum(k for b, k in f.bars if b > n) < BAR_WENT_ON:
                exceptions.append({"rank": None, "host": None, "line": n, "raised": raised})
    exceptions = _unwrap(exceptions)
    _traceback_rank(f, signs)
    _phase_signs(f, signs)
    _module_then_missing(signs)
    _memory_limit_kill(f, signs)
    _memory_killed_task(f, signs)
    _gloo_loopback(f, signs)
    _verbs_enomem(signs)
    _beyond_the_gpu(signs)
    signs = _ran_on_to_time_limit(f, signs)
    signs = _abort_after_its_error(f, signs)
    # a Python warning that a part failed to load (torchvision's image extension: an undefined symbol) says the job
    # went on without it: no environment fault by itself (what then fails has its own line)
    signs = [s for s in signs if not (s["category"] == "environment" and _PY_WARNING.search(s["text"]))]
    for s in signs:  # a lost peer's address on the line (no rank before it to hold it): the node to look at
        if s["sig"] in logs.PEER_AFTER and s.get("node"):  # the peer its help text names, not the printer
            s["peer"], s["node"] = s["node"], None
        elif s["rank"] is None and signatures.get(s["sig"]).category == "peer":
            s["peer"] = next(iter(logs.peers_lost(s["text"])), None)
    signs = _defer_to_exceptions(signs, exceptions)
    by_rank: dict = {}
    for s in signs:
        by_rank.setdefault(s["rank"], []).append(s)
    for e in exceptions:
        signs.extend(_exception_sign(e, by_rank.get(e["rank"], [])))
    signs.sort(key=lambda s: s["line"])
    ev = Evidence(
        job=job,
        backend="slurm (not started by clusterdoc)",
        world=len(ranks),
        state=state,
        ranks=ranks,
        hang=_stall(f),
        scheduler=_scheduler(f, scontrol or {}),
        foreign=True,
        signs=signs,
    )
    for t in f.torchrun:  # torchrun's table: a rank killed by a signal (-9: the host's OOM killer)
        if t["exitcode"] == -9 and not any(s["sig"] in ("torchrun-sigkill", "sigkill") for s in signs):
            what = f"exitcode: -9 (rank {t.get('rank')}, local_rank {t.get('local_rank')})"
            ev.signs.append(_sign(t["line"], t.get("rank"), t.get("host"), "torchrun-sigkill", "oom", what))
    _worker_sigkill(f, ev.signs)
    for s in ev.signs:  # torchrun's table names the rank and host of its exitcode line
        if s["sig"] in ("torchrun-sigkill", "sigkill") and s.get("rank") is None:
            near = [t for t in f.torchrun if abs(t["line"] - s["line"]) <= 3 and t.get("rank") is not None]
            if near:
                s["rank"], s["host"] = near[0]["rank"], near[0].get("host") or s.get("host")
    if f.nccl_warns:
        ev.message = "; ".join(f"{h}: NCCL WARN {m}" for h, m in f.nccl_warns[:3])
    ev.culprits = culprit_lines(f)
    ev.barrier = list(f.barrier)
    ev.failures = list(f.failures)
    return ev


# torch's ExceptionWrapper re-raising a worker's exception in the parent ("Caught RuntimeError in replica 0 on device
# 0." of DataParallel, "... in DataLoader worker process 3." of a DataLoader), the worker's own traceback after it
_WRAPPER = re.compile(r"Caught \w{1,80} in (?:replica \d|DataLoader worker process \d|pin memory thread)")
WRAPPED_NEAR = 400  # lines from the wrapper's line to the worker's own exception ("Original Traceback ...")


def _unwrap(exceptions: list[dict]) -> list[dict]:
    """A wrapper's exception gives way to the worker's own one printed after it (its "Original Traceback"): that
    one says what failed (CUDA OOM in a replica, a KeyError in a worker's __getitem__); alone, the wrapper stays."""
    inner = {id(w) for w in exceptions if _WRAPPER.match(w["raised"].message) and any(
        x is not w and x["rank"] == w["rank"] and 0 < (x["line"] or 0) - (w["line"] or 0) <= WRAPPED_NEAR
        for x in exceptions)}  # fmt: skip
    return [e for e in exceptions if id(e) not in inner]


TB_NEAR = 8  # lines between an exception line without a rank and the one rank's traceback it belongs to
OWN_EXCEPTION = ("oom", "code")  # a rank's own exception line (not a node's kernel line, not the scheduler's)


def _traceback_rank(f: logs.LogFacts, signs: list[dict]) -> None:
    """An exception line without a rank (a paste of the error above the traceback, or a logger's copy of it)
    takes the rank whose traceback is next to it, where exactly one rank printed a traceback and it raised
    nothing else (Pai-Megatron's `torch.OutOfMemoryError: ...` then `[rank5]: Traceback ...`)."""
    with_tb = [rl for rl in f.ranks.values() if rl.tb_at is not None]
    if len(with_tb) != 1:
        return
    rl = with_tb[0]
    for s in signs:
        if s["rank"] is None and s["category"] in OWN_EXCEPTION and abs(rl.tb_at - s["line"]) <= TB_NEAR:
            if rl.raised is None or rl.raised.type in s["text"]:
                s["rank"] = rl.rank


# a segfault's signature lines, and how far around one a cleanup frame or line belongs to it (its backtrace)
SEGV_NEAR = 40
LOADING_NEAR = 20  # lines from a loading line to the SIGKILL that ended it
HDF5_NEAR = 40  # lines from HDF5's error-stack head to the netCDF error it explains (its frames between)


def _phase_signs(f: logs.LogFacts, signs: list[dict]) -> None:
    """What the job was doing when it died reads a signature better (and how it was launched: two ranks on one GPU
    under mpirun is the script's pinning, no launcher's): a segfault with a library's cleanup around it
    (MPI_Finalize, atexit, a destructor) happened after the work (a candidate, not the code); a SIGKILL right
    after a loading line is the host's OOM killer at memory's peak (not a time limit or a user); a command missing
    where a task ran, in a log of several nodes, may be that node's lack (a candidate: node or environment)."""
    nodes = f.hosts | {t["node"] for t in f.srun_tasks} | {e.get("node") for e in f.slurm_ends if e.get("node")}
    preempted = [s["line"] for s in signs if s["sig"] == "ray-node-preempted"]
    signs[:] = [  # Ray's "its node has died" with the reason after it: the preemption is the cause, not the node
        s for s in signs if not (s["sig"] == "ray-node-died" and any(0 < n - s["line"] <= 3 for n in preempted))
    ]
    said_at = [s["line"] for s in signs if s["category"] == "oom" or (s["category"] == "environment"
               and not signatures.get(s["sig"]).weak)]  # fmt: skip
    signs[:] = [  # an application's fatal-error head whose message says memory (oom) or its installation (OpenFOAM's
        # dummy Pstream: environment): the message's line says it
        s for s in signs if not (s["sig"] in signatures.APP_FATAL_SIGNS
                                 and any(0 < n - s["line"] <= signatures.APP_FATAL_NEAR for n in said_at))
    ]  # fmt: skip
    netcdf_at = [s["line"] for s in signs if s["sig"] == "netcdf-error"]
    signs[:] = [  # issue 41 (appcat): HDF5's error stack under netCDF-4 (its storage layer): netCDF's line says more
        s for s in signs if not (s["sig"] in signatures.HDF5_UNDER_NETCDF
                                 and any(0 < n - s["line"] <= HDF5_NEAR for n in netcdf_at))
    ]  # fmt: skip
    for s in signs:
        if s["sig"] in signatures.MISSING_SIGNS and len(nodes) > 1:
            s["sig"] = "missing-on-a-node"  # the others may have run it: that node, or every node
        elif s["sig"] in signatures.SEGV_SIGNS and any(abs(n - s["line"]) <= SEGV_NEAR for n in f.cleanup_at):
            s["sig"] = "segfault-at-exit"
        elif s["sig"] in signatures.SEGV_SIGNS and _unnamed_backtrace(f, s["line"]):
            s["sig"] = "segfault-unnamed"  # round 9: nothing says whose code crashed (nwchem-683: the build's)
        elif s["sig"] == "srun-task-segv" and not any(abs(n - s["line"]) <= SEGV_NEAR for n in f.named_frames_at):
            # srun's line alone, no backtrace naming a routine near it: the program, its build or the node
            # (spack-37409: one OS's build; trixie-35: a flaky node; session 17)
            s["sig"] = "segfault-unnamed"
        elif s["sig"] == "duplicate-gpu" and f.mpirun_tagged:
            # mpirun (horovodrun too) gives no rank its GPU: the script pins it from its local rank, or all share one
            s["sig"], s["category"] = "duplicate-gpu-mpirun", "code"
        elif s["sig"] in signatures.SIGKILL_SIGNS and any(0 <= s["line"] - n <= LOADING_NEAR for n in f.loading_at):
            s["sig"], s["category"] = "sigkill-loading", "oom"


def _module_then_missing(signs: list[dict]) -> None:
    """The node's module system missing, then a command not found: the command the modules would have provided
    (round 9: TACC/Lmod#645's fastqc, Jetstream_Cluster#18's mpirun). Either alone stays what it was."""
    at = [s["line"] for s in signs if s["sig"] in signatures.MODULE_SYSTEM_MISSING]
    for s in signs:
        if s["sig"] in signatures.COMMAND_MISSING and any(n < s["line"] for n in at):
            s["sig"], s["category"] = "module-then-missing", "environment"


def _unnamed_backtrace(f: logs.LogFacts, at: int) -> bool:
    """A segfault whose backtrace follows it and names no routine (hex addresses, `in ???`): a stripped build or a
    library's code; without a routine named nothing says it is the program's (round 9)."""
    bare = any(0 < n - at <= SEGV_NEAR for n in f.bare_frames_at)
    return bare and not any(0 < n - at <= SEGV_NEAR for n in f.named_frames_at)


# round 8 (memory): Slurm's older task/cgroup line that the job reached its memory limit at some point (a candidate:
# the page cache counts), and the lines that say a task was killed by SIGKILL (SIGKILL_SIGNS, srun's "task N: Killed")
MEMORY_LIMIT_SIGNS = ("slurm-exceeded-job-mem", "slurm-exceeded-step-mem", "slurm-hit-memory-limit")


def _memory_limit_kill(f: logs.LogFacts, signs: list[dict]) -> None:
    """The memory limit reached and a task killed by SIGKILL, in one log: the cgroup's memory kill as Slurm's older
    task/cgroup reported it (no oom-kill event line). Either alone stays a candidate."""
    limits = [s for s in signs if s["sig"] in MEMORY_LIMIT_SIGNS]
    if not limits or any(s["category"] == "oom" and not signatures.get(s["sig"]).weak for s in signs):
        return  # a line that says the memory kill outright decides it
    kills = [s for s in signs if s["sig"] in signatures.SIGKILL_SIGNS]
    killed_tasks = [t for t in f.srun_tasks if t["what"].startswith("Killed")]
    if not kills and not killed_tasks:
        return
    for s in limits:
        s["sig"], s["category"] = "slurm-memory-limit-kill", "oom"
        if s.get("rank") is None and kills and kills[0].get("rank") is not None:
            s["rank"] = kills[0]["rank"]
        elif s.get("rank") is None and killed_tasks and killed_tasks[0]["tasks"].isdigit():  # srun's task: a rank
            s["rank"], s["node"] = int(killed_tasks[0]["tasks"]), s.get("node") or killed_tasks[0]["node"]


# a scheduler's memory kill without a rank on its line; srun's "NODE: task N: Killed" right after it names the task
# the kill hit (one task: the rank; "tasks 0-3" is the whole node's, no rank)
MEMORY_KILL_SIGNS = ("slurm-mem-limit", "slurm-oom-kill", "slurm-oom-kill2", "slurm-cgroup-oom-handler",
                     "slurm-exceeded-vmem", "slurm-job-mem-notify", "slurm-memory-limit-kill")  # fmt: skip
KILLED_TASK_NEAR = 8  # lines from the memory kill to srun's report of the task


def _memory_killed_task(f: logs.LogFacts, signs: list[dict]) -> None:
    """A scheduler's memory kill takes its rank (and node) from srun's report of the one task it killed."""
    for s in signs:
        if s["sig"] not in MEMORY_KILL_SIGNS or s.get("rank") is not None:
            continue
        near = [t for t in f.srun_tasks if 0 < t["line"] - s["line"] <= KILLED_TASK_NEAR]
        killed = [t for t in near if t["what"].startswith(("Killed", "Out Of Memory"))]
        if len(killed) == 1 and killed[0]["tasks"].isdigit():
            s["rank"] = int(killed[0]["tasks"])
            s["node"] = s.get("node") or killed[0]["node"]
            continue
        # no srun: mpirun's "noticed that process rank N ... on node X exited on signal 9" next to it (the first
        # rank it saw killed; chombo-discharge-501)
        nine = {k["line"] for k in signs if k["sig"] == "mpirun-sigkill"}
        sig9 = [m for m in f.mpi if m["how"] == "mpirun's signal line" and m["line"] in nine
                and abs(m["line"] - s["line"]) <= KILLED_TASK_NEAR]  # fmt: skip
        if sig9:
            s["rank"], s["node"] = sig9[0]["rank"], s.get("node") or sig9[0]["node"]


# a batch script's own shell errors: bash goes on to the script's next line (no `set -e` in most job scripts)
SHELL_NONFATAL = ("batch-script-command-not-found", "pbs-script-command-not-found", "conda-shell-not-initialized")
RAN_ON = SHELL_NONFATAL + ("wrf-cfl",)  # a model's warning the job can run on after, to its time limit


def _ran_on_to_time_limit(f: logs.LogFacts, signs: list[dict]) -> list[dict]:
    """A batch script's shell error (or a model's warning: RAN_ON) before Slurm's time limit ended the job: the
    script went on and ran until the limit (a broken line continuation's `--batch_size: command not found`, conda's
    activate): the limit ended it."""
    limits = [e["line"] for e in f.slurm_ends if e.get("due_to") == "TIME LIMIT"]
    return [s for s in signs if not (s["sig"] in RAN_ON and any(n > s["line"] for n in limits))]


def _abort_after_its_error(f: logs.LogFacts, signs: list[dict]) -> list[dict]:
    """MPI_Abort a few lines after a failure another line names (a signature, or a failure line the vocabulary
    reads: a CUDA error, NetCDF's), or with any other failure a signature names for sure anywhere in the log (after
    it too: the batch system's memory kill of the job that aborted): the application's reaction to that error, which
    decides. Alone, the abort is the application's own stop on an error it found (its input, its numerics): the
    code's (session 28: seven settled threads of the abort alone, all the input or the code)."""
    other = [s for s in signs if s["sig"] not in logs.ABORT_SIGNS and s["category"] != "effect"]
    sure_elsewhere = any(not signatures.get(s["sig"]).weak for s in other)
    before = [s["line"] for s in other] + [x["line"] for x in f.failures if x["families"]]
    return [
        s
        for s in signs
        if not (
            s["sig"] in logs.ABORT_SIGNS
            and (sure_elsewhere or any(0 < s["line"] - n <= logs.BANNER_NEAR for n in before))
        )
    ]


VERBS_ENOMEM_NEAR = 8  # lines from a verbs object's failure to the errno line of its help text


def _verbs_enomem(signs: list[dict]) -> None:
    """ENOMEM a few lines after a verbs object failed (Open MPI's help text: "Failed to create a completion queue",
    then "Error: Cannot allocate memory"): the device's or the locked-memory limit's, not the host's memory."""
    verbs = [s for s in signs if s["sig"] in ("ompi-create-cq", "ibv-enomem", "ibv-enomem2")]
    for s in signs:
        if s["category"] == "oom" and "Cannot allocate memory" in s["text"] and len(s["text"]) < 80:
            near = [v for v in verbs if 0 < s["line"] - v["line"] <= VERBS_ENOMEM_NEAR]
            if near:
                s["sig"], s["category"] = near[-1]["sig"], near[-1]["category"]


_ALLOC = re.compile(r"Tried to allocate ([\d.]{1,12}) ?([KMGT])i?B")
_UNIT = {"K": 1 / (1 << 20), "M": 1 / 1024, "G": 1.0, "T": 1024.0}  # to GiB


BEYOND_ANY_GPU_GIB = 1024.0  # one allocation of 1 TiB or more: no GPU holds it (the largest hold under 300 GB)


def _beyond_the_gpu(signs: list[dict]) -> None:
    """A CUDA OOM whose one allocation no GPU could hold ("Tried to allocate 37631.79 GiB (GPU 3; 79.21 GiB total
    capacity"): the size is what is wrong (a shape the code computed wrong), not memory running out. Only past any
    GPU's size: 36.79 GiB asked of a 10.75 GiB GPU is a real need a bigger GPU meets (heldout-fresh24h's GP kernel)."""
    for s in signs:
        if s["category"] != "oom" or "total capacity" not in s["text"]:  # torch's CUDA OOM message, both forms
            continue
        a = _ALLOC.search(s["text"])
        if a and float(a.group(1)) * _UNIT[a.group(2)] >= BEYOND_ANY_GPU_GIB:
            s["sig"], s["category"] = "cuda-alloc-beyond-gpu", "code"


def _gloo_loopback(f: logs.LogFacts, signs: list[dict]) -> None:
    """gloo's mesh failed after gloo said it bound to loopback (the host name resolved to no local address): the
    mesh failed because of that, the node's naming or the interface not given (environment), not the fabric."""
    for s in signs:
        if s["sig"] == "gloo-full-mesh" and any(n <= s["line"] for n in f.loopback_at):
            s["sig"], s["category"] = "gloo-mesh-loopback", "environment"


def _worker_sigkill(f: logs.LogFacts, signs: list[dict]) -> None:
    """A worker killed by SIGKILL while its Python launcher lived on to report it (torchrun's -9, DeepSpeed's,
    mp.spawn's) is the kernel's OOM killer when nothing else in the log stops a job: no scheduler line (a time
    limit, a preemption, a cancel), no node failure, no outside signal to the launcher. Any of those: thin."""
    if f.slurm_ends or any(s["category"] in ("scheduler", "node") or s["sig"] == "launcher-signalled" for s in signs):
        return
    fabric = any(s["category"] == "network" for s in signs)
    for s in signs:
        # Ray's notice of a worker that died without a word lists the OOM killer first; a fabric error in the same
        # log (an IB completion error) is as likely to have ended it (session 23: verl-217, verl-3349; openrlhf-621)
        if s["sig"] in signatures.WORKER_SIGKILL_SIGNS or (s["sig"] == "ray-worker-died" and not fabric):
            s["sig"], s["category"] = "launcher-sigkill-alone", "oom"


_PY_WARNING = re.compile(r"\.py:\d{1,7}: [A-Z]\w{0,40}Warning: ")
_OOM_DEVICE = re.compile(r"\bGPU (\d{1,2}) has a total capac")


def culprit_lines(f: logs.LogFacts) -> list[dict]:
    """The lines that name the rank (and node) that failed first without saying how, in the log's order:
    torchrun's "Root Cause (first observed failure)" entry, srun's "srun: error: NODE: task N: Exited with exit
    code C" (one task; srun prints them as they end)."""
    out = []
    roots = [t for t in f.torchrun if t.get("root") and t.get("rank") is not None]
    if roots:  # several nodes' agents each print a table: the first observed failure is the earliest time
        t = min(roots, key=lambda t: (t.get("time") or "~", t["line"]))
        out.append({"rank": t["rank"], "node": t.get("host"), "line": max(r["line"] for r in roots),
                    "how": "torchrun's Root Cause", "exitcode": t.get("exitcode"),
                    "heads": True})  # fmt: skip  # its own traceback field (the worker's error file) follows it
    for t in f.srun_tasks:  # "tasks 0-3" (several tasks of one node): the node, not a rank
        if t["what"].startswith(SRUN_FAILED):
            out.append({"rank": int(t["tasks"]) if t["tasks"].isdigit() else None, "node": t["node"],
                        "line": t["line"], "how": "srun's task line", "exitcode": None})  # fmt: skip
    out += [dict(m, exitcode=None) for m in f.mpi]
    if not roots and len(f.hosts) <= 1 and all(r < 8 for r in f.ranks):  # one node: a local rank is the rank
        out += [dict(m, exitcode=None) for m in f.local]
        out += [
            {
                "rank": t["local_rank"],
                "node": t.get("host"),
                "line": t["line"],
                "how": "torchrun's local_rank (one node)",
                "exitcode": t["exitcode"],
            }
            for t in f.torchrun
            if t.get("local_rank") is not None
        ][:1]
        out += [  # torch's CUDA OOM names its device: on one node, the local rank that pinned it is the rank
            {"rank": int(m.group(1)), "node": h.host, "line": h.line, "exitcode": None,
             "how": "the CUDA OOM's device index (one node: the rank that pinned it)"}
            for h in f.hits
            if h.rank is None and h.category == "oom" and (m := _OOM_DEVICE.search(h.text))
        ][:1]  # fmt: skip
    if not out:  # no launcher names a rank: the node whose process printed Open MPI's signal handler
        out += [dict(m, exitcode=None) for m in f.crashed_on]
    # a process that ended after the scheduler cancelled the job was ended by it (Charm++'s "Caught Signal" then
    # "Reason: Terminated"): it names no culprit
    cancelled = min((e["line"] for e in f.slurm_ends), default=None)
    out = [c for c in out if cancelled is None or c["line"] <= cancelled]
    return sorted(out, key=lambda c: c["line"])


def _sign(line: int, rank, host, sig: str, category: str, text: str) -> dict:
    return {"line": line, "rank": rank, "host": host, "sig": sig, "category": category, "text": text[:300],
            "node": None}  # fmt: skip


def _defer_to_exceptions(signs: list[dict], exceptions: list[dict]) -> list[dict]:
    """A file system's strerror on a Python exception's own line (`OSError: [Errno 28] No space left on device`)
    that EXCEPTION_RULES already names the same: the exception says it with its file:line, the signature's line
    (why/signatures.py DEFER_TO_EXCEPTION) gives way; on any other line (a shell's cp, a RuntimeError) it stays."""
    mine = {(e["rank"], e["line"]): _kind(e["raised"]) for e in exceptions}
    return [
        s
        for s in signs
        if s["sig"] not in signatures.DEFER_TO_EXCEPTION or mine.get((s["rank"], s["line"])) != s["category"]
    ]


def _says(s: dict, raised: logs.Raised) -> bool:
    """The signature line `s` holds what the exception's message says (all of its words)."""
    try:
        sig = signatures.get(s["sig"])
    except KeyError:  # a line the scanner names itself (an application's banner), no needles
        return False
    return s["category"] != "effect" and not sig.lower and all(k in raised.message for k in sig.needles)


def _exception_sign(e: dict, signs: list[dict]) -> list[dict]:
    """A rank's exception as a signature line: 'code' unless a signature on or just after its line says more
    (`signs`: that rank's signature lines)."""
    raised: logs.Raised = e["raised"]
    kind = _kind(raised)
    if kind == "effect":
        return []
    near = [
        s
        for s in signs
        if s["rank"] == e["rank"] and e["line"] - 1 <= s["line"] <= e["line"] + NEAR and s["category"] != "effect"
    ]
    if any(s["line"] == e["line"] for s in near) or (kind == "nccl" and near):
        return []  # the signature says it
    if any(_says(s, raised) for s in signs if s["rank"] == e["rank"] and e["line"] - NEAR <= s["line"] < e["line"]):
        return []  # a line just before it said the same words (its message quoted first, then raised)
    if kind == "code" and any(
        e["line"] < s["line"] <= e["line"] + MESSAGE_NEXT and s["category"] == "environment" for s in near
    ):  # its message goes on with a library's failure ("Failed to import X because of ...: undefined symbol")
        return []
    if (
        kind == "code"
        and raised.message.rstrip().endswith(":")
        and any(e["line"] < s["line"] <= e["line"] + MESSAGE_NEXT for s in near)
    ):  # a wrapper's message that goes on in the next lines ("Failed to submit job, error was:\nsbatch: error: ...")
        return []
    if (
        kind == "code"
        and raised.type == "Exception"
        and any(s["line"] == e["line"] + 1 and s["category"] not in ("code", "unknown") for s in near)
    ):  # a script's bare Exception whose message goes on in the next line with what failed (a submit wrapper's
        # "Exception: Job can't be submitted" + "\n" + sbatch's own refusal: atlas-333)
        return []
    text = f"{raised.type}: {raised.message}"[:300] + (f" at {raised.where}" if raised.file else "")
    sig = {"oom": "python-memory-error", "nccl": "nccl-failed", "unsure": "python-exception-unsure",
           "api": "python-api-mismatch", "config": "python-config-validation", "scheduler": "python-scheduler-error",
           "library": "python-library-error",
           "environment": "python-import-error" if raised.type.endswith(("ImportError", "ModuleNotFoundError"))
           else "python-env-variable-missing" if raised.env_lookup
           else "python-module-attribute" if raised.type == "AttributeError"
           else "python-version-mismatch" if any(w in raised.message for w in VERSION_WORDS)
           else "python-environment-error"}  # fmt: skip
    name = sig.get(kind, "python-exception")
    if kind == "code" and _launcher_variable(raised):
        name = "launcher-variable-missing"  # round 9: started without the launcher it expects
    return [_sign(e["line"], e["rank"], e["host"], name, kind, text)]


def _launcher_variable(raised: logs.Raised) -> bool:
    """A KeyError on a variable a launcher sets (round 9; torch's env:// ValueError has its own signature)."""
    return raised.type == "KeyError" and raised.message.strip().strip("'\"") in signatures.LAUNCHER_VARS


def compare_watchdogs(f: logs.LogFacts) -> dict | None:
    """NCCL's watchdog lines across ranks: the rank whose collective (op, SeqNum) differs is the desync; the same
    everywhere with a rank silent is that rank (a hang: stuck, dead, or its node); one rank alone is thin."""
    wd = {r: w for r, w in f.watchdog.items()}
    if not wd:
        return None
    timed = sorted(r for r in wd if r >= 0) or [-1]
    first = min(wd.values(), key=lambda w: w["line"])
    groups: dict[tuple, list[int]] = {}
    for r in timed:
        w = wd[r]
        groups.setdefault((w["op"], w["seq"]), []).append(r)
    seen = set(f.ranks) | set(timed) | f.watchdog_at
    seen.discard(-1)
    base = {
        "watchdog": True,
        "gone": False,
        "idle": False,
        "loader": False,
        "lines": [],
        "started": float(first["line"]),
        "desync": False,
        "thin": False,
        "odd": [],
    }
    if len(groups) > 1 and len(f.process_groups) > 1:  # sequence numbers of different groups do not compare
        desc = "; ".join(
            f"{_rs(g)} in {op} SeqNum={seq}" for (op, seq), g in sorted(groups.items(), key=lambda x: x[1])
        )
        return {**base, "thin": True, "odd": sorted(timed),
                "headline": f"NCCL watchdog: timeouts in {len(f.process_groups)} process groups: {desc}"}  # fmt: skip
    if len(groups) > 1:
        major = max(groups.values(), key=len)
        odd = sorted(r for g in groups.values() if g is not major for r in g)
        if len(odd) == len(major):  # no majority: name every group
            odd = sorted(timed)
        desc = "; ".join(
            f"{_rs(g)} in {op} SeqNum={seq}" for (op, seq), g in sorted(groups.items(), key=lambda x: x[1])
        )
        return {**base, "odd": odd, "desync": True,
                "headline": f"NCCL watchdog: the ranks timed out in different collectives: {desc}"}  # fmt: skip
    sizes: dict[int, list[int]] = {}
    for r in timed:
        if wd[r].get("numel") is not None and wd[r]["op"] in SAME_SIZE_OPS:
            sizes.setdefault(wd[r]["numel"], []).append(r)
    if len(sizes) > 1:  # the same collective by its number, different sizes: the ranks are in different calls
        major = max(sizes.values(), key=len)
        odd = sorted(r for g in sizes.values() if g is not major for r in g)
        odd = odd if len(odd) < len(major) else sorted(r for g in sizes.values() for r in g)
        (op, seq), *_ = groups
        desc = "; ".join(f"{_rs(g)}: NumelIn={n}" for n, g in sorted(sizes.items(), key=lambda x: x[1]))
        return {**base, "odd": odd, "desync": True,
                "headline": f"NCCL watchdog: {op} SeqNum={seq} timed out with different sizes ({desc}): the ranks "
                "are in different calls"}  # fmt: skip
    w = wd[timed[0]]
    what = f"{w['op']}" + (f" SeqNum={w['seq']}" if w["seq"] is not None else "")
    head = f"NCCL watchdog: {what} timed out after {w['ran_ms'] // 1000} s (timeout {w['timeout_ms'] // 1000} s) on "
    head += _rs(timed) if timed != [-1] else "a rank"
    silent = sorted(seen - set(timed) - f.watchdog_at)
    default_pg = f.process_groups <= {"0"}  # a subgroup's SeqNum and source are that group's own
    # torch's own count in the default group (its dump signal's and heartbeat's lines): a rank that enqueued the
    # collective the others time out in waits in it too, whatever else it printed; it is not the one they wait for
    if default_pg and w["seq"] is not None:
        silent = [r for r in silent if f.enqueued.get(r, -1) < w["seq"]]
    if silent:
        return {**base, "odd": silent,
                "headline": head + f"; {_rs(silent)} did not time out: the others wait for them"}  # fmt: skip
    later = all((wd[r]["seq"] or INF_SEQ) > LOW_SEQ for r in timed)  # not one of the first collectives
    # rank 0's absence means something only where the ranks in the log may share its node (8 GPUs a node at most):
    # a paste of another node's ranks (8-15) lacks rank 0 whatever it did
    node_but_0 = len(timed) > 1 and seen == set(range(1, max(timed) + 1))  # ranks 1..N of rank 0's node, all
    bcast = all(op == "BROADCAST" for op, _ in groups)
    if default_pg and later and 0 not in seen and timed != [-1] and len(timed) == 1 and max(timed) < 8 and bcast:
        # one rank alone in a broadcast: its source (rank 0 by default) is the first candidate and named, never the
        # verdict: the same line ended threads settled on rank 0's evaluation (ultralytics-3057, accelerate-223)
        # and one no one settled (discoscene-5: rank 7 of 8, the others not pasted)
        return {**base, "thin": True, "odd": [0],
                "headline": head + "; rank 0 (a broadcast's source by default) is not in the log: it may have been "
                "busy elsewhere (evaluating, saving) while this rank waited; no other rank's lines say so",
                "candidates": [
                    "hang: rank 0, the broadcast's source, was busy on its own (evaluation, a checkpoint, logging "
                    "under `if rank == 0`) past the timeout: its log at that time",
                    "desync: rank 0 never called this broadcast (a collective under a condition some ranks skip)",
                    "node: rank 0's process or node died without a word (the node's kernel log, XIDs)",
                ]}  # fmt: skip
    if (default_pg and later and 0 not in seen and len(timed) > 1 and max(timed) < 8
            and (bcast or node_but_0)):  # fmt: skip
        # a broadcast waits for its source (rank 0 unless told otherwise), and rank 0 did not time out: it was
        # elsewhere (evaluating, saving, loading on its own) while the others waited. So for any collective where
        # every other rank of the node is in the log and timed out: the one rank that does work alone (evaluation,
        # a checkpoint, logging under `if rank == 0`) is the one absent; in the collective it would time out too
        why = "a broadcast's source by default" if bcast else "the one rank of its node not in the log"
        return {**base, "odd": [0],
                "headline": head + f"; rank 0 ({why}) did not time out: it was busy elsewhere (evaluating, "
                "saving) while the others waited"}  # fmt: skip
    if len(seen) <= 1 and default_pg and all((wd[r]["seq"] or INF_SEQ) <= LOW_SEQ for r in timed):
        # one of the job's first collectives: a rank not in it yet (loading, tokenizing, evaluating on its own), or
        # the first collective that had to cross the network and could not
        return {**base, "thin": True, "odd": [r for r in timed if r >= 0],
                "headline": head + f"; SeqNum {w['seq']} is one of the job's first collectives",
                "candidates": [
                    "hang: a rank was still busy before its first collectives (loading, tokenizing, evaluating on its "
                    "own): its log around the start",
                    "network: the first collective that crosses nodes could not connect (NCCL_DEBUG=INFO; "
                    "NCCL_SOCKET_IFNAME, clusterdoc check on the nodes)",
                ]}  # fmt: skip
    if len(seen) <= 1:
        return {**base, "thin": True, "odd": [r for r in timed if r >= 0],
                "headline": head + "; no other rank's lines are in the log"}  # fmt: skip
    top = max(seen)
    # a gap among the ranks in the log, or below them on the first node: ranks 0-7 absent from a paste of ranks
    # 8-15 are another node's lines not pasted, not ranks that are missing
    low = 0 if min(seen) < 8 else min(seen)
    missing = sorted(set(range(low, top + 1)) - seen) if top < logs.MAX_RANKS_LISTED else []
    # every rank in the log timed out: which one is behind is not in the log. A rank absent from a paste is not
    # named by it (users paste some ranks' lines): it is the first candidate, never a verdict
    return {
        **base,
        "thin": True,
        "odd": missing[:1] if len(missing) == 1 else [],
        "candidates": [
            (
                f"hang: {_rs(missing[:32])}, not in this log, was stuck or dead before the collective (its log, "
                "py-spy dump)"
                if missing
                else "hang: a rank not in this log was stuck before the collective (its log, py-spy dump)"
            ),
            "node: that rank's process or node died without a word (the node's kernel log: XIDs, the OOM killer)",
            "network: the collective's traffic stalled between nodes (NCCL_DEBUG=INFO, clusterdoc check --perf)",
        ],
        "headline": head
        + "; every rank in the log timed out: the rank they wait for is not in it"
        + (f" ({_rs(missing[:32])} {'are' if len(missing) > 1 else 'is'} missing)" if missing else "")
        + " (a dead process or node: look for its log, and at the nodes' XIDs with clusterdoc check)",
        "missing": missing[:1024],
    }


def _stall(f: logs.LogFacts) -> dict | None:
    wd = compare_watchdogs(f)
    if wd is not None and not wd["thin"] and not wd["desync"] and wd["odd"]:
        return wd  # the watchdog lines themselves name the rank
    if f.lagging:  # torch's own desync report names the ranks, "lagging/dead/mismatched": which of the three, not
        ranks = sorted({r for x in f.lagging for r in x["ranks"]})
        what = "; ".join(f"{_rs(x['ranks'])} {x['what']}" for x in f.lagging[:4])
        return {"watchdog": True, "gone": False, "idle": False, "loader": False, "lines": [], "thin": True,
                "desync": False, "started": float(f.lagging[0]["line"]), "odd": ranks,
                "headline": f"torch's desync report (TORCH_NCCL_DESYNC_DEBUG) names {_rs(ranks[:32])}: {what[:240]}",
                "candidates": [
                    f"hang: {_rs(ranks[:32])} lagging or stuck outside the collective (their stacks: py-spy dump; "
                    "their logs at that time)",
                    f"node: {_rs(ranks[:32])} dead, or their node (its kernel log: XIDs, the OOM killer)",
                    f"desync: {_rs(ranks[:32])} called another collective (the report's snapshot of the ranks' "
                    "latest states; TORCH_DISTRIBUTED_DEBUG=DETAIL)",
                ]}  # fmt: skip
    if wd is None or not wd["desync"]:
        busy = busy_elsewhere(f)
        if busy is not None:
            return busy
    return wd or horovod_stall(f) or main_first_wait(f) or id_wait(f) or flight_recorder(f) or _round9_stall(f)


def main_first_wait(f: logs.LogFacts) -> dict | None:
    """Round 10 (issue 41): a rank other than 0 whose wait timed out inside a block the main process runs first
    (transformers' and accelerate's main_process_first, torch_distributed_zero_first): every other rank waits at the
    block's barrier while the main process runs it (mapping, tokenizing, caching the data), so the main process
    was still in it when their timeout ran out. A hang on the main process (rank 0, or the owner its ncclUniqueId
    wait names); only where every exception in the log is a wait's (a timeout): a reset connection or a system
    error is the main process dying or the transport failing (LlamaFactory-7233's /dev/shm), not a hang."""
    if not f.first_blocks or not _only_waits_raised(f):
        return None
    first = f.first_blocks[0]["line"]
    waiting: set[int] = set()
    for rl in f.ranks.values():
        r = rl.raised or rl.loose
        at = rl.raised_at if rl.raised else rl.loose_at
        if r is not None and at is not None and at >= first and rl.rank >= 0 and _timed_out(r):
            waiting.add(rl.rank)
    owners = {w["owner"] for w in f.id_waits if w["line"] >= first}
    waiting |= {w["rank"] for w in f.id_waits if w["line"] >= first}
    waiting |= {b["rank"] for b in f.first_blocks if b["rank"] is not None and b["rank"] >= 0 and waiting}
    main = owners.pop() if len(owners) == 1 else 0 if not owners else None
    if main is None or not waiting or main in waiting:
        return None
    who = _rs(sorted(waiting)[:32])
    return {"watchdog": True, "gone": False, "idle": False, "loader": False, "lines": [], "thin": False,
            "desync": False, "started": float(first), "odd": [main],
            "what": f"busy in the block it runs first (main_process_first) while {who} waited at its barrier past "
            "the timeout",
            "headline": f"rank {main} was still running the block the main process runs first (main_process_first: "
            f"the data's map or tokenizing) when {who} timed out waiting at its barrier"}  # fmt: skip


def _timed_out(r: logs.Raised) -> bool:
    """An exception that says a wait ran out of time (the store's Socket Timeout, a watchdog, a barrier's timeout)."""
    m = r.message.lower()
    return "timeout" in m or "timed out" in m or r.type == "TimeoutError"


def _round9_stall(f: logs.LogFacts) -> dict | None:
    """Round 9's waits that name who is behind, or what decides: JAX's barrier, gloo's blame, the store's count."""
    return jax_barrier(f) or gloo_blamed(f) or store_barrier(f)


def busy_elsewhere(f: logs.LogFacts) -> dict | None:
    """Waits that timed out (a watchdog, the store's socket, a monitored barrier) right after a data-preparation bar
    that had not finished (a tokenizer, HF datasets' Map): one process prepared the data while the others waited for
    it past their timeout (a hang: raise the timeout, or prepare the data before the job). The process is the bar's
    rank; a bar without a prefix is rank 0's (main_process_first: rank 0 maps first) where rank 0 is not among
    the waiting."""
    for w in f.waits:
        if w.get("traceback") and not _only_waits_raised(f):  # the traceback is a failure of its own
            continue
        bars = [b for b in f.busy if 0 <= w["line"] - b["line"] <= logs.PREP_NEAR]
        if not bars:
            continue
        b = bars[-1]
        waiting = {x["rank"] for x in f.waits if x["rank"] is not None} | {r for r in f.watchdog if r >= 0}
        rank = b["rank"] if b["rank"] is not None else 0 if 0 not in waiting else None
        who = f"rank {rank}" if rank is not None else "a rank"
        if b.get("alone"):
            alone = _alone_busy(b, rank, waiting, w)
            if alone is None:
                continue
            return alone
        return {"watchdog": True, "gone": False, "idle": False, "loader": False, "lines": [], "thin": False,
                "desync": False, "started": float(w["line"]), "odd": [rank] if rank is not None else [],
                "what": f"busy preparing the data on its own while the others waited past their timeout ({b['text']})",
                "headline": f"{who} was still preparing the data ({b['text'][:120]}) when the others' wait timed "
                "out"}  # fmt: skip
    return None


def _only_waits_raised(f: logs.LogFacts) -> bool:
    """Every exception the log raised is a wait's (a timeout, torch.distributed's own), or there is none (a cut
    paste): a traceback under a long data bar is then another process's wait ending, not an error of its own."""
    raised = [rl.raised or rl.loose for rl in f.ranks.values()] + [r for _, r in f.unranked_raised + f.unranked_loose]
    for r in raised:
        if r is None:
            continue
        timeout = "imeout" in r.message or "timed out" in r.message.lower()
        if not (r.type in NCCL_TYPES or r.type == "TimeoutError" or (r.type == "RuntimeError" and timeout)):
            return False
    return True


def _alone_busy(b: dict, rank: int | None, waiting: set, w: dict) -> dict | None:
    """Round 9 (issue 41): a save or an evaluation (one process's own work) was the last thing said before the
    others' wait timed out: that process kept them waiting (a hang: raise the timeout, or share the work). Only
    where its rank is known and not among the waiting (a rank that saved and then waited is not behind)."""
    if rank is None or rank in waiting:
        return None
    doing = "evaluating" if "valuat" in b["text"] or "alidat" in b["text"] else "saving a checkpoint"
    return {"watchdog": True, "gone": False, "idle": False, "loader": False, "lines": [], "thin": False,
            "desync": False, "started": float(w["line"]), "odd": [rank],
            "what": f"busy {doing} on its own while the others waited past their timeout ({b['text'][:120]})",
            "headline": f"rank {rank} was still {doing} ({b['text'][:120]}) when the others' wait timed "
            "out"}  # fmt: skip


def horovod_stall(f: logs.LogFacts) -> dict | None:
    """Horovod's stalled ops compared: the same ranks missing from every op are late or dead (a hang); ops ready
    on different sets of ranks mean those ranks submitted different collectives (a desync: the smaller set)."""
    if not f.horovod:
        return None
    missing = {r for _, kind, rs in f.horovod if kind == "missing" for r in rs}
    ready = {rs for _, kind, rs in f.horovod if kind == "ready"}
    base = {"watchdog": True, "gone": False, "idle": False, "loader": False, "lines": [],
            "started": float(f.horovod[0][0]), "thin": False}  # fmt: skip
    by_tensors: dict[frozenset[str], list[int]] = {}
    for r, names in f.hvd_rows.items():
        by_tensors.setdefault(names, []).append(r)
    if len(by_tensors) > 1:  # the ranks lack different tensors: each submitted what another did not
        groups = sorted(by_tensors.values(), key=len, reverse=True)
        odd = sorted(r for g in groups[1:] for r in g) if len(groups[0]) > len(groups[1]) else sorted(f.hvd_rows)
        desc = "; ".join(f"{_rs(sorted(g))}: {sorted(n)[0][:80]}" for n, g in by_tensors.items())
        return {**base, "odd": odd, "desync": True,
                "headline": f"Horovod: the stalled ranks wait for different tensors ({desc[:400]}): the ranks "
                "submitted different collectives"}  # fmt: skip
    if missing and not ready and all(set(rs) == missing for _, kind, rs in f.horovod if kind == "missing"):
        odd = sorted(missing)
        return {**base, "odd": odd, "desync": False, "thin": True, "candidates": _missing_candidates(odd),
                "headline": f"Horovod: every stalled op waits for {_rs(odd)} (missing ranks)"}  # fmt: skip
    sets: list[set[int]] = [set(rs) for rs in ready]
    if len(sets) == 1 and not missing:  # every op ready on the same ranks: the ones below its top not in it
        late = sorted(set(range(max(sets[0]) + 1)) - sets[0])
        if 0 < len(late) <= 4:
            return {**base, "odd": late, "desync": False, "thin": True, "candidates": _missing_candidates(late),
                    "headline": f"Horovod: every stalled op is ready on all ranks but {_rs(late)}"}  # fmt: skip
    if len(sets) > 1 and not missing and all(a.isdisjoint(b) for a in sets for b in sets if a is not b):
        odd = sorted(sets[[len(x) for x in sets].index(min(len(x) for x in sets))])  # the smallest set
        return {**base, "odd": odd, "desync": True,
                "headline": f"Horovod: {_rs(odd)} submitted a different op than the others (ready ranks per op: "
                + "; ".join(",".join(map(str, sorted(x))) for x in sets) + ")"}  # fmt: skip
    return None


def flight_recorder(f: logs.LogFacts) -> dict | None:
    """torch's flight recorder analyser: the first collective it reports some ranks never joined names them (later
    reports are what followed). Behind, on another path, or dead: thin, the ranks named, hang first."""
    if not f.fr_missing:
        return None
    first = f.fr_missing[0]
    who = _rs(first["ranks"][:32])
    return {"watchdog": True, "gone": False, "idle": False, "loader": False, "lines": [], "thin": True,
            "desync": False, "started": float(first["line"]), "odd": first["ranks"][:64],
            "headline": f"torch's flight recorder: {who} never joined a collective the others entered "
            f"({first['text'][:120]})",
            "candidates": [
                f"hang: {who} stuck or busy outside the collective (their stacks in the dump, py-spy dump)",
                f"desync: {who} called another collective there (the dump's entries of those ranks)",
                f"node: {who} dead, or their node (its kernel log: XIDs, the OOM killer)",
            ]}  # fmt: skip


def store_barrier(f: logs.LogFacts) -> dict | None:
    """torch's store based barrier (init_process_group, new_group) counts the ranks that arrived: fewer than the
    world when it timed out - the others never reached it (busy before it, dead, or never started); more than the
    world - another run shares the store's address (MASTER_PORT), or the ranks disagree on the world size. Thin:
    the barrier names no rank."""
    over = next((b for b in f.store_barrier if b["count"] > b["world"]), None)
    short = next((b for b in f.store_barrier if b["timed_out"] and b["count"] < b["world"]), None)
    b = over or short
    if b is None:
        return None
    base = {"watchdog": True, "gone": False, "idle": False, "loader": False, "lines": [], "thin": True,
            "desync": False, "started": b["line"] - 0.5, "odd": []}  # fmt: skip
    if over:
        return {**base,
                "headline": f"{b['count']} workers joined a store based barrier sized for {b['world']} ranks: another "
                "run shares the store's address, or the ranks were launched with different world sizes",
                "candidates": [
                    "environment: another job or a leftover process uses the same MASTER_ADDR:MASTER_PORT (a free "
                    "port per job; ps on the node for a previous run)",
                    "code: the launch gives the ranks different world sizes (nnodes, nproc_per_node, WORLD_SIZE)",
                ]}  # fmt: skip
    missing = b["world"] - b["count"]
    return {**base,
            "headline": f"the c10d store's wait for the ranks timed out with {b['count']} of {b['world']} arrived: "
            f"{missing} never reached it (init_process_group, new_group)",
            "candidates": [
                f"hang: {missing} rank(s) still busy before the barrier (loading, preparing data) past its timeout: "
                "their logs at that time; raise the timeout",
                "node: those ranks died before it (their own logs, the nodes' kernel logs)",
                "scheduler: those ranks never started (the launcher's count of processes and nodes against the "
                "world size)",
            ]}  # fmt: skip


def gloo_blamed(f: logs.LogFacts) -> dict | None:
    """Ranks that reached gloo's monitoredBarrier and then lost the rank that checks it (rank 0): gloo names it
    ("Please check rank 0 logs for faulty rank"). Stuck past the barrier's timeout, or dead (its peers' socket
    closed); its maintainers note the blame can go both ways (pytorch#83289): thin, the rank named."""
    blamed = {b["rank"] for b in f.gloo_blamed}
    if len(blamed) != 1:
        return None
    (rank,) = blamed
    by = sorted({b["by"] for b in f.gloo_blamed} - blamed)
    if not by:
        return None
    return {"watchdog": True, "gone": False, "idle": False, "loader": False, "lines": [], "thin": True,
            "desync": False, "started": f.gloo_blamed[0]["line"] - 0.5, "odd": [rank],
            "headline": f"{_rs(by[:32])} reached gloo's monitoredBarrier and lost rank {rank} there (gloo: "
            f"\"Please check rank {rank} logs for faulty rank\")",
            "candidates": [
                f"hang: rank {rank} stuck or slower than the others past the barrier's timeout (uneven data, "
                "evaluation or I/O on that rank): its log at that time",
                f"node: rank {rank}'s process or node died (its own log's last lines; the node's kernel log)",
                f"network: the links to rank {rank} dropped (its log says it: a socket error there)",
            ]}  # fmt: skip


def jax_barrier(f: logs.LogFacts) -> dict | None:
    """JAX's coordination service: a barrier timed out, and it names the tasks (JAX's processes, the ranks) that had
    not reached it. Behind (loading, compiling, a checkpoint's write), dead, or never started: thin, those named, the
    hang first ("a task triggered the barrier too early or too slowly", its own message)."""
    first = next((p for p in f.jax_pending if p["tasks"]), None)
    if first is None:
        return None
    tasks = sorted(set(first["tasks"]))
    who = ("tasks " if len(tasks) > 1 else "task ") + ", ".join(map(str, tasks[:32]))
    return {"watchdog": True, "gone": False, "idle": False, "loader": False, "lines": [], "thin": True,
            # before the generic reading of its own line (an XlaRuntimeError: DEADLINE_EXCEEDED)
            "desync": False, "started": first["line"] - 0.5, "odd": tasks[:64],
            "headline": f"JAX's coordination service: a barrier timed out waiting for {who} (they had not reached "
            "it)",
            "candidates": [
                f"hang: {who} behind or stuck before the barrier (loading, compiling, writing a checkpoint): their "
                "logs at that time",
                f"node: {who} dead, or their host (their own logs' last lines; the host's kernel log)",
                f"scheduler: {who} never started (the launcher's task count against the job's; a slice not "
                "scheduled)",
            ]}  # fmt: skip


def id_wait(f: logs.LogFacts) -> dict | None:
    """Ranks that timed out in the store waiting for the ncclUniqueId of one owner (torch's "[1] is setting up NCCL
    communicator and retrieving ncclUniqueId from [0] ... got error: Socket Timeout"): the owner publishes it at its
    first collective of the group and had not reached it. Alive (its store answered; a dead host resets it) but
    elsewhere: loading, preparing data, evaluating on its own, or on a path that skips the collective. The owner is
    named; hang, desync or its node stays open (thin)."""
    owners = {w["owner"] for w in f.id_waits}
    if len(owners) != 1:
        return None
    (owner,) = owners
    waiting = sorted({w["rank"] for w in f.id_waits} - {owner})
    if not waiting:
        return None
    return {"watchdog": True, "gone": False, "idle": False, "loader": False, "lines": [], "thin": True,
            # before the generic reading of its own line (a torch.distributed error: look for what failed first)
            "desync": False, "started": f.id_waits[0]["line"] - 0.5, "odd": [owner],
            "headline": f"{_rs(waiting[:32])} timed out waiting for rank {owner}'s ncclUniqueId (rank {owner} had not "
            "reached its first collective of the group)",
            "candidates": [
                f"hang: rank {owner} was busy before its first collective (loading, preparing data, evaluating on "
                "its own) past the timeout: its log at that time",
                f"desync: rank {owner} took a path without this collective (a collective under a rank condition)",
                f"node: rank {owner}'s process or node stopped (its own log, the node's kernel log)",
            ]}  # fmt: skip


def _missing_candidates(ranks: list[int]) -> list[str]:
    """Horovod's stall inspector names the ranks that did not submit the stalled tensors; its own warning says
    what that may be: "different ranks are trying to submit different tensors or ... only subset of ranks is
    submitting tensors" (horovod/common/stall_inspector.cc), and its maintainers read it as a rank busy elsewhere
    (evaluation on rank 0, horovod#403) as often as tensors named differently on the ranks. The field cannot
    tell: the ranks named, the category left open, the rank behind first."""
    who = _rs(ranks[:32])
    return [
        f"hang: {who} behind or stuck outside the collective (evaluation, data loading, I/O on that rank only; "
        "its stack: py-spy dump)",
        f"desync: {who} submitted other tensors (names or order differ between ranks: a graph or optimizer built "
        "differently, a collective under `if rank == ...`; HOROVOD_TIMELINE shows each rank's ops)",
        f"node: {who} dead, or their node (its kernel log: XIDs, the OOM killer)",
    ]


def _rs(ranks: list[int]) -> str:
    return ("ranks " if len(ranks) > 1 else "rank ") + ", ".join(map(str, ranks))


def _scheduler(f: logs.LogFacts, info: dict) -> dict:
    ends = [dict(e, time=float(e["line"])) for e in f.slurm_ends]
    return {
        "state": info.get("JobState"),
        "reason": info.get("Reason"),
        "nodes": info.get("NodeList"),
        "ends": ends,
        "tasks": f.srun_tasks,
    }
