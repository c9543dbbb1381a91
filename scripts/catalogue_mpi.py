"""A catalogue of the MPI launchers', Slurm's and the fabric libraries' own failure messages, read from their source
(issue 41): Open MPI's help files (help-*.txt: each [topic] is a message mpirun, orted or a component prints),
Slurm's error table (src/common/slurm_errno.c), MPICH's error classes (src/mpi/errhan/errnames.txt) and UCX's
status strings (src/ucs/type/status.c).

    .venv/bin/python scripts/catalogue_mpi.py --extract /work/.mirror   # read the sources: writes the raw list
    .venv/bin/python scripts/catalogue_mpi.py                           # the raw list -> the signature table

The raw list (tests/fixtures/why/catalogue/mpi.tsv: repo, commit, path, line, key, message) is committed, so the
table is regenerated and reviewed without the network. A message becomes a row only where a rule of CLASSES below
(a component's file and the message's key: the code path that prints it) decides its category, and only where the
learned signatures (why/signatures.py) do not know it already. Meanings and next steps come from CLASSES, one per
component and error path, never per message.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

from catalogue_common import (
    CATALOGUE,
    ROOT,
    SIGTABLE,
    classes_block,
    learned_matcher,
    lit,
    module_head,
    picked_keys,
    read_tsv,
    signatures_tail,
)

RAW = CATALOGUE / "mpi.tsv"
TABLE = SIGTABLE / "catalogue_mpi.py"
MAX_TEXT = 300  # a message's characters kept in the raw list

# what was read: (repository, commit, files); a mirror is MIRROR/<owner>+<name>/repo (the `fetch` tool's layout)
OMPI = "open-mpi/ompi"
OMPI_COMMIT = "ea8f4d03089018f08451f42f2cfa2467570f395e"  # v4.1.8: the release most clusters' Open MPI is of
SOURCES: list[tuple[str, str, tuple[str, ...]]] = [
    (OMPI, OMPI_COMMIT, (
        "opal/mca/btl/openib/help-mpi-btl-openib.txt",
        "opal/mca/btl/openib/connect/help-mpi-btl-openib-cpc-base.txt",
        "opal/mca/btl/openib/connect/help-mpi-btl-openib-cpc-rdmacm.txt",
        "opal/mca/btl/tcp/help-mpi-btl-tcp.txt",
        "opal/mca/btl/base/help-mpi-btl-base.txt",
        "opal/mca/btl/vader/help-btl-vader.txt",
        "opal/mca/btl/smcuda/help-mpi-btl-smcuda.txt",
        "opal/mca/common/verbs/help-opal-common-verbs.txt",
        "opal/mca/common/ofi/help-common-ofi.txt",
        "opal/mca/common/cuda/help-mpi-common-cuda.txt",
        "opal/mca/common/sm/help-mpi-common-sm.txt",
        "opal/mca/shmem/mmap/help-opal-shmem-mmap.txt",
        "opal/mca/shmem/posix/help-opal-shmem-posix.txt",
        "opal/mca/shmem/sysv/help-opal-shmem-sysv.txt",
        "opal/mca/mpool/base/help-mpool-base.txt",
        "opal/mca/rcache/base/help-rcache-base.txt",
        "ompi/mca/mtl/ofi/help-mtl-ofi.txt",
        "ompi/mca/mtl/psm2/help-mtl-psm2.txt",
        "ompi/mca/pml/ob1/help-mpi-pml-ob1.txt",
        "ompi/mca/bml/r2/help-mca-bml-r2.txt",
        "ompi/errhandler/help-mpi-errors.txt",
        "ompi/mpi/help-mpi-api.txt",
        "ompi/runtime/help-mpi-runtime.txt",
        "orte/mca/odls/base/help-orte-odls-base.txt",
        "orte/mca/odls/default/help-orte-odls-default.txt",
        "orte/mca/plm/base/help-plm-base.txt",
        "orte/mca/plm/rsh/help-plm-rsh.txt",
        "orte/mca/plm/slurm/help-plm-slurm.txt",
        "orte/mca/ras/slurm/help-ras-slurm.txt",
        "orte/mca/rmaps/base/help-orte-rmaps-base.txt",
        "orte/mca/ess/base/help-ess-base.txt",
        "orte/mca/errmgr/base/help-errmgr-base.txt",
        "orte/mca/oob/tcp/help-oob-tcp.txt",
        "orte/mca/state/base/help-state-base.txt",
        "orte/orted/help-orted.txt",
        "orte/runtime/help-orte-runtime.txt",
        "orte/tools/orterun/help-orterun.txt",
        "orte/util/hostfile/help-hostfile.txt",
    )),
    ("SchedMD/slurm", "284c3b95f08a2dc2478499837b03355e1b9c5c75", ("src/common/slurm_errno.c",)),
    ("pmodels/mpich", "6a79bf6575c3b5b41cabbd3d59340634d6f9412d", ("src/mpi/errhan/errnames.txt",)),
    ("openucx/ucx", "9466d104a317c8ffddd9734e72055d8bbda021b3", ("src/ucs/type/status.c",)),
]  # fmt: skip

HOLE = re.compile(r"%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t|L|PRI\w+)?[sdiuxXpfgcn]|\{\w*\}")


# --- reading the sources: each file's messages as (line, key, text) ---


def _help_topics(text: str) -> list[tuple[int, str, str]]:
    """An Open MPI help file: each [topic]'s first distinctive line (one with a fixed piece of >= 12 characters)."""
    out, topic, found = [], "", True
    for no, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s.startswith("#"):
            continue
        m = re.fullmatch(r"\[([\w:. -]+)\]", s)
        if m:
            topic, found = m.group(1), False
            continue
        if found or not topic or not s or set(s) <= set("-=*"):
            continue
        if longest_piece(s) >= 12:
            out.append((no, topic, s))
            found = True
    return out


