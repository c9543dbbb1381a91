"""Issue 12: hostfiles that cannot lie. Injection, bounded work, what Open MPI reads, folding."""

import json
import random
import re
import shutil
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusterdoc.errors import UsageError
from clusterdoc.hostfile import (MAX_HOSTS, Host, compress_hostlist, expand_hostlist, format_hosts,
                                 is_valid_hostname, parse_nodelist, parse_text)


def run_cli(*args, stdin=None, timeout=30, mem_mb=None):
    def limit():  # an input that eats memory fails the test instead of the machine
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))
    return subprocess.run([sys.executable, "-m", "clusterdoc", "hosts", *args], input=stdin, capture_output=True,
                          timeout=timeout, preexec_fn=limit if mem_mb else None)


def assert_clean_error(r, where):
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert "Traceback" not in err and where in err.splitlines()[0]
    assert len(err) < 1000  # a short excerpt, never the whole input


# --- 1. nothing reaches a shell or a later line ----------------------------------------------

@pytest.mark.parametrize("name", ["fe80::1%$(reboot)", "fe80::1%eth0;id", "fe80::1%", "fe80::1%a b",
                                  "fe80::1%" + "x" * 16, "10.0.0.1%eth0", "node\n", "node1\nnode2"])
def test_zone_ids_and_newlines_are_refused(name):
    assert not is_valid_hostname(name)
    with pytest.raises(UsageError):
        parse_nodelist(name)


def test_zone_ids_that_name_an_interface_are_kept():
    assert [h.host for h in parse_text("fe80::1%eth0\n[fe80::2%enp3s0.10]:2")] == ["fe80::1%eth0", "fe80::2%enp3s0.10"]


def test_newline_in_nodelist_cannot_write_two_mpich_lines():
    r = run_cli("--nodelist", "a\nb", "--to", "mpich")
    assert_clean_error(r, "--nodelist")
    assert r.stdout == b""


@pytest.mark.parametrize("text", ["n1:\u0663", "n1 slots=\u0663", "n[\u0661-\u0663]", "n[1-\u00b2]",
                                  "n[\uff10\uff11-3]", "n1 max_slots=\u00b3", "n\u0663"])
def test_only_ascii_digits_count(text):
    with pytest.raises(UsageError) as e:
        parse_text(text, "hf")
    assert e.value.where == "hf:1"


# --- 2. bounded work and memory --------------------------------------------------------------

def test_dev_zero_ends_at_once_in_little_memory():
    t = time.monotonic()
    r = run_cli("/dev/zero", mem_mb=300)
    assert time.monotonic() - t < 5
    assert_clean_error(r, "/dev/zero:1")
    assert b"longer than" in r.stderr


def test_ten_megabyte_line_is_refused_with_an_excerpt(tmp_path):
    f = tmp_path / "big"
    f.write_bytes(b"a" * 10_000_000 + b"\n")
    t = time.monotonic()
    r = run_cli(str(f), mem_mb=300)
    assert time.monotonic() - t < 5
    assert_clean_error(r, f"{f}:1")


@pytest.mark.parametrize("expr", [
    "n[" + ",".join(["1-60000"] * 500) + "]",  # many large ranges in one bracket
    "n[1-9][1-9][1-9][1-9][1-9][1-9]",  # brackets that multiply
    "n[1-40000],m[1-40000]",  # the limit holds for the whole expression
    "n[1-" + "9" * 5000 + "]",  # more digits than int() takes
    "n" + "1" * 5000,
])
def test_huge_expressions_are_refused_before_expanding(expr):
    t = time.monotonic()
    with pytest.raises(UsageError):
        parse_text(expr, "hf")
    assert time.monotonic() - t < 1


@pytest.mark.parametrize("line", [
    "[" + ":" * 16000,  # once took 14 s in a backtracking regex
    "a" + " " * 16000 + "x=", "a" + "\t " * 8000 + "=", "a slots" + " =" * 8000, "n[" + "1," * 8000 + "]",
    "a" + "-" * 16000, "[1-2]" * 3000, "," * 16000, "fe80" + ":" * 16000, "@" * 16000, "a." * 8000,
])
def test_long_adversarial_lines_take_linear_time(line):
    t = time.monotonic()
    with pytest.raises(UsageError):
        parse_text(line, "hf")
    assert time.monotonic() - t < 0.5


