"""Reading a CUDA binary's architectures from its .nv_fatbin section (clusterdoc/fatbin.py).

The fixtures in tests/facts/fatbin/ are real nvcc 13.0 output (pip's nvidia-cuda-nvcc), made on a machine
without a GPU from two one-kernel .cu files:
  sm80_sm90_ptx86_ptx90.so: k.cu with -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
      -gencode arch=compute_90,code=compute_90, and k2.cu with arch=compute_80,code=sm_80
      -gencode arch=compute_86,code=compute_86, linked into one shared object (two fatbin containers), stripped;
  sm90a_sm100f_ptx100a.o: k.cu with arch=compute_90a,code=sm_90a -gencode arch=compute_100f,code=sm_100f
      -gencode arch=compute_100a,code=compute_100a (nvcc -c), stripped.
cuobjdump 13.5 lists the same (it prints the family cubin as sm_100).
"""

import ast
import random
import struct
import sys
from pathlib import Path

import pytest

from clusterdoc import fatbin

FACTS = Path(__file__).parent / "facts" / "fatbin"
TWO = FACTS / "sm80_sm90_ptx86_ptx90.so"
SUFFIXED = FACTS / "sm90a_sm100f_ptx100a.o"


def test_reads_sass_and_ptx_of_every_container():
    assert fatbin.fatbin_archs(str(TWO)) == {"sass": ["sm_80", "sm_90"], "ptx": ["compute_86", "compute_90"]}


def test_arch_specific_and_family_builds_keep_their_suffix():
    assert fatbin.fatbin_archs(str(SUFFIXED)) == {"sass": ["sm_90a", "sm_100f"], "ptx": ["compute_100a"]}


def test_an_elf_without_device_code_has_none():
    assert fatbin.fatbin_archs(sys.executable) == {"sass": [], "ptx": []}


def test_not_an_elf_file_is_an_error_value(tmp_path):
    text = tmp_path / "op.so"
    text.write_text("not a binary\n")
    assert "not an ELF file" in fatbin.fatbin_archs(str(text))["error"]
    assert "No such file" in fatbin.fatbin_archs(str(tmp_path / "missing.so"))["error"]


def _section(data: bytes) -> tuple[int, int]:
    """(offset, size) of .nv_fatbin in the fixture, found independently of the module (readelf's view)."""
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    str_off = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 24)[0]
    for i in range(shnum):
        name, _t, _f, _a, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        if data[str_off + name :].startswith(b".nv_fatbin\0"):
            return off, size
    raise AssertionError("fixture has no .nv_fatbin")


def test_lying_sizes_are_errors_not_allocations(tmp_path):
    data = bytearray(TWO.read_bytes())
    off, _size = _section(bytes(data))
    cases = {
        "container": (off + 8, struct.pack("<Q", 1 << 60)),  # the fatbin header's size of its entries
        "entry": (off + 16 + 8, struct.pack("<Q", 1 << 62)),  # the first entry's payload size
        "magic": (off, b"\x00\x00\xad\xde"),
        "sections": (0x3C, struct.pack("<H", 60000)),  # e_shnum past the end of the file
    }
    for name, (at, patch) in cases.items():
        bad = bytearray(data)
        bad[at : at + len(patch)] = patch
        path = tmp_path / f"{name}.so"
        path.write_bytes(bytes(bad))
        result = fatbin.fatbin_archs(str(path))
        assert "error" in result, (name, result)


def test_truncated_and_corrupted_files_never_raise(tmp_path):
    data = TWO.read_bytes()
    rng = random.Random(26)
    path = tmp_path / "bad.so"
    outcomes = set()
    for cut in range(0, len(data), 211):
        path.write_bytes(data[:cut])
        outcomes.add("error" in fatbin.fatbin_archs(str(path)))
    off, size = _section(data)
    for _ in range(300):
        bad = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            at = rng.choice([rng.randrange(len(bad)), rng.randrange(off, off + size), rng.randrange(0, 64)])
            bad[at] = rng.randrange(256)
        path.write_bytes(bytes(bad))
        result = fatbin.fatbin_archs(str(path))
        assert set(result) in ({"error"}, {"sass", "ptx"}), result
        assert all(isinstance(a, str) for a in result.get("sass", []) + result.get("ptx", []))
    assert outcomes == {True}  # the section table is at the end: any cut loses it, and says so


def test_cuobjdump_absent_falls_back_to_the_headers(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    assert fatbin.cuobjdump_archs(str(TWO)) is None
    assert fatbin.binary_archs(str(TWO)) == fatbin.fatbin_archs(str(TWO))


def test_cuobjdump_listing_is_parsed(tmp_path):
    fake = tmp_path / "cuobjdump"  # prints what cuobjdump 13.5 printed for the fixture
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --list-elf ]; then\n'
        "  printf 'ELF file    1: two.1.sm_80.cubin\\nELF file    2: two.2.sm_90.cubin\\n"
        "ELF file    3: two.3.sm_80.cubin\\n'\n"
        "else\n"
        "  printf 'PTX file    1: two.1.sm_90.ptx\\nPTX file    2: two.2.sm_86.ptx\\n'\n"
        "fi\n"
    )
    fake.chmod(0o755)
    assert fatbin.cuobjdump_archs(str(TWO), str(fake)) == fatbin.fatbin_archs(str(TWO))
    none = tmp_path / "none"
    none.write_text("#!/bin/sh\necho \"cuobjdump info    : No PTX file found to extract from '$2'.\" >&2\nexit 255\n")
    none.chmod(0o755)
    assert fatbin.cuobjdump_archs(str(TWO), str(none)) == {"sass": [], "ptx": []}
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho 'cuobjdump fatal   : Could not open input file' >&2\nexit 1\n")
    broken.chmod(0o755)
    assert "Could not open" in fatbin.cuobjdump_archs(str(TWO), str(broken))["error"]