def _slurm_errtab(text: str) -> list[tuple[int, str, str]]:
    out = []
    for m in re.finditer(r'ERRTAB_ENTRY\((\w+)\),\s*\n?\s*"((?:[^"\\]|\\.)*)"', text):
        out.append((text.count("\n", 0, m.start(2)) + 1, m.group(1), m.group(2)))
    return out


def _mpich_errnames(text: str) -> list[tuple[int, str, str]]:
    out, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        line, no = lines[i], i + 1
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + lines[i].lstrip()
        i += 1
        m = re.match(r"(\*\*[\w]+(?: [^:]*)?):(.*)", line)
        if m and m.group(2).strip():
            out.append((no, m.group(1).strip(), m.group(2).strip()))
    return out


def _ucs_status(text: str) -> list[tuple[int, str, str]]:
    out = []
    for m in re.finditer(r'case (UCS_\w+):\s*\n\s*return "([^"]*)"', text):
        out.append((text.count("\n", 0, m.start(2)) + 1, m.group(1), m.group(2)))
    return out


def parse(path: str, text: str) -> list[tuple[int, str, str]]:
    if path.endswith(".txt") and "/help-" in "/" + path:
        return _help_topics(text)
    if path.endswith("slurm_errno.c"):
        return _slurm_errtab(text)
    if path.endswith("errnames.txt"):
        return _mpich_errnames(text)
    if path.endswith("status.c"):
        return _ucs_status(text)
    raise ValueError(path)


def extract(mirror: Path) -> list[tuple[str, str, str, int, str, str]]:
    rows = []
    for repo, commit, paths in SOURCES:
        git = mirror / repo.replace("/", "+") / "repo"
        for path in paths:
            text = subprocess.run(["git", "--git-dir", str(git), "show", f"{commit}:{path}"], capture_output=True,
                                  text=True, check=True).stdout  # fmt: skip
            for no, key, msg in parse(path, text):
                rows.append((repo, commit, path, no, key, msg.strip().replace("\t", " ")[:MAX_TEXT]))
    return rows


def write_raw(rows, path: Path = RAW) -> None:
    lines = ["# repo\tcommit\tpath\tline\tkey\tmessage (scripts/catalogue_mpi.py --extract; do not edit)"]
    for repo, commit, p, no, key, msg in rows:
        lines.append("\t".join((repo, commit, p, str(no), key, msg.replace("\t", " "))))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_raw(path: Path = RAW) -> list[tuple[str, str, str, int, str, str]]:
    return [(repo, commit, p, int(no), key, msg) for repo, commit, p, no, key, msg in read_tsv(path)]


# --- the pieces of a format string ---


def pieces(fmt: str) -> list[str]:
    """The fixed pieces of a format string (split at its holes), stripped, longest first."""
    text = fmt.replace("\\n", "  ").replace('\\"', '"')
    # a hole, or a run of spaces (two after a full stop in help texts: a paste may keep one)
    parts = [p.strip(" \t:;,.'\"()[]") for p in re.split(r"\s{2,}", HOLE.sub("  ", text))]
    return sorted((p for p in parts if p), key=len, reverse=True)


