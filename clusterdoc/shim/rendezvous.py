"""Meeting the other ranks: the job's store (torch's TCPStore), joined the way the launcher meant it.

torchrun (and `accelerate launch`, torchrun underneath) already serves the store on MASTER_PORT from its agent
and tells its workers so (TORCHELASTIC_USE_AGENT_STORE=True): then every rank, rank 0 too, is a client, as
torch's own env:// init does. Binding a listener there would fight the agent for its port. Elsewhere (srun,
mpirun, deepspeed, submitit, a world of one) rank 0 hosts the store; on a loopback MASTER_ADDR only on
127.0.0.1, since nothing off this machine need reach it.

Stdlib and torch only; no other module of the shim (env.py, exchange.py and debug.py import this one).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
from collections.abc import Mapping


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def is_loopback(addr: str | None) -> bool:
    """MASTER_ADDR names this machine's loopback (the local backend, torchrun --standalone)."""
    try:
        return bool(addr) and ipaddress.ip_address(socket.gethostbyname(str(addr))).is_loopback
    except (OSError, ValueError):
        return False


def my_address() -> str:
    """An address peers can use for this host: its name when it resolves, else loopback (single host)."""
    name = socket.gethostname()
    try:
        socket.gethostbyname(name)
        return name
    except OSError:
        return "127.0.0.1"


def agent_serves_store(environ: Mapping[str, str] = os.environ) -> bool:
    """torchrun's agent hosts the store on MASTER_ADDR:MASTER_PORT (torch reads the variable the same way)."""
    return environ.get("TORCHELASTIC_USE_AGENT_STORE") == str(True)


def loopback_listener(port: int) -> socket.socket:
    """The store server's socket bound to 127.0.0.1 only (torch's own binds every interface)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
        s.listen(1024)
    except OSError:
        s.close()
        raise
    return s


_held: dict = {}  # "listener": rank 0's loopback socket, kept open as long as the store lives


def join_store(addr: str, port: int, rank: int, world: int, timeout: datetime.timedelta):
    """The job's store as this rank should hold it: a client of torchrun's agent, else rank 0 its host."""
    import torch.distributed as dist

    if agent_serves_store():
        try:  # torch's own client for the agent's store (it knows each torch's per-attempt prefix, if any)
            from torch.distributed.rendezvous import _create_c10d_store

            return _create_c10d_store(addr, port, rank, world, timeout)
        except ImportError:
            return dist.TCPStore(addr, port, world, False, timeout)
    listen = {}
    if rank == 0 and is_loopback(addr):  # one machine: nothing else need reach the store
        _held["listener"] = loopback_listener(port)
        listen = {"master_listen_fd": _held["listener"].fileno()}
    kwargs = dict(is_master=rank == 0, timeout=timeout, wait_for_workers=True, **listen)
    try:
        return dist.TCPStore(addr, port, world, **kwargs)
    except RuntimeError as exc:  # before torch 2.5 only the legacy backend takes a listening socket
        if not listen or "listen fd" not in str(exc):
            raise
        return dist.TCPStore(addr, port, world, **kwargs, use_libuv=False)
