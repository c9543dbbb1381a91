"""The job's python: torch and mpi4py (in a forked child, timed), DeepSpeed and its op binaries.

Part of the probe (see clusterdoc/probe/__init__.py): stdlib only, Python 3.6+.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

from clusterdoc.probe.base import listdir_prefix, read

TORCH_SNIPPET = r"""
import json, sys
try:
    import torch
except ImportError:
    print(json.dumps(None)); sys.exit(0)
t = {"version": str(torch.__version__), "cuda": getattr(torch.version, "cuda", None),
     "path": getattr(torch, "__file__", None), "arch_list": None, "nccl": None, "cuda_available": None}
try:
    t["arch_list"] = list(torch.cuda.get_arch_list())
except Exception:
    pass
try:
    v = torch.cuda.nccl.version()
    t["nccl"] = ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
except Exception:
    pass
try:  # the libnccl this process really mapped (None: linked into torch, or not loaded)
    with open("/proc/self/maps") as f:
        t["nccl_lib"] = next((l.split(None, 5)[5].strip() for l in f if "/libnccl" in l and len(l.split()) > 5), None)
except Exception:
    pass
print(json.dumps(t)); sys.stdout.flush()
try:
    t["cuda_available"] = bool(torch.cuda.is_available())
except Exception:
    pass
print(json.dumps(t))
"""


class Forked(object):
    """Run a Python snippet in a forked child: isolated like a subprocess (a broken torch, or a driver
    call that hangs, cannot take the probe down: the child is killed at the deadline), without paying
    for a second interpreter's start-up on every node. Start it before any thread exists."""

    def __init__(self, snippet):
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: run the snippet with its own stdout/stderr, never return
            code = 1
            try:
                os.setsid()
                os.close(out_r)
                os.close(err_r)
                os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
                os.dup2(out_w, 1)
                os.dup2(err_w, 2)
                sys.stdout = os.fdopen(1, "w")
                sys.stderr = os.fdopen(2, "w")
                exec(compile(snippet, "<probe child>", "exec"), {"__name__": "__main__"})
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 0
            except BaseException:
                import traceback

                traceback.print_exc()
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except Exception:
                pass
            os._exit(code)
        os.close(out_w)
        os.close(err_w)
        self.pid, self.fds = pid, [out_r, err_r]

    def result(self, deadline):
        """(exit code, stdout, stderr); raises subprocess.TimeoutExpired after killing the child."""
        import select

        bufs = {fd: [] for fd in self.fds}
        open_fds = list(self.fds)
        while open_fds:
            left = deadline - time.time()
            if left <= 0:
                break
            ready, _, _ = select.select(open_fds, [], [], left)
            for fd in ready:
                chunk = os.read(fd, 65536)
                if chunk:
                    bufs[fd].append(chunk)
                else:
                    open_fds.remove(fd)
        for fd in self.fds:
            os.close(fd)
        if open_fds:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(self.pid, 0)
            raise subprocess.TimeoutExpired("python", round(deadline - self.started, 1))
        _, status = os.waitpid(self.pid, 0)
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
        out, err = (b"".join(bufs[fd]).decode("utf-8", "replace") for fd in self.fds)
        return code, out, err

    started = 0.0


def start_forked(snippet):
    child = Forked(snippet)
    child.started = time.time()
    return child


def torch_facts(code, out, err):
    lines = [line for line in out.splitlines() if line.startswith("{") or line == "null"]
    if code != 0 or not lines:
        last = ((err or out).strip().splitlines() or ["exit %d" % code])[-1]
        raise RuntimeError("importing torch failed: %s" % last[:300])
    return json.loads(lines[-1])


def mpi4py_facts(code, out, err):
    if code != 0:
        last = ((err or out).strip().splitlines() or ["exit %d" % code])[-1]
        return {"version": None, "library": None, "error": last[:300]}
    return json.loads(out.strip().splitlines()[-1])


def _find_package_dir(name):
    """The directory of an installed package, found along sys.path without importing it."""
    for entry in sys.path:
        cand = os.path.join(entry or ".", name)
        if os.path.isfile(os.path.join(cand, "__init__.py")):
            return cand
    return None


def _load_data_module(path):
    """Read a generated assignments-only module (deepspeed's git_version_info_installed.py)
    without importing deepspeed, which would import torch and take seconds."""
    ns = {}
    exec(compile(read(path) or "", path, "exec"), ns)
    return ns


