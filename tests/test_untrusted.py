"""What nodes send: escaping, the expected form of each fact, and the host key rules (pure functions)."""

import base64
import json

import paramiko
import pytest

from clusterdoc.doctor import render as report
from clusterdoc.checks import arch, cuda, malformed
from clusterdoc.doctor.payload import parse_output
from clusterdoc.errors import UsageError
from clusterdoc.openssh import host_matches, judge_host_key, parse_jump, parse_known_hosts, proxy_command_argv
from clusterdoc.untrusted import clean_facts, printable

ESC = "\x1b"
TITLE = f"{ESC}]0;owned{chr(7)}{ESC}[2J"  # retitle the terminal, then clear it


def test_printable_escapes_controls_and_is_idempotent():
    assert printable("A100 80GB") == "A100 80GB"
    text = printable(f"A100{TITLE}\n\u202eevil\ud800")
    assert text == "A100\\x1b]0;owned\\x07\\x1b[2J\\n\\u202eevil\\ud800"
    assert text.isprintable() and printable(text) == text
    assert printable("x" * 50, 10) == "x" * 10 + "..."


def gpu_facts(name="NVIDIA A100-SXM4-80GB", driver="550.54.14"):
    return {"schema": 1, "probe": "python", "hostname": "node1",
            "torch": {"version": "2.3.1+cu121", "cuda": "12.1", "arch_list": ["sm_80"], "nccl": "2.20.5"},
            "gpus": [{"index": 0, "name": name, "capability": "8.0", "memory_mib": 81920, "driver": driver}],
            "driver": driver, "errors": [{"probe": "nvcc", "message": f"nvcc said {TITLE}"}],
            "mesh": {"node2": {"ok": False, "message": f"denied{TITLE}"}}}


def test_clean_facts_drops_malformed_values_and_escapes_free_text():
    facts = clean_facts(gpu_facts(name=f"A100{TITLE}", driver=f"550.54.14{TITLE}"))
    assert facts["driver"] is None and facts["gpus"][0]["driver"] is None and facts["gpus"][0]["name"] is None
    assert facts["gpus"][0]["capability"] == "8.0"
    fields = {m["field"]: m for m in facts["malformed"]}
    assert set(fields) == {"driver", "gpus[0].name", "gpus[0].driver"}
    assert fields["driver"]["check"] == "cuda" and fields["gpus[0].name"]["check"] == "arch"
    assert "\\x1b]0;owned" in fields["driver"]["value"]
    assert facts["errors"][0]["message"] == "nvcc said \\x1b]0;owned\\x07\\x1b[2J"
    assert facts["mesh"]["node2"]["message"].startswith("denied\\x1b")
    assert ESC not in json.dumps(facts, ensure_ascii=False)


def test_clean_facts_wrong_types_and_forms():
    raw = dict(gpu_facts(), gpus=5, kernel={"release": "5.15.0-105-generic; rm -rf", "gvisor": "yes"},
               hostname="node1\nnode2", env={"PATH": ["a"]}, extra={"k\x1b": "v\x07"})
    facts = clean_facts(raw)
    assert facts["gpus"] is None and facts["hostname"] is None and facts["env"]["PATH"] is None
    assert facts["kernel"] == {"release": None, "gvisor": None}
    assert facts["extra"] == {"k\\x1b": "v\\x07"}  # unknown fields: kept, escaped
    assert {m["field"] for m in facts["malformed"]} == {"gpus", "kernel.release", "kernel.gvisor", "hostname",
                                                        "env.PATH"}
    assert clean_facts(["not", "a", "dict"]) is None
    assert clean_facts(gpu_facts())["malformed"] == []


def test_parse_output_survives_hostile_json():
    assert parse_output("{" + "[" * 100000) is None
    parse_output("{\"gpus\": " + "[" * 100000 + "]" * 100000 + "}")  # no exception
    facts = parse_output("junk\n" + json.dumps(gpu_facts(driver="550\x1b[31m")) + "\n")
    assert facts["driver"] is None and facts["malformed"]