def test_host_limit_holds_for_the_whole_file():
    with pytest.raises(UsageError, match="before it") as e:
        parse_text("a[1-40000]\nb[1-40000]\n", "hf")
    assert e.value.where == "hf:2"
    assert len(parse_text(f"a[1-{MAX_HOSTS}]\n")) == MAX_HOSTS


def test_endless_stdin_of_one_host_ends(tmp_path):
    t = time.monotonic()
    r = run_cli("-", stdin=b"a\n" * 200_000, mem_mb=300)
    assert time.monotonic() - t < 10
    assert_clean_error(r, "<stdin>:65537")


def test_error_quotes_a_short_excerpt():
    with pytest.raises(UsageError) as e:
        parse_text("x" * 5000 + "$", "hf")
    assert len(e.value.message) < 300 and "5001 characters" in e.value.message


# --- 3. read what Open MPI and DeepSpeed read ------------------------------------------------

def hosts(text):
    return [(h.host, h.slots, h.max_slots) for h in parse_text(text, "hf")]


def test_blanks_between_fields_and_around_equals():
    assert hosts("a\tslots=2\nb slots = 3\tmax_slots =4\nc  slots=\t5 # x") == [
        ("a", 2, None), ("b", 3, 4), ("c", 5, None)]


def test_max_slots_alone_gives_its_slots_like_open_mpi():
    assert hosts("c max_slots=8") == [("c", 8, 8)]


def test_byte_order_mark_is_skipped_with_a_note(capsys):
    assert hosts("\ufeffa slots=2\nb") == [("a", 2, None), ("b", 1, None)]
    assert "byte-order mark" in capsys.readouterr().err
    with pytest.raises(UsageError):  # only at the start of the file
        parse_text("a\n\ufeffb", "hf")


@pytest.mark.parametrize("line", ["a slots=2 slots=5", "a max_slots=2 max-slots=3", "a:2 slots=2"])
def test_a_key_given_twice_is_refused(line):
    with pytest.raises(UsageError, match="given twice"):
        parse_text(line, "hf")


def test_conversion_notes_name_the_dropped_fields(tmp_path):
    f = tmp_path / "hf"
    f.write_text("alice@a slots=2 max_slots=4\nb\n")
    r = run_cli(str(f), "--to", "mpich")
    assert r.returncode == 0 and r.stdout.decode() == "a:2\nb:1\n"
    err = r.stderr.decode()
    assert "no max_slots field; dropped for a" in err and "no user field; dropped for a" in err
    r = run_cli(str(f), "--to", "slurm")
    assert "no slots field; dropped for a" in r.stderr.decode() and r.stdout.decode() == "a,b\n"
    assert run_cli(str(f), "--to", "openmpi").stderr.decode().count("note") == 1  # the user only


ALL_FORMS = ["n1", "n2", "gpu01-ib", "10.0.0.1", "10.0.0.2", "::1", "fe80::1%eth0", "2001:db8::7",
             "a.example.com", "b.", "rack1-node08", "rack2-node10"]


@pytest.mark.parametrize("form", ["plain", "mpich", "openmpi", "slurm", "json"])
def test_every_output_form_reads_back(form):
    hs = [Host(n, 1 + i % 3, None, None) for i, n in enumerate(ALL_FORMS)]
    text = format_hosts(hs, form)
    if form == "json":
        back = [Host(**d) for d in json.loads(text)]
    else:
        back = parse_text(text, "out")
    assert sorted(h.host for h in back) == sorted(ALL_FORMS)
    if form in ("mpich", "openmpi", "json"):
        assert back == hs


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(ALL_FORMS) | st.from_regex(r"[a-z]{1,4}[0-9]{1,3}(-[a-z]{1,2}[0-9]{0,2})?",
                                                            fullmatch=True), min_size=1, max_size=30, unique=True),
       st.sampled_from(["plain", "mpich", "openmpi", "slurm"]))
