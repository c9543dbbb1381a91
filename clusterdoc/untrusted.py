"""What nodes send is untrusted: bounded in size, checked against its expected form, shown escaped.

A node's output can carry terminal escape sequences (retitle or clear the operator's terminal, rewrite
lines of the report), a flood of bytes, or values of the wrong type or form. Everything a node sent
passes through here before it is judged or printed:
  - MAX_STREAM bounds what the head reads of one stream of one node (remote.py stops reading there);
  - `clean_facts` replaces a value that is not of its expected form (a driver version with escape
    codes, a GPU name with control characters, a list where a string belongs, a number beyond 2**63,
    NaN) with None, so no rule judges it, and lists it in facts["malformed"]; a list or map of objects
    with a hole in it (`{"gpus": [null]}`) or an object without a key the rules need (`Required`) is
    dropped whole; free text (error messages) is escaped instead. So the rules only ever see values
    of their expected types: one node's garbage is a `malformed` finding of that node, never a crash;
  - `printable` escapes non-printable characters; the report passes every line it prints through it.
Pure functions only.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import overload

MAX_STREAM = 4 << 20  # bytes read from one stream (stdout, stderr) of one node
MAX_TEXT = 2000  # characters kept of one free-text value (an error message, a stderr tail)
MAX_VALUE = 4096  # a longer non-free-text string is malformed
MAX_NUMBER = 2**63  # a larger (or non-finite) number is malformed

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    o = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def printable(text, limit: int | None = None) -> str:
    """`text` with every non-printable character (controls, ESC, bidi overrides, lone surrogates...)
    written as a Python-style escape; cut to `limit` characters first. Idempotent."""
    s = text if isinstance(text, str) else str(text)
    if limit is not None and len(s) > limit:
        s = s[:limit] + "..."
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else _escape(c) for c in s)


def printable_lines(text) -> str:
    """Multi-line text (a report) with each line escaped as by printable(): its line breaks kept."""
    return "\n".join(printable(line) for line in str(text).split("\n"))


def json_text(value, **options) -> str:
    """JSON every parser reads: a NaN or infinity (which Python would write as NaN, not JSON) becomes null."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError:
        return json.dumps(_finite(value), allow_nan=False, **options)


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


def decode(data: bytes | bytearray) -> str:
    return data.decode("utf-8", "replace")


# --- expected forms of the facts (the probe's schema, clusterdoc/probe/__init__.py) -----------------------

STR, TEXT, VERSION, DRIVER, CAP, HOST, BOOL, INT, NUM, ANY, FPRINT = (
    "text",
    "free text",
    "version",
    "driver version",
    "compute capability",
    "host name",
    "bool",
    "integer",
    "number",
    "any",
    "key fingerprint",
)
INT_STR = "port number"
# text a C library filled in: its terminating NUL (Open MPI's MPI_Get_library_version) is no part of it
CSTR = "C string"
ADDR, CIDR, IFNAME, SHA256, WORD, TARGET = (
    "address",
    "address/prefix",
    "interface name",
    "sha256",
    "word",
    "host:port",
)
_IP = r"(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f:]{2,39}(?:\.\d{1,3}(?:\.\d{1,3}){3})?(?:%[\w.-]{1,15})?)"
FORMS = {
    INT_STR: re.compile(r"\d{1,5}"),
    VERSION: re.compile(r"[0-9A-Za-z][0-9A-Za-z._+~-]{0,63}"),
    DRIVER: re.compile(r"\d{1,6}(\.\d{1,6}){0,3}"),
    CAP: re.compile(r"\d{1,2}\.\d{1,2}"),
    HOST: re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,252}"),
    FPRINT: re.compile(r"SHA256:[A-Za-z0-9+/]{43}"),
    ADDR: re.compile(_IP),
    CIDR: re.compile(_IP + r"/\d{1,3}"),
    IFNAME: re.compile(r"[^\s/:]{1,15}"),  # Linux: at most 15 bytes, no blank, '/' or ':'
    SHA256: re.compile(r"[0-9a-f]{64}"),
    WORD: re.compile(r"[A-Za-z_]{1,32}"),
    TARGET: re.compile(r"[^\s]{1,260}:\d{1,5}"),
}


@dataclass(frozen=True)
class Required:
    """A key the rules cannot judge its object without: when it is missing, None, "" or malformed, the whole
    object is malformed (dropped), as a wrong type is."""

    form: object


