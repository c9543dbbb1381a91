"""Reading a log of any size for `clusterdoc why`: the end first, the rest streamed, memory bounded.

A failed job's cause is at the end of its output (the traceback, the watchdog lines, Slurm's CANCELLED), and a
multi-day log is GBs. So `read_log`:
  1. reads the last TAIL bytes line by line: every line, as the parsers in why/logs.py expect;
  2. then streams the rest from the start and keeps only the lines that hold one of WORDS (the words every
     failure signature has: "Error", "Traceback", "WARN", "CANCELLED", ...), at most KEEP bytes of them (the
     latest kept when there are more). The system's grep -F does the looking when there is one (/usr/bin or
     /bin: many fixed strings at once, several times faster than Python); it is handed the file already opened
     (never its path), its memory is capped (GREP_MEMORY: it holds a whole line), and what it prints is read as
     any line is. Without it (or when it fails), Python does it in CHUNK-sized pieces, one bytes.find per word;
  3. hands the parsers the kept lines then the tail's, in the file's order, and says what it read.
Every line is cut to MAX_LINE characters; the rest of a longer line is skipped, never held. Memory is bounded by
TAIL + KEEP + CHUNK whatever the file's size, and the work is linear in it (bytes.find, no regex on the bulk).
The file is opened as clusterdoc.private opens job files: no symlink followed, a regular file only, no blocking.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from clusterdoc import private
from clusterdoc.why.errors import WhyError

# the end of the log read whole (a 1,000-rank job's tracebacks and watchdog lines: 0.3 MB). 4 MiB until session 21:
# judged on its failure-word lines alone, every real log gets the verdict its whole text gets (tests/test_why_logread
# .py), so the lines before the end lose nothing a verdict needs there, and the end read line by line costs Python
# most of its time on a big log (31,000 lines of 4 MiB: 1.3 s on the 300 MB bench log; issue 41's 3x grep)
TAIL = 1 << 20
KEEP = 16 << 20  # bytes of matching lines kept from the rest, at most
CHUNK = 8 << 20
PARALLEL_MIN = 64 << 20  # a rest this big is grepped in two halves at once, where there are two CPUs
MAX_LINE = 4096  # characters of one line kept (a 190 KB line of a dataset's text is cut, not held)
# A line with none of these is no evidence of how a job ended. Spellings, not patterns: every signature of
# why/logs.py holds one ("rror" for Error/error/ERROR; "xception" for Exception/exception).
WORDS: tuple[bytes, ...] = (
    b"rror",
    b"xception",
    b"Traceback",
    b'File "',
    b"WARN",
    b"Warning",
    b"atchdog",
    b"CANCELLED",
    b"emory",
    b"OOM",
    b"illed",
    b"ignal",
    b"xitcode",
    b"imeout",
    b"imed out",
    b"ail",
    b"FAIL",
    b"bort",
    b"Xid",
    b"ECC",
    b"srun:",
    b"slurmstepd",
    b"Connection",
    b"closed by",
    b"NCCL",
    b"Connection timed out",  # MPICH's Hydra: 'unable to connect from "node2" to "node1" (Connection timed out)'
    b"without the mpiexec/mpirun",  # Spack's Open MPI without its launchers
    b"Cannot dlopen",  # TensorFlow without the CUDA libraries: "Cannot dlopen some GPU libraries"
    b"soft lockup",  # the kernel's watchdog: "BUG: soft lockup - CPU#12 stuck for 22s!"
    b"panicked at ",  # Rust's panic
    b"neither AF_INET",  # NCCL's socket without an address ("... is neither AF_INET(2) nor AF_INET6(10)")
    b"PETSC ERROR",  # PETSc's error handler's prefix: "[0]PETSC ERROR: Out of memory" (catalogue_hpcrt)
    b"Interrupt",
    b"SystemExit",
    b"terminate",
    b"undefined symbol",
    b"kernel image",
    b"mismatch",
    b"fallen off",
    b"fault",
    b"core dumped",
    b"reempt",
    b"equeue",
    b"route to host",
    b"milliseconds",  # a watchdog line wrapped: "ran for 1800090 milliseconds before timing out."
    b"stopped",
    b"host      : ",  # torchrun's failure table: its host and rank lines hold none of the words above
    b"rank      : ",
    b"time      : ",  # its time: of several nodes' tables, the earliest root cause is the first failure
    b"ready ranks: ",  # Horovod's stalled ops, one per line
    b"missing ranks: ",
    b"Process name: [[",  # Open MPI's "the first process to do so was"
    b"MPI_ABORT",
    b"MPICH ERROR",  # Cray MPICH's abort line: the rank and its node
    b"ERROR on proc ",  # LAMMPS: the process that failed
    b"reported by process [",  # Open MPI's MPI_ERRORS_ARE_FATAL: the rank whose call failed
    b"MPI rank:",  # GROMACS' fatal block: the rank that raised it
    b"taskid: ",  # WRF's rsl.error header: the rank and its node
    b"hostname:  ",  # Open MPI's lost daemon: the node on the lines after its help text
    b"Remote daemon:",
    b"\tip: ",  # Ray's actor fields: the node of an actor whose node died (the line after them)
    b"died from signal",  # Cray PALS' mpiexec: the rank and its node
    b"lagging",  # torch's desync report: its head, then a line per group of ranks ("finished collective #N")
    b"collective #",
    # Horovod 0.20+'s list of the ranks behind: its head, and its rows ("3: [HorovodAllreduce_grads_0]", MXNet's
    # "0: [horovod_allreduce.noname.691941]": the tensors each rank lacks, compared across rows for a desync)
    b"issing ranks:",
    b"talled ranks:",
    b"orovod",
    b"Not all ranks joining collective",  # torch's flight recorder analyser: the ranks a collective missed
    b"Local host: ",  # Open MPI's TCP help text: the node on a line after its head
    b"Exec host:  ",  # Torque's and PBS's job mail: the host the job ran on, lines before the server's reason
    b"what():",  # libstdc++'s terminate handler: the uncaught exception's message, on the line after its type
    # round 9: JAX's barrier timeout, its head and one line per task it waited for; the TCPStore server's count
    b"imed out task names:",
    b"/replica:",
    b"clients joined",
)

# round 9: a native backtrace's first frames ("#3  0x4429e55 in NAME", or bare: a segfault's routine named or not)
# and HPE/SGI MPT's line naming the first rank to die (its "MPT ERROR" holds no lowercase "rror")
WORDS += tuple(f"#{i}  0x".encode() for i in range(10)) + (b"has terminated without calling",)
# round 10: Open MPI's help text naming the rank it could not start ("while attempting to start process rank 0."),
# and the node its line before names ("Node: cori16")
WORDS += (b"attempting to start process rank", b"Node: ")
WORDS += (b"[Errno ", b"terminate called")  # session 18: an OSError printed alone; a C++ throw of no class
# session 20: the host commands a shell prompt's host names the output of (logs._PROMPT), Open MPI's peer line
# issue 41 (appcat): the lines the applications' fatal forms name their rank in (TDEP's, AMReX's, HDF5's; ESMF's
# "ERROR ... PETN" line holds its row's needle)
WORDS += (b"active rank: ", b"::Assertion `", b"MPI-process ")
WORDS += (b"Process received signal",)  # session 25: Open MPI's signal handler names the node of the crash
WORDS += (b"-smi", b"dmesg", b"journalctl", b"ibstat", b"lspci", b"Peer host:")
# the general words of rounds 8 and 9's needles (their uppercase, "Limit" and "Invalid" forms, a tool's own
# prefixes): each stands for the many needles that hold it, so grep -F looks for fewer strings (358 -> fewer), the
# same lines still match (a needle's line holds its word)
WORDS += (b"EMORY", b"imit", b"IMIT", b"nvalid", b"not found", b"FATAL", b"Fatal", b"TERM_", b"JobState=", b"xceed",
          b"XCEED", b"onnect", b"No such file", b"NO SUCH FILE", b"GLIBC", b"CUDA", b"driver", b"nreachable",
          b"OUT_OF_", b"Unable", b"unable", b"Could not", b"could not", b"Cannot", b"cannot", b"MPI_ERR",
          b"Assertion", b"ssh", b"OCI", b"qsub", b"Job ", b"conda", b"distribution", b"process")  # fmt: skip


def _signature_words() -> tuple[bytes, ...]:
    """A needle of every signature in why/signatures.py (a line it matches holds all of its needles), in the
    cases a line may show a lowercase-matched one in: a new signature is read in big logs with no change here."""
    from clusterdoc.why.signatures import SIGNATURES

    out: list[bytes] = []
    for sig in SIGNATURES:
        if not sig.lower and any(g in n.encode() for n in sig.needles for g in WORDS):
            continue  # a line it matches holds all its needles, so one of the words above (fewer strings for grep)
        needle = max(sig.needles, key=len)
        forms = {needle, needle.capitalize(), needle.upper(), needle.title()} if sig.lower else {needle}
        out += [f.encode() for f in sorted(forms) if f and f.encode() not in out]
    return tuple(out)


def _phase_words() -> tuple[bytes, ...]:
    """The lines that say what a job was doing when it died (why/logs.py: a library's cleanup, weights loading, data
    prepared while the others waited)."""
    from clusterdoc.why.logs import CLEANUP_WORDS, LOADING_WORDS, LOOPBACK_WORDS, WAIT_WORDS

    # the waits that timed out by their own words; a data-preparation bar counts only beside one (glued to its line,
    # as tqdm's output is, or in the log's end, read whole): a training log's millions of bars stay out
    return tuple(w.encode() for w in CLEANUP_WORDS + LOADING_WORDS + LOOPBACK_WORDS + WAIT_WORDS)


# a needle that holds one of the words above is found through that word: grep looks for fewer strings, the same
# lines match
def _vocab_words() -> tuple[bytes, ...]:
    """The failure lines' vocabulary by family (why/vocab.py: the fallback where no signature decides)."""
    from clusterdoc.why.vocab import WORDS as VOCAB

    return tuple(w.encode() for w in VOCAB)


