"""`clusterdoc why`, issue 41: NCCL's own failure messages read from its source (scripts/catalogue_nccl.py reads
every WARN(...) of NVIDIA/nccl into tests/fixtures/why/catalogue/nccl.tsv and makes
clusterdoc/why/sigtable/catalogue_nccl.py from it, a category per component and error path). The table is what the
script makes from the committed list, it costs no pre-check key, and real lines from public threads that no learned
signature names are named by it (each thread's address beside it; none of them in a dev folder's SOURCES.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clusterdoc.why import candidates, signatures
from clusterdoc.why.sigtable import catalogue_nccl
from tests.why_helpers import assert_generated, judge_log, keys_without, load_script

ROOT = Path(__file__).resolve().parents[1]


def _script():
    return load_script("catalogue_nccl")


def test_the_table_is_what_the_script_makes_from_the_committed_list():
    script = _script()
    rows, thin = script.table(script.read_raw())
    assert_generated(script.render(rows, thin), script.OUT, "python scripts/catalogue_nccl.py table")
    assert 0 < len(catalogue_nccl.SIGNATURES) <= script.MAX_ROWS


def test_the_raw_list_is_bounded_and_names_its_commits():
    script = _script()
    raw = script.read_raw()
    assert 100 < len(raw) < 2000
    for commit, path, line, fmt, _known in raw:
        assert re.fullmatch(r"[0-9a-f]{40}", commit) and path.startswith("src/") and line > 0
        assert 0 < len(fmt) <= script.FORMAT_CAP and "\t" not in fmt


def test_the_catalogue_adds_no_pre_check_key():
    # every row's first needle holds a picked key: the one-pass pre-check of every log line is unchanged
    assert signatures._KEYS == keys_without(catalogue_nccl.SIGNATURES)


@pytest.mark.parametrize("sig", catalogue_nccl.SIGNATURES, ids=lambda s: s.name)
def test_every_row_is_a_source_line_with_its_marker(sig):
    assert sig.name.startswith("ncclsrc-") and "NCCL WARN" in sig.needles and sig.needles[0] != "NCCL WARN"
    assert len(sig.needles[0]) >= 12 and any(k in sig.needles[0].lower() for k in signatures._KEYS_PICKED)
    assert re.fullmatch(r"https://github\.com/NVIDIA/nccl/blob/[0-9a-f]{40}/src/\S+#L\d+", sig.source)
    assert sig.meaning and sig.next_step
    if sig.weak:  # an "unknown" names two candidates at least, and what decides
        assert len(candidates.for_signature(sig)) >= 2


def test_the_catalogue_comes_after_every_learned_signature():
    from clusterdoc.why.sigtable import code, desync, effect, environment, hang, network, node, oom, peer, scheduler

    at = {id(s): i for i, s in enumerate(signatures.SIGNATURES)}
    mine = [at[id(s)] for s in catalogue_nccl.SIGNATURES]
    assert mine == list(range(mine[0], mine[0] + len(mine)))  # one block, in the table's order
    tables = (code, desync, effect, environment, hang, network, node, oom, peer, scheduler)
    assert max(at[id(s)] for t in tables for s in t.SIGNATURES) < mine[0]  # a fallback: every learned one first


# --- real lines no learned signature names, from threads (each `sha256(URL) % 3 != 0`) ---


@pytest.mark.parametrize("url, text, category", [
    # init.cc's check of the rank against the world size: the launch's arguments (--world-size 4, 8 processes)
    ("https://github.com/jeffffffli/HybrIK/issues/47",
     "ued37c44e4ea65b:6861:6861 [7] init.cc:981 NCCL WARN Invalid rank requested : 7/4\n", "code"),
    # argcheck.cc: a point-to-point call's peer outside the communicator (ncclSend/ncclRecv from threads)
    ("https://github.com/NVIDIA/nccl/issues/963",
     "9306dc444753:248281:248311 [1] misc/argcheck.cc:39 NCCL WARN Recv : invalid root 0 (root should be in the "
     "0..0 range)\n", "code"),
    # shmutils.cc: a shared memory segment that could not be attached (the container's /dev/shm)
    ("https://github.com/vllm-project/vllm/issues/18831",
     "NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl- (size 192814336), error: No such "
     "file or directory (2)\n", "environment"),
])  # fmt: skip
def test_a_source_message_no_paste_taught_is_named(url, text, category):
    sig = signatures.match(text)
    assert sig is not None and sig.name.startswith("ncclsrc-") and not sig.weak, (url, sig)
    assert judge_log(text).category == category, url


@pytest.mark.parametrize("url, text, other", [
    # nvmlwrap.cc: an NVML call failed; its error decides (here each rank saw only its own GPU: environment)
    ("https://github.com/NVIDIA/nccl/issues/1066",
     "gcn6:1080061:1080359 [0] misc/nvmlwrap.cc:181 NCCL WARN nvmlDeviceGetHandleByPciBusId() failed: Not Found\n",
     "environment"),
])  # fmt: skip
def test_a_source_message_whose_path_does_not_decide_is_a_candidate(url, text, other):
    sig = signatures.match(text)
    assert sig is not None and sig.name.startswith("ncclsrc-") and sig.weak, (url, sig)
    c = judge_log(text)
    assert c.category == "unknown" and len(c.candidates) >= 2, (url, c.headline)
    assert any(other in cand for cand in c.candidates), (url, c.candidates)


# --- look-alikes: NCCL's lines that are no failure ---


@pytest.mark.parametrize("line", [
    # a device NCCL skips (it goes on with the others): https://github.com/zai-org/ImageReward/issues/65
    "65826-86bd789679-2dxbs:80746:80746 [3] transport/net_ib.cc:149 NCCL WARN NET/IB : Unable to open device mlx5_59",
    "65826-86bd789679-2dxbs:80744:80744 [1] misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed",
    # a healthy fabric's async event (https://github.com/NVIDIA/nccl/issues/1819: a GID change when an IP moves),
    # as v2.18's net_ib.cc:95 prints it
    "node1:12:34 [0] transport/net_ib.cc:95 NCCL WARN NET/IB : Got async event : GID table change",
    # the same NVML message at INFO (v2.18's nvmlwrap.cc:175: a query NCCL may do without) and NVML's shutdown
    "gcn6:1080061:1080359 [0] NCCL INFO nvmlDeviceGetHandleByPciBusId() failed: Not Found",
    "node1:12:12 [0] misc/nvmlwrap.cc:128 NCCL WARN nvmlShutdown() failed: Uninitialized",
    # INFO lines of the components the table reads (https://github.com/NVIDIA/nccl/issues/1066)
    "gcn6:1080060:1080060 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
    "gcn6:1080060:1080354 [0] NCCL INFO Setting affinity for GPU 0 to 03ffff",
])  # fmt: skip
def test_a_line_that_is_no_failure_is_not_named_by_the_catalogue(line):
    sig = signatures.match(line)
    assert sig is None or not sig.name.startswith("ncclsrc-"), sig
