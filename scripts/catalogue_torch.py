"""A catalogue of torch's own failure messages, read from torch's SOURCE: its Python side (torch.distributed, its
launcher torchrun/elastic, the DataLoader's workers) at one commit, as `clusterdoc why` signatures.

    .venv/bin/python scripts/catalogue_torch.py extract [TORCH_DIR]   # the source -> the raw list (TSV)
    .venv/bin/python scripts/catalogue_torch.py table                 # the raw list -> sigtable/catalogue_torch.py

`extract` reads the .py files of a torch tree (default: the installed torch package, whose files are the
repository's files at `torch.version.git_version`) with `ast`: every `raise X(<string>)` and every
`log.error/critical/exception(<string>)`, the string as a format (its holes as {}); it writes
tests/fixtures/why/catalogue/torch.tsv (commit, file, line, kind, format), bounded. `table` needs no network and
no torch: it classifies each message by the code path that prints it (RULES below: the component, from the file,
and the error path, from the exception class or the words of the check) and writes the signature table. A message
whose path decides no category is left out; one that reports another failure is weak (a candidate).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from catalogue_common import CATALOGUE, ROOT, SIGTABLE, picked_keys, read_tsv

RAW = CATALOGUE / "torch.tsv"
TABLE = SIGTABLE / "catalogue_torch.py"
REPO = "pytorch/pytorch"
# the parts of torch read (relative to the torch package; the repository path is torch/ + this)
PARTS = ("distributed/elastic", "distributed/distributed_c10d.py", "distributed/rendezvous.py",
         "distributed/run.py", "distributed/launch.py", "distributed/utils.py", "distributed/constants.py",
         "utils/data/_utils", "utils/data/dataloader.py")  # fmt: skip
# the C++ headers the wheel ships (include/, the repository's files at the same commit): c10d's collective argument
# checks (Utils.hpp), a backend's unsupported calls (Backend.hpp), gloo's reduce-op checks, the store's socket
CPP_DIR = "include/torch/csrc/distributed/c10d"
CPP_PARTS = ("Utils.hpp", "Backend.hpp", "ProcessGroupGlooDetail.hpp", "ProcessGroup.hpp", "NCCLUtils.hpp")
CPP_CALL = re.compile(r"\b(TORCH_CHECK|C10_THROW_ERROR|throw\s+(?:std::)?\w+|fn)\s*\(")
CPP_LIT = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
LOG_CALLS = ("error", "critical", "exception")
MAX_FORMAT = 300  # characters kept of one message
MAX_ROWS = 3000  # rows kept of the raw list


def _fmt(node: ast.AST) -> str | None:
    """The format string an expression builds (holes as {}), or None when it is no string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace("{", "{{").replace("}", "}}")
    if isinstance(node, ast.JoinedStr):
        return "".join(_fmt(v) or "{}" if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _fmt(node.left), _fmt(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "{}") + (right if right is not None else "{}")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant):
        text = _fmt(node.left)
        return re.sub(r"%[-#0-9.]*[sdrfi]", "{}", text) if text else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        base = _fmt(node.func.value)
        return re.sub(r"\{\{[^{}]*\}\}", "{}", base) if base else None
    return None


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def messages(path: Path, rel: str) -> list[tuple[str, int, str, str]]:
    """(file, line, kind, format) of each raise and error log of one file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        call, kind = None, ""
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            call, kind = node.exc, "raise " + _name(node.exc.func)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LOG_CALLS:
            if _name(node.func.value).lower() in ("log", "logger", "_logger", "_log"):
                call, kind = node, "log." + node.func.attr
        if call is None or not call.args:
            continue
        text = _fmt(call.args[0])
        if text and kind.startswith("log."):  # logging's own %-holes
            text = re.sub(r"%[-#0-9.]*[sdrfi]", "{}", text)
        if text and re.search(r"[A-Za-z]{4}", text):
            text = text.replace("{{", "{").replace("}}", "}")
            text = " ".join(text.split())[:MAX_FORMAT]
            out.append((rel, node.lineno, kind, text))
    return sorted(out, key=lambda r: r[1])


def _cpp_args(text: str, start: int) -> str:
    """The text of a call's arguments from `start` (after its parenthesis) to its close, bounded."""
    depth, i = 1, start
    while i < len(text) and i - start < 800:
        m = CPP_LIT.match(text, i)
        if m:
            i = m.end()
            continue
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0 or (text[i] == ";" and depth <= 1):
            break
        i += 1
    return text[start:i]