def test_source_stays_python36_and_stdlib():
    """Its source is embedded in the node probe, run by a node's own python3 (>= 3.6)."""
    source = Path(fatbin.__file__).read_text()
    tree = ast.parse(source, feature_version=(3, 6))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            assert all(n.split(".")[0] in sys.stdlib_module_names for n in names), names
            assert "__future__" not in names
        if isinstance(node, ast.keyword):
            assert node.arg not in ("capture_output", "text"), node.arg  # subprocess keywords of 3.7
        assert not isinstance(node, ast.AnnAssign)


@pytest.mark.parametrize("path", [TWO, SUFFIXED])
def test_real_cuobjdump_agrees_when_installed(path):
    tool = fatbin.find_cuobjdump()
    if not tool:
        pytest.skip("no cuobjdump installed (the CUDA build test checks it against its real build)")
    ours, theirs = fatbin.fatbin_archs(str(path)), fatbin.cuobjdump_archs(str(path), tool)
    assert theirs["ptx"] == ours["ptx"]
    assert [a.rstrip("f") for a in theirs["sass"]] == [a.rstrip("f") for a in ours["sass"]]


def crafted_so(sections=65533, entries=87_000, distinct=False) -> bytes:
    """7 MB: a fatbin of `entries` 32-byte SASS headers, and `sections` - 1 section headers all naming it
    .nv_fatbin (the cap was per section: 65,532 x 87,000 headers read, a list entry each). `distinct`: each
    section its own copy of the fatbin, end to end."""
    names = b"\0.nv_fatbin\0\0\0\0\0"
    fat_off = 64 + len(names)
    entry = struct.pack("<HHIQ", 2, 0, 32, 0) + b"\0" * 12 + struct.pack("<I", 80)
    fat = struct.pack("<IHHQ", fatbin.FATBIN_MAGIC, 1, 16, 32 * entries) + entry * entries
    copies = sections - 1 if distinct else 1
    shoff = fat_off + len(fat) * copies
    elf = bytearray(b"\x7fELF\x02\x01\x01" + b"\0" * 57)
    struct.pack_into("<Q", elf, 0x28, shoff)
    struct.pack_into("<HHH", elf, 0x3A, 64, sections, 0)
    table = [struct.pack("<IIQQQQ", 0, 3, 0, 0, 64, len(names)) + b"\0" * 24]
    for i in range(sections - 1):
        at = fat_off + (i * len(fat) if distinct else 0)
        table.append(struct.pack("<IIQQQQ", 1, 1, 0, 0, at, len(fat)) + b"\0" * 24)
    return bytes(elf) + names + fat * copies + b"".join(table)


def _measured(argv, **kw):
    """(exit code, stdout + stderr, seconds, peak RSS MiB) of one child process (os.wait4: its own figures)."""
    import os
    import subprocess
    import time

    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), out, time.monotonic() - t0, usage.ru_maxrss / 1024


NODE_SIDE = """
import ast, sys
from clusterdoc.doctor import payload
tree = ast.parse(payload.probe_payload())
source = next(n.value.value for n in tree.body if isinstance(n, ast.Assign) and
              getattr(n.targets[0], "id", None) == "FATBIN_SOURCE")
ns = {"__name__": "clusterdoc_fatbin"}
exec(compile(source, "fatbin.py", "exec"), ns)  # what the probe runs on a node
print(ns["fatbin_archs"](sys.argv[1]))
"""


def test_a_crafted_so_with_65533_fatbin_sections_ends_fast_node_side_and_head_side(tmp_path):
    import zipfile

    data = crafted_so()
    assert 6_500_000 < len(data) < 7_500_000
    so = tmp_path / "cpu_adam_op.so"
    so.write_bytes(data)
    # node side: the reader as the probe embeds it
    code, out, took, rss = _measured([sys.executable, "-c", NODE_SIDE, str(so)])
    print(f"node side: {took:.1f}s, {rss:.0f} MiB: {out.strip()}")
    assert code == 0 and "more than 16 fatbin sections" in out and took < 20 and rss < 500, out
    # head side: build-wheel --install --wheel reads the binaries before any node is asked
    wheel = tmp_path / "deepspeed-0.17.0+cu130-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("deepspeed/clusterdoc-wheel.json", "{}")
        z.write(so, "deepspeed/ops/adam/cpu_adam_op.so")
    code, out, took, rss = _measured([sys.executable, "-m", "clusterdoc", "build-wheel", "--install", "--wheel",
                                      str(wheel), "-w", "node1"], env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    print(f"head side: {took:.1f}s, {rss:.0f} MiB")
    assert code == 1 and "Traceback" not in out, out
    assert "FAIL  deepspeed/ops/adam/cpu_adam_op.so: the binary: more than 16 fatbin sections" in out, out
    assert took < 30 and rss < 500


def test_the_entry_cap_is_per_file_not_per_section(tmp_path, monkeypatch):
    """Two sections laid end to end, each under the cap: together over it, refused."""
    path = tmp_path / "x.so"
    path.write_bytes(crafted_so(sections=3, entries=400, distinct=True))
    assert fatbin.fatbin_archs(str(path)) == {"sass": ["sm_80"], "ptx": []}
    monkeypatch.setattr(fatbin, "MAX_ENTRIES", 600)  # the cap is shared by the file's sections
    assert "more than 600 fatbin entries" in fatbin.fatbin_archs(str(path))["error"]
    path.write_bytes(crafted_so(sections=3, entries=10))  # two sections over the same bytes
    assert "overlap" in fatbin.fatbin_archs(str(path))["error"]
