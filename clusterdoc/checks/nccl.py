"""nccl: which NCCL a rank will load, and whether NCCL understands what it is told (facts["nccl"], probe/nccl.py).

FAIL: two NCCL wheels in one environment (nvidia-nccl-cu12 beside -cu13 share nvidia/nccl/lib/libnccl.so.2: the
one installed last is what torch loads, pytorch#186591); torch mapping an NCCL other than the one it was built
against (a libnccl on LD_LIBRARY_PATH or LD_PRELOAD: `undefined symbol: ncclAlltoAll`, pytorch#176829);
NCCL_IB_HCA selecting no port of the node; NCCL_IB_GID_INDEX naming an empty GID entry on a RoCE port; more tasks
per node than GPUs (or than CUDA_VISIBLE_DEVICES lists). WARN: an NCCL_* name NCCL does not read, named with the
closest one it does (NCCL_SOCKET_IFACE -> NCCL_SOCKET_IFNAME); a RoCE v1 GID. NCCL_SOCKET_IFNAME and
GLOO_SOCKET_IFNAME are the net check's (checks/net.py), parsed with parse_if_list below.
"""

from __future__ import annotations

import difflib
import os
import re

from clusterdoc.checks import FAIL, OK, WARN, Finding, finding, probe_errors
from clusterdoc.checks.nccl_names import NCCL_NAMES, OTHER_NAMES, PLUGIN_PREFIXES
from clusterdoc.checks.spec import Check
from clusterdoc.tables import driver_short_of

CHECK = "nccl"


def _atoi(text: str) -> int:
    m = re.match(r"\s*([+-]?\d+)", text)
    return int(m.group(1)) if m else 0


def parse_if_list(spec: str) -> tuple[bool, bool, list[tuple[str, int]]]:
    """NCCL's reading of NCCL_SOCKET_IFNAME / NCCL_IB_HCA (src/os/linux.cc ncclOsFindInterfaces, src/misc/utils.cc
    parseStringList): a leading `^` excludes, then a leading `=` makes the names exact (so `^=eth0`, never `=^`);
    entries split on `,` (empty ones skipped), each `name[:port]` (port by atoi, -1 when absent). Nothing is
    stripped: ` eth0` is a prefix starting with a blank. -> (exclude, exact, [(name, port)])."""
    exclude = spec.startswith("^")
    spec = spec[1:] if exclude else spec
    exact = spec.startswith("=")
    spec = spec[1:] if exact else spec
    items = []
    for entry in spec.split(","):
        name, _, rest = entry.partition(":")
        if name:
            port = rest.split(":")[0]
            items.append((name, _atoi(port) if port else -1))
    return exclude, exact, items


def if_selected(name: str, port: int, parsed: tuple[bool, bool, list[tuple[str, int]]]) -> bool:
    """matchIfList(name, port, ...) ^ exclude: whether NCCL takes this interface (port -1) or HCA port."""
    exclude, exact, items = parsed
    hit = not items or any(
        (name == ref if exact else name.startswith(ref)) and (p == -1 or port == -1 or p == port) for ref, p in items
    )
    return hit != exclude


def _n(facts: dict) -> dict:
    return facts.get("nccl") or {}


def check(node: str, facts: dict, tasks_per_node: int | None = None) -> list[Finding]:
    out = probe_errors(node, facts, CHECK)
    if not facts.get("nccl"):
        return out + layout(node, facts, tasks_per_node)
    out += libraries(node, facts)
    out += names(node, facts)
    out += ib_hca(node, facts)
    out += gid_index(node, facts)
    out += layout(node, facts, tasks_per_node)
    out += runtime(node, facts)
    if not any(f["status"] != OK for f in out):
        out.append(finding(node, CHECK, OK, _summary(facts)))
    return out


def _summary(facts: dict) -> str:
    n, t = _n(facts), facts.get("torch") or {}
    wheels = [f"{w['name']} {w.get('version')}" for w in n.get("wheels") or []]
    lib = f"torch loads NCCL {t['nccl']}" if t.get("nccl") else ""
    parts = [p for p in (", ".join(wheels), lib) if p]
    return "; ".join(parts) or "no NCCL to judge (no NCCL wheel, none on LD_LIBRARY_PATH)"


def _lib_version(path: str) -> str | None:
    m = re.search(r"libnccl\.so\.(\d+\.\d+\.\d+)", path or "")
    return m.group(1) if m else None


def _ver(text: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text or "")[:3])


