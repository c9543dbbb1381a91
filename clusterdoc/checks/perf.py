"""perf (--perf): is one node slower than the others? Its compute, its memory, its links.

Doctor sends RANK_SCRIPT to every node (python3 -, over SSH, one rank per node, one torch.distributed
group: NCCL where the node has a GPU, gloo otherwise). Each rank times a fixed matmul for COMPUTE_SECONDS
(FLOP/s) and reports its memory; then rank 0 plans pair rounds with linkplan (this script carries its
source) and broadcasts each round; in a round the ranks of each pair exchange `bytes` both ways at once
(batch_isend_irecv), `iters` times after one warm-up, while the other pairs do the same.

busbw is nccl-tests' figure for sendrecv_perf: busbw = algbw = bytes / time (each rank sends and receives
`bytes` per iteration; the factor is 1, as for an all_reduce of two ranks, 2(n-1)/n). A pair's time is the
slower of its two ranks'. This module parses the ranks' output and judges it; it runs nothing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

from clusterdoc.checks import FAIL, OK, WARN, Finding, finding, linkplan
from clusterdoc.checks.spec import Check, Context

CHECK = "perf"
COMPUTE_SECONDS = 1.5  # five windows of 0.3 s
DEFAULT_MIB = 16
DEFAULT_ITERS = 2
DEFAULT_COMPUTE_FRACTION = 0.2  # nodes this far below the median compute (or memory) are named
HELD_BACK = "its compute is slow too, which can hold its transfers back (see its compute finding)"
FIX_REMOVE = "remove it from the hostfile until then: a synchronous job runs at the pace of its slowest rank"

DRIVER = r"""
import datetime, json, os, sys, time
started = time.monotonic()
rank, world, master, port = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
timeout, nbytes, iters = float(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
fraction = float(sys.argv[8])
min_busbw = float(sys.argv[9]) if sys.argv[9] != "-" else None
seconds = float(sys.argv[10])
round_timeout = float(sys.argv[11])
join_seconds = float(sys.argv[12])
import torch
import torch.distributed as dist
gpu = torch.cuda.is_available()
backend = "nccl" if gpu else "gloo"
dev = torch.device("cuda", 0) if gpu else torch.device("cpu")
if gpu:
    torch.cuda.set_device(0)
else:
    torch.set_num_threads(1)  # one core's figure: threads of ranks sharing cores would measure each other


def sync():
    if gpu:
        torch.cuda.synchronize()


def flops():
    # the best rate over windows of 0.3 s (three CFS periods of 100 ms: a CPU quota shows in every window,
    # while a moment of contention from other processes does not)
    n = 4096 if gpu else 256
    a, b = torch.randn(n, n, device=dev), torch.randn(n, n, device=dev)
    torch.mm(a, b)
    sync()
    best, start = 0.0, time.monotonic()
    while time.monotonic() - start < seconds:
        reps, t0 = 0, time.monotonic()
        while time.monotonic() - t0 < min(0.3, seconds):
            for _ in range(4):
                torch.mm(a, b)
            reps += 4
            sync()
        best = max(best, reps * 2.0 * n ** 3 / (time.monotonic() - t0))
    return best


def cpu_quota():
    # CPUs this process may use under its cgroup's CPU quota (v1 cpu.cfs_quota_us, v2 cpu.max); None: no quota
    try:
        lines = [line.rstrip("\n").split(":", 2) for line in open("/proc/self/cgroup")]
        for hid, ctrls, path in lines:
            if "cpu" in ctrls.split(","):
                for base in ("/sys/fs/cgroup/" + ctrls, "/sys/fs/cgroup/cpu"):
                    try:
                        quota = int(open(base + path + "/cpu.cfs_quota_us").read())
                        return quota / int(open(base + path + "/cpu.cfs_period_us").read()) if quota > 0 else None
                    except OSError:
                        pass
        for hid, ctrls, path in lines:
            if hid == "0":
                quota, period = open("/sys/fs/cgroup" + path + "/cpu.max").read().split()
                return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError, ZeroDivisionError):
        pass
    return None