WORDS = WORDS + tuple(
    w for w in dict.fromkeys(_signature_words() + _phase_words() + _vocab_words()) if not any(g in w for g in WORDS)
)
# a word that begins with a space or a colon, the log's commonest bytes, makes grep -F check at nearly every one of
# them (" is unschedulable: " alone took grep from 0.7 to 1.1 s of CPU over 311 MB): its rest, a substring of the
# same needle, finds the same lines and maybe a few more
WORDS = tuple(dict.fromkeys(w.lstrip(b" :") if len(w.lstrip(b" :")) >= 5 else w for w in WORDS))


@dataclass
class LogRead:
    """What was read of one log: its lines (cut, in order) and how much of it."""

    path: str
    size: int = 0
    tail: int = 0  # bytes of the end read line by line
    scanned: int = 0  # bytes of the rest scanned for WORDS
    matched: int = 0  # lines of the rest that held one
    dropped: int = 0  # of those, lines not kept (over KEEP: the earliest go)
    lines: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[str]:
        return iter(self.lines)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n" if self.lines else ""

    @property
    def complete(self) -> bool:
        return self.tail + self.scanned >= self.size

    def summary(self) -> str:
        """'read all 1.0 GB (...)' or 'read the last 16 MiB and ... (N not read)'."""
        if self.size <= self.tail:
            return f"read all {human(self.size)}"
        rest = self.size - self.tail
        how = (
            f"the last {human(self.tail)} line by line, the first {human(self.scanned)} for failure words "
            f"({self.matched} line(s) matched"
            + (f", the earliest {self.dropped} not kept" if self.dropped else "")
            + ")"
        )
        if self.complete:
            return f"read all {human(self.size)}: {how}"
        return (
            f"read the last {human(self.tail)} and {human(self.scanned)} of the {human(rest)} before it "
            f"({human(self.size - self.tail - self.scanned)} not read): {how}"
        )

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "size": self.size,
            "tail_bytes": self.tail,
            "scanned_bytes": self.scanned,
            "complete": self.complete,
            "matched_lines": self.matched,
            "dropped_lines": self.dropped,
            "summary": self.summary(),
        }


