"""Scenarios run by every rank of a real gloo job: `python job.py SCENARIO [ARGS]`.

Each prints `RESULT <json>` lines the tests parse; the rank environment comes from the launcher
(the tests set torchrun's variables; the cluster tests use mpirun and srun).
"""
import json
import os
import sys
import time
import warnings

warnings.filterwarnings("ignore")


def out(**kw):
    # one write: ranks may share one output file, and print() writes the newline separately
    sys.stdout.write("RESULT " + json.dumps(kw) + "\n")
    sys.stdout.flush()


def scenario_init():
    from clusterdoc import shim
    import torch
    import torch.distributed as dist

    env = shim.init()
    again = shim.init()
    t = torch.tensor([env.rank + 1.0])
    dist.all_reduce(t)
    import socket
    out(rank=env.rank, world=env.world_size, local=env.local_rank, lws=env.local_world_size,
        launcher=env.launcher, same=again is env, sum=t.item(), backend=dist.get_backend(),
        addr=os.environ["MASTER_ADDR"], port=os.environ["MASTER_PORT"], host=socket.gethostname(),
        vars={k: os.environ[k] for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")})


def scenario_mismatch(ops):
    """Rank 1 passes a different shape (or dtype) to each op of `ops` (comma-separated) in turn; every
    rank must raise quickly, and the group stays usable for the next op (nothing ran mismatched)."""
    from clusterdoc import shim

    env = shim.init()
    if os.environ.get("TEST_DEBUG_CHANNEL") == "collective":  # the fallback the ranks agree on
        from clusterdoc.shim import exchange

        exchange.SIDE_CHANNEL = False
    shim.enable_debug()
    for op in ops.split(","):
        one_mismatch(op, env)


def one_mismatch(op, env):
    from clusterdoc import shim
    import torch
    import torch.distributed as dist

    r, w = env.rank, env.world_size
    rows = 4 + (r == 1)
    t0 = time.monotonic()
    try:
        if op == "broadcast":
            dist.broadcast(torch.zeros(rows, 3), src=0)
        elif op == "all_reduce":
            dist.all_reduce(torch.zeros(rows, 3))
        elif op == "all_reduce_dtype":
            dist.all_reduce(torch.zeros(4, 3, dtype=torch.float64 if r == 1 else torch.float32))
        elif op == "all_gather":
            t = torch.zeros(rows, 3)
            dist.all_gather([torch.zeros(4, 3) for _ in range(w)], t)
        elif op == "all_gather_into_tensor":
            dist.all_gather_into_tensor(torch.zeros(4 * w, 3), torch.zeros(rows, 3))
        elif op == "reduce_scatter_tensor":
            dist.reduce_scatter_tensor(torch.zeros(rows, 3), torch.zeros(4 * w, 3))
        elif op == "gather_list":  # dst's list has the wrong length
            lst = [torch.zeros(4)] * (w - 1) if r == 0 else None
            dist.gather(torch.zeros(4), lst, dst=0)
        elif op == "scatter":
            lst = [torch.zeros(4)] * w if r == 0 else None
            dist.scatter(torch.zeros(rows), lst, src=0)
        elif op == "different_ops":
            if r == 1:
                dist.broadcast(torch.zeros(4), src=0)
            else:
                dist.all_reduce(torch.zeros(4))
        elif op == "src":
            dist.broadcast(torch.zeros(4), src=r % 2)
        elif op == "all_gather_single":  # (torch < 2.13: the older name)
            getattr(dist, op, dist.all_gather_into_tensor)(torch.zeros(4 * w, 3), torch.zeros(rows, 3))
        elif op == "reduce_scatter_single":
            getattr(dist, op, dist.reduce_scatter_tensor)(torch.zeros(4, 3),
                                                         torch.zeros(4 * w, 3, dtype=torch.float64 if r else None))
        elif op == "deprecated_name":  # the old name on one rank, the new on the other: one op, shapes differ
            if r == 1:
                dist.all_gather_into_tensor(torch.zeros(rows * w, 3), torch.zeros(rows, 3))
            else:
                dist.all_gather_single(torch.zeros(4 * w, 3), torch.zeros(4, 3))
        elif op == "all_gather_object":
            dist.all_gather_object([None] * (w + (r == 1)), r)
        elif op == "broadcast_object_list":
            dist.broadcast_object_list([None] * rows, src=0)
        elif op == "gather_object":
            dist.gather_object(r, [None] * (w - 1) if r == 0 else None, dst=0)
        elif op == "funcol_all_reduce":
            import torch.distributed._functional_collectives as funcol

            funcol.all_reduce(torch.zeros(rows, 3), "sum", dist.group.WORLD).wait()
        elif op == "funcol_all_gather":
            import torch.distributed._functional_collectives as funcol

            funcol.all_gather_tensor(torch.zeros(4, dtype=torch.int32 if r == 1 else torch.float32), 0,
                                     dist.group.WORLD)
        elif op == "ok":  # every supported op, consistent: must pass and give right results
            x = torch.ones(4) * (r + 1)
            dist.all_reduce(x)
            dist.broadcast(x, src=0)
            lst = [torch.zeros(4) for _ in range(w)]
            dist.all_gather(lst, torch.ones(4) * r)
            big = torch.zeros(4 * w)
            dist.all_gather_into_tensor(big, torch.ones(4) * r)
            dist.gather(torch.ones(2) * r, [torch.zeros(2) for _ in range(w)] if r == 0 else None, dst=0)
            s = torch.zeros(2)
            dist.scatter(s, [torch.ones(2) * i for i in range(w)] if r == 0 else None, src=0)
            a2a = torch.zeros(w)
            dist.all_to_all_single(a2a, torch.arange(w, dtype=torch.float32) + 10 * r)
            dist.reduce(torch.ones(3), dst=0)
            dist.barrier()
            # small payloads are done inside the check, large ones by the real op: same answers
            b = torch.full((3,), float(r))
            dist.broadcast(b, src=w - 1)
            m = torch.tensor([r, -r])
            dist.all_reduce(m, op=dist.ReduceOp.MAX)
            large = torch.ones(4096, dtype=torch.float64) * r
            dist.all_reduce(large)
            out(rank=r, ok=True, sum=x.tolist(), gathered=[t[0].item() for t in lst],
                big=big.tolist(), scattered=s.tolist(), a2a=a2a.tolist(), bcast=b.tolist(), max=m.tolist(),
                large=sorted(set(large.tolist())))
            return
        out(op=op, rank=r, raised=False, seconds=time.monotonic() - t0)
    except shim.DistributedOperationException as exc:
        out(op=op, rank=r, raised=True, seconds=time.monotonic() - t0, message=str(exc))


def scenario_log(levels):
    from clusterdoc import shim

    env = shim.init()
    level = levels.split(",")[env.rank]
    log = shim.get_logger("job", log_level=level)
    for i in range(3):
        log.info(f"in-order message {i}", main_process_only=False, in_order=True)
    log.warning("main only")
    log.warning("every rank", main_process_only=False)
    log.info("after", main_process_only=False, in_order=True)
    out(rank=env.rank, done=True)


def scenario_trigger(stop_rank, stop_step):
    from clusterdoc import shim

    env = shim.init()
    step = 0
    who = None
    for step in range(50):
        if env.rank == int(stop_rank) and step == int(stop_step):
            shim.set_trigger()
        who = shim.check_trigger(return_ranks=True)
        if who:
            break
    nxt = shim.check_trigger()  # cleared after being seen
    out(rank=env.rank, step=step, who=who, next=nxt)


def scenario_secret(homes, mode="run", seconds="0"):
    """The job's secret from each rank's HOME (homes: one per rank, comma-separated), no CLUSTERDOC_JOB_SECRET:
    whether it agreed, a digest of it (never the secret), then all_reduces for `seconds` (the watchdog ticking).
    mode abort: rank 0 also puts a genuine abort on the store (sealed under this job's secret), as the hang
    watch does, for another user to copy (run it with CLUSTERDOC_HANG_TIMEOUT=0: nothing acts on it here)."""
    import hashlib

    import torch
    import torch.distributed as dist

    os.environ["HOME"] = homes.split(",")[int(os.environ["RANK"])]
    from clusterdoc import shim

    env = shim.init()
    job = os.environ.get("CLUSTERDOC_JOB_SECRET", "")
    if mode == "abort" and env.rank == 0 and job:
        from clusterdoc.hang import channel

        ch = channel.connect(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]))
        channel.request_abort(ch)
    end = time.monotonic() + float(seconds)
    steps = 0
    while True:
        t = torch.ones(1)
        dist.all_reduce(t)
        steps += 1
        done = torch.tensor([1.0 if time.monotonic() >= end else 0.0])
        dist.all_reduce(done, op=dist.ReduceOp.MIN)
        if done.item():
            break
        time.sleep(0.2)
    out(rank=env.rank, agreed=bool(job), digest=hashlib.sha256(job.encode()).hexdigest()[:16] if job else "",
        steps=steps)


