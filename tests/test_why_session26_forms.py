"""`clusterdoc why --log`, session 26 (issue 41): forms written before heldout-fresh26 was scored. Each test failed
on the rules before it (d53f5cc); each also checks what must stay."""

from __future__ import annotations

from tests.why_helpers import fixture_log as _log
from tests.why_helpers import judge_log


def test_the_hugging_face_hub_unreachable_is_a_candidate_of_the_nodes_internet_not_the_codes():
    # transformers' ValueError (P-tuning-v2#81): raised in a library, its words say the download failed
    c = judge_log(_log("real/ptuningv2-81-hub-connection-error.log"))
    assert c.category == "unknown", (c.category, c.headline)
    assert [x.split(":")[0] for x in c.candidates] == ["environment", "network", "code"], c.candidates
    assert "HF_HUB_OFFLINE" in c.candidates[0]
    # the message quoted on the line before it (Sanger#2): the same words, not a second failure of the code's
    c = judge_log(_log("real/sanger-2-hub-connection-error.log"))
    assert c.category == "unknown" and c.candidates[0].startswith("environment"), (c.category, c.candidates)
    # huggingface_hub's OSError form (AMDResearch/hpcfund#12)
    line = (
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached "
        "files and it looks like facebook/esm2_t33_650M_UR50D is not the path to a directory containing a file named "
        "config.json.\n"
    )
    assert judge_log(line).category == "unknown"
    # a ValueError of the code's own, with no such words, stays the code's
    own = 'Traceback (most recent call last):\n  File "run.py", line 3, in <module>\nValueError: bad lr\n'
    assert judge_log(own).category == "code"


def test_an_exception_raised_inside_a_network_client_is_a_candidate_whatever_its_type():
    # frames as requests and huggingface_hub print them (open-webui#9727); a ValueError no rule names
    tb = (
        "Traceback (most recent call last):\n"
        '  File "/root/app/main.py", line 12, in <module>\n'
        "    info = api.model_info(name)\n"
        '  File "/root/anaconda3/envs/ds-vllm/lib/python3.11/site-packages/requests/sessions.py", line 602, in get\n'
        '    return self.request("GET", url, **kwargs)\n'
        '  File "/root/anaconda3/envs/ds-vllm/lib/python3.11/site-packages/urllib3/util/url.py", line 451, in '
        "parse_url\n"
        "    raise LocationParseError(source_url) from e\n"
        "ValueError: Port could not be cast to integer value as '3128/'\n"
    )
    c = judge_log(tb)
    assert c.category == "unknown" and any(x.startswith("network") for x in c.candidates), (c.category, c.candidates)
    # the same exception raised in the code's own frame stays the code's
    own = tb.replace(
        "/root/anaconda3/envs/ds-vllm/lib/python3.11/site-packages/urllib3/util/url.py", "/root/app/url.py"
    )
    assert judge_log(own).category == "code"


def test_other_vendors_device_runtime_errors_are_candidates_as_cudas_are():
    for msg in (
        "RuntimeError: HIP error: hipErrorLaunchFailure",
        "RuntimeError: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES)",
        "RuntimeError: level_zero backend failed with error: 20 (UR_RESULT_ERROR_DEVICE_LOST)",
    ):
        c = judge_log(f'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n{msg}\n')
        assert c.category == "unknown", (msg, c.category, c.headline)


def test_a_wrapper_that_points_at_the_failure_before_it_is_no_cause():
    # Ray Tune's "Trials did not complete" over a trial the cgroup's OOM killer took (heldout-fresh26c)
    c = judge_log(_log("heldout-fresh26c/ray-14394-tune-slurm-oom-kill.log"))
    assert c.category == "oom", (c.category, c.headline)
    # vLLM's "See root cause above" after NCCL's error: not the code's (heldout-fresh26b)
    c = judge_log(_log("heldout-fresh26b/agentic-coding-harness-benchmarks-173-nvls-bind.log"))
    assert c.category != "code", (c.category, c.headline)
    # a TuneError with another message is Ray Tune's own report: a candidate (a library's type), not an effect
    tb = 'Traceback (most recent call last):\n  File "tune.py", line 3, in <module>\nTuneError: bad search space\n'
    c = judge_log(tb)
    assert c.category == "unknown" and "TuneError" in " ".join(c.evidence), (c.category, c.evidence)


