"""The `peer` failure signatures: a rank lost its connection to another: never a cause by itself (the network, or
the other rank died first).

One entry each (why/signature.py says what an entry holds). Within this table the first entry that matches a line
wins; why/signatures.py says the order of the tables.
"""

from __future__ import annotations

from clusterdoc.why.signature import S, Signature

SIGNATURES: list[Signature] = [
    # --- a peer went away: the network, or the peer died first (weak alone) ---
    S("peer-reset", "peer", ("Connection reset by peer",),
      "a connection to another rank was reset: the network, or that rank died",
      "worker0-0d9gnb:15:91 [3] include/socket.h 398 NCCL WARN Call to write failed : Connection reset by peer.",
      "https://github.com/NVIDIA/nccl/issues/193", weak=True),
    S("peer-closed-remote", "peer", ("Connection closed by remote peer",),
      "another rank closed its connection: it died (or its node did), or the network dropped it",
      "socketProgress: Connection closed by remote peer dgxh100-sapphire-ib0<40484>",
      "https://github.com/huggingface/accelerate/issues/3413", weak=True),
    S("peer-closed-gloo", "peer", ("Connection closed by peer",),
      "gloo lost its connection to another rank: it died, or the network dropped it",
      "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer "
      "[198.18.16.4]:50353.",
      "tests/fixtures/why/jobs/killed-node3/rank1.err (a real run on the test cluster)", weak=True),
    S("peer-recv-failed", "peer", ("NCCL WARN", "failed : Broken pipe"),
      "a send or receive to another rank failed: it died, or the network dropped it",
      "NCCL WARN Net : Call to recv from 10.200.84.247<49473> failed : Broken pipe",
      "https://github.com/NVIDIA/nccl/issues/795", weak=True),
    S("nccl-remote-error", "peer", ("remote process exiting prematurely",),
      "NCCL: a network error or a remote rank exited first",
      "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
      "https://github.com/huggingface/accelerate/issues/3413", weak=True),
    S("peer-refused", "peer", ("Connection refused",),
      "a rank could not connect to another (not listening: not started yet, or died)",
      "slurmstepd: error: Failed to send MESSAGE_TASK_EXIT: Connection refused",
      "https://github.com/facebookincubator/submitit/issues/1708", weak=True),
]  # fmt: skip
