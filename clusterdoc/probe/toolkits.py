"""CUDA toolkits, nvcc (and the gcc it accepts), libcudart, gcc and libaio.

Part of the probe (see clusterdoc/probe/__init__.py): stdlib only, Python 3.6+.
"""

import json
import os
import re

from clusterdoc.probe.base import listdir_prefix, read, run, which


def parse_nvcc_version(text):
    m = re.search(r"release (\d+\.\d+)", text or "")
    return m.group(1) if m else None


def toolkit_home_of(nvcc_path):
    """The toolkit an nvcc belongs to: resolve symlinks; for a small wrapper script (like
    /usr/local/bin/nvcc -> exec /usr/local/cuda-X/bin/nvcc) follow the path it execs."""
    real = os.path.realpath(nvcc_path)
    for _ in range(3):
        try:
            text = read(real, 4096) if os.path.getsize(real) < 4096 else None
        except OSError:
            text = None
        m = re.search(r"(/[^\s'\"]+/bin/nvcc)\b", text or "")
        if not (text and text.startswith("#!") and m and os.path.realpath(m.group(1)) != real):
            break
        real = os.path.realpath(m.group(1))
    if os.path.basename(os.path.dirname(real)) == "bin":
        return real, os.path.dirname(os.path.dirname(real))
    return real, None


def probe_nvcc(timeout):
    path = which("nvcc")
    if not path:
        return None
    real, home = toolkit_home_of(path)
    code, out, err = run([path, "--version"], timeout)
    if code != 0:
        raise RuntimeError("nvcc --version exited %d: %s" % (code, (err or out).strip()[:300]))
    facts = {"path": path, "realpath": real, "home": home, "version": parse_nvcc_version(out), "arch_list": None}
    facts["host_config"] = nvcc_host_config(path, real, home)
    facts["gcc_max"] = parse_gcc_limit(read(facts["host_config"])) if facts["host_config"] else None
    try:
        code, out, err = run([path, "--list-gpu-arch"], timeout)
        if code == 0:
            facts["arch_list"] = [a.strip() for a in out.split() if a.strip().startswith("compute_")]
    except Exception:
        pass  # nvcc older than 11.0 has no --list-gpu-arch; the version table covers it
    return facts


def parse_gcc_limit(text):
    """Newest gcc major an nvcc accepts, from its include/crt/host_config.h."""
    if not text:
        return None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s*#\s*if\s+__GNUC__\s*>\s*(\d+)", line)
        if m and any("unsupported GNU version" in near for near in lines[i : i + 6]):
            return int(m.group(1))
    return None


def nvcc_include_dirs(profile, bindir):
    """The -I directories of an nvcc.profile's INCLUDES, its $(VAR)s expanded: where this nvcc's own headers
    are (a toolkit: $(TOP)/$(_TARGET_DIR_)/include; pip's nvidia-cuda-nvcc: $(TOP)/include)."""
    values = {"_HERE_": bindir, "_SPACE_": ""}
    dirs = []
    for line in profile.splitlines():
        m = re.match(r"\s*(\w+)\s*[+=]{1,2}\s*(.*)$", line)
        if not m:
            continue
        name, value = m.group(1), m.group(2)
        if name == "INCLUDES":
            # _TARGET_DIR_ is targets/<platform>-linux, or empty: try both
            for target in listdir_prefix(os.path.join(values.get("TOP", ""), "targets"), "") + [""]:
                values["_TARGET_DIR_"] = os.path.join("targets", os.path.basename(target)) if target else ""
                text = re.sub(r"\$\((\w+)\)", lambda v: values.get(v.group(1), ""), value)
                dirs += [os.path.normpath(d) for d in re.findall(r'-I"?([^"\s]+)', text)]
        else:
            values[name] = re.sub(r"\$\((\w+)\)", lambda v: values.get(v.group(1), ""), value).strip()
    return dirs


def nvcc_host_config(path, real, home):
    """The crt/host_config.h an nvcc really includes (the one whose #error stops a too-new gcc): along the
    INCLUDES of the nvcc.profile beside it (nvcc reads the one beside the name it was called by), else
    <home>/include."""
    dirs = []
    for bindir in (os.path.dirname(path), os.path.dirname(real)):
        profile = read(os.path.join(bindir, "nvcc.profile"), 65536)
        if profile:
            dirs = nvcc_include_dirs(profile, bindir)
            break
    for d in dirs + ([os.path.join(home, "include")] if home else []):
        cand = os.path.join(d, "crt", "host_config.h")
        if os.path.isfile(cand):
            return cand
    return None


def toolkit_version(path, timeout):
    try:
        data = json.loads(read(os.path.join(path, "version.json")) or "null")
        if data:
            return data.get("cuda", {}).get("version"), "version.json"
    except ValueError:
        pass
    m = re.search(r"CUDA Version (\d+\.\d+(?:\.\d+)?)", read(os.path.join(path, "version.txt")) or "")
    if m:
        return m.group(1), "version.txt"
    nvcc = os.path.join(path, "bin", "nvcc")
    if os.access(nvcc, os.X_OK):
        try:
            code, out, _ = run([nvcc, "--version"], timeout)
            v = parse_nvcc_version(out)
            if v:
                return v, "bin/nvcc"
        except Exception:
            pass
    m = re.search(r"cuda-(\d+\.\d+)$", path)
    return (m.group(1), "directory name") if m else (None, None)


def has_libcudart(dirpath):
    return bool(listdir_prefix(dirpath, "libcudart.so"))


def probe_toolkit(path, timeout):
    version, source = toolkit_version(path, timeout)
    return {
        "path": path,
        "realpath": os.path.realpath(path),  # /usr/local/cuda-13 and /usr/local/cuda are often links
        "version": version,
        "version_source": source,
        "nvcc": os.access(os.path.join(path, "bin", "nvcc"), os.X_OK),
        "libcudart": has_libcudart(os.path.join(path, "lib64")),
        "gcc_max": parse_gcc_limit(read(os.path.join(path, "include", "crt", "host_config.h"))),
    }


def toolkit_dirs():
    return [p for p in listdir_prefix("/usr/local", "cuda-") if os.path.isdir(p)]


def probe_libcudart_first(toolkits):
    for d in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
        if d and has_libcudart(d):
            found = listdir_prefix(d, "libcudart.so")[0]
            real = os.path.realpath(d)
            owner = None
            for tk in toolkits:
                tkreal = os.path.realpath(tk)
                if real == tkreal or real.startswith(tkreal + os.sep):
                    owner = tk
            return {"path": found, "dir": d, "toolkit": owner}
    return None


def probe_gcc(timeout):
    path = which("gcc")
    if not path:
        return None
    code, out, err = run([path, "-dumpfullversion", "-dumpversion"], timeout)
    if code != 0:
        raise RuntimeError("gcc -dumpfullversion exited %d: %s" % (code, (err or out).strip()[:300]))
    return {"path": path, "version": out.strip()}


LIB_DIRS = [
    "/lib",
    "/lib64",
    "/usr/lib",
    "/usr/lib64",
    "/usr/local/lib",
    "/usr/lib/x86_64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/powerpc64le-linux-gnu",
]


def probe_libaio(timeout):
    lib = any(listdir_prefix(d, "libaio.so") for d in LIB_DIRS)
    header = os.path.exists("/usr/include/libaio.h")
    return lib, header