def test_prrtes_signal_line_wrapped_after_exited_on_is_read_whole():
    c = judge_log(_log("heldout-fresh26d/mpi-rockstar-18-prterun-signal9.log"))
    assert c.category == "unknown" and "SIGKILL" in c.headline and "iccpc2" in c.headline, (c.category, c.headline)
    assert c.candidates[0].startswith("oom"), c.candidates
    # a line that ends so but is followed by another sentence is not joined
    other = (
        "prterun noticed that process rank 0 with PID 2389672 on node iccpc2 exited on\n"
        "the next line of something else\n"
    )
    assert "SIGKILL" not in judge_log(other).headline


def test_heldout_fresh27s_environment_forms_after_it_was_scored():
    # an argument its parser got empty: a variable not set where the job ran (AML-Kubernetes#15)
    c = judge_log(_log("heldout-fresh27d/aml-kubernetes-15-rank-invalid-int.log"))
    assert c.category == "environment" and "empty value" in c.headline, (c.category, c.headline)
    # a variable left unexpanded stays the command line's (the code's), as torchx#759 settled
    line = "main/0 torchrun: error: argument --node-rank/--node_rank: invalid int value: '$AWS_BATCH_JOB_NODE_INDEX'\n"
    assert judge_log(line).category == "code"
    # MPICH's PMI client cut off from its process manager (dask#4214: a forked Nanny)
    c = judge_log(_log("heldout-fresh27e/dask-4214-dask-mpi-pmi-write-line.log"))
    assert c.category == "environment" and "PMI" in c.headline, (c.category, c.headline)
    # NCCL's CUDA call finding no symbol: a library built for another CUDA (deep-learning-containers#3964)
    c = judge_log(_log("heldout-fresh27d/deep-learning-containers-3964-nccl-cuda-failure-500.log"))
    assert c.category == "environment" and "symbol" in c.headline, (c.category, c.headline)
    # the same CUDA error in another NCCL file (nccl#1528, settled as the driver's version; a candidate of
    # test_why_catalogue_nccl.py's before it was read twice)
    line = "c76d92cccb6e:72:457 [1] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'\n"
    assert judge_log(line).category == "environment"
    # GitPython finding no repository in a checkout downloaded as a zip (XMem#54, #138)
    for name in ("xmem-54-git-repo-zip-download.log", "xmem-138-invalid-git-repository.log"):
        assert judge_log(_log(f"heldout-fresh27a/{name}")).category == "environment", name
    # a module without the name the code calls: the install's (a Windows build without ProcessGroupNCCL); the
    # Windows path of a library's frame is a library's, so the code's own frame is named
    c = judge_log(_log("heldout-fresh27a/paddleseg-3794-windows-processgroupnccl.log"))
    assert c.category == "environment" and "train.py:140" in " ".join(c.evidence), (c.category, c.evidence)
    # an object's missing attribute stays the code's
    own = "Traceback (most recent call last):\n  File \"t.py\", line 2, in <module>\n" + (
        "AttributeError: 'NoneType' object has no attribute 'shape'\n"
    )
    assert judge_log(own).category == "code"


def test_a_thread_that_could_not_start_is_a_candidate_of_the_limit_the_memory_or_the_code():
    c = judge_log(_log("heldout-fresh27b/3d-speaker-76-cant-start-new-thread.log"))
    assert c.category == "unknown", (c.category, c.headline)
    assert [x.split(":")[0] for x in c.candidates] == ["environment", "oom", "code"], c.candidates


def test_heldout_fresh28s_forms_after_it_was_scored():
    # CUDA's 802 on an NVSwitch machine: the fabric manager service the node did not enable (nccl-tests#264)
    c = judge_log(_log("heldout-fresh28a/nccl-tests-264-system-not-yet-initialized.log"))
    assert c.category == "environment" and "fabric manager" in c.headline, (c.category, c.headline)
    # EMFILE on a collective library's bootstrap line (aws-neuron-sdk#713); a NeuronCore out of device memory (#1014)
    c = judge_log(_log("heldout-fresh28b/aws-neuron-sdk-713-ccom-too-many-open-files.log"))
    assert c.category == "environment" and "ulimit -n" in c.headline, (c.category, c.headline)
    assert judge_log(_log("heldout-fresh28b/aws-neuron-sdk-1014-failed-alloc-device-memory.log")).category == "oom"
    # hivemind's daemon reaching no bootstrap peer: the swarm's network, not the trainer's code (rl-swarm#213)
    assert judge_log(_log("heldout-fresh28b/rl-swarm-213-hivemind-bootstrap-peers.log")).category == "network"
    # HIP's 'invalid kernel file' through RCCL: a GPU the build does not target (rccl#876)
    c = judge_log(_log("heldout-fresh28c/rccl-876-invalid-kernel-file-groupend.log"))
    assert c.category == "environment" and "catalyst-convoy" in c.headline, (c.category, c.headline)


