#!/usr/bin/env python3
"""Gather one node's facts and print them as one JSON object.

This file is sent as-is over SSH to `python3 -` on every node, so it must stay stdlib-only and
parse on old pythons (3.6+: no walrus, no `from __future__ import annotations`, no
`capture_output`). Every command it runs has a short timeout; a command that fails or hangs
becomes an entry in `errors` and every other fact still comes out. Commands run in parallel
threads, so the whole probe costs about as long as its slowest command.

Facts schema (version 1) -- the contract the checks and the wheel builder read:
  schema 1, probe "python" | "shell", elapsed (s)
  hostname
  kernel {release, source, container (bool), gvisor (bool)}
  python {version, executable} | null
  torch {version, cuda, arch_list, nccl, cuda_available, path} | null     (null: not installed)
  nvcc {path, realpath, home, version, arch_list, host_config (the crt/host_config.h it includes, found
        along its nvcc.profile's INCLUDES), gcc_max (int: its `#if __GNUC__ > N` guard)} | null (first on PATH)
  cuda_home: $CUDA_HOME or null
  toolkits [{path, version, version_source, nvcc (bool), libcudart (bool), gcc_max (int|null)}]
  libcudart_first {path, dir, toolkit} | null       (first libcudart.so* along LD_LIBRARY_PATH)
  gcc {path, version} | null
  gpus [{index, name, capability "8.0", memory_mib, driver}]
  driver: version string | null
  gpu_health {smi {driver, cuda, attached, gpus [{bus, uuid, name, persistence, mig, compute_mode,
              pcie {gen, gen_max, width, width_max}, throttle [reason], ecc {volatile_uncorrectable,
              aggregate_uncorrectable}, retired {single_bit, double_bit, pending}, remap {correctable,
              uncorrectable, pending, failure}}]} | null, lost [{bus, message}],
              xid {source, events [{bus, xid, text}], total, new, since} | null, fabricmanager (systemd state
              | null: not an NVSwitch system), acs [{bridge, gpus}] | null (config space not readable),
              iommu {bus: type}, peermem (bool), ib [{device, port, rate_gbps, link_downed, symbol_error,
              link_error_recovery}], ib_changed ["dev/port counter"], nccl_env {K: V}, hypervisor (bool),
              nvlink {gpu index: {active, inactive [link]}} | null, nvlink_errors {gpu index: {"link counter": n}}
              (non-zero ones), nvlink_rising ["GPUi link counter"], p2p {gpus, bad [{a, b, code}]} | null,
              dmabuf {kernel (release), open_module (bool | null)}}
             | null (no nvidia-smi and no InfiniBand)
  env {PATH, LD_LIBRARY_PATH, CUDA_HOME, TORCH_CUDA_ARCH_LIST}
  deepspeed {version, torch_version, cuda_version, ops_installed {op: bool}, ops_compatible {op: bool},
             path, wheel_manifest (dict|null), binaries [{file (under path), op, sass ["sm_80"], ptx ["compute_90"]}
             | {file, op, error}] (read from each ops/**/*.so's .nv_fatbin) | null, binaries_left (not read)} | null
  mpi {mpirun {path, flavour "mpich"|"openmpi"|"other", version} | null, mpi4py {version, library} | null,
       head_mpirun {path, flavour, version, missing?} | null (the head's mpirun path, on this node)}
  libaio (bool: libaio.so found), libaio_header (bool)
  mesh {peer: {ok (bool, null: not tested in time), message}} | null      (only when asked with --mesh)
  ssh_trust {user, identities [fp], authorized [fp], host_keys [fp], known {peer: [fp] | null}} | null
            (only with --trust and --peers; fp: "SHA256:..." as ssh-keygen -l; known null: a Match block)
  errors [{probe, message}]

  net {hostname, own [addr] | null, own_error, resolve {peer: [addr]}, resolve_errors {peer: message},
       ifaces [{name, up, running, loopback, mtu, addrs ["addr/len"]}], route {to, addr, source, iface} | null,
       ifname_env {NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME}, ib [{device, port, state, link_layer}]}
  port {listen [{port, mode, status listening|in_use|error, message, expected, accepted, closed}],
        connect [{target, ok, error, message, attempts, elapsed, at}]} | null   (only with --listen/--connect;
        closed: when the listener stopped, at: the last attempt's start, both time.time() of the node)
  resources {shm {total_mib, free_mib} | null, memlock_kib (-1: unlimited), nofile, nofile_hard,
             space {path: {total_mib, free_mib}}}
  clock {start, end (time.time() at the probe's start and end), date (what `date` shows), date_at}
  files {path: {sha256, size, realpath} | {error}} | null               (only with --file)

Usage: python3 probe.py [--timeout SEC] [--budget SEC] [--head-mpirun PATH] [--peers A,B] [--trust] [--env K=V]
                        [--listen PORT/store|peer/N] [--connect HOST:PORT,...] [--space DIR] [--file PATH]
                        [--mesh PEER ...]
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

SCHEMA = 1
DEFAULT_TIMEOUT = 8.0

NVIDIA_SMI_QUERY = "index,name,compute_cap,memory.total,driver_version"
# Used only when the driver is too old to know compute_cap (added around driver 510).
CAPABILITY_BY_NAME = [
    ("H200", "9.0"),
    ("H100", "9.0"),
    ("GH200", "9.0"),
    ("B200", "10.0"),
    ("GB200", "10.0"),
    ("L40", "8.9"),
    ("L4", "8.9"),
    ("4090", "8.9"),
    ("A100", "8.0"),
    ("A30", "8.0"),
    ("A10", "8.6"),
    ("A40", "8.6"),
    ("3090", "8.6"),
    ("A6000", "8.6"),
    ("T4", "7.5"),
    ("V100", "7.0"),
    ("P100", "6.0"),
]


def run(argv, timeout, env=None, stdout=subprocess.PIPE):
    """Run argv; return (exit_code, stdout, stderr). Raises OSError (not found) or
    subprocess.TimeoutExpired after killing the whole process group (a hung child that
    forked must not keep our pipes open). stdout=subprocess.DEVNULL: not kept (stdout is "")."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE, env=env, start_new_session=True
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            proc.communicate(timeout=2)
        except Exception:
            pass
        raise
    return proc.returncode, (out or b"").decode("utf-8", "replace"), err.decode("utf-8", "replace")


def listdir_prefix(dirpath, prefix):
    """Paths in dirpath whose name starts with prefix, sorted (glob without importing glob: the probe
    runs on every node at every check, so its start-up time counts)."""
    try:
        names = os.listdir(dirpath)
    except OSError:
        return []
    return sorted(os.path.join(dirpath, n) for n in names if n.startswith(prefix))


def which(name, path=None):
    for d in (path if path is not None else os.environ.get("PATH", "")).split(os.pathsep):
        if not d:
            continue
        cand = os.path.join(d, name)
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def read(path, limit=1 << 20):
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except (OSError, IOError):
        return None


def _ver_tuple(text):
    return tuple(int(x) for x in re.findall(r"\d+", text or "")[:3])


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


def parse_nvidia_smi(text, has_cap=True):
    gpus = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < (5 if has_cap else 4) or not parts[0].isdigit():
            continue
        if has_cap:
            idx, name, cap, mem, drv = parts[:5]
        else:
            idx, name, mem, drv = parts[:4]
            cap = next((c for key, c in CAPABILITY_BY_NAME if key in name), None)
        try:
            mem = int(float(mem))
        except ValueError:
            mem = None
        gpus.append(
            {
                "index": int(idx),
                "name": name,
                "capability": cap if cap and cap != "[N/A]" else None,
                "memory_mib": mem,
                "driver": drv,
            }
        )
    return gpus


def probe_gpus(timeout):
    smi = which("nvidia-smi")
    if not smi:
        return []  # no driver tools: a CPU node, not an error
    code, out, err = run([smi, "--query-gpu=" + NVIDIA_SMI_QUERY, "--format=csv,noheader,nounits"], timeout)
    if code != 0 and "compute_cap" in (out + err):
        code, out, err = run(
            [smi, "--query-gpu=index,name,memory.total,driver_version", "--format=csv,noheader,nounits"], timeout
        )
        if code == 0:
            return parse_nvidia_smi(out, has_cap=False)
    gpus = parse_nvidia_smi(out)
    if code != 0 and not (gpus and any(LOST_LINE.match(x.strip()) for x in (out + err).splitlines())):
        raise RuntimeError("nvidia-smi exited %d: %s" % (code, (err or out).strip()[:300]))
    return gpus  # with a GPU off the bus: the others (gpu_health.lost names the lost one)


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


