"""Run DeepSpeed's own setup.py for the requested ops: source, environment, command, log, progress.

We call `python setup.py build_ext -jN bdist_wheel` (what DeepSpeed's install.sh does) in a fresh copy
of the source, so build/ leftovers of an earlier run can never slip stale extensions into the wheel.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from clusterdoc.errors import UsageError

DEFAULT_VERSION = "0.19.8"  # the release this builder was tried with (shared/reference.md §4)

# DeepSpeed op NAME -> the suffix of its DS_BUILD_<...> switch (op_builder/*.py BUILD_VAR).
OP_SWITCH = {
    "cpu_adam": "CPU_ADAM",
    "cpu_adagrad": "CPU_ADAGRAD",
    "cpu_lion": "CPU_LION",
    "utils": "UTILS",
    "async_io": "AIO",
    "gds": "GDS",
    "fused_adam": "FUSED_ADAM",
    "fused_lamb": "FUSED_LAMB",
    "fused_lion": "FUSED_LION",
    "transformer": "TRANSFORMER",
    "transformer_inference": "TRANSFORMER_INFERENCE",
    "quantizer": "QUANTIZER",
    "fp_quantizer": "FP_QUANTIZER",
    "inference_core_ops": "INFERENCE_CORE_OPS",
    "ragged_ops": "RAGGED_OPS",
    "ragged_device_ops": "RAGGED_DEVICE_OPS",
    "sparse_attn": "SPARSE_ATTN",
    "evoformer_attn": "EVOFORMER_ATTN",
    "cutlass_ops": "CUTLASS_OPS",
    "random_ltd": "RANDOM_LTD",
    "stochastic_transformer": "STOCHASTIC_TRANSFORMER",
    "spatial_inference": "SPATIAL_INFERENCE",
    "dc": "DEEP_COMPILE",
    "pin_memory": "PIN_MEMORY",
}
_BY_SWITCH = {v.lower(): k for k, v in OP_SWITCH.items()}


def parse_ops(text: str, aio: bool = False) -> list[str]:
    """'cpu_adam,UTILS aio' -> ['cpu_adam', 'utils', 'async_io'] (op names or DS_BUILD_ suffixes)."""
    ops = []
    for word in re.split(r"[,;\s]+", (text or "").strip()):
        if not word:
            continue
        key = word.lower().removeprefix("ds_build_")
        op = key if key in OP_SWITCH else _BY_SWITCH.get(key)
        if op is None:
            raise UsageError(
                f"unknown DeepSpeed op {word!r}", where="--ops", hint="known ops: " + ", ".join(sorted(OP_SWITCH))
            )
        if op not in ops:
            ops.append(op)
    if aio and "async_io" not in ops:
        ops.append("async_io")
    if not ops:
        raise UsageError("no ops to build", where="--ops", hint="e.g. --ops cpu_adam,utils")
    return ops


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def build_env(
    arch_list: str, ops: list[str], jobs: int, accelerator: str, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The variables we set for setup.py (on top of the caller's environment).

    DS_ACCELERATOR=cuda: a build host without GPUs (a login node) would otherwise get DeepSpeed's CPU
    accelerator, whose wheel the GPU nodes ignore (and which has no `utils` op at all).
    """
    if base is None:
        base = os.environ
    env = {"DS_BUILD_OPS": "0"}
    for op in ops:
        env[f"DS_BUILD_{OP_SWITCH[op]}"] = "1"
    env["DS_ACCELERATOR"] = accelerator
    if arch_list:
        env["TORCH_CUDA_ARCH_LIST"] = arch_list
    env["MAX_JOBS"] = str(jobs)
    env["PYTHONUNBUFFERED"] = "1"  # setup.py's output reaches the log and the progress line as it happens
    if base.get("CUDA_HOST_COMPILER") and not base.get("NVCC_CCBIN"):
        env["NVCC_CCBIN"] = base["CUDA_HOST_COMPILER"]
    return env


def build_command(python: str, jobs: int, dist_dir: Path) -> list[str]:
    return [python, "setup.py", "build_ext", f"-j{jobs}", "bdist_wheel", "--dist-dir", str(dist_dir)]


# --- where the source comes from ------------------------------------------------------------------


