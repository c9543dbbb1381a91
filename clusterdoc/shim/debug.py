"""Debug mode: check every collective's tensors across ranks before the real op runs.

Each rank encodes what it is about to do into one fixed-size int64 vector (op, dtype, device type,
shape, root, reduce op, and a local-problem code); one exchange of those vectors (every rank gets all
of them) lets every rank evaluate the same rules on the same table, so all ranks reach the same
verdict and raise together instead of hanging in a mismatched collective. No pickling, one small
exchange per op (exchange.py: over a TCP side channel between the group's members, written and read by the
calling thread, ~0.02 ms alone; a gloo collective instead, ~0.3-0.5 ms, only if some member cannot reach
some peer).

Rules (what must agree across the ranks of the group):
- every op: the same operation, and for rooted ops the same src/dst, for reductions the same ReduceOp;
- all_reduce, reduce, broadcast, all_gather, all_gather_into_tensor, gather, reduce_scatter_tensor,
  all_to_all_single (without split sizes): the tensor's shape, dtype and device type;
- scatter: the output tensor's shape/dtype; reduce_scatter: the output tensor's shape/dtype;
- all_to_all_single with split sizes: dtype, device type and all dimensions but the first;
- all_to_all: dtype and device type;
- local rules, checked on each rank and shared through the same vector: list arguments have one entry
  per rank with the same shape/dtype as the tensor (all_gather, reduce_scatter, all_to_all; gather's
  gather_list on dst only; scatter's scatter_list on src only); all_gather_into_tensor's output has
  world_size times the input's elements, reduce_scatter_tensor's input world_size times the output's;
  split sizes add up to the tensor's first dimension.
- all_gather_single/reduce_scatter_single: as all_gather_into_tensor/reduce_scatter_tensor, which torch 2.13
  deprecated (one op under two names: compared as one, each rank's own name shown); functional collectives as
  the torch.distributed op they do (torch makes their output);
- all_gather_object, gather_object, scatter_object_list: the list has one entry per rank (on dst/src for the
  rooted ones); broadcast_object_list: the same list length everywhere; and their src/dst;
- point-to-point (send, recv, isend, irecv, each op of batch_isend_irecv): shape, dtype, device type and tag of
  the sender's and the receiver's tensors, paired through the group's store (see _check_p2p).
Small payloads: on gloo groups the check message has room for 4 KiB (less past 8 ranks); an all_reduce
(SUM/PRODUCT/MIN/MAX) or broadcast of a contiguous CPU tensor that fits rides in it, and once every
rank agrees, each rank computes the result from the gathered payloads (in rank order, so every rank
gets the same bits) instead of running a second collective. Large tensors take the real op.
Not covered: a rank that never calls the op at all still waits for the group timeout.
"""

from __future__ import annotations

import functools
import os
import sys

from . import track
from .errors import ShimError
from .exchange import Exchange

MAX_DIMS = 8
# vector layout
_OP, _DTYPE, _DEVICE, _NDIM, _DIMS = 0, 1, 2, 3, 4
_ROOT, _REDOP, _PROBLEM = _DIMS + MAX_DIMS, _DIMS + MAX_DIMS + 1, _DIMS + MAX_DIMS + 2
_FUSE = _PROBLEM + 1  # 1: this rank can take the small-tensor path (not compared, only ANDed)
_CALLED = _FUSE + 1  # the name this rank called (not compared: _OP holds the op, one for a deprecated alias)
WIDTH = _CALLED + 1
ANY = -7  # wildcard dimension / field
_LIST = -3  # _NDIM of an object collective whose list length is compared (in the first dimension)
FUSE_BYTES = 4096  # small all_reduce / broadcast payloads ride in the check itself (gloo, world <= 8)

# an op's code is its index in the one list of wrapped calls (torch.distributed's, then the functional ones)
OPS = track.OPS + tuple("funcol." + name for name in track.FUNCTIONAL)
_DTYPE_NAMES = [
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "bool",
    "complex64",
    "complex128",
    "float8_e4m3fn",
    "float8_e5m2",
    "uint16",
    "uint32",
    "uint64",
]
_DEVICES = ["cpu", "cuda", "mps", "xpu", "meta", "hpu", "npu"]
_REDOPS = ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "AVG", "PREMUL_SUM"]
PROBLEMS = {
    1: "the list has {detail} entries, expected world_size",
    2: "a list entry's shape or dtype differs from the tensor's",
    3: "the input and output sizes do not fit world_size",
    4: "the split sizes do not add up to the tensor's first dimension",
    5: "argument is not a tensor",
}
_OBJECT_OPS = ("all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list")
_ROOTED = ("reduce", "broadcast", "gather", "scatter", "broadcast_object_list", "gather_object", "scatter_object_list")
_SOURCES = ("broadcast", "scatter", "broadcast_object_list", "scatter_object_list")  # their root is src=


