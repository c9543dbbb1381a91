"""NCCL's own failure messages, read from its source: the raw list and the signature table made from it.

    python scripts/catalogue_nccl.py extract --mirror DIR [--ref REF ...]   # read NVIDIA/nccl (a git directory)
    python scripts/catalogue_nccl.py table                                  # write the table from the raw list

`extract` reads every `WARN(...)` of NVIDIA/nccl's src/ at each ref (the format string: its literal pieces, a hole
for each argument or macro in it) and writes tests/fixtures/why/catalogue/nccl.tsv: commit, path, line, format and
`known`, the learned signature (why/signatures.py) a line of that message already matches (those rows are not
made again). `table` needs no network: it reads that list and writes clusterdoc/why/sigtable/catalogue_nccl.py.

A message's category is decided by RULES, per component and error path (the file that prints it and what its code
is doing there), never per message: a rule names its component, the file and words that select its messages, the
category, whether the path decides it (else weak: a candidate, with what decides) and what a user does next. A
message no rule selects is left out: an internal consistency check, a fallback, a hint, a path that only reports
another failure.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

from catalogue_common import ROOT, picked_keys, read_tsv

sys.path.insert(0, str(ROOT))

REPO = "NVIDIA/nccl"
RAW = ROOT / "tests/fixtures/why/catalogue/nccl.tsv"
OUT = ROOT / "clusterdoc/why/sigtable/catalogue_nccl.py"
REFS = ("HEAD", "v2.21.5-1", "v2.18.6-1", "v2.12.12-1", "v2.7.8-1")  # master as fetched; the NCCL of torch 2.4-2.5,
# 2.1-2.2, 1.12-1.13 and 1.7-1.8 wheels (older words, as most pastes print them)
FORMAT_CAP = 300
PREFIX = "ncclsrc-"
MARKER = "NCCL WARN"
MAX_ROWS = 400
# a component's lines that are not failures (verbs' async events a healthy fabric sends: a port coming up, a GID
# or LID change, a subnet manager's re-registration)
UNLESS = {
    "ib-verbs": ("ibv_open_device",),  # a device NCCL skips, as above
    "ib-async": (
        "port active",
        "GID table change",
        "LID change",
        "P_Key change",
        "SM change",
        "client reregistration",
        "communication established",
        "speed change",
    ),
}
NEEDLE_CAP = 60

# component, path regex, message regex, category, weak, meaning, next step. The first rule that selects a
# (path, format) decides; a rule's `None` category leaves its messages out (not a failure, or the path decides
# nothing). Ordered specific before general.
RULES: list[tuple[str, str, str, str | None, bool, str, str]] = [
    # InfiniBand: the verbs' own completion and async errors are the fabric's
    (
        "ib-completion",
        r"transport/net_ib",
        r"Got completion|Got CQE with error|Unsupported completion status",  # a stale CQE is one handled before
        "network",
        False,
        "InfiniBand/RoCE failed a transfer (a work completion with an error status): the link, a port, the "
        "peer's HCA or the GID/RoCE routing between the two addresses",
        "clusterdoc check --perf on both nodes (ibstat, ibv_devinfo, the port counters); NCCL_IB_HCA to working ports",
    ),
    (
        "ib-async",
        r"transport/net_ib",
        r"(?<!non-)fatal event|Got async event|Fatal error\. Detected|"
        r"The error is fatal",
        "network",
        False,
        "the InfiniBand adapter reported a fatal event or failed devices "
        "(a port down, a catastrophic HCA error, a queue pair's fatal error) on the node that printed it",
        "clusterdoc check --perf on that node (ibstat, dmesg for mlx5); resubmit without it (--exclude)",
    ),
    (
        "ib-incompatible",
        r"transport/net_ib",
        r"incompatible devices|device is incompatible",
        "environment",
        False,
        "NCCL was set to use InfiniBand devices of different link types (InfiniBand and RoCE) together",
        "select NICs of one link type (NCCL_IB_HCA), as the message says",
    ),
    (
        "ib-setup",
        r"transport/net_ib",
        r"No IP interface found|Unable to open device|Unable to query (device|port)",
        None,  # a device NCCL skips: it goes on with the others (zai-org/ImageReward#65)
        True,
        "NCCL could not open or query an InfiniBand device or find its IP interface",
        "ibv_devinfo and ip addr on that node (inside the container: /dev/infiniband mounted?); NCCL_IB_HCA",
    ),
    (
        "ib-verbs",
        r"misc/ibvwrap|include/ibvwrap",
        r"Call to .*failed|returned %d|failed with error",
        "network",
        True,
        "an InfiniBand verbs call failed (its error names why: a port, a queue pair, memory registration)",
        "ibv_devinfo on the node, ulimit -l (registered memory) and the verbs error the line gives",
    ),
    # sockets and interfaces
    (
        "socket-interface",
        r"bootstrap|net_socket|misc/socket",
        r"no (socket )?interface found|No usable listening "
        r"interface|no device found (matching|after excluding)",
        "environment",
        False,
        "NCCL found no network interface it may use (NCCL_SOCKET_IFNAME or NCCL_OOB_NET_IFNAME names none on this "
        "node, or the container has only lo)",
        "set NCCL_SOCKET_IFNAME to an interface every node has (ip addr)",
    ),
    (
        "socket-connect",
        r"misc/socket|os/linux\.cc|net_socket",
        r"[Cc]onnect to %s (failed|returned)|socket "
        r"progress error|Accept failed|exceeded error retry count",
        "network",
        True,
        "a socket between ranks could not be connected or failed (the address, a firewall, or the other rank gone)",
        "the other rank's log (did it die first?); nc -zv between the nodes; NCCL_SOCKET_IFNAME",
    ),
    (
        "socket-resolve",
        r"misc/socket",
        r"getting address info",
        "network",
        True,
        "NCCL could not resolve an address (NCCL_COMM_ID or a host name)",
        "getent hosts NAME on that node; use an IP",
    ),
    # shared memory, the container's /dev/shm
    (
        "shm",
        r"os/linux\.cc|transport/shm|misc/shmutils",
        r"failed to create shared memory|failed to extend|"
        r"Could not map|"
        r"Error while %s shared memory",
        "environment",
        False,
        "NCCL could not create or map a shared memory segment: the container's /dev/shm is "
        "too small or not shared (docker without --ipc=host or --shm-size)",
        "df -h /dev/shm in the job; docker --ipc=host or --shm-size, or NCCL_SHM_DISABLE=1",
    ),
    # versions, drivers, libraries
    (
        "version",
        r".",
        r"(Mismatched|mismatch with remote peer).*[Vv]ersion|NCCL version mismatch|library is too "
        r"old|not backwards compatible|compiled with too old version",
        "environment",
        False,
        "NCCL versions differ: between the ranks, or between the application and the library it loads",
        "one NCCL everywhere (torch.cuda.nccl.version() on each node; LD_LIBRARY_PATH, the container's libnccl)",
    ),
    (
        "cuda-driver",
        r"misc/cudawrap|include/cudawrap",
        r"Retrieve .*failed|PFN functions not found|Driver version "
        r"found",
        "environment",
        False,
        "NCCL could not get what it needs from the CUDA driver: the driver is older than the CUDA NCCL was built for",
        "nvidia-smi (the driver) against the CUDA of the NCCL/torch build",
    ),
    (
        "nvml-library",
        r"os/linux\.cc|misc/nvmlwrap",
        r"libnvidia-ml",
        "environment",
        False,
        "NCCL could not load NVML (libnvidia-ml.so.1): the driver's library is not in the container or path",
        "run the container with the NVIDIA runtime (--gpus); ldconfig -p | grep nvidia-ml",
    ),
    (
        "nvml-call",
        r"misc/nvmlwrap",
        r"^(?!nvmlShutdown).*\) failed: %s",  # a shutdown at exit is no failure of the job
        "node",
        True,
        "an NVML call on the GPU failed: its error decides (GPU is lost or Unknown Error: the node's GPU; Driver/"
        "library version mismatch: the driver was updated without a reboot)",
        "nvidia-smi on that node; its kernel log (XIDs); a driver updated without a reboot",
    ),
    (
        "net-plugin",
        r"plugin/net",
        r"Failed to initialize any NET plugin",
        "environment",
        False,
        "NCCL could load no network plugin or transport (the plugin library, or no NIC it can use)",
        "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET shows which it tried; NCCL_NET_PLUGIN, LD_LIBRARY_PATH",
    ),
    (
        "mnnvl",
        r"mnnvl",
        r"not working on this system",
        "environment",
        False,
        "multi-node NVLink is present but does not work: the IMEX channels or daemon are not set up",
        "the IMEX configuration the message names, or NCCL_MNNVL_ENABLE=0",
    ),
    (
        "nvls",
        r"transport/nvls",
        r"Failed to bind NVLink SHARP",
        "node",
        True,
        "NVLink SHARP multicast memory could not be bound: the node's Fabric Manager or NVSwitches",
        "nvidia-smi -q (fabric state) and the Fabric Manager's log on that node; NCCL_NVLS_ENABLE=0 meanwhile",
    ),
    # memory: the host's allocations fail only for memory; a CUDA allocation fails after any CUDA error too (its
    # "Cuda failure" line comes first and decides). "unable to allocate requests" is a full request pool, no memory
    (
        "alloc-cuda",
        r"include/alloc",
        r"Failed to CUDA (malloc|calloc|host alloc)",
        "oom",
        True,
        "NCCL could not allocate GPU (or pinned host) memory for its buffers: the GPU is full, or a CUDA error "
        "before it made every call fail",
        "the 'Cuda failure' line before it: 'out of memory' is the GPU's memory (a smaller batch, NCCL_BUFFSIZE)",
    ),
    (
        "alloc-host",
        r"include/alloc|include/checks|misc/utils|mem_manager",
        r"Failed to (malloc|allocate)|^Allocation failed$|malloc\(size=%d\) returned null",
        "oom",
        False,
        "NCCL could not allocate host memory",
        "the host memory the job leaves (DataLoader workers, --mem); the node's dmesg",
    ),
    # the API's argument checks: the caller's code
    (
        "argcheck",
        r"misc/argcheck",
        r"invalid root|invalid type|invalid reduction|not a valid pointer|argument is "
        r"NULL|mismatchs with NCCL device|unknown to this communicator",
        "code",
        False,
        "a NCCL call got an argument it cannot take (a root, a type, an op, a pointer or device that is not the "
        "communicator's)",
        "the collective's call and its arguments on that rank (TORCH_DISTRIBUTED_DEBUG=DETAIL)",
    ),
    (
        "argcheck-symmetric",
        r"misc/argcheck",
        r"registration check failed",
        "desync",
        False,
        "the ranks passed buffers registered differently to one collective (rank 0's and this rank's differ)",
        "the buffers each rank passes to that collective (the same window and offset on every rank)",
    ),
    (
        "init-args",
        r"src/init\.cc",
        r"Invalid rank requested|invalid device count|Invalid device count|Invalid "
        r"device %d|improper usage of ncclCommInitRank|argument not initialized|Invalid config|rank %d exceeds ndev",
        "code",
        False,
        "NCCL's communicator set-up got an argument it cannot take (a rank outside the world, a device "
        "index, a config)",
        "the world size and ranks the launcher gives (WORLD_SIZE, RANK, LOCAL_RANK) against the processes started",
    ),
    (
        "init-duplicate",
        r"src/init\.cc",
        r"same GPU/Partition",
        "environment",
        False,
        "two ranks of one node use the same GPU",
        "one GPU per rank: --nproc_per_node, CUDA_VISIBLE_DEVICES, torch.cuda.set_device(LOCAL_RANK)",
    ),
    (
        "init-mixed",
        r"src/init\.cc",
        r"Detected mixed local",
        "node",
        True,
        "the nodes show different numbers of network devices to NCCL",
        "ibv_devinfo on each node: the one with fewer "
        "ports (a port down, a missing NIC) is the odd one; NCCL_IGNORE_NET_MISMATCH=1 if it is on purpose",
    ),
    (
        "enqueue-args",
        r"src/enqueue\.cc",
        r"without a matching (recv|send)|does not match type given|must either be "
        r"all uncaptured",
        "code",
        False,
        "the calls NCCL was given do not fit together (a send to itself without "
        "its receive, a reduction op of another type, streams captured differently)",
        "the collective or point-to-point calls on that rank and their group",
    ),
    # CUDA's error, as NCCL's check prints it: the string decides (known ones are learned signatures)
    (
        "cuda-failure",
        r"include/checks|include/cudawrap",
        r"^Cuda failure",
        "code",
        True,
        "a CUDA call inside NCCL failed: the CUDA error it names decides (an illegal address: the code or the GPU; "
        "ECC or 'fallen off the bus': the node; an unsupported driver: the environment)",
        "the CUDA error's text; the node's kernel log (XIDs) and clusterdoc check on it",
    ),
]

_HOLE = re.compile(r"%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t|L)?[diouxXeEfgGcspm]")
_WARN = re.compile(r"(?<![A-Za-z0-9_])WARN\(")


def _warn_formats(text: str):
    """(line, format) of every WARN(...) in one file's text: literal pieces kept, anything else a hole."""
    for m in _WARN.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        if "//" in text[start : m.start()]:
            continue  # commented out
        i, out, depth = m.end(), [], 0
        while i < len(text):
            c = text[i]
            if c == '"':
                j, s = i + 1, []
                while j < len(text) and text[j] != '"':
                    s.append(text[j : j + 2] if text[j] == "\\" else text[j])
                    j += 2 if text[j] == "\\" else 1
                out.append("".join(s))
                i = j + 1
            elif c in " \t\n\\":
                i += 1
            elif c in ",)" and depth == 0:
                break
            elif c == "(":
                depth += 1
                out.append("%s")
                i += 1
            elif c == ")":
                depth -= 1
                i += 1
            elif text.startswith("//", i):
                i = text.find("\n", i) + 1 or len(text)
            else:
                j = i
                while j < len(text) and (text[j].isalnum() or text[j] in "_#"):
                    j += 1
                out.append("%s")
                i = max(j, i + 1)
        fmt = re.sub(r"(%s)+", "%s", "".join(out)).replace('\\"', '"').replace("\\n", " ")
        fmt = re.sub(r"\\\n\s*", "", fmt)  # a literal continued on the next line
        fmt = " ".join(fmt.split())
        yield text.count("\n", 0, m.start()) + 1, fmt[:FORMAT_CAP]


