"""Which GPU architectures a compiled CUDA extension really carries: SASS (sm_XY cubins) and PTX (compute_XY).

The arch list a wheel was *asked* to be built for is not proof: DeepSpeed, torch or a stray
TORCH_CUDA_ARCH_LIST decide what nvcc gets. The binary is the truth. nvcc puts the device code of a
shared object in its ELF section `.nv_fatbin`: one or more fatbin containers (header magic 0xBA55ED50,
then entries, each with its kind, 1 = PTX or 2 = ELF/SASS, and the sm number). `fatbin_archs` reads
those headers itself, with no CUDA installed; `cuobjdump_archs` asks NVIDIA's cuobjdump when there is one.

Both take untrusted files (a wheel from anywhere, a node's site-packages): every read is bounded by the
file's size and fixed caps, and a malformed file gives {"error": "..."}, never an exception or a huge
allocation. Result: {"sass": ["sm_80", "sm_90"], "ptx": ["compute_90"]} (sorted by arch; a CPU-only
extension gives two empty lists).

KEEP THIS FILE PLAIN STDLIB PYTHON 3.6: its source is embedded in the node probe (clusterdoc/probe/,
run by whatever python3 a node has). No walrus, no `from __future__ import annotations`, no
`capture_output=`/`text=` in subprocess, no dataclasses, no builtin generics (list[str]) in annotations.
"""

import os
import re
import shutil
import struct
import subprocess

FATBIN_MAGIC = 0xBA55ED50
SECTIONS = (".nv_fatbin", "__nv_relfatbin")  # the device code of a linked object / of an -rdc object
KIND_PTX, KIND_SASS = 1, 2
MAX_SECTIONS = 65535  # ELF's own limit for e_shnum
MAX_ENTRIES = 100000  # fatbin entries read from one file, all its sections together (a real extension has tens)
MAX_FATBIN_SECTIONS = 16  # fatbin sections of one file (a real one has one or two; a crafted one had 65,533)
# Entry flags (seen in nvcc 13.0's output; cuobjdump prints the suffixes): an arch-specific build
# (sm_90a: runs on that exact GPU only) and a family build (sm_100f: the 10.x family).
FLAG_ARCH_SPECIFIC = 0x100000
FLAG_FAMILY = 0x200000


def _error(message):
    return {"error": message}


def _arch_sort_key(name):
    m = re.search(r"(\d+)", name)
    return (int(m.group(1)) if m else 0, name)


def _result(sass, ptx):
    return {"sass": sorted(set(sass), key=_arch_sort_key), "ptx": sorted(set(ptx), key=_arch_sort_key)}


def _read_exact(f, offset, size):
    f.seek(offset)
    data = f.read(size)
    if len(data) != size:
        raise ValueError("truncated at offset %d (wanted %d bytes)" % (offset, size))
    return data


