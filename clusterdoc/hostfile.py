"""Hostfiles and Slurm hostlists: one parser for every form users bring.

Accepted, mixed freely in one file, one entry a line:
    node1                      plain
    node1:4                    MPICH (host:slots)
    node1 slots=4 max_slots=8  Open MPI / DeepSpeed (blanks or tabs between fields, 'slots = 4' too)
    alice@node1                user@host, with any of the forms above
    gpu[001-004,010],cpu7      Slurm hostlist expression (zero padding kept)
    # comment                  whole-line and trailing comments; blank lines
Every host name is validated (RFC 1123 name, IPv4 or IPv6 address) and every user name is
checked, so nothing read from a hostfile can carry shell syntax further down. Work and memory are
bounded whatever the input: line and file sizes, digits in a number and hosts (counted before
anything is expanded) all have limits, and errors quote only a short excerpt of the text.
"""

from __future__ import annotations

import io
import ipaddress
import itertools
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from clusterdoc.errors import UsageError

MAX_HOSTS = 65536  # per expression, line and file: a typo like node[1-99999999] must not eat the machine
MAX_LINE = 16384  # bytes in one hostfile line
MAX_BYTES = 16 << 20  # bytes in one hostfile (an endless input such as /dev/zero stops here)
MAX_LINES = 4 * MAX_HOSTS  # lines in one hostfile, blank and comment lines included
MAX_DIGITS = 18  # digits in a range bound (slots: 9)
MAX_NOTES = 10  # 'listed again' notes shown before a summary line
EXCERPT = 40  # characters of the offending text quoted in an error

EXPECTED_FORMS = (
    "expected one host a line: 'host', 'host:slots' (MPICH), 'host slots=N [max_slots=M]' (Open MPI), "
    "'user@host', or a Slurm hostlist like 'gpu[001-004,010],cpu7'; '#' starts a comment"
)

_LABEL = r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)"
_NAME = re.compile(rf"(?:{_LABEL}\.)*{_LABEL}\.?")  # RFC 1123 labels, an optional final dot
_IPV4ISH = re.compile(r"[0-9.]+")
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}")
_ZONE = re.compile(r"[A-Za-z0-9_.-]{1,15}")  # an IPv6 zone id is an interface name (IFNAMSIZ - 1)
_SLOTS = re.compile(r"[0-9]{1,9}")
_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+))?")
_BRACKETED = re.compile(r"\[([^\]]*)\](?::(.*))?")  # '[addr]:slots'; no nested stars: linear on any line
_V6ISH = re.compile(r"[0-9A-Fa-f.:]*:[0-9A-Fa-f.:]*")
_KEYS = {"slots": "slots", "max_slots": "max_slots", "max-slots": "max_slots"}