def scenario_oom(mode, limit):
    """Only rank 1 runs out of memory above `limit`; report the sizes each rank ran."""
    from clusterdoc import shim

    env = shim.init()
    limit = int(limit)
    tried = []
    probed = []
    messages = {
        "torch": None, "cuda_error": "CUDA error: out of memory", "nccl": "NCCL error: unhandled cuda error, "
        "NCCL version 2.18.1 ncclUnhandledCudaError: Call to CUDA function failed. Cuda failure 2 'out of memory'",
        "mps": "MPS backend out of memory (MPS allocated: 1.00 GB)", "cpu": "[enforce fail at alloc_cpu.cpp:83] "
        "DefaultCPUAllocator: can't allocate memory: you tried to allocate 1000 bytes",
    }
    kind = os.environ.get("OOM_KIND", "torch")

    def boom():
        import torch
        if messages[kind] is None:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        raise RuntimeError(messages[kind])

    def probe(bs):
        probed.append(bs)
        if env.rank == 1 and bs > limit:
            boom()

    kwargs = dict(starting_batch_size=256, factor=0.5 if mode == "half" else 0.9)
    if mode == "probe":
        kwargs["probe"] = probe
    if mode == "accum":
        kwargs["gradient_accumulation"] = True
    if mode == "minimum":
        kwargs["minimum_batch_size"] = 64

    if mode == "accum":
        @shim.find_executable_batch_size(**kwargs)
        def train(batch_size, steps, tag):
            tried.append([batch_size, steps])
            if env.rank == 1 and batch_size > limit:
                boom()
            return batch_size, steps
    else:
        @shim.find_executable_batch_size(**kwargs)
        def train(batch_size, tag):
            tried.append(batch_size)
            if env.rank == 1 and batch_size > limit:
                boom()
            return batch_size
    try:
        result = train("x")
        out(rank=env.rank, result=result, tried=tried, probed=probed)
    except shim.BatchSizeSearchError as exc:
        out(rank=env.rank, error=str(exc), tried=tried)


