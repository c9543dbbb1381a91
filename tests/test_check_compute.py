"""The compute check (checks/compute.py): the GPUs' compute mode against the job's layout, read by the real probe
from real `nvidia-smi -q -x` files (tests/real/SOURCES.md) on a fake nvidia-smi (tests/test_gpu_real.py's Node).

Every real file shows `<compute_mode>Default</compute_mode>`; no public `-q -x` with another mode was found, so the
modes below are planted here, in this test's copy of a real file (the element's text replaced, nothing else), as
tests/real/SOURCES.md asks. Where sites set them: LSF's `bsub -gpu "num=1:mode=exclusive_process"` (common in
public job scripts), the MPS server's recommended `nvidia-smi -c EXCLUSIVE_PROCESS`."""

import pytest

from clusterdoc.checks import FAIL, OK, WARN, compute, gpuhealth, registry
from clusterdoc.doctor import CheckOptions, Report, judge
from clusterdoc.doctor.facts import Gathered
from tests.test_gpu_real import REAL, XMLS, Node

DUAL = REAL / "nvsmi-xml" / "telegraf-dual_2080-v13.xml"  # 2x RTX 2080 (one UUID twice: anonymised upstream)
A100 = REAL / "nvsmi-xml" / "telegraf-a100-sxm4-v12.xml"


def facts_of(tmp_path, monkeypatch, xml, *modes, cvd=None):
    """The probe's facts of a node whose nvidia-smi prints `xml` with its GPUs' compute modes set to `modes`."""
    tag = "<compute_mode>Default</compute_mode>"
    parts = xml.read_text().split(tag)
    modes = modes + ("Default",) * (len(parts) - 1 - len(modes))  # planted: the i-th GPU's mode
    text = parts[0] + "".join(f"<compute_mode>{m}</compute_mode>" + p for m, p in zip(modes, parts[1:]))
    facts = Node(tmp_path, monkeypatch).put("q-x.xml", text=text).probe()
    facts["env"] = {"CUDA_VISIBLE_DEVICES": cvd}
    return facts


def not_ok(findings):
    return [(f["status"], f["message"]) for f in findings if f["status"] != OK]


@pytest.mark.parametrize("xml", XMLS, ids=lambda p: p.name)
def test_every_real_file_is_default_mode_and_ok(tmp_path, monkeypatch, xml):
    facts = facts_of(tmp_path, monkeypatch, xml)
    findings = compute.check("n1", facts, tasks_per_node=1)
    assert not_ok(findings) == []
    assert findings[-1]["message"].startswith("compute mode Default on") or "not applicable" in findings[0]["message"]


def test_prohibited_fails_naming_the_gpu(tmp_path, monkeypatch):
    facts = facts_of(tmp_path, monkeypatch, A100, "Prohibited")
    [(status, message)] = not_ok(compute.check("n1", facts))
    gpu = facts["gpu_health"]["smi"]["gpus"][0]
    assert status == FAIL and "compute mode Prohibited" in message and gpu["uuid"] in message


def test_exclusive_process_with_one_rank_per_gpu_is_no_alarm(tmp_path, monkeypatch):
    """torchrun / DeepSpeed: one process per GPU, exactly what Exclusive_Process allows."""
    facts = facts_of(tmp_path, monkeypatch, DUAL, "Exclusive_Process", "Exclusive_Process")
    for tasks in (None, 1, 2):
        findings = compute.check("n1", facts, tasks)
        assert not_ok(findings) == []
        assert "compute mode Exclusive_Process (one process per GPU) on all 2 GPUs" in findings[0]["message"]


@pytest.mark.parametrize("mode", ["Exclusive_Process", "Exclusive_Thread"])
def test_more_ranks_than_exclusive_gpus_warns(tmp_path, monkeypatch, mode):
    facts = facts_of(tmp_path, monkeypatch, DUAL, mode, mode)
    [(status, message)] = not_ok(compute.check("n1", facts, tasks_per_node=3))
    assert status == WARN and message.startswith("3 ranks per node on 2 usable GPU(s)") and "busy" in message


def test_cuda_visible_devices_decides_which_gpus_the_job_uses(tmp_path, monkeypatch):
    # GPU 0 Default, GPU 1 Prohibited (planted); the same model, so index 0 is the first GPU nvidia-smi lists
    facts = facts_of(tmp_path, monkeypatch, DUAL, "Default", "Prohibited", cvd="0")
    assert not_ok(compute.check("n1", facts, tasks_per_node=1)) == []
    facts["env"]["CUDA_VISIBLE_DEVICES"] = "1"
    assert [s for s, _ in not_ok(compute.check("n1", facts))] == [FAIL]
    # the file's two GPUs share one UUID: which one the job gets cannot be told, so no confident FAIL
    facts["env"]["CUDA_VISIBLE_DEVICES"] = "GPU-12345678"
    [(status, message)] = not_ok(compute.check("n1", facts))
    assert status == WARN and "depends on CUDA_VISIBLE_DEVICES=GPU-12345678" in message


def test_the_gpu_check_no_longer_warns_on_exclusive_process(tmp_path, monkeypatch):
    """The old rule (gpu: WARN on any Exclusive_Process) was a false alarm for one rank per GPU; it moved here."""
    facts = facts_of(tmp_path, monkeypatch, A100, "Exclusive_Process")
    assert not [f for f in gpuhealth.check("n1", facts, 1, "test") if "compute mode" in f["message"]]


def test_the_doctor_judges_and_reports_it_in_its_own_column(tmp_path, monkeypatch):
    facts = facts_of(tmp_path, monkeypatch, DUAL, "Exclusive_Process", "Exclusive_Process")
    conn = {"status": "ok", "message": "", "elapsed": 0.0, "exit_code": 0}
    g = Gathered(["n1"], {"n1": conn}, {"n1": facts}, CheckOptions(tasks_per_node=4).selected())
    report = Report.build(g, judge(g, CheckOptions(tasks_per_node=4)))
    assert "compute" in report.checks and report.nodes[0].status["compute"] == WARN
    assert "compute" in registry.allocation()  # submit's Slurm preflight judges it too


@pytest.mark.cluster
@pytest.mark.slow
def test_on_the_test_cluster_prohibited_fails_and_exclusive_with_one_rank_per_gpu_is_quiet(cluster):
    """The modes planted where a node shows them (its nvidia-smi -q -x, tests/cluster/fakes.py); 8 ranks per node on
    8 A100s: node2's Exclusive_Process is no problem, node3's Prohibited is; with 9 ranks node2 warns too."""
    from tests.test_doctor_cluster import check, names, problems

    with cluster.planted({"node2": {"compute_mode": "Exclusive_Process"}, "node3": {"compute_mode": "Prohibited"}}):
        args = ("-w", names(cluster), "--ssh-config", cluster.ssh_config, "--timeout", 20, "--mpirun", cluster.mpirun,
                "--checks", "compute")  # fmt: skip
        code, doc = check(*args, "--tasks-per-node", 8)
        assert problems(doc) == {("node3", "compute")} and code == 1, doc["findings"]
        assert any(f["node"] == "node2" and "Exclusive_Process (one process per GPU)" in f["message"]
                   for f in doc["findings"])  # fmt: skip
        code, doc = check(*args, "--tasks-per-node", 9)
        assert problems(doc, WARN) == {("node2", "compute")}, doc["findings"]
