"""Swap one small int64 row (plus an optional payload) with every rank of a process group, before each op.

Debug mode runs this before every collective, so its latency is the mode's cost. A gloo collective, however
small, goes caller -> the group's worker thread -> gloo's socket loop thread -> worker -> caller: three thread
hand-offs per rank, each a wake-up that on busy cores costs 0.1-0.2 ms (measured here: a 4 KiB alltoall
alone ~0.3-0.5 ms at 2 ranks, right after a 4 MiB all_reduce more). So the row goes over a side channel of
our own: one TCP connection per pair of group members, opened once per group through the group's store
(the rendezvous torch already made; the records there sealed and each connection proven with tokens derived
from the job's secret, so without CLUSTERDOC_JOB_SECRET every member takes the collective; a loopback
MASTER_ADDR keeps the listeners on loopback), written and read by the calling thread itself (blocking sockets, the
GIL released while waiting, so the hang watchdog still runs). Alone: ~0.02 ms. Messages carry their length,
so the non-fused row is ~130 bytes and a mismatch in size is a verdict, never a stream error.

Every member sets the channel up at its first check on the group and says in the store whether it could
reach every peer; only if all could is it used, otherwise every member falls back to the collective (gloo:
the backend's alltoall of a fixed-size row, one round; other backends: all_gather of a device tensor), so
the choice is the same on every rank. A peer that is gone raises at once; one that never comes raises after
the store's timeout (torch's collectives wait the group timeout, the same default).
"""

from __future__ import annotations

import hmac
import os
import socket
import struct
import threading
import time
import weakref
from array import array

from .rendezvous import is_loopback

CONNECT_SECONDS = 5.0  # per address tried; the channel is set up once per group
_HEADER = struct.Struct("<q")  # bytes that follow (head words + payload)
SIDE_CHANNEL = True  # False: always the collective (benchmarks compare; set it alike on every rank)