def excerpt(text: str, limit: int = EXCERPT) -> str:
    """`text` quoted, cut to `limit` characters: errors never echo a 10 MB line."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def note(message: str) -> None:
    print(f"clusterdoc: note: {message}", file=sys.stderr)


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
    """RFC 1123 host name, or an IPv4 / IPv6 address (an IPv6 zone id must be an interface name)."""
    if not name or len(name) > 253 or not name.isascii():
        return False
    if _NAME.fullmatch(name):
        # a name made only of digits and dots is an IPv4 address or a malformed one, not a host name
        return not _IPV4ISH.fullmatch(name) or _is_ip(name)
    addr, pct, zone = name.partition("%")
    return ":" in addr and _is_ip(addr) and (not pct or bool(_ZONE.fullmatch(zone)))


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def _check_host(name: str, where: str, text: str) -> str:
    if not is_valid_hostname(name):
        raise UsageError(
            f"{excerpt(name)} is not a valid host name or address (in {excerpt(text)})",
            where=where,
            hint="host names are letters, digits and '-' in dot-separated labels (RFC 1123), "
            "or IPv4/IPv6 addresses (zone ids: interface names). " + EXPECTED_FORMS,
        )
    return name


def _check_user(user: str, where: str, text: str) -> str:
    if not _USER.fullmatch(user):
        raise UsageError(
            f"{excerpt(user)} is not a valid user name (in {excerpt(text)})",
            where=where,
            hint="user names are letters, digits, '_', '.' and '-', starting with a letter or '_'",
        )
    return user


def _check_chars(text: str, where: str, allowed: str = "") -> None:
    """Refuse control and other non-printing characters (a newline would start a new line downstream)."""
    if text.isprintable() or (allowed and text.replace(allowed, " ").isprintable()):
        return
    bad = next((c for c in text if not c.isprintable() and c not in allowed), None)
    if bad is not None:
        raise UsageError(
            f"character U+{ord(bad):04X} at column {text.index(bad) + 1} of {excerpt(text)} "
            "is a control or non-printing character",
            where=where,
            hint=EXPECTED_FORMS,
        )


def _positive_int(value: str, key: str, where: str, text: str) -> int:
    if not _SLOTS.fullmatch(value) or int(value) < 1:
        raise UsageError(
            f"{key} must be a whole number from 1 to 999999999, got {excerpt(value)} (in {excerpt(text)})",
            where=where,
            hint=EXPECTED_FORMS,
        )
    return int(value)


# --- Slurm hostlist expressions --------------------------------------------------------------


def _split_top_level(expr: str, where: str) -> list[str]:
    """Split on commas outside brackets: 'a[1,2],b' -> ['a[1,2]', 'b']."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(expr):
        if ch == "[":
            depth += 1
            if depth > 1:
                raise UsageError(f"nested '[' in hostlist {excerpt(expr)}", where=where, hint=EXPECTED_FORMS)
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise UsageError(f"']' without '[' in hostlist {excerpt(expr)}", where=where, hint=EXPECTED_FORMS)
        elif ch == "," and depth == 0:
            parts.append(expr[start:i])
            start = i + 1
    if depth:
        raise UsageError(f"'[' without ']' in hostlist {excerpt(expr)}", where=where, hint=EXPECTED_FORMS)
    parts.append(expr[start:])
    return parts


def _parse_ranges(spec: str, expr: str, where: str) -> list[tuple[int, int, int]]:
    """'001-003,10' -> [(1, 3, 3), (10, 10, 0)]: (low, high, width); width only for zero-padded bounds."""
    out = []
    for item in spec.split(","):
        m = _RANGE.fullmatch(item)
        if not m:
            raise UsageError(
                f"bad range {excerpt(item)} in hostlist {excerpt(expr)}",
                where=where,
                hint="ranges look like [1-4], [001-016] or [1,3,5-7] (ASCII digits)",
            )
        lo_s, hi_s = m.group(1), m.group(2) or m.group(1)
        if max(len(lo_s), len(hi_s)) > MAX_DIGITS:
            raise UsageError(
                f"range {excerpt(item)} in hostlist {excerpt(expr)}: numbers have at most {MAX_DIGITS} digits",
                where=where,
            )
        lo, hi = int(lo_s), int(hi_s)
        if hi < lo:
            raise UsageError(f"range {excerpt(item)} goes backwards in hostlist {excerpt(expr)}", where=where)
        out.append((lo, hi, len(lo_s) if lo_s.startswith("0") and len(lo_s) > 1 else 0))
    return out


def _parse_pattern(pattern: str, expr: str, where: str) -> list:
    """'r[1-2]-n7' -> ['r', [(1, 2, 0)], '-n7']: literal text and parsed bracket groups in turn."""
    if ":" in pattern:  # an IPv6 address inside a list is taken as it is (brackets mean ranges here)
        return [pattern]
    pieces, pos = [], 0
    for m in re.finditer(r"\[([^\]]*)\]", pattern):
        pieces += [pattern[pos : m.start()], _parse_ranges(m.group(1), expr, where)]
        pos = m.end()
    return pieces + [pattern[pos:]]


def _count(pieces: list) -> int:
    n = 1
    for piece in pieces:
        if isinstance(piece, list):
            n *= sum(hi - lo + 1 for lo, hi, _ in piece)
    return n


def _values(ranges):
    for lo, hi, width in ranges:
        for n in range(lo, hi + 1):
            yield str(n).zfill(width)


