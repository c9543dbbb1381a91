"""The node itself: kernel, resources (/dev/shm, memlock, open files, disk), files, clock.

Part of the probe (see clusterdoc/probe/__init__.py): stdlib only, Python 3.6+.
"""

import os
import re
import time

from clusterdoc.probe.base import read, run

# --- individual probes: each returns its facts, raising on failure -------------------------


def probe_kernel(timeout):
    rel = read("/proc/sys/kernel/osrelease")
    source = "/proc/sys/kernel/osrelease"
    if not rel:
        rel, source = os.uname()[2], "uname"
    rel = rel.strip()
    container = (
        os.path.exists("/.dockerenv")
        or os.path.exists("/run/.containerenv")
        or bool(re.search(r"docker|kubepods|containerd|lxc", read("/proc/1/cgroup") or ""))
    )
    # gVisor reports a fixed 4.4.0 kernel and has no real /proc/version build string.
    gvisor = rel.startswith("4.4.0") and "gVisor" in (read("/proc/version") or "gVisor")
    return {"release": rel, "source": source, "container": container, "gvisor": gvisor}


def probe_resources(space_paths):
    import resource

    out = {"shm": None, "memlock_kib": None, "nofile": None, "nofile_hard": None, "space": {}}

    def vfs(path):
        st = os.statvfs(path)
        return {"total_mib": st.f_blocks * st.f_frsize >> 20, "free_mib": st.f_bavail * st.f_frsize >> 20}

    if os.path.isdir("/dev/shm"):
        out["shm"] = vfs("/dev/shm")
    soft = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]
    out["memlock_kib"] = -1 if soft == resource.RLIM_INFINITY else soft >> 10
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    out["nofile"] = -1 if soft == resource.RLIM_INFINITY else soft
    out["nofile_hard"] = -1 if hard == resource.RLIM_INFINITY else hard
    for p in [os.environ.get("TMPDIR") or "/tmp"] + list(space_paths):
        try:
            out["space"][p] = vfs(p)
        except OSError as exc:
            out["space"][p] = {"total_mib": None, "free_mib": None, "error": str(exc)[:200]}
    return out


def probe_files(paths, limit=1 << 30):
    """{path: {sha256, size, realpath} | {error}}: is the job's python and script the same on every node."""
    import hashlib

    out = {}
    for p in paths:
        try:
            real = os.path.realpath(p)
            size = os.path.getsize(real)
            if size > limit:
                out[p] = {"error": "larger than %d MiB: not hashed" % (limit >> 20), "size": size, "realpath": real}
                continue
            h = hashlib.sha256()
            with open(real, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            out[p] = {"sha256": h.hexdigest(), "size": size, "realpath": real}
        except (OSError, IOError) as exc:
            out[p] = {"error": "%s: %s" % (type(exc).__name__, exc.strerror or exc)}
    return out


def probe_date(timeout):
    """The clock as the node's `date` shows it (epoch seconds), and this process's clock at that moment."""
    end = time.time() + timeout
    best = None  # (window, date, at): `at` is uncertain by half the window, so a slow start is tried again
    for _ in range(3):
        if best is not None and (best[0] <= 0.25 or time.time() > end - 0.5):
            break
        before = time.time()
        code, out, err = run(["date", "+%s.%N"], max(0.5, end - before))
        after = time.time()
        if code != 0:
            raise RuntimeError("date exited %d: %s" % (code, (err or out).strip()[:200]))
        if best is None or after - before < best[0]:
            best = (after - before, float(out.strip()), (before + after) / 2)
    return best[1], best[2]