class Exchange:
    def __init__(self, group, words: int, all_to_all_single, all_gather_into_tensor, side_channel=None):
        import torch
        import torch.distributed as dist

        # weak: holding a process group past its time makes its threads outlive Python's shutdown (abort)
        self.group = weakref.ref(group)
        self.world = dist.get_world_size(group)
        self.rank = dist.get_rank(group)
        self.backend = dist.get_backend(group)
        self.words = words if self.backend == "gloo" else 0  # room for head + payload (fusing: gloo only)
        self._gather = all_gather_into_tensor
        self._a2a = all_to_all_single
        self._lock = threading.Lock()
        side_channel = SIDE_CHANNEL if side_channel is None else side_channel
        self._peers: list | None
        if self.world == 1:
            self._peers = [None]  # nobody to talk to: the socket path with no peers
        else:
            self._peers = _open_channel(group, self.rank, self.world) if side_channel else None
        self.mode = "socket" if self._peers is not None else ("alltoall" if self.words else "gather")
        if self.mode == "gather":
            return
        if self.mode == "socket":
            import select

            self._pollers = []
            assert self._peers is not None  # the socket mode is the one with peers
            for s in self._peers:
                poller = select.poll()
                if s is not None:
                    poller.register(s, select.POLLIN)
                self._pollers.append(poller)
            self._timeout_ms = (
                0 if self.world == 1 else min(int(_group_store(group).timeout.total_seconds() * 1000), 2**31 - 1)
            )
        # socket: each row is [length][words]; alltoall: [words] (fixed size, the same on every rank)
        cap = max(self.words, 64)
        lead = 1 if self.mode == "socket" else 0
        self._stride = stride = (cap + lead) * 8
        self._send = bytearray(stride if self.mode == "socket" else self.world * stride)
        self._recv = bytearray(self.world * stride)
        self._send_q, self._recv_q = memoryview(self._send).cast("q"), memoryview(self._recv).cast("q")
        self._send_b, self._recv_b = memoryview(self._send), memoryview(self._recv)
        send, recv = torch.frombuffer(self._send, dtype=torch.int64), torch.frombuffer(self._recv, dtype=torch.int64)
        self.my_row = send[lead : lead + cap]  # payload bytes beyond the head are written here by the caller
        self.rows = recv.view(self.world, cap + lead)[:, lead:]  # after swap(): row i came from group rank i
        self._send_t, self._recv_t = send, recv
        self._opts = dist.AllToAllOptions() if hasattr(group, "alltoall_base") else None

    def swap(self, head: list, payload_bytes: int = 0) -> list:
        """Send `head` (+ payload_bytes already in my_row after it) to every rank; return all heads."""
        if self.mode == "socket":
            with self._lock:
                return self._swap_socket(head, payload_bytes)
        n = len(head)
        if self.mode == "gather":
            return self._gather_heads(head)
        self._send_q[:n] = array("q", head)
        b, row, used = self._send_b, self._stride, n * 8 + payload_bytes
        for i in range(1, self.world):
            b[i * row : i * row + used] = b[:used]
        group = self.group()
        if self._opts is not None and group is not None:
            group.alltoall_base(self._recv_t, self._send_t, [], [], self._opts).wait()
        else:  # older torch: the (unwrapped) functional API
            self._a2a(self._recv_t, self._send_t, group=group)
        q, w = self._recv_q, row // 8
        return [q[i * w : i * w + n].tolist() for i in range(self.world)]

    def _swap_socket(self, head, payload_bytes):
        peers = self._peers
        if peers is None:
            raise RuntimeError("clusterdoc debug mode: an earlier check on this group failed; its channel is closed")
        n = len(head)
        used = n * 8 + payload_bytes
        q = self._send_q
        q[0] = used
        q[1 : 1 + n] = array("q", head)
        out = self._send_b[: 8 + used]
        stride, me = self._stride, self.rank
        try:
            for s in peers:
                if s is not None:
                    _send_all(s, out, self._timeout_ms)
            self._recv_b[me * stride : me * stride + 8 + used] = out
            for i, s in enumerate(peers):
                if s is not None:
                    self._read(s, i, n)
        except BaseException:
            self._close()
            raise
        q, w = self._recv_q, stride // 8
        return [q[i * w + 1 : i * w + 1 + n].tolist() for i in range(self.world)]

    def _read(self, s, i, n):
        """Exactly one message from group rank i (a peer done with a fused op may already have sent the next)."""
        stride = self._stride
        view = self._recv_b[i * stride : (i + 1) * stride]
        got, want = 0, 8 + n * 8  # the length word and the head: one recv for a message without payload
        header = False
        while got < want:
            try:
                k = s.recv_into(view[got:want])
            except BlockingIOError:  # not there yet: sleep until it is (poll releases the GIL)
                if not self._pollers[i].poll(self._timeout_ms):
                    raise RuntimeError(
                        f"clusterdoc debug mode: group rank {i} did not reach this collective within the store timeout"
                    ) from None
                continue
            except OSError as exc:
                raise RuntimeError(f"clusterdoc debug mode: lost group rank {i} ({exc})") from None
            if not k:
                raise RuntimeError(f"clusterdoc debug mode: group rank {i} closed its connection (process gone?)")
            got += k
            if not header and got >= 8:
                header = True
                length = _HEADER.unpack_from(view, 0)[0]
                if not n * 8 <= length <= stride - 8:
                    raise RuntimeError(f"clusterdoc debug mode: bad message from group rank {i} ({length} bytes)")
                want = 8 + length

    def _close(self):
        peers, self._peers = self._peers, None
        for s in peers or ():
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass

    def _gather_heads(self, head):
        import torch

        device = torch.device("cuda", torch.cuda.current_device()) if self.backend == "nccl" else "cpu"
        mine = torch.tensor(head, dtype=torch.int64, device=device)
        out = torch.empty(self.world * len(head), dtype=torch.int64, device=device)
        self._gather(out, mine, group=self.group())
        return out.view(self.world, len(head)).tolist()


# --- the side channel ------------------------------------------------------------------------------


def _send_all(s, data, timeout_ms):
    import select

    view = memoryview(data)
    while view:
        try:
            view = view[s.send(view) :]
        except BlockingIOError:  # the peer's buffer is full (it is far behind): wait until it drains
            poller = select.poll()
            poller.register(s, select.POLLOUT)
            if not poller.poll(timeout_ms):
                raise RuntimeError("clusterdoc debug mode: a peer did not read its messages within the store timeout")


def _group_store(group):
    from torch.distributed import distributed_c10d as c10d

    return c10d._world.pg_map[group][1]


def _my_addresses() -> list:
    """Addresses a peer may reach this process on, best first."""
    found = []
    master = os.environ.get("MASTER_ADDR")
    if master:
        try:  # the interface that routes to the rendezvous host (no packet is sent)
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                u.connect((master, int(os.environ.get("MASTER_PORT") or 29500)))
                found.append(u.getsockname()[0])
        except OSError:
            pass
    try:
        found.append(socket.gethostbyname(socket.gethostname()))
    except OSError:
        pass
    return list(dict.fromkeys(found))