def expand_hostlist(expr: str, where: str = "--nodelist", before: int = 0) -> list[str]:
    """Expand a Slurm hostlist expression: 'gpu[001-002,010],cpu7' -> gpu001 gpu002 gpu010 cpu7.

    Adjacent bracket groups multiply (like Slurm). The hosts are counted before anything is expanded,
    and more than MAX_HOSTS (with `before` hosts already read) is refused. Only the expansion happens here;
    callers validate the names.
    """
    expr = expr.strip()
    if not expr:
        raise UsageError("empty hostlist", where=where, hint=EXPECTED_FORMS)
    if "[" not in expr and "]" not in expr and "," not in expr:
        if before >= MAX_HOSTS:
            raise UsageError(f"more than {MAX_HOSTS} hosts (the limit for a whole hostfile or --nodelist)", where=where)
        return [expr]
    patterns = []
    for part in _split_top_level(expr, where):
        if not part:
            raise UsageError(f"empty name between commas in hostlist {excerpt(expr)}", where=where, hint=EXPECTED_FORMS)
        patterns.append(_parse_pattern(part, expr, where))
    total = sum(_count(p) for p in patterns)
    if before + total > MAX_HOSTS:
        after = (
            f"; with the {before} before it, more than {MAX_HOSTS} hosts"
            if before
            else f": more than {MAX_HOSTS} hosts"
        )
        raise UsageError(
            f"hostlist {excerpt(expr)} expands to {total} host(s){after} (the limit for a whole "
            "hostfile or --nodelist)",
            where=where,
            hint="check the ranges for a typo",
        )
    names: list[str] = []
    for pieces in patterns:
        choices = [_values(p) if isinstance(p, list) else (p,) for p in pieces]
        names.extend("".join(t) for t in itertools.product(*choices))
    return names


# --- folding: the inverse of expansion -------------------------------------------------------

_DIGITS = re.compile(r"[0-9]+")


def natural_key(name: str) -> list:
    """node2 before node10: digit runs compare as numbers."""
    return [(0, int(t), len(t)) if t.isdigit() else (1, t, 0) for t in re.split(r"([0-9]+)", name) if t]


