"""The `hang` failure signatures: a wait that ended: a rank behind or stuck, in the runtimes' own words (mostly thin
alone).

One entry each (why/signature.py says what an entry holds). Within this table the first entry that matches a line
wins; why/signatures.py says the order of the tables.
"""

from __future__ import annotations

from clusterdoc.why.signature import S, Signature

SIGNATURES: list[Signature] = [
    S("horovod-stalled", "hang", ("submitted to be reduced, gathered or broadcasted by subset of ranks",),
      "Horovod: some ranks wait in a collective the others have not submitted (a rank late, stuck or dead, or "
      "ranks submitting different tensors): its stalled ops' ready or missing ranks decide",
      "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are "
      "waiting for remainder of ranks for more than 60 seconds.", "https://github.com/horovod/horovod/issues/336",
      "compare the stalled ops' ranks (HOROVOD_TIMELINE shows them): a rank missing from all is late or dead, "
      "ranks ready for different ops submit different tensors", weak=True),
    # torch's ProcessGroupNCCL in its own words for a rank stuck (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp),
    # thin alone: the heartbeat monitor found the rank's watchdog itself stuck (a NCCL/CUDA call that never returned:
    # the rank that prints it is the stuck one); a dump signal is a rank told that ANOTHER timed out (the rank named
    # there noticed first: a witness, never the culprit)
    S("torch-heartbeat-stuck", "hang", ("Heartbeat monitor timed out",),
      "the rank's watchdog was stuck (a NCCL or CUDA call that never returned): torch's heartbeat monitor ended it",
      "[rank25]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 25] Heartbeat monitor timed out! Process will be terminated "
      "after dumping debug info. workMetaList_.size()=2",
      "https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the form its "
      "heartbeat monitor prints)",
      "py-spy dump --native on the rank (where its NCCL/CUDA call waits); the other ranks' logs at that time; "
      "clusterdoc check on its node (XIDs)", weak=True),
    S("torch-watchdog-stuck", "hang", ("watchdog got stuck for", "without making progress"),
      "the rank's watchdog was stuck (a NCCL or CUDA call that never returned): torch's heartbeat monitor ended it",
      "[rank25]:[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank 25] ProcessGroupNCCL's watchdog got stuck for 600 seconds "
      "without making progress in monitoring enqueued collectives.",
      "https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the form its "
      "heartbeat monitor prints)",
      "py-spy dump --native on the rank (where its NCCL/CUDA call waits); the other ranks' logs at that time; "
      "clusterdoc check on its node (XIDs)", weak=True),
    S("torch-dump-signal", "hang", ("Received a dump signal",),
      "another rank's collective timed out and this rank was told to dump its flight recorder: a rank never joined "
      "a collective (which one, the dumps say)",
      "[PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump signal due to a collective timeout from rank 3 and we "
      "will try our best to dump the debug info.",
      "https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the form it "
      "prints)",
      "read the flight recorder's dumps (TORCH_NCCL_DEBUG_INFO_TEMP_FILE; torch's fr_trace tool names the rank "
      "that never joined); the other ranks' logs", weak=True),
    S("torch-global-timeout", "hang", ("Received a global timeout from another rank",),
      "another rank's collective timed out and this rank was told to dump its flight recorder: a rank never joined "
      "a collective (which one, the dumps say)",
      "[PG 0 Rank 2] Received a global timeout from another rank and will start to dump the debug info.",
      "https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the form it "
      "prints)",
      "read the flight recorder's dumps (TORCH_NCCL_DEBUG_INFO_TEMP_FILE; torch's fr_trace tool names the rank "
      "that never joined); the other ranks' logs", weak=True),
    # round 9 (issue 41, hang): waits that ended, in the runtimes' own words, each thin alone (who was behind is in
    # another line or another log; candidates.py's _THIN says what decides)
    S("gloo-wait-timeout", "hang", ("Timed out waiting ", "operation to complete"),
      "a gloo send or receive waited past its timeout: the peer never reached the matching call (behind, dead, or "
      "its link)",
      "[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 30000ms for recv operation "
      "to complete", "https://github.com/QwenAudio/CosyVoice/issues/180; https://github.com/wenet-e2e/wenet/issues/"
      "2552 (the same line under a monitoredBarrier timeout)",
      "the other ranks' logs at that time (gloo's monitoredBarrier names the rank that did not arrive)", weak=True),
    # round 10 (issue 41, hang): py-spy's dump of a process, in its own header ('Thread 0x7FA6E7C01740 (idle):
    # "MainThread"', 'Thread 27321 (active): "MainThread"'): someone dumped a stuck rank. The stack alone names no cause
    # (fairseq-4816: rank 0 in its data iterator's queue; transformers-22363: in DeepSpeed's model broadcast;
    # DeepSpeed-6524, unsettled: in backward): thin, hang first (candidates.py's _THIN says what decides)
    S("pyspy-dump", "hang", ('): "MainThread"', "Thread "),
      "a py-spy dump of a stuck process (its threads' stacks): where it waits, not why",
      'Thread 0x7FA6E7C01740 (idle): "MainThread"',
      "https://github.com/facebookresearch/fairseq/issues/4816; https://github.com/huggingface/transformers/issues/"
      "22363; https://github.com/deepspeedai/DeepSpeed/issues/6524 (py-spy's header, as each paste shows it)",
      "dump every rank at the same moment (py-spy dump --pid on each, or clusterdoc stacks under clusterdoc "
      "submit): the rank not in the collective the others wait in is the one behind", weak=True),
]  # fmt: skip