_MPI = {"path": STR, "flavour": STR, "version": VERSION, "library": CSTR, "error": TEXT, "missing": BOOL}
SCHEMA = {
    "schema": INT,
    "probe": STR,
    "elapsed": NUM,
    "hostname": HOST,
    "kernel": {"release": VERSION, "source": STR, "container": BOOL, "gvisor": BOOL},
    "python": {"version": VERSION, "executable": STR},
    "torch": {
        "version": Required(VERSION),
        "cuda": VERSION,
        "arch_list": [STR],
        "nccl": VERSION,
        "nccl_lib": STR,
        "cuda_available": BOOL,
        "path": STR,
    },
    "nvcc": {
        "path": Required(STR),
        "realpath": STR,
        "home": STR,
        "version": VERSION,
        "arch_list": [STR],
        "host_config": STR,
        "gcc_max": INT,
    },
    "cuda_home": STR,
    "cuda_home_realpath": STR,
    "toolkits": [
        {
            "path": Required(STR),
            "realpath": STR,
            "version": VERSION,
            "version_source": STR,
            "nvcc": BOOL,
            "libcudart": BOOL,
            "gcc_max": INT,
        }
    ],
    "libcudart_first": {"path": STR, "dir": STR, "toolkit": STR},
    "gcc": {"path": STR, "version": VERSION},
    "gpus": [{"index": INT, "name": STR, "capability": CAP, "memory_mib": INT, "driver": DRIVER}],
    "driver": DRIVER,
    "env": {"*": STR},
    "deepspeed": {
        "version": VERSION,
        "torch_version": VERSION,
        "cuda_version": VERSION,
        "ops_installed": {"*": BOOL},
        "ops_compatible": {"*": BOOL},
        "path": STR,
        "wheel_manifest": ANY,
        "binaries": [{"file": Required(STR), "op": STR, "sass": [STR], "ptx": [STR], "error": TEXT}],
        "binaries_left": INT,
    },
    "mpi": {"mpirun": _MPI, "mpi4py": _MPI, "head_mpirun": _MPI},
    "libaio": BOOL,
    "libaio_header": BOOL,
    "mesh": {"*": {"ok": BOOL, "message": TEXT}},
    "ssh_trust": {
        "user": STR,
        "identities": [FPRINT],
        "authorized": [FPRINT],
        "host_keys": [FPRINT],
        "known": {"*": [FPRINT]},
    },
    "errors": [{"probe": Required(STR), "message": TEXT}],
    "net": {
        "hostname": HOST,
        "own": [ADDR],
        "own_error": TEXT,
        "resolve": {"*": [ADDR]},
        "resolve_errors": {"*": TEXT},
        "ifaces": [{"name": IFNAME, "up": BOOL, "running": BOOL, "loopback": BOOL, "mtu": INT, "addrs": [CIDR]}],
        "route": {"to": HOST, "addr": ADDR, "source": ADDR, "iface": IFNAME, "error": TEXT},
        "ifname_env": {"*": STR},
        "ib": [{"device": IFNAME, "port": INT_STR, "state": WORD, "link_layer": WORD}],
    },
    "wrapped": STR,
    "nccl": {
        "env": {"*": STR},
        "wheels": [{"name": Required(STR), "version": VERSION, "path": STR, "lib": STR}],
        "torch_pin": {"*": VERSION},
        "ld_path": [{"path": STR, "realpath": STR}],
        "preload": [STR],
        "gids": [{"device": IFNAME, "port": INT_STR, "index": INT, "gid": STR, "type": STR}],
        "runtime": {"driver_module": DRIVER, "sys_infiniband": [IFNAME], "dev_infiniband": [STR]},
    },
    "port": {
        "listen": [
            {
                "port": INT,
                "mode": WORD,
                "status": WORD,
                "message": TEXT,
                "expected": INT,
                "accepted": INT,
                "closed": NUM,
            }
        ],
        "connect": [
            {"target": TARGET, "ok": BOOL, "error": WORD, "message": TEXT, "attempts": INT, "elapsed": NUM, "at": NUM}
        ],
    },
    "resources": {
        "shm": {"total_mib": INT, "free_mib": INT},
        "memlock_kib": INT,
        "nofile": INT,
        "nofile_hard": INT,
        "space": {"*": {"total_mib": INT, "free_mib": INT, "error": TEXT}},
    },
    "clock": {"start": NUM, "end": NUM, "date": NUM, "date_at": NUM, "head_sent": NUM, "head_received": NUM},
    "files": {"*": {"sha256": SHA256, "size": INT, "realpath": STR, "error": TEXT}},
    "gpu_health": {
        "smi": {
            "driver": DRIVER,
            "cuda": VERSION,
            "attached": INT,
            "gpus": [
                {
                    "bus": STR,
                    "uuid": STR,
                    "name": STR,
                    "persistence": WORD,
                    "mig": WORD,
                    "compute_mode": WORD,
                    "pcie": {"*": INT},
                    "throttle": [WORD],
                    "ecc": {"*": INT},
                    "retired": {"single_bit": INT, "double_bit": INT, "pending": BOOL},
                    "remap": {"correctable": INT, "uncorrectable": INT, "pending": BOOL, "failure": BOOL},
                    "recovery": {"action": STR, "*": BOOL},
                }
            ],
        },
        "lost": [{"bus": STR, "index": INT, "message": TEXT}],
        "xid": {
            "source": STR,
            "events": [{"bus": STR, "xid": INT, "text": TEXT}],
            "counts": [{"xid": INT, "bus": STR, "n": INT}],
            "new_counts": [{"xid": INT, "bus": STR, "n": INT}],
            "faults": [{"kind": WORD, "bus": STR, "gpu": INT, "n": INT, "new": INT, "text": TEXT}],
            "gpu_bus": {"*": STR},
            "total": INT,
            "new": INT,
            "since": NUM,
        },
        "dcgm": {
            "diag": {
                "tests": INT,
                "results": [{"test": STR, "gpu": STR, "status": STR, "detail": TEXT}],
                "error": TEXT,
            },
            "health": {"overall": STR, "incidents": [TEXT], "error": TEXT},
        },
        "fabricmanager": WORD,
        "acs": [{"bridge": STR, "gpus": [STR]}],
        "iommu": {"*": STR},
        "peermem": BOOL,
        "ib": [
            {
                "device": IFNAME,
                "port": INT_STR,
                "link_layer": WORD,
                "hca": STR,
                "rate_gbps": NUM,
                "link_downed": INT,
                "symbol_error": INT,
                "link_error_recovery": INT,
            }
        ],
        "ib_changed": [STR],
        "nccl_env": {"*": STR},
        "hypervisor": BOOL,
        "nvlink": {"*": {"active": INT, "inactive": [INT], "all_down": BOOL, "name": STR}},
        "nvlink_errors": {"*": {"*": INT}},
        "nvlink_rising": [STR],
        "p2p": {"gpus": INT, "bad": [{"a": INT, "b": INT, "code": WORD}]},
        "dmabuf": {"kernel": VERSION, "open_module": BOOL},
    },
}
# Which check a malformed field belongs to (by its top-level key; default: ssh).
FIELD_CHECK = {
    "kernel": "kernel",
    "python": "cuda",
    "torch": "cuda",
    "nvcc": "cuda",
    "cuda_home": "cuda",
    "toolkits": "cuda",
    "libcudart_first": "cuda",
    "gcc": "cuda",
    "driver": "cuda",
    "env": "cuda",
    "gpus": "arch",
    "deepspeed": "arch",
    "libaio": "arch",
    "libaio_header": "arch",
    "mpi": "mpi",
    "mesh": "mesh",
    "ssh_trust": "mesh",
    "env.TORCH_CUDA_ARCH_LIST": "arch",
    "net": "net",
    "nccl": "nccl",
    "wrapped": "nccl",
    "port": "port",
    "resources": "resources",
    "clock": "clock",
    "files": "files",
    "gpu_health": "gpu",
}