def _git(mirror: str, *args: str) -> str:
    return subprocess.run(["git", "-C", mirror, *args], capture_output=True, text=True, check=True).stdout


def sample(fmt: str) -> str:
    """A line NCCL would print for this format (each hole filled), as a log shows it."""
    return "node01:1:2 [0] file.cc:1 NCCL WARN " + _HOLE.sub(lambda m: "0" if m.group()[-1] in "diouxX" else "x", fmt)


def known(fmt: str) -> str:
    """The learned signature (not this catalogue's) a line of this message already matches, or ''."""
    from clusterdoc.why import signatures

    line = sample(fmt)
    low = line.lower()
    for sig in signatures.SIGNATURES:
        if not sig.name.startswith(PREFIX) and sig.matches(line, low):
            return sig.name
    return ""


def extract(mirror: str, refs: tuple[str, ...]) -> list[tuple[str, str, int, str, str]]:
    rows, seen = [], set()
    for ref in refs:
        commit = _git(mirror, "rev-parse", ref).strip()
        for path in _git(mirror, "ls-tree", "-r", "--name-only", commit, "src/").split():
            if not path.endswith((".cc", ".cu", ".h", ".cpp")) or "/os/windows" in path:
                continue
            for line, fmt in _warn_formats(_git(mirror, "show", f"{commit}:{path}")):
                if fmt not in seen:
                    seen.add(fmt)
                    rows.append((commit, path, line, fmt, known(fmt)))
    return rows


