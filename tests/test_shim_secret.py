"""The per-user secret file (made 0600 in 0700, checked by descriptor) and the ranks' agreement on a real store."""
import hashlib
import os
import stat
from concurrent.futures import ThreadPoolExecutor

import pytest

from clusterdoc.hang import seal
from clusterdoc.shim import secret
from tests.shim_helpers import results, run_ranks


def test_made_private_once_and_read_back(tmp_path):
    path = secret.user_file({"HOME": str(tmp_path)})
    assert path == tmp_path / ".config" / "clusterdoc" / "job-secret"
    with ThreadPoolExecutor(8) as pool:  # ranks starting at once all read the one file that won
        got = set(pool.map(lambda _: secret.user_secret(path), range(16)))
    assert len(got) == 1 and len(got.pop()) == 64
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["job-secret"]  # no temp left behind


def test_refuses_what_others_could_read_or_swap(tmp_path):
    path = tmp_path / ".config" / "clusterdoc" / "job-secret"
    secret.user_secret(path)
    os.chmod(path, 0o640)
    with pytest.raises(OSError, match="mode 0600"):
        secret.user_secret(path)
    os.chmod(path, 0o600)
    os.chmod(path.parent, 0o777)
    with pytest.raises(OSError, match="writable by others"):
        secret.user_secret(path)
    os.chmod(path.parent, 0o700)
    target = tmp_path / "elsewhere"
    target.write_text("x" * 64)
    target.chmod(0o600)
    path.unlink()
    path.symlink_to(target)
    with pytest.raises(OSError):  # a link is never followed
        secret.user_secret(path)
    path.unlink()
    path.write_text("short\n")
    path.chmod(0o600)
    with pytest.raises(OSError, match="fewer than"):
        secret.user_secret(path)


def _ranks(homes, *more, env=None):
    """Real gloo ranks (one per home), no CLUSTERDOC_JOB_SECRET: each rank's RESULT and output."""
    outs = run_ranks("secret", ",".join(map(str, homes)), *more, n=len(homes),
                     env={"CLUSTERDOC_JOB_SECRET": "", **(env or {})})
    return results(outs), [text for _, _, text in outs]


def test_ranks_sharing_a_home_agree_on_a_fresh_secret_per_job(tmp_path):
    found, texts = _ranks([tmp_path] * 3)
    assert [r["agreed"] for r in found] == [True] * 3
    assert len({r["digest"] for r in found}) == 1
    user = secret.user_secret(secret.user_file({"HOME": str(tmp_path)}))
    assert found[0]["digest"] != hashlib.sha256(user.encode()).hexdigest()[:16]  # derived, never the user's own
    again, _ = _ranks([tmp_path] * 3)
    assert again[0]["agreed"] and again[0]["digest"] != found[0]["digest"]  # a new job, a new secret
    assert not any("hang watch off" in t for t in texts), texts


def test_ranks_with_different_homes_turn_it_off_and_rank_0_says_so_once(tmp_path):
    found, texts = _ranks([tmp_path / "a", tmp_path / "a", tmp_path / "b"])
    assert [r["agreed"] for r in found] == [False] * 3
    said = [[line for line in t.splitlines() if "hang watch off" in line] for t in texts]
    assert [len(lines) for lines in said] == [1, 0, 0], texts
    assert "rank 2 on" in said[0][0] and "is the home folder shared" in said[0][0], said


def _record(ok, job, rank, host="node1", why=""):
    return secret.pack(ok, secret._proof(job, rank) if job else b"", host, why)


def test_every_rank_decides_alike_from_the_same_records(tmp_path):
    path = tmp_path / "job-secret"
    a, b = secret.derive("u" * 64, b"x" * 64), secret.derive("v" * 64, b"x" * 64)
    good = [_record(True, a, r) for r in range(3)]
    assert secret.decide(a, good, path) == (True, "")
    other = good[:2] + [_record(True, b, 2, host="node\x1b[2J3")]
    agreed, why = secret.decide(a, other, path)  # rank 2 holds another secret: rank 0 names it
    assert not agreed and why.startswith("rank 2 on node\x1b[2J3 has another"), why
    assert secret.decide(b, other, path)[0] is False  # and rank 2 says no too (every rank decides alike)
    moved = good[:1] + [good[0], good[2]]  # rank 0's proof shown as rank 1's: bound to the rank, refused
    assert secret.decide(a, moved, path)[0] is False
    old = secret.derive("u" * 64, b"y" * 64)  # the same user, an earlier job's parts
    assert secret.decide(a, [_record(True, old, r) for r in range(3)], path)[0] is False
    missing = good[:2] + [_record(False, "", 2, why="rank 2 on n3 cannot use it")]
    assert secret.decide(a, missing, path) == (False, "rank 2 on n3 cannot use it")
    assert secret.decide(a, good[:2] + [b"short"], path)[0] is False


def test_a_secret_given_by_the_launcher_is_kept(tmp_path):
    env = {seal.ENV: "g" * 32, "HOME": str(tmp_path)}
    assert secret.establish(0, 2, env, gather=None) is True and env[seal.ENV] == "g" * 32
    assert not (tmp_path / ".config").exists()