def libraries(node: str, facts: dict) -> list[Finding]:
    out = []
    n, torch = _n(facts), facts.get("torch") or {}
    pin = {k: v for k, v in (n.get("torch_pin") or {}).items() if v}
    wheels = [w for w in n.get("wheels") or [] if w]
    wanted = next(iter(sorted(pin.items())), None)  # ("nvidia-nccl-cu12", "2.21.5")
    names_ = sorted({w["name"] for w in wheels})
    if len(names_) > 1:
        where = sorted({w.get("path") or "?" for w in wheels})
        desc = " and ".join(f"{w['name']} {w.get('version')}" for w in sorted(wheels, key=lambda w: w["name"]))
        keep = f"{wanted[0]}=={wanted[1]}" if wanted else _keep_for(torch, names_)
        out.append(
            finding(
                node,
                CHECK,
                FAIL,
                f"{desc} are both installed in the job's python on {node} ({', '.join(where)}): they ship the same "
                "file nvidia/nccl/lib/libnccl.so.2, so the wheel installed last decides which NCCL torch loads "
                "(and uninstalling either removes it for both)",
                f"on {node}: pip uninstall -y {' '.join(names_)} && pip install {keep}"
                + (" (the one torch was built against)" if wanted else ""),
            )
        )
    elif wanted and wheels and wheels[0]["name"] == wanted[0] and _ver(wheels[0].get("version")) < _ver(wanted[1]):
        w = wheels[0]
        out.append(
            finding(
                node,
                CHECK,
                FAIL,
                f"{w['name']} {w.get('version')} is installed on {node}, older than the {wanted[1]} torch "
                f"{torch.get('version') or ''} was built against: symbols torch calls can be missing "
                "(undefined symbol: nccl...)",
                f"on {node}: pip install {wanted[0]}=={wanted[1]}",
            )
        )
    # What torch maps, when it is not torch's own (wheel or bundled): LD_PRELOAD or LD_LIBRARY_PATH won.
    lib = torch.get("nccl_lib")
    own = {os.path.dirname(w["lib"]) for w in wheels if w.get("lib")}
    torch_dir = os.path.dirname(torch.get("path") or "")
    preload = [p for p in n.get("preload") or [] if p]
    along = [x for x in n.get("ld_path") or [] if x and x.get("path")]
    built = wanted[1] if wanted else None
    if lib and os.path.dirname(lib) not in own and not (torch_dir and lib.startswith(torch_dir + os.sep)):
        how = "LD_PRELOAD" if any(os.path.realpath(p) == lib or p == lib for p in preload) else "LD_LIBRARY_PATH"
        against = f", built against {built}" if built else ""
        loaded = torch.get("nccl") or _lib_version(lib) or "of unknown version"
        bad = built is not None and _ver(str(loaded)) != _ver(built)
        out.append(
            finding(
                node,
                CHECK,
                FAIL if bad else WARN,
                f"torch {torch.get('version') or ''} on {node} loads {lib} (NCCL {loaded}, through {how}) instead of "
                f"its own NCCL{against}"
                + (": calls into symbols that NCCL lacks fail (undefined symbol: nccl...)" if bad else ""),
                f"on {node}: {'unset LD_PRELOAD' if how == 'LD_PRELOAD' else 'take ' + os.path.dirname(lib)} "
                + ("" if how == "LD_PRELOAD" else "out of LD_LIBRARY_PATH ")
                + "for the job (module unload nccl), so torch loads the NCCL it was built with",
            )
        )
    elif not lib:  # torch not imported here (or NCCL linked in): judge the paths alone
        for p in preload:
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"LD_PRELOAD on {node} loads {p} before torch's own NCCL"
                    + (f" (torch was built against {built})" if built else ""),
                    f"on {node}: unset LD_PRELOAD for the job unless it is a deliberate NCCL override",
                )
            )
        if along and (wheels or pin):
            found = ", ".join(
                x["path"]
                + (f" (NCCL {_lib_version(x.get('realpath') or '')})" if _lib_version(x.get("realpath") or "") else "")
                for x in along[:4]
            )
            differs = built is None or any(_lib_version(x.get("realpath") or "") != built for x in along)
            if differs:
                out.append(
                    finding(
                        node,
                        CHECK,
                        WARN,
                        f"LD_LIBRARY_PATH on {node} holds {found}: the loader finds it before torch's NCCL wheel"
                        + (f" ({built})" if built else ""),
                        f"on {node}: take {os.path.dirname(along[0]['path'])} out of LD_LIBRARY_PATH for the job",
                    )
                )
    if torch.get("nccl") and built and not lib and _ver(torch["nccl"]) != _ver(built) and len(names_) < 2:
        out.append(
            finding(
                node,
                CHECK,
                FAIL,
                f"torch {torch.get('version') or ''} on {node} loads NCCL {torch['nccl']}, built against {built}",
                f"on {node}: pip install {wanted[0]}=={built}" if wanted else "reinstall torch's NCCL",
            )
        )
    return out


