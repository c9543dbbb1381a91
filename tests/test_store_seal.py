"""The sealing of the job's store values (hang/seal.py) and the channel over a real TCPStore (hang/channel.py)."""
import datetime

import pytest
import torch.distributed as dist

from clusterdoc.hang import channel, seal
from clusterdoc.untrusted import printable_lines

SECRET = "a" * 64


def test_a_sealed_value_opens_only_for_its_key_under_its_secret():
    s = seal.Seal(SECRET)
    blob = s.seal("clusterdoc/hang/hb/0", {"stacks": "Thread MainThread", "pid": 123})
    assert b"MainThread" not in blob and b"pid" not in blob  # encrypted, not just signed
    assert s.open("clusterdoc/hang/hb/0", blob) == {"stacks": "Thread MainThread", "pid": 123}
    with pytest.raises(seal.Rejected):
        s.open("clusterdoc/hang/hb/1", blob)  # moved to another key
    with pytest.raises(seal.Rejected):
        seal.Seal("b" * 64).open("clusterdoc/hang/hb/0", blob)  # another job's secret
    for i in range(len(blob)):  # any flipped byte
        bad = bytearray(blob)
        bad[i] ^= 1
        with pytest.raises(seal.Rejected):
            s.open("clusterdoc/hang/hb/0", bytes(bad))
    for forged in (b"", b"1099511627776", b'{"rank": 0, "gen": 7}', seal.MAGIC + b"\0" * 40):
        with pytest.raises(seal.Rejected):
            s.open("clusterdoc/hang/hb/0", forged)


def test_tokens_depend_on_every_part_and_the_secret():
    s = seal.Seal(SECRET)
    assert s.token("hello", "0", 1, 0, 1) == s.token("hello", "0", 1, 0, 1)
    assert len({s.token("hello", "0", 1, 0, 1), s.token("hello", "0", 1, 1, 0), s.token("ack", "0", 1, 0, 1),
                seal.Seal("b" * 64).token("hello", "0", 1, 0, 1)}) == 4


def test_secret_file_and_environment(tmp_path):
    assert seal.read_secret(tmp_path) is None
    seal.write_secret(tmp_path)
    first = seal.read_secret(tmp_path)
    assert first and len(first) == 64 and (tmp_path / "secret").stat().st_mode & 0o777 == 0o600
    seal.write_secret(tmp_path)
    assert seal.read_secret(tmp_path) != first  # a fresh one per attempt
    assert seal.from_env({}) is None and seal.from_env({seal.ENV: "short"}) is None
    assert seal.from_env({seal.ENV: SECRET}) is not None


# 30 s: one connect to this in-process store took over 5 s under the full CI run on 2 cores (slow, not failed)
@pytest.fixture
def store():
    server = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=30), wait_for_workers=False)
    raw = dist.TCPStore("127.0.0.1", server.port, is_master=False, wait_for_workers=False,
                        timeout=datetime.timedelta(seconds=30))
    yield server, raw
    del raw, server


def _channel(server, secret=SECRET):
    return channel.connect("127.0.0.1", server.port, timeout=30.0, secret=secret)


def test_forged_values_are_ignored_and_counted_once(store):
    server, raw = store
    ch = _channel(server)
    ch.set("hb/0", {"rank": 0, "time": 1.0})
    assert channel.get(ch, "hb/0") == {"rank": 0, "time": 1.0}
    assert channel.get(ch, "nothing") is None and ch.rejected == 0
    raw.set("clusterdoc/hang//hb/1", '{"rank": 1, "host": "\\u001b]0;pwned"}')
    raw.set("clusterdoc/hang//dump/1/0", '{"rank": 0}')
    for _ in range(3):  # read on every tick: one forged value is counted once
        assert channel.heartbeats(ch, 2) == {0: {"rank": 0, "time": 1.0}}
    assert channel.collect(ch, 1, 1, wait=0.1) == {}
    assert ch.rejected == 2
    other = _channel(server, secret="b" * 64)  # another job's values (or this job's under an old secret)
    other.set("hb/0", {"rank": 0, "time": 2.0})
    assert channel.heartbeats(ch, 1) == {} and ch.rejected == 3