def write_raw(rows) -> None:
    RAW.parent.mkdir(parents=True, exist_ok=True)
    with RAW.open("w") as f:
        f.write(
            f"# every WARN(...) format string of https://github.com/{REPO} src/ (scripts/catalogue_nccl.py "
            "extract); known: the learned signature a line of it already matches\n"
        )
        f.write("commit\tpath\tline\tformat\tknown\n")
        for commit, path, line, fmt, kn in rows:
            f.write(f"{commit}\t{path}\t{line}\t{fmt.replace(chr(9), ' ')}\t{kn}\n")


def read_raw() -> list[tuple[str, str, int, str, str]]:
    """The raw list's rows, after its comment and its header line."""
    return [(commit, path, int(line), fmt, kn) for commit, path, line, fmt, kn in read_tsv(RAW, skip=2)]


def needles(fmt: str) -> tuple[str, ...] | None:
    """The format's longest fixed pieces, the first one a pre-check key holds (signatures._KEYS_PICKED), and the
    marker; None when it has no piece of 12 characters a key holds (too thin to be found alone)."""
    keys = picked_keys()
    # a piece over NEEDLE_CAP is cut to its head (a hint's long tail changes between versions)
    parts = [p[:NEEDLE_CAP].strip() for p in _HOLE.split(fmt)]
    pieces = sorted({p for p in parts if len(p) >= 6}, key=lambda p: (-len(p), parts.index(p)))
    first = next((p for p in pieces if len(p) >= 12 and any(k in p.lower() for k in keys)), None)
    if first is None:
        return None
    rest = [p for p in pieces if p != first][:2]
    return (first, *rest, MARKER)