def scenario_overflow(mode):
    from clusterdoc import shim
    import torch

    env = shim.init()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8)).half()
    if mode == "global":
        shim.enable_overflow_detection(report_dir=os.environ.get("REPORT_DIR"))
    else:
        dbg = shim.DebugUnderflowOverflow(model, report_dir=os.environ.get("REPORT_DIR"))  # noqa: F841 (kept alive for the run)
    x = torch.ones(2, 8, dtype=torch.float16)
    model(x)  # batch 0 fine
    if env.rank == 1:
        with torch.no_grad():
            model[0].weight.fill_(10.0)
            model[2].weight.fill_(1000.0)  # 8 * 80 * 1000 > 65504: the last Linear overflows fp16
    try:
        model(x)
        out(rank=env.rank, raised=False)
    except ValueError as exc:
        out(rank=env.rank, raised=True, message=str(exc))


def scenario_subgroup():
    """Debug mode on a group of global ranks 1 and 2 (of 3): results, roots as global ranks, a mismatch
    naming the global ranks, and rank 0 (not a member) passing its calls through untouched."""
    from clusterdoc import shim
    import torch
    import torch.distributed as dist

    env = shim.init()
    shim.enable_debug()
    r = env.rank
    group = dist.new_group([1, 2])
    small, large = torch.ones(4) * r, torch.ones(4096) * r
    dist.all_reduce(small, group=group)
    dist.all_reduce(large, group=group)
    b = torch.full((3,), float(r))
    dist.broadcast(b, src=2, group=group)
    try:
        dist.all_reduce(torch.zeros(4 + (r == 2)), group=group)
        raised = None
    except shim.DistributedOperationException as exc:
        raised = str(exc)
    dist.barrier()
    out(rank=r, small=small.tolist(), large=sorted(set(large.tolist())), bcast=b.tolist(), raised=raised)


