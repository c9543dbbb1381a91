"""Which mpirun is on PATH (MPICH, Open MPI or other).

Part of the probe (see clusterdoc/probe/__init__.py): stdlib only, Python 3.6+.
"""

import os
import re

from clusterdoc.probe.base import run, which


def parse_mpirun_version(text):
    if "HYDRA" in text or "MPICH" in text:
        m = re.search(r"Version:\s*(\S+)", text)
        return "mpich", m.group(1) if m else None
    if "Open MPI" in text or "OpenRTE" in text or "PRRTE" in text:
        # `mpirun (Open MPI) 4.1.4`, but called by another name (Debian's mpirun.openmpi) v4 says
        # `mpirun.openmpi (OpenRTE) 4.1.4`
        m = re.search(r"\((?:Open MPI|OpenRTE)\)\s*v?(\d[\w.]*)|Open MPI\s+v?(\d[\w.]*)", text)
        ver = (m.group(1) or m.group(2)) if m else None
        return "openmpi", ver
    return "other", None


def probe_mpirun(timeout, path=None):
    """The first mpirun on PATH, or the given one (the head's, to see that this node has it too)."""
    if path and not os.access(path, os.X_OK):
        return {"path": path, "flavour": None, "version": None, "missing": True}
    path = path or which("mpirun")
    if not path:
        return None
    code, out, err = run([path, "--version"], timeout)
    flavour, version = parse_mpirun_version(out + err)
    return {"path": path, "flavour": flavour, "version": version}
