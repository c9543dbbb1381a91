"""Accounting as evidence (issue 42): sacct's rows read as untrusted text (jobs/sacct.py), judged by `why`
(TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, CANCELLED by UID), shown by `status` of a job the controller has
forgotten, and the association check before anything is queued (launch/accounting.py). The rows are real
(tests/fixtures/sacct/SOURCES.md); the commands on PATH print them as the real ones did."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clusterdoc.errors import UsageError
from clusterdoc.jobs import sacct
from clusterdoc.launch import accounting, submit
from clusterdoc.why import main as why_main
from clusterdoc.why import verdict
from clusterdoc.why.foreign import evidence_from_lines

FIX = Path(__file__).parent / "fixtures" / "sacct"
GONE = "slurm_load_jobs error: Invalid job id specified"
DISABLED = "sacct: error: Slurm accounting storage is disabled"


def real(job: int) -> str:
    return (FIX / f"job{job}.txt").read_text()


def as_state(state: str, exit_code: str = "0:0", job: int = 3) -> str:
    """A real row (job3's) with its state word replaced by one this machine cannot produce (SOURCES.md)."""
    lines = real(job).splitlines()
    first = lines[0].split("|")
    first[1], first[2] = state, exit_code
    return "\n".join(["|".join(first), *lines[1:]]) + "\n"


# --- the parser ----------------------------------------------------------------------------------------


def test_a_timeout_forgotten_by_the_controller():
    acc = sacct.parse(real(3), "3")
    assert acc is not None
    assert (acc.state, acc.exit_code, acc.nodes, acc.time_limit, acc.cancelled_by) == (
        "TIMEOUT", "0:0", "node1", "00:01:00", None)  # fmt: skip
    assert [(s.step, s.state, s.exit_code) for s in acc.steps] == [("batch", "CANCELLED", "0:15")]
    assert acc.line().startswith("sacct: job 3 TIMEOUT, ExitCode 0:0, Elapsed 00:01:28 of Timelimit 00:01:00, on node1")


def test_cancelled_by_a_uid_and_the_largest_maxrss():
    acc = sacct.parse(real(4), "4")
    assert acc is not None and acc.state == "CANCELLED" and acc.cancelled_by == 0
    assert [s.step for s in acc.steps] == ["batch", "0"]
    six = sacct.parse(real(6), "6")
    assert six is not None and six.state == "COMPLETED" and six.max_rss() == "218336K"
    assert sacct.facts(acc)["cancelled_by"].endswith("(uid 0)")


@pytest.mark.parametrize(
    "text, why",
    [
        (real(3) + real(3).splitlines()[1] + "\n", "the batch step twice: one is forged"),
        (real(3) + real(3).splitlines()[0] + "\n", "the job's row twice"),
        (real(3).replace("|node1|", "|node1|extra|", 1), "a row with a field too many (a | in a value)"),
        (real(3).replace("TIMEOUT", "timeout; rm -rf"), "a state that is not a word"),
        ("3|TIMEOUT|0:0\n", "a row of another form"),
        (real(3).replace("3.batch", "3.\x1b[2J"), "a step that is not one"),
        ("", "nothing"),
        (real(4), "another job's rows only"),
    ],
)
def test_rows_that_are_not_sacct_s_are_nothing_known(text, why):
    assert sacct.parse(text, "3") is None, why


def test_another_jobs_rows_are_not_this_ones_and_a_bad_id_is_refused():
    acc = sacct.parse(real(4) + real(3), "3")
    assert acc is not None and acc.state == "TIMEOUT" and len(acc.steps) == 1
    assert sacct.parse(real(3), "3; rm") is None


def test_a_huge_answer_is_bounded():
    steps = "".join(f"3.{i}|COMPLETED|0:0|||node1||00:00:01|\n" for i in range(5000))
    acc = sacct.parse(real(3).splitlines()[0] + "\n" + steps, "3")
    assert acc is not None and len(acc.steps) == sacct.MAX_STEPS


# --- the verdict from accounting alone (no output file) -------------------------------------------------


def judged(text: str, job: str = "3"):
    acc = sacct.parse(text, job)
    assert acc is not None
    ev = evidence_from_lines([], job, acc.state, acc.scontrol_like())
    assert ev.scheduler is not None
    ev.scheduler["accounting"] = sacct.facts(acc)
    return verdict.judge(ev)


def test_timeout_is_the_scheduler_s_time_limit():
    v = judged(real(3))
    assert v.cause is not None and v.cause.category == "scheduler"
    assert v.cause.headline == "Slurm ended the job: the time limit (00:01:00, ran 00:01:28)"
    assert v.cause.evidence[0].startswith("sacct: job 3 TIMEOUT")


def test_preempted_is_the_scheduler_s():
    v = judged(as_state("PREEMPTED"))
    assert v.cause is not None and (v.cause.category, v.cause.headline) == (
        "scheduler", "Slurm ended the job: preemption")  # fmt: skip


def test_out_of_memory_is_oom_with_the_step_and_its_maxrss():
    text = as_state("OUT_OF_MEMORY", "0:125").replace("3.batch|CANCELLED|0:15", "3.batch|OUT_OF_MEMORY|0:125")
    v = judged(text)
    assert v.cause is not None and v.cause.category == "oom"
    assert "OUT_OF_MEMORY in step batch" in v.cause.headline and "MaxRSS of its steps 3452K" in v.cause.headline


def test_node_fail_names_the_node_and_of_several_says_it_is_not_known_which():
    v = judged(as_state("NODE_FAIL"))
    assert v.cause is not None and v.cause.category == "node" and v.cause.nodes == ["node1"]
    assert v.cause.headline == "Slurm reports a node failure (node1)"
    two = as_state("NODE_FAIL").replace("|node1|", "|node[1-2]|", 1)
    v = judged(two)
    assert v.cause is not None and v.cause.category == "node" and v.cause.nodes == []  # not excluded blindly
    assert "one of the job's nodes: node1, node2" in v.cause.headline and "sinfo -R" in v.cause.next_step


def test_cancelled_by_a_user_names_the_user():
    v = judged(real(4), "4")
    assert v.cause is not None and v.cause.category == "scheduler"
    assert v.cause.headline == "the job was cancelled by root (uid 0)"


def test_a_failure_in_the_log_before_the_cancel_still_wins():
    acc = sacct.parse(real(4), "4")
    assert acc is not None
    log = ["Traceback (most recent call last):", '  File "train.py", line 3, in <module>', "ValueError: bad batch"]
    ev = evidence_from_lines(log, "4", acc.state, acc.scontrol_like())
    assert ev.scheduler is not None
    ev.scheduler["accounting"] = sacct.facts(acc)
    v = verdict.judge(ev)
    assert v.cause is not None and v.cause.category == "code", v.cause


# --- why and status of a forgotten job, through the commands on PATH -----------------------------------


def on_path(monkeypatch, tmp_path: Path, **commands: str) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in commands.items():
        p = bin_dir / name
        p.write_text(f"#!/bin/bash\n{body}\n")
        p.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")


def fake_slurm(monkeypatch, tmp_path: Path, rows: str, workdir: Path) -> None:
    """slurmctld has forgotten the job; sacct (22.05: no StdOut field, no --expand-patterns) knows it."""
    (tmp_path / "rows.txt").write_text(rows)
    sacct_sh = f"""
case "$*" in
  *--expand-patterns*) echo "sacct: unrecognized option '--expand-patterns'" >&2; exit 1;;
  *"-o WorkDir"*) echo {str(workdir)!r};;
  *"-o StdOut"*|*"-o StdErr"*) echo 'sacct: error: Invalid field requested: "StdOut"' >&2; exit 1;;
  *) cat {str(tmp_path / "rows.txt")!r};;
esac"""
    gone = f"echo {GONE!r} >&2; exit 1"
    on_path(monkeypatch, tmp_path, sacct=sacct_sh, squeue=gone, scontrol=gone)


def test_why_of_a_forgotten_timeout_says_the_time_limit_and_reads_the_default_output(monkeypatch, tmp_path, capsys):
    work = tmp_path / "work"
    work.mkdir()
    (work / "slurm-3.out").write_text("start\nslurmstepd: error: *** JOB 3 ON node1 CANCELLED AT "
                                      "2026-11-29T00:09:29 DUE TO TIME LIMIT ***\n")  # fmt: skip
    fake_slurm(monkeypatch, tmp_path, real(3), work)
    monkeypatch.chdir(tmp_path)
    assert why_main.main("3", None, probe=False) == 1
    out = capsys.readouterr().out
    assert "cause     scheduler: Slurm ended the job: the time limit (00:01:00, ran 00:01:28)" in out, out
    assert f"read      {work / 'slurm-3.out'}" in out


def test_why_of_a_forgotten_job_without_its_output_still_judges_from_accounting(monkeypatch, tmp_path, capsys):
    fake_slurm(monkeypatch, tmp_path, real(4), tmp_path / "nowhere")
    monkeypatch.chdir(tmp_path)
    assert why_main.main("4", None, probe=False) == 1
    out = capsys.readouterr().out
    assert "cause     scheduler: the job was cancelled by root (uid 0)" in out, out
    assert "not known to Slurm any more" not in out


def test_status_of_a_forgotten_foreign_job_comes_from_accounting(monkeypatch, tmp_path, capsys):
    fake_slurm(monkeypatch, tmp_path, real(3), tmp_path)
    monkeypatch.chdir(tmp_path)
    assert submit.status_main("3", None) == 1
    out = capsys.readouterr().out
    assert out.startswith("slurm job 3: TIMEOUT\n") and "from    accounting (sacct)" in out, out
    assert "steps   batch CANCELLED 0:15" in out


def test_without_accounting_why_and_status_say_what_they_did_before(monkeypatch, tmp_path, capsys):
    gone = f"echo {GONE!r} >&2; exit 1"
    on_path(monkeypatch, tmp_path, sacct=f"echo {DISABLED!r} >&2; exit 1", squeue=gone, scontrol=gone)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="does not know job 3 any more") as err:
        why_main.main("3", None, probe=False)
    assert "accounting storage" not in str(err.value)  # sacct's refusal is no error to show
    with pytest.raises(UsageError, match="Slurm does not know job 3 any more, and keeps no accounting"):
        submit.status_main("3", None)