def test_round_trips_through_every_form(names, form):
    hs = [Host(n, 1 + len(n) % 4) for n in names]
    back = parse_text(format_hosts(hs, form), "out")
    assert sorted(h.host for h in back) == sorted(names)
    if form in ("mpich", "openmpi"):
        assert back == hs


# --- differential: the same files fed to Open MPI --------------------------------------------

OMPI = shutil.which("mpirun.openmpi")


def ompi_reads(path, n):
    """{host: (slots, max_slots or None)} as Debian's Open MPI 4.1 reads the file, or None if it refuses."""
    r = subprocess.run([OMPI, "--allow-run-as-root", "--hostfile", str(path), "--display-map", "--do-not-launch",
                        "--bind-to", "none", "--map-by", "ppr:1:node", "-np", str(n), "true"],
                       capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "OMPI_MCA_plm_rsh_agent": "false"})
    found = re.findall(r"Data for node: (\S+)\s+Num slots: (\d+)\s+Max slots: (\d+)", r.stdout)
    if not found:
        return None
    return {h: (int(s), int(m) or None) for h, s, m in found}


def random_openmpi_file(rng):  # no dotted names: Open MPI shows them cut at the first dot
    lines, names = [], rng.sample([f"n{i}" for i in range(1, 30)] + ["10.0.0.7", "gpu-01"], rng.randint(1, 6))
    for name in names:
        blank = lambda: rng.choice([" ", "\t", "  ", " \t"])  # noqa: E731
        eq = rng.choice(["=", " =", "= ", " = ", "\t=\t"])
        fields = [name]
        slots = rng.choice([None, 1, 2, 4, 16])
        max_slots = rng.choice([None, None, 16, 32])
        if slots:
            fields.append(f"slots{eq}{slots}")
        if max_slots:
            fields.append(f"max_slots{eq}{max_slots}")
        line = blank().join(fields)
        if rng.random() < 0.3:
            line += blank() + "# comment"
        lines.append(rng.choice(["", " ", "\t"]) + line)
        if rng.random() < 0.2:
            lines.append(rng.choice(["", "# only a comment", "   "]))
    return "\n".join(lines) + "\n", len(names)


@pytest.mark.skipif(OMPI is None, reason="mpirun.openmpi (Debian openmpi-bin) is not installed")
def test_we_read_open_mpi_files_as_open_mpi_does(tmp_path):
    rng = random.Random(12)
    for i in range(12):  # each mpirun takes 0.1 s, now and then 5 s (its own shutdown, not the hostfile)
        text, n = random_openmpi_file(rng)
        f = tmp_path / f"hf{i}"
        f.write_text(text)
        theirs = ompi_reads(f, n)
        ours = {h.host: (h.slots, h.max_slots) for h in parse_text(text, str(f))}
        assert theirs == ours, text


@pytest.mark.skipif(OMPI is None, reason="mpirun.openmpi (Debian openmpi-bin) is not installed")
@pytest.mark.parametrize("text", ["a slots=2 slots=5\n", "a slots=4 max_slots=2\n", "a Slotz=2\n"])
def test_what_open_mpi_refuses_we_refuse(tmp_path, text):
    f = tmp_path / "hf"
    f.write_text(text)
    assert ompi_reads(f, 1) is None
    with pytest.raises(UsageError):
        parse_text(text, "hf")


# --- 4. folding ------------------------------------------------------------------------------

@pytest.mark.parametrize("names, folded", [
    ([f"rack{r}-node{n:02d}" for r in (1, 2) for n in range(1, 17)], "rack[1-2]-node[01-16]"),
    (["gpu1-ib", "gpu2-ib", "gpu3-ib"], "gpu[1-3]-ib"),
    (["n08", "n09", "n10", "n11"], "n[08-11]"),
    (["n8", "n9", "n10", "n11"], "n[8-11]"),
    (["node10", "node9", "node1"], "node[1,9-10]"),
    (["b1", "a2", "a1", "login"], "a[1-2],b1,login"),
    (["n1.ex.com", "n2.ex.com", "n1"], "n1,n[1-2].ex.com"),
    (["n1", "n01", "n001"], "n[1,01,001]"),
    (["c1", "c1", "::1", "fe80::1"], "::1,c1,fe80::1"),
])
def test_folds(names, folded):
    assert compress_hostlist(names) == folded
    assert sorted(expand_hostlist(folded)) == sorted(set(names))