def longest_piece(fmt: str) -> int:
    ps = pieces(fmt)
    return len(ps[0]) if ps else 0


# --- the category from the code path: a component's file and the message's key -> a class ---

# class -> (category, weak, meaning, next step): one per component and error path, never per message
CLASSES: dict[str, tuple[str, bool, str, str]] = {
    "ompi-ib": ("network", False,
                "Open MPI's InfiniBand transport (the openib BTL, the RDMA CM) reported a failed transfer or a network "
                "error event: the link, a port, a switch or the peer's adapter",
                "clusterdoc check --perf on the nodes (ibstat, ibv_devinfo, the ports' error counters); resubmit "
                "without the node it names (--exclude, submit --retries)"),
    # a warning as often as a failure: the openib BTL leaves that device out and the job may go on over another
    # transport, so the line can stand early in a log that failed for something else
    "ompi-verbs-device": ("network", True,
                          "Open MPI could not open or query an InfiniBand (verbs) device: the adapter or its driver on "
                          "that node (Open MPI then goes on without it where another transport works)",
                          "ibv_devinfo and dmesg (mlx5) on that node; resubmit without it (--exclude)"),
    "ompi-tcp": ("peer", False,
                 "Open MPI's TCP transport could not connect to another MPI process: that process died first, or "
                 "an interface the other host cannot reach (a docker bridge, a second NIC), a firewall",
                 "the other process's log first; then pin the interface (mpirun --mca btl_tcp_if_include IFACE, or "
                 "exclude docker0,lo); nc -zv between the nodes"),
    "ompi-unreachable": ("network", False,
                         "Open MPI found no transport by which two MPI processes can reach each other (no common "
                         "network: the transports built in, the interfaces, the fabric)",
                         "ompi_info | grep -E 'btl|pml|mtl' on both nodes; the interfaces they share; --mca btl "
                         "self,vader,tcp to test"),
    # weak: its own text says the job "may behave unpredictably (and/or abort)": it may go on (a provider's probe)
    "ompi-ofi": ("network", True,
                 "Open MPI's libfabric (OFI) transport failed a fabric call: the provider or the fabric (EFA, "
                 "Omni-Path, verbs through OFI)",
                 "fi_info on the nodes (the provider it picked), FI_LOG_LEVEL=warn for libfabric's own reason"),
    "ompi-psm2": ("network", False,
                  "Open MPI's Omni-Path (PSM2) transport could not open its endpoint or progress the network: the "
                  "link or the hfi1 driver of that node",
                  "opainfo / hfi1 status on that node (is its link up?); resubmit without it (--exclude)"),
    "ompi-peer-gone": ("peer", False,
                       "an MPI peer process closed its connection: it died first, or the link to it broke",
                       "the other ranks' and nodes' logs: the first one to fail is the cause"),
    # weak: a failed system call there may only cost speed ("abort or ... performance degradation", its text)
    "ompi-shm-syscall": ("environment", True,
                         "a system call failed while Open MPI set up shared memory on a node: the job may abort or "
                         "only run slower (/dev/shm, the session directory, a container's limits)",
                         "the system call and errno it names; df -h /dev/shm and TMPDIR on the node; whether the "
                         "job failed later for another reason"),
    "ompi-shm": ("environment", False,
                 "Open MPI could not set up its shared memory between the processes of a node (/dev/shm or the "
                 "session directory full or too small, a container's --shm-size, user namespaces)",
                 "df -h /dev/shm and the session directory (TMPDIR) on the node; docker --shm-size / --ipc=host"),
    "ompi-locked-memory": ("environment", False,
                           "Open MPI's InfiniBand transport could not allocate locked (registered) memory: the "
                           "node's locked-memory limit (ulimit -l) is too low",
                           "ulimit -l unlimited for the job (Slurm's PropagateResourceLimits, "
                           "/etc/security/limits.conf, docker --ulimit memlock=-1)"),
    "ompi-install": ("environment", False,
                     "Open MPI's launcher could not find its own parts or the launcher it needs (orted, srun, ssh), "
                     "or was built without the PMI support a direct srun launch needs",
                     "the same Open MPI on every node (PATH, LD_LIBRARY_PATH, mpirun --prefix); ompi_info | grep "
                     "-i pmi against srun --mpi=list"),
    "ompi-version": ("environment", False,
                     "two processes of the job run different Open MPI versions: the nodes' installations differ",
                     "which mpirun and ompi_info --version on each node; one installation for the whole job"),
    "ompi-launch-limit": ("environment", False,
                          "mpirun could not launch the program on a node: a system limit there (open files, sockets, "
                          "processes), a working directory that is not there or a program it cannot access",
                          "ulimit -n / -u on the node; the working directory and the program on every node (a shared "
                          "file system, its permissions)"),
    "ompi-cuda-lib": ("environment", False,
                      "Open MPI could not load the CUDA library its CUDA support needs: the driver or toolkit "
                      "library is not on that node's library path",
                      "ls the libcuda.so it names on the node; LD_LIBRARY_PATH, or the nvidia driver on that node"),
    "ompi-too-many-procs": ("code", True,
                            "mpirun was asked for more processes (or cpus per process) than the allocation has slots: "
                            "the launch command does not fit the allocation",
                            "match -np (and --map-by ... :PE=) to the allocation (sbatch --ntasks, a hostfile's "
                            "slots), or --oversubscribe if meant"),
    "ompi-daemon-lost": ("node", True,
                         "mpirun lost a daemon (orted) on another node, or could not start one: the node died, the "
                         "network between the nodes, or the daemon could not run there",
                         "the node's kernel log and state (sinfo -R, dmesg), ssh/srun to it, the same Open MPI there"),
    "ompi-init-failed": ("environment", True,
                         "an MPI process failed in MPI_Init (its transports, the runtime): the lines before it say "
                         "which part",
                         "the first error above it (a transport, a PMI, a library); ompi_info on that node"),
    "ompi-init-twice": ("code", False,
                        "the program initialized MPI twice (MPI_Init after MPI_Finalize, or twice): the code",
                        "the code's MPI_Init/MPI_Finalize calls (one of each per process; mpi4py initializes on "
                        "import)"),
    "slurm-refused": ("scheduler", False,
                      "Slurm refused the request: a partition, account, QOS, time, node or resource limit the job's "
                      "request does not meet (the same request is refused again)",
                      "fit the request to what the partition and account allow: sinfo -p PART, sacctmgr show assoc "
                      "user=$USER, scontrol show partition"),
    "slurm-time-killed": ("scheduler", False,
                          "Slurm killed the job at its time limit",
                          "ask for more time (--time) or checkpoint and resume; sacct -j JOB -o Elapsed,Timelimit"),
    "slurm-node-killed": ("node", False,
                          "Slurm killed the job because a node of it failed",
                          "sacct -j JOB -o NodeList, sinfo -R: resubmit without that node (--exclude, submit "
                          "--retries)"),
    "slurm-node-setup": ("node", False,
                         "slurmd could not set the job up on a node (its prolog, its directory, its user or its "
                         "environment there): that node's setup, not the job",
                         "the node's slurmd log and sinfo -R; resubmit without it (--exclude) and tell the admins"),
    "slurm-version": ("environment", False,
                      "Slurm's client and daemons (or the MPI plugin asked for) do not match this installation",
                      "srun --version against the cluster's; srun --mpi=list for the plugins it has"),
    "mpich-nomem": ("oom", False,
                    "MPICH could not allocate memory: the host ran out of memory",
                    "less host memory per rank (fewer ranks per node, smaller buffers), or more --mem"),
    # weak: a rank past the size is as often the launch (fewer processes than the program expects, another MPI's
    # mpirun starting singletons) as the code's call (heldout-fresh3's specfem3d-999: an MPI installation)
    "mpich-arg": ("code", True,
                  "an MPI call got an argument MPICH's check refused (a count, rank, tag, root, datatype or "
                  "operation): the code's call, or a launch that started fewer processes than the program expects",
                  "the MPI call in its error stack and the arguments it was given (the rank and size it assumed)"),
    "mpich-sock": ("network", False,
                   "MPICH could not connect to another process's address: the network between the nodes or the "
                   "interface it picked",
                   "the interface (FI_TCP_IFACE, MPIR_CVAR_CH3_INTERFACE_HOSTNAME); nc -zv between the nodes"),
    "mpich-comm-fail": ("peer", False,
                        "MPICH lost its connection to another rank: that rank died first, or the link broke",
                        "the other rank's own log: the first one to fail is the cause"),
    "mpich-shm": ("environment", False,
                  "MPICH could not set up shared memory on the node (/dev/shm full or too small)",
                  "df -h /dev/shm on the node; docker --shm-size / --ipc=host"),
    "ucx-peer": ("peer", False,
                 "UCX lost its endpoint to another process (reset, rejected or timed out): that process died first "
                 "or the link broke",
                 "the other process's log; if it lives, clusterdoc check --perf on both nodes (the fabric)"),
    "ucx-network": ("network", False,
                    "UCX could not connect some endpoints: no transport reaches the other process",
                    "UCX_TLS and UCX_NET_DEVICES on both nodes (ucx_info -d); the interfaces they share"),
}  # fmt: skip