def human(n: int) -> str:
    for unit, shift in (("GB", 9), ("MB", 6), ("KB", 3)):
        if n >= 10**shift:
            return f"{n / 10**shift:.1f} {unit}"
    return f"{n} B"


def read_log(path, tail: int = TAIL, keep: int = KEEP, budget: int | None = None) -> LogRead:
    """The log at `path` read as the module says. `budget`: bytes of the rest to scan at most (None: all of it).
    OSError as private.open_read raises it (a symlink, a FIFO, a device, missing)."""
    out = LogRead(str(path))
    with private.open_read(path) as f:
        out.size = os.fstat(f.fileno()).st_size
        start = max(0, out.size - tail)
        if start:  # the tail begins at the first whole line in it (a cut line is the rest's)
            f.seek(start - 1)
            skipped = 0
            while True:
                piece = f.readline(1 << 16)
                skipped += len(piece)
                if not piece or piece.endswith(b"\n"):
                    break
            start += skipped - 1
        out.tail = out.size - start
        f.seek(start)
        tail_lines = list(lines_of(f, out.size - start))
        end = start if budget is None else min(start, budget)
        kept = _scan(f, end, keep, out)
        out.scanned = end
    out.lines = [*kept, *tail_lines]
    return out


def _scan(f, end: int, keep: int, out: LogRead) -> deque[str]:
    """The lines of f's first `end` bytes that hold a word, the latest `keep` bytes of them; counts in `out`."""
    try:
        found = _grep_halves(f, end, keep) if end >= PARALLEL_MIN and (os.cpu_count() or 1) > 1 else None
        if found is None:
            f.seek(0)
            found = _kept(_grep_lines(f, end), keep)
    except GrepFailed:  # Python does it
        f.seek(0)
        found = _kept(_python_lines(f, end), keep)
    kept, _, out.matched, out.dropped = found
    return kept