def test_a_malformed_driver_is_never_judged_ok():
    facts = clean_facts(gpu_facts(name=f"A100{TITLE}", driver=f"550.54.14{TITLE}"))
    found = malformed("node3", facts, ["ssh", "cuda", "arch"]) + cuda.check("node3", facts) + \
        arch.check("node3", facts)
    assert not any(f["status"] == "ok" and "driver" in f["message"] and "supports" in f["message"] for f in found)
    bad = [f for f in found if f["status"] == "fail" and "malformed" in f["message"]]
    assert {f["check"] for f in bad} == {"cuda", "arch"}
    text = report.render(["node3"], found, ["ssh", "cuda", "arch"], "", verbose=1)
    assert ESC not in text and "\x07" not in text and "node3" in text and "malformed driver version" in text


def test_render_escapes_whatever_a_check_let_through():
    f = {"node": "node1", "check": "mpi", "status": "fail", "message": f"mpirun said {TITLE}", "fix": f"x{ESC}"}
    text = report.render(["node1"], [f], ["mpi"], "")
    assert ESC not in text and "mpirun said \\x1b]0;owned" in text


# --- host keys: OpenSSH's known_hosts rules ---------------------------------------------------------

KEY_A = paramiko.ECDSAKey.generate()
KEY_B = paramiko.ECDSAKey.generate()


def line(names, key, marker=""):
    return f"{marker} {names} {key.get_name()} {key.get_base64()}".strip()


def entries(text, name):
    return [e for e in parse_known_hosts(text, "kh") if host_matches(name, e.patterns)]


def test_host_patterns_like_openssh():
    assert host_matches("node1", "node1,node2") and host_matches("NODE1", "node1")
    assert host_matches("[node1]:2222", "[node1]:2222") and not host_matches("node1", "[node1]:2222")
    assert host_matches("gpu07.lab", "*.lab") and host_matches("gpu7", "gpu?")
    assert not host_matches("gpu07.lab", "*.lab,!gpu07.lab")
    assert not host_matches("x[1]", "x1")  # brackets are literal, not a character class
    hashed = paramiko.HostKeys.hash_host("node3")
    assert host_matches("node3", hashed) and not host_matches("node4", hashed)


def test_judge_host_key():
    blob_a, blob_b = KEY_A.asbytes(), KEY_B.asbytes()
    kh = "\n".join([line("node1", KEY_A), "# comment", line("*.lab", KEY_B), line("[node2]:2222", KEY_A),
                    line("*", KEY_B, "@revoked"), "@cert-authority * " + KEY_A.get_name() + " " + KEY_A.get_base64(),
                    "garbage line", "node9 ssh-ed25519 !!notbase64!!"])
    assert judge_host_key(entries(kh, "node1"), KEY_A.get_name(), blob_a)[0] == "ok"
    assert judge_host_key(entries(kh, "node1"), KEY_A.get_name(), blob_b)[0] == "revoked"
    assert judge_host_key(entries(kh, "x.lab"), KEY_A.get_name(), blob_a)[0] == "changed"
    assert judge_host_key(entries(kh, "[node2]:2222"), KEY_A.get_name(), blob_a)[0] == "ok"
    assert judge_host_key(entries(kh, "node2"), KEY_A.get_name(), blob_a)[0] == "new"
    assert judge_host_key(entries(kh, "node9"), KEY_A.get_name(), blob_a)[0] == "new"
    # a user file that knows the key wins over a global file that records another, as in ssh
    both = entries(line("node5", KEY_A), "node5") + entries(line("node5", KEY_B), "node5")
    assert judge_host_key(both, KEY_A.get_name(), blob_a)[0] == "ok"
    verdict, entry = judge_host_key(entries(line("node5", KEY_B), "node5"), KEY_A.get_name(), blob_a)
    assert verdict == "changed" and entry.where == "kh:1" and entry.blob == KEY_B.asbytes()
    assert base64.b64decode(KEY_B.get_base64()) == entry.blob


