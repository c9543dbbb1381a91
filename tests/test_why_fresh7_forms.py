"""`clusterdoc why --log`, session 19 (issue 41): what the sealed set heldout-fresh7 held that the rules judged wrong
or did not know, read only after its score was recorded (18/30 unseen, 2 confidently wrong): a rank that dumped its
flight recorder is in the collective it says it enqueued, Slurm's client without its configuration, MKL's threading
layer, a shell told to run a path that is not there, and a library's config rejected by its own schema. Each test
failed on the rules before; the threads are named beside each excerpt (fresh7's rows in its SOURCES.md, the others
`sha256(URL) % 3 != 0`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterdoc.why import candidates, logs, signatures
from tests.why_helpers import judge_log

FRESH7 = Path(__file__).parent / "fixtures" / "why" / "heldout-fresh7"


# --- torch's own count: a rank whose dump line says it enqueued the timed-out collective is in it, not behind ---


def test_a_rank_that_dumped_at_the_same_collective_is_not_the_one_the_others_wait_for():
    # https://github.com/OpenRLHF/OpenRLHF/issues/1126: rank 7 times out in ALLREDUCE 460631; rank 2 printed only
    # its dump lines, which say it enqueued 460631 too: nothing says who is behind (the thread settles nothing)
    c = judge_log((FRESH7 / "deepspeed-7533-save-model-watchdog-unsettled.log").read_text())
    assert c.category == "unknown" and 2 not in c.ranks, (c.category, c.ranks, c.headline)


def test_the_default_groups_count_is_read_and_another_groups_is_not():
    f = logs.scan([
        "[rank2]:[E901 05:20:03.118859045 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 2] Received "
        "a dump signal due to a collective timeout from  rank 6 and we will try our best to dump the debug info. Last "
        "enqueued NCCL work: 460631, last completed NCCL work: 460630.This is most likely caused by ...",
        # https://github.com/hiyouga/LlamaFactory/issues/6269: PG 1's count is another group's numbering
        "[rank0]:[E1206 18:44:16.994932383 ProcessGroupNCCL.cpp:1709] [PG 1 Rank 0] Timeout at NCCL work: 7753, last "
        "enqueued NCCL work: 7755, last completed NCCL work: 7752.",
    ])
    assert f.enqueued == {2: 460631}


# --- the tools' own words ---


@pytest.mark.parametrize("text", [
    # https://github.com/clustervision/trinity/issues/125 (an Include'd file that does not parse)
    "scontrol: error: \"Include\" failed in file /etc/slurm/slurm.conf line 9\n"
    "scontrol: fatal: Unable to process configuration file\n",
    # https://github.com/elasticluster/elasticluster/issues/630 (no slurm.conf on the front end)
    "sinfo: error: s_p_parse_file: unable to status file /etc/slurm-llnl/slurm.conf: No such file or directory, "
    "retrying in 1sec up to 60sec\nsinfo: fatal: Unable to process configuration file\n",
    # https://github.com/nico-bohlinger/one_policy_to_run_them_all/issues/5 (configless, no DNS SRV record)
    "sbatch: error: fetch_config: DNS SRV lookup failed\nsbatch: error: _establish_config_source: failed to fetch "
    "config\nsbatch: fatal: Could not establish a configuration source\n",
])
def test_slurms_client_without_its_configuration_is_the_environment(text):
    c = judge_log(text)
    assert c.category == "environment" and not c.weak and "configuration" in c.headline, c.headline


def test_mkls_threading_layer_is_a_candidate_not_a_verdict():
    # https://github.com/pytorch/ort/issues/102 (the process stopped there); pytorch#37377: with
    # MKL_SERVICE_FORCE_INTEL set the same line is printed by runs that go on
    c = judge_log("Error: mkl-service + Intel(R) MKL: MKL_THREADING_LAYER=INTEL is incompatible with libgomp.so.1 "
                  "library.\n\tTry to import numpy first or set the threading layer accordingly. Set "
                  "MKL_SERVICE_FORCE_INTEL to force it.\n")
    assert c.category == "unknown" and c.candidates[0].startswith("environment"), (c.category, c.candidates)


@pytest.mark.parametrize("line", [
    # the horovodrun log of heldout-fresh7 (horovod-1340): another machine's pyenv path
    "bash: /home/wyz/.pyenv/versions/3.7.2/envs/env-3.7.2/bin/python3.7: No such file or directory\n",
])
def test_a_shell_told_to_run_a_path_that_is_not_there_is_a_candidate(line):
    c = judge_log(line)
    assert c.category == "unknown" and c.candidates[0].startswith("environment"), (c.category, c.candidates)


def test_a_shebangs_interpreter_missing_is_the_environment():
    # https://github.com/pmodels/mpich/issues/318 (a script's #! interpreter missing on that machine): env(1) names
    # the interpreter it could not find, no path the script chose (session 21: a verdict, was a candidate)
    c = judge_log("/usr/bin/env: python2.3: No such file or directory\n")
    assert c.category == "environment" and "shebang" in c.headline, c.headline


def test_a_python_file_not_found_is_not_a_shells_path():
    c = judge_log("FileNotFoundError: [Errno 2] No such file or directory: '/data/train.json'\n")
    assert c.category == "code", c.headline  # the code's (or its data's), as before


@pytest.mark.parametrize("text", [
    # https://github.com/OpenBMB/MiniCPM-V/issues/694 (DeepSpeed 0.15's schema, pydantic 2)
    "[rank0]: pydantic_core._pydantic_core.ValidationError: 1 validation error for DeepSpeedZeroConfig\n"
    "[rank0]: stage3_prefetch_bucket_size\n"
    "[rank0]:   Input should be a valid integer, got a number with a fractional part [type=int_from_float, "
    "input_value=11560550.4, input_type=float]\n",
    # https://github.com/deepspeedai/DeepSpeed/issues/2890 (pydantic 1's form: keys another release takes)
    "pydantic.error_wrappers.ValidationError: 3 validation errors for DeepSpeedInferenceConfig\ntp\n"
    "  value is not a valid dict (type=type_error.dict)\nzero -> fp16\n  extra fields not permitted "
    "(type=value_error.extra)\n",
])
def test_a_librarys_config_rejected_by_its_schema_is_a_candidate(text):
    c = judge_log(text)
    assert c.category == "unknown", (c.category, c.headline)
    assert c.candidates[0].startswith("environment") and c.candidates[1].startswith("code"), c.candidates


def test_every_new_weak_entry_has_candidates():
    for name in ("mkl-threading-layer", "shell-path-missing", "shell-path-missing-env", "python-config-validation"):
        assert len(candidates.for_signature(signatures.get(name))) >= 2, name