class DistributedOperationException(ShimError):
    """A collective was called with tensors that do not agree across ranks (raised on every rank)."""


_CALLED_CODES = {name: i for i, name in enumerate(OPS)}
# what is compared: the op itself, whatever name reached it (a deprecated alias, a functional collective)
_OP_CODES = {name: _CALLED_CODES[track.ALIASES.get(name, name)] for name in track.OPS}
_DEVICE_CODES = {name: i for i, name in enumerate(_DEVICES)}
_DTYPE_CODES: dict = {}  # torch.dtype -> code, filled as dtypes are met
_REDOP_CODES: dict = {"SUM": 0}  # ReduceOp (or its name) -> code, likewise


def _dtype_code(dtype) -> int:
    code = _DTYPE_CODES.get(dtype)
    if code is None:
        name = str(dtype).replace("torch.", "")
        code = _DTYPE_CODES[dtype] = _DTYPE_NAMES.index(name) if name in _DTYPE_NAMES else 99
    return code


def _device_code(device) -> int:
    return _DEVICE_CODES.get(device.type, 98)


def _redop_code(op) -> int:
    if op is None:
        return 0
    try:
        return _REDOP_CODES[op]
    except (KeyError, TypeError):  # TypeError: an unhashable custom op
        pass
    name = getattr(op, "name", None) or str(op).rsplit(".", 1)[-1]
    code = _REDOPS.index(name) if name in _REDOPS else 50
    try:
        _REDOP_CODES[op] = code
    except TypeError:
        pass
    return code


def _describe(vec: list, op_name, tensor, root=-1, redop=None, problem=0, detail=0, wild_first=False, dtype_only=False):
    """Fill `vec` (a python list of WIDTH ints) for `tensor`."""
    vec[_OP] = _OP_CODES[op_name]
    vec[_CALLED] = vec[_OP]
    vec[_ROOT] = root
    vec[_REDOP] = _redop_code(redop) if redop is not None else -1
    vec[_PROBLEM] = problem * 1000 + min(detail, 999)
    if tensor is None or not hasattr(tensor, "shape"):
        vec[_DTYPE] = vec[_DEVICE] = vec[_NDIM] = -1
        if tensor is not None:
            vec[_PROBLEM] = 5000
        return vec
    vec[_DTYPE] = _dtype_code(tensor.dtype)
    vec[_DEVICE] = _device_code(tensor.device)
    if dtype_only:
        vec[_NDIM] = ANY
        return vec
    shape = tensor.shape
    ndim = vec[_NDIM] = len(shape)
    if ndim <= MAX_DIMS:
        vec[_DIMS : _DIMS + ndim] = shape
    else:  # fold the tail so a difference there still shows
        tail = 1
        for d in shape[MAX_DIMS - 1 :]:
            tail *= d
        vec[_DIMS : _DIMS + MAX_DIMS] = [*shape[: MAX_DIMS - 1], tail]
    if wild_first and ndim:
        vec[_DIMS] = ANY
    return vec


def _same_meta(a, b) -> bool:
    return a is not None and b is not None and tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype


def _list_problem(tensor, lst, world):
    if lst is None or len(lst) != world:
        return 1, (0 if lst is None else len(lst))
    if not all(_same_meta(t, tensor) for t in lst):
        return 2, 0
    return 0, 0


def _arg(args, kwargs, index, name, default=None):
    if name in kwargs:
        return kwargs[name]
    return args[index] if len(args) > index else default


