"""Rank-aware logging with Accelerate's calling convention (accelerate/logging.py).

`logger.info(msg, main_process_only=True, in_order=False)`: main_process_only logs on rank 0 only;
in_order=True logs on every rank, one after the other in rank order (main_process_only is then ignored,
as in Accelerate). Every record's call site (`filename`, `lineno`, `funcName`) is the caller's: the
adapter passes `stacklevel` as Accelerate does and respects the caller's own. Every message carries
rank, world size and host. With in_order=True every rank of the group takes part in the same barriers
whether or not its level lets the message through: the barrier decision depends only on the call's
arguments, never on the level, so ranks with different levels cannot deadlock (Accelerate's adapter
skips the barriers on a rank whose level is off and hangs the others). Deliberate differences from
Accelerate are listed in docs/shim.md#logging.
"""

from __future__ import annotations

import logging
import os
import socket

from .env import rank_env

_LEVEL_VARS = ("CLUSTERDOC_LOG_LEVEL", "ACCELERATE_LOG_LEVEL")
_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
_ONCE_KEYS = 4096  # warning_once remembers at most this many messages per logger (untrusted text stays bounded)


def _where():
    """(rank, world) from the process group if it is up, else from the launcher's variables."""
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except ImportError:
        pass
    env = rank_env()
    return env.rank, env.world_size


def _barrier():
    try:
        import torch.distributed as dist
    except ImportError:
        return
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def _ensure_handler(logger: logging.Logger) -> None:
    """A record about to be emitted with no handler anywhere on its way: configure the root once.

    Done at the first record, not in get_logger(): a script that calls get_logger() at import time and
    logging.basicConfig(format=...) later in main() (Accelerate's examples) keeps its own format.
    """
    node: logging.Logger | None = logger
    while node is not None:
        if node.handlers:
            return
        node = node.parent if node.propagate else None
    logging.basicConfig(format=_FORMAT)


class MultiProcessAdapter(logging.LoggerAdapter):
    def process(self, msg, kwargs):
        # exclude this adapter's own frame in Logger.findCaller() while respecting the caller's choice
        kwargs.setdefault("stacklevel", 2)
        rank, world = _where()
        return f"[rank {rank}/{world} {_HOST}] {msg}", kwargs

    def log(self, level, msg, *args, main_process_only=True, in_order=False, **kwargs):
        # Every path below calls self.logger.log from this very frame: stacklevel=2 (process()) names
        # the caller of info()/warning()/log(), a caller's own stacklevel counts from here as in Accelerate.
        rank, world = _where()
        enabled = self.isEnabledFor(level)
        if in_order and world > 1:
            for turn in range(world):
                if turn == rank and enabled:
                    _ensure_handler(self.logger)
                    text, kw = self.process(msg, dict(kwargs))
                    self.logger.log(level, text, *args, **kw)
                    _flush(self.logger)
                _barrier()
            return
        if (main_process_only and not in_order and rank != 0) or not enabled:
            return
        _ensure_handler(self.logger)
        msg, kwargs = self.process(msg, kwargs)
        self.logger.log(level, msg, *args, **kwargs)

    def warning_once(self, msg, *args, **kwargs):
        """logger.warning() emitted once per adapter for the same arguments (Accelerate's lru_cache key);
        the record's call site is the caller of warning_once()."""
        seen = self.__dict__.setdefault("_seen_once", set())
        try:
            key = hash((msg, args, tuple(sorted(kwargs.items()))))
        except TypeError:
            key = hash(repr((msg, args, sorted(kwargs.items()))))
        if key in seen:
            return
        if len(seen) < _ONCE_KEYS:
            seen.add(key)
        kwargs["stacklevel"] = kwargs.get("stacklevel", 2) + 1  # this frame too
        self.warning(msg, *args, **kwargs)


_HOST = socket.gethostname()


def _flush(logger):
    while logger is not None:
        for handler in logger.handlers:
            handler.flush()
        logger = logger.parent if logger.propagate else None


def _level_from_env() -> str | None:
    return next((os.environ[v] for v in _LEVEL_VARS if os.environ.get(v)), None)


def get_logger(name: str, log_level: str | None = None) -> MultiProcessAdapter:
    """A logger for `name` whose calls accept main_process_only= and in_order=.

    Level: `log_level`, else CLUSTERDOC_LOG_LEVEL, else ACCELERATE_LOG_LEVEL (set on the logger and on the
    root logger, as Accelerate does); else INFO on this logger only. If no handler is configured when the
    first record is emitted, the root gets one (logging.basicConfig).
    """
    if log_level is None:
        log_level = _level_from_env()
    logger = logging.getLogger(name)
    if log_level is not None:
        logger.setLevel(log_level.upper())
        logger.root.setLevel(log_level.upper())
    else:
        logger.setLevel(logging.INFO)
    return MultiProcessAdapter(logger, {})


def internal_logger(name: str) -> MultiProcessAdapter:
    """clusterdoc's own logger: the level from the environment or INFO, the root logger left alone."""
    logger = logging.getLogger(name)
    logger.setLevel((_level_from_env() or "INFO").upper())
    return MultiProcessAdapter(logger, {})