def _fatbin_sections(f, file_size):
    """[(offset, size)] of the fatbin sections of an ELF64 file (either byte order)."""
    ident = _read_exact(f, 0, 64) if file_size >= 64 else b""
    if ident[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    if ident[4] != 2:
        raise ValueError("not a 64-bit ELF file (EI_CLASS %d)" % ident[4])
    if ident[5] not in (1, 2):
        raise ValueError("unknown ELF byte order %d" % ident[5])
    e = "<" if ident[5] == 1 else ">"
    shoff = struct.unpack_from(e + "Q", ident, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", ident, 0x3A)
    if shoff == 0 or shnum == 0:
        return []
    if shentsize < 64 or shnum > MAX_SECTIONS or shstrndx >= shnum or shoff + shentsize * shnum > file_size:
        raise ValueError("bad section header table (offset %d, %d entries of %d bytes)" % (shoff, shnum, shentsize))
    table = _read_exact(f, shoff, shentsize * shnum)
    headers = []  # (name offset, type, offset, size)
    for i in range(shnum):
        name, kind, _flags, _addr, offset, size = struct.unpack_from(e + "IIQQQQ", table, i * shentsize)
        headers.append((name, kind, offset, size))
    _n, _k, str_off, str_size = headers[shstrndx]
    if str_off + str_size > file_size or str_size > (16 << 20):
        raise ValueError("bad section name table")
    names = _read_exact(f, str_off, str_size)
    found = []
    for name_off, kind, offset, size in headers:
        end = names.find(b"\0", name_off)
        if name_off >= len(names) or end < 0:
            continue
        if names[name_off:end].decode("ascii", "replace") in SECTIONS and kind != 8:  # 8: SHT_NOBITS
            if offset + size > file_size:
                raise ValueError("section at %d of %d bytes runs past the end of the file" % (offset, size))
            found.append((offset, size))
            if len(found) > MAX_FATBIN_SECTIONS:
                raise ValueError("more than %d fatbin sections" % MAX_FATBIN_SECTIONS)
    found.sort()
    for (a, a_size), (b, _b_size) in zip(found, found[1:]):
        if b < a + a_size:  # the same bytes read again as another section: a crafted file
            raise ValueError("fatbin sections at %d and %d overlap" % (a, b))
    return found


def _read_section(f, offset, size, sass, ptx, budget):
    """The fatbin containers of one section, one after another (8-byte aligned, zero padding between).
    `budget`: [headers read so far in this file], capped at MAX_ENTRIES for the whole file."""
    pos, end = offset, offset + size
    while pos + 16 <= end:
        budget[0] += 1
        if budget[0] > MAX_ENTRIES:
            raise ValueError("more than %d fatbin entries" % MAX_ENTRIES)
        magic, _version, header_size, fat_size = struct.unpack("<IHHQ", _read_exact(f, pos, 16))
        if magic == 0:  # padding between containers
            pos += 8
            continue
        if magic != FATBIN_MAGIC:
            raise ValueError("no fatbin header at offset %d (magic 0x%08x)" % (pos, magic))
        if header_size < 16 or pos + header_size + fat_size > end:
            raise ValueError("fatbin container at offset %d overruns its section" % pos)
        entry, stop = pos + header_size, pos + header_size + fat_size
        while entry + 32 <= stop:
            budget[0] += 1
            if budget[0] > MAX_ENTRIES:
                raise ValueError("more than %d fatbin entries" % MAX_ENTRIES)
            head = _read_exact(f, entry, 48 if entry + 48 <= stop else 32)
            kind, _v, entry_header, payload = struct.unpack_from("<HHIQ", head, 0)
            arch = struct.unpack_from("<I", head, 28)[0]
            flags = struct.unpack_from("<Q", head, 40)[0] if len(head) >= 48 else 0
            if entry_header < 32 or entry + entry_header + payload > stop:
                raise ValueError("fatbin entry at offset %d overruns its container" % entry)
            if not 10 <= arch <= 9999:
                raise ValueError("fatbin entry at offset %d has no plausible arch (%d)" % (entry, arch))
            suffix = "a" if flags & FLAG_ARCH_SPECIFIC else "f" if flags & FLAG_FAMILY else ""
            if kind == KIND_SASS:
                sass.add("sm_%d%s" % (arch, suffix))
            elif kind == KIND_PTX:
                ptx.add("compute_%d%s" % (arch, suffix))
            entry += entry_header + payload
        pos = (stop + 7) & ~7


def fatbin_archs(path):
    """{"sass": [...], "ptx": [...]} read from the `.nv_fatbin` section of the ELF shared object at
    `path`, or {"error": why} for a file that is not one or is malformed. Reads headers only."""
    try:
        with open(path, "rb") as f:
            file_size = os.fstat(f.fileno()).st_size
            sass = set()  # type: set
            ptx = set()  # type: set
            budget = [0]
            for offset, size in _fatbin_sections(f, file_size):
                _read_section(f, offset, size, sass, ptx, budget)
            return _result(sass, ptx)
    except (OSError, ValueError, struct.error, IndexError) as e:
        return _error("%s: %s" % (path, e))


def find_cuobjdump(cuda_home=None):
    """cuobjdump in CUDA_HOME/bin, else on PATH, else None."""
    home = cuda_home or os.environ.get("CUDA_HOME")
    if home and os.access(os.path.join(home, "bin", "cuobjdump"), os.X_OK):
        return os.path.join(home, "bin", "cuobjdump")
    return shutil.which("cuobjdump")


_LISTED = re.compile(r"^(ELF|PTX) file\s+\d+:.*?\bsm_(\d+[a-z]?)\.(?:cubin|ptx)\s*$", re.MULTILINE)
_NO_CODE = ("No PTX file found", "No ELF file found", "does not contain device code", "No fatbin")


def cuobjdump_archs(path, cuobjdump=None, timeout=60):
    """The same answer from `cuobjdump --list-elf` and `--list-ptx`, or None when no cuobjdump is installed
    (then use fatbin_archs), or {"error": why}."""
    tool = cuobjdump or find_cuobjdump()
    if not tool:
        return None
    sass = []  # type: list
    ptx = []  # type: list
    for flag in ("--list-elf", "--list-ptx"):
        try:
            out = subprocess.run(
                [tool, flag, path],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                universal_newlines=True,
                errors="replace",
                timeout=timeout,
            )
        except (OSError, subprocess.SubprocessError) as e:
            return _error("%s %s: %s" % (tool, flag, e))
        text = (out.stdout or "")[: 1 << 20]
        if out.returncode != 0 and not any(s in (out.stderr or "") + text for s in _NO_CODE):
            return _error("%s %s %s: %s" % (tool, flag, path, (out.stderr or "").strip()[-300:]))
        for kind, arch in _LISTED.findall(text):
            (sass if kind == "ELF" else ptx).append(("sm_" if kind == "ELF" else "compute_") + arch)
    return _result(sass, ptx)


def binary_archs(path, cuobjdump=None):
    """cuobjdump's answer when one is installed, else our own reading of the fatbin headers."""
    found = cuobjdump_archs(path, cuobjdump)
    return found if found is not None else fatbin_archs(path)