# (file, message keys, class); a class of None: not a failure (a warning, a hint, a usage text) or a path that does
# not decide; a message no rule names is left out too
_HELP = "opal/mca/btl/openib/"
RULES: list[tuple[str, frozenset[str], str | None]] = [
    (_HELP + "help-mpi-btl-openib.txt", frozenset({"pp rnr retry exceeded", "srq rnr retry exceeded",
                                                     "pp retry exceeded", "of error event", "of unknown event"}),
     "ompi-ib"),
    (_HELP + "help-mpi-btl-openib.txt", frozenset({"init-fail-no-mem"}), "ompi-locked-memory"),
    (_HELP + "connect/help-mpi-btl-openib-cpc-rdmacm.txt", frozenset({"rdma cm event error",
                                                                     "rdma cm device removal"}), "ompi-ib"),
    ("opal/mca/common/verbs/help-opal-common-verbs.txt", frozenset({"ibv_open_device fail", "ibv_query_device fail"}),
     "ompi-verbs-device"),
    ("opal/mca/btl/tcp/help-mpi-btl-tcp.txt", frozenset({"client connect fail"}), "ompi-tcp"),
    ("opal/mca/btl/tcp/help-mpi-btl-tcp.txt", frozenset({"peer hung up"}), "ompi-peer-gone"),
    ("ompi/mca/bml/r2/help-mca-bml-r2.txt", frozenset({"unreachable proc"}), "ompi-unreachable"),
    ("ompi/runtime/help-mpi-runtime.txt", frozenset({"mpi_init:startup:pml-add-procs-fail"}), "ompi-unreachable"),
    ("ompi/runtime/help-mpi-runtime.txt", frozenset({"mpi_init:startup:internal-failure"}), "ompi-init-failed"),
    ("ompi/runtime/help-mpi-runtime.txt", frozenset({"mpi_init: invoked multiple times"}), "ompi-init-twice"),
    ("ompi/mca/mtl/ofi/help-mtl-ofi.txt", frozenset({"OFI call fail"}), "ompi-ofi"),
    ("ompi/mca/mtl/psm2/help-mtl-psm2.txt", frozenset({"unable to open endpoint", "error polling network"}),
     "ompi-psm2"),
    ("opal/mca/btl/vader/help-btl-vader.txt", frozenset({"sys call fail"}), "ompi-shm-syscall"),
    ("opal/mca/btl/vader/help-btl-vader.txt", frozenset({"cma-different-user-namespace-error"}), "ompi-shm"),
    ("opal/mca/btl/smcuda/help-mpi-btl-smcuda.txt", frozenset({"sys call fail"}), "ompi-shm-syscall"),
    ("opal/mca/shmem/mmap/help-opal-shmem-mmap.txt", frozenset({"sys call fail"}), "ompi-shm-syscall"),
    ("opal/mca/shmem/mmap/help-opal-shmem-mmap.txt", frozenset({"target full"}), "ompi-shm"),
    ("opal/mca/shmem/posix/help-opal-shmem-posix.txt", frozenset({"sys call fail"}), "ompi-shm-syscall"),
    ("opal/mca/shmem/sysv/help-opal-shmem-sysv.txt", frozenset({"sys call fail"}), "ompi-shm-syscall"),
    ("opal/mca/common/sm/help-mpi-common-sm.txt", frozenset({"mmap too small"}), "ompi-shm"),
    ("opal/mca/common/cuda/help-mpi-common-cuda.txt", frozenset({"dlopen failed", "dlsym failed"}), "ompi-cuda-lib"),
    ("orte/mca/plm/rsh/help-plm-rsh.txt", frozenset({"no-local-orted", "agent-not-found"}), "ompi-install"),
    ("orte/mca/plm/slurm/help-plm-slurm.txt", frozenset({"no-srun"}), "ompi-install"),
    ("orte/mca/ess/base/help-ess-base.txt", frozenset({"slurm-error", "slurm-error2"}), "ompi-install"),
    ("orte/mca/oob/tcp/help-oob-tcp.txt", frozenset({"version mismatch"}), "ompi-version"),
    ("orte/tools/orterun/help-orterun.txt", frozenset({"orterun:sys-limit-sockets", "orterun:wdir-not-found",
                                                       "orterun:exe-not-accessible"}), "ompi-launch-limit"),
    ("orte/mca/rmaps/base/help-orte-rmaps-base.txt", frozenset({"orte-rmaps-base:alloc-error",
                                                               "orte-rmaps-base:all-available-resources-used",
                                                               "too-many-cpus-per-rank",
                                                               "orte-rmaps-base:not-all-mapped-alloc"}),
     "ompi-too-many-procs"),
    ("orte/mca/errmgr/base/help-errmgr-base.txt", frozenset({"failed-daemon-launch", "failed-daemon", "node-died",
                                                             "no-connect"}), "ompi-daemon-lost"),
    ("orte/mca/plm/base/help-plm-base.txt", frozenset({"daemon-died-no-signal", "daemon-died-signal-core",
                                                       "daemon-died-signal"}), "ompi-daemon-lost"),
    ("src/common/slurm_errno.c", frozenset({
        "ESLURM_INVALID_PARTITION_NAME", "ESLURM_DEFAULT_PARTITION_NOT_SET",
        "ESLURM_JOB_MISSING_REQUIRED_PARTITION_GROUP", "ESLURM_REQUESTED_NODES_NOT_IN_PARTITION",
        "ESLURM_TOO_MANY_REQUESTED_CPUS", "ESLURM_INVALID_NODE_COUNT", "ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE",
        "ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE", "ESLURM_INVALID_FEATURE", "ESLURM_INVALID_TASK_MEMORY",
        "ESLURM_INVALID_ACCOUNT", "ESLURM_INVALID_QOS", "ESLURM_INVALID_WCKEY", "ESLURM_INVALID_LICENSES",
        "ESLURM_ACCOUNTING_POLICY", "ESLURM_INVALID_TIME_LIMIT", "ESLURM_RESERVATION_ACCESS",
        "ESLURM_RESERVATION_INVALID", "ESLURM_RESERVATION_NOT_USABLE", "ESLURM_INVALID_CPU_COUNT",
        "ESLURM_PARTITION_NOT_AVAIL", "ESLURM_INVALID_GRES", "ESLURM_QOS_THRES", "ESLURM_BURST_BUFFER_LIMIT",
        "ESLURM_INVALID_BURST_BUFFER_REQUEST", "ESLURM_PARTITION_DOWN", "ESLURM_SUBMISSIONS_DISABLED",
        "ESLURM_INVALID_TRES", "ESLURM_INVALID_GRES_TYPE", "ESLURM_INVALID_TIME_MIN_LIMIT",
        "ESLURM_BAD_THREAD_PER_CORE", "ESLURM_INSUFFICIENT_GRES", "ESLURM_INVALID_ASSOC",
        "ESLURM_INVALID_RELATIVE_QOS", "ESLURM_MAX_JOB_COUNT", "ESLURM_BATCH_CONSTRAINT", "ESLURM_RESERVATION_MAINT",
        "ESLURM_NODE_NOT_AVAIL", "ESLURM_STEP_LIMIT"}), "slurm-refused"),
    ("src/common/slurm_errno.c", frozenset({"ESLURM_JOB_TIMEOUT_KILLED"}), "slurm-time-killed"),
    ("src/common/slurm_errno.c", frozenset({"ESLURM_JOB_NODE_FAIL_KILLED", "ESPANK_NODE_FAILURE"}),
     "slurm-node-killed"),
    ("src/common/slurm_errno.c", frozenset({"ESLURMD_PROLOG_FAILED", "ESLURMD_CREATE_BATCH_DIR_ERROR",
                                            "ESLURMD_SETUP_ENVIRONMENT_ERROR", "ESLURMD_SET_UID_OR_GID_ERROR"}),
     "slurm-node-setup"),
    ("src/common/slurm_errno.c", frozenset({"SLURM_PROTOCOL_VERSION_ERROR", "SLURM_MPI_PLUGIN_NAME_INVALID"}),
     "slurm-version"),
    ("src/mpi/errhan/errnames.txt", frozenset({"**nomem", "**nomem2"}), "mpich-nomem"),
    ("src/mpi/errhan/errnames.txt", frozenset({"**count", "**countneg", "**rank", "**rankdup", "**rankarray",
                                               "**tag", "**root", "**dtypenull", "**argneg", "**argnonpos",
                                               "**argrange", "**argarrayneg", "**buf_inplace", "**opundefined",
                                               "**bufnull", "**dtype", "**comm", "**commnull", "**bufalias"}),
     "mpich-arg"),
    ("src/mpi/errhan/errnames.txt", frozenset({"**sock_connect"}), "mpich-sock"),
    ("src/mpi/errhan/errnames.txt", frozenset({"**comm_fail", "**comm_fail_conn"}), "mpich-comm-fail"),
    ("src/mpi/errhan/errnames.txt", frozenset({"**shmsize", "**shm_open"}), "mpich-shm"),
    ("src/ucs/type/status.c", frozenset({"UCS_ERR_CONNECTION_RESET", "UCS_ERR_REJECTED", "UCS_ERR_ENDPOINT_TIMEOUT"}),
     "ucx-peer"),
    ("src/ucs/type/status.c", frozenset({"UCS_ERR_SOME_CONNECTS_FAILED"}), "ucx-network"),
]  # fmt: skip

