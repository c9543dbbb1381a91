"""The one script the head sends to every node: the probe package's modules (probe.MODULES) joined, the fatbin
reader's source inside, the self-ending MAIN at the end; made once and kept in the user's cache. Runs on the head
only (never sent itself); `python -m clusterdoc.probe --payload` prints what it makes. How the script is sent and
its answer read is the head's side: clusterdoc/doctor/payload.py."""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import secrets
import stat
import sys
from pathlib import Path

from clusterdoc import fatbin, private, probe


def _without_docstrings(tree: ast.Module) -> ast.Module:
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
            and isinstance(node.body[0].value.value, str)
        ):
            node.body = node.body[1:] or [ast.Pass()]
    return tree


def _assigns(node: ast.stmt, names: set[str]) -> bool:
    return isinstance(node, ast.Assign) and any(getattr(t, "id", None) in names for t in node.targets)


def _is_probe_import(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and (node.module or "").startswith("clusterdoc.probe")


# The payload's last statement: run, then exit even if a stuck thread remains (a probe must never hang the
# node's session). Before it runs, the probe arms its own end: SIGALRM (default action: the process ends, even
# blocked in a read) a little past the head's deadline for the node (--budget is 75 % of it over SSH, 90 % through
# srun), so a probe stuck on something of the node's never stays behind after the head gave up on it.
MAIN = (
    'if __name__ == "__main__":\n'
    "    import signal\n"
    "    try:\n"
    '        _b = float(sys.argv[sys.argv.index("--budget") + 1])\n'
    "    except (ValueError, IndexError):\n"
    "        _b = 0.0\n"
    "    if 0 < _b < 1e6:\n"
    "        signal.alarm(int(_b * 1.4) + 5)\n"
    "    code = main()\n"
    "    sys.stdout.flush()\n"
    "    os._exit(code)\n"
)


def probe_payload() -> bytes:
    """The probe package (clusterdoc/probe/, its modules in probe.MODULES' order) joined into the one script
    sent to every node: without docstrings and the imports between its modules, the standard imports once at
    the top, the fatbin reader's source (clusterdoc/fatbin.py, run by the probe in its own namespace) in
    FATBIN_SOURCE. Compiling it is a good part of the probe's cost on each node, so the smaller source shows in
    the check's wall time."""
    here = Path(probe.__file__).parent
    imports: dict[str, ast.stmt] = {}
    body: list[ast.stmt] = []
    for name in probe.MODULES:
        tree = _without_docstrings(ast.parse((here / f"{name}.py").read_text()))
        for node in tree.body:
            if _is_probe_import(node) or isinstance(node, ast.Pass):
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                imports.setdefault(ast.unparse(node), node)
            else:
                body.append(node)
    reader = ast.unparse(_without_docstrings(ast.parse(Path(fatbin.__file__).read_text())))
    for node in body:
        if _assigns(node, {"FATBIN_SOURCE"}):
            node.value = ast.Constant(reader)  # type: ignore[attr-defined]
    script = ast.Module(body=sorted(imports.values(), key=ast.unparse) + body, type_ignores=[])
    return (ast.unparse(script) + "\n" + MAIN).encode()


MAX_CACHED = 1 << 22  # bytes of a cached payload read at most (it is about 150 kB)


def _cache_name() -> str | None:
    """The cached payload's name for these sources: their paths, sizes and times and this python's version."""
    here = Path(probe.__file__).parent
    sources = [here / f"{name}.py" for name in probe.MODULES] + [Path(fatbin.__file__), Path(__file__)]
    try:
        stamp = sys.version + "".join(f"{p}:{p.stat().st_size}:{p.stat().st_mtime_ns};" for p in sources)
    except OSError:
        return None
    return f"probe-{hashlib.sha256(stamp.encode()).hexdigest()[:20]}.py"


def _cache_dir() -> int | None:
    """The cache folder, opened once (a descriptor every later step goes through): made 0700 when missing, and
    only when what was opened is a folder of this user's that nobody else can write; else None (no cache).
    Folders above it may belong to anyone: whatever they are swapped for later, the descriptor stays this one."""
    folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "clusterdoc"
    try:
        private.mkdir(folder, True)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except (OSError, RuntimeError):
        return None
    st = os.fstat(fd)
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        os.close(fd)
        return None
    return fd


def _read_cached(dfd: int, name: str) -> bytes:
    """The cached payload through the folder's descriptor: a regular file of this user's that nobody else can
    write (no link followed, never waiting on a FIFO), read from the descriptor that was checked."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
            return b""
        chunks, left = [], MAX_CACHED
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _write_cached(dfd: int, name: str, data: bytes) -> None:
    """A fresh file (O_EXCL, 0600) renamed into place, both in the folder's descriptor."""
    tmp = f".{name}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dfd)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except OSError:
            pass
        raise


def load_source() -> bytes:
    """probe_payload(), from the user's cache when it holds this version (written there when not): the cache
    folder is opened once and the file read through that descriptor, so nothing swapped in above or beside it
    between the check and the read is ever sent to a node as the probe."""
    name, dfd = _cache_name(), _cache_dir()
    try:
        if dfd is not None and name:
            try:
                data = _read_cached(dfd, name)
                if data.endswith(MAIN.encode()):
                    return data
            except OSError:
                pass
        data = probe_payload()
        if dfd is not None and name:
            try:
                _write_cached(dfd, name, data)
            except OSError:
                pass  # made again next run
        return data
    finally:
        if dfd is not None:
            os.close(dfd)


@functools.cache
def probe_source() -> bytes:
    """probe_payload(), made once, when a probe is first sent (not at import: a check that reaches no
    node, or a --local one, does not pay for it), and kept in the user's cache between runs (load_source:
    parsing and unparsing the probe's modules was a twentieth of the head's CPU in a 64-node check)."""
    return load_source()


def __getattr__(name: str):
    if name == "PROBE_SOURCE":  # the name other modules use
        return probe_source()
    raise AttributeError(name)