def _kept(batches: Iterator[list[str]], keep: int) -> tuple[deque[str], int, int, int]:
    """(the latest `keep` bytes of the batches' lines, their size, lines matched, lines dropped)."""
    kept: deque[str] = deque()
    size = matched = dropped = 0
    for batch in batches:
        matched += len(batch)
        kept.extend(batch)
        size += sum(map(len, batch)) + len(batch)
        while size > keep and kept:
            size -= len(kept.popleft()) + 1
            dropped += 1
    return kept, size, matched, dropped


def _grep_halves(f, end: int, keep: int) -> tuple[deque[str], int, int, int] | None:
    """Two greps at once, each on half of the first `end` bytes (split at a line's start): the first half fed
    through a pipe (sendfile, so that it ends there), the second read from f. None when there is no such split."""
    f.seek(end // 2)
    while True:  # the split: the next line's start (a giant line is skipped in bounded pieces)
        piece = f.readline(1 << 16)
        if not piece or piece.endswith(b"\n"):
            break
    mid = f.tell()
    if mid >= end:
        return None
    later: dict = {}

    def second() -> None:
        try:
            with open(f.fileno(), "rb", closefd=False) as g:
                g.seek(mid)
                later["found"] = _kept(_grep_lines(g, end), keep)
        except BaseException as err:  # told to the caller below
            later["error"] = err

    thread = threading.Thread(target=second, name="clusterdoc-why-grep", daemon=True)
    thread.start()
    try:
        first = _kept(_grep_lines(None, mid, feed=(f.fileno(), 0, mid)), keep)
    finally:
        thread.join()
    if "error" in later:
        raise later["error"]
    kept, size, matched, dropped = later["found"]
    early, early_size, early_matched, early_dropped = first
    merged = early + kept
    size += early_size
    dropped += early_dropped
    while size > keep and merged:
        size -= len(merged.popleft()) + 1
        dropped += 1
    return merged, size, matched + early_matched, dropped


def _send(pipe: int, fd: int, offset: int, count: int) -> None:
    """Copy `count` bytes of fd from `offset` into the pipe (a grep's standard input), then close it."""
    try:
        while count > 0:
            sent = os.sendfile(pipe, fd, offset, min(count, 1 << 20))
            if sent == 0:
                break
            offset, count = offset + sent, count - sent
    except OSError:  # grep gone (EPIPE): it failed, or was stopped
        pass
    finally:
        os.close(pipe)


class GrepFailed(WhyError):
    pass


def _python_lines(f, length: int) -> Iterator[list[str]]:
    yield from ([line] for line in matching_lines(f, length))


def _grep_lines(
    f, length: int, words=WORDS, max_line: int = MAX_LINE, feed: tuple[int, int, int] | None = None
) -> Iterator[list[str]]:
    """matching_lines in batches, by the system's grep -F reading f (from its current offset) on its standard
    input; `-b` puts each line's offset in front, and the lines at or after `length` (the tail) are left out.
    `feed` (fd, offset, count) instead: grep reads those bytes of fd through a pipe (f unused)."""
    exe = shutil.which("grep", path="/usr/bin:/bin")
    if exe is None or length <= 0:
        raise GrepFailed("no grep") if exe is None else GrepFailed("nothing to scan")
    argv = [exe, "-a", "-b", "-F"]
    for w in words:
        argv += ["-e", w.decode()]
    pipe = os.pipe() if feed is not None else None
    base = feed[1] if feed is not None else f.tell()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=pipe[0] if pipe is not None else f.fileno(),
            stdout=subprocess.PIPE,
            env={"LC_ALL": "C"},
            preexec_fn=_grep_limits,
        )
    except OSError as err:
        if pipe is not None:
            os.close(pipe[0])
            os.close(pipe[1])
        raise GrepFailed(str(err)) from None
    if pipe is not None and feed is not None:
        os.close(pipe[0])
        threading.Thread(target=_send, args=(pipe[1], *feed), name="clusterdoc-why-feed", daemon=True).start()
    assert proc.stdout is not None
    early = done = False
    try:
        for raw in _pipe_lines(proc.stdout, max_line + 24):
            batch = []
            for line in raw:
                off, sep, text = line.partition(b":")
                if not sep or not off.isdigit() or len(off) > 20:
                    raise GrepFailed(f"grep printed {line[:80]!r}")
                if base + int(off) >= length:
                    early = True  # the tail: read line by line already
                    break
                batch.append(text[:max_line].rstrip(b"\r").decode("utf-8", "replace"))
            yield batch
            if early:
                break
        done = not early
    finally:
        if not done and proc.poll() is None:  # stopped before its end: it need not read on (a grep that printed
            proc.kill()  # all it had is waited for: killed between its last line and its exit, it looked failed)
        proc.stdout.close()
        code = proc.wait()
    if done and code not in (0, 1):
        raise GrepFailed(f"grep exited with {code}")


