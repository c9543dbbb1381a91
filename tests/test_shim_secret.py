"""The per-user secret file (made 0600 in 0700, checked by descriptor) and the ranks' agreement on a real store."""
import datetime
import os
import stat
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from clusterdoc.hang import seal
from clusterdoc.shim import secret
from tests.shim_helpers import free_port


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


def _establish(homes, proof_of=None):
    """Every rank of len(homes) on one real TCPStore; each rank's (agreed, environ)."""
    import torch.distributed as dist

    port, world = free_port(), len(homes)
    timeout = datetime.timedelta(seconds=20)
    master = dist.TCPStore("127.0.0.1", port, world, True, timeout, wait_for_workers=False)
    stores = [master] + [dist.TCPStore("127.0.0.1", port, world, False, timeout) for _ in range(world - 1)]
    envs = [{"HOME": str(h)} for h in homes]
    out = [None] * world

    def rank(r):
        out[r] = secret.establish(stores[r], r, world, envs[r])

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(world)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return out, envs


def test_ranks_sharing_a_home_agree_on_a_fresh_secret_per_job(tmp_path, capsys):
    agreed, envs = _establish([tmp_path] * 3)
    assert agreed == [True] * 3
    job = {e[seal.ENV] for e in envs}
    assert len(job) == 1 and len(job.pop()) == 64
    user = secret.user_secret(secret.user_file({"HOME": str(tmp_path)}))
    assert envs[0][seal.ENV] != user  # derived per job, never the user's secret itself
    again, envs2 = _establish([tmp_path] * 3)
    assert again == [True] * 3 and envs2[0][seal.ENV] != envs[0][seal.ENV]  # a new job, a new secret
    assert "hang watch off" not in capsys.readouterr().err


def test_ranks_with_different_homes_turn_it_off_and_rank_0_says_so_once(tmp_path, capsys):
    agreed, envs = _establish([tmp_path / "a", tmp_path / "a", tmp_path / "b"])
    assert agreed == [False] * 3 and not any(seal.ENV in e for e in envs)
    err = [line for line in capsys.readouterr().err.splitlines() if "hang watch off" in line]
    assert len(err) == 1 and "rank 2 on" in err[0] and "is the home folder shared" in err[0], err


def test_a_secret_given_by_the_launcher_is_kept(tmp_path):
    env = {seal.ENV: "g" * 32, "HOME": str(tmp_path)}
    assert secret.establish(None, 0, 2, env) is True and env[seal.ENV] == "g" * 32
    assert not (tmp_path / ".config").exists()
