"""The `desync` failure signatures: the ranks disagree: a collective of another shape, op or order, as each
library's own check states it.

One entry each (why/signature.py says what an entry holds). Within this table the first entry that matches a line
wins; why/signatures.py says the order of the tables.
"""

from __future__ import annotations

from clusterdoc.why.signature import S, Signature

SIGNATURES: list[Signature] = [
    S("nccl-socket-truncated", "desync", ("NET/Socket", "message truncated"),
      "NCCL received a bigger message than the rank expected: the ranks called collectives with different sizes "
      "(or their NCCL settings differ)",
      "transport/net_socket.cc:424 NCCL WARN NET/Socket : peer 192.168.161.30<59210> message truncated :",
      "https://github.com/NVIDIA/nccl/issues/626",
      "make every rank call the same collectives with the same sizes; the same NCCL_* environment on every node"),
    S("collective-mismatch", "desync", ("Detected mismatch between collectives",),
      "the ranks called different collectives (or one with different shapes): TORCH_DISTRIBUTED_DEBUG caught it",
      "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running inconsistent collective: "
      "CollectiveFingerPrint(OpType=ALLGATHER, TensorShape=[41, 256, 8, 8, 8], ...",
      "https://github.com/xljh0520/JOTR/issues/4",
      "make every rank call the same collectives with the same shapes (uneven last batch: drop_last=True)"),
    S("nccl-mismatched", "desync", ("Mismatched collective detected",),
      "NCCL saw ranks call different collectives (or with different sizes)",
      "init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank "
      "39. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs",
      "https://github.com/NVIDIA/nccl/issues/296",
      "make every rank call the same collectives in the same order with the same sizes"),
    # Horovod's coordinator checks that every rank submitted the same op (its controller's "Mismatched ...: One
    # rank ..., but another rank ..." errors): the ranks disagree, as torch's DETAIL check says it
    S("horovod-mismatch", "desync", ("Mismatched ", "One rank "),
      "the ranks submitted different collectives for the same tensor (Horovod's check: shapes, types, op or device "
      "differ between ranks)",
      "tensorflow.python.framework.errors_impl.FailedPreconditionError: Mismatched ALLREDUCE CPU/GPU device "
      "selection: One rank specified device GPU, but another rank specified device CPU.",
      "https://github.com/horovod/horovod/issues/398 (horovod#1559: Mismatched ALLREDUCE tensor shapes)",
      "make every rank build the same graph and tensors (the same shapes, dtypes and devices, in the same order)"),
    # --- round 7: the ranks' disagreement as each library's own check states it (a RuntimeError or an abort that
    # carries it is the ranks' desync, not the code's bug nor a hang) ---
    S("torch-collectives-differ", "desync", ("Collectives differ in the following aspects",),
      "the ranks called different collectives (TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprint check lists how they "
      "differ: op, shapes, dtypes or sequence)",
      "Collectives differ in the following aspects: \t Op type: ALLREDUCEvs BROADCAST",
      "https://github.com/pytorch/pytorch (torch/csrc/distributed/c10d/ProcessGroupWrapper.cpp)",
      "make every rank call the same collectives in the same order with the same shapes"),
    S("ddp-param-sizes", "desync", ("of the same param in process",),
      "DDP found a parameter of another size (or stride) on this rank than on rank 0: the ranks built different "
      "models",
      "RuntimeError: [1]: params[0] in this process with sizes [96, 32] appears not to match sizes of the same "
      "param in process 0.", "https://github.com/pytorch/pytorch (torch/csrc/distributed/c10d/comm.cpp, "
      "verify_params_across_processes)",
      "build the same model on every rank (the same config, vocab size, layers added on rank 0 only)"),
    S("ddp-zero-params", "desync", ("DDP expects same model across all ranks", "inconsistent 0 params"),
      "DDP's parameter-count check read 0 parameters from a rank: that rank never joined the check (behind in its "
      "data setup, or a backend that passed no data), more often than a model without parameters",
      "RuntimeError: DDP expects same model across all ranks, but Rank 1 has 338 params, while rank 0 has "
      "inconsistent 0 params.", "https://github.com/pytorch/pytorch (torch/csrc/distributed/c10d/comm.cpp)",
      "see what the rank with 0 params did at that time (its log); then whether the ranks' models differ",
      weak=True),
    S("ddp-param-count", "desync", ("DDP expects same model across all ranks",),
      "DDP found a different number of parameters on two ranks: the ranks built different models",
      "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 162 params, while rank 1 has "
      "inconsistent 161 params.", "https://github.com/pytorch/pytorch (torch/csrc/distributed/c10d/comm.cpp, "
      "_verify_param_shape_across_processes)",
      "build the same model on every rank (a layer created under `if rank == 0`, a different config per node)"),
    S("deepspeed-rank-disagreement", "desync", ("disagreement between rank0 and rank",),
      "DeepSpeed's check that every rank holds the same values (ZeRO's parameter and partition counts) failed: "
      "the ranks disagree",
      "RuntimeError: disagreement between rank0 and rank3: rank0: [1024, 4], rank3: [1020, 4]",
      "https://github.com/deepspeedai/DeepSpeed (deepspeed/runtime/zero/utils.py, assert_ints_same_as_other_ranks)",
      "make every rank build the same model and the same DeepSpeed config (frozen parameters, the ZeRO stage)"),
    S("gloo-size-mismatch", "desync", ("op.preamble.length <= op.nbytes",),
      "gloo received a bigger message than the rank expected: the ranks called collectives with different sizes "
      "(or different collectives at the same time)",
      "what():  [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] op.preamble.length <= "
      "op.nbytes. 6232 vs 4", "https://github.com/facebookincubator/gloo (gloo/transport/tcp/pair.cc)",
      "make every rank call the same collectives in the same order with the same sizes (an uneven last batch)"),
    S("mpi-truncate", "desync", ("MPI_ERR_TRUNCATE",),
      "MPI received a message bigger than the receive buffer: the sender and receiver disagree on its size "
      "(or a receive matched another message)",
      "[udp012400uds:91098] *** MPI_ERR_TRUNCATE: message truncated", "https://github.com/salilab/imp/issues/758 "
      "(SGpp/DisCoTec#10, 3dem/relion#1052 the same: Open MPI's error class)",
      "make the receive's count and the send's agree (a tag or source that matches another message)"),
    S("mpich-truncate", "desync", ("Message truncated", "buffer size is"),
      "MPI received a message bigger than the receive buffer: the sender and receiver disagree on its size",
      "MPIDI_CH3U_Request_unpack_uebuf(611): Message truncated; 16 bytes received but buffer size is 8",
      "https://github.com/m-a-d-n-e-s-s/madness/issues/113 (pmodels/mpich#879: MPICH's own text)",
      "make the receive's count and the send's agree (a tag or source that matches another message)"),
    # NCCL's own sanity check on a receive: the sender posted more than this rank's buffer holds. Its source says
    # what it catches: "user collective call count/size mismatches" (the ranks are in different calls)
    S("ib-collective-mismatch", "desync", ("collective mismatch error, local size",),
      "NCCL saw two ranks post different sizes to the same transfer: they are in different collectives (or one "
      "with different shapes)",
      "NET/IB : req 0/1 tag 7 peer 10.1.1.2<39012> collective mismatch error, local size 4096 remote size 8192",
      "https://github.com/NVIDIA/nccl/blob/master/src/transport/net_ib.cc (the receive's sanity check: the form it "
      "prints)",
      "rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL (it names the collective each rank called); look for a collective "
      "under a rank condition or a tensor whose shape differs per rank", weak=True),
    # session 18 (issue 41): from the sealed set heldout-fresh5's misses, read after its score was recorded (each
    # the tool's own message, its source beside it)
    # torch's gather across devices (DataParallel's outputs, comm.cpp): one replica's tensor of another shape than
    # the others' (a short last batch split unevenly, an output whose size depends on its input)
    S("torch-gather-invalid-size", "desync", ("Gather got an input of invalid size",),
      "the replicas disagree: one returned a tensor of another shape than the others (torch's gather across "
      "devices: a short last batch, an output sized by its input)",
      "RuntimeError: Gather got an input of invalid size: got [2, 1, 20, 256, 64], but expected [2, 2, 20, 256, 64]",
      "https://github.com/huggingface/transformers/pull/4757 (torch/csrc/cuda/comm.cpp's gather check)",
      "drop the last incomplete batch (drop_last / dataloader_drop_last) or pad every replica's output to one "
      "size; DistributedDataParallel rather than DataParallel"),
    # session 18 (issue 41): from the sealed set heldout-fresh6's misses, read after its score was recorded (each
    # the tool's own message, its source beside it)
    # TensorFlow's collective ops: one member's tensor of another shape than the group's (its own check, in
    # collective_ops and MirroredStrategy's CollectiveReduceV2)
    S("tf-collective-shape-mismatch", "desync", ("Shape mismatch in the collective instance",),
      "the workers disagree: one gave a collective a tensor of another shape than the others (TensorFlow's check)",
      "Collective ops is aborted by: Shape mismatch in the collective instance 100. Op at device /job:localhost/"
      "replica:0/task:0/device:GPU:2 expected shape [28678440] but another member in the group expected shape "
      "[39166184].", "https://github.com/tensorflow/tensorflow/issues/62790 (and #34156)",
      "what each worker builds before that collective (its variables, its batch); the same model and input "
      "pipeline on every worker"),
    # session 24 (heldout-fresh21, after it was scored): TensorFlow's collective ops saw the workers disagree on the
    # group (MultiWorkerMirroredStrategy with 2 GPUs on one worker and 4 on another: tensorflow-47203)
    S("tf-collective-group-size", "desync", ("Collective Op has group_size", "but that group has size"),
      "the workers disagree on the collective's group (its size): they run different replicas per worker (GPU "
      "counts) or different graphs",
      "InternalError: Collective Op has group_size 8 and group_key 1 but that group has size 4",
      "https://github.com/tensorflow/tensorflow/issues/47203",
      "the same number of GPUs on every worker (CUDA_VISIBLE_DEVICES) and the same model code and strategy"),
]  # fmt: skip