@dataclass
class Source:
    kind: str  # "checkout" | "sdist" | "version"
    path: Path  # the checkout or sdist (for "version": the cached sdist, maybe not there yet)
    version: str | None


_VERSION = re.compile(r"^\d+(\.\d+)+([a-z0-9.+-]*)$", re.IGNORECASE)


def cache_dir(arg: str | None) -> Path:
    """--cache, else $CLUSTERDOC_CACHE, else ~/.cache/clusterdoc; sdists go in its deepspeed/."""
    root = (
        arg
        or os.environ.get("CLUSTERDOC_CACHE")
        or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "clusterdoc")
    )
    return Path(root) / "deepspeed"


def resolve_source(spec: str | None, cache: Path) -> Source:
    spec = spec or DEFAULT_VERSION
    path = Path(spec).expanduser()
    if path.is_dir():
        if not (path / "setup.py").is_file() or not (path / "op_builder").is_dir():
            raise UsageError(
                f"{spec} is not a DeepSpeed source tree (no setup.py and op_builder/)",
                where="--source",
                hint="give a DeepSpeed checkout, an sdist (.tar.gz), or a version like 0.19.8",
            )
        return Source("checkout", path.resolve(), None)
    if path.is_file():
        if not (spec.endswith(".tar.gz") or spec.endswith(".zip")):
            raise UsageError(f"{spec} is not an sdist (.tar.gz or .zip)", where="--source")
        m = re.match(r"deepspeed-(.+?)\.(tar\.gz|zip)$", path.name)
        return Source("sdist", path.resolve(), m.group(1) if m else None)
    if _VERSION.match(spec.removeprefix("deepspeed==")):
        version = spec.removeprefix("deepspeed==")
        return Source("version", cached_sdist(cache, version) or cache / f"deepspeed-{version}.tar.gz", version)
    raise UsageError(
        f"{spec!r} is neither a directory, an sdist file nor a version",
        where="--source",
        hint="give a DeepSpeed checkout, an sdist (.tar.gz), or a version like 0.19.8",
    )


def cached_sdist(cache: Path, version: str) -> Path | None:
    for name in (f"deepspeed-{version}.tar.gz", f"deepspeed-{version}.zip"):
        if (cache / name).is_file():
            return cache / name
    return None


def download_command(python: str, version: str, cache: Path) -> list[str]:
    return [
        python,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        f"deepspeed=={version}",
        "-d",
        str(cache),
    ]


def fetch(source: Source, python: str, log) -> Path:
    """The sdist for a version, downloaded once into the cache and reused after."""
    version = source.version
    assert version is not None, "fetch() is for a source of kind 'version'"
    found = cached_sdist(source.path.parent, version)
    if found:
        log(f"using cached sdist {found}")
        return found
    source.path.parent.mkdir(parents=True, exist_ok=True)
    cmd = download_command(python, version, source.path.parent)
    log("fetching: " + " ".join(cmd))
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    found = cached_sdist(source.path.parent, version)
    if out.returncode != 0 or not found:
        tail = "\n".join((out.stderr or out.stdout).strip().splitlines()[-5:])
        raise UsageError(
            f"could not download the DeepSpeed {source.version} sdist:\n{tail}",
            where="--source",
            hint="check the version exists (pip index versions deepspeed) and that PyPI is reachable",
        )
    return found