def scenario_channel(case):
    """Debug mode's side channel: `fused` (many small ops in a row: a peer may send its next check before
    this rank has read the last), `unreachable` (rank 1 cannot reach a peer: every rank falls back to the
    collective), `gone` (rank 1 exits: rank 0's check raises at once instead of waiting the timeout)."""
    from clusterdoc import shim
    from clusterdoc.shim import debug, exchange
    import torch
    import torch.distributed as dist

    env = shim.init()
    r, w = env.rank, env.world_size
    if case == "unreachable" and r == 1:
        exchange._connect = lambda *a, **k: None
    shim.enable_debug()
    if case == "gone":
        dist.all_reduce(torch.ones(4))  # sets the channel up
        if r == 1:
            os._exit(0)
        t0 = time.monotonic()
        try:
            dist.all_reduce(torch.ones(4096))
            error = None
        except Exception as exc:  # noqa: BLE001
            error = f"{type(exc).__name__}: {exc}"
        out(rank=r, error=error, seconds=time.monotonic() - t0)
        os._exit(0)
    sums = []
    for i in range(200):
        x = torch.full((3,), float(r + i))
        dist.all_reduce(x)
        sums.append(x[0].item())
    large = torch.ones(100_000) * r
    dist.all_reduce(large)
    mode = debug._exchanges[id(dist.group.WORLD)].mode
    # what anyone reaching the store reads of this rank's channel address: sealed, no token, no port
    record = exchange._group_store(dist.group.WORLD).get(f"clusterdoc-debug/1/addr/{r}") if mode == "socket" else b""
    try:
        dist.broadcast(torch.zeros(4 + (r == 1)), src=0)
        raised = False
    except shim.DistributedOperationException:
        raised = True
    out(rank=r, mode=mode, sums_ok=sums == [sum(k + i for k in range(w)) for i in range(200)],
        large=sorted(set(large.tolist())), raised=raised,
        readable=any(word in record for word in (b"token", b"port", b"host", b"ips")))


def scenario_where(folder):
    """rank<R>.where (shim/where.py) as the rank goes: the call done last between calls, and the call it is in while
    it waits (read from another thread, as the file outlives a frozen or killed rank)."""
    import threading
    from pathlib import Path

    import torch
    import torch.distributed as dist

    from clusterdoc import shim
    from clusterdoc.shim import where

    r = shim.init().rank
    path = Path(folder) / f"rank{r}.where"
    assert where.start(Path(folder), r)
    read = lambda: json.loads(path.read_text())  # noqa: E731
    dist.all_reduce(torch.ones(3))
    after = read()
    dist.broadcast(torch.ones(2), src=0, async_op=True).wait()
    time.sleep(0.2)  # its completion runs on a gloo thread
    after_async = read()
    inside = {}
    if r == 0:
        peek = threading.Thread(target=lambda: (time.sleep(1.0), inside.update(read())))
        peek.start()
    else:
        time.sleep(2.0)  # rank 0 waits in the next all_reduce meanwhile
    dist.all_gather_object([None] * dist.get_world_size(), r)
    if r == 0:
        peek.join()
    out(rank=r, after=after, after_async=after_async, inside=inside, end=read())


def scenario_tracking():
    """Tracking sees plain collectives, async ones, torch's own object collectives and DDP's gradient
    all_reduce (with and without a user's comm hook), and DDP still averages the gradients right."""
    from clusterdoc import shim
    from clusterdoc.shim import track
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    env = shim.init()
    r, w = env.rank, env.world_size
    seen = []
    dist.all_reduce(torch.ones(3))
    seen.append(track.TRACKER.last.to_dict())
    dist.broadcast(torch.ones(2), src=0, async_op=True).wait()
    time.sleep(0.1)  # the completion callback runs on a gloo thread
    seen.append(track.TRACKER.last.to_dict())
    objs = [None] * w
    dist.all_gather_object(objs, {"rank": r})
    seen.append(track.TRACKER.last.to_dict())
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1, bias=False))
    x = torch.full((2, 4), float(r + 1))
    model(x).sum().backward()
    time.sleep(0.1)
    seen.append(track.TRACKER.last.to_dict())
    grad = model.module.weight.grad.tolist()
    calls = []

    def user_hook(state, bucket):
        calls.append(bucket.index())
        return dist.all_reduce(bucket.buffer(), async_op=True).get_future().then(lambda f: f.value()[0])

    model2 = DDP(torch.nn.Linear(4, 1, bias=False))
    model2.register_comm_hook(None, user_hook)
    model2(x).sum().backward()
    time.sleep(0.1)
    seen.append(track.TRACKER.last.to_dict())
    out(rank=r, seen=seen, grad=grad, user_calls=calls, pending=len(track.TRACKER.pending))