def _keep_for(torch: dict, names_: list[str]) -> str:
    """The wheel to keep when torch's pin is unknown: the one matching torch's CUDA major."""
    major = (torch.get("cuda") or "").split(".")[0]
    for name in names_:
        if major and name.endswith("cu" + major):
            return name
    return "the one for your torch's CUDA (" + " or ".join(names_) + ")"


def closest(name: str) -> str | None:
    """The known NCCL variable closest to an unknown name, if one is close."""
    got = difflib.get_close_matches(name[5:], NCCL_NAMES, n=1, cutoff=0.8)
    return "NCCL_" + got[0] if got else None


def names(node: str, facts: dict) -> list[Finding]:
    out = []
    env = _n(facts).get("env") or {}
    for var in sorted(env):
        rest = var[5:]
        if rest in NCCL_NAMES or rest in OTHER_NAMES or rest.startswith(PLUGIN_PREFIXES):
            continue
        near = closest(var)
        if near:
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"{var}={env[var]} is set for the job on {node}, but NCCL reads no such variable (did you "
                    f"mean {near}?): the setting has no effect",
                    f"rename it to {near} (NCCL's variables: docs.nvidia.com/deeplearning/nccl, Environment Variables)",
                )
            )
    return out


def _ports(facts: dict) -> list[dict]:
    return [p for p in ((facts.get("net") or {}).get("ib") or []) if p and p.get("device")]


def ib_hca(node: str, facts: dict) -> list[Finding]:
    spec = (_n(facts).get("env") or {}).get("NCCL_IB_HCA")
    if not spec or (_n(facts).get("env") or {}).get("NCCL_IB_DISABLE") not in (None, "", "0"):
        return []
    parsed = parse_if_list(spec)
    ports = _ports(facts)
    active = [p for p in ports if p.get("state") == "ACTIVE"]
    chosen = [p for p in active if if_selected(p["device"], _atoi(str(p.get("port"))), parsed)]
    have = ", ".join(f"{p['device']}:{p.get('port')} {p.get('state') or '?'}" for p in ports) or "no InfiniBand device"
    exclude, exact, items = parsed
    out = []
    if not exclude:
        missing = [
            f"{name}{':' + str(port) if port != -1 else ''}"
            for name, port in items
            if not any(
                if_selected(p["device"], _atoi(str(p.get("port"))), (False, exact, [(name, port)])) for p in ports
            )
        ]
        if missing:
            out.append(
                finding(
                    node,
                    CHECK,
                    FAIL,
                    f"NCCL_IB_HCA={spec} names {', '.join(missing)}, which {node} does not have (it has: {have})",
                    "set NCCL_IB_HCA to this node's HCAs (`ls /sys/class/infiniband`; `=mlx5_0:1` for one exact "
                    "port), or unset it",
                )
            )
    if not chosen and not out:
        out.append(
            finding(
                node,
                CHECK,
                FAIL,
                f"NCCL_IB_HCA={spec} leaves NCCL no ACTIVE InfiniBand/RoCE port on {node} (it has: {have}): it falls "
                "back to TCP sockets, or fails where NCCL_IB_DISABLE is not an option",
                "name an ACTIVE port in NCCL_IB_HCA (`ibstat`), or unset it",
            )
        )
    return out


def gid_index(node: str, facts: dict) -> list[Finding]:
    env = _n(facts).get("env") or {}
    spec = (env.get("NCCL_IB_GID_INDEX") or "").strip()
    gids = [g for g in _n(facts).get("gids") or [] if g]
    if not spec or not gids:
        return []
    want = _atoi(spec)
    hca = parse_if_list(env["NCCL_IB_HCA"]) if env.get("NCCL_IB_HCA") else (False, False, [])
    out = []
    for dev, port in sorted({(g["device"], g["port"]) for g in gids}):
        if not if_selected(dev, _atoi(str(port)), hca):
            continue
        table = [g for g in gids if g["device"] == dev and g["port"] == port]
        entry = next((g for g in table if g.get("index") == want), None)
        good = [g for g in table if g.get("gid") and "v2" in str(g.get("type") or "")]
        hint = (
            "; its RoCE v2 entries: " + ", ".join(f"{g['index']} ({g['gid']})" for g in good[:4])
            if good
            else "; it has no RoCE v2 entry"
        )
        if entry is None or not entry.get("gid"):
            out.append(
                finding(
                    node,
                    CHECK,
                    FAIL,
                    f"NCCL_IB_GID_INDEX={spec}: the GID table of {dev}:{port} on {node} has no entry {want}{hint} "
                    "(NCCL fails to connect its queue pairs, nccl#769)",
                    "set NCCL_IB_GID_INDEX to the port's RoCE v2 entry with the node's IPv4 address "
                    "(`show_gids`), the same on every node, or unset it (NCCL picks one itself since 2.21)",
                )
            )
        elif "v2" not in str(entry.get("type") or ""):
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"NCCL_IB_GID_INDEX={spec} on {dev}:{port} of {node} is a {entry.get('type') or 'typeless'} "
                    f"GID ({entry['gid']}): RoCE v1 is not routed beyond one L2 segment{hint}",
                    "use the port's RoCE v2 entry (`show_gids`)",
                )
            )
    return out