def _pipe_lines(stream, cap: int, chunk: int = 1 << 20) -> Iterator[list[bytes]]:
    """What a pipe carries, as batches of lines (without their newline), each cut to `cap` bytes; the rest of
    a longer line is skipped as it arrives, never held."""
    carry, skipping = b"", False
    while True:
        piece = stream.read1(chunk)
        if not piece:
            break
        if skipping:
            nl = piece.find(b"\n")
            if nl < 0:
                continue
            piece, skipping = piece[nl:], False  # its newline ends the cut line held in carry
        parts = (carry + piece).split(b"\n")
        carry = parts.pop()
        if len(carry) > cap:
            carry, skipping = carry[:cap], True
        yield [p[:cap] for p in parts]
    if carry:
        yield [carry]


GREP_MEMORY = 128 << 20  # grep holds a whole line: a longer one makes it fail, and Python looks instead


def _grep_limits() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (GREP_MEMORY, GREP_MEMORY))


def lines_of(f, length: int, max_line: int = MAX_LINE) -> Iterator[str]:
    """The next `length` bytes of binary file `f` as lines (without their newline), each cut to `max_line`
    bytes: the rest of a longer line is read in bounded pieces and skipped."""
    left = length
    while left > 0:
        line = f.readline(min(max_line, left))
        if not line:
            return
        left -= len(line)
        if not line.endswith(b"\n"):
            while left > 0:  # a cut line: skip to its end without holding it
                rest = f.readline(min(1 << 16, left))
                left -= len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
        yield line.rstrip(b"\r\n").decode("utf-8", "replace")


def matching_lines(f, length: int, words=WORDS, max_line: int = MAX_LINE, chunk: int = CHUNK) -> Iterator[str]:
    """The lines among the next `length` bytes of `f` that hold one of `words`, in order, each cut to
    `max_line` bytes. A chunk without any word costs one bytes.find per word; a line longer than a chunk is
    looked at in chunk-sized pieces."""
    left, carry = length, b""
    while left > 0:
        piece = f.read(min(chunk, left))
        if not piece:
            return
        left -= len(piece)
        data = carry + piece
        cut = data.rfind(b"\n") + 1 if left > 0 else len(data)
        if cut == 0:  # no newline in a whole chunk: a giant line, looked at as it is
            cut = len(data)
        data, carry = data[:cut], data[cut:]
        yield from _hits(data, words, max_line)


def _hits(data: bytes, words, max_line: int) -> Iterator[str]:
    starts: dict[int, int] = {}  # line start -> line end
    for w in words:
        p = data.find(w)
        while p >= 0:
            s = data.rfind(b"\n", 0, p) + 1
            e = data.find(b"\n", p)
            e = len(data) if e < 0 else e
            starts[s] = e
            p = data.find(w, e)
    for s in sorted(starts):
        yield data[s : min(starts[s], s + max_line)].rstrip(b"\r").decode("utf-8", "replace")