# clusterdoc/wheel/fatbin.py's text, put here by the head in what it sends (doctor/payload.py); None when probe.py
# runs from a checkout, which has the file beside it.
FATBIN_SOURCE = None
MAX_DS_BINARIES = 64  # compiled op extensions read on one node (DeepSpeed has about 25 ops)


def fatbin_reader():
    """fatbin.fatbin_archs (path -> {sass, ptx} | {error}, reading only the fatbin headers), or None."""
    source = FATBIN_SOURCE
    here = globals().get("__file__")
    if source is None and here:
        source = read(os.path.join(os.path.dirname(os.path.abspath(here)), "wheel", "fatbin.py"))
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


MPI4PY_SNIPPET = r"""
import json
import mpi4py
mpi4py.rc.threads = False
from mpi4py import MPI
# a C string: Open MPI's ends in its NUL byte, which str.strip() keeps
library = MPI.Get_library_version().split("\0")[0].strip()
print(json.dumps({"version": mpi4py.__version__, "library": (library.splitlines() or [""])[0]}))
"""


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


# Key exchanges offered first by the mesh's logins: the default's sntrup761x25519 key generation costs ~0.13 s
# of client CPU per login in OpenSSH 8.5-9.8's portable code (curve25519: ~1 ms); three logins per node make it
# most of a node's check. These logins carry no data (`true`), so post-quantum key exchange buys nothing here.
# Every name exists since OpenSSH 7.3; a client that rejects the option, or a server that accepts none of
# these, gets the login retried with the node's own defaults, so the answer is the one MPI's ssh would get.
MESH_KEX = (
    "curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,"
    "diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,"
    "diffie-hellman-group14-sha256"
)
KEX_REFUSED = ("KexAlgorithms", "no matching key exchange", "Unable to negotiate")


def mesh_argv(ssh, peer, limit, fast_kex=True):
    argv = [ssh, "-o", "BatchMode=yes", "-o", "ConnectTimeout=%d" % max(1, int(limit))]
    argv += ["-o", "NumberOfPasswordPrompts=0"]
    if fast_kex:
        argv += ["-o", "KexAlgorithms=" + MESH_KEX]
    return argv + [peer, "true"]