def test_fifty_thousand_shuffled_names_fold_to_one_short_expression():
    names = [f"rack{r:02d}-node{n:04d}" for r in range(1, 51) for n in range(1, 1001)]
    random.Random(0).shuffle(names)
    t = time.monotonic()
    assert compress_hostlist(names) == "rack[01-50]-node[0001-1000]"
    assert time.monotonic() - t < 5


def test_cli_prints_one_expression_for_fifty_thousand_names():
    names = [f"node{i}" for i in range(1, 50001)]
    random.Random(1).shuffle(names)
    r = run_cli("-", "--to", "slurm", stdin="\n".join(names).encode())
    assert (r.returncode, r.stdout) == (0, b"node[1-50000]\n")


NAME = st.tuples(st.sampled_from(["n", "gpu", "r", "a.b"]), st.integers(0, 120), st.sampled_from(["", "-ib", "-c"]),
                 st.integers(0, 12), st.sampled_from([0, 2, 3]))


@settings(max_examples=300, deadline=None)
@given(st.lists(NAME, min_size=1, max_size=60))
def test_fold_round_trips_with_many_fields(parts):
    names = [f"{p}{str(a).zfill(w)}{s}{b if s else ''}" for p, a, s, b, w in parts]
    back = expand_hostlist(compress_hostlist(names))
    assert sorted(back) == sorted(set(names))


@settings(max_examples=200, deadline=None)
@given(st.lists(NAME, min_size=1, max_size=60))
def test_expansion_agrees_with_python_hostlist(parts):
    hostlist = pytest.importorskip("hostlist")
    names = sorted({f"{p}{str(a).zfill(w)}{s}{b if s else ''}" for p, a, s, b, w in parts})
    folded = compress_hostlist(names)
    assert sorted(hostlist.expand_hostlist(folded)) == sorted(expand_hostlist(folded)) == names


# --- property: no input crashes, hangs or yields a bad host ----------------------------------

TRICKY = st.sampled_from(list("[]-,:@=#%\t\n\r \ufeff\x00\u0663\u00b2") + ["slots", "max_slots", "9" * 30, "fe80::"])


@settings(max_examples=400, deadline=None)
@given(st.lists(TRICKY | st.text(max_size=4), max_size=40).map("".join))
def test_no_input_crashes_or_yields_a_bad_host(text):
    t = time.monotonic()
    try:
        result = parse_text(text, "fuzz")
    except UsageError as err:
        assert err.where.startswith("fuzz:") and len(err.message) < 400
        result = []
    assert time.monotonic() - t < 2
    for h in result:
        assert is_valid_hostname(h.host) and h.slots >= 1 and h.host.isascii() and h.host.isprintable()


FUZZ_UNDER_LIMIT = r'''
import random, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (400 << 20, 400 << 20))
from clusterdoc.errors import UsageError
from clusterdoc.hostfile import is_valid_hostname, parse_text
pieces = list("[]-,:@=#%\t \n0123456789abz.") + ["slots", "max_slots", "fe80::", "\ufeff", "\u0663", "1-60000"]
rng = random.Random(int(sys.argv[1]))
worst = 0.0
for _ in range(300):
    text = "".join(rng.choice(pieces) * rng.choice([1, 1, 2, 50, 3000]) for _ in range(rng.randint(1, 12)))
    t = time.monotonic()
    try:
        hosts = parse_text(text, "fuzz")
    except UsageError as err:
        assert err.where.startswith("fuzz") and len(str(err)) < 1200, str(err)[:200]
        hosts = []
    worst = max(worst, time.monotonic() - t)
    assert all(is_valid_hostname(h.host) for h in hosts)
print(f"worst {worst:.3f}s")
'''


@pytest.mark.parametrize("seed", [1, 2])
def test_random_long_inputs_under_a_memory_limit(seed):
    r = subprocess.run([sys.executable, "-c", FUZZ_UNDER_LIMIT, str(seed)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert float(r.stdout.split()[1].rstrip("s")) < 1.0, r.stdout