def test_heldout_fresh29s_forms_after_it_was_scored():
    # CUDA's stub libcuda loaded instead of the driver's (warpx#4012): every rank's amrex::Abort says it
    c = judge_log(_log("heldout-fresh29a/warpx-4012-cuda-stub-library.log"))
    assert c.category == "environment" and "stub" in c.headline, (c.category, c.headline)
    # XLA could not load NCCL (jax#18391): the exception's next line says so
    assert judge_log(_log("heldout-fresh29c/jax-18391-nccl-library-not-loaded.log")).category == "environment"
    # MPICH's MPI_Abort names its rank (epoch#798), before Slurm's cancellation of the step it caused (the code's since
    # session 28: the application stopped itself)
    c = judge_log(_log("heldout-fresh29b/epoch-798-unlocatable-particle.log"))
    assert c.category == "code" and c.ranks == [285] and "MPI_Abort" in c.headline, (c.ranks, c.headline)
    # Cray MPICH's form names the node too (e3sm#8699)
    c = judge_log(_log("real/e3sm-8699-pm-gpu-devices-unavailable-nid004069.log"))
    assert "nid004069" in c.nodes, (c.nodes, c.headline)


def test_a_librarys_own_exception_no_rule_names_is_a_candidate_and_pythons_own_stay_the_codes():
    # jaxlib's XlaRuntimeError without the line that says NCCL would not load (jax#18391 cut there): unknown
    text = _log("heldout-fresh29c/jax-18391-nccl-library-not-loaded.log").split("external/xla")[0]
    c = judge_log(text)
    assert c.category == "unknown" and c.candidates[0].startswith("environment"), (c.category, c.candidates)
    # hivemind's own error with another message: unknown, not the code's
    other = "hivemind.p2p.p2p_daemon_bindings.utils.P2PDaemonError: Daemon failed to start in 15.0 seconds\n"
    assert judge_log(other).category == "unknown"
    # what stays the code's: Python's own types, a config file that does not parse, a C++ program's own throw,
    # Snakemake's rule that left no output, an illegal address in a library's exception
    for path in (
        "heldout-fresh25h/pcldm-yaml-duplicate-key-barrier.log",  # ruamel/OmegaConf's ConstructorError
        "heldout-fresh5/mpich-6124-rank1-throws-before-init-hang.log",  # C++'s throw of an int
        "heldout-fresh9f/atlas-411-genecatalog-missing-output.log",  # Snakemake's MissingOutputException
        "heldout-fresh27c/perses-669-cuda-illegal-address.log",  # OpenMMException: CUDA_ERROR_ILLEGAL_ADDRESS
        "heldout-fresh26a/act-plus-plus-53-emamodel-parameters.log",  # TypeError
    ):
        assert judge_log(_log(path)).category == "code", path


def test_heldout_fresh30s_forms_after_it_was_scored():
    # one allocation no GPU could hold (37631.79 GiB): a size the code computed wrong (Megatron-DeepSpeed#384); the
    # code first, thin since session 28 (open_clip-11's N x N evaluation matrix was what the job asked for)
    c = judge_log(_log("heldout-fresh30a/megatron-deepspeed-384-dataloader-huge-alloc.log"))
    assert c.category == "unknown" and "larger than any GPU" in c.headline, (c.category, c.headline)
    assert [k.split(":")[0] for k in c.candidates] == ["code", "oom"], c.candidates
    # 36.79 GiB asked of a 10.75 GiB GPU stays memory running out (a bigger GPU holds it: heldout-fresh24h)
    assert judge_log(_log("heldout-fresh24h/electricity-uq-cuda-oom-gp.log")).category == "oom"
    # the shell's SIGBUS report, as UCX's and torchrun's (PyTorch-BigGraph#33: Docker's small /dev/shm)
    c = judge_log(_log("heldout-fresh30a/pytorch-biggraph-33-bus-error-docker.log"))
    assert c.category == "environment" and "/dev/shm" in c.headline, (c.category, c.headline)