def scenario_straggler(slow_rank, steps, extra="0.1", work="0", prepare="0"):
    """A small DDP training loop; `slow_rank` (-1: none) computes `extra` seconds longer every step. With
    `work`, every rank also multiplies that many 128x128 matrices per step (CPU work: a throttled node is slow).
    With `prepare`, rank 0 first prepares the data for that many seconds while the others wait at a barrier."""
    from clusterdoc import shim
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    env = shim.init()
    if float(prepare):
        if env.rank == 0:
            time.sleep(float(prepare))
        dist.barrier()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(64, 64))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, m = torch.ones(8, 64), torch.full((128, 128), 1 / 128)
    for _ in range(int(steps)):
        if not int(work):
            time.sleep(0.03)  # the step's compute, the same on every rank
        for _ in range(int(work)):
            m = m @ m
        if env.rank == int(slow_rank):
            time.sleep(float(extra))
        model(x).sum().backward()
        opt.step()
        opt.zero_grad()
    out(rank=env.rank)


def scenario_oom_ddp(where, spec, steps="3"):
    """DDP training, `steps` steps per attempt; rank R runs out of memory above batch L at `where` (spec
    "R:L[,R:L]"): forward (its peers go on into backward's all_reduce), backward (after some buckets), step
    (after its optimizer step: peers in the next forward, where DDP rebuilds its buckets), plain (between the
    step and the plain all_reduce/broadcast/subgroup calls its peers are in), unsafe (peers in an uneven
    all_to_all_single, which cannot be replayed). Reports the sizes run, a parameter checksum, threads, when the
    OOMs and attempts were, and how many collectives the tracker counted on the default group."""
    from clusterdoc import shim
    import threading
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    env = shim.init()
    r, w = env.rank, env.world_size
    limits = {int(a): int(b) for a, b in (x.split(":") for x in spec.split(","))}
    wheres = where.split(",")
    steps = int(steps)
    times = {"oom": [], "start": []}

    def oom_here(point, batch_size, i):
        mine = wheres[min(list(limits).index(r), len(wheres) - 1)] if r in limits else None
        if mine == point and batch_size > limits[r] and i == (0 if point in ("forward", "step") else 1):
            if point == "unsafe":
                time.sleep(3)  # let the peers get into the all_to_all first
            times["oom"].append(time.time())
            raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {batch_size} MiB ({point})")

    class Boom(torch.autograd.Function):  # raises in backward, between the buckets of the layers around it
        @staticmethod
        def forward(ctx, x, batch_size, i):
            ctx.batch_size, ctx.i = batch_size, i
            return x.view_as(x)

        @staticmethod
        def backward(ctx, grad):
            oom_here("backward", ctx.batch_size, ctx.i)
            return grad, None, None

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c = nn.Linear(16, 32), nn.Linear(32, 32), nn.Linear(32, 1)

        def forward(self, x, batch_size, i):
            h = torch.tanh(self.a(x))
            oom_here("forward", batch_size, i)
            h = Boom.apply(h, batch_size, i)
            return self.c(torch.tanh(self.b(h)))

    torch.manual_seed(0)
    ddp = DDP(Net(), bucket_cap_mb=0.002)  # a few KB: several buckets
    sub = dist.new_group([0, 1])

    @shim.find_executable_batch_size(starting_batch_size=256)
    def train(batch_size):
        times["start"].append(time.time())
        opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
        for i in range(steps):
            g = torch.Generator().manual_seed(1000 * r + i)
            x, y = torch.randn(batch_size, 16, generator=g), torch.randn(batch_size, 1, generator=g)
            opt.zero_grad()
            loss = nn.functional.mse_loss(ddp(x, batch_size, i), y)
            loss.backward()
            opt.step()
            oom_here("step", batch_size, i)
            if "plain" in wheres or "unsafe" in wheres:
                oom_here("plain", batch_size, i)
                if r in (0, 1):
                    dist.all_reduce(torch.ones(3), group=sub)  # a subgroup's collective: drained too
                oom_here("unsafe", batch_size, i)
                if "unsafe" in wheres:  # uneven splits: a rank that stopped before cannot issue the same
                    dist.all_to_all_single(torch.zeros(sum(range(1, w + 1))), torch.zeros(w * (r + 1)),
                                           output_split_sizes=[j + 1 for j in range(w)],
                                           input_split_sizes=[r + 1] * w)
                total = loss.detach().clone()
                dist.all_reduce(total)
                dist.broadcast(torch.zeros(4), src=0)
                objs = [None] * w
                dist.all_gather_object(objs, batch_size)
        return batch_size

    try:
        used = train()
        error = None
    except Exception as exc:  # noqa: BLE001 - reported
        used, error = None, f"{type(exc).__name__}: {exc}"
    if error and "unsafe" in wheres:  # the group is not usable: leave at once (a stuck peer's op then fails)
        out(rank=r, error=error, elapsed=time.time() - min(times["start"]))
        os._exit(0)
    # the group is still usable, and so is the model
    t = torch.ones(1)
    dist.all_reduce(t)
    x = torch.ones(4, 16)
    nn.functional.mse_loss(ddp(x, 1, 99), torch.zeros(4, 1)).backward()
    checksum = [float(p.detach().double().sum()) for p in ddp.parameters()]
    grads = [float(p.grad.double().sum()) for p in ddp.parameters()]
    from clusterdoc.shim import track

    out(rank=r, used=used, error=error, attempts=train.attempts(), checksum=checksum, grads=grads,
        sum=t.item(), times=times, threads=sorted(t.name for t in threading.enumerate()),
        seq=track.TRACKER.seq.get(None))