def _fold_numbers(strings) -> tuple[str, str]:
    """One numeric field: {'08','09','10','11','3'} -> ('[3,08-11]', '3'), and its smallest value.

    A zero-padded number only joins ranges of its own width; a plain one joins a padded range of its
    length ('08'-'11': fixed width across a power of ten) or the plain ranges ('8'-'11')."""
    uniq = sorted(set(strings), key=lambda s: (int(s), len(s)))
    if len(uniq) == 1:
        return uniq[0], uniq[0]
    padded = {len(s) for s in uniq if s[0] == "0" and len(s) > 1}
    classes: dict[int, list[int]] = {}
    for s in uniq:
        classes.setdefault(len(s) if len(s) in padded else 0, []).append(int(s))
    items = []
    for width, numbers in classes.items():
        start = prev = numbers[0]
        for n in numbers[1:] + [None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            lo, hi = str(start).zfill(width), str(prev).zfill(width)
            items.append((start, len(lo), lo if start == prev else f"{lo}-{hi}"))
            if n is not None:
                start = prev = n
    items.sort()
    return "[" + ",".join(text for _, _, text in items) + "]", uniq[0]


def _fold_fields(vectors) -> list[list[tuple[str, str]]]:
    """Fold tuples of numeric fields into boxes (one folded field each), the last field first:
    the tuples with the same folded last field merge their prefixes, recursively."""
    if len(next(iter(vectors))) == 1:
        return [[_fold_numbers(v[0] for v in vectors)]]
    by_prefix: dict[tuple, list[str]] = {}
    for v in vectors:
        by_prefix.setdefault(v[:-1], []).append(v[-1])
    by_last: dict[tuple[str, str], list[tuple]] = {}
    for prefix, lasts in by_prefix.items():
        by_last.setdefault(_fold_numbers(lasts), []).append(prefix)
    return [box + [last] for last, prefixes in by_last.items() for box in _fold_fields(prefixes)]


def _fold_pattern(texts: tuple[str, ...], vectors) -> list[tuple[list, str]]:
    """Fold one name pattern with each order of its numeric fields (all orders up to three fields, else
    as written and reversed) and keep the shortest: which field to merge first decides the boxes."""
    k = len(texts) - 1
    orders = list(itertools.permutations(range(k))) if k <= 3 else [tuple(range(k)), tuple(range(k))[::-1]]
    best: list[tuple[list, str]] | None = None
    for order in orders:
        boxes = _fold_fields({tuple(v[i] for i in order) for v in vectors})
        out = []
        for box in boxes:
            placed = dict(zip(order, box))  # field i of the name, from the box's place in `order`
            fields = [placed[i] for i in range(k)]
            text = texts[0] + "".join(f + t for (f, _), t in zip(fields, texts[1:]))
            first = texts[0] + "".join(low + t for (_, low), t in zip(fields, texts[1:]))
            out.append((natural_key(first), text))
        if best is None or sum(len(t) for _, t in out) < sum(len(t) for _, t in best):
            best = out
    assert best is not None  # `orders` is never empty (no field: the one order ())
    return best


def compress_hostlist(names) -> str:
    """The shortest hostlist we know for a set of names, sorted naturally (the inverse of expand_hostlist):
    node1,node2,node3 -> node[1-3]; rack1-n01..rack2-n16 -> rack[1-2]-n[01-16]; gpu1-ib,gpu2-ib -> gpu[1-2]-ib.

    Every numeric field folds; duplicates go. IPv6 addresses stay as they are. Every place that shows a
    list of hosts uses this."""
    patterns: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    pieces = []
    for name in set(names):
        if ":" in name:
            pieces.append((natural_key(name), name))
            continue
        patterns.setdefault(tuple(_DIGITS.split(name)), set()).add(tuple(_DIGITS.findall(name)))
    for texts, vectors in patterns.items():
        if len(texts) == 1:
            pieces.append((natural_key(texts[0]), texts[0]))
        else:
            pieces += _fold_pattern(texts, vectors)
    return ",".join(text for _, text in sorted(pieces))


# --- hostfile lines --------------------------------------------------------------------------


def _options(fields: list[str], text: str, where: str) -> dict[str, int]:
    """Open MPI's 'slots=N max_slots=M' (each key once, as Open MPI insists)."""
    found: dict[str, int] = {}
    for opt in fields:
        key, sep, value = opt.partition("=")
        name = _KEYS.get(key.lower())
        if not sep or name is None:
            raise UsageError(
                f"cannot read {excerpt(text)}: unexpected {excerpt(opt)}", where=where, hint=EXPECTED_FORMS
            )
        if name in found:
            raise UsageError(
                f"cannot read {excerpt(text)}: {name} given twice",
                where=where,
                hint="give each of slots= and max_slots= at most once a line",
            )
        found[name] = _positive_int(value, name, where, text)
    return found


def _split_head(head: str, text: str, where: str) -> tuple[str, str | None]:
    """'node[1-2]:4' -> ('node[1-2]', '4'); '[fe80::1]:4' -> ('fe80::1', '4'); 'fe80::1' -> ('fe80::1', None)."""
    m = _BRACKETED.fullmatch(head)
    if m and _V6ISH.fullmatch(m.group(1).partition("%")[0]):
        return m.group(1), m.group(2)
    if head.count(":") >= 2:  # bare IPv6 addresses (in a list too); their slots need [addr]:N or slots=
        return head, None
    name, colon, slots = head.partition(":")
    return name, (slots if colon else None)


def _fields(text: str) -> list[str]:
    """'a slots = 2' -> ['a', 'slots=2']: blanks around '=' are allowed, as Open MPI reads them."""
    out: list[str] = []
    for token in text.split():
        if len(out) > 1 and (token.startswith("=") or out[-1].endswith("=")):
            out[-1] += token
        else:
            out.append(token)
    return out


def _parse_line(text: str, where: str, before: int = 0) -> list[Host]:
    """One non-empty, comment-free line -> its hosts (counted before expanding, with `before` already read)."""
    fields = _fields(text)
    head, opts = fields[0], _options(fields[1:], text, where)
    user = None
    if "@" in head:
        user, _, head = head.partition("@")
        _check_user(user, where, text)
    names_expr, slot_text = _split_head(head, text, where)
    slots = opts.get("slots")
    if slot_text is not None:
        if slots is not None:
            raise UsageError(
                f"cannot read {excerpt(text)}: slots given twice (':N' and 'slots=')", where=where, hint=EXPECTED_FORMS
            )
        slots = _positive_int(slot_text, "slots", where, text)
    max_slots = opts.get("max_slots")
    if slots is not None and max_slots is not None and max_slots < slots:
        raise UsageError(f"max_slots={max_slots} is below slots={slots} (in {excerpt(text)})", where=where)
    slots = slots or max_slots or 1  # Open MPI: max_slots alone gives that many slots
    return [
        Host(_check_host(name, where, text), slots, user, max_slots)
        for name in expand_hostlist(names_expr, where, before)
    ]


def _merge(entries: list[tuple[Host, str]], duplicates: str) -> list[Host]:
    """Merge (adding slots, as mpirun does for a host listed twice) or refuse repeated hosts."""
    seen: dict[tuple[str | None, str], int] = {}
    merged: list[Host] = []
    first_where: dict[tuple[str | None, str], str] = {}
    notes = 0
    for host, where in entries:
        key = (host.user, host.host.lower())
        if key not in seen:
            seen[key] = len(merged)
            first_where[key] = where
            merged.append(host)
            continue
        if duplicates == "refuse":
            raise UsageError(
                f"host {host.target!r} is listed again (first at {first_where[key]})",
                where=where,
                hint="list each host once with its slots, or use --duplicates merge",
            )
        old = merged[seen[key]]
        total = old.slots + host.slots
        max_slots = (
            None
            if old.max_slots is None and host.max_slots is None
            else (old.max_slots or old.slots) + (host.max_slots or host.slots)
        )
        merged[seen[key]] = Host(old.host, total, old.user, max_slots)
        notes += 1
        if notes <= MAX_NOTES:
            note(
                f"{where}: host {host.target!r} listed again (first at {first_where[key]}): "
                f"merged, slots {old.slots}+{host.slots}={total}"
            )
    if notes > MAX_NOTES:
        note(f"{notes - MAX_NOTES} more host(s) listed again, merged the same way")
    return merged


def _lines(stream, source: str):
    """(where, text) for each line of a binary stream, reading at most MAX_BYTES in lines of at most MAX_LINE
    bytes: an endless or binary input stops at once. A UTF-8 byte-order mark is skipped (with a note)."""
    total = 0
    for lineno in range(1, MAX_LINES + 2):
        where = f"{source}:{lineno}"
        if lineno > MAX_LINES:
            if stream.read(1):
                raise UsageError(f"more than {MAX_LINES} lines: not a hostfile", where=where)
            return
        raw = stream.readline(MAX_LINE + 1)
        if not raw:
            return
        total += len(raw)
        if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
            raise UsageError(
                f"line longer than {MAX_LINE} bytes (starts {excerpt(raw.decode('utf-8', 'replace'))})",
                where=where,
                hint="is this a hostfile? " + EXPECTED_FORMS,
            )
        if total > MAX_BYTES:
            raise UsageError(f"more than {MAX_BYTES >> 20} MiB: not a hostfile", where=where)
        if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
            note(f"{where}: skipped a UTF-8 byte-order mark (Open MPI refuses it; our outputs never write one)")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise UsageError(
                f"not a text file: byte {raw[err.start]:#04x} at column {err.start + 1} is not UTF-8",
                where=where,
                hint=EXPECTED_FORMS,
            )
        yield where, text.rstrip("\n").rstrip("\r")


def parse_stream(stream, source: str, duplicates: str = "merge") -> list[Host]:
    """Parse a hostfile from a binary stream. `source` names it in error messages."""
    entries: list[tuple[Host, str]] = []
    for where, raw in _lines(stream, source):
        _check_chars(raw, where, allowed="\t")
        line = raw.split("#", 1)[0].strip(" \t")
        if not line:
            continue
        for host in _parse_line(line, where, len(entries)):
            entries.append((host, where))
    return _merge(entries, duplicates)


def parse_text(text: str, source: str = "<string>", duplicates: str = "merge") -> list[Host]:
    """Parse hostfile text. `source` names the file in error messages."""
    return parse_stream(io.BytesIO(text.encode("utf-8", "surrogateescape")), source, duplicates)


def parse_file(path: str | Path, duplicates: str = "merge") -> list[Host]:
    if str(path) == "-":
        hosts = parse_stream(sys.stdin.buffer, "<stdin>", duplicates)
    else:
        p = Path(path)
        try:
            with open(p, "rb") as stream:
                hosts = parse_stream(stream, str(p), duplicates)
        except FileNotFoundError:
            raise UsageError(
                f"hostfile {excerpt(str(p))} does not exist", hint="give the path of a hostfile, or use --nodelist EXPR"
            )
        except IsADirectoryError:
            raise UsageError(f"{excerpt(str(p))} is a directory, not a hostfile")
        except OSError as err:
            raise UsageError(f"cannot read hostfile {excerpt(str(p))}: {err.strerror}")
    if not hosts:
        raise UsageError("the hostfile lists no hosts", where=str(path), hint=EXPECTED_FORMS)
    return hosts


def parse_nodelist(expr: str, duplicates: str = "merge") -> list[Host]:
    """A `--nodelist` expression: hostlist syntax, optionally user@ in front."""
    where = "--nodelist"
    _check_chars(expr, where)
    user = None
    if "@" in expr:
        user, _, expr = expr.partition("@")
        _check_user(user, where, expr)
    entries = [(Host(_check_host(name, where, expr), 1, user), where) for name in expand_hostlist(expr, where)]
    return _merge(entries, duplicates)


def load_targets(
    hostfile: str | None = None, nodelists: list[str] | None = None, duplicates: str = "merge"
) -> list[Host]:
    """What every command taking HOSTFILE / --nodelist uses."""
    hosts: list[Host] = []
    if hostfile:
        hosts.extend(parse_file(hostfile, duplicates))
    for expr in nodelists or []:
        hosts.extend(parse_nodelist(expr, duplicates))
    if len(hosts) > MAX_HOSTS:
        raise UsageError(f"{len(hosts)} hosts in all: more than the limit of {MAX_HOSTS}")
    if hostfile and nodelists:
        hosts = _merge([(h, "(combined)") for h in hosts], duplicates)
    return hosts


# --- output ----------------------------------------------------------------------------------

FIELDS_KEPT = {
    "plain": {"user", "slots", "max_slots"},
    "mpich": {"slots"},
    "openmpi": {"slots", "max_slots"},
    "slurm": set(),
    "json": {"user", "slots", "max_slots"},
}


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
            for h in hosts
        )
    if to == "slurm":
        return compress_hostlist([h.host for h in hosts])
    raise ValueError(f"unknown output form {to!r}")


def dropped_fields(hosts: list[Host], to: str) -> list[str]:
    """One note per field the output form cannot carry, naming the hosts that lose it."""
    lost = {
        "user": [h.host for h in hosts if h.user],
        "slots": [h.host for h in hosts if h.slots != 1],
        "max_slots": [h.host for h in hosts if h.max_slots is not None],
    }
    return [
        f"the {to} form has no {field} field; dropped for {compress_hostlist(names)}"
        for field, names in lost.items()
        if names and field not in FIELDS_KEPT[to]
    ]


def main(hostfile: str | None, nodelist: list[str], to: str = "plain", duplicates: str = "merge") -> int:
    """`clusterdoc hosts FILE [--to FORM]` / `clusterdoc hosts --nodelist EXPR`."""
    if not hostfile and not nodelist:
        raise UsageError(
            "give a hostfile or --nodelist EXPR",
            hint="e.g. 'clusterdoc hosts hostfiles/mpich.txt --to json' or 'clusterdoc hosts --nodelist gpu[001-004]'",
        )
    hosts = load_targets(hostfile, nodelist, duplicates)
    for message in dropped_fields(hosts, to):
        note(message)
    print(format_hosts(hosts, to))
    return 0