def _cpp_fmt(args: str) -> str:
    """The message a call builds from its string literals, anything else between them a hole."""
    out, last = [], None
    for m in CPP_LIT.finditer(args):
        if last is not None and re.sub(r"[\s+<]", "", args[last : m.start()]):
            out.append("{}")
        out.append(m.group(1))
        last = m.end()
    if last is not None and re.sub(r"[\s+<);]", "", args[last:]):
        out.append("{}")
    return "".join(out)


def cpp_messages(path: Path, rel: str) -> list[tuple[str, int, str, str]]:
    """(file, line, kind, format) of each check, throw and collective argument check of one C++ header."""
    text, out = path.read_text(encoding="utf-8", errors="replace"), []
    for m in CPP_CALL.finditer(text):
        fmt = _cpp_fmt(_cpp_args(text, m.end()))
        if re.search(r"[A-Za-z]{4}", fmt):
            kind = re.sub(r"\s+(?:std::)?", " ", m.group(1))
            out.append((rel, text.count("\n", 0, m.start()) + 1, kind, " ".join(fmt.split())[:MAX_FORMAT]))
    return out


def extract(torch_dir: Path, commit: str) -> list[str]:
    rows = []
    for part in PARTS:
        base = torch_dir / part
        files = sorted(base.rglob("*.py")) if base.is_dir() else [base]
        for f in files:
            rel = "torch/" + f.relative_to(torch_dir).as_posix()
            rows += [f"{commit}\t{r}\t{n}\t{k}\t{t}" for r, n, k, t in messages(f, rel)]
    for name in CPP_PARTS:
        rel = "torch/csrc/distributed/c10d/" + name
        rows += [f"{commit}\t{r}\t{n}\t{k}\t{t}" for r, n, k, t in cpp_messages(torch_dir / CPP_DIR / name, rel)]
    return rows[:MAX_ROWS]