def scenario_newops(mode):
    """Every op the shim wraps beyond the classic collectives, healthy, on every rank: the deprecated names, the
    *_single ops, object collectives, point-to-point (a ring), functional collectives. mode: plain (no shim),
    track (tracking), debug (tracking and debug mode). Prints the results and, under the shim, the records."""
    import torch
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol

    if mode == "plain":
        dist.init_process_group("gloo")
        r, w = dist.get_rank(), dist.get_world_size()
    else:
        from clusterdoc import shim

        env = shim.init()
        r, w = env.rank, env.world_size
        if mode == "debug":
            shim.enable_debug()
    seen = []

    def note():
        if mode != "plain":
            from clusterdoc.shim import track

            rec = track.TRACKER.last.to_dict()
            seen.append({k: rec.get(k) for k in ("op", "seq", "shape", "dtype", "peer", "tag", "note")}
                        | {"fn": rec["site"][2] if rec["site"] else None})

    res = {}
    # torch < 2.13 has only the names 2.13 deprecated
    all_gather_single = getattr(dist, "all_gather_single", dist.all_gather_into_tensor)
    reduce_scatter_single = getattr(dist, "reduce_scatter_single", dist.reduce_scatter_tensor)
    out_t = torch.zeros(2 * w)
    all_gather_single(out_t, torch.tensor([r, 10.0 * r]))
    note()
    res["ags"] = out_t.tolist()
    out_t = torch.zeros(2 * w)
    dist.all_gather_into_tensor(out_t, torch.tensor([r, 10.0 * r]))  # deprecated: tracked once
    note()
    res["agit"] = out_t.tolist()
    rs = torch.zeros(2)
    reduce_scatter_single(rs, torch.arange(2.0 * w) + r)
    note()
    res["rss"] = rs.tolist()
    rs = torch.zeros(2)
    dist.reduce_scatter_tensor(rs, torch.arange(2.0 * w) + r)
    note()
    res["rst"] = rs.tolist()
    objs = [None] * w
    dist.all_gather_object(objs, {"rank": r})
    note()
    res["objs"] = objs
    lst = [r, "x" * r] if r == 0 else [None, None]
    dist.broadcast_object_list(lst, src=0)
    note()
    res["bol"] = lst
    gathered = [None] * w if r == 0 else None
    dist.gather_object(r * 2, gathered, dst=0)
    note()
    res["gobj"] = gathered
    got = [None]
    dist.scatter_object_list(got, [f"to {i}" for i in range(w)] if r == 0 else None, src=0)
    note()
    res["sobj"] = got
    nxt, prv = (r + 1) % w, (r - 1) % w
    buf = torch.zeros(3)
    if r % 2 == 0:
        dist.send(torch.full((3,), float(r)), dst=nxt, tag=3)
        note()
        dist.recv(buf, src=prv, tag=3)
        note()
    else:
        dist.recv(buf, src=prv, tag=3)
        note()
        dist.send(torch.full((3,), float(r)), dst=nxt, tag=3)
        note()
    res["ring"] = buf.tolist()
    buf2 = torch.zeros(2, dtype=torch.int64)
    reqs = [dist.isend(torch.tensor([r, r]), dst=nxt), dist.irecv(buf2, src=prv)]
    for q in reqs:
        q.wait()
    note()
    res["iring"] = buf2.tolist()
    buf3 = torch.zeros(4)
    ops = [dist.P2POp(dist.isend, torch.full((4,), r + 0.5), nxt, tag=5),
           dist.P2POp(dist.irecv, buf3, prv, tag=5)]
    for q in dist.batch_isend_irecv(ops):
        q.wait()
    note()
    res["batch"] = buf3.tolist()
    group = dist.group.WORLD
    x = funcol.all_reduce(torch.ones(3) * (r + 1), "sum", group)
    note()
    res["f_ar"] = x.wait().tolist() if hasattr(x, "wait") else x.tolist()
    y = funcol.all_gather_tensor(torch.tensor([float(r)]), 0, group)
    note()
    res["f_ag"] = y.tolist()
    z = funcol.reduce_scatter_tensor(torch.arange(float(w)) + r, "sum", 0, group)
    note()
    res["f_rs"] = z.tolist()
    time.sleep(0.2)  # completion callbacks run on gloo's threads
    pending = 0
    if mode != "plain":
        from clusterdoc.shim import track

        pending = len(track.TRACKER.pending)
    out(rank=r, res=res, seen=seen, pending=pending)