# clusterdoc/fatbin.py's text, put here by the head in what it sends (probe/payload.py); None when the probe
# runs from a checkout, which has the file beside it.
FATBIN_SOURCE = None
MAX_DS_BINARIES = 64  # compiled op extensions read on one node (DeepSpeed has about 25 ops)


def fatbin_reader():
    """fatbin.fatbin_archs (path -> {sass, ptx} | {error}, reading only the fatbin headers), or None."""
    source = FATBIN_SOURCE
    here = globals().get("__file__")
    if source is None and here:  # run from the package (head, or --local): clusterdoc/probe/pyenv.py
        package = os.path.dirname(os.path.dirname(os.path.abspath(here)))
        source = read(os.path.join(package, "fatbin.py"))
    if not source:
        return None
    ns = {"__name__": "clusterdoc_fatbin"}
    exec(compile(source, "fatbin.py", "exec"), ns)
    return ns["fatbin_archs"]


def deepspeed_binaries(pkg, budget):
    """The SASS and PTX each compiled op extension under deepspeed/ops carries, whoever built it:
    ([{file, op, sass, ptx} | {file, op, error}], how many were left unread: past MAX_DS_BINARIES or
    `budget` seconds). None when this probe has no fatbin reader."""
    reader = fatbin_reader()
    if reader is None:
        return None, 0
    found, walked, deadline = [], 0, time.time() + budget
    for root, _dirs, files in os.walk(os.path.join(pkg, "ops")):
        walked += 1
        found += [os.path.join(root, n) for n in files if re.search(r"\.so(\.\d+)*$", n)]
        if walked > 2000 or len(found) > 10 * MAX_DS_BINARIES or time.time() > deadline:
            break
    out = []
    for path in sorted(found)[:MAX_DS_BINARIES]:
        if time.time() > deadline:
            break
        entry = {"file": os.path.relpath(path, pkg), "op": re.sub(r"_op$", "", os.path.basename(path).split(".")[0])}
        entry.update(reader(path))
        if "error" in entry:
            entry["error"] = entry["error"].replace(path + ": ", "", 1)[:300]
        out.append(entry)
    return out, len(found) - len(out)


def probe_deepspeed(timeout):
    pkg = _find_package_dir("deepspeed")
    if not pkg:
        return None
    facts = {
        "version": None,
        "torch_version": None,
        "cuda_version": None,
        "ops_installed": {},
        "ops_compatible": {},
        "path": pkg,
        "wheel_manifest": None,
    }
    facts["binaries"], facts["binaries_left"] = deepspeed_binaries(pkg, min(timeout, 5.0))
    info_path = os.path.join(pkg, "git_version_info_installed.py")
    if os.path.exists(info_path):
        ns = _load_data_module(info_path)
        torch_info = ns.get("torch_info") or {}
        facts.update(
            version=ns.get("version"),
            torch_version=torch_info.get("version"),
            cuda_version=torch_info.get("cuda_version"),
            ops_installed=dict(ns.get("installed_ops") or {}),
            ops_compatible=dict(ns.get("compatible_ops") or {}),
        )
    else:
        m = re.search(r"""version\s*=\s*['"]([^'"]+)""", read(os.path.join(pkg, "git_version_info.py")) or "")
        facts["version"] = m.group(1) if m else None
    # The manifest `clusterdoc build-wheel` writes: where, for which GPUs, the wheel was built.
    candidates = [os.path.join(pkg, "clusterdoc-wheel.json")]
    candidates += [
        os.path.join(d, "clusterdoc-wheel.json")
        for d in listdir_prefix(os.path.dirname(pkg), "deepspeed-")
        if d.endswith(".dist-info")
    ]
    for cand in candidates:
        text = read(cand)
        if text:
            try:
                facts["wheel_manifest"] = json.loads(text)
            except ValueError:
                facts["wheel_manifest"] = {"error": "unreadable " + cand}
            break
    return facts


MPI4PY_SNIPPET = r"""
import json
import mpi4py
mpi4py.rc.threads = False
from mpi4py import MPI
# a C string: Open MPI's ends in its NUL byte, which str.strip() keeps
library = MPI.Get_library_version().split("\0")[0].strip()
print(json.dumps({"version": mpi4py.__version__, "library": (library.splitlines() or [""])[0]}))
"""
