"""Rank-aware logging with Accelerate's calling convention.

`logger.info(msg, main_process_only=True, in_order=False)`. Every message carries rank, world size
and host. With in_order=True every rank of the group takes part in the same barriers whether or not
its level lets the message through: the barrier decision depends only on the call's arguments, never
on the level, so ranks with different levels cannot deadlock (Accelerate's adapter skips the barriers
on a rank whose level is off and hangs the others).
"""

from __future__ import annotations

import logging
import os
import socket

from .env import rank_env

_LEVEL_VARS = ("CLUSTERDOC_LOG_LEVEL", "ACCELERATE_LOG_LEVEL")


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


class MultiProcessAdapter(logging.LoggerAdapter):
    def process(self, msg, kwargs):
        rank, world = _where()
        return f"[rank {rank}/{world} {_HOST}] {msg}", kwargs

    def log(self, level, msg, *args, main_process_only=True, in_order=False, **kwargs):
        rank, world = _where()
        if in_order and not main_process_only and world > 1:
            self._log_in_order(level, msg, args, kwargs, rank, world)
            return
        if main_process_only and rank != 0:
            return
        if self.isEnabledFor(level):
            msg, kwargs = self.process(msg, kwargs)
            self.logger.log(level, msg, *args, **kwargs)

    def _log_in_order(self, level, msg, args, kwargs, rank, world):
        import torch.distributed as dist

        for turn in range(world):
            if turn == rank and self.isEnabledFor(level):
                text, kw = self.process(msg, dict(kwargs))
                self.logger.log(level, text, *args, **kw)
                _flush(self.logger)
            if dist.is_initialized():
                dist.barrier()

    # LoggerAdapter's helpers call self.log(level, ...) with our extra keywords passed through.
    def warning_once(self, msg, *args, **kwargs):
        key = (msg, args)
        if key not in _seen:
            _seen.add(key)
            self.warning(msg, *args, **kwargs)


_seen: set = set()
_HOST = socket.gethostname()


def _flush(logger):
    while logger is not None:
        for handler in logger.handlers:
            handler.flush()
        logger = logger.parent if logger.propagate else None


def get_logger(name: str, log_level: str | None = None) -> MultiProcessAdapter:
    """A logger for `name` whose calls accept main_process_only= and in_order=.

    Level: `log_level`, else CLUSTERDOC_LOG_LEVEL, else ACCELERATE_LOG_LEVEL, else INFO.
    Like Accelerate, configures the root handler (logging.basicConfig) if the script has none.
    """
    if log_level is None:
        log_level = next((os.environ[v] for v in _LEVEL_VARS if os.environ.get(v)), "INFO")
    logger = logging.getLogger(name)
    logger.setLevel(log_level.upper())
    if not logging.getLogger().handlers:
        logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s %(message)s")
    return MultiProcessAdapter(logger, {})