# how a tool prints a table's string: Slurm's clients through error() ("srun: error: ...: %s", slurm_strerror),
# UCX through its logger (ucs_error: "... UCX  ERROR ...: %s", ucs_status_string); the rest print the text itself
PRINTED = {"slurm": "error: {}", "ucx": "UCX  ERROR {}"}
TOOL = {"open-mpi/ompi": "ompi", "SchedMD/slurm": "slurm", "pmodels/mpich": "mpich", "openucx/ucx": "ucx"}


def classify(path: str, key: str) -> str | None:
    base = key.split(" ")[0]  # MPICH's key with its arguments' types: **nomem %s %d -> **nomem
    for file, keys, cls in RULES:
        if path == file and (key in keys or base in keys):
            return cls
    return None


def _sample(fmt: str) -> str:
    """The format string as a line it prints (its holes filled), to ask the learned signatures."""
    return HOLE.sub(lambda m: "1" if m.group(0)[-1] in "diuxXn" else "X", fmt.replace("\\n", " "))


def needles_of(tool: str, fmt: str, keys: tuple[str, ...]) -> tuple[tuple[str, ...], bool] | None:
    """(needles, lower): the message's longest fixed pieces, the first one holding a pre-check key (and >= 12
    characters), with the tool's marker where it prints one; None where no piece is distinctive enough."""
    if tool == "ucx":  # a status string alone is too generic: UCX's name beside it (ucp_..., pml_ucx, UCX ERROR)
        status = fmt.lower()
        if any(k in status for k in keys) and len(status) >= 12:
            return (status, "ucx"), True
        return ("ucx  error", status), True
    ps = [p for p in pieces(fmt) if len(p) >= 5]
    if tool == "slurm":  # Slurm's error(): "sbatch: error: ...", "srun: error: ...", "slurmstepd: error: ..."
        return ((ps[0], "error: ") if any(k in ps[0].lower() for k in keys) else ("error: ", ps[0])), False
    least = 20 if tool == "mpich" else 12  # MPICH's short classes ("Invalid rank", "Out of memory") are anyone's
    first = next((p for p in ps if len(p) >= least and any(k in p.lower() for k in keys)), None)
    if first is None:
        return None
    rest = [p for p in ps if p != first][:2]
    return (first, *rest), False


