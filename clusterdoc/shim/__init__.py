"""clusterdoc.shim: runtime helpers for distributed PyTorch jobs, with Accelerate / transformers names.

    from clusterdoc import shim
    shim.init()
    logger = shim.get_logger(__name__, log_level="INFO")
    logger.info("msg", main_process_only=False, in_order=True)

Importing this package changes nothing and imports nothing heavy: names load on first use. Switches:
CLUSTERDOC_DEBUG=1 (or ACCELERATE_DEBUG_MODE=1) turns on the collective checks, CLUSTERDOC_OVERFLOW=1
the inf/nan hooks on every module.
"""

import importlib
import os

_EXPORTS = {
    "init": "env",
    "rank_env": "env",
    "resolve": "env",
    "RankEnv": "env",
    "RankEnvironmentError": "env",
    "ShimError": "errors",
    "enable_debug": "debug",
    "disable_debug": "debug",
    "debug_enabled": "debug",
    "DistributedOperationException": "debug",
    "get_logger": "logging",
    "MultiProcessAdapter": "logging",
    "set_trigger": "trigger",
    "check_trigger": "trigger",
    "trigger_ranks": "trigger",
    "find_executable_batch_size": "oom",
    "should_reduce_batch_size": "oom",
    "is_oom_error": "oom",
    "release_memory": "oom",
    "BatchSizeSearchError": "oom",
    "AttemptAborted": "oom",
    "RetryUnsafe": "oom",
    "DebugUnderflowOverflow": "overflow",
    "detect_overflow": "overflow",
    "OverflowDetected": "overflow",
    "enable_overflow_detection": "overflow",
    "disable_overflow_detection": "overflow",
    "enable_hang_watch": "watch",
    "hang_watch_enabled": "watch",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__


def _switched_on(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


if _switched_on("CLUSTERDOC_DEBUG") or _switched_on("ACCELERATE_DEBUG_MODE"):
    __getattr__("enable_debug")()
if _switched_on("CLUSTERDOC_OVERFLOW"):
    __getattr__("enable_overflow_detection")()