def scenario_p2p_mismatch():
    """Debug mode, point-to-point between ranks 0 and 1: in each case one side calls at once (an asynchronous op)
    and the other after a pause with a different shape, dtype or tag; the one that comes second raises before
    its call. Pending ops are left (fresh tags keep them from matching later ones): the ranks leave by _exit."""
    from clusterdoc import shim
    import torch
    import torch.distributed as dist

    env = shim.init()
    shim.enable_debug()
    r = env.rank
    cases = {  # name: (rank 0's call, rank 1's call); each a function of the tag
        "recv": (lambda tag: dist.isend(torch.zeros(4), 1, tag=tag), lambda tag: dist.recv(torch.zeros(5), 0, tag=tag)),
        "send": (lambda tag: dist.send(torch.zeros(4, dtype=torch.float64), 1, tag=tag),
                 lambda tag: dist.irecv(torch.zeros(4), 0, tag=tag)),
        "tag": (lambda tag: dist.isend(torch.zeros(4), 1, tag=tag), lambda tag: dist.irecv(torch.zeros(4), 0, tag=tag + 1)),
        "batch": (lambda tag: dist.batch_isend_irecv([dist.P2POp(dist.isend, torch.zeros(4), 1, tag=tag)]),
                  lambda tag: dist.batch_isend_irecv([dist.P2POp(dist.irecv, torch.zeros(6), 0, tag=tag)])),
    }
    for i, (name, calls) in enumerate(cases.items()):
        tag = 10 * (i + 1)
        second = 1 if name in ("recv", "tag", "batch") else 0
        if r == second:
            time.sleep(1.0)
        try:
            if r < 2:
                calls[r](tag)
            raised = None
        except shim.DistributedOperationException as exc:
            raised = str(exc)
        out(rank=r, case=name, raised=raised)
        dist.barrier()
    os._exit(0)


if __name__ == "__main__":
    globals()["scenario_" + sys.argv[1]](*sys.argv[2:])