def _slug(tool: str, key: str) -> str:
    if tool == "mpich":
        key = key.split(" ")[0]  # its arguments' types: **nomem %s %d -> **nomem
    key = re.sub(r"^(e?slurm_|espank_)", "", key.lower()).replace("eslurmd_", "slurmd_")
    return re.sub(r"[^a-z0-9]+", "-", key).strip("-")


def build(raw, keys: tuple[str, ...], known) -> tuple[list[dict], dict[str, int]]:
    """The rows of the table from the raw list; `known(line)` is the learned signature a line already matches."""
    rows, seen, skipped = [], set(), {"known": 0, "no key": 0, "duplicate": 0, "covered": 0}
    for repo, commit, path, no, key, msg in raw:
        cls = classify(path, key)
        if cls is None:
            continue
        tool = TOOL[repo]
        got = needles_of(tool, msg, keys)
        if got is None:
            skipped["no key"] += 1
            continue
        needles, lower = got
        if needles in seen:
            skipped["duplicate"] += 1
            continue
        if known(_sample(PRINTED.get(tool, "{}").format(msg))) is not None:
            skipped["known"] += 1
            continue
        seen.add(needles)
        where = f"{Path(path).parent.name}-" if tool == "ompi" else ""  # the component: vader, openib, rmaps ...
        rows.append({"name": f"cat-{tool}-{where}{_slug(tool, key)}", "cls": cls, "needles": needles,
                     "lower": lower, "learned": PRINTED.get(tool, "{}").format(msg),
                     "source": f"https://github.com/{repo}/blob/{commit}/{path}#L{no}"})  # fmt: skip
    # a row another row of its class always fires for (its needles inside this one's) adds nothing: fewer rows
    def covers(o: dict, r: dict) -> bool:
        return o is not r and o["lower"] == r["lower"] and all(any(n in m for m in r["needles"]) for n in o["needles"])

    dropped = [r for r in rows if any(o["cls"] == r["cls"] and covers(o, r) for o in rows)]
    skipped["covered"] = len(dropped)
    rows = [r for r in rows if r not in dropped]
    count: dict[str, int] = {}
    for r in rows:  # the same key twice (Open MPI's "sys call fail" in three files, MPICH's with its arguments)
        count[r["name"]] = count.get(r["name"], 0) + 1
        if count[r["name"]] > 1:
            r["name"] += f"-{count[r['name']]}"
    return rows, skipped