# --- the association check ---------------------------------------------------------------------------

# `sacctmgr -P -n show assoc where user=root format=Cluster,Account,Partition,QOS` on the site cluster
ASSOCS = "clusterdoc|proj1||normal,short\nclusterdoc|root||normal\n"


def test_a_wrong_account_is_refused_naming_the_users_accounts():
    got = accounting.judge(accounting.parse_assocs(ASSOCS) or [], "root", "proj2", None, None, cluster="clusterdoc")
    assert got is not None
    assert "account 'proj2' is not one of root's" in got.message and "proj1 (QOS normal,short)" in got.message
    assert got.hint.startswith("--account proj1 (or one of proj1, root)")


def test_qos_and_partition_and_the_default_account():
    assocs = accounting.parse_assocs(ASSOCS + "clusterdoc|proj3|gpu|normal\n") or []
    assert accounting.judge(assocs, "root", None, "debug", "short", default_account="proj1") is None
    qos = accounting.judge(assocs, "root", "proj1", None, "long")
    assert qos is not None and "QOS 'long' is not allowed" in qos.message and "normal, short" in qos.message
    part = accounting.judge(assocs, "root", "proj3", "debug", None)
    assert part is not None and "no association with partition 'debug'" in part.message
    assert part.hint.startswith("--partition gpu")
    assert accounting.judge(assocs, "root", "proj3", "gpu", None) is None
    assert accounting.judge([], "alice", None, None, None) is not None  # no association at all
    assert accounting.judge(assocs, "root", None, None, None, default_account=None) is None  # not known


def test_associations_of_another_form_are_not_judged():
    assert accounting.parse_assocs("clusterdoc|proj1|normal\n") is None
    assert accounting.parse_assocs("clusterdoc|pr oj1||normal\n") is None


def test_a_cluster_without_accounting_is_never_refused(monkeypatch, tmp_path):
    conf = "AccountingStorageEnforce = none\nAccountingStorageType   = accounting_storage/none\n"
    on_path(monkeypatch, tmp_path, scontrol=f"printf {conf!r}", sacctmgr="echo should-not-be-asked; exit 1")
    assert accounting.check_association("proj2", None, None, "root") is None