def test_parse_jump():
    assert parse_jump("bastion", "n") == [(None, "bastion", None)]
    assert parse_jump("alice@b1:2200,ssh://b2.lab:22,[fe80::1]:23", "n") == [
        ("alice", "b1", 2200), (None, "b2.lab", 22), (None, "fe80::1", 23)]
    for bad in ("a b", "x@", "host:port", "$(reboot)", ""):
        with pytest.raises(UsageError, match="ProxyJump"):
            parse_jump(bad, "node1")


def test_config_includes_are_followed_or_refused(tmp_path):
    from clusterdoc.hostfile import Host
    from clusterdoc.remote import SSHContext, SSHOptions

    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "lab.conf").write_text("Host gpu*\n  ProxyJump bastion:2200\n")
    cfg = tmp_path / "config"
    cfg.write_text(f"Include {tmp_path}/conf.d/*.conf\nUser alice\nHost *\n  Port 2222\n"
                   f"  GlobalKnownHostsFile {tmp_path}/global\n")
    ctx = SSHContext(SSHOptions(ssh_config=cfg))
    t = ctx.lookup(Host("gpu1"))
    assert t.jumps == [(None, "bastion", 2200)] and t.port == 2222 and t.user == "alice"
    assert t.known_hosts[-1] == tmp_path / "global" and t.key_name == "[gpu1]:2222"
    assert ctx.lookup(Host("cpu1")).jumps == []
    cfg.write_text(f"Host gpu*\n  Include {tmp_path}/conf.d/*.conf\n")
    with pytest.raises(UsageError, match="Include inside a Host"):
        SSHContext(SSHOptions(ssh_config=cfg))


def test_capped_reader_keeps_the_first_bytes_and_says_it_dropped_the_rest():
    import subprocess
    import sys

    from clusterdoc.doctor.mpirun import TOO_LARGE, CappedReader
    from clusterdoc.untrusted import MAX_STREAM

    p = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdout.write('name\\n' + 'x' * (3 * 2**22))"],
                         stdout=subprocess.PIPE)
    lines = []
    reader = CappedReader(p.stdout, lines.append)
    reader.join(30)
    p.wait()
    text = reader.text()
    assert lines[0] == "name" and len(text) == MAX_STREAM + len(TOO_LARGE) and text.endswith(TOO_LARGE)


def test_mpi_library_is_a_c_string_and_its_malformed_values_are_filed_under_mpi():
    lib = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022"
    sent = {"mpi": {"mpi4py": {"version": "4.1.2", "library": lib + "\0"}}}
    facts = clean_facts(sent)
    assert facts["mpi"]["mpi4py"]["library"] == lib and facts["malformed"] == []
    facts = clean_facts({"mpi": {"mpi4py": {"version": "4.1.2", "library": "Open MPI\0\x1b[2J"}}})
    assert facts["mpi"]["mpi4py"]["library"] is None
    assert [f["check"] for f in malformed("n1", facts, ["ssh", "mpi"])] == ["mpi"]
    assert malformed("n1", facts, ["ssh"]) == []  # --skip mpi: not judged, not filed under ssh


def test_proxycommand_is_expanded_and_run_as_ssh_does(monkeypatch):
    monkeypatch.setenv("SHELL", "/bin/sh")
    tokens = {"%h": "10.0.0.2", "%n": "node2", "%p": "22", "%r": "o'brien"}
    argv = proxy_command_argv("nc %h %p 2>/dev/null # %n %r 100%%", tokens, "node2")
    assert argv == ["/bin/sh", "-c", "exec nc 10.0.0.2 22 2>/dev/null # node2 'o'\"'\"'brien' 100%"]
    with pytest.raises(UsageError, match="unknown token %d"):
        proxy_command_argv("nc %h %d", tokens, "node2")