def _encode(op_name, args, kwargs, my_rank_in_group, world):
    """Return the descriptor list for this rank's call of `op_name`."""
    vec = [0] * WIDTH
    if not kwargs and len(args) == 1 and op_name == "all_reduce":  # the common call, kept short
        return _describe(vec, op_name, args[0], redop="SUM")
    a = functools.partial(_arg, args, kwargs)
    if op_name == "all_reduce":
        return _describe(vec, op_name, a(0, "tensor"), redop=a(1, "op", "SUM"))
    if op_name == "reduce":
        return _describe(vec, op_name, a(0, "tensor"), root=_root(a(1, "dst"), kwargs), redop=a(2, "op", "SUM"))
    if op_name == "broadcast":
        return _describe(vec, op_name, a(0, "tensor"), root=_root(a(1, "src"), kwargs))
    if op_name == "all_gather":
        out, t = a(0, "tensor_list"), a(1, "tensor")
        p, d = _list_problem(t, out, world)
        return _describe(vec, op_name, t, problem=p, detail=d)
    if op_name in ("all_gather_into_tensor", "all_gather_single"):
        out, t = a(0, "output_tensor"), a(1, "input_tensor")
        if kwargs.get("_functional"):  # torch makes the output
            return _describe(vec, op_name, t)
        bad = out is None or t is None or out.numel() != world * t.numel() or out.dtype != t.dtype
        return _describe(vec, op_name, t, problem=3 if bad else 0)
    if op_name == "gather":
        t, lst, dst = a(0, "tensor"), a(1, "gather_list"), _root(a(2, "dst"), kwargs)
        p, d = _list_problem(t, lst, world) if my_rank_in_group == dst else (0, 0)
        return _describe(vec, op_name, t, root=dst, problem=p, detail=d)
    if op_name == "scatter":
        t, lst, src = a(0, "tensor"), a(1, "scatter_list"), _root(a(2, "src"), kwargs)
        p, d = _list_problem(t, lst, world) if my_rank_in_group == src else (0, 0)
        return _describe(vec, op_name, t, root=src, problem=p, detail=d)
    if op_name == "reduce_scatter":
        out, lst = a(0, "output"), a(1, "input_list")
        p, d = _list_problem(out, lst, world)
        return _describe(vec, op_name, out, redop=a(2, "op", "SUM"), problem=p, detail=d)
    if op_name in ("reduce_scatter_tensor", "reduce_scatter_single"):
        out, t = a(0, "output"), a(1, "input")
        if kwargs.get("_functional"):  # torch makes the output
            bad = t is None or t.numel() % world != 0
        else:
            bad = out is None or t is None or t.numel() != world * out.numel() or out.dtype != t.dtype
        return _describe(vec, op_name, t, redop=a(2, "op", "SUM"), problem=3 if bad else 0)
    if op_name == "all_to_all_single":
        out, t = a(0, "output"), a(1, "input")
        osplit, isplit = a(2, "output_split_sizes"), a(3, "input_split_sizes")
        made = kwargs.get("_functional")  # torch makes the output
        if osplit is None and isplit is None:
            bad = (t is None or t.shape[0] % world != 0) if made else not _same_meta(out, t)
            return _describe(vec, op_name, t, problem=3 if bad else 0)
        bad = (isplit is not None and sum(isplit) != t.shape[0]) or (
            not made and osplit is not None and sum(osplit) != out.shape[0]
        )
        return _describe(vec, op_name, t, problem=4 if bad else 0, wild_first=True)
    if op_name == "all_to_all":
        outs, ins = a(0, "output_tensor_list"), a(1, "input_tensor_list")
        bad_len = outs is None or ins is None or len(outs) != world or len(ins) != world
        first = ins[0] if ins else None
        return _describe(
            vec, op_name, first, problem=1 if bad_len else 0, detail=0 if ins is None else len(ins), dtype_only=True
        )
    if op_name == "barrier":
        return _describe(vec, op_name, None)
    if op_name in _OBJECT_OPS:
        return _encode_objects(vec, op_name, a, kwargs, my_rank_in_group, world)
    raise KeyError(op_name)


def _encode_objects(vec, op_name, a, kwargs, my_rank_in_group, world):
    """Object collectives: the op, the root, and the object list's length where every rank must agree on it
    (kept in the first dimension with _NDIM = _LIST, shown as "a list of N objects")."""
    length, problem, detail = -1, 0, 0
    if op_name == "all_gather_object":
        lst, root = a(0, "object_list"), -1
        if lst is None or len(lst) != world:
            problem, detail = 1, 0 if lst is None else len(lst)
    elif op_name == "broadcast_object_list":
        lst, root = a(0, "object_list"), _root(a(1, "src"), kwargs)
        length = len(lst) if lst is not None else 0
    elif op_name == "gather_object":
        lst, root = a(1, "object_gather_list"), _root(a(2, "dst"), kwargs)
        if my_rank_in_group == root and (lst is None or len(lst) != world):
            problem, detail = 1, 0 if lst is None else len(lst)
    else:  # scatter_object_list
        lst, root = a(1, "scatter_object_input_list"), _root(a(2, "src"), kwargs)
        if my_rank_in_group == root and (lst is None or len(lst) != world):
            problem, detail = 1, 0 if lst is None else len(lst)
    _describe(vec, op_name, None, root=root, problem=problem, detail=detail)
    if length >= 0:
        vec[_NDIM], vec[_DIMS] = _LIST, length
    return vec