def probe_mesh(peers, timeout, deadline=None):
    """From this node, `ssh -o BatchMode=yes PEER true` to each peer, 16 at a time, all before
    `deadline` (time.time() value): peers not reached by then are reported untested (ok: None)."""
    ssh = which("ssh")
    result = {}
    if not ssh:
        return {p: {"ok": False, "message": "no ssh client on this node"} for p in peers}
    deadline = deadline or time.time() + 4 * (timeout + 1)
    lock = threading.Lock()

    def login(peer, fast_kex):
        left = deadline - time.time()
        if left < 0.5:
            return {"ok": None, "message": "not tested: the probe's time limit was reached"}
        limit = min(timeout + 1, left)
        try:
            # the peer's login may print without end: only stderr is kept
            code, out, err = run(mesh_argv(ssh, peer, limit, fast_kex), limit, stdout=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return {"ok": False, "message": "timed out after %gs" % round(limit, 1)}
        except OSError as exc:
            return {"ok": False, "message": str(exc)}
        if code == 255 and fast_kex and any(s in err for s in KEX_REFUSED):
            return login(peer, False)
        msg = "ok" if code == 0 else (err.strip().splitlines() or ["exit %d" % code])[-1][:200]
        return {"ok": code == 0, "message": msg}

    def one(peer):
        entry = login(peer, True)
        with lock:
            result[peer] = entry

    _parallel([(lambda p=p: one(p)) for p in peers], width=16)
    return result


# --- ssh trust: what decides whether ssh from here to a peer (and from a peer to here) works ----------

MAX_KEY_FILE = 4 << 20  # bytes read of one known_hosts / authorized_keys file
KEY_TYPE = re.compile(r"(ssh|ecdsa|sk)-[A-Za-z0-9@.-]+$")  # ssh-ed25519, ecdsa-sha2-nistp256, sk-...@openssh.com


def _key_fingerprint(b64):
    """SHA256:... of a base64 key blob, as `ssh-keygen -l` prints it."""
    import base64
    import hashlib

    try:
        blob = base64.b64decode(b64.encode(), validate=True)
    except Exception:
        return None
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def _read_lines(path):
    try:
        with open(path, "rb") as f:
            return f.read(MAX_KEY_FILE).decode("utf-8", "replace").splitlines()
    except (OSError, IOError):
        return []


def _keys_in(path):
    """Fingerprints of the keys in an authorized_keys / .pub file (options before the key type are skipped)."""
    out = []
    for line in _read_lines(path):
        fields = line.split()
        for i, f in enumerate(fields[:-1]):
            if KEY_TYPE.match(f):
                fp = _key_fingerprint(fields[i + 1])
                if fp:
                    out.append(fp)
                break
    return out


def _tokens(path, home, user, host=""):
    path = path.replace("%d", home).replace("%u", user).replace("%h", host or home).replace("%%", "%")
    return os.path.expanduser(path)


def _config_lines(path, depth=0):
    """(keyword, args) of an ssh/sshd config file, Include expanded (ssh's own rules, minus Match)."""
    import glob

    out = []
    for line in _read_lines(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = re.split(r"[\s=]+", line, maxsplit=1)
        key, arg = parts[0].lower(), (parts[1] if len(parts) > 1 else "").strip()
        if key == "include" and depth < 8:
            for pattern in arg.split():
                if not os.path.isabs(os.path.expanduser(pattern)):
                    pattern = os.path.join(os.path.dirname(path), pattern)
                for inc in sorted(glob.glob(os.path.expanduser(pattern))):
                    out.extend(_config_lines(inc, depth + 1))
        else:
            out.append((key, arg))
    return out


_GLOB_RX = {}  # type: dict


def _glob(pattern, name):
    """ssh's patterns: only * and ? are wildcards ('[host]:port' is literal); case-insensitive."""
    if "*" not in pattern and "?" not in pattern:  # most patterns name one host: no regex (N peers x N lines)
        return pattern.lower() == name.lower()
    rx = _GLOB_RX.get(pattern)
    if rx is None:
        rx = _GLOB_RX[pattern] = re.compile(re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".") + "\\Z", re.I)
    return rx.match(name) is not None


def _host_matches(patterns, name):
    hit = False
    for p in patterns.split():
        neg = p.startswith("!")
        if _glob(p[1:] if neg else p, name):
            if neg:
                return False
            hit = True
    return hit


class ClientConfig(object):
    """An ssh client config's lines in blocks, indexed: a cluster's config often has a Host block per node,
    and every node asks about every peer, so blocks that name plain hosts are found by name."""

    def __init__(self, lines):
        self.has_match = any(key == "match" for key, _ in lines)
        self.blocks = [(None, [])]  # (Host patterns, lines); the first: before any Host line, always active
        for key, arg in lines:
            if key == "host":
                self.blocks.append((arg, []))
            else:
                self.blocks[-1][1].append((key, arg))
        self.by_name, self.other = {}, []
        for i, (patterns, _) in enumerate(self.blocks):
            if patterns is None:
                continue
            if any(c in patterns for c in "*?!"):
                self.other.append(i)
            else:
                for name in patterns.split():
                    self.by_name.setdefault(name.lower(), []).append(i)

    def lines_for(self, peer):
        """The lines that apply to `peer`, in file order (None: a Match block, then only `ssh -G` can tell)."""
        if self.has_match:
            return None
        hit = set(self.by_name.get(peer.lower(), ()))
        hit.update(i for i in self.other if _host_matches(self.blocks[i][0], peer))
        out = list(self.blocks[0][1])
        for i in sorted(hit):
            out.extend(self.blocks[i][1])
        return out


def ssh_client_settings(peer, lines, home, user):
    """The settings ssh would use for `peer` (lines: _config_lines' list or a ClientConfig): the first value
    of each keyword wins, identity files add up. None when the config has a Match block."""
    config = lines if isinstance(lines, ClientConfig) else ClientConfig(lines)
    mine = config.lines_for(peer)
    if mine is None:
        return None
    got = {"identityfile": []}
    for key, arg in mine:
        if key == "identityfile":
            got["identityfile"].append(arg)
        elif key not in got:
            got[key] = arg
    host = got.get("hostname", peer).replace("%h", peer)
    ids = got["identityfile"] or ["~/.ssh/id_rsa", "~/.ssh/id_ecdsa", "~/.ssh/id_ed25519"]
    return {
        "hostname": host,
        "port": int(got.get("port", "22")) if got.get("port", "22").isdigit() else 22,
        "identities": [_tokens(i.strip('"'), home, user, host) for i in ids],
        "known_files": [
            _tokens(f.strip('"'), home, user, host)
            for f in (got.get("userknownhostsfile") or "~/.ssh/known_hosts ~/.ssh/known_hosts2").split()
        ]
        + [
            f for f in (got.get("globalknownhostsfile") or "/etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2").split()
        ],
    }


def _known_entries(path):
    """[(host patterns, fingerprint)] of a known_hosts file; @revoked lines are left out (never a match)."""
    out = []
    for line in _read_lines(path):
        fields = line.split()
        if len(fields) < 3 or line.lstrip().startswith("#"):
            continue
        if fields[0].startswith("@"):
            if fields[0] != "@cert-authority" or len(fields) < 4:
                continue
            fields = fields[1:]
        fp = _key_fingerprint(fields[2])
        if fp:
            out.append((fields[0], fp))
    return out


def _known_match(patterns, names):
    import base64
    import hashlib
    import hmac

    if patterns.startswith("|1|"):
        try:
            salt, want = [base64.b64decode(x) for x in patterns[3:].split("|")]
        except Exception:
            return False
        return any(hmac.new(salt, n.encode(), hashlib.sha1).digest() == want for n in names)
    return any(_host_matches(patterns.replace(",", " "), n) for n in names)


class _KnownIndex(object):
    """One known_hosts file's entries: those naming plain hosts by name (most of a cluster's file), the
    rest (hashed, wildcards, negations) in file order, matched one by one."""

    def __init__(self, entries):
        self.by_name, self.other = {}, []
        for pats, fp in entries:
            names = pats.split(",")
            if pats.startswith("|") or any(c in pats for c in "*?!"):
                self.other.append((pats, fp))
            else:
                for n in names:
                    self.by_name.setdefault(n.lower(), set()).add(fp)

    def fingerprints(self, names):
        out = set()
        for n in names:
            out.update(self.by_name.get(n.lower(), ()))
        out.update(fp for pats, fp in self.other if _known_match(pats, names))
        return out


def probe_ssh_trust(peers, timeout):
    """For every peer: which host keys this node's ssh would accept for it; and this node's own side: the
    keys its ssh offers, the keys its sshd accepts for this user, its host keys. The head compares these
    across nodes to judge every pair without N x N logins (checks/ssh.py)."""
    import getpass

    home = os.path.expanduser("~")
    try:
        user = getpass.getuser()
    except Exception:
        user = str(os.getuid())
    lines = ClientConfig(_config_lines(os.path.join(home, ".ssh", "config")) + _config_lines("/etc/ssh/ssh_config"))
    known, identities, files_cache, idents_seen = {}, set(), {}, set()
    for peer in peers:
        cfg = ssh_client_settings(peer, lines, home, user)
        if cfg is None:
            known[peer] = None  # a Match block: not judged from facts
            continue
        for ident in cfg["identities"]:
            if ident not in idents_seen:
                idents_seen.add(ident)
                identities.update(_keys_in(ident + ".pub"))
        names = [cfg["hostname"], peer]
        try:  # as gethostbyname: the first IPv4 address
            names += [a for a in resolve(cfg["hostname"]) if ":" not in a][:1]
        except (OSError, UnicodeError):
            pass
        if cfg["port"] != 22:
            names = ["[%s]:%d" % (n, cfg["port"]) for n in names]
        fps = set()
        for path in cfg["known_files"]:
            if path not in files_cache:
                files_cache[path] = _KnownIndex(_known_entries(path))
            fps.update(files_cache[path].fingerprints(names))
        known[peer] = sorted(fps)
    sshd = _config_lines("/etc/ssh/sshd_config")
    first = {}
    for key, arg in sshd:
        if key == "match":
            break
        if key == "hostkey":
            first.setdefault("hostkey", []).append(arg)
        else:
            first.setdefault(key, arg)
    auth_files = (first.get("authorizedkeysfile") or ".ssh/authorized_keys .ssh/authorized_keys2").split()
    authorized = []
    for f in auth_files:
        path = _tokens(f, home, user, home)
        authorized += _keys_in(path if os.path.isabs(path) else os.path.join(home, path))
    host_keys = []
    for f in first.get("hostkey") or [
        "/etc/ssh/ssh_host_rsa_key",
        "/etc/ssh/ssh_host_ecdsa_key",
        "/etc/ssh/ssh_host_ed25519_key",
    ]:
        host_keys += _keys_in(f + ".pub")
    return {
        "user": user,
        "identities": sorted(identities),
        "authorized": sorted(set(authorized)),
        "host_keys": sorted(set(host_keys)),
        "known": known,
    }


def _parallel(funcs, width=16):
    """Run callables in threads, at most `width` at once; wait for all."""
    sem = threading.Semaphore(width)

    def wrap(f):
        try:
            f()
        finally:
            sem.release()

    threads = []
    for f in funcs:
        sem.acquire()
        t = threading.Thread(target=wrap, args=(f,))
        t.daemon = True
        t.start()
        threads.append(t)
    for t in threads:
        t.join()


# --- network, ports, resources, clock, files (the net/port/resources/clock/files checks) ---------------

IFNAME_VARS = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME")
SIOCGIFFLAGS, SIOCGIFADDR, SIOCGIFNETMASK, SIOCGIFMTU = 0x8913, 0x8915, 0x891B, 0x8921


def _bounded(funcs, limit, width=8):
    """Run callables in `width` daemon worker threads; wait at most `limit` seconds in all (a resolver that
    hangs on DNS must not hold the probe). Returns the number not finished by then. (A thread per callable
    cost a node more than its lookups when it resolves every peer of a large cluster.)"""
    import collections

    todo = collections.deque(funcs)
    total, done = len(todo), [0]
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                f = todo.popleft()
            try:
                f()
            finally:
                with lock:
                    done[0] += 1

    threads = []
    for _ in range(min(width, total)):
        t = threading.Thread(target=worker)
        t.daemon = True
        t.start()
        threads.append(t)
    end = time.time() + limit
    for t in threads:
        t.join(max(0.0, end - time.time()))
    with lock:
        return total - done[0]


_RESOLVED = {}  # type: dict


def resolve(name):
    """The addresses `name` resolves to here, in getaddrinfo's order (the first is what a rank connects to).
    Remembered for the probe's life: net and the ssh trust facts ask for the same peers."""
    import socket

    if name in _RESOLVED:
        return list(_RESOLVED[name])
    addrs = []
    for info in socket.getaddrinfo(name, None, 0, socket.SOCK_STREAM):
        if info[4][0] not in addrs:
            addrs.append(info[4][0])
    _RESOLVED[name] = addrs[:8]
    return addrs[:8]


def _prefix(mask):
    return sum(bin(int(x)).count("1") for x in mask.split("."))


def probe_interfaces():
    """[{name, up, running, loopback, mtu, addrs ["a.b.c.d/len", "v6/len"]}] from ioctls (no `ip` needed)."""
    import fcntl
    import socket
    import struct

    out = []
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for _, name in sorted(socket.if_nameindex())[:256]:
            req = struct.pack("256s", name.encode()[:15])
            flags = struct.unpack("H", fcntl.ioctl(s, SIOCGIFFLAGS, req)[16:18])[0]
            mtu = struct.unpack("i", fcntl.ioctl(s, SIOCGIFMTU, req)[16:20])[0]
            addrs = []
            try:
                addr = socket.inet_ntoa(fcntl.ioctl(s, SIOCGIFADDR, req)[20:24])
                mask = socket.inet_ntoa(fcntl.ioctl(s, SIOCGIFNETMASK, req)[20:24])
                addrs.append("%s/%d" % (addr, _prefix(mask)))
            except OSError:
                pass  # no IPv4 address
            out.append(
                {
                    "name": name,
                    "up": bool(flags & 0x1),
                    "running": bool(flags & 0x40),
                    "loopback": bool(flags & 0x8),
                    "mtu": mtu,
                    "addrs": addrs,
                }
            )
    finally:
        s.close()
    by_name = dict((i["name"], i) for i in out)
    for line in (read("/proc/net/if_inet6") or "").splitlines():
        f = line.split()
        if len(f) == 6 and f[5] in by_name and f[3] == "00":  # global scope only
            a = ":".join(f[0][i : i + 4] for i in range(0, 32, 4))
            by_name[f[5]]["addrs"].append(
                "%s/%d" % (socket.inet_ntop(socket.AF_INET6, socket.inet_pton(socket.AF_INET6, a)), int(f[2], 16))
            )
    return out


def route_source(addr):
    """The local address the kernel picks to reach `addr` (a UDP connect sends nothing)."""
    import socket

    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect((addr, 9))
        return s.getsockname()[0]
    finally:
        s.close()


def probe_ib():
    """Every InfiniBand/RoCE port: [{device, port, state "ACTIVE"..., link_layer}]."""
    out = []
    base = "/sys/class/infiniband"
    for dev in sorted(os.listdir(base) if os.path.isdir(base) else [])[:64]:
        for port in sorted(listdir_prefix(os.path.join(base, dev, "ports"), ""))[:16]:
            state = (read(os.path.join(port, "state")) or "").strip()
            out.append(
                {
                    "device": dev,
                    "port": os.path.basename(port),
                    "state": state.split(":")[-1].strip() or None,
                    "link_layer": (read(os.path.join(port, "link_layer")) or "").strip() or None,
                }
            )
    return out


def probe_net(peers, env_over, limit):
    """Own name and peer names as this node resolves them, interfaces, the route to the first peer,
    NCCL/GLOO_SOCKET_IFNAME as a rank here would see them, InfiniBand ports."""
    import socket

    name = socket.gethostname()
    net = {
        "hostname": name,
        "own": None,
        "own_error": None,
        "resolve": {},
        "resolve_errors": {},
        "ifaces": [],
        "route": None,
        "ifname_env": {},
        "ib": [],
    }
    for k in IFNAME_VARS:
        net["ifname_env"][k] = env_over[k] if k in env_over else os.environ.get(k)
    lock = threading.Lock()
    names = [name] + [p for p in peers if p != name]

    def one(n):
        def go():
            try:
                addrs, err = resolve(n), None
            except Exception as exc:
                addrs, err = None, str(exc)[:200]
            with lock:
                if n == name:
                    net["own"], net["own_error"] = addrs, err
                if n in peers:
                    if addrs:
                        net["resolve"][n] = addrs
                    else:
                        net["resolve_errors"][n] = err or "no address"

        return go

    left = _bounded([one(n) for n in names], limit)
    with lock:
        for n in names:
            if n in peers and n not in net["resolve"] and n not in net["resolve_errors"]:
                net["resolve_errors"][n] = "did not resolve within %gs" % limit
        if left and net["own"] is None and net["own_error"] is None:
            net["own_error"] = "did not resolve within %gs" % limit
    net["ifaces"] = probe_interfaces()
    first = peers[0] if peers else name
    target = (net["resolve"].get(first) or (net["own"] if first == name else None) or [None])[0]
    if target:
        try:
            src = route_source(target)
            iface = [i["name"] for i in net["ifaces"] if any(a.split("/")[0] == src for a in i["addrs"])]
            net["route"] = {"to": first, "addr": target, "source": src, "iface": (iface or [None])[0]}
        except OSError as exc:
            net["route"] = {"to": first, "addr": target, "source": None, "iface": None, "error": str(exc)[:200]}
    net["ib"] = probe_ib()
    return net


class Listener(object):
    """A TCP listener held for the probe's life: "store" binds every address as torch's TCPStore does
    (so a leftover rank on the port shows as in_use); "peer" binds the node's own address and every
    address with SO_REUSEPORT (nodes sharing one network stack each get their own connections).
    It accepts until `expect` connections came or the probe stops it."""

    def __init__(self, port, mode, expect, own_addr=None):
        import socket

        self.port, self.mode, self.expect, self.accepted, self.closed = port, mode, expect, 0, None
        self.status, self.message, self.socks = "listening", None, []
        self.done = threading.Event()
        binds = [("::", socket.AF_INET6), ("0.0.0.0", socket.AF_INET)]
        if mode == "peer" and own_addr:
            binds.insert(0, (own_addr, socket.AF_INET6 if ":" in own_addr else socket.AF_INET))
        for addr, fam in binds:
            if fam == socket.AF_INET and addr == "0.0.0.0" and any(s.family == socket.AF_INET6 for s in self.socks):
                continue  # the dual-stack socket has IPv4 too
            try:
                s = socket.socket(fam, socket.SOCK_STREAM)
            except OSError:
                continue
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if mode == "peer" and hasattr(socket, "SO_REUSEPORT"):
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
                if fam == socket.AF_INET6 and addr == "::":
                    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
                s.bind((addr, port))
                s.listen(128)
                s.settimeout(0.1)
                self.socks.append(s)
            except OSError as exc:
                s.close()
                if exc.errno == 98 and (mode == "store" or not self.socks):  # EADDRINUSE
                    self.status, self.message = "in_use", str(exc)[:200]
                    break
                if exc.errno not in (97, 99):  # IPv6 off / address not here: try the next
                    self.message = str(exc)[:200]
        if self.status == "in_use":
            for s in self.socks:
                s.close()
            self.socks = []
        elif not self.socks:
            self.status = "error"

    def start(self):
        if self.socks:
            t = threading.Thread(target=self._serve)
            t.daemon = True
            t.start()

    def _serve(self):
        import socket

        while not self.done.is_set() and self.accepted < self.expect:
            for s in self.socks:
                try:
                    conn, _ = s.accept()
                    conn.close()
                    self.accepted += 1
                except (socket.timeout, OSError):
                    pass
        for s in self.socks:
            s.close()
        self.closed = time.time()
        self.done.set()

    def wait(self, deadline):
        self.done.wait(max(0.0, deadline - time.time()))
        self.done.set()
        closed = self.closed or time.time()  # the server thread closes within 0.1 s
        return {
            "port": self.port,
            "mode": self.mode,
            "status": self.status,
            "message": self.message,
            "expected": self.expect,
            "accepted": self.accepted,
            "closed": round(closed, 3),
        }


def connect_one(target, window, per_try=1.5):
    """TCP connect to HOST:PORT, retrying until `window` seconds have passed (the listener may start a
    little later): {target, ok, error None|refused|timeout|unreachable|unresolved, message, attempts, elapsed}."""
    import errno
    import socket

    host, _, port = target.rpartition(":")
    start = time.time()
    res = {"target": target, "ok": False, "error": None, "message": None, "attempts": 0, "elapsed": 0.0, "at": None}
    try:
        addr = resolve(host.strip("[]"))[0]
    except Exception as exc:
        res.update(error="unresolved", message=str(exc)[:200])
        return res
    while True:
        res["attempts"] += 1
        res["at"] = round(time.time(), 3)  # the last attempt's start: the head compares it with the listener's
        left = start + window - time.time()
        s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(max(0.2, min(per_try, left)))
        try:
            s.connect((addr, int(port)))
            res.update(ok=True, error=None, message="connected to %s" % addr)
            break
        except socket.timeout:
            res.update(error="timeout", message="no answer from %s:%s (timed out)" % (addr, port))
        except OSError as exc:
            kind = "refused" if exc.errno == errno.ECONNREFUSED else "unreachable"
            res.update(error=kind, message="%s:%s: %s" % (addr, port, os.strerror(exc.errno or 0) or exc))
            time.sleep(0.1)
        finally:
            s.close()
        if time.time() - start >= window:
            break
    res["elapsed"] = round(time.time() - start, 3)
    return res


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


# --- GPU and fabric health (checks/gpuhealth.py and checks/fabric.py judge these) --------------------------

MAX_SMI_XML = 8 << 20  # bytes of `nvidia-smi -q -x` parsed (8 GPUs take ~100 KiB)
MAX_KMSG = 8 << 20  # bytes of kernel log read
MAX_XIDS = 64  # XID events kept (the newest)
XID_LINE = re.compile(r"NVRM: Xid \(PCI:([0-9A-Fa-f:.]+)\): (\d+),?\s*(.*)")
# nvidia-smi's words for a GPU the driver knows but cannot reach (NVML_ERROR_GPU_IS_LOST, exit code 15)
PCI_ID = r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]"
LOST_LINE = re.compile(
    r"(Unable to determine the device handle for (?:GPU\s*)?(" + PCI_ID + r").*|.*GPU is lost.*|.*fallen off the bus.*)"
)
SYSTEMD_STATES = ("active", "inactive", "failed", "activating", "deactivating", "reloading", "unknown")
NCCL_VARS = ("NCCL_IB_HCA", "NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "NCCL_SHM_DISABLE", "NCCL_NET_GDR_LEVEL")
# NVSwitch systems (HGX/DGX 8-GPU SXM boards) need nvidia-fabricmanager running before CUDA starts
# (the SXM H100 calls itself "H100 80GB HBM3"; "NVL"/"PCIe" boards have no NVSwitch), when 8 GPUs are on it
NVSWITCH_NAME = re.compile(r"A[18]00-SXM|H[18]00 80GB HBM3|H100 SXM|H800(?! PCIe)|H200(?! NVL)|H20\b|B[123]00")


def _xml_text(node, path):
    el = node.find(path) if node is not None else None
    text = (el.text or "").strip() if el is not None else ""
    return text if text and text != "N/A" else None


def _xml_int(node, path):
    m = re.match(r"\s*(\d+)", _xml_text(node, path) or "")
    return int(m.group(1)) if m else None


def _uncorrectable(node):
    """Uncorrectable ECC errors of an ecc_errors/volatile or /aggregate element: the v12 fields
    (dram_uncorrectable, sram_uncorrectable*) or the older double_bit/total."""
    if node is None:
        return None
    counts = [_xml_int(node, child.tag) for child in node if "uncorrectable" in child.tag]
    counts += [_xml_int(node, "double_bit/total")]
    counts = [c for c in counts if c is not None]
    return sum(counts) if counts else None


def parse_smi_xml(text):
    """{driver, cuda, attached, gpus [...]} from `nvidia-smi -q -x` (nvsmi_device_v12.dtd and older)."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(text)
    out = {
        "driver": _xml_text(root, "driver_version"),
        "cuda": _xml_text(root, "cuda_version"),
        "attached": _xml_int(root, "attached_gpus"),
        "gpus": [],
    }
    for g in root.findall("gpu")[:64]:
        reasons = g.find("clocks_event_reasons")
        prefix = "clocks_event_reason_"
        if reasons is None:
            reasons, prefix = g.find("clocks_throttle_reasons"), "clocks_throttle_reason_"
        active = sorted(
            c.tag[len(prefix) :] for c in (reasons if reasons is not None else []) if (c.text or "").strip() == "Active"
        )
        link = g.find("pci/pci_gpu_link_info")
        retired = g.find("retired_pages")
        rows = g.find("remapped_rows")
        pending_pages = _xml_text(retired, "pending_retirement") or _xml_text(retired, "pending_blacklist")
        out["gpus"].append(
            {
                "bus": g.get("id"),
                "uuid": _xml_text(g, "uuid"),
                "name": _xml_text(g, "product_name"),
                "persistence": _xml_text(g, "persistence_mode"),
                "mig": _xml_text(g, "mig_mode/current_mig"),
                "compute_mode": _xml_text(g, "compute_mode"),
                "pcie": {
                    "gen": _xml_int(link, "pcie_gen/current_link_gen"),
                    "gen_max": _xml_int(link, "pcie_gen/max_link_gen"),
                    "width": _xml_int(link, "link_widths/current_link_width"),
                    "width_max": _xml_int(link, "link_widths/max_link_width"),
                },
                "throttle": [r for r in active if r != "gpu_idle"],
                "ecc": {
                    "volatile_uncorrectable": _uncorrectable(g.find("ecc_errors/volatile")),
                    "aggregate_uncorrectable": _uncorrectable(g.find("ecc_errors/aggregate")),
                },
                "retired": {
                    "single_bit": _xml_int(retired, "multiple_single_bit_retirement/retired_count"),
                    "double_bit": _xml_int(retired, "double_bit_retirement/retired_count"),
                    "pending": None if pending_pages is None else pending_pages == "Yes",
                },
                "remap": {
                    "correctable": _xml_int(rows, "remapped_row_corr"),
                    "uncorrectable": _xml_int(rows, "remapped_row_unc"),
                    "pending": None
                    if _xml_text(rows, "remapped_row_pending") is None
                    else _xml_text(rows, "remapped_row_pending") == "Yes",
                    "failure": None
                    if _xml_text(rows, "remapped_row_failure") is None
                    else _xml_text(rows, "remapped_row_failure") == "Yes",
                },
            }
        )
    return out


def read_kernel_log():
    """(source, text) of this boot's kernel messages: /dev/kmsg (one record per read), else the tail of
    /var/log/kern.log from its last boot banner; (None, None) when neither is readable (dmesg_restrict)."""
    import errno

    try:
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        fd = None
    if fd is not None:
        chunks, size = [], 0
        try:
            while size < MAX_KMSG:
                try:
                    chunk = os.read(fd, 8192)
                except OSError as exc:
                    if exc.errno == errno.EPIPE:  # records overwritten while reading: go on
                        continue
                    if exc.errno == errno.EAGAIN:
                        break
                    raise
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        except OSError:
            chunks = None
        finally:
            os.close(fd)
        if chunks is not None:
            return "/dev/kmsg", b"".join(chunks).decode("utf-8", "replace")
    for path in ("/var/log/kern.log", "/var/log/messages"):
        try:
            with open(path, "rb") as f:
                f.seek(0, 2)
                f.seek(max(0, f.tell() - MAX_KMSG))
                text = f.read().decode("utf-8", "replace")
        except (OSError, IOError):
            continue
        boot = text.rfind("kernel: Linux version ")
        return path, text[text.rfind("\n", 0, boot) + 1 :] if boot >= 0 else text
    return None, None


def parse_xids(text):
    events = []
    for line in text.splitlines():
        m = XID_LINE.search(line)
        if m:
            events.append({"bus": m.group(1), "xid": int(m.group(2)), "text": m.group(3)[:200]})
    return events


def xid_state(events, path):
    """How many of this boot's XID events are new since the last clusterdoc run on this node, and when that run
    was: a small JSON file ($XDG_CACHE_HOME or ~/.cache, clusterdoc/gpu-HOST.json: a home shared by many nodes
    keeps one per node), rewritten with this run's count."""
    boot = (read("/proc/sys/kernel/random/boot_id") or "").strip()
    try:
        with open(path) as f:
            old = json.load(f)
        if not isinstance(old, dict) or old.get("boot_id") != boot:
            old = {}
    except (OSError, IOError, ValueError):
        old = {}
    seen = old.get("xids") if isinstance(old.get("xids"), int) else 0
    new = len(events) - seen if len(events) >= seen else len(events)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        tmp = path + ".%d" % os.getpid()
        with open(tmp, "w") as f:
            json.dump({"boot_id": boot, "xids": len(events), "at": time.time()}, f)
        os.rename(tmp, path)
    except (OSError, IOError):
        pass
    return new, old.get("at") if isinstance(old.get("at"), (int, float)) else None


def _hex_file(path):
    try:
        return int((read(path) or "").strip(), 16)
    except ValueError:
        return None


def acs_bridges(gpu_bus_ids):
    """PCI bridges above the GPUs with ACS Source Validation on (as `lspci -vvv` shows `ACSCtl: SrcValid+`),
    from each bridge's config space (extended capability 0x000d, control register at +6). None when config
    space past 256 bytes is not readable (not root)."""
    import struct

    found, readable = {}, False
    for bus in gpu_bus_ids:
        dev = "/sys/bus/pci/devices/" + bus.lower()[-12:]
        real = os.path.realpath(dev)
        parent = os.path.dirname(real)
        while re.match(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$", os.path.basename(parent)):
            try:
                with open(os.path.join(parent, "config"), "rb") as f:
                    config = f.read(4096)
            except (OSError, IOError):
                config = b""
            if len(config) > 256:
                readable = True
                offset, hops = 0x100, 0
                while offset and offset + 8 <= len(config) and hops < 64:
                    header = struct.unpack_from("<I", config, offset)[0]
                    if header & 0xFFFF == 0x000D and struct.unpack_from("<H", config, offset + 6)[0] & 1:
                        found.setdefault(os.path.basename(parent), []).append(bus)
                    offset, hops = (header >> 20) & 0xFFC, hops + 1
            parent = os.path.dirname(parent)
    if not readable:
        return None
    return [{"bridge": b, "gpus": sorted(set(g))} for b, g in sorted(found.items())]


def iommu_types(gpu_bus_ids):
    """{gpu bus id: the IOMMU domain type of its group ("identity": passthrough; "DMA"/"DMA-FQ": translated)}."""
    out = {}
    for bus in gpu_bus_ids:
        t = (read("/sys/bus/pci/devices/%s/iommu_group/type" % bus.lower()[-12:]) or "").strip()
        if t:
            out[bus] = t[:32]
    return out


def read_ib_counters():
    """[{device, port, rate_gbps, link_downed, symbol_error, link_error_recovery}] of every IB/RoCE port."""
    out = []
    base = "/sys/class/infiniband"
    for dev in sorted(os.listdir(base) if os.path.isdir(base) else [])[:64]:
        for port in listdir_prefix(os.path.join(base, dev, "ports"), "")[:16]:
            m = re.match(r"\s*([\d.]+) Gb/sec", read(os.path.join(port, "rate")) or "")
            entry = {"device": dev, "port": os.path.basename(port), "rate_gbps": float(m.group(1)) if m else None}
            for name in ("link_downed", "symbol_error", "link_error_recovery"):
                v = (read(os.path.join(port, "counters", name)) or "").strip()
                entry[name] = int(v) if v.isdigit() else None
            out.append(entry)
    return out


NVLINK_GPU = re.compile(r"GPU (\d+): ")
NVLINK_STATE = re.compile(r"\s*Link (\d+): (?:<(inactive)>|([\d.]+) GB/s)")
NVLINK_COUNTER = re.compile(r"\s*Link (\d+): ([A-Za-z][\w ]{0,40}?): (\d+)\s*$")
P2P_CODES = ("OK", "NS", "CNS", "GNS", "TNS", "U")


def parse_nvlink(text, counters=False):
    """`nvidia-smi nvlink -s` ("GPU 0: NAME (UUID: ...)" then "Link 0: 26.562 GB/s" or "Link 1: <inactive>") ->
    {gpu index: {"active": n, "inactive": [link]}}; with counters, `nvidia-smi nvlink -e` ("Link 0: Replay
    Errors: 0") -> {gpu index: {"link counter name": n}}. GPUs without NVLink print no Link line (left out)."""
    out, gpu = {}, None
    for line in text.splitlines()[:4096]:
        m = NVLINK_GPU.match(line)
        if m:
            gpu = m.group(1)
            continue
        if gpu is None or len(out) > 64:
            continue
        if counters:
            m = NVLINK_COUNTER.match(line)
            if m:
                out.setdefault(gpu, {})["%s %s" % (m.group(1), m.group(2)[:40])] = int(m.group(3))
            continue
        m = NVLINK_STATE.match(line)
        if m:
            links = out.setdefault(gpu, {"active": 0, "inactive": []})
            if m.group(2):
                links["inactive"].append(int(m.group(1)))
            else:
                links["active"] += 1
    return out


def nvlink_counters(first, second):
    """({gpu: {counter: n}} of the non-zero counters of the second read, ["GPUi link counter"] that rose from the
    first read to the second)."""
    nonzero = dict((g, dict((k, v) for k, v in c.items() if v)) for g, c in second.items())
    rising = [
        "GPU%s link %s" % (g, k) for g, c in second.items() for k, v in c.items() if v > first.get(g, {}).get(k, v)
    ]
    return dict((g, c) for g, c in nonzero.items() if c), rising


def parse_p2p(text):
    """`nvidia-smi topo -p2p r` (a matrix: a header row "GPU0 GPU1 ...", a row per GPU of OK/NS/CNS/GNS/TNS/U,
    X on the diagonal) -> {"gpus": n, "bad": [{a, b, code}]} (GPU a < GPU b, at most 64); None: no matrix."""
    header, rows = None, {}
    for line in text.splitlines()[:512]:
        cells = line.split()
        if header is None:
            if cells and all(re.match(r"GPU\d+$", c) for c in cells):
                header = [int(c[3:]) for c in cells][:64]
            continue
        if not cells or not re.match(r"GPU\d+$", cells[0]):
            break
        rows[int(cells[0][3:])] = cells[1 : len(header) + 1]
    if not header:
        return None
    bad = []
    for i, codes in sorted(rows.items()):
        for j, code in zip(header, codes):
            if i < j and code != "X" and code != "OK" and len(bad) < 64:
                bad.append({"a": i, "b": j, "code": code if code in P2P_CODES else "U"})
    return {"gpus": len(header), "bad": bad}


def nvidia_module_open():
    """Whether the loaded nvidia kernel module is NVIDIA's open one (needed for DMA-BUF): the proprietary one
    taints the kernel with P (/sys/module/nvidia/taint), the open one (MIT/GPL) does not; else what
    /proc/driver/nvidia/version says ("Open Kernel Module"). None: no nvidia module seen."""
    taint = read("/sys/module/nvidia/taint")
    if taint is not None:
        return "P" not in taint.strip()
    version = read("/proc/driver/nvidia/version", 4096)
    return None if version is None else "Open Kernel Module" in version


def probe_gpu_health(timeout, env_over=None, state_dir=None):
    """GPU, NVSwitch, PCIe and InfiniBand health: `nvidia-smi -q -x`, the kernel log's XIDs, fabric manager,
    ACS and IOMMU under the GPUs, IB rates and error counters read twice, NCCL's variables. None: no GPU tools."""
    ib_first = read_ib_counters()
    modules = read("/proc/modules") or ""
    env_over = env_over or {}
    out = {
        "smi": None,
        "lost": [],
        "xid": None,
        "fabricmanager": None,
        "acs": None,
        "iommu": {},
        "peermem": os.path.isdir("/sys/module/nvidia_peermem")
        or bool(re.search(r"^(nvidia_peermem|nv_peer_mem) ", modules, re.M)),
        "ib": ib_first,
        "nccl_env": dict((k, env_over[k] if k in env_over else os.environ.get(k)) for k in NCCL_VARS),
        "hypervisor": " hypervisor" in (read("/proc/cpuinfo", 1 << 16) or ""),
    }
    smi = which("nvidia-smi")
    if not smi:
        out["ib_changed"] = []
        return out if ib_first else None
    # nvidia-smi's NVLink and P2P answers have no XML form: their short, stable text, read beside -q -x
    # (the error counters again at the end, to see them rising while the probe ran)
    answers = {}

    def ask(key, argv):
        def go():
            try:
                answers[key] = run([smi] + argv, timeout)
            except (OSError, subprocess.TimeoutExpired) as exc:
                answers[key] = exc

        return go

    _parallel(
        [
            ask("xml", ["-q", "-x"]),
            ask("links", ["nvlink", "-s"]),
            ask("errors", ["nvlink", "-e"]),
            ask("p2p", ["topo", "-p2p", "r"]),
        ]
    )
    for key, answer in answers.items():
        if isinstance(answer, Exception):
            if key == "xml":
                raise answer
            answers[key] = (-1, "", "")
    code, text, err = answers["xml"]
    for line in (err + "\n" + (text if not text.lstrip().startswith("<") else "")).splitlines():
        m = LOST_LINE.match(line.strip())
        if m and len(out["lost"]) < 16:
            out["lost"].append({"bus": m.group(2), "message": line.strip()[:300]})
    if "<nvidia_smi_log" in text:
        out["smi"] = parse_smi_xml(text[: text.rfind(">") + 1][:MAX_SMI_XML])
    elif code != 0 and not out["lost"]:
        raise RuntimeError("nvidia-smi -q -x exited %d: %s" % (code, (err or text).strip()[:300]))
    buses = [g["bus"] for g in (out["smi"] or {}).get("gpus", []) if g.get("bus")]
    names = " ".join(g.get("name") or "" for g in (out["smi"] or {}).get("gpus", []))
    if NVSWITCH_NAME.search(names) and len(buses) + len(out["lost"]) >= 8:
        ctl = which("systemctl")
        if ctl:
            _, state, _ = run([ctl, "is-active", "nvidia-fabricmanager"], timeout)
            state = (state.strip().splitlines() or [""])[0]
            out["fabricmanager"] = state if state in SYSTEMD_STATES else "unknown"
        else:
            out["fabricmanager"] = "unknown"
    source, log = read_kernel_log()
    if source:
        events = parse_xids(log)
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
        path = os.path.join(state_dir or os.path.join(cache, "clusterdoc"), "gpu-%s.json" % os.uname()[1])
        new, since = xid_state(events, path)
        out["xid"] = {"source": source, "events": events[-MAX_XIDS:], "total": len(events), "new": new, "since": since}
    out["acs"] = acs_bridges(buses)
    out["iommu"] = iommu_types(buses)
    out["dmabuf"] = {
        "kernel": (read("/proc/sys/kernel/osrelease") or "").strip()[:64] or None,
        "open_module": nvidia_module_open(),
    }
    out["nvlink"] = parse_nvlink(answers["links"][1]) if answers["links"][0] == 0 else None
    out["p2p"] = parse_p2p(answers["p2p"][1]) if answers["p2p"][0] == 0 and buses else None
    errors = parse_nvlink(answers["errors"][1], counters=True) if answers["errors"][0] == 0 else {}
    again = {}
    if any(errors.values()):  # NVLinks with counters: read them again, to see them rise
        try:
            code, text, _ = run([smi, "nvlink", "-e"], timeout)
            again = parse_nvlink(text, counters=True) if code == 0 else {}
        except (OSError, subprocess.TimeoutExpired):
            pass
    out["nvlink_errors"], out["nvlink_rising"] = nvlink_counters(errors, again or errors)
    ib_second = read_ib_counters()
    out["ib"] = ib_second
    first = dict(((p["device"], p["port"]), p) for p in ib_first)
    out["ib_changed"] = [
        "%s/%s %s" % (p["device"], p["port"], k)
        for p in ib_second
        for k in ("link_downed", "symbol_error")
        if (p["device"], p["port"]) in first and (p[k] or 0) > (first[(p["device"], p["port"])][k] or 0)
    ]
    return out


# --- gather -----------------------------------------------------------------------------------


def gather(
    timeout=DEFAULT_TIMEOUT,
    mesh=None,
    budget=None,
    head_mpirun=None,
    peers=None,
    env=None,
    listen=None,
    connect=None,
    space=None,
    files=None,
    trust=False,
):
    """All facts of this node, as a JSON-ready dict. Never raises for a failing probe.
    `timeout`: per command; `budget`: seconds the whole probe may take (bounds the mesh and the port test);
    `head_mpirun`: the head's mpirun path, looked for on this node too (mpi.head_mpirun);
    `peers`: the job's node names, the first node first (resolved here); `env`: {K: V} overriding this
    node's NCCL/GLOO_SOCKET_IFNAME; `listen`: [(port, "store"|"peer", expected connections)];
    `connect`: ["HOST:PORT"]; `space`: folders whose free space counts; `files`: paths to hash."""
    start = time.time()
    facts = {
        "schema": SCHEMA,
        "probe": "python",
        "hostname": os.uname()[1],
        "python": {"version": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable},
        "env": {k: os.environ.get(k) for k in ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "TORCH_CUDA_ARCH_LIST")},
        "cuda_home": os.environ.get("CUDA_HOME") or None,
        "kernel": None,
        "torch": None,
        "nvcc": None,
        "toolkits": [],
        "libcudart_first": None,
        "gcc": None,
        "gpus": [],
        "driver": None,
        "gpu_health": None,
        "deepspeed": None,
        "mpi": {"mpirun": None, "mpi4py": None, "head_mpirun": None},
        "libaio": False,
        "libaio_header": False,
        "mesh": None,
        "ssh_trust": None,
        "errors": [],
        "net": None,
        "port": None,
        "resources": None,
        "files": None,
        "clock": {"start": start, "end": None, "date": None, "date_at": None},
    }
    errors = facts["errors"]
    lock = threading.Lock()
    toolkit_paths = toolkit_dirs()
    toolkits = [None] * len(toolkit_paths)

    def task(name, func, store):
        def go():
            try:
                value = func()
                with lock:
                    store(value)
            except subprocess.TimeoutExpired as exc:
                with lock:
                    errors.append(
                        {
                            "probe": name,
                            "message": "%s did not answer in %gs (killed)"
                            % (os.path.basename(str(exc.cmd[0])) if exc.cmd else name, exc.timeout),
                        }
                    )
            except Exception as exc:  # one broken probe must not hide the others
                with lock:
                    errors.append({"probe": name, "message": "%s: %s" % (type(exc).__name__, exc)})

        return go

    def put(key):
        return lambda v: facts.__setitem__(key, v)

    def put_tk(i):
        return lambda v: toolkits.__setitem__(i, v)

    def put_aio(v):
        facts["libaio"], facts["libaio_header"] = v

    def put_mpi(key):
        return lambda v: facts["mpi"].__setitem__(key, v)

    # torch and mpi4py are imported in forked children, started before any thread (fork and threads
    # do not mix), collected after the threads are done.
    children = {}
    if _find_package_dir("torch"):
        # a cold `import torch` (shared filesystems, busy nodes) takes far longer than any command:
        # give it most of the node's budget, as it runs beside everything else
        torch_limit = max(timeout * 1.5, budget * 0.9 if budget else 0)
        children["torch"] = (start_forked(TORCH_SNIPPET), torch_facts, put("torch"), torch_limit)
    if _find_package_dir("mpi4py"):
        children["mpi4py"] = (start_forked(MPI4PY_SNIPPET), mpi4py_facts, put_mpi("mpi4py"), timeout)
    # The port test: listeners open now and stay open while the rest runs; connects retry for `window`.
    window = min(5.0, budget * 0.3) if budget else 5.0
    hold_until = start + (min(budget * 0.6, window + 6.0) if budget else window + 6.0)
    # the rendezvous listener waits for every other node (the head starts this node first), within the budget
    hold_store = start + budget * 0.9 if budget else hold_until
    listeners = []
    for port, mode, expect in listen or []:
        own = None
        if mode == "peer":
            box = []
            _bounded([lambda box=box: box.append(resolve(os.uname()[1])[0])], 2.0)
            own = box[0] if box else None
        listeners.append(Listener(port, mode, expect, own))
        listeners[-1].start()
    if listen or connect:
        facts["port"] = {"listen": [], "connect": []}

    def put_date(v):
        facts["clock"]["date"], facts["clock"]["date_at"] = v

    def put_conn(v):
        facts["port"]["connect"].append(v)

    jobs = [
        task("net", lambda: probe_net(list(peers or []), env or {}, min(3.0, timeout)), put("net")),
        task("resources", lambda: probe_resources(space or []), put("resources")),
        task("clock", lambda: probe_date(min(5.0, timeout)), put_date),
        task("kernel", lambda: probe_kernel(timeout), put("kernel")),
        task("gpus", lambda: probe_gpus(timeout), put("gpus")),
        task("gpuhealth", lambda: probe_gpu_health(timeout, env or {}), put("gpu_health")),
        task("nvcc", lambda: probe_nvcc(timeout), put("nvcc")),
        task("gcc", lambda: probe_gcc(timeout), put("gcc")),
        task("deepspeed", lambda: probe_deepspeed(timeout), put("deepspeed")),
        task("mpirun", lambda: probe_mpirun(timeout), put_mpi("mpirun")),
        task("mpirun", lambda: probe_mpirun(timeout, head_mpirun) if head_mpirun else None, put_mpi("head_mpirun")),
        task("libaio", lambda: probe_libaio(timeout), put_aio),
    ]
    for i, p in enumerate(toolkit_paths):
        jobs.append(task("toolkit " + p, (lambda p=p: probe_toolkit(p, timeout)), put_tk(i)))
    for target in connect or []:
        jobs.append(task("port", (lambda t=target: connect_one(t, window)), put_conn))
    if files:
        jobs.append(task("files", lambda: probe_files(files), put("files")))
    if mesh:
        deadline = start + budget if budget else None
        jobs.append(task("mesh", lambda: probe_mesh(mesh, timeout, deadline), put("mesh")))
    if trust and peers:
        others = [p for p in peers if p != facts["hostname"]]
        jobs.append(task("mesh trust", lambda: probe_ssh_trust(others, timeout), put("ssh_trust")))
    _parallel(jobs, width=16)
    for name, (child, parse, store, limit) in sorted(children.items()):
        what = {"torch": "importing torch", "mpi4py": "importing mpi4py.MPI"}[name]
        try:
            store(parse(*child.result(child.started + limit)))
        except subprocess.TimeoutExpired:
            errors.append({"probe": name, "message": "%s did not finish in %gs (killed)" % (what, limit)})
        except Exception as exc:
            errors.append({"probe": name, "message": "%s: %s" % (type(exc).__name__, exc)})

    if facts["kernel"] is None:
        facts["kernel"] = {"release": os.uname()[2], "source": "uname", "container": False, "gvisor": False}
    facts["toolkits"] = [t for t in toolkits if t]
    facts["libcudart_first"] = probe_libcudart_first(toolkit_paths)
    drivers = sorted(set(g["driver"] for g in facts["gpus"] if g.get("driver")))
    facts["driver"] = drivers[0] if drivers else None
    for lst in listeners:
        facts["port"]["listen"].append(lst.wait(hold_store if lst.mode == "store" else hold_until))
    if facts["port"]:
        facts["port"]["connect"].sort(key=lambda c: c["target"])
    facts["errors"] = sorted(errors, key=lambda e: e["probe"])
    facts["clock"]["end"] = time.time()
    facts["elapsed"] = round(time.time() - start, 3)
    return facts


# --- the fallback for nodes without python3 ----------------------------------------------------

# Plain POSIX sh: the facts a shell can get. Its output is sections the head parses with
# parse_shell_output(); it never reads stdin (stdin carries the python probe).
SHELL_PROBE = r"""
t() { if command -v timeout >/dev/null 2>&1; then timeout -s KILL "$T" "$@"; else "$@"; fi; }
echo "@@clusterdoc-shell-probe 1"
echo "@@hostname"; hostname 2>/dev/null || uname -n
echo "@@kernel"; cat /proc/sys/kernel/osrelease 2>/dev/null || uname -r
echo "@@env"; echo "PATH=$PATH"; echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"; echo "CUDA_HOME=$CUDA_HOME"; echo "TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST"
echo "@@nvidia-smi"
if command -v nvidia-smi >/dev/null 2>&1; then t nvidia-smi --query-gpu=index,name,compute_cap,memory.total,driver_version --format=csv,noheader,nounits 2>&1; echo "@@rc $?"; else echo "@@rc missing"; fi
echo "@@nvcc"
if command -v nvcc >/dev/null 2>&1; then command -v nvcc; t nvcc --version 2>&1; echo "@@rc $?"; else echo "@@rc missing"; fi
echo "@@gcc"
if command -v gcc >/dev/null 2>&1; then command -v gcc; t gcc -dumpfullversion -dumpversion 2>&1; echo "@@rc $?"; else echo "@@rc missing"; fi
echo "@@toolkits"; for d in /usr/local/cuda-*; do [ -d "$d" ] && echo "$d"; done
echo "@@end"
"""  # noqa: E501 (a shell script: its lines stay as the node runs them)


def shell_probe(timeout=DEFAULT_TIMEOUT):
    """The shell fallback script, with each command limited to `timeout` seconds."""
    return "T=%d\n" % max(1, int(timeout)) + SHELL_PROBE


def _sections(text):
    sec, name = {}, None
    for line in text.splitlines():
        if line.startswith("@@") and not line.startswith("@@rc"):
            name = line[2:].strip()
            sec[name] = []
        elif name is not None:
            sec[name].append(line)
    return sec


def _rc(lines):
    for line in lines:
        if line.startswith("@@rc"):
            return line[4:].strip()
    return None


def parse_shell_output(text):
    """Facts (same schema, probe "shell") from SHELL_PROBE's output; absent facts stay null."""
    sec = _sections(text)
    errors = [{"probe": "python3", "message": "no python3 on this node: only shell facts were gathered"}]
    env = {}
    for line in sec.get("env", []):
        k, _, v = line.partition("=")
        env[k] = v or None
    facts = {
        "schema": SCHEMA,
        "probe": "shell",
        "hostname": (sec.get("hostname") or [""])[0].strip() or None,
        "kernel": {
            "release": (sec.get("kernel") or [""])[0].strip(),
            "source": "shell",
            "container": False,
            "gvisor": False,
        },
        "python": None,
        "torch": None,
        "deepspeed": None,
        "mpi": {"mpirun": None, "mpi4py": None},
        "nvcc": None,
        "gcc": None,
        "gpus": [],
        "driver": None,
        "libcudart_first": None,
        "libaio": None,
        "libaio_header": None,
        "mesh": None,
        "env": {k: env.get(k) for k in ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "TORCH_CUDA_ARCH_LIST")},
        "cuda_home": env.get("CUDA_HOME"),
        "toolkits": [
            {
                "path": p.strip(),
                "version": (re.search(r"cuda-(\d+\.\d+)$", p.strip()) or [None, None])[1],
                "version_source": "directory name",
                "nvcc": None,
                "libcudart": None,
                "gcc_max": None,
            }
            for p in sec.get("toolkits", [])
            if p.strip()
        ],
        "errors": errors,
    }
    smi = sec.get("nvidia-smi", [])
    rc = _rc(smi)
    body = "\n".join(line for line in smi if not line.startswith("@@rc"))
    if rc == "0":
        facts["gpus"] = parse_nvidia_smi(body)
        drivers = sorted(set(g["driver"] for g in facts["gpus"]))
        facts["driver"] = drivers[0] if drivers else None
    elif rc not in (None, "missing"):
        errors.append(
            {
                "probe": "gpus",
                "message": (
                    "nvidia-smi timed out"
                    if rc in ("124", "137")
                    else "nvidia-smi exited %s: %s" % (rc, body.strip()[:200])
                ),
            }
        )
    nv = sec.get("nvcc", [])
    rc = _rc(nv)
    if rc == "0":
        facts["nvcc"] = {
            "path": nv[0].strip(),
            "realpath": None,
            "home": None,
            "version": parse_nvcc_version("\n".join(nv)),
            "arch_list": None,
        }
    elif rc not in (None, "missing"):
        errors.append(
            {
                "probe": "nvcc",
                "message": "nvcc --version %s" % ("timed out" if rc in ("124", "137") else "exited " + rc),
            }
        )
    g = sec.get("gcc", [])
    if _rc(g) == "0" and len(g) >= 2:
        facts["gcc"] = {"path": g[0].strip(), "version": g[1].strip()}
    return facts


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    timeout, mesh, budget, head_mpirun = DEFAULT_TIMEOUT, None, None, None
    more = {"peers": [], "env": {}, "listen": [], "connect": [], "space": [], "files": [], "trust": False}
    while argv:
        arg = argv.pop(0)
        if arg == "--peers" and argv:
            more["peers"] = [p for p in argv.pop(0).split(",") if p]
        elif arg == "--env" and argv and "=" in argv[0]:
            k, _, v = argv.pop(0).partition("=")
            more["env"][k] = v
        elif arg == "--listen" and argv:  # PORT/MODE/EXPECTED
            port, mode, expect = (argv.pop(0).split("/") + ["store", "0"])[:3]
            more["listen"].append((int(port), mode, int(expect)))
        elif arg == "--connect" and argv:
            more["connect"] += [t for t in argv.pop(0).split(",") if t]
        elif arg == "--space" and argv:
            more["space"].append(argv.pop(0))
        elif arg == "--file" and argv:
            more["files"].append(argv.pop(0))
        elif arg == "--timeout" and argv:
            timeout = float(argv.pop(0))
        elif arg == "--budget" and argv:
            budget = float(argv.pop(0))
        elif arg == "--head-mpirun" and argv:
            head_mpirun = argv.pop(0)
        elif arg == "--trust":
            more["trust"] = True
        elif arg == "--mesh":
            mesh, argv = argv, []
        elif arg == "--shell-probe":
            sys.stdout.write(shell_probe(timeout))
            return 0
        else:
            sys.stderr.write("probe.py: unknown argument %r\n" % arg)
            return 2
    facts = gather(timeout=timeout, mesh=mesh, budget=budget, head_mpirun=head_mpirun, **more)
    sys.stdout.write(json.dumps(facts, sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    code = main()
    # Exit now even if a stuck thread remains (a probe must never hang the node's session).
    os._exit(code)
