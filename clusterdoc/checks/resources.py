"""resources: /dev/shm, memlock and open-files limits, free space where the job writes.

Thresholds (see README):
  /dev/shm size < 1 GiB: fail (Docker's default 64 MiB breaks NCCL's shared-memory transport, "unhandled system
  error"; DataLoader workers pass batches through it); < 2 GiB: warn; free < 512 MiB: fail (full of leftovers).
  memlock (ulimit -l), only with InfiniBand: unlimited ok; < 64 MiB fail (RDMA cannot pin NCCL's buffers);
  other finite limits warn.
  open files (ulimit -n soft) < 4096: warn (DataLoader workers and NCCL's sockets run out: "Too many open files").
  free space of the temp dir and the job folder: < 1 GiB fail, < 5 GiB warn (compile caches, extension builds, logs).
"""

from __future__ import annotations

from clusterdoc.checks import FAIL, OK, WARN, Finding, finding, probe_errors
from clusterdoc.checks.spec import Check

CHECK = "resources"
SHM_FAIL_MIB, SHM_WARN_MIB, SHM_FREE_FAIL_MIB = 1024, 2048, 512
MEMLOCK_FAIL_KIB = 64 << 10
NOFILE_WARN = 4096
SPACE_FAIL_MIB, SPACE_WARN_MIB = 1024, 5120


def _size(mib: int) -> str:
    return f"{mib / 1024:.1f} GiB" if mib >= 1024 else f"{mib} MiB"


def check(node: str, facts: dict) -> list[Finding]:
    out = probe_errors(node, facts, CHECK)
    r = facts.get("resources")
    if not r:
        return out
    shm = r.get("shm")
    if not shm or shm.get("total_mib") is None:
        out.append(
            finding(
                node,
                CHECK,
                FAIL,
                f"no /dev/shm on {node}: NCCL's shared-memory transport and DataLoader workers need it",
                "mount a tmpfs on /dev/shm (in Docker: --shm-size=16g or --ipc=host)",
            )
        )
    elif shm["total_mib"] < SHM_WARN_MIB:
        bad = shm["total_mib"] < SHM_FAIL_MIB
        out.append(
            finding(
                node,
                CHECK,
                FAIL if bad else WARN,
                f"/dev/shm on {node} is {_size(shm['total_mib'])} "
                f"(below {_size(SHM_FAIL_MIB if bad else SHM_WARN_MIB)}): "
                'NCCL fails with "unhandled system error" when its shared memory runs out, and DataLoader '
                "workers die with a bus error",
                "give /dev/shm more room: in Docker --shm-size=16g (or --ipc=host), in Kubernetes an "
                "emptyDir with medium: Memory; on a host: mount -o remount,size=50% /dev/shm",
            )
        )
    elif (shm.get("free_mib") or 0) < SHM_FREE_FAIL_MIB:
        out.append(
            finding(
                node,
                CHECK,
                FAIL,
                f"/dev/shm on {node} is nearly full: {_size(shm.get('free_mib') or 0)} "
                f"free of {_size(shm['total_mib'])}",
                f"remove what dead jobs left in /dev/shm on {node} (ls -la /dev/shm: nccl-*, torch_*, "
                "psm_*) once no job runs",
            )
        )
    else:
        out.append(
            finding(node, CHECK, OK, f"/dev/shm {_size(shm['total_mib'])} ({_size(shm.get('free_mib') or 0)} free)")
        )
    memlock = r.get("memlock_kib")
    ib = (facts.get("net") or {}).get("ib") or []
    if ib and memlock is not None and memlock != -1:
        bad = memlock < MEMLOCK_FAIL_KIB
        out.append(
            finding(
                node,
                CHECK,
                FAIL if bad else WARN,
                f"memlock limit (ulimit -l) on {node} is {memlock} KiB with InfiniBand present: RDMA must "
                "pin NCCL's buffers"
                + (
                    ' and cannot ("Cannot allocate memory" / ibv_reg_mr failed)'
                    if bad
                    else "; unlimited is what NCCL expects"
                ),
                "set memlock unlimited: '* - memlock unlimited' in /etc/security/limits.conf, "
                "LimitMEMLOCK=infinity for slurmd/sshd (systemd), PropagateResourceLimitsExcept=MEMLOCK "
                "in slurm.conf; in Docker --ulimit memlock=-1",
            )
        )
    elif memlock is not None:
        out.append(
            finding(
                node,
                CHECK,
                OK,
                f"memlock {'unlimited' if memlock == -1 else f'{memlock} KiB'}"
                + ("" if ib else " (no InfiniBand: not needed)"),
            )
        )
    nofile = r.get("nofile")
    if nofile is not None and nofile != -1 and nofile < NOFILE_WARN:
        hard = r.get("nofile_hard")
        out.append(
            finding(
                node,
                CHECK,
                WARN,
                f"open-files limit (ulimit -n) on {node} is {nofile} (below {NOFILE_WARN};"
                f" hard limit {'unlimited' if hard == -1 else hard}): DataLoader workers and NCCL's sockets "
                'run out ("Too many open files")',
                "raise it: 'ulimit -n 65536' in the job script when the hard limit allows, else "
                "'* - nofile 65536' in /etc/security/limits.conf or LimitNOFILE=65536 for slurmd/sshd",
            )
        )
    elif nofile is not None:
        out.append(finding(node, CHECK, OK, f"open files {'unlimited' if nofile == -1 else nofile}"))
    for path, sp in sorted((r.get("space") or {}).items()):
        free = (sp or {}).get("free_mib")
        if free is None:
            out.append(
                finding(
                    node,
                    CHECK,
                    WARN,
                    f"free space of {path} on {node} unknown: {(sp or {}).get('error')}",
                    f"check that {path} exists on {node}",
                )
            )
        elif free < SPACE_WARN_MIB:
            bad = free < SPACE_FAIL_MIB
            out.append(
                finding(
                    node,
                    CHECK,
                    FAIL if bad else WARN,
                    f"{path} on {node} has {_size(free)} free (below "
                    f"{_size(SPACE_FAIL_MIB if bad else SPACE_WARN_MIB)}): compile caches, extension builds "
                    'and logs fail with "No space left on device"',
                    f"free space in {path} on {node} (du -xsh {path}/* | sort -h), or point TMPDIR at a larger disk",
                )
            )
        else:
            out.append(finding(node, CHECK, OK, f"{path}: {_size(free)} free"))
    return out


CHECKS = (
    Check(
        "resources",
        120,
        "/dev/shm, memlock and open-file limits, free space",
        reads=("resources",),
        probe_errors={"resources": WARN},
        node=lambda c: check(c.node, c.facts),
    ),
)