# --- the rules: a category from the code path (component, error path), never from a log ---
# (component: a prefix of the file; kinds: the raise's exception class or the log call; words: all in the format,
# lowercase) -> (name, category, weak, meaning, next step). The first rule that fits a message wins; a message no
# rule fits is left out (its path does not decide, or it is no failure).
C10D = "torch/distributed/distributed_c10d.py"
RDZV = "torch/distributed/elastic/rendezvous"
CUTILS = "torch/csrc/distributed/c10d/Utils.hpp"
RULES: list[tuple[str, tuple[str, ...], tuple[str, ...], str, str, bool, str, str]] = [
    # --- environment: the build or the node lacks what the call needs (a backend, an accelerator, a limit) ---
    (C10D, ("raise RuntimeError",), ("built in",), "backend-not-built", "environment", False,
     "this torch build has no such distributed backend (a CPU-only wheel has no NCCL; MPI only from source)",
     "install the torch build for the node's GPUs (pip index for its CUDA) or pick the backend it has (gloo)"),
    ("torch/distributed", ("raise ValueError",), ("exceeds available gpus",), "local-rank-no-gpu", "environment",
     False, "a local rank has no GPU of its own: more processes per node than GPUs visible",
     "--nproc_per_node against the GPUs the job sees (CUDA_VISIBLE_DEVICES, --gpus/--gres)"),
    (C10D, ("raise ValueError",), ("accelerator",), "accelerator-backend", "environment", False,
     "torch.distributed knows no communication backend for this node's accelerator",
     "pass backend= to init_process_group for the accelerator, or install its backend's torch build"),
    ("torch/utils/data", ("raise RuntimeError",), ("too many open files",), "dataloader-open-files", "environment",
     False, "the DataLoader's workers hit the open-files limit (ulimit -n) passing tensors",
     "raise ulimit -n in the job script, or torch.multiprocessing.set_sharing_strategy('file_system')"),
    (RDZV, ("raise RendezvousError",), ("file creation",), "rdzv-file-store", "environment", False,
     "torchrun's rendezvous could not create its file store (the path's file system or permissions)",
     "the store's path: exists, writable and shared by every node (df, ls -ld)"),
    # --- code: the call's own argument checks (the job's code, or how it was launched) ---
    ("torch/distributed/elastic/rendezvous/static_tcp", ("raise ValueError",), ("absent",), "launch-args", "code",
     False, "torchrun was started without an argument its static rendezvous needs (--node-rank, --master-addr, "
     "--master-port)", "the torchrun command line of every node"),
    ("torch/distributed/rendezvous.py", ("raise _error", "raise ValueError"), (), "init-method-args", "code", False,
     "torch.distributed's init_method (or its environment: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE) misses "
     "a value: started without its launcher, or the URL is incomplete",
     "start it with its launcher (torchrun, srun with the variables set) or complete the init_method URL"),
    (C10D, ("raise RuntimeError",), ("local_rank",), "local-rank-missing", "code", False,
     "the script asks for the local rank and LOCAL_RANK is not set: started without torchrun",
     "start it with torchrun (it sets LOCAL_RANK), or pass fallback_rank"),
    (C10D, ("raise ValueError", "raise TypeError", "raise RuntimeError"), (), "c10d-argument", "code", False,
     "a torch.distributed call was made with arguments it rejects (a collective's tensors, group, rank or dtype, "
     "or the process group's set-up): the job's code",
     "fix the call the traceback names (its arguments on this rank); a retry fails the same way"),
    # the C++ side: a collective's own argument checks (ProcessGroupGloo/MPI's invalidArgument(...) of Utils.hpp's
    # assert* helpers, its split checks), a call the backend does not have, gloo's reduce-op checks
    (CUTILS, ("fn", "throw invalid_argument"), (), "collective-argument", "code", False,
     "a collective was called with tensors its backend rejects on this rank (their number, size, type, layout or "
     "device): the job's code", "fix the collective's arguments on the rank that raised (sizes, dtypes, devices, "
     "the tensor list's length against the world size)"),
    (CUTILS, ("TORCH_CHECK",), ("split",), "collective-split", "code", False,
     "an all_to_all's split sizes do not fit its tensor or the group: the job's code",
     "the split sizes passed on the rank that raised (their sum against dim 0, their count against the group)"),
    (CUTILS, ("TORCH_CHECK",), ("dim 0",), "collective-split", "code", False,
     "an all_to_all's split sizes do not fit its tensor or the group: the job's code",
     "the split sizes passed on the rank that raised (their sum against dim 0, their count against the group)"),
    (CUTILS, ("TORCH_CHECK",), ("invalid value for environment variable",), "env-value", "environment", False,
     "a torch.distributed environment variable holds a value it does not accept",
     "the variable the message names, in the job's environment (0 or 1 for a flag)"),
    ("torch/csrc/distributed/c10d/Backend.hpp", ("TORCH_CHECK",), ("does not support",), "backend-unsupported",
     "code", False, "the job called a collective its process group's backend does not have (gloo, nccl, mpi each "
     "lack some)", "another backend for that call (a gloo group for CPU tensors, nccl for CUDA ones), or another call"),
    ("torch/csrc/distributed/c10d/ProcessGroupGlooDetail.hpp", ("TORCH_CHECK",), ("cannot use",),
     "gloo-reduce-op", "code", False, "gloo was given a reduce op it cannot apply to that dtype",
     "another reduce op or dtype for that collective (or the nccl backend)"),
    # --- a socket of the c10d store closed by the other side: never a cause alone (the peer died, or the link) ---
    (CUTILS, ("C10_THROW_ERROR",), ("connection was likely closed",), "store-socket-closed", "peer", False,
     "the c10d store's socket was closed by the other side: the store's process (rank 0, torchrun's agent) ended, "
     "or the link dropped", "the first failure on the store's node (rank 0's log); clusterdoc check (net) between"),
    # --- weak: the path reports a wait that ended or a connection that failed; what failed first decides ---
    (RDZV, ("raise RendezvousConnectionError",), (), "rdzv-connect", "network", True,
     "torchrun's rendezvous could not reach its store (the c10d store or etcd): the endpoint is unreachable "
     "from this node, or its node (rank 0's) is not up or died",
     "nc -zv on --rdzv-endpoint from this node; the endpoint node's own log (it started late, or failed first)"),
    ("torch/distributed", ("raise DistStoreError", "raise TimeoutError"), ("timed out",), "store-wait-timeout",
     "hang", True, "a wait on torch.distributed's store ended: some ranks never arrived (they started late, "
     "failed first, or could not reach the store)",
     "the missing ranks' own logs (their first error, their start time); MASTER_ADDR reachable from each"),
    ("torch/utils/data", ("raise RuntimeError",), ("exited unexpectedly",), "dataloader-exited", "oom", True,
     "a DataLoader worker (or its pin-memory thread) exited unexpectedly: killed (the host's OOM killer, a full "
     "/dev/shm) or crashed", "the node's dmesg (OOM killer); df -h /dev/shm; num_workers=0 shows the worker's "
     "own error"),
    ("torch/utils/data", ("raise RuntimeError",), ("timed out",), "dataloader-timeout", "hang", True,
     "a DataLoader got no batch from its workers within its timeout: the data source is slow or stuck",
     "the data path's file system and the worker's stack (py-spy dump); timeout=0 waits"),
    ("torch/distributed/elastic/agent", ("log.error",), ("uninterruptible sleep",), "worker-d-state", "node", True,
     "torchrun found a worker stuck in the kernel (D state): often a device or file system of the node",
     "the node's kernel log (dmesg: GPU Xid, NFS/Lustre hangs); clusterdoc check on it"),
]  # fmt: skip
# the pieces between a format's holes: a first needle shorter than MIN_FIRST is too common a text to name a
# failure; a needle is at most MAX_NEEDLE characters (its head: a pasted line may be cut or wrapped after it)
MIN_PIECE, MIN_FIRST, MAX_NEEDLE, LONG = 12, 24, 60, 40
# a fixed word of a path's messages shorter than a needle, added to its rows (it says who speaks: torch's backend)
ANCHORS = {"backend-unsupported": "Backend "}
# a message whose words say it is no failure (an INFO-like text raised for control flow, a hint)
NOT_FAILURE = ("deprecated", "please use", "will be removed", "retry")