def memory_mib():
    if gpu:
        return torch.cuda.get_device_properties(0).total_memory // 2 ** 20
    with open("/proc/meminfo") as fh:
        return int(fh.read().split("MemTotal:")[1].split()[0]) // 1024


def exchange(peer, group):
    # in a group of the pair alone, the whole exchange (warm-up included) bounded by round_timeout: a lossy link
    # (a node dropping packets) stalls this pair only, not every rank's next collective, and is measured as at
    # most bytes / round_timeout
    send = torch.ones(max(1, nbytes // 4), device=dev)
    recv = torch.empty_like(send)
    ops = [dist.P2POp(dist.isend, send, peer, group=group), dist.P2POp(dist.irecv, recv, peer, group=group)]
    deadline = time.monotonic() + round_timeout

    def once():
        for req in dist.batch_isend_irecv(ops):
            left = deadline - time.monotonic()
            if left <= 0 or not req.wait(datetime.timedelta(seconds=left)):
                raise TimeoutError("the pair's transfer did not finish in time")
    t0 = time.monotonic()
    try:
        once()  # warm-up: both ends are here
        sync()
        t0 = time.monotonic()
        for _ in range(iters):
            once()
        sync()
    except Exception:  # the pair's transfer did not finish in time: its group is left behind
        stalled.append(members[peer])
        return max(round_timeout, time.monotonic() - t0)
    return time.monotonic() - t0


# Nothing that crosses between ranks is unpickled: the plan and the times travel as bounded JSON bytes in
# fixed-size uint8 tensors (a length word, then the text); a peer's bytes that are not the expected JSON are
# noted under `malformed` (by the peer's rank) and never executed or trusted. Each rank prints only its own
# figures. `stalled`: peers whose transfer did not finish within round_timeout.


def encode(obj):
    return json.dumps(obj).encode()


def decode(buf, src, what, check):
    data = bytes(buf.cpu().tolist())
    n = int.from_bytes(data[:4], "little")
    try:
        value = json.loads(data[4:4 + n]) if n <= len(data) - 4 else None
    except (ValueError, RecursionError):
        value = None
    if value is None or not check(value):
        malformed.setdefault(str(src), "its %s was not the expected JSON record" % what)
        return None
    return value


def packed(obj, cap):
    data = encode(obj)[:cap - 4]
    data = len(data).to_bytes(4, "little") + data.ljust(cap - 4, b" ")
    return torch.tensor(list(data), dtype=torch.uint8, device=dev)


def bcast_json(obj, cap, what, check):
    buf = packed(obj if me == 0 else None, cap)
    dist.broadcast(buf, src=0)
    return decode(buf, 0, what, check) if me else obj


def gather_json(obj, cap, what, check):
    got = [torch.empty(cap, dtype=torch.uint8, device=dev) for _ in range(size)]
    dist.all_gather(got, packed(obj, cap))
    return [obj if i == me else decode(t, members[i], what, check) for i, t in enumerate(got)]


def is_plan(v):
    return isinstance(v, list) and len(v) <= size and all(
        isinstance(p, list) and len(p) == 2 and all(type(x) is int and 0 <= x < size for x in p) and p[0] != p[1]
        for p in v) and len({x for p in v for x in p}) == 2 * len(v)


def is_seconds(v):
    return v == [] or (isinstance(v, list) and len(v) == 1 and isinstance(v[0], (int, float)))


def report():
    # after each step, so that what was measured reaches the head even when its deadline stops this rank later
    out["malformed"] = malformed
    out["stalled"] = stalled
    print("CLUSTERDOC-PERF " + json.dumps(out))
    sys.stdout.flush()


def is_members(v):
    return (isinstance(v, list) and 0 < len(v) <= world and v[0] == 0 and len(set(v)) == len(v)
            and all(type(x) is int and 0 <= x < world for x in v))


def join():
    # Our own rendezvous, with a deadline: rank 0 waits join_seconds at most for the others to join, then the
    # ranks that joined are the world. A node whose rank starts late (its SSH session and python slowed by a
    # lossy link) is left out and says so, instead of holding every other rank until all time out.
    wait = datetime.timedelta(seconds=max(join_seconds, 1.0))
    store = dist.TCPStore(master, port, None, rank == 0, timeout=wait, wait_for_workers=False)
    if rank == 0:
        keys = ["join/%d" % r for r in range(1, world)]
        joined = set()
        while len(joined) < world - 1 and time.monotonic() < started + join_seconds:
            joined |= {r for r, k in enumerate(keys, 1) if r not in joined and store.check([k])}
            time.sleep(0.05)
        members = [0] + sorted(joined)
        store.set("members", json.dumps(members))
        return store, members
    store.set("join/%d" % rank, "1")
    store.wait(["members"], datetime.timedelta(seconds=timeout))
    try:
        members = json.loads(store.get("members")[:64 + 8 * world])
    except (ValueError, RecursionError):
        members = None
    if not is_members(members):
        malformed.setdefault("0", "its member list was not the expected JSON record")
        members = None
    return store, members


malformed = {}
stalled = []
out = {"rank": rank, "world": world, "backend": backend, "bytes": nbytes, "iters": iters, "rounds": [],
       "join_seconds": join_seconds}
try:
    store, members = join()
except Exception as err:  # rank 0's store did not take this rank in time (rank 0's own failure is its traceback)
    if rank == 0:
        raise
    store, members = None, None
    out["join_error"] = str(err)[:200]
out["members"] = members
if members is None or rank not in members:  # joined after rank 0 stopped waiting (or was told nonsense)
    out["late"] = True
    report()
    os._exit(0)
me, size = members.index(rank), len(members)
store.set_timeout(datetime.timedelta(seconds=timeout))
dist.init_process_group(backend, store=dist.PrefixStore("perf", store), rank=me, world_size=size,
                        timeout=datetime.timedelta(seconds=timeout))
dist.barrier()  # every rank computes at the same time
out.update(flops=flops(), mem_mib=memory_mib(), cpu_quota=cpu_quota())
report()
plan_cap = 64 + 24 * size


class OutOfTime(Exception):
    pass


def run_round(pairs):
    # rank 0 starts no round that could not end before this rank's time is up (a round: the plan, the pairs'
    # groups, the transfer bounded by round_timeout, the times gathered; the slack covers the lossy node's share)
    if pairs and time.monotonic() + 2 * round_timeout + 5 > started + timeout:
        raise OutOfTime()
    pairs = bcast_json(pairs, plan_cap, "pair plan", is_plan) or []
    if not pairs:
        return None
    groups = [dist.new_group([a, b], timeout=datetime.timedelta(seconds=max(timeout / 2, round_timeout)))
              for a, b in pairs]
    dist.barrier()
    mine = [(b if a == me else a, g) for (a, b), g in zip(pairs, groups) if me in (a, b)]
    took_me = exchange(*mine[0]) if mine else None
    peer = [members[p] for p, _ in mine]  # records name peers by their rank in the hostfile's order
    out["rounds"].append([peer[0] if peer else -1, took_me])
    report()
    took = gather_json([took_me] if peer else [], 64, "transfer time", is_seconds)
    secs = [t[0] if t and t[0] > 0 else float("inf") for t in (x or [] for x in took)]
    return [nbytes * iters / max(secs[a], secs[b], 1e-9) for a, b in pairs]


if me == 0:
    try:
        localize(size, run_round, fraction, min_busbw)
    except OutOfTime:
        out["out_of_time"] = True
    run_round([])
else:
    while run_round(None) is not None:
        pass
report()
if stalled:  # a pair's group still holds the transfer that did not finish: no teardown to wait for
    os._exit(0)
dist.destroy_process_group()
"""


def rank_script() -> str:
    """linkplan's source (the planner rank 0 runs), then the driver."""
    return Path(linkplan.__file__).read_text() + "\n" + DRIVER


def round_timeout(timeout: float) -> float:
    """How long one pair's whole transfer (warm-up included) may take before it counts as stalled, at most
    bytes / this: a twelfth of the rank's time after start-up, 3 to 10 s. A healthy pair moves --perf-mib in a
    fraction of that, and a stalled pair is far below any floor already, so waiting longer tells nothing more
    (issue 38: 30 % packet loss on one node; each stalled round costs this much)."""
    return min(10.0, max(3.0, (timeout - 15.0) / 12))


def join_seconds(timeout: float) -> float:
    """How long rank 0 waits for the other ranks to join (from its own start): what is left after the compute and
    three rounds with a stalled pair, at least 10 s. A rank that joins later is left out and named as late (a node
    whose link drops packets is slow to log in and start python over it)."""
    return max(10.0, timeout - 16.0 - 4 * round_timeout(timeout))


def rank_argv(rank: int, world: int, master: str, port: int, timeout: float, opts) -> list[str]:
    floor = "-" if opts.min_busbw is None else f"{opts.min_busbw * 1e9 / 8:g}"  # Gb/s -> bytes/s
    return [
        str(rank), str(world), master, str(port), f"{timeout:g}", str(int(opts.perf_mib * 2**20)),
        str(DEFAULT_ITERS), f"{opts.busbw_fraction:g}", floor, f"{COMPUTE_SECONDS:g}", f"{round_timeout(timeout):g}",
        f"{join_seconds(timeout):g}",
    ]  # fmt: skip


def parse_rank_output(status: str, stdout: str, stderr: str, message: str = "") -> dict:
    """A rank prints its record after each step: the last one counts. One cut short by the head's deadline (the
    last line, when the command timed out) falls back to the one before; any other that is not a JSON object is
    the rank's failure."""
    lines = [x for x in stdout.splitlines() if x.startswith("CLUSTERDOC-PERF ")]
    for i, line in enumerate(reversed(lines)):
        try:
            record = json.loads(line[len("CLUSTERDOC-PERF ") :][:4_000_000])
        except (ValueError, RecursionError):
            record = None
        if isinstance(record, dict):
            return dict(record, ok=True, **({"cut": True} if status == "timeout" else {}))
        if not (i == 0 and status == "timeout"):
            return {"ok": False, "message": "its output line is not a JSON object"}
    tail = (stderr.strip().splitlines() or [message or status])[-1]
    return {"ok": False, "message": tail[:300] if status == "ok" else (message or status)}


def _num(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _record(result: dict, node: str, rank: int, world: int) -> dict | None:
    r = (result.get("ranks") or {}).get(node)
    ok = isinstance(r, dict) and r.get("ok") and r.get("rank") == rank and r.get("world") == world
    return r if ok else None


def figures(result: dict) -> dict | None:
    """Each node's own record, checked (a node's output is untrusted, and a node speaks only for itself): its
    compute, memory and CPU quota; a pair's test (a, b, busbw, round) only where both ranks say they met each
    other in that round, timed by the slower of their own two times; None when no node gave a usable record."""
    world, order = result.get("world"), result.get("order")
    if not isinstance(world, int) or not isinstance(order, list) or len(order) != world or world < 1:
        return None
    recs = [_record(result, n, i, world) for i, n in enumerate(order)]
    # late: left out by rank 0 (its record says) and by its own word, or without a record of its own (rank 0
    # alone cannot take a node that measured out of the test)
    taken = _members(recs[0], world)
    late = [i for i, r in enumerate(recs) if i not in taken and (r is None or r.get("late"))]
    members = [i for i in range(world) if i not in late]
    recs = [None if r is None or r.get("late") else r for r in recs]
    if not any(recs):
        return None
    flops = [_num(r.get("flops")) if r else None for r in recs]
    mem = [_num(r.get("mem_mib")) if r else None for r in recs]
    quota = [_num(r.get("cpu_quota")) if r else None for r in recs]
    cap = linkplan.max_rounds(world) + 1
    rounds: list[list[tuple]] = []
    for r in recs:
        met: list[tuple] = []
        claimed = r.get("rounds") if r else None
        for x in claimed[:cap] if isinstance(claimed, list) else []:
            ok = isinstance(x, list) and len(x) == 2 and type(x[0]) is int and 0 <= x[0] < world
            secs = _num(x[1]) if ok else None
            met.append((x[0], secs) if ok and secs is not None and secs > 0 else (None, None))
        rounds.append(met)
    tests = []
    for a in range(world):
        for k, (b, ta) in enumerate(rounds[a]):
            if b is None or b <= a or k >= len(rounds[b]) or rounds[b][k][0] != a:
                continue
            ra, rb = recs[a] or {}, recs[b] or {}
            nbytes = _num(result.get("bytes", ra.get("bytes")))
            n_iters = _num(result.get("iters", ra.get("iters")))
            if ra.get("bytes") != rb.get("bytes") or ra.get("iters") != rb.get("iters"):
                continue  # the two do not claim the same transfer
            if nbytes is None or n_iters is None:
                continue
            tests.append((a, b, nbytes * n_iters / max(ta, rounds[b][k][1] or 0.0), k))
    backends = [r.get("backend") for r in recs if r and r.get("backend") in ("nccl", "gloo")]
    reporters: dict[int, list[int]] = {}
    for i, r in enumerate(recs):
        bad = r.get("malformed") if r else None
        for k in list(bad)[:world] if isinstance(bad, dict) else []:
            if isinstance(k, str) and k.isdigit() and int(k) < world and int(k) != i:
                reporters.setdefault(int(k), []).append(i)
    others = {k: [i for i, r in enumerate(recs) if r and i != k] for k in reporters}
    accused = {k: v for k, v in reporters.items() if v and sorted(v) == others[k]}  # every other finished rank
    nan = {i for i, r in enumerate(recs) if r and any(_nan(r.get(k)) for k in ("flops", "mem_mib", "cpu_quota"))}
    return {
        "flops": flops,
        "mem_mib": mem,
        "cpu_quota": quota,
        "tests": tests,
        "rounds": max((len(x) for x in rounds), default=0),
        "backend": max(set(backends), key=backends.count) if backends else None,
        "finished": [r is not None for r in recs],
        "members": members,
        "join_seconds": _num((recs[0] or {}).get("join_seconds")),
        "malformed": accused,
        "nan": nan,
    }


def _members(rank0: dict | None, world: int) -> list[int]:
    """The ranks that took part: those rank 0 took in before its join deadline (its record says), else all."""
    m = (rank0 or {}).get("members")
    if isinstance(m, list) and m[:1] == [0] and all(type(x) is int and 0 <= x < world for x in m):
        return sorted(set(m))
    return list(range(world))


def _nan(v) -> bool:
    return isinstance(v, float) and not math.isfinite(v)


def gbit(bytes_per_s: float) -> str:
    bits = bytes_per_s * 8
    return f"{bits / 1e9:.3g} Gb/s" if bits >= 1e9 else f"{bits / 1e6:.3g} Mb/s"


def below_median(values: Mapping[str, float | None], fraction: float) -> tuple[float | None, list[str]]:
    """The median of the known values and the names more than `fraction` below it."""
    known = {n: v for n, v in values.items() if v is not None}
    if len(known) < 2:
        return None, []
    med = linkplan.median(list(known.values()))
    return med, [n for n, v in known.items() if v < (1 - fraction) * med]


def check(
    result: dict,
    nodes: list[str],
    facts: dict,
    compute_fraction: float = DEFAULT_COMPUTE_FRACTION,
    busbw_fraction: float = linkplan.DEFAULT_FRACTION,
    min_busbw: float | None = None,
) -> list[Finding]:
    """`result`: {world, master, order: [node by rank], ranks: {node: parsed output}} or {error}.
    min_busbw in Gb/s. facts: the nodes' probe facts (GPU memory comes from there)."""
    if result.get("error"):
        return [finding(n, CHECK, FAIL, f"perf test not run: {result['error']}", "install torch in the nodes' python3")
                for n in nodes]  # fmt: skip
    order = [n for n in result.get("order") or [] if isinstance(n, str)]
    fig = figures(result)
    out: list[Finding] = []
    failed = {n: r.get("message") or _join_error(r) or "its record does not carry its own rank and the world size"
              for n, r in (result.get("ranks") or {}).items() if isinstance(r, dict)}  # fmt: skip
    late = [] if fig is None else [n for i, n in enumerate(order) if i not in fig["members"]]
    unfinished = order or nodes if fig is None else [n for n, done in zip(order, fig["finished"]) if not done]
    for n in late:
        waited = f"the {fig['join_seconds']:g}s" if fig and fig["join_seconds"] else "the time"
        own = "" if n not in failed or (result["ranks"][n] or {}).get("ok") else f"; its own command: {failed[n]}"
        out.append(finding(
            n, CHECK, FAIL,
            f"{n}'s rank did not join the perf test within {waited} rank 0 waits (the other "
            f"{len(fig['members']) if fig else 0} did), so it was not measured: its SSH login and python start over "
            f"its link are that slow, as on a node whose link drops packets or is saturated{own}",
            f"check its link from another node (`ping -c 200 {n}`: packet loss; `ip -s link` on {n}: drops and "
            "errors) and its load; rerun --perf",
        ))  # fmt: skip
    for n in (x for x in unfinished if x not in late):
        why = failed.get(n) or "the test did not finish on another node"
        out.append(finding(n, CHECK, FAIL, f"perf test did not finish (master {result.get('master')}): {why}",
                           "rerun with -v; check that every node reaches the master address and port"))  # fmt: skip
    if fig is None:
        return out + _no_torch(result, nodes)
    for k, seen_by in sorted(fig["malformed"].items()):
        out.append(finding(
            order[k], CHECK, FAIL,
            f"{order[k]}'s rank sent its peers data that is not the expected JSON record (reported by "
            f"{', '.join(order[i] for i in seen_by)}); nothing it sent was run or trusted",
            f"check what runs as python3 on {order[k]} (a modified torch or interpreter); remove it from the hostfile "
            "until then",
        ))  # fmt: skip
    for i in sorted(fig["nan"]):
        out.append(finding(order[i], CHECK, FAIL, f"{order[i]} reported a compute or memory figure that is not a "
                           "finite number (NaN or infinite)", "check its torch install and GPU (a NaN matmul rate "
                           "means the timing or the device misbehaved); rerun --perf"))  # fmt: skip
    compute = _compute(order, fig, facts, compute_fraction)
    held_back = {f["node"] for f in compute if f["status"] == WARN and f["message"].startswith("compute")}
    links = _links(*_taking_part(order, fig), busbw_fraction, min_busbw, held_back)
    for f in links:
        if f["status"] == FAIL and f["node"] in held_back and HELD_BACK not in f["message"]:
            f["message"] += f"; {HELD_BACK}"
    return out + compute + links + _no_torch(result, nodes)


def _join_error(r: dict) -> str | None:
    """A rank that could not join rank 0 (rank 0 gave no member list: it failed or never started)."""
    err = r.get("join_error")
    return f"it could not join rank 0: {err[:200]}" if isinstance(err, str) else None


def _no_torch(result: dict, nodes: list[str]) -> list[Finding]:
    ranked = set(result.get("order") or [])
    why, fix = "no torch on this node: it cannot take a rank", "install torch in the nodes' python3"
    return [finding(n, CHECK, FAIL, why, fix) for n in nodes if n not in ranked]


def _taking_part(order: list[str], fig: dict) -> tuple[list[str], dict]:
    """The nodes that took part (rank 0's members) and their figures, renumbered: the links are judged among
    them, a late node is neither tested nor counted."""
    idx = {x: k for k, x in enumerate(fig["members"])}
    tests = [(idx[a], idx[b], bw, r) for a, b, bw, r in fig["tests"] if a in idx and b in idx]
    return [order[x] for x in fig["members"]], dict(fig, tests=tests)


def _compute(order: list[str], fig: dict, facts: dict, fraction: float) -> list[Finding]:
    flops = dict(zip(order, fig["flops"]))
    mem: dict[str, float | None] = {}
    for n, measured in zip(order, fig["mem_mib"]):
        listed = [g.get("memory_mib") for g in (facts.get(n) or {}).get("gpus") or [] if isinstance(g, dict)]
        gpus = [g for g in listed if isinstance(g, int)]
        mem[n] = float(min(gpus)) if gpus else measured  # the smallest GPU limits the batch
    what = "GPU" if fig.get("backend") == "nccl" else "CPU"
    med, slow = below_median(flops, fraction)
    mmed, small = below_median(mem, fraction)
    # a CPU quota (cgroup) far below the others' (no quota counts as unlimited) is named even when the machine is
    # so busy that the matmul figures cannot tell
    quotas = {n: q if q is not None else math.inf for n, q in zip(order, fig.get("cpu_quota") or [])}
    _, capped = below_median(quotas, fraction)
    out = []
    for n in order:
        f, m, q = flops.get(n), mem.get(n), quotas.get(n, math.inf)
        if (n in slow or n in capped) and f is not None and med:
            vs = f"{100 * (1 - f / med):.0f}% below" if f < med else "against"
            quota = f"; its processes may use {q:.3g} CPUs (a cgroup CPU quota), the others more" if n in capped else ""
            out.append(finding(
                n, CHECK, WARN,
                f"compute {f / 1e9:.3g} GFLOP/s (a fixed matmul on its {what}), {vs} the median "
                f"{med / 1e9:.3g} GFLOP/s of {len(order)} nodes{quota}",
                "check what else runs on it (top, nvidia-smi), its CPU quota or cgroup limits, GPU clocks and "
                f"throttling (nvidia-smi -q -d PERFORMANCE); {FIX_REMOVE.replace('it from', n + ' from')}",
            ))  # fmt: skip
        if n in small and mmed and m is not None:
            out.append(finding(
                n, CHECK, WARN,
                f"memory {m / 1024:.3g} GiB ({'smallest GPU' if what == 'GPU' else 'RAM'}), "
                f"{100 * (1 - m / mmed):.0f}% below the median {mmed / 1024:.3g} GiB",
                "the smallest memory limits every rank's batch size: use nodes of one kind, or size the batch for it",
            ))  # fmt: skip
        if n not in slow and n not in capped and n not in small and f is not None:
            mem_text = f", memory {m / 1024:.3g} GiB" if m is not None else ""
            out.append(finding(n, CHECK, OK, f"compute {f / 1e9:.3g} GFLOP/s ({what}){mem_text}"))
    return out


def _links(order: list[str], fig: dict, fraction: float, min_busbw: float | None, held_back: set) -> list[Finding]:
    """Slow nodes, undecided ones and slow links; `held_back`: nodes named for slow compute."""
    n = len(order)
    if n < 2 or not fig["tests"]:  # no pair test that both its ends vouch for: nothing to judge links by
        return []
    floor_bytes = None if min_busbw is None else min_busbw * 1e9 / 8
    rounds: list = [[] for _ in range(fig["rounds"])]  # only their count matters to verdict()
    v = linkplan.verdict(n, fig["tests"], rounds, fraction, floor_bytes)
    bound = linkplan.max_rounds(n)
    tested = len(linkplan.best_of_pairs(fig["tests"]))
    how = (f"{fig['rounds']} rounds of pair tests ({tested} of {n * (n - 1) // 2} pairs; at most {bound} rounds, "
           f"all pairs would take {n - 1 + n % 2})")  # fmt: skip
    med = v["median"] or 0.0
    floor = f"the floor {gbit(v['floor'])}" + (" (--min-busbw)" if min_busbw is not None else
                                               f" ({fraction:g} x the reference)")  # fmt: skip
    pairs = linkplan.best_of_pairs(fig["tests"])
    fix = f"check its NIC speed (`ethtool IFACE`), cable and switch port; {FIX_REMOVE}"
    out = []
    for x in v["slow"]:
        mine = {(a if b == x else b): bw for (a, b), bw in pairs.items() if x in (a, b)}
        out.append(finding(
            order[x], CHECK, FAIL,
            f"{order[x]}'s links carry {gbit(v['best'][x] or 0.0)} busbw (its best of {len(mine)} pairs, with "
            f"{', '.join(order[p] for p in sorted(mine))}) against a median of {gbit(med)} between the other "
            f"pairs, below {floor}; found in {how}",
            fix.replace("it from", f"{order[x]} from"),
        ))  # fmt: skip
    for x in v["undecided"]:
        out.append(finding(
            order[x], CHECK, FAIL,
            f"{order[x]}'s links carry {gbit(v['best'][x] or 0.0)} busbw, below {floor}, but no pair with a healthy "
            f"node told whether it or its partner is slow ({how})",
            "rerun with more nodes in the hostfile, or test the pair by hand (nccl-tests sendrecv_perf)",
        ))  # fmt: skip
    for a, b, bw in v["slow_links"]:
        slow_end = [x for x in (a, b) if order[x] in held_back]
        if len(slow_end) == 1:  # one end computes slowly too: that end holds the pair back
            x, y = slow_end[0], b if slow_end[0] == a else a
            out.append(finding(
                order[x], CHECK, FAIL,
                f"{order[x]}'s link with {order[y]} carries {gbit(bw)} busbw against a median of {gbit(med)} "
                f"({how}); {HELD_BACK}",
                fix.replace("it from", f"{order[x]} from"),
            ))  # fmt: skip
            continue
        out.append(finding(
            f"{order[a]},{order[b]}", CHECK, FAIL,
            f"the link between {order[a]} and {order[b]} carries {gbit(bw)} busbw against a median of {gbit(med)}, "
            f"while both nodes are fast with other partners ({how})",
            "check the switch path between the two (ports, uplinks, routing); rerun to rule out other traffic",
            nodes=[order[a], order[b]],
        ))  # fmt: skip
    named = set(v["slow"]) | set(v["undecided"])
    for x in range(n):
        if x not in named and v["best"][x] is not None:
            out.append(finding(order[x], CHECK, OK, f"links: best busbw {gbit(v['best'][x])}, median {gbit(med)}; "
                                                    f"{how}"))  # fmt: skip
    return out


def summary(
    result: dict, nodes: list[str], busbw_fraction: float = linkplan.DEFAULT_FRACTION, min_busbw: float | None = None
) -> dict | None:
    """The figures for --json: per node compute and memory, per pair busbw, the rounds."""
    fig = figures(result)
    order = result.get("order") or []
    if fig is None or len(order) != result.get("world"):
        return None
    floor_bytes = None if min_busbw is None else min_busbw * 1e9 / 8
    part, sub = _taking_part(order, fig)
    v = linkplan.verdict(len(part), sub["tests"], [[]] * fig["rounds"], busbw_fraction, floor_bytes)
    return {
        "backend": fig["backend"],
        "compute_flops": dict(zip(order, fig["flops"])),
        "mem_mib": dict(zip(order, fig["mem_mib"])),
        "busbw_bytes_per_s": [{"a": order[a], "b": order[b], "busbw": bw, "round": r} for a, b, bw, r in fig["tests"]],
        "rounds": fig["rounds"],
        "max_rounds": linkplan.max_rounds(len(order)),
        "median_busbw": v["median"],
        "floor_busbw": v["floor"],
        "slow": [part[x] for x in v["slow"]],
        "late": [n for i, n in enumerate(order) if i not in fig["members"]],
    }


def _judge(c: Context) -> list[Finding]:
    if c.perf is None:
        return []
    o = c.opts
    return check(c.perf, list(c.answered), dict(c.answered), o.compute_fraction, o.busbw_fraction, o.min_busbw)


CHECKS = (
    Check(
        "perf",
        170,
        "each node's compute and which links are slow",
        default=False,
        local=False,
        ssh_only=True,
        cluster=_judge,
        cluster_order=100,
    ),
)
