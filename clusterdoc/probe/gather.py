"""All facts of this node in one JSON object: every probe in parallel threads, and the command line.

Part of the probe (see clusterdoc/probe/__init__.py): stdlib only, Python 3.6+.
"""

import json
import os
import subprocess
import sys
import threading
import time

from clusterdoc.probe.base import DEFAULT_TIMEOUT, SCHEMA, _bounded, _parallel
from clusterdoc.probe.gpuhealth import probe_gpu_health
from clusterdoc.probe.gpus import probe_gpus
from clusterdoc.probe.mpi import probe_mpirun
from clusterdoc.probe.nccl import probe_nccl
from clusterdoc.probe.network import probe_net, resolve
from clusterdoc.probe.ports import Listener, connect_one
from clusterdoc.probe.pyenv import (
    MPI4PY_SNIPPET,
    TORCH_SNIPPET,
    _find_package_dir,
    mpi4py_facts,
    probe_deepspeed,
    start_forked,
    torch_facts,
)
from clusterdoc.probe.ssh import probe_mesh, probe_ssh_trust
from clusterdoc.probe.system import probe_date, probe_files, probe_kernel, probe_resources
from clusterdoc.probe.toolkits import (
    probe_gcc,
    probe_libaio,
    probe_libcudart_first,
    probe_nvcc,
    probe_toolkit,
    toolkit_dirs,
)

# the rank environment's variables a check reads that --env (and the shell's, doctor/jobenv.py) set for the job
JOB_VARS = ("TORCH_CUDA_ARCH_LIST", "CUDA_VISIBLE_DEVICES")

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
    node's NCCL_*, GLOO_SOCKET_IFNAME and JOB_VARS (the job's environment: --env, the shell's);
    `listen`: [(port, "store"|"peer", expected connections)];
    `connect`: ["HOST:PORT"]; `space`: folders whose free space counts; `files`: paths to hash."""
    start = time.time()
    facts = {
        "schema": SCHEMA,
        "probe": "python",
        "hostname": os.uname()[1],
        "python": {"version": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable},
        "env": dict(
            (k, (env or {}).get(k, os.environ.get(k)) if k in JOB_VARS else os.environ.get(k))
            for k in ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "TORCH_CUDA_ARCH_LIST", "CUDA_VISIBLE_DEVICES")
        ),
        "cuda_home": os.environ.get("CUDA_HOME") or None,
        "cuda_home_realpath": os.path.realpath(os.environ["CUDA_HOME"]) if os.environ.get("CUDA_HOME") else None,
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
        "nccl": None,
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
        task("nccl", lambda: probe_nccl(env or {}), put("nccl")),
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


def expand_hostlist(text):
    """Slurm's compact node list ("gpu[01-03,7],login1") -> names, as `scontrol show hostnames` prints them
    (one bracket group per name; zero padding kept)."""
    import re

    names = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", text or ""):
        m = re.match(r"^([^\[]*)\[([^\]]*)\](.*)$", part)
        if not m:
            names.append(part)
            continue
        for r in m.group(2).split(","):
            lo, _, hi = r.partition("-")
            for i in range(int(lo), int(hi or lo) + 1):
                names.append("%s%0*d%s" % (m.group(1), len(lo), i, m.group(3)))
    return names[:100000]


SRUN_MARK = "@@clusterdoc-srun"
SRUN_CHUNK = 900  # srun --label splits a line at 1024 bytes


def print_chunked(text):
    """The facts as short lines (srun's IO splits long ones), with this task's Slurm node name first."""
    out = ["%s node %s" % (SRUN_MARK, os.environ.get("SLURMD_NODENAME") or os.uname()[1])]
    for i in range(0, len(text), SRUN_CHUNK):
        out.append("%s data %s" % (SRUN_MARK, text[i : i + SRUN_CHUNK]))
    out.append("%s end %d" % (SRUN_MARK, len(text)))
    sys.stdout.write("\n".join(out) + "\n")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    timeout, mesh, budget, head_mpirun, srun, wrapped = DEFAULT_TIMEOUT, None, None, None, False, None
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
        elif arg == "--wrapped" and argv:  # the command prefix this probe runs under (the ranks' container)
            wrapped = argv.pop(0)
        elif arg == "--srun":  # one task per node of a Slurm step: its nodes are the peers; chunked output
            srun = True
            more["peers"] = expand_hostlist(os.environ.get("SLURM_STEP_NODELIST") or os.environ.get("SLURM_NODELIST"))
        elif arg == "--mesh":
            mesh, argv = argv, []
        else:
            sys.stderr.write("clusterdoc probe: unknown argument %r\n" % arg)
            return 2
    facts = gather(timeout=timeout, mesh=mesh, budget=budget, head_mpirun=head_mpirun, **more)
    facts["wrapped"] = wrapped
    if srun:
        print_chunked(json.dumps(facts, sort_keys=True))
        sys.stdout.flush()
        return 0
    sys.stdout.write(json.dumps(facts, sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0