def rule_of(path: str, fmt: str):
    for rule in RULES:
        if re.search(rule[1], path) and re.search(rule[2], fmt):
            return rule
    return None


def table(rows) -> tuple[list[dict], dict[str, tuple[str, ...]]]:
    """The rows of the catalogue (dicts in order) from the raw list, and each weak component's candidates."""
    out, seen, names = [], set(), set()
    for commit, path, line, fmt, kn in rows:
        rule = rule_of(path, fmt)
        if kn or rule is None or rule[3] is None:
            continue
        nd = needles(fmt)
        if nd is None or nd in seen:
            continue
        seen.add(nd)
        name = f"{PREFIX}{Path(path).stem}-{line}"
        while name in names:
            name += "b"
        names.add(name)
        out.append(
            {
                "name": name,
                "component": rule[0],
                "category": rule[3],
                "weak": rule[4],
                "needles": nd,
                "learned": f"{MARKER} {fmt}",  # the format as NCCL prints it, after its marker
                "source": f"https://github.com/{REPO}/blob/{commit}/{path}#L{line}",
            }
        )
    # a row whose needles hold another row's of the same verdict adds nothing (the other matches its lines)
    out = [
        r
        for r in out
        if not any(
            o is not r
            and (o["category"], o["weak"]) == (r["category"], r["weak"])
            and set(o["needles"]) < set(r["needles"])
            for o in out
        )
    ]
    out.sort(key=lambda r: -len(r["needles"][0]))  # specific before general: the longest first needle first
    if len(out) > MAX_ROWS:
        raise SystemExit(f"{len(out)} rows: over {MAX_ROWS}")
    return out, {r[0]: _candidates(r) for r in RULES if r[4] and r[3]}


