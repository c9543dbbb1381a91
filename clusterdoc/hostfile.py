"""Hostfiles and Slurm hostlists: one parser for every form users bring.

Accepted, mixed freely in one file, one entry a line:
    node1                      plain
    node1:4                    MPICH (host:slots)
    node1 slots=4 max_slots=8  Open MPI / DeepSpeed
    alice@node1                user@host, with any of the forms above
    gpu[001-004,010],cpu7      Slurm hostlist expression (zero padding kept)
    # comment                  whole-line and trailing comments; blank lines
Every host name is validated (RFC 1123 name, IPv4 or IPv6 address) and every user name is
checked, so nothing read from a hostfile can carry shell syntax further down.
"""

from __future__ import annotations

import ipaddress
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from clusterdoc.errors import UsageError

MAX_HOSTS = 65536  # a typo like node[1-99999999] must not eat the machine

EXPECTED_FORMS = (
    "expected one host a line: 'host', 'host:slots' (MPICH), 'host slots=N [max_slots=M]' (Open MPI), "
    "'user@host', or a Slurm hostlist like 'gpu[001-004,010],cpu7'; '#' starts a comment"
)

_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
_USER = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


@dataclass(frozen=True)
class Host:
    host: str
    slots: int = 1
    user: str | None = None
    max_slots: int | None = None

    @property
    def target(self) -> str:
        """`user@host` when a user was given, else `host` (what ssh is told)."""
        return f"{self.user}@{self.host}" if self.user else self.host

    def to_json(self) -> dict:
        out = {"host": self.host, "slots": self.slots}
        if self.user:
            out["user"] = self.user
        if self.max_slots is not None:
            out["max_slots"] = self.max_slots
        return out


# --- validation ------------------------------------------------------------------------------

def is_valid_hostname(name: str) -> bool:
    """RFC 1123 host name, or an IPv4 / IPv6 address."""
    if not name or len(name) > 253:
        return False
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    labels = name[:-1].split(".") if name.endswith(".") else name.split(".")
    if all(_LABEL.match(label) for label in labels):
        # a name made only of digits and dots is a malformed IPv4 address, not a host name
        return not re.fullmatch(r"[\d.]+", name)
    return False


def _check_host(name: str, where: str, text: str) -> str:
    if not is_valid_hostname(name):
        raise UsageError(
            f"{name!r} is not a valid host name or address (in {text!r})",
            where=where,
            hint="host names are letters, digits and '-' in dot-separated labels (RFC 1123), "
                 "or IPv4/IPv6 addresses. " + EXPECTED_FORMS,
        )
    return name


def _check_user(user: str, where: str, text: str) -> str:
    if not _USER.match(user):
        raise UsageError(f"{user!r} is not a valid user name (in {text!r})", where=where,
                         hint="user names are letters, digits, '_', '.' and '-', starting with a letter or '_'")
    return user


def _positive_int(value: str, key: str, where: str, text: str) -> int:
    if not value.isdigit() or int(value) < 1 or len(value) > 9:
        raise UsageError(f"{key} must be a whole number from 1 up, got {value!r} (in {text!r})",
                         where=where, hint=EXPECTED_FORMS)
    return int(value)


# --- Slurm hostlist expressions --------------------------------------------------------------