def _root(value, kwargs):
    """Roots are global ranks in torch's API; group_src/group_dst (newer torch) are group ranks."""
    for key in ("group_src", "group_dst"):
        if kwargs.get(key) is not None:
            return int(kwargs[key])
    if value is None:
        return 0
    group = kwargs.get("group")
    if group is not None:
        import torch.distributed as dist

        try:
            return dist.get_group_rank(group, int(value))
        except Exception:
            return int(value)
    return int(value)


def _fmt_row(row) -> str:
    called = row[_CALLED] if 0 <= row[_CALLED] < len(OPS) else row[_OP]
    op = OPS[called] if 0 <= called < len(OPS) else f"op#{called}"
    parts = [f"called {op}"]
    if row[_NDIM] == _LIST:
        parts.append(f"a list of {row[_DIMS]} objects")
    if row[_NDIM] >= 0:
        dims = [("?" if d == ANY else str(d)) for d in row[_DIMS : _DIMS + min(row[_NDIM], MAX_DIMS)]]
        if row[_NDIM] > MAX_DIMS:
            dims[-1] = f"{dims[-1]}(product of dims {MAX_DIMS}..{row[_NDIM]})"
        parts.append(f"shape [{', '.join(dims)}]")
    if row[_DTYPE] >= 0:
        name = _DTYPE_NAMES[row[_DTYPE]] if row[_DTYPE] < len(_DTYPE_NAMES) else "other"
        dev = _DEVICES[row[_DEVICE]] if row[_DEVICE] < len(_DEVICES) else "other"
        parts.append(f"dtype {name} on {dev}")
    base = OPS[row[_OP]] if 0 <= row[_OP] < len(OPS) else ""
    if row[_ROOT] >= 0 and base in _ROOTED:
        parts.append(f"{'src' if base in _SOURCES else 'dst'}={row[_ROOT]}")
    if row[_REDOP] >= 0:
        parts.append(f"op={_REDOPS[row[_REDOP]] if row[_REDOP] < len(_REDOPS) else 'custom'}")
    if row[_PROBLEM]:
        code, detail = divmod(row[_PROBLEM], 1000)
        parts.append("PROBLEM: " + PROBLEMS.get(code, "unknown").format(detail=detail))
    return ", ".join(parts)


def agree(table) -> bool:
    """The fast path of verdict(): every row the same as the first (wildcards included), no problems."""
    head = table[0][:_PROBLEM]
    return all(row[:_PROBLEM] == head and not row[_PROBLEM] for row in table)


def verdict(op_name: str, table, global_ranks=None) -> str | None:
    """The error text if the gathered descriptors (one list per group rank) do not agree, else None."""
    first = table[0]
    bad = any(row[_PROBLEM] for row in table)
    for row in table[1:]:
        if bad:
            break
        for i in range(WIDTH):
            if i in (_PROBLEM, _FUSE, _CALLED):
                continue
            if row[i] != first[i] and row[i] != ANY and first[i] != ANY:
                bad = True
                break
    if not bad:
        return None
    ranks = global_ranks or list(range(len(table)))
    return _message(op_name, [f"Process {r}: {_fmt_row(row)}" for r, row in zip(ranks, table)])


def _message(op_name, lines) -> str:
    where = "torch.distributed." + op_name.replace("funcol.", "_functional_collectives.")
    rows = "\n  - ".join(lines)
    return (
        f"Cannot apply {where}: the ranks' tensors do not agree (clusterdoc debug mode).\n\n"
        f"Operation: `{where}`\nInput shapes:\n  - {rows}"
    )