def test_no_counter_a_stranger_adds_to_makes_a_rank_act(store):
    server, raw = store
    ch = _channel(server)
    raw.add("clusterdoc/hang//ctl", 1 << 40)  # today's abort
    raw.add("clusterdoc/hang//stall", 1)
    raw.set("clusterdoc/hang//stall/info", '{"rank": 0, "gen": 1}')
    assert channel.control(ch) == (0, False)
    assert channel.counter(ch, "stall") == 0 and channel.get(ch, "stall/info") is None
    assert channel.request_dump(ch) == 1  # the forged value does not hold the key
    assert channel.control(ch) == (1, False)
    old = raw.get("clusterdoc/hang//ctl")
    assert channel.request_dump(ch) == 2
    raw.set("clusterdoc/hang//ctl", old)  # a genuine older value put back: never lower than seen
    assert channel.control(ch) == (2, False)
    channel.request_abort(ch)
    assert channel.control(_channel(server)) == (2, True)


def test_claims_hold_once_and_a_forged_value_holds_nothing(store):
    server, raw = store
    a, b = _channel(server), _channel(server)
    raw.set("clusterdoc/hang//handled", "launcher")
    assert a.claim("handled", "rank 1") == "rank 1"
    assert b.claim("handled", "launcher") == "rank 1"
    held = channel.claim_stall(b, 1, lambda: channel.request_dump(b))
    assert held == {"n": 1, "rank": 1, "gen": 1}
    assert channel.claim_stall(a, 0, lambda: pytest.fail("a second dump request"))["rank"] == 1
    assert channel.counter(a, "stall") == 1 and channel.get(a, "stall/info") == {"rank": 1, "gen": 1}


def test_wait_skips_a_forged_value_until_the_genuine_one(store):
    import threading
    import time

    server, raw = store
    ch, writer = _channel(server), _channel(server)
    raw.set("clusterdoc/hang//wake/0", "fail forged")
    later = threading.Timer(0.3, lambda: writer.set("wake/0", "end"))
    later.start()
    assert ch.wait(["wake/0"], time.monotonic() + 5) == {"wake/0": "end"}
    with pytest.raises(TimeoutError) as err:
        ch.wait(["wake/1"], time.monotonic() + 0.2)
    assert err.value.args[0] == ["wake/1"]


def test_no_secret_no_channel(store, monkeypatch):
    server, _ = store
    monkeypatch.delenv(seal.ENV, raising=False)
    with pytest.raises(channel.NoSecret):
        channel.connect("127.0.0.1", server.port, timeout=2.0)
    monkeypatch.setenv(seal.ENV, SECRET)
    assert channel.connect("127.0.0.1", server.port, timeout=2.0).sealer is not None


def test_printed_text_is_escaped_line_by_line():
    assert printable_lines("a\x1b]0;x\x07\nb\tc") == "a\\x1b]0;x\\x07\nb\\tc"


def test_oom_listener_is_not_woken_by_a_strangers_fail(store):
    """The OOM retry's wake key: a forged "fail" would abort every rank's attempt; only the genuine value acts."""
    import time

    from clusterdoc.shim.attempt import Gate, Listener

    server, raw = store
    ch = channel.connect("127.0.0.1", server.port, timeout=30.0, prefix=channel.OOM_PREFIX, secret=SECRET)
    gate = Gate()
    listener = Listener(ch, "1/wake/0", gate, 5.0, lambda store: None)
    listener.start()
    raw.set("clusterdoc/oom//1/wake/0", "fail rank 1 ran out of memory (forged)")
    time.sleep(0.3)
    assert not listener.woken.is_set() and gate.aborted is None
    _channel(server).set("x", 1)  # another prefix: nothing to do with it
    channel.connect("127.0.0.1", server.port, prefix=channel.OOM_PREFIX, secret=SECRET).set("1/wake/0", "end")
    listener.join(5)
    assert listener.woken.is_set() and listener.value == "end" and gate.aborted is None
    assert ch.rejected == 1