KEYS = picked_keys()


def pieces(fmt: str) -> list[str]:
    return [p.strip()[:MAX_NEEDLE].strip() for p in re.split(r"\{[^{}]*\}", fmt) if len(p.strip()) >= MIN_PIECE]


def classify(rows: list[list[str]]) -> list[dict]:
    """The signatures of the raw rows: each message of a failure path a rule decides, one row each."""
    out, seen = [], set()
    for commit, path, line, kind, fmt in rows:
        low = fmt.lower()
        if any(w in low for w in NOT_FAILURE):
            continue
        for comp, kinds, words, name, cat, weak, meaning, step in RULES:
            if path.startswith(comp) and kind in kinds and all(w in low for w in words):
                break
        else:
            continue
        ps = sorted(pieces(fmt), key=len, reverse=True)
        keyed = [p for p in ps if len(p) >= MIN_FIRST and any(k in p.lower() for k in KEYS)]
        if not keyed or fmt in seen:  # a first needle with no pre-check key would cost every line one more check
            continue
        seen.add(fmt)
        # a long first piece is specific alone (and survives another version's other holes); a short one takes the
        # next piece too
        needles = (keyed[0],) if len(keyed[0]) >= LONG else (keyed[0], *[p for p in ps if p != keyed[0]][:1])
        if name in ANCHORS:
            needles += (ANCHORS[name],)
        out.append(dict(name=f"torchsrc-{name}-{len([o for o in out if o['base'] == name]) + 1}", base=name,
                        category=cat, weak=weak, needles=needles, meaning=meaning, step=step, learned=fmt,
                        source=f"https://github.com/{REPO}/blob/{commit}/{path}#L{line}"))
    return out


def render(sigs: list[dict]) -> str:
    head = ('# ruff: noqa: E501 - generated: each row keeps its format string and source address whole\n'
            '"""The catalogue of torch\'s own failure messages (torch.distributed\'s Python side, torchrun\'s '
            'rendezvous and\nagent, the DataLoader\'s workers), generated by scripts/catalogue_torch.py from '
            'tests/fixtures/why/catalogue/torch.tsv:\ndo not edit; rerun `scripts/catalogue_torch.py table`. A '
            'fallback after every learned signature (signatures.py).\n"""\n\nfrom __future__ import annotations\n\n'
            "from clusterdoc.why.signature import S, Signature\n\nSIGNATURES: list[Signature] = [\n")
    body = []
    for s in sigs:
        body.append(f"    S({s['name']!r}, {s['category']!r}, {s['needles']!r},\n      {s['meaning']!r},\n"
                    f"      {s['learned']!r},\n      {s['source']!r},\n      {s['step']!r}"
                    + (", weak=True" if s["weak"] else "") + "),\n")
    return head + "".join(body) + "]  # fmt: skip\n"


def read_raw() -> list[list[str]]:
    return read_tsv(RAW)


def main(argv: list[str]) -> int:
    if argv[:1] == ["extract"]:
        import torch  # only here: `table` needs no torch
        import torch.version

        torch_dir = Path(argv[1]) if len(argv) > 1 else Path(torch.__file__).parent
        rows = extract(torch_dir, torch.version.git_version)
        RAW.write_text("# commit\tfile\tline\tkind\tformat (scripts/catalogue_torch.py extract)\n"
                       + "\n".join(rows) + "\n", encoding="utf-8")  # fmt: skip
        print(f"{len(rows)} messages -> {RAW.relative_to(ROOT)}")
        return 0
    if argv[:1] == ["table"]:
        sigs = classify(read_raw())
        TABLE.write_text(render(sigs), encoding="utf-8")
        print(f"{len(sigs)} signatures -> {TABLE.relative_to(ROOT)}")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