def _recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise OSError("connection closed during the handshake")
        data += chunk
    return data


def _connect(info, rank, host, timeout, hello: bytes, ack: bytes):
    """Connect to a peer's listener and prove it is that peer (its ack) and we are `rank` (our hello)."""
    addresses = list(info["ips"])
    if info["host"] == host:
        addresses.insert(0, "127.0.0.1")
    for address in dict.fromkeys(addresses):
        s = None
        try:
            s = socket.create_connection((address, info["port"]), timeout=CONNECT_SECONDS)
            s.settimeout(timeout)  # the peer acks once it is done connecting to ranks below it
            s.sendall(_HEADER.pack(rank) + hello)
            if hmac.compare_digest(_recv_exact(s, len(ack)), ack):
                return s
        except OSError:
            pass
        if s is not None:
            s.close()
    return None


_setups: dict = {}  # group name -> channel setups of that group by this process (the same count on every member)


def _addr_record(value) -> dict | None:
    ok = (
        isinstance(value, dict)
        and isinstance(value.get("host"), str)
        and isinstance(value.get("ips"), list)
        and all(isinstance(ip, str) for ip in value["ips"])
        and isinstance(value.get("port"), int)
    )
    return value if ok else None


def _open_channel(group, rank, world):
    """One socket per peer (None for ourselves), or None if some member could not reach some peer.

    The members meet through the group's store with sealed values (hang/seal.py: nothing there is readable or
    forgeable without the job's secret); each connection is proven with tokens derived from the secret, which
    never travel through the store. Without a secret every member falls back to the collective alike."""
    from clusterdoc.hang import channel, seal

    sealer = seal.from_env()
    try:
        store = _group_store(group)
        timeout = store.timeout.total_seconds()
    except Exception:  # no store to meet through (old torch): every member falls back alike
        return None
    if sealer is None:
        return None
    name = getattr(group, "group_name", "") or str(id(group))
    gen = _setups[name] = _setups.get(name, 0) + 1  # the n-th setup of this group, on every member
    ch = channel.Channel(store, sealer, f"debug:{name}:")
    prefix = f"clusterdoc-debug/{gen}/"

    def hello(listener: int, peer: int) -> bytes:
        return sealer.token("hello", name, gen, listener, peer)

    def ack(listener: int, peer: int) -> bytes:
        return sealer.token("ack", name, gen, listener, peer)[:8]

    host = socket.gethostname()
    peers: list = [None] * world
    ok = False
    deadline = time.monotonic() + timeout
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1" if is_loopback(os.environ.get("MASTER_ADDR")) else "", 0))
        listener.listen(world)
        ch.set(prefix + f"addr/{rank}", {"host": host, "ips": _my_addresses(), "port": listener.getsockname()[1]})
        for j in range(rank):  # connect down, then accept from above: no cycle of waits
            info = _addr_record(ch.wait([prefix + f"addr/{j}"], deadline)[prefix + f"addr/{j}"])
            peers[j] = _connect(info, rank, host, timeout, hello(j, rank), ack(j, rank)) if info else None
            if peers[j] is None:
                raise OSError(f"cannot reach group rank {j}")
        # wait until every higher rank is in its setup
        ch.wait([prefix + f"addr/{j}" for j in range(rank + 1, world)], deadline)
        listener.settimeout(CONNECT_SECONDS * 4)
        left = set(range(rank + 1, world))
        deadline = time.monotonic() + CONNECT_SECONDS * 4 * max(1, len(left))
        while left and time.monotonic() < deadline:
            s, _ = listener.accept()
            s.settimeout(CONNECT_SECONDS)
            try:
                got = _recv_exact(s, 8 + 16)
            except OSError:
                s.close()
                continue
            peer = _HEADER.unpack_from(got)[0]
            if peer not in left or not hmac.compare_digest(got[8:], hello(rank, peer)):
                s.close()
                continue
            s.sendall(ack(rank, peer))
            peers[peer] = s
            left.discard(peer)
        ok = not left
    except (OSError, TimeoutError):
        ok = False
    finally:
        listener.close()
    ch.set(prefix + f"ok/{rank}", ok)
    try:
        oks = ch.wait([prefix + f"ok/{j}" for j in range(world)], time.monotonic() + timeout)
        agreed = all(v is True for v in oks.values())
    except TimeoutError:
        agreed = False
    if not agreed:
        for s in peers:
            if s is not None:
                s.close()
        return None
    for s in peers:
        if s is not None:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.setblocking(False)  # waits are poll()s of our own (and a short spin first, see SPIN_SECONDS)
    return peers
