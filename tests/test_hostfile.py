"""The hostfile parser: every accepted form, and clean refusals for everything else."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusterdoc.errors import UsageError
from clusterdoc.hostfile import (Host, compress_hostlist, expand_hostlist, format_hosts, is_valid_hostname,
                                 parse_file, parse_text)

ROOT = Path(__file__).resolve().parents[1]


def hosts(text, **kw):
    return [(h.host, h.slots, h.user) for h in parse_text(text, "hf", **kw)]


def test_mpich_openmpi_plain_forms():
    assert hosts("a:4\nb slots=8\nc\n") == [("a", 4, None), ("b", 8, None), ("c", 1, None)]


def test_openmpi_max_slots_and_dash_spelling():
    (h,) = parse_text("node1 slots=2 max-slots=6")
    assert (h.slots, h.max_slots) == (2, 6)


def test_comments_and_blank_lines():
    text = "# head\n\n  node1   # trailing\n\t\nnode2:2#tight\n"
    assert hosts(text) == [("node1", 1, None), ("node2", 2, None)]


def test_user_at_host_in_every_form():
    assert hosts("alice@n1\nbob@n2:3\ncarol@n3 slots=2\ndave@g[1-2]") == [
        ("n1", 1, "alice"), ("n2", 3, "bob"), ("n3", 2, "carol"), ("g1", 1, "dave"), ("g2", 1, "dave")]


def test_slurm_hostlist_keeps_zero_padding():
    assert expand_hostlist("gpu[001-004,010],cpu7") == ["gpu001", "gpu002", "gpu003", "gpu004", "gpu010", "cpu7"]
    assert expand_hostlist("r[1-2]-n[08-09]") == ["r1-n08", "r1-n09", "r2-n08", "r2-n09"]
    assert hosts("gpu[09-10]:4") == [("gpu09", 4, None), ("gpu10", 4, None)]


def test_compress_is_the_inverse_of_expand():
    # issue 12: hosts are sorted naturally (they kept their order before)
    names = ["gpu001", "gpu002", "gpu003", "gpu010", "cpu7", "node10", "node9"]
    assert compress_hostlist(names) == "cpu7,gpu[001-003,010],node[9-10]"
    assert expand_hostlist(compress_hostlist(names)) == ["cpu7", "gpu001", "gpu002", "gpu003", "gpu010",
                                                         "node9", "node10"]


def test_ip_addresses():
    assert hosts("10.0.0.1:2\n::1\n[fe80::2]:3") == [("10.0.0.1", 2, None), ("::1", 1, None), ("fe80::2", 3, None)]



def test_duplicates_merge_note_names_both_lines(capsys):
    parse_text("a:2\nb\na:3", "hf")
    err = capsys.readouterr().err
    assert "hf:3" in err and "hf:1" in err and "2+3=5" in err


def test_duplicates_refuse_names_both_lines():
    with pytest.raises(UsageError) as e:
        parse_text("a\nb\na", "hf", duplicates="refuse")
    assert e.value.where == "hf:3" and "hf:1" in e.value.message


@pytest.mark.parametrize("line, fragment", [
    ("node;reboot", "not a valid host name"),
    ("$(reboot)", "not a valid host name"),
    ("node1 slots=0", "slots must be a whole number"),
    ("node1:abc", "slots must be a whole number"),
    ("node1 slots=2 max_slots=1", "below slots"),
    ("node1 foo=3", "unexpected 'foo=3'"),
    ("node1 node2", "unexpected 'node2'"),
    ("node[3-1]", "goes backwards"),
    ("node[1-2", "'[' without ']'"),
    ("node[a-b]", "bad range"),
    ("-node", "not a valid host name"),
    ("bad user@node1", "unexpected"),
    ("b$d@node1", "not a valid user name"),
    ("node1:2 slots=3", "slots given twice"),
    ("999.1.1.1", "not a valid host name"),
    ("n[1-70000]", "more than 65536"),
])
def test_bad_lines_name_file_line_and_text(line, fragment):
    with pytest.raises(UsageError) as e:
        parse_text(f"ok1\n{line}\n", "hosts.txt")
    assert e.value.where == "hosts.txt:2"
    assert fragment in str(e.value)


def test_hostname_validation():
    assert is_valid_hostname("a-b.example.com") and is_valid_hostname("127.0.0.2")
    assert not is_valid_hostname("a_b") and not is_valid_hostname("a..b") and not is_valid_hostname("x" * 64)


def test_output_forms():
    hs = [Host("n1", 2), Host("n2", 1, "bob", 4), Host("::1", 3)]
    assert format_hosts(hs, "mpich") == "n1:2\nn2:1\n[::1]:3"
    assert format_hosts(hs, "openmpi") == "n1 slots=2\nn2 slots=1 max_slots=4\n::1 slots=3"
    assert json.loads(format_hosts(hs, "json")) == [
        {"host": "n1", "slots": 2}, {"host": "n2", "slots": 1, "user": "bob", "max_slots": 4},
        {"host": "::1", "slots": 3}]
    # what we print, we read back
    for form in ("mpich", "openmpi", "plain"):
        assert [h.host for h in parse_text(format_hosts(hs, form))] == ["n1", "n2", "::1"]


def test_file_errors(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        parse_file(tmp_path / "nope")
    (tmp_path / "empty").write_text("# nothing\n")
    with pytest.raises(UsageError, match="lists no hosts"):
        parse_file(tmp_path / "empty")
    (tmp_path / "bin").write_bytes(b"node1\n\xff\xfe\n")
    with pytest.raises(UsageError) as e:
        parse_file(tmp_path / "bin")
    assert e.value.where.endswith("bin:2")


def test_example_hostfiles_parse():
    for f in (ROOT / "hostfiles").glob("*.txt"):
        assert parse_file(f), f


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_no_input_crashes_the_parser(text):
    try:
        result = parse_text(text, "fuzz")
    except UsageError as err:
        assert err.where.startswith("fuzz") or "hostlist" in err.message
        return
    for h in result:  # whatever is accepted is a valid name: nothing shell-special gets through
        assert is_valid_hostname(h.host) and h.slots >= 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.from_regex(r"[a-z]{1,3}[0-9]{1,3}", fullmatch=True), min_size=1, max_size=20, unique=True))
def test_compress_round_trips(names):
    back = expand_hostlist(compress_hostlist(names))  # issue 12: sorted naturally, so compare as sets
    assert sorted(back) == sorted(names)


def run_cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "clusterdoc", "hosts", *args], input=stdin,
                          capture_output=True, text=True, timeout=60)


def test_cli_hosts_forms_and_exit_codes(tmp_path):
    f = tmp_path / "hf"
    f.write_text("alice@gpu[01-02]:2\n")
    r = run_cli(str(f), "--to", "json")
    assert r.returncode == 0
    assert json.loads(r.stdout) == [{"host": "gpu01", "slots": 2, "user": "alice"},
                                    {"host": "gpu02", "slots": 2, "user": "alice"}]
    r = run_cli("--nodelist", "gpu[001-004,010],cpu7", "--to", "slurm")
    assert (r.returncode, r.stdout.strip()) == (0, "cpu7,gpu[001-004,010]")  # issue 12: sorted naturally
    r = run_cli("-", "--to", "openmpi", stdin="n1:4\n")
    assert r.stdout.strip() == "n1 slots=4"


def test_cli_bad_input_is_a_clean_error(tmp_path):
    f = tmp_path / "hf"
    f.write_text("node1\nnode`id`\n")
    r = run_cli(str(f))
    assert r.returncode == 2
    assert f"{f}:2" in r.stderr and "node`id`" in r.stderr and "expected" in r.stderr
    assert "Traceback" not in r.stderr
    r = run_cli("--to", "xml", str(f))
    assert r.returncode == 2 and "Traceback" not in r.stderr
