"""The probe payload's cache against another user who can rename entries above it (issue 38, High 2).

XDG_CACHE_HOME sits in a folder a second Unix user (made and removed here) can write, without the sticky bit;
they swap the cache's parent for one of their own, holding a "probe" of theirs under the very name, in a loop,
while the head loads the payload again and again. The cache folder is opened once and its file read through
that descriptor (probe/payload.py): their script is never the probe.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from clusterdoc.probe import payload
from tests.test_store_security import stranger  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow

SWAPPER = textwrap.dedent("""
    import os, sys, time
    uid, gid, shared, name, seconds, tail = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5]), sys.argv[6]
    os.setgroups([]); os.setgid(gid); os.setuid(uid)
    evil = os.path.join(shared, "evil")
    os.makedirs(os.path.join(evil, "clusterdoc"), 0o755)
    with open(os.path.join(evil, "clusterdoc", name), "w") as f:
        f.write("print('EVIL PROBE RAN')\\n" + tail)
    x, real = os.path.join(shared, "x"), os.path.join(shared, "x.real")
    swaps, junk, end = 0, 0, time.monotonic() + seconds
    def move(a, b):
        try:
            os.rename(a, b)
            return True
        except OSError:
            return False
    while time.monotonic() < end:
        if not move(x, real) if not os.path.exists(real) else not move(x, os.path.join(shared, f"junk{junk}")):
            pass
        junk += 1
        swaps += move(evil, x)   # theirs in place
        if os.path.exists(x) and os.stat(x).st_uid == uid:
            move(x, evil)
        if not os.path.exists(x):
            move(real, x)        # ours back
    print(swaps)
""")


def test_a_swap_above_the_cache_never_makes_another_users_script_the_probe(stranger, monkeypatch):  # noqa: F811
    shared = Path(tempfile.mkdtemp(dir="/tmp", prefix="cd-shared-"))
    try:
        shared.chmod(0o777)  # others may rename entries here (no sticky bit)
        (shared / "x").mkdir(0o755)
        monkeypatch.setenv("XDG_CACHE_HOME", str(shared / "x"))
        made = payload.load_source()  # the genuine cache, made once
        name = payload._cache_name()
        assert name and (shared / "x" / "clusterdoc" / name).read_bytes() == made
        swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(stranger.pw_uid), str(stranger.pw_gid),
                                    str(shared), name, "15", payload.MAIN], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        loads = 0
        while swapper.poll() is None and loads < 3000:
            got = payload.load_source()
            loads += 1
            assert b"EVIL" not in got, f"load {loads}: another user's script would be the probe"
        out, err = swapper.communicate(timeout=30)
        assert swapper.returncode == 0, err.decode()[-2000:]
        assert int(out) > 100 and loads > 20, (out, loads)  # they did swap, and we did load meanwhile
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_the_folder_checked_is_the_folder_read_even_when_swapped_in_between(stranger, monkeypatch):  # noqa: F811
    """The race made certain: the swap happens right between the check and the read. Read by path (as before),
    the other user's file would be what comes back; read through the checked descriptor, it is ours."""
    shared = Path(tempfile.mkdtemp(dir="/tmp", prefix="cd-shared-"))
    try:
        shared.chmod(0o777)
        (shared / "x").mkdir(0o755)
        monkeypatch.setenv("XDG_CACHE_HOME", str(shared / "x"))
        made = payload.load_source()
        name = payload._cache_name()
        evil = shared / "evil" / "clusterdoc"
        evil.mkdir(parents=True)
        (evil / name).write_bytes(b"print('EVIL')\n" + payload.MAIN.encode())
        for p in (evil.parent, evil, evil / name):
            os.chown(p, stranger.pw_uid, stranger.pw_gid)
        dfd = payload._cache_dir()  # checked: ours
        assert dfd is not None
        try:
            os.rename(shared / "x", shared / "x.real")  # what the other user can do in a shared folder
            os.rename(shared / "evil", shared / "x")
            assert b"EVIL" in (shared / "x" / "clusterdoc" / name).read_bytes()  # by path: theirs
            assert payload._read_cached(dfd, name) == made  # through the descriptor: ours
        finally:
            os.close(dfd)
        assert b"EVIL" not in payload.load_source()  # a fresh load: their folder is not ours, not used
    finally:
        shutil.rmtree(shared, ignore_errors=True)