def _split_top_level(expr: str, where: str) -> list[str]:
    """Split on commas outside brackets: 'a[1,2],b' -> ['a[1,2]', 'b']."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(expr):
        if ch == "[":
            depth += 1
            if depth > 1:
                raise UsageError(f"nested '[' in hostlist {expr!r}", where=where, hint=EXPECTED_FORMS)
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise UsageError(f"']' without '[' in hostlist {expr!r}", where=where, hint=EXPECTED_FORMS)
        elif ch == "," and depth == 0:
            parts.append(expr[start:i])
            start = i + 1
    if depth:
        raise UsageError(f"'[' without ']' in hostlist {expr!r}", where=where, hint=EXPECTED_FORMS)
    parts.append(expr[start:])
    return parts


def _expand_brackets(spec: str, expr: str, where: str) -> list[str]:
    """'001-003,010' -> ['001', '002', '003', '010'], keeping the width of zero-padded bounds."""
    out: list[str] = []
    for item in spec.split(","):
        m = _RANGE.match(item)
        if not m:
            raise UsageError(f"bad range {item!r} in hostlist {expr!r}", where=where,
                             hint="ranges look like [1-4], [001-016] or [1,3,5-7]")
        lo_s, hi_s = m.group(1), m.group(2) or m.group(1)
        lo, hi = int(lo_s), int(hi_s)
        if hi < lo:
            raise UsageError(f"range {item!r} goes backwards in hostlist {expr!r}", where=where)
        if hi - lo + 1 > MAX_HOSTS:
            raise UsageError(f"range {item!r} in hostlist {expr!r} has more than {MAX_HOSTS} hosts", where=where)
        width = len(lo_s) if lo_s.startswith("0") and len(lo_s) > 1 else 0
        out.extend(str(n).zfill(width) for n in range(lo, hi + 1))
    return out


def _expand_one(pattern: str, expr: str, where: str) -> list[str]:
    """Expand every bracket group of one comma-free pattern (cartesian, like Slurm)."""
    names = [""]
    pos = 0
    for m in re.finditer(r"\[([^\]]*)\]", pattern):
        literal = pattern[pos:m.start()]
        values = _expand_brackets(m.group(1), expr, where)
        if len(names) * len(values) > MAX_HOSTS:
            raise UsageError(f"hostlist {expr!r} expands to more than {MAX_HOSTS} hosts", where=where)
        names = [n + literal + v for n in names for v in values]
        pos = m.end()
    tail = pattern[pos:]
    return [n + tail for n in names]


def expand_hostlist(expr: str, where: str = "--nodelist") -> list[str]:
    """Expand a Slurm hostlist expression: 'gpu[001-002,010],cpu7' -> gpu001 gpu002 gpu010 cpu7.

    Only the expansion happens here; callers validate the resulting names.
    """
    expr = expr.strip()
    if not expr:
        raise UsageError("empty hostlist", where=where, hint=EXPECTED_FORMS)
    names: list[str] = []
    for part in _split_top_level(expr, where):
        if not part:
            raise UsageError(f"empty name between commas in hostlist {expr!r}", where=where, hint=EXPECTED_FORMS)
        names.extend(_expand_one(part, expr, where))
        if len(names) > MAX_HOSTS:
            raise UsageError(f"hostlist {expr!r} expands to more than {MAX_HOSTS} hosts", where=where)
    return names


def compress_hostlist(names: list[str]) -> str:
    """The inverse of expand_hostlist, like `scontrol show hostlist`: node1,node2,node3 -> node[1-3].

    Order is kept; only neighbours with the same prefix, suffix width and consecutive numbers merge.
    """
    groups: list[tuple[str, int, list[int]]] = []  # (prefix, width or 0, numbers)
    plain: list[tuple[int, str]] = []
    order: list[tuple[str, int]] = []
    for name in names:
        m = re.match(r"^(.*?)(\d+)$", name)
        if not m or ":" in name:  # IPv6 and names without a number stay as they are
            order.append(("plain", len(plain)))
            plain.append((0, name))
            continue
        prefix, digits = m.groups()
        width = len(digits) if digits.startswith("0") and len(digits) > 1 else 0
        if groups and order and order[-1][0] == "group" and groups[-1][0] == prefix and groups[-1][1] == width:
            groups[-1][2].append(int(digits))
        else:
            order.append(("group", len(groups)))
            groups.append((prefix, width, [int(digits)]))
    out = []
    for kind, idx in order:
        if kind == "plain":
            out.append(plain[idx][1])
            continue
        prefix, width, numbers = groups[idx]
        if len(numbers) == 1:
            out.append(f"{prefix}{str(numbers[0]).zfill(width)}")
            continue
        ranges, start, prev = [], numbers[0], numbers[0]
        for n in numbers[1:] + [None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            lo, hi = str(start).zfill(width), str(prev).zfill(width)
            ranges.append(lo if start == prev else f"{lo}-{hi}")
            if n is not None:
                start = prev = n
        out.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(out)


# --- hostfile lines --------------------------------------------------------------------------

def _parse_line(text: str, where: str) -> list[Host]:
    """One non-empty, comment-free line -> its hosts."""
    fields = text.split()
    head, options = fields[0], fields[1:]
    slots: int | None = None
    max_slots: int | None = None
    for opt in options:  # Open MPI: host slots=N max_slots=M
        key, sep, value = opt.partition("=")
        key = key.lower().replace("-", "_")
        if not sep or key not in ("slots", "max_slots"):
            raise UsageError(f"cannot read {text!r}: unexpected {opt!r}", where=where, hint=EXPECTED_FORMS)
        number = _positive_int(value, key, where, text)
        if key == "slots":
            slots = number
        else:
            max_slots = number

    user = None
    if "@" in head:
        user, _, head = head.partition("@")
        _check_user(user, where, text)

    if head.startswith("[") and "]" in head and re.fullmatch(r"\[[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*\](:\d+)?", head):
        # [IPv6]:slots
        addr, _, rest = head[1:].partition("]")
        names = [addr]
        if rest:
            if slots is not None:
                raise UsageError(f"cannot read {text!r}: slots given twice", where=where, hint=EXPECTED_FORMS)
            slots = _positive_int(rest[1:], "slots", where, text)
    elif head.count(":") >= 2:
        names = [head]  # a bare IPv6 address; slots need the [addr]:N form
    else:
        name_part, colon, slot_part = head.rpartition(":") if ":" in head else (head, "", "")
        if colon:
            if slots is not None:
                raise UsageError(f"cannot read {text!r}: slots given twice (':N' and 'slots=')",
                                 where=where, hint=EXPECTED_FORMS)
            slots = _positive_int(slot_part, "slots", where, text)
        names = expand_hostlist(name_part, where) if ("[" in name_part or "," in name_part) else [name_part]

    if slots is not None and max_slots is not None and max_slots < slots:
        raise UsageError(f"max_slots={max_slots} is below slots={slots} (in {text!r})", where=where)
    return [
        Host(_check_host(name, where, text), slots or 1, user, max_slots)
        for name in names
    ]


def _merge(entries: list[tuple[Host, str]], duplicates: str) -> list[Host]:
    """Merge (adding slots, as mpirun does for a host listed twice) or refuse repeated hosts."""
    seen: dict[tuple[str | None, str], int] = {}
    merged: list[Host] = []
    first_where: dict[tuple[str | None, str], str] = {}
    for host, where in entries:
        key = (host.user, host.host.lower())
        if key not in seen:
            seen[key] = len(merged)
            first_where[key] = where
            merged.append(host)
            continue
        if duplicates == "refuse":
            raise UsageError(f"host {host.target!r} is listed again (first at {first_where[key]})", where=where,
                             hint="list each host once with its slots, or use --duplicates merge")
        old = merged[seen[key]]
        total = old.slots + host.slots
        max_slots = None if old.max_slots is None and host.max_slots is None else \
            (old.max_slots or old.slots) + (host.max_slots or host.slots)
        merged[seen[key]] = Host(old.host, total, old.user, max_slots)
        print(f"clusterdoc: note: {where}: host {host.target!r} listed again (first at {first_where[key]}): "
              f"merged, slots {old.slots}+{host.slots}={total}", file=sys.stderr)
    return merged


def parse_text(text: str, source: str = "<string>", duplicates: str = "merge") -> list[Host]:
    """Parse hostfile text. `source` names the file in error messages."""
    entries: list[tuple[Host, str]] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{source}:{lineno}"
        if not line.isprintable():
            raise UsageError(f"cannot read {raw!r}: it holds control characters", where=where, hint=EXPECTED_FORMS)
        for host in _parse_line(line, where):
            entries.append((host, where))
            if len(entries) > MAX_HOSTS:
                raise UsageError(f"more than {MAX_HOSTS} hosts", where=where)
    return _merge(entries, duplicates)


def parse_file(path: str | Path, duplicates: str = "merge") -> list[Host]:
    if str(path) == "-":
        return parse_text(sys.stdin.read(), "<stdin>", duplicates)
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"hostfile {str(p)!r} does not exist", hint="give the path of a hostfile, or use --nodelist EXPR")
    except IsADirectoryError:
        raise UsageError(f"{str(p)!r} is a directory, not a hostfile")
    except OSError as err:
        raise UsageError(f"cannot read hostfile {str(p)!r}: {err.strerror}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        raise UsageError("not a text file (bytes that are not UTF-8)", where=f"{p}:{line}", hint=EXPECTED_FORMS)
    hosts = parse_text(text, str(p), duplicates)
    if not hosts:
        raise UsageError("the hostfile lists no hosts", where=str(p), hint=EXPECTED_FORMS)
    return hosts


def parse_nodelist(expr: str, duplicates: str = "merge") -> list[Host]:
    """A `--nodelist` expression: hostlist syntax, optionally user@ in front."""
    entries = []
    user = None
    where = "--nodelist"
    if "@" in expr:
        user, _, expr = expr.partition("@")
        _check_user(user, where, expr)
    for name in expand_hostlist(expr, where):
        entries.append((Host(_check_host(name, where, expr), 1, user), where))
    return _merge(entries, duplicates)


def load_targets(hostfile: str | None = None, nodelists: list[str] | None = None,
                 duplicates: str = "merge") -> list[Host]:
    """What every command taking HOSTFILE / --nodelist uses."""
    hosts: list[Host] = []
    if hostfile:
        hosts.extend(parse_file(hostfile, duplicates))
    for expr in nodelists or []:
        hosts.extend(parse_nodelist(expr, duplicates))
    if hostfile and nodelists:
        hosts = _merge([(h, "(combined)") for h in hosts], duplicates)
    return hosts


# --- output ----------------------------------------------------------------------------------

def format_hosts(hosts: list[Host], to: str = "plain") -> str:
    if to == "json":
        return json.dumps([h.to_json() for h in hosts], indent=2)
    if to == "plain":
        return "\n".join(h.target for h in hosts)
    if to == "mpich":
        return "\n".join(f"[{h.host}]:{h.slots}" if ":" in h.host else f"{h.host}:{h.slots}" for h in hosts)
    if to == "openmpi":
        return "\n".join(
            f"{h.host} slots={h.slots}" + (f" max_slots={h.max_slots}" if h.max_slots is not None else "")
            for h in hosts)
    if to == "slurm":
        return compress_hostlist([h.host for h in hosts])
    raise ValueError(f"unknown output form {to!r}")


def main(args) -> int:
    """`clusterdoc hosts FILE [--to FORM]` / `clusterdoc hosts --nodelist EXPR`."""
    if not args.hostfile and not args.nodelist:
        raise UsageError("give a hostfile or --nodelist EXPR",
                         hint="e.g. 'clusterdoc hosts hostfiles/mpich.txt --to json' or "
                              "'clusterdoc hosts --nodelist gpu[001-004]'")
    hosts = load_targets(args.hostfile, args.nodelist, args.duplicates)
    lost = [h.target for h in hosts if h.user] if args.to in ("mpich", "openmpi", "slurm") else []
    if lost:
        print(f"clusterdoc: note: the {args.to} form has no user field; dropped for {', '.join(lost)}",
              file=sys.stderr)
    print(format_hosts(hosts, args.to))
    return 0
