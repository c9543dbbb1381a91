"""The `effect` failure signatures: a rank stopped because something else failed: NCCL's abort after a timeout, a
launcher's kill.

One entry each (why/signature.py says what an entry holds). Within this table the first entry that matches a line
wins; why/signatures.py says the order of the tables.
"""

from __future__ import annotations

from clusterdoc.why.signature import S, Signature

SIGNATURES: list[Signature] = [
    # --- effects: a rank stopping because something else failed ---
    S("nccl-abort", "effect", ("To avoid data inconsistency, we are taking the entire process down",),
      "NCCL's watchdog takes the rank down after a failed or timed-out collective",
      "[E ProcessGroupNCCL.cpp:494] To avoid data inconsistency, we are taking the entire process down.",
      "https://github.com/EleutherAI/lm-evaluation-harness/pull/1404"),
    S("launcher-sigterm", "effect", ("closing signal SIGTERM",),
      "torchrun stops the other ranks after one failed",
      "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3710366 closing signal SIGTERM",
      "https://github.com/codefuse-ai/MFTCoder/issues/31"),
    S("srun-aborted", "effect", ("srun: error: ", "Aborted"),
      "a task aborted (SIGABRT: NCCL's watchdog or a C++ exception took it down)",
      "srun: error: ... Aborted (core dumped)", "https://github.com/alan-turing-institute/autocast/issues/381"),
]  # fmt: skip