def test_a_replayed_heartbeat_is_ignored_and_counted(store):
    """A genuine heartbeat from the job's start, put back in a loop by someone who reaches the port, opens (it is
    sealed under the job's secret) but is older than the one the reader has seen: the reader keeps the newest."""
    server, raw = store
    rank, reader = _channel(server), _channel(server)
    rank.set("hb/1", {"rank": 1, "time": 1.0, "steps": 1})
    first = raw.get("clusterdoc/hang//hb/1")
    assert channel.heartbeats(reader, 2) == {1: {"rank": 1, "time": 1.0, "steps": 1}}
    rank.set("hb/1", {"rank": 1, "time": 9.0, "steps": 900})
    assert channel.heartbeats(reader, 2) == {1: {"rank": 1, "time": 9.0, "steps": 900}}
    for _ in range(5):  # replayed on every tick: ignored, counted once
        raw.set("clusterdoc/hang//hb/1", first)
        assert channel.heartbeats(reader, 2) == {1: {"rank": 1, "time": 9.0, "steps": 900}}
    assert reader.replayed == 1 and reader.rejected == 1
    assert "or were replayed" in channel.rejected_note(reader.rejected)
    # a compare-and-set replaces a replayed value with one newer than the newest seen
    raw.set("clusterdoc/hang//ctl", first)
    assert channel.request_dump(rank) == 1 and channel.control(reader) == (1, False)
    # the sequence is inside the seal: it cannot be raised without the secret
    blob = bytearray(raw.get("clusterdoc/hang//hb/1"))
    blob[-20] ^= 1
    raw.set("clusterdoc/hang//hb/1", bytes(blob))
    assert channel.heartbeats(reader, 2) == {} and reader.rejected == 2 and reader.replayed == 1


def test_a_denied_stall_claim_says_so_and_is_tried_again(store, capfd):
    """Someone who reaches the port overwrites the stall claim key on every try: the rank says so and tries again
    later (it used to latch 'stalled': no report, no retry, nothing said)."""
    import os

    import torch.distributed as dist

    from clusterdoc.shim import watch

    server, raw = store

    class Hostile:  # the job's store, with a stranger writing the claim key just before each of our writes
        deny = True

        def __getattr__(self, name):
            return getattr(inner, name)

        def compare_set(self, key, expected, new):
            if self.deny and key == "stall" and new != expected:
                inner.set(key, os.urandom(16))
            return inner.compare_set(key, expected, new)

    inner = dist.PrefixStore(channel.PREFIX, raw)
    hostile = Hostile()
    wd = watch.Watchdog(1, 2, "127.0.0.1", server.port, 0.1, "report", None, False)
    wd.store = channel.Channel(hostile, seal.Seal(SECRET), channel.PREFIX)
    wd.waited = lambda: 10.0  # an op outstanding for longer than the hang timeout
    wd.tick()
    assert not wd.stalled and wd.claim_retry_at > 0
    err = capfd.readouterr().err
    assert "rank 1: could not claim the stall on the job's store" in err and "trying again in 5s" in err
    wd.tick()  # not before its time
    assert not wd.stalled
    hostile.deny, wd.claim_retry_at = False, 0.0
    wd.tick()
    assert wd.stalled and channel.get(wd.store, "stall")["rank"] == 1


def test_stacks_on_a_store_answering_a_list_is_said_not_a_typeerror(store, tmp_path, capsys):
    import io
    import json

    from clusterdoc.launch import inspect
    from tests.test_shared_files import make_job

    server, _ = store
    jd = make_job(tmp_path)
    seal.write_secret(jd.path)
    (jd.path / "watch.json").write_text(json.dumps({"world": 2, "addr": "127.0.0.1", "port": server.port}))
    rank = _channel(server, secret=seal.read_secret(jd.path))
    rank.set("dump/1/0", {"rank": 0, "host": "n1", "pid": 7, "stacks": ["Thread", "\x1b]0;pwned"]})
    rank.set("dump/1/1", {"rank": 1, "host": "n1", "pid": 8, "stacks": "Thread MainThread\n"})
    out = io.StringIO()
    assert inspect.stacks_main(str(jd.path), None, full=True, out=out) == 0
    text = out.getvalue()
    assert "(its stacks came as a list, not text: not shown)" in text and "Thread MainThread" in text
    assert "\x1b" not in text + capsys.readouterr().err