def check_of(field: str) -> str:
    return FIELD_CHECK.get(field) or FIELD_CHECK.get(re.split(r"[.\[]", field)[0], "ssh")


def _describe(value) -> str:
    if isinstance(value, str):
        return f"'{printable(value, 120)}'"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return printable(repr(value), 40)  # 1e999 and nan say why
    return {type(None): "null", bool: "a boolean", list: "a list", dict: "an object"}.get(type(value), "a value")


# nvidia-smi's (and other tools') words for a value they do not know; bracketed forms too ("[N/A]", "[Not Supported]")
NVIDIA_FIELDS = ("gpu_health", "gpus", "driver")  # the facts read from nvidia-smi
UNKNOWN_WORDS = frozenset(("n/a", "not found", "not supported", "unknown error", "insufficient permissions"))


def _unknown(value: str) -> bool:
    v = value.strip()
    if v.startswith("[") and v.endswith("]"):
        v = v[1:-1].strip()
    return v.lower() in UNKNOWN_WORDS


def _bad_scalar(value, form: str) -> bool:
    """True when `value` (not None) is not of `form`."""
    if form == BOOL:
        return not isinstance(value, bool)
    if form in (INT, NUM):  # bounded: no count, size or time of a node needs more; NaN and Infinity are not numbers
        number = (int,) if form == INT else (int, float)
        return not isinstance(value, number) or isinstance(value, bool) or not abs(value) < MAX_NUMBER
    if not isinstance(value, str):
        return True
    if value == "":
        return False  # absent, as the shell fallback says it
    if len(value) > MAX_VALUE or not value.isprintable():
        return True
    pattern = FORMS.get(form)
    return bool(pattern and not pattern.fullmatch(value))