def prepare_tree(source: Source, sdist: Path | None, work: Path) -> Path:
    """A fresh source tree under `work` to build in."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    if source.kind == "checkout":
        tree = work / source.path.name
        shutil.copytree(
            source.path,
            tree,
            symlinks=True,
            ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", "*.so"),
        )
        return tree
    assert sdist is not None, "an sdist or version source needs its sdist"
    if sdist.name.endswith(".zip"):
        with zipfile.ZipFile(sdist) as z:
            z.extractall(work)
    else:
        with tarfile.open(sdist) as t:
            if hasattr(tarfile, "data_filter"):
                t.extractall(work, filter="data")
            else:  # pragma: no cover - python < 3.11.4
                t.extractall(work)
    tops = [p for p in work.iterdir() if p.is_dir()]
    if len(tops) != 1 or not (tops[0] / "setup.py").is_file():
        raise UsageError(f"{sdist} does not unpack to one DeepSpeed source tree", where="--source")
    return tops[0]


# --- running it -------------------------------------------------------------------------------------


class Progress:
    """One status line on stderr, redrawn in place, only when stderr is a terminal."""

    def __init__(self, label: str, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.label, self.last, self.start = label, "", time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)

    def __enter__(self):
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self.enabled:
            self._thread.join()
            self.stream.write("\r\033[K")
            self.stream.flush()

    def line(self, text: str) -> None:
        text = text.strip()
        m = re.search(r"(\S+\.(?:cpp|cu|cc|c))\b", text)
        if m:
            self.last = "compiling " + os.path.basename(m.group(1))
        elif text.startswith(("building '", "creating '", "adding '", "Install Ops=", "running ")):
            self.last = text[:60]

    def _tick(self):
        while not self._stop.wait(0.5):
            elapsed = int(time.monotonic() - self.start)
            width = shutil.get_terminal_size((80, 20)).columns - 1
            text = f"{self.label} {elapsed // 60}:{elapsed % 60:02d}  {self.last}"
            self.stream.write("\r\033[K" + text[:width])
            self.stream.flush()


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """A build orphaned by a killed clusterdoc must not go on compiling for minutes (Linux prctl)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _terminate(signum, frame):
    raise SystemExit(128 + signum)


def run_logged(cmd: list[str], cwd: Path, env: dict, log_path: Path, label: str, stream=None) -> int:
    """Run cmd with stdout+stderr going to log_path (whole) and the progress line (TTY only).

    The command runs in its own process group, killed whole if we are interrupted or terminated."""
    old = signal.signal(signal.SIGTERM, _terminate) if threading.current_thread() is threading.main_thread() else None
    try:
        with open(log_path, "a", encoding="utf-8", errors="replace") as log, Progress(label, stream) as progress:
            log.write("$ " + " ".join(cmd) + "\n")
            log.flush()
            proc = subprocess.Popen(
                cmd,
                cwd=cwd,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
                errors="replace",
                bufsize=1,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
            assert proc.stdout is not None  # stdout=PIPE
            try:
                for text in proc.stdout:
                    log.write(text)
                    progress.line(text)
                return proc.wait()
            except BaseException:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                proc.wait()
                raise
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)


# log pattern -> what probably went wrong (first match wins; ordered from specific to general)
CAUSES = [
    (
        r"unsupported GNU version",
        "gcc is newer than nvcc accepts: use a supported gcc (CUDA_HOST_COMPILER=..., "
        "or CC/CXX), or link one into the toolkit's bin/",
    ),
    (
        r"Unsupported gpu architecture '(compute_\d+\w*)'",
        "nvcc cannot build {0}: drop it from the arch list or use a newer CUDA toolkit",
    ),
    (
        r"Installed CUDA version .* does not match|CUDAMismatchException",
        "nvcc and torch's CUDA differ beyond what "
        "DeepSpeed tolerates: point CUDA_HOME at the toolkit matching torch.version.cuda",
    ),
    (r"libaio\.h: No such file|cannot find -laio", "libaio is missing: apt-get install libaio-dev (RPM: libaio-devel)"),
    (r"Python\.h: No such file", "the Python headers are missing: apt-get install python3-dev (RPM: python3-devel)"),
    (r"No module named '([\w.]+)'", "the build python lacks the module {0}: pip install it into the build environment"),
    (
        r"internal compiler error: Killed|cc1plus: out of memory|Killed signal terminated|MemoryError",
        "the compiler ran out of memory: lower --jobs",
    ),
    (r"No space left on device", "the disk is full: free space under --out and the temporary directory"),
    (
        r"invalid literal for int\(\).*|ValueError:.*TORCH_CUDA_ARCH_LIST",
        "DeepSpeed could not parse TORCH_CUDA_ARCH_LIST: use entries like 8.0 or 9.0+PTX",
    ),
    (r"command '([^']*nvcc)' failed|nvcc fatal\s*:\s*(.*)", "nvcc failed: see the first error above in the log"),
    (r"error: command '([^']+)' failed", "the compiler {0} failed: the first 'error:' line in the log says why"),
]


def likely_cause(log_text: str) -> str | None:
    for pattern, cause in CAUSES:
        m = re.search(pattern, log_text)
        if m:
            groups = [g for g in m.groups() if g] or [""]
            return cause.format(*groups)
    return None


def log_tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])