WRAP_FIX = (
    "give the job's environment the host's devices: Apptainer `--bind /dev/infiniband` (or run without "
    "--contain), Docker/Podman `--device=/dev/infiniband`, pyxis/enroot: the image's hooks (ENROOT_MOUNT_HOME, "
    "the mellanox hook)"
)


def runtime(node: str, facts: dict) -> list[Finding]:
    """What the job's environment (a container: --wrap, pyxis) hides from NCCL or torch: the HCAs' device nodes,
    a driver older than the CUDA the image's torch needs (procfs shows the host's kernel module whatever
    nvidia-smi the image has)."""
    rt = _n(facts).get("runtime") or {}
    out = []
    hcas = [d for d in rt.get("sys_infiniband") or [] if d]
    dev = rt.get("dev_infiniband")
    where = f"the job's environment ({facts['wrapped']})" if facts.get("wrapped") else "the job's environment"
    if hcas and not dev and (facts.get("wrapped") or (facts.get("kernel") or {}).get("container")):
        out.append(
            finding(
                node,
                CHECK,
                FAIL,
                f"the kernel of {node} has InfiniBand/RoCE devices ({', '.join(hcas[:8])}) but {where} "
                f"has {'no /dev/infiniband' if dev is None else 'an empty /dev/infiniband'}: NCCL cannot open them "
                "and falls back to TCP sockets (or fails with NCCL_IB_DISABLE unset and no socket interface)",
                WRAP_FIX,
            )
        )
    module = rt.get("driver_module")
    torch_cuda = (facts.get("torch") or {}).get("cuda")
    if module and torch_cuda and not facts.get("driver"):  # with nvidia-smi there, the cuda check judges it
        short, need = driver_short_of(module, torch_cuda) or ("", "")
        if short == "too old":
            out.append(
                finding(
                    node,
                    CHECK,
                    FAIL,
                    f"the job's torch is built for CUDA {torch_cuda} but the host's NVIDIA kernel module on {node} is "
                    f"{module} (CUDA {torch_cuda} needs >= {need}): torch sees no GPU ('driver too old')",
                    f"upgrade the host's driver to {need} or newer, or use an image whose torch is built "
                    "for an older CUDA (a forward-compatibility package in the image works on data-center GPUs only)",
                )
            )
        elif short == "compat":
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"the job's torch is built for CUDA {torch_cuda}; the host's NVIDIA kernel module on {node} is "
                    f"{module}, below {need}: it runs only through CUDA's minor-version compatibility (no PTX JIT "
                    "of newer code)",
                    f"upgrade the host's driver to {need} or newer",
                )
            )
    return out


def layout(node: str, facts: dict, tasks_per_node: int | None) -> list[Finding]:
    """Tasks per node against the node's GPUs and, when set, its CUDA_VISIBLE_DEVICES."""
    if not tasks_per_node or tasks_per_node < 2:
        return []
    gpus = len(facts.get("gpus") or [])
    visible = ((facts.get("env") or {}).get("CUDA_VISIBLE_DEVICES") or "").strip()
    seen = [x for x in visible.split(",") if x.strip()] if visible else None
    usable = min(gpus, len(seen)) if seen is not None else gpus
    if not gpus or tasks_per_node <= usable:
        return []
    limit = f"CUDA_VISIBLE_DEVICES={visible} shows {len(seen or [])}" if seen is not None and len(seen) < gpus else ""
    return [
        finding(
            node,
            CHECK,
            FAIL,
            f"{tasks_per_node} tasks per node on {node}, which has {gpus} GPU(s)"
            + (f" ({limit})" if limit else "")
            + f": local ranks {usable}..{tasks_per_node - 1} get no GPU of their own (invalid device ordinal, or two "
            "ranks on one GPU: NCCL 'Duplicate GPU detected')",
            f"run {usable} task(s) per node (--tasks-per-node {usable}, --ntasks-per-node={usable} under Slurm) or "
            f"ask for nodes with {tasks_per_node} GPUs (--gpus-per-node {tasks_per_node})",
        )
    ]


CHECKS = (
    Check(
        "nccl",
        40,
        "NCCL_* variables, the libnccl torch loads, RoCE GIDs",
        reads=("nccl", "wrapped"),
        probe_errors={"nccl": WARN},
        allocation=True,
        node=lambda c: check(c.node, c.facts, c.opts.tasks_per_node),
    ),
)