def escape_all(value):
    """Unknown or free-form structures: every string escaped, every key too; a float that JSON cannot carry
    (NaN, Infinity) is None, so the report stays valid JSON."""
    if isinstance(value, str):
        return printable(value, MAX_TEXT)
    if isinstance(value, list):
        return [escape_all(v) for v in value]
    if isinstance(value, dict):
        return {printable(k, 200): escape_all(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _clean(value, form, path: str, bad: list):
    if isinstance(form, Required):
        form = form.form
    if value is None or form == ANY:
        return escape_all(value)
    if form == TEXT:
        if isinstance(value, str):
            return printable(value, MAX_TEXT)
        bad.append((path, value))
        return None
    if isinstance(form, list):
        items = (
            [_clean(v, form[0], f"{path}[{i}]", bad) for i, v in enumerate(value)] if isinstance(value, list) else []
        )
        if not isinstance(value, list) or None in items:  # a hole in a list: no rule can judge the rest
            bad.append((path, value) if not isinstance(value, list) else (f"{path}[{items.index(None)}]", None))
            return None
        return items
    if isinstance(form, dict):
        if not isinstance(value, dict):
            bad.append((path, value))
            return None
        out = {}
        for key, v in value.items():
            sub = f"{path}.{key}" if path else str(key)
            if not isinstance(key, str) or not key.isprintable() or len(key) > 200:
                bad.append((f"{path}.<key>" if path else "<key>", key))
                continue
            sub_form = form.get(key, form.get("*", ANY))
            out[key] = _clean(v, sub_form, sub, bad)
            if out[key] is None and key not in form and isinstance(sub_form, (list, dict)):
                if v is None:  # (a malformed value is listed already)
                    bad.append((sub, v))
                return None  # {"node2": null} in a map of objects: a hole, as in a list
        missing = [k for k, f in form.items() if isinstance(f, Required) and out.get(k) in (None, "")]
        if missing:
            if value.get(missing[0]) not in (None, ""):  # malformed: already listed
                return None
            bad.append((f"{path}.{missing[0]}" if path else missing[0], value.get(missing[0])))
            return None
        return out
    if isinstance(value, str) and path.startswith(NVIDIA_FIELDS) and form not in (STR, CSTR) and _unknown(value):
        return None  # what nvidia-smi prints for a value it does not know: unknown, not malformed
    if form == CSTR and isinstance(value, str):
        value = value.strip(" \t\r\n\0")  # what the format allows around it; a NUL inside stays malformed
    if _bad_scalar(value, form):
        bad.append((path, value))
        return None
    return value


@overload
def clean_facts(facts: dict) -> dict: ...
@overload
def clean_facts(facts: object) -> dict | None: ...
def clean_facts(facts: object) -> dict | None:
    """Facts as a node sent them -> facts safe to judge and print: every value of a known field has its
    expected type and form or is None, every other string is escaped. Malformed values are listed in
    facts["malformed"] as {field, check, value (escaped, cut)}. Not a dict at all -> None (no facts)."""
    if not isinstance(facts, dict):
        return None
    bad: list = []
    out = _clean(facts, SCHEMA, "", bad)
    out["malformed"] = [
        {"field": printable(path, 200), "check": check_of(path), "value": _describe(value)} for path, value in bad
    ]
    return out