def _fuse_bytes(world) -> int:
    """Payload room in the check vector: the same on every rank (it sets the collective's size)."""
    return FUSE_BYTES if world <= 8 else max(0, (32768 // world) // 8 * 8)


def _fusable(op_name, args, kwargs, room) -> bool:
    """Can this rank do the op from the gathered payloads? (all ranks must say yes, see _check)."""
    import torch

    if op_name not in ("all_reduce", "broadcast") or not room:
        return False
    t = _arg(args, kwargs, 0, "tensor")
    if not isinstance(t, torch.Tensor) or t.numel() * t.element_size() > room:  # large: the usual exit
        return False
    if _arg(args, kwargs, 3, "async_op", False):
        return False
    if op_name == "all_reduce" and _redop_code(_arg(args, kwargs, 1, "op", "SUM")) not in (0, 1, 2, 3):
        return False
    return (
        t.device.type == "cpu"
        and t.is_contiguous()
        and t.element_size() <= 8
        and t.dtype not in (torch.bool, torch.complex64, torch.complex128)
    )


def _finish_fused(op_name, args, kwargs, rows, table):
    """Do the op from the payloads every rank now holds: same data, same order, same result everywhere."""
    import torch

    t = _arg(args, kwargs, 0, "tensor")
    nbytes = t.numel() * t.element_size()

    def data(row):
        return row[WIDTH:].view(torch.uint8)[:nbytes].view(t.dtype).view(t.shape)

    if op_name == "broadcast":
        t.copy_(data(rows[table[0][_ROOT]]))
        return
    code = table[0][_REDOP]
    result = data(rows[0]).clone()
    for row in rows[1:]:
        d = data(row)
        if code == 0:
            result += d
        elif code == 1:
            result *= d
        elif code == 2:
            torch.minimum(result, d, out=result)
        else:
            torch.maximum(result, d, out=result)
    t.copy_(result)


_exchanges: dict = {}


def _exchange(group) -> Exchange:
    """One per group, built on first use (a group's id can be reused once it is gone: compare it)."""
    found = _exchanges.get(id(group))
    if found is None or found.group() is not group:
        import torch.distributed as dist

        words = WIDTH + _fuse_bytes(dist.get_world_size(group)) // 8
        found = Exchange(group, words, track.ORIGINALS["all_to_all_single"], track.ORIGINALS["all_gather_into_tensor"])
        for key in [key for key, ex in _exchanges.items() if ex.group() is None]:  # groups since destroyed
            del _exchanges[key]
        _exchanges[id(group)] = found
    return found


def _check(op_name, args, kwargs) -> bool:
    """Compare this call across the group; raise on disagreement. True if the op was done here too."""
    import torch.distributed as dist

    if op_name in track.P2P:
        return _check_p2p(op_name, args, kwargs)
    group = kwargs.get("group")
    if group is None:
        group = _positional_group(op_name, args)
    if group is None:
        group = dist.group.WORLD
    if group is dist.GroupMember.NON_GROUP_MEMBER:  # what new_group() gave a rank outside it: torch no-ops
        return False
    ex = _exchange(group)
    vec = _encode(op_name, args, kwargs, ex.rank, ex.world)
    called = kwargs.get("_called", op_name)  # a functional collective's own name
    vec[_CALLED] = _CALLED_CODES[called]
    payload = 0
    if ex.words and _fusable(op_name, args, kwargs, (ex.words - WIDTH) * 8):
        vec[_FUSE] = 1
        t = _arg(args, kwargs, 0, "tensor")
        payload = t.numel() * t.element_size()
        ex.my_row[WIDTH:].view(t.dtype)[: t.numel()].copy_(t.reshape(-1))
    table = ex.swap(vec, payload)
    if not agree(table):
        message = verdict(called, table, _global_ranks(group, ex.world))
        if message:
            raise DistributedOperationException(message)
    if ex.words and all(row[_FUSE] == 1 for row in table):
        _finish_fused(op_name, args, kwargs, ex.rows, table)
        return True
    return False


# --- point-to-point -----------------------------------------------------------------------------

_p2p_counts: dict = {}  # (group id, src, dst) -> messages between them so far, as this rank counts them


def _check_p2p(op_name, args, kwargs) -> bool:
    """send/recv/isend/irecv and each op of a batch_isend_irecv, paired with the peer's matching call through the
    group's store (sends and receives between two ranks match in order, as torch matches them): of the two, the
    one that arrives second compares the two calls and raises before its own call. The one that arrived first
    is not stopped (nothing here waits for a peer: isend/irecv stay asynchronous); a recv from any source is
    not checked. Costs 2 to 4 store round trips per op."""
    import torch.distributed as dist

    if op_name == "batch_isend_irecv":
        for o in _arg(args, kwargs, 0, "p2p_op_list") or []:
            sending = "send" in getattr(o.op, "__name__", "")
            _pair(o.op.__name__, o.tensor, o.group, o.peer, o.tag, sending, op_name)
        return False
    group = kwargs.get("group")
    if group is None:
        group = _positional_group(op_name, args)
    if group is None:
        group = dist.group.WORLD
    if group is dist.GroupMember.NON_GROUP_MEMBER:
        return False
    peer, tag = track._p2p(op_name, args, kwargs, group)
    if peer is not None:
        _pair(op_name, _arg(args, kwargs, 0, "tensor"), group, peer, tag, op_name in ("send", "isend"))
    return False


def _pair(op_name, tensor, group, peer, tag, sending, called=None) -> None:
    import torch.distributed as dist

    from clusterdoc.hang import channel

    from .exchange import _group_store

    sealer = _p2p_seal()
    if sealer is None:
        return
    me = dist.get_rank()
    src, dst = (me, peer) if sending else (peer, me)
    count = _p2p_counts[(id(group), src, dst)] = _p2p_counts.get((id(group), src, dst), 0) + 1
    ch = channel.Channel(_group_store(group if group is not None else dist.group.WORLD), sealer, "debug:p2p:")
    base = f"clusterdoc-debug/p2p/{src}-{dst}/{count}/"
    mine = _describe([0] * WIDTH, op_name, tensor) + [int(tag or 0)]
    # each side leaves its sealed row, then looks once for the peer's: whoever looks second finds it (both may)
    ch.set(base + ("send" if sending else "recv"), mine)
    other_key = base + ("recv" if sending else "send")
    other = ch.get(other_key)
    if not _is_row(other, len(mine)):  # the peer has not come yet (it compares), or a value that is not ours
        return
    for key in (other_key, base + ("send" if sending else "recv")):
        try:
            ch.store.delete_key(key)
        except Exception:  # a store without delete: the keys stay (small)
            pass
    send_row, recv_row = (mine, other) if sending else (other, mine)
    if send_row[_DTYPE : _DIMS + MAX_DIMS] == recv_row[_DTYPE : _DIMS + MAX_DIMS] and send_row[-1] == recv_row[-1]:
        return
    lines = [f"Process {src}: {_fmt_row(send_row)}, tag {send_row[-1]}"]
    lines.append(f"Process {dst}: {_fmt_row(recv_row)}, tag {recv_row[-1]}")
    raise DistributedOperationException(_message(called or op_name, lines))


_P2P_SEAL: list = []  # [the job's seal or None], read once


def _p2p_seal():
    """The job's seal: the rows travel through the job's store sealed (hang/seal.py), so nobody else can read
    them or make a rank raise. Without CLUSTERDOC_JOB_SECRET point-to-point ops are not checked (said once)."""
    if not _P2P_SEAL:
        from clusterdoc.hang import seal

        _P2P_SEAL.append(seal.from_env())
        if _P2P_SEAL[0] is None:
            print(
                "clusterdoc debug: point-to-point ops are not checked: CLUSTERDOC_JOB_SECRET is not set "
                "(clusterdoc submit sets it)",
                file=sys.stderr,
            )
    return _P2P_SEAL[0]


def _is_row(value, width: int) -> bool:
    return isinstance(value, list) and len(value) == width and all(type(v) is int for v in value)


def _positional_group(op_name, args):
    pos = track.GROUP_POS[op_name]
    return args[pos] if len(args) > pos else None


def _global_ranks(group, world):
    import torch.distributed as dist

    if group is None or group is dist.group.WORLD:
        return list(range(world))
    try:
        return [dist.get_global_rank(group, i) for i in range(world)]
    except Exception:
        return list(range(world))


def enable_debug() -> None:
    """Run the cross-rank check before every collective (idempotent). The check lives in the collective
    wrapper that tracking installs (track.py), so debug mode and tracking cost one wrapper, not two."""
    track.install()
    track.CHECK = _check


def disable_debug() -> None:
    track.CHECK = None
    _exchanges.clear()


def debug_enabled() -> bool:
    return track.CHECK is not None


def requested_by_env(environ=os.environ) -> bool:
    def on(name):
        return environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")

    return on("CLUSTERDOC_DEBUG") or on("ACCELERATE_DEBUG_MODE")