def render(rows: list[dict]) -> str:
    out = module_head([
        '"""The catalogue of the MPI launchers\', Slurm\'s and the fabric libraries\' own failure messages, read from',
        "their source (Open MPI's help files, Slurm's error table, MPICH's error classes, UCX's status strings):",
        "made by scripts/catalogue_mpi.py from tests/fixtures/why/catalogue/mpi.tsv; do not edit by hand.",
        "",
        "The category is the code path's (the component and the error path that print the message: CLASSES in the",
        "script), not a log's; only messages no learned signature knows. A fallback: why/signatures.py puts it last.",
    ])  # fmt: skip
    out += classes_block(CLASSES, (r["cls"] for r in rows))
    out.append("# name, class, needles, lowercase, the format string, its source")
    out.append("ROWS: list[tuple[str, str, tuple[str, ...], bool, str, str]] = [")
    for r in rows:
        needles = "(" + ", ".join(repr(n) for n in r["needles"]) + ("," if len(r["needles"]) == 1 else "") + ")"
        out.append(f"    ({r['name']!r}, {r['cls']!r},")
        out.append(f"     {lit(needles, '     ') if len(needles) > 110 else needles}, {r['lower']!r},")
        out.append("     " + lit(r["learned"], "     ") + ",")
        out.append("     " + lit(r["source"], "     ") + "),")
    out += signatures_tail("S(name, cat, needles, meaning, learned, source, step, weak=weak, lower=lower)",
                           "for name, cls, needles, lower, learned, source in ROWS")  # fmt: skip
    return "\n".join(out) + "\n"


def generate(raw_path: Path = RAW) -> tuple[str, list[dict], dict[str, int]]:
    """The table's module text from the raw list, with the learned signatures (all but this table) as `known`."""
    rows, skipped = build(read_raw(raw_path), picked_keys(), learned_matcher())
    return render(rows), rows, skipped


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--extract", type=Path, help="a folder of mirrors (<owner>+<name>/repo): read the sources first")
    args = ap.parse_args(argv)
    if args.extract:
        raw = extract(args.extract)
        write_raw(raw)
        print(f"{len(raw)} messages -> {RAW.relative_to(ROOT)}")
    text, rows, skipped = generate()
    TABLE.write_text(text, encoding="utf-8")
    by: dict[str, int] = {}
    for r in rows:
        cat, weak = CLASSES[r["cls"]][:2]
        by[f"{cat}{' (weak)' if weak else ''}"] = by.get(f"{cat}{' (weak)' if weak else ''}", 0) + 1
    print(f"{len(rows)} rows -> {TABLE.relative_to(ROOT)}: {dict(sorted(by.items()))}; left out: {skipped}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