def _candidates(rule) -> tuple[str, ...]:
    """A weak component's candidates: its own category first, then what else prints the same path."""
    other = {
        "network": "another rank (or its node) died first, or the node's own device/container set-up: its "
        "own log, the node's kernel log",
        "node": "environment: a driver or library that does not match (a "
        "driver updated without a reboot, the container's NVIDIA runtime)",
        "oom": "another CUDA error first: the 'Cuda failure' line before it names it (an illegal address: the "
        "code; a lost GPU or an ECC error: the node)",
        "code": "node: the GPU failed (an "
        "XID in the node's kernel log: clusterdoc check on it), or the environment (a driver older than the "
        "CUDA of the build)",
    }[rule[3]]
    return (f"{rule[3]}: {rule[5]} ({rule[6]})", other)


def render(rows, thin) -> str:
    head = [
        f'"""NCCL\'s own failure messages, read from its source (https://github.com/{REPO}): one signature per',
        "WARN(...) message whose category the code path that prints it decides, a fallback after every learned",
        "signature (why/signatures.py). GENERATED by scripts/catalogue_nccl.py from tests/fixtures/why/catalogue/",
        'nccl.tsv (its RULES: one per component and error path): do not edit, regenerate."""',
        "",
        "# ruff: noqa: E501",
        "",
        "from __future__ import annotations",
        "",
        "from clusterdoc.why.signature import S, Signature",
        "",
    ]
    meaning = {r[0]: (r[5], r[6]) for r in RULES}
    body = ["SIGNATURES: list[Signature] = ["]
    for r in rows:
        m, nxt = meaning[r["component"]]
        weak = ", weak=True" if r["weak"] else ""
        weak += f", unless={UNLESS[r['component']]!r}" if r["component"] in UNLESS else ""
        body.append(
            f"    S({r['name']!r}, {r['category']!r}, {r['needles']!r},\n      {m!r},\n"
            f"      {r['learned']!r},\n      {r['source']!r},\n      {nxt!r}{weak}),"
        )
    body.append("]  # fmt: skip")
    body.append("")
    body.append("# a weak row's candidates (why/candidates.py), by its component")
    body.append("_THIN_BY_COMPONENT: dict[str, tuple[str, ...]] = {")
    body += [f"    {k!r}: {v!r}," for k, v in sorted(thin.items())]
    body.append("}  # fmt: skip")
    comp = {r["name"]: r["component"] for r in rows if r["weak"]}
    body.append("WEAK_COMPONENT: dict[str, str] = {")
    body += [f"    {k!r}: {v!r}," for k, v in comp.items()]
    body.append("}  # fmt: skip")
    body.append("THIN = {name: _THIN_BY_COMPONENT[c] for name, c in WEAK_COMPONENT.items()}")
    return "\n".join(head + body) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("extract")
    ex.add_argument("--mirror", required=True, help="a git directory of NVIDIA/nccl (fetch github:NVIDIA/nccl)")
    ex.add_argument("--ref", action="append", help=f"refs to read (default: {' '.join(REFS)})")
    sub.add_parser("table")
    a = ap.parse_args(argv)
    if a.cmd == "extract":
        write_raw(extract(a.mirror, tuple(a.ref or REFS)))
    rows, thin = table(read_raw())
    OUT.write_text(render(rows, thin))
    by = {}
    for r in rows:
        key = (r["category"], "weak" if r["weak"] else "strong")
        by[key] = by.get(key, 0) + 1
    print(f"{len(read_raw())} messages, {len(rows)} rows: {sorted(by.items())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
